"""A TRL ``GRPOTrainer`` reward function backed by ``hrl reward-server``.

Standard library only. Use it with a dataset exported by ``hrl contexts export``
(its ``prompt`` column is TRL's conversational prompt; TRL passes the other columns,
``context_id`` among them, to reward functions as keyword arguments)::

    from reward_trl import HarnessReward
    trainer = GRPOTrainer(model=..., reward_funcs=[HarnessReward("http://127.0.0.1:8090")],
                          train_dataset=load_dataset("json", data_files="ctx/contexts.jsonl")["train"],
                          args=GRPOConfig(...))

Each call POSTs every completion of the batch in one request to the server's native
``/score`` endpoint (so the server batches them into the executor) and returns one
float per completion, or ``None`` for a row the server cannot score (no known
context); TRL ignores ``None`` rewards. An invalid revision is not ``None``: it gets
the server's ``--invalid-reward``. The last response's parts (validity, executes,
invalid reasons, dev scores) stay in ``last_results`` for logging.
"""

import json
import os
import urllib.request

__all__ = ["HarnessReward", "completion_text", "prompt_text", "post_json"]


def post_json(url, body, timeout):
    """POST ``body`` as JSON and return the decoded JSON answer."""
    data = json.dumps(body).encode("utf-8")
    req = urllib.request.Request(
        url, data=data, headers={"Content-Type": "application/json"}, method="POST"
    )
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return json.loads(resp.read().decode("utf-8"))


def completion_text(completion):
    """A TRL completion as text: a string, or (conversational) a list of messages."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list):
        return "".join(
            m.get("content", "") for m in completion if isinstance(m, dict)
        )
    if isinstance(completion, dict):
        return completion.get("content", "")
    return str(completion)


def prompt_text(prompt):
    """A TRL prompt as text (the server finds the context's prompt inside it)."""
    return completion_text(prompt)


class HarnessReward:
    """Reward function for ``GRPOTrainer(reward_funcs=[...])``."""

    def __init__(self, url=None, timeout=3600.0, context_column="context_id"):
        url = url or os.environ.get("HRL_REWARD_URL", "http://127.0.0.1:8090")
        self.url = url.rstrip("/")
        self.timeout = timeout
        self.context_column = context_column
        self.last_results = []
        # TRL logs each reward function under its __name__.
        self.__name__ = "harness_reward"

    def __call__(self, prompts=None, completions=None, **kwargs):
        completions = list(completions or [])
        n = len(completions)
        ids = kwargs.get(self.context_column)
        ids = list(ids) if ids is not None else [None] * n
        prompts = list(prompts) if prompts is not None else [None] * n
        items = []
        for prompt, completion, cid in zip(prompts, completions, ids):
            item = {"completion": completion_text(completion)}
            if cid:
                item["context_id"] = str(cid)
            elif prompt is not None:
                item["prompt"] = prompt_text(prompt)
            items.append(item)
        if not items:
            return []
        results = post_json(self.url + "/score", {"items": items}, self.timeout)[
            "results"
        ]
        self.last_results = results
        return [
            None if r.get("error") is not None or r.get("reward") is None else float(r["reward"])
            for r in results
        ]
