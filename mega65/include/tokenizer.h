/* tokenizer.h: the image tokenizer (spec §2.2), reading the image's tables in place. */
#ifndef TOKENIZER_H
#define TOKENIZER_H
#include <stdint.h>
#ifndef __CC65__
#define __fastcall__
#endif
#include "ssnail_regs.h"   /* TOK_SPM, TOK_BPE, TOK_WORDPIECE, TOK_NONE, TB_*, TF_* */
/* reads header $18, $1C, $78 and the tables from image memory (tok_tables); 0 = a table lies
 * outside the image's memory (imgmem.h) or the block is damaged: every search finds nothing */
uint8_t tok_init(void);
uint8_t tok_tables(void);
extern uint8_t tok_kind;
/* encode ASCII text; returns the number of ids written (at most max), -1 if they do not fit, or
 * TOK_STOPPED when tok_poll said to stop */
int16_t tok_encode(const char *text, uint8_t first, uint32_t *out, uint16_t max);
#define TOK_STOPPED (-2)
/* called between merges and between WordPiece searches (hostile tables can make those take
 * seconds); 1 = stop (the program: RUN/STOP). NULL: never */
extern uint8_t (*tok_poll)(void);
extern uint32_t tok_index;   /* address of the sorted index, which follows the vocab table */
uint32_t __fastcall__ tok_find(const uint8_t *s, uint8_t len);   /* sorted-index lookup, TOK_NONE if absent */
#endif
