; CPU-bound benchmark loop of typical 6502/45GS02 code (for `ssnail mega65 --prg loop.prg
; --cycles N`): copy a page with (zp),y, a checksum with ADC/EOR, 16-bit INW, JSR/RTS, a
; base-page RMW and branches. Runs forever; each pass adds its checksum at $3F00.
.include "mega65.inc"
src = $F0
dst = $F2
sum = $F4
passes = $F6

start:
        setup
        ldx #0
@fill:  txa
        sta $4000,x
        inx
        bne @fill
        lda #0
        sta passes
        sta passes+1
pass:   lda #<$4000
        sta src
        lda #>$4000
        sta src+1
        lda #<$5000
        sta dst
        lda #>$5000
        sta dst+1
        lda #0
        sta sum
        ldy #0
@copy:  lda (src),y
        sta (dst),y
        jsr mix
        iny
        bne @copy
        inw passes
        lda $3F00
        clc
        adc sum
        sta $3F00
        bra pass

mix:    clc
        adc sum
        eor #$5A
        sta sum
        inc $3F01
        rts
