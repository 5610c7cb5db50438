//! The MEGA65 program's test harness, shared by its tests and the m65bench example: where the
//! MEGA65 sources are, and the PRG built with the project's own make rule; what the tests run,
//! built once (built.rs); reading the program's transcript (transcript.rs).

mod built;
mod transcript;

pub use built::{
    capi_lib, make_for_test, ovl, prg, prg_code, program_disk, sd_with, soft_core, soft_core_disk,
    soft_core_tables, ssnail_bin,
};
pub use transcript::{
    answer, answer_and_rest, nth_answer, reference, reference_conversation, transcript,
};

use std::path::{Path, PathBuf};
use std::process::Command;

/// The MEGA65 program's folder (C, assembler, host test sources, build.mk).
pub fn mega65_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

/// `make mega65-prg` (cc65, linker/mega65.cfg) with its output under
/// `out_dir`; the PRG's bytes. The same link writes the chat overlay beside it
/// ([`built_overlay`]), which the program needs on its disk or SD card.
pub fn build_prg(out_dir: &Path) -> Result<Vec<u8>, String> {
    make(out_dir, "mega65-prg", "mega65/ssnail.prg")
}

/// The chat overlay file `build_prg(out_dir)` wrote (`ssnail.ovl`).
pub fn built_overlay(out_dir: &Path) -> Result<Vec<u8>, String> {
    let path = out_dir.join("mega65/ssnail.ovl");
    std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))
}

/// The overlay file of a PRG built elsewhere (`SSNAIL_MEGA65_PRG=FILE`): `FILE` with the
/// extension `.ovl`, as `make mega65-prg` writes them side by side.
pub fn overlay_beside(prg: &Path) -> Result<Vec<u8>, String> {
    let path = prg.with_extension("ovl");
    std::fs::read(&path)
        .map_err(|e| format!("{} (the overlay of {}): {e}", path.display(), prg.display()))
}

/// The PRG and its overlay: the files `SSNAIL_MEGA65_PRG` names (and the `.ovl` beside it),
/// to run a test against another build, or else `build_prg(out_dir)`'s.
pub fn program_files(out_dir: &Path) -> Result<(Vec<u8>, Vec<u8>), String> {
    if let Ok(path) = std::env::var("SSNAIL_MEGA65_PRG") {
        let prg = std::fs::read(&path).map_err(|e| format!("{path}: {e}"))?;
        return Ok((prg, overlay_beside(Path::new(&path))?));
    }
    Ok((build_prg(out_dir)?, built_overlay(out_dir)?))
}

/// The name the program looks for on the D81 and the SD card (src/ovlload.c `ovl_file`).
pub const OVERLAY_FILE: &str = ssnail_format::mega65::OVERLAY_FILE;

/// What nothing the program runs may change, from the ld65 map and label file
/// `build_prg(out_dir)` wrote: the resident code and read-only data (CODE and RODATA),
/// the two overlays' copies in chip RAM, and the overlay region, which holds one of the
/// two. (STARTUP also holds crt0's saved registers; DATA, FONT and BSS change as it runs.)
pub struct ProgramCode {
    /// Physical addresses (bank 0 is the CPU's view) and the bytes that must be there.
    pub fixed: Vec<(usize, Vec<u8>)>,
    /// The overlay region's address.
    pub region: usize,
    /// The browser's and the chat's overlay, as the region holds them.
    pub overlays: [Vec<u8>; 2],
}

impl ProgramCode {
    /// Where `ram` (chip RAM from physical address 0) differs: "the program's code at $X
    /// changed" (resident code or an overlay's copy), or the region holding neither overlay.
    pub fn changed(&self, ram: &[u8]) -> Option<String> {
        for (at, want) in &self.fixed {
            if let Some(i) = (0..want.len()).find(|&i| ram[at + i] != want[i]) {
                return Some(format!("the program's code at ${:05X} changed", at + i));
            }
        }
        let r = self.region;
        if self.overlays.iter().any(|o| ram[r..r + o.len()] == o[..]) {
            return None;
        }
        let first = |o: &Vec<u8>| (0..o.len()).find(|&i| ram[r + i] != o[i]).unwrap_or(0);
        Some(format!(
            "the program's code at ${:04X} changed: the overlay region holds neither overlay \
             (the browser's differs from ${:04X}, the chat's from ${:04X})",
            r,
            r + first(&self.overlays[0]),
            r + first(&self.overlays[1])
        ))
    }
}

