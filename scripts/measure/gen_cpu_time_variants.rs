//! CPU time per generated instance for each question variant of a family, to see what
//! rendering a template costs next to the canonical question (thread CPU time, as
//! `gen_cpu_time`).
//!
//! `cargo run --release --example gen_cpu_time_variants -- N FAMILY...` prints, per
//! family, the best (lowest) of 5 runs of N level-3 instances for variant 0, every
//! template 1.., and `random`, in microseconds of this thread's CPU time per instance.

use std::hint::black_box;

use harness_rl::families::{self, InstanceStream, Level, Variant};

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

fn best(f: &'static dyn families::Family, v: Variant, n: u64) -> f64 {
    let level = Level::new(3).expect("level 3");
    let mut best = f64::MAX;
    for seed in 100..105 {
        let stream = InstanceStream::new(f, level, seed)
            .with_variant(v)
            .expect("variant in range");
        let t = thread_cpu_seconds();
        for i in 0..n {
            black_box(stream.instance(i));
        }
        best = best.min((thread_cpu_seconds() - t) / n as f64);
    }
    best * 1e6
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(n), true) = (
        args.get(1).and_then(|n| n.parse::<u64>().ok()),
        args.len() > 2,
    ) else {
        eprintln!("usage: gen_cpu_time_variants N FAMILY...");
        std::process::exit(2);
    };
    for name in &args[2..] {
        let Ok(f) = families::get(name) else {
            eprintln!("unknown family {name}");
            std::process::exit(2);
        };
        let mut line = name.clone();
        let mut vs: Vec<Variant> = (0..f.variant_count() as u8).map(Variant::Fixed).collect();
        vs.push(Variant::Random);
        for v in vs {
            line.push_str(&format!(" {v}={:.3}", best(f, v, n)));
        }
        println!("{line}");
    }
}
