//! The connection-cap fault test shared by `hrl serve` (tests/executor_http.rs) and
//! `hrl reward-server` (tests/reward/): both speak through `serve::http` and count
//! their connections with the same registry, so they must pass the same steps.
//!
//! One cycle, on a server started with `--max-connections CAP`:
//! 1. with nothing held open, `GET /health` (on a connection of its own, which it
//!    counts) reports `connections_open` 1;
//! 2. CAP − 1 silent connections are opened, then a keep-alive `GET /health` on one
//!    more connection reports exactly CAP (the server has accepted every one of them,
//!    none was turned away) and that connection stays open, silent, too;
//! 3. requests on new connections, one after another, are each answered 503;
//! 4. the CAP connections are closed and a request on a new connection is served (200)
//!    at once: no slot outlives its connection. Odd cycles send that request with
//!    `Connection: close` (the server ends the connection), even ones keep it alive
//!    and close it from this side after the answer.
//!
//! Run back to back, cycle c + 1's steps 1 and 2 are the step 4 (new silent
//! connections right after old ones closed). The steps wait on nothing but the
//! server's answers (no sleeps), so a count that lags the real set of connections by
//! a moment fails them, on a quiet machine or a loaded one. The one thing waited for
//! is the server's kernel: a connection this side closes is counted as closed once
//! the server's TCP stack has acknowledged the end of stream (`close_confirmed`);
//! before that no server can know of it (on a loaded machine the packet can sit in a
//! kernel queue while this thread, on the other core, already opens the next
//! connection). Whether the server's threads have run by then is what is tested.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use serde_json::Value;

/// A request the server answers 200 when it has a free slot.
pub struct Request<'a> {
    pub method: &'a str,
    pub path: &'a str,
    /// JSON body; empty for none.
    pub body: &'a str,
}

/// Longest wait for one answer: far above what a loaded machine needs; only a broken
/// server reaches it.
const ANSWER_LIMIT: Duration = Duration::from_secs(60);

fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).unwrap_or_else(|e| panic!("connecting to {addr}: {e}"));
    s.set_read_timeout(Some(ANSWER_LIMIT)).unwrap();
    s
}

/// Send `rq` on `s` and read one response: (status, body as JSON).
fn exchange(s: &TcpStream, rq: &Request<'_>, close: bool, what: &str) -> (u16, Value) {
    let mut head = format!(
        "{} {} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json\r\n",
        rq.method, rq.path
    );
    if !rq.body.is_empty() {
        head.push_str(&format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n",
            rq.body.len()
        ));
    }
    if close {
        head.push_str("Connection: close\r\n");
    }
    head.push_str("\r\n");
    (&*s)
        .write_all([head.as_bytes(), rq.body.as_bytes()].concat().as_slice())
        .unwrap_or_else(|e| panic!("{what}: sending {} {}: {e}", rq.method, rq.path));
    let mut r = BufReader::new(s);
    let mut line = String::new();
    r.read_line(&mut line)
        .unwrap_or_else(|e| panic!("{what}: reading the status line: {e}"));
    let status: u16 = line
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("{what}: no HTTP status line: {line:?}"));
    let mut length = None;
    loop {
        let mut h = String::new();
        r.read_line(&mut h)
            .unwrap_or_else(|e| panic!("{what}: reading headers: {e}"));
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':')
            && k.eq_ignore_ascii_case("content-length")
        {
            length = v.trim().parse::<usize>().ok();
        }
    }
    let n = length.unwrap_or_else(|| panic!("{what}: a response without Content-Length"));
    let mut body = vec![0u8; n];
    r.read_exact(&mut body)
        .unwrap_or_else(|e| panic!("{what}: reading the body: {e}"));
    assert!(r.buffer().is_empty(), "{what}: bytes after the response");
    let v = serde_json::from_slice(&body).unwrap_or_else(|e| {
        panic!(
            "{what}: the body is not JSON ({e}): {}",
            String::from_utf8_lossy(&body)
        )
    });
    (status, v)
}

