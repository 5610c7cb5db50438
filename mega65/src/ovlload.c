/* ovlload.c (browser overlay): the chat overlay's file, ssnail.ovl, into its chip RAM copy at
 * start-up: from the disk in drive 0 (as ssnail.core) or, when the disk has none, from the SD
 * card's current folder in any letter case (the program started from the SD card). Nothing of it
 * runs before the whole file is there with the header and the check sums this PRG was built
 * with (ovl_sums, host/ovlsum.c): a file of another build, cut or damaged is refused. */
#include "dma.h"
#include "far.h"
#include "fdc.h"
#include "hyppo.h"
#include "keyboard.h"
#include "mega65_io.h"
#include "models.h"
#include "overlay.h"
#include "screen.h"

const char ovl_file[] = "ssnail.ovl";

static uint8_t hdr[OVL_HEADER_LEN];
static uint16_t got;   /* the file's bytes so far */
static uint8_t bad;    /* more bytes than this build's overlay, or a read failed */

/* the file's next n bytes, at far address src: the header into hdr, the rest to chip RAM */
static void take(uint32_t src, uint16_t n) {
    for (; n && got < OVL_HEADER_LEN; --n) hdr[got++] = far_peek(src++);
    if (!n) return;
    if (got - OVL_HEADER_LEN + n > ovl_size[OVL_CHAT]) {
        bad = 1;
        return;
    }
    dma_copy(ovl_chip[OVL_CHAT] + (got - OVL_HEADER_LEN), src, n);
    got += n;
}

/* softcall.s: sum_len bytes at a flat address added to sum_s1, sum_s2 (s1 += b, s2 += s1) */
extern uint16_t sum_len, sum_s1, sum_s2;
void __fastcall__ far_sum(uint32_t addr);

/* the header and the sums of the whole file (coresum.c's: s1 += b, s2 += s1) as built */
static uint8_t file_ok(void) {
    if (bad || got != OVL_HEADER_LEN + ovl_size[OVL_CHAT] || *(uint32_t *)hdr != OVL_MAGIC ||
        hdr[4] != OVL_VERSION || *(uint16_t *)(hdr + OVL_LEN) != ovl_size[OVL_CHAT])
        return 0;
    sum_s1 = sum_s2 = 0;
    sum_len = OVL_HEADER_LEN;
    far_sum((uint32_t)(uint16_t)hdr);   /* bank 0: its flat address is its CPU address */
    sum_len = ovl_size[OVL_CHAT];
    far_sum(ovl_chip[OVL_CHAT]);
    return sum_s1 == ovl_sums[0] && sum_s2 == ovl_sums[1];
}

uint8_t ovl_load(void) {
    uint8_t t, s, found = 1;
    uint32_t a;
    uint16_t n;
    got = bad = 0;
    if (d81_find(ovl_file, &t, &s)) {
        while (t && !bad) {
            if (!(a = fdc_read(t, s))) {
                bad = 1;
                break;
            }
            t = far_peek(a);
            s = far_peek(a + 1);
            take(a + 2, t ? 254 : s ? s - 1 : 0);
        }
    } else if (open_ci(ovl_file)) {   /* the SD card's current folder: where SSNAIL.PRG was */
        while (!bad && (n = hy_read())) take(SD_BUFFER, n);
        hy_close();
    } else
        found = 0;
    if (found && file_ok()) return 1;
    scr_col = COL_RED;
    scr_printf(found ? "%s: damaged or not of this build of the program (any key: BASIC)\n"
                     : "%s: not on the disk in drive 0 or the SD card (any key: BASIC)\n",
               ovl_file);
    while (!kbd_poll() && !kbd_stop_pressed()) {}   /* RUN/STOP ends the wait too */
    return 0;
}
