"""Input checks (core/checks.py): bad input raises the library's error naming the parameter,
never a NaN, a silent clamp or a numpy traceback; good input comes back as a float array."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tokenomics as tk
from tokenomics.core.checks import (
    context_within,
    counts,
    fmt,
    non_negative,
    positive,
    scalar_or_array,
)
from tokenomics.core.units import Q_


# ---- counts --------------------------------------------------------------------------------
def test_counts_accepts_whole_numbers_and_arrays():
    assert counts(8, "batch").tolist() == 8.0
    assert counts(8.0, "batch").dtype == np.float64      # whole-valued floats are counts
    a = counts([1, 2, 4], "batch")
    assert isinstance(a, np.ndarray) and a.tolist() == [1.0, 2.0, 4.0]
    # minimum=0 for counts that may be empty (cached tokens)
    assert counts(0, "cached_tokens", minimum=0).tolist() == 0.0


def test_counts_keeps_the_shape_so_arguments_broadcast():
    b = counts(np.array([[1], [8], [64]]), "batch")           # a column
    c = counts([1024, 8192], "context_tokens", unit="token")  # a row
    assert b.shape == (3, 1) and c.shape == (2,)
    grid = b * c                                              # a 3 x 2 grid of tokens
    assert grid.shape == (3, 2) and grid[2, 1] == 64 * 8192


@pytest.mark.parametrize("bad, shown", [
    (0, "0"), (-3, "-3"), (1.5, "1.5"), (np.nan, "nan"), (np.inf, "inf"), ([1, 2, -1], "-1")])
def test_counts_rejects_what_is_not_a_whole_number(bad, shown):
    with pytest.raises(tk.TokenomicsError, match=rf"^batch must be a whole number >= 1, "
                                                 rf"got {shown}$"):
        counts(bad, "batch")


def test_integer_arrays_are_checked_as_the_float_ones_are():
    # An integer array in range takes two reductions instead of the elementwise checks;
    # the answers (values, float dtype, the errors) are the same.
    a = counts(np.array([1, 7, 2**53], np.int64), "batch")
    assert a.dtype == np.float64 and a.tolist() == [1.0, 7.0, 2.0**53]
    assert counts(np.array([0, 3], np.uint32), "c", minimum=0).tolist() == [0.0, 3.0]
    with pytest.raises(tk.TokenomicsError, match=r"^batch must be a whole number >= 1, got 0"):
        counts(np.array([5, 0, 2]), "batch")
    with pytest.raises(tk.TokenomicsError, match=r"and at most 2\*\*53"):
        counts(np.array([2**60]), "batch")
    with pytest.raises(tk.UnitError, match="not a bool"):
        counts(np.array([True, False]), "batch")


def test_counts_says_how_many_values_are_invalid():
    # 0, -1 and 2.5 are invalid: the first is named, and the other 2 are counted.
    with pytest.raises(tk.TokenomicsError,
                       match=r"n must be a whole number >= 1, got 0 \(and 2 more invalid"):
        counts([0, 3, -1, 2.5], "n")


def test_counts_minimum_is_in_the_message():
    with pytest.raises(tk.TokenomicsError, match=r"cached_tokens must be a whole number >= 0, "
                                                 r"got -1"):
        counts(-1, "cached_tokens", minimum=0)


def test_counts_rejects_empty_input_and_strings():
    with pytest.raises(tk.TokenomicsError, match=r"batch is empty; give at least one value"):
        counts([], "batch")
    with pytest.raises(tk.UnitError, match=r"batch must be a number or an array of numbers, "
                                           r"got 'lots'"):
        counts("lots", "batch")


def test_counts_converts_token_quantities():
    # 2 ktoken = 2 x 1000 tokens (the registry's SI prefixes).
    assert counts(Q_(2, "ktoken"), "context_tokens", unit="token").tolist() == 2000.0
    assert counts(Q_([512, 1024], "token"), "context_tokens", unit="token").tolist() == \
        [512.0, 1024.0]
    with pytest.raises(tk.UnitError, match=r"context_tokens has unit .*cannot be converted "
                                           r"to 'token'"):
        counts(Q_(3, "GB"), "context_tokens", unit="token")


# ---- positive / non_negative ---------------------------------------------------------------
def test_positive_converts_to_the_canonical_unit():
    # H100 SXM: 3.35 TB/s = 3.35e12 B/s (decimal prefixes, NVIDIA datasheet).
    assert positive(Q_(3.35, "TB/s"), "mem_bw_bytes_per_s", "B/s").tolist() == 3.35e12
    # A plain number is already in the canonical unit.
    assert positive(2.5, "x", "s").tolist() == 2.5
    assert positive(np.array([1.0, 2.0]), "x", "s").tolist() == [1.0, 2.0]


@pytest.mark.parametrize("bad", [0, -1.0, np.nan, np.inf, [1.0, 0.0]])
def test_positive_rejects_zero_negative_and_non_finite(bad):
    with pytest.raises(tk.TokenomicsError, match=r"^peak_flop_per_s must be > 0 \[flop/s\], "
                                                 r"got "):
        positive(bad, "peak_flop_per_s", "flop/s")


def test_non_negative_accepts_zero_and_rejects_below():
    assert non_negative(0, "flops", "flop").tolist() == 0.0
    # 3 ms = 0.003 s
    assert non_negative(Q_(3, "ms"), "overhead_s", "s").tolist() == pytest.approx(3e-3)
    for bad in (-1e-9, np.nan, -np.inf):
        with pytest.raises(tk.TokenomicsError, match=r"^flops must be >= 0 \[flop\], got "):
            non_negative(bad, "flops", "flop")


def test_wrong_dimension_and_non_numbers_raise_unit_errors():
    # A bandwidth given where a FLOP rate belongs: distinct dimensions, never mixed up.
    with pytest.raises(tk.UnitError, match=r"peak_flop_per_s has unit"):
        positive(Q_(1, "TB/s"), "peak_flop_per_s", "flop/s")
    with pytest.raises(tk.UnitError, match=r"latency_s must be a number"):
        non_negative("fast", "latency_s", "s")
    # UnitError is a TokenomicsError, which is a ValueError: generic handlers still work.
    assert issubclass(tk.UnitError, tk.TokenomicsError) and issubclass(tk.UnitError, ValueError)


@given(st.lists(st.integers(min_value=0, max_value=10**9), min_size=1, max_size=20))
def test_whole_numbers_round_trip(values):
    # Any list of non-negative integers is a valid count array, returned value for value.
    assert counts(values, "n", minimum=0).tolist() == [float(v) for v in values]


@given(st.floats(max_value=0, exclude_max=False, allow_nan=False), st.sampled_from(["a", "b_s"]))
def test_non_positive_is_never_positive(x, name):
    with pytest.raises(tk.TokenomicsError, match=rf"^{name} must be > 0"):
        positive(x, name, "s")


# ---- context_within, fmt, scalar_or_array --------------------------------------------------
def test_context_within_the_models_maximum():
    # Llama 3.1 8B's config.json: max_position_embeddings = 131072.
    m = tk.model("llama-3.1-8b")
    assert m.max_context == 131_072
    context_within(m, np.array([1024.0, 131_072.0]), allow_beyond=False)   # at the limit: fine
    with pytest.raises(tk.TokenomicsError, match=r"prompt_tokens=131073 exceeds llama-3.1-8b's "
                                                 r"maximum context of 131072 tokens.*"
                                                 r"allow_beyond_max_context=True"):
        context_within(m, np.array([1024.0, 131_073.0]), False, name="prompt_tokens")
    context_within(m, np.array([10**6]), allow_beyond=True)                # explicit override


@pytest.mark.parametrize("v, text", [
    (3, "3"), (3.0, "3"), (-2.0, "-2"), (1.5, "1.5"), (np.float64(0.25), "0.25"),
    (math.nan, "nan"), (math.inf, "inf"), (1e-7, "1e-07")])
def test_fmt_writes_numbers_as_people_do(v, text):
    assert fmt(v) == text


def test_scalar_or_array():
    assert scalar_or_array(np.array(2.5)) == 2.5
    assert type(scalar_or_array(np.array(2.5))) is float
    assert type(scalar_or_array(np.float64(1.0))) is float
    a = np.array([1.0, 2.0])
    assert scalar_or_array(a) is a
    assert scalar_or_array(np.ones((2, 1))).shape == (2, 1)


def test_choice_flag_and_fraction_refuse_what_they_should():
    from tokenomics.core import checks as V

    assert V.choice("tree", "algorithm", ("ring", "tree")) == "tree"
    for bad in (np.array([]), 1, "Ring", None):
        with pytest.raises(tk.TokenomicsError, match="algorithm must be one of 'ring', 'tree'"):
            V.choice(bad, "algorithm", ("ring", "tree"))
    assert V.flag(np.bool_(True), "logy") is True
    for bad in (1, "yes", np.array([True]), None):
        with pytest.raises(tk.TokenomicsError, match="logy must be True or False"):
            V.flag(bad, "logy")
    assert V.fraction([0.0, 0.25, 1.0], "hit").tolist() == [0.0, 0.25, 1.0]
    with pytest.raises(tk.TokenomicsError, match=r"hit must be in \[0, 1\), got 1"):
        V.fraction(1.0, "hit", upper_open=True)
    with pytest.raises(tk.TokenomicsError, match=r"hit must be in \[0, 1\], got 1.5"):
        V.fraction([0.5, 1.5], "hit")
