//! The connections of the two loopback HTTP servers (`hrl serve`, `hrl reward-server`):
//! the accept loop, the connection cap, and one thread per connection reading requests
//! through [`super::http`] and answering them through a [`Service`].
//!
//! The cap counts a registry of open connections ([`Connections`]). A connection holds
//! its slot from the moment it is accepted until it is closed, and gives it back exactly
//! once (the registry entry is removed by whoever gets there first, under one lock):
//! - when the server ends the connection (the client closed it, went idle, sent a bad
//!   request, asked for `Connection: close`; a panic; shutdown), the slot is released
//!   before the last answer is written, so a client that has read that answer finds
//!   the slot free;
//! - when the client closes a connection that is idle (between requests), its thread
//!   notices only once the scheduler runs it, which on a loaded machine can be after
//!   the acceptor has counted it against a new client. Whoever needs the count (the
//!   acceptor at the cap, `/health`) therefore first sweeps: an idle connection whose
//!   socket holds nothing but the client's end of stream (a non-blocking peek reads 0
//!   bytes) or a reset is closed and its slot released on the spot.
//!
//! "Idle" is exact: a connection thread waits for the first byte of the next request
//! with a peek (nothing consumed) and marks itself busy, under the registry lock,
//! before it reads. So while a connection is idle every byte the client sent is still
//! in the socket, and a peek of 0 bytes means the client ended the stream before
//! sending anything more: no request can follow, and the thread, when it runs, finds
//! the end of stream and its slot gone. Counting was the acceptor's alone before
//! (issue 35): a slot came back only when the connection's thread had run, so for a
//! moment after a client closed, a new client could be refused while the server held
//! fewer than `max` connections, and that refused socket then sat unnoticed in a
//! client's pool with the cap one short.

use std::collections::HashMap;
use std::io::BufReader;
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use serde_json::Value;

use super::http::{self, HttpError, HttpRequest, Linger, ReadError};

/// What a server does with requests; the connection layer does the rest.
pub(crate) trait Service: Sync {
    /// Answer one request: the 200 body, or the error to send. `conns` is the registry
    /// (for `/health`'s exact count).
    fn handle(&self, rq: &HttpRequest, conns: &Connections<'_>) -> Result<Value, HttpError>;

    /// Counters follow these; the default ignores them.
    fn note(&self, _event: Event) {}
}

/// What the connection layer reports to the [`Service`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Event {
    /// A connection was given a slot.
    Accepted,
    /// A connection was answered 503 at the cap.
    RefusedAtCap,
    /// A request was answered with a 4xx status.
    Rejected,
    /// A panic in a connection thread was contained.
    Panic,
}

/// Settings of the connection layer.
pub(crate) struct Settings {
    /// Largest request body (larger ones are 413).
    pub max_body_bytes: usize,
    /// A connection that sends nothing for this long is closed.
    pub idle_timeout: Duration,
    /// Names log lines and threads: `hrl serve`, `hrl reward-server`.
    pub name: &'static str,
    /// The message of the 500 a client gets when its request's handler panicked.
    pub panic_message: &'static str,
}

/// One registered connection: a handle on its socket (to sweep it, and to shut it
/// down when the server stops) and whether its thread waits for a request.
struct Entry {
    stream: TcpStream,
    idle: bool,
}

struct Registry {
    entries: HashMap<u64, Entry>,
    next_id: u64,
    /// Set when the server stops: no more admissions.
    closed: bool,
}

/// The open connections, counted against the cap (see the module doc).
pub(crate) struct Connections<'a> {
    max: usize,
    registry: Mutex<Registry>,
    /// Mirrors the number of entries for lock-free readers (`ServeStats`).
    gauge: &'a AtomicU64,
}

