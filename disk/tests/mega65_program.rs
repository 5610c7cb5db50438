//! The MEGA65 program (build/mega65/ssnail.prg, built here with cc65) run in the headless MEGA65
//! (ssnail_emu::mega65) with the SSNAIL device attached, driven by typed keys, compared with the
//! PC tools: the text a greedy `ssnail run` prints, the PC image tokenizer, the load port's
//! checks. The program's transcript is read from the serial-monitor trap ($D643), which gets
//! every character the program prints (the 25-line screen only shows the end).

use ssnail_convert::{convert, Options};
use ssnail_disk::{FileType, D81};
use ssnail_emu::core::{Machine as Core, NoHost, Numerics, Ssnail};
use ssnail_emu::mega65::{KeyScript, Machine, CPU_HZ};
use ssnail_format::ggml::GgmlType;
use ssnail_testkit::models::{self, ModelOpts};
use ssnail_tokenizer::image::image_memory;
use ssnail_tokenizer::{AsciiFolder, ImageTokenizer};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The PRG, built once with the project's own make rule (cc65, linker/mega65.cfg).
fn prg() -> &'static [u8] {
    static PRG: OnceLock<Vec<u8>> = OnceLock::new();
    PRG.get_or_init(|| {
        let out_dir =
            std::env::temp_dir().join(format!("ssnail-mega65-test-{}", std::process::id()));
        let out = Command::new("make")
            .arg("-s")
            .arg("-C")
            .arg(root().join("mega65"))
            .arg("mega65-prg")
            .arg(format!("SSNAIL_BUILD={}", out_dir.display()))
            .output()
            .expect("make is needed to build the MEGA65 program");
        assert!(
            out.status.success(),
            "building the MEGA65 program (needs cc65): {}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::fs::read(out_dir.join("mega65/ssnail.prg")).unwrap()
    })
}

/// A converted testkit image.
fn image(opts: ModelOpts, ctx: u32) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.gguf");
    models::write(&path, &models::build(&opts));
    let g = ssnail_gguf::Gguf::open(&path).unwrap();
    let o = Options {
        ctx: Some(ctx),
        ..Options::default()
    };
    convert(&g, &o).unwrap().image
}

fn llama() -> Vec<u8> {
    // Small enough for the D81 (3160 blocks) next to the program.
    let opts = ModelOpts {
        dim: 128,
        n_heads: 4,
        n_kv_heads: 2,
        hidden: 256,
        ..ModelOpts::llama()
    };
    image(opts.with_wtype(GgmlType::Q4_0).with_name("TinyLlama"), 64)
}

fn gpt2() -> Vec<u8> {
    image(
        ModelOpts::gpt2()
            .with_wtype(GgmlType::Q8_0)
            .with_name("TinyGpt"),
        64,
    )
}

fn bert() -> Vec<u8> {
    image(
        ModelOpts::bert()
            .with_wtype(GgmlType::Q8_0)
            .with_name("TinyBert"),
        32,
    )
}

/// What a greedy `ssnail run` prints after the prompt (hardware numerics, as the MEGA65 run),
/// folded to ASCII as the MEGA65 shows it.
fn reference(img: &[u8], prompt: &str, n: u32) -> String {
    let mem = image_memory(img).unwrap();
    let toks = ImageTokenizer::new(&mem).unwrap().encode(prompt, true);
    let (mut dev, _) = Ssnail::load_bytes(img, None).unwrap();
    dev.machine.numerics = Numerics::Hardware;
    let g = dev.generate(&toks, n, &mut NoHost).unwrap();
    let mut text = String::new();
    let mut f = AsciiFolder::new();
    for t in g.tokens {
        f.push(&dev.vocab_piece(t), &mut text);
    }
    text
}

struct Setup {
    d81: Option<Vec<u8>>,
    sd: Option<tempfile::TempDir>,
    /// SSNAIL memory in MiB; None = no SSNAIL core.
    ssnail_mib: Option<usize>,
}

