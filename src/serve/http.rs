//! The HTTP/1.1 layer of `hrl serve`: reading one request from a connection (request
//! line, headers, a `Content-Length` or chunked body, `Expect: 100-continue`), writing
//! a JSON response, and closing a connection gracefully.
//!
//! Every size that comes from the wire is bounded before it is used, with checked
//! arithmetic: request and header lines (16 KiB each), the number of headers and
//! trailers (100), `Content-Length` and every chunk size (digits only; a value that
//! does not fit, or a running total over the body limit, is a 413). A request with both
//! `Content-Length` and `Transfer-Encoding`, two different lengths, or a transfer coding
//! other than `chunked` is refused (400), so no two readers can disagree about where a
//! request ends.
//!
//! Graceful close ([`Linger`]): when the server closes a connection whose client may
//! still be sending (a 503 at the connection cap, a 400 or 413 before the body was
//! read), closing at once would make the kernel answer the unread bytes with a reset,
//! and many clients then lose the response (a broken pipe while sending the body, or a
//! reset before reading). Instead the server shuts down its write side (the client
//! sees the response and then the end of the stream) and hands the socket to one
//! reaper thread, which reads and discards what the client still sends for up to
//! `linger`, until the client closes. The reaper holds sockets, not threads or
//! connection slots; beyond `max_sockets` lingering sockets a socket is closed at once.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::executor::openai::schema;

/// Longest request or header line.
pub(crate) const MAX_HEAD_LINE: usize = 16 << 10;
/// Most headers (and, separately, most trailers) in one request.
pub(crate) const MAX_HEADERS: usize = 100;
/// Longest chunk-size field (hex digits; 16 hold any 64-bit size).
const MAX_CHUNK_DIGITS: usize = 16;

/// An HTTP error answer (OpenAI error shape).
#[derive(Debug)]
pub(crate) struct HttpError {
    pub status: u16,
    pub kind: &'static str,
    pub message: String,
}

impl HttpError {
    pub fn bad(message: impl Into<String>) -> HttpError {
        HttpError {
            status: 400,
            kind: "invalid_request_error",
            message: message.into(),
        }
    }
    pub fn server(status: u16, message: impl Into<String>) -> HttpError {
        HttpError {
            status,
            kind: "server_error",
            message: message.into(),
        }
    }
    pub fn body(&self) -> Value {
        schema::encode_error(&self.message, self.kind, self.status)
    }
}

/// One parsed HTTP/1.x request.
#[derive(Debug)]
pub(crate) struct HttpRequest {
    pub method: String,
    /// The target without its query string.
    pub path: String,
    pub body: Vec<u8>,
    pub keep_alive: bool,
}

/// Why no request was read.
#[derive(Debug)]
pub(crate) enum ReadError {
    /// The client closed the connection (or went idle) between requests.
    Closed,
    /// A malformed or oversized request: answer it and close.
    Bad(HttpError),
}

/// Read one line (without CRLF) of at most `MAX_HEAD_LINE` bytes. `Ok(None)` on EOF
/// before any byte.
fn read_line(r: &mut impl BufRead) -> std::io::Result<Option<String>> {
    let mut buf = Vec::new();
    let n = r
        .take(MAX_HEAD_LINE as u64 + 1)
        .read_until(b'\n', &mut buf)?;
    if n == 0 {
        return Ok(None);
    }
    if buf.len() > MAX_HEAD_LINE || buf.last() != Some(&b'\n') {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "line too long or truncated",
        ));
    }
    while matches!(buf.last(), Some(b'\n' | b'\r')) {
        buf.pop();
    }
    String::from_utf8(buf)
        .map(Some)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "line is not UTF-8"))
}

/// A failed read inside a request: 408 when the client went quiet for the idle
/// timeout (the read timed out), 400 otherwise.
fn read_failed(what: &str, e: &std::io::Error) -> ReadError {
    if matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    ) {
        ReadError::Bad(HttpError {
            status: 408,
            kind: "invalid_request_error",
            message: format!("the client sent nothing for the idle timeout while {what}"),
        })
    } else {
        ReadError::Bad(HttpError::bad(format!("{what}: {e}")))
    }
}

