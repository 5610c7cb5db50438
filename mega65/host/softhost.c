/* softhost MEMORY JOB OUT [INSTR_LIMIT [WORK_LIMIT]]: run the software SSNAIL core
 * (mega65/softcore) on the PC. MEMORY is a dump of SSNAIL memory from $8000000 (its length is the
 * memory size), JOB the job pointer (decimal or 0x hex); the limits (softcore.h, default the
 * core's: 50,000,000 instructions, no work limit). Does GO (soft_go) and soft_run until HALT or a
 * fault, writes the memory
 * afterwards to OUT and prints one line: "halt" or "fault", the error code, the fault PC and the
 * number of SYNCs. For mega65/tests/softcore_on_the_pc.rs. */
#include <stdio.h>
#include <stdlib.h>
#include "softcore.h"
#include "ssnail_regs.h"

extern uint8_t *sm_host_mem;
extern uint32_t sm_host_len;

static int fail(const char *path, const char *why)
{
    fprintf(stderr, "softhost: %s: %s\n", path, why);
    return 1;
}

int main(int argc, char **argv)
{
    FILE *f;
    long len;
    char *end;
    unsigned long job, syncs = 0;
    uint8_t r;
    if (argc < 4 || argc > 6) {
        fprintf(stderr, "usage: softhost MEMORY JOB OUT [INSTR_LIMIT [WORK_LIMIT]]\n");
        return 2;
    }
    if (argc > 4) {
        soft_instr_limit = strtoul(argv[4], &end, 0);
        if (*argv[4] == 0 || *end != 0)
            return fail(argv[4], "not an instruction limit");
    }
    if (argc > 5) {
        soft_work_limit = strtoul(argv[5], &end, 0);
        if (*argv[5] == 0 || *end != 0 || soft_work_limit > 0xFFFFFFFEUL)
            return fail(argv[5], "not a work limit (0 = none, at most $FFFFFFFE)");
    }
    job = strtoul(argv[2], &end, 0);
    if (*argv[2] == 0 || *end != 0 || job > 0xFFFFFFFFUL)
        return fail(argv[2], "not a job pointer");
    if (!(f = fopen(argv[1], "rb")))
        return fail(argv[1], "cannot open");
    if (fseek(f, 0, SEEK_END) || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET))
        return fail(argv[1], "cannot seek");
    if (len > 0x8000000L)
        return fail(argv[1], "larger than the 128 MiB SSNAIL addresses reach");
    sm_host_len = (uint32_t)len;
    sm_host_mem = malloc(len ? len : 1);
    if (!sm_host_mem || fread(sm_host_mem, 1, len, f) != (size_t)len)
        return fail(argv[1], "cannot read");
    fclose(f);
    soft_mem_end = IMG_BASE + sm_host_len;
    soft_go((uint32_t)job);
    do {
        r = soft_run(1000);
        syncs += r == SOFT_SYNC;
    } while (r == SOFT_BUSY || r == SOFT_SYNC);
    if (!(f = fopen(argv[3], "wb")) || fwrite(sm_host_mem, 1, len, f) != (size_t)len || fclose(f))
        return fail(argv[3], "cannot write");
    printf("%s %u 0x%08lX %lu\n", r == SOFT_HALT ? "halt" : "fault", soft_error,
           (unsigned long)soft_fault_pc, syncs);
    return 0;
}
