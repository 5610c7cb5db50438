/* tokenizer.h: the image tokenizer (spec §2.2), reading the image's tables in place. */
#ifndef TOKENIZER_H
#define TOKENIZER_H
#include <stdint.h>
#ifndef __CC65__
#define __fastcall__
#endif
#define TOK_SPM 0
#define TOK_BPE 1
#define TOK_WORDPIECE 2
#define TOK_NONE 0xFFFFFFFFUL
uint8_t tok_init(void);      /* reads header $78/$18 from image memory; 0 = bad block */
extern uint8_t tok_kind;
/* encode ASCII text; returns the number of ids written (at most max), or -1 if they do not fit */
int16_t tok_encode(const char *text, uint8_t first, uint32_t *out, uint16_t max);
uint32_t __fastcall__ tok_find(const uint8_t *s, uint8_t len);   /* sorted-index lookup, TOK_NONE if absent */
#endif
