//! The fuzz targets: every place a file from outside is read.
//!
//! | target    | input                                   | seeds                                  |
//! |-----------|-----------------------------------------|----------------------------------------|
//! | gguf      | a GGUF file: parse, hparams, vocab, convert, and the image tokenizer on the result | small llama, gpt2, bert GGUFs |
//! | image     | a .ssnail image: load through the port, tokenize, run the script (generate or encode) | their converted images |
//! | tokenizer | an image's memory (tables) + text        | tables-only images of the three kinds |
//! | import    | config.json, tokenizer.json, model.safetensors of a checkpoint | a tiny llama checkpoint |
//! | llama2c   | a llama2.c checkpoint and its tokenizer.bin (`import model.bin --tokenizer`) | a tiny shared and unshared checkpoint |
//! | mega65    | a PRG, or a D81 disk, for the headless MEGA65; or an image header (and a software core file header) for the SSNAIL MEGA65 program, checked to write nothing outside the image's memory and its own buffers | a small PRG; a D81 holding it and an image; the tiny llama image's header and the core's |

use crate::{Outcome, Target};
use ssnail_convert::{convert, Options};
use ssnail_format::ggml::GgmlType;
use ssnail_format::image::{h, BASE, HEADER_LEN};
use ssnail_gguf::Gguf;
use ssnail_synthetic::models::{self, ModelOpts};
use ssnail_tokenizer::image::{image_memory, ImageTokenizer};

/// Every target, by name.
pub fn all() -> Vec<Box<dyn Target>> {
    vec![
        Box::new(GgufTarget),
        Box::new(ImageTarget),
        Box::new(TokenizerTarget::default()),
        Box::new(ImportTarget::new()),
        Box::new(Llama2cTarget::new()),
        Box::new(Mega65Target),
    ]
}

pub fn by_name(name: &str) -> Option<Box<dyn Target>> {
    all().into_iter().find(|t| t.name() == name)
}

/// Whether a message holds a control character (a newline, an ANSI escape,
/// a tab …): what comes from a file must reach the terminal escaped.
fn raw_control(msg: &str) -> bool {
    msg.chars().any(char::is_control)
}

/// An error must be one line, without raw control characters, naming the
/// input file.
fn one_line_naming(depth: u32, msg: String, file: &str) -> Outcome {
    if raw_control(&msg) {
        return Outcome::Violation(format!("raw control characters in {msg:?}"));
    }
    if !msg.contains(file) {
        return Outcome::Violation(format!("an error that does not name {file}: {msg}"));
    }
    Outcome::Rejected(depth, msg)
}

/// The small models the seeds come from: the §10 architectures at a size
/// that converts and runs in well under a millisecond.
fn tiny(arch: &str) -> ModelOpts {
    let mut o = match arch {
        "llama" => ModelOpts::llama().with_wtype(GgmlType::Q8_0),
        "gpt2" => ModelOpts::gpt2(),
        _ => ModelOpts::bert().with_wtype(GgmlType::F16),
    };
    o.dim = 32;
    o.n_layers = 1;
    o.n_heads = 4;
    o.n_kv_heads = if arch == "llama" { 2 } else { 4 };
    o.hidden = 64;
    o.context_length = 32;
    o
}

fn tiny_gguf(arch: &str) -> Vec<u8> {
    models::build(&tiny(arch))
}

fn convert_opts() -> Options {
    Options {
        ctx: Some(16),
        ..Options::default()
    }
}

/// The converted image of a tiny model.
fn tiny_image(arch: &str) -> Vec<u8> {
    let g = Gguf::from_bytes("seed.gguf", tiny_gguf(arch)).expect("seed model parses");
    convert(&g, &convert_opts())
        .expect("seed model converts")
        .image
}

/// Texts every tokenizer run sees (ASCII, spaces, digits, punctuation, a
/// long word, non-ASCII).
const TEXTS: [&str; 4] = [
    "Hello world, it's 2024!",
    "  lots   of\tspace\n\nand 12345 digits",
    "unbelievablyunbelievablyunbelievable",
    "naïve café ☃",
];

pub struct GgufTarget;

impl Target for GgufTarget {
    fn name(&self) -> &'static str {
        "gguf"
    }
    fn seeds(&self) -> Vec<Vec<u8>> {
        ["llama", "gpt2", "bert"].map(tiny_gguf).to_vec()
    }
    fn focus(&self, input: &[u8]) -> Option<std::ops::Range<usize>> {
        // The header, key/values and tensor infos; tensor bytes matter less.
        Some(0..input.len().min(12 << 10))
    }
    fn run(&mut self, input: &[u8]) -> Outcome {
        const F: &str = "fuzz.gguf";
        let g = match Gguf::from_bytes(F, input.to_vec()) {
            Ok(g) => g,
            Err(e) => return one_line_naming(0, e.to_string(), F),
        };
        // What `ssnail info` lists.
        for (k, v) in &g.metadata {
            let line = format!("{} {}", ssnail_gguf::printable(k), v.summary());
            if raw_control(&line) {
                return Outcome::Violation(format!("raw control characters in {line:?}"));
            }
        }
        if let Err(e) = ssnail_tokenizer::vocab::Vocab::from_gguf(&g) {
            return one_line_naming(1, e.to_string(), F);
        }
        let c = match convert(&g, &convert_opts()) {
            Ok(c) => c,
            Err(e) if e.kind == ssnail_convert::ErrorKind::TooBig => {
                return Outcome::Rejected(2, "too big".into())
            }
            Err(e) => return one_line_naming(2, e.msg, F),
        };
        // A vocabulary convert accepts must be one the image tokenizer takes.
        let mem = match image_memory(&c.image) {
            Ok(m) => m,
            Err(e) => return Outcome::Violation(format!("converted image unreadable: {e}")),
        };
        match ImageTokenizer::new(&mem) {
            Ok(t) => {
                for s in TEXTS {
                    t.encode(s, true);
                }
                Outcome::Ok(3)
            }
            Err(e) => Outcome::Violation(format!(
                "convert accepted a vocabulary the image tokenizer rejects: {e}"
            )),
        }
    }
}

pub struct ImageTarget;

/// Prompts of the image target: short ones (a forward pass per token is
/// most of an accepted input's time) and one longer than the seeds'
/// context of 16 tokens.
const PROMPTS: [&str; 4] = ["Hi", "naïve ☃", "It's 42.", TEXTS[0]];

