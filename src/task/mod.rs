//! Task items: what a harness is run on, behind one seam.
//!
//! An [`Item`] is either an **answer** item (a family [`Instance`]: the response carries
//! a final answer that the family's verifier checks) or a **code** item (a
//! [`CodeProblem`]: the response carries a program that a grader runs against tests).
//! The harness runtime sees only this module's API: the question text and its parts,
//! the answer format or the code contract, the group an item is reported under, and
//! scoring. Sources:
//!
//! - families (`crate::families`): [`Item::answer`];
//! - LiveCodeBench (`crate::lcb`): [`lcb::LcbTask`], a [`CodeProblem`] graded by the
//!   LiveCodeBench grader;
//! - HumanEval-format files (`crate::humaneval`): [`humaneval::HumanEvalTask`], graded
//!   by the HumanEval grader;
//! - any other code benchmark (MBPP) plugs in by implementing [`CodeProblem`] (a
//!   statement, a [`CodeContract`], `grade(code)`).
//!
//! [`spec`] parses the task SPEC grammar of `hrl run --tasks`.
//!
//! Scoring never trusts the harness: answers are verified by the family's own strict
//! verifier, programs by the source's grader in the sandbox.

pub mod humaneval;
pub mod lcb;
pub mod shape;
pub mod spec;

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::error::Classify as _;
use crate::families::{self, Family, Instance};

pub use shape::AnswerShape;
pub use spec::{TaskSet, TaskSpec};

/// Errors of task loading and grading.
#[derive(Debug, thiserror::Error)]
pub enum TaskError {
    /// A task SPEC that does not parse or names something that does not exist.
    #[error("task spec `{spec}`: {message}")]
    BadSpec { spec: String, message: String },
    /// A file of instances with a bad line.
    #[error("{path}:{line}: {message}")]
    BadInstance {
        path: String,
        line: usize,
        message: String,
    },
    #[error(transparent)]
    Family(#[from] crate::families::FamilyError),
    #[error(transparent)]
    Lcb(#[from] crate::lcb::LcbError),
    #[error(transparent)]
    HumanEval(#[from] crate::humaneval::HumanEvalError),
    /// A grader failed to produce a verdict (not a failing solution).
    #[error("grading {id}: {message}")]
    Grading { id: String, message: String },
}

impl crate::error::Classify for TaskError {
    fn kind(&self) -> crate::error::ErrorKind {
        use crate::error::ErrorKind::{Runtime, Usage};
        match self {
            TaskError::BadSpec { .. } | TaskError::BadInstance { .. } => Usage,
            TaskError::Family(e) => e.kind(),
            TaskError::Lcb(e) => e.kind(),
            TaskError::HumanEval(e) => e.kind(),
            TaskError::Grading { .. } => Runtime,
        }
    }
}

/// Whether an item is judged by its final answer or by running its program.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ItemKind {
    Answer,
    Code,
}

/// How a code problem's program talks to its tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CodeIo {
    /// A script that reads standard input and writes standard output.
    Stdin,
    /// A function (or `class Solution` method) called with arguments.
    Function,
}

/// What a code solution must look like.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CodeContract {
    pub io: CodeIo,
    /// Code the solution must start from ("" when none).
    pub starter_code: String,
    /// The function the tests call, when `io` is `function`.
    pub entry_point: Option<String>,
    /// The source's own wording of the contract, as its reference prompt states it
    /// (for LiveCodeBench: the `### Format:` section with the starter code).
    pub text: String,
}

/// A grader's verdict on one program.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CodeGrade {
    /// 1.0 when every test passes, else 0.0 (pass@1 of a single sample).
    pub score: f64,
    pub passed: bool,
    /// Tests run (up to and including the first failure) and tests in total.
    pub tests_run: usize,
    pub n_tests: usize,
    /// The first failure, as the grader words it ("" when every test passes).
    pub detail: String,
}

/// A code benchmark problem: a statement, a contract, and a grader for programs.
/// Implemented by [`lcb::LcbTask`] and [`humaneval::HumanEvalTask`].
pub trait CodeProblem: Send + Sync + fmt::Debug {
    /// Unique id within its source (e.g. LiveCodeBench's `question_id`).
    fn id(&self) -> &str;
    /// The source's short name (`lcb`, `humaneval`).
    fn source(&self) -> &str;
    /// The reporting group (LiveCodeBench: `platform/difficulty`).
    fn group(&self) -> String;
    /// The problem statement, without any format instruction.
    fn statement(&self) -> &str;
    fn contract(&self) -> CodeContract;
    /// The source's reference user prompt (statement + contract), as its benchmark
    /// presents the problem.
    fn reference_prompt(&self) -> String;
    /// Run `code` against the problem's tests (in the sandbox). An `Err` means no
    /// verdict could be reached (the grader failed), never that the code is wrong.
    fn grade(&self, code: &str) -> Result<CodeGrade, TaskError>;
    /// Grade `code` against the tests shown in the statement only (public tests), for
    /// harnesses that test before answering. `None` when the source has none.
    fn grade_public(&self, _code: &str) -> Option<Result<CodeGrade, TaskError>> {
        None
    }
    /// Facts recorded with every rollout (release date, difficulty, ...).
    fn record_meta(&self) -> serde_json::Value {
        serde_json::Value::Null
    }
}

/// One thing a harness is run on.
#[derive(Clone)]
pub enum Item {
    /// A family instance, judged by its final answer.
    Answer {
        instance: Arc<Instance>,
        family: &'static dyn Family,
    },
    /// A code problem, judged by running its tests.
    Code(Arc<dyn CodeProblem>),
}

impl fmt::Debug for Item {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Item::Answer { instance, .. } => write!(f, "Item::Answer({})", instance.id),
            Item::Code(p) => write!(f, "Item::Code({}:{})", p.source(), p.id()),
        }
    }
}

/// How a final answer is taken from a text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AnswerRule {
    /// A model response: the content of the last `<answer>...</answer>` pair; none,
    /// no answer (the family's strict rule).
    Tagged,
    /// A program's output or a program harness's return value: the content of the
    /// last `<answer>` pair when there is one, otherwise the whole text, trimmed.
    Bare,
}

/// The verdict on a final answer of an answer item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnswerScore {
    pub score: f64,
    /// The extracted answer (`None`: nothing to extract).
    pub extracted: Option<String>,
    /// Whether the extracted answer has the shape of the gold answer (see
    /// [`shape`]); `false` when nothing was extracted.
    pub shape_ok: bool,
}

impl Item {
    /// An answer item for a generated instance; fails for an unknown family.
    pub fn answer(instance: Instance) -> Result<Item, TaskError> {
        let family = families::get(&instance.family)?;
        Ok(Item::Answer {
            instance: Arc::new(instance),
            family,
        })
    }

    /// The item's id (family instance id, or `source:question_id`).
    pub fn id(&self) -> String {
        match self {
            Item::Answer { instance, .. } => instance.id.clone(),
            Item::Code(p) => format!("{}:{}", p.source(), p.id()),
        }
    }

    pub fn kind(&self) -> ItemKind {
        match self {
            Item::Answer { .. } => ItemKind::Answer,
            Item::Code(_) => ItemKind::Code,
        }
    }

    /// `families`, or the code source's name.
    pub fn source(&self) -> String {
        match self {
            Item::Answer { .. } => "families".into(),
            Item::Code(p) => p.source().to_string(),
        }
    }

    /// The group an item is reported under: the family name, or the code source's
    /// group (LiveCodeBench: `platform/difficulty`).
    pub fn group(&self) -> String {
        match self {
            Item::Answer { instance, .. } => instance.family.clone(),
            Item::Code(p) => p.group(),
        }
    }

    /// The family level (answer items).
    pub fn level(&self) -> Option<u8> {
        match self {
            Item::Answer { instance, .. } => Some(instance.level),
            Item::Code(_) => None,
        }
    }

    /// The question as its source presents it: a family question with its own answer
    /// instruction, or a code source's reference prompt.
    pub fn question(&self) -> String {
        match self {
            Item::Answer { instance, .. } => instance.question.clone(),
            Item::Code(p) => p.reference_prompt(),
        }
    }

    /// The question without any answer instruction or format: a family question's
    /// body, a code problem's statement.
    pub fn body(&self) -> &str {
        match self {
            Item::Answer { instance, .. } => instance.question_body(),
            Item::Code(p) => p.statement(),
        }
    }

    /// The family's own answer instruction ("" for code items).
    pub fn answer_instruction(&self) -> &str {
        match self {
            Item::Answer { instance, .. } => instance.answer_instruction(),
            Item::Code(_) => "",
        }
    }

    /// The answer format phrase, e.g. `as a single integer` ("" for code items).
    pub fn answer_format(&self) -> &str {
        match self {
            Item::Answer { instance, .. } => instance.answer_format(),
            Item::Code(_) => "",
        }
    }