fn too_big(max_body: usize) -> ReadError {
    ReadError::Bad(HttpError {
        status: 413,
        kind: "invalid_request_error",
        message: format!("request body over {max_body} bytes"),
    })
}

/// A `Content-Length` value: decimal digits only.
fn parse_length(value: &str, max_body: usize) -> Result<usize, ReadError> {
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ReadError::Bad(HttpError::bad(format!(
            "bad Content-Length {value:?}"
        ))));
    }
    // All digits: the only failure left is a value that does not fit.
    value.parse::<usize>().map_err(|_| too_big(max_body))
}

/// A chunk-size field (before any `;` extension): hex digits only.
fn parse_chunk_size(line: &str, max_body: usize) -> Result<usize, ReadError> {
    let hex = line.split(';').next().unwrap_or("").trim();
    if hex.is_empty() || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(ReadError::Bad(HttpError::bad(format!(
            "bad chunk size {hex:?}"
        ))));
    }
    let digits = hex.trim_start_matches('0');
    if digits.len() > MAX_CHUNK_DIGITS {
        return Err(too_big(max_body));
    }
    usize::from_str_radix(hex, 16).map_err(|_| too_big(max_body))
}

/// Read one request. `w` receives the interim `100 Continue` when the client asks.
pub(crate) fn read_request(
    r: &mut BufReader<TcpStream>,
    w: &mut TcpStream,
    max_body: usize,
) -> Result<HttpRequest, ReadError> {
    let bad = |m: String| ReadError::Bad(HttpError::bad(m));
    let line = match read_line(r) {
        Ok(Some(l)) => l,
        Ok(None) | Err(_) => return Err(ReadError::Closed),
    };
    let mut parts = line.split(' ');
    let (method, target, version) = match (parts.next(), parts.next(), parts.next(), parts.next()) {
        (Some(m), Some(t), Some(v), None) if !m.is_empty() && t.starts_with('/') => (m, t, v),
        _ => return Err(bad(format!("malformed request line {line:?}"))),
    };
    let http10 = match version {
        "HTTP/1.1" => false,
        "HTTP/1.0" => true,
        v => return Err(bad(format!("unsupported protocol {v:?}"))),
    };
    let (mut length, mut chunked, mut expect_continue) = (None::<usize>, false, false);
    let mut keep_alive = !http10;
    let mut count = 0usize;
    loop {
        let h = match read_line(r) {
            Ok(Some(h)) => h,
            Ok(None) => return Err(ReadError::Closed),
            Err(e) => return Err(read_failed("reading headers", &e)),
        };
        if h.is_empty() {
            break;
        }
        count += 1;
        if count > MAX_HEADERS {
            return Err(bad(format!("more than {MAX_HEADERS} headers")));
        }
        let Some((name, value)) = h.split_once(':') else {
            return Err(bad(format!("malformed header {h:?}")));
        };
        let value = value.trim();
        match name.trim().to_ascii_lowercase().as_str() {
            "content-length" => {
                let n = parse_length(value, max_body)?;
                if length.is_some_and(|m| m != n) {
                    return Err(bad("two different Content-Length headers".into()));
                }
                length = Some(n);
            }
            "transfer-encoding" => {
                if !value.eq_ignore_ascii_case("chunked") {
                    return Err(bad(format!(
                        "Transfer-Encoding {value:?} is not supported (only chunked)"
                    )));
                }
                chunked = true;
            }
            "expect" => expect_continue = value.eq_ignore_ascii_case("100-continue"),
            // Fault injection for the tests of panic containment (not in release builds).
            #[cfg(test)]
            "x-test-panic" => panic!("injected panic while reading a request"),
            "connection" => {
                let v = value.to_ascii_lowercase();
                if v.contains("close") {
                    keep_alive = false;
                } else if v.contains("keep-alive") {
                    keep_alive = true;
                }
            }
            _ => {}
        }
    }
    if chunked && length.is_some() {
        return Err(bad(
            "both Content-Length and Transfer-Encoding: chunked; send one".into(),
        ));
    }
    if length.is_some_and(|n| n > max_body) {
        return Err(too_big(max_body));
    }
    if expect_continue && (chunked || length.is_some_and(|n| n > 0)) {
        let _ = w.write_all(b"HTTP/1.1 100 Continue\r\n\r\n");
    }
    let mut body = Vec::new();
    if chunked {
        loop {
            let size_line = read_line(r)
                .map_err(|e| read_failed("reading a chunk size", &e))?
                .ok_or_else(|| bad("body ended inside a chunk".into()))?;
            let size = parse_chunk_size(&size_line, max_body)?;
            if size == 0 {
                // Trailers, up to the blank line.
                let mut trailers = 0usize;
                loop {
                    match read_line(r) {
                        Ok(Some(t)) if t.is_empty() => break,
                        Ok(Some(_)) => {
                            trailers += 1;
                            if trailers > MAX_HEADERS {
                                return Err(bad(format!("more than {MAX_HEADERS} trailers")));
                            }
                        }
                        Ok(None) => break,
                        Err(e) => return Err(read_failed("reading trailers", &e)),
                    }
                }
                break;
            }
            let end = body
                .len()
                .checked_add(size)
                .filter(|&end| end <= max_body)
                .ok_or_else(|| too_big(max_body))?;
            let start = body.len();
            body.resize(end, 0);
            r.read_exact(&mut body[start..])
                .map_err(|e| read_failed("reading a chunk", &e))?;
            let mut crlf = [0u8; 2];
            r.read_exact(&mut crlf)
                .map_err(|e| read_failed("reading a chunk", &e))?;
            if &crlf != b"\r\n" {
                return Err(bad("a chunk is not followed by CRLF".into()));
            }
        }
    } else if let Some(n) = length {
        body.resize(n, 0);
        r.read_exact(&mut body).map_err(|e| {
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                bad(format!("body shorter than Content-Length {n}"))
            } else {
                read_failed("reading the body", &e)
            }
        })?;
    }
    Ok(HttpRequest {
        method: method.to_string(),
        path: target.split('?').next().unwrap_or("").to_string(),
        body,
        keep_alive,
    })
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        413 => "Payload Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Unknown",
    }
}

