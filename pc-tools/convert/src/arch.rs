//! Per-architecture payload layout (§1.8 order), scratch (§1.9) and the
//! script's addresses; the format each matrix is stored in (§4.2, §4.3).

use crate::layout::{Content, Layout, Scratch};
use crate::model::{Hparams, Tensors};
use crate::script::{self, Common, DecoderScratch, W};
use crate::{ConvertError, Core, Options, Policy, Stored};
use ssnail_format::dequant::can_dequantize;
use ssnail_format::ggml::GgmlType;
use ssnail_format::image::{ADDRESS_END, OUTPUT_AREA, PAYLOAD_BASE};
use ssnail_format::isa::{AttnBlock, Instr, KV_F16, KV_F32};
use ssnail_gguf::{Gguf, TensorInfo};

/// What an architecture's layout hands back to the image.
pub(crate) struct ArchOut {
    pub script: Vec<Instr>,
    /// `H_OUTPUT` and `H_OUTDIM`.
    pub output: u32,
    pub out_dim: u32,
    pub scratch_end: u64,
}

/// The format the policy asks for a tensor (§4.3).
fn asked(t: &TensorInfo, policy: Policy, fallback: GgmlType) -> GgmlType {
    match policy {
        Policy::Keep if t.ty.is_native() => t.ty,
        Policy::Keep => fallback,
        Policy::Mixed if matches!(t.name.as_str(), "token_embd.weight" | "output.weight") => {
            GgmlType::Q4_0
        }
        Policy::Mixed => GgmlType::Q8_0,
        Policy::All(f) => f,
        Policy::Auto => unreachable!("auto is resolved before formats are chosen"),
    }
}

/// The format the policy asks for and the one used (F16 when the row of
/// `cols` — the stored row, padded or not — is not whole blocks of the
/// asked format), with the reason.
fn choose(
    g: &Gguf,
    t: &TensorInfo,
    policy: Policy,
    fallback: GgmlType,
    cols: usize,
) -> Result<(GgmlType, Option<String>), ConvertError> {
    let asked = asked(t, policy, fallback);
    let (dst, why) = if !cols.is_multiple_of(asked.block_len()) {
        (
            GgmlType::F16,
            Some(format!(
                "stored as F16 instead of {}: rows of {cols} are not a multiple of its {}-element block",
                asked.name(),
                asked.block_len()
            )),
        )
    } else {
        (asked, None)
    };
    let (_, src_cols) = t.rows_cols();
    if dst != t.ty || cols != src_cols {
        if !can_dequantize(t.ty) {
            return Err(ConvertError::model(
                g,
                format!(
                    "tensor {} has type {}, which the converter cannot read",
                    t.name,
                    t.ty.name()
                ),
            ));
        }
        if src_cols % t.ty.block_len() != 0 {
            return Err(ConvertError::model(
                g,
                format!(
                    "tensor {}: rows of {src_cols} are not whole {} blocks",
                    t.name,
                    t.ty.name()
                ),
            ));
        }
    }
    Ok((dst, why))
}

/// Builds one policy's layout: blobs in §1.8 order, scratch, script, header.
pub(crate) struct Builder<'a, 'o> {
    pub g: &'a Gguf,
    pub opts: &'o Options,
    pub policy: Policy,
    pub lay: Layout<'a>,
    pub stored: Vec<Stored>,
    pub hp: &'o Hparams,
    pub ctx: u32,
    /// `tokenizer.ggml.eos_token_id` as stored (defaults differ per architecture).
    pub eos: Option<u32>,
    /// Report lines for what the layout did beyond the policy.
    pub notes: Vec<String>,
}

impl<'a, 'o> Builder<'a, 'o> {
    pub fn matrix(&mut self, t: &'a TensorInfo) -> Result<W, ConvertError> {
        let (rows, cols) = t.rows_cols();
        self.matrix_padded(t, rows, cols)
    }

    /// A matrix stored as `rows` × `cols`, at least its own shape: the
    /// added rows and the added columns of every row are zeros (§4.4).
    pub fn matrix_padded(
        &mut self,
        t: &'a TensorInfo,
        rows: usize,
        cols: usize,
    ) -> Result<W, ConvertError> {
        self.matrix_placed(t, rows, cols, false)
    }

