; exactround65.s: the first part of exactsum.c's xs_round on the 45GS02 (cc65 builds; the C in
; exactsum.c stays the definition, used on the PC and with -DSC_C_GEMV): the accumulator's bias off,
; the sum's sign and magnitude, its top bytes and sticky bits, for xs_round's C to normalise and
; round. Apart from exactsum65.s so that a build with exactsum.c alone (the softfloat test PRG)
; links it too.

        .p4510
        .import         _xs_tsrc
        .import         _xs_rneg, _xs_rh, _xs_rtop, _xs_rbelow, _xs_rsticky
        .export         _xs_top
        .importzp       ptr1

        .include        "fn_tables.inc"         ; XS_BYTES

        .bss
tt:     .res    1                       ; the sum's top byte t
mag:    .res    XS_BYTES                ; its magnitude, bytes lo..t (the accumulator is left as it is)
lo:     .res    1                       ; max(t - 5, 0)
stl:    .res    1                       ; nonzero: a magnitude byte below lo is nonzero

        .code

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
