"""What disaggregated and colocated pools share: the SLO attainment, the request targets, the
decode-pool table, release 0.1's request arguments and the input checks (the pool models
themselves: tests/serving/test_disagg.py and tests/serving/test_colocated.py)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tokenomics as tk
from tokenomics.data.workload import SLO, Workload
from tokenomics.serving.slo import (
    DecodeTable,
    RequestTargets,
    decode_table,
    legacy_workload_slo,
    request_rates,
    request_targets,
    single_count,
    single_value,
    slo_attainment,
)

D8 = tk.Deployment("llama-3.1-8b", "h100-sxm")
D70 = tk.Deployment("llama-3.1-70b", "h100-sxm", tp=4)
TARGETS = RequestTargets(input_tokens=2048, output_tokens=256, context_tokens=2176,
                         ttft_s=1.0, tpot_s=0.033, fraction=0.9)


def _service(n: int) -> dict[str, np.ndarray]:
    """A placeholder service at ``n`` rates (copied through unchanged)."""
    return dict(ttft_mean_s=np.full(n, 0.2), tpot_s=np.full(n, 0.02),
                decode_batch=np.full(n, 10.0), prefill_utilisation=np.full(n, 0.5))


# ---- the attainment ------------------------------------------------------------------------
def test_every_request_meeting_both_targets_attains_one():
    rate = np.array([2.0, 4.0])
    a = slo_attainment(rate, np.ones(2), np.array([True, True]), _service(2), 4, TARGETS)
    np.testing.assert_array_equal(a.attainment, [1.0, 1.0])
    np.testing.assert_array_equal(a.goodput_per_s, [2.0, 4.0])            # rate x 1
    np.testing.assert_array_equal(a.goodput_per_s_per_device, [0.5, 1.0])  # / 4 devices
    # 2 req/s x 256 tokens / 4 devices = 128 token/s/device; 4 req/s: 256.
    np.testing.assert_array_equal(a.output_tokens_per_s_per_device, [128.0, 256.0])
    assert a.meets_slo.all() and a.n_devices == 4
    np.testing.assert_array_equal(a.tpot_s, [0.02, 0.02])                  # copied through


def test_a_missed_tpot_zeroes_the_attainment_whatever_the_ttft():
    # 95% meet the TTFT, but the TPOT fails: nobody meets both.
    a = slo_attainment(np.array([3.0]), np.array([0.95]), np.array([False]), _service(1), 1,
                       TARGETS)
    assert a.attainment == 0.0 and a.goodput_per_s == 0.0 and not a.meets_slo
    assert a.ttft_attainment == 0.95 and not a.tpot_met


def test_attainment_at_the_fraction_meets_the_slo_and_below_it_does_not():
    # fraction 0.9: 90% meeting the TTFT is enough, 89% is not; goodput 10 x 0.9 = 9 req/s.
    a = slo_attainment(np.array([10.0, 10.0]), np.array([0.9, 0.89]), np.array([True, True]),
                       _service(2), 1, TARGETS)
    assert a.meets_slo.tolist() == [True, False]
    assert a.goodput_per_s[0] == pytest.approx(9.0)


def test_scalar_rates_give_scalars():
    s = {k: v[0] for k, v in _service(1).items()}
    a = slo_attainment(np.asarray(1.0), np.asarray(1.0), np.asarray(True), s, 2, TARGETS)
    assert isinstance(a.goodput_per_s, float) and isinstance(a.meets_slo, bool)
    assert a.goodput_per_s_per_device == 0.5                                # 1 req/s / 2


# ---- request targets -----------------------------------------------------------------------
def test_request_targets_hold_the_mean_decode_context():
    # 2,048 + 255 / 2 = 2,175.5 tokens, rounded up to 2,176.
    t = request_targets(D8, Workload(2048, 255), SLO(0.5, 0.04, 0.8))
    assert t == RequestTargets(2048, 255, 2176, 0.5, 0.04, 0.8)
    assert request_targets(D8, Workload(100, 10), SLO(1.0, 0.1)).context_tokens == 105


def test_request_targets_refuse_what_the_value_objects_allow():
    with pytest.raises(tk.TokenomicsError, match=r"slo\.fraction must be in \(0, 1\)"):
        request_targets(D8, Workload(2048, 256), SLO(1.0, 0.05, fraction=1.0))
    with pytest.raises(tk.TokenomicsError, match="maximum context"):
        request_targets(D8, Workload(131_000, 2000), SLO(60.0, 0.5))     # 8B: 131,072
    with pytest.raises(tk.TokenomicsError, match="workload must be a Workload"):
        request_targets(D8, (2048, 256), SLO(1.0, 0.05))
    with pytest.raises(tk.TokenomicsError, match="slo must be an SLO"):
        request_targets(D8, Workload(2048, 256), (1.0, 0.05))


def test_legacy_arguments_become_the_same_value_objects():
    a = dict(input_tokens=2048, output_tokens=256, ttft_slo_s=tk.Q_(700, "ms"),
             tpot_slo_s=0.02, slo_fraction=0.8, link_bytes_per_s=1e9)
    w, s = legacy_workload_slo(a, D8)
    assert w == Workload(2048, 256)
    assert s.ttft_s == pytest.approx(0.7, rel=1e-15)                  # 700 ms = 0.7 s
    assert (s.tpot_s, s.fraction) == (0.02, 0.8)
    assert a == {"link_bytes_per_s": 1e9}                             # the request is taken out
    with pytest.raises(tk.TokenomicsError, match="tpot_slo_s must be > 0"):
        legacy_workload_slo(dict(input_tokens=1, output_tokens=1, ttft_slo_s=1.0,
                                 tpot_slo_s=0.0, slo_fraction=0.9), D8)


# ---- input checks --------------------------------------------------------------------------
def test_single_number_checks():
    assert single_count(3, "n") == 3 and isinstance(single_count(np.int64(3), "n"), int)
    assert single_count(2, "token_budget", minimum=2, unit="token") == 2
    with pytest.raises(tk.TokenomicsError, match="token_budget must be a whole number >= 2"):
        single_count(1, "token_budget", minimum=2, unit="token")
    with pytest.raises(tk.TokenomicsError, match="n must be a single whole number"):
        single_count([1, 2], "n")
    assert single_value(np.asarray(0.25), "x") == 0.25
    with pytest.raises(tk.TokenomicsError, match="x must be a single number"):
        single_value(np.array([0.25, 0.5]), "x")
    np.testing.assert_array_equal(request_rates([0.0, 1.5]), [0.0, 1.5])
    with pytest.raises(tk.TokenomicsError, match="rate_per_s must be >= 0"):
        request_rates(-1.0)


# ---- the decode table ----------------------------------------------------------------------
@pytest.mark.parametrize("dep", [D8, D70], ids=["8b", "70b-tp4"])
def test_decode_table_is_the_decode_step_on_every_batch_that_fits(dep):
    t = decode_table(dep, 2176)
    assert t.max_batch == tk.max_batch(dep, 2176)                     # every batch fits
    assert t.step_time_s.size == t.max_batch + 1
    assert t.step_time_s[0] == t.step_time_s[1]                       # t(0) := t(1)
    for b in (1, 2, 7, 64, t.max_batch):
        # the scalar call takes the fast path after its warm-up: equal to 1e-12
        assert t.step_time_s[b] == pytest.approx(tk.decode(dep, b, 2176).time_s, rel=1e-12)


def test_decode_table_has_the_memory_limit_of_the_70b_instance():
    # Llama 3.1 70B on 4 x H100 holds 233 sequences of 2,048 + 128 tokens (test_disagg: 0.9 x
    # 81,559 MiB visible per device, was 205 at 80e9 B).
    assert decode_table(D70, 2176).max_batch == 233


def test_decode_table_refuses_a_context_that_does_not_fit():
    with pytest.raises(tk.DoesNotFitError, match="memory binds: not one sequence of 120000"):
        decode_table(tk.Deployment("llama-3.1-70b", "h100-sxm", tp=2), 120_000)


# A hand-made table: t(B) = 10 ms + 2 ms (B - 1) on B = 1..3, t(0) = t(1).
TOY = DecodeTable(np.array([0.010, 0.010, 0.012, 0.014]), 3)


def test_batch_at_solves_littles_law_by_hand():
    # y = 150 token/s needs B = 150 t(B) = 150 (0.008 + 0.002 B): B = 1.2 / 0.7 = 1.714.
    assert TOY.batch_at(np.array([150.0]))[0] == pytest.approx(1.2 / 0.7, rel=1e-12)
    # Below batch 1 the step is t(1): B = 50 x 0.010 = 0.5.
    assert TOY.batch_at(np.array([50.0]))[0] == pytest.approx(0.5, rel=1e-12)
    # Capacity 3 / 0.014 = 214.3 token/s: more has no batch; none asks for none.
    assert TOY.batch_at(np.array([215.0]))[0] == np.inf
    assert TOY.batch_at(np.array([0.0]))[0] == 0.0
    # Interpolation between integers: t(1.5) = 11 ms; B / t(B) at 1, 2, 3: 100, 166.7, 214.3.
    assert TOY.step_time_at(np.array(1.5)) == pytest.approx(0.011, rel=1e-12)
    np.testing.assert_allclose(TOY.tokens_per_s, [0.0, 100.0, 2 / 0.012, 3 / 0.014])


T8 = decode_table(D8, 2176)
CAP8 = float(T8.tokens_per_s.max())


@given(frac=st.floats(1e-6, 1.0))
def test_batch_at_is_a_fixed_point_of_littles_law(frac):
    # For any demand within the capacity, B = y t(B) with B within memory.
    y = frac * CAP8
    B = float(T8.batch_at(np.array([y]))[0])
    assert 0.0 < B <= T8.max_batch
    assert B == pytest.approx(y * float(T8.step_time_at(np.array(B))), rel=1e-9)
