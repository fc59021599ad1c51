"""load_run reads a real recorded run directory with the evaluator's rules, and turns
its logs into DataFrames when pandas is there."""

import json
import shutil
import sys

import pytest

import harness_rl


@pytest.fixture
def run_dir(root, tmp_path):
    src = root / "tests" / "report" / "fixtures" / "oracle-run"
    dst = tmp_path / "oracle-run"
    shutil.copytree(src, dst)
    return dst


def lines(path):
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def test_a_recorded_run_reads_whole(run_dir):
    run = harness_rl.load_run(run_dir)
    assert run.path == str(run_dir)
    assert run.config == json.loads((run_dir / "config.json").read_text())
    assert run.summary == json.loads((run_dir / "summary.json").read_text())
    assert run.rounds == lines(run_dir / "rounds.jsonl")
    assert run.candidates == lines(run_dir / "candidates.jsonl")
    assert len(run.rounds) == 18 and len(run.candidates) == 12
    assert run.rollouts == [] and run.proposals == []  # not recorded in this fixture
    assert {r["task"] for r in run.rounds} <= {t["id"] for t in run.config["tasks"]}


def test_a_torn_last_line_is_ignored_and_a_bad_line_is_named(run_dir):
    rounds = run_dir / "rounds.jsonl"
    n = len(lines(rounds))
    with rounds.open("a") as f:
        f.write('{"schema": 1, "task": "cou')  # a run killed mid-write
    assert len(harness_rl.load_run(run_dir).rounds) == n
    text = rounds.read_text().splitlines(keepends=True)
    text.insert(2, "{not json}\n")
    rounds.write_text("".join(text))
    with pytest.raises(ValueError, match=r"rounds\.jsonl:3: "):
        harness_rl.load_run(run_dir)


def test_what_is_not_a_run_directory_says_so(run_dir, tmp_path):
    with pytest.raises(FileNotFoundError, match="no such run directory"):
        harness_rl.load_run(tmp_path / "missing")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ValueError, match="not a run directory"):
        harness_rl.load_run(empty)
    (empty / "eval.json").write_text("{}")
    shutil.copytree(run_dir, empty / "identity")
    shutil.copytree(run_dir, empty / "oracle")
    with pytest.raises(ValueError, match="holds identity, oracle"):
        harness_rl.load_run(empty)
    (run_dir / "summary.json").write_text("{")
    with pytest.raises(ValueError, match="summary.json"):
        harness_rl.load_run(run_dir)


def test_logs_as_dataframes(run_dir):
    pandas = pytest.importorskip("pandas")
    run = harness_rl.load_run(run_dir)
    rounds = run.frame("rounds")
    assert isinstance(rounds, pandas.DataFrame)
    assert len(rounds) == len(run.rounds)
    assert "test.mean" in rounds.columns
    assert rounds["round"].max() == max(r["round"] for r in run.rounds)
    frames = run.frames()
    assert set(frames) == {"rollouts", "proposals", "candidates", "rounds"}
    assert frames["rollouts"].empty
    with pytest.raises(ValueError, match="unknown log"):
        run.frame("nope")


def test_without_pandas_the_lists_remain_and_frame_says_why(run_dir, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # `import pandas` fails
    run = harness_rl.load_run(run_dir)
    assert len(run.rounds) == 18
    with pytest.raises(ImportError, match="needs pandas"):
        run.frame("rounds")
