; Screen: 80x25 text at $0800 (spaces by DMA FILL, green colour RAM at $FF80000), two lines of text;
; after a key, switch to 80x50 with screen RAM at $12000 and exit with status 3.
.include "mega65.inc"
        screencodes

start:
        setup
        dma_job job_clear
        ldx #0
@t:     lda text_hello,x
        beq @e
        sta $0800,x
        inx
        bra @t
@e:     ldx #0
@u:     lda text_end,x
        beq @f
        sta $0800 + 24 * 80 + 70,x
        inx
        bra @u
@f:     lda $D610               ; wait for a key
        beq @f
        lda $D610
        cmp #'5'
        bne done
        ; 80x50 at $12000
        dma_job job_clear50
        lda #$00
        sta $D060
        lda #$20
        sta $D061
        lda #$01
        sta $D062
        lda #50
        sta $D07B
        dma_job job_text50
done:   exit_with 3

job_clear:
        .byte $0A, $00
        .byte $07               ; FILL + CHAIN
        .word 2000, $0020
        .byte 0
        .word $0800
        .byte 0
        .word 0
        .byte $81, $FF, $00     ; colour RAM: MB $FF, bank 8
        .byte $03
        .word 2000, $0005
        .byte 0
        .word $0000
        .byte $08
        .word 0
job_clear50:
        .byte $0A, $00
        .byte $03
        .word 4000, $0020
        .byte 0
        .word $2000
        .byte 1
        .word 0
job_text50:
        .byte $0A, $00
        .byte $04               ; COPY + CHAIN
        .word 7, text50
        .byte 0
        .word $2000 + 49 * 80
        .byte 1
        .word 0
        .byte $00
        .byte $00
        .word 3, text_top
        .byte 0
        .word $2000
        .byte 1
        .word 0
text_hello:
        .byte "Hello, MEGA65! 80x25 at $0800", 0
text_end:
        .byte "END", 0
text50:
        .byte "Row 49!"
text_top:
        .byte "TOP"
