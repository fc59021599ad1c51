//! Ctrl-C during a long command (`hrl eval`, `hrl transfer`, `hrl train`): the process
//! still ends at once with exit status 130 (as it would by the signal), but first
//! prints the command that resumes the run. Everything a run computed is already on
//! disk (records are appended as they finish, the cache writes as it goes), so the
//! handler has nothing to save; it only writes a prepared message, which is all a
//! signal handler may safely do.

use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

/// The exit status of a run stopped by Ctrl-C (128 + SIGINT).
pub const INTERRUPTED: i32 = 130;

static MESSAGE: AtomicPtr<u8> = AtomicPtr::new(std::ptr::null_mut());
static MESSAGE_LEN: AtomicUsize = AtomicUsize::new(0);

extern "C" fn on_sigint(_: libc::c_int) {
    let p = MESSAGE.load(Ordering::SeqCst);
    let n = MESSAGE_LEN.load(Ordering::SeqCst);
    // SAFETY: `p` is null or a leaked, never freed buffer of `n` bytes; write(2) and
    // _exit(2) are async-signal-safe.
    unsafe {
        if !p.is_null() {
            libc::write(2, p as *const libc::c_void, n);
        }
        libc::_exit(INTERRUPTED);
    }
}

/// From now on, Ctrl-C prints "interrupted; resume with: `resume`" on stderr and exits
/// with status 130. A later call replaces the message.
pub fn print_resume_on_ctrl_c(resume: &str) {
    let text = format!("\nhrl: interrupted; what finished is kept: resume with `{resume}`\n");
    let bytes: &'static mut [u8] = Box::leak(text.into_bytes().into_boxed_slice());
    MESSAGE_LEN.store(bytes.len(), Ordering::SeqCst);
    MESSAGE.store(bytes.as_mut_ptr(), Ordering::SeqCst);
    // SAFETY: installing a handler that only calls async-signal-safe functions.
    unsafe {
        libc::signal(
            libc::SIGINT,
            on_sigint as extern "C" fn(libc::c_int) as libc::sighandler_t,
        );
    }
}
