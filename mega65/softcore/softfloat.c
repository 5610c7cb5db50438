/* softfloat.c: IEEE single arithmetic on bit patterns (softfloat.h), for cc65 and the PC.
 *
 * Working form: a sign byte (0 or 0x80), a biased exponent, and a 32-bit significand whose
 * leading 1 is bit 31: the 24 significand bits fill bytes 3..1 and byte 0 holds 8 more bits
 * below the last place (0x80 = exactly half a place), bit 0 also standing for every nonzero bit
 * shifted out further down ("sticky"). Its value is sig·2^(e−158). pack() rounds that to nearest
 * even and packs it, with subnormal results (no flush to zero) and overflow to ±inf.
 *
 * Written for cc65: int is 16 bits and every 32-bit operation is a runtime call, while 8- and
 * 16-bit operations are inline. So the significands are unions reached as bytes and 16-bit
 * halves, shifts move whole bytes first and then single bits of the two halves, and the working
 * variables are file-scope statics (cc65 reaches them with absolute addressing; locals live on
 * a software stack). Both targets are little-endian. Not reentrant: the core calls these from
 * one thread and no interrupt handler uses them. */
#include "softfloat.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "softfloat.c reaches bytes of a uint32_t through a union: little-endian only"
#endif

/* ------------------------------------------------------------------------------------------ */
/* 32×32 → 64-bit unsigned product into sf_phi:sf_plo                                         */

sf_word sf_plo, sf_phi;

