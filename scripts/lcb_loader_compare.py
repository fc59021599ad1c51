#!/usr/bin/env python3
"""Side-by-side: decode and index a LiveCodeBench-format file with Python's standard
library (what the reference loader does: json row, then private tests through
base64 -> zlib -> pickle.loads -> json) and with `hrl lcb info` (which also validates
every row and refuses any pickle that is not a plain string), in the same run.

Usage: python3 scripts/lcb_loader_compare.py [--rows 1000] [--repeat 5] [--hrl target/release/hrl]
Writes the synthetic file to a temporary directory (same shape as benches/lcb.rs:
20 tests per row, 2 public, 18 private, a third of the rows functional).
"""
import argparse
import base64
import json
import os
import pickle
import random
import statistics
import subprocess
import tempfile
import time
import zlib


def make_rows(n):
    rng = random.Random(7)
    rows = []
    for i in range(n):
        functional = i % 3 == 0
        tests = []
        for _ in range(20):
            k = rng.randrange(50, 200)
            nums = [str(rng.randrange(1_000_000)) for _ in range(k)]
            if functional:
                tests.append({"input": f"[{', '.join(nums)}]\n{k}", "output": nums[0], "testtype": "functional"})
            else:
                tests.append({"input": f"{k}\n{' '.join(nums)}\n", "output": nums[k // 2], "testtype": "stdin"})
        private = base64.b64encode(zlib.compress(pickle.dumps(json.dumps(tests[2:]), protocol=4))).decode()
        rows.append(json.dumps({
            "question_title": f"Synthetic {i}",
            "question_content": "Read numbers and print the median. " * 20,
            "platform": ["leetcode", "codeforces", "atcoder"][i % 3],
            "question_id": f"syn{i}",
            "contest_id": f"c{i // 4}",
            "contest_date": f"2024-{1 + i % 12:02d}-{1 + i % 28:02d}T00:00:00",
            "starter_code": "class Solution:\n    def f(self, a, n):\n        " if functional else "",
            "difficulty": ["easy", "medium", "hard"][i % 3],
            "public_test_cases": json.dumps(tests[:2]),
            "private_test_cases": private,
            "metadata": json.dumps({"func_name": "f"} if functional else {}),
        }))
    return rows


def python_load(path):
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            try:
                priv = json.loads(r["private_test_cases"])
            except ValueError:
                priv = json.loads(pickle.loads(zlib.decompress(base64.b64decode(r["private_test_cases"]))))
            r["private_test_cases"] = priv
            r["public_test_cases"] = json.loads(r["public_test_cases"])
            r["metadata"] = json.loads(r["metadata"])
            out.append(r)
    return {r["question_id"]: r for r in out}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--hrl", default="target/release/hrl")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "test.jsonl")
        with open(path, "w") as f:
            f.write("\n".join(make_rows(a.rows)) + "\n")
        size = os.path.getsize(path) / 2**20
        py, rs = [], []
        for _ in range(a.repeat):
            t = time.perf_counter()
            assert len(python_load(path)) == a.rows
            py.append(time.perf_counter() - t)
            t = time.perf_counter()
            subprocess.run([a.hrl, "lcb", "info", d, "--json"], check=True, stdout=subprocess.DEVNULL)
            rs.append(time.perf_counter() - t)
        mp, mr = statistics.median(py), statistics.median(rs)
        print(f"file: {a.rows} rows, {size:.1f} MiB; median of {a.repeat} runs, cpus={os.cpu_count()}")
        print(f"python stdlib (json+base64+zlib+pickle): {mp*1000:8.1f} ms  {a.rows/mp:8.0f} rows/s")
        print(f"hrl lcb info (decode+validate+index):    {mr*1000:8.1f} ms  {a.rows/mr:8.0f} rows/s")
        print(f"ratio python/hrl: {mp/mr:.2f}x")


if __name__ == "__main__":
    main()
