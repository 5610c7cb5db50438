/* timer.c: CIA 1 timer A counts 1 MHz ticks from $FFFF down, continuously; timer B counts A's
 * underflows. Together they count microseconds. Interrupts from CIA 1 are switched off (the
 * program runs with SEI anyway). */
#include "io.h"
#include "mega65_io.h"
#include "timer.h"

void timer_start(void) {
    POKE(CIA1_ICR, CIA1_ICR_ALL);   /* bit 7 clear: no CIA 1 interrupt sources */
    POKE(CIA1_CRA, 0x00);           /* stop A and B */
    POKE(CIA1_CRB, 0x00);
    POKE(CIA1_TALO, 0xFF);
    POKE(CIA1_TAHI, 0xFF);
    POKE(CIA1_TBLO, 0xFF);
    POKE(CIA1_TBHI, 0xFF);
    POKE(CIA1_CRB, CIA1_CR_LOAD | CIA1_CRB_COUNT_TA | CIA1_CR_START);   /* B: count A's underflows */
    POKE(CIA1_CRA, CIA1_CR_LOAD | CIA1_CR_START);                       /* A: continuous, ticks */
}

uint32_t timer_ms(void) {
    uint8_t bl, bh, al, ah, ah2;
    uint16_t a, b;
    do {
        bl = PEEK(CIA1_TBLO);
        bh = PEEK(CIA1_TBHI);
        do {
            ah = PEEK(CIA1_TAHI);
            al = PEEK(CIA1_TALO);
            ah2 = PEEK(CIA1_TAHI);
        } while (ah != ah2);
    } while (bl != PEEK(CIA1_TBLO) || bh != PEEK(CIA1_TBHI));
    a = 0xFFFF - (al | (uint16_t)ah << 8);
    b = 0xFFFF - (bl | (uint16_t)bh << 8);
    return (((uint32_t)b << 16) | a) / 1000;
}
