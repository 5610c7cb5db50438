/* sampler_tables.h: GENERATED from format/src/sampler.rs (spec §7.6); do not edit.
 * cargo run -q -p ssnail-format --example sampler_tables > mega65/include/sampler_tables.h */
#ifndef SAMPLER_TABLES_H
#define SAMPLER_TABLES_H
#include <stdint.h>
#define SMP_WINDOW           64
#define SMP_MAX_TOP_K        64
#define SMP_MAX_MILLI        60000U
#define SMP_Z_CUT            4096
#define SMP_LIMIT            0x40000000L
#define SMP_KEY_EXCL_MAX     0x007FFFFFUL
#define SMP_KEY_NAN_MIN      0xFF800001UL
/* round(2^15 exp(-h/4)), h = 0..63 */
static const uint16_t smp_exp_hi[64] = {
    32768U, 25520, 19875, 15479, 12055,  9388,  7312,  5694,
     4435,  3454,  2690,  2095,  1631,  1271,   990,   771,
      600,   467,   364,   283,   221,   172,   134,   104,
       81,    63,    49,    38,    30,    23,    18,    14,
       11,     9,     7,     5,     4,     3,     2,     2,
        1,     1,     1,     1,     1,     0,     0,     0,
        0,     0,     0,     0,     0,     0,     0,     0,
        0,     0,     0,     0,     0,     0,     0,     0,
};
/* round(2^15 exp(-l/256)), l = 0..63 */
static const uint16_t smp_exp_lo[64] = {
    32768U, 32640, 32513, 32386, 32260, 32134, 32009, 31884,
    31760, 31636, 31513, 31390, 31267, 31146, 31024, 30903,
    30783, 30663, 30543, 30424, 30305, 30187, 30070, 29952,
    29836, 29719, 29603, 29488, 29373, 29259, 29144, 29031,
    28918, 28805, 28693, 28581, 28469, 28358, 28248, 28138,
    28028, 27919, 27810, 27701, 27593, 27486, 27379, 27272,
    27166, 27060, 26954, 26849, 26744, 26640, 26536, 26433,
    26330, 26227, 26125, 26023, 25922, 25821, 25720, 25620,
};
#endif
