/* softvec65.h: softvec65.s, the vector instructions' single multiply and add on the 45GS02 and
 * the inner loops built on them (cc65 builds without -DSC_C_GEMV; the C in softvec.c and
 * softattn.c stays the definition and runs everywhere else). Operands, results and the loops'
 * pointers are zero-page variables, so no 32-bit value crosses cc65's C stack in a hot loop.
 * Special operands and results go back to softfloat.c (sv_slow_*, softvec.c), bit for bit. */
#ifndef SOFTVEC65_H
#define SOFTVEC65_H
#if defined(__CC65__) && !defined(SC_C_GEMV)
#define SV_ASM 1
#include "softfloat.h"

extern f32 sv_a, sv_b, sv_r; /* sv_r = single(sv_a · sv_b), single(sv_a + sv_b) */
/* softvec.c's chunk loops, for (sv_from0(); sv_more(len);): sv_from0 sets sv_at = sv_cn = 0;
 * sv_more(len) adds sv_cn to sv_at, then is 0 when sv_at = len (sv_at <= len) or RUN/STOP
 * (SC_POLL), else sets sv_cn = min(len − sv_at, sv_vmax) and is 1 (softvec.c's more()) */
extern uint16_t sv_cn, sv_vmax;
extern uint32_t sv_at;
void sv_from0(void);
uint8_t sv_more(uint32_t len);
/* sc_span(a, 4·n0) with the product saturated (softvec.c's span4) */
uint8_t sv_span4(uint32_t a, uint32_t n0);
extern f32 sv_c, sv_acc;     /* a kernel's scalar and running sum */
extern f32 *sv_p;            /* kernel operands: x (overwritten), y / K / V */
extern const void *sv_q;
extern uint8_t sv_n;         /* elements (pairs for ROPE), 1..255 */
extern uint16_t sv_h;        /* sv_f16's input */
/* a function table for sv_tab1 and sv_k_tabmul (softvec.c's table(): bounds, k, segments,
 * rules); tab says which segments (SV_TAB_*): softvec65.s holds their flat addresses and reads
 * them only by flat accesses, as they lie outside the core's window (fntab.c) */
#define SV_TAB_EXP 0
#define SV_TAB_SILU 1
#define SV_TAB_GELU 2
struct sv_tab {
    f32 lo, hi, k;
    uint16_t tab;
    uint8_t below, above;
};
extern const struct sv_tab *sv_tabd;
extern const struct sv_tab sv_exp_tab; /* softvec.c */
#pragma zpsym("sv_a")
#pragma zpsym("sv_b")
#pragma zpsym("sv_r")
#pragma zpsym("sv_c")
#pragma zpsym("sv_acc")
#pragma zpsym("sv_p")
#pragma zpsym("sv_q")
#pragma zpsym("sv_n")
#pragma zpsym("sv_h")
#pragma zpsym("sv_tabd")

/* sv_mul, sv_add and sv_f16 leave Z (scratch in softvec65.s) nonzero, which cc65's code and
 * softmem_m65.s take as 0: only the assembler calls them; C calls sv_mulz */
void sv_mul(void);
void sv_add(void);
void sv_f16(void); /* sv_b = sv_h widened */
void sv_mulz(void); /* sv_mul, then Z = 0 */
void sv_addz(void); /* sv_add, then Z = 0 */
void sv_sqrt(void); /* sv_r = sqrt(sv_a), for C */
/* sv_r = table(sv_a) */
void sv_tab1(void);
/* x[i] = single(table(x[i])·y[i]) */
void sv_k_tabmul(void);
/* x[i] = table(x[i]) */
void sv_k_tab(void);
/* x[i] = single(x[i] + y[i]), or (mul) single(x[i]·y[i]) */
void sv_k_vop(uint8_t mul);
/* F16 y[i] (2 bytes each at sv_q) = x[i] rounded to nearest even */
void sv_k_cvt16(void);
/* x[i] = single(d·q[i]) for the int8s q at sv_q, d the F16 sv_h (DEQROW's Q blocks) */
void sv_k_deq(void);
/* ARGMAX's chunk: 1 + the index of the last element whose order key beats sv_acc (updated), or 0 */
uint8_t sv_k_argmax(void);
/* s[i] = exp_table(single(s[i] + sv_c)), sv_acc = single(sv_acc + s[i]) (ATTN, sv_c = −max) */
void sv_k_expsum(void);
/* sv_acc = single(sv_acc + single(x[i]·x[i])) */
void sv_k_sumsq(void);
/* LAYERNORM's passes (sv_c = −mu): sv_acc = single(sv_acc + x[i]); sv_acc = single(sv_acc +
 * single(d·d)) with d = single(x[i] + sv_c), d kept in x[i] when keep; and with sv_acc = r, x[i] =
 * single(single(single(d·r)·y[i]) + b[i]), b at sv_q + (boff & 0xFC) bytes, x[i] taken as d
 * when boff's bit 0 is set */
