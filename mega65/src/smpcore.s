; smpcore.s: the MEGA65 sampler's choice (spec §7.6), bit for bit ssnail_format::sampler.
; (Not named sampler.s: cl65 compiles sampler.c through a temporary sampler.s.)
;
; uint32_t __fastcall__ smp_choose(uint16_t q): the token for the logits of position q, or
; $FFFFFFFF (no candidate: keep the ARGMAX). Steps:
;   1. the penalty window: distinct ids < V in token slots q-63..q (a 2048-bit filter rbits
;      makes "not in the window" one test);
;   2. the scan: DMA copies bytes 3 and 2 of 256 logits at a time into hi3/hi2 (source step 4);
;      an unrolled loop rejects every logit whose order key's high 16 bits are below those of
;      the worst candidate so far (the threshold is patched into the loop's CMP #imm operands);
;      the others are read in full and, when better than the worst candidate (key, then lower
;      id) and not in the window, replace it in a binary min-heap of K slot numbers;
;   3. the heap sorted (best first); the candidates' Q16.16 values; the window tokens merged by
;      (value, key, -id) with their penalised values (exact: the penalty only lowers);
;   4. weights from the exp tables; one xorshift32 step; the cumulative-sum choice.
; Order key of an f32: bits | $80000000 when positive, ~bits when negative.
; 32-bit work uses the 45GS02's quad instructions (NEG NEG prefix, spec §M1) and the hardware
; multiplier ($D770: A, $D774: B, $D778: A x B, 64 bits; spec §M9).
;
; Where the cycles go (docs/FINDINGS.md, "Sampling on the MEGA65"): at V = 49,152 the scan (11
; cycles per rejected logit, more when byte 3 ties) and 4 cycles of DMA per logit are most of it;
; a few hundred heap insertions (~K·(1 + ln(V/K)) for logits in random order) are the rest.
; The scan visits ids out of order (column by column), so every comparison that decides the
; list includes the id.

        .p4510
        .import         _smp_out, _smp_nout, _smp_tokaddr, _smp_topk, _smp_pen_on
        .import         _smp_invt, _smp_pendiv, _smp_penmul, _smp_state
        .import         _smp_tab_hi, _smp_tab_lo, _dma_exec
        .importzp       sreg, ptr1
        .export         _smp_choose

FP      = $F0                           ; hw.s's flat pointer (base page, fixed)
        .include        "mega65_io.inc"
MULA    = MATH_MULTINA
MULB    = MATH_MULTINB
MULO    = MATH_MULTOUT
COLS    = 4                             ; the scan's unrolled columns (8: 136 bytes more, 2 % faster),
ROWS    = 256 / COLS                    ; of ROWS logits each
SLOT    = 9                             ; bytes of code per column in the scan loop

.macro  q_ld    arg                     ; LDQ
        neg
        neg
        lda     arg
.endmacro
.macro  q_st    arg                     ; STQ
        neg
        neg
        sta     arg
.endmacro
.macro  q_cmp   arg                     ; CPQ: C = Q >= arg, Z = equal
        neg
        neg
        cmp     arg
.endmacro
.macro  q_adc   arg
        neg
        neg
        adc     arg
.endmacro
.macro  q_sbc   arg
        neg
        neg
        sbc     arg
.endmacro
.macro  q_eor   arg
        neg
        neg
        eor     arg
.endmacro
.macro  q_ldflat                        ; LDQ [FP],Z (Z = 0)
        ldz     #0
        neg
        neg
        eom
        lda     (FP),z
.endmacro

        .segment "HIBSS"
hi3:    .res    256                     ; byte 3 of 256 logits
hi2:    .res    256                     ; byte 2
rbits:  .res    256                     ; bit (id & 2047): id may be in the window
k0:     .res    65                      ; candidate slots, one array per byte: key,
k1:     .res    65
k2:     .res    65
k3:     .res    65
t0:     .res    65                      ; token (V <= 65536),
t1:     .res    65
v0:     .res    65                      ; Q16.16 value
v1:     .res    65
v2:     .res    65
v3:     .res    65
hp:     .res    66                      ; heap hp[1..nc] of slots; sorted, ord = hp+1 (0-based)
w0:     .res    64                      ; weight, by position
w1:     .res    64
rl:     .res    64                      ; the window's distinct ids
rh:     .res    64

        .zeropage
kk:     .res    4                       ; key of the token at hand
src:    .res    4                       ; the address of the chunk's first logit
tl:     .res    1                       ; the token at hand
th:     .res    1
nc:     .res    1                       ; candidates so far
si:     .res    1                       ; heap: the position being sifted,
sc:     .res    1                       ; its worse child,
se:     .res    1                       ; the slot being sifted,
hn:     .res    1                       ; the heap's size
xs:     .res    1                       ; the scan's row (X)
tmp:    .res    1

        .bss
bits:   .res    4                       ; f32 bits of the token at hand
xv:     .res    4                       ; its value
vt:     .res    4                       ; the best candidate's value
sum:    .res    4
cum:    .res    4
draw_u: .res    4
qpos:   .res    2
slot:   .res    2
nrec:   .res    1
j:      .res    1
fs:     .res    1                       ; merge: the free slot
expo:   .res    1
pk3:    .res    1                       ; the threshold patched into the scan (key bytes 3, 2)
pk2:    .res    1

        .data
; Two F018B jobs with options: addresses cross megabyte boundaries ($01: a chunk of logits may
; straddle one; gs4510.vhdl 6577-6583), source MB, destination MB 0, source skip rate 4.0 (spec
; §M3); job 0 copies byte 3 of each logit into hi3, job 1 byte 2 into hi2. Same layout, JOBLEN apart.
job:    .byte   $0B, $01, $80
job_mb: .byte   0
        .byte   $81, 0, $83, 4, $82, 0, 0
        .byte   0                       ; copy
job_n:  .word   0
job_s:  .word   0
job_sb: .byte   0
        .word   hi3
        .byte   0, 0
        .word   0
JOBLEN  = * - job
        .byte   $0B, $01, $80, 0
        .byte   $81, 0, $83, 4, $82, 0, 0
        .byte   0
        .word   0
        .word   0
        .byte   0
        .word   hi2
        .byte   0, 0
        .word   0

        .rodata
allff:  .byte   $FF, $FF, $FF, $FF
nanmin: .byte   $01, $00, $80, $FF      ; keys from here: positive NaN
exmin:  .byte   $00, $00, $80, $00      ; keys below: negative NaN, -inf
limit:  .byte   $00, $00, $00, $40      ; 2^30
bitmask: .byte  1, 2, 4, 8, 16, 32, 64, 128
chunk4: .byte   $00, $04, $00, $00      ; 256 logits

        .code

; FP = A/X * 4 + the token buffer's address
fp_tokbuf:
        sta     FP
        stx     FP+1
        lda     #0
        sta     FP+2
        sta     FP+3
        asl     FP
        rol     FP+1
        rol     FP+2
        asl     FP
        rol     FP+1
        rol     FP+2
        clc
        q_ld    FP
        q_adc   _smp_tokaddr
        q_st    FP
        rts

; FP = the logit of token tl/th: src + 4 * tl (src: the logits of th * 256)
fp_logit:
        lda     #0
        sta     tmp
        lda     tl
        asl
        rol     tmp
        asl
        rol     tmp
        clc
        adc     src
        sta     FP
        lda     tmp
        adc     src+1
        sta     FP+1
        lda     src+2
        adc     #0
        sta     FP+2
        lda     src+3
        adc     #0
        sta     FP+3
        rts

; src = _smp_out + 1024 * th (the chunk of token tl/th)
src_of_th:
        lda     th
        asl
        asl
        sta     src+1
        lda     th
        lsr
        lsr
        lsr
        lsr
        lsr
        lsr
        sta     src+2
        lda     #0
        sta     src
        sta     src+3
        clc
        q_ld    src
        q_adc   _smp_out
        q_st    src
        rts

; Y = rbits byte and A = mask for the token tl/th
bitpos: lda     th
        asl
        asl
        asl
        asl
        asl
        sta     tmp
        lda     tl
        lsr
        lsr
        lsr
        ora     tmp
        tay
        lda     tl
        and     #7
        tax
        lda     bitmask,x
        rts

; kk = key of the f32 in Q; leaves Q = kk
keyq:   cpz     #$80
        bcs     @neg
        q_st    kk
        lda     kk+3
        ora     #$80
        sta     kk+3
        q_ld    kk
        rts
@neg:   q_eor   allff
        q_st    kk
        rts

; xv = bits as Q16.16, the magnitude truncated and saturated at 2^30
fixed:  lda     bits+2
        asl
        lda     bits+3
        rol
        sta     expo                    ; the exponent field
        lda     bits
        sta     xv
        lda     bits+1
        sta     xv+1
        lda     bits+2
        and     #$7F
        sta     xv+2
        lda     #0
        sta     xv+3
        lda     expo
        bne     @norm
        inc     expo                    ; subnormal: exponent 1, no implicit bit
        bra     @go
@norm:  lda     xv+2
        ora     #$80
        sta     xv+2
@go:    lda     expo
        cmp     #141
        bcc     @lt
        q_ld    limit
        q_st    xv
        bra     @sign
@lt:    cmp     #134
        bcc     @right
        sbc     #134                    ; shift left e - 134 (0..6)
        beq     @sign
        tax
@shl:   neg
        neg
        asl     xv
        dex
        bne     @shl
        bra     @sign
@right: cmp     #111
        bcs     @rs
        lda     #0                      ; e <= 110: below 2^-16
        tax
        tay
        taz
        q_st    xv
        rts
@rs:    lda     #134
        sec
        sbc     expo
        tax                             ; shift right 134 - e (1..23)
@shr:   neg
        neg
        lsr     xv
        dex
        bne     @shr
@sign:  lda     bits+3
        bpl     fxdone
negxv:  lda     #0
        tax
        tay
        taz
        sec
        q_sbc   xv
        q_st    xv
fxdone: rts

; the repetition penalty on xv: positive (x * pen_div) >> 31, else -min(2^30, ceil(|x| * pen_mul / 2^16))
penal:  lda     xv+3
        bmi     @neg
        ora     xv+2
        ora     xv+1
        ora     xv
        beq     @neg
        q_ld    xv
        q_st    MULA
        q_ld    _smp_pendiv
        q_st    MULB
        q_ld    MULO+4
        q_st    xv
        lda     MULO+3
        asl
        neg
        neg
        rol     xv
        rts
@neg:   lda     #0
        tax
        tay
        taz
        sec
        q_sbc   xv
        q_st    MULA
        q_ld    _smp_penmul
        q_st    MULB
        lda     MULO+6
        ora     MULO+7
        bne     @lim
        q_ld    MULO+2
        q_cmp   limit
        bcs     @lim
        q_st    xv
        lda     MULO
        ora     MULO+1
        beq     @ng
        neg
        neg
        inc     xv
@ng:    jmp     negxv
@lim:   q_ld    limit
        q_st    xv
        jmp     negxv

; slot X = kk, tl/th
store:  lda     kk
        sta     k0,x
        lda     kk+1
        sta     k1,x
        lda     kk+2
        sta     k2,x
        lda     kk+3
        sta     k3,x
        lda     tl
        sta     t0,x
        lda     th
        sta     t1,x
        rts

; C = 0: slot X is worse than slot Y (lower key, or the same key and a higher id). Keeps X, Y.
cmpxy:  lda     k3,x
        cmp     k3,y
        bne     @r
        lda     k2,x
        cmp     k2,y
        bne     @r
        lda     k1,x
        cmp     k1,y
        bne     @r
        lda     k0,x
        cmp     k0,y
        bne     @r
        lda     t1,y
        cmp     t1,x
        bne     @r
        lda     t0,y
        cmp     t0,x
@r:     rts

; The min-heap hp[1..hn] (the root the worst candidate) with hp[si] possibly better than its
; children: moves it down to its place.
sift:   ldx     si
        lda     hp,x
        sta     se
@down:  lda     si
        asl
        cmp     hn
        beq     @one                    ; one child
        bcs     @put                    ; none
        sta     sc                      ; two: which is worse?
        tax
        ldy     hp+1,x
        lda     hp,x
        tax
        jsr     cmpxy
        bcc     @cmp                    ; the left one
        inc     sc
        bra     @cmp
@one:   sta     sc
@cmp:   ldx     sc                      ; the worse child moves up if it is worse than se
        lda     hp,x
        tax
        ldy     se
        jsr     cmpxy
        bcs     @put
        txa
        ldx     si
        sta     hp,x
        lda     sc
        sta     si
        bra     @down
@put:   lda     se
        ldx     si
        sta     hp,x
        rts

; hn = nc; the heap property for hp[1..hn] (Floyd: sift from the last parent to the root)
heapify:
        lda     nc
        sta     hn
        lsr
        beq     @r
        sta     j
@l:     lda     j
        sta     si
        jsr     sift
        dec     j
        bne     @l
@r:     rts

; Scan loop threshold: the worst candidate's key bytes 3 and 2 into the CMP #imm operands, and
; the EOR #imm that turns raw bytes into key bytes for the comparison: with the threshold's key
; byte 3 >= $80 (a positive float) $80 and $00 (negative floats then fall below), else $FF and
; $FF (positive floats then lie above). Only the changed operands are written.
setthr: ldy     hp+1
        lda     k3,y
        cmp     pk3
        beq     @k2
        jsr     patch3
        ldy     hp+1
@k2:    lda     k2,y
        cmp     pk2
        bne     patch2
        rts
patch3: sta     pk3
        ldy     #$FF                    ; E3: $FF while below $80, then $80
        cmp     #$80
        bcc     @n
        ldy     #$80
@n:     ldx     #SLOT*(COLS-1)
@l:     sta     c3_0,x                  ; every slot's CMP and EOR operands
        sty     e3_0,x
        pha
        txa
        sec
        sbc     #SLOT
        tax
        pla
        bcs     @l
        ldy     #$FF                    ; E2: the same, $00 for $80
        cmp     #$80
        bcc     @p
        ldy     #0
@p:
        .repeat COLS, K
        sty     .ident(.sprintf("e2_%d", K))
        .endrepeat
        rts
patch2: sta     pk2
        .repeat COLS, K
        sta     .ident(.sprintf("c2_%d", K))
        .endrepeat
        rts

; C = 1: tl/th is in the window
inrec:  jsr     bitpos
        and     rbits,y
        beq     @no
        ldx     #0
@l:     cpx     nrec
        beq     @no
        lda     tl
        cmp     rl,x
        bne     @n
        lda     th
        cmp     rh,x
        beq     @yes
@n:     inx
        bra     @l
@yes:   sec
        rts
@no:    clc
        rts

; job X (0 or JOBLEN) reads byte Y of each logit from src on
setjob: tya
        clc
        adc     src
        sta     job_s,x
        lda     src+1
        adc     #0
        sta     job_s+1,x
        lda     src+2
        adc     #0
        sta     tmp
        and     #$0F
        sta     job_sb,x
        lda     src+3
        adc     #0
        asl
        asl
        asl
        asl
        sta     job_mb,x
        lda     tmp
        lsr
        lsr
        lsr
        lsr
        ora     job_mb,x
        sta     job_mb,x
        rts

; a scan hit at row X of column A (A = ROWS * column): the token th:(A | X)
hit:    stx     xs
        ora     xs
        sta     tl
        jsr     consider
        ldx     xs
        rts

; The token tl/th (a scan hit): read in full; a candidate if not excluded, better than the worst
; candidate when the list is full (key, then lower id) and not in the window.
consider:
        jsr     fp_logit
        q_ldflat
        jsr     keyq
        lda     kk+3                    ; excluded: key <= $007FFFFF or key >= $FF800001
        beq     @low
        cmp     #$FF
        bne     @ok
        q_ld    kk
        q_cmp   nanmin
        bcs     @no
        bra     @ok
@low:   lda     kk+2
        bpl     @no
@ok:    lda     nc
        cmp     _smp_topk
        bcc     @win
        ldy     hp+1                    ; full: better than the root?
        lda     kk+3
        cmp     k3,y
        bne     @d
        lda     kk+2
        cmp     k2,y
        bne     @d
        lda     kk+1
        cmp     k1,y
        bne     @d
        lda     kk
        cmp     k0,y
        bne     @d
        lda     t1,y                    ; the same key: the lower id is better
        cmp     th
        bne     @d
        lda     t0,y
        cmp     tl
@d:     bcc     @no
@win:   lda     nrec
        beq     @ins
        jsr     inrec
        bcs     @no
@ins:   lda     nc
        cmp     _smp_topk
        bcs     @full
        tax                             ; filling: slot nc at heap position nc + 1
        jsr     store
        txa
        sta     hp+1,x
        inc     nc
        lda     nc
        cmp     _smp_topk
        bne     @no
        jsr     heapify                 ; now full: make the heap, then the threshold
        jmp     setthr
@full:  ldx     hp+1                    ; the new one takes the root's slot, sinks
        jsr     store
        lda     #1
        sta     si
        jsr     sift
        jmp     setthr
@no:    rts

; xorshift helpers: u <<= X or u >>= X (quad shifts of memory)
shl_u:  neg
        neg
        asl     draw_u
        dex
        bne     shl_u
        rts
shr_u:  neg
        neg
        lsr     draw_u
        dex
        bne     shr_u
        rts
; state ^= u
mix:    q_ld    draw_u
        q_eor   _smp_state
        q_st    _smp_state
        q_st    draw_u
        rts

_smp_choose:
        sta     qpos
        stx     qpos+1
        lda     #0
        sta     nrec
        sta     nc
        tax
@clr:   sta     rbits,x
        inx
        bne     @clr
        lda     _smp_pen_on
        bne     @pen
        jmp     scan
@pen:
        sec                             ; the window: s = max(0, q - 63) .. q
        lda     qpos
        sbc     #63
        sta     slot
        lda     qpos+1
        sbc     #0
        sta     slot+1
        bcs     @win
        lda     #0
        sta     slot
        sta     slot+1
@win:   lda     slot
        ldx     slot+1
        jsr     fp_tokbuf
        q_ldflat
        q_cmp   _smp_nout
        bcs     @wnext                  ; ids >= V are not penalised
        sta     tl
        stx     th
        jsr     bitpos
        ora     rbits,y
        sta     rbits,y
        ldx     #0
@dup:   cpx     nrec
        beq     @add
        lda     tl
        cmp     rl,x
        bne     @dn
        lda     th
        cmp     rh,x
        beq     @wnext
@dn:    inx
        bra     @dup
@add:   lda     tl
        sta     rl,x
        lda     th
        sta     rh,x
        inc     nrec
@wnext: inc     slot
        bne     @c
        inc     slot+1
@c:     lda     qpos+1                  ; again while s <= q
        cmp     slot+1
        bcc     scan
        bne     @win
        lda     qpos
        cmp     slot
        bcs     @win

scan:   lda     #0                      ; threshold $007F: every key but those below (the
        sta     th                      ; excluded ones are caught in full) passes
        jsr     patch3
        lda     #$7F
        jsr     patch2
        jsr     src_of_th
        ldx     #0
        ldy     #3
        jsr     setjob
        ldx     #JOBLEN
        ldy     #2
        jsr     setjob
