/* softgemv.c: GEMV and DEQROW for the five native weight formats (docs/spec/numerics.md §4.1)
 * in hardware numerics (§5.3); the reference is emu/core/src/gemv.rs (quantize_input and
 * row_hw_definition) and format/src/ggml.rs (dequantize_native).
 *
 * Q8_0/Q4_0 weights: the input is quantised to Q8_0 block by block (at most gq_nc elements at
 * a time, once if the whole input fits); per row and block in order the exact integer isum, then
 * acc = single(acc + single(single(isum)·single(dw·dx))). Rows go in chunks of gq_nr (GQ_LAYOUT)
 * whose sums wait in gq_acc while the column chunks pass, so neither the
 * input nor a row has to fit near memory. F32/F16/BF16 weights: every product goes into the
 * exact accumulator (exactsum.h), one row at a time, rounded once. */
#include <string.h>
#include "softcore_int.h"
#include "softmem.h"
#include "exactsum.h"
#include "fn_tables.h"
#include "ssnail_regs.h"
#include "softvec65.h"

#define F32_127 0x42FE0000UL

/* cc65 builds run the Q8_0/Q4_0 block loop in softgemv65.s (the same bits; -DSC_C_GEMV keeps
 * this C instead); the PC build has only the C. */
#if defined(__CC65__) && !defined(SC_C_GEMV)
#define SG_ASM 1
#if SC_GEMV_ROWS > 255
#error "softgemv65.s counts rows in a byte"
#endif
#endif

#ifdef SG_ASM
/* sgq_block's arguments (softgemv65.s: one block column, rows r0 ..) and sgq_slow's, the term
 * in C for what the assembler leaves to the definition (zero or special scales, isum 0, acc not
 * a normal single). */
uint8_t sgq_fmt, sgq_nr, sgq_first, sgq_last, sgq_nb;
const int8_t *sgq_q;
const f32 *sgq_d;
f32 sgq_dx;
uint32_t sgq_p, sgq_pc, sgq_rb;
f32 *sgq_acc;
int32_t sgq_s;
uint16_t sgq_dw;
f32 *sgq_accp;
void sgq_cols(void);
/* Quantising (softquant65.s's sgq_gemv, block by block): sgq_qblock writes the quants of the
 * block at sgq_x to sgq_qb and its widened F16 scale to *sgq_dp, or returns 1 and leaves the
 * block to the C (sgq_cblock). */
const f32 *sgq_x = sc_w.gq.x;
int8_t *sgq_qb;
f32 *sgq_dp;
uint8_t sgq_qblock(void);
#endif

static uint8_t blen, bbytes; /* elements and bytes per block of the format */

/* sc_span(a, 4·n) with the product saturated (softvec65.s's, without a 32-bit multiplication) */
#ifdef SV_ASM
#define span4 sv_span4
#else
#define span4(a, n) sc_span(a, sc_mul_sat(n, 4))
#endif

/* The format's block, or 0 for a format GEMV and DEQROW do not take (fault 5). */
static uint8_t format(uint8_t fmt)
{
    switch (fmt) {
    case WT_F32: blen = WT_F32_BLOCK_LEN; bbytes = WT_F32_BLOCK_BYTES; break;
    case WT_F16: blen = WT_F16_BLOCK_LEN; bbytes = WT_F16_BLOCK_BYTES; break;
    case WT_BF16: blen = WT_BF16_BLOCK_LEN; bbytes = WT_BF16_BLOCK_BYTES; break;
    case WT_Q8_0: blen = WT_Q8_0_BLOCK_LEN; bbytes = WT_Q8_0_BLOCK_BYTES; break;
    case WT_Q4_0: blen = WT_Q4_0_BLOCK_LEN; bbytes = WT_Q4_0_BLOCK_BYTES; break;
    default: return 0;
    }
    return 1;
}

