/* overlay.c: switching overlays (overlay.h; resident). */
#include "dma.h"
#include "mega65_io.h"
#include "overlay.h"

uint8_t ovl_cur = OVL_NONE;

void ovl_use(uint8_t n) {
    if (n == ovl_cur) return;
    dma_copy(ovl_region, ovl_chip[n], ovl_size[n]);
    ovl_cur = n;
}
