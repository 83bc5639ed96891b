"""The closed-form envelope against the brute-force non-dominated set; crossings; the
overlap search; frontier options and columns."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import tokenomics as tk
from tokenomics.pareto import envelope as env
from tokenomics.pareto.curves import decode_curve
from tokenomics.pareto.envelope import (
    _dominated,
    _overlapping_pairs,
    crossings,
    frontier,
    pareto_mask,
)

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


@given(deps=st.lists(dense_deployment(), min_size=2, max_size=5), ctx=st.integers(256, 8192))
def test_dominated_flags_equal_the_full_envelope_test(deps, ctx):
    # the frontier tests only the non-dominated candidates against every curve (issue 15:
    # the cost grows about linearly); the flags must equal testing every candidate row
    f = frontier(deps, ctx, efficiency="deployment", include_dominated=True)
    x, y = f.tokens_per_s_per_user.to_numpy(), f.tokens_per_s_per_device.to_numpy()
    curves = [decode_curve(d, ctx) for d in deps]
    env = np.nanmax(np.vstack([c.throughput_at(x) for c in curves]), axis=0)
    reference = _dominated(x, y) | (y < env * (1 - 1e-12))     # every row, every curve
    # of points that coincide, which one counts as dominated depends on the row order (the
    # table is sorted after the test): compare the rows whose point is their own
    _, inv, counts = np.unique(np.round(np.c_[x, y], 9), axis=0, return_inverse=True,
                               return_counts=True)
    single = counts[inv.ravel()] == 1
    assert (f.dominated.to_numpy()[single] == reference[single]).all()


CAL = tk.efficiency_presets()["calibrated"]


@settings(max_examples=30, deadline=None)
@given(deps=st.lists(dense_deployment(), min_size=3, max_size=14), ctx=st.integers(256, 8192),
       cal=st.lists(st.booleans(), min_size=14, max_size=14))
def test_the_pruned_envelope_equals_the_unpruned_one(deps, ctx, cal):
    # The frontier pairs only the curves that reach the envelope and keeps only the top
    # curve at each end and height; with every curve and every candidate kept (the search
    # it replaced) the frontier must be the same points.
    deps = [d.with_(efficiency=CAL) if c else d for d, c in zip(deps, cal, strict=False)]
    fast = frontier(deps, ctx)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(env, "_envelope_curves", lambda curves: list(range(len(curves))))
        mp.setattr(env, "_tops", lambda parts, n, size: [
            (i, lo + j) for i in range(n) for lo, hi, v in [parts(i)] for j in range(hi - lo)])
        full = frontier(deps, ctx)
    cols = ["tokens_per_s_per_user", "tokens_per_s_per_device"]
    assert len(fast) == len(full)
    assert np.allclose(fast[cols].to_numpy(), full[cols].to_numpy(), rtol=1e-12, atol=0)
    assert list(fast.label) == list(full.label)


def test_a_curve_is_kept_on_its_deployment_and_read_only():
    d = tk.Deployment("llama-3.1-70b", "h100-sxm", tp=4)
    c = decode_curve(d, 4096)
    assert decode_curve(d, 4096) is c                     # asked again: the same curve
    assert decode_curve(d, 4096, dict(k=4, alpha=0.8, draft_fraction=0.01)) is not c
    with pytest.raises(ValueError, match="read-only"):
        c.batch[0] = 2.0
    assert decode_curve(d.with_(), 4096) is not c         # a copy computes its own


@given(st.lists(st.tuples(st.floats(0, 100), st.floats(0, 20)), min_size=0, max_size=60))
def test_overlapping_pairs_are_exactly_the_overlapping_intervals(iv):
    # The crossing search only pairs segments whose x-ranges overlap; it must find them all.
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
    assert set(f.efficiency) == {"roofline"}        # the deployment's own: the bound
    assert set(frontier([d], 2048, efficiency="calibrated").efficiency) == {"calibrated"}
    f = frontier([d], 2048, efficiency="roofline")
    assert set(f.efficiency) == {"roofline"}
    for col in ("tokens_per_s_per_user", "tokens_per_s_per_device", "cost_usd_per_mtok",
                "joules_per_token", "model", "hardware", "tp", "batch"):
        assert col in f
    p = tk.rental_price(tk.hardware("h100-sxm")).usd
    assert np.allclose(f.cost_usd_per_mtok, p / 3600 / f.tokens_per_s_per_device * 1e6)
    assert np.allclose(f.joules_per_token, 700 / f.tokens_per_s_per_device)


def test_crossings_are_where_two_curves_meet():
    a = tk.Deployment("llama-3.1-70b", "h200", tp=4, weight_dtype="fp8", compute_dtype="fp8")
    b = tk.Deployment("llama-3.1-70b", "h200", tp=8, weight_dtype="fp8", compute_dtype="fp8")
    x = crossings(a, b, context_tokens=4096)
    ca, cb = decode_curve(a, 4096), decode_curve(b, 4096)
    for xv, yv in zip(x.tokens_per_s_per_user, x.tokens_per_s_per_device, strict=True):
        assert ca.throughput_at(xv) == pytest.approx(yv, rel=1e-9)
        assert cb.throughput_at(xv) == pytest.approx(yv, rel=1e-9)


def test_frontier_errors():
    with pytest.raises(tk.TokenomicsError, match="deployments must be Deployment"):
        frontier([], 2048)


def test_a_kept_speculative_curve_hands_out_a_copy_of_its_option():
    d = tk.Deployment("llama-3.1-70b", "h100-sxm", tp=4)
    spec = dict(k=4, alpha=0.8, draft_fraction=0.01)
    c = decode_curve(d, 2048, spec)
    c.speculation["k"] = 99
    assert decode_curve(d, 2048, spec).speculation["k"] == 4