/* The Q8_0/Q4_0 buffers of one GEMV (GQ_LAYOUT): input chunks of gq_nc columns (the whole input
 * up to SC_GEMV_COLS, a wider one SC_GEMV_WCOLS at a time), their quants at the start of
 * sc_w.gq.qa and the row sums right after them (gq_acc), in chunks of as many rows as the rest
 * holds (gq_nr, at most SC_GEMV_ROWS). Fewer row chunks pay fewer block-column set-ups and, for
 * an input wider than a chunk, fewer quantisations. */
#define gq_q ((int8_t *)sc_w.gq.qa)
#ifdef SG_ASM
#define gq_acc sgq_acc /* softgemv65.s's row sums */
/* softquant65.s's sgq_gemv (gemv_q on the 45GS02) lays the buffers out by these numbers */
const uint16_t sgq_lay[6] = {SC_GEMV_COLS, SC_GEMV_WCOLS, sizeof sc_w.gq.qa, (uint16_t)gq_q, (uint16_t)sc_w.gq.d, SC_GEMV_ROWS};
/* sgq_gemv takes sg_gemv's arguments where they lie, sg_gemv's C stack frame (rows at (sp),0 ..
 * fmt at 21: cc65 pushes them in order and its locals are static), and rb from sgq_rb */
void sgq_gemv(void);
#else
static uint8_t gq_nr;
static uint16_t gq_nc, gq_r;
static f32 *gq_acc;
#endif
#define GQ_LAYOUT(wide, cols)                                                  \
    do {                                                                       \
        gq_nc = (wide) ? SC_GEMV_WCOLS : (uint16_t)(cols);                     \
        gq_r = (sizeof sc_w.gq.qa - gq_nc) / 4;                                \
        gq_nr = gq_r > SC_GEMV_ROWS ? SC_GEMV_ROWS : (uint8_t)gq_r;            \
        gq_acc = (f32 *)(gq_q + gq_nc);                                        \
    } while (0)

/* Weight j of a float GEMV chunk at w (sc_w.gb) widened exactly. */
static f32 widen_at(uint8_t fmt, const uint8_t *w, uint16_t j)
{
    if (fmt == WT_F32)
        return ((const f32 *)w)[j];
    if (fmt == WT_F16)
        return sf_from_f16(((const uint16_t *)w)[j]);
    return sf_from_bf16(((const uint16_t *)w)[j]);
}

/* Q8_0 quantisation (§5.3, llama.cpp's quantize_row_q8_0) of one block of 32 at sc_w.gq.x into
 * qb[0..31] and *dp: amax = max|x| (NaN ignored), d = amax/127, id = recip(d) or 0, q =
 * roundf(x·id) saturated to int8 (NaN → 0), the scale d rounded to F16 and widened. */
static void qblock(int8_t *qb, f32 *dp)
{
    uint8_t j;
    uint32_t amax, a;
    f32 d, id;
    int32_t q;
    amax = 0;
    for (j = 0; j < 32; ++j) {
        /* |x| as bits: ordered like the values, NaN (above $7F800000) left out */
        a = sc_w.gq.x[j] & 0x7FFFFFFFUL;
        if (a <= SF_INF && a > amax)
            amax = a;
    }
    d = sf_div(amax, F32_127);
    id = d != 0 ? sf_recip(d) : SF_ZERO;
    for (j = 0; j < 32; ++j) {
        q = sf_round_i32(sf_mul(sc_w.gq.x[j], id));
        qb[j] = (int8_t)(q > 127 ? 127 : q < -128 ? -128 : q);
    }
    *dp = sf_from_f16(sf_to_f16(d));
}

#ifdef SG_ASM
/* the blocks softquant65.s's sgq_qblock leaves to the C (sgq_gemv reads each block into
 * sc_w.gq.x and calls this when sgq_qblock returns 1) */
void sgq_cblock(void)
{
    qblock(sgq_qb, sgq_dp);
}
#else
/* The nc input elements at xa quantised block by block into gq_q and sc_w.gq.d. */
static void quantise(uint32_t xa, uint16_t nc)
{
    uint16_t b;
    uint32_t xp;
    for (b = 0, xp = xa; b < nc / 32; ++b, xp += 128) {
        sm_read(xp, sc_w.gq.x, 128);
        qblock(gq_q + 32 * b, sc_w.gq.d + b);
    }
}
#endif