chunk:  lda     _smp_nout+2             ; V - 256 * th: 0 done, < 256 a last, padded chunk
        bne     @full
        lda     _smp_nout+1
        sec
        sbc     th
        bcc     @end                    ; past the end
        bne     @full
        lda     _smp_nout
        bne     @part
@end:   jmp     sorted
@part:  sta     job_n
        sta     job_n+JOBLEN
        lda     #0
        sta     job_n+1
        sta     job_n+1+JOBLEN
        lda     #$FF                    ; key $0000xxxx: never a hit
        ldx     #0
@pad:   sta     hi3,x
        sta     hi2,x
        inx
        bne     @pad
        bra     @dma
@full:  lda     #0
        sta     job_n
        sta     job_n+JOBLEN
        lda     #1
        sta     job_n+1
        sta     job_n+1+JOBLEN
@dma:   lda     #<job
        ldx     #>job
        jsr     _dma_exec
        lda     #<(job+JOBLEN)
        ldx     #>(job+JOBLEN)
        jsr     _dma_exec
        ldx     #ROWS-1
        jmp     s0

advjob: clc                             ; job X's source 1024 bytes on
        lda     job_s+1,x
        adc     #4
        sta     job_s+1,x
        bcc     @r
        lda     job_sb,x
        adc     #0
        cmp     #16
        bcc     @b
        inc     job_mb,x
        lda     #0
