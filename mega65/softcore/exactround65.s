; exactround65.s: the first part of exactsum.c's xs_round on the 45GS02 (cc65 builds; the C in
; exactsum.c stays the definition, used on the PC and with -DSC_C_GEMV): the accumulator's bias off,
; the sum's sign and magnitude, its top bytes and sticky bits, for xs_round's C to normalise and
; round. Apart from exactsum65.s so that a build with exactsum.c alone (the softfloat test PRG)
; links it too.

        .p4510
        .import         _xs_tsrc
        .import         _xs_rneg, _xs_rh, _xs_rtop, _xs_rbelow, _xs_rsticky
        .export         _xs_top, _sf_recip65
        .importzp       ptr1, sreg

        .include        "mega65_io.inc"         ; the multiplier and divider

        .include        "fn_tables.inc"         ; XS_BYTES

        .bss
tt:     .res    1                       ; the sum's top byte t
mag:    .res    XS_BYTES                ; its magnitude, bytes lo..t (the accumulator is left as it is)
lo:     .res    1                       ; max(t - 5, 0)
stl:    .res    1                       ; nonzero: a magnitude byte below lo is nonzero

rre:    .res    1                       ; sf_recip65: the result's exponent, sign, fraction
rsg:    .res    1
rfr:    .res    3

        .code

