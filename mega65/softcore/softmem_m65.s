; softmem_m65.s: softmem.h on the MEGA65. SSNAIL addresses are the CPU's flat 28-bit addresses of
; attic RAM (the program selects the RAM with $D7FE; main.c), so single values are read and written
; with flat [zp],Z accesses (EA prefix; they ignore MAP, MEGA65 Book memory.tex line 1473) and
; blocks are moved by DMA, whose data addresses are physical too (gs4510.vhdl lines 9666-9673).
; A near pointer inside the core's window ($2000-$BFFF, mapped to chip RAM $40000 while the core
; runs; softcore_window.inc) is translated to that chip RAM for the DMA; any other near pointer is bank 0.
;
; Calling convention (cc65 __fastcall__): the last argument in A/X (sreg for its upper 16 bits),
; the others on the C stack (popax, popeax).

        .p4510
        .include        "softcore_window.inc"
        .include        "mega65_io.inc"
        .include        "dmajob.inc"            ; a job list's address, its start
        .import         popeax
        .importzp       sreg
        .p02                            ; (the 4510's ca65 takes sp for its stack register)
        .importzp       sp
        .p4510
        .export         _sm_read8, _sm_read16, _sm_read32, _sm_write16, _sm_write32
        .export         _sm_read, _sm_write
        ; for the core's own DMA (e.g. softgemv65.s): a near address in the window's code or data
        ; has its chip RAM address at its CPU address + SC_NEAR_DELTA; a BSS address has it at its
        ; CPU address (bank 0: softcore_window.inc)
        .export         SC_NEAR_DELTA : absolute = SC_DELTA
        .import         __BSS_RUN__, __BSS_SIZE__

        .assert         (SC_PHYS & $FFFF) + (SC_WIN_END - SC_WIN_START) <= $10000, error, "window crosses a bank"
        .assert         __BSS_RUN__ >= SC_WIN_END || __BSS_RUN__ + __BSS_SIZE__ <= SC_WIN_START, lderror, "the core's BSS is in its window (softcore_window.inc)"

        .zeropage
near:   .res    2                       ; sm_read/sm_write's near pointer (take_args: just below fp)
fp:     .res    4                       ; flat pointer for [fp],Z
        ; (softstep65.s fetches instructions through it too, between the calls here)
sm_fp   = fp
        .exportzp       sm_fp
        .assert fp = near + 2, error, "softmem_m65.s: take_args copies near and fp as one"

        .bss
val:    .res    4                       ; sm_write32/16's value
valn:   .res    1                       ; its bytes

        .data
; one enhanced DMA job (F018B, addresses crossing megabyte boundaries instead of wrapping inside
; them: option $01, gs4510.vhdl lines 6006, 6577-6583, 6765-6773; source and destination
; megabytes); run from its physical address (the list is in the window) with $D705
list:   .byte   DMA_OPT_F018B, DMA_OPT_CROSS_MB, DMA_OPT_SRC_MB
src_mb: .byte   0
        .byte   DMA_OPT_DST_MB
dst_mb: .byte   0
        .byte   DMA_OPT_END             ; end of options
        .byte   DMA_COPY                ; COPY
count:  .word   0
src:    .word   0
src_bk: .byte   0
dst:    .word   0
dst_bk: .byte   0
        .byte   0                       ; sub-command
        .word   0                       ; modulo
LIST_PHYS = list + SC_DELTA

        .code

; A/X/sreg (a cc65 long) -> fp
.macro  set_fp
        sta     fp
        stx     fp+1
        ldy     sreg
        sty     fp+2
        ldy     sreg+1
        sty     fp+3
.endmacro

.macro  flat_lda
        eom
        lda     (fp),z
.endmacro

.macro  flat_sta
        eom
        sta     (fp),z
.endmacro

; uint8_t sm_read8(uint32_t addr)
_sm_read8:
        set_fp
        ldz     #0
        flat_lda
        ldx     #0
        rts

; uint16_t sm_read16(uint32_t addr)
_sm_read16:
        set_fp
        ldz     #1
        flat_lda
        tax
        dez
        flat_lda
        rts

; uint32_t sm_read32(uint32_t addr): one quad load (LDQ [fp],Z with Z = 0, the same whether or
; not this form adds Z; spec §M1.6) into A, X, Y, Z = bytes 0-3
_sm_read32:
        set_fp
        ldz     #0
        .byte   $42, $42
        flat_lda
        sty     sreg
        stz     sreg+1
        ldz     #0
        rts

; void sm_write16(uint32_t addr, uint16_t v)
_sm_write16:
        sta     val
        stx     val+1
        ldy     #2
        bra     write_val

; void sm_write32(uint32_t addr, uint32_t v): byte stores (a quad store would take its top byte
; from Z, which the store might also add to the address)
_sm_write32:
        sta     val
        stx     val+1
        lda     sreg
        sta     val+2
        lda     sreg+1
        sta     val+3
        ldy     #4
; the first Y bytes of val to addr (the long on the C stack)
write_val:
        sty     valn
        jsr     popeax
        set_fp
        ldy     #0
        ldz     #0
@byte:  lda     val,y
        flat_sta
        iny
        inz
        cpy     valn
        bne     @byte
        ldz     #0
        rts

; void sm_read(uint32_t addr, void *dst, uint16_t n): attic -> near memory
_sm_read:
        jsr     take_args
        beq     @none
        lda     fp                      ; source: the attic address
        sta     src
        lda     fp+1
        sta     src+1
        lda     fp+2
        and     #$0F
        sta     src_bk
        jsr     fp_mb
        sta     src_mb
        jsr     near_phys               ; destination: the near pointer
        sta     dst_bk
        lda     near
        sta     dst
        lda     near+1
        sta     dst+1
        lda     #0
        sta     dst_mb
        jmp     run_list
@none:  rts

; void sm_write(uint32_t addr, const void *src, uint16_t n): near memory -> attic
_sm_write:
        jsr     take_args
        beq     @none
        lda     fp
        sta     dst
        lda     fp+1
        sta     dst+1
        lda     fp+2
        and     #$0F
        sta     dst_bk
        jsr     fp_mb
        sta     dst_mb
        jsr     near_phys
        sta     src_bk
        lda     near
        sta     src
        lda     near+1
        sta     src+1
        lda     #0
        sta     src_mb
        jmp     run_list
@none:  rts

; n (A/X) -> count, the near pointer -> near, addr -> fp, the six bytes taken off the C stack
; (cc65 pushed addr, then the pointer: sp+0-1 the pointer, sp+2-5 addr, as popax then popeax take
; them); Z flag set when n = 0 (a DMA count of 0 would move 64 KB)
take_args:
        sta     count
        stx     count+1
        ldy     #5
        .p02                            ; (cc65's sp, not the 4510's stack register)
@arg:   lda     (sp),y
        sta     near,y                  ; near, then fp: adjacent (.assert below)
        dey
        bpl     @arg
        clc
        lda     sp
        adc     #6
        sta     sp
        bcc     @popped
        inc     sp+1
@popped:
        .p4510
        lda     count
        ora     count+1
        rts

; megabyte of fp (address bits 20-27)
fp_mb:  lda     fp+2
        lsr     a
        lsr     a
        lsr     a
        lsr     a
        sta     val
        lda     fp+3
        asl     a
        asl     a
        asl     a
        asl     a
        ora     val
        rts

; near -> its chip RAM address (bits 0-15 in near, bank returned in A): inside the window, the core's
; chip RAM; elsewhere bank 0 as it is
near_phys:
        lda     near+1
        cmp     #>SC_WIN_START
        bcc     @bank0
        cmp     #>SC_WIN_END
        bcs     @bank0
        sec
        lda     near
        sbc     #<SC_WIN_START
        sta     near
        lda     near+1
        sbc     #>SC_WIN_START
        sta     near+1
        clc
        lda     near
        adc     #<SC_PHYS
        sta     near
        lda     near+1
        adc     #>SC_PHYS
        sta     near+1
        lda     #^SC_PHYS
        rts
@bank0: lda     #0
        rts

; run the job: list at its physical address
run_list:
        dma_run LIST_PHYS
        rts
