/* dma.c: enhanced DMA jobs in F018B format with source/destination MB options. */
#include "dma.h"

static struct {
    uint8_t opt_f018b, opt_src_mb, src_mb, opt_dst_mb, dst_mb, opt_end;
    uint8_t command;
    uint16_t count;
    uint16_t src;
    uint8_t src_bank;
    uint16_t dst;
    uint8_t dst_bank;
    uint8_t subcommand;
    uint16_t modulo;
} job = {0x0B, 0x80, 0, 0x81, 0, 0x00};

static void run(uint8_t command, uint32_t dst, uint32_t src, uint16_t n, uint8_t sub) {
    if (n == 0) return;   /* count 0 would mean 64 KB */
    job.command = command;
    job.count = n;
    job.src = (uint16_t)src;
    job.src_bank = (uint8_t)(src >> 16) & 0x0F;   /* F018B: bits 4-6 would add to the MB */
    job.src_mb = (uint8_t)(src >> 20);
    job.dst = (uint16_t)dst;
    job.dst_bank = (uint8_t)(dst >> 16) & 0x0F;
    job.dst_mb = (uint8_t)(dst >> 20);
    job.subcommand = sub;
    dma_exec(&job);
}

void dma_copy(uint32_t dst, uint32_t src, uint16_t n) { run(0x00, dst, src, n, 0); }

void dma_fill(uint32_t dst, uint8_t value, uint16_t n) { run(0x03, dst, value, n, 0); }

void dma_to_register(uint32_t reg, uint32_t src, uint16_t n) {
    run(0x00, reg, src, n, 0x08);   /* sub-command bit 3: destination held */
}
