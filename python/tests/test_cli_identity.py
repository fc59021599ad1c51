"""The package's instances are the CLI's: for every family, level and question
variant, `create_dataset` gives entries whose JSON (`harness_rl.dumps`, the crate's
serialiser) is byte-identical to the `hrl tasks gen` line with the same seed, and which
equal the parsed line key for key, in the same key order."""

import json
from collections import defaultdict

import pytest

import harness_rl
from conftest import gen_lines, run_hrl

N = 4
SEED = 11


def by_family(lines):
    out = defaultdict(list)
    for line in lines:
        out[json.loads(line)["family"]].append(line)
    return out


def check_same(entries, lines):
    assert len(entries) == len(lines)
    for entry, line in zip(entries, lines):
        assert harness_rl.dumps(entry) == line
        parsed = json.loads(line)
        assert entry == parsed
        assert list(entry) == list(parsed)
        assert list(entry["metadata"]) == list(parsed["metadata"])


def test_the_family_list_is_the_cli_list(families):
    assert harness_rl.list_families() == families
    assert len(families) >= 50


@pytest.mark.parametrize("level", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("variant", ["0", "random"])
def test_every_family_at_every_level_matches_tasks_gen(families, level, variant):
    cli = by_family(gen_lines("all", N, SEED, level, variant))
    assert sorted(cli) == sorted(f["name"] for f in families)
    for f in families:
        v = variant if variant == "random" else int(variant)
        ds = harness_rl.create_dataset(f["name"], seed=SEED, size=N, level=level, variant=v)
        check_same(list(ds), cli[f["name"]])


@pytest.mark.parametrize("variant", [1, 2])
def test_every_template_matches_tasks_gen(families, variant):
    cli = by_family(gen_lines("all", 2, SEED, 2, variant))
    for f in families:
        ds = harness_rl.create_dataset(f["name"], seed=SEED, size=2, level=2, variant=variant)
        check_same(list(ds), cli[f["name"]])


def test_indexing_slicing_and_iteration_give_the_same_entries():
    lines = gen_lines("maze", 50, 3, 2)
    ds = harness_rl.create_dataset("maze", seed=3, size=50, level=2)
    check_same(list(ds), lines)
    check_same([ds[i] for i in range(50)], lines)
    check_same(ds[:], lines)
    check_same(ds[7:40:3], lines[7:40:3])
    check_same(ds[::-1], lines[::-1])
    check_same([ds[-1]], lines[-1:])
    # a large seed (u64) goes through unchanged
    big = 2**64 - 1
    check_same(list(harness_rl.create_dataset("gcd", seed=big, size=3)), gen_lines("gcd", 3, big, 1))


def test_composite_items_are_the_parts_streams():
    ds = harness_rl.create_composite(
        [{"name": "gcd", "weight": 3}, {"name": "maze", "weight": 1, "level": 2}, ("lcm", 1)],
        seed=5,
        size=300,
    )
    assert ds.families == ["gcd", "maze", "lcm"]
    streams = {
        "gcd": gen_lines("gcd", 300, 5, 1),
        "maze": gen_lines("maze", 300, 5, 2),
        "lcm": gen_lines("lcm", 300, 5, 1),
    }
    seen = defaultdict(int)
    for entry in ds:
        fam = entry["family"]
        assert harness_rl.dumps(entry) == streams[fam][seen[fam]]
        assert entry["index"] == seen[fam]
        seen[fam] += 1
    # weights 3:1:1 over 300 items: gcd near 180
    assert 140 < seen["gcd"] < 220, dict(seen)
    again = harness_rl.create_composite(
        [{"name": "gcd", "weight": 3}, {"name": "maze", "weight": 1, "level": 2}, ("lcm", 1)],
        seed=5,
        size=300,
    )
    assert list(again) == list(ds)


def test_the_splits_are_the_cli_splits():
    assert harness_rl.splits() == json.loads(run_hrl("tasks", "splits", "--json"))
    for s in harness_rl.splits():
        assert harness_rl.split(s["name"]) == s
        for role in s["roles"]:
            assert role["count"] == len(role["families"])
