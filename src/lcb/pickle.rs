//! A deliberately tiny pickle reader: it accepts exactly the pickles Python writes for
//! a plain `str` (protocols 0 to 5) and refuses every other opcode — globals, reduce,
//! build, object construction, containers — with an error naming the opcode and its
//! byte offset. Nothing from the data is ever executed or looked up.
//!
//! Accepted opcodes: PROTO, FRAME, SHORT_BINUNICODE, BINUNICODE, BINUNICODE8,
//! UNICODE (protocol 0, raw-unicode-escape), MEMOIZE, PUT, BINPUT, LONG_BINPUT, STOP.
//! The pickle must end with STOP holding exactly one string, with no trailing bytes.

/// Why a pickle was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PickleError {
    #[error(
        "pickle opcode {name} (0x{byte:02x}) at offset {offset} is not allowed: only a plain string is accepted"
    )]
    Forbidden {
        name: &'static str,
        byte: u8,
        offset: usize,
    },
    #[error("unknown pickle opcode 0x{byte:02x} at offset {offset}")]
    Unknown { byte: u8, offset: usize },
    #[error("pickle truncated at offset {0}")]
    Truncated(usize),
    #[error("unsupported pickle protocol {protocol} at offset {offset}")]
    Protocol { protocol: u8, offset: usize },
    #[error("invalid UTF-8 in pickle string at offset {0}")]
    Utf8(usize),
    #[error("invalid raw-unicode-escape in pickle string at offset {0}")]
    Escape(usize),
    #[error("invalid {what} argument at offset {offset}")]
    BadArgument { what: &'static str, offset: usize },
    #[error("pickle stack holds {0} values at STOP (expected one string)")]
    Stack(usize),
    #[error("pickle has no STOP opcode")]
    NoStop,
    #[error("{0} bytes after STOP")]
    Trailing(usize),
}

impl crate::error::Classify for PickleError {
    /// A refused pickle is a bad input row.
    fn kind(&self) -> crate::error::ErrorKind {
        match self {
            PickleError::Forbidden { .. }
            | PickleError::Unknown { .. }
            | PickleError::Truncated(_)
            | PickleError::Protocol { .. }
            | PickleError::Utf8(_)
            | PickleError::Escape(_)
            | PickleError::BadArgument { .. }
            | PickleError::Stack(_)
            | PickleError::NoStop
            | PickleError::Trailing(_) => crate::error::ErrorKind::Usage,
        }
    }
}

/// The name of every pickle opcode, for error messages.
pub fn opcode_name(b: u8) -> Option<&'static str> {
    Some(match b {
        b'(' => "MARK",
        b'.' => "STOP",
        b'0' => "POP",
        b'1' => "POP_MARK",
        b'2' => "DUP",
        b'F' => "FLOAT",
        b'I' => "INT",
        b'J' => "BININT",
        b'K' => "BININT1",
        b'L' => "LONG",
        b'M' => "BININT2",
        b'N' => "NONE",
        b'P' => "PERSID",
        b'Q' => "BINPERSID",
        b'R' => "REDUCE",
        b'S' => "STRING",
        b'T' => "BINSTRING",
        b'U' => "SHORT_BINSTRING",
        b'V' => "UNICODE",
        b'X' => "BINUNICODE",
        b'a' => "APPEND",
        b'b' => "BUILD",
        b'c' => "GLOBAL",
        b'd' => "DICT",
        b'}' => "EMPTY_DICT",
        b'e' => "APPENDS",
        b'g' => "GET",
        b'h' => "BINGET",
        b'i' => "INST",
        b'j' => "LONG_BINGET",
        b'l' => "LIST",
        b']' => "EMPTY_LIST",
        b'o' => "OBJ",
        b'p' => "PUT",
        b'q' => "BINPUT",
        b'r' => "LONG_BINPUT",
        b's' => "SETITEM",
        b't' => "TUPLE",
        b')' => "EMPTY_TUPLE",
        b'u' => "SETITEMS",
        b'G' => "BINFLOAT",
        0x80 => "PROTO",
        0x81 => "NEWOBJ",
        0x82 => "EXT1",
        0x83 => "EXT2",
        0x84 => "EXT4",
        0x85 => "TUPLE1",
        0x86 => "TUPLE2",
        0x87 => "TUPLE3",
        0x88 => "NEWTRUE",
        0x89 => "NEWFALSE",
        0x8a => "LONG1",
        0x8b => "LONG4",
        b'B' => "BINBYTES",
        b'C' => "SHORT_BINBYTES",
        0x8c => "SHORT_BINUNICODE",
        0x8d => "BINUNICODE8",
        0x8e => "BINBYTES8",
        0x8f => "EMPTY_SET",
        0x90 => "ADDITEMS",
        0x91 => "FROZENSET",
        0x92 => "NEWOBJ_EX",
        0x93 => "STACK_GLOBAL",
        0x94 => "MEMOIZE",
        0x95 => "FRAME",
        0x96 => "BYTEARRAY8",
        0x97 => "NEXT_BUFFER",
        0x98 => "READONLY_BUFFER",
        _ => return None,
    })
}

struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], PickleError> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.data.len());
        let end = end.ok_or(PickleError::Truncated(self.data.len()))?;
        let s = &self.data[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8, PickleError> {
        Ok(self.take(1)?[0])
    }
    fn u32(&mut self) -> Result<u32, PickleError> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }
    fn u64(&mut self) -> Result<u64, PickleError> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }
    fn line(&mut self) -> Result<&'a [u8], PickleError> {
        let rest = &self.data[self.pos..];
        let n = rest
            .iter()
            .position(|&b| b == b'\n')
            .ok_or(PickleError::Truncated(self.data.len()))?;
        self.pos += n + 1;
        Ok(&rest[..n])
    }
}

