/* dma.h: MEGA65 enhanced DMA jobs (F018B list, MB options). */
#ifndef DMA_H
#define DMA_H
#include <stdint.h>
/* one F018B job with the source/destination MB options (spec §M3) and option $01: addresses
 * cross megabyte boundaries instead of wrapping inside their megabyte (gs4510.vhdl lines 6006,
 * 6577-6583, 6765-6773; a sector DMA'd into attic RAM across $8100000 otherwise wraps onto the
 * image's header) */
typedef struct {
    uint8_t opt_f018b, opt_cross, opt_src_mb, src_mb, opt_dst_mb, dst_mb, opt_end;
    uint8_t command;
    uint16_t count;
    uint16_t src;
    uint8_t src_bank;
    uint16_t dst;
    uint8_t dst_bank;
    uint8_t subcommand;
    uint16_t modulo;
} dma_job_t;
void __fastcall__ dma_exec(const void *job);
/* copy n bytes between 28-bit addresses (ascending: safe for overlapping copies downward) */
void dma_copy(uint32_t dst, uint32_t src, uint16_t n);
void dma_fill(uint32_t dst, uint8_t value, uint16_t n);
/* copy n bytes from a 28-bit address into ONE register (destination held), spec §M3.5 */
void dma_to_register(uint32_t reg, uint32_t src, uint16_t n);
/* the same job written to *job without running it (hw.s's sd_sectors_dma sets the count) */
void dma_job_to_register(dma_job_t *job, uint32_t reg, uint32_t src);
/* a copy job to memory at dst, not run (sd_sectors_dma sets the count and advances dst) */
void dma_job_to_memory(dma_job_t *job, uint32_t dst, uint32_t src);
#endif
