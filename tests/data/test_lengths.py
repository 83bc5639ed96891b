"""Request-length distributions of benchmark datasets: nodes, means, length bias."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tokenomics as tk
from tokenomics.data.lengths import RequestLengths, request_lengths, request_lengths_table


@pytest.mark.parametrize("name, input_mean, output_mean", [
    # the tasks' published means (MLCommons READMEs; the dataset extracts reproduce
    # Mixtral's 144.84, 405B's 684.68 and DeepSeek-R1's 3,886.2274 tokens per sample)
    ("mlperf-llama2-70b", 222.33, 294.45),
    ("mlperf-mixtral-8x7b", 427.39, 144.84),
    ("mlperf-llama3.1-405b", 9428.64, 684.68),
    ("mlperf-llama3.1-8b", 870.73, 125.0),
    ("mlperf-deepseek-r1", 803.79, 3886.23),
])
def test_the_nodes_keep_the_published_means(name, input_mean, output_mean):
    d = request_lengths(name)
    assert d.input_mean == pytest.approx(input_mean, rel=1e-9)
    assert d.output_mean == pytest.approx(output_mean, rel=1e-9)
    assert d.source


def test_the_405b_task_is_not_the_4000_tokens_once_assumed():
    # issue 24: 9,429 tokens on average, 2.4x the 4,000 the corpus assumed
    assert request_lengths("mlperf-llama3.1-405b").input_mean / 4000 == pytest.approx(2.357,
                                                                                     rel=1e-3)


def test_the_nodes_follow_the_published_quantiles():
    # Llama 2 70B inputs: median 152, p90 519; equal-probability nodes from the piecewise
    # linear inverse CDF, scaled to the mean, put about half below 152 x (scale) and a tenth
    # above 519 x (scale).
    d = request_lengths("mlperf-llama2-70b")
    x = np.array(d.input_nodes)
    assert len(x) == 16 and np.all(np.diff(x) > 0)
    w = np.array(d.input_weights)
    assert w.sum() == pytest.approx(1.0) and np.allclose(w, 1 / 16)
    # the median node pair straddles the published median within the mean scaling
    scale = d.input_mean / np.interp((np.arange(16) + 0.5) / 16,
                                     [0, .01, .05, .1, .25, .5, .75, .9, .95, .99, 1],
                                     [48, 56, 73, 85, 109, 152, 266, 519, 614, 791, 1021]).mean()
    assert x[7] <= 152 * scale <= x[8]


def test_slot_context_is_length_biased():
    # Two outputs, 100 and 900 tokens, equally likely, after a 1,000-token prompt: a
    # decoding slot is held 900/1000 of the time by the long one, so its mean context is
    # I + E[O^2] / (2 E[O]) = 1000 + (0.5 x 100^2 + 0.5 x 900^2) / (2 x 500) = 1410, not
    # the 1,250 of I + E[O]/2.
    d = RequestLengths("t", (1000.0,), (1.0,), (100.0, 900.0), (0.5, 0.5))
    assert d.slot_context_mean == pytest.approx(1410.0)
    ctx, w = d.decode_nodes()
    assert np.allclose(ctx, [1050.0, 1450.0]) and np.allclose(w, [0.1, 0.9])


@settings(max_examples=40, deadline=None)
@given(i=st.integers(1, 100_000), o=st.integers(1, 100_000))
def test_a_fixed_shape_is_a_point_mass(i, o):
    d = RequestLengths.fixed(i, o)
    assert d.input_mean == i and d.output_mean == o
    assert d.slot_context_mean == pytest.approx(i + o / 2)


def test_table_lists_every_bundled_workload():
    t = request_lengths_table()
    assert {"mlperf-llama2-70b", "mlperf-llama3.1-405b"} <= set(t.index)
    assert (t.slot_context_mean_tokens >= t.mean_only_context_tokens - 1e-9).all()


def test_bad_distributions_are_refused():
    with pytest.raises(tk.UnknownEntryError, match="bundled"):
        request_lengths("sharegpt-v9")
    with pytest.raises(tk.TokenomicsError, match="sum to 1"):
        RequestLengths("x", (10.0,), (0.5,), (10.0,), (1.0,))
    with pytest.raises(tk.TokenomicsError, match=">= 1 token"):
        RequestLengths("x", (0.0,), (1.0,), (10.0,), (1.0,))
    with pytest.raises(tk.TokenomicsError, match="rise from min to max"):
        RequestLengths.from_quantiles("x", {"mean": 10, "quantiles": {"p10": 9, "p50": 5}},
                                      {"mean": 10})
    with pytest.raises(tk.TokenomicsError, match="at least a mean"):
        RequestLengths.from_quantiles("x", {"median": 10}, {"mean": 10})
