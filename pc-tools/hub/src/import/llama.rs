//! Llama-architecture decoders (`LlamaForCausalLM`: Llama, TinyLlama,
//! SmolLM, llama2.c exports): llama.cpp's `llama` architecture.

use super::checkpoint::Checkpoint;
use super::vocab::{self, SpecialVocab, BYTE, CONTROL, NORMAL, UNKNOWN, UNUSED, USER_DEFINED};
use super::{file_type, general, Sink};
use anyhow::{bail, Context, Result};
use serde_json::Value;

const LAYER_MAP: [(&str, &str); 9] = [
    ("input_layernorm", "attn_norm"),
    ("self_attn.q_proj", "attn_q"),
    ("self_attn.k_proj", "attn_k"),
    ("self_attn.v_proj", "attn_v"),
    ("self_attn.o_proj", "attn_output"),
    ("post_attention_layernorm", "ffn_norm"),
    ("mlp.gate_proj", "ffn_gate"),
    ("mlp.up_proj", "ffn_up"),
    ("mlp.down_proj", "ffn_down"),
];

fn gguf_name(hf: &str) -> Option<String> {
    let hf = hf.strip_prefix("model.").unwrap_or(hf);
    let (stem, suffix) = hf.rsplit_once('.')?;
    if suffix != "weight" && suffix != "bias" {
        return None;
    }
    let g = match stem {
        "embed_tokens" => "token_embd".to_string(),
        "norm" => "output_norm".to_string(),
        "lm_head" => "output".to_string(),
        _ => {
            let rest = stem.strip_prefix("layers.")?;
            let (bid, inner) = rest.split_once('.')?;
            let bid: usize = bid.parse().ok()?;
            let (_, g) = LAYER_MAP.iter().find(|(h, _)| *h == inner)?;
            format!("blk.{bid}.{g}")
        }
    };
    Some(format!("{g}.{suffix}"))
}

/// Reorder the rows of a Q or K projection from Hugging Face's rotate-half
/// RoPE layout to llama.cpp's interleaved-pair layout: within each head of
/// `head_dim` rows, row `j·half + i` (j = 0, 1) moves to row `2i + j`.
pub fn permute_qk(data: &[f32], rows: usize, cols: usize, n_head: usize) -> Vec<f32> {
    let head_dim = rows / n_head;
    let half = head_dim / 2;
    let mut out = vec![0.0f32; data.len()];
    for h in 0..n_head {
        for j in 0..2 {
            for i in 0..half {
                let src = h * head_dim + j * half + i;
                let dst = h * head_dim + 2 * i + j;
                out[dst * cols..(dst + 1) * cols]
                    .copy_from_slice(&data[src * cols..(src + 1) * cols]);
            }
        }
    }
    out
}

/// The tokenizer: `tokenizer.model` (SentencePiece, model "llama") when
/// present, else `tokenizer.json` (byte-level BPE, model "gpt2").
fn write_vocab(ckpt: &Checkpoint, sink: &mut Sink, vocab_size: usize) -> Result<usize> {
    let dir = &ckpt.dir;
    let tok_json = vocab::tokenizer_json(dir)?;
    let spm_path = dir.join("tokenizer.model");
    let w = &mut sink.w;
    let n;
    if spm_path.is_file() {
        let pieces = vocab::sentencepiece(&spm_path)?;
        n = vocab_size.max(1);
        let mut tokens: Vec<String> = (0..n).map(|i| format!("[PAD{i}]")).collect();
        let mut scores = vec![-10000.0f32; n];
        let mut types = vec![UNUSED; n];
        for (id, (piece, score, ty)) in pieces.into_iter().enumerate().take(n) {
            tokens[id] = piece;
            scores[id] = score;
            // As llama.cpp, which asks the SentencePiece processor only
            // about unknown, control, unused and byte pieces: user-defined
            // pieces count as normal.
            types[id] = match ty {
                2 => UNKNOWN,
                3 => CONTROL,
                5 => UNUSED,
                6 => BYTE,
                _ => NORMAL,
            };
        }
        if let Some(added) = super::checkpoint::read_json_opt(&dir.join("added_tokens.json"))? {
            for (t, id) in added.as_object().into_iter().flatten() {
                if let Some(id) = id.as_u64().map(|i| i as usize).filter(|&i| i < n) {
                    tokens[id] = t.clone();
                    scores[id] = -1000.0;
                    types[id] = USER_DEFINED;
                }
            }
        }
        w.meta_str("tokenizer.ggml.model", "llama");
        w.meta_str("tokenizer.ggml.pre", "default");
        w.meta_strs("tokenizer.ggml.tokens", &tokens);
        w.meta_f32s("tokenizer.ggml.scores", &scores);
        w.meta_i32s("tokenizer.ggml.token_type", &types);
        let special = SpecialVocab::load(dir, tok_json.as_ref(), n, false)?;
        special.write(w);
    } else if let Some(tok) = tok_json.as_ref().filter(|t| is_sentencepiece_bpe(t)) {
        n = write_hf_sentencepiece(ckpt, tok, sink, vocab_size)?;
    } else if tok_json.is_some() {
        // llama.cpp names the pre-tokenizer by a hash of a test encoding;
        // here the known families by vocabulary size. SmolLM's (and
        // Granite-small's) 49152-token vocabularies add no BOS, as there.
        let pre = match vocab_size {
            49152 => "smollm",
            128256 => "llama-bpe",
            _ => "gpt-2",
        };
        n = vocab::write_byte_level_bpe(dir, w, Some(vocab_size), pre, vocab_size == 49152)?;
    } else {
        bail!("{}: no tokenizer.model or tokenizer.json", dir.display());
    }
    Ok(n)
}

