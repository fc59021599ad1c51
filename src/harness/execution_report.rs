//! From rollouts to numbers and text: [`Aggregates`] (per-group and overall scores
//! with 95 % intervals, failure-class rates, executor-free rate, tokens), the
//! [`ExecutionReport`] a proposer reads (JSON for machines, [`ExecutionReport::render_text`]
//! for prompts, within a token budget), and task-agnostic [`features`] of a report
//! and of a harness for learned proposers.
//!
//! A plain data structure filled from rollouts: the evaluator fills it, proposers read
//! it, neither imports the other.
//!
//! Intervals: [`crate::stats::mean_ci`] (Wilson for 0/1 scores, else a seeded
//! percentile bootstrap).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::rollout::{FailureClass, Rollout, Tokens, ToolPurpose};
use super::{Declarative, Harness, Strategy, Verification};
use crate::executor::FinishReason;
use crate::stats::{self, Estimate};
use crate::task::AnswerShape;

/// Seed of the bootstrap intervals in reports (fixed: the same rollouts always give
/// the same interval).
pub const CI_SEED: u64 = 0x4852_4c5f_4349;

/// One group's numbers (a family, or a platform/difficulty).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupStats {
    pub group: String,
    pub n: usize,
    pub score: Estimate,
    pub executor_free: usize,
    pub failures: BTreeMap<String, usize>,
}

/// Numbers over a set of rollouts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Aggregates {
    pub n: usize,
    /// Mean score over rollouts, with its 95 % interval.
    pub score: Estimate,
    /// Mean of the group means.
    pub macro_mean: f64,
    /// Rollouts per failure class (every class listed).
    pub failures: BTreeMap<String, usize>,
    pub failure_rates: BTreeMap<String, f64>,
    pub executor_free: usize,
    pub executor_free_rate: f64,
    /// Rollouts whose last executor call stopped at `max_tokens`.
    pub truncated: usize,
    pub executor_calls: usize,
    /// Executor calls answered by the completion cache.
    pub cached_calls: usize,
    pub tool_calls: usize,
    /// Tool calls that did not exit with status 0.
    pub tool_errors: usize,
    pub tokens: Tokens,
    pub mean_completion_tokens: f64,
    pub groups: Vec<GroupStats>,
}

fn failure_counts(rs: &[&Rollout]) -> BTreeMap<String, usize> {
    let mut m: BTreeMap<String, usize> = FailureClass::ALL
        .iter()
        .map(|c| (c.as_str().to_string(), 0))
        .collect();
    for r in rs {
        if let Some(f) = r.failure {
            *m.entry(f.as_str().to_string()).or_default() += 1;
        }
    }
    m
}

impl Aggregates {
    pub fn from_rollouts(rollouts: &[Rollout]) -> Aggregates {
        let all: Vec<&Rollout> = rollouts.iter().collect();
        let scores: Vec<f64> = all.iter().map(|r| r.score).collect();
        let n = all.len();
        let mut by_group: BTreeMap<&str, Vec<&Rollout>> = BTreeMap::new();
        for r in &all {
            by_group.entry(&r.group).or_default().push(r);
        }
        let groups: Vec<GroupStats> = by_group
            .into_iter()
            .map(|(g, rs)| {
                let s: Vec<f64> = rs.iter().map(|r| r.score).collect();
                GroupStats {
                    group: g.to_string(),
                    n: rs.len(),
                    score: stats::mean_ci(&s, 0.95, CI_SEED),
                    executor_free: rs.iter().filter(|r| r.executor_free).count(),
                    failures: failure_counts(&rs)
                        .into_iter()
                        .filter(|(_, c)| *c > 0)
                        .collect(),
                }
            })
            .collect();
        let failures = failure_counts(&all);
        let rate = |c: usize| if n == 0 { 0.0 } else { c as f64 / n as f64 };
        let mut tokens = Tokens::default();
        for r in &all {
            tokens.prompt += r.tokens.prompt;
            tokens.completion += r.tokens.completion;
            tokens.cached_prompt += r.tokens.cached_prompt;
        }
        let executor_free = all.iter().filter(|r| r.executor_free).count();
        Aggregates {
            n,
            score: stats::mean_ci(&scores, 0.95, CI_SEED),
            macro_mean: stats::mean(&groups.iter().map(|g| g.score.mean).collect::<Vec<_>>())
                .unwrap_or(0.0),
            failure_rates: failures
                .iter()
                .map(|(k, &v)| (k.clone(), rate(v)))
                .collect(),
            failures,
            executor_free,
            executor_free_rate: rate(executor_free),
            truncated: all
                .iter()
                .filter(|r| {
                    r.calls
                        .last()
                        .is_some_and(|c| c.finish_reason == Some(FinishReason::Length))
                })
                .count(),
            executor_calls: all.iter().map(|r| r.calls.len()).sum(),
            cached_calls: all
                .iter()
                .map(|r| r.calls.iter().filter(|c| c.cached).count())
                .sum(),
            tool_calls: all.iter().map(|r| r.tools.len()).sum(),
            tool_errors: all
                .iter()
                .map(|r| r.tools.iter().filter(|t| !t.ok()).count())
                .sum(),
            mean_completion_tokens: if n == 0 {
                0.0
            } else {
                tokens.completion as f64 / n as f64
            },
            tokens,
            groups,
        }
    }

