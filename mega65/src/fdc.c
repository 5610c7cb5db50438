/* fdc.c: read 256-byte logical D81 sectors through the F011 floppy controller ($D080-$D086).
 * A 1581 logical sector (T 1-80, S 0-39) is half of a 512-byte physical sector: physical track
 * T-1, side S/20, sector (S%20)/2+1, first or second half by S&1 (MEGA65 Book "Disk Layout and
 * 1581 Logical Sectors"; the image offset is the same as (T-1)*40*256 + S*256). */
#include "fdc.h"
#include "hyppo.h"
#include "io.h"

uint32_t fdc_read(uint8_t track, uint8_t sector) {
    uint8_t side = sector >= 20;
    uint32_t timeout = 0;
    if (track < 1 || track > 80 || sector > 39) return 0;
    POKE(0xD689, PEEK(0xD689) & 0x7F);            /* user view: the F011 buffer */
    POKE(0xD080, 0x60 | (side ? 0x08 : 0));       /* drive 0, motor + LED, head side */
    POKE(0xD084, track - 1);
    POKE(0xD085, (sector % 20) / 2 + 1);
    POKE(0xD086, side);
    POKE(0xD081, 0x01);                           /* reset the buffer pointers */
    POKE(0xD081, 0x40);                           /* read sector */
    while (PEEK(0xD082) & 0x80)                   /* BUSY */
        if (++timeout == 3000000UL) return 0;   /* a real drive spins up in < 1 s */
    if (PEEK(0xD082) & 0x18) return 0;            /* RNF or CRC error */
    return F011_BUFFER + ((sector & 1) ? 256 : 0);
}
