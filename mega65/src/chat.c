/* chat.c: conversation with a loaded image (spec §6.3, §7.4, §7.5).
 * Decoders: tokenize the line, write tokens and the runtime block through the load port, set the
 * job pointer and GO, print each token as the script publishes it (generated), folded to ASCII.
 * Encoders: embed each line and show the three most similar earlier lines (cosine). */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include "chat.h"
#include "chipram.h"
#include "cosine.h"
#include "device.h"
#include "dma.h"
#include "far.h"
#include "fn_tables.h"   /* OP_*, WT_*, KV_*: ISA numbers generated from the Rust contract */
#include "fold.h"
#include "imgmem.h"
#include "keyboard.h"
#include "loader.h"
#include "sampler.h"
#include "screen.h"
#include "ssnail_regs.h"
#include "timer.h"
#include "tokenizer.h"

/* This file's variables in LOWBSS ($1000-$1EFF, linker/mega65.cfg; cleared at start): the main
 * area is full. The buffers below go to HIBSS, as marked. */
#pragma bss-name(push, "LOWBSS")

#define MAX_PROMPT 256
#define MAX_LINE 150
#define MAX_DIM 960
#define MAX_STORED 16

/* The prompt's token ids, and (encoders, once the job has its tokens) an earlier embedding to
 * compare with: never needed at the same time, so they share memory. */
#pragma bss-name(push, "HIBSS")
static union {
    uint32_t toks[MAX_PROMPT];
    int16_t other[MAX_DIM];
} work;
#pragma bss-name(pop)
#define toks work.toks
#define other work.other
#pragma bss-name(push, "HIBSS")
static char line[MAX_LINE + 1];
#pragma bss-name(pop)
/* two stored lines' texts while ranking */
#pragma bss-name(push, "HIBSS")
static char text_a[MAX_LINE + 1], text_b[MAX_LINE + 1];
#pragma bss-name(pop)
static uint32_t h_code, h_tokens, h_vocab, h_maxctx, h_output, h_outdim, h_eos, h_nvocab;
static uint8_t first, encoder;
static uint16_t n_generate = 120;
static uint32_t pos;
/* the last answer: its prompt (positions processed until the first token, and the time from GO
 * to it) and the tokens after the first with their time, as llama.cpp's prompt eval and eval
 * lines count them; for encoders the tokens and time of the last embedding */
static uint32_t last_prompt, last_prompt_ms, last_tokens, last_gen_ms;
/* the bytes a vocab entry may span: the vocab table ends where the sorted index starts (spec
 * §2.1), so no offset pair can make one token print more than the table holds */
static uint32_t vocab_len;

static const char *plural(uint32_t n) { return n == 1 ? "" : "s"; }
static const char msg_stopped[] = "[stopped]\n";

static struct {
    uint32_t pos, prompt_len, n_generate, generated, stop_request;
} rb;

static void say(uint8_t colour, const char *s) {
    uint8_t c = scr_col;
    scr_col = colour;
    scr_puts(s);
    scr_col = c;
}

/* tok_encode's n < 0: the line did not fit, or RUN/STOP stopped the tokenizer */
static void encode_failed(int16_t n) {
    if (n == TOK_STOPPED) scr_puts(msg_stopped);
    else say(COL_RED, "[line too long]\n");
}

static void progress_clear(void);
static uint8_t user_stop(void);
static uint8_t stopped;

static void print_token(uint32_t id) {
    uint32_t o0, o1;
    uint8_t n = 0;
    progress_clear();
    if (id >= h_nvocab) return;   /* an output row without a vocab entry: nothing (as the PC) */
    o0 = far_peek32(h_vocab + (id << 2));
    o1 = far_peek32(h_vocab + (id << 2) + 4);
    if (o1 > vocab_len) o1 = vocab_len;
    /* RUN/STOP every 256 bytes; once stopped, a long entry is cut there */
    for (; o0 < o1; ++o0) {
        fold_byte(far_peek(h_vocab + o0), wrap_putc);
        if (!++n && (stopped || user_stop())) break;
    }
}

static void go(void) { dev_go(h_code); }

