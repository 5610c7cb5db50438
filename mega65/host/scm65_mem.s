; scm65_mem.s: softmem.h for the scm65 test PRG (scm65.c), which runs the software core on its
; own in bank 0: SSNAIL addresses are the CPU's flat addresses of attic RAM ($8000000 up), single
; values go through flat [zp],Z accesses (EA prefix, which ignore MAP: MEGA65 Book memory.tex line
; 1473) and blocks by DMA, whose addresses are physical (gs4510.vhdl lines 9666-9673); a near
; pointer is a bank-0 address as it is. (The program's own softmem_m65.s also translates the core's
; mapped window; this test PRG maps nothing.)
;
; cc65 __fastcall__: the last argument in A/X (sreg for its upper 16 bits), the others on the C
; stack (popax, popeax).

        .p4510
        .import         popax, popeax
        .importzp       sreg
        .export         _sm_read8, _sm_read16, _sm_read32, _sm_write16, _sm_write32
        .export         _sm_read, _sm_write
        ; softgemv65.s's DMA: near memory's physical address is its CPU address (bank 0)
        .export         SC_NEAR_DELTA : absolute = 0

        .zeropage
fp:     .res    4                       ; flat pointer for [fp],Z

        .bss
val:    .res    4

        .data
; one enhanced DMA job: F018B list ($0B), addresses crossing megabyte boundaries instead of wrapping
; inside them ($01, docs/spec/mega65.md §M3.2-§M3.3), source and destination megabytes ($80, $81),
; COPY
list:   .byte   $0B, $01, $80
src_mb: .byte   0
        .byte   $81
dst_mb: .byte   0
        .byte   $00                     ; end of options
        .byte   $00                     ; COPY
count:  .word   0
src:    .word   0
src_bk: .byte   0
dst:    .word   0
dst_bk: .byte   0
        .byte   0                       ; sub-command
        .word   0                       ; modulo

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

; lda/sta [fp],Z: the EA (EOM) prefix on the (zp),Z opcode
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

; uint32_t sm_read32(uint32_t addr)
_sm_read32:
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

; void sm_write16(uint32_t addr, uint16_t v)
_sm_write16:
        sta     val
        stx     val+1
        jsr     popeax
        set_fp
        ldz     #0
        lda     val
        flat_sta
        inz
        lda     val+1
        flat_sta
        ldz     #0
        rts

; void sm_write32(uint32_t addr, uint32_t v)
_sm_write32:
        sta     val
        stx     val+1
        lda     sreg
        sta     val+2
        lda     sreg+1
        sta     val+3
        jsr     popeax
        set_fp
        ldz     #0
        lda     val
        flat_sta
        inz
        lda     val+1
        flat_sta
        inz
        lda     val+2
        flat_sta
        inz
        lda     val+3
        flat_sta
        ldz     #0
        rts

; void sm_read(uint32_t addr, void *dst, uint16_t n): attic -> bank 0
_sm_read:
        jsr     take_args
        beq     none
        lda     near
        sta     dst
        lda     near+1
        sta     dst+1
        lda     #0
        sta     dst_bk
        sta     dst_mb
        lda     fp
        sta     src
        lda     fp+1
        sta     src+1
        lda     fp+2
        and     #$0F
        sta     src_bk
        jsr     fp_mb
        sta     src_mb
        jmp     run_list

; void sm_write(uint32_t addr, const void *src, uint16_t n): bank 0 -> attic
_sm_write:
        jsr     take_args
        beq     none
        lda     near
        sta     src
        lda     near+1
        sta     src+1
        lda     #0
        sta     src_bk
        sta     src_mb
        lda     fp
        sta     dst
        lda     fp+1
        sta     dst+1
        lda     fp+2
        and     #$0F
        sta     dst_bk
        jsr     fp_mb
        sta     dst_mb
        jmp     run_list
none:   rts

        .bss
near:   .res    2

        .code
; n (A/X) -> count, the near pointer -> near, addr -> fp; Z flag set when n = 0 (a DMA count of 0
; would move 64 KB)
take_args:
        sta     count
        stx     count+1
        jsr     popax
        sta     near
        stx     near+1
        jsr     popeax
        set_fp
        lda     count
        ora     count+1
        rts

; fp's megabyte (address bits 20-27)
fp_mb:  lda     fp+3
        asl     a
        asl     a
        asl     a
        asl     a
        sta     val
        lda     fp+2
        lsr     a
        lsr     a
        lsr     a
        lsr     a
        ora     val
        rts

; the list is in bank 0: $D702 (bank) first, as writing it clears $D704 (megabyte); $D705 starts
; the enhanced job and the CPU waits until it is done
run_list:
        lda     #0
        sta     $D702
        sta     $D704
        lda     #>list
        sta     $D701
        lda     #<list
        sta     $D705
        rts
