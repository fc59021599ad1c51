#!/usr/bin/env python3
"""The whole calibration grid (issues 7 and 8) from the JSON tables of several passes.

    scripts/calibration_merge.py [--since FAMILY=FILE]... [--json] FILE...

Each FILE is a `calibration_table.py --json` table (oldest first). The run directories
behind older tables may be gone, so the published grid is merged from the tables: a
cell (family, harness, level) with rollouts in a later FILE replaces the same cell of an
earlier one. `--since FAMILY=FILE` drops FAMILY's cells from every FILE listed before
FILE (a family changed in that pass: its older cells measured another version), and the
script fails when a family's version in a table that records versions
(`family_versions`) differs from the newest such table, unless such a flag drops it.
One harness hash and executor per harness is checked across the tables (the settings
hash of each table is printed: it gained the sandbox interpreter on 2026-12-05).

Prints, per level, a Markdown table (family; each seed harness's mean, 95 % interval
and n; the table the cell comes from, as a letter), then the rule of issue 7 (level 1
above 0 under some seed harness and below 0.9 under zero-shot) over the merged cells,
and which cells of the required grid (zero-shot, program and python-tool at levels 1
and 2, 24 instances each) are missing. `--json` prints the merged cells with their
sources instead. Only the Python standard library is used.
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from calibration_table import HARNESSES, verdict  # noqa: E402  (one rule for both scripts)

REQUIRED = ["zero-shot", "program", "python-tool"]
LEVELS = [1, 2]
EXPECT = 24


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--since", action="append", default=[], metavar="FAMILY=FILE")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    names = [os.path.basename(f) for f in args.files]
    since = {}
    for s in args.since:
        fam, _, f = s.partition("=")
        if os.path.basename(f) not in names:
            sys.exit(f"--since {s}: {f} is not one of the tables")
        since[fam] = names.index(os.path.basename(f))

    tables = []
    for f in args.files:
        with open(f) as fh:
            t = json.load(fh)
        if "cells" not in t:
            sys.exit(f"{f}: not a calibration_table.py --json table (no `cells`)")
        tables.append(t)

    # Family versions: the newest table that records them is the reference.
    versioned = [i for i, t in enumerate(tables) if "family_versions" in t]
    current = tables[versioned[-1]]["family_versions"] if versioned else {}
    for i in versioned:
        for fam, v in tables[i]["family_versions"].items():
            if current.get(fam) != v and since.get(fam, -1) <= i:
                sys.exit(
                    f"{names[i]}: {fam} is version {v}, the newest table has "
                    f"{current.get(fam)}; give --since {fam}=<the table of the change>"
                )

    # One harness and executor identity per harness across the tables. The settings
    # hash is listed, not compared: it gained the sandbox interpreter's identity on
    # 2026-12-05, so older tables carry another one for the same settings.
    ident, settings = {}, {}
    for i, t in enumerate(tables):
        for cell, run in t.get("runs", {}).items():
            harness = cell.rsplit("-L", 1)[0]
            key = (run["harness_hash"], run["executor"]["hash"])
            if ident.setdefault(harness, (key, names[i]))[0] != key:
                sys.exit(
                    f"{names[i]}: {cell} ran harness/executor {key}, "
                    f"{ident[harness][1]} ran {ident[harness][0]}"
                )
            settings.setdefault(names[i], set()).add(run.get("config_hash"))

    merged, dropped = {}, []
    for i, t in enumerate(tables):
        for c in t["cells"]:
            if not c.get("n"):
                continue
            key = (c["family"], c["harness"], c["level"])
            if since.get(c["family"], 0) > i:
                dropped.append((names[i],) + key)
                continue
            merged[key] = dict(c, source=names[i])

    families = sorted(current) if current else sorted({k[0] for k in merged})
    if args.json:
        out = {
            "tables": names,
            "settings_hashes": {n: sorted(v) for n, v in settings.items()},
            "since": {f: names[i] for f, i in since.items()},
            "family_versions": current,
            "cells": [merged[k] for k in sorted(merged)],
            "rule": rule(families, merged),
            "missing": missing(families, merged),
        }
        json.dump(out, sys.stdout, indent=1)
        print()
        return

    letter = {n: chr(ord("a") + i) for i, n in enumerate(names)}
    print("Tables: " + "; ".join(
        f"({letter[n]}) `{n}` (settings {', '.join(sorted(settings.get(n, [])))})" for n in names))
    if dropped:
        print(f"\nDropped as an earlier version's: {len(dropped)} cells "
              + ", ".join(sorted({f"{d[1]} from ({letter[d[0]]})" for d in dropped})))
    verdicts = rule(families, merged)
    for level in LEVELS:
        print(f"\n### Level {level}\n")
        head = "| family | " + " | ".join(HARNESSES) + (" | rule |" if level == 1 else " |")
        print(head)
        print("| --- " * (len(HARNESSES) + 1 + (level == 1)) + "|")
        for fam in families:
            cells = []
            for h in HARNESSES:
                c = merged.get((fam, h, level))
                if c is None:
                    cells.append("not run")
                    continue
                lo, hi = c["ci95"]
                part = "" if c["n"] >= EXPECT else " (partial)"
                cells.append(
                    f"{c['mean']:.2f} [{lo:.2f}, {hi:.2f}] n={c['n']}{part} ({letter[c['source']]})"
                )
            tail = f" | {verdicts[fam]} |" if level == 1 else " |"
            print(f"| {fam} | " + " | ".join(cells) + tail)
    passing = sum(v == "pass" for v in verdicts.values())
    failing = sum(v.startswith("fail") for v in verdicts.values())
    need = -(-8 * len(families) // 10)
    print(
        f"\nRule (level 1 > 0 under some seed harness and < 0.9 under zero-shot): "
        f"{passing} pass, {failing} fail, {len(families) - passing - failing} undecided "
        f"of {len(families)}; goal >= 80 % ({need})."
    )
    miss = missing(families, merged)
    print(
        "Required grid (zero-shot, program, python-tool x levels 1, 2 x "
        f"{EXPECT} instances): "
        + ("complete." if not miss else f"{len(miss)} cells missing or partial: "
           + ", ".join(f"{f} {h} L{l}" for f, h, l in miss))
    )


def rule(families, merged):
    """The verdict of calibration_table.py's rule on the merged level-1 cells."""
    out = {}
    for fam in families:
        cells = {h: merged.get((fam, h, 1)) for h in HARNESSES}
        v, reasons = verdict({h: (c["n"], c["mean"]) if c else (0, None) for h, c in cells.items()}, EXPECT)
        out[fam] = f"{v}: {'; '.join(reasons)}" if reasons else v
    return out


def missing(families, merged):
    return [
        (f, h, l)
        for f in families
        for l in LEVELS
        for h in REQUIRED
        if (f, h, l) not in merged or merged[(f, h, l)]["n"] < EXPECT
    ]


if __name__ == "__main__":
    main()
