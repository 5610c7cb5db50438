/* hyppo.c: HDOS file calls (spec §M5): setname/findfile/openfile/readfile/closefile,
 * opendir/readdir/closedir, chdir, cdrootdir. */
#include <string.h>
#include "hyppo.h"
#include "io.h"

static uint8_t file_fd, dir_fd;

static uint8_t call(uint8_t fn, uint8_t x, uint8_t y) {
    hy_x = x;
    hy_y = y;
    hy_z = 0;
    return hyppo_call(fn);
}

static uint8_t setname(const char *name) {
    strncpy((char *)(HYPPO_NAME_PAGE << 8), name, 63);
    ((char *)(HYPPO_NAME_PAGE << 8))[63] = 0;
    return call(HYPPO_SETNAME, 0, HYPPO_NAME_PAGE);
}

uint8_t hy_cdroot(void) {
    if (!call(HYPPO_GETCURRENTDRIVE, 0, 0)) return 0;
    return call(HYPPO_CDROOTDIR, hy_a, 0);
}

uint8_t hy_chdir(const char *name) {
    return setname(name) && call(HYPPO_FINDFILE, 0, 0) && call(HYPPO_CHDIR, 0, 0);
}

uint8_t hy_opendir(void) {
    if (!call(HYPPO_OPENDIR, 0, 0)) return 0;
    dir_fd = hy_a;
    return 1;
}

uint8_t hy_readdir(void) { return call(HYPPO_READDIR, dir_fd, (uint8_t)((uint16_t)HYPPO_DIRENT >> 8)); }

void hy_closedir(void) { call(HYPPO_CLOSEDIR, dir_fd, 0); }

static uint8_t openfound(void) {
    if (!call(HYPPO_OPENFILE, 0, 0)) return 0;
    file_fd = hy_a;
    return 1;
}

uint8_t hy_open(const char *name) {
    uint8_t found = 0;
    if (setname(name) && call(HYPPO_FINDFILE, 0, 0) && openfound()) return 1;
    /* Hyppo matches only upper-case long names: find the entry by reading the directory. Also
     * when findfile succeeded but openfile failed: xemu's -hdosvirt findfile matches without
     * case, then openfile looks for the lower-cased setname name, which a host file system
     * with case does not have (docs/FINDINGS.md). */
    if (!hy_opendir()) return 0;
    while (hy_readdir())
        if (!strcmp((char *)HYPPO_DIRENT, name)) { found = 1; break; }
    /* Close the directory before openfile, not after: readfile reads the descriptor named
     * last by openfile, readdir, closefile or closedir (Hyppo dos.asm trap_dos_readdir and
     * trap_dos_closefile store X in dos_current_file_descriptor; dos_readfile reads that one),
     * so a closedir after openfile would leave readfile on the closed directory. openfile
     * opens the entry readdir left in the dirent, which closedir keeps (trap_dos_openfile;
     * dos_readfileintomemory does the same findfirst, closefile, openfile). */
    hy_closedir();
    return found && openfound();
}

uint16_t hy_read(void) {
    uint8_t ok = call(HYPPO_READFILE, 0, 0);
    uint16_t n = hy_x | (uint16_t)hy_y << 8;
    POKE(SD_BUFFER_SELECT, PEEK(SD_BUFFER_SELECT) | SD_BUFSEL_SD); /* show the SD buffer, not the F011 one */
    if (!ok && n) return 0;                   /* error (EOF is 0 bytes whatever C says) */
    return n;
}

void hy_close(void) { call(HYPPO_CLOSEFILE, file_fd, 0); }