/// A tokenizer.json converted from SentencePiece (BPE with byte fallback),
/// as Llama 2, TinyLlama and llama2.c ports ship without tokenizer.model.
fn is_sentencepiece_bpe(tok: &Value) -> bool {
    let model = tok.get("model");
    model.and_then(|m| m.get("type")).and_then(Value::as_str) == Some("BPE")
        && model
            .and_then(|m| m.get("byte_fallback"))
            .and_then(Value::as_bool)
            == Some(true)
}

/// llama.cpp's `LlamaHfVocab`: model "llama", `<0xHH>` pieces typed byte,
/// special tokens control, added tokens past the base vocabulary
/// user-defined. Scores differ on purpose: llama.cpp writes -1000 for every
/// token, which leaves a SentencePiece tokenizer (llama.cpp's or the
/// image's, both merging the highest score first) without a merge order; we
/// score each token by the rank of the merge that makes it (-rank), which
/// is the order SentencePiece's own BPE scores encode.
fn write_hf_sentencepiece(
    ckpt: &Checkpoint,
    tok: &Value,
    sink: &mut Sink,
    vocab_size: usize,
) -> Result<usize> {
    let dir = &ckpt.dir;
    let list = vocab::hf_token_list(dir, Some(tok), Some(vocab_size))?;
    let n = list.tokens.len();
    let base = tok
        .get("model")
        .and_then(|m| m.get("vocab"))
        .and_then(Value::as_object)
        .map(|v| v.len())
        .unwrap_or(n);
    let mut special = SpecialVocab::load(dir, Some(tok), n, false)?;
    let declared: Vec<u32> = special.ids.iter().map(|(_, id)| *id).collect();
    let is_byte = |t: &str| {
        t.len() == 6
            && t.starts_with("<0x")
            && t.ends_with('>')
            && u8::from_str_radix(&t[3..5], 16).is_ok()
    };
    let mut types = Vec::with_capacity(n);
    for (id, (t, &ty)) in list.tokens.iter().zip(&list.types).enumerate() {
        types.push(if is_byte(t) {
            BYTE
        } else if ty == CONTROL || declared.contains(&(id as u32)) {
            CONTROL
        } else if ty == USER_DEFINED && id >= base {
            USER_DEFINED
        } else if ty == UNUSED {
            UNUSED
        } else {
            NORMAL
        });
    }
    let index: std::collections::HashMap<&str, usize> = list
        .tokens
        .iter()
        .enumerate()
        .map(|(i, t)| (t.as_str(), i))
        .collect();
    let mut scores = vec![-1000.0f32; n];
    let merges = tok
        .get("model")
        .and_then(|m| m.get("merges"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for (rank, m) in merges.iter().enumerate() {
        let (a, b) = match m {
            Value::String(s) => match s.split_once(' ') {
                Some((a, b)) => (a.to_string(), b.to_string()),
                None => continue,
            },
            Value::Array(p) if p.len() == 2 => (
                p[0].as_str().unwrap_or_default().to_string(),
                p[1].as_str().unwrap_or_default().to_string(),
            ),
            _ => continue,
        };
        if let Some(&id) = index.get(format!("{a}{b}").as_str()) {
            if scores[id] == -1000.0 {
                scores[id] = -(rank as f32);
            }
        }
    }
    // Single characters are never made by a merge; they score 0.
    for (id, t) in list.tokens.iter().enumerate() {
        if types[id] == NORMAL && t.chars().count() == 1 {
            scores[id] = 0.0;
        }
    }
    let w = &mut sink.w;
    w.meta_str("tokenizer.ggml.model", "llama");
    w.meta_str("tokenizer.ggml.pre", "default");
    w.meta_strs("tokenizer.ggml.tokens", &list.tokens);
    w.meta_f32s("tokenizer.ggml.scores", &scores);
    w.meta_i32s("tokenizer.ggml.token_type", &types);
    special.merges.clear();
    special.write(w);
    Ok(n)
}

pub(super) fn import(ckpt: &Checkpoint, sink: &mut Sink, name: &str) -> Result<usize> {
    let n_layer = ckpt.require_u64(&["num_hidden_layers", "n_layer"])? as usize;
    let dim = ckpt.require_u64(&["hidden_size", "dim"])? as usize;
    let n_head = ckpt.require_u64(&["num_attention_heads", "n_heads"])? as usize;
    let n_kv_head = ckpt
        .cfg_u64(&["num_key_value_heads", "n_kv_heads"])
        .unwrap_or(n_head as u64) as usize;
    let vocab_size = ckpt.require_u64(&["vocab_size"])? as usize;
    let head_dim = ckpt
        .cfg_u64(&["head_dim"])
        .map(|v| v as usize)
        .unwrap_or(dim / n_head);
    if head_dim * n_head != dim || !head_dim.is_multiple_of(2) {
        bail!(
            "{}: head size {head_dim} × {n_head} heads does not match hidden_size {dim}",
            ckpt.dir.join("config.json").display()
        );
    }
    {
        let w = &mut sink.w;
        general(w, "llama", name);
        w.meta_u32("llama.block_count", n_layer as u32);
        if let Some(ctx) = ckpt.cfg_u64(&["max_position_embeddings", "n_ctx", "max_seq_len"]) {
            w.meta_u32("llama.context_length", ctx as u32);
        }
        w.meta_u32("llama.embedding_length", dim as u32);
        w.meta_u32(
            "llama.feed_forward_length",
            ckpt.require_u64(&["intermediate_size", "hidden_dim"])? as u32,
        );
        w.meta_u32("llama.attention.head_count", n_head as u32);
        w.meta_u32("llama.attention.head_count_kv", n_kv_head as u32);
        let theta = ckpt
            .config
            .get("rope_parameters")
            .and_then(|r| r.get("rope_theta"))
            .and_then(Value::as_f64)
            .or_else(|| ckpt.cfg_f64(&["rope_theta"]));
        if let Some(theta) = theta {
            w.meta_f32("llama.rope.freq_base", theta as f32);
        }
        w.meta_f32(
            "llama.attention.layer_norm_rms_epsilon",
            ckpt.cfg_f64(&["rms_norm_eps", "norm_eps"]).unwrap_or(1e-6) as f32,
        );
        w.meta_u32("general.file_type", file_type(sink.matrix_type));
        w.meta_u32("llama.vocab_size", vocab_size as u32);
        w.meta_u32("llama.rope.dimension_count", head_dim as u32);
    }
    let n_vocab = write_vocab(ckpt, sink, vocab_size)?;

    let mut found = 0;
    for hf in ckpt.names().map(String::from).collect::<Vec<_>>() {
        let Some(g) = gguf_name(&hf) else { continue };
        let mut t = ckpt.get(&hf)?;
        let heads = if hf.contains("q_proj.") {
            Some(n_head)
        } else if hf.contains("k_proj.") {
            Some(n_kv_head)
        } else {
            None
        };
        if let Some(h) = heads {
            // The permutation moves whole heads of head_dim rows.
            if t.shape.len() != 2 || t.shape[0] != h * head_dim {
                bail!(
                    "{}: tensor {hf} has shape {:?}, expected {h} heads × {head_dim} rows",
                    ckpt.dir.display(),
                    t.shape
                );
            }
            let (rows, cols) = (t.shape[0], t.shape[1]);
            t.data = permute_qk(&t.data, rows, cols, h);
        }
        sink.add(&g, t).with_context(|| format!("tensor {hf}"))?;
        found += 1;
    }
    if found < 2 + 9 * n_layer {
        bail!(
            "{}: only {found} of the {} llama tensors found",
            ckpt.dir.display(),
            2 + 9 * n_layer
        );
    }
    Ok(n_vocab)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutation_interleaves_the_halves_of_each_head() {
        // 2 heads of 4 rows, 1 column: rows [a0 a1 b0 b1] per head (halves a, b).
        let data: Vec<f32> = (0..8).map(|v| v as f32).collect();
        assert_eq!(
            permute_qk(&data, 8, 1, 2),
            [0.0, 2.0, 1.0, 3.0, 4.0, 6.0, 5.0, 7.0]
        );
    }

    #[test]
    fn names() {
        assert_eq!(
            gguf_name("model.layers.2.self_attn.k_proj.weight").as_deref(),
            Some("blk.2.attn_k.weight")
        );
        assert_eq!(
            gguf_name("lm_head.weight").as_deref(),
            Some("output.weight")
        );
        assert_eq!(
            gguf_name("model.layers.0.self_attn.rotary_emb.inv_freq"),
            None
        );
    }
}
