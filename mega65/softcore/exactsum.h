/* exactsum.h: the exact sum of products for GEMV with F32, F16 and BF16 weights (§5.3 "all
 * products are summed exactly and the row is rounded to single once"): a wide fixed-point
 * accumulator that holds any sum of f32·f32 products without rounding, then one rounding to
 * single (nearest even) — the same value as ssnail_core::exact::ExactSum::round_f32, including
 * its rules for infinities and NaN. One accumulator (the core computes one row at a time). */
#ifndef EXACTSUM_H
#define EXACTSUM_H
#include "softfloat.h"

void xs_clear(void);
void xs_add_product(f32 a, f32 b); /* acc += a·b exactly */
/* acc += w·x exactly for an F16 weight w (= xs_add_product(sf_from_f16(w), x), without the
 * widening: GEMV with F16 weights) */
void xs_add_product_f16(uint16_t w, f32 x);
f32 xs_round(void);                /* the accumulated sum rounded once to single */

/* The accumulator itself (little-endian two's complement, exactsum.c), for exactsum65.s, and
 * its products that are not finite (exactsum.c's XS_* bits), shared with exactadd.c. */
#define XS_BYTES 74
extern uint8_t xs_acc[XS_BYTES];
extern uint8_t xs_special;
#define XS_PLUS_INF 1
#define XS_MINUS_INF 2
#define XS_NAN 4

#if defined(__CC65__) && !defined(SC_C_GEMV)
/* exactsum65.s (cc65 builds): xs_acc += w_j·x_j for j < xs_n (1..XS_PIECE), the weights of
 * format xs_fmt at xs_wb (4 or 2 bytes each) and the input at xs_xb — xs_add_product on each
 * pair, the same bytes; then xs_xb and xs_wb point past the piece. Pairs with a zero, subnormal,
 * inf or NaN operand go to xs_slow(j), which the caller defines as xs_add_product(widened
 * xs_wb's w_j, xs_xb[j]) (both pointers still at the piece). */
#define XS_ASM 1 /* (and exactround65.s's xs_top starts xs_round, exactsum.c) */
#define XS_PIECE 63
extern uint8_t xs_fmt, xs_n;
extern const f32 *xs_xb;
extern const uint8_t *xs_wb;
void xs_chunk(void);
void xs_slow(uint8_t j);
#endif

#endif
