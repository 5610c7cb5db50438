/* overlay.c: switching overlays (overlay.h; resident) and the chat overlay file's header. */
#include "dma.h"
#include "mega65_io.h"
#include "overlay.h"

uint8_t ovl_cur = OVL_NONE;

void ovl_use(uint8_t n) {
    if (n == ovl_cur) return;
    dma_copy(ovl_region, ovl_chip[n], ovl_size[n]);
    ovl_cur = n;
}

/* The first OVL_HEADER_LEN bytes of ssnail.ovl (segment OVLHDR: ld65 writes it to the file before
 * the overlay's bytes): magic, version, the length of what follows. */
extern char _OVCHAT_SIZE__[];   /* ld65's __OVCHAT_SIZE__ */
#pragma rodata-name (push, "OVLHDR")
const struct {
    uint32_t magic;
    uint8_t version, pad;
    uint16_t len;
} ovl_header = {OVL_MAGIC, OVL_VERSION, 0, (uint16_t)_OVCHAT_SIZE__};
#pragma rodata-name (pop)
