; scrwalk.s (browser overlay): the model browser's look at an image's script (models.c).
;
; uint8_t __fastcall__ scr_walk(uint32_t addr): scr_len bytes (0 = 256) at flat address addr,
; scr_k = the first one's place in its 16-byte instruction, at most scr_left more bytes. At byte 1
; of an instruction whose opcode is scr_match[0] (GEMV) and whose byte is one of scr_match[1..3]
; (the weight formats slow on the software core): scr_float = 1, done. At opcode 0 (a NOP, the
; end of the script) or scr_left = 0: done. Returns 1 when done (scr_left is then 0), else 0.

        .p4510
        .export         _scr_walk, _scr_k, _scr_len, _scr_float, _scr_left
        .import         _scr_match
        .importzp       sreg

FP      = $F0                           ; hw.s's 32-bit flat pointer

        .bss
_scr_k:         .res    1
_scr_len:       .res    1
_scr_float:     .res    1
_scr_left:      .res    2
scr_op:         .res    1

        .segment        "OVBROWSE"
_scr_walk:
        sta     FP
        stx     FP+1
        ldy     sreg
        sty     FP+2
        ldy     sreg+1
        sty     FP+3
        ldz     #0
@next:  lda     _scr_left
        ora     _scr_left+1
        beq     @done
        lda     _scr_left
        bne     @dec
        dec     _scr_left+1
@dec:   dec     _scr_left
        eom                             ; lda [FP],z
        lda     (FP),z
        ldy     _scr_k
        bne     @later
        sta     scr_op
        tay
        beq     @done
        bra     @step
@later: dey
        bne     @step
        ldy     scr_op
        cpy     _scr_match
        bne     @step
        cmp     _scr_match+1
        beq     @slow
        cmp     _scr_match+2
        beq     @slow
        cmp     _scr_match+3
        beq     @slow
@step:  lda     _scr_k
        inc     a
        and     #15
        sta     _scr_k
        inz
        cpz     _scr_len
        bne     @next
        ldz     #0
        lda     #0
        tax
        rts
@slow:  lda     #1
        sta     _scr_float
@done:  ldz     #0
        lda     #0
        sta     _scr_left
        sta     _scr_left+1
        tax
        lda     #1
        rts
