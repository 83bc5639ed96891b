"""The M/D/1 queue against the textbook: the Pollaczek-Khinchine mean, Crommelin's wait
distribution, its quantiles, a simulated queue, and the largest load that meets a wait target."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tokenomics as tk
from tokenomics.serving.queueing import (
    EXACT_WAIT_SPAN,
    mdl_max_utilisation,
    mdl_mean_wait_s,
    mdl_wait_cdf,
    mdl_wait_quantile_s,
)


def crommelin(lam: float, S: float, t: float) -> float:
    """Erlang/Crommelin's alternating sum, written out (usable while rho t/S is small)."""
    rho = lam * S
    return (1 - rho) * sum((lam * (k * S - t)) ** k / math.factorial(k) * math.exp(-lam * (k * S - t))
                           for k in range(int(math.floor(t / S)) + 1))



# ---- M/D/1 against the textbook ------------------------------------------------------------
def test_mdl_mean_wait_by_hand_at_two_utilisations():
    # P-K with zero service variance: W = rho S / (2 (1 - rho)).
    # S = 0.1 s, lambda = 5/s: rho = 0.5 -> 0.5 x 0.1 / (2 x 0.5) = 0.05 s.
    assert mdl_mean_wait_s(5.0, 0.1) == pytest.approx(0.05, rel=1e-12)
    # lambda = 9/s: rho = 0.9 -> 0.9 x 0.1 / (2 x 0.1) = 0.45 s (nine times the wait at 0.5).
    assert mdl_mean_wait_s(9.0, 0.1) == pytest.approx(0.45, rel=1e-12)
    # Half the M/M/1 wait rho S / (1 - rho), broadcast over rates.
    w = mdl_mean_wait_s(np.array([5.0, 9.0]), 0.1)
    np.testing.assert_allclose(w, [0.05 / 1, 0.9 * 0.1 / 0.1 / 2])
    assert mdl_mean_wait_s(0.0, 0.1) == 0.0
    assert isinstance(mdl_mean_wait_s(5, 0.1), float)


def test_mdl_errors_say_the_stable_range():
    with pytest.raises(tk.TokenomicsError, match=r"must be < 1.*unstable.*1/S = 10 per s"):
        mdl_mean_wait_s(10.0, 0.1)
    with pytest.raises(tk.TokenomicsError, match=r"= 1\.2 must be < 1"):
        mdl_wait_cdf(12.0, 0.1, 0.5)
    with pytest.raises(tk.TokenomicsError, match="arrival_rate_per_s must be >= 0"):
        mdl_mean_wait_s(-1.0, 0.1)
    with pytest.raises(tk.TokenomicsError, match="service_time_s must be > 0"):
        mdl_mean_wait_s(1.0, 0.0)
    with pytest.raises(tk.TokenomicsError, match="wait_s must be >= 0"):
        mdl_wait_cdf(1.0, 0.1, -0.1)
    with pytest.raises(tk.TokenomicsError, match=r"probability must be in \(0, 1\)"):
        mdl_wait_quantile_s(1.0, 0.1, 1.0)


def test_wait_cdf_by_hand():
    # P(W = 0) = 1 - rho: the share of arrivals that find the server idle.
    assert mdl_wait_cdf(5.0, 0.1, 0.0) == pytest.approx(0.5)
    # P(W <= S) = (1 - rho) e^rho (Crommelin's k = 0 term; the k = 1 term is 0): 0.5 e^0.5.
    assert mdl_wait_cdf(5.0, 0.1, 0.1) == pytest.approx(0.5 * math.exp(0.5), rel=1e-12)
    # P(W <= 2S) = (1 - rho)(e^{2 rho} - rho e^rho) = 0.5 (e - 0.5 e^0.5) = 0.9469.
    assert mdl_wait_cdf(5.0, 0.1, 0.2) == pytest.approx(0.5 * (math.e - 0.5 * math.exp(0.5)))


@pytest.mark.parametrize("lam,S,t", [(5, 0.1, 0.05), (5, 0.1, 0.37), (9, 0.1, 0.85),
                                     (9.5, 0.1, 1.234), (2, 0.3, 0.9), (0.5, 1.0, 7.5)])
def test_wait_cdf_equals_crommelins_alternating_sum(lam, S, t):
    assert mdl_wait_cdf(lam, S, t) == pytest.approx(crommelin(lam, S, t), rel=1e-9)


