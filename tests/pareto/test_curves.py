"""Decode curves in closed form against the brute-force step engine: kinks, MoE refinement,
speculative cycles."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import tokenomics as tk
from tokenomics.pareto.curves import CURVE_RTOL, decode_curve
from tokenomics.pareto.envelope import frontier

# The dense-deployment strategy and the brute-force helper are repeated in test_curves.py,
# test_envelope.py and test_queries.py (test modules do not import each other).
DENSE = [("llama-3.1-8b", (1, 2, 4, 8)), ("qwen3-32b", (1, 2, 4, 8)),
         ("llama-3.1-70b", (2, 4, 8)), ("gemma-3-27b", (1, 2))]
HW = ["h100-sxm", "h200", "b200"]


@st.composite
def dense_deployment(draw):
    model, tps = draw(st.sampled_from(DENSE))
    tp = draw(st.sampled_from(tps))
    hw = draw(st.sampled_from(HW))
    fp8 = draw(st.booleans())
    kw = dict(weight_dtype="fp8", compute_dtype="fp8", kv_dtype="fp8") if fp8 else {}
    dep = tk.Deployment(model, hw, tp=tp, **kw)
    assume(tk.max_batch(dep, 16_384) >= 1)   # at least one sequence fits at any test context
    return dep


def _brute(dep, ctx):
    c = decode_curve(dep, ctx)
    B = np.arange(1, c.max_batch + 1)
    r = tk.decode(dep, B, ctx)
    return c, B, np.asarray(r.tokens_per_s_per_user), np.asarray(r.tokens_per_s_per_device)


@given(dep=dense_deployment(), ctx=st.integers(128, 16_384))
def test_every_whole_batch_lies_on_the_closed_form_curve(dep, ctx):
    c, B, x, y = _brute(dep, ctx)
    # Between kinks the curve is a straight line in (x, y): the closed form reproduces every
    # brute-force point to 1e-9.
    assert np.allclose(c.throughput_at(x), y, rtol=1e-9, atol=0)


MOE = [("qwen3-30b-a3b", "h100-sxm", 1, "fp8"), ("gpt-oss-120b", "h100-sxm", 1, None),
       ("mixtral-8x7b", "h100-sxm", 2, None), ("deepseek-v3", "h200", 8, "fp8")]


@pytest.mark.parametrize("model, hw, tp, fmt", MOE)
@settings(max_examples=8, deadline=None)
@given(ctx=st.integers(256, 16_384))
def test_moe_curve_follows_the_exact_step_time_between_vertices(model, hw, tp, fmt, ctx):
    # The distinct-expert term E (1 - (1 - k/E)^B) bends every piece of an MoE curve; the
    # polyline must stay within CURVE_RTOL (1e-4) of the exact step time everywhere, not only
    # at its vertices (a chord through 50/75/90/99% expert coverage alone missed by up to 12%).
    kw = dict(weight_dtype=fmt, compute_dtype=fmt) if fmt else {}
    c = decode_curve(tk.Deployment(model, hw, tp=tp, **kw), ctx)
    B = np.linspace(1.0, c.max_batch, 4001)
    exact = c.time_at(B)
    assert np.all(np.abs(np.interp(B, c.batch, c.step_time_s) / exact - 1) <= 1.5 * CURVE_RTOL)
    assert np.all(np.diff(c.batch) > 0) and np.all(np.diff(c.step_time_s) > 0)


def test_dense_curves_need_no_refinement():
    # Between its kinks a dense curve is straight: no vertex beyond 1, the kinks and max batch.
    d = tk.Deployment("llama-3.1-70b", "h100-sxm", tp=4)
    c = decode_curve(d, 4096)
    assert c.batch[0] == 1 and c.batch[-1] == c.max_batch and len(c.batch) <= 8
    B = np.linspace(1.0, c.max_batch, 4001)
    assert np.allclose(np.interp(B, c.batch, c.step_time_s), c.time_at(B), rtol=1e-12)


def test_decode_curve_errors():
    with pytest.raises(tk.DoesNotFitError, match="not one sequence"):
        decode_curve(tk.Deployment("llama-3.1-70b", "h100-sxm", tp=2), 131_072)


def test_speculative_curve_agrees_with_the_speculative_module():
    d = tk.Deployment("llama-3.1-70b", "h100-sxm", tp=4)
    spec = dict(k=4, alpha=0.8, draft_fraction=0.01)
    c = decode_curve(d, 2048, spec)
    B = np.array([1, 8, 32, 64])
    r = tk.speculative_decode(d, B, 2048, k=4, alpha=0.8, draft_fraction=0.01)
    x = np.asarray(r.tokens_per_s_per_user)
    assert np.allclose(c.throughput_at(x), np.asarray(r.tokens_per_s_per_device), rtol=1e-9)
    # Speculation on/off as a discrete choice: on wins at high interactivity.
    f = frontier([d], 2048, speculation=(None, spec), efficiency="deployment")
    fastest = f.sort_values("tokens_per_s_per_user").iloc[-1]
    assert fastest.speculation_k == 4
    assert set(f.speculation_k) <= {0, 4}


def test_speculation_errors():
    d = tk.Deployment("llama-3.1-8b", "h100-sxm")
    with pytest.raises(tk.TokenomicsError, match="exactly one of alpha"):
        decode_curve(d, 2048, dict(k=4, draft_fraction=0.01))
    with pytest.raises(tk.TokenomicsError, match="k >= 1"):
        decode_curve(d, 2048, dict(k=0, alpha=0.8, draft_fraction=0.01))
