/* softfloat.c: IEEE single arithmetic on bit patterns (softfloat.h), for cc65 and the PC.
 *
 * Every operation works on an unpacked form: a sign, a biased exponent and a significand placed
 * so that its leading 1 is bit 30 of a uint32_t ("sig"). Bits 29..7 are the rest of the 24-bit
 * significand, bits 6..0 are guard bits, and bit 0 is sticky: it is set when any nonzero bit
 * was shifted out below it. One function, round_pack, rounds such a value to nearest even and
 * packs it (subnormal results, overflow to infinity). The value of (e, sig) is sig·2^(e−157).
 *
 * For cc65 (16-bit int, no 64-bit type, slow stack locals) the working variables are file-scope
 * statics, bytes and 16-bit halves are reached through a little-endian union, and 32×32-bit
 * products come from the MEGA65 hardware multiplier (sf_mul32 below). Not reentrant: the core
 * calls these from one thread and no interrupt handler uses them. */
#include "softfloat.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "softfloat.c reaches bytes of a uint32_t through a union: little-endian only"
#endif

#define SIGN_BIT 0x80000000UL
#define ABS_MASK 0x7FFFFFFFUL
#define FRAC_MASK 0x007FFFFFUL
#define HIDDEN 0x00800000UL

/* ------------------------------------------------------------------------------------------ */
/* 32×32 → 64-bit unsigned product into sf_plo (low half) and sf_phi (high half).              */

sf_word sf_plo, sf_phi;

#if defined(__CC65__) && !defined(SF_PORTABLE_MUL)
/* MEGA65 multiplier (docs/spec/mega65.md §M9; emu/mega65/src/math.rs): inputs A at $D770-$D773
 * and B at $D774-$D777, their 64-bit product at $D778-$D77F, ready with no trigger. */
#define MULTINA (*(volatile uint32_t *)0xD770)
#define MULTINB (*(volatile uint32_t *)0xD774)
#define MULTOUT_LO (*(volatile uint32_t *)0xD778)
#define MULTOUT_HI (*(volatile uint32_t *)0xD77C)

void sf_mul32(uint32_t x, uint32_t y)
{
    MULTINA = x;
    MULTINB = y;
    sf_plo.u = MULTOUT_LO;
    sf_phi.u = MULTOUT_HI;
}
#else
/* Four 16×16 → 32-bit partial products, summed in 16-bit columns. */
static sf_word mx, my;
static uint32_t p00, p01, p10, p11, col;

void sf_mul32(uint32_t x, uint32_t y)
{
    mx.u = x;
    my.u = y;
    p00 = (uint32_t)mx.w[0] * my.w[0];
    p01 = (uint32_t)mx.w[0] * my.w[1];
    p10 = (uint32_t)mx.w[1] * my.w[0];
    p11 = (uint32_t)mx.w[1] * my.w[1];
    sf_plo.w[0] = (uint16_t)p00;
    col = (p00 >> 16) + (uint16_t)p01 + (uint16_t)p10;
    sf_plo.w[1] = (uint16_t)col;
    col = (col >> 16) + (p01 >> 16) + (p10 >> 16) + (uint16_t)p11;
    sf_phi.w[0] = (uint16_t)col;
    sf_phi.w[1] = (uint16_t)((col >> 16) + (p11 >> 16));
}
#endif

/* ------------------------------------------------------------------------------------------ */
/* Shifts and rounding                                                                         */

static sf_word sh;

/* x >> n, with bit 0 set when any 1 bit was shifted out (n may be anything). Whole bytes move
 * through the union; only the last 0..7 bits are shifted as a 32-bit value. */
static uint32_t shift_right_jam(uint32_t x, uint16_t n)
{
    uint8_t lost = 0;
    if (n >= 32)
        return x != 0;
    sh.u = x;
    while (n >= 8) {
        lost |= sh.b[0];
        sh.b[0] = sh.b[1];
        sh.b[1] = sh.b[2];
        sh.b[2] = sh.b[3];
        sh.b[3] = 0;
        n -= 8;
    }
    if (n) {
        lost |= sh.b[0] & (uint8_t)((1u << n) - 1);
        sh.u >>= n;
    }
    if (lost)
        sh.b[0] |= 1;
    return sh.u;
}

