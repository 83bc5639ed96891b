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


def test_model_that_does_not_fit_raises(dep):
    d = tk.Deployment("llama-3.1-405b", "h100-sxm", tp=8)
    with pytest.raises(tk.DoesNotFitError, match=r"weights alone do not fit"):
        tk.decode(d, 1, 1024)
    assert tk.max_batch(d, 1024) == 0
    with pytest.raises(tk.DoesNotFitError, match=r"batch=512, context_tokens=131072"):
        tk.decode(dep, [1, 512], 131_072)


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


# ---- the exception classes themselves (core/errors.py) -------------------------------------
def test_hierarchy_keeps_generic_handlers_working():
    # Every input error is a ValueError; a failed lookup is also a KeyError.
    for cls in (tk.CatalogError, tk.UnknownEntryError, tk.UnitError, tk.DoesNotFitError,
                tk.NotPublishedError):
        assert issubclass(cls, tk.TokenomicsError), cls
    assert issubclass(tk.TokenomicsError, ValueError)
    assert issubclass(tk.UnknownEntryError, KeyError)
    with pytest.raises(KeyError):
        tk.hardware("h1000")
    with pytest.raises(ValueError):
        tk.dtype("fp7")


def test_unknown_entry_message_is_not_quoted():
    # A plain KeyError repr-quotes its message ("'unknown x'"); the library's reads as written.
    msg = "unknown model 'x'; known ids: a, b"
    assert str(KeyError(msg)) == repr(msg)
    assert str(tk.UnknownEntryError(msg)) == msg
    assert str(tk.UnknownEntryError()) == ""
