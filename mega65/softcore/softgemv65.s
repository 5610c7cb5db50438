; softgemv65.s: the Q8_0/Q4_0 GEMV hot path of softgemv.c on the 45GS02 (cc65 builds; the C in
; softgemv.c stays the definition, used on the PC and with -DSC_C_GEMV). One call, sgq_block, does
; one weight block column: block b of rows r0.. r0+nr-1 against the quantised input block b, each
; row's term added to its running sum in hardware numerics (docs/spec/numerics.md §5.3):
;     acc_r = single(acc_r + single(single(isum)·single(dw·dx)))
; with the same bits as softgemv.c's C loop. Per row:
;
; 1. DMA: the row's 34- or 18-byte block from attic RAM (one inline job of one entry, 2 cycles a
;    byte) straight into the code, 12 bytes a byte (rowloop): dw into the bytes before q8go, the
;    weights into the isum code's immediates. The job's source moves on by the row stride with a
;    16-bit add (the row loop, after the job); its bank and megabyte only on a carry (or every row
;    for a stride of 64 KB or more).
; 2. isum, exact, with the hardware multiplier (MULTINA $D770, MULTINB $D774, MULTOUT $D778;
;    "64-bit unsigned product A×B", spec/mega65.md §M9, ready one cycle after a write). Two
;    products per multiplication: A = c0 + c1·2^24 (two weights), B = b1 + b0·2^24 (two |x|),
;    A·B = c0·b1 + (c0·b0 + c1·b1)·2^24 + c1·b0·2^48; c ≤ 255 and b ≤ 128, so c0·b1 < 2^16
;    leaves byte 2 zero and the wanted sum c0·b0 + c1·b1 (< 2^16) sits in bytes 3-4. ADCQ $D77A
;    adds bytes 2-5 to Q = A:X:Y:Z: X:Y:Z sums the block (< 2^24, so no carry ever leaves it) and
;    A gains 0, so A stays free for the weights. Weights and x are signed; the fields must not be.
;    Per column, c = w + 128 (w XOR $80) where x >= 0 and c = 127 - w (w XOR $7F) where x < 0,
;    and b = |x|; then c·b = w·x + 128·|x| or w·x + 127·|x|, and isum = Σ c·b − corr with
;    corr = 128·Σ|x| − Σ_{x<0} |x|, a constant of the input block. Q4_0 likewise with nibbles:
;    c = n or 15 − n (n XOR $0F), corr = 8·Σ|x| − Σ_{x<0} |x|. The masks and |x| are patched
;    into the unrolled code as immediates once per block column (sgq_block's first step). X:Y:Z
;    starts at -corr, so the sum ends as isum. The row's job and its isum run with the base page
;    at $D7 (TAB): the DMA trigger, the multiplier's inputs and ADCQ of its output are base-page
;    accesses (STA 3 cycles for 4, ADCQ 11 for 12 in the 40.5 MHz table); gs4510.vhdl resolves a
;    base-page address through the memory map like any other (M_nnrr, memory_access_resolve_address),
;    as xemu does (cpu65.c: ZP_HI | operand through the read callback). No zero-page variable is
;    touched meanwhile, and the caller's B is put back after the term's second product.
; 3. The term, fast: |isum|, F16 dw and the F16-rounded dx (11-bit significands) give the exact
;    product P = (|isum|·2^(8k) · mw) × mx·2^(2+lz) in [2^37, 2^40) (an |isum| of three bytes:
;    [2^45, 2^48)) from two multiplications, rounded once to 24 bits (RNE; the product's low
;    byte is read for the sticky only on a tie, a three-byte |isum|'s two jammed into the guard
;    byte) — single(isum)·single(dw·dx) rounded, as dw·dx is exact. Then the single addition to
;    acc with 8 guard bits, the product still in X:Y:Z, the smaller operand's lost bits jammed
;    into bit 0, rounded to nearest even: product-larger, acc-larger and equal exponents are
;    separate code, shifts by 1-7 through a patched BRA into a chain of LSRQs (the zero guard
;    byte loses nothing), 8 and more by whole bytes from a buffer with zeros above. The sums wait
;    between block columns as W (below, at add). isum 0 or dw ±0 make the product ±0 (acc as it
;    is); anything unusual — dw or dx not a normal F16 (subnormal, inf, NaN; dx zero), acc not
;    finite or subnormal, a result out of range — goes to sgq_slow (C, softfloat: the definition
;    itself) for that term.
;
; A row runs as one pass without calls: the row loop's job (after acc_st), a 16-bit branch into
; q8go/q4pre, the isum code on into the term, the term's rounding into the addition or the
; first column's store, and acc_st on into the next row; the ways that leave acc as it is, or
; store it otherwise, jump to next_acc.
;
; Q8_0 row chunks of exactly two block columns that are their rows' all (64-column matrices) run
; row by row with both blocks (rows2): one 68-byte job a row lays the first block into a second
; copy of the isum code (q8sumA, 408 bytes before q8sum) and the second into q8sum's; the first
; block's isum runs on into its own copy of the term (the scope TA: that column's immediates,
; dw and significand tables), whose product is stored as W (prod_w2); then the second block's
; isum and the usual term add to it, as a row chunk's last column does. The job's fixed part, the
; row loop and the source step are paid once a row instead of once a block.
;
; The block's attic address advances by the row stride; DMA addresses are physical, so the near
; buffers' chip-RAM address is theirs + SC_NEAR_DELTA (0 when the core runs unmapped in bank 0;
; the program's core window exports its own).

        .p4510
        .include        "quad.inc"
        .include        "fn_tables.inc"         ; WT_Q8_0, its block bytes
        .import         _sgq_slow
        .import         _sgq_q, _sgq_dx, _sgq_p, _sgq_rb, _sgq_nr, _sgq_fmt, _sgq_acc
        .import         _sgq_s, _sgq_dw, _sgq_accp, _sgq_first, _sgq_last
        .import         _sgq_nb, _sgq_d, _sgq_pc
        .import         SC_NEAR_DELTA
        .importzp       sreg
        .export         _sgq_cols


        .zeropage
