//! The image tokenizer (§2.2): encodes text using ONLY the tables inside an
//! SSNAIL image (vocab table, sorted index, priority table, byte table,
//! block). It is the executable definition of what the MEGA65 program does,
//! so it is written in the same small steps a 45GS02 program would take:
//! byte loops, a binary search with short compares, one priority per token.
//!
//! Four places where upstream's algorithm (ssnail_tok.py) disagreed with the
//! real tokenizers are fixed here; the tables are unchanged (they are the
//! hardware contract), only the algorithm improves (docs/tokenizer.md):
//!
//! 1. SentencePiece, empty text: upstream merged " " and returned a lone
//!    `▁` token; llama.cpp tokenizes nothing (only BOS when asked).
//! 2. GPT-2 pre-split: a whitespace run before a word gives back its last
//!    character whatever it is (`\s+(?!\S)`), not only a final space, so
//!    "two\n\nLine" splits "\n" "\n" "Line" like the real regex.
//! 3. WordPiece: `_` (and every other ASCII punctuation byte) is a word of
//!    its own, as BERT's pre-tokenizer makes it; control bytes are dropped
//!    (BERT's text cleaning) and words over 100 bytes become [UNK].
//! 4. GPT-2 BPE with a pre-tokenizer that splits digits off first (e.g.
//!    SmolLM2's "smollm"): whitespace before a digit stays one chunk. The
//!    image has no flag for this, so it is read from the tables: such
//!    vocabularies have no " <digit>" token (GPT-2's own has " 0".." 9").
//!
//! One economy changes no result: the merge loop keeps each adjacent pair's
//! candidate and after a merge looks up only the two pairs touching it
//! (upstream searched every pair again), e.g. 897 -> 67 index probes per
//! token for LLaMA's vocabulary on `ssnail tokcheck`'s sample.
//!
//! Three more change no result either, and make encoding near-linear (10 MiB
//! of text in about 2 s, where the scan of every pair took ~10 minutes per
//! MiB): the pairs wait in a min-heap keyed (priority, position); text is
//! cut where two adjacent bytes appear together in no mergeable token (no
//! merge can cross there; for SentencePiece that is roughly every word);
//! and a joined text looked up once is remembered for the rest of the text
//! (with its probe count, so `probes()` still counts what the MEGA65 does).

use ssnail_format::image::{Header, BASE, HEADER_LEN};
use ssnail_format::rd_u32;
use ssnail_format::tokblock::{tb, TokBlock, TokKind, TF_LOWERCASE, TOK_NONE, TOK_NONE16};
use std::cell::Cell;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

/// A merge candidate in the heap: (priority, left, right, end of right, token).
type Entry = Reverse<(u32, u32, u32, u32, u32)>;
/// Joined texts already looked up: (priority, token) if mergeable, and the
/// index probes the lookup took.
type Memo = HashMap<Box<[u8]>, (Option<(u32, u32)>, u64)>;

/// BERT's limit: a longer word is one [UNK].
const MAX_WORD_LEN: usize = 100;

/// An image's tokenizer over a view of its memory (index 0 = address $8000000).
pub struct ImageTokenizer<'a> {
    mem: &'a [u8],
    pub block: TokBlock,
    kind: TokKind,
    /// Offset of the vocab table in `mem`.
    vocab: usize,
    index: usize,
    priority: usize,
    byte_table: usize,
    /// BPE: does a space ever join a following digit (fix 4)?
    space_joins_digits: bool,
    /// Bit a·256+b: some mergeable token holds bytes a, b side by side.
    joins: Box<[u64; 1024]>,
    probes: Cell<u64>,
}

