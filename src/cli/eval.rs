//! `hrl eval`: run a suite's proposers through the harness-resampling protocol. The
//! flags become `eval::config::Overrides` and the library resolves them against the
//! suite in one place (`EvalSettings::resolve`); this file only draws progress bars
//! and prints the tables.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;
use clap::{Args, ValueEnum};
use harness_rl::eval::config::{EvalSettings, Overrides};
use harness_rl::eval::suite::{Selection, Suite};
use harness_rl::eval::{self, ArmOutcome, EvalProgress, summary};
use harness_rl::executor::spec::ExecutorSpec;
use harness_rl::report::{self, comparison::Comparison, export};
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::UsageError;
use super::engine_args::{EngineArgs, ProtocolArgs};

#[derive(Clone, Copy, ValueEnum)]
pub enum Select {
    /// Keep the best candidate if its dev score beats the parent's.
    Best,
    /// Keep the best candidate even when it is worse (ablations).
    Always,
}

#[derive(Args)]
pub struct EvalArgs {
    /// The suite file (TOML; see suites/).
    #[arg(long, required_unless_present = "resume")]
    pub suite: Option<PathBuf>,
    /// Continue the run in DIR (after an interruption) with its recorded settings.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["suite", "out", "executor", "proposer", "rounds", "candidates", "samples", "select", "seed", "task", "limit", "proposer_template", "shard"])]
    pub resume: Option<PathBuf>,
    /// With --resume: continue although the proposer's files (a `cmd:` script) changed
    /// since the run started (config.json records the old proposer).
    #[arg(long, requires = "resume")]
    pub accept_proposer_change: bool,
    #[command(flatten)]
    pub protocol: ProtocolArgs,
    /// Revision rounds K.
    #[arg(long)]
    pub rounds: Option<u32>,
    /// How a round keeps a candidate.
    #[arg(long, value_enum)]
    pub select: Option<Select>,
    /// Output directory [default: runs/eval-<suite>-<hash>]: the run directory for
    /// one proposer, else one run directory per proposer inside it.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// A proposer prompt template overriding the suite's.
    #[arg(long, value_name = "PATH")]
    pub proposer_template: Option<PathBuf>,
    #[command(flatten)]
    pub engine: EngineArgs,
    /// Print the summaries as JSON instead of tables.
    #[arg(long)]
    pub json: bool,
    /// Do not draw progress bars.
    #[arg(long)]
    pub no_progress: bool,
}

/// The flags as a library config.
pub fn settings(a: &EvalArgs) -> Result<(EvalSettings, bool)> {
    if let Some(dir) = &a.resume {
        let mut s = eval::resume_settings(dir)?;
        if s.out != *dir {
            eprintln!(
                "hrl: {} is one proposer's directory of the run in {}; resuming that run",
                dir.display(),
                s.out.display()
            );
        }
        a.engine.overrides().apply_to_resumed(&mut s);
        s.accept_proposer_change = a.accept_proposer_change;
        return Ok((s, true));
    }
    let path = a
        .suite
        .as_ref()
        .ok_or_else(|| UsageError("give --suite FILE or --resume DIR".into()))?;
    let suite = Suite::load(path)?;
    let o = Overrides {
        rounds: a.rounds,
        select: a.select.map(|s| match s {
            Select::Best => Selection::Best,
            Select::Always => Selection::Always,
        }),
        template: a.proposer_template.clone(),
        ..a.protocol.overrides(&a.engine, a.out.clone())?
    };
    Ok((EvalSettings::resolve(&suite, &o)?, false))
}

struct Bars {
    overall: ProgressBar,
    tasks: Vec<ProgressBar>,
}

fn style(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template)
        .expect("a valid template")
        .progress_chars("=> ")
}

pub fn run(a: EvalArgs) -> Result<()> {
    let (settings, resume) = settings(&a)?;
    super::interrupt::print_resume_on_ctrl_c(&format!(
        "hrl eval --resume {}",
        settings.out.display()
    ));
    let outcomes = with_progress(&settings, a.no_progress || a.json, |progress| {
        eval::run(&settings, resume, progress)
    })?;
    // The documents beside the records: each run directory's report.md and
    // report.html, and comparison.md/.html for several proposers.
    let dirs: Vec<PathBuf> = outcomes.iter().map(|o| o.dir.clone()).collect();
    let comparison = report::outputs::write_eval(&settings.out, &dirs)?;
    print_outcomes(&outcomes, comparison.as_ref(), &settings, a.json)?;
    print_notes(&settings, &outcomes)
}

