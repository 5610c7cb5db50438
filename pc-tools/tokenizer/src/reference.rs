//! The reference tokenizers, read from a GGUF vocabulary (§2.3). They must
//! give exactly the ids llama.cpp gives (its `tests/test-tokenizer-0` cases,
//! see `testdata/`), so each follows the algorithm behind those ids:
//!
//! * SentencePiece ("llama"): llama.cpp's own SPM algorithm, hand-written
//!   below because no crate runs llama.cpp's SPM over a GGUF vocabulary
//!   (the `sentencepiece` crate wraps the C++ library and needs its protobuf
//!   model; `tokenizers` needs a `tokenizer.json` and a different model).
//! * GPT-2 byte-level BPE ("gpt2") and WordPiece ("bert"): Hugging Face's
//!   `tokenizers` pipelines (the library that produced llama.cpp's expected
//!   ids), built from the GGUF's tokens and merges.

use crate::vocab::{token_type, TokModel, Vocab};
use std::collections::{BinaryHeap, HashMap};
use tokenizers::models::bpe::BPE;
use tokenizers::models::wordpiece::WordPiece;
use tokenizers::normalizers::BertNormalizer;
use tokenizers::pre_tokenizers::bert::BertPreTokenizer;
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::pre_tokenizers::digits::Digits;
use tokenizers::pre_tokenizers::sequence::Sequence;
use tokenizers::pre_tokenizers::PreTokenizerWrapper;
use tokenizers::{AddedToken, Tokenizer};

/// A tokenizer over a GGUF vocabulary.
pub struct GgufTokenizer {
    pub vocab: Vocab,
    engine: Engine,
}

enum Engine {
    Spm(Box<Spm>),
    Hf(Box<Tokenizer>),
}

/// BPE pre-tokenizer names (`tokenizer.ggml.pre`) whose llama.cpp split is
/// GPT-2's regex alone.
const PRE_GPT2: [&str; 6] = [
    "gpt-2",
    "mpt",
    "olmo",
    "jais",
    "trillion",
    "granite-docling",
];
/// ... and those that isolate every digit first, then apply GPT-2's regex.
const PRE_DIGITS_GPT2: [&str; 8] = [
    "starcoder",
    "refact",
    "command-r",
    "smollm",
    "codeshell",
    "exaone",
    "minerva",
    "mellum2",
];

impl GgufTokenizer {
    /// Build the tokenizer for a vocabulary; the error says what is unsupported.
    pub fn new(vocab: Vocab) -> Result<GgufTokenizer, String> {
        let engine = match vocab.model {
            TokModel::Spm => Engine::Spm(Box::new(Spm::new(&vocab))),
            TokModel::Bpe => Engine::Hf(Box::new(build_bpe(&vocab)?)),
            TokModel::WordPiece => Engine::Hf(Box::new(build_wordpiece(&vocab)?)),
        };
        Ok(GgufTokenizer { vocab, engine })
    }

    /// Token ids for `text`; with `special`, the begin/end tokens the model
    /// wants (BOS for decoders when wanted, [CLS] … [SEP] for BERT).
    pub fn encode(&self, text: &str, special: bool) -> Vec<u32> {
        let mut ids = Vec::new();
        if special {
            if let Some(b) = self.begin() {
                ids.push(b);
            }
        }
        match &self.engine {
            Engine::Spm(s) => s.encode(text, s.add_space_prefix, &mut ids),
            Engine::Hf(t) => {
                // The pipelines have no failing step for text input (every
                // byte has a token; unknown words become [UNK]).
                let enc = t
                    .encode_fast(text, false)
                    .expect("tokenizers pipeline failed on plain text");
                ids.extend_from_slice(enc.get_ids());
            }
        }
        if special {
            if let Some(e) = self.end() {
                ids.push(e);
            }
        }
        ids
    }