impl Target for ImageTarget {
    fn name(&self) -> &'static str {
        "image"
    }
    fn seeds(&self) -> Vec<Vec<u8>> {
        ["llama", "gpt2", "bert"].map(tiny_image).to_vec()
    }
    fn focus(&self, input: &[u8]) -> Option<std::ops::Range<usize>> {
        // Header, then the script and parameter blocks (the first 8 KiB of
        // the payload hold the code on these small images).
        Some(0..input.len().min(16 << 10))
    }
    fn mutate_structured(&self, rng: &mut crate::Rng, input: &mut Vec<u8>) -> bool {
        use ssnail_format::image::Header;
        use ssnail_format::isa::{Instr, Op, INSTR_LEN};
        let Ok(h) = Header::parse(input) else {
            return false;
        };
        // The script's file offset, through the segments (§1.7).
        let Some(seg) = h
            .segments()
            .into_iter()
            .find(|s| h.code >= s.address && ((h.code - s.address) as u64) < s.len)
        else {
            return false;
        };
        let code = (seg.file_offset + (h.code - seg.address) as u64) as usize;
        let slots = (input.len().saturating_sub(code) / INSTR_LEN as usize).min(2048);
        if slots == 0 {
            return false;
        }
        let at = code + INSTR_LEN as usize * rng.below(slots);
        let old = Instr::decode(&input[at..at + INSTR_LEN as usize]);
        // An operand: one the script already uses (a real address, size or
        // register), an interesting number, or a neighbour of either.
        let pick = |rng: &mut crate::Rng| -> u32 {
            let base = match rng.below(4) {
                0 => old.x,
                1 => old.y,
                2 => old.z,
                _ => crate::INTERESTING[rng.below(crate::INTERESTING.len())] as u32,
            };
            if rng.chance(3) {
                base.wrapping_add(rng.below(65) as u32).wrapping_sub(32)
            } else {
                base
            }
        };
        let mut new = old;
        match rng.below(4) {
            // Another valid opcode with the same operands.
            0 => new.opcode = Op::ALL[rng.below(Op::ALL.len())] as u8,
            // A SETN with new sizes (N0, N1, N2 size most instructions).
            1 => new = Instr::new(Op::SetN, 0, 0, pick(rng), pick(rng), pick(rng)),
            // One operand changed.
            2 => match rng.below(5) {
                0 => new.x = pick(rng),
                1 => new.y = pick(rng),
                2 => new.z = pick(rng),
                3 => new.a = rng.next_u64() as u8,
                _ => new.b = rng.next_u64() as u8,
            },
            // A whole new instruction.
            _ => {
                new = Instr::new(
                    Op::ALL[rng.below(Op::ALL.len())],
                    rng.below(16) as u8,
                    rng.below(16) as u8,
                    pick(rng),
                    pick(rng),
                    pick(rng),
                )
            }
        }
        input[at..at + INSTR_LEN as usize].copy_from_slice(&new.encode());
        true
    }
    fn run(&mut self, input: &[u8]) -> Outcome {
        use ssnail_core::{NoHost, Ssnail};
        let (mut dev, _) = match Ssnail::load_bytes(input, None) {
            Ok(d) => d,
            Err(e) => return one_line_naming(0, e.to_string(), "<image>"),
        };
        // Small budgets: the seeds need under a thousand instructions and
        // move 0.3–1.4 MB; a mutated script may loop over instructions
        // that each move all of memory, which only the work limit bounds.
        dev.machine.instr_limit = 200_000;
        dev.machine.work_limit = 64 << 20;
        dev.machine.set_threads(1);
        // Both numerics (hardware is run's and chat's default) and three
        // prompts, chosen by the input so that a replay repeats the run.
        let pick = input.iter().fold(0u8, |a, b| a ^ b);
        dev.machine.numerics = if pick & 1 == 1 {
            ssnail_core::Numerics::Hardware
        } else {
            ssnail_core::Numerics::Float
        };
        let text = PROMPTS[(pick >> 1) as usize % PROMPTS.len()];
        let prompt = match ImageTokenizer::new(dev.machine.mem()) {
            Ok(t) => t.encode(text, true),
            Err(e) => return Outcome::Rejected(1, e),
        };
        let prompt = if prompt.is_empty() { vec![1] } else { prompt };
        let h = dev.header();
        let r = if h.arch == ssnail_format::image::Arch::Bert as u32 {
            dev.encode(&prompt, &mut NoHost)
                .map(|e| e.output.len() as u32)
        } else {
            dev.generate(&prompt, 3, &mut NoHost)
                .map(|g| g.tokens.len() as u32)
        };
        // Host-side reads bounded by the image: the runtime block and the
        // pieces of whatever ids the script published.
        let rt = ssnail_core::host::runtime(&dev.machine);
        for id in ssnail_core::host::published(&dev.machine)
            .into_iter()
            .take(64)
        {
            dev.vocab_piece(id);
        }
        let _ = rt;
        match r {
            Ok(_) => Outcome::Ok(3),
            Err(e) => {
                let s = e.to_string();
                if raw_control(&s) {
                    return Outcome::Violation(format!("raw control characters in {s:?}"));
                }
                Outcome::Rejected(2, s)
            }
        }
    }
}

/// The memory of the three seed images.
fn tables() -> Vec<Vec<u8>> {
    ["llama", "gpt2", "bert"]
        .map(|a| image_memory(&tiny_image(a)).expect("seed image memory"))
        .to_vec()
}

/// Tables of the image tokenizer, and text.
#[derive(Default)]
pub struct TokenizerTarget {
    base: Vec<Vec<u8>>,
}

