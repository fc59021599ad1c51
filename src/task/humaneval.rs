//! HumanEval-format problems as code items: the problem's prompt (imports, signature,
//! docstring) as the statement, the instruct-model request of EvalPlus and the
//! Qwen2.5-Coder evaluation as the reference prompt, and grading by
//! [`crate::humaneval::Grader`] (the extracted program, then the problem's `test`, then
//! `check(entry_point)`, one sandboxed run; pass@1 of the one sample as the score).
//!
//! The program a response yields is graded as a self-contained script
//! ([`crate::humaneval::Solution::Program`]): an instruct model is asked for the whole
//! function, not a continuation of the prompt.

use std::sync::Arc;

use super::{CodeContract, CodeGrade, CodeIo, CodeProblem, TaskError};
use crate::humaneval::{Grader, Problem, Solution};

/// The instruction of the reference prompt (EvalPlus's `instruction_prefix` for chat
/// models, used by the Qwen2.5-Coder instruct evaluation); the problem's prompt follows
/// in a bare fenced block.
pub const INSTRUCTION: &str = "Please provide a self-contained Python script that solves the following problem in a markdown code block:";

/// One HumanEval-format problem with the grader that judges it.
#[derive(Debug, Clone)]
pub struct HumanEvalTask {
    pub problem: Problem,
    pub grader: Arc<Grader>,
}

impl HumanEvalTask {
    pub fn new(problem: Problem, grader: Arc<Grader>) -> HumanEvalTask {
        HumanEvalTask { problem, grader }
    }
}

/// The reference user prompt: [`INSTRUCTION`], then the problem's prompt (trimmed) in a
/// bare fenced block.
pub fn reference_prompt(problem: &Problem) -> String {
    format!("{INSTRUCTION}\n```\n{}\n```\n", problem.prompt.trim())
}

impl CodeProblem for HumanEvalTask {
    fn id(&self) -> &str {
        &self.problem.task_id
    }

    fn source(&self) -> &str {
        "humaneval"
    }

    /// One group: the whole benchmark (its score is one pass@1).
    fn group(&self) -> String {
        "humaneval".into()
    }

    fn statement(&self) -> &str {
        &self.problem.prompt
    }

    fn contract(&self) -> CodeContract {
        CodeContract {
            io: CodeIo::Function,
            starter_code: self.problem.prompt.clone(),
            entry_point: Some(self.problem.entry_point.clone()),
            text: format!(
                "Write a self-contained Python script that defines `{}` as specified, in one ```python code block.",
                self.problem.entry_point
            ),
        }
    }

    fn reference_prompt(&self) -> String {
        reference_prompt(&self.problem)
    }

    fn grade(&self, code: &str) -> Result<CodeGrade, TaskError> {
        let r = self
            .grader
            .grade(&self.problem, &Solution::Program(code.to_string()), 0)
            .map_err(|e| TaskError::Grading {
                id: format!("humaneval:{}", self.problem.task_id),
                message: e.to_string(),
            })?;
        Ok(CodeGrade {
            score: r.score(),
            passed: r.passed,
            tests_run: r.results.len(),
            n_tests: r.n_tests,
            detail: r
                .failure()
                .map(|f| format!("code {}: {}", f.code.code(), f.message))
                .unwrap_or_default(),
        })
    }

    fn record_meta(&self) -> serde_json::Value {
        let (file, line) = match &self.problem.source {
            Some((p, l)) => (Some(p.display().to_string()), Some(*l)),
            None => (None, None),
        };
        serde_json::json!({
            "task_id": self.problem.task_id,
            "entry_point": self.problem.entry_point,
            "source_file": file,
            "source_line": line,
        })
    }
}
