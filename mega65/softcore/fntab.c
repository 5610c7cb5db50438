/* fntab.c: the function tables (fn_tables.h) in segments of their own in cc65 builds: exp and
 * SiLU (4 KB) in FNTAB, GELU (2 KB) in FNTAB2. The shipped core's link (linker/softcore.cfg) puts
 * both outside the core's window: FNTAB in chip RAM 0.D000-0.DFFF under the I/O page (SC_TAB in
 * softcore_abi.inc), FNTAB2 at the top of the program's chip RAM bank 5 (SC_TAB2); the program loads
 * them there from the end of ssnail.core. The CPU cannot see them there: only softvec65.s reads
 * these tables, by flat accesses. The softcore_test PRG links both segments in its own image. The
 * PC build defines every table in softvec.c instead. */
#ifdef __CC65__
#pragma rodata-name(push, "FNTAB")
#define FN_EXP_DATA
#define FN_SILU_DATA
#include "fn_tables.h"
#pragma rodata-name(pop)
#pragma rodata-name(push, "FNTAB2")
#undef FN_TABLES_H
#undef FN_EXP_DATA
#undef FN_SILU_DATA
#define FN_GELU_DATA
#include "fn_tables.h"
#pragma rodata-name(pop)
#endif
