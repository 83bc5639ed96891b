"""A decode step at one context as lines in the batch, against the full engine."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tokenomics as tk
from tokenomics.pareto.curves import _step_time
from tokenomics.physics.collectives import ALGORITHMS, step_comm
from tokenomics.physics.lines import crossing_batch, step_lines, two_point_line

CAL = tk.efficiency_presets()["calibrated"]
# Dense, windowed, pipelined, MoE (with and without expert parallelism), MLA, calibrated
DEPLOYMENTS = [
    tk.Deployment("llama-3.1-70b", "h100-sxm", tp=4),
    tk.Deployment("llama-3.1-70b", "h100-sxm", tp=4, efficiency=CAL),
    tk.Deployment("llama-3.1-70b", "h100-sxm", tp=4, pp=2, efficiency=CAL),
    tk.Deployment("llama-3.1-8b", "h100-sxm", tp=2, allreduce_algorithm="tree"),
    tk.Deployment("gemma-3-27b", "h200", efficiency=CAL),
    tk.Deployment("qwen3-30b-a3b", "h100-sxm", efficiency=CAL),
    tk.Deployment("deepseek-v3", "h200", tp=8, efficiency=CAL),
    tk.Deployment("deepseek-v3", "h200", tp=8, ep=8, efficiency=CAL),
    tk.Deployment("llama-3.1-70b", "h100-sxm", tp=8, comm_overlap=0.6, efficiency=CAL),
]


@settings(max_examples=40, deadline=None)
@given(i=st.integers(0, len(DEPLOYMENTS) - 1), ctx=st.integers(1, 100_000),
       T=st.sampled_from([1.0, 3.0, 5.0]),
       B=st.lists(st.floats(1.0, 4096.0), min_size=1, max_size=8))
def test_lines_equal_the_engine(i, ctx, T, B):
    # The lines are read from the engine at batches 1 and 2; they must give its step time at
    # every batch, fractional ones and the experts' curved term included, to 1e-12.
    d = DEPLOYMENTS[i]
    got = step_lines(d, float(ctx), T).time(np.asarray(B))
    want = _step_time(d, np.asarray(B), float(ctx), T)
    assert np.allclose(got, want, rtol=1e-12, atol=0)


def test_kinks_are_where_an_operator_turns_compute_bound():
    # Llama 3.1 70B on 4 x H100 at 4,096 tokens. A weight GEMM reads its weights once a step
    # (2 B a parameter at BF16) and does 2 FLOPs a parameter per sequence, so it turns
    # compute-bound at B* = P b_w / (2 beta) = 989.4e12 / 3.35e12 = 295.3 without
    # activations; their bytes, growing with the batch, push each ridge up a few percent.
    # Four weight GEMMs (QKV, output, FFN, LM head): four ridges in (295.3, 325). Attention's
    # KV grows with the batch as fast as its FLOPs: it never turns.
    d = tk.Deployment("llama-3.1-70b", "h100-sxm", tp=4)
    ks = [k for k in step_lines(d, 4096.0).kinks() if 295.3 < k < 325]
    assert len(ks) == 4
    t = _step_time(d, np.array([200.0, 250.0, 330.0, 380.0]), 4096.0)
    assert (t[3] - t[2]) / 50 > (t[1] - t[0]) / 50 * 1.01   # steeper past the ridges


def test_crossing_batch_by_hand():
    # 1 ms + 0.01 ms b meets 2 ms + 0.005 ms b at b = (2 - 1)/(0.01 - 0.005) = 200
    assert crossing_batch(1e-3, 1e-5, 2e-3, 5e-6) == pytest.approx(200.0, rel=1e-12)
    assert crossing_batch(1e-3, 1e-5, 2e-3, 1e-5) is None        # parallel
    assert crossing_batch(2e-3, 1e-5, 1e-3, 5e-6) is None        # they met at b = -200


def test_step_comm_each_is_every_algorithm_and_auto_their_minimum():
    d = tk.Deployment("llama-3.1-70b", "h100-sxm", tp=8)
    b = np.array([1.0, 64.0, 512.0])
    each = {c.name: np.asarray(c.time_s) for c in step_comm(d, b, 1.0, 1.0, algorithm="each")}
    auto = {c.name: np.asarray(c.time_s) for c in step_comm(d, b, 1.0, 1.0)}
    for k, a in enumerate(ALGORITHMS):
        one = {c.name: np.asarray(c.time_s)
               for c in step_comm(d.with_(allreduce_algorithm=a), b, 1.0, 1.0)}
        for name in ("tp_attention_allreduce", "tp_ffn_allreduce"):
            assert np.array_equal(each[name][k], one[name])
    for name in ("tp_attention_allreduce", "tp_ffn_allreduce"):
        assert np.array_equal(auto[name], each[name].min(axis=0))
    with pytest.raises(tk.TokenomicsError, match="unknown all-reduce algorithm 'fast'"):
        step_comm(d, b, 1.0, 1.0, algorithm="fast")


def test_a_deployment_pickles_without_what_its_fast_paths_keep():
    d = tk.Deployment("llama-3.1-8b", "h100-sxm")
    for _ in range(5):
        tk.decode(d, 8, 4096)
    tk.decode_curve(d, 4096)
    assert "_decode_plan" in d.__dict__ and "_decode_curves" in d.__dict__
    e = pickle.loads(pickle.dumps(d))
    assert e == d and not [k for k in e.__dict__ if k.startswith("_")]
    assert tk.decode(e, 8, 4096).time_s == tk.decode(d, 8, 4096).time_s
    assert dict(e.hardware.peak_flop_per_s) == dict(d.hardware.peak_flop_per_s)


@pytest.mark.parametrize("ctx, T, match", [(-5, 1, "context_tokens"),
                                           (float("nan"), 1, "context_tokens"),
                                           ("x", 1, "context_tokens"), (4096, 0, ">= 1")])
def test_step_lines_refuses_what_is_not_a_context_or_a_token_count(ctx, T, match):
    with pytest.raises(tk.TokenomicsError, match=match):
        step_lines(DEPLOYMENTS[0], ctx, T)


def test_two_point_line_by_hand():
    # through (1, 3) and (2, 5): slope 2, intercept 1; a constant is a flat line
    assert two_point_line([3.0, 5.0]) == (1.0, 2.0)
    assert two_point_line(4.0) == (4.0, 0.0)
