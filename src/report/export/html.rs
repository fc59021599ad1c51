//! The HTML export: one self-contained page (inline CSS and SVG, no script, no
//! external asset) with the settings, the tables with intervals, the plots, the
//! training log, a browsable list of trajectories (each round's candidates with
//! status, dev score, reason, raw proposer output and the diff from the parent) and
//! every harness file of the run.

use super::tables::{self, Table};
use super::{Export, ExportOptions, Exporter, Format, opt};
use crate::report::model::{EvalReport, TrainReport};
use crate::report::trajectories::{Trajectory, short};
use crate::report::{Report, ReportError};

pub struct HtmlExporter;

/// Escape text for HTML content and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:2em auto;max-width:1200px;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.6em 0 1.2em;font-size:.9em}
th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left;vertical-align:top}
th{background:#f2f2f2}
tr.overall td{font-weight:bold}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.85em}
pre{background:#f7f7f7;border:1px solid #ddd;padding:.5em;overflow-x:auto;white-space:pre-wrap}
pre.diff span.add{background:#e6ffec;display:block}
pre.diff span.del{background:#ffebe9;display:block}
pre.diff span.hunk{color:#6f42c1;display:block}
details{margin:.3em 0 .3em .6em}
summary{cursor:pointer}
.plot{margin:1em 0}
.note{color:#555}
.status-invalid{color:#b00020}
.status-scored{color:#1a7f37}";

fn html_table(t: &Table, last_is_overall: bool) -> String {
    let mut out = String::from("<table><thead><tr>");
    for h in &t.header {
        out.push_str(&format!("<th>{}</th>", escape(h)));
    }
    out.push_str("</tr></thead><tbody>\n");
    for (i, r) in t.rows.iter().enumerate() {
        if last_is_overall && i + 1 == t.rows.len() {
            out.push_str("<tr class=\"overall\">");
        } else {
            out.push_str("<tr>");
        }
        for c in r {
            out.push_str(&format!("<td>{}</td>", escape(c)));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table>\n");
    out
}

/// A unified diff with added, removed and hunk lines marked.
fn diff_block(d: &str) -> String {
    let mut out = String::from("<pre class=\"diff\">");
    for line in d.lines() {
        let class = if line.starts_with("+++") || line.starts_with("---") {
            None
        } else if line.starts_with('+') {
            Some("add")
        } else if line.starts_with('-') {
            Some("del")
        } else if line.starts_with("@@") {
            Some("hunk")
        } else {
            None
        };
        match class {
            Some(c) => out.push_str(&format!("<span class=\"{c}\">{}</span>", escape(line))),
            None => {
                out.push_str(&escape(line));
                out.push('\n');
            }
        }
    }
    out.push_str("</pre>\n");
    out
}

fn harness_link(hash: &str) -> String {
    format!(
        "<a href=\"#h-{}\"><code>{}</code></a>",
        escape(hash),
        escape(short(hash))
    )
}

fn eval_head(e: &EvalReport, out: &mut String) {
    let m = &e.meta;
    out.push_str(&format!(
        "<h1>Evaluation: {} — proposer <code>{}</code></h1>\n<p>Executor <code>{}</code> (model sha256 <code>{}</code>, identity <code>{}</code>); K = {} rounds, G = {} candidates, M = {} harness samples, selection <code>{}</code>, seed {}{}; crate {} ({}).</p>\n<p class=\"note\">Proposer spec <code>{}</code>.</p>\n",
        escape(&m.suite),
        escape(&m.proposer),
        escape(&m.executor_model),
        escape(&m.executor_model_id),
        escape(short(&m.executor_hash)),
        m.rounds,
        m.candidates,
        m.samples,
        escape(&m.select),
        m.seed,
        m.limit.map(|l| format!(", --limit {l}")).unwrap_or_default(),
        escape(&m.crate_version),
        escape(&m.git_commit),
        escape(&m.proposer_spec),
    ));
    if !m.comparable {
        out.push_str(
            "<p><strong>Not comparable</strong>: <code>--limit</code> cut the sets short.</p>\n",
        );
    }
    if !m.complete {
        out.push_str("<p><strong>Incomplete</strong>: some trajectories did not finish; only finished ones count.</p>\n");
    }
    for w in &e.warnings {
        out.push_str(&format!(
            "<p><strong>Warning</strong>: {}.</p>\n",
            escape(w)
        ));
    }
    out.push_str("<p class=\"note\">Every figure has a 95 % interval for the crossed design: harness samples × the test instances they share, tasks fixed strata of the overall and group rows (docs/EVAL.md, “Intervals”); n = harness samples × test instances. Best-of-M picks the sample with the best final dev score.</p>\n<h2>Per task</h2>\n");
    out.push_str(&html_table(&tables::tasks(e), true));
    if tables::families_differ(e) {
        out.push_str("<h2>Per family</h2>\n");
        out.push_str(&html_table(&tables::groups("family", &e.families), false));
    }
    if let Some(s) = &e.split {
        out.push_str(&format!(
            "<h2>Per split role ({})</h2>\n",
            escape(&s.source)
        ));
        out.push_str(&html_table(&tables::groups("role", &s.rows), false));
    }
    out.push_str("<h2>Test score after each round (horizon)</h2>\n");
    out.push_str(&html_table(&tables::curve(e), true));
    out.push_str("<h2>Cost</h2>\n");
    out.push_str(&html_table(&tables::cost(e), true));
    out.push_str("<h2>Harnesses tested (score vs executor tokens)</h2>\n");
    out.push_str(&html_table(&tables::harnesses(e), false));
}

fn trajectory(t: &Trajectory, out: &mut String) {
    let first = t.rounds.first().map(|r| r.test);
    let last = t.rounds.last().map(|r| r.test);
    let accepted = t.rounds.iter().filter(|r| r.accepted).count();
    out.push_str(&format!(
        "<details><summary>{} · sample {} · test {} → {} · {} accepted revision(s){}</summary>\n",
        escape(&t.task),
        t.sample,
        opt(first),
        opt(last),
        accepted,
        if t.complete { "" } else { " · incomplete" }
    ));
    for r in &t.rounds {
        out.push_str(&format!(
            "<details{}><summary>round {} · kept {} ({}) · test {:.3} · parent dev {} → kept dev {} · {} candidate(s)</summary>\n<p>Parent {}.</p>\n",
            if r.accepted { " open" } else { "" },
            r.round,
            harness_link(&r.kept),
            if r.round == 0 {
                "seed"
            } else if r.accepted {
                "accepted revision"
            } else {
                "parent kept"
            },
            r.test,
            opt(r.parent_dev),
            opt(r.kept_dev),
            r.candidates.len(),
            harness_link(&r.parent),
        ));
        for c in &r.candidates {
            out.push_str(&format!(
                "<details><summary>candidate {} · <span class=\"status-{}\">{}</span>{}{}{} · proposer tokens {}+{}</summary>\n",
                c.index,
                c.status.as_str(),
                c.status.as_str(),
                c.form.as_ref().map(|f| format!(" · form {}", escape(f))).unwrap_or_default(),
                c.dev.map(|d| format!(" · dev {d:.3}")).unwrap_or_default(),
                if c.selected { " · <strong>kept</strong>" } else { "" },
                c.tokens.prompt,
                c.tokens.completion,
            ));
            if let Some(h) = &c.hash {
                out.push_str(&format!("<p>Harness {}.</p>\n", harness_link(h)));
            }
            if let Some(reason) = &c.reason {
                out.push_str(&format!("<p>Reason: {}</p>\n", escape(reason)));
            }
            match &c.diff {
                Some(d) if !d.is_empty() => out.push_str(&diff_block(d)),
                Some(_) => out.push_str("<p class=\"note\">Identical to the parent.</p>\n"),
                None => {}
            }
            if let Some(raw) = &c.raw {
                out.push_str(&format!(
                    "<details><summary>raw proposer output ({} characters)</summary><pre>{}</pre></details>\n",
                    raw.chars().count(),
                    escape(raw)
                ));
            }
            out.push_str("</details>\n");
        }
        out.push_str("</details>\n");
    }
    out.push_str("</details>\n");
}

fn train_part(t: &TrainReport, out: &mut String) {
    out.push_str(&format!(
        "<h2>Training</h2>\n<p>{} steps (last step {}), trainer wall time {:.1} s; best held-out score {}.</p>\n",
        t.steps.len(),
        t.last_step.map(|s| s.to_string()).unwrap_or_else(|| "-".into()),
        t.wall_s,
        t.best_heldout_text()
    ));
    out.push_str(&html_table(&tables::training(t), false));
    if t.steps.len() > tables::MAX_TRAIN_ROWS {
        out.push_str(&format!(
            "<p class=\"note\">{} evenly spaced steps of {} shown; the JSON export has all.</p>\n",
            tables::MAX_TRAIN_ROWS,
            t.steps.len()
        ));
    }
}

impl Exporter for HtmlExporter {
    fn format(&self) -> Format {
        Format::Html
    }

    fn render(&self, report: &Report, _options: &ExportOptions) -> Result<Export, ReportError> {
        let title = match &report.eval {
            Some(e) => format!("{} — {} ({})", e.meta.suite, e.meta.proposer, report.run),
            None => format!("training run {}", report.run),
        };
        let mut out = format!(
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n<style>\n{STYLE}\n</style>\n</head>\n<body>\n",
            escape(&title)
        );
        match &report.eval {
            Some(e) => eval_head(e, &mut out),
            None => out.push_str(&format!("<h1>Training run {}</h1>\n", escape(&report.run))),
        }
        if !report.plots.is_empty() {
            out.push_str("<h2>Plots</h2>\n");
            for p in &report.plots {
                out.push_str(&format!(
                    "<figure class=\"plot\" id=\"plot-{}\">\n{}\n<figcaption>{}</figcaption>\n</figure>\n",
                    escape(&p.name),
                    p.svg.trim(),
                    escape(&p.title)
                ));
            }
        }
        if let Some(t) = &report.train {
            train_part(t, &mut out);
        }
        if let Some(e) = &report.eval {
            out.push_str("<h2>Trajectories</h2>\n<p class=\"note\">Each harness sample of each task: its rounds, every candidate the proposer returned (status, dev score, why it was invalid, the raw output) and the diff from the parent. Accepted rounds are open.</p>\n");
            for t in &e.trajectories {
                trajectory(t, &mut out);
            }
        }
        if let Some(e) = &report.eval {
            let data_hashes: Vec<&String> = report_harnesses(e);
            if !data_hashes.is_empty() {
                out.push_str("<h2>Harness files</h2>\n");
            }
            for h in data_hashes {
                let text = e.harness_files.get(h);
                out.push_str(&format!(
                    "<details id=\"h-{}\"><summary><code>{}</code>{}</summary>\n",
                    escape(h),
                    escape(h),
                    text.map(|t| format!(" (.{})", escape(&t.extension)))
                        .unwrap_or_default()
                ));
                match text {
                    Some(t) => out.push_str(&format!("<pre>{}</pre>\n", escape(&t.text))),
                    None => out.push_str("<p class=\"note\">Not in the run directory.</p>\n"),
                }
                out.push_str("</details>\n");
            }
        }
        out.push_str("</body>\n</html>\n");
        Ok(Export {
            text: out,
            assets: Vec::new(),
        })
    }
}

/// Every harness the trajectories mention, in order of first mention.
fn report_harnesses(e: &EvalReport) -> Vec<&String> {
    let mut seen = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for t in &e.trajectories {
        for r in &t.rounds {
            for h in std::iter::once(&r.parent)
                .chain(std::iter::once(&r.kept))
                .chain(r.candidates.iter().filter_map(|c| c.hash.as_ref()))
            {
                if seen.insert(h) {
                    out.push(h);
                }
            }
        }
    }
    out
}
