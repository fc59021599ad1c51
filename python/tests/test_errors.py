"""Bad input raises an exception that names what is wrong; nothing a caller passes
crashes the interpreter (invalid UTF-8, lone surrogates, huge responses, deep or
cyclic structures)."""

import math
import time

import pytest

import harness_rl


def entry():
    return harness_rl.create_dataset("gcd", seed=2, size=1, level=2)[0]


def test_bad_family_level_variant_seed_size_name_themselves():
    with pytest.raises(ValueError, match="unknown family `nope`"):
        harness_rl.create_dataset("nope")
    for level in (0, 6, -1, 300):
        with pytest.raises(ValueError, match=f"level {level} is out of range"):
            harness_rl.create_dataset("gcd", level=level)
    with pytest.raises(ValueError, match="variant 99 is out of range for `gcd`"):
        harness_rl.create_dataset("gcd", variant=99)
    with pytest.raises(ValueError, match="variant 300 is out of range"):
        harness_rl.create_dataset("gcd", variant=300)
    with pytest.raises(ValueError, match="variant"):
        harness_rl.create_dataset("gcd", variant="sometimes")
    with pytest.raises(TypeError, match="variant"):
        harness_rl.create_dataset("gcd", variant=1.5)
    with pytest.raises(ValueError, match="seed must be"):
        harness_rl.create_dataset("gcd", seed=-1)
    with pytest.raises(ValueError, match="seed must be"):
        harness_rl.create_dataset("gcd", seed=2**64)
    with pytest.raises(ValueError, match="size must be"):
        harness_rl.create_dataset("gcd", size=0)
    with pytest.raises(ValueError, match="unknown family `nope`"):
        harness_rl.create_composite({"gcd": 1, "nope": 1})
    with pytest.raises(ValueError, match="weight of `gcd`"):
        harness_rl.create_composite({"gcd": 0})
    with pytest.raises(ValueError, match="weight of `gcd`"):
        harness_rl.create_composite({"gcd": math.inf})
    with pytest.raises(ValueError, match="listed twice"):
        harness_rl.create_composite([("gcd", 1), {"name": "gcd"}])
    with pytest.raises(ValueError, match="unknown key `levle`"):
        harness_rl.create_composite([{"name": "gcd", "levle": 2}])
    with pytest.raises(ValueError, match="at least one family"):
        harness_rl.create_composite([])
    with pytest.raises(ValueError, match="unknown split"):
        harness_rl.split("no-such-split")
    with pytest.raises(IndexError, match="index 5 out of range"):
        harness_rl.create_dataset("gcd", size=5)[5]


def test_malformed_entries_raise_never_score_zero():
    good = entry()
    cases = [
        ({k: v for k, v in good.items() if k != "question"}, ValueError, "missing field `question`"),
        ({k: v for k, v in good.items() if k != "metadata"}, ValueError, "missing field `metadata`"),
        (dict(good, family="nope"), ValueError, "unknown family `nope`"),
        (dict(good, level=9), ValueError, "level 9 is out of range"),
        (dict(good, level="2"), ValueError, "not an instance"),
        (dict(good, seed=-3), ValueError, "not an instance"),
        (dict(good, metadata={"x": {1, 2}}), ValueError, r"entry\.metadata\.x: a value of type set"),
        (dict(good, metadata={"x": [1.0, math.nan]}), ValueError, r"entry\.metadata\.x\[1\]: NaN is not a finite"),
        (dict(good, metadata={1: 2}), ValueError, "keys must be str"),
        (dict(good, metadata={"n": 2**70}), ValueError, "64-bit"),
        (dict(good, question="\ud800"), ValueError, r"entry\.question: .*surrogate"),
        ([good], TypeError, "entry must be a dict"),
        (None, TypeError, "entry must be a dict"),
    ]
    for bad, exc, msg in cases:
        for call in (
            lambda: harness_rl.score(bad, "<answer>1</answer>"),
            lambda: harness_rl.score_answer("1", bad),
            lambda: harness_rl.dumps(bad),
        ):
            with pytest.raises(exc, match=msg):
                call()
    with pytest.raises(ValueError, match="item 1: entry: not an instance"):
        harness_rl.score_many([good, {"response": "x"}], ["a", "b"])
    with pytest.raises(ValueError, match="2 entries but 1 responses"):
        harness_rl.score_many([good, good], ["a"])
    with pytest.raises(ValueError, match="mode `loose`"):
        harness_rl.score_many([good], ["a"], mode="loose")
    with pytest.raises(TypeError, match="the response must be str or bytes"):
        harness_rl.score(good, 42)


def test_deep_and_cyclic_structures_are_refused():
    good = entry()
    deep = {}
    cur = deep
    for _ in range(10_000):
        cur["x"] = {}
        cur = cur["x"]
    with pytest.raises(ValueError, match="nested more than 128 levels"):
        harness_rl.score(dict(good, metadata=deep), "x")
    cyc = {}
    cyc["self"] = cyc
    with pytest.raises(ValueError, match="nested more than"):
        harness_rl.score(dict(good, metadata=cyc), "x")


def test_invalid_utf8_and_surrogates_are_scored_not_fatal():
    good = entry()
    gold = good["answer"]
    tagged = f"<answer>{gold}</answer>".encode()
    assert harness_rl.score(good, tagged) == 1.0
    assert harness_rl.score(good, bytearray(tagged)) == 1.0
    assert harness_rl.score(good, b"\xff\xfe<answer>" + gold.encode() + b"</answer>\xc3\x28") == 1.0
    broken = b"\xff<answer>\xc3\x28</answer>".decode("utf-8", "surrogateescape")
    assert harness_rl.score(good, broken) == 0.0
    assert harness_rl.score_details(good, broken)["extracted"] == "\ufffd("
    assert harness_rl.extract_answer(b"<answer>\xff</answer>") == "\ufffd"
    assert harness_rl.extract_answer("<answer>a\ud800b</answer>") == "a\ufffdb"


def test_huge_responses_are_scored_quickly():
    good = entry()
    gold = good["answer"]
    filler = "x" * (64 << 20)
    start = time.perf_counter()
    assert harness_rl.score(good, filler + f"<answer>{gold}</answer>") == 1.0
    assert harness_rl.score(good, f"<answer>{gold}</answer>" + filler) == 1.0
    assert harness_rl.score(good, f"<answer>{filler}{gold}</answer>") == 0.0
    assert harness_rl.score(good, filler, lenient=True) == 0.0
    assert harness_rl.score_answer(filler, good) == 0.0
    assert time.perf_counter() - start < 60