    /// A fixed-width table: one row per group, then the overall row.
    pub fn table(&self) -> String {
        let w = self
            .groups
            .iter()
            .map(|g| g.group.len())
            .max()
            .unwrap_or(5)
            .max(7);
        let mut s = format!(
            "{:<w$}  {:>5}  {:>6}  {:>15}  {:>6}  top failure\n",
            "group", "n", "score", "95% CI", "exfree"
        );
        let ci = |e: &Estimate| match e.ci {
            Some(c) => format!("[{:.3}, {:.3}]", c.lo, c.hi),
            None => "-".into(),
        };
        for g in &self.groups {
            let top = g
                .failures
                .iter()
                .max_by_key(|(k, v)| (**v, std::cmp::Reverse((*k).clone())))
                .map(|(k, v)| format!("{k} {v}"))
                .unwrap_or_default();
            s.push_str(&format!(
                "{:<w$}  {:>5}  {:>6.3}  {:>15}  {:>6}  {}\n",
                g.group,
                g.n,
                g.score.mean,
                ci(&g.score),
                g.executor_free,
                top
            ));
        }
        s.push_str(&format!(
            "{:<w$}  {:>5}  {:>6.3}  {:>15}  {:>6}  (macro mean {:.3})\n",
            "overall",
            self.n,
            self.score.mean,
            ci(&self.score),
            self.executor_free,
            self.macro_mean
        ));
        s
    }
}

/// How an execution report is built and rendered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExecutionReportOptions {
    /// Show the feedback items' gold answers.
    pub show_gold: bool,
    /// Budget of the rendered text, in tokens (estimated as characters / 4).
    pub budget_tokens: usize,
}

impl Default for ExecutionReportOptions {
    fn default() -> Self {
        ExecutionReportOptions {
            show_gold: false,
            budget_tokens: 6000,
        }
    }
}

/// One feedback item in a report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportItem {
    pub id: String,
    pub group: String,
    /// The question as its source presents it.
    pub question: String,
    /// The final response.
    pub response: String,
    pub extracted: Option<String>,
    pub score: f64,
    pub failure: Option<FailureClass>,
    pub detail: Option<String>,
    /// The program run (program strategies) and its output.
    pub program: Option<String>,
    pub stdout: Option<String>,
    pub stderr: Option<String>,
    pub executor_calls: usize,
    pub tool_calls: usize,
    pub completion_tokens: u64,
    pub executor_free: bool,
    /// Only when the report shows gold answers.
    pub gold: Option<String>,
}

/// What a proposer reads about a harness's execution on the feedback set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExecutionReport {
    pub harness_hash: String,
    pub show_gold: bool,
    pub aggregates: Aggregates,
    pub items: Vec<ReportItem>,
}

