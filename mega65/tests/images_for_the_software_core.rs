//! Images made for the software core (`ssnail convert --core soft`, spec §4.4) on a stock board:
//! stories260K's exact shape (random weights, F32 as llama.cpp's `convert-llama2c-to-ggml`
//! writes it) runs in the MEGA65 program's software core in the headless MEGA65 exactly as
//! `ssnail run --hw` runs it, and so do small F16 and BF16 llamas through the float GEMV; the
//! model browser marks an image whose matrices are F32, F16 or BF16 ("fits, slow") when the
//! software core is the one in use.

use ssnail_mega65_program as common;
use ssnail_mega65_program::{
    answer, prg, program_disk, soft_core, soft_core_disk, ssnail_bin, transcript,
};

use ssnail_convert::{convert, Core, Options, Policy};
use ssnail_core::{Board, Machine as CoreMachine, NoHost, Numerics, Ssnail};
use ssnail_format::ggml::GgmlType;
use ssnail_format::image::{Header, BASE};
use ssnail_mega65::{KeyScript, Machine, CPU_HZ};
use ssnail_testkit::models::{self, ModelOpts};
use ssnail_tokenizer::AsciiFolder;
use std::path::Path;
use std::process::Command;

/// A GGUF converted for `core` with auto formats and context `ctx`.
fn image(opts: &ModelOpts, core: Core, ctx: u32) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.gguf");
    models::write(&path, &models::build(opts));
    let g = ssnail_gguf::Gguf::open(&path).unwrap();
    let o = Options {
        ctx: Some(ctx),
        policy: Policy::Auto,
        core,
        ..Options::default()
    };
    convert(&g, &o).unwrap().image
}

/// The program from `d81` (and `sd` as the SD card) on `(board, fpga_mib)`: the FPGA core with
/// that many MiB, or none (0); runs until `until` has appeared `times` times or `seconds` pass.
fn run(
    (board, fpga_mib): (Board, usize),
    d81: Vec<u8>,
    sd: Option<&Path>,
    keys: &str,
    until: &str,
    times: usize,
    seconds: f64,
) -> Machine {
    let mut m = Machine::new();
    if fpga_mib > 0 {
        let mut core = CoreMachine::new(fpga_mib << 20);
        core.numerics = Numerics::Hardware;
        m.attach_ssnail(Ssnail::with_board(core, board));
    } else {
        m.set_board(board);
    }
    if let Some(dir) = sd {
        m.set_sd_dir(dir.to_path_buf());
    }
    m.mount_d81(d81);
    let (_, entry) = m.load_prg(prg(), None).unwrap();
    m.keys.schedule(&KeyScript::parse(keys).unwrap(), 0);
    m.start_at(entry);
    let mut t = 0.0;
    while t < seconds {
        m.run(CPU_HZ / 10);
        t += 0.1;
        if String::from_utf8_lossy(&m.serial).matches(until).count() >= times {
            break;
        }
    }
    m
}

/// `img` (as `name` on the D81) in the program's software core on `boards`, prompt `prompt`, `n`
/// tokens greedy: the answer is `ssnail run --hw`'s, and every byte the 45GS02 computed (KV
/// cache, activations, logits, token buffer) equals ssnail_core's memory after the same job.
fn runs_in_the_program_as_run_hw_runs_it(
    img: &[u8],
    name: &str,
    prompt: &str,
    n: usize,
    boards: &[Board],
) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, img).unwrap();
    // The PC: `ssnail run --hw`, its token ids.
    let o = Command::new(ssnail_bin())
        .arg("run")
        .arg(&path)
        .args(["--hw", "--ids", "-n", &n.to_string(), "-p", prompt])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8(o.stdout).unwrap();
    let ids: Vec<u32> = out
        .lines()
        .find_map(|l| l.strip_prefix("generated: "))
        .unwrap_or_else(|| panic!("{out}"))
        .split(',')
        .map(|s| s.parse().unwrap())
        .collect();
    let prompt_ids: Vec<u32> = out
        .lines()
        .find_map(|l| l.strip_prefix("prompt: "))
        .unwrap()
        .split(',')
        .map(|s| s.parse().unwrap())
        .collect();
    assert_eq!(ids.len(), n);
    // The same job on ssnail_core (what `run --hw` does) for the memory the MEGA65 must hold.
    let (mut dev, _) = Ssnail::load_bytes(img, None).unwrap();
    dev.machine.numerics = Numerics::Hardware;
    let g = dev.generate(&prompt_ids, n as u32, &mut NoHost).unwrap();
    assert_eq!(g.tokens, ids, "ssnail_core and ssnail run --hw");
    let mut want = String::new();
    let mut f = AsciiFolder::new();
    for &t in &ids {
        f.push(&dev.vocab_piece(t), &mut want);
    }
    for &board in boards {
        let keys = format!("{{RETURN}}/temp 0{{RETURN}}/n {n}{{RETURN}}{prompt}{{RETURN}}");
        let mut m = run(
            (board, 0),
            program_disk(
                prg(),
                false,
                &[(common::SOFT_CORE_FILE, soft_core()), (name, img)],
            ),
            None,
            &keys,
            "tokens/s]",
            1,
            600.0,
        );
        let t = transcript(&m);
        assert!(t.contains("The software core runs models"), "{t}");
        assert!(t.contains(&format!("Loaded {name}")), "{t}");
        assert_eq!(answer(&t, prompt), want, "{board:?}: {t}");
        let mem = dev.machine.mem();
        let len = Header::parse(mem).unwrap().mem_needed as usize;
        let got = m.peek_phys(BASE, len);
        let diff = (0..len).filter(|&i| got[i] != mem[i]).count();
        assert_eq!(diff, 0, "{board:?}: {name}: bytes of SSNAIL memory differ");
    }
}

