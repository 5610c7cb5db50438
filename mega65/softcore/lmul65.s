; lmul65.s: cc65's 32-bit multiplication (the runtime module lmul.o: the same four entries) on
; the 45GS02's hardware multiplier. TOS × EAX -> EAX, the low 32 bits (signed and unsigned alike),
; TOS popped. Linked before none.lib, so the library's shift-and-add version (~1,850 cycles a call,
; 2.6 % of a 260 K-parameter token in softbench --profile token) is not pulled in. The multiplier:
; MULTINA $D770, MULTINB $D774, the 64-bit product at $D778 (iomap.txt MATH:MULTINA/MULTOUT,
; docs/spec/mega65.md, as quad.inc). Runs with the base page at 0 (cc65's sp and sreg).

        .p02                            ; 6502 code: in 4510 mode ca65 2.19 reads `sta sp` as a register
        .include        "mega65_io.inc"
MULA    = MATH_MULTINA
MULB    = MATH_MULTINB
MULO    = MATH_MULTOUT
        .importzp       sp, sreg
        .export         tosmuleax, tosumuleax, tosmul0ax, tosumul0ax

tosmul0ax:
tosumul0ax:
        ldy     #0                      ; EAX = AX
        sty     sreg
        sty     sreg+1
tosmuleax:
tosumuleax:
        sta     MULB
        stx     MULB+1
        lda     sreg
        sta     MULB+2
        lda     sreg+1
        sta     MULB+3
        ldy     #3
@tos:   lda     (sp),y
        sta     MULA,y
        dey
        bpl     @tos
        lda     MULO+2
        sta     sreg
        lda     MULO+3
        sta     sreg+1
        clc                             ; pop TOS
        lda     sp
        adc     #4
        sta     sp
        bcc     :+
        inc     sp+1
:       lda     MULO
        ldx     MULO+1
        rts
