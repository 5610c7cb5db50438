/* cosine.c: see cosine.h.
 *
 * 1. Block scaling: each float x_i = m_i 2^(e_i - 150) (m_i the 24-bit mantissa, subnormals
 *    normalised) becomes the integer v_i = round(m_i / 2^(E - e_i + 9)) for the largest
 *    exponent E, so the largest |v_i| lies in [2^14, 2^15]. The rounding error of each v_i is at most 1/2 of a unit, i.e.
 *    2^-15 of the largest component, so the whole error vector is at most sqrt(n) 2^-15 |max| <=
 *    sqrt(n) 2^-15 |x| long: 31 x 2^-15 = 0.00095 of |x| for n = 960 (the largest dimension
 *    the program takes), 0.0006 for MiniLM's 384.
 * 2. Normalising: |v| from the exact 64-bit sum of squares (two 32-bit halves) and an integer
 *    square root on the top 30-32 bits (relative error below 2^-15); q_i = round(v_i 2^15 / |v|),
 *    another <= 1/2 unit per component: at most sqrt(n) 2^-16 = 0.0005 of the unit length.
 * 3. The dot product of two unit vectors in Q15 is at most 2^30 in size (Cauchy-Schwarz), so it
 *    is summed exactly in 32 bits and scaled to thousandths with rounding.
 * A perturbation d of a unit vector changes a cosine by at most |d| (plus |d|^2), so two vectors
 * give at most 2 x (0.00095 + 0.0005 + 0.0001) = 0.0031 for n = 960 and 0.0022 for n = 384
 * before the printed rounding (0.0005); the tests check 0.005 on adversarial vectors (one huge
 * component, wide exponent spreads, tiny and subnormal values, alternating signs) and real MiniLM
 * embeddings. The old 10-bit version lost everything below 2^-10 of the largest component (and
 * truncated), up to 0.014 off. */
#include "cosine.h"

static uint16_t isqrt32(uint32_t v) {
    uint32_t r = 0, bit = 1UL << 30;
    while (bit > v) bit >>= 2;
    while (bit) {
        if (v >= r + bit) {
            v -= r + bit;
            r = (r >> 1) + bit;
        } else r >>= 1;
        bit >>= 2;
    }
    return (uint16_t)r;
}

/* component i as mantissa (bit 23 set) and exponent; subnormals normalised; 0 = zero */
static uint32_t mant;
static int16_t expo;
static uint8_t split(uint32_t b) {
    mant = b & 0x7FFFFFUL;
    expo = (int16_t)((b >> 23) & 0xFF);
    if (expo == 0) {
        if (!mant) return 0;
        expo = 1;
        while (!(mant & 0x800000UL)) {
            mant <<= 1;
            --expo;
        }
    } else mant |= 0x800000UL;
    return 1;
}

void emb_unit(uint16_t dim, uint32_t (*word)(uint16_t i), int16_t *out) {
    uint16_t i;
    int16_t maxe = -32767;
    uint8_t shift, any = 0;
    uint32_t b, lo = 0, hi = 0, sq, norm, x;
    int32_t v;
    for (i = 0; i < dim; ++i) out[i] = 0;
    for (i = 0; i < dim; ++i) {
        b = word(i);
        if (((b >> 23) & 0xFF) == 0xFF) return;   /* NaN or infinity: no usable direction */
        if (split(b) && expo > maxe) maxe = expo;
        any |= (b & 0x7FFFFFFFUL) != 0;
    }
    if (!any) return;
    /* pass 1: v_i into out (15 bits + sign at most: 2^15 itself is stored as 32767) and the
     * exact sum of squares */
    for (i = 0; i < dim; ++i) {
        b = word(i);
        if (!split(b)) continue;
        if (maxe - expo >= 16) continue;     /* under half a unit after scaling */
        shift = (uint8_t)(9 + (maxe - expo));
        x = (mant + (1UL << (shift - 1))) >> shift;
        if (x > 32767) x = 32767;
        sq = x * x;
        lo += sq;
        if (lo < sq) ++hi;
        out[i] = (b & 0x80000000UL) ? -(int16_t)x : (int16_t)x;
    }
    /* |v|: shift the 64-bit sum down (by an even count) to 32 bits, root, shift back */
    shift = 0;
    while (hi) {
        lo = (lo >> 2) | (hi << 30);
        hi >>= 2;
        ++shift;
    }
    norm = (uint32_t)isqrt32(lo) << shift;
    if (!norm) return;
    /* pass 2: q_i = round(v_i 2^15 / |v|), |v_i| <= |v| so |q_i| <= 2^15 (stored as 32767) */
    for (i = 0; i < dim; ++i) {
        v = out[i];
        if (!v) continue;
        x = ((uint32_t)(v < 0 ? -v : v) << 15) + (norm >> 1);
        x /= norm;
        if (x > 32767) x = 32767;
        out[i] = v < 0 ? -(int16_t)x : (int16_t)x;
    }
}

int16_t emb_cosine1000(const int16_t *a, const int16_t *b, uint16_t dim) {
    int32_t dot = 0;
    uint16_t i;
    uint32_t t;
    for (i = 0; i < dim; ++i) dot += (int32_t)a[i] * b[i];
    /* dot / 2^30 in thousandths, rounded: (|dot| / 2^10 rounded) x 1000 / 2^20 rounded */
    t = ((uint32_t)(dot < 0 ? -dot : dot) + 512) >> 10;
    t = (t * 1000 + (1UL << 19)) >> 20;
    if (t > 1000) t = 1000;
    return dot < 0 ? -(int16_t)t : (int16_t)t;
}
