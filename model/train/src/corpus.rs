//! The corpus (`model/corpus/{train,dev,test}.tsv`: fact, question, answer) and its token
//! sequences: BOS, the question as the MEGA65 program and `ssnail run -p` tokenize it, then
//! the answer as the continuation (tokenized on its own, so with SentencePiece's space
//! prefix: the model writes " An FPGA computer …"), then EOS. The loss is on the answer's
//! tokens and the EOS only.

use crate::spm::{self, Piece};
use anyhow::{bail, Context, Result};
use ssnail_tokenizer::{GgufTokenizer, TokModel, Vocab};
use std::path::Path;

#[derive(Clone, Debug)]
pub struct Qa {
    pub fact: String,
    pub question: String,
    pub answer: String,
}

/// One TSV of the split; errors name the file and line.
pub fn read_tsv(path: &Path) -> Result<Vec<Qa>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read", path.display()))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if i == 0 {
            if line != "fact\tquestion\tanswer" {
                bail!(
                    "{}: the first line is not 'fact<TAB>question<TAB>answer'",
                    path.display()
                );
            }
            continue;
        }
        let f: Vec<&str> = line.split('\t').collect();
        if f.len() != 3 || f.iter().any(|s| s.is_empty()) {
            bail!("{}:{}: not three non-empty fields", path.display(), i + 1);
        }
        out.push(Qa {
            fact: f[0].into(),
            question: f[1].into(),
            answer: f[2].into(),
        });
    }
    if out.is_empty() {
        bail!("{}: no questions", path.display());
    }
    Ok(out)
}

/// The vocabulary as a GGUF would hold it (llama.cpp's SentencePiece conventions).
pub fn vocab(pieces: &[Piece]) -> Result<Vocab> {
    let find = |t: &str| pieces.iter().position(|p| p.text == t).map(|i| i as u32);
    let (Some(bos), Some(eos), Some(unk)) = (find("<s>"), find("</s>"), find("<unk>")) else {
        bail!("the SentencePiece model lacks <s>, </s> or <unk>");
    };
    if pieces[bos as usize].kind != spm::CONTROL
        || pieces[eos as usize].kind != spm::CONTROL
        || pieces[unk as usize].kind != spm::UNKNOWN
    {
        bail!("<s> and </s> must be control pieces and <unk> the unknown piece");
    }
    Ok(Vocab {
        model: TokModel::Spm,
        pre: None,
        tokens: pieces.iter().map(|p| p.text.clone()).collect(),
        scores: pieces.iter().map(|p| p.score).collect(),
        types: pieces.iter().map(|p| p.kind).collect(),
        merges: Vec::new(),
        bos_id: Some(bos),
        eos_id: Some(eos),
        unk_id: Some(unk),
        sep_id: None,
        cls_id: None,
        pad_id: None,
        add_bos: Some(true),
        add_eos: Some(false),
        add_space_prefix: Some(true),
    })
}

/// A question and answer as tokens: `ids` = BOS, question, answer, EOS; the answer (with
/// its EOS) starts at `answer_at`.
#[derive(Clone, Debug)]
pub struct Seq {
    pub ids: Vec<u32>,
    pub answer_at: usize,
}

pub struct Tok {
    pub tok: GgufTokenizer,
    pub vocab: Vocab,
}

impl Tok {
    pub fn new(vocab: Vocab) -> Result<Tok> {
        let tok = GgufTokenizer::new(vocab.clone()).map_err(anyhow::Error::msg)?;
        Ok(Tok { tok, vocab })
    }
    pub fn eos(&self) -> u32 {
        self.vocab.eos_id.expect("checked in vocab()")
    }
    /// The prompt as the program sends it: BOS and the question.
    pub fn prompt(&self, q: &str) -> Vec<u32> {
        self.tok.encode(q, true)
    }
    pub fn seq(&self, qa: &Qa) -> Seq {
        let mut ids = self.prompt(&qa.question);
        let answer_at = ids.len();
        ids.extend(self.tok.encode(&qa.answer, false));
        ids.push(self.eos());
        Seq { ids, answer_at }
    }
    /// The text of generated ids as the program prints it (SentencePiece's ▁ as a space, the
    /// answer's leading space dropped); the EOS is not text.
    pub fn text(&self, ids: &[u32]) -> String {
        let mut s = String::new();
        for &i in ids {
            if i == self.eos() {
                break;
            }
            s.push_str(&self.vocab.tokens[i as usize].replace('\u{2581}', " "));
        }
        s.strip_prefix(' ').unwrap_or(&s).to_string()
    }
}

