//! The scripts of spec §3.7, emitted as ISA v1 instructions.
//!
//! Each emitter reads top to bottom like the listing in the spec: prologue,
//! per-token body, epilogue (decoders) or the two-pass BERT script.

use ssnail_format::image::{rt, BASE, OUTPUT_AREA, TOKENS};
use ssnail_format::isa::{areg, Instr, Op, GEMV_ACC, GEMV_F16OUT, INSTR_LEN, R_ZERO};

// Register conventions (§3.7).
pub const POS: u8 = 0;
pub const TOK: u8 = 1;
pub const NEXT: u8 = 2;
pub const PLEN: u8 = 3;
pub const NGEN: u8 = 4;
pub const EOS: u8 = 5;
pub const POS1: u8 = 6;
pub const REASON: u8 = 7;
pub const GEN: u8 = 8;
pub const CTX: u8 = 9;
pub const TMP: u8 = 10;
pub const T: u8 = 11;
pub const N: u8 = 12;

/// Runtime-block field as an absolute address.
const fn rtb(off: u32) -> u32 {
    BASE + off
}

/// A stored matrix as the script sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct W {
    pub addr: u32,
    /// ggml type number (the GEMV/DEQROW `a` operand).
    pub fmt: u8,
    pub row_bytes: u32,
}

/// A forward label, patched when bound.
#[derive(Clone, Copy)]
pub struct Label(usize);

/// Collects instructions; branch targets are absolute (script base + 16·index).
pub struct Asm {
    base: u32,
    pub code: Vec<Instr>,
    labels: Vec<Option<u32>>,
    fixups: Vec<(usize, usize)>,
}

impl Asm {
    pub fn new(base: u32) -> Asm {
        Asm {
            base,
            code: Vec::new(),
            labels: Vec::new(),
            fixups: Vec::new(),
        }
    }
    fn emit(&mut self, op: Op, a: u8, b: u8, x: u32, y: u32, z: u32) {
        self.code.push(Instr::new(op, a, b, x, y, z));
    }
    pub fn label(&mut self) -> Label {
        self.labels.push(None);
        Label(self.labels.len() - 1)
    }
    pub fn bind(&mut self, l: Label) {
        self.labels[l.0] = Some(self.base + INSTR_LEN * self.code.len() as u32);
    }
    fn branch(&mut self, op: Op, a: u8, b: u8, l: Label) {
        self.fixups.push((self.code.len(), l.0));
        self.emit(op, a, b, 0, 0, 0);
    }
    /// The instructions with every branch target filled in.
    pub fn finish(mut self) -> Vec<Instr> {
        for (at, l) in std::mem::take(&mut self.fixups) {
            self.code[at].x = self.labels[l].expect("script label bound");
        }
        self.code
    }