/* Shift sig left until bit 30 is set, lowering e; sig != 0. */
static uint32_t norm_sig;
static int16_t norm_e;
static void normalise(void)
{
    sh.u = norm_sig;
    while (sh.b[3] == 0 && sh.b[2] < 0x40) {
        sh.b[3] = sh.b[2];
        sh.b[2] = sh.b[1];
        sh.b[1] = sh.b[0];
        sh.b[0] = 0;
        norm_e -= 8;
    }
    while (sh.b[3] < 0x40) {
        sh.u <<= 1;
        --norm_e;
    }
    norm_sig = sh.u;
}

/* The nearest single to (−1)^neg · sig · 2^(e−157), ties to even. sig's leading 1 is bit 30,
 * or e == 1 and sig < 2^30 (a subnormal that needs no shift). sig != 0. */
f32 sf_round_pack(uint8_t neg, int16_t e, uint32_t sig)
{
    uint8_t rb;
    sf_word r;
    if (e >= 255)
        return neg ? (SF_INF | SIGN_BIT) : SF_INF;
    if (e <= 0) {
        /* subnormal (or zero after rounding): shift to the exponent of the smallest normal */
        sig = shift_right_jam(sig, (uint16_t)(1 - e));
        e = 0;
    }
    rb = (uint8_t)sig & 0x7F;
    r.u = (sig + 0x40) >> 7;
    if (rb == 0x40)
        r.b[0] &= 0xFE; /* exactly halfway: to even */
    /* A normal's hidden bit (bit 23) adds 1 to the exponent field, hence e − 1; a carry out of
     * the rounding moves to the next binade (or to infinity from e = 254). A subnormal's r has
     * no hidden bit, and rounding up to 2^23 gives the smallest normal. */
    if (e)
        r.u += (uint32_t)(e - 1) << 23;
    if (neg)
        r.b[3] |= 0x80;
    return r.u;
}

/* ------------------------------------------------------------------------------------------ */
/* Unpacking                                                                                   */

static sf_word ua, ub;      /* operands */
static uint8_t na, nb;      /* signs: 0 or 1 */
static int16_t ea, eb;      /* biased exponents (1 for subnormals) */
static uint32_t ma, mb;     /* significands with the hidden bit (none for subnormals) */
static uint8_t ka, kb;      /* kinds, below */
#define K_ZERO 0
#define K_FINITE 1
#define K_INF 2
#define K_NAN 3

/* exponent field from the two top bytes */
#define EXP_OF(w) ((uint8_t)(((w).b[3] << 1) | ((w).b[2] >> 7)))

static uint8_t unpack(sf_word *w, int16_t *e, uint32_t *m)
{
    uint8_t ex = EXP_OF(*w);
    sf_word f;
    f.u = w->u;
    f.b[3] = 0;
    f.b[2] &= 0x7F;
    if (ex == 0xFF)
        return f.u ? K_NAN : K_INF;
    if (ex == 0) {
        if (f.u == 0)
            return K_ZERO;
        *e = 1;
    } else {
        *e = ex;
        f.b[2] |= 0x80;
    }
    *m = f.u;
    return K_FINITE;
}

static void unpack2(f32 a, f32 b)
{
    ua.u = a;
    ub.u = b;
    na = ua.b[3] >> 7;
    nb = ub.b[3] >> 7;
    ka = unpack(&ua, &ea, &ma);
    kb = unpack(&ub, &eb, &mb);
}

/* Move a subnormal's leading 1 up to the hidden bit, lowering its exponent below 1. */
static void norm24(int16_t *e, uint32_t *m)
{
    if (*m & HIDDEN)
        return;
    norm_sig = *m << 7;
    norm_e = *e;
    normalise();
    *m = norm_sig >> 7;
    *e = norm_e;
}

