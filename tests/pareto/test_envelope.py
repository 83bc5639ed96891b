"""Closed-form Pareto frontier against the brute-force sweep; SLO queries; the SymPy oracle."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import tokenomics as tk
from tokenomics.pareto.envelope import (
    CURVE_RTOL,
    best_at,
    cheapest_at,
    crossings,
    decode_curve,
    frontier,
    pareto_mask,
    sweep,
)
from tokenomics.pareto.symbolic import frontier_line, ridge_batch

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


@given(deps=st.lists(dense_deployment(), min_size=2, max_size=4), ctx=st.integers(256, 8192))
def test_envelope_equals_brute_force_nondominated_set(deps, ctx):
    f = frontier(deps, ctx, efficiency="deployment")
    xs, ys = [], []
    for d in deps:
        _, _, x, y = _brute(d, ctx)
        xs.append(x)
        ys.append(y)
    x, y = np.concatenate(xs), np.concatenate(ys)
    keep = pareto_mask(x, y)
    # No brute-force point lies above the closed-form envelope; each lies on its own curve
    # (previous test), so the envelope at a brute-force Pareto point is that point or a
    # fractional-batch point of another curve that beats it.
    curves = [decode_curve(d, ctx) for d in deps]
    env = np.nanmax(np.vstack([c.throughput_at(x[keep]) for c in curves]), axis=0)
    assert np.all(y[keep] <= env * (1 + 1e-9))
    # Frontier rows are mutually non-dominated, and no brute-force point beats one of them.
    fx, fy = f.tokens_per_s_per_user.to_numpy(), f.tokens_per_s_per_device.to_numpy()
    assert pareto_mask(fx, fy).all()
    for xi, yi in zip(x[keep], y[keep], strict=True):
        beaten = (xi >= fx * (1 + 1e-9)) & (yi >= fy * (1 + 1e-9))
        assert not beaten.any()


@given(deps=st.lists(dense_deployment(), min_size=1, max_size=3), ctx=st.integers(256, 8192),
       X=st.floats(5, 400))
def test_best_at_equals_brute_force(deps, ctx, X):
    best_y = -1.0
    for d in deps:
        _, _, x, y = _brute(d, ctx)
        ok = x >= X
        if ok.any():
            best_y = max(best_y, float(y[ok].max()))
    if best_y < 0:
        with pytest.raises(tk.TokenomicsError, match="no configuration reaches"):
            best_at(deps, X, context_tokens=ctx, efficiency="deployment")
        return
    r = best_at(deps, X, context_tokens=ctx, efficiency="deployment")
    assert r.tokens_per_s_per_device == pytest.approx(best_y, rel=1e-12)
    assert r.tokens_per_s_per_user >= X


def test_best_at_on_a_frontier_is_its_value_at_x():
    deps = [tk.Deployment("llama-3.3-70b", h, tp=tp, weight_dtype="fp8", compute_dtype="fp8",
                          kv_dtype="fp8") for h in ("h100-sxm", "h200") for tp in (2, 4, 8)]
    f = frontier(deps, 4096, efficiency="deployment")
    # S23: "the service needs >= 100 tokens/s per user": the vertical line at x = 100.
    r = best_at(f, 100)
    curves = [decode_curve(d, 4096) for d in deps]
    env = np.nanmax([c.throughput_at(100.0) for c in curves])
    assert r.tokens_per_s_per_user == 100
    assert r.tokens_per_s_per_device == pytest.approx(env, rel=1e-9)
    with pytest.raises(tk.TokenomicsError, match="no configuration reaches 5000"):
        best_at(f, 5000)


def test_moe_best_at_is_exact_at_whole_batches():
    d = tk.Deployment("qwen3-30b-a3b", "h100-sxm", weight_dtype="fp8", compute_dtype="fp8",
                      kv_dtype="fp8")
    _, B, x, y = _brute(d, 4096)
    r = best_at([d], 300, context_tokens=4096, efficiency="deployment")
    assert r.tokens_per_s_per_device == pytest.approx(y[x >= 300].max(), rel=1e-12)


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


@given(st.lists(st.tuples(st.floats(0, 100), st.floats(0, 20)), min_size=0, max_size=60))
def test_overlapping_pairs_are_exactly_the_overlapping_intervals(iv):
    # The crossing search only pairs segments whose x-ranges overlap; it must find them all.
    from tokenomics.pareto.envelope import _overlapping_pairs

    lo = np.asarray([a for a, _ in iv], float)
    hi = lo + np.asarray([w for _, w in iv], float)
    i, j = _overlapping_pairs(lo, hi)
    got = {frozenset((int(a), int(b))) for a, b in zip(i, j, strict=True)}
    assert len(got) == len(i) and all(len(p) == 2 for p in got)          # each pair once
    want = {frozenset((a, b)) for a in range(len(iv)) for b in range(a + 1, len(iv))
            if min(hi[a], hi[b]) > max(lo[a], lo[b])}
    assert want <= got
    # Extra pairs may only touch at an end (zero-length overlap), never lie apart.
    assert all(min(hi[a], hi[b]) >= max(lo[a], lo[b]) for a, b in map(tuple, got))


def test_dense_curves_need_no_refinement():
    # Between its kinks a dense curve is straight: no vertex beyond 1, the kinks and max batch.
    d = tk.Deployment("llama-3.1-70b", "h100-sxm", tp=4)
    c = decode_curve(d, 4096)
    assert c.batch[0] == 1 and c.batch[-1] == c.max_batch and len(c.batch) <= 8
    B = np.linspace(1.0, c.max_batch, 4001)
    assert np.allclose(np.interp(B, c.batch, c.step_time_s), c.time_at(B), rtol=1e-12)


def test_frontier_skips_layouts_that_do_not_fit_when_asked():
    # DeepSeek-V3 in FP8 is 673 GB: 8 x H100 (640 GB) cannot hold it, 8 x H200 (1,128 GB) can.
    h100 = tk.Deployment("deepseek-v3", "h100-sxm", tp=8, weight_dtype="fp8",
                         compute_dtype="fp8")
    h200 = h100.with_(hardware=tk.hardware("h200"))
    with pytest.raises(tk.DoesNotFitError, match="8 x h100-sxm.*pass on_oom='skip'"):
        frontier([h100, h200], 4096)
    f = frontier([h100, h200], 4096, on_oom="skip")
    assert set(f.hardware) == {"h200"} and len(f.attrs["skipped"]) == 1
    assert "8xh100-sxm" in f.attrs["skipped"][0]
    with pytest.raises(tk.DoesNotFitError, match="no deployment fits one sequence"):
        frontier([h100], 4096, on_oom="skip")
    with pytest.raises(tk.TokenomicsError, match="on_oom must be 'raise' or 'skip'"):
        frontier([h200], 4096, on_oom="mark")


def test_frontier_columns_cost_and_energy():
    d = tk.Deployment("llama-3.1-8b", "h100-sxm")
    f = frontier([d], 2048)
    assert set(f.efficiency) == {"calibrated"}      # the forecast is the default
    f = frontier([d], 2048, efficiency="roofline")
    assert set(f.efficiency) == {"roofline"}
    for col in ("tokens_per_s_per_user", "tokens_per_s_per_device", "cost_usd_per_mtok",
                "joules_per_token", "model", "hardware", "tp", "batch"):
        assert col in f
    p = tk.rental_price(tk.hardware("h100-sxm")).usd
    assert np.allclose(f.cost_usd_per_mtok, p / 3600 / f.tokens_per_s_per_device * 1e6)
    assert np.allclose(f.joules_per_token, 700 / f.tokens_per_s_per_device)


def test_sweep_feeds_frontier():
    s = sweep([tk.Deployment("llama-3.1-8b", "h100-sxm")], np.arange(1, 65), 2048)
    assert len(s) == 64 and s.tokens_per_s_per_device.is_monotonic_increasing
    f = frontier(s, 2048)
    assert len(f) >= 2


def test_sympy_oracle_for_a_linear_piece():
    # Two whole batches on one piece of a curve give alpha and beta; the SymPy line
    # y = (1 - beta x)/(alpha n) reproduces the numeric throughput.
    d = tk.Deployment("llama-3.1-70b", "h100-sxm", tp=4)
    r = tk.decode(d, [2, 3, 4], 2048)
    t = np.asarray(r.step_time_s)
    alpha, beta = t[1] - t[0], t[0] - 2 * (t[1] - t[0])
    x, a, b, n = sp.symbols("x alpha beta n", positive=True)
    fy = sp.lambdify((x, a, b, n), frontier_line())
    assert fy(1 / t[2], alpha, beta, 4) == pytest.approx(r.tokens_per_s_per_device[2],
                                                          rel=1e-9)
    # The ridge batch formula matches the kink the closed form finds for one operator.
    P, Q0, Q1, bm, F1 = sp.symbols("P Q0 Q1 beta_m F1", positive=True)
    assert sp.simplify(ridge_batch() - P * Q0 / (F1 * bm - P * Q1)) == 0


def test_errors():
    with pytest.raises(tk.TokenomicsError, match="deployments must be Deployment"):
        frontier([], 2048)
    with pytest.raises(tk.TokenomicsError, match="context_tokens is required"):
        best_at([tk.Deployment("llama-3.1-8b", "h100-sxm")], 100)
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


def test_cheapest_at_by_hand():
    deps = [tk.Deployment("llama-3.1-8b", h) for h in ("h100-sxm", "h200")]
    prices = {"h100-sxm": 2.0, "h200": 3.0}
    r = cheapest_at(deps, 50, 2048, prices=prices)
    costs = {}
    for d in deps:
        b = best_at([d], 50, context_tokens=2048)   # both default to the calibrated forecast
        costs[d.hardware.id] = prices[d.hardware.id] / 3600 / b.tokens_per_s_per_device * 1e6
    assert r.cost_usd_per_mtok == pytest.approx(min(costs.values()), rel=1e-12)
    assert r.hardware == min(costs, key=costs.get)
    with pytest.raises(tk.TokenomicsError, match="no priced configuration reaches"):
        cheapest_at(deps, 1e6, 2048, prices=prices)


def test_crossings_are_where_two_curves_meet():
    a = tk.Deployment("llama-3.1-70b", "h200", tp=4, weight_dtype="fp8", compute_dtype="fp8")
    b = tk.Deployment("llama-3.1-70b", "h200", tp=8, weight_dtype="fp8", compute_dtype="fp8")
    x = crossings(a, b, context_tokens=4096)
    ca, cb = decode_curve(a, 4096), decode_curve(b, 4096)
    for xv, yv in zip(x.tokens_per_s_per_user, x.tokens_per_s_per_device, strict=True):
        assert ca.throughput_at(xv) == pytest.approx(yv, rel=1e-9)
        assert cb.throughput_at(xv) == pytest.approx(yv, rel=1e-9)


def test_speculation_errors():
    d = tk.Deployment("llama-3.1-8b", "h100-sxm")
    with pytest.raises(tk.TokenomicsError, match="exactly one of alpha"):
        decode_curve(d, 2048, dict(k=4, draft_fraction=0.01))
    with pytest.raises(tk.TokenomicsError, match="k >= 1"):
        decode_curve(d, 2048, dict(k=0, alpha=0.8, draft_fraction=0.01))
