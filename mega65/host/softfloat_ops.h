/* softfloat_ops.h: one operation of softfloat.h / exactsum.h chosen by number, for the test drivers
 * (softfloat_host.c on the PC, softfloat_test.c on the MEGA65). A record is 12 bytes, little-endian: the
 * operation in byte 0 (bytes 1-3 zero), operand a (4 bytes), operand b (4 bytes); its result is
 * 4 bytes (floats as bit patterns, integers as two's complement, flags 0/1, 0 for operations
 * with no result). The numbers are also in mega65/tests/softfloat_common/mod.rs. */
#ifndef SFOPS_H
#define SFOPS_H
#include <stdint.h>

#define SFOP_NOP 0 /* result 0: the drivers' own cost */
#define SFOP_ADD 1
#define SFOP_SUB 2
#define SFOP_MUL 3
#define SFOP_DIV 4
#define SFOP_SQRT 5 /* of a */
#define SFOP_RECIP 6
#define SFOP_RSQRT 7
#define SFOP_FROM_I32 8
#define SFOP_FROM_U32 9
#define SFOP_FROM_F16 10 /* of a's low 16 bits */
#define SFOP_FROM_BF16 11
#define SFOP_TO_F16 12 /* result in the low 16 bits */
#define SFOP_FLOOR_I32 13
#define SFOP_ROUND_I32 14
#define SFOP_LT 15
#define SFOP_LE 16
#define SFOP_IS_NAN 17
#define SFOP_XS_CLEAR 18
#define SFOP_XS_ADD 19 /* acc += a·b */
#define SFOP_XS_ROUND 20
#define SFOP_ROUND_PACK 21 /* sf_round_pack(b >> 16, (int16_t)b, a) */
#define SFOP_MUL32_LO 22   /* sf_mul32(a, b), low 32 bits */
#define SFOP_MUL32_HI 23   /* high 32 bits */
#define SFOP_XS_ADD_F16 24 /* acc += a·b, a an F16 in the low 16 bits */

/* The result of operation op on a and b; *ok = 0 for an unknown op. */
uint32_t sf_op(uint8_t op, uint32_t a, uint32_t b, uint8_t *ok);

#endif