impl Target for TokenizerTarget {
    fn name(&self) -> &'static str {
        "tokenizer"
    }
    fn seeds(&self) -> Vec<Vec<u8>> {
        // Input: kind byte (which seed image) + image memory up to the end
        // of its tokenizer tables; bit 7 of the first byte = "mutate the
        // text only" mode, the rest of the input is then the text.
        let mut seeds: Vec<Vec<u8>> = tables()
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let mut v = vec![i as u8];
                v.extend_from_slice(m);
                v
            })
            .collect();
        for i in 0..3u8 {
            let mut v = vec![0x80 | i];
            v.extend_from_slice(TEXTS[1].as_bytes());
            seeds.push(v);
        }
        seeds
    }
    fn run(&mut self, input: &[u8]) -> Outcome {
        if self.base.is_empty() {
            self.base = tables();
        }
        let Some((&mode, rest)) = input.split_first() else {
            return Outcome::Rejected(0, "empty".into());
        };
        if mode & 0x80 != 0 {
            let mem = &self.base[(mode & 0x7F) as usize % self.base.len()];
            let t = ImageTokenizer::new(mem).expect("seed tables load");
            let text = String::from_utf8_lossy(rest);
            let ids = t.encode(&text, true);
            if ids.iter().any(|&id| id >= t.block.n_vocab) {
                return Outcome::Violation("an id outside the vocabulary".into());
            }
            return Outcome::Ok(2);
        }
        match ImageTokenizer::new(rest) {
            Ok(t) => {
                for s in TEXTS {
                    t.encode(s, true);
                }
                Outcome::Ok(1)
            }
            Err(e) => Outcome::Rejected(0, e),
        }
    }
}

/// A Hugging Face checkpoint directory: the input holds config.json,
/// tokenizer.json and model.safetensors, each behind a u32 length.
pub struct ImportTarget {
    /// The checkpoint directory the input is unpacked into.
    dir: tempfile::TempDir,
    /// Where the GGUF goes: not in the checkpoint directory, whose files are
    /// all inputs of `import` (an output among them is refused).
    out: tempfile::TempDir,
    /// What the three files hold now: a mutation usually changes one of
    /// them, and writing the others again was a third of the time.
    written: [Option<Vec<u8>>; 3],
}

/// A temporary directory in memory when the system has one (`/dev/shm`):
/// each input writes three files and `import` syncs its output, which on a
/// disk costs more than the import itself.
fn scratch_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("ssnail-fuzz-")
        .tempdir_in("/dev/shm")
        .or_else(|_| tempfile::tempdir())
        .expect("a temporary directory")
}

impl ImportTarget {
    pub fn new() -> ImportTarget {
        ImportTarget {
            dir: scratch_dir(),
            out: scratch_dir(),
            written: [None, None, None],
        }
    }
}

impl Default for ImportTarget {
    fn default() -> Self {
        ImportTarget::new()
    }
}

/// Pack files as (u32 length, bytes)…; the last takes the rest.
fn pack(files: &[&[u8]]) -> Vec<u8> {
    let mut v = Vec::new();
    for (i, f) in files.iter().enumerate() {
        if i + 1 < files.len() {
            v.extend_from_slice(&(f.len() as u32).to_le_bytes());
        }
        v.extend_from_slice(f);
    }
    v
}

fn unpack(b: &[u8], n: usize) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut rest = b;
    for i in 0..n {
        if i + 1 == n {
            out.push(rest);
            break;
        }
        let len = rest
            .get(..4)
            .map(|l| u32::from_le_bytes(l.try_into().unwrap_or_default()) as usize)
            .unwrap_or(0)
            .min(rest.len().saturating_sub(4));
        let body = rest.get(4..4 + len).unwrap_or(&[]);
        out.push(body);
        rest = rest.get(4 + len..).unwrap_or(&[]);
    }
    out
}

