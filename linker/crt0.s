; Start-up code for the SSNAIL MEGA65 program (cc65 -t none, 45GS02 in MEGA65 mode).
;
; BASIC 65 loads the PRG at $2001 and runs "10 BANK0:SYS8209" (spec §M13). From here on the
; program owns the machine: no KERNAL, no BASIC, no interrupts. That is what lets the same PRG
; run in the headless emulator, in xemu and on real boards. /quit gives the machine back
; (_machine_restore): what start-up changes is saved first and put back before RTS to SYS.
;
; What BASIC needs back (MEGA65 Book): memory.tex "BANK and SYS" (the SYS map after BANK 0:
; $0000-$BFFF bank-0 RAM, $E000-$FFFF KERNAL ROM 3.E000 = MAP A=0 X=0 Y=0 Z=$83), "The Chip RAM
; Memory Map" (0.0002-0.15FF KERNAL variables, 0.F700-0.FEFF BASIC variables, 0.FF00-0.FFFF
; reserved), appendix-kernal-jumptable.tex "Prerequisites" (B = 0, $E000 KERNAL, $0000-$1FFF bank
; 0) and its VECTOR entry (the KERNAL's one interrupt is a once-per-frame raster IRQ, untouched
; here; CIA 1 interrupts stay off).
;
; Saved to chip RAM bank 5 ($5C000-$5FFFF, after the model list) by inline DMA jobs: $0000-$05FF
; (base page, stack, KERNAL variables and the Hyppo pages this program uses), the screen
; $0800-$0FFF, 2 KB of colour RAM, $1000-$15FF (KERNAL variables under LOWRAM, see
; linker/mega65.cfg) and $E000-$FFFF (HIBSS over BASIC's variables, the vectors). Registers: P (I and E flags),
; SP, B, $01, $D030, $D031, $D054, $D689. The VIC-IV registers scr_init changes are saved by
; screen.c, $D7FE and the CIA 1 timer controls by main.c.

SAVE_BANK   = $05                       ; 0.5C000: see the list above

        .p02                            ; "sp" (cc65's C stack pointer) is a register name in 4510 mode
        .export         __STARTUP__ : absolute = 1
        .export         _exit
        .import         zerobss, initlib, donelib
        .import         _main
        .import         __STACKTOP__
        .import         __HIBSS_RUN__, __HIBSS_SIZE__
        .import         __RESIDENT_LOAD__, __RESIDENT_RUN__, __RESIDENT_SIZE__
        .import         __LOWBSS_RUN__, __LOWBSS_SIZE__
        .import         __FONT_LOAD__, __FONT_SIZE__
        .import         __OVBROWSE_LOAD__, OVL_BROWSE_LEN, __OVL_CHIP__
        .importzp       sp, ptr1

        .include        "mega65_io.inc" ; VIC_*, DMA_*, SD_* (generated, mega65/include)
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
start:  php                             ; BASIC's flags (I, E) for /quit
        pla
        sta     saved_p
        sei
        cld
        tsx
        stx     saved_spl
        tsy
        sty     saved_sph
        tba
        sta     saved_b
        lda     $01
        sta     saved_01
        lda     #$47                    ; MEGA65 I/O personality (BASIC 65's own already)
        sta     VIC_KEY
        lda     #$53
        sta     VIC_KEY
        lda     VIC_ROM_BANKS
        sta     saved_d030
        lda     VIC_CONTROL_B
        sta     saved_d031
        lda     VIC_CONTROL_C
        sta     saved_d054
        lda     SD_BUFFER_SELECT
        sta     saved_d689
        ; save low memory before anything here writes to it (enhanced inline DMA jobs, $D707:
        ; options F018B, source MB, destination MB; then command, count, source, bank,
        ; destination, bank, sub-command, modulo)
        sta     DMA_INLINE
        .byte   DMA_OPT_F018B, DMA_OPT_SRC_MB, $00, DMA_OPT_DST_MB, $00, DMA_OPT_END
        .byte   $00
        .word   $0600                   ; $0000-$05FF
        .word   $0000
        .byte   $00
        .word   $C000
        .byte   SAVE_BANK
        .byte   $00
        .word   $0000
        sta     DMA_INLINE
        .byte   DMA_OPT_F018B, DMA_OPT_SRC_MB, $00, DMA_OPT_DST_MB, $00, DMA_OPT_END
        .byte   $00
        .word   $0800                   ; screen $0800-$0FFF
        .word   $0800
        .byte   $00
        .word   $C600
        .byte   SAVE_BANK
        .byte   $00
        .word   $0000
        sta     DMA_INLINE
        .byte   DMA_OPT_F018B, DMA_OPT_SRC_MB, $FF, DMA_OPT_DST_MB, $00, DMA_OPT_END
        .byte   $00
        .word   $0800                   ; colour RAM $FF80000, 2 KB
        .word   $0000
        .byte   $08
        .word   $CE00
        .byte   SAVE_BANK
        .byte   $00
        .word   $0000
        sta     DMA_INLINE
        .byte   DMA_OPT_F018B, DMA_OPT_SRC_MB, $00, DMA_OPT_DST_MB, $00, DMA_OPT_END
        .byte   $00
        .word   $0600                   ; $1000-$15FF
        .word   $1000
        .byte   $00
        .word   $D600
        .byte   SAVE_BANK
        .byte   $00
        .word   $0000
        sta     DMA_INLINE
        .byte   DMA_OPT_F018B, DMA_OPT_SRC_MB, $00, DMA_OPT_DST_MB, $00, DMA_OPT_END
        .byte   $00
        .word   $2000                   ; $E000-$FFFF (HIBSS, BASIC variables, vectors)
        .word   $E000
        .byte   $00
        .word   $E000
        .byte   SAVE_BANK
        .byte   $00
        .word   $0000
        ; RESIDENT to LOWRAM (code that runs while the software core's window hides $2000-$BFFF,
        ; linker/mega65.cfg), then LOWBSS after it cleared
        sta     DMA_INLINE
        .byte   DMA_OPT_F018B, DMA_OPT_SRC_MB, $00, DMA_OPT_DST_MB, $00, DMA_OPT_END
        .byte   $00
        .word   __RESIDENT_SIZE__
        .word   __RESIDENT_LOAD__
        .byte   $00
        .word   __RESIDENT_RUN__
        .byte   $00
        .byte   $00
        .word   $0000
        sta     DMA_INLINE
        .byte   DMA_OPT_F018B, DMA_OPT_SRC_MB, $00, DMA_OPT_DST_MB, $00, DMA_OPT_END
        .byte   $03                     ; fill with the source address's low byte (0)
        .word   __LOWBSS_SIZE__
        .word   $0000
        .byte   $00
        .word   __LOWBSS_RUN__
        .byte   $00
        .byte   $00
        .word   $0000
        ; the font (segment FONT, which BSS overlaps: linker/mega65.cfg) to chip RAM FONT_STAGE,
        ; $4A800 (include/chipram.h), before zerobss clears BSS; screen.c reads it from there
        sta     DMA_INLINE
        .byte   DMA_OPT_F018B, DMA_OPT_SRC_MB, $00, DMA_OPT_DST_MB, $00, DMA_OPT_END
        .byte   $00
        .word   __FONT_SIZE__
        .word   __FONT_LOAD__
        .byte   $00
        .word   $A800
        .byte   $04
        .byte   $00
        .word   $0000
        ; the browser's overlay (OVBROWSE, after FONT in the PRG, also overlapped by BSS and by
        ; the overlay region: linker/mega65.cfg) to its chip RAM copy at __OVL_CHIP__, where
        ; main's first ovl_use takes it from (src/overlay.c)
        sta     DMA_INLINE
        .byte   DMA_OPT_F018B, DMA_OPT_SRC_MB, $00, DMA_OPT_DST_MB, $00, DMA_OPT_END
        .byte   $00
        .word   OVL_BROWSE_LEN
        .word   __OVBROWSE_LOAD__
        .byte   $00
        .word   .loword(__OVL_CHIP__)
        .byte   .bankbyte(__OVL_CHIP__)
        .byte   $00
        .word   $0000
        .assert __RESIDENT_SIZE__ > 0 .and __LOWBSS_SIZE__ > 0 .and __FONT_SIZE__ > 0, lderror, "a DMA count of 0 copies 64 KB"
        lda     #65                     ; force 40 MHz (write $41 to $00, spec §M2.3)
        sta     $00
        lda     #0                      ; MAP nothing: RAM everywhere the C64 port allows
        tax
        tay
        taz
        map
        eom
        lda     #$35                    ; RAM at $A000-$BFFF and $E000-$FFFF, I/O at $D000
        sta     $01
        lda     VIC_ROM_BANKS           ; no ROM at $8000/$A000/$C000/$E000, colour RAM 1 KB
        and     #%01000110
        sta     VIC_ROM_BANKS
        lda     #0
        tab                             ; base page 0
        see                             ; 8-bit stack in page 1
        ldx     #$FF
        txs
        ldy     #$01
        tys
        lda     #$40                    ; VFAST + FAST bits as well, for code that checks them
        tsb     VIC_CONTROL_C
        tsb     VIC_CONTROL_B

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
        ; The handler is RESIDENT, outside the software core's window (an NMI can arrive while
        ; the window is mapped; the vectors at $FFFA-$FFFF are outside it too).
        lda     #<ignore
        sta     $FFFA
        sta     $FFFE
        lda     #>ignore
        sta     $FFFB
        sta     $FFFF
        jsr     initlib
        jsr     _main
