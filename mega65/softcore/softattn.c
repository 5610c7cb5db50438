/* softattn.c: ATTN (docs/spec/isa.md §3.5) in hardware numerics (numerics.md §5.3); the reference
 * is emu/core/src/vector.rs `attention` and machine.rs `attn` (checks and their order).
 *
 * Per head h, KV head g = h / (n_heads / n_kv_heads), T = R[a] + 1 rows:
 *   s_t = sequential sum over i of single(q_i·k_t,i), then single(s_t·rsqrt(head_dim));
 *   m = max s_t (NaN ignored); e_t = EXP_table(single(s_t − m)); z = sequential sum of e_t;
 *   w_t = single(e_t·recip(z)); out = +0, then out = single(out + single(w_t·v_t)) for t in order.
 * Streaming: q, K and V rows pass in SC_ATTN_VEC-element chunks; the T scores (then exp values) are
 * kept in sc_w.at.s when T ≤ SC_ATTN_T, else recomputed in each pass (the same singles: each is
 * a fixed sequence of roundings). The output goes in SC_ATTN_VEC-element chunks of head_dim, each
 * accumulated over all t before it is written. */
#include <string.h>
#include "softcore.h"
#include "softcore_int.h"
#include "softmem.h"
#include "fn_tables.h"
#include "ssnail_regs.h"
#include "softvec65.h"

#define F32_NEG_INF 0xFF800000UL

#ifdef SV_ASM
#define qh sa_qh /* (sv_k_attn's q, the same head by head) */
static uint32_t row_bytes;
#else
static uint32_t qh, row_bytes;
#endif
static uint16_t hd; /* head_dim: 4·n_heads·head_dim bytes of q fit memory, so < 2^16 */
static uint8_t esz, q_kept; /* esz: 2 (F16, so esz & 2 is the kernels' F16 flag) or 4 */
#ifdef SV_ASM
#define scale sa_scale /* (sv_k_attn reads it) */
f32 scale;
#else
static f32 scale;
#endif
/* rsqrt(head_dim) of the last ATTN (0: none yet); the same head_dim gives the same scale */
static uint16_t scale_hd;
#ifdef SV_ASM
/* sv_k_avs's blocks of V rows end here: the union's end */
const void *const sv_vend = (const uint8_t *)&sc_w + sizeof sc_w;
/* sv_k_attn's q and score buffers */
f32 *const sa_qb = sc_w.at.q, *const sa_sp = sc_w.at.s;
#endif

/* (hi, lo) ·= m as a 64-bit unsigned number; 1 if the product does not fit 64 bits. */
static uint8_t mul64(uint32_t *hi, uint32_t *lo, uint32_t m)
{
#ifdef SF_HWMUL
    /* the hardware multiplier's 64-bit products (MULTOUT = MULTINA·MULTINB, as sc_mul_sat uses
     * it): lo·m, then hi·m with its high half added; cc65's 32-bit arithmetic for the four
     * 16-bit products was ≈ 4 K cycles a call */
    uint32_t ph;
    SF_MULTINA = *lo;
    SF_MULTINB = m;
    *lo = SF_MULTOUT_LO;
    ph = SF_MULTOUT_HI;
    SF_MULTINA = *hi;
    if (SF_MULTOUT_HI || SF_MULTOUT_LO > SC_HUGE - ph)
        return 1;
    *hi = SF_MULTOUT_LO + ph;
    return 0;
#else
    uint32_t a0 = *lo & 0xFFFF, a1 = *lo >> 16, b0 = m & 0xFFFF, b1 = m >> 16;
    uint32_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    uint32_t mid = (p00 >> 16) + (p01 & 0xFFFF) + (p10 & 0xFFFF);
    uint32_t ph = p11 + (p01 >> 16) + (p10 >> 16) + (mid >> 16);
    uint32_t t;
    if (*hi != 0 && m > SC_HUGE / *hi)
        return 1;
    t = *hi * m;
    if (t > SC_HUGE - ph)
        return 1;
    *hi = t + ph;
    *lo = (p00 & 0xFFFF) | (mid << 16);
    return 0;
#endif
}

