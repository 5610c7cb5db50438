; exactsum65.s: the F32/F16/BF16 GEMV inner loop of softgemv.c on the 45GS02 (cc65 builds; the C
; in exactsum.c and softgemv.c stays the definition, used on the PC and with -DSC_C_GEMV).
;
; Rows inner: softgemv.c keeps up to XR_ROWS rows at once, each in its own 256-byte page
; (exactsum.h: its 74-byte accumulator at offsets 1-74, biased as xs_clear leaves xs_acc, the
; next row's page at XR_LINK (0 after the last), its special products at XR_SPEC (exactsum.c's
; bits), its weights of the chunk at XR_W). xr_chunk adds w_rj·x_j for j < xr_n (the input at
; xr_x, page-aligned) to every row's accumulator: the sums of xs_add_product on each pair, in
; another order (an exact sum does not depend on it). x_j is unpacked once for all the rows:
;
; * Its significand mb (hidden bit included; ±0 and subnormals with exponent 1) shifted left by
;   b = (eb + K) mod 8 goes to MULTINB (< 2^31; spec/mega65.md §M9: the product is ready one
;   cycle after the write); Q = (eb + K) div 8, its sign and the weights' offsets are patched into
;   the row loop of the format. K = 6, F16 3 (below).
; * Per row, with the base page B = the row's page (the accumulator bytes are base-page operands):
;   the weight's significand ma (F32 24 bits, F16 11, BF16 8, hidden bit included; zero and
;   subnormals with ea = 1, F16's with ea = 126) shifted left by a = ea' mod 8 (an ASLQ chain
;   entered through a patched JMP) goes to MULTINA. exactsum.c puts the lowest bit of ma·mb at
;   bit pos = ea + eb - 2 of the accumulator (F16: ea = e5 + 125; BF16's ma is the widened
;   significand's top byte, 16 bits up). With ea' = ea + 6 - K, pos = ea' + (eb + K) - 8, so
;   P = (ma·2^a)·(mb·2^b) has its lowest bit at bit 8·(ea' div 8 + Q - 1) (+ 16 for BF16), page
;   byte ea' div 8 + Q (+ 2): P's bytes are added to or subtracted from the accumulator from that
;   byte on — 6 of them (P < 2^48), 7 for F16 when b = 7 (P < 2^(35 + a + b)), 8 for F32 — then
;   the carry (borrow) runs up while it is set. F16 reads a (as the chain's entry) and ea' div 8
;   (+ 128 for a negative weight) from two 64-byte tables indexed by the weight's high byte
;   shifted right twice; Q carries x's sign in bit 7, so the sum's bit 7 is the product's sign
;   (P's 7th byte: P < 2^(35 + a + b) reaches it only when a = b = 7). The page offset 1: a product whose lowest byte lies below the accumulator's
;   (F32 ea' < 8 with eb = 1; that byte is then 0) has a byte to land on.
; * An infinite or NaN weight or x_j goes to the C (xr_spec: the row's XR_SPEC as accumulate()
;   marks it); ±0 weights and x = ±0 add zeros.
;
; Loop state is absolute; the row loop's operands are patched (the core runs from RAM).

        .p4510
        .include        "quad.inc"              ; quad instructions, the multiplier
        .include        "dmajob.inc"            ; a job list's address, its start
        .include        "fn_tables.inc"         ; WT_F32, WT_F16 (anything else: BF16), XS_, XR_
        .import         _xr_spec
        .export         _xr_chunk, _xr_start, _xr_pg, _xr_n, _xr_x, _xr_fmt, _xr_jy, _xr_pgs
        .export         _xr_stk, _xr_load, _xr_wa, _xr_rb, _xr_wn
        .import         SC_NEAR_DELTA
; the lowest pages of the core's 1 KB C stack (exactsum.h): XR_SROWS of them hold row pages while
; a GEMV runs with the stack above them
        .include        "softcore_abi.inc"      ; SC_STACK
.ifdef SC_UNMAPPED
        .import         __STACKTOP__
_xr_stk = __STACKTOP__ - SC_STACK       ; the test PRG: as low under its stack's top as the core's
.else
_xr_stk = SC_WIN_END - SC_STACK         ; the core's C stack (linker/softcore.cfg)
.endif
_xr_jy = y0q + 3                        ; 4·j (the LDQ's operand)


        .bss
_xr_fmt:.res    1                       ; WT_F32, WT_F16 or WT_BF16 (fn_tables.h)
_xr_pg: .res    1                       ; the first row's page (high byte)
_xr_pgs:.res    XR_ROWS                 ; the rows' pages (high bytes), in order
pphi:   .res    XR_ROWS                 ; their chip RAM addresses: bits 8-15
pbk:    .res    XR_ROWS                 ; and 16-19 (xr_start)
_xr_n:  .res    1                       ; elements, 1..XR_N (4·j is a byte)
_xr_x:  .res    2                       ; the chunk's input, f32[xr_n]
lastp:  .res    1                       ; xr_start: rows left
bv:     .res    1                       ; b
hid:    .res    1                       ; the weight's hidden bit (BF16, F32)
xsg:    .res    1                       ; x_j's sign (bit 7)
bt:     .res    1                       ; its byte index
savb:   .res    1                       ; the caller's base page
nrow:   .res    1                       ; the block's rows (xr_start)
_xr_wa: .res    4                       ; the first row's weights of the next chunk
_xr_rb: .res    4                       ; the row stride
_xr_wn: .res    1                       ; the chunk's weight bytes a row
xa:     .res    4                       ; xr_load: this row's
rbhi:   .res    1                       ; xr_load: the row stride's bytes 2-3 ORed

        .data
; xr_load's DMA job: an F018A entry (no sub-command), addresses crossing megabyte boundaries
; instead of wrapping inside them (option $01), the source megabyte; the destination's megabyte
; is 0 (the row pages are chip RAM: options reset after a job's last entry, gs4510.vhdl
; dmagic_reset_options; docs/spec/mega65.md §M3.2-§M3.3), as softgemv65.s's job
xl_list:.byte   DMA_OPT_F018A, DMA_OPT_CROSS_MB, DMA_OPT_SRC_MB
xl_smb: .byte   0
        .byte   DMA_OPT_END             ; end of options
        .byte   DMA_COPY                ; COPY
xl_cnt: .word   0
xl_src: .word   0
xl_sbk: .byte   0
        .byte   XR_W                    ; the destination: the row's page at XR_W
xl_dhi: .byte   0
xl_dbk: .byte   0
        .word   0                       ; modulo
XL_PHYS = xl_list + SC_NEAR_DELTA
; xr_start's DMA job: an F018A fill (the value in the source address's low byte: docs/spec/
; mega65.md §M3.2; xemu dma65.c takes filler_byte from it) of a row page's bytes 0-75 with the
; bias $80, in chip RAM as xr_load's destinations
xf_list:.byte   DMA_OPT_F018A, DMA_OPT_END
        .byte   DMA_FILL
        .word   76                      ; bytes 0-75
        .word   $80                     ; the value
        .byte   0
        .byte   0                       ; the destination: the page from byte 0
xf_dhi: .byte   0
xf_dbk: .byte   0
        .word   0                       ; modulo
XF_PHYS = xf_list + SC_NEAR_DELTA
        .assert (SC_NEAR_DELTA & $FF) = 0, lderror, "exactsum65.s: a page's chip RAM address is not a page's"

        .code

; --- the rows' shift chain and addition (B = the row's page), first in the module: rjmp's targets,
; wsubn to rs0 (43 bytes), must share a page (only the JMP's low byte is patched): from a 64-byte
; boundary they do wherever the linker puts this module, and first here they leave no gap in it
        .align  64
wsubn:  dex                             ; e5 = 0: no hidden bit, ea = 126 (a = 1)
        dex
        dex
        dex
        jmp     rs1
wspecs: pla                             ; e5 = 31: an infinite or NaN weight
        jmp     wspec
rr7:    phx                             ; a = 7 (F16: A X Y Z = ma, 0, 0): ma·2^8 (A X Y = 0, its
        tax                             ; low byte, its high byte) shifted right once, 20 cycles
        ply                             ; instead of seven ASLQs' 28
        lda     #0
        lsrq
        bra     rs0
rs7:    aslq
        aslq
        aslq
        aslq
        aslq
        aslq
rs1:    aslq
rs0:    stq     MULA                    ; ma·2^a
        plx                             ; byte index (+ 128: negative)
        bmi     rsub
        clc                             ; bytes 0-1 by X, 2-5 by one quad (which loads X too)
        lda     0,x
        adc     MULO
        sta     0,x
        lda     1,x
        adc     MULO+1
        sta     1,x
        inx
        inx
        stx     aq1+3
        stx     aq2+3
aq1:    ldq     $00                     ; (patched: the index + 2)
        adcq    MULO+2
aq2:    stq     $00
r6a:    bcs     r6c                     ; (patched: BRA where byte 6 can be nonzero)
rnext:  lda     XR_LINK                 ; the next row's page, 0 after the last
        tab
rlj1:   lbne    rl_f16                  ; (patched: the format's row loop; a 16-bit branch takes
        jmp     xjnext                  ; 4 cycles taken or not, a JMP 5: xemu's measured 40.5 MHz
                                        ; table, emu/mega65/src/opcodes.rs)
r6c:    ldx     aq1+3                   ; the index + 2
        lda     4,x
        adc     MULO+6
        sta     4,x
r7a:    bcs     r7c                     ; (patched: BRA for F32)
        bcc     rnext
r7c:    lda     5,x
        adc     MULO+7
        sta     5,x
        bcc     rnext
@c:     inc     6,x                     ; up to the top byte (a carry out of it is dropped)
        bne     rnext
        inx
        cpx     #XS_BYTES - 5
        bne     @c
        beq     rnext
rsub:   sec                             ; X = index + 128: operands $80 + i wrap to the index
        lda     $80,x                   ; (base-page indexing stays in the page: B & (nn + X),
        sbc     MULO                    ; an 8-bit sum, gs4510.vhdl line 7453; xemu's _zpx())
        sta     $80,x
        lda     $81,x
        sbc     MULO+1
        sta     $81,x
        inx
        inx
        txa
        and     #$7F
        sta     sq1+3
        sta     sq2+3
sq1:    ldq     $00                     ; (patched: the index + 2)
        sbcq    MULO+2
sq2:    stq     $00
r6s:    bcc     r6d                     ; (patched like r6a)
        lda     XR_LINK
        tab
rlj2:   lbne    rl_f16                  ; (patched like rlj1)
        jmp     xjnext
r6d:    lda     sq1+3
        ora     #$80
        tax                             ; the index + 2 + 128
        lda     $84,x
        sbc     MULO+6
        sta     $84,x
r7s:    bcc     r7d                     ; (patched like r7a)
        bcs     rnext
r7d:    lda     $85,x
        sbc     MULO+7
        sta     $85,x
        bcs     rnext
@b:     lda     $86,x
        dec     $86,x
        tay
        bne     rnext                   ; the byte was not 0: the borrow stops here
        inx
        cpx     #$80 + XS_BYTES - 5
        bne     @b
        jmp     rnext



; void xr_chunk(void): every row += Σ_{j < xr_n} w_rj·x_j exactly, for xr_fmt weights. xr_x is
; page-aligned (softgemv.c), so the low byte of the LDQ's operand is 4·j (xr_jy, for the C).
_xr_chunk:
        tba
        sta     savb
        lda     _xr_n
        asl     a
        asl     a
        sta     jendop+1
        lda     #0
        sta     y0q+3
        lda     _xr_x+1
        sta     y0q+4
        ldx     #0                      ; the format: 0, 1, 2 for the tables below
        lda     _xr_fmt
        cmp     #WT_F32
        beq     @k
        inx
        cmp     #WT_F16
        beq     @k
        inx
@k:     txa                             ; the row loop (the offsets of the links' long BNEs), the
        asl     a                       ; per-element patches, bytes 7 and 8
        asl     a
        tay
        lda     rlo,y
        sta     rlj1+1
        lda     rlo+1,y
        sta     rlj1+2
        lda     rlo+2,y
        sta     rlj2+1
        lda     rlo+3,y
        sta     rlj2+2
        lda     pt_lo,x
        sta     ptjmp+1
        lda     pt_hi,x
        sta     ptjmp+2
        lda     op7,x
        sta     r7a
        lda     op7s,x
        sta     r7s
        lda     op6,x
        sta     r6a
        lda     op6s,x
        sta     r6s
        lda     #$F0                    ; (BEQ: r6a, r6s as op6 sets them)
        sta     pfb
        lda     xkv,x
        sta     xk+1
        lda     ma_lo,x
        sta     gma+1
        lda     ma_hi,x
        sta     gma+2

; --- x_j, once for the rows ---
xjl:
y0q:    ldq     $FF00                   ; x_j (patched: the chunk's page, 4·j): A X Y Z = bytes 0-3
        pha
        tza
        and     #$80
        sta     xsg                     ; x's sign, into Q's bit 7 below
        tya
        asl     a
        tza
        rol     a                       ; eb
        beq     xzs
        cmp     #$FF
        beq     xspc
        taz
        tya
        ora     #$80                    ; the hidden bit
        tay
        tza
xgo:                                    ; (C = 0)
xk:     adc     #6                      ; (patched: K = 6, F16 3: see the tables)
        taz
        ror     a                       ; (eb + K) div 8, the carry pulled in
        lsr     a
        lsr     a
        ora     xsg                     ; (Q <= 32)
        sta     qop+1                   ; Q + 128 for a negative x, into the F16 row loop (the
                                        ; others copy it): the index's bit 7 is then the
                                        ; product's sign, the weight's flipped by x's
        tza
        and     #7
        sta     bv                      ; b
        asl     a                       ; the chain's entry: xs0 - 3·b
        adc     bv
        eor     #$FF
        adc     #<(xs0 + 1)
        sta     xjmp+1
        ldz     #0                      ; Q = A X Y Z = mb
        pla
xjmp:   jmp     xs7                     ; (patched: 7 - b ASLQs skipped)
xs7:    aslq
        aslq
        aslq
        aslq
        aslq
        aslq
        aslq
xs0:    stq     MULB                    ; mb·2^b
        lda     y0q+3                   ; 4·j
ptjmp:  jmp     pt_f16                  ; (patched: the format's operand patches)
xzs:    lda     #1                      ; ±0 or subnormal: exponent 1, no hidden bit
        clc
        bra     xgo
xspc:   pla
        lda     savb                    ; inf or NaN: the C marks every row
        tab
        lda     _xr_pg
xsl:    sta     xlk+2
        ldz     #0
        jsr     _xr_spec
xlk:    lda     $FF00+XR_LINK
        bne     xsl

xjnext: lda     y0q+3
        clc
        adc     #4
        sta     y0q+3
jendop: cmp     #0                      ; (patched: 4·n mod 256)
        lbne    xjl
        lda     savb
        tab
        ldz     #0
        rts

; per element (A = 4·j): the weight's offset in the row pages, x's sign and Q into the format's
; row loop, then the rows from the first page on
pt_bf:  lsr     a
        adc     #XR_W                   ; XR_W + 2·j
        ldx     #2
        bra     pt_g
pt_f32: clc
        adc     #XR_W                   ; XR_W + 4·j
        sta     gw0+1
        inc     a
        sta     gw1+1
        inc     a
        ldx     #0
pt_g:   sta     gl+1
        sta     gl2+1
        inc     a
        sta     gh+1
        sta     gh2+1
        txa
        clc
        adc     qop+1
        sta     gqop+1
        lda     _xr_pg
        tab
        jmp     rl_g

; --- the rows (B = the row's page) ---
; F16: the tables give the chain's entry and ea div 8 (+ 128: a negative product)
; F16: b = 7 needs the product's 7th byte (r6a, r6s BRA instead of BCS, BCC); pfb (a BEQ while
; they are BCS/BCC, as xr_chunk sets them, a BNE while they are BRAs) finds the x_j that change it
pf_sw:  lda     pfb                     ; BEQ <-> BNE
        eor     #$F0 ^ $D0
        sta     pfb
        cmp     #$D0
        beq     @b7
        lda     #$B0                    ; b < 7 again: BCS, BCC
        sta     r6a
        lda     #$90
        sta     r6s
        bra     pf_go
@b7:    lda     #$80                    ; b = 7: BRA
        sta     r6a
        sta     r6s
        bra     pf_go
pt_f16: lsr     a
        adc     #XR_W                   ; (C = 0: 4·j is even) XR_W + 2·j
        sta     wl+1
        inc     a
        sta     wh1+1
        lda     bv
        cmp     #7
pfb:    beq     pf_sw                   ; (patched: BEQ, or BNE while r6a, r6s are BRAs)
pf_go:  lda     _xr_pg
        tab                             ; (on into the rows)
rl_f16:
wh1:    ldx     $00                     ; w_rj high byte (patched: XR_W + 2j + 1)
        txa
        lsr     a
        lsr     a
        tay                             ; the weight's sign·32 + e5
        lda     tsh,y
        sta     rjmp+1
        lda     tby,y
        clc
qop:    adc     #$00                    ; (patched: Q + 128·x's sign; bit 7 of the sum: the
                                        ; product's sign, as tby's flipped)
        pha
        txa
        and     #3
        ora     #4
        tax
wl:     lda     $00                     ; w_rj low byte (patched: XR_W + 2j)
        ldy     #0
        ldz     #0
rjmp:   jmp     rs7                     ; (patched: 7 - a ASLQs skipped, or a stub)
; BF16 and F32: ea from the byte with its low bit (BF16's low byte, F32's byte 2) and the top
; byte; ma: BF16 the low byte's 7 bits and the hidden bit, F32 bytes 0-2
rl_g:
gl:     lda     $00                     ; e mmmmmmm (patched: BF16 XR_W + 2j, F32 XR_W + 4j + 2)
        asl     a
gh:     lda     $00                     ; s eeeeeee (patched: that + 1)
        rol     a                       ; ea
        beq     gsub
        cmp     #$FF
        beq     wspec
        ldx     #$80
gn:     stx     hid
        tax
        and     #7
        tay
        lda     tsh8,y
        sta     rjmp+1
        txa
        lsr     a
        lsr     a
        lsr     a
        clc
gqop:   adc     #0                      ; (patched: Q, BF16 Q + 2, + 128 for a negative x)
        sta     bt                      ; (ea div 8 + Q + 2 < 128: bit 7 is x's sign)
gh2:    lda     $00                     ; (patched like gh)
        and     #$80
        eor     bt                      ; bit 7: the product's sign
        pha
gl2:    lda     $00                     ; (patched like gl)
        and     #$7F
        ora     hid
gma:    jmp     gbf                     ; (patched: gbf or gf32)
gbf:    ldx     #0
        ldy     #0
        ldz     #0
        jmp     rjmp
gf32:   tay
gw1:    ldx     $00                     ; (patched: XR_W + 4j + 1)
gw0:    lda     $00                     ; (patched: XR_W + 4j)
        ldz     #0
        jmp     rjmp
gsub:   lda     #1
        ldx     #0
        bra     gn

; an infinite or NaN weight: the C marks the row (xr_spec(page))
wspec:  tba
        pha
        lda     savb
        tab
        pla
        pha
        ldz     #0
        jsr     _xr_spec                ; (it leaves the multiplier alone: exactsum.h)
        pla
        tab
        jmp     rnext

; void xr_start(uint8_t nr): the pages xr_pgs[0..nr-1] ready for a row block: the accumulator
; (bytes 1-74; byte 0 too) biased as xs_clear leaves xs_acc, no special products, each page
; linked to the next in xr_pgs (the base page moved to each; the caller's back on return); xr_pg
; the first
_xr_start:
        sta     nrow
        sta     lastp                   ; rows left
        tba
        sta     savb
        lda     _xr_pgs
        sta     _xr_pg
        ldx     #0
@pg:    lda     _xr_pgs,x               ; the page's chip RAM address, kept for xr_load: a page
        ldy     #0                      ; in the window (the C stack's) is the core's chip RAM,
        cmp     #>SC_WIN_END            ; one outside it (the BSS's) bank 0 as the CPU sees it
        bcs     @out                    ; (softcore_window.inc)
        cmp     #>SC_WIN_START
        bcc     @out
        adc     #<((SC_NEAR_DELTA >> 8) - 1) ; (C = 1)
        ldy     #^SC_NEAR_DELTA
        bcc     @out
        iny
@out:   sta     pphi,x
        sta     xf_dhi                  ; bytes 0-75 of the page: $80, by a DMA fill (76 cycles
        tya                             ; and its 14-byte list)
        sta     pbk,x
        sta     xf_dbk
        dma_run XF_PHYS
        lda     _xr_pgs,x
        tab
        lda     #0
        sta     XS_BYTES                ; byte 74: the accumulator's top byte (bias 0)
        sta     XR_SPEC
        inx
        dec     lastp
        beq     @l                      ; the last row: no next page (A = 0)
        lda     _xr_pgs,x
@l:     sta     XR_LINK
        bne     @pg
        lda     savb
        tab
        ldz     #0
        rts


; void xr_load(void): the chunk's xr_wn weight bytes of every row of the block (xr_start's) from
; xr_wa on (a row every xr_rb bytes) into the rows' pages at XR_W, one DMA job a row; xr_wa moves on
; by xr_wn. SSNAIL addresses are flat attic addresses (softmem_m65.s): bits 0-19 the job's
; address and bank, 20-27 its megabyte.
_xr_load:
        lda     _xr_wn
        sta     xl_cnt
        lda     _xr_rb+2                ; nonzero: every row's step reaches the bank or megabyte
        ora     _xr_rb+3
        sta     rbhi
        ldx     #3
@cp:    lda     _xr_wa,x
        sta     xa,x
        dex
        bpl     @cp
        inx
@hi:    lda     xa+2                    ; the bank and megabyte, again only when they change
        and     #$0F
        sta     xl_sbk
        lda     xa+3
        asl     a
        asl     a
        asl     a
        asl     a
        sta     xl_smb
        lda     xa+2
        lsr     a
        lsr     a
        lsr     a
        lsr     a
        ora     xl_smb
        sta     xl_smb
@row:   lda     xa
        sta     xl_src
        lda     xa+1
        sta     xl_src+1
        lda     pphi,x                  ; the page's chip RAM address (xr_start's)
        sta     xl_dhi
        lda     pbk,x
        sta     xl_dbk
        dma_run XL_PHYS                 ; the CPU waits until the job is done
        inx
        cpx     nrow
        beq     @end
        clc
        lda     xa
        adc     _xr_rb
        sta     xa
        lda     xa+1
        adc     _xr_rb+1
        sta     xa+1
        bcs     @c                      ; (C = 1 into the high half)
        lda     rbhi
        beq     @row                    ; the same bank and megabyte
@c:     lda     xa+2
        adc     _xr_rb+2
        sta     xa+2
        lda     xa+3
        adc     _xr_rb+3
        sta     xa+3
        jmp     @hi
@end:   clc
        lda     _xr_wa
        adc     _xr_wn
        sta     _xr_wa
        bcc     @done
        inc     _xr_wa+1
        bne     @done
        inc     _xr_wa+2
        bne     @done
        inc     _xr_wa+3
@done:  rts


        .rodata
; the JMP targets' low bytes: 7 - a ASLQs skipped in the row chain
tsh8:   .byte   <rs0, <(rs7+18), <(rs7+15), <(rs7+12), <(rs7+9), <(rs7+6), <(rs7+3), <rs7
        .assert >xs7 = >xs0, error, "exactsum65.s: the x chain crosses a page"
        .assert <xs7 < <xs0, error, "exactsum65.s: the x chain crosses a page"
        .assert >rs7 = >rs0 && >wsubn = >rs0 && >wspecs = >rs0 && >rr7 = >rs0, error, "exactsum65.s: the row chain crosses a page"
; per format (WT_F32, WT_F16, WT_BF16): the row loop, the per-element patches, the opcodes at
; r6a/r6s and r7a/r7s (BCS/BCC: on to the next byte only with a carry (borrow), BRA: always)
rlo:    .word   (rl_g - rlj1 - 2) & $FFFF, (rl_g - rlj2 - 2) & $FFFF     ; (a 16-bit branch's
        .word   (rl_f16 - rlj1 - 2) & $FFFF, (rl_f16 - rlj2 - 2) & $FFFF ; offset is from its
        .word   (rl_g - rlj1 - 2) & $FFFF, (rl_g - rlj2 - 2) & $FFFF     ; operand's second byte)
ma_lo:  .byte   <gf32, <gbf, <gbf
ma_hi:  .byte   >gf32, >gbf, >gbf
pt_lo:  .byte   <pt_f32, <pt_f16, <pt_bf
pt_hi:  .byte   >pt_f32, >pt_f16, >pt_bf
xkv:    .byte   6, 3, 6
op6:    .byte   $80, $B0, $B0
op6s:   .byte   $80, $90, $90
op7:    .byte   $80, $B0, $B0
op7s:   .byte   $80, $90, $90
; F16, indexed by the weight's sign·32 + e5: the chain's entry (7 - a ASLQs skipped) and ea' div 8 (+ 128 for
; the negative half), ea' = ea + 3 (e5 + 128; 129 for e5 = 0) and a = ea' mod 8: the split of
; pos between a and b is free (the x side takes eb + 3 for it, K), and this one gives the
; weights of a model, |w| 2^-7 to 2^-4 (e5 8-11), the shortest shifts (a = 0-3)
tsh:
.repeat 64, i
  .if (i .mod 32) = 0
        .byte   <wsubn
  .elseif (i .mod 32) = 31
        .byte   <wspecs
  .elseif (i .mod 8) = 7
        .byte   <rr7
  .else
        .byte   <(rs7 + (7 - ((i .mod 32) .mod 8)) * 3)
  .endif
.endrepeat
tby:
.repeat 64, i
  .if (i .mod 32) = 0
        .byte   16 + (i / 32) * 128
  .else
        .byte   (((i .mod 32) + 128) / 8) + (i / 32) * 128
  .endif
.endrepeat
