//! `hrl report` and `hrl compare`: flags become `report::ReportOptions` and
//! `report::compare::CompareOptions`; the library reads the run directories and
//! renders; this file only writes the files and prints.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, ValueEnum};
use harness_rl::report::compare::{self, CompareOptions};
use harness_rl::report::export::{self, ExportOptions, Format};
use harness_rl::report::{self, ReportOptions};

use super::GateFailed;

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
}

#[derive(Args)]
pub struct CompareArgs {
    /// The baseline run directory.
    pub run_a: PathBuf,
    /// The run compared against it (the difference is B - A).
    pub run_b: PathBuf,
    /// Exit 1 when B is worse than A by more than DELTA with confidence (the upper
    /// interval bound of B - A below -DELTA).
    #[arg(long, value_name = "DELTA")]
    pub fail_if_worse: Option<f64>,
    /// Print the comparison as JSON.
    #[arg(long)]
    pub json: bool,
    /// Interval level (two-sided).
    #[arg(long, default_value_t = 0.95)]
    pub confidence: f64,
    /// Seed of the bootstrap and the Monte Carlo tests.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
}

pub fn run(a: ReportArgs) -> Result<()> {
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
    let o = CompareOptions {
        confidence: a.confidence,
        seed: a.seed,
        fail_if_worse: a.fail_if_worse,
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
    if let Some(g) = &c.gate
        && g.failed
    {
        return Err(GateFailed(format!(
            "B is worse than A by more than {} with {:.0} % confidence: B - A = {:.3}, interval upper bound {:.3}",
            g.delta,
            100.0 * c.confidence,
            c.diff.mean,
            c.diff.ci.map_or(c.diff.mean, |i| i.hi)
        ))
        .into());
    }
    Ok(())
}