impl ExecutionReport {
    pub fn from_rollouts(
        rollouts: &[Rollout],
        options: &ExecutionReportOptions,
    ) -> ExecutionReport {
        let items = rollouts
            .iter()
            .map(|r| {
                let last_program = r
                    .tools
                    .iter()
                    .rev()
                    .find(|t| matches!(t.purpose, ToolPurpose::Program | ToolPurpose::Tool));
                ReportItem {
                    id: r.item_id.clone(),
                    group: r.group.clone(),
                    question: r.question.clone(),
                    response: r.response.clone(),
                    extracted: r.extracted.clone(),
                    score: r.score,
                    failure: r.failure,
                    detail: r.detail.clone(),
                    program: r
                        .program
                        .clone()
                        .or_else(|| last_program.map(|t| t.code.clone())),
                    stdout: last_program.map(|t| t.stdout.clone()),
                    stderr: last_program.map(|t| t.stderr.clone()),
                    executor_calls: r.calls.len(),
                    tool_calls: r.tools.len(),
                    completion_tokens: r.tokens.completion,
                    executor_free: r.executor_free,
                    gold: if options.show_gold {
                        r.gold.clone()
                    } else {
                        None
                    },
                }
            })
            .collect();
        ExecutionReport {
            harness_hash: rollouts
                .first()
                .map(|r| r.harness_hash.clone())
                .unwrap_or_default(),
            show_gold: options.show_gold,
            aggregates: Aggregates::from_rollouts(rollouts),
            items,
        }
    }

    /// The header: aggregates only (always kept whole).
    fn header(&self) -> String {
        let a = &self.aggregates;
        let mut s = String::new();
        s.push_str(&format!(
            "# Execution report (harness {})\n",
            &self.harness_hash[..self.harness_hash.len().min(12)]
        ));
        let ci = a
            .score
            .ci
            .map(|c| format!(" (95% CI {:.2}-{:.2})", c.lo, c.hi))
            .unwrap_or_default();
        s.push_str(&format!(
            "{} items, mean score {:.3}{ci}\n",
            a.n, a.score.mean
        ));
        let fails: Vec<String> = a
            .failures
            .iter()
            .filter(|(_, v)| **v > 0)
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        if !fails.is_empty() {
            s.push_str(&format!("failures: {}\n", fails.join(", ")));
        }
        s.push_str(&format!(
            "executor calls {}, tool calls {} ({} failed), truncated responses {}, executor-free rollouts {}\n",
            a.executor_calls, a.tool_calls, a.tool_errors, a.truncated, a.executor_free
        ));
        if a.groups.len() > 1 {
            let g: Vec<String> = a
                .groups
                .iter()
                .map(|g| format!("{} {:.2} (n={})", g.group, g.score.mean, g.n))
                .collect();
            s.push_str(&format!("by group: {}\n", g.join("; ")));
        }
        s
    }

    /// Render for a prompt within `budget_tokens` (characters / 4). The aggregates
    /// are always whole; items get equal shares of the rest, each field cut in the
    /// middle when long; when even short items do not fit, items are chosen round
    /// robin across outcomes (each failure class, and successes) and the number left
    /// out is said.
    pub fn render_text(&self, budget_tokens: usize) -> String {
        let header = self.header();
        let budget_chars = budget_tokens.saturating_mul(4);
        let mut out = header.clone();
        let room = budget_chars.saturating_sub(header.chars().count());
        const MIN_ITEM: usize = 600;
        let fit = (room / MIN_ITEM).max(1).min(self.items.len());
        let chosen = pick_diverse(&self.items, fit);
        let per_item = if chosen.is_empty() {
            0
        } else {
            room / chosen.len()
        };
        for (k, &i) in chosen.iter().enumerate() {
            out.push_str(&self.render_item(i, k + 1, chosen.len(), per_item));
        }
        if chosen.len() < self.items.len() {
            out.push_str(&format!(
                "\n({} more items not shown for length)\n",
                self.items.len() - chosen.len()
            ));
        }
        out
    }

