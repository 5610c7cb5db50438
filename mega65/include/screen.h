/* screen.h: 80x25 text screen at $0800 written directly (no KERNAL); every character printed
 * also goes to the serial monitor (trap 3) so a headless run can capture the transcript. */
#ifndef SCREEN_H
#define SCREEN_H
#include <stdint.h>
#define SCR_W 80
#define SCR_H 25
#define COL_WHITE 1
#define COL_RED 2
#define COL_CYAN 3
#define COL_GREEN 5
#define COL_YELLOW 7
#define COL_LGREEN 13
#define COL_LBLUE 14
#define COL_GREY 15
extern uint8_t scr_x, scr_y, scr_col;
void scr_init(void);
void scr_restore(void);         /* the VIC-IV registers as scr_init found them */
void scr_clear(void);
void scr_at(uint8_t x, uint8_t y);
void scr_putc(char c);          /* ASCII; \n newline; wraps and scrolls */
extern uint8_t scr_quiet;       /* 1: scr_putc, scr_puts, scr_printf draw without the serial copy */
void scr_puts(const char *s);
void scr_printf(const char *fmt, ...);
void scr_clear_row(uint8_t y);
void scr_reverse_row(uint8_t y, uint8_t on);
uint8_t scr_code(char c);       /* ASCII -> screen code (our character set: the same, '?' for
                                   non-printable; + $80 = reversed) */
#include "chipram.h"            /* CHARSET: the 2 KB character set in chip RAM */
void scr_draw(char c);          /* put c at the cursor and advance, without the serial copy */
void scr_log(char c);           /* serial copy only */
/* word-wrapped output for generated text */
void wrap_putc(char c);
void wrap_flush(void);
#endif
