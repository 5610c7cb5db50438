/* dma.h: MEGA65 enhanced DMA jobs (F018B list, MB options). */
#ifndef DMA_H
#define DMA_H
#include <stdint.h>
void __fastcall__ dma_exec(const void *job);
/* copy n bytes between 28-bit addresses (ascending: safe for overlapping copies downward) */
void dma_copy(uint32_t dst, uint32_t src, uint16_t n);
void dma_fill(uint32_t dst, uint8_t value, uint16_t n);
/* copy n bytes from a 28-bit address into ONE register (destination held), MEGA65.md §3.5 */
void dma_to_register(uint32_t reg, uint32_t src, uint16_t n);
#endif