    fn render_item(&self, i: usize, k: usize, of: usize, chars: usize) -> String {
        let it = &self.items[i];
        let outcome = match it.failure {
            None => "solved".to_string(),
            Some(f) => f.as_str().to_string(),
        };
        let mut s = format!(
            "\n## Item {k}/{of}: {} ({}) score {:.2}, {outcome}\n",
            it.id, it.group, it.score
        );
        let body = chars.saturating_sub(s.len() + 120).max(200);
        let has_prog = it.program.is_some();
        let (q, r, p) = if has_prog { (25, 35, 40) } else { (40, 60, 0) };
        s.push_str(&format!(
            "Question:\n{}\n",
            cut_middle(&it.question, body * q / 100)
        ));
        s.push_str(&format!(
            "Response:\n{}\n",
            cut_middle(&it.response, body * r / 100)
        ));
        if let Some(prog) = &it.program {
            let share = body * p / 100;
            s.push_str(&format!("Program:\n{}\n", cut_middle(prog, share / 2)));
            if let Some(o) = &it.stdout {
                s.push_str(&format!("Stdout:\n{}\n", cut_middle(o, share / 4)));
            }
            if let Some(e) = it.stderr.as_ref().filter(|e| !e.trim().is_empty()) {
                s.push_str(&format!("Stderr:\n{}\n", cut_middle(e, share / 4)));
            }
        }
        s.push_str(&format!(
            "Extracted answer: {}\n",
            it.extracted
                .as_deref()
                .map(|e| cut_middle(e, 200))
                .unwrap_or_else(|| "(none)".into())
        ));
        if let Some(g) = &it.gold {
            s.push_str(&format!("Gold answer: {}\n", cut_middle(g, 200)));
        }
        if let Some(d) = &it.detail {
            s.push_str(&format!("Detail: {}\n", cut_middle(d, 300)));
        }
        s
    }

    /// Task-agnostic features of this report (see [`features`]).
    pub fn features(&self) -> BTreeMap<String, f64> {
        features(self)
    }
}

/// Keep the head and tail of `s` within `n` characters, saying how much was cut.
pub fn cut_middle(s: &str, n: usize) -> String {
    let chars: Vec<char> = s.chars().collect();
    if chars.len() <= n {
        return s.to_string();
    }
    let keep = n.saturating_sub(40).max(20);
    let h = keep * 2 / 5;
    let t = keep - h;
    let head: String = chars[..h].iter().collect();
    let tail: String = chars[chars.len() - t..].iter().collect();
    format!(
        "{head}\n[... {} characters cut ...]\n{tail}",
        chars.len() - h - t
    )
}

/// Up to `k` item indices, round robin over outcomes (failure classes in a fixed
/// order, then solved), in item order within an outcome; returned in item order.
fn pick_diverse(items: &[ReportItem], k: usize) -> Vec<usize> {
    let mut buckets: BTreeMap<u8, Vec<usize>> = BTreeMap::new();
    for (i, it) in items.iter().enumerate() {
        let key = it.failure.map_or(u8::MAX, |f| f as u8);
        buckets.entry(key).or_default().push(i);
    }
    let mut lists: Vec<std::collections::VecDeque<usize>> =
        buckets.into_values().map(Into::into).collect();
    let mut out = Vec::new();
    while out.len() < k && lists.iter().any(|l| !l.is_empty()) {
        for l in lists.iter_mut() {
            if out.len() >= k {
                break;
            }
            if let Some(i) = l.pop_front() {
                out.push(i);
            }
        }
    }
    out.sort_unstable();
    out
}

/// Task-agnostic features of an execution report, for learned proposers. They never
/// name the task or its family. Every value is a rate in 0..1 or a scaled size:
///
/// `score`; `fail.<class>` for each failure class (rate); `executor_free`;
/// `truncated` (rate); `calls_per_item` and `tools_per_item` (divided by 10);
/// `tool_error_rate` (of tool calls); `completion_tokens` (mean, /1000);
/// `question_chars` (mean, /1000); `question_lines` (mean, /100);
/// `gold_shape.<number|token|line|lines>` (rates of the gold answers' shapes, see
/// `task::shape`; computed even when gold answers are not shown, since a shape does
/// not reveal an answer); `response_has_tag` and `response_has_code` (rates).
pub fn features(r: &ExecutionReport) -> BTreeMap<String, f64> {
    let a = &r.aggregates;
    let n = r.items.len().max(1) as f64;
    let mut f = BTreeMap::new();
    f.insert("score".into(), a.score.mean);
    for (k, v) in &a.failure_rates {
        f.insert(format!("fail.{k}"), *v);
    }
    f.insert("executor_free".into(), a.executor_free_rate);
    f.insert("truncated".into(), a.truncated as f64 / n);
    f.insert("calls_per_item".into(), a.executor_calls as f64 / n / 10.0);
    f.insert("tools_per_item".into(), a.tool_calls as f64 / n / 10.0);
    f.insert(
        "tool_error_rate".into(),
        if a.tool_calls == 0 {
            0.0
        } else {
            a.tool_errors as f64 / a.tool_calls as f64
        },
    );
    f.insert(
        "completion_tokens".into(),
        a.mean_completion_tokens / 1000.0,
    );
    let mean = |g: &dyn Fn(&ReportItem) -> f64| r.items.iter().map(g).sum::<f64>() / n;
    f.insert(
        "question_chars".into(),
        mean(&|i| i.question.chars().count() as f64) / 1000.0,
    );
    f.insert(
        "question_lines".into(),
        mean(&|i| i.question.lines().count() as f64) / 100.0,
    );
    f.insert(
        "response_has_tag".into(),
        mean(&|i| f64::from(crate::families::extract_answer(&i.response).is_some())),
    );
    f.insert(
        "response_has_code".into(),
        mean(&|i| f64::from(super::extract::program(&i.response).is_some())),
    );
    for shape in [
        AnswerShape::Number,
        AnswerShape::Token,
        AnswerShape::Line,
        AnswerShape::Lines,
    ] {
        f.insert(format!("gold_shape.{}", shape.as_str()), 0.0);
    }
    f
}

