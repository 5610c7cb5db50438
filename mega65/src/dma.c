/* dma.c: enhanced DMA jobs in F018B format with source/destination MB options. */
#include "dma.h"
#include "mega65_io.h"

static dma_job_t job;

static void fill_job(dma_job_t *j, uint8_t command, uint32_t dst, uint32_t src, uint16_t n,
                     uint8_t sub) {
    j->opt_f018b = DMA_OPT_F018B;
    j->opt_cross = DMA_OPT_CROSS_MB;
    j->opt_src_mb = DMA_OPT_SRC_MB;
    j->opt_dst_mb = DMA_OPT_DST_MB;
    j->opt_end = DMA_OPT_END;
    j->command = command;
    j->count = n;
    j->src = (uint16_t)src;
    j->src_bank = (uint8_t)(src >> 16) & 0x0F;   /* F018B: bits 4-6 would add to the MB */
    j->src_mb = (uint8_t)(src >> 20);
    j->dst = (uint16_t)dst;
    j->dst_bank = (uint8_t)(dst >> 16) & 0x0F;
    j->dst_mb = (uint8_t)(dst >> 20);
    j->subcommand = sub;
    j->modulo = 0;
}

static void run(uint8_t command, uint32_t dst, uint32_t src, uint16_t n, uint8_t sub) {
    if (n == 0) return;   /* count 0 would mean 64 KB */
    fill_job(&job, command, dst, src, n, sub);
    dma_exec(&job);
}

void dma_copy(uint32_t dst, uint32_t src, uint16_t n) { run(DMA_COPY, dst, src, n, 0); }

void dma_fill(uint32_t dst, uint8_t value, uint16_t n) { run(DMA_FILL, dst, value, n, 0); }

void dma_to_register(uint32_t reg, uint32_t src, uint16_t n) {
    run(DMA_COPY, reg, src, n, DMA_SUB_DST_HOLD);   /* sub-command bit 3: destination held */
}

void dma_job_to_register(dma_job_t *j, uint32_t reg, uint32_t src) {
    fill_job(j, DMA_COPY, reg, src, 0, DMA_SUB_DST_HOLD);
}

void dma_job_to_memory(dma_job_t *j, uint32_t dst, uint32_t src) {
    fill_job(j, DMA_COPY, dst, src, 0, 0);
}