    /// Tokens whose text [`GgufTokenizer::encode_special`] turns into the
    /// token itself: control, user-defined and unknown tokens, and the
    /// BOS/EOS tokens whatever their type (small vocabularies leave them normal).
    pub fn parses_as_special(&self, id: u32) -> bool {
        let v = &self.vocab;
        matches!(
            v.types.get(id as usize),
            Some(&token_type::CONTROL | &token_type::USER_DEFINED | &token_type::UNKNOWN)
        ) || Some(id) == v.bos_id
            || Some(id) == v.eos_id
    }

    /// Token ids for formatted text with special tokens written out (a chat
    /// template's pieces), as llama.cpp tokenizes with `parse_special` and no
    /// begin token: the texts of control and user-defined tokens become their
    /// ids (longest first, leftmost), the text between them goes through the
    /// tokenizer. A SentencePiece fragment gets llama.cpp's leading space
    /// (when the vocabulary wants one) at the start and after a special
    /// token, except at the start when `continues_text` (the text follows
    /// typed text, which had its own).
    pub fn encode_special(&self, text: &str, continues_text: bool) -> Vec<u32> {
        let specials: Vec<(&str, u32)> = {
            let mut v: Vec<(&str, u32)> = self
                .vocab
                .tokens
                .iter()
                .enumerate()
                .filter(|&(i, t)| !t.is_empty() && self.parses_as_special(i as u32))
                .map(|(i, t)| (t.as_str(), i as u32))
                .collect();
            v.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.1.cmp(&b.1)));
            v
        };
        let mut ids = Vec::new();
        let mut prev_special = !continues_text;
        let mut rest = text;
        while !rest.is_empty() {
            // The leftmost special token; the longest one where several start there.
            let next = specials
                .iter()
                .filter_map(|&(t, id)| rest.find(t).map(|at| (at, t.len(), id)))
                .min_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
            let (fragment, special) = match next {
                Some((at, len, id)) => (&rest[..at], Some((len, id, at))),
                None => (rest, None),
            };
            if !fragment.is_empty() {
                match &self.engine {
                    Engine::Spm(s) => {
                        s.encode(fragment, s.add_space_prefix && prev_special, &mut ids)
                    }
                    Engine::Hf(t) => ids.extend_from_slice(
                        t.encode_fast(fragment, false)
                            .expect("tokenizers pipeline failed on plain text")
                            .get_ids(),
                    ),
                }
            }
            match special {
                Some((len, id, at)) => {
                    ids.push(id);
                    prev_special = true;
                    rest = &rest[at + len..];
                }
                None => break,
            }
        }
        ids
    }

    /// The begin token with `special` (§2.3): BOS when wanted, or [CLS] (default 101).
    pub fn begin(&self) -> Option<u32> {
        match self.vocab.model {
            TokModel::WordPiece => Some(self.vocab.cls_id.or(self.vocab.bos_id).unwrap_or(101)),
            _ if self.vocab.bos_wanted() => self.vocab.decoder_bos(),
            _ => None,
        }
    }

    /// The end token with `special` (§2.3): [SEP] (default 102) for BERT only.
    pub fn end(&self) -> Option<u32> {
        match self.vocab.model {
            TokModel::WordPiece => Some(self.vocab.sep_id.or(self.vocab.eos_id).unwrap_or(102)),
            _ => None,
        }
    }

    /// How a token prints (like llama-tokenize): its text, special tokens by name.
    pub fn piece(&self, id: u32) -> String {
        let id = id as usize;
        if id >= self.vocab.n_vocab() {
            return format!("<invalid {id}>");
        }
        let bytes = self.vocab.token_bytes(id);
        if bytes.is_empty() {
            self.vocab.tokens[id].clone()
        } else {
            String::from_utf8_lossy(&bytes).into_owned()
        }
    }
}

