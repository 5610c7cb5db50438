/* main.c: SSNAIL for the MEGA65. Detects the SSNAIL core (or loads the software core), lists the
 * images on the SD card and the D81, loads the chosen one and talks to it. */
#include <stdio.h>
#include <string.h>
#include "chat.h"
#include "device.h"
#include "far.h"
#include "keyboard.h"
#include "loader.h"
#include "models.h"
#include "overlay.h"
#include "io.h"
#include "screen.h"
#include "ssnail_regs.h"
#include "timer.h"
#include "fdc.h"

#define LIST_ROW 4

static uint8_t id, model;

/* $D7FE (mega65-core iomap.txt lines 1411-1417; written in gs4510.vhdl lines 3616-3625):
 * bit 4 SELSDRAM makes the CPU's attic window at $8000000 show SDRAM instead of HyperRAM (reset 0:
 * HyperRAM; the R4-R6 top level mega65r4.vhdl line 1290 switches on it, R3 has no SDRAM). Bits 0
 * PREFETCH, 2 SLOWCACHE (reset 1) and 3 SLOWCACHE!ADV let CPU reads of attic memory come from a
 * line or byte fetched earlier (gs4510.vhdl lines 2402-2445), stale after SSNAIL writes the
 * tokens and the runtime block: all three off, so every read goes to the RAM. */

static uint8_t saved_d7fe, saved_cia1[2];

/* MODEL_ADDRESS, $D629 M65MODEL (iomap.txt line 578; c65uart.vhdl lines 336-339, 858-866):
 * MODEL_R3 on R3, MODEL_R4 on R4; R5 and later read their board's major revision there (5, 6,
 * ...; mega65_io.h). R3's attic RAM is 8 MB of
 * HyperRAM (mega65r3.vhdl: HyperRAM as expansion RAM); R4 and later have 64 MB of SDRAM
 * (mega65r4/r5/r6.vhdl: "SDRAM as expansion RAM", sdram_controller.vhdl), shown at $8000000
 * with SELSDRAM. With the FPGA core present its CAPS say which RAM SSNAIL has instead. */

static void detect(void) {
    uint8_t d7fe, sdram;
    saved_d7fe = PEEK(D7FE_ADDRESS);
    id = far_peek(SS_ID);
    model = PEEK(MODEL_ADDRESS);
    if (id == SS_ID_VALUE) {
        fpga_version = far_peek(SS_VERSION);
        fpga_caps = far_peek(SS_CAPS);
        sdram = fpga_caps & SS_CAP_SDRAM;
        fpga_mem = sdram ? (fpga_caps & SS_CAP_HYPERRAM ? 72UL : 64UL) << 20 : 8UL << 20;
        soft_mem = sdram ? 64UL << 20 : 8UL << 20;   /* the CPU sees SDRAM only, not both */
    } else {
        sdram = model >= MODEL_R4 && model < MODEL_OTHER;   /* MEGAphone, other boards */
        if (sdram) soft_mem = 64UL << 20;
        else if (model == MODEL_R3) soft_mem = 8UL << 20;
    }
    d7fe = PEEK(D7FE_ADDRESS) & ~(D7FE_PREFETCH | D7FE_SLOWCACHE | D7FE_SLOWCACHE_ADV | D7FE_SELSDRAM);
    if (sdram) d7fe |= D7FE_SELSDRAM;
    POKE(D7FE_ADDRESS, d7fe);
    dev_soft_load();
    if (!dev_select(CORE_FPGA)) dev_select(CORE_SOFT);
}

static void header(void) {
    scr_clear();
    scr_col = COL_WHITE;
    scr_puts("SSNAIL for MEGA65: models\n");
    if (fpga_mem) {
        scr_col = COL_GREEN;
        scr_printf("SSNAIL core v%u found, %lu MB (%s)%s\n", fpga_version, fpga_mem >> 20,
                   fpga_caps & SS_CAP_SDRAM ? "R4-R6: SDRAM + HyperRAM" : "R3: HyperRAM",
                   fpga_caps & SS_CAP_EMULATOR ? ", emulated" : "");
        if (core == CORE_SOFT) scr_puts("The software core runs the models (/core fpga: the FPGA)\n");
    } else {
        scr_col = soft_status == SOFT_LOADED ? COL_YELLOW : COL_RED;
        scr_printf("SSNAIL core not found: $FFD7500 reads $%02x, expected $53.\n", id);
        if (soft_status == SOFT_LOADED)
            scr_printf("The software core runs models up to %lu MB on the 45GS02: same tokens, slower.\n",
                       soft_mem >> 20);
        else if (soft_status == SOFT_NO_ATTIC)
            scr_printf("Board model $%02x: no known attic RAM for the software core. Models are listed.\n",
                       model);
        else if (soft_status == SOFT_BAD_FILE)
            scr_printf("%s on the disk is not this program's software core. Models are listed.\n",
                       soft_file);
        else
            scr_puts("Start the MEGA65 with a core that has SSNAIL. Models are listed, not loaded.\n");
    }
    scr_col = COL_LGREEN;
}

