; smpcore.s: the MEGA65 sampler's choice (spec §7.6), bit for bit ssnail_format::sampler.
; (Not named sampler.s: cl65 compiles sampler.c through a temporary sampler.s.)
;
; uint32_t __fastcall__ smp_choose(uint16_t q): the token for the logits of position q, or
; $FFFFFFFF (no candidate: keep the ARGMAX). Steps:
;   1. the penalty window: distinct ids < V in token slots q-63..q (a 2048-bit filter rbits
;      makes "not in the window" one test);
;   2. the scan: DMA copies bytes 3 and 2 of 256 logits at a time into hi3/hi2 (source step 4);
;      a logit whose order key's high 16 bits are below the K-th candidate's cannot enter the
;      list; the others are read in full and inserted by key (window tokens skipped);
;   3. the candidates' Q16.16 values; the window tokens merged by (value, key, -id) with
;      their penalised values (exact: the penalty only lowers);
;   4. weights from the exp tables; one xorshift32 step; the cumulative-sum choice.
; Order key of an f32: bits | $80000000 when positive, ~bits when negative.
; 32-bit work uses the 45GS02's quad instructions (NEG NEG prefix, spec §M1) and the hardware
; multiplier ($D770: A, $D774: B, $D778: A x B, 64 bits; spec §M9).

        .p4510
        .import         _smp_out, _smp_nout, _smp_tokaddr, _smp_topk, _smp_pen_on
        .import         _smp_invt, _smp_pendiv, _smp_penmul, _smp_state
        .import         _smp_tab_hi, _smp_tab_lo, _dma_exec
        .importzp       sreg, ptr1
        .export         _smp_choose

FP      = $F0                           ; hw.s's flat pointer (base page, fixed)
MULA    = $D770
MULB    = $D774
MULO    = $D778

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
k0:     .res    65                      ; candidates, one array per byte: key,
k1:     .res    65
k2:     .res    65
k3:     .res    65
t0:     .res    65                      ; token (V <= 65536),
t1:     .res    65
v0:     .res    65                      ; Q16.16 value
v1:     .res    65
v2:     .res    65
v3:     .res    65
w0:     .res    64                      ; weight
w1:     .res    64
rl:     .res    64                      ; the window's distinct ids
rh:     .res    64

        .bss
thr:    .res    4                       ; the K-th candidate's key ($007FFFFF until K are found)
kk:     .res    4                       ; key of the token at hand
bits:   .res    4                       ; its f32 bits
xv:     .res    4                       ; its value
src:    .res    4
sum:    .res    4
cum:    .res    4
draw_u:      .res    4
qpos:      .res    2
slot:      .res    2
base:   .res    2
tl:     .res    1                       ; the token at hand
th:     .res    1
ix:     .res    1
nc:     .res    1                       ; candidates so far
nrec:   .res    1
cnt:    .res    1
tmp:    .res    1
j:      .res    1
expo:      .res    1

        .data
; F018B job with options: source MB, destination MB 0, source skip rate 4.0 (spec §M3)
job:    .byte   $0B, $80
job_mb: .byte   0
        .byte   $81, 0, $83, 4, $82, 0, 0
        .byte   0                       ; copy
job_n:  .word   0
job_s:  .word   0
job_sb: .byte   0
job_d:  .word   0
        .byte   0, 0
        .word   0

        .rodata
allff:  .byte   $FF, $FF, $FF, $FF
nanmin: .byte   $01, $00, $80, $FF      ; keys from here: positive NaN
exmin:  .byte   $00, $00, $80, $00      ; keys below: negative NaN, -inf
limit:  .byte   $00, $00, $00, $40      ; 2^30
bitmask: .byte  1, 2, 4, 8, 16, 32, 64, 128

        .code

; FP = A/X * 4 + the 32-bit base whose address is in ptr1... two fixed bases:
fp_tokbuf:
        jsr     idx4
        clc
        q_ld    FP
        q_adc   _smp_tokaddr
        q_st    FP
        rts