impl<'a> Connections<'a> {
    pub fn new(max: usize, gauge: &'a AtomicU64) -> Connections<'a> {
        gauge.store(0, Ordering::SeqCst);
        Connections {
            max,
            registry: Mutex::new(Registry {
                entries: HashMap::new(),
                next_id: 0,
                closed: false,
            }),
            gauge,
        }
    }

    /// The cap.
    pub fn max(&self) -> usize {
        self.max
    }

    fn lock(&self) -> MutexGuard<'_, Registry> {
        self.registry.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn remove(&self, reg: &mut Registry, id: u64) -> Option<Entry> {
        let e = reg.entries.remove(&id);
        self.gauge.store(reg.entries.len() as u64, Ordering::SeqCst);
        e
    }

    /// Release the slots of idle connections whose clients have closed them.
    fn sweep(&self, reg: &mut Registry) {
        let gone: Vec<u64> = reg
            .entries
            .iter()
            .filter(|(_, e)| e.idle && client_closed(&e.stream))
            .map(|(&id, _)| id)
            .collect();
        for id in gone {
            if let Some(e) = self.remove(reg, id) {
                // Its thread, blocked in a peek, wakes to the end of stream.
                let _ = e.stream.shutdown(Shutdown::Read);
            }
        }
    }

    /// Open connections now, exactly (after a sweep).
    pub fn open(&self) -> usize {
        let mut reg = self.lock();
        self.sweep(&mut reg);
        reg.entries.len()
    }

    /// A slot for `stream`, or the stream back when all `max` are held (after a sweep)
    /// or the server is stopping.
    fn admit(&self, stream: &TcpStream) -> Option<Slot<'_, 'a>> {
        let mut reg = self.lock();
        if reg.closed {
            return None;
        }
        if reg.entries.len() >= self.max {
            self.sweep(&mut reg);
            if reg.entries.len() >= self.max {
                return None;
            }
        }
        let handle = stream.try_clone().ok()?;
        let id = reg.next_id;
        reg.next_id += 1;
        reg.entries.insert(
            id,
            Entry {
                stream: handle,
                idle: true,
            },
        );
        self.gauge.store(reg.entries.len() as u64, Ordering::SeqCst);
        Some(Slot {
            conns: self,
            id,
            held: true,
        })
    }

    /// Stop admitting, and end every connection's reading side: idle threads wake to
    /// the end of stream, busy ones finish their request and answer `Connection:
    /// close`.
    fn close_all(&self) {
        let mut reg = self.lock();
        reg.closed = true;
        for e in reg.entries.values() {
            let _ = e.stream.shutdown(Shutdown::Read);
        }
    }
}

/// True when a socket holds nothing but the client's end of stream, or was reset: a
/// non-blocking peek (`MSG_DONTWAIT` on this call only; the socket stays blocking for
/// its thread) that reads 0 bytes or fails for good.
fn client_closed(s: &TcpStream) -> bool {
    let mut b = [0u8; 1];
    // SAFETY: a valid socket descriptor (owned by `s`) and a 1-byte buffer we own.
    let n = unsafe {
        libc::recv(
            s.as_raw_fd(),
            b.as_mut_ptr().cast(),
            1,
            libc::MSG_PEEK | libc::MSG_DONTWAIT,
        )
    };
    match n {
        0 => true,
        n if n > 0 => false,
        _ => {
            let e = std::io::Error::last_os_error();
            !matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted
            )
        }
    }
}

/// A connection's place under the cap; dropping it releases the slot (once).
pub(crate) struct Slot<'c, 'a> {
    conns: &'c Connections<'a>,
    id: u64,
    held: bool,
}

impl Slot<'_, '_> {
    /// Mark the connection idle (waiting for a request, nothing buffered) or busy.
    /// False when the slot is gone: a sweep found the client had closed.
    fn set_idle(&mut self, idle: bool) -> bool {
        let mut reg = self.conns.lock();
        match reg.entries.get_mut(&self.id) {
            Some(e) if self.held => {
                e.idle = idle;
                true
            }
            _ => {
                self.held = false;
                false
            }
        }
    }

    /// Give the slot back (the connection is ending); later calls do nothing.
    fn release(&mut self) {
        if std::mem::take(&mut self.held) {
            let mut reg = self.conns.lock();
            self.conns.remove(&mut reg, self.id);
        }
    }
}

impl Drop for Slot<'_, '_> {
    fn drop(&mut self) {
        self.release();
    }
}

