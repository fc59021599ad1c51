#!/usr/bin/env python3
"""Side-by-side generation throughput: harness-rl (`hrl tasks gen`) vs the Python
reasoning-gym, measured in one run on one machine.

Usage:
    python3 scripts/compare_reasoning_gym.py [--n-rust N] [--n-python N] [--level L]
        [--repeats R] [--hrl PATH] FAMILY [FAMILY ...]

Needs `reasoning_gym` importable by this interpreter (e.g. a virtual environment with
`pip install reasoning-gym==0.1.25`) and a release build of `hrl`.

Python side: items/s of `dataset[i]` for i in 0..n on a dataset built with the family's
default configuration (construction is not timed, which favours Python). Rust side, two
figures: in-process generation (`examples/gen_rate.rs`, instances built and dropped,
like `dataset[i]`), and the whole `hrl tasks gen FAMILY --n N --level L --out /dev/null`
process, including process start, JSON serialisation and writing. The ratio uses the
in-process figure. Each side is run `repeats` times, alternating, and the best run of
each is kept. Families missing from reasoning-gym get the Rust figures only.

Build first: `cargo build --release --no-default-features --bin hrl --example gen_rate`.
"""

import argparse
import math
import os
import subprocess
import sys
import time


def python_rate(name, n):
    import reasoning_gym

    ds = reasoning_gym.create_dataset(name, size=n, seed=42)
    t0 = time.perf_counter()
    for i in range(n):
        ds[i]
    return n / (time.perf_counter() - t0)


def rust_rate(hrl, name, n, level):
    t0 = time.perf_counter()
    subprocess.run(
        [hrl, "tasks", "gen", name, "--n", str(n), "--level", str(level), "--seed", "42",
         "--out", os.devnull],
        check=True,
    )
    return n / (time.perf_counter() - t0)


def rust_inprocess_rate(gen_rate, name, n, level):
    out = subprocess.run([gen_rate, str(level), str(n), name], check=True,
                         capture_output=True, text=True).stdout.split()
    return float(out[1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("families", nargs="+")
    ap.add_argument("--n-rust", type=int, default=50_000)
    ap.add_argument("--n-python", type=int, default=2_000)
    ap.add_argument("--level", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--hrl", default=os.path.join(os.path.dirname(__file__), "..", "target",
                                                   "release", "hrl"))
    ap.add_argument("--gen-rate", default=os.path.join(os.path.dirname(__file__), "..",
                                                        "target", "release", "examples",
                                                        "gen_rate"))
    a = ap.parse_args()
    try:
        import reasoning_gym  # noqa: F401
        from reasoning_gym.factory import DATASETS
    except ImportError:
        sys.exit("reasoning_gym is not importable by this interpreter (pip install reasoning-gym)")

    rows, ratios = [], []
    for name in a.families:
        rs, cs, ps = [], [], []
        for _ in range(a.repeats):
            rs.append(rust_inprocess_rate(a.gen_rate, name, a.n_rust, a.level))
            cs.append(rust_rate(a.hrl, name, a.n_rust, a.level))
            if name in DATASETS:
                ps.append(python_rate(name, a.n_python))
        r, c = max(rs), max(cs)
        p = max(ps) if ps else None
        ratio = r / p if p else None
        if ratio:
            ratios.append(ratio)
        rows.append((name, r, c, p, ratio))
        print(f"{name}: rust {r:,.0f}/s (cli {c:,.0f}/s) python {p and f'{p:,.0f}'}/s "
              f"ratio {ratio and f'{ratio:.1f}'}", file=sys.stderr)

    print(f"| family | harness-rl items/s (L{a.level}, in-process) | harness-rl items/s (CLI to "
          "/dev/null) | reasoning-gym items/s (default config) | ratio (in-process) |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, r, c, p, ratio in rows:
        ps = f"{p:,.0f}" if p else "n/a"
        rt = f"{ratio:.1f}x" if ratio else "n/a"
        print(f"| {name} | {r:,.0f} | {c:,.0f} | {ps} | {rt} |")
    if ratios:
        g = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
        print(f"\ngeometric mean of {len(ratios)} ratios: {g:.1f}x; slowest ratio {min(ratios):.1f}x")


if __name__ == "__main__":
    main()
