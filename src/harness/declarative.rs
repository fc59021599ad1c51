//! Declarative harnesses: a TOML (or JSON) document of prompt parts and settings.
//!
//! Every prompt word a declarative harness sends is written in the document (the
//! runtime adds only the fixed follow-up messages of the python-tool loop and of
//! re-run-on-error, documented in docs/HARNESS.md). Fields (all optional):
//!
//! - `name`, `description`: labels (not part of the content hash).
//! - `system`: system text; `instructions`: a list shown as `Instructions:` bullets
//!   after it; `notes`: memory notes shown as `Notes:` bullets.
//! - `prefill`: text the assistant turn starts with (an assistant prefill, e.g. an
//!   introductory sentence and an opening ```` ```python ```` fence); the executor
//!   continues it, the response is the prefill followed by the completion, and a
//!   python fence the prefill opened and the completion left open (stopped at the
//!   closing fence) still yields its program.
//! - `[format] rule`: the answer rule for answer items, a template over `{format}`
//!   (the item's answer format phrase, e.g. `as a single integer`) and
//!   `{instruction}` (the item's own answer instruction). When a rule is set the
//!   question is shown without its own instruction, followed by the rule; when not,
//!   the question is shown as its source wrote it. `[format] code_rule`: the same for
//!   code items, over `{contract}` (the source's format section); when not set, code
//!   items are shown with their source's reference prompt.
//! - `[strategy] kind`: `direct`, `reason-then-answer`, `program` (`repl_print`), or
//!   `python-tool` (`max_calls`).
//! - `[verification] kind`: `none`, `self-consistency` (`n`, `vote`), or
//!   `re-run-on-error` (`max_retries`).
//! - `[sampling]`: overrides of temperature, top_p, top_k, min_p, max_tokens, stop,
//!   seed.
//! - `[[examples]]`: worked examples, each a `question` (the user turn as shown) and a
//!   `response` (the assistant turn), optional `source` (the item id it came from).
//!
//! Unknown fields are errors. [`Declarative::validate`] checks ranges and templates
//! and names the field.

use serde::{Deserialize, Serialize};

use crate::executor::Sampling;

/// How the executor is used for one item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Strategy {
    /// One call; the response carries the answer (or the program, for code items).
    Direct {},
    /// As `direct`, with the larger default token budget reasoning needs.
    ReasonThenAnswer {},
    /// The executor writes a Python program; it runs in the sandbox and its standard
    /// output is the answer (code items: the program is the solution).
    Program {
        /// Print the value of a bare last expression, as a REPL would (`str()`).
        #[serde(default)]
        repl_print: bool,
    },
    /// Interleaved tool use: every ```python block of a response is run and its
    /// output fed back, up to `max_calls` runs; the response with the final answer
    /// (or without a block) ends the loop.
    PythonTool {
        #[serde(default = "default_max_calls")]
        max_calls: u32,
    },
}

impl Default for Strategy {
    fn default() -> Self {
        Strategy::Direct {}
    }
}

impl Default for Verification {
    fn default() -> Self {
        Verification::None {}
    }
}

fn default_max_calls() -> u32 {
    4
}

impl Strategy {
    pub fn name(&self) -> &'static str {
        match self {
            Strategy::Direct {} => "direct",
            Strategy::ReasonThenAnswer {} => "reason-then-answer",
            Strategy::Program { .. } => "program",
            Strategy::PythonTool { .. } => "python-tool",
        }
    }

    /// Default `max_tokens` per executor call.
    pub fn default_max_tokens(&self) -> u32 {
        match self {
            Strategy::Direct {} => 512,
            Strategy::ReasonThenAnswer {} => 1024,
            Strategy::Program { .. } => 768,
            Strategy::PythonTool { .. } => 768,
        }
    }
}

/// How a vote picks the final answer among self-consistency samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Vote {
    /// The most frequent extracted answer (ties: the earliest sample).
    #[default]
    Majority,
    /// The first sample that produced an answer at all.
    FirstAnswer,
}

/// What is done to check or repeat an attempt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Verification {
    None {},
    /// `n` independent attempts (sampled: needs temperature > 0), then a vote.
    SelfConsistency {
        n: u32,
        #[serde(default)]
        vote: Vote,
    },
    /// When an attempt fails visibly (no answer, a program that crashes, a code
    /// solution that fails a public test), show the failure and ask again, up to
    /// `max_retries` times.
    ReRunOnError {
        #[serde(default = "default_retries")]
        max_retries: u32,
    },
}

