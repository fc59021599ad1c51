"""harness_rl.reasoning_gym: a script written against reasoning-gym's API runs with
only its import lines changed; what the shim refuses, it refuses by name."""

import subprocess
import sys
from pathlib import Path

import pytest

import harness_rl
from harness_rl import reasoning_gym as rg

SCRIPT = Path(__file__).with_name("rg_script.py")


def switched(text: str) -> str:
    """The two-line change: reasoning_gym becomes harness_rl.reasoning_gym."""
    return text.replace("import reasoning_gym\n", "import harness_rl.reasoning_gym as reasoning_gym\n").replace(
        "from reasoning_gym.", "from harness_rl.reasoning_gym."
    )


def test_a_reasoning_gym_script_runs_with_the_import_changed(tmp_path):
    original = SCRIPT.read_text()
    changed = switched(original)
    diff = [(a, b) for a, b in zip(original.splitlines(), changed.splitlines()) if a != b]
    assert len(diff) == 3 and all("import" in a for a, _ in diff), diff
    path = tmp_path / "script.py"
    path.write_text(changed)
    out = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.rstrip().endswith("ok")


def test_shim_entries_add_reasoning_gyms_source_keys_only():
    ds = rg.create_dataset("gcd", seed=3, size=4, level=2)
    native = harness_rl.create_dataset("gcd", seed=3, size=4, level=2)
    for a, b in zip(ds, native):
        meta = dict(a["metadata"])
        assert meta.pop("source_dataset") == "gcd"
        assert meta.pop("source_index") == a["index"]
        assert dict(a, metadata=meta) == b
        assert ds.score_answer(a["answer"], a) == 1.0


def test_a_random_seed_when_none_is_given_as_reasoning_gym_does():
    ds = rg.create_dataset("gcd", size=2)
    assert 0 <= ds.seed <= 2**32
    again = harness_rl.create_dataset("gcd", seed=ds.seed, size=2)
    assert [e["id"] for e in again] == [e["id"] for e in ds]


def test_unsupported_settings_are_refused_by_name():
    with pytest.raises(ValueError, match="min_n"):
        rg.create_dataset("count_primes", size=3, min_n=5)
    with pytest.raises(ValueError, match="not registered"):
        rg.create_dataset("leg_counting")
    with pytest.raises(ValueError, match="not registered"):
        rg.get_score_answer_fn("leg_counting")
    from harness_rl.reasoning_gym.composite import DatasetSpec
    from harness_rl.reasoning_gym.utils import extract_answer

    with pytest.raises(ValueError, match="min_terms"):
        rg.create_dataset("composite", size=3, datasets=[DatasetSpec("basic_arithmetic", 1, {"min_terms": 2})])
    with pytest.raises(ValueError, match="Duplicate"):
        rg.create_dataset("composite", size=3, datasets=[DatasetSpec("gcd", 1, {}), DatasetSpec("gcd", 2, {})])
    with pytest.raises(ValueError, match="tag"):
        extract_answer("<final>1</final>", tag_name="final")
    assert "count_primes" in rg.DATASETS and not rg.has_curriculum("count_primes")


def test_composite_spec_config_sets_level_and_variant():
    from harness_rl.reasoning_gym.composite import DatasetSpec

    ds = rg.create_dataset(
        "composite", size=20, seed=2, datasets=[DatasetSpec("gcd", 1, {"level": 4, "variant": 1})]
    )
    assert all(e["level"] == 4 and e["id"].endswith("/v1") for e in ds)
