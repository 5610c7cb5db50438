/* chat.h: the conversation with a loaded model (decoders) or the similarity view (encoders). */
#ifndef CHAT_H
#define CHAT_H
/* returns when the user types /models */
void chat(const char *name);
#endif