fn default_retries() -> u32 {
    1
}

impl Verification {
    pub fn name(&self) -> &'static str {
        match self {
            Verification::None {} => "none",
            Verification::SelfConsistency { .. } => "self-consistency",
            Verification::ReRunOnError { .. } => "re-run-on-error",
        }
    }
}

/// The answer rules (see the module doc).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Format {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_rule: Option<String>,
}

/// Sampling settings that override the strategy's defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct SamplingOverrides {
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "shortest_f32"
    )]
    pub temperature: Option<f32>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "shortest_f32"
    )]
    pub top_p: Option<f32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_k: Option<u32>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "shortest_f32"
    )]
    pub min_p: Option<f32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
}

/// Write an `f32` as the shortest decimal that reads back as the same `f32` (`0.7`),
/// carried in an `f64`: TOML has only 64-bit floats, and widening the `f32` itself
/// would write `0.699999988079071`. The content hash keeps the widened form
/// ([`Declarative::content`]), so hashes did not change with this.
fn shortest_f32<S: serde::Serializer>(v: &Option<f32>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(x) => {
            let wide: f64 = x.to_string().parse().unwrap_or(f64::from(*x));
            s.serialize_some(&wide)
        }
        None => s.serialize_none(),
    }
}

/// One worked example: the user turn as shown and the assistant turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Example {
    pub question: String,
    pub response: String,
    /// The item id the example was taken from, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// A declarative harness.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Declarative {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    #[serde(default)]
    pub system: String,
    #[serde(default)]
    pub instructions: Vec<String>,
    #[serde(default)]
    pub notes: Vec<String>,
    /// The start of every assistant turn the harness asks for (an assistant prefill):
    /// the executor continues this text, and the response is the prefill followed by
    /// the completion. Empty: no prefill.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub prefill: String,
    #[serde(default)]
    pub strategy: Strategy,
    #[serde(default)]
    pub verification: Verification,
    #[serde(default)]
    pub format: Format,
    #[serde(default)]
    pub sampling: SamplingOverrides,
    #[serde(default)]
    pub examples: Vec<Example>,
}

/// A validation failure: the field path and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid {
    pub field: String,
    pub message: String,
}

/// Size limits of a declarative harness.
pub mod limits {
    pub const TEXT_CHARS: usize = 8_000;
    pub const LIST_ITEMS: usize = 32;
    pub const EXAMPLES: usize = 8;
    pub const MAX_CALLS: u32 = 16;
    pub const MAX_SAMPLES: u32 = 16;
    pub const MAX_RETRIES: u32 = 5;
    pub const MAX_TOKENS: u32 = 8192;
    pub const STOP_STRINGS: usize = 8;
}

/// Placeholders allowed in `format.rule` and `format.code_rule`.
pub const RULE_VARS: &[&str] = &["format", "instruction"];
pub const CODE_RULE_VARS: &[&str] = &["contract"];

/// Render a `{name}` template; `{{` and `}}` are literal braces. Unknown placeholders
/// and unbalanced braces are errors (checked by [`check_template`] at load).
pub fn render_template(template: &str, vars: &[(&str, &str)]) -> Result<String, String> {
    let mut out = String::with_capacity(template.len() + 64);
    let mut chars = template.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '{' if chars.peek().map(|x| x.1) == Some('{') => {
                chars.next();
                out.push('{');
            }
            '}' if chars.peek().map(|x| x.1) == Some('}') => {
                chars.next();
                out.push('}');
            }
            '{' => {
                let rest = &template[i + 1..];
                let end = rest
                    .find('}')
                    .ok_or_else(|| format!("unclosed `{{` at byte {i}"))?;
                let name = &rest[..end];
                let value = vars
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| *v)
                    .ok_or_else(|| {
                        format!(
                            "unknown placeholder `{{{name}}}` (allowed: {})",
                            vars.iter()
                                .map(|(k, _)| format!("{{{k}}}"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        )
                    })?;
                out.push_str(value);
                for _ in 0..=name.chars().count() {
                    chars.next();
                }
            }
            '}' => return Err(format!("unmatched `}}` at byte {i} (write `}}}}`)")),
            _ => out.push(c),
        }
    }
    Ok(out)
}

