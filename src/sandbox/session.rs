//! Warm sessions: one sandbox (bubblewrap namespaces + one cgroup) holding a Python
//! worker that runs as PID 1 of its PID namespace and executes each program in a forked
//! child with its own rlimits, its own stdin, capped output and a wall clock. After
//! every program the worker SIGKILLs every other process of the namespace and clears
//! `/work` and `/tmp`, so nothing of one run survives into the next. Starting the
//! sandbox and the interpreter is paid once per session instead of once per test.
//!
//! Lifetime: a session may be started on one thread and used on others (the tool pool
//! lends it), so the worker has no parent-death signal (Linux sends that when the
//! starting *thread* exits). It watches its control pipe instead, during runs too: at
//! EOF (the session dropped, or the process holding it killed) it exits, and as PID 1
//! of its namespace takes every process of the sandbox with it. A worker found dead
//! between runs is replaced before the next run (counted in `restarts`).
//!
//! What a session does not isolate: programs of one session share the interpreter's
//! already-imported modules (a fork of the worker) and run as the same uid as the
//! worker; the worker is PID 1 (unkillable from inside) and not dumpable (cannot be
//! traced), so a program cannot forge another program's result. Use one session per
//! solution. Without namespaces (`unsafe_no_isolation`) a session runs every program
//! one-shot instead, because the worker's kill-everything cleanup is only safe as a
//! namespace init.

use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;
use std::process::{ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use serde::Deserialize;

use super::cgroup::RunCgroup;
use super::runner::{self, PidFd, PreExec};
use super::{EndReason, Limits, RunRequest, RunResult, Sandbox, SandboxError, validate};

const WORKER_SOURCE: &str = include_str!("worker.py");
/// Extra wall time the worker gets to report before the session presumes it hung.
const REPORT_GRACE: Duration = Duration::from_secs(5);

/// The start of a worker's stderr (bubblewrap's and the interpreter's own messages,
/// e.g. `bwrap: execvp …: No such file or directory`), read by a thread that discards
/// the rest so the worker can never block on a full pipe.
struct StderrTail {
    kept: Arc<Mutex<Vec<u8>>>,
    done: mpsc::Receiver<()>,
}

impl StderrTail {
    const KEEP: usize = 4096;

    fn drain(mut pipe: std::process::ChildStderr) -> StderrTail {
        let kept = Arc::new(Mutex::new(Vec::new()));
        let (tx, done) = mpsc::channel();
        let k = Arc::clone(&kept);
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let mut k = k.lock().unwrap_or_else(|p| p.into_inner());
                let room = StderrTail::KEEP.saturating_sub(k.len());
                k.extend_from_slice(&buf[..n.min(room)]);
            }
            let _ = tx.send(());
        });
        StderrTail { kept, done }
    }

    /// What the (killed) worker wrote, as `; stderr: …`, or nothing; waits a moment for
    /// the pipe to close.
    fn after_exit(&self) -> String {
        let _ = self.done.recv_timeout(Duration::from_secs(2));
        let k = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        let text = String::from_utf8_lossy(&k);
        let text = text.trim();
        if text.is_empty() {
            String::new()
        } else {
            format!("; stderr: {text}")
        }
    }
}

struct Worker {
    pid: i32,
    pidfd: PidFd,
    ctl_in: ChildStdin,
    ctl_out: ChildStdout,
    cg: Option<RunCgroup>,
}

impl Worker {
    /// Between runs a live worker writes nothing and keeps its control pipe open, so
    /// a readable or hung-up pipe means it exited (or broke the protocol).
    fn idle_and_alive(&self) -> bool {
        let mut pfd = libc::pollfd {
            fd: self.ctl_out.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd; timeout 0 does not block.
        let rc = unsafe { libc::poll(&mut pfd, 1, 0) };
        rc == 0
    }

    fn kill(self) {
        self.pidfd.kill();
        drop(self.ctl_in);
        runner::wait4(self.pid);
        // Dropping the cgroup SIGKILLs anything left and removes it.
        drop(self.cg);
    }
}

/// A warm sandbox for many runs. Dropping it kills the worker and everything in it.
pub struct Session {
    sandbox: Sandbox,
    limits: Limits,
    worker: Option<Worker>,
    runs: u64,
    restarts: u64,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("limits", &self.limits)
            .field("warm", &self.worker.is_some())
            .field("runs", &self.runs)
            .field("restarts", &self.restarts)
            .finish()
    }
}

#[derive(Deserialize)]
struct Report {
    exit_code: Option<i32>,
    signal: Option<i32>,
    wall_ms: u64,
    cpu_ms: u64,
    maxrss_kb: u64,
    killed: Option<String>,
    stdout: usize,
    stderr: usize,
    stdout_truncated: bool,
    stderr_truncated: bool,
}

