//! `ExecutorSpec`: one string that names an executor, and the one function that opens
//! it ([`ExecutorSpec::open`]), used by every command that calls a model.
//!
//! ```text
//! llama:MODEL[,KEY=VALUE]...        in-process llama.cpp; MODEL = known name or .gguf path
//!     n_parallel=N   sequences decoded together          [8]
//!     ctx=N          context tokens per sequence         [2048]
//!     n_batch=N      tokens per decode call              [512]
//!     threads=N      CPU threads, 0 = all cores          [0]
//!     gpu_layers=N   layers offloaded (cuda builds)      [0]
//!     lora=PATH      a GGUF LoRA adapter; lora_scale=F   [1.0]
//!     prefix_reuse=on|off   reuse prefixes of live sequences        [on]
//!     prefix_cache=on|off   keep finished prompts' KV for reuse      [on]
//!     prefill_block=N       prompt block size, 0 = unaligned chunks  [64]
//!     kv_unified=on|off     one KV buffer for all seqs               [off]
//! openai:URL#MODEL[,KEY=VALUE]...   an OpenAI-compatible server (vLLM, SGLang, hrl serve)
//!     max_connections=N [8], timeout_s=F [600], retries=N [5]
//! MODEL                              shorthand for llama:MODEL
//! ```
//!
//! Opening resolves the model, loads or connects, and wraps the executor in the
//! completion cache unless told not to. The result carries an [`ExecutorIdentity`]:
//! backend, model sha256 (or the server's model id), LoRA adapter and its sha256, and
//! the build (crate version, target architecture and CPU features, CUDA) and, in a CUDA
//! build, the device ([`DeviceIdentity`]: CUDA version, GPU name, compute capability,
//! layers offloaded) — everything that changes greedy outputs — hashed into one id
//! that goes into every record. CPU builds record no device, so their identities and
//! hashes are the same as before devices were recorded.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::cache::{CachedExecutor, CompletionCache, default_cache_path};
use super::openai::{OpenAiConfig, OpenAiExecutor};
use super::{Executor, ExecutorError};

/// Settings of an in-process llama.cpp executor named by a spec.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LlamaSpec {
    /// Known model name or GGUF path.
    pub model: String,
    pub n_parallel: u32,
    pub ctx: u32,
    pub n_batch: u32,
    pub threads: u32,
    pub gpu_layers: u32,
    pub lora: Option<PathBuf>,
    pub lora_scale: f32,
    pub prefix_reuse: bool,
    pub prefix_cache: bool,
    pub prefill_block: u32,
    pub kv_unified: bool,
}

impl LlamaSpec {
    pub fn new(model: impl Into<String>) -> LlamaSpec {
        LlamaSpec {
            model: model.into(),
            n_parallel: 8,
            ctx: 2048,
            n_batch: 512,
            threads: 0,
            gpu_layers: 0,
            lora: None,
            lora_scale: 1.0,
            prefix_reuse: true,
            prefix_cache: true,
            prefill_block: 64,
            kv_unified: false,
        }
    }
}

/// Settings of an OpenAI-compatible executor named by a spec.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpenAiSpec {
    pub url: String,
    pub model: String,
    pub max_connections: usize,
    pub timeout_s: f64,
    pub retries: u32,
}

/// A parsed executor SPEC (see the module doc for the grammar).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "backend", rename_all = "snake_case")]
pub enum ExecutorSpec {
    Llama(LlamaSpec),
    Openai(OpenAiSpec),
}

/// Where completions are cached.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum CacheSetting {
    /// `$HRL_HOME/cache/completions.sqlite`.
    #[default]
    Default,
    Path(PathBuf),
    Off,
}

/// Options of [`ExecutorSpec::open`].
#[derive(Debug, Clone, Default)]
pub struct OpenOptions {
    pub cache: CacheSetting,
}

/// The build this binary is: what changes llama.cpp's arithmetic.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BuildIdentity {
    pub crate_version: String,
    pub target_arch: String,
    /// SIMD features the Rust code was compiled for.
    pub target_features: Vec<String>,
    /// What llama.cpp's kernels were compiled for, as llama.cpp reports it
    /// (`AVX2`, `FMA`, `F16C`, `OPENMP`, ...; empty without the `llama` feature).
    pub llama_features: Vec<String>,
    pub cuda: bool,
    /// The llama.cpp binding (`llama-cpp-2` version).
    pub llama_cpp: String,
}

