"""Scores equal `hrl tasks score`'s, strict and lenient, on gold, junk and echoed
responses for every family at every level; `score_answer` follows reasoning-gym's
contract (the text is the answer) without its partial credit."""

import json

import pytest

import harness_rl
from conftest import gen_lines, run_hrl


def responses(entry):
    gold = entry["answer"]
    return [
        f"<answer>{gold}</answer>",  # gold, tagged
        f"Let me think.\n<answer>0</answer>\nNo wait: <answer> {gold} </answer>",  # last pair wins
        gold,  # gold without tags: strict 0, lenient may count it
        f"I reason a lot.\n{gold}\n",  # gold on the last line
        f"The answer is {gold}, I think <answer>{gold} and more</answer>",  # junk around gold
        f"<answer>{gold}</answer></answer>",  # a closing tag without its opening tag
        f"<answer>{gold}",  # unclosed
        "",
        "<answer></answer>",
        "<answer>banana</answer>",
        "\x00\ufffd<ANSWER>é</answer>",
        entry["question"],  # echoed question
        f"<answer>{entry['question']}</answer>",
    ]


@pytest.mark.parametrize("level", [1, 2, 3, 4, 5])
def test_scores_equal_tasks_score(tmp_path, level):
    entries = [json.loads(line) for line in gen_lines("all", 2, 7, level)]
    rows = []
    for e in entries:
        for r in responses(e):
            rows.append({**e, "response": r})
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    for lenient in (False, True):
        args = ["tasks", "score", path] + (["--lenient"] if lenient else [])
        cli = [json.loads(line) for line in run_hrl(*args).splitlines()]
        assert len(cli) == len(rows)
        for row, want in zip(rows, cli):
            got = harness_rl.score_details(row, row["response"], lenient=lenient)
            assert (got["score"], got["extracted"]) == (want["score"], want["extracted"]), row["id"]
            assert got["score_mode"] == ("lenient" if lenient else "strict")
            assert want.get("score_mode", "strict") == got["score_mode"]
            assert harness_rl.score(row, row["response"], lenient=lenient) == want["score"]
        mode = "lenient" if lenient else "strict"
        many = harness_rl.score_many(rows, [r["response"] for r in rows], mode=mode)
        assert many == [w["score"] for w in cli]
    # every gold answer scores 1 (tagged), junk and echoes 0
    for row in rows:
        r = row["response"]
        if r == f"<answer>{row['answer']}</answer>":
            assert harness_rl.score(row, r) == 1.0, row["id"]
        if r in ("", row["question"], "<answer>banana</answer>"):
            assert harness_rl.score(row, r) == 0.0, row["id"]


def test_score_answer_takes_the_answer_itself_without_partial_credit(families):
    for f in families:
        ds = harness_rl.create_dataset(f["name"], seed=1, size=3, level=2)
        for e in ds:
            gold = e["answer"]
            assert ds.score_answer(gold, e) == 1.0, e["id"]
            assert ds.score_answer(f"  {gold}\n", e) == 1.0, e["id"]
            assert ds.score_answer(f"so <answer>{gold}</answer>", e) == 1.0, e["id"]
            assert ds.score_answer(None, e) == 0.0
            assert ds.score_answer("", e) == 0.0
            # reasoning-gym's default scorer pays len(gold)/len(answer) here
            assert ds.score_answer(f"The answer is {gold}.", e) == 0.0, e["id"]
            assert harness_rl.score_answer(gold, e) == 1.0
    many = harness_rl.score_many(list(ds), [e["answer"] for e in ds], mode="bare")
    assert many == [1.0] * len(ds)


def test_an_entry_is_scored_as_given_not_as_regenerated():
    ds = harness_rl.create_dataset("count_primes", seed=0, size=1, level=2)
    e = ds[0]
    changed = dict(e, metadata=dict(e["metadata"], start=e["metadata"]["start"] + 1))
    # the verifier recounts from the entry's own structured input
    assert harness_rl.dumps(changed) != harness_rl.dumps(e)
    assert harness_rl.score(e, f"<answer>{e['answer']}</answer>") == 1.0
    extra = dict(e, response="x", score=0.5)  # fields beyond the instance's are ignored
    assert harness_rl.score(extra, f"<answer>{e['answer']}</answer>") == 1.0


def test_extract_answer_is_the_strict_rule():
    assert harness_rl.extract_answer("a <answer> 1 </answer> b <answer>2</answer>") == "2"
    assert harness_rl.extract_answer("<Answer>x</ANSWER>") == "x"
    assert harness_rl.extract_answer("<answer>x</answer></answer>") is None
    assert harness_rl.extract_answer("no tags") is None
