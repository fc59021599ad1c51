//! Sandboxed execution of untrusted (model-written) Python.
//!
//! API contract shared with the grader (`lcb`) and the harness's Python tool:
//! [`Sandbox::new`] checks which isolation layers this machine offers and refuses to
//! build a sandbox without them unless the caller explicitly opts out
//! (`unsafe_no_isolation`); [`Sandbox::run`] executes one [`RunRequest`] (a Python
//! program written to `main.py` in a fresh private working directory, optional extra
//! files, stdin, limits) and returns a structured [`RunResult`].
//!
//! Layers (see docs/ARCHITECTURE.md, "sandbox"): bubblewrap namespaces (user, pid,
//! net, mount, ipc, uts, cgroup) with an unprivileged uid, a read-only view of the
//! system and the interpreter only, tmpfs working directory and `/tmp`, a clean
//! environment; a per-run cgroup (`pids`, `memory`, `cpuacct`); rlimits; a wall clock
//! that kills the whole tree; capped output. [`Session`] keeps one sandboxed Python
//! worker warm and runs many programs through it, each in a forked child.

mod cgroup;
mod runner;
mod seccomp;
mod session;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

pub use cgroup::CgroupBases;
pub use session::Session;

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

/// Environment variable that tells a program run with a channel
/// ([`Sandbox::run_with_channel`]) its two descriptors: `READ_FD,WRITE_FD`.
pub const CHANNEL_ENV: &str = "HRL_CHANNEL_FDS";

/// The host side of a message channel: one call per newline-terminated message the
/// program writes. Time spent here does not count against the run's wall clock (the
/// program is waiting for the host, e.g. for a model completion); its CPU limit and
/// everything else still apply.
pub trait ChannelHandler: Send {
    /// Answer one message (without its newline).
    fn message(&mut self, message: &[u8]) -> ChannelReply;
}

/// What the host does with one channel message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChannelReply {
    /// Write these bytes and a newline back to the program.
    Reply(Vec<u8>),
    /// Send nothing (a notification).
    Silent,
    /// The program broke the protocol: it is killed (`EndReason::Killed`) and the
    /// reason is reported in [`ChannelRun::violation`].
    Violation(String),
}

/// The result of a run with a channel.
#[derive(Debug, Clone, PartialEq)]
pub struct ChannelRun {
    pub result: RunResult,
    /// Messages answered.
    pub messages: u64,
    /// Milliseconds spent in the handler (excluded from the wall clock).
    pub handler_ms: u64,
    /// Why the program was stopped for breaking the protocol, if it was.
    pub violation: Option<String>,
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

impl crate::error::Classify for SandboxError {
    fn kind(&self) -> crate::error::ErrorKind {
        match self {
            SandboxError::InvalidRequest(_) => crate::error::ErrorKind::Usage,
            SandboxError::IsolationUnavailable(_) | SandboxError::Io(_) => {
                crate::error::ErrorKind::Runtime
            }
        }
    }
}

/// An isolation layer the sandbox relies on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Layer {
    /// bubblewrap: user/pid/net/mount/ipc/uts namespaces, unprivileged uid, private
    /// file system view. Without it a run can read and write the host.
    Namespaces,
    /// cgroup v1 `pids`, `memory`, `cpuacct`: process count (fork bombs), memory,
    /// whole-tree CPU accounting, and reliable whole-tree kill.
    Cgroups,
}

impl Layer {
    pub fn name(self) -> &'static str {
        match self {
            Layer::Namespaces => "namespaces (bubblewrap)",
            Layer::Cgroups => "cgroups (pids, memory, cpuacct)",
        }
    }
}

/// The interpreter as resolved on the host (a pyenv shim or a venv is resolved to the
/// real executable and the directories it needs), with what a program run by it can
/// import: its version and the distributions installed where the sandbox sees them.
#[derive(Debug, Clone, PartialEq)]
pub struct PythonInstall {
    pub executable: PathBuf,
    /// Directories bound read-only into the sandbox besides `/usr` (the install prefix
    /// of an interpreter that lives elsewhere, e.g. under a home directory).
    pub extra_ro_dirs: Vec<PathBuf>,
    /// Implementation and version, e.g. `cpython 3.11.7`.
    pub version: String,
    /// Installed distributions as `name==version`, sorted (case-insensitively) and
    /// deduplicated: the base installation's and, for a venv, the venv's; never the
    /// user site (`-s`), which the sandbox does not bind.
    pub packages: Vec<String>,
}