    /// As `matrix_padded`; with `after`, right after the previous blob with
    /// no alignment, so that its rows continue that matrix's (§1.8).
    pub fn matrix_placed(
        &mut self,
        t: &'a TensorInfo,
        rows: usize,
        cols: usize,
        after: bool,
    ) -> Result<W, ConvertError> {
        let (dst, instead) = choose(self.g, t, self.policy, self.opts.fallback, cols)?;
        let row_bytes = dst.row_bytes(cols);
        let len = rows * row_bytes;
        let content = Content::Matrix { t, dst, rows, cols };
        let addr = if after {
            self.lay.place_after(&t.name, len, content)
        } else {
            self.lay.place(&t.name, len, content)
        };
        self.stored.push(Stored {
            name: t.name.clone(),
            src: t.ty,
            dst,
            bytes: len,
            elements: t.n_elements(),
            matrix: true,
            instead,
        });
        Ok(W {
            addr,
            fmt: dst as u8,
            row_bytes: row_bytes as u32,
        })
    }

    /// 1-D tensors as f32, back to back (e.g. gain then bias).
    pub fn vectors(&mut self, ts: &[&'a TensorInfo]) -> Result<u32, ConvertError> {
        let mut len = 0;
        for t in ts {
            if t.ty != GgmlType::F32 && !can_dequantize(t.ty) {
                return Err(ConvertError::model(
                    self.g,
                    format!(
                        "tensor {} has type {}, which the converter cannot read",
                        t.name,
                        t.ty.name()
                    ),
                ));
            }
            len += 4 * t.n_elements() as usize;
            self.stored.push(Stored {
                name: t.name.clone(),
                src: t.ty,
                dst: GgmlType::F32,
                bytes: 4 * t.n_elements() as usize,
                elements: t.n_elements(),
                matrix: false,
                instead: None,
            });
        }
        let name = ts
            .iter()
            .map(|t| t.name.as_str())
            .collect::<Vec<_>>()
            .join("+");
        Ok(self.lay.place(&name, len, Content::Vectors(ts.to_vec())))
    }

    fn common(&self, base: u32) -> Common {
        Common {
            base,
            ctx: self.ctx,
            dim: self.hp.dim,
            hidden: self.hp.hidden,
            eps_bits: self.hp.eps.to_bits(),
            kv_f16: self.opts.kv_f16,
            all_logits: self.opts.all_logits,
        }
    }

    /// Bytes per KV-cache element.
    fn esz(&self) -> u64 {
        if self.opts.kv_f16 {
            2
        } else {
            4
        }
    }

    fn kv_format(&self) -> u32 {
        if self.opts.kv_f16 {
            KV_F16
        } else {
            KV_F32
        }
    }

    /// The software core's padded hidden size (§4.4): `hidden` rounded up
    /// to whole 32-element blocks when the image is made for the software
    /// core and `ffn_down` would be stored in a block format; else `hidden`.
    fn padded_hidden(&self, ffn_down: &TensorInfo) -> u32 {
        let hidden = self.hp.hidden;
        let fmt = asked(ffn_down, self.policy, self.opts.fallback);
        if self.opts.core == Core::Soft && fmt.block_len() > 1 {
            hidden.next_multiple_of(fmt.block_len() as u32)
        } else {
            hidden
        }
    }

    pub fn bytes(&mut self, name: &str, b: Vec<u8>) -> u32 {
        let len = b.len();
        self.lay.place(name, len, Content::Bytes(b))
    }
}

/// The script, unless the layout already runs past the 28-bit address
/// space (such a plan only serves the too-big message, and address
/// arithmetic in the script could overflow).
fn emit_within_address_space(scratch_end: u64, emit: impl FnOnce() -> Vec<Instr>) -> Vec<Instr> {
    if scratch_end <= ADDRESS_END {
        emit()
    } else {
        Vec::new()
    }
}

/// Two tensors with the same type, shape and bytes: llama.cpp's
/// `convert-llama2c-to-ggml` writes a tied classifier as such a copy.
fn same_tensor(g: &Gguf, a: &TensorInfo, b: &TensorInfo) -> bool {
    a.ty == b.ty && a.shape == b.shape && g.data(a) == g.data(b)
}

fn blk(i: u32, s: &str) -> String {
    format!("blk.{i}.{s}")
}

/// Position tables must cover the context (the script indexes them by position).
fn check_positions(g: &Gguf, t: &TensorInfo, ctx: u32) -> Result<(), ConvertError> {
    let rows = t.rows_cols().0 as u32;
    if rows < ctx {
        return Err(ConvertError::options(
            g,
            format!(
                "context {ctx} is longer than the {rows} positions of {} (--ctx {rows} at most)",
                t.name
            ),
        ));
    }
    Ok(())
}

pub(crate) fn llama<'a>(b: &mut Builder<'a, '_>, code: u32) -> Result<ArchOut, ConvertError> {
    let (g, hp, ctx) = (b.g, b.hp, b.ctx);
    let tn = Tensors { g };
    let (dim, hidden, l) = (hp.dim, hp.hidden, hp.n_layers);
    let (esz, kv_format) = (b.esz(), b.kv_format());
    let mut attn_blocks = Vec::new();
    let (hd, kvd) = (hp.head_dim, hp.kv_dim);
    let embd_t = tn.get("token_embd.weight", dim, Some(hp.vocab_rows))?;
    let embd = b.matrix(embd_t)?;
    // The software core's FFN width (§4.4): down gets zero columns; gate and
    // up keep their rows, and the script zeroes the activations' tail once
    // a job (a COPY from a blob of zeros), which no instruction writes.
    let hidden_p = b.padded_hidden(tn.get(&blk(0, "ffn_down.weight"), hidden, Some(dim))?);
    if hidden_p != hidden {
        b.notes.push(format!(
            "ffn_down: hidden {hidden} padded with zeros to {hidden_p} (whole 32-element blocks for the software core; ffn_gate and ffn_up keep {hidden} rows, the script zeroes the tail)"
        ));
    }
    let mut layers = Vec::new();
    for i in 0..l {
        let an = b.vectors(&[tn.get(&blk(i, "attn_norm.weight"), dim, None)?])?;
        let fnm = b.vectors(&[tn.get(&blk(i, "ffn_norm.weight"), dim, None)?])?;
        let mut w = Vec::new();
        // attn_k's rows right after attn_q's and ffn_up's after ffn_gate's
        // (no alignment between): one GEMV makes q and k, or gate and up (§3.7).
        for (name, cols, rows, cols_p, rows_p, after) in [
            ("attn_q.weight", dim, dim, dim, dim, false),
            ("attn_k.weight", dim, kvd, dim, kvd, true),
            ("attn_v.weight", dim, kvd, dim, kvd, false),
            ("attn_output.weight", dim, dim, dim, dim, false),
            ("ffn_gate.weight", dim, hidden, dim, hidden, false),
            ("ffn_up.weight", dim, hidden, dim, hidden, true),
            ("ffn_down.weight", hidden, dim, hidden_p, dim, false),
        ] {
            let t = tn.get(&blk(i, name), cols, Some(rows))?;
            w.push(b.matrix_placed(t, rows_p as usize, cols_p as usize, after)?);
        }
        let w: [W; 7] = w.try_into().expect("seven matrices");
        layers.push(([an, fnm], w));
    }
    let output_norm = b.vectors(&[tn.get("output_norm.weight", dim, None)?])?;
    let classifier = match tn.optional("output.weight", dim, Some(hp.vocab_rows))? {
        Some(t) if b.opts.core == Core::Soft && same_tensor(g, t, embd_t) => {
            b.notes.push(
                "output.weight: the same values as token_embd.weight, stored once (the classifier reads the embedding)".into(),
            );
            embd
        }
        Some(t) => b.matrix(t)?,
        None => embd,
    };
    let rope = b.lay.place(
        "rope table",
        ctx as usize * hd as usize * 4,
        Content::Rope {
            ctx,
            head_dim: hd,
            base: hp.rope_base,
        },
    );
    for _ in 0..l {
        attn_blocks.push(b.bytes("attention block", vec![0; 32]));
    }
    let ffn_tail_zeros = (hidden_p != hidden).then(|| {
        b.bytes(
            "zeros for hb's tail",
            vec![0; 4 * (hidden_p - hidden) as usize],
        )
    });
    let mut s = Scratch::new(PAYLOAD_BASE as u64 + b.lay.payload_len());
    // q and kscr in one allocation, and gate's and up's outputs in one, so
    // that one GEMV can make each pair (spec §1.9, §3.7).
    let (x, xb) = (s.alloc(4 * dim as u64), s.alloc(4 * dim as u64));
    let q = s.alloc(4 * (dim + kvd) as u64);
    let att = s.alloc(4 * dim as u64);
    let gate_up = s.alloc(8 * hidden as u64);
    let sc = DecoderScratch {
        x,
        xb,
        q,
        att,
        kscr: q + 4 * dim,
        hb: s.alloc(4 * hidden_p as u64),
        logits: s.alloc(4 * hp.vocab_rows as u64),
    };
    let kc: Vec<u32> = (0..l)
        .map(|_| s.alloc(esz * ctx as u64 * kvd as u64))
        .collect();
    let vc: Vec<u32> = (0..l)
        .map(|_| s.alloc(esz * ctx as u64 * kvd as u64))
        .collect();
    let scratch_end = s.end();
    let m = script::Llama {
        c: Common {
            hidden: hidden_p,
            ..b.common(code)
        },
        eos: b.eos.unwrap_or(2),
        head_dim: hd,
        kv_dim: kvd,
        vocab: hp.vocab_rows,
        embd,
        layers: layers
            .iter()
            .enumerate()
            .map(|(i, (norms, w))| script::LlamaLayer {
                attn_norm: norms[0],
                ffn_norm: norms[1],
                wq: w[0],
                wk: w[1],
                wv: w[2],
                wo: w[3],
                w1: w[4],
                w3: w[5],
                w2: w[6],
                attn_block: attn_blocks[i],
                k_cache: kc[i],
                v_cache: vc[i],
            })
            .collect(),
        output_norm,
        classifier,
        rope,
        s: sc,
        gate_up,
        ffn_rows: hidden,
        ffn_tail_zeros,
    };
    for i in 0..l as usize {
        let ab = AttnBlock {
            k_cache: kc[i],
            v_cache: vc[i],
            n_heads: hp.n_heads,
            n_kv_heads: hp.n_kv_heads,
            head_dim: hd,
            kv_format,
        };
        b.lay.set_bytes(attn_blocks[i], ab.encode().to_vec());
    }
    let script = emit_within_address_space(scratch_end, || script::llama(&m));
    let output = sc.logits;
    let out_dim = hp.vocab_rows;
    Ok(ArchOut {
        script,
        output,
        out_dim,
        scratch_end,
    })
}

