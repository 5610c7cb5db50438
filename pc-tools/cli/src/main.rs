//! `ssnail`: one command for the SSNAIL tools.
//!
//! Each subcommand lives in its own file under `cmd/` with an `Args` struct
//! (clap) and a `run(Args) -> anyhow::Result<()>`. Errors print as one line,
//! `ssnail: <file>: <problem>`, with a non-zero exit.

mod cmd;
mod shared;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "ssnail",
    version,
    about = "SSNAIL tools: GGUF models on the MEGA65's LLM accelerator"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    // Subcommands: one variant per file in cmd/ (keep alphabetical).
    Bench(cmd::bench::Args),
    Chat(cmd::chat::Args),
    Convert(cmd::convert::Args),
    Fetch(cmd::fetch::Args),
    Findmodels(cmd::findmodels::Args),
    Import(cmd::import::Args),
    Info(cmd::info::Args),
    Mega65(cmd::mega65::Args),
    Run(cmd::run::Args),
    Tokcheck(cmd::tokcheck::Args),
    Tokenize(cmd::tokenize::Args),
}

fn main() {
    // Output piped into `head` should end the program quietly, as for any
    // Unix tool, not panic in println! on a closed pipe.
    #[cfg(unix)]
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse_from(shared::llama_cpp_spellings(std::env::args_os()));
    let result: anyhow::Result<()> = match cli.cmd {
        Cmd::Bench(a) => cmd::bench::run(a),
        Cmd::Chat(a) => cmd::chat::run(a),
        Cmd::Convert(a) => cmd::convert::run(a),
        Cmd::Fetch(a) => cmd::fetch::run(a),
        Cmd::Findmodels(a) => cmd::findmodels::run(a),
        Cmd::Import(a) => cmd::import::run(a),
        Cmd::Info(a) => cmd::info::run(a),
        Cmd::Mega65(a) => cmd::mega65::run(a),
        Cmd::Run(a) => cmd::run::run(a),
        Cmd::Tokcheck(a) => cmd::tokcheck::run(a),
        Cmd::Tokenize(a) => cmd::tokenize::run(a),
    };
    if let Err(e) = result {
        // One line: the chain of causes joined, never a backtrace.
        eprintln!("ssnail: {e:#}");
        std::process::exit(1);
    }
}
