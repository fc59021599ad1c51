//! Proposers: given a task, the current harness, the execution report of that harness
//! on the task's feedback set and the history of earlier rounds, return candidate
//! revisions — each a new harness, or an **invalid revision** with its reason and the
//! raw output it came from.
//!
//! Kinds ([`ProposerSpec`]):
//! - `identity` ([`identity`]): the baseline; makes no revision.
//! - `file:PATH` ([`file`]): a fixed harness (e.g. a hand-written oracle); `PATH` is a
//!   harness file used for every task, or a directory holding `<task key>.{toml,json,py}`
//!   per task (the key is the family name, `lcb` for LiveCodeBench tasks).
//! - `llm:EXECUTOR_SPEC` ([`llm`]): a model prompted with a versioned template
//!   ([`template`]); its replies are parsed robustly ([`parse`], [`patch`]).
//! - `cmd:PROGRAM [ARGS...]` ([`cmd`]): an external program speaking the JSON-lines
//!   protocol documented there.
//! - `policy:CKPT`: the compact learned policy of the trainer. This build parses the
//!   spec; opening it is the trainer module's job (see [`open`]).
//!
//! A proposer never imports the evaluator: it reads the plain data of this module
//! ([`ProposalRequest`]) and the harness runtime's [`ExecutionReport`]. Proposers are
//! shared by concurrent trajectories (`Send + Sync`) and must be deterministic given
//! the request's seed (the evaluator derives one seed per sample, round and
//! candidate), so that runs repeat exactly.

pub mod cmd;
pub mod constrain;
pub mod file;
pub mod identity;
pub mod llm;
pub mod parse;
pub mod patch;
pub mod rule;
pub mod template;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::executor::spec::{CacheSetting, ExecutorIdentity, ExecutorSpec, OpenOptions};
use crate::executor::{Executor, ExecutorError};
use crate::harness::Harness;
use crate::harness::edit::EditContext;
use crate::harness::execution_report::ExecutionReport;
use crate::task::ItemKind;

/// Errors that stop a proposer (not invalid revisions, which are results).
#[derive(Debug, thiserror::Error)]
pub enum ProposerError {
    /// A spec that does not parse, a missing file, a bad template.
    #[error("proposer: {0}")]
    Usage(String),
    /// The proposer's model failed (after the executor's own retries).
    #[error("proposer model: {0}")]
    Executor(#[from] ExecutorError),
    /// An external proposer program could not be started or stopped answering.
    #[error("proposer program: {0}")]
    Program(String),
    /// A proposer kind this build cannot open.
    #[error("proposer `{spec}`: {message}")]
    Unavailable { spec: String, message: String },
}

impl crate::error::Classify for ProposerError {
    fn kind(&self) -> crate::error::ErrorKind {
        use crate::error::ErrorKind::{Runtime, Usage};
        match self {
            ProposerError::Usage(_) | ProposerError::Unavailable { .. } => Usage,
            ProposerError::Executor(e) => e.kind(),
            ProposerError::Program(_) => Runtime,
        }
    }
}

/// What a proposer is told about the task. Learned proposers that must transfer to
/// unseen families read only task-agnostic features (see `harness::execution_report`); the
/// description is for prompted proposers, as in the published protocol.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskInfo {
    /// The task id (`count_primes/L1`, `lcb:NAME`).
    pub id: String,
    /// The key `file:DIR` proposers look harnesses up by: the family name, or `lcb`.
    pub key: String,
    pub kind: ItemKind,
    /// A description in words: what the questions ask, the level, the answer format.
    pub description: String,
}

/// One candidate of an earlier round, as the history shows it (never a test score).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistoryCandidate {
    pub index: usize,
    /// `scored`, `duplicate`, `unchanged` or `invalid`.
    pub status: String,
    pub hash: Option<String>,
    pub dev_score: Option<f64>,
    pub reason: Option<String>,
}

