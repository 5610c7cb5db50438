; softgemv65.s: the Q8_0/Q4_0 GEMV hot path of softgemv.c on the 45GS02 (cc65 builds; the C in
; softgemv.c stays the definition, used on the PC and with -DSC_C_GEMV). One call, sgq_block, does
; one weight block column: block b of rows r0.. r0+nr-1 against the quantised input block b, each
; row's term added to its running sum in hardware numerics (docs/spec/numerics.md §5.3):
;     acc_r = single(acc_r + single(single(isum)·single(dw·dx)))
; with the same bits as softgemv.c's C loop. Per row:
;
; 1. DMA: the row's 34- or 18-byte block from attic RAM to wbuf (one job, 2 cycles a byte).
; 2. isum, exact, with the hardware multiplier (MULTINA $D770, MULTINB $D774, MULTOUT $D778;
;    "64-bit unsigned product A×B", spec/MEGA65.md §9, ready one cycle after a write). Two
;    products per multiplication: A = c0 + c1·2^24 (two weights), B = b1 + b0·2^24 (two |x|),
;    A·B = c0·b1 + (c0·b0 + c1·b1)·2^24 + c1·b0·2^48; c ≤ 255 and b ≤ 128, so c0·b1 < 2^16
;    leaves byte 2 zero and the wanted sum c0·b0 + c1·b1 (< 2^16) sits in bytes 3-4. ADCQ $D77A
;    adds bytes 2-5 to Q = A:X:Y:Z: X:Y:Z sums the block (< 2^24, so no carry ever leaves it) and
;    A gains 0, so A stays free for the weights. Weights and x are signed; the fields must not be.
;    Per column, c = w + 128 (w XOR $80) where x >= 0 and c = 127 - w (w XOR $7F) where x < 0,
;    and b = |x|; then c·b = w·x + 128·|x| or w·x + 127·|x|, and isum = Σ c·b − corr with
;    corr = 128·Σ|x| − Σ_{x<0} |x|, a constant of the input block. Q4_0 likewise with nibbles:
;    c = n or 15 − n (n XOR $0F), corr = 8·Σ|x| − Σ_{x<0} |x|. The masks and |x| are patched
;    into the unrolled code as immediates once per block column (sgq_block's first step).
; 3. The term, fast: |isum|, F16 dw and the F16-rounded dx (11-bit significands) give the exact
;    product P = |isum|·2^(8nb+lz) × (mw·mx·2^(2+lz')) in [2^45, 2^48) from two multiplications,
;    rounded once to 24 bits (RNE) — single(isum)·single(dw·dx) rounded, as dw·dx is exact. Then
;    the single addition to acc with 8 guard bits, the smaller operand's lost bits jammed into
;    bit 0, rounded to nearest even. Anything unusual — isum 0, dw or dx not a normal F16
;    (zero, subnormal, inf, NaN), acc not finite or subnormal, a result out of range — goes to
;    sgq_slow (C, softfloat: the definition itself) for that term.
;
; The block's attic address advances by the row stride; DMA addresses are physical, so the near
; buffers' chip-RAM address is theirs + SC_NEAR_DELTA (0 when the core runs unmapped in bank 0;
; the program's core window exports its own).

        .p4510
        .import         _sgq_slow
        .import         _sgq_q, _sgq_dx, _sgq_p, _sgq_rb, _sgq_nr, _sgq_fmt, _sgq_acc
        .import         _sgq_s, _sgq_dw, _sgq_accp
        .import         SC_NEAR_DELTA
        .importzp       sreg
        .export         _sgq_block

MULA    = $D770                         ; MULTINA, 4 bytes
MULB    = $D774                         ; MULTINB, 4 bytes
MULO    = $D778                         ; MULTOUT, 8 bytes
WT_Q8_0 = 8                             ; fn_tables.h

; 45GS02 quad instructions: the 42 42 (NEG NEG) prefix on the 8-bit opcode (spec/MEGA65.md §1.6)
.macro  ldq     arg
        .byte   $42, $42
        lda     arg
.endmacro
.macro  ldqi    arg                     ; LDQ (arg),Z
        .byte   $42, $42
        lda     (arg),z
.endmacro
.macro  stq     arg
        .byte   $42, $42
        sta     arg
.endmacro
.macro  adcq    arg
        .byte   $42, $42
        adc     arg
.endmacro
.macro  sbcq    arg
        .byte   $42, $42
        sbc     arg
.endmacro
.macro  aslq
        .byte   $42, $42
        asl     a
.endmacro
.macro  lsrq
        .byte   $42, $42
        lsr     a
.endmacro
.macro  rorq
        .byte   $42, $42
        ror     a
.endmacro

        .zeropage
qp:     .res    2                       ; the input block's int8 quants
accp:   .res    2                       ; this row's acc
nr:     .res    1                       ; rows left
mag:    .res    4                       ; |isum|, then byte-normalised; mag+3 stays 0
ss:     .res    3                       ; isum, signed 24-bit (for sgq_slow)
sgi:    .res    1                       ; isum's sign (bit 7)
sg:     .res    1                       ; the product's sign (bit 7)
sgx:    .res    1                       ; dx's sign (bit 7)
stk:    .res    1                       ; sticky bits
pe:     .res    1                       ; the product's biased exponent
pq:     .res    4                       ; the product: guard byte, 24-bit significand
ea:     .res    1                       ; acc's biased exponent
sa:     .res    1                       ; acc's sign (bit 7)
aq:     .res    4                       ; acc: guard byte, 24-bit significand
tq:     .res    4
eb:     .res    1                       ; the larger's exponent, then the result's
sb:     .res    1                       ; the larger's sign, then the result's
opp:    .res    1                       ; bit 7: the signs differ
t:      .res    1
t0:     .res    1
t1:     .res    1
t2:     .res    1
pp:     .res    2                       ; the isum code being patched

        .bss
corr:   .res    3                       ; the block's correction (24-bit)
sump:   .res    2                       ; Σ_{x>=0} |x|
sumn:   .res    2                       ; Σ_{x<0} |x|
ex10:   .res    1                       ; dx's exponent + 10; 0 = dx is no normal F16
mxs_lo: .res    8                       ; dx's significand·2^(2+lz), lz = 0..7, 3 bytes
mxs_mid:.res    8
mxs_hi: .res    8
wbuf:   .res    34                      ; the row's weight block (DMA destination)
jamv:   .res    1                       ; 1 when the alignment dropped nonzero bits

        .data
; the DMA job (F018B; addresses cross megabyte boundaries instead of wrapping inside them, option
; $01, docs/spec/mega65.md §M3.2-§M3.3; source and destination megabyte), as softmem_m65.s
list:   .byte   $0B, $01, $80
src_mb: .byte   0
        .byte   $81
        .byte   <((wbuf + SC_NEAR_DELTA) >> 20)
        .byte   $00                     ; end of options
        .byte   $00                     ; COPY
count:  .word   34
src:    .word   0
src_bk: .byte   0
        .word   (wbuf + SC_NEAR_DELTA) & $FFFF
        .byte   <(((wbuf + SC_NEAR_DELTA) >> 16) & $0F)
        .byte   0                       ; sub-command
        .word   0                       ; modulo
LIST_PHYS = list + SC_NEAR_DELTA

        .code

; void sgq_block(void): sgq_fmt (WT_Q8_0 or WT_Q4_0), sgq_q (32 quants), sgq_dx (their scale,
; F16-rounded), sgq_p (row r0's block), sgq_rb (row stride), sgq_nr (rows, >= 1), sgq_acc (their
; running sums, f32 each).
_sgq_block:
        lda     _sgq_q
        sta     qp
        lda     _sgq_q+1
        sta     qp+1
        lda     _sgq_acc
        sta     accp
        lda     _sgq_acc+1
        sta     accp+1
        jsr     set_accp
        lda     _sgq_nr
        sta     nr
        jsr     dx_params
        lda     _sgq_fmt
        cmp     #WT_Q8_0
        bne     @q4
        jsr     patch8
        lda     #34
        sta     count
        lda     #<q8sum
        sta     isum_call+1
        lda     #>q8sum
        sta     isum_call+2
        bra     rowloop
@q4:    jsr     patch4
        lda     #18
        sta     count
        lda     #<q4sum
        sta     isum_call+1
        lda     #>q4sum
        sta     isum_call+2
        lda     #^LIST_PHYS             ; the DMA list's address, for every row's job below
        sta     $D702                   ; ($D702 first: writing it clears $D704)
        lda     #<(LIST_PHYS >> 20)
        sta     $D704
        lda     #>LIST_PHYS
        sta     $D701
rowloop:
        lda     _sgq_p                  ; the row's block to wbuf: source = sgq_p
        sta     src
        lda     _sgq_p+1
        sta     src+1
        lda     _sgq_p+2
        and     #$0F
        sta     src_bk
        lda     _sgq_p+2                ; megabyte: address bits 20-27
        lsr     a
        lsr     a
        lsr     a
        lsr     a
        sta     t
        lda     _sgq_p+3
        asl     a
        asl     a
        asl     a
        asl     a
        ora     t
        sta     src_mb
        lda     #<LIST_PHYS
        sta     $D705                   ; the enhanced job runs; the CPU waits
        lda     #0                      ; the gaps of the two fields (the last term's
        sta     MULA+1                  ; multiplications, or softfloat, wrote them)
        sta     MULA+2
        sta     MULB+1
        sta     MULB+2
        tax
        tay
        taz
        clc
isum_call:
        jsr     q8sum                   ; X:Y:Z = Σ c·b
        jsr     term
        ldq     _sgq_p                  ; next row: the block one row stride on, the next acc
        clc
        adcq    _sgq_rb
        stq     _sgq_p
        ldz     #0
        clc                             ; accp += 4, also in the LDQ and STQ of acc
        lda     accp
        adc     #4
        sta     accp
        sta     acc_ld+3
        sta     acc_st+3
        bcc     :+
        inc     accp+1
        inc     acc_ld+4
        inc     acc_st+4
:       dec     nr
        bne     rowloop
        rts

; accp into the operands of the LDQ and STQ that load and store acc
set_accp:
        lda     accp
        sta     acc_ld+3
        sta     acc_st+3
        lda     accp+1
        sta     acc_ld+4
        sta     acc_st+4
        rts

; ---------------------------------------------------------------------------------------------
; The input block: dx's significand and exponent, the masks and |x| patched into the isum code,
; the correction.

; ex10 = dx's biased exponent + 10 when dx is a normal F16 value (single exponent 113-142; its low
; 13 significand bits are zero, as it was rounded to F16), else 0; mxs_*[lz] = its 11-bit
; significand·2^(2+lz); sgx = its sign.
dx_params:
        lda     _sgq_dx+3
        and     #$80
        sta     sgx
        lda     _sgq_dx+2               ; exponent = dx bits 23-30
        asl     a
        lda     _sgq_dx+3
        rol     a
        cmp     #113
        bcc     @slow
        cmp     #143
        bcs     @slow
        adc     #10                     ; C = 0
        sta     ex10
        ; significand·4 = (bits 0-23 | 2^23) >> 11: 13 bits
        lda     _sgq_dx+2
        ora     #$80
        sta     t
        lda     _sgq_dx+1
        lsr     t
        ror     a
        lsr     t
        ror     a
        lsr     t
        ror     a
        sta     mxs_lo
        lda     t
        sta     mxs_mid
        lda     #0
        sta     mxs_hi
        ldx     #0
@dbl:   lda     mxs_lo,x                ; mxs[lz+1] = 2·mxs[lz]
        asl     a
        sta     mxs_lo+1,x
        lda     mxs_mid,x
        rol     a
        sta     mxs_mid+1,x
        lda     mxs_hi,x
        rol     a
        sta     mxs_hi+1,x
        inx
        cpx     #7
        bne     @dbl
        rts
@slow:  lda     #0
        sta     ex10
        rts

; A = a quant x: returns |x| in A, the Q8_0 mask in X ($80 for x >= 0, $7F for x < 0) and the
; sign in C; adds |x| to sump (x >= 0) or sumn (x < 0)
absm:   bmi     @neg
        sta     t
        clc
        adc     sump
        sta     sump
        bcc     :+
        inc     sump+1
:       lda     t
        ldx     #$80
        clc
        rts
@neg:   eor     #$FF
        inc     a                       ; -128 -> 128
        sta     t
        clc
        adc     sumn
        sta     sumn
        bcc     :+
        inc     sumn+1
:       lda     t
        ldx     #$7F
        sec
        rts

Q8SIZE  = 31                            ; bytes of one pair's code (q8sum)
Q4SIZE  = 36                            ; bytes of one byte's code (q4sum)

; Q8_0: pair p (columns 2p, 2p+1): mask of 2p at +4, of 2p+1 at +12, |x_2p| at +17, |x_2p+1| at +22
patch8: jsr     clear_sums
        lda     #<q8sum
        sta     pp
        lda     #>q8sum
        sta     pp+1
        ldy     #0
@pair:  lda     (qp),y
        jsr     absm
        sta     ax0
        stx     m0
        iny
        lda     (qp),y
        jsr     absm
        sty     t
        ldy     #22
        sta     (pp),y
        txa
        ldy     #12
        sta     (pp),y
        lda     ax0
        ldy     #17
        sta     (pp),y
        lda     m0
        ldy     #4
        sta     (pp),y
        clc
        lda     pp
        adc     #Q8SIZE
        sta     pp
        bcc     :+
        inc     pp+1
:       ldy     t
        iny
        cpy     #32
        bne     @pair
        ldx     #7                      ; corr = 128·Σpos + 127·Σneg
        jmp     set_corr

; Q4_0: byte k (columns k: low nibble, k+16: high nibble): mask at +4, |x_k+16| at +22,
; |x_k| at +27
patch4: jsr     clear_sums
        lda     #<q4sum
        sta     pp
        lda     #>q4sum
        sta     pp+1
        ldy     #0
@byte:  lda     (qp),y                  ; column k
        jsr     absm
        sta     ax0
        lda     #0
        bcc     :+
        lda     #$0F
:       sta     m0
        tya
        ora     #16
        tay
        lda     (qp),y                  ; column k + 16
        jsr     absm
        sta     ax1
        bcc     :+
        lda     m0
        ora     #$F0
        sta     m0
:       tya
        and     #15
        sta     t
        ldy     #4
        lda     m0
        sta     (pp),y
        ldy     #22
        lda     ax1
        sta     (pp),y
        ldy     #27
        lda     ax0
        sta     (pp),y
        clc
        lda     pp
        adc     #Q4SIZE
        sta     pp
        bcc     :+
        inc     pp+1
:       ldy     t
        iny
        cpy     #16
        bne     @byte
        ldx     #3                      ; corr = 8·Σpos + 7·Σneg
        jmp     set_corr

clear_sums:
        lda     #0
        sta     sump
        sta     sump+1
        sta     sumn
        sta     sumn+1
        rts

; corr = ((Σpos + Σneg) << X) − Σneg, 24-bit
set_corr:
        clc
        lda     sump
        adc     sumn
        sta     corr
        lda     sump+1
        adc     sumn+1
        sta     corr+1
        lda     #0
        sta     corr+2
@shl:   asl     corr
        rol     corr+1
        rol     corr+2
        dex
        bne     @shl
        sec
        lda     corr
        sbc     sumn
        sta     corr
        lda     corr+1
        sbc     sumn+1
        sta     corr+1
        lda     corr+2
        sbc     #0
        sta     corr+2
        rts

        .bss
ax0:    .res    1
ax1:    .res    1
m0:     .res    1
        .code

; ---------------------------------------------------------------------------------------------
; The isum code, patched per block column (the immediates marked 0 here). Entered with Q = 0,
; C = 0 and the fields' gaps (MULA+1, +2, MULB+1, +2) zero; leaves Σ c·b in X:Y:Z.

.macro  Q8PAIR  p
        lda     wbuf+2+2*p              ; +0
        eor     #0                      ; +4: mask of column 2p
        sta     MULA
        lda     wbuf+3+2*p              ; +8
        eor     #0                      ; +12: mask of column 2p+1
        sta     MULA+3
        lda     #0                      ; +17: |x_2p| (pairs with MULA, byte 0)
        sta     MULB+3
        lda     #0                      ; +22: |x_2p+1| (pairs with MULA+3)
        sta     MULB
        adcq    MULO+2                  ; +26
.endmacro

q8sum:
.repeat 16, p
        Q8PAIR  p
.endrepeat
        rts
        .assert (* - q8sum) = 16 * Q8SIZE + 1, error, "Q8SIZE"

.macro  Q4BYTE  k
        lda     wbuf+2+k                ; +0
        eor     #0                      ; +4: the two nibbles' masks
        sta     t
        and     #$0F
        sta     MULA                    ; column k
        lda     t
        lsr     a
        lsr     a
        lsr     a
        lsr     a
        sta     MULA+3                  ; column k+16
        lda     #0                      ; +22: |x_k+16| (pairs with MULA+3)
        sta     MULB
        lda     #0                      ; +27: |x_k| (pairs with MULA)
        sta     MULB+3
        adcq    MULO+2                  ; +31
.endmacro

q4sum:
.repeat 16, k
        Q4BYTE  k
.endrepeat
        rts
        .assert (* - q4sum) = 16 * Q4SIZE + 1, error, "Q4SIZE"

; ---------------------------------------------------------------------------------------------
; The term: acc (at accp) += single(isum)·single(dw·dx), isum = X:Y:Z − corr.

term:   sec
        txa
        sbc     corr
        sta     ss
        sta     mag
        tya
        sbc     corr+1
        sta     ss+1
        sta     mag+1
        tza
        sbc     corr+2
        sta     ss+2
        sta     mag+2
        ldz     #0
        and     #$80
        sta     sgi                     ; isum's sign
        beq     @pos
        sec                             ; |isum|
        lda     #0
        sbc     mag
        sta     mag
        lda     #0
        sbc     mag+1
        sta     mag+1
        lda     #0
        sbc     mag+2
        sta     mag+2
@pos:   lda     ex10                    ; dx no normal F16: the definition
        lbeq    @slow
        lda     wbuf+1                  ; dw: F16, exponent bits 10-14
        and     #$7C
        lbeq    @slow                   ; zero or subnormal
        cmp     #$7C
        lbeq    @slow                   ; inf or NaN
        lsr     a
        lsr     a
        adc     ex10                    ; (C = 0) eh + ex + 10, at most 182
        sta     pe
        lda     wbuf+1
        eor     sgi
        eor     sgx
        and     #$80
        sta     sg                      ; the product's sign
        ; n = |isum| with its top byte in byte 2; pe −= 8 per byte moved up
        lda     mag+2
        bne     @norm
        lda     mag+1
        beq     @b2
        sta     mag+2
        lda     mag
        sta     mag+1
        stz     mag
        lda     pe
        sec
        sbc     #8
        sta     pe
        bra     @norm
@b2:    lda     mag
        lbeq    @zero                   ; isum = 0
        sta     mag+2
        stz     mag+1
        stz     mag
        lda     pe
        sec
        sbc     #16
        sta     pe
@norm:  ldx     mag+2                   ; lz = leading zeros of the top byte; pe −= lz
        lda     lz8,x
        tax
        eor     #$FF
        sec
        adc     pe
        sta     pe
        lda     wbuf                    ; M1: mw·mx·2^(2+lz), mw = the F16 significand
        sta     MULA
        lda     wbuf+1
        and     #3
        ora     #4
        sta     MULA+1
        stz     MULA+3                  ; (MULA+2 is still 0 from the isum)
        stz     MULB+3
        lda     mxs_lo,x
        sta     MULB
        lda     mxs_mid,x
        sta     MULB+1
        lda     mxs_hi,x
        sta     MULB+2
        ldq     MULO                    ; M2: P = n·that, in [2^45, 2^48)
        stq     MULB
        ldq     mag                     ; (mag+3 = 0)
        stq     MULA
        lda     MULO
        ora     MULO+1
        sta     stk
        ldq     MULO+2                  ; A = bits 16-23, X:Y:Z = bits 24-47
        cpz     #$80
        bcs     @top
        aslq
        dec     pe
        cpz     #$80
        bcs     @top
        aslq
        dec     pe
@top:   cmp     #$80                    ; to nearest even: round bit A.7, sticky A.6-0 and stk
        bcc     @done
        and     #$7F
        ora     stk
        bne     @up
        txa
        lsr     a
        bcc     @done
@up:    inx
        bne     @done
        iny
        bne     @done
        inz
        bne     @done
        ldz     #$80
        inc     pe
@done:  lda     #0
        stq     pq                      ; the product: [0, m0, m1, m2] (m2.7 set), pe, sg
        jmp     add
@slow:  jmp     slow
@zero:  jmp     isum_zero

; acc + the product, both normal singles (acc may be ±0). The larger in magnitude (big) keeps a
; guard byte below its 24-bit significand; the smaller is shifted right by the exponent
; difference d, the bits it loses jammed into bit 0 (sticky); then added or subtracted,
; normalised, rounded to nearest even and stored. d >= 26: the smaller is below a quarter of the
; larger's last place and the sum is the larger.
add:
acc_ld: ldq     $FFFF                   ; Q = acc (the operand is accp, patched per row)
        sta     aq+1
        stx     aq+2
        tya
        ora     #$80
        sta     aq+3
        tya
        asl     a                       ; C = exponent bit 0
        tza
        sta     sa
        rol     a
        sta     ea
        ldz     #0
        stz     aq
        lda     sa
        and     #$80
        sta     sa                      ; acc's sign
        eor     sg
        sta     opp                     ; bit 7: the signs differ
        lda     ea
        lbeq    add_azero
        cmp     #$FF
        lbeq    add_slow
        lda     pe                      ; which is larger?
        cmp     ea
        bne     add_cmp
        lda     pq+3
        cmp     aq+3
        bne     add_cmp
        lda     pq+2
        cmp     aq+2
        bne     add_cmp
        lda     pq+1
        cmp     aq+1
add_cmp:   bcc     acc_big
        lda     pe                      ; the product is (or equals) the larger
        sta     eb
        lda     sg
        sta     sb
        lda     pe
        sec
        sbc     ea
        cmp     #26
        bcs     prod_only
        ldx     #aq
        ldy     #pq
        bra     align
acc_big:
        lda     ea
        sta     eb
        lda     sa
        sta     sb
        lda     ea
        sec
        sbc     pe
        cmp     #26
        bcc     :+
        rts                             ; acc, unchanged
:       ldx     #pq
        ldy     #aq
align: stx     smallq+3                ; the operands of the quad instructions below
        sty     bigadd+3
        sty     bigld+3
        ldy     #0                      ; whole bytes: the lost one to the sticky
        sty     stk
align_bytes: cmp     #8
        bcc     align_bits
        sbc     #8
        tay
        lda     0,x
        ora     stk
        sta     stk
        lda     1,x
        sta     0,x
        lda     2,x
        sta     1,x
        lda     3,x
        sta     2,x
        stz     3,x
        tya
        bra     align_bytes
align_bits:  tay                             ; then 0-7 bits
        lda     0,x
        and     lowmask,y
        ora     stk
        beq     :+
        lda     #1
:       sta     jamv
        lda     rshift_lo,y
        sta     shift_jmp+1
        lda     rshift_hi,y
        sta     shift_jmp+2
smallq: ldq     0                       ; (patched: the smaller)
shift_jmp:   jmp     rshift7
add_azero: lda     aq+3                    ; acc ±0: the sum is the product; else subnormal
        and     #$7F
        ora     aq+2
        ora     aq+1
        bne     add_slow
        bra     prod_only
add_slow:  jmp     slow

prod_only:
        lda     pe
        sta     eb
        lda     sg
        sta     sb
        ldq     pq
        jmp     pack

shifted:
        ora     jamv
        bit     opp
        bmi     sub_big
        clc
bigadd: adcq    0                       ; (patched: the larger)
        bcc     round
        rorq
        bcc     :+
        ora     #1
:       inc     eb
        bra     round
sub_big:   stq     tq
bigld:  ldq     0                       ; (patched: the larger)
        sec
        sbcq    tq
        bne     sub_norm
        ldz     #0                      ; exact cancellation: +0
        ldy     #3
        lda     #0
:       sta     (accp),y
        dey
        bpl     :-
        rts
sub_norm:  cpz     #$80
        bcs     round
        aslq
        dec     eb
        bra     sub_norm

; X:Y:Z significand, A guard byte: round to nearest even, store with eb, sb
round:  cmp     #$80
        bcc     pack
        and     #$7F
        bne     @up
        txa
        lsr     a
        bcc     pack
@up:    inx
        bne     pack
        iny
        bne     pack
        inz
        bne     pack
        ldz     #$80
        inc     eb
; acc = [X, Y, (Z & $7F) | E.0 << 7, sb | E >> 1], E = eb, which must be 1-254
pack:   lda     eb
        beq     pack_slow
        cmp     #$FF
        beq     pack_slow
        lsr     a                       ; C = E.0
        ora     sb
        sta     t2
        tza
        and     #$7F
        bcc     :+
        ora     #$80
:       phy                             ; Q = [m0, m1, that, t2]
        tay
        txa
        plx
        ldz     t2
acc_st: stq     $FFFF                   ; (the operand is accp, patched per row)
        ldz     #0
        rts
pack_slow:  ldz     #0
        jmp     slow

; isum = 0 (dw, dx normal): the product is ±0 (sg). acc + ±0 = acc, but ±0 + ±0 is −0 only when
; both are −0; acc inf or NaN to the C (its NaN).
isum_zero:
        ldy     #3
        lda     (accp),y
        sta     t2
        dey
        lda     (accp),y
        asl     a
        lda     t2
        rol     a
        cmp     #$FF
        beq     slow
        lda     t2
        and     #$7F
        ldy     #2
        ora     (accp),y
        dey
        ora     (accp),y
        dey
        ora     (accp),y
        bne     :+
        lda     t2
        and     sg
        and     #$80
        ldy     #3
        sta     (accp),y
:       rts

; the term in C (sgq_slow: the definition) with isum, dw and acc
slow:   lda     ss
        sta     _sgq_s
        lda     ss+1
        sta     _sgq_s+1
        lda     ss+2
        sta     _sgq_s+2
        asl     a
        lda     #0
        sbc     #0
        eor     #$FF                    ; sign extension
        sta     _sgq_s+3
        lda     wbuf
        sta     _sgq_dw
        lda     wbuf+1
        sta     _sgq_dw+1
        lda     accp
        sta     _sgq_accp
        lda     accp+1
        sta     _sgq_accp+1
        jmp     _sgq_slow

        .rodata
lowmask:
        .byte   $00, $01, $03, $07, $0F, $1F, $3F, $7F
rshift_lo:
        .byte   <rshift0, <rshift1, <rshift2, <rshift3, <rshift4, <rshift5, <rshift6, <rshift7
rshift_hi:
        .byte   >rshift0, >rshift1, >rshift2, >rshift3, >rshift4, >rshift5, >rshift6, >rshift7
; leading zeros of a nonzero byte
lz8:
.repeat 256, i
        .byte   (i < 128) + (i < 64) + (i < 32) + (i < 16) + (i < 8) + (i < 4) + (i < 2)
.endrepeat

        .code
; Q >>= 0..7: enter at rshiftN
rshift7:
        lsrq
rshift6:
        lsrq
rshift5:
        lsrq
rshift4:
        lsrq
rshift3:
        lsrq
rshift2:
        lsrq
rshift1:
        lsrq
rshift0:
        jmp     shifted