/* Each model takes two rows: name, source, size, memory needed and the verdict for this
 * board, then its description indented. Ten fit between the header and the key help; the
 * cursor keys scroll one model, left/right a page. */
#define PER_PAGE 10
#define COUNTDOWN_S 5   /* CONFIG.TXT's model loads after this, unless a key is pressed */

static uint8_t top;     /* first model shown */
#pragma bss-name(push, "HIBSS")
static model_t cur;     /* the model drawn or loaded (the list is in chip RAM) */
static char count_row[160];
#pragma bss-name(pop)

static void draw_entry(uint8_t i, uint8_t selected) {
    const model_t *m = &cur;
    uint8_t row = LIST_ROW + 2 * (i - top);
    uint32_t size;
    model_get(i, &cur);
    size = m->file_size;
    scr_clear_row(row);
    scr_clear_row(row + 1);
    scr_at(0, row);
    if (m->source == SRC_D81 && m->valid) size = m->expected;   /* blocks x 254 is rounded */
    scr_printf("%-32s %-10s %6lu KB  ", model_short_name(m), source_names[m->source], size >> 10);
    if (!m->valid) {
        scr_col = COL_GREY;
        scr_puts("not an SSNAIL image");
    } else {
        scr_printf("needs %3u MB  ", mb_up(m->mem_needed));
        if (!avail_mem) {
            scr_col = COL_GREY;
            scr_puts("no core");   /* "no SSNAIL core" made the row 83 characters: it wrapped */
        } else if (core == CORE_SOFT && m->float_gemv && model_fits(m)) {
            scr_col = COL_YELLOW;
            scr_puts("fits, slow");   /* F32/F16/BF16 weights: convert --core soft avoids them */
        } else if (model_fits(m)) {
            scr_puts("fits");
        } else {
            scr_col = COL_YELLOW;
            scr_puts("too big");
        }
    }
    scr_log('\n');   /* rows are placed with scr_at: keep the transcript one row per line */
    scr_at(4, row + 1);
    scr_col = COL_CYAN;
    if (m->desc[0]) scr_puts(m->desc);
    else scr_puts("(no description)");
    scr_log('\n');
    scr_col = COL_LGREEN;
    if (selected) {
        scr_reverse_row(row, 1);
        scr_reverse_row(row + 1, 1);
    }
}

/* row 3: how many models, which are shown, and what was left out or could not be read */
static void draw_count(void) {
    char *row = count_row;
    uint8_t n;
    n = sprintf(row, n_models == 1 ? "1 model" : "%u models", n_models);
    if (n_models > PER_PAGE) n += sprintf(row + n, ", %u-%u shown", top + 1, top + PER_PAGE);
    if (n_dot_files) n += sprintf(row + n, "; %u \"._\" files skipped", n_dot_files);
    if (n_over) n += sprintf(row + n, "; %u more not listed (at most %u)", n_over, MAX_MODELS);
    if (d81_error == FDC_NO_DISK) n += sprintf(row + n, "; no disk in drive 0");
    else if (d81_error) n += sprintf(row + n, "; disk in drive 0 unreadable");
    if (n > SCR_W) row[SCR_W] = 0;   /* one row; the serial copy is cut the same */
    scr_clear_row(3);
    scr_at(0, 3);
    scr_puts(row);
    scr_log('\n');
}

static void draw_page(uint8_t sel) {
    uint8_t i;
    draw_count();
    for (i = 0; i < PER_PAGE; ++i) {
        if (top + i < n_models) {
            draw_entry(top + i, top + i == sel);
        } else {
            scr_clear_row(LIST_ROW + 2 * i);
            scr_clear_row(LIST_ROW + 2 * i + 1);
        }
    }
}

/* move the highlight from old to sel, scrolling the page when sel is off it */
static void choose(uint8_t old, uint8_t sel) {
    if (sel < top) {
        top = sel;
        draw_page(sel);
    } else if (sel >= top + PER_PAGE) {
        top = sel - PER_PAGE + 1;
        draw_page(sel);
    } else {
        draw_entry(old, 0);
        draw_entry(sel, 1);
    }
}

