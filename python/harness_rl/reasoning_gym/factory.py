"""``create_dataset`` and ``get_score_answer_fn`` as reasoning-gym's factory names them."""

from __future__ import annotations

import random
from typing import Any, Callable, Optional

from .. import _native

#: Every family by name (reasoning-gym maps names to (dataset, config) classes; here
#: the value is the family's description as ``harness_rl.list_families()`` gives it).
DATASETS: dict[str, dict] = {f["name"]: f for f in _native.list_families()}

#: The settings a family accepts here; reasoning-gym's per-generator knobs do not exist.
SETTINGS = ("seed", "size", "level", "variant")


def _seed(seed: Optional[int]) -> int:
    # reasoning-gym draws a random seed when none is given; so does the shim (the
    # dataset's `seed` says which), while harness_rl.create_dataset defaults to 0.
    return random.Random().randint(0, 2**32) if seed is None else seed


def create_dataset(name: str, **kwargs: Any) -> _native.Dataset:
    """A dataset of the family ``name`` (or ``composite`` with ``datasets=[DatasetSpec,
    ...]``). Accepts ``seed`` (default: random, as in reasoning-gym), ``size`` (500),
    ``level`` (1..5, default 1) and ``variant``; any other setting raises ValueError
    naming it. Entries carry reasoning-gym's ``metadata["source_dataset"]`` and
    ``metadata["source_index"]``."""
    if name == "composite":
        from .composite import create_composite

        return create_composite(**kwargs)
    if name not in DATASETS:
        raise ValueError(f"Dataset '{name}' not registered (see harness_rl.list_families())")
    unknown = sorted(set(kwargs) - set(SETTINGS))
    if unknown:
        raise ValueError(
            f"{name}: unsupported setting(s) {', '.join(unknown)}: harness-rl families "
            f"take {', '.join(SETTINGS)} (difficulty is level=1..5)"
        )
    return _native.create_dataset(
        name,
        seed=_seed(kwargs.get("seed")),
        size=kwargs.get("size", 500),
        level=kwargs.get("level", 1),
        variant=kwargs.get("variant", 0),
        source_keys=True,
    )


def get_score_answer_fn(name: str) -> Callable[[Optional[str], dict], float]:
    """The ``score_answer(answer, entry)`` of family ``name``."""
    if name not in DATASETS and name != "composite":
        raise ValueError(f"Dataset '{name}' not registered (see harness_rl.list_families())")
    return _native.score_answer


def has_curriculum(name: str) -> bool:
    """No family has a reasoning-gym curriculum here: difficulty is the level."""
    return False
