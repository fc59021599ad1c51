//! In-process generation throughput of task families, for side-by-side comparisons
//! with other generators (see `scripts/compare_reasoning_gym.py`).
//!
//! Usage: `cargo run --release --no-default-features --example gen_rate -- LEVEL N FAMILY...`
//! Prints one line per family: `NAME ITEMS_PER_SECOND` (best of three passes of `N`
//! instances each; instances are built and dropped, nothing is written).

use std::hint::black_box;
use std::process::ExitCode;
use std::time::Instant;

use harness_rl::families::{self, Level};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(level), Some(n)) = (
        args.first()
            .and_then(|l| l.parse::<u8>().ok())
            .and_then(|l| Level::new(l).ok()),
        args.get(1)
            .and_then(|n| n.parse::<u64>().ok())
            .filter(|&n| n > 0),
    ) else {
        eprintln!("usage: gen_rate LEVEL(1..=5) N(>0) FAMILY...");
        return ExitCode::from(2);
    };
    for name in &args[2..] {
        let f = match families::get(name) {
            Ok(f) => f,
            Err(e) => {
                eprintln!("{e}");
                return ExitCode::from(2);
            }
        };
        let mut best = f64::INFINITY;
        for pass in 0..3u64 {
            let t = Instant::now();
            for i in 0..n {
                black_box(families::generate(f, level, pass, i));
            }
            best = best.min(t.elapsed().as_secs_f64());
        }
        println!("{name} {:.0}", n as f64 / best);
    }
    ExitCode::SUCCESS
}
