; 45GS02-specific helpers: flat 28-bit memory access ([zp],Z through the EA prefix), DMA job
; trigger, hypervisor traps, serial monitor output. Everything else is C.

        .p4510
        .importzp       ptr1
        .import         popax, popeax
        .import         _lp_commit
        .importzp       sreg
        .export         _far_peek, _far_peek16, _far_peek32, _far_poke, _far_cmp
        .export         _dma_exec, _hyppo_call, _serial_putc, _sd_sectors_dma
        .export         _hy_x, _hy_y, _hy_z, _hy_a

        .include        "mega65_io.inc"
FP      = $F0                           ; 32-bit flat pointer (base page, fixed)

; ldq/lda [FP],Z  = EA (the NOP/EOM prefix) + the (zp),Z opcode
.macro  flat_lda
        eom
        lda     (FP),z
.endmacro
.macro  flat_sta
        eom
        sta     (FP),z
.endmacro

; A/X/sreg (a cc65 long) -> FP
.macro  set_fp
        sta     FP
        stx     FP+1
        ldy     sreg
        sty     FP+2
        ldy     sreg+1
        sty     FP+3
.endmacro

        .bss
_hy_x:  .res    1
_hy_y:  .res    1
_hy_z:  .res    1
_hy_a:  .res    1
keyn:   .res    1
count:  .res    2
total:  .res    2
nsec:   .res    1
wait:   .res    3

        .code

; uint8_t __fastcall__ far_peek(uint32_t addr)
_far_peek:
        set_fp
        ldz     #0
        flat_lda
        ldx     #0
        rts

; uint16_t __fastcall__ far_peek16(uint32_t addr)
_far_peek16:
        set_fp
        ldz     #1
        flat_lda
        tax
        dez
        flat_lda
        rts

; uint32_t __fastcall__ far_peek32(uint32_t addr)
_far_peek32:
        set_fp
        ldz     #3
        flat_lda
        sta     sreg+1
        dez
        flat_lda
        sta     sreg
        dez
        flat_lda
        tax
        dez
        flat_lda
        rts

; void __fastcall__ far_poke(uint32_t addr, uint8_t value)
_far_poke:
        pha
        jsr     popeax
        set_fp
        pla
        ldz     #0
        flat_sta
        rts

; int8_t __fastcall__ far_cmp(uint32_t addr, const uint8_t *key, uint8_t n)
; memcmp of n bytes at the flat address against key: -1, 0 or 1.
_far_cmp:
        sta     keyn
        jsr     popax
        sta     ptr1
        stx     ptr1+1
        jsr     popeax
        set_fp
        ldz     #0
        ldy     #0
@loop:  cpy     keyn
        beq     @equal
        flat_lda
        cmp     (ptr1),y
        bne     @diff
        iny
        inz
        bra     @loop
@diff:  ldz     #0
        ldx     #$FF
        lda     #$FF
        bcc     @done                   ; far byte < key byte
        ldx     #0
        lda     #1
@done:  rts
@equal: ldz     #0
        lda     #0
        tax
        rts

; void __fastcall__ dma_exec(const void *job): run an enhanced DMA job from bank 0
_dma_exec:
        ldy     #0
        sty     DMA_ADDRBANK            ; list bank 0 (also clears the list MB)
        sty     DMA_ADDRMB
        stx     DMA_ADDRMSB
        sta     DMA_ETRIGGER            ; start; the CPU waits until the job is done
        rts

; uint8_t __fastcall__ hyppo_call(uint8_t function): X/Y/Z in and out through hy_x/hy_y/hy_z,
; A out in hy_a; returns 1 when the call succeeded (carry set).
_hyppo_call:
        ldx     _hy_x
        ldy     _hy_y
        ldz     _hy_z
        sta     HYPPO_TRAP_DOS
        clv
        stx     _hy_x
        sty     _hy_y
        stz     _hy_z
        sta     _hy_a
        ldz     #0                      ; compiled code assumes Z = 0
        lda     #0
        rol     a
        ldx     #0
        rts

