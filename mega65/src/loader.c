/* loader.c: the seed's loader (spec §6.2): commit the pointer to $8000000 with ERROR
 * cleared; for each sector, wait for READY and DMA it into the load port's data register with
 * the destination held, recommitting to the payload address ($64) at file offset 256 (which may
 * fall inside a sector or on its first byte); commit once more, wait for READY, check ERROR.
 * For the software core (device.h) there is no load port: the same pieces go by DMA straight to
 * their SSNAIL addresses, which are the CPU's attic RAM. Files come from the SD card (hypervisor
 * readfile, 512-byte sectors) or the D81 (F011, 254 data bytes per 256-byte block). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "device.h"
#include "dma.h"
#include "far.h"
#include "fdc.h"
#include "hyppo.h"
#include "imgmem.h"
#include "io.h"
#include "keyboard.h"
#include "loader.h"
#include "screen.h"
#include "ssnail_regs.h"
#include "timer.h"
#include "tokenizer.h"

#define PROGRESS_ROW 22

static const model_t *cur;
static dma_job_t sd_job;   /* SD buffer -> load port data register */
const uint32_t lp_commit = SS_LP_COMMIT;
#define SD_BATCH 16        /* sectors per sd_sectors_dma call */
static uint8_t next_t, next_s;
static uint32_t chunk_src;
static uint16_t chunk_len;

/* next piece of the file: 1 = chunk_src/chunk_len set, 0 = end of file (or read error) */
static uint8_t next_chunk(void) {
    uint32_t a;
    uint8_t t, s;
    if (cur->source == SRC_D81) {
        if (!next_t) return 0;
        if (!(a = fdc_read(next_t, next_s))) return 0;
        t = far_peek(a);
        s = far_peek(a + 1);
        chunk_src = a + 2;
        chunk_len = 254;
        if (!t) chunk_len = s ? s - 1 : 0;
        next_t = t;
        next_s = s;
        return 1;
    }
    chunk_len = hy_read();
    chunk_src = SD_BUFFER;
    return chunk_len != 0;
}

static void fail(const char *what) {
    scr_col = COL_RED;
    scr_clear_row(PROGRESS_ROW);
    scr_at(0, PROGRESS_ROW);
    scr_log('\n');
    scr_printf("%s: %s", cur->name, what);
    scr_log('\n');
    scr_col = COL_LGREEN;
}

/* tenths of a MB (2^20 bytes), in 16-bit arithmetic from 4 KB units */
static uint16_t mb_tenths(uint32_t bytes) {
    return (uint16_t)(((bytes >> 12) * 10 + 128) >> 8);
}

/* The progress row is written straight into screen memory (one colour fill, cc65's 16-bit utoa,
 * no printf): it is redrawn a few times a second during a load, between sectors. */
static uint8_t *row;
static uint8_t col;

static void put_s(const char *s) {
    while (*s) row[col++] = scr_code(*s++);
}

static void put_u(uint16_t v, uint8_t width) {
    static char buf[6];
    utoa(v, buf, 10);
    while (width > strlen(buf)) { row[col++] = scr_code(' '); --width; }
    put_s(buf);
}

static void put_tenths(uint16_t v) {
    put_u(v / 10, 0);
    put_s(".");
    put_u(v % 10, 0);
}

static void progress(uint32_t done, uint32_t total) {
    uint8_t pct = (uint8_t)(total > 1000000UL ? done / (total / 100) : done * 100 / total), cut;
    uint16_t t = (uint16_t)(timer_ms() / 100);
    if (pct > 100) pct = 100;
    row = SCREEN + PROGRESS_ROW * SCR_W;
    dma_fill(COLOUR_RAM + PROGRESS_ROW * SCR_W, COL_YELLOW, SCR_W);
    cut = (uint8_t)(pct * 30 / 100);
    for (col = 0; col < 30; ++col) row[col] = scr_code(col < cut ? '#' : '.');
    put_s(" ");
    put_u(pct, 3);
    put_s("%  ");
    put_tenths(mb_tenths(done));
    put_s(" / ");
    put_tenths(mb_tenths(total));
    put_s(" MB  ");
    put_tenths(t);
    put_s(" s   ");
}

/* timer B (1/65536 s ticks of timer A) low byte when the progress row was last drawn */
static uint8_t progress_tick;
#define PROGRESS_TICKS 4   /* redraw about every 0.26 s */

/* bytes sent and the image length: statics, as cc65 reaches them faster than locals */
static uint32_t off, expected;

/* where the next bytes go: the load port (FPGA core) or, for the software core, attic RAM at
 * `dst` by DMA */
static uint8_t to_attic;
static uint32_t dst;

static void put(uint32_t src, uint16_t n) {
    if (to_attic) {
        dma_copy(dst, src, n);
        dst += n;
    } else
        dma_to_register(SS_LP_DATA, src, n);
}

static void put_at(uint32_t addr) {
    if (to_attic) dst = addr;
    else port_commit(addr, 0);
}

static uint8_t ready(void) { return to_attic || port_wait_ready(); }

static char msg[80];   /* a refusal's text */

/* what img_header_bad and tok_init check, as the message names it (spec §1.4 offsets) */
static const char *const regions[4] = {"tokenizer tables (header $78)", "token buffer (header $14, $20)",
                                       "output vector (header $30, $34)", "script (header $08, $0C)"};