/* The scaled score of the K row at kt for the current head. */
static f32 score(uint32_t kt)
{
    uint16_t i0, n;
#ifndef SV_ASM
    uint16_t i;
#endif
    f32 s = SF_ZERO;
    for (i0 = 0; i0 < hd && !SC_POLL(); i0 += n) {
        n = hd - i0 < SC_ATTN_VEC ? (uint16_t)(hd - i0) : SC_ATTN_VEC;
        if (!q_kept)
            sm_read(qh + 4 * (uint32_t)i0, sc_w.at.q, 4 * n);
        sm_read(kt, &sc_w.at.k, n * esz);
        kt += n * esz;
#ifdef SV_ASM
        sv_acc = s;
        sv_p = sc_w.at.q;
        sv_q = &sc_w.at.k;
        sv_n = (uint8_t)n;
        sv_k_dot(esz & 2);
        s = sv_acc;
#else
        for (i = 0; i < n; ++i)
            s = sf_add(s, sf_mul(sc_w.at.q[i], esz == 4 ? sc_w.at.k.f[i] : sf_from_f16(sc_w.at.k.h[i])));
#endif
    }
#ifdef SV_ASM
    sv_a = s;
    sv_b = scale;
    sv_mulz();
    return sv_r;
#else
    return sf_mul(s, scale);
#endif
}