@b:     sta     job_sb,x
@r:     rts

; The scan of one chunk: column K holds the logits ROWS*K + X, row X = ROWS-1..0. A logit's raw
; byte 3, EORed, against the threshold's key byte 3: below, rejected in 11 cycles; above, a
; hit; equal, byte 2 decides (m_K).
.macro  tie     K
.ident(.sprintf("m%d", K)):
        bne     .ident(.sprintf("h%d", K))
        lda     hi2+ROWS*(K),x
.ident(.sprintf("e2_%d", K)) = * + 1
        eor     #$FF
.ident(.sprintf("c2_%d", K)) = * + 1
        cmp     #$7F
        bcc     .ident(.sprintf("s%d", (K) + 1))
.ident(.sprintf("h%d", K)):
        lda     #ROWS*(K)
        jsr     hit
        jmp     .ident(.sprintf("s%d", (K) + 1))
.endmacro

        .repeat COLS / 2, K
        tie     K
        .endrepeat
        .repeat COLS, K
.ident(.sprintf("s%d", K)):
        lda     hi3+ROWS*(K),x
.ident(.sprintf("e3_%d", K)) = * + 1
        eor     #$FF
.ident(.sprintf("c3_%d", K)) = * + 1
        cmp     #0
        bcs     .ident(.sprintf("m%d", K))
        .endrepeat
