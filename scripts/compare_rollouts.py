#!/usr/bin/env python3
"""Compare two `hrl run` directories item by item.

Usage: scripts/compare_rollouts.py DIR_A DIR_B

For every item both runs have finished (sample 0), reports whether the final response
text and the score agree, and lists the items that differ. Exit status 1 when any
common item differs, else 0.
"""
import json
import sys


def load(d):
    out = {}
    with open(f"{d}/rollouts.jsonl") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            try:
                r = json.loads(line)
            except json.JSONDecodeError:
                continue  # a torn last line of a run still in progress
            if r.get("sample", 0) == 0:
                out[r["item_id"]] = r
    return out


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    a, b = load(sys.argv[1]), load(sys.argv[2])
    common = sorted(set(a) & set(b))
    text_diff = [i for i in common if a[i]["response"] != b[i]["response"]]
    score_diff = [i for i in common if a[i]["score"] != b[i]["score"]]
    pa = sum(a[i]["score"] for i in common)
    pb = sum(b[i]["score"] for i in common)
    print(f"A {sys.argv[1]}: {len(a)} items; B {sys.argv[2]}: {len(b)} items; common {len(common)}")
    print(f"common items passed: A {pa:.0f}, B {pb:.0f}")
    print(f"responses differ: {len(text_diff)}; scores differ: {len(score_diff)}")
    for i in text_diff:
        print(f"  {i}: score A {a[i]['score']} B {b[i]['score']}")
    sys.exit(1 if text_diff or score_diff else 0)


if __name__ == "__main__":
    main()
