//! `ssnail tokcheck IMAGE MODEL.gguf [TEXTFILE]`: the image tokenizer (the
//! MEGA65's algorithm over the image's tables) against the GGUF's reference
//! tokenizer, line by line.

use crate::shared::{is_image, load_gguf_tokenizer, load_image};
use anyhow::{bail, Context, Result};
use clap::Parser;
use ssnail_tokenizer::ImageTokenizer;
use std::path::PathBuf;

#[derive(Parser)]
#[command(about = "Compare an image's tokenizer with the GGUF's, line by line")]
pub struct Args {
    /// The SSNAIL image.
    pub image: PathBuf,
    /// The GGUF it was converted from.
    pub gguf: PathBuf,
    /// Text file (each non-blank line is checked); default: a built-in sample.
    pub text: Option<PathBuf>,
}

pub fn run(args: Args) -> Result<()> {
    if !is_image(&args.image)? {
        bail!(
            "{}: not an SSNAIL image (no 'SSNL' magic)",
            args.image.display()
        );
    }
    let mem = load_image(&args.image)?;
    let image =
        ImageTokenizer::new(&mem).map_err(|e| anyhow::anyhow!("{}: {e}", args.image.display()))?;
    let reference = load_gguf_tokenizer(&args.gguf)?;
    if image.block.n_vocab as usize != reference.vocab.n_vocab() {
        bail!(
            "{}: {} tokens, but {} has {}: not the image's GGUF",
            args.image.display(),
            image.block.n_vocab,
            args.gguf.display(),
            reference.vocab.n_vocab()
        );
    }
    let text = match &args.text {
        Some(p) => {
            std::fs::read_to_string(p).with_context(|| format!("{}: cannot read", p.display()))?
        }
        None => ssnail_tokenizer::CHECK_SAMPLE.to_string(),
    };
    let (mut same, mut n, mut tokens) = (0usize, 0usize, 0usize);
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let got = image.encode(line, true);
        let want = reference.encode(line, true);
        n += 1;
        tokens += got.len();
        if got == want {
            same += 1;
        } else {
            println!("DIFFER: {line}");
            println!("  image: {got:?}");
            println!("  gguf:  {want:?}");
        }
    }
    let probes = image.probes() as f64 / tokens.max(1) as f64;
    println!("{same}/{n} lines identical ({tokens} tokens); {probes:.1} index probes per token");
    if same != n {
        bail!("{} of {n} lines differ", n - same);
    }
    Ok(())
}
