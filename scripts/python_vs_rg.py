"""Throughput of the Python package harness_rl against reasoning-gym, both in this one
Python process (helper of compare_python_rg.sh).

Usage: python_vs_rg.py [--families a,b,...] [--n N] [--hrl-n N] [--level L] [--seed S]
                       [--repeat R] [--max-seconds T] [--out FILE]

For every family name both packages have (or the ones listed):

- instances/s: `create_dataset(name, seed=S, size=N)` and iterating every entry
  (reasoning-gym: its default configuration; harness_rl: `level=L`, default 3, whose
  sizes PERFORMANCE.md compares with reasoning-gym's defaults). The timed span is
  construction plus iteration; a slow reasoning-gym family stops after T seconds
  (default 10) and is rated on the entries it produced.
- scores/s: `dataset.score_answer(entry["answer"], entry)` over the entries of a
  dataset of 200 (the gold answer, so every scorer runs its full check), repeated for
  at least 0.3 s.

A small warm-up of each side runs first (lazy imports, data files). The sides
alternate family by family and each is measured R times (default 3), keeping its best
rate. Prints a Markdown table (per family: both rates and their ratio, for generation
and for scoring) and the geometric means, and writes it to FILE when given.
"""

import argparse
import datetime
import importlib.metadata
import math
import os
import platform
import sys
import time
import warnings

warnings.filterwarnings("ignore")

import harness_rl  # noqa: E402
import reasoning_gym  # noqa: E402
from reasoning_gym.factory import DATASETS  # noqa: E402


def gen_rate(make, n, max_seconds):
    start = time.perf_counter()
    ds = make(n)
    done = 0
    for _ in ds:
        done += 1
        if done % 64 == 0 and time.perf_counter() - start > max_seconds:
            break
    return done / (time.perf_counter() - start)


def score_rate(ds, entries, min_seconds=0.3):
    calls = 0
    start = time.perf_counter()
    while True:
        for e in entries:
            ds.score_answer(e["answer"], e)
        calls += len(entries)
        elapsed = time.perf_counter() - start
        if elapsed >= min_seconds:
            return calls / elapsed


def measure(name, args):
    rg = lambda n, seed=args.seed: reasoning_gym.create_dataset(name, size=n, seed=seed)  # noqa: E731
    hrl = lambda n, seed=args.seed: harness_rl.create_dataset(  # noqa: E731
        name, size=n, seed=seed, level=args.level
    )
    for make in (rg, hrl):  # warm-up: another seed
        list(make(5, args.seed + 1))
    best = {}
    for _ in range(args.repeat):
        for side, make, n in (("rg", rg, args.n), ("hrl", hrl, args.hrl_n)):
            r = gen_rate(make, n, args.max_seconds)
            best[side, "gen"] = max(best.get((side, "gen"), 0.0), r)
            ds = make(200)
            entries = list(ds)
            bad = sum(ds.score_answer(e["answer"], e) != 1.0 for e in entries)
            r = score_rate(ds, entries)
            best[side, "score"] = max(best.get((side, "score"), 0.0), r)
            best[side, "gold_not_1"] = bad
    return best


def geo(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--families", default="")
    p.add_argument("--n", type=int, default=2000)
    p.add_argument("--hrl-n", type=int, default=20000)
    p.add_argument("--level", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--max-seconds", type=float, default=10.0)
    p.add_argument("--out")
    args = p.parse_args()
    ours = {f["name"] for f in harness_rl.list_families()}
    shared = sorted(ours & set(DATASETS))
    names = [x for x in args.families.replace(",", " ").split() if x] or shared
    for n in names:
        if n not in shared:
            sys.exit(f"{n}: not a family of both harness_rl and reasoning-gym")
    rows, gen_ratios, score_ratios = [], [], []
    for name in names:
        b = measure(name, args)
        g = b["hrl", "gen"] / b["rg", "gen"]
        s = b["hrl", "score"] / b["rg", "score"]
        gen_ratios.append(g)
        score_ratios.append(s)
        rows.append(
            f"| {name} | {b['rg', 'gen']:,.0f} | {b['hrl', 'gen']:,.0f} | {g:,.1f}x "
            f"| {b['rg', 'score']:,.0f} | {b['hrl', 'score']:,.0f} | {s:,.2f}x |"
        )
        if b["hrl", "gold_not_1"]:
            rows[-1] += f" harness_rl scored {b['hrl', 'gold_not_1']} gold answers below 1"
        print(f"measured {name}", file=sys.stderr, flush=True)
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    out = [
        f"harness_rl {harness_rl.__version__} (level {args.level}) vs reasoning-gym "
        f"{importlib.metadata.version('reasoning-gym')} (default configuration), one Python "
        f"{platform.python_version()} process ({date}; {os.cpu_count()} CPUs, "
        f"{platform.machine()}; generation: rg N={args.n}, harness_rl N={args.hrl_n}, seed "
        f"{args.seed}; scoring: 200 entries, gold answers; best of {args.repeat} per side):",
        "",
        "| family | rg instances/s | harness_rl instances/s | ratio | rg scores/s "
        "| harness_rl scores/s | ratio |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
        *rows,
        "",
        f"Geometric means over {len(names)} families: generation **{geo(gen_ratios):,.1f}x** "
        f"({sum(r < 1 for r in gen_ratios)} slower than reasoning-gym), scoring "
        f"**{geo(score_ratios):,.2f}x** ({sum(r < 1 for r in score_ratios)} slower).",
    ]
    text = "\n".join(out)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
