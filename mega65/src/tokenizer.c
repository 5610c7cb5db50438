/* tokenizer.c: the image tokenizer (spec §2.1-§2.2) for SPM, GPT-2 BPE and WordPiece.
 * Every table is read in place in image memory (far.h): binary search over the sorted index,
 * compares of piece bytes against the vocab table, one priority per token. Nothing is copied.
 * Same steps, by the same names, as the PC image tokenizer (pc-tools/tokenizer/src/image.rs),
 * including its four fixes over upstream (docs/tokenizer.md): empty SPM input gives no pieces;
 * GPT-2 whitespace runs split like the regex \s+(?!\S); WordPiece: `_` is punctuation, control
 * bytes are dropped, words over 100 bytes are [UNK]; digits-first BPE vocabularies (no
 * " <digit>" token, e.g. SmolLM2) never join a space to a digit. The sorted-index search is
 * tokfind.s on the MEGA65. */
#include <string.h>
#include "far.h"
#include "imgmem.h"
#include "ssnail_regs.h"
#include "tokenizer.h"

#define MAXCHUNK 255

uint8_t tok_kind, tok_flags;
static uint8_t space_joins_digits;   /* BPE: 0 for digits-first pre-tokenizers (fix 4) */
/* set by tok_tables (imgmem.s on the MEGA65), read by tokfind.s */
uint32_t tok_vocab, tok_index, tok_n_index, tok_nvocab, tok_vlast;
uint32_t prio_addr, byte_table, tok_begin, tok_end, tok_unk;

/* current chunk and its pieces (each piece is a substring of chunk), kept as a list in chunk
 * order: removing the right piece of a merge is then two links, not a shift of every array. The
 * candidate of the pair (i, next[i]) is pair_id[i] with its priority split into 16-bit halves
 * (cc65's 32-bit compares are slow); "none" is $FFFF:$FFFF, above every real priority. */
#define END 0xFF
static uint8_t chunk[MAXCHUNK + 1];
static uint8_t chunk_len;
static uint8_t p_next[MAXCHUNK], p_prev[MAXCHUNK];
/* in LOWBSS ($1000-$1EFF, linker/mega65.cfg): 3.5 KB the program's main area does not have */
#ifdef __CC65__ /* the PC test build (host/tokhost.c) has no segments */
#pragma bss-name(push, "LOWBSS")
#endif
static uint8_t p_start[MAXCHUNK], p_len[MAXCHUNK];
static uint32_t p_id[MAXCHUNK], pair_id[MAXCHUNK];
static uint16_t prio_hi[MAXCHUNK], prio_lo[MAXCHUNK];
#ifdef __CC65__
#pragma bss-name(pop)
#endif

static uint32_t *out_ids;
static uint16_t out_n, out_max;
static uint8_t overflow, halted;
uint8_t (*tok_poll)(void);

static uint8_t halt(void) {
    if (!halted && tok_poll && tok_poll()) halted = 1;
    return halted;
}

#ifndef __CC65__
/* The MEGA65 build has this in ca65 (imgmem.s), same steps: the tables' addresses into tok_*, and
 * each table's extent inside the image's memory, as the PC image tokenizer checks them; the
 * lookups then bound each probe by them (tok_find), so no read leaves the tables. */
uint8_t tok_tables(void) {
    uint32_t blk = far_peek32(HDR(H_TOKENIZER)), n;
    tok_n_index = 0;   /* until every table is checked: every search finds nothing (and ends) */
    tok_vocab = far_peek32(HDR(H_VOCAB));
    tok_nvocab = far_peek32(HDR(H_NVOCAB));
    if (!img_inside(blk, TB_LEN, 0)) return 0;
    tok_kind = far_peek(blk + TB_KIND);
    tok_flags = far_peek(blk + TB_FLAGS);
    tok_index = far_peek32(blk + TB_INDEX);
    n = far_peek32(blk + TB_INDEX_LEN);
    prio_addr = far_peek32(blk + TB_PRIORITY);
    byte_table = far_peek32(blk + TB_BYTE_TABLE);
    tok_begin = far_peek32(blk + TB_BEGIN);
    tok_end = far_peek32(blk + TB_END);
    tok_unk = far_peek32(blk + TB_UNK);
    if (tok_kind > TOK_WORDPIECE || far_peek32(blk + TB_N_VOCAB) != tok_nvocab ||
        tok_nvocab >= 0x1000000UL || !img_inside(tok_vocab, tok_nvocab + 1, 2))
        return 0;
    tok_vlast = far_peek32(tok_vocab + (tok_nvocab << 2));
    if (!img_inside(tok_vocab, tok_vlast, 0) || !img_inside(tok_index, n, 2) ||
        !img_inside(prio_addr, tok_nvocab, tok_flags & TF_PRIO32 ? 2 : 1) ||
        !img_inside(byte_table, 256, 2))
        return 0;
    tok_n_index = n;
    return 1;
}
#endif