#ifdef SF_HWMUL
void sf_mul32(uint32_t x, uint32_t y)
{
    SF_MULTINA = x;
    SF_MULTINB = y;
    sf_plo.u = SF_MULTOUT_LO;
    sf_phi.u = SF_MULTOUT_HI;
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
/* Working registers and shifts                                                                */

static sf_word X, Y, R, T; /* operands' significands, the result's, scratch */
static uint8_t xneg, yneg, rneg;
static int16_t xe, ye, re;
static uint8_t kx, ky; /* kinds: */
#define K_ZERO 0
#define K_NORMAL 1
#define K_SUBNORMAL 2 /* exponent 1, leading 1 below bit 31 */
#define K_INF 3
#define K_NAN 4

/* One place left or right, byte by byte (cc65 shifts a byte inline, a 16-bit half by a call). */
#define SHL1(W)                                                                                  \
    do {                                                                                         \
        (W).b[3] <<= 1;                                                                          \
        if ((W).b[2] & 0x80)                                                                     \
            (W).b[3] |= 1;                                                                       \
        (W).b[2] <<= 1;                                                                          \
        if ((W).b[1] & 0x80)                                                                     \
            (W).b[2] |= 1;                                                                       \
        (W).b[1] <<= 1;                                                                          \
        if ((W).b[0] & 0x80)                                                                     \
            (W).b[1] |= 1;                                                                       \
        (W).b[0] <<= 1;                                                                          \
    } while (0)
#define SHR1(W)                                                                                  \
    do {                                                                                         \
        (W).b[0] >>= 1;                                                                          \
        if ((W).b[1] & 1)                                                                        \
            (W).b[0] |= 0x80;                                                                    \
        (W).b[1] >>= 1;                                                                          \
        if ((W).b[2] & 1)                                                                        \
            (W).b[1] |= 0x80;                                                                    \
        (W).b[2] >>= 1;                                                                          \
        if ((W).b[3] & 1)                                                                        \
            (W).b[2] |= 0x80;                                                                    \
        (W).b[3] >>= 1;                                                                          \
    } while (0)

#ifdef SF_HWMUL
/* Shifts by 1-7 places as products: W·2^k is W shifted left k places (40 bits), read back
 * from the product's bytes; shifting right by k is W·2^(8−k) read from byte 1 on. */
static const uint8_t pow2[9] = {1, 2, 4, 8, 16, 32, 64, 128, 0};
#define MULTINB_BYTE(v)                                                                          \
    do {                                                                                         \
        SF_MULTINB_B[0] = (v);                                                                   \
        SF_MULTINB_B[1] = 0;                                                                     \
        SF_MULTINB_B[2] = 0;                                                                     \
        SF_MULTINB_B[3] = 0;                                                                     \
    } while (0)
#define SHR_BITS(W, K)                                                                           \
    do {                                                                                         \
        SF_MULTINA = (W).u;                                                                      \
        MULTINB_BYTE(pow2[8 - (K)]);                                                             \
        lost |= SF_MULTOUT[0];                                                                   \
        (W).b[0] = SF_MULTOUT[1];                                                                \
        (W).b[1] = SF_MULTOUT[2];                                                                \
        (W).b[2] = SF_MULTOUT[3];                                                                \
        (W).b[3] = SF_MULTOUT[4];                                                                \
    } while (0)
#define SHL_BITS(W, K)                                                                           \
    do {                                                                                         \
        SF_MULTINA = (W).u;                                                                      \
        MULTINB_BYTE(pow2[K]);                                                                   \
        (W).u = SF_MULTOUT_LO;                                                                   \
    } while (0)
#else
#define SHR_BITS(W, K)                                                                           \
    do {                                                                                         \
        for (; K; --K) {                                                                         \
            lost |= (W).b[0] & 1;                                                                \
            SHR1(W);                                                                             \
        }                                                                                        \
    } while (0)
#define SHL_BITS(W, K)                                                                           \
    do {                                                                                         \
        for (; K; --K)                                                                           \
            SHL1(W);                                                                             \
    } while (0)
#endif

/* R >>= sn (any count); returns nonzero when a 1 bit was shifted out. */
static uint16_t sn;
static uint8_t lost;
static uint8_t shr_lost_r(void)
{
    if (sn >= 32) {
        lost = R.b[0] | R.b[1] | R.b[2] | R.b[3];
        R.w[0] = 0;
        R.w[1] = 0;
        return lost;
    }
    lost = 0;
    while (sn >= 8) {
        lost |= R.b[0];
        R.b[0] = R.b[1];
        R.b[1] = R.b[2];
        R.b[2] = R.b[3];
        R.b[3] = 0;
        sn -= 8;
    }
    if (sn)
        SHR_BITS(R, sn);
    return lost;
}

/* X >>= sn and Y >>= sn the same way through R (where their callers have nothing in R yet: one
 * copy of the shift instead of one per register, 500 bytes of the core's window) */
static uint8_t shr_lost_x(void)
{
    R.u = X.u;
    shr_lost_r();
    X.u = R.u;
    return lost;
}

static uint8_t shr_lost_y(void)
{
    R.u = Y.u;
    shr_lost_r();
    Y.u = R.u;
    return lost;
}

/* R's nonzero significand with its leading 1 brought to bit 31, lowering re. */
static void normalise_r(void)
{
    while (!R.b[3]) {
        R.b[3] = R.b[2];
        R.b[2] = R.b[1];
        R.b[1] = R.b[0];
        R.b[0] = 0;
        re -= 8;
    }
    /* the leading zeros of the top byte, then one shift by that many places */
    for (sn = 0, lost = R.b[3]; !(lost & 0x80); lost <<= 1)
        ++sn;
    re -= sn;
    if (sn)
        SHL_BITS(R, sn);
}

/* A subnormal operand's significand normalised (its exponent goes below 1). */
static void normalise_x(void)
{
    R.u = X.u;
    re = xe;
    normalise_r();
    X.u = R.u;
    xe = re;
}

static void normalise_y(void)
{
    R.u = Y.u;
    re = ye;
    normalise_r();
    Y.u = R.u;
    ye = re;
}

/* Unpack X (or Y) in place: sign byte, exponent (1 for subnormals), significand with the hidden
 * bit at bit 31 (bytes 3..1), byte 0 zero; returns the kind. */
#define UNPACK(W, NEG, E)                                                                        \
    {                                                                                            \
        ex = (uint8_t)((W).b[3] << 1) | ((W).b[2] >> 7);                                         \
        NEG = (W).b[3] & 0x80;                                                                   \
        (W).b[3] = (W).b[2] | 0x80;                                                              \
        (W).b[2] = (W).b[1];                                                                     \
        (W).b[1] = (W).b[0];                                                                     \
        (W).b[0] = 0;                                                                            \
        if (ex == 0xFF)                                                                          \
            return (((W).b[3] & 0x7F) | (W).b[2] | (W).b[1]) ? K_NAN : K_INF;                    \
        if (ex == 0) {                                                                           \
            (W).b[3] &= 0x7F;                                                                    \
            if (!((W).b[3] | (W).b[2] | (W).b[1]))                                               \
                return K_ZERO;                                                                   \
            E = 1;                                                                               \
            return K_SUBNORMAL;                                                                  \
        }                                                                                        \
        E = ex;                                                                                  \
        return K_NORMAL;                                                                         \
    }
static uint8_t ex;
static uint8_t unpack_x(void) UNPACK(X, xneg, xe)
static uint8_t unpack_y(void) UNPACK(Y, yneg, ye)

/* ------------------------------------------------------------------------------------------ */
/* Rounding and packing                                                                        */

static sf_word out;

/* The single nearest to (−1)^rneg · R · 2^(re−158), ties to even. R's leading 1 is bit 31, or
 * re == 1 and R < 2^31 (a subnormal that needs no shift). */
static f32 pack(void)
{
    uint8_t field;
    if (re >= 255)
        goto inf;
    if (re <= 0) {
        /* subnormal: shift to the scale of exponent 1 */
        sn = (uint16_t)(1 - re);
        if (shr_lost_r())
            R.b[0] |= 1;
        re = 1;
    }
    if (R.b[0] > 0x80 || (R.b[0] == 0x80 && (R.b[1] & 1))) {
        /* round up; a carry out of the 24 bits is the next binade (2^24 = 0x800000 · 2) */
        if (++R.b[1] == 0 && ++R.b[2] == 0 && ++R.b[3] == 0) {
            R.b[3] = 0x80;
            if (++re == 255)
                goto inf;
        }
    }
    /* without its leading 1 at bit 31 (only with re == 1) the result is subnormal: field 0; a
     * subnormal that rounded up to 2^23 is the smallest normal */
    field = (R.b[3] & 0x80) ? (uint8_t)re : 0;
    out.b[3] = rneg | (field >> 1);
    out.b[2] = (uint8_t)(field << 7) | (R.b[3] & 0x7F);
    out.b[1] = R.b[2];
    out.b[0] = R.b[1];
    return out.u;
inf:
    out.b[3] = rneg | 0x7F;
    out.b[2] = 0x80;
    out.w[0] = 0;
    return out.u;
}

static f32 signed_zero(void)
{
    out.b[3] = rneg;
    out.b[2] = 0;
    out.w[0] = 0;
    return out.u;
}

static f32 signed_inf(void)
{
    re = 255;
    return pack();
}

f32 sf_round_pack(uint8_t neg, int16_t e, uint32_t sig)
{
    R.u = sig;
    SHL1(R);
    re = e;
    rneg = neg ? 0x80 : 0;
    return pack();
}

/* ------------------------------------------------------------------------------------------ */
/* Addition                                                                                    */

static uint16_t lo, hi;
static uint8_t carry;

/* X + Y (sf_add and sf_sub have loaded the bit patterns). */
static f32 add_xy(void)
{
    /* order by magnitude, |X| >= |Y| */
    lo = X.w[1] & 0x7FFF;
    hi = Y.w[1] & 0x7FFF;
    if (lo < hi || (lo == hi && X.w[0] < Y.w[0])) {
        T.u = X.u;
        X.u = Y.u;
        Y.u = T.u;
    }
    kx = unpack_x();
    ky = unpack_y();
    if (kx >= K_INF) {
        /* X is inf or NaN; Y, no larger in magnitude, is NaN only if X is */
        if (kx == K_NAN || (ky == K_INF && xneg != yneg))
            return SF_NAN;
        rneg = xneg;
        return signed_inf();
    }
    if (ky == K_ZERO) {
        rneg = xneg & yneg; /* the sum of two zeros is −0 only when both are −0 */
        if (kx == K_ZERO)
            return signed_zero();
        R.u = X.u; /* X unchanged, packed again exactly */
        re = xe;
        rneg = xneg;
        return pack();
    }
    /* align Y to X's exponent */
    sn = (uint16_t)(xe - ye);
    if (shr_lost_y())
        Y.b[0] |= 1;
    if (xneg == yneg) {
        lo = X.w[0] + Y.w[0];
        carry = lo < Y.w[0];
        X.w[0] = lo;
        hi = X.w[1] + Y.w[1];
        lo = hi < Y.w[1]; /* carry out of bit 31 */
        if (carry && ++hi == 0)
            lo = 1;
        X.w[1] = hi;
        if (lo) {
            /* a 33-bit sum: one place right, the carry as the new bit 31 */
            carry = X.b[0] & 1;
            SHR1(X);
            X.b[3] |= 0x80;
            X.b[0] |= carry;
            ++xe;
        }
    } else {
        carry = X.w[0] < Y.w[0];
        X.w[0] -= Y.w[0];
        X.w[1] -= Y.w[1] + carry;
        if (!(X.w[0] | X.w[1])) {
            rneg = 0; /* x − x = +0 when rounding to nearest */
            return signed_zero();
        }
        /* cancellation: normalise, but not below exponent 1 (then it is subnormal and exact) */
        while (!X.b[3] && xe > 8) {
            X.b[3] = X.b[2];
            X.b[2] = X.b[1];
            X.b[1] = X.b[0];
            X.b[0] = 0;
            xe -= 8;
        }
        while (!(X.b[3] & 0x80) && xe > 1) {
            SHL1(X);
            --xe;
        }
    }
    R.u = X.u;
    re = xe;
    rneg = xneg;
    return pack();
}

f32 sf_add(f32 a, f32 b)
{
    X.u = a;
    Y.u = b;
    return add_xy();
}

f32 sf_sub(f32 a, f32 b)
{
    X.u = a;
    Y.u = b;
    Y.b[3] ^= 0x80;
    return add_xy();
}

/* ------------------------------------------------------------------------------------------ */
/* Multiplication, division, square root                                                      */

/* Unpack X and Y; the sign of a product or quotient in rneg. */
static void unpack2(void)
{
    kx = unpack_x();
    ky = unpack_y();
    rneg = xneg ^ yneg;
}

f32 sf_mul(f32 a, f32 b)
{
    X.u = a;
    Y.u = b;
    unpack2();
    if (kx >= K_INF || ky >= K_INF) {
        if (kx == K_NAN || ky == K_NAN || kx == K_ZERO || ky == K_ZERO)
            return SF_NAN; /* NaN operand, or inf × 0 */
        return signed_inf();
    }
    if (kx == K_ZERO || ky == K_ZERO)
        return signed_zero();
    if (kx == K_SUBNORMAL)
        normalise_x();
    if (ky == K_SUBNORMAL)
        normalise_y();
    /* (ma·2^8)·(mb·2^8) = ma·mb·2^16, ma·mb in [2^46, 2^48): its top 32 bits are sf_phi */
#ifdef SF_HWMUL
    SF_MULTINA = X.u;
    SF_MULTINB = Y.u;
    R.u = SF_MULTOUT_HI;
    lo = *(volatile uint16_t *)(SF_MULTOUT + 2);
#else
    sf_mul32(X.u, Y.u);
    R.u = sf_phi.u;
    lo = sf_plo.w[1];
#endif
    re = xe + ye - 126;
    if (!(R.b[3] & 0x80)) {
        SHL1(R);
        if (lo & 0x8000)
            R.b[0] |= 1;
        lo <<= 1;
        --re;
    }
    if (lo)
        R.b[0] |= 1;
    return pack();
}

static uint8_t i;
#ifdef SF_HWMUL
static uint8_t rem[7];
#else
static uint8_t mask, *qbyte;
#endif

f32 sf_div(f32 a, f32 b)
{
    X.u = a;
    Y.u = b;
    unpack2();
    if (kx == K_NAN || ky == K_NAN)
        return SF_NAN;
    if (kx == K_INF) {
        if (ky == K_INF)
            return SF_NAN;
        return signed_inf();
    }
    if (ky == K_ZERO) {
        if (kx == K_ZERO)
            return SF_NAN;
        return signed_inf();
    }
    if (kx == K_ZERO || ky == K_INF)
        return signed_zero();
    if (kx == K_SUBNORMAL)
        normalise_x();
    if (ky == K_SUBNORMAL)
        normalise_y();
    /* 24-bit significands ma = X >> 8, mb = Y >> 8; ma·2 if ma < mb, so that the quotient's
     * leading 1 is bit 31 of Q = floor(ma·2^31 / mb), found in R; the remainder's being nonzero
     * is the sticky bit */
    X.b[0] = X.b[1];
    X.b[1] = X.b[2];
    X.b[2] = X.b[3];
    X.b[3] = 0;
    Y.b[0] = Y.b[1];
    Y.b[1] = Y.b[2];
    Y.b[2] = Y.b[3];
    Y.b[3] = 0;
    re = xe - ye + 127;
    if (X.w[1] < Y.w[1] || (X.w[1] == Y.w[1] && X.w[0] < Y.w[0])) {
        SHL1(X);
        --re;
    }
#ifdef SF_HWMUL
    /* The divider: (A·2^32)/B as 32.32 ($D768-$D76F), here A = ma, B = 2·mb, so its fraction
     * is Q; up to ~20 cycles, DIVBUSY is $D70F bit 7 (docs/spec/mega65.md §M9). The remainder
     * ma·2^31 − Q·mb is then formed exactly with the multiplier and Q corrected until it lies
     * in [0, mb): the quotient does not rest on the divider's last bit. */
    T.u = Y.u;
    SHL1(T);
    SF_MULTINA = X.u;
    SF_MULTINB = T.u;
    while (SF_DIVBUSY & MATH_DIVBUSY)
        ;
    R.u = SF_DIVOUT_FRAC;
    for (;;) {
        /* rem = ma·2^31 − R·mb over 7 bytes (ma·2^31 = (ma·2^7)·2^24: bytes 3..6) */
        T.u = X.u;
        SHL1(T);
        SHL_BITS(T, 6);
        SF_MULTINA = R.u;
        SF_MULTINB = Y.u;
        carry = 0;
        for (i = 0; i < 7; ++i) {
            lo = (uint16_t)(i < 3 ? 0 : T.b[i - 3]) - SF_MULTOUT[i] - carry;
            rem[i] = (uint8_t)lo;
            carry = (uint8_t)(lo >> 8) & 1;
        }
        if (carry) { /* negative: Q too large */
            if (!R.b[0]--)
                if (!R.b[1]--)
                    if (!R.b[2]--)
                        --R.b[3];
            continue;
        }
        /* rem >= mb: Q too small (rem < 2^56; mb < 2^24) */
        if (rem[6] | rem[5] | rem[4] | rem[3] ||
            (rem[2] > Y.b[2] ||
             (rem[2] == Y.b[2] && (rem[1] > Y.b[1] || (rem[1] == Y.b[1] && rem[0] >= Y.b[0]))))) {
            if (!++R.b[0])
                if (!++R.b[1])
                    if (!++R.b[2])
                        ++R.b[3];
            continue;
        }
        break;
    }
    if (rem[0] | rem[1] | rem[2])
        R.b[0] |= 1;
#else
    /* restoring division: 25 quotient bits (the first is 1) into R bits 31..7 */
    R.w[0] = 0;
    R.w[1] = 0;
    mask = 0x80;
    qbyte = &R.b[3];
    for (i = 0; i < 25; ++i) {
        if (X.w[1] > Y.w[1] || (X.w[1] == Y.w[1] && X.w[0] >= Y.w[0])) {
            carry = X.w[0] < Y.w[0];
            X.w[0] -= Y.w[0];
            X.w[1] -= Y.w[1] + carry;
            *qbyte |= mask;
        }
        mask >>= 1;
        if (!mask) {
            mask = 0x80;
            --qbyte;
        }
        SHL1(X);
    }
    if (X.w[0] | X.w[1])
        R.b[0] |= 1;
#endif
    return pack();
}

f32 sf_sqrt(f32 a)
{
    X.u = a;
    kx = unpack_x();
    if (kx == K_NAN)
        return SF_NAN;
    if (kx == K_ZERO)
        return a; /* sqrt(±0) = ±0 */
    if (xneg)
        return SF_NAN;
    if (kx == K_INF)
        return a;
    if (kx == K_SUBNORMAL)
        normalise_x();
    /* a = m·2^(E−23), m = X >> 8 in [2^23, 2^24), E = xe − 127. With E even (else m·2 and
     * E − 1), the root of m·2^25 (in [2^48, 2^50)) has 25 bits; it is found two radicand bits at
     * a time, top first, from X = m·2^7 (bits 31..7). rem and the trial 4·root + 1 stay below
     * 2^27, root below 2^25; Y = root, T = rem, R = trial. */
    re = xe - 127;
    if (re & 1)
        --re; /* m·2 is X·2^−7 instead of X·2^−8 */
    else
        SHR1(X);
    Y.u = 0;
    T.u = 0;
    for (i = 0; i < 25; ++i) {
        SHL1(T);
        SHL1(T);
        T.b[0] |= X.b[3] >> 6;
        SHL1(X);
        SHL1(X);
        R.u = Y.u;
        SHL1(R);
        SHL1(R);
        R.b[0] |= 1;
        SHL1(Y);
        if (T.w[1] > R.w[1] || (T.w[1] == R.w[1] && T.w[0] >= R.w[0])) {
            carry = T.w[0] < R.w[0];
            T.w[0] -= R.w[0];
            T.w[1] -= R.w[1] + carry;
            Y.b[0] |= 1;
        }
    }
    /* root·2^7 has its leading 1 at bit 31: one byte left, one bit right */
    R.b[3] = Y.b[2];
    R.b[2] = Y.b[1];
    R.b[1] = Y.b[0];
    R.b[0] = 0;
    SHR1(R);
    if (Y.b[3] & 1)
        R.b[3] |= 0x80;
    if (T.w[0] | T.w[1])
        R.b[0] |= 1;
    re = 127 + re / 2;
    rneg = 0;
    return pack();
}

f32 sf_recip(f32 a)
{
#ifdef SF_RECIP_ASM
    f32 r = sf_recip65(a);
    if (r != SF_RECIP_NO)
        return r;
#endif
    return sf_div(SF_ONE, a);
}

f32 sf_rsqrt(f32 a)
{
    return sf_recip(sf_sqrt(a));
}

/* ------------------------------------------------------------------------------------------ */
/* Conversions                                                                                 */

/* R holds a nonzero magnitude: to single with the sign rneg. */
static f32 from_r(void)
{
    re = 158;
    normalise_r();
    return pack();
}

f32 sf_from_u32(uint32_t v)
{
    R.u = v;
    if (!(R.w[0] | R.w[1]))
        return SF_ZERO;
    rneg = 0;
    return from_r();
}

f32 sf_from_i32(int32_t v)
{
    R.u = (uint32_t)v;
    if (!(R.w[0] | R.w[1]))
        return SF_ZERO;
    rneg = R.b[3] & 0x80;
    if (rneg) {
        /* two's-complement magnitude (−2^31 gives 2^31) */
        R.w[0] = ~R.w[0];
        R.w[1] = ~R.w[1];
        if (++R.w[0] == 0)
            ++R.w[1];
    }
    return from_r();
}

f32 sf_from_f16(uint16_t h)
{
    uint8_t ex = (uint8_t)(h >> 10) & 0x1F;
    uint16_t m = h & 0x3FF;
    if (ex == 0x1F) {
        if (m)
            return SF_NAN;
        ex = 0xFF - 112; /* infinity */
    } else if (ex == 0) {
        if (m == 0)
            ex = (uint8_t)-112; /* zero: exponent field 0 below */
        else {
            /* subnormal half m·2^−24 is a normal single: bring the leading 1 to bit 10 */
            ex = 1;
            while (!(m & 0x400)) {
                m <<= 1;
                --ex; /* wraps below 0: the field ex + 112 is taken mod 256 */
            }
            m &= 0x3FF;
        }
    }
    /* field = ex + 112; bits: sign, field (8), m << 13 */
    ex += 112;
    out.b[3] = ((uint8_t)(h >> 8) & 0x80) | (ex >> 1);
    out.b[2] = (uint8_t)(ex << 7) | (uint8_t)(m >> 3);
    out.b[1] = (uint8_t)(m << 5);
    out.b[0] = 0;
    return out.u;
}

f32 sf_from_bf16(uint16_t h)
{
    out.w[0] = 0;
    out.w[1] = h;
    return out.u;
}

static int16_t e16;
static uint16_t s16, r16;

uint16_t sf_to_f16(f32 a)
{
    X.u = a;
    kx = unpack_x();
    s16 = (uint16_t)xneg << 8;
    if (kx == K_NAN)
        return SF_F16_NAN;
    if (kx == K_INF)
        return s16 | 0x7C00;
    if (kx != K_NORMAL)
        return s16; /* zero; single subnormals are below half the smallest half subnormal */
    e16 = xe - 112;
    if (e16 >= 31)
        return s16 | 0x7C00;
    if (e16 < -10)
        return s16; /* below half of 2^−24 */
    /* keep the top 11 bits (fewer for half subnormals) in bits 18..8, the rest in byte 0 */
    sn = (uint16_t)(e16 > 0 ? 13 : 14 - e16);
    if (shr_lost_x())
        X.b[0] |= 1;
    r16 = X.w[0] >> 8 | (uint16_t)X.b[2] << 8;
    if (X.b[0] > 0x80 || (X.b[0] == 0x80 && (r16 & 1)))
        ++r16;
    if (e16 > 0)
        r16 += (uint16_t)(e16 - 1) << 10; /* the hidden bit carries into the exponent, as pack */
    return s16 | r16;
}

/* ------------------------------------------------------------------------------------------ */
/* Integer results (Rust's `as i32`: NaN → 0, saturating)                                      */

static int32_t ires;

/* Unpack X; returns 1 when the result is decided: then it is ires. */
static uint8_t int_special(f32 a)
{
    X.u = a;
    kx = unpack_x();
    if (kx == K_NAN || kx == K_ZERO) {
        ires = 0;
        return 1;
    }
    if (kx == K_INF || xe >= 158) { /* |a| >= 2^31 */
        ires = xneg ? (int32_t)0x80000000UL : (int32_t)0x7FFFFFFFUL;
        return 1;
    }
    return 0;
}

/* ±X (X <= 2^31) */
static int32_t signed_result(void)
{
    if (xneg)
        return (int32_t)(0 - X.u);
    return (int32_t)X.u;
}

int32_t sf_floor_i32(f32 a)
{
    if (int_special(a))
        return ires;
    if (xe < 127) /* 0 < |a| < 1 */
        return xneg ? -1 : 0;
    /* |a| = X·2^(xe−158): its integer part is X >> (158 − xe), 1..31 places */
    sn = (uint16_t)(158 - xe);
    if (shr_lost_x() && xneg && ++X.w[0] == 0)
        ++X.w[1]; /* floor of a negative non-integer: one further from zero */
    return signed_result();
}

int32_t sf_round_i32(f32 a)
{
    if (int_special(a))
        return ires;
    if (xe < 126)
        return 0; /* |a| < 0.5 */
    /* half away from zero: (2|a| truncated + 1) / 2 */
    sn = (uint16_t)(157 - xe);
    shr_lost_x();
    if (++X.w[0] == 0)
        ++X.w[1];
    SHR1(X);
    return signed_result();
}

/* ------------------------------------------------------------------------------------------ */
/* Comparisons                                                                                 */

uint8_t sf_is_nan(f32 a)
{
    T.u = a;
    return (T.w[1] & 0x7FFF) > 0x7F80 || ((T.w[1] & 0x7FFF) == 0x7F80 && T.w[0]);
}

/* X, Y: the operands as order-preserving unsigned keys (negatives reversed below positives);
 * returns 0 when either is NaN, 2 when both are zeros, else 1. */
static uint8_t keys(f32 a, f32 b)
{
    if (sf_is_nan(a) || sf_is_nan(b))
        return 0;
    X.u = a;
    Y.u = b;
    if (!(X.w[0] | Y.w[0] | ((X.w[1] | Y.w[1]) & 0x7FFF)))
        return 2; /* ±0 == ±0 */
    if (X.b[3] & 0x80) {
        X.w[0] = ~X.w[0];
        X.w[1] = ~X.w[1];
    } else
        X.b[3] |= 0x80;
    if (Y.b[3] & 0x80) {
        Y.w[0] = ~Y.w[0];
        Y.w[1] = ~Y.w[1];
    } else
        Y.b[3] |= 0x80;
    return 1;
}

uint8_t sf_lt(f32 a, f32 b)
{
    if (keys(a, b) != 1)
        return 0;
    return X.w[1] < Y.w[1] || (X.w[1] == Y.w[1] && X.w[0] < Y.w[0]);
}

uint8_t sf_le(f32 a, f32 b)
{
    switch (keys(a, b)) {
    case 0:
        return 0;
    case 2:
        return 1;
    }
    return X.w[1] < Y.w[1] || (X.w[1] == Y.w[1] && X.w[0] <= Y.w[0]);
}
