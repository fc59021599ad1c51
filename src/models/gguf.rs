//! Structural validation of GGUF files before they reach llama.cpp (which may abort the
//! process on some malformed inputs): magic, version, every metadata key/value, every
//! tensor descriptor, and that every tensor's data lies inside the file.

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::{Path, PathBuf};

/// Why a file is not a usable GGUF.
#[derive(Debug, thiserror::Error)]
pub enum GgufError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{path}: not a GGUF file (the first bytes are {magic:?}, expected \"GGUF\")")]
    NotGguf { path: PathBuf, magic: String },
    #[error("{path}: unsupported GGUF version {version} (supported: 2, 3)")]
    Version { path: PathBuf, version: u32 },
    #[error("{path}: corrupt GGUF at byte {offset}: {detail}")]
    Corrupt {
        path: PathBuf,
        offset: u64,
        detail: String,
    },
}

impl crate::error::Classify for GgufError {
    /// A file that is not a usable GGUF is the caller's input.
    fn kind(&self) -> crate::error::ErrorKind {
        match self {
            GgufError::Io { source, .. } => {
                if source.kind() == io::ErrorKind::NotFound {
                    crate::error::ErrorKind::Usage
                } else {
                    crate::error::ErrorKind::Runtime
                }
            }
            GgufError::NotGguf { .. } | GgufError::Version { .. } | GgufError::Corrupt { .. } => {
                crate::error::ErrorKind::Usage
            }
        }
    }
}

/// What the header says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GgufInfo {
    pub version: u32,
    pub n_tensors: u64,
    pub n_kv: u64,
    pub architecture: Option<String>,
    pub name: Option<String>,
    pub has_chat_template: bool,
    pub alignment: u64,
    /// Byte offset where tensor data starts.
    pub data_offset: u64,
    /// Bytes the tensors need past `data_offset` (a lower bound when a tensor type is
    /// unknown to this checker).
    pub data_bytes: u64,
    pub file_size: u64,
}

/// (block size in elements, bytes per block) of the ggml tensor types this checker
/// knows; `None` for others (their extent is then not checked).
fn type_block(t: u32) -> Option<(u64, u64)> {
    Some(match t {
        0 => (1, 4),     // F32
        1 => (1, 2),     // F16
        2 => (32, 18),   // Q4_0
        3 => (32, 20),   // Q4_1
        6 => (32, 22),   // Q5_0
        7 => (32, 24),   // Q5_1
        8 => (32, 34),   // Q8_0
        9 => (32, 36),   // Q8_1
        10 => (256, 84), // Q2_K
        11 => (256, 110),
        12 => (256, 144),
        13 => (256, 176),
        14 => (256, 210),
        15 => (256, 292),
        24 => (1, 1), // I8
        25 => (1, 2), // I16
        26 => (1, 4), // I32
        27 => (1, 8), // I64
        28 => (1, 8), // F64
        30 => (1, 2), // BF16
        _ => return None,
    })
}

struct Reader<R> {
    inner: R,
    pos: u64,
    path: PathBuf,
    limit: u64,
}