fp_out: jsr     idx4
        clc
        q_ld    FP
        q_adc   _smp_out
        q_st    FP
        rts
idx4:   sta     FP
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

; kk = key of bits; leaves Q = kk
mkkey:  q_ld    bits
        cpz     #$80
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
        sta     expo                       ; the exponent field
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
        inc     expo                       ; subnormal: exponent 1, no implicit bit
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

; entry X-1 moves to X (shiftk: key and token only, during the scan the values are not made yet)
shift:  lda     v0-1,x
        sta     v0,x
        lda     v1-1,x
        sta     v1,x
        lda     v2-1,x
        sta     v2,x
        lda     v3-1,x
        sta     v3,x
shiftk: lda     k0-1,x
        sta     k0,x
        lda     k1-1,x
        sta     k1,x
        lda     k2-1,x
        sta     k2,x
        lda     k3-1,x
        sta     k3,x
        lda     t0-1,x
        sta     t0,x
        lda     t1-1,x
        sta     t1,x
        rts

; entry X = kk, xv, tl/th; one more candidate unless the list is full
put:    lda     kk
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
        lda     xv
        sta     v0,x
        lda     xv+1
        sta     v1,x
        lda     xv+2
        sta     v2,x
        lda     xv+3
        sta     v3,x
        lda     nc
        cmp     _smp_topk
        bcs     @full
        inc     nc
@full:  rts

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

; DMA the byte at offset Y of 256 (job_n) logits from src into A/X
strided:
        sta     job_d
        stx     job_d+1
        tya
        clc
        adc     src
        sta     job_s
        lda     src+1
        adc     #0
        sta     job_s+1
        lda     src+2
        adc     #0
        tay
        lda     src+3
        adc     #0
        asl
        asl
        asl
        asl
        sta     tmp
        tya
        and     #$0F
        sta     job_sb
        tya
        lsr
        lsr
        lsr
        lsr
        ora     tmp
        sta     job_mb
        lda     #<job
        ldx     #>job
        jmp     _dma_exec

; a scan hit: token base + ix
consider:
        lda     ix
        sta     tl
        lda     base+1
        sta     th
        lda     tl
        ldx     th
        jsr     fp_out
        q_ldflat
        q_st    bits
        jsr     mkkey
        q_cmp   thr
        bcc     @no
        beq     @no
        q_cmp   nanmin
        bcs     @no
        lda     nrec
        beq     @ins
        jsr     inrec
        bcs     @no
@ins:   ldx     nc
@l:     cpx     #0
        beq     @put
        lda     kk+3
        cmp     k3-1,x
        bne     @d
        lda     kk+2
        cmp     k2-1,x
        bne     @d
        lda     kk+1
        cmp     k1-1,x
        bne     @d
        lda     kk
        cmp     k0-1,x
@d:     bcc     @put
        beq     @put
        jsr     shiftk
        dex
        bra     @l
@put:   jsr     put
        lda     nc
        cmp     _smp_topk
        bne     @no
        tax
        lda     k0-1,x
        sta     thr
        lda     k1-1,x
        sta     thr+1
        lda     k2-1,x
        sta     thr+2
        lda     k3-1,x
        sta     thr+3
@no:    rts

; C = 1: the new entry (xv, kk, tl/th) goes before entry X-1
better: lda     v3-1,x
        eor     #$80
        sta     tmp
        lda     xv+3
        eor     #$80
        cmp     tmp
        bne     @r
        lda     xv+2
        cmp     v2-1,x
        bne     @r
        lda     xv+1
        cmp     v1-1,x
        bne     @r
        lda     xv
        cmp     v0-1,x
        bne     @r
        lda     kk+3
        cmp     k3-1,x
        bne     @r
        lda     kk+2
        cmp     k2-1,x
        bne     @r
        lda     kk+1
        cmp     k1-1,x
        bne     @r
        lda     kk
        cmp     k0-1,x
        bne     @r
        lda     t1-1,x                  ; same value and key: the lower id first
        cmp     th
        bne     @r
        lda     t0-1,x
        cmp     tl
