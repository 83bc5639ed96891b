"""Hypothesis properties: the laws the physics must obey, whatever the inputs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st

import tokenomics as tk
from tokenomics.core.units import parse_quantity
from tokenomics.physics.formulas import span_sum as _span_sum

pos = st.floats(min_value=1e-3, max_value=1e18, allow_nan=False, allow_infinity=False)
MODELS = ["llama-3.1-8b", "llama-3.1-70b", "deepseek-v3", "gpt-oss-120b", "gemma-3-27b",
          "llama-4-scout", "qwen3-30b-a3b", "mixtral-8x7b"]


@given(flops=st.floats(0, 1e18), nbytes=st.floats(0, 1e15), peak=pos, bw=pos)
def test_roofline_time_at_least_each_bound(flops, nbytes, peak, bw):
    t = tk.roofline_time(flops, nbytes, peak, bw)
    assert t >= flops / peak and t >= nbytes / bw
    assert t == max(flops / peak, nbytes / bw)


@given(i=st.floats(0, 1e6), peak=pos, bw=pos)
def test_attainable_never_above_peak_or_bandwidth_line(i, peak, bw):
    a = tk.attainable_flop_per_s(i, peak, bw)
    assert a <= peak and a <= i * bw * (1 + 1e-12)


@given(model_id=st.sampled_from(MODELS), batch=st.integers(1, 4),
       context=st.integers(1, 32_768), scale=st.floats(1.5, 8))
def test_memory_bound_decode_time_scales_as_one_over_bandwidth(model_id, batch, context, scale):
    hw = tk.hardware("h200")
    d = tk.Deployment(model_id, hw, tp=1, weight_dtype="fp8", compute_dtype="fp8"
                      if model_id != "gpt-oss-120b" else "bf16")
    d_fast = d.with_(hardware=hw.with_(mem_bw_bytes_per_s=hw.mem_bw_bytes_per_s * scale))
    assume(context <= d.model.max_context)
    # The law holds where every operator stays memory-bound on the faster device.
    t = tk.operator_table(d_fast, "decode", batch=batch, context_tokens=context)
    assume((t.bound == "memory").all())
    r, r2 = tk.decode(d, batch, context, on_oom="mark"), tk.decode(d_fast, batch, context,
                                                                    on_oom="mark")
    assert r2.step_time_s == pytest.approx(r.step_time_s / scale, rel=1e-12)


@given(model_id=st.sampled_from(MODELS), context=st.integers(1, 32_768),
       batches=st.lists(st.integers(1, 4096), min_size=2, max_size=6))
def test_decode_throughput_per_device_non_decreasing_in_batch(model_id, context, batches):
    d = tk.Deployment(model_id, "b200", tp=8, weight_dtype="fp8", compute_dtype="fp8"
                      if model_id != "gpt-oss-120b" else "bf16")
    b = np.sort(np.asarray(batches))
    r = tk.decode(d, b, context, on_oom="mark")
    tps = np.asarray(r.tokens_per_s_per_device)
    assert np.all(np.diff(tps) >= -1e-9 * tps[:-1])
    # and per-user speed never rises with batch
    tpu = np.asarray(r.tokens_per_s_per_user)
    assert np.all(np.diff(tpu) <= 1e-9 * tpu[:-1])


@given(c1=st.integers(0, 60_000), c2=st.integers(0, 60_000))
def test_kv_bytes_linear_in_context_without_windows(c1, c2):
    m = tk.model("llama-3.1-8b")
    assert tk.kv_cache_bytes(m, c1 + c2) == tk.kv_cache_bytes(m, c1) + tk.kv_cache_bytes(m, c2)


@given(model_id=st.sampled_from(["gemma-3-27b", "gpt-oss-120b", "llama-4-scout"]),
       c=st.integers(1, 100_000))
def test_windowed_kv_linear_until_window_then_only_global_layers_grow(model_id, c):
    m = tk.model(model_id)
    per_layer = tk.kv_bytes_per_token_per_layer(m)
    n_full = sum(n for k, w, n in m.window_groups() if k == "full")
    wmax = max(w for k, w, n in m.window_groups() if k != "full")
    step = tk.kv_cache_bytes(m, c + 1) - tk.kv_cache_bytes(m, c)
    if c + 1 <= wmax:
        assert step == pytest.approx(per_layer * m.num_layers)     # every layer grows
    else:
        assert step == pytest.approx(per_layer * n_full)           # only full layers grow
    assert tk.kv_cache_bytes(m, c) <= tk.kv_bytes_per_token(m) * c


@given(E=st.integers(1, 512), data=st.data())
def test_distinct_experts_between_topk_and_E_and_increasing(E, data):
    k = data.draw(st.integers(1, E))
    n = np.arange(1, 300)
    d = np.asarray(tk.expected_active_experts(E, k, n), dtype=float)
    assert np.all(d >= k - 1e-9) and np.all(d <= E + 1e-9)
    assert np.all(np.diff(d) >= -1e-12)
    if k < E:
        assert np.all(np.diff(d) > 0) or d[-1] == pytest.approx(E)


@given(kind=st.sampled_from(["full", "sliding", "chunked"]), w=st.integers(1, 50),
       c=st.integers(0, 200), t=st.integers(1, 200))
@example(kind="chunked", w=7, c=13, t=30)
def test_attention_span_closed_form_matches_brute_force(kind, w, c, t):
    def span(i: int) -> int:
        if kind == "full":
            return i
        if kind == "sliding":
            return min(i, w)
        return (i - 1) % w + 1

    brute = sum(span(i) for i in range(c + 1, c + t + 1))
    closed = _span_sum(kind, float(w) if kind != "full" else np.inf, np.float64(c + t)) - \
        _span_sum(kind, float(w) if kind != "full" else np.inf, np.float64(c))
    assert closed == brute


@given(prompt=st.integers(2, 60_000), frac=st.floats(0.01, 0.99))
def test_prefix_cache_hit_never_costs_more_flops(prompt, frac):
    d = tk.Deployment("llama-3.1-70b", "h200", tp=8)
    cached = int(prompt * frac)
    assume(0 < cached < prompt)
    full = tk.prefill(d, prompt)
    mid = tk.prefill(d, prompt, cached_tokens=cached)
    assert mid.phase == "midfill"
    assert mid.flops_per_device < full.flops_per_device
    assert mid.time_s <= full.time_s


@given(model_id=st.sampled_from(MODELS), context=st.integers(1, 131_072))
def test_model_that_does_not_fit_gives_zero_never_negative(model_id, context):
    m = tk.model(model_id)
    assume(context <= m.max_context)
    d = tk.Deployment(m, "l40s", weight_dtype="bf16")
    mb = tk.max_batch(d, context)
    assert mb >= 0
    if tk.weight_bytes(m, "bf16") > 48e9:
        assert mb == 0
        with pytest.raises(tk.DoesNotFitError, match="weights alone do not fit"):
            tk.decode(d, 1, context)


@given(model_id=st.sampled_from(MODELS), context=st.integers(1, 32_768))
def test_max_batch_is_the_fit_boundary(model_id, context):
    d = tk.Deployment(model_id, "h200", tp=8)
    mb = tk.max_batch(d, context)
    assume(mb >= 1)
    assert bool(tk.memory_fit(d, mb, context).fits)
    assert not bool(tk.memory_fit(d, mb + 1, context).fits)


@given(x=st.floats(1e-6, 1e9), unit=st.sampled_from(["GB", "GiB", "MB", "TB", "kB"]))
def test_unit_round_trip(x, unit):
    b = parse_quantity(x, unit, "B")
    assert parse_quantity(b, "B", unit) == pytest.approx(x, rel=1e-12)
    assert parse_quantity(x, unit.replace("B", "b"), "B") == pytest.approx(b / 8, rel=1e-12)


@given(model_id=st.sampled_from(MODELS), b=st.integers(1, 256), c=st.integers(1, 16_384))
def test_step_time_decomposes_and_bounds(model_id, b, c):
    d = tk.Deployment(model_id, "h100-sxm", tp=8,
                      efficiency=tk.Efficiency(mfu=0.6, mbu=0.8, step_overhead_s=1e-3,
                                               collective_overlap=0.0))
    r = tk.decode(d, b, c, on_oom="mark")
    assert r.time_s == pytest.approx(r.roofline_s + r.comm_time_s + r.overhead_s, rel=1e-12)
    assert r.roofline_s >= r.lower_bound_s * (1 - 1e-12)
    assert r.roofline_s <= (r.compute_time_s + r.memory_time_s) * (1 + 1e-12)
    assert r.comm_time_s > 0  # tp=8: two all-reduces per layer, none hidden
