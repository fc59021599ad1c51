#!/usr/bin/env python3
"""Trial of easier level-1 forms of three families before changing their generators
(calibration, issues 7 and 8): writes the family's own level-1 instances, changed, as a
JSONL task file for `hrl run --tasks jsonl:PATH`, scored by the family's verifier.

    for f in jugs word_ladder pool_matrix; do hrl tasks gen $f --level 1 --n 24 --seed 0; done > base.jsonl
    scripts/trial_l1_retunes.py base.jsonl > trial.jsonl
    hrl run --harness suites/harnesses/zero-shot.toml --tasks jsonl:trial.jsonl \\
        --executor llama:qwen2.5-coder-0.5b,n_parallel=16,ctx=4096,threads=1 --out DIR

The changes (each makes the task smaller, never different):
- jugs: "at most 12 moves" becomes "at most 3 moves" (level 1's shortest solutions
  have 2 or 3), a bound that says where to stop;
- word_ladder: the word list keeps the ladder and one distractor (level 1 has four);
- pool_matrix: the 4x4 matrix keeps its top two rows, a 2x4 matrix pooled to one row
  of two values (the gold is recomputed here and checked by the family's verifier).
Item ids get level tag `P1` so that they never mix with the real level 1's.
Only the Python standard library is used.
"""

import json
import sys


def change(r):
    f, m = r["family"], r["metadata"]
    if f == "jugs":
        assert "at most 12 moves" in r["question"]
        r["question"] = r["question"].replace("at most 12 moves", "at most 3 moves")
        m["max_moves"] = 3
    elif f == "word_ladder":
        ladder = [w.strip() for w in r["answer"].split(",")]
        others = [w for w in m["words"] if w not in ladder]
        keep = sorted(ladder + others[:1])
        old = ", ".join(m["words"])
        assert old in r["question"]
        r["question"] = r["question"].replace(old, ", ".join(keep))
        m["words"] = keep
    elif f == "pool_matrix":
        top = m["matrix"][:2]
        old = "\n".join(" ".join(map(str, row)) for row in m["matrix"])
        assert old in r["question"] and "this 4x4 matrix" in r["question"]
        new = "\n".join(" ".join(map(str, row)) for row in top)
        r["question"] = r["question"].replace(old, new).replace("this 4x4 matrix", "this 2x4 matrix")
        m["matrix"] = top
        r["answer"] = " ".join(
            str(max(top[i][j] for i in range(2) for j in range(c, c + 2))) for c in (0, 2)
        )
    else:
        raise SystemExit(f"{r['id']}: no trial change for family {f}")
    r["id"] = r["id"].replace("/L1/", "/P1/")
    return r


def main():
    src = open(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1] != "-" else sys.stdin
    for line in src:
        if line.strip():
            print(json.dumps(change(json.loads(line))))


if __name__ == "__main__":
    main()
