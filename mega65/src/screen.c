/* screen.c: 80x25 text screen at $0800 and colour RAM at $FF80000, scrolled with DMA. */
#include <stdarg.h>
#include <stdio.h>
#include "dma.h"
#include "far.h"
#include "hyppo.h"
#include "io.h"
#include "screen.h"

uint8_t scr_x, scr_y, scr_col = COL_LGREEN;

/* The character set: glyph n = ASCII n for 32-126 (font.c), blank for the rest; glyph n + 128 is
 * glyph n reversed (the cursor and the browser's highlight). Without it the glyphs would be the
 * ROM's PETSCII set, where _ { } | ~ \ ` are graphics or other characters. The VIC-IV reads glyph
 * n's row r at CHARPTR + 8n + r ($D068-$D06A, viciv.vhdl lines 2784-2793 and 4474-4483); CHARPTR
 * in $1000-$1FFF or $9000-$9FFF would read the internal character ROM instead (lines
 * 4525-4530), and a $D018 write would overwrite its bits 0-13 (lines 2359-2364), so the set
 * lives in chip RAM (CHARSET, chipram.h) and $D018 is left alone. */
#pragma bss-name(push, "HIBSS")
static uint8_t part[256];
#pragma bss-name(pop)

static void charset_init(void) {
    uint8_t half, k, i;
    for (half = 0; half < 2; ++half) {     /* plain glyphs at +0, reversed at +$400 */
        for (k = 0; k < 4; ++k) {          /* 32 glyphs per part */
            i = 0;
            do {
                uint16_t g = k * 256 + i;  /* byte within the 1 KB half */
                uint8_t v = 0;
                if (g >= 32 * 8 && g < 127 * 8) v = far_peek(FONT_STAGE + (g - 32 * 8));   /* font.c, via crt0 */
                part[i] = half ? (uint8_t)~v : v;
            } while (++i);
            dma_copy(CHARSET + half * 0x400UL + k * 256, (uint32_t)(uint16_t)part, 256);
        }
    }
    POKE(VIC_CHARPTR, (uint8_t)CHARSET);
    POKE(VIC_CHARPTR + 1, (uint8_t)(CHARSET >> 8));
    POKE(VIC_CHARPTR + 2, (uint8_t)(CHARSET >> 16));
}

/* the VIC-IV registers scr_init writes (their offsets from IO_FIRST), and BASIC's values of them
 * for /quit (scr_restore) */
#define VIC(reg) (uint8_t)((reg) - IO_FIRST)
static const uint8_t vic_regs[] = {
    VIC(VIC_HOTREG),      VIC(VIC_BORDER),      VIC(VIC_BACKGROUND),  VIC(VIC_CHARPTR),
    VIC(VIC_CHARPTR + 1), VIC(VIC_CHARPTR + 2), VIC(VIC_CONTROL_B),   VIC(VIC_LINESTEP),
    VIC(VIC_LINESTEP + 1), VIC(VIC_CHRCOUNT),   VIC(VIC_SCRNPTR),     VIC(VIC_SCRNPTR + 1),
    VIC(VIC_SCRNPTR + 2), VIC(VIC_SCRNPTR_HIGH), VIC(VIC_DISPROWS),   VIC(VIC_COLPTR),
    VIC(VIC_COLPTR + 1)};
static uint8_t vic_saved[sizeof vic_regs];

void scr_restore(void) {
    uint8_t i;
    for (i = sizeof vic_regs; i--;) POKE(IO_FIRST + vic_regs[i], vic_saved[i]);
}

