; imgmem.s: the image's memory bounds (imgmem.h) and the checks of the loaded image's header
; fields and tokenizer tables against them, with the 45GS02's quad instructions (NEG NEG prefix,
; spec §M1.6): cc65's 32-bit C for the same was about 800 bytes larger than the program has room
; for. The PC build has the same steps in C (tokenizer.c tok_tables, host/imgmem_host.c).

        .p4510
        .include        "ssnail_regs.inc"
        .import         popeax
        .importzp       sreg
        .import         _tok_vocab, _tok_nvocab, _tok_vlast, _tok_index, _tok_n_index
        .import         _tok_kind, _tok_flags, _prio_addr, _byte_table, _tok_begin, _tok_end
        .import         _tok_unk
        .export         _img_inside, _img_top, _img_header_bad, _tok_tables

FP      = $F0                           ; hw.s's flat pointer

.macro  q                               ; the next instruction works on Q = Z:Y:X:A
        .byte   $42, $42
.endmacro
.macro  flat_lda                        ; lda [FP],z
        eom
        lda     (FP),z
.endmacro
.macro  ldq_flat                        ; ldq [FP],z (Z is added in this form)
        .byte   $42, $42
        eom
        lda     (FP),z
.endmacro
.macro  ldq_at  off                     ; Q = the u32 at FP + off
        ldz     #off
        ldq_flat
.endmacro

        .assert (IMG_BASE & $FFFFFF) = 0, error, "inside: IMG_BASE's low bytes must be 0"
        .assert ((IMG_MAX_CTX + 1) & $FF) = 0, error, "img_header_bad: IMG_MAX_CTX + 1 is whole pages"

        .bss
_img_top:       .res    4
ia:             .res    4               ; region: address,
icount:         .res    4               ; count of items
ishift:         .res    1               ; of 2^ishift bytes
nindex:         .res    4

        .code

; uint8_t __fastcall__ img_inside(uint32_t addr, uint32_t count, uint8_t shift): 1 = inside
_img_inside:
        sta     ishift
        jsr     popeax
        sta     icount
        stx     icount+1
        ldy     sreg
        sty     icount+2
        ldy     sreg+1
        sty     icount+3
        jsr     popeax
        sta     ia
        stx     ia+1
        ldy     sreg
        sty     ia+2
        ldy     sreg+1
        sty     ia+3
        jsr     inside
ret_c:  lda     #0                      ; A = C, X = 0 (a C uint8_t), Z = 0 as C code expects
        tax
        rol     a
        ldz     #0
        rts

; A = shift: C = the region ia, icount lies inside [IMG_BASE, img_top)
check:  sta     ishift
; C = the same with ishift set; no arithmetic overflows for any count
inside: lda     ia+3                    ; below IMG_BASE ($8000000): C clear
        cmp     #<(IMG_BASE >> 24)
        bcc     @no
        q                               ; Q = img_top - addr, the bytes from addr on
        lda     _img_top
        sec
        q
        sbc     ia
        bcc     @no                     ; addr past img_top
@shift: dec     ishift                  ; in items
        bmi     @cmp
        q
        lsr     a
        bra     @shift
@cmp:   sec                             ; C = room >= count
        q
        sbc     icount
@no:    rts

fp_header:                              ; FP = IMG_BASE
        lda     #0
        sta     FP
        sta     FP+1
        sta     FP+2
        lda     #<(IMG_BASE >> 24)
        sta     FP+3
        rts

