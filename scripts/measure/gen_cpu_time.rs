//! CPU time per generated instance, for before/after comparisons of family generation
//! on a shared, noisy machine (thread CPU time is far less disturbed by other load than
//! wall time). Self-contained, so the same file can be copied onto an older checkout.
//!
//! `cargo run --release --example gen_cpu_time -- N FAMILY...` prints, per family, the
//! best (lowest) of 5 runs of N level-3 instances (seeds 100..105, after a warm-up of
//! N/10 instances), in microseconds of this thread's CPU time per instance.

use std::hint::black_box;

use harness_rl::families::{self, InstanceStream, Level};

/// This thread's CPU time in seconds.
fn thread_cpu_seconds() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the duration of the call.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(n), true) = (
        args.get(1).and_then(|n| n.parse::<u64>().ok()),
        args.len() > 2,
    ) else {
        eprintln!("usage: gen_cpu_time N FAMILY...");
        std::process::exit(2);
    };
    let level = Level::new(3).expect("level 3");
    for name in &args[2..] {
        let Ok(f) = families::get(name) else {
            eprintln!("unknown family {name}");
            std::process::exit(2);
        };
        let warm = InstanceStream::new(f, level, 1);
        for i in 0..n / 10 {
            black_box(warm.instance(i));
        }
        let mut best = f64::MAX;
        for seed in 100..105 {
            let stream = InstanceStream::new(f, level, seed);
            let t = thread_cpu_seconds();
            for i in 0..n {
                black_box(stream.instance(i));
            }
            best = best.min((thread_cpu_seconds() - t) / n as f64);
        }
        println!("{name} {:.3}", best * 1e6);
    }
}