void scr_init(void) {
    uint8_t i;
    for (i = 0; i < sizeof vic_regs; ++i) vic_saved[i] = PEEK(IO_FIRST + vic_regs[i]);
    POKE(VIC_HOTREG, PEEK(VIC_HOTREG) & (uint8_t)~VIC_HOTREG_ON);   /* no "hot" VIC-II registers resetting VIC-IV ones */
    POKE(VIC_BORDER, 0);
    POKE(VIC_BACKGROUND, 0);
    charset_init();
    POKE(VIC_CONTROL_B, PEEK(VIC_CONTROL_B) | (VIC_CONTROL_B_H640 | VIC_CONTROL_B_FAST));   /* 80 columns */
    POKE(VIC_CONTROL_B, PEEK(VIC_CONTROL_B) & (uint8_t)~VIC_CONTROL_B_V400);             /* V200: 25 rows */
    POKE(VIC_LINESTEP, SCR_W);           /* bytes per logical row */
    POKE(VIC_LINESTEP + 1, 0);
    POKE(VIC_CHRCOUNT, SCR_W);           /* characters per row */
    POKE(VIC_SCRNPTR, 0x00);             /* screen RAM at $0800 */
    POKE(VIC_SCRNPTR + 1, 0x08);
    POKE(VIC_SCRNPTR + 2, 0x00);
    POKE(VIC_SCRNPTR_HIGH, PEEK(VIC_SCRNPTR_HIGH) & 0xF0);
    POKE(VIC_DISPROWS, SCR_H);           /* 25 text rows, also after an 80x50 BASIC screen */
    POKE(VIC_COLPTR, 0);                 /* colour RAM offset 0 */
    POKE(VIC_COLPTR + 1, 0);
    scr_clear();
}

void scr_clear(void) {
    dma_fill(0x0800, 0x20, SCR_W * SCR_H);
    dma_fill(COLOUR_RAM, scr_col, SCR_W * SCR_H);
    scr_x = scr_y = 0;
}

void scr_at(uint8_t x, uint8_t y) {
    scr_x = x;
    scr_y = y;
}

uint8_t scr_code(char ch) {
    uint8_t c = (uint8_t)ch;
    if (c >= 32 && c <= 126) return c;   /* our character set is ASCII */
    return '?';
}

static void scroll(void) {
    dma_copy(0x0800, 0x0800 + SCR_W, SCR_W * (SCR_H - 1));
    dma_fill(0x0800 + SCR_W * (SCR_H - 1), 0x20, SCR_W);
    dma_copy(COLOUR_RAM, COLOUR_RAM + SCR_W, SCR_W * (SCR_H - 1));
    dma_fill(COLOUR_RAM + SCR_W * (SCR_H - 1), scr_col, SCR_W);
}

static void newline(void) {
    scr_x = 0;
    if (++scr_y == SCR_H) {
        scroll();
        scr_y = SCR_H - 1;
    }
}

void scr_draw(char c) {
    uint16_t o;
    if (c == '\n') {
        newline();
        return;
    }
    if (scr_x >= SCR_W) newline();
    o = scr_y * SCR_W + scr_x;
    SCREEN[o] = scr_code(c);
    far_poke(COLOUR_RAM + o, scr_col);
    ++scr_x;
}

void scr_log(char c) { serial_putc(c); }

uint8_t scr_quiet;

void scr_putc(char c) {
    scr_draw(c);
    if (!scr_quiet) scr_log(c);
}

void scr_puts(const char *s) {
    while (*s) scr_putc(*s++);
}

#pragma bss-name(push, "HIBSS")
static char fmt_buf[160];
#pragma bss-name(pop)
void scr_printf(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(fmt_buf, sizeof fmt_buf, fmt, ap);
    va_end(ap);
    scr_puts(fmt_buf);
}

void scr_clear_row(uint8_t y) {
    dma_fill(0x0800 + y * SCR_W, 0x20, SCR_W);
    dma_fill(COLOUR_RAM + y * SCR_W, scr_col, SCR_W);
}

void scr_reverse_row(uint8_t y, uint8_t on) {
    uint8_t *p = SCREEN + y * SCR_W, i;
    for (i = 0; i < SCR_W; ++i)
        p[i] = on ? (p[i] | 0x80) : (p[i] & 0x7F);
}

/* word wrap: a word is held back until we know whether it fits on the line */
static char word[SCR_W];
static uint8_t word_len;

void wrap_flush(void) {
    uint8_t i;
    if (word_len && scr_x + word_len > SCR_W && scr_x) {
        scr_draw('\n');   /* the line break is display only: the transcript keeps the text */
    }
    for (i = 0; i < word_len; ++i) scr_putc(word[i]);
    word_len = 0;
}

void wrap_putc(char c) {
    if (c == ' ' || c == '\n' || c == '\t') {
        wrap_flush();
        if (c == '\n') scr_putc('\n');
        else {
            if (scr_x < SCR_W) scr_draw(' ');   /* a space at the line end is not drawn */
            scr_log(c);
        }
        return;
    }
    if (word_len == SCR_W) wrap_flush();
    word[word_len++] = c;
}
