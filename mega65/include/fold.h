/* fold.h: UTF-8 byte stream -> ASCII (spec §2.5), state kept across tokens. */
#ifndef FOLD_H
#define FOLD_H
#include <stdint.h>
void fold_reset(void);
/* feeds one byte; calls out(c) for each ASCII character produced */
void fold_byte(uint8_t b, void (*out)(char));
#endif
