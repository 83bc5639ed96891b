"""The files of ``tokenomics report`` (tokenomics.surfaces.report)."""

from __future__ import annotations

import argparse

import pytest
from hypothesis import given
from hypothesis import strategies as st

import tokenomics as tk
from tokenomics.surfaces.report import build_report, layout_min_devices


def test_layout_min_devices_by_hand():
    # Llama 3.1 8B at BF16 is 16.1 GB of weights: one H100 (80 GiB, 90% usable: 77 GB) holds
    # it and an 8,192-token sequence (1.07 GB of KV at 131,072 B/token)
    assert layout_min_devices(tk.Deployment("llama-3.1-8b", "h100-sxm"), 1, 8192, 1) == 1
    # Llama 3.1 70B at BF16 is 141 GB: two H100s (154 GB usable) hold it and one sequence
    d70 = tk.Deployment("llama-3.1-70b", "h100-sxm", tp=2)
    assert layout_min_devices(d70, 1, 8192, 1) == 2
    # no count holds 10^7 sequences of the maximum context
    assert layout_min_devices(d70, 10**7, 131_072, 1) is None


def test_build_report_writes_every_file_into_the_folder(tmp_path):
    a = argparse.Namespace(context=[4096], prompt=1024, slo=20.0, price=2.0, xlsx=False)
    lines, dec = build_report(a, tk.Deployment("llama-3.1-8b", "h100-sxm"), tmp_path, "bound")
    names = {p.name for p in tmp_path.iterdir()}
    assert names == {"memory.csv", "decode.csv", "operators.csv", "frontier.csv", "cost.csv",
                     "cost.png", "roofline.png", "frontier.png", "memory.png", "report.txt"}
    assert lines[1] == "  bound"
    assert (tmp_path / "report.txt").read_text() == "\n".join(lines) + "\n"
    assert dec.batch.iloc[0] == 1 and (dec.step_time_s > 0).all()


def test_a_report_that_fails_leaves_out_untouched(tmp_path, capsys):
    from tokenomics.surfaces.cli import main
    out = tmp_path / "rep"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    assert main(["report", "deepseek-v3.2-exp", "h200", "--xlsx", "--out", str(out)]) == 2
    assert "not implemented" in capsys.readouterr().err
    assert [p.name for p in out.iterdir()] == ["keep.txt"]
    with pytest.raises(SystemExit):
        main(["report", "llama-3.1-8b", "h100-sxm", "--context", "x", "--out", str(out)])
    assert [p.name for p in out.iterdir()] == ["keep.txt"]



@given(st.lists(st.one_of(st.integers(-10**12, 10**12).map(float), st.floats(-1e12, 1e12),
                          st.just(float("nan"))), min_size=1, max_size=20))
def test_whole_counts_keep_every_value_and_turn_integer_only_when_all_are_whole(xs):
    # law: the written column equals the input value for value; it is an integer column
    # exactly when every value is finite and whole
    import math

    import pandas as pd

    from tokenomics.surfaces.report import whole_counts

    out = whole_counts(pd.DataFrame({"batch": xs, "step_time_s": xs}))
    whole = all(math.isfinite(x) and x == int(x) for x in xs)
    assert (out.batch.dtype.kind == "i") == whole
    assert out.step_time_s.dtype.kind == "f"                  # not a count column
    for a, b in zip(out.batch, xs, strict=True):
        assert (math.isnan(a) and math.isnan(b)) or a == b
