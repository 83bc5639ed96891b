"""The value objects Workload, SLO and Link, and accepts_legacy, which maps release 0.1's loose
arguments onto them."""

from __future__ import annotations

import dataclasses
import inspect
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tokenomics as tk
from tokenomics.data.workload import SLO, Link, Workload, accepts_legacy

D8 = tk.Deployment("llama-3.1-8b", "h100-sxm")


# ---- Workload ------------------------------------------------------------------------------
@pytest.mark.parametrize("bad", [0, -1, 0.5, 1.5, math.nan, math.inf, True, False, "256", None])
def test_workload_rejects_what_is_not_a_whole_token_count(bad):
    with pytest.raises(tk.TokenomicsError, match=r"Workload\.input_tokens must be a whole "
                                                 r"number of tokens >= 1"):
        Workload(bad, 256)
    with pytest.raises(tk.TokenomicsError, match=r"Workload\.output_tokens"):
        Workload(2048, bad)


def test_workload_accepts_numpy_scalars_as_plain_ints():
    w = Workload(np.int64(2048), np.float64(256.0))
    assert (w.input_tokens, w.output_tokens) == (2048, 256)
    assert type(w.input_tokens) is int and type(w.output_tokens) is int
    assert w == Workload(2048, 256)
    with pytest.raises(dataclasses.FrozenInstanceError):
        w.input_tokens = 1  # type: ignore[misc]


# ---- SLO -----------------------------------------------------------------------------------
@pytest.mark.parametrize("bad", [0.0, -1.0, math.nan, math.inf, True, "1 s", None])
def test_slo_rejects_a_target_that_is_not_a_finite_positive_time(bad):
    with pytest.raises(tk.TokenomicsError, match=r"SLO\.ttft_s must be a finite time > 0"):
        SLO(bad, 0.05)
    with pytest.raises(tk.TokenomicsError, match=r"SLO\.tpot_s must be a finite time > 0"):
        SLO(1.0, bad)


@pytest.mark.parametrize("bad", [0.0, -0.1, 1.0000001, 2.0, math.nan, True, "0.9"])
def test_slo_fraction_must_be_in_zero_one(bad):
    with pytest.raises(tk.TokenomicsError, match=r"SLO\.fraction must be in \(0, 1\]"):
        SLO(1.0, 0.05, bad)


def test_slo_defaults_to_ninety_percent_and_takes_numpy_scalars():
    assert SLO(1.0, 0.05).fraction == 0.9                   # DistServe's 90% attainment
    s = SLO(np.float64(1.0), np.float32(0.05), np.float64(1.0))   # 1: every request
    assert s.fraction == 1.0 and s.ttft_s == 1.0


# ---- Link ----------------------------------------------------------------------------------
@pytest.mark.parametrize("bad", [0.0, -1e9, math.nan, math.inf, True, None])
def test_link_rejects_a_bandwidth_that_is_not_finite_and_positive(bad):
    with pytest.raises(tk.TokenomicsError, match=r"Link\.bytes_per_s must be a finite "
                                                 r"bandwidth > 0"):
        Link(bad)


@pytest.mark.parametrize("bad", [-1e-6, math.nan, math.inf, False])
def test_link_rejects_a_negative_or_non_finite_latency(bad):
    with pytest.raises(tk.TokenomicsError, match=r"Link\.latency_s must be a finite time >= 0"):
        Link(1e9, bad)


def test_link_defaults():
    # One 400 Gb/s-class path per direction plus a switch hop: 200e9 B/s, 10 us (0.1's
    # link_bytes_per_s and link_latency_s defaults); a Link's own latency defaults to 0.
    assert Link.nvlink_like() == Link(200e9, 10e-6)
    assert Link(np.float64(50e9)).latency_s == 0.0


# ---- accepts_legacy on a toy function ------------------------------------------------------
def _toy_0_1(a):
    """0.1's toy(input_tokens, output_tokens, scale=2) as the new toy(workload, scale=2)."""
    return {"workload": Workload(a.pop("input_tokens"), a.pop("output_tokens")), **a}


@accepts_legacy(("input_tokens", "output_tokens", "scale"), {"scale": 2}, _toy_0_1, "workload")
def toy(workload: Workload, scale: int = 2) -> int:
    """scale x (input + output) tokens."""
    return scale * (workload.input_tokens + workload.output_tokens)


