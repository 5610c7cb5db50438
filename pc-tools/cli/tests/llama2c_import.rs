//! llama2.c checkpoints through `ssnail import`, `convert` and `run`,
//! against what llama.cpp made of the same files.
//!
//! The checkpoints are exact-shape stand-ins for karpathy's tinyllamas
//! (ssnail_testkit::llama2c: stories260K with a shared classifier, the same
//! shape with an unshared one, stories15M), written here deterministically.
//! tests/data/llama2c/NAME.json holds llama.cpp's side, made by
//! tools/llama2c-reference.sh from the same bytes: its
//! convert-llama2c-to-ggml's tensors and keys (through gguf-py), and its
//! greedy decoding of "Once upon a time" with the five largest logits at
//! every position, which it gave identically on llama.cpp's GGUF and on
//! ours.

mod common;

use common::{ssnail, text};
use serde_json::{json, Value as J};
use sha2::{Digest, Sha256};
use ssnail_gguf::{Array, Gguf, Value};
use ssnail_testkit::llama2c::{self, Standin, STORIES15M, STORIES260K, STORIES260K_UNSHARED};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn reference(name: &str) -> J {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/llama2c")
        .join(format!("{name}.json"));
    serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap()
}

fn hex(d: impl AsRef<[u8]>) -> String {
    d.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

/// A key as tools/llama2c-reference/summary.py describes it: scalars by
/// value (f32 by its bits), arrays by type, length and the SHA-256 of their
/// elements in GGUF encoding.
fn describe(v: &Value) -> J {
    let mut h = Sha256::new();
    let (ty, len) = match v {
        Value::Str(s) => return json!({"type": "str", "value": s}),
        Value::U32(x) => return json!({"type": "u32", "value": x}),
        Value::I32(x) => return json!({"type": "i32", "value": x}),
        Value::F32(x) => return json!({"type": "f32", "bits": x.to_bits()}),
        Value::Bool(x) => return json!({"type": "bool", "value": x}),
        Value::Array(Array::Str(s)) => {
            for i in 0..s.len() {
                let t = s.get(i).unwrap().as_bytes();
                h.update((t.len() as u64).to_le_bytes());
                h.update(t);
            }
            ("array[str]", s.len())
        }
        Value::Array(Array::F32(a)) => {
            a.iter().for_each(|x| h.update(x.to_le_bytes()));
            ("array[f32]", a.len())
        }
        Value::Array(Array::I32(a)) => {
            a.iter().for_each(|x| h.update(x.to_le_bytes()));
            ("array[i32]", a.len())
        }
        other => panic!("no description for {other:?}"),
    };
    json!({"type": ty, "len": len, "sha256": hex(h.finalize())})
}

fn tensor_table(g: &Gguf) -> Vec<J> {
    g.tensors
        .iter()
        .map(|t| {
            json!({"name": t.name, "shape": t.shape, "type": t.ty.name(),
                   "sha256": hex(Sha256::digest(g.data(t)))})
        })
        .collect()
}

/// The stand-in written to `dir` and imported: (checkpoint, tokenizer, GGUF).
fn import(dir: &Path, s: &Standin) -> (PathBuf, PathBuf, PathBuf) {
    let (model, tok) = s.write(dir);
    let gguf = dir.join(format!("{}.gguf", s.name));
    let o = ssnail(&[
        "import",
        model.to_str().unwrap(),
        "--tokenizer",
        tok.to_str().unwrap(),
        "-o",
        gguf.to_str().unwrap(),
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}{err}");
    assert!(
        out.starts_with(&format!("wrote {}: llama model", gguf.display())),
        "{out}"
    );
    (model, tok, gguf)
}

/// Where our keys deliberately differ from llama.cpp's converter: the
/// model's name (llama.cpp writes "llama"), the context length (llama.cpp
/// writes its fixed 128, ours the checkpoint's seq_len), and two keys only
/// we write (the Hugging Face importer's general.type and file type).
fn expected_difference(key: &str, s: &Standin) -> Option<Option<J>> {
    match key {
        "general.name" => Some(Some(json!({"type": "str", "value": s.name}))),
        "llama.context_length" => Some(Some(json!({"type": "u32", "value": s.seq_len}))),
        "general.type" => Some(Some(json!({"type": "str", "value": "model"}))),
        "general.file_type" => Some(Some(json!({"type": "u32", "value": 0}))),
        _ => None,
    }
}

fn same_gguf_as_llama_cpp(s: &Standin) {
    let dir = tempfile::tempdir().unwrap();
    let (_, _, gguf) = import(dir.path(), s);
    let r = reference(s.name);
    let theirs = &r["llama_cpp_gguf"];
    let g = Gguf::open(&gguf).unwrap();

    // Tensors: the same names in the same order, shapes, types and bytes.
    let ours = tensor_table(&g);
    let want = theirs["tensors"].as_array().unwrap();
    let mut bad = Vec::new();
    for (i, w) in want.iter().enumerate() {
        match ours.get(i) {
            Some(o) if o == w => {}
            o => bad.push(format!("#{i}: llama.cpp {w}, ours {o:?}")),
        }
    }
    assert!(
        bad.is_empty() && ours.len() == want.len(),
        "{}: {} of {} tensors differ from llama.cpp's (ours: {}):\n{}",
        s.name,
        bad.len(),
        want.len(),
        ours.len(),
        bad.join("\n")
    );

    // Keys: llama.cpp's, with the same values, but for the listed ones.
    let ours: BTreeMap<&str, J> = g
        .metadata
        .iter()
        .map(|(k, v)| (k.as_str(), describe(v)))
        .collect();
    let mut bad = Vec::new();
    for (k, w) in theirs["keys"].as_object().unwrap() {
        let o = ours.get(k.as_str());
        let expect = match expected_difference(k, s) {
            Some(e) => e,
            None => Some(w.clone()),
        };
        if o != expect.as_ref() {
            bad.push(format!(
                "{k}: llama.cpp {w}, ours {o:?}, expected {expect:?}"
            ));
        }
    }
    for (k, o) in &ours {
        if theirs["keys"].get(k).is_none() && expected_difference(k, s) != Some(Some(o.clone())) {
            bad.push(format!("{k}: only ours, {o}"));
        }
    }
    assert!(
        bad.is_empty(),
        "{}: keys differ:\n{}",
        s.name,
        bad.join("\n")
    );
}

#[test]
fn stories260k_imports_to_llama_cpps_tensors_and_tokenizer_keys() {
    same_gguf_as_llama_cpp(&STORIES260K);
}

#[test]
fn an_unshared_classifier_imports_to_llama_cpps_tensors_and_tokenizer_keys() {
    same_gguf_as_llama_cpp(&STORIES260K_UNSHARED);
}

#[test]
fn stories15m_imports_to_llama_cpps_tensors_and_tokenizer_keys() {
    same_gguf_as_llama_cpp(&STORIES15M);
}

/// Largest difference allowed between our float-reference logits and
/// llama.cpp's, relative to max(1, |logit|). Both keep the weights in F32
/// and the KV cache in F16 (the defaults of `ssnail convert` and of
/// llama.cpp's contexts); llama.cpp also rounds the query to F16 for its
/// F16 attention dot products, and sums in f32 where ours sums in f64:
/// measured up to 1.3e-3 here. Any wrong weight or rule differs by units.
const LOGIT_TOLERANCE: f64 = 5e-3;

/// A greedy choice is a near-tie when llama.cpp's top two logits are closer
/// than twice the tolerance: rounding within it may decide either way.
fn near_tie(top: &[(usize, f64)]) -> Option<f64> {
    let gap = top[0].1 - top[1].1;
    (gap < 2.0 * LOGIT_TOLERANCE * top[0].1.abs().max(1.0)).then_some(gap)
}

/// Convert (with `convert_args`), run greedily with the float reference on
/// the PC and compare with llama.cpp's prompt ids, greedy ids and logits.
/// The logits of every position come from the same conversion with
/// `--all-logits` (the default script computes none at prompt positions
/// before the last, spec §3.7), whose tokens must equal the default image's.
fn greedy_as_llama_cpp(s: &Standin, convert_args: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let (_, _, gguf) = import(dir.path(), s);
    let image = dir.path().join(format!("{}.ssnail", s.name));
    let mut args = vec![
        "convert",
        gguf.to_str().unwrap(),
        "-o",
        image.to_str().unwrap(),
    ];
    args.extend_from_slice(convert_args);
    let o = ssnail(&args);
    assert!(o.status.success(), "{:?}", text(&o));
    let full = dir.path().join(format!("{}.all-logits.ssnail", s.name));
    args[3] = full.to_str().unwrap();
    args.push("--all-logits");
    let o = ssnail(&args);
    assert!(o.status.success(), "{:?}", text(&o));

    let r = reference(s.name);
    let g = &r["greedy"];
    let ids = |v: &J| -> Vec<u64> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap())
            .collect()
    };
    let (prompt_ids, want) = (ids(&g["prompt_ids"]), ids(&g["ids"]));
    let top: Vec<Vec<(usize, f64)>> = g["top"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            row.as_array()
                .unwrap()
                .iter()
                .map(|p| (p[0].as_u64().unwrap() as usize, p[1].as_f64().unwrap()))
                .collect()
        })
        .collect();
    let logits = dir.path().join("logits.f32");
    let n = want.len().to_string();
    let run = |img: &std::path::Path| {
        let o = ssnail(&[
            "run",
            img.to_str().unwrap(),
            "--float",
            "-p",
            r["prompt"].as_str().unwrap(),
            "-n",
            &n,
            "--ids",
            "--logits",
            logits.to_str().unwrap(),
        ]);
        let (out, err) = text(&o);
        assert!(o.status.success(), "{out}{err}");
        out
    };
    let default_out = run(&image);
    let out = run(&full);
    let ids_of = |out: &str| -> String {
        out.lines()
            .filter(|l| l.starts_with("prompt: ") || l.starts_with("generated: "))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(
        ids_of(&default_out),
        ids_of(&out),
        "{}: the default image's tokens differ from the full pass's",
        s.name
    );
    let line = |tag: &str| -> Vec<u64> {
        let l = out
            .lines()
            .find_map(|l| l.strip_prefix(tag))
            .unwrap_or_else(|| panic!("{out}"));
        l.split(',').map(|x| x.trim().parse().unwrap()).collect()
    };
    assert_eq!(
        line("prompt: "),
        prompt_ids,
        "{}: the image tokenizer's prompt ids",
        s.name
    );
    let got = line("generated: ");

    // Our logits: a row per position, as llama.cpp's top-5 rows (the
    // prompt's positions, then each generated token's but the last).
    let vocab = s.vocab();
    let raw = std::fs::read(&logits).unwrap();
    let rows: Vec<&[u8]> = raw.chunks_exact(4 * vocab).collect();
    assert!(
        rows.len() >= top.len(),
        "{}: {} logit rows, llama.cpp {}",
        s.name,
        rows.len(),
        top.len()
    );
    let first = prompt_ids.len() - 1;
    // Up to the first generated token that differs (if any), both decoded
    // the same tokens, so every logit row up to the one that chose it is
    // comparable; after it the contexts differ.
    let diverged = want.iter().zip(&got).position(|(w, o)| w != o);
    let compared = diverged.map_or(top.len(), |k| first + k + 1);
    let mut worst = (0.0f64, 0usize);
    let mut closest = (f64::INFINITY, 0usize);
    for (pos, row) in rows.iter().enumerate().take(compared) {
        for &(id, l) in &top[pos] {
            let ours = f32::from_le_bytes(row[4 * id..4 * id + 4].try_into().unwrap()) as f64;
            let rel = (ours - l).abs() / l.abs().max(1.0);
            if rel > worst.0 {
                worst = (rel, pos);
            }
        }
        let gap = top[pos][0].1 - top[pos][1].1;
        if pos >= first && gap < closest.0 {
            closest = (gap, pos);
        }
    }
    println!(
        "{}: {} greedy tokens; largest relative logit difference from llama.cpp {:.2e} (position {} of {compared}); closest top-2 in llama.cpp {:.4} (position {})",
        s.name,
        want.len(),
        worst.0,
        worst.1,
        closest.0,
        closest.1
    );
    assert!(
        worst.0 <= LOGIT_TOLERANCE,
        "{}: logits differ from llama.cpp's by {:.3e} (relative) at position {}",
        s.name,
        worst.0,
        worst.1
    );
    // Every near-tie is reported; a different token is accepted only at
    // one, and the tokens after it are not compared.
    for (k, (&w, &o)) in want.iter().zip(&got).enumerate() {
        let pos = first + k;
        let gap = top[pos][0].1 - top[pos][1].1;
        if let Some(gap) = near_tie(&top[pos]) {
            println!(
                "{}: NEAR-TIE at generated token {k}: llama.cpp's top two {:?} differ by {gap:.2e}; llama.cpp chose {w}, we chose {o}",
                s.name,
                &top[pos][..2]
            );
            if w != o {
                println!(
                    "{}: the {} tokens after this near-tie are not compared",
                    s.name,
                    want.len() - k - 1
                );
                return;
            }
        }
        assert_eq!(
            o, w,
            "{}: generated token {k} differs from llama.cpp's (top-2 gap {gap:.4}): ours {got:?}, llama.cpp {want:?}",
            s.name
        );
    }
    assert_eq!(
        got.len(),
        want.len(),
        "{}: ours {got:?}, llama.cpp {want:?}",
        s.name
    );
}

