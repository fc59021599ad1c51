"""Differential test of `hrl lcb grade` against LiveCodeBench's reference runner.

Run through scripts/lcb_differential.sh, which installs the reference (the
`nvidia-livecodebench` wheel, with numpy and tqdm) into a private virtual environment and
runs this file with that environment's Python.

1. Writes the corpus of scripts/lcb_differential_corpus.py as LiveCodeBench files
   (OUT/data/test.jsonl) and a solutions file (OUT/solutions.jsonl).
2. Reference: a subprocess (standard input and output on /dev/null, as a batch job) calls
   the wheel's `evaluate_generations` with one generation per entry, exactly as
   `codegen_metrics` does after linearising: a process pool whose workers run
   `check_correctness`, i.e. `testing_util.run_test` in a fresh `multiprocessing.Process`
   per solution. Only the package's evaluation modules are imported (its package
   `__init__` pulls in dataset and API-client dependencies the grading does not use).
3. hrl: `hrl lcb grade` over the same files, once per semantics (judge, reference).
4. Compares, per solution, pass/fail and the whole result list (1 for a passed test, then
   the code of the first failure), and writes OUT/report.md and OUT/details.json.

Exit status 0 only when reference semantics agree with the reference runner on every
solution and every judge-semantics disagreement is one the corpus declares (and every
declared one happens).
"""
import argparse
import importlib
import json
import os
import subprocess
import sys
import time
import types

HERE = os.path.dirname(os.path.abspath(__file__))


def check_install(version):
    try:
        from importlib.metadata import version as installed
        ok = installed("nvidia-livecodebench") == version
        import numpy  # noqa: F401
        import tqdm  # noqa: F401
    except Exception:  # noqa: BLE001
        return 1
    return 0 if ok else 1


def reference_modules():
    """Import livecodebench.evaluation.compute_code_generation_metrics without running the
    package __init__ files (they import unrelated dependencies)."""
    import sysconfig
    site = sysconfig.get_paths()["purelib"]
    for name in ("livecodebench", "livecodebench.evaluation"):
        if name not in sys.modules:
            m = types.ModuleType(name)
            m.__path__ = [os.path.join(site, *name.split("."))]
            sys.modules[name] = m
    return importlib.import_module("livecodebench.evaluation.compute_code_generation_metrics")


def reference_eval(spec_path, out_path):
    """Child mode: grade every entry of spec_path with the reference, write out_path."""
    with open(spec_path, encoding="utf-8") as f:
        spec = json.load(f)
    metrics = reference_modules()
    samples = [{"input_output": json.dumps(s)} for s in spec["samples"]]
    generations = [[c] for c in spec["codes"]]
    results, metadata = metrics.evaluate_generations(
        samples, generations, debug=False, num_process_evaluate=spec["jobs"],
        timeout=spec["timeout"])
    out = []
    for i in range(len(samples)):
        res = [(1 if r else -2) if isinstance(r, bool) else int(r) for r in results[i][0]]
        out.append({"codes": res, "metadata": metadata[i][0]})
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(out, f)


