//! Training contexts and their dataset (`hrl contexts export`).
//!
//! One context per task of the suite: the parent is the task's seed harness, its
//! report comes from running it on the task's feedback set, and completions are
//! scored on the task's dev set. The prompt is what an `llm:` proposer is shown in
//! round 1 of `hrl eval` (the versioned template of [`crate::proposer::template`], the
//! report rendered with the suite's `report_tokens` and `show_gold`, no history).
//!
//! **Context id** (`ctx-` + 20 hex digits): the first 80 bits of
//! SHA-256(`harness-rl/context/v1`, task id, parent harness hash, the feedback item
//! ids, the dev item ids), each length-prefixed. Item ids name family, level, stream
//! seed and index (or the LiveCodeBench problem), so the id changes exactly when the
//! scoring problem changes: another task, parent, seed, set size or `--limit`. It does
//! not depend on the executor, the prompt template or the machine: the same suite
//! gives the same ids in every run, and the reward server accepts the ids of the
//! export. (The prompt text does depend on the executor, through the report.)
//!
//! Dataset columns (`contexts.jsonl`, one row per context), chosen so that the
//! trainers read it as is:
//!
//! | column | for |
//! | --- | --- |
//! | `prompt` | the chat messages `[{role: system}, {role: user}]`: TRL's conversational `prompt`, verl's `prompt`, OpenRLHF's `--input_key prompt --apply_chat_template` |
//! | `query` | the same prompt as one plain string (system, blank line, user) for trainers without a chat template |
//! | `label` | the context id (OpenRLHF `--label_key label`: sent to the remote reward as `labels`) |
//! | `context_id` | the context id (TRL passes every column to `reward_funcs` as a keyword) |
//! | `data_source`, `reward_model.ground_truth`, `extra_info` | verl's `compute_score` arguments (`ground_truth` = the context id) |
//! | `task`, `task_key`, `harness_kind`, `parent_hash`, `feedback_score`, `dev_items` | facts about the context |
//! | `response_format`, `grammar` | only under a suite's `[proposer] constrain = "edits"` or `"harness"`: the reply's JSON schema as OpenAI's `response_format` object (vLLM / SGLang guided decoding of rollouts) and its GBNF translation (llama.cpp), the same constraint an `llm:` proposer decodes under ([`crate::proposer::constrain`]) |

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::RewardError;
use crate::eval::config::EvalSettings;
use crate::eval::engine::{ArmLog, Engine};
use crate::eval::prepare::{PreparedTasks, prepare_tasks};
use crate::eval::rounds;
use crate::eval::sets::{SetName, TaskSets};
use crate::executor::Message;
use crate::executor::json_schema;
use crate::executor::openai::schema::RESPONSE_SCHEMA_NAME;
use crate::harness::edit::EditContext;
use crate::harness::execution_report::{ExecutionReport, ExecutionReportOptions};
use crate::harness::{Harness, HarnessKind};
use crate::proposer::template::Template;
use crate::proposer::{ProposalRequest, constrain, llm};
use crate::sandbox::Sandbox;

/// Version of the dataset row layout.
pub const CONTEXT_SCHEMA: u32 = 1;
/// `data_source` of every row (verl dispatches on it).
pub const DATA_SOURCE: &str = "harness-rl";
/// The dataset file of an export.
pub const CONTEXTS_FILE: &str = "contexts.jsonl";
/// The manifest of an export.
pub const MANIFEST_FILE: &str = "manifest.json";

/// The stable id of a context (see the module doc).
pub fn context_id(task: &str, parent_hash: &str, sets: &TaskSets) -> String {
    let mut h = Sha256::new();
    let mut put = |b: &[u8]| {
        h.update((b.len() as u64).to_le_bytes());
        h.update(b);
    };
    put(b"harness-rl/context/v1");
    put(task.as_bytes());
    put(parent_hash.as_bytes());
    for set in [SetName::Feedback, SetName::Dev] {
        let items = sets.get(set);
        put(set.as_str().as_bytes());
        put(&(items.len() as u64).to_le_bytes());
        for i in items.iter() {
            put(i.id().as_bytes());
        }
    }
    let d = h.finalize();
    let hex: String = d[..10].iter().map(|b| format!("{b:02x}")).collect();
    format!("ctx-{hex}")
}

/// The tasks of the settings with their sets and seed harnesses (no executor yet),
/// prepared as `hrl eval` prepares them.
pub fn prepare(settings: &EvalSettings, sandbox: &Sandbox) -> Result<PreparedTasks, RewardError> {
    Ok(prepare_tasks(settings, sandbox)?)
}

