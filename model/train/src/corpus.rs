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

/// Training variants of a question (what a person may type for the same phrasing): as written,
/// lower case, upper case, without its final '?', and `drops` copies with one word left out
/// (chosen by `rng`). Dev and test are never varied.
pub fn variants(q: &str, drops: usize, rng: &mut crate::rng::Rng) -> Vec<String> {
    let mut v = vec![q.to_string(), q.to_lowercase(), q.to_uppercase()];
    if let Some(s) = q.strip_suffix('?') {
        v.push(s.trim_end().to_string());
    }
    let words: Vec<&str> = q.split(' ').collect();
    if words.len() > 2 {
        for _ in 0..drops {
            let k = (rng.next_u64() % words.len() as u64) as usize;
            let w: Vec<&str> = words
                .iter()
                .enumerate()
                .filter(|&(i, _)| i != k)
                .map(|(_, w)| *w)
                .collect();
            v.push(w.join(" "));
        }
    }
    v.sort();
    v.dedup();
    v
}
