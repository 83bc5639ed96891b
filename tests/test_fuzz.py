"""Fuzz the public boundary: hostile values in, only the library's own errors out.

Each target takes arguments drawn from a hostile mix (NaN, inf, negatives, zero, 1e300,
fractions, bools, strings, None, empty and 2-D arrays, pint Quantities) beside valid ones.
A call must either return finite, non-negative numbers where the quantity is one, or raise a
:class:`~tokenomics.core.errors.TokenomicsError`; anything else (a TypeError from numpy, an
IndexError, a NaN) fails. The default ``ci`` profile runs a few dozen examples per target;
``HYPOTHESIS_PROFILE=fuzz python -m pytest tests/test_fuzz.py`` runs the long profile.
"""

from __future__ import annotations

import math
from dataclasses import fields, is_dataclass

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tokenomics as tk
from tokenomics.core.units import registry

D8 = tk.Deployment("llama-3.1-8b", "h100-sxm")
MOE = tk.Deployment("mixtral-8x7b", "h100-sxm", tp=2)

HOSTILE = st.one_of(
    st.sampled_from([0, -1, 1, 2, 7, 64, 1024, 0.5, -0.0, math.nan, math.inf, -math.inf, 1e300,
                     True, False, None, "8", "", [], [[1, 2], [3, 4]], np.array([]),
                     np.array([[1.0, 2.0]]), np.array([1, 0]), registry().Quantity(8, "token"),
                     registry().Quantity(1, "second"), object()]),
    st.integers(-10, 10**6), st.floats(allow_nan=True, allow_infinity=True),
)
VALID_COUNT = st.integers(1, 4096)


#: Result fields that may be negative by their meaning (memory left over when it does not fit).
SIGNED = {"headroom_bytes", "free_bytes", "spare_bytes"}


def _numbers(r):
    """Numeric leaves of a result (dataclass fields, tuples, arrays, floats), signed ones
    left out."""
    if is_dataclass(r):
        for f in fields(r):
            if f.name not in SIGNED:
                yield from _numbers(getattr(r, f.name))
    elif isinstance(r, (tuple, list)):
        for x in r:
            yield from _numbers(x)
    elif isinstance(r, (int, float, np.integer, np.floating)) and not isinstance(r, bool):
        yield float(r)
    elif isinstance(r, np.ndarray) and r.dtype.kind in "fiu":
        yield from r.astype(float).ravel()


def _call(fn, *args, **kwargs):
    try:
        r = fn(*args, **kwargs)
    except tk.TokenomicsError:
        return None
    for v in _numbers(r):
        assert not math.isnan(v), f"{fn.__name__}{args}: NaN in the result"
        assert v >= 0, f"{fn.__name__}{args}: negative {v} in the result"
    return r


TARGETS = {
    "decode": lambda a, b: tk.decode(D8, a, b, on_oom="mark"),
    "prefill": lambda a, b: tk.prefill(D8, a, b),
    "prefill_cached": lambda a, b: tk.prefill(D8, 4096, 1, cached_tokens=a),
    "steady_state": lambda a, b: tk.steady_state(D8, a, 1024, b),
    "steady_state_moe_pool": lambda a, b: tk.steady_state(MOE, a, b, 64, pool="decode"),
    "max_batch": lambda a, b: tk.max_batch(D8, a),
    "memory_fit": lambda a, b: tk.memory_fit(D8, a, b),
    "min_devices": lambda a, b: tk.min_devices(tk.model("llama-3.1-70b"),
                                               tk.hardware("h100-sxm"), a, b),
    "mixed_step": lambda a, b: tk.mixed_step(D8, a, 2048, b),
    "gemm_flops": lambda a, b: tk.gemm_flops(a, b, 4096),
    "expected_active_experts": lambda a, b: tk.expected_active_experts(8, 2, a),
    "deployment": lambda a, b: tk.Deployment("llama-3.1-8b", "h100-sxm", tp=a,
                                             usable_memory_fraction=b),
    "efficiency": lambda a, b: tk.Efficiency(mfu=a, step_overhead_s=b),
    "cost_per_million_tokens": lambda a, b: tk.cost_per_million_tokens(a, b),
}


@pytest.mark.parametrize("name", sorted(TARGETS))
@given(a=HOSTILE, b=st.one_of(HOSTILE, VALID_COUNT))
def test_only_library_errors_escape_and_results_are_numbers(name, a, b):
    _call(TARGETS[name], a, b)