/// Check a template against the allowed placeholder names.
pub fn check_template(template: &str, allowed: &[&str]) -> Result<(), String> {
    let vars: Vec<(&str, &str)> = allowed.iter().map(|k| (*k, "")).collect();
    render_template(template, &vars).map(|_| ())
}

/// Checks of sampling values shared with the executor's callers.
// One line to switch to `Sampling::validate()` once it is on main.
fn check_sampling_values(s: &Sampling) -> Result<(), Invalid> {
    let bad = |field: &str, message: String| Invalid {
        field: format!("sampling.{field}"),
        message,
    };
    if !(s.temperature.is_finite() && (0.0..=2.0).contains(&s.temperature)) {
        return Err(bad(
            "temperature",
            format!("{} is outside 0..=2", s.temperature),
        ));
    }
    if !(s.top_p.is_finite() && s.top_p > 0.0 && s.top_p <= 1.0) {
        return Err(bad("top_p", format!("{} is outside (0, 1]", s.top_p)));
    }
    if !(s.min_p.is_finite() && (0.0..=1.0).contains(&s.min_p)) {
        return Err(bad("min_p", format!("{} is outside 0..=1", s.min_p)));
    }
    if s.max_tokens == 0 || s.max_tokens > limits::MAX_TOKENS {
        return Err(bad(
            "max_tokens",
            format!("{} is outside 1..={}", s.max_tokens, limits::MAX_TOKENS),
        ));
    }
    if s.stop.len() > limits::STOP_STRINGS {
        return Err(bad(
            "stop",
            format!(
                "{} stop strings (at most {})",
                s.stop.len(),
                limits::STOP_STRINGS
            ),
        ));
    }
    if let Some(i) = s.stop.iter().position(|x| x.is_empty() || x.len() > 64) {
        return Err(bad(
            &format!("stop[{i}]"),
            "stop strings must be 1..=64 bytes".into(),
        ));
    }
    Ok(())
}

impl Declarative {
    /// The sampling settings of executor calls: greedy decoding, the strategy's
    /// token budget, then the overrides.
    pub fn sampling(&self) -> Sampling {
        let o = &self.sampling;
        let d = Sampling::default();
        Sampling {
            temperature: o.temperature.unwrap_or(d.temperature),
            top_p: o.top_p.unwrap_or(d.top_p),
            top_k: o.top_k.unwrap_or(d.top_k),
            min_p: o.min_p.unwrap_or(d.min_p),
            seed: o.seed.unwrap_or(d.seed),
            max_tokens: o
                .max_tokens
                .unwrap_or_else(|| self.strategy.default_max_tokens()),
            stop: o.stop.clone().unwrap_or_default(),
            grammar: None,
            json_schema: None,
        }
    }