qp:     .res    2                       ; the input block's int8 quants
accp:   .res    2                       ; this row's acc
sg:     .res    1                       ; the product's sign (bit 7)
sgx:    .res    1                       ; dx's sign (bit 7)
pe:     .res    1                       ; the product's biased exponent
pq:     .res    4                       ; the product: guard byte, 24-bit significand
sa:     .res    1                       ; acc's sign (bit 7)
lst:    .res    1                       ; bit 7: a row chunk's last block column (singles out)
tq:     .res    7                       ; the smaller, then 3 zero bytes (shr_far)
dd:     .res    1                       ; the exponent difference (shr_far)
eb:     .res    1                       ; the larger's exponent, then the result's
sb:     .res    1                       ; the larger's sign, then the result's
opp:    .res    1                       ; bit 7: the signs differ
t:      .res    1
t2:     .res    1
sump:   .res    2                       ; Σ_{x>=0} |x|
sumn:   .res    2                       ; Σ_{x<0} |x|
qp16:   .res    2                       ; qp + 16 (Q4_0's high nibbles)
dptr:   .res    2                       ; the block columns' scales (sgq_cols)
corr:   .res    3                       ; the block's correction (24-bit)
ex10:   .res    1                       ; dx's exponent + 10; 0 = dx is no normal F16
jamv:   .res    1                       ; 1 when the alignment dropped nonzero bits
ncol:   .res    1                       ; block columns left (sgq_cols)
lastc:  .res    1                       ; sgq_last of the chunk (sgq_cols)
two:    .res    1                       ; bit 7: sgq_block lays out a 2-block row (rows2)

        .bss
mxs_lo: .res    8                       ; dx's significand·2^(2+lz), lz = 0..7, 3 bytes
mxs_mid:.res    8
mxs_hi: .res    8
mxsA_lo:.res    8                       ; the same of a 2-block row's first block column (TA)
mxsA_mid:.res   8
mxsA_hi:.res    8
dx0:    .res    4                       ; a 2-block row's first block column's scale

; The term from the isum code on (TERM_FRONT) and its three-byte |isum| way (TERM_N2), as
; macros: the one block column's (after q8sum) and, in a .scope, the first block column's of a
; 2-block row (after q8sumA). TW_*: dw's bytes, TM_*: the significand tables, T_ADD the way on
; with the product, T_TZ a zero product's, T_SLOW the definition's, T_WIDE (if given) that of
; every |isum| of three bytes (>= 2^16: TERM_N2 and the full negation left out).
.macro  TERM_FRONT TW_LO, TW_HI, TM_LO, TM_MID, TM_HI, T_ADD, T_TZ, T_SLOW, T_WIDE
                                        ; X:Y:Z = isum + 2^23, the bias kept: Z = $80 for the usual
                                        ; positive isum (0-65,535), $7F for the usual negative one
term:   lda     #0                      ; MULB = mw, the F16 significand (MULB+2 is 0 from the
        sta     <(MULA+3)               ; row loop; +3 and MULA+3 held the isum's last pair)
                                        ; (sgq_block writes the first 3 bytes back: $A9, 0, $85)
        sta     <(MULB+3)
        lda     TW_LO                   ; (MULB+1 after the tests, from Y)
        sta     <MULB
term_n: cpz     #$80                    ; n = |isum| (< 2^19); a negative isum: term_neg
        bcc     term_neg
        ; first product n·mw·2^(8k) (< 2^30) with n's top byte moved up to byte 1 or 2, then
        ; P = that · mx·2^(2+lz): P in [2^37, 2^40) ([2^45, 2^48) for a top byte 2), the
        ; exact product of single(isum) and dw·dx; pe −= 8 per byte moved up, − lz
        bne     tn2_j
        tya
        beq     tn0_j
        stx     <MULA                   ; n of two bytes: MULA = n (MULA+2 is 0 from the row loop)
        sty     <(MULA+1)
        tax
term_nw:                                ; dw's high byte once, into Y: the product's sign (the
        ldy     TW_HI                   ; isum's is + here), mw's high byte and the exponent
        tya
tsg:    eor     #0                      ; (patched: dx's sign)
        and     #$80
        sta     a:sg
        tya
term_nwy:                               ; (term_neg joins here, the sign stored, A = Y = dw's
        and     #3                      ; high byte)
        ora     #4
        sta     <(MULB+1)
term_n1:                                ; MULA, MULA+1 = n of two bytes, X = its top byte
        tya                             ; dw: F16, exponent bits 10-14 (pe_calc's steps inline)
        and     #$7C
        beq     n1_z                    ; zero or subnormal
        cmp     #$7C
        beq     n1_s                    ; inf or NaN
        lsr     a
        lsr     a
tex:    adc     #0                      ; (patched: ex10 − 8) (C = 0) eh + ex + 2: 116-174
term_lz8:
        sbc     lz8,x                   ; (no borrow; C = 0 takes one more)
        sta     a:pe
        ldq     <::MULO                 ; MULB = the first product (:: the global MULO, also inside TA)
        stq     <MULB
        ldx     <(MULA+1)               ; n's top byte again (LDQ took X)
        ldy     lz8,x
        lda     TM_LO,y                 ; MULA = mx·2^(2+lz) (MULA+3 is still 0): P in [2^37,
        sta     <MULA                   ; 2^40) (term_n2's three bytes of n: 2^8 higher)
        lda     TM_MID,y
        sta     <(MULA+1)
        lda     TM_HI,y
        sta     <(MULA+2)
bcall:  lda     #0                      ; (patched: the caller's base page)
        tab
        ldq     MULO+1                  ; A = bits 8-15, X:Y:Z = bits 16-39 (N: bit 39; LDQ and
bc_n:   bmi     @t47                    ; ASLQ set N from bit 31, spec §M1.6); pe is one less
        aslq                            ; than for a top bit 47: bit 46, the usual top (the
        bmi     @top                    ; three significands' product lies in [1, 8), most often
        aslq                            ; in [2, 4)), needs no step on pe
        dec     pe
        bra     @top
@t47:   inc     pe
@top:   cmp     #$80                    ; to nearest even: round bit A.7, sticky A.6-0 and the
        bcc     r_done                  ; product's byte 0, read only on a tie (r_tie)
        beq     r_tie
r_up:   inx
        bne     r_done
        iny
        bne     r_done
        inz
        bne     r_done
        jmp     r_carry
r_done:                                 ; the product: X:Y:Z (Z.7 set), pe, sg
add_jmp:jmp     T_ADD                   ; (patched: prod_only when the sums are +0)
; the term's rare ways, within its branches' reach
tn2_j:  jmp     term_n2b
tn0_j:  jmp     term_n0
term_neg:
        cpz     #$7F
        bne     term_negf               ; isum <= −2^16
        txa
        neg                             ; n's low byte: −X
        sta     <MULA
        beq     tng_x0                  ; X = 0: n's high byte is −Y
        tya
        eor     #$FF                    ; X > 0: n's high byte is ~Y (the borrow taken)
        beq     tng_small               ; n below 2^8
        sta     <(MULA+1)
        tax
neg_nw: ldy     TW_HI                   ; dw's high byte once, into Y: the product's sign (the
        tya                             ; isum's is −), then on as the positive way
tsgn:   eor     #0                      ; (patched: dx's sign, inverted)
        and     #$80
        sta     a:sg
        tya
        jmp     term_nwy
n1_z:   jmp     dw_sub
n1_s:   jmp     term_slow
r_carry:ldz     #$80                    ; the rounding carried out of the significand
        inc     pe
        jmp     r_done
r_tie:  lda     MULO                    ; a tie: to even unless the product's byte 0 holds more
        bne     r_up
        txa
        lsr     a
        bcc     r_done
        bra     r_up
tng_x0: tya
        neg
        beq     tng_n16                 ; Y:X = 0: n = 2^16, of three bytes
        sta     <(MULA+1)
        tax
        bra     neg_nw
tng_n16:jsr     tsign
        ldz     #1                      ; Z:Y:X = 2^16 (X, Y 0)
        lda     #1
        jmp     term_n2
tng_small:
        jsr     tsign
        txa
        neg
        tax                             ; X = n (1-255), Z = 0
        ldz     #0
        jmp     term_n0x
; the product's sign on the term's rare ways, from the isum's bias (Z.7 set for an isum >= 0),
; before they change Z (A only)
tsign:  tza
        eor     TW_HI
tsgr:   eor     #0                      ; (patched: dx's sign, inverted)
        and     #$80
        sta     a:sg
        rts
.ifblank T_WIDE
term_negf:                              ; isum <= −2^16: the full negation (the bias off), n >= 2^16
        jsr     tsign
        tza
        eor     #$80
        taz
        txa
        eor     #$FF
        tax
        tya
        eor     #$FF
        tay
        tza
        eor     #$FF
        taz
        inx
        bne     :+
        iny
        bne     :+
        inz
:       tza
        jmp     term_n2
.else
term_negf:                              ; (|isum| >= 2^16 by the definition)
        jmp     T_WIDE
.endif
mw_hi:  lda     TW_HI                   ; MULB+1 = mw's high byte (the usual ways from Y)
        and     #3
        ora     #4
        sta     <(MULB+1)
        rts
; A = dw's exponent + dx's + 1 (eh + ex + 1: 115-173, one below the product's as bcall takes it), C = 0; dw zero, subnormal, inf or NaN: its
; ways (the return address dropped)
pe_calc:
        lda     TW_HI                   ; dw: F16, exponent bits 10-14
        and     #$7C
        beq     pe_z                    ; zero or subnormal
        cmp     #$7C
        beq     pe_s                    ; inf or NaN
        lsr     a
        lsr     a
tex2:   adc     #0                      ; (patched: ex10 − 9)
        rts
pe_z:   pla
        pla
        bra     dw_sub
pe_s:   pla
        pla
        bra     term_slow
term_dx:                                ; (term_call patched: dx is no normal F16) the definition
term_slow:
        jmp     T_SLOW                  ; (slow sets B itself)
dw_sub: lda     TW_HI                   ; dw's exponent 0: ±0 makes the product ±0 (isum and dx
        and     #3                      ; finite), as isum = 0 does; a subnormal dw: the definition
        ora     TW_LO
        bne     term_slow
term_zero:
        lda     bcall+1                 ; the caller's base page
        tab
tz_jmp: jmp     T_TZ                    ; (patched: rts_first when the sums are +0)
; A negative isum (Z = $F8-$FF): the usual one, above −2^16 (Z = $FF), is negated straight into
; MULA as n = 2^16 − Y:X, with Z = 0 left for the ways on; the rest by the full negation.
term_n0:                                ; n below 2^8 (the term's pe is 8 below its value)
        jsr     tsign
        ldz     #0                      ; (Z was the bias)
        txa
        bne     term_n0x
        jsr     pe_calc                 ; isum = 0: dw's ways first (inf or NaN: the C's NaN)
        bra     term_zero
term_n0x:
        jsr     mw_hi
        stz     <MULA                   ; (Z = 0) MULA = n·2^8
        stx     <(MULA+1)
        jsr     pe_calc                 ; (C = 0) − 8, then lz
        sbc     #7
        jmp     term_lz8
.endmacro
.macro  TERM_N2 TW_HI, TM_LO, TM_MID, TM_HI
term_n2b:                               ; (from term_n: the bias off; Z, A = n's top byte)
        jsr     tsign
        tza
        eor     #$80
        taz
term_n2:                                ; n of three bytes
        pha
        jsr     mw_hi
        pla
        stx     <MULA                   ; MULA = n
        sty     <(MULA+1)
        stz     <(MULA+2)
        tax
        jsr     pe_calc                 ; (C = 0)
        sbc     lz8,x                   ; (no borrow) − lz − 1
        adc     #8                      ; (C = 1) + 9
        sta     a:pe
        ldq     <MULO                   ; MULB = the first product
        stq     <MULB
        ldx     <(MULA+2)               ; n's top byte again (LDQ took X)
        ldy     lz8,x
        lda     TM_LO,y                 ; MULA = mx·2^(2+lz) (MULA+3 is still 0)
        sta     <MULA
        lda     TM_MID,y
        sta     <(MULA+1)
        lda     TM_HI,y
        sta     <(MULA+2)
        lda     bcall+1                 ; the caller's base page
        tab
        lda     MULO                    ; P in [2^45, 2^48): bytes 2-5 as the others' 1-4, bytes
        ora     MULO+1                  ; 0-1 jammed into the guard byte's bit 0 (sticky; the
        beq     :+                      ; normalisation's two steps keep it below the round bit)
        lda     #1
:       sta     t
        ldq     MULO+2
        ora     t
        cpz     #0                      ; N = Z.7 again
        jmp     bc_n
.endmacro
; sgq_q and dptr on to the next block column's quants (32 bytes) and scale (4 bytes)
.macro  NEXTCOL
        clc
        lda     _sgq_q
        adc     #32
        sta     _sgq_q
        bcc     :+
        inc     _sgq_q+1
:       clc
        lda     dptr
        adc     #4
        sta     dptr
        bcc     :+
        inc     dptr+1
:
.endmacro

        .code

; The first block column's term of a 2-block row (rows2): the one-column term's code again, with
; that column's dw (wloA, whiA), significands (mxsA_*) and ways on: the product stored as W, a zero
; product as +0 (the sums start at +0), the definition by slowA; then the second column (b1go).
; (Before the one-column term in the source: ca65 takes a name it meets in the scope as the
; scope's own only if no outer one of that name is known by then.)
        .scope  TA
        TERM_FRONT wloA, whiA, mxsA_lo, mxsA_mid, mxsA_hi, prod_w2, rts_first2, slowA, slowA
term_n2b = slowA                        ; (|isum| >= 2^16, about 7 standard deviations out in a
term_n2  = slowA                        ; model's rows: by the definition, 46 bytes fewer)
        .endscope

; void sgq_cols(void): sgq_nb block columns of a column chunk, one sgq_block each: the quants at
; sgq_q (32 a column), the scales at sgq_d (one f32 a column), row r0's first block at sgq_pc,
; which moves on by a block a column; sgq_first (the chunk's first column's sums are +0) and
; sgq_last (the chunk ends the rows: its last column stores singles) as flags of the chunk. The
; row stride sgq_rb goes into the row loop's source steps here, once for the chunk's columns.
_sgq_cols:
        lda     _sgq_rb                 ; the row stride's low 16 bits as immediates; a stride
        sta     rb0+1                   ; of 64 KB or more takes the far step every row
        lda     _sgq_rb+1
        sta     rb1+1
        ldx     #$B0                    ; BCS
        lda     _sgq_rb+2
        ora     _sgq_rb+3
        beq     :+
        ldx     #$80                    ; BRA
:       stx     rbh
        ldx     #$90                    ; a stride below 256 bytes: no carry out of the low byte
        ldy     #RBSKIP                 ; skips the high byte's step (BCC over it); else two TXA
        ora     _sgq_rb+1               ; (A is loaded next; X, Y and C stay), as fast as a
        beq     :+                      ; branch that is never taken would not be
        ldx     #$8A                    ; TXA
        ldy     #$8A
:       stx     rbc
        sty     rbc+1
        lda     _sgq_last
        sta     lastc
        lda     _sgq_nb
        sta     ncol
        lda     _sgq_d
        sta     dptr
        lda     _sgq_d+1
        sta     dptr+1
@col:   ldy     #3                      ; sgq_dx = the column's scale, sgq_p = sgq_pc
:       lda     (dptr),y
        sta     _sgq_dx,y
        lda     _sgq_pc,y
        sta     _sgq_p,y
        dey
        bpl     :-
        ldx     #0                      ; sgq_last: the chunk's last column of the rows' last chunk
        lda     ncol
        cmp     #1
        bne     :+
        ldx     lastc
:       stx     _sgq_last
        jsr     rows2                   ; (C = 0: both of a 2-block row chunk's columns done)
        bcc     :+
        jsr     _sgq_block
:       lda     #0
        sta     _sgq_first
        clc                             ; sgq_pc += the block's bytes (the job's count)
        lda     cnt
        adc     _sgq_pc
        sta     _sgq_pc
        bcc     :+
        inc     _sgq_pc+1
        bne     :+
        inc     _sgq_pc+2
        bne     :+
        inc     _sgq_pc+3
:       NEXTCOL                         ; the next column's quants and scale
        dec     ncol
        bne     @col
        rts

; A Q8_0 row chunk of exactly two block columns that is its rows' all (the sums start at +0 and
; end as singles), both scales normal F16: the rows one by one with both blocks. One 68-byte job a
; row lays the first block into q8sumA's code and the second into q8sum's (wloA on, 12 bytes a
; byte); the first column's isum goes on into its own term (TA, with the immediates set here), its
; product is stored as W, and the second column's isum and term run as a one-column row's of a
; chunk's last column (sgq_block with sgq_first 0, two set): acc = single(W + its product).
; No job, row loop or source step for the first column. Else C = 1, nothing changed.
rows2:  lda     ncol
        cmp     #2
        bne     @no
        lda     _sgq_fmt
        cmp     #WT_Q8_0
        bne     @no
        lda     _sgq_first
        beq     @no
        lda     lastc
        beq     @no
        jsr     dx_params               ; the first column's dx (sgq_dx)
        lda     ex10
        beq     @no
        lda     sgx                     ; its term's immediates, as sgq_block's
        sta     TA::tsg+1
        eor     #$80
        sta     TA::tsgn+1
        sta     TA::tsgr+1
        lda     ex10
        sec
        sbc     #9
        sta     TA::tex2+1
        inc     a
        sta     TA::tex+1
        ldx     #3 * 8 - 1              ; mxs_lo, _mid, _hi into mxsA_lo, _mid, _hi
:       lda     mxs_lo,x
        sta     mxsA_lo,x
        dex
        bpl     :-
        ldy     #7                      ; dx0 = its scale, sgq_dx = the second column's
        ldx     #3
:       lda     _sgq_dx,x
        sta     dx0,x
        lda     (dptr),y
        sta     _sgq_dx,x
        dey
        dex
        bpl     :-
        jsr     dx_params
        lda     ex10
        bne     :+
        jsr     dxswap                  ; (the second dx no normal F16: column by column)
@no:    sec
        rts
:       lda     _sgq_q                  ; the first column's quants into q8sumA's code
        sta     qp
        lda     _sgq_q+1
        sta     qp+1
        lda     #<(-408)
        ldy     #>(-408)
        jsr     p8mv
        jsr     patch8
        lda     #<408
        ldy     #>408
        jsr     p8mv
        sec                             ; X:Y:Z start at 2^23 − its corr
        lda     #0
        sbc     corr
        sta     ncxA+1
        lda     #0
        sbc     corr+1
        sta     ncyA+1
        lda     #0
        sbc     corr+2
        eor     #$80
        sta     nczA+1
        NEXTCOL                         ; the second column's quants (sgq_cols steps them once
        lda     #0                      ; more, and dptr)
        sta     _sgq_first              ; the second column adds to the first's sums
        lda     lastc
        sta     _sgq_last
        tba
        sta     TA::bcall+1             ; the caller's base page (sgq_block sets bcall's)
        lda     #$80
        sta     two
        jsr     _sgq_block
        lda     #0
        sta     two
        lda     #1                      ; (sgq_cols counts the one column left)
        sta     ncol
        clc
        rts

; patch8's six quant stores moved by Y:A bytes (−408: into q8sumA's code; 408: back)
p8mv:   sta     t
        sty     t2
        ldx     #10
@l:     lda     p8ops,x
        sta     sump
        lda     p8ops+1,x
        sta     sump+1
        ldy     #0
        clc
        lda     (sump),y
        adc     t
        sta     (sump),y
        iny
        lda     (sump),y
        adc     t2
        sta     (sump),y
        dex
        dex
        bpl     @l
        rts

; sgq_dx and dx0 swapped
dxswap: ldx     #3
:       lda     _sgq_dx,x
        ldy     dx0,x
        sta     dx0,x
        tya
        sta     _sgq_dx,x
        dex
        bpl     :-
        rts

; A 2-block row's first block column (TA's ways on): its product stored as W (the sums start at
; +0), or +0 for a zero product; then the second column's isum (q8go) and term.
rts_first2:
        ldy     #3
        lda     #0
:       sta     (accp),y
        dey
        bpl     :-
        bra     b1go
prod_w2:tza                             ; (pe is always 99-183)
        and     #$7F
        ora     sg
        taz
        lda     pe
        stqi    accp
b1go:   lda     #>MULA                  ; the isum code's base page and the fields' gaps, as the
        tab                             ; row loop leaves them
        lda     #0
        sta     <(MULA+1)
        sta     <(MULA+2)
        sta     <(MULB+1)
        sta     <(MULB+2)
        clc
        lbcc    q8go                    ; (a 16-bit branch, spec §M1.2: C = 0)

; the first block column's term in C (sgq_slow), as slow does the others' (and every term of
; an |isum| of three bytes there, as TA has no TERM_N2): its isum again from
; q8sumA's code (its immediates, the block), its dw, dx0, sums +0; then back to W and on.
slowA:  lda     #>MULA
        tab
        lda     #0
        sta     <(MULA+1)
        sta     <(MULA+2)
        sta     <(MULB+1)
        sta     <(MULB+2)
        lda     q8tailA                 ; (LBRA's first byte)
        pha
        lda     #$60                    ; RTS: the isum code returns here
        sta     q8tailA
        ldx     ncxA+1
        ldy     ncyA+1
        ldz     nczA+1
        clc
        jsr     q8sumA
        pla
        sta     q8tailA
        jsr     slow_s
        lda     wloA
        sta     _sgq_dw
        lda     whiA
        sta     _sgq_dw+1
        jsr     dxswap                  ; dx0, and the sums +0
        lda     #1
        sta     _sgq_first
        jsr     _sgq_slow
        lda     #0
        sta     _sgq_first
        jsr     dxswap
        jsr     f2w                     ; (not the last block column) back to W
        jmp     b1go

; sgq_block: sgq_fmt (WT_Q8_0 or WT_Q4_0), sgq_q (32 quants), sgq_dx (their scale,
; F16-rounded), sgq_p (row r0's block), sgq_rb (row stride, patched in by sgq_cols), sgq_nr
; (rows, >= 1), sgq_acc (their running sums, f32 each). sgq_p is used up (its bits 16-31 follow the rows). sgq_first nonzero:
; every running sum is +0 (a row chunk's first block column), so acc + the product is the
; product itself (+0 + p = p for every nonzero p; the product's rounding and range checks are
; the same) and acc + ±0 (isum = 0) is +0 (+0 + −0 = +0 to nearest): the term stores the
; product without loading acc, a zero isum stores +0, and sgq_slow takes +0 for acc, so the
; sums' words need not be cleared before.
_sgq_block:
        ldx     #<add                   ; the term's way on: the addition, or (sums +0) the
        ldy     #>add                   ; product stored as it is
        lda     #<isum_zero
        sta     tz_jmp+1
        lda     #>isum_zero
        sta     tz_jmp+2
        lda     _sgq_first
        beq     :+
        ldx     #<prod_w                ; (a single block column: singles out)
        ldy     #>prod_w
        lda     _sgq_last
        beq     @w
        ldx     #<prod_only
        ldy     #>prod_only
@w:
        lda     #<rts_first
        sta     tz_jmp+1
        lda     #>rts_first
        sta     tz_jmp+2
:       stx     add_jmp+1
        sty     add_jmp+2
        ldx     #$80                    ; the sums out as W (BRA pack_w), or (a row chunk's last
        lda     _sgq_last               ; block column) as singles (CMP #: on into pack_f)
        beq     :+
        ldx     #$C9
        lda     #$80
:       sta     lst
        stx     pk
        tba                             ; the caller's base page, put back after each isum
        sta     bcall+1
        lda     #0
        sta     pq                      ; the product's guard byte
        sta     tq+4
        sta     tq+5
        sta     tq+6
        lda     _sgq_q
        sta     qp
        lda     _sgq_q+1
        sta     qp+1
        lda     _sgq_acc
        sta     accp
        lda     _sgq_acc+1
        sta     accp+1
        jsr     set_accp
        lda     #0                      ; the rows end where accp reaches sgq_acc + 4·sgq_nr: its
        sta     t                       ; bytes into the row loop's compares
        lda     _sgq_nr
        asl     a
        rol     t
        asl     a
        rol     t
        clc
        adc     accp
        sta     ae_lo+1
        lda     t
        adc     accp+1
        sta     ae_hi+1
        jsr     dx_params
        lda     sgx                     ; dx's sign (inverted for a negative isum, and for the
        sta     tsg+1                   ; rare ways, which take it with the isum's bias: Z.7 set
        eor     #$80                    ; for isum >= 0) and exponent into the term's immediates
        sta     tsgn+1
        sta     tsgr+1
        lda     ex10                    ; (less 9: the common n of two bytes moves up by one, its
        sec                             ; way less 8, as it subtracts lz + 1; and one less, for
        sbc     #9                      ; the product's top bit is most often bit 46: bcall)
        sta     tex2+1
        inc     a
        sta     tex+1
        lda     ex10                    ; the isum code goes on into the term (LDA #0, STA zp), or
        beq     @dx                     ; (dx no normal F16: every term of the column by the C)
        ldx     #$A9                    ; to JMP term_dx in its place
        ldy     #0
        lda     #$85
        bra     :+
@dx:    ldx     #$4C
        ldy     #<term_dx
        lda     #>term_dx
:       stx     q8tail
        sty     q8tail+1
        sta     q8tail+2
        lda     _sgq_p                  ; row r0's block: the job's source
        sta     src
        lda     _sgq_p+1
        sta     src+1
        jsr     set_srchi
        lda     _sgq_fmt
        cmp     #WT_Q8_0
        bne     @q4
        jsr     patch8
        lda     #WT_Q8_0_BLOCK_BYTES    ; the job's count: the block
        ldx     #<(q8go - (isum_call + 2))  ; (a 16-bit branch's offset: from its address + 2)
        ldy     #>(q8go - (isum_call + 2))
        bit     two
        bpl     @fmt
        lda     #2 * WT_Q8_0_BLOCK_BYTES ; (rows2) both blocks, the first into q8sumA's code
        ldx     #<(q8goA - (isum_call + 2))
        ldy     #>(q8goA - (isum_call + 2))
        bra     @fmt
@q4:    jsr     patch4
        lda     #WT_Q4_0_BLOCK_BYTES
        ldx     #<(q4pre - (isum_call + 2))
        ldy     #>(q4pre - (isum_call + 2))
@fmt:   sta     cnt
        stx     isum_call+1
        sty     isum_call+2
        ldx     #<(wlo + SC_NEAR_DELTA) ; the job's destination
        ldy     #>(wlo + SC_NEAR_DELTA)
        bit     two
        bpl     :+
        ldx     #<(wloA + SC_NEAR_DELTA)
        ldy     #>(wloA + SC_NEAR_DELTA)
:       stx     dst
        sty     dst+1
        sec                             ; X:Y:Z start at 2^23 - corr, so the isum code leaves
                                        ; isum + 2^23 (never wraps: |isum| < 2^20)
        lda     #0
        sbc     corr
        sta     ncx+1
        sta     ncx4+1
        lda     #0
        sbc     corr+1
        sta     ncy+1
        sta     ncy4+1
        lda     #0
        sbc     corr+2
        eor     #$80
        sta     ncz+1
        sta     ncz4+1
        clc                             ; (the row loop steps the source with C = 0)
        jmp     rowloop

; The job's source one row on when its 16-bit add carried (or every row for a stride of 64 KB or
; more). Entered from the row loop with C the carry and B = $D7: absolute addresses and A only.
far_a:  lda     _sgq_p+2
        adc     _sgq_rb+2
        sta     _sgq_p+2
        lda     _sgq_p+3
        adc     _sgq_rb+3
        sta     _sgq_p+3
        jmp     set_srchi
; a job's source bank (address bits 16-19) and megabyte (20-27) from bits 16-31 of its address
; (from any base page: absolute addresses and A only)
.macro  SRCHI   hi, bk, mb
        lda     hi
        and     #$0F
        sta     bk
        lda     hi
        lsr     a
        lsr     a
        lsr     a
        lsr     a
        sta     a:t
        lda     hi+1
        asl     a
        asl     a
        asl     a
        asl     a
        ora     a:t
        sta     mb
        rts
.endmacro
set_srchi:
        SRCHI   _sgq_p+2, src_bk, src_mb

; accp into the operand of the LDA of acc's E (acc_st stores by STQ (accp))
set_accp:
        lda     accp
        sta     acc_e+1
        lda     accp+1
        sta     acc_e+2
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

Q8SIZE  = 24                            ; bytes of one pair's code (q8sum)
RBSKIP  = 10                            ; the source step's high-byte add and the far test (the row loop)
Q4SIZE  = 32                            ; bytes of one byte's code (q4sum)

; The quants (at qp) into the isum code and the correction's sums. Per quant: |x| (Q8_0 mask
; $80 for x >= 0, $7F for x < 0 in Z) stored by STA/STZ abs,X at the field's offset in pair k's
; code, X = k·Q8SIZE (Q4_0: byte k's, X = k·Q4SIZE); |x| added to sump (x >= 0) or sumn (x < 0).
; X passes 255 once: from there the stores' operands are a page on (their high bytes +1), and
; back at the end.

; Q8_0: pair k (columns 2k, 2k+1): mask of 2k at +1, of 2k+1 at +17, |x_2k| at +7, |x_2k+1| at +11
patch8: jsr     clear_sums
        tax                             ; (A = 0)
        tay
p8_pair:  lda     (qp),y                  ; column 2k
        bmi     p8_n0
        ldz     #$80
p8a:    sta     q8sum+7,x
        clc
        adc     sump
        sta     sump
        bcc     p8_m0
        inc     sump+1
        bra     p8_m0
p8_n0:    eor     #$FF
        inc     a                       ; -128 -> 128
        ldz     #$7F
p8b:    sta     q8sum+7,x
        clc
        adc     sumn
        sta     sumn
        bcc     p8_m0
        inc     sumn+1
p8_m0:
p8c:    stz     q8sum+1,x
        iny
        lda     (qp),y                  ; column 2k+1
        bmi     p8_n1
        ldz     #$80
p8d:    sta     q8sum+11,x
        clc
        adc     sump
        sta     sump
        bcc     p8_m1
        inc     sump+1
        bra     p8_m1
p8_n1:    eor     #$FF
        inc     a
        ldz     #$7F
p8e:    sta     q8sum+11,x
        clc
        adc     sumn
        sta     sumn
        bcc     p8_m1
        inc     sumn+1
p8_m1:
p8f:    stz     q8sum+17,x
        iny
        cpy     #32
        beq     p8_done
        txa
        clc
        adc     #Q8SIZE
        tax
        bcc     p8_pair
        inc     p8a+2                   ; X wrapped: the operands a page on
        inc     p8b+2
        inc     p8c+2
        inc     p8d+2
        inc     p8e+2
        inc     p8f+2
        bra     p8_pair
p8_done:  dec     p8a+2
        dec     p8b+2
        dec     p8c+2
        dec     p8d+2
        dec     p8e+2
        dec     p8f+2
        ldx     #7                      ; corr = 128·Σpos + 127·Σneg
        jmp     set_corr

; qp16 = qp + 16 (the second half's quants)
set_qp16:
        clc
        lda     qp
        adc     #16
        sta     qp16
        lda     qp+1
        adc     #0
        sta     qp16+1
        rts

; Q4_0: byte k (columns k: low nibble, k+16: high nibble): mask at +4 and +13, |x_k+16| at
; +21, |x_k| at +25
patch4: jsr     clear_sums
        tax                             ; (A = 0)
        tay
        jsr     set_qp16
p4_byte:  lda     (qp),y                  ; column k
        bmi     p4_n0
p4a:    sta     q4sum+25,x
        clc
        adc     sump
        sta     sump
        bcc     :+
        inc     sump+1
:       ldz     #0
        bra     p4_hi
p4_n0:    eor     #$FF
        inc     a
p4b:    sta     q4sum+25,x
        clc
        adc     sumn
        sta     sumn
        bcc     :+
        inc     sumn+1
:       ldz     #$0F
p4_hi:    lda     (qp16),y                ; column k + 16
        bmi     p4_n1
p4c:    sta     q4sum+21,x
        clc
        adc     sump
        sta     sump
        bcc     p4_st
        inc     sump+1
        bra     p4_st
p4_n1:    eor     #$FF
        inc     a
p4d:    sta     q4sum+21,x
        clc
        adc     sumn
        sta     sumn
        bcc     :+
        inc     sumn+1
:       tza
        ora     #$F0
        taz
p4_st:
p4e:    stz     q4sum+4,x
p4f:    stz     q4sum+13,x
        iny
        cpy     #16
        beq     p4_done
        txa
        clc
        adc     #Q4SIZE
        tax
        bcc     p4_byte
        inc     p4a+2                   ; X wrapped: the operands a page on
        inc     p4b+2
        inc     p4c+2
        inc     p4d+2
        inc     p4e+2
        inc     p4f+2
        bra     p4_byte
p4_done:  dec     p4a+2
        dec     p4b+2
        dec     p4c+2
        dec     p4d+2
        dec     p4e+2
        dec     p4f+2
        ldx     #3                      ; corr = 8·Σpos + 7·Σneg
        jmp     set_corr

clear_sums:
        lda     #0
        sta     sump
        sta     sump+1
        sta     sumn
        sta     sumn+1
        rts

; corr = ((Σpos + Σneg) << X) − Σneg, 24-bit (X = 7: the sum a byte up and back one bit)
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
        cpx     #7
        bne     @shl
        lda     corr+1
        lsr     a
        sta     corr+2
        lda     corr
        ror     a
        sta     corr+1
        lda     #0
        ror     a
        sta     corr
        bra     @sub
@shl:   asl     corr
        rol     corr+1
        rol     corr+2
        dex
        bne     @shl
@sub:   sec
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

; ---------------------------------------------------------------------------------------------
; The isum code, patched per block column (the immediates marked 0 here). Entered with B = the
; I/O page ($D7: the multiplier as base page), X:Y:Z = 2^23 − corr, C = 0 and the fields' gaps
; (MULA+1, +2, MULB+1, +2) zero; leaves Σ c·b − corr + 2^23 in X:Y:Z. The bias keeps the sum
; inside 24 bits (2^23 − 2^19 < it < 2^23 + 2^20), so no ADCQ carries out of Z and C stays 0:
; A, the pair's c_2k+1 (up to 255) when ADCQ adds byte 2 (0) to it, never carries into X.
; The job's 12-byte step puts w_2k and w_2k+1 12 bytes apart, so a pair's code is the mask's
; LDA # and EOR #w (column 2k), both |x| stores, then LDA #w and EOR # mask (column 2k+1).

.macro  Q8PAIR  k
        lda     #0                      ; +0: mask of column 2k
        eor     #0                      ; +2: w_2k (the job writes +3)
        sta     <MULA
        lda     #0                      ; +6: |x_2k| (pairs with MULA, byte 0)
        sta     <(MULB+3)
        lda     #0                      ; +10: |x_2k+1| (pairs with MULA+3)
        sta     <MULB
        lda     #0                      ; +14: w_2k+1 (the job writes +15)
        eor     #0                      ; +16: mask of column 2k+1
        sta     <(MULA+3)
        adcq    <(MULO+2)               ; +20
.endmacro

; Q8_0's row, from the row loop with B = $D7 after its job: the job's 12-byte step puts dw's
; bytes into the two LDA # here (wlo, whi, where the term reads them; 21 and 9 bytes before the
; first weight); the next row's step of the job's source runs around them (the list is read by
; now). Entered with C = 0 (the row loop's promise); LDA # keeps C.
; Q4_0's row: X:Y:Z = 2^23 − corr, the job's source one row on, then the isum
q4pre:                                  ; (C = 0, as q8go)
ncx4:   ldx     #0
ncy4:   ldy     #0
ncz4:   ldz     #0
.macro  Q4BYTE  k
        lda     q8sum+3+12*k            ; +0 (the job's step puts byte k there)
        eor     #0                      ; +4: the two nibbles' masks
        and     #$0F
        sta     <MULA                   ; column k
        lda     q8sum+3+12*k            ; +9 (a second load beats a temporary)
        eor     #0                      ; +13: the same masks
        lsr     a
        lsr     a
        lsr     a
        lsr     a
        sta     <(MULA+3)               ; column k+16
        lda     #0                      ; +21: |x_k+16| (pairs with MULA+3)
        sta     <MULB
        lda     #0                      ; +25: |x_k| (pairs with MULA)
        sta     <(MULB+3)
        adcq    <(MULO+2)               ; +28
.endmacro

q4sum:
.repeat 16, k
        Q4BYTE  k
.endrepeat
q4tail: jmp     term                    ; (as q8tail)
        .assert (* - q4sum) = 16 * Q4SIZE + 3, error, "Q4SIZE"

; A 2-block row (rows2): the job lays both blocks 12 bytes a byte from wloA on, the first into
; q8sumA's code below, the second 408 bytes on into q8sum's, as a one-block row's. The bytes
; around dw's are not run (the rows enter at q8goA, q8go and q4pre).
wloA:   .byte   0                       ; the first block's dw (the job writes both bytes)
        .res    11
whiA:   .byte   0
        .res    2
q8goA:                                  ; C = 0 here
ncxA:   ldx     #0                      ; Q = 2^23 − corr of the first block column (patched)
ncyA:   ldy     #0
nczA:   ldz     #0
q8sumA:
.repeat 16, k
        Q8PAIR  k
.endrepeat
q8tailA:lbra    TA::term                ; (a 16-bit branch, spec §M1.2; slowA puts an RTS here for a while)
wlo:    .byte   0                       ; dw's bytes as the job leaves them (both formats)
        .res    11
whi:    .byte   0
        .res    2
q8go:                                   ; C = 0 here
ncx:    ldx     #0                      ; Q = 2^23 − corr (patched)
ncy:    ldy     #0
ncz:    ldz     #0
q8sum:
.repeat 16, k
        Q8PAIR  k
.endrepeat
q8tail:                                 ; (sgq_block puts JMP term_dx here when dx is no normal F16;
                                        ; slow an RTS)
; Entered with B = $D7 (the multiplier's page, as the isum left it): the multiplier's inputs and
; output are base-page operands up to the second product; the caller's B is back (bcall) before
; the product is rounded, and on every way out before that. Zero-page variables meanwhile are
; written as absolute (a:).
        TERM_FRONT wlo, whi, mxs_lo, mxs_mid, mxs_hi, add, isum_zero, slow
        .assert (q8tail - q8sum) = 16 * Q8SIZE, error, "Q8SIZE"
        .assert whi = wlo + 12 && q8sum + 3 = whi + 12 && Q8SIZE = 24, error, "softgemv65.s: dw's bytes and the weights are 12 bytes apart (the job's step)"
        .assert rb_nf - (rbc + 2) = RBSKIP, error, "softgemv65.s: the source step's skip"
        .assert wloA + 408 = wlo && whiA = wloA + 12 && q8sumA + 3 = whiA + 12 && q8tailA - q8sumA = 16 * Q8SIZE, error, "softgemv65.s: a 2-block row's bytes 12 apart (the job's step)"



;---------------------------------------------------------------------------------------------
; The term: acc (at accp) += single(isum)·single(dw·dx); X:Y:Z = isum (24-bit two's complement).

        TERM_N2 whi, mxs_lo, mxs_mid, mxs_hi

; The sums wait between block columns as W = [E, m0, m1, s|m2] (sc_w.gq.acc): the single's own
; bits in another order (E the biased exponent, m0-m2 the 23 fraction bits, s the sign), so that
; one LDQ gives E in A and the significand in X:Y:Z and one STQ stores a sum; ±0 has the same bytes
; in both. A row chunk's last block column (sgq_last) stores singles: its pack is patched to
; pack_f, and the ways that leave the sum as it is turn it into a single (w2f). sgq_slow reads and
; writes singles (slow converts around it).

; X:Y:Z >> A = d (1-7) through a chain of 7 LSRQs: the patched branch skips the first 7 − d
.macro  SHOFF   br
        sta     t
        asl     a
        adc     t                       ; 3d (C = 0: d < 8)
        eor     #$FF
        adc     #22                     ; (C = 0) 21 − 3d: bytes to skip
        sta     br+1
.endmacro
; Q = acc's significand with a zero guard byte, opp bit 7 set when its sign differs from sg's;
; with_sa: acc's sign also into sa (acc_q; written out where the product is the larger)
.macro  ACCQ    with_sa
        ldz     #0
        ldqi    accp
        tza
        and     #$80
  .if with_sa
        sta     sa
  .endif
        eor     sg
        sta     opp
        tza
        ora     #$80
        taz
        lda     #0
.endmacro

; acc + the product (X:Y:Z, pe, sg; a normal single), acc normal or ±0. The larger in magnitude
; keeps a guard byte below its 24-bit significand; the smaller is shifted right by the exponent
; difference d, the bits it loses jammed into bit 0 (sticky); then added or subtracted,
; normalised, rounded to nearest even and stored. d >= 26: the smaller is below a quarter of the
; larger's last place and the sum is the larger. Each order is its own code (no patched operands
; but the shift's entry).
add_azero:                              ; acc ±0: the sum is the product; else subnormal
        phy
        ldy     #3
        lda     (accp),y
        and     #$7F
        dey
        ora     (accp),y
        dey
        ora     (accp),y
        sta     t
        ply
        lda     t
        bne     add_slow
prod_only:                              ; the product as it is
        lda     pe
        sta     eb
        lda     sg
        sta     sb
        jmp     pk
add_slow:
        jmp     slow
pb_far: sta     dd
        jsr     acc_q
        jsr     shr_far
        bra     pb_sum

add:
acc_e:  lda     $FFFF                   ; acc's E (the operand is accp, patched per row)
        beq     add_azero
        cmp     #$FF
        beq     add_slow                ; acc inf or NaN
        sta     eb
        cmp     pe
        bcs     acc_ge
prod_big:                               ; the product is larger: d = pe − E (C = 0)
        eor     #$FF
        adc     pe                      ; (C = 0) pe − E − 1
        inc     a
        cmp     #26
        bcs     prod_only
        stx     pq+1                    ; (pq stays 0: the guard byte)
        sty     pq+2
        stz     pq+3
        ldx     pe
        stx     eb
        ldx     sg
        stx     sb                      ; the product's sign, the result's
        cmp     #8
        bcs     pb_far
        tax
        lda     shoff,x                 ; 21 − 3d: the LSRQs to skip
        sta     pb_br+1
        ACCQ    0                       ; acc_q's steps but sa (only add_eqe reads it)
pb_br:  bra     *+2
        LSRQ7
pb_sum: bit     opp
        bmi     :+
        clc
        adcq    pq
        jmp     sum_done
:       stq     tq
        ldq     pq
        sec
        sbcq    tq
        jmp     diff_done

acc_keep:                               ; acc as it is
        bit     lst
        bmi     w2f_j
        jmp     next_acc
w2f_j:  jsr     w2f
        jmp     next_acc

j_eqe:  jmp     add_eqe                 ; (add_eqe and ab_far sit beyond the rounding, out of a
j_far:  jmp     ab_far                  ; branch's reach)
acc_ge: beq     j_eqe
        sbc     pe                      ; acc is larger: d = E − pe (C = 1)
        cmp     #26
        bcs     acc_keep
        cmp     #8
        bcs     j_far
        SHOFF   ab_br
        lda     #0
ab_br:  bra     *+2
        LSRQ7
ab_sum: stq     tq                      ; the product aligned (guard byte A)
        ldz     #0
        ldqi    accp                    ; A = E, X:Y:Z = m0, m1, s|m2
        tza
        and     #$80
        sta     sb                      ; acc's sign, the result's
        eor     sg
        bmi     ab_sub
        tza
        ora     #$80
        taz
        lda     #0
        clc
        adcq    tq                      ; on into sum_done
; the same signs: X:Y:Z significand, A guard byte, C the carry out of the top
sum_done:
        bcc     round
        rorq
        bcc     :+
        ora     #1
:       inc     eb                      ; (now possibly 255: rounded as below, then pack's check)
        cmp     #$80
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
        bra     pack
ab_sub: tza
        ora     #$80
        taz
        lda     #0
        sec
        sbcq    tq
                                        ; on into diff_done
; the signs differ: the larger minus the smaller, zero only when they are equal (+0)
diff_done:
        bne     sub_norm
        jmp     rts_first               ; exact cancellation: +0
sub_norm:                               ; (N: Z.7, from the SBCQ or the ASLQ)
        bmi     round
:       dec     eb
        aslq
        bpl     :-

; X:Y:Z significand, A guard byte: round to nearest even, store with eb, sb. Entered with eb
; 1-254 and straight to pk unless the rounding carries out: eb is the larger operand's exponent
; (acc's E 1-254, or the product's pe, 99-183), or after a cancellation at least the larger's less
; 24, which is 75 or more (d < 26: acc is the larger with E >= pe, or the product with E >= pe − 25).
round:  cmp     #$80
        bcc     pk
        and     #$7F
        bne     @up
        txa
        lsr     a
        bcc     pk
@up:    inx
        bne     pk
        iny
        bne     pk
        inz
        bne     pk
        ldz     #$80
        inc     eb
; X:Y:Z significand (Z.7 set), eb, sb: acc = W [eb, X, Y, (Z & $7F) | sb], or in the last block
; column the single [X, Y, (Z & $7F) | E.0 << 7, sb | E >> 1]; eb must be 1-254
pack:   lda     eb
        beq     pack_slow
        cmp     #$FF
        beq     pack_slow
pk:     bra     pack_w                  ; (patched: CMP #, on into pack_f, in a row chunk's last
                                        ; block column)
pack_f: lda     eb                      ; Q = [m0, m1, E.0 << 7 | m2, sb | E >> 1]
        lsr     a                       ; C = E.0
        ora     sb
        stz     t2
        taz
        lda     t2                      ; 1 | m2 (the significand's top bit is set)
        bcs     :+
        and     #$7F
:       phy
        tay
        txa
        plx
        jmp     acc_st
pack_slow:
        jmp     slow
pack_w: tza
        and     #$7F
        ora     sb
        taz
        lda     eb
        jmp     acc_st
prod_w: tza                             ; a row chunk's first block column, not its last: the
        and     #$7F                    ; product as it is, as W (pe is always 99-183)
        ora     sg
        taz
        lda     pe
acc_st: stqi    accp                    ; (STQ (bp): 12 cycles, against 10 and a patch per row)
; The row loop: acc_st falls into the next row, and the ways that leave acc as it is or store it
; otherwise jump to next_acc; the rows end back at sgq_block's caller.
next_acc:
        clc                             ; accp += 4, also in the LDA of acc's E
        lda     accp
        adc     #4
        sta     accp
        sta     acc_e+1
        bcc     ae_lo
        inc     accp+1
        inc     acc_e+2
        clc                             ; (the row loop's source step takes C = 0)
ae_lo:  eor     #0                      ; (patched: the end's low byte; it recurs every 64 rows,
        beq     ae_end                  ; so the high byte decides then; EOR keeps C)
; Each row's block comes by one inline DMA job (the list follows the STA DMA_INLINE and the CPU
; goes on after it; its list is read through the CPU's memory map: gs4510.vhdl 8986-8995, spec
; §M3.1; xemu dma65.c takes the list at the CPU's PC and puts the PC after it), so no list address
; is kept between rows. One entry whose destination steps by 12 bytes (option $85: the skip rate's
; whole bytes; spec §M3.2-§M3.3) lays the block's bytes 12 apart from wlo on: dw's two bytes into
; wlo and whi (bytes before q8go that are not run), then w_2k and w_2k+1 into the EOR # and the
; LDA # of pair k's code, 12 bytes apart, so the isum reads its weights as immediates (2 cycles,
; against 5 for LDA abs). Q4_0's 18-byte block goes the same way (count 18, patched): its quant
; byte k lands at q8sum + 3 + 12k, where the Q4_0 code reads it with LDA abs. A 2-block row's 68
; bytes go from wloA on (rows2).
rowloop:
        lda     #>MULA                  ; base page = the I/O page of the DMA registers and the
        tab                             ; multiplier: STA 3 cycles instead of 4, ADCQ 11 for 12
        sta     <DMA_INLINE             ; (any value) the job; the CPU waits, then goes on after it
        .byte   DMA_OPT_F018A, DMA_OPT_CROSS_MB, DMA_OPT_DST_SKIP
        .byte   12
        .byte   DMA_OPT_SRC_MB
src_mb: .byte   0
        .byte   DMA_OPT_END
        .byte   DMA_COPY
cnt:    .word   WT_Q8_0_BLOCK_BYTES     ; (patched: the format's block bytes)
src:    .word   0
src_bk: .byte   0                       ; (F018A: bits 4-7 are flags, 0)
dst:    .word   (wlo + SC_NEAR_DELTA) & $FFFF   ; (patched: wloA for a 2-block row)
        .byte   <(((wlo + SC_NEAR_DELTA) >> 16) & $0F)
        .word   0                       ; modulo
ilist_end:
        .assert WT_Q8_0_BLOCK_BYTES = 34 && WT_Q4_0_BLOCK_BYTES = 18, error, "softgemv65.s: the job lays 34 or 18 bytes"
        .assert (q8sum + 400 + SC_NEAR_DELTA) < $100000, lderror, "softgemv65.s: the isum code outside the first megabyte (the job leaves the destination MB 0)"
        .assert ((wloA + SC_NEAR_DELTA) >> 16) = ((wlo + SC_NEAR_DELTA) >> 16), lderror, "softgemv65.s: both jobs' destinations in one bank"
        lda     src                     ; the next row's source (C = 0): the row stride added,
rb0:    adc     #0                      ; its bank and megabyte only on a carry (or every row
        sta     src                     ; for a stride of 64 KB or more)
rbc:    bcc     rb_nf                   ; (patched: TXA TXA unless the stride is below 256
        lda     src+1                   ; bytes; then no carry leaves the high byte as it is)
rb1:    adc     #0
        sta     src+1
rbh:    bcs     far_r                   ; (BRA when the stride is 64 KB or more)
rb_nf:  lda     #0                      ; the gaps of the two fields (the last term's
        sta     <(MULA+1)               ; multiplications, or softfloat, wrote them)
        sta     <(MULA+2)
        sta     <(MULB+1)
        sta     <(MULB+2)
isum_call:
        lbra    q8go                    ; (C = 0; patched: q4pre, q8goA) X:Y:Z = Σ c·b − corr +
                                        ; 2^23, then the term
ae_end: lda     accp+1
ae_hi:  eor     #0                      ; (patched: the end's high byte)
        bne     rowloop
        ldz     #0                      ; (cc65 code takes (zp) as (zp),Z)
        rts
far_r:  jsr     far_a                   ; (within the branch's reach)
        clc                             ; (SRCHI leaves C = bit 4 of address bits 24-31)
        bra     rb_nf

ab_far: sta     dd
        lda     #0
        jsr     shr_far
        jmp     ab_sum
add_eqe:                                ; equal exponents (d = 0): the larger by significand
        stx     pq+1
        sty     pq+2
        stz     pq+3
        lda     sg                      ; (the result's sign when the signs agree)
        sta     sb
        jsr     acc_q
        bit     opp
        bmi     :+
        clc
        adcq    pq
        jmp     sum_done
:       cpz     pq+3
        bne     :+
        cpy     pq+2
        bne     :+
        cpx     pq+1
:       bcc     :+
        lda     sa                      ; acc's significand is the larger (or they are equal: +0)
        sta     sb
        lda     #0
        sec
        sbcq    pq
        jmp     diff_done
:       stq     tq
        ldq     pq
        sec
        sbcq    tq
        jmp     diff_done


; Q = acc's significand with a zero guard byte: [0, m0, m1, m2 | $80]; sa = acc's sign, opp
; bit 7: the signs differ
acc_q:  ACCQ    1
        rts

; Q = the smaller (guard byte 0), dd = d (8-25): shifted right by d, the bits lost jammed into bit 0
shr_far:
        stq     tq                      ; (tq+4 .. tq+6 stay 0)
        lda     dd
        and     #7
        tay
        lda     shoff,y
        sta     @br+1
        lda     dd
        cmp     #16
        bcs     @k2
        lda     tq+1                    ; one whole byte (tq) and d−8 bits of tq+1 go
        and     lowmask,y
        ora     tq
        beq     :+
        lda     #1
:       sta     jamv
        ldq     tq+1
        bra     @br
@k2:    cmp     #24
        bcs     @k3
        lda     tq+2                    ; two bytes and d−16 bits of tq+2
        and     lowmask,y
        ora     tq+1
        ora     tq
        beq     :+
        lda     #1
:       sta     jamv
        ldq     tq+2
        bra     @br
@k3:    lda     tq+3                    ; three bytes and d−24 bits of tq+3
        and     lowmask,y
        ora     tq+2
        ora     tq+1
        ora     tq
        beq     :+
        lda     #1
:       sta     jamv
        ldq     tq+3
@br:    bra     *+2                     ; (patched: skips 7 − (d mod 8) of the shifts)
        LSRQ7
        ora     jamv
        rts

rts_first:                              ; isum = 0 into a +0 sum: +0 (the sum's word is
        ldy     #3                      ; not cleared beforehand; the same bytes in W)
        lda     #0
:       sta     (accp),y
        dey
        bpl     :-
        jmp     next_acc

; isum = 0 (or dw = ±0; dw, dx finite): the product is ±0 (sg). acc + ±0 = acc, but ±0 + ±0 is
; −0 only when both are −0 (the same bytes in W); acc inf or NaN to the C (its NaN).
isum_zero:
        ldy     #0
        lda     (accp),y                ; E
        cmp     #$FF
        beq     slow
        tax
        ldy     #3
        lda     (accp),y
        and     #$7F
        dey
        ora     (accp),y
        dey
        ora     (accp),y
        bne     iz_keep                 ; subnormal
        txa
        bne     iz_keep                 ; normal
        ldy     #3                      ; ±0
        lda     (accp),y
        and     sg
        and     #$80
        sta     (accp),y
        jmp     next_acc
iz_keep:bit     lst                     ; acc as it is
        bpl     :+
        jsr     w2f
:       jmp     next_acc

; acc (W, at accp) into the single it is, in place (w2f), and back (f2w)
w2f:    ldz     #0
        ldqi    accp                    ; A = E, X = m0, Y = m1, Z = s|m2
        sta     t
        tza
        asl     a                       ; C = s
        ror     t                       ; t = s | E >> 1, C = E.0
        ror     a                       ; E.0 << 7 | m2
        sta     t2
        txa                             ; Q = [m0, m1, t2, t]
        phy
        plx
        ldy     t2
        ldz     t
        stqi    accp
        rts
f2w:    ldz     #0
        ldqi    accp                    ; A = m0, X = m1, Y = E.0 << 7 | m2, Z = s | E >> 1
        sta     t
        tya
        asl     a                       ; C = E.0
        sta     t2
        tza
        rol     a                       ; A = E, C = s
        ror     t2                      ; s | m2
        phx                             ; Q = [E, m0, m1, t2]
        ply
        ldx     t
        ldz     t2
        stqi    accp
        rts

; the term in C (sgq_slow: the definition) with isum, dw and acc. The isum is computed again (the
; term's registers are gone by now): the block is still in the code and the isum code still holds the
; block column's immediates. From any base page.
slow:   lda     bcall+1                 ; the caller's base page
        tab
        jsr     w2f                     ; acc as a single (any bytes in a first block column)
        lda     #>MULA
        tab
        lda     #0
        sta     <(MULA+1)
        sta     <(MULA+2)
        sta     <(MULB+1)
        sta     <(MULB+2)
        lda     q8tail                  ; (the term's first byte, or JMP term_dx's)
        pha
        lda     #$60                    ; RTS: the isum code returns here instead of going on
        sta     q8tail                  ; to the term
        sta     q4tail
        ldx     ncx+1                   ; 2^23 − corr
        ldy     ncy+1
        ldz     ncz+1
        lda     _sgq_fmt                ; the isum alone (no source steps)
        cmp     #WT_Q8_0
        clc                             ; (the isum code's promise; keeps CMP's Z)
        bne     :+
        jsr     q8sum
        bra     :++
:       jsr     q4sum
:
        pla                             ; the term's first byte again
        sta     q8tail
        lda     #$4C                    ; JMP again
        sta     q4tail
        jsr     slow_s
        lda     wlo
        sta     _sgq_dw
        lda     whi
        sta     _sgq_dw+1
        jsr     _sgq_slow
        bit     lst
        bmi     :+
        jsr     f2w                     ; not the last block column: back to W
:       jmp     next_acc
; the caller's base page, sgq_s = the isum (X:Y:Z with the bias), sgq_accp = accp, Z = 0
slow_s: lda     bcall+1                 ; the caller's base page
        tab
        tza                             ; the bias off
        eor     #$80
        taz
        stx     _sgq_s
        sty     _sgq_s+1
        stz     _sgq_s+2
        tza
        asl     a
        lda     #0
        sbc     #0
        eor     #$FF                    ; sign extension
        sta     _sgq_s+3
        ldz     #0
        lda     accp
        sta     _sgq_accp
        lda     accp+1
        sta     _sgq_accp+1
        rts

        .rodata
p8ops:  .word   p8a+1, p8b+1, p8c+1, p8d+1, p8e+1, p8f+1
lowmask:
        .byte   $00, $01, $03, $07, $0F, $1F, $3F, $7F
; branch offsets into a chain of 7 LSRQs (3 bytes each) for a shift by 0-7
shoff:
        .byte   21, 18, 15, 12, 9, 6, 3, 0
; leading zeros of a nonzero byte
lz8:
.repeat 256, i
        .byte   (i < 128) + (i < 64) + (i < 32) + (i < 16) + (i < 8) + (i < 4) + (i < 2)
.endrepeat
