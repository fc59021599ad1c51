//! Where llama.cpp can compute on this machine: the host CPU's SIMD features, the
//! kernels this binary was built with, and — in a `cuda` build — the CUDA runtime, the
//! driver and the GPUs it finds (`hrl doctor` prints this; executor identities record
//! the device a model ran on, [`crate::executor::spec::DeviceIdentity`]).
//!
//! GPUs are enumerated through ggml's backend registry (the devices llama.cpp itself
//! would offload to). In a `cuda` build the CUDA runtime is asked directly for what
//! ggml does not report: runtime and driver versions, each device's compute
//! capability, and why no device was found. The runtime loads the driver's
//! `libcuda.so.1` itself, so on a machine without an NVIDIA driver these calls return
//! an error (reported as the reason) instead of the binary failing to start.

use serde::Serialize;

/// The CPU this process runs on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HostCpu {
    /// `model name` from /proc/cpuinfo, when there is one.
    pub model: Option<String>,
    /// Logical cores available to this process.
    pub cores: usize,
    /// The SIMD features llama.cpp's CPU kernels can use that this CPU has
    /// (`AVX2`, `FMA`, `AVX512F`, ...; detected at run time).
    pub features: Vec<String>,
}

/// One GPU llama.cpp can offload layers to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GpuDevice {
    /// ggml's device name (`CUDA0`).
    pub id: String,
    /// The product name (`NVIDIA H100 80GB HBM3`).
    pub name: String,
    /// `9.0` for an H100 (CUDA devices; `None` for other backends).
    pub compute_capability: Option<String>,
    pub memory_total_mib: u64,
    pub memory_free_mib: u64,
}

/// The CUDA side of a `cuda` build.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CudaStatus {
    /// The CUDA runtime linked in (`13.0`).
    pub runtime: String,
    /// The newest CUDA version the installed driver supports; `None` without a driver.
    pub driver: Option<String>,
    /// GPU architectures llama.cpp's kernels were compiled for (`sm_80`, `sm_90`).
    pub architectures: Vec<String>,
    pub devices: Vec<GpuDevice>,
    /// Why no device is usable, when none is (the CUDA runtime's own message).
    pub problem: Option<String>,
}

/// What this binary can run on this machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Capabilities {
    pub host: HostCpu,
    /// What llama.cpp's CPU kernels were compiled for ([`super::build_features`]).
    pub cpu_kernels: Vec<String>,
    /// Built with `--features cuda`.
    pub cuda_build: bool,
    /// `Some` in a `cuda` build.
    pub cuda: Option<CudaStatus>,
    /// GPUs llama.cpp sees (any GPU backend).
    pub gpus: Vec<GpuDevice>,
}

/// Probe everything (creates a CUDA context on each device in a `cuda` build to read
/// its free memory).
pub fn capabilities() -> Capabilities {
    let gpus = gpu_devices();
    Capabilities {
        host: host_cpu(),
        cpu_kernels: super::build_features(),
        cuda_build: cfg!(feature = "cuda"),
        cuda: cuda_status(&gpus),
        gpus,
    }
}

/// The host CPU, with run-time feature detection.
pub fn host_cpu() -> HostCpu {
    let model = std::fs::read_to_string("/proc/cpuinfo").ok().and_then(|t| {
        t.lines()
            .find_map(|l| l.strip_prefix("model name"))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
    });
    let mut features = Vec::new();
    #[cfg(target_arch = "x86_64")]
    {
        macro_rules! detect {
            ($($f:tt => $name:literal),*) => {
                $( if std::arch::is_x86_feature_detected!($f) { features.push($name.to_string()); } )*
            };
        }
        detect!(
            "sse4.2" => "SSE4.2",
            "avx" => "AVX",
            "avx2" => "AVX2",
            "fma" => "FMA",
            "f16c" => "F16C",
            "bmi2" => "BMI2",
            "avx512f" => "AVX512F",
            "avx512bw" => "AVX512BW",
            "avx512vl" => "AVX512VL",
            "avx512vnni" => "AVX512VNNI",
            "avx512bf16" => "AVX512BF16"
        );
    }
    #[cfg(target_arch = "aarch64")]
    {
        if std::arch::is_aarch64_feature_detected!("neon") {
            features.push("NEON".to_string());
        }
        if std::arch::is_aarch64_feature_detected!("dotprod") {
            features.push("DOTPROD".to_string());
        }
    }
    HostCpu {
        model,
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        features,
    }
}

fn c_text(p: *const std::os::raw::c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: ggml returns NUL-terminated strings it owns for the process lifetime.
    unsafe { std::ffi::CStr::from_ptr(p) }
        .to_string_lossy()
        .into_owned()
}