; uint8_t img_header_bad(void): 0, or which region of the loaded header lies outside the image's
; memory: 1 the token buffer ($14, H_MAXCTX + 1 slots, at most IMG_MAX_CTX + 1), 2 the output
; vector ($30, $34 floats), 3 the script slots ($08 up to $0C)
_img_header_bad:
        jsr     fp_header
        ldq_at  H_MAXCTX
        q
        sta     icount
        ldx     #1
        lda     icount+3
        ora     icount+2
        bne     @bad
        lda     icount+1
        cmp     #>(IMG_MAX_CTX + 1)
        bcs     @bad
        q
        lda     icount
        q
        inc     a
        q
        sta     icount
        ldq_at  H_TOKENS
        q
        sta     ia
        lda     #2
        jsr     check
        ldx     #1
        bcc     @bad
        ldq_at  H_OUTDIM
        q
        sta     icount
        ldq_at  H_OUTPUT
        q
        sta     ia
        lda     #2
        jsr     check
        ldx     #2
        bcc     @bad
        ldq_at  H_CODE
        q
        sta     ia
        ldq_at  H_DATA
        sec
        q
        sbc     ia
        q
        sta     icount                  ; (before X changes: X is Q's second byte)
        ldx     #3
        bcc     @bad                    ; $0C below $08
        lda     #0
        jsr     check
        ldx     #3
        bcc     @bad
        ldx     #0
@bad:   txa
        ldx     #0
        ldz     #0
        rts

; uint8_t tok_tables(void): the tokenizer's tables from header $18, $1C, $78 and the tokenizer
; block into tok_vocab, tok_nvocab, tok_vlast (the vocab table's last offset), tok_index,
; tok_n_index, ...; 1 = the block and every table lie inside the image's memory (as the PC image
; tokenizer checks them) and the block's vocabulary size is the header's. Until then, and on 0,
; tok_n_index is 0: every search finds nothing.
_tok_tables:
        lda     #0
        tax
        tay
        taz
        q
        sta     _tok_n_index
        jsr     fp_header
        ldq_at  H_VOCAB
        q
        sta     _tok_vocab
        ldq_at  H_NVOCAB
        q
        sta     _tok_nvocab
        ldq_at  H_TOKENIZER
        q
        sta     ia
        lda     #TB_LEN
        sta     icount
        lda     #0
        sta     icount+1
        sta     icount+2
        sta     icount+3
        jsr     check                   ; A = 0: bytes
        lbcc    @no
        q
        lda     ia
        q
        sta     FP                      ; FP = the block
        ldz     #TB_KIND
        flat_lda
        sta     _tok_kind
        cmp     #TOK_WORDPIECE + 1
        lbcs    @no
        ldz     #TB_FLAGS
        flat_lda
        sta     _tok_flags
        ldq_at  TB_INDEX
        q
        sta     _tok_index
        ldq_at  TB_INDEX_LEN
        q
        sta     nindex
        ldq_at  TB_PRIORITY
        q
        sta     _prio_addr
        ldq_at  TB_BYTE_TABLE
        q
        sta     _byte_table
        ldq_at  TB_BEGIN
        q
        sta     _tok_begin
        ldq_at  TB_END
        q
        sta     _tok_end
        ldq_at  TB_UNK
        q
        sta     _tok_unk
        ldq_at  TB_N_VOCAB
        q
        cmp     _tok_nvocab             ; the block's count is the header's
        lbne    @no
        lda     _tok_nvocab+3           ; and below 2^24
        lbne    @no
        q                               ; the offsets: n + 1 words at vocab
        lda     _tok_nvocab
        q
        inc     a
        q
        sta     icount
        q
        lda     _tok_vocab
        q
        sta     ia
        lda     #2
        jsr     check
        lbcc    @no
        q                               ; the last offset, at vocab + 4 n: the table's bytes
        lda     _tok_nvocab
        q
        asl     a
        q
        asl     a
        clc
        q
        adc     _tok_vocab
        q
        sta     FP
        ldq_at  0
        q
        sta     _tok_vlast
        q
        sta     icount
        lda     #0
        jsr     check
        lbcc    @no
        q                               ; the sorted index: its length in words
        lda     _tok_index
        q
        sta     ia
        q
        lda     nindex
        q
        sta     icount
        lda     #2
        jsr     check
        lbcc    @no
        q                               ; the priority table: n u16 (or u32 with TF_PRIO32)
        lda     _prio_addr
        q
        sta     ia
        q
        lda     _tok_nvocab
        q
        sta     icount
        lda     _tok_flags
        and     #TF_PRIO32
        cmp     #1                      ; C = u32 entries
        lda     #1
        adc     #0
        jsr     check
        lbcc    @no
        q                               ; the byte table: 256 words
        lda     _byte_table
        q
        sta     ia
        lda     #0
        sta     icount
        sta     icount+2
        sta     icount+3
        lda     #1
        sta     icount+1
        lda     #2
        jsr     check
        lbcc    @no
        q
        lda     nindex
        q
        sta     _tok_n_index
        sec
@no:    jmp     ret_c
