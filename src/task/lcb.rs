//! LiveCodeBench problems as code items: the statement, LiveCodeBench's own format
//! section as the contract, and grading by [`crate::lcb::Grader`] (public then private
//! tests in the sandbox, pass@1 of the one sample as the score).

use std::sync::Arc;

use super::{CodeContract, CodeGrade, CodeIo, CodeProblem, TaskError};
use crate::lcb::{Grader, Problem, prompt};

/// One LiveCodeBench problem with the grader that judges it.
#[derive(Debug, Clone)]
pub struct LcbTask {
    pub problem: Problem,
    pub grader: Arc<Grader>,
}

impl LcbTask {
    pub fn new(problem: Problem, grader: Arc<Grader>) -> LcbTask {
        LcbTask { problem, grader }
    }
}

/// LiveCodeBench's `### Format:` section (with the starter code when there is one)
/// and its `### Answer:` line: the reference prompt without the question.
fn contract_text(problem: &Problem) -> String {
    let full = prompt::user_prompt(problem);
    let head = format!("### Question:\n{}\n\n", problem.question_content);
    full.strip_prefix(&head)
        .map(|s| s.trim_end().to_string())
        .unwrap_or_else(|| full.trim_end().to_string())
}

fn to_grade(r: &crate::lcb::SampleResult) -> CodeGrade {
    CodeGrade {
        score: if r.passed { 1.0 } else { 0.0 },
        passed: r.passed,
        tests_run: r.results.len(),
        n_tests: r.n_tests,
        detail: r
            .failure()
            .map(|f| {
                let mut d = format!("test {} code {}: {}", f.test, f.code.code(), f.message);
                if let (Some(out), Some(exp)) = (&f.output, &f.expected) {
                    d.push_str(&format!(" (output {out:?}, expected {exp:?})"));
                }
                d
            })
            .unwrap_or_default(),
    }
}

impl CodeProblem for LcbTask {
    fn id(&self) -> &str {
        &self.problem.question_id
    }

    fn source(&self) -> &str {
        "lcb"
    }

    fn group(&self) -> String {
        format!("{}/{}", self.problem.platform, self.problem.difficulty)
    }

    fn statement(&self) -> &str {
        &self.problem.question_content
    }

    fn contract(&self) -> CodeContract {
        CodeContract {
            io: if self.problem.is_functional() {
                CodeIo::Function
            } else {
                CodeIo::Stdin
            },
            starter_code: self.problem.starter_code.clone(),
            entry_point: self.problem.func_name().map(str::to_string),
            text: contract_text(&self.problem),
        }
    }

    fn reference_prompt(&self) -> String {
        prompt::user_prompt(&self.problem)
    }

    fn grade(&self, code: &str) -> Result<CodeGrade, TaskError> {
        let r = self.grader.grade(&self.problem, code, 0)?;
        Ok(to_grade(&r))
    }

    fn grade_public(&self, code: &str) -> Option<Result<CodeGrade, TaskError>> {
        if self.problem.public_test_cases.is_empty() {
            return None;
        }
        let mut public = self.problem.clone();
        public.private_test_cases.clear();
        public.private_test_count = 0;
        Some(
            self.grader
                .grade(&public, code, 0)
                .map(|r| to_grade(&r))
                .map_err(TaskError::from),
        )
    }

    fn record_meta(&self) -> serde_json::Value {
        serde_json::json!({
            "platform": self.problem.platform,
            "difficulty": self.problem.difficulty,
            "contest_date": self.problem.contest_date.to_string(),
            "source_file": self.problem.source.file,
            "source_line": self.problem.source.line,
        })
    }
}