/* ---- chat template (spec §2.6) ------------------------------------------------------------
 * An image whose header $7C points at a chat block gets each typed line as a turn of the model's
 * chat template: FIRST (or the rest of the last reply's END, then PREFIX) before the line's
 * tokens, SUFFIX after them. The ids stay in the image; only the block's address and its four
 * counts are kept here. A block outside the image's memory, without its magic, with a count
 * above CB_MAX_SEQ or no END is ignored (the lines are plain continuations) and said once. */
static uint32_t h_chat, cb_stop;         /* the block (0 = none) and END's first id */
static uint8_t cb_len[4];                /* FIRST, PREFIX, SUFFIX, END */
static uint8_t reply_end, reply_ended;   /* END's first id shown in this reply / the last one */

static void chat_init(void) {
    static uint8_t i, c, bad;
    static uint16_t end;
    h_chat = far_peek32(HDR(H_CHAT));
    if (!h_chat) return;
    end = CB_IDS;
    bad = 0;
    for (i = 0; i < 4; ++i) {
        c = cb_len[i] = far_peek(h_chat + CB_N_FIRST + i);
        if (c > CB_MAX_SEQ) bad = 1;
        end += c << 2;
    }
    if (bad || !c || !img_inside(h_chat, end, 0) || far_peek32(h_chat) != CB_MAGIC_WORD) {
        h_chat = 0;
        say(COL_RED, "[the image's chat block is damaged: lines are plain continuations]\n");
        return;
    }
    cb_stop = far_peek32(h_chat + end - ((uint16_t)c << 2));
    scr_puts("[chat template ");
    for (i = 0; i < CB_NAME_LEN - 1 && (c = far_peek(h_chat + CB_NAME + i)); ++i)
        scr_putc(c < 32 || c > 126 ? '?' : c);
    scr_puts(": each line is a turn]\n");
}

/* Sequence k's ids (0 FIRST, 1 PREFIX, 2 SUFFIX, 3 END), without its first `skip`, into
 * toks[at..]; returns the next free index. */
static uint16_t cb_copy(uint8_t k, uint8_t skip, uint16_t at) {
    static uint8_t j, n;
    static uint16_t off;
    off = CB_IDS + (skip << 2);
    for (j = 0; j < k; ++j) off += cb_len[j] << 2;
    n = cb_len[k] - skip;
    dma_copy((uint32_t)(uint16_t)(toks + at), h_chat + off, n << 2);
    return at + n;
}

/* a generated token: shown, and the template's END ends the reply */
static void print_reply(uint32_t id) {
    print_token(id);
    if (h_chat && id == cb_stop) reply_end = 1;
}

/* ---- waiting for a job ------------------------------------------------------------------
 * A job that stays BUSY must not hang the program. job_watch() runs in every polling loop:
 * RUN/STOP writes the runtime block's stop request (the port takes bytes while a job runs, no
 * READY wait); after WARN_MS without progress the user is told once how to stop; if the job
 * is still BUSY STOP_GRACE_MS after a stop request, or shows no progress for HANG_MS, the
 * program gives up on it and goes back to the model list. */
#define WARN_MS 30000UL
#define STOP_GRACE_MS 5000UL
#define HANG_MS 600000UL

static uint8_t warned;
static uint32_t progress_ms, stop_ms, job_start, job_pos, hw_pc, h_end;

/* ---- progress while a prompt is processed or a sentence embedded: one line drawn on the
 * screen row where the answer will start (not in the transcript: scr_quiet), redrawn each second
 * from the first on and erased before the first token or the result: the position in the prompt
 * (decoders) or how far through the script the job got (software core, encoders), and seconds. */
static uint8_t prog_on, prog_w;
static uint16_t prog_s;

static void progress_clear(void) {
    prog_on = 0;
    if (!prog_w) return;
    scr_x = 0;
    while (scr_x < prog_w) scr_draw(' ');
    scr_x = prog_w = 0;
}

