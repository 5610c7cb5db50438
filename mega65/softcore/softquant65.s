; softquant65.s: softgemv.c's Q8_0 input quantiser (quantise) for one block of 32 singles on the
; 45GS02 (cc65 builds; with -DSC_C_GEMV the C in softgemv.c does it all): sgq_qblock finds
; amax, d = single(amax/127), the F16 rounding of d, id = single(1/d) and the 32 quants, with
; the same bits as the C, which stays the definition (docs/spec/numerics.md §5.3). What it does
; not take it leaves to the C (returns 1): an infinite or NaN element, amax subnormal, d outside
; the F16 normals (amax below ~0.0078 or above ~8.3 M).

        .p4510
        .include        "quad.inc"
        .import         _sgq_x, _sgq_qb, _sgq_dp
        .export         _sgq_qblock

MAGIC   = $04081021                     ; ceil(2^33/127): ma·2^8/127 = 2ma + (ma·MAGIC >> 32)


        .zeropage
am:     .res    4                       ; amax as bits, then its significand ma
md:     .res    4                       ; d's significand (24 bits)
dp:     .res    2                       ; where the widened scale goes
dtmp:   .res    2                       ; scratch: F16 bytes, the slow path's T
xq:     .res    2                       ; sgq_x (amax's rare path), sgq_qb (a zero block)
        .code

; The x block is read with abs,X (5 cycles, against 7 for (zp),Y) at operands patched to
; sgq_x + k (k: the byte, 0 low .. 3 sign and exponent) when sgq_x differs from the last call's.
.macro  xref    k, lbl
lbl     = * + 1
.endmacro

; uint8_t sgq_qblock(void): sgq_qb[0..31] and *sgq_dp from the 32 singles at sgq_x; 0, or 1
; for the C (which then writes them all).
_sgq_qblock:
        lda     _sgq_x
        sta     xq
        ldx     _sgq_x+1
        stx     xq+1
        cmp     pb0
        bne     L_pat
        cpx     pb0+1
        beq     L_patd
L_pat:   ldy     #NPAT-1                 ; patch: operand pats[i] = sgq_x + patk[i]
L_pl:    tya
        asl     a
        tax
        lda     pats,x
        sta     dp
        lda     pats+1,x
        sta     dp+1
        ldz     #0
        lda     xq
        clc
        adc     patk,y
        sta     (dp),z
        inz
        lda     xq+1
        adc     #0
        sta     (dp),z
        dey
        bpl     L_pl
L_patd:  lda     _sgq_qb
        sta     pq
        sta     pqn
        lda     _sgq_qb+1
        sta     pq+1
        sta     pqn+1
        lda     _sgq_dp
        sta     dp
        lda     _sgq_dp+1
        sta     dp+1

; amax: the largest |x| as bits (ordered like the values). An infinite or NaN x makes its
; exponent field 255 (the C leaves NaN out: such blocks go to the C anyway). Two elements a
; step (X + 4, then X; X down by 8 with the C = 0 the untaken BCS leaves: SBC #7), each's top
; 16 bits (exponent and fraction's top 7) against the maximum's, kept in the CMP/SBC operands
; (immediates, 2 cycles each against 4 for base page); one at or above goes to its copy's L_ac1
; or L_ac0, which decides by the top byte's difference, byte 2 and at equal top 16 bits the low
; bytes, and takes a larger one into am and the operands (C = 0 again for L_anext's SBC).
        lda     #0
        sta     am
        sta     am+1
        sta     am+2
        sta     am+3
        sta     ia2
        sta     ia2b
        sta     ia3
        sta     ia3b
        ldx     #120
L_a:
        xref    6, pa6
        lda     $FFFF,x                 ; element X/4 + 1: top 16 bits of |x| against am's
ia2     = * + 1
        cmp     #0
        xref    7, pa7
        lda     $FFFF,x
        and     #$7F
ia3     = * + 1
        sbc     #0
        bcs     L_ac1
L_a0:
        xref    2, pa2
        lda     $FFFF,x                 ; element X/4
ia2b    = * + 1
        cmp     #0
        xref    3, pa3
        lda     $FFFF,x
        and     #$7F
ia3b    = * + 1
        sbc     #0
        bcs     L_ac0
L_anext: txa                            ; (C = 0) X − 8
        sbc     #7
        tax
        bpl     L_a
        bra     L_adone
L_ac0:  bne     L_n0                   ; above on the top byte (A: its difference)
        xref    2, pc02
        lda     $FFFF,x                 ; equal top bytes (or one above with a borrow): byte 2
        cmp     am+2                    ; differing is above, equal the same top 16 bits:
        bne     L_n0                   ; the low bytes decide
        xref    1, pc01
        lda     $FFFF,x
        cmp     am+1
        bcc     L_anext
        bne     L_n0
        xref    0, pc00
        lda     $FFFF,x
        cmp     am
        bcc     L_anext                   ; (equal: the same value taken again)
L_n0:
        xref    0, pm00
        lda     $FFFF,x                 ; the new maximum: am and the operands
        sta     am
        xref    1, pm01
        lda     $FFFF,x
        sta     am+1
        xref    2, pm02
        lda     $FFFF,x
        sta     am+2
        sta     ia2
        sta     ia2b
        xref    3, pm03
        lda     $FFFF,x
        and     #$7F
        sta     am+3
        sta     ia3
        sta     ia3b
        clc
        jmp     L_anext
L_ac1:  bne     L_n1                   ; above on the top byte (A: its difference)
        xref    6, pc12
        lda     $FFFF,x                 ; equal top bytes (or one above with a borrow): byte 2
        cmp     am+2                    ; differing is above, equal the same top 16 bits:
        bne     L_n1                   ; the low bytes decide
        xref    5, pc11
        lda     $FFFF,x
        cmp     am+1
        lbcc    L_a0
        bne     L_n1
        xref    4, pc10
        lda     $FFFF,x
        cmp     am
        lbcc    L_a0                   ; (equal: the same value taken again)
L_n1:
        xref    4, pm10
        lda     $FFFF,x                 ; the new maximum: am and the operands
        sta     am
        xref    5, pm11
        lda     $FFFF,x
        sta     am+1
        xref    6, pm12
        lda     $FFFF,x
        sta     am+2
        sta     ia2
        sta     ia2b
        xref    7, pm13
        lda     $FFFF,x
        and     #$7F
        sta     am+3
        sta     ia3
        sta     ia3b
        jmp     L_a0
L_adone:
        lda     am
        ora     am+1
        ora     am+2
        ora     am+3
        bne     :+
        jmp     zblock                  ; amax 0: all quants and d 0
fb0:    jmp     fb
:       lda     am+2                    ; ea = amax's exponent field
        asl     a
        lda     am+3
        rol     a
        cmp     #$FF
        beq     fb0                     ; inf or NaN in the block
        sec                             ; ed = ea − 7 (one more below when the quotient is long)
        sbc     #7
        bcc     fb0                     ; (subnormal amax too)
        sta     ed

; d = single(amax/127). With ma the 24-bit significand, Q = floor(ma·2^8/127) = 2ma +
; floor(ma·MAGIC/2^32) (exact for every ma, checked exhaustively on the PC), 25 or 26 bits.
; amax/127 = Q·2^(ea−158) + a remainder below one unit of Q; the remainder is 0 exactly when
; Q's low byte is 0 (127 is odd and the remainder is below 127), so an odd Q or a dropped bit 1
; always has a remainder behind it: no ties, and round half up is RNE.
        lda     am+2
        ora     #$80
        sta     am+2
        lda     #0
        sta     am+3
        ldq     am
        stq     MULA
        lda     #<MAGIC
        ldx     #>MAGIC
        ldy     #^MAGIC
        ldz     #MAGIC >> 24
        stq     MULB
        ldq     MULO+4
        clc
        adcq    am
        clc
        adcq    am                      ; Q = 2ma + floor(ma·MAGIC/2^32)
        cpz     #2                      ; 26 bits: one more bit to drop, d one binade up
        bcc     :+
        lsrq
        inc     ed
:       inq                             ; + half, >> 1: the significand, or 2^24 on a carry
        lsrq
        cpz     #0
        beq     :+
        lsrq                            ; 2^24 → 2^23, a binade up
        inc     ed
:       stq     md

; The F16 rounding of d (RNE to 11 bits; d's exponent must stay within the F16 normals),
; widened back to a single at *sgq_dp: md's bits 13-23 stay, guard bit 12, sticky bits 0-11.
        ldx     ed                      ; the F16 exponent + 112 (ed itself is needed for id)
        cpx     #113
        bcc     fb                      ; F16 subnormal d: the C
        cpx     #143
        bcs     fb                      ; beyond F16: the C
        lda     md+1
        and     #$10
        beq     L_f16                    ; guard 0: down
        lda     md+1
        and     #$2F
        ora     md
        beq     L_f16                    ; a tie with an even last bit: down
        lda     md+1                    ; up: + 2^13
        clc
        adc     #$20
        sta     dtmp+1
        lda     md+2
        adc     #0
        bcc     L_f16b
        inx                             ; 2^24: 2^23 a binade up
        cpx     #143
        bcs     fb                      ; rounded up to F16 infinity: the C
        bra     L_f16b
fb:     ldz     #0                      ; for the C
        lda     #1
        ldx     #0
        rts
L_f16:   lda     md+1
        sta     dtmp+1
        lda     md+2
L_f16b:  and     #$7F                    ; bytes: 0, bits 13-15, bits 16-22 | e bit 0, e >> 1
        sta     dtmp
        txa
        lsr     a
        ldy     #3
        sta     (dp),y
        lda     dtmp
        bcc     :+
        ora     #$80
:       dey
        sta     (dp),y
        lda     dtmp+1
        and     #$E0
        dey
        sta     (dp),y
        lda     #0
        dey
        sta     (dp),y

; id = single(1/d), d = md·2^(ed−150): for md = 2^23, id = 2^(254−ed) as bits, exact; otherwise
; Q2 = floor(2^48/md) has 25 bits and 2^48/md is never exact (md is no power of two), so the
; dropped bit 0 decides alone: mid = (Q2 + 1) >> 1, eid = 253 − ed. Q2 = 2^24 + (F >> 8) with F
; the 32 fraction bits of 2^24/md from the divider (DIVOUT, docs/spec/mega65.md §M9), as
; softfloat's sf_recip65 takes 1/a. mega65-core's fast_divide.vhdl finds the quotient by
; Goldschmidt steps, whose last bit may be one off the floor: that moves F >> 8 only when F's low
; byte is $00 (then Q2 may be one less) or $FF (one more); there the multiplier decides,
; (candidate)·md < 2^48 (it cannot be equal) keeping the larger candidate.
        ldy     #$80
        lda     md
        ora     md+1
        bne     L_div
        cpy     md+2
        bne     L_div
        ldx     #0                      ; md = 2^23: mid = 2^23, c1 = 260 − eid = ed + 6
        stx     MULB+1
        sty     MULB+2
        lda     #3                      ; 9 − c1
        sec
        sbc     ed
        bra     L_mid
L_div:   ldx     #0                      ; A = 2^24, B = md
        stx     MULA
        stx     MULA+1
        stx     MULA+2
        inx
        stx     MULA+3
        ldq     md
        stq     MULB
:       bit     MATH_BUSY               ; DIVBUSY (bit 7)
        bmi     :-
        ldq     MATH_DIVOUT+1           ; F >> 8 and the integer part 1: the candidate Q2
        stq     am
        lda     MATH_DIVOUT
        beq     L_dchk                  ; Q2 or one less
        cmp     #$FF
        bne     L_dok
        ldq     am                      ; one more or Q2
        inq
        stq     am
L_dchk: ldq     am                      ; (MULB is md)
        stq     MULA
        lda     MULO+6                  ; (candidate)·md < 2^48: it stands
        beq     L_dok
        ldq     am
        deq
        stq     am
L_dok:  ldq     am                      ; mid = (Q2 + 1) >> 1 (Q2 + 1 < 2^25)
        inq
        lsrq
        sty     MULB+2
        stx     MULB+1
        tax
        lda     #2                      ; c1 = 260 − eid = ed + 7: 9 − c1
        sec
        sbc     ed
L_mid:   stx     MULB
        ldx     #0
        stx     MULB+3
        stx     MULA+3
        sta     pc1                     ; o = 9 − s = ex + 9 − c1 below
        dec     a
        sta     pcn

; The quants. P = mx·mid (48 bits, bytes P0-P5), |x·id| = P/2^S, S = 300 − ex − eid = 40 + s,
; s = c1 − ex >= 0 (|x| <= amax keeps |x·id| below 128). The definition rounds P to 24 bits
; (RNE: half an ulp h = 2^23 for P >= 2^47, else 2^22), then half away from zero; together
; q = floor((P + h + 2^(S−1))/2^S), ties included (the first rounding's tie goes to the even
; n + 1/2). With T = P >> 24 and c the carry of (P mod 2^24) + h, q = (T + c + 2^(15+s)) >>
; (16+s): c can only change q when P3 = $FF (L_rare); otherwise q = P5 + P4's bit 7 for s = 0,
; and P5 >> s plus the last bit shifted out for s > 0. s >= 10 (zero and subnormal x) is q = 0.
; The s shifts run in a row of 9 LSRs entered by a BRA whose operand is o = 9 − s (written per
; element): o lies in 0..9 exactly when s does (s <= c1 < 246 wraps o past 9 otherwise). P4's
; bit 7 goes into C first, so s = 0 (no LSR) rounds with it and s > 0 with P5's bit s − 1.
; Elements 31 down to 0; the multiplier's registers as base-page operands (B = $D7: STA 3 cycles
; for 4, LDA 4 for 5, as in softgemv65.s's isum; the loop touches no zero-page variable, L_rare
; reaches dtmp as absolute), B back to 0 on the way out.
        ldx     #124
        ldy     #31
        lda     #>MULA
        tab
L_el:
        xref    2, pb2
        lda     $FFFF,x
        taz                             ; (byte 2 for MULA+2 below)
        asl     a
        xref    3, pb3
        lda     $FFFF,x
        rol     a                       ; ex; C: the sign, which picks the loop's copy
        bcs     L_en
pc1     = * + 1
        adc     #0                      ; + 9 − c1 (C = 0): o = 9 − s
        cmp     #10
        bcs     L_zero                  ; s >= 10
        sta     brop
        xref    0, pb0
        lda     $FFFF,x
        sta     <MULA
        xref    1, pb1
        lda     $FFFF,x
        sta     <(MULA+1)
        tza
        ora     #$80
        sta     <(MULA+2)
        lda     <(MULO+3)
        inc     a                       ; P3 = $FF
        beq     L_rp
        lda     <(MULO+4)
        asl     a                       ; C: P4's bit 7
        lda     <(MULO+5)
brop    = * + 1
        bra     L_c9                    ; o: s LSRs
L_c9:   lsr     a
        lsr     a
        lsr     a
        lsr     a
        lsr     a
        lsr     a
        lsr     a
        lsr     a
        lsr     a
        adc     #0
L_st:
pq      = * + 1
        sta     $FFFF,y
        dex
        dex
        dex
        dex
        dey
        bpl     L_el
        bra     L_out
L_zero: lda     #0
        bra     L_st
L_rp:   ldz     a:brop                  ; P3 = $FF: L_rare, o in Z
        jsr     L_rare
        bra     L_st
L_rn:   ldz     a:bropn
        jsr     L_rare
        bra     L_ngn

; A negative x: the same steps (o from pcn = pc1 − 1, as the BCS leaves C = 1), then NEG.
L_en:
pcn     = * + 1
        adc     #0                      ; + 9 − c1 − 1 + C: o = 9 − s
        cmp     #10
        bcs     L_zero
        sta     bropn
        xref    0, pn0
        lda     $FFFF,x
        sta     <MULA
        xref    1, pn1
        lda     $FFFF,x
        sta     <(MULA+1)
        tza
        ora     #$80
        sta     <(MULA+2)
        lda     <(MULO+3)
        inc     a
        beq     L_rn
        lda     <(MULO+4)
        asl     a
        lda     <(MULO+5)
bropn   = * + 1
        bra     L_n9
L_n9:   lsr     a
        lsr     a
        lsr     a
        lsr     a
        lsr     a
        lsr     a
        lsr     a
        lsr     a
        lsr     a
        adc     #0
L_ngn:  neg
pqn     = * + 1
        sta     $FFFF,y
        dex
        dex
        dex
        dex
        dey
        lbpl    L_el                    ; (a taken 16-bit branch: 4 cycles, as an 8-bit one)
L_out:  ldz     #0
        lda     #0
        tab
        tax
        rts

; P3 = $FF, Z = o = 9 − s: |q| in A. c = 1 when P2 >= $80 (P >= 2^47) or >= $C0 (below) may
; carry into T; q = (T + c) >> (16 + s) plus the last bit shifted out.
L_rare: tza
        eor     #$FF
        clc
        adc     #10                     ; s = 9 − o
        sta     a:dtmp+1
        lda     <(MULO+5)
        bmi     :+
        lda     <(MULO+2)
        cmp     #$C0
        bra     L_rc
:       lda     <(MULO+2)
        cmp     #$80                    ; C = c
L_rc:   lda     <(MULO+4)               ; T + c from byte 4 up (byte 3 only carries)
        adc     #0
        sta     a:dtmp
        lda     <(MULO+5)
        adc     #0                      ; C = T's bit 24
        dec     a:dtmp+1                ; (DEC, ROR, LSR, PHA, PLA keep C where it matters)
        bmi     L_r0                    ; s = 0
        ror     a                       ; (C:A) >> 1, then s − 1 LSRs
L_rs:   dec     a:dtmp+1
        bmi     L_rd
        lsr     a
        bra     L_rs
L_rd:   adc     #0
        rts
L_r0:   bcs     L_rbad                  ; s = 0 and q >= 256: cannot happen (|x·id| < 128)
        pha
        lda     a:dtmp
        asl     a
        pla
        adc     #0
        rts
L_rbad: pla                             ; (L_rare's return address)
        pla
        jmp     fb2

; amax = 0: every quant and d are 0.
zblock: lda     _sgq_qb
        sta     xq
        lda     _sgq_qb+1
        sta     xq+1
        lda     #0
        ldy     #31
:       sta     (xq),y
        dey
        bpl     :-
        ldy     #3
:       sta     (dp),y
        dey
        bpl     :-
        tax
        ldz     #0
        rts
fb2:    lda     #0                      ; (the base page back)
        tab
        jmp     fb

        .bss
ed:     .res    1                       ; d's biased exponent

        .rodata
; the x operands to patch, and the byte of x each reads
pats:   .word   pb0, pa2, pa3, pb1, pb2, pb3, pa6, pa7, pn0, pn1
        .word   pc12, pc11, pc10, pm10, pm11, pm12, pm13
        .word   pc02, pc01, pc00, pm00, pm01, pm02, pm03
patk:   .byte   0, 2, 3, 1, 2, 3, 6, 7, 0, 1
        .byte   6, 5, 4, 4, 5, 6, 7
        .byte   2, 1, 0, 0, 1, 2, 3
NPAT    = 24

; ---------------------------------------------------------------------------------------------
; void sgq_gemv(uint8_t fmt, uint8_t flags, uint32_t w, uint32_t x, uint32_t z, uint32_t cols,
; uint32_t rows, uint32_t rb): softgemv.c's gemv_q on the 45GS02, the same steps (its C is the PC
; build's and -DSC_C_GEMV's). Rows in chunks of the layout's gq_nr, columns in chunks of gq_nc
; (the whole input up to SC_GEMV_COLS, else SC_GEMV_WCOLS at a time), each column chunk quantised
; (quant) for the first row chunk, or for every one when the input is wider than a chunk,
; and its block columns by sgq_cols; the row chunk's sums stored by store_chunk (C). The
; layout's numbers come from softgemv.c (sgq_lay), so -D sizes stay defined in one place. The
; quantised input is kept: after a GEMV whose input was quantised once and whose output bytes
; miss x, sc_keep (softcore_int.h) is set with x and cols here; a GEMV of the same x
; and cols while it is still set takes the quants and scales in the buffer as they are
; (stories260K's wk and wv after wq, w3 after w1). Called as void sgq_gemv(void) from sg_gemv, whose
; C stack frame holds its arguments alone (rows at (sp),0 .. fmt at 21), which this reads and
; leaves; rb in sgq_rb.
        .import         _sc_keep, _sc_poll, _sgq_cblock, _store_chunk, _sgq_lay, _sgq_cols
        .import         _sgq_fmt, _sgq_rb, _sgq_nr, _sgq_first, _sgq_last, _sgq_pc
        .import         _sgq_q, _sgq_nb, _sgq_d, _sgq_acc
        .import         pusheax, pusha, tosumuleax
        .p02                            ; (the 4510's ca65 takes sp for its stack register)
        .importzp       sp
        .p4510
        .importzp       sreg
        .export         _sgq_gemv, _sc_mul_sat
        .include        "fn_tables.inc"         ; GEMV_F16OUT

LAY_COLS = _sgq_lay                     ; SC_GEMV_COLS
LAY_WCOLS = _sgq_lay + 2                ; SC_GEMV_WCOLS
LAY_QA  = _sgq_lay + 4                  ; sizeof sc_w.gq.qa
LAY_Q   = _sgq_lay + 6                  ; sc_w.gq.qa: the quants, then the row sums
LAY_D   = _sgq_lay + 8                  ; sc_w.gq.d: the scales
LAY_ROWS = _sgq_lay + 10                ; SC_GEMV_ROWS

        .rodata
k128:   .dword  128

        .bss
ga:     .res    22                      ; the arguments as the C stack had them
G_ROWS  = ga
G_COLS  = ga + 4
G_Z     = ga + 8
G_X     = ga + 12
G_W     = ga + 16                       ; (row r0's first block: moves on by the row chunks)
kx:     .res    4                       ; the kept quants' x and cols
kc:     .res    4
rleft:  .res    4                       ; rows left
r0:     .res    4                       ; the row chunk's first row
cleft:  .res    4                       ; columns left
xp:     .res    4                       ; the column chunk's x
gt:     .res    4                       ; scratch
nc:     .res    4                       ; this column chunk's columns (< 2^16)
nrq:    .res    4                       ; this row chunk's rows (< 256)
gnc:    .res    2                       ; gq_nc
gnr:    .res    1                       ; gq_nr
gfl:    .res    1                       ; bit 7: quantised for every row chunk; bit 6: kept
first:  .res    1                       ; nonzero for the first row chunk
gnb:    .res    1                       ; input blocks left (quant)

        .code
_sgq_gemv:
        ldy     #21
        .p02
:       lda     (sp),y
        .p4510
        sta     ga,y
        dey
        bpl     :-
        lda     ga+21
        sta     _sgq_fmt
        ldx     #0                      ; wide: cols > SC_GEMV_COLS
        lda     G_COLS+2
        ora     G_COLS+3
        bne     @wide
        lda     LAY_COLS
        cmp     G_COLS
        lda     LAY_COLS+1
        sbc     G_COLS+1
        bcs     @fits
@wide:  ldx     #$80
@fits:  stx     gfl
        lda     _sc_keep                ; kept: sc_keep and the same x and cols
        beq     @nk
        ldq     G_X
        cmpq    kx
        bne     @nk
        ldq     G_COLS
        cmpq    kc
        bne     @nk
        lda     #$40
        tsb     gfl
@nk:    lda     #0
        sta     _sc_keep
        sta     first                   ; (then 1)
        tax                             ; r0 = 0, the high bytes of nc and nr 0
        tay
        taz
        stq     r0
        stq     nc
        stq     nrq
        inc     first
; GQ_LAYOUT: gq_nc, the sums after the quants, gq_nr = min((sizeof qa − gq_nc) / 4, SC_GEMV_ROWS)
        lda     G_COLS
        ldx     G_COLS+1
        bit     gfl
        bpl     :+
        lda     LAY_WCOLS
        ldx     LAY_WCOLS+1
:       sta     gnc
        stx     gnc+1
        clc
        adc     LAY_Q
        sta     _sgq_acc
        txa
        adc     LAY_Q+1
        sta     _sgq_acc+1
        sec
        lda     LAY_QA
        sbc     gnc
        sta     gt
        lda     LAY_QA+1
        sbc     gnc+1
        lsr     a
        ror     gt
        lsr     a
        ror     gt
        cmp     #0
        bne     @cap
        lda     gt
        cmp     LAY_ROWS
        bcc     :+
@cap:   lda     LAY_ROWS
:       sta     gnr
        lda     LAY_D
        sta     _sgq_d
        lda     LAY_D+1
        sta     _sgq_d+1
        ldq     G_ROWS
        stq     rleft
@rows:  ldq     rleft                   ; the row chunks
        bne     :+
        jmp     @done
:       ldz     #0
        lda     gnr                     ; nr = min(gq_nr, rows left)
        sta     nrq
        lda     rleft+1
        ora     rleft+2
        ora     rleft+3
        bne     :+
        lda     rleft
        cmp     nrq
        bcs     :+
        sta     nrq
:       lda     nrq
        sta     _sgq_nr
        ldq     G_COLS                  ; no columns: the sums are +0 (all zero bits)
        bne     @sums
        lda     _sgq_acc
        sta     xq
        lda     _sgq_acc+1
        sta     xq+1
        ldx     nrq
@z4:    ldy     #3
        lda     #0
:       sta     (xq),y
        dey
        bpl     :-
        lda     xq
        clc
        adc     #4
        sta     xq
        bcc     :+
        inc     xq+1
:       dex
        bne     @z4
@sums:  lda     #1                      ; the sums are +0, their words not yet written
        sta     _sgq_first
        ldq     G_W                     ; row r0's first block; sgq_cols moves it on
        stq     _sgq_pc
        ldq     G_COLS
        stq     cleft
        ldq     G_X
        stq     xp
@cols:  ldq     cleft                   ; the column chunks
        bne     :+
        jmp     @cdone
:       ldz     #0
        jsr     _sc_poll                ; RUN/STOP (softcore_int.h): out, sc_keep clear
        tax
        beq     :+
        rts
:       lda     gnc                     ; nc = gq_nc, or what is left when it ends the rows
        sta     nc
        lda     gnc+1
        sta     nc+1
        lda     cleft+2
        ora     cleft+3
        bne     @last
        lda     LAY_COLS
        cmp     cleft
        lda     LAY_COLS+1
        sbc     cleft+1
        bcc     @last
        lda     nc
        cmp     cleft
        lda     nc+1
        sbc     cleft+1
        bcc     @last
        lda     cleft
        sta     nc
        lda     cleft+1
        sta     nc+1
        inx
@last:  stx     _sgq_last               ; (1: the sums leave as singles)
        bit     gfl
        bmi     @quant
        bvs     @qdone                  ; the quants kept
        lda     first
        beq     @qdone
@quant: jsr     quant
@qdone: lda     LAY_Q
        sta     _sgq_q
        lda     LAY_Q+1
        sta     _sgq_q+1
        ldq     nc                      ; nc / 32 (nc <= SC_GEMV_COLS)
        lsrq
        lsrq
        lsrq
        lsrq
        lsrq
        sta     _sgq_nb
        ldz     #0
        jsr     _sgq_cols
        ldq     cleft                   ; cleft −= nc, xp += 4·nc
        sec
        sbcq    nc
        stq     cleft
        ldq     nc
        aslq
        aslq
        clc
        adcq    xp
        stq     xp
        jmp     @cols
@cdone: ldz     #0                      ; store_chunk(flags, z, r0, nr)
        lda     ga+20
        jsr     pusha
        ldx     #G_Z - ga
        jsr     push4
        ldx     #r0 - ga
        jsr     push4
        lda     nrq
        jsr     _store_chunk
        lda     nrq                     ; w += nr·rb (the multiplier: spec/mega65.md §M9; the
        ldx     #0                      ; weights lie in memory, so it fits 32 bits)
        ldy     #0
        ldz     #0
        stq     MULA
        ldq     _sgq_rb
        stq     MULB
        ldq     MULO
        clc
        adcq    G_W
        stq     G_W
        ldq     rleft                   ; rleft −= nr, r0 += nr
        sec
        sbcq    nrq
        stq     rleft
        ldq     r0
        clc
        adcq    nrq
        stq     r0
        ldz     #0
        stz     first
        jmp     @rows
; kept for the next GEMV when the input was quantised once, there were rows, and y's bytes
; [z, z + rows·2 or 4) miss x's [x, x + 4·cols) (both lie in memory: checked, no overflow)
@done:  bit     gfl
        bmi     @ret
        ldq     G_ROWS
        beq     @ret
        ldq     G_COLS
        aslq
        aslq
        clc
        adcq    G_X
        stq     gt
        ldq     G_Z
        cmpq    gt
        bcs     @keep                   ; z >= x + 4·cols
        ldq     G_ROWS
        aslq
        stq     gt
        lda     ga+20
        and     #GEMV_F16OUT
        bne     :+
        aslqm   gt
:       ldq     gt
        clc
        adcq    G_Z
        stq     gt
        ldq     G_X
        cmpq    gt
        bcc     @ret                    ; x < z + y's bytes: they overlap
@keep:  ldq     G_X
        stq     kx
        ldq     G_COLS
        stq     kc
        lda     #1
        sta     _sc_keep
@ret:   ldz     #0
        rts

; The column chunk's nc/32 input blocks from xp (softgemv.c's quantise): each block's 128 bytes
; by one inline DMA job (as softgemv65.s's row loop: the list follows the STA and the CPU goes on
; after it; gs4510.vhdl, spec §M3.1) into sgq_x, then sgq_qblock, or the C's sgq_cblock for what
; it leaves; the quants to the layout's qa + 32·b, the scales to its d + 4·b.
quant:  lda     LAY_Q
        sta     _sgq_qb
        lda     LAY_Q+1
        sta     _sgq_qb+1
        lda     LAY_D
        sta     _sgq_dp
        lda     LAY_D+1
        sta     _sgq_dp+1
        lda     _sgq_x                  ; the buffer's chip-RAM address: sc_w's, in the BSS,
        sta     qj_dst                  ; which is bank 0 as the CPU sees it (softcore_window.inc)
        lda     _sgq_x+1
        sta     qj_dst+1
        ldq     xp
        stq     gt                      ; the block's SSNAIL address
        lda     nc+1                    ; nc / 32 blocks
        sta     gnb
        lda     nc
        ldx     #5
:       lsr     gnb
        ror     a
        dex
        bne     :-
        sta     gnb
qblk:   lda     gt                      ; the job's source: bits 0-15, bank 16-19, MB 20-27
        sta     qj_src
        lda     gt+1
        sta     qj_src+1
        lda     gt+2
        and     #$0F
        sta     qj_sbk
        lda     gt+3
        asl     a
        asl     a
        asl     a
        asl     a
        sta     qj_smb
        lda     gt+2
        lsr     a
        lsr     a
        lsr     a
        lsr     a
        ora     qj_smb
        sta     qj_smb
        sta     DMA_INLINE              ; (any value) the job; the CPU goes on after its list
        .byte   DMA_OPT_F018A, DMA_OPT_CROSS_MB, DMA_OPT_SRC_MB
qj_smb: .byte   0
        .byte   DMA_OPT_END
        .byte   DMA_COPY
        .word   128
qj_src: .word   0
qj_sbk: .byte   0
qj_dst: .word   0
qj_dbk: .byte   0
        .word   0                       ; modulo
        jsr     _sgq_qblock
        tax
        beq     :+
        jsr     _sgq_cblock
:       ldz     #0
        ldq     gt                      ; the next block: x + 128, qb + 32, dp + 4
        clc
        adcq    k128
        stq     gt
        clc
        lda     _sgq_qb
        adc     #32
        sta     _sgq_qb
        bcc     :+
        inc     _sgq_qb+1
:       clc
        lda     _sgq_dp
        adc     #4
        sta     _sgq_dp
        bcc     :+
        inc     _sgq_dp+1
:       ldz     #0
        dec     gnb
        bne     qblk
        rts

; pusheax of the 4 bytes at ga + X (Z = 0)
push4:  lda     ga+2,x
        sta     sreg
        lda     ga+3,x
        sta     sreg+1
        lda     ga,x
        pha
        lda     ga+1,x
        tax
        pla
        jmp     pusheax

; uint32_t sc_mul_sat(uint32_t a, uint32_t b) (softcore_int.h; softcore.c has the C for the PC and
; -DSC_C_GEMV): a·b by the multiplier's 64-bit product (docs/spec/mega65.md §M9), SC_HUGE when its
; high half is not 0. b in A/X/sreg, a on the C stack, which this removes.
_sc_mul_sat:
        jsr     tosumuleax              ; lmul65.s: a·b's low half in A/X/sreg, a popped
        ldy     MULO+4                  ; the high half (MULTOUT is still the product)
        bne     @huge
        ldy     MULO+5
        bne     @huge
        ldy     MULO+6
        bne     @huge
        ldy     MULO+7
        bne     @huge
        rts
@huge:  lda     #$FF
        tax
        sta     sreg
        sta     sreg+1
        ldz     #0
        rts