def test_wait_cdf_against_a_simulated_queue():
    # Lindley recursion W_{n+1} = max(0, W_n + S - A_{n+1}), rho = 0.8, 100,000 arrivals.
    rng = np.random.default_rng(7)
    lam, S = 8.0, 0.1
    A = rng.exponential(1 / lam, 100_000)
    W = np.empty(A.size)
    w = 0.0
    for i, a in enumerate(A):
        W[i] = w
        w = max(0.0, w + S - a)
    W = W[5000:]                                      # drop the warm-up
    t = np.array([0.0, 0.05, 0.1, 0.2, 0.5, 1.0])
    sim = (W[:, None] <= t[None, :]).mean(axis=0)
    np.testing.assert_allclose(mdl_wait_cdf(lam, S, t), sim, atol=0.02)
    assert W.mean() == pytest.approx(mdl_mean_wait_s(lam, S), rel=0.1)     # 0.2 s


def test_wait_cdf_integrates_to_the_pk_mean():
    # E[W] = integral of P(W > t) dt: rho = 0.8 gives 0.8 / (2 x 0.2) = 2 S.
    S = 1.0
    t = np.linspace(0.0, 80.0, 8001)
    F = mdl_wait_cdf(0.8, S, t)
    assert np.all(np.diff(F) >= -1e-15)
    tail = 1 - F
    area = float(np.sum((tail[1:] + tail[:-1]) / 2 * np.diff(t)))
    assert area == pytest.approx(mdl_mean_wait_s(0.8, S), rel=1e-4)


def test_wait_tail_beyond_the_exact_span_and_heavy_traffic():
    # rho = 0.99: the diffusion approximation rho exp(-2 (1 - rho) t / (rho S)) is close.
    tail = 1 - mdl_wait_cdf(0.99, 1.0, np.array([200.0, 500.0]))
    approx = 0.99 * np.exp(-2 * 0.01 * np.array([200.0, 500.0]) / 0.99)
    np.testing.assert_allclose(tail, approx, rtol=0.1)
    # Across the switch to the exponential continuation: continuous and monotone.
    x = EXACT_WAIT_SPAN + np.array([-1.0, -1e-9, 0.0, 1e-9, 1.0, 100.0])
    F = mdl_wait_cdf(0.999, 1.0, x)
    assert np.all(np.diff(F) >= 0)
    assert F[1] == pytest.approx(F[3], abs=1e-9)
    assert mdl_wait_quantile_s(0.999, 1.0, 0.9999) > EXACT_WAIT_SPAN


def test_wait_quantile_by_hand():
    assert mdl_wait_quantile_s(5.0, 0.1, 0.5) == 0.0            # p <= 1 - rho
    # p = (1 - rho) e^rho = 0.8244 is reached exactly at t = S.
    assert mdl_wait_quantile_s(5.0, 0.1, 0.5 * math.exp(0.5)) == pytest.approx(0.1, rel=1e-9)


@given(rho=st.floats(0.0, 0.995), x=st.floats(0.0, 60.0), dx=st.floats(0.0, 5.0),
       drho=st.floats(0.0, 0.004))
def test_wait_cdf_properties(rho, x, dx, drho):
    F = mdl_wait_cdf(rho, 1.0, np.array([x, x + dx]))
    assert 1 - rho - 1e-12 <= F[0] <= F[1] + 1e-12 and F[1] <= 1.0
    assert mdl_wait_cdf(rho + drho, 1.0, x) <= F[0] + 1e-12   # busier: never shorter waits


@given(rho=st.floats(0.01, 0.98), p=st.floats(0.02, 0.995))
def test_wait_quantile_inverts_the_cdf(rho, p):
    q = mdl_wait_quantile_s(rho / 0.2, 0.2, p)
    assert q >= 0 and math.isfinite(q)
    if q > 0:
        assert mdl_wait_cdf(rho / 0.2, 0.2, q) == pytest.approx(p, abs=1e-7)
    else:
        assert p <= 1 - rho + 1e-12


@given(rho=st.lists(st.floats(0.01, 0.995), min_size=1, max_size=12),
       p=st.floats(0.02, 0.999))
def test_wait_quantiles_of_many_queues_at_once(rho, p):
    # An array of queues (some far into the tail beyond the exact span) inverts elementwise,
    # and a busier queue never has a shorter quantile.
    r = np.asarray(rho)
    q = mdl_wait_quantile_s(r / 0.2, 0.2, p)
    assert q.shape == r.shape and np.all(np.isfinite(q)) and np.all(q >= 0)
    order = np.argsort(r)
    assert np.all(np.diff(q[order]) >= -1e-12)
    for ri, qi in zip(r, q, strict=True):
        if qi > 0:
            assert mdl_wait_cdf(ri / 0.2, 0.2, qi) == pytest.approx(p, abs=1e-7)
        else:
            assert p <= 1 - ri + 1e-12


