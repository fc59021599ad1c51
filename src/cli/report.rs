//! `hrl report`, `hrl compare` and `hrl plan`: flags become `report::ReportOptions`,
//! `report::compare::CompareOptions` and `report::plan::PlanOptions`; the library
//! reads the run directories, decides and renders; this file only writes the files,
//! prints, and turns the gate's verdict into its exit code.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, ValueEnum};
use harness_rl::report::compare::{self, CompareOptions, GateMode, Verdict};
use harness_rl::report::export::{self, ExportOptions, Format};
use harness_rl::report::plan::{self, PlanOptions};
use harness_rl::report::{self, ReportOptions};
use harness_rl::stats::VarianceComponents;

use super::{Inconclusive, Regression, UsageError};

#[derive(Clone, Copy, ValueEnum)]
pub enum FormatArg {
    Md,
    Html,
    Json,
}

#[derive(Args)]
pub struct ReportArgs {
    /// The run directory (of `hrl eval`, or a trainer's with `train.jsonl`), or an
    /// output directory of several proposers (their comparison).
    pub run_dir: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value = "md")]
    pub format: FormatArg,
    /// Write to FILE instead of standard output (Markdown: the SVG plots go beside
    /// it as FILE-STEM-<plot>.svg).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Group tasks by the roles of this family split (built-in name or split file).
    #[arg(long, value_name = "NAME|FILE")]
    pub split: Option<String>,
    /// Instead of printing a report, rewrite the tables the run wrote when it ended
    /// (`summary.json` and `report.md`; for a transfer output directory, each run's
    /// and `transfer.md`) from its records with the current intervals.
    #[arg(long, conflicts_with_all = ["out", "split"])]
    pub rerender: bool,
}

#[derive(Args)]
pub struct CompareArgs {
    /// The baseline run directory.
    pub run_a: PathBuf,
    /// The run compared against it (the difference is B - A).
    pub run_b: PathBuf,
    /// Gate: exit 3 when B is worse than A by more than DELTA with confidence (the
    /// upper bound of the interval of B - A below -DELTA).
    #[arg(long, value_name = "DELTA", conflicts_with = "non_inferior")]
    pub fail_if_worse: Option<f64>,
    /// Gate: pass only when B is shown not worse than A by more than MARGIN (the
    /// lower bound of B - A above -MARGIN); exit 3 when shown worse, 4 otherwise.
    #[arg(long, value_name = "MARGIN")]
    pub non_inferior: Option<f64>,
    /// With --fail-if-worse: exit 4 (inconclusive) when the interval contains
    /// -DELTA, instead of passing.
    #[arg(long)]
    pub require_decision: bool,
    /// Compare runs cut with --limit (refused otherwise: their sets are shorter than
    /// the suite's).
    #[arg(long)]
    pub allow_limited: bool,
    /// Print the comparison as JSON.
    #[arg(long)]
    pub json: bool,
    /// Interval level (two-sided).
    #[arg(long, default_value_t = 0.95)]
    pub confidence: f64,
    /// Seed of the Monte Carlo tests and the power simulation.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
}

