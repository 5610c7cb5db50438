/* softhost MEMORY JOB OUT: run the software SSNAIL core (mega65/softcore) on the PC. MEMORY is a
 * dump of SSNAIL memory from $8000000 (its length is the memory size), JOB the job pointer
 * (decimal or 0x hex). Does GO (soft_go) and soft_run until HALT or a fault, writes the memory
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
    if (argc != 4) {
        fprintf(stderr, "usage: softhost MEMORY JOB OUT\n");
        return 2;
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
