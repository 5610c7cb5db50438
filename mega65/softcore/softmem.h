/* softmem.h: SSNAIL memory as the software core reaches it. Addresses are SSNAIL addresses
 * ($8000000 + offset, §1.2), which on the MEGA65 are also the CPU's flat 28-bit addresses of attic
 * RAM, so an image loaded there runs unchanged. Little-endian. The core checks every range against
 * soft_mem_end before calling these (fault 3); they do no checking of their own.
 * MEGA65: softmem_m65.c/.s (flat reads and DMA); PC test build: mega65/host/softmem_host.c. */
#ifndef SOFTMEM_H
#define SOFTMEM_H
#include <stdint.h>

uint8_t sm_read8(uint32_t addr);
uint16_t sm_read16(uint32_t addr);
uint32_t sm_read32(uint32_t addr);
void sm_write16(uint32_t addr, uint16_t v);
void sm_write32(uint32_t addr, uint32_t v);
/* n bytes between SSNAIL memory and near (CPU) memory */
void sm_read(uint32_t addr, void *dst, uint16_t n);
void sm_write(uint32_t addr, const void *src, uint16_t n);

#endif
