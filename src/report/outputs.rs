//! The files an evaluation leaves beside its records, rendered from those records
//! alone after a run, a resume, a merge or a re-render: each run directory's
//! `report.md` (with its plots) and `report.html` (the [`super::export`] exporters of
//! [`super::Report`]), a multi-proposer directory's `comparison.md` and
//! `comparison.html` ([`super::comparison`]), a transfer directory's `transfer.md`.
//! The evaluator writes only records and `summary.json`; this module is the one place
//! that turns them into documents.

use std::path::{Path, PathBuf};

use super::export::{self, Format};
use super::{ReportError, ReportOptions, comparison};
use crate::eval::transfer::{self, TransferIndex};
use crate::eval::{ArmOutcome, read_json};
use crate::records::run_dir;

fn write(path: &Path, text: &str) -> Result<(), ReportError> {
    Ok(run_dir::write_text(path, text)?)
}

/// One run directory's `report.md` (plots beside it as `report-<plot>.svg`) and
/// `report.html`.
pub fn write_run(dir: &Path) -> Result<(), ReportError> {
    let options = ReportOptions::default();
    super::write(dir, &options, Format::Markdown, &dir.join("report.md"))?;
    super::write(dir, &options, Format::Html, &dir.join("report.html"))?;
    Ok(())
}

/// The documents of an evaluation: every run directory's reports and, for several
/// proposers, `out/comparison.md` and `out/comparison.html`. Returns the comparison
/// (`None` for one proposer).
pub fn write_eval(
    out: &Path,
    dirs: &[PathBuf],
) -> Result<Option<comparison::Comparison>, ReportError> {
    for d in dirs {
        write_run(d)?;
    }
    if dirs.len() < 2 {
        return Ok(None);
    }
    let c = comparison::build(dirs)?;
    write(
        &out.join("comparison.md"),
        &export::comparison::markdown(&c),
    )?;
    write(&out.join("comparison.html"), &export::comparison::html(&c))?;
    Ok(Some(c))
}

/// The documents of a transfer run in `out`: as [`write_eval`], then `transfer.md`,
/// whose text is returned.
pub fn write_transfer(out: &Path) -> Result<String, ReportError> {
    let index: TransferIndex = read_json(&out.join(transfer::INDEX))?;
    let mut arms = Vec::new();
    for r in &index.runs {
        let dir = out.join(&r.dir);
        arms.push(ArmOutcome {
            label: r.label.clone(),
            summary: read_json(&dir.join(run_dir::SUMMARY))?,
            dir,
        });
    }
    let dirs: Vec<PathBuf> = arms.iter().map(|a| a.dir.clone()).collect();
    write_eval(out, &dirs)?;
    let text = export::transfer::markdown(&index, &arms);
    write(&out.join(transfer::SUMMARY_MD), &text)?;
    Ok(text)
}

/// The documents of whatever evaluation output `dir` holds: a transfer run
/// (`transfer.json`), several proposers (`eval.json`) or one run directory.
pub fn write_any(dir: &Path) -> Result<(), ReportError> {
    if dir.join(transfer::INDEX).exists() {
        write_transfer(dir)?;
    } else if let Some(dirs) = comparison::arm_dirs(dir)? {
        write_eval(dir, &dirs)?;
    } else {
        write_run(dir)?;
    }
    Ok(())
}