impl BuildIdentity {
    pub fn current() -> BuildIdentity {
        let mut f = Vec::new();
        macro_rules! feat {
            ($($name:literal),*) => {
                $( if cfg!(target_feature = $name) { f.push($name.to_string()); } )*
            };
        }
        feat!(
            "sse4.2",
            "avx",
            "avx2",
            "fma",
            "f16c",
            "bmi2",
            "avx512f",
            "avx512bw",
            "avx512vl",
            "avx512vnni",
            "neon",
            "dotprod"
        );
        BuildIdentity {
            crate_version: env!("CARGO_PKG_VERSION").to_string(),
            target_arch: std::env::consts::ARCH.to_string(),
            target_features: f,
            #[cfg(feature = "llama")]
            llama_features: super::llama::build_features(),
            #[cfg(not(feature = "llama"))]
            llama_features: Vec::new(),
            cuda: cfg!(feature = "cuda"),
            llama_cpp: "llama-cpp-2 0.1.160".to_string(),
        }
    }

    /// `x86_64+AVX2+FMA+...` (llama.cpp's features, else the Rust target's; `+cuda`).
    pub fn short(&self) -> String {
        let mut s = self.target_arch.clone();
        let feats = if self.llama_features.is_empty() {
            &self.target_features
        } else {
            &self.llama_features
        };
        for f in feats {
            s.push('+');
            s.push_str(f);
        }
        if self.cuda {
            s.push_str("+cuda");
        }
        s
    }
}

/// A LoRA adapter in use.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoraIdentity {
    pub path: PathBuf,
    pub sha256: String,
    pub scale: f32,
}

/// Who produced a completion: recorded in full in a run's summary, and as an
/// [`ExecutorRef`] in every rollout.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExecutorIdentity {
    /// The spec, normalised.
    pub spec: String,
    /// `llama.cpp` or `openai`.
    pub backend: String,
    /// The model's id: a GGUF's sha256, or what the server reports.
    pub model_id: String,
    /// The model name or path as given.
    pub model: String,
    pub lora: Option<LoraIdentity>,
    /// For an HTTP executor this is the client's build; the server's is its own.
    pub build: BuildIdentity,
    /// Where an in-process model computed, in a build with a GPU backend (absent from
    /// CPU builds and HTTP executors).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<DeviceIdentity>,
    /// Settings recorded but not hashed (slots, context size). The batch schedule (which
    /// requests share a decode step) can still change long greedy generations; the
    /// completion cache makes a rerun repeat the first run's text.
    pub settings: serde_json::Value,
    /// Settings that change outputs (threads, KV layout, prefix reuse): hashed.
    pub output_settings: serde_json::Value,
    /// SHA-256 over backend, model id, LoRA, build and output settings.
    pub hash: String,
}

/// The GPU side of an in-process executor in a CUDA build. The CUDA binary on a machine
/// without a usable device runs on the CPU and says so: `devices` empty, 0 layers
/// offloaded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceIdentity {
    /// The GPU backend (`CUDA`).
    pub backend: String,
    /// The CUDA runtime version the binary was built with (`13.0`).
    pub runtime: String,
    /// The newest CUDA version the driver supports; `None` without a driver. Recorded,
    /// not hashed (a driver update does not change compiled kernels).
    pub driver: Option<String>,
    /// The GPUs llama.cpp saw, as `NAME (compute capability X.Y)`. Even with 0 layers
    /// offloaded llama.cpp may run large batched products on a visible GPU, so they
    /// are part of the identity either way.
    pub devices: Vec<String>,
    /// Layers on the GPU, of `layers_total` (llama.cpp counts the output layer as one).
    pub layers_offloaded: u32,
    pub layers_total: u32,
}

impl DeviceIdentity {
    /// `CUDA 13.0, NVIDIA H100 80GB HBM3 (compute capability 9.0), 25/25 layers` or
    /// `CUDA 13.0, no device: CPU`.
    pub fn short(&self) -> String {
        if self.devices.is_empty() {
            return format!("{} {}, no device: CPU", self.backend, self.runtime);
        }
        format!(
            "{} {}, {}, {}/{} layers",
            self.backend,
            self.runtime,
            self.devices.join(" + "),
            self.layers_offloaded,
            self.layers_total
        )
    }
}