impl<'a> ImageTokenizer<'a> {
    /// Check the header and every table's extent; the error says what is wrong.
    pub fn new(mem: &'a [u8]) -> Result<ImageTokenizer<'a>, String> {
        let h = Header::parse(mem).map_err(|e| e.to_string())?;
        let at = |what: &str, addr: u32, len: u64| -> Result<usize, String> {
            let off = (addr as u64).checked_sub(BASE as u64).ok_or_else(|| {
                format!("{what} address ${addr:07X} is below the image base $8000000")
            })?;
            if off + len > mem.len() as u64 {
                return Err(format!(
                    "{what} at ${addr:07X} ({len} bytes) runs past the end of the image"
                ));
            }
            Ok(off as usize)
        };
        if h.tokenizer == 0 {
            return Err("image has no tokenizer block (header $78 is 0)".into());
        }
        let b = at("tokenizer block", h.tokenizer, tb::LEN as u64)?;
        let block = TokBlock::decode(&mem[b..b + tb::LEN]);
        let kind = TokKind::from_u8(block.kind).ok_or_else(|| {
            format!(
                "unknown tokenizer kind {} in the tokenizer block",
                block.kind
            )
        })?;
        // Host tools size tables by the header's count: it must be the
        // block's, whose table is checked to lie inside the image below.
        if h.n_vocab != block.n_vocab {
            return Err(format!(
                "the header says {} tokens but the tokenizer block {}",
                h.n_vocab, block.n_vocab
            ));
        }
        let n = block.n_vocab as u64;
        let vocab = at("vocab table", h.vocab, 4 * (n + 1))?;
        let last = rd_u32(mem, vocab + 4 * n as usize) as u64;
        at("vocab table", h.vocab, last)?;
        let index = at("sorted index", block.index, 4 * block.index_len as u64)?;
        let priority = at(
            "priority table",
            block.priority,
            block.priority_len() as u64,
        )?;
        let byte_table = at("byte table", block.byte_table, 1024)?;
        for (name, id) in [("begin", block.begin), ("end", block.end)] {
            if id != TOK_NONE && id as u64 >= n {
                return Err(format!(
                    "{name} token {id} is outside the {n}-token vocabulary"
                ));
            }
        }
        let mut tok = ImageTokenizer {
            mem,
            block,
            kind,
            vocab,
            index,
            priority,
            byte_table,
            space_joins_digits: true,
            joins: Box::new([0; 1024]),
            probes: Cell::new(0),
        };
        for id in 0..n as u32 {
            if tok.prio(id).is_some() {
                for w in tok.token_bytes(id).windows(2) {
                    let bit = (w[0] as usize) << 8 | w[1] as usize;
                    tok.joins[bit / 64] |= 1 << (bit % 64);
                }
            }
        }
        // Fix 4, read from the tables once at load time: a vocabulary with
        // no " <digit>" token was trained with digits split off first.
        tok.space_joins_digits = (b'0'..=b'9').any(|d| tok.find(&[b' ', d]).is_some());
        tok.probes.set(0);
        Ok(tok)
    }

    pub fn kind(&self) -> TokKind {
        self.kind
    }

    /// Index probes (compares in `find`) so far.
    pub fn probes(&self) -> u64 {
        self.probes.get()
    }

    /// A token's bytes from the vocab table (empty for special tokens).
    pub fn token_bytes(&self, id: u32) -> &'a [u8] {
        if id >= self.block.n_vocab {
            return &[];
        }
        let o = self.vocab + 4 * id as usize;
        let (s, e) = (
            rd_u32(self.mem, o) as usize,
            rd_u32(self.mem, o + 4) as usize,
        );
        let mem: &'a [u8] = self.mem;
        mem.get(self.vocab + s..self.vocab + e).unwrap_or(&[])
    }

    /// Encode `text`; `first` adds the begin token (decoders' BOS) for the
    /// first turn. WordPiece always adds [CLS] … [SEP] when the image has them.
    pub fn encode(&self, text: &str, first: bool) -> Vec<u32> {
        // Non-ASCII characters become '?' (the MEGA65 keyboard is ASCII).
        let ascii: Vec<u8> = text
            .chars()
            .map(|c| if c.is_ascii() { c as u8 } else { b'?' })
            .collect();
        let mut out = Vec::new();
        let mut memo = Memo::new();
        let begin = (self.block.begin != TOK_NONE).then_some(self.block.begin);
        match self.kind {
            TokKind::Spm => {
                if first {
                    out.extend(begin);
                }
                // Fix 1: nothing for empty text.
                if !ascii.is_empty() {
                    let mut chunk = vec![b' '];
                    chunk.extend_from_slice(&ascii);
                    out.extend(self.merge(&chunk, &mut memo));
                }
            }
            TokKind::Bpe => {
                if first {
                    out.extend(begin);
                }
                for chunk in gpt2_split(&ascii, self.space_joins_digits) {
                    out.extend(self.merge(chunk, &mut memo));
                }
            }
            TokKind::WordPiece => {
                out.extend(begin);
                let mut ascii = ascii;
                if self.block.flags & TF_LOWERCASE != 0 {
                    ascii.make_ascii_lowercase();
                }
                for word in bert_words(&ascii) {
                    self.wordpiece(&word, &mut out);
                }
                if self.block.end != TOK_NONE {
                    out.push(self.block.end);
                }
            }
        }
        out
    }