    pub fn halt(&mut self) {
        self.emit(Op::Halt, 0, 0, 0, 0, 0)
    }
    pub fn sync(&mut self) {
        self.emit(Op::Sync, 0, 0, 0, 0, 0)
    }
    pub fn copy(&mut self, src: u32, dst: u32, len: u32) {
        self.emit(Op::Copy, 0, 0, src, dst, len)
    }
    pub fn setn(&mut self, n0: u32, n1: u32, n2: u32) {
        self.emit(Op::SetN, 0, 0, n0, n1, n2)
    }
    pub fn li(&mut self, r: u8, v: u32) {
        self.emit(Op::Li, r, 0, 0, 0, v)
    }
    pub fn ldr(&mut self, r: u8, addr: u32) {
        self.emit(Op::Ldr, r, 0, addr, 0, 0)
    }
    pub fn str(&mut self, r: u8, addr: u32) {
        self.emit(Op::Str, r, 0, addr, 0, 0)
    }
    pub fn addi(&mut self, r: u8, src: u8, imm: i32) {
        self.emit(Op::AddI, r, src, 0, 0, imm as u32)
    }
    /// A[a] = addr + R[r]·scale.
    pub fn lea(&mut self, a: u8, addr: u32, r: u8, scale: u32) {
        self.emit(Op::Lea, a, r, addr, 0, scale)
    }
    pub fn beq(&mut self, a: u8, b: u8, l: Label) {
        self.branch(Op::Beq, a, b, l)
    }
    pub fn bne(&mut self, a: u8, b: u8, l: Label) {
        self.branch(Op::Bne, a, b, l)
    }
    pub fn blt(&mut self, a: u8, b: u8, l: Label) {
        self.branch(Op::Blt, a, b, l)
    }
    pub fn jump(&mut self, l: Label) {
        self.branch(Op::Beq, R_ZERO, R_ZERO, l)
    }
    pub fn gemv(&mut self, w: u32, fmt: u8, flags: u8, x: u32, y: u32) {
        self.emit(Op::Gemv, fmt, flags, w, x, y)
    }
    pub fn deqrow(&mut self, src: u32, fmt: u8, dst: u32) {
        self.emit(Op::DeqRow, fmt, 0, src, 0, dst)
    }
    pub fn argmax(&mut self, r: u8, v: u32) {
        self.emit(Op::ArgMax, r, 0, v, 0, 0)
    }
    pub fn vadd(&mut self, x: u32, y: u32, z: u32) {
        self.emit(Op::VAdd, 0, 0, x, y, z)
    }
    pub fn rmsnorm(&mut self, x: u32, gain: u32, z: u32) {
        self.emit(Op::RmsNorm, 0, 0, x, gain, z)
    }
    pub fn silumul(&mut self, x: u32, y: u32, z: u32) {
        self.emit(Op::SiluMul, 0, 0, x, y, z)
    }
    pub fn rope(&mut self, v: u32, row: u32) {
        self.emit(Op::Rope, 0, 0, v, row, 0)
    }
    pub fn attn(&mut self, r: u8, block: u32, q: u32, out: u32) {
        self.emit(Op::Attn, r, 0, block, q, out)
    }
    pub fn layernorm(&mut self, x: u32, gain_bias: u32, z: u32) {
        self.emit(Op::LayerNorm, 0, 0, x, gain_bias, z)
    }
    pub fn gelu(&mut self, x: u32, z: u32) {
        self.emit(Op::Gelu, 0, 0, x, 0, z)
    }
    pub fn meanrows(&mut self, r: u8, x: u32, z: u32) {
        self.emit(Op::MeanRows, r, 0, x, 0, z)
    }
    pub fn cvt16(&mut self, x: u32, z: u32) {
        self.emit(Op::Cvt16, 0, 0, x, 0, z)
    }
}

/// Values every script needs.
#[derive(Clone, Copy, Debug)]
pub struct Common {
    pub base: u32,
    pub ctx: u32,
    pub dim: u32,
    pub hidden: u32,
    pub eps_bits: u32,
    pub kv_f16: bool,
    /// Decoders: run the whole pass at every position, classifier and ARGMAX included
    /// (`convert --all-logits`). False: a prompt position before the last branches to
    /// `advance` right after the last layer's K/V cache writes (§3.7), as nothing after them
    /// feeds anything but the prediction the epilogue throws away there.
    pub all_logits: bool,
}

impl Common {
    fn esz(&self) -> u32 {
        if self.kv_f16 {
            2
        } else {
            4
        }
    }
}

/// Decoder state addresses shared by llama and gpt2.
#[derive(Clone, Copy, Debug)]
pub struct DecoderScratch {
    pub x: u32,
    pub xb: u32,
    pub q: u32,
    pub att: u32,
    pub kscr: u32,
    pub hb: u32,
    pub logits: u32,
}

/// The labels the decoder body and epilogue branch to.
#[derive(Clone, Copy)]
struct DecoderLabels {
    lp: Label,
    advance: Label,
    done: Label,
}