/// A tiny checkpoint of one of the three architectures `import` reads
/// (llama, gpt2, bert): dim 8, 1 layer, 2 heads (llama: 1 KV head), F32
/// tensors under the Hugging Face names; a byte-level BPE vocabulary of 262
/// tokens (llama, gpt2) or a WordPiece one of 39 (bert).
fn tiny_checkpoint(arch: &str) -> Vec<u8> {
    use serde_json::json;
    let (dim, hidden, ctx) = (8usize, 16usize, 64usize);
    let mut vocab = serde_json::Map::new();
    let tok = if arch == "bert" {
        let specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"];
        let words = ["hello", "world", "the", "an", "##s", "##ing", ",", "."];
        let letters = ('a'..='z').map(String::from);
        for (i, t) in specials
            .iter()
            .map(|s| s.to_string())
            .chain(words.iter().map(|s| s.to_string()))
            .chain(letters)
            .enumerate()
        {
            vocab.insert(t, json!(i));
        }
        json!({
            "version": "1.0",
            "added_tokens": specials.iter().enumerate()
                .map(|(i, s)| json!({"id": i, "content": s, "special": true}))
                .collect::<Vec<_>>(),
            "normalizer": {"type": "BertNormalizer", "lowercase": true},
            "pre_tokenizer": {"type": "BertPreTokenizer"},
            "model": {"type": "WordPiece", "unk_token": "[UNK]", "vocab": vocab}
        })
    } else {
        vocab.insert("<|endoftext|>".into(), json!(0));
        for b in 0..=255u8 {
            vocab.insert(
                ssnail_tokenizer::gpt2_bytes::byte_to_char(b).to_string(),
                json!(b as u32 + 1),
            );
        }
        let merges = [("h", "e"), ("l", "l"), ("he", "ll"), ("Ġ", "w"), ("o", "r")];
        for (i, (a, b)) in merges.iter().enumerate() {
            vocab.insert(format!("{a}{b}"), json!(257 + i));
        }
        json!({
            "version": "1.0",
            "added_tokens": [{"id": 0, "content": "<|endoftext|>", "special": true}],
            "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false},
            "model": {"type": "BPE", "vocab": vocab,
                      "merges": merges.iter().map(|(a, b)| format!("{a} {b}")).collect::<Vec<_>>()}
        })
    };
    let n_vocab = vocab.len();
    let (cfg, shapes): (_, Vec<(String, Vec<usize>)>) = match arch {
        "llama" => {
            let kv = 4;
            let p = |s: &str| format!("model.layers.0.{s}");
            (
                json!({
                    "architectures": ["LlamaForCausalLM"], "model_type": "llama",
                    "hidden_size": dim, "intermediate_size": hidden,
                    "num_attention_heads": 2, "num_key_value_heads": 1,
                    "num_hidden_layers": 1, "max_position_embeddings": ctx,
                    "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "vocab_size": n_vocab,
                    "bos_token_id": 0, "eos_token_id": 0, "tie_word_embeddings": false
                }),
                vec![
                    ("model.embed_tokens.weight".into(), vec![n_vocab, dim]),
                    ("model.norm.weight".into(), vec![dim]),
                    ("lm_head.weight".into(), vec![n_vocab, dim]),
                    (p("input_layernorm.weight"), vec![dim]),
                    (p("self_attn.q_proj.weight"), vec![dim, dim]),
                    (p("self_attn.k_proj.weight"), vec![kv, dim]),
                    (p("self_attn.v_proj.weight"), vec![kv, dim]),
                    (p("self_attn.o_proj.weight"), vec![dim, dim]),
                    (p("post_attention_layernorm.weight"), vec![dim]),
                    (p("mlp.gate_proj.weight"), vec![hidden, dim]),
                    (p("mlp.up_proj.weight"), vec![hidden, dim]),
                    (p("mlp.down_proj.weight"), vec![dim, hidden]),
                ],
            )
        }
        "gpt2" => {
            // Conv1D weights are stored [in][out].
            let mut shapes: Vec<(String, Vec<usize>)> = vec![
                ("wte.weight".into(), vec![n_vocab, dim]),
                ("wpe.weight".into(), vec![ctx, dim]),
                ("ln_f.weight".into(), vec![dim]),
                ("ln_f.bias".into(), vec![dim]),
            ];
            for (m, w) in [
                ("ln_1", vec![dim]),
                ("attn.c_attn", vec![dim, 3 * dim]),
                ("attn.c_proj", vec![dim, dim]),
                ("ln_2", vec![dim]),
                ("mlp.c_fc", vec![dim, 4 * dim]),
                ("mlp.c_proj", vec![4 * dim, dim]),
            ] {
                let out = *w.last().unwrap_or(&dim);
                shapes.push((format!("h.0.{m}.weight"), w));
                shapes.push((format!("h.0.{m}.bias"), vec![out]));
            }
            (
                json!({
                    "architectures": ["GPT2LMHeadModel"], "model_type": "gpt2",
                    "n_ctx": ctx, "n_positions": ctx, "n_embd": dim, "n_head": 2,
                    "n_layer": 1, "vocab_size": n_vocab, "layer_norm_epsilon": 1e-5
                }),
                shapes,
            )
        }
        _ => {
            let mut shapes: Vec<(String, Vec<usize>)> = vec![
                (
                    "embeddings.word_embeddings.weight".into(),
                    vec![n_vocab, dim],
                ),
                (
                    "embeddings.position_embeddings.weight".into(),
                    vec![ctx, dim],
                ),
                (
                    "embeddings.token_type_embeddings.weight".into(),
                    vec![2, dim],
                ),
                ("embeddings.LayerNorm.weight".into(), vec![dim]),
                ("embeddings.LayerNorm.bias".into(), vec![dim]),
            ];
            for (m, rows, cols) in [
                ("attention.self.query", dim, dim),
                ("attention.self.key", dim, dim),
                ("attention.self.value", dim, dim),
                ("attention.output.dense", dim, dim),
                ("attention.output.LayerNorm", dim, 0),
                ("intermediate.dense", hidden, dim),
                ("output.dense", dim, hidden),
                ("output.LayerNorm", dim, 0),
            ] {
                let w = if cols == 0 {
                    vec![rows]
                } else {
                    vec![rows, cols]
                };
                shapes.push((format!("encoder.layer.0.{m}.weight"), w));
                shapes.push((format!("encoder.layer.0.{m}.bias"), vec![rows]));
            }
            (
                json!({
                    "architectures": ["BertModel"], "model_type": "bert",
                    "hidden_size": dim, "num_hidden_layers": 1, "num_attention_heads": 2,
                    "intermediate_size": hidden, "max_position_embeddings": ctx,
                    "vocab_size": n_vocab, "type_vocab_size": 2, "layer_norm_eps": 1e-12
                }),
                shapes,
            )
        }
    };
    let data: Vec<Vec<u8>> = shapes
        .iter()
        .enumerate()
        .map(|(k, (_, s))| {
            let n: usize = s.iter().product();
            (0..n)
                .flat_map(|i| (((i * 7 + k * 13) % 17) as f32 / 17.0 - 0.4).to_le_bytes())
                .collect()
        })
        .collect();
    let views: Vec<(String, safetensors::tensor::TensorView)> = shapes
        .iter()
        .zip(&data)
        .map(|((n, s), d)| {
            (
                n.clone(),
                safetensors::tensor::TensorView::new(safetensors::Dtype::F32, s.clone(), d)
                    .expect("a valid view"),
            )
        })
        .collect();
    let st = safetensors::serialize(views, None).expect("serialise");
    pack(&[cfg.to_string().as_bytes(), tok.to_string().as_bytes(), &st])
}

/// Values a JSON number, string or container is replaced with: sizes at
/// and past the limits, negatives, fractions, the wrong type.
fn odd_json(rng: &mut crate::Rng, old: &serde_json::Value) -> serde_json::Value {
    use serde_json::{json, Value};
    match rng.below(8) {
        0 | 1 => json!(crate::INTERESTING[rng.below(crate::INTERESTING.len())]),
        2 => match old.as_u64() {
            // A neighbour of the number that was there.
            Some(n) => json!(n.wrapping_add(rng.below(9) as u64).wrapping_sub(4)),
            None => json!(-(rng.below(3) as i64) - 1),
        },
        3 => json!([-1.0, 0.5, 1e300, -0.0, 1e-300, 3.0][rng.below(6)]),
        4 => json!(["", "0", "32", "F32", "I64", "\u{1b}[2J", "a\nb", "llama"][rng.below(8)]),
        5 => [Value::Null, json!(true), json!(false)][rng.below(3)].clone(),
        6 => json!([old.clone(), old.clone()]),
        _ => json!({}),
    }
}

