//! BERT encoders (`BertModel`): llama.cpp's `bert` architecture.

use super::checkpoint::{read_json_opt, Checkpoint};
use super::vocab::{self, SpecialVocab, CONTROL};
use super::{file_type, general, Sink};
use anyhow::{bail, Result};
use serde_json::Value;

/// HF name (after the `bert.` prefix is dropped) → GGUF name, per layer
/// where `{}` is the block number.
const LAYER_MAP: [(&str, &str); 8] = [
    ("attention.self.query", "attn_q"),
    ("attention.self.key", "attn_k"),
    ("attention.self.value", "attn_v"),
    ("attention.output.dense", "attn_output"),
    ("attention.output.LayerNorm", "attn_output_norm"),
    ("intermediate.dense", "ffn_up"),
    ("output.dense", "ffn_down"),
    ("output.LayerNorm", "layer_output_norm"),
];

const EMBED_MAP: [(&str, &str); 4] = [
    ("embeddings.word_embeddings", "token_embd"),
    ("embeddings.position_embeddings", "position_embd"),
    ("embeddings.token_type_embeddings", "token_types"),
    ("embeddings.LayerNorm", "token_embd_norm"),
];

/// GGUF name of a checkpoint tensor, None for the ones llama.cpp drops
/// (position ids, the pooler and pre-training heads).
fn gguf_name(hf: &str) -> Option<String> {
    let mut name = hf.strip_prefix("bert.").unwrap_or(hf).to_string();
    if let Some(s) = name.strip_suffix(".gamma") {
        name = format!("{s}.weight");
    } else if let Some(s) = name.strip_suffix(".beta") {
        name = format!("{s}.bias");
    }
    let (stem, suffix) = name.rsplit_once('.')?;
    if suffix != "weight" && suffix != "bias" {
        return None;
    }
    if let Some((_, g)) = EMBED_MAP.iter().find(|(h, _)| *h == stem) {
        return Some(format!("{g}.{suffix}"));
    }
    let rest = stem.strip_prefix("encoder.layer.")?;
    let (bid, inner) = rest.split_once('.')?;
    let bid: usize = bid.parse().ok()?;
    let (_, g) = LAYER_MAP.iter().find(|(h, _)| *h == inner)?;
    Some(format!("blk.{bid}.{g}.{suffix}"))
}

/// Pooling from sentence-transformers' modules.json → Pooling config
/// (llama.cpp: 1 mean, 2 CLS, 3 last token); None without one.
fn pooling_type(ckpt: &Checkpoint) -> Result<Option<u32>> {
    let Some(modules) = read_json_opt(&ckpt.dir.join("modules.json"))? else {
        return Ok(None);
    };
    let path = modules.as_array().into_iter().flatten().find_map(|m| {
        let ty = m.get("type")?.as_str()?;
        ty.ends_with("Pooling")
            .then(|| m.get("path")?.as_str().map(String::from))
            .flatten()
    });
    let Some(path) = path else { return Ok(None) };
    let cfg_path = ckpt.dir.join(&path).join("config.json");
    let Some(cfg) = read_json_opt(&cfg_path)? else {
        bail!("{}: missing (named by modules.json)", cfg_path.display());
    };
    let on = |k: &str| cfg.get(k).and_then(Value::as_bool).unwrap_or(false);
    let mode = cfg.get("pooling_mode").and_then(Value::as_str);
    Ok(Some(
        if on("pooling_mode_mean_tokens") || mode == Some("mean") {
            1
        } else if on("pooling_mode_cls_token") || mode == Some("cls") {
            2
        } else if on("pooling_mode_lasttoken") || mode == Some("lasttoken") {
            3
        } else {
            bail!(
                "{}: only mean, CLS and last-token pooling are supported",
                cfg_path.display()
            )
        },
    ))
}