/// Decoder prologue up to the `room` label (§3.7).
fn prologue(s: &mut Asm, c: &Common, eos: u32) -> DecoderLabels {
    let (lp, room, done) = (s.label(), s.label(), s.label());
    let advance = s.label();
    s.ldr(POS, rtb(rt::POS));
    s.ldr(PLEN, rtb(rt::PROMPT_LEN));
    s.ldr(NGEN, rtb(rt::N_GENERATE));
    s.li(GEN, 0);
    s.str(GEN, rtb(rt::GENERATED));
    s.li(EOS, eos);
    s.li(CTX, c.ctx);
    s.li(REASON, 1);
    s.beq(NGEN, R_ZERO, done);
    s.bind(lp);
    s.blt(POS, CTX, room);
    s.li(REASON, 3);
    s.jump(done);
    s.bind(room);
    DecoderLabels { lp, advance, done }
}

/// Inside the prompt (pos + 1 < prompt_len) the prediction is thrown away: branch to
/// `advance`. Leaves POS1 = pos + 1 for the epilogue.
fn skip_inside_prompt(s: &mut Asm, l: DecoderLabels) {
    s.addi(POS1, POS, 1);
    s.blt(POS1, PLEN, l.advance);
}

/// Decoder epilogue after ARGMAX (§3.7). With `all_logits` it makes the prompt test itself;
/// otherwise the body made it after the last layer's K/V cache writes.
fn epilogue(s: &mut Asm, c: &Common, l: DecoderLabels) {
    let DecoderLabels { lp, advance, done } = l;
    let stop = s.label();
    if c.all_logits {
        skip_inside_prompt(s, l);
    }
    s.lea(0, TOKENS, POS1, 4);
    s.str(NEXT, areg(0, 0));
    s.addi(GEN, GEN, 1);
    s.str(GEN, rtb(rt::GENERATED));
    s.sync();
    s.li(REASON, 2);
    s.beq(NEXT, EOS, stop);
    s.li(REASON, 1);
    s.beq(GEN, NGEN, stop);
    s.ldr(TMP, rtb(rt::STOP_REQUEST));
    s.li(REASON, 4);
    s.bne(TMP, R_ZERO, stop);
    s.bind(advance);
    s.addi(POS, POS, 1);
    s.str(POS, rtb(rt::POS));
    s.jump(lp);
    s.bind(stop);
    s.addi(POS, POS, 1);
    s.bind(done);
    s.str(POS, rtb(rt::POS));
    s.str(REASON, rtb(rt::STOP_REASON));
    s.sync();
    s.halt();
}

#[derive(Clone, Debug)]
pub struct LlamaLayer {
    pub attn_norm: u32,
    pub ffn_norm: u32,
    pub wq: W,
    pub wk: W,
    pub wv: W,
    pub wo: W,
    pub w1: W,
    pub w3: W,
    pub w2: W,
    pub attn_block: u32,
    pub k_cache: u32,
    pub v_cache: u32,
}

#[derive(Clone, Debug)]
pub struct Llama {
    pub c: Common,
    pub eos: u32,
    pub head_dim: u32,
    pub kv_dim: u32,
    pub vocab: u32,
    pub embd: W,
    pub layers: Vec<LlamaLayer>,
    pub output_norm: u32,
    pub classifier: W,
    pub rope: u32,
    pub s: DecoderScratch,
    /// Gate's outputs (ffn_rows f32), then up's: one GEMV makes both when
    /// up's rows follow gate's in the payload (spec §3.7).
    pub gate_up: u32,
    /// Rows of gate and up, elements of SILUMUL: the model's hidden size
    /// (`c.hidden` is down's columns, hidden_p with `--core soft`'s padding).
    pub ffn_rows: u32,
    /// With that padding: zeros that the script copies to hb's tail (hb
    /// from element ffn_rows on) once a job, before the first position (§4.4).
    pub ffn_tail_zeros: Option<u32>,
}