/// Fill the `gold_shape.*` features from the gold answers (kept out of the report
/// itself when gold answers are hidden).
pub fn add_gold_shapes(f: &mut BTreeMap<String, f64>, rollouts: &[Rollout]) {
    let golds: Vec<&str> = rollouts.iter().filter_map(|r| r.gold.as_deref()).collect();
    if golds.is_empty() {
        return;
    }
    for shape in [
        AnswerShape::Number,
        AnswerShape::Token,
        AnswerShape::Line,
        AnswerShape::Lines,
    ] {
        let k = golds.iter().filter(|g| AnswerShape::of(g) == shape).count();
        f.insert(
            format!("gold_shape.{}", shape.as_str()),
            k as f64 / golds.len() as f64,
        );
    }
}

/// Task-agnostic features of a harness: `kind.program`, `strategy.<name>`,
/// `verification.<name>` (one-hot), `instructions`, `notes`, `examples` (counts /10),
/// `has_format_rule`, `has_system`, `temperature`, `max_tokens` (/1000).
pub fn harness_features(h: &Harness) -> BTreeMap<String, f64> {
    let mut f = BTreeMap::new();
    let d = match h {
        Harness::Program(_) => {
            f.insert("kind.program".into(), 1.0);
            return f;
        }
        Harness::Declarative(d) => d,
    };
    f.insert("kind.program".into(), 0.0);
    let strategies = [
        Strategy::Direct {},
        Strategy::ReasonThenAnswer {},
        Strategy::Program { repl_print: false },
        Strategy::PythonTool { max_calls: 1 },
    ];
    for s in strategies {
        f.insert(
            format!("strategy.{}", s.name()),
            f64::from(s.name() == d.strategy.name()),
        );
    }
    for v in [
        Verification::None {},
        Verification::ReRunOnError { max_retries: 1 },
        Verification::SelfConsistency {
            n: 2,
            vote: Default::default(),
        },
    ] {
        f.insert(
            format!("verification.{}", v.name()),
            f64::from(v.name() == d.verification.name()),
        );
    }
    declarative_counts(d, &mut f);
    f
}

fn declarative_counts(d: &Declarative, f: &mut BTreeMap<String, f64>) {
    f.insert("instructions".into(), d.instructions.len() as f64 / 10.0);
    f.insert("notes".into(), d.notes.len() as f64 / 10.0);
    f.insert("examples".into(), d.examples.len() as f64 / 10.0);
    f.insert("has_format_rule".into(), f64::from(d.format.rule.is_some()));
    f.insert("has_system".into(), f64::from(!d.system.trim().is_empty()));
    let s = d.sampling();
    f.insert("temperature".into(), s.temperature as f64);
    f.insert("max_tokens".into(), s.max_tokens as f64 / 1000.0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_middle_keeps_both_ends() {
        let s: String = (0..1000)
            .map(|i| char::from(b'a' + (i % 26) as u8))
            .collect();
        let c = cut_middle(&s, 200);
        assert!(c.chars().count() <= 260, "{}", c.len());
        assert!(c.starts_with("abc"));
        assert!(c.ends_with(&s[s.len() - 10..]));
        assert!(c.contains("characters cut"));
        assert_eq!(cut_middle("short", 200), "short");
    }
}
