/* softfloat_ops.c: softfloat_ops.h's dispatch (shared by the PC and MEGA65 test drivers). */
#include "softfloat_ops.h"
#include "softfloat.h"
#include "exactsum.h"

uint32_t sf_op(uint8_t op, uint32_t a, uint32_t b, uint8_t *ok)
{
    *ok = 1;
    switch (op) {
    case SFOP_NOP:
        return 0;
    case SFOP_ADD:
        return sf_add(a, b);
    case SFOP_SUB:
        return sf_sub(a, b);
    case SFOP_MUL:
        return sf_mul(a, b);
    case SFOP_DIV:
        return sf_div(a, b);
    case SFOP_SQRT:
        return sf_sqrt(a);
    case SFOP_RECIP:
        return sf_recip(a);
    case SFOP_RSQRT:
        return sf_rsqrt(a);
    case SFOP_FROM_I32:
        return sf_from_i32((int32_t)a);
    case SFOP_FROM_U32:
        return sf_from_u32(a);
    case SFOP_FROM_F16:
        return sf_from_f16((uint16_t)a);
    case SFOP_FROM_BF16:
        return sf_from_bf16((uint16_t)a);
    case SFOP_TO_F16:
        return sf_to_f16(a);
    case SFOP_FLOOR_I32:
        return (uint32_t)sf_floor_i32(a);
    case SFOP_ROUND_I32:
        return (uint32_t)sf_round_i32(a);
    case SFOP_LT:
        return sf_lt(a, b);
    case SFOP_LE:
        return sf_le(a, b);
    case SFOP_IS_NAN:
        return sf_is_nan(a);
    case SFOP_XS_CLEAR:
        xs_clear();
        return 0;
    case SFOP_XS_ADD:
        xs_add_product(a, b);
        return 0;
    case SFOP_XS_ADD_F16:
        xs_add_product_f16((uint16_t)a, b);
        return 0;
    case SFOP_XS_ROUND:
        return xs_round();
    case SFOP_ROUND_PACK:
        return sf_round_pack((uint8_t)(b >> 16), (int16_t)(uint16_t)b, a);
    case SFOP_MUL32_LO:
        sf_mul32(a, b);
        return sf_plo.u;
    case SFOP_MUL32_HI:
        sf_mul32(a, b);
        return sf_phi.u;
    }
    *ok = 0;
    return 0;
}
