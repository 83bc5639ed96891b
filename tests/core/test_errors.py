"""Bad input gets a clear exception naming the value, never a NaN, clamp or numpy traceback."""

from __future__ import annotations

import numpy as np
import pytest

import tokenomics as tk


@pytest.fixture(scope="module")
def dep():
    return tk.Deployment("llama-3.1-8b", "h100-sxm")


@pytest.mark.parametrize("batch", [0, -3, 1.5, np.nan, [1, 2, -1]])
def test_bad_batch(dep, batch):
    with pytest.raises(tk.TokenomicsError, match=r"batch must be a whole number >= 1"):
        tk.decode(dep, batch, 1024)


def test_non_numeric_batch(dep):
    with pytest.raises(tk.TokenomicsError, match=r"batch must be a number"):
        tk.decode(dep, "lots", 1024)


def test_context_beyond_model_maximum(dep):
    with pytest.raises(tk.TokenomicsError, match=r"context_tokens=200000 exceeds llama-3.1-8b's "
                                                 r"maximum context of 131072"):
        tk.decode(dep, 1, 200_000)
    # explicit override works
    r = tk.decode(dep.with_(allow_beyond_max_context=True), 1, 200_000)
    assert r.step_time_s > 0


def test_unknown_dtype_and_model():
    with pytest.raises(tk.UnknownEntryError, match=r"unknown numeric format 'fp7'"):
        tk.Deployment("llama-3.1-8b", "h100-sxm", weight_dtype="fp7")
    with pytest.raises(tk.UnknownEntryError, match=r"unknown model 'gpt-5'"):
        tk.Deployment("gpt-5", "h100-sxm")


def test_compute_format_without_a_peak():
    with pytest.raises(tk.NotPublishedError, match=r"fp4 peak is not supported"):
        tk.Deployment("llama-3.1-8b", "h100-sxm", compute_dtype="nvfp4")


def test_model_that_does_not_fit_raises(dep):
    d = tk.Deployment("llama-3.1-405b", "h100-sxm", tp=8)
    with pytest.raises(tk.DoesNotFitError, match=r"weights alone do not fit"):
        tk.decode(d, 1, 1024)
    assert tk.max_batch(d, 1024) == 0
    with pytest.raises(tk.DoesNotFitError, match=r"batch=512, context_tokens=131072"):
        tk.decode(dep, [1, 512], 131_072)


@pytest.mark.parametrize("kwargs, match", [
    (dict(tp=0), "tp must be a positive integer"),
    (dict(tp=2, ep=2), "ep=2 but llama-3.1-8b has no experts"),
    (dict(usable_memory_fraction=1.5), "usable_memory_fraction"),
    (dict(kv_shard="rows"), "kv_shard"),
])
def test_bad_deployment(kwargs, match):
    with pytest.raises(tk.TokenomicsError, match=match):
        tk.Deployment("llama-3.1-8b", "h100-sxm", **kwargs)


def test_bad_efficiency():
    with pytest.raises(tk.TokenomicsError, match=r"mfu must be in \(0, 1\]"):
        tk.Efficiency(mfu=1.2)
    with pytest.raises(tk.TokenomicsError, match=r"step_overhead_s must be >= 0"):
        tk.Efficiency(step_overhead_s=-1)


def test_prefill_cache_must_leave_new_tokens(dep):
    with pytest.raises(tk.TokenomicsError, match=r"cached_tokens must be below prompt_tokens"):
        tk.prefill(dep, 1000, cached_tokens=1000)


def test_roofline_inputs():
    with pytest.raises(tk.TokenomicsError, match=r"peak_flop_per_s must be > 0"):
        tk.roofline_time(1, 1, 0, 1)
    with pytest.raises(tk.TokenomicsError, match=r"flops must be >= 0"):
        tk.roofline_time(-1, 1, 1, 1)


def test_quantity_with_wrong_unit(dep):
    with pytest.raises(tk.UnitError, match=r"context_tokens has unit"):
        tk.decode(dep, 1, tk.Q_(3, "GB"))
    r = tk.decode(dep, 1, tk.Q_(1024, "token"))
    assert r.context_tokens == 1024


def test_min_devices_multiple_of():
    with pytest.raises(tk.TokenomicsError, match="multiple_of"):
        tk.min_devices(tk.model("llama-3.1-8b"), tk.hardware("h100-sxm"), multiple_of=0)