    /// Binary search of the sorted index for a token whose bytes are `text`.
    pub fn find(&self, text: &[u8]) -> Option<u32> {
        let (mut lo, mut hi) = (0i64, self.block.index_len as i64 - 1);
        while lo <= hi {
            let mid = (lo + hi) / 2;
            let id = rd_u32(self.mem, self.index + 4 * mid as usize);
            self.probes.set(self.probes.get() + 1);
            // Slice order is the index order: memcmp, then shorter first.
            match self.token_bytes(id).cmp(text) {
                std::cmp::Ordering::Equal => return Some(id),
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid - 1,
            }
        }
        None
    }

    /// Merge priority of a token (lower merges first); None = never merges.
    pub fn prio(&self, id: u32) -> Option<u32> {
        if id >= self.block.n_vocab {
            return None; // a corrupt index entry: never merge
        }
        if self.block.prio32() {
            let p = rd_u32(self.mem, self.priority + 4 * id as usize);
            (p != TOK_NONE).then_some(p)
        } else {
            let o = self.priority + 2 * id as usize;
            let p = u16::from_le_bytes([self.mem[o], self.mem[o + 1]]);
            (p != TOK_NONE16).then_some(p as u32)
        }
    }

    /// SPM and BPE: bytes to starting tokens, then repeatedly merge the
    /// adjacent pair whose joined text is a token with the lowest priority
    /// (leftmost on ties).
    ///
    /// The pairs wait in a min-heap keyed (priority, left position), so the
    /// choice is the same as scanning every pair each round, but a chunk of
    /// n bytes takes O(n log n), not O(n²): SentencePiece text is one chunk
    /// (10 MB of text encodes in seconds). Symbols are ranges of the kept
    /// bytes in a linked list; a heap entry is stale once either side
    /// changed (a version per symbol), and then skipped.
    fn merge(&self, chunk: &[u8], memo: &mut Memo) -> Vec<u32> {
        // Bytes without a starting token are dropped (their neighbours join).
        let mut kept: Vec<u8> = Vec::with_capacity(chunk.len());
        let mut toks: Vec<u32> = Vec::with_capacity(chunk.len());
        for &b in chunk {
            let t = rd_u32(self.mem, self.byte_table + 4 * b as usize);
            if t != TOK_NONE {
                kept.push(b);
                toks.push(t);
            }
        }
        // No merge crosses two adjacent bytes that no mergeable token holds
        // side by side: there the text splits into pieces merged on their
        // own (same result, shorter heaps; for SentencePiece, roughly words).
        let mut out = Vec::with_capacity(toks.len());
        let mut a = 0;
        for i in 1..=kept.len() {
            if i == kept.len() || !self.joinable(kept[i - 1], kept[i]) {
                out.extend(self.merge_piece(&kept[a..i], &mut toks[a..i], memo));
                a = i;
            }
        }
        out
    }

    /// Whether some mergeable token holds bytes `a`, `b` side by side.
    fn joinable(&self, a: u8, b: u8) -> bool {
        let bit = (a as usize) << 8 | b as usize;
        self.joins[bit / 64] >> (bit % 64) & 1 == 1
    }

