/* exactadd.c: adding one f32·f32 product to the exact accumulator (exactsum.h, exactsum.c).
 *
 * Adding a product: with the significands ma, mb (hidden bit included, subnormals with exponent
 * 1), the product's lowest bit is bit p = ea + eb − 2 of the accumulator. ma is shifted left by
 * p mod 8 before the multiplication, so the 55-bit product lands on whole bytes from byte p / 8
 * on: seven bytes are added (or subtracted), then the carry (borrow) runs up while it is set.
 * Products that are not finite go to the special bits (xs_special) instead.
 *
 * Apart from exactsum.c because the software core's cc65 builds add products in exactsum65.s
 * and do not link it (mega65/build.mk); the PC builds, the softfloat tests and -DSC_C_GEMV do. */
#include "exactsum.h"

#define acc xs_acc
#define special xs_special

static sf_word xa, xb;
static uint8_t xea, xeb, j, c, k, neg;
static uint16_t pos, t;
#ifdef SF_HWMUL
#define PROD SF_MULTOUT
static const uint8_t pow2[8] = {1, 2, 4, 8, 16, 32, 64, 128};
#else
static uint8_t prod[8];
#define PROD prod
#endif

/* Operand kinds after unpacking */
#define XK_ZERO 0
#define XK_FINITE 1
#define XK_INF 2
#define XK_NAN 3
static uint8_t xka, xkb, e5;

/* An f32 in W unpacked in place: its significand with the hidden bit (bytes 2..0), exponent E
 * (1 for subnormals), kind K. The sign is taken before. */
#define UNPACK_F32(W, E, K)                                                                      \
    do {                                                                                         \
        E = (uint8_t)((W).b[3] << 1) | ((W).b[2] >> 7);                                          \
        (W).b[3] = 0;                                                                            \
        (W).b[2] &= 0x7F;                                                                        \
        if (E == 0xFF)                                                                           \
            K = ((W).b[2] | (W).w[0]) ? XK_NAN : XK_INF;                                         \
        else if (E) {                                                                            \
            (W).b[2] |= 0x80;                                                                    \
            K = XK_FINITE;                                                                       \
        } else if ((W).b[2] | (W).w[0]) {                                                        \
            E = 1;                                                                               \
            K = XK_FINITE;                                                                       \
        } else                                                                                   \
            K = XK_ZERO;                                                                         \
    } while (0)

static void accumulate(void);

void xs_add_product(f32 a, f32 b)
{
    xa.u = a;
    xb.u = b;
    neg = (xa.b[3] ^ xb.b[3]) & 0x80;
    UNPACK_F32(xa, xea, xka);
    UNPACK_F32(xb, xeb, xkb);
    accumulate();
}

void xs_add_product_f16(uint16_t w, f32 x)
{
    /* an F16 m·2^(e−25) (hidden bit in m) has the f32 scale m·2^(E−150) with E = e + 125;
     * a subnormal F16 m·2^−24 has E = 126. Its significand has 11 bits instead of 24. */
    e5 = (uint8_t)(w >> 10) & 0x1F;
    xb.u = x;
    neg = ((uint8_t)(w >> 8) ^ xb.b[3]) & 0x80;
    UNPACK_F32(xb, xeb, xkb);
    xa.w[1] = 0;
    xa.w[0] = w & 0x3FF;
    if (e5 == 0x1F)
        xka = xa.w[0] ? XK_NAN : XK_INF;
    else if (e5) {
        xa.b[1] |= 0x04;
        xea = e5 + 125;
        xka = XK_FINITE;
    } else if (xa.w[0]) {
        xea = 126;
        xka = XK_FINITE;
    } else
        xka = XK_ZERO;
    accumulate();
}

/* acc += (−1)^neg · xa·2^(xea−150) · xb·2^(xeb−150) */
static void accumulate(void)
{
    if (xka >= XK_INF || xkb >= XK_INF) {
        /* a non-finite product: NaN for a NaN operand or inf·0, else ±inf */
        if (xka == XK_NAN || xkb == XK_NAN || xka == XK_ZERO || xkb == XK_ZERO)
            special |= XS_NAN;
        else
            special |= neg ? XS_MINUS_INF : XS_PLUS_INF;
        return;
    }
    if (xka == XK_ZERO || xkb == XK_ZERO)
        return; /* a zero product adds nothing */
    pos = (uint16_t)xea + xeb - 2;
    k = (uint8_t)pos & 7;
#ifdef SF_HWMUL
    /* ma·2^k (at most 31 bits) by the multiplier too, then times mb */
    SF_MULTINA = xa.u;
    SF_MULTINB_B[0] = pow2[k];
    SF_MULTINB_B[1] = 0;
    SF_MULTINB_B[2] = 0;
    SF_MULTINB_B[3] = 0;
    SF_MULTINA = SF_MULTOUT_LO;
    SF_MULTINB = xb.u;
#else
    xa.u <<= k;
    sf_mul32(xa.u, xb.u);
    for (j = 0; j < 4; ++j) {
        prod[j] = sf_plo.b[j];
        prod[j + 4] = sf_phi.b[j];
    }
#endif
    /* add (subtract) the 7 product bytes from byte pos / 8 on, then the carry (borrow) */
    j = (uint8_t)(pos >> 3);
    c = 0;
    if (!neg) {
        for (k = 0; k < 7; ++k, ++j) {
            t = (uint16_t)acc[j] + PROD[k] + c;
            acc[j] = (uint8_t)t;
            c = (uint8_t)(t >> 8);
        }
        /* at most to the top byte, where a sum in range never carries out */
        while (c && j < XS_BYTES) {
            if (++acc[j])
                c = 0;
            ++j;
        }
    } else {
        /* acc − p = acc + ~p + 1 over the 7 bytes; no carry out is a borrow to pass up.
         * (^ 0xFF, not (uint8_t)~: cc65 2.19 drops that cast and adds ~p's high byte $FF) */
        c = 1;
        for (k = 0; k < 7; ++k, ++j) {
            t = (uint16_t)acc[j] + (PROD[k] ^ 0xFF) + c;
            acc[j] = (uint8_t)t;
            c = (uint8_t)(t >> 8);
        }
        if (!c)
            while (j < XS_BYTES && !acc[j]--)
                ++j;
    }
}