impl Session {
    /// Start a session whose cgroup is sized by `limits` (memory, processes); each
    /// run's own rlimits and wall clock come from its request.
    pub fn start(sandbox: &Sandbox, limits: &Limits) -> Result<Session, SandboxError> {
        validate(&RunRequest {
            limits: limits.clone(),
            ..RunRequest::default()
        })?;
        let mut s = Session {
            sandbox: sandbox.clone(),
            limits: limits.clone(),
            worker: None,
            runs: 0,
            restarts: 0,
        };
        if sandbox.isolation.bwrap.is_some() {
            s.worker = Some(s.spawn_worker()?);
        }
        Ok(s)
    }

    /// Runs completed so far, and how many times the worker had to be restarted.
    pub fn counts(&self) -> (u64, u64) {
        (self.runs, self.restarts)
    }

    fn spawn_worker(&self) -> Result<Worker, SandboxError> {
        let sb = &self.sandbox;
        let bwrap = sb.isolation.bwrap.as_ref().expect("checked by caller");
        let limits = &self.limits;
        let cg = match &sb.isolation.cgroups {
            Some(bases) => Some(RunCgroup::create(
                bases,
                limits.processes + 2,
                limits.memory_mb.saturating_mul(1 << 20) + (128 << 20),
            )?),
            None => None,
        };
        // No `--die-with-parent`: the worker outlives the thread that starts it.
        let mut args =
            runner::base_args(&sb.python.extra_ro_dirs, runner::tmpfs_bytes(limits), false);
        let mut keep_alive = Vec::new();
        let mut inherit_fds = Vec::new();
        runner::add_seccomp(&mut args, &mut keep_alive, &mut inherit_fds)?;
        args.push("--as-pid-1".into());
        args.push("--".into());
        args.push(sb.python.executable.clone().into_os_string());
        args.push("-c".into());
        args.push(WORKER_SOURCE.into());
        let mut cmd = Command::new(bwrap);
        cmd.args(&args)
            .env_clear()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // No RLIMIT_CPU/AS here: the worker lives across runs; each run's child sets
        // its own. No parent-death signal either (it would fire when the creating
        // thread exits): the worker exits on EOF of its control pipe instead.
        PreExec {
            cgroup_procs: cg.as_ref().map(|c| c.procs_cstrings()).unwrap_or_default(),
            rlimits: runner::rlimits(limits)
                .into_iter()
                .filter(|(r, _, _)| *r != libc::RLIMIT_CPU && *r != libc::RLIMIT_AS)
                .collect(),
            inherit_fds,
            parent_death_kill: false,
        }
        .install(&mut cmd);
        let mut child = cmd.spawn()?;
        drop(keep_alive);
        let stderr = StderrTail::drain(child.stderr.take().expect("piped"));
        let pid = child.id() as i32;
        let pidfd = PidFd::open(pid)?;
        let mut worker = Worker {
            pid,
            pidfd,
            ctl_in: child.stdin.take().expect("piped"),
            ctl_out: child.stdout.take().expect("piped"),
            cg,
        };
        drop(child);
        let hello: serde_json::Value = match read_frame(
            &mut worker.ctl_out,
            Instant::now() + Duration::from_secs(30),
        ) {
            Ok((h, _)) => serde_json::from_slice(&h).map_err(io::Error::other)?,
            Err(e) => {
                worker.kill();
                return Err(SandboxError::Io(io::Error::other(format!(
                    "sandbox worker did not start: {e}{}",
                    stderr.after_exit()
                ))));
            }
        };
        if hello.get("ready") != Some(&serde_json::Value::Bool(true)) {
            worker.kill();
            return Err(SandboxError::Io(io::Error::other(format!(
                "sandbox worker refused to start: {hello}{}",
                stderr.after_exit()
            ))));
        }
        Ok(worker)
    }

