#!/usr/bin/env python3
"""Run a reproduction file (suites/reproduce-*.toml) and print the score beside the
published one.

Usage: scripts/reproduce.py SUITE.toml [HRL]

Reads the file (strict: unknown or missing keys are errors naming the key), runs
`HRL run --harness H --tasks T... --executor E --out OUT` from the repository root,
then reads OUT/summary.json and prints pass@1, its 95% interval and the published
figure. Exit status: hrl's when it fails, 2 for a bad file, else 0.
"""
import json
import os
import subprocess
import sys
import tomllib

KEYS = {"name", "description", "harness", "tasks", "executor", "out", "published"}
PUBLISHED = {"metric", "value", "model", "source"}


def fail(msg):
    print(f"reproduce: {msg}", file=sys.stderr)
    sys.exit(2)


def main():
    if len(sys.argv) not in (2, 3):
        fail("usage: scripts/reproduce.py SUITE.toml [HRL]")
    path = sys.argv[1]
    hrl = sys.argv[2] if len(sys.argv) == 3 else "target/release/hrl"
    try:
        with open(path, "rb") as f:
            suite = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as e:
        fail(f"{path}: {e}")
    for k in suite:
        if k not in KEYS:
            fail(f"{path}: unknown key `{k}`")
    for k in KEYS - {"description"}:
        if k not in suite:
            fail(f"{path}: missing key `{k}`")
    pub = suite["published"]
    for k in pub:
        if k not in PUBLISHED:
            fail(f"{path}: unknown key `published.{k}`")
    for k in PUBLISHED:
        if k not in pub:
            fail(f"{path}: missing key `published.{k}`")
    if not isinstance(suite["tasks"], list) or not suite["tasks"]:
        fail(f"{path}: `tasks` must be a non-empty list of task SPECs")
    cmd = [hrl, "run", "--harness", suite["harness"]]
    for t in suite["tasks"]:
        cmd += ["--tasks", t]
    cmd += ["--executor", suite["executor"], "--out", suite["out"]]
    print("$ " + " ".join(cmd), flush=True)
    rc = subprocess.call(cmd)
    if rc != 0:
        sys.exit(rc)
    with open(os.path.join(suite["out"], "summary.json")) as f:
        s = json.load(f)
    score = s["aggregates"]["score"]
    ci = score["ci"]
    n = score["n"]
    passed = round(score["mean"] * n)
    print()
    print(f"{suite['name']}: {pub['metric']} = {score['mean'] * 100:.1f}% ({passed}/{n}), "
          f"95% CI [{ci['lo'] * 100:.1f}, {ci['hi'] * 100:.1f}] ({score['method']}); "
          f"wall {s['wall_s'] / 60:.1f} min this invocation ({s['reused']} rollouts reused)")
    inside = ci["lo"] <= pub["value"] <= ci["hi"]
    print(f"published: {pub['value'] * 100:.1f}% ({pub['model']}; {pub['source']}); "
          f"{'inside' if inside else 'outside'} the interval, "
          f"difference {(score['mean'] - pub['value']) * 100:+.1f} points")


if __name__ == "__main__":
    main()
