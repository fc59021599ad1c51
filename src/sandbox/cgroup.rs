//! Per-run control groups (cgroup v1): one group per run in the `pids`, `memory` and
//! `cpuacct` hierarchies, created under this process's own groups so that outer limits
//! still apply. The group caps the process count (a fork bomb stops at `pids.max`, even
//! for root), caps memory (tmpfs pages included), accounts CPU for the whole tree, and
//! reports peak memory and OOM kills. Groups are removed on drop; groups left by a
//! process that was killed are swept by the next [`sweep_stale`].

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Name prefix of every group this module creates: `hrl-sbx-<owner pid>-<n>`.
const PREFIX: &str = "hrl-sbx-";

/// The controllers a run needs.
pub const CONTROLLERS: [&str; 3] = ["pids", "memory", "cpuacct"];

/// Where this process's group sits in each needed hierarchy.
#[derive(Debug, Clone, PartialEq)]
pub struct CgroupBases {
    pub pids: PathBuf,
    pub memory: PathBuf,
    pub cpuacct: PathBuf,
}

impl CgroupBases {
    fn get(&self, controller: &str) -> &Path {
        match controller {
            "pids" => &self.pids,
            "memory" => &self.memory,
            _ => &self.cpuacct,
        }
    }

    /// Find the v1 hierarchies holding each controller and this process's group in
    /// them, and check that a child group can be created there. `Err` names the first
    /// controller that is missing or not writable.
    pub fn probe() -> Result<CgroupBases, String> {
        let mountinfo = fs::read_to_string("/proc/self/mountinfo")
            .map_err(|e| format!("cannot read /proc/self/mountinfo: {e}"))?;
        let own = fs::read_to_string("/proc/self/cgroup")
            .map_err(|e| format!("cannot read /proc/self/cgroup: {e}"))?;
        let mut found = Vec::new();
        for ctl in CONTROLLERS {
            let mount = mountinfo
                .lines()
                .find_map(|line| {
                    let (pre, post) = line.split_once(" - ")?;
                    let mut post = post.split_whitespace();
                    if post.next()? != "cgroup" {
                        return None;
                    }
                    let opts = post.nth(1)?;
                    if !opts.split(',').any(|o| o == ctl) {
                        return None;
                    }
                    pre.split_whitespace().nth(4).map(PathBuf::from)
                })
                .ok_or_else(|| format!("cgroup v1 `{ctl}` controller is not mounted"))?;
            let rel = own
                .lines()
                .find_map(|line| {
                    let mut parts = line.splitn(3, ':');
                    let _id = parts.next()?;
                    let ctls = parts.next()?;
                    let path = parts.next()?;
                    ctls.split(',').any(|c| c == ctl).then(|| path.to_string())
                })
                .ok_or_else(|| format!("this process is in no `{ctl}` cgroup"))?;
            let base = mount.join(rel.trim_start_matches('/'));
            let probe = base.join(format!("{PREFIX}probe-{}", std::process::id()));
            let _ = fs::remove_dir(&probe);
            fs::create_dir(&probe).map_err(|e| {
                format!(
                    "cannot create a `{ctl}` cgroup under {} ({e}); run as root or delegate it",
                    base.display()
                )
            })?;
            let _ = fs::remove_dir(&probe);
            found.push(base);
        }
        let cpuacct = found.pop().expect("three controllers");
        let memory = found.pop().expect("three controllers");
        let pids = found.pop().expect("three controllers");
        Ok(CgroupBases {
            pids,
            memory,
            cpuacct,
        })
    }
}

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// One run's groups. Dropping it kills whatever is still inside and removes them.
#[derive(Debug)]
pub struct RunCgroup {
    dirs: Vec<PathBuf>,
    /// `<group>/cgroup.procs` of each hierarchy, for the child to join before exec.
    pub procs_files: Vec<PathBuf>,
    memory: PathBuf,
    cpuacct: PathBuf,
    pids: PathBuf,
}

/// Statistics of a finished (or running) group.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CgroupStats {
    pub cpu_ns: u64,
    pub peak_memory_bytes: u64,
    pub oom_kills: u64,
    pub memory_failcnt: u64,
}

