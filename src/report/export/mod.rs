//! Output formats of a report behind one trait ([`Exporter`]), one file per format
//! (as hyperfine's `export/` does): [`markdown`], [`html`] (self-contained: inline
//! CSS and SVG, no script, no external asset), [`json`] (the report model).

pub mod html;
pub mod json;
pub mod markdown;
pub mod tables;

use super::{Report, ReportError};

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

/// `0.512 [0.430, 0.600]`, `-` without data.
pub(crate) fn est(e: &crate::stats::HierEstimate) -> String {
    crate::eval::summary::fmt_est(e)
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
