/* models.c: find SSNAIL images on the SD card (root and the SSNAIL folder, hypervisor calls) and
 * on the mounted D81 (F011 sector reads of the directory on track 40), read their headers, and
 * pick the default: the file named in the SSNAIL folder's CONFIG.TXT if it fits, else the largest
 * that fits. Names are matched in any letter case (FAT keeps the case it was given; the
 * hypervisor's own lookups match upper case only). */
#include <ctype.h>
#include <string.h>
#include "dma.h"
#include "fdc.h"
#include "far.h"
#include "hyppo.h"
#include "models.h"
#include "ssnail_regs.h"
#include "fn_tables.h"   /* OP_GEMV, WT_*: ISA numbers generated from the Rust contract */

uint8_t n_models, n_dot_files, d81_error;
uint16_t n_over;
uint32_t avail_mem;
char ssnail_dir[NAME_MAX + 1];
const char *const source_names[3] = {"SD /", "SD /SSNAIL", "D81"};

#pragma bss-name(push, "HIBSS")
static model_t tmp;
static uint8_t sector[256], dir[256];
static char line[80], found[NAME_MAX + 1], shown[NAME_SHOWN + 1];
#pragma bss-name(pop)

static uint32_t slot(uint8_t i) { return MODELS_ADDR + (uint32_t)i * sizeof(model_t); }

void model_get(uint8_t i, model_t *m) {
    dma_copy((uint32_t)(uint16_t)m, slot(i), sizeof(model_t));
}

static void model_put(uint8_t i, const model_t *m) {
    dma_copy(slot(i), (uint32_t)(uint16_t)m, sizeof(model_t));
}

const char *model_short_name(const model_t *m) {
    uint8_t n = strlen(m->name);
    if (n <= NAME_SHOWN) return m->name;
    memcpy(shown, m->name, NAME_SHOWN - 10);
    memcpy(shown + NAME_SHOWN - 10, "...", 3);
    memcpy(shown + NAME_SHOWN - 7, m->name + n - 7, 8);
    return shown;
}


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

/* The script, read as the file goes past (spec §3.1: 16-byte instructions from H_CODE, which is
 * the payload's start, file byte 256; NOP slots after the last one): float_gemv = 1 when a GEMV
 * multiplies F32, F16 or BF16 weights, its byte 1 (scr_walk in scrwalk.s looks). Reading ends
 * there, at a NOP, at H_DATA, or after SCRIPT_MAX bytes whatever the header says. */
#define SCRIPT_MAX 0x8000U
const uint8_t scr_match[4] = {OP_GEMV, WT_F32, WT_F16, WT_BF16};
extern uint8_t scr_k, scr_len, scr_float;
extern uint16_t scr_left;
/* scr_len bytes (0 = 256) at addr through the walk (scr_k: the place in an instruction; scr_left:
 * script bytes to go); 1 = the walk is over (scr_float = 1: a GEMV over a scr_match format) */
uint8_t __fastcall__ scr_walk(uint32_t addr);

static void script_begin(const model_t *m, const uint8_t *h) {
    uint32_t code = le32(h + H_CODE), len = le32(h + H_DATA) - code;
    scr_k = scr_float = 0;
    scr_left = 0;
    if (!m->valid || code != m->load_base) return;
    scr_left = len > SCRIPT_MAX ? SCRIPT_MAX : (uint16_t)len;
}

/* a new entry for the list, or 0 (counted in n_over) when it is full */
static model_t *new_entry(void) {
    if (n_models >= MAX_MODELS) {
        ++n_over;
        return 0;
    }
    memset(&tmp, 0, sizeof tmp);
    return &tmp;
}

