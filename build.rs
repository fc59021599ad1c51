//! Build script: records the git commit the binary is built from (`HRL_GIT_COMMIT`,
//! with `+dirty` when tracked files have uncommitted changes, `unknown` outside a git
//! checkout), so every evaluation's `config.json` names its source.
//!
//! With the `cuda` feature llama.cpp is linked as shared libraries: the binaries get a
//! run path to the directory llama-cpp-sys-2 installed them in and to the CUDA
//! toolkit's `lib` (`$HRL_CUDA_ROOT`, set by `scripts/cuda_toolkit.sh env`, else
//! `$CUDA_PATH`), so `target-cuda/release/hrl` runs without `LD_LIBRARY_PATH`.

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
    cuda_run_paths();
}

/// Run paths of the CUDA build (see the module doc); nothing for the CPU build.
fn cuda_run_paths() {
    println!("cargo:rerun-if-env-changed=HRL_CUDA_ROOT");
    if std::env::var_os("CARGO_FEATURE_CUDA").is_none() {
        return;
    }
    let mut paths = Vec::new();
    // `cargo:root` of llama-cpp-sys-2 (links = "llama"): its OUT_DIR, whose lib/ holds
    // libllama.so.0, libggml*.so.0 and their unversioned names.
    if let Ok(root) = std::env::var("DEP_LLAMA_ROOT") {
        paths.push(format!("{root}/lib"));
    }
    // The toolkit's lib/: libcudart for the few runtime calls of
    // src/executor/llama/device.rs (HRL_CUDA_ROOT from scripts/cuda_toolkit.sh, else
    // a system toolkit's CUDA_PATH).
    println!("cargo:rerun-if-env-changed=CUDA_PATH");
    let toolkit = std::env::var("HRL_CUDA_ROOT").or_else(|_| std::env::var("CUDA_PATH"));
    if let Ok(cuda) = toolkit {
        for lib in ["lib", "lib64"] {
            let dir = format!("{cuda}/{lib}");
            if std::path::Path::new(&dir).is_dir() {
                println!("cargo:rustc-link-search=native={dir}");
                paths.push(dir);
                break;
            }
        }
    }
    for path in paths {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{path}");
    }
}
