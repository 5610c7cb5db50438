; Keyboard queue: read keys from $D610 until RETURN; store each code at $4000+n, the CIA 1 TOD
; seconds/tenths when it was read at $4100+n/$4200+n; echo printable keys to the screen and the
; serial monitor. $3F00 = number of keys.
.include "mega65.inc"
        screencodes

start:
        setup
        lda #0                  ; TOD = 00:00:00.0 (writing hours stops it, tenths restarts it)
        sta $DC0B
        sta $DC0A
        sta $DC09
        sta $DC08
        ldx #0
loop:   lda $D610
        beq loop
        sta $4000,x
        lda $DC09
        sta $4100,x
        lda $DC08
        sta $4200,x
        sta $D610               ; pop the key
        lda $4000,x
        cmp #$20
        bcc next
        cmp #$7F
        bcs next
        sta $D643
        clv
        cmp #$60
        bcc @scr
        sbc #$60
@scr:   sta $0800,x
next:   lda $4000,x
        inx
        cmp #$0D
        bne loop
        stx $3F00
        exit_with 0