; f32 sf_recip65(f32 a) (softfloat.h; cc65's __fastcall__: a and the result in A/X/sreg):
; single(1/a) by the divider for a normal a with 1 <= e <= 252 (the result normal too), else
; SF_RECIP_NO ($FFFFFFFF, a NaN that no such reciprocal is) and sf_recip divides. With m = a's
; significand (2^23 <= m < 2^24), 1/|a| = 2^(253 − e)·(2^24/m), 2^24/m in (1, 2); for m = 2^23
; it is 2^(254 − e) exactly. Else 2^24/m is never exact (m is no power of two), so it rounds to
; nearest up exactly when its bit 24 below the point is 1, with no tie: with F = the quotient's 32
; fraction bits (DIVOUT's), the fraction is (F + 2^8) >> 9. F's low byte $00 or $FF takes
; sf_div's way (2 in 256): a last bit off by one either way then cannot move that result
; (softfloat.c's sf_div does not rest on the divider's last bit either; mega65-core's
; fast_divide.vhdl finds the quotient by Goldschmidt steps, docs/spec/mega65.md §M9).
_sf_recip65:
        ldy     #0
        sty     MATH_MULTINA            ; A = 2^24, B = m (docs/spec/mega65.md §M9)
        sty     MATH_MULTINA+1
        sty     MATH_MULTINA+2
        sty     MATH_MULTINB+3
        iny
        sty     MATH_MULTINA+3
        sta     MATH_MULTINB
        stx     MATH_MULTINB+1
        lda     sreg
        ora     #$80
        sta     MATH_MULTINB+2
        lda     sreg+1
        and     #$80
        sta     rsg
        lda     sreg                    ; e
        asl     a
        lda     sreg+1
        rol     a
        beq     @no                     ; zero or subnormal
        cmp     #253
        bcs     @no                     ; a result below the normal range; inf, NaN
        eor     #$FF                    ; 253 − e = (255 − e) − 2
        sec
        sbc     #2
        sta     rre
        lda     sreg                    ; m = 2^23: the exact power of two
        and     #$7F
        ora     MATH_MULTINB+1
        ora     MATH_MULTINB
        beq     @two
@busy:  bit     MATH_BUSY               ; DIVBUSY (bit 7)
        bmi     @busy
        lda     MATH_DIVOUT             ; F's low byte: clear of $00 and $FF
        beq     @no
        cmp     #$FF
        beq     @no
        clc                             ; F + 2^8, bytes 1-3 (no carry out: F < 2^32 − 2^21
        lda     MATH_DIVOUT+1           ; for m > 2^23)
        adc     #1
        tax
        lda     MATH_DIVOUT+2
        adc     #0
        tay
        lda     MATH_DIVOUT+3
        adc     #0
        lsr     a                       ; >> 9: bits 16-22, 8-15, 0-7 of the fraction
        sta     rfr+2
        tya
        ror     a
        sta     rfr+1
        txa
        ror     a
        sta     rfr
@pk:    lda     rre
        lsr     a                       ; C = the exponent's low bit
        ora     rsg
        sta     sreg+1
        lda     rfr+2
        bcc     :+
        ora     #$80
:       sta     sreg
        lda     rfr
        ldx     rfr+1
        rts
@two:   inc     rre                     ; 2^(254 − e): fraction 0
        sta     rfr                     ; (A = 0)
        sta     rfr+1
        sta     rfr+2
        bra     @pk
@no:    lda     #$FF
        sta     sreg
        sta     sreg+1
        tax
        rts

; uint8_t xs_top(void): xs_round's first part (exactsum.c, its C for the PC): the sum S = acc - B
; (acc: the 74 bytes at xs_tsrc, xs_acc or a row page of exactsum65.s, exactsum.c's xs_load)
; (xs_clear's bias B: $80 in bytes 0-72, $00 in byte 73, so the bytes above S's top byte t are B's),
; its sign (xs_rneg, 0 or 1), its magnitude in bytes 0..t of mag (acc - B or B - acc there), the
; index h of its top nonzero byte (xs_rh), that byte and the three below it (xs_rtop, bytes 3..0,
; zeros below byte 0), the next byte (xs_rbelow) and the OR of all bytes under it (xs_rsticky).
; Returns 1 (and nothing else) when the sum is 0.
_xs_top:
        lda     _xs_tsrc                ; the accumulator's address (xs_acc or a row page): into
        sta     @a2+1                   ; the scan's load, and ptr1 for the others
        sta     ptr1
        lda     _xs_tsrc+1
        sta     @a2+2
        sta     ptr1+1
        ldy     #XS_BYTES-1             ; t: the top byte that differs from B's; byte 73 (B's 0)
        lda     (ptr1),y                ; with $80 flipped is like the others (B's $80): $80 for
        eor     #$80                    ; nothing, above it S > 0, below it S < 0 (|S| < 2^591)
        ldx     #XS_BYTES-1
        bra     @c
@zero:  lda     #1                      ; an exact zero (only the bias left)
        ldx     #0
        rts
@t:     dex
        bmi     @zero
@a2:    lda     $FFFF,x
@c:     cmp     #$80
        beq     @t
        stx     tt
        lda     #0                      ; (C: above B's byte)
        rol     a
        eor     #1
        sta     _xs_rneg
        ; Only bytes lo = max(t - 5, 0) to t of the magnitude are made: its top nonzero byte h is t
        ; or t - 1 (byte t of the difference is at least 1 before the borrow from below; when
        ; that borrow clears it, byte t - 1 borrowed too and holds $7F or more; t = 0 has no
        ; borrow), and below h - 5 only whether anything is nonzero counts (the sticky) and the
        ; borrow it hands up. Both come from the first byte below lo that is not B's: none, no
        ; borrow and no sticky; S > 0 and that byte below $80, or S < 0 and above it, a borrow;
        ; either way a sticky bit. The magnitude's bytes are acc - B (S > 0) or B - acc, that is
        ; (acc EOR $FF) - $7F, with the borrow: one loop, its EOR and SBC operands patched.
        eor     #$FF                    ; (A = 0 or -1)
        clc
        adc     #1
        sta     @m+1
        clc
        adc     #$80
        sta     @k+1
        stz     stl                     ; (Z = 0: cc65's convention)
        txa
        ldx     #6                      ; t - lo + 1 bytes: 6, or t + 1 when t < 5
        sec
        sbc     #5
        bcs     @lo
        ldx     tt
        inx
        lda     #0
@lo:    sta     lo
        tay
        sec                             ; (no byte below: no borrow)
@b:     dey
        bmi     @mk
        lda     (ptr1),y
        cmp     #$80
        beq     @b
        inc     stl
        lda     #0                      ; C: the byte is above $80; S > 0 borrows when it is below
        rol     a                       ; (SBC's carry is C), S < 0 when it is above (not C)
        eor     _xs_rneg
        lsr     a
@mk:    ldy     lo                      ; (DEX keeps C, a CPY would not)
@ms:    lda     (ptr1),y
@m:     eor     #0                      ; (patched: 0, or $FF when S < 0)
@k:     sbc     #$80                    ; (patched: $80, or $7F when S < 0)
        sta     mag,y
        iny
        dex
        bne     @ms
        cpy     #XS_BYTES
        bne     @scan
        lda     mag+XS_BYTES-1          ; byte 73: B's is 0 (acc - 0, 0 - acc): $80 off again
        eor     #$80                    ; (mod 256)
        sta     mag+XS_BYTES-1
@scan:  ldx     tt                      ; h: the magnitude's top nonzero byte, t or else t - 1
        lda     mag,x                   ; (t - 1 >= lo when byte t is 0: the comment above)
        bne     @found
        dex
        lda     mag,x
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
        lda     stl                     ; the bytes under h - 4: below lo, and h - 5 when it is lo
        dex
        bmi     @sd
        cpx     lo
        bcc     @sd
        ora     mag,x
@sd:    sta     _xs_rsticky
        lda     #0
        tax
        rts
@z2:    stz     _xs_rtop+2              ; (Z = 0)
@z1:    stz     _xs_rtop+1
@z0:    stz     _xs_rtop
@zb:    stz     _xs_rbelow
        stz     _xs_rsticky
        lda     #0
        tax
        rts
