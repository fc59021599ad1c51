//! Reads LiveCodeBench `code_generation_lite` files (`test.jsonl`, `test2.jsonl`, ...)
//! from a directory, selects files by release tag, decodes and validates every row,
//! and filters by an inclusive `contest_date` window.
//!
//! Private tests are tried as plain JSON first, then as base64 → zlib → pickle → JSON
//! string. The zlib stream is decompressed with a cap ([`LoadOptions::max_decompressed_bytes`])
//! so a bomb is an error, not an out-of-memory; the pickle goes through the refusing
//! reader in [`super::pickle`]. A bad row is an error naming file and line, or, with
//! `skip_bad`, is reported in [`Dataset::bad_rows`] and skipped.

use std::collections::HashMap;
use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use base64::Engine;
use serde::{Deserialize, Serialize};

use super::pickle::unpickle_string;
use super::{
    ContestDate, DateWindow, Difficulty, LcbError, Platform, Problem, ReleaseTag, Source, TestCase,
    TestType, file_name,
};

/// Default cap on one row's decompressed private tests (1 GiB).
pub const DEFAULT_MAX_DECOMPRESSED: usize = 1 << 30;

/// What to load and how strictly.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    pub release: ReleaseTag,
    pub window: DateWindow,
    /// Report bad rows and go on instead of stopping at the first one.
    pub skip_bad: bool,
    /// Keep decoded private tests in memory (they are always decoded and validated).
    pub keep_private_tests: bool,
    /// When set, keep private tests only for these `question_id`s (grading a few
    /// problems of a large release without holding every test in memory).
    pub keep_private_ids: Option<std::collections::HashSet<String>>,
    /// Largest decompressed size of one row's private tests, in bytes.
    pub max_decompressed_bytes: usize,
    /// Decoding threads; 0 = one per available core. Output does not depend on it.
    pub threads: usize,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            release: ReleaseTag::Latest,
            window: DateWindow::default(),
            skip_bad: false,
            keep_private_tests: true,
            keep_private_ids: None,
            max_decompressed_bytes: DEFAULT_MAX_DECOMPRESSED,
            threads: 0,
        }
    }
}

/// A row that could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BadRow {
    pub file: PathBuf,
    /// 1-based line number.
    pub line: usize,
    /// The row's `question_id` when it could be read.
    pub question_id: Option<String>,
    pub reason: String,
}

impl fmt::Display for BadRow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: ", self.file.display(), self.line)?;
        if let Some(q) = &self.question_id {
            write!(f, "question {q}: ")?;
        }
        f.write_str(&self.reason)
    }
}

/// Per-file counts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FileSummary {
    pub number: u32,
    pub name: String,
    /// Rows decoded without error.
    pub rows: usize,
    pub bad_rows: usize,
    /// Rows inside the date window.
    pub selected: usize,
    pub first_date: Option<ContestDate>,
    pub last_date: Option<ContestDate>,
}

/// The problems of one release (and date window) of a directory.
#[derive(Debug, Clone)]
pub struct Dataset {
    pub dir: PathBuf,
    pub release: ReleaseTag,
    pub window: DateWindow,
    /// Problems in file order, then line order.
    pub problems: Vec<Problem>,
    pub files: Vec<FileSummary>,
    pub bad_rows: Vec<BadRow>,
}

impl Dataset {
    pub fn get(&self, question_id: &str) -> Option<&Problem> {
        self.problems.iter().find(|p| p.question_id == question_id)
    }

    /// Cumulative selected problems per `release_vN`, for each N whose files 1..=N
    /// were all loaded (with `release_latest` on a full download: v1 .. v6).
    pub fn release_counts(&self) -> Vec<(String, usize)> {
        let mut out = Vec::new();
        let mut total = 0;
        for (k, f) in self.files.iter().enumerate() {
            if f.number as usize != k + 1 {
                break;
            }
            total += f.selected;
            out.push((format!("release_v{}", f.number), total));
        }
        out
    }

    /// The earliest and latest `contest_date` of the selected problems.
    pub fn date_range(&self) -> Option<(ContestDate, ContestDate)> {
        let min = self.problems.iter().map(|p| p.contest_date).min()?;
        let max = self.problems.iter().map(|p| p.contest_date).max()?;
        Some((min, max))
    }
}

