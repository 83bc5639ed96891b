"""The scalar fast path of decode (physics/plan.py) equals the full engine to 1e-12.

Issue 15: "tests that the fast paths return results equal (1e-12) to the reference paths".
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tokenomics as tk
from tokenomics.physics.plan import (
    WARM_UP_CALLS,
    build_decode_plan,
    build_mixed_plan,
    build_prefill_plan,
    decode_plan,
    mixed_plan,
)
from tokenomics.physics.step import decode_reference, prefill_reference
from tokenomics.serving.batching import mixed_step_seconds
from tokenomics.serving.steady import steady_state_reference

CAL = tk.efficiency_presets()["calibrated"]
DENSE = [
    tk.Deployment("llama-3.1-8b", "h100-sxm"),
    tk.Deployment("llama-3.1-70b", "h100-sxm", tp=4),
    tk.Deployment("llama-3.1-70b", "h200", tp=8, weight_dtype="fp8", compute_dtype="fp8",
                  kv_dtype="fp8", efficiency=CAL),
    tk.Deployment("qwen3-32b", "b200", efficiency=CAL),
    tk.Deployment("llama-3.1-405b", "h200", tp=8, weight_dtype="fp8"),
]
# Mixtures of experts: the routed experts timed by the engine's own law inside the plan
MOE = [
    tk.Deployment("qwen3-30b-a3b", "h100-sxm", efficiency=CAL),
    tk.Deployment("mixtral-8x7b", "h100-sxm", tp=2),
    tk.Deployment("qwen3-235b-a22b", "h200", tp=8, weight_dtype="fp8", compute_dtype="fp8",
                  efficiency=CAL),
    # experts over 4 PCIe cards, tokens gathered and scattered (TensorRT-LLM without NVLink)
    tk.Deployment("qwen3-30b-a3b", "rtx-pro-6000-server", tp=4, ep=4, dp_attention=4,
                  ep_exchange="allgather", efficiency=CAL),
]
FIELDS = ("time_s", "roofline_s", "lower_bound_s", "compute_time_s", "memory_time_s",
          "comm_time_s", "overhead_s", "flops_per_device", "bytes_per_device",
          "tokens_per_s_per_user", "tokens_per_s_per_device")


@pytest.mark.parametrize("i", range(len(DENSE)))
def test_dense_deployments_get_a_plan(i):
    assert build_decode_plan(DENSE[i], decode_reference) is not None


@pytest.mark.parametrize("model", ["gemma-3-27b", "qwen3-next-80b-a3b", "gpt-oss-120b"])
def test_non_affine_decodes_keep_the_full_path(model):
    # sliding windows, linear attention: costs are not affine in the context
    assert build_decode_plan(tk.Deployment(model, "h200", tp=4), decode_reference) is None


@pytest.mark.parametrize("i", range(len(MOE)))
def test_mixtures_of_experts_get_plans(i):
    assert build_decode_plan(MOE[i], decode_reference) is not None
    assert build_prefill_plan(MOE[i], prefill_reference) is not None
    assert build_mixed_plan(MOE[i], mixed_step_seconds) is not None


@settings(max_examples=150, deadline=None)
@given(i=st.integers(0, len(DENSE + MOE) - 1), b=st.integers(1, 2048),
       c=st.integers(1, 131_072))
def test_the_fast_path_equals_the_engine(i, b, c):
    d = (DENSE + MOE)[i]
    c = min(c, int(d.model.max_context))
    plan = build_decode_plan(d, decode_reference)
    got, want = plan(b, c), decode_reference(d, b, c, on_oom="mark")
    for f in FIELDS:
        assert math.isclose(getattr(got, f), float(getattr(want, f)), rel_tol=1e-12,
                            abs_tol=1e-300), f
    assert got.bound == want.bound and got.fits == want.fits
    assert (got.batch, got.context_tokens, got.efficiency) == (b, c, want.efficiency)


def test_decode_uses_it_after_the_warm_up_and_still_raises_when_it_does_not_fit():
    d = tk.Deployment("llama-3.1-8b", "h100-sxm")
    for _k in range(WARM_UP_CALLS):
        tk.decode(d, 8, 4096)
        assert "_decode_plan" not in d.__dict__             # one-off calls never build it
    r = tk.decode(d, 8, 4096)
    assert decode_plan(d, decode_reference) is not None
    assert r.time_s == pytest.approx(float(decode_reference(d, 8, 4096).time_s), rel=1e-12)
    with pytest.raises(tk.DoesNotFitError):
        tk.decode(d, 4096, 131_072)
    assert not tk.decode(d, 4096, 131_072, on_oom="mark").fits
    # arrays and new_tokens > 1 take the full path and agree with it
    a = tk.decode(d, np.array([8, 16]), 4096)
    assert np.allclose(a.time_s, decode_reference(d, np.array([8, 16]), 4096).time_s)


@pytest.mark.parametrize("i", range(len(DENSE)))
def test_dense_deployments_get_a_prefill_plan(i):
    assert build_prefill_plan(DENSE[i], prefill_reference) is not None


@settings(max_examples=150, deadline=None)
@given(i=st.integers(0, len(DENSE + MOE) - 1), b=st.integers(1, 64),
       p=st.integers(1, 131_072), share=st.floats(0.0, 0.99))
def test_the_prefill_fast_path_equals_the_engine(i, b, p, share):
    d = (DENSE + MOE)[i]
    p = min(p, int(d.model.max_context))
    c = int(share * (p - 1))
    got = build_prefill_plan(d, prefill_reference)(b, p, c)
    want = prefill_reference(d, p, b, c, on_oom="mark")
    for f in FIELDS:
        assert math.isclose(getattr(got, f), float(getattr(want, f)), rel_tol=1e-12,
                            abs_tol=1e-300), f
    assert (got.bound, got.fits, got.phase) == (want.bound, want.fits, want.phase)
    assert (got.batch, got.context_tokens, got.new_tokens) == (b, p, p - c)


# ---- Mixed steps (the steady state's fast path) ----------------------------------------------

STEADY_FIELDS = ("concurrency", "input_tokens", "output_tokens", "cached_tokens",
                 "context_tokens", "arrivals_per_step", "prefill_tokens_per_step",
                 "chunks_per_prompt", "tpot_s", "decode_only_tpot_s", "ttft_s",
                 "output_tokens_per_s_per_device", "tokens_per_s_per_user", "requests_per_s",
                 "request_latency_s")


@pytest.mark.parametrize("i", range(len(DENSE)))
def test_dense_deployments_get_a_mixed_plan(i):
    assert build_mixed_plan(DENSE[i], mixed_step_seconds) is not None


@settings(max_examples=100, deadline=None)
@given(i=st.integers(0, len(DENSE + MOE) - 1), D=st.floats(0, 2048),
       C=st.integers(1, 131_072), T=st.integers(1, 16_384), c=st.integers(0, 65_536),
       b=st.floats(0, 8))
def test_the_mixed_plan_equals_the_engine(i, D, C, T, c, b):
    d = (DENSE + MOE)[i]
    if D + b == 0:
        b = 1.0
    plan = build_mixed_plan(d, mixed_step_seconds)
    want = float(mixed_step_seconds(d, D, C, T, c, b))
    assert math.isclose(plan.times_at([(D, float(C), float(T), float(c), b)])[0], want,
                        rel_tol=1e-12)
    assert math.isclose(float(plan.times(D, C, T, c, b)), want, rel_tol=1e-12)


@settings(max_examples=150, deadline=None)
@given(i=st.integers(0, len(DENSE + MOE) - 1),
       B=st.one_of(st.integers(1, 1024), st.just("max")),
       inp=st.integers(1, 32_768), out=st.integers(1, 4096), share=st.floats(0, 0.99),
       chunk=st.one_of(st.none(), st.integers(1, 8192)),
       pool=st.sampled_from(["colocated", "decode"]))
def test_the_steady_state_fast_path_equals_the_full_path(i, B, inp, out, share, chunk, pool):
    d = (DENSE + MOE)[i]
    c = int(share * inp)
    out = max(out, 2) if pool == "decode" else out
    kw = dict(cached_tokens=c, chunk_tokens=chunk, pool=pool)
    try:
        want = steady_state_reference(d, B, inp, out, **kw)
    except tk.TokenomicsError:
        return                                   # (nothing fits: the full path raises)
    for _ in range(WARM_UP_CALLS + 1):
        got = tk.steady_state(d, B, inp, out, **kw)
    assert mixed_plan(d, mixed_step_seconds) is not None   # the fast path was taken
    for f in STEADY_FIELDS:
        assert math.isclose(getattr(got, f), float(getattr(want, f)), rel_tol=1e-12,
                            abs_tol=1e-300), f
        assert type(getattr(got, f)) is float, f
    assert got.fits == want.fits and got.efficiency == want.efficiency


def test_steady_state_errors_are_the_full_paths_after_the_warm_up():
    d = tk.Deployment("llama-3.1-8b", "h100-sxm")
    for _ in range(WARM_UP_CALLS + 1):
        tk.steady_state(d, 16, 2048, 256)
    with pytest.raises(tk.TokenomicsError, match="cached_tokens must be below input_tokens"):
        tk.steady_state(d, 16, 2048, 256, cached_tokens=2048)
    with pytest.raises(tk.TokenomicsError, match="concurrency"):
        tk.steady_state(d, 0, 2048, 256)
    with pytest.raises(tk.TokenomicsError, match="output_tokens >= 2"):
        tk.steady_state(d, 16, 2048, 1, pool="decode")
    with pytest.raises(tk.DoesNotFitError):
        tk.steady_state(tk.Deployment("llama-3.1-70b", "h100-sxm", tp=2), "max", 131_000, 72)


def test_a_short_context_model_gets_its_fast_paths_without_probing_past_its_context():
    # OPT-13B serves 2,048 tokens: the checks must not ask the engine about 4,096 (which it
    # refuses), and a refused build must not be retried at every call
    d = tk.Deployment("opt-13b", "h100-sxm")
    for _ in range(WARM_UP_CALLS + 2):
        r = tk.steady_state(d, 8, 1000, 100)
        s = tk.decode(d, 8, 1000)
    assert r.tpot_s == pytest.approx(float(steady_state_reference(d, 8, 1000, 100).tpot_s),
                                     rel=1e-12)
    assert s.time_s == pytest.approx(float(decode_reference(d, 8, 1000).time_s), rel=1e-12)
    assert "_mixed_plan" in d.__dict__ and "_decode_plan" in d.__dict__


def test_a_step_of_no_tokens_still_pays_each_collectives_fixed_overhead():
    # One output token: the decode-only step has no sequences, but each of its collectives
    # still costs its fixed software overhead (20 us a call here), as in the engine.
    import dataclasses

    e = dataclasses.replace(CAL, collective_overhead_s=2e-5, name="test")
    d = tk.Deployment("llama-3.1-70b", "h100-sxm", tp=4, efficiency=e)
    for _ in range(WARM_UP_CALLS + 1):
        got = tk.steady_state(d, 8, 1000, 1)
    want = steady_state_reference(d, 8, 1000, 1)
    assert got.decode_only_tpot_s == pytest.approx(float(want.decode_only_tpot_s), rel=1e-12)
    assert got.tpot_s == pytest.approx(float(want.tpot_s), rel=1e-12)


def test_the_fast_paths_refuse_counts_past_2_to_the_53_as_the_full_paths_do():
    d = tk.Deployment("llama-3.1-8b", "h100-sxm")
    for _ in range(WARM_UP_CALLS + 1):
        tk.steady_state(d, 16, 2048, 256)
        tk.decode(d, 8, 4096)
        tk.prefill(d, 2048)
    for call in (lambda: tk.steady_state(d, 2**60, 1000, 100),
                 lambda: tk.steady_state(d, 16, 1000, 100, chunk_tokens=2**60),
                 lambda: tk.decode(d, 2**60, 1000), lambda: tk.prefill(d, 1000, 2**60)):
        with pytest.raises(tk.TokenomicsError, match="2\\*\\*53"):
            call()


def test_the_fast_paths_guards_take_no_array_for_an_option():
    # on_oom, microbatches, pool given as arrays reach the full path and its own error,
    # not numpy's "truth value of an array is ambiguous" from the fast path's guard
    d = tk.Deployment("llama-3.1-8b", "h100-sxm")
    empty = np.array([], float)
    for call in (lambda: tk.decode(d, 8, 4096, on_oom=empty),
                 lambda: tk.prefill(d, 2048, on_oom=empty),
                 lambda: tk.prefill(d, 2048, microbatches=np.array([1, 2])),
                 lambda: tk.steady_state(d, 16, 2048, 256, pool=np.array(["decode"]))):
        with pytest.raises(tk.TokenomicsError):
            call()

