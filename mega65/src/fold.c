/* fold.c: the ASCII folder of spec §2.5 (UTF-8 decoded across token boundaries). */
#include "fold.h"

static uint32_t cp;
static uint8_t need;

void fold_reset(void) { need = 0; }

static void outs(const char *s, void (*out)(char)) { while (*s) out(*s++); }

/* base letters for U+00C0..U+00FF */
static const char latin1[] =
    "AAAAAAACEEEEIIIIDNOOOOOxOUUUUYTs"
    "aaaaaaaceeeeiiiidnooooo/ouuuuyty";

static void fold(uint32_t c, void (*out)(char)) {
    if (c == 9 || c == 10 || (c >= 32 && c <= 126)) { out((char)c); return; }
    if (c < 0x80 || (c >= 0x80 && c < 0xA0)) { out('?'); return; }
    switch (c) {
    case 0x2018: case 0x2019: case 0x201A: case 0x201B: case 0x2032: out('\''); return;
    case 0x201C: case 0x201D: case 0x201E: case 0x2033: case 0xAB: case 0xBB: out('"'); return;
    case 0x2010: case 0x2011: case 0x2012: case 0x2013: case 0x2014: case 0x2015: case 0x2212:
        out('-'); return;
    case 0x2026: outs("...", out); return;
    case 0xA0: out(' '); return;
    case 0xD7: out('x'); return;
    case 0xDF: outs("ss", out); return;
    case 0xE6: outs("ae", out); return;
    case 0xC6: outs("AE", out); return;
    case 0x153: outs("oe", out); return;
    case 0x152: outs("OE", out); return;
    case 0xF8: out('o'); return;
    case 0xD8: out('O'); return;
    case 0x2022: out('*'); return;
    case 0xB7: out('.'); return;
    case 0x2122: outs("(TM)", out); return;
    case 0xA9: outs("(c)", out); return;
    case 0xAE: outs("(R)", out); return;
    }
    if (c >= 0xC0 && c <= 0xFF) { out(latin1[(uint8_t)(c - 0xC0)]); return; }
    out('?');
}

void fold_byte(uint8_t b, void (*out)(char)) {
    if (need) {
        if ((b & 0xC0) == 0x80) {
            cp = (cp << 6) | (b & 0x3F);
            if (--need == 0) fold(cp, out);
            return;
        }
        out('?');
        need = 0;
    }
    if (b < 0x80) fold(b, out);
    else if (b >= 0xC0 && b <= 0xDF) { cp = b & 0x1F; need = 1; }
    else if (b >= 0xE0 && b <= 0xEF) { cp = b & 0x0F; need = 2; }
    else if (b >= 0xF0 && b <= 0xF7) { cp = b & 0x07; need = 3; }
    else out('?');
}
