//! `ssnail import DIR -o MODEL.gguf`: turn a Hugging Face checkpoint
//! directory into a GGUF in llama.cpp's conventions, for `ssnail convert`.

use ssnail_hub::import::{self, OutType};
use std::path::PathBuf;

#[derive(clap::Args)]
#[command(
    about = "Turn a Hugging Face checkpoint directory (config.json, *.safetensors, tokenizer) into a GGUF"
)]
pub struct Args {
    /// Checkpoint directory: config.json, model.safetensors, vocab.txt or
    /// tokenizer.json / tokenizer.model (and 1_Pooling/config.json for
    /// sentence-transformers models)
    pub dir: PathBuf,
    /// Output GGUF file
    #[arg(short, long)]
    pub output: PathBuf,
    /// Matrix format: f32, f16, bf16, q8_0, or auto (f16; bf16 for bf16 checkpoints)
    #[arg(long, default_value = "auto", value_parser = ["f32", "f16", "bf16", "q8_0", "auto"])]
    pub outtype: String,
    /// general.name (default: the directory's name)
    #[arg(long)]
    pub name: Option<String>,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let outtype = OutType::parse(&args.outtype).expect("checked by clap");
    let done = import::import(&args.dir, &args.output, outtype, args.name.as_deref())?;
    println!(
        "wrote {}: {} model, {} tensors, {} tokens, {:.2} MB",
        args.output.display(),
        done.arch,
        done.n_tensors,
        done.n_vocab,
        done.bytes as f64 / 1e6
    );
    Ok(())
}
