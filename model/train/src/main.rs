//! `ssnail-train train …` trains and writes a GGUF; `ssnail-train eval …` measures a GGUF's
//! exact answers as it ships (ssnail_core, hardware numerics). model/README.md.

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};
use ssnail_core::Numerics;
use ssnail_train::corpus::{self, Qa, Tok};
use ssnail_train::model::{Config, Model};
use ssnail_train::train::{self, Recipe};
use ssnail_train::{eval, export, spm};
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Parser)]
#[command(
    name = "ssnail-train",
    about = "Train and measure the MEGA65 model (model/README.md)"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Train on the corpus's training phrasings and write the GGUF.
    Train {
        /// Folder with train.tsv and dev.tsv.
        #[arg(long, default_value = "model/corpus")]
        corpus: PathBuf,
        /// The SentencePiece model (.model).
        #[arg(long)]
        spm: PathBuf,
        #[arg(long, default_value_t = 64)]
        dim: usize,
        #[arg(long, default_value_t = 1)]
        layers: usize,
        #[arg(long, default_value_t = 2)]
        heads: usize,
        #[arg(long, default_value_t = 128)]
        hidden: usize,
        #[arg(long, default_value_t = 64)]
        ctx: usize,
        #[arg(long, default_value_t = 3000)]
        steps: usize,
        #[arg(long, default_value_t = 64)]
        batch: usize,
        #[arg(long, default_value_t = 3e-3)]
        lr: f64,
        #[arg(long, default_value_t = 0.0)]
        weight_decay: f64,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Log every N steps (with the dev set's exact rate).
        #[arg(long, default_value_t = 250)]
        every: usize,
        #[arg(short, long)]
        output: PathBuf,
        #[arg(long, default_value = "ssnail-mega65-qa")]
        name: String,
        /// Word-dropped copies of each training question (corpus::variants); with 0 and
        /// --no-case only the phrasings as written are trained.
        #[arg(long, default_value_t = 2)]
        drops: usize,
        /// No lower-case, upper-case and no-'?' copies.
        #[arg(long)]
        no_case: bool,
    },
    /// Exact answers of a GGUF on the corpus sets, converted and run on ssnail_core.
    Eval {
        gguf: PathBuf,
        #[arg(long, default_value = "model/corpus")]
        corpus: PathBuf,
        /// Comma-separated: train, dev, test.
        #[arg(long, default_value = "train,dev")]
        sets: String,
        /// The float reference (`ssnail run --float`) instead of hardware numerics.
        #[arg(long)]
        float: bool,
        #[arg(long, default_value_t = 64)]
        ctx: u32,
        /// Write every question and answer (TSV: set, question, expected, generated ids, answer,
        /// exact): model/answers/hw.tsv is this file for the shipped model.
        #[arg(long)]
        answers: Option<PathBuf>,
    },
}

fn seqs(tok: &Tok, qa: &[Qa], ctx: usize, what: &Path) -> Result<Vec<corpus::Seq>> {
    qa.iter()
        .map(|q| {
            let s = tok.seq(q);
            if s.ids.len() > ctx {
                bail!(
                    "{}: {:?} -> {:?} is {} tokens, more than the context of {ctx}",
                    what.display(),
                    q.question,
                    q.answer,
                    s.ids.len()
                );
            }
            Ok(s)
        })
        .collect()
}

fn main() {
    if let Err(e) = run(Cli::parse()) {
        eprintln!("ssnail-train: {e:#}");
        std::process::exit(1);
    }
}

