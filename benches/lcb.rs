//! LiveCodeBench loader throughput (criterion): decode and index a file of 1,000
//! synthetic rows generated here (private tests pickled with protocol 4 framing,
//! zlib-compressed and base64-encoded exactly like the real files).
//! Run: `cargo bench --no-default-features --bench lcb`.

use std::io::Write;
use std::path::Path;

use base64::Engine;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use harness_rl::lcb::loader::{self, LoadOptions, decode_private_tests};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::json;

const ROWS: usize = 1000;

/// `pickle.dumps(s, protocol=4)` for a string: PROTO, FRAME, (SHORT_)BINUNICODE,
/// MEMOIZE, STOP.
fn pickle_str(s: &str) -> Vec<u8> {
    let mut body = Vec::new();
    if s.len() < 256 {
        body.push(0x8c);
        body.push(s.len() as u8);
    } else {
        body.push(b'X');
        body.extend_from_slice(&(s.len() as u32).to_le_bytes());
    }
    body.extend_from_slice(s.as_bytes());
    body.push(0x94);
    body.push(b'.');
    let mut out = vec![0x80, 4, 0x95];
    out.extend_from_slice(&(body.len() as u64).to_le_bytes());
    out.extend_from_slice(&body);
    out
}

fn synthetic_row(rng: &mut ChaCha8Rng, i: usize) -> String {
    let functional = i % 3 == 0;
    let tests: Vec<_> = (0..20)
        .map(|_| {
            let n = rng.random_range(50..200);
            let nums: Vec<String> = (0..n).map(|_| rng.random_range(0..1_000_000).to_string()).collect();
            if functional {
                json!({"input": format!("[{}]\n{}", nums.join(", "), n), "output": nums[0].clone(), "testtype": "functional"})
            } else {
                json!({"input": format!("{n}\n{}\n", nums.join(" ")), "output": nums[n / 2].clone(), "testtype": "stdin"})
            }
        })
        .collect();
    let private = serde_json::to_string(&tests[2..]).unwrap();
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    z.write_all(&pickle_str(&private)).unwrap();
    let b64 = base64::engine::general_purpose::STANDARD.encode(z.finish().unwrap());
    let platform = ["leetcode", "codeforces", "atcoder"][i % 3];
    let difficulty = ["easy", "medium", "hard"][i % 3];
    json!({
        "question_title": format!("Synthetic {i}"),
        "question_content": "Read numbers and print the median. ".repeat(20),
        "platform": platform,
        "question_id": format!("syn{i}"),
        "contest_id": format!("c{}", i / 4),
        "contest_date": format!("2024-{:02}-{:02}T00:00:00", 1 + i % 12, 1 + i % 28),
        "starter_code": if functional { "class Solution:\n    def f(self, a: List[int], n: int) -> int:\n        " } else { "" },
        "difficulty": difficulty,
        "public_test_cases": serde_json::to_string(&tests[..2]).unwrap(),
        "private_test_cases": b64,
        "metadata": if functional { r#"{"func_name": "f"}"# } else { "{}" },
    })
    .to_string()
}

fn write_file(dir: &Path) -> (usize, Vec<String>) {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let rows: Vec<String> = (0..ROWS).map(|i| synthetic_row(&mut rng, i)).collect();
    let text = rows.join("\n") + "\n";
    std::fs::write(dir.join("test.jsonl"), &text).unwrap();
    let privates = rows
        .iter()
        .map(|r| {
            serde_json::from_str::<serde_json::Value>(r).unwrap()["private_test_cases"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    (text.len(), privates)
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let (bytes, privates) = write_file(dir.path());
    eprintln!(
        "synthetic file: {ROWS} rows, {:.1} MiB",
        bytes as f64 / (1 << 20) as f64
    );
    let mut g = c.benchmark_group("lcb_loader");
    g.sample_size(20);
    g.throughput(Throughput::Elements(ROWS as u64));
    g.bench_function("load_dir_1000_rows", |b| {
        b.iter(|| {
            let ds = loader::load_dir(dir.path(), &LoadOptions::default()).unwrap();
            assert_eq!(ds.problems.len(), ROWS);
            ds
        })
    });
    g.bench_function("load_dir_1000_rows_one_thread", |b| {
        let opts = LoadOptions {
            threads: 1,
            ..LoadOptions::default()
        };
        b.iter(|| loader::load_dir(dir.path(), &opts).unwrap())
    });
    g.bench_function("load_dir_1000_rows_counts_only", |b| {
        let opts = LoadOptions {
            keep_private_tests: false,
            ..LoadOptions::default()
        };
        b.iter(|| loader::load_dir(dir.path(), &opts).unwrap())
    });
    g.bench_function("decode_private_tests_1000", |b| {
        b.iter(|| {
            privates
                .iter()
                .map(|p| decode_private_tests(p, 1 << 30).unwrap().len())
                .sum::<usize>()
        })
    });
    g.finish();
}

/// Grading throughput: every fixture reference solution (judge semantics)
/// through the isolated sandbox. Skipped with a message where isolation is missing.
fn bench_grade(c: &mut Criterion) {
    use harness_rl::lcb::{GradeConfig, Grader};
    use harness_rl::sandbox::SandboxConfig;
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/lcb");
    let ds = loader::load_dir(&fixtures, &LoadOptions::default()).unwrap();
    let grader = match Grader::new(SandboxConfig::default(), GradeConfig::default()) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("skipping lcb_grade: {e}");
            return;
        }
    };
    let refs: Vec<(String, String)> =
        std::fs::read_to_string(fixtures.join("solutions/reference.jsonl"))
            .unwrap()
            .lines()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                (
                    v["question_id"].as_str().unwrap().to_string(),
                    v["code"].as_str().unwrap().to_string(),
                )
            })
            .collect();
    let items: Vec<_> = refs
        .iter()
        .map(|(q, code)| (ds.get(q).unwrap(), code.as_str(), 0))
        .collect();
    let tests: usize = items.iter().map(|(p, _, _)| p.all_tests().count()).sum();
    let mut g = c.benchmark_group("lcb_grade");
    g.sample_size(10);
    g.throughput(Throughput::Elements(tests as u64));
    g.bench_function(format!("reference_solutions_{}_tests", tests), |b| {
        b.iter(|| {
            let r = grader.grade_many(&items, &|_| {});
            assert!(r.iter().all(|x| x.as_ref().is_ok_and(|s| s.passed)));
        })
    });
    g.finish();
}

criterion_group!(benches, bench, bench_grade);
criterion_main!(benches);