/// The [`ProgramCode`] of the build under `out_dir`.
pub fn program_code(out_dir: &Path) -> Result<ProgramCode, String> {
    let read = |name: &str| {
        let path = out_dir.join("mega65").join(name);
        std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))
    };
    let text = |name: &str| read(name).map(|b| String::from_utf8_lossy(&b).into_owned());
    let (map, labels) = (text("ssnail.map")?, text("ssnail.lbl")?);
    let (prg, ovl) = (read("ssnail.prg")?, read("ssnail.ovl")?);
    let hex = |s: &str| usize::from_str_radix(s, 16).ok();
    let label = |name: &str| {
        labels
            .lines()
            .find_map(|l| match l.split_whitespace().collect::<Vec<_>>()[..] {
                ["al", v, n] if n == format!(".{name}") => hex(v),
                _ => None,
            })
            .ok_or_else(|| format!("{}: no {name} in the label file", out_dir.display()))
    };
    let from_prg = |at: usize, len: usize| -> Result<Vec<u8>, String> {
        prg.get(2 + at - 0x2001..2 + at - 0x2001 + len)
            .map(<[u8]>::to_vec)
            .ok_or_else(|| format!("${at:04X}+{len}: not in the PRG"))
    };
    let names = ["CODE", "RODATA"];
    let mut fixed = Vec::new();
    for l in map.lines().skip_while(|l| !l.starts_with("Segment list:")) {
        if let [name, start, end, ..] = l.split_whitespace().collect::<Vec<_>>()[..] {
            if let (true, Some(s), Some(e)) = (names.contains(&name), hex(start), hex(end)) {
                fixed.push((s, from_prg(s, e + 1 - s)?));
            }
        }
    }
    if fixed.len() != names.len() {
        return Err(format!(
            "{}: no CODE and RODATA segments",
            out_dir.display()
        ));
    }
    // Each overlay is its code segment and its read-only data right after it.
    let browse = from_prg(
        label("__OVBROWSE_LOAD__")?,
        label("__OVBROWSE_SIZE__")? + label("__OVBRO_SIZE__")?,
    )?;
    // The header src/ovl.s writes, as ssnail_format::mega65::overlay defines it.
    use ssnail_format::mega65::overlay;
    let header = overlay::HEADER_LEN;
    let len = ovl.len().saturating_sub(header);
    let mut want = overlay::MAGIC.to_le_bytes().to_vec();
    want.extend_from_slice(&[overlay::VERSION, 0]);
    want.extend_from_slice(&(len as u16).to_le_bytes());
    if ovl.get(..header) != Some(&want[..]) || overlay::LEN != 6 {
        return Err(format!(
            "{}: ssnail.ovl's header is not ssnail_format's",
            out_dir.display()
        ));
    }
    let chat = ovl[header..].to_vec();
    if chat.len() != label("__OVCHAT_SIZE__")? + label("__OVCHATRO_SIZE__")? {
        return Err(format!(
            "{}: ssnail.ovl is not the linked overlay's length",
            out_dir.display()
        ));
    }
    let chip = label("__OVL_CHIP__")?;
    fixed.push((chip, browse.clone()));
    fixed.push((chip + browse.len(), chat.clone()));
    Ok(ProgramCode {
        fixed,
        region: label("__OVL_START__")?,
        overlays: [browse, chat],
    })
}

/// `make mega65-core` (the software SSNAIL core, linker/softcore.cfg) with its output under
/// `out_dir`; the bytes of the disk's `ssnail.core`.
pub fn build_core(out_dir: &Path) -> Result<Vec<u8>, String> {
    make(out_dir, "mega65-core", "mega65/ssnail.core")
}