.ident(.sprintf("s%d", COLS)):
        .assert s1 - s0 = SLOT, error, "patch3 steps SLOT bytes from column to column"
        dex
        bpl     s0
        inc     th                      ; the next chunk
        beq     sorted                  ; (V = 65536)
        ldx     #0
        jsr     advjob
        ldx     #JOBLEN
        jsr     advjob
        clc
        q_ld    src
        q_adc   chunk4
        q_st    src
        jmp     chunk
        .repeat COLS / 2, K
        tie     K + COLS / 2
        .endrepeat

sorted: lda     nc                      ; the heap sorted: hp[1..nc] best first
        cmp     _smp_topk
        beq     @sort                   ; (a heap once full)
        lsr
        sta     j
        jsr     heapify
@sort:  lda     nc
        sta     hn
@s:     lda     hn                      ; the worst to the end, the rest sifted
        cmp     #2
        bcc     values
        tax
        lda     hp+1
        ldy     hp,x
        sta     hp,x
        sty     hp+1
        dec     hn
        lda     #1
        sta     si
        jsr     sift
        bra     @s

values: ldx     #0                      ; the candidates' values from their keys (slots 0..nc-1)
@v:     cpx     nc
        beq     merge
        stx     j
        lda     k0,x
        sta     kk
        lda     k1,x
        sta     kk+1
        lda     k2,x
        sta     kk+2
        lda     k3,x
        sta     kk+3
        q_ld    kk
        cpz     #$80
        bcs     @pos
        q_eor   allff
        q_st    bits
        bra     @b
