/* tokhost IMAGE | tokhost --mem MEMORY: encode each NUL-terminated record of stdin with the MEGA65 tokenizer code (first = true) and
 * print the ids comma-separated, one line per input line (--mem: a memory dump starting at
 * $8000000 instead of an image file). With --fold, instead print stdin's
 * bytes through the ASCII folder. */
#include <stdio.h>
#include <string.h>
#include "far.h"
#include "tokenizer.h"
#include "fold.h"

int far_host_load(const char *path);
int far_host_load_mem(const char *path);

/* the MEGA65 keyboard types ASCII: each non-ASCII character (not byte) becomes '?' */
static void ascii_only(char *s) {
    char *o = s;
    for (; *s; ++s) {
        unsigned char c = (unsigned char)*s;
        if (c < 0x80) *o++ = *s;
        else if (c >= 0xC0) *o++ = '?';
    }
    *o = 0;
}
static void put(char c) { putchar(c); }

int main(int argc, char **argv) {
    static char line[4096];
    static uint32_t ids[4096];
    int i, n, c;
    if (argc == 2 && !strcmp(argv[1], "--fold")) {
        fold_reset();
        while ((c = getchar()) != EOF) fold_byte((uint8_t)c, put);
        return 0;
    }
    if (argc == 3 && !strcmp(argv[1], "--mem") ? !far_host_load_mem(argv[2])
                                                : argc != 2 || !far_host_load(argv[1])) {
        fprintf(stderr, "tokhost: %s: cannot read an SSNAIL image\n", argv[argc - 1]);
        return 1;
    }
    if (!tok_init()) { fprintf(stderr, "tokhost: bad tokenizer block\n"); return 1; }
    /* records are separated by NUL bytes, so a line may hold \n */
    for (;;) {
        size_t k = 0;
        while ((c = getchar()) != EOF && c != 0 && k + 1 < sizeof line) line[k++] = (char)c;
        if (c == EOF && k == 0) break;
        line[k] = 0;
        ascii_only(line);
        n = tok_encode(line, 1, ids, 4096);
        for (i = 0; i < n; ++i) printf(i ? ",%u" : "%u", (unsigned)ids[i]);
        if (n < 0) printf("overflow");
        putchar('\n');
    }
    return 0;
}
