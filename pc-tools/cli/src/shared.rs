//! What several subcommands share, in one place: the arguments and loading
//! of `run` and `chat` (one set, with llama.cpp's spellings as aliases),
//! reading images and GGUF tokenizers, stop-reason names and stdout.

use anyhow::{anyhow, Context, Result};
use ssnail_core::{Numerics, Ssnail};
use ssnail_format::chatblock::ChatBlock;
use ssnail_format::image::stop;
use ssnail_tokenizer::image::image_memory;
use ssnail_tokenizer::{GgufTokenizer, Vocab};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// The arguments `run` and `chat` share. Names follow llama-cli where they
/// mean the same thing (`-m/--model`, `-p/--prompt`, `-n/--n-predict`,
/// `-t/--threads`).
#[derive(clap::Args, Debug)]
pub struct ModelArgs {
    /// The .ssnail image; a GGUF is converted first into the cache, with the
    /// settings `ssnail convert`'s advice picks (said in one line).
    #[arg(required_unless_present = "model", conflicts_with = "model")]
    pub image: Option<PathBuf>,
    /// The .ssnail image or a GGUF (llama.cpp's spelling; the same as IMAGE).
    #[arg(short = 'm', long = "model", value_name = "IMAGE")]
    pub model: Option<PathBuf>,
    /// Prompt text, tokenized with the image's own tokenizer.
    #[arg(short = 'p', long)]
    pub prompt: Option<String>,
    /// Tokens to generate (decoders; run: 32 in all, chat: 120 per turn).
    #[arg(short = 'n', long = "n-predict")]
    pub n: Option<u32>,
    /// Hardware numerics (bit-exact to the FPGA core). The default for
    /// decoders: it is what the v1 hardware computes, and the emulator runs
    /// it faster than the float reference.
    #[arg(long, conflicts_with = "float")]
    pub hw: bool,
    /// The float reference numerics (double-precision sums; the default for
    /// encoders).
    #[arg(long)]
    pub float: bool,
    /// Worker threads for GEMV (default: all cores).
    #[arg(short = 't', long)]
    pub threads: Option<usize>,
    /// SSNAIL memory in MiB (1 MB = 1,048,576 bytes, as convert's --mem-mb);
    /// default: max(8, what the image needs).
    #[arg(long = "mem-mb")]
    pub mem_mb: Option<f64>,
    /// Memory bandwidth in MB/s (10^6 bytes/s) for the modelled hardware tokens/s.
    #[arg(long, default_value_t = ssnail_format::registers::DEFAULT_BANDWIDTH_MBPS)]
    pub bandwidth: f64,
    /// Plain continuation: leave out the image's chat template (the turn
    /// opener and closer an instruct model's lines get, as llama.cpp's
    /// conversation mode applies them).
    #[arg(long = "raw", visible_alias = "no-template")]
    pub raw: bool,
    /// Context size: an image's context is fixed when converting, so at most the image's
    /// (a run or conversation stops there); for a GGUF, the context to convert with.
    #[arg(short = 'c', long = "ctx-size", value_parser = clap::value_parser!(u32).range(1..))]
    pub ctx: Option<u32>,
    /// llama.cpp's -ngl N (GPU layers): accepted, and has no effect here.
    #[arg(long = "n-gpu-layers", visible_alias = "gpu-layers", value_name = "N")]
    pub n_gpu_layers: Option<String>,
}

/// The `--help` note of `run` and `chat` on llama.cpp's options.
pub const LLAMA_CPP_DEFAULTS: &str = "\
Defaults that differ from llama.cpp's:
  --repeat-penalty 1.15 (llama.cpp: 1.0, off)
  --top-p 1.0 and --min-p 0, both off (llama.cpp: 0.95 and 0.05): the MEGA65 program's
    sampler has neither, and off they leave the PC's tokens comparable with it
  run: --temp 0, greedy as the v1 hardware (llama.cpp and chat: 0.8)
  -c: the image's context, fixed when converting (ssnail convert --ctx N); smaller is accepted
  -ngl N: accepted, no effect (the core emulator runs on the CPU; there is no GPU to offload to)";