@pos:   q_st    bits
        lda     bits+3
        and     #$7F
        sta     bits+3
@b:
        jsr     fixed
        ldx     j
        lda     xv
        sta     v0,x
        lda     xv+1
        sta     v1,x
        lda     xv+2
        sta     v2,x
        lda     xv+3
        sta     v3,x
        inx
        bra     @v

merge:  lda     nc                      ; the window's tokens with their penalised values, into
        sta     fs                      ; the free slot fs, inserted by (value, key, -id)
        ldx     #0
@m:     cpx     nrec
        bne     @one
        jmp     weights
@one:   stx     j
        lda     rl,x
        sta     tl
        lda     rh,x
        sta     th
        jsr     src_of_th
        jsr     fp_logit
        q_ldflat
        q_st    bits
        jsr     keyq
        q_cmp   exmin
        bcc     @skip
        q_cmp   nanmin
        bcs     @skip
        jsr     fixed
        jsr     penal
        ldx     fs
        jsr     store
        lda     xv
        sta     v0,x
        lda     xv+1
        sta     v1,x
        lda     xv+2
        sta     v2,x
        lda     xv+3
        sta     v3,x
        ldx     nc
@l:     cpx     #0
        beq     @put
        ldy     hp,x                    ; the slot at position x - 1
        jsr     better
        bcc     @put
        lda     hp,x
        sta     hp+1,x
        dex
        bra     @l