/// The compact identity every rollout record carries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecutorRef {
    pub hash: String,
    pub model_id: String,
    pub backend: String,
    pub build: String,
    /// [`DeviceIdentity::short`] in a CUDA build; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
}

impl ExecutorIdentity {
    fn finish(mut self) -> ExecutorIdentity {
        let mut h = Sha256::new();
        h.update(b"harness-rl/executor-identity/v1\0");
        let mut v = serde_json::json!({
            "backend": self.backend,
            "model_id": self.model_id,
            "lora": self.lora.as_ref().map(|l| (&l.sha256, l.scale)),
            "build": self.build,
            "output_settings": self.output_settings,
        });
        // Only when there is a device, so a CPU identity hashes exactly as before.
        if let Some(d) = &self.device {
            v["device"] = serde_json::json!({
                "backend": d.backend,
                "runtime": d.runtime,
                "devices": d.devices,
                "layers_offloaded": d.layers_offloaded,
                "layers_total": d.layers_total,
            });
        }
        h.update(v.to_string().as_bytes());
        self.hash = hex(&h.finalize());
        self
    }

    pub fn reference(&self) -> ExecutorRef {
        ExecutorRef {
            hash: self.hash.clone(),
            model_id: self.model_id.clone(),
            backend: self.backend.clone(),
            build: self.build.short(),
            device: self.device.as_ref().map(DeviceIdentity::short),
        }
    }
}

/// The device side of a loaded model's identity: `Some` only in a CUDA build.
#[cfg(feature = "llama")]
fn device_identity(info: &super::llama::LlamaModelInfo) -> Option<DeviceIdentity> {
    let cuda = super::llama::device::cuda()?;
    let devices: Vec<String> = cuda
        .devices
        .iter()
        .map(|d| match &d.compute_capability {
            Some(cc) => format!("{} (compute capability {cc})", d.name),
            None => d.name.clone(),
        })
        .collect();
    Some(DeviceIdentity {
        backend: "CUDA".into(),
        runtime: cuda.runtime,
        driver: cuda.driver,
        layers_offloaded: if devices.is_empty() {
            0
        } else {
            info.layers_offloaded
        },
        layers_total: info.layers_total,
        devices,
    })
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// An opened executor.
pub struct OpenedExecutor {
    /// What to call: the cache wrapper when the cache is on, else the backend.
    pub executor: Arc<dyn Executor>,
    pub identity: ExecutorIdentity,
    /// The cache wrapper (for hit and miss counters).
    pub cache: Option<Arc<CachedExecutor>>,
    /// The in-process backend (for its batching statistics).
    #[cfg(feature = "llama")]
    pub llama: Option<Arc<super::llama::LlamaExecutor>>,
    /// The HTTP backend (for its counters).
    pub openai: Option<Arc<OpenAiExecutor>>,
}

impl std::fmt::Debug for OpenedExecutor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenedExecutor")
            .field("identity", &self.identity)
            .field("cached", &self.cache.is_some())
            .finish()
    }
}

fn bad(spec: &str, msg: impl std::fmt::Display) -> ExecutorError {
    ExecutorError::InvalidRequest(format!("executor spec `{spec}`: {msg}"))
}

fn on_off(spec: &str, key: &str, v: &str) -> Result<bool, ExecutorError> {
    match v {
        "on" | "true" | "1" => Ok(true),
        "off" | "false" | "0" => Ok(false),
        _ => Err(bad(spec, format!("{key}=`{v}`: expected on or off"))),
    }
}

fn number<T: std::str::FromStr>(spec: &str, key: &str, v: &str) -> Result<T, ExecutorError> {
    v.parse()
        .map_err(|_| bad(spec, format!("{key}=`{v}` is not a valid number")))
}