/* ------------------------------------------------------------------------------------------ */
/* Arithmetic                                                                                  */

static uint32_t sig;
static int16_t e;

f32 sf_add(f32 a, f32 b)
{
    uint8_t t;
    /* order the operands by magnitude: |a| >= |b| */
    if ((a & ABS_MASK) < (b & ABS_MASK)) {
        f32 s = a;
        a = b;
        b = s;
    }
    unpack2(a, b);
    if (ka >= K_INF) {
        /* a is inf or NaN; b, no larger in magnitude, is NaN only if a is */
        if (ka == K_NAN || (kb == K_INF && na != nb))
            return SF_NAN;
        return a;
    }
    if (kb == K_ZERO) {
        if (ka == K_ZERO) /* the sum of two zeros is −0 only when both are −0 */
            return (na & nb) ? SF_NEG_ZERO : SF_ZERO;
        return a;
    }
    sig = ma << 7;
    mb = shift_right_jam(mb << 7, (uint16_t)(ea - eb));
    e = ea;
    if (na == nb) {
        sig += mb;
        if (sig & SIGN_BIT) {
            t = (uint8_t)sig & 1;
            sig = (sig >> 1) | t;
            ++e;
        }
    } else {
        sig -= mb;
        if (sig == 0)
            return SF_ZERO; /* x − x = +0 when rounding to nearest */
        if (sig < 0x40000000UL && e > 1) {
            /* cancellation: normalise, but not below the subnormal exponent 1 */
            norm_sig = sig;
            norm_e = e;
            normalise();
            if (norm_e < 1) {
                sig = norm_sig >> (1 - norm_e); /* exact: the bits shifted out are zeros */
                e = 1;
            } else {
                sig = norm_sig;
                e = norm_e;
            }
        }
    }
    return sf_round_pack(na, e, sig);
}

f32 sf_sub(f32 a, f32 b)
{
    return sf_add(a, b ^ SIGN_BIT);
}

f32 sf_mul(f32 a, f32 b)
{
    uint8_t neg;
    unpack2(a, b);
    neg = na ^ nb;
    if (ka >= K_INF || kb >= K_INF) {
        if (ka == K_NAN || kb == K_NAN || ka == K_ZERO || kb == K_ZERO)
            return SF_NAN; /* NaN operand, or inf × 0 */
        return neg ? (SF_INF | SIGN_BIT) : SF_INF;
    }
    if (ka == K_ZERO || kb == K_ZERO)
        return neg ? SF_NEG_ZERO : SF_ZERO;
    norm24(&ea, &ma);
    norm24(&eb, &mb);
    /* ma·mb is in [2^46, 2^48): its top 32 bits with the low 16 as sticky */
    sf_mul32(ma, mb);
    sh.w[0] = sf_plo.w[1];
    sh.w[1] = sf_phi.w[0];
    if (sf_plo.w[0])
        sh.b[0] |= 1;
    e = ea + eb - 127;
    if (sh.b[3] & 0x80) {
        sig = sh.u >> 1 | (sh.b[0] & 1);
        ++e;
    } else
        sig = sh.u;
    return sf_round_pack(neg, e, sig);
}

f32 sf_div(f32 a, f32 b)
{
    uint8_t neg, i;
    uint32_t q, r;
    unpack2(a, b);
    neg = na ^ nb;
    if (ka == K_NAN || kb == K_NAN)
        return SF_NAN;
    if (ka == K_INF) {
        if (kb == K_INF)
            return SF_NAN;
        return neg ? (SF_INF | SIGN_BIT) : SF_INF;
    }
    if (kb == K_ZERO) {
        if (ka == K_ZERO)
            return SF_NAN;
        return neg ? (SF_INF | SIGN_BIT) : SF_INF;
    }
    if (ka == K_ZERO || kb == K_INF)
        return neg ? SF_NEG_ZERO : SF_ZERO;
    norm24(&ea, &ma);
    norm24(&eb, &mb);
    e = ea - eb + 127;
    if (ma < mb) {
        ma <<= 1;
        --e;
    }
    /* restoring division: 26 quotient bits (the first is 1), the remainder as sticky */
    q = 0;
    r = ma;
    for (i = 0; i < 26; ++i) {
        q <<= 1;
        if (r >= mb) {
            r -= mb;
            q |= 1;
        }
        r <<= 1;
    }
    sig = q << 5;
    if (r)
        sig |= 1;
    return sf_round_pack(neg, e, sig);
}

