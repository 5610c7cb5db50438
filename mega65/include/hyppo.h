/* hyppo.h: hypervisor (HDOS) file calls through the $D640 trap (spec §M5). */
#ifndef HYPPO_H
#define HYPPO_H
#include <stdint.h>
extern uint8_t hy_x, hy_y, hy_z, hy_a;
uint8_t __fastcall__ hyppo_call(uint8_t function);   /* 1 = success */
void __fastcall__ serial_putc(char c);                /* trap 3: serial monitor */

/* DOS trap numbers (A for $D640; Hyppo's dos.asm dispatch table, spec §M5) */
#define HYPPO_GETCURRENTDRIVE 0x04
#define HYPPO_CHDIR           0x0C
#define HYPPO_OPENDIR         0x12
#define HYPPO_READDIR         0x14
#define HYPPO_CLOSEDIR        0x16
#define HYPPO_OPENFILE        0x18
#define HYPPO_READFILE        0x1A
#define HYPPO_CLOSEFILE       0x20
#define HYPPO_SETNAME         0x2E
#define HYPPO_FINDFILE        0x34
#define HYPPO_CDROOTDIR       0x3C
#define DIRENT_ATTR_DIR       0x10   /* readdir attribute bit: a directory */

#define HYPPO_NAME_PAGE  0x04        /* $0400: name for setname (page < $7F) */
#define HYPPO_DIRENT     ((uint8_t *)0x0500)  /* readdir record */
#define SD_BUFFER        0x0FFD6E00UL
#define F011_BUFFER      0x0FFD6C00UL

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
/* readdir record (Hyppo dos.asm; emu/mega65 hyppo.rs): the long name, NUL-terminated, cut to
 * DIRENT_LFN_MAX bytes; its length; the 8.3 name (8 + 3 bytes, space padded, no dot) */
#define DIRENT_NAME   0x00
#define DIRENT_LFN_MAX 63
#define DIRENT_LFN_LEN 0x40
#define DIRENT_SHORT_EXT 0x49
#define DIRENT_SIZE   0x52
#define DIRENT_ATTR   0x56
#endif
