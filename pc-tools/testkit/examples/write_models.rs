//! Write the §10 test models to a directory, for trying the tools by hand:
//! `cargo run -p ssnail-testkit --example write_models -- DIR`
//! (llama-{f32,q8_0,q4_0,q4_k}.gguf, gpt2-{f32,q8_0}.gguf, bert-{mean,cls}.gguf).

use ssnail_format::ggml::GgmlType::*;
use ssnail_testkit::models::{self, ModelOpts};

fn main() {
    let dir = std::env::args().nth(1).unwrap_or_else(|| ".".into());
    let put = |name: &str, o: ModelOpts| {
        let p = std::path::Path::new(&dir).join(name);
        models::write(&p, &models::build(&o));
        println!("{}", p.display());
    };
    put("llama-f32.gguf", ModelOpts::llama());
    put("llama-q8_0.gguf", ModelOpts::llama().with_wtype(Q8_0));
    put("llama-q4_0.gguf", ModelOpts::llama().with_wtype(Q4_0));
    put(
        "llama-q4_k.gguf",
        ModelOpts::llama().with_wtype(Q4K).with_tied(true),
    );
    put("gpt2-f32.gguf", ModelOpts::gpt2());
    put(
        "gpt2-q8_0.gguf",
        ModelOpts::gpt2().with_wtype(Q8_0).with_tied(false),
    );
    put("bert-mean.gguf", ModelOpts::bert());
    put(
        "bert-cls.gguf",
        ModelOpts::bert().with_wtype(Q8_0).with_pooling(2),
    );
}