@put:   lda     fs
        sta     hp+1,x
        lda     nc
        cmp     _smp_topk
        bcs     @drop
        inc     nc                      ; one more: slots 0..nc-1 used
        lda     nc
        sta     fs
        bra     @skip
@drop:  tax                             ; full: the slot that fell off position K is free
        lda     hp+1,x
        sta     fs
@skip:  ldx     j
        inx
        jmp     @m

; C = 1: the new entry (xv, kk, tl/th) goes before slot Y
better: lda     v3,y
        eor     #$80
        sta     tmp
        lda     xv+3
        eor     #$80
        cmp     tmp
        bne     @r
        lda     xv+2
        cmp     v2,y
        bne     @r
        lda     xv+1
        cmp     v1,y
        bne     @r
        lda     xv
        cmp     v0,y
        bne     @r
        lda     kk+3
        cmp     k3,y
        bne     @r
        lda     kk+2
        cmp     k2,y
        bne     @r
        lda     kk+1
        cmp     k1,y
        bne     @r
        lda     kk
        cmp     k0,y
        bne     @r
        lda     t1,y                    ; same value and key: the lower id first
        cmp     th
        bne     @r
        lda     t0,y
        cmp     tl
@r:     rts

weights:
        lda     nc
        bne     @any
        lda     #$FF                    ; no candidate: keep the ARGMAX
        sta     sreg
        sta     sreg+1
        tax
        ldz     #0
        rts
