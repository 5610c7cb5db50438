//! The MEGA65 sampler's choice (`smp_choose`, mega65/src/smpcore.s) called directly in the
//! headless MEGA65 on logits written into SSNAIL memory, against the Rust definition
//! (`ssnail_format::sampler::Sampler::choose`, spec §7.6): the same token (or "keep the ARGMAX")
//! and the same generator state, for random settings and logits made to be hard — many equal
//! values, NaN, ±∞, subnormals, all negative, sorted runs, window tokens among the best — and
//! vocabularies from 1 to 65,536. The chat tests only see the few hundred logits of the test
//! models; this one reaches ties at the top-k boundary and the scan's every threshold case.

use ssnail_mega65_program as common;

use ssnail_core::{Machine as Core, Numerics, Ssnail};
use ssnail_format::image::BASE;
use ssnail_format::sampler::{Sampler, Settings, WINDOW};
use ssnail_mega65::{KeyScript, Machine};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Where the test puts the logits and the token buffer in SSNAIL memory (far from the model).
/// Where the logits go: one megabyte boundary below it, and odd cases start just under the next
/// one, so a DMA chunk of 256 logits (1 KiB) straddles $A100000 (a DMA without option $01 wraps
/// inside its megabyte).
const OUT: u32 = BASE + (32 << 20);
const OUT_STRADDLING: u32 = BASE + (33 << 20) - 4 * 37;
const TOKENS: u32 = BASE + (48 << 20);
/// A JSR to smp_choose and a JMP to itself, in the Hyppo transfer page (unused meanwhile).
const STUB: u16 = 0x0400;

/// xorshift64 for the test's own choices.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn pick<T: Copy>(&mut self, v: &[T]) -> T {
        v[self.below(v.len() as u64) as usize]
    }
}

