/* loader.h: load an image through SSNAIL's load port (spec §6.2). */
#ifndef LOADER_H
#define LOADER_H
#include "models.h"
/* 1 = loaded; otherwise the reason was printed */
uint8_t load_model(const model_t *m);
/* the load port: write n bytes from bank-0 memory to SSNAIL address addr; 1 = ok */
uint8_t port_write(uint32_t addr, const void *src, uint16_t n);
void port_commit(uint32_t addr, uint8_t clear_error);
uint8_t port_wait_ready(void);
#endif
