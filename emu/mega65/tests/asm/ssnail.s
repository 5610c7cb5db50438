; SSNAIL host protocol on the MEGA65: load MODEL.BIN from the SD card through the load port
; ($FFD7518, DMA with the destination held, pointer switched to the payload address at file offset
; 256), write the prompt from PROMPT.BIN and the runtime block through the port, GO, poll
; `generated` with flat reads of SSNAIL memory, stamp each new token with a 32-bit CIA 1 µs clock.
; Results: $3F00 prompt length, $3F01 generated, $3F02 stop reason, $3F03 SSNAIL error,
; $4800 + 4k: CIA clock (timer B:A, counting down) when token k appeared; $5000: 256 bytes of tokens.
.include "mega65.inc"
NGEN   = 8
name   = $7E00
io     = $E0                    ; 32-bit pointer $0FFD7500 (SSNAIL registers)
mp     = $E4                    ; 32-bit pointer into SSNAIL memory
val    = $E8                    ; quad scratch
cnt    = $F0
ntok   = $F2
seen   = $F3
fd     = $F4
tmp    = $F5

.macro ioput reg                ; SSNAIL register <- A
        ldz #reg
        eom
        sta (io),z
        ldz #0
.endmacro
.macro ioget reg                ; A <- SSNAIL register
        ldz #reg
        eom
        lda (io),z
        ldz #0
.endmacro

start:
        setup
        lda #$00
        sta io
        lda #$75
        sta io+1
        lda #$FD
        sta io+2
        lda #$0F
        sta io+3
        ; CIA 1: timer A counts µs from $FFFF continuously, timer B counts its underflows.
        lda #$FF
        sta $DC04
        sta $DC05
        sta $DC06
        sta $DC07
        lda #$51
        sta $DC0F
        lda #$11
        sta $DC0E
        ioget $00
        cmp #$53                ; 'S': SSNAIL present
        lbne fail1

        ldx #<str_model
        jsr setname
        lbcc fail2
        hyppo $34
        lbcc fail3
        hyppo $18
        lbcc fail4
        sta fd
        lda #$40                ; pointer $8000000, clear ERROR
        jsr ptr_base
        hyppo $1A               ; first sector: header, then the payload from file offset 256
        lbcc fail5
        stx cnt
        sty cnt+1
        lda #$80
        tsb $D689
        lda #$00
        ldx #$6E
        ldy #$00
        ldz #$01
        jsr send                ; 256 bytes from $FFD6E00
        lda #$74                ; host segment length must be 0 (current images)
        jsr peek32
        lda val
        ora val+1
        ora val+2
        ora val+3
        lbne fail6
        lda #$64                ; payload address
        jsr peek32
        lda val+3
        ora val+2
        ora val+1
        ora val
        bne @have
        lda #$01                ; 0 means $8000100
        sta val+1
        lda #$08
        sta val+3
@have:  lda #0
        jsr set_ptr
        sec
        lda cnt+1
        sbc #1
        sta cnt+1
        ora cnt
        beq next
        lda #$00
        ldx #$6F
        ldy cnt
        ldz cnt+1
        jsr send                ; rest of the first sector
next:   hyppo $1A
        lbcc fail5
        stx cnt
        sty cnt+1
        txa
        ora cnt+1
        beq loaded
        lda #$00
        ldx #$6E
        ldy cnt
        ldz cnt+1
        jsr send
        bra next
loaded: ldx fd
        hyppo $20
        lda #0
        jsr ptr_base            ; commit: flush the last bytes
        ioget $17
        and #$40                ; ERROR
        lbne fail7

        ldx #<str_prompt
        jsr setname
        lbcc fail2
        hyppo $34
        lbcc fail8
        hyppo $18
        lbcc fail8
        sta fd
        lda #$14                ; H_TOKENS
        jsr peek32
        lda #0
        jsr set_ptr
        hyppo $1A
        lbcc fail8
        stx cnt
        txa
        lsr
        lsr
        sta ntok
        sta rt_prompt_len
        lda #$80
        tsb $D689
        lda #$00
        ldx #$6E
        ldy cnt
        ldz #0
        jsr send
        ldx fd
        hyppo $20
        lda #$40                ; runtime block at $8000040
        sta val
        lda #0
        sta val+1
        sta val+2
        lda #$08
        sta val+3
        lda #0
        jsr set_ptr
        ldx #0
