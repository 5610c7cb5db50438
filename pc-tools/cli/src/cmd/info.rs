//! `ssnail info FILE`: for a GGUF, what it holds and what the converter
//! would make of it (memory needed per weight policy, which memory sizes
//! fit; gguf.rs); for an SSNAIL image, what the image holds (image.rs). `--json`
//! prints the same as one JSON object.

mod gguf;
mod image;

use std::path::PathBuf;

#[derive(clap::Args)]
#[command(
    about = "Show what a GGUF holds and what the converter would make of it, or what an SSNAIL image holds"
)]
pub struct Args {
    /// A GGUF model or an SSNAIL image (.ssnail).
    pub model: PathBuf,
    /// One JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Context to size the images for (default as `convert`).
    #[arg(long, short = 'c', visible_alias = "ctx-size")]
    pub ctx: Option<u32>,
    /// KV cache format to size the images for.
    #[arg(long, default_value = "f16", value_parser = ["f16", "f32"])]
    pub kv: String,
}

pub fn run(a: Args) -> anyhow::Result<()> {
    if crate::shared::is_image(&a.model)? {
        let info = image::inspect(&a.model)?;
        let text = if a.json {
            format!("{:#}\n", info.json())
        } else {
            info.text()
        };
        return crate::shared::print_stdout(&text);
    }
    let info = gguf::inspect(&a)?;
    if a.json {
        return crate::shared::print_stdout(&format!("{:#}\n", info.json()?));
    }
    let mut o = String::new();
    let r = info.text(&mut o);
    crate::shared::print_stdout(&o)?;
    r
}
