//! Generation and scoring throughput of every family (criterion).
//! Run: `cargo bench --bench families` (add `-- count_primes` to filter).

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use harness_rl::families::{self, Level, ScoreMode};
use std::hint::black_box;

fn bench(c: &mut Criterion) {
    let level = Level::new(3).unwrap();
    let mut g = c.benchmark_group("generate");
    g.throughput(Throughput::Elements(1));
    for f in families::registry() {
        let mut i = 0u64;
        g.bench_function(BenchmarkId::from_parameter(f.name()), |b| {
            b.iter(|| {
                i += 1;
                black_box(families::generate(*f, level, 7, i))
            })
        });
    }
    g.finish();

    let mut g = c.benchmark_group("score");
    g.throughput(Throughput::Elements(1));
    for f in families::registry() {
        let insts: Vec<_> = (0..64)
            .map(|i| families::generate(*f, level, 7, i))
            .collect();
        let responses: Vec<String> = insts
            .iter()
            .map(|x| format!("Reasoning...\n<answer>{}</answer>", x.answer))
            .collect();
        let mut i = 0usize;
        g.bench_function(BenchmarkId::from_parameter(f.name()), |b| {
            b.iter(|| {
                i = (i + 1) % insts.len();
                black_box(families::score_response(
                    *f,
                    &insts[i],
                    &responses[i],
                    ScoreMode::Strict,
                ))
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