/// The software core's function tables as the build under `out_dir` placed them (`core`: its
/// `ssnail.core`): for each of linker/softcore.cfg's FNTAB and FNTAB2, its chip RAM address and
/// its bytes in the file, from the core's ld65 label file.
pub fn core_tables(out_dir: &Path, core: &[u8]) -> Result<Vec<(usize, Vec<u8>)>, String> {
    let path = out_dir.join("mega65/ssnail-core.lbl");
    let labels = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let label = |name: String| {
        labels
            .lines()
            .find_map(|l| match l.split_whitespace().collect::<Vec<_>>()[..] {
                ["al", v, n] if n == format!(".{name}") => usize::from_str_radix(v, 16).ok(),
                _ => None,
            })
            .ok_or_else(|| format!("{}: no {name}", path.display()))
    };
    ["FNTAB", "FNTAB2"]
        .iter()
        .map(|seg| {
            let at = label(format!("__{seg}_START__"))?;
            let off = label(format!("__{seg}_FILEOFFS__"))?;
            let len = label(format!("__{seg}_SIZE__"))?;
            let bytes = core
                .get(off..off + len)
                .ok_or_else(|| format!("{}: {seg} is not in ssnail.core", path.display()))?;
            Ok((at, bytes.to_vec()))
        })
        .collect()
}

/// The name the program looks for on the D81 (device.c `soft_file`).
pub const SOFT_CORE_FILE: &str = "ssnail.core";

fn make(out_dir: &Path, target: &str, file: &str) -> Result<Vec<u8>, String> {
    make_target(out_dir, target, "")?;
    let path = out_dir.join(file);
    std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))
}

