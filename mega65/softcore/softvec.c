/* softvec.c: the vector unit's elementwise ops, norms, RoPE, MEANROWS, CVT16, ARGMAX and the
 * function tables, in hardware numerics (docs/spec/numerics.md §5.3): every step one single
 * rounded to nearest even (softfloat.h), sums sequential from +0 in index order. Vectors stream
 * through SC_VEC-element chunks of sc_w.v; each op checks its ranges (in machine.rs's order)
 * before it writes, and writes element i only after every read that element i's value needs, so
 * Z = X (the converter's in-place use, §3.4) gives the reference's result. The reference is
 * emu/core/src/vector.rs and tables.rs. */
#include <string.h>
#include "softcore_int.h"
#include "softmem.h"
#ifndef __CC65__ /* cc65 builds: every table in fntab.c, outside the core's window */
#define FN_TABLES_DATA /* the tables live here */
#endif
#include "fn_tables.h"
#include "ssnail_regs.h"
#include "softvec65.h"

#ifdef SV_ASM /* softvec65.s's sv_more: more() below, on these three as its sv_cn, sv_at, sv_vmax */
#define n sv_cn
#define at sv_at
#define vmax sv_vmax
#define more sv_more
#define from0 sv_from0
#define SV_STATE
#else
#define SV_STATE static
#endif
SV_STATE uint16_t n;  /* elements in this chunk */
SV_STATE uint32_t at; /* elements done */

SV_STATE uint16_t vmax = SC_VEC; /* elements a chunk (cc65 builds: sv_map and LAYERNORM set more) */

#ifndef SV_ASM
/* A chunk loop's start: element 0, no chunk done yet. */
static void from0(void)
{
    at = 0;
    n = 0;
}

/* The next chunk of a vector of `len`: at moves on by the chunk done (n), then sets n; 0 when
 * the vector is done. A chunk loop is `for (from0(); more(len);)`. */
static uint8_t more(uint32_t len)
{
    at += n;
    if (at >= len || SC_POLL()) /* RUN/STOP: the loop ends (softcore_int.h) */
        return 0;
    n = len - at < vmax ? (uint16_t)(len - at) : vmax;
    return 1;
}
#endif

/* The chunk's n singles of the vector at base, to or from buf. */
static void get(uint32_t base, f32 *buf)
{
    if (at) /* (a vector's first chunk, most often its only one: no 32-bit multiply and add) */
        base += 4 * at;
    sm_read(base, buf, 4 * n);
}

static void put(uint32_t base, const f32 *buf)
{
    if (at)
        base += 4 * at;
    sm_write(base, buf, 4 * n);
}

#ifdef SV_ASM
/* The chunk of x into sc_w.v.x, and the kernels' p and count set to it (one call for what each
 * chunk loop of the vector instructions did in three statements: bytes of the core's window) */
static void getx(uint32_t base)
{
    get(base, sc_w.v.x);
    sv_p = sc_w.v.x;
    sv_n = (uint8_t)n;
}
#else
#define getx(base) get(base, sc_w.v.x)
#endif

#ifdef SV_ASM /* softvec65.s: sv_span4 */
#define span4 sv_span4
#else
/* The range check of f32[n0] at a. */
static uint8_t span4(uint32_t a, uint32_t n0)
{
    return sc_span(a, sc_mul_sat(n0, 4));
}
#endif

/* cc65 builds read the tables in softvec65.s only: exp's and SiLU's are not in the CPU's view in
 * the shipped core (fntab.c) */
#ifndef SV_ASM
/* A 256-segment table (§5.3): below lo and at or above hi a fixed rule; else segment
 * i = floor(single(single(x − lo)·k)) clamped to 0..255 (NaN → 0), y = single(c0 + single(c1·x)). */
static f32 table(const uint32_t *c, f32 lo, f32 hi, f32 k, uint8_t below, uint8_t above, f32 x)
{
    int32_t i;
    uint8_t rule = 0xFF;
    if (sf_lt(x, lo))
        rule = below;
    else if (sf_le(hi, x))
        rule = above;
    if (rule != 0xFF)
        return rule == FN_OUT_ZERO ? SF_ZERO : rule == FN_OUT_ONE ? SF_ONE : x;
    i = sf_floor_i32(sf_mul(sf_sub(x, lo), k));
    if (i < 0)
        i = 0;
    if (i > 255)
        i = 255;
    c += 2 * (uint16_t)i;
    return sf_add(c[0], sf_mul(c[1], x));
}

f32 sv_exp(f32 x)
{
    return table(fn_exp, FN_EXP_LO, FN_EXP_HI, FN_EXP_K, FN_EXP_BELOW, FN_EXP_ABOVE, x);
}

