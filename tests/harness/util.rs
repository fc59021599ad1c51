//! Shared helpers of the harness tests: a SmolLM2 executor with a private completion
//! cache, a sandbox, running a harness on a task SPEC, and writing harness files.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use harness_rl::executor::spec::{CacheSetting, ExecutorSpec, OpenOptions, OpenedExecutor};
use harness_rl::harness::Harness;
use harness_rl::harness::runtime::{self, RunConfig, RunContext, RunOutput};
use harness_rl::task::TaskSet;
use harness_rl::task::spec::GradingSetup;

pub use super::common::{heavy, private_home, repo, sandbox};

pub fn seed_harness(name: &str) -> PathBuf {
    repo().join("suites/harnesses").join(name)
}

/// The default model's name (it must be installed).
pub fn smol() -> &'static str {
    super::common::default_model().name
}

/// SmolLM2 on one thread with `n_parallel` slots and a completion cache in `dir`
/// (fresh for every test, so nothing comes from an earlier run).
pub fn open_smol(n_parallel: u32, dir: &Path) -> OpenedExecutor {
    let spec = ExecutorSpec::parse(&format!(
        "llama:{},threads=1,n_parallel={n_parallel},ctx=1024",
        smol()
    ))
    .unwrap();
    spec.open(&OpenOptions {
        cache: CacheSetting::Path(dir.join("cache.sqlite")),
    })
    .expect("SmolLM2 opens")
}

pub fn items(specs: &[&str]) -> TaskSet {
    let specs: Vec<String> = specs.iter().map(|s| s.to_string()).collect();
    TaskSet::load(&specs, &GradingSetup::default()).expect("task spec loads")
}

/// Run `harness` on the items of `specs` with `exec`.
pub fn run(
    harness: &Harness,
    specs: &[&str],
    exec: &OpenedExecutor,
    config: &RunConfig,
) -> RunOutput {
    let tasks = items(specs);
    run_items(harness, &tasks.items, exec, config)
}

pub fn run_items(
    harness: &Harness,
    items: &[harness_rl::task::Item],
    exec: &OpenedExecutor,
    config: &RunConfig,
) -> RunOutput {
    let ctx = RunContext {
        harness,
        origin: "test",
        executor: exec.executor.clone(),
        executor_ref: exec.identity.reference(),
        sandbox: sandbox(),
        config,
    };
    runtime::run(&ctx, items, &HashMap::new(), &mut |_| Ok(()), &|_| {}).expect("the run completes")
}

/// A program harness from source.
pub fn program(source: &str) -> Harness {
    Harness::parse_program(source, "test.py", "test".into()).expect("a valid program harness")
}

/// A unique token for process-survival checks.
pub fn token() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!(
        "hrlharnesstok{}x{}x{}",
        std::process::id(),
        nanos,
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// Host processes whose command line carries `token`.
pub fn survivors(token: &str) -> Vec<i32> {
    let me = std::process::id() as i32;
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        if pid == me {
            continue;
        }
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        if String::from_utf8_lossy(&cmdline).contains(token) {
            found.push(pid);
        }
    }
    found
}
