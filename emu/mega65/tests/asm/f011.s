; F011: read three sectors of the disk the program was started from through the $D087 data port
; (track 0 sector 1 side 0 -> $4000, track 5 sector 3 side 1 -> $4200, track 79 sector 10 side 1
; -> $4400), then ask for sector 11 (record not found). $3F00 = status A after the bad read.
.include "mega65.inc"
dst = $F0

start:
        setup
        lda #$20
        sta $D080               ; motor on, drive 0
        lda #$40
        sta dst+1
        lda #0
        sta dst
        ldx #0
        ldy #1
        lda #0
        jsr read_sector
        bcs fail
        ldx #5
        ldy #3
        lda #1
        jsr read_sector
        bcs fail
        ldx #79
        ldy #10
        lda #1
        jsr read_sector
        bcs fail
        ldx #0
        ldy #11
        lda #0
        jsr read_sector
        bcc fail
        lda $D082
        sta $3F00
        exit_with 0
fail:   exit_with 1

; X = track, Y = sector, A = side; 512 bytes to (dst), dst += 512. C set = record not found.
read_sector:
        sta $D086
        stx $D084
        sty $D085
        lda #$40
        sta $D081
@busy:  lda $D082
        bmi @busy
        and #$10
        bne @rnf
        ldx #2
        ldy #0
@byte:  lda $D087
        sta (dst),y
        iny
        bne @byte
        inc dst+1
        dex
        bne @byte
        clc
        rts
@rnf:   sec
        rts
