; softcall.s: the program's side of the software SSNAIL core (softcore_abi.inc): the trampoline that
; maps the core's window, calls one of its entries and unmaps it, and the mailbox symbols for C.
; The trampoline is in RESIDENT, which crt0 copies to LOWRAM (linker/mega65.cfg): it keeps
; running while the window hides the program at $2000-$BFFF.

        .p4510
        .include        "softcore_abi.inc"
        .export         _soft_call, _sc_phys
        .importzp       sreg
        ; the mailbox, as C sees it (absolute addresses in page 0)
        .export         _sc_job : absolute = SC_JOB
        .export         _sc_memend : absolute = SC_MEMEND
        .export         _sc_budget : absolute = SC_BUDGET
        .export         _sc_result : absolute = SC_RESULT
        .export         _sc_error : absolute = SC_ERROR
        .export         _sc_faultpc : absolute = SC_FAULTPC

        ; GELU's table sits above the overlays' chip RAM copies (linker/mega65.cfg)
        .import         __OVL_CHIP_END__
        .assert         __OVL_CHIP_END__ <= SC_TAB2, lderror, "the overlays' copies (__OVL_CHIP_END__) reach SC_TAB2"
        ; the core's BSS lies between the overlay region and the program's C stack (mega65.cfg)
        .import         __OVL_END__, __STACKTOP__, __STACKSIZE__
        .assert         __OVL_END__ = SC_BSS_START, lderror, "the overlay region (__OVL_END__) does not end at SC_BSS_START"
        .assert         __STACKTOP__ - __STACKSIZE__ = SC_BSS_END, lderror, "the program's C stack does not start at SC_BSS_END"

        .rodata
_sc_phys:       .dword  SC_PHYS                 ; where the core file is loaded
_sc_tab:        .dword  SC_TAB, SC_TAB2         ; where its tables go (after the window part)
_sc_tab_size:   .word   SC_TAB_SIZE, SC_TAB2_SIZE, 0 ; their lengths, 0 after the last
_sc_tab_bytes:  .word   SC_TAB_SIZE + SC_TAB2_SIZE ; all of them
magic:          .byte   SC_MAGIC, SC_ABI        ; the core file must start with these
        .export _sc_tab, _sc_tab_size, _sc_tab_bytes, _soft_header, _soft_sums_ok

FP      = $F0                           ; hw.s's flat pointer
.macro  flat_lda                        ; lda [FP],z
        eom
        lda     (FP),z
.endmacro
.macro  flat_sta                        ; sta [FP],z
        eom
        sta     (FP),z
.endmacro
.macro  fp_set  addr                    ; FP = addr
        lda     #<(addr)
        sta     FP
        lda     #>(addr)
        sta     FP+1
        lda     #^(addr)
        sta     FP+2
        lda     #0
        sta     FP+3
.endmacro

        .segment        "LOWBSS"
hdr:    .res    SC_HDR_END - SC_WIN_START  ; the core file's header
LEN     = hdr + SC_HDR_LEN - SC_WIN_START  ; the window part's length
USED    = hdr + SC_HDR_USED - SC_WIN_START ; the window bytes the core uses
SUMS    = hdr + SC_HDR_SUM - SC_WIN_START  ; the check sums
s1:     .res    2                       ; the file's sums
s2:     .res    2
count:  .res    2
_sum_len: .res  2                       ; far_sum's length
_sum_s1 = s1
_sum_s2 = s2
        .export _far_sum, _sum_len, _sum_s1, _sum_s2

        .code
