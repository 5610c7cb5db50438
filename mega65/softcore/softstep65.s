; softstep65.s: the software core's instruction step on the 45GS02 (cc65 builds with the ca65
; kernels; softcore.c's step() is the definition, used on the PC and with -DSC_C_GEMV). One call
; runs one instruction at sc_pc as emu/core/src/machine.rs steps (its checks in its order):
;   the instruction limit, the work limit, the PC's alignment and range, the fetch (16 bytes),
;   the count and the fetch's 16 bytes of work, PC += 16, then the instruction.
; NOP, SETN, LI, ADDI, LEA, BEQ, BNE and BLT run here (no memory access, no work past the fetch,
; spec §6.4); every other opcode goes to softcore.c's sc_exec with the instruction fetched. Through
; cc65's C each step cost about 2,000 cycles (32-bit compares, increments and the fetch's DMA job
; through its argument passing), which a stories260K token pays about 160 times.
;
; uint8_t sc_step(void): 0, or the fault (SS_ERR_*), in A (X = 0).

        .p4510
        .include        "quad.inc"
        .include        "fn_tables.inc"         ; OP_*, ADDR_*
        .include        "ssnail_regs.inc"       ; SS_ERR_*, IMG_BASE
        .import         _sc_count, _sc_work, _sc_r, _sc_a, _sc_n, _sc_pc, _sc_pc_last, _sc_ins
        .import         _soft_instr_limit, _soft_work_limit
        .import         _sc_exec, _sc_work_add, _sc_next, _sc_stop, _soft_error, _soft_pc, _soft_fault_pc
        .importzp       sreg, sm_fp
        .export         _sc_step, _sc_loop, _sc_addr

SOFT_BUSY = 0                           ; soft_run's results (softcore.h)
SOFT_FAULT = 3
SOFT_STOPPED = 4

INS_X   = _sc_ins + 4                   ; the instruction's words X, Y, Z (little-endian)
INS_Y   = _sc_ins + 8
INS_Z   = _sc_ins + 12

; X = 4·(a & 15), a the instruction's byte 1: R[a]'s or A[a]'s offset
.macro  ra_x
        lda     _sc_ins+1
        and     #15
        asl     a
        asl     a
        tax
.endmacro

        .code

