/* device.c: jobs, status and SSNAIL-memory writes for the FPGA core (registers at $FFD7500, load
 * port; spec §9.2, §6.2) or the software core (softcall.h; the 45GS02 runs the job a slice at a
 * time while the program polls, so streaming, RUN/STOP and the hang watch work unchanged). */
#include "device.h"
#include "dma.h"
#include "far.h"
#include "fdc.h"
#include "imgmem.h"
#include "loader.h"
#include "models.h"
#include "softcall.h"
#include "softcore.h"
#include "ssnail_regs.h"

uint8_t core, fpga_version, fpga_caps, soft_status = SOFT_NO_FILE, dev_synced, dev_ended;
uint32_t fpga_mem, soft_mem;
const char soft_file[] = "ssnail.core";

/* instructions per soft_run call: one call between two RUN/STOP and progress checks; a slice
 * costs ~100 cycles of calling, nothing next to an instruction's own work */
#define SOFT_SLICE 8
static uint8_t soft_running;

/* Loading the core runs once, at start-up: the browser's overlay (overlay.h). */
#pragma code-name (push, "OVBROWSE")
#pragma rodata-name (push, "OVBRO")
/* The core file's n bytes at offset off (at far address src): the window part (len bytes) to
 * sc_phys, then each part of the function tables to its sc_tab[i]; 0 when they go past the last. */
static uint8_t soft_put(uint32_t off, uint32_t src, uint16_t n, uint16_t len) {
    uint8_t i = 0;
    uint32_t to = sc_phys;
    uint16_t size = len, k;
    for (;;) {
        if (off < size) {   /* this part's bytes: off + k reaches its end or n is done */
            k = size - off < n ? (uint16_t)(size - off) : n;
            dma_copy(to + off, src, k);
            off += k;
            src += k;
            n -= k;
        }
        if (!n) return 1;
        if (!sc_tab_size[i]) return 0;
        off -= size;
        to = sc_tab[i];
        size = sc_tab_size[i++];
    }
}

void dev_soft_load(void) {
    uint8_t t, s;
    uint32_t a, off = 0;
    uint16_t n, len = 0;
    if (!soft_mem) {
        soft_status = SOFT_NO_ATTIC;
        return;
    }
    if (!d81_find(soft_file, &t, &s)) return;   /* SOFT_NO_FILE */
    soft_status = SOFT_BAD_FILE;
    while (t) {
        if (!(a = fdc_read(t, s))) return;
        t = far_peek(a);
        s = far_peek(a + 1);
        n = t ? 254 : s ? s - 1 : 0;
        /* the header opens the first block: magic, ABI and every length in it checked */
        if (!off && !(len = soft_header(a + 2))) return;
        if (!soft_put(off, a + 2, n, len)) return;
        off += n;
    }
    /* the whole file there, and its check sums right, before any of it runs */
    if (off != (uint32_t)len + sc_tab_bytes || !soft_sums_ok()) return;
    soft_call(SC_INIT);
    soft_status = SOFT_LOADED;
}
#pragma rodata-name (pop)
#pragma code-name (pop)

/* The FPGA core's load port (spec §6.2): resident, as the chat's overlay writes through it. */
uint8_t port_wait_ready(void) {
    uint32_t t = 0;
    if (far_peek(SS_LP_COMMIT) & SS_LP_READY) return 1;   /* the usual case, checked cheaply */
    while (!(far_peek(SS_LP_COMMIT) & SS_LP_READY))
        if (++t == 4000000UL) return 0;
    return 1;
}

void port_commit(uint32_t addr, uint8_t clear_error) {
    far_poke(SS_LP_PTR0, (uint8_t)addr);
    far_poke(SS_LP_PTR0 + 1, (uint8_t)(addr >> 8));
    far_poke(SS_LP_PTR0 + 2, (uint8_t)(addr >> 16));
    far_poke(SS_LP_COMMIT, ((uint8_t)(addr >> 24) & SS_LP_PTR_HIGH) | (clear_error ? SS_LP_CLEAR_ERROR : 0));
}

uint8_t port_write(uint32_t addr, const void *src, uint16_t n) {
    if (!port_wait_ready()) return 0;
    port_commit(addr, 1);
    dma_to_register(SS_LP_DATA, (uint32_t)(uint16_t)src, n);
    port_commit(IMG_BASE, 0);   /* flushes the pending bytes */
    return port_wait_ready() && !(far_peek(SS_LP_COMMIT) & SS_LP_ERROR);
}

uint8_t dev_select(uint8_t which) {
    if (which == CORE_FPGA && !fpga_mem) return 0;
    if (which == CORE_SOFT && soft_status != SOFT_LOADED) return 0;
    core = which;
    avail_mem = which == CORE_FPGA ? fpga_mem : which == CORE_SOFT ? soft_mem : 0;
    return 1;
}

void dev_go(uint32_t job) {
    uint8_t i;
    dev_ended = 0;
    if (core == CORE_SOFT) {
        sc_job = job;
        sc_memend = img_top;   /* the script's accesses end where the image's memory ends */
        soft_call(SC_GO);
        soft_running = 1;
        return;
    }
    for (i = 0; i < 4; ++i) far_poke(SS_JOB0 + i, (uint8_t)(job >> (8 * i)));
    far_poke(SS_GO, SS_GO_START);
}

uint8_t dev_busy(void) {
    if (core != CORE_SOFT) return far_peek(SS_STATUS) & SS_STATUS_BUSY;
    if (soft_running) {
        sc_budget = SOFT_SLICE;
        soft_call(SC_RUN);
        if (sc_result == SOFT_SYNC) dev_synced = 1;
        if (sc_result == SOFT_STOPPED) dev_ended = 1;   /* RUN/STOP inside an instruction */
        if (sc_result >= SOFT_HALT) soft_running = 0;      /* HALT, FAULT, STOPPED */
    }
    return soft_running;
}

uint8_t dev_error(void) { return core == CORE_SOFT ? sc_error : far_peek(SS_ERROR); }

uint32_t dev_job_pc(void) { return sc_faultpc; }

uint32_t dev_fault_pc(void) { return core == CORE_SOFT ? sc_faultpc : far_peek32(SS_FAULT_PC0); }

uint8_t dev_write(uint32_t addr, const void *src, uint16_t n) {
    /* only into the image's memory, whichever core: the FPGA's load port would refuse less, and
     * the software core's DMA would write anywhere */
    if (!img_inside(addr, n, 0)) return 0;
    if (core != CORE_SOFT) return port_write(addr, src, n);
    dma_copy(addr, (uint32_t)(uint16_t)src, n);
    return 1;
}

void dev_stop(void) {
    static const uint32_t one = 1;
    if (core == CORE_SOFT) {   /* the program runs it: it ends here, mid-token if need be */
        soft_running = 0;
        dev_ended = 1;
        return;
    }
    /* the port takes bytes while a job runs: no READY wait */
    port_commit(HDR(RB_STOP_REQUEST), 0);
    dma_to_register(SS_LP_DATA, (uint32_t)(uint16_t)&one, 4);
    port_commit(IMG_BASE, 0);
}
