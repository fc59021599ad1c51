"""Shared fixtures: the repository root and the built `hrl` binary the package is
compared with (`make test` builds it first; HRL_BIN names another)."""

import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def hrl_path() -> Path:
    path = Path(os.environ.get("HRL_BIN", ROOT / "target" / "release" / "hrl"))
    if not path.is_file():
        raise RuntimeError(f"{path}: no hrl binary (run `make build` or set HRL_BIN)")
    return path


def run_hrl(*args, input=None) -> str:
    """Run `hrl ARGS`, return its standard output; fail the test on a non-zero exit."""
    out = subprocess.run(
        [str(hrl_path()), *map(str, args)],
        input=input,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, f"hrl {' '.join(map(str, args))}: {out.stderr}"
    return out.stdout


def gen_lines(family, n, seed, level, variant=0) -> list[str]:
    """`hrl tasks gen` output lines."""
    return run_hrl(
        "tasks", "gen", family, "--n", n, "--seed", seed, "--level", level, "--variant", variant
    ).splitlines()


@pytest.fixture(scope="session")
def families() -> list[dict]:
    return json.loads(run_hrl("tasks", "list", "--json"))


@pytest.fixture
def root() -> Path:
    return ROOT
