; entry_m65.s: the software SSNAIL core's entry points on the MEGA65. The core is linked on its
; own (linker/softcore.cfg) and reached only through the program's trampoline (src/softcall.s),
; which maps it at $2000-$BFFF and jumps to one of the JMPs below; arguments and results go
; through the mailbox in the base page (softcore_abi.inc). The core has its own zero page, cc65
; runtime and C stack, so it touches none of the program's.

        .p02                            ; "sp" is a register name in 4510 mode
        .include        "softcore_abi.inc"
        .export         __STARTUP__ : absolute = 1
        .import         _soft_go, _soft_run, _soft_error, _soft_fault_pc, _soft_pc, _soft_mem_end
        .import         zerobss, initlib
        .importzp       sp, sreg
        .import         __DATA_RUN__, __DATA_SIZE__, __BSS_RUN__, __BSS_SIZE__, __FNTAB_START__, __FNTAB_SIZE__, _fn_exp
        .import         __FNTAB2_START__, __FNTAB2_SIZE__, _fn_gelu
        .import         __STACKSIZE__

        .segment        "SCHEADER"
        .assert         * = SC_WIN_START, lderror, "the header must open the window"
        .byte           SC_MAGIC, SC_ABI
        .assert         * = SC_HDR_LEN, lderror, "header moved"
        .word           __DATA_RUN__ + __DATA_SIZE__ - SC_WIN_START  ; the file's window part
        .byte           0
        ; the tables follow the window part in the file and are loaded where the program expects
        .assert         __DATA_RUN__ + __DATA_SIZE__ <= SC_WIN_END - SC_STACK, lderror, "the core runs into its stack"
        .assert         __BSS_RUN__ = SC_BSS_START, lderror, "BSS (linker/softcore.cfg) is not at SC_BSS_START"
        .assert         __BSS_RUN__ + __BSS_SIZE__ <= SC_BSS_END, lderror, "the core's BSS reaches the program's C stack (SC_BSS_END)"
        .assert         __FNTAB_START__ = SC_TAB, lderror, "FNTAB (linker/softcore.cfg) is not at SC_TAB"
        .assert         __FNTAB_SIZE__ = SC_TAB_SIZE, lderror, "FNTAB's size is not SC_TAB_SIZE"
        .assert         _fn_exp = SC_TAB, lderror, "the tables must open FNTAB"
        .assert         __FNTAB2_START__ = SC_TAB2, lderror, "FNTAB2 (linker/softcore.cfg) is not at SC_TAB2"
        .assert         __FNTAB2_SIZE__ = SC_TAB2_SIZE, lderror, "FNTAB2's size is not SC_TAB2_SIZE"
        .assert         _fn_gelu = SC_TAB2, lderror, "GELU's table must open FNTAB2"
        .assert         * = SC_ENTRY_INIT, lderror, "entry table moved"
        jmp             init
        jmp             go
        jmp             run
        .assert         * = SC_HDR_USED, lderror, "header moved"
        .word           __BSS_RUN__ + __BSS_SIZE__  ; the BSS's end (bank 0)
        .assert         __STACKSIZE__ = SC_STACK, lderror, "linker/softcore.cfg's stack is not SC_STACK"
        .assert         * = SC_HDR_SUM, lderror, "header moved"
        .word           0, 0                    ; the check sums, patched in by the build
        .assert         * = SC_HDR_END, lderror, "header moved"
        ; where the build patches the sums in (file offset), read from the map file by build.mk
        .export         SC_SUM_OFFSET : absolute = SC_HDR_SUM - SC_WIN_START

        .code
; after the program loaded the file: BSS cleared (bank 0's SC_BSS_START on, whatever the program
; left there), C stack at the window's end, constructors run
init:   lda             #<SC_WIN_END
        sta             sp
        lda             #>SC_WIN_END
        sta             sp+1
        jsr             zerobss
        jmp             initlib

; soft_mem_end = SC_MEMEND; soft_go(SC_JOB)
go:     ldx             #3
@mem:   lda             SC_MEMEND,x
        sta             _soft_mem_end,x
        dex
        bpl             @mem
        lda             SC_JOB+2
        sta             sreg
        lda             SC_JOB+3
        sta             sreg+1
        lda             SC_JOB
        ldx             SC_JOB+1
        jsr             _soft_go
        jmp             report

; SC_RESULT = soft_run(SC_BUDGET)
run:    lda             SC_BUDGET
        ldx             SC_BUDGET+1
        jsr             _soft_run
        sta             SC_RESULT
; SC_FAULTPC: the fault's PC after a fault, else the job's next instruction (its progress)
report: ldx             #3
        lda             _soft_error
        sta             SC_ERROR
        bne             @pc
@at:    lda             _soft_pc,x
        sta             SC_FAULTPC,x
        dex
        bpl             @at
        rts
@pc:    lda             _soft_fault_pc,x
        sta             SC_FAULTPC,x
        dex
        bpl             @pc
        rts
