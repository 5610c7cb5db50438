/* keyboard.h: the hardware ASCII key queue at $D610 (read, then write to pop). */
#ifndef KEYBOARD_H
#define KEYBOARD_H
#include <stdint.h>
#define KEY_RETURN 0x0D
#define KEY_DEL    0x14
#define KEY_BS     0x08
#define KEY_STOP   0x03     /* RUN/STOP */
#define KEY_ESC    0x1B
#define KEY_DOWN   0x11
#define KEY_UP     0x91
#define KEY_RIGHT  0x1D
#define KEY_LEFT   0x9D
uint8_t kbd_poll(void);           /* 0 = none */
uint8_t kbd_wait(void);
uint8_t kbd_stop_pressed(void);   /* pops the key only if it is RUN/STOP */
uint8_t kbd_readline(char *buf, uint8_t max);   /* echoes; returns length */
#endif