@any:   ldy     hp+1                    ; the best value
        lda     v0,y
        sta     vt
        lda     v1,y
        sta     vt+1
        lda     v2,y
        sta     vt+2
        lda     v3,y
        sta     vt+3
        lda     #0
        sta     sum
        sta     sum+1
        sta     sum+2
        sta     sum+3
        tax
@w:     stx     j
        ldy     hp+1,x
        sec                             ; d = v[0] - v[j]; z = d * inv_t >> 24 (1/256 nat)
        lda     vt
        sbc     v0,y
        sta     MULA
        lda     vt+1
        sbc     v1,y
        sta     MULA+1
        lda     vt+2
        sbc     v2,y
        sta     MULA+2
        lda     vt+3
        sbc     v3,y
        sta     MULA+3
        q_ld    _smp_invt
        q_st    MULB
        lda     #0
        sta     draw_u
        sta     draw_u+1
        lda     MULO+5
        ora     MULO+6
        ora     MULO+7
        bne     @z
        lda     MULO+4
        cmp     #$10                    ; z >= 4096: weight 0
        bcs     @z
        asl
        asl
        sta     tmp
        lda     MULO+3
        and     #63
        asl
        tay                             ; 2 * (z & 63)
        lda     MULO+3
        lsr
        lsr
        lsr
        lsr
        lsr
        lsr
        ora     tmp
        asl
        sta     tmp                     ; 2 * (z >> 6)
        lda     _smp_tab_lo
        sta     ptr1
        lda     _smp_tab_lo+1
        sta     ptr1+1
        lda     (ptr1),y
        sta     MULB
        iny
        lda     (ptr1),y
        sta     MULB+1
        lda     #0
        sta     MULB+2
        sta     MULB+3
        sta     MULA+2
        sta     MULA+3
        lda     _smp_tab_hi
        sta     ptr1
        lda     _smp_tab_hi+1
        sta     ptr1+1
        ldy     tmp
        lda     (ptr1),y
        sta     MULA
        iny
        lda     (ptr1),y
        sta     MULA+1
        lda     MULO+1                  ; w = product >> 15
        asl
        lda     MULO+2
        rol
        sta     draw_u
        lda     MULO+3
        rol
        sta     draw_u+1
@z:     ldx     j
        lda     draw_u
        sta     w0,x
        clc
        adc     sum
        sta     sum
        lda     draw_u+1
        sta     w1,x
        adc     sum+1
        sta     sum+1
        lda     sum+2
        adc     #0
        sta     sum+2
        inx
        cpx     nc
        beq     draw
        jmp     @w

draw:   q_ld    _smp_state              ; xorshift32: 13, 17, 5
        q_st    draw_u
        ldx     #13
        jsr     shl_u
        jsr     mix
        ldx     #17
        jsr     shr_u
        jsr     mix
        ldx     #5
        jsr     shl_u
        jsr     mix
        q_st    MULA                    ; u = state * sum >> 32
        q_ld    sum
        q_st    MULB
        q_ld    MULO+4
        q_st    draw_u
        lda     #0
        sta     cum
        sta     cum+1
        sta     cum+2
        tax
@d:     clc                             ; the first candidate whose running sum passes u
        lda     cum
        adc     w0,x
        sta     cum
        lda     cum+1
        adc     w1,x
        sta     cum+1
        lda     cum+2
        adc     #0
        sta     cum+2
        lda     draw_u+2
        cmp     cum+2
        bne     @c
        lda     draw_u+1
        cmp     cum+1
        bne     @c
        lda     draw_u
        cmp     cum
@c:     bcc     @found
        inx
        bra     @d
@found: ldy     hp+1,x
        ldx     t1,y
        lda     t0,y
        ldy     #0
        sty     sreg
        sty     sreg+1
        ldz     #0
        rts