@r:     rts

; u <<= X or u >>= X (quad shifts of memory)
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
@c:     lda     qpos+1                     ; again while s <= q
        cmp     slot+1
        bcc     scan
        bne     @win
        lda     qpos
        cmp     slot
        bcs     @win

scan:   lda     #$FF
        sta     thr
        sta     thr+1
        lda     #$7F
        sta     thr+2
        lda     #0
        sta     thr+3
        sta     base
        sta     base+1
chunk:  sec                             ; V - base: 0 done, < 256 a last, padded chunk
        lda     _smp_nout
        sbc     base
        sta     tmp
        lda     _smp_nout+1
        sbc     base+1
        tax
        lda     _smp_nout+2
        sbc     #0
        bcc     @end                    ; past the end
        bne     @full
        txa
        bne     @full
        lda     tmp
        bne     @part
@end:   jmp     values
@part:  sta     job_n
        lda     #0
        sta     job_n+1
        lda     #$FF                    ; key $0000xxxx: never a hit
        ldx     #0
@pad:   sta     hi3,x
        sta     hi2,x
        inx
        bne     @pad
        bra     @dma
@full:  lda     #0
        sta     job_n
        lda     #1
        sta     job_n+1
@dma:   lda     base
        ldx     base+1
        jsr     fp_out
        q_ld    FP
        q_st    src
        ldy     #3
        lda     #<hi3
        ldx     #>hi3
        jsr     strided
        ldy     #2
        lda     #<hi2
        ldx     #>hi2
        jsr     strided
        ldx     #0
@scan:  lda     hi3,x
        bmi     @mi
        ora     #$80                    ; key byte 3 of a positive float
        cmp     thr+3
        bcc     @nx
        bne     @hit
        lda     hi2,x                   ; key byte 2 = raw byte 2
        cmp     thr+2
        bcs     @hit
@nx:    inx
        bne     @scan
        inc     base+1
        beq     values
        jmp     chunk
@mi:    eor     #$FF                    ; key byte 3 of a negative float
        cmp     thr+3
        bcc     @nx
        bne     @hit
        lda     hi2,x
        eor     #$FF
        cmp     thr+2
        bcc     @nx
@hit:   stx     ix
        jsr     consider
        ldx     ix
        bra     @nx

values: ldx     #0                      ; the candidates' values from their keys
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

merge:  ldx     #0                      ; the window's tokens with their penalised values
@m:     cpx     nrec
        bne     @one
        jmp     weights
@one:   stx     j
        lda     rl,x
        sta     tl
        lda     rh,x
        sta     th
        ldx     th
        lda     tl
        jsr     fp_out
        q_ldflat
        q_st    bits
        jsr     mkkey
        q_cmp   exmin
        bcc     @skip
        q_cmp   nanmin
        bcs     @skip
        jsr     fixed
        jsr     penal
        ldx     nc
@l:     cpx     #0
        beq     @put
        jsr     better
        bcc     @put
        jsr     shift
        dex
        bra     @l
@put:   jsr     put
@skip:  ldx     j
        inx
        bra     @m

weights:
        lda     nc
        bne     @any
        lda     #$FF                    ; no candidate: keep the ARGMAX
        sta     sreg
        sta     sreg+1
        tax
        ldz     #0
        rts
@any:   lda     #0
        sta     sum
        sta     sum+1
        sta     sum+2
        sta     sum+3
        tax
@w:     stx     j
        sec                             ; d = v[0] - v[j]; z = d * inv_t >> 24 (1/256 nat)
        lda     v0
        sbc     v0,x
        sta     MULA
        lda     v1
        sbc     v1,x
        sta     MULA+1
        lda     v2
        sbc     v2,x
        sta     MULA+2
        lda     v3
        sbc     v3,x
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
@found: lda     t1,x
        sta     tmp
        lda     t0,x
        ldx     tmp
        ldy     #0
        sty     sreg
        sty     sreg+1
        ldz     #0
        rts
