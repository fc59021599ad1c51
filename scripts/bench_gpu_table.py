#!/usr/bin/env python3
"""The Markdown table of scripts/bench_gpu.sh, from the files it wrote in WORK.

    python3 scripts/bench_gpu_table.py WORK

Reads WORK/meta.json, WORK/doctor.json and, for each side (cpu, gpu) present,
SIDE/times.tsv, SIDE/{zero-shot,program,humaneval}/summary.json and rollouts.jsonl, and
SIDE/throughput.jsonl. A side without its files is printed as not measured. Checks that
the GPU side's executor identity names a device with every layer offloaded and the CPU
side's names none; exits with status 1 (after printing) when one does not.
"""

import json
import sys
from pathlib import Path

WORKLOADS = [("zero-shot", "zero-shot"), ("program", "program"), ("humaneval", "HumanEval")]


def load_json(path):
    with open(path) as f:
        return json.load(f)


def read_side(work, side):
    d = work / side
    if not (d / "times.tsv").is_file():
        return None
    out = {"times": {}, "runs": {}, "throughput": []}
    for line in (d / "times.tsv").read_text().splitlines():
        if line.strip():
            name, secs = line.split("\t")
            out["times"][name] = float(secs)
    for name, _ in WORKLOADS:
        run = d / name
        if (run / "summary.json").is_file():
            rollouts = {}
            with open(run / "rollouts.jsonl") as f:
                for line in f:
                    if line.strip():
                        r = json.loads(line)
                        rollouts[(r["item_id"], r.get("sample", 0))] = r
            out["runs"][name] = {"summary": load_json(run / "summary.json"), "rollouts": rollouts}
    tp = d / "throughput.jsonl"
    if tp.is_file():
        out["throughput"] = [json.loads(l) for l in tp.read_text().splitlines() if l.startswith("{")]
    return out


def device_of(side):
    """The executor identity's device record of a side's first run (None: no device)."""
    for name, _ in WORKLOADS:
        run = side["runs"].get(name)
        if run:
            return run["summary"]["executor"].get("device")
    return None


def device_text(device):
    if device is None:
        return "no GPU backend in the identity (CPU build)"
    if not device["devices"]:
        return f"{device['backend']} {device['runtime']}, no device: CPU"
    return (
        f"{device['backend']} {device['runtime']}, {' + '.join(device['devices'])}, "
        f"{device['layers_offloaded']}/{device['layers_total']} layers on the GPU"
    )


def fmt(x, digits=1):
    return "—" if x is None else f"{x:.{digits}f}"


def ratio(a, b):
    return "—" if a is None or b is None or b == 0 else f"{a / b:.1f}x"


def workload_row(name, label, cpu, gpu):
    def cells(side):
        if side is None or name not in side["runs"]:
            return None, None, None, None
        s = side["runs"][name]["summary"]
        secs = side["times"].get(name)
        items = s["items"] * s.get("samples", 1)
        rate = items / secs if secs else None
        return secs, rate, s["aggregates"]["score"]["mean"], items

    cs, cr, cscore, citems = cells(cpu)
    gs, gr, gscore, gitems = cells(gpu)
    items = citems if citems is not None else gitems
    unit = "problems" if name == "humaneval" else "items"
    return (
        f"| {label}, {items} {unit} | {fmt(cs)} | {fmt(cr, 2)} | {fmt(gs)} | {fmt(gr, 2)} "
        f"| {ratio(gr, cr)} | {fmt(cscore, 3)} | {fmt(gscore, 3)} |"
    )


def text_differences(cpu, gpu, name):
    """(compared, texts differing, verdicts differing) between the two sides' rollouts."""
    a = cpu["runs"].get(name, {}).get("rollouts", {})
    b = gpu["runs"].get(name, {}).get("rollouts", {})
    keys = sorted(set(a) & set(b))
    texts = sum(1 for k in keys if a[k]["response"] != b[k]["response"])
    verdicts = sum(1 for k in keys if a[k]["score"] != b[k]["score"])
    return len(keys), texts, verdicts