/// Parse `bytes` as JSON and change one value at a random depth: replace
/// it, or remove or repeat an element of the container it is in. None when
/// the bytes are not JSON.
fn mutate_json(rng: &mut crate::Rng, bytes: &[u8]) -> Option<Vec<u8>> {
    use serde_json::Value;
    let mut root: Value = serde_json::from_slice(bytes).ok()?;
    let mut node = &mut root;
    loop {
        let n = match &*node {
            Value::Object(m) => m.len(),
            Value::Array(a) => a.len(),
            _ => 0,
        };
        if n == 0 {
            *node = odd_json(rng, node);
            break;
        }
        let i = rng.below(n);
        // Stop at this container a third of the time and edit one of its
        // elements; otherwise go down into it.
        if rng.chance(3) {
            match node {
                Value::Object(m) => {
                    let key = m.keys().nth(i).cloned().unwrap_or_default();
                    if rng.chance(2) {
                        m.remove(&key);
                    } else if let Some(v) = m.get_mut(&key) {
                        *v = odd_json(rng, v);
                    }
                }
                Value::Array(a) => {
                    if rng.chance(2) {
                        a.remove(i);
                    } else {
                        let v = a[i].clone();
                        a.insert(i, v);
                    }
                }
                _ => {}
            }
            break;
        }
        node = match node {
            Value::Object(m) => m.values_mut().nth(i)?,
            Value::Array(a) => a.get_mut(i)?,
            _ => return None,
        };
    }
    serde_json::to_vec(&root).ok()
}

impl Target for ImportTarget {
    fn name(&self) -> &'static str {
        "import"
    }
    fn seeds(&self) -> Vec<Vec<u8>> {
        ["llama", "gpt2", "bert"].map(tiny_checkpoint).to_vec()
    }
    fn focus(&self, input: &[u8]) -> Option<std::ops::Range<usize>> {
        // The two JSON files and the safetensors header.
        let files = unpack(input, 3);
        let json = 8 + files[0].len() + files[1].len();
        let st_header = files[2]
            .get(..8)
            .map(|l| u64::from_le_bytes(l.try_into().unwrap_or_default()).min(1 << 16) as usize)
            .unwrap_or(0);
        Some(0..input.len().min(json + 8 + st_header))
    }
    fn mutate_structured(&self, rng: &mut crate::Rng, input: &mut Vec<u8>) -> bool {
        // One value of config.json, tokenizer.json or the safetensors
        // header replaced, removed or repeated, the JSON written back
        // valid: byte edits mostly break the syntax, and the checks after
        // parsing (sizes, ids, shapes, offsets) are what the issue names.
        let mut files: Vec<Vec<u8>> = unpack(input, 3).iter().map(|f| f.to_vec()).collect();
        let k = rng.below(3);
        let changed = if k < 2 {
            mutate_json(rng, &files[k]).map(|j| files[k] = j).is_some()
        } else {
            // The safetensors header: a u64 length, then JSON.
            let st = std::mem::take(&mut files[2]);
            let len = st
                .get(..8)
                .map(|l| u64::from_le_bytes(l.try_into().unwrap_or_default()))
                .unwrap_or(u64::MAX);
            match st.get(8..8usize.saturating_add(len.min(1 << 20) as usize)) {
                Some(h) if len <= 1 << 20 => mutate_json(rng, h)
                    .map(|j| {
                        let mut v = (j.len() as u64).to_le_bytes().to_vec();
                        v.extend_from_slice(&j);
                        v.extend_from_slice(&st[8 + len as usize..]);
                        files[2] = v;
                    })
                    .is_some(),
                _ => {
                    files[2] = st;
                    false
                }
            }
        };
        if changed {
            *input = pack(&[&files[0], &files[1], &files[2]]);
        }
        changed
    }
    fn run(&mut self, input: &[u8]) -> Outcome {
        let files = unpack(input, 3);
        let d = self.dir.path();
        for ((name, body), now) in ["config.json", "tokenizer.json", "model.safetensors"]
            .iter()
            .zip(&files)
            .zip(&mut self.written)
        {
            if now.as_deref() != Some(*body) {
                *now = None;
                if std::fs::write(d.join(name), body).is_err() {
                    return Outcome::Rejected(0, "cannot write".into());
                }
                *now = Some(body.to_vec());
            }
        }
        let out = self.out.path().join("out.gguf");
        match ssnail_hub::import::import(d, &out, ssnail_hub::import::OutType::F32, Some("fuzz")) {
            Ok(_) => {
                // What import wrote must open.
                match Gguf::open(&out) {
                    Ok(_) => Outcome::Ok(2),
                    Err(e) => Outcome::Violation(format!("import wrote an unreadable GGUF: {e}")),
                }
            }
            Err(e) => {
                let s = format!("{e:#}");
                if raw_control(&s) {
                    return Outcome::Violation(format!("raw control characters in {s:?}"));
                }
                if !s.contains(&d.display().to_string()) {
                    return Outcome::Violation(format!("an error that names no file: {s}"));
                }
                Outcome::Rejected(1, s.replace(&d.display().to_string(), ""))
            }
        }
    }
}

/// A llama2.c checkpoint and its tokenizer.bin, packed as two files.
pub struct Llama2cTarget {
    dir: tempfile::TempDir,
}

impl Llama2cTarget {
    pub fn new() -> Llama2cTarget {
        Llama2cTarget { dir: scratch_dir() }
    }
}

impl Default for Llama2cTarget {
    fn default() -> Self {
        Llama2cTarget::new()
    }
}

/// A tiny legacy llama2.c checkpoint (dim 8, hidden 16, 1 layer, 2 heads,
/// 1 KV head, 264 tokens, seq_len 4; `shared`: the classifier is the
/// embedding) and a tokenizer.bin for it: `<unk>`, "\n<s>\n", "\n</s>\n",
/// the 256 byte pieces, then five merged pieces.
fn tiny_llama2c(shared: bool) -> Vec<u8> {
    let (d, h, l, v, seq, head, kv) = (8i32, 16i32, 1i32, 264i32, 4i32, 4i32, 4i32);
    let mut ck = Vec::new();
    for x in [d, h, l, 2, 1, if shared { v } else { -v }, seq] {
        ck.extend_from_slice(&x.to_le_bytes());
    }
    let floats = v * d
        + l * d
        + l * (d * d + 2 * kv * d + d * d)
        + l * d
        + l * 3 * h * d
        + d
        + seq * head
        + if shared { 0 } else { v * d };
    for i in 0..floats {
        ck.extend_from_slice(&(((i * 37) % 101) as f32 / 101.0 - 0.5).to_le_bytes());
    }
    let mut pieces: Vec<String> = vec!["<unk>".into(), "\n<s>\n".into(), "\n</s>\n".into()];
    pieces.extend((0..=255).map(|b| format!("<0x{b:02X}>")));
    pieces.extend([" t", "he", " the", " a", "nd"].map(String::from));
    let mut tok = 7i32.to_le_bytes().to_vec();
    for (i, p) in pieces.iter().enumerate() {
        tok.extend_from_slice(&(-(i as f32)).to_le_bytes());
        tok.extend_from_slice(&(p.len() as i32).to_le_bytes());
        tok.extend_from_slice(p.as_bytes());
    }
    pack(&[&ck, &tok])
}

