/* fdc.h: 256-byte logical sectors of the mounted D81 (drive 0) through the F011 controller. */
#ifndef FDC_H
#define FDC_H
#include <stdint.h>
/* reads logical (track 1-80, sector 0-39); returns the flat address of the 256 bytes in the
 * F011 buffer, or 0 on error */
uint32_t fdc_read(uint8_t track, uint8_t sector);
#endif
