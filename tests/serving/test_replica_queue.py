"""TTFT on a loaded continuous-batching replica (serving/replica_queue.py): one queue."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tokenomics as tk
from tokenomics.serving.replica_queue import replica_ttft, slot_wait

D8 = tk.Deployment("llama-3.1-8b", "h100-sxm")
D70 = tk.Deployment("llama-3.1-70b", "h100-sxm", tp=4)


def _erlang_c(c: int, a: float) -> float:
    """Erlang's C formula by hand: P(wait) in M/M/c at offered load a = lambda / mu1."""
    rho = a / c
    top = a ** c / math.factorial(c) / (1 - rho)
    return top / (sum(a ** k / math.factorial(k) for k in range(c)) + top)


def test_one_place_at_a_constant_rate_is_m_m_1():
    # lambda 1/s, mu 2/s: P(wait) = rho = 0.5, mean wait rho / (mu - lambda) = 0.5 s
    p, w, d = slot_wait([1], [2.0], 1.0)
    assert (p, w, d) == pytest.approx((0.5, 0.5, 1.0), rel=1e-12)


@pytest.mark.parametrize("c, a", [(2, 1.5), (3, 2.0), (8, 6.5)])
def test_places_that_each_serve_at_one_rate_are_erlang_c(c, a):
    # r(n) = n mu1 up to c places: the birth-death chain is M/M/c, P(wait) is Erlang C and
    # the wait of those who wait is exponential at c mu1 - lambda
    n = np.arange(1, c + 1)
    p, w, d = slot_wait(n, n * 1.0, a)
    assert p == pytest.approx(_erlang_c(c, a), rel=1e-12)
    assert d == pytest.approx(c - a, rel=1e-12)
    assert w == pytest.approx(_erlang_c(c, a) / (c - a), rel=1e-12)


def test_slot_wait_refuses_what_has_no_steady_state():
    with pytest.raises(tk.TokenomicsError, match="no steady state"):
        slot_wait([1, 2], [1.0, 2.0], 2.0)
    with pytest.raises(tk.TokenomicsError, match="nodes from 1"):
        slot_wait([2, 3], [1.0, 2.0], 0.5)
    with pytest.raises(tk.TokenomicsError, match="finite"):
        slot_wait([1], [float("nan")], 0.5)


@pytest.mark.parametrize("rate", [1e-4, 1e-7, 5e-324])   # the fuzz profile's two cases
def test_a_lone_request_pays_its_own_prefill_only(rate):
    # At a vanishing rate the replica is idle when a request comes: no place to wait for,
    # no step in flight, so the TTFT is the prompt's step alone (the engine's prefill).
    r = replica_ttft(D8, 2048, 256, rate)
    assert r.p50_s == pytest.approx(float(tk.prefill(D8, 2048).time_s), rel=1e-3)
    assert r.busy_probability < 1e-3 and r.slot_wait_probability == 0.0
    assert r.sharing_mean_s >= 0.0          # a difference of means, never negative by rounding


