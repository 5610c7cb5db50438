/* keyboard.h: the hardware ASCII key queue at $D610 (read, then write to pop) and the RUN/STOP
 * key in the keyboard matrix. */
#ifndef KEYBOARD_H
#define KEYBOARD_H
#include <stdint.h>
#define KEY_RETURN 0x0D
#define KEY_DEL    0x14
#define KEY_BS     0x08
#define KEY_STOP   0x03     /* RUN/STOP */
#define KEY_ESC    0x1B
#define KEY_TAB    0x09
#define KEY_DOWN   0x11
#define KEY_UP     0x91
#define KEY_RIGHT  0x1D
#define KEY_LEFT   0x9D
uint8_t kbd_poll(void);           /* 0 = none */
uint8_t kbd_wait(void);
/* 1 = RUN/STOP: held now (the keyboard matrix, $D613/$D614) or first in the queue; other queued
 * keys stay (type-ahead). kbd_poll never returns RUN/STOP's $03. */
uint8_t kbd_stop_pressed(void);
/* echoes, wrapping over rows; up to max characters; returns the length */
uint8_t kbd_readline(char *buf, uint8_t max);
#endif