impl<R: Read> Reader<R> {
    fn corrupt(&self, detail: impl Into<String>) -> GgufError {
        GgufError::Corrupt {
            path: self.path.clone(),
            offset: self.pos,
            detail: detail.into(),
        }
    }
    fn bytes(&mut self, n: u64) -> Result<Vec<u8>, GgufError> {
        if self.pos + n > self.limit {
            return Err(self.corrupt(format!("needs {n} more bytes; the file ends first")));
        }
        let mut v = vec![0u8; n as usize];
        self.inner
            .read_exact(&mut v)
            .map_err(|source| GgufError::Io {
                path: self.path.clone(),
                source,
            })?;
        self.pos += n;
        Ok(v)
    }
    fn skip(&mut self, n: u64) -> Result<(), GgufError> {
        if self.pos + n > self.limit {
            return Err(self.corrupt(format!("needs {n} more bytes; the file ends first")));
        }
        let copied =
            io::copy(&mut (&mut self.inner).take(n), &mut io::sink()).map_err(|source| {
                GgufError::Io {
                    path: self.path.clone(),
                    source,
                }
            })?;
        self.pos += copied;
        Ok(())
    }
    fn u32(&mut self) -> Result<u32, GgufError> {
        let b = self.bytes(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn u64(&mut self) -> Result<u64, GgufError> {
        let b = self.bytes(8)?;
        Ok(u64::from_le_bytes(b.try_into().expect("8 bytes")))
    }
    fn string(&mut self) -> Result<String, GgufError> {
        let len = self.u64()?;
        let b = self.bytes(len)?;
        String::from_utf8(b).map_err(|_| self.corrupt("string is not UTF-8"))
    }
    /// Skip a value of type `t`; returns it when it is a string or an integer.
    fn value(&mut self, t: u32, depth: u32) -> Result<Value, GgufError> {
        let fixed = match t {
            0 | 1 | 7 => 1,
            2 | 3 => 2,
            4..=6 => 4,
            10..=12 => 8,
            _ => 0,
        };
        if fixed > 0 {
            let b = self.bytes(fixed)?;
            let mut full = [0u8; 8];
            full[..b.len()].copy_from_slice(&b);
            return Ok(Value::Int(u64::from_le_bytes(full)));
        }
        match t {
            8 => Ok(Value::Str(self.string()?)),
            9 => {
                if depth > 2 {
                    return Err(self.corrupt("arrays nested too deeply"));
                }
                let item = self.u32()?;
                let n = self.u64()?;
                if n > self.limit {
                    return Err(self.corrupt(format!("array of {n} items is larger than the file")));
                }
                let item_size = match item {
                    0 | 1 | 7 => 1,
                    2 | 3 => 2,
                    4..=6 => 4,
                    10..=12 => 8,
                    _ => 0,
                };
                if item_size > 0 {
                    self.skip(n * item_size)?;
                } else {
                    for _ in 0..n {
                        self.value(item, depth + 1)?;
                    }
                }
                Ok(Value::Other)
            }
            other => Err(self.corrupt(format!("unknown metadata value type {other}"))),
        }
    }
}

enum Value {
    Int(u64),
    Str(String),
    Other,
}

/// Validate `path` as a GGUF file and return its header summary.
pub fn check(path: &Path) -> Result<GgufInfo, GgufError> {
    let io_err = |source| GgufError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = File::open(path).map_err(io_err)?;
    let file_size = file.metadata().map_err(io_err)?.len();
    let mut r = Reader {
        inner: BufReader::with_capacity(1 << 16, file),
        pos: 0,
        path: path.to_path_buf(),
        limit: file_size,
    };
    if file_size < 4 {
        return Err(GgufError::NotGguf {
            path: path.to_path_buf(),
            magic: format!("{} bytes in all", file_size),
        });
    }
    let magic = r.bytes(4)?;
    if magic != b"GGUF" {
        return Err(GgufError::NotGguf {
            path: path.to_path_buf(),
            magic: String::from_utf8_lossy(&magic).into_owned(),
        });
    }
    let version = r.u32()?;
    if !(2..=3).contains(&version) {
        return Err(GgufError::Version {
            path: path.to_path_buf(),
            version,
        });
    }
    let n_tensors = r.u64()?;
    let n_kv = r.u64()?;
    if n_tensors > file_size || n_kv > file_size {
        return Err(r.corrupt(format!(
            "header claims {n_tensors} tensors and {n_kv} metadata keys, more than the file can hold"
        )));
    }
    let mut info = GgufInfo {
        version,
        n_tensors,
        n_kv,
        architecture: None,
        name: None,
        has_chat_template: false,
        alignment: 32,
        data_offset: 0,
        data_bytes: 0,
        file_size,
    };
    for _ in 0..n_kv {
        let key = r.string()?;
        let t = r.u32()?;
        let v = r.value(t, 0)?;
        match (key.as_str(), v) {
            ("general.architecture", Value::Str(s)) => info.architecture = Some(s),
            ("general.name", Value::Str(s)) => info.name = Some(s),
            ("general.alignment", Value::Int(a)) => {
                if a == 0 || !a.is_power_of_two() {
                    return Err(r.corrupt(format!("general.alignment {a} is not a power of two")));
                }
                info.alignment = a;
            }
            ("tokenizer.chat_template", Value::Str(_)) => info.has_chat_template = true,
            _ => {}
        }
    }
    let mut extents = Vec::with_capacity(n_tensors as usize);
    for _ in 0..n_tensors {
        let name = r.string()?;
        let n_dims = r.u32()?;
        if n_dims == 0 || n_dims > 8 {
            return Err(r.corrupt(format!("tensor {name:?} has {n_dims} dimensions")));
        }
        let mut elements: u64 = 1;
        for _ in 0..n_dims {
            let d = r.u64()?;
            elements = elements
                .checked_mul(d)
                .ok_or_else(|| r.corrupt(format!("tensor {name:?} dimensions overflow")))?;
        }
        let ty = r.u32()?;
        let offset = r.u64()?;
        if offset % info.alignment != 0 {
            return Err(r.corrupt(format!(
                "tensor {name:?} offset {offset} is not aligned to {}",
                info.alignment
            )));
        }
        let bytes = type_block(ty).map_or(0, |(block, size)| elements.div_ceil(block) * size);
        extents.push((name, offset, bytes));
    }
    info.data_offset = r.pos.div_ceil(info.alignment) * info.alignment;
    for (name, offset, bytes) in extents {
        let end = info
            .data_offset
            .saturating_add(offset)
            .saturating_add(bytes);
        if end > file_size || info.data_offset + offset > file_size {
            return Err(GgufError::Corrupt {
                path: path.to_path_buf(),
                offset: info.data_offset + offset,
                detail: format!(
                    "tensor {name:?} needs bytes up to {end} but the file has {file_size} (truncated?)"
                ),
            });
        }
        info.data_bytes = info.data_bytes.max(offset + bytes);
    }
    Ok(info)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(out: &mut Vec<u8>, v: &str) {
        out.extend_from_slice(&(v.len() as u64).to_le_bytes());
        out.extend_from_slice(v.as_bytes());
    }

    /// A minimal GGUF v3: three metadata keys (one an array of strings) and two F32
    /// tensors of 4 and 6 elements, data aligned to 32 bytes.
    fn tiny() -> Vec<u8> {
        let mut b = b"GGUF".to_vec();
        b.extend_from_slice(&3u32.to_le_bytes());
        b.extend_from_slice(&2u64.to_le_bytes()); // tensors
        b.extend_from_slice(&3u64.to_le_bytes()); // kv
        s(&mut b, "general.architecture");
        b.extend_from_slice(&8u32.to_le_bytes());
        s(&mut b, "llama");
        s(&mut b, "tokenizer.ggml.tokens");
        b.extend_from_slice(&9u32.to_le_bytes());
        b.extend_from_slice(&8u32.to_le_bytes());
        b.extend_from_slice(&2u64.to_le_bytes());
        s(&mut b, "a");
        s(&mut b, "b");
        s(&mut b, "general.alignment");
        b.extend_from_slice(&4u32.to_le_bytes());
        b.extend_from_slice(&32u32.to_le_bytes());
        for (name, n, off) in [("t0", 4u64, 0u64), ("t1", 6, 32)] {
            s(&mut b, name);
            b.extend_from_slice(&1u32.to_le_bytes());
            b.extend_from_slice(&n.to_le_bytes());
            b.extend_from_slice(&0u32.to_le_bytes()); // F32
            b.extend_from_slice(&off.to_le_bytes());
        }
        while b.len() % 32 != 0 {
            b.push(0);
        }
        b.extend_from_slice(&[0u8; 32 + 24]);
        b
    }

    fn check_bytes(bytes: &[u8]) -> Result<GgufInfo, GgufError> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.gguf");
        std::fs::write(&p, bytes).unwrap();
        check(&p)
    }

    #[test]
    fn accepts_a_well_formed_file() {
        let b = tiny();
        let info = check_bytes(&b).unwrap();
        assert_eq!(info.version, 3);
        assert_eq!(info.n_tensors, 2);
        assert_eq!(info.architecture.as_deref(), Some("llama"));
        assert_eq!(info.alignment, 32);
        assert_eq!(info.data_offset % 32, 0);
        assert_eq!(info.data_bytes, 32 + 24);
        assert_eq!(info.data_offset + info.data_bytes, b.len() as u64);
    }

    #[test]
    fn rejects_truncation_garbage_and_bad_headers() {
        let b = tiny();
        // One byte short of the last tensor.
        let e = check_bytes(&b[..b.len() - 1]).unwrap_err();
        assert!(e.to_string().contains("tensor \"t1\""), "{e}");
        // Cut inside the metadata.
        let e = check_bytes(&b[..40]).unwrap_err();
        assert!(matches!(e, GgufError::Corrupt { .. }), "{e}");
        let e = check_bytes(b"GGML0000").unwrap_err();
        assert!(matches!(e, GgufError::NotGguf { .. }), "{e}");
        let e = check_bytes(b"GG").unwrap_err();
        assert!(matches!(e, GgufError::NotGguf { .. }), "{e}");
        let mut v = b.clone();
        v[4] = 9;
        assert!(matches!(
            check_bytes(&v).unwrap_err(),
            GgufError::Version { version: 9, .. }
        ));
        // An absurd tensor count is refused before anything is allocated.
        let mut v = b.clone();
        v[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(matches!(
            check_bytes(&v).unwrap_err(),
            GgufError::Corrupt { .. }
        ));
        // An unknown metadata value type.
        let mut v = b.clone();
        let at = 24 + 8 + "general.architecture".len();
        v[at..at + 4].copy_from_slice(&77u32.to_le_bytes());
        let e = check_bytes(&v).unwrap_err();
        assert!(
            e.to_string().contains("unknown metadata value type 77"),
            "{e}"
        );
    }
}