/// Accept connections on `listener` until `stop` is set (checked after every accepted
/// connection), one scoped thread each, capped by `conns`; then close the open ones
/// and wait for their threads.
pub(crate) fn serve(
    listener: &TcpListener,
    conns: &Connections<'_>,
    linger: &Linger,
    settings: &Settings,
    stop: &AtomicBool,
    service: &dyn Service,
) {
    std::thread::scope(|scope| {
        for stream in listener.incoming() {
            if stop.load(Ordering::SeqCst) {
                break;
            }
            let Ok(stream) = stream else { continue };
            let _ = stream.set_nodelay(true);
            let Some(slot) = conns.admit(&stream) else {
                service.note(Event::RefusedAtCap);
                refuse(stream, conns.max(), linger);
                continue;
            };
            service.note(Event::Accepted);
            let id = slot.id;
            // If the spawn fails the closure, and with it the slot, is dropped: the
            // slot is released either way.
            let _ = std::thread::Builder::new()
                .name(format!("{}-conn-{id}", settings.name.replace(' ', "-")))
                .spawn_scoped(scope, move || {
                    let mut slot = slot;
                    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        connection(stream, &mut slot, linger, settings, stop, service)
                    }));
                    if let Err(panic) = result {
                        service.note(Event::Panic);
                        eprintln!(
                            "{}: connection {id}: panic while reading a request ({}); connection closed, slot released",
                            settings.name,
                            panic_message(panic.as_ref())
                        );
                    }
                    // Last: the registry's handle keeps the socket open until the
                    // panic is counted, so a client that saw the end saw the count.
                    drop(slot);
                });
        }
        conns.close_all();
    });
}

/// Answer 503 without taking a slot or blocking the acceptor, then close gracefully.
fn refuse(stream: TcpStream, max: usize, linger: &Linger) {
    let e = HttpError::server(
        503,
        format!("too many connections (limit {max}); retry later"),
    );
    // A fresh connection's send buffer takes the small response at once; never wait
    // for a client that does not read.
    if stream.set_nonblocking(true).is_ok() {
        let _ = std::io::Write::write(
            &mut &stream,
            &http::response_bytes(e.status, &e.body(), false),
        );
    }
    linger.close(stream);
}

pub(crate) fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "non-string panic payload".into())
}

/// Wait, idle, for the first byte of the next request without consuming it. False when
/// the connection is over: the client closed it or went quiet for the idle timeout,
/// the server is stopping, or a sweep took the slot.
fn await_request(s: &TcpStream, slot: &mut Slot<'_, '_>) -> bool {
    if !slot.set_idle(true) {
        return false;
    }
    let mut b = [0u8; 1];
    loop {
        match s.peek(&mut b) {
            Ok(0) => return false,
            Ok(_) => return slot.set_idle(false),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
}

/// Serve one client connection until it closes, errs, goes idle, or the server stops.
fn connection(
    stream: TcpStream,
    slot: &mut Slot<'_, '_>,
    linger: &Linger,
    settings: &Settings,
    stop: &AtomicBool,
    service: &dyn Service,
) {
    let _ = stream.set_read_timeout(Some(settings.idle_timeout));
    let Ok(mut w) = stream.try_clone() else {
        return;
    };
    let mut r = BufReader::new(stream);
    loop {
        // A request already buffered (pipelined) keeps the connection busy.
        if r.buffer().is_empty() && !await_request(r.get_ref(), slot) {
            return;
        }
        if stop.load(Ordering::SeqCst) {
            return;
        }
        let rq = match http::read_request(&mut r, &mut w, settings.max_body_bytes) {
            Ok(rq) => rq,
            Err(ReadError::Closed) => return,
            Err(ReadError::Bad(e)) => {
                service.note(Event::Rejected);
                slot.release();
                // The client may still be sending the rest of this request.
                let _ = http::write_response(&mut w, e.status, &e.body(), false);
                linger.close(w);
                return;
            }
        };
        let keep_alive = rq.keep_alive && !stop.load(Ordering::SeqCst);
        let handled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            service.handle(&rq, slot.conns)
        }));
        let (status, body, keep_alive) = match handled {
            Ok(Ok(body)) => (200, body, keep_alive),
            Ok(Err(e)) => {
                if e.status < 500 {
                    service.note(Event::Rejected);
                }
                (e.status, e.body(), keep_alive)
            }
            Err(panic) => {
                service.note(Event::Panic);
                eprintln!(
                    "{}: {} {}: panic in request handling ({}); answered 500, connection closed",
                    settings.name,
                    rq.method,
                    rq.path,
                    panic_message(panic.as_ref())
                );
                let e = HttpError::server(500, settings.panic_message);
                (e.status, e.body(), false)
            }
        };
        // Before the answer leaves: a client that has read it finds the slot free
        // (closing) or the connection idle, so sweepable once it closes (keep-alive).
        if !keep_alive {
            slot.release();
        } else if r.buffer().is_empty() && !slot.set_idle(true) {
            return;
        }
        if http::write_response(&mut w, status, &body, keep_alive).is_err() {
            return;
        }
        if !keep_alive {
            if status >= 400 {
                linger.close(w);
            }
            return;
        }
    }
}
