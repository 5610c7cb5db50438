/* hyppo.h: hypervisor (HDOS) file calls through the $D640 trap (spec §M5). */
#ifndef HYPPO_H
#define HYPPO_H
#include <stdint.h>
#include "mega65_io.h"
extern uint8_t hy_x, hy_y, hy_z, hy_a;
uint8_t __fastcall__ hyppo_call(uint8_t function);   /* 1 = success */
void __fastcall__ serial_putc(char c);                /* trap 3: serial monitor */

/* trap numbers, the readdir record, SD_BUFFER and F011_BUFFER: mega65_io.h */
#define HYPPO_NAME_PAGE  0x04        /* $0400: name for setname (page < $7F) */
#define HYPPO_DIRENT     ((uint8_t *)0x0500)  /* readdir record */

uint8_t hy_cdroot(void);
uint8_t hy_chdir(const char *name);      /* one level, from the current directory */
uint8_t hy_open(const char *name);       /* 1 = opened (findfile, or readdir match as fallback) */
uint16_t hy_read(void);                  /* next sector into the SD buffer: bytes, 0 = EOF/error */
/* up to n times: hy_read, then the DMA job from SD_BUFFER with the count; stops at a short sector
 * or end of file. A job into the load port (dma_job_to_register) first waits for its READY; a job
 * into memory (dma_job_to_memory) moves its destination on by the count. Bytes sent, or $FFFF
 * when the port never became READY (hw.s). */
uint16_t __fastcall__ sd_sectors_dma(void *job, uint8_t n);
extern const uint32_t lp_commit;   /* SS_LP_COMMIT, for hw.s */
void hy_close(void);
uint8_t hy_opendir(void);                /* 1 = ok */
uint8_t hy_readdir(void);                /* 1 = record at HYPPO_DIRENT */
void hy_closedir(void);
#endif
