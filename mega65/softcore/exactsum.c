/* exactsum.c: the exact sum of f32·f32 products (exactsum.h), rounded once to single.
 *
 * The accumulator is a little-endian two's-complement integer of XS_BYTES bytes counting units of
 * 2^−298, the value of the lowest bit of the smallest product (2^−149 · 2^−149). A product of
 * two finite singles is below 2^256, so it ends below bit 298 + 256 = 554; the 37 bits above
 * that and the sign bit hold any sum of fewer than 2^36 products without overflow.
 *
 * Adding a product (exactadd.c): the product's lowest bit is bit p = ea + eb − 2 of the
 * accumulator, ea and eb the operands' exponents (1 for subnormals).
 *
 * Infinities and NaN follow ssnail_core::exact::ExactSum (emu/core/src/exact.rs): products that
 * are not finite are summed apart (NaN when one is NaN — including inf·0 — or when +inf and −inf
 * both occur, else that infinity) and then the finite products do not matter. */
#include <string.h>
#include "exactsum.h"

uint8_t xs_acc[XS_BYTES];
#ifdef XS_ASM
const uint8_t *xs_tsrc = xs_acc; /* the accumulator xs_top reads: xs_acc, or xs_load's page */
#endif
#define acc xs_acc
uint8_t xs_special;
#define special xs_special

void xs_clear(void)
{
#ifdef XS_ASM
    /* exactsum65.s keeps the sum plus a bias B of $80 in every byte but the top one (xs_top takes
     * it off, modulo 2^592 like every addition here): a sum near zero then has bytes near $80
     * above its products, where a carry or borrow stops, instead of $00 or $FF, through which it
     * ran up to the top byte each time the sum changed sign */
    memset(acc, 0x80, XS_BYTES - 1);
    acc[XS_BYTES - 1] = 0;
    xs_tsrc = acc;
#else
    memset(acc, 0, XS_BYTES);
#endif
    special = 0;
}

#ifdef XS_ASM
void xs_load(const uint8_t *page)
{
    xs_tsrc = page + 1; /* xs_top reads the page itself */
    special = page[XR_SPEC];
}

uint8_t xs_spec(f32 a, f32 b)
{
    /* accumulate()'s rule for a product that is not finite: NaN when an operand is NaN or zero
     * (inf·0), else the infinity of the product's sign */
    static uint32_t m;
    m = a & 0x7FFFFFFFUL;
    if (m > SF_INF || m == 0)
        return XS_NAN;
    m = b & 0x7FFFFFFFUL;
    if (m > SF_INF || m == 0)
        return XS_NAN;
    return (a ^ b) & 0x80000000UL ? XS_MINUS_INF : XS_PLUS_INF;
}
#endif

static uint8_t neg;
static uint8_t h, i, sh, sticky, below;
static sf_word top;
static int16_t e;

#ifdef XS_ASM
/* exactsum65.s: the magnitude of the sum (the accumulator less its bias, see xs_clear) and its top
 * bytes as below, or 1 when the sum is 0 */
uint8_t xs_rneg, xs_rh, xs_rbelow, xs_rsticky;
sf_word xs_rtop;
uint8_t xs_top(void);
#else
static uint8_t mag[XS_BYTES];
static uint16_t t;
#endif

f32 xs_round(void)
{
    if (special) {
        if ((special & XS_NAN) || special == (XS_PLUS_INF | XS_MINUS_INF))
            return SF_NAN;
        return special == XS_PLUS_INF ? SF_INF : (SF_INF | 0x80000000UL);
    }
#ifdef XS_ASM
    if (xs_top())
        return SF_ZERO; /* an exact zero is +0 */
    neg = xs_rneg;
    h = xs_rh;
    top.u = xs_rtop.u;
    below = xs_rbelow;
    sticky = xs_rsticky;
#else
    /* magnitude of the two's-complement sum */
    neg = acc[XS_BYTES - 1] >> 7;
    if (neg) {
        t = 1;
        for (i = 0; i < XS_BYTES; ++i) {
            t += acc[i] ^ 0xFF;
            mag[i] = (uint8_t)t;
            t >>= 8;
        }
    } else
        for (i = 0; i < XS_BYTES; ++i)
            mag[i] = acc[i];
    h = XS_BYTES;
    do {
        if (h == 0)
            return SF_ZERO; /* an exact zero is +0 */
        --h;
    } while (mag[h] == 0);
    /* the top four bytes (zeros below byte 0), the byte below them, the rest as sticky */
    for (i = 0; i < 4; ++i)
        top.b[3 - i] = h >= i ? mag[h - i] : 0;
    below = h >= 4 ? mag[h - 4] : 0;
    sticky = 0;
    for (i = 0; i + 5 <= h; ++i)
        sticky |= mag[i];
#endif
    /* bring the leading 1 of top to bit 30: one place right, or up to 6 places left pulling
     * bits in from the byte below */
    e = 8 * (int16_t)h - 165;
    if (top.b[3] & 0x80) {
        sticky |= below | (top.b[0] & 1);
        top.u >>= 1;
        ++e;
    } else {
        sh = 0;
        for (i = top.b[3]; !(i & 0x40); i <<= 1)
            ++sh;
        if (sh) {
            top.u = (top.u << sh) | (uint8_t)(below >> (8 - sh));
            below <<= sh;
            e -= sh;
        }
        sticky |= below;
    }
    if (sticky)
        top.b[0] |= 1;
    return sf_round_pack(neg, e, top.u);
}