; uint8_t sc_loop(uint16_t budget): soft_run's loop (softcore.c; its C form is the definition): up
; to budget steps, each with pc = sc_pc, sc_next = SOFT_BUSY and soft_error = the step's result;
; soft_pc = sc_pc when it returns; RUN/STOP seen → soft_error = 0, SOFT_STOPPED; a fault → soft_fault_pc =
; the step's PC, SOFT_FAULT; a SYNC or HALT → that state; the budget used up → SOFT_BUSY. In A (X = 0).
; (Through cc65's C the loop cost about 200 cycles a step: its 32-bit locals on the C stack.)
_sc_loop:
        sta     budget
        stx     budget+1
        lda     _soft_work_limit        ; wl_on: a work limit (soft_work_limit is set before GO)
        ora     _soft_work_limit+1
        ora     _soft_work_limit+2
        ora     _soft_work_limit+3
        sta     wl_on
@next:  lda     budget                  ; while (budget--)
        bne     @dec
        lda     budget+1
        beq     @busy
        dec     budget+1
@dec:   dec     budget
        ldq     _sc_pc                  ; pc = sc_pc (quad load/store: spec/mega65.md §M1.6)
        stq     step_pc
        lda     #0                      ; sc_next = SOFT_BUSY
        .assert SOFT_BUSY = 0, error, "softstep65.s: SOFT_BUSY"
        sta     _sc_next
        jsr     _sc_step
        sta     _soft_error
        ldx     _sc_stop
        bne     @stopped
        tax
        bne     @fault
        lda     _sc_next
        beq     @next
        bra     @end
@stopped:
        lda     #0
        sta     _soft_error
        lda     #SOFT_STOPPED
        bra     @end
@fault: ldq     step_pc                 ; soft_fault_pc = the faulting instruction's PC
        stq     _soft_fault_pc
        lda     #SOFT_FAULT
        bra     @end
@busy:  lda     #SOFT_BUSY
@end:   pha                             ; soft_pc = sc_pc (read only after soft_run: softcore.h;
        ldq     _sc_pc                  ; the quad load takes A, X, Y and Z)
        stq     _soft_pc
        pla
        ldx     #0
        ldz     #0                      ; (cc65 code needs Z = 0)
        rts

; the faults before the fetch (here: within the checks' branches)
limit:  lda     #SS_ERR_INSTR_LIMIT
        ldx     #0
        rts
misaligned:
        lda     #SS_ERR_MISALIGNED_PC
        ldx     #0
        rts
address:
        lda     #SS_ERR_ADDRESS
        ldx     #0
        rts

; The 32-bit compares are quad subtractions: SBCQ's C is the carry out of bit 31, as SBC's out of
; bit 7 (spec/mega65.md §M1.6), so C set ⇔ the first operand ≥ the second (unsigned).
_sc_step:
        ldq     _sc_count               ; sc_count >= soft_instr_limit: the instruction limit
        sec
        sbcq    _soft_instr_limit
        bcs     limit
        lda     wl_on                   ; a work limit and sc_work >= it: the same fault
        beq     @pc
        ldq     _sc_work
        sec
        sbcq    _soft_work_limit
        bcs     limit
@pc:    lda     _sc_pc                  ; the PC: 16-byte aligned,
        and     #15
        bne     misaligned
        lda     _sc_pc+3                ; at or above IMG_BASE (its low 24 bits are 0),
        cmp     #>(IMG_BASE >> 16)
        bcc     address
        ldq     _sc_pc_last             ; and at most sc_pc_last (its 16 bytes in memory)
        sec
        sbcq    _sc_pc
        bcc     address
        .assert (IMG_BASE & $FFFFFF) = 0, error, "softstep65.s: IMG_BASE's low 24 bits"
; the fetch: four quad loads through a flat pointer (LDQ [fp],Z with Z = 0, as sm_read32; SSNAIL
; addresses are attic RAM's flat addresses, softmem_m65.s), the pointer's low byte the PC's with
; 4, 8, 12 (the PC is 16-byte aligned)
        ldq     _sc_pc
        stq     sm_fp
.repeat 4, k
        ldz     #0
        .byte   $42, $42, $EA           ; LDQ [sm_fp],Z
        lda     (sm_fp),z
        stq     _sc_ins + 4 * k
  .if k < 3
        lda     _sc_pc
        ora     #4 * (k + 1)
        sta     sm_fp
  .endif
.endrepeat
        ldz     #0                      ; (cc65 code takes (zp) as (zp),Z)
        inc     _sc_count               ; ++sc_count
        bne     @counted
        inc     _sc_count+1
        bne     @counted
        inc     _sc_count+2
        bne     @counted
        inc     _sc_count+3
@counted:
        lda     wl_on                   ; with a work limit: sc_work_add(16)
        beq     @step_pc
        lda     #0
        sta     sreg
        sta     sreg+1
        tax
        lda     #16
        jsr     _sc_work_add
@step_pc:
        clc                             ; sc_pc += 16
        lda     _sc_pc
        adc     #16
        sta     _sc_pc
        bcc     @op
        inc     _sc_pc+1
        bne     @op
        inc     _sc_pc+2
        bne     @op
        inc     _sc_pc+3
@op:    lda     _sc_ins                 ; the opcode: 0-15 through the table, the rest in C
        cmp     #16
        bcs     in_c
        asl     a
        tax
        jmp     (ops,x)

in_c:   jmp     _sc_exec

        .rodata
ops:    .word   op_nop, in_c, in_c, in_c, in_c, in_c, in_c, op_setn         ; $00-$07
        .word   op_li, in_c, in_c, op_addi, op_lea, op_beq, op_bne, op_blt    ; $08-$0F
        .assert OP_NOP = 0 && OP_SETN = 7 && OP_LI = 8 && OP_ADDI = $0B && OP_LEA = $0C, error, "softstep65.s: the opcode table"
        .assert OP_BEQ = $0D && OP_BNE = $0E && OP_BLT = $0F && OP_GEMV = $10, error, "softstep65.s: the opcode table"
        .code

op_nop: lda     #0
        tax
        rts

; SETN: N0, N1, N2 = X, Y, Z
op_setn:
        ldq     INS_X
        stq     _sc_n
        ldq     INS_Y
        stq     _sc_n+4
        ldq     INS_Z
        stq     _sc_n+8
        ldz     #0                      ; (Z took a byte of each; cc65 code needs it 0)
        lda     #0
        tax
        rts

; R[a] = Z (R15 stays 0: set_reg's rule, so reading sc_r[15] needs no test)
op_li:  ra_x
        lda     INS_Z
        sta     _sc_r,x
        lda     INS_Z+1
        sta     _sc_r+1,x
        lda     INS_Z+2
        sta     _sc_r+2,x
        lda     INS_Z+3
        sta     _sc_r+3,x
        ; (fall through)
r15_zero:
        lda     #0
        sta     _sc_r+60
        sta     _sc_r+61
        sta     _sc_r+62
        sta     _sc_r+63
        tax
        rts

; R[a] = R[b] + Z
op_addi:
        jsr     rb_y                    ; Y = 4·b
        ra_x
        clc
        lda     _sc_r,y
        adc     INS_Z
        sta     _sc_r,x
        lda     _sc_r+1,y
        adc     INS_Z+1
        sta     _sc_r+1,x
        lda     _sc_r+2,y
        adc     INS_Z+2
        sta     _sc_r+2,x
        lda     _sc_r+3,y
        adc     INS_Z+3
        sta     _sc_r+3,x
        bra     r15_zero

; Y = 4·(b & 15), b the instruction's byte 2
rb_y:   lda     _sc_ins+2
        and     #15
        asl     a
        asl     a
        tay
        rts

; A[a] = (addr(X) + R[b]·Z) & ADDR_MASK: the product mod 2^32 is MULTOUT's low half (the
; hardware multiplier, spec/mega65.md §M9)
op_lea: jsr     rb_y
        ldx     #0
@in:    lda     _sc_r,y
        sta     MULA,x
        lda     INS_Z,x
        sta     MULB,x
        iny
        inx
        cpx     #4
        bne     @in
        lda     #1                      ; addr(X): res, res+1, sreg
        jsr     _sc_addr
        sta     res
        stx     res+1
        ra_x
        clc
        lda     res
        adc     MULO
        sta     _sc_a,x
        lda     res+1
        adc     MULO+1
        sta     _sc_a+1,x
        lda     sreg
        adc     MULO+2
        sta     _sc_a+2,x
        lda     sreg+1
        adc     MULO+3
        and     #>(ADDR_MASK >> 16)
        sta     _sc_a+3,x
        lda     #0
        tax
        rts

; uint32_t sc_addr(uint8_t w): addr() of the instruction's word w (1 = X, 2 = Y, 3 = Z; spec §3.2):
; bit 31 clear → the word & ADDR_MASK; set → A[bits 27-24] + bits 23-0, the sum not masked (A <
; 2^28, so it fits 32 bits; softcore.c's addr is the definition). In A/X/sreg (cc65's long).
_sc_addr:
        asl     a
        asl     a
        tay                             ; Y = 4·w
        lda     _sc_ins+3,y
        bmi     @rel
        and     #>(ADDR_MASK >> 16)
        sta     sreg+1
        lda     _sc_ins+2,y
        sta     sreg
        ldx     _sc_ins+1,y
        lda     _sc_ins,y
        rts
@rel:   and     #15
        asl     a
        asl     a
        tax                             ; X = 4·(bits 27-24)
        clc
        lda     _sc_a,x
        adc     _sc_ins,y
        sta     res
        lda     _sc_a+1,x
        adc     _sc_ins+1,y
        sta     res+1
        lda     _sc_a+2,x
        adc     _sc_ins+2,y
        sta     sreg
        lda     _sc_a+3,x
        adc     #0
        sta     sreg+1
        ldx     res+1
        lda     res
        rts
        .assert ADDR_REL = $80000000 && ADDR_OFFSET = $00FFFFFF && ADDR_MASK = $0FFFFFFF, error, "softstep65.s: the address operand's fields"

; the branches: R[a] against R[b] (unsigned for BLT); taken: PC = addr(X)
op_beq: jsr     cmp_ab
        bne     not_taken
taken:  lda     #1                      ; PC = addr(X)
        jsr     _sc_addr
        sta     _sc_pc
        stx     _sc_pc+1
        lda     sreg
        sta     _sc_pc+2
        lda     sreg+1
        sta     _sc_pc+3
not_taken:
        lda     #0
        tax
        rts
op_bne: jsr     cmp_ab
        bne     taken
        bra     not_taken
op_blt: jsr     cmp_ab
        bcc     taken
        bra     not_taken

; R[a] − R[b]: C clear when R[a] < R[b] (unsigned), Z set when they are equal
cmp_ab: jsr     rb_y
        ra_x
        lda     _sc_r+3,x               ; from the top byte down: the first that differs decides
        cmp     _sc_r+3,y
        bne     @done
        lda     _sc_r+2,x
        cmp     _sc_r+2,y
        bne     @done
        lda     _sc_r+1,x
        cmp     _sc_r+1,y
        bne     @done
        lda     _sc_r,x
        cmp     _sc_r,y
@done:  rts

        .bss
res:    .res    2                       ; addr(X)'s low half
budget: .res    2                       ; sc_loop's steps left
step_pc: .res   4                       ; the PC of sc_loop's step
wl_on:  .res    1                       ; nonzero: a work limit