static f32 silu(f32 x)
{
    return table(fn_silu, FN_SILU_LO, FN_SILU_HI, FN_SILU_K, FN_SILU_BELOW, FN_SILU_ABOVE, x);
}

static f32 gelu(f32 x)
{
    return table(fn_gelu, FN_GELU_LO, FN_GELU_HI, FN_GELU_K, FN_GELU_BELOW, FN_GELU_ABOVE, x);
}
#endif

#ifdef SV_ASM
/* elementwise chunks: x and y in the buffer union's float GEMV member (softcore_int.h), a count
 * the kernels keep in a byte */
#if SC_GF_BYTES / 8 > 255
#define SV_BIG 255
#else
#define SV_BIG (SC_GF_BYTES / 8)
#endif
#if SC_VEC > 255
#error "softvec65.s counts elements in a byte"
#endif
/* softvec65.s's fallbacks: the definition on the same operands */
void sv_slow_mul(void)
{
    sv_r = sf_mul(sv_a, sv_b);
}

void sv_slow_add(void)
{
    sv_r = sf_add(sv_a, sv_b);
}

void sv_slow_f16(void)
{
    sv_b = sf_from_f16(sv_h);
}

void sv_slow_cvt(void)
{
    sv_h = sf_to_f16(sv_a);
}

void sv_slow_sqrt(void)
{
    sv_r = sf_sqrt(sv_a);
}
#endif

/* rsqrt(a) = recip(sqrt(a)), the norms' rule (§5.3); the square root in ca65 where there is one */
static f32 rsqrt(f32 a)
{
#ifdef SV_ASM
    sv_a = a;
    sv_sqrt();
    return sf_recip(sv_r);
#else
    return sf_rsqrt(a);
#endif
}
#ifdef SV_ASM

#if FN_GELU_LO != 0xC0C00000UL || FN_GELU_HI != 0x40C00000UL || FN_GELU_K != 0x41AAAAABUL
#error "softvec65.s's gseg takes GELU's segment in fixed point for lo = -6, hi = 6, k = 21.333334"
#endif
const struct sv_tab sv_exp_tab = {FN_EXP_LO, FN_EXP_HI, FN_EXP_K, SV_TAB_EXP, FN_EXP_BELOW, FN_EXP_ABOVE};
static const struct sv_tab silu_tab = {FN_SILU_LO, FN_SILU_HI, FN_SILU_K, SV_TAB_SILU, FN_SILU_BELOW, FN_SILU_ABOVE};
static const struct sv_tab gelu_tab = {FN_GELU_LO, FN_GELU_HI, FN_GELU_K, SV_TAB_GELU, FN_GELU_BELOW, FN_GELU_ABOVE};

/* one exp table value by softvec65.s (the C table()'s steps): ATTN beyond SC_ATTN_T scores */
f32 sv_exp(f32 x)
{
    sv_tabd = &sv_exp_tab;
    sv_a = x;
    sv_tab1();
    return sv_r;
}
#endif

/* The elementwise ops: VADD z = single(x + y), VMUL single(x·y) (plain single arithmetic in
 * both modes), SILUMUL single(SiLU_table(x)·y), GELU GELU_table(x), CVT16 F16 z = x rounded to
 * nearest even (overflow to ±inf). Checks: X, Y (if used), Z. */