/// Run the program until `until` appears in its transcript (after the last key was typed) or
/// `seconds` of emulated time pass; returns the transcript.
fn run(setup: &Setup, keys: &str, until: &str, seconds: f64) -> String {
    let mut m = Machine::new();
    if let Some(mib) = setup.ssnail_mib {
        let mut core = Core::new(mib << 20);
        core.numerics = Numerics::Hardware;
        m.attach_ssnail(Ssnail::new(core));
    }
    if let Some(d) = &setup.d81 {
        m.mount_d81(d.clone());
    }
    if let Some(sd) = &setup.sd {
        m.set_sd_dir(sd.path().to_path_buf());
    }
    let (_, entry) = m.load_prg(prg(), None).unwrap();
    m.keys.schedule(&KeyScript::parse(keys).unwrap(), 0);
    m.start_at(entry);
    let step = CPU_HZ / 10;
    let mut t = 0.0;
    while t < seconds {
        m.run(step);
        t += 0.1;
        let s = String::from_utf8_lossy(&m.serial);
        if !until.is_empty() && s.contains(until) {
            break;
        }
    }
    String::from_utf8_lossy(&m.serial).into_owned()
}

fn disk_with(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut d = D81::new("SSNAIL", *b"65").unwrap();
    d.add_file("ssnail", FileType::Prg, prg()).unwrap();
    d.add_file("autoboot.c65", FileType::Prg, prg()).unwrap();
    for (name, data) in files {
        d.add_file(name, FileType::Seq, data).unwrap();
    }
    d.into_bytes()
}

fn sd_with(files: &[(&str, &[u8])]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, data) in files {
        let p = dir.path().join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, data).unwrap();
    }
    dir
}

/// The answer the program printed for `prompt`: the text between the echoed prompt line and the
/// line the program adds after it (`[end of text]` or the tokens/s line).
fn answer<'a>(transcript: &'a str, prompt: &str) -> &'a str {
    let start = transcript
        .find(&format!("> {prompt}\n"))
        .unwrap_or_else(|| panic!("prompt not echoed:\n{transcript}"))
        + prompt.len()
        + 3;
    let rest = &transcript[start..];
    let end = rest
        .find("\n[")
        .unwrap_or_else(|| panic!("no end of answer:\n{transcript}"));
    &rest[..end]
}

#[test]
fn llama_from_the_d81_prints_what_ssnail_run_prints() {
    let img = llama();
    let setup = Setup {
        d81: Some(disk_with(&[("tinyllama.ssnail", &img)])),
        sd: None,
        ssnail_mib: Some(64),
    };
    let prompt = "the cat sat on the mat";
    // All keys typed at once: the ones after RETURN wait in the queue while the model loads.
    let t = run(
        &setup,
        &format!("{{RETURN}}/n 24{{RETURN}}{prompt}{{RETURN}}"),
        "tokens/s]",
        120.0,
    );
    assert!(t.contains("Loaded tinyllama.ssnail"), "{t}");
    assert!(t.contains("[24 tokens per answer]"), "{t}");
    assert_eq!(answer(&t, prompt), reference(&img, prompt, 24), "{t}");
}

#[test]
fn gpt2_from_the_sd_card_prints_what_ssnail_run_prints() {
    let img = gpt2();
    let setup = Setup {
        d81: Some(disk_with(&[])),
        sd: Some(sd_with(&[("SSNAIL/TINYGPT.SSNAIL", &img)])),
        ssnail_mib: Some(64),
    };
    let prompt = "Once upon a time";
    let t = run(
        &setup,
        &format!("{{RETURN}}/n 20{{RETURN}}{prompt}{{RETURN}}"),
        "tokens/s]",
        120.0,
    );
    assert!(t.contains("SSNAIL core v1 found, 72 MB"), "{t}");
    assert!(t.contains("Loaded TINYGPT.SSNAIL"), "{t}");
    assert_eq!(answer(&t, prompt), reference(&img, prompt, 20), "{t}");
}
