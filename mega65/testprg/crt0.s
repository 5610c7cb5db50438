; crt0.s: start-up of the softfloat_test PRG (cc65 -t none). "10 SYS8205" starts it; it keeps
; the machine as BASIC's RUN leaves it (40.5 MHz, MEGA65 I/O at $D000) but for the ROM banks in
; $D030 and $01 (all RAM but I/O) and interrupts (off), sets the C
; stack, clears BSS, calls main and writes main's result, then $42, to the exit port $D6CF.
        .include        "mega65_io.inc"
        .export         __STARTUP__ : absolute = 1
        .import         zerobss, _main
        .import         __STACKTOP__
        .importzp       sp

        .segment        "LOADADDR"
        .word   $2001

        .segment        "EXEHDR"
        .word   @next                   ; link
        .word   10                      ; line number
        .byte   $9E, "8205", 0          ; SYS 8205
@next:  .word   0

        .segment        "STARTUP"
        sei
        cld
        lda     VIC_ROM_BANKS           ; no ROM at $8000/$A000/$C000/$E000 (BASIC leaves the
        and     #%01000110              ; C65 ROM at $C000, over the records), as linker/crt0.s
        sta     VIC_ROM_BANKS
        .p4510
        lda     #0                      ; MAP nothing (BASIC's KERNAL mapping off)
        tax
        tay
        taz
        map
        eom
        .p02
        lda     #$35                    ; RAM at $A000-$BFFF and $E000-$FFFF, I/O at $D000 (the
        sta     $01                     ; softcore_test PRG's data from $E000), as linker/crt0.s
        lda     #<__STACKTOP__
        sta     sp
        lda     #>__STACKTOP__
        sta     sp+1
        jsr     zerobss
        jsr     _main
        sta     TESTING_EXIT            ; exit value (low byte of main's int)
        lda     #TESTING_EXIT_NOW
        sta     TESTING_EXIT
@hang:  jmp     @hang