; uint16_t __fastcall__ soft_header(uint32_t addr): the core file's header at far address addr
; (its first block's data): the window part's length when the magic, the ABI and every length
; are right (the header inside the window part, the window part below the core's C stack, the
; BSS's end inside SC_BSS_START-SC_BSS_END), else 0. Keeps the check sums for soft_sums_ok.
_soft_header:
        sta     FP
        stx     FP+1
        ldy     sreg
        sty     FP+2
        ldy     sreg+1
        sty     FP+3
        ldy     #SC_HDR_END - SC_WIN_START - 1
@copy:  tya                             ; the header into hdr
        taz
        flat_lda
        sta     hdr,y
        dey
        bpl     @copy
        ldy     #4
@magic: lda     hdr,y
        cmp     magic,y
        bne     @bad
        dey
        bpl     @magic
        lda     LEN                     ; len >= the header's end
        cmp     #<(SC_HDR_END - SC_WIN_START)
        lda     LEN+1
        sbc     #>(SC_HDR_END - SC_WIN_START)
        bcc     @bad
        lda     #<(SC_WIN_END - SC_STACK - SC_WIN_START)  ; len <= the window below the stack
        cmp     LEN
        lda     #>(SC_WIN_END - SC_STACK - SC_WIN_START)
        sbc     LEN+1
        bcc     @bad
        lda     USED                    ; the BSS's end >= its start
        cmp     #<SC_BSS_START
        lda     USED+1
        sbc     #>SC_BSS_START
        bcc     @bad
        lda     #<SC_BSS_END            ; and <= its end: below the program's C stack
        cmp     USED
        lda     #>SC_BSS_END
        sbc     USED+1
        bcc     @bad
        ldz     #0
        lda     LEN
        ldx     LEN+1
        rts
@bad:   ldz     #0
        lda     #0
        tax
        rts

; uint8_t soft_sums_ok(void), after the whole file is loaded: the check sums of the window part
; (at SC_PHYS) and the tables (at SC_TAB, then SC_TAB2) with the sums' own bytes as 0 (they are zeroed in the
; loaded copy) equal the header's; 1 = they do
_soft_sums_ok:
        fp_set  SC_PHYS + SC_HDR_SUM - SC_WIN_START
        lda     #0
        sta     s1
        sta     s1+1
        sta     s2
        sta     s2+1
        ldz     #3
@zero:  flat_sta
        dez
        bpl     @zero
        fp_set  SC_PHYS
        lda     LEN
        ldx     LEN+1
        jsr     sum
        fp_set  SC_TAB
        lda     #<SC_TAB_SIZE
        ldx     #>SC_TAB_SIZE
        jsr     sum
        fp_set  SC_TAB2
        lda     #<SC_TAB2_SIZE
        ldx     #>SC_TAB2_SIZE
        jsr     sum
        ldx     #3
@cmp:   lda     s1,x                    ; s1, s2 follow each other as in the header
        cmp     SUMS,x
        bne     @no
        dex
        bpl     @cmp
        lda     #1
        ldx     #0
        rts
@no:    lda     #0
        tax
        rts

; void __fastcall__ far_sum(uint32_t addr): sum_len bytes from flat address addr added to the sums
; sum_s1, sum_s2 (s1 += b, then s2 += s1; the caller zeroes them first): the check sums of the
; program's overlay file too (ovlload.c), about 25 cycles a byte
_far_sum:
        sta     FP
        stx     FP+1
        ldy     sreg
        sty     FP+2
        ldy     sreg+1
        sty     FP+3
        lda     _sum_len
        ldx     _sum_len+1
; A/X bytes from FP on: s1 += b, s2 += s1 for each
sum:    sta     count
        stx     count+1
        ldz     #0
@loop:  lda     count
        ora     count+1
        beq     @done
        flat_lda
        clc
        adc     s1
        sta     s1
        bcc     @s2
        inc     s1+1
@s2:    clc
        adc     s2
        sta     s2
        lda     s1+1
        adc     s2+1
        sta     s2+1
        inz
        bne     @next
        inc     FP+1                    ; the next 256 bytes
        bne     @next
        inc     FP+2
@next:  lda     count
        bne     @low
        dec     count+1
@low:   dec     count
        bra     @loop
@done:  ldz     #0
        rts

        .segment        "RESIDENT"

; void __fastcall__ soft_call(uint8_t entry): entry 0 = init, 1 = go, 2 = run (softcore_abi.inc).
; MAP is all off outside this call (crt0), so mapping and unmapping need no saved state. Both
; halves' megabyte registers are set to 0 first: BASIC may leave other values, and they matter
; once a block is mapped.
_soft_call:
        sta     @entry
        asl     a                       ; 3 bytes per JMP
        clc
        adc     @entry
        adc     #<SC_ENTRY_INIT
        sta     @jsr+1
        lda     #>SC_ENTRY_INIT
        adc     #0
        sta     @jsr+2
        lda     #0                      ; megabytes of both halves = 0
        ldx     #$0F
        ldy     #0
        ldz     #$0F
        map
        lda     #SC_MAP_A               ; the window on
        ldx     #SC_MAP_X
        ldy     #SC_MAP_Y
        ldz     #SC_MAP_Z
        map
        eom
@jsr:   jsr     SC_ENTRY_INIT
        lda     #0                      ; the window off: nothing mapped, as crt0 left it
        tax
        tay
        taz
        map
        eom
        rts
@entry: .byte   0
