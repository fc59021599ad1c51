//! `hrl train`: train the compact policy on a suite's `[train]` tasks. The flags
//! become `train::config::TrainOverrides`, resolved against the suite by the library
//! (`TrainSettings::resolve`); this file only prints one line per step.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use harness_rl::eval::suite::Suite;
use harness_rl::records::train::TrainStep;
use harness_rl::train::config::{TrainOverrides, TrainSettings};
use harness_rl::train::trainer;

use super::engine_args::EngineArgs;

#[derive(Args)]
pub struct TrainArgs {
    /// The suite file (TOML) with a [train] table (see suites/train-smoke.toml).
    #[arg(long)]
    pub suite: PathBuf,
    /// Training steps [default: the suite's train.steps]. 0 writes the untrained
    /// (uniform) policy to DIR/last.json without running the executor.
    #[arg(long)]
    pub steps: Option<u64>,
    /// Output directory [default: runs/train-<suite>-<hash>].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Continue the run in --out from its last.json (same settings; --steps may grow).
    #[arg(long)]
    pub resume: bool,
    /// Training contexts per step.
    #[arg(long)]
    pub batch: Option<usize>,
    /// Revisions sampled per context (G).
    #[arg(long)]
    pub group: Option<usize>,
    /// Adam learning rate.
    #[arg(long)]
    pub lr: Option<f64>,
    /// Entropy bonus coefficient.
    #[arg(long)]
    pub entropy: Option<f64>,
    /// KL-to-initial-policy coefficient.
    #[arg(long)]
    pub kl: Option<f64>,
    /// Longest revision (edits before stop).
    #[arg(long)]
    pub max_edits: Option<usize>,
    /// Revision rounds per context (1: single-revision training).
    #[arg(long)]
    pub rounds: Option<u32>,
    /// Write ckpt-<step>.json every N steps.
    #[arg(long)]
    pub checkpoint_every: Option<u64>,
    /// Measure the held-out score every N steps (0: only after the last step).
    #[arg(long)]
    pub eval_every: Option<u64>,
    /// Training seed (overrides the suite's).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Train even though a held-out task shares a family (at another level) with a
    /// training task; recorded in train-config.json and every checkpoint.
    #[arg(long)]
    pub allow_family_overlap: bool,
    #[command(flatten)]
    pub engine: EngineArgs,
    /// Print each step's line as JSON.
    #[arg(long)]
    pub json: bool,
}

/// The flags as a library config.
pub fn settings(a: &TrainArgs) -> Result<TrainSettings> {
    let suite = Suite::load(&a.suite)?;
    let o = TrainOverrides {
        steps: a.steps,
        batch: a.batch,
        group: a.group,
        lr: a.lr,
        entropy: a.entropy,
        kl: a.kl,
        max_edits: a.max_edits,
        rounds: a.rounds,
        checkpoint_every: a.checkpoint_every,
        eval_every: a.eval_every,
        seed: a.seed,
        engine: a.engine.overrides(),
        out: a.out.clone(),
        allow_family_overlap: a.allow_family_overlap,
    };
    Ok(TrainSettings::resolve(&suite, &o)?)
}

/// This invocation's command line with `--resume` (and `--out OUT` when it had none):
/// a training run resumes with the same flags.
fn resume_command(out: &std::path::Path) -> String {
    let args: Vec<String> = std::env::args().collect();
    let mut words: Vec<String> = args.iter().filter(|a| *a != "--resume").cloned().collect();
    if !args.iter().any(|a| a == "--out" || a.starts_with("--out=")) {
        words.push("--out".into());
        words.push(out.display().to_string());
    }
    words.push("--resume".into());
    words
        .iter()
        .map(|w| {
            if w.is_empty() || w.contains(|c: char| c.is_whitespace() || "'\"$`\\".contains(c)) {
                format!("'{}'", w.replace('\'', "'\\''"))
            } else {
                w.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

pub fn run(a: TrainArgs) -> Result<()> {
    let s = settings(&a)?;
    super::interrupt::print_resume_on_ctrl_c(&resume_command(&s.out));
    let json = a.json;
    let progress = |l: &TrainStep| {
        if json {
            println!("{}", serde_json::to_string(l).unwrap_or_default());
        } else {
            println!(
                "step {:>4}  reward {:.3} ± {:.3}  held-out validation {}  entropy {:.3}  invalid {:.2}  memo {}/{}  cache {}/{}  {:.1} s",
                l.step,
                l.reward_mean,
                l.reward_std,
                l.heldout_score
                    .map(|h| format!("{h:.3}"))
                    .unwrap_or_else(|| "  -  ".into()),
                l.entropy,
                l.invalid_rate,
                l.memo_hits,
                l.memo_hits + l.memo_misses,
                l.cache_hits,
                l.cache_hits + l.cache_misses,
                l.wall_s
            );
        }
    };
    let out = trainer::run(&s, a.resume, &progress)?;
    eprintln!(
        "trained {} steps; policy in {} (evaluate with: hrl eval --proposer policy:{})",
        out.steps,
        out.checkpoint.display(),
        out.checkpoint.display()
    );
    Ok(())
}
