/* keyboard.c: hardware key queue ($D610 ASCII), line editor. */
#include "io.h"
#include "keyboard.h"
#include "screen.h"

/* RUN/STOP is key 63 of the MEGA65 matrix (mega65-core matrix_to_ascii.vhdl line 152: key 63
 * types $03): column 7, bit 7 (key number = column x 8 + bit, lines 934-936). $D614 selects a
 * column of the combined keyboard matrix and $D613 reads it, 0 = held (iomap.txt lines 532-533,
 * c65uart.vhdl lines 779-784, keyboard_complex.vhdl lines 365-371). Reading it sees RUN/STOP
 * however many typed keys wait in the $D610 queue before its $03. */
#define STOP_COLUMN 7
#define STOP_BIT 0x80

/* a RUN/STOP acted on through the matrix whose $03 is still somewhere in the queue */
static uint8_t stop_queued;

uint8_t kbd_poll(void) {
    uint8_t k = PEEK(KBD_ASCII);
    if (k) POKE(KBD_ASCII, 0);
    if (k == KEY_STOP) {   /* RUN/STOP is never text; its job was done by kbd_stop_pressed */
        stop_queued = 0;
        return 0;
    }
    return k;
}

uint8_t kbd_stop_pressed(void) {
    if (PEEK(KBD_ASCII) == KEY_STOP) {   /* at the head of the queue: take it */
        POKE(KBD_ASCII, 0);
        if (!stop_queued) return 1;
        stop_queued = 0;              /* the $03 of a press already acted on */
    }
    POKE(KBD_MATRIX_SELECT, STOP_COLUMN);
    if (PEEK(KBD_MATRIX_PEEK) & STOP_BIT) return 0;
    stop_queued = 1;                  /* held: its $03 stays queued behind the type-ahead */
    return 1;
}

uint8_t kbd_wait(void) {
    uint8_t k;
    while (!(k = kbd_poll())) {}
    return k;
}

/* The line may fill the whole buffer, wrapping over screen rows (the screen scrolls under it);
 * DEL goes back across a wrap. TAB is text (drawn as a space, kept as a tab). */
uint8_t kbd_readline(char *buf, uint8_t max) {
    uint8_t n = 0, k, i;
    for (;;) {
        SCREEN[scr_y * SCR_W + scr_x] = 0xA0;   /* cursor: reverse space */
        k = kbd_wait();
        SCREEN[scr_y * SCR_W + scr_x] = 0x20;
        if (k == KEY_RETURN) break;
        if ((k == KEY_DEL || k == KEY_BS) && n) {
            --n;
            if (scr_x) --scr_x;
            else {                                /* back over the wrap to the row above */
                --scr_y;
                scr_x = SCR_W - 1;
            }
            SCREEN[scr_y * SCR_W + scr_x] = 0x20;
        } else if (((k >= 32 && k <= 126) || k == KEY_TAB) && n < max) {
            buf[n++] = (char)k;
            scr_draw(k == KEY_TAB ? ' ' : (char)k);
            if (scr_x == SCR_W) scr_draw('\n');  /* the cursor goes to the next row */
        }
    }
    buf[n] = 0;
    for (i = 0; i < n; ++i) scr_log(buf[i]);   /* the transcript gets the finished line */
    if (n && scr_x == 0) scr_log('\n');        /* a full last row already moved down */
    else scr_putc('\n');
    return n;
}
