#!/usr/bin/env python3
"""The calibration table (issues 7 and 8) from the run directories of scripts/calibrate.sh.

    scripts/calibration_table.py [--runs /work/runs/calib]... [--families FILE|-] [--json]

Reads RUNS/<harness>-L<level>/rollouts.jsonl (append-only; a run still going or
interrupted is read as far as it got) for the seed harnesses zero-shot, program,
python-tool and reason at levels 1 and 2 and keeps the last rollout per item. --runs
may be given several times (a grid run by several processes, each in its own
directory): a cell's rollouts are read from every directory in the order given, and
a later directory's rollout of an item replaces an earlier one's. One harness hash
and executor per cell is checked (across the directories); rollouts whose question or gold
differ from what the family generates today (an earlier version's) are skipped and
counted on stderr. Prints a Markdown table per level: per family, each harness's mean
score with n and a 95 % interval (Wilson for 0/1 scores, else a seeded percentile
bootstrap), and its executor-free count; a cell with no rollouts is "not run", one
with fewer than --expect (24) is marked partial. Then the rule of issue 7: a family
passes when its level-1 score is above 0 under some seed harness and below 0.9 under
zero-shot; "undecided" when the cells that would decide it are not run yet or partial.
Last, the families whose cell items repeat a question (a level with a small instance
space: the intervals assume independent items, and a repeated item is not one).
Only the Python standard library is used; the instances come from `hrl tasks gen`
($HRL, default target/release/hrl).
"""

import argparse
import json
import math
import os
import random
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict

HARNESSES = ["zero-shot", "program", "python-tool", "reason"]
LEVELS = [1, 2]
Z = 1.959963984540054


def wilson(k, n):
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    d = 1 + Z * Z / n
    c = (p + Z * Z / (2 * n)) / d
    h = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n)) / d
    return (max(0.0, c - h), min(1.0, c + h))


def bootstrap(xs, reps=2000, seed=0):
    rng = random.Random(seed)
    n = len(xs)
    means = sorted(sum(rng.choice(xs) for _ in range(n)) / n for _ in range(reps))
    return (means[int(0.025 * reps)], means[int(0.975 * reps) - 1])


def load(path, current):
    """Last rollout per (item, sample) of the items as the families generate them now;
    checks one harness and executor per run.

    `current` maps an item id to its instance today: a rollout of an earlier
    family version (same item id, other question or gold: a retune, a reworded question)
    is skipped and counted, so a cell never mixes versions."""
    rows = {}
    stale = Counter()
    hashes, execs = set(), set()
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                r = json.loads(line)
            except json.JSONDecodeError as e:
                # A run killed mid-write leaves a partial last line; anything else is real.
                print(f"{path}:{lineno}: skipped unreadable line ({e})", file=sys.stderr)
                continue
            inst = current.get(r["item_id"])
            if inst is None or (inst["question"], inst["answer"]) != (r["question"], r["gold"]):
                stale[r["group"]] += 1
                continue
            hashes.add(r["harness_hash"])
            execs.add(r["executor"]["hash"])
            rows[(r["item_id"], r["sample"])] = r
    if stale:
        print(
            f"{path}: skipped rollouts of earlier family versions: "
            + ", ".join(f"{g} {k}" for g, k in sorted(stale.items())),
            file=sys.stderr,
        )
    if len(hashes) > 1 or len(execs) > 1:
        sys.exit(f"{path}: rollouts of {len(hashes)} harnesses / {len(execs)} executors mixed")
    return list(rows.values())


class Cell:
    def __init__(self, rollouts):
        self.rollouts = rollouts
        self.scores = [r["score"] for r in rollouts]
        self.n = len(self.scores)
        self.mean = sum(self.scores) / self.n if self.n else None
        self.free = sum(1 for r in rollouts if r["executor_free"])
        self.failures = Counter(r["failure"] for r in rollouts if r["failure"])
        if not self.n:
            self.ci = None
        elif all(s in (0.0, 1.0) for s in self.scores):
            self.ci = wilson(sum(self.scores), self.n)
        else:
            self.ci = bootstrap(self.scores)

    def text(self, expect=0):
        if not self.n:
            return "not run"
        lo, hi = self.ci
        free = f", free {self.free}" if self.free else ""
        part = f" of {expect} (partial)" if self.n < expect else ""
        return f"{self.mean:.2f} [{lo:.2f}, {hi:.2f}] n={self.n}{part}{free}"

    def json(self):
        return {
            "n": self.n,
            "mean": self.mean,
            "ci95": self.ci,
            "executor_free": self.free,
            "failures": dict(self.failures),
        }