/// One earlier round of the same trajectory. Test scores are never part of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistoryEntry {
    pub round: u32,
    pub parent: String,
    pub parent_feedback_score: Option<f64>,
    pub parent_dev_score: Option<f64>,
    pub candidates: Vec<HistoryCandidate>,
    /// The harness kept for the next round.
    pub selected: String,
    pub accepted: bool,
}

impl HistoryEntry {
    /// A few lines for a prompt.
    pub fn render(&self) -> String {
        let short = |h: &str| h.chars().take(12).collect::<String>();
        let mut s = format!("Round {}: parent {}", self.round, short(&self.parent));
        if let Some(f) = self.parent_feedback_score {
            s.push_str(&format!(", feedback score {f:.2}"));
        }
        if let Some(d) = self.parent_dev_score {
            s.push_str(&format!(", scoring-set score {d:.2}"));
        }
        s.push('\n');
        for c in &self.candidates {
            s.push_str(&format!("- candidate {}: {}", c.index + 1, c.status));
            if let Some(d) = c.dev_score {
                s.push_str(&format!(", scoring-set score {d:.2}"));
            }
            if let Some(r) = &c.reason {
                let r: String = r.chars().take(160).collect();
                s.push_str(&format!(" ({r})"));
            }
            s.push('\n');
        }
        s.push_str(&format!(
            "Kept: {} ({})\n",
            short(&self.selected),
            if self.accepted {
                "a revision was accepted"
            } else {
                "the parent was kept"
            }
        ));
        s
    }
}

/// Everything a proposer is given for one round.
pub struct ProposalRequest<'a> {
    pub task: &'a TaskInfo,
    /// The current (parent) harness.
    pub harness: &'a Harness,
    /// The parent's execution report on the feedback set (`None` for proposers that
    /// do not ask for one, see [`Proposer::wants_report`]).
    pub report: Option<&'a ExecutionReport>,
    /// The feedback items `add_example` edits may draw on.
    pub feedback: &'a EditContext,
    pub history: &'a [HistoryEntry],
    /// How many candidates to return (G).
    pub candidates: usize,
    /// The seed of this (sample, round); candidate `i` uses [`candidate_seed`]`(seed, i)`.
    pub seed: u64,
    pub sample: u32,
    pub round: u32,
}

/// The seed of candidate `index` of a round whose seed is `seed`.
pub fn candidate_seed(seed: u64, index: usize) -> u64 {
    let mut h = Sha256::new();
    h.update(b"harness-rl/candidate-seed\0");
    h.update(seed.to_le_bytes());
    h.update((index as u64).to_le_bytes());
    u64::from_le_bytes(h.finalize()[..8].try_into().expect("8 bytes"))
}

/// How a candidate harness was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RevisionForm {
    /// A harness file (the `file` proposer).
    File,
    /// A complete declarative harness in TOML.
    Toml,
    /// A complete declarative harness in JSON.
    Json,
    /// A list of typed edits applied to the parent.
    Edits,
    /// A complete Python program harness.
    Python,
    /// A unified diff applied to the parent's canonical text.
    Diff,
}

/// A candidate's outcome.
// A round holds G of these at a time: the size difference between the variants does
// not matter, and a box would only add noise at every construction and match.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Revision {
    Harness {
        harness: Harness,
        form: RevisionForm,
    },
    /// Did not parse, did not apply, or failed validation; the parent is kept.
    Invalid { reason: String },
}

/// Proposer tokens (prompt and completion) of a candidate or a round.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenUse {
    pub prompt: u64,
    pub completion: u64,
}

impl TokenUse {
    pub fn add(&mut self, o: TokenUse) {
        self.prompt += o.prompt;
        self.completion += o.completion;
    }
}

/// One candidate revision.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub revision: Revision,
    /// The raw proposer output it came from (model text, a protocol line), if any.
    pub raw: Option<String>,
    pub tokens: TokenUse,
    /// Whether the proposer's model answer came from the completion cache.
    pub cached: bool,
}

