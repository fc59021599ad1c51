"""Measure reasoning-gym generation throughput in-process (helper of
compare_reasoning_gym.sh).

Usage: rg_throughput.py names N SEED [MAX_SECONDS]  -> one JSON line per family
       rg_throughput.py --registry          -> JSON list of reasoning-gym family names
       rg_throughput.py --version           -> installed reasoning-gym version

For each family: build the dataset with its default configuration, `size=N` and the
given seed, then materialise the items in order (`ds[i]`), stopping early once MAX_SECONDS (default
10) have passed so very slow families finish; the rate is items materialised divided by
the time spent, and `n` reports how many were. The timed span covers dataset
construction and item generation, nothing else (no process start-up, no import). A small warm-up dataset (different seed) is materialised first so lazily
loaded data files are not charged to the measurement. A family that fails is reported
with an `error` field instead of a rate.
"""

import importlib.metadata
import json
import sys
import time


def registry():
    from reasoning_gym.factory import DATASETS

    return sorted(DATASETS)


def measure(name, n, seed, max_seconds):
    import reasoning_gym

    warm = reasoning_gym.create_dataset(name, size=min(n, 5), seed=seed + 1)
    for i in range(len(warm)):
        warm[i]
    start = time.perf_counter()
    ds = reasoning_gym.create_dataset(name, size=n, seed=seed)
    items = []
    for i in range(n):
        items.append(ds[i])
        if time.perf_counter() - start > max_seconds:
            break
    seconds = time.perf_counter() - start
    done = len(items)
    return {"family": name, "n": done, "seed": seed, "seconds": seconds, "items_per_sec": done / seconds}


def main(argv):
    if argv[1:] == ["--registry"]:
        print(json.dumps(registry()))
        return 0
    if argv[1:] == ["--version"]:
        print(importlib.metadata.version("reasoning-gym"))
        return 0
    if len(argv) not in (4, 5):
        print(__doc__, file=sys.stderr)
        return 2
    names = [x for x in argv[1].split(",") if x]
    n, seed = int(argv[2]), int(argv[3])
    max_seconds = float(argv[4]) if len(argv) == 5 else 10.0
    for name in names:
        try:
            row = measure(name, n, seed, max_seconds)
        except Exception as e:  # report and continue with the next family
            row = {"family": name, "error": f"{type(e).__name__}: {e}"}
        print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