_exit:  jsr     donelib
        jmp     _machine_restore

        .segment        "RESIDENT"
ignore: rti

        .segment        "STARTUP"

; void machine_restore(void): gives the machine back to BASIC and returns from its SYS; does not
; return to the caller, which has already put back the VIC-IV and device registers it changed.
        .export         _machine_restore
        .p4510
_machine_restore:
        sei
        sta     DMA_INLINE              ; $1000-$15FF, screen, colour RAM, $E000-$FFFF back
        .byte   DMA_OPT_F018B, DMA_OPT_SRC_MB, $00, DMA_OPT_DST_MB, $00, DMA_OPT_END
        .byte   $00
        .word   $0600
        .word   $D600
        .byte   SAVE_BANK
        .word   $1000
        .byte   $00
        .byte   $00
        .word   $0000
        sta     DMA_INLINE
        .byte   DMA_OPT_F018B, DMA_OPT_SRC_MB, $00, DMA_OPT_DST_MB, $00, DMA_OPT_END
        .byte   $00
        .word   $0800
        .word   $C600
        .byte   SAVE_BANK
        .word   $0800
        .byte   $00
        .byte   $00
        .word   $0000
        sta     DMA_INLINE
        .byte   DMA_OPT_F018B, DMA_OPT_SRC_MB, $00, DMA_OPT_DST_MB, $FF, DMA_OPT_END
        .byte   $00
        .word   $0800
        .word   $CE00
        .byte   SAVE_BANK
        .word   $0000
        .byte   $08
        .byte   $00
        .word   $0000
        sta     DMA_INLINE
        .byte   DMA_OPT_F018B, DMA_OPT_SRC_MB, $00, DMA_OPT_DST_MB, $00, DMA_OPT_END
        .byte   $00
        .word   $2000
        .word   $E000
        .byte   SAVE_BANK
        .word   $E000
        .byte   $00
        .byte   $00
        .word   $0000
        lda     saved_d689
        sta     SD_BUFFER_SELECT
        lda     saved_d054
        sta     VIC_CONTROL_C
        lda     saved_d031
        sta     VIC_CONTROL_B
        lda     saved_d030
        sta     VIC_ROM_BANKS
        lda     #64                     ; force-fast off: the speed is $D031/$D054's again
        sta     $00
        ; base page, stack and $0200-$05FF last: nothing below uses them until the RTS
        sta     DMA_INLINE
        .byte   DMA_OPT_F018B, DMA_OPT_SRC_MB, $00, DMA_OPT_DST_MB, $00, DMA_OPT_END
        .byte   $00
        .word   $05FE
        .word   $C002
        .byte   SAVE_BANK
        .word   $0002
        .byte   $00
        .byte   $00
        .word   $0000
        lda     saved_01
        sta     $01
        lda     #0                      ; the SYS map: KERNAL 3.E000 at $E000, the rest bank 0
        tax
        tay
        ldz     #$83
        map
        eom
        lda     saved_b
        tab
        ldx     saved_spl
        txs
        ldy     saved_sph
        tys
        lda     saved_p
        and     #$20                    ; E: 8-bit stack as BASIC had it, or not
        beq     @e16
        see
        bra     @flags
@e16:   cle
@flags: ldz     #0
        lda     saved_p
        and     #$04
        bne     @ret                    ; BASIC ran with I set: leave it so
        cli
@ret:   lda     #0
        rts

        ; In STARTUP, next to the code that reads them, not in DATA: the restore above still
        ; reads them after $D030 is put back, and BASIC's $D030 (power-on $64) has bit 5 set, ROM
        ; at $C000 (MEGA65 Book memory.tex, "$D030 VIC-III Banking Register"; spec §M2.3), where
        ; DATA lies once the program reaches past $C000 (MAIN ends at $CDFF); STARTUP opens MAIN.
saved_p:    .byte   0
saved_spl:  .byte   0
saved_sph:  .byte   0
saved_b:    .byte   0
saved_01:   .byte   0
saved_d030: .byte   0
saved_d031: .byte   0
saved_d054: .byte   0
saved_d689: .byte   0
