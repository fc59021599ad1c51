//! Helpers shared by the integration-test binaries (each includes this file with
//! `#[path = "../common/mod.rs"] mod common;`): the repository root, the `hrl`
//! binary, the per-binary lock for heavy tests, the sandbox, the default model, a
//! private `HRL_HOME` with the installed models linked in, and (`cap`) the
//! connection-cap fault test of the two HTTP servers.

#![allow(dead_code)] // each binary uses a different subset

pub mod cap;

use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard, OnceLock};

use harness_rl::models;
use harness_rl::sandbox::{Sandbox, SandboxConfig};

/// The repository root (suites, fixtures, seed harnesses).
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The `hrl` binary built for this test run.
pub fn hrl() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_hrl"))
}

/// Tests that run a model, many rollouts or many sandboxes hold this, so timing limits
/// are not skewed by the other tests of the binary on a 2-core machine.
pub fn heavy() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// One sandbox per test binary.
pub fn sandbox() -> &'static Sandbox {
    static SB: OnceLock<Sandbox> = OnceLock::new();
    SB.get_or_init(|| {
        Sandbox::new(SandboxConfig::default())
            .expect("these tests need bubblewrap (`make deps`) and writable cgroups (root)")
    })
}

/// The default model (SmolLM2), which must be installed (`make test` fetches it).
pub fn default_model() -> &'static models::KnownModel {
    let m = models::known(models::DEFAULT_MODEL).expect("the default model is known");
    assert!(
        m.is_installed(),
        "{} is not installed: run `hrl models fetch {}`",
        m.name,
        m.name
    );
    m
}

/// A private `HRL_HOME` for CLI runs: the installed models linked in (the default one
/// must be), an empty completion cache.
pub fn private_home() -> tempfile::TempDir {
    default_model();
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("models");
    std::fs::create_dir_all(&dir).unwrap();
    for m in models::KNOWN_MODELS {
        if m.is_installed() {
            std::os::unix::fs::symlink(m.path(), dir.join(m.path().file_name().unwrap())).unwrap();
        }
    }
    home
}

/// Run `cmd` to completion and return its output; panics with its standard error when
/// it does not exit 0.
pub fn succeed(cmd: &mut std::process::Command) -> std::process::Output {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{cmd:?} did not start: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} exited with {}:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}
