//! `ssnail tokenize MODEL TEXT`: token ids from a GGUF's reference tokenizer
//! (llama.cpp-exact) or, given an SSNAIL image, from the image's own tables.

use crate::shared::{is_image, load_gguf_tokenizer, load_image};
use anyhow::{bail, Context, Result};
use clap::Parser;
use ssnail_tokenizer::ImageTokenizer;
use std::io::Read;
use std::path::PathBuf;

#[derive(Parser)]
#[command(about = "Tokenize text with a GGUF's tokenizer, or an image's (.ssnail) own tables")]
pub struct Args {
    /// A GGUF model (or vocab-only GGUF), or an SSNAIL image.
    #[arg(required_unless_present = "model_flag")]
    pub model: Option<PathBuf>,
    /// The text (or use -p, -f or --stdin).
    pub text: Option<String>,
    /// The model, as llama-tokenize spells it (then TEXT may follow it directly).
    #[arg(short = 'm', long = "model", id = "model_flag", value_name = "MODEL")]
    pub model_flag: Option<PathBuf>,
    /// The text, as llama-tokenize spells it.
    #[arg(short = 'p', long = "prompt", conflicts_with_all = ["text", "file", "stdin"])]
    pub prompt: Option<String>,
    /// Read the text from a file.
    #[arg(short = 'f', long = "file", conflicts_with_all = ["text", "stdin"])]
    pub file: Option<PathBuf>,
    /// Read the text from standard input.
    #[arg(long, conflicts_with = "text")]
    pub stdin: bool,
    /// Print only the ids, comma-separated (for `--tokens`).
    #[arg(long)]
    pub ids: bool,
    /// No BOS / [CLS] … [SEP].
    #[arg(long)]
    pub no_bos: bool,
}

pub fn run(mut args: Args) -> Result<()> {
    // With -m, a lone positional argument is the text, not the model.
    let model = match (args.model_flag.take(), args.model.take()) {
        (Some(m), Some(p)) if args.text.is_none() => {
            args.text = Some(p.to_string_lossy().into_owned());
            m
        }
        (Some(_), Some(_)) => bail!("the model is given twice: as MODEL and with -m"),
        (Some(m), None) | (None, Some(m)) => m,
        (None, None) => bail!("no model: give MODEL or -m MODEL"),
    };
    if let Some(p) = args.prompt.take() {
        args.text = Some(p);
    }
    let text = if let Some(f) = &args.file {
        std::fs::read_to_string(f).with_context(|| format!("{}: cannot read text", f.display()))?
    } else if args.stdin {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .context("standard input: cannot read text")?;
        s
    } else if let Some(t) = &args.text {
        t.clone()
    } else {
        bail!("no text: give TEXT, -f FILE or --stdin");
    };

    let (ids, pieces): (Vec<u32>, Vec<String>) = if is_image(&model)? {
        let mem = load_image(&model)?;
        let tok =
            ImageTokenizer::new(&mem).map_err(|e| anyhow::anyhow!("{}: {e}", model.display()))?;
        let mut ids = tok.encode(&text, !args.no_bos);
        if args.no_bos && tok.kind() == ssnail_format::tokblock::TokKind::WordPiece {
            // WordPiece always wraps; --no-bos asks for the bare pieces.
            let b = &tok.block;
            if ids.first() == Some(&b.begin) {
                ids.remove(0);
            }
            if ids.last() == Some(&b.end) {
                ids.pop();
            }
        }
        let pieces = ids
            .iter()
            .map(|&id| {
                let b = &tok.block;
                let bytes = tok.token_bytes(id);
                match id {
                    _ if !bytes.is_empty() => String::from_utf8_lossy(bytes).into_owned(),
                    _ if id == b.begin => "<begin>".into(),
                    _ if id == b.end => "<end>".into(),
                    _ if id == b.unk => "<unk>".into(),
                    _ => String::new(),
                }
            })
            .collect();
        (ids, pieces)
    } else {
        crate::shared::not_llama2c(&model, false)?;
        // Neither magic: say what was expected of both kinds of input (an
        // image with a damaged magic is not "not a GGUF file").
        let mut magic = [0u8; 4];
        let n = std::fs::File::open(&model)
            .and_then(|mut f| std::io::Read::read(&mut f, &mut magic))
            .unwrap_or(0);
        if n == 4 && &magic != b"GGUF" {
            bail!(
                "{}: neither an SSNAIL image nor a GGUF file (magic {:02X} {:02X} {:02X} {:02X}, expected 'SSNL' or 'GGUF')",
                model.display(),
                magic[0],
                magic[1],
                magic[2],
                magic[3]
            );
        }
        let tok = load_gguf_tokenizer(&model)?;
        let ids = tok.encode(&text, !args.no_bos);
        let pieces = ids.iter().map(|&id| tok.piece(id)).collect();
        (ids, pieces)
    };

    if args.ids {
        let list: Vec<String> = ids.iter().map(u32::to_string).collect();
        println!("{}", list.join(","));
    } else {
        for (id, piece) in ids.iter().zip(&pieces) {
            println!("{id:6} -> '{piece}'");
        }
    }
    Ok(())
}