impl Candidate {
    pub fn invalid(reason: impl Into<String>, raw: Option<String>) -> Candidate {
        Candidate {
            revision: Revision::Invalid {
                reason: reason.into(),
            },
            raw,
            tokens: TokenUse::default(),
            cached: false,
        }
    }
}

/// What a proposer returned for one round.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Proposal {
    pub candidates: Vec<Candidate>,
    /// The prompt shown to a model (prompted proposers), for the log.
    pub prompt: Option<String>,
}

/// Who proposed: recorded in a run's `config.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProposerIdentity {
    /// The spec, normalised.
    pub spec: String,
    /// `identity`, `file`, `llm`, `cmd`, `policy`.
    pub kind: String,
    /// A short label for tables and directory names.
    pub label: String,
    /// Kind-specific facts: the model's identity and sha256, the template's version
    /// and sha256, the harness files and their hashes, the program and its sha256.
    pub details: serde_json::Value,
}

/// One task a proposer was trained on: a family at a level (`lcb` for LiveCodeBench
/// tasks, at level 0).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct TrainedTask {
    pub family: String,
    pub level: u8,
}

/// What a trained proposer saw in training (a policy checkpoint records it): the
/// evaluator refuses a transfer suite whose held-out families are among `families`
/// and marks an ordinary evaluation's tasks `seen_in_training`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrainedOn {
    /// The training tasks' families (sorted, once each).
    pub families: Vec<String>,
    /// The training tasks, family and level.
    pub tasks: Vec<TrainedTask>,
    /// The family splits the training selectors named (`ROLE@SPLIT`), if any.
    pub splits: Vec<String>,
    pub suite: Option<String>,
    pub suite_sha256: Option<String>,
    /// `hrl train --allow-family-overlap`: the run's held-out tasks shared a family
    /// with its training tasks.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub family_overlap_allowed: bool,
}

/// Whether (and on what) a proposer was trained.
#[derive(Debug, Clone, PartialEq)]
pub enum Training {
    /// Not a trained proposer (`identity`, `file`, prompted models, programs).
    NotTrained,
    /// Trained, but what on is not recorded (a checkpoint written before it was); the
    /// evaluator accepts it with a warning in the run's config.
    Unrecorded,
    Recorded(TrainedOn),
}

