//! `hrl sandbox run FILE.py`: run one Python file in the sandbox and print the
//! structured result as JSON (stdout/stderr as lossy UTF-8 strings).

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use harness_rl::sandbox::{Limits, RunRequest, RunResult, Sandbox, SandboxConfig};
use serde_json::json;

use super::UsageError;

#[derive(Subcommand)]
pub enum SandboxCmd {
    /// Run FILE.py isolated (no network, private tmpfs working directory, limits) and
    /// print the result as JSON.
    Run(RunArgs),
}

#[derive(Args)]
pub struct RunArgs {
    /// The Python program to run (copied into the sandbox as main.py).
    pub file: PathBuf,
    /// Feed this file to the program's standard input.
    #[arg(long)]
    pub stdin: Option<PathBuf>,
    /// Wall-clock limit in seconds (the CPU limit follows it, rounded up).
    #[arg(long, default_value_t = 10.0)]
    pub timeout: f64,
    /// Memory limit in MB.
    #[arg(long, default_value_t = 1024)]
    pub memory: u64,
    /// The interpreter to run the program with.
    #[arg(long, default_value = "python3")]
    pub python: PathBuf,
    /// Run even where isolation layers are missing (namespaces, cgroups). Only for
    /// trusted code.
    #[arg(long)]
    pub unsafe_no_isolation: bool,
}

pub fn run(cmd: SandboxCmd) -> Result<()> {
    match cmd {
        SandboxCmd::Run(a) => run_file(a),
    }
}

fn run_file(a: RunArgs) -> Result<()> {
    if !(a.timeout.is_finite() && a.timeout > 0.0 && a.timeout <= 86_400.0) {
        return Err(UsageError(format!(
            "--timeout {}: must be in (0, 86400] seconds",
            a.timeout
        ))
        .into());
    }
    if a.memory < 32 {
        return Err(UsageError(format!("--memory {}: must be at least 32 MB", a.memory)).into());
    }
    let program =
        std::fs::read(&a.file).with_context(|| format!("reading {}", a.file.display()))?;
    let program = String::from_utf8(program)
        .map_err(|e| UsageError(format!("{}: not UTF-8 ({e})", a.file.display())))?;
    let stdin = match &a.stdin {
        Some(p) => std::fs::read(p).with_context(|| format!("reading {}", p.display()))?,
        None => Vec::new(),
    };
    let sandbox = Sandbox::new(SandboxConfig {
        python: a.python,
        unsafe_no_isolation: a.unsafe_no_isolation,
    })?;
    let limits = Limits {
        wall: Duration::from_secs_f64(a.timeout),
        cpu_seconds: a.timeout.ceil() as u64,
        memory_mb: a.memory,
        ..Limits::default()
    };
    let result = sandbox.run(&RunRequest {
        program,
        stdin,
        files: Vec::new(),
        limits,
    })?;
    // A write error (e.g. the reader went away: exit code 0) is returned, not a panic.
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{}",
        serde_json::to_string_pretty(&result_json(&result, &sandbox))?
    )?;
    out.flush()?;
    Ok(())
}

fn result_json(r: &RunResult, sb: &Sandbox) -> serde_json::Value {
    json!({
        "end": r.end,
        "exit_code": r.exit_code,
        "signal": r.signal,
        "stdout": String::from_utf8_lossy(&r.stdout),
        "stderr": String::from_utf8_lossy(&r.stderr),
        "stdout_truncated": r.stdout_truncated,
        "stderr_truncated": r.stderr_truncated,
        "wall_ms": r.wall_ms,
        "cpu_ms": r.cpu_ms,
        "peak_memory_kb": r.peak_memory_kb,
        "missing_layers": sb.isolation().missing.iter().map(|(l, why)| json!({"layer": l, "why": why})).collect::<Vec<_>>(),
    })
}
