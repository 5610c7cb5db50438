//! GPT-2 (`GPT2LMHeadModel`): llama.cpp's `gpt2` architecture.

use super::checkpoint::Checkpoint;
use super::{file_type, general, vocab, Sink};
use anyhow::{bail, Context, Result};

/// GGUF name of a checkpoint tensor; None for the attention masks stored
/// as buffers (`attn.bias`, `attn.masked_bias`).
fn gguf_name(hf: &str) -> Option<String> {
    let hf = hf.strip_prefix("transformer.").unwrap_or(hf);
    let (stem, suffix) = hf.rsplit_once('.')?;
    if suffix != "weight" && suffix != "bias" {
        return None;
    }
    let g = match stem {
        "wte" => "token_embd".to_string(),
        "wpe" => "position_embd".to_string(),
        "ln_f" => "output_norm".to_string(),
        "lm_head" => "output".to_string(),
        _ => {
            let (bid, inner) = stem.strip_prefix("h.")?.split_once('.')?;
            let bid: usize = bid.parse().ok()?;
            let g = match inner {
                "ln_1" => "attn_norm",
                "attn.c_attn" => "attn_qkv",
                "attn.c_proj" => "attn_output",
                "ln_2" => "ffn_norm",
                "mlp.c_fc" => "ffn_up",
                "mlp.c_proj" => "ffn_down",
                _ => return None,
            };
            format!("blk.{bid}.{g}")
        }
    };
    Some(format!("{g}.{suffix}"))
}

pub(super) fn import(ckpt: &Checkpoint, sink: &mut Sink, name: &str) -> Result<usize> {
    let n_layer = ckpt.require_u64(&["n_layer", "num_hidden_layers"])? as usize;
    let dim = ckpt.require_u64(&["n_embd", "hidden_size"])?;
    {
        let w = &mut sink.w;
        general(w, "gpt2", name);
        w.meta_u32("gpt2.block_count", n_layer as u32);
        w.meta_u32(
            "gpt2.context_length",
            ckpt.require_u64(&["n_ctx", "n_positions"])? as u32,
        );
        w.meta_u32("gpt2.embedding_length", dim as u32);
        // llama.cpp writes 4 × n_embd; `n_inner`, when a config sets it, is
        // the real width (the same value for every standard GPT-2).
        let hidden = ckpt.cfg_u64(&["n_inner"]).unwrap_or(4 * dim);
        w.meta_u32("gpt2.feed_forward_length", hidden as u32);
        w.meta_u32(
            "gpt2.attention.head_count",
            ckpt.require_u64(&["n_head"])? as u32,
        );
        w.meta_f32(
            "gpt2.attention.layer_norm_epsilon",
            ckpt.cfg_f64(&["layer_norm_epsilon"]).unwrap_or(1e-5) as f32,
        );
        w.meta_u32("general.file_type", file_type(sink.matrix_type));
    }
    let vocab_size = ckpt.cfg_u64(&["vocab_size"]).map(|v| v as usize);
    let n_vocab = vocab::write_byte_level_bpe(&ckpt.dir, &mut sink.w, vocab_size, "gpt-2", false)?;

    let mut found = 0;
    for hf in ckpt.names().map(String::from).collect::<Vec<_>>() {
        let Some(g) = gguf_name(&hf) else { continue };
        let mut t = ckpt.get(&hf)?;
        // GPT-2's Conv1D layers store [in][out]; GGUF rows are outputs.
        let conv1d = [".c_attn.weight", ".c_proj.weight", ".c_fc.weight"];
        if conv1d.iter().any(|s| hf.ends_with(s)) && t.shape.len() == 2 {
            let (rows, cols) = (t.shape[0], t.shape[1]);
            let mut out = vec![0.0f32; t.data.len()];
            for r in 0..rows {
                for c in 0..cols {
                    out[c * rows + r] = t.data[r * cols + c];
                }
            }
            t.data = out;
            t.shape = vec![cols, rows];
        }
        sink.add(&g, t).with_context(|| format!("tensor {hf}"))?;
        found += 1;
    }
    if found < 4 + 12 * n_layer {
        bail!(
            "{}: only {found} of the {} GPT-2 tensors found",
            ckpt.dir.display(),
            4 + 12 * n_layer
        );
    }
    Ok(n_vocab)
}

#[cfg(test)]
mod tests {
    use super::gguf_name;

    #[test]
    fn names() {
        assert_eq!(
            gguf_name("transformer.h.1.attn.c_attn.bias").as_deref(),
            Some("blk.1.attn_qkv.bias")
        );
        assert_eq!(
            gguf_name("h.0.mlp.c_proj.weight").as_deref(),
            Some("blk.0.ffn_down.weight")
        );
        assert_eq!(
            gguf_name("wte.weight").as_deref(),
            Some("token_embd.weight")
        );
        assert_eq!(gguf_name("h.0.attn.bias"), None);
        assert_eq!(gguf_name("h.0.attn.masked_bias"), None);
    }
}