/// A proposer (see the module doc).
pub trait Proposer: Send + Sync {
    fn identity(&self) -> ProposerIdentity;
    /// What the proposer was trained on (held-out checks; see [`Training`]).
    fn training(&self) -> Training {
        Training::NotTrained
    }
    /// Whether the evaluator must run the parent on the feedback set and pass the
    /// report (`identity` and `file` do not read it).
    fn wants_report(&self) -> bool {
        true
    }
    /// Propose revisions of `request.harness`. Bad proposer output is an invalid
    /// candidate, never an `Err`; `Err` is for failures that stop the run (the model
    /// server is gone, the program died).
    fn propose(&self, request: &ProposalRequest<'_>) -> Result<Proposal, ProposerError>;
}

/// A parsed proposer SPEC.
#[derive(Debug, Clone, PartialEq)]
pub enum ProposerSpec {
    Identity,
    /// The written revision rule, a positive control ([`rule`]).
    Rule,
    File(PathBuf),
    /// A prompted model, and the `constrain` option the spec sets (`None`: the
    /// `[proposer]` setting).
    Llm(ExecutorSpec, Option<constrain::Constrain>),
    /// The program and its arguments (split on whitespace, no shell).
    Cmd(Vec<String>),
    /// A checkpoint of the compact learned policy (opened by the trainer module).
    Policy(PathBuf),
}

impl ProposerSpec {
    /// Parse `identity`, `file:PATH`, `llm:EXECUTOR_SPEC[,constrain=off|edits|harness]`,
    /// `cmd:PROGRAM [ARGS...]` or `policy:CKPT`.
    pub fn parse(spec: &str) -> Result<ProposerSpec, ProposerError> {
        let spec = spec.trim();
        let bad = |m: &str| ProposerError::Usage(format!("spec `{spec}`: {m}"));
        if spec == "identity" {
            return Ok(ProposerSpec::Identity);
        }
        if spec == "rule" {
            return Ok(ProposerSpec::Rule);
        }
        let (kind, rest) = spec.split_once(':').ok_or_else(|| {
            bad("expected identity, rule, file:PATH, llm:EXECUTOR_SPEC, cmd:PROGRAM or policy:CKPT")
        })?;
        let rest = rest.trim();
        if rest.is_empty() {
            return Err(bad("nothing after the colon"));
        }
        match kind {
            "file" => Ok(ProposerSpec::File(PathBuf::from(rest))),
            "llm" => {
                // `constrain=` is the proposer's option; the rest is the executor's spec.
                let mut c = None;
                let mut parts = Vec::new();
                for part in rest.split(',') {
                    match part.trim().strip_prefix("constrain=") {
                        Some(v) => {
                            c = Some(constrain::Constrain::parse(v.trim()).map_err(|m| bad(&m))?)
                        }
                        None => parts.push(part),
                    }
                }
                ExecutorSpec::parse(&parts.join(","))
                    .map(|e| ProposerSpec::Llm(e, c))
                    .map_err(|e| bad(&e.to_string()))
            }
            "cmd" => Ok(ProposerSpec::Cmd(
                rest.split_whitespace().map(str::to_string).collect(),
            )),
            "policy" => Ok(ProposerSpec::Policy(PathBuf::from(rest))),
            other => Err(bad(&format!(
                "unknown proposer kind `{other}` (identity, file, llm, cmd, policy)"
            ))),
        }
    }

    /// The spec written back in a normal form.
    pub fn normalized(&self) -> String {
        match self {
            ProposerSpec::Identity => "identity".into(),
            ProposerSpec::Rule => "rule".into(),
            ProposerSpec::File(p) => format!("file:{}", p.display()),
            ProposerSpec::Llm(e, None) => format!("llm:{}", e.normalized()),
            ProposerSpec::Llm(e, Some(c)) => {
                format!("llm:{},constrain={}", e.normalized(), c.name())
            }
            ProposerSpec::Cmd(a) => format!("cmd:{}", a.join(" ")),
            ProposerSpec::Policy(p) => format!("policy:{}", p.display()),
        }
    }

    /// A short label: `identity`, `file-<stem>`, `llm-<model stem>`, `cmd-<program
    /// stem>`, `policy-<stem>`.
    pub fn label(&self) -> String {
        let stem = |p: &std::path::Path| {
            p.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "x".into())
        };
        let clean = |s: String| -> String {
            s.chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '.' || c == '-' || c == '_' {
                        c
                    } else {
                        '-'
                    }
                })
                .collect()
        };
        clean(match self {
            ProposerSpec::Identity => "identity".into(),
            ProposerSpec::Rule => "rule".into(),
            ProposerSpec::File(p) => {
                let s = stem(p).replace("{key}", "");
                let s = s.trim_matches(|c| c == '-' || c == '_' || c == '.');
                format!("file-{}", if s.is_empty() { "harnesses" } else { s })
            }
            ProposerSpec::Llm(e, c) => {
                let base = match e {
                    // A known model's name as it is (`qwen2.5-coder-0.5b`); a file's stem.
                    ExecutorSpec::Llama(l)
                        if l.model.ends_with(".gguf") || l.model.contains('/') =>
                    {
                        format!("llm-{}", stem(std::path::Path::new(&l.model)))
                    }
                    ExecutorSpec::Llama(l) => format!("llm-{}", l.model),
                    ExecutorSpec::Openai(o) => format!("llm-{}", o.model),
                };
                match c {
                    Some(c) => format!("{base}-{}", c.name()),
                    None => base,
                }
            }
            ProposerSpec::Cmd(a) => format!(
                "cmd-{}",
                a.iter()
                    .rev()
                    .find(|x| x.ends_with(".py") || !x.starts_with('-'))
                    .map(|x| stem(std::path::Path::new(x)))
                    .unwrap_or_else(|| "program".into())
            ),
            ProposerSpec::Policy(p) => format!("policy-{}", stem(p)),
        })
    }
}

