"""Reading an evaluator run directory (``hrl eval`` / ``hrl transfer`` writes one per
proposer) into Python: the resolved ``config.json``, ``summary.json`` and the JSON-lines
logs as lists of dicts, and as pandas DataFrames when pandas is installed.

The files are read by the crate's own reader (``records::read``): a torn last
line (a run killed while writing) is ignored, any other malformed line raises
``ValueError`` naming ``file:line``, and a log the run has not written yet is empty.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from . import _native

#: The JSON-lines logs of a run directory, in the order they are written.
LOGS = ("rollouts", "proposals", "candidates", "rounds")


@dataclass(frozen=True)
class Run:
    """One run directory's records.

    ``rollouts``: every executor run of a harness on an item (``rollouts.jsonl``);
    ``proposals``: every proposer call; ``candidates``: every candidate revision with
    its status and dev score; ``rounds``: every (task, sample, round) with the kept
    harness and its test scores; ``summary``: the metrics (``None`` until the run
    finishes); ``config``: the resolved settings.
    """

    path: str
    config: dict[str, Any]
    summary: dict[str, Any] | None
    rollouts: list[dict[str, Any]] = field(repr=False)
    proposals: list[dict[str, Any]] = field(repr=False)
    candidates: list[dict[str, Any]] = field(repr=False)
    rounds: list[dict[str, Any]] = field(repr=False)

    def frame(self, name: str):
        """One log (``rollouts``, ``proposals``, ``candidates`` or ``rounds``) as a
        pandas DataFrame, one row per record; nested objects are flattened into
        dotted columns one level deep (``test.mean``). Needs pandas."""
        if name not in LOGS:
            raise ValueError(f"unknown log `{name}`: one of {', '.join(LOGS)}")
        try:
            import pandas
        except ImportError as e:
            raise ImportError(
                "Run.frame needs pandas (pip install pandas); the records are plain "
                f"lists of dicts without it: run.{name}"
            ) from e
        rows = getattr(self, name)
        if not rows:
            return pandas.DataFrame()
        return pandas.json_normalize(rows, max_level=1)

    def frames(self) -> dict:
        """Every log as a DataFrame, by name (see ``frame``)."""
        return {name: self.frame(name) for name in LOGS}


def load_run(path: str | os.PathLike) -> Run:
    """Read the run directory ``path``. ``FileNotFoundError`` when it is not a
    directory; ``ValueError`` when it is not a run directory (no ``config.json``; an
    ``hrl eval`` output holding one run directory per proposer names them) or a
    record is malformed."""
    raw = _native.read_run(os.fspath(path))
    return Run(**raw)