/// One training context (serialised in the export's manifest and `GET /contexts`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Context {
    pub id: String,
    /// The task's index in the suite (the engine's task index).
    pub index: usize,
    pub task: String,
    pub task_key: String,
    pub parent_hash: String,
    pub harness_kind: HarnessKind,
    pub feedback_items: Vec<String>,
    pub dev_items: Vec<String>,
    /// The parent's mean score on the feedback set.
    pub feedback_score: f64,
    /// The proposer prompt: system and user message.
    pub messages: Vec<Message>,
    /// The JSON schema replies are decoded under (`[proposer] constrain`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_schema: Option<serde_json::Value>,
}

impl Context {
    /// The prompt as one plain string (system, a blank line, user).
    pub fn query(&self) -> String {
        self.messages
            .iter()
            .map(|m| m.content.as_str())
            .collect::<Vec<_>>()
            .join("\n\n")
    }

    /// The user message (what identifies the context inside a rendered prompt).
    pub fn user_message(&self) -> &str {
        self.messages
            .iter()
            .rev()
            .find(|m| m.role == "user")
            .map(|m| m.content.as_str())
            .unwrap_or("")
    }

    /// The dataset row (see the module doc for the columns).
    pub fn row(&self) -> serde_json::Value {
        let mut row = serde_json::json!({
            "schema": CONTEXT_SCHEMA,
            "context_id": self.id,
            "prompt": self.messages,
            "query": self.query(),
            "label": self.id,
            "data_source": DATA_SOURCE,
            "reward_model": {"style": "rule", "ground_truth": self.id},
            "extra_info": {"context_id": self.id, "task": self.task, "index": self.index},
            "task": self.task,
            "task_key": self.task_key,
            "harness_kind": self.harness_kind,
            "parent_hash": self.parent_hash,
            "feedback_score": self.feedback_score,
            "dev_items": self.dev_items,
        });
        if let Some(schema) = &self.reply_schema {
            row["response_format"] = serde_json::json!({
                "type": "json_schema",
                "json_schema": {"name": RESPONSE_SCHEMA_NAME, "strict": true, "schema": schema},
            });
            row["grammar"] = serde_json::json!(
                json_schema::to_gbnf(schema).expect("generated schemas translate")
            );
        }
        row
    }
}

/// The contexts of a suite, with what scoring a completion needs.
pub struct Built {
    pub contexts: Vec<Context>,
    pub parents: Vec<Arc<Harness>>,
    /// The feedback items `add_example` edits draw on, per context.
    pub feedback: Vec<EditContext>,
}

impl Built {
    /// The context with this id.
    pub fn find(&self, id: &str) -> Option<usize> {
        self.contexts.iter().position(|c| c.id == id.trim())
    }

    /// The context whose user message occurs in `text` (a prompt rendered by a
    /// trainer's chat template); with several, the one occurring last.
    pub fn recover(&self, text: &str) -> Option<(usize, usize)> {
        self.contexts
            .iter()
            .enumerate()
            .filter_map(|(i, c)| {
                let u = c.user_message();
                (!u.is_empty())
                    .then(|| text.rfind(u).map(|at| (i, at + u.len())))
                    .flatten()
            })
            .max_by_key(|&(_, end)| end)
    }
}

/// Run every task's parent on its feedback set (one engine batch) and build the
/// contexts.
pub fn build(
    engine: &Engine<'_>,
    prepared: &PreparedTasks,
    template: &Template,
    settings: &EvalSettings,
    log: &Arc<ArmLog>,
) -> Result<Built, RewardError> {
    let reqs: Vec<(usize, SetName, Arc<Harness>)> = prepared
        .tasks
        .iter()
        .enumerate()
        .map(|(i, t)| (i, SetName::Feedback, t.seed_harness.clone()))
        .collect();
    let (results, _) = engine.score(&reqs, log)?;
    let ps = &settings.proposer_settings;
    let report_options = ExecutionReportOptions {
        show_gold: ps.show_gold,
        budget_tokens: ps.report_tokens,
    };
    let mut built = Built {
        contexts: Vec::new(),
        parents: Vec::new(),
        feedback: Vec::new(),
    };
    for (i, (t, fb)) in prepared.tasks.iter().zip(&results).enumerate() {
        let sets = &prepared.sets[i];
        let report = ExecutionReport::from_rollouts(&fb.rollouts, &report_options);
        let edit = rounds::edit_context(&sets.feedback, Some(&fb.rollouts));
        let request = ProposalRequest {
            task: &t.info,
            harness: &t.seed_harness,
            report: Some(&report),
            feedback: &edit,
            history: &[],
            candidates: 1,
            seed: 0,
            sample: 0,
            round: 1,
        };
        let messages = llm::messages(template, ps.report_tokens, ps.constrain, &request);
        let reply_schema = constrain::reply_schema(ps.constrain, &t.seed_harness, &edit);
        let parent_hash = t.seed_harness.hash();
        let ids = sets.ids();
        built.contexts.push(Context {
            id: context_id(&t.def.id, &parent_hash, sets),
            index: i,
            task: t.def.id.clone(),
            task_key: t.def.key(),
            parent_hash,
            harness_kind: t.seed_harness.kind(),
            feedback_items: ids.feedback,
            dev_items: ids.dev,
            feedback_score: fb.mean,
            messages,
            reply_schema,
        });
        built.parents.push(t.seed_harness.clone());
        built.feedback.push(edit);
    }
    Ok(built)
}