static void progress(uint32_t now) {
    uint16_t s;
    uint8_t c = scr_col;
    if (!prog_on) return;   /* before the division: this runs at every poll of every job */
    s = (uint16_t)(now / 1000);
    if (s == prog_s) return;
    prog_s = s;
    scr_quiet = 1;
    scr_col = COL_GREY;
    if (encoder)
        scr_printf("[embedding %u tokens: %u%%, %u s]", (uint16_t)rb.prompt_len,
                   (uint16_t)((hw_pc - h_code) * 100 / (h_end - h_code)), s);
    else
        scr_printf("[prompt: %u of %u tokens, %u s]", (uint16_t)(job_pos - job_start) + 1,
                   (uint16_t)(rb.prompt_len - job_start), s);
    while (scr_x < prog_w) scr_draw(' ');
    prog_w = scr_x;
    scr_x = 0;
    scr_quiet = 0;
    scr_col = c;
}

static void watch_start(void) {
    stopped = warned = 0;
    progress_ms = 0;
    job_start = job_pos = rb.pos;
    hw_pc = h_code;
    prog_on = !scr_x && (!encoder || (core == CORE_SOFT && h_end));
    prog_s = 0;
    timer_start();
}

/* RUN/STOP pressed (kbd_stop_pressed): the job is told to stop (dev_stop) */
static uint8_t user_stop(void) {
    if (!kbd_stop_pressed()) return 0;
    if (!stopped) {
        dev_stop();
        stopped = 1;
        stop_ms = timer_ms();
    }
    return 1;
}

/* 1 = give up (the job hangs); progressed = something new arrived since the last call. The
 * software core is the 45GS02 running the job in these very polls: progress there is also a new
 * position, a SYNC or the script getting further than before in this position (its PC above the
 * highest so far), which a script looping without SYNC never shows; RUN/STOP ends its job at
 * once (dev_stop, or the core itself inside a long instruction), so it is never given up. */
static uint8_t job_watch(uint8_t progressed) {
    uint32_t now, p;
    /* RUN/STOP first: stop_ms is read after dev_stop's port writes, so `now` must come after
     * it (taken before, a millisecond passing in between made now - stop_ms wrap to 2^32 - 1
     * and the stop look like a core that does not stop) */
    if (!stopped) user_stop();
    now = timer_ms();
    p = far_peek32(HDR(RB_POS));
    if (p != job_pos) {
        job_pos = p;
        hw_pc = 0;
    }
    if (core == CORE_SOFT) {
        p = dev_job_pc();
        if (p > hw_pc || dev_synced) progressed = 1;
        if (p > hw_pc) hw_pc = p;
    }
    if (progressed) progress_ms = now;
    dev_synced = 0;
    progress(now);
    if (!warned && now - progress_ms >= WARN_MS) {
        progress_clear();
        wrap_flush();
        say(COL_YELLOW, "\n[SSNAIL busy 30 s without a result: RUN/STOP stops it]\n");
        warned = 1;
    }
    if (core != CORE_SOFT && ((stopped && now - stop_ms >= STOP_GRACE_MS) || now - progress_ms >= HANG_MS)) {
        wrap_flush();
        say(COL_RED, stopped ? "\n[SSNAIL did not stop: the core hangs. Back to the model list;"
                               " reset the MEGA65 if loading fails]\n"
                             : "\n[SSNAIL busy 10 min without a result: the core hangs. Back to"
                               " the model list]\n");
        return 1;
    }
    return 0;
}

static uint8_t write_job(uint32_t start, uint16_t n) {
    if (n && !dev_write(h_tokens + (start << 2), toks, n << 2)) return 0;
    return dev_write(HDR(RB_POS), &rb, sizeof rb);
}

/* a refused write (dev_write): one line, then back to the model list */
static uint8_t port_error(void) {
    say(COL_RED, "[the prompt could not be written into the image's memory: back to the list]\n");
    return 1;
}

/* token slot i, or TOK_NONE past the image's token buffer: the counts that say which slots to
 * read (pos, generated) come from SSNAIL memory, which a script may write */
static uint32_t slot(uint32_t i) { return i > h_maxctx ? TOK_NONE : far_peek32(h_tokens + (i << 2)); }
/* the runtime block's count of generated tokens, at most a context's worth */
static uint32_t generated(void) {
    uint32_t g = far_peek32(HDR(RB_GENERATED));
    return g > h_maxctx ? h_maxctx : g;
}

