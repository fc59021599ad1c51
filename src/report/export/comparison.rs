//! The comparison of several proposers ([`crate::report::comparison::Comparison`]) as
//! Markdown (`comparison.md`; its score table is also what `hrl eval` prints) and as a
//! self-contained HTML page (`comparison.html`): the final test score per task and
//! proposer with its interval, the overall row, the invalid- and accepted-revision
//! rates, then each proposer's paired difference to the first, per task and overall.

use super::html::escape;
use super::tables::Table;
use crate::report::comparison::Comparison;
use crate::stats::HierEstimate;

fn est(e: &HierEstimate) -> String {
    super::est(e)
}

fn opt(e: &Option<HierEstimate>) -> String {
    e.as_ref().map(est).unwrap_or_else(|| "-".into())
}

fn baseline(c: &Comparison) -> &str {
    c.arms.first().map(|a| a.label.as_str()).unwrap_or("-")
}

/// The score table: one row per task, one column per proposer, the overall row and
/// the two revision rates (the first column of the rate rows is empty).
pub fn scores(c: &Comparison) -> Table {
    let mut header = vec!["task".to_string(), "seed".to_string()];
    header.extend(c.arms.iter().map(|a| a.label.clone()));
    let mut rows = Vec::new();
    for t in c.tasks.iter().chain(std::iter::once(&c.overall)) {
        let mut r = vec![t.task.clone(), est(&t.seed)];
        r.extend(t.finals.iter().map(opt));
        rows.push(r);
    }
    let mut inv = vec!["invalid-revision rate".to_string(), String::new()];
    inv.extend(c.arms.iter().map(|a| est(&a.summary.overall.invalid_rate)));
    rows.push(inv);
    let mut acc = vec!["accepted-revision rate".to_string(), String::new()];
    acc.extend(c.arms.iter().map(|a| est(&a.summary.overall.accepted_rate)));
    rows.push(acc);
    Table { header, rows }
}

/// The paired differences to the first proposer, per task and overall.
pub fn paired(c: &Comparison) -> Table {
    let mut header = vec!["task".to_string()];
    header.extend(c.arms.iter().skip(1).map(|a| a.label.clone()));
    let rows = c
        .tasks
        .iter()
        .chain(std::iter::once(&c.overall))
        .map(|t| {
            let mut r = vec![t.task.clone()];
            r.extend(t.paired.iter().map(opt));
            r
        })
        .collect();
    Table { header, rows }
}

/// A Markdown table in the compact form the evaluator has always printed (`| a | |`
/// for an empty cell); the overall row's name in bold.
fn md(t: &Table) -> String {
    let mut out = format!(
        "| {} |\n|{}\n",
        t.header.join(" | "),
        " --- |".repeat(t.header.len())
    );
    for r in &t.rows {
        out.push('|');
        for (i, cell) in r.iter().enumerate() {
            if cell.is_empty() {
                out.push_str(" |");
            } else if i == 0 && cell == "overall" {
                out.push_str(" **overall** |");
            } else {
                out.push_str(&format!(" {cell} |"));
            }
        }
        out.push('\n');
    }
    out
}

/// The score table as Markdown (what `hrl eval` prints after a multi-proposer run).
pub fn scores_markdown(c: &Comparison) -> String {
    md(&scores(c))
}

/// `comparison.md`.
pub fn markdown(c: &Comparison) -> String {
    let mut out = md(&scores(c));
    if c.arms.len() > 1 {
        out.push_str(&format!(
            "\n## Paired difference of the final test score against `{}`\n\nSame instances and harness samples; 95 % paired crossed-design interval (harness samples × the instances they share; in the overall row, tasks are fixed strata).\n\n",
            baseline(c)
        ));
        out.push_str(&md(&paired(c)));
    }
    out
}

fn html_table(t: &Table) -> String {
    let mut s = String::from("<table>\n<tr>");
    for h in &t.header {
        s.push_str(&format!("<th>{}</th>", escape(h)));
    }
    s.push_str("</tr>\n");
    for r in &t.rows {
        s.push_str("<tr>");
        for (i, cell) in r.iter().enumerate() {
            if i == 0 && cell == "overall" {
                s.push_str("<td><b>overall</b></td>");
            } else {
                s.push_str(&format!("<td>{}</td>", escape(cell)));
            }
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</table>\n");
    s
}

/// `comparison.html`: the same tables on one self-contained page, with links to each
/// proposer's `report.html`.
pub fn html(c: &Comparison) -> String {
    let mut out = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Comparison of proposers</title>\n<style>body{font-family:sans-serif;margin:2em;max-width:70em}table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.3em .6em;text-align:left}th{background:#f4f4f4}</style></head><body>\n<h1>Final test score by proposer (95 % interval)</h1>\n",
    );
    out.push_str(&html_table(&scores(c)));
    if c.arms.len() > 1 {
        out.push_str(&format!(
            "<h2>Paired difference against <code>{}</code></h2>\n<p>Same instances and harness samples; 95 % paired crossed-design interval (harness samples × the instances they share; in the overall row, tasks are fixed strata).</p>\n",
            escape(baseline(c))
        ));
        out.push_str(&html_table(&paired(c)));
    }
    out.push_str("<h2>Run directories</h2>\n<ul>\n");
    for a in &c.arms {
        let name = a
            .dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| a.label.clone());
        out.push_str(&format!(
            "<li><code>{}</code>: <a href=\"{}/report.html\">report.html</a></li>\n",
            escape(&a.label),
            escape(&name)
        ));
    }
    out.push_str("</ul>\n</body></html>\n");
    out
}

/// The comparison in `format` (JSON: the model itself).
pub fn render(c: &Comparison, format: super::Format) -> String {
    match format {
        super::Format::Markdown => markdown(c),
        super::Format::Html => html(c),
        super::Format::Json => {
            serde_json::to_string_pretty(c).expect("a comparison serialises") + "\n"
        }
    }
}
