/* timer.c: CIA 1 timer A counts 1 MHz ticks from $FFFF down, continuously; timer B counts A's
 * underflows. Together they count microseconds. Interrupts from CIA 1 are switched off (the
 * program runs with SEI anyway). */
#include "io.h"
#include "timer.h"

void timer_start(void) {
    POKE(0xDC0D, 0x7F);   /* no CIA 1 interrupt sources */
    POKE(0xDC0E, 0x00);   /* stop A and B */
    POKE(0xDC0F, 0x00);
    POKE(0xDC04, 0xFF);
    POKE(0xDC05, 0xFF);
    POKE(0xDC06, 0xFF);
    POKE(0xDC07, 0xFF);
    POKE(0xDC0F, 0x51);   /* B: load, count A underflows (bits 5-6 = %10), start */
    POKE(0xDC0E, 0x11);   /* A: load, continuous, count ticks, start */
}

uint32_t timer_ms(void) {
    uint8_t bl, bh, al, ah, ah2;
    uint16_t a, b;
    do {
        bl = PEEK(0xDC06);
        bh = PEEK(0xDC07);
        do {
            ah = PEEK(0xDC05);
            al = PEEK(0xDC04);
            ah2 = PEEK(0xDC05);
        } while (ah != ah2);
    } while (bl != PEEK(0xDC06) || bh != PEEK(0xDC07));
    a = 0xFFFF - (al | (uint16_t)ah << 8);
    b = 0xFFFF - (bl | (uint16_t)bh << 8);
    return (((uint32_t)b << 16) | a) / 1000;
}