/* a faulted job: its error code (spec §3.4) and where */
static void job_error(void) {
    scr_col = COL_RED;
    scr_printf("[SSNAIL error $%02x at $%07lx]\n", dev_error(), dev_fault_pc());
    scr_col = COL_LGREEN;
}

/* ---- sampling (spec §7.6): one job per token; after each, the sampled token replaces the
 * ARGMAX's in slot pos and the next job continues from it. s_gen = tokens shown, s_reason as the
 * script would give it in one job. 0 = done; 1 = the job hangs, back to the model list */
static uint32_t s_gen, s_reason, s_tok, t_first;

static uint8_t sampled(void) {
    for (s_gen = 0;;) {
        do
            if (job_watch(0)) return 1;
        while (dev_busy());
        if (dev_ended) { s_reason = STOP_REQUESTED; return 0; }
        s_reason = far_peek32(HDR(RB_STOP_REASON));
        if (dev_error() || s_reason == STOP_CONTEXT_FULL) return 0;
        pos = far_peek32(HDR(RB_POS));
        if (pos - 1 >= h_maxctx) return 0;   /* no logits' position in the token buffer */
        s_tok = smp_choose(pos - 1);
        if (s_tok == SMP_KEEP) s_tok = slot(pos);
        else if (!dev_write(h_tokens + (pos << 2), &s_tok, 4)) return port_error();
        if (!s_gen) t_first = timer_ms();
        print_reply(s_tok);
        job_watch(1);
        s_reason = s_tok == h_eos || reply_end ? STOP_EOS : ++s_gen == n_generate ? STOP_COUNT
                 : stopped ? STOP_REQUESTED : 0;
        if (s_reason) return 0;
        rb.pos = pos;
        rb.prompt_len = pos + 1;
        if (!write_job(0, 0)) return port_error();
        go();
    }
}

/* The operands an image chooses and a core may refuse (spec §3.4, fault 5): the weight format of
 * each GEMV and DEQROW and the KV cache format of each ATTN, found in the script slots [H_CODE,
 * H_DATA) before any job, so such an image says what it holds instead of faulting mid-answer.
 * Both cores run the same five formats (§4.1) and two KV formats. bad_at = the instruction. */
static uint32_t bad_at;
static uint8_t bad_what;   /* its format number */

static void script_check(void) {
    uint32_t a, end = far_peek32(HDR(H_DATA)), x;
    uint8_t op, f;
    bad_at = h_end = 0;
    if (end < h_code || end - h_code > 0x100000UL) return;   /* not a converter's script */
    for (a = h_code; a < end; a += 16) {
        op = far_peek(a);
        f = far_peek(a + 1);
        if (op == OP_HALT) h_end = a;   /* the script's end, for the progress line */
        if (op == OP_GEMV || op == OP_DEQROW) {
            if (f == WT_F32 || f == WT_F16 || f == WT_BF16 || f == WT_Q8_0 || f == WT_Q4_0) continue;
        } else if (op == OP_ATTN) {
            /* the parameter block, if the CPU sees it: an absolute address (not register-
             * relative) in the attic RAM of this board (not in a 72 MB image's HyperRAM part) */
            x = far_peek32(a + 4) - IMG_BASE;
            if (x >= soft_mem - 32) continue;
            f = far_peek(IMG_BASE + x + 20);                  /* word 5: KV format */
            x += IMG_BASE;
            if (far_peek(x + 21) || far_peek16(x + 22)) f = 0xFF;   /* a word, not a byte */
            else if (f <= KV_F16) continue;
        } else
            continue;
        bad_at = a;
        bad_what = f;
        return;
    }
}

/* 1 = the script can run; otherwise says why */
static uint8_t runnable(void) {
    if (!bad_at) return 1;
    scr_col = COL_RED;
    scr_printf("[the %s at $%07lx uses %s %u, which SSNAIL cannot run: convert the model again]\n",
               far_peek(bad_at) == OP_ATTN ? "ATTN" : "GEMV", bad_at,
               far_peek(bad_at) == OP_ATTN ? "KV cache format" : "weight format", bad_what);
    scr_col = COL_LGREEN;
    return 0;
}