    /// Run one program in the warm sandbox.
    pub fn run(&mut self, req: &RunRequest) -> Result<RunResult, SandboxError> {
        validate(req)?;
        if self.sandbox.isolation.bwrap.is_none() {
            self.runs += 1;
            return runner::run_once(&self.sandbox, req);
        }
        // A worker that died between runs (nothing it ran can be blamed: the program
        // has not been sent) is replaced before the run, not reported as a lost run.
        if let Some(w) = self.worker.take_if(|w| !w.idle_and_alive()) {
            w.kill();
        }
        if self.worker.is_none() {
            self.worker = Some(self.spawn_worker()?);
            self.restarts += 1;
        }
        let worker = self.worker.as_mut().expect("just ensured");
        let oom_before = worker.cg.as_ref().map(|c| c.stats().oom_kills).unwrap_or(0);
        let l = &req.limits;
        let header = serde_json::json!({
            "program": req.program.len(),
            "stdin": req.stdin.len(),
            "files": req.files.iter().map(|(n, d)| (n.clone(), d.len())).collect::<Vec<_>>(),
            "limits": {
                "wall_ms": l.wall.as_millis() as u64,
                "cpu_s": l.cpu_seconds,
                "mem_bytes": l.memory_mb.saturating_mul(1 << 20),
                "fsize": l.file_size_bytes,
                "nofile": l.open_files,
                // The worker counts against the namespace's per-uid process count.
                "nproc": l.processes + 1,
                "out_bytes": l.output_bytes,
            },
        });
        let start = Instant::now();
        let sent = (|| -> io::Result<()> {
            let h = serde_json::to_vec(&header).map_err(io::Error::other)?;
            let mut buf = Vec::with_capacity(4 + h.len() + req.program.len() + req.stdin.len());
            buf.extend_from_slice(&(h.len() as u32).to_le_bytes());
            buf.extend_from_slice(&h);
            buf.extend_from_slice(req.program.as_bytes());
            buf.extend_from_slice(&req.stdin);
            for (_, d) in &req.files {
                buf.extend_from_slice(d);
            }
            worker.ctl_in.write_all(&buf)?;
            worker.ctl_in.flush()
        })();
        let reply =
            sent.and_then(|()| read_frame(&mut worker.ctl_out, start + l.wall + REPORT_GRACE));
        let (report, body) = match reply.and_then(|(h, body)| {
            let r: Report = serde_json::from_slice(&h).map_err(io::Error::other)?;
            if body.len() < r.stdout + r.stderr {
                return Err(io::Error::other("short report"));
            }
            Ok((r, body))
        }) {
            Ok(x) => x,
            Err(e) => {
                // The worker hung or died (the OOM killer, or a bug): discard it; the
                // next run starts a fresh one.
                let worker = self.worker.take().expect("present");
                let oom = worker.cg.as_ref().map(|c| c.stats().oom_kills).unwrap_or(0) > oom_before;
                worker.kill();
                self.runs += 1;
                let end = if oom {
                    EndReason::Memory
                } else if e.kind() == io::ErrorKind::TimedOut {
                    EndReason::Timeout
                } else {
                    EndReason::Killed
                };
                return Ok(RunResult {
                    exit_code: None,
                    signal: Some(libc::SIGKILL),
                    stdout: Vec::new(),
                    stderr: format!("sandbox worker lost: {e}").into_bytes(),
                    stdout_truncated: false,
                    stderr_truncated: false,
                    wall_ms: start.elapsed().as_millis() as u64,
                    cpu_ms: 0,
                    peak_memory_kb: 0,
                    end,
                });
            }
        };
        self.runs += 1;
        let oom = worker.cg.as_ref().map(|c| c.stats().oom_kills).unwrap_or(0) > oom_before;
        let stdout = body[..report.stdout].to_vec();
        let stderr = body[report.stdout..report.stdout + report.stderr].to_vec();
        let killed_for = match report.killed.as_deref() {
            Some("timeout") => Some(EndReason::Timeout),
            Some("output_limit") => Some(EndReason::OutputLimit),
            _ => None,
        };
        let end = runner::classify(
            killed_for,
            report.exit_code,
            report.signal,
            &stderr,
            oom,
            report.cpu_ms,
            l,
        );
        Ok(RunResult {
            exit_code: report.exit_code,
            signal: report.signal,
            stdout,
            stderr,
            stdout_truncated: report.stdout_truncated,
            stderr_truncated: report.stderr_truncated,
            wall_ms: report.wall_ms,
            cpu_ms: report.cpu_ms,
            peak_memory_kb: report.maxrss_kb,
            end,
        })
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Some(w) = self.worker.take() {
            w.kill();
        }
    }
}

/// Read one `u32 length + header` frame and the body bytes that follow it, giving up
/// at `deadline` (`TimedOut`) or on EOF.
fn read_frame(r: &mut ChildStdout, deadline: Instant) -> io::Result<(Vec<u8>, Vec<u8>)> {
    let mut len = [0u8; 4];
    read_exact_by(r, &mut len, deadline)?;
    let n = u32::from_le_bytes(len) as usize;
    if n > 1 << 20 {
        return Err(io::Error::other(format!(
            "oversized report header ({n} bytes)"
        )));
    }
    let mut h = vec![0u8; n];
    read_exact_by(r, &mut h, deadline)?;
    let body_len = serde_json::from_slice::<serde_json::Value>(&h)
        .ok()
        .map(|v| {
            ["stdout", "stderr"]
                .iter()
                .filter_map(|k| v.get(*k).and_then(|x| x.as_u64()))
                .sum::<u64>() as usize
        })
        .unwrap_or(0);
    let mut body = vec![0u8; body_len];
    read_exact_by(r, &mut body, deadline)?;
    Ok((h, body))
}

fn read_exact_by(r: &mut ChildStdout, mut buf: &mut [u8], deadline: Instant) -> io::Result<()> {
    while !buf.is_empty() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "no report before the deadline",
            ));
        }
        let mut pfd = libc::pollfd {
            fd: r.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = left.as_millis().min(i32::MAX as u128) as i32;
        // SAFETY: one valid pollfd.
        let rc = unsafe { libc::poll(&mut pfd, 1, ms.max(1)) };
        if rc < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if rc == 0 {
            continue;
        }
        let n = r.read(buf)?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the worker exited",
            ));
        }
        buf = &mut buf[n..];
    }
    Ok(())
}
