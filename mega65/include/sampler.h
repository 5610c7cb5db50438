/* sampler.h: sampling on the MEGA65 (spec §7.6): temperature, top-k and repetition penalty in
 * fixed point, bit for bit what `ssnail chat --sampler mega65` chooses with the same seed. */
#ifndef SAMPLER_H
#define SAMPLER_H
#include <stdint.h>
#ifndef __CC65__
#define __fastcall__
#endif
#define SMP_KEEP 0xFFFFFFFFUL   /* no candidate: keep the ARGMAX result */
extern uint16_t smp_temp;       /* thousandths; 0 = greedy (one job per answer, as without sampling) */
/* the model's logits (f32 at out, n of them) and token buffer */
void smp_init(uint32_t out, uint32_t n, uint32_t tokens);
void smp_greedy(void);          /* temperature 0 and penalty 1.0 (an image's default, header $58) */
/* the token for the logits of position q (the window is slots q-63..q), or SMP_KEEP */
uint32_t __fastcall__ smp_choose(uint16_t q);
/* /temp /topk /penalty /seed: 1 = handled (prints the new settings) */
uint8_t smp_command(const char *line);
/* a decimal number at s to its end into smp_num (at most 4294967295; milli: with up to four
 * decimals, times 1000, at most 65); 1 = one was there */
uint8_t smp_parse(const char *s, uint8_t milli);
extern uint32_t smp_num;
void smp_show(void);            /* "[sampling: ...]" or "[greedy ...]" */
#endif
