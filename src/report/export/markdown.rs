//! The Markdown export: the settings, the tables with intervals (per task, family,
//! split role; the horizon curve; costs; harnesses and the Pareto front), the plots as
//! linked SVG files, each trajectory's rounds, the accepted revisions' diffs and the
//! training log.

use super::tables::{self, Table};
use super::{Export, ExportOptions, Exporter, Format, opt};
use crate::report::model::{EvalReport, TrainReport};
use crate::report::trajectories::short;
use crate::report::{Report, ReportError};

pub struct MarkdownExporter;

/// A cell: pipes escaped, line breaks as spaces.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace(['\n', '\r'], " ")
}

/// A Markdown table.
pub fn table(t: &Table) -> String {
    let mut out = format!(
        "| {} |\n|{}\n",
        t.header
            .iter()
            .map(|h| cell(h))
            .collect::<Vec<_>>()
            .join(" | "),
        " --- |".repeat(t.header.len())
    );
    for r in &t.rows {
        out.push_str(&format!(
            "| {} |\n",
            r.iter().map(|c| cell(c)).collect::<Vec<_>>().join(" | ")
        ));
    }
    out
}

/// A fence longer than any run of backticks in `text`.
fn fence(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    "`".repeat((longest + 1).max(3))
}

fn eval_section(e: &EvalReport, out: &mut String) {
    let m = &e.meta;
    out.push_str(&format!(
        "# Evaluation: {} — proposer `{}`\n\nExecutor `{}` (model sha256 `{}`, identity `{}`); K = {} rounds, G = {} candidates, M = {} harness samples, selection `{}`, seed {}{}; crate {} ({}).\n\n",
        m.suite,
        m.proposer,
        m.executor_model,
        m.executor_model_id,
        short(&m.executor_hash),
        m.rounds,
        m.candidates,
        m.samples,
        m.select,
        m.seed,
        m.limit.map(|l| format!(", --limit {l}")).unwrap_or_default(),
        m.crate_version,
        m.git_commit
    ));
    if !m.comparable {
        out.push_str("**Not comparable**: `--limit` cut the sets short.\n\n");
    }
    if !m.complete {
        out.push_str(
            "**Incomplete**: some trajectories did not finish; only finished ones count.\n\n",
        );
    }
    for w in &e.warnings {
        out.push_str(&format!("**Warning**: {w}.\n\n"));
    }
    out.push_str("Every figure has a 95 % interval for the crossed design: harness samples x the test instances they share, tasks fixed strata of the overall and group rows (docs/EVAL.md, \"Intervals\"); n = harness samples x test instances. Best-of-M picks the sample with the best final dev score.\n\n## Per task\n\n");
    out.push_str(&table(&tables::tasks(e)));
    if tables::families_differ(e) {
        out.push_str("\n## Per family\n\n");
        out.push_str(&table(&tables::groups("family", &e.families)));
    }
    if let Some(s) = &e.split {
        out.push_str(&format!("\n## Per split role ({})\n\n", s.source));
        out.push_str(&table(&tables::groups("role", &s.rows)));
    }
    out.push_str("\n## Test score after each round (horizon)\n\n");
    out.push_str(&table(&tables::curve(e)));
    out.push_str("\n## Cost\n\n");
    out.push_str(&table(&tables::cost(e)));
    out.push_str("\n## Harnesses tested (score vs executor tokens)\n\n");
    out.push_str(&table(&tables::harnesses(e)));
    let rs = &e.summary.run_stats;
    if rs.wall_s > 0.0 {
        out.push_str(&format!(
            "\nWall {:.1} s; rollouts run {}, reused {}; set evaluations {} (+{} from the memo); executor batches {} (mean {:.1}, max {}).\n",
            rs.wall_s,
            rs.rollouts_run,
            rs.rollouts_reused,
            rs.evaluations,
            rs.memo_hits,
            rs.executor_batches,
            rs.executor_batch_mean,
            rs.executor_batch_max
        ));
    }
}

fn trajectories_section(e: &EvalReport, out: &mut String) {
    out.push_str("\n## Trajectories\n\n| task | sample | round | test | kept | accepted | candidates (status, dev) |\n| --- | --- | --- | --- | --- | --- | --- |\n");
    for t in &e.trajectories {
        for r in &t.rounds {
            let cands: Vec<String> = r
                .candidates
                .iter()
                .map(|c| {
                    format!(
                        "#{} {}{}{}",
                        c.index,
                        c.status.as_str(),
                        c.dev.map(|d| format!(" {d:.3}")).unwrap_or_default(),
                        if c.selected { " (kept)" } else { "" }
                    )
                })
                .collect();
            out.push_str(&format!(
                "| {} | {} | {} | {:.3} | `{}` | {} | {} |\n",
                cell(&t.task),
                t.sample,
                r.round,
                r.test,
                short(&r.kept),
                if r.accepted { "yes" } else { "" },
                cell(&cands.join(", "))
            ));
        }
    }
    let mut accepted = String::new();
    for t in &e.trajectories {
        for r in &t.rounds {
            for c in r.candidates.iter().filter(|c| c.selected && r.accepted) {
                let Some(d) = &c.diff else { continue };
                let f = fence(d);
                accepted.push_str(&format!(
                    "### {} sample {} round {}: dev {} → {} ({})\n\n{f}diff\n{d}{f}\n\n",
                    t.task,
                    t.sample,
                    r.round,
                    opt(r.parent_dev),
                    opt(c.dev),
                    c.form.as_deref().unwrap_or("-"),
                ));
            }
        }
    }
    if !accepted.is_empty() {
        out.push_str("\n## Accepted revisions\n\n");
        out.push_str(&accepted);
    }
}

fn train_section(t: &TrainReport, out: &mut String) {
    out.push_str(&format!(
        "\n## Training\n\n{} steps (last step {}), trainer wall time {:.1} s; best held-out score {}.\n\n",
        t.steps.len(),
        t.last_step.map(|s| s.to_string()).unwrap_or_else(|| "-".into()),
        t.wall_s,
        t.best_heldout_text()
    ));
    out.push_str(&table(&tables::training(t)));
    if t.steps.len() > tables::MAX_TRAIN_ROWS {
        out.push_str(&format!(
            "\n({} evenly spaced steps of {} shown; the JSON export has all.)\n",
            tables::MAX_TRAIN_ROWS,
            t.steps.len()
        ));
    }
}

impl Exporter for MarkdownExporter {
    fn format(&self) -> Format {
        Format::Markdown
    }

    fn render(&self, report: &Report, options: &ExportOptions) -> Result<Export, ReportError> {
        let mut out = String::new();
        if let Some(e) = &report.eval {
            eval_section(e, &mut out);
        } else {
            out.push_str(&format!("# Training run {}\n", report.run));
        }
        let mut assets = Vec::new();
        if !report.plots.is_empty() {
            out.push_str("\n## Plots\n\n");
            match &options.asset_prefix {
                Some(prefix) => {
                    for p in &report.plots {
                        let name = format!("{prefix}{}.svg", p.name);
                        out.push_str(&format!("![{}]({})\n\n", p.title, name));
                        assets.push((name, p.svg.clone()));
                    }
                }
                None => out.push_str(
                    "(Printed to standard output: give `--out FILE` to write the SVG plots beside it, or use `--format html`.)\n",
                ),
            }
        }
        if let Some(e) = &report.eval {
            trajectories_section(e, &mut out);
        }
        if let Some(t) = &report.train {
            train_section(t, &mut out);
        }
        Ok(Export { text: out, assets })
    }
}