    /// Merge one piece (kept bytes and their starting tokens).
    fn merge_piece(&self, kept: &[u8], toks: &mut [u32], memo: &mut Memo) -> Vec<u32> {
        let n = toks.len();
        if n < 2 || n > u32::MAX as usize - 1 {
            return toks.to_vec();
        }
        // Symbol i covers kept[i..end[i]] (a symbol keeps its first byte's
        // index); the list runs 0 → next; end = 0 marks a symbol merged away.
        const NONE: u32 = u32::MAX;
        let mut end: Vec<u32> = (1..=n as u32).collect();
        let mut next: Vec<u32> = (1..=n as u32)
            .map(|i| if i < n as u32 { i } else { NONE })
            .collect();
        let mut prev: Vec<u32> = (0..n as u32)
            .map(|i| i.checked_sub(1).unwrap_or(NONE))
            .collect();
        // (priority, left, right, end of right when pushed, token): an entry
        // is stale when right is gone, no longer follows left, or grew.
        let mut heap: BinaryHeap<Entry> = BinaryHeap::new();
        let mut push = |l: u32, r: u32, end: &[u32], heap: &mut BinaryHeap<Entry>| {
            let re = end[r as usize];
            let joined = &kept[l as usize..re as usize];
            // The same joined text comes back often (every "th" of a book):
            // its answer is remembered with the probes it took, counted
            // again on reuse, so `probes()` stays what the MEGA65 would do.
            let c = match memo.get(joined) {
                Some(&(c, cost)) => {
                    self.probes.set(self.probes.get() + cost);
                    c
                }
                None => {
                    let before = self.probes.get();
                    let c = self.candidate(joined);
                    memo.insert(joined.into(), (c, self.probes.get() - before));
                    c
                }
            };
            if let Some((p, t)) = c {
                heap.push(Reverse((p, l, r, re, t)));
            }
        };
        for i in 0..n as u32 - 1 {
            push(i, i + 1, &end, &mut heap);
        }
        while let Some(Reverse((_, l, r, re, t))) = heap.pop() {
            let (li, ri) = (l as usize, r as usize);
            if end[li] == 0 || next[li] != r || end[ri] != re {
                continue;
            }
            // r joins l.
            end[li] = re;
            end[ri] = 0;
            toks[li] = t;
            next[li] = next[ri];
            if next[ri] != NONE {
                prev[next[ri] as usize] = l;
            }
            if prev[li] != NONE {
                push(prev[li], l, &end, &mut heap);
            }
            if next[li] != NONE {
                push(l, next[li], &end, &mut heap);
            }
        }
        let mut out = Vec::new();
        let mut i = 0u32;
        while i != NONE {
            out.push(toks[i as usize]);
            i = next[i as usize];
        }
        out
    }

    /// The token a joined text is, if it exists and may merge: (priority, token).
    fn candidate(&self, joined: &[u8]) -> Option<(u32, u32)> {
        let t = self.find(joined)?;
        Some((self.prio(t)?, t))
    }

    /// The merge loop as first written (a scan of every pair per merge,
    /// O(n²)): the definition the heap version is checked against.
    #[cfg(test)]
    fn merge_by_scanning(&self, chunk: &[u8]) -> Vec<u32> {
        let mut toks: Vec<u32> = Vec::new();
        let mut texts: Vec<Vec<u8>> = Vec::new();
        for &b in chunk {
            let t = rd_u32(self.mem, self.byte_table + 4 * b as usize);
            if t != TOK_NONE {
                toks.push(t);
                texts.push(vec![b]);
            }
        }
        let cand = |a: &[u8], b: &[u8]| self.candidate(&[a, b].concat());
        let mut pairs: Vec<Option<(u32, u32)>> = (1..toks.len())
            .map(|i| cand(&texts[i - 1], &texts[i]))
            .collect();
        loop {
            let mut best: Option<(u32, usize, u32)> = None;
            for (i, c) in pairs.iter().enumerate() {
                if let Some((p, t)) = *c {
                    if best.is_none_or(|(bp, _, _)| p < bp) {
                        best = Some((p, i, t));
                    }
                }
            }
            let Some((_, i, t)) = best else { break };
            let right = texts.remove(i + 1);
            texts[i].extend_from_slice(&right);
            toks.remove(i + 1);
            toks[i] = t;
            pairs.remove(i);
            if i > 0 {
                pairs[i - 1] = cand(&texts[i - 1], &texts[i]);
            }
            if i + 1 < toks.len() {
                pairs[i] = cand(&texts[i], &texts[i + 1]);
            }
        }
        toks
    }

    /// Greedy longest match; the first piece carries the word's leading
    /// space, the rest are bare. A word with an unmatched position is [unk].
    fn wordpiece(&self, word: &[u8], out: &mut Vec<u32>) {
        let unk = self.block.unk;
        if word.len() > MAX_WORD_LEN {
            out.push(unk);
            return;
        }
        let mut pieces = Vec::new();
        let mut s = 0;
        while s < word.len() {
            let mut hit = None;
            for end in (s + 1..=word.len()).rev() {
                let mut piece = Vec::with_capacity(end - s + 1);
                if s == 0 {
                    piece.push(b' ');
                }
                piece.extend_from_slice(&word[s..end]);
                if let Some(t) = self.find(&piece) {
                    hit = Some((t, end));
                    break;
                }
            }
            let Some((t, end)) = hit else {
                out.push(unk);
                return;
            };
            pieces.push(t);
            s = end;
        }
        out.extend(pieces);
    }
}

