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
        /// The loss's weight at each answer's first token (the others weigh 1).
        #[arg(long, default_value_t = 1.0)]
        first_weight: f64,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Log every N steps (with the dev set's exact rate).
        #[arg(long, default_value_t = 250)]
        every: usize,
        #[arg(short, long)]
        output: PathBuf,
        #[arg(long, default_value = "ssnail-mega65-qa")]
        name: String,
        /// Each time a training question is drawn (corpus::augment; all at 0 trains the
        /// phrasings as written): the chance of each word being swapped for a word of the
        /// fact's other training phrasings.
        #[arg(long, default_value_t = 0.0)]
        mix_p: f64,
        /// ... the chance of a word of any training phrasing being put in.
        #[arg(long, default_value_t = 0.0)]
        insert_p: f64,
        /// ... the chance of a change of its letter case.
        #[arg(long, default_value_t = 0.5)]
        case_p: f64,
        /// ... the chance of each of its words being left out.
        #[arg(long, default_value_t = 0.1)]
        drop_p: f64,
        /// ... the chance of its final '?' being taken away or added.
        #[arg(long, default_value_t = 0.25)]
        mark_p: f64,
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

/// Keeps freed memory in the process: candle allocates and frees tensors of the same sizes
/// every step, and glibc's defaults give the large ones back to the kernel each time (a third
/// of a step went to page faults).
fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes glibc's thresholds; called before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 30);
        libc::mallopt(libc::M_TRIM_THRESHOLD, i32::MAX);
    }
}

fn main() {
    keep_freed_memory();
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
            first_weight,
            seed,
            every,
            output,
            name,
            mix_p,
            insert_p,
            case_p,
            drop_p,
            mark_p,
        } => {
            let pieces = spm::read(&spm)?;
            let vocab = corpus::vocab(&pieces).with_context(|| spm.display().to_string())?;
            let tok = Tok::new(vocab.clone())?;
            let tp = corpus.join("train.tsv");
            let dp = corpus.join("dev.tsv");
            let train_qa = corpus::read_tsv(&tp)?;
            let tr = seqs(&tok, &train_qa, ctx, &tp)?;
            let words = corpus::Words::new(&train_qa);
            let aug = corpus::Augment {
                mix: mix_p,
                insert: insert_p,
                case: case_p,
                drop: drop_p,
                mark: mark_p,
            };
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
                first_weight,
            };
            let longest = tr.iter().chain(&dv).map(|s| s.ids.len()).max().unwrap_or(0);
            eprintln!(
                "{cfg:?}\n{r:?}\n{} training and {} dev sequences, the longest {longest} tokens",
                tr.len(),
                dv.len()
            );
            let start = std::time::Instant::now();
            let eos = tok.eos();
            // each draw varies the question; a variant that does not fit the context is
            // trained as written (which fits: seqs() says so)
            let mut draw = |i: usize, rng: &mut ssnail_train::rng::Rng| {
                let q = &train_qa[i];
                let v = Qa {
                    question: corpus::augment(q, &words, &aug, rng),
                    ..q.clone()
                };
                let s = tok.seq(&v);
                if s.ids.len() > ctx {
                    tr[i].clone()
                } else {
                    s
                }
            };
            // the weights kept are those of the evaluation with the most exact dev answers
            // (the lower dev loss among equals)
            let mut best: Option<(usize, f64, f64, Vec<candle_core::Tensor>)> = None;
            train::train_with(
                &m,
                tr.len(),
                &mut draw,
                eos,
                &r,
                every,
                &mut |step, lr, loss| {
                    let (dx, dl) = train::evaluate(&m, &dv, eos)?;
                    eprintln!(
                    "step {step:5}  lr {lr:.5}  loss {loss:.4}  dev loss {dl:.4}  dev exact {:.1}%  {:.0}s",
                    dx * 100.0,
                    start.elapsed().as_secs_f64()
                );
                    if best
                        .as_ref()
                        .is_none_or(|b| dx > b.1 || (dx == b.1 && dl < b.2))
                    {
                        let w = m
                            .vars()
                            .iter()
                            .map(|v| v.as_tensor().copy())
                            .collect::<candle_core::Result<_>>()?;
                        best = Some((step, dx, dl, w));
                    }
                    Ok(())
                },
            )?;
            if let Some((step, _, _, w)) = &best {
                for (v, t) in m.vars().iter().zip(w) {
                    v.set(t)?;
                }
                eprintln!("kept the weights of step {step} (the most exact dev answers)");
            }
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