void sv_k_sum(void);
void sv_k_sumsqd(uint8_t keep);
void sv_k_lnout(uint8_t boff);
/* x[i] = single(x[i]·sv_c) */
void sv_k_scale(void);
/* x[i] = single(single(x[i]·sv_c)·y[i]) */
void sv_k_scale2(void);
/* sv_n pairs of x, (c, s) pairs at sv_q: ROPE's rotation; the pairs start again at sv_rq after
 * sv_rw pairs and every sv_rh pairs after that (sv_rw = 0: not within a call) */
extern uint8_t sv_rw, sv_rh;
extern const f32 *sv_rq;
void sv_k_rope(void);
/* sv_acc = single(sv_acc + single(x[i]·k[i])), k F32 or (f16) F16 */
void sv_k_dot(uint8_t f16);
/* ATTN's kept scores for one head, q one chunk: for t = 0..sv_rl (until SC_POLL() sees RUN/STOP)
 * the K row at sv_ra (sv_rb bytes, sv_rn elements, F16 when f16) into sv_kb, its score
 * single(dot(q at sv_qb, row)·sv_c) to sv_sp[t], their maximum (sf_lt) in sv_m from its value
 * before; sv_ra steps by sv_rs, sv_sp moves past the scores */
extern uint32_t sv_ra, sv_rs;
extern f32 sv_m;
extern uint16_t sv_rb, sv_rl;
extern f32 *sv_qb, *sv_sp;
extern void *sv_kb;
extern uint8_t sv_rn;
void sv_k_scores(uint8_t f16);
/* ATTN's output chunk over the kept weights: for t = 0..sv_rl (until SC_POLL() sees RUN/STOP)
 * o[i] = single(o[i] + single(w_t·v_t,i)), o at sv_qb (sv_rn elements), w_t at sv_sp[t], the
 * chunk of V row t at sv_ra (sv_rb bytes, F16 when f16), sv_ra stepping by sv_rs; the rows come
 * as many at a time (at most 255) as fit from the weights' end (sv_sp[sv_rl + 1]) to sv_vend */
void sv_k_avs(uint8_t f16);
/* ATTN's heads with the scores kept and q one chunk (softattn.c's head loop with the same kernels
 * in the same order): sa_nh heads (1..255), q's, K's, V's and the output's first head at sa_qh,
 * sa_kh, sa_vh, sa_z, sa_grp heads a KV head, sa_hq = 4·head_dim; sv_rb (head_dim·esz), sv_rn
 * (head_dim), sv_rs, sv_rl (T − 1, at most 255) and sv_kb set; q's buffer sa_qb, the scores'
 * sa_sp, the scale sa_scale (softattn.c's); the output chunk is sc_w.at.o, at the union's start */
extern f32 *const sa_qb, *const sa_sp;
extern f32 sa_scale;
extern uint32_t sa_qh, sa_kh, sa_vh, sa_z;
extern uint8_t sa_nh, sa_grp, sa_hq;
void sv_k_attn(uint8_t f16);
/* ATTN's weights in place from the kept scores at sa_sp (sv_rl + 1 of them, at most 256) and
 * their largest, sv_m: w_t = single(exp_table(single(s_t − m))·sf_recip(z)), z their sum from +0 */
void sv_k_smax(void);
/* the end of sv_k_avs's buffer (softattn.c): the union sc_w's */
extern const void *const sv_vend;
/* the fallbacks, softfloat.c's operations on the same operands (softvec.c) */
void sv_slow_mul(void);
void sv_slow_add(void);
void sv_slow_f16(void);
void sv_slow_cvt(void); /* sv_h = sf_to_f16(sv_a) */
void sv_slow_sqrt(void); /* sv_r = sf_sqrt(sv_a) */
#endif
#endif