fn is_gpt2_space(b: u8) -> bool {
    matches!(b, 9..=13 | 32)
}

#[derive(PartialEq, Clone, Copy)]
enum Class {
    Letter,
    Digit,
    Space,
    Other,
}

fn class(b: u8) -> Class {
    match b {
        b'A'..=b'Z' | b'a'..=b'z' => Class::Letter,
        b'0'..=b'9' => Class::Digit,
        _ if is_gpt2_space(b) => Class::Space,
        _ => Class::Other,
    }
}

/// GPT-2's pre-split on ASCII text, the regex
/// `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`
/// written as a scan. With `space_joins_digits` false it is the split of
/// pre-tokenizers that isolate digits first (llama.cpp's "smollm",
/// "starcoder", ...): a whitespace run before a digit stays whole.
pub fn gpt2_split(t: &[u8], space_joins_digits: bool) -> Vec<&[u8]> {
    let mut chunks = Vec::new();
    let mut i = 0;
    while i < t.len() {
        // 1. Contractions (lower case only, as in the regex).
        if t[i] == b'\'' {
            let rest = &t[i + 1..];
            let suffix = ["s", "t", "re", "ve", "m", "ll", "d"]
                .iter()
                .find(|s| rest.starts_with(s.as_bytes()));
            if let Some(s) = suffix {
                let k = i + 1 + s.len();
                chunks.push(&t[i..k]);
                i = k;
                continue;
            }
        }
        // 2. One leading space joins a following non-space run.
        let joins = |b: u8| !is_gpt2_space(b) && (space_joins_digits || !b.is_ascii_digit());
        let j = if t[i] == b' ' && i + 1 < t.len() && joins(t[i + 1]) {
            i + 1
        } else {
            i
        };
        let c = class(t[j]);
        let mut k = j;
        if c != Class::Space {
            // 3. A run of one class.
            while k < t.len() && class(t[k]) == c {
                k += 1;
            }
        } else {
            // 4. A whitespace run; before a non-space it gives back its last
            // character (fix 2: whatever that character is), which is then
            // either a space joining the next word or a chunk of its own.
            while k < t.len() && is_gpt2_space(t[k]) {
                k += 1;
            }
            if k < t.len() && k - i > 1 && (space_joins_digits || !t[k].is_ascii_digit()) {
                k -= 1;
            }
        }
        chunks.push(&t[i..k]);
        i = k;
    }
    chunks
}

