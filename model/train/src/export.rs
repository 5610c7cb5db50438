//! The trained model as a GGUF in llama.cpp's conventions for a llama with a SentencePiece
//! vocabulary, written with the project's writer: the matrices as the Q8_0 the forward pass
//! used (`ssnail_format::ggml::quantize_native`, llama.cpp's reference quantiser), the norm
//! gains as F32.

use crate::model::{values, Model};
use anyhow::Result;
use ssnail_format::ggml::{quantize_native, GgmlType};
use ssnail_gguf::writer::GgufWriter;
use ssnail_tokenizer::Vocab;

/// llama.cpp's `LLAMA_FTYPE_MOSTLY_Q8_0`.
const FTYPE_MOSTLY_Q8_0: u32 = 7;

pub fn gguf(m: &Model, v: &Vocab, name: &str, description: &str) -> Result<Vec<u8>> {
    let c = &m.cfg;
    let mut w = GgufWriter::new();
    w.meta_str("general.architecture", "llama")
        .meta_str("general.name", name)
        .meta_str("general.description", description)
        .meta_u32("general.file_type", FTYPE_MOSTLY_Q8_0)
        .meta_u32("general.quantization_version", 2)
        .meta_u32("llama.context_length", c.ctx as u32)
        .meta_u32("llama.embedding_length", c.dim as u32)
        .meta_u32("llama.block_count", c.layers as u32)
        .meta_u32("llama.feed_forward_length", c.hidden as u32)
        .meta_u32("llama.attention.head_count", c.heads as u32)
        .meta_u32("llama.attention.head_count_kv", c.heads as u32)
        .meta_u32("llama.rope.dimension_count", c.head_dim() as u32)
        .meta_f32("llama.attention.layer_norm_rms_epsilon", c.eps)
        .meta_f32("llama.rope.freq_base", c.rope_base)
        .meta_u32("llama.vocab_size", v.tokens.len() as u32)
        .meta_str("tokenizer.ggml.model", "llama")
        .meta_strs("tokenizer.ggml.tokens", &v.tokens)
        .meta_f32s("tokenizer.ggml.scores", &v.scores)
        .meta_i32s("tokenizer.ggml.token_type", &v.types)
        .meta_u32("tokenizer.ggml.bos_token_id", v.bos_id.unwrap_or(1))
        .meta_u32("tokenizer.ggml.eos_token_id", v.eos_id.unwrap_or(2))
        .meta_u32("tokenizer.ggml.unknown_token_id", v.unk_id.unwrap_or(0))
        .meta_bool("tokenizer.ggml.add_bos_token", true)
        .meta_bool("tokenizer.ggml.add_eos_token", false)
        .meta_bool("tokenizer.ggml.add_space_prefix", true);
    let matrix = |w: &mut GgufWriter, name: &str, var: &candle_core::Var| -> Result<()> {
        let (rows, cols) = var.as_tensor().dims2()?;
        let mut bytes = Vec::new();
        quantize_native(GgmlType::Q8_0, &values(var)?, &mut bytes);
        w.tensor(name, &[cols as u64, rows as u64], GgmlType::Q8_0, bytes)?;
        Ok(())
    };
    let vector = |w: &mut GgufWriter, name: &str, var: &candle_core::Var| -> Result<()> {
        let x = values(var)?;
        let bytes = x.iter().flat_map(|v| v.to_le_bytes()).collect();
        w.tensor(name, &[x.len() as u64], GgmlType::F32, bytes)?;
        Ok(())
    };
    matrix(&mut w, "token_embd.weight", &m.embd)?;
    for (i, l) in m.layers.iter().enumerate() {
        let p = format!("blk.{i}");
        vector(&mut w, &format!("{p}.attn_norm.weight"), &l.attn_norm)?;
        matrix(&mut w, &format!("{p}.attn_q.weight"), &l.wq)?;
        matrix(&mut w, &format!("{p}.attn_k.weight"), &l.wk)?;
        matrix(&mut w, &format!("{p}.attn_v.weight"), &l.wv)?;
        matrix(&mut w, &format!("{p}.attn_output.weight"), &l.wo)?;
        vector(&mut w, &format!("{p}.ffn_norm.weight"), &l.ffn_norm)?;
        matrix(&mut w, &format!("{p}.ffn_gate.weight"), &l.gate)?;
        matrix(&mut w, &format!("{p}.ffn_up.weight"), &l.up)?;
        matrix(&mut w, &format!("{p}.ffn_down.weight"), &l.down)?;
    }
    vector(&mut w, "output_norm.weight", &m.out_norm)?;
    matrix(&mut w, "output.weight", &m.output)?;
    Ok(w.to_bytes()?)
}
