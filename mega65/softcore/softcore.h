/* softcore.h: the software SSNAIL core — ISA v1 (docs/spec/isa.md §3) in hardware numerics
 * (docs/spec/numerics.md §5.3), executed by the 45GS02 when no SSNAIL FPGA core is present.
 * SSNAIL memory is reached through softmem.h (attic RAM at $8000000 on the MEGA65, an array on the
 * PC test build). The interface mirrors the device's registers (§9.2): GO, BUSY, ERROR, FAULT_PC. */
#ifndef SOFTCORE_H
#define SOFTCORE_H
#include <stdint.h>

/* soft_run's results */
#define SOFT_BUSY 0  /* the instruction budget is used up; call soft_run again */
#define SOFT_SYNC 1  /* a SYNC ran: what the script wrote is visible; call soft_run again */
#define SOFT_HALT 2  /* HALT: the job ended, the core is idle */
#define SOFT_FAULT 3 /* a fault: soft_error and soft_fault_pc say which and where; idle */
#define SOFT_STOPPED 4 /* RUN/STOP was seen inside an instruction: the job ended there; idle */

/* GO (§9.2): PC = job pointer; R0-R15, A0-A15, N0-N2 cleared; ERROR cleared. */
void soft_go(uint32_t job);
/* Run at most `budget` instructions; stops early at SYNC, HALT, a fault or RUN/STOP. A long
 * instruction reads the keyboard as it goes (sc_poll, softcore_int.h): RUN/STOP ends the job in
 * the middle of it, with what it wrote so far, so that no instruction keeps RUN/STOP waiting. */
uint8_t soft_run(uint16_t budget);

extern uint8_t soft_error;     /* §3.4 fault codes (ssnail_regs.h SS_ERR_*), 0 = none */
extern uint32_t soft_fault_pc; /* PC of the faulting instruction */
extern uint32_t soft_pc;       /* after soft_go and soft_run: the job's next instruction */
/* Instructions a job may execute: SS_INSTR_LIMIT (spec §6.1, the Rust core's limit), counted from
 * GO; the one after faults with SS_ERR_INSTR_LIMIT (code 4) at its PC, before it is fetched. */
extern uint32_t soft_instr_limit;
/* The work limit (spec §6.1, the Rust core's Machine::work_limit): 0 = none (the default, as
 * there), else at most $FFFFFFFE bytes of work per job — the traffic of §6.4 plus ATTN's K and V
 * values read per head. An instruction starting with the work at the limit faults with code 4,
 * and so does an ATTN whose own work would pass it, before it computes or writes. */
extern uint32_t soft_work_limit;
extern uint32_t soft_mem_end;  /* $8000000 + SSNAIL memory size; set before soft_go */

#endif