impl ExecutorSpec {
    /// Parse a SPEC (see the module doc).
    pub fn parse(spec: &str) -> Result<ExecutorSpec, ExecutorError> {
        let spec = spec.trim();
        if spec.is_empty() {
            return Err(bad(spec, "empty"));
        }
        if let Some(rest) = spec.strip_prefix("openai:") {
            let (url, tail) = rest
                .split_once('#')
                .ok_or_else(|| bad(spec, "expected openai:URL#MODEL"))?;
            let mut parts = tail.split(',');
            let model = parts.next().unwrap_or("").trim();
            if url.is_empty() || model.is_empty() {
                return Err(bad(spec, "expected openai:URL#MODEL"));
            }
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(bad(spec, "the URL must start with http:// or https://"));
            }
            let mut o = OpenAiSpec {
                url: url.to_string(),
                model: model.to_string(),
                max_connections: 8,
                timeout_s: 600.0,
                retries: 5,
            };
            for kv in parts {
                let (k, v) = kv
                    .split_once('=')
                    .ok_or_else(|| bad(spec, format!("option `{kv}` is not KEY=VALUE")))?;
                match k.trim() {
                    "max_connections" => o.max_connections = number(spec, k, v)?,
                    "timeout_s" => o.timeout_s = number(spec, k, v)?,
                    "retries" => o.retries = number(spec, k, v)?,
                    other => {
                        return Err(bad(
                            spec,
                            format!(
                                "unknown option `{other}` (max_connections, timeout_s, retries)"
                            ),
                        ));
                    }
                }
            }
            if o.max_connections == 0 || !(o.timeout_s > 0.0 && o.timeout_s.is_finite()) {
                return Err(bad(spec, "max_connections must be >= 1 and timeout_s > 0"));
            }
            return Ok(ExecutorSpec::Openai(o));
        }
        let rest = spec.strip_prefix("llama:").unwrap_or(spec);
        if let Some((kind, _)) = rest.split_once(':')
            && !kind.contains('/')
            && !kind.contains('.')
        {
            return Err(bad(
                spec,
                format!("unknown backend `{kind}` (llama:MODEL or openai:URL#MODEL)"),
            ));
        }
        let mut parts = rest.split(',');
        let model = parts.next().unwrap_or("").trim();
        if model.is_empty() {
            return Err(bad(spec, "name a model (llama:NAME or llama:PATH.gguf)"));
        }
        let mut l = LlamaSpec::new(model);
        for kv in parts {
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| bad(spec, format!("option `{kv}` is not KEY=VALUE")))?;
            let (k, v) = (k.trim(), v.trim());
            match k {
                "n_parallel" => l.n_parallel = number(spec, k, v)?,
                "ctx" => l.ctx = number(spec, k, v)?,
                "n_batch" => l.n_batch = number(spec, k, v)?,
                "threads" => l.threads = number(spec, k, v)?,
                "gpu_layers" => l.gpu_layers = number(spec, k, v)?,
                "lora" => l.lora = Some(PathBuf::from(v)),
                "lora_scale" => l.lora_scale = number(spec, k, v)?,
                "prefix_reuse" => l.prefix_reuse = on_off(spec, k, v)?,
                "prefix_cache" => l.prefix_cache = on_off(spec, k, v)?,
                "prefill_block" => l.prefill_block = number(spec, k, v)?,
                "kv_unified" => l.kv_unified = on_off(spec, k, v)?,
                other => {
                    return Err(bad(
                        spec,
                        format!(
                            "unknown option `{other}` (n_parallel, ctx, n_batch, threads, gpu_layers, lora, lora_scale, prefix_reuse, prefix_cache, prefill_block, kv_unified)"
                        ),
                    ));
                }
            }
        }
        if l.n_parallel == 0 || l.ctx < 8 || l.n_batch == 0 {
            return Err(bad(spec, "n_parallel and n_batch must be >= 1, ctx >= 8"));
        }
        if l.prefill_block > l.n_batch {
            return Err(bad(spec, "prefill_block must not exceed n_batch"));
        }
        if !(l.lora_scale.is_finite()) {
            return Err(bad(spec, "lora_scale must be finite"));
        }
        Ok(ExecutorSpec::Llama(l))
    }

    /// The spec written back in its normal form.
    pub fn normalized(&self) -> String {
        match self {
            ExecutorSpec::Llama(l) => {
                let mut s = format!(
                    "llama:{},n_parallel={},ctx={},n_batch={},threads={},gpu_layers={}",
                    l.model, l.n_parallel, l.ctx, l.n_batch, l.threads, l.gpu_layers
                );
                if let Some(p) = &l.lora {
                    s.push_str(&format!(
                        ",lora={},lora_scale={}",
                        p.display(),
                        l.lora_scale
                    ));
                }
                let on = |b: bool| if b { "on" } else { "off" };
                s.push_str(&format!(
                    ",prefix_reuse={},prefix_cache={},prefill_block={},kv_unified={}",
                    on(l.prefix_reuse),
                    on(l.prefix_cache),
                    l.prefill_block,
                    on(l.kv_unified)
                ));
                s
            }
            ExecutorSpec::Openai(o) => format!(
                "openai:{}#{},max_connections={},timeout_s={},retries={}",
                o.url, o.model, o.max_connections, o.timeout_s, o.retries
            ),
        }
    }

    /// Sequences the executor decodes together (the useful number of concurrent
    /// requests).
    pub fn parallelism(&self) -> usize {
        match self {
            ExecutorSpec::Llama(l) => l.n_parallel as usize,
            ExecutorSpec::Openai(o) => o.max_connections,
        }
    }

    /// Load the in-process model (llama specs only).
    #[cfg(feature = "llama")]
    pub fn open_llama(&self) -> Result<super::llama::LlamaExecutor, ExecutorError> {
        use super::llama::{LlamaExecutor, LlamaOptions};
        let ExecutorSpec::Llama(l) = self else {
            return Err(bad(&self.normalized(), "not an in-process llama.cpp spec"));
        };
        // A model that is not installed or not a file is the caller's mistake (usage); a
        // damaged install is the environment's (runtime): keep the model error's kind.
        let mut opts = LlamaOptions::for_model(&l.model).map_err(|e| {
            let message = format!("model {}: {e}", l.model);
            match crate::error::Classify::kind(&e) {
                crate::error::ErrorKind::Usage => ExecutorError::InvalidRequest(message),
                crate::error::ErrorKind::Runtime => ExecutorError::Model(message),
            }
        })?;
        opts.n_parallel = l.n_parallel;
        opts.n_ctx_per_seq = l.ctx;
        opts.n_batch = l.n_batch;
        opts.n_threads = l.threads;
        opts.gpu_layers = l.gpu_layers;
        opts.lora = l.lora.clone();
        opts.lora_scale = l.lora_scale;
        opts.prefix_reuse = l.prefix_reuse;
        opts.prefix_cache = l.prefix_cache;
        opts.prefill_block = l.prefill_block;
        opts.kv_unified = l.kv_unified;
        if let Some(p) = &l.lora
            && !p.is_file()
        {
            return Err(ExecutorError::InvalidRequest(format!(
                "LoRA adapter {} does not exist",
                p.display()
            )));
        }
        LlamaExecutor::load(opts)
    }

    /// Connect to the server (openai specs only).
    pub fn open_openai(&self) -> Result<OpenAiExecutor, ExecutorError> {
        let ExecutorSpec::Openai(o) = self else {
            return Err(bad(&self.normalized(), "not an openai spec"));
        };
        let mut cfg = OpenAiConfig::new(o.url.clone(), o.model.clone());
        cfg.max_connections = o.max_connections;
        cfg.timeout = Duration::from_secs_f64(o.timeout_s);
        cfg.max_retries = o.retries;
        OpenAiExecutor::connect(cfg)
    }

    /// Open the executor: load or connect, then wrap it in the completion cache
    /// unless `options.cache` is `Off`.
    pub fn open(&self, options: &OpenOptions) -> Result<OpenedExecutor, ExecutorError> {
        let build = BuildIdentity::current();
        let (backend, identity, openai): (Arc<dyn Executor>, ExecutorIdentity, _);
        #[cfg(feature = "llama")]
        let mut llama = None;
        match self {
            ExecutorSpec::Llama(l) => {
                #[cfg(feature = "llama")]
                {
                    let exec = Arc::new(self.open_llama()?);
                    let info = exec.info().clone();
                    let lora = match &l.lora {
                        Some(p) => Some(LoraIdentity {
                            path: p.clone(),
                            sha256: crate::models::sha256_file(p)
                                .map_err(|e| ExecutorError::Model(e.to_string()))?,
                            scale: l.lora_scale,
                        }),
                        None => None,
                    };
                    identity = ExecutorIdentity {
                        spec: self.normalized(),
                        backend: "llama.cpp".into(),
                        model_id: info.sha256.clone(),
                        model: l.model.clone(),
                        lora,
                        build,
                        device: device_identity(&info),
                        settings: serde_json::json!({
                            "n_parallel": l.n_parallel,
                            "ctx_per_seq": l.ctx,
                            "n_batch": l.n_batch,
                            "threads": info.n_threads,
                            "gpu_layers": l.gpu_layers,
                            "chat_template": info.chat_template,
                            "architecture": info.architecture,
                            "path": info.path,
                        }),
                        // Block mode makes reuse invisible in outputs; without blocks, reuse
                        // and the cache change them, so they are part of the identity.
                        // The thread count changes how float sums are split, and
                        // measurably changes long greedy generations (docs/RESULTS.md,
                        // HumanEval: 3/7 vs 4/7 passing with 1 vs 2 threads), so the
                        // resolved count is part of the identity.
                        output_settings: if l.prefill_block > 0 && !l.kv_unified {
                            serde_json::json!({
                                "prefill_block": l.prefill_block,
                                "threads": info.n_threads,
                            })
                        } else {
                            serde_json::json!({
                                "prefill_block": l.prefill_block,
                                "kv_unified": l.kv_unified,
                                "prefix_reuse": l.prefix_reuse,
                                "prefix_cache": l.prefix_cache,
                                "threads": info.n_threads,
                            })
                        },
                        hash: String::new(),
                    }
                    .finish();
                    backend = exec.clone();
                    llama = Some(exec);
                    openai = None;
                }
                #[cfg(not(feature = "llama"))]
                {
                    let _ = l;
                    return Err(bad(
                        &self.normalized(),
                        "this build has no in-process llama.cpp (the `llama` feature is off)",
                    ));
                }
            }
            ExecutorSpec::Openai(o) => {
                let exec = Arc::new(self.open_openai()?);
                identity = ExecutorIdentity {
                    spec: self.normalized(),
                    backend: "openai".into(),
                    model_id: exec.model_id().to_string(),
                    model: o.model.clone(),
                    lora: None,
                    build,
                    device: None,
                    settings: serde_json::json!({
                        "url": o.url,
                        "max_connections": o.max_connections,
                        "timeout_s": o.timeout_s,
                        "retries": o.retries,
                    }),
                    output_settings: serde_json::json!({}),
                    hash: String::new(),
                }
                .finish();
                backend = exec.clone();
                openai = Some(exec);
            }
        }
        let (executor, cache) = match &options.cache {
            CacheSetting::Off => (backend, None),
            setting => {
                let path = match setting {
                    CacheSetting::Path(p) => p.clone(),
                    _ => default_cache_path(),
                };
                let cache = Arc::new(CompletionCache::open(&path)?);
                let cached = Arc::new(CachedExecutor::new(backend, cache));
                (cached.clone() as Arc<dyn Executor>, Some(cached))
            }
        };
        Ok(OpenedExecutor {
            executor,
            identity,
            cache,
            #[cfg(feature = "llama")]
            llama,
            openai,
        })
    }
}