pub fn llama(m: &Llama) -> Vec<Instr> {
    let c = &m.c;
    let (dim, hd, kvd, hidden, eps) = (c.dim, m.head_dim, m.kv_dim, c.hidden, c.eps_bits);
    let rows = m.ffn_rows;
    let sc = &m.s;
    let mut s = Asm::new(c.base);
    if let Some(z) = m.ffn_tail_zeros {
        s.copy(z, sc.hb + 4 * rows, 4 * (hidden - rows));
    }
    let labels = prologue(&mut s, c, m.eos);

    s.lea(0, TOKENS, POS, 4);
    s.ldr(TOK, areg(0, 0));
    s.setn(dim, 0, 0);
    s.lea(1, m.embd.addr, TOK, m.embd.row_bytes);
    s.deqrow(areg(1, 0), m.embd.fmt, sc.x);
    s.lea(2, m.rope, POS, 4 * hd);
    // Rows of b that follow a's in the payload, in a's format, continue a's
    // GEMV: one instruction makes both outputs when they are adjacent too.
    let follows = |a: &W, rows: u32, b: &W| {
        b.fmt == a.fmt && b.row_bytes == a.row_bytes && b.addr == a.addr + rows * a.row_bytes
    };
    let query = |s: &mut Asm, l: &LlamaLayer, with_k: bool| {
        s.setn(dim, if with_k { dim + kvd } else { dim }, 0);
        s.gemv(l.wq.addr, l.wq.fmt, 0, sc.xb, sc.q);
    };
    let rope_query = |s: &mut Asm| {
        s.setn(dim, hd, 0);
        s.rope(sc.q, areg(2, 0));
    };
    for (i, l) in m.layers.iter().enumerate() {
        // The last layer's query feeds only this position's prediction: unless every
        // position's logits are wanted, it comes after the K/V cache writes and the skip.
        let skip_here = !c.all_logits && i + 1 == m.layers.len();
        // With the F16 cache, K goes to kscr, which follows q: wq's GEMV
        // makes it too (not in the last layer, whose query moves behind
        // the prompt test).
        let qk = c.kv_f16 && !skip_here && sc.kscr == sc.q + 4 * dim && follows(&l.wq, dim, &l.wk);
        s.setn(dim, 0, eps);
        s.rmsnorm(sc.x, l.attn_norm, sc.xb);
        if !skip_here {
            query(&mut s, l, qk);
        }
        s.setn(dim, kvd, 0);
        s.lea(3, l.k_cache, POS, c.esz() * kvd);
        s.lea(4, l.v_cache, POS, c.esz() * kvd);
        if c.kv_f16 {
            if !qk {
                s.gemv(l.wk.addr, l.wk.fmt, 0, sc.xb, sc.kscr);
            }
            s.gemv(l.wv.addr, l.wv.fmt, GEMV_F16OUT, sc.xb, areg(4, 0));
        } else {
            s.gemv(l.wk.addr, l.wk.fmt, 0, sc.xb, areg(3, 0));
            s.gemv(l.wv.addr, l.wv.fmt, 0, sc.xb, areg(4, 0));
        }
        if !skip_here {
            rope_query(&mut s);
        }
        s.setn(kvd, hd, 0);
        if c.kv_f16 {
            s.rope(sc.kscr, areg(2, 0));
            s.cvt16(sc.kscr, areg(3, 0));
        } else {
            s.rope(areg(3, 0), areg(2, 0));
        }
        if skip_here {
            skip_inside_prompt(&mut s, labels);
            query(&mut s, l, false);
            rope_query(&mut s);
        }
        s.attn(POS, l.attn_block, sc.q, sc.att);
        s.setn(dim, dim, 0);
        s.gemv(l.wo.addr, l.wo.fmt, GEMV_ACC, sc.att, sc.x);
        s.setn(dim, 0, eps);
        s.rmsnorm(sc.x, l.ffn_norm, sc.xb);
        let up = m.gate_up + 4 * rows;
        if follows(&l.w1, rows, &l.w3) {
            s.setn(dim, 2 * rows, 0);
            s.gemv(l.w1.addr, l.w1.fmt, 0, sc.xb, m.gate_up);
        } else {
            s.setn(dim, rows, 0);
            s.gemv(l.w1.addr, l.w1.fmt, 0, sc.xb, m.gate_up);
            s.gemv(l.w3.addr, l.w3.fmt, 0, sc.xb, up);
        }
        s.setn(rows, 0, 0);
        s.silumul(m.gate_up, up, sc.hb);
        s.setn(hidden, dim, 0);
        s.gemv(l.w2.addr, l.w2.fmt, GEMV_ACC, sc.hb, sc.x);
    }
    s.setn(dim, 0, eps);
    s.rmsnorm(sc.x, m.output_norm, sc.xb);
    s.setn(dim, m.vocab, 0);
    s.gemv(m.classifier.addr, m.classifier.fmt, 0, sc.xb, sc.logits);
    s.setn(m.vocab, 0, 0);
    s.argmax(NEXT, sc.logits);
    epilogue(&mut s, c, labels);
    s.finish()
}