def main():
    if len(sys.argv) != 2:
        print("usage: bench_gpu_table.py WORK", file=sys.stderr)
        return 2
    work = Path(sys.argv[1])
    for need in ("meta.json", "doctor.json"):
        if not (work / need).is_file():
            print(f"bench_gpu_table.py: {work / need} is missing (run scripts/bench_gpu.sh)", file=sys.stderr)
            return 2
    meta = load_json(work / "meta.json")
    doctor = load_json(work / "doctor.json")
    cpu = read_side(work, "cpu")
    gpu = read_side(work, "gpu")
    if cpu is None and gpu is None:
        print(f"bench_gpu_table.py: no measurements in {work}", file=sys.stderr)
        return 2
    load_end = (work / "load_end.txt").read_text().strip() if (work / "load_end.txt").is_file() else "?"
    problems = []
    lines = []
    title = "GPU and CPU, the same binary" if gpu else "CPU half only (no GPU measured)"
    lines.append(f"### {title}: scripts/bench_gpu.sh{' --quick' if meta.get('quick') else ''}, {meta['date']}")
    lines.append("")
    cuda = doctor.get("cuda") or {}
    gpus = doctor.get("gpus") or []
    gpu_names = "; ".join(
        f"{g['name']} (compute capability {g.get('compute_capability') or '?'}, {g['memory_total_mib']} MiB)"
        for g in gpus
    ) or "none"
    lines.append(
        f"Machine: {meta['cores']} cores ({meta['cpu']}), GPU: {gpu_names}; "
        f"CUDA runtime {cuda.get('runtime', '—')}, driver {cuda.get('driver') or 'none'}, "
        f"kernels for {' '.join(cuda.get('architectures', [])) or '—'}; "
        f"hrl {doctor['hrl']['commit']}. Load average {meta['load_start']} at the start, {load_end} at the end."
    )
    lines.append(
        f"Model {meta['model']}, greedy, --no-cache, {meta['threads']} CPU threads, "
        f"n_parallel={meta['n_parallel']}, GPU side gpu_layers={meta['gpu_layers']}; "
        f"workload: {meta['families']} x {meta['n']} (level 1, seed 0), HumanEval {meta['humaneval_n']} problems "
        f"(suites/harnesses/humaneval-maker.toml); sandbox {meta['sandbox']}."
    )
    if cpu:
        dev = device_of(cpu)
        lines.append(f"CPU side executor: {device_text(dev)}.")
        if dev is not None and dev["devices"]:
            problems.append("the CPU side's executor saw a GPU (CUDA_VISIBLE_DEVICES was not honoured)")
    if gpu:
        dev = device_of(gpu)
        lines.append(f"GPU side executor: {device_text(dev)}.")
        if dev is None or not dev["devices"] or dev["layers_offloaded"] != dev["layers_total"]:
            problems.append("the GPU side did not offload every layer to a GPU")
    lines.append("")
    lines.append("Seconds are whole `hrl run` processes (model load included); score is the mean, for HumanEval pass@1.")
    lines.append("")
    lines.append("| workload | CPU s | CPU items/s | GPU s | GPU items/s | GPU / CPU | CPU score | GPU score |")
    lines.append("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, label in WORKLOADS:
        lines.append(workload_row(name, label, cpu, gpu))
    lines.append("")
    lines.append(
        f"Generation throughput (`hrl bench-llama`, {meta['npp']} prompt and {meta['ntg']} generated tokens per sequence):"
    )
    lines.append("")
    lines.append("| sequences | CPU prompt tok/s | CPU gen tok/s | GPU prompt tok/s | GPU gen tok/s | gen GPU / CPU |")
    lines.append("| --- | --- | --- | --- | --- | --- |")
    rows = {}
    for side, data in (("cpu", cpu), ("gpu", gpu)):
        for r in (data or {}).get("throughput", []):
            rows.setdefault(r["npl"], {})[side] = r
    for npl in sorted(rows):
        c = rows[npl].get("cpu", {})
        g = rows[npl].get("gpu", {})
        lines.append(
            f"| {npl} | {fmt(c.get('pp_tok_s'))} | {fmt(c.get('tg_tok_s'))} | {fmt(g.get('pp_tok_s'))} "
            f"| {fmt(g.get('tg_tok_s'))} | {ratio(g.get('tg_tok_s'), c.get('tg_tok_s'))} |"
        )
    lines.append("")
    if cpu and gpu:
        for name, label in WORKLOADS:
            n, texts, verdicts = text_differences(cpu, gpu, name)
            if n:
                lines.append(
                    f"{label}: {texts} of {n} final texts differ between CPU and GPU, "
                    f"{verdicts} with a different score."
                )
    else:
        lines.append("GPU: not measured (--cpu-only); no GPU figure exists for this run.")
    for p in problems:
        lines.append(f"**Check failed: {p}.**")
    print("\n".join(lines))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