/// The bytes of a complete response.
pub(crate) fn response_bytes(status: u16, body: &Value, keep_alive: bool) -> Vec<u8> {
    let body = body.to_string();
    let head = format!(
        "HTTP/1.1 {status} {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: {}\r\n\r\n",
        reason(status),
        body.len(),
        if keep_alive { "keep-alive" } else { "close" }
    );
    let mut out = head.into_bytes();
    out.extend_from_slice(body.as_bytes());
    out
}

pub(crate) fn write_response(
    w: &mut TcpStream,
    status: u16,
    body: &Value,
    keep_alive: bool,
) -> std::io::Result<()> {
    w.write_all(&response_bytes(status, body, keep_alive))?;
    w.flush()
}

/// The reaper of gracefully closed sockets (see the module doc).
pub(crate) struct Linger {
    tx: Mutex<Option<mpsc::Sender<TcpStream>>>,
    lingering: Arc<AtomicUsize>,
    max_sockets: usize,
    reaper: Mutex<Option<JoinHandle<()>>>,
}

impl Linger {
    /// Start the reaper thread: each socket is drained for at most `linger`.
    pub fn start(linger: Duration, max_sockets: usize) -> std::io::Result<Linger> {
        let (tx, rx) = mpsc::channel();
        let lingering = Arc::new(AtomicUsize::new(0));
        let count = Arc::clone(&lingering);
        let reaper = std::thread::Builder::new()
            .name("hrl-serve-linger".into())
            .spawn(move || reap(&rx, linger, &count))?;
        Ok(Linger {
            tx: Mutex::new(Some(tx)),
            lingering,
            max_sockets,
            reaper: Mutex::new(Some(reaper)),
        })
    }

