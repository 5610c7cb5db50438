/* timer.h: elapsed time from CIA 1's timers A and B chained into a 32-bit counter of 1 MHz
 * ticks (B counts A's underflows), i.e. microseconds, up to 71 minutes. */
#ifndef TIMER_H
#define TIMER_H
#include <stdint.h>
void timer_start(void);
uint32_t timer_ms(void);   /* milliseconds since timer_start */
#endif