/// The TCP state of a socket (`tcpi_state`: 5 FIN_WAIT2, 6 TIME_WAIT, 7 CLOSE, ...).
fn tcp_state(s: &TcpStream) -> u8 {
    // SAFETY: a valid socket descriptor, and a zeroed `tcp_info` with its size.
    unsafe {
        let mut info: libc::tcp_info = std::mem::zeroed();
        let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
        let rc = libc::getsockopt(
            s.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&raw mut info).cast(),
            &mut len,
        );
        assert_eq!(
            rc,
            0,
            "getsockopt(TCP_INFO): {}",
            std::io::Error::last_os_error()
        );
        info.tcpi_state
    }
}

/// Close `s` from this side and wait until the server's TCP stack has acknowledged
/// the end of stream (FIN_WAIT2, or TIME_WAIT / CLOSE when the server closed too).
fn close_confirmed(s: TcpStream, what: &str) {
    let _ = s.shutdown(Shutdown::Write);
    let start = Instant::now();
    loop {
        let state = tcp_state(&s);
        if matches!(state, 5..=7) {
            return;
        }
        assert!(
            start.elapsed() < ANSWER_LIMIT,
            "{what}: the server's kernel never acknowledged the close (TCP state {state})"
        );
        // Spin: the server's threads get no more time than its kernel needed.
        std::thread::yield_now();
    }
}

const HEALTH: Request<'static> = Request {
    method: "GET",
    path: "/health",
    body: "",
};

/// `/health`'s count of open connections, asked on a new connection that is returned
/// open (keep-alive) or closed by the server (`Connection: close`).
fn open_count(addr: SocketAddr, close: bool, what: &str) -> (u64, TcpStream, Value) {
    let s = connect(addr);
    let (status, v) = exchange(&s, &HEALTH, close, what);
    assert_eq!(status, 200, "{what}: GET /health: {v}");
    let n = v["connections_open"]
        .as_u64()
        .unwrap_or_else(|| panic!("{what}: /health has no connections_open: {v}"));
    (n, s, v)
}

/// Run `cycles` cycles (see the module doc) against the server at `addr`, whose cap is
/// `cap`; `name` labels failures.
pub fn cycles(addr: SocketAddr, cap: usize, rq: &Request<'_>, cycles: usize, name: &str) {
    assert!(cap >= 2, "the steps need a cap of at least 2");
    for c in 0..cycles {
        let what = format!("{name}, cycle {c}, step 1 (nothing held)");
        let (n, _, v) = open_count(addr, true, &what);
        assert_eq!(n, 1, "{what}: /health must count only itself: {v}");
        assert_eq!(v["max_connections"], cap, "{what}: {v}");

        let mut held: Vec<TcpStream> = (0..cap - 1).map(|_| connect(addr)).collect();
        let what = format!(
            "{name}, cycle {c}, step 2 ({} silent connections + /health)",
            cap - 1
        );
        let (n, s, v) = open_count(addr, false, &what);
        assert_eq!(
            n, cap as u64,
            "{what}: every held connection holds a slot: {v}"
        );
        held.push(s);

        for k in 0..3 {
            let what = format!("{name}, cycle {c}, step 3 (at the cap), request {k}");
            let s = connect(addr);
            let (status, v) = exchange(&s, rq, false, &what);
            assert_eq!(status, 503, "{what}: {v}");
            let msg = v["error"]["message"].as_str().unwrap_or_default();
            assert!(
                msg.contains(&format!("too many connections (limit {cap})")),
                "{what}: {v}"
            );
        }

        for s in held {
            close_confirmed(
                s,
                &format!("{name}, cycle {c}, closing the held connections"),
            );
        }
        let close = c % 2 == 1;
        let what = format!(
            "{name}, cycle {c}, step 4 (the {cap} closed, a request with{} Connection: close)",
            if close { "" } else { "out" }
        );
        let s = connect(addr);
        let (status, v) = exchange(&s, rq, close, &what);
        assert_eq!(status, 200, "{what}: {v}");
        if close {
            // The server ends the connection; its slot is free before the answer.
            drop(s);
        } else {
            close_confirmed(s, &what);
        }
    }
    let what = format!("{name}, after {cycles} cycles");
    let (n, _, v) = open_count(addr, true, &what);
    assert_eq!(n, 1, "{what}: {v}");
}
