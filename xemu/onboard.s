; onboard.s: starts the unchanged SSNAIL MEGA65 program (build/mega65/ssnail.prg) in stock xemu
; without the closed MEGA65 ROM, through xemu's on-boarding slot (docs/xemu.md).
;
; xemu -extonboard FILE puts this PRG at $0801 and starts it at $080D in hypervisor mode (only
; about 30 KB of it are copied, which is why the program is loaded from the SD folder instead of
; being carried here). In hypervisor mode the $D640 traps do not work, so this code first leaves
; hypervisor mode: it writes the user-mode CPU state the hypervisor restores on exit (registers
; $D640-$D652, mega65-core iomap.txt "HCPU" block) and then writes $D67F. The CPU continues at
; `in_user` with nothing MAPped, $01 = $35 and the MEGA65 I/O personality. From there the Hyppo
; calls setname ($2E) and loadfile ($36) put SSNAIL.PRG from the hypervisor's current folder at
; $1FFF, so its two load-address bytes land on $1FFF-$2000 and the program itself at $2001, where
; BASIC 65 would have loaded it; `JMP $2011` is what BASIC 65's `BANK0:SYS8209` does. A failed
; load prints one line on the hypervisor serial channel and ends xemu (-testing) with status 1.
;
; Built by `make xemu-onboard` (xemu/build.mk): ca65 + ld65 with xemu/onboard.cfg.

        .p4510

NAMEBUF = $0400                         ; setname wants the name in a page below $7F

        .segment "LOADADDR"
        .word   $0801

        .segment "STUB"
        ; 10 SYS2061 (xemu starts $080D itself; the line is there for a C64-style listing)
        .word   stub_end
        .word   10
        .byte   $9E, "2061", 0
stub_end:
        .word   0

        .segment "CODE"
        sei
        cld
        lda     $D67F                   ; reads 'H' ($48) while the CPU is in hypervisor mode
        cmp     #'H'
        bne     in_user
        ldx     #0
@state: lda     user_state,x            ; user-mode CPU state, restored by the $D67F write
        sta     $D640,x
        inx
        cpx     #user_state_end - user_state
        bne     @state
        sta     $D67F
        clv                             ; the trap may skip one byte after the write
@wait:  bra     @wait

in_user:
        ldx     #$FF
@copy:  inx
        lda     prg_name,x
        sta     NAMEBUF,x
        bne     @copy
        ldx     #<NAMEBUF
        ldy     #>NAMEBUF
        lda     #$2E                    ; Hyppo setname
        sta     $D640
        clv
        bcc     failed
        ldx     #$FF                    ; load address $001FFF (X low, Y high, Z bank)
        ldy     #$1F
        ldz     #$00
        lda     #$36                    ; Hyppo loadfile
        sta     $D640
        clv
        bcc     failed
        ldz     #0                      ; as after BASIC 65's SYS: Z = 0 for code that uses (zp),z
        jmp     $2011

failed: ldx     #0
@put:   lda     fail_msg,x
        beq     @quit
        sta     $D643                   ; hypervisor serial trap: one character
        clv
        inx
        bne     @put
@quit:  lda     #1                      ; exit status for xemu -testing ...
        sta     $D6CF
        lda     #$42                    ; ... then $42 ends the emulation
        sta     $D6CF
@halt:  bra     @halt

        .segment "RODATA"
prg_name:
        .byte   "SSNAIL.PRG", 0
fail_msg:
        .byte   "ONBOARD: cannot load SSNAIL.PRG from the hypervisor folder", 10, 0

; $D640-$D652 in order: A, X, Y, Z, B, SP low, SP high, P, PC low, PC high, MAP low offset +
; mask, MAP low offset, MAP high offset + mask, MAP high offset, MAP low MB, MAP high MB,
; CPU port DDR ($00), CPU port ($01), I/O personality (3 = MEGA65).
user_state:
        .byte   0, 0, 0, 0, 0
        .byte   $FF, $01                ; stack at $01FF
        .byte   $24                     ; E (8-bit stack) and I (no interrupts)
        .word   in_user
        .byte   0, 0, 0, 0, 0, 0        ; no MAP
        .byte   $2F, $35                ; RAM at $A000/$E000, I/O at $D000
        .byte   3
user_state_end:
