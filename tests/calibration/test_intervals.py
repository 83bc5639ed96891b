"""The interval of a forecast for a group the fit has not seen (random effects)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tokenomics as tk
from tokenomics.calibration.intervals import cv_coverage, group_interval


def test_without_spread_between_groups_the_interval_is_the_rows_scatter():
    # Two groups with the same median (0 in log): no bias to draw, so the 10th and 90th
    # percentiles are those of the residuals -0.2, 0, 0.2 (twice): -0.2 and 0.2 by numpy's
    # linear interpolation at positions 0.5 and 4.5 of six sorted values.
    x = np.array([-0.2, 0.0, 0.2, -0.2, 0.0, 0.2])
    lo, hi = group_interval(np.exp(x), ["a", "a", "a", "b", "b", "b"])
    assert (lo, hi) == pytest.approx((math.exp(-0.2), math.exp(0.2)), rel=1e-12)


def test_without_scatter_inside_groups_a_new_group_is_any_of_their_biases():
    # Three groups of ten rows at log ratios -0.3, 0 and 0.3 exactly: nothing to shrink (the
    # medians are exact), so a new group's ratio is one of the three biases and the band
    # spans them: positions 8.9 and 80.1 of the 90 sums fall in the first and last thirds.
    x = np.repeat([-0.3, 0.0, 0.3], 10)
    lo, hi = group_interval(np.exp(x), np.repeat(["p", "q", "r"], 10))
    assert (lo, hi) == pytest.approx((math.exp(-0.3), math.exp(0.3)), rel=1e-12)


def test_a_one_row_group_is_shrunk_toward_the_others():
    # Two groups of 40 rows scattered +-0.5 about 0 and one row at +1.0. By hand: residual
    # variance 0.247, medians' variance 0.222 less the mean sampling variance 0.086 gives
    # tau^2 = 0.136, so the lone row keeps 0.136 / (0.136 + 0.247) = 36% of its distance
    # from the weighted mean (0.16): a bias of about 0.46, not 1.0. Unshrunk, a third of the
    # sums would centre on 1.0 and the band would reach past e^1.4; shrunk it stays under e^1.
    x = np.concatenate([np.tile([-0.5, 0.5], 40), [1.0]])
    lab = ["a"] * 40 + ["b"] * 40 + ["c"]
    resid = x - np.array([0.0] * 80 + [1.0])
    unshrunk = np.quantile((resid[:, None] + np.array([0.0, 0.0, 1.0])).ravel(), 0.9)
    assert unshrunk > 1.4
    lo, hi = group_interval(np.exp(x), lab)
    assert math.exp(0.5) < hi < math.exp(1.0) and lo < 1.0


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abcde"), st.floats(-1.0, 1.0)), min_size=3,
                max_size=40), st.floats(-2.0, 2.0))
def test_scaling_every_ratio_scales_the_interval_and_names_do_not_matter(rows, c):
    lab = [g for g, _ in rows]
    x = np.array([v for _, v in rows])
    lo, hi = group_interval(np.exp(x), lab)
    assert lo <= hi
    lo2, hi2 = group_interval(np.exp(x + c), lab)
    assert (lo2, hi2) == pytest.approx((lo * math.exp(c), hi * math.exp(c)), rel=1e-9)
    renamed = [{"a": "e", "b": "d", "c": "c", "d": "b", "e": "a"}[g] for g in lab]
    assert group_interval(np.exp(x), renamed) == pytest.approx((lo, hi), rel=1e-12)


def test_coverage_judges_each_group_by_the_others():
    # Two groups far apart and tight: each judged by the other's interval falls outside it.
    x = np.concatenate([np.full(10, -0.5), np.full(10, 0.5)])
    lab = np.repeat(["a", "b"], 10)
    assert cv_coverage(np.exp(x), lab) == 0.0
    # The same rows in one group's scatter: a random split keeps most rows inside.
    mixed = np.tile(["a", "b"], 10)
    assert cv_coverage(np.exp(x), mixed) >= 0.75


@pytest.mark.parametrize("ratios, labels, match", [
    ([1.0, -0.5], ["a", "b"], "finite number > 0"),
    ([1.0, float("nan")], ["a", "b"], "finite number > 0"),
    ([1.0, 1.2], ["a"], "one label per ratio"),
    ([], [], "one label per ratio"),
])
def test_bad_ratios_get_a_library_error(ratios, labels, match):
    with pytest.raises(tk.TokenomicsError, match=match):
        group_interval(ratios, labels)


def test_many_groups_are_read_from_the_sums_distribution_function(monkeypatch):
    # Past four million residual x bias sums the quantiles come from the sums' empirical
    # distribution function, inverted by bisection: the same interval (to the sums' spacing)
    # without holding them, so one group per row of 20,000 rows stays bounded.
    import tokenomics.calibration.intervals as I
    rng = np.random.default_rng(0)
    x = np.exp(rng.normal(0.0, 0.1, 3000))
    lab = rng.integers(0, 40, 3000)
    exact = group_interval(x, lab)
    monkeypatch.setattr(I, "_EXACT_SUMS", 0)
    assert group_interval(x, lab) == pytest.approx(exact, rel=1e-4)
    monkeypatch.undo()
    lo, hi = group_interval(np.exp(rng.normal(0.0, 0.1, 20_000)), np.arange(20_000))
    assert 0.8 < lo < 1.0 < hi < 1.25
