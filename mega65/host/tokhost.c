/* tokhost IMAGE: encode each line of stdin with the MEGA65 tokenizer code (first = true) and
 * print the ids comma-separated, one line per input line. With --fold, instead print stdin's
 * bytes through the ASCII folder. */
#include <stdio.h>
#include <string.h>
#include "far.h"
#include "tokenizer.h"
#include "fold.h"

int far_host_load(const char *path);
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
    if (argc != 2 || !far_host_load(argv[1])) {
        fprintf(stderr, "tokhost: %s: cannot read an SSNAIL image\n", argc > 1 ? argv[1] : "?");
        return 1;
    }
    if (!tok_init()) { fprintf(stderr, "tokhost: bad tokenizer block\n"); return 1; }
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\n")] = 0;
        n = tok_encode(line, 1, ids, 4096);
        for (i = 0; i < n; ++i) printf(i ? ",%u" : "%u", (unsigned)ids[i]);
        if (n < 0) printf("overflow");
        putchar('\n');
    }
    return 0;
}
