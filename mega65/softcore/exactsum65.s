; exactsum65.s: the F32/F16/BF16 GEMV inner loop of softgemv.c on the 45GS02 (cc65 builds; the C
; in exactsum.c and softgemv.c stays the definition, used on the PC and with -DSC_C_GEMV). One call,
; xs_chunk, adds the products w_j·x_j of one piece of a chunk (j < xs_n, the weights at xs_wb, the
; input at xs_xb, both in sc_w.gb) to the exact accumulator xs_acc, as xs_add_product does, with
; the same bytes, and moves xs_xb and xs_wb past the piece:
;
; 1. x_j: its significand with the hidden bit to MULTINB bytes 0-2 (byte 3 stays 0), its
;    exponent eb - 1 and its sign kept. Zero, subnormal, inf and NaN go to the C (xs_slow).
; 2. w_j: its sign (the product's is the XOR), its exponent, so that the product's lowest bit is
;    bit pos = ea + eb - 2 of the accumulator (exactsum.c; F16: ea = e5 + 125), and its
;    significand ma in Q = A:X:Y:Z. Zero, subnormal, inf and NaN weights go to the C.
; 3. ma·2^(pos mod 8) by 0-7 ASLQs (a patched BRA into the chain), stored to MULTINA: the
;    multiplier (spec/mega65.md §M9, product ready one cycle after the write) gives the product
;    already on byte boundaries, < 2^55 (F32 and BF16 as ma·2^16: 24 + 7 + 24 bits; F16 < 2^42).
; 4. Its 7 bytes (6 for F16: the 7th is zero) added to or subtracted from xs_acc at byte
;    pos / 8, then the carry (borrow) runs up while it is set, as exactsum.c's accumulate.
;
; The accumulator and loop state are absolute (the program's zero page is full); every x and w
; byte is read with abs,X / abs,Y, the piece's addresses patched into those loads once per call
; (the chunk is up to 1,536 bytes: a piece of at most 63 elements keeps 4·j in a byte). xs_slow is C and may use the
; multiplier, so MULTINB byte 3 is cleared again after it.

        .p4510
        .include        "quad.inc"              ; quad instructions, the multiplier
        .include        "fn_tables.inc"         ; WT_F32, WT_F16 (anything else: BF16)
        .import         _xs_acc, _xs_slow
        .export         _xs_chunk, _xs_fmt, _xs_n, _xs_xb, _xs_wb

XS_BYTES = 74                           ; exactsum.h

        .bss
_xs_fmt:.res    1                       ; WT_F32, WT_F16 or WT_BF16 (fn_tables.h)
_xs_n:  .res    1                       ; elements in the piece (1..XS_PIECE, exactsum.h: 63, so
                                        ; that xi and xend, 4 per element, are bytes)
_xs_xb: .res    2                       ; the piece's input (f32[xs_n])
_xs_wb: .res    2                       ; its weights
xi:     .res    1                       ; 4·j
xend:   .res    1                       ; 4·n
sgx:    .res    1                       ; x_j's sign (bit 7)
sg:     .res    1                       ; the product's sign (bit 7)
ebm1:   .res    1                       ; x_j's biased exponent - 1
bi:     .res    1                       ; pos / 8

        .code

; C:A = pos (9 bits): bi = pos / 8, and the shift chain's BRA skips 7 - pos mod 8 ASLQs (3 bytes
; each). Keeps Y. Inline in each weight path (a JSR/RTS pair is 11 cycles a weight).
.macro  split
        tax
        ror     a
        lsr     a
        lsr     a
        sta     bi
        txa
        and     #7
        tax
        lda     shofs,x
        sta     shbra+1
.endmacro

;  the load at label L reads ptr + off (ptr a 16-bit variable): L's operand patched
.macro  site    l, ptr, off
        clc
        lda     ptr
        adc     #off
        sta     l+1
        lda     ptr+1
        adc     #0
        sta     l+2
.endmacro

; void xs_chunk(void): xs_acc += Σ_{j < xs_n} w_j·x_j exactly, for xs_fmt weights; xs_xb and xs_wb
; move past the piece.
_xs_chunk:
        lda     _xs_n
        asl     a
        asl     a
        sta     xend
        lda     #0
        sta     xi
        sta     MULB+3
        ; the format's weight step and product length, patched once per call
        ldx     #0
        lda     _xs_fmt                 ; to 0, 1, 2 for the tables below
        cmp     #WT_F32
        beq     @k
        inx
        cmp     #WT_F16
        beq     @k
        inx
@k:     lda     wstep_lo,x
        sta     wjmp+1
        lda     wstep_hi,x
        sta     wjmp+2
        lda     b6skip,x
        sta     b6bra+1
        sta     b6bras+1
        phx
        ; the piece's addresses into the loads
        site    x0a, _xs_xb, 0
        site    x1a, _xs_xb, 1
        site    x2a, _xs_xb, 2
        site    x2b, _xs_xb, 2
        site    x3a, _xs_xb, 3
        site    x3b, _xs_xb, 3
        plx
        bne     @nf32
        site    f0a, _xs_wb, 0
        site    f1a, _xs_wb, 1
        site    f2a, _xs_wb, 2
        site    f2b, _xs_wb, 2
        site    f3a, _xs_wb, 3
        site    f3b, _xs_wb, 3
        jmp     el
@nf32:  dex
        bne     @bf
        site    h0a, _xs_wb, 0
        site    h1a, _xs_wb, 1
        site    h1b, _xs_wb, 1
        jmp     el
@bf:    site    b0a, _xs_wb, 0
        site    b0b, _xs_wb, 0
        site    b1a, _xs_wb, 1
        site    b1b, _xs_wb, 1

; --- x_j ---
el:     ldx     xi
x3a:    lda     $FFFF,x                 ; x_j byte 3 (patched: xs_xb + 3)
        and     #$80                    ; (w_f16 keeps the weight's other bits through the EOR)
        sta     sgx
x2a:    lda     $FFFF,x
        asl     a
x3b:    lda     $FFFF,x
        rol     a                       ; eb
        beq     slow                    ; zero or subnormal
        cmp     #$FF
        beq     slow                    ; inf or NaN
        dec     a
        sta     ebm1
x0a:    lda     $FFFF,x
        sta     MULB
x1a:    lda     $FFFF,x
        sta     MULB+1
x2b:    lda     $FFFF,x
        ora     #$80
        sta     MULB+2
wjmp:   jmp     w_f16                   ; patched: w_f16, w_bf16 or w_f32

; --- w_j, F32: sign, ea, then Q = ma (hidden bit in byte 2) ---
w_f32:
f3a:    lda     $FFFF,x                 ; w_j byte 3 (patched: xs_wb + 3)
        eor     sgx
        sta     sg
f2a:    lda     $FFFF,x
        asl     a
f3b:    lda     $FFFF,x
        rol     a                       ; ea
        beq     slow
        cmp     #$FF
        beq     slow
        dec     a                       ; C = 0 after the CMP
        adc     ebm1                    ; C:A = pos
        ldy     xi
        split
        ldz     #0
f1a:    ldx     $FFFF,y
f2b:    lda     $FFFF,y
        ora     #$80
        pha
f0a:    lda     $FFFF,y
        ply
        jmp     shbra                   ; (out of BRA's reach past the inline splits)

slow:   lda     xi                      ; the C: xs_add_product(widen(w_j), x_j)
        lsr     a
        lsr     a
        ldz     #0                      ; Z = 0 for the C (softvec65.s's convention)
        jsr     _xs_slow
        lda     #0
        sta     MULB+3
        jmp     next

; --- w_j, BF16: Q = ma·2^16 (8 bits) ---
w_bf16: txa
        lsr     a
        tay                             ; 2·j
b1a:    lda     $FFFF,y                 ; (patched: xs_wb + 1)
        eor     sgx
        sta     sg
b0a:    lda     $FFFF,y
        asl     a
b1b:    lda     $FFFF,y
        rol     a                       ; ea
        beq     slow
        cmp     #$FF
        beq     slow
        dec     a
        adc     ebm1
        split
b0b:    lda     $FFFF,y                 ; ma·2^16: the widened significand's place (pos is
        ora     #$80                    ; for 24-bit significands), so 7 product bytes
        tay
        lda     #0
        tax
        taz
        bra     shbra

; --- w_j, F16: ea = e5 + 125, Q = ma (11 bits) ---
w_f16:  txa
        lsr     a
        tay                             ; 2·j
h1a:    lda     $FFFF,y                 ; s eeeee mm (patched: xs_wb + 1)
        eor     sgx
        sta     sg
        and     #$7C
        beq     slow                    ; zero or subnormal
        cmp     #$7C
        beq     slow                    ; inf or NaN
        lsr     a
        lsr     a                       ; e5, C = 0
        adc     #124
        adc     ebm1                    ; C:A = pos = e5 + 124 + eb - 1
        split
h1b:    lda     $FFFF,y
        and     #3
        ora     #4
        tax
h0a:    lda     $FFFF,y
        ldy     #0
        ldz     #0

; --- ma·2^(pos mod 8) to MULTINA; the product's bytes into xs_acc at pos / 8 ---
shbra:  bra     sh7                     ; patched by split: 7 - pos mod 8 ASLQs skipped
sh7:    aslq
        aslq
        aslq
        aslq
        aslq
        aslq
        aslq
        stq     MULA
        ldx     bi
        bit     sg
        bmi     sub
        clc
        lda     _xs_acc,x
        adc     MULO
        sta     _xs_acc,x
        lda     _xs_acc+1,x
        adc     MULO+1
        sta     _xs_acc+1,x
        lda     _xs_acc+2,x
        adc     MULO+2
        sta     _xs_acc+2,x
        lda     _xs_acc+3,x
        adc     MULO+3
        sta     _xs_acc+3,x
        lda     _xs_acc+4,x
        adc     MULO+4
        sta     _xs_acc+4,x
        lda     _xs_acc+5,x
        adc     MULO+5
        sta     _xs_acc+5,x
b6bra:  bra     b6a                     ; patched: F32 and BF16 add byte 6, F16 skips it
b6a:    lda     _xs_acc+6,x
        adc     MULO+6
        sta     _xs_acc+6,x
        inx
b6ae:   bcc     next
@carry: inc     _xs_acc+6,x             ; up to the top byte: a sum turning from negative to
        bne     next                    ; positive carries out of it (dropped)
        inx
        cpx     #XS_BYTES - 6
        bne     @carry
        beq     next

sub:    sec
        lda     _xs_acc,x
        sbc     MULO
        sta     _xs_acc,x
        lda     _xs_acc+1,x
        sbc     MULO+1
        sta     _xs_acc+1,x
        lda     _xs_acc+2,x
        sbc     MULO+2
        sta     _xs_acc+2,x
        lda     _xs_acc+3,x
        sbc     MULO+3
        sta     _xs_acc+3,x
        lda     _xs_acc+4,x
        sbc     MULO+4
        sta     _xs_acc+4,x
        lda     _xs_acc+5,x
        sbc     MULO+5
        sta     _xs_acc+5,x
b6bras: bra     b6s                     ; patched like b6bra
b6s:    lda     _xs_acc+6,x
        sbc     MULO+6
        sta     _xs_acc+6,x
        inx
b6se:   bcs     next
@borrow:lda     _xs_acc+6,x
        dec     _xs_acc+6,x
        tay
        bne     next                    ; the byte was not 0: the borrow stops here
        inx
        cpx     #XS_BYTES - 6           ; (or out of the top byte, dropped)
        bne     @borrow

next:   lda     xi
        clc
        adc     #4
        sta     xi
        cmp     xend
        beq     done
        jmp     el
done:   clc                             ; xs_xb += 4·n
        lda     _xs_xb
        adc     xend
        sta     _xs_xb
        bcc     @xh
        inc     _xs_xb+1
@xh:    lda     _xs_n                   ; xs_wb += n·(2 or 4)
        asl     a
        ldx     _xs_fmt
        cpx     #WT_F32
        bne     @w2
        asl     a                       ; (4·63 < 256)
@w2:    clc
        adc     _xs_wb
        sta     _xs_wb
        bcc     @wh
        inc     _xs_wb+1
@wh:    ldz     #0                      ; and on return
        rts

        .rodata
shofs:  .byte   21, 18, 15, 12, 9, 6, 3, 0
; per format (WT_F32, WT_F16, WT_BF16): the weight step, and the BRA offset at b6bra (0: add
; byte 6; F16: skip it and its INX)
wstep_lo:
        .byte   <w_f32, <w_f16, <w_bf16
wstep_hi:
        .byte   >w_f32, >w_f16, >w_bf16
b6skip: .byte   0, b6ae - b6a, 0
