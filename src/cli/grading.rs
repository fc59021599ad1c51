//! What `hrl lcb grade` and `hrl humaneval grade` print: the progress bar while
//! grading, then the report (`--out FILE`, `--json`, or the source's table) and the
//! grading errors. The grading itself is `harness_rl::grading::solutions`.

use std::io::{self, BufWriter, Write};
use std::path::Path;

use anyhow::{Context, Result};
use harness_rl::grading::solutions::Graded;
use indicatif::{ProgressBar, ProgressStyle};

/// The bar of a grading run (hidden with `--quiet`); `extra` is appended to the
/// template (e.g. `" {msg}"`).
pub fn bar(quiet: bool, len: usize, extra: &str) -> ProgressBar {
    let bar = if quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(len as u64)
    };
    bar.set_style(
        ProgressStyle::with_template(&format!(
            "grading {{bar:30}} {{pos}}/{{len}} {{elapsed_precise}}{extra}"
        ))
        .expect("valid template"),
    );
    bar
}

/// Write `report` to `out` (when given) and print it as JSON or as `table`; then a
/// line per grading error, and a runtime failure when any solution could not be
/// graded (`n` solutions in all).
pub fn finish(
    report: &serde_json::Value,
    out: Option<&Path>,
    json: bool,
    n: usize,
    graded: &Graded,
    table: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<()> {
    if let Some(p) = out {
        let text = serde_json::to_string_pretty(report)? + "\n";
        std::fs::write(p, text).with_context(|| format!("writing {}", p.display()))?;
    }
    let mut w = BufWriter::new(io::stdout().lock());
    if json {
        serde_json::to_writer_pretty(&mut w, report)?;
        writeln!(w)?;
    } else {
        table(&mut w)?;
    }
    w.flush()?;
    if !graded.errors.is_empty() {
        for e in &graded.errors {
            eprintln!("hrl: grading error: {e}");
        }
        anyhow::bail!(
            "{} of {n} solutions could not be graded",
            graded.errors.len()
        );
    }
    Ok(())
}
