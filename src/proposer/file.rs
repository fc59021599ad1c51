//! The `file:PATH` proposer: a fixed harness, e.g. a hand-written oracle (the upper
//! reference line of a report).
//!
//! `PATH` is one of:
//! - one harness file (`.toml`, `.json` or `.py`), proposed for every task;
//! - a directory holding one file per task named by the task's key (the family name,
//!   `lcb` for LiveCodeBench tasks): `DIR/count_primes.py`, `DIR/gcd.toml`, ...;
//!   `DIR/default.{toml,json,py}` covers tasks without their own file;
//! - a pattern with `{key}` in the file name: `suites/harnesses/oracle-{key}.toml`
//!   (`oracle-{key}` or `oracle-{key}.*`: any harness extension).
//!
//! Every file is loaded and validated when the proposer opens, so a broken oracle is
//! an error before the run starts, naming the file. A task with no file gets an invalid candidate that
//! says so (its parent is kept).
//!
//! Each round returns the harness once (the evaluator scores it on the dev set and
//! keeps it if it beats the parent; once it is the parent, later rounds propose it
//! again and it counts as unchanged).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{
    Candidate, Proposal, ProposalRequest, Proposer, ProposerError, ProposerIdentity, Revision,
    RevisionForm, TokenUse,
};
use crate::harness::Harness;

/// See the module doc.
pub struct FileProposer {
    path: PathBuf,
    /// `None` key: the single file for every task.
    harnesses: BTreeMap<Option<String>, (PathBuf, Harness)>,
}

const EXTENSIONS: [&str; 3] = ["toml", "json", "py"];

impl FileProposer {
    pub fn open(path: &Path) -> Result<FileProposer, ProposerError> {
        let mut harnesses: BTreeMap<Option<String>, (PathBuf, Harness)> = BTreeMap::new();
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if let Some((prefix, suffix)) = name.split_once("{key}") {
            // A pattern: `DIR/oracle-{key}.toml` (`{key}.*` or no suffix: any kind).
            let dir = path
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            let entries = std::fs::read_dir(dir).map_err(|e| {
                ProposerError::Usage(format!("file proposer: {}: {e}", dir.display()))
            })?;
            let mut files: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
            files.sort();
            for f in files {
                let Some(fname) = f.file_name().map(|n| n.to_string_lossy().into_owned()) else {
                    continue;
                };
                let ext_ok = f
                    .extension()
                    .and_then(|e| e.to_str())
                    .is_some_and(|e| EXTENSIONS.contains(&e));
                let key = if suffix.is_empty() || suffix == ".*" {
                    fname
                        .strip_prefix(prefix)
                        .filter(|_| ext_ok)
                        .and_then(|r| r.rsplit_once('.').map(|(k, _)| k.to_string()))
                } else {
                    fname
                        .strip_prefix(prefix)
                        .and_then(|r| r.strip_suffix(suffix))
                        .filter(|_| ext_ok)
                        .map(str::to_string)
                };
                let Some(key) = key.filter(|k| !k.is_empty()) else {
                    continue;
                };
                insert_keyed(&mut harnesses, key, f)?;
            }
            if harnesses.is_empty() {
                return Err(ProposerError::Usage(format!(
                    "file proposer: no file matches {}",
                    path.display()
                )));
            }
        } else if path.is_dir() {
            let entries = std::fs::read_dir(path).map_err(|e| {
                ProposerError::Usage(format!("file proposer: {}: {e}", path.display()))
            })?;
            let mut files: Vec<PathBuf> = entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.is_file()
                        && p.extension()
                            .and_then(|e| e.to_str())
                            .is_some_and(|e| EXTENSIONS.contains(&e))
                })
                .collect();
            files.sort();
            for f in files {
                let key = f
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default();
                insert_keyed(&mut harnesses, key, f)?;
            }
            if harnesses.is_empty() {
                return Err(ProposerError::Usage(format!(
                    "file proposer: {} holds no .toml, .json or .py harness",
                    path.display()
                )));
            }
        } else {
            let h = load(path)?;
            harnesses.insert(None, (path.to_path_buf(), h));
        }
        Ok(FileProposer {
            path: path.to_path_buf(),
            harnesses,
        })
    }

    fn for_task(&self, key: &str) -> Option<&(PathBuf, Harness)> {
        self.harnesses
            .get(&None)
            .or_else(|| self.harnesses.get(&Some(key.to_string())))
            .or_else(|| self.harnesses.get(&Some("default".to_string())))
    }
}

fn load(p: &Path) -> Result<Harness, ProposerError> {
    Harness::load(p).map_err(|e| ProposerError::Usage(format!("file proposer: {e}")))
}

/// Load `file` as the harness for `key`; two files for one key are a usage error.
fn insert_keyed(
    harnesses: &mut BTreeMap<Option<String>, (PathBuf, Harness)>,
    key: String,
    file: PathBuf,
) -> Result<(), ProposerError> {
    if let Some((other, _)) = harnesses.get(&Some(key.clone())) {
        return Err(ProposerError::Usage(format!(
            "file proposer: {} and {} are both harnesses for `{key}`",
            other.display(),
            file.display()
        )));
    }
    let h = load(&file)?;
    harnesses.insert(Some(key), (file, h));
    Ok(())
}

impl Proposer for FileProposer {
    fn identity(&self) -> ProposerIdentity {
        let spec = super::ProposerSpec::File(self.path.clone());
        let files: serde_json::Map<String, serde_json::Value> = self
            .harnesses
            .iter()
            .map(|(k, (p, h))| {
                (
                    k.clone().unwrap_or_else(|| "*".into()),
                    serde_json::json!({"path": p.display().to_string(), "hash": h.hash()}),
                )
            })
            .collect();
        ProposerIdentity {
            spec: spec.normalized(),
            kind: "file".into(),
            label: spec.label(),
            details: serde_json::json!({ "files": files }),
        }
    }

    fn wants_report(&self) -> bool {
        false
    }

    fn propose(&self, request: &ProposalRequest<'_>) -> Result<Proposal, ProposerError> {
        let candidate = match self.for_task(&request.task.key) {
            Some((_, h)) => Candidate {
                revision: Revision::Harness {
                    harness: h.clone(),
                    form: RevisionForm::File,
                },
                raw: None,
                tokens: TokenUse::default(),
                cached: false,
            },
            None => Candidate::invalid(
                format!(
                    "{} has no harness for task key `{}` (and no default)",
                    self.path.display(),
                    request.task.key
                ),
                None,
            ),
        };
        Ok(Proposal {
            candidates: vec![candidate],
            prompt: None,
        })
    }
}
