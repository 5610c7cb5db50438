/* softfloat.h: IEEE 754 single-precision arithmetic on bit patterns, for the software SSNAIL core.
 *
 * Why by hand: cc65 has no floating point and no 64-bit integers, and the core must round exactly
 * as the hardware numerics define (docs/spec/numerics.md §5.3): every result is the IEEE single
 * nearest to the exact result, ties to even, with subnormals (no flush to zero), overflow to
 * ±infinity. The same C builds for the 45GS02 (cc65) and for the PC, where the tests compare it
 * with Rust's single arithmetic (mega65/tests/softfloat_*.rs). Only 8-, 16- and 32-bit integer
 * types are used. Not reentrant (working values are statics, which cc65 reaches fastest); costs
 * in cycles on the 45GS02: docs/FINDINGS.md, "Software core: single-precision arithmetic". */
#ifndef SOFTFLOAT_H
#define SOFTFLOAT_H
#include <stdint.h>

typedef uint32_t f32; /* an IEEE single as its bit pattern */

#define SF_ZERO 0x00000000UL
#define SF_ONE 0x3F800000UL
#define SF_NEG_ZERO 0x80000000UL
#define SF_INF 0x7F800000UL
/* The one NaN every operation here returns when its result is NaN (docs/spec/numerics.md §5.3:
 * NaN payloads and signs are not part of the hardware numerics); sf_to_f16 returns SF_F16_NAN.
 * sf_from_bf16 is the exact widening bits << 16 and keeps a NaN's bits. */
#define SF_NAN 0x7FC00000UL
#define SF_F16_NAN 0x7E00u

/* A 32-bit value as bytes and 16-bit halves (both targets are little-endian). */
typedef union {
    uint32_t u;
    uint16_t w[2];
    uint8_t b[4];
} sf_word;

/* x·y, 64 bits, into sf_phi:sf_plo: the MEGA65 hardware multiplier under cc65 (define
 * SF_PORTABLE_MUL for the portable C version there too), four 16×16-bit products on the PC. */
void sf_mul32(uint32_t x, uint32_t y);
extern sf_word sf_plo, sf_phi;

#if defined(__CC65__) && !defined(SF_PORTABLE_MUL)
/* The MEGA65 multiplier and divider (docs/spec/mega65.md §M9; emu/mega65/src/math.rs): inputs A
 * at $D770-$D773 and B at $D774-$D777, the 64-bit product at $D778-$D77F (ready with no
 * trigger), (A << 32) / B as 32.32 at $D768-$D76F (after DIVBUSY). softfloat.c and exactsum.c
 * use them directly in their hot paths (products, shifts by 1-7 places, division). */
#define SF_HWMUL 1
#include "mega65_io.h"
#define SF_MULTINA (*(volatile uint32_t *)MATH_MULTINA)
#define SF_MULTINB (*(volatile uint32_t *)MATH_MULTINB)
#define SF_MULTINB_B ((volatile uint8_t *)MATH_MULTINB)
#define SF_MULTOUT ((volatile uint8_t *)MATH_MULTOUT)
#define SF_MULTOUT_LO (*(volatile uint32_t *)MATH_MULTOUT)
#define SF_MULTOUT_HI (*(volatile uint32_t *)MATH_MULTOUT_HIGH)
#define SF_DIVOUT_FRAC (*(volatile uint32_t *)MATH_DIVOUT) /* fraction of (A << 32) / B */
#define SF_DIVBUSY (*(volatile uint8_t *)MATH_BUSY)      /* bit 7 while the divider works */
#endif

/* The single nearest to (−1)^neg · sig · 2^(e − 157), ties to even, with subnormal results and
 * overflow to ±inf: sig != 0 has its leading 1 at bit 30 (bits 6..0 below the result's last
 * place, bit 0 sticky), or e == 1 and sig < 2^30. The rounding every operation here ends with,
 * for callers that form a significand themselves. */
f32 sf_round_pack(uint8_t neg, int16_t e, uint32_t sig);

f32 sf_add(f32 a, f32 b);
f32 sf_sub(f32 a, f32 b);
f32 sf_mul(f32 a, f32 b);
f32 sf_div(f32 a, f32 b);
f32 sf_sqrt(f32 a);
/* recip(x) = 1/x correctly rounded; rsqrt(x) = recip(sqrt(x)), two roundings (§5.3) */
f32 sf_recip(f32 a);
f32 sf_rsqrt(f32 a);
#if defined(SF_HWMUL) && !defined(SC_C_GEMV)
/* exactround65.s: recip(a) by the divider for a normal a with a normal reciprocal, else
 * SF_RECIP_NO (sf_recip then divides) */
#define SF_RECIP_ASM 1
#define SF_RECIP_NO 0xFFFFFFFFUL
f32 sf_recip65(f32 a);
#endif

f32 sf_from_i32(int32_t v); /* rounded to nearest even */
f32 sf_from_u32(uint32_t v);
f32 sf_from_f16(uint16_t h); /* exact */
f32 sf_from_bf16(uint16_t h); /* exact */
uint16_t sf_to_f16(f32 a);   /* nearest even, overflow to ±inf */

/* Integer results with Rust's `as i32` semantics (saturating, NaN -> 0):
 * sf_floor_i32 = (a.floor() as i32), sf_round_i32 = (a.round() as i32), C roundf: half away from zero. */
int32_t sf_floor_i32(f32 a);
int32_t sf_round_i32(f32 a);

/* IEEE comparisons: false when either operand is NaN; -0 == +0. */
uint8_t sf_lt(f32 a, f32 b);
uint8_t sf_le(f32 a, f32 b);
uint8_t sf_is_nan(f32 a);

#endif