/// The GPUs (dedicated or integrated) in ggml's device registry, in its order.
pub fn gpu_devices() -> Vec<GpuDevice> {
    use llama_cpp_sys_2 as sys;
    // The process-wide backend first, as a model load does: llama.cpp is initialised
    // and its logs (e.g. ggml-cuda's "failed to initialize CUDA") are silenced unless
    // HRL_LLAMA_LOG=1; the reason is reported through `no_gpu_reason` instead.
    let _ = super::backend();
    let mut out = Vec::new();
    // SAFETY: the registry functions take no pointers from us but the device handles
    // they returned, and write the two memory figures into our locals.
    unsafe {
        for i in 0..sys::ggml_backend_dev_count() {
            let dev = sys::ggml_backend_dev_get(i);
            let kind = sys::ggml_backend_dev_type(dev);
            if kind != sys::GGML_BACKEND_DEVICE_TYPE_GPU
                && kind != sys::GGML_BACKEND_DEVICE_TYPE_IGPU
            {
                continue;
            }
            let (mut free, mut total) = (0usize, 0usize);
            sys::ggml_backend_dev_memory(dev, &mut free, &mut total);
            let id = c_text(sys::ggml_backend_dev_name(dev));
            let compute_capability = cuda_ordinal(&id).and_then(cuda::compute_capability);
            out.push(GpuDevice {
                id,
                name: c_text(sys::ggml_backend_dev_description(dev)),
                compute_capability,
                memory_total_mib: (total / (1 << 20)) as u64,
                memory_free_mib: (free / (1 << 20)) as u64,
            });
        }
    }
    out
}

/// Whether kernels built for `architectures` (`sm_80`, ...) can run on a device of
/// compute capability `cc` (`8.6`): a cubin runs on later minor revisions of its major
/// version, and the PTX CMake embeds for each listed architecture is compiled by the
/// driver for any later device. `None` when either side cannot be read.
pub fn runs_on(cc: &str, architectures: &[String]) -> Option<bool> {
    let (major, minor) = cc.split_once('.')?;
    let device = major.parse::<u32>().ok()? * 10 + minor.parse::<u32>().ok()?;
    let built: Vec<u32> = architectures
        .iter()
        .filter_map(|a| a.strip_prefix("sm_")?.parse().ok())
        .collect();
    if built.is_empty() {
        return None;
    }
    Some(built.iter().any(|&a| a <= device))
}

/// `CUDA3` → 3.
fn cuda_ordinal(id: &str) -> Option<i32> {
    id.strip_prefix("CUDA")?.parse().ok()
}

/// `ARCHS = 800,900` in llama.cpp's system info → `sm_80`, `sm_90`.
fn cuda_architectures(system_info: &str) -> Vec<String> {
    system_info
        .split('|')
        .find_map(|part| {
            let (k, v) = part.split_once('=')?;
            (k.trim().rsplit(':').next()?.trim() == "ARCHS").then(|| v.trim().to_string())
        })
        .map(|v| {
            v.split(',')
                .filter_map(|a| a.trim().parse::<u32>().ok())
                .map(|a| format!("sm_{}", a / 10))
                .collect()
        })
        .unwrap_or_default()
}

/// The CUDA side now (`None` in a CPU build); [`capabilities`] without the host.
pub fn cuda() -> Option<CudaStatus> {
    cuda_status(&gpu_devices())
}

fn cuda_status(gpus: &[GpuDevice]) -> Option<CudaStatus> {
    let versions = cuda::versions()?;
    let devices: Vec<GpuDevice> = gpus
        .iter()
        .filter(|g| cuda_ordinal(&g.id).is_some())
        .cloned()
        .collect();
    let problem = if devices.is_empty() {
        Some(cuda::device_count_error().unwrap_or_else(|| "no CUDA device found".to_string()))
    } else {
        None
    };
    Some(CudaStatus {
        runtime: versions.0,
        driver: versions.1,
        architectures: cuda_architectures(&super::system_info()),
        devices,
        problem,
    })
}

/// Why `gpu_layers > 0` cannot be honoured here, or `None` when a GPU is there.
pub fn no_gpu_reason() -> Option<String> {
    if !gpu_devices().is_empty() {
        return None;
    }
    Some(if cfg!(feature = "cuda") {
        format!(
            "this CUDA build found no CUDA device ({})",
            cuda::device_count_error().unwrap_or_else(|| "no CUDA device found".to_string())
        )
    } else {
        "this hrl was built without GPU support (`make build-cuda` builds \
         target-cuda/release/hrl)"
            .to_string()
    })
}

/// `13000` → `13.0`.
#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
fn cuda_version(v: i32) -> String {
    format!("{}.{}", v / 1000, (v % 1000) / 10)
}

#[cfg(feature = "cuda")]
mod cuda {
    //! The few CUDA runtime calls ggml does not wrap (linked from the toolkit's
    //! libcudart, which ggml-cuda links too).
    use std::os::raw::{c_char, c_int};