pub(super) fn import(ckpt: &Checkpoint, sink: &mut Sink, name: &str) -> Result<usize> {
    let w = &mut sink.w;
    general(w, "bert", name);
    let n_layer = ckpt.require_u64(&["num_hidden_layers", "n_layer"])?;
    w.meta_u32("bert.block_count", n_layer as u32);
    w.meta_u32(
        "bert.context_length",
        ckpt.require_u64(&["max_position_embeddings", "n_positions"])? as u32,
    );
    w.meta_u32(
        "bert.embedding_length",
        ckpt.require_u64(&["hidden_size"])? as u32,
    );
    w.meta_u32(
        "bert.feed_forward_length",
        ckpt.require_u64(&["intermediate_size"])? as u32,
    );
    w.meta_u32(
        "bert.attention.head_count",
        ckpt.require_u64(&["num_attention_heads"])? as u32,
    );
    w.meta_f32(
        "bert.attention.layer_norm_epsilon",
        ckpt.cfg_f64(&["layer_norm_eps"]).unwrap_or(1e-12) as f32,
    );
    w.meta_u32("general.file_type", file_type(sink.matrix_type));
    w.meta_bool("bert.attention.causal", false);
    if let Some(p) = pooling_type(ckpt)? {
        w.meta_u32("bert.pooling_type", p);
    }

    // Vocabulary in llama.cpp's "phantom space" form: word-initial pieces get
    // U+2581, `##` continuations are stored bare, control tokens unchanged.
    let tok_json = vocab::tokenizer_json(&ckpt.dir)?;
    let vocab_size = ckpt.cfg_u64(&["vocab_size"]).map(|v| v as usize);
    let list = vocab::hf_token_list(&ckpt.dir, tok_json.as_ref(), vocab_size)?;
    let tokens: Vec<String> = list
        .tokens
        .iter()
        .zip(&list.types)
        .map(|(t, &ty)| {
            if ty == CONTROL {
                t.clone()
            } else if let Some(rest) = t.strip_prefix("##") {
                rest.to_string()
            } else {
                format!("\u{2581}{t}")
            }
        })
        .collect();
    let w = &mut sink.w;
    w.meta_u32(
        "tokenizer.ggml.token_type_count",
        ckpt.cfg_u64(&["type_vocab_size"]).unwrap_or(1) as u32,
    );
    w.meta_str("tokenizer.ggml.model", "bert");
    // llama.cpp names the pre-tokenizer by hashing a test encoding; every
    // uncased BERT WordPiece tokenizer (bge, MiniLM, bert-base-uncased)
    // hashes to "bert-bge", and the pre-tokenizer is the same for cased ones.
    w.meta_str("tokenizer.ggml.pre", "bert-bge");
    w.meta_strs("tokenizer.ggml.tokens", &tokens);
    w.meta_i32s("tokenizer.ggml.token_type", &list.types);
    let mut special = SpecialVocab::load(&ckpt.dir, tok_json.as_ref(), tokens.len(), false)?;
    if tok_json.is_none() {
        // Without tokenizer.json, gguf-py finds no special ids; take them from
        // the vocabulary so the GGUF still names [CLS], [SEP], [UNK].
        for (kind, text) in [
            ("unk", "[UNK]"),
            ("sep", "[SEP]"),
            ("pad", "[PAD]"),
            ("cls", "[CLS]"),
            ("mask", "[MASK]"),
        ] {
            if special.id(kind).is_none() {
                if let Some(id) = list.tokens.iter().position(|t| t == text) {
                    special.ids.push((kind.to_string(), id as u32));
                }
            }
        }
    }
    special.write(w);

    let mut n = 0;
    for hf in ckpt.names().map(String::from).collect::<Vec<_>>() {
        if let Some(g) = gguf_name(&hf) {
            sink.add(&g, ckpt.get(&hf)?)?;
            n += 1;
        }
    }
    let need = 5 + 16 * n_layer as usize;
    if n < need - 2 {
        bail!(
            "{}: only {n} of the {need} BERT tensors found; is this a BertModel checkpoint?",
            ckpt.dir.display()
        );
    }
    Ok(tokens.len())
}

#[cfg(test)]
mod tests {
    use super::gguf_name;

    #[test]
    fn names_follow_llama_cpp() {
        assert_eq!(
            gguf_name("embeddings.word_embeddings.weight").as_deref(),
            Some("token_embd.weight")
        );
        assert_eq!(
            gguf_name("bert.embeddings.LayerNorm.gamma").as_deref(),
            Some("token_embd_norm.weight")
        );
        assert_eq!(
            gguf_name("encoder.layer.3.attention.output.LayerNorm.bias").as_deref(),
            Some("blk.3.attn_output_norm.bias")
        );
        assert_eq!(
            gguf_name("encoder.layer.0.output.dense.weight").as_deref(),
            Some("blk.0.ffn_down.weight")
        );
        assert_eq!(gguf_name("embeddings.position_ids"), None);
        assert_eq!(gguf_name("pooler.dense.weight"), None);
        assert_eq!(gguf_name("cls.predictions.bias"), None);
    }
}