/* ms as seconds with three decimals, then n/ms as tokens per second with two: ", R tokens/s]"
 * (the line after an answer ends so) or " (R tokens/s)]" */
static void per_s(uint32_t n, uint32_t ms, uint8_t paren) {
    uint32_t r = n * 100000UL / (ms ? ms : 1);
    scr_printf(paren ? "%lu.%03lu s (%lu.%02lu tokens/s)]\n" : "%lu.%03lu s, %lu.%02lu tokens/s]\n",
               ms / 1000, ms % 1000, r / 100, r % 100);
}

/* the last answer's figures, after it or (stats) for /stats */
static void speed(uint8_t stats) {
    const char *l = stats ? "last " : "";
    scr_printf("[%sprompt: %lu token%s in ", l, last_prompt, plural(last_prompt));
    per_s(last_prompt, last_prompt_ms, 1);
    scr_printf("[%sanswer: %lu token%s, %lu after the first in ", l, last_tokens, plural(last_tokens),
               last_tokens ? last_tokens - 1 : 0);
    per_s(last_tokens ? last_tokens - 1 : 0, last_gen_ms, stats);
}

/* 0 = done; 1 = the job hangs, back to the model list */
static uint8_t generate(void) {
    /* with a chat template: room before the line's tokens for the turn's opener, after them for
     * SUFFIX (only a non-empty line is a turn; the template's FIRST has the begin token) */
    static uint8_t turn, nb, ns;
    int16_t n;
    uint32_t start, shown = 0, gen, reason, t;
    turn = h_chat && line[0];
    nb = ns = 0;
    if (turn) {
        nb = first ? cb_len[0] : cb_len[3] - reply_ended + cb_len[1];
        ns = cb_len[2];
    }
    n = tok_encode(line, first && !h_chat, toks + nb, MAX_PROMPT - nb - ns);
    if (n < 0) { encode_failed(n); return 0; }
    if (first && n == 0) return 0;
    if (turn) {
        if (first) cb_copy(0, 0, 0);
        else cb_copy(1, 0, cb_copy(3, reply_ended, 0));
        cb_copy(2, 0, nb + n);
        n += nb + ns;
    }
    if (!runnable()) return 0;
    reply_end = 0;
    start = first ? 0 : pos + 1;
    if (first) pos = 0;
    rb.pos = pos;
    rb.prompt_len = start + n;
    rb.n_generate = smp_temp ? 1 : n_generate;
    rb.generated = 0;
    rb.stop_request = 0;
    if (rb.prompt_len >= h_maxctx) {
        scr_printf("[context full at %lu tokens: /reset to start again]\n", h_maxctx);
        return 0;
    }
    if (!write_job(start, n)) return port_error();
    first = 0;
    fold_reset();
    watch_start();
    t_first = 0;
    go();
    if (smp_temp) {
        if (sampled()) return 1;
        gen = s_gen;
        reason = s_reason;
        t = timer_ms();
        pos = far_peek32(HDR(RB_POS));
        goto done;
    }
    do {
        gen = generated();
        t = shown;
        if (gen && !shown) t_first = timer_ms();
        for (; shown < gen && !dev_ended && !reply_end; ++shown)
            print_reply(slot(rb.prompt_len + shown));
        /* END's first id, when the script does not stop on it by itself (not H_EOS) */
        if (reply_end && cb_stop != h_eos && !dev_ended) dev_stop();
        if (job_watch(shown != t)) return 1;
    } while (dev_busy());
    t = timer_ms();
    gen = generated();
    if (gen && !shown) t_first = t;
    pos = far_peek32(HDR(RB_POS));
    if (dev_ended) {
        /* ended mid-job by RUN/STOP (software core): the tokens shown are the answer; the last
         * one's slot is the next position, as after a stop between tokens (spec §3.7) — before
         * any, the script's pos (its prompt positions below pos are complete) */
        gen = shown;
        reason = STOP_REQUESTED;
        if (gen) pos = rb.prompt_len + gen - 1;
    } else {
        for (; shown < gen && !reply_end; ++shown) print_reply(slot(rb.prompt_len + shown));
        reason = stopped ? STOP_REQUESTED   /* also when it came while the tokens printed */
                         : far_peek32(HDR(RB_STOP_REASON));
    }
    if (reply_end) {   /* the reply ends at END's first id, which is the next job's input */
        gen = shown;
        reason = STOP_EOS;
        pos = rb.prompt_len + gen - 1;
    }
done:
    reply_ended = reply_end;
    progress_clear();
    wrap_flush();
    scr_putc('\n');
    if (dev_error()) {
        job_error();
        return 0;
    }
    if (reason == STOP_EOS) scr_puts("[end of text]\n");
    else if (reason == STOP_CONTEXT_FULL) scr_printf("[context full at %lu tokens: /reset to start again]\n", h_maxctx);
    else if (reason == STOP_REQUESTED) scr_puts(msg_stopped);
    /* as llama.cpp: the prompt's positions up to the first token, then the tokens after it */
    last_prompt = rb.prompt_len - job_start;
    last_prompt_ms = gen ? t_first : t;
    last_tokens = gen;
    last_gen_ms = t - last_prompt_ms;
    scr_col = COL_GREY;
    speed(0);
    scr_col = COL_LGREEN;
    return 0;
}