/// After the tables, on stderr: how many completions of an HTTP executor the local
/// cache answered (the server never saw those requests), and the warnings of every
/// proposer's records.
pub fn print_notes(settings: &EvalSettings, outcomes: &[ArmOutcome]) -> Result<()> {
    // One cache serves every proposer: its counter is the invocation's.
    let hits = outcomes
        .iter()
        .filter_map(|o| o.summary.run_stats.cache_hits)
        .max()
        .unwrap_or(0);
    if hits > 0 && matches!(settings.executor_spec()?, ExecutorSpec::Openai(_)) {
        eprintln!(
            "hrl: {hits} completions from the local cache, server not called for them (--no-cache sends every request to the server)"
        );
    }
    for o in outcomes {
        for w in report::warnings::of_run_dir(&o.label, &o.dir)? {
            eprintln!("hrl: warning: {w}");
        }
    }
    Ok(())
}

/// Call `f` with a progress callback that draws one bar per task and an overall bar
/// (none when `hidden`); the bars are cleared before this returns.
pub fn with_progress<T>(
    settings: &EvalSettings,
    hidden: bool,
    f: impl FnOnce(&(dyn Fn(&EvalProgress) + Sync)) -> T,
) -> T {
    let multi = MultiProgress::new();
    if hidden {
        multi.set_draw_target(ProgressDrawTarget::hidden());
    }
    let width = settings
        .tasks
        .iter()
        .map(|t| t.id.len())
        .max()
        .unwrap_or(8)
        .max(8);
    let bars = std::sync::Mutex::new(None::<Bars>);
    let progress = |p: &EvalProgress| {
        let mut b = bars.lock().unwrap_or_else(|e| e.into_inner());
        let b = b.get_or_insert_with(|| {
            let overall = multi.add(ProgressBar::new(0));
            overall.set_style(style(
                "{prefix:>W} [{bar:30}] {pos}/{len} rounds  ETA {eta}  {msg}"
                    .replace('W', &width.to_string())
                    .as_str(),
            ));
            overall.set_prefix("overall");
            overall.enable_steady_tick(Duration::from_secs(1));
            let tasks = p
                .tasks
                .iter()
                .map(|t| {
                    let pb = multi.add(ProgressBar::new(0));
                    pb.set_style(style(
                        "{prefix:>W} [{bar:30}] {pos}/{len} rounds  ETA {eta}"
                            .replace('W', &width.to_string())
                            .as_str(),
                    ));
                    pb.set_prefix(t.clone());
                    pb
                })
                .collect();
            Bars { overall, tasks }
        });
        for (i, pb) in b.tasks.iter().enumerate() {
            pb.set_length(p.total[i] as u64);
            pb.set_position(p.done[i] as u64);
        }
        b.overall.set_length(p.total.iter().sum::<usize>() as u64);
        b.overall.set_position(p.done.iter().sum::<usize>() as u64);
        b.overall.set_message(format!(
            "{} rollouts run, {} reused",
            p.rollouts_run, p.rollouts_reused
        ));
    };
    let result = f(&progress);
    if let Some(b) = bars.lock().unwrap_or_else(|e| e.into_inner()).take() {
        for pb in b.tasks {
            pb.finish_and_clear();
        }
        b.overall.finish_and_clear();
    }
    result
}

fn print_outcomes(
    outcomes: &[ArmOutcome],
    comparison: Option<&Comparison>,
    settings: &EvalSettings,
    json: bool,
) -> Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    if json {
        let v: Vec<&summary::Summary> = outcomes.iter().map(|o| &o.summary).collect();
        let text = if v.len() == 1 {
            serde_json::to_string_pretty(v[0])?
        } else {
            serde_json::to_string_pretty(&v)?
        };
        let _ = writeln!(out, "{text}");
        return Ok(());
    }
    for o in outcomes {
        let s = &o.summary;
        let _ = writeln!(
            out,
            "\n{} — proposer {} (K={}, G={}, M={}, select {}){}",
            s.suite,
            o.label,
            s.rounds,
            s.candidates,
            s.samples,
            s.select,
            if s.comparable {
                ""
            } else {
                "  [--limit: NOT COMPARABLE]"
            }
        );
        let _ = write!(out, "{}", export::summary_table(s));
        let rs = &s.run_stats;
        let _ = writeln!(
            out,
            "wall {:.1} s (evaluator idle {:.1} %), rollouts run {} (reused {}), dev batches {} (mean {:.1} rollouts); written to {}",
            rs.wall_s,
            100.0 * rs.overhead_fraction,
            rs.rollouts_run,
            rs.rollouts_reused,
            rs.dev_batches,
            rs.dev_batch_rollouts_mean,
            o.dir.display()
        );
    }
    if let Some(c) = comparison {
        let _ = writeln!(
            out,
            "\nFinal test score by proposer (95% CI; paired differences in {}):",
            settings.out.join("comparison.md").display()
        );
        let _ = write!(out, "{}", export::comparison::scores_markdown(c));
    }
    Ok(())
}
