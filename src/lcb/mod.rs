//! LiveCodeBench: loader for the `code_generation_lite` files, release tags, inclusive
//! date windows, temporal splits, the prompt and code extraction, and a grader that
//! keeps LiveCodeBench's semantics while running every program in the [`crate::sandbox`].
//!
//! - [`loader`]: reads `test.jsonl`, `test2.jsonl`, ... from a directory; decodes each
//!   row (private tests as plain JSON, or base64 → zlib → [`pickle`] → JSON string);
//!   bad rows are errors naming file and line, or are skipped and reported.
//! - [`selection`]: which problems a task uses ([`LcbSelection`]: release, dates,
//!   platform, difficulty), shared by task SPECs and suites.
//! - [`split`]: `--cutoff DATE` and the `v5-to-v6` preset, with counts per side.
//! - [`prompt`]: LiveCodeBench's generation prompt and last-fenced-block extraction.
//! - [`grader`]: runs a Python driver (`driver.py`) in one sandboxed process per
//!   solution; maps its per-test report to LiveCodeBench result codes; pass@k.

pub mod grader;
pub mod loader;
pub mod pickle;
pub mod prompt;
pub mod selection;
pub mod solutions;
pub mod split;

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

pub use grader::{GradeConfig, Grader, SampleResult, Semantics, TestCode, TimeoutClock};
pub use loader::{BadRow, Dataset, LoadOptions, load_dir};
pub use selection::LcbSelection;
pub use split::{Split, SplitSpec};

/// Errors of the lcb module (classified by [`crate::error::Classify`]: the user's input,
/// exit code 2, or a runtime failure, exit code 1).
#[derive(Debug, thiserror::Error)]
pub enum LcbError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}")]
    BadRow(BadRow),
    #[error("no LiveCodeBench files (test.jsonl, test2.jsonl, ...) in {0}")]
    NoFiles(PathBuf),
    #[error("release {tag} needs {file}, which is not in {dir}")]
    MissingFile {
        tag: String,
        file: String,
        dir: PathBuf,
    },
    #[error("invalid release tag `{0}` (expected release_vN, release_latest, vN or vA_vB)")]
    BadTag(String),
    #[error("invalid date `{0}` (expected YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS)")]
    BadDate(String),
    #[error("invalid split: {0}")]
    BadSplit(String),
    #[error("{0}")]
    BadSolutions(String),
    #[error("grading {question_id}: {message}")]
    Grading {
        question_id: String,
        message: String,
    },
    #[error(transparent)]
    Sandbox(#[from] crate::sandbox::SandboxError),
}

impl crate::error::Classify for LcbError {
    fn kind(&self) -> crate::error::ErrorKind {
        use crate::error::ErrorKind::{Runtime, Usage};
        match self {
            // A path the user named that does not exist is their input.
            LcbError::Io { source, .. } => {
                if source.kind() == std::io::ErrorKind::NotFound {
                    Usage
                } else {
                    Runtime
                }
            }
            LcbError::Grading { .. } => Runtime,
            LcbError::Sandbox(e) => e.kind(),
            LcbError::BadRow(_)
            | LcbError::NoFiles(_)
            | LcbError::MissingFile { .. }
            | LcbError::BadTag(_)
            | LcbError::BadDate(_)
            | LcbError::BadSplit(_)
            | LcbError::BadSolutions(_) => Usage,
        }
    }
}

/// The judge a problem comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Platform {
    Leetcode,
    Codeforces,
    Atcoder,
}

impl Platform {
    pub const ALL: [Platform; 3] = [Platform::Atcoder, Platform::Codeforces, Platform::Leetcode];
    pub fn as_str(self) -> &'static str {
        match self {
            Platform::Leetcode => "leetcode",
            Platform::Codeforces => "codeforces",
            Platform::Atcoder => "atcoder",
        }
    }
}

impl FromStr for Platform {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "leetcode" => Ok(Platform::Leetcode),
            "codeforces" => Ok(Platform::Codeforces),
            "atcoder" => Ok(Platform::Atcoder),
            _ => Err(format!(
                "unknown platform `{s}` (expected leetcode, codeforces or atcoder)"
            )),
        }
    }
}

impl fmt::Display for Platform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// LiveCodeBench's difficulty label.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Difficulty {
    Easy,
    Medium,
    Hard,
}

