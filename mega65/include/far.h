/* far.h: flat 28-bit memory access (45GS02 "[zp],Z" through the EA prefix; hw.s).
 * On the PC test build the same functions read an image file (host/far_host.c). */
#ifndef FAR_H
#define FAR_H
#include <stdint.h>
#ifndef __CC65__
#define __fastcall__
#endif
uint8_t  __fastcall__ far_peek(uint32_t addr);
uint16_t __fastcall__ far_peek16(uint32_t addr);
uint32_t __fastcall__ far_peek32(uint32_t addr);
void     __fastcall__ far_poke(uint32_t addr, uint8_t value);
/* memcmp of n bytes at addr against key: -1, 0, 1 */
int8_t   __fastcall__ far_cmp(uint32_t addr, const uint8_t *key, uint8_t n);
#endif
