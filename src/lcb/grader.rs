//! Grades Python solutions with LiveCodeBench's semantics, every program inside the
//! [`crate::sandbox`].
//!
//! One sandboxed Python process per solution runs a driver shipped in the crate, which
//! executes the solution against public-then-private tests: stdin tests compare the
//! stripped output line by line (exact, or as whitespace-split tokens under exact
//! decimal equality; an optional float tolerance is off by default); functional tests
//! call `Solution().<func_name>(*args)` with one JSON value per input line and compare
//! with `==` after turning a top-level tuple into a list. Each test has its own limit
//! (default 6 s); grading stops at the first failure. The driver reports one JSON line
//! per test; anything else on its report channel is a [`LcbError::Grading`] error.
//!
//! Two drivers, chosen by [`Semantics`]: `driver.py` (the default, [`Semantics::Judge`])
//! runs each test in a fresh process with real file descriptors, as an online judge;
//! `reference_driver.py` ([`Semantics::Reference`]) reproduces the verdicts of
//! LiveCodeBench's own runner, quirks included (docs/ARCHITECTURE.md lists them).
//!
//! Result codes (as LiveCodeBench): 1 pass, -1 global timeout, -2 wrong answer,
//! -3 time limit exceeded, -4 runtime or compile error. When the whole run passes its
//! global limit `(timeout + 1) * tests + 5` seconds, every test is -1 (judge semantics;
//! the reference runner records a single -2 instead).

use crate::stats::pass_at_k;
use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{LcbError, Problem};
pub use crate::grading::{SampleResult, TestCode, TestResult};
use crate::sandbox::{EndReason, Limits, RunRequest, Sandbox, SandboxConfig};

/// The Python driver run inside the sandbox (judge semantics).
pub const DRIVER: &str = include_str!("driver.py");
/// The Python driver reproducing LiveCodeBench's reference runner.
pub const REFERENCE_DRIVER: &str = include_str!("reference_driver.py");

/// Standard output one test may write (judge semantics); more is a runtime error.
/// Standard error is drained and not counted.
pub const TEST_OUTPUT_CAP: u64 = 64 << 20;

/// Whose verdicts the grader reproduces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Semantics {
    /// Like an online judge: a fresh process per test, the input on a real fd 0, the
    /// output read from a real fd 1, a hard per-test kill; LiveCodeBench's comparison.
    #[default]
    Judge,
    /// LiveCodeBench's reference runner (`testing_util.run_test`), quirks included, for
    /// matching published numbers exactly.
    Reference,
}

impl Semantics {
    pub fn as_str(self) -> &'static str {
        match self {
            Semantics::Judge => "judge",
            Semantics::Reference => "reference",
        }
    }
}

impl std::fmt::Display for Semantics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Semantics {
    type Err = LcbError;
    fn from_str(s: &str) -> Result<Self, LcbError> {
        match s {
            "judge" => Ok(Semantics::Judge),
            "reference" => Ok(Semantics::Reference),
            _ => Err(LcbError::BadSolutions(format!(
                "unknown grading semantics `{s}` (expected judge or reference)"
            ))),
        }
    }
}

/// How to grade.
#[derive(Debug, Clone, PartialEq)]
pub struct GradeConfig {
    /// Per-test wall-clock limit (LiveCodeBench: 6 s).
    pub timeout: Duration,
    /// Global limit for one solution; default `(timeout + 1) * tests + 5` s.
    pub global_timeout: Option<Duration>,
    /// Accept numbers within this relative (or, below 1, absolute) tolerance.
    /// `None` (the default) is LiveCodeBench's exact comparison.
    pub float_tolerance: Option<f64>,
    /// Address-space limit of the sandboxed run, in MiB.
    pub memory_mb: u64,
    /// Solutions graded in parallel by [`Grader::grade_many`].
    pub jobs: usize,
    /// What the per-test limit measures: wall time (LiveCodeBench, the default) or
    /// the test process's CPU time (robust on a busy machine; wall backstop 4x + 1 s).
    /// Judge semantics only: the reference runner's alarm is wall time.
    pub clock: TimeoutClock,
    /// Judge-like (default) or LiveCodeBench's reference runner, quirks included.
    pub semantics: Semantics,
}

/// The clock of the per-test limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TimeoutClock {
    #[default]
    Wall,
    Cpu,
}

impl Default for GradeConfig {
    fn default() -> Self {
        GradeConfig {
            timeout: Duration::from_secs(6),
            global_timeout: None,
            float_tolerance: None,
            memory_mb: 4096,
            jobs: std::thread::available_parallelism().map_or(1, |n| n.get()),
            clock: TimeoutClock::Wall,
            semantics: Semantics::Judge,
        }
    }
}