static void scan_sd(uint8_t source) {
    uint8_t first = n_models, i;
    model_t *m;
    if (!hy_opendir()) return;
    while (hy_readdir()) {
        const char *name = (const char *)HYPPO_DIRENT;
        if (HYPPO_DIRENT[DIRENT_ATTR] & DIRENT_ATTR_DIR) {                /* directory */
            if (source == SRC_SD_ROOT && !strcasecmp(name, "SSNAIL")) strcpy(ssnail_dir, name);
            continue;
        }
        /* a long name the record cut (at DIRENT_NAME_MAX bytes) is known by its 8.3 extension */
        if (!ends_with_ci(name, ".SSNAIL") && !ends_with_ci(name, ".SSN") &&
            (HYPPO_DIRENT[DIRENT_NAME_LEN] < DIRENT_NAME_MAX ||
             memcmp(HYPPO_DIRENT + DIRENT_SHORT_NAME + 8, "SSN", 3)))
            continue;
        if (name[0] == '.' && name[1] == '_') {                /* macOS metadata, not an image */
            ++n_dot_files;
            continue;
        }
        if (!(m = new_entry())) continue;
        strncpy(m->name, name, NAME_MAX);
        m->source = source;
        m->file_size = le32(HYPPO_DIRENT + DIRENT_SIZE);
        model_put(n_models++, m);
    }
    hy_closedir();
    for (i = first; i < n_models; ++i) {
        model_get(i, &tmp);
        if (!hy_open(tmp.name)) continue;
        if (hy_read() >= 256) {
            dma_copy((uint32_t)(uint16_t)sector, SD_BUFFER, 256);
            parse_header(&tmp, sector);
            script_begin(&tmp, sector);
            scr_len = 0;   /* the reads are 512 bytes: two walks each */
            if (!scr_walk(SD_BUFFER + 256))
                while (hy_read() && !scr_walk(SD_BUFFER) && !scr_walk(SD_BUFFER + 256)) {}
            tmp.float_gemv = scr_float;
        }
        hy_close();
        model_put(i, &tmp);
    }
}

/* D81 directory entries (track 40 from sector 3, 8 per sector; D81_* in mega65_io.h): each in
 * turn in `dir + e * D81_ENTRY_LEN`, after d81_dir_start; 0 = no more (or the disk cannot be
 * read: d81_error) */
static uint8_t dir_t, dir_s, dir_e, dir_guard;

static void d81_dir_start(void) {
    dir_t = D81_DIR_TRACK;
    dir_s = D81_DIR_SECTOR;
    dir_e = D81_ENTRIES_PER_SECTOR;
    dir_guard = 0;
}

static const uint8_t *d81_dir_next(void) {
    uint32_t a;
    if (dir_e == D81_ENTRIES_PER_SECTOR) {
        if (!dir_t || ++dir_guard > 40) return 0;
        if (!(a = fdc_read(dir_t, dir_s))) {
            d81_error = fdc_error;
            return 0;
        }
        dma_copy((uint32_t)(uint16_t)dir, a, 256);
        dir_t = dir[0];
        dir_s = dir[1];
        dir_e = 0;
    }
    return dir + D81_ENTRY_LEN * dir_e++;
}

/* the entry's name as the program shows it (PETSCII to ASCII, up to 16 characters) in `found` */
static void d81_name(const uint8_t *d) {
    uint8_t i, c;
    for (i = 0; i < D81_NAME_LEN && (c = d[D81_ENTRY_NAME + i]) != D81_PAD; ++i) found[i] = petscii_to_ascii(c);
    found[i] = 0;
}

uint8_t d81_find(const char *name, uint8_t *t, uint8_t *s) {
    const uint8_t *d;
    d81_dir_start();
    while ((d = d81_dir_next())) {
        if (!(d[D81_ENTRY_TYPE] & D81_TYPE_CLOSED)) continue;   /* deleted or unused */
        d81_name(d);
        if (!strcasecmp(found, name)) {
            *t = d[D81_ENTRY_TRACK];
            *s = d[D81_ENTRY_SECTOR];
            return 1;
        }
    }
    return 0;
}

