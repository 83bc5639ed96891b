"""Spare replicas for an availability target (issue 29: availability from published failure
rates, and what it does to $/Mtok)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tokenomics as tk
from tokenomics.economics.availability import (
    LLAMA3_FAILURES_PER_GPU_HOUR,
    REPAIR_HOURS,
    down_quantile,
    replica_availability,
    spare_replicas,
)
from tokenomics.economics.factory import facility


def _binom_cdf(k: int, n: int, u: float) -> float:
    """P(Bin(n, u) <= k), summed term by term (independent of scipy)."""
    return sum(math.comb(n, j) * u**j * (1 - u) ** (n - j) for j in range(k + 1))


def test_llama3_interruption_rate():
    # Llama 3 paper, section 3.3.4: 419 unexpected interruptions in a 54-day snapshot of
    # pre-training on 16,384 H100 GPUs
    assert LLAMA3_FAILURES_PER_GPU_HOUR == pytest.approx(419 / (16384 * 54 * 24), rel=1e-15)
    assert LLAMA3_FAILURES_PER_GPU_HOUR == pytest.approx(1.973e-5, rel=1e-3)
    # one GPU: a mean time between interruptions of about 5.8 years
    assert 1 / LLAMA3_FAILURES_PER_GPU_HOUR / 8766 == pytest.approx(5.78, abs=0.01)


def test_replica_availability_by_hand():
    lam = 419 / (16384 * 54 * 24)
    # a 72-GPU NVL72 rack restored in a day: MTBF = 1 / (72 lam) = 704 h, MTTR 24 h
    mtbf = 1 / (72 * lam)
    assert mtbf == pytest.approx(704.0, abs=0.5)
    assert replica_availability(72, repair_hours=24.0) == pytest.approx(mtbf / (mtbf + 24),
                                                                        rel=1e-12)
    assert replica_availability(8) == pytest.approx(1 / (1 + 8 * lam * REPAIR_HOURS), rel=1e-12)
    assert replica_availability(8, 0.0) == 1.0
    assert replica_availability(8, repair_hours=0.0) == 1.0
    np.testing.assert_allclose(replica_availability([1, 8, 72], repair_hours=24.0),
                               [1 / (1 + d * lam * 24) for d in (1, 8, 72)], rtol=1e-12)


def test_spares_for_100_hgx_nodes_by_hand():
    # 100 nodes of 8 GPUs, a day to restore: u = 1 - 1/(1 + 8 x 1.973e-5 x 24) = 0.00377;
    # 2 spares hold 99.9% with probability 0.9925, 3 with 0.9993
    lam = 419 / (16384 * 54 * 24)
    u = 1 - 1 / (1 + 8 * lam * 24)
    assert _binom_cdf(2, 102, u) < 0.999 < _binom_cdf(3, 103, u)
    s = spare_replicas(100, 0.999, 8, repair_hours=24.0)
    assert int(s.spares) == 3 and int(s.total) == 103
    assert float(s.achieved) == pytest.approx(_binom_cdf(3, 103, u), rel=1e-10)
    assert float(s.cost_factor) == pytest.approx(1.03, rel=1e-12)


def test_one_rack_needs_two_spares_at_three_nines():
    # one NVL72 rack: with one spare both are down with probability u^2 = 0.00109 > 0.001
    u = 1 - replica_availability(72, repair_hours=24.0)
    assert 1 - u**2 < 0.999 < 1 - u**3
    assert int(spare_replicas(1, 0.999, 72, repair_hours=24.0).spares) == 2


def test_no_failures_need_no_spares():
    s = spare_replicas([1, 10, 10_000], 0.9999, 8, failures_per_device_hour=0.0)
    assert list(s.spares) == [0, 0, 0] and list(s.achieved) == [1, 1, 1]


def test_a_large_fleet_needs_a_share_near_its_mean_down():
    # 100,000 replicas of 8 at the default restore: spares about n u + 3.7 sqrt(n u) at 99.99%
    n = 100_000
    u = 1 - replica_availability(8)
    s = int(spare_replicas(n, 0.9999, 8).spares)
    mean = n * u
    assert mean < s < mean + 4.5 * math.sqrt(mean)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 5000), d=st.sampled_from([1, 4, 8, 72]),
       q1=st.floats(0.5, 0.9999), q2=st.floats(0.5, 0.9999),
       r=st.floats(0.5, 200.0))
def test_a_higher_sla_never_needs_fewer_spares_and_the_answer_is_the_least(n, d, q1, q2, r):
    lo, hi = sorted((q1, q2))
    a = spare_replicas(n, lo, d, repair_hours=r)
    b = spare_replicas(n, hi, d, repair_hours=r)
    assert b.spares >= a.spares
    assert b.achieved >= hi and a.achieved >= lo
    u = 1 - float(b.replica_availability)
    s = int(b.spares)
    if s > 0:       # one spare fewer misses the target
        from scipy.stats import binom
        assert binom.cdf(s - 1, n + s - 1, u) < hi


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 3000), extra=st.integers(1, 3000), q=st.floats(0.5, 0.9999))
def test_more_demand_never_needs_fewer_spares(n, extra, q):
    assert spare_replicas(n + extra, q, 8, repair_hours=24.0).spares >= \
        spare_replicas(n, q, 8, repair_hours=24.0).spares


def test_facility_at_an_sla_sells_what_is_up_with_that_probability():
    # 100 MW of GB300 NVL72 at PUE 1.2: 586 racks (test_factory); each rack one replica
    f = facility("gb300-nvl72", 100e6, 1000.0, devices_per_replica=72, device_price=3.0,
                 pue=1.2, price_usd_per_mtok=2.0)
    g = f.with_spares(0.999, repair_hours=24.0)
    u = 1 - replica_availability(72, repair_hours=24.0)
    k = int(g.spare_replicas)
    assert _binom_cdf(k - 1, 586, u) < 0.999 <= _binom_cdf(k, 586, u)
    assert int(f.spare_replicas) == 0 and math.isnan(f.sla) and g.sla == 0.999
    assert float(g.tokens_per_s) == pytest.approx(1000.0 * 72 * (586 - k), rel=1e-12)
    assert float(g.usd_per_mtok) == pytest.approx(0.8333333 * 586 / (586 - k), rel=1e-6)
    # margin = 1 - cost/price, at the higher cost
    assert float(g.margin) == pytest.approx(1 - float(g.usd_per_mtok) / 2.0, rel=1e-12)
    assert float(g.usd_per_hour) == float(f.usd_per_hour)     # spares are paid for
    assert g.to_frame().shape[0] == 1


@settings(max_examples=30, deadline=None)
@given(mw=st.floats(0.5, 500.0), q1=st.floats(0.5, 0.9999), q2=st.floats(0.5, 0.9999))
def test_facility_a_higher_sla_never_sells_more(mw, q1, q2):
    lo, hi = sorted((q1, q2))
    f = facility("hgx-b200", mw * 1e6, 2000.0, devices_per_replica=8, device_price=5.0)
    a, b = f.with_spares(lo), f.with_spares(hi)
    assert b.spare_replicas >= a.spare_replicas
    assert b.tokens_per_s <= a.tokens_per_s <= f.tokens_per_s


def test_down_quantile_edges():
    assert list(down_quantile([0, 5], 0.99, 0.0)) == [0, 0]
    assert float(down_quantile(10, 0.5, 0.5)) == 5.0       # median of Bin(10, 1/2)


@pytest.mark.parametrize("kwargs, match", [
    (dict(replicas=0), "replicas"),
    (dict(replicas=1.5), "replicas"),
    (dict(replicas=1e10), "replicas"),
    (dict(sla=1.0), "sla"),
    (dict(sla=0.0), "sla"),
    (dict(sla=float("nan")), "sla"),
    (dict(sla=[0.9, 0.99]), "sla"),
    (dict(devices_per_replica=0), "devices_per_replica"),
    (dict(failures_per_device_hour=1.5), "failures_per_device_hour"),
    (dict(failures_per_device_hour=-1e-5), "failures_per_device_hour"),
    (dict(repair_hours=-1.0), "repair_hours"),
    (dict(repair_hours=float("inf")), "repair_hours"),
    (dict(replicas=[1, 2, 3], devices_per_replica=[1, 2]), "broadcast"),
])
def test_bad_input_is_refused_by_name(kwargs, match):
    args = dict(replicas=10, sla=0.999, devices_per_replica=8) | kwargs
    with pytest.raises(tk.TokenomicsError, match=match):
        spare_replicas(args.pop("replicas"), args.pop("sla"), **args)


def test_with_spares_refuses_a_bad_sla():
    f = facility("hgx-h100", 10e6, 1000.0, devices_per_replica=8, device_price=2.0)
    for bad in (1.0, -0.5, "high"):
        with pytest.raises(tk.TokenomicsError):
            f.with_spares(bad)
