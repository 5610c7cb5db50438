/* models.h: the SSNAIL images the program can see (SD card root, the SD card's SSNAIL folder in
 * any letter case, the D81). The list lives in chip RAM (MODELS_ADDR, reached by DMA), so there
 * may be up to MAX_MODELS; model_get copies one entry into bank 0. */
#ifndef MODELS_H
#define MODELS_H
#include <stdint.h>
#define SRC_SD_ROOT 0
#define SRC_SD_DIR  1
#define SRC_D81     2
#define MAX_MODELS  200
#define NAME_MAX    64           /* a FAT long name as the hypervisor's readdir gives it */
#define NAME_SHOWN  32           /* longer names are shown shortened (model_short_name) */
#define DESC_SHOWN  76           /* 4 columns of indent + 76 = one 80-column row */
#include "chipram.h"      /* MODELS_ADDR: MAX_MODELS x sizeof(model_t) in chip RAM */
typedef struct {
    char name[NAME_MAX + 1];
    uint8_t source;
    uint8_t track, sector;   /* D81: first sector of the file */
    uint8_t valid;           /* magic and version checked */
    uint32_t file_size;      /* SD: exact; D81: blocks x 254 (upper bound) */
    uint32_t expected;       /* 256 + payload length from the header */
    uint32_t mem_needed;
    uint8_t arch;
    uint16_t version;
    uint32_t load_base;      /* header $64 (0 = legacy $8000100) */
    uint32_t host_seg_len;   /* header $74: legacy host segment, refused */
    char desc[DESC_SHOWN + 1];   /* the header's description, cut to one indented row */
    uint8_t float_gemv;      /* its script has a GEMV over F32, F16 or BF16 weights (models.c): on
                              * the software core ~9x slower a weight than Q8_0/Q4_0 */
} model_t;
extern uint8_t n_models;
/* files not listed by the last scan: macOS "._" companions, and images beyond MAX_MODELS */
extern uint8_t n_dot_files;
extern uint16_t n_over;
extern uint8_t d81_error;    /* fdc_error of the D81 directory read (FDC_OK = read) */
extern char ssnail_dir[NAME_MAX + 1];   /* the SSNAIL folder's name as on the card ("" = none) */
extern uint32_t avail_mem;   /* bytes of SSNAIL memory on this board (0 = no SSNAIL core) */
void models_scan(void);
void model_get(uint8_t i, model_t *m);
/* the name cut to NAME_SHOWN characters: start, "...", the last 7 (the extension) */
const char *model_short_name(const model_t *m);
/* CONFIG.TXT's choice (*from_config = 1), else the largest that fits; -1 = none */
int16_t models_default(uint8_t *from_config);
uint8_t model_fits(const model_t *m);
/* bytes in whole MB (2^20), rounded up, without the 32-bit wrap of adding 2^20 - 1 first */
uint16_t mb_up(uint32_t bytes);
/* a file of the D81 in drive 0 by name (any letter case): its first track and sector; 1 = found */
uint8_t d81_find(const char *name, uint8_t *t, uint8_t *s);
/* opens a file of the SD card's current folder whose name matches in any letter case; 1 = open */
uint8_t open_ci(const char *name);
/* the SSNAIL folder (cdroot first); 1 = entered */
uint8_t models_chdir(void);
extern const char *const source_names[3];
#endif
