//! `hrl doctor`: what this binary can run on this machine: the host CPU's features, the
//! kernels llama.cpp was built for, whether this is a CUDA build, the CUDA runtime and
//! driver, and the GPUs found (text, or one JSON object with `--json`).

use anyhow::Result;
use clap::Args;
use harness_rl::executor::llama::device::{self, Capabilities};

#[derive(Args)]
pub struct DoctorArgs {
    /// One JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Exit with status 1 when no GPU is usable (for scripts that must not measure the
    /// CPU by mistake).
    #[arg(long)]
    pub require_gpu: bool,
}

pub fn run(a: DoctorArgs) -> Result<()> {
    let caps = device::capabilities();
    if a.json {
        let mut v = serde_json::to_value(&caps)?;
        v["hrl"] = serde_json::json!({
            "version": env!("CARGO_PKG_VERSION"),
            "commit": harness_rl::eval::config::GIT_COMMIT,
        });
        println!("{v}");
    } else {
        print_text(&caps);
    }
    if a.require_gpu && caps.gpus.is_empty() {
        anyhow::bail!(
            "--require-gpu: {}",
            device::no_gpu_reason().unwrap_or_else(|| "no GPU".into())
        );
    }
    Ok(())
}

fn print_text(c: &Capabilities) {
    println!(
        "hrl {} (commit {}), {}",
        env!("CARGO_PKG_VERSION"),
        harness_rl::eval::config::GIT_COMMIT,
        std::env::consts::ARCH
    );
    println!(
        "host CPU: {}, {} cores: {}",
        c.host.model.as_deref().unwrap_or("unknown model"),
        c.host.cores,
        c.host.features.join(" ")
    );
    println!("llama.cpp CPU kernels: {}", c.cpu_kernels.join(" "));
    match &c.cuda {
        None => println!(
            "CUDA build: no (`make build-cuda` builds the CUDA binary, target-cuda/release/hrl)"
        ),
        Some(cuda) => {
            println!(
                "CUDA build: yes, CUDA runtime {}, kernels for {}",
                cuda.runtime,
                if cuda.architectures.is_empty() {
                    "unknown architectures".to_string()
                } else {
                    cuda.architectures.join(" ")
                }
            );
            match &cuda.driver {
                Some(d) => println!("NVIDIA driver: supports CUDA {d}"),
                None => println!("NVIDIA driver: none found"),
            }
        }
    }
    if c.gpus.is_empty() {
        println!(
            "GPUs: none: {}",
            device::no_gpu_reason().unwrap_or_default()
        );
        println!("executors run on the CPU; gpu_layers > 0 is refused");
        return;
    }
    let built = c
        .cuda
        .as_ref()
        .map(|x| x.architectures.clone())
        .unwrap_or_default();
    for g in &c.gpus {
        let cc = g.compute_capability.as_deref();
        println!(
            "GPU {}: {}{}, {} MiB ({} MiB free)",
            g.id,
            g.name,
            cc.map(|cc| format!(", compute capability {cc}"))
                .unwrap_or_default(),
            g.memory_total_mib,
            g.memory_free_mib
        );
        if let Some(false) = cc.and_then(|cc| device::runs_on(cc, &built)) {
            println!(
                "  warning: this build's kernels ({}) do not run on compute capability {}; \
                 rebuild with HRL_CUDA_ARCHS set to include it",
                built.join(" "),
                cc.unwrap_or("?")
            );
        }
    }
    println!("executors offload with gpu_layers=N (99 = every layer)");
}