impl Target for Llama2cTarget {
    fn name(&self) -> &'static str {
        "llama2c"
    }
    fn seeds(&self) -> Vec<Vec<u8>> {
        vec![tiny_llama2c(true), tiny_llama2c(false)]
    }
    fn focus(&self, input: &[u8]) -> Option<std::ops::Range<usize>> {
        // The length prefix and the 28-byte config header.
        Some(0..input.len().min(32))
    }
    fn run(&mut self, input: &[u8]) -> Outcome {
        let files = unpack(input, 2);
        let d = self.dir.path();
        let (model, tok, out) = (d.join("model.bin"), d.join("tok.bin"), d.join("out.gguf"));
        if std::fs::write(&model, files[0]).is_err() || std::fs::write(&tok, files[1]).is_err() {
            return Outcome::Rejected(0, "cannot write".into());
        }
        use ssnail_hub::import::{llama2c, OutType};
        match llama2c::import(&model, &tok, &out, OutType::F32, None) {
            Ok(_) => match Gguf::open(&out) {
                Ok(_) => Outcome::Ok(2),
                Err(e) => Outcome::Violation(format!("import wrote an unreadable GGUF: {e}")),
            },
            Err(e) => {
                let s = format!("{e:#}");
                if raw_control(&s) || s.contains('\n') {
                    return Outcome::Violation(format!("not one clean line: {s:?}"));
                }
                let (m, t) = (model.display().to_string(), tok.display().to_string());
                if !s.contains(&m) && !s.contains(&t) {
                    return Outcome::Violation(format!("an error that names no file: {s}"));
                }
                Outcome::Rejected(1, s.replace(&m, "model.bin").replace(&t, "tok.bin"))
            }
        }
    }
}

/// The headless MEGA65 loading a PRG (input byte 0 % 4 = 0) or a D81 (1), or running the
/// SSNAIL MEGA65 program on an image whose header is the input's (2: with the FPGA core; 3: with
/// the software core, whose file's header is the input's too). The program runs must leave every
/// byte outside the image's memory and the program's own buffers as it was.
pub struct Mega65Target;

/// A PRG at $2001: `10 SYS 8210` then code that writes to the screen,
/// reads the keyboard and SSNAIL's ID register, and loops a while.
fn tiny_prg() -> Vec<u8> {
    let mut p = vec![0x01, 0x20];
    // BASIC line: link, line 10, SYS, "8210", end, end of program.
    p.extend_from_slice(&[0x0D, 0x20, 0x0A, 0x00, 0x9E]);
    p.extend_from_slice(b"8210");
    p.extend_from_slice(&[0x00, 0x00, 0x00]);
    // $2012 = 8210
    p.extend_from_slice(&[
        0xA2, 0x00, // LDX #0
        0xBD, 0x00, 0x20, // LDA $2000,X
        0x9D, 0x00, 0x08, // STA $0800,X (screen)
        0xE8, // INX
        0xD0, 0xF7, // BNE
        0xAD, 0x00, 0xD6, // LDA $D600
        0x60, // RTS
    ]);
    p
}

fn tiny_d81() -> Vec<u8> {
    let mut d = ssnail_disk::D81::new("FUZZ", *b"FZ").expect("a new disk");
    let _ = d.add_file("PROGRAM", ssnail_disk::FileType::Prg, &tiny_prg());
    let _ = d.add_file(
        "LLAMA.SSNAIL",
        ssnail_disk::FileType::Prg,
        &tiny_image("llama"),
    );
    d.into_bytes()
}

impl Target for Mega65Target {
    fn name(&self) -> &'static str {
        "mega65"
    }
    fn seeds(&self) -> Vec<Vec<u8>> {
        let mut prg = vec![0u8];
        prg.extend(tiny_prg());
        let mut d81 = vec![1u8];
        d81.extend(tiny_d81());
        let p = program();
        let mut fpga = vec![2u8];
        fpga.extend_from_slice(&p.image[..HEADER_LEN]);
        fpga.extend_from_slice(&p.core[..CORE_HEADER]);
        let mut soft = fpga.clone();
        soft[0] = 3;
        vec![prg, d81, fpga, soft]
    }
    fn focus(&self, input: &[u8]) -> Option<std::ops::Range<usize>> {
        match input.first().map(|b| b & 3) {
            // Directory track 40: header, BAM and directory sectors.
            Some(1) => {
                let t40 = 1 + 39 * 40 * 256;
                Some(t40..(t40 + 4 * 256).min(input.len()))
            }
            // The header fields from $08 to the tokenizer block's address ($78); the core
            // file's header after them mostly by mutate_structured (a changed one costs a
            // whole start of the program).
            Some(2 | 3) => Some(1 + 8..1 + 0x7C),
            _ => None,
        }
    }
    fn mutate_structured(&self, rng: &mut crate::Rng, input: &mut Vec<u8>) -> bool {
        if input.len() < 1 + HEADER_LEN + CORE_HEADER || input[0] & 2 == 0 {
            return false;
        }
        // An address or a size the program takes from the image (or a core header length) set
        // to a value that lands somewhere that matters.
        let p = program();
        let fields = [
            h::CODE,
            h::DATA,
            h::TOKENS,
            h::VOCAB,
            h::NVOCAB,
            h::MAXCTX,
            h::PAYLOAD_LEN,
            h::OUTPUT,
            h::OUTDIM,
            h::MEM_NEEDED,
            h::LOAD_BASE,
            h::TOKENIZER,
        ];
        if input[0] & 3 == 3 && rng.chance(4) {
            // The window part's length or the window bytes used (header +5, +17).
            let at = 1 + HEADER_LEN + if rng.chance(2) { 5 } else { 17 };
            let v = rng.next_u64() as u16;
            input[at..at + 2].copy_from_slice(&v.to_le_bytes());
            return true;
        }
        let at = 1 + fields[rng.below(fields.len())];
        let old = ssnail_format::rd_u32(input, at);
        let end = BASE + p.mem_needed;
        let v = match rng.below(8) {
            0 => rng.next_u64() as u32,
            1 => BASE + rng.below(16 << 20) as u32,
            2 => rng.below(0x8_0000) as u32, // chip RAM: screen, program, banks
            3 => 0xFFD_0000 + rng.below(0x1_0000) as u32, // I/O
            4 => end.wrapping_sub(rng.below(4096) as u32), // just inside the end
            5 => end.wrapping_add(rng.below(4096) as u32), // just past it
            6 => old
                .wrapping_add(rng.below(0x2000) as u32)
                .wrapping_sub(0x1000),
            _ => crate::INTERESTING[rng.below(crate::INTERESTING.len())] as u32,
        };
        input[at..at + 4].copy_from_slice(&v.to_le_bytes());
        true
    }
    fn run(&mut self, input: &[u8]) -> Outcome {
        use ssnail_mega65::Machine;
        let Some((&mode, rest)) = input.split_first() else {
            return Outcome::Rejected(0, "empty".into());
        };
        if mode & 2 != 0 {
            return run_program(mode & 1 == 1, rest);
        }
        let mut m = Machine::new();
        let prg = if mode & 1 == 0 {
            rest.to_vec()
        } else {
            let mut img = rest.to_vec();
            img.resize(ssnail_mega65::f011::D81_SIZE, 0);
            m.mount_d81(img.clone());
            match ssnail_mega65::prg::first_prg_on_disk(img) {
                Ok((_, p)) => p,
                Err(e) => return Outcome::Rejected(0, e),
            }
        };
        match m.load_prg(&prg, None) {
            Ok(_) => {}
            Err(e) => return Outcome::Rejected(1, e),
        }
        // Thousands of instructions: enough to run what was loaded, cheap per input.
        m.run(30_000);
        Outcome::Ok(2)
    }
}

