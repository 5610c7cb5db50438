//! Whole images of the §10 test models against the spec: every header
//! field, table and tensor placement, alignment, scratch and memory-needed,
//! attention blocks, RoPE table, and every script instruction compared with
//! a listing written by hand from §3.7.

mod common;
use common::*;
use ssnail_convert::{convert, Options, Policy};
use ssnail_format::ggml::GgmlType;
use ssnail_gguf::{Gguf, TensorInfo};
use ssnail_testkit::models::{self, ModelOpts};
use ssnail_tokenizer::{ImageTables, Vocab};

// Registers (§3.7).
const POS: u8 = 0;
const TOK: u8 = 1;
const NEXT: u8 = 2;
const PLEN: u8 = 3;
const NGEN: u8 = 4;
const EOS: u8 = 5;
const POS1: u8 = 6;
const REASON: u8 = 7;
const GEN: u8 = 8;
const CTX: u8 = 9;
const TMP: u8 = 10;
const T: u8 = 11;
const N: u8 = 12;
const Z: u8 = 15;
const RT: u32 = 0x800_0000;

fn name(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

/// Expected (address, stored type) of a matrix, laid out by the test walk;
/// the image bytes must equal the GGUF's when the type is kept.
struct Mat {
    addr: u32,
    fmt: u8,
    rb: u32,
}

fn place_matrix(w: &mut Walk, g: &Gguf, img: &[u8], t: &TensorInfo, dst: GgmlType) -> Mat {
    place_matrix_at(w, g, img, t, dst, false)
}

/// As `place_matrix`; with `after`, right after the last blob (§1.8).
fn place_matrix_at(
    w: &mut Walk,
    g: &Gguf,
    img: &[u8],
    t: &TensorInfo,
    dst: GgmlType,
    after: bool,
) -> Mat {
    let cols = t.shape[0] as usize;
    let rows = t.shape[1] as usize;
    let rb = dst.row_bytes(cols);
    let addr = if after {
        w.place_after(rows * rb)
    } else {
        w.place(rows * rb)
    };
    if t.ty == dst {
        same(
            bytes_at(img, addr, rows * rb),
            g.data(t),
            &format!("{} copied unchanged", t.name),
        );
    }
    Mat {
        addr,
        fmt: dst as u8,
        rb: rb as u32,
    }
}

fn place_vectors(w: &mut Walk, g: &Gguf, img: &[u8], ts: &[&TensorInfo]) -> u32 {
    let len: usize = ts.iter().map(|t| 4 * t.n_elements() as usize).sum();
    let addr = w.place(len);
    let mut off = 0;
    for t in ts {
        assert_eq!(t.ty, GgmlType::F32);
        let n = 4 * t.n_elements() as usize;
        same(
            bytes_at(img, addr + off, n),
            g.data(t),
            &format!("{} as f32", t.name),
        );
        off += n as u32;
    }
    addr
}

/// Tables in §1.8/§2.1 order; checks their bytes and the block's addresses.
fn check_tables(w: &mut Walk, g: &Gguf, img: &[u8], hdr_vocab: u32, hdr_tok: u32) {
    let t = ImageTables::build(&Vocab::from_gguf(g).unwrap());
    let vocab = w.place(t.vocab_table.len());
    let index = w.place(t.index.len());
    let prio = w.place(t.priority.len());
    let bytes = w.place(1024);
    let block = w.place(36);
    assert_eq!(hdr_vocab, vocab, "H_VOCAB");
    assert_eq!(hdr_tok, block, "H_TOKENIZER");
    same(
        bytes_at(img, vocab, t.vocab_table.len()),
        &t.vocab_table[..],
        "vocab table",
    );
    same(
        bytes_at(img, index, t.index.len()),
        &t.index[..],
        "sorted index",
    );
    same(
        bytes_at(img, prio, t.priority.len()),
        &t.priority[..],
        "priority table",
    );
    same(bytes_at(img, bytes, 1024), &t.byte_table[..], "byte table");
    let b = bytes_at(img, block, 36);
    assert_eq!(&b[0..8], &t.block.encode()[0..8], "kind, flags, n_vocab");
    assert_eq!(u32_at(img, block + 8), index);
    assert_eq!(u32_at(img, block + 12), t.block.index_len);
    assert_eq!(u32_at(img, block + 16), prio);
    assert_eq!(u32_at(img, block + 20), bytes);
    assert_eq!(&b[24..36], &t.block.encode()[24..36], "begin, end, unk");
}

/// Every static header field (§1.4) except those the caller checks.
struct Hdr {
    flags: u16,
    data: u32,
    scratch: u32,
    vocab: u32,
    n_vocab: u32,
    ctx: u32,
    bos: u32,
    eos: u32,
    payload_len: u32,
    output: u32,
    out_dim: u32,
    mem_needed: u32,
    arch: u32,
    tokenizer: u32,
    desc: String,
}

fn header(img: &[u8]) -> Hdr {
    let u = |o: u32| u32_at(img, BASE + o);
    assert_eq!(&img[0..4], b"SSNL");
    assert_eq!(u16::from_le_bytes([img[4], img[5]]), 1, "version");
    assert_eq!(u(0x08), PAYLOAD, "H_CODE");
    assert_eq!(u(0x14), TOKENS, "H_TOKENS");
    assert_eq!(u(0x64), PAYLOAD, "load base");
    assert!(
        img[0x40..0x60].iter().all(|b| *b == 0),
        "runtime block and $58-$5F zero"
    );
    for o in [0x60, 0x68, 0x6C, 0x70, 0x74, 0x7C] {
        assert_eq!(u(o), 0, "header ${o:X}");
    }
    let d = &img[0x80..0x100];
    let nul = d
        .iter()
        .position(|b| *b == 0)
        .expect("NUL-terminated description");
    assert!(d[nul..].iter().all(|b| *b == 0));
    let h = Hdr {
        flags: u16::from_le_bytes([img[6], img[7]]),
        data: u(0x0C),
        scratch: u(0x10),
        vocab: u(0x18),
        n_vocab: u(0x1C),
        ctx: u(0x20),
        bos: u(0x24),
        eos: u(0x28),
        payload_len: u(0x2C),
        output: u(0x30),
        out_dim: u(0x34),
        mem_needed: u(0x38),
        arch: u(0x3C),
        tokenizer: u(0x78),
        desc: String::from_utf8(d[..nul].to_vec()).unwrap(),
    };
    assert_eq!(
        img.len(),
        256 + h.payload_len as usize,
        "file = header + payload"
    );
    assert_eq!(h.payload_len % 256, 0);
    assert_eq!(
        h.scratch,
        PAYLOAD + h.payload_len,
        "H_SCRATCH = end of payload"
    );
    h
}

fn attn_block(img: &[u8], addr: u32) -> [u32; 8] {
    assert_eq!(addr % 32, 0, "attention block 32-aligned");
    std::array::from_fn(|i| u32_at(img, addr + 4 * i as u32))
}

/// Decoder prologue (§3.7) up to `room`.
fn prologue(l: &mut Listing, eos: u32, ctx: u32) {
    l.i(LDR, POS, 0, RT + 0x40, 0, 0);
    l.i(LDR, PLEN, 0, RT + 0x44, 0, 0);
    l.i(LDR, NGEN, 0, RT + 0x48, 0, 0);
    l.i(LI, GEN, 0, 0, 0, 0);
    l.i(STR, GEN, 0, RT + 0x4C, 0, 0);
    l.i(LI, EOS, 0, 0, 0, eos);
    l.i(LI, CTX, 0, 0, 0, ctx);
    l.i(LI, REASON, 0, 0, 0, 1);
    l.br(BEQ, NGEN, Z, "done");
    l.label("loop");
    l.br(BLT, POS, CTX, "room");
    l.i(LI, REASON, 0, 0, 0, 3);
    l.br(BEQ, Z, Z, "done");
    l.label("room");
}

/// The prompt test (§3.7): inside the prompt, on to the next position.
fn prompt_test(l: &mut Listing) {
    l.i(ADDI, POS1, POS, 0, 0, 1);
    l.br(BLT, POS1, PLEN, "advance");
}

/// Decoder epilogue (§3.7) after ARGMAX; it makes the prompt test only with `--all-logits`.
fn epilogue(l: &mut Listing, all_logits: bool) {
    if all_logits {
        prompt_test(l);
    }
    l.i(LEA, 0, POS1, TOKENS, 0, 4);
    l.i(STR, NEXT, 0, a(0), 0, 0);
    l.i(ADDI, GEN, GEN, 0, 0, 1);
    l.i(STR, GEN, 0, RT + 0x4C, 0, 0);
    l.i(SYNC, 0, 0, 0, 0, 0);
    l.i(LI, REASON, 0, 0, 0, 2);
    l.br(BEQ, NEXT, EOS, "stop");
    l.i(LI, REASON, 0, 0, 0, 1);
    l.br(BEQ, GEN, NGEN, "stop");
    l.i(LDR, TMP, 0, RT + 0x50, 0, 0);
    l.i(LI, REASON, 0, 0, 0, 4);
    l.br(BNE, TMP, Z, "stop");
    l.label("advance");
    l.i(ADDI, POS, POS, 0, 0, 1);
    l.i(STR, POS, 0, RT + 0x40, 0, 0);
    l.br(BEQ, Z, Z, "loop");
    l.label("stop");
    l.i(ADDI, POS, POS, 0, 0, 1);
    l.label("done");
    l.i(STR, POS, 0, RT + 0x40, 0, 0);
    l.i(STR, REASON, 0, RT + 0x54, 0, 0);
    l.i(SYNC, 0, 0, 0, 0, 0);
    l.i(HALT, 0, 0, 0, 0, 0);
}

fn opts(ctx: u32, policy: Policy, kv_f16: bool) -> Options {
    Options {
        ctx: Some(ctx),
        policy,
        kv_f16,
        ..Options::default()
    }
}

/// The llama image of `m` (keep policy unless given), checked field by field.
fn check_llama(m: &ModelOpts, o: &Options, boundary: u32) -> Vec<u8> {
    let (_d, g) = open(&models::build(m));
    let o = Options {
        boundary,
        ..o.clone()
    };
    let out = convert(&g, &o).unwrap();
    let img = &out.image;
    let h = header(img);
    let (dim, layers, heads, kvh, hidden) = (256u32, 2u32, 8u32, 4u32, 512u32);
    let (hd, kvd, vocab, ctx) = (dim / heads, kvh * dim / heads, 400u32, o.ctx.unwrap());
    let dst = |t: &TensorInfo| match o.policy {
        Policy::Keep => t.ty,
        Policy::All(f) => f,
        Policy::Mixed if t.name == "token_embd.weight" || t.name == "output.weight" => {
            GgmlType::Q4_0
        }
        Policy::Mixed => GgmlType::Q8_0,
        Policy::Auto => unreachable!(),
    };
    let slots = 64 + 64 * layers as usize;
    assert_eq!(h.data, PAYLOAD + 16 * slots as u32, "H_DATA");
    let mut w = Walk::new(slots, boundary);
    check_tables(&mut w, &g, img, h.vocab, h.tokenizer);
    assert_eq!(h.vocab, h.data, "vocab table right after the script area");
    let t = |n: &str| g.tensor(n).unwrap_or_else(|| panic!("{n}"));
    let mat = |w: &mut Walk, n: &str| {
        let ti = t(n);
        place_matrix(w, &g, img, ti, dst(ti))
    };
    let embd = mat(&mut w, "token_embd.weight");
    let mut ls = Vec::new();
    for i in 0..layers {
        let an = place_vectors(&mut w, &g, img, &[t(&format!("blk.{i}.attn_norm.weight"))]);
        let fnm = place_vectors(&mut w, &g, img, &[t(&format!("blk.{i}.ffn_norm.weight"))]);
        let ms: Vec<Mat> = [
            "attn_q",
            "attn_k",
            "attn_v",
            "attn_output",
            "ffn_gate",
            "ffn_up",
            "ffn_down",
        ]
        .iter()
        .map(|n| {
            let ti = t(&format!("blk.{i}.{n}.weight"));
            let after = matches!(*n, "attn_k" | "ffn_up");
            place_matrix_at(&mut w, &g, img, ti, dst(ti), after)
        })
        .collect();
        ls.push((an, fnm, ms));
    }
    let onorm = place_vectors(&mut w, &g, img, &[t("output_norm.weight")]);
    let cls = if m.tied {
        None
    } else {
        Some(mat(&mut w, "output.weight"))
    };
    let cls = cls.as_ref().unwrap_or(&embd);
    let rope = w.place((ctx * hd * 4) as usize);
    let blocks: Vec<u32> = (0..layers).map(|_| w.place(32)).collect();
    assert_eq!(h.payload_len, w.payload_len(), "payload length");
    for (addr, len) in &w.placed {
        assert!(
            !(*addr < boundary && addr + *len as u32 > boundary),
            "blob at ${addr:X} straddles ${boundary:X}"
        );
    }

    // RoPE row p, pair j = (cos, sin) of p·base^(−2j/hd), double then f32.
    for (p, j) in [(0u32, 0u32), (3, 5), (ctx - 1, hd / 2 - 1)] {
        let th = p as f64 * 10000f64.powf(-2.0 * j as f64 / hd as f64);
        let at = rope + p * 4 * hd + 8 * j;
        assert_eq!(
            u32_at(img, at),
            (th.cos() as f32).to_bits(),
            "rope cos p{p} j{j}"
        );
        assert_eq!(
            u32_at(img, at + 4),
            (th.sin() as f32).to_bits(),
            "rope sin p{p} j{j}"
        );
    }

    // Scratch (§1.9).
    let esz = if o.kv_f16 { 2u64 } else { 4 };
    let mut s = Scr((PAYLOAD + h.payload_len) as u64);
    let (x, xb) = (s.alloc(4 * dim as u64), s.alloc(4 * dim as u64));
    let q = s.alloc(4 * (dim + kvd) as u64);
    let kscr = q + 4 * dim;
    let att = s.alloc(4 * dim as u64);
    let gate = s.alloc(8 * hidden as u64);
    let up = gate + 4 * hidden;
    let hb = s.alloc(4 * hidden as u64);
    let logits = s.alloc(4 * vocab as u64);
    let kc: Vec<u32> = (0..layers)
        .map(|_| s.alloc(esz * (ctx * kvd) as u64))
        .collect();
    let vc: Vec<u32> = (0..layers)
        .map(|_| s.alloc(esz * (ctx * kvd) as u64))
        .collect();
    assert_eq!(h.mem_needed as u64, s.0 - BASE as u64, "H_MEM_NEEDED");
    assert_eq!((h.output, h.out_dim), (logits, vocab));
    assert_eq!(
        (h.flags, h.arch, h.n_vocab, h.ctx, h.bos, h.eos),
        (0, 0, 400, ctx, 1, 2)
    );
    for i in 0..layers as usize {
        assert_eq!(
            attn_block(img, blocks[i]),
            [kc[i], vc[i], heads, kvh, hd, o.kv_f16 as u32, 0, 0]
        );
    }

    // The script, by hand from §3.7.
    let eps = 1e-5f32.to_bits();
    let mut l = Listing::new(PAYLOAD);
    prologue(&mut l, 2, ctx);
    l.i(LEA, 0, POS, TOKENS, 0, 4);
    l.i(LDR, TOK, 0, a(0), 0, 0);
    l.i(SETN, 0, 0, dim, 0, 0);
    l.i(LEA, 1, TOK, embd.addr, 0, embd.rb);
    l.i(DEQROW, embd.fmt, 0, a(1), 0, x);
    l.i(LEA, 2, POS, rope, 0, 4 * hd);
    for (i, (an, fnm, ms)) in ls.iter().enumerate() {
        let [wq, wk, wv, wo, w1, w3, w2] = [&ms[0], &ms[1], &ms[2], &ms[3], &ms[4], &ms[5], &ms[6]];
        // The last layer without --all-logits: steps 1, 3, 4, 6, the prompt test, 2, 5, 7-12.
        let last = !o.all_logits && i + 1 == ls.len();
        // wk's rows follow wq's (a whole number of 32-byte units here), so
        // with the F16 cache one GEMV makes q and kscr, except where the
        // last layer's query moves behind the prompt test; likewise gate, up.
        assert_eq!(wk.addr, wq.addr + dim * wq.rb, "attn_k follows attn_q");
        assert_eq!(w3.addr, w1.addr + hidden * w1.rb, "ffn_up follows ffn_gate");
        let qk = o.kv_f16 && !last;
        let step2 = |l: &mut Listing, qk: bool| {
            l.i(SETN, 0, 0, dim, if qk { dim + kvd } else { dim }, 0);
            l.i(GEMV, wq.fmt, 0, wq.addr, xb, q);
        };
        let step5 = |l: &mut Listing| {
            l.i(SETN, 0, 0, dim, hd, 0);
            l.i(ROPE, 0, 0, q, a(2), 0);
        };
        l.i(SETN, 0, 0, dim, 0, eps);
        l.i(RMSNORM, 0, 0, x, *an, xb);
        if !last {
            step2(&mut l, qk);
        }
        l.i(SETN, 0, 0, dim, kvd, 0);
        l.i(LEA, 3, POS, kc[i], 0, esz as u32 * kvd);
        l.i(LEA, 4, POS, vc[i], 0, esz as u32 * kvd);
        if o.kv_f16 {
            if !qk {
                l.i(GEMV, wk.fmt, 0, wk.addr, xb, kscr);
            }
            l.i(GEMV, wv.fmt, 2, wv.addr, xb, a(4));
        } else {
            l.i(GEMV, wk.fmt, 0, wk.addr, xb, a(3));
            l.i(GEMV, wv.fmt, 0, wv.addr, xb, a(4));
        }
        if !last {
            step5(&mut l);
        }
        l.i(SETN, 0, 0, kvd, hd, 0);
        if o.kv_f16 {
            l.i(ROPE, 0, 0, kscr, a(2), 0);
            l.i(CVT16, 0, 0, kscr, 0, a(3));
        } else {
            l.i(ROPE, 0, 0, a(3), a(2), 0);
        }
        if last {
            prompt_test(&mut l);
            step2(&mut l, false);
            step5(&mut l);
        }
        l.i(ATTN, POS, 0, blocks[i], q, att);
        l.i(SETN, 0, 0, dim, dim, 0);
        l.i(GEMV, wo.fmt, 1, wo.addr, att, x);
        l.i(SETN, 0, 0, dim, 0, eps);
        l.i(RMSNORM, 0, 0, x, *fnm, xb);
        l.i(SETN, 0, 0, dim, 2 * hidden, 0);
        l.i(GEMV, w1.fmt, 0, w1.addr, xb, gate);
        l.i(SETN, 0, 0, hidden, 0, 0);
        l.i(SILUMUL, 0, 0, gate, up, hb);
        l.i(SETN, 0, 0, hidden, dim, 0);
        l.i(GEMV, w2.fmt, 1, w2.addr, hb, x);
    }
    l.i(SETN, 0, 0, dim, 0, eps);
    l.i(RMSNORM, 0, 0, x, onorm, xb);
    l.i(SETN, 0, 0, dim, vocab, 0);
    l.i(GEMV, cls.fmt, 0, cls.addr, xb, logits);
    l.i(SETN, 0, 0, vocab, 0, 0);
    l.i(ARGMAX, NEXT, 0, logits, 0, 0);
    epilogue(&mut l, o.all_logits);
    check_script(img, PAYLOAD, slots, &l);
    out.image
}

#[test]
fn llama_gqa_untied_f32_f16_kv() {
    let m = ModelOpts::llama();
    let img = check_llama(&m, &opts(64, Policy::Keep, true), 0xC00_0000);
    assert_eq!(header(&img).desc, "llama 256d 2L 8H [General]");
}

#[test]
fn llama_tied_q8_0_f32_kv() {
    let m = ModelOpts::llama()
        .with_wtype(GgmlType::Q8_0)
        .with_tied(true);
    check_llama(&m, &opts(64, Policy::Keep, false), 0xC00_0000);
}

#[test]
fn llama_and_gpt2_with_all_logits_run_the_full_pass_at_every_position() {
    for kv_f16 in [true, false] {
        let o = Options {
            all_logits: true,
            ..opts(64, Policy::Keep, kv_f16)
        };
        check_llama(&ModelOpts::llama(), &o, 0xC00_0000);
        let o = Options { ctx: Some(48), ..o };
        check_gpt2(&ModelOpts::gpt2(), &o, 0xC00_0000);
    }
}

#[test]
fn llama_repacked_to_q4_0_and_mixed() {
    let m = ModelOpts::llama().with_wtype(GgmlType::F16);
    check_llama(&m, &opts(32, Policy::All(GgmlType::Q4_0), true), 0xC00_0000);
    check_llama(&m, &opts(32, Policy::Mixed, true), 0xC00_0000);
}

#[test]
fn llama_q4_k_source_falls_back_to_q8_0() {
    let m = ModelOpts::llama().with_wtype(GgmlType::Q4K).with_tied(true);
    let (_d, g) = open(&models::build(&m));
    let out = convert(&g, &opts(32, Policy::Keep, true)).unwrap();
    let embd = g.tensor("token_embd.weight").unwrap();
    let st = out
        .report
        .stored
        .iter()
        .find(|s| s.name == "token_embd.weight")
        .unwrap();
    assert_eq!(
        (st.src, st.dst, st.repacked(), st.lossy()),
        (GgmlType::Q4K, GgmlType::Q8_0, true, false)
    );
    // The stored Q8_0 rows are Q8_0 of the dequantised Q4_K rows.
    let mut f = vec![0f32; 256 * 400];
    assert!(ssnail_format::dequant::dequantize(
        GgmlType::Q4K,
        g.data(embd),
        &mut f
    ));
    let mut want = Vec::new();
    ssnail_format::ggml::quantize_native(GgmlType::Q8_0, &f, &mut want);
    let vt = ImageTables::build(&Vocab::from_gguf(&g).unwrap());
    let mut w = Walk::new(64 + 64 * 2, 0xC00_0000);
    for len in [
        vt.vocab_table.len(),
        vt.index.len(),
        vt.priority.len(),
        1024,
        36,
    ] {
        w.place(len);
    }
    let at = w.place(want.len());
    same(
        bytes_at(&out.image, at, want.len()),
        &want,
        "Q8_0 of the dequantised Q4_K embedding",
    );
}

/// §10.2 layouts: the boundary moved to $800E001 (as upstream's tests did)
/// pushes a blob up to it, unaligned; nothing straddles it.
#[test]
fn llama_boundary_rule_with_moved_boundary() {
    let m = ModelOpts::llama().with_wtype(GgmlType::Q8_0);
    let normal = check_llama(&m, &opts(32, Policy::Keep, true), 0xC00_0000);
    let moved = check_llama(&m, &opts(32, Policy::Keep, true), 0x800_E001);
    assert!(
        moved.len() > normal.len(),
        "the 72 MB layout grows when a tensor moves to the boundary"
    );
}

fn check_gpt2(m: &ModelOpts, o: &Options, boundary: u32) -> Vec<u8> {
    let (_d, g) = open(&models::build(m));
    let o = Options {
        boundary,
        ..o.clone()
    };
    let out = convert(&g, &o).unwrap();
    let img = &out.image;
    let h = header(img);
    let (dim, layers, heads, hidden, ctx) = (128u32, 2u32, 4u32, 512u32, o.ctx.unwrap());
    let vocab = g.tensor("token_embd.weight").unwrap().shape[1] as u32;
    let slots = 64 + 64 * layers as usize;
    let mut w = Walk::new(slots, boundary);
    check_tables(&mut w, &g, img, h.vocab, h.tokenizer);
    let t = |n: &str| g.tensor(n).unwrap_or_else(|| panic!("{n}"));
    let dst = |ti: &TensorInfo| match o.policy {
        Policy::All(f) => f,
        _ => ti.ty,
    };
    let mat = |w: &mut Walk, n: &str| place_matrix(w, &g, img, t(n), dst(t(n)));
    let wte = mat(&mut w, "token_embd.weight");
    let wpe = mat(&mut w, "position_embd.weight");
    let mut ls = Vec::new();
    for i in 0..layers {
        let p = |s: &str| format!("blk.{i}.{s}");
        let ln1 = place_vectors(
            &mut w,
            &g,
            img,
            &[t(&p("attn_norm.weight")), t(&p("attn_norm.bias"))],
        );
        let ln2 = place_vectors(
            &mut w,
            &g,
            img,
            &[t(&p("ffn_norm.weight")), t(&p("ffn_norm.bias"))],
        );
        let qkv = mat(&mut w, &p("attn_qkv.weight"));
        let bqkv = place_vectors(&mut w, &g, img, &[t(&p("attn_qkv.bias"))]);
        let wo = mat(&mut w, &p("attn_output.weight"));
        let bo = place_vectors(&mut w, &g, img, &[t(&p("attn_output.bias"))]);
        let wup = mat(&mut w, &p("ffn_up.weight"));
        let bup = place_vectors(&mut w, &g, img, &[t(&p("ffn_up.bias"))]);
        let wdn = mat(&mut w, &p("ffn_down.weight"));
        let bdn = place_vectors(&mut w, &g, img, &[t(&p("ffn_down.bias"))]);
        ls.push((ln1, ln2, qkv, bqkv, wo, bo, wup, bup, wdn, bdn));
    }
    let lnf = place_vectors(
        &mut w,
        &g,
        img,
        &[t("output_norm.weight"), t("output_norm.bias")],
    );
    let cls = if m.tied {
        None
    } else {
        Some(mat(&mut w, "output.weight"))
    };
    let cls = cls.as_ref().unwrap_or(&wte);
    let blocks: Vec<u32> = (0..layers).map(|_| w.place(32)).collect();
    assert_eq!(h.payload_len, w.payload_len());

    let esz = if o.kv_f16 { 2u64 } else { 4 };
    let mut s = Scr((PAYLOAD + h.payload_len) as u64);
    let d4 = 4 * dim as u64;
    let [x, xb, q, att, tmp, kscr, vscr] = [0; 7].map(|_| s.alloc(d4));
    let hb = s.alloc(4 * hidden as u64);
    let logits = s.alloc(4 * vocab as u64);
    let kc: Vec<u32> = (0..layers)
        .map(|_| s.alloc(esz * (ctx * dim) as u64))
        .collect();
    let vc: Vec<u32> = (0..layers)
        .map(|_| s.alloc(esz * (ctx * dim) as u64))
        .collect();
    assert_eq!(h.mem_needed as u64, s.0 - BASE as u64, "H_MEM_NEEDED");
    let eot = Vocab::from_gguf(&g).unwrap().eos_id.unwrap();
    assert_eq!(
        (h.flags, h.arch, h.output, h.out_dim, h.ctx, h.eos),
        (0, 1, logits, vocab, ctx, eot)
    );
    for i in 0..layers as usize {
        assert_eq!(
            attn_block(img, blocks[i]),
            [
                kc[i],
                vc[i],
                heads,
                heads,
                dim / heads,
                o.kv_f16 as u32,
                0,
                0
            ]
        );
    }

    let eps = 1e-5f32.to_bits();
    let mut l = Listing::new(PAYLOAD);
    prologue(&mut l, eot, ctx);
    l.i(LEA, 0, POS, TOKENS, 0, 4);
    l.i(LDR, TOK, 0, a(0), 0, 0);
    l.i(SETN, 0, 0, dim, 0, 0);
    l.i(LEA, 1, TOK, wte.addr, 0, wte.rb);
    l.i(DEQROW, wte.fmt, 0, a(1), 0, x);
    l.i(LEA, 1, POS, wpe.addr, 0, wpe.rb);
    l.i(DEQROW, wpe.fmt, 0, a(1), 0, tmp);
    l.i(VADD, 0, 0, x, tmp, x);
    let (kd, vd) = if o.kv_f16 { (kscr, vscr) } else { (a(3), a(4)) };
    for (i, (ln1, ln2, qkv, bqkv, wo, bo, wup, bup, wdn, bdn)) in ls.iter().enumerate() {
        // The last layer without --all-logits: q's GEMV and VADD after the prompt test.
        let last = !o.all_logits && i + 1 == ls.len();
        l.i(SETN, 0, 0, dim, 0, eps);
        l.i(LAYERNORM, 0, 0, x, *ln1, xb);
        l.i(SETN, 0, 0, dim, dim, 0);
        if !last {
            l.i(GEMV, qkv.fmt, 0, qkv.addr, xb, q);
        }
        l.i(LEA, 3, POS, kc[i], 0, esz as u32 * dim);
        l.i(LEA, 4, POS, vc[i], 0, esz as u32 * dim);
        l.i(GEMV, qkv.fmt, 0, qkv.addr + dim * qkv.rb, xb, kd);
        l.i(GEMV, qkv.fmt, 0, qkv.addr + 2 * dim * qkv.rb, xb, vd);
        l.i(SETN, 0, 0, dim, 0, 0);
        if !last {
            l.i(VADD, 0, 0, q, *bqkv, q);
        }
        l.i(VADD, 0, 0, kd, bqkv + 4 * dim, kd);
        l.i(VADD, 0, 0, vd, bqkv + 8 * dim, vd);
        if o.kv_f16 {
            l.i(CVT16, 0, 0, kscr, 0, a(3));
            l.i(CVT16, 0, 0, vscr, 0, a(4));
        }
        if last {
            prompt_test(&mut l);
            l.i(SETN, 0, 0, dim, dim, 0);
            l.i(GEMV, qkv.fmt, 0, qkv.addr, xb, q);
            l.i(SETN, 0, 0, dim, 0, 0);
            l.i(VADD, 0, 0, q, *bqkv, q);
        }
        l.i(ATTN, POS, 0, blocks[i], q, att);
        l.i(SETN, 0, 0, dim, dim, 0);
        l.i(GEMV, wo.fmt, 1, wo.addr, att, x);
        l.i(SETN, 0, 0, dim, 0, eps);
        l.i(VADD, 0, 0, x, *bo, x);
        l.i(LAYERNORM, 0, 0, x, *ln2, xb);
        l.i(SETN, 0, 0, dim, hidden, 0);
        l.i(GEMV, wup.fmt, 0, wup.addr, xb, hb);
        l.i(SETN, 0, 0, hidden, 0, 0);
        l.i(VADD, 0, 0, hb, *bup, hb);
        l.i(GELU, 0, 0, hb, 0, hb);
        l.i(SETN, 0, 0, hidden, dim, 0);
        l.i(GEMV, wdn.fmt, 1, wdn.addr, hb, x);
        l.i(SETN, 0, 0, dim, 0, 0);
        l.i(VADD, 0, 0, x, *bdn, x);
    }
    l.i(SETN, 0, 0, dim, 0, eps);
    l.i(LAYERNORM, 0, 0, x, lnf, xb);
    l.i(SETN, 0, 0, dim, vocab, 0);
    l.i(GEMV, cls.fmt, 0, cls.addr, xb, logits);
    l.i(SETN, 0, 0, vocab, 0, 0);
    l.i(ARGMAX, NEXT, 0, logits, 0, 0);
    epilogue(&mut l, o.all_logits);
    check_script(img, PAYLOAD, slots, &l);
    out.image
}

#[test]
fn gpt2_fused_qkv_tied_f32_and_untied_q8_0() {
    check_gpt2(
        &ModelOpts::gpt2(),
        &opts(48, Policy::Keep, true),
        0xC00_0000,
    );
    let m = ModelOpts::gpt2()
        .with_wtype(GgmlType::Q8_0)
        .with_tied(false);
    check_gpt2(&m, &opts(48, Policy::Keep, false), 0xC00_0000);
    check_gpt2(
        &ModelOpts::gpt2(),
        &opts(48, Policy::All(GgmlType::Q4_0), true),
        0xC00_0000,
    );
}

/// §10.2 layouts: 8, 64 and 72 MB images are byte-identical; with the
/// boundary at $800E001 the image grows and the script still matches.
#[test]
fn gpt2_and_bert_memory_sizes_and_moved_boundary() {
    type Check = fn(&ModelOpts, &Options, u32) -> Vec<u8>;
    for (m, check) in [
        (ModelOpts::gpt2(), check_gpt2 as Check),
        (ModelOpts::bert(), check_bert as Check),
    ] {
        let m = m.with_wtype(GgmlType::Q8_0);
        let (_d, g) = open(&models::build(&m));
        let imgs: Vec<Vec<u8>> = [8.0, 64.0, 72.0]
            .iter()
            .map(|mb| {
                convert(
                    &g,
                    &Options {
                        mem_mb: *mb,
                        ..opts(32, Policy::Keep, true)
                    },
                )
                .unwrap()
                .image
            })
            .collect();
        assert_eq!(imgs[0], imgs[1], "{}", m.arch);
        assert_eq!(imgs[0], imgs[2], "{}", m.arch);
        let moved = check(&m, &opts(32, Policy::Keep, true), 0x800_E001);
        assert!(moved.len() > imgs[2].len(), "{}", m.arch);
    }
}

fn check_bert(m: &ModelOpts, o: &Options, boundary: u32) -> Vec<u8> {
    let (_d, g) = open(&models::build(m));
    let o = Options {
        boundary,
        ..o.clone()
    };
    let out = convert(&g, &o).unwrap();
    let img = &out.image;
    let h = header(img);
    let (dim, layers, heads, hidden) = (128u32, 2u32, 4u32, 256u32);
    let ctx = o.ctx.unwrap_or(32); // default min(context_length 32, 128)
    assert_eq!(h.ctx, ctx);
    let slots = 64 + 64 * layers as usize;
    let mut w = Walk::new(slots, boundary);
    check_tables(&mut w, &g, img, h.vocab, h.tokenizer);
    let t = |n: &str| g.tensor(n).unwrap_or_else(|| panic!("{n}"));
    let mat = |w: &mut Walk, n: &str| place_matrix(w, &g, img, t(n), t(n).ty);
    let tok = mat(&mut w, "token_embd.weight");
    let pos = mat(&mut w, "position_embd.weight");
    let types = m.token_types.then(|| mat(&mut w, "token_types.weight"));
    let enorm = place_vectors(
        &mut w,
        &g,
        img,
        &[t("token_embd_norm.weight"), t("token_embd_norm.bias")],
    );
    let mut ls = Vec::new();
    for i in 0..layers {
        let p = |s: &str| format!("blk.{i}.{s}");
        let wb = |w: &mut Walk, n: &str| {
            let m = mat(w, &p(&format!("{n}.weight")));
            let b = place_vectors(w, &g, img, &[t(&p(&format!("{n}.bias")))]);
            (m, b)
        };
        let q = wb(&mut w, "attn_q");
        let k = wb(&mut w, "attn_k");
        let v = wb(&mut w, "attn_v");
        let o_ = wb(&mut w, "attn_output");
        let ln1 = place_vectors(
            &mut w,
            &g,
            img,
            &[
                t(&p("attn_output_norm.weight")),
                t(&p("attn_output_norm.bias")),
            ],
        );
        let up = wb(&mut w, "ffn_up");
        let dn = wb(&mut w, "ffn_down");
        let ln2 = place_vectors(
            &mut w,
            &g,
            img,
            &[
                t(&p("layer_output_norm.weight")),
                t(&p("layer_output_norm.bias")),
            ],
        );
        ls.push((q, k, v, o_, ln1, up, dn, ln2));
    }
    let blocks: Vec<u32> = (0..layers).map(|_| w.place(32)).collect();
    assert_eq!(h.payload_len, w.payload_len());

    let esz = if o.kv_f16 { 2u64 } else { 4 };
    let mut s = Scr((PAYLOAD + h.payload_len) as u64);
    let rows = (ctx * dim) as u64;
    let (xs, qs, k, v) = (
        s.alloc(4 * rows),
        s.alloc(4 * rows),
        s.alloc(esz * rows),
        s.alloc(esz * rows),
    );
    let [att, tmp, kscr, vscr] = [0; 4].map(|_| s.alloc(4 * dim as u64));
    let hb = s.alloc(4 * hidden as u64);
    assert_eq!(h.mem_needed as u64, s.0 - BASE as u64, "H_MEM_NEEDED");
    assert_eq!(
        (h.flags, h.arch, h.output, h.out_dim),
        (1, 2, OUT_AREA, dim)
    );
    for b in &blocks {
        assert_eq!(
            attn_block(img, *b),
            [k, v, heads, heads, dim / heads, o.kv_f16 as u32, 0, 0]
        );
    }

    let eps = 1e-12f32.to_bits();
    let row = 4 * dim;
    let mut l = Listing::new(PAYLOAD);
    l.i(LI, GEN, 0, 0, 0, 0);
    l.i(STR, GEN, 0, RT + 0x4C, 0, 0);
    l.i(LDR, N, 0, RT + 0x44, 0, 0);
    l.i(LI, CTX, 0, 0, 0, ctx + 1);
    l.i(LI, REASON, 0, 0, 0, 3);
    l.br(BLT, N, CTX, "fits");
    l.br(BEQ, Z, Z, "done");
    l.label("fits");
    l.i(LI, REASON, 0, 0, 0, 1);
    l.br(BEQ, N, Z, "done");
    l.i(ADDI, POS1, N, 0, 0, 0xFFFF_FFFF);
    l.i(LI, T, 0, 0, 0, 0);
    l.label("emb");
    l.i(LEA, 0, T, TOKENS, 0, 4);
    l.i(LDR, TOK, 0, a(0), 0, 0);
    l.i(LEA, 6, T, xs, 0, row);
    l.i(SETN, 0, 0, dim, 0, eps);
    l.i(LEA, 1, TOK, tok.addr, 0, tok.rb);
    l.i(DEQROW, tok.fmt, 0, a(1), 0, a(6));
    l.i(LEA, 1, T, pos.addr, 0, pos.rb);
    l.i(DEQROW, pos.fmt, 0, a(1), 0, tmp);
    l.i(VADD, 0, 0, a(6), tmp, a(6));
    if let Some(tt) = &types {
        l.i(DEQROW, tt.fmt, 0, tt.addr, 0, tmp);
        l.i(VADD, 0, 0, a(6), tmp, a(6));
    }
    l.i(LAYERNORM, 0, 0, a(6), enorm, a(6));
    l.i(ADDI, T, T, 0, 0, 1);
    l.br(BLT, T, N, "emb");
    let (kd, vd) = if o.kv_f16 { (kscr, vscr) } else { (a(3), a(4)) };
    for (i, ((wq, bq), (wk, bk), (wv, bv), (wo, bo), ln1, (wup, bup), (wdn, bdn), ln2)) in
        ls.iter().enumerate()
    {
        let (qkv, attl) = (name(format!("qkv{i}")), name(format!("att{i}")));
        l.i(LI, T, 0, 0, 0, 0);
        l.label(qkv);
        l.i(LEA, 6, T, xs, 0, row);
        l.i(LEA, 7, T, qs, 0, row);
        l.i(LEA, 3, T, k, 0, esz as u32 * dim);
        l.i(LEA, 4, T, v, 0, esz as u32 * dim);
        l.i(SETN, 0, 0, dim, dim, 0);
        l.i(GEMV, wq.fmt, 0, wq.addr, a(6), a(7));
        l.i(GEMV, wk.fmt, 0, wk.addr, a(6), kd);
        l.i(GEMV, wv.fmt, 0, wv.addr, a(6), vd);
        l.i(VADD, 0, 0, a(7), *bq, a(7));
        l.i(VADD, 0, 0, kd, *bk, kd);
        l.i(VADD, 0, 0, vd, *bv, vd);
        if o.kv_f16 {
            l.i(CVT16, 0, 0, kscr, 0, a(3));
            l.i(CVT16, 0, 0, vscr, 0, a(4));
        }
        l.i(ADDI, T, T, 0, 0, 1);
        l.br(BLT, T, N, qkv);
        l.i(LI, T, 0, 0, 0, 0);
        l.label(attl);
        l.i(LEA, 6, T, xs, 0, row);
        l.i(LEA, 7, T, qs, 0, row);
        l.i(ATTN, POS1, 0, blocks[i], a(7), att);
        l.i(SETN, 0, 0, dim, dim, eps);
        l.i(GEMV, wo.fmt, 1, wo.addr, att, a(6));
        l.i(VADD, 0, 0, a(6), *bo, a(6));
        l.i(LAYERNORM, 0, 0, a(6), *ln1, a(6));
        l.i(SETN, 0, 0, dim, hidden, 0);
        l.i(GEMV, wup.fmt, 0, wup.addr, a(6), hb);
        l.i(SETN, 0, 0, hidden, 0, 0);
        l.i(VADD, 0, 0, hb, *bup, hb);
        l.i(GELU, 0, 0, hb, 0, hb);
        l.i(SETN, 0, 0, hidden, dim, 0);
        l.i(GEMV, wdn.fmt, 1, wdn.addr, hb, a(6));
        l.i(SETN, 0, 0, dim, 0, eps);
        l.i(VADD, 0, 0, a(6), *bdn, a(6));
        l.i(LAYERNORM, 0, 0, a(6), *ln2, a(6));
        l.i(ADDI, T, T, 0, 0, 1);
        l.br(BLT, T, N, attl);
    }
    l.i(SETN, 0, 0, dim, 0, 0);
    if m.pooling == 2 {
        l.i(COPY, 0, 0, xs, OUT_AREA, 4 * dim);
    } else {
        l.i(MEANROWS, N, 0, xs, 0, OUT_AREA);
    }
    l.i(LI, REASON, 0, 0, 0, 1);
    l.label("done");
    l.i(STR, REASON, 0, RT + 0x54, 0, 0);
    l.i(SYNC, 0, 0, 0, 0, 0);
    l.i(HALT, 0, 0, 0, 0, 0);
    check_script(img, PAYLOAD, slots, &l);
    out.image
}

#[test]
fn bert_mean_f32_default_context() {
    let o = Options {
        ctx: None,
        ..Options::default()
    };
    check_bert(&ModelOpts::bert(), &o, 0xC00_0000);
}

#[test]
fn bert_cls_q8_0_f32_kv_and_no_token_types() {
    let m = ModelOpts::bert().with_wtype(GgmlType::Q8_0).with_pooling(2);
    check_bert(&m, &opts(24, Policy::Keep, false), 0xC00_0000);
    let m = ModelOpts {
        token_types: false,
        ..ModelOpts::bert().with_wtype(GgmlType::F16)
    };
    check_bert(&m, &opts(32, Policy::Keep, true), 0x800_E001);
}

/// §10.6: descriptions with and without `general.name`, with `--type`.
#[test]
fn descriptions() {
    let desc = |m: &ModelOpts, ty: &str| {
        let (_d, g) = open(&models::build(m));
        let o = Options {
            ctx: Some(16),
            type_name: ty.into(),
            ..Options::default()
        };
        convert(&g, &o).unwrap().header.description()
    };
    assert_eq!(
        desc(&ModelOpts::llama(), "General"),
        "llama 256d 2L 8H [General]"
    );
    assert_eq!(
        desc(&ModelOpts::llama(), "Story"),
        "llama 256d 2L 8H [Story]"
    );
    assert_eq!(
        desc(&ModelOpts::llama().with_name("TinyTest"), "Story"),
        "TinyTest (llama) [Story]"
    );
    assert_eq!(desc(&ModelOpts::gpt2(), "Code"), "gpt2 128d 2L 4H [Code]");
    // Cut to 127 bytes (the cut may split a character), then NUL.
    let long = "é".repeat(100);
    let d = desc(&ModelOpts::llama().with_name(&long), "General");
    let (_d2, g) = open(&models::build(&ModelOpts::llama().with_name(&long)));
    let img = convert(
        &g,
        &Options {
            ctx: Some(16),
            ..Options::default()
        },
    )
    .unwrap()
    .image;
    assert_eq!(
        img[0x80 + 126],
        0xC3,
        "127th byte is the first half of an é"
    );
    assert_eq!(img[0x80 + 127], 0);
    assert!(d.starts_with("ééé"));
}