    /// Check every range, size and template; the first problem names its field.
    pub fn validate(&self) -> Result<(), Invalid> {
        let bad = |field: String, message: String| Err(Invalid { field, message });
        let text = |field: &str, s: &str| -> Result<(), Invalid> {
            if s.chars().count() > limits::TEXT_CHARS {
                return bad(
                    field.to_string(),
                    format!("longer than {} characters", limits::TEXT_CHARS),
                );
            }
            if s.contains('\0') {
                return bad(field.to_string(), "contains a NUL character".into());
            }
            Ok(())
        };
        text("name", &self.name)?;
        text("description", &self.description)?;
        text("system", &self.system)?;
        text("prefill", &self.prefill)?;
        for (field, list) in [("instructions", &self.instructions), ("notes", &self.notes)] {
            if list.len() > limits::LIST_ITEMS {
                return bad(
                    field.into(),
                    format!("{} entries (at most {})", list.len(), limits::LIST_ITEMS),
                );
            }
            for (i, s) in list.iter().enumerate() {
                if s.trim().is_empty() {
                    return bad(format!("{field}[{i}]"), "is empty".into());
                }
                text(&format!("{field}[{i}]"), s)?;
            }
        }
        if self.examples.len() > limits::EXAMPLES {
            return bad(
                "examples".into(),
                format!(
                    "{} examples (at most {})",
                    self.examples.len(),
                    limits::EXAMPLES
                ),
            );
        }
        for (i, e) in self.examples.iter().enumerate() {
            for (f, s) in [("question", &e.question), ("response", &e.response)] {
                if s.trim().is_empty() {
                    return bad(format!("examples[{i}].{f}"), "is empty".into());
                }
                text(&format!("examples[{i}].{f}"), s)?;
            }
        }
        match &self.strategy {
            Strategy::PythonTool { max_calls } if !(1..=limits::MAX_CALLS).contains(max_calls) => {
                return bad(
                    "strategy.max_calls".into(),
                    format!("{max_calls} is outside 1..={}", limits::MAX_CALLS),
                );
            }
            _ => {}
        }
        let sampling = self.sampling();
        match &self.verification {
            Verification::SelfConsistency { n, .. } => {
                if !(2..=limits::MAX_SAMPLES).contains(n) {
                    return bad(
                        "verification.n".into(),
                        format!("{n} is outside 2..={}", limits::MAX_SAMPLES),
                    );
                }
                if sampling.is_greedy() {
                    return bad(
                        "verification.n".into(),
                        "self-consistency needs sampled decoding (set sampling.temperature > 0): greedy samples are identical".into(),
                    );
                }
            }
            Verification::ReRunOnError { max_retries }
                if !(1..=limits::MAX_RETRIES).contains(max_retries) =>
            {
                return bad(
                    "verification.max_retries".into(),
                    format!("{max_retries} is outside 1..={}", limits::MAX_RETRIES),
                );
            }
            _ => {}
        }
        if let Some(r) = &self.format.rule {
            text("format.rule", r)?;
            check_template(r, RULE_VARS).or_else(|m| bad("format.rule".into(), m))?;
        }
        if let Some(r) = &self.format.code_rule {
            text("format.code_rule", r)?;
            check_template(r, CODE_RULE_VARS).or_else(|m| bad("format.code_rule".into(), m))?;
        }
        check_sampling_values(&sampling)?;
        if let Some(seed) = self.sampling.seed
            && seed > i64::MAX as u64
        {
            return bad(
                "sampling.seed".into(),
                format!(
                    "{seed} is above {} (TOML integers are 64-bit signed)",
                    i64::MAX
                ),
            );
        }
        Ok(())
    }

    /// What the content hash covers: everything but `name` and `description`.
    pub fn content(&self) -> serde_json::Value {
        // Empty labels are not serialised, so clearing them leaves the fields in
        // declaration order (a map removal could reorder them).
        let mut c = self.clone();
        c.name.clear();
        c.description.clear();
        let mut v = serde_json::to_value(c).expect("a harness serialises");
        // Hash stability: the sampling floats keep the form they had before the
        // canonical TOML wrote them shortest (`shortest_f32`), the f32 widened to f64.
        let s = &self.sampling;
        for (key, x) in [
            ("temperature", s.temperature),
            ("top_p", s.top_p),
            ("min_p", s.min_p),
        ] {
            if let (Some(x), Some(obj)) = (x, v["sampling"].as_object_mut()) {
                obj.insert(key.into(), serde_json::Value::from(x));
            }
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates() {
        let vars = [("format", "as a single integer"), ("instruction", "X")];
        assert_eq!(
            render_template("Give your answer {format}.", &vars).unwrap(),
            "Give your answer as a single integer."
        );
        assert_eq!(
            render_template("{{literal}} {format}", &vars).unwrap(),
            "{literal} as a single integer"
        );
        assert!(render_template("{nope}", &vars).is_err());
        assert!(render_template("open {format", &vars).is_err());
        assert!(render_template("close }", &vars).is_err());
        assert_eq!(
            render_template("ünï {format}!", &vars).unwrap(),
            "ünï as a single integer!"
        );
    }

    #[test]
    fn validation_names_fields() {
        let mut h = Declarative::default();
        assert_eq!(h.validate(), Ok(()));
        h.strategy = Strategy::PythonTool { max_calls: 0 };
        assert_eq!(h.validate().unwrap_err().field, "strategy.max_calls");
        h.strategy = Strategy::Direct {};
        h.verification = Verification::SelfConsistency {
            n: 3,
            vote: Vote::Majority,
        };
        assert_eq!(h.validate().unwrap_err().field, "verification.n");
        h.sampling.temperature = Some(0.7);
        assert_eq!(h.validate(), Ok(()));
        h.sampling.top_p = Some(0.0);
        assert_eq!(h.validate().unwrap_err().field, "sampling.top_p");
        h.sampling.top_p = None;
        h.format.rule = Some("{answer}".into());
        assert_eq!(h.validate().unwrap_err().field, "format.rule");
        h.format.rule = None;
        h.instructions = vec!["ok".into(), " ".into()];
        assert_eq!(h.validate().unwrap_err().field, "instructions[1]");
    }
}
