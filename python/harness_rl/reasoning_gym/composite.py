"""reasoning-gym's composite datasets: ``DatasetSpec(name, weight, config)`` and
``create_dataset("composite", size=, seed=, datasets=[...])``. A spec's ``config`` may
set ``level`` and ``variant``; each item is drawn from a spec with probability
proportional to its weight (see ``harness_rl.create_composite``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from .. import _native


@dataclass
class DatasetSpec:
    """One family of a composite dataset."""

    name: str
    weight: float = 1.0
    config: dict = field(default_factory=dict)

    def validate(self) -> None:
        if not self.name:
            raise ValueError("Dataset name cannot be empty")
        if not self.weight > 0:
            raise ValueError(f"{self.name}: weight must be positive")
        if not isinstance(self.config, dict):
            raise ValueError(f"{self.name}: config must be a dictionary")
        unknown = sorted(set(self.config) - {"level", "variant"})
        if unknown:
            raise ValueError(
                f"{self.name}: unsupported setting(s) {', '.join(unknown)}: a composite "
                "part takes level and variant"
            )


@dataclass
class CompositeConfig:
    """Settings of a composite dataset."""

    size: int = 500
    seed: Optional[int] = None
    datasets: list = field(default_factory=list)

    def validate(self) -> None:
        if not self.datasets:
            raise ValueError("Must specify at least one dataset")
        names = [d.name for d in self.datasets]
        if len(names) != len(set(names)):
            raise ValueError("Duplicate dataset names are not allowed in CompositeDataset")
        for d in self.datasets:
            d.validate()


def create_composite(**kwargs: Any) -> _native.Dataset:
    from .factory import _seed

    unknown = sorted(set(kwargs) - {"size", "seed", "datasets"})
    if unknown:
        raise ValueError(f"composite: unsupported setting(s) {', '.join(unknown)}")
    specs = [d if isinstance(d, DatasetSpec) else DatasetSpec(**d) for d in kwargs.get("datasets") or []]
    config = CompositeConfig(size=kwargs.get("size", 500), seed=kwargs.get("seed"), datasets=specs)
    config.validate()
    parts = [{"name": d.name, "weight": d.weight, **d.config} for d in specs]
    return _native.create_composite(parts, seed=_seed(config.seed), size=config.size, source_keys=True)