/// The sampling options `run` and `chat` share (llama.cpp's names; spec §7.3).
#[derive(clap::Args, Debug, Clone)]
pub struct SamplingArgs {
    /// Temperature (0 = greedy, the v1 hardware's ARGMAX); default: run 0, chat 0.8.
    #[arg(long, value_parser = finite)]
    pub temp: Option<f64>,
    /// Top-k (0 = off).
    #[arg(long, visible_alias = "top-k", default_value_t = 40)]
    pub topk: u32,
    /// Top-p, nucleus (1 = off); on the probabilities at temperature 1, as llama.cpp.
    #[arg(long = "top-p", default_value_t = 1.0, value_parser = unit)]
    pub top_p: f64,
    /// Min-p (0 = off): cut tokens below this share of the most probable one's probability.
    #[arg(long = "min-p", default_value_t = 0.0, value_parser = unit)]
    pub min_p: f64,
    /// Repetition penalty over the distinct tokens of the last --repeat-last-n (1 = off).
    #[arg(long, visible_alias = "repeat-penalty", default_value_t = 1.15, value_parser = positive)]
    pub penalty: f64,
    /// Tokens the repetition penalty looks back over.
    #[arg(long = "repeat-last-n", default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..))]
    pub repeat_last_n: u32,
    /// Sampler seed (default: random).
    #[arg(short = 's', long)]
    pub seed: Option<u64>,
}

pub fn finite(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => Err(format!("{s} is not a number")),
    }
}

pub fn positive(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!("{s} is not a number > 0")),
    }
}

fn unit(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if (0.0..=1.0).contains(&v) => Ok(v),
        _ => Err(format!("{s} is not a number from 0 to 1")),
    }
}

/// llama.cpp spells GPU layers `-ngl N`, which clap would read as `-n gl`: the command line
/// with `-ngl` (and `-ngl=N`) as `--n-gpu-layers`.
pub fn llama_cpp_spellings(
    args: impl IntoIterator<Item = std::ffi::OsString>,
) -> Vec<std::ffi::OsString> {
    args.into_iter()
        .map(|a| match a.to_str() {
            Some("-ngl") => "--n-gpu-layers".into(),
            Some(s) if s.starts_with("-ngl=") => format!("--n-gpu-layers={}", &s[5..]).into(),
            _ => a,
        })
        .collect()
}

impl ModelArgs {
    /// The image, given as IMAGE or -m.
    pub fn image(&self) -> &Path {
        self.image
            .as_deref()
            .or(self.model.as_deref())
            .expect("clap requires IMAGE or -m")
    }

    /// When IMAGE is a GGUF: convert it (once, into the cache) with the settings
    /// convert's advice picks (`ssnail_convert::advised`: the defaults when they fit, else the
    /// first larger memory size it names, with the weight format named), say so in one line
    /// on stderr, and use that image from now on. `ctx` (`-c`) is the context to convert with.
    pub fn convert_gguf(&mut self, ctx: Option<u32>) -> Result<()> {
        let path = self.image().to_path_buf();
        if !is_gguf(&path)? {
            return Ok(());
        }
        let g = ssnail_gguf::Gguf::open(&path)?;
        let base = ssnail_convert::Options {
            policy: ssnail_convert::Policy::Auto,
            ctx,
            ..Default::default()
        };
        let opts = ssnail_convert::advised(&g, &base).map_err(|e| {
            anyhow!(
                "{}: a GGUF that fits no memory size SSNAIL has, so it cannot be converted: {}",
                path.display(),
                e.msg.lines().next().unwrap_or("")
            )
        })?;
        let flags = format!(
            "--mem-mb {} --wtype {} --ctx {}",
            ssnail_convert::report::fmt_mb(opts.mem_mb),
            opts.policy.name(),
            opts.ctx.unwrap_or(0)
        );
        let out = converted_image_path(&path, &flags)?;
        let command = format!("ssnail convert {} {flags}", path.display());
        if out.exists() {
            eprintln!(
                "[{} is a GGUF: using its conversion {} ({command} makes it)]",
                path.display(),
                out.display()
            );
        } else {
            let plan = ssnail_convert::plan(&g, &opts).map_err(|e| anyhow!(e))?;
            let image = plan.build(&|_| {}).image;
            ssnail_output::write(&out, &image, &[&path])?;
            eprintln!(
                "[{} is a GGUF: converted into {} as {command} would]",
                path.display(),
                out.display()
            );
        }
        self.image = Some(out);
        self.model = None;
        Ok(())
    }

