; Hypervisor file reading: chdir into SUB, a lower-case host name is not found, then DATA.BIN is
; read 512 bytes at a time into $4000.. (DMA from the SD buffer at $FFD6E00) until a zero count.
; Results: $3F00/$3F01 = bytes read, $3F02 = readfile calls that returned data.
.include "mega65.inc"
name = $7E00
cnt = $F0
fd = $F2

start:
        setup
        lda #0
        sta $3F00
        sta $3F01
        sta $3F02
        ldx #<str_sub
        jsr setname
        lbcc fail1
        hyppo $34               ; findfile
        lbcc fail2
        hyppo $0C               ; chdir
        lbcc fail3
        ldx #<str_lower
        jsr setname
        hyppo $34
        lbcs fail4               ; must not be found
        cmp #$88
        lbne fail5
        ldx #<str_data
        jsr setname
        hyppo $34
        lbcc fail6
        hyppo $18               ; openfile
        lbcc fail7
        sta fd
loop:   hyppo $1A               ; readfile -> Y:X bytes
        lbcc fail8
        stx cnt
        sty cnt+1
        txa
        ora cnt+1
        beq eof
        inc $3F02
        lda #$80
        tsb $D689               ; user view shows the SD buffer
        dma_job job_read
        clc                     ; advance destination and total by the count
        lda job_dst
        adc cnt
        sta job_dst
        lda job_dst+1
        adc cnt+1
        sta job_dst+1
        clc
        lda $3F00
        adc cnt
        sta $3F00
        lda $3F01
        adc cnt+1
        sta $3F01
        bra loop
eof:    ldx fd
        hyppo $20               ; closefile
        lbcc fail9
        exit_with 0
fail1:  exit_with 1
fail2:  exit_with 2
fail3:  exit_with 3
fail4:  exit_with 4
fail5:  exit_with 5
fail6:  exit_with 6
fail7:  exit_with 7
fail8:  exit_with 8
fail9:  exit_with 9

; Copy the string at strings+X to the name page and call setname.
setname:
        ldy #0
@c:     lda strings,x
        sta name,y
        beq @d
        inx
        iny
        bra @c
@d:     ldy #>name
        hyppo $2E
        rts

job_read:
        .byte $0A, $80, $FF, $81, $00, $00
        .byte $00
        .word 512, $6E00
        .byte $0D
job_dst:
        .word $4000
        .byte 0
        .word 0

strings:
str_sub = * - strings
        .byte "SUB", 0
str_lower = * - strings
        .byte "lower.bin", 0
str_data = * - strings
        .byte "data.bin", 0
