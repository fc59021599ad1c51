//! Sandbox overhead (criterion): a bare `python3 -c pass` (the interpreter the
//! sandbox resolved) spawned with
//! `std::process::Command`, the same trivial program one-shot through
//! `Sandbox::run`, through a warm `Session`, and trivial stdin tests (read a line,
//! print it) per second with 2 sessions in parallel. Goals: one-shot within 1.5x of
//! bare Python; >= 200 trivial tests/s on 2 cores.
//! Needs bubblewrap and writable cgroups (`make deps`, root). Run:
//! `cargo bench --bench sandbox`.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use harness_rl::sandbox::{Limits, RunRequest, Sandbox, SandboxConfig, Session};

fn limits() -> Limits {
    Limits {
        wall: Duration::from_secs(10),
        cpu_seconds: 5,
        memory_mb: 256,
        ..Limits::default()
    }
}

fn request(program: &str, stdin: &[u8]) -> RunRequest {
    RunRequest {
        program: program.to_string(),
        stdin: stdin.to_vec(),
        files: Vec::new(),
        limits: limits(),
    }
}

fn bench(c: &mut Criterion) {
    let sandbox = Sandbox::new(SandboxConfig::default())
        .expect("the sandbox needs bubblewrap (`make deps`) and writable cgroups (run as root)");
    // The interpreter the sandbox resolved (`python3` may be a pyenv shim script,
    // which alone costs ~40 ms per start); the bare baseline runs the same binary.
    let python = sandbox.python().executable.clone();
    let trivial = request("pass\n", b"");
    let echo = request("print(input())\n", b"hello 42\n");

    let mut g = c.benchmark_group("sandbox");
    g.sample_size(20)
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(8));

    g.bench_function("bare_python3_c_pass", |b| {
        b.iter(|| {
            let st = Command::new(&python)
                .args(["-c", "pass"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .unwrap();
            assert!(st.success());
        })
    });

    g.bench_function("sandbox_run_one_shot", |b| {
        b.iter(|| {
            let r = sandbox.run(&trivial).unwrap();
            assert_eq!(r.exit_code, Some(0), "{r:?}");
        })
    });

    let mut session = sandbox.session(&limits()).unwrap();
    g.bench_function("warm_session_run", |b| {
        b.iter(|| {
            let r = session.run(&trivial).unwrap();
            assert_eq!(r.exit_code, Some(0), "{r:?}");
        })
    });
    drop(session);

    // Throughput: each iteration is one test; two sessions share the iterations.
    let mut sessions: Vec<Session> = (0..2)
        .map(|_| sandbox.session(&limits()).unwrap())
        .collect();
    g.throughput(Throughput::Elements(1));
    g.bench_function("stdin_tests_2_sessions_parallel", |b| {
        b.iter_custom(|iters| {
            let started = Instant::now();
            std::thread::scope(|s| {
                for (k, sess) in sessions.iter_mut().enumerate() {
                    let n = iters / 2 + u64::from(k == 0) * (iters % 2);
                    let echo = &echo;
                    s.spawn(move || {
                        for _ in 0..n {
                            let r = sess.run(echo).unwrap();
                            assert_eq!(r.stdout, b"hello 42\n", "{r:?}");
                        }
                    });
                }
            });
            started.elapsed()
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
