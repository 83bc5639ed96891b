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
    build_prefill_plan,
    decode_plan,
)
from tokenomics.physics.step import decode_reference, prefill_reference

CAL = tk.efficiency_presets()["calibrated"]
DENSE = [
    tk.Deployment("llama-3.1-8b", "h100-sxm"),
    tk.Deployment("llama-3.1-70b", "h100-sxm", tp=4),
    tk.Deployment("llama-3.1-70b", "h200", tp=8, weight_dtype="fp8", compute_dtype="fp8",
                  kv_dtype="fp8", efficiency=CAL),
    tk.Deployment("qwen3-32b", "b200", efficiency=CAL),
    tk.Deployment("llama-3.1-405b", "h200", tp=8, weight_dtype="fp8"),
]
FIELDS = ("time_s", "roofline_s", "lower_bound_s", "compute_time_s", "memory_time_s",
          "comm_time_s", "overhead_s", "flops_per_device", "bytes_per_device",
          "tokens_per_s_per_user", "tokens_per_s_per_device")


@pytest.mark.parametrize("i", range(len(DENSE)))
def test_dense_deployments_get_a_plan(i):
    assert build_decode_plan(DENSE[i], decode_reference) is not None


@pytest.mark.parametrize("model", ["mixtral-8x7b", "gemma-3-27b", "qwen3-next-80b-a3b"])
def test_non_affine_decodes_keep_the_full_path(model):
    # MoE (distinct experts), sliding windows, linear attention: costs are not affine
    assert build_decode_plan(tk.Deployment(model, "h200", tp=4), decode_reference) is None


@settings(max_examples=150, deadline=None)
@given(i=st.integers(0, len(DENSE) - 1), b=st.integers(1, 2048), c=st.integers(1, 131_072))
def test_the_fast_path_equals_the_engine(i, b, c):
    d = DENSE[i]
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
@given(i=st.integers(0, len(DENSE) - 1), b=st.integers(1, 64), p=st.integers(1, 131_072),
       share=st.floats(0.0, 0.99))
def test_the_prefill_fast_path_equals_the_engine(i, b, p, share):
    d = DENSE[i]
    p = min(p, int(d.model.max_context))
    c = int(share * (p - 1))
    got = build_prefill_plan(d, prefill_reference)(b, p, c)
    want = prefill_reference(d, p, b, c, on_oom="mark")
    for f in FIELDS:
        assert math.isclose(getattr(got, f), float(getattr(want, f)), rel_tol=1e-12,
                            abs_tol=1e-300), f
    assert (got.bound, got.fits, got.phase) == (want.bound, want.fits, want.phase)
    assert (got.batch, got.context_tokens, got.new_tokens) == (b, p, p - c)