/// Settings of prompted proposers (`llm`) and what the evaluator shows every
/// proposer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProposerSettings {
    /// A template file overriding the shipped one (see [`template`]).
    #[serde(default)]
    pub template: Option<PathBuf>,
    pub temperature: f32,
    pub top_p: f32,
    pub max_tokens: u32,
    /// Token budget of the execution report in a prompt.
    pub report_tokens: usize,
    /// Show the feedback items' gold answers in the report.
    pub show_gold: bool,
    /// Constrained decoding of `llm` replies ([`constrain`]).
    #[serde(default)]
    pub constrain: constrain::Constrain,
}

impl Default for ProposerSettings {
    fn default() -> Self {
        ProposerSettings {
            template: None,
            temperature: 0.7,
            top_p: 0.95,
            max_tokens: 1024,
            report_tokens: 1500,
            show_gold: false,
            constrain: constrain::Constrain::Off,
        }
    }
}

/// An executor the evaluator already opened, which an `llm` proposer with the same
/// spec shares (one model in memory, one continuous batch).
#[derive(Clone)]
pub struct SharedExecutor {
    pub spec: ExecutorSpec,
    pub executor: Arc<dyn Executor>,
    pub identity: ExecutorIdentity,
}

/// What opening a proposer needs besides its spec.
#[derive(Clone, Default)]
pub struct OpenContext {
    pub settings: ProposerSettings,
    /// The evaluator's executor, reused when an `llm` spec names the same one.
    pub shared: Option<SharedExecutor>,
    pub cache: CacheSetting,
    /// Where an external program's standard error goes (a run directory's log).
    pub stderr_log: Option<PathBuf>,
}

/// Opens `policy:CKPT` proposers. The compact learned policy lives in the trainer
/// module, which builds on this one (so this module cannot name it): the trainer
/// registers its opener once with [`register_policy_opener`], and from then on
/// [`open`] (hence `hrl eval --proposer policy:CKPT`) opens checkpoints through it.
pub type PolicyOpener = fn(&Path, &OpenContext) -> Result<Arc<dyn Proposer>, ProposerError>;

static POLICY_OPENER: std::sync::OnceLock<PolicyOpener> = std::sync::OnceLock::new();

/// Register the opener of `policy:` proposers (once per process; a second
/// registration is refused and returns false).
pub fn register_policy_opener(opener: PolicyOpener) -> bool {
    POLICY_OPENER.set(opener).is_ok()
}

/// Open a proposer.
pub fn open(spec: &ProposerSpec, ctx: &OpenContext) -> Result<Arc<dyn Proposer>, ProposerError> {
    match spec {
        ProposerSpec::Identity => Ok(Arc::new(identity::IdentityProposer)),
        ProposerSpec::Rule => Ok(Arc::new(rule::RuleProposer)),
        ProposerSpec::File(p) => Ok(Arc::new(file::FileProposer::open(p)?)),
        ProposerSpec::Llm(exec_spec, c) => {
            let shared = ctx
                .shared
                .as_ref()
                .filter(|s| s.spec.normalized() == exec_spec.normalized());
            let (executor, identity) = match shared {
                Some(s) => (s.executor.clone(), s.identity.clone()),
                None => {
                    let opened = exec_spec.open(&OpenOptions {
                        cache: ctx.cache.clone(),
                    })?;
                    (opened.executor, opened.identity)
                }
            };
            let mut settings = ctx.settings.clone();
            if let Some(c) = c {
                settings.constrain = *c;
            }
            Ok(Arc::new(llm::LlmProposer::new(
                spec.normalized(),
                executor,
                identity,
                settings,
            )?))
        }
        ProposerSpec::Cmd(argv) => Ok(Arc::new(cmd::CmdProposer::start(
            argv,
            ctx.stderr_log.as_deref(),
        )?)),
        ProposerSpec::Policy(p) if POLICY_OPENER.get().is_some() => {
            POLICY_OPENER.get().expect("checked")(p, ctx)
        }
        ProposerSpec::Policy(_) => Err(ProposerError::Unavailable {
            spec: spec.normalized(),
            message: "the compact learned policy is opened by the trainer module, which this \
                      build does not include"
                .into(),
        }),
    }
}