uint8_t sv_map(uint8_t op, uint32_t x, uint32_t y, uint32_t z, uint32_t n0)
{
#ifndef SV_ASM
    uint16_t i;
    f32 v;
#endif
    f32 *by;
    uint8_t two = op == OP_VADD || op == OP_VMUL || op == OP_SILUMUL;
    uint8_t e = span4(x, n0);
    if (!e && two)
        e = span4(y, n0);
    if (!e)
        e = sc_span(z, sc_mul_sat(n0, op == OP_CVT16 ? 2 : 4));
    if (e)
        return e;
#ifdef SV_ASM
    /* VADD, VMUL, SILUMUL, GELU and CVT16 in cc65 builds: chunks of SV_BIG elements, x at the
     * union's start (sc_w.v.x) and y or CVT16's halves after them (fewer chunks: the C and the
     * DMA set-up around one cost about as much as ten additions) */
    vmax = SV_BIG;
#endif
    by = sc_w.v.x + vmax; /* SC_VEC: sc_w.v.y */
    for (from0(); more(n0);) {
        getx(x);
        if (two)
            get(y, by);
#ifdef SV_ASM
        sv_q = by;
        if (op == OP_SILUMUL) {
            sv_tabd = &silu_tab;
            sv_k_tabmul();
        } else if (op == OP_GELU) {
            sv_tabd = &gelu_tab;
            sv_k_tab();
        } else if (op == OP_CVT16)
            sv_k_cvt16();
        else
            sv_k_vop(op == OP_VMUL);
#else
        for (i = 0; i < n; ++i) {
            v = sc_w.v.x[i];
            switch (op) {
            case OP_VADD:
                v = sf_add(v, sc_w.v.y[i]);
                break;
            case OP_VMUL:
                v = sf_mul(v, sc_w.v.y[i]);
                break;
            case OP_SILUMUL:
                v = sf_mul(silu(v), sc_w.v.y[i]);
                break;
            case OP_GELU:
                v = gelu(v);
                break;
            default:
                sc_w.v.h[i] = sf_to_f16(v);
            }
            sc_w.v.x[i] = v;
        }
#endif
        if (op == OP_CVT16)
#ifdef SV_ASM
            sm_write(z + 2 * at, by, 2 * n);
#else
            sm_write(z + 2 * at, sc_w.v.h, 2 * n);
#endif
        else
            put(z, sc_w.v.x);
    }
    vmax = SC_VEC;
    return SC_OK;
}

/* recip(N) as a single, kept for the last N > 0 asked (RMSNORM, LAYERNORM and MEANROWS ask for
 * a model's few lengths over and over; a division is thousands of cycles on the 45GS02) */
static uint32_t recip_n0;
static f32 recip_v;
static f32 recip_n(uint32_t n0)
{
    if (n0 != recip_n0 || n0 == 0) {
        recip_v = sf_recip(sf_from_u32(n0));
        recip_n0 = n0;
    }
    return recip_v;
}

/* RMSNORM: ss = sequential sum of single(x_i²); m = single(ss·recip(N)); r = rsqrt(single(m + eps));
 * y_i = single(single(x_i·r)·g_i). */
uint8_t sv_rmsnorm(uint32_t x, uint32_t g, uint32_t z, uint32_t n0, f32 eps)
{
#ifndef SV_ASM
    uint16_t i;
    f32 ss = SF_ZERO, r;
#else /* the sum and r in softvec65.s's zero page, where its kernels keep them */
#define ss sv_acc
#define r sv_c
#endif
    uint8_t e = span4(x, n0);
    if (e || (e = span4(g, n0)) != 0 || (e = span4(z, n0)) != 0)
        return e;
#ifdef SV_ASM
    ss = SF_ZERO;
#endif
    for (from0(); more(n0);) {
        getx(x);
#ifdef SV_ASM
        sv_k_sumsq();
#else
        for (i = 0; i < n; ++i)
            ss = sf_add(ss, sf_mul(sc_w.v.x[i], sc_w.v.x[i]));
#endif
    }
#ifdef SV_ASM /* m and m + eps by softvec65.s's multiply and add (softfloat.c's C: ≈ 2,000 cycles) */
    sv_a = ss;
    sv_b = recip_n(n0);
    sv_mulz();
    sv_a = sv_r;
    sv_b = eps;
    sv_addz();
    sv_a = sv_r; /* rsqrt's steps without its call and 32-bit argument */
    sv_sqrt();
    r = sf_recip(sv_r);
#else
    r = rsqrt(sf_add(sf_mul(ss, recip_n(n0)), eps));
#endif
    for (from0(); more(n0);) {
#ifdef SV_ASM
        /* x in one chunk is still in sc_w.v.x from the sum (nothing was written since) */
        if (n0 > vmax)
            getx(x);
        else {
            sv_p = sc_w.v.x;
            sv_n = (uint8_t)n;
        }
#else
        getx(x);
#endif
        get(g, sc_w.v.y);
#ifdef SV_ASM
        sv_q = sc_w.v.y;
        sv_k_scale2();
#else
        for (i = 0; i < n; ++i)
            sc_w.v.x[i] = sf_mul(sf_mul(sc_w.v.x[i], r), sc_w.v.y[i]);
#endif
        put(z, sc_w.v.x);
    }
    return SC_OK;
}
#undef ss
#undef r

/* LAYERNORM: rn = recip(N); mu = single(sequential sum(x)·rn); d_i = single(x_i − mu);
 * var = single(sequential sum(single(d_i²))·rn); r = rsqrt(single(var + eps));
 * y_i = single(single(single(d_i·r)·g_i) + b_i). G = f32[N0] at gb, B the N0 values after it.
 * d_i is recomputed in the last pass (the same single each time) instead of being kept. */
