"""Every script in examples/ runs to completion (the gallery must not rot)."""

from __future__ import annotations

import os
import runpy
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).resolve().parent.parent / "examples").glob("*.py"))


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_runs(path, capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.chdir(tmp_path)  # examples must not write into the repository
    runpy.run_path(str(path), run_name="__main__")
    assert capsys.readouterr().out.strip()


def test_there_are_examples():
    assert len(EXAMPLES) >= 3
    assert os.path.isdir(EXAMPLES[0].parent)
