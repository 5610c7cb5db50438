; softquant65.s: the per-element part of softgemv.c's Q8_0 input quantiser (quantise) on the
; 45GS02 (cc65 builds; with -DSC_C_GEMV the C in softgemv.c does it): sgq_amax (the block's
; largest |x|) and sgq_quant (the block's int8 quants). The same bits as the C, which stays the
; definition (docs/spec/numerics.md §5.3).

        .p4510
        .import         _sgq_x, _sgq_id, _sgq_qb
        .importzp       sreg
        .export         _sgq_amax, _sgq_quant

MULA    = $D770                         ; MULTINA, 4 bytes (spec/MEGA65.md §9)
MULB    = $D774                         ; MULTINB, 4 bytes
MULO    = $D778                         ; MULTOUT, 8 bytes

; 45GS02 quad instructions: the 42 42 (NEG NEG) prefix on the 8-bit opcode (spec/MEGA65.md §1.6)
.macro  ldq     arg
        .byte   $42, $42
        lda     arg
.endmacro
.macro  aslq
        .byte   $42, $42
        asl     a
.endmacro

        .zeropage
aq:     .res    4                       ; the largest |x| so far
pq:     .res    4                       ; this |x|
stk:    .res    1                       ; sticky bits
t:      .res    1

; Quantising an input block to Q8_0 (softgemv.c quantise), the per-element part:
; q = round half away from zero of single(x·id), saturated to int8. single(x·id) is the exact
; product P = mx·mid (in [2^46, 2^48)) rounded to 24 bits (RNE) as m, so |x·id| = m/2^k with
; k = 276 − ex − eid (one more when P < 2^47); and for 16 < k < 25, with t = m >> 16,
; round(m/2^k) = (t + 2^(r−1)) >> r, r = k − 16 (the bits below t cannot carry past the half).
; k <= 16 is |x·id| >= 128 (saturated), k >= 25 is below one half (0).

        .zeropage
xp:     .res    2                       ; the 32 singles
qbp:    .res    2                       ; their quants
        .bss
kbase:  .res    2                       ; 276 − eid
ex:     .res    1
qj:     .res    1                       ; element
qy:     .res    1                       ; its byte offset
sgnq:   .res    1                       ; its sign (bit 7)
kk:     .res    1
th:     .res    1                       ; t's bit 8
        .code

; uint32_t sgq_amax(void): the largest |x| of sgq_x[0..31] as bits, NaN left out (as f32::max)
_sgq_amax:
        lda     _sgq_x
        sta     xp
        lda     _sgq_x+1
        sta     xp+1
        lda     #0
        sta     aq
        sta     aq+1
        sta     aq+2
        sta     aq+3
        tay
@elem:  ldx     #0                      ; pq = |x|
:       lda     (xp),y
        sta     pq,x
        iny
        inx
        cpx     #4
        bne     :-
        lda     pq+3
        and     #$7F
        sta     pq+3
        cmp     #$7F                    ; above $7F800000: NaN
        bne     @num
        lda     pq+2
        cmp     #$80
        bcc     @num
        bne     @next
        lda     pq+1
        ora     pq
        bne     @next
@num:   lda     pq+3                    ; pq > aq?
        cmp     aq+3
        bne     @cmp
        lda     pq+2
        cmp     aq+2
        bne     @cmp
        lda     pq+1
        cmp     aq+1
        bne     @cmp
        lda     pq
        cmp     aq
        beq     @next
@cmp:   bcc     @next
        ldx     #3
:       lda     pq,x
        sta     aq,x
        dex
        bpl     :-
@next:  cpy     #128
        bne     @elem
        lda     aq+2
        sta     sreg
        lda     aq+3
        sta     sreg+1
        lda     aq
        ldx     aq+1
        rts

; uint8_t sgq_quant(void): sgq_qb[j] = the quant of sgq_x[j]·sgq_id, j < 32; returns 0, or 1 (and
; the quants are not all written) when the block is for the C: id not a normal single, or some x
; subnormal, infinite or NaN.
_sgq_quant:
        lda     _sgq_x
        sta     xp
        lda     _sgq_x+1
        sta     xp+1
        lda     _sgq_qb
        sta     qbp
        lda     _sgq_qb+1
        sta     qbp+1
        lda     _sgq_id+2               ; eid
        asl     a
        lda     _sgq_id+3
        rol     a
        beq     @c                      ; 0 or subnormal
        cmp     #$FF
        beq     @c
        sta     t
        sec                             ; kbase = 276 − eid
        lda     #<276
        sbc     t
        sta     kbase
        lda     #>276
        sbc     #0
        sta     kbase+1
        lda     _sgq_id                 ; MULB = mid, once for the block
        sta     MULB
        lda     _sgq_id+1
        sta     MULB+1
        lda     _sgq_id+2
        ora     #$80
        sta     MULB+2
        lda     #0
        sta     MULB+3
        sta     MULA+3
        sta     qj
        sta     qy
@elem:  ldy     qy
        iny
        iny
        lda     (xp),y                  ; x2
        cmp     #$80                    ; C = its bit 7 (the exponent's bit 0)
        iny
        lda     (xp),y                  ; x3
        rol     a                       ; A = ex, C = sign
        ror     sgnq
        sta     ex
        cmp     #$FF
        beq     @c
        cmp     #0
        bne     @norm
        dey                             ; ex 0: zero (q 0), else subnormal
        lda     (xp),y
        and     #$7F
        dey
        ora     (xp),y
        dey
        ora     (xp),y
        bne     @c
        jmp     @zero
@c:     ldz     #0
        lda     #1
        ldx     #0
        rts
@norm:  sec                             ; k = kbase − ex (for P >= 2^47)
        lda     kbase
        sbc     ex
        tax
        lda     kbase+1
        sbc     #0
        bpl     :+
        jmp     @sat                    ; k < 0
:       beq     :+
        jmp     @zero                   ; k >= 256
:       cpx     #26
        bcc     :+
        jmp     @zero                   ; below 2^-2 even rounded up
:       cpx     #16
        bcs     :+
        jmp     @sat                    ; k <= 15: |x·id| >= 128
:       stx     kk
        ldy     qy                      ; MULA = mx
        lda     (xp),y
        sta     MULA
        iny
        lda     (xp),y
        sta     MULA+1
        iny
        lda     (xp),y
        ora     #$80
        sta     MULA+2
        lda     MULO
        ora     MULO+1
        sta     stk
        ldq     MULO+2                  ; A = bits 16-23, X:Y:Z = bits 24-47
        cpz     #$80
        bcs     @l47
        aslq                            ; P < 2^47: one more fraction bit
        inc     kk
@l47:   sta     t                       ; RNE to 24 bits: m = X:Y:Z (+ th)
        lda     #0
        sta     th
        lda     t
        bpl     @rnd
        and     #$7F
        ora     stk
        bne     @up
        txa
        lsr     a
        bcc     @rnd
@up:    inx
        bne     @rnd
        iny
        bne     @rnd
        inz
        bne     @rnd
        inc     th                      ; m = 2^24
@rnd:   tza                             ; t = m >> 16 (9 bits: th, Z)
        ldz     #0
        ldx     kk
        cpx     #26
        bcs     @zero                   ; below a quarter
        cpx     #25
        bne     :+
        lda     th                      ; m/2^25: one half when m = 2^24, else below
        bra     @mag
:       cpx     #17
        bcc     @sat                    ; k = 16: |x·id| >= 128
        ldy     th
        sty     t
        clc                             ; + 2^(r−1), r = k − 16
        adc     halfr-17,x
        bcc     :+
        inc     t
:       ldy     kk                      ; >> r, r = k − 16
        ldx     rsh-17,y
@shr:   lsr     t
        ror     a
        dex
        bne     @shr
        ldx     t
        beq     @mag                    ; magnitude in A (< 256)
@sat:   lda     #$FF                    ; saturated magnitude
@mag:   bit     sgnq
        bmi     @neg
        cmp     #128
        bcc     @store
        lda     #127
        bra     @store
@neg:   cmp     #128
        bcc     :+
        lda     #128                    ; −128
        bra     @store
:       eor     #$FF
        clc
        adc     #1
        bra     @store
@zero:  lda     #0
@store: ldy     qj
        sta     (qbp),y
        iny
        sty     qj
        lda     qy
        clc
        adc     #4
        sta     qy
        cpy     #32
        beq     :+
        jmp     @elem
:       ldz     #0
        lda     #0
        ldx     #0
        rts

        .rodata
halfr:  .byte   $01, $02, $04, $08, $10, $20, $40, $80   ; 2^(r−1), r = 1..8
rsh:    .byte   1, 2, 3, 4, 5, 6, 7, 8                   ; r