#[test]
fn stories260k_converted_by_default_runs_greedy_as_llama_cpp() {
    greedy_as_llama_cpp(&STORIES260K, &[]);
}

#[test]
fn an_unshared_classifier_converted_by_default_runs_greedy_as_llama_cpp() {
    greedy_as_llama_cpp(&STORIES260K_UNSHARED, &[]);
}

#[test]
fn stories15m_converted_for_the_emulator_runs_greedy_as_llama_cpp() {
    // 98 MB of F32 (llama.cpp's copy of the tied classifier included) fits
    // no board; --mem-mb 128 keeps the weights as llama.cpp has them.
    greedy_as_llama_cpp(&STORIES15M, &["--mem-mb", "128"]);
}

/// `ssnail ARGS` fails with one line on stderr that names `file` and says
/// `what`, and creates no `dir/out.gguf`.
fn refused(dir: &Path, args: &[&str], file: &Path, what: &str) {
    let o = ssnail(args);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{args:?}: {out}{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    assert!(
        err.starts_with(&format!("ssnail: {}: ", file.display())) && err.contains(what),
        "{args:?}: wanted {what:?} about {}: {err}",
        file.display()
    );
    assert!(!dir.join("out.gguf").exists());
}

#[test]
fn bad_llama2c_files_are_refused_in_one_line_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (model, tok) = STORIES260K.write(d);
    let out = d.join("out.gguf");
    let ck = std::fs::read(&model).unwrap();
    let tb = std::fs::read(&tok).unwrap();
    let put = |name: &str, bytes: &[u8]| {
        let p = d.join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    };
    let import = |m: &Path, t: &Path, file: &Path, what: &str| {
        refused(
            d,
            &[
                "import",
                m.to_str().unwrap(),
                "--tokenizer",
                t.to_str().unwrap(),
                "-o",
                out.to_str().unwrap(),
            ],
            file,
            what,
        )
    };

    let cut = put("cut.bin", &ck[..ck.len() - 1000]);
    import(&cut, &tok, &cut, "truncated: a llama2.c checkpoint of this config (dim 64, hidden 172, 5 layers, 8 heads, 4 kv heads, vocab 512, seq_len 512, shared classifier) has 1056540 bytes, the file 1055540");
    let long = put("long.bin", &[&ck[..], &[0u8; 8]].concat());
    import(
        &long,
        &tok,
        &long,
        "1056548 bytes, but a llama2.c checkpoint of this config",
    );
    // An unshared checkpoint whose header says shared.
    let mut flipped = STORIES260K_UNSHARED.checkpoint();
    flipped[20..24].copy_from_slice(&512i32.to_le_bytes());
    let flipped = put("flipped.bin", &flipped);
    import(&flipped, &tok, &flipped, "the sign of vocab_size is wrong");
    let mut v1 = ck.clone();
    v1[..8].copy_from_slice(&[0x32, 0x34, 0x6b, 0x61, 1, 0, 0, 0]);
    let v1 = put("v1.bin", &v1);
    import(
        &v1,
        &tok,
        &v1,
        "a llama2.c export of version 1 (magic \"ak42\"), which is not imported",
    );
    let mut kv = ck.clone();
    kv[16..20].copy_from_slice(&3i32.to_le_bytes());
    let kv = put("kv.bin", &kv);
    import(
        &kv,
        &tok,
        &kv,
        "not a llama2.c checkpoint: n_kv_heads 3 does not divide n_heads 8",
    );
    let short = put("short.bin", b"llama");
    import(&short, &tok, &short, "too short for a llama2.c checkpoint");

    let tcut = put("tcut.bin", &tb[..tb.len() - 3]);
    import(&model, &tcut, &tcut, "ends in token 511 of the model's 512");
    let big = put("big.tok.bin", &llama2c::tokenizer_bin(1000));
    import(
        &model,
        &big,
        &big,
        "bytes left after the model's 512 tokens",
    );
    let mut tmax = tb.clone();
    tmax[..4].copy_from_slice(&2i32.to_le_bytes());
    let tmax = put("tmax.bin", &tmax);
    import(&model, &tmax, &tmax, "token 0 has length 5, outside 0..=2");
    let mut tneg = tb.clone();
    tneg[8..12].copy_from_slice(&(-1i32).to_le_bytes());
    let tneg = put("tneg.bin", &tneg);
    import(&model, &tneg, &tneg, "token 0 has length -1");

    refused(
        d,
        &[
            "import",
            model.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ],
        &model,
        "needs its tokenizer: --tokenizer tokenizer.bin",
    );
    // A GGUF is not imported again.
    let (_, _, gguf) = self::import(d, &STORIES260K);
    import(&gguf, &tok, &gguf, "already a GGUF file");
}