/* ---- encoders ---------------------------------------------------------------------------
 * Each embedding becomes a unit vector of 16-bit fixed-point components (cosine.c: integers
 * only, within about 0.003 of the exact cosine for any input); up to MAX_STORED earlier lines are
 * kept in chip RAM and the three most similar are shown. */
#pragma bss-name(push, "HIBSS")
static int16_t vec[MAX_DIM];
#pragma bss-name(pop)
static uint8_t n_stored, next_slot, told_full;
/* chip RAM (chipram.h): STORE_ADDR MAX_STORED x 2 KB embeddings, TEXT_ADDR x 256 bytes of text */

static const char *stored_text(uint8_t k, char *buf) {
    dma_copy((uint32_t)(uint16_t)buf, TEXT_ADDR + ((uint32_t)k << 8), MAX_LINE + 1);
    return buf;
}

static uint32_t output_word(uint16_t i) { return far_peek32(h_output + ((uint32_t)i << 2)); }

static void embed_time(void) {
    scr_col = COL_GREY;
    scr_printf("  [%lu token%s embedded in %lu.%03lu s]\n", last_tokens, plural(last_tokens),
               last_gen_ms / 1000, last_gen_ms % 1000);
    scr_col = COL_LGREEN;
}

/* 0 = done; 1 = the job hangs, back to the model list */
static uint8_t embed(void) {
    int16_t n, score[MAX_STORED], s;
    uint8_t used[MAX_STORED], k, i, best, shown;
    uint16_t dim = (uint16_t)(h_outdim < MAX_DIM ? h_outdim : MAX_DIM);
    n = tok_encode(line, 1, toks, MAX_PROMPT);
    if (!runnable()) return 0;
    if (n == TOK_STOPPED) { scr_puts(msg_stopped); return 0; }
    if (n < 0 || (uint32_t)n > h_maxctx) {
        scr_printf("[too long: %d tokens, maximum %lu]\n", n < 0 ? MAX_PROMPT : n, h_maxctx);
        return 0;
    }
    rb.pos = 0;
    rb.prompt_len = n;
    rb.n_generate = 0;
    rb.generated = 0;
    rb.stop_request = 0;
    if (!write_job(0, n)) return port_error();
    watch_start();
    go();
    while (dev_busy())
        if (job_watch(0)) return 1;
    progress_clear();
    last_gen_ms = timer_ms();
    last_tokens = n;
    if (dev_error()) { job_error(); return 0; }
    if (stopped || dev_ended) { scr_puts(msg_stopped); return 0; }   /* (the core saw RUN/STOP) */
    if (far_peek32(HDR(RB_STOP_REASON)) != 1) {
        scr_printf("[too long: %d tokens, maximum %lu]\n", n, h_maxctx);
        return 0;
    }
    emb_unit(dim, output_word, vec);
    if (!n_stored) scr_printf("  [%u-dimensional embedding stored]\n", dim);
    for (i = 0; i < n_stored; ++i) {
        dma_copy((uint32_t)(uint16_t)other, STORE_ADDR + ((uint32_t)i << 11), dim * 2);
        score[i] = emb_cosine1000(vec, other, dim);
        used[i] = 0;
    }
    for (shown = 0; shown < 3 && shown < n_stored; ++shown) {
        best = 0xFF;
        for (i = 0; i < n_stored; ++i) {
            if (used[i]) continue;
            if (best == 0xFF || score[i] > score[best]) best = i;
            else if (score[i] == score[best] &&
                     strcmp(stored_text(i, text_a), stored_text(best, text_b)) > 0)
                best = i;
        }
        used[best] = 1;
        s = score[best];
        scr_printf("  %c%d.%03d  %s\n", s < 0 ? '-' : '+', abs(s) / 1000, abs(s) % 1000,
                   stored_text(best, text_a));
    }
    embed_time();
    if (n_stored == MAX_STORED && !told_full) {
        scr_printf("  [the last %u lines are kept: each new one replaces the oldest]\n", MAX_STORED);
        told_full = 1;
    }
    k = next_slot;
    next_slot = (next_slot + 1) % MAX_STORED;
    if (n_stored < MAX_STORED) ++n_stored;
    dma_copy(TEXT_ADDR + ((uint32_t)k << 8), (uint32_t)(uint16_t)line, MAX_LINE + 1);
    dma_copy(STORE_ADDR + ((uint32_t)k << 11), (uint32_t)(uint16_t)vec, dim * 2);
    return 0;
}