; uint16_t __fastcall__ sd_sectors_dma(dma_job_t *job, uint8_t n): the SD loader's inner loop
; (it runs ~50,000 times per image, so it is one call per n sectors). For each sector: when *job
; holds its destination (dma_job_to_register: the load port's data register), wait for the load
; port's READY (the register at lp_commit, bit 7; about 4 M polls at most); readfile (trap $1A,
; as hy_read) into the SD buffer, show that buffer ($D689 bit 7), then run *job with the count
; readfile gave; a job into memory (dma_job_to_memory: the software core's attic RAM) then has
; its destination moved on by the count. Stops after n sectors, at a short sector (the last) or
; at end of file / a read error. Returns the bytes sent, or $FFFF if the port never became READY.
JOB_DST_MB      = 5                     ; dma_job_t offsets (dma.h)
JOB_COUNT       = 8
JOB_DST         = 13
JOB_DST_BANK    = 15
JOB_SUB         = 16
SUB_DST_HOLD    = DMA_SUB_DST_HOLD
_sd_sectors_dma:
        sta     nsec
        jsr     popax
        sta     ptr1
        stx     ptr1+1
        lda     #0
        sta     total
        sta     total+1
@next:  ldy     #JOB_SUB
        lda     (ptr1),y
        and     #SUB_DST_HOLD
        bne     @port
        jmp     @ready                  ; into memory: no port to wait for
@port:  lda     _lp_commit              ; FP = the load port's commit/status register
        sta     FP
        lda     _lp_commit+1
        sta     FP+1
        lda     _lp_commit+2
        sta     FP+2
        lda     _lp_commit+3
        sta     FP+3
        ldz     #0
        lda     #0
        sta     wait
        sta     wait+1
        lda     #$40
        sta     wait+2
@poll:  flat_lda
        bmi     @ready
        dec     wait
        bne     @poll
        dec     wait+1
        bne     @poll
        dec     wait+2
        bne     @poll
        lda     #$FF
        tax
        rts
@ready: ldx     #0
        ldy     #0
        lda     #HYPPO_READFILE
        sta     HYPPO_TRAP_DOS
        clv
        ldz     #0
        bcs     @got
        jmp     @done                   ; error, or end of file (count 0 either way)
@got:   stx     count
        sty     count+1
        lda     SD_BUFFER_SELECT
        ora     #SD_BUFSEL_SD
        sta     SD_BUFFER_SELECT
        txa
        ora     count+1
        beq     @done
        ldy     #JOB_COUNT
        lda     count
        sta     (ptr1),y
        iny
        lda     count+1
        sta     (ptr1),y
        lda     #0
        sta     DMA_ADDRBANK            ; list in bank 0
        sta     DMA_ADDRMB
        lda     ptr1+1
        sta     DMA_ADDRMSB
        lda     ptr1
        sta     DMA_ETRIGGER            ; the CPU waits until the job is done
        ldy     #JOB_SUB
        lda     (ptr1),y
        and     #SUB_DST_HOLD
        bne     @sum
        ldy     #JOB_DST                ; into memory: destination += count, carrying into the
        clc                             ; bank (bits 16-19) and the megabyte (bits 20-27)
        lda     (ptr1),y
        adc     count
        sta     (ptr1),y
        iny
        lda     (ptr1),y
        adc     count+1
        sta     (ptr1),y
        bcc     @sum
        iny                             ; JOB_DST_BANK
        lda     (ptr1),y
        inc     a
        and     #$0F
        sta     (ptr1),y
        bne     @sum
        ldy     #JOB_DST_MB
        lda     (ptr1),y
        inc     a
        sta     (ptr1),y
@sum:   clc
        lda     total
        adc     count
        sta     total
        lda     total+1
        adc     count+1
        sta     total+1
        lda     count+1                 ; a short sector is the file's last
        cmp     #2
        bcc     @done
        dec     nsec
        beq     @done
        jmp     @next
@done:  lda     SD_BUFFER_SELECT
        ora     #SD_BUFSEL_SD
        sta     SD_BUFFER_SELECT
        lda     total
        ldx     total+1
        rts

; void __fastcall__ serial_putc(char c): Hyppo trap 3, character to the serial monitor
_serial_putc:
        sta     HYPPO_TRAP_SERIAL
        clv
        rts
