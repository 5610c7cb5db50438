/* timer.c: CIA 1 time-of-day clock, tenths of a second (BCD registers $DC08-$DC0B). */
#include "io.h"
#include "timer.h"

static uint8_t bcd(uint8_t v) { return (v >> 4) * 10 + (v & 15); }

void timer_start(void) {
    POKE(0xDC0F, PEEK(0xDC0F) & 0x7F);   /* writes set the clock, not the alarm */
    POKE(0xDC0B, 0x01);                  /* writing hours stops the clock ... */
    POKE(0xDC0A, 0);
    POKE(0xDC09, 0);
    POKE(0xDC08, 0);                     /* ... writing tenths starts it */
}

uint32_t timer_tenths(void) {
    uint8_t h = PEEK(0xDC0B) & 0x1F;     /* reading hours latches the others */
    uint8_t m = bcd(PEEK(0xDC0A));
    uint8_t s = bcd(PEEK(0xDC09));
    uint8_t t = bcd(PEEK(0xDC08) & 0x0F);   /* reading tenths releases the latch */
    h = bcd(h) - 1;                      /* started at 1 o'clock (hour 0 is "12" on a 6526) */
    return (((uint32_t)h * 60 + m) * 60 + s) * 10 + t;
}