#[derive(Serialize)]
struct Job<'a> {
    code: &'a str,
    mode: &'static str,
    func_name: Option<&'a str>,
    tests: Vec<JobTest<'a>>,
    timeout: f64,
    nonce: &'a str,
    float_tol: Option<f64>,
    clock: TimeoutClock,
    output_cap: u64,
    global_timeout: Option<f64>,
}

#[derive(Serialize)]
struct JobTest<'a> {
    input: &'a str,
    output: &'a str,
}

#[derive(Deserialize)]
struct ReportLine {
    nonce: String,
    test: Option<usize>,
    code: Option<i64>,
    message: Option<String>,
    time_ms: Option<u64>,
    output: Option<String>,
    expected: Option<String>,
    done: Option<bool>,
}

/// Runs solutions against problems in a sandbox.
#[derive(Debug, Clone)]
pub struct Grader {
    sandbox: Sandbox,
    config: GradeConfig,
}

impl Grader {
    /// Build a grader; fails when the sandbox cannot isolate and the caller did not
    /// opt out (`unsafe_no_isolation`).
    pub fn new(sandbox: SandboxConfig, config: GradeConfig) -> Result<Grader, LcbError> {
        if config.timeout.is_zero() {
            return Err(LcbError::BadSolutions(
                "the per-test timeout must be positive".into(),
            ));
        }
        if let Some(t) = config.float_tolerance
            && !(t.is_finite() && t >= 0.0)
        {
            return Err(LcbError::BadSolutions(format!(
                "invalid float tolerance {t}"
            )));
        }
        if config.semantics == Semantics::Reference {
            if config.clock == TimeoutClock::Cpu {
                return Err(LcbError::BadSolutions(
                    "the reference runner's per-test limit is wall time: --timeout-clock cpu \
                     needs --semantics judge"
                        .into(),
                ));
            }
            if config.float_tolerance.is_some() {
                return Err(LcbError::BadSolutions(
                    "the reference runner compares exactly: --float-tol needs --semantics judge"
                        .into(),
                ));
            }
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

    /// Grade one solution of `problem`.
    pub fn grade(
        &self,
        problem: &Problem,
        code: &str,
        sample: usize,
    ) -> Result<SampleResult, LcbError> {
        let tests: Vec<_> = problem.all_tests().collect();
        let n = tests.len();
        let functional = problem.is_functional();
        if problem.private_test_cases.len() != problem.private_test_count {
            return Err(LcbError::Grading {
                question_id: problem.question_id.clone(),
                message: "private tests were not kept in memory (load with keep_private_tests)"
                    .into(),
            });
        }
        let nonce = crate::grading::nonce();
        let reference = self.config.semantics == Semantics::Reference;
        let job = Job {
            code,
            mode: if functional { "functional" } else { "stdin" },
            func_name: problem.func_name(),
            tests: tests
                .iter()
                .map(|t| JobTest {
                    input: &t.input,
                    output: &t.output,
                })
                .collect(),
            timeout: self.config.timeout.as_secs_f64(),
            nonce: &nonce,
            float_tol: self.config.float_tolerance,
            clock: self.config.clock,
            output_cap: TEST_OUTPUT_CAP,
            global_timeout: self.config.global_timeout.map(|d| d.as_secs_f64()),
        };
        let job_bytes = serde_json::to_vec(&job).expect("serializable");
        let global = self.config.global_timeout.unwrap_or_else(|| {
            let per_test = match self.config.clock {
                TimeoutClock::Wall => self.config.timeout.as_secs_f64() + 1.0,
                TimeoutClock::Cpu => 4.0 * self.config.timeout.as_secs_f64() + 2.0,
            };
            Duration::from_secs_f64(per_test * n as f64 + 5.0)
        });
        // Reference semantics: the driver enforces the global limit itself (and reports
        // what LiveCodeBench's runner records); the sandbox's clock is only a backstop.
        let wall = if reference {
            global + Duration::from_secs(10)
        } else {
            global
        };
        let req = RunRequest {
            program: if reference { REFERENCE_DRIVER } else { DRIVER }.to_string(),
            stdin: Vec::new(),
            files: vec![("job.json".to_string(), job_bytes)],
            limits: Limits {
                wall,
                cpu_seconds: wall.as_secs() + 1,
                memory_mb: self.config.memory_mb,
                file_size_bytes: TEST_OUTPUT_CAP,
                open_files: 64,
                processes: 32,
                output_bytes: 16 << 20,
            },
        };
        let run = self.sandbox.run(&req)?;
        let err = |message: String| LcbError::Grading {
            question_id: problem.question_id.clone(),
            message,
        };
        let lost = |why: String| SampleResult {
            question_id: problem.question_id.clone(),
            sample,
            passed: false,
            n_tests: n,
            results: vec![TestResult {
                test: 0,
                code: TestCode::WrongAnswer,
                message: format!(
                    "Test runner error: {why}; LiveCodeBench's runner records this as a single -2"
                ),
                time_ms: 0,
                output: None,
                expected: None,
            }],
        };
        if run.end == EndReason::Timeout {
            if reference {
                return Ok(lost(format!("the run passed {:.1} s", wall.as_secs_f64())));
            }
            // LiveCodeBench: when the whole run hangs, every test is a global timeout.
            let results = (0..n)
                .map(|i| TestResult {
                    test: i,
                    code: TestCode::GlobalTimeout,
                    message: format!("global timeout after {:.1} s", global.as_secs_f64()),
                    time_ms: 0,
                    output: None,
                    expected: None,
                })
                .collect();
            return Ok(SampleResult {
                question_id: problem.question_id.clone(),
                sample,
                passed: false,
                n_tests: n,
                results,
            });
        }
        let (mut results, done) = parse_report(&run.stdout, &nonce, n).map_err(&err)?;
        if !done && reference && results.is_empty() {
            // The reference driver reports only once its test process has finished: a
            // driver that ended early lost the whole result, as the reference would.
            return Ok(lost(format!(
                "the run ended early ({:?}, exit {:?}, signal {:?})",
                run.end, run.exit_code, run.signal
            )));
        }
        if !done {
            // The driver ended early (killed by a limit, or by the program itself):
            // the test in progress fails as a runtime error.
            let stderr = String::from_utf8_lossy(&run.stderr);
            let tail: String = stderr
                .chars()
                .rev()
                .take(300)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            if results.last().is_some_and(|r| r.code != TestCode::Pass) {
                return Err(err("driver reported a failure but did not finish".into()));
            }
            if results.len() >= n {
                return Err(err("driver ran every test but did not finish".into()));
            }
            results.push(TestResult {
                test: results.len(),
                code: TestCode::RuntimeError,
                message: format!(
                    "Runtime Error: the run ended early ({:?}, exit {:?}, signal {:?}): {}",
                    run.end,
                    run.exit_code,
                    run.signal,
                    tail.trim()
                ),
                time_ms: 0,
                output: None,
                expected: None,
            });
        }
        let passed = results.len() == n && results.iter().all(|r| r.code == TestCode::Pass);
        if !passed && results.last().is_some_and(|r| r.code == TestCode::Pass) {
            return Err(err(format!(
                "driver stopped after {} of {n} tests without a failure",
                results.len()
            )));
        }
        Ok(SampleResult {
            question_id: problem.question_id.clone(),
            sample,
            passed,
            n_tests: n,
            results,
        })
    }

    /// Grade a model response: LiveCodeBench's extraction (the last fenced block; no
    /// block grades as an empty program), then [`Grader::grade`].
    pub fn grade_response(
        &self,
        problem: &Problem,
        response: &str,
        sample: usize,
    ) -> Result<SampleResult, LcbError> {
        let code = super::prompt::extract_code(response).unwrap_or_default();
        self.grade(problem, &code, sample)
    }

    /// Grade many `(problem, code, sample)` items on `config.jobs` threads; results
    /// come back in input order. `progress` is called after each item.
    pub fn grade_many(
        &self,
        items: &[(&Problem, &str, usize)],
        progress: &(dyn Fn(&Result<SampleResult, LcbError>) + Sync),
    ) -> Vec<Result<SampleResult, LcbError>> {
        crate::parallel::map(
            items,
            self.config.jobs,
            |(p, code, sample)| self.grade(p, code, *sample),
            |r| progress(r),
        )
    }
}

/// Parse the driver's report: per-test lines then a `done` line, each with the nonce.
/// Returns the results and whether the `done` line was seen.
pub fn parse_report(
    stdout: &[u8],
    nonce: &str,
    n_tests: usize,
) -> Result<(Vec<TestResult>, bool), String> {
    let text =
        std::str::from_utf8(stdout).map_err(|e| format!("driver report is not UTF-8 ({e})"))?;
    let mut results: Vec<TestResult> = Vec::new();
    let mut done = false;
    for (k, line) in text.lines().enumerate() {
        let at = k + 1;
        if line.trim().is_empty() {
            continue;
        }
        if done {
            return Err(format!(
                "driver report line {at}: output after the final line"
            ));
        }
        let short: String = line.chars().take(120).collect();
        let r: ReportLine = serde_json::from_str(line)
            .map_err(|e| format!("driver report line {at} is not a report ({e}): {short}"))?;
        if r.nonce != nonce {
            return Err(format!("driver report line {at}: wrong nonce"));
        }
        if r.done == Some(true) {
            done = true;
            continue;
        }
        let (Some(test), Some(code)) = (r.test, r.code) else {
            return Err(format!(
                "driver report line {at}: missing test or code: {short}"
            ));
        };
        if test != results.len() || test >= n_tests.max(1) {
            return Err(format!(
                "driver report line {at}: test {test} out of order (expected {})",
                results.len()
            ));
        }
        let code = TestCode::from_code(code)
            .filter(|c| *c != TestCode::GlobalTimeout)
            .ok_or_else(|| format!("driver report line {at}: invalid result code {code}"))?;
        if results.last().is_some_and(|r| r.code != TestCode::Pass) {
            return Err(format!("driver report line {at}: a test after a failure"));
        }
        results.push(TestResult {
            test,
            code,
            message: r.message.unwrap_or_default(),
            time_ms: r.time_ms.unwrap_or(0),
            output: r.output,
            expected: r.expected,
        });
    }
    Ok((results, done))
}

/// pass@k of one problem.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProblemScore {
    pub question_id: String,
    pub platform: String,
    pub difficulty: String,
    pub contest_date: String,
    pub n: usize,
    pub c: usize,
    /// `pass@k` for every requested `k <= n`.
    pub pass_at: BTreeMap<String, f64>,
}

/// pass@k over problems: the mean of per-problem estimates, reported for a `k` only
/// when every problem has at least `k` samples (as LiveCodeBench does).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub problems: usize,
    pub samples: usize,
    pub passed_samples: usize,
    pub pass_at: BTreeMap<String, f64>,
    pub by_platform: BTreeMap<String, BTreeMap<String, f64>>,
    pub by_difficulty: BTreeMap<String, BTreeMap<String, f64>>,
    pub per_problem: Vec<ProblemScore>,
}

