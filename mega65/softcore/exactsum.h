/* exactsum.h: the exact sum of products for GEMV with F32, F16 and BF16 weights (§5.3 "all
 * products are summed exactly and the row is rounded to single once"): a wide fixed-point
 * accumulator that holds any sum of f32·f32 products without rounding, then one rounding to
 * single (nearest even) — the same value as ssnail_core::exact::ExactSum::round_f32, including
 * its rules for infinities and NaN. One accumulator (the core computes one row at a time). */
#ifndef EXACTSUM_H
#define EXACTSUM_H
#include "softfloat.h"
#include "fn_tables.h" /* XS_ and XR_: the accumulator and the row pages */

void xs_clear(void);
void xs_add_product(f32 a, f32 b); /* acc += a·b exactly */
/* acc += w·x exactly for an F16 weight w (= xs_add_product(sf_from_f16(w), x), without the
 * widening: GEMV with F16 weights) */
void xs_add_product_f16(uint16_t w, f32 x);
f32 xs_round(void);                /* the accumulated sum rounded once to single */

/* The accumulator itself (little-endian two's complement, exactsum.c), for exactsum65.s, and
 * its products that are not finite (XS_ bits), shared with exactadd.c. The XS_ and XR_ numbers
 * are fn_tables.h's (generated, one definition for the C and the ca65). */
extern uint8_t xs_acc[XS_BYTES];
extern uint8_t xs_special;

#if defined(__CC65__) && !defined(SC_C_GEMV)
/* exactsum65.s (cc65 builds): rows inner. softgemv.c keeps up to XR_ROWS rows at once, each in
 * its own 256-byte page: its accumulator (XS_BYTES, biased as xs_clear leaves xs_acc) at offset 1
 * (so that a product whose lowest byte lies below the accumulator's, always a zero byte, has one),
 * the next row's page (high byte; 0 after the last) at XR_LINK, its special products (the XS_
 * bits) at XR_SPEC, the chunk's xr_n weights of format xr_fmt at XR_W (2 or 4 bytes each;
 * xr_n at most XR_N, XR_N32 for F32). xr_chunk adds w_rj·x_j for j < xr_n (the input at xr_x) to
 * every row, each x_j unpacked once for the rows; a product with an infinite or NaN operand goes
 * to the caller's xr_spec(page) (that row's page; j = xr_jy / 4), which must leave the hardware
 * multiplier's inputs alone (xr_chunk keeps x_j in MULTINB for the rows after it). */
#define XS_ASM 1 /* (and exactround65.s's xs_top starts xs_round, exactsum.c) */
/* XR_ROWS rows a block: XR_UROWS pages in the buffer union (sc_w.gb), the input's page after
 * them, and XR_SROWS at xr_stk, the lowest pages of the core's C stack, when the stack is above
 * them by XR_DEPTH bytes or more at gemv_float's arguments (the most its calls below take, with
 * room to spare); else blocks of XR_UROWS. */
extern uint8_t xr_fmt, xr_pg, xr_n, xr_jy;
extern const f32 *xr_x;
extern uint8_t xr_pgs[XR_ROWS]; /* the block's pages (high bytes), in row order */
extern uint8_t xr_stk[];        /* the C stack's lowest page */
void xr_start(uint8_t nr); /* xr_pgs' first nr pages cleared (bias, no specials) and linked */
void xr_chunk(void);
/* the chunk's xr_wn bytes of each of the block's rows from xr_wa on (rows xr_rb bytes apart) into
 * their pages at XR_W; xr_wa += xr_wn */
extern uint32_t xr_wa, xr_rb;
extern uint8_t xr_wn;
void xr_load(void);
void xr_spec(uint8_t page);
/* xs_acc and the special products from one of those pages (then xs_round rounds that row) */
void xs_load(const uint8_t *page);
/* the special-product bits (XR_SPEC's) of a·b when a or b is infinite or NaN */
uint8_t xs_spec(f32 a, f32 b);
#endif

#endif
