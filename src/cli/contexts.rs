//! `hrl contexts export`: the training contexts of a suite (task, seed harness as
//! parent, its feedback report, the dev instances) as a dataset of proposer prompts
//! for RL trainers. The flags become eval `Overrides` resolved by the library
//! (`reward::resolve`); the library builds and writes everything.

use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, Subcommand, ValueEnum};
use harness_rl::eval::config::{EvalSettings, Overrides};
use harness_rl::eval::suite::Suite;
use harness_rl::reward::{self, context, score::RewardConfig, service};

use super::engine_args::EngineArgs;

/// The suite and what may override it (shared with `hrl reward-server`).
#[derive(Args, Clone)]
pub struct SuiteArgs {
    /// The suite file (TOML; see suites/): its tasks, sets, seed harnesses, executor,
    /// `[proposer]` settings (template, report_tokens, show_gold) and limits.
    #[arg(long)]
    pub suite: PathBuf,
    /// Only these tasks of the suite (task id like count_primes/L1, or a family name;
    /// repeatable).
    #[arg(long)]
    pub task: Vec<String>,
    /// Cut every set to N instances (changes the context ids, consistently).
    #[arg(long)]
    pub limit: Option<usize>,
    /// A proposer prompt template overriding the suite's.
    #[arg(long, value_name = "PATH")]
    pub proposer_template: Option<PathBuf>,
    #[command(flatten)]
    pub engine: EngineArgs,
}

impl SuiteArgs {
    /// The flags as evaluator settings.
    pub fn settings(&self) -> Result<EvalSettings> {
        let suite = Suite::load(&self.suite)?;
        let o = Overrides {
            engine: self.engine.overrides(),
            tasks: self.task.clone(),
            limit: self.limit,
            template: self.proposer_template.clone(),
            ..Overrides::default()
        };
        Ok(reward::resolve(&suite, &o)?)
    }
}

#[derive(Clone, Copy, ValueEnum)]
pub enum Format {
    /// JSON lines (`contexts.jsonl`).
    Jsonl,
}

#[derive(Subcommand)]
pub enum ContextsCmd {
    /// Write the proposer prompts of the suite's contexts as a dataset
    /// (DIR/contexts.jsonl, DIR/manifest.json, DIR/rollouts.jsonl of the feedback runs).
    Export(ExportArgs),
}

#[derive(Args)]
pub struct ExportArgs {
    #[command(flatten)]
    pub suite: SuiteArgs,
    /// Output directory (created; its rollouts.jsonl is reused by a rerun).
    #[arg(long)]
    pub out: PathBuf,
    /// Dataset format.
    #[arg(long, value_enum, default_value = "jsonl")]
    pub format: Format,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(cmd: ContextsCmd) -> Result<()> {
    match cmd {
        ContextsCmd::Export(a) => export(a),
    }
}

fn export(a: ExportArgs) -> Result<()> {
    let settings = a.suite.settings()?;
    let Format::Jsonl = a.format;
    let summary = service::run(
        &settings,
        RewardConfig::default(),
        Some(&a.out),
        false,
        usize::MAX,
        |svc| {
            let s = context::write_export(
                &a.out,
                svc.built,
                svc.settings,
                svc.template,
                &svc.backend.identity,
            )?;
            Ok((s, svc.built.contexts.clone()))
        },
    )?;
    let (s, contexts) = summary;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&s)?);
    } else {
        println!("{} contexts -> {}", s.contexts, s.dataset.display());
        for c in &contexts {
            println!(
                "  {}  {}  parent {}  feedback {:.3}",
                c.id,
                c.task,
                &c.parent_hash[..12.min(c.parent_hash.len())],
                c.feedback_score
            );
        }
    }
    Ok(())
}