static void key_help(void) {
    scr_clear_row(24);
    scr_at(0, 24);
    scr_puts("Up/down: choose  Left/right: page  RETURN: load  R: look again  Q: BASIC");
    scr_log('\n');   /* a drawn newline on the last row would scroll the list up */
}

/* CONFIG.TXT's model: 1 = load it now (no key in COUNTDOWN_S seconds); a key is left queued */
static uint8_t countdown(void) {
    uint8_t left = COUNTDOWN_S + 1, s;
    timer_start();
    for (;;) {
        s = COUNTDOWN_S - (uint8_t)(timer_ms() / 1000);
        if (s != left) {
            left = s;
            scr_clear_row(24);
            scr_at(0, 24);
            scr_printf("Loading %s in %u s (CONFIG.TXT): any key to choose", model_short_name(&cur),
                       left);
            scr_log('\n');
        }
        if (PEEK(KBD_ASCII)) {
            key_help();
            return 0;
        }
        if (!left) return 1;
    }
}

static uint8_t started;   /* the countdown runs once, when the program starts */

/* 1 = the model in cur is loaded; 0 = Q (back to BASIC) */
static uint8_t browse(void) {
    int16_t def;
    uint8_t sel, k, from_config;
    for (;;) {
        header();
        scr_puts("Looking for models on the SD card and the disk...\n");
        models_scan();
        scr_clear_row(3);
        if (!n_models) {
            draw_count();
            scr_at(0, LIST_ROW);
            scr_puts("No SSNAIL images found: put .SSNAIL files in the SD card's root or SSNAIL\n"
                     "folder, or on the disk. Q: back to BASIC, any other key: look again.\n");
            k = kbd_wait();
            if (k == 'q' || k == 'Q') return 0;
            continue;
        }
        def = models_default(&from_config);
        sel = 0;
        if (def > 0) sel = (uint8_t)def;
        top = 0;
        if (sel >= PER_PAGE) top = sel - PER_PAGE + 1;
        draw_page(sel);
        key_help();
        if (from_config && !started) {
            started = 1;
            model_get(sel, &cur);
            if (countdown() && load_model(&cur)) return 1;
        }
        started = 1;
        for (;;) {
            k = kbd_wait();
            if (k == KEY_DOWN && sel + 1 < n_models) {
                choose(sel, sel + 1);
                ++sel;
            } else if (k == KEY_UP && sel > 0) {
                choose(sel, sel - 1);
                --sel;
            } else if (k == KEY_RIGHT && sel + 1 < n_models) {   /* a page down */
                sel = sel + PER_PAGE < n_models ? sel + PER_PAGE : n_models - 1;
                top = sel >= PER_PAGE ? sel - PER_PAGE + 1 : 0;
                draw_page(sel);
            } else if (k == KEY_LEFT && sel > 0) {               /* a page up */
                sel = sel > PER_PAGE ? sel - PER_PAGE : 0;
                if (sel < top) top = sel;
                draw_page(sel);
            } else if (k == KEY_RETURN) {
                model_get(sel, &cur);
                if (load_model(&cur)) return 1;
            } else if (k == 'q' || k == 'Q') {
                return 0;
            } else if (k == 'r' || k == 'R') break;
        }
    }
}

/* main and quit are resident; the rest of this file is the browser's overlay (overlay.h,
 * build.mk), which main puts in the region before it calls into it and the chat's after */
#pragma code-name (push, "CODE")
#pragma rodata-name (push, "RODATA")

/* /quit: every register this program changed back as it found it, then RTS to BASIC's SYS
 * (machine_restore in crt0.s does MAP, $01, $D030, speed, memory and stack) */
static void quit(void) {
    extern void machine_restore(void);
    POKE(D7FE_ADDRESS, saved_d7fe);
    POKE(CIA1_CRA, saved_cia1[0] & (uint8_t)~CIA1_CR_LOAD);   /* control registers, without their "load" strobe */
    POKE(CIA1_CRB, saved_cia1[1] & (uint8_t)~CIA1_CR_LOAD);
    scr_restore();
    machine_restore();
}

void main(void) {
    saved_cia1[0] = PEEK(CIA1_CRA);
    saved_cia1[1] = PEEK(CIA1_CRB);
    ovl_use(OVL_BROWSE);   /* from its chip RAM copy, which crt0 made */
    scr_init();
    if (ovl_load()) {      /* the chat's overlay, or one line and back to BASIC */
        detect();
        for (;;) {
            ovl_use(OVL_BROWSE);
            if (!browse()) break;
            ovl_use(OVL_CHAT);
            if (chat(cur.name) == CHAT_QUIT) break;
        }
    }
    quit();
}
#pragma rodata-name (pop)
#pragma code-name (pop)
