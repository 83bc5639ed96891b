"""The README's Python tour runs as written (it must stay true)."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def test_readme_python_blocks_run():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert blocks
    ns: dict = {}
    for block in blocks:
        exec(compile(block, str(README), "exec"), ns)  # noqa: S102 - our own README
    assert ns["tk"].kv_bytes_per_token(ns["l70"]) == 327_680
    # The figures the comments quote: M/D/1 wait 0.8 x 0.1 / (2 x 0.2) = 0.2 s; the S62 policy.
    assert abs(ns["tk"].mdl_mean_wait_s(8.0, 0.1) - 0.2) < 1e-12
    assert 5 * 60 <= ns["p"].t1_s <= 10 * 60


def test_readme_names_the_test_command_ci_runs():
    ci = (README.parent / ".ci" / "run").read_text()
    assert "python -m pytest -q" in README.read_text()
    assert ci.strip().splitlines()[-1] == "python -m pytest -q"
