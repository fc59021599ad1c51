"""A reward function for TRL's ``GRPOTrainer`` (``reward_funcs=[...]``) that scores
completions against harness-rl entries in process: no server, the families' strict
verifiers, one call per batch with the verification outside the GIL.

    import harness_rl
    ds = harness_rl.create_dataset("count_primes", size=1000, level=2)
    rows = harness_rl.trl.prompt_rows(ds)          # {"prompt": [...], "entry": "<json>"}
    reward = harness_rl.reward_function()          # reads the "entry" column
    # GRPOTrainer(model=..., reward_funcs=[reward], train_dataset=Dataset.from_list(rows))

An entry travels as its JSON line (``harness_rl.dumps``) because a dataset library
that stores rows in columns (Arrow) would merge the differently shaped ``metadata`` of
several families into one schema, filling missing keys with nulls.
"""

from __future__ import annotations

import json
from typing import Any, Iterable

from . import _native

#: The fields of an entry; a dataset holding them as separate columns works too.
ENTRY_FIELDS = ("id", "family", "level", "seed", "index", "question", "answer", "metadata")


def _text(completion: Any) -> Any:
    """A completion's text: a string as is; a conversation (list of messages) its last
    message's ``content``."""
    if isinstance(completion, list):
        if not completion:
            return ""
        last = completion[-1]
        if isinstance(last, dict):
            return last.get("content", "")
    return completion


def _entry(value: Any) -> Any:
    if isinstance(value, (str, bytes, bytearray)):
        return json.loads(value)
    return value


class RewardFunction:
    """Scores each completion against its row's entry: 1.0 when the content of its last
    ``<answer>...</answer>`` pair is right, else 0.0 (``lenient=True`` falls back to the
    last non-empty line; its ``__name__``, which TRL logs the reward under, says so).

    The entry comes from the column ``entry_column`` (a dict or its JSON string), or,
    when the dataset has no such column, from the entry's own fields as columns. A
    malformed entry raises ``ValueError`` naming the item, never a silent 0."""

    def __init__(self, entry_column: str = "entry", *, lenient: bool = False):
        self.entry_column = entry_column
        self.lenient = lenient
        self.__name__ = "harness_rl_lenient" if lenient else "harness_rl"

    def __call__(self, completions: Iterable[Any], prompts: Any = None, **kwargs: Any) -> list[float]:
        completions = list(completions)
        if self.entry_column in kwargs:
            entries = [_entry(e) for e in kwargs[self.entry_column]]
        elif all(f in kwargs for f in ENTRY_FIELDS):
            entries = [
                {f: kwargs[f][i] for f in ENTRY_FIELDS} for i in range(len(completions))
            ]
        else:
            missing = [f for f in ENTRY_FIELDS if f not in kwargs]
            raise KeyError(
                f"no `{self.entry_column}` column and no entry fields as columns "
                f"(missing: {', '.join(missing)})"
            )
        mode = "lenient" if self.lenient else "strict"
        return _native.score_many(entries, [_text(c) for c in completions], mode=mode)

    def __repr__(self) -> str:
        return f"RewardFunction(entry_column={self.entry_column!r}, lenient={self.lenient})"


def reward_function(entry_column: str = "entry", *, lenient: bool = False) -> RewardFunction:
    """A TRL reward function (see ``RewardFunction``)."""
    return RewardFunction(entry_column, lenient=lenient)


def prompt_rows(dataset: Iterable[dict], *, system_prompt: str | None = None) -> list[dict]:
    """Rows for a TRL dataset: ``prompt`` (the question as a user message, after an
    optional system message) and ``entry`` (the entry's JSON line)."""
    rows = []
    for entry in dataset:
        prompt = [] if system_prompt is None else [{"role": "system", "content": system_prompt}]
        prompt.append({"role": "user", "content": entry["question"]})
        rows.append({"prompt": prompt, "entry": _native.dumps(entry)})
    return rows
