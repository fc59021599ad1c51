"""harness-rl's procedural task families, their strict verifiers, the family splits
and the evaluator's run records, in process.

    >>> import harness_rl
    >>> ds = harness_rl.create_dataset("count_primes", seed=0, size=3, level=2)
    >>> entry = ds[0]
    >>> harness_rl.score(entry, f"<answer>{entry['answer']}</answer>")
    1.0

Entries are dicts with exactly the fields of an ``hrl tasks gen`` line (``id``,
``family``, ``level``, ``seed``, ``index``, ``question``, ``answer``, ``metadata``);
scoring is ``hrl tasks score``'s: the last ``<answer>...</answer>`` pair, verified by
the family (1.0 or 0.0, no partial credit). See docs/PYTHON.md.
"""

from ._native import (
    Dataset,
    __version__,
    create_composite,
    create_dataset,
    dumps,
    extract_answer,
    list_families,
    score,
    score_answer,
    score_details,
    score_many,
    split,
    splits,
)
from .records import Run, load_run
from .trl import reward_function

__all__ = [
    "Dataset",
    "Run",
    "__version__",
    "create_composite",
    "create_dataset",
    "dumps",
    "extract_answer",
    "list_families",
    "load_run",
    "reward_function",
    "score",
    "score_answer",
    "score_details",
    "score_many",
    "split",
    "splits",
]
