//! One-shot runs: builds the bubblewrap command line, spawns it inside a fresh
//! per-run cgroup with rlimits applied before `exec`, feeds stdin from a sealed memory
//! file, reads stdout/stderr with caps, enforces the wall clock and the whole-tree CPU
//! limit, kills the whole tree, and assembles the [`RunResult`]. Also the degraded
//! unisolated path (only with `unsafe_no_isolation`).

use std::ffi::{CString, OsString};
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::cgroup::RunCgroup;
use super::{
    CHANNEL_ENV, ChannelHandler, ChannelReply, ChannelRun, EndReason, Limits, RunRequest,
    RunResult, Sandbox, SandboxError,
};

/// The unprivileged uid/gid the program runs as inside its user namespace.
pub(crate) const SANDBOX_UID: &str = "65534";
/// Working directory inside the sandbox.
pub(crate) const WORKDIR: &str = "/work";
/// Memory allowed on top of `memory_mb` for the group (bwrap, page cache, tmpfs
/// metadata); the program itself is held to `memory_mb` by RLIMIT_AS.
const CGROUP_MEMORY_SLACK: u64 = 64 << 20;

/// Find bubblewrap and check that it can build the namespaces we need here.
pub(crate) fn probe_bwrap() -> Result<PathBuf, String> {
    let path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .chain([PathBuf::from("/usr/bin")])
        .map(|d| d.join("bwrap"))
        .find(|p| p.is_file())
        .ok_or("bwrap not found on PATH (`make deps` installs the bubblewrap package)")?;
    let mut args = base_args(&[], 1 << 20, true);
    args.extend(["--", "/usr/bin/true"].map(OsString::from));
    let out = Command::new(&path)
        .args(&args)
        .env_clear()
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", path.display()))?;
    if !out.status.success() {
        return Err(format!(
            "{} cannot create user/pid/net/mount namespaces here: {}",
            path.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(path)
}

/// Namespace, file system and environment arguments shared by one-shot runs and
/// sessions. `tmpfs_bytes` sizes each of `/work` and `/tmp`. `die_with_parent` adds
/// bubblewrap's `--die-with-parent`, a parent-death signal: Linux sends it when the
/// *thread* that started bubblewrap exits, so only a run that its starting thread
/// waits for (one-shot) may use it. A session's worker outlives the thread that
/// started it (a pool lends it to other threads); it exits on EOF of its control
/// pipe instead.
pub(crate) fn base_args(
    extra_ro: &[PathBuf],
    tmpfs_bytes: u64,
    die_with_parent: bool,
) -> Vec<OsString> {
    let mut a: Vec<OsString> = Vec::new();
    let mut push = |xs: &[&str]| a.extend(xs.iter().map(OsString::from));
    push(&[
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--uid",
        SANDBOX_UID,
        "--gid",
        SANDBOX_UID,
        "--hostname",
        "sandbox",
        "--new-session",
        "--clearenv",
        "--setenv",
        "PATH",
        "/usr/local/bin:/usr/bin:/bin",
        "--setenv",
        "HOME",
        WORKDIR,
        "--setenv",
        "TMPDIR",
        "/tmp",
        "--setenv",
        "LANG",
        "C.UTF-8",
        "--setenv",
        "PYTHONHASHSEED",
        "0",
        "--setenv",
        "PYTHONDONTWRITEBYTECODE",
        "1",
        "--ro-bind",
        "/usr",
        "/usr",
    ]);
    if die_with_parent {
        a.push("--die-with-parent".into());
    }
    // Mirror the merged-/usr layout (or bind the real directories where not merged).
    for top in ["bin", "sbin", "lib", "lib32", "lib64", "libx32"] {
        let host = Path::new("/").join(top);
        match std::fs::read_link(&host) {
            Ok(target) => {
                a.push("--symlink".into());
                a.push(target.into_os_string());
                a.push(host.into_os_string());
            }
            Err(_) if host.is_dir() => {
                a.push("--ro-bind".into());
                a.push(host.clone().into_os_string());
                a.push(host.into_os_string());
            }
            Err(_) => {}
        }
    }
    for f in ["/etc/ld.so.cache", "/etc/localtime"] {
        a.extend(["--ro-bind-try", f, f].map(OsString::from));
    }
    for d in extra_ro {
        a.push("--ro-bind".into());
        a.push(d.clone().into_os_string());
        a.push(d.clone().into_os_string());
    }
    let size = tmpfs_bytes.to_string();
    #[rustfmt::skip]
    let tail = [
        "--proc", "/proc",
        // The namespaced sysctls (hostname...) stay read-only too.
        "--ro-bind", "/proc/sys", "/proc/sys",
        "--dev", "/dev",
        // POSIX semaphores and shared memory (multiprocessing) need a writable /dev/shm.
        "--size", &size, "--tmpfs", "/dev/shm",
        "--remount-ro", "/dev",
        "--size", &size, "--tmpfs", WORKDIR,
        "--size", &size, "--tmpfs", "/tmp",
        "--chdir", WORKDIR,
        "--remount-ro", "/",
    ];
    a.extend(tail.map(OsString::from));
    a
}

/// Add `--seccomp FD` with the filter in a memory file; the file must stay open until
/// spawn and its fd be inherited.
pub(crate) fn add_seccomp(
    args: &mut Vec<OsString>,
    keep_alive: &mut Vec<File>,
    inherit_fds: &mut Vec<i32>,
) -> io::Result<()> {
    if let Some(bytes) = super::seccomp::filter_bytes() {
        let f = memfd("seccomp", &bytes)?;
        args.push("--seccomp".into());
        args.push(f.as_raw_fd().to_string().into());
        inherit_fds.push(f.as_raw_fd());
        keep_alive.push(f);
    }
    Ok(())
}

/// Size of each tmpfs: room for a few maximal files.
pub(crate) fn tmpfs_bytes(limits: &Limits) -> u64 {
    limits.file_size_bytes.saturating_mul(4).max(8 << 20)
}

/// An anonymous, close-on-exec memory file holding `data`, positioned at 0.
pub(crate) fn memfd(name: &str, data: &[u8]) -> io::Result<File> {
    let cname = CString::new(name).map_err(io::Error::other)?;
    // SAFETY: `cname` is a valid NUL-terminated string; the returned fd is owned here.
    let fd = unsafe { libc::memfd_create(cname.as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is a fresh descriptor that nothing else owns.
    let mut f = unsafe { File::from_raw_fd(fd) };
    f.write_all(data)?;
    f.seek(SeekFrom::Start(0))?;
    Ok(f)
}

/// rlimits applied to the sandbox process before `exec` (inherited by the tree).
pub(crate) fn rlimits(limits: &Limits) -> Vec<(libc::__rlimit_resource_t, u64, u64)> {
    let mem = limits.memory_mb.saturating_mul(1 << 20);
    vec![
        (libc::RLIMIT_CPU, limits.cpu_seconds, limits.cpu_seconds + 1),
        (libc::RLIMIT_AS, mem, mem),
        (
            libc::RLIMIT_FSIZE,
            limits.file_size_bytes,
            limits.file_size_bytes,
        ),
        (libc::RLIMIT_NOFILE, limits.open_files, limits.open_files),
        (libc::RLIMIT_CORE, 0, 0),
    ]
}

/// What must happen in the child between `fork` and `exec`.
pub(crate) struct PreExec {
    pub cgroup_procs: Vec<CString>,
    pub rlimits: Vec<(libc::__rlimit_resource_t, u64, u64)>,
    pub inherit_fds: Vec<i32>,
    pub parent_death_kill: bool,
}

impl PreExec {
    /// Install the hook. Only async-signal-safe calls happen in the child.
    pub fn install(self, cmd: &mut Command) {
        // SAFETY: the closure only calls async-signal-safe functions (open, write,
        // close, setrlimit, fcntl, prctl) on data prepared before the fork.
        unsafe {
            cmd.pre_exec(move || {
                for path in &self.cgroup_procs {
                    let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
                    if fd < 0 {
                        return Err(io::Error::last_os_error());
                    }
                    let n = libc::write(fd, b"0".as_ptr().cast(), 1);
                    let err = io::Error::last_os_error();
                    libc::close(fd);
                    if n != 1 {
                        return Err(err);
                    }
                }
                for &(res, soft, hard) in &self.rlimits {
                    let rl = libc::rlimit {
                        rlim_cur: soft,
                        rlim_max: hard,
                    };
                    if libc::setrlimit(res, &rl) != 0 {
                        return Err(io::Error::last_os_error());
                    }
                }
                for &fd in &self.inherit_fds {
                    let flags = libc::fcntl(fd, libc::F_GETFD);
                    if flags < 0 || libc::fcntl(fd, libc::F_SETFD, flags & !libc::FD_CLOEXEC) < 0 {
                        return Err(io::Error::last_os_error());
                    }
                }
                if self.parent_death_kill
                    && libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) != 0
                {
                    return Err(io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
}

/// A pidfd for a child that has not been reaped yet: signals through it can never hit
/// a recycled pid.
pub(crate) struct PidFd(OwnedFd);

impl PidFd {
    pub fn open(pid: i32) -> io::Result<PidFd> {
        // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: the descriptor is fresh and owned here.
        Ok(PidFd(unsafe { OwnedFd::from_raw_fd(fd as i32) }))
    }

    pub fn kill(&self) {
        // SAFETY: plain syscall on a descriptor we own; a null siginfo is allowed.
        unsafe {
            libc::syscall(
                libc::SYS_pidfd_send_signal,
                self.0.as_raw_fd(),
                libc::SIGKILL,
                std::ptr::null::<libc::siginfo_t>(),
                0,
            );
        }
    }
}

/// Wait for `pid` (ours, not yet reaped) and return its raw status and rusage.
pub(crate) fn wait4(pid: i32) -> (i32, libc::rusage) {
    let mut status = 0;
    // SAFETY: rusage is plain old data; zeroed is a valid value.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: valid pointers to locals.
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
        if r == pid {
            return (status, ru);
        }
        if r < 0 && io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            return (status, ru);
        }
    }
}

enum Event {
    Exited(i32, libc::rusage),
    Overflow,
    Output(usize, Vec<u8>, bool),
    /// The channel handler declared a protocol violation: stop the program.
    Violation,
}

fn spawn_reader(
    idx: usize,
    mut r: impl Read + Send + 'static,
    cap: usize,
    tx: mpsc::Sender<Event>,
) {
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let mut buf = vec![0u8; 64 << 10];
        let mut truncated = false;
        loop {
            match r.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    let room = cap.saturating_sub(kept.len());
                    kept.extend_from_slice(&buf[..n.min(room)]);
                    if n > room && !truncated {
                        truncated = true;
                        let _ = tx.send(Event::Overflow);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        let _ = tx.send(Event::Output(idx, kept, truncated));
    });
}

static WORKDIR_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A host directory for unisolated runs, removed on drop.
struct HostDir(PathBuf);

impl Drop for HostDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Run `req` once, with every available layer.
pub(crate) fn run_once(sb: &Sandbox, req: &RunRequest) -> Result<RunResult, SandboxError> {
    run_with(sb, req, None).map(|r| r.result)
}

/// The two pipes of a message channel: the program's ends (inherited into the
/// sandbox) and the host's ends. All are close-on-exec in this process, so sandboxes
/// spawned concurrently by other threads never inherit them.
struct ChannelPipes {
    child_read: OwnedFd,
    child_write: OwnedFd,
    host_read: File,
    host_write: File,
}

fn pipe_cloexec() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0i32; 2];
    // SAFETY: a valid two-element array for pipe2 to fill.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors are fresh and owned here.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

impl ChannelPipes {
    fn new() -> io::Result<ChannelPipes> {
        let (host_read, child_write) = pipe_cloexec()?;
        let (child_read, host_write) = pipe_cloexec()?;
        Ok(ChannelPipes {
            child_read,
            child_write,
            host_read: File::from(host_read),
            host_write: File::from(host_write),
        })
    }

    /// The value of [`CHANNEL_ENV`] inside the sandbox: `READ_FD,WRITE_FD`.
    fn env_value(&self) -> String {
        format!(
            "{},{}",
            self.child_read.as_raw_fd(),
            self.child_write.as_raw_fd()
        )
    }
}

/// Time the channel handler has spent answering (excluded from the wall clock).
#[derive(Default)]
struct PauseClock {
    total: Duration,
    since: Option<Instant>,
}

impl PauseClock {
    fn paused(&self) -> Duration {
        self.total + self.since.map_or(Duration::ZERO, |s| s.elapsed())
    }
}

/// Read newline-terminated messages from the program and answer each through
/// `handler`; stops at EOF (the program's tree is gone) or after a violation.
#[allow(clippy::too_many_arguments)] // the channel's ends and the run's shared state
fn serve_channel(
    mut host_read: File,
    mut host_write: File,
    handler: &mut dyn ChannelHandler,
    max_message_bytes: usize,
    clock: &std::sync::Mutex<PauseClock>,
    events: mpsc::Sender<Event>,
    counts: &std::sync::Mutex<(u64, Option<String>)>,
    stop: &std::sync::atomic::AtomicBool,
) {
    let mut pending: Vec<u8> = Vec::new();
    let mut buf = vec![0u8; 64 << 10];
    let mut violated = false;
    loop {
        // Poll so that the thread also ends when the run is over but something the
        // run left behind (only possible without namespaces) still holds the pipe.
        let mut pfd = libc::pollfd {
            fd: host_read.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let rc = unsafe { libc::poll(&mut pfd, 1, 100) };
        if rc == 0 {
            if stop.load(std::sync::atomic::Ordering::Relaxed) {
                return;
            }
            continue;
        }
        let n = match host_read.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => return,
        };
        if violated {
            continue; // drain until EOF so the program's writes never block
        }
        pending.extend_from_slice(&buf[..n]);
        while let Some(end) = pending.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = pending.drain(..=end).collect();
            let line = &line[..line.len() - 1];
            clock.lock().unwrap_or_else(|e| e.into_inner()).since = Some(Instant::now());
            let reply = handler.message(line);
            {
                let mut c = clock.lock().unwrap_or_else(|e| e.into_inner());
                if let Some(s) = c.since.take() {
                    c.total += s.elapsed();
                }
            }
            counts.lock().unwrap_or_else(|e| e.into_inner()).0 += 1;
            match reply {
                ChannelReply::Reply(mut bytes) => {
                    bytes.push(b'\n');
                    if host_write.write_all(&bytes).is_err() {
                        violated = true; // the program is gone; drain to EOF
                        break;
                    }
                }
                ChannelReply::Silent => {}
                ChannelReply::Violation(why) => {
                    counts.lock().unwrap_or_else(|e| e.into_inner()).1 = Some(why.clone());
                    let _ = events.send(Event::Violation);
                    violated = true;
                    break;
                }
            }
        }
        if !violated && pending.len() > max_message_bytes {
            let why = format!("a channel message exceeded {max_message_bytes} bytes");
            counts.lock().unwrap_or_else(|e| e.into_inner()).1 = Some(why.clone());
            let _ = events.send(Event::Violation);
            violated = true;
        }
        if violated {
            pending = Vec::new();
        }
    }
}

/// Run `req` with an optional message channel (see [`Sandbox::run_with_channel`]).
pub(crate) fn run_with(
    sb: &Sandbox,
    req: &RunRequest,
    channel: Option<(&mut dyn ChannelHandler, usize)>,
) -> Result<ChannelRun, SandboxError> {
    let limits = &req.limits;
    let pipes = match channel {
        Some(_) => Some(ChannelPipes::new()?),
        None => None,
    };
    let cg = match &sb.isolation.cgroups {
        Some(bases) => Some(RunCgroup::create(
            bases,
            limits.processes + 2,
            limits.memory_mb.saturating_mul(1 << 20) + CGROUP_MEMORY_SLACK,
        )?),
        None => None,
    };
    let stdin = memfd("stdin", &req.stdin)?;
    let mut keep_alive: Vec<File> = Vec::new();
    let mut inherit_fds = Vec::new();
    let mut host_dir = None;
    let mut cmd;
    if let Some(bwrap) = &sb.isolation.bwrap {
        let mut args = base_args(&sb.python.extra_ro_dirs, tmpfs_bytes(limits), true);
        let mut dirs: Vec<String> = Vec::new();
        for (name, _) in &req.files {
            let mut prefix = String::new();
            let comps: Vec<&str> = name.split('/').collect();
            for c in &comps[..comps.len() - 1] {
                prefix.push('/');
                prefix.push_str(c);
                if !dirs.contains(&prefix) {
                    dirs.push(prefix.clone());
                }
            }
        }
        for d in &dirs {
            args.push("--dir".into());
            args.push(format!("{WORKDIR}{d}").into());
        }
        let mut add_file = |name: &str, data: &[u8]| -> io::Result<()> {
            let f = memfd(name.rsplit('/').next().unwrap_or("f"), data)?;
            args.push("--file".into());
            args.push(f.as_raw_fd().to_string().into());
            args.push(format!("{WORKDIR}/{name}").into());
            inherit_fds.push(f.as_raw_fd());
            keep_alive.push(f);
            Ok(())
        };
        add_file("main.py", req.program.as_bytes())?;
        for (name, data) in &req.files {
            add_file(name, data)?;
        }
        if let Some(p) = &pipes {
            args.push("--setenv".into());
            args.push(CHANNEL_ENV.into());
            args.push(p.env_value().into());
            inherit_fds.push(p.child_read.as_raw_fd());
            inherit_fds.push(p.child_write.as_raw_fd());
        }
        add_seccomp(&mut args, &mut keep_alive, &mut inherit_fds)?;
        args.push("--".into());
        args.push(sb.python.executable.clone().into_os_string());
        args.push("main.py".into());
        cmd = Command::new(bwrap);
        cmd.args(&args).env_clear();
    } else {
        let dir = std::env::temp_dir().join(format!(
            "hrl-sbx-{}-{}",
            std::process::id(),
            WORKDIR_COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir(&dir)?;
        let dir = HostDir(dir);
        std::fs::write(dir.0.join("main.py"), &req.program)?;
        for (name, data) in &req.files {
            let path = dir.0.join(name);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(path, data)?;
        }
        cmd = Command::new(&sb.python.executable);
        cmd.arg("main.py")
            .current_dir(&dir.0)
            .env_clear()
            .envs([
                ("PATH", "/usr/local/bin:/usr/bin:/bin"),
                ("LANG", "C.UTF-8"),
                ("PYTHONHASHSEED", "0"),
                ("PYTHONDONTWRITEBYTECODE", "1"),
            ])
            .env("HOME", &dir.0)
            .process_group(0);
        if let Some(p) = &pipes {
            cmd.env(CHANNEL_ENV, p.env_value());
            inherit_fds.push(p.child_read.as_raw_fd());
            inherit_fds.push(p.child_write.as_raw_fd());
        }
        host_dir = Some(dir);
    }
    cmd.stdin(Stdio::from(stdin))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    PreExec {
        cgroup_procs: cg.as_ref().map(|c| c.procs_cstrings()).unwrap_or_default(),
        rlimits: rlimits(limits),
        inherit_fds,
        parent_death_kill: true,
    }
    .install(&mut cmd);

    let start = Instant::now();
    let mut child = cmd.spawn()?;
    drop(keep_alive);
    // The program's ends now live in the child; the host keeps only its own.
    let host_ends = pipes.map(|p| {
        drop(p.child_read);
        drop(p.child_write);
        (p.host_read, p.host_write)
    });
    let pid = child.id() as i32;
    let pidfd = PidFd::open(pid)?;
    let (tx, rx) = mpsc::channel();
    spawn_reader(
        0,
        child.stdout.take().expect("piped"),
        limits.output_bytes,
        tx.clone(),
    );
    spawn_reader(
        1,
        child.stderr.take().expect("piped"),
        limits.output_bytes,
        tx.clone(),
    );
    {
        let tx = tx.clone();
        std::thread::spawn(move || {
            let (status, ru) = wait4(pid);
            let _ = tx.send(Event::Exited(status, ru));
        });
    }
    let clock = std::sync::Mutex::new(PauseClock::default());
    let counts = std::sync::Mutex::new((0u64, None::<String>));
    let stop = std::sync::atomic::AtomicBool::new(false);
    drop(child);
    std::thread::scope(|scope| {
        if let (Some((host_read, host_write)), Some((handler, max_bytes))) = (host_ends, channel) {
            let tx = tx.clone();
            let (clock, counts, stop) = (&clock, &counts, &stop);
            scope.spawn(move || {
                serve_channel(
                    host_read, host_write, handler, max_bytes, clock, tx, counts, stop,
                )
            });
        }
        drop(tx);

        let unisolated = sb.isolation.bwrap.is_none();
        let kill_tree = |cg: &Option<RunCgroup>| {
            pidfd.kill();
            if unisolated {
                // SAFETY: kill(2) on our own process group (the leader is not reaped yet
                // or its group id is still held by members).
                unsafe {
                    libc::kill(-pid, libc::SIGKILL);
                }
            }
            if let Some(cg) = cg {
                cg.kill_all(Duration::ZERO);
            }
        };
        let deadline =
            || start + limits.wall + clock.lock().unwrap_or_else(|e| e.into_inner()).paused();
        let cpu_limit_ns = limits.cpu_seconds.saturating_mul(1_000_000_000);
        let mut killed_for: Option<EndReason> = None;
        let mut exited: Option<(i32, libc::rusage, Instant)> = None;
        let mut outputs: [Option<(Vec<u8>, bool)>; 2] = [None, None];
        loop {
            if exited.is_some() && outputs.iter().all(Option::is_some) {
                break;
            }
            let now = Instant::now();
            let wait = match &exited {
                Some((_, _, at)) => (*at + Duration::from_secs(2)).saturating_duration_since(now),
                None if killed_for.is_some() => Duration::from_millis(50),
                None => deadline()
                    .saturating_duration_since(now)
                    .min(Duration::from_millis(if cg.is_some() { 20 } else { 100 })),
            };
            match rx.recv_timeout(wait) {
                Ok(Event::Exited(status, ru)) => {
                    let at = Instant::now();
                    exited = Some((status, ru, at));
                    // Anything left (a daemon in the unisolated case) holds the pipes open.
                    if unisolated {
                        // SAFETY: as above; the group may outlive its reaped leader.
                        unsafe {
                            libc::kill(-pid, libc::SIGKILL);
                        }
                    }
                    if let Some(cg) = &cg {
                        cg.kill_all(Duration::ZERO);
                    }
                }
                Ok(Event::Overflow) => {
                    if exited.is_none() && killed_for.is_none() {
                        killed_for = Some(EndReason::OutputLimit);
                        kill_tree(&cg);
                    }
                }
                Ok(Event::Output(i, data, trunc)) => outputs[i] = Some((data, trunc)),
                Ok(Event::Violation) => {
                    if exited.is_none() && killed_for.is_none() {
                        killed_for = Some(EndReason::Killed);
                        kill_tree(&cg);
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    if exited.is_some() {
                        break;
                    }
                    if killed_for.is_none() {
                        let over_cpu = cg.as_ref().is_some_and(|c| c.cpu_ns() > cpu_limit_ns);
                        if Instant::now() >= deadline() || over_cpu {
                            killed_for = Some(EndReason::Timeout);
                            kill_tree(&cg);
                        }
                    } else {
                        kill_tree(&cg);
                    }
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let wall_ms = exited
            .as_ref()
            .map(|(_, _, at)| at.duration_since(start))
            .unwrap_or_else(|| start.elapsed())
            .as_millis() as u64;
        let handler_ms = clock
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .paused()
            .as_millis() as u64;
        let (status, ru, _) = exited.ok_or_else(|| {
            SandboxError::Io(io::Error::other(
                "the sandbox process could not be waited for",
            ))
        })?;
        let stats = cg.as_ref().map(|c| c.stats());
        drop(cg);
        drop(host_dir);
        let [out, err] = outputs;
        let (stdout, stdout_truncated) = out.unwrap_or_default();
        let (stderr, stderr_truncated) = err.unwrap_or_default();
        let (mut exit_code, mut signal) = decode_status(status);
        if !unisolated
            && let Some(code) = exit_code
            && (129..=192).contains(&code)
        {
            // bubblewrap reports a child killed by signal N as exit status 128 + N.
            exit_code = None;
            signal = Some(code - 128);
        }
        let ru_cpu_ms = tv_ms(ru.ru_utime) + tv_ms(ru.ru_stime);
        let cpu_ms = stats.map(|s| s.cpu_ns / 1_000_000).unwrap_or(ru_cpu_ms);
        let end = classify(
            killed_for,
            exit_code,
            signal,
            &stderr,
            stats.is_some_and(|s| s.oom_kills > 0),
            cpu_ms,
            limits,
        );
        let result = RunResult {
            exit_code,
            signal,
            stdout,
            stderr,
            stdout_truncated,
            stderr_truncated,
            wall_ms,
            cpu_ms,
            peak_memory_kb: stats
                .map(|s| s.peak_memory_bytes / 1024)
                .unwrap_or(ru.ru_maxrss.max(0) as u64),
            end,
        };
        Ok((result, handler_ms))
    })
    .map(|(result, handler_ms)| {
        let (messages, violation) = counts.into_inner().unwrap_or_else(|e| e.into_inner());
        ChannelRun {
            result,
            messages,
            handler_ms,
            violation,
        }
    })
}

fn tv_ms(tv: libc::timeval) -> u64 {
    (tv.tv_sec.max(0) as u64) * 1000 + (tv.tv_usec.max(0) as u64) / 1000
}

pub(crate) fn decode_status(status: i32) -> (Option<i32>, Option<i32>) {
    if libc::WIFEXITED(status) {
        (Some(libc::WEXITSTATUS(status)), None)
    } else if libc::WIFSIGNALED(status) {
        (None, Some(libc::WTERMSIG(status)))
    } else {
        (None, None)
    }
}

/// Why a run ended, from what the monitor did and what the program left behind.
pub(crate) fn classify(
    killed_for: Option<EndReason>,
    exit_code: Option<i32>,
    signal: Option<i32>,
    stderr: &[u8],
    oom_killed: bool,
    cpu_ms: u64,
    limits: &Limits,
) -> EndReason {
    // The output cap is exact; an OOM kill explains a later timeout better than the
    // timeout does (the program typically waits for a child the kernel killed).
    if killed_for == Some(EndReason::OutputLimit) {
        return EndReason::OutputLimit;
    }
    if oom_killed {
        return EndReason::Memory;
    }
    if let Some(why) = killed_for {
        return why;
    }
    match signal {
        Some(libc::SIGXCPU) => return EndReason::Timeout,
        Some(libc::SIGKILL) if cpu_ms >= limits.cpu_seconds * 1000 => return EndReason::Timeout,
        Some(_) => return EndReason::Killed,
        None => {}
    }
    if exit_code != Some(0) && last_line_is_memory_error(stderr) {
        return EndReason::Memory;
    }
    EndReason::Exited
}

/// Python reports an address-space limit hit as an uncaught `MemoryError`.
fn last_line_is_memory_error(stderr: &[u8]) -> bool {
    let text = String::from_utf8_lossy(stderr);
    text.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .is_some_and(|l| l.starts_with("MemoryError"))
}