f32 sf_sqrt(f32 a)
{
    uint8_t i;
    uint32_t rad, root, rem, trial;
    ua.u = a;
    na = ua.b[3] >> 7;
    ka = unpack(&ua, &ea, &ma);
    if (ka == K_NAN)
        return SF_NAN;
    if (ka == K_ZERO)
        return a; /* sqrt(±0) = ±0 */
    if (na)
        return SF_NAN;
    if (ka == K_INF)
        return a;
    norm24(&ea, &ma);
    /* a = ma·2^(E−23) with E = ea − 127; make E even, then the root of ma·2^27 (in [2^50,
     * 2^52)) has 26 bits, taken two radicand bits at a time from rad = ma·2^7 (top first) */
    e = ea - 127;
    if (e & 1) {
        ma <<= 1;
        --e;
    }
    rad = ma << 7;
    root = 0;
    rem = 0;
    for (i = 0; i < 26; ++i) {
        rem = (rem << 2) | (rad >> 30);
        rad <<= 2;
        trial = (root << 2) | 1;
        root <<= 1;
        if (rem >= trial) {
            rem -= trial;
            root |= 1;
        }
    }
    sig = root << 5;
    if (rem)
        sig |= 1;
    return sf_round_pack(0, (int16_t)(127 + e / 2), sig);
}

f32 sf_recip(f32 a)
{
    return sf_div(SF_ONE, a);
}

f32 sf_rsqrt(f32 a)
{
    return sf_div(SF_ONE, sf_sqrt(a));
}

/* ------------------------------------------------------------------------------------------ */
/* Conversions                                                                                 */

static f32 from_mag(uint8_t neg, uint32_t v)
{
    if (v == 0)
        return SF_ZERO;
    if (v & SIGN_BIT)
        return sf_round_pack(neg, 158, (v >> 1) | (v & 1));
    norm_sig = v;
    norm_e = 157;
    normalise();
    return sf_round_pack(neg, norm_e, norm_sig);
}

f32 sf_from_u32(uint32_t v)
{
    return from_mag(0, v);
}

f32 sf_from_i32(int32_t v)
{
    if (v < 0)
        return from_mag(1, (uint32_t)0 - (uint32_t)v);
    return from_mag(0, (uint32_t)v);
}

f32 sf_from_f16(uint16_t h)
{
    int8_t ex = (int8_t)((h >> 10) & 0x1F);
    uint16_t m = h & 0x3FF;
    sf_word r;
    if (ex == 0x1F) {
        if (m)
            return SF_NAN;
        r.u = SF_INF;
    } else if (ex == 0) {
        if (m == 0)
            r.u = 0;
        else {
            /* subnormal half m·2^−24 is a normal single: bring the leading 1 to bit 10 */
            ex = 1;
            while (!(m & 0x400)) {
                m <<= 1;
                --ex;
            }
            r.u = ((uint32_t)(ex + 112) << 23) | ((uint32_t)(m & 0x3FF) << 13);
        }
    } else
        r.u = ((uint32_t)(ex + 112) << 23) | ((uint32_t)m << 13);
    if (h & 0x8000)
        r.b[3] |= 0x80;
    return r.u;
}

f32 sf_from_bf16(uint16_t h)
{
    sf_word r;
    r.w[0] = 0;
    r.w[1] = h;
    return r.u;
}

