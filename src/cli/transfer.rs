//! `hrl transfer task|temporal|horizon`: the flags become
//! `eval::transfer::TransferOverrides`, resolved against the suite by the library
//! (`TransferSettings::resolve`); this file draws progress and prints `transfer.md`.

use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, Subcommand};
use harness_rl::eval::suite::{Suite, TransferKind};
use harness_rl::eval::transfer::{self, TransferOverrides, TransferSettings};

use super::UsageError;
use super::engine_args::{EngineArgs, ProtocolArgs};

#[derive(Subcommand)]
pub enum TransferCmd {
    /// Held-out task families (never used in training), from a zero-shot seed harness.
    Task(TransferArgs),
    /// LiveCodeBench problems new in v6 (after the release_v5 training cutoff).
    Temporal(TransferArgs),
    /// K = 1..K_max rounds for a proposer trained with fewer rounds.
    Horizon(TransferArgs),
}

#[derive(Args)]
pub struct TransferArgs {
    /// The transfer suite (a suite file with a [transfer] table; see suites/).
    #[arg(long, required_unless_present = "resume")]
    pub suite: Option<PathBuf>,
    /// Continue the transfer run in DIR with its recorded settings.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["suite", "out", "executor", "proposer", "candidates", "samples", "seed", "task", "limit", "lcb_dir", "shard", "no_reference"])]
    pub resume: Option<PathBuf>,
    /// With --resume: continue although the proposer's files (a `cmd:` script) changed
    /// since the run started (config.json records the old proposer).
    #[arg(long, requires = "resume")]
    pub accept_proposer_change: bool,
    #[command(flatten)]
    pub protocol: ProtocolArgs,
    /// Leave out the suite's reference proposers (e.g. the oracle harness).
    #[arg(long)]
    pub no_reference: bool,
    /// Output directory [default: runs/transfer-<suite>-<hash>]: transfer.json,
    /// transfer.md and one run directory per proposer.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// A LiveCodeBench code_generation_lite directory (test.jsonl .. test6.jsonl)
    /// instead of the suite's (temporal transfer).
    #[arg(long, value_name = "DIR")]
    pub lcb_dir: Option<PathBuf>,
    #[command(flatten)]
    pub engine: EngineArgs,
    /// Do not draw progress bars.
    #[arg(long)]
    pub no_progress: bool,
    /// Print transfer.json's index and the summaries as JSON.
    #[arg(long)]
    pub json: bool,
}

/// The flags as a library config.
pub fn settings(kind: TransferKind, a: &TransferArgs) -> Result<(TransferSettings, bool)> {
    if let Some(dir) = &a.resume {
        let mut ts = transfer::resume_settings(dir, kind)?;
        a.engine
            .overrides()
            .apply_to_resumed(&mut ts.index.settings);
        ts.index.settings.accept_proposer_change = a.accept_proposer_change;
        return Ok((ts, true));
    }
    let path = a
        .suite
        .as_ref()
        .ok_or_else(|| UsageError("give --suite FILE or --resume DIR".into()))?;
    let suite = Suite::load(path)?;
    let o = TransferOverrides {
        eval: a.protocol.overrides(&a.engine, a.out.clone())?,
        lcb_dir: a.lcb_dir.clone(),
        no_reference: a.no_reference,
    };
    Ok((TransferSettings::resolve(kind, &suite, &o)?, false))
}

pub fn run(cmd: TransferCmd) -> Result<()> {
    let (kind, a) = match cmd {
        TransferCmd::Task(a) => (TransferKind::Task, a),
        TransferCmd::Temporal(a) => (TransferKind::Temporal, a),
        TransferCmd::Horizon(a) => (TransferKind::Horizon, a),
    };
    let (ts, resume) = settings(kind, &a)?;
    super::interrupt::print_resume_on_ctrl_c(&format!(
        "hrl transfer {} --resume {}",
        kind.as_str(),
        ts.out().display()
    ));
    let outcome =
        super::eval::with_progress(&ts.index.settings, a.no_progress || a.json, |progress| {
            transfer::run(&ts, resume, progress)
        })?;
    // transfer.md, and every proposer's run directory gets its reports.
    let text = harness_rl::report::outputs::write_transfer(&outcome.out)?;
    let reports: Vec<PathBuf> = transfer::run_dirs(&outcome.out)?
        .into_iter()
        .map(|d| d.join("report.html"))
        .collect();
    if a.json {
        let v = serde_json::json!({
            "reports": reports,
            "index": outcome.index,
            "summaries": outcome.arms.iter().map(|o| &o.summary).collect::<Vec<_>>(),
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        print!("{text}");
        println!(
            "\nwritten to {} ({} and {})",
            outcome.out.display(),
            transfer::INDEX,
            transfer::SUMMARY_MD
        );
        for p in &reports {
            println!("report: {}", p.display());
        }
    }
    super::eval::print_notes(&ts.index.settings, &outcome.arms)
}
