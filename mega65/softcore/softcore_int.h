/* softcore_int.h: what the software core's files share (not for the program: it uses softcore.h).
 * Operands arrive resolved: addresses are addr(op) of docs/spec/isa.md §3.2, lengths are N0-N2.
 * Every operation checks all of its operand ranges, in the order the Rust core emulator does
 * (emu/core/src/machine.rs), before it writes anything, and returns 0 or a §3.4 fault code. */
#ifndef SOFTCORE_INT_H
#define SOFTCORE_INT_H
#include <stdint.h>
#include "softfloat.h"

/* Near-memory buffers. Vectors stream through SC_VEC-element chunks (even, for ROPE's pairs; ATTN's
 * through SC_ATTN_VEC);
 * GEMV with Q8_0/Q4_0 weights quantises at most SC_GEMV_COLS input elements at a time (a
 * multiple of 32) and carries SC_GEMV_ROWS row sums; ATTN keeps up to SC_ATTN_T scores and
 * recomputes them beyond that. The PC tests build the core with tiny values too, so that every
 * chunk boundary is crossed (mega65/tests/softcore_on_the_pc.rs). The Q8_0/Q4_0 buffers are laid
 * out per GEMV in the float GEMV's 1,536 bytes (SC_GQ_BYTES below): MiniLM's 384-row GEMVs take 2
 * row chunks of 192 (each block column's set-up is paid per chunk), its 1536-row ffn up 7, and
 * its 1,536-column ffn down input is quantised twice (docs/FINDINGS.md "Software core: the Q8_0
 * GEMV's negation and buffers laid out per GEMV"). */
#ifndef SC_VEC
#define SC_VEC 64
#endif
/* ATTN's q, K/V and output chunks: 32 (or SC_VEC when smaller), so that its member of the union
 * stays within the GEMV's; 64-element vector chunks take the norms and RoPE of a dim-64 model in
 * one chunk (docs/FINDINGS.md "Software core: SILUMUL, DEQROW, RoPE, dispatch and the padded
 * FFN") */
#ifndef SC_ATTN_VEC
#if SC_VEC < 32
#define SC_ATTN_VEC SC_VEC
#else
#define SC_ATTN_VEC 32
#endif
#endif
#ifndef SC_GEMV_COLS
#define SC_GEMV_COLS 768
#endif
#ifndef SC_GEMV_ROWS
#define SC_GEMV_ROWS 255
#endif
/* The quants, their scales and the row sums share SC_GQ_BYTES, laid out per GEMV (softgemv.c
 * GQ_LAYOUT): the whole input up to SC_GEMV_COLS columns, a wider one SC_GEMV_WCOLS at a time,
 * and as many rows (at most SC_GEMV_ROWS) as the rest leaves room for: 232 beside MiniLM's 384
 * columns (2 row chunks of its 384 rows, 7 of its 1,536), 200 beside 512 (its 1,536-column input
 * quantised twice), 136 beside 768. */
#ifndef SC_GQ_BYTES
#define SC_GQ_BYTES 1408
#endif
#ifndef SC_GEMV_WCOLS
#if SC_GEMV_COLS < 512
#define SC_GEMV_WCOLS SC_GEMV_COLS
#else
#define SC_GEMV_WCOLS 512
#endif
#endif
#ifndef SC_ATTN_T
#define SC_ATTN_T 256
#endif
/* Float-weight GEMV: SC_GF_N16 elements of the input and of an F16/BF16 row at a time, SC_GF_N32
 * with F32 weights (the input is read once per GEMV when it fits). Large chunks: the C around each
 * chunk (two DMA jobs through cc65's argument passing, 32-bit counters) cost ~85 cycles a weight
 * with 32-element chunks (docs/FINDINGS.md "Software core: float GEMV with large chunks"). */
#ifndef SC_GF_N16
#define SC_GF_N16 256
#endif
#ifndef SC_GF_N32
#define SC_GF_N32 192
#endif
#if defined(__CC65__) && !defined(SC_C_GEMV)
/* the float GEMV's five row pages and the input's page from the buffer's first page boundary on
 * (exactsum.h's XR_UROWS; softgemv.c checks) */
#define SC_GF_BYTES (255 + 6 * 256)
#elif 8 * SC_GF_N32 > 6 * SC_GF_N16
#define SC_GF_BYTES (8 * SC_GF_N32)
#else
#define SC_GF_BYTES (6 * SC_GF_N16)
#endif
#if SC_VEC < 2 || SC_VEC % 2 != 0 || SC_ATTN_VEC < 1 || SC_ATTN_VEC > SC_VEC || SC_GEMV_COLS < 32 || SC_GEMV_COLS % 32 != 0 || SC_GEMV_ROWS < 1 || SC_GEMV_ROWS > 255 || SC_GQ_BYTES % 4 != 0 || SC_GQ_BYTES < SC_GEMV_COLS / 32 * 36 + 4 || SC_GEMV_WCOLS < 32 || SC_GEMV_WCOLS % 32 != 0 || SC_GEMV_WCOLS > SC_GEMV_COLS || SC_ATTN_T < 1 || SC_GF_N16 < 1 || SC_GF_N32 < 1
#error "softcore_int.h: bad buffer sizes"
#endif