def test_toy_new_positional_and_keyword_forms_agree():
    # 2 x (100 + 20) = 240; with scale 3: 3 x 120 = 360.
    assert toy(Workload(100, 20)) == 240
    assert toy(100, 20) == 240                                  # 0.1 positional
    assert toy(input_tokens=100, output_tokens=20) == 240       # 0.1 keyword
    assert toy(np.int64(100), 20) == 240                        # a numpy scalar is 0.1's too
    assert toy(100, 20, 3) == toy(Workload(100, 20), 3) == toy(workload=Workload(100, 20),
                                                                 scale=3) == 360
    assert toy(100, output_tokens=20, scale=3) == 360
    assert list(inspect.signature(toy).parameters) == ["workload", "scale"]
    assert toy.__doc__ == "scale x (input + output) tokens."


@given(i=st.integers(1, 10**6), o=st.integers(1, 10**6), k=st.integers(1, 9))
def test_toy_forms_agree_on_any_input(i, o, k):
    assert toy(i, o, k) == toy(input_tokens=i, output_tokens=o, scale=k) == \
        toy(Workload(i, o), k) == k * (i + o)


def test_toy_wrong_calls_name_the_new_signature():
    new = r"call it as toy\(workload, scale=2\)"
    with pytest.raises(tk.TokenomicsError, match=r"missing a required argument.*" + new):
        toy()
    with pytest.raises(tk.TokenomicsError, match=r"'output_tokens'.*" + new +
                       r".*as in 0\.1, toy\(input_tokens, output_tokens, scale=2\)"):
        toy(100)
    with pytest.raises(tk.TokenomicsError, match=new):
        toy(Workload(1, 1), 2, 3)                                # too many arguments
    with pytest.raises(tk.TokenomicsError, match=new):
        toy(Workload(1, 1), output_tokens=3)                     # new object, 0.1 keyword
    with pytest.raises(tk.TokenomicsError, match=new):
        toy(Workload(1, 1), size=3)                              # no such keyword


def test_a_0_1_call_warns_with_its_removal_and_the_new_form():
    # issue 26: the 0.1 forms stay callable until their removal release, each with a
    # DeprecationWarning that names the new form and points at the caller's line
    with pytest.warns(DeprecationWarning, match=r"toy\(input_tokens, output_tokens, scale=2\) "
                      r"is the 0\.1 call form, deprecated and to be removed in 0\.2; call "
                      r"toy\(workload, scale=2\)") as rec:
        assert toy(100, 20) == 240
    assert rec[0].filename == __file__
    with pytest.warns(DeprecationWarning) as rec:        # through two wrappers, and inputs
        tk.min_devices(tk.model("llama-3.1-8b"), tk.hardware("h100-sxm"), 1, 8192)
    assert rec[0].filename == __file__
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")                   # the new forms never warn
        toy(Workload(100, 20))
        tk.min_devices(tk.Deployment("llama-3.1-8b", "h100-sxm"), 1, 8192)


# ---- accepts_legacy on a real function -----------------------------------------------------
def test_a_real_function_gives_one_result_for_every_form():
    from tokenomics.serving.disagg import disaggregated_goodput

    new = disaggregated_goodput(D8, D8, 1, 4, Workload(2048, 256), SLO(2.0, 0.05))
    assert new == disaggregated_goodput(D8, D8, 1, 4, 2048, 256, 2.0, 0.05)
    assert new == disaggregated_goodput(D8, D8, 1, 4, input_tokens=2048, output_tokens=256,
                                        ttft_slo_s=2.0, tpot_slo_s=0.05)
    # One prefill instance of Llama 3.1 8B serves at most 1 / S_p = 33 req/s, and the TTFT
    # target only lowers that: the goodput lies below the prefill pool's capacity.
    assert 0 < new.rate_per_s < 1 / tk.prefill(D8, 2048).time_s
    with pytest.raises(tk.TokenomicsError, match=r"call it as disaggregated_goodput\("
                                                 r"prefill_dep, decode_dep, n_prefill, "
                                                 r"n_decode, workload, slo, link=None\)"):
        disaggregated_goodput(D8, D8, 1, 4, 2048)


def test_inputs_take_quantities_of_any_pint_registry():
    import pint

    tk.registry()                          # token, USD, flop on the application registry
    app = pint.get_application_registry()
    assert tk.Workload(app.Quantity(2, "kilotoken"), app.Quantity(128, "token")) == \
        tk.Workload(2000, 128)
    assert tk.SLO(ttft_s=app.Quantity(500, "ms"), tpot_s=app.Quantity(50, "ms")) == \
        tk.SLO(ttft_s=0.5, tpot_s=0.05)
    # 400 Gb/s is 50 GB/s (bits, not bytes); 2 us of latency
    assert tk.Link(bytes_per_s=app.Quantity(400, "Gbit/s"), latency_s=app.Quantity(2, "us")) \
        == tk.Link(bytes_per_s=50e9, latency_s=2e-6)
    with pytest.raises(tk.UnitError, match="cannot be converted"):
        tk.SLO(ttft_s=app.Quantity(1, "GB"), tpot_s=0.05)