/// How a training question is varied each time it is drawn (`augment`).
#[derive(Clone, Debug)]
pub struct Augment {
    /// Chance of each word being replaced by a word of another training phrasing of the same
    /// fact (so any word the fact's phrasings use points to it).
    pub mix: f64,
    /// Chance of one word of any training phrasing (of any fact) being put in at a random place
    /// (so a word the model has not seen with this fact does not decide the answer).
    pub insert: f64,
    /// Chance of a change of letter case: all lower, all upper, or each word capitalised (one
    /// third each).
    pub case: f64,
    /// Chance of each word being left out (never all of them; questions of two words or
    /// fewer are kept whole).
    pub drop: f64,
    /// Chance of the final '?' being taken away, or one being added where there is none.
    pub mark: f64,
}

/// The words of the training phrasings: those of each fact, and all of them.
pub struct Words {
    by_fact: std::collections::HashMap<String, Vec<String>>,
    all: Vec<String>,
}

impl Words {
    pub fn new(train: &[Qa]) -> Words {
        let mut by_fact: std::collections::HashMap<String, Vec<String>> = Default::default();
        let mut all = Vec::new();
        for q in train {
            for w in q.question.split(' ').filter(|w| !w.is_empty()) {
                by_fact
                    .entry(q.fact.clone())
                    .or_default()
                    .push(w.to_string());
                all.push(w.to_string());
            }
        }
        Words { by_fact, all }
    }
}

fn pick<'a>(v: &'a [String], rng: &mut crate::rng::Rng) -> Option<&'a str> {
    (!v.is_empty()).then(|| v[(rng.next_u64() % v.len() as u64) as usize].as_str())
}

/// A variant of a training question as a person might ask the same thing: words swapped for
/// words of the fact's other training phrasings, a stray word put in, its letter case changed,
/// words left out, the question mark dropped or added (chances in `a`, drawn from `rng`; the
/// words only from the training phrasings). Dev and test are never varied.
pub fn augment(q: &Qa, words: &Words, a: &Augment, rng: &mut crate::rng::Rng) -> String {
    let same = words
        .by_fact
        .get(&q.fact)
        .map(|v| v.as_slice())
        .unwrap_or(&[]);
    let mut ws: Vec<String> = q
        .question
        .split(' ')
        .map(|w| match rng.uniform() < a.mix {
            true => pick(same, rng).unwrap_or(w).to_string(),
            false => w.to_string(),
        })
        .collect();
    if rng.uniform() < a.insert {
        if let Some(w) = pick(&words.all, rng) {
            let at = (rng.next_u64() % (ws.len() as u64 + 1)) as usize;
            ws.insert(at, w.to_string());
        }
    }
    let mut s = ws.join(" ");
    if rng.uniform() < a.case {
        s = match rng.next_u64() % 3 {
            0 => s.to_lowercase(),
            1 => s.to_uppercase(),
            _ => s
                .split(' ')
                .map(|w| {
                    let mut c = w.chars();
                    match c.next() {
                        Some(f) => f
                            .to_uppercase()
                            .chain(c.flat_map(|c| c.to_lowercase()))
                            .collect(),
                        None => String::new(),
                    }
                })
                .collect::<Vec<String>>()
                .join(" "),
        };
    }
    let words: Vec<&str> = s.split(' ').collect();
    if words.len() > 2 && a.drop > 0.0 {
        let keep: Vec<&str> = words
            .iter()
            .filter(|_| rng.uniform() >= a.drop)
            .copied()
            .collect();
        if !keep.is_empty() {
            s = keep.join(" ");
        }
    }
    if rng.uniform() < a.mark {
        s = match s.strip_suffix('?') {
            Some(t) => t.trim_end().to_string(),
            None => format!("{s}?"),
        };
    }
    s
}