/* One set of buffers, shared: an instruction uses only its own member. */
union sc_work {
    struct {
        f32 x[SC_VEC], y[SC_VEC], b[SC_VEC];
        uint16_t h[SC_VEC]; /* CVT16's output */
    } v; /* vector ops: operands, results overwrite x */
    struct {
        /* the input chunk quantised to Q8_0 (§5.3), then the running row sums of this row
         * chunk (softgemv.c's gq_q and gq_acc, laid out per GEMV) */
        f32 qa[(SC_GQ_BYTES - SC_GEMV_COLS / 8) / 4];
        f32 d[SC_GEMV_COLS / 32]; /* the chunk's block scales (F16-rounded, widened) */
#if !defined(__CC65__) || defined(SC_C_GEMV)
        uint8_t blk[34]; /* one weight block (softgemv65.s has its own) */
#endif
        f32 x[32]; /* one input block while quantising */
    } gq;
    struct {
        f32 x[SC_VEC]; /* input chunk */
        union {
            f32 f[SC_VEC];
            uint16_t h[SC_VEC];
        } w; /* weight chunk: F32, or F16/BF16 */
    } gf; /* DEQROW of a float format */
    struct {
        /* the input chunk (f32[n]) and then the row's weights (n of 4 or 2 bytes): n = SC_GF_N32
         * or SC_GF_N16 */
        uint8_t b[SC_GF_BYTES];
    } gb; /* GEMV with F32, F16 or BF16 weights */
    struct {
        uint8_t blk[34];
        f32 out[32];
        int8_t q4[32]; /* a Q4_0 block's quants as int8s (cc65 builds) */
    } dq; /* DEQROW of a Q8_0/Q4_0 block */
    struct {
        f32 o[SC_ATTN_VEC]; /* output chunk */
        f32 s[SC_ATTN_T];   /* scores, then exp values */
        f32 q[SC_ATTN_VEC]; /* query chunk */
        union {
            f32 f[SC_ATTN_VEC];
            uint16_t h[SC_ATTN_VEC];
        } k; /* K or V chunk, F32 or F16 */
        /* cc65 builds: the weighted sums read blocks of V rows from s[T] to the union's end */
    } at;
};
extern union sc_work sc_w;

/* Fault codes (ssnail_regs.h SS_ERR_*) */
#define SC_OK 0

/* RUN/STOP inside an instruction. sc_poll() reads the keyboard (cc65 builds; the PC build has
 * none and returns 0) and latches sc_stop; an instruction whose loops see it set returns at once
 * (what it wrote so far stays) and soft_run ends the job with SOFT_STOPPED. Loops whose bodies
 * take a million cycles or more (a GEMV column chunk, an ATTN head) call sc_poll() every time;
 * the others SC_POLL(), which reads the keyboard every 256th call (a few ms of work). */
extern uint8_t sc_stop, sc_tick;
uint8_t sc_poll(void);
#define SC_POLL() (sc_stop || (!++sc_tick && sc_poll()))

/* 0 when [addr, addr + len) lies in SSNAIL memory (len 0: addr in [$8000000, end]), else
 * SS_ERR_ADDRESS. Lengths that do not fit 32 bits are passed as SC_HUGE. */
uint8_t sc_span(uint32_t addr, uint32_t len);
#define SC_HUGE 0xFFFFFFFFUL
/* a·b, or SC_HUGE when it does not fit 32 bits (then it exceeds any memory) */
uint32_t sc_mul_sat(uint32_t a, uint32_t b);
/* sc_keep: nonzero while the near buffers still hold what an instruction derived from SSNAIL
 * memory that nothing has written since (the Q8_0/Q4_0 GEMV's quantised input, softgemv.c), for
 * a later GEMV to take as it is. The instructions that neither write SSNAIL memory nor use the
 * buffers (NOP, SETN, LI, LDR, ADDI, LEA, the branches) leave it; every other one, GO and a
 * resume after SYNC (where the host may write SSNAIL memory) end it. */
extern uint8_t sc_keep;
/* The work of this job (softcore.h soft_work_limit), saturating: counted only with a limit. */
void sc_work_add(uint32_t n);
/* 1 when the work so far and `n` more would pass the limit (ATTN's check before it runs) */
uint8_t sc_work_over(uint32_t n);

/* The operations (softvec.c, softgemv.c, softattn.c). n0..n2 are N0-N2. */
/* VADD, VMUL, SILUMUL, GELU, CVT16 (op = the opcode; y unused by GELU and CVT16) */
uint8_t sv_map(uint8_t op, uint32_t x, uint32_t y, uint32_t z, uint32_t n0);
uint8_t sv_rmsnorm(uint32_t x, uint32_t g, uint32_t z, uint32_t n0, f32 eps);
uint8_t sv_layernorm(uint32_t x, uint32_t gb, uint32_t z, uint32_t n0, f32 eps);
uint8_t sv_rope(uint32_t x, uint32_t cs, uint32_t n0, uint32_t n1);
uint8_t sv_meanrows(uint32_t x, uint32_t z, uint32_t n0, uint32_t rows);
uint8_t sv_argmax(uint32_t x, uint32_t n0, uint32_t *index);
f32 sv_exp(f32 x); /* the exp table (§5.3), for ATTN */
uint8_t sg_gemv(uint8_t fmt, uint8_t flags, uint32_t w, uint32_t x, uint32_t y, uint32_t cols, uint32_t rows);
uint8_t sg_deqrow(uint8_t fmt, uint32_t src, uint32_t z, uint32_t n0);
uint8_t sa_attn(uint32_t blk, uint32_t q, uint32_t z, uint32_t last_row);

#endif
