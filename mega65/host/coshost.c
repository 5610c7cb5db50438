/* coshost: the MEGA65 program's embedding cosine (cosine.c) built for the PC. Each stdin line is
 * "DIM A_1 .. A_DIM B_1 .. B_DIM" with the float32 bit patterns in hex; prints round(1000 x
 * cosine) as the MEGA65 computes it, one line each. */
#include <stdio.h>
#include <stdlib.h>
#include "cosine.h"

#define MAX 4096
static uint32_t words[MAX];
static int16_t a[MAX], b[MAX];
static uint32_t word(uint16_t i) { return words[i]; }

int main(void) {
    unsigned dim, i, k;
    unsigned long w;
    while (scanf("%u", &dim) == 1) {
        if (dim == 0 || dim > MAX) { fprintf(stderr, "coshost: dimension %u\n", dim); return 1; }
        for (k = 0; k < 2; ++k) {
            for (i = 0; i < dim; ++i) {
                if (scanf("%lx", &w) != 1) { fprintf(stderr, "coshost: short line\n"); return 1; }
                words[i] = (uint32_t)w;
            }
            emb_unit((uint16_t)dim, word, k ? b : a);
        }
        printf("%d\n", emb_cosine1000(a, b, (uint16_t)dim));
    }
    return 0;
}