impl std::str::FromStr for ExecutorSpec {
    type Err = ExecutorError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ExecutorSpec::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn llama_specs() {
        let s = ExecutorSpec::parse("llama:qwen2.5-coder-0.5b,n_parallel=16,threads=2,ctx=4096")
            .unwrap();
        let ExecutorSpec::Llama(l) = &s else { panic!() };
        assert_eq!((l.n_parallel, l.threads, l.ctx), (16, 2, 4096));
        assert_eq!(l.model, "qwen2.5-coder-0.5b");
        assert_eq!(ExecutorSpec::parse(&s.normalized()).unwrap(), s);
        // A bare name is a llama spec; a path keeps its dots and slashes.
        assert_eq!(
            ExecutorSpec::parse("smollm2-135m").unwrap(),
            ExecutorSpec::Llama(LlamaSpec::new("smollm2-135m"))
        );
        let p = ExecutorSpec::parse("llama:/m/x.gguf,lora=/a/b.gguf,prefix_reuse=off").unwrap();
        let ExecutorSpec::Llama(l) = &p else { panic!() };
        assert_eq!(l.lora.as_deref(), Some(std::path::Path::new("/a/b.gguf")));
        assert!(!l.prefix_reuse);
        for b in [
            "",
            "llama:",
            "llama:m,n_parallel=0",
            "llama:m,colour=red",
            "llama:m,threads=x",
            "llama:m,kv_unified=maybe",
            "vllm:foo",
        ] {
            assert!(ExecutorSpec::parse(b).is_err(), "{b}");
        }
    }

