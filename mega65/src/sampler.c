/* sampler.c: sampling on the MEGA65 (spec §7.6): the settings, their derived constants, the
 * generator's seeding and the commands. The choice itself is smpcore.s. */
#include <stdint.h>
#include <string.h>
#include "sampler.h"
#include "sampler_tables.h"
#include "mega65_io.h"
#include "screen.h"

#define MULA (*(volatile uint32_t *)MATH_MULTINA)
#define MULB (*(volatile uint32_t *)MATH_MULTINB)
#define MUL32 (*(volatile uint32_t *)MATH_MULTOUT)   /* low 32 bits of A x B (spec §M9) */

uint16_t smp_temp = 800;
static uint16_t pen = 1150;
uint8_t smp_topk = 40, smp_pen_on;
static uint32_t seed;
/* read by smpcore.s */
uint32_t smp_state, smp_invt, smp_pendiv, smp_penmul, smp_out, smp_nout, smp_tokaddr;
const uint16_t *smp_tab_hi = smp_exp_hi, *smp_tab_lo = smp_exp_lo;

static void derive(void) {
    uint32_t r;
    smp_pen_on = pen != 1000;
    smp_invt = smp_temp ? 65536000UL / smp_temp : 0;
    /* floor(2^31 * 1000 / pen) as long division in two 16-bit steps */
    smp_pendiv = 32768000UL / pen;
    r = 32768000UL % pen;
    smp_pendiv = (smp_pendiv << 16) + (r << 16) / pen;
    smp_penmul = ((uint32_t)pen * 65536UL + 500) / 1000;
}

/* state = murmur3's fmix32(seed), or $9E3779B9 when that is 0 */
static void set_seed(uint32_t s) {
    seed = s;
    s ^= s >> 16;
    MULA = s;
    MULB = 0x85EBCA6BUL;
    s = MUL32;
    s ^= s >> 13;
    MULA = s;
    MULB = 0xC2B2AE35UL;
    s = MUL32;
    s ^= s >> 16;
    smp_state = s ? s : 0x9E3779B9UL;
}

void smp_greedy(void) {
    smp_temp = 0;
    pen = 1000;
}

void smp_init(uint32_t out, uint32_t n, uint32_t tokens) {
    smp_out = out;
    smp_nout = n > 65536UL ? 0 : n;   /* more output rows: no candidate, the ARGMAX stays */
    smp_tokaddr = tokens;
    derive();
    /* until /seed: CIA 1's timers and the raster line */
    set_seed(*(volatile uint32_t *)CIA1_TALO ^ ((uint32_t)*(volatile uint8_t *)VIC_RASTER << 24));
}

static void put_milli(const char *name, uint16_t v) {
    uint16_t f = v % 1000;
    scr_printf("%s %u.", name, v / 1000);
    if (!f) scr_putc('0');
    while (f) {
        scr_putc('0' + f / 100);
        f = f % 100 * 10;
    }
}

void smp_show(void) {
    scr_putc('[');
    if (smp_temp) {
        put_milli("sampling: temperature", smp_temp);
        scr_printf(", top-k %u,", smp_topk);
        put_milli(" repetition penalty", pen);
    } else
        scr_puts("greedy (temperature 0), as the v1 hardware");
    scr_printf("; seed %lu]\n", seed);
}

/* "1.15" -> 1150 (the fourth decimal rounds, later ones are ignored); "7" -> 7000 */
uint32_t smp_num;
uint8_t smp_parse(const char *s, uint8_t milli) {
    uint16_t f = 0;
    uint8_t nd = 0, any = 0, d;
    smp_num = 0;
    for (; (d = *s - '0') <= 9; ++s, any = 1) {
        if (smp_num > 429496729UL || (smp_num == 429496729UL && d > 5)) return 0;
        smp_num = smp_num * 10 + d;
    }
    if (milli) {
        if (smp_num > 65UL) return 0;
        if (*s == '.')
            for (++s; (d = *s - '0') <= 9; ++s, any = 1)
                if (nd < 4) { f = f * 10 + d; ++nd; }
        for (; nd < 4; ++nd) f *= 10;
        smp_num = smp_num * 1000 + (f + 5) / 10;
    }
    return any && !*s;
}

uint8_t smp_command(const char *l) {
    if (!strncmp(l, "/temp ", 6)) {
        if (!smp_parse(l + 6, 1) || smp_num > SMP_MAX_MILLI) goto bad;
        smp_temp = (uint16_t)smp_num;
    } else if (!strncmp(l, "/penalty ", 9)) {
        if (!smp_parse(l + 9, 1) || smp_num < 1000 || smp_num > SMP_MAX_MILLI) goto bad;
        pen = (uint16_t)smp_num;
    } else if (!strncmp(l, "/topk ", 6)) {
        if (!smp_parse(l + 6, 0) || smp_num < 1 || smp_num > SMP_MAX_TOP_K) goto bad;
        smp_topk = (uint8_t)smp_num;
    } else if (!strncmp(l, "/seed ", 6)) {
        if (!smp_parse(l + 6, 0)) goto bad;
        set_seed(smp_num);
    } else
        return 0;
    derive();
    smp_show();
    return 1;
bad:
    scr_puts("[temperature 0-60 (0 = greedy), top-k 1-64, penalty 1-60, seed 0-4294967295]\n");
    return 1;
}