/// Bytes of the software core file's header (mega65/include/softcore_abi.inc SC_HDR_END).
const CORE_HEADER: usize = 23;

/// The MEGA65 program, its software core and the image the program runs, built once; and the
/// software-core machine started once with them, idle in the model list (each input runs from a
/// copy of it unless it changes the core file's header, which the program reads at start).
struct Program {
    prg: Vec<u8>,
    /// The program's chat overlay (ssnail.ovl), on its disk and in the SD folder.
    ovl: Vec<u8>,
    /// Its code and read-only data, resident and in overlays (the harness's oracle from its
    /// ld65 map): no input may change them. (STARTUP also holds crt0's saved registers; DATA,
    /// FONT and BSS change.)
    code: ssnail_mega65_program::ProgramCode,
    core: Vec<u8>,
    image: Vec<u8>,
    mem_needed: u32,
    /// The SD card folder (the image is written there for each input).
    sd: tempfile::TempDir,
    soft_started: ssnail_mega65::Machine,
    /// chip RAM outside the program's, as the program found it
    not_its: Vec<Vec<u8>>,
}

/// Chip RAM the program does not own: banks 1-3 (BASIC's memory and the ROM's) and everything
/// from bank 6 on (docs/mega65-program.md, "Start-up and memory").
const NOT_THE_PROGRAMS: [std::ops::Range<usize>; 2] = [0x1_0000..0x4_0000, 0x6_0000..0x8_0000];

/// The machine with the program loaded and started (`soft`: without the SSNAIL device, the D81
/// holding `core`; else with the FPGA core and no disk), `keys` typed.
fn started(
    p_prg: &[u8],
    ovl: &[u8],
    core: Option<&[u8]>,
    sd: &std::path::Path,
    keys: &str,
) -> ssnail_mega65::Machine {
    use ssnail_core::{Board, Machine as Core, Ssnail};
    use ssnail_mega65::{KeyScript, Machine};
    let mut m = Machine::new();
    match core {
        Some(core) => {
            let mut d = ssnail_disk::D81::new("FUZZ", *b"FZ").expect("a new disk");
            let _ = d.add_file("ssnail", ssnail_disk::FileType::Prg, p_prg);
            let _ = d.add_file(
                ssnail_mega65_program::OVERLAY_FILE,
                ssnail_disk::FileType::Seq,
                ovl,
            );
            let _ = d.add_file("ssnail.core", ssnail_disk::FileType::Seq, core);
            m.mount_d81(d.into_bytes());
        }
        // The FPGA core with 1 MiB (the program believes the 8 MB of an R3 board's CAPS): its
        // memory past the image is checked whole.
        None => m.attach_ssnail(Ssnail::with_board(Core::new(1 << 20), Board::R3)),
    }
    m.set_sd_dir(sd.to_path_buf());
    let (_, entry) = m.load_prg(p_prg, None).expect("the program loads");
    m.keys.schedule(&KeyScript::parse(keys).expect("keys"), 0);
    m.start_at(entry);
    m
}

fn program() -> &'static Program {
    static P: std::sync::OnceLock<Program> = std::sync::OnceLock::new();
    P.get_or_init(|| {
        let dir = scratch_dir();
        let prg = ssnail_mega65_program::build_prg(dir.path()).unwrap_or_else(|e| panic!("{e}"));
        let code =
            ssnail_mega65_program::program_code(dir.path()).unwrap_or_else(|e| panic!("{e}"));
        let ovl =
            ssnail_mega65_program::built_overlay(dir.path()).unwrap_or_else(|e| panic!("{e}"));
        let core = ssnail_mega65_program::build_core(dir.path()).unwrap_or_else(|e| panic!("{e}"));
        let image = tiny_image("llama");
        let mem_needed = ssnail_format::rd_u32(&image, h::MEM_NEEDED);
        let sd = scratch_dir();
        std::fs::write(sd.path().join("M.SSNAIL"), &image).expect("the SD folder");
        // The FPGA runs have no disk: the overlay is beside the program on the SD card.
        std::fs::write(sd.path().join("SSNAIL.OVL"), &ovl).expect("the SD folder");
        let mut m = started(&prg, &ovl, Some(&core), sd.path(), "");
        let not_its = NOT_THE_PROGRAMS
            .iter()
            .map(|r| m.chip_ram()[r.clone()].to_vec())
            .collect();
        for _ in 0..200 {
            m.run(ssnail_mega65::CPU_HZ / 20);
            if String::from_utf8_lossy(&m.serial).contains("R: look again") {
                break;
            }
        }
        assert!(
            String::from_utf8_lossy(&m.serial).contains("The software core runs models"),
            "the fuzz target's software core did not start"
        );
        Program {
            prg,
            ovl,
            code,
            core,
            image,
            mem_needed,
            sd,
            soft_started: m,
            not_its,
        }
    })
}