/// Summarise graded samples (one problem may have several) for the given `ks`.
/// Problems in `problems` without any sample score 0.
pub fn summarize(problems: &[&Problem], results: &[SampleResult], ks: &[u64]) -> Summary {
    let mut per_problem = Vec::new();
    for p in problems {
        let mine: Vec<_> = results
            .iter()
            .filter(|r| r.question_id == p.question_id)
            .collect();
        let n = mine.len();
        let c = mine.iter().filter(|r| r.passed).count();
        // A problem without any sample scores 0 (it was asked for but not solved).
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
        per_problem.push(ProblemScore {
            question_id: p.question_id.clone(),
            platform: p.platform.to_string(),
            difficulty: p.difficulty.to_string(),
            contest_date: p.contest_date.to_string(),
            n,
            c,
            pass_at,
        });
    }
    let mean = |scores: &[&ProblemScore]| -> BTreeMap<String, f64> {
        let mut out = BTreeMap::new();
        if scores.is_empty() {
            return out;
        }
        for &k in ks {
            let key = format!("pass@{k}");
            let vals: Vec<f64> = scores
                .iter()
                .filter_map(|s| s.pass_at.get(&key).copied())
                .collect();
            if vals.len() == scores.len() {
                out.insert(key, vals.iter().sum::<f64>() / vals.len() as f64);
            }
        }
        out
    };
    let all: Vec<&ProblemScore> = per_problem.iter().collect();
    let group = |f: &dyn Fn(&ProblemScore) -> String| {
        let mut m: BTreeMap<String, Vec<&ProblemScore>> = BTreeMap::new();
        for s in &per_problem {
            m.entry(f(s)).or_default().push(s);
        }
        m.into_iter().map(|(k, v)| (k, mean(&v))).collect()
    };
    Summary {
        problems: per_problem.len(),
        samples: results.len(),
        passed_samples: results.iter().filter(|r| r.passed).count(),
        pass_at: mean(&all),
        by_platform: group(&|s| s.platform.clone()),
        by_difficulty: group(&|s| s.difficulty.clone()),
        per_problem,
    }
}

impl crate::grading::CodeGrader for Grader {
    type Problem = Problem;
    type Error = LcbError;

    fn grade_code(
        &self,
        problem: &Problem,
        code: &str,
        sample: usize,
    ) -> Result<SampleResult, LcbError> {
        self.grade(problem, code, sample)
    }
}