def verdict(level1, expect):
    """The rule of issue 7 for one family: `level1` maps each seed harness to the
    (n, mean) of its level-1 cell (n = 0: not run). Returns ("pass" | "fail" |
    "undecided", reasons). Also used by calibration_merge.py."""
    measured = [h for h in HARNESSES if level1[h][0]]
    above = [h for h in measured if level1[h][1] > 0]
    reasons = []
    if not above:
        # "0 under every seed harness" needs every cell complete: a partial cell
        # (an interrupted run) could still score above 0.
        if all(level1[h][0] >= expect for h in HARNESSES):
            reasons.append("level 1 scores 0 under every seed harness")
        else:
            reasons.append(None)
    zn, zmean = level1["zero-shot"]
    if zn and zmean >= 0.9:
        reasons.append(f"zero-shot level 1 scores {zmean:.2f} >= 0.9")
    elif not zn:
        reasons.append(None)
    if any(r for r in reasons):
        return ("fail", [r for r in reasons if r])
    if None in reasons:
        return ("undecided", [])
    return ("pass", [])


def hrl_binary():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return os.environ.get("HRL") or os.path.join(root, "target", "release", "hrl")


def current_items(level, n, seed):
    """Item id -> instance, for every family's instances as generated now."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "items.jsonl")
        subprocess.check_call(
            [hrl_binary(), "tasks", "gen", "all", "--n", str(n), "--seed", str(seed),
             "--level", str(level), "--out", out],
            stdout=subprocess.DEVNULL,
        )
        with open(out) as f:
            return {d["id"]: d for d in map(json.loads, f)}


def untagged_right(cell, items):
    """Of a cell's `no_answer` rollouts (a reply without <answer> tags), how many the
    family's verifier accepts when the reply's last non-empty line is read as the answer
    (`hrl tasks score --lenient`), and how many hold the gold text verbatim (golds of 4
    characters or more): a 0 that is the seed harness's format, not the task."""
    untagged = [r for r in cell.rollouts if r["failure"] == "no_answer"]
    verbatim = sum(1 for r in untagged if len(r["gold"]) >= 4 and r["gold"] in (r["response"] or ""))
    lines = [
        json.dumps({**items[r["item_id"]], "response": r["response"] or ""})
        for r in untagged
    ]
    if not lines:
        return 0, 0, 0
    out = subprocess.run(
        [hrl_binary(), "tasks", "score", "--lenient", "-"],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    right = sum(1 for line in out.splitlines() if line and json.loads(line)["score"] >= 1.0)
    return right, verbatim, len(lines)


def family_versions():
    """Family name -> version, as the binary generates them (recorded in --json)."""
    out = subprocess.check_output([hrl_binary(), "tasks", "list", "--json"])
    return {f["name"]: f["version"] for f in json.loads(out)}


def families(arg):
    if arg:
        text = sys.stdin.read() if arg == "-" else open(arg).read()
        return [f for f in text.split() if f]
    return sorted(family_versions())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", action="append", help="a run directory (repeatable); default /work/runs/calib")
    ap.add_argument("--families", help="file (or -) with family names; default: hrl tasks list")
    ap.add_argument("--expect", type=int, default=24, help="instances per cell of the grid")
    ap.add_argument("--seed", type=int, default=0, help="the grid's instance seed")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    fams = families(args.families)
    cells = {}
    runs = {}
    current = {lv: current_items(lv, args.expect, args.seed) for lv in LEVELS}
    for h in HARNESSES:
        for lv in LEVELS:
            merged = {}
            for d in args.runs or ["/work/runs/calib"]:
                path = os.path.join(d, f"{h}-L{lv}", "rollouts.jsonl")
                if os.path.exists(path):
                    for r in load(path, current[lv]):
                        merged[(r["item_id"], r["sample"])] = r
            rows = list(merged.values())
            ids = {(r["harness_hash"], r["executor"]["hash"], r["config_hash"]) for r in rows}
            if len(ids) > 1:
                sys.exit(f"{h}-L{lv}: rollouts of {len(ids)} (harness, executor, config) identities across --runs")
            by_fam = defaultdict(list)
            for r in rows:
                if r.get("level") == lv:
                    by_fam[r["group"]].append(r)
            if rows:
                runs[f"{h}-L{lv}"] = {
                    "rollouts": len(rows),
                    "harness_hash": rows[0]["harness_hash"],
                    "executor": rows[0]["executor"],
                    "config_hash": rows[0]["config_hash"],
                    "seconds_in_rollouts": sum(r["wall_ms"] for r in rows) / 1000,
                }
            for fam in fams:
                cells[(fam, h, lv)] = Cell(by_fam.get(fam, []))

    verdicts = {
        fam: verdict({h: (cells[(fam, h, 1)].n, cells[(fam, h, 1)].mean) for h in HARNESSES}, args.expect)
        for fam in fams
    }

    # A family that no seed harness lifts above 0: is it the task or the answer tags?
    untagged = {}
    for fam, (v, _) in verdicts.items():
        if v == "pass":
            continue
        for h in ("zero-shot", "python-tool", "reason"):
            c = cells[(fam, h, 1)]
            if c.n and c.mean == 0 and c.failures.get("no_answer"):
                untagged[(fam, h)] = untagged_right(c, current[1])

    # Items of a cell that repeat a question (a small level's instance space): the
    # intervals treat the 24 as independent, which repeated items are not.
    distinct = {}
    for lv in LEVELS:
        qs = defaultdict(list)
        for d in current[lv].values():
            qs[d["family"]].append(d["question"])
        for fam, q in qs.items():
            if fam in fams and len(set(q)) < len(q):
                distinct[(fam, lv)] = (len(set(q)), len(q))

    if args.json:
        json.dump(
            {
                "family_versions": {f: v for f, v in family_versions().items() if f in fams},
                "runs": runs,
                "repeated_questions": [
                    {"family": f, "level": lv, "distinct": k, "items": n}
                    for (f, lv), (k, n) in sorted(distinct.items())
                ],
                "cells": [
                    {"family": f, "harness": h, "level": lv, **cells[(f, h, lv)].json()}
                    for (f, h, lv) in sorted(cells)
                ],
                "rule": {f: {"verdict": v, "reasons": r} for f, (v, r) in verdicts.items()},
                "untagged_right": [
                    {"family": f, "harness": h, "right": k, "gold_verbatim": g, "untagged": n}
                    for (f, h), (k, g, n) in sorted(untagged.items())
                ],
            },
            sys.stdout,
            indent=1,
        )
        print()
        return

    for lv in LEVELS:
        print(f"### Level {lv}\n")
        print("| family | " + " | ".join(HARNESSES) + (" | rule |" if lv == 1 else ""))
        print("| --- " * (len(HARNESSES) + 1 + (lv == 1)) + "|")
        for fam in fams:
            row = [cells[(fam, h, lv)].text(args.expect) for h in HARNESSES]
            extra = ""
            if lv == 1:
                v, r = verdicts[fam]
                extra = f" {v}{': ' + '; '.join(r) if r else ''} |"
            print(f"| {fam} | " + " | ".join(row) + " |" + extra)
        print()
        for h in HARNESSES:
            rs = [cells[(f, h, lv)] for f in fams]
            n = sum(c.n for c in rs)
            if n:
                mean = sum(sum(c.scores) for c in rs) / n
                free = sum(c.free for c in rs)
                fail = Counter()
                for c in rs:
                    fail.update(c.failures)
                top = ", ".join(f"{k} {v}" for k, v in fail.most_common(4))
                print(
                    f"- {h}, level {lv}: {n} rollouts over {sum(1 for c in rs if c.n)} "
                    f"families, mean {mean:.3f}, executor-free {free} ({free / n:.1%}); "
                    f"failures: {top}"
                )
            else:
                print(f"- {h}, level {lv}: not run")
        print()

    counts = Counter(v for v, _ in verdicts.values())
    decided = counts["pass"] + counts["fail"]
    print(
        f"Rule (level 1 > 0 under some seed harness and < 0.9 under zero-shot): "
        f"{counts['pass']} pass, {counts['fail']} fail, {counts['undecided']} undecided "
        f"of {len(fams)} families"
        + (f"; {counts['pass'] / decided:.0%} of the decided pass" if decided else "")
        + f"; goal: >= 80% of all {len(fams)} families ({math.ceil(0.8 * len(fams))})."
    )
    for fam, (v, r) in verdicts.items():
        if v == "fail":
            print(f"- fails: {fam}: {'; '.join(r)}")
    for (fam, h), (k, g, n) in sorted(untagged.items()):
        print(
            f"- {fam}, {h}, level 1: {n} replies without <answer> tags; {k} right read "
            f"leniently (`hrl tasks score --lenient`: the last non-empty line), {g} hold "
            f"the gold verbatim"
        )
    if distinct:
        print(
            "- items that repeat a question (distinct of the cell's items; the intervals "
            "treat items as independent): "
            + ", ".join(f"{f} L{lv} {k} of {n}" for (f, lv), (k, n) in sorted(distinct.items()))
        )
    for name, info in runs.items():
        print(
            f"- run {name}: {info['rollouts']} rollouts, harness {info['harness_hash'][:12]}, "
            f"executor {info['executor']['hash'][:12]}"
        )


if __name__ == "__main__":
    main()