/* ATTN with the parameter block at blk, the query at q, the output to z, rows 0..last. */
uint8_t sa_attn(uint32_t blk, uint32_t q, uint32_t z, uint32_t last)
{
    uint32_t kc, vc, nh, nkv, fmt, group, h, t, hdw, kh, vh, kt, hi, lo, bytes, head_bytes, head_q;
    uint16_t n, i0;
#ifndef SV_ASM
    uint16_t i, ts;
#endif
    uint32_t g;
    uint8_t e, keep;
    f32 m, s, sum, rz, w;
    if ((e = sc_span(blk, ATTN_BLOCK_LEN)) != 0)
        return e;
    kc = sm_read32(blk + ATTN_K_CACHE);
    vc = sm_read32(blk + ATTN_V_CACHE);
    nh = sm_read32(blk + ATTN_N_HEADS);
    nkv = sm_read32(blk + ATTN_N_KV_HEADS);
    hdw = sm_read32(blk + ATTN_HEAD_DIM);
    fmt = sm_read32(blk + ATTN_KV_FORMAT);
    if (nh == 0 || nkv == 0 || hdw == 0 || nkv > nh || (group = nh / nkv) * nkv != nh) /* one division */
        return SS_ERR_BAD_OPERAND;
    if (fmt == KV_F32)
        esz = 4;
    else if (fmt == KV_F16)
        esz = 2;
    else
        return SS_ERR_BAD_OPERAND;
    /* K/V bytes = (R[a] + 1)·n_kv_heads·head_dim·esz, which must fit 64 bits (machine.rs) */
    hi = last == SC_HUGE ? 1 : 0;
    lo = last + 1;
    if (mul64(&hi, &lo, nkv) || mul64(&hi, &lo, hdw) || mul64(&hi, &lo, esz))
        return SS_ERR_BAD_OPERAND;
    bytes = hi ? SC_HUGE : lo;
    if ((e = sc_span(q, sc_mul_sat(sc_mul_sat(nh, hdw), 4))) != 0 || (e = sc_span(z, sc_mul_sat(sc_mul_sat(nh, hdw), 4))) != 0 ||
        (e = sc_span(kc, bytes)) != 0 || (e = sc_span(vc, bytes)) != 0)
        return e;
    /* Now every size fits memory: T = last + 1, kv_dim and the row bytes fit 32 bits, and
     * head_dim < 2^16 (4·n_heads·head_dim bytes of q are in memory, below 2^28). The work
     * (spec §6.1): the block, q, K, V and the output, and 8·n_heads·head_dim·T for the K and V
     * values read per head; with its own work past the limit it faults here (machine.rs). */
    if (soft_work_limit) {
        lo = sc_mul_sat(sc_mul_sat(sc_mul_sat(nh, hdw), 8), last + 1);
        if (sc_work_over(32 + lo))
            return SS_ERR_INSTR_LIMIT;
        sc_work_add(32 + lo);
        sc_work_add(sc_mul_sat(sc_mul_sat(nh, hdw), 8));
        sc_work_add(bytes);
        sc_work_add(bytes);
    }
    hd = (uint16_t)hdw;
    row_bytes = nkv * hdw * esz;
    head_bytes = hdw * esz;
    head_q = 4 * hdw;
    if (scale_hd != hd) {
        scale = sf_rsqrt(sf_from_u32(hdw));
        scale_hd = hd;
    }
    keep = last < SC_ATTN_T;
    q_kept = hd <= SC_ATTN_VEC;
    qh = q; /* head h's q: q + 4·h·head_dim */
#ifdef SV_ASM
    /* sv_k_scores's and sv_k_avs's operands that hold for every head */
    sv_rs = row_bytes;
    sv_rl = (uint16_t)last;
    sv_kb = &sc_w.at.k;
    if (keep && q_kept && nh < 256) { /* the head loop below in softvec65.s */
        sa_kh = kc;
        sa_vh = vc;
        sa_z = z;
        sa_nh = (uint8_t)nh;
        sa_grp = (uint8_t)group;
        sa_hq = (uint8_t)head_q;
        sv_rb = (uint16_t)head_bytes;
        sv_rn = (uint8_t)hd;
        sv_k_attn(esz & 2);
        return SC_OK;
    }
    if (!keep)
        sv_rl = 0; /* sv_k_avs one row at a time */
#endif
    /* head h: its KV head h / group at kc (vc) + (h / group)·head_dim·esz, q's and these
     * addresses stepped (no division per head) */
    kh = kc;
    vh = vc;
    g = 0;
    for (h = 0; h < nh && !sc_poll(); ++h) { /* RUN/STOP (softcore_int.h) */
        if (q_kept)
            sm_read(qh, sc_w.at.q, 4 * hd);
        m = F32_NEG_INF;
        {
            kt = kh;
            for (t = 0; t <= last; ++t) {
                s = score(kt);
                kt += row_bytes;
                if (keep)
                    sc_w.at.s[(uint16_t)t] = s;
                if (sf_lt(m, s))
                    m = s;
            }
        }
        sum = SF_ZERO;
#ifdef SV_ASM
        if (keep) { /* the weights w_t = single(e_t·recip(z)) for all of the head's chunks */
            sv_m = m;
            sv_k_smax();
        } else
#else
        if (keep) {
            for (ts = 0; ts <= (uint16_t)last; ++ts) {
                s = sv_exp(sf_sub(sc_w.at.s[ts], m));
                sc_w.at.s[ts] = s;
                sum = sf_add(sum, s);
            }
        } else
#endif
        {
            kt = kh;
            for (t = 0; t <= last; ++t) {
                sum = sf_add(sum, sv_exp(sf_sub(score(kt), m)));
                kt += row_bytes;
            }
        }
        rz = sf_recip(sum);
        lo = vh; /* row 0's chunk of V */
        for (i0 = 0; i0 < hd; i0 += n) {
            n = hd - i0 < SC_ATTN_VEC ? (uint16_t)(hd - i0) : SC_ATTN_VEC;
            memset(sc_w.at.o, 0, 4 * n); /* +0 */
            kt = kh;
            hi = lo + n * esz; /* the next chunk's */
#ifdef SV_ASM
            sv_qb = sc_w.at.o;
            sv_rb = n * esz;
            sv_rn = (uint8_t)n;
            if (keep) { /* the loop over t in softvec65.s */
                sv_ra = lo;
                sv_sp = sc_w.at.s;
                sv_k_avs(esz & 2);
            } else
#endif
            for (t = 0; t <= last && !SC_POLL(); ++t) {
#ifndef SV_ASM /* (with SV_ASM the kept weights take sv_k_avs) */
                if (keep)
                    w = sf_mul(sc_w.at.s[(uint16_t)t], rz);
                else
#endif
                {
                    w = sf_mul(sv_exp(sf_sub(score(kt), m)), rz);
                    kt += row_bytes;
                }
#ifdef SV_ASM /* row t alone through sv_k_avs: its weight in s[0], which is not kept here */
                sc_w.at.s[0] = w;
                sv_ra = lo;
                sv_sp = sc_w.at.s;
                sv_k_avs(esz & 2);
#else
                sm_read(lo, &sc_w.at.k, n * esz);
                for (i = 0; i < n; ++i)
                    sc_w.at.o[i] = sf_add(sc_w.at.o[i], sf_mul(w, esz == 4 ? sc_w.at.k.f[i] : sf_from_f16(sc_w.at.k.h[i])));
#endif
                lo += row_bytes;
            }
            sm_write(z, sc_w.at.o, 4 * n);
            z += 4 * n;
            lo = hi;
        }
        qh += head_q;
        if (++g == group) {
            g = 0;
            kh += head_bytes;
            vh += head_bytes;
        }
    }
    return SC_OK;
}