#[test]
fn stories260k_made_for_the_software_core_runs_on_a_stock_board_as_ssnail_run_hw_runs_it() {
    let img = image(&ModelOpts::stories260k(), Core::Soft, 64);
    runs_in_the_program_as_run_hw_runs_it(
        &img,
        "s260k.ssnail",
        "the cat sat on the mat",
        12,
        &[Board::R3, Board::R4],
    );
}

#[test]
fn f16_and_bf16_llamas_run_their_float_gemvs_in_the_program_as_ssnail_run_hw_runs_them() {
    // Float matrices stay float in an image for the FPGA core; the software core runs them in
    // its float GEMV's eight-row blocks. Gate and up have 100 rows (twelve blocks of eight and
    // four left over), down 100 columns, the KV projections 32 rows.
    for t in [GgmlType::F16, GgmlType::Bf16] {
        let opts = ModelOpts {
            dim: 64,
            n_heads: 4,
            n_kv_heads: 2,
            hidden: 100,
            n_layers: 1,
            ..ModelOpts::llama()
        }
        .with_wtype(t);
        let img = image(&opts, Core::Fpga, 32);
        runs_in_the_program_as_run_hw_runs_it(&img, "float.ssnail", "the cat", 6, &[Board::R3]);
    }
}

/// The browser's row of `name`: the verdict after "needs N MB".
fn verdict<'a>(t: &'a str, name: &str) -> &'a str {
    let row = t
        .lines()
        .find(|l| l.starts_with(name))
        .unwrap_or_else(|| panic!("{name} not listed:\n{t}"));
    row[row.find(" MB  ").unwrap_or_else(|| panic!("{row}")) + 5..].trim_end()
}

#[test]
fn the_browser_marks_f32_images_slow_on_the_software_core_and_not_core_soft_ones() {
    // On the D81: a small F32 llama and stories260K made for the software core; on the SD card
    // stories260K as the default makes it (F32, 1.2 MB: too big for the disk).
    let tiny = ModelOpts {
        dim: 64,
        n_heads: 4,
        n_kv_heads: 2,
        hidden: 128,
        n_layers: 1,
        ..ModelOpts::llama()
    }
    .with_wtype(GgmlType::F32);
    let d81 = soft_core_disk(
        false,
        &[
            ("tinyf32.ssnail", &image(&tiny, Core::Fpga, 32)),
            (
                "s260soft.ssnail",
                &image(&ModelOpts::stories260k(), Core::Soft, 64),
            ),
        ],
    );
    let sd = tempfile::tempdir().unwrap();
    std::fs::create_dir(sd.path().join("SSNAIL")).unwrap();
    std::fs::write(
        sd.path().join("SSNAIL/s260f32.ssnail"),
        image(&ModelOpts::stories260k(), Core::Fpga, 64),
    )
    .unwrap();
    let look = |fpga_mib: usize| {
        let m = run(
            (Board::R4, fpga_mib),
            d81.clone(),
            Some(sd.path()),
            "",
            "RETURN: load",
            1,
            60.0,
        );
        transcript(&m)
    };
    let soft = look(0);
    assert!(soft.contains("The software core runs models"), "{soft}");
    assert_eq!(verdict(&soft, "tinyf32.ssnail"), "fits, slow", "{soft}");
    assert_eq!(verdict(&soft, "s260f32.ssnail"), "fits, slow", "{soft}");
    assert_eq!(verdict(&soft, "s260soft.ssnail"), "fits", "{soft}");
    // The FPGA core streams F32 at the memory's speed: nothing is slow there.
    let fpga = look(72);
    for name in ["tinyf32.ssnail", "s260f32.ssnail", "s260soft.ssnail"] {
        assert_eq!(verdict(&fpga, name), "fits", "{fpga}");
    }
}
