/* softcore.c: the software SSNAIL core's instruction loop — fetch, decode, the scalar, branch and
 * copy instructions, and dispatch of the vector unit's (softvec.c, softattn.c) and GEMV/DEQROW
 * (softgemv.c). docs/spec/isa.md §3; the reference is emu/core/src/machine.rs (Machine::step and
 * exec), whose checks and their order this follows so that faults and error codes agree. */
#include "softcore.h"
#include "softcore_int.h"
#include "softmem.h"
#include "fn_tables.h"
#include "ssnail_regs.h"
#include "mega65_io.h"
#include "softvec65.h"

uint8_t soft_error;
uint32_t soft_fault_pc;
uint32_t soft_pc;
uint32_t soft_mem_end;
uint32_t soft_instr_limit = SS_INSTR_LIMIT;
uint32_t soft_work_limit;
/* softstep65.s (cc65 builds with the ca65 kernels): the limits, the fetch and the scalar and branch
 * instructions; it leaves the others to sc_exec below. Its state is these globals. */
#if defined(__CC65__) && !defined(SC_C_GEMV)
#define SC_ASM_STEP 1
#define SC_STATE
#else
#define SC_STATE static
#endif
SC_STATE uint32_t sc_count; /* instructions fetched since GO */
SC_STATE uint32_t sc_work;  /* bytes of work since GO (with a work limit) */
uint8_t sc_keep;            /* (softcore_int.h) */

void sc_work_add(uint32_t n)
{
    sc_work = n > SC_HUGE - sc_work ? SC_HUGE : sc_work + n;
}

uint8_t sc_work_over(uint32_t n)
{
    return soft_work_limit && (n > SC_HUGE - sc_work || sc_work + n > soft_work_limit);
}

uint8_t sc_stop, sc_tick;

uint8_t sc_poll(void)
{
#ifdef __CC65__
    /* RUN/STOP is key 63 of the MEGA65 matrix, column 7 bit 7 (mega65-core matrix_to_ascii.vhdl
     * line 152, key number = column x 8 + bit, lines 934-936); $D614 selects a column and $D613
     * reads it, 0 = held (iomap.txt lines 532-533, c65uart.vhdl lines 779-784). A tap shorter
     * than a poll interval still leaves its $03 at the head of the $D610 typing queue
     * (matrix_to_ascii.vhdl line 152) when nothing was typed ahead; the queue is only looked at,
     * the program takes the key (keyboard.c). */
    *(volatile uint8_t *)KBD_MATRIX_SELECT = 7;
    if (!(*(volatile uint8_t *)KBD_MATRIX_PEEK & 0x80) || *(volatile uint8_t *)KBD_ASCII == 3)
        sc_stop = 1;
#endif
    return sc_stop;
}

union sc_work sc_w;

/* Registers (§3.3): R15 reads 0, A are 28 bits, N0-N2 set together by SETN. */
SC_STATE uint32_t sc_r[16];
SC_STATE uint32_t sc_a[16];
SC_STATE uint32_t sc_n[3];
SC_STATE uint32_t sc_pc;
static uint8_t sc_state = SOFT_HALT; /* SOFT_BUSY while a job runs, else how it ended */

/* The instruction being executed: op, a, b, reserved, X, Y, Z (§3.1, little-endian words). */
SC_STATE union {
    uint8_t b[16];
    uint32_t w[4];
} sc_ins;
#define ins sc_ins
#define I_OP ins.b[0]
#define I_A ins.b[1]
#define I_B ins.b[2]
/* X, Y, Z: on the 45GS02 (little-endian) the words as fetched; the PC build puts them in place.
 * OP_TOP(w): bits 31-24 of word w. */
#define ix ins.w[1]
#define iy ins.w[2]
#define iz ins.w[3]
#ifdef __CC65__
#define OP_TOP(w) ins.b[4 * (w) + 3]
#else
#define OP_TOP(w) ((uint8_t)(ins.w[w] >> 24))
#endif
/* The last PC whose 16 bytes lie in SSNAIL memory (soft_go: soft_mem_end − 16, or 0) */
SC_STATE uint32_t sc_pc_last;