    #[test]
    fn openai_specs() {
        let s =
            ExecutorSpec::parse("openai:http://127.0.0.1:8080/v1#qwen,max_connections=32").unwrap();
        let ExecutorSpec::Openai(o) = &s else {
            panic!()
        };
        assert_eq!(o.url, "http://127.0.0.1:8080/v1");
        assert_eq!(o.model, "qwen");
        assert_eq!(o.max_connections, 32);
        assert_eq!(ExecutorSpec::parse(&s.normalized()).unwrap(), s);
        for b in [
            "openai:http://x/v1",
            "openai:#m",
            "openai:ftp://x#m",
            "openai:http://x#m,max_connections=0",
        ] {
            assert!(ExecutorSpec::parse(b).is_err(), "{b}");
        }
    }

    #[test]
    fn identity_hash_covers_outputs_not_slots() {
        let base = ExecutorIdentity {
            spec: "s".into(),
            backend: "llama.cpp".into(),
            model_id: "abc".into(),
            model: "m".into(),
            lora: None,
            build: BuildIdentity::current(),
            device: None,
            settings: serde_json::json!({"n_parallel": 8}),
            output_settings: serde_json::json!({"kv_unified": false}),
            hash: String::new(),
        };
        let a = base.clone().finish();
        let mut b = base.clone();
        b.settings = serde_json::json!({"n_parallel": 16});
        assert_eq!(a.hash, b.finish().hash);
        let mut c = base.clone();
        c.output_settings = serde_json::json!({"kv_unified": true});
        assert_ne!(a.hash, c.finish().hash);
        let mut d = base;
        d.build.target_features.push("avx512f".into());
        assert_ne!(a.hash, d.finish().hash);
    }