/// GPT-2 byte-level BPE: the GGUF's GPT-2-alphabet tokens and merges are
/// exactly Hugging Face's `vocab.json`/`merges.txt`.
fn build_bpe(v: &Vocab) -> Result<Tokenizer, String> {
    let pre = v.pre.as_deref().unwrap_or("gpt-2");
    let byte_level = ByteLevel::new(false, true, true);
    let pre_tok: PreTokenizerWrapper = if PRE_GPT2.contains(&pre) || pre == "default" {
        byte_level.into()
    } else if PRE_DIGITS_GPT2.contains(&pre) {
        Sequence::new(vec![Digits::new(true).into(), byte_level.into()]).into()
    } else {
        return Err(format!(
            "BPE pre-tokenizer '{pre}' is not supported (supported: {}, {})",
            PRE_GPT2.join(", "),
            PRE_DIGITS_GPT2.join(", ")
        ));
    };
    let vocab: tokenizers::models::bpe::Vocab = v
        .tokens
        .iter()
        .enumerate()
        .map(|(i, t)| (t.clone(), i as u32))
        .collect();
    let mut merges = Vec::with_capacity(v.merges.len());
    for (rank, m) in v.merges.iter().enumerate() {
        let (l, r) = m
            .split_once(' ')
            .ok_or_else(|| format!("merge rule {rank} '{m}' has no space"))?;
        merges.push((l.to_string(), r.to_string()));
    }
    let bpe = BPE::builder()
        .vocab_and_merges(vocab, merges)
        .build()
        .map_err(|e| format!("BPE vocabulary: {e}"))?;
    let mut tok = Tokenizer::new(bpe);
    tok.with_pre_tokenizer(Some(pre_tok));
    // llama.cpp splits user-defined tokens (type 4, e.g. GPT-NeoX's space
    // runs) out of the text before the pre-tokenizer, even without special
    // parsing; Hugging Face's added tokens do the same.
    let user: Vec<AddedToken> = v
        .tokens
        .iter()
        .zip(&v.types)
        .filter(|(_, &ty)| ty == token_type::USER_DEFINED)
        .map(|(t, _)| AddedToken::from(t.clone(), false))
        .collect();
    tok.add_tokens(&user);
    Ok(tok)
}

/// WordPiece: llama.cpp's GGUF stores word-initial pieces as `▁piece`,
/// continuations bare, and bracketed specials unchanged; Hugging Face's
/// convention (`piece`, `##piece`) is restored for its WordPiece model.
fn build_wordpiece(v: &Vocab) -> Result<Tokenizer, String> {
    let hf_text = |t: &str| -> String {
        if t.starts_with('[') && t.ends_with(']') && t.len() > 1 {
            t.to_string()
        } else if let Some(word) = t.strip_prefix('\u{2581}') {
            word.to_string()
        } else {
            format!("##{t}")
        }
    };
    let vocab: tokenizers::models::bpe::Vocab = v
        .tokens
        .iter()
        .enumerate()
        .map(|(i, t)| (hf_text(t), i as u32))
        .collect();
    let unk = hf_text(&v.tokens[v.unk_token() as usize]);
    let wp = WordPiece::builder()
        .vocab(vocab)
        .unk_token(unk)
        .continuing_subword_prefix("##".into())
        .max_input_chars_per_word(100)
        .build()
        .map_err(|e| format!("WordPiece vocabulary: {e}"))?;
    let mut tok = Tokenizer::new(wp);
    // BERT's uncased normaliser: clean control chars, split CJK, strip
    // accents (NFD), lowercase; then whitespace/punctuation pre-split.
    tok.with_normalizer(Some(BertNormalizer::new(true, true, None, true)));
    tok.with_pre_tokenizer(Some(BertPreTokenizer));
    Ok(tok)
}

/// llama.cpp's SentencePiece tokenizer: one symbol per UTF-8 character, then
/// repeatedly merge the adjacent pair whose concatenation is a token with
/// the highest score (leftmost on ties); symbols that are not tokens become
/// `<0xHH>` byte tokens.
struct Spm {
    /// Text -> id; a repeated text maps to its last id, as in llama.cpp.
    ids: HashMap<Vec<u8>, u32>,
    scores: Vec<f32>,
    /// Byte -> `<0xHH>` token (or the one-byte token, else unk).
    byte_tokens: [u32; 256],
    add_space_prefix: bool,
}

/// A candidate merge in the queue: best score first, then leftmost.
#[derive(PartialEq)]
struct Bigram {
    score: f32,
    left: usize,
    right: usize,
    len: usize,
}

