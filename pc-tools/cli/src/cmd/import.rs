//! `ssnail import DIR -o MODEL.gguf`: turn a Hugging Face checkpoint
//! directory into a GGUF in llama.cpp's conventions, for `ssnail convert`;
//! `ssnail import model.bin --tokenizer tokenizer.bin -o MODEL.gguf` does
//! the same for a llama2.c checkpoint, as llama.cpp's convert-llama2c-to-ggml.

use anyhow::bail;
use ssnail_hub::import::{self, llama2c, OutType};
use std::path::PathBuf;

#[derive(clap::Args)]
#[command(
    about = "Turn a Hugging Face checkpoint directory (config.json, *.safetensors, tokenizer) or a llama2.c checkpoint (model.bin with --tokenizer tokenizer.bin) into a GGUF"
)]
pub struct Args {
    /// Checkpoint directory: config.json, model.safetensors, vocab.txt or
    /// tokenizer.json / tokenizer.model (and 1_Pooling/config.json for
    /// sentence-transformers models); or a llama2.c checkpoint file
    /// (legacy export, e.g. karpathy's tinyllamas stories15M.bin)
    #[arg(value_name = "DIR|MODEL.bin")]
    pub dir: PathBuf,
    /// Output GGUF file
    #[arg(short, long)]
    pub output: PathBuf,
    /// The llama2.c tokenizer.bin of a llama2.c checkpoint (tok512.bin for
    /// stories260K, the Llama 2 tokenizer.bin for stories15M/42M/110M)
    #[arg(long, value_name = "TOKENIZER.bin")]
    pub tokenizer: Option<PathBuf>,
    /// Matrix format: f32, f16, bf16, q8_0, or auto (f16; bf16 for bf16
    /// checkpoints; f32 for llama2.c checkpoints, as llama.cpp's converter)
    #[arg(long, default_value = "auto", value_parser = ["f32", "f16", "bf16", "q8_0", "auto"])]
    pub outtype: String,
    /// general.name (default: the directory's name, or the checkpoint file's stem)
    #[arg(long)]
    pub name: Option<String>,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let outtype = OutType::parse(&args.outtype).expect("checked by clap");
    let done = if args.dir.is_dir() {
        if let Some(t) = &args.tokenizer {
            bail!(
                "{}: --tokenizer is for llama2.c checkpoints (a model.bin file); {} is a Hugging Face checkpoint directory",
                t.display(),
                args.dir.display()
            );
        }
        import::import(&args.dir, &args.output, outtype, args.name.as_deref())?
    } else {
        let Some(tokenizer) = &args.tokenizer else {
            if !args.dir.exists() {
                bail!(
                    "{}: not a directory or a file (give a Hugging Face checkpoint directory, or a llama2.c model.bin with --tokenizer)",
                    args.dir.display()
                );
            }
            bail!(
                "{}: a file, so read as a llama2.c checkpoint, which needs its tokenizer: --tokenizer tokenizer.bin (tok512.bin for stories260K)",
                args.dir.display()
            );
        };
        llama2c::import(
            &args.dir,
            tokenizer,
            &args.output,
            outtype,
            args.name.as_deref(),
        )?
    };
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
