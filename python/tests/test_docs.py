"""The Python recipe of docs/PYTHON.md (and README) runs as written."""

import re
import subprocess
import sys


def example(text: str) -> str:
    m = re.search(r"<!-- example -->\s*```python\n(.*?)```", text, re.S)
    assert m, "no example block"
    return m.group(1)


def test_the_five_line_example_runs_and_is_the_readmes(root, tmp_path):
    code = example((root / "docs" / "PYTHON.md").read_text())
    assert len(code.strip().splitlines()) == 5
    assert code in (root / "README.md").read_text()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "1.0"