uint8_t tok_init(void) {
    static uint8_t key2[2] = {' ', '0'};
    uint8_t c;
    space_joins_digits = 1;
    if (!tok_tables()) return 0;
    /* fix 4, read from the tables once: a vocabulary with no " <digit>" token was trained with
     * digits split off first (SmolLM2's "smollm"), so a space never joins a digit */
    if (tok_kind != TOK_BPE) return 1;
    space_joins_digits = 0;
    for (c = '0'; c <= '9'; ++c) {
        key2[1] = c;
        if (tok_find(key2, 2) != TOK_NONE) { space_joins_digits = 1; break; }
    }
    return 1;
}

#ifndef __CC65__
/* The MEGA65 build has this in ca65 (tokfind.s), same steps. */
uint32_t tok_find(const uint8_t *s, uint8_t len) {
    int32_t lo = 0, hi = (int32_t)tok_n_index - 1, mid;
    uint32_t id, o0, o1, tlen;
    int8_t c;
    while (lo <= hi) {
        mid = (lo + hi) >> 1;
        id = far_peek32(tok_index + ((uint32_t)mid << 2));
        c = -1;   /* an id past the vocabulary or offsets outside the table: an empty token */
        if (id < tok_nvocab) {
            o0 = far_peek32(tok_vocab + (id << 2));
            o1 = far_peek32(tok_vocab + (id << 2) + 4);
            if (o1 <= tok_vlast && o0 <= o1) {
                tlen = o1 - o0;
                c = far_cmp(tok_vocab + o0, s, tlen < len ? (uint8_t)tlen : len);
            }
        }
        if (c == 0) {
            if (tlen == len) return id;
            c = tlen < len ? -1 : 1;  /* a proper prefix sorts first */
        }
        if (c < 0) lo = mid + 1;
        else hi = mid - 1;
    }
    return TOK_NONE;
}
#endif

static void emit(uint32_t id) {
    if (out_n >= out_max) { overflow = 1; return; }
    out_ids[out_n++] = id;
}

/* the candidate of the pair (i, p_next[i]) and its merge priority (lower merges first) */
static void eval_pair(uint8_t i) {
    uint8_t j = p_next[i];
    uint32_t id = tok_find(chunk + p_start[i], p_len[i] + p_len[j]), p = TOK_NONE;
    uint16_t p16;
    pair_id[i] = id;
    if (id != TOK_NONE) {
        if (tok_flags & TF_PRIO32) {
            p = far_peek32(prio_addr + (id << 2));
        } else {
            p16 = far_peek16(prio_addr + (id << 1));
            if (p16 != TOK_NONE16) p = p16;
        }
    }
    prio_hi[i] = (uint16_t)(p >> 16);
    prio_lo[i] = (uint16_t)p;
}

/* merge procedure (§2.2) over text[0..len) */
static void merge(const uint8_t *text, uint8_t len) {
    uint8_t i, j, n = 0, best;
    uint16_t bh, bl, h;
    uint32_t id;
    chunk_len = 0;
    if (halted) return;
    for (i = 0; i < len; ++i) {
        id = far_peek32(byte_table + ((uint16_t)text[i] << 2));
        if (id == TOK_NONE) continue;   /* bytes without a token are dropped */
        p_start[n] = chunk_len;
        p_len[n] = 1;
        p_id[n] = id;
        p_prev[n] = n - 1;   /* END for the first */
        p_next[n] = n + 1;
        ++n;
        chunk[chunk_len++] = text[i];
    }
    if (!n) return;
    p_next[n - 1] = END;
    for (i = 0; i + 1 < n; ++i) eval_pair(i);
    for (;;) {
        if (halt()) return;
        /* the lowest priority, leftmost on ties */
        bh = bl = 0xFFFF;
        best = END;
        for (i = 0; p_next[i] != END; i = p_next[i]) {
            h = prio_hi[i];
            if (h < bh) {
                bh = h;
                bl = prio_lo[i];
                best = i;
            } else if (h == bh && prio_lo[i] < bl) {
                bl = prio_lo[i];
                best = i;
            }
        }
        if (best == END) break;
        j = p_next[best];   /* joins best, leaves the list */
        p_id[best] = pair_id[best];
        p_len[best] += p_len[j];
        p_next[best] = p_next[j];
        if (p_next[j] != END) p_prev[p_next[j]] = best;
        if (best != 0) eval_pair(p_prev[best]);
        if (p_next[best] != END) eval_pair(best);
    }
    for (i = 0; i != END; i = p_next[i]) emit(p_id[i]);
}

static uint8_t is_space(uint8_t c) { return c == 32 || (c >= 9 && c <= 13); }
static uint8_t is_letter(uint8_t c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }
static uint8_t is_digit(uint8_t c) { return c >= '0' && c <= '9'; }
/* GPT-2 classes: 0 letter, 1 digit, 2 space, 3 other */
static uint8_t gclass(uint8_t c) {
    if (is_letter(c)) return 0;
    if (is_digit(c)) return 1;
    if (is_space(c)) return 2;
    return 3;
}