@rt:    lda rt_block,x
        ioput $18
        inx
        cpx #20
        bne @rt
        lda #0
        jsr ptr_base

        lda #$08                ; job pointer = header $08, then GO
        jsr peek32
        ldx #0
@job:   lda val,x
        phx
        ldz #$08
        txa
        clc
        adc #$08
        taz
        lda val,x
        eom
        sta (io),z
        ldz #0
        plx
        inx
        cpx #4
        bne @job
        lda #1
        ioput $03
        lda #0
        sta seen
poll:   lda #$4C                ; generated
        jsr peek32
        lda val
        cmp seen
        beq @busy
        sta seen
        asl
        asl
        tay
        lda $DC04               ; timer A lo, hi, timer B lo, hi
        sta $4800-4,y
        lda $DC05
        sta $4800-3,y
        lda $DC06
        sta $4800-2,y
        lda $DC07
        sta $4800-1,y
@busy:  ioget $04
        and #1
        bne poll
        lda #$4C                ; tokens published by the last SYNC
        jsr peek32
        lda val
        sta $3F01
        cmp seen
        beq @same
        sta seen
@same:  lda #$54
        jsr peek32
        lda val
        sta $3F02
        ioget $05
        sta $3F03
        lda ntok
        sta $3F00
        dma_job job_tokens
        exit_with 0

fail1:  exit_with 1
fail2:  exit_with 2
fail3:  exit_with 3
fail4:  exit_with 4
fail5:  exit_with 5
fail6:  exit_with 6
fail7:  exit_with 7
fail8:  exit_with 8

; val <- 32-bit little-endian word at $8000000 + A (LDQ [mp],Z with Z = 0, then STQ).
peek32:
        sta mp
        lda #0
        sta mp+1
        sta mp+2
        lda #$08
        sta mp+3
        ldz #0
        q
        eom
        lda (mp),z
        q
        sta val
        ldz #0
        rts

; Commit the load pointer $8000000 (A = extra commit bits, e.g. $40 clears ERROR).
ptr_base:
        pha
        lda #0
        sta val
        sta val+1
        sta val+2
        lda #$08
        sta val+3
        pla
; Commit the load pointer val (A = extra commit bits).
set_ptr:
        pha
        lda val
        ioput $14
        lda val+1
        ioput $15
        lda val+2
        ioput $16
        pla
        sta tmp
        lda val+3
        and #$0F
        ora tmp
        ioput $17
        rts

; DMA Z:Y bytes from $FFD<X><A> (the sector buffer) to the data register, destination held.
send:   sta job_src
        stx job_src+1
        sty job_cnt
        stz job_cnt+1
        ldz #0
        dma_job job_port
        rts

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

job_port:
        .byte $0A, $80, $FF, $81, $FF, $00
        .byte $00
job_cnt:
        .word 0
job_src:
        .word 0
        .byte $0D
        .word $7518
        .byte $1D               ; bank $D + HOLD
        .word 0
job_tokens:
        .byte $0A, $80, $80, $00
        .byte $00
        .word 256, $1000
        .byte $00
        .word $5000
        .byte $00
        .word 0

rt_block:
        .byte 0, 0, 0, 0        ; pos
rt_prompt_len:
        .byte 0, 0, 0, 0        ; prompt_len
        .byte NGEN, 0, 0, 0     ; n_generate
        .byte 0, 0, 0, 0        ; generated
        .byte 0, 0, 0, 0        ; stop_request

strings:
str_model = * - strings
        .byte "MODEL.BIN", 0
str_prompt = * - strings
        .byte "PROMPT.BIN", 0