/* /tokens TEXT: the ids the tokenizer gives (as for a first turn) */
static void show_tokens(const char *text) {
    int16_t n = tok_encode(text, 1, toks, MAX_PROMPT), i;
    if (n < 0) { encode_failed(n); return; }
    scr_putc('[');
    for (i = 0; i < n; ++i) {
        if (i) scr_putc(',');
        scr_printf("%lu", toks[i]);
    }
    scr_puts("]\n");
}

/* each line at most 80 characters: a full row, never broken */
static void help(void) {
    scr_puts(encoder ? "/reset  forget the lines   /stats  lines kept and time\n"
                     : "/n N  tokens per answer   /reset  new conversation   /stats  speed and position\n");
    scr_puts("/tokens TEXT  token ids   /models  back to the list   /help  this list\n"
             "/quit  back to BASIC      RUN/STOP stops the model   /core soft|fpga  which core\n");
    if (!encoder)
        scr_puts("/temp X (0 = greedy)  /topk K  /penalty X  /seed N   sampling, shown by /stats\n");
}

static void show_core(void) {
    if (core == CORE_SOFT) scr_puts("[core: software (45GS02)]\n");
    else scr_printf("[core: FPGA v%u]\n", fpga_version);
}

/* /core soft, /core fpga: the same SSNAIL memory, so the conversation goes on where it was */
static void choose_core(const char *which) {
    uint8_t c = !strcmp(which, "soft") ? CORE_SOFT : !strcmp(which, "fpga") ? CORE_FPGA : 0;
    uint32_t need = far_peek32(HDR(H_MEM_NEEDED)), old = core;
    if (!c) {
        scr_puts("[/core soft or /core fpga]\n");
        return;
    }
    if (!dev_select(c)) {
        if (c == CORE_FPGA) scr_puts("[no SSNAIL FPGA core in this MEGA65]\n");
        else if (soft_status == SOFT_BAD_FILE)
            scr_printf("[%s on the disk is damaged or of another build: not run]\n", soft_file);
        else scr_puts("[no software core: ssnail.core is not on the disk]\n");
        return;
    }
    if (need > avail_mem) {
        dev_select(old);
        scr_printf("[this model needs %u MB, that core has %lu MB]\n", mb_up(need),
                   (c == CORE_SOFT ? soft_mem : fpga_mem) >> 20);
        return;
    }
    show_core();
}