#ifndef SG_ASM
/* Exact integer sum of one weight block (in sc_w.gq.blk) times 32 input quants. */
static int32_t isum_q8(const int8_t *x)
{
    const int8_t *w = (const int8_t *)sc_w.gq.blk + 2;
    int32_t s = 0;
    uint8_t j;
    for (j = 0; j < 32; ++j)
        s += (int16_t)w[j] * x[j];
    return s;
}

static int32_t isum_q4(const int8_t *x)
{
    const uint8_t *w = sc_w.gq.blk + 2;
    int32_t s = 0;
    uint8_t j;
    for (j = 0; j < 16; ++j)
        s += (int16_t)((int8_t)(w[j] & 15) - 8) * x[j] + (int16_t)((int8_t)(w[j] >> 4) - 8) * x[j + 16];
    return s;
}
#endif

/* One block's term added to a row's sum: acc + single(isum)·single(dw·dx), dw as F16 bits. */
static f32 block_term(f32 acc, int32_t s, uint16_t dw, f32 dx)
{
    return sf_add(acc, sf_mul(sf_from_i32(s), sf_mul(sf_from_f16(dw), dx)));
}

#ifdef SG_ASM
void sgq_slow(void)
{
    /* a row chunk's first block column: the sum is +0 (its word is not cleared beforehand) */
    *sgq_accp = block_term(sgq_first ? SF_ZERO : *sgq_accp, sgq_s, sgq_dw, sgq_dx);
}
#endif

/* y_r, plus the old f32 y_r with ACC (one single addition), stored as f32 or (F16OUT) F16.
 * The old value is read just before the store: Z = old y works, also with both flags. */
static void store(uint8_t flags, uint32_t z, uint32_t r, f32 y)
{
    if (flags & GEMV_ACC)
        y = sf_add(y, sm_read32(z + 4 * r));
    if (flags & GEMV_F16OUT)
        sm_write16(z + 2 * r, sf_to_f16(y));
    else
        sm_write32(z + 4 * r, y);
}

#ifdef SG_ASM
/* The chunk's nr row sums, with ACC plus the old f32 y (one single addition each, softvec65.s's
 * VADD, sum first as in store()), stored as f32 or F16: old y and F16 results pass 32 rows at a
 * time through sc_w.gq.x, free once the input is quantised. Reading a piece's old y before writing
 * its F16 results is store()'s order: row r's F16 bytes end below row r+1's f32 old value. */
void store_chunk(uint8_t flags, uint32_t z, uint32_t r0, uint8_t nr)
{
    static uint8_t r, k;
    for (r = 0; r < nr; r += k) {
        k = nr - r < 32 ? nr - r : 32;
        sv_p = gq_acc + r;
        sv_n = k;
        if (flags & GEMV_ACC) {
            sm_read(z + 4 * (r0 + r), sc_w.gq.x, 4 * k);
            sv_q = sc_w.gq.x;
            sv_k_vop(0);
            sv_p = gq_acc + r;
            sv_n = k;
        }
        if (flags & GEMV_F16OUT) {
            sv_q = sc_w.gq.x;
            sv_k_cvt16();
            sm_write(z + 2 * (r0 + r), sc_w.gq.x, 2 * k);
        }
    }
    if (!(flags & GEMV_F16OUT))
        sm_write(z + 4 * r0, gq_acc, 4 * nr);
}
#endif

/* Locals and arguments in static variables: cc65 reaches those directly, not through its C stack
 * (gemv_q does not recurse). cc65 builds with softgemv65.s run softquant65.s's sgq_gemv instead:
 * the same steps (it keeps the quantised input for a GEMV of the same x, softcore_int.h sc_keep). */