fn utf8(bytes: &[u8], offset: usize) -> Result<String, PickleError> {
    String::from_utf8(bytes.to_vec()).map_err(|_| PickleError::Utf8(offset))
}

/// Decode Python's `raw-unicode-escape`: bytes are Latin-1 code points, except
/// `\u` + 4 hex digits and `\U` + 8 hex digits (an escape backslash is preceded by an even
/// number of backslashes).
fn raw_unicode_escape(bytes: &[u8], offset: usize) -> Result<String, PickleError> {
    let mut out = String::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'\\' {
            // Count the run of backslashes; only an odd one before u/U starts an escape.
            let run = bytes[i..].iter().take_while(|&&c| c == b'\\').count();
            let next = bytes.get(i + run).copied();
            if run % 2 == 1 && matches!(next, Some(b'u') | Some(b'U')) {
                out.extend(std::iter::repeat_n('\\', run - 1));
                let width = if next == Some(b'u') { 4 } else { 8 };
                let start = i + run + 1;
                let hex = bytes
                    .get(start..start + width)
                    .ok_or(PickleError::Escape(offset))?;
                let hex = std::str::from_utf8(hex).map_err(|_| PickleError::Escape(offset))?;
                let cp = u32::from_str_radix(hex, 16).map_err(|_| PickleError::Escape(offset))?;
                out.push(char::from_u32(cp).ok_or(PickleError::Escape(offset))?);
                i = start + width;
            } else {
                out.extend(std::iter::repeat_n('\\', run));
                i += run;
            }
        } else {
            out.push(char::from(b));
            i += 1;
        }
    }
    Ok(out)
}

/// Read a pickle that must hold exactly one `str`; return that string.
pub fn unpickle_string(data: &[u8]) -> Result<String, PickleError> {
    let mut r = Reader { data, pos: 0 };
    let mut stack: Vec<String> = Vec::new();
    while r.pos < data.len() {
        let offset = r.pos;
        let op = r.u8()?;
        match op {
            0x80 => {
                let protocol = r.u8()?;
                if protocol > 5 {
                    return Err(PickleError::Protocol { protocol, offset });
                }
            }
            0x95 => {
                let len = r.u64()?;
                if len > (data.len() - r.pos) as u64 {
                    return Err(PickleError::BadArgument {
                        what: "FRAME length",
                        offset,
                    });
                }
            }
            0x8c => {
                let n = r.u8()? as usize;
                stack.push(utf8(r.take(n)?, offset)?);
            }
            b'X' => {
                let n = r.u32()? as usize;
                stack.push(utf8(r.take(n)?, offset)?);
            }
            0x8d => {
                let n =
                    usize::try_from(r.u64()?).map_err(|_| PickleError::Truncated(data.len()))?;
                stack.push(utf8(r.take(n)?, offset)?);
            }
            b'V' => {
                let line = r.line()?;
                stack.push(raw_unicode_escape(line, offset)?);
            }
            0x94 => {
                if stack.is_empty() {
                    return Err(PickleError::BadArgument {
                        what: "MEMOIZE on an empty stack",
                        offset,
                    });
                }
            }
            b'q' => {
                r.u8()?;
            }
            b'r' => {
                r.u32()?;
            }
            b'p' => {
                let line = r.line()?;
                if std::str::from_utf8(line)
                    .ok()
                    .and_then(|s| s.parse::<u64>().ok())
                    .is_none()
                {
                    return Err(PickleError::BadArgument {
                        what: "PUT index",
                        offset,
                    });
                }
            }
            b'.' => {
                if stack.len() != 1 {
                    return Err(PickleError::Stack(stack.len()));
                }
                if r.pos != data.len() {
                    return Err(PickleError::Trailing(data.len() - r.pos));
                }
                return Ok(stack.pop().expect("one value"));
            }
            other => {
                return Err(match opcode_name(other) {
                    Some(name) => PickleError::Forbidden {
                        name,
                        byte: other,
                        offset,
                    },
                    None => PickleError::Unknown {
                        byte: other,
                        offset,
                    },
                });
            }
        }
    }
    Err(PickleError::NoStop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protocol_zero_escapes() {
        // pickle.dumps("a\\u00e9\u20ac\n", protocol=0) writes: V + raw-unicode-escape + \n p0 \n .
        let data = b"Va\\u005cu00e9\xe9\\u20ac\\u000a\np0\n.";
        assert_eq!(unpickle_string(data).unwrap(), "a\\u00e9\u{e9}\u{20ac}\n");
    }

    #[test]
    fn binunicode8_and_trailing() {
        let mut d = vec![0x80, 4, 0x8d];
        d.extend_from_slice(&3u64.to_le_bytes());
        d.extend_from_slice(b"abc");
        d.push(0x94);
        d.push(b'.');
        assert_eq!(unpickle_string(&d).unwrap(), "abc");
        d.push(b'.');
        assert_eq!(unpickle_string(&d), Err(PickleError::Trailing(1)));
    }

    #[test]
    fn refuses_with_name_and_offset() {
        let d = b"\x80\x02cposix\nsystem\nq\x00.";
        assert_eq!(
            unpickle_string(d),
            Err(PickleError::Forbidden {
                name: "GLOBAL",
                byte: b'c',
                offset: 2
            })
        );
    }
}