uint8_t sv_layernorm(uint32_t x, uint32_t gb, uint32_t z, uint32_t n0, f32 eps)
{
#ifndef SV_ASM
    uint16_t i;
    f32 d, mu;
#else
    uint8_t keep;
#endif
    f32 s = SF_ZERO, rn, r;
    uint8_t e = span4(x, n0);
    if (e)
        return e;
    if (n0 > 0x7FFFFFFFUL) /* N0·2 must fit 32 bits (machine.rs checks it here) */
        return SS_ERR_BAD_OPERAND;
    if ((e = span4(gb, 2 * n0)) != 0 || (e = span4(z, n0)) != 0)
        return e;
    rn = recip_n(n0);
#ifdef SV_ASM
    /* softvec65.s: x − mu as x + (−mu), which is sf_sub's own step (softfloat.c); the sums read
     * x in SV_BIG chunks, the last pass x, g and b in chunks of 63 (b at g + 252 bytes). In place
     * (Z = X) the variance's pass writes d_i over x_i, which only d_i needs afterwards, and the
     * last pass reads it back instead of computing it again (the same single). */
    keep = x == z;
    vmax = SV_BIG;
    sv_acc = SF_ZERO;
    for (from0(); more(n0);) {
        getx(x);
        sv_k_sum();
    }
    sv_a = sv_acc;
    sv_b = rn;
    sv_mulz();
    sv_c = sv_r ^ 0x80000000UL; /* −mu */
    sv_acc = SF_ZERO;
    for (from0(); more(n0);) {
        getx(x);
        sv_k_sumsqd(keep);
        if (keep)
            put(z, sc_w.v.x);
    }
    s = sv_acc;
    r = rsqrt(sf_add(sf_mul(s, rn), eps));
    vmax = 63;
    for (from0(); more(n0);) {
        getx(x);
        get(gb, sc_w.v.x + 63);
        get(gb + 4 * n0, sc_w.v.x + 2 * 63);
        sv_acc = r;
        sv_q = sc_w.v.x + 63;
        sv_k_lnout(4 * 63 | keep);
        put(z, sc_w.v.x);
    }
    vmax = SC_VEC;
#else
    for (from0(); more(n0);) {
        get(x, sc_w.v.x);
        for (i = 0; i < n; ++i)
            s = sf_add(s, sc_w.v.x[i]);
    }
    mu = sf_mul(s, rn);
    s = SF_ZERO;
    for (from0(); more(n0);) {
        get(x, sc_w.v.x);
        for (i = 0; i < n; ++i) {
            d = sf_sub(sc_w.v.x[i], mu);
            s = sf_add(s, sf_mul(d, d));
        }
    }
    r = rsqrt(sf_add(sf_mul(s, rn), eps));
    for (from0(); more(n0);) {
        get(x, sc_w.v.x);
        get(gb, sc_w.v.y);
        get(gb + 4 * n0, sc_w.v.b);
        for (i = 0; i < n; ++i) {
            d = sf_sub(sc_w.v.x[i], mu);
            sc_w.v.x[i] = sf_add(sf_mul(sf_mul(d, r), sc_w.v.y[i]), sc_w.v.b[i]);
        }
        put(z, sc_w.v.x);
    }
#endif
    return SC_OK;
}

/* ROPE (§3.6): pair i of f32[N0] at x, j = i mod (N1/2), (c, s) = the pair j of f32[N1] at cs:
 * v0' = single(single(v0·c) − single(v1·s)), v1' = single(single(v0·s) + single(v1·c)).
 * An odd last element is left as it is. SC_VEC is even, so a pair never straddles chunks. */
