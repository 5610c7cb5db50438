/* imgmem.h: the loaded image's own memory, [IMG_BASE, img_top) with img_top = IMG_BASE +
 * H_MEM_NEEDED (spec §1.9: header, output area, token buffer, payload and scratch). Every address
 * the program takes from an image (token buffer, runtime block, output vector, script, vocab and
 * tokenizer tables, logits) is checked against it before the program reads or writes there, on
 * either core: on the software core SSNAIL addresses are the CPU's flat addresses, so an
 * unchecked one could reach the screen, the program's own code or I/O. */
#ifndef IMGMEM_H
#define IMGMEM_H
#include <stdint.h>
#ifndef __CC65__
#define __fastcall__
#endif
extern uint32_t img_top;
/* 1 = `count` items of 2^shift bytes from `addr` lie inside the image's memory (no overflow for
 * any count); imgmem.s */
uint8_t __fastcall__ img_inside(uint32_t addr, uint32_t count, uint8_t shift);
/* the loaded header's regions: 0 = all inside, else the first outside: 1 the token buffer
 * ($14; H_MAXCTX + 1 slots, H_MAXCTX at most IMG_MAX_CTX), 2 the output vector ($30, $34
 * floats), 3 the script slots ($08 up to $0C). The tokenizer's tables: tok_init. */
uint8_t img_header_bad(void);
#endif
