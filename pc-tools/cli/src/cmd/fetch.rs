//! `ssnail fetch URL [-o FILE]`: download a model with a progress bar,
//! resuming an interrupted transfer (`FILE.part`) and writing `FILE` only
//! when it is complete.

use anyhow::Context;
use std::io::IsTerminal;
use std::path::PathBuf;

#[derive(clap::Args)]
#[command(
    about = "Download a file (e.g. a GGUF from Hugging Face), resuming interrupted transfers"
)]
pub struct Args {
    /// URL to download, e.g. https://huggingface.co/<repo>/resolve/main/<file>.gguf
    pub url: String,
    /// Output file (default: the URL's last path component, in the current directory)
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Download again even if the output file exists
    #[arg(long)]
    pub force: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let out = match args.output {
        Some(p) => p,
        None => ssnail_hub::fetch::file_name_from_url(&args.url)
            .map(PathBuf::from)
            .with_context(|| format!("{}: no file name in the URL; give one with -o", args.url))?,
    };
    if out.exists() && !args.force {
        eprintln!(
            "{} already exists; not downloading it again (--force to replace it)",
            out.display()
        );
        return Ok(());
    }
    let done = ssnail_hub::fetch::fetch(&args.url, &out, std::io::stderr().is_terminal())?;
    if done.resumed_from > 0 {
        eprintln!(
            "wrote {} ({} bytes, resumed at byte {})",
            done.path.display(),
            done.bytes,
            done.resumed_from
        );
    } else {
        eprintln!("wrote {} ({} bytes)", done.path.display(), done.bytes);
    }
    Ok(())
}
