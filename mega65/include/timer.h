/* timer.h: elapsed time from the CIA 1 time-of-day clock ($DC08-$DC0B, BCD, 1/10 s). */
#ifndef TIMER_H
#define TIMER_H
#include <stdint.h>
void timer_start(void);
uint32_t timer_tenths(void);   /* tenths of a second since timer_start */
#endif
