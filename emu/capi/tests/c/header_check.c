/* header_check.c: a C host of ssnail.h (built and run by tests/c_interface.rs). Prints what it
 * reads; the Rust test compares it with the register map and the attic rules. */
#include <stdio.h>
#include "ssnail.h"

int main(void) {
    ssnail_t *none = ssnail_create(0, 0, 130e6, 40.5e6);
    ssnail_t *r3 = ssnail_create(8, 0, 130e6, 40.5e6);
    ssnail_t *r4 = ssnail_create(72, 0, 0, 40.5e6);   /* bandwidth <= 0: the default */
    if (none || !r3 || !r4) { printf("create failed\n"); return 1; }
    printf("id %02x %02x\n", ssnail_reg_read(r3, 0, 0), ssnail_reg_read(r4, 0, 0));
    printf("size %llu %llu\n", (unsigned long long)ssnail_mem_size(r3),
           (unsigned long long)ssnail_mem_size(r4));
    /* R4-R6: with SELSDRAM ($10) the CPU writes SSNAIL $8000000 + 5; without, HyperRAM =
     * SSNAIL $C000000 + 5 on a 72 MiB core. */
    ssnail_attic_write(r4, 5, 0x10, 0xAA, 10);
    ssnail_attic_write(r4, 5, 0x00, 0xBB, 20);
    printf("r4 %02x %02x\n", ssnail_attic_read(r4, 5, 0x10, 30), ssnail_attic_read(r4, 5, 0x00, 40));
    /* beyond 64 MiB with SELSDRAM: unpopulated */
    printf("r4 beyond %02x\n", ssnail_attic_read(r4, 64u << 20, 0x10, 50));
    ssnail_attic_write(r3, 5, 0x00, 0xCC, 60);
    printf("r3 %02x %02x\n", ssnail_attic_read(r3, 5, 0x10, 70), ssnail_attic_read(r3, 5, 0x00, 80));
    printf("jobs %llu\n", (unsigned long long)ssnail_jobs(r4));
    ssnail_destroy(r3);
    ssnail_destroy(r4);
    ssnail_destroy(NULL);
    return 0;
}
