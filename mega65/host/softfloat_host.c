/* softfloat_host: the software core's single arithmetic (mega65/softcore/softfloat.c, exactsum.c) on the
 * PC. Reads 12-byte operation records (softfloat_ops.h) on stdin, writes each record's 4-byte result on
 * stdout, little-endian. For mega65/tests/softfloat_on_the_pc.rs. */
#include <stdio.h>
#include "softfloat_ops.h"

static uint32_t le32(const unsigned char *p)
{
    return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int main(void)
{
    unsigned char rec[12], out[4];
    unsigned long n = 0;
    size_t got;
    uint8_t ok;
    uint32_t r;
    while ((got = fread(rec, 1, sizeof rec, stdin)) == sizeof rec) {
        r = sf_op(rec[0], le32(rec + 4), le32(rec + 8), &ok);
        if (!ok || rec[1] || rec[2] || rec[3]) {
            fprintf(stderr, "softfloat_host: stdin: record %lu: unknown operation %u\n", n,
                    (unsigned)le32(rec));
            return 1;
        }
        out[0] = (unsigned char)r;
        out[1] = (unsigned char)(r >> 8);
        out[2] = (unsigned char)(r >> 16);
        out[3] = (unsigned char)(r >> 24);
        if (fwrite(out, 1, 4, stdout) != 4) {
            fprintf(stderr, "softfloat_host: stdout: write failed\n");
            return 1;
        }
        ++n;
    }
    if (got != 0) {
        fprintf(stderr, "softfloat_host: stdin: %u bytes after record %lu (records are 12 bytes)\n",
                (unsigned)got, n);
        return 1;
    }
    return 0;
}