def _simulated_ttft(dep, inp, out, rate, seeds, steps):
    """TTFTs of ``seeds`` independent simulations of the replica, each past its start-up."""
    runs = []
    for seed in range(seeds):
        t = np.asarray(tk.simulate_serving(dep, rate, inp, out, steps=steps, seed=seed).ttft_s)
        runs.append(t[len(t) // 4:])
    return np.concatenate(runs)


_NEAR_CAPACITY_8B = pytest.mark.xfail(strict=True, reason=(
    "issue 28: at 95% of steady_state's capacity the 8B replica's simulated p99 is 3x the "
    "chain's (pooled over 10 seeds: 2.6 s against 0.82 s; p50 and the 70B case agree). The "
    "simulation's naive gate preempts when lognormal outputs overfill the KV (107 preemptions "
    "in 30,000 overloaded steps), so it saturates at 97.4% of the chain's capacity (70B: "
    "99.6%): 95% offered is 97.6% of its own, where the wait grows as 1 / (1 - rho)."))


@pytest.mark.parametrize("dep, inp, out", [(D8, 2048, 256), (D70, 1024, 512)],
                         ids=["8b-1xh100", "70b-4xh100"])
@pytest.mark.parametrize("load, seeds, steps", [(0.5, 8, 20_000), (0.8, 8, 20_000),
                                                (0.95, 10, 40_000)], ids=["50%", "80%", "95%"])
def test_it_agrees_with_the_simulation_of_the_same_replica(dep, inp, out, load, seeds, steps,
                                                           request):
    # Issue 28: the journey's M/D/1 replica gave 3.3x simulate_serving's p99 at 80% load.
    # The chain and the step-by-step simulation (Poisson arrivals, lognormal outputs, the
    # same step engine and token budget), pooled over independent seeds (one run's p99 at
    # 95% load spans 0.27-1.34 s over 20 seeds for the 70B): median, 99th percentile and
    # mean within 10% (the band) from 50% to 95% of the replica's capacity.
    if dep is D8 and load == 0.95:
        request.applymarker(_NEAR_CAPACITY_8B)
    mu = float(tk.steady_state(dep, "max", inp, out).requests_per_s)
    r = replica_ttft(dep, inp, out, load * mu)
    sim = _simulated_ttft(dep, inp, out, load * mu, seeds, steps)
    assert r.p50_s == pytest.approx(np.percentile(sim, 50), rel=0.10)
    assert r.p99_s == pytest.approx(np.percentile(sim, 99), rel=0.10)
    assert r.mean_s == pytest.approx(sim.mean(), rel=0.10)


def test_load_lengthens_every_quantile_and_the_parts_add_up():
    mu = float(tk.steady_state(D8, "max", 2048, 256).requests_per_s)
    rs = [replica_ttft(D8, 2048, 256, f * mu) for f in (0.2, 0.5, 0.8, 0.95)]
    for lo, hi in zip(rs, rs[1:], strict=False):
        assert lo.p50_s <= hi.p50_s and lo.p99_s <= hi.p99_s and lo.mean_s <= hi.mean_s
    for r in rs:
        parts = r.slot_wait_mean_s + r.step_residual_mean_s + r.own_step_s + r.sharing_mean_s
        assert parts == pytest.approx(r.mean_s, rel=1e-9)
        assert r.p50_s < r.p99_s and 0.0 <= r.quantile(0.3) <= r.quantile(0.9)
        assert r.sharing_mean_s >= 0.0
    # only near capacity does the memory fill and a place have to be waited for
    assert rs[1].slot_wait_probability < 1e-6 < rs[3].slot_wait_probability


def test_a_prompt_over_the_budget_runs_its_chunks_one_prompt_at_a_time():
    # 20,000 tokens over an 8,192-token budget: three chunks, so its own steps take longer
    # than one chunk's and the queue is the chunks' M/D/1 server
    r = replica_ttft(D8, 20_000, 500, 0.5)
    one = float(tk.mixed_step(D8, 1, 10_250, 8192).time_s)
    assert r.own_step_s > 2 * one and r.p99_s > r.p50_s > r.own_step_s


def test_bad_arguments_get_library_errors():
    with pytest.raises(tk.TokenomicsError, match="at or above the replica's capacity"):
        replica_ttft(D8, 2048, 256, 1e3)
    with pytest.raises(tk.TokenomicsError, match="cached_tokens"):
        replica_ttft(D8, 2048, 256, 1.0, cached_tokens=2048)
    with pytest.raises(tk.TokenomicsError, match="token_budget"):
        replica_ttft(D8, 2048, 256, 1.0, token_budget=0)
    with pytest.raises(tk.TokenomicsError, match="probability"):
        replica_ttft(D8, 2048, 256, 1.0).quantile(1.0)
