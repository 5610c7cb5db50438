/* ssnail.h: the SSNAIL core emulator (crate ssnail-capi, emu/capi) for C hosts such as xemu.
 *
 * One device: the register block at $FFD7500-$FFD75FF (load port included) and SSNAIL's memory
 * from $8000000. Every call takes the host's emulated CPU clock (`cycle`, a count that only
 * grows, in cycles of `cpu_hz`): a job started with GO runs its instructions as that clock passes
 * their start times, each taking (bytes it moves) / bandwidth, so BUSY, SYNC and the tokens a job
 * writes appear at the same emulated times as in the headless MEGA65 (emu/mega65/src/ssnail.rs).
 * Build: cargo build --release -p ssnail-capi -> target/release/libssnail_capi.a; link with
 * -lpthread -ldl -lm. Not thread-safe: call from the emulation thread only. */
#ifndef SSNAIL_H
#define SSNAIL_H
#include <stdint.h>
#include "ssnail_defaults.h"   /* SSNAIL_DEFAULT_BANDWIDTH_MBPS (generated) */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ssnail ssnail_t;

/* A device with mem_mib MiB of SSNAIL memory (1-128): up to 8 an R3 board (HyperRAM only),
 * more an R4-R6 board (64 MiB SDRAM at $8000000, HyperRAM at $C000000; 72 = both).
 * numerics_float: 0 = the FPGA's bit-exact rules, 1 = the float reference. bandwidth: SSNAIL
 * memory bytes per second (SSNAIL_DEFAULT_BANDWIDTH_MBPS x 1e6 when <= 0). cpu_hz: the host clock `cycle` counts
 * (40.5e6 for a MEGA65 at full speed). NULL when mem_mib is out of range. */
ssnail_t *ssnail_create(unsigned mem_mib, int numerics_float, double bandwidth, double cpu_hz);
void ssnail_destroy(ssnail_t *s);

/* Register block: reg = the low byte of $FFD75xx. */
uint8_t ssnail_reg_read(ssnail_t *s, uint8_t reg, uint64_t cycle);
void ssnail_reg_write(ssnail_t *s, uint8_t reg, uint8_t value, uint64_t cycle);

/* The CPU's (and DMA's) view of $8000000 + off, chosen by $D7FE bit 4 (SELSDRAM) as on the real
 * board: R3 shows SSNAIL's memory; R4-R6 show SDRAM (= SSNAIL $8000000 + off, 64 MiB) with
 * SELSDRAM set and the 8 MiB HyperRAM (SSNAIL $C000000 + off on a 72 MiB device, else RAM SSNAIL
 * does not use) without it. Unpopulated addresses read $FF, writes there are dropped. */
uint8_t ssnail_attic_read(ssnail_t *s, uint32_t off, uint8_t d7fe, uint64_t cycle);
void ssnail_attic_write(ssnail_t *s, uint32_t off, uint8_t d7fe, uint8_t value, uint64_t cycle);

/* SSNAIL memory size in bytes; jobs started so far. */
uint64_t ssnail_mem_size(const ssnail_t *s);
uint64_t ssnail_jobs(const ssnail_t *s);

#ifdef __cplusplus
}
#endif
#endif
