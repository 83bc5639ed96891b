"""Colocated prefill and decode with chunked prefill: a vanishing rate, the binding
constraint, properties over rates, bad inputs and the value-object call forms against 0.1's
(colocation against disaggregation, seeds S50 and S51: tests/serving/test_disagg.py)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tokenomics as tk
from tokenomics.data.workload import SLO, Workload
from tokenomics.physics.step import decode, prefill
from tokenomics.serving.batching import chunked_prefill, mixed_step
from tokenomics.serving.colocated import colocated_at_rate, colocated_goodput

D70 = tk.Deployment("llama-3.1-70b", "h100-sxm", tp=4)    # 4 devices per instance
D8 = tk.Deployment("llama-3.1-8b", "h100-sxm")


def test_colocated_at_a_vanishing_rate_is_one_request_alone():
    # A 1,024-token prompt within a 2,048-token budget is one chunk: the prefill alone; the
    # TPOT is the decode step at batch 1.
    r = colocated_at_rate(D8, 1, 1024, 128, 1.0, 0.02, 1e-9)
    assert r.ttft_mean_s == pytest.approx(prefill(D8, 1024).time_s, rel=1e-6)
    assert r.tpot_s == pytest.approx(decode(D8, 1, 1024 + 64).step_time_s, rel=1e-9)
    assert r.attainment == pytest.approx(1.0)
    # With a 512-token budget it takes 2 mixed steps of 512 prompt tokens, each charged half
    # the prompt's causal attention (the same total as chunk 1 + chunk 2 on its prefix):
    # within 1% of the chunk-by-chunk schedule (S24's chunked_prefill).
    r2 = colocated_at_rate(D8, 1, 1024, 128, 1.0, 0.02, 1e-9, token_budget=512)
    assert r2.ttft_mean_s == pytest.approx(chunked_prefill(D8, 1024, 512).ttft_s, rel=0.01)
    assert r2.ttft_mean_s > 2 * mixed_step(D8, 0, 1088, 512).time_s      # the first chunk


def test_colocated_goodput_at_the_binding_constraint():
    g = colocated_goodput(D70, 4, 2048, 256, 3.0, 0.02)
    assert g.layout == "colocated" and g.n_devices == 16
    assert g.binding == "tpot" and g.tpot_s == pytest.approx(0.02, rel=1e-4)
    at = colocated_at_rate(D70, 4, 2048, 256, 3.0, 0.02, [g.rate_per_s, g.rate_per_s * 1.01])
    assert at.meets_slo[0] and not at.meets_slo[1]
    # Little's law inside an instance: B = (rate / 4) x 256 x TPOT.
    assert g.decode_batch == pytest.approx(g.rate_per_s / 4 * 256 * g.tpot_s)
    # Goodput per device does not depend on the instance count (arrivals split evenly).
    g8 = colocated_goodput(D70, 8, 2048, 256, 3.0, 0.02)
    assert g8.goodput_per_s_per_device == pytest.approx(g.goodput_per_s_per_device, rel=1e-6)


@given(rates=st.lists(st.floats(0.0, 150.0), min_size=2, max_size=4),
       budget=st.sampled_from([256, 512, 2048]))
def test_colocated_properties_over_rates(rates, budget):
    # One Llama 3.1 8B instance; its prompt slot saturates near 1 / 30 ms = 33 req/s.
    rates = sorted(rates)
    r = colocated_at_rate(D8, 1, 2048, 256, 1.0, 0.03, rates, token_budget=budget)
    g = np.asarray(r.goodput_per_s)
    assert np.all(np.isfinite(g)) and np.all(g >= 0) and np.all(g <= np.asarray(rates) + 1e-12)
    tpot = np.asarray(r.tpot_s)
    assert np.all(tpot[1:] >= tpot[:-1] * (1 - 1e-12))       # busier: never faster tokens
    att = np.asarray(r.ttft_attainment)
    assert np.all(np.diff(att) <= 1e-9)
    rho = np.asarray(r.prefill_utilisation)
    assert np.all(g[rho >= 1] == 0)


def test_colocated_impossible_slos_name_the_binding_constraint():
    with pytest.raises(tk.TokenomicsError, match="tpot binds"):
        colocated_goodput(D8, 1, 2048, 256, 1.0, 0.004)
    with pytest.raises(tk.TokenomicsError, match=r"ttft binds: .*chunked prefill of one"):
        colocated_goodput(D8, 1, 8192, 256, 0.1, 0.05)


def test_colocated_bad_inputs_are_errors():
    with pytest.raises(tk.TokenomicsError, match="rate_per_s must be >= 0"):
        colocated_at_rate(D8, 1, 2048, 256, 1.0, 0.05, [1.0, -2.0])
    with pytest.raises(tk.TokenomicsError, match="ttft_slo_s must be > 0"):
        colocated_goodput(D8, 1, 2048, 256, -1.0, 0.05)
    with pytest.raises(tk.TokenomicsError, match="token_budget must be a whole number >= 2"):
        colocated_goodput(D8, 1, 2048, 256, 1.0, 0.05, token_budget=1)


# ---- value objects against 0.1's loose arguments ---------------------------------------------
def _fields(x):
    return {k: np.asarray(v) if isinstance(v, (np.ndarray, list)) else v
            for k, v in vars(x).items()}


def assert_same_attainment(a, b):
    fa, fb = _fields(a), _fields(b)
    assert fa.keys() == fb.keys()
    for k in fa:
        np.testing.assert_array_equal(fa[k], fb[k], err_msg=k)    # exact, not approximate


def test_colocated_new_form_equals_0_1_forms():
    w, s = Workload(2048, 256), SLO(1.0, 0.03, 0.5)
    g = colocated_goodput(D8, 2, w, s, 512)
    assert g == colocated_goodput(D8, 2, 2048, 256, 1.0, 0.03, 0.5, 512)
    assert g == colocated_goodput(D8, 2, 2048, 256, 1.0, 0.03, slo_fraction=0.5,
                                  token_budget=512)
    assert g == colocated_goodput(D8, 2, w, s, token_budget=512)
    rates = [1.0, 20.0, 60.0]
    assert_same_attainment(colocated_at_rate(D8, 2, w, s, rates, 512),
                           colocated_at_rate(D8, 2, 2048, 256, 1.0, 0.03, rates, 0.5, 512))
    assert_same_attainment(colocated_at_rate(D8, 2, w, s, rates),
                           colocated_at_rate(D8, 2, 2048, 256, 1.0, 0.03, rates,
                                             slo_fraction=0.5))


def test_colocated_value_object_calls_check_what_the_objects_cannot():
    w = Workload(2048, 256)
    with pytest.raises(tk.TokenomicsError, match="exceeds llama-3.1-8b's maximum context"):
        colocated_goodput(D8, 1, Workload(131_000, 2000), SLO(60.0, 0.5))
    with pytest.raises(tk.TokenomicsError, match="slo must be an SLO"):
        colocated_goodput(D8, 1, w, (1.0, 0.05))