#ifndef SV_ASM /* cc65 builds with softvec65.s: sc_span there */
uint8_t sc_span(uint32_t addr, uint32_t len)
{
    if (addr < IMG_BASE || addr > soft_mem_end || len > soft_mem_end - addr)
        return SS_ERR_ADDRESS;
    return SC_OK;
}
#endif

#if !defined(__CC65__) || defined(SC_C_GEMV) /* cc65 builds with softgemv65.s: softquant65.s */
uint32_t sc_mul_sat(uint32_t a, uint32_t b)
{
#ifdef SF_HWMUL
    /* the hardware multiplier's 64-bit product fits 32 bits when its high half is 0 (cc65's
     * 32-bit division and multiplication here were 7 % of a 260 K-parameter token) */
    SF_MULTINA = a;
    SF_MULTINB = b;
    return SF_MULTOUT_HI ? SC_HUGE : SF_MULTOUT_LO;
#else
    /* a·b ≤ 2³² − 1 ⇔ b = 0 or a ≤ (2³² − 1) / b */
    if (b != 0 && a > SC_HUGE / b)
        return SC_HUGE;
    return a * b;
#endif
}
#endif

#ifndef __CC65__
static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
#endif

/* addr(op) of the instruction's word w (1 = X, 2 = Y, 3 = Z), §3.2: bit 31 clear → op & $0FFFFFFF;
 * set → A[bits 27-24] + bits 23-0, the sum not masked (A < 2²⁸, so it fits 32 bits; a sum past
 * memory faults where it is used). */
#ifdef SC_ASM_STEP
uint32_t sc_addr(uint8_t w); /* softstep65.s, this definition in 45GS02 code */
#define addr sc_addr
#else
static uint32_t addr(uint8_t w)
{
    uint8_t t = OP_TOP(w);
    if (t & (uint8_t)(ADDR_REL >> 24))
        return sc_a[t & 15] + (ins.w[w] & ADDR_OFFSET);
    return ins.w[w] & ADDR_MASK;
}
#endif

static uint32_t reg(uint8_t n)
{
    n &= 15;
    return n == 15 ? 0 : sc_r[n];
}

static void set_reg(uint8_t n, uint32_t v)
{
    sc_r[n & 15] = v;
    sc_r[15] = 0;
}

/* COPY (§3.4): (Z & $FFFF) bytes, the whole source read before anything is written — in chunks,
 * backwards when the destination overlaps the source from above, so the result is memmove's. */
static uint8_t copy(uint32_t src, uint32_t dst, uint16_t len)
{
    uint16_t n, done;
    const uint16_t buf = (uint16_t)sizeof sc_w;
    uint8_t e = sc_span(src, len);
    if (e || (e = sc_span(dst, len)) != 0)
        return e;
    if (dst > src && dst - src < len) {
        for (done = len; done > 0; done -= n) {
            n = done < buf ? done : buf;
            sm_read(src + done - n, &sc_w, n);
            sm_write(dst + done - n, &sc_w, n);
        }
    } else {
        for (done = 0; done < len; done += n) {
            n = (uint16_t)(len - done) < buf ? (uint16_t)(len - done) : buf;
            sm_read(src + done, &sc_w, n);
            sm_write(dst + done, &sc_w, n);
        }
    }
    return SC_OK;
}

/* bytes of n elements of a weight format (checked by the instruction: whole blocks) */
static uint32_t row_bytes(uint8_t fmt, uint32_t n)
{
    if (fmt == WT_F32)
        return sc_mul_sat(n, 4);
    if (fmt == WT_Q8_0)
        return sc_mul_sat(n >> 5, 34);
    if (fmt == WT_Q4_0)
        return sc_mul_sat(n >> 5, 18);
    return sc_mul_sat(n, 2);
}

/* The traffic (spec §6.4) of the instruction in `ins` after it ran without a fault, but for its
 * fetch and ATTN's (sa_attn counts its own): as emu/core/src/machine.rs counts it. */
