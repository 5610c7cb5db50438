/* main.c: SSNAIL for the MEGA65. Detects the SSNAIL core, lists the images on the SD card and
 * the D81, loads the chosen one and talks to it. */
#include <stdio.h>
#include <string.h>
#include "chat.h"
#include "far.h"
#include "keyboard.h"
#include "loader.h"
#include "models.h"
#include "screen.h"
#include "ssnail_regs.h"

#define LIST_ROW 4

static uint8_t present, version, caps, id;

static void detect(void) {
    id = far_peek(SS_ID);
    present = id == SS_ID_VALUE;
    version = far_peek(SS_VERSION);
    caps = far_peek(SS_CAPS);
    if (!present) avail_mem = 0;
    else if (caps & SS_CAP_SDRAM) avail_mem = (caps & SS_CAP_HYPERRAM ? 72UL : 64UL) << 20;
    else avail_mem = 8UL << 20;
}

static void header(void) {
    scr_clear();
    scr_col = COL_WHITE;
    scr_puts("SSNAIL for MEGA65: models\n");
    if (present) {
        scr_col = COL_GREEN;
        scr_printf("SSNAIL core v%u found, %lu MB (%s)%s\n", version, avail_mem >> 20,
                   caps & SS_CAP_SDRAM ? "R4-R6: SDRAM + HyperRAM" : "R3: HyperRAM",
                   caps & SS_CAP_EMULATOR ? ", emulated" : "");
    } else {
        scr_col = COL_RED;
        scr_printf("SSNAIL core not found: $FFD7500 reads $%02x, expected $53.\n", id);
        scr_puts("Start the MEGA65 with a core that includes SSNAIL. Models are listed, not loaded.\n");
    }
    scr_col = COL_LGREEN;
}

static void draw_entry(uint8_t i, uint8_t selected) {
    const model_t *m = &models[i];
    uint8_t fits = model_fits(m);
    const char *verdict = "too big";
    scr_clear_row(LIST_ROW + i);
    scr_at(0, LIST_ROW + i);
    scr_col = COL_YELLOW;
    if (!m->valid) {
        scr_col = COL_GREY;
        verdict = "not an image";
    } else if (fits) {
        scr_col = COL_LGREEN;
        verdict = "fits";
    }
    scr_printf("%-32s %-10s %7lu KB  needs %3lu MB  %s", m->name, source_names[m->source],
               (m->source == SRC_D81 ? m->expected : m->file_size) >> 10,
               (m->mem_needed + 1048575UL) >> 20,
               verdict);
    scr_log('\n');   /* rows are placed with scr_at: keep the transcript one row per line */
    scr_col = COL_LGREEN;
    if (selected) {
        scr_reverse_row(LIST_ROW + i, 1);
        scr_clear_row(21);
        scr_at(0, 21);
        scr_col = COL_CYAN;
        scr_puts(m->desc);
        scr_log('\n');
        scr_col = COL_LGREEN;
    }
}

/* returns the index of the model to load */
static uint8_t browse(void) {
    int8_t sel;
    uint8_t i, k;
    for (;;) {
        header();
        scr_puts("Looking for models on the SD card and the disk...\n");
        models_scan();
        scr_clear_row(3);
        if (!n_models) {
            scr_at(0, LIST_ROW);
            scr_puts("No SSNAIL images found: put .SSNAIL files in the SD card's root or SSNAIL\n"
                     "folder, or on the disk. Press any key to look again.\n");
            kbd_wait();
            continue;
        }
        sel = models_default();
        if (sel < 0) sel = 0;
        for (i = 0; i < n_models; ++i) draw_entry(i, i == sel);
        scr_at(0, 24);
        scr_puts("Cursor up/down: choose   RETURN: load   R: look again\n");
        for (;;) {
            k = kbd_wait();
            if ((k == KEY_DOWN || k == KEY_RIGHT) && sel + 1 < n_models) {
                draw_entry(sel, 0);
                draw_entry(++sel, 1);
            } else if ((k == KEY_UP || k == KEY_LEFT) && sel > 0) {
                draw_entry(sel, 0);
                draw_entry(--sel, 1);
            } else if (k == KEY_RETURN) {
                if (load_model(&models[sel])) return sel;
            } else if (k == 'r' || k == 'R') break;
        }
    }
}

void main(void) {
    uint8_t i;
    scr_init();
    detect();
    for (;;) {
        i = browse();
        chat(models[i].name);
    }
}
