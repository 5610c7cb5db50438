/* chat.h: the conversation with a loaded model (decoders) or the similarity view (encoders). */
#ifndef CHAT_H
#define CHAT_H
#include <stdint.h>
/* returns CHAT_MODELS (/models, or the core hangs) or CHAT_QUIT (/quit) */
#define CHAT_MODELS 0
#define CHAT_QUIT 1
uint8_t chat(const char *name);
#endif