static uint32_t traffic(void)
{
    uint32_t n0 = sc_n[0];
    switch (I_OP) {
    case OP_COPY:
        return 2 * (uint32_t)(uint16_t)iz;
    case OP_LDR:
    case OP_STR:
        return 4;
    case OP_GEMV: /* x, the old y with ACC, the rows, y */
        return sc_mul_sat(n0, 4) + sc_mul_sat(sc_n[1], (I_B & GEMV_ACC ? 4 : 0) + (I_B & GEMV_F16OUT ? 2 : 4)) +
               sc_mul_sat(sc_n[1], row_bytes(I_A, n0));
    case OP_DEQROW:
        return row_bytes(I_A, n0) + sc_mul_sat(n0, 4);
    case OP_ARGMAX:
        return sc_mul_sat(n0, 4);
    case OP_VADD:
    case OP_VMUL:
    case OP_SILUMUL:
    case OP_RMSNORM:
        return sc_mul_sat(n0, 12);
    case OP_GELU:
        return sc_mul_sat(n0, 8);
    case OP_CVT16:
        return sc_mul_sat(n0, 6);
    case OP_LAYERNORM:
        return sc_mul_sat(n0, 16);
    case OP_ROPE:
        return sc_mul_sat(n0, 8) + sc_mul_sat(sc_n[1], 4);
    case OP_MEANROWS: /* rows·N0 fits 32 bits (checked) */
        return sc_mul_sat(reg(I_A) * n0 + n0, 4);
    }
    return 0;
}
/* The next state after the instruction that ran: SOFT_BUSY (set before each step), SOFT_SYNC,
 * SOFT_HALT. */
SC_STATE uint8_t sc_next;

