//! Reading JSON Lines input one line at a time, so that one bad line never hides the
//! others: the JSONL readers of the crate (`hrl tasks score`, prompt files for
//! `hrl generate --prompts`, solutions for `hrl lcb grade` and `hrl humaneval`) go
//! through [`lines`]; the LiveCodeBench and HumanEval dataset loaders decode their rows
//! per line the same way.
//!
//! A line is read as bytes up to `\n` (a final `\r` is dropped, as `BufRead::lines`
//! does) and then decoded: a line that is not valid UTF-8 is reported as
//! [`LineText::InvalidUtf8`] with its 1-based number and the offset of the first bad
//! byte, and reading goes on with the next line. Only a failure of the underlying
//! reader itself (an I/O error) ends the iteration. What a caller does with a bad
//! line — skip it with a warning, or refuse the file naming `file:line` — is the
//! caller's policy; this module only guarantees that the line number is known.

use std::io::{self, BufRead};

/// The text of one line, or why it has none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineText {
    /// The line without its line terminator.
    Text(String),
    /// The line is not valid UTF-8; `byte` is the offset of the first invalid byte
    /// within the line.
    InvalidUtf8 { byte: usize },
}

impl LineText {
    /// The text, or a message naming the first invalid byte.
    pub fn into_result(self) -> Result<String, String> {
        match self {
            LineText::Text(t) => Ok(t),
            LineText::InvalidUtf8 { byte } => Err(format!("invalid UTF-8 at byte {byte}")),
        }
    }
}

/// One line of input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// 1-based line number.
    pub number: usize,
    pub text: LineText,
}

impl Line {
    /// Whether the line is empty or holds only ASCII whitespace (such lines are
    /// skipped by every reader). An invalid line is never blank.
    pub fn is_blank(&self) -> bool {
        matches!(&self.text, LineText::Text(t) if t.trim().is_empty())
    }
}

/// Iterator over the lines of a reader (see the module docs). A read error is
/// returned once, its message prefixed with the number of the line being read, and
/// ends the iteration.
pub struct Lines<R> {
    reader: R,
    number: usize,
    buf: Vec<u8>,
    failed: bool,
}

/// Read `reader` line by line.
pub fn lines<R: BufRead>(reader: R) -> Lines<R> {
    Lines {
        reader,
        number: 0,
        buf: Vec::new(),
        failed: false,
    }
}

impl<R: BufRead> Iterator for Lines<R> {
    type Item = io::Result<Line>;

    fn next(&mut self) -> Option<io::Result<Line>> {
        if self.failed {
            return None;
        }
        self.buf.clear();
        match self.reader.read_until(b'\n', &mut self.buf) {
            Ok(0) => return None,
            Ok(_) => {}
            Err(e) => {
                self.failed = true;
                let at = self.number + 1;
                return Some(Err(io::Error::new(e.kind(), format!("line {at}: {e}"))));
            }
        }
        self.number += 1;
        if self.buf.last() == Some(&b'\n') {
            self.buf.pop();
            if self.buf.last() == Some(&b'\r') {
                self.buf.pop();
            }
        }
        let text = match std::str::from_utf8(&self.buf) {
            Ok(t) => LineText::Text(t.to_string()),
            Err(e) => LineText::InvalidUtf8 {
                byte: e.valid_up_to(),
            },
        };
        Some(Ok(Line {
            number: self.number,
            text,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(bytes: &[u8]) -> Vec<Line> {
        lines(bytes).map(|l| l.unwrap()).collect()
    }

    #[test]
    fn a_bad_line_is_reported_and_the_next_one_is_read() {
        let got = all(b"{\"a\":1}\n\xff\n{\"b\":2}\r\nok\xc3\xa9 \xc3\n\nlast");
        let want = vec![
            Line {
                number: 1,
                text: LineText::Text("{\"a\":1}".into()),
            },
            Line {
                number: 2,
                text: LineText::InvalidUtf8 { byte: 0 },
            },
            Line {
                number: 3,
                text: LineText::Text("{\"b\":2}".into()),
            },
            Line {
                number: 4,
                text: LineText::InvalidUtf8 { byte: 5 },
            },
            Line {
                number: 5,
                text: LineText::Text(String::new()),
            },
            Line {
                number: 6,
                text: LineText::Text("last".into()),
            },
        ];
        assert_eq!(got, want);
        assert!(got[4].is_blank() && !got[1].is_blank() && !got[0].is_blank());
        assert_eq!(
            got[3].text.clone().into_result(),
            Err("invalid UTF-8 at byte 5".to_string())
        );
        assert!(all(b"").is_empty());
        assert_eq!(all(b"\n").len(), 1);
    }

    #[test]
    fn read_errors_end_the_iteration_with_an_error() {
        struct Failing;
        impl io::Read for Failing {
            fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
                Err(io::Error::other("disk on fire"))
            }
        }
        let mut it = lines(io::BufReader::new(Failing));
        let e = it.next().unwrap().unwrap_err();
        assert_eq!(e.to_string(), "line 1: disk on fire");
        assert!(it.next().is_none());
    }
}
