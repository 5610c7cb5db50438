; softvec65.s: single multiply and add for the vector instructions on the 45GS02 (cc65 builds;
; softvec.c and softattn.c with softfloat.c stay the definition, used on the PC and with
; -DSC_C_GEMV). Hardware numerics (docs/spec/numerics.md §5.3): one rounding to nearest even.
;
; Calling convention: operands and result in zero page (sv_a, sv_b -> sv_r), so a hot loop never
; passes 32-bit values on cc65's C stack. The fast paths take normal operands (and zeros where
; the answer is a zero or the other operand) and normal results; anything else -- NaN, infinity,
; subnormal operands, products below the normal range -- goes to sv_slow_mul / sv_slow_add (C:
; sf_mul / sf_add themselves); a sum below the normal range is exact and packed here (ad_sub0).
; A rounding that carries past the largest exponent gives infinity, as softfloat.c's pack.
;
; The steps mirror softfloat.c so the bits agree by construction: the working significand has
; its leading 1 at bit 31 and 8 guard bits, every bit shifted out below them jammed into bit 0,
; then rounded to nearest even on the guard byte.
;
; The kernels (sv_k_*) run softvec.c's and softattn.c's inner loops over sc_w's buffers with
; these (pointers and count in sv_p, sv_q, sv_n).

        .p4510
        .include        "quad.inc"              ; quad instructions, the multiplier
        .include        "dmajob.inc"            ; a job list's address, its start
        .import         _sv_slow_mul, _sv_slow_add, _sv_slow_f16, _sv_slow_cvt, _sv_slow_sqrt
        .exportzp       _sv_a, _sv_b, _sv_r, _sv_c, _sv_acc, _sv_p, _sv_q, _sv_n, _sv_h, _sv_tabd
        .export         _sv_mul, _sv_mulz, _sv_add, _sv_addz, _sv_f16, _sv_sqrt
        .export         _sv_tab1, _sv_k_tabmul, _sv_k_sumsq, _sv_k_scale, _sv_k_scale2, _sv_k_rope
        .export         _sv_k_dot, _sv_k_vop, _sv_k_tab, _sv_k_expsum
        .export         _sv_k_argmax, _sv_k_cvt16, _sv_k_sum, _sv_k_sumsqd, _sv_k_lnout
        .export         _sv_k_deq, _sv_rw, _sv_rh, _sv_rq
        .export         _sv_k_scores, _sv_k_avs, _sv_ra, _sv_rs, _sv_rb, _sv_rl, _sv_rn, _sv_m, _sv_qb, _sv_kb, _sv_sp
        .export         _sv_k_attn, _sv_k_smax, _sa_qh, _sa_kh, _sa_vh, _sa_z, _sa_nh, _sa_grp, _sa_hq
        .import         _sm_read, _sm_write, _sf_recip, _sv_exp_tab, _sc_w, pusheax, pushax
        .import         _sa_qb, _sa_sp, _sa_scale ; (softattn.c)
        .import         _sc_poll, _sc_stop, _sc_tick
        .import         _soft_mem_end, popeax   ; sc_span's end of SSNAIL memory, cc65's argument pop
        .importzp       sreg
        .export         _sc_span, _sv_span4, _sv_more, _sv_from0
        .import         _sv_cn, _sv_at, _sv_vmax ; sv_more's chunk state (softvec.c)
        .include        "ssnail_regs.inc"       ; IMG_BASE, SS_ERR_ADDRESS
        .import         _sv_vend                ; the end of sv_k_avs's buffer (softattn.c)
        .import         SC_NEAR_DELTA           ; a near buffer's chip RAM address is its own + this

; Quad loads and stores (quad.inc): LDQ (bp),Z adds Z, STQ (bp) does not. LDQ leaves a byte in
; Z: inside this file Z is scratch, and it is 0 again before anything else runs (cc65's code and
; softmem_m65.s expect Z = 0): before each jump to a C fallback and each kernel's return.

; a single from (ptr) (+ ofs bytes) into a zero-page f32, and back
.macro  getf    dst, ptr, ofs
        ldz     #ofs
        ldqi    ptr
        stq     dst
.endmacro
.macro  putf    ptr, src
        ldq     src
        stqi    ptr
.endmacro
.macro  movf    dst, src
        ldq     src
        stq     dst
.endmacro

