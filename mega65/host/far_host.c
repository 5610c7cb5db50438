/* far_host.c: far.h over an image file, for testing the MEGA65 tokenizer and folder on the PC.
 * The file's header is at $8000000 and its payload at the header's load address ($64),
 * exactly where the loader puts them; everything else reads as zero. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "far.h"
#include "imgmem.h"
#include "ssnail_regs.h"

static uint8_t *img;
static long img_len;
static uint32_t load_base;

/* The whole file into img/img_len. */
static int read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    int ok;
    if (!f) return 0;
    fseek(f, 0, SEEK_END);
    img_len = ftell(f);
    fseek(f, 0, SEEK_SET);
    img = malloc(img_len);
    ok = fread(img, 1, img_len, f) == (size_t)img_len;
    fclose(f);
    return ok;
}

int far_host_load(const char *path) {
    if (!read_file(path)) return 0;
    if (img_len < IMG_HEADER_LEN || memcmp(img + H_MAGIC, IMG_MAGIC, 4)) return 0;
    load_base = img[H_LOAD_BASE] | img[H_LOAD_BASE + 1] << 8 | img[H_LOAD_BASE + 2] << 16 |
                (uint32_t)img[H_LOAD_BASE + 3] << 24;
    if (!load_base) load_base = IMG_BASE + IMG_HEADER_LEN;
    /* the image's memory, as the MEGA65 loader sets it (header $38) */
    img_top = IMG_BASE + (img[H_MEM_NEEDED] | img[H_MEM_NEEDED + 1] << 8 | img[H_MEM_NEEDED + 2] << 16 |
                          (uint32_t)img[H_MEM_NEEDED + 3] << 24);
    return 1;
}

static int raw;
int far_host_load_mem(const char *path) {
    if (!read_file(path)) return 0;
    raw = 1;
    img_top = IMG_BASE + (uint32_t)img_len;   /* the dump is the image's memory */
    return 1;
}

uint8_t far_peek(uint32_t a) {
    a &= 0x0FFFFFFF;
    if (raw) return a >= IMG_BASE && a - IMG_BASE < (uint32_t)img_len ? img[a - IMG_BASE] : 0;
    if (a >= IMG_BASE && a < IMG_BASE + IMG_HEADER_LEN) return img[a - IMG_BASE];
    if (a >= load_base && a - load_base + IMG_HEADER_LEN < (uint32_t)img_len)
        return img[a - load_base + IMG_HEADER_LEN];
    return 0;
}
uint16_t far_peek16(uint32_t a) { return far_peek(a) | far_peek(a + 1) << 8; }
uint32_t far_peek32(uint32_t a) { return far_peek16(a) | (uint32_t)far_peek16(a + 2) << 16; }
void far_poke(uint32_t a, uint8_t v) { (void)a; (void)v; }
int8_t far_cmp(uint32_t a, const uint8_t *k, uint8_t n) {
    uint8_t i, b;
    for (i = 0; i < n; ++i) {
        b = far_peek(a + i);
        if (b != k[i]) return b < k[i] ? -1 : 1;
    }
    return 0;
}