fn run(cli: Cli) -> Result<()> {
    match cli.cmd {
        Cmd::Train {
            corpus,
            spm,
            dim,
            layers,
            heads,
            hidden,
            ctx,
            steps,
            batch,
            lr,
            weight_decay,
            seed,
            every,
            output,
            name,
            drops,
            no_case,
        } => {
            let pieces = spm::read(&spm)?;
            let vocab = corpus::vocab(&pieces).with_context(|| spm.display().to_string())?;
            let tok = Tok::new(vocab.clone())?;
            let tp = corpus.join("train.tsv");
            let dp = corpus.join("dev.tsv");
            let mut rng = ssnail_train::rng::Rng::new(seed ^ 0xA5);
            let mut varied = Vec::new();
            for q in corpus::read_tsv(&tp)? {
                let vs = if no_case {
                    vec![q.question.clone()]
                } else {
                    corpus::variants(&q.question, drops, &mut rng)
                };
                for v in vs {
                    let vq = Qa {
                        question: v.clone(),
                        ..q.clone()
                    };
                    // a variant that does not fit the context is left out (the phrasing as
                    // written must fit: seqs() says so)
                    if v != q.question && tok.seq(&vq).ids.len() > ctx {
                        continue;
                    }
                    varied.push(Qa {
                        question: v,
                        ..q.clone()
                    });
                }
            }
            let tr = seqs(&tok, &varied, ctx, &tp)?;
            let dv = seqs(&tok, &corpus::read_tsv(&dp)?, ctx, &dp)?;
            let cfg = Config {
                vocab: vocab.tokens.len(),
                dim,
                layers,
                heads,
                hidden,
                ctx,
                eps: 1e-5,
                rope_base: 10000.0,
            };
            let m = Model::new(cfg.clone(), seed)?;
            let r = Recipe {
                steps,
                batch,
                lr,
                weight_decay,
                warmup: (steps / 20).max(1),
                seed,
            };
            let longest = tr.iter().chain(&dv).map(|s| s.ids.len()).max().unwrap_or(0);
            eprintln!(
                "{cfg:?}\n{r:?}\n{} training and {} dev sequences, the longest {longest} tokens",
                tr.len(),
                dv.len()
            );
            let start = std::time::Instant::now();
            let eos = tok.eos();
            train::train(&m, &tr, eos, &r, every, &mut |step, lr, loss| {
                let (dx, dl) = train::evaluate(&m, &dv, eos)?;
                eprintln!(
                    "step {step:5}  lr {lr:.5}  loss {loss:.4}  dev loss {dl:.4}  dev exact {:.1}%  {:.0}s",
                    dx * 100.0,
                    start.elapsed().as_secs_f64()
                );
                Ok(())
            })?;
            let (tx, tl) = train::evaluate(&m, &tr, eos)?;
            let (dx, dl) = train::evaluate(&m, &dv, eos)?;
            eprintln!(
                "done in {:.0}s: train exact {:.1}% (loss {tl:.4}), dev exact {:.1}% (loss {dl:.4}) in the trainer's forward pass",
                start.elapsed().as_secs_f64(),
                tx * 100.0,
                dx * 100.0
            );
            let desc = format!(
                "Answers questions about the MEGA65, SSNAIL and itself; trained by ssnail-train (dim {dim}, {layers} layers, hidden {hidden}, seed {seed}, {steps} steps)"
            );
            let bytes = export::gguf(&m, &vocab, &name, &desc)?;
            std::fs::write(&output, bytes)
                .with_context(|| format!("{}: cannot write", output.display()))?;
            eprintln!("wrote {}", output.display());
        }
        Cmd::Eval {
            gguf,
            corpus,
            sets,
            float,
            ctx,
            answers,
        } => {
            let numerics = if float {
                Numerics::Float
            } else {
                Numerics::Hardware
            };
            let mut run = eval::Runner::new(&gguf, ctx, numerics)?;
            let mut out = String::from("set\tquestion\texpected\tids\tanswer\texact\n");
            for set in sets.split(',') {
                let p = corpus.join(format!("{set}.tsv"));
                let qa = corpus::read_tsv(&p)?;
                let (mut exact, mut ended) = (0, 0);
                for q in &qa {
                    let a = run.answer(&q.question)?;
                    let ok = a.ended && a.text == q.answer;
                    exact += ok as usize;
                    ended += a.ended as usize;
                    let ids: Vec<String> = a.ids.iter().map(|i| i.to_string()).collect();
                    out.push_str(&format!(
                        "{set}\t{}\t{}\t{}\t{}{}\t{}\n",
                        q.question,
                        q.answer,
                        ids.join(","),
                        a.text,
                        if a.ended { "" } else { " [no end]" },
                        ok as u8
                    ));
                }
                println!(
                    "{set}: {exact}/{} exact ({:.1}%), {ended} ended by the EOS",
                    qa.len(),
                    100.0 * exact as f64 / qa.len() as f64
                );
            }
            if let Some(a) = answers {
                let mut f = std::fs::File::create(&a)
                    .with_context(|| format!("{}: cannot write", a.display()))?;
                f.write_all(out.as_bytes())?;
            }
        }
    }
    Ok(())
}
