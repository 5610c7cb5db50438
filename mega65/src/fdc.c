/* fdc.c: read 256-byte logical D81 sectors through the F011 floppy controller ($D080-$D089).
 * A 1581 logical sector (T 1-80, S 0-39) is half of a 512-byte physical sector: physical track
 * T-1, side S/20, sector (S%20)/2+1, first or second half by S&1 (MEGA65 Book "Disk Layout and
 * 1581 Logical Sectors"; the image offset is the same as (T-1)*40*256 + S*256).
 *
 * The F011 facts used (mega65-core at 76fac1b):
 * - A D81 image on the SD card is addressed by the track register $D084 alone (sdcardio.vhdl
 *   lines 2213-2232); a real drive finds a sector only under the head, when the track in its
 *   header equals $D084 (mfm_decoder.vhdl line 361), so the head must be stepped there first.
 * - $D081 = $10 steps the head out, $18 in (sdcardio.vhdl lines 2737-2808); each step keeps BUSY
 *   ($D082.7) for $D089 x 62.5 us (iomap.txt line 339, normally 8 ms). $D082.0 TK0 = head over
 *   track 0 (lines 2189-2205).
 * - A read that finds nothing sets RNF ($D082.4): at once for an image drive with no disk image
 *   (lines 2597-2600), after 10 rotations or ~2.5 s for a real drive (lines 2580-2587,
 *   4484-4520). $D083.3 DISKIN is 0 when drive 0 has no image; a real drive always reports 1
 *   (lines 2169-2184, 1220-1225). */
#include "fdc.h"
#include "hyppo.h"
#include "io.h"

#define F_CONTROL F011_CONTROL
#define F_COMMAND F011_COMMAND
#define F_STATUS_A F011_STATUS_A
#define F_STATUS_B F011_STATUS_B
#define F_TRACK F011_TRACK
#define F_SECTOR F011_SECTOR
#define F_SIDE F011_SIDE
#define ST_BUSY F011_STATUS_A_BUSY
#define ST_RNF F011_STATUS_A_RNF
#define ST_CRC F011_STATUS_A_CRC
#define ST_TK0 F011_STATUS_A_TK0
#define ST_DISKIN F011_STATUS_B_DISKIN
#define CMD_STEP_OUT F011_COMMAND_STEP_OUT
#define CMD_STEP_IN F011_COMMAND_STEP_IN

uint8_t fdc_error;
static uint8_t head = 0xFF;   /* physical track under the head; $FF = not known yet */

/* 1 = BUSY went away (a real drive gives up after ~2.5 s; this allows ~10 s) */
static uint8_t wait_idle(void) {
    uint32_t timeout = 0;
    while (PEEK(F_STATUS_A) & ST_BUSY)
        if (++timeout == 10000000UL) return 0;
    return 1;
}

static uint8_t step(uint8_t command) {
    POKE(F_COMMAND, command);
    return wait_idle();
}

/* moves the head over physical track t: first out to track 0 (TK0) when its place is unknown */
static uint8_t seek(uint8_t t) {
    uint8_t i;
    if (head == 0xFF) {
        for (i = 0; i < 90 && !(PEEK(F_STATUS_A) & ST_TK0); ++i)
            if (!step(CMD_STEP_OUT)) return 0;
        if (!(PEEK(F_STATUS_A) & ST_TK0)) return 0;
        head = 0;
    }
    while (head < t) {
        if (!step(CMD_STEP_IN)) { head = 0xFF; return 0; }
        ++head;
    }
    while (head > t) {
        if (!step(CMD_STEP_OUT)) { head = 0xFF; return 0; }
        --head;
    }
    return 1;
}

uint32_t fdc_read(uint8_t track, uint8_t sector) {
    uint8_t side = sector >= 20, tries;
    fdc_error = FDC_BAD_SECTOR;
    if (track < 1 || track > 80 || sector > 39) return 0;
    POKE(SD_BUFFER_SELECT, PEEK(SD_BUFFER_SELECT) & ~SD_BUFSEL_SD); /* user view: the F011 buffer */
    POKE(F_CONTROL, F011_CONTROL_LED | F011_CONTROL_MOTOR | (side ? F011_CONTROL_SIDE : 0)); /* drive 0, motor + LED, head side */
    fdc_error = FDC_NO_DISK;
    if (!(PEEK(F_STATUS_B) & ST_DISKIN)) return 0;
    for (tries = 0; tries < 2; ++tries) {           /* the second time after finding track 0 */
        fdc_error = FDC_SEEK;
        if (!seek(track - 1)) { head = 0xFF; continue; }
        POKE(F_TRACK, track - 1);
        POKE(F_SECTOR, (sector % 20) / 2 + 1);
        POKE(F_SIDE, side);
        POKE(F_COMMAND, F011_COMMAND_RESET_BUFFER); /* reset the buffer pointers */
        POKE(F_COMMAND, F011_COMMAND_READ);         /* read sector */
        fdc_error = FDC_TIMEOUT;
        if (!wait_idle()) return 0;
        fdc_error = FDC_NOT_FOUND;
        if (!(PEEK(F_STATUS_A) & (ST_RNF | ST_CRC))) {
            fdc_error = FDC_OK;
            return F011_BUFFER + ((sector & 1) ? 256 : 0);
        }
        head = 0xFF;
    }
    return 0;
}
