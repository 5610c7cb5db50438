/* device.h: the SSNAIL core that runs jobs — the FPGA core's registers at $FFD7500 (spec §9.2)
 * or the software core on the 45GS02 (softcall.h) — behind one set of calls for chat.c and
 * loader.c. Both see SSNAIL memory at $8000000 (the CPU's attic window), so an image, its runtime
 * block, token buffer and KV cache are the same bytes whichever core runs the job. */
#ifndef DEVICE_H
#define DEVICE_H
#include <stdint.h>

#define CORE_NONE 0
#define CORE_FPGA 1
#define CORE_SOFT 2
extern uint8_t core;               /* the core jobs go to (dev_select) */
extern uint8_t fpga_version, fpga_caps;
extern uint32_t fpga_mem, soft_mem; /* bytes of SSNAIL memory each core has (0 = none) */

/* software core file (dev_soft_load's result) */
#define SOFT_LOADED 0
#define SOFT_NO_FILE 1      /* no "ssnail.core" on the disk in drive 0 */
#define SOFT_BAD_FILE 2     /* not a software core of this program's build (magic, version, size) */
#define SOFT_NO_ATTIC 3     /* a board without known attic RAM ($D629) */
extern uint8_t soft_status;
extern const char soft_file[];     /* "ssnail.core" */

/* reads the disk's ssnail.core into chip RAM and initialises it (once, at start) */
void dev_soft_load(void);
/* 1 = core `which` is there; sets core and avail_mem (models.h) */
uint8_t dev_select(uint8_t which);

void dev_go(uint32_t job);
/* 1 while the job runs. The software core runs a slice of the job in each call and sets
 * dev_synced when the slice ended at a SYNC (the caller clears it). */
uint8_t dev_busy(void);
extern uint8_t dev_synced;
uint8_t dev_error(void);
uint32_t dev_fault_pc(void);
/* n bytes from bank 0 into SSNAIL memory: the load port (FPGA) or DMA (software core); 1 = ok,
 * 0 = refused (outside the image's memory, imgmem.h) or the load port failed */
uint8_t dev_write(uint32_t addr, const void *src, uint16_t n);
/* RUN/STOP during a job: the FPGA core gets the runtime block's stop_request = 1 (the script
 * stops after the current token); the software core's job ends at once (dev_ended). */
void dev_stop(void);
/* 1 = the last job was ended by RUN/STOP before its HALT: on the software core by dev_stop or
 * in the middle of an instruction (SOFT_STOPPED); its stop_reason was not written */
extern uint8_t dev_ended;
/* software core: where the job is (its next instruction), after each dev_busy */
uint32_t dev_job_pc(void);
#endif
