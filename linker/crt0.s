; Start-up code for the SSNAIL MEGA65 program (cc65 -t none, 45GS02 in MEGA65 mode).
;
; BASIC 65 loads the PRG at $2001 and runs "10 BANK0:SYS8209" (spec §M13). From here on the
; program owns the machine: no KERNAL, no BASIC, no interrupts. That is what lets the same PRG
; run in the headless emulator, in xemu and on real boards.

        .p02                            ; "sp" (cc65's C stack pointer) is a register name in 4510 mode
        .export         __STARTUP__ : absolute = 1
        .export         _exit
        .import         zerobss, initlib, donelib
        .import         _main
        .import         __STACKTOP__
        .import         __HIBSS_RUN__, __HIBSS_SIZE__
        .importzp       sp, ptr1

        .segment        "LOADADDR"
        .word   $2001

        .segment        "EXEHDR"
        ; 10 BANK0:SYS8209  ->  code at $2011
        .word   @next                   ; link
        .word   10                      ; line number
        .byte   $FE, $02, "0", ":", $9E, "8209", 0
@next:  .word   0                       ; end of program

        .segment        "STARTUP"
        .p4510
start:  sei
        cld
        lda     #65                     ; force 40 MHz (write $41 to $00, spec §M2.3)
        sta     $00
        lda     #$47                    ; MEGA65 I/O personality
        sta     $D02F
        lda     #$53
        sta     $D02F
        lda     #0                      ; MAP nothing: RAM everywhere the C64 port allows
        tax
        tay
        taz
        map
        eom
        lda     #$35                    ; RAM at $A000-$BFFF and $E000-$FFFF, I/O at $D000
        sta     $01
        lda     $D030                   ; no ROM at $8000/$A000/$C000/$E000, colour RAM 1 KB
        and     #%01000110
        sta     $D030
        lda     #0
        tab                             ; base page 0
        see                             ; 8-bit stack in page 1
        ldx     #$FF
        txs
        ldy     #$01
        tys
        lda     #$40                    ; VFAST + FAST bits as well, for code that checks them
        tsb     $D054
        tsb     $D031

        .p02
        ; C stack
        lda     #<__STACKTOP__
        sta     sp
        lda     #>__STACKTOP__
        sta     sp+1

        jsr     zerobss
        ; clear HIBSS (not covered by zerobss)
        lda     #<__HIBSS_RUN__
        sta     ptr1
        lda     #>__HIBSS_RUN__
        sta     ptr1+1
        ldx     #>__HIBSS_SIZE__
        inx
        ldy     #0
        tya
@clr:   sta     (ptr1),y
        iny
        bne     @clr
        inc     ptr1+1
        dex
        bne     @clr

        ; Vectors in the RAM under the (unmapped) KERNAL: RESTORE (NMI) and stray IRQs return.
        lda     #<ignore
        sta     $FFFA
        sta     $FFFE
        lda     #>ignore
        sta     $FFFB
        sta     $FFFF
        jsr     initlib
        jsr     _main
_exit:  jsr     donelib
@halt:  jmp     @halt                   ; the program never returns to BASIC (it took the machine)

ignore: rti