impl Difficulty {
    pub const ALL: [Difficulty; 3] = [Difficulty::Easy, Difficulty::Medium, Difficulty::Hard];
    pub fn as_str(self) -> &'static str {
        match self {
            Difficulty::Easy => "easy",
            Difficulty::Medium => "medium",
            Difficulty::Hard => "hard",
        }
    }
}

impl FromStr for Difficulty {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "easy" => Ok(Difficulty::Easy),
            "medium" => Ok(Difficulty::Medium),
            "hard" => Ok(Difficulty::Hard),
            _ => Err(format!(
                "unknown difficulty `{s}` (expected easy, medium or hard)"
            )),
        }
    }
}

impl fmt::Display for Difficulty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a test feeds the program: standard input, or a call of `Solution().<func_name>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TestType {
    Stdin,
    Functional,
}

/// One test case, as in the files: for functional tests `input` holds one JSON value
/// per line (one per positional argument) and `output` one JSON value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TestCase {
    pub input: String,
    pub output: String,
    pub testtype: TestType,
}

/// A validated `contest_date` (`YYYY-MM-DDTHH:MM:SS`, optionally with fractional
/// seconds, which are kept for display but ignored in comparisons). Ordered in time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ContestDate {
    year: u16,
    month: u8,
    day: u8,
    hour: u8,
    minute: u8,
    second: u8,
}

fn days_in_month(year: u16, month: u8) -> u8 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        _ => 0,
    }
}

fn digits(s: &str) -> Option<u32> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

impl ContestDate {
    /// Parse `YYYY-MM-DD` (midnight) or `YYYY-MM-DDTHH:MM:SS[.fff]` (a space may
    /// replace the `T`). Calendar-checked: 2024-02-30 is an error.
    pub fn parse(s: &str) -> Result<ContestDate, LcbError> {
        Self::parse_inner(s.trim()).ok_or_else(|| LcbError::BadDate(s.to_string()))
    }

    fn parse_inner(s: &str) -> Option<ContestDate> {
        let (date, time) = match s.find(['T', ' ']) {
            Some(i) => (&s[..i], Some(&s[i + 1..])),
            None => (s, None),
        };
        let mut d = date.split('-');
        let (y, mo, da) = (d.next()?, d.next()?, d.next()?);
        if d.next().is_some() || y.len() != 4 || mo.len() != 2 || da.len() != 2 {
            return None;
        }
        let (year, month, day) = (digits(y)? as u16, digits(mo)? as u8, digits(da)? as u8);
        if !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
            return None;
        }
        let (mut hour, mut minute, mut second) = (0u8, 0u8, 0u8);
        if let Some(t) = time {
            let t = match t.split_once('.') {
                Some((hms, frac)) => {
                    digits(frac)?;
                    hms
                }
                None => t,
            };
            let mut p = t.split(':');
            let (h, mi, se) = (p.next()?, p.next()?, p.next()?);
            if p.next().is_some() || h.len() != 2 || mi.len() != 2 || se.len() != 2 {
                return None;
            }
            (hour, minute, second) = (digits(h)? as u8, digits(mi)? as u8, digits(se)? as u8);
            if hour > 23 || minute > 59 || second > 59 {
                return None;
            }
        }
        Some(ContestDate {
            year,
            month,
            day,
            hour,
            minute,
            second,
        })
    }

    /// The calendar day, as `(year, month, day)`.
    pub fn day(&self) -> (u16, u8, u8) {
        (self.year, self.month, self.day)
    }
}

impl fmt::Display for ContestDate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        )
    }
}

impl Serialize for ContestDate {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// A bound of a date window. A bound written as a bare date (`2024-08-31`) covers the
/// whole calendar day; one written with a time compares the full timestamp.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DateBound {
    Day(u16, u8, u8),
    Instant(ContestDate),
}

impl DateBound {
    pub fn parse(s: &str) -> Result<DateBound, LcbError> {
        let d = ContestDate::parse(s)?;
        Ok(if s.trim().len() == 10 {
            let (y, m, dd) = d.day();
            DateBound::Day(y, m, dd)
        } else {
            DateBound::Instant(d)
        })
    }

    /// `date` is on or before this bound.
    pub fn admits_upto(&self, date: &ContestDate) -> bool {
        match self {
            DateBound::Day(y, m, d) => date.day() <= (*y, *m, *d),
            DateBound::Instant(b) => date <= b,
        }
    }

    /// `date` is on or after this bound.
    pub fn admits_from(&self, date: &ContestDate) -> bool {
        match self {
            DateBound::Day(y, m, d) => date.day() >= (*y, *m, *d),
            DateBound::Instant(b) => date >= b,
        }
    }
}

impl fmt::Display for DateBound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DateBound::Day(y, m, d) => write!(f, "{y:04}-{m:02}-{d:02}"),
            DateBound::Instant(t) => write!(f, "{t}"),
        }
    }
}

/// An inclusive window on `contest_date`; either side may be open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DateWindow {
    pub from: Option<DateBound>,
    pub to: Option<DateBound>,
}

impl DateWindow {
    pub fn contains(&self, date: &ContestDate) -> bool {
        self.from.is_none_or(|b| b.admits_from(date)) && self.to.is_none_or(|b| b.admits_upto(date))
    }
}

/// A LiveCodeBench release tag: `release_vN` = files 1..=N, `vN` = file N alone,
/// `vA_vB` = files A..=B, `release_latest` = every file present.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReleaseTag {
    Release(u32),
    Single(u32),
    Range(u32, u32),
    Latest,
}

impl ReleaseTag {
    /// The file numbers this tag selects, given the numbers present (sorted).
    pub fn files(&self, present: &[u32]) -> Vec<u32> {
        match *self {
            ReleaseTag::Release(n) => (1..=n).collect(),
            ReleaseTag::Single(n) => vec![n],
            ReleaseTag::Range(a, b) => (a..=b).collect(),
            ReleaseTag::Latest => present.to_vec(),
        }
    }
}

impl FromStr for ReleaseTag {
    type Err = LcbError;
    fn from_str(s: &str) -> Result<Self, LcbError> {
        let bad = || LcbError::BadTag(s.to_string());
        let num = |t: &str| -> Result<u32, LcbError> {
            let n = t.strip_prefix('v').and_then(digits).ok_or_else(bad)?;
            if n == 0 { Err(bad()) } else { Ok(n) }
        };
        if s == "release_latest" {
            return Ok(ReleaseTag::Latest);
        }
        if let Some(rest) = s.strip_prefix("release_") {
            return Ok(ReleaseTag::Release(num(rest)?));
        }
        if let Some((a, b)) = s.split_once('_') {
            let (a, b) = (num(a)?, num(b)?);
            if a > b {
                return Err(bad());
            }
            return Ok(ReleaseTag::Range(a, b));
        }
        Ok(ReleaseTag::Single(num(s)?))
    }
}

impl fmt::Display for ReleaseTag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReleaseTag::Release(n) => write!(f, "release_v{n}"),
            ReleaseTag::Single(n) => write!(f, "v{n}"),
            ReleaseTag::Range(a, b) => write!(f, "v{a}_v{b}"),
            ReleaseTag::Latest => f.write_str("release_latest"),
        }
    }
}

/// The file name of file number `n` (1 → `test.jsonl`, n → `test{n}.jsonl`).
pub fn file_name(n: u32) -> String {
    if n == 1 {
        "test.jsonl".to_string()
    } else {
        format!("test{n}.jsonl")
    }
}

/// Where a problem was read from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Source {
    /// File number (1 for `test.jsonl`).
    pub file: u32,
    /// 1-based line number.
    pub line: usize,
}

/// One LiveCodeBench problem with every field of the files, decoded.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Problem {
    pub question_title: String,
    pub question_content: String,
    pub platform: Platform,
    pub question_id: String,
    pub contest_id: String,
    pub contest_date: ContestDate,
    pub starter_code: String,
    pub difficulty: Difficulty,
    pub public_test_cases: Vec<TestCase>,
    /// Decoded private tests; empty when loaded with `keep_private_tests: false`
    /// (they are still decoded and validated; see `private_test_count`).
    pub private_test_cases: Vec<TestCase>,
    pub private_test_count: usize,
    /// The `metadata` object as given.
    pub metadata: serde_json::Map<String, serde_json::Value>,
    pub source: Source,
}

impl Problem {
    /// `metadata.func_name`, the method functional tests call.
    pub fn func_name(&self) -> Option<&str> {
        self.metadata.get("func_name").and_then(|v| v.as_str())
    }

    /// Whether the problem is graded by calling a function (LeetCode style): as in
    /// LiveCodeBench, exactly when `metadata.func_name` is present.
    pub fn is_functional(&self) -> bool {
        self.func_name().is_some()
    }

    /// Public then private tests: the list LiveCodeBench grades on.
    pub fn all_tests(&self) -> impl Iterator<Item = &TestCase> {
        self.public_test_cases
            .iter()
            .chain(&self.private_test_cases)
    }
}