pub(crate) fn gpt2<'a>(b: &mut Builder<'a, '_>, code: u32) -> Result<ArchOut, ConvertError> {
    let (g, hp, ctx) = (b.g, b.hp, b.ctx);
    let tn = Tensors { g };
    let (dim, hidden, l) = (hp.dim, hp.hidden, hp.n_layers);
    let (esz, kv_format) = (b.esz(), b.kv_format());
    let mut attn_blocks = Vec::new();
    let wte = b.matrix(tn.get("token_embd.weight", dim, Some(hp.vocab_rows))?)?;
    let pe = tn.table("position_embd.weight", dim)?;
    check_positions(g, pe, ctx)?;
    let wpe = b.matrix(pe)?;
    let mut layers = Vec::new();
    for i in 0..l {
        let ln1 = b.vectors(&[
            tn.get(&blk(i, "attn_norm.weight"), dim, None)?,
            tn.get(&blk(i, "attn_norm.bias"), dim, None)?,
        ])?;
        let ln2 = b.vectors(&[
            tn.get(&blk(i, "ffn_norm.weight"), dim, None)?,
            tn.get(&blk(i, "ffn_norm.bias"), dim, None)?,
        ])?;
        let qkv = b.matrix(tn.get(&blk(i, "attn_qkv.weight"), dim, Some(3 * dim))?)?;
        let qkv_bias = b.vectors(&[tn.get(&blk(i, "attn_qkv.bias"), 3 * dim, None)?])?;
        let wo = b.matrix(tn.get(&blk(i, "attn_output.weight"), dim, Some(dim))?)?;
        let bo = b.vectors(&[tn.get(&blk(i, "attn_output.bias"), dim, None)?])?;
        let wup = b.matrix(tn.get(&blk(i, "ffn_up.weight"), dim, Some(hidden))?)?;
        let bup = b.vectors(&[tn.get(&blk(i, "ffn_up.bias"), hidden, None)?])?;
        let wdn = b.matrix(tn.get(&blk(i, "ffn_down.weight"), hidden, Some(dim))?)?;
        let bdn = b.vectors(&[tn.get(&blk(i, "ffn_down.bias"), dim, None)?])?;
        layers.push(script::Gpt2Layer {
            ln1,
            ln2,
            qkv,
            qkv_bias,
            wo,
            bo,
            wup,
            bup,
            wdn,
            bdn,
            attn_block: 0,
            k_cache: 0,
            v_cache: 0,
        });
    }
    let lnf = b.vectors(&[
        tn.get("output_norm.weight", dim, None)?,
        tn.get("output_norm.bias", dim, None)?,
    ])?;
    let classifier = match tn.optional("output.weight", dim, Some(hp.vocab_rows))? {
        Some(t) => b.matrix(t)?,
        None => wte,
    };
    for _ in 0..l {
        attn_blocks.push(b.bytes("attention block", vec![0; 32]));
    }
    let mut s = Scratch::new(PAYLOAD_BASE as u64 + b.lay.payload_len());
    let d4 = 4 * dim as u64;
    let (x, xb, q, att, tmp, kscr, vscr) = (
        s.alloc(d4),
        s.alloc(d4),
        s.alloc(d4),
        s.alloc(d4),
        s.alloc(d4),
        s.alloc(d4),
        s.alloc(d4),
    );
    let hb = s.alloc(4 * hidden as u64);
    let logits = s.alloc(4 * hp.vocab_rows as u64);
    let kc: Vec<u32> = (0..l)
        .map(|_| s.alloc(esz * ctx as u64 * dim as u64))
        .collect();
    let vc: Vec<u32> = (0..l)
        .map(|_| s.alloc(esz * ctx as u64 * dim as u64))
        .collect();
    let scratch_end = s.end();
    for (i, ly) in layers.iter_mut().enumerate() {
        ly.attn_block = attn_blocks[i];
        ly.k_cache = kc[i];
        ly.v_cache = vc[i];
        let ab = AttnBlock {
            k_cache: kc[i],
            v_cache: vc[i],
            n_heads: hp.n_heads,
            n_kv_heads: hp.n_heads,
            head_dim: hp.head_dim,
            kv_format,
        };
        b.lay.set_bytes(attn_blocks[i], ab.encode().to_vec());
    }
    let m = script::Gpt2 {
        c: b.common(code),
        eos: b.eos.unwrap_or(50256),
        vocab: hp.vocab_rows,
        wte,
        wpe,
        layers,
        lnf,
        classifier,
        s: DecoderScratch {
            x,
            xb,
            q,
            att,
            kscr,
            hb,
            logits,
        },
        tmp,
        vscr,
    };
    let script = emit_within_address_space(scratch_end, || script::gpt2(&m));
    let output = logits;
    let out_dim = hp.vocab_rows;
    Ok(ArchOut {
        script,
        output,
        out_dim,
        scratch_end,
    })
}

