; 45GS02-specific helpers: flat 28-bit memory access ([zp],Z through the EA prefix), DMA job
; trigger, hypervisor traps, serial monitor output. Everything else is C.

        .p4510
        .importzp       ptr1
        .import         popax, popeax
        .importzp       sreg
        .export         _far_peek, _far_peek16, _far_peek32, _far_poke, _far_cmp
        .export         _dma_exec, _hyppo_call, _serial_putc
        .export         _hy_x, _hy_y, _hy_z, _hy_a

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
        sty     $D702                   ; list bank 0 (also clears the list MB)
        sty     $D704
        stx     $D701
        sta     $D705                   ; start; the CPU waits until the job is done
        rts

; uint8_t __fastcall__ hyppo_call(uint8_t function): X/Y/Z in and out through hy_x/hy_y/hy_z,
; A out in hy_a; returns 1 when the call succeeded (carry set).
_hyppo_call:
        ldx     _hy_x
        ldy     _hy_y
        ldz     _hy_z
        sta     $D640
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

; void __fastcall__ serial_putc(char c): Hyppo trap 3, character to the serial monitor
_serial_putc:
        sta     $D643
        clv
        rts