    /// Notes on llama.cpp options that have no effect here (`-ngl`), and the context a run or
    /// conversation may use: `-c` up to the image's context, else an error naming the
    /// conversion that gives a longer one.
    pub fn context(&self, header: &ssnail_format::image::Header) -> Result<u32> {
        if let Some(n) = &self.n_gpu_layers {
            eprintln!(
                "[-ngl {n}: no effect here: the SSNAIL core emulator runs on the CPU, there is no GPU to offload to]"
            );
        }
        match self.ctx {
            Some(c) if c > header.max_ctx => anyhow::bail!(
                "-c {c}: {} has a {}-token context, fixed when converting: ssnail convert MODEL.gguf --ctx {c} makes an image with {c}",
                self.image().display(),
                header.max_ctx
            ),
            Some(c) => Ok(c),
            None => Ok(header.max_ctx),
        }
    }

    /// Load the image through the emulated load port with the memory size,
    /// numerics and GEMV threads asked for.
    pub fn load(&self) -> Result<Ssnail> {
        self.load_at(self.image())
    }

    /// [`ModelArgs::load`] for another image (chat's `/models N`).
    pub fn load_at(&self, image: &Path) -> Result<Ssnail> {
        not_llama2c(image, true)?;
        let mem = match self.mem_mb {
            Some(mb) if !(mb.is_finite() && mb > 0.0) => {
                anyhow::bail!("--mem-mb {mb}: not a memory size")
            }
            Some(mb) => Some((mb * ssnail_format::image::MIB as f64).ceil() as usize),
            None => None,
        };
        let (mut dev, _report) = Ssnail::load_file(image, mem).map_err(|e| anyhow!("{e}"))?;
        dev.machine.numerics = if self.hw || !self.float && !dev.header().is_encoder() {
            Numerics::Hardware
        } else {
            Numerics::Float
        };
        if let Some(t) = self.threads {
            dev.machine.set_threads(cap_threads(t));
        }
        Ok(dev)
    }

    /// The chat template lines are wrapped in: the image's chat block
    /// (§2.6), unless `--raw` or the image has none; a damaged block is an
    /// error naming the image.
    pub fn chat_template(&self, dev: &Ssnail, image: &Path) -> Result<Option<ChatBlock>> {
        if self.raw || dev.header().is_encoder() {
            return Ok(None);
        }
        dev.chat_block()
            .transpose()
            .map_err(|e| anyhow!("{}: {e} (header $7C)", image.display()))
    }
}

/// `-t/--threads N` beyond the cores this machine has: the cores, with one
/// message (more threads than cores only wait on each other, and
/// `--threads 100000` would ask the system for 100,000 threads).
pub fn cap_threads(asked: usize) -> usize {
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    if asked > cores {
        eprintln!("--threads {asked}: using {cores}, the cores available");
        cores
    } else {
        asked.max(1)
    }
}

/// The name of a stop reason (runtime block $54).
pub fn stop_name(reason: u32) -> String {
    match reason {
        stop::COUNT => "count".into(),
        stop::EOS => "end of text".into(),
        stop::CONTEXT_FULL => "context full".into(),
        stop::REQUESTED => "stop requested".into(),
        other => format!("unknown ({other})"),
    }
}