; mexp written out (the hot kernels: a JSR and RTS and the caller's test cost about 12 cycles):
; ex = ex + A − 127 when that is 1..253, else on to `fail`
.macro  mexpm   fail
        clc
        adc     ex
        bcs     :+
        cmp     #128
        bcc     fail                    ; below 1
        sbc     #127                    ; (C = 1)
        bra     :++
:       cmp     #125
        bcs     fail                    ; 254 and above
        adc     #129                    ; (C = 0: 256 + A − 127, no carry)
:       sta     ex
.endmacro

; tp = the table at ttab (bank tbank) + 8·i, flat, from A = Y = the segment i: 8·i's high byte is
; i >> 5. Written out where it is used (table, SILUMUL's kernel): a subroutine cost GELU's
; segments 0.9 M cycles a MiniLM sentence. With `nobank`, tp+2 and tp+3 are left as they are
; (SILUMUL's kernel sets them once: no table crosses a 64 KB boundary, asserted at tflat).
.macro  seg_tp  nobank
        lsr     a
        lsr     a
        lsr     a
        lsr     a
        lsr     a
        tax
        tya                             ; 8·i's low byte
        asl     a
        asl     a
        asl     a
        clc
        adc     ttab
        sta     tp
        txa
        adc     ttab+1
        sta     tp+1
.ifblank nobank
        lda     tbank
        adc     #0
        sta     tp+2
        lda     tbank+1
        sta     tp+3
.endif
.endmacro

        .zeropage
_sv_a:  .res    4                       ; operands (bit patterns)
_sv_b:  .res    4
_sv_r:  .res    4                       ; result
_sv_c:  .res    4                       ; a kernel's scalar (RMSNORM's r, ATTN's weight)
_sv_acc:.res    4                       ; a kernel's running sum
_sv_p:  .res    2                       ; kernel pointers: x (results overwrite it), y
_sv_q:  .res    2
_sv_n:  .res    1                       ; elements (kernels), 1..255
_sv_h:  .res    2                       ; an F16 for sv_f16
_sv_tabd: .res  2                       ; the kernel's function table (struct sv_tab)
ex:     .res    1                       ; exponent: the result's (the larger operand's)
ey:     .res    1                       ; the smaller addend's
rs:     .res    1                       ; the result's sign (bit 7)
stk:    .res    1                       ; nonzero: bits lost below the guard byte
wx:     .res    4                       ; working significand: guard byte, 24 bits
wy:     .res    4
v:      .res    4                       ; the table's argument
kv:     .res    4                       ; order keys
kt:     .res    4
opp:    .res    1                       ; bit 7: the addends' signs differ
tp:     .res    4                       ; the table segment's c0, c1 (flat address)
f16:    .res    1                       ; kernels: 0 F32 second operand, else F16 (LAYERNORM:
                                        ; b's offset)
t16:    .res    1                       ; hdot: the half's top byte (mbyte: a temporary)
; The running sum of a dot product or a sum kept unpacked between its steps (the kernels' A form):
; significand wx bytes 1-3 (bit 23 the leading 1), biased exponent ae (1..254), sign as (bit 7),
; while it is a normal number (aok = 1); else it is packed in sv_acc (aok = 0).
ae:     .res    1
as:     .res    1
aok:    .res    1
ukeep:  .res    1                       ; bit 7: a normal rounded result stays unpacked: a sum in
                                        ; the A form; bit 6 with it: a product goes to fadd (which
                                        ; clears bit 6: still set after a step, the product was
                                        ; packed in sv_r)
sc_t:   .res    2                       ; sv_k_scores's and sv_k_avs's row and format
sc_f16: .res    1
kstr:   .res    1                       ; mulsec: the step from one element of q to the next
tbelow: .res    1                       ; the function table's below and above rules
tabove: .res    1
fxok:   .res    1                       ; 1: the kernels may take the segment from P

        .bss
kraw:   .res    1                       ; bit 7: hdot's sum left unpacked (sv_k_scores)
; sv_k_scores's operands (softvec65.h) and its own count and format
_sv_ra: .res    4
rs_bk:  .res    1                       ; sv_rs's bits 16-19 and 20-27 (rsetup, for getrow)
rs_mb:  .res    1
_sv_rs: .res    4
_sv_m:  .res    4
_sv_rb: .res    2
_sv_rl: .res    2
_sv_qb: .res    2
_sv_kb: .res    2
_sv_sp: .res    2
_sv_rn: .res    1
_sv_rw: .res    1                       ; ROPE: pairs to the (c, s) table's end, its pairs, its start
_sv_rh: .res    1
_sv_rq: .res    2
; the function table, a copy of softvec.c's struct sv_tab: lo (made −lo), hi, k, the table
; (c0, c1 per segment), below and above rules (FN_OUT_*); then lo's and hi's order keys
; (below and above in zero page, above)
tmlo:   .res    4
thi:    .res    4
tk:     .res    4
ttab:   .res    2                       ; the table's SV_TAB_* number, then its flat address
tbank:  .res    2                       ; (bits 16-31)
tklo:   .res    4
tkhi:   .res    4
tcur:   .res    2                       ; the descriptor set up last (0: none)
twin:   .res    4                       ; min(|lo|, hi) when lo < 0 < hi, else 0: |x| below it
                                        ; is inside the table's range
tgelu:  .res    1                       ; nonzero: the table is GELU's (gseg)
fmk:    .res    4                       ; k's significand (24 bits)
fc0:    .res    4                       ; floor(|lo|·k·2^24)
        .data                           ; (the test PRG's BSS area is full)
; sv_k_attn's operands (softattn.c): q's, K's, V's and the output's head (sa_v + 0, 4, 8, 12),
; the heads, the heads a KV head serves, q's bytes a head; its own state
sa_v:
_sa_qh: .res    4
_sa_kh: .res    4
_sa_vh: .res    4
_sa_z:  .res    4
_sa_nh: .res    1
_sa_grp: .res   1
_sa_hq: .res    1
sa_g:   .res    1                       ; heads of the KV head done
sa_f:   .res    1                       ; the format

        .code

; ---------------------------------------------------------------------------------------------
; sc_span(addr, len) (softcore_int.h; softcore.c's C where this file is not built): SC_OK when
; IMG_BASE <= addr <= soft_mem_end and len <= soft_mem_end − addr, else SS_ERR_ADDRESS. cc65's
; __fastcall__: len in A/X/sreg, addr on the C stack. Every instruction's range checks call it
; (cc65's 32-bit compares and stack loads made it ≈ 250 cycles a call in C).
_sc_span:
        ldy     sreg
        ldz     sreg+1
spanq:  stq     kt                      ; len
        jsr     popeax
        ldy     sreg
        ldz     sreg+1                  ; Q = addr
        cpz     #IMG_BASE >> 24         ; (IMG_BASE's low 24 bits are 0)
        bcc     @bad
        stq     kv
        ldq     _soft_mem_end
        sec
        sbcq    kv                      ; end − addr: a borrow when addr > end
        bcc     @bad
        sec
        sbcq    kt                      ; a borrow when len > end − addr
        bcc     @bad
        lda     #0                      ; SC_OK
        .byte   $2C                     ; (BIT abs: skips the LDA #)
@bad:   lda     #SS_ERR_ADDRESS
        ldx     #0
        ldz     #0
        rts
        .assert (IMG_BASE & $FFFFFF) = 0, error, "sc_span compares IMG_BASE's top byte alone"

; sv_span4(a, n0) (softvec65.h): sc_span(a, 4·n0), the product saturated to 2^32 − 1 (which no
; span from IMG_BASE on fits), as softvec.c's span4 with sc_mul_sat
_sv_span4:
        ldy     sreg
        ldz     sreg+1
        cpz     #$40
        bcs     @sat                    ; n0 >= 2^30
        aslq
        aslq
        bra     spanq
@sat:   lda     #$FF
        tax
        tay
        taz
        bra     spanq

; sv_from0() (softvec65.h): a chunk loop's start, sv_at = sv_cn = 0 (Z = 0 from the C)
_sv_from0:
        lda     #0
        tax
        tay
        stq     _sv_at
        sta     _sv_cn
        sta     _sv_cn+1
        rts

; sv_more(len) (softvec65.h; softvec.c's more() in C where this file is not built): sv_at +=
; sv_cn (the chunk done); then 0 when sv_at = len or RUN/STOP (SC_POLL), else sv_cn = min(len −
; sv_at, sv_vmax) and 1; sv_at <= len. In C its 32-bit compares and difference were ≈ 700 cycles
; a chunk.
_sv_more:
        ldy     sreg
        ldz     sreg+1
        stq     kv                      ; len (kv: the order keys' scratch, free between kernels)
        lda     _sv_cn
        ldx     _sv_cn+1
        ldy     #0
        ldz     #0
        clc
        adcq    _sv_at
        stq     _sv_at
        ldq     kv
        sec
        sbcq    _sv_at                  ; Q = len − at, the elements left
        stq     kt
        ora     kt+1
        ora     kt+2
        ora     kt+3
        beq     @no
        lda     _sc_stop                ; SC_POLL()
        bne     @no
        inc     _sc_tick
        bne     @go
        ldz     #0
        jsr     _sc_poll
        tax
        bne     @no
@go:    lda     kt+2
        ora     kt+3
        bne     @max
        lda     kt
        cmp     _sv_vmax
        lda     kt+1
        sbc     _sv_vmax+1
        bcs     @max                    ; left >= vmax
        lda     kt
        ldx     kt+1
        bra     @set
@max:   lda     _sv_vmax
        ldx     _sv_vmax+1
@set:   sta     _sv_cn
        stx     _sv_cn+1
        lda     #1
        .byte   $2C                     ; (BIT abs: skips the LDA #)
@no:    lda     #0
        ldx     #0
        ldz     #0
        rts

; ---------------------------------------------------------------------------------------------
; sv_r = single(sv_a · sv_b) for C: Z = 0 again on return (sv_mul leaves it as scratch)
_sv_mulz:
        jsr     _sv_mul
        ldz     #0
        rts
; sv_r = single(sv_a + sv_b) for C, the same way
_sv_addz:
        jsr     _sv_add
        ldz     #0
        rts

; sv_r = single(sv_a · sv_b)
_sv_mul:
        lda     _sv_a+2                 ; exponent of a (C: its sign)
        asl     a
        lda     _sv_a+3
        rol     a
        lbeq    mul_azero
        cmp     #$FF
        lbeq    mul_slow
        sta     ex
        lda     _sv_b+2
        asl     a
        lda     _sv_b+3
        rol     a
        lbeq    mul_bzero
        cmp     #$FF
        lbeq    mul_slow
        sta     ey
        ; the biased exponent before normalising, ex + ey − 127, must be 1..253 (else slow)
        clc
        adc     ex
        tax
        bcs     @hi
        cpx     #128
        lbcc    mul_slow
        txa
        sbc     #127                    ; C = 1
        bra     @eok
@hi:    cpx     #125
        lbcs    mul_slow
        txa
        adc     #129                    ; C = 0: 256 + low − 127
@eok:   sta     ex
        ; 24-bit significands: the 48-bit product lies in [2^46, 2^48)
        lda     _sv_b
        sta     MULB
        lda     _sv_b+1
        sta     MULB+1
        lda     _sv_b+2
        ora     #$80
        sta     MULB+2
        lda     _sv_a+3
        eor     _sv_b+3
        and     #$80
        sta     rs
mul_a:  lda     _sv_a
        sta     MULA
        lda     _sv_a+1
        sta     MULA+1
        lda     _sv_a+2
        ora     #$80
        sta     MULA+2
        lda     #0
        sta     MULA+3
        sta     MULB+3
mulo:   lda     MULO+5                  ; (the kernels' way in: MULA and MULB written, ex and rs
        bmi     mul_top47               ; set)
        ; leading 1 at bit 46: the top 32 bits of the product shifted one place left
        lda     MULO+1
        asl     a                       ; (C: its bit 7, into bit 0 of the guard byte)
        ora     MULO
        sta     stk
        ldq     MULO+2
        rolq
        jmp     rndq
mul_top47: inc     ex                      ; leading 1 at bit 47: one exponent up
        lda     MULO+1
        ora     MULO
        sta     stk
        ldq     MULO+2
        ; Q = [guard byte A, significand X:Y:Z] (Z.7 set)
        jmp     rndq
mul_azero: lda     _sv_a+2                 ; a = ±0 times a finite b: a signed zero
        and     #$7F
        ora     _sv_a+1
        ora     _sv_a
        bne     mul_slow
        lda     _sv_b+2
        asl     a
        lda     _sv_b+3
        rol     a
        cmp     #$FF
        beq     mul_slow
        bra     mul_zero
mul_bzero: lda     _sv_b+2
        and     #$7F
        ora     _sv_b+1
        ora     _sv_b
        bne     mul_slow
mul_zero:  lda     _sv_a+3
        eor     _sv_b+3
        and     #$80
        sta     _sv_r+3
        lda     #0
        sta     _sv_r+2
        sta     _sv_r+1
        sta     _sv_r
        rts
mul_slow:  ldz     #0
        jmp     _sv_slow_mul

; Q = [guard byte A, significand X:Y:Z] (Z.7 set), stk, ex (1..254), rs: rounded to nearest even
; and packed into sv_r in the registers (as round and pack below, without the trip through wx)
rndq:   cmp     #$80
        bcc     @pk                     ; below half
        bne     @up                     ; above half
        lda     stk                     ; half and nothing below it: a tie
        bne     @up
        txa
        lsr     a
        bcc     @pk                     ; even: stays
@up:    inx
        bne     @pk
        iny
        bne     @pk
        inz
        bne     @pk
        ldz     #$80                    ; the next binade, or past exponent 254 infinity
        inc     ex
        lda     ex
        cmp     #$FF
        bne     @pk
        ldz     #0
        jmp     inf
@pk:    bit     ukeep
        bmi     upkq
pkq:    stx     _sv_r
        sty     _sv_r+1
        lda     ex
        lsr     a                       ; C = the exponent's low bit
        ora     rs
        sta     _sv_r+3
        tza
        bcs     :+
        and     #$7F
:       sta     _sv_r+2
        rts

; ---------------------------------------------------------------------------------------------
; Rounding and packing: wx (leading 1 at bit 31), stk, ex (1..254), rs -> sv_r. Ties to even;
; a carry out of the 24 bits is the next binade, and past exponent 254 infinity.
round:  lda     wx
        ldy     stk
        beq     :+
        ora     #1                      ; sticky
:       cmp     #$80
        bcc     pack
        bne     @up
        lda     wx+1                    ; exactly half: up only to an even last place
        lsr     a
        bcc     pack
@up:    inc     wx+1
        bne     pack
        inc     wx+2
        bne     pack
        inc     wx+3
        bne     pack
        lda     #$80
        sta     wx+3
        inc     ex
        lda     ex
        cmp     #$FF
        beq     inf
pack:   bit     ukeep
        bmi     upks
ptail:  lda     ex                      ; (aput's way in: ex and rs from the A form)
        lsr     a                       ; C = the exponent's low bit
        ora     rs
        sta     _sv_r+3
        lda     wx+3
        bcs     :+
        and     #$7F
:       sta     _sv_r+2
        lda     wx+2
        sta     _sv_r+1
        lda     wx+1
        sta     _sv_r
        rts
; ukeep: a product (bit 6) to fadd, a sum to the A form, from Q's X:Y:Z (rndq) or wx (pack)
upkq:   bvs     fadd                    ; (its offset patched by sv_k_sumsq: 8 bits, asserted)
        .assert fadd - (upkq + 2) < 128 && ymj - (upkq + 2) < 128, error, "upkq's BVS: 8 bits"
upka:   stx     wx+1
        sty     wx+2
        stz     wx+3
upks:   lda     a:ex                    ; (3 bytes: sv_k_tabmul puts a JMP to ymul here while it
        sta     ae                      ; runs, the sum's rounding then goes on into the product)
        lda     rs
        sta     as
        lda     #1
        sta     aok
        rts
inf:    lda     rs
        ora     #$7F
        sta     _sv_r+3
        lda     #$80
        sta     _sv_r+2
        lda     #0
        sta     _sv_r+1
        sta     _sv_r
        rts

sqj:    jmp     sqadd                   ; (upkq's BVS while sv_k_sumsq runs: its squares' sum)
ymj:    jmp     yreg                    ; (upkq's BVS while sv_k_scale2 runs: x·c times y)

; A step of a kernel's running sum: acc = single(acc + the rounded product in X:Y:Z, ex, rs (or an
; addend unpacked so)), as sv_add with acc as a, the product as b: the larger magnitude (acc when
; they are equal) to wx, ex, rs, the other to wy, ey, and on into sv_add's alignment. The sum
; ends in the A form (aok) when it is normal, else packed in sv_r.
fadd:   lda     #$80                    ; the sum's rounding: to the A form
        sta     ukeep
        lda     aok
        beq     @pk
        lda     rs                      ; (aok 0 again below: until the sum's rounding)
        eor     as
        sta     opp
        lda     ex
        cmp     ae
        bcc     @ab
        bne     @pb
        cpz     wx+3
        bcc     @ab
        bne     @pb
        cpy     wx+2
        bcc     @ab
        bne     @pb
        cpx     wx+1
        bcc     @ab
        beq     @ab
@pb:    lda     wx+1                    ; the product the larger: the sum to wy
        sta     wy+1
        lda     wx+2
        sta     wy+2
        lda     wx+3
        sta     wy+3
        stx     wx+1
        sty     wx+2
        stz     wx+3
        sec                             ; the places apart: ex − ae
        lda     ex
        sbc     ae
        bra     @go
@ab:    stx     wy+1                    ; the sum the larger (it stays in wx)
        sty     wy+2
        stz     wy+3
        sec                             ; the places apart: ae − ex; the sum's exponent and
        lda     ae                      ; sign are the result's
        sbc     ex
        ldy     ae
        sty     ex
        ldy     as
        sty     rs
@go:    ldy     #0
        sty     aok
        sty     wx
        sty     wy
        sty     stk
        tay                             ; (Z: no places)
        jmp     addd
@pk:    lda     _sv_acc+3               ; the sum packed: ±0 + the product is the product; else
        and     #$7F                    ; the product packed in sv_r (ukeep bit 6 set again: the
        ora     _sv_acc+2               ; kernel's kgen adds the two packed)
        ora     _sv_acc+1
        ora     _sv_acc
        bne     @pq
        jmp     upka
@pq:    lda     #$C0
        sta     ukeep
        jmp     pkq

;  RMSNORM's sum of squares: acc = single(acc + p) for a rounded square p (X:Y:Z, ex; rs = 0)
; and a sum in the A form, both positive normal numbers (every square is +0 or above, so the
; sum from +0 never goes below +0 and is never −0): no signs, no subtraction, no cancellation, and
; with equal exponents either order gives the same sum, so only the exponents are compared. The
; smaller goes to wy and the larger to wx, each [guard byte 0, 24-bit significand], and the
; smaller is shifted k = the exponents' difference places right: k = 0-7 by the LSRQ chain (the
; guard byte takes the k bits, nothing lost), 8-24 by the multiplier (wy·2^(32−k): its top four
; bytes are wy >> k, its low four the bits lost, all of them into stk), and from 25 on the smaller
; is below half the larger's last place and the sum is the larger. A carry out of bit 31 is one
; place right (the bit out jammed into the guard byte), one exponent up, 255 infinity (packed,
; aok 0); then rndq rounds to nearest even into the A form as fadd's sum does. A sum still packed
; (aok 0: the first square, or after a square that was not normal) takes fadd's way.
; The multiplier's product follows its inputs with no trigger (docs/spec/mega65.md §M9).
sqadd:  lda     aok
        lbeq    fadd
        lda     #$80                    ; the sum's rounding: to the A form
        sta     ukeep
        lda     #0
        sta     aok                     ; (until the sum's rounding)
        sta     wx
        sta     wy
        sta     stk
        sec
        lda     ae
        sbc     ex
        bcs     @sl                     ; k = ae − ex: the sum the larger (or as large)
        eor     #$FF
        adc     #1                      ; (C = 0) k = ex − ae: the square the larger, the sum to
        sta     ey                      ; wy, the square to wx (its exponent the result's)
        lda     wx+1
        sta     wy+1
        lda     wx+2
        sta     wy+2
        lda     wx+3
        sta     wy+3
        stx     wx+1
        sty     wx+2
        stz     wx+3
        bra     @k
@sl:    sta     ey
        lda     ae
        sta     ex
        stx     wy+1
        sty     wy+2
        stz     wy+3
@k:     ldx     ey
        cpx     #25
        bcs     @big
        cpx     #8
        bcs     @mul
        lda     shofs7,x
        sta     @br+1
        ldq     wy
@br:    bra     *+2                     ; (patched: skips 7 − k of the shifts)
        LSRQ7
@add:   clc
        adcq    wx
        bcc     @rnd
        rorq                            ; a 33-bit sum: one place right, the bit out jammed
        bcc     :+
        ora     #1
:       pha
        lda     ex
        inc     a
        sta     ex
        cmp     #$FF
        pla
        bcs     @inf                    ; (PLA leaves C)
@rnd:   jmp     rndq
@inf:   jmp     inf
@big:   ldq     wx                      ; the larger as it is (guard byte 0: rndq keeps it)
        bra     @rnd
@mul:   lda     sqm1-8,x                ; MULB = 2^(32 − k), MULA = wy
        sta     MULB+1
        lda     sqm2-8,x
        sta     MULB+2
        lda     sqm3-8,x
        sta     MULB+3
        lda     #0
        sta     MULB
        ldq     wy
        stq     MULA
        lda     MULO                    ; the bits shifted out
        ora     MULO+1
        ora     MULO+2
        ora     MULO+3
        sta     stk
        ldq     MULO+4
        bra     @add

; sv_add's special operands (A = the exponent − 1, 254 or 255 here)
ad_spb:   cmp     #$FE                    ; (A = ey − 1) ey = 255: b inf or NaN
        lbeq    ad_slow
        lda     ex                      ; ey = 0: a inf or NaN is slow, else b = ±0 or
        cmp     #$FF                    ; subnormal (ad_bzero)
        lbne    ad_bzero
        lbra    ad_slow
ad_spa:   cmp     #$FE                    ; (A = ex − 1) ex = 255: a inf or NaN
        lbeq    ad_slow
        lbra    ad_azero               ; ex = 0 with b normal

; ---------------------------------------------------------------------------------------------
; sv_r = single(sv_a + sv_b)
_sv_add:
        lda     _sv_a+2
        asl     a
        lda     _sv_a+3
        rol     a
        sta     ex
        lda     _sv_b+2
        asl     a
        lda     _sv_b+3
        rol     a
        sta     ey
        dec     a                       ; exponents 1..254 (normal) -> 0..253
        cmp     #$FE
        lbcs    ad_spb                  ; b zero, subnormal, inf or NaN
        lda     ex
        dec     a
        cmp     #$FE
        lbcs    ad_spa                  ; a zero, subnormal, inf or NaN (b normal)
        ; order by magnitude: a is the larger when |a| >= |b|
        lda     ex
        cmp     ey
        bne     ad_ord
        lda     _sv_a+2                 ; equal exponents: bit 7 of byte 2 equal too
        cmp     _sv_b+2
        bne     ad_ord
        lda     _sv_a+1
        cmp     _sv_b+1
        bne     ad_ord
        lda     _sv_a
        cmp     _sv_b
ad_ord:   bcc     ad_blg
        ldq     _sv_a                   ; a the larger: its significand to wx (the leading 1
        sta     wx+1                    ; set), its sign to rs; b to wy
        stx     wx+2
        tya
        ora     #$80
        sta     wx+3
        tza
        and     #$80
        sta     rs
        ldq     _sv_b
        bra     ad_ldy
ad_blg:   lda     ex                      ; b the larger: the exponents swap with the operands
        ldy     ey
        sta     ey
        sty     ex
        ldq     _sv_b
        sta     wx+1
        stx     wx+2
        tya
        ora     #$80
        sta     wx+3
        tza
        and     #$80
        sta     rs
        ldq     _sv_a
ad_ldy:   sta     wy+1                    ; Q = the smaller: its significand to wy, opp
        stx     wy+2
        tya
        ora     #$80
        sta     wy+3
        tza
        and     #$80
        eor     rs
        sta     opp                     ; bit 7: the signs differ
        lda     #0
        sta     wx
        sta     wy
        sta     stk
        ; align the smaller: wy >>= ex − ey, the bits shifted out into stk (fadd joins below)
addal:  sec
        lda     ex
        sbc     ey
addd:   lbeq    ad_aligned              ; (fadd joins here with A = the places, Z set on 0)
        cmp     #32
        bcc     ad_bytes
        lda     #1                      ; all of it below the guard byte: sticky only
        sta     wy
        lda     #0
        sta     wy+1
        sta     wy+2
        sta     wy+3
        lbra    ad_aligned
ad_bytes: tax                             ; places, 1..31
        cpx     #8
        bcs     ad_bl
        ; 1-7 places: the guard byte is 0, so the shift loses only zeros (no sticky); a chain
        ; of LSRQs entered through a patched BRA, then the sum from Q directly
        lda     shofs7,x
        sta     ad_br+1
        ldq     wy
ad_br:    bra     *+2                     ; (patched: skips 7 - d of the shifts)
        LSRQ7
        bit     opp
        bmi     ad_fsub
        clc
        adcq    wx                      ; wy + wx: the same sum as wx + wy
        jmp     ad_sum
ad_fsub:  stq     wy
        jmp     ad_sub
ad_bl:    cpx     #8
        bcc     ad_bits
        lda     wy                      ; a whole byte out
        ora     stk
        sta     stk
        lda     wy+1
        sta     wy
        lda     wy+2
        sta     wy+1
        lda     wy+3
        sta     wy+2
        lda     #0
        sta     wy+3
        txa
        sbc     #8                      ; C = 1
        tax
        bne     ad_bl
        bra     ad_jam
ad_bits:  ; by 1-7 places with the multiplier: wy·2^(8−k), bytes 1-4 (byte 0 is shifted out)
        lda     pow2,x
        sta     MULB
        lda     #0
        sta     MULB+1
        sta     MULB+2
        sta     MULB+3
        ldq     wy
        stq     MULA
        lda     MULO
        ora     stk
        sta     stk
        ldq     MULO+1
        stq     wy
ad_jam:   lda     stk
        beq     ad_aligned
        lda     wy
        ora     #1
        sta     wy
        lda     #0
        sta     stk
ad_aligned:
        bit     opp
        bmi     ad_sub
        clc
        ldq     wx
        adcq    wy
ad_sum:   lbcc    rndq                    ; no carry: Q is the sum (stk is 0 here: the bits
                                        ; lost in the alignment are in the guard byte)
        rorq                            ; a 33-bit sum: one place right (C = 1 the new bit 31)
        bcc     :+
        ora     #1                      ; the bit shifted out, jammed
:       stq     wx
        inc     ex
        lda     ex
        cmp     #$FF
        bne     ad_done
        jmp     inf
ad_done:  jmp     round
ad_slow:  ldz     #0
        jmp     _sv_slow_add
ad_bzero: lda     _sv_b+2                 ; b = ±0: the sum is a (when a is normal)
        and     #$7F
        ora     _sv_b+1
        ora     _sv_b
        bne     ad_slow
        lda     ex
        beq     ad_slow
        ldx     #0
        bra     ad_copy
ad_azero: lda     _sv_a+2                 ; a = ±0, b normal: the sum is b
        and     #$7F
        ora     _sv_a+1
        ora     _sv_a
        bne     ad_slow
        ldx     #4
ad_copy:  lda     _sv_a,x
        sta     _sv_r
        lda     _sv_a+1,x
        sta     _sv_r+1
        lda     _sv_a+2,x
        sta     _sv_r+2
        lda     _sv_a+3,x
        sta     _sv_r+3
        rts
ad_sub0: ; below exponent 1: the difference is subnormal and exact (the operands' exponents are
        ; at most 1 apart, so nothing was lost below the guard byte): its fraction is wx·2^(ex − 9)
        lda     #10                     ; (C = 0 here)
        sbc     ex
        sta     ey                      ; 9 − ex: 1..8 places right
        ldq     wx
:       lsrq
        dec     ey
        bne     :-
        stq     _sv_r
        lda     rs
        sta     _sv_r+3                 ; (the fraction is below 2^23: byte 3 was 0)
        rts
ad_sub:   sec
        ldq     wx
        sbcq    wy                      ; (Z: all 32 bits zero; the prefix of a following
        bne     ad_nz                     ; STQ would set Z from A alone)
        stq     _sv_r                   ; x − x = +0
        rts
ad_nz:    lbmi    rndq                    ; (N: bit 31 from SBCQ) normalised: rounded from the
        stq     wx                      ; registers as a sum is (rndq takes stk as round does)
ad_norm:  lda     wx+3                    ; cancellation: normalise; below exponent 1 is slow
        bne     ad_nbits
        lda     ex
        cmp     #9
        bcc     ad_sub0
        sbc     #8
        sta     ex
        lda     wx+2
        sta     wx+3
        lda     wx+1
        sta     wx+2
        lda     wx
        sta     wx+1
        lda     #0
        sta     wx
        lbra    ad_norm
ad_nbits: lbmi    ad_done
        ldq     wx                      ; one place left in Q a step while ex stays above 1 (it
ad_nl:  dec     ex                      ; is at least 1 here)
        beq     ad_nl1
        aslq
        bpl     ad_nl
        jmp     rndq                    ; (Q as round would take it from wx)
ad_nl1: inc     ex                      ; ex was 1: subnormal
        stq     wx
        clc
        lbra    ad_sub0

; ---------------------------------------------------------------------------------------------
; sv_r = the square root of sv_a, rounded to nearest even (softfloat.c's sf_sqrt, same steps), for
; C (Z = 0 on return): a positive normal a here, whose root is normal; ±0, negatives,
; subnormals, infinity and NaN through sf_sqrt (sv_slow_sqrt). With E = a's biased exponent and
; m its 24-bit significand, the radicand is m·2^25 (E odd) or m·2^26 (E even) and the root's 25
; bits come two radicand bits a time from the top (X = m·2^7 or m·2^8, leading pair at bits
; 31-30): rem T = 4T + the pair, trial R = 4·root + 1, root·2, and where T >= R, T − R and the
; root's new bit 1. The root is kept as V = 4·root (R = V + 1 needs no shifts); after 13 steps
; the radicand's bits are all in and T = 4T alone. T stays in Q (a trial that fails adds R
; back). The 25th bit is the guard byte's top bit, a nonzero remainder its bit 0; the exponent
; is floor((E + 127) / 2). Scratch: wx (X), wy (T at the end), v (V), kt, ey.
_sv_sqrt:
        lda     _sv_a+3
        lbmi    @slow                   ; negative, or −0
        lda     _sv_a+2
        asl     a
        lda     _sv_a+3
        rol     a
        lbeq    @slow                   ; +0 or subnormal
        cmp     #$FF
        lbeq    @slow                   ; inf or NaN
        tay                             ; E
        lda     #0
        sta     wx
        lda     _sv_a
        sta     wx+1
        lda     _sv_a+1
        sta     wx+2
        lda     _sv_a+2
        ora     #$80
        sta     wx+3                    ; X = m·2^8
        tya
        lsr     a                       ; C = E's low bit: E odd, E − 127 even: X = m·2^7
        bcc     :+
        lsrqm   wx
:       tya
        clc
        adc     #127
        ror     a                       ; (E + 127) / 2, 9 bits in C:A
        sta     ex
        lda     #13                     ; (the counts in ey and kt: Q holds T)
        sta     ey
        lda     #12
        sta     kt
        lda     #0
        sta     rs
        tax
        tay
        taz                             ; T = Q = 0
        stq     v                       ; V = 4·root = 0
@step:  aslqm   wx                      ; T = 4T + the radicand's next two bits (a memory shift
        rolq                            ; leaves Q as it is: the prefix's two NEGs restore A,
        aslqm   wx                      ; §M1.6)
        rolq
        clc                             ; T − R with R = 4·root + 1 = V + 1: SBCQ with C clear
        sbcq    v                       ; takes the one more (§M1.6: C at bit 31 as SBC's)
        bcs     @yes
        sec                             ; T < R: T back (+ V + 1), and V = 4·(2·root) = 2V
        adcq    v
        aslqm   v
        dec     ey
        bne     @step
        bra     @two
@yes:   aslqm   v                       ; T >= R: T − R, and V = 4·(2·root + 1) = 2V + 4 (SMB2
        smb2    v                       ; sets the bit without A: §M1.2)
        dec     ey
        bne     @step
@two:                                   ; 13 steps took the radicand's 26 bits 31-6; its pairs
@step2: aslq                            ; are 0 from here: T = 4T (12 steps, counted in kt)
        aslq
        clc
        sbcq    v
        bcs     @yes2
        sec
        adcq    v
        aslqm   v
        dec     kt
        bne     @step2
        bra     @end
@yes2:  aslqm   v
        smb2    v
        dec     kt
        bne     @step2
@end:   ; the root's bits 24-1 are the significand, its bit 0 the guard byte's top bit and a
        ; nonzero remainder the sticky
        stq     wy
        lda     wy
        ora     wy+1
        ora     wy+2
        ora     wy+3
        sta     stk
        ldq     v                       ; root = V / 4
        lsrq
        lsrq
        lsrq                            ; A:X:Y = root bits 1-24, C = bit 0
        stq     kt
        lda     #0
        ror     a                       ; the guard byte
        ldx     kt                      ; Q = [guard, m0, m1, m2] for rndq
        ldy     kt+1
        ldz     kt+2
        jsr     rndq
        ldz     #0
        rts
@slow:  ldz     #0
        jmp     _sv_slow_sqrt

; ---------------------------------------------------------------------------------------------
; sv_b = the F16 sv_h widened (exact): normal halves and zeros here, the rest sv_slow_f16.
_sv_f16:
        lda     _sv_h+1
        and     #$7C
        beq     @small
        cmp     #$7C
        beq     @slow
        ; sign | ((h & $7FFF) << 13) + (112 << 23): the half's exponent and fraction land in
        ; place, 112 rebiases the exponent ((h & $7FFF) << 13 is (h & $7FFF) << 16 >> 3)
        lda     _sv_h
        sta     _sv_b+2
        lda     _sv_h+1
        and     #$7F
        lsr     a
        ror     _sv_b+2
        ror     _sv_b+1                 ; (its old contents leave through the three places)
        lsr     a
        ror     _sv_b+2
        ror     _sv_b+1
        lsr     a
        ror     _sv_b+2
        ror     _sv_b+1
        clc
        adc     #$38
        sta     _sv_b+3
        lda     _sv_h+1
        and     #$80
        tsb     _sv_b+3
        lda     _sv_b+1
        and     #$E0
        sta     _sv_b+1
        lda     #0
        sta     _sv_b
        rts
@small: lda     _sv_h+1                 ; zero: ±0; subnormal: slow
        and     #$03
        ora     _sv_h
        bne     @slow
        lda     _sv_h+1
        and     #$80
        sta     _sv_b+3
        lda     #0
        sta     _sv_b+2
        sta     _sv_b+1
        sta     _sv_b
        rts
@slow:  ldz     #0
        jmp     _sv_slow_f16

; ---------------------------------------------------------------------------------------------
; Function tables (softvec.c's table(), docs/spec/numerics.md §5.3)

; The tables' flat addresses, in SV_TAB_* order (softvec65.h): the shipped core links them outside
; its window (exp and SiLU at chip RAM 0.D000 under the I/O page, GELU at 5.B800: fntab.c,
; linker/softcore.cfg), where only flat accesses reach them; the test PRG in its own image.
        .import         _fn_exp, _fn_silu, _fn_gelu
        .rodata
tflat:  .dword  _fn_exp, _fn_silu, _fn_gelu
        .assert (_fn_exp & $FFFF) <= $10000 - 8 * 256, lderror, "the exp table crosses 64 KB"
        .assert (_fn_silu & $FFFF) <= $10000 - 8 * 256, lderror, "the SiLU table crosses 64 KB"
        .assert (_fn_gelu & $FFFF) <= $10000 - 8 * 256, lderror, "the GELU table crosses 64 KB"
        .code

; sv_tabd's descriptor (struct sv_tab: lo, hi, k, table, below, above) into tmlo.. with order keys,
; and the table's flat address. The descriptors are constants: a second call with the same one
; keeps what the first set up.
tsetup: lda     _sv_tabd
        cmp     tcur
        bne     :+
        lda     _sv_tabd+1
        cmp     tcur+1
        bne     :+
        rts
:       lda     _sv_tabd
        sta     tcur
        lda     _sv_tabd+1
        sta     tcur+1
        ldy     #13
:       lda     (_sv_tabd),y
        sta     tmlo,y
        dey
        bpl     :-
        ldy     #15                     ; below, above: after the two bank bytes here
        lda     (_sv_tabd),y
        sta     tabove
        dey
        lda     (_sv_tabd),y
        sta     tbelow
        lda     ttab                    ; SV_TAB_*: its flat address from tflat
        ldx     #0
        cmp     #2                      ; SV_TAB_GELU (softvec65.h)
        bne     :+
        inx
:       stx     tgelu
        asl     a
        asl     a
        tax
        ldy     #0
:       lda     tflat,x
        sta     ttab,y
        inx
        iny
        cpy     #4
        bne     :-
        movf    kv, tmlo
        jsr     key
        movf    tklo, kv
        movf    kv, thi
        jsr     key
        movf    tkhi, kv
        lda     #0                      ; twin: lo < 0 < hi (a −0 lo or +0 hi gives a window
        tax                             ; of +0 or none, which nothing is below)
        tay
        taz
        stq     twin
        lda     tmlo+3
        bpl     @nowin
        lda     thi+3
        bmi     @nowin
        lda     tmlo+3                  ; |lo|
        and     #$7F
        sta     twin+3
        lda     tmlo+2
        sta     twin+2
        lda     tmlo+1
        sta     twin+1
        lda     tmlo
        sta     twin
        sec                             ; hi below |lo| (both non-negative: unsigned order)
        ldq     thi
        sbcq    twin
        bcs     @nowin
        movf    twin, thi
@nowin: lda     tmlo+3                  ; x − lo is x + (−lo)
        eor     #$80
        sta     tmlo+3
        rts

; kv = an order key of the non-NaN single in kv: unsigned compare of keys is the IEEE order,
; with −0 = +0
key:    lda     kv+3
        and     #$7F
        ora     kv+2
        ora     kv+1
        ora     kv
        bne     :+
        lda     #$80                    ; ±0: +0's key $80000000
        sta     kv+3
        rts
:       lda     kv+3
        bmi     :+
        ora     #$80                    ; positive: above every negative
        sta     kv+3
        rts
:       ldx     #3                      ; negative: the magnitude's order reversed
:       lda     kv,x
        eor     #$FF
        sta     kv,x
        dex
        bpl     :-
        rts

; sv_r = the table's value at v: below lo and at or above hi a rule; else segment
; i = floor(single(single(v − lo)·k)) clamped to 0..255, then single(c0 + single(c1·v)). A NaN
; v takes segment 0 (its arithmetic gives NaN, as the C).
table:  lda     v+3                     ; |v| below twin: inside lo..hi, no rule and no NaN
        and     #$7F
        cmp     twin+3
        bcc     @in
        bne     @out
        lda     v+2
        cmp     twin+2
        bcc     @in
        bne     @out
        lda     v+1
        cmp     twin+1
        bcc     @in
        bne     @out
        lda     v
        cmp     twin
        lbcc    @in
@out:   lda     v+2
        asl     a
        lda     v+3
        rol     a
        cmp     #$FF
        bne     @key
        lda     v+2
        and     #$7F
        ora     v+1
        ora     v
        beq     @key
        lda     #0
        lbra    @seg
@key:   movf    kv, v
        jsr     key
        sec                             ; kv < key(lo): below
        ldq     kv
        sbcq    tklo
        lda     tbelow
        lbcc    @rule
        sec                             ; kv >= key(hi): above
        ldq     kv
        sbcq    tkhi
        lda     tabove
        lbcs    @rule
@in:    lda     tgelu
        beq     @flt
        jsr     gseg
        lbcc    @seg                    ; A = the segment
@flt:   movf    _sv_a, v
        movf    _sv_b, tmlo
        jsr     _sv_add
        movf    _sv_a, _sv_r
        movf    _sv_b, tk
        jsr     _sv_mul
        ; floor, clamped to 0..255 (the product is >= +0 and finite here)
        lda     _sv_r+3
        bmi     @i0
        lda     _sv_r+2
        asl     a
        lda     _sv_r+3
        rol     a
        cmp     #127
        bcc     @i0
        cmp     #135
        bcs     @i255
        eor     #$FF                    ; 134 − e places (C = 0)
        adc     #135
        tax
        lda     _sv_r+2
        ora     #$80
        cpx     #0
        beq     @seg
:       lsr     a
        dex
        bne     :-
        bra     @seg
@i0:    lda     #0
        bra     @seg
@i255:  lda     #255
@seg:   tay                             ; tp = the table + 8·i (flat)
        seg_tp
        ldz     #4                      ; c1·v
        ldqf    tp
        stq     _sv_a
        movf    _sv_b, v
        jsr     _sv_mul
        movf    _sv_b, _sv_r            ; c0 + that
        ldz     #0
        ldqf    tp
        stq     _sv_a
        jmp     _sv_add
@rule:  cmp     #1                      ; FN_OUT_ZERO 0, FN_OUT_ONE 1, FN_OUT_IDENTITY 2
        beq     @one
        bcs     @ident
        lda     #0
        sta     _sv_r
        sta     _sv_r+1
        sta     _sv_r+2
        sta     _sv_r+3
        rts
@one:   lda     #0
        sta     _sv_r
        sta     _sv_r+1
        lda     #$80
        sta     _sv_r+2
        lda     #$3F
        sta     _sv_r+3
        rts
@ident: movf    _sv_r, v
        rts
tseg    = @seg                          ; A = the segment: its c0 + c1·v (texp's entry)

; GELU's segment without the two roundings, for |v| < 6 (lo = -6, hi = 6, k = 21.333334 as
; fn_tables.h has them; softvec.c stops the build if they change): t = (v + 6)·k in fixed point,
; u = (v + 6)·2^21 with |v|·2^21 truncated (off by less than 2^-21), P = u·k's significand =
; t·2^40 exactly for that u. The definition's single(single(v + 6)·k) is within 2^-17 +
; k·2^-21 of the real (v + 6)·k (half an ulp of each rounding: results below 256 and 12), and
; the fixed t within k·2^-21 of it: less than 2^-14 together. So when t's top 14 fraction bits
; are neither all 0 nor all 1, t's integer part is the definition's floor. C = 0 and A = that
; segment; C = 1 (near an integer, or t at 256) the definition's arithmetic decides.
; Scratch: the multiplier, wy.
gseg:   lda     v+2
        asl     a
        lda     v+3
        rol     a                       ; v's biased exponent e (|v| < 6: e <= 129)
        sec
        sbc     #105                    ; j = e − 105: |v|·2^21 = (m·2^j) >> 24
        bcc     @w0                     ; e < 105: |v|·2^21 < 1, truncated to 0
        sta     ey
        lda     #0
        sta     MULB
        sta     MULB+1
        sta     MULB+2
        sta     MULB+3
        sta     MULA+3
        lda     v
        sta     MULA
        lda     v+1
        sta     MULA+1
        lda     v+2
        ora     #$80
        sta     MULA+2
        lda     ey
        and     #7
        tay
        lda     ey
        lsr     a
        lsr     a
        lsr     a
        tax
        lda     bits,y                  ; MULB = 2^j (j <= 24: byte j/8)
        sta     MULB,x
        ldq     MULO+3
        bra     @u
@w0:    lda     #0
        tax
        tay
        taz
@u:     stq     wy                      ; w = |v|·2^21, truncated
        lda     #0
        ldx     #0
        ldy     #$C0
        ldz     #0                      ; 6·2^21
        bit     v+3
        bmi     @neg
        clc
        adcq    wy
        bra     @p
@neg:   sec
        sbcq    wy
@p:     stq     MULA                    ; u (< 12·2^21)
        lda     #$AB                    ; k's significand $AAAAAB (k = $AAAAAB·2^-19)
        sta     MULB
        lda     #$AA
        sta     MULB+1
        sta     MULB+2
        lda     #0
        sta     MULB+3
        lda     MULO+6                  ; t >= 256: the definition's clamp decides
        bne     @no
        lda     MULO+3                  ; bits 26-31 with byte 4 (bits 32-39): t's top 14
        and     #$FC                    ; fraction bits
        beq     @lo
        cmp     #$FC
        beq     @hi
@yes:   lda     MULO+5                  ; floor(t)
        clc
        rts
@lo:    lda     MULO+4
        bne     @yes
@no:    sec
        rts
@hi:    lda     MULO+4
        cmp     #$FF
        bne     @yes
        sec
        rts

; ---------------------------------------------------------------------------------------------
; Kernels over sv_n elements (1..255). Pointers advance as they go.

; sv_p += 4
incp:   clc
        lda     _sv_p
        adc     #4
        sta     _sv_p
        bcc     :+
        inc     _sv_p+1
:       rts

; ptr += n (4: a single) in the loop itself (a JSR and RTS cost 11 of incp's 24 cycles)
.macro  step4   ptr, n
        clc
        lda     ptr
.ifblank n
        adc     #4
.else
        adc     #n
.endif
        sta     ptr
        bcc     :+
        inc     ptr+1
:
.endmacro

; the end of a kernel's loop: one element fewer; Z = 0 for the C at the end
.macro  next    loop
        dec     _sv_n
        bne     loop
        ldz     #0
        rts
.endmacro

; sv_r = the table's value at sv_a, sv_tabd set (softvec.c's sv_exp and GELU)
_sv_tab1:
        jsr     tsetup
        movf    v, _sv_a
        jsr     table
        ldz     #0
        rts

; SILUMUL (and any table times y): x[i] = single(table(x[i])·y[i]), p = x, q = y, sv_tabd set.
; With fxok (fsetup: SiLU's table) an x of exponent 107..129 (2^-20 <= |x| < 8 <= twin: inside
; lo..hi, no rule) goes one way: its significand into the multiplier once for the segment (fxs)
; and for c1·x, c0 in the A form, c1·x rounded into fadd (c0 + c1·x rounded to the A form) and
; that times y from the A form (ymul). The same roundings in the same order as table's steps and
; sv_mul, without packing c1·x or the sum and unpacking them again. Any other x, a segment near
; an edge (the margin below), c0 neither normal nor ±0, c1 not normal, an exponent out of range or a sum that is not
; normal: table and sv_mul as they are (the sum's packed value where it was made).
_sv_k_tabmul:
        jsr     tsetup
        jsr     fsetup
        lda     #$4C                    ; upks: JMP ymul (the sum's rounding on into its product
        sta     upks                    ; with y; restored at the end)
        lda     #<ymul
        sta     upks+1
        lda     #>ymul
        sta     upks+2
        lda     tbank                   ; tp's bank bytes: the table's (no carry into them)
        sta     tp+2
        lda     tbank+1
        sta     tp+3
        lda     #0
        sta     MULA+3                  ; (bytes 3 stay 0: fxs's MULB from fmk, ymul, sv_mul)
@loop:  ldz     #0
        ldqi    _sv_p                   ; x
        stq     v
        sta     MULA                    ; its significand into the multiplier
        stx     MULA+1
        tya
        ora     #$80
        sta     MULA+2
        lda     fxok
        lbeq    @gen
        tya
        asl     a
        tza
        rol     a                       ; x's exponent
        cmp     #107
        lbcc    @gen
        cmp     #130
        lbcs    @gen
        sta     ey
        jsr     fxs                     ; Q = floor(|x|·k·2^24)
        bit     v+3
        bmi     @neg
        clc                             ; x > 0: P = C0 + that
        adcq    fc0
        lbcs    @gen
        bra     @chk
@neg:   stq     kt                      ; x < 0: P = C0 − that
        ldq     fc0
        sec
        sbcq    kt
        lbcc    @gen
@chk:   tya                             ; the top fraction byte: the margin
        lbeq    @gen
        cmp     #$FF
        lbeq    @gen
        tza                             ; the integer byte: the segment: tp = the table
        tay                             ; + 8·i (flat; its bank bytes set before the loop)
        seg_tp  nobank
        ldz     #0                      ; c0 into the A form
        ldqf    tp
        sta     wx+1
        stx     wx+2
        tya
        ora     #$80
        sta     wx+3
        tza
        and     #$80
        sta     as
        tya
        asl     a
        tza
        rol     a
        beq     @c0z
        cmp     #$FF
        beq     @gen
        sta     ae
        lda     #$C0                    ; c1·x rounded into fadd (c0 + c1·x to the A form)
        ldx     #1
@c1:    sta     ukeep
        stx     aok
        ldz     #4                      ; c1 into the multiplier
        ldqf    tp
        sta     MULB
        stx     MULB+1
        tya
        ora     #$80
        sta     MULB+2
        tza
        eor     v+3
        and     #$80
        sta     rs
        tya
        asl     a
        tza
        rol     a
        beq     @gen
        cmp     #$FF
        beq     @gen
        sta     ex
        lda     ey
        mexpm   @gen
        jsr     mulo                    ; c1·x rounded, c0 + that (fadd), that times y (ymul)
        bit     ukeep
        bvs     @gen                    ; (c1·x rounded to infinity: not added)
        bmi     @pk                     ; (the sum packed; ymul clears ukeep)
        bra     @put
@c0z:   tya                             ; c0 = ±0 (segments 127 and 128 of SiLU's table):
        ora     wx+2                    ; c0 + c1·x is c1·x (normal: mexpm's range), so c1·x
        ora     wx+1                    ; is rounded to the A form alone; aok 0, so a product
        bne     @gen                    ; rounded to infinity (packed) takes @pk
        lda     #$80
        ldx     #0
        bra     @c1
@gen:   lda     #0                      ; the definition's steps, packed
        sta     ukeep
        jsr     table
        movf    _sv_a, _sv_r
        bra     @y
@pk:    movf    _sv_a, _sv_r            ; the sum +0, subnormal or infinite: packed
@y:     jsr     gmuly
@put:   putf    _sv_p, _sv_r
        step4   _sv_p
        step4   _sv_q
        dec     _sv_n
        lbne    @loop
        lda     #$AD                    ; upks's LDA a:ex again
        sta     upks
        lda     #<ex
        sta     upks+1
        lda     #>ex
        sta     upks+2
        ldz     #0
        rts

; sv_r = single(s · the f32 at sv_q), packed (ukeep cleared), for a rounded normal sum s in wx
; (bytes 1-3), ex, rs, where its rounding would have put it into the A form (upks, which jumps
; here while sv_k_tabmul runs: the sum's way on without the A form and the kernel's tests): s's
; significand into the multiplier as it is; a y that is not normal or an exponent out of range
; packs s and takes sv_mul. MULA and MULB's bytes 3 cleared. yma: the same for s in the A form
; (wx bytes 1-3, ae, as: ATTN's score from hdot), its exponent and sign put where ymul takes them.
yma:    lda     ae
        sta     ex
        lda     as
        sta     rs
ymul:   lda     #0
        sta     ukeep
        sta     MULA+3
        sta     MULB+3
        taz
        ldqi    _sv_q                   ; y
        sta     MULB
        stx     MULB+1
        tya
        ora     #$80
        sta     MULB+2
        tya
        asl     a
        tza
        rol     a
        beq     @slow
        cmp     #$FF
        beq     @slow
        mexpm   @slow                   ; ex = s's + y's − 127 (s's as it is on a failure)
        tza
        and     #$80
        eor     rs
        sta     rs
        lda     wx+1
        sta     MULA
        lda     wx+2
        sta     MULA+1
        lda     wx+3
        sta     MULA+2
        jmp     mulo
@slow:  jsr     ptail                   ; sv_r = s packed
        movf    _sv_a, _sv_r
; sv_r = single(sv_a · the f32 at sv_q) by sv_mul, packed (ukeep cleared); then MULA's and MULB's
; bytes 3 are 0 again (sv_add's alignment, a product with a zero or softfloat.c may leave them set)
gmuly:  lda     #0
        sta     ukeep
        getf    _sv_b, _sv_q, 0
        jsr     _sv_mul
        lda     #0
        sta     MULA+3
        sta     MULB+3
        rts

; ex = ex + A − 127 (two biased exponents' product) and C = 0 when that is 1..253, as sv_mul
; takes it; else C = 1
mexp:   clc
        adc     ex
        bcs     @hi
        cmp     #128
        bcc     @no                     ; below 1
        sbc     #127                    ; (C = 1)
        sta     ex
        clc
        rts
@hi:    cmp     #125
        bcs     @no                     ; 254 and above (C = 1)
        adc     #129                    ; (C = 0: 256 + A − 127, no carry)
        sta     ex
        rts
@no:    sec
        rts

; The segment without its two roundings (SILUMUL's tables). i = floor(single(single(v − lo)·k))
; for |v| below twin (so 0 < v − lo < 2·|lo|) is floor(u·k) of the exact u = v − lo unless u·k
; lies within the two roundings' error of an integer: with |lo| < 16 and 8 <= k < 16, s1 =
; single(u) is within 2^-20 of u (u < 32) and s2 = single(s1·k) (< 512) within 2^-16 of s1·k,
; so |s2 − u·k| < 2^-15. P = floor(|lo|·k·2^24) ± floor(|v|·k·2^24) is u·k·2^24 within 2
; units (2^-23), so when P's top fraction byte is neither $00 nor $FF (u·k at least 2^-8 clear of
; an integer) floor(s2) is P's integer byte; else (and on a carry or borrow) the exact steps.

; fsetup: fxok, fmk and fc0 for the table tsetup set up: fxok = 1 when twin >= 8, k's exponent
; is 130 (8 <= k < 16) and |lo| < 16; fmk = k's significand; fc0 = |lo|·k's P
fsetup:
        lda     #0
        sta     fxok
        lda     twin+2
        asl     a
        lda     twin+3
        rol     a
        cmp     #130
        bcc     @r                      ; twin below 8 (or no window: lo >= 0 or hi <= 0)
        lda     tk+2
        asl     a
        lda     tk+3
        rol     a
        cmp     #130
        bne     @r
        lda     tk
        sta     fmk
        lda     tk+1
        sta     fmk+1
        lda     tk+2
        ora     #$80
        sta     fmk+2
        lda     #0
        sta     fmk+3
        lda     tmlo+2                  ; tmlo = −lo > 0
        asl     a
        lda     tmlo+3
        rol     a
        cmp     #131
        bcs     @r
        movf    v, tmlo
        jsr     fxk
        stq     fc0
        lda     #1
        sta     fxok
@r:     rts

; Q = floor(|v|·k·2^24) for v's exponent e <= 130 (fmk set): the significands' product is
; m·mk, and |v|·k·2^24 = m·mk·2^(e − 146) = floor(m·mk / 2^(16 + d)) with d = 130 − e (nested
; floors of divisions by powers of two are one floor): the product's bytes from 2 + d/8 on (the
; LDQ's address patched), shifted right d mod 8 places (a patched BRA into LSRQs); 0 for d >= 32.
; fxs: the same with MULA written (v's significand, byte 3 0) and A = e.
fxk:    lda     v
        sta     MULA
        lda     v+1
        sta     MULA+1
        lda     v+2
        ora     #$80
        sta     MULA+2
        lda     #0
        sta     MULA+3
        lda     v+2
        asl     a
        lda     v+3
        rol     a
fxs:    eor     #$FF                    ; 255 − e
        sec
        sbc     #125                    ; d = 130 − e
        cmp     #32
        bcs     @zero                   ; below one unit: 0 (zeros and subnormals too)
        sta     t16                     ; (here: d)
        and     #7
        tax
        lda     shofs7,x
        sta     @br+1
        ldq     fmk
        stq     MULB
        lda     t16
        cmp     #24
        bcs     @q3
        lsr     a
        lsr     a
        lsr     a
        clc
        adc     #<(MULO+2)
        sta     @ld+3
@ld:    ldq     MULO+2                  ; (patched: the product's bytes 2 + d/8 ..)
@br:    bra     *+2                     ; (patched: d mod 8 of the shifts)
        LSRQ7
        rts
@q3:    lda     #0                      ; d = 24..31: the product's byte 5 alone (below 2^48)
        tax
        tay
        taz
        lda     MULO+5
        bra     @br
@zero:  lda     #0
        tax
        tay
        taz
        rts
        .assert >(MULO+2) = >(MULO+4), error, "fxs patches the low byte of MULO's address"

; The exp table's segment the same way (a table with hi = +0, k = 2^s·8 for s = 0 or 1, and
; |lo|·k = 256, i.e. exp's lo = −16, k = 16): single(s1·k) is exact, so i = ⌊s1·k⌋ with s1 =
; single(v − lo) within k·2^-20 <= 2^-15 of (v − lo)·k for v in (−16, 0), and P = 2^32 −
; ⌊|v|·k·2^24⌋ (|lo|·k·2^24 = 2^32) is that within a unit of 2^-24.
; esetup: fxok, fmk for tcur's table as such a table, else fxok = 0
esetup: lda     #0
        sta     fxok
        lda     thi                     ; hi = +0
        ora     thi+1
        ora     thi+2
        ora     thi+3
        bne     @r
        lda     tk                      ; k = 2^e exactly, 8 <= k < 32
        ora     tk+1
        bne     @r
        lda     tk+2
        and     #$7F
        bne     @r
        lda     tk+2
        asl     a
        lda     tk+3
        rol     a
        sec
        sbc     #130
        cmp     #2
        bcs     @r
        sta     ey                      ; s: k = 2^(3 + s)
        lda     tmlo+3                  ; −lo = 2^(8 − 3 − s) exactly: |lo|·k = 256
        bmi     @r
        lda     tmlo
        ora     tmlo+1
        bne     @r
        lda     tmlo+2
        and     #$7F
        bne     @r
        lda     tmlo+2
        asl     a
        lda     tmlo+3
        rol     a
        clc
        adc     ey
        cmp     #132
        bne     @r
        lda     #0                      ; fmk = 2^(23 + s)
        sta     fmk
        sta     fmk+1
        sta     fmk+2
        sta     fmk+3
        lda     ey
        bne     :+
        lda     #$80                    ; 2^23
        sta     fmk+2
        bra     :++
:       lda     #1                      ; 2^24
        sta     fmk+3
:       lda     #1
        sta     fxok
@r:     rts

; sv_r = the table's value at v (tsetup and esetup done): a negative v above −16 from P when
; it is clear of a segment edge, else table's own steps (its rules for v >= −0 and v <= lo)
texp:   lda     fxok
        beq     @ex
        lda     v+3
        bpl     @ex                     ; +0 and above: the rule
        lda     v+2
        asl     a
        lda     v+3
        rol     a
        cmp     #131
        bcs     @ex                     ; |v| >= 16, inf, NaN
        jsr     fxk
        stq     kt
        lda     #0
        tax
        tay
        taz
        sec
        sbcq    kt                      ; 2^32 − that (0 when it is 0: then the test below)
        tya                             ; the top fraction byte
        beq     @ex
        cmp     #$FF
        beq     @ex
        tza                             ; the integer byte: the segment
        jmp     tseg
@ex:    jmp     table

; RMSNORM's sum: acc = single(acc + single(x[i]·x[i])), p = x (the sum in the A form, fadd).
; A normal x whose square's exponent sv_mul takes (mexp) goes into both multiplier inputs from
; the registers, one exponent test for both operands; else sv_mul on x, x.
_sv_k_sumsq:
        lda     #<(sqj - (upkq + 2))    ; the squares' sum by sqadd: upkq's BVS to sqj
        sta     upkq+1
        lda     #0                      ; the sum packed in sv_acc
        sta     aok
@loop:  ldz     #0
        ldqi    _sv_p
        sta     MULA
        sta     MULB
        stx     MULA+1
        stx     MULB+1
        tya
        ora     #$80
        sta     MULA+2
        sta     MULB+2
        tya
        asl     a
        tza
        rol     a                       ; x's exponent
        beq     @gen
        cmp     #$FF
        beq     @gen
        sta     ex
        mexpm   @gen
        lda     #0
        sta     rs                      ; a square: positive
        sta     MULA+3
        sta     MULB+3
        lda     #$C0
        sta     ukeep
        jsr     mulo
        bra     @post
@gen:   getf    _sv_a, _sv_p, 0
        stq     _sv_b                   ; (the same x)
        lda     #$C0
        sta     ukeep
        jsr     _sv_mul
@post:  bit     ukeep                   ; (kpost in line: its packed way by a JSR)
        bvs     @kg
        lda     aok
        bne     @next
@kg:    jsr     kpost
@next:  step4   _sv_p
        dec     _sv_n
        bne     @loop
        lda     #<(fadd - (upkq + 2))   ; upkq's BVS to fadd again; the multiplier's bytes 3
        sta     upkq+1                  ; (sqadd's MULB) 0 again
        lda     #0
        sta     MULA+3
        sta     MULB+3
        jmp     kend

; ATTN's weights: x[i] = single(x[i]·c), p = x (sv_mul leaves sv_b as it is: c set once)
_sv_k_scale:
        movf    _sv_b, _sv_c
@loop:  getf    _sv_a, _sv_p, 0
        jsr     _sv_mul
        putf    _sv_p, _sv_r
        step4   _sv_p
        next    @loop

; RMSNORM's scaling: x[i] = single(single(x[i]·c)·y[i]), p = x, q = y: x·c, when its rounding
; is normal, goes from the registers straight on into yreg (upkq's BVS points there while the
; kernel runs), which makes the product with y; else (packed in sv_r, ukeep still $C0) sv_mul
; again. c's exponent is taken once (kt; 0 for a c that is not normal): a normal x whose
; product's exponent sv_mul takes (mexp) goes into the multiplier from the registers, c's
; significand beside it, and on into mulo; any other x (or c) through sv_mul.
_sv_k_scale2:
        lda     #<(ymj - (upkq + 2))
        sta     upkq+1
        lda     #0
        sta     aok
        sta     MULA+3                  ; (bytes 3 stay 0: x and c, yreg's p and y take bytes
        sta     MULB+3                  ; 0-2; sv_mul's normal way and gmuly clear them)
        lda     _sv_c+2
        asl     a
        lda     _sv_c+3
        rol     a
        cmp     #$FF
        bne     :+
        lda     #0
:       sta     kt
@loop:  lda     #$C0                    ; x·c rounded into yreg
        sta     ukeep
        ldz     #0
        ldqi    _sv_p                   ; x
        sta     MULA
        stx     MULA+1
        tya
        ora     #$80
        sta     MULA+2
        lda     kt
        beq     @gen
        tya
        asl     a
        tza
        rol     a                       ; x's exponent
        beq     @gen
        cmp     #$FF
        beq     @gen
        sta     ex
        tza
        eor     _sv_c+3
        and     #$80
        sta     rs
        lda     kt
        mexpm   @gen
        lda     _sv_c
        sta     MULB
        lda     _sv_c+1
        sta     MULB+1
        lda     _sv_c+2
        ora     #$80
        sta     MULB+2
        jsr     mulo                    ; x·c, and yreg's product with y
        bra     @ok
@gen:   getf    _sv_a, _sv_p, 0
        movf    _sv_b, _sv_c
        jsr     _sv_mul                 ; x·c (and yreg when it is normal)
@ok:    bit     ukeep
        bvc     @put                    ; (yreg clears ukeep)
        movf    _sv_a, _sv_r            ; x·c packed: sv_mul with y
        jsr     gmuly
@put:   putf    _sv_p, _sv_r
        step4   _sv_p
        step4   _sv_q
        dec     _sv_n
        lbne    @loop
        lda     #<(fadd - (upkq + 2))   ; upkq's BVS to fadd again
        sta     upkq+1
        ldz     #0
        rts

; RMSNORM's second product: sv_r = single(p · y), y the f32 at sv_q, for a rounded normal
; product p = x·c in X:Y:Z, ex, rs (rndq's way on while sv_k_scale2 runs), packed (ukeep 0):
; p's significand straight into the multiplier (ymul's steps without the A form), y's beside
; it; a y that is not normal or an exponent out of range packs p (from wx) and takes sv_mul.
; The multiplier's bytes 3 are 0 (the kernel's x·c, or sv_mul).
yreg:   stx     wx+1                    ; p, for the packed way
        sty     wx+2
        stz     wx+3
        stx     MULA
        sty     MULA+1
        stz     MULA+2
        lda     #0
        sta     ukeep
        taz
        ldqi    _sv_q                   ; y
        sta     MULB
        stx     MULB+1
        tya
        ora     #$80
        sta     MULB+2
        tya
        asl     a
        tza
        rol     a                       ; y's exponent
        beq     @slow
        cmp     #$FF
        beq     @slow
        mexpm   @slow                   ; ex = p's + y's − 127 (p's ex as it is on a failure)
        tza
        and     #$80
        eor     rs
        sta     rs
        jmp     mulo
@slow:  jsr     ptail                   ; p packed (ex, rs)
        movf    _sv_a, _sv_r
        jmp     gmuly

; LAYERNORM's mean: acc = single(acc + x[i]), p = x
_sv_k_sum:
@loop:  movf    _sv_a, _sv_acc
        getf    _sv_b, _sv_p, 0
        jsr     _sv_add
        movf    _sv_acc, _sv_r
        step4   _sv_p
        next    @loop

; LAYERNORM's variance: d = single(x[i] + c) (c = −mu: softfloat.c's sf_sub is that addition),
; acc = single(acc + single(d·d)), p = x; A != 0: d is kept in x[i] (for sv_k_lnout)
_sv_k_sumsqd:
        sta     f16                     ; here: keep d
@loop:  getf    _sv_a, _sv_p, 0
        movf    _sv_b, _sv_c
        jsr     _sv_add
        lda     f16
        beq     :+
        putf    _sv_p, _sv_r
:       movf    _sv_a, _sv_r
        movf    _sv_b, _sv_r
        jsr     _sv_mul
        movf    _sv_a, _sv_acc
        movf    _sv_b, _sv_r
        jsr     _sv_add
        movf    _sv_acc, _sv_r
        step4   _sv_p
        next    @loop

; LAYERNORM's output: x[i] = single(single(single(d·acc)·g[i]) + b[i]) with d = single(x[i] + c)
; (c = −mu, acc = r), p = x, q = g, b at q + (A & $FC) bytes (<= 252: softvec.c's buffers); A bit
; 0 set: x[i] is d already (sv_k_sumsqd kept it)
_sv_k_lnout:
        tax
        and     #$FC
        sta     f16                     ; here: b's offset from g
        txa
        and     #1
        sta     t16                     ; here: x is d
@loop:  getf    _sv_a, _sv_p, 0
        lda     t16
        bne     @d
        movf    _sv_b, _sv_c
        jsr     _sv_add                 ; d
        movf    _sv_a, _sv_r
@d:     movf    _sv_b, _sv_acc
        jsr     _sv_mul                 ; d·r
        movf    _sv_a, _sv_r
        getf    _sv_b, _sv_q, 0
        jsr     _sv_mul                 ; ·g
        movf    _sv_a, _sv_r
        ldz     f16
        ldqi    _sv_q
        stq     _sv_b
        jsr     _sv_add                 ; + b
        putf    _sv_p, _sv_r
        step4   _sv_p
        step4   _sv_q
        next    @loop

; ROPE over sv_n pairs: p = x (v0, v1), q = (c, s) per pair, which start again at sv_rq after
; sv_rw pairs and then every sv_rh (sv_rw = 0: not within a call's 255 pairs);
; v0' = single(single(v0·c) − single(v1·s)), v1' = single(single(v0·s) + single(v1·c)).
; Each half of a pair: the product with s (v1·s, its sign turned: a − b = a + (−b), and
; single(−x) = −single(x)) rounds into the A form (ukeep $80), the product with c rounds
; straight into fadd (ukeep $C0), and the sum, normal, is packed from wx, ex, rs by rpk
; (fadd's +0, subnormal or infinite sums are packed already, aok 0). A product rmul makes is
; never infinite: mexpm passes exponent sums up to 253, and a significand product of at most
; (2 − 2^-23)² rounds, halved, to at most 2 − 2^-22 (exponent 254, no carry), so the first
; product always reaches the A form and the second always fadd. Addition is commutative to the
; bit on these operands (normal, finite; x + (−x) = +0 either way), so the order of the two
; products does not matter. The four operands' exponents are tested once a pair (rmx takes
; them from tp: the table segment's bytes, which SILUMUL and `table` write afresh each time); a pair with one that is not normal, or whose first product's exponent mexpm
; does not take, goes the definition's way by sv_mul and sv_add (ukeep 0 there, $80 again
; after); a second half whose product is out of mexpm's range alone. s = ±0 (position 0): with v0 and v1
; normal (rmul's tests on v·c), single(v·s) is a signed zero and p − (±0) = ±0 + p = p for
; every p that rmul makes (normal, never zero), so v0' = single(v0·c) and v1' = single(v1·c).
_sv_k_rope:
        lda     #$80
        sta     ukeep
@loop:  getf    v, _sv_p, 0             ; v0 (and the four operands' exponents to tp, from
        tya                             ; each one's bytes 2 and 3 in Y and Z)
        asl     a
        tza
        rol     a
        sta     tp
        getf    kv, _sv_p, 4            ; v1
        tya
        asl     a
        tza
        rol     a
        sta     tp+1
        getf    _sv_c, _sv_q, 0         ; c (here: the pair's c and s in zero page, for rmul)
        tya
        asl     a
        tza
        rol     a
        sta     tp+2
        getf    _sv_acc, _sv_q, 4       ; s
        tya
        asl     a
        tza
        rol     a
        sta     tp+3
        dec     a                       ; each 1..254 (normal), else the pair's slow ways
        cmp     #$FE
        bcs     @z
        lda     tp+2
        dec     a
        cmp     #$FE
        bcs     @z
        lda     tp+1
        dec     a
        cmp     #$FE
        bcs     @z
        lda     tp
        dec     a
        cmp     #$FE
        bcs     @z
        lda     tp+1
        sta     ex
        lda     tp+3
        ldx     #kv
        ldy     #_sv_acc
        jsr     rmx                     ; v1·s to the A form
        bcs     @g1
        lda     as
        eor     #$80
        sta     as                      ; −single(v1·s)
        lda     #$C0
        sta     ukeep
        lda     tp
        sta     ex
        lda     tp+2
        ldx     #v
        ldy     #_sv_c
        jsr     rmx                     ; + v0·c
        bcs     @g1
        lda     aok
        beq     @p1
        jsr     rpk
        bra     @s1
@z:     lda     #0                      ; (ukeep 0 from here: the roundings pack)
        sta     ukeep
        lda     _sv_acc+3
        asl     a
        ora     _sv_acc+2
        ora     _sv_acc+1
        ora     _sv_acc
        bne     @g1                     ; s not ±0
        ldx     #v
        ldy     #_sv_c
        jsr     rmul                    ; v0·c
        bcs     @g1
        movf    kt, _sv_r
        ldx     #kv
        ldy     #_sv_c
        jsr     rmul                    ; v1·c
        bcs     @g1
        putf    _sv_p, kt
        step4   _sv_p
        lbra    @q2
@g1:    lda     #0
        sta     ukeep
        ldx     #kv
        ldz     #4
        jsr     mulq                    ; v1·s
        movf    kt, _sv_r
        ldx     #v
        ldz     #0
        jsr     mulq                    ; v0·c
        movf    _sv_a, _sv_r
        movf    _sv_b, kt
        lda     _sv_b+3
        eor     #$80
        sta     _sv_b+3
        jsr     _sv_add
@p1:    putf    _sv_p, _sv_r
@s1:    step4   _sv_p
        bit     ukeep
        bpl     @g2                     ; (ukeep 0: the first half went the slow way, and so
        lda     tp                      ; does the second; $80: four normal operands)
        sta     ex
        lda     tp+3
        ldx     #v
        ldy     #_sv_acc
        jsr     rmx                     ; v0·s to the A form
        bcs     @g2
        lda     #$C0
        sta     ukeep
        lda     tp+1
        sta     ex
        lda     tp+2
        ldx     #kv
        ldy     #_sv_c
        jsr     rmx                     ; + v1·c
        bcs     @g2
        lda     aok
        beq     @p2
        jsr     rpk
        bra     @s2
@g2:    lda     #0
        sta     ukeep
        ldx     #v
        ldz     #4
        jsr     mulq                    ; v0·s
        movf    kt, _sv_r
        ldx     #kv
        ldz     #0
        jsr     mulq                    ; v1·c
        movf    _sv_a, kt
        movf    _sv_b, _sv_r
        jsr     _sv_add
@q2:    lda     #$80
        sta     ukeep
@p2:    putf    _sv_p, _sv_r
@s2:    step4   _sv_p
        step4   _sv_q, 8
        dec     _sv_rw                  ; the (c, s) table's end: back to its start
        bne     :+
        lda     _sv_rq
        sta     _sv_q
        lda     _sv_rq+1
        sta     _sv_q+1
        lda     _sv_rh
        sta     _sv_rw
:       dec     _sv_n
        lbne    @loop
        lda     #0
        sta     ukeep
        ldz     #0
        rts

; ROPE's normal sum (wx, ex, rs) packed as ptail does, but in Q and straight to x's element at sv_p
; (STQ (bp) ignores Z: quad.inc)
rpk:    lda     ex
        lsr     a                       ; C = the exponent's low bit
        ora     rs
        taz
        lda     wx+3
        bcs     :+
        and     #$7F
:       tay
        ldx     wx+2
        lda     wx+1
        stqi    _sv_p
        rts

; ROPE's products: sv_r = single(the f32 at zero-page X · the f32 at zero-page Y) with C = 0 when
; both are normal and the product's exponent is one sv_mul takes (mexp): their significands into
; the multiplier from zero page and on into mulo, as sv_mul; else C = 1 and nothing rounded
; (the caller takes mulq and sv_mul)
rmul:   lda     2,x
        asl     a
        lda     3,x
        rol     a                       ; a's exponent
        beq     rmno
        cmp     #$FF
        beq     rmno
        sta     ex
        lda     2,y
        asl     a
        lda     3,y
        rol     a                       ; b's exponent
        beq     rmno
        cmp     #$FF
        beq     rmno
rmx:    mexpm   rmno                     ; (rmx: normal operands, ex = a's exponent, A = b's)
        lda     3,x
        eor     3,y
        and     #$80
        sta     rs
        lda     0,x
        sta     MULA
        lda     1,x
        sta     MULA+1
        lda     2,x
        ora     #$80
        sta     MULA+2
        lda     0,y
        sta     MULB
        lda     1,y
        sta     MULB+1
        lda     2,y
        ora     #$80
        sta     MULB+2
        lda     #0
        sta     MULA+3
        sta     MULB+3
        jsr     mulo
        clc
        rts
rmno:    sec
        rts

; sv_r = single(the f32 at zero-page X · the f32 at sv_q + Z)
mulq:   lda     0,x
        sta     _sv_a
        lda     1,x
        sta     _sv_a+1
        lda     2,x
        sta     _sv_a+2
        lda     3,x
        sta     _sv_a+3
        ldqi    _sv_q
        stq     _sv_b
        jmp     _sv_mul

; f16 = A (0: F32 elements, else F16) and kstr = their size
fmt:    sta     f16
        ldx     #4
        tay
        beq     :+
        ldx     #2
:       stx     kstr
        rts

; ATTN's score: acc = single(acc + single(x[i]·k[i])), p = q's chunk, q = K (F16 when A != 0)
; (the sum in the A form, fadd; kdot: f16 and kstr, k's step, set, as sv_k_avs's columns)
_sv_k_dot:
        jsr     fmt
kdot:   lda     #0                      ; the sum in the A form when it is a normal number (aok
        sta     aok                     ; = 1), else packed in sv_acc (aok = 0, ae = 0)
        sta     ae
        lda     _sv_acc+2
        asl     a
        lda     _sv_acc+3
        rol     a
        beq     @st
        cmp     #$FF
        beq     @st
        sta     ae
        lda     _sv_acc+3
        and     #$80
        sta     as
        lda     _sv_acc+2
        ora     #$80
        sta     wx+3
        lda     _sv_acc+1
        sta     wx+2
        lda     _sv_acc
        sta     wx+1
        inc     aok
@st:    lda     f16                     ; F16 k: hdot's steps
        lbne    hdot
@loop:  getf    _sv_a, _sv_p, 0          ; x[i]
        lda     #$C0
        sta     ukeep
        getf    _sv_b, _sv_q, 0          ; times the F32 k[i]
        jsr     hstep                   ; p and q on
        jsr     _sv_mul
@post:  bit     ukeep                   ; kpost's steps
        bvc     @nk
        jsr     kgen
        bra     @p
@nk:    lda     aok
        bne     @p
        movf    _sv_acc, _sv_r
@p:     dec     _sv_n
        lbne    @loop
        jmp     kend

; kdot's steps with F16 k (ATTN's scores and weighted sums over an F16 cache). The product
; single(x[i]·k[i]) is made here when the half is normal and x is normal with an exponent in
; 15..238 (then the sum of the exponents is in range whatever the half's: sv_mul's condition on the
; widened half, whose significand is the half's 13 places up, so the same bits): x's 24-bit
; significand to MULA as it is (one LDQ of x), the half's 11 bits to MULB as they are, so the
; product P = mx·mk lies in [2^33, 2^35); the significand is P's bits 34-11 (or 33-10), the guard
; byte the 8 below them and MULO byte 0 the bits below (read at a tie), from MULO bytes 1-4
; by five (or six) ASLQs, then rounded to nearest even here. Anything else (zero, subnormal,
; infinite or NaN operands, other exponents) widens the half (sv_f16) and takes sv_mul, rndq and
; fadd as before. MULA+3, MULB+2, MULB+3 and wx (the sum's guard byte) are 0 for the fast steps
; (set again after every general one: fadd's alignment by the multiplier and sv_mul write them).
; The addition acc = single(acc + product) is made here too when the sum is in the A form with
; an exponent ae in 40..245 and the two exponents are at most 7 apart (equal ones with the signs
; differing: not of equal magnitudes, the larger found by comparing the significands, and no
; shift): the smaller is shifted right in Q through a patched BRA into 7 LSRQs, its bits
; all kept in the guard byte, added or subtracted, the difference normalised by ASLQs (exact: no
; bit was lost; with ae >= 40 it stays normal, with ae <= 245 no carry reaches 255) and rounded to
; nearest even on the guard byte (a carry out of 32 bits first shifted back: the bit it drops is
; 0, as a shift of at most 7 places leaves the guard's bit 0 clear); the result stays in the A
; form. Anything else goes to fadd with the product as it is.
hdot:   lda     #0
        sta     MULA+3
        sta     MULB+2
        sta     MULB+3
        sta     wx                      ; (the sum's guard byte: 0 in the fast steps)
        bra     @loop
@gen:   lda     #$C0                    ; the product to fadd
        sta     ukeep
        getf    _sv_a, _sv_p, 0          ; sv_mul's product
        ldy     #0
        lda     (_sv_q),y
        sta     _sv_h
        lda     t16
        sta     _sv_h+1
        jsr     hstep
        jsr     _sv_f16                 ; the half widened, then sv_mul
        jsr     _sv_mul
        jmp     @post
@loop:  ldy     #1
        lda     (_sv_q),y               ; the half's top byte: sign, exponent, fraction bits 8-9
        sta     t16
        and     #$7C
        beq     @gen                    ; zero or subnormal half
        cmp     #$7C
        beq     @gen                    ; inf or NaN
        lsr     a
        lsr     a                       ; (C = 0)
        adc     #242                    ; its exponent − 14 (mod 256)
        sta     ey
        ldz     #0
        ldqi    _sv_p                   ; Q = x
        sta     MULA
        stx     MULA+1
        tya
        asl     a
        tza
        rol     a                       ; x's exponent
        cmp     #15
        bcc     @gen
        cmp     #239
        bcs     @gen                    ; (C = 0 from here to the exponent's ADC: none of the
        tax                             ; steps between changes it but the pointers' carries)
        tza
        eor     t16
        sta     rs                      ; the product's sign in bit 7 (bits 0-6 left: masked
        eor     as                      ; where rs becomes a result's sign, @fa, @fg, @p0)
        sta     opp                     ; bit 7: the signs differ (used with aok = 1 only)
        tya
        ora     #$80                    ; x's hidden bit
        sta     MULA+2
        ldy     #0
        lda     (_sv_q),y               ; the half's low fraction byte
        sta     MULB
        lda     t16
        and     #3
        ora     #4                      ; the hidden bit, fraction bits 8-9
        sta     MULB+1
        lda     _sv_p                   ; p on by 4, q by kstr (a carry: @pc, @qc)
        adc     #4
        sta     _sv_p
        bcs     @pc
@pr:    lda     _sv_q
        adc     kstr
        sta     _sv_q
        bcs     @qc
@qr:    txa
        adc     ey                      ; the product's exponent with its leading 1 at bit 34,
        sta     ex                      ; 2..254 (one less at bit 33)
        ldq     MULO+1                  ; P's bits 8-39
        aslq
        aslq
        aslq
        aslq
        aslq
        bmi     @rnd                    ; the leading 1 at bit 34
        aslq                            ; at bit 33: one place and one exponent down
        dec     ex
@rnd:   cmp     #$80                    ; rounded to nearest even (as rndq)
        bcc     @rdn
        bne     @rup
        lda     MULO                    ; a half: P's byte 0 (the bits below the guard byte)
        bne     @rup
        txa
        lsr     a
        bcc     @rdn
@rup:   inx
        bne     @rdn
        iny
        bne     @rdn
        inz
        bne     @rdn
        ldz     #$80
        inc     ex
        lda     ex
        cmp     #$FF
        bne     @rdn
        lda     #$C0                    ; ±inf: packed in sv_r, added packed (kgen)
        sta     ukeep
        ldz     #0
        jsr     inf
        jmp     @post
@pc:    inc     _sv_p+1                 ; the pointers' carries (C = 0 again after them)
        clc
        bra     @pr
@qc:    inc     _sv_q+1
        clc
        bra     @qr
@fa:    lda     ae                      ; a packed sum (ae = 0) that is ±0, as every dot product
        bne     @fg                     ; starts: the sum is the product (exact; fadd's way too)
        lda     _sv_acc+3
        and     #$7F
        ora     _sv_acc+2
        ora     _sv_acc+1
        ora     _sv_acc
        bne     @fg
        lda     ex                      ; the A form (its guard byte wx is 0)
        sta     ae
        lda     rs
        and     #$80
        sta     as
        inc     aok
        lbra    @sd
@fg:    lda     rs                      ; the general addition (rs: the sign alone)
        and     #$80
        sta     rs
        jsr     fadd
        jmp     @post
@rdn:   lda     ae                      ; the addition: the sum in the A form with its
        cmp     #40                     ; exponent 40..245 (ae is 0 while aok is 0)
        bcc     @fa
        cmp     #246
        bcs     @fa
        sec                             ; (A = ae)
        sbc     ex
        bcc     @pl
        bne     @dn                     ; the sum's exponent 0-7 places above
        bit     opp                     ; equal exponents, the same signs: the sum's way,
        bpl     @a0                     ; no shift (A = 0)
        cpz     wx+3                    ; signs differing: the larger magnitude less the other
        bne     :+                      ; (exact, no alignment; normalised as below), equal
        cpy     wx+2                    ; magnitudes to fadd (+0)
        bne     :+
        cpx     wx+1
        beq     @fa
:       lda     #0                      ; (C = 1: the product the larger; else the sum less
        bcc     @as                     ; the product, no shift)
        bra     @p0
@dn:    cmp     #8
        bcs     @fa
@a1:    eor     #7                      ; the BRA past 7 − d of the LSRQs
        sta     t16
        asl     a
        adc     t16
        sta     @ba+1
        lda     #0
@ba:    bra     *+2                     ; (patched) the product shifted d places, guard A = 0
        LSRQ7
        bit     opp
        bmi     @as
@a0:    clc
        adcq    wx
        lbcc    @sr
@cy:    rorq                            ; a carry out of 32 bits: one place right (the bit
        inc     ae                      ; out is 0: 7 places leave the guard's bit 0 clear)
        bra     @sr
@as:    stq     _sv_b                   ; the sum − the product (d >= 1: positive)
        ldq     wx
        sec
        sbcq    _sv_b
        bmi     @sr
@an:    dec     ae                      ; normalised
        aslq
        bpl     @an
        bra     @sr
@pl:    eor     #$FF                    ; the product's exponent d places above
        inc     a
        cmp     #8
        lbcs    @fa
@p0:    eor     #7
        sta     t16
        asl     a
        adc     t16
        sta     @bb+1
        stx     wy+1                    ; the product to wy, guard byte 0
        sty     wy+2
        stz     wy+3
        lda     ex                      ; the result's exponent and sign: the product's
        sta     ae
        lda     rs
        and     #$80
        sta     as
        lda     #0
        sta     wy
        ldq     wx
        lda     #0                      ; the sum's guard byte
@bb:    bra     *+2                     ; (patched) the sum shifted d places
        LSRQ7
        bit     opp
        bmi     @bs
        clc
        adcq    wy
        bcs     @cy
        bra     @sr
@bs:    stq     _sv_b                   ; the product − the sum (positive)
        ldq     wy
        sec
        sbcq    _sv_b
        bmi     @sr
@bn:    dec     ae
        aslq
        bpl     @bn
@sr:    cmp     #$80                    ; the sum rounded to nearest even on the guard byte
        bcc     @sd
        bne     @su
        txa
        lsr     a
        bcc     @sd
@su:    inx
        bne     @sd
        iny
        bne     @sd
        inz
        bne     @sd
        ldz     #$80
        inc     ae
@sd:    stx     wx+1                    ; the A form
        sty     wx+2
        stz     wx+3
@n:     dec     _sv_n
        lbne    @loop
        bit     kraw
        bmi     @raw
        jmp     kend
@raw:   lsr     ukeep                   ; sv_k_scores's exit: kend's without kpk, so a sum in
        ldz     #0                      ; the A form (aok = 1) stays there for its scale
        rts
@post:  bit     ukeep                   ; kpost's steps
        bvc     @nk
        jsr     kgen                    ; (its sv_acc = sv_r again below: the same)
@nk:    lda     aok
        bne     @z
        sta     ae                      ; packed: out of the fast addition's range
        movf    _sv_acc, _sv_r
@z:     lda     #0                      ; (after the general steps: the multiplier's bytes and
        sta     MULA+3                  ; the sum's guard byte as the fast steps need them)
        sta     MULB+2
        sta     MULB+3
        sta     wx
        bra     @n
; p on by 4, q on by kstr
hstep:  clc
        lda     _sv_p
        adc     #4
        sta     _sv_p
        bcc     :+
        inc     _sv_p+1
:       clc
        lda     _sv_q
        adc     kstr
        sta     _sv_q
        bcc     :+
        inc     _sv_q+1
:       rts

; The kernels' running sums (A form: fadd), which start packed in sv_acc (aok = 0); a step sets
; ukeep to $C0 before its product, which rounds to fadd; kpost: the step's addition when its
; product was not normal (kgen: packed in sv_r, sv_add on the packed sum), the sum packed in
; sv_acc when it is not in the A form; kend: the sum packed to sv_acc and sv_r, the roundings
; packing again, Z = 0.
kpost:  bit     ukeep
        bvc     kdone
kgen:   movf    _sv_b, _sv_r
        jsr     kpk                     ; the sum packed in sv_acc
        movf    _sv_a, _sv_acc
        lda     #$80
        sta     ukeep
        jsr     _sv_add
kdone:  lda     aok
        bne     :+
        movf    _sv_acc, _sv_r
:       rts
kend:   lsr     ukeep                   ; (bit 7 clear: the roundings pack)
        jsr     kpk
        ldz     #0
        rts
; the A form (when aok) packed into sv_acc and sv_r, aok = 0
kpk:    lda     aok
        beq     :+
        jsr     aput
        movf    _sv_acc, _sv_r
        lda     #0
        sta     aok
:       rts
; sv_r = the A form packed: pack's steps on its exponent and sign (ex and rs overwritten; kpk's
; callers leave them to the next operation)
aput:   lda     ae
        sta     ex
        lda     as
        sta     rs
        jmp     ptail

; ATTN's kept scores for one head (softattn.c, the scores kept and q one chunk): for t = 0..sv_rl
; while SC_POLL() (softcore_int.h) sees no RUN/STOP, the K row at sv_ra (sv_rb bytes, sv_rn
; elements, F16 when A != 0) is read to sv_kb, s_t = single(sum(q_i·k_t,i) from +0, q at sv_qb)
; times sv_c (rsqrt(head_dim)), single, stored at sv_sp on; sv_m = the largest as sf_lt orders
; them; sv_ra steps by sv_rs (a row of the cache). What score() and its caller's loop compute.
_sv_k_scores:
        jsr     rsetup
        jsr     fmt                     ; (kdot's f16 and kstr, for all rows)
@loop:  jsr     getrow                  ; the row into sv_kb (sm_read(sv_ra, sv_kb, sv_rb))
        bcc     @dot
        ldz     #0
        rts
@dot:   lda     #0                      ; sv_acc = +0, the dot product over the row
        tax
        tay
        taz
        stq     _sv_acc
        lda     _sv_qb
        sta     _sv_p
        lda     _sv_qb+1
        sta     _sv_p+1
        lda     _sv_kb                  ; q = the row, its elements
        sta     _sv_q
        lda     _sv_kb+1
        sta     _sv_q+1
        lda     _sv_rn
        sta     _sv_n
        lda     #$80                    ; (hdot leaves the sum in the A form)
        sta     kraw
        jsr     kdot
        lsr     kraw
        lda     aok
        beq     @pk
        lda     #<_sv_c                 ; the A form times the scale: yma (with y = sv_c), as
        sta     _sv_q                   ; sv_mul takes the packed sum: the same bits
        lda     #>_sv_c
        sta     _sv_q+1
        jsr     yma
        lda     #0
        sta     aok
        taz
        bra     @put
@pk:    movf    _sv_a, _sv_acc          ; times the scale
        movf    _sv_b, _sv_c
        jsr     _sv_mulz
@put:   lda     _sv_sp                  ; s_t at sv_sp, which moves on
        sta     _sv_p
        lda     _sv_sp+1
        sta     _sv_p+1
        putf    _sv_p, _sv_r
        ldz     #0
        jsr     nextw
        jsr     ltmax                   ; if (sf_lt(sv_m, s_t)) sv_m = s_t
        bra     @loop

; ATTN's output over the kept weights, one chunk of V: for t = 0..sv_rl (while SC_POLL() sees no
; RUN/STOP) o[i] = single(o[i] + single(w_t·v_t,i)) with o at sv_qb (sv_rn elements), w_t at
; sv_sp on and the chunk of V row t at sv_ra (sv_rb bytes, F16 when A != 0), sv_ra stepping by
; sv_rs: what the loop over t in softattn.c computes with the weights kept. The rows come in
; blocks, as many as fit (at most 255) from the head's sv_rl + 1 weights' end (vbase = sv_sp +
; 4·(sv_rl + 1)) to sv_vend; for each block each o[i] is a running sum of sv_k_dot's with the
; block's weights as p and V's column i as q (kstr = sv_rb): the same roundings in the same
; order, o[i] unpacked and packed once a block instead of once a row. Here kv = vbase, kv+2 the
; next row's place (then column i's), kt the row's end (then o[i]'s address), kt+2 the block's
; rows, kt+3 the columns left, v an element's bytes.
_sv_k_avs:
        jsr     rsetup
        jsr     fmt
        lda     kstr
        sta     v
        lda     _sv_rb                  ; (at most 128: 32 F32 elements)
        sta     kstr
        lda     _sv_rl                  ; vbase
        ldx     _sv_rl+1
        inc     a
        bne     :+
        inx
:       stx     kv+1
        asl     a
        rol     kv+1
        asl     a
        rol     kv+1
        clc
        adc     _sv_sp
        sta     kv
        lda     kv+1
        adc     _sv_sp+1
        sta     kv+1
@blk:   lda     kv                      ; a block: its rows from vbase on
        sta     kv+2
        lda     kv+1
        sta     kv+3
        lda     #0
        sta     kt+2
@row:   clc                             ; the row's end must be at most sv_vend
        lda     kv+2
        adc     _sv_rb
        sta     kt
        lda     kv+3
        adc     #0
        sta     kt+1
        cmp     _sv_vend+1
        bcc     @fit
        bne     @cols
        lda     _sv_vend
        cmp     kt
        bcc     @cols
@fit:   lda     kt+2                    ; and at most 255 rows a block
        inc     a
        beq     @cols
        lda     kv+2                    ; the row job's destination: the row's place in sc_w
        sta     rl_dst                  ; (BSS: its chip RAM address is its CPU address,
        lda     kv+3                    ; softcore_window.inc; rl_dstbk stays 0)
        sta     rl_dst+1
        jsr     getrow
        bcs     @cols
        inc     kt+2
        lda     kt
        sta     kv+2
        lda     kt+1
        sta     kv+3
        bra     @row
@cols:  lda     kt+2                    ; no rows: done (or RUN/STOP)
        bne     :+
        ldz     #0
        rts
:       lda     _sv_qb
        sta     kt
        lda     _sv_qb+1
        sta     kt+1
        lda     kv
        sta     kv+2
        lda     kv+1
        sta     kv+3
        lda     _sv_rn
        sta     kt+3
@col:   getf    _sv_acc, kt, 0          ; o[i] over the block's rows
        lda     _sv_sp
        sta     _sv_p
        lda     _sv_sp+1
        sta     _sv_p+1
        lda     kv+2
        sta     _sv_q
        lda     kv+3
        sta     _sv_q+1
        lda     kt+2
        sta     _sv_n
        jsr     kdot
        putf    kt, _sv_acc
        clc
        lda     kt
        adc     #4
        sta     kt
        bcc     :+
        inc     kt+1
:       clc
        lda     kv+2
        adc     v
        sta     kv+2
        bcc     :+
        inc     kv+3
:       dec     kt+3
        bne     @col
        lda     _sv_p                   ; the next block's weights: kdot left p after these
        sta     _sv_sp
        lda     _sv_p+1
        sta     _sv_sp+1
        jmp     @blk

; ATTN's heads with the scores kept and q one chunk: softattn.c's head loop (the definition) with
; the same kernels in the same order. For each of sa_nh heads, while sc_poll() sees no RUN/STOP:
; q (sa_hq bytes at sa_qh) to sv_qb's buffer; the scores (sv_k_scores, K at sa_kh, m from -inf);
; the softmax's numerators and their sum (sv_k_expsum, from +0, in chunks of 128); the weights
; (sv_k_scale by sf_recip of the sum); the output (+0, sv_k_avs over V at sa_vh) to sa_z; then
; sa_qh and sa_z on by sa_hq, sa_kh and sa_vh by sv_rb (a head's K bytes) every sa_grp heads.
; A = the format (F16 when != 0); the caller sets sv_rb, sv_rn, sv_rs, sv_rl (at most 255),
; sv_kb, sv_qb (q's buffer), sv_sp (the scores') and sv_c (the scale). The output chunk is
; sc_w.at.o, the union's first bytes (softattn.c checks).
_sv_k_attn:
        sta     sa_f
        lda     #0
        sta     sa_g
@head:  ldz     #0                      ; (cc65's code: Z = 0)
        jsr     _sc_poll                ; RUN/STOP
        tax
        beq     :+
        rts
:       jsr     push4                   ; sm_read(sa_qh, q's buffer, sa_hq) (X = 0)
        lda     _sa_qb
        ldx     _sa_qb+1
        jsr     pushax
        lda     _sa_hq
        ldx     #0
        jsr     _sm_read
        movf    _sv_ra, _sa_kh          ; the scores
        movf    _sv_c, _sa_scale
        lda     #0
        sta     _sv_m
        sta     _sv_m+1
        lda     #$80
        sta     _sv_m+2
        lda     #$FF                    ; -inf
        sta     _sv_m+3
        jsr     spset
        lda     _sa_qb
        sta     _sv_qb
        lda     _sa_qb+1
        sta     _sv_qb+1
        ldz     #0
        lda     sa_f
        jsr     _sv_k_scores
        jsr     smax
        lda     #0                      ; the output: +0
        ldx     _sa_hq
:       dex
        sta     _sc_w,x
        bne     :-
        movf    _sv_ra, _sa_vh
        jsr     spset
        lda     #<_sc_w
        sta     _sv_qb
        lda     #>_sc_w
        sta     _sv_qb+1
        ldz     #0
        lda     sa_f
        jsr     _sv_k_avs               ; (Z = 0 after it)
        ldx     #12                     ; sm_write(sa_z, the output, sa_hq)
        jsr     push4
        lda     #<_sc_w
        ldx     #>_sc_w
        jsr     pushax
        lda     _sa_hq
        ldx     #0
        jsr     _sm_write
        ldx     #0                      ; the next head's q and output
        lda     _sa_hq
        jsr     add4
        ldx     #12
        lda     _sa_hq
        jsr     add4
        inc     sa_g
        lda     sa_g
        cmp     _sa_grp
        bne     @nx
        lda     #0                      ; and K and V every sa_grp heads
        sta     sa_g
        ldx     #4
        lda     _sv_rb
        jsr     add4
        ldx     #8
        lda     _sv_rb
        jsr     add4
@nx:    dec     _sa_nh
        lbne    @head
        rts
; ATTN's weights from the kept scores at sa_sp (T = sv_rl + 1, at most 256) and their largest,
; sv_m: e_t = exp_table(single(s_t − m)) summed from +0 (sv_k_expsum in chunks of 128), then
; w_t = single(e_t·sf_recip(the sum)) (sv_k_scale), in place; what softattn.c's head loop does
_sv_k_smax:
smax:   lda     #0                      ; the sum from +0 of exp(s − m): s + (−m)
        tax
        tay
        taz
        stq     _sv_acc
        movf    _sv_c, _sv_m
        lda     _sv_c+3
        eor     #$80
        sta     _sv_c+3
        lda     #<_sv_exp_tab
        sta     _sv_tabd
        lda     #>_sv_exp_tab
        sta     _sv_tabd+1
        ldx     #<_sv_k_expsum
        ldy     #>_sv_k_expsum
        jsr     chunks
        lda     _sv_acc+2               ; sf_recip(the sum)
        sta     sreg
        lda     _sv_acc+3
        sta     sreg+1
        lda     _sv_acc
        ldx     _sv_acc+1
        jsr     _sf_recip
        sta     _sv_c
        stx     _sv_c+1
        lda     sreg
        sta     _sv_c+2
        lda     sreg+1
        sta     _sv_c+3
        ldx     #<_sv_k_scale
        ldy     #>_sv_k_scale
        jmp     chunks
; sv_sp = the scores
spset:  lda     _sa_sp
        sta     _sv_sp
        lda     _sa_sp+1
        sta     _sv_sp+1
        rts
; the kernel at Y:X over the scores sv_rl + 1 (at most 256) in chunks of 128, p from the first
chunks: stx     @j+1
        sty     @j+2
        ldz     #0                      ; (the kernels end with Z = 0)
        lda     _sa_sp
        sta     _sv_p
        lda     _sa_sp+1
        sta     _sv_p+1
        lda     _sv_rl
        bpl     @one
        lda     #128
        sta     _sv_n
        jsr     @j                      ; (the kernels move p on)
        lda     _sv_rl
        and     #$7F
@one:   inc     a
        sta     _sv_n
@j:     jmp     $FFFF                   ; (patched)
; cc65's push of the long at sa_v + X
push4:  lda     sa_v+3,x
        sta     sreg+1
        lda     sa_v+2,x
        sta     sreg
        lda     sa_v,x
        pha
        lda     sa_v+1,x
        tax
        pla
        jmp     pusheax
; the long at sa_v + X += A
add4:   clc
        adc     sa_v,x
        sta     sa_v,x
        bcc     :+
        inc     sa_v+1,x
        bne     :+
        inc     sa_v+2,x
        bne     :+
        inc     sa_v+3,x
:       rts

; the row loops' set-up: the format (A), the job's count and destination (sv_kb), t = 0, and the
; job's source: sv_ra as a flat 28-bit attic address (bank bits 16-19, megabyte bits 20-27), with
; sv_rs split the same way for getrow's steps
rsetup: sta     sc_f16
        lda     _sv_rb
        sta     rl_count
        lda     _sv_rb+1
        sta     rl_count+1
        lda     #0
        sta     sc_t
        sta     sc_t+1
        lda     _sv_ra
        sta     rl_src
        lda     _sv_ra+1
        sta     rl_src+1
        lda     _sv_ra+2
        and     #$0F
        sta     rl_srcbk
        lda     _sv_ra+3
        ldx     _sv_ra+2
        jsr     mbyte
        sta     rl_srcmb
        lda     _sv_rs+2
        and     #$0F
        sta     rs_bk
        lda     _sv_rs+3
        ldx     _sv_rs+2
        jsr     mbyte
        sta     rs_mb
        lda     _sv_kb                  ; the row job's destination: sv_kb, in sc_w (as above)
        sta     rl_dst
        lda     _sv_kb+1
        sta     rl_dst+1
        lda     sc_f16
        rts
; A = bits 20-27 of the 32-bit number whose byte 3 is A and byte 2 is X
mbyte:  asl     a
        asl     a
        asl     a
        asl     a
        sta     t16
        txa
        lsr     a
        lsr     a
        lsr     a
        lsr     a
        ora     t16
        rts
; row t = sc_t, when t <= sv_rl and SC_POLL() sees no RUN/STOP: read to the job's destination,
; sv_ra on by sv_rs, t + 1, C = 0; else C = 1
getrow: lda     _sv_rl+1
        cmp     sc_t+1
        bcc     @end
        bne     @poll
        lda     _sv_rl
        cmp     sc_t
        bcc     @end
@poll:  lda     _sc_stop                ; SC_POLL()
        bne     @end
        inc     _sc_tick
        bne     @read
        jsr     _sc_poll
        tax
        bne     @end
@read:  dma_run RL_PHYS                 ; the row (the CPU waits until the job is done)
        clc                             ; the job's source on by sv_rs: bits 0-15, the bank
        lda     rl_src                  ; (bits 16-19) with its carry, then the megabyte
        adc     _sv_rs
        sta     rl_src
        lda     rl_src+1
        adc     _sv_rs+1
        sta     rl_src+1
        lda     rl_srcbk
        adc     rs_bk
        cmp     #16
        bcc     :+
        sbc     #16                     ; (C = 1: into the megabyte)
:       sta     rl_srcbk
        lda     rl_srcmb
        adc     rs_mb
        sta     rl_srcmb
        inc     sc_t
        bne     :+
        inc     sc_t+1
:       clc
        rts
@end:   sec
        rts
        .data
; ATTN's row job (rowdma): F018B, addresses crossing megabyte boundaries (option $01, as
; softmem_m65.s), source and destination megabytes
rlist:  .byte   DMA_OPT_F018B, DMA_OPT_CROSS_MB, DMA_OPT_SRC_MB
rl_srcmb: .byte 0
        .byte   DMA_OPT_DST_MB, 0       ; the near buffers are in chip RAM's first megabyte
        .byte   DMA_OPT_END             ; end of options
        .byte   DMA_COPY                ; COPY
rl_count: .word 0
rl_src: .word   0
rl_srcbk: .byte 0
rl_dst: .word   0
rl_dstbk: .byte 0
        .byte   0                       ; sub-command
        .word   0                       ; modulo
RL_PHYS = rlist + SC_NEAR_DELTA
        .code

; The row's DMA job runs as softmem_m65.s's sm_read runs it: getrow's source (set by rsetup, stepped
; by getrow), destination and count. Every list address register is written, so the list may lie
; anywhere (a job leaves the address after its list: gs4510.vhdl, docs/spec/mega65.md §M3.1).
; sv_rb is never 0 (a count of 0 would move 64 KB): head_dim >= 1, two or four bytes an element.

; if (sf_lt(sv_m, sv_r)) sv_m = sv_r (softfloat.c's order: false when either is NaN or both are
; zeros of any sign; else the order of the keys that reverse the negatives below the positives)
ltmax:  lda     _sv_r+3                 ; s_t NaN: no
        and     #$7F
        cmp     #$7F
        bne     @rok
        lda     _sv_r+2
        cmp     #$80
        bcc     @rok                    ; exponent below 255
        bne     @no                     ; a fraction bit in byte 2 (with exponent 255)
        lda     _sv_r+1
        ora     _sv_r
        bne     @no
@rok:   lda     _sv_m+3                 ; (sv_m is never NaN: sv_k_attn starts it at -inf and
        eor     _sv_r+3                 ; only non-NaN values are stored) signs differ: the
        bpl     @same                   ; negative one is the smaller, unless both are zeros
                                        ; (equal; with the same signs the magnitudes' comparison
                                        ; finds them equal)
        lda     _sv_r+3
        ora     _sv_m+3
        and     #$7F
        ora     _sv_r+2
        ora     _sv_m+2
        ora     _sv_r+1
        ora     _sv_m+1
        ora     _sv_r
        ora     _sv_m
        beq     @no
        lda     _sv_r+3
        bmi     @no                     ; s_t < 0 <= sv_m
        bra     @yes
@same:  ldx     #3                      ; same sign: compare magnitudes from the top byte
@cmp:   lda     _sv_m,x
        cmp     _sv_r,x
        bne     @ne
        dex
        bpl     @cmp
@no:    rts                             ; equal
@ne:    ror     a                       ; C (|sv_m| > |s_t|: the bytes differ) to bit 7
        eor     _sv_r+3                 ; positives: sv_m < s_t when C = 0; negatives: when C = 1
        bpl     @yes
        rts
@yes:   ldx     #3
@max:   lda     _sv_r,x
        sta     _sv_m,x
        dex
        bpl     @max
        rts

; sv_sp += 4
nextw:  clc
        lda     _sv_sp
        adc     #4
        sta     _sv_sp
        bcc     :+
        inc     _sv_sp+1
:       rts

        .rodata
pow2:   .byte   $00, $80, $40, $20, $10, $08, $04, $02   ; 2^(8−k) for a shift right by k
shofs7: .byte   21, 18, 15, 12, 9, 6, 3, 0              ; BRA offsets into 7 LSRQs: k of them
; sqadd's MULB = 2^(32 − k) for k = 8..24, its bytes 1, 2 and 3 (byte 0 is 0)
sqm1:   .byte   0, 0, 0, 0, 0, 0, 0, 0, 0, $80, $40, $20, $10, $08, $04, $02, $01
sqm2:   .byte   0, $80, $40, $20, $10, $08, $04, $02, $01, 0, 0, 0, 0, 0, 0, 0, 0
sqm3:   .byte   1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
bits:   .byte   $01, $02, $04, $08, $10, $20, $40, $80   ; 2^k

; ---------------------------------------------------------------------------------------------
; VADD / VMUL: x[i] = single(x[i] + y[i]) (A = 0) or single(x[i]·y[i]) (A != 0), p = x, q = y
; (the operation patched into the loop's JSR once a call; the pointers move on in the loop itself)
_sv_k_vop:
        tax
        beq     :+
        lda     #<_sv_mul
        ldx     #>_sv_mul
        bra     @set
:       lda     #<_sv_add
        ldx     #>_sv_add
@set:   sta     @op+1                   ; the loop's JSR patched (the core runs from RAM)
        stx     @op+2
@loop:  getf    _sv_a, _sv_p, 0
        getf    _sv_b, _sv_q, 0
@op:    jsr     _sv_add
        putf    _sv_p, _sv_r
        clc
        lda     _sv_p
        adc     #4
        sta     _sv_p
        bcc     :+
        inc     _sv_p+1
:       clc
        lda     _sv_q
        adc     #4
        sta     _sv_q
        bcc     :+
        inc     _sv_q+1
:       next    @loop

; GELU (any table alone): x[i] = table(x[i]), p = x, sv_tabd set
_sv_k_tab:
        jsr     tsetup
@loop:  getf    v, _sv_p, 0
        jsr     table
        putf    _sv_p, _sv_r
        step4   _sv_p
        next    @loop

; ATTN's softmax numerators: s[i] = exp_table(single(s[i] − m)), acc = single(acc + s[i]);
; p = s, sv_c = −m (x − m is x + (−m) in softfloat.c too: sf_sub flips b's sign and adds),
; sv_tabd = the exp table
_sv_k_expsum:
        jsr     tsetup
        jsr     esetup
@loop:  getf    _sv_a, _sv_p, 0
        movf    _sv_b, _sv_c
        jsr     _sv_add
        movf    v, _sv_r
        jsr     texp
        putf    _sv_p, _sv_r
        movf    _sv_a, _sv_acc
        movf    _sv_b, _sv_r
        jsr     _sv_add
        movf    _sv_acc, _sv_r
        jsr     incp
        next    @loop

; ARGMAX over a chunk, p = x: sv_acc holds the best's order key so far (key above; 0 = none
; yet, or the best is a NaN: no number has key 0, since -inf's is $007FFFFF), so an element
; wins only with a larger key, i.e. a larger value (the first of equal ones stays; -0 = +0),
; or as the first number after a NaN. NaNs never win (the C's first element is taken by the
; caller's start at index 0). Returns A = 1 + the index of the chunk's last winner, 0 if none.
; The key's top two bytes come from the element's top two (positive: bit 7 set; negative: both
; inverted); when they are below sv_acc's the element cannot win (its key is below; -0's $7FFF
; is below $80xx as its key $80000000 is not above any key from $80000000 on; a NaN never wins
; anyway), so most elements cost only that; the others take the whole key. Y = the element's
; byte 3 within sv_p's page (sv_p steps a page, and ex 64 elements, when Y wraps).
_sv_k_argmax:
        lda     #0
        sta     ex                      ; here: the index of the element at sv_p
        sta     ey                      ; here: 1 + the winner's
        ldy     #3
@loop:  ldx     #0
        lda     (_sv_p),y               ; the top byte
        bpl     :+
        dex
        eor     #$7F                    ; negative: with the EOR below, all bits inverted
:       stx     kt+1                    ; $FF for a negative element, else 0
        eor     #$80                    ; the key's top byte
        cmp     _sv_acc+3
        bcc     @rej
        bne     @full
        dey
        lda     (_sv_p),y               ; equal: the second byte
        iny
        eor     kt+1
        cmp     _sv_acc+2
        bcs     @full
@rej:   tya                             ; C = 0
        adc     #4
        tay
        bcs     @page
@nx:    dec     _sv_n
        bne     @loop
        ldz     #0
        lda     ey
        ldx     #0
        rts
@page:  inc     _sv_p+1
        lda     ex
        adc     #63                     ; C = 1: 64 elements a page
        sta     ex
        bra     @nx
@full:  sty     kt
        tya
        and     #$FC
        taz
        ldqi    _sv_p
        stq     kv
        lda     kv+2                    ; exponent $FF with a fraction: NaN
        asl     a
        lda     kv+3
        rol     a
        cmp     #$FF
        bne     @num
        lda     kv+2
        and     #$7F
        ora     kv+1
        ora     kv
        bne     @skip
@num:   jsr     key
        sec
        ldq     kv
        sbcq    _sv_acc
        bcc     @skip
        beq     @skip
        movf    _sv_acc, kv
        lda     kt                      ; 1 + ex + Y / 4
        lsr     a
        lsr     a
        sec
        adc     ex
        sta     ey
@skip:  ldy     kt
        clc
        bra     @rej

; DEQROW of a Q block: x[i] = single(d·q[i]), p = x, q = the int8 quants, sv_h = d (F16). Each q
; is a single by bit work (exact: |q| <= 128 has 8 bits), then sv_mul with d widened by sv_f16
; (zero, subnormal, inf and NaN d through softfloat.c, as sf_mul(d, single(q)))
_sv_k_deq:
        jsr     _sv_f16
        movf    _sv_c, _sv_b
@loop:  lda     #0
        sta     _sv_a
        sta     _sv_a+1
        sta     _sv_a+2
        sta     _sv_a+3
        tax                             ; the sign
        tay
        lda     (_sv_q),y
        beq     @mul                    ; +0
        bpl     :+
        eor     #$FF                    ; |q|, 1..128
        inc     a
        ldx     #$80
:       ldy     #134                    ; 127 + 7: the exponent with bit 7 the leading 1
@norm:  cmp     #$80
        bcs     :+
        asl     a
        dey
        bra     @norm
:       asl     a                       ; the fraction's top 7 bits, hidden bit out
        sta     _sv_a+2
        tya
        lsr     a                       ; C = the exponent's low bit
        ror     _sv_a+2
        sta     _sv_a+3
        txa
        tsb     _sv_a+3
@mul:   movf    _sv_b, _sv_c
        jsr     _sv_mul
        putf    _sv_p, _sv_r
        jsr     incp
        inw     _sv_q
        next    @loop

; CVT16: h[i] = x[i] rounded to nearest even as an F16, p = x, q = h (2 bytes each). Fast path:
; exponents 113..142, the F16 normals (and their roundings up to infinity); the rest (zeros,
; F16 subnormals and underflow, overflow, infinities, NaN) through softfloat.c's sf_to_f16.
; With b the magnitude, (b − (112 << 23)) << 3 has the F16's exponent and fraction in its top
; 16 bits and the 13 bits dropped in its low 16; a carry of the rounding runs into the exponent
; (at the top, to infinity) as softfloat.c's pack.
_sv_k_cvt16:
@loop:  getf    kv, _sv_p, 0
        lda     kv+2
        asl     a
        lda     kv+3
        rol     a
        sec
        sbc     #113
        cmp     #142 - 113 + 1
        bcs     @slow
        lda     kv+3                    ; b − (112 << 23), the sign kept in kt
        sta     kt
        and     #$7F
        sec
        sbc     #$38
        sta     kv+3
        aslqm   kv
        aslqm   kv
        aslqm   kv
        lda     kv+1                    ; the dropped bits against half
        cmp     #$80
        bcc     @put
        bne     @up
        lda     kv
        bne     @up
        lda     kv+2                    ; a tie: to even
        lsr     a
        bcc     @put
@up:    inc     kv+2
        bne     @put
        inc     kv+3
@put:   lda     kt
        and     #$80
        ora     kv+3
        ldy     #1
        sta     (_sv_q),y
        lda     kv+2
        dey
        sta     (_sv_q),y
@next:  step4   _sv_p
        clc
        lda     _sv_q
        adc     #2
        sta     _sv_q
        bcc     :+
        inc     _sv_q+1
:       dec     _sv_n
        bne     @loop
        ldz     #0
        rts
@slow:  movf    _sv_a, kv
        ldz     #0
        jsr     _sv_slow_cvt
        lda     _sv_h+1
        ldy     #1
        sta     (_sv_q),y
        lda     _sv_h
        dey
        sta     (_sv_q),y
        bra     @next