impl Eq for Bigram {}
impl Ord for Bigram {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.score
            .total_cmp(&o.score)
            .then_with(|| o.left.cmp(&self.left))
    }
}
impl PartialOrd for Bigram {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

/// A symbol in the linked list: a byte range of the escaped text.
#[derive(Clone, Copy)]
struct Sym {
    start: usize,
    len: usize,
    prev: Option<usize>,
    next: Option<usize>,
}

impl Spm {
    fn new(v: &Vocab) -> Spm {
        let ids: HashMap<Vec<u8>, u32> = v
            .tokens
            .iter()
            .enumerate()
            .map(|(i, t)| (t.as_bytes().to_vec(), i as u32))
            .collect();
        let unk = v.unk_token();
        let mut byte_tokens = [unk; 256];
        for (b, slot) in byte_tokens.iter_mut().enumerate() {
            let hex = format!("<0x{b:02X}>");
            if let Some(&id) = ids.get(hex.as_bytes()) {
                *slot = id;
            } else if let Some(&id) = ids.get([b as u8].as_slice()) {
                *slot = id;
            }
        }
        Spm {
            ids,
            scores: v.scores.clone(),
            byte_tokens,
            add_space_prefix: v.add_space_prefix.unwrap_or(true),
        }
    }

    /// `space_prefix`: put llama.cpp's leading space before the text.
    fn encode(&self, text: &str, space_prefix: bool, out: &mut Vec<u32>) {
        // llama.cpp tokenizes nothing for empty text (no lone "▁").
        if text.is_empty() {
            return;
        }
        let mut s = String::with_capacity(text.len() + 3);
        if space_prefix {
            s.push(' ');
        }
        s.push_str(text);
        let s = s.replace(' ', "\u{2581}").into_bytes();

        let mut syms: Vec<Sym> = Vec::new();
        let mut off = 0;
        while off < s.len() {
            let len = utf8_len(s[off]).min(s.len() - off);
            let i = syms.len();
            syms.push(Sym {
                start: off,
                len,
                prev: i.checked_sub(1),
                next: (off + len < s.len()).then_some(i + 1),
            });
            off += len;
        }

        let mut queue = BinaryHeap::new();
        let push =
            |queue: &mut BinaryHeap<Bigram>, syms: &[Sym], l: Option<usize>, r: Option<usize>| {
                let (Some(l), Some(r)) = (l, r) else { return };
                let (a, b) = (syms[l], syms[r]);
                let text = &s[a.start..b.start + b.len];
                if let Some(&id) = self.ids.get(text) {
                    queue.push(Bigram {
                        score: self.scores[id as usize],
                        left: l,
                        right: r,
                        len: text.len(),
                    });
                }
            };
        for i in 1..syms.len() {
            push(&mut queue, &syms, Some(i - 1), Some(i));
        }
        while let Some(bg) = queue.pop() {
            let (l, r) = (syms[bg.left], syms[bg.right]);
            // Stale entry: one side has changed since it was queued.
            if l.len == 0 || r.len == 0 || l.len + r.len != bg.len {
                continue;
            }
            syms[bg.left].len += r.len;
            syms[bg.right].len = 0;
            syms[bg.left].next = r.next;
            if let Some(n) = r.next {
                syms[n].prev = Some(bg.left);
            }
            push(&mut queue, &syms, syms[bg.left].prev, Some(bg.left));
            push(&mut queue, &syms, Some(bg.left), syms[bg.left].next);
        }

        let mut i = Some(0);
        while let Some(k) = i {
            let sym = syms[k];
            let text = &s[sym.start..sym.start + sym.len];
            // A merged symbol is always a token; a single character may not
            // be, and then falls back to its bytes.
            match self.ids.get(text) {
                Some(&id) => out.push(id),
                None => out.extend(text.iter().map(|&b| self.byte_tokens[b as usize])),
            }
            i = sym.next;
        }
    }
}

/// Length of a UTF-8 sequence from its first byte (1 for stray bytes).
fn utf8_len(b: u8) -> usize {
    match b >> 4 {
        0xC | 0xD => 2,
        0xE => 3,
        0xF => 4,
        _ => 1,
    }
}