/// The exported symbols of the ld65 map file.
fn symbols(map: &str) -> HashMap<String, u32> {
    let mut s = HashMap::new();
    let list = map
        .split("Exports list by name:")
        .nth(1)
        .expect("map file without an exports list");
    for line in list.lines().skip(2) {
        if line.trim().is_empty() {
            break;
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        for pair in f.chunks(3) {
            if let [name, addr, _] = pair {
                // (chip RAM addresses such as __OVL_CHIP__ are wider than 16 bits)
                s.insert(name.to_string(), u32::from_str_radix(addr, 16).unwrap());
            }
        }
    }
    s
}

/// An f32 from the case's pool of hard values.
fn special(r: &mut Rng) -> f32 {
    r.pick(&[
        f32::NAN,
        -f32::NAN,
        f32::from_bits(0x7FC0_0001),
        f32::from_bits(0xFF80_0001),
        f32::INFINITY,
        f32::NEG_INFINITY,
        0.0,
        -0.0,
        f32::from_bits(1),
        f32::from_bits(0x8000_0001),
        f32::MIN_POSITIVE,
        1e30,
        -1e30,
        16384.0,
        -16384.0,
        3.0e-5,
        -3.0e-5,
    ])
}

/// Logits of one of several shapes.
fn logits(r: &mut Rng, v: usize) -> Vec<f32> {
    let uniform =
        |r: &mut Rng, lo: f32, hi: f32| lo + (r.next() >> 40) as f32 / 16_777_216.0 * (hi - lo);
    // (sorted runs only for smaller vocabularies: every logit a new best is slow by design)
    let shape = match r.below(7) {
        3 if v > 5000 => 0,
        s => s,
    };
    match shape {
        // uniform, as a model's logits roughly are
        0 => (0..v).map(|_| uniform(r, -8.0, 12.0)).collect(),
        // a handful of distinct values: ties everywhere, also at the top-k boundary
        1 => {
            let pool: Vec<f32> = (0..1 + r.below(6)).map(|_| uniform(r, -3.0, 3.0)).collect();
            (0..v).map(|_| r.pick(&pool)).collect()
        }
        // all negative
        2 => (0..v).map(|_| uniform(r, -40.0, -0.5)).collect(),
        // ascending or descending runs (every logit a new best, or none)
        3 => {
            let up = r.below(2) == 0;
            (0..v)
                .map(|i| {
                    let x = i as f32 / 64.0 - 5.0;
                    if up {
                        x
                    } else {
                        -x
                    }
                })
                .collect()
        }
        // sprinkled with NaN, infinities, subnormals, huge values
        4 => (0..v)
            .map(|_| {
                if r.below(4) == 0 {
                    special(r)
                } else {
                    uniform(r, -2.0, 2.0)
                }
            })
            .collect(),
        // nothing eligible but a few
        5 => (0..v)
            .map(|_| {
                if r.below(50) == 0 {
                    uniform(r, -1.0, 1.0)
                } else {
                    r.pick(&[f32::NAN, f32::NEG_INFINITY, -f32::NAN])
                }
            })
            .collect(),
        // values differing only in low mantissa bits (equal high key bits)
        _ => (0..v)
            .map(|_| {
                f32::from_bits(0x40C0_0000 + r.below(64) as u32 * r.pick(&[1u32, 0x100, 0x1_0000]))
            })
            .collect(),
    }
}

#[test]
fn smp_choose_picks_the_rust_definitions_token_and_state_for_hard_logits_and_settings() {
    // A given build (SSNAIL_MEGA65_PRG, its ld65 map beside it as .map) or one made now.
    let dir = tempfile::tempdir().unwrap();
    let (prg, map) = match std::env::var("SSNAIL_MEGA65_PRG") {
        Ok(p) => (PathBuf::from(&p), Path::new(&p).with_extension("map")),
        Err(_) => {
            common::build_prg(dir.path()).unwrap_or_else(|e| panic!("{e}"));
            let out = dir.path().join("mega65");
            (out.join("ssnail.prg"), out.join("ssnail.map"))
        }
    };
    let ovl = common::overlay_beside(&prg).unwrap_or_else(|e| panic!("{e}"));
    let prg = std::fs::read(&prg).unwrap_or_else(|e| panic!("{}: {e}", prg.display()));
    let map = std::fs::read_to_string(&map).unwrap_or_else(|e| panic!("{}: {e}", map.display()));
    let sym = symbols(&map);
    let at = |n: &str| *sym.get(n).unwrap_or_else(|| panic!("{n} not in the map"));

    // The program with a model loaded (its start-up sets the attic window), idle at the prompt.
    let sd = tempfile::tempdir().unwrap();
    std::fs::write(sd.path().join("MODEL.SSNAIL"), common::test_images::llama()).unwrap();
    std::fs::write(sd.path().join("SSNAIL.OVL"), &ovl).unwrap();
    let mut m = Machine::new();
    let mut core = Core::new(64 << 20);
    core.numerics = Numerics::Hardware;
    m.attach_ssnail(Ssnail::new(core));
    m.set_sd_dir(sd.path().to_path_buf());
    let (_, entry) = m.load_prg(&prg, None).unwrap();
    m.keys
        .schedule(&KeyScript::parse("{RETURN}/seed 1{RETURN}").unwrap(), 0);
    m.start_at(entry);
    while !String::from_utf8_lossy(&m.serial).contains("; seed 1]") {
        assert!(
            m.seconds() < 120.0,
            "{}",
            String::from_utf8_lossy(&m.serial)
        );
        m.run(1000);
    }

    let choose = at("_smp_choose") as u16;
    let stub = [0x20, choose as u8, (choose >> 8) as u8, 0x4C, 0x03, 0x04];
    m.poke_phys(STUB as u32, &stub);
    let mut r = Rng(0x5EED_0001_2345_6789);
    let mut kept = 0;
    let cases = 1000;
    for case in 0..cases {
        let v = match case {
            0 => 65_536,
            1 => 49_152,
            _ => match r.below(10) {
                0 => 1 + r.below(8) as usize,
                1..=7 => 1 + r.below(700) as usize,
                _ => 700 + r.below(4000) as usize,
            },
        };
        let lg = logits(&mut r, v);
        let any_k = 1 + r.below(64) as u32;
        let settings = Settings {
            temp_milli: r.pick(&[1, 50, 800, 1500, 60_000]),
            top_k: r.pick(&[1, 2, 5, 40, 63, 64, any_k]),
            penalty_milli: r.pick(&[1000, 1150, 2500, 60_000]),
            window: WINDOW,
        };
        let seed = r.next() as u32;
        // The token buffer up to slot q; window tokens often among the best logits or beyond V.
        let q = r.below(200) as u32;
        let mut best: Vec<u32> = (0..v as u32).collect();
        best.sort_by(|&a, &b| lg[b as usize].total_cmp(&lg[a as usize]));
        let tokens: Vec<u32> = (0..=q)
            .map(|_| match r.below(4) {
                0 => r.below(70_000) as u32,
                1 => r.below(v as u64) as u32,
                _ => best[r.below(best.len().min(80) as u64) as usize],
            })
            .collect();
        let first = q.saturating_sub(WINDOW - 1) as usize;
        let mut want = Sampler::new(settings, seed);
        let state0 = want.state;
        let want_token = want.choose(&lg, &tokens[first..]);

        let out = if case % 2 == 1 { OUT_STRADDLING } else { OUT };
        let dev = m.ssnail.device.as_mut().unwrap();
        let bytes: Vec<u8> = lg.iter().flat_map(|f| f.to_le_bytes()).collect();
        assert!(dev.machine.write_bytes(out as u64, &bytes));
        let tb: Vec<u8> = tokens.iter().flat_map(|t| t.to_le_bytes()).collect();
        assert!(dev.machine.write_bytes(TOKENS as u64, &tb));
        for (name, val) in [
            ("_smp_out", out),
            ("_smp_nout", v as u32),
            ("_smp_tokaddr", TOKENS),
            ("_smp_invt", settings.inv_temp()),
            ("_smp_pendiv", settings.pen_div()),
            ("_smp_penmul", settings.pen_mul()),
            ("_smp_state", state0),
        ] {
            m.poke_phys(at(name), &val.to_le_bytes());
        }
        m.poke_phys(at("_smp_topk"), &[settings.top_k as u8]);
        m.poke_phys(at("_smp_pen_on"), &[(settings.penalty_milli != 1000) as u8]);
        m.z = 0; // as the C caller has it
        m.a = q as u8;
        m.x = (q >> 8) as u8;
        m.pc = STUB;
        let t0 = m.cycles;
        while m.pc != STUB + 3 {
            assert!(
                m.cycles - t0 < 400_000_000,
                "case {case}: smp_choose does not return"
            );
            m.run(1);
        }
        let sreg = m.peek_phys(at("sreg"), 2);
        let got = u32::from_le_bytes([m.a, m.x, sreg[0], sreg[1]]);
        let state = u32::from_le_bytes(m.peek_phys(at("_smp_state"), 4).try_into().unwrap());
        let what = format!(
            "case {case}: V {v}, {settings:?}, seed {seed}, q {q}, logits {:?}…",
            &lg[..lg.len().min(12)]
        );
        assert_eq!(got, want_token.unwrap_or(u32::MAX), "{what}: token");
        assert_eq!(state, want.state, "{what}: generator state");
        kept += want_token.is_none() as usize;
    }
    // The cases reach both outcomes.
    assert!(kept > 0 && kept < cases / 4, "{kept} cases kept the ARGMAX");
}