/// Hex SHA-256 of bytes (for identities).
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_and_label() {
        assert_eq!(
            ProposerSpec::parse("identity").unwrap(),
            ProposerSpec::Identity
        );
        let f = ProposerSpec::parse("file:suites/harnesses/oracle").unwrap();
        assert_eq!(f.label(), "file-oracle");
        let f = ProposerSpec::parse("file:suites/harnesses/oracle-{key}.toml").unwrap();
        assert_eq!(f.label(), "file-oracle");
        let l = ProposerSpec::parse("llm:llama:qwen2.5-coder-0.5b,n_parallel=4").unwrap();
        assert_eq!(l.label(), "llm-qwen2.5-coder-0.5b");
        let tuned = ProposerSpec::parse("llm:llama:/m/tuned.gguf").unwrap();
        assert_eq!(tuned.label(), "llm-tuned");
        assert!(
            l.normalized()
                .starts_with("llm:llama:qwen2.5-coder-0.5b,n_parallel=4")
        );
        let c = ProposerSpec::parse("cmd:python3 examples/proposer.py --x").unwrap();
        assert_eq!(
            c,
            ProposerSpec::Cmd(vec![
                "python3".into(),
                "examples/proposer.py".into(),
                "--x".into()
            ])
        );
        assert_eq!(
            ProposerSpec::parse("policy:ck.json").unwrap(),
            ProposerSpec::Policy("ck.json".into())
        );
        for b in ["", "llm:", "file:", "magic:x", "llm:vllm:x", "identity:x"] {
            assert!(ProposerSpec::parse(b).is_err(), "{b}");
        }
    }

    #[test]
    fn candidate_seeds_differ_and_repeat() {
        assert_eq!(candidate_seed(5, 0), candidate_seed(5, 0));
        assert_ne!(candidate_seed(5, 0), candidate_seed(5, 1));
        assert_ne!(candidate_seed(5, 0), candidate_seed(6, 0));
    }

    #[test]
    fn policy_checkpoints_open_through_the_registered_opener() {
        // The only registration in this test binary (the tests/eval binary checks the
        // unregistered error).
        fn opener(p: &Path, _: &OpenContext) -> Result<Arc<dyn Proposer>, ProposerError> {
            if p == Path::new("missing.json") {
                return Err(ProposerError::Unavailable {
                    spec: format!("policy:{}", p.display()),
                    message: "no such checkpoint".into(),
                });
            }
            Ok(Arc::new(identity::IdentityProposer))
        }
        assert!(register_policy_opener(opener));
        assert!(
            !register_policy_opener(opener),
            "a second registration is refused"
        );
        let ctx = OpenContext::default();
        let p = open(&ProposerSpec::parse("policy:ck.json").unwrap(), &ctx).unwrap();
        assert!(
            !p.wants_report(),
            "the registered opener's proposer came back"
        );
        let e = open(&ProposerSpec::parse("policy:missing.json").unwrap(), &ctx);
        assert!(e.err().unwrap().to_string().contains("no such checkpoint"));
    }
}