/// Runs of the MEGA65 program (FPGA core, software core) in this process.
pub static PROGRAM_RUNS: [std::sync::atomic::AtomicU64; 2] = [
    std::sync::atomic::AtomicU64::new(0),
    std::sync::atomic::AtomicU64::new(0),
];

impl Drop for Mega65Target {
    /// How many of its inputs ran the MEGA65 program (the others were PRGs and D81s).
    fn drop(&mut self) {
        use std::sync::atomic::Ordering::Relaxed;
        let (f, s) = (PROGRAM_RUNS[0].load(Relaxed), PROGRAM_RUNS[1].load(Relaxed));
        if f + s > 0 {
            eprintln!("mega65: {} runs of the MEGA65 program ({f} on the FPGA core, {s} on the software core)", f + s);
        }
    }
}

/// One run of the MEGA65 program on the image with the input's header (and, on the software
/// core, the core file with the input's core header): the image is chosen, a line typed, the
/// job started. Afterwards nothing may have changed outside the image's memory ($8000000 + the
/// header's $38, when the image fits the board: nothing otherwise) and the program's own
/// buffers: chip RAM outside banks 0, 4 and 5, the program's code and read-only data, the attic
/// RAM past the image (software core) or what the load port wrote past it (FPGA core, whose
/// scripts v1 does not bound).
fn run_program(soft: bool, rest: &[u8]) -> Outcome {
    use ssnail_mega65::{KeyScript, CPU_HZ};
    use std::sync::atomic::Ordering::Relaxed;
    let p = program();
    PROGRAM_RUNS[soft as usize].fetch_add(1, Relaxed);
    if rest.len() < HEADER_LEN + CORE_HEADER {
        return Outcome::Rejected(0, "short".into());
    }
    let mut image = p.image.clone();
    image[..HEADER_LEN].copy_from_slice(&rest[..HEADER_LEN]);
    if std::fs::write(p.sd.path().join("M.SSNAIL"), &image).is_err() {
        return Outcome::Rejected(0, "cannot write the SD folder".into());
    }
    // Greedy (the sampler patches its own code), two tokens.
    let keys = "{RETURN}/temp 0{RETURN}/n 2{RETURN}a{RETURN}";
    let core_header = &rest[HEADER_LEN..HEADER_LEN + CORE_HEADER];
    let mut m = if !soft {
        started(&p.prg, &p.ovl, None, p.sd.path(), keys)
    } else if core_header == &p.core[..CORE_HEADER] {
        // From the list, once more (R) to see this input's image.
        let mut m = p.soft_started.clone();
        let at = m.cycles;
        m.keys
            .schedule(&KeyScript::parse(&format!("R{keys}")).expect("keys"), at);
        m
    } else {
        let mut core = p.core.clone();
        core[..CORE_HEADER].copy_from_slice(core_header);
        started(&p.prg, &p.ovl, Some(&core), p.sd.path(), keys)
    };
    let from = m.serial.len();
    let ends = [
        "tokens/s]",
        "SSNAIL error",
        "\nM.SSNAIL: ",
        "cannot run",
        "[the prompt",
        "context full",
        "too long",
        "Back to the model list",
        "cannot load",
    ];
    let mut depth = 1;
    let mut typed = None;
    for _ in 0..400 {
        m.run(CPU_HZ / 400);
        let t = String::from_utf8_lossy(&m.serial[from..]);
        if let Some(i) = ends.iter().position(|e| t.contains(e)) {
            depth = 3 + i as u32;
            break;
        }
        // The job's first slices after the line (the software core takes seconds for a token).
        if typed.is_none() && t.contains("> a") {
            typed = Some(m.instructions);
            depth = 2;
        }
        if typed.is_some_and(|at| m.instructions - at > 300_000) {
            break;
        }
    }
    // What may change and what may not.
    for (r, was) in NOT_THE_PROGRAMS.iter().zip(&p.not_its) {
        if let Some(i) = (0..r.len()).find(|&i| m.chip_ram()[r.start + i] != was[i]) {
            return Outcome::Violation(format!("chip RAM ${:05X} changed", r.start + i));
        }
    }
    if let Some(v) = p.code.changed(m.chip_ram()) {
        return Outcome::Violation(v);
    }
    let hd_mem = ssnail_format::rd_u32(&image, h::MEM_NEEDED);
    // An image larger than the board's 8 MB is not loaded: no byte of SSNAIL memory is its.
    let image_end = if hd_mem <= 8 << 20 {
        hd_mem as usize
    } else {
        0
    };
    let past = |off: usize, piece: &[u8]| -> Option<usize> {
        let from = image_end.saturating_sub(off).min(piece.len());
        piece[from..]
            .iter()
            .position(|&b| b != 0)
            .map(|i| off + from + i)
    };
    // On the software core every SSNAIL access (the program's DMA and the script's) is the
    // program's, bounded by $38 (sc_memend). The FPGA core of v1 has no such bound: its scripts
    // reach all of its memory, which holds nothing of the program's, so there only what the
    // program itself wrote through the load port must end within the image.
    let outside = if soft {
        m.ssnail
            .attic_pieces()
            .find_map(|(off, piece)| past(off as usize, piece))
            .map(|at| (at, "in attic RAM"))
    } else {
        m.ssnail.device.as_ref().and_then(|dev| {
            let end = dev.port.written_end.saturating_sub(BASE as u64) as usize;
            (end > image_end).then(|| (end - 1, "through the load port"))
        })
    };
    if let Some((at, how)) = outside {
        return Outcome::Violation(format!(
            "SSNAIL memory ${:07X} written {how}, past the image's memory (${:07X})",
            BASE as usize + at,
            BASE as usize + image_end
        ));
    }
    Outcome::Ok(depth)
}