#ifndef SG_ASM
static void gemv_q(uint8_t fmt, uint8_t flags, uint32_t w, uint32_t x, uint32_t z, uint32_t cols, uint32_t rows, uint32_t rb)
{
    static uint32_t r0, c0, p, wr0, cl, rw;
    static uint16_t nr, nc, r, b;
    const int8_t *q;
    int32_t s;
    cl = cols;
    rw = rows;
    GQ_LAYOUT(cl > SC_GEMV_COLS, cols);
    for (r0 = 0, wr0 = w; r0 < rw; r0 += nr, wr0 += (uint32_t)nr * rb) {
        nr = rw - r0 < gq_nr ? (uint16_t)(rw - r0) : gq_nr;
        memset(gq_acc, 0, 4 * nr); /* SF_ZERO: +0 is all zero bits */
        for (c0 = 0, p = wr0; c0 < cl; c0 += nc) {
            if (sc_poll()) /* RUN/STOP (softcore_int.h) */
                return;
            nc = cl - c0 < gq_nc ? (uint16_t)(cl - c0) : gq_nc;
            if (r0 == 0 || cl > gq_nc)
                quantise(x + 4 * c0, nc);
            for (r = 0; r < nr; ++r) {
                p = wr0 + r * rb + c0 / 32 * bbytes;
                q = gq_q;
                for (b = 0; b < nc / 32; ++b, p += bbytes, q += 32) {
                    sm_read(p, sc_w.gq.blk, bbytes);
                    s = fmt == WT_Q8_0 ? isum_q8(q) : isum_q4(q);
                    gq_acc[r] = block_term(gq_acc[r], s, sc_w.gq.blk[0] | (uint16_t)sc_w.gq.blk[1] << 8, sc_w.gq.d[b]);
                }
            }
        }
        if (flags == 0) /* plain f32 stores: the chunk's sums as they are, in one go */
            sm_write(z + 4 * r0, gq_acc, 4 * nr);
        else
            for (r = 0; r < nr; ++r)
                store(flags, z, r0 + r, gq_acc[r]);
    }
}
#endif

/* The row and chunk state lives in statics and the addresses move on by additions: cc65 keeps
 * 32-bit locals on its C stack and multiplies through the runtime. A chunk is SC_GF_N16 (F32:
 * SC_GF_N32) elements of x and of the row, read by one DMA job each (x once per GEMV when it fits
 * one chunk). cc65 builds (exactsum65.s) take XR_ROWS rows at a time (XR_UROWS when the C stack is
 * low), each in a 256-byte page (its accumulator, link, special products and the chunk's XR_N or
 * XR_N32 weights, exactsum.h): XR_UROWS in sc_w.gb with the input chunk after them, the others the
 * C stack's lowest pages; xr_chunk unpacks each x_j once for the rows. */
#ifdef XS_ASM
#if 255 + 256 * XR_UROWS + 4 * XR_N > SC_GF_BYTES || XR_W + 4 * XR_N32 > 256 || XR_W + 2 * XR_N > 256
#error "softgemv.c: the row pages do not fit sc_w.gb"
#endif
#endif
static uint32_t gf_wr, gf_rb, gf_xp, gf_left, gf_r0, gf_rl;
static uint16_t gf_n, gf_wn, gf_cap;
static uint8_t gf_k, gf_nr, gf_rows, gf_xread;

#ifdef XS_ASM
static uint8_t *gf_pg;
static uint32_t gf_z; /* the next plain f32 output */

/* xr_chunk's products with an infinite or NaN operand: x_j·(the weight of the row at page) into
 * the row's special bits, as accumulate() sets them (j = xr_jy / 4) */
void xr_spec(uint8_t page)
{
    uint8_t *p = (uint8_t *)((uint16_t)page << 8);
    uint8_t j = xr_jy >> 2;
    p[XR_SPEC] |= xs_spec(widen_at(xr_fmt, p + XR_W, j), xr_x[j]);
}
#endif

