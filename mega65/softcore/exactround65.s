; exactround65.s: the first part of exactsum.c's xs_round on the 45GS02 (cc65 builds; the C in
; exactsum.c stays the definition, used on the PC and with -DSC_C_GEMV): the accumulator's bias off,
; the sum's sign and magnitude, its top bytes and sticky bits, for xs_round's C to normalise and
; round. Apart from exactsum65.s so that a build with exactsum.c alone (the softfloat test PRG)
; links it too.

        .p4510
        .import         _xs_tsrc
        .import         _xs_rneg, _xs_rh, _xs_rtop, _xs_rbelow, _xs_rsticky
        .export         _xs_top

XS_BYTES = 74                           ; exactsum.h

        .bss
tt:     .res    1                       ; the sum's top byte t
mag:    .res    XS_BYTES                ; its magnitude, bytes 0..t (the accumulator is left as it is)

        .code

; uint8_t xs_top(void): xs_round's first part (exactsum.c, its C for the PC): the sum S = acc - B
; (acc: the 74 bytes at xs_tsrc, xs_acc or a row page of exactsum65.s, exactsum.c's xs_load)
; (xs_clear's bias B: $80 in bytes 0-72, $00 in byte 73, so the bytes above S's top byte t are B's),
; its sign (xs_rneg, 0 or 1), its magnitude in bytes 0..t of mag (acc - B or B - acc there), the
; index h of its top nonzero byte (xs_rh), that byte and the three below it (xs_rtop, bytes 3..0,
; zeros below byte 0), the next byte (xs_rbelow) and the OR of all bytes under it (xs_rsticky).
; Returns 1 (and nothing else) when the sum is 0.
_xs_top:
        lda     _xs_tsrc                ; the accumulator's address (xs_acc or a row page) into
        sta     @a1+1                   ; the four loads
        sta     @a2+1
        sta     @a3+1
        sta     @a4+1
        lda     _xs_tsrc+1
        sta     @a1+2
        sta     @a2+2
        sta     @a3+2
        sta     @a4+2
        ldx     #XS_BYTES-1             ; t: the top byte that differs from B's
@a1:    lda     $FFFF,x
        beq     @t
        cmp     #$80                    ; byte 73: below $80 S > 0, else S < 0 (|S| < 2^591)
        bcc     @pos
        bcs     @neg
@t:     dex
        bmi     @zero
@a2:    lda     $FFFF,x
        cmp     #$80
        beq     @t
        bcc     @neg                    ; below B's byte: S < 0
@pos:   lda     #0
        sta     _xs_rneg
        stx     tt
        inx
        txa
        tay                             ; t + 1 bytes (DEY keeps C, a CPX would not)
        ldx     #0
        sec
@ps:
@a3:    lda     $FFFF,x                 ; acc - B
        sbc     #$80
        sta     mag,x
        inx
        dey
        bne     @ps
        cpx     #XS_BYTES
        bne     @scan
        lda     mag+XS_BYTES-1          ; byte 73: B's is 0, so $80 back on (mod 256)
        eor     #$80
        sta     mag+XS_BYTES-1
        bra     @scan
@zero:  lda     #1                      ; an exact zero
        ldx     #0
        rts
@neg:   lda     #1
        sta     _xs_rneg
        stx     tt
        inx
        txa
        tay
        ldx     #0
        sec
@ns:    lda     #$80                    ; B - acc
@a4:    sbc     $FFFF,x
        sta     mag,x
        inx
        dey
        bne     @ns
        cpx     #XS_BYTES
        bne     @scan
        lda     mag+XS_BYTES-1          ; byte 73: 0 - acc, not $80 - acc: $80 off (mod 256)
        eor     #$80
        sta     mag+XS_BYTES-1
@scan:  ldx     tt                      ; h: the magnitude's top nonzero byte, at most t
@h:     lda     mag,x
        bne     @found
        dex
        bpl     @h
        bra     @zero                   ; (cannot happen: S is not 0)
@found: stx     _xs_rh
        sta     _xs_rtop+3
        dex
        bmi     @z2
        lda     mag,x
        sta     _xs_rtop+2
        dex
        bmi     @z1
        lda     mag,x
        sta     _xs_rtop+1
        dex
        bmi     @z0
        lda     mag,x
        sta     _xs_rtop
        dex
        bmi     @zb
        lda     mag,x
        sta     _xs_rbelow
        lda     #0
@st:    dex
        bmi     @sd
        ora     mag,x
        bra     @st
@sd:    sta     _xs_rsticky
        lda     #0
        tax
        rts
@z2:    lda     #0
        sta     _xs_rtop+2
@z1:    lda     #0
        sta     _xs_rtop+1
@z0:    lda     #0
        sta     _xs_rtop
@zb:    lda     #0
        sta     _xs_rbelow
        sta     _xs_rsticky
        tax
        rts