static const char *const contractions[] = {"s", "t", "re", "ve", "m", "ll", "d"};

/* GPT-2's pre-tokenizer split (image.rs gpt2_split), each chunk merged as it is found */
static void gpt2_split(const uint8_t *t, uint8_t n) {
    uint8_t i = 0, j, k, c, m, l;
    while (i < n) {
        if (t[i] == '\'') {
            for (m = 0; m < 7; ++m) {
                l = (uint8_t)strlen(contractions[m]);
                if (i + 1 + l <= n && !memcmp(t + i + 1, contractions[m], l)) break;
            }
            if (m < 7) { merge(t + i, 1 + l); i += 1 + l; continue; }
        }
        j = i;
        if (t[i] == ' ' && i + 1 < n && !is_space(t[i + 1])) {
            if (space_joins_digits || !is_digit(t[i + 1])) j = i + 1;
        }
        c = gclass(t[j]);
        if (c != 2) {
            for (k = j; k < n && gclass(t[k]) == c; ++k) {}
        } else {
            for (k = i; k < n && is_space(t[k]); ++k) {}
            /* \s+(?!\S): before a non-space, the run gives back its last character */
            if (k < n && k - i > 1) {
                if (space_joins_digits || !is_digit(t[k])) --k;
            }
        }
        merge(t + i, k - i);
        i = k;
    }
}

#ifdef __CC65__
#pragma bss-name(push, "HIBSS")
#endif
static uint8_t key[MAXCHUNK + 1];
#ifdef __CC65__
#pragma bss-name(pop)
#endif

#define MAX_WORD_LEN 100   /* longer words are [unk] without a search */

/* one word's WordPiece pieces, longest first (image.rs ImageTokenizer::wordpiece) */
static void wordpiece(const uint8_t *w, uint8_t n) {
    uint8_t s = 0, e, kl;
    uint16_t mark = out_n;
    uint32_t id;
    if (n > MAX_WORD_LEN) { emit(tok_unk); return; }
    while (s < n) {
        id = TOK_NONE;
        for (e = n; e > s; --e) {
            if (halt()) return;
            kl = 0;
            if (s == 0) key[kl++] = ' ';
            memcpy(key + kl, w + s, e - s);
            kl += e - s;
            id = tok_find(key, kl);
            if (id != TOK_NONE) break;
        }
        if (id == TOK_NONE) { out_n = mark; emit(tok_unk); return; }
        emit(id);
        s = e;
    }
}

/* BERT's words (image.rs bert_words), each one's pieces emitted as it is found */
static void bert_words(uint8_t *t, uint8_t n) {
    uint8_t i = 0, k, c;
    /* BERT's text cleaning: control bytes (all but tab, newline, CR; DEL too) are removed
     * before the split, so they do not end a word; lower case if the image says so */
    for (k = 0; k < n; ++k) {
        c = t[k];
        if (c == 127 || (c < 32 && c != '\t' && c != '\n' && c != '\r')) continue;
        if ((tok_flags & TF_LOWERCASE) && c >= 'A' && c <= 'Z') c += 32;
        t[i++] = c;
    }
    n = i;
    i = 0;
    while (i < n) {
        if (t[i] <= 32) { ++i; continue; }   /* space, tab, newline, CR separate */
        if (is_letter(t[i]) || is_digit(t[i])) {
            for (k = i; k < n && (is_letter(t[k]) || is_digit(t[k])); ++k) {}
        } else {
            k = i + 1;   /* punctuation, `_` included: one character per word */
        }
        wordpiece(t + i, k - i);
        i = k;
    }
}

#ifdef __CC65__ /* (HIBSS: the main area is full) */
#pragma bss-name(push, "HIBSS")
#endif
static uint8_t text[MAXCHUNK + 1];
#ifdef __CC65__
#pragma bss-name(pop)
#endif

int16_t tok_encode(const char *in, uint8_t first, uint32_t *out, uint16_t max) {
    uint8_t n = 0;
    out_ids = out;
    out_n = 0;
    out_max = max;
    overflow = halted = 0;
    if (tok_kind == TOK_SPM) text[n++] = ' ';
    for (; *in && n < MAXCHUNK; ++in)
        text[n++] = (uint8_t)*in < 0x80 ? (uint8_t)*in : (uint8_t)'?';
    switch (tok_kind) {
    case TOK_SPM:
        if (first && tok_begin != TOK_NONE) emit(tok_begin);
        if (n > 1) merge(text, n);   /* empty input: no pieces (not even the leading space) */
        break;
    case TOK_BPE:
        if (first && tok_begin != TOK_NONE) emit(tok_begin);
        gpt2_split(text, n);
        break;
    default:
        if (tok_begin != TOK_NONE) emit(tok_begin);
        bert_words(text, n);
        if (tok_end != TOK_NONE) emit(tok_end);
        break;
    }
    return halted ? TOK_STOPPED : overflow ? -1 : (int16_t)out_n;
}
