//! `ssnail bench`: emulator speed — tokens/s and effective GB/s of RAM
//! traffic (almost all weight streaming) for both numerics modes, on one
//! core and on all cores. Without an image it benchmarks a synthetic
//! ~100 MB Q8_0 llama built with the test kit and the converter.
//! `--read-bandwidth` measures the machine's memory read bandwidth instead
//! (the ceiling: bytes per token / bandwidth; tools/bench.sh prints it).

use anyhow::{anyhow, Result};
use clap::Parser;
use clap::ValueEnum;
use ssnail_core::{Generation, Host, Kernels, Machine, NoHost, Numerics, Ssnail};
use std::path::PathBuf;
use std::time::Instant;

#[derive(Parser)]
#[command(
    about = "Benchmark the SSNAIL core emulator (tokens/s, GB/s) in both numerics modes on 1 and all cores"
)]
pub struct Args {
    /// The .ssnail image (default: a synthetic ~100 MB Q8_0 llama).
    pub image: Option<PathBuf>,
    /// Positions (forward passes) per measurement.
    #[arg(long, default_value_t = 16)]
    pub positions: u32,
    /// Only this many threads (default: 1 and all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Only this numerics mode (default: both).
    #[arg(long, value_enum)]
    pub numerics: Option<Mode>,
    /// GEMV kernels (default: the best this CPU runs).
    #[arg(long, value_enum)]
    pub kernels: Option<KernelArg>,
    /// Measure the memory read bandwidth on 1 and all cores (or --threads)
    /// instead: one line "read-bandwidth THREADS GB/s" each.
    #[arg(long, conflicts_with_all = ["image", "numerics", "kernels"])]
    pub read_bandwidth: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Mode {
    Hardware,
    Float,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum KernelArg {
    Portable,
    Avx2,
    AvxVnni,
    Avx512Vnni,
}

impl KernelArg {
    fn kernels(self) -> Kernels {
        match self {
            KernelArg::Portable => Kernels::Portable,
            KernelArg::Avx2 => Kernels::Avx2,
            KernelArg::AvxVnni => Kernels::AvxVnni,
            KernelArg::Avx512Vnni => Kernels::Avx512Vnni,
        }
    }
}

/// Read bandwidth with `threads` threads: each sums its share of a 256 MiB
/// buffer (far beyond any cache) as 64-bit words; the best of 5 passes.
fn read_bandwidth(buf: &[u64], threads: usize) -> f64 {
    let part = buf.len().div_ceil(threads);
    let mut best = f64::MAX;
    for _ in 0..5 {
        let t = Instant::now();
        let sums: Vec<u64> = std::thread::scope(|s| {
            let hs: Vec<_> = buf
                .chunks(part)
                .map(|c| {
                    s.spawn(move || {
                        // Eight independent lanes so the sum is not a latency chain.
                        let mut l = [0u64; 8];
                        for w in c.chunks_exact(8) {
                            for k in 0..8 {
                                l[k] = l[k].wrapping_add(w[k]);
                            }
                        }
                        l.iter().fold(0u64, |a, &b| a.wrapping_add(b))
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        best = best.min(t.elapsed().as_secs_f64());
        std::hint::black_box(sums);
    }
    (buf.len() * 8) as f64 / best / 1e9
}

/// Never stops on EOS (a fixed number of positions per measurement); counts
/// the positions processed (one ARGMAX each).
struct AvoidEos {
    eos: u32,
    positions: u32,
}
impl Host for AvoidEos {
    fn on_argmax(&mut self, logits: &[f32], _m: &Machine) -> Option<u32> {
        self.positions += 1;
        let mut best = if self.eos == 0 { 1 } else { 0 };
        for (i, &v) in logits.iter().enumerate() {
            if i as u32 != self.eos && v > logits[best] {
                best = i;
            }
        }
        Some(best as u32)
    }
}

/// The synthetic benchmark model: llama, dim 1024, 8 layers, 16 heads / 4 KV
/// heads, hidden 2816, Q8_0 (about 97 MB of weights), converted for 120 MiB.
fn synthetic_image() -> Result<Vec<u8>> {
    use ssnail_format::ggml::GgmlType;
    use ssnail_synthetic::models::{self, ModelOpts};
    let opts = ModelOpts {
        dim: 1024,
        n_layers: 8,
        n_heads: 16,
        n_kv_heads: 4,
        hidden: 2816,
        name: Some("bench-llama-100MB".into()),
        ..ModelOpts::llama().with_wtype(GgmlType::Q8_0)
    };
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("bench.gguf");
    std::fs::write(&path, models::build(&opts))?;
    let g = ssnail_gguf::Gguf::open(&path).map_err(|e| anyhow!("{e}"))?;
    let conv = ssnail_convert::convert(
        &g,
        &ssnail_convert::Options {
            mem_mb: 120.0,
            ctx: Some(64),
            ..Default::default()
        },
    )
    .map_err(|e| anyhow!("{e}"))?;
    Ok(conv.image)
}

pub fn run(args: Args) -> Result<()> {
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    if args.read_bandwidth {
        // Written (not just allocated), so every page is really there.
        let buf: Vec<u64> = (0..32u64 << 20).collect();
        let counts = match args.threads {
            Some(t) => vec![crate::shared::cap_threads(t)],
            None if cores > 1 => vec![1, cores],
            None => vec![1],
        };
        for t in counts {
            println!("read-bandwidth {t} {:.1}", read_bandwidth(&buf, t));
        }
        return Ok(());
    }
    let kernels = match args.kernels {
        Some(k) if !k.kernels().supported() => {
            return Err(anyhow!(
                "this CPU cannot run the {} kernels",
                k.kernels().name()
            ))
        }
        Some(k) => k.kernels(),
        None => Kernels::best(),
    };
    let (name, image) = match &args.image {
        Some(p) => (
            {
                crate::shared::not_llama2c(p, true)?;
                p.display().to_string()
            },
            std::fs::read(p).map_err(|e| anyhow!("{}: {e}", p.display()))?,
        ),
        None => {
            eprintln!("building the synthetic ~100 MB Q8_0 llama ...");
            ("synthetic llama (Q8_0)".to_string(), synthetic_image()?)
        }
    };
    let (probe, _) = Ssnail::load_bytes(&image, None).map_err(|e| anyhow!("{name}: {e}"))?;
    let header = probe.header();
    drop(probe);
    let thread_counts: Vec<usize> = match args.threads {
        Some(t) => vec![crate::shared::cap_threads(t)],
        None if cores > 1 => vec![1, cores],
        None => vec![1],
    };
    println!("{name}: {}", header.description());
    println!("GEMV kernels: {}", kernels.name());
    println!(
        "{:<10} {:>7} {:>10} {:>12} {:>10}",
        "numerics", "threads", "tokens/s", "MB/token", "GB/s"
    );
    let modes: &[Numerics] = match args.numerics {
        Some(Mode::Hardware) => &[Numerics::Hardware],
        Some(Mode::Float) => &[Numerics::Float],
        None => &[Numerics::Hardware, Numerics::Float],
    };
    for &mode in modes {
        for &threads in &thread_counts {
            let (mut dev, _) =
                Ssnail::load_bytes(&image, None).map_err(|e| anyhow!("{name}: {e}"))?;
            dev.machine.numerics = mode;
            dev.machine.set_threads(threads);
            dev.machine.set_kernels(kernels);
            let (secs, positions, bytes) = if header.is_encoder() {
                let n = header.max_ctx.clamp(1, 16) as usize;
                let toks: Vec<u32> = (0..n as u32).map(|i| i % header.n_vocab.max(1)).collect();
                dev.encode(&toks, &mut NoHost)
                    .map_err(|e| anyhow!("{name}: {e}"))?; // warm-up
                dev.machine.reset_stats();
                let t = Instant::now();
                dev.encode(&toks, &mut NoHost)
                    .map_err(|e| anyhow!("{name}: {e}"))?;
                (
                    t.elapsed().as_secs_f64(),
                    n as f64,
                    dev.machine.traffic.total(),
                )
            } else {
                let prompt = [header.bos.min(header.out_dim.saturating_sub(1))];
                let n = args.positions.min(header.max_ctx.saturating_sub(1)).max(1);
                let mut host = AvoidEos {
                    eos: header.eos,
                    positions: 0,
                };
                // Loading wrote every byte, so memory is paged in: measure directly.
                let t = Instant::now();
                let g: Generation = dev
                    .generate(&prompt, n, &mut host)
                    .map_err(|e| anyhow!("{name}: {e}"))?;
                let secs = t.elapsed().as_secs_f64();
                debug_assert!(g.tokens.len() as u32 <= n);
                (secs, host.positions as f64, dev.machine.traffic.total())
            };
            let mode_name = if mode == Numerics::Hardware {
                "hardware"
            } else {
                "float"
            };
            println!(
                "{mode_name:<10} {threads:>7} {:>10.1} {:>12.2} {:>10.2}",
                positions / secs,
                bytes as f64 / 1e6 / positions,
                bytes as f64 / 1e9 / secs
            );
        }
    }
    println!("(GB/s: all RAM traffic of the script per second of emulation — weights, activations, KV cache.)");
    Ok(())
}
