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
    /// The .ssnail image.
    #[arg(required_unless_present = "model", conflicts_with = "model")]
    pub image: Option<PathBuf>,
    /// The .ssnail image (llama.cpp's spelling; the same as IMAGE).
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
}

impl ModelArgs {
    /// The image, given as IMAGE or -m.
    pub fn image(&self) -> &Path {
        self.image
            .as_deref()
            .or(self.model.as_deref())
            .expect("clap requires IMAGE or -m")
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
