; tok_find: the tokenizer's sorted-index lookup (tokenizer.c has the same steps in C, used by the
; PC build). It is the tokenizer's inner loop (~15 probes per lookup, hundreds of lookups per
; line), so it reads the tables with flat [zp],Z loads and 24-bit index arithmetic instead of
; per-byte C far_peek calls and cc65 long arithmetic, and does its 32-bit sums with the 45GS02's
; quad instructions (NEG NEG prefix, spec §M1.6).
;
; Probe sequence exactly as the C/Rust search: lo = 0, hi = n - 1, mid = (lo + hi) >> 1, held
; here as he = hi + 1 (so he = n, hi = mid - 1 becomes he = mid), unsigned 32-bit.

        .p4510
        .importzp       ptr1
        .import         popax
        .importzp       sreg
        .import         _tok_vocab, _tok_index, _tok_n_index, _tok_nvocab, _tok_vlast
        .export         _tok_find

FP      = $F0                           ; hw.s's flat pointer

.macro  flat_lda                        ; lda [FP],z
        eom
        lda     (FP),z
.endmacro
.macro  q                               ; the next instruction works on Q = Z:Y:X:A
        .byte   $42, $42
.endmacro
.macro  ldq_flat                        ; ldq [FP],z (Z is added in this form)
        .byte   $42, $42
        eom
        lda     (FP),z
.endmacro

        .bss
keylen: .res    1
lo:     .res    4
he:     .res    4
mid:    .res    4
o0:     .res    4
id:     .res    4
tlen:   .res    4
n:      .res    1                       ; bytes to compare: min(token length, key length)
cmpres: .res    1                       ; $FF token shorter, $01 longer, 0 same length

        .code

; uint32_t __fastcall__ tok_find(const uint8_t *s, uint8_t len): token id or $FFFFFFFF
_tok_find:
        sta     keylen
        jsr     popax
        sta     ptr1
        stx     ptr1+1
        lda     #0
        sta     lo
        sta     lo+1
        sta     lo+2
        sta     lo+3
        q
        lda     _tok_n_index
        q
        sta     he

@loop:  q                               ; while lo < he (unsigned)
        lda     lo
        sec
        q
        sbc     he
        bcc     @probe
        lda     #$FF                    ; not found
        sta     sreg
        sta     sreg+1
        tax
        ldz     #0
        rts

@probe: q                               ; mid = (lo + he - 1) >> 1 = (lo + hi) >> 1
        lda     lo
        clc
        q
        adc     he
        q
        dec     a
        q
        lsr     a
        q
        sta     mid
        q                               ; FP = index + 4 * mid; id = the entry
        asl     a
        q
        asl     a
        clc
        q
        adc     _tok_index
        q
        sta     FP
        ldz     #0
        ldq_flat
        q
        sta     id
        sec                             ; an id past the vocabulary: an empty token (sorts first)
        q
        sbc     _tok_nvocab
        lbcs    @less
        q
        lda     id
        q                               ; FP = vocab + 4 * id: o0, then the next offset
        asl     a
        q
        asl     a
        clc
        q
        adc     _tok_vocab
        q
        sta     FP
        ldz     #0
        ldq_flat
        q
        sta     o0
        ldz     #4
        ldq_flat
        q
        sta     tlen
        q                               ; the next offset past the table's bytes, or below o0:
        lda     _tok_vlast              ; an empty token, like an id past the vocabulary
        sec
        q
        sbc     tlen
        lbcc    @less
        q
        lda     tlen
        sec
        q
        sbc     o0
        lbcc    @less
        q
        sta     tlen
        lda     tlen+1                  ; >= 256: longer than any key
        ora     tlen+2
        ora     tlen+3
        bne     @long
        lda     tlen
        cmp     keylen
        beq     @same
        bcc     @shorter
@long:  lda     #1                      ; token longer than the key: compare keylen bytes
        sta     cmpres
        lda     keylen
        sta     n
        bra     @text
@same:  lda     #0
        sta     cmpres
        lda     keylen
        sta     n
        bra     @text
@shorter:
        lda     #$FF                    ; token shorter: compare its bytes
        sta     cmpres
        lda     tlen
        sta     n

@text:  q                               ; FP = vocab + o0
        lda     _tok_vocab
        clc
        q
        adc     o0
        q
        sta     FP
        ldz     #0
        ldy     #0
        ldx     n
        beq     @prefix
@cmp:   flat_lda
        cmp     (ptr1),y
        bne     @diff
        iny
        inz
        dex
        bne     @cmp
@prefix:
        lda     cmpres
        beq     @found
        bmi     @less                   ; a proper prefix sorts first
        bra     @greater
@diff:  bcc     @less                   ; token byte < key byte
@greater:                               ; hi = mid - 1, i.e. he = mid
        q
        lda     mid
        q
        sta     he
        jmp     @loop
@less:  q                               ; lo = mid + 1
        lda     mid
        q
        inc     a
        q
        sta     lo
        jmp     @loop

@found: lda     id+3
        sta     sreg+1
        lda     id+2
        sta     sreg
        ldx     id+1
        lda     id
        ldz     #0
        rts