#[derive(Args)]
pub struct PlanArgs {
    /// A pilot run directory (its final test scores), or two (A and B: their paired
    /// differences). Without one, give --components.
    #[arg(num_args = 0..=2)]
    pub pilots: Vec<PathBuf>,
    /// Stated variance components of one task's differences B - A:
    /// HARNESS,INSTANCE,RESIDUAL (variances, e.g. 0.002,0.15,0.05).
    #[arg(long, value_name = "H,I,R")]
    pub components: Option<String>,
    /// Tasks in the design (default: the pilot's).
    #[arg(long)]
    pub tasks: Option<usize>,
    /// Harness samples per task (default: the pilot's).
    #[arg(long)]
    pub samples: Option<usize>,
    /// Test instances per task (default: the pilot's).
    #[arg(long)]
    pub instances: Option<usize>,
    /// The difference to detect: report the instances and the harness samples
    /// needed.
    #[arg(long, value_name = "D")]
    pub detect: Option<f64>,
    /// The probability of detecting it.
    #[arg(long, default_value_t = 0.8)]
    pub power: f64,
    /// Two-sided significance level.
    #[arg(long, default_value_t = 0.05)]
    pub alpha: f64,
    /// Seed of the simulation.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Simulated comparisons per design.
    #[arg(long, default_value_t = harness_rl::stats::power::DEFAULT_SIMULATIONS)]
    pub simulations: usize,
    /// Print the plan as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(a: ReportArgs) -> Result<()> {
    if a.rerender {
        for d in report::rerender(&a.run_dir)? {
            eprintln!("rewrote the tables of {}", d.display());
        }
        return Ok(());
    }
    let format = match a.format {
        FormatArg::Md => Format::Markdown,
        FormatArg::Html => Format::Html,
        FormatArg::Json => Format::Json,
    };
    let options = ReportOptions {
        split: a.split.clone(),
    };
    // An output directory of several proposers: their comparison.
    if let Some(dirs) = report::comparison::arm_dirs(&a.run_dir)? {
        let text = export::comparison::render(&report::comparison::build(&dirs)?, format);
        match &a.out {
            Some(path) => {
                std::fs::write(path, &text)?;
                eprintln!("wrote {}", path.display());
            }
            None => std::io::stdout().lock().write_all(text.as_bytes())?,
        }
        return Ok(());
    }
    match &a.out {
        Some(path) => {
            let written = report::write(&a.run_dir, &options, format, path)?;
            eprintln!(
                "wrote {}{}",
                path.display(),
                if written.len() > 1 {
                    format!(" and {} plot(s) beside it", written.len() - 1)
                } else {
                    String::new()
                }
            );
        }
        None => {
            let r = report::report(&a.run_dir, &options)?;
            let out = export::exporter(format).render(&r, &ExportOptions { asset_prefix: None })?;
            let mut stdout = std::io::stdout().lock();
            stdout.write_all(out.text.as_bytes())?;
            stdout.flush()?;
        }
    }
    Ok(())
}

pub fn compare(a: CompareArgs) -> Result<()> {
    let gate = match (a.fail_if_worse, a.non_inferior) {
        (Some(d), None) => Some((GateMode::FailIfWorse, d)),
        (None, Some(m)) => Some((GateMode::NonInferior, m)),
        _ => None,
    };
    let o = CompareOptions {
        confidence: a.confidence,
        seed: a.seed,
        gate,
        require_decision: a.require_decision,
        allow_limited: a.allow_limited,
    };
    let c = compare::compare(&a.run_a, &a.run_b, &o)?;
    let text = if a.json {
        let mut s = serde_json::to_string_pretty(&c)?;
        s.push('\n');
        s
    } else {
        compare::render_text(&c)
    };
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(text.as_bytes())?;
    stdout.flush()?;
    match &c.gate {
        Some(g) if g.verdict == Verdict::Regression => Err(Regression(format!(
            "regression: B is worse than A by more than {} ({})",
            g.margin, g.reason
        ))
        .into()),
        Some(g) if g.verdict == Verdict::Inconclusive => Err(Inconclusive(format!(
            "inconclusive: the interval of B - A contains -{} ({})",
            g.margin, g.reason
        ))
        .into()),
        _ => Ok(()),
    }
}

/// `H,I,R` → the components.
fn parse_components(s: &str) -> Result<VarianceComponents, UsageError> {
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    let bad = || {
        UsageError(format!(
            "--components {s}: expected three variances HARNESS,INSTANCE,RESIDUAL, each a number >= 0"
        ))
    };
    if parts.len() != 3 {
        return Err(bad());
    }
    let v: Vec<f64> = parts
        .iter()
        .map(|p| p.parse::<f64>().map_err(|_| bad()))
        .collect::<Result<_, _>>()?;
    Ok(VarianceComponents {
        harness: v[0],
        instance: v[1],
        residual: v[2],
    })
}

pub fn plan(a: PlanArgs) -> Result<()> {
    let components = a.components.as_deref().map(parse_components).transpose()?;
    let o = PlanOptions {
        pilots: a.pilots,
        components,
        tasks: a.tasks,
        samples: a.samples,
        instances: a.instances,
        detect: a.detect,
        power: a.power,
        alpha: a.alpha,
        seed: a.seed,
        simulations: a.simulations,
        ..PlanOptions::default()
    };
    let p = plan::plan(&o)?;
    let text = if a.json {
        let mut s = serde_json::to_string_pretty(&p)?;
        s.push('\n');
        s
    } else {
        plan::render_text(&p)
    };
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(text.as_bytes())?;
    stdout.flush()?;
    Ok(())
}
