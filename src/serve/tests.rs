//! Panic containment in connection threads. Test builds inject a panic in request
//! handling (`GET /test/panic`) and while reading a request (header `X-Test-Panic`);
//! release builds have neither.

use std::io::{Read, Write};
use std::time::Instant;

use super::*;
use crate::executor::{Completion, ExecutorError, FinishReason, Request, Timings, Usage};

/// Answers every request at once with a fixed text (a test double of a model).
struct Echo;

impl Executor for Echo {
    fn model_id(&self) -> &str {
        "sha256:echo"
    }
    fn complete_batch(&self, requests: &[Request]) -> Vec<Result<Completion, ExecutorError>> {
        requests
            .iter()
            .map(|_| {
                Ok(Completion {
                    text: "ok".into(),
                    finish_reason: FinishReason::Stop,
                    usage: Usage::default(),
                    timings: Timings::default(),
                    cached: false,
                })
            })
            .collect()
    }
}

/// Poll `cond` until it holds; fail after a minute (a generous bound: on an idle
/// machine it takes milliseconds).
fn wait_until(what: &str, cond: impl Fn() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "timed out waiting until {what}"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Send `request` on a fresh connection and read until the server closes it.
fn exchange(addr: SocketAddr, request: &str) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

fn open_now(server: &Server) -> u64 {
    server.stats().connections_open.load(Ordering::SeqCst)
}

#[test]
fn panics_in_connection_threads_are_contained_and_free_their_slots() {
    let mut cfg = ServeConfig::new("sim");
    cfg.port = 0;
    cfg.max_connections = 2;
    let server = Server::start(Arc::new(Echo), cfg).unwrap();
    let addr = server.addr();
    // One client holds a connection for the whole test: one slot is left.
    let _held = TcpStream::connect(addr).unwrap();
    wait_until("the held connection is accepted", || open_now(&server) == 1);

    for round in 1..=3u64 {
        // A panic while handling the request: the client still gets an answer.
        let out = exchange(addr, "GET /test/panic HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(out.starts_with("HTTP/1.1 500"), "{out}");
        assert!(out.contains("panicked"), "{out}");
        // The slot is released right after the answer (the client may see the end
        // of the stream a moment earlier).
        wait_until("the panicked connection releases its slot", || {
            open_now(&server) == 1
        });
        // A panic while reading the request: the connection is closed.
        let out = exchange(
            addr,
            "GET /health HTTP/1.1\r\nHost: x\r\nX-Test-Panic: 1\r\n\r\n",
        );
        assert_eq!(out, "", "no answer after a reader panic");
        assert_eq!(
            server.stats().panics.load(Ordering::SeqCst),
            2 * round,
            "every panic is counted"
        );
        // Both slots come back: a request at the cap succeeds.
        wait_until("the panicked connections release their slots", || {
            open_now(&server) == 1
        });
        let out = exchange(
            addr,
            "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        );
        assert!(out.starts_with("HTTP/1.1 200"), "round {round}: {out}");
        assert!(out.contains("\"connections_open\":2"), "{out}");
        assert!(
            out.contains(&format!("\"handler_panics\":{}", 2 * round)),
            "{out}"
        );
    }
    assert_eq!(
        server.stats().connections_rejected.load(Ordering::SeqCst),
        0
    );
}
