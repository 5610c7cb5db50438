/* softmem_host.c: softmem.h over a byte array holding SSNAIL memory from $8000000, for the
 * software core on the PC (softhost.c). The core checks every range before it calls these; here
 * an access outside the array stops the program with a message anyway, so a missing check in
 * the core shows up as a failed test instead of a stray write. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "softmem.h"
#include "ssnail_regs.h"

uint8_t *sm_host_mem;
uint32_t sm_host_len;

static uint8_t *at(uint32_t addr, uint32_t n)
{
    if (addr < IMG_BASE || addr - IMG_BASE > sm_host_len || n > sm_host_len - (addr - IMG_BASE)) {
        fprintf(stderr, "softmem_host: the core accessed %lu bytes at $%07lX, outside memory [$%07lX, $%07lX)\n",
                (unsigned long)n, (unsigned long)addr, (unsigned long)IMG_BASE,
                (unsigned long)(IMG_BASE + sm_host_len));
        exit(70);
    }
    return sm_host_mem + (addr - IMG_BASE);
}

uint8_t sm_read8(uint32_t addr)
{
    return *at(addr, 1);
}

uint16_t sm_read16(uint32_t addr)
{
    const uint8_t *p = at(addr, 2);
    return (uint16_t)(p[0] | p[1] << 8);
}

uint32_t sm_read32(uint32_t addr)
{
    const uint8_t *p = at(addr, 4);
    return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void sm_write16(uint32_t addr, uint16_t v)
{
    uint8_t *p = at(addr, 2);
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

void sm_write32(uint32_t addr, uint32_t v)
{
    uint8_t *p = at(addr, 4);
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

void sm_read(uint32_t addr, void *dst, uint16_t n)
{
    memcpy(dst, at(addr, n), n);
}

void sm_write(uint32_t addr, const void *src, uint16_t n)
{
    memcpy(at(addr, n), src, n);
}
