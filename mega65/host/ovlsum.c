/* ovlsum OVL PRG ADDRESS: writes the check sums of the overlay file OVL (the chat's overlay,
 * linker/mega65.cfg) into the PRG at the CPU address ADDRESS (ovl_sums in src/ovl.s; build.mk
 * reads it from ld65's label file): s1 then s2, 16 bits each, little-endian, where for every
 * byte b of OVL in order s1 += b and then s2 += s1 (mod 65536), the sums of the software core's
 * file (coresum.c). The program loads OVL into chip RAM and compares (src/ovlload.c) before it
 * runs any of it. */
#include <stdio.h>
#include <stdlib.h>

static unsigned char ovl[1 << 16], prg[1 << 16];

static unsigned long slurp(const char *path, unsigned char *buf, unsigned long size) {
    unsigned long n;
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(1);
    }
    n = fread(buf, 1, size, f);
    fclose(f);
    if (n == size) {
        fprintf(stderr, "ovlsum: %s: larger than %lu bytes\n", path, size - 1);
        exit(1);
    }
    return n;
}

int main(int argc, char **argv) {
    unsigned long n_ovl, n_prg, addr, load, off, i;
    unsigned s1 = 0, s2 = 0;
    char *end;
    FILE *f;
    if (argc != 4) {
        fprintf(stderr, "usage: ovlsum OVL PRG ADDRESS\n");
        return 2;
    }
    n_ovl = slurp(argv[1], ovl, sizeof ovl);
    n_prg = slurp(argv[2], prg, sizeof prg);
    addr = strtoul(argv[3], &end, 0);
    load = n_prg >= 2 ? prg[0] | (unsigned long)prg[1] << 8 : 0;
    off = addr - load + 2;
    if (*argv[3] == 0 || *end || n_prg < 2 || addr < load || off + 4 > n_prg) {
        fprintf(stderr, "ovlsum: %s: address %s is not inside the program (%lu bytes from $%04lX)\n",
                argv[2], argv[3], n_prg, load);
        return 1;
    }
    for (i = 0; i < n_ovl; ++i) {
        s1 = (s1 + ovl[i]) & 0xFFFF;
        s2 = (s2 + s1) & 0xFFFF;
    }
    prg[off] = s1 & 0xFF;
    prg[off + 1] = s1 >> 8;
    prg[off + 2] = s2 & 0xFF;
    prg[off + 3] = s2 >> 8;
    if (!(f = fopen(argv[2], "wb")) || fwrite(prg, 1, n_prg, f) != n_prg || fclose(f)) {
        perror(argv[2]);
        return 1;
    }
    return 0;
}