static void scan_d81(void) {
    uint8_t type;
    uint32_t a;
    const uint8_t *d;
    model_t *m;
    d81_dir_start();
    while ((d = d81_dir_next())) {
        type = d[D81_ENTRY_TYPE];
        if (!(type & D81_TYPE_CLOSED) || (type & D81_TYPE_MASK) < D81_TYPE_SEQ || (type & D81_TYPE_MASK) > D81_TYPE_USR)
            continue;
        if (!(a = fdc_read(d[D81_ENTRY_TRACK], d[D81_ENTRY_SECTOR]))) continue;
        dma_copy((uint32_t)(uint16_t)sector, a, 256);
        if (memcmp(sector + 2, IMG_MAGIC, 4)) continue;   /* not an image (e.g. this program) */
        if (!(m = new_entry())) continue;
        d81_name(d);
        strcpy(m->name, found);
        m->source = SRC_D81;
        m->track = d[D81_ENTRY_TRACK];
        m->sector = d[D81_ENTRY_SECTOR];
        m->file_size = (uint32_t)(d[D81_ENTRY_BLOCKS] | d[D81_ENTRY_BLOCKS + 1] << 8) * D81_BLOCK_DATA;
        parse_header(m, sector + 2);
        script_begin(m, sector + 2);
        /* the next blocks: a link (track, sector), 254 bytes; the second starts with the
         * header's last 2 */
        scr_len = 252;
        while (sector[0] && (a = fdc_read(sector[0], sector[1]))) {
            dma_copy((uint32_t)(uint16_t)sector, a, 2);
            if (scr_walk(a + 256 - scr_len)) break;
            scr_len = 254;
        }
        m->float_gemv = scr_float;
        model_put(n_models++, m);
    }
}

/* The SSNAIL folder from the root: by name (the hypervisor's findfile), else by reading the root
 * directory to its entry, which makes it the current entry for chdir ($0C), as hy_open does
 * for files (mega65-core src/hyppo/dos.asm lines 2170-2198: chdir uses the current dirent;
 * lines 2925-2950: readdir fills it). */
uint8_t models_chdir(void) {
    uint8_t ok = 0;
    if (!hy_cdroot() || !ssnail_dir[0]) return 0;
    if (hy_chdir(ssnail_dir)) return 1;
    if (!hy_opendir()) return 0;
    while (hy_readdir())
        if ((HYPPO_DIRENT[DIRENT_ATTR] & DIRENT_ATTR_DIR) && !strcmp((const char *)HYPPO_DIRENT, ssnail_dir)) {
            hy_x = hy_y = hy_z = 0;
            ok = hyppo_call(HYPPO_CHDIR);
            break;
        }
    hy_closedir();
    return ok;
}

uint8_t open_ci(const char *name) {
    found[0] = 0;
    if (hy_open(name)) return 1;
    if (!hy_opendir()) return 0;
    while (hy_readdir())
        if (!strcasecmp((const char *)HYPPO_DIRENT, name)) {
            strncpy(found, (const char *)HYPPO_DIRENT, NAME_MAX);
            break;
        }
    hy_closedir();
    return found[0] && hy_open(found);
}

void models_scan(void) {
    n_models = n_dot_files = 0;
    n_over = 0;
    d81_error = FDC_OK;
    ssnail_dir[0] = 0;
    if (hy_cdroot()) {
        scan_sd(SRC_SD_ROOT);
        if (models_chdir()) scan_sd(SRC_SD_DIR);
        hy_cdroot();
    }
    scan_d81();
}

#pragma code-name (push, "CODE")   /* resident: the chat's overlay uses it too */
uint16_t mb_up(uint32_t bytes) {
    return (uint16_t)(bytes >> 20) + ((bytes & 0xFFFFFUL) != 0);
}
#pragma code-name (pop)

uint8_t model_fits(const model_t *m) {
    return m->valid && avail_mem && m->mem_needed <= avail_mem;
}

int16_t models_default(uint8_t *from_config) {
    int16_t best = -1, i;
    uint32_t best_mem = 0;
    uint16_t n = 0;
    uint8_t k = 0;
    *from_config = 0;
    if (models_chdir() && open_ci("CONFIG.TXT")) {
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
    for (i = 0; k && i < n_models; ++i) {
        model_get((uint8_t)i, &tmp);
        if (!strcasecmp(tmp.name, line) && model_fits(&tmp)) {
            *from_config = 1;
            return i;
        }
    }
    for (i = 0; i < n_models; ++i) {
        model_get((uint8_t)i, &tmp);
        if (model_fits(&tmp) && (best < 0 || tmp.mem_needed > best_mem)) {
            best = i;
            best_mem = tmp.mem_needed;
        }
    }
    return best;
}
