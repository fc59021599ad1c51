//! In-process generation throughput of a task family, for side-by-side comparisons
//! with other generators (`scripts/compare_reasoning_gym.sh`). The measurement covers
//! exactly what a user pays per instance — seeding its stream, generating, building
//! the `Instance` — and nothing else: no process start-up, no serialisation, no I/O.
//! Criterion benchmarks (`benches/families.rs`) remain the reference for per-family
//! timings; this path exists so a shell script can compare against another library
//! in the same run.

use std::hint::black_box;
use std::time::Instant;

use serde::Serialize;

use crate::families::{self, Family, FamilyError, Level};

/// The result of one measurement.
#[derive(Debug, Clone, Serialize)]
pub struct GenThroughput {
    pub family: String,
    pub level: u8,
    pub seed: u64,
    /// Instances generated in the timed loop.
    pub n: u64,
    /// Instances generated before timing, to warm caches and lazily built tables.
    pub warmup: u64,
    pub seconds: f64,
    pub items_per_sec: f64,
}

/// Generate instances `0..n` of `(family, level, seed)` after a warm-up of
/// `min(n, 100)` instances from a different seed, and time the loop.
pub fn measure_generation(
    family: &'static dyn Family,
    level: Level,
    seed: u64,
    n: u64,
) -> Result<GenThroughput, FamilyError> {
    if n == 0 {
        return Err(FamilyError::ZeroCount);
    }
    let warmup = n.min(100);
    let warm = families::InstanceStream::new(family, level, seed.wrapping_add(1));
    for i in 0..warmup {
        black_box(warm.instance(i));
    }
    // Timed: what `hrl tasks gen` does per seed (one key hash, one stream per instance).
    let start = Instant::now();
    let stream = families::InstanceStream::new(family, level, seed);
    for i in 0..n {
        black_box(stream.instance(i));
    }
    let seconds = start.elapsed().as_secs_f64();
    Ok(GenThroughput {
        family: family.name().to_string(),
        level: level.get(),
        seed,
        n,
        warmup,
        seconds,
        items_per_sec: if seconds > 0.0 {
            n as f64 / seconds
        } else {
            f64::INFINITY
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_what_it_measured() {
        let f = families::get("count_primes").unwrap();
        let level = Level::new(2).unwrap();
        assert!(matches!(
            measure_generation(f, level, 0, 0),
            Err(FamilyError::ZeroCount)
        ));
        // The measured loop lies inside the call, so its time is positive and at most
        // the call's (ordering, not a guess about speed); the rate is n per that time.
        let outer = Instant::now();
        let m = measure_generation(f, level, 9, 7).unwrap();
        let call = outer.elapsed().as_secs_f64();
        assert_eq!(
            (m.family.as_str(), m.level, m.seed, m.n, m.warmup),
            ("count_primes", 2, 9, 7, 7)
        );
        assert!(
            m.seconds > 0.0 && m.seconds <= call,
            "{} vs {call}",
            m.seconds
        );
        assert_eq!(m.items_per_sec, 7.0 / m.seconds);
        let big = measure_generation(f, level, 9, 500).unwrap();
        assert_eq!((big.n, big.warmup), (500, 100));
        assert_eq!(big.items_per_sec, 500.0 / big.seconds);
    }
}
