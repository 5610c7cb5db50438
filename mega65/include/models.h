/* models.h: the SSNAIL images the program can see (SD card root, SD card SSNAIL/, the D81). */
#ifndef MODELS_H
#define MODELS_H
#include <stdint.h>
#define SRC_SD_ROOT 0
#define SRC_SD_DIR  1
#define SRC_D81     2
#define MAX_MODELS  16
#define DESC_SHOWN  76           /* 4 columns of indent + 76 = one 80-column row */
typedef struct {
    char name[33];
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
} model_t;
extern model_t models[MAX_MODELS];
extern uint8_t n_models;
extern uint8_t d81_error;    /* fdc_error of the D81 directory read (FDC_OK = read) */
extern uint32_t avail_mem;   /* bytes of SSNAIL memory on this board (0 = no SSNAIL) */
void models_scan(void);
int8_t models_default(void); /* CONFIG.TXT choice, else the largest that fits; -1 = none */
uint8_t model_fits(const model_t *m);
extern const char *const source_names[3];
#endif
