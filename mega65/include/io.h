/* io.h: CPU-visible I/O registers (MEGA65 personality). */
#ifndef IO_H
#define IO_H
#include <stdint.h>
#include "mega65_io.h"   /* the MEGA65 I/O registers by name (generated) */
#define PEEK(a)    (*(volatile uint8_t *)(a))
#define POKE(a, v) (*(volatile uint8_t *)(a) = (uint8_t)(v))
#define SCREEN     ((uint8_t *)0x0800)
#define COLOUR_RAM 0x0FF80000UL
#endif
