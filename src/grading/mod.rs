//! What every code task source shares: one grading result type and the grader interface
//! a harness runtime calls, whatever the benchmark.
//!
//! Two sources implement it: [`crate::lcb`] (LiveCodeBench: stdin and LeetCode-style
//! problems, many tests each, LiveCodeBench's result codes) and [`crate::humaneval`]
//! (HumanEval-format problems: a `check(candidate)` function run against the solution,
//! graded as one test). Both grade one solution of one problem in one sandboxed run and
//! return a [`SampleResult`]: `passed`, the per-test codes up to the first failure
//! ([`TestCode`]: LiveCodeBench's 1 / -1 / -2 / -3 / -4), and that failure's message.
//! Graders are `Send + Sync`: a runtime grades from many threads at once.

pub mod solutions;

use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Serialize, Serializer};
use sha2::{Digest, Sha256};

static NONCE_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A fresh random-looking token a driver echoes on its report lines, so output a program
/// prints cannot pass for the driver's report (process id, a counter and the time, hashed).
pub fn nonce() -> String {
    let mut h = Sha256::new();
    h.update(std::process::id().to_le_bytes());
    h.update(NONCE_COUNTER.fetch_add(1, Ordering::Relaxed).to_le_bytes());
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    h.update(now.as_nanos().to_le_bytes());
    h.finalize()[..12]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A grader of one code task source: `grade(problem, code, sample)` runs `code` against
/// `problem`'s tests in the sandbox. Implementations are safe to call from many threads.
pub trait CodeGrader: Send + Sync {
    /// The source's problem type.
    type Problem: Sync;
    /// The source's error type (a solution that could not be graded, not a failing one).
    type Error: std::error::Error + Send + Sync + 'static;

    /// Grade one solution; `sample` is its index among the problem's solutions.
    fn grade_code(
        &self,
        problem: &Self::Problem,
        code: &str,
        sample: usize,
    ) -> Result<SampleResult, Self::Error>;
}

/// The outcome of one test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TestCode {
    Pass,
    GlobalTimeout,
    WrongAnswer,
    TimeLimit,
    RuntimeError,
}

impl TestCode {
    /// LiveCodeBench's integer code (pass is 1 here; LiveCodeBench writes `True`).
    pub fn code(self) -> i32 {
        match self {
            TestCode::Pass => 1,
            TestCode::GlobalTimeout => -1,
            TestCode::WrongAnswer => -2,
            TestCode::TimeLimit => -3,
            TestCode::RuntimeError => -4,
        }
    }

    pub fn from_code(c: i64) -> Option<TestCode> {
        Some(match c {
            1 => TestCode::Pass,
            -1 => TestCode::GlobalTimeout,
            -2 => TestCode::WrongAnswer,
            -3 => TestCode::TimeLimit,
            -4 => TestCode::RuntimeError,
            _ => return None,
        })
    }
}

impl Serialize for TestCode {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_i32(self.code())
    }
}

/// One graded test.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TestResult {
    pub test: usize,
    pub code: TestCode,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub message: String,
    pub time_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
}

/// One graded solution.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SampleResult {
    pub question_id: String,
    /// Index of this solution among the problem's solutions (input order).
    pub sample: usize,
    pub passed: bool,
    /// Tests of the problem (public + private).
    pub n_tests: usize,
    /// Results up to and including the first failure.
    pub results: Vec<TestResult>,
}

impl SampleResult {
    /// The first failing result, if any.
    pub fn failure(&self) -> Option<&TestResult> {
        self.results.iter().find(|r| r.code != TestCode::Pass)
    }
}

impl SampleResult {
    /// 1.0 for a passing solution, 0.0 otherwise (no partial credit).
    pub fn score(&self) -> f64 {
        if self.passed { 1.0 } else { 0.0 }
    }

    /// The code that decides the verdict: [`TestCode::Pass`], or the first failure's.
    pub fn result_code(&self) -> TestCode {
        self.failure().map_or(TestCode::Pass, |f| f.code)
    }
}

/// A mean over problems with a 95% interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Interval {
    pub mean: f64,
    pub low: f64,
    pub high: f64,
    /// `wilson` (every value 0 or 1: a proportion) or `normal` (mean ± 1.96 standard
    /// errors of the per-problem values, sample standard deviation), clipped to [0, 1].
    pub method: &'static str,
}

/// The mean of per-problem scores in [0, 1] with a 95% interval: Wilson's score interval
/// when every value is 0 or 1 (pass@1 with one sample per problem), else the normal
/// approximation over problems. `None` for no values.
pub fn interval95(values: &[f64]) -> Option<Interval> {
    const LEVEL: f64 = 0.95;
    let mean = crate::stats::mean(values)?;
    let (ci, method) = if values.iter().all(|&v| v == 0.0 || v == 1.0) {
        let passed = values.iter().filter(|&&v| v == 1.0).count() as u64;
        (
            crate::stats::wilson(passed, values.len() as u64, LEVEL)?,
            "wilson",
        )
    } else {
        (
            crate::stats::normal_mean_ci(values, LEVEL, 0.0, 1.0)?,
            "normal",
        )
    };
    Some(Interval {
        mean,
        low: ci.lo,
        high: ci.hi,
        method,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_interval_for_proportions() {
        // 88 of 164; the bounds were computed separately in Python from Wilson's formula.
        let mut v = vec![1.0; 88];
        v.extend(vec![0.0; 76]);
        let i = interval95(&v).unwrap();
        assert_eq!(i.method, "wilson");
        assert!((i.mean - 88.0 / 164.0).abs() < 1e-15);
        assert!(
            (i.low - 0.460_303_187_812_380_9).abs() < 1e-12
                && (i.high - 0.611_192_854_252_051_3).abs() < 1e-12,
            "{i:?}"
        );
        // All passing: the mean is 1, the interval is not degenerate.
        let i = interval95(&[1.0; 164]).unwrap();
        assert_eq!(i.high, 1.0);
        assert!((i.low - 0.977_112_574_880_572_3).abs() < 1e-12, "{i:?}");
        let i = interval95(&[0.0; 10]).unwrap();
        assert_eq!((i.low, i.mean), (0.0, 0.0));
        assert!(interval95(&[]).is_none());
    }

    #[test]
    fn normal_interval_for_fractional_scores() {
        let i = interval95(&[0.5, 0.25, 0.75, 1.0]).unwrap();
        assert_eq!(i.method, "normal");
        // mean 0.625, sample sd = sqrt(0.3125/3), se = sd / 2
        let se = (0.3125f64 / 3.0).sqrt() / 2.0;
        assert!((i.low - (0.625 - 1.959_963_984_540_054 * se)).abs() < 1e-12);
        assert!((i.high - (0.625 + 1.959_963_984_540_054 * se)).abs() < 1e-12);
    }
}
