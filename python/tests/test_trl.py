"""The TRL reward function scores completions against their rows' entries in
process, as `score` does, and refuses malformed entries by item."""

import json

import pytest

import harness_rl
from harness_rl import trl


def test_rewards_for_plain_and_conversational_completions():
    ds = harness_rl.create_dataset("gcd", seed=9, size=6, level=2)
    rows = trl.prompt_rows(ds, system_prompt="Be brief.")
    assert rows[0]["prompt"][0] == {"role": "system", "content": "Be brief."}
    assert rows[0]["prompt"][1] == {"role": "user", "content": ds[0]["question"]}
    assert json.loads(rows[0]["entry"]) == ds[0]
    entries = [r["entry"] for r in rows]
    gold = [f"<answer>{e['answer']}</answer>" for e in ds]
    completions = [gold[0], "no idea", ds[2]["answer"], gold[3], "", gold[5]]
    reward = harness_rl.reward_function()
    assert reward.__name__ == "harness_rl"
    want = [1.0, 0.0, 0.0, 1.0, 0.0, 1.0]
    assert reward(prompts=[r["prompt"] for r in rows], completions=completions, entry=entries) == want
    conversational = [[{"role": "assistant", "content": c}] for c in completions]
    assert reward(completions=conversational, entry=list(ds)) == want
    lenient = harness_rl.reward_function(lenient=True)
    assert lenient.__name__ == "harness_rl_lenient"
    assert lenient(completions=completions, entry=entries)[2] == 1.0
    # the entry's fields as separate dataset columns
    columns = {k: [e[k] for e in ds] for k in trl.ENTRY_FIELDS}
    assert reward(completions=completions, **columns) == want
    assert want == [harness_rl.score(e, c) for e, c in zip(ds, completions)]


def test_malformed_rows_raise_by_item():
    ds = harness_rl.create_dataset("gcd", seed=9, size=2)
    reward = harness_rl.reward_function()
    bad = [harness_rl.dumps(ds[0]), json.dumps({"question": "?"})]
    with pytest.raises(ValueError, match="item 1: entry: not an instance"):
        reward(completions=["a", "b"], entry=bad)
    with pytest.raises(KeyError, match="no `entry` column"):
        reward(completions=["a"], question=["?"])
