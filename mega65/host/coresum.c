/* coresum FILE OFFSET: writes the software core file's check sums into its header at OFFSET
 * (mega65/include/softcore_abi.inc SC_HDR_SUM; build.mk reads the offset from the link's map file):
 * s1 then s2, 16 bits each, little-endian, where for every byte b of the file in order, with
 * the 4 bytes at OFFSET as 0, s1 += b and then s2 += s1 (mod 65536). The program checks them
 * (src/device.c dev_soft_load) before it runs any of the file. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    static unsigned char buf[1 << 20];
    unsigned long off, n, i;
    unsigned s1 = 0, s2 = 0;
    char *end;
    FILE *f;
    if (argc != 3) {
        fprintf(stderr, "usage: coresum FILE OFFSET\n");
        return 2;
    }
    off = strtoul(argv[2], &end, 0);
    if (!(f = fopen(argv[1], "rb"))) {
        perror(argv[1]);
        return 1;
    }
    n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    if (*argv[2] == 0 || *end || off + 4 > n || n == sizeof buf) {
        fprintf(stderr, "coresum: %s: offset %s is not inside the file (%lu bytes)\n", argv[1], argv[2], n);
        return 1;
    }
    for (i = 0; i < 4; ++i) buf[off + i] = 0;
    for (i = 0; i < n; ++i) {
        s1 = (s1 + buf[i]) & 0xFFFF;
        s2 = (s2 + s1) & 0xFFFF;
    }
    buf[off] = s1 & 0xFF;
    buf[off + 1] = s1 >> 8;
    buf[off + 2] = s2 & 0xFF;
    buf[off + 3] = s2 >> 8;
    if (!(f = fopen(argv[1], "wb")) || fwrite(buf, 1, n, f) != n || fclose(f)) {
        perror(argv[1]);
        return 1;
    }
    return 0;
}