static void gemv_float(uint8_t fmt, uint8_t flags, uint32_t w, uint32_t x, uint32_t z, uint32_t cols, uint32_t rows, uint32_t rb)
{
    f32 *xb = (f32 *)sc_w.gb.b;
#ifdef XS_ASM
    /* the first page boundary in the buffer: the row pages (their weights at XR_W), then the
     * input chunk */
    gf_pg = (uint8_t *)(((uint16_t)sc_w.gb.b + 255) & 0xFF00);
    xr_x = xb = (f32 *)(gf_pg + 256 * XR_UROWS);
    for (gf_k = 0; gf_k < XR_UROWS; ++gf_k)
        xr_pgs[gf_k] = (uint8_t)((uint16_t)gf_pg >> 8) + gf_k;
    /* the C stack's lowest pages too while the stack stays above them (exactsum.h) */
    gf_rows = XR_UROWS;
    if ((uint16_t)&fmt >= (uint16_t)xr_stk + 256 * XR_SROWS + XR_DEPTH) {
        for (gf_k = 0; gf_k < XR_SROWS; ++gf_k)
            xr_pgs[XR_UROWS + gf_k] = (uint8_t)((uint16_t)xr_stk >> 8) + gf_k;
        gf_rows = XR_ROWS;
    }
    xr_fmt = fmt;
    gf_cap = bbytes == 4 ? XR_N32 : XR_N;
    gf_z = z;
#else
    uint16_t j;
    uint8_t *wb;
    static uint32_t gf_w0;
    gf_rows = 1;
    gf_cap = bbytes == 4 ? SC_GF_N32 : SC_GF_N16;
    wb = sc_w.gb.b + 4 * gf_cap;
#endif
    /* x is read for the first block of rows, and again for every block when it is more than a
     * chunk */
    gf_xread = 1;
    gf_rb = rb;
#ifdef XS_ASM
    xr_rb = rb;
#endif
    gf_wr = w;
    gf_r0 = 0;
    for (gf_rl = rows; gf_rl != 0; gf_rl -= gf_nr) {
        gf_nr = gf_rl < gf_rows ? (uint8_t)gf_rl : gf_rows;
#ifdef XS_ASM
        xr_wa = gf_wr; /* the block's first row, this chunk of it */
        xr_start(gf_nr);
#else
        gf_w0 = gf_wr;
        xs_clear();
#endif
        gf_xp = x;
        for (gf_left = cols; gf_left != 0; gf_left -= gf_n) {
            if (SC_POLL())
                return;
            gf_n = gf_left < gf_cap ? (uint16_t)gf_left : gf_cap;
            gf_wn = bbytes == 4 ? gf_n << 2 : gf_n << 1; /* (bbytes is 4 or 2: no multiply) */
            if (gf_xread) {
                sm_read(gf_xp, xb, 4 * gf_n);
                gf_xp += 4 * gf_n;
            }
#ifdef XS_ASM
            xr_wn = (uint8_t)gf_wn;
            xr_load();
            xr_n = (uint8_t)gf_n;
            xr_chunk();
#else
            sm_read(gf_w0, wb, gf_wn);
            gf_w0 += gf_wn;
            for (j = 0; j < gf_n; ++j)
                xs_add_product(widen_at(fmt, wb, j), xb[j]);
#endif
        }
        gf_xread = cols > gf_cap;
        for (gf_k = 0; gf_k < gf_nr; ++gf_k, gf_wr += gf_rb) {
#ifdef XS_ASM
            xs_load((uint8_t *)((uint16_t)xr_pgs[gf_k] << 8));
            if (flags == 0) { /* plain f32 stores: the running output address, no store() */
                sm_write32(gf_z, xs_round());
                gf_z += 4;
                continue;
            }
#endif
            store(flags, z, gf_r0 + gf_k, xs_round());
        }
        gf_r0 += gf_nr;
    }
}

/* GEMV: y = W·x, W = `rows` rows of `cols` in format fmt at w, x = f32[cols] at x, y to z.
 * Checks in machine.rs's order: format, whole blocks, x, old y (ACC), W, y. */
