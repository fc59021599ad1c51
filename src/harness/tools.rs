//! The Python tool: short programs (a program strategy's program, a python-tool
//! call, a program harness's `python(...)`) run in warm sandbox sessions.
//!
//! A [`ToolPool`] keeps idle [`crate::sandbox::Session`]s and lends one per run, so a
//! tool call costs a fork of the warm worker (about 2 ms) instead of a sandbox start
//! (about 70 ms). Every program still runs in its own forked child with its own
//! limits, and after each one the worker kills every other process of the sandbox
//! and empties `/work` and `/tmp`: nothing of one run reaches the next. Sessions are
//! never shared by two runs at once.

use std::sync::Mutex;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::rollout::{ToolCall, ToolPurpose};
use crate::sandbox::{Limits, RunRequest, Sandbox, Session};

/// Limits of one tool run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolLimits {
    /// Wall clock of one run (the CPU limit follows it).
    pub timeout: Duration,
    pub memory_mb: u64,
    /// Bytes of stdout and of stderr kept.
    pub output_bytes: usize,
}

impl Default for ToolLimits {
    fn default() -> Self {
        ToolLimits {
            timeout: Duration::from_secs(10),
            memory_mb: 512,
            output_bytes: 64 << 10,
        }
    }
}

impl ToolLimits {
    pub fn sandbox_limits(&self, timeout: Duration) -> Limits {
        let t = timeout.min(self.timeout).max(Duration::from_millis(100));
        Limits {
            wall: t,
            cpu_seconds: t.as_secs().max(1) + 1,
            memory_mb: self.memory_mb,
            file_size_bytes: 16 << 20,
            open_files: 64,
            processes: 16,
            output_bytes: self.output_bytes,
        }
    }
}

/// Idle warm sessions, lent one run at a time.
pub struct ToolPool {
    sandbox: Sandbox,
    limits: ToolLimits,
    idle: Mutex<Vec<Session>>,
}

impl ToolPool {
    pub fn new(sandbox: Sandbox, limits: ToolLimits) -> ToolPool {
        ToolPool {
            sandbox,
            limits,
            idle: Mutex::new(Vec::new()),
        }
    }

    pub fn limits(&self) -> &ToolLimits {
        &self.limits
    }

    pub fn sandbox(&self) -> &Sandbox {
        &self.sandbox
    }

    /// Run `program` (as `main.py`, with `files` beside it) and record the call.
    /// `timeout` is capped by the pool's limit.
    pub fn run(
        &self,
        purpose: ToolPurpose,
        program: &str,
        files: Vec<(String, Vec<u8>)>,
        stdin: &str,
        timeout: Duration,
        recorded_code: &str,
    ) -> ToolCall {
        let req = RunRequest {
            program: program.to_string(),
            stdin: stdin.as_bytes().to_vec(),
            files,
            limits: self.limits.sandbox_limits(timeout),
        };
        let session = self
            .idle
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop()
            .map(Ok)
            .unwrap_or_else(|| self.sandbox.session(&req.limits));
        let result = session.and_then(|mut s| {
            let r = s.run(&req);
            if r.is_ok() {
                self.idle.lock().unwrap_or_else(|e| e.into_inner()).push(s);
            }
            r
        });
        match result {
            Ok(r) => ToolCall {
                purpose,
                code: recorded_code.to_string(),
                stdin: stdin.to_string(),
                stdout: String::from_utf8_lossy(&r.stdout).into_owned(),
                stderr: String::from_utf8_lossy(&r.stderr).into_owned(),
                exit_code: r.exit_code,
                end: Some(r.end),
                wall_ms: r.wall_ms,
                cpu_ms: r.cpu_ms,
                error: None,
            },
            Err(e) => ToolCall {
                purpose,
                code: recorded_code.to_string(),
                stdin: stdin.to_string(),
                stdout: String::new(),
                stderr: String::new(),
                exit_code: None,
                end: None,
                wall_ms: 0,
                cpu_ms: 0,
                error: Some(format!("sandbox: {e}")),
            },
        }
    }
}
