//! Temporal splits for the temporal-transfer experiment: train on problems released up
//! to a cutoff, test on problems released after it.
//!
//! - `Cutoff(DATE)`: over one release (default `release_latest`), train = problems with
//!   `contest_date <= DATE`, test = `contest_date > DATE` (a bare date covers its day).
//! - `V5ToV6`: train = every problem of `release_v5`; test = the problems of
//!   `test6.jsonl` dated strictly after the latest `release_v5` date (files overlap in
//!   dates, so the filter is by date, not by file).

use std::collections::{BTreeMap, HashSet};
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::Path;

use serde::Serialize;

use super::loader::{BadRow, LoadOptions, load_dir, release_files};
use super::{ContestDate, DateBound, DateWindow, LcbError, Problem, ReleaseTag, file_name};

/// Which split to make.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SplitSpec {
    Cutoff(DateBound),
    V5ToV6,
}

impl SplitSpec {
    /// Parse a preset name (`v5-to-v6`).
    pub fn preset(name: &str) -> Result<SplitSpec, LcbError> {
        match name {
            "v5-to-v6" => Ok(SplitSpec::V5ToV6),
            _ => Err(LcbError::BadSplit(format!(
                "unknown preset `{name}` (known: v5-to-v6)"
            ))),
        }
    }
}

/// The two sides of a split.
#[derive(Debug, Clone)]
pub struct Split {
    pub spec: SplitSpec,
    /// Human-readable rule of each side.
    pub train_rule: String,
    pub test_rule: String,
    pub train: Vec<Problem>,
    pub test: Vec<Problem>,
    pub bad_rows: Vec<BadRow>,
}

/// Counts of one side.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SideCounts {
    pub rule: String,
    pub total: usize,
    pub by_platform: BTreeMap<String, usize>,
    pub by_difficulty: BTreeMap<String, usize>,
    pub by_file: BTreeMap<String, usize>,
    pub first_date: Option<ContestDate>,
    pub last_date: Option<ContestDate>,
}

/// Count problems per platform, difficulty and file.
pub fn counts(rule: &str, problems: &[Problem]) -> SideCounts {
    let mut c = SideCounts {
        rule: rule.to_string(),
        total: problems.len(),
        by_platform: BTreeMap::new(),
        by_difficulty: BTreeMap::new(),
        by_file: BTreeMap::new(),
        first_date: problems.iter().map(|p| p.contest_date).min(),
        last_date: problems.iter().map(|p| p.contest_date).max(),
    };
    for p in problems {
        *c.by_platform.entry(p.platform.to_string()).or_default() += 1;
        *c.by_difficulty.entry(p.difficulty.to_string()).or_default() += 1;
        *c.by_file.entry(file_name(p.source.file)).or_default() += 1;
    }
    c
}

impl Split {
    pub fn train_counts(&self) -> SideCounts {
        counts(&self.train_rule, &self.train)
    }
    pub fn test_counts(&self) -> SideCounts {
        counts(&self.test_rule, &self.test)
    }
}