/// The file numbers present in `dir` (`test.jsonl` is 1, `testN.jsonl` is N), sorted.
pub fn discover(dir: &Path) -> Result<Vec<u32>, LcbError> {
    let rd = std::fs::read_dir(dir).map_err(|source| LcbError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut nums = Vec::new();
    for entry in rd {
        let entry = entry.map_err(|source| LcbError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let Some(stem) = name
            .strip_prefix("test")
            .and_then(|s| s.strip_suffix(".jsonl"))
        else {
            continue;
        };
        let n = if stem.is_empty() {
            1
        } else if stem.bytes().all(|b| b.is_ascii_digit()) && !stem.starts_with('0') {
            match stem.parse::<u32>() {
                Ok(n) if n >= 2 => n,
                _ => continue,
            }
        } else {
            continue;
        };
        nums.push(n);
    }
    nums.sort_unstable();
    if nums.is_empty() {
        return Err(LcbError::NoFiles(dir.to_path_buf()));
    }
    Ok(nums)
}

/// Resolve a release tag to existing file paths.
pub fn release_files(dir: &Path, tag: ReleaseTag) -> Result<Vec<(u32, PathBuf)>, LcbError> {
    let present = discover(dir)?;
    let mut out = Vec::new();
    for n in tag.files(&present) {
        if !present.contains(&n) {
            return Err(LcbError::MissingFile {
                tag: tag.to_string(),
                file: file_name(n),
                dir: dir.to_path_buf(),
            });
        }
        out.push((n, dir.join(file_name(n))));
    }
    Ok(out)
}

/// Load a release of `dir`.
pub fn load_dir(dir: &Path, opts: &LoadOptions) -> Result<Dataset, LcbError> {
    let files = release_files(dir, opts.release)?;
    let mut ds = Dataset {
        dir: dir.to_path_buf(),
        release: opts.release,
        window: opts.window,
        problems: Vec::new(),
        files: Vec::new(),
        bad_rows: Vec::new(),
    };
    let mut seen: HashMap<String, (PathBuf, usize)> = HashMap::new();
    for (number, path) in files {
        let file = File::open(&path).map_err(|source| LcbError::Io {
            path: path.clone(),
            source,
        })?;
        let mut summary = FileSummary {
            number,
            name: file_name(number),
            rows: 0,
            bad_rows: 0,
            selected: 0,
            first_date: None,
            last_date: None,
        };
        let mut reader = BufReader::with_capacity(1 << 20, file);
        let mut line_no = 0usize;
        loop {
            // Read a batch of rows, decode it on all cores, then index it in order
            // (so results, errors and their order do not depend on the thread count).
            let mut batch: Vec<(usize, Vec<u8>)> = Vec::new();
            let mut batch_bytes = 0usize;
            while batch.len() < BATCH_ROWS && batch_bytes < BATCH_BYTES {
                let mut buf = Vec::new();
                let n = reader
                    .read_until(b'\n', &mut buf)
                    .map_err(|source| LcbError::Io {
                        path: path.clone(),
                        source,
                    })?;
                if n == 0 {
                    break;
                }
                line_no += 1;
                if buf.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                batch_bytes += buf.len();
                batch.push((line_no, buf));
            }
            if batch.is_empty() {
                break;
            }
            let decoded = decode_batch(&batch, number, opts);
            for ((line_no, _), decoded) in batch.iter().zip(decoded) {
                let line_no = *line_no;
                let decoded = decoded.and_then(|p| match seen.get(&p.question_id) {
                    Some((f, l)) => Err(RowFailure {
                        question_id: Some(p.question_id.clone()),
                        reason: format!(
                            "duplicate question_id, first seen at {}:{}",
                            f.display(),
                            l
                        ),
                    }),
                    None => Ok(p),
                });
                match decoded {
                    Ok(p) => {
                        summary.rows += 1;
                        seen.insert(p.question_id.clone(), (path.clone(), line_no));
                        if opts.window.contains(&p.contest_date) {
                            summary.selected += 1;
                            let d = p.contest_date;
                            summary.first_date = Some(summary.first_date.map_or(d, |x| x.min(d)));
                            summary.last_date = Some(summary.last_date.map_or(d, |x| x.max(d)));
                            ds.problems.push(p);
                        }
                    }
                    Err(f) => {
                        let bad = BadRow {
                            file: path.clone(),
                            line: line_no,
                            question_id: f.question_id,
                            reason: f.reason,
                        };
                        if !opts.skip_bad {
                            return Err(LcbError::BadRow(bad));
                        }
                        summary.bad_rows += 1;
                        ds.bad_rows.push(bad);
                    }
                }
            }
        }
        ds.files.push(summary);
    }
    Ok(ds)
}

const BATCH_ROWS: usize = 256;
const BATCH_BYTES: usize = 64 << 20;

fn decode_one(
    line_no: usize,
    buf: &[u8],
    file: u32,
    opts: &LoadOptions,
) -> Result<Problem, RowFailure> {
    let source = Source {
        file,
        line: line_no,
    };
    match std::str::from_utf8(buf) {
        Ok(text) => decode_row(text.trim_end_matches(['\n', '\r']), source, opts),
        Err(e) => Err(RowFailure {
            question_id: None,
            reason: format!("invalid UTF-8 at byte {}", e.valid_up_to()),
        }),
    }
}

/// Decode rows on `opts.threads` threads (0: one per core); results in input order.
fn decode_batch(
    batch: &[(usize, Vec<u8>)],
    file: u32,
    opts: &LoadOptions,
) -> Vec<Result<Problem, RowFailure>> {
    let threads = match opts.threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
    .min(batch.len());
    if threads <= 1 {
        return batch
            .iter()
            .map(|(l, b)| decode_one(*l, b, file, opts))
            .collect();
    }
    let chunk = batch.len().div_ceil(threads);
    std::thread::scope(|s| {
        let handles: Vec<_> = batch
            .chunks(chunk)
            .map(|part| {
                s.spawn(move || {
                    part.iter()
                        .map(|(l, b)| decode_one(*l, b, file, opts))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("decoding does not panic"))
            .collect()
    })
}

/// Why one row failed (file and line are added by the caller).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowFailure {
    pub question_id: Option<String>,
    pub reason: String,
}

#[derive(Deserialize)]
struct RawRow {
    question_title: String,
    question_content: String,
    platform: String,
    question_id: String,
    contest_id: String,
    contest_date: String,
    starter_code: String,
    difficulty: String,
    public_test_cases: String,
    private_test_cases: String,
    metadata: String,
}

/// Decode one JSONL row.
pub fn decode_row(line: &str, source: Source, opts: &LoadOptions) -> Result<Problem, RowFailure> {
    let raw: RawRow = serde_json::from_str(line).map_err(|e| RowFailure {
        question_id: question_id_of(line),
        reason: format!("not a valid row: {e}"),
    })?;
    let qid = raw.question_id.clone();
    let fail = |reason: String| RowFailure {
        question_id: Some(qid.clone()),
        reason,
    };
    if raw.question_id.trim().is_empty() {
        return Err(fail("empty question_id".into()));
    }
    let platform: Platform = raw.platform.parse().map_err(|e: String| fail(e))?;
    let difficulty: Difficulty = raw.difficulty.parse().map_err(|e: String| fail(e))?;
    let contest_date = ContestDate::parse(&raw.contest_date)
        .map_err(|_| fail(format!("contest_date: invalid date `{}`", raw.contest_date)))?;
    let public: Vec<TestCase> = serde_json::from_str(&raw.public_test_cases)
        .map_err(|e| fail(format!("public_test_cases: {e}")))?;
    let private = decode_private_tests(&raw.private_test_cases, opts.max_decompressed_bytes)
        .map_err(|e| fail(format!("private_test_cases: {e}")))?;
    let metadata = match serde_json::from_str::<serde_json::Value>(&raw.metadata) {
        Ok(serde_json::Value::Object(m)) => m,
        Ok(_) => return Err(fail("metadata: not a JSON object".into())),
        Err(e) => return Err(fail(format!("metadata: {e}"))),
    };
    if let Some(f) = metadata.get("func_name")
        && !f.is_string()
    {
        return Err(fail("metadata.func_name: not a string".into()));
    }
    if public.is_empty() && private.is_empty() {
        return Err(fail("no test cases".into()));
    }
    let functional = public
        .iter()
        .chain(&private)
        .any(|t| t.testtype == TestType::Functional);
    if functional && metadata.get("func_name").is_none() {
        return Err(fail(
            "functional tests but no metadata.func_name to call".into(),
        ));
    }
    for (k, t) in public.iter().chain(&private).enumerate() {
        if t.testtype == TestType::Functional {
            for (j, arg) in t.input.split('\n').enumerate() {
                if serde_json::from_str::<serde::de::IgnoredAny>(arg).is_err() {
                    return Err(fail(format!(
                        "test {k}: functional input line {} is not JSON",
                        j + 1
                    )));
                }
            }
            if serde_json::from_str::<serde::de::IgnoredAny>(&t.output).is_err() {
                return Err(fail(format!("test {k}: functional output is not JSON")));
            }
        }
    }
    let private_test_count = private.len();
    let keep = opts.keep_private_tests
        && opts
            .keep_private_ids
            .as_ref()
            .is_none_or(|ids| ids.contains(&raw.question_id));
    Ok(Problem {
        question_title: raw.question_title,
        question_content: raw.question_content,
        platform,
        question_id: raw.question_id,
        contest_id: raw.contest_id,
        contest_date,
        starter_code: raw.starter_code,
        difficulty,
        public_test_cases: public,
        private_test_cases: if keep { private } else { Vec::new() },
        private_test_count,
        metadata,
        source,
    })
}

/// Best effort: the `question_id` of a row that does not parse, for error messages.
fn question_id_of(line: &str) -> Option<String> {
    let i = line.find("\"question_id\"")?;
    let rest = line[i + 13..].trim_start().strip_prefix(':')?.trim_start();
    let rest = rest.strip_prefix('"')?;
    let end = rest.find('"')?;
    Some(rest[..end].to_string()).filter(|s| s.len() <= 64)
}

/// Errors decoding `private_test_cases`.
#[derive(Debug, thiserror::Error)]
pub enum PrivateTestsError {
    #[error("neither JSON ({json}) nor base64 ({b64})")]
    NotEncoded { json: String, b64: String },
    #[error("zlib: {0}")]
    Zlib(std::io::Error),
    #[error("decompressed size exceeds the cap of {0} bytes (a zlib bomb?)")]
    TooLarge(usize),
    #[error("pickle: {0}")]
    Pickle(#[from] super::pickle::PickleError),
    #[error("the pickled string is not a JSON test list: {0}")]
    Json(serde_json::Error),
}

impl crate::error::Classify for PrivateTestsError {
    /// Undecodable private tests are a bad input row.
    fn kind(&self) -> crate::error::ErrorKind {
        match self {
            PrivateTestsError::NotEncoded { .. }
            | PrivateTestsError::Zlib(_)
            | PrivateTestsError::TooLarge(_)
            | PrivateTestsError::Pickle(_)
            | PrivateTestsError::Json(_) => crate::error::ErrorKind::Usage,
        }
    }
}

/// Decode `private_test_cases`: plain JSON, else base64 → zlib → pickle → JSON string.
pub fn decode_private_tests(s: &str, max_bytes: usize) -> Result<Vec<TestCase>, PrivateTestsError> {
    let json_err = match serde_json::from_str::<Vec<TestCase>>(s) {
        Ok(v) => return Ok(v),
        Err(e) => e,
    };
    let compressed = base64::engine::general_purpose::STANDARD
        .decode(s.trim())
        .map_err(|e| PrivateTestsError::NotEncoded {
            json: json_err.to_string(),
            b64: e.to_string(),
        })?;
    let out = inflate_capped(&compressed, max_bytes)?;
    let text = unpickle_string(&out)?;
    serde_json::from_str(&text).map_err(PrivateTestsError::Json)
}

/// Inflate a zlib stream into one buffer grown geometrically, never past `cap + 1`
/// bytes: more than `cap` decompressed bytes is [`PrivateTestsError::TooLarge`].
fn inflate_capped(data: &[u8], cap: usize) -> Result<Vec<u8>, PrivateTestsError> {
    use flate2::{Decompress, FlushDecompress, Status};
    let limit = cap.saturating_add(1);
    let mut d = Decompress::new(true);
    let mut out: Vec<u8> = Vec::with_capacity(data.len().saturating_mul(4).clamp(1024, limit));
    loop {
        if out.len() == out.capacity() {
            if out.len() >= limit {
                return Err(PrivateTestsError::TooLarge(cap));
            }
            let grow = out.len().min(limit - out.len()).max(1);
            out.reserve_exact(grow);
        }
        let consumed = d.total_in() as usize;
        let produced = out.len();
        let status = d
            .decompress_vec(&data[consumed..], &mut out, FlushDecompress::Finish)
            .map_err(|e| {
                PrivateTestsError::Zlib(std::io::Error::new(std::io::ErrorKind::InvalidData, e))
            })?;
        match status {
            Status::StreamEnd => break,
            Status::Ok | Status::BufError => {
                let stalled = d.total_in() as usize == consumed && out.len() == produced;
                if stalled && out.len() < out.capacity() {
                    return Err(PrivateTestsError::Zlib(std::io::Error::new(
                        std::io::ErrorKind::UnexpectedEof,
                        "truncated zlib stream",
                    )));
                }
            }
        }
    }
    if out.len() > cap {
        return Err(PrivateTestsError::TooLarge(cap));
    }
    Ok(out)
}