def write_corpus(out):
    sys.path.insert(0, HERE)
    import lcb_differential_corpus as corpus
    rows, sols = corpus.build()
    os.makedirs(os.path.join(out, "data"), exist_ok=True)
    with open(os.path.join(out, "data", "test.jsonl"), "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    with open(os.path.join(out, "solutions.jsonl"), "w", encoding="utf-8") as f:
        for s in sols:
            f.write(json.dumps({"question_id": s["question_id"], "code": s["code"]}) + "\n")
    return rows, sols, corpus.DIFFERENCES


def run_reference(out, rows, sols, timeout, jobs):
    by_id = {r["question_id"]: r for r in rows}
    samples, codes = [], []
    for s in sols:
        r = by_id[s["question_id"]]
        tests = json.loads(r["public_test_cases"]) + json.loads(r["private_test_cases"])
        meta = json.loads(r["metadata"])
        samples.append({"inputs": [t["input"] for t in tests],
                        "outputs": [t["output"] for t in tests],
                        "fn_name": meta.get("func_name")})
        codes.append(s["code"])
    spec_path = os.path.join(out, "reference-spec.json")
    res_path = os.path.join(out, "reference-results.json")
    with open(spec_path, "w", encoding="utf-8") as f:
        json.dump({"samples": samples, "codes": codes, "timeout": timeout, "jobs": jobs}, f)
    with open(os.path.join(out, "reference.log"), "wb") as log:
        subprocess.run([sys.executable, os.path.abspath(__file__), "--reference-eval", spec_path, res_path],
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log, check=True)
    with open(res_path, encoding="utf-8") as f:
        return json.load(f)


def run_hrl(hrl, out, semantics, timeout, jobs, sols):
    path = os.path.join(out, f"hrl-{semantics}.json")
    cmd = [hrl, "lcb", "grade", os.path.join(out, "data"), "--solutions",
           os.path.join(out, "solutions.jsonl"), "--quiet", "--k", "1", "--timeout", str(timeout),
           "--jobs", str(jobs), "--semantics", semantics, "--out", path]
    p = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if p.returncode not in (0, 1) or not os.path.exists(path):
        sys.exit(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr.decode(errors='replace')}")
    with open(path, encoding="utf-8") as f:
        graded = json.load(f)
    if graded.get("semantics") != semantics:
        sys.exit(f"{path}: semantics {graded.get('semantics')!r}, expected {semantics!r}")
    if graded["errors"]:
        sys.exit(f"hrl could not grade: {graded['errors']}")
    # Samples come back in input order; index them by (question_id, k-th sample).
    got = {(s["question_id"], s["sample"]): s for s in graded["samples"]}
    seen, out_list = {}, []
    for s in sols:
        k = seen.get(s["question_id"], 0)
        seen[s["question_id"]] = k + 1
        g = got[(s["question_id"], k)]
        out_list.append({"codes": [r["code"] for r in g["results"]], "passed": g["passed"],
                         "message": next((r.get("message", "") for r in g["results"] if r["code"] != 1), "")})
    return out_list


def passed(codes):
    return all(c > 0 for c in codes)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check-install", metavar="VERSION")
    ap.add_argument("--reference-eval", nargs=2, metavar=("SPEC", "OUT"))
    ap.add_argument("--hrl", default="target/release/hrl")
    ap.add_argument("--timeout", type=int, default=6)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", default="target/lcb_differential")
    a = ap.parse_args()
    if a.check_install:
        sys.exit(check_install(a.check_install))
    if a.reference_eval:
        reference_eval(*a.reference_eval)
        return
    os.makedirs(a.out, exist_ok=True)
    rows, sols, differences = write_corpus(a.out)
    timings = {}
    t = time.monotonic()
    ref = run_reference(a.out, rows, sols, a.timeout, a.jobs)
    timings["reference runner"] = time.monotonic() - t
    modes = {}
    for semantics in ("judge", "reference"):
        t = time.monotonic()
        modes[semantics] = run_hrl(a.hrl, a.out, semantics, a.timeout, a.jobs, sols)
        timings[f"hrl {semantics}"] = time.monotonic() - t

    failures = []
    details = []
    summary = {}
    for semantics, got in modes.items():
        verdict_agree = lists_agree = 0
        unexplained, unexercised = [], []
        for s, r, g in zip(sols, ref, got):
            same_verdict = passed(r["codes"]) == g["passed"]
            same_list = r["codes"] == g["codes"]
            verdict_agree += same_verdict
            lists_agree += same_list
            declared = s["differs"] if semantics == "judge" else None
            if not same_list and declared is None:
                unexplained.append(s)
            if same_list and declared is not None:
                unexercised.append(s)
            details.append({"semantics": semantics, "question_id": s["question_id"], "name": s["name"],
                            "reference": r["codes"], "hrl": g["codes"], "declared": declared,
                            "hrl_message": g["message"],
                            "reference_message": r["metadata"].get("error_message", "")})
        summary[semantics] = {
            "solutions": len(sols), "verdicts_agree": verdict_agree, "lists_agree": lists_agree,
            "unexplained": [f"{s['question_id']}/{s['name']}" for s in unexplained],
            "declared_but_agree": [f"{s['question_id']}/{s['name']}" for s in unexercised],
        }
        for s in unexplained:
            failures.append(f"{semantics}: {s['question_id']}/{s['name']} disagrees without a declared difference")
        for s in unexercised:
            failures.append(f"{semantics}: {s['question_id']}/{s['name']} declares {s['differs']} but agrees")

    n = len(sols)
    lines = [f"Corpus: {len(rows)} problems, {n} solutions; per-test timeout {a.timeout} s; jobs {a.jobs}.", "",
             "| hrl semantics | pass/fail agrees | result list agrees | disagreements not declared |",
             "| --- | --- | --- | --- |"]
    for semantics, s in summary.items():
        lines.append(f"| {semantics} | {s['verdicts_agree']}/{n} ({100 * s['verdicts_agree'] / n:.1f}%) "
                     f"| {s['lists_agree']}/{n} ({100 * s['lists_agree'] / n:.1f}%) | {len(s['unexplained'])} |")
    lines += ["", "Judge-semantics disagreements by declared difference:", ""]
    by_diff = {}
    for d in details:
        if d["semantics"] == "judge" and d["reference"] != d["hrl"]:
            by_diff.setdefault(d["declared"] or "NOT DECLARED", []).append(d)
    for diff in differences + ["NOT DECLARED"]:
        for d in by_diff.get(diff, []):
            lines.append(f"- `{diff}` {d['question_id']}/{d['name']}: reference {d['reference']}, "
                         f"judge {d['hrl']}")
    lines += ["", "Wall time: " + ", ".join(f"{k} {v:.0f} s" for k, v in timings.items())]
    report = "\n".join(lines) + "\n"
    with open(os.path.join(a.out, "report.md"), "w", encoding="utf-8") as f:
        f.write(report)
    with open(os.path.join(a.out, "details.json"), "w", encoding="utf-8") as f:
        json.dump({"summary": summary, "timings": timings, "details": details}, f, indent=1)
    print(report)
    if summary["reference"]["lists_agree"] != n:
        for d in details:
            if d["semantics"] == "reference" and d["reference"] != d["hrl"]:
                failures.append(f"reference: {d['question_id']}/{d['name']}: reference runner "
                                f"{d['reference']}, hrl {d['hrl']} ({d['hrl_message'][:120]})")
    for f in failures:
        print("FAIL", f, file=sys.stderr)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