/// Make a split of `dir`. `opts.release` is the pool for `Cutoff` (ignored by the
/// preset, which fixes its releases); `opts.window` is not used.
pub fn split(dir: &Path, spec: SplitSpec, opts: &LoadOptions) -> Result<Split, LcbError> {
    let base = LoadOptions {
        window: DateWindow::default(),
        ..opts.clone()
    };
    match spec {
        SplitSpec::Cutoff(cutoff) => {
            let ds = load_dir(dir, &base)?;
            let (train, test) = ds
                .problems
                .into_iter()
                .partition(|p| cutoff.admits_upto(&p.contest_date));
            Ok(Split {
                spec,
                train_rule: format!("{}, contest_date <= {cutoff}", opts.release),
                test_rule: format!("{}, contest_date > {cutoff}", opts.release),
                train,
                test,
                bad_rows: ds.bad_rows,
            })
        }
        SplitSpec::V5ToV6 => {
            let train_ds = load_dir(
                dir,
                &LoadOptions {
                    release: ReleaseTag::Release(5),
                    ..base.clone()
                },
            )?;
            let last = train_ds
                .date_range()
                .map(|(_, b)| b)
                .ok_or_else(|| LcbError::BadSplit("release_v5 holds no problems".into()))?;
            let v6 = load_dir(
                dir,
                &LoadOptions {
                    release: ReleaseTag::Single(6),
                    ..base
                },
            )?;
            let train_ids: HashSet<&str> = train_ds
                .problems
                .iter()
                .map(|p| p.question_id.as_str())
                .collect();
            if let Some(p) = v6
                .problems
                .iter()
                .find(|p| train_ids.contains(p.question_id.as_str()))
            {
                return Err(LcbError::BadSplit(format!(
                    "question {} is in both release_v5 and test6.jsonl",
                    p.question_id
                )));
            }
            let test = v6
                .problems
                .into_iter()
                .filter(|p| p.contest_date > last)
                .collect();
            let mut bad_rows = train_ds.bad_rows;
            bad_rows.extend(v6.bad_rows);
            Ok(Split {
                spec,
                train_rule: "release_v5".into(),
                test_rule: format!("v6, contest_date > {last} (the last release_v5 date)"),
                train: train_ds.problems,
                test,
                bad_rows,
            })
        }
    }
}

/// Write `train.jsonl` and `test.jsonl` into `out_dir`, each line copied byte for byte
/// from the original files (so the outputs load with the same loader), plus
/// `split.json` with the counts.
pub fn write_split(dir: &Path, split: &Split, out_dir: &Path) -> Result<(), LcbError> {
    let io_err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| LcbError::Io { path, source }
    };
    std::fs::create_dir_all(out_dir).map_err(io_err(out_dir))?;
    let same = match (dir.canonicalize(), out_dir.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    if same {
        return Err(LcbError::BadSplit(format!(
            "the output directory {} is the input directory: writing test.jsonl would overwrite the data",
            out_dir.display()
        )));
    }
    let train: HashSet<(u32, usize)> = split
        .train
        .iter()
        .map(|p| (p.source.file, p.source.line))
        .collect();
    let test: HashSet<(u32, usize)> = split
        .test
        .iter()
        .map(|p| (p.source.file, p.source.line))
        .collect();
    let mut files: Vec<u32> = train.iter().chain(&test).map(|k| k.0).collect();
    files.sort_unstable();
    files.dedup();
    let train_path = out_dir.join("train.jsonl");
    let test_path = out_dir.join("test.jsonl");
    let mut w_train = BufWriter::new(File::create(&train_path).map_err(io_err(&train_path))?);
    let mut w_test = BufWriter::new(File::create(&test_path).map_err(io_err(&test_path))?);
    let present = release_files(dir, ReleaseTag::Latest)?;
    for n in files {
        let path = present
            .iter()
            .find(|(k, _)| *k == n)
            .map(|(_, p)| p.clone())
            .unwrap_or_else(|| dir.join(file_name(n)));
        let mut r = BufReader::new(File::open(&path).map_err(io_err(&path))?);
        let mut buf = Vec::new();
        let mut line = 0usize;
        loop {
            buf.clear();
            if r.read_until(b'\n', &mut buf).map_err(io_err(&path))? == 0 {
                break;
            }
            line += 1;
            if !buf.ends_with(b"\n") {
                buf.push(b'\n');
            }
            if train.contains(&(n, line)) {
                w_train.write_all(&buf).map_err(io_err(&train_path))?;
            } else if test.contains(&(n, line)) {
                w_test.write_all(&buf).map_err(io_err(&test_path))?;
            }
        }
    }
    w_train.flush().map_err(io_err(&train_path))?;
    w_test.flush().map_err(io_err(&test_path))?;
    let summary = serde_json::json!({
        "train": split.train_counts(),
        "test": split.test_counts(),
        "bad_rows": split.bad_rows,
    });
    let sp = out_dir.join("split.json");
    let text = serde_json::to_string_pretty(&summary).expect("serializable") + "\n";
    std::fs::write(&sp, text).map_err(io_err(&sp))?;
    Ok(())
}
