/* softcore_test: the whole software SSNAIL core (mega65/softcore) as a MEGA65 test PRG of its own
 * (softcore_test.cfg, crt0.s; SSNAIL memory through the program's softmem_m65.s). The test pokes
 * SSNAIL memory into attic RAM at $8000000 and the job pointer and memory end into the box at
 * SOFTCORE_TEST_BOX, runs the PRG, and reads the outcome back from the box: GO, soft_run until HALT or
 * a fault, SYNCs counted. For mega65/tests/softcore_interpreter_in_headless_mega65.rs and
 * mega65/examples/softbench.rs, which have the same layout. */
#include <stdint.h>
#include "softcore.h"

/* The box: in job, mem_end; out state (SOFT_HALT or SOFT_FAULT), error, fault_pc, syncs; in the
 * instruction limit (0: softcore.h's default) and the work limit (0: none). */
struct softcore_test_box {
    uint32_t job;
    uint32_t mem_end;
    uint8_t state;
    uint8_t error;
    uint32_t fault_pc;
    uint32_t syncs;
    uint32_t instr_limit;
    uint32_t work_limit;
};
#define SOFTCORE_TEST_BOX ((struct softcore_test_box *)0x0400)

int main(void)
{
    static uint8_t r;
    static uint32_t syncs;
    soft_mem_end = SOFTCORE_TEST_BOX->mem_end;
    if (SOFTCORE_TEST_BOX->instr_limit)
        soft_instr_limit = SOFTCORE_TEST_BOX->instr_limit;
    soft_work_limit = SOFTCORE_TEST_BOX->work_limit;
    soft_go(SOFTCORE_TEST_BOX->job);
    syncs = 0;
    do {
        r = soft_run(0xFFFF);
        if (r == SOFT_SYNC)
            ++syncs;
    } while (r == SOFT_BUSY || r == SOFT_SYNC);
    SOFTCORE_TEST_BOX->state = r;
    SOFTCORE_TEST_BOX->error = soft_error;
    SOFTCORE_TEST_BOX->fault_pc = soft_fault_pc;
    SOFTCORE_TEST_BOX->syncs = syncs;
    return 0;
}
