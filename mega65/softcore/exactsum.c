/* exactsum.c: the exact sum of f32·f32 products (exactsum.h), rounded once to single.
 *
 * The accumulator is a little-endian two's-complement integer of XS_BYTES bytes counting units of
 * 2^−298, the value of the lowest bit of the smallest product (2^−149 · 2^−149). A product of
 * two finite singles is below 2^256, so it ends below bit 298 + 256 = 554; the 37 bits above
 * that and the sign bit hold any sum of fewer than 2^36 products without overflow.
 *
 * Adding a product: with the significands ma, mb (hidden bit included, subnormals with exponent
 * 1), the product's lowest bit is bit p = ea + eb − 2 of the accumulator. ma is shifted left by
 * p mod 8 before the multiplication, so the 55-bit product lands on whole bytes from byte p / 8
 * on: seven bytes are added (or subtracted), then the carry (borrow) runs up while it is set.
 *
 * Infinities and NaN follow ssnail_core::exact::ExactSum (emu/core/src/exact.rs): products that
 * are not finite are summed apart (NaN when one is NaN — including inf·0 — or when +inf and −inf
 * both occur, else that infinity) and then the finite products do not matter. */
#include "exactsum.h"

#define XS_BYTES 74
#define XS_PLUS_INF 1
#define XS_MINUS_INF 2
#define XS_NAN 4

static uint8_t acc[XS_BYTES];
static uint8_t special;

void xs_clear(void)
{
    uint8_t i;
    for (i = 0; i < XS_BYTES; ++i)
        acc[i] = 0;
    special = 0;
}

static sf_word xa, xb;
static uint8_t xea, xeb;
static uint16_t pos;

void xs_add_product(f32 a, f32 b)
{
    uint8_t i, neg, *d, *s;
    uint16_t t;
    xa.u = a;
    xb.u = b;
    xea = (uint8_t)((xa.b[3] << 1) | (xa.b[2] >> 7));
    xeb = (uint8_t)((xb.b[3] << 1) | (xb.b[2] >> 7));
    if (xea == 0xFF || xeb == 0xFF) {
        /* a non-finite product: NaN for a NaN operand or inf·0, else ±inf */
        if ((xea == 0xFF && (xa.u & 0x7FFFFFUL)) || (xeb == 0xFF && (xb.u & 0x7FFFFFUL)) ||
            !(xa.u & 0x7FFFFFFFUL) || !(xb.u & 0x7FFFFFFFUL))
            special |= XS_NAN;
        else
            special |= ((xa.b[3] ^ xb.b[3]) & 0x80) ? XS_MINUS_INF : XS_PLUS_INF;
        return;
    }
    if (!(xa.u & 0x7FFFFFFFUL) || !(xb.u & 0x7FFFFFFFUL))
        return; /* a zero product adds nothing */
    /* the significands with the hidden bit, subnormals with exponent 1 */
    neg = (xa.b[3] ^ xb.b[3]) & 0x80;
    xa.b[3] = 0;
    xb.b[3] = 0;
    if (xea) {
        xa.b[2] |= 0x80;
    } else
        xea = 1;
    if (xeb) {
        xb.b[2] |= 0x80;
    } else
        xeb = 1;
    pos = (uint16_t)xea + xeb - 2;
    xa.u <<= (uint8_t)pos & 7;
    sf_mul32(xa.u, xb.u);
    d = acc + (pos >> 3);
    s = sf_plo.b;
    if (!neg) {
        t = 0;
        for (i = 0; i < 7; ++i) {
            if (i == 4)
                s = sf_phi.b;
            t += (uint16_t)*d + *s++;
            *d++ = (uint8_t)t;
            t >>= 8;
        }
        /* carry up: at most to the top byte, where a sum in range never carries out */
        while (t && d < acc + XS_BYTES) {
            if (++*d)
                t = 0;
            ++d;
        }
    } else {
        t = 0; /* borrow */
        for (i = 0; i < 7; ++i) {
            if (i == 4)
                s = sf_phi.b;
            t = (uint16_t)*d - *s++ - t;
            *d++ = (uint8_t)t;
            t = (t >> 8) & 1;
        }
        while (t && d < acc + XS_BYTES) {
            if ((*d)--)
                t = 0;
            ++d;
        }
    }
}

static uint8_t mag[XS_BYTES];

f32 xs_round(void)
{
    uint8_t neg, h, i, sh, sticky, below;
    uint16_t t;
    sf_word top;
    int16_t e;
    if (special) {
        if ((special & XS_NAN) || special == (XS_PLUS_INF | XS_MINUS_INF))
            return SF_NAN;
        return special == XS_PLUS_INF ? SF_INF : (SF_INF | 0x80000000UL);
    }
    /* magnitude of the two's-complement sum */
    neg = acc[XS_BYTES - 1] >> 7;
    if (neg) {
        t = 1;
        for (i = 0; i < XS_BYTES; ++i) {
            t += (uint8_t)~acc[i];
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
