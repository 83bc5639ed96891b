"""Figure plumbing: pyplot-free axes, colours, number labels and the shared argument checks."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import tokenomics as tk  # noqa: E402
from tokenomics.surfaces.canvas import (  # noqa: E402
    axes_or_new,
    labelled_items,
    series_colours,
    si_prefixed,
    single_count,
    true_runs,
    usd_text,
)


def test_new_axes_open_no_pyplot_figure():
    before = plt.get_fignums()
    ax = axes_or_new(None, figsize=(6.0, 4.0))
    assert plt.get_fignums() == before
    assert list(ax.get_figure().get_size_inches()) == [6.0, 4.0]
    assert axes_or_new(ax) is ax


@pytest.mark.parametrize("x, text", [
    (989.4e12, "989 T"),        # H100 SXM dense BF16 [FLOP/s]
    (3.35e12, "3.35 T"),        # its bandwidth [B/s]
    (4.8e12, "4.8 T"),          # H200
    (1000.0, "1 k"), (999.0, "999 "), (2.5e15, "2.5 P"), (-2.5e9, "-2.5 G"), (0.0, "0 "),
])
def test_si_prefixes(x, text):
    assert si_prefixed(x) == text


def test_usd_text():
    # $2/hour at 1,000 tokens/s is 2 / 3600 / 1000 * 1e6 = $0.5556 per million tokens.
    assert usd_text(2 / 3600 / 1000 * 1e6) == "$0.556"
    assert usd_text(float("inf")) == usd_text(float("nan")) == "n/a"


def test_single_count():
    assert single_count(8, "batch", "count") == 8
    assert single_count([3], "batch", "count") == 3
    for bad, match in ((True, "whole number"), ([1, 2], "single value"), (0, ">= 1"),
                       (1.5, "whole number")):
        with pytest.raises(tk.TokenomicsError, match=match):
            single_count(bad, "batch", "count")


def test_labelled_items():
    assert labelled_items(1.5, float, "prices", "float", None, lambda i, x: f"#{i}") == (
        [1.5], ["#0"])
    assert labelled_items([1.0, 2.0], float, "prices", "float", ["a", "b"],
                          lambda i, x: "") == ([1.0, 2.0], ["a", "b"])
    with pytest.raises(tk.TokenomicsError, match="prices is empty"):
        labelled_items([], float, "prices", "float", None, str)
    with pytest.raises(tk.TokenomicsError, match=r"prices\[1\] must be a float \(from mk\)"):
        labelled_items([1.0, "2"], float, "prices", "mk", None, str)
    with pytest.raises(tk.TokenomicsError, match="labels has 1 entries for 2 prices"):
        labelled_items([1.0, 2.0], float, "prices", "float", ["a"], str)


def test_series_colours():
    assert len(set(series_colours(10))) == 10          # tab10
    c = series_colours(25)                              # tab20, then it cycles
    assert len(set(c[:20])) == 20 and c[20] == c[0]


@given(st.lists(st.booleans(), max_size=40))
def test_true_runs_cover_exactly_the_true_positions(mask):
    runs = true_runs(mask)
    covered = [i for a, b in runs for i in range(a, b)]
    assert covered == [i for i, m in enumerate(mask) if m]
    for (_, stop), (start, _) in zip(runs, runs[1:], strict=False):
        assert start > stop                             # a False between two runs
    assert all(b > a for a, b in runs)


def test_a_new_figure_in_a_notebook_is_pyplots_and_elsewhere_is_not(monkeypatch):
    import matplotlib
    import matplotlib.pyplot as plt

    import tokenomics.surfaces.canvas as canvas

    matplotlib.use("Agg")
    plt.close("all")
    assert not canvas.in_notebook()              # the test run is no Jupyter kernel
    canvas.axes_or_new(None)
    assert plt.get_fignums() == []               # no pyplot figure: nothing to show or leak
    monkeypatch.setattr(canvas, "in_notebook", lambda: True)
    ax = canvas.axes_or_new(None, figsize=(4.0, 3.0))
    assert plt.get_fignums() == [ax.get_figure().number]   # the inline backend will draw it
    plt.close("all")
