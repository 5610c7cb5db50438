/* softfloat_test: the software core's single arithmetic (softfloat.c, exactsum.c) as a small MEGA65
 * test PRG (softfloat_test.cfg, crt0.s). The test pokes operation records (softfloat_ops.h, 12 bytes) at
 * SFM65_RECS and their number at SFM65_COUNT, runs the PRG, and reads each record's 4-byte result
 * back from the record's first 4 bytes. The exit value is 0, or 1 for an unknown operation.
 * For mega65/tests/softfloat_in_headless_mega65.rs, which has the same two addresses. */
#include <stdint.h>
#include "softfloat_ops.h"

#define SFM65_COUNT (*(volatile uint16_t *)0x6FFE)
#define SFM65_RECS ((uint8_t *)0x7000)

int main(void)
{
    static uint16_t n;
    static uint8_t *r;
    static uint8_t ok;
    r = SFM65_RECS;
    for (n = SFM65_COUNT; n; --n) {
        *(uint32_t *)r = sf_op(r[0], *(uint32_t *)(r + 4), *(uint32_t *)(r + 8), &ok);
        if (!ok)
            return 1;
        r += 12;
    }
    return 0;
}