#[test]
fn convert_info_tokenize_run_chat_and_bench_name_the_import_command_for_a_llama2c_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (model, _) = STORIES260K.write(d);
    let m = model.to_str().unwrap();
    let import_line = format!(
        "a llama2.c checkpoint (dim 64, hidden 172, 5 layers, 8 heads, 4 kv heads, vocab 512, seq_len 512, shared classifier), not a GGUF: import it with `ssnail import {m} --tokenizer tokenizer.bin -o {}`",
        model.with_extension("gguf").display()
    );
    let out = d.join("out.ssnail");
    refused(
        d,
        &["convert", m, "-o", out.to_str().unwrap()],
        &model,
        &import_line,
    );
    refused(d, &["info", m], &model, &import_line);
    refused(
        d,
        &["tokenize", m, "Once upon a time"],
        &model,
        &import_line,
    );
    refused(
        d,
        &["run", m, "-p", "Once"],
        &model,
        &format!(
            "not an SSNAIL image: import it with `ssnail import {m} --tokenizer tokenizer.bin -o {}`, then `ssnail convert {} -o {}`",
            model.with_extension("gguf").display(),
            model.with_extension("gguf").display(),
            model.with_extension("ssnail").display()
        ),
    );
    refused(
        d,
        &["bench", m],
        &model,
        "not an SSNAIL image: import it with",
    );
    refused(
        d,
        &["chat", m],
        &model,
        "not an SSNAIL image: import it with",
    );
    assert!(!out.exists());
    let mut v2 = std::fs::read(&model).unwrap();
    v2[..8].copy_from_slice(&[0x32, 0x34, 0x6b, 0x61, 2, 0, 0, 0]);
    let v2p = d.join("v2.bin");
    std::fs::write(&v2p, v2).unwrap();
    refused(
        d,
        &["info", v2p.to_str().unwrap()],
        &v2p,
        "a llama2.c export of version 2 (magic \"ak42\"), not a GGUF; `ssnail import` reads llama2.c's legacy export",
    );
}