    #[link(name = "cudart")]
    unsafe extern "C" {
        fn cudaRuntimeGetVersion(version: *mut c_int) -> c_int;
        fn cudaDriverGetVersion(version: *mut c_int) -> c_int;
        fn cudaGetDeviceCount(count: *mut c_int) -> c_int;
        fn cudaGetErrorString(error: c_int) -> *const c_char;
        fn cudaDeviceGetAttribute(value: *mut c_int, attr: c_int, device: c_int) -> c_int;
    }
    const ATTR_CC_MAJOR: c_int = 75;
    const ATTR_CC_MINOR: c_int = 76;

    /// (runtime, driver) CUDA versions; the driver's is `None` without a driver.
    pub fn versions() -> Option<(String, Option<String>)> {
        let (mut rt, mut drv) = (0, 0);
        // SAFETY: each call writes one int.
        let rt_ok = unsafe { cudaRuntimeGetVersion(&mut rt) } == 0;
        let drv_ok = unsafe { cudaDriverGetVersion(&mut drv) } == 0;
        Some((
            if rt_ok {
                super::cuda_version(rt)
            } else {
                "unknown".to_string()
            },
            (drv_ok && drv > 0).then(|| super::cuda_version(drv)),
        ))
    }

    /// The runtime's message when it cannot count devices (no driver, driver too old,
    /// no device); `None` when it counts one or more.
    pub fn device_count_error() -> Option<String> {
        let mut n = 0;
        // SAFETY: writes one int; the error string is static.
        let e = unsafe { cudaGetDeviceCount(&mut n) };
        if e == 0 && n > 0 {
            return None;
        }
        if e == 0 {
            return Some("the CUDA runtime reports 0 devices".to_string());
        }
        let msg = super::c_text(unsafe { cudaGetErrorString(e) });
        Some(format!("cudaGetDeviceCount: {msg} (error {e})"))
    }

    pub fn compute_capability(device: i32) -> Option<String> {
        let (mut major, mut minor) = (0, 0);
        // SAFETY: each call writes one int.
        let ok = unsafe {
            cudaDeviceGetAttribute(&mut major, ATTR_CC_MAJOR, device) == 0
                && cudaDeviceGetAttribute(&mut minor, ATTR_CC_MINOR, device) == 0
        };
        ok.then(|| format!("{major}.{minor}"))
    }
}

#[cfg(not(feature = "cuda"))]
mod cuda {
    //! A CPU build has no CUDA runtime.
    pub fn versions() -> Option<(String, Option<String>)> {
        None
    }
    pub fn device_count_error() -> Option<String> {
        None
    }
    pub fn compute_capability(_device: i32) -> Option<String> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_cuda_architectures_and_versions() {
        let info =
            "CPU : SSE3 = 1 | AVX2 = 1 | CUDA : ARCHS = 800,900 | USE_GRAPHS = 1 | NO_VMM = 1 |";
        assert_eq!(cuda_architectures(info), vec!["sm_80", "sm_90"]);
        assert!(cuda_architectures("CPU : AVX2 = 1 |").is_empty());
        assert_eq!(cuda_version(13000), "13.0");
        assert_eq!(cuda_version(12090), "12.9");
        assert_eq!(cuda_ordinal("CUDA0"), Some(0));
        assert_eq!(cuda_ordinal("CUDA12"), Some(12));
        assert_eq!(cuda_ordinal("Vulkan0"), None);
    }

    #[test]
    fn architectures_cover_later_devices_only() {
        let built = vec!["sm_80".to_string(), "sm_90".to_string()];
        assert_eq!(runs_on("9.0", &built), Some(true)); // H100
        assert_eq!(runs_on("8.0", &built), Some(true)); // A100
        assert_eq!(runs_on("8.9", &built), Some(true)); // L4, RTX 4090
        assert_eq!(runs_on("12.0", &built), Some(true)); // Blackwell, through PTX
        assert_eq!(runs_on("7.5", &built), Some(false)); // T4
        assert_eq!(runs_on("7.5", &[]), None);
        assert_eq!(runs_on("x", &built), None);
    }

    #[test]
    fn host_cpu_is_detected() {
        let h = host_cpu();
        assert!(h.cores >= 1);
        // Every x86-64 CPU this project supports has SSE4.2 (and the build's AVX2).
        #[cfg(target_arch = "x86_64")]
        assert!(h.features.iter().any(|f| f == "SSE4.2"), "{h:?}");
    }

    /// A CPU build sees no GPU, says why, and reports no CUDA side.
    #[cfg(not(feature = "cuda"))]
    #[test]
    fn cpu_build_has_no_gpu() {
        let c = capabilities();
        assert!(!c.cuda_build);
        assert!(c.cuda.is_none());
        assert!(c.gpus.is_empty());
        let why = no_gpu_reason().expect("no GPU in a CPU build");
        assert!(why.contains("without GPU support"), "{why}");
    }
}
