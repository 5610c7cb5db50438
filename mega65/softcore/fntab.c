/* fntab.c: the exp and SiLU tables (fn_tables.h, 4 KB) in their own segment, FNTAB, in cc65
 * builds. The shipped core's link (linker/softcore.cfg) puts FNTAB outside the core's window, in
 * chip RAM 0.D000-0.DFFF under the I/O page (SC_TAB in softcore_abi.inc; the program loads it there
 * from the end of ssnail.core), where the CPU cannot see it: only softvec65.s reads these tables,
 * by flat accesses. The softcore_test PRG links FNTAB in its own image. The PC build defines every
 * table in softvec.c instead. */
#ifdef __CC65__
#pragma rodata-name(push, "FNTAB")
#define FN_EXP_DATA
#define FN_SILU_DATA
#include "fn_tables.h"
#pragma rodata-name(pop)
#endif
