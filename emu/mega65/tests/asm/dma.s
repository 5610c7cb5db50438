; DMA: F018A and F018B lists, chaining, inline and plain jobs, and copies with a held destination
; into the SSNAIL load-port data register $FFD7518.
.include "mega65.inc"
ptr = $F0                       ; 32-bit flat pointer

start:
        setup
        ; 512-byte pattern at $6000: byte i = (3 + 7 i) mod 256
        lda #3
        ldx #0
@p0:    sta $6000,x
        clc
        adc #7
        inx
        bne @p0
@p1:    sta $6100,x
        clc
        adc #7
        inx
        bne @p1

        dma_job job_copy_a      ; F018A copy $6000 -> $4000, 512 bytes
        lda #0
        sta $D702
        lda #>job_chain_b
        sta $D701
        lda #<job_chain_b
        sta $D706               ; list through the CPU map: F018B FILL chained with a COPY

        sta $D707               ; inline job: FILL $5200..$520F with $55
        .byte $0A, $00
        .byte $03
        .word 16, $0055
        .byte 0
        .word $5200
        .byte 0
        .word 0

        lda #0                  ; plain job, default F018A format
        sta $D703
        sta $D702
        lda #>job_plain
        sta $D701
        lda #<job_plain
        sta $D700

        ; SSNAIL load port: pointer $8001000, commit and clear ERROR
        lda #$14
        sta ptr
        lda #$75
        sta ptr+1
        lda #$FD
        sta ptr+2
        lda #$0F
        sta ptr+3
        ldz #0
        lda #$00
        eom
        sta (ptr),z             ; $FFD7514
        inz
        lda #$10
        eom
        sta (ptr),z             ; $FFD7515
        inz
        lda #$00
        eom
        sta (ptr),z             ; $FFD7516
        inz
        lda #$48                ; bits 24-27 = 8, bit 6 clears ERROR
        eom
        sta (ptr),z             ; $FFD7517: commit
        ldz #0

        dma_job job_held_a      ; three ways to hold the destination
        dma_job job_held_b
        dma_job job_held_skip

        ; commit pointer $8000000: flushes the pending bytes
        lda #0
        ldz #0
        eom
        sta (ptr),z
        inz
        eom
        sta (ptr),z
        inz
        eom
        sta (ptr),z
        inz
        lda #$48
        eom
        sta (ptr),z
        ldz #0
        exit_with 0

job_copy_a:
        .byte $0A, $00
        .byte $00
        .word 512, $6000
        .byte 0
        .word $4000
        .byte 0
        .word 0
job_chain_b:
        .byte $0B, $00
        .byte $07               ; FILL + CHAIN
        .word 256, $00AA
        .byte 0
        .word $5000
        .byte 0, 0
        .word 0
        .byte $00               ; options of the chained entry (format persists)
        .byte $00               ; COPY
        .word 16, $6000
        .byte 0
        .word $5100
        .byte 0, 0
        .word 0
job_plain:
        .byte $00
        .word 8, $6000
        .byte 0
        .word $5300
        .byte 0
        .word 0
job_held_a:                     ; F018A, destination bank byte bit 4 = HOLD
        .byte $0A, $81, $FF, $00
        .byte $00
        .word 512, $6000
        .byte 0
        .word $7518
        .byte $1D
        .word 0
job_held_b:                     ; F018B, sub-command bit 3 = destination HOLD
        .byte $0B, $81, $FF, $00
        .byte $00
        .word 512, $6000
        .byte 0
        .word $7518
        .byte $0D, $08
        .word 0
job_held_skip:                  ; destination skip rate 0.00
        .byte $0A, $81, $FF, $84, $00, $85, $00, $00
        .byte $00
        .word 512, $6000
        .byte 0
        .word $7518
        .byte $0D
        .word 0