uint8_t chat(const char *name) {
    uint8_t arch = far_peek(HDR(H_ARCH)), i, c;
    uint32_t answer;
    static const char *const arch_names[3] = {"llama", "gpt2", "bert"};
    h_code = far_peek32(HDR(H_CODE));
    h_tokens = far_peek32(HDR(H_TOKENS));
    h_vocab = far_peek32(HDR(H_VOCAB));
    h_maxctx = far_peek32(HDR(H_MAXCTX));
    h_output = far_peek32(HDR(H_OUTPUT));
    h_outdim = far_peek32(HDR(H_OUTDIM));
    h_eos = far_peek32(HDR(H_EOS));
    h_nvocab = far_peek32(HDR(H_NVOCAB));
    encoder = far_peek(HDR(H_FLAGS)) & IMG_FLAG_ENCODER;
    last_prompt = last_prompt_ms = last_tokens = last_gen_ms = 0;
    /* the image's answer defaults (header $58, spec §1.4), where it has them; /temp, /penalty
     * and /n still choose, and an image without them keeps the session's settings */
    answer = far_peek32(HDR(H_ANSWER));
    if (answer & IMG_ANSWER_GREEDY) smp_greedy();
    if ((uint16_t)answer) n_generate = (uint16_t)answer;
    smp_init(h_output, h_outdim, h_tokens);
    first = 1;
    pos = 0;
    n_stored = next_slot = told_full = 0;
    scr_clear();
    scr_col = COL_WHITE;
    scr_puts("[");
    for (i = 0; i < 127 && (c = far_peek(HDR(H_DESC) + i)); ++i) {
        if (c < 32 || c > 126) c = '?';
        scr_putc(c);
    }
    scr_printf("] %s\n", name);
    scr_printf("[%s %s, context %lu, vocab %lu]\n", arch_names[arch < 3 ? arch : 0],
               encoder ? "encoder" : "decoder", h_maxctx, far_peek32(HDR(H_NVOCAB)));
    if (answer && !encoder)
        scr_printf("[this image's defaults:%s %u token%s per answer]\n",
                   answer & IMG_ANSWER_GREEDY ? " greedy," : "", n_generate, plural(n_generate));
    scr_col = COL_LGREEN;
    vocab_len = tok_index > h_vocab ? tok_index - h_vocab : 0;
    tok_poll = kbd_stop_pressed;
    script_check();
    runnable();
    h_chat = reply_ended = 0;
    if (!encoder) chat_init();
    help();
    for (;;) {
        scr_col = COL_WHITE;
        scr_puts("> ");
        scr_col = COL_LBLUE;
        kbd_readline(line, MAX_LINE);
        scr_col = COL_LGREEN;
        if (line[0] == '/') {
            if (!strcmp(line, "/models")) return CHAT_MODELS;
            if (!strcmp(line, "/quit")) return CHAT_QUIT;
            if (!strcmp(line, "/reset")) {
                first = 1;
                pos = 0;
                reply_ended = 0;
                n_stored = next_slot = told_full = 0;
                scr_puts("[context cleared]\n");
            } else if (!encoder && !strncmp(line, "/n ", 3)) {
                /* a context holds at most IMG_MAX_CTX tokens: more is no answer's length */
                if (smp_parse(line + 3, 0) && smp_num && smp_num <= IMG_MAX_CTX) {
                    n_generate = (uint16_t)smp_num;
                    scr_printf("[%u token%s per answer]\n", n_generate, plural(n_generate));
                } else
                    scr_printf("[tokens per answer: /n 1-%u]\n", IMG_MAX_CTX);
            } else if (!strncmp(line, "/tokens ", 8)) {
                show_tokens(line + 8);
            } else if (!strncmp(line, "/core ", 6)) {
                choose_core(line + 6);
            } else if (!strcmp(line, "/stats")) {
                if (encoder) {
                    scr_printf("[lines kept: %u of %u, context %lu tokens]\n", n_stored, MAX_STORED, h_maxctx);
                    embed_time();
                } else {
                    scr_printf("[pos %lu of %lu, %u token%s per answer]\n", pos, h_maxctx, n_generate,
                               plural(n_generate));
                    speed(1);
                }
                show_core();
                if (!encoder) smp_show();
            } else if (encoder || !smp_command(line)) help();
            continue;
        }
        if (encoder) {
            if (line[0] && embed()) return CHAT_MODELS;
        } else if (generate()) return CHAT_MODELS;
    }
}
#pragma bss-name(pop)
