/* softcall.h: C's view of softcall.s — the mailbox and the trampoline into the software SSNAIL
 * core, which is linked on its own and seen at $2000-$BFFF only during soft_call (softcore_abi.inc has
 * the window, the entries and the mailbox addresses). */
#ifndef SOFTCALL_H
#define SOFTCALL_H
#include <stdint.h>
#define SC_INIT 0   /* clear the core's BSS, set its C stack (after loading the file) */
#define SC_GO 1     /* soft_mem_end = sc_memend; soft_go(sc_job) */
#define SC_RUN 2    /* sc_result = soft_run(sc_budget); sc_error, sc_faultpc updated */
void __fastcall__ soft_call(uint8_t entry);
extern volatile uint32_t sc_job, sc_memend, sc_faultpc;
extern volatile uint16_t sc_budget;
extern volatile uint8_t sc_result, sc_error;
extern const uint32_t sc_phys;      /* chip RAM where the core file is loaded (SC_PHYS) */
/* the file: a window part (its length in the header, SC_HDR_LEN) for sc_phys, then the function
 * tables, sc_tab_size[i] bytes for sc_tab[i] in turn (softcore_abi.inc SC_TAB: chip RAM 0.D000, the
 * exp and SiLU tables; SC_TAB2: 5.B800, GELU's), a size 0 after the last; sc_tab_bytes in all */
extern const uint32_t sc_tab[];
extern const uint16_t sc_tab_size[];
extern const uint16_t sc_tab_bytes;
/* the header at far address addr (the file's first bytes): the window part's length when the
 * magic ("SNLC"), the ABI version and every length in it are right for this program's window,
 * else 0 */
uint16_t __fastcall__ soft_header(uint32_t addr);
/* after the whole file is loaded: 1 = its check sums (softcore_abi.inc SC_HDR_SUM) are the header's */
uint8_t soft_sums_ok(void);
#endif