/// BERT's words on ASCII text: runs of letters and digits; every other
/// printable byte is a word of its own (fix 3: `_` included); whitespace
/// separates; control bytes are dropped.
pub fn bert_words(t: &[u8]) -> Vec<Vec<u8>> {
    let mut words = Vec::new();
    let mut cur = Vec::new();
    for &b in t {
        if b.is_ascii_alphanumeric() {
            cur.push(b);
            continue;
        }
        // BERT's text cleaning removes control bytes (all but \t \n \r)
        // before the split: they do not end a word ("ab\x01cd" is "abcd").
        if b.is_ascii_control() && !matches!(b, b'\t' | b'\n' | b'\r') {
            continue;
        }
        if !cur.is_empty() {
            words.push(std::mem::take(&mut cur));
        }
        if b.is_ascii_graphic() {
            words.push(vec![b]);
        }
        // Anything else (space, \t \n \r) only separates.
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words
}

/// Memory view of an image file (index 0 = $8000000): the header, then the
/// payload at its load address (and a legacy host segment, §1.7).
pub fn image_memory(file: &[u8]) -> Result<Vec<u8>, String> {
    let h = Header::parse(file).map_err(|e| e.to_string())?;
    if (file.len() as u64) < h.file_len() {
        return Err(format!(
            "truncated image: {} bytes, the header says {}",
            file.len(),
            h.file_len()
        ));
    }
    let segs: Vec<(u32, &[u8])> = h
        .segments()
        .iter()
        .map(|s| {
            let at = s.file_offset as usize;
            (s.address, &file[at..at + s.len as usize])
        })
        .collect();
    let mut end = 0usize;
    for (addr, bytes) in &segs {
        if *addr < BASE {
            return Err(format!("segment address ${addr:07X} is below $8000000"));
        }
        end = end.max((addr - BASE) as usize + bytes.len());
    }
    let mut mem = vec![0u8; end];
    for (addr, bytes) in segs {
        let o = (addr - BASE) as usize;
        mem[o..o + bytes.len()].copy_from_slice(bytes);
    }
    Ok(mem)
}

/// A memory view holding only a header and the tokenizer tables, placed as
/// the converter places them (vocab table at the payload start, then index,
/// priority, byte table and block, each 32-byte aligned). For testing the
/// image tokenizer on vocab-only GGUFs, which cannot be converted.
pub fn tables_only_memory(t: &crate::tables::ImageTables) -> Vec<u8> {
    use ssnail_format::image::{align_up, OUTPUT_AREA, PAYLOAD_BASE, TOKENS};
    let mut mem = vec![0u8; (PAYLOAD_BASE - BASE) as usize];
    let place = |mem: &mut Vec<u8>, bytes: &[u8]| -> u32 {
        let start = align_up(mem.len() as u64, 32) as usize;
        mem.resize(start, 0);
        mem.extend_from_slice(bytes);
        BASE + start as u32
    };
    let vocab = place(&mut mem, &t.vocab_table);
    let mut block = t.block;
    block.index = place(&mut mem, &t.index);
    block.priority = place(&mut mem, &t.priority);
    block.byte_table = place(&mut mem, &t.byte_table);
    let tokenizer = place(&mut mem, &block.encode());
    let payload_len = align_up(mem.len() as u64, 256) as usize;
    mem.resize(payload_len, 0);
    // No script, no output and no context, but the fixed regions a reader checks are in place
    // (token buffer, output area, an empty script) and the memory is the tables' (§1.9).
    let header = Header {
        code: PAYLOAD_BASE,
        data: PAYLOAD_BASE,
        tokens: TOKENS,
        output: OUTPUT_AREA,
        vocab,
        n_vocab: block.n_vocab,
        tokenizer,
        load_base: PAYLOAD_BASE,
        payload_len: (mem.len() - (PAYLOAD_BASE - BASE) as usize) as u32,
        mem_needed: mem.len() as u32,
        ..Default::default()
    };
    mem[..HEADER_LEN].copy_from_slice(&header.to_bytes());
    mem
}

/// [`tables_only_memory`] as an image file (header, then the payload), which
/// loads like any image and [`image_memory`] turns back into that memory.
pub fn tables_only_image(t: &crate::tables::ImageTables) -> Vec<u8> {
    let mem = tables_only_memory(t);
    let payload = (ssnail_format::image::PAYLOAD_BASE - BASE) as usize;
    let mut file = mem[..HEADER_LEN].to_vec();
    file.extend_from_slice(&mem[payload..]);
    file
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tables::ImageTables;
    use crate::vocab::tests::vocab;
    use crate::vocab::TokModel;
    use ssnail_format::image::h;
    use ssnail_format::wr_u32;

    fn spm_tables() -> ImageTables {
        let mut v = vocab(
            TokModel::Spm,
            &["<unk>", "<s>", "</s>", "▁", "a", "b", "▁a", "ab"],
        );
        v.scores = vec![0.0, 0.0, 0.0, -1.0, -2.0, -3.0, -0.5, -0.7];
        ImageTables::build(&v)
    }

    fn spm_mem() -> Vec<u8> {
        tables_only_memory(&spm_tables())
    }

    /// The image tables of one of llama.cpp's vocabulary files.
    fn real_tables(name: &str) -> Vec<u8> {
        let g = ssnail_gguf::Gguf::open(ssnail_testkit::llama_vocab::gguf(name)).unwrap();
        let v = crate::vocab::Vocab::from_gguf(&g).unwrap();
        tables_only_memory(&ImageTables::build(&v))
    }

    /// Text that stresses merging: words, runs of one letter, digits,
    /// punctuation and spaces, from a seeded generator.
    fn stress_text(seed: u64, len: usize) -> String {
        let mut x = seed | 1;
        let mut out = String::with_capacity(len);
        let words = [
            "the", "un", "believ", "able", "ing", " ", "  ", "\n", "aaaa", "1234", "!?", "ab",
        ];
        while out.len() < len {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            out.push_str(words[(x % words.len() as u64) as usize]);
        }
        out
    }

    #[test]
    fn the_heap_merge_gives_the_ids_of_the_pair_scanning_merge() {
        for name in ["llama-spm", "gpt-2"] {
            let mem = real_tables(name);
            let t = ImageTokenizer::new(&mem).unwrap();
            for seed in 0..200u64 {
                let text = stress_text(seed, 1 + (seed as usize * 37) % 600);
                let mut chunk = vec![b' '];
                chunk.extend_from_slice(text.as_bytes());
                assert_eq!(
                    t.merge(&chunk, &mut Memo::new()),
                    t.merge_by_scanning(&chunk),
                    "{name}, seed {seed}: {text:?}"
                );
            }
        }
    }

    #[test]
    fn ten_megabytes_of_text_encode_in_under_ten_seconds() {
        // One SentencePiece chunk of 10 MB (the worst case: no pre-split),
        // and the same through GPT-2's pre-split.
        let text = stress_text(7, 10 << 20);
        for name in ["llama-spm", "gpt-2"] {
            let mem = real_tables(name);
            let t = ImageTokenizer::new(&mem).unwrap();
            let t0 = std::time::Instant::now();
            let ids = t.encode(&text, true);
            let took = t0.elapsed().as_secs_f64();
            assert!(ids.len() > 1 << 20, "{name}: {} ids", ids.len());
            eprintln!("{name}: 10 MiB of text, {} ids in {took:.2} s", ids.len());
            assert!(took < 10.0, "{name}: 10 MB took {took:.1} s");
        }
    }

    #[test]
    fn small_spm_image() {
        let mem = spm_mem();
        let t = ImageTokenizer::new(&mem).unwrap();
        // " ab": "▁a" (priority 0) beats "ab" (1).
        assert_eq!(t.encode("ab", true), [1, 6, 5]);
        assert_eq!(t.encode("ab", false), [6, 5]);
        assert_eq!(t.encode("", true), [1]);
        assert_eq!(t.encode("", false), [] as [u32; 0]);
        // 'c' has no start token and is dropped; 'é' becomes '?' (none either).
        assert_eq!(t.encode("bcé", false), [3, 5]);
        assert!(t.probes() > 0);
    }

    #[test]
    fn tables_only_image_loads_back_as_the_tables_only_memory() {
        let tables = spm_tables();
        let file = tables_only_image(&tables);
        assert!(file.len() < tables_only_memory(&tables).len());
        assert_eq!(image_memory(&file).unwrap(), tables_only_memory(&tables));
    }

    #[test]
    fn corrupt_images_are_errors_not_panics() {
        let mem = spm_mem();
        let tok_addr = rd_u32(&mem, h::TOKENIZER);
        let block_off = (tok_addr - BASE) as usize;

        let mut bad = mem.clone();
        bad[block_off] = 7;
        let e = ImageTokenizer::new(&bad).err().unwrap();
        assert!(e.contains("unknown tokenizer kind 7"), "{e}");

        let mut bad = mem.clone();
        wr_u32(&mut bad, block_off + 12, 1 << 20); // index_len
        let e = ImageTokenizer::new(&bad).err().unwrap();
        assert!(
            e.contains("sorted index") && e.contains("runs past the end"),
            "{e}"
        );

        let mut bad = mem.clone();
        wr_u32(&mut bad, h::TOKENIZER, 0);
        assert!(ImageTokenizer::new(&bad)
            .err()
            .unwrap()
            .contains("no tokenizer block"));

        let e = ImageTokenizer::new(&mem[..block_off + 20]).err().unwrap();
        assert!(e.contains("runs past the end"), "{e}");

        let e = ImageTokenizer::new(&mem[..100]).err().unwrap();
        assert!(e.contains("too short"), "{e}");

        // A bad id inside the index: no panic, it just never merges.
        let mut bad = mem.clone();
        let index = (rd_u32(&mem, block_off + 8) - BASE) as usize;
        wr_u32(&mut bad, index, 999);
        let t = ImageTokenizer::new(&bad).unwrap();
        let _ = t.encode("ab ab", true);
    }

    #[test]
    fn image_memory_places_the_payload() {
        let mem = spm_mem();
        let payload = (ssnail_format::image::PAYLOAD_BASE - BASE) as usize;
        let mut file = mem[..HEADER_LEN].to_vec();
        file.extend_from_slice(&mem[payload..]);
        assert_eq!(image_memory(&file).unwrap()[payload..], mem[payload..]);
        let e = image_memory(&file[..file.len() - 1]).err().unwrap();
        assert!(e.contains("truncated image"), "{e}");
    }
}
