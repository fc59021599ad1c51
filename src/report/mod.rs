//! Reports and comparisons of finished (or partly finished) runs, computed from the
//! run directory's files alone (`hrl report`, `hrl compare`, `hrl plan`).
//!
//! This module never opens a model, a sandbox, an executor or a proposer: it reads
//! `config.json`, the JSON-lines records, the harness files (as text) and a trainer's
//! `train.jsonl`, and everything it prints is a deterministic function of them (the
//! same directory gives byte-identical files). So a report renders on a machine with
//! no model installed, and re-renders after the fact.
//!
//! - [`run_data`]: reading a run directory ([`RunData`]) through `crate::records`.
//! - [`model`]: the report model ([`Report`]): per task, per family and per split-role
//!   metrics with crossed-design intervals (via [`crate::eval::summary`]), the harness
//!   points of the Pareto view, the training log.
//! - [`trajectories`]: every trajectory's rounds and candidates with their diffs (the
//!   browsable list of the HTML page).
//! - [`plots`]: the SVG plots (plotters' SVG backend).
//! - [`export`]: one [`export::Exporter`] trait, one file per format (Markdown, HTML,
//!   JSON).
//! - [`compare`]: the paired comparison of two runs (`hrl compare`): comparability
//!   checks, the paired crossed-design interval, sign-flip tests, the power, the
//!   regression gate.
//! - [`plan`]: the size of a comparison (`hrl plan`): the minimum detectable
//!   difference of a design and the sizes needed for a target, from a pilot run.
//! - [`comparison`]: the proposers of one invocation side by side (`comparison.md`).
//! - [`warnings`]: what a run's records call for a warning about (mostly invalid
//!   revisions), at the end of a run and at the top of its report.
//! - [`outputs`]: the documents every run directory gets after a run (`report.md`,
//!   `report.html`, `comparison.md`/`.html`, `transfer.md`).

pub mod compare;
pub mod comparison;
pub mod export;
pub mod model;
pub mod outputs;
pub mod plan;
pub mod plots;
pub mod run_data;
pub mod trajectories;
pub mod warnings;

use std::path::Path;

pub use model::{Report, ReportOptions};
pub use run_data::RunData;

/// Errors of reports and comparisons.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A missing or malformed input file (the message names the file and line).
    #[error("{0}")]
    Input(String),
    /// Two runs that cannot be paired: the field that differs and how.
    #[error("the runs are not comparable: {field} differs ({detail})")]
    NotComparable { field: String, detail: String },
    /// A run with unfinished trajectories where finished ones are needed.
    #[error("{0}")]
    Incomplete(String),
    /// A bad option (confidence level, threshold, split).
    #[error("{0}")]
    Usage(String),
    /// Reading or writing a file failed.
    #[error("{0}")]
    Io(String),
    /// The plotting library failed to draw.
    #[error("plot {name}: {message}")]
    Plot { name: String, message: String },
    #[error(transparent)]
    Eval(#[from] crate::eval::EvalError),
    #[error(transparent)]
    Split(#[from] crate::families::splits::SplitError),
}

impl crate::error::Classify for ReportError {
    fn kind(&self) -> crate::error::ErrorKind {
        use crate::error::ErrorKind::{Runtime, Usage};
        match self {
            ReportError::Input(_)
            | ReportError::NotComparable { .. }
            | ReportError::Incomplete(_)
            | ReportError::Usage(_) => Usage,
            ReportError::Io(_) | ReportError::Plot { .. } => Runtime,
            ReportError::Eval(e) => e.kind(),
            ReportError::Split(e) => e.kind(),
        }
    }
}

/// Recompute the tables a run wrote when it ended from its records, with the current
/// estimators: every evaluation run directory's `summary.json` ([`crate::eval::rerender`],
/// `run_stats` kept) under `dir` (one run directory, a multi-proposer output or a
/// transfer output), then every document [`outputs::write_any`] writes. Returns the run
/// directories rewritten.
pub fn rerender(dir: &Path) -> Result<Vec<std::path::PathBuf>, ReportError> {
    let dirs = if dir.join(crate::eval::transfer::INDEX).is_file() {
        crate::eval::transfer::run_dirs(dir)?
    } else if let Some(dirs) = comparison::arm_dirs(dir)? {
        dirs
    } else if dir.join(crate::records::run_dir::CONFIG).is_file() {
        vec![dir.to_path_buf()]
    } else {
        return Err(ReportError::Input(format!(
            "{}: neither an evaluation run directory (no {}) nor a multi-proposer or transfer output directory (no {} or {})",
            dir.display(),
            crate::records::run_dir::CONFIG,
            crate::eval::INVOCATION,
            crate::eval::transfer::INDEX
        )));
    };
    for d in &dirs {
        crate::eval::rerender(d)?;
    }
    outputs::write_any(dir)?;
    Ok(dirs)
}

/// Read `dir` and build its report.
pub fn report(dir: &Path, options: &ReportOptions) -> Result<Report, ReportError> {
    let data = run_data::load(dir)?;
    model::build(&data, options)
}

/// Render the report of `dir` in `format` to the file `out`, with its plots (Markdown)
/// written beside it as `<out stem>-<plot>.svg`; returns the paths written, `out` last.
pub fn write(
    dir: &Path,
    options: &ReportOptions,
    format: export::Format,
    out: &Path,
) -> Result<Vec<std::path::PathBuf>, ReportError> {
    let r = report(dir, options)?;
    let stem = out
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "report".into());
    let rendered = export::exporter(format).render(
        &r,
        &export::ExportOptions {
            asset_prefix: Some(format!("{stem}-")),
        },
    )?;
    let parent = out.parent().filter(|d| !d.as_os_str().is_empty());
    if let Some(d) = parent {
        std::fs::create_dir_all(d).map_err(|e| ReportError::Io(format!("{}: {e}", d.display())))?;
    }
    let mut written = Vec::new();
    let put = |p: &Path, text: &str| {
        std::fs::write(p, text).map_err(|e| ReportError::Io(format!("{}: {e}", p.display())))
    };
    for (name, content) in &rendered.assets {
        let p = parent.map_or_else(|| std::path::PathBuf::from(name), |d| d.join(name));
        put(&p, content)?;
        written.push(p);
    }
    put(out, &rendered.text)?;
    written.push(out.to_path_buf());
    Ok(written)
}

impl From<crate::records::RecordsError> for ReportError {
    fn from(e: crate::records::RecordsError) -> Self {
        ReportError::Eval(e.into())
    }
}
