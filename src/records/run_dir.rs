//! The run directory of one evaluation (one proposer):
//!
//! ```text
//! DIR/config.json          fully resolved settings (`eval::config::EvalConfig`)
//! DIR/rollouts.jsonl       every rollout (append-only)
//! DIR/proposals.jsonl      every proposer call, raw outputs included
//! DIR/candidates.jsonl     every candidate with its status, dev score and parent
//! DIR/rounds.jsonl         every round: the kept harness and its test scores
//! DIR/harnesses/<hash>.{toml,py}   every harness that appeared, canonical form
//! DIR/summary.json         metrics with crossed-design intervals (`eval::summary`)
//! DIR/report.md            the same as tables
//! DIR/proposer.stderr.log  a cmd proposer's standard error
//! DIR/.lock                held while a process works in DIR
//! ```
//!
//! Records are appended one line at a time and flushed, so a process killed at any
//! moment loses at most the lines it was writing. Opening a log for appending first
//! cuts a torn last line (written in part when the process died), so the next record
//! starts on a line of its own. The lock (`flock`) refuses a second process in the
//! same directory.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::Serialize;

use super::RecordsError;
use crate::harness::{Harness, HarnessKind};

pub const CONFIG: &str = "config.json";
pub const ROLLOUTS: &str = "rollouts.jsonl";
pub const PROPOSALS: &str = "proposals.jsonl";
pub const CANDIDATES: &str = "candidates.jsonl";
pub const ROUNDS: &str = "rounds.jsonl";
pub const SUMMARY: &str = "summary.json";
pub const REPORT: &str = "report.md";
pub const HARNESSES: &str = "harnesses";
pub const PROPOSER_STDERR: &str = "proposer.stderr.log";
const LOCK: &str = ".lock";

fn io(path: &Path, e: impl std::fmt::Display) -> RecordsError {
    RecordsError::Io(format!("{}: {e}", path.display()))
}

/// An open run directory (locked while this value lives).
pub struct RunDir {
    pub path: PathBuf,
    _lock: Option<File>,
}

impl std::fmt::Debug for RunDir {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RunDir({})", self.path.display())
    }
}

impl RunDir {
    /// Open (creating it if needed) and lock `path`.
    pub fn open(path: &Path) -> Result<RunDir, RecordsError> {
        std::fs::create_dir_all(path.join(HARNESSES)).map_err(|e| io(path, e))?;
        let lock_path = path.join(LOCK);
        let lock = File::create(&lock_path).map_err(|e| io(&lock_path, e))?;
        use std::os::fd::AsRawFd;
        // SAFETY: flock on a descriptor we own.
        let r = unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if r != 0 {
            return Err(RecordsError::Usage(format!(
                "{}: another hrl process is working in this run directory",
                path.display()
            )));
        }
        Ok(RunDir {
            path: path.to_path_buf(),
            _lock: Some(lock),
        })
    }

    /// An existing run directory for reading only (no lock; nothing is written).
    pub fn open_readonly(path: &Path) -> Result<RunDir, RecordsError> {
        if !path.is_dir() {
            return Err(RecordsError::Usage(format!(
                "{}: not a directory",
                path.display()
            )));
        }
        Ok(RunDir {
            path: path.to_path_buf(),
            _lock: None,
        })
    }

