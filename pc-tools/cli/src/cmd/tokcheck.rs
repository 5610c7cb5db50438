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

/// "id:'text'" for a token (specials, with no text, as "id:<>").
fn piece(id: u32, bytes: &[u8]) -> String {
    if bytes.is_empty() {
        format!("{id}:<>")
    } else {
        format!("{id}:{:?}", String::from_utf8_lossy(bytes))
    }
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
            let image_pieces: Vec<String> = got
                .iter()
                .map(|&id| match image.token_bytes(id) {
                    // Specials have no text in the image: the GGUF's name.
                    [] => piece(id, reference.piece(id).as_bytes()),
                    b => piece(id, b),
                })
                .collect();
            let gguf_pieces: Vec<String> = want
                .iter()
                .map(|&id| piece(id, reference.piece(id).as_bytes()))
                .collect();
            println!("  image: {}", image_pieces.join(" "));
            println!("  gguf:  {}", gguf_pieces.join(" "));
            // The MEGA65 types ASCII: the image tokenizer reads every other
            // character as '?' (§2.5). Say so when that is the whole difference.
            let ascii: String = line
                .chars()
                .map(|c| if c.is_ascii() { c } else { '?' })
                .collect();
            if ascii != line && reference.encode(&ascii, true) == got {
                println!(
                    "  (ASCII only: the image reads {ascii:?}, each non-ASCII character as '?', \
                     as the MEGA65 keyboard types it; the GGUF gives the same tokens for that text)"
                );
            }
        }
    }
    let probes = image.probes() as f64 / tokens.max(1) as f64;
    println!("{same}/{n} lines identical ({tokens} tokens); {probes:.1} index probes per token");
    if same != n {
        bail!("{} of {n} lines differ", n - same);
    }
    Ok(())
}
