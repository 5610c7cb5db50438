/* overlay.h: the program's two overlays (linker/mega65.cfg, docs/mega65-program.md "Overlays").
 * Code that never runs at the same time shares one region of bank 0: the browser's overlay (the
 * model list, the start-up checks, the loader) and the chat's (the conversation, sampling, the
 * encoders' ranking). Both are kept in chip RAM (ovl_chip) and DMA'd into the region by ovl_use,
 * which is resident and called only from resident code (main), never from an overlay. */
#ifndef OVERLAY_H
#define OVERLAY_H
#include <stdint.h>
#define OVL_BROWSE 0
#define OVL_CHAT 1
#define OVL_NONE 0xFF
/* link numbers (src/ovl.s): the region's address, each overlay's copy in chip RAM and length */
extern const uint16_t ovl_region;
extern const uint32_t ovl_chip[2];
extern const uint16_t ovl_size[2];
/* the chat overlay file's check sums, s1 and s2, written into the PRG after the link */
extern const uint16_t ovl_sums[2];
extern uint8_t ovl_cur;          /* the overlay in the region (OVL_NONE before the first) */
/* overlay n into the region, unless it is there */
void ovl_use(uint8_t n);
/* (browser overlay) ssnail.ovl from the disk in drive 0 or the SD card into chip RAM, checked;
 * 1 = there; 0 = the reason was said in one line */
uint8_t ovl_load(void);
extern const char ovl_file[];    /* "ssnail.ovl" */
#endif
