/* models.c: find SSNAIL images on the SD card (root and SSNAIL/, hypervisor calls) and on the
 * mounted D81 (F011 sector reads of the directory on track 40), read their headers, and pick
 * the default: the file named in SSNAIL/CONFIG.TXT if it fits, else the largest that fits. */
#include <ctype.h>
#include <string.h>
#include "dma.h"
#include "fdc.h"
#include "far.h"
#include "hyppo.h"
#include "models.h"
#include "ssnail_regs.h"

model_t models[MAX_MODELS];
uint8_t n_models, d81_error;
uint32_t avail_mem;
const char *const source_names[3] = {"SD /", "SD /SSNAIL", "D81"};

static uint8_t sector[256];

static uint32_t le32(const uint8_t *p) {
    return p[0] | (uint16_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint8_t ends_with_ci(const char *s, const char *suffix) {
    uint8_t n = strlen(s), k = strlen(suffix), i;
    if (n < k) return 0;
    for (i = 0; i < k; ++i)
        if (toupper((uint8_t)s[n - k + i]) != suffix[i]) return 0;
    return 1;
}

/* Written without ?: on purpose: cc65 2.19 miscompiles some conditional expressions with
 * && in the condition (wrong stack slot read), seen on exactly these lines. */
static char printable(uint8_t c) {
    if (c < 32 || c > 126) return '?';
    return c;
}

static char petscii_to_ascii(uint8_t c) {
    if (c >= 0x41 && c <= 0x5A) return c + 32;
    if (c >= 0xC1 && c <= 0xDA) return c - 0x80;
    return printable(c);
}

/* h = the first bytes of the file (at least $80 + DESC_SHOWN + 1) */
static void parse_header(model_t *m, const uint8_t *h) {
    uint8_t i, c;
    m->valid = !memcmp(h + H_MAGIC, IMG_MAGIC, 4);
    m->version = h[H_VERSION] | h[H_VERSION + 1] << 8;
    m->expected = IMG_HEADER_LEN + le32(h + H_PAYLOAD_LEN);
    m->mem_needed = le32(h + H_MEM_NEEDED);
    m->arch = h[H_ARCH];
    m->load_base = le32(h + H_LOAD_BASE);
    m->host_seg_len = le32(h + H_HOST_SEG_LEN);
    m->desc[0] = 0;
    if (!m->valid) return;   /* no header: its bytes are no description */
    for (i = 0; i < DESC_SHOWN && (c = h[H_DESC + i]); ++i) m->desc[i] = printable(c);
    m->desc[i] = 0;
    if (i == DESC_SHOWN && h[H_DESC + i]) memcpy(m->desc + DESC_SHOWN - 3, "...", 3);  /* cut */
}

static void scan_sd(uint8_t source) {
    uint8_t first = n_models, i;
    model_t *m;
    if (!hy_opendir()) return;
    while (n_models < MAX_MODELS && hy_readdir()) {
        const char *name = (const char *)HYPPO_DIRENT;
        if (HYPPO_DIRENT[DIRENT_ATTR] & 0x10) continue;       /* directory */
        if (strlen(name) > 32) continue;
        if (!ends_with_ci(name, ".SSNAIL") && !ends_with_ci(name, ".SSN")) continue;
        m = &models[n_models++];
        memset(m, 0, sizeof *m);
        strcpy(m->name, name);
        m->source = source;
        m->file_size = le32(HYPPO_DIRENT + DIRENT_SIZE);
    }
    hy_closedir();
    for (i = first; i < n_models; ++i) {
        m = &models[i];
        if (!hy_open(m->name)) continue;
        if (hy_read() >= 256) {
            dma_copy((uint32_t)(uint16_t)sector, SD_BUFFER, 256);
            parse_header(m, sector);
        }
        hy_close();
    }
}

static void scan_d81(void) {
    static uint8_t dir[256];
    uint8_t t = 40, s = 3, guard, e, i, c, type;
    uint32_t a;
    model_t *m;
    for (guard = 0; guard < 40 && t; ++guard) {
        if (!(a = fdc_read(t, s))) {
            d81_error = fdc_error;
            return;
        }
        dma_copy((uint32_t)(uint16_t)dir, a, 256);
        for (e = 0; e < 8 && n_models < MAX_MODELS; ++e) {
            const uint8_t *d = dir + e * 32;
            type = d[2];
            if (!(type & 0x80) || (type & 7) < 1 || (type & 7) > 3) continue;  /* SEQ PRG USR */
            if (!(a = fdc_read(d[3], d[4]))) continue;
            dma_copy((uint32_t)(uint16_t)sector, a, 256);
            if (memcmp(sector + 2, IMG_MAGIC, 4)) continue;   /* not an image (e.g. this program) */
            m = &models[n_models++];
            memset(m, 0, sizeof *m);
            for (i = 0; i < 16 && (c = d[5 + i]) != 0xA0; ++i)
                m->name[i] = petscii_to_ascii(c);
            m->source = SRC_D81;
            m->track = d[3];
            m->sector = d[4];
            m->file_size = (uint32_t)(d[0x1E] | d[0x1F] << 8) * 254;
            parse_header(m, sector + 2);
        }
        t = dir[0];
        s = dir[1];
    }
}

void models_scan(void) {
    n_models = 0;
    d81_error = FDC_OK;
    if (hy_cdroot()) {
        scan_sd(SRC_SD_ROOT);
        if (hy_chdir("SSNAIL")) scan_sd(SRC_SD_DIR);
        hy_cdroot();
    }
    scan_d81();
}

uint8_t model_fits(const model_t *m) {
    return m->valid && avail_mem && m->mem_needed <= avail_mem;
}

int8_t models_default(void) {
    static char line[80];
    int8_t best = -1, i;
    uint16_t n;
    uint8_t k = 0;
    if (hy_cdroot() && hy_chdir("SSNAIL") && hy_open("CONFIG.TXT")) {
        n = hy_read();
        if (n) {
            dma_copy((uint32_t)(uint16_t)sector, SD_BUFFER, 256);
            while (k < 79 && k < n && sector[k] != '\r' && sector[k] != '\n') {
                line[k] = sector[k];
                ++k;
            }
        }
        hy_close();
    }
    line[k] = 0;
    hy_cdroot();
    for (i = 0; k && i < (int8_t)n_models; ++i)
        if (!strcasecmp(models[i].name, line) && model_fits(&models[i])) return i;
    for (i = 0; i < (int8_t)n_models; ++i)
        if (model_fits(&models[i]) && (best < 0 || models[i].mem_needed > models[best].mem_needed))
            best = i;
    return best;
}