uint8_t sg_gemv(uint8_t fmt, uint8_t flags, uint32_t w, uint32_t x, uint32_t z, uint32_t cols, uint32_t rows)
{
    static uint32_t rb; /* (static: sgq_gemv finds the arguments at the frame's start) */
    static uint8_t e;
    /* (blen is 1 or 32: no 32-bit division) */
    if (!format(fmt) || (blen == 32 && (cols & 31) != 0))
        return SS_ERR_BAD_OPERAND;
    /* Once x fits memory, cols < 2²⁶ and the row's bytes fit 32 bits. */
    rb = sc_mul_sat(blen == 32 ? cols >> 5 : cols, bbytes);
    if ((e = span4(x, cols)) != 0)
        return e;
    if ((flags & GEMV_ACC) && (e = span4(z, rows)) != 0)
        return e;
    if ((e = sc_span(w, sc_mul_sat(rows, rb))) != 0)
        return e;
    if ((e = flags & GEMV_F16OUT ? sc_span(z, sc_mul_sat(rows, 2)) : span4(z, rows)) != 0)
        return e;
    if (blen == 32) {
#ifdef SG_ASM
        sgq_rb = rb;
        sgq_gemv();
#else
        gemv_q(fmt, flags, w, x, z, cols, rows, rb);
#endif
    } else {
        sc_keep = 0; /* (its buffers overlay the quants) */
        gemv_float(fmt, flags, w, x, z, cols, rows, rb);
    }
    return SC_OK;
}

/* DEQROW: f32[n0] at z = n0 elements of format fmt at src (whole blocks): floats widened
 * exactly (F32 copied bit for bit), Q8_0/Q4_0 as single(d·q), exact. */
uint8_t sg_deqrow(uint8_t fmt, uint32_t src, uint32_t z, uint32_t n0)
{
    uint32_t at;
    uint16_t n, j;
#ifndef SV_ASM
    f32 d;
#endif
    uint8_t e;
    const uint8_t *qs = sc_w.dq.blk + 2;
    if (!format(fmt) || n0 % blen != 0)
        return SS_ERR_BAD_OPERAND;
    if ((e = span4(z, n0)) != 0 || (e = sc_span(src, sc_mul_sat(n0 / blen, bbytes))) != 0)
        return e;
    if (blen == 32) {
        for (at = 0; at < n0 && !SC_POLL(); at += 32, src += bbytes) {
            sm_read(src, sc_w.dq.blk, bbytes);
#ifdef SV_ASM
            sv_h = sc_w.dq.blk[0] | (uint16_t)sc_w.dq.blk[1] << 8;
            sv_q = qs;
            if (fmt != WT_Q8_0) {
                for (j = 0; j < 16; ++j) {
                    sc_w.dq.q4[j] = (int8_t)((qs[j] & 15) - 8);
                    sc_w.dq.q4[j + 16] = (int8_t)((qs[j] >> 4) - 8);
                }
                sv_q = sc_w.dq.q4;
            }
            sv_p = sc_w.dq.out;
            sv_n = 32;
            sv_k_deq();
#else
            d = sf_from_f16(sc_w.dq.blk[0] | (uint16_t)sc_w.dq.blk[1] << 8);
            if (fmt == WT_Q8_0) {
                for (j = 0; j < 32; ++j)
                    sc_w.dq.out[j] = sf_mul(d, sf_from_i32((int8_t)qs[j]));
            } else {
                for (j = 0; j < 16; ++j) {
                    sc_w.dq.out[j] = sf_mul(d, sf_from_i32((int16_t)(qs[j] & 15) - 8));
                    sc_w.dq.out[j + 16] = sf_mul(d, sf_from_i32((int16_t)(qs[j] >> 4) - 8));
                }
            }
#endif
            sm_write(z + 4 * at, sc_w.dq.out, 128);
        }
        return SC_OK;
    }
    for (at = 0; at < n0 && !SC_POLL(); at += n) {
        n = n0 - at < SC_VEC ? (uint16_t)(n0 - at) : SC_VEC;
        sm_read(src + at * bbytes, &sc_w.gf.w, n * bbytes);
        for (j = 0; j < n; ++j)
            sc_w.gf.x[j] = widen_at(fmt, (const uint8_t *)&sc_w.gf.w, j);
        sm_write(z + 4 * at, sc_w.gf.x, 4 * n);
    }
    return SC_OK;
}
