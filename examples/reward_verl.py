"""A verl custom reward function backed by ``hrl reward-server``.

Standard library only. Point verl at it with
``custom_reward_function.path=examples/reward_verl.py custom_reward_function.name=compute_score``
and the server's URL in ``HRL_REWARD_URL`` (default ``http://127.0.0.1:8090``). The
dataset is the one ``hrl contexts export`` writes (``reward_model.ground_truth`` and
``extra_info.context_id`` hold the context id; convert it to parquet with
``pandas.read_json(path, lines=True).to_parquet(...)`` where verl wants parquet).

``compute_score`` returns a dict: ``score`` (the reward verl trains on) and the
numeric parts (``dev_score``, ``valid``, ``executes``, ``unchanged``,
``executor_free_rate``, ``tokens``, ``scorable``), which verl logs. A row whose context
the server does not know gets ``HRL_REWARD_UNSCORABLE`` (default 0.0) and
``scorable`` 0.
"""

import json
import os
import urllib.request

__all__ = ["compute_score"]


def _post(url, body, timeout):
    req = urllib.request.Request(
        url,
        data=json.dumps(body).encode("utf-8"),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return json.loads(resp.read().decode("utf-8"))


def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    """verl's reward signature; ``ground_truth`` is the context id."""
    url = os.environ.get("HRL_REWARD_URL", "http://127.0.0.1:8090").rstrip("/")
    timeout = float(os.environ.get("HRL_REWARD_TIMEOUT", "3600"))
    cid = ground_truth
    if not cid and isinstance(extra_info, dict):
        cid = extra_info.get("context_id")
    item = {"completion": solution_str or ""}
    if cid:
        item["context_id"] = str(cid)
    elif isinstance(extra_info, dict) and extra_info.get("prompt"):
        item["prompt"] = str(extra_info["prompt"])
    else:
        item["context_id"] = ""
    r = _post(url + "/score", {"items": [item]}, timeout)["results"][0]
    if r.get("error") is not None or r.get("reward") is None:
        return {
            "score": float(os.environ.get("HRL_REWARD_UNSCORABLE", "0.0")),
            "dev_score": 0.0,
            "valid": 0.0,
            "executes": 0.0,
            "unchanged": 0.0,
            "executor_free_rate": 0.0,
            "tokens": 0.0,
            "scorable": 0.0,
        }
    return {
        "score": float(r["reward"]),
        "dev_score": float(r["score"]),
        "valid": 1.0 if r["valid"] else 0.0,
        "executes": 1.0 if r["executes"] else 0.0,
        "unchanged": 1.0 if r["unchanged"] else 0.0,
        "executor_free_rate": float(r["executor_free_rate"]),
        "tokens": float(r["tokens"]),
        "scorable": 1.0,
    }
