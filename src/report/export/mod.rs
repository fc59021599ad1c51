//! Output formats of a report behind one trait ([`Exporter`]), one file per format
//! (as hyperfine's `export/` does): [`markdown`], [`html`] (self-contained: inline
//! CSS and SVG, no script, no external asset), [`json`] (the report model). Every
//! other text the crate renders from a run's records goes through here too: the
//! comparison of several proposers ([`comparison`]), a transfer run's `transfer.md`
//! ([`transfer`]), the per-run table `hrl eval` prints ([`summary_table`]), and the
//! one format of an estimate ([`est`]).

pub mod comparison;
pub mod html;
pub mod json;
pub mod markdown;
pub mod tables;
pub mod transfer;

use super::{Report, ReportError};
use crate::eval::summary::Summary;

/// A report format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Markdown,
    Html,
    Json,
}

impl Format {
    /// The usual file extension.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Markdown => "md",
            Format::Html => "html",
            Format::Json => "json",
        }
    }
}

/// Where the plots of a format that links them (Markdown) go.
#[derive(Debug, Clone, Default)]
pub struct ExportOptions {
    /// Plot files are named `<prefix><plot>.svg` and linked by that relative name;
    /// `None` (printing to standard output): the plots are not written and the text
    /// says so.
    pub asset_prefix: Option<String>,
}

/// A rendered report: the main text and the files it links (name, content).
#[derive(Debug, Clone, PartialEq)]
pub struct Export {
    pub text: String,
    pub assets: Vec<(String, String)>,
}

/// One output format.
pub trait Exporter {
    fn format(&self) -> Format;
    fn render(&self, report: &Report, options: &ExportOptions) -> Result<Export, ReportError>;
}

/// The exporter of a format.
pub fn exporter(format: Format) -> Box<dyn Exporter> {
    match format {
        Format::Markdown => Box::new(markdown::MarkdownExporter),
        Format::Html => Box::new(html::HtmlExporter),
        Format::Json => Box::new(json::JsonExporter),
    }
}

/// `0.512 [0.430, 0.600]`, `-` without data: the one format of an estimate with its
/// interval in every table.
pub fn est(e: &crate::stats::HierEstimate) -> String {
    if e.n == 0 {
        return "-".into();
    }
    match e.ci {
        Some(c) => format!("{:.3} [{:.3}, {:.3}]", e.mean, c.lo, c.hi),
        None => format!("{:.3}", e.mean),
    }
}

/// One row per task and an overall row: seed, final, gain, best-of-M, rates.
pub fn summary_table(s: &Summary) -> String {
    let mut out = String::from(
        "| task | seed test | final test | gain | best-of-M | invalid | accepted | exec-free | n |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n",
    );
    let row = |name: &str, m: &crate::eval::summary::Metrics, n: String| {
        format!(
            "| {name} | {} | {} | {} | {} | {} | {} | {} | {n} |\n",
            est(&m.seed_test),
            est(&m.final_test),
            est(&m.gain),
            m.best_of_m.as_ref().map(est).unwrap_or_else(|| "-".into()),
            est(&m.invalid_rate),
            est(&m.accepted_rate),
            est(&m.executor_free_rate),
        )
    };
    for t in &s.tasks {
        out.push_str(&row(
            &t.task,
            &t.metrics,
            format!("{} x {}", t.samples_complete, t.sets.test),
        ));
    }
    out.push_str(&row(
        "**overall**",
        &s.overall,
        format!("{} tasks", s.tasks.len()),
    ));
    out
}

/// An estimate of tokens: `1234 [1100, 1400]`.
pub(crate) fn tokens(e: &crate::stats::HierEstimate) -> String {
    if e.n == 0 {
        return "-".into();
    }
    match e.ci {
        Some(c) => format!("{:.0} [{:.0}, {:.0}]", e.mean, c.lo, c.hi),
        None => format!("{:.0}", e.mean),
    }
}

/// An optional score: `0.500` or `-`.
pub(crate) fn opt(x: Option<f64>) -> String {
    x.map_or_else(|| "-".into(), |v| format!("{v:.3}"))
}