#[derive(Clone, Debug)]
pub struct Gpt2Layer {
    /// Gain then bias, back to back.
    pub ln1: u32,
    pub ln2: u32,
    pub qkv: W,
    /// 3·dim f32.
    pub qkv_bias: u32,
    pub wo: W,
    pub bo: u32,
    pub wup: W,
    pub bup: u32,
    pub wdn: W,
    pub bdn: u32,
    pub attn_block: u32,
    pub k_cache: u32,
    pub v_cache: u32,
}

#[derive(Clone, Debug)]
pub struct Gpt2 {
    pub c: Common,
    pub eos: u32,
    pub vocab: u32,
    pub wte: W,
    pub wpe: W,
    pub layers: Vec<Gpt2Layer>,
    pub lnf: u32,
    pub classifier: W,
    pub s: DecoderScratch,
    pub tmp: u32,
    pub vscr: u32,
}

pub fn gpt2(m: &Gpt2) -> Vec<Instr> {
    let c = &m.c;
    let (dim, hidden, eps) = (c.dim, c.hidden, c.eps_bits);
    let sc = &m.s;
    let mut s = Asm::new(c.base);
    let labels = prologue(&mut s, c, m.eos);

    s.lea(0, TOKENS, POS, 4);
    s.ldr(TOK, areg(0, 0));
    s.setn(dim, 0, 0);
    s.lea(1, m.wte.addr, TOK, m.wte.row_bytes);
    s.deqrow(areg(1, 0), m.wte.fmt, sc.x);
    s.lea(1, m.wpe.addr, POS, m.wpe.row_bytes);
    s.deqrow(areg(1, 0), m.wpe.fmt, m.tmp);
    s.vadd(sc.x, m.tmp, sc.x);
    let (kd, vd) = if c.kv_f16 {
        (sc.kscr, m.vscr)
    } else {
        (areg(3, 0), areg(4, 0))
    };
    for (i, l) in m.layers.iter().enumerate() {
        // As in llama: the last layer's query after the K/V cache writes and the skip.
        let skip_here = !c.all_logits && i + 1 == m.layers.len();
        s.setn(dim, 0, eps);
        s.layernorm(sc.x, l.ln1, sc.xb);
        s.setn(dim, dim, 0);
        if !skip_here {
            s.gemv(l.qkv.addr, l.qkv.fmt, 0, sc.xb, sc.q);
        }
        s.lea(3, l.k_cache, POS, c.esz() * dim);
        s.lea(4, l.v_cache, POS, c.esz() * dim);
        s.gemv(l.qkv.addr + dim * l.qkv.row_bytes, l.qkv.fmt, 0, sc.xb, kd);
        s.gemv(
            l.qkv.addr + 2 * dim * l.qkv.row_bytes,
            l.qkv.fmt,
            0,
            sc.xb,
            vd,
        );
        s.setn(dim, 0, 0);
        if !skip_here {
            s.vadd(sc.q, l.qkv_bias, sc.q);
        }
        s.vadd(kd, l.qkv_bias + 4 * dim, kd);
        s.vadd(vd, l.qkv_bias + 8 * dim, vd);
        if c.kv_f16 {
            s.cvt16(sc.kscr, areg(3, 0));
            s.cvt16(m.vscr, areg(4, 0));
        }
        if skip_here {
            skip_inside_prompt(&mut s, labels);
            s.setn(dim, dim, 0);
            s.gemv(l.qkv.addr, l.qkv.fmt, 0, sc.xb, sc.q);
            s.setn(dim, 0, 0);
            s.vadd(sc.q, l.qkv_bias, sc.q);
        }
        s.attn(POS, l.attn_block, sc.q, sc.att);
        s.setn(dim, dim, 0);
        s.gemv(l.wo.addr, l.wo.fmt, GEMV_ACC, sc.att, sc.x);
        s.setn(dim, 0, eps);
        s.vadd(sc.x, l.bo, sc.x);
        s.layernorm(sc.x, l.ln2, sc.xb);
        s.setn(dim, hidden, 0);
        s.gemv(l.wup.addr, l.wup.fmt, 0, sc.xb, sc.hb);
        s.setn(hidden, 0, 0);
        s.vadd(sc.hb, l.bup, sc.hb);
        s.gelu(sc.hb, sc.hb);
        s.setn(hidden, dim, 0);
        s.gemv(l.wdn.addr, l.wdn.fmt, GEMV_ACC, sc.hb, sc.x);
        s.setn(dim, 0, 0);
        s.vadd(sc.x, l.bdn, sc.x);
    }
    s.setn(dim, 0, eps);
    s.layernorm(sc.x, m.lnf, sc.xb);
    s.setn(dim, m.vocab, 0);
    s.gemv(m.classifier.addr, m.classifier.fmt, 0, sc.xb, sc.logits);
    s.setn(m.vocab, 0, 0);
    s.argmax(NEXT, sc.logits);
    epilogue(&mut s, c, labels);
    s.finish()
}