    /// The code contract (code items).
    pub fn contract(&self) -> Option<CodeContract> {
        match self {
            Item::Answer { .. } => None,
            Item::Code(p) => Some(p.contract()),
        }
    }

    /// The gold answer (answer items).
    pub fn gold(&self) -> Option<&str> {
        match self {
            Item::Answer { instance, .. } => Some(&instance.answer),
            Item::Code(_) => None,
        }
    }

    /// The family instance behind an answer item.
    pub fn instance(&self) -> Option<&Instance> {
        match self {
            Item::Answer { instance, .. } => Some(instance),
            Item::Code(_) => None,
        }
    }

    /// The code problem behind a code item.
    pub fn code_problem(&self) -> Option<&Arc<dyn CodeProblem>> {
        match self {
            Item::Answer { .. } => None,
            Item::Code(p) => Some(p),
        }
    }

    /// Facts recorded with every rollout of this item.
    pub fn record_meta(&self) -> serde_json::Value {
        match self {
            Item::Answer { instance, .. } => serde_json::json!({
                "family": instance.family,
                "level": instance.level,
                "seed": instance.seed,
                "index": instance.index,
            }),
            Item::Code(p) => p.record_meta(),
        }
    }

    /// Score a final text of an answer item under `rule`. Code items score 0 here
    /// (they are graded by [`Item::grade_code`]).
    pub fn score_answer(&self, text: &str, rule: AnswerRule) -> AnswerScore {
        let Item::Answer { instance, family } = self else {
            return AnswerScore {
                score: 0.0,
                extracted: None,
                shape_ok: false,
            };
        };
        let extracted = match rule {
            AnswerRule::Tagged => families::extract_answer(text),
            AnswerRule::Bare => families::extract_with(text, families::ScoreMode::Bare),
        };
        let extracted = extracted.filter(|a| !a.is_empty());
        let score = match &extracted {
            None => 0.0,
            Some(a) => {
                let s = family.verify(instance, a);
                if s.is_nan() { 0.0 } else { s.clamp(0.0, 1.0) }
            }
        };
        let shape_ok = extracted
            .as_deref()
            .is_some_and(|a| shape::compatible(&instance.answer, a));
        AnswerScore {
            score,
            extracted,
            shape_ok,
        }
    }

    /// Grade a program of a code item (`Err` for answer items or a grader failure).
    pub fn grade_code(&self, code: &str) -> Result<CodeGrade, TaskError> {
        match self {
            Item::Code(p) => p.grade(code),
            Item::Answer { instance, .. } => Err(TaskError::Grading {
                id: instance.id.clone(),
                message: "an answer item has no program grader".into(),
            }),
        }
    }
}

impl TaskError {
    /// Whether this is the caller's input (exit 2) rather than a runtime failure.
    pub fn is_usage(&self) -> bool {
        self.kind() == crate::error::ErrorKind::Usage
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::families::{Level, generate};

    #[test]
    fn answer_items_expose_the_question_parts_and_score_strictly() {
        let fam = families::get("gcd").unwrap();
        let inst = generate(fam, Level::new(1).unwrap(), 3, 0);
        let gold = inst.answer.clone();
        let item = Item::answer(inst.clone()).unwrap();
        assert_eq!(item.id(), inst.id);
        assert_eq!(item.group(), "gcd");
        assert_eq!(item.body(), inst.question_body());
        assert_eq!(item.answer_format(), inst.answer_format());
        assert!(item.question().ends_with(item.answer_instruction()));
        let tagged = format!("so <answer>{gold}</answer>");
        assert_eq!(item.score_answer(&tagged, AnswerRule::Tagged).score, 1.0);
        // A bare answer is not an answer under the strict rule...
        let s = item.score_answer(&gold, AnswerRule::Tagged);
        assert_eq!((s.score, s.extracted), (0.0, None));
        // ...but is the answer of a program's output.
        let s = item.score_answer(&format!("{gold}\n"), AnswerRule::Bare);
        assert_eq!(s.score, 1.0);
        assert!(s.shape_ok);
        let s = item.score_answer("The gcd is large", AnswerRule::Bare);
        assert_eq!(s.score, 0.0);
        assert!(!s.shape_ok);
        assert!(
            Item::answer(Instance {
                family: "nope".into(),
                ..inst
            })
            .is_err()
        );
    }
}