pub(crate) fn bert<'a>(b: &mut Builder<'a, '_>, code: u32) -> Result<ArchOut, ConvertError> {
    let (g, hp, ctx) = (b.g, b.hp, b.ctx);
    let tn = Tensors { g };
    let (dim, hidden, l) = (hp.dim, hp.hidden, hp.n_layers);
    let (esz, kv_format) = (b.esz(), b.kv_format());
    let mut attn_blocks = Vec::new();
    let tok_embd = b.matrix(tn.get("token_embd.weight", dim, Some(hp.vocab_rows))?)?;
    let pe = tn.table("position_embd.weight", dim)?;
    check_positions(g, pe, ctx)?;
    let pos_embd = b.matrix(pe)?;
    let token_types = match g.tensor("token_types.weight") {
        Some(_) => Some(b.matrix(tn.table("token_types.weight", dim)?)?),
        None => None,
    };
    let embd_norm = b.vectors(&[
        tn.get("token_embd_norm.weight", dim, None)?,
        tn.get("token_embd_norm.bias", dim, None)?,
    ])?;
    let mut layers = Vec::new();
    for i in 0..l {
        let wb = |b: &mut Builder<'a, '_>, n: &str, cols, rows| -> Result<(W, u32), ConvertError> {
            let w = b.matrix(tn.get(&blk(i, &format!("{n}.weight")), cols, Some(rows))?)?;
            let bias = b.vectors(&[tn.get(&blk(i, &format!("{n}.bias")), rows, None)?])?;
            Ok((w, bias))
        };
        let (wq, bq) = wb(b, "attn_q", dim, dim)?;
        let (wk, bk) = wb(b, "attn_k", dim, dim)?;
        let (wv, bv) = wb(b, "attn_v", dim, dim)?;
        let (wo, bo) = wb(b, "attn_output", dim, dim)?;
        let ln_attn = b.vectors(&[
            tn.get(&blk(i, "attn_output_norm.weight"), dim, None)?,
            tn.get(&blk(i, "attn_output_norm.bias"), dim, None)?,
        ])?;
        let (wup, bup) = wb(b, "ffn_up", dim, hidden)?;
        let (wdn, bdn) = wb(b, "ffn_down", hidden, dim)?;
        let ln_out = b.vectors(&[
            tn.get(&blk(i, "layer_output_norm.weight"), dim, None)?,
            tn.get(&blk(i, "layer_output_norm.bias"), dim, None)?,
        ])?;
        layers.push(script::BertLayer {
            wq,
            bq,
            wk,
            bk,
            wv,
            bv,
            wo,
            bo,
            ln_attn,
            wup,
            bup,
            wdn,
            bdn,
            ln_out,
            attn_block: 0,
        });
    }
    for _ in 0..l {
        attn_blocks.push(b.bytes("attention block", vec![0; 32]));
    }
    let mut s = Scratch::new(PAYLOAD_BASE as u64 + b.lay.payload_len());
    let d4 = 4 * dim as u64;
    let rows = ctx as u64 * dim as u64;
    let (xs, qs, k, v) = (
        s.alloc(4 * rows),
        s.alloc(4 * rows),
        s.alloc(esz * rows),
        s.alloc(esz * rows),
    );
    let (att, tmp, kscr, vscr) = (s.alloc(d4), s.alloc(d4), s.alloc(d4), s.alloc(d4));
    let hb = s.alloc(4 * hidden as u64);
    let scratch_end = s.end();
    for (i, ly) in layers.iter_mut().enumerate() {
        ly.attn_block = attn_blocks[i];
        let ab = AttnBlock {
            k_cache: k,
            v_cache: v,
            n_heads: hp.n_heads,
            n_kv_heads: hp.n_heads,
            head_dim: hp.head_dim,
            kv_format,
        };
        b.lay.set_bytes(attn_blocks[i], ab.encode().to_vec());
    }
    let m = script::Bert {
        c: b.common(code),
        tok_embd,
        pos_embd,
        token_types,
        embd_norm,
        layers,
        pooling: hp.pooling,
        xs,
        qs,
        k,
        v,
        att,
        tmp,
        kscr,
        vscr,
        hb,
    };
    let script = emit_within_address_space(scratch_end, || script::bert(&m));
    let output = OUTPUT_AREA;
    let out_dim = dim;
    Ok(ArchOut {
        script,
        output,
        out_dim,
        scratch_end,
    })
}