uint16_t sf_to_f16(f32 a)
{
    uint16_t s, r;
    uint8_t shift;
    int16_t e16;
    uint32_t rb, half;
    ua.u = a;
    s = (uint16_t)(ua.b[3] & 0x80) << 8;
    ka = unpack(&ua, &ea, &ma);
    if (ka == K_NAN)
        return SF_F16_NAN;
    if (ka == K_INF)
        return s | 0x7C00;
    if (ka == K_ZERO || !(ma & HIDDEN))
        return s; /* single subnormals are below half the smallest half subnormal */
    e16 = ea - 112;
    if (e16 >= 31)
        return s | 0x7C00;
    /* keep 11 significant bits (fewer for half subnormals), round the rest to nearest even */
    if (e16 <= 0) {
        if (e16 < -10)
            return s; /* below half of 2^−24 */
        shift = (uint8_t)(14 - e16);
    } else
        shift = 13;
    half = (uint32_t)1 << (shift - 1);
    rb = ma & ((half << 1) - 1);
    r = (uint16_t)(ma >> shift);
    if (rb > half || (rb == half && (r & 1)))
        ++r;
    if (e16 > 0)
        r += (uint16_t)(e16 - 1) << 10; /* hidden bit carries into the exponent, as round_pack */
    return s | r;
}

/* Integer part of |a| (|a| < 2^31, ea >= 127) and what lies below it. */
static uint32_t int_part(uint8_t *frac_nonzero, uint8_t *half_or_more)
{
    uint8_t s;
    uint32_t below;
    if (ea >= 150) {
        *frac_nonzero = 0;
        *half_or_more = 0;
        return ma << (ea - 150);
    }
    s = (uint8_t)(150 - ea);
    below = ma & (((uint32_t)1 << s) - 1);
    *frac_nonzero = below != 0;
    *half_or_more = below >= ((uint32_t)1 << (s - 1));
    return ma >> s;
}

int32_t sf_floor_i32(f32 a)
{
    uint8_t frac, half;
    uint32_t v;
    ua.u = a;
    na = ua.b[3] >> 7;
    ka = unpack(&ua, &ea, &ma);
    if (ka == K_NAN || ka == K_ZERO)
        return 0;
    if (ka == K_INF || ea >= 158) /* |a| >= 2^31: saturate as Rust's `as i32` */
        return na ? (int32_t)SIGN_BIT : (int32_t)ABS_MASK;
    if (ea < 127)
        return na ? -1 : 0;
    v = int_part(&frac, &half);
    if (na)
        return -(int32_t)v - frac;
    return (int32_t)v;
}

int32_t sf_round_i32(f32 a)
{
    uint8_t frac, half;
    uint32_t v;
    ua.u = a;
    na = ua.b[3] >> 7;
    ka = unpack(&ua, &ea, &ma);
    if (ka == K_NAN || ka == K_ZERO)
        return 0;
    if (ka == K_INF || ea >= 158)
        return na ? (int32_t)SIGN_BIT : (int32_t)ABS_MASK;
    if (ea < 126)
        return 0; /* |a| < 0.5 */
    if (ea == 126)
        v = 1; /* 0.5 <= |a| < 1: half away from zero */
    else {
        v = int_part(&frac, &half);
        v += half;
    }
    return na ? -(int32_t)v : (int32_t)v;
}

/* ------------------------------------------------------------------------------------------ */
/* Comparisons                                                                                 */

uint8_t sf_is_nan(f32 a)
{
    return (a & ABS_MASK) > SF_INF;
}

/* Order-preserving unsigned key: negatives reversed below positives. */
static uint32_t order_key(f32 x)
{
    return (x & SIGN_BIT) ? ~x : (x | SIGN_BIT);
}

uint8_t sf_lt(f32 a, f32 b)
{
    if (sf_is_nan(a) || sf_is_nan(b))
        return 0;
    if (((a | b) & ABS_MASK) == 0)
        return 0; /* ±0 == ±0 */
    return order_key(a) < order_key(b);
}

uint8_t sf_le(f32 a, f32 b)
{
    if (sf_is_nan(a) || sf_is_nan(b))
        return 0;
    if (((a | b) & ABS_MASK) == 0)
        return 1;
    return order_key(a) <= order_key(b);
}