@given(lam=st.floats(0.0, 9.9), dl=st.floats(0.0, 0.09))
def test_mean_wait_grows_with_rate(lam, dl):
    w = mdl_mean_wait_s(lam, 0.1)
    assert 0 <= w <= mdl_mean_wait_s(lam + dl, 0.1)
    assert w == pytest.approx(0.5 * lam * 0.1 * 0.1 / (1 - lam * 0.1))    # half of M/M/1


# ---- by hand ---------------------------------------------------------------------------------
def test_mdl_mean_wait_at_half_load_of_a_one_second_server():
    # Pollaczek-Khinchine with zero service variance, W = rho S / (2 (1 - rho)):
    # lambda = 0.5/s, S = 1 s: rho = 0.5 -> 0.5 x 1 / (2 x 0.5) = 0.5 s.
    assert mdl_mean_wait_s(0.5, 1.0) == pytest.approx(0.5, rel=1e-12)
    # The M/M/1 queue at the same load waits rho S / (1 - rho) = 1 s: twice as long.
    assert 2 * mdl_mean_wait_s(0.5, 1.0) == pytest.approx(0.5 * 1.0 / (1 - 0.5), rel=1e-12)


# ---- the largest load that meets a wait target -----------------------------------------------
def test_max_utilisation_without_waiting_is_one_minus_p():
    # t = 0: P(W = 0) = 1 - rho (the share of arrivals that find the server idle), so
    # P(W <= 0) >= 0.9 holds up to rho = 1 - 0.9 = 0.1, for any service time.
    for S in (0.01, 0.1, 2.0):
        rho = mdl_max_utilisation(0.0, S, 0.9)
        assert rho == pytest.approx(0.1, abs=1e-6)
        assert rho <= 0.1 + 1e-12                      # a load that meets the target
    # p = 0.5: half the arrivals may wait, rho* = 0.5.
    assert mdl_max_utilisation(0.0, 1.0, 0.5) == pytest.approx(0.5, abs=1e-6)


def test_max_utilisation_at_one_service_time_solves_crommelins_first_term():
    # t = S: P(W <= S) = (1 - rho) e^rho (Crommelin's k = 0 term; k = 1 is 0). At p = 0.9:
    # rho = 0.3 gives 0.7 e^0.3 = 0.945 >= 0.9 and rho = 0.5 gives 0.5 e^0.5 = 0.824 < 0.9,
    # so the root lies between; at the returned load the formula gives 0.9.
    rho = mdl_max_utilisation(0.2, 0.2, 0.9)
    assert 0.3 < rho < 0.5
    assert (1 - rho) * math.exp(rho) == pytest.approx(0.9, abs=1e-5)
    assert (1 - rho) * math.exp(rho) >= 0.9


def test_max_utilisation_broadcasts_and_checks_its_inputs():
    # Elementwise: the t = 0 case at three probabilities, 1 - p each.
    np.testing.assert_allclose(mdl_max_utilisation(0.0, 1.0, np.array([0.5, 0.8, 0.9])),
                               [0.5, 0.2, 0.1], atol=1e-6)
    with pytest.raises(tk.TokenomicsError, match="wait_s must be >= 0"):
        mdl_max_utilisation(-1.0, 1.0, 0.9)
    with pytest.raises(tk.TokenomicsError, match="service_time_s must be > 0"):
        mdl_max_utilisation(1.0, 0.0, 0.9)
    with pytest.raises(tk.TokenomicsError, match=r"probability must be in \(0, 1\)"):
        mdl_max_utilisation(1.0, 1.0, 1.0)


@given(x=st.floats(0.0, 30.0), dx=st.floats(0.0, 10.0), p=st.floats(0.05, 0.99))
def test_max_utilisation_meets_its_target_and_grows_with_the_wait(x, dx, p):
    # The load found meets the target (the CDF there is >= p), and a longer allowed wait
    # never allows less load.
    rho = mdl_max_utilisation(x, 1.0, p)
    assert 0.0 <= rho < 1.0
    assert mdl_wait_cdf(rho, 1.0, x) >= p - 1e-12
    assert mdl_max_utilisation(x + dx, 1.0, p) >= rho - 1e-6


def test_queueing_and_disagg_import_without_scipy_stats_or_optimize():
    code = ("import sys, tokenomics.serving.queueing, tokenomics.serving.disagg\n"
            "print(sorted(m for m in ('scipy.stats', 'scipy.optimize') if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"
