//! `ssnail findmodels`: search Hugging Face for GGUF models SSNAIL can run
//! and estimate which memory size each fits at which weight format (§8).

use ssnail_hub::findmodels::{self, Query};

#[derive(clap::Args)]
#[command(
    about = "Search Hugging Face for GGUF models SSNAIL can run, with size estimates",
    after_help = "The endpoint is https://huggingface.co unless SSNAIL_HF_ENDPOINT names another; \
                  proxies come from HTTPS_PROXY / ALL_PROXY."
)]
pub struct Args {
    /// Search terms (default: tinystories smollm minilm bert-tiny bert-mini
    /// tinyllama stories15m stories260k gpt2)
    pub terms: Vec<String>,
    /// Only models estimated to fit this memory size (MB)
    #[arg(long, value_parser = ["8", "64", "72"])]
    pub mem: Option<String>,
    /// Repositories per search term
    #[arg(long, default_value_t = findmodels::DEFAULT_LIMIT)]
    pub limit: usize,
    /// Also list unsupported architectures and models that fit nowhere
    #[arg(long)]
    pub all_arch: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let endpoint = ssnail_hub::http::hf_endpoint();
    let query = Query {
        terms: args.terms,
        mem: args.mem.map(|m| m.parse().expect("checked by clap")),
        limit: args.limit,
        all_arch: args.all_arch,
    };
    let rows = findmodels::find(&endpoint, &query, &mut |line| eprintln!("{line}"))?;
    print!("{}", findmodels::render(&rows, &endpoint));
    Ok(())
}