uint8_t sv_rope(uint32_t x, uint32_t cs, uint32_t n0, uint32_t n1)
{
    uint16_t i;
    uint32_t j, half = n1 / 2;
#ifdef SV_ASM
    uint8_t j8 = 0, whole;
#else
    f32 v0, v1, c, s;
#endif
    uint8_t e;
    if (n1 == 0 || (n1 & 1))
        return SS_ERR_BAD_OPERAND;
    if ((e = span4(x, n0)) != 0 || (e = span4(cs, n1)) != 0)
        return e;
#ifdef SV_ASM
    /* a (c, s) table that fits y is read once, and the kernel starts it again after half pairs */
    whole = n1 <= SC_VEC;
    sv_rw = 0;
    if (whole) {
        sm_read(cs, sc_w.v.y, 4 * (uint16_t)n1);
        sv_rq = sc_w.v.y;
        sv_rh = (uint8_t)half;
    }
#endif
    j = 0;
    for (from0(); more(n0 & ~1UL);) {
        get(x, sc_w.v.x);
#ifdef SV_ASM
        sv_q = sc_w.v.y;
        if (whole) { /* the chunk starts at pair j8 of the table (j8 + n/2 < SC_VEC) */
            sv_q = sc_w.v.y + 2 * j8;
            sv_rw = sv_rh - j8;
            j8 += (uint8_t)(n / 2);
            while (j8 >= sv_rh)
                j8 -= sv_rh;
        } else /* the chunk's (c, s) pairs into y a pair at a time (tables longer than a chunk:
                  head_dim above SC_VEC) */
            for (i = 0; i < n; i += 2) {
                sm_read(cs + 8 * j, sc_w.v.y + i, 8);
                if (++j == half)
                    j = 0;
            }
        sv_p = sc_w.v.x;
        sv_n = (uint8_t)(n / 2);
        sv_k_rope();
#else
        for (i = 0; i < n; i += 2) {
            c = sm_read32(cs + 8 * j);
            s = sm_read32(cs + 8 * j + 4);
            if (++j == half)
                j = 0;
            v0 = sc_w.v.x[i];
            v1 = sc_w.v.x[i + 1];
            sc_w.v.x[i] = sf_sub(sf_mul(v0, c), sf_mul(v1, s));
            sc_w.v.x[i + 1] = sf_add(sf_mul(v0, s), sf_mul(v1, c));
        }
#endif
        put(x, sc_w.v.x);
    }
    return SC_OK;
}

/* MEANROWS: per column, the sequential sum over `rows` rows of f32[N0] in order, then
 * single(sum·recip(rows)). Columns go chunk by chunk; each chunk is written after all its rows
 * are read. cc65 builds add a row's chunk with VADD's kernel and scale with ATTN's. */
uint8_t sv_meanrows(uint32_t x, uint32_t z, uint32_t n0, uint32_t rows)
{
#ifndef SV_ASM
    uint16_t i;
#endif
    uint32_t r, xr;
    f32 rr;
    uint8_t e;
    if (rows != 0 && n0 > SC_HUGE / rows) /* rows·N0 must fit 32 bits */
        return SS_ERR_BAD_OPERAND;
    if ((e = span4(x, rows * n0)) != 0 || (e = span4(z, n0)) != 0)
        return e;
    rr = recip_n(rows);
    for (from0(); more(n0);) {
        memset(sc_w.v.x, 0, 4 * n); /* +0 */
        for (r = 0, xr = x; r < rows && !SC_POLL(); ++r, xr += 4 * n0) {
            get(xr, sc_w.v.y);
#ifdef SV_ASM
            sv_p = sc_w.v.x;
            sv_q = sc_w.v.y;
            sv_n = (uint8_t)n;
            sv_k_vop(0);
#else
            for (i = 0; i < n; ++i)
                sc_w.v.x[i] = sf_add(sc_w.v.x[i], sc_w.v.y[i]);
#endif
        }
#ifdef SV_ASM
        sv_c = rr;
        sv_p = sc_w.v.x;
        sv_n = (uint8_t)n;
        sv_k_scale();
#else
        for (i = 0; i < n; ++i)
            sc_w.v.x[i] = sf_mul(sc_w.v.x[i], rr);
#endif
        put(z, sc_w.v.x);
    }
    return SC_OK;
}

/* ARGMAX: the index of the first largest of f32[N0] (a later value wins only if larger, or if
 * the best so far is NaN and it is not); 0 for N0 = 0. */
uint8_t sv_argmax(uint32_t x, uint32_t n0, uint32_t *index)
{
    uint16_t i;
#ifndef SV_ASM
    f32 best = 0, v;
#endif
    uint8_t e = span4(x, n0);
    if (e)
        return e;
    *index = 0;
#ifdef SV_ASM
    sv_acc = 0;    /* the best's order key (softvec65.s); 0: none yet, or a NaN */
    vmax = SV_BIG; /* chunks of SV_BIG, as sv_map's x (the kernel steps sv_p a page on) */
    for (from0(); more(n0);) {
        getx(x);
        if ((i = sv_k_argmax()) != 0)
            *index = at + i - 1;
    }
    vmax = SC_VEC;
#else
    for (from0(); more(n0);) {
        get(x, sc_w.v.x);
        for (i = 0; i < n; ++i) {
            v = sc_w.v.x[i];
            if ((at == 0 && i == 0) || sf_lt(best, v) || (sf_is_nan(best) && !sf_is_nan(v))) {
                best = v;
                *index = at + i;
            }
        }
    }
#endif
    return SC_OK;
}
