"""SLO queries (best_at, cheapest_at) against the brute-force sweep; the sweep feeds the
frontier."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import tokenomics as tk
from tokenomics.pareto.curves import decode_curve
from tokenomics.pareto.envelope import frontier
from tokenomics.pareto.queries import best_at, cheapest_at, sweep

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
    # the largest whole batch at or above the line, at most the continuous envelope there
    assert isinstance(r.batch, int) and r.tokens_per_s_per_user >= 100
    assert r.tokens_per_s_per_device <= env * (1 + 1e-12)
    # the same answer as inverting each curve exactly at whole batches (issue 14: a frontier
    # gave batch 977.24 and 90.26 where the deployments gave whole batches)
    exact = best_at(deps, 100, context_tokens=4096, efficiency="deployment")
    assert (r.batch, r.label) == (exact.batch, exact.label)
    assert r.tokens_per_s_per_device == pytest.approx(exact.tokens_per_s_per_device, rel=1e-9)
    assert r.step_time_s == pytest.approx(exact.step_time_s, rel=1e-9)
    # one batch more would fall below the line
    d = next(x for x in deps if tk.pareto.deployment_label(x) == r.label)
    assert 1 / tk.decode(d, r.batch + 1, 4096).step_time_s < 100
    with pytest.raises(tk.TokenomicsError, match="no configuration reaches 5000"):
        best_at(f, 5000)


def test_moe_best_at_is_exact_at_whole_batches():
    d = tk.Deployment("qwen3-30b-a3b", "h100-sxm", weight_dtype="fp8", compute_dtype="fp8",
                      kv_dtype="fp8")
    _, B, x, y = _brute(d, 4096)
    r = best_at([d], 300, context_tokens=4096, efficiency="deployment")
    assert r.tokens_per_s_per_device == pytest.approx(y[x >= 300].max(), rel=1e-12)


def test_sweep_feeds_frontier():
    s = sweep([tk.Deployment("llama-3.1-8b", "h100-sxm")], np.arange(1, 65), 2048)
    assert len(s) == 64 and s.tokens_per_s_per_device.is_monotonic_increasing
    f = frontier(s, 2048)
    assert len(f) >= 2


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


def test_best_at_errors():
    with pytest.raises(tk.TokenomicsError, match="context_tokens is required"):
        best_at([tk.Deployment("llama-3.1-8b", "h100-sxm")], 100)


def test_cheapest_at_over_h200_b200_mi300x_needs_no_prices_and_names_its_basis():
    deps = []
    for h in ("h200", "b200", "mi300x"):
        for tp in (1, 2, 4, 8):
            d = tk.Deployment("llama-3.1-70b", h, tp=tp, weight_dtype="fp8",
                              compute_dtype="fp8", kv_dtype="fp8")
            deps.append(d)
    with warnings.catch_warnings():
        warnings.simplefilter("error")      # all three on neocloud on-demand: no warning
        r = cheapest_at(deps, 30, 4096)
    assert r.price_tier == "neocloud-on-demand" and r.price_date
    assert r.attrs["price_basis"] == ("neocloud-on-demand > hyperscaler-on-demand > estimate > "
                                      "owned, latest")
    # the winner's cost is its price over its throughput, by hand
    assert r.cost_usd_per_mtok == pytest.approx(
        r.price_usd_per_device_hour / 3600 / r.tokens_per_s_per_device * 1e6)


def test_sweep_and_frontier_carry_price_columns():
    d = tk.Deployment("llama-3.1-8b", "h100-sxm")
    s = sweep([d], [1, 8], 2048)
    assert set(s.price_tier) == {"neocloud-on-demand"} and set(s.price_date) == {"2026-05-07"}
    f = tk.frontier([d], 2048, price_basis="hyperscaler-on-demand")
    # the latest hyperscaler on-demand price: Oracle OCI BM.GPU.H100.8 at $10.00 per GPU-hour
    # (oci-price-list-gpu-2026-09, 2026-09-19), newer than AWS p5.48xlarge's $98.32 / 8 GPUs
    # = $12.29 (computespec-cost-per-gpu-hour)
    assert (f.price_usd_per_device_hour == 10.0).all() and set(f.price_date) == {"2026-09-19"}
    assert f.attrs["price_basis"] == "hyperscaler-on-demand, latest"


def test_operating_point_is_typed_read_only_and_tabulates():
    # issue 14: best_at / cheapest_at returned object-dtype Series
    deps = [tk.Deployment("llama-3.1-8b", h) for h in ("h100-sxm", "h200")]
    r = cheapest_at(deps, 50, 2048, prices={"h100-sxm": 2.0, "h200": 3.0})
    assert r["batch"] == r.batch and isinstance(r.batch, int) and r.batch >= 1
    assert r.attrs["price_basis"]
    f = r.to_frame()
    assert list(f.index) == [r.label] and f.loc[r.label, "hardware"] == r.hardware
    for col in ("tokens_per_s_per_user", "tokens_per_s_per_device", "cost_usd_per_mtok",
                "step_time_s", "batch", "tp"):
        assert f[col].dtype.kind in "if", col
    # cost is price over throughput: USD per device-hour / (tokens/s x 3600) x 1e6
    p = 2.0 if r.hardware == "h100-sxm" else 3.0
    assert r.cost_usd_per_mtok == pytest.approx(p / (r.tokens_per_s_per_device * 3600) * 1e6)
    with pytest.raises(AttributeError, match="read-only"):
        r.batch = 3
    with pytest.raises(AttributeError, match="no field 'nope'"):
        getattr(r, "nope")  # noqa: B009
    assert f"batch={r.batch}" in repr(r) and r.label in repr(r)
    assert dict(r) == r.to_series().to_dict()


def test_an_operating_point_is_built_from_a_mapping():
    with pytest.raises(tk.TokenomicsError, match="mapping of field -> value"):
        tk.OperatingPoint(7)


def test_a_candidate_that_does_not_fit_is_skipped_with_a_warning():
    # issue 26: Llama 3.1 70B at BF16 (141 GB) on one H200 (141 GB, 90% usable) holds no
    # sequence; over TP 1/2/4/8 cheapest_at and best_at raised DoesNotFitError for TP1.
    # They now skip it, name it, and answer from TP 2/4/8 as if TP1 were not given
    deps = [tk.Deployment("llama-3.1-70b", "h200", tp=t) for t in (1, 2, 4, 8)]
    prices = {"h200": 3.0}
    with pytest.warns(UserWarning, match=r"skipped 1 candidate.*1xh200 tp1"):
        r = cheapest_at(deps, 20, 2048, prices=prices)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ref = cheapest_at(deps[1:], 20, 2048, prices=prices)
    assert (r.label, r.batch, r.cost_usd_per_mtok) == (ref.label, ref.batch, ref.cost_usd_per_mtok)
    with pytest.warns(UserWarning, match="skipped 1 candidate"):
        assert best_at(deps, 20, 2048).label == best_at(deps[1:], 20, 2048).label
    with pytest.raises(tk.DoesNotFitError, match="no candidate fits"):
        best_at(deps[:1], 20, 2048)


def test_a_tpot_ceiling_is_the_inverse_floor():
    # a TPOT of at most 50 ms is at least 1 / 0.05 = 20 tokens/s per user, whether given as a
    # time Quantity in the floor's place or as max_tpot_s (a number in s or a Quantity)
    d = [tk.Deployment("llama-3.1-8b", "h100-sxm")]
    ref = best_at(d, 20, 2048)
    for r in (best_at(d, tk.Q_(50, "ms"), 2048), best_at(d, max_tpot_s=0.05, context_tokens=2048),
              best_at(d, max_tpot_s=tk.Q_(50, "ms"), context_tokens=2048),
              best_at(d, tk.Q_(20, "token/s"), 2048)):
        assert (r.batch, r.tokens_per_s_per_device) == (ref.batch, ref.tokens_per_s_per_device)
    assert ref.step_time_s <= 0.05
    with pytest.raises(tk.TokenomicsError, match="give the interactivity service level once"):
        best_at(d, 20, 2048, max_tpot_s=0.05)
    with pytest.raises(tk.TokenomicsError, match="max_tpot_s"):
        best_at(d, max_tpot_s=-1.0, context_tokens=2048)
    with pytest.raises(tk.UnitError):
        best_at(d, tk.Q_(3, "GB"), 2048)