    pub fn file(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    /// An appender for one of the logs.
    pub fn appender(&self, name: &str) -> Result<Appender, RecordsError> {
        Appender::open(&self.file(name))
    }

    fn harness_path(&self, hash: &str, kind: HarnessKind) -> PathBuf {
        self.path
            .join(HARNESSES)
            .join(format!("{hash}.{}", kind.extension()))
    }

    /// Write a harness's canonical form unless it is there already.
    pub fn save_harness(&self, h: &Harness) -> Result<(), RecordsError> {
        let p = self.harness_path(&h.hash(), h.kind());
        if p.exists() {
            return Ok(());
        }
        // Several trajectories may save the same harness at once: each writes its own
        // temporary file; the renames all put the same bytes in place.
        static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let tmp = p.with_extension(format!("tmp-{}-{n}", std::process::id()));
        std::fs::write(&tmp, h.canonical())
            .and_then(|()| std::fs::rename(&tmp, &p))
            .map_err(|e| {
                let _ = std::fs::remove_file(&tmp);
                io(&p, e)
            })
    }

    /// Load a saved harness by hash (checking the hash).
    pub fn load_harness(&self, hash: &str) -> Result<Harness, RecordsError> {
        for kind in [HarnessKind::Declarative, HarnessKind::Program] {
            let p = self.harness_path(hash, kind);
            if p.exists() {
                let h = Harness::load(&p).map_err(|e| RecordsError::Damaged(e.to_string()))?;
                if h.hash() != hash {
                    return Err(RecordsError::Damaged(format!(
                        "{}: the file's content hashes to {}",
                        p.display(),
                        h.hash()
                    )));
                }
                return Ok(h);
            }
        }
        Err(RecordsError::Damaged(format!(
            "{}: no harness file for {hash}",
            self.path.join(HARNESSES).display()
        )))
    }
}

/// Write `value` as pretty JSON atomically (temporary file, fsync, rename).
pub fn write_json(path: &Path, value: &impl Serialize) -> Result<(), RecordsError> {
    let tmp = path.with_extension("json.tmp");
    let mut text = serde_json::to_string_pretty(value).map_err(|e| io(path, e))?;
    text.push('\n');
    write_atomic(path, &tmp, text.as_bytes())
}

/// Write text atomically.
pub fn write_text(path: &Path, text: &str) -> Result<(), RecordsError> {
    let tmp = path.with_extension("tmp");
    write_atomic(path, &tmp, text.as_bytes())
}

fn write_atomic(path: &Path, tmp: &Path, bytes: &[u8]) -> Result<(), RecordsError> {
    let r = (|| -> std::io::Result<()> {
        let mut f = File::create(tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(tmp, path)
    })();
    r.map_err(|e| io(path, e))
}

/// An append-only JSON-lines log, one flushed line per record, shared by threads.
pub struct Appender {
    path: PathBuf,
    file: Mutex<File>,
}

impl Appender {
    /// Open for appending, cutting a torn last line first.
    pub fn open(path: &Path) -> Result<Appender, RecordsError> {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .read(true)
            .append(true)
            .open(path)
            .map_err(|e| io(path, e))?;
        let len = f.metadata().map_err(|e| io(path, e))?.len();
        if len > 0 {
            // Find the end of the last complete line.
            let mut keep = len;
            let mut buf = vec![0u8; 64 * 1024];
            let mut pos = len;
            'scan: while pos > 0 {
                let n = buf.len().min(pos as usize);
                pos -= n as u64;
                f.seek(SeekFrom::Start(pos)).map_err(|e| io(path, e))?;
                f.read_exact(&mut buf[..n]).map_err(|e| io(path, e))?;
                for i in (0..n).rev() {
                    if buf[i] == b'\n' {
                        keep = pos + i as u64 + 1;
                        break 'scan;
                    }
                }
                keep = 0;
            }
            if keep < len {
                f.set_len(keep).map_err(|e| io(path, e))?;
            }
        }
        Ok(Appender {
            path: path.to_path_buf(),
            file: Mutex::new(f),
        })
    }

    /// Append one record as a line and flush it to the file.
    pub fn append(&self, record: &impl Serialize) -> Result<(), RecordsError> {
        let mut line = serde_json::to_vec(record).map_err(|e| io(&self.path, e))?;
        line.push(b'\n');
        let mut f = self.file.lock().unwrap_or_else(|e| e.into_inner());
        f.write_all(&line)
            .and_then(|()| f.flush())
            .map_err(|e| io(&self.path, e))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_torn_last_line_is_cut_before_appending() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x.jsonl");
        std::fs::write(&p, "{\"a\":1}\n{\"a\":2}\n{\"a\":").unwrap();
        let a = Appender::open(&p).unwrap();
        a.append(&serde_json::json!({"a": 3})).unwrap();
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            "{\"a\":1}\n{\"a\":2}\n{\"a\":3}\n"
        );
        // A file that is one torn line becomes empty.
        std::fs::write(&p, "{\"a\":").unwrap();
        Appender::open(&p).unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "");
    }

    #[test]
    fn a_second_process_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let _a = RunDir::open(d.path()).unwrap();
        // flock locks are per open file description: a second open conflicts.
        let e = RunDir::open(d.path()).unwrap_err();
        assert!(e.to_string().contains("another hrl process"), "{e}");
    }
}