impl RunCgroup {
    pub fn create(bases: &CgroupBases, max_pids: u64, memory_bytes: u64) -> io::Result<RunCgroup> {
        let name = format!(
            "{PREFIX}{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        let mut cg = RunCgroup {
            dirs: Vec::new(),
            procs_files: Vec::new(),
            memory: bases.memory.join(&name),
            cpuacct: bases.cpuacct.join(&name),
            pids: bases.pids.join(&name),
        };
        for ctl in CONTROLLERS {
            let dir = bases.get(ctl).join(&name);
            fs::create_dir(&dir)?;
            cg.procs_files.push(dir.join("cgroup.procs"));
            cg.dirs.push(dir);
        }
        fs::write(cg.pids.join("pids.max"), max_pids.to_string())?;
        fs::write(
            cg.memory.join("memory.limit_in_bytes"),
            memory_bytes.to_string(),
        )?;
        // Without swap accounting this file is absent; with it, forbid swapping around
        // the limit.
        let memsw = cg.memory.join("memory.memsw.limit_in_bytes");
        if memsw.exists() {
            let _ = fs::write(memsw, memory_bytes.to_string());
        }
        Ok(cg)
    }

    fn read_u64(path: &Path) -> u64 {
        fs::read_to_string(path)
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(0)
    }

    /// CPU time used so far by every process of the group, in nanoseconds.
    pub fn cpu_ns(&self) -> u64 {
        Self::read_u64(&self.cpuacct.join("cpuacct.usage"))
    }

    pub fn stats(&self) -> CgroupStats {
        let oom_kills = fs::read_to_string(self.memory.join("memory.oom_control"))
            .ok()
            .and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("oom_kill ")?.trim().parse().ok())
            })
            .unwrap_or(0);
        CgroupStats {
            cpu_ns: self.cpu_ns(),
            peak_memory_bytes: Self::read_u64(&self.memory.join("memory.max_usage_in_bytes")),
            oom_kills,
            memory_failcnt: Self::read_u64(&self.memory.join("memory.failcnt")),
        }
    }

    /// The `cgroup.procs` paths as C strings, for the pre-exec hook.
    pub fn procs_cstrings(&self) -> Vec<std::ffi::CString> {
        use std::os::unix::ffi::OsStrExt;
        self.procs_files
            .iter()
            .map(|p| std::ffi::CString::new(p.as_os_str().as_bytes()).expect("no NUL in path"))
            .collect()
    }

    /// SIGKILL everything in the group until it is empty (or `patience` passes).
    /// Returns whether the group is empty.
    pub fn kill_all(&self, patience: Duration) -> bool {
        kill_until_empty(&self.pids, patience)
    }
}

fn read_pids(dir: &Path) -> Vec<i32> {
    fs::read_to_string(dir.join("cgroup.procs"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

fn kill_until_empty(dir: &Path, patience: Duration) -> bool {
    let start = Instant::now();
    loop {
        let pids = read_pids(dir);
        if pids.is_empty() {
            return true;
        }
        for pid in pids {
            // SAFETY: kill(2) has no memory-safety preconditions. The pid was listed
            // in our own group a moment ago.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
        if start.elapsed() > patience {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn remove_group(dir: &Path) {
    // A group with members cannot be removed; exiting members take a moment to leave.
    for _ in 0..200 {
        match fs::remove_dir(dir) {
            Ok(()) => return,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return,
            Err(_) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
}

impl Drop for RunCgroup {
    fn drop(&mut self) {
        self.kill_all(Duration::from_secs(5));
        for dir in &self.dirs {
            remove_group(dir);
        }
    }
}

/// Remove groups left behind by sandbox owners that no longer exist (a process killed
/// with SIGKILL cannot run its destructors). Returns how many groups were removed.
pub fn sweep_stale(bases: &CgroupBases) -> usize {
    let mut removed = 0;
    for ctl in CONTROLLERS {
        let Ok(entries) = fs::read_dir(bases.get(ctl)) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(rest) = name.strip_prefix(PREFIX) else {
                continue;
            };
            let owner = rest.split('-').next().and_then(|p| p.parse::<u32>().ok());
            let Some(owner) = owner else { continue };
            if Path::new(&format!("/proc/{owner}")).exists() {
                continue;
            }
            let dir = entry.path();
            if ctl == "pids" {
                kill_until_empty(&dir, Duration::from_secs(2));
            }
            remove_group(&dir);
            if !dir.exists() {
                removed += 1;
            }
        }
    }
    removed
}