#[derive(Clone, Debug)]
pub struct BertLayer {
    pub wq: W,
    pub bq: u32,
    pub wk: W,
    pub bk: u32,
    pub wv: W,
    pub bv: u32,
    pub wo: W,
    pub bo: u32,
    pub ln_attn: u32,
    pub wup: W,
    pub bup: u32,
    pub wdn: W,
    pub bdn: u32,
    pub ln_out: u32,
    pub attn_block: u32,
}

#[derive(Clone, Debug)]
pub struct Bert {
    pub c: Common,
    pub tok_embd: W,
    pub pos_embd: W,
    pub token_types: Option<W>,
    pub embd_norm: u32,
    pub layers: Vec<BertLayer>,
    /// 2 = CLS pooling, else mean.
    pub pooling: u32,
    pub xs: u32,
    pub qs: u32,
    pub k: u32,
    pub v: u32,
    pub att: u32,
    pub tmp: u32,
    pub kscr: u32,
    pub vscr: u32,
    pub hb: u32,
}

pub fn bert(m: &Bert) -> Vec<Instr> {
    let c = &m.c;
    let (dim, hidden, eps) = (c.dim, c.hidden, c.eps_bits);
    let row = 4 * dim;
    let esz = c.esz();
    let mut s = Asm::new(c.base);
    let (fits, done) = (s.label(), s.label());

    s.li(GEN, 0);
    s.str(GEN, rtb(rt::GENERATED));
    s.ldr(N, rtb(rt::PROMPT_LEN));
    s.li(CTX, c.ctx + 1);
    s.li(REASON, 3);
    s.blt(N, CTX, fits);
    s.jump(done);
    s.bind(fits);
    s.li(REASON, 1);
    s.beq(N, R_ZERO, done);
    s.addi(POS1, N, -1);

    // Embeddings, one row of X per token.
    let emb = s.label();
    s.li(T, 0);
    s.bind(emb);
    s.lea(0, TOKENS, T, 4);
    s.ldr(TOK, areg(0, 0));
    s.lea(6, m.xs, T, row);
    s.setn(dim, 0, eps);
    s.lea(1, m.tok_embd.addr, TOK, m.tok_embd.row_bytes);
    s.deqrow(areg(1, 0), m.tok_embd.fmt, areg(6, 0));
    s.lea(1, m.pos_embd.addr, T, m.pos_embd.row_bytes);
    s.deqrow(areg(1, 0), m.pos_embd.fmt, m.tmp);
    s.vadd(areg(6, 0), m.tmp, areg(6, 0));
    if let Some(tt) = m.token_types {
        s.deqrow(tt.addr, tt.fmt, m.tmp);
        s.vadd(areg(6, 0), m.tmp, areg(6, 0));
    }
    s.layernorm(areg(6, 0), m.embd_norm, areg(6, 0));
    s.addi(T, T, 1);
    s.blt(T, N, emb);

    let (kd, vd) = if c.kv_f16 {
        (m.kscr, m.vscr)
    } else {
        (areg(3, 0), areg(4, 0))
    };
    for l in &m.layers {
        // Pass 1: q, k, v of every token.
        let qkv = s.label();
        s.li(T, 0);
        s.bind(qkv);
        s.lea(6, m.xs, T, row);
        s.lea(7, m.qs, T, row);
        s.lea(3, m.k, T, esz * dim);
        s.lea(4, m.v, T, esz * dim);
        s.setn(dim, dim, 0);
        s.gemv(l.wq.addr, l.wq.fmt, 0, areg(6, 0), areg(7, 0));
        s.gemv(l.wk.addr, l.wk.fmt, 0, areg(6, 0), kd);
        s.gemv(l.wv.addr, l.wv.fmt, 0, areg(6, 0), vd);
        s.vadd(areg(7, 0), l.bq, areg(7, 0));
        s.vadd(kd, l.bk, kd);
        s.vadd(vd, l.bv, vd);
        if c.kv_f16 {
            s.cvt16(m.kscr, areg(3, 0));
            s.cvt16(m.vscr, areg(4, 0));
        }
        s.addi(T, T, 1);
        s.blt(T, N, qkv);

        // Pass 2: attention over all tokens, then the feed-forward block.
        let att = s.label();
        s.li(T, 0);
        s.bind(att);
        s.lea(6, m.xs, T, row);
        s.lea(7, m.qs, T, row);
        s.attn(POS1, l.attn_block, areg(7, 0), m.att);
        s.setn(dim, dim, eps);
        s.gemv(l.wo.addr, l.wo.fmt, GEMV_ACC, m.att, areg(6, 0));
        s.vadd(areg(6, 0), l.bo, areg(6, 0));
        s.layernorm(areg(6, 0), l.ln_attn, areg(6, 0));
        s.setn(dim, hidden, 0);
        s.gemv(l.wup.addr, l.wup.fmt, 0, areg(6, 0), m.hb);
        s.setn(hidden, 0, 0);
        s.vadd(m.hb, l.bup, m.hb);
        s.gelu(m.hb, m.hb);
        s.setn(hidden, dim, 0);
        s.gemv(l.wdn.addr, l.wdn.fmt, GEMV_ACC, m.hb, areg(6, 0));
        s.setn(dim, 0, eps);
        s.vadd(areg(6, 0), l.bdn, areg(6, 0));
        s.layernorm(areg(6, 0), l.ln_out, areg(6, 0));
        s.addi(T, T, 1);
        s.blt(T, N, att);
    }

    s.setn(dim, 0, 0);
    if m.pooling == 2 {
        s.copy(m.xs, OUTPUT_AREA, 4 * dim);
    } else {
        s.meanrows(N, m.xs, OUTPUT_AREA);
    }
    s.li(REASON, 1);
    s.bind(done);
    s.str(REASON, rtb(rt::STOP_REASON));
    s.sync();
    s.halt();
    s.finish()
}