    /// Close `stream` gracefully: end our side of the stream now, let the client
    /// finish sending, then close. Never blocks.
    pub fn close(&self, stream: TcpStream) {
        let _ = stream.shutdown(Shutdown::Write);
        if self.lingering.fetch_add(1, Ordering::SeqCst) >= self.max_sockets {
            // Too many at once: close now (the old, abrupt behaviour) rather than grow.
            self.lingering.fetch_sub(1, Ordering::SeqCst);
            return;
        }
        let tx = self.tx.lock().unwrap_or_else(|p| p.into_inner());
        match tx.as_ref() {
            Some(tx) if tx.send(stream).is_ok() => {}
            _ => {
                self.lingering.fetch_sub(1, Ordering::SeqCst);
            }
        }
    }

    /// Sockets currently lingering.
    pub fn lingering(&self) -> usize {
        self.lingering.load(Ordering::SeqCst)
    }

    /// Close every lingering socket and join the reaper.
    pub fn stop(&self) {
        self.tx.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(h) = self.reaper.lock().unwrap_or_else(|p| p.into_inner()).take() {
            let _ = h.join();
        }
    }
}

/// How often lingering sockets are polled.
const LINGER_POLL: Duration = Duration::from_millis(5);

fn reap(rx: &mpsc::Receiver<TcpStream>, linger: Duration, count: &AtomicUsize) {
    let mut socks: Vec<(TcpStream, Instant)> = Vec::new();
    let mut buf = vec![0u8; 16 << 10];
    let admit = |s: TcpStream, socks: &mut Vec<(TcpStream, Instant)>| {
        if s.set_nonblocking(true).is_ok() {
            socks.push((s, Instant::now() + linger));
        } else {
            count.fetch_sub(1, Ordering::SeqCst);
        }
    };
    loop {
        let next = if socks.is_empty() {
            rx.recv().map_err(|_| mpsc::RecvTimeoutError::Disconnected)
        } else {
            rx.recv_timeout(LINGER_POLL)
        };
        match next {
            Ok(s) => {
                admit(s, &mut socks);
                while let Ok(s) = rx.try_recv() {
                    admit(s, &mut socks);
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                // The server stopped: close what is left.
                count.fetch_sub(socks.len(), Ordering::SeqCst);
                return;
            }
        }
        let now = Instant::now();
        socks.retain_mut(|(s, deadline)| {
            let keep = drain_some(s, &mut buf) && now < *deadline;
            if !keep {
                count.fetch_sub(1, Ordering::SeqCst);
            }
            keep
        });
    }
}

/// Read and discard what a lingering socket has; true while the client may still send
/// (nothing more to read now), false once it has closed or failed. A bounded number of
/// reads per pass keeps one fast sender from starving the others.
fn drain_some(s: &mut TcpStream, buf: &mut [u8]) -> bool {
    for _ in 0..64 {
        match s.read(buf) {
            Ok(0) => return false,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return true,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_from_the_wire_are_checked() {
        assert_eq!(parse_length("0", 10).unwrap(), 0);
        assert_eq!(parse_length("123", 10).unwrap(), 123);
        for bad in ["", "+5", "-1", "1 2", "0x10", "½"] {
            assert!(
                matches!(
                    parse_length(bad, 10),
                    Err(ReadError::Bad(HttpError { status: 400, .. }))
                ),
                "{bad:?}"
            );
        }
        assert!(matches!(
            parse_length("99999999999999999999999999", 10),
            Err(ReadError::Bad(HttpError { status: 413, .. }))
        ));
        assert_eq!(parse_chunk_size("ff", 10).unwrap(), 255);
        assert_eq!(parse_chunk_size("1a;ext=1", 10).unwrap(), 26);
        assert_eq!(parse_chunk_size("00000000000000000000010", 10).unwrap(), 16);
        assert_eq!(
            parse_chunk_size("ffffffffffffffff", 10).unwrap(),
            usize::MAX,
            "fits; the running total is checked by the caller"
        );
        for bad in ["", "+f", "-1", "g", "0x1"] {
            assert!(
                matches!(
                    parse_chunk_size(bad, 10),
                    Err(ReadError::Bad(HttpError { status: 400, .. }))
                ),
                "{bad:?}"
            );
        }
        assert!(matches!(
            parse_chunk_size("10000000000000000", 10),
            Err(ReadError::Bad(HttpError { status: 413, .. }))
        ));
    }
}
