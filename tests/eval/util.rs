//! Shared helpers of the evaluator tests: suites written to a temporary directory,
//! settings, the sandbox, a backend around the simulated executor, a scripted
//! proposer, reading run directories.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use harness_rl::eval::config::{CacheChoice, EngineOverrides, EvalSettings, Overrides};
use harness_rl::eval::suite::Suite;
use harness_rl::eval::{self, ArmOutcome, Backend};
use harness_rl::harness::{Harness, TextFormat};
use harness_rl::proposer::{
    Candidate, Proposal, ProposalRequest, Proposer, ProposerError, ProposerIdentity, Revision,
    RevisionForm, TokenUse,
};
use harness_rl::records::{self, CandidateRecord, ProposalRecord, RoundRecord};

use super::sim::{self, SimModel, SimulatedExecutor};

pub use super::common::{heavy, repo, sandbox};

/// A suite text: `body` is appended to a header that names the seed harness (an
/// absolute path), the executor `llama:sim-model` and `proposers`.
pub fn suite_text(seed_harness: &Path, proposers: &[&str], body: &str) -> String {
    let list: Vec<String> = proposers.iter().map(|p| format!("{p:?}")).collect();
    format!(
        "name = \"t\"\nseed_harness = {:?}\nexecutor = \"llama:sim-model\"\nproposers = [{}]\n{body}",
        seed_harness.display().to_string(),
        list.join(", ")
    )
}

/// Settings from a suite text, writing into `out`.
pub fn settings(text: &str, dir: &Path, out: &Path) -> EvalSettings {
    let path = dir.join("suite.toml");
    std::fs::write(&path, text).unwrap();
    let suite = Suite::load(&path).unwrap_or_else(|e| panic!("{e}\n{text}"));
    EvalSettings::resolve(
        &suite,
        &Overrides {
            out: Some(out.to_path_buf()),
            engine: EngineOverrides {
                cache: Some(CacheChoice::Off),
                ..EngineOverrides::default()
            },
            ..Overrides::default()
        },
    )
    .unwrap()
}

pub fn zero_shot() -> PathBuf {
    repo().join("suites/harnesses/zero-shot.toml")
}

/// A backend around a simulated executor for `settings`.
pub fn backend(exec: &Arc<SimulatedExecutor>) -> Backend {
    Backend {
        executor: exec.clone(),
        identity: sim::identity(),
        cache: None,
        parallelism: 8,
    }
}

pub fn sim_exec(settings: &EvalSettings) -> Arc<SimulatedExecutor> {
    Arc::new(SimulatedExecutor::new(SimModel::for_settings(settings)))
}

/// Run with the simulated executor and the proposers the settings name.
pub fn run_sim(
    settings: &EvalSettings,
    exec: &Arc<SimulatedExecutor>,
    resume: bool,
) -> Result<Vec<ArmOutcome>, eval::EvalError> {
    let b = backend(exec);
    let proposers = eval::open_proposers(settings, &b)?;
    eval::run_with(settings, &b, sandbox(), &proposers, resume, &|_| {})
}

/// Run with the simulated executor and given proposers.
pub fn run_with(
    settings: &EvalSettings,
    exec: &Arc<SimulatedExecutor>,
    proposers: Vec<Arc<dyn Proposer>>,
    resume: bool,
) -> Result<Vec<ArmOutcome>, eval::EvalError> {
    eval::run_with(
        settings,
        &backend(exec),
        sandbox(),
        &proposers,
        resume,
        &|_| {},
    )
}

pub fn parse_toml(text: &str) -> Harness {
    Harness::parse_declarative(text, TextFormat::Toml, "test").unwrap()
}

/// A proposer that returns, in round r, the harness texts `script[r - 1]` (the
/// literal `PARENT` is the parent itself; `INVALID` an invalid candidate); it fails
/// once `fail_at` calls were made (to interrupt a run).
pub struct ScriptedProposer {
    pub script: Vec<Vec<&'static str>>,
    pub calls: AtomicUsize,
    pub fail_at: Option<usize>,
}

impl ScriptedProposer {
    pub fn new(script: Vec<Vec<&'static str>>) -> ScriptedProposer {
        ScriptedProposer {
            script,
            calls: AtomicUsize::new(0),
            fail_at: None,
        }
    }
}

impl Proposer for ScriptedProposer {
    fn identity(&self) -> ProposerIdentity {
        ProposerIdentity {
            spec: "cmd:scripted".into(),
            kind: "scripted".into(),
            label: "cmd-scripted".into(),
            details: serde_json::json!({}),
        }
    }

    fn propose(&self, request: &ProposalRequest<'_>) -> Result<Proposal, ProposerError> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst);
        if self.fail_at.is_some_and(|f| n >= f) {
            return Err(ProposerError::Program("scripted failure".into()));
        }
        let texts = self
            .script
            .get(request.round as usize - 1)
            .cloned()
            .unwrap_or_default();
        let candidates = texts
            .into_iter()
            .map(|t| match t {
                "PARENT" => Candidate {
                    revision: Revision::Harness {
                        harness: request.harness.clone(),
                        form: RevisionForm::Toml,
                    },
                    raw: None,
                    tokens: TokenUse {
                        prompt: 10,
                        completion: 5,
                    },
                    cached: false,
                },
                "INVALID" => Candidate::invalid("scripted invalid", Some("raw garbage".into())),
                t => Candidate {
                    revision: Revision::Harness {
                        harness: parse_toml(t),
                        form: RevisionForm::Toml,
                    },
                    raw: Some(t.to_string()),
                    tokens: TokenUse {
                        prompt: 10,
                        completion: 5,
                    },
                    cached: false,
                },
            })
            .collect();
        Ok(Proposal {
            candidates,
            prompt: None,
        })
    }
}

pub fn rounds(dir: &Path) -> Vec<RoundRecord> {
    records::read(&dir.join("rounds.jsonl")).unwrap()
}

pub fn candidates(dir: &Path) -> Vec<CandidateRecord> {
    records::read(&dir.join("candidates.jsonl")).unwrap()
}

pub fn proposals(dir: &Path) -> Vec<ProposalRecord> {
    records::read(&dir.join("proposals.jsonl")).unwrap()
}

pub fn rollout_keys(dir: &Path) -> Vec<String> {
    let rs: Vec<harness_rl::harness::rollout::Rollout> =
        records::read(&dir.join("rollouts.jsonl")).unwrap();
    rs.iter().map(|r| r.key()).collect()
}

/// The round record of (task, sample, round).
pub fn round<'a>(rs: &'a [RoundRecord], task: &str, sample: u32, round: u32) -> &'a RoundRecord {
    rs.iter()
        .find(|r| r.task == task && r.sample == sample && r.round == round)
        .unwrap_or_else(|| panic!("no round {task} {sample} {round}"))
}