/// The part of a sandbox's interpreter that can change a program's result, as
/// recorded in run summaries and hashed into the result identity of rollouts (a
/// program that imports numpy fails where numpy is missing).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PythonIdentity {
    pub executable: String,
    /// Implementation and version, e.g. `cpython 3.11.7`.
    pub version: String,
    pub packages: Vec<String>,
    /// 16 hex digits over the version and the packages (not the path: the same
    /// environment installed elsewhere is the same environment).
    pub hash: String,
}

/// What the interpreter is asked about itself: one JSON object on one line.
const PYTHON_PROBE: &str = r#"import sys, json
try:
    from importlib import metadata
    pk = set()
    for d in metadata.distributions():
        name = d.metadata["Name"]
        if name:
            pk.add(f"{name}=={d.version}")
    pk = sorted(pk, key=lambda p: (p.lower(), p))
except Exception:
    pk = []
print(json.dumps({"executable": sys.executable, "prefix": sys.prefix,
    "base_prefix": sys.base_prefix,
    "version": sys.implementation.name + " " + sys.version.split()[0], "packages": pk}))
"#;

#[derive(Deserialize)]
struct ProbeReply {
    executable: String,
    prefix: String,
    base_prefix: String,
    version: String,
    packages: Vec<String>,
}

impl PythonInstall {
    /// Ask `python` (trusted: it is the configured interpreter) where it lives and
    /// what it has installed.
    pub fn resolve(python: &Path) -> Result<PythonInstall, SandboxError> {
        let out = Command::new(python)
            .args(["-s", "-c", PYTHON_PROBE])
            .env_remove("PYTHONPATH")
            .env_remove("PYTHONHOME")
            .env_remove("PYTHONUSERBASE")
            .output()
            .map_err(|e| {
                SandboxError::IsolationUnavailable(format!(
                    "python interpreter {}: {e}",
                    python.display()
                ))
            })?;
        let text = String::from_utf8_lossy(&out.stdout);
        let reply = serde_json::from_str::<ProbeReply>(text.trim())
            .ok()
            .filter(|r| out.status.success() && !r.executable.is_empty());
        let Some(reply) = reply else {
            return Err(SandboxError::IsolationUnavailable(format!(
                "python interpreter {} did not report its location: {}",
                python.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        };
        let executable = PathBuf::from(&reply.executable);
        let mut extra_ro_dirs = Vec::new();
        let real_exe = std::fs::canonicalize(&executable)?;
        for p in [
            Path::new(&reply.prefix),
            Path::new(&reply.base_prefix),
            real_exe.as_path(),
        ] {
            let dir = if p == real_exe.as_path() {
                p.parent()
                    .and_then(|b| b.parent())
                    .unwrap_or(p)
                    .to_path_buf()
            } else {
                p.to_path_buf()
            };
            let canon = std::fs::canonicalize(&dir).unwrap_or(dir.clone());
            for d in [dir, canon] {
                if !d.starts_with("/usr") && d != Path::new("/") && !extra_ro_dirs.contains(&d) {
                    extra_ro_dirs.push(d);
                }
            }
        }
        Ok(PythonInstall {
            executable,
            extra_ro_dirs,
            version: reply.version,
            packages: reply.packages,
        })
    }

    /// Refuse an interpreter the sandbox could not see: one that lives under a
    /// directory the sandbox mounts its own file systems over (its working directory,
    /// `/tmp`, `/dev`, `/proc`), where every program would fail to start.
    fn check_visible(&self, configured: &Path) -> Result<(), SandboxError> {
        let hidden = [runner::WORKDIR, "/tmp", "/dev", "/proc"];
        let exe = std::fs::canonicalize(&self.executable).unwrap_or(self.executable.clone());
        let dirs = std::iter::once(&self.executable)
            .chain(std::iter::once(&exe))
            .chain(&self.extra_ro_dirs);
        for d in dirs {
            if let Some(h) = hidden.iter().find(|h| d.starts_with(h)) {
                return Err(SandboxError::IsolationUnavailable(format!(
                    "python interpreter {}: it needs {}, under {h}, which the sandbox replaces \
                     with its own (private) file system, so no program could start; use an \
                     interpreter or venv installed elsewhere (e.g. under $HRL_HOME)",
                    configured.display(),
                    d.display()
                )));
            }
        }
        Ok(())
    }

    /// [`PythonIdentity::hash`]: 16 hex digits over the version and the packages,
    /// without copying them (runtimes derive their config hash from it per rollout).
    pub fn hash(&self) -> String {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        h.update(b"harness-rl/sandbox-python/v1\0");
        h.update(self.version.as_bytes());
        for p in &self.packages {
            h.update([0]);
            h.update(p.as_bytes());
        }
        h.finalize()[..8]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    /// The interpreter as recorded in results.
    pub fn identity(&self) -> PythonIdentity {
        PythonIdentity {
            executable: self.executable.display().to_string(),
            version: self.version.clone(),
            packages: self.packages.clone(),
            hash: self.hash(),
        }
    }
}

/// Which layers a sandbox uses and which are missing on this machine.
#[derive(Debug, Clone, PartialEq)]
pub struct Isolation {
    pub bwrap: Option<PathBuf>,
    pub cgroups: Option<CgroupBases>,
    /// `(layer, why it is unavailable)`.
    pub missing: Vec<(Layer, String)>,
}

impl Isolation {
    /// Probe this machine. `disabled` layers are reported missing without probing
    /// (used to exercise the degraded paths).
    pub fn probe(disabled: &[Layer]) -> Isolation {
        let disabled: Vec<(Layer, &str)> = disabled
            .iter()
            .map(|&l| (l, "disabled by the caller"))
            .collect();
        Isolation::probe_except(&disabled)
    }

    /// As [`Isolation::probe`], each disabled layer with the reason to report.
    fn probe_except(disabled: &[(Layer, &str)]) -> Isolation {
        let why_disabled = |layer: Layer| {
            disabled
                .iter()
                .find(|(l, _)| *l == layer)
                .map(|(_, why)| why.to_string())
        };
        let mut missing = Vec::new();
        let bwrap = if let Some(why) = why_disabled(Layer::Namespaces) {
            missing.push((Layer::Namespaces, why));
            None
        } else {
            match runner::probe_bwrap() {
                Ok(p) => Some(p),
                Err(why) => {
                    missing.push((Layer::Namespaces, why));
                    None
                }
            }
        };
        let cgroups = if let Some(why) = why_disabled(Layer::Cgroups) {
            missing.push((Layer::Cgroups, why));
            None
        } else {
            match CgroupBases::probe() {
                Ok(b) => {
                    cgroup::sweep_stale(&b);
                    Some(b)
                }
                Err(why) => {
                    missing.push((Layer::Cgroups, why));
                    None
                }
            }
        };
        Isolation {
            bwrap,
            cgroups,
            missing,
        }
    }

    pub fn is_complete(&self) -> bool {
        self.missing.is_empty()
    }
}

/// Test knob: a comma-separated list of layers (`namespaces`, `cgroups`) that
/// [`Sandbox::new`] treats as missing, so that the refusal and the
/// `--unsafe-no-isolation` paths of `hrl sandbox run` and `hrl lcb grade` can be
/// tested on a machine that has every layer. It can only take isolation away, and a
/// sandbox with a missing layer refuses to run unless `unsafe_no_isolation` is set.
/// Not meant for anything but tests; an unknown name is an error.
pub const DISABLE_LAYERS_ENV: &str = "HRL_SANDBOX_DISABLE_LAYERS";

/// The layers named in [`DISABLE_LAYERS_ENV`] (none when it is unset or empty).
fn disabled_by_env() -> Result<Vec<Layer>, SandboxError> {
    let Some(value) = std::env::var_os(DISABLE_LAYERS_ENV) else {
        return Ok(Vec::new());
    };
    let value = value.to_string_lossy();
    let mut layers = Vec::new();
    for name in value.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let layer = match name {
            "namespaces" => Layer::Namespaces,
            "cgroups" => Layer::Cgroups,
            other => {
                return Err(SandboxError::InvalidRequest(format!(
                    "{DISABLE_LAYERS_ENV}: unknown layer `{other}` (known: namespaces, cgroups)"
                )));
            }
        };
        if !layers.contains(&layer) {
            layers.push(layer);
        }
    }
    Ok(layers)
}

/// A configured sandbox; cheap to share across threads.
#[derive(Debug, Clone)]
pub struct Sandbox {
    config: SandboxConfig,
    python: PythonInstall,
    isolation: Isolation,
}

impl Sandbox {
    /// Probe the machine and build a sandbox. Refuses (naming each missing layer)
    /// unless `config.unsafe_no_isolation` is set. Layers named in the test knob
    /// [`DISABLE_LAYERS_ENV`] count as missing.
    pub fn new(config: SandboxConfig) -> Result<Sandbox, SandboxError> {
        let from_env = disabled_by_env()?;
        let disabled: Vec<(Layer, &str)> = from_env
            .iter()
            .map(|&l| (l, "disabled by HRL_SANDBOX_DISABLE_LAYERS (a test knob)"))
            .collect();
        Sandbox::build(config, Isolation::probe_except(&disabled))
    }

    /// As [`Sandbox::new`], treating `disabled` layers as missing (and ignoring
    /// [`DISABLE_LAYERS_ENV`]).
    pub fn with_disabled_layers(
        config: SandboxConfig,
        disabled: &[Layer],
    ) -> Result<Sandbox, SandboxError> {
        Sandbox::build(config, Isolation::probe(disabled))
    }

    fn build(config: SandboxConfig, isolation: Isolation) -> Result<Sandbox, SandboxError> {
        if !isolation.is_complete() && !config.unsafe_no_isolation {
            let why: Vec<String> = isolation
                .missing
                .iter()
                .map(|(l, why)| format!("{}: {why}", l.name()))
                .collect();
            return Err(SandboxError::IsolationUnavailable(why.join("; ")));
        }
        let python = PythonInstall::resolve(&config.python)?;
        python.check_visible(&config.python)?;
        Ok(Sandbox {
            config,
            python,
            isolation,
        })
    }

    pub fn config(&self) -> &SandboxConfig {
        &self.config
    }

    pub fn isolation(&self) -> &Isolation {
        &self.isolation
    }

    pub fn python(&self) -> &PythonInstall {
        &self.python
    }

    /// Run one program in a fresh sandbox.
    pub fn run(&self, req: &RunRequest) -> Result<RunResult, SandboxError> {
        validate(req)?;
        runner::run_once(self, req)
    }

    /// Run one program in a fresh sandbox with a message channel to the host: two
    /// pipes whose descriptor numbers the program finds in [`CHANNEL_ENV`]. Every
    /// newline-terminated message it writes is passed to `handler`, whose reply (if
    /// any) is written back with a newline. A message longer than
    /// `max_message_bytes` is a protocol violation. The wall clock excludes the time
    /// the handler spends answering; every other limit and layer is as in
    /// [`Sandbox::run`].
    pub fn run_with_channel(
        &self,
        req: &RunRequest,
        handler: &mut dyn ChannelHandler,
        max_message_bytes: usize,
    ) -> Result<ChannelRun, SandboxError> {
        validate(req)?;
        runner::run_with(self, req, Some((handler, max_message_bytes)))
    }

    /// Start a warm worker for many runs (see [`Session`]); `limits` size the
    /// session's cgroup.
    pub fn session(&self, limits: &Limits) -> Result<Session, SandboxError> {
        Session::start(self, limits)
    }
}

/// Check a request before anything is created.
pub(crate) fn validate(req: &RunRequest) -> Result<(), SandboxError> {
    let l = &req.limits;
    if l.wall.is_zero() || l.cpu_seconds == 0 || l.memory_mb == 0 || l.processes == 0 {
        return Err(SandboxError::InvalidRequest(format!(
            "limits must be positive (wall {:?}, cpu {} s, memory {} MB, processes {})",
            l.wall, l.cpu_seconds, l.memory_mb, l.processes
        )));
    }
    if l.open_files < 16 {
        return Err(SandboxError::InvalidRequest(format!(
            "open_files {} is below the 16 the interpreter needs",
            l.open_files
        )));
    }
    if l.memory_mb < 32 {
        return Err(SandboxError::InvalidRequest(format!(
            "memory_mb {} is below the 32 MB the interpreter needs",
            l.memory_mb
        )));
    }
    for (name, _) in &req.files {
        let ok = !name.is_empty()
            && name != "main.py"
            && !name.starts_with('/')
            && name.len() <= 255
            && !name.contains('\0')
            && name
                .split('/')
                .all(|c| !c.is_empty() && c != "." && c != "..");
        if !ok {
            return Err(SandboxError::InvalidRequest(format!(
                "file name {name:?}: must be a relative path without `.`/`..` components, other than main.py"
            )));
        }
    }
    Ok(())
}