/// The prompt template of the settings (the suite's, else the shipped one).
pub fn template(settings: &EvalSettings) -> Result<Template, RewardError> {
    Ok(match &settings.proposer_settings.template {
        Some(p) => Template::load(p).map_err(crate::eval::EvalError::from)?,
        None => Template::builtin(),
    })
}

/// What `hrl contexts export` wrote.
#[derive(Debug, Clone, Serialize)]
pub struct ExportSummary {
    pub dir: PathBuf,
    pub dataset: PathBuf,
    pub contexts: usize,
}

/// Write `contexts.jsonl` and `manifest.json` (suite, executor, template, settings,
/// the contexts without their prompts) into `dir`.
pub fn write_export(
    dir: &Path,
    built: &Built,
    settings: &EvalSettings,
    template: &Template,
    executor: &crate::executor::ExecutorIdentity,
) -> Result<ExportSummary, RewardError> {
    let io = |p: &Path, e: std::io::Error| RewardError::Io(format!("{}: {e}", p.display()));
    std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    let dataset = dir.join(CONTEXTS_FILE);
    let mut text = String::new();
    for c in &built.contexts {
        text.push_str(&serde_json::to_string(&c.row()).expect("a JSON value"));
        text.push('\n');
    }
    write_atomic(&dataset, text.as_bytes()).map_err(|e| io(&dataset, e))?;
    let manifest = serde_json::json!({
        "schema": CONTEXT_SCHEMA,
        "crate_version": env!("CARGO_PKG_VERSION"),
        "suite": settings.suite,
        "limit": settings.limit,
        "executor": executor,
        "template": {"version": template.version, "origin": template.origin, "sha256": template.sha256},
        "proposer_settings": settings.proposer_settings,
        "columns": {
            "prompt": "chat messages (TRL conversational prompt, verl prompt, OpenRLHF --input_key prompt --apply_chat_template)",
            "query": "the prompt as one string (system, blank line, user)",
            "label": "the context id (OpenRLHF --label_key label)",
            "context_id": "the context id (TRL reward_funcs keyword)",
            "reward_model.ground_truth": "the context id (verl compute_score ground_truth)",
        },
        "contexts": built.contexts.iter().map(|c| serde_json::json!({
            "id": c.id, "task": c.task, "parent_hash": c.parent_hash,
            "harness_kind": c.harness_kind, "feedback_score": c.feedback_score,
            "feedback_items": c.feedback_items, "dev_items": c.dev_items,
        })).collect::<Vec<_>>(),
    });
    let path = dir.join(MANIFEST_FILE);
    let body = serde_json::to_string_pretty(&manifest).expect("a JSON value");
    write_atomic(&path, body.as_bytes()).map_err(|e| io(&path, e))?;
    Ok(ExportSummary {
        dir: dir.to_path_buf(),
        dataset,
        contexts: built.contexts.len(),
    })
}

/// Write through a temporary file and a rename, so a reader never sees half a file.
fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::sets;
    use crate::eval::suite::{SetSizes, TaskDef, TaskSource};
    use crate::task::spec::GradingSetup;

    fn sets(seed: u64, dev: usize) -> TaskSets {
        let def = TaskDef {
            id: "gcd/L1".into(),
            source: TaskSource::Family {
                family: "gcd".into(),
                level: 1,
                seed,
            },
            sets: SetSizes {
                feedback: 2,
                dev,
                test: 1,
                validation: 0,
            },
            seed_harness: "x.toml".into(),
        };
        sets::build(&def, def.sets, &GradingSetup::default()).unwrap()
    }

    #[test]
    fn ids_are_stable_and_follow_the_scoring_problem() {
        let a = context_id("gcd/L1", "h1", &sets(0, 3));
        assert_eq!(a, context_id("gcd/L1", "h1", &sets(0, 3)));
        assert!(a.starts_with("ctx-") && a.len() == 24, "{a}");
        // Another parent, task, seed or dev size: another id.
        for other in [
            context_id("gcd/L1", "h2", &sets(0, 3)),
            context_id("gcd/L2", "h1", &sets(0, 3)),
            context_id("gcd/L1", "h1", &sets(1, 3)),
            context_id("gcd/L1", "h1", &sets(0, 4)),
        ] {
            assert_ne!(a, other);
        }
    }
}
