//! Build script: records the git commit the binary is built from (`HRL_GIT_COMMIT`,
//! with `+dirty` when tracked files have uncommitted changes, `unknown` outside a git
//! checkout), so every evaluation's `config.json` names its source.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    let commit = git(&["rev-parse", "HEAD"]).unwrap_or_else(|| "unknown".into());
    let dirty =
        git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    println!(
        "cargo:rustc-env=HRL_GIT_COMMIT={commit}{}",
        if dirty { "+dirty" } else { "" }
    );
    // Rerun when HEAD moves or a source changes (which may change `dirty`).
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        println!("cargo:rerun-if-changed={dir}/HEAD");
        println!("cargo:rerun-if-changed={dir}/index");
    }
    if let Some(common) = git(&["rev-parse", "--git-common-dir"])
        && let Some(head) = git(&["symbolic-ref", "-q", "HEAD"])
    {
        println!("cargo:rerun-if-changed={common}/{head}");
        println!("cargo:rerun-if-changed={common}/packed-refs");
    }
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=build.rs");
}