/// True if the file starts with GGUF's magic.
pub fn is_gguf(path: &Path) -> Result<bool> {
    let mut magic = [0u8; 4];
    let mut f =
        std::fs::File::open(path).with_context(|| format!("{}: cannot open", path.display()))?;
    let n = f.read(&mut magic).unwrap_or(0);
    Ok(n == 4 && &magic == b"GGUF")
}

/// The cache folder for images converted on the fly: `$SSNAIL_CACHE/converted` (the Makefile
/// sets it to the repository's cache/), else `$XDG_CACHE_HOME/ssnail/converted`, else
/// `~/.cache/ssnail/converted`.
fn converted_dir() -> Result<PathBuf> {
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let dir = env("SSNAIL_CACHE")
        .map(|c| c.join("converted"))
        .or_else(|| env("XDG_CACHE_HOME").map(|c| c.join("ssnail/converted")))
        .or_else(|| env("HOME").map(|h| h.join(".cache/ssnail/converted")))
        .ok_or_else(|| anyhow!("no cache folder for the converted image: set SSNAIL_CACHE"))?;
    std::fs::create_dir_all(&dir).with_context(|| format!("{}: cannot create", dir.display()))?;
    Ok(dir)
}

/// `<stem>-<key>.ssnail` in [`converted_dir`]: the key hashes the GGUF (canonical path, size,
/// modification time), the conversion flags and this `ssnail` binary (size and time), so a
/// changed model, other settings or another converter make a new image.
fn converted_image_path(gguf: &Path, flags: &str) -> Result<PathBuf> {
    use sha2::{Digest, Sha256};
    let stamp = |p: &Path| -> Result<String> {
        let m = std::fs::metadata(p).with_context(|| format!("{}: cannot read", p.display()))?;
        let t = m
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        Ok(format!("{} {} {t}", p.display(), m.len()))
    };
    let canonical = gguf.canonicalize().unwrap_or_else(|_| gguf.to_path_buf());
    let mut h = Sha256::new();
    h.update(stamp(&canonical)?);
    h.update(flags);
    if let Ok(exe) = std::env::current_exe() {
        h.update(stamp(&exe).unwrap_or_default());
    }
    let key: String = h.finalize()[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let stem = gguf
        .file_stem()
        .map_or("model".into(), |s| s.to_string_lossy().into_owned());
    Ok(converted_dir()?.join(format!("{stem}-{key}.ssnail")))
}

/// True if the file starts with the SSNAIL magic.
pub fn is_image(path: &Path) -> Result<bool> {
    let mut magic = [0u8; 4];
    let mut f =
        std::fs::File::open(path).with_context(|| format!("{}: cannot open", path.display()))?;
    let n = f.read(&mut magic).unwrap_or(0);
    Ok(n == 4 && &magic == ssnail_format::image::MAGIC)
}

/// Read an image file into its memory view; errors name the file.
pub fn load_image(path: &Path) -> Result<Vec<u8>> {
    let file = std::fs::read(path).with_context(|| format!("{}: cannot read", path.display()))?;
    image_memory(&file).map_err(|e| anyhow!("{}: {e}", path.display()))
}

/// An error naming the import command when `path` is a llama2.c
/// checkpoint, given where a GGUF (or, `image`, an SSNAIL image) belongs.
pub fn not_llama2c(path: &Path, image: bool) -> Result<()> {
    match ssnail_hub::import::llama2c::hint(path, image) {
        Some(msg) => Err(anyhow!("{msg}")),
        None => Ok(()),
    }
}

/// Open a GGUF's reference tokenizer; errors name the file.
pub fn load_gguf_tokenizer(path: &Path) -> Result<GgufTokenizer> {
    not_llama2c(path, false)?;
    let g = ssnail_gguf::Gguf::open(path)?;
    let v = Vocab::from_gguf(&g)?;
    GgufTokenizer::new(v).map_err(|e| anyhow!("{}: {e}", path.display()))
}

/// Print to stdout; a closed pipe (`ssnail info x | head`) is not an error.
pub fn print_stdout(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(anyhow!("cannot write to stdout: {e}"))
        }
        _ => Ok(()),
    }
}