    fn cpu_identity() -> ExecutorIdentity {
        ExecutorIdentity {
            spec: "s".into(),
            backend: "llama.cpp".into(),
            model_id: "abc".into(),
            model: "m".into(),
            lora: None,
            build: BuildIdentity {
                crate_version: "0.1.0".into(),
                target_arch: "x86_64".into(),
                target_features: vec!["avx2".into()],
                llama_features: vec!["AVX2".into()],
                cuda: false,
                llama_cpp: "llama-cpp-2 0.1.160".into(),
            },
            device: None,
            settings: serde_json::json!({"n_parallel": 8}),
            output_settings: serde_json::json!({"threads": 2}),
            hash: String::new(),
        }
    }

    /// A CPU identity (no device) hashes and serialises exactly as before devices were
    /// recorded: pinned against the value the earlier code computed for it.
    #[test]
    fn cpu_identity_hash_is_unchanged() {
        let a = cpu_identity().finish();
        // sha256 of the domain tag and the JSON {backend, model_id, lora, build,
        // output_settings}, computed independently (Python's hashlib and json).
        assert_eq!(
            a.hash,
            "797c08dd8e88b7b433434dddd93131e92228b1497682e0d1bd112ba0445a6f05"
        );
        let text = serde_json::to_string(&a).unwrap();
        assert!(!text.contains("device"), "{text}");
        assert!(
            !serde_json::to_string(&a.reference())
                .unwrap()
                .contains("device")
        );
        // Records written before the field existed still read.
        let back: ExecutorIdentity = serde_json::from_str(&text).unwrap();
        assert_eq!(back, a);
    }

    #[test]
    fn device_is_hashed_but_not_the_driver() {
        let cpu = cpu_identity().finish();
        let device = DeviceIdentity {
            backend: "CUDA".into(),
            runtime: "13.0".into(),
            driver: Some("13.0".into()),
            devices: vec!["NVIDIA H100 80GB HBM3 (compute capability 9.0)".into()],
            layers_offloaded: 25,
            layers_total: 25,
        };
        let mut g = cpu_identity();
        g.device = Some(device.clone());
        let g = g.finish();
        assert_ne!(g.hash, cpu.hash);
        assert_eq!(
            g.reference().device.as_deref(),
            Some("CUDA 13.0, NVIDIA H100 80GB HBM3 (compute capability 9.0), 25/25 layers")
        );
        let mut newer_driver = g.clone();
        newer_driver.device.as_mut().unwrap().driver = Some("13.1".into());
        assert_eq!(newer_driver.finish().hash, g.hash);
        let mut fewer = g.clone();
        fewer.device.as_mut().unwrap().layers_offloaded = 10;
        assert_ne!(fewer.finish().hash, g.hash);
        // The CUDA binary without a device: on the CPU, and labelled so.
        let mut none = g.clone();
        let d = none.device.as_mut().unwrap();
        d.devices.clear();
        d.layers_offloaded = 0;
        assert_eq!(
            none.reference().device.as_deref(),
            Some("CUDA 13.0, no device: CPU")
        );
        assert_ne!(none.finish().hash, g.hash);
    }
}