/// `make -s -C mega65 SSNAIL_BUILD=out_dir DEFS=defs target`: every C artefact (the program, the
/// core, the test PRGs, the PC builds) is made by mega65/build.mk, into `out_dir/mega65/`.
pub fn make_target(out_dir: &Path, target: &str, defs: &str) -> Result<(), String> {
    let out = Command::new("make")
        .args(["-s", "-C"])
        .arg(mega65_dir())
        .arg(target)
        .arg(format!("SSNAIL_BUILD={}", out_dir.display()))
        .arg(format!("DEFS={defs}"))
        .output()
        .map_err(|e| format!("running make (needs make, cc65 and a C compiler): {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "building {target} (make -C mega65 {target} DEFS={defs}, needs cc65 and a C compiler): {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(())
}

/// The small converted test images the program's tests load (testkit models, fixed names, so the
/// browser shows the same descriptions in every test and emulator).
pub mod test_images {
    use ssnail_convert::{convert, Options};
    use ssnail_format::ggml::GgmlType;
    use ssnail_testkit::models::{self, ModelOpts};

    /// A testkit model converted with context `ctx`.
    pub fn image(opts: ModelOpts, ctx: u32) -> Vec<u8> {
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

    /// Llama at Q4_0, small enough for the D81 (3160 blocks) next to the program.
    pub fn llama() -> Vec<u8> {
        let opts = ModelOpts {
            dim: 128,
            n_heads: 4,
            n_kv_heads: 2,
            hidden: 256,
            ..ModelOpts::llama()
        };
        image(opts.with_wtype(GgmlType::Q4_0).with_name("TinyLlama"), 64)
    }

    pub fn gpt2() -> Vec<u8> {
        image(
            ModelOpts::gpt2()
                .with_wtype(GgmlType::Q8_0)
                .with_name("TinyGpt"),
            64,
        )
    }

    /// `img` with one weight byte flipped (bit 6), the first from a third into the weights on,
    /// stepping 4099 bytes, for which `changes` says the output differs: the gates' broken image.
    pub fn with_one_weight_byte_flipped(img: &[u8], changes: impl Fn(&[u8]) -> bool) -> Vec<u8> {
        let h = ssnail_format::image::Header::parse(img).unwrap();
        let weights_at = (h.data - h.load_base) as usize + ssnail_format::image::HEADER_LEN;
        let mut flipped = img.to_vec();
        let mut pos = weights_at + (img.len() - weights_at) / 3;
        loop {
            flipped[pos] ^= 0x40;
            if changes(&flipped) {
                return flipped;
            }
            flipped[pos] ^= 0x40;
            pos += 4099;
            assert!(pos < img.len(), "no single-byte flip changed the output");
        }
    }

    /// The llama test image with `script` at its job address (header $08) and `extra` bytes at
    /// `extra_at` (an address in the script area).
    pub fn with_script(
        script: &[ssnail_format::isa::Instr],
        extra: &[u8],
        extra_at: u32,
    ) -> Vec<u8> {
        use ssnail_format::image::{Header, HEADER_LEN};
        let mut img = llama();
        let h = Header::parse(&img).unwrap();
        let file = |addr: u32| (addr - h.load_base) as usize + HEADER_LEN;
        for (i, ins) in script.iter().enumerate() {
            let at = file(h.code) + 16 * i;
            img[at..at + 16].copy_from_slice(&ins.encode());
        }
        let at = file(extra_at);
        img[at..at + extra.len()].copy_from_slice(extra);
        img
    }

    /// One ATTN of 500,000 heads (head_dim 1, F16 K/V) over 4,001 positions, all inside 8 MB:
    /// on the 45GS02 about 0.1 s a head, hours for the instruction.
    pub fn huge_attn() -> Vec<u8> {
        use ssnail_format::image::{Header, BASE};
        use ssnail_format::isa::{AttnBlock, Instr, Op, KV_F16};
        let h = Header::parse(&llama()).unwrap();
        let blk = h.code + 64;
        let block = AttnBlock {
            k_cache: BASE + 0x38_0000,
            v_cache: BASE + 0x38_0000,
            n_heads: 500_000,
            n_kv_heads: 1,
            head_dim: 1,
            kv_format: KV_F16,
        };
        let mut img = with_script(
            &[
                Instr::new(Op::Li, 0, 0, 0, 0, 4000),
                Instr::new(Op::Attn, 0, 0, blk, BASE + 0x10_0000, BASE + 0x40_0000),
                Instr::new(Op::Halt, 0, 0, 0, 0, 0),
            ],
            &block.encode(),
            blk,
        );
        // Its memory is the whole 8 MB (header $38), which its q, K/V and output use.
        let h = ssnail_format::image::h::MEM_NEEDED;
        img[h..h + 4].copy_from_slice(&(8u32 << 20).to_le_bytes());
        img
    }

    pub fn bert() -> Vec<u8> {
        image(
            ModelOpts::bert()
                .with_wtype(GgmlType::Q8_0)
                .with_name("TinyBert"),
            32,
        )
    }
}

/// The model trained here (model/ssnail-qa.gguf) as `make disk` converts it, and its answers as
/// `make model` recorded them (model/answers/hw.tsv: greedy, hardware numerics on ssnail_core).
pub mod trained_model {
    use ssnail_convert::{convert, Options, Policy};
    use std::path::PathBuf;

    /// The GGUF: SSNAIL_QA_GGUF when set (e.g. one with a weight changed, to see a test fail),
    /// else the committed model/ssnail-qa.gguf.
    pub fn gguf() -> PathBuf {
        std::env::var("SSNAIL_QA_GGUF")
            .map(PathBuf::from)
            .unwrap_or_else(|_| super::mega65_dir().join("../model/ssnail-qa.gguf"))
    }

    /// The image as `make disk` converts it (Q8_0 kept, 64-token context, 8 MB).
    pub fn image() -> Vec<u8> {
        let p = gguf();
        let g = ssnail_gguf::Gguf::open(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        let o = Options {
            ctx: Some(64),
            policy: Policy::Keep,
            ..Options::default()
        };
        convert(&g, &o).unwrap().image
    }

    /// The recorded ids of a corpus question (hw.tsv: set, question, expected, ids, …), the EOS
    /// last when the answer ended.
    pub fn recorded(q: &str) -> Vec<u32> {
        let p = super::mega65_dir().join("../model/answers/hw.tsv");
        let t = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        let l = t
            .lines()
            .find(|l| l.split('\t').nth(1) == Some(q))
            .unwrap_or_else(|| panic!("{q:?} is not in {}", p.display()));
        let ids = l.split('\t').nth(3).unwrap();
        ids.split(',').map(|x| x.parse().unwrap()).collect()
    }

    /// The text of [`recorded`]'s answer to `q` as the program prints it (folded to ASCII by the
    /// image's pieces); panics when the recorded answer does not end with the image's EOS.
    pub fn recorded_answer(img: &ssnail_core::Ssnail, q: &str) -> String {
        let ids = recorded(q);
        assert_eq!(
            ids.last(),
            Some(&img.header().eos),
            "{q:?}: the recorded answer has no EOS"
        );
        let mut text = String::new();
        let mut f = ssnail_tokenizer::AsciiFolder::new();
        for t in ids {
            f.push(&img.vocab_piece(t), &mut text);
        }
        text
    }
}