uint8_t load_model(const model_t *m) {
    uint32_t base, first_part, t;
    uint8_t ok, bad, fast;
    cur = m;
    scr_clear_row(PROGRESS_ROW);
    if (!avail_mem) { fail("no SSNAIL core, cannot load"); return 0; }
    to_attic = core == CORE_SOFT;
    if (!m->valid) { fail("not an SSNAIL image (no SSNL magic)"); return 0; }
    if (m->version != 1) {
        sprintf(msg, "image version %u, this program reads version 1", m->version);
        fail(msg);
        return 0;
    }
    if (m->host_seg_len) { fail("old image format (host segment): convert it again"); return 0; }
    if (m->mem_needed > avail_mem) {
        sprintf(msg, "needs %u MB, %s has %lu MB", mb_up(m->mem_needed),
                to_attic ? "the software core" : "this board", avail_mem >> 20);
        fail(msg);
        return 0;
    }
    if (m->source == SRC_D81) bad = m->file_size < m->expected || m->file_size >= m->expected + 254;
    else bad = m->file_size != m->expected;
    if (bad) {
        /* the header's 256 + payload length in 32 bits would wrap for the largest lengths */
        sprintf(msg, "file is %lu bytes, header says 256 + %lu: truncated or damaged",
                m->file_size, m->expected - IMG_HEADER_LEN);
        fail(msg);
        return 0;
    }
    base = m->load_base ? m->load_base : IMG_BASE + 0x100;
    /* the header and the payload go into the image's memory only (imgmem.h): the load port
     * would refuse less, DMA would write anywhere */
    img_top = IMG_BASE + m->mem_needed;
    t = m->expected - IMG_HEADER_LEN;               /* payload bytes */
    if (base < IMG_BASE + IMG_HEADER_LEN || !img_inside(base, t, 0)) {
        fail("payload (header $64, $2C) lies outside the image's memory ($38)");
        return 0;
    }
    if (m->source == SRC_D81) {
        next_t = m->track;
        next_s = m->sector;
    } else {
        hy_cdroot();
        if ((m->source == SRC_SD_DIR && !models_chdir()) || !hy_open(m->name)) {
            hy_cdroot();
            fail("cannot open the file");
            return 0;
        }
    }
    off = 0;
    expected = m->expected;
    timer_start();
    progress_tick = PEEK(CIA1_TBLO);
    if (to_attic) dst = IMG_BASE;
    else {
        dma_job_to_register(&sd_job, SS_LP_DATA, SD_BUFFER);
        port_commit(IMG_BASE, 1);                   /* 1. pointer $8000000, ERROR cleared */
    }
    ok = 1;
    fast = 0;
    while (off < expected) {
        if (fast) {                                 /* SD after the header: a batch per call */
            chunk_len = sd_sectors_dma(&sd_job, SD_BATCH);
            if (chunk_len == 0xFFFF) { ok = 0; fail("load port never READY"); break; }
            if (!chunk_len) break;
        } else {
            if (!ready()) { ok = 0; fail("load port never READY"); break; }
            if (!next_chunk()) break;
            if (chunk_len > expected - off) chunk_len = (uint16_t)(expected - off);
            if (off <= IMG_HEADER_LEN && off + chunk_len > IMG_HEADER_LEN) {  /* payload starts here */
                first_part = IMG_HEADER_LEN - off;
                if (first_part) put(chunk_src, (uint16_t)first_part);
                put_at(base);
                put(chunk_src + first_part, chunk_len - (uint16_t)first_part);
                /* an SD file's length was checked against the header: no sector runs past it */
                fast = m->source != SRC_D81;
                if (to_attic) dma_job_to_memory(&sd_job, dst, SD_BUFFER);
            } else {
                put(chunk_src, chunk_len);
            }
        }
        off += chunk_len;
        if ((uint8_t)(progress_tick - PEEK(CIA1_TBLO)) >= PROGRESS_TICKS) {
            progress_tick = PEEK(CIA1_TBLO);
            progress(off, expected);
        }
        if (kbd_stop_pressed()) { ok = 0; fail("load stopped (RUN/STOP)"); break; }
    }
    if (m->source != SRC_D81) {
        hy_close();
        hy_cdroot();
    }
    if (!ok) return 0;
    if (!to_attic) port_commit(IMG_BASE, 0);        /* 3. flush */
    if (!ready()) { fail("load port never READY after the last sector"); return 0; }
    progress(off, m->expected);
    if (off < m->expected) {
        sprintf(msg, "file ended after %lu of %lu bytes: truncated", off, m->expected);
        fail(msg);
        return 0;
    }
    if (!to_attic && (far_peek(SS_LP_COMMIT) & SS_LP_ERROR)) {
        fail("load port reported ERROR (data outside SSNAIL memory)");
        return 0;
    }
    if (far_cmp(IMG_BASE, (const uint8_t *)IMG_MAGIC, 4)) {
        fail("loaded, but $8000000 does not read back SSNL");
        return 0;
    }
    if ((bad = img_header_bad()) || !tok_init()) {
        sprintf(msg, "%s lies outside the image's memory ($38)", regions[bad]);
        fail(msg);
        return 0;
    }
    t = timer_ms();
    scr_at(0, PROGRESS_ROW + 1);
    scr_log('\n');
    scr_printf("Loaded %s: %lu bytes in %lu.%03lu s\n", m->name, off, t / 1000, t % 1000);
    return 1;
}
