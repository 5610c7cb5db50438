/* fdc.h: 256-byte logical sectors of the mounted D81 (drive 0) through the F011 controller. */
#ifndef FDC_H
#define FDC_H
#include <stdint.h>
/* reads logical (track 1-80, sector 0-39), stepping the head there first; returns the flat
 * address of the 256 bytes in the F011 buffer, or 0 with the reason in fdc_error */
uint32_t fdc_read(uint8_t track, uint8_t sector);
#define FDC_OK 0
#define FDC_BAD_SECTOR 1   /* track/sector outside the D81 */
#define FDC_NO_DISK 2      /* DISKIN = 0: no disk image in drive 0 */
#define FDC_SEEK 3         /* track 0 never found, or a step never finished */
#define FDC_TIMEOUT 4      /* BUSY never went away */
#define FDC_NOT_FOUND 5    /* RNF or CRC error: the sector is not on the disk (or no disk) */
extern uint8_t fdc_error;
#endif