#ifdef SC_ASM_STEP
uint8_t sc_step(void);
uint8_t sc_loop(uint16_t budget);
#define step sc_step
/* The instruction softstep65.s fetched and left to C: the rest of step() below. */
uint8_t sc_exec(void)
{
    /* static: cc65's stack frame and 32-bit stack stores cost more than the function's own work */
    static uint8_t e;
    static uint32_t v;
    e = SC_OK;
#else
/* One instruction at sc_pc: 0 (sc_next: the next state), or a fault. */
static uint8_t step(void)
{
    uint8_t e = SC_OK;
    uint32_t v;
    if (sc_count >= soft_instr_limit) /* machine.rs step: the limits first, then the PC */
        return SS_ERR_INSTR_LIMIT;
    if (soft_work_limit && sc_work >= soft_work_limit)
        return SS_ERR_INSTR_LIMIT;
    if (sc_pc & 15)
        return SS_ERR_MISALIGNED_PC;
    if (sc_pc < IMG_BASE || sc_pc > sc_pc_last) /* sc_span(sc_pc, 16) */
        return SS_ERR_ADDRESS;
    sm_read(sc_pc, ins.b, 16);
    ++sc_count;
    if (soft_work_limit)
        sc_work_add(16);
#ifndef __CC65__
    ix = le32(ins.b + 4);
    iy = le32(ins.b + 8);
    iz = le32(ins.b + 12);
#endif
    sc_pc += 16;
#endif
    /* what may write SSNAIL memory or the near buffers ends sc_keep (GEMV sees to itself; the
     * instructions softstep65.s runs write neither) */
    if (I_OP > OP_GEMV || I_OP == OP_COPY || I_OP == OP_STR)
        sc_keep = 0;
    switch (I_OP) {
#ifndef SC_ASM_STEP
    case OP_NOP:
        break;
#endif
    case OP_HALT:
        sc_next = SOFT_HALT;
        break;
    case OP_SYNC:
        /* Every write went straight to SSNAIL memory: nothing to flush. */
        sc_next = SOFT_SYNC;
        break;
    case OP_COPY:
        e = copy(addr(1), addr(2), (uint16_t)iz);
        break;
#ifndef SC_ASM_STEP
    case OP_SETN:
        sc_n[0] = ix;
        sc_n[1] = iy;
        sc_n[2] = iz;
        break;
    case OP_LI:
        set_reg(I_A, iz);
        break;
#endif
    case OP_LDR:
        v = addr(1);
        if ((e = sc_span(v, 4)) == 0)
            set_reg(I_A, sm_read32(v));
        break;
    case OP_STR:
        v = addr(1);
        if ((e = sc_span(v, 4)) == 0)
            sm_write32(v, reg(I_A));
        break;
#ifndef SC_ASM_STEP
    case OP_ADDI:
        set_reg(I_A, reg(I_B) + iz);
        break;
    case OP_LEA:
        /* (addr(X) + R[b]·Z) & $0FFFFFFF: the 28-bit result only needs the product mod 2³² */
        sc_a[I_A & 15] = (addr(1) + reg(I_B) * iz) & ADDR_MASK;
        break;
    case OP_BEQ:
        if (reg(I_A) == reg(I_B))
            sc_pc = addr(1);
        break;
    case OP_BNE:
        if (reg(I_A) != reg(I_B))
            sc_pc = addr(1);
        break;
    case OP_BLT:
        if (reg(I_A) < reg(I_B))
            sc_pc = addr(1);
        break;
#endif
    case OP_GEMV:
        e = sg_gemv(I_A, I_B, addr(1), addr(2), addr(3), sc_n[0], sc_n[1]);
        break;
    case OP_DEQROW:
        e = sg_deqrow(I_A, addr(1), addr(3), sc_n[0]);
        break;
    case OP_ARGMAX:
        if ((e = sv_argmax(addr(1), sc_n[0], &v)) == 0)
            set_reg(I_A, v);
        break;
    case OP_VADD:
    case OP_VMUL:
    case OP_SILUMUL:
    case OP_GELU:
    case OP_CVT16:
        e = sv_map(I_OP, addr(1), addr(2), addr(3), sc_n[0]);
        break;
    case OP_RMSNORM:
        e = sv_rmsnorm(addr(1), addr(2), addr(3), sc_n[0], sc_n[2]);
        break;
    case OP_ROPE:
        e = sv_rope(addr(1), addr(2), sc_n[0], sc_n[1]);
        break;
    case OP_ATTN:
        e = sa_attn(addr(1), addr(2), addr(3), reg(I_A));
        break;
    case OP_LAYERNORM:
        e = sv_layernorm(addr(1), addr(2), addr(3), sc_n[0], sc_n[2]);
        break;
    case OP_MEANROWS:
        e = sv_meanrows(addr(1), addr(3), sc_n[0], reg(I_A));
        break;
    default:
        e = SS_ERR_ILLEGAL_OPCODE;
    }
    if (!e && soft_work_limit)
        sc_work_add(traffic());
    return e;
}

void soft_go(uint32_t job)
{
    uint8_t i;
    for (i = 0; i < 16; ++i) {
        sc_r[i] = 0;
        sc_a[i] = 0;
    }
    sc_n[0] = sc_n[1] = sc_n[2] = 0;
    sc_pc = soft_pc = job;
    sc_pc_last = soft_mem_end >= 16 ? soft_mem_end - 16 : 0;
    sc_count = sc_work = 0;
    sc_keep = 0;
    sc_stop = 0;
    soft_error = 0;
    sc_state = SOFT_BUSY;
}

uint8_t soft_run(uint16_t budget)
{
#ifndef SC_ASM_STEP
    uint8_t next;
    uint32_t pc;
#endif
    if (sc_state != SOFT_BUSY && sc_state != SOFT_SYNC)
        return sc_state;
    if (sc_state == SOFT_SYNC) /* the host may have written SSNAIL memory at the SYNC */
        sc_keep = 0;
    sc_state = SOFT_BUSY;
#ifdef SC_ASM_STEP
    return sc_state = sc_loop(budget); /* softstep65.s: this loop in 45GS02 code */
#else
    while (budget--) {
        pc = sc_pc;
        sc_next = SOFT_BUSY;
        soft_error = step();
        next = sc_next;
        soft_pc = sc_pc;
        if (sc_stop) {
            soft_error = 0;
            return sc_state = SOFT_STOPPED;
        }
        if (soft_error) {
            soft_fault_pc = pc;
            return sc_state = SOFT_FAULT;
        }
        if (next != SOFT_BUSY)
            return sc_state = next;
    }
    return SOFT_BUSY;
#endif
}
