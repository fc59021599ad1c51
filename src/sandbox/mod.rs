//! Sandboxed execution of untrusted (model-written) Python.
//!
//! API contract shared with the grader (`lcb`) and the harness's Python tool:
//! [`Sandbox::new`] checks which isolation layers this machine offers and refuses to
//! build a sandbox without them unless the caller explicitly opts out
//! (`unsafe_no_isolation`); [`Sandbox::run`] executes one [`RunRequest`] (a Python
//! program written to `main.py` in a fresh private working directory, optional extra
//! files, stdin, limits) and returns a structured [`RunResult`].
//!
//! INTERIM IMPLEMENTATION: this first version only runs unisolated (process group,
//! wall clock, output caps). The isolated implementation replaces `run_unisolated`.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// Resource limits for one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Limits {
    /// Wall-clock limit; the whole process tree is killed when it passes.
    pub wall: Duration,
    pub cpu_seconds: u64,
    pub memory_mb: u64,
    /// Largest file the program may write, in bytes.
    pub file_size_bytes: u64,
    pub open_files: u64,
    pub processes: u64,
    /// Bytes of stdout (and separately of stderr) kept; the rest is cut.
    pub output_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            wall: Duration::from_secs(10),
            cpu_seconds: 10,
            memory_mb: 1024,
            file_size_bytes: 16 << 20,
            open_files: 64,
            processes: 32,
            output_bytes: 1 << 20,
        }
    }
}

/// How a sandbox is built.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SandboxConfig {
    /// The Python interpreter (inside the sandbox's view of the file system).
    pub python: PathBuf,
    /// Run even when isolation layers are missing. Never the default.
    pub unsafe_no_isolation: bool,
}

impl Default for SandboxConfig {
    fn default() -> Self {
        SandboxConfig {
            python: PathBuf::from("python3"),
            unsafe_no_isolation: false,
        }
    }
}

/// One program to run.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RunRequest {
    /// Python source, written to `main.py` in the private working directory.
    pub program: String,
    pub stdin: Vec<u8>,
    /// Extra files `(relative name, contents)` placed next to `main.py`.
    pub files: Vec<(String, Vec<u8>)>,
    pub limits: Limits,
}

/// Why a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    /// The program exited by itself (any exit status).
    Exited,
    /// The wall-clock or CPU limit passed.
    Timeout,
    /// The memory limit was hit.
    Memory,
    /// The output cap was exceeded and the run was stopped.
    OutputLimit,
    /// Killed by a signal for another reason.
    Killed,
}

/// The structured result of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub stdout_truncated: bool,
    pub stderr_truncated: bool,
    pub wall_ms: u64,
    pub cpu_ms: u64,
    pub peak_memory_kb: u64,
    pub end: EndReason,
}

/// Sandbox failures (not failures of the program, which are reported in `RunResult`).
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("isolation layer unavailable: {0} (pass --unsafe-no-isolation to run without it)")]
    IsolationUnavailable(String),
    #[error("sandbox I/O error: {0}")]
    Io(#[from] std::io::Error),
    #[error("invalid request: {0}")]
    InvalidRequest(String),
}

/// A configured sandbox; cheap to share across threads.
#[derive(Debug, Clone)]
pub struct Sandbox {
    config: SandboxConfig,
}

impl Sandbox {
    pub fn new(config: SandboxConfig) -> Result<Sandbox, SandboxError> {
        if !config.unsafe_no_isolation {
            return Err(SandboxError::IsolationUnavailable(
                "the isolated runner is not built yet".into(),
            ));
        }
        Ok(Sandbox { config })
    }

    pub fn run(&self, req: &RunRequest) -> Result<RunResult, SandboxError> {
        self.run_unisolated(req)
    }

    fn run_unisolated(&self, req: &RunRequest) -> Result<RunResult, SandboxError> {
        use std::os::unix::process::{CommandExt, ExitStatusExt};
        let dir = std::env::temp_dir().join(format!(
            "hrl-sbx-{}-{}",
            std::process::id(),
            Instant::now().elapsed().as_nanos() ^ (req as *const _ as u128)
        ));
        std::fs::create_dir_all(&dir)?;
        std::fs::write(dir.join("main.py"), &req.program)?;
        for (name, data) in &req.files {
            if name.contains("..") || name.starts_with('/') {
                return Err(SandboxError::InvalidRequest(format!("file name {name:?}")));
            }
            std::fs::write(dir.join(name), data)?;
        }
        let start = Instant::now();
        let mut child = Command::new(&self.config.python)
            .arg("main.py")
            .current_dir(&dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()?;
        let pid = child.id() as i32;
        let mut stdin = child.stdin.take();
        let input = req.stdin.clone();
        let feeder = std::thread::spawn(move || {
            if let Some(s) = stdin.as_mut() {
                let _ = s.write_all(&input);
            }
        });
        let cap = req.limits.output_bytes;
        let reader = |mut r: Box<dyn Read + Send>| {
            std::thread::spawn(move || {
                let mut kept = Vec::new();
                let mut buf = [0u8; 8192];
                let mut truncated = false;
                while let Ok(n) = r.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    let room = cap.saturating_sub(kept.len());
                    kept.extend_from_slice(&buf[..n.min(room)]);
                    truncated |= n > room;
                }
                (kept, truncated)
            })
        };
        let out = reader(Box::new(child.stdout.take().expect("piped")));
        let err = reader(Box::new(child.stderr.take().expect("piped")));
        let mut end = EndReason::Exited;
        let status = loop {
            if let Some(st) = child.try_wait()? {
                break st;
            }
            if start.elapsed() > req.limits.wall {
                end = EndReason::Timeout;
                let _ = Command::new("kill")
                    .args(["-KILL", "--", &format!("-{pid}")])
                    .status();
                break child.wait()?;
            }
            std::thread::sleep(Duration::from_millis(2));
        };
        let _ = feeder.join();
        let (stdout, stdout_truncated) = out.join().unwrap_or_default();
        let (stderr, stderr_truncated) = err.join().unwrap_or_default();
        let _ = std::fs::remove_dir_all(&dir);
        Ok(RunResult {
            exit_code: status.code(),
            signal: status.signal(),
            stdout,
            stderr,
            stdout_truncated,
            stderr_truncated,
            wall_ms: start.elapsed().as_millis() as u64,
            cpu_ms: 0,
            peak_memory_kb: 0,
            end,
        })
    }
}
