/* keyboard.c: hardware key queue ($D610 ASCII), line editor. */
#include "io.h"
#include "keyboard.h"
#include "screen.h"

uint8_t kbd_poll(void) {
    uint8_t k = PEEK(0xD610);
    if (k) POKE(0xD610, 0);
    return k;
}

uint8_t kbd_stop_pressed(void) {
    if (PEEK(0xD610) != KEY_STOP) return 0;   /* other keys stay queued (type-ahead) */
    POKE(0xD610, 0);
    return 1;
}

uint8_t kbd_wait(void) {
    uint8_t k;
    while (!(k = kbd_poll())) {}
    return k;
}

uint8_t kbd_readline(char *buf, uint8_t max) {
    uint8_t n = 0, k, i;
    for (;;) {
        SCREEN[scr_y * SCR_W + scr_x] = 0xA0;   /* cursor: reverse space */
        k = kbd_wait();
        SCREEN[scr_y * SCR_W + scr_x] = 0x20;
        if (k == KEY_RETURN) break;
        if ((k == KEY_DEL || k == KEY_BS) && n) {
            --n;
            --scr_x;
        } else if (k >= 32 && k <= 126 && n < max && scr_x < SCR_W - 1) {
            buf[n++] = (char)k;
            scr_draw((char)k);
        }
    }
    buf[n] = 0;
    for (i = 0; i < n; ++i) scr_log(buf[i]);   /* the transcript gets the finished line */
    scr_putc('\n');
    return n;
}
