"""Disaggregated prefill/decode serving against colocation: M/D/1 queues, goodput under SLOs.

Notes
-----
*Goodput* is the request rate at which a target fraction of requests meets the service-level
objectives: time to first token (TTFT) and time per output token (TPOT). Raw throughput counts
every token; goodput counts only requests served within the SLOs (S50).

**Queue.** Requests arrive as a Poisson process; each prefill server is an M/D/1 queue
(deterministic service time :math:`S`, utilisation :math:`\\rho = \\lambda S`). The mean wait is
the Pollaczek-Khinchine formula with zero service variance,
:math:`W_q = \\rho S / (2(1 - \\rho))` (:func:`mdl_mean_wait_s`), and its distribution is
Crommelin's (:func:`mdl_wait_cdf`, :func:`mdl_wait_quantile_s`).

**Disaggregated** (:func:`disaggregated_goodput`, :func:`disaggregated_at_rate`): ``n_prefill``
prefill instances and ``n_decode`` decode instances, each a replica of its deployment. Arrivals
are split evenly over the prefill instances (each an M/D/1 queue serving one prompt at a time:
service :math:`S_p` = :func:`~tokenomics.physics.step.prefill` at batch 1), the KV of the prompt
then crosses to a decode instance (:math:`t_x = \\alpha + M_{KV}/\\beta`,
:func:`~tokenomics.physics.collectives.p2p_time`), so :math:`\\mathrm{TTFT} = W + S_p + t_x`. Decode
instances batch continuously: by Little's law the mean batch of one instance at rate
:math:`\\lambda_d = \\lambda / n_d` is :math:`B = \\lambda_d\\,O\\,t(B)` with :math:`t(B)` the
decode step at the mean context :math:`P + O/2`, and TPOT :math:`= t(B)`.

**Colocated** (:func:`colocated_goodput`, :func:`colocated_at_rate`): every instance runs both
phases in mixed steps with chunked prefill (decodes first, then a prompt chunk filling the
token budget, :func:`~tokenomics.serving.batching.mixed_step`).

The interference that disaggregation removes is the prompt work inside the decode steps:
while a prompt is being prefilled, every token of every running sequence waits for a chunk
step, so a strict TPOT caps the colocated prompt rate (S50). Splitting does not raise raw
throughput: the work per request is the same, and mixed steps even fill the decode steps'
idle compute. Disaggregation pays for its goodput with the KV transfer and with pools only as
good as their ratio (S51).

References
----------
.. [1] Y. Zhong et al., "DistServe: Disaggregating Prefill and Decoding for Goodput-optimized
   Large Language Model Serving", OSDI 2024, arXiv:2401.09670.
.. [2] P. Patel et al., "Splitwise: Efficient Generative LLM Inference Using Phase Splitting",
   ISCA 2024, arXiv:2311.18677.
.. [3] A. Agrawal et al., "Taming Throughput-Latency Tradeoff in LLM Inference with
   Sarathi-Serve", OSDI 2024, arXiv:2403.02310 (chunked prefill).
.. [4] L. Kleinrock, "Queueing Systems, Volume 1: Theory", Wiley, 1975 (Pollaczek-Khinchine
   formula, M/D/1).
.. [5] D. Gross, J. F. Shortle, J. M. Thompson, C. M. Harris, "Fundamentals of Queueing
   Theory", 4th ed., Wiley, 2008.
.. [6] Seed digest S50 (disaggregation raises goodput, not raw throughput) and S51 (when it
   pays).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy.optimize import brentq
from scipy.stats import poisson

from tokenomics.core import checks as V
from tokenomics.core.errors import DoesNotFitError, TokenomicsError
from tokenomics.data.deployment import Deployment
from tokenomics.physics.collectives import p2p_time
from tokenomics.physics.kv import kv_cache_bytes
from tokenomics.physics.memory import max_batch, memory_fit
from tokenomics.physics.step import decode, prefill
from tokenomics.serving.batching import mixed_step_seconds

#: Largest t/S for which :func:`mdl_wait_cdf` sums the exact series; beyond it the exact tail
#: at this point is continued with the asymptotic exponential decay.
EXACT_WAIT_SPAN = 1000

_GRID = 48          # points per round of the monotone searches
_ROUNDS = 3         # rounds: resolution (1/_GRID)**_ROUNDS of the bracket


# --------------------------------------------------------------------------------------------
# M/D/1 queue
# --------------------------------------------------------------------------------------------
def _rate_and_service(arrival_rate_per_s: Any, service_time_s: Any) -> tuple[Any, Any, Any]:
    lam = V.non_negative(arrival_rate_per_s, "arrival_rate_per_s", "1/s")
    S = V.positive(service_time_s, "service_time_s", "s")
    lam, S = np.broadcast_arrays(lam, S)
    rho = lam * S
    if np.any(rho >= 1):
        i = np.flatnonzero(np.ravel(rho >= 1))[0]
        r, s = float(np.ravel(lam)[i]), float(np.ravel(S)[i])
        raise TokenomicsError(
            f"utilisation rho = arrival_rate_per_s x service_time_s = {V.fmt(r)} x {V.fmt(s)} "
            f"= {r * s:.4g} must be < 1: at or above 1 the queue is unstable (it grows without "
            f"bound); the largest stable rate is 1/S = {1 / s:.6g} per s")
    return lam, S, rho


def mdl_mean_wait_s(arrival_rate_per_s: Any, service_time_s: Any) -> Any:
    """Mean waiting time in queue of an M/D/1 queue (Pollaczek-Khinchine) [s].

    Parameters
    ----------
    arrival_rate_per_s : float or array_like
        Poisson arrival rate :math:`\\lambda` [1/s], >= 0.
    service_time_s : float or array_like
        Deterministic service time :math:`S` [s], > 0. Broadcast with the rate.

    Returns
    -------
    float or numpy.ndarray
        :math:`W_q` [s], the wait before service starts (service not included).

    Raises
    ------
    TokenomicsError
        If :math:`\\rho = \\lambda S \\ge 1` (unstable queue; the message gives :math:`1/S`),
        or a rate is negative.

    Notes
    -----
    The Pollaczek-Khinchine mean for M/G/1, :math:`W_q = \\lambda E[S^2] / (2(1-\\rho))`, with
    zero service variance (:math:`E[S^2] = S^2`):

    .. math:: W_q = \\frac{\\rho S}{2 (1 - \\rho)}, \\qquad \\rho = \\lambda S < 1,

    half the M/M/1 wait at the same utilisation.

    References
    ----------
    .. [1] L. Kleinrock, "Queueing Systems, Volume 1: Theory", Wiley, 1975, §5.6 (P-K).
    .. [2] D. Gross et al., "Fundamentals of Queueing Theory", 4th ed., Wiley, 2008, §5.1.

    Examples
    --------
    >>> mdl_mean_wait_s(5.0, 0.1)     # rho = 0.5: 0.5 x 0.1 / (2 x 0.5)
    0.05
    """
    _, S, rho = _rate_and_service(arrival_rate_per_s, service_time_s)
    return V.scalar_or_array(rho * S / (2.0 * (1.0 - rho)))


def _queue_probs(rho: np.ndarray, kmax: int) -> np.ndarray:
    """``q[:, j]`` = P(Q = j), j = 0..kmax+1: stationary number in an M/D/1 system (S = 1).

    The number in system at times ``S`` apart is the chain :math:`Q' = (Q - 1)^+ + M`,
    :math:`M \\sim \\mathrm{Poisson}(\\rho)`; balancing :math:`P(Q \\le k)` gives
    :math:`q_{k+1} = e^{\\rho} \\sum_{j=0}^{k-1} q'_j P(M > k - j)` with
    :math:`q'_0 = q_0 + q_1`, :math:`q'_j = q_{j+1}`: a sum of positive terms, free of the
    cancellation of the alternating form.
    """
    n = rho.size
    q = np.zeros((n, kmax + 2))
    q[:, 0] = 1.0 - rho
    q[:, 1] = (1.0 - rho) * np.expm1(rho)
    G = poisson.sf(np.arange(kmax + 1)[None, :], rho[:, None])   # G[:, i] = P(M > i)
    e = np.exp(rho)
    qp = np.zeros((n, kmax + 1))
    qp[:, 0] = q[:, 0] + q[:, 1]
    for k in range(1, kmax + 1):
        q[:, k + 1] = e * np.einsum("ij,ij->i", qp[:, :k], G[:, k:0:-1])
        qp[:, k] = q[:, k + 1]
    return q


def _primed(q: np.ndarray) -> np.ndarray:
    """:math:`q'_j = P((Q - 1)^+ = j)`."""
    qp = q[:, 1:].copy()
    qp[:, 0] += q[:, 0]
    return qp


def _cdf_at(qp: np.ndarray, rho: np.ndarray, x: np.ndarray) -> np.ndarray:
    """P(W <= x S) for x <= kmax + 1 (rows of ``qp``)."""
    k = np.floor(x)
    u = x - k
    j = np.arange(qp.shape[1])[None, :]
    m = k[:, None] - j
    pc = np.where(m >= 0, poisson.cdf(np.maximum(m, 0), (rho * (1.0 - u))[:, None]), 0.0)
    return np.minimum(np.sum(qp * pc, axis=1), 1.0)


def _decay_rate(rho: float) -> float:
    """Cramer root :math:`x` of :math:`\\rho (e^x - 1) = x` (tail :math:`\\propto e^{-x t/S}`)."""
    L = -math.log(rho)
    hi = min(2.0 * (1.0 - rho) / rho, 2.0 * L + 10.0)
    return float(brentq(lambda x: math.log(math.expm1(x) / x) - L, L, hi, xtol=1e-14,
                        rtol=1e-12))


def _wait_cdf(rho: np.ndarray, x: np.ndarray) -> np.ndarray:
    """P(W <= x S) for 1-d ``rho`` in [0, 1) and ``x`` >= 0 of the same length."""
    out = np.ones_like(x)
    live = rho > 0
    if not live.any():
        return out
    r, xx = rho[live], x[live]
    xc = np.minimum(xx, EXACT_WAIT_SPAN)
    ru, inv = np.unique(r, return_inverse=True)
    q = _queue_probs(ru, int(np.floor(xc).max()))
    F = _cdf_at(_primed(q)[inv], r, xc)
    far = xx > EXACT_WAIT_SPAN
    if far.any():
        th = {float(v): _decay_rate(float(v)) for v in np.unique(r[far])}
        rate = np.array([th[float(v)] for v in r[far]])
        F[far] = 1.0 - (1.0 - F[far]) * np.exp(-rate * (xx[far] - EXACT_WAIT_SPAN))
    out[live] = F
    return out


def mdl_wait_cdf(arrival_rate_per_s: Any, service_time_s: Any, wait_s: Any) -> Any:
    """Probability that an M/D/1 arrival waits at most ``wait_s`` before service.

    Parameters
    ----------
    arrival_rate_per_s : float or array_like
        Poisson arrival rate :math:`\\lambda` [1/s], >= 0.
    service_time_s : float or array_like
        Deterministic service time :math:`S` [s], > 0.
    wait_s : float or array_like
        Wait :math:`t` [s], >= 0. All three broadcast.

    Returns
    -------
    float or numpy.ndarray
        :math:`P(W \\le t)` in :math:`[1 - \\rho, 1]`: non-decreasing in :math:`t`,
        non-increasing in :math:`\\lambda`.

    Raises
    ------
    TokenomicsError
        If :math:`\\rho \\ge 1`, a rate or a wait is negative.

    Notes
    -----
    Exact for :math:`t/S \\le` :data:`EXACT_WAIT_SPAN` (1000). Crommelin's (Erlang's) form,

    .. math:: P(W \\le t) = (1 - \\rho) \\sum_{k=0}^{\\lfloor t/S \\rfloor}
              \\frac{[\\lambda (kS - t)]^k}{k!} e^{-\\lambda (kS - t)},

    alternates in sign: its terms reach :math:`e^{\\rho t/S}`, so cancellation costs digits and
    leaves none once :math:`\\rho t/S \\approx 37`; it is evaluated in an equivalent form of
    positive terms instead. With
    :math:`t = kS + u`, :math:`0 \\le u < S`, an arrival waits at most :math:`t` iff the
    customers present :math:`S - u` before it, less the one then in service, plus the
    arrivals in between (:math:`M \\sim \\mathrm{Poisson}(\\lambda (S - u))`) number at most
    :math:`k`:

    .. math:: P(W \\le kS + u) = \\sum_{j=0}^{k} q'_j\\, P(M \\le k - j),

    :math:`q'_j = P((Q - 1)^+ = j)` from the stationary number in system :math:`Q` (a
    recursion of positive terms, see the source). The two forms agree to rounding where the
    alternating one is usable (tested). Beyond :data:`EXACT_WAIT_SPAN` the exact tail at that
    point is continued as :math:`e^{-\\theta (t - t_0)}` with the exact asymptotic (Cramer)
    rate :math:`\\rho(e^{\\theta S} - 1) = \\theta S`, whose heavy-traffic limit is the
    diffusion approximation's :math:`P(W > t) \\approx \\rho e^{-2(1-\\rho) t / (\\rho S)}`.

    References
    ----------
    .. [1] A. K. Erlang, "Sandsynlighedsregning og Telefonsamtaler", 1909; C. D. Crommelin,
       "Delay probability formulae when the holding times are constant", P.O. Elec. Eng. J.
       25 (1932) 41-50.
    .. [2] L. Kleinrock, "Queueing Systems, Volume 1", Wiley, 1975.
    .. [3] G. J. Franx, "A simple solution for the M/D/c waiting time distribution",
       Operations Research Letters 29 (2001) 221-229.

    Examples
    --------
    >>> mdl_wait_cdf(5.0, 0.1, 0.0)        # P(W = 0) = 1 - rho
    0.5
    >>> round(mdl_wait_cdf(5.0, 0.1, 0.1), 4)   # (1 - rho) e^rho
    0.8244
    """
    lam, S, _ = _rate_and_service(arrival_rate_per_s, service_time_s)
    t = V.non_negative(wait_s, "wait_s", "s")
    lam, S, t = np.broadcast_arrays(lam, S, t)
    shape = lam.shape
    F = _wait_cdf(np.ravel(lam * S), np.ravel(t / S))
    return V.scalar_or_array(F.reshape(shape))


def _wait_quantile(rho: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Quantiles of W/S at probabilities ``p`` for 1-d ``rho`` of the same length.

    All elements at once: one queue table per distinct ``rho`` (grown until every ``p`` is
    passed or the exact span is reached), the integer bracket per element
    (:math:`P(W \\le kS) = P(Q \\le k)`), then a vectorized bisection inside it to 1e-15 S.
    """
    out = np.zeros(rho.shape)
    live = p > 1.0 - rho                  # otherwise that share of arrivals does not wait
    if not live.any():
        return out
    r, pp = rho[live], p[live]
    ru, inv = np.unique(r, return_inverse=True)
    kmax = 16
    while True:
        km = min(kmax, EXACT_WAIT_SPAN)
        q = _queue_probs(ru, km)
        c = np.cumsum(q[:, : km + 1], axis=1)[inv]
        if bool((c[:, -1] >= pp).all()) or km == EXACT_WAIT_SPAN:
            break
        kmax *= 4
    res = np.empty(r.shape)
    far = c[:, -1] < pp                   # beyond the exact span: invert the continuation
    if far.any():
        rates = {float(v): _decay_rate(float(v)) for v in np.unique(r[far])}
        th = np.array([rates[float(v)] for v in r[far]])
        res[far] = EXACT_WAIT_SPAN + np.log((1.0 - c[far, -1]) / (1.0 - pp[far])) / th
    near = ~far
    if near.any():
        k = np.argmax(c[near] >= pp[near, None], axis=1).astype(float)   # k >= 1
        qp, rn, pn = _primed(q)[inv][near], r[near], pp[near]
        lo, hi = np.zeros(k.shape), np.ones(k.shape)
        for _ in range(50):
            mid = 0.5 * (lo + hi)
            below = _cdf_at(qp, rn, k - 1.0 + mid) < pn
            lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
        res[near] = k - 1.0 + hi
    out[live] = res
    return out


def mdl_wait_quantile_s(arrival_rate_per_s: Any, service_time_s: Any, probability: Any) -> Any:
    """Waiting time an M/D/1 arrival does not exceed with the given probability [s].

    Parameters
    ----------
    arrival_rate_per_s : float or array_like
        Poisson arrival rate [1/s], >= 0, with :math:`\\rho = \\lambda S < 1`.
    service_time_s : float or array_like
        Deterministic service time [s], > 0.
    probability : float or array_like
        In (0, 1) (e.g. 0.9 for the p90 wait).

    Returns
    -------
    float or numpy.ndarray
        Smallest :math:`t` [s] with :math:`P(W \\le t) \\ge p`: 0 when
        :math:`p \\le 1 - \\rho` (that share of arrivals finds the server idle).

    Notes
    -----
    Inverts :func:`mdl_wait_cdf`: the integer multiples of :math:`S` bracket the quantile
    (:math:`P(W \\le kS) = P(Q \\le k)`), a root-finder places it inside.

    References
    ----------
    .. [1] L. Kleinrock, "Queueing Systems, Volume 1", Wiley, 1975.

    Examples
    --------
    >>> mdl_wait_quantile_s(5.0, 0.1, 0.5)    # half the arrivals find the server idle
    0.0
    >>> round(mdl_wait_quantile_s(5.0, 0.1, 0.99), 3)   # the p99 wait at rho = 0.5
    0.334
    """
    lam, S, rho = _rate_and_service(arrival_rate_per_s, service_time_s)
    p = _prob(probability, "probability")
    rho, S, p = np.broadcast_arrays(rho, S, p)
    out = _wait_quantile(np.ravel(rho).astype(float), np.ravel(p).astype(float))
    return V.scalar_or_array((out * np.ravel(S)).reshape(rho.shape))


def _prob(x: Any, name: str) -> np.ndarray:
    """``x`` as an array of probabilities strictly inside (0, 1); raise otherwise."""
    arr = np.asarray(V.non_negative(x, name, "count"), float)
    bad = (arr <= 0) | (arr >= 1)
    if bad.any():
        raise TokenomicsError(
            f"{name} must be in (0, 1), got {V.fmt(arr[bad].flat[0])}: with Poisson arrivals "
            "some requests always wait longer than any finite bound, so 1 cannot be met")
    return arr


def _max_rho_for_wait(x: float, p: float) -> float:
    """Largest rho with P(W <= x S) >= p (monotone: the CDF falls as rho grows)."""
    lo, hi = 0.0, 1.0
    rounds = 0
    while rounds <= _ROUNDS or (lo == 0.0 and rounds < 40):
        rounds += 1
        grid = np.linspace(lo, hi, _GRID + 1)[1:-1]
        ok = _wait_cdf(grid, np.full(grid.size, x)) >= p
        if not ok.any():
            hi = float(grid[0])
            continue
        i = int(np.flatnonzero(ok)[-1])
        lo = float(grid[i])
        hi = float(grid[i + 1]) if i + 1 < grid.size else hi
    return lo


# --------------------------------------------------------------------------------------------
# Shared inputs
# --------------------------------------------------------------------------------------------
def _int(x: Any, name: str, minimum: int = 1, unit: str = "count") -> int:
    arr = V.counts(x, name, minimum=minimum, unit=unit)
    if arr.ndim:
        raise TokenomicsError(f"{name} must be a single whole number, got an array")
    return int(arr)


def _scalar(arr: np.ndarray, name: str) -> float:
    if np.ndim(arr):
        raise TokenomicsError(f"{name} must be a single number, got an array")
    return float(arr)


@dataclass(frozen=True)
class _Workload:
    P: int
    out: int
    ctx: int
    ttft: float
    tpot: float
    frac: float


def _workload(dep: Deployment, input_tokens: Any, output_tokens: Any, ttft_slo_s: Any,
              tpot_slo_s: Any, slo_fraction: Any) -> _Workload:
    P = _int(input_tokens, "input_tokens", unit="token")
    out = _int(output_tokens, "output_tokens", unit="token")
    V.context_within(dep.model, np.asarray(float(P + out)), dep.allow_beyond_max_context,
                     "input_tokens + output_tokens")
    ttft = _scalar(V.positive(ttft_slo_s, "ttft_slo_s", "s"), "ttft_slo_s")
    tpot = _scalar(V.positive(tpot_slo_s, "tpot_slo_s", "s"), "tpot_slo_s")
    frac = float(_scalar(_prob(slo_fraction, "slo_fraction"), "slo_fraction"))
    return _Workload(P, out, int(math.ceil(P + out / 2)), ttft, tpot, frac)


def _rates(rate_per_s: Any) -> np.ndarray:
    return V.non_negative(rate_per_s, "rate_per_s", "1/s")


@dataclass(frozen=True)
class _DecodeTable:
    """Decode step time on integer batches 0..bmax (t(0) := t(1)) and its capacity."""

    t: np.ndarray
    bmax: int

    @property
    def r(self) -> np.ndarray:
        return np.arange(self.t.size) / self.t     # sequences per second of step: B / t(B)

    def t_of(self, B: np.ndarray) -> np.ndarray:
        """Step time at a real batch B in [0, bmax], linear between integers."""
        return np.interp(B, np.arange(self.t.size), self.t)

    def batch_at(self, y: np.ndarray) -> np.ndarray:
        """Least B with B = y t(B) (y = lambda_d O); inf where y exceeds the capacity.

        B / t(B) never falls as B grows (each operator's time per sequence falls or stays),
        so a binary search finds the segment holding the root, solved exactly there.
        """
        r = np.maximum.accumulate(self.r)
        y = np.asarray(y, float)
        i = np.clip(np.searchsorted(r, y, side="left"), 1, r.size - 1)
        d = self.t[i] - self.t[i - 1]
        with np.errstate(divide="ignore", invalid="ignore"):
            B = y * (self.t[i - 1] - (i - 1) * d) / (1.0 - y * d)
        B = np.clip(np.nan_to_num(B, nan=float(self.bmax), posinf=float(self.bmax)), i - 1, i)
        return np.where(y > r[-1] * (1 + 1e-12), np.inf, np.where(y <= 0, 0.0, B))


def _decode_table(dep: Deployment, ctx: int) -> _DecodeTable:
    bmax = int(max_batch(dep, ctx))
    if bmax < 1:
        raise DoesNotFitError(
            f"memory binds: not one sequence of {ctx} tokens (input + output/2) fits beside "
            f"the weights of {dep.model.id} on {dep.n_devices} x {dep.hardware.id} "
            f"(tp={dep.tp}, pp={dep.pp}); add devices or use smaller weight/KV formats")
    B = np.arange(1, bmax + 1)
    r = decode(dep, B, ctx, on_oom="mark")
    fits = np.atleast_1d(np.asarray(r.fits, bool))
    n = int(fits.size if fits.all() else np.argmin(fits))    # leading batches that fit
    t = np.atleast_1d(np.asarray(r.step_time_s, float))[:max(n, 1)]
    return _DecodeTable(np.concatenate(([t[0]], t)), int(t.size))


# --------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SLOAttainment:
    """Service at given request rates. Rates [req/s], times [s].

    Attributes
    ----------
    rate_per_s : array
        Offered request rate of the whole system [req/s].
    ttft_attainment : array
        Fraction of requests whose TTFT meets the SLO, in [0, 1] (0 when the prefill queue
        is unstable).
    tpot_met : array of bool
        Whether the TPOT (a mean over the steps, the same for every request in this model)
        meets its SLO; False when the decode batch the rate needs does not fit.
    attainment : array
        Fraction of requests meeting both: ``ttft_attainment * tpot_met``.
    goodput_per_s : array
        ``rate_per_s * attainment`` [req/s]: never negative, never NaN.
    goodput_per_s_per_device : array
        Goodput over all devices of the system [req/s/device].
    output_tokens_per_s_per_device : array
        ``goodput_per_s_per_device * output_tokens`` [token/s/device].
    ttft_mean_s, tpot_s : array
        Mean TTFT and the TPOT [s]; ``inf`` where the queue is unstable or the decode batch
        does not fit.
    decode_batch : array
        Mean sequences decoding on one instance (Little's law); ``inf`` when over capacity.
    prefill_utilisation : array
        Utilisation of one prefill server, :math:`\\rho` (may exceed 1: then unstable).
    meets_slo : array of bool
        ``attainment >= slo_fraction``.
    n_devices : int
        Devices of the whole system.
    """

    rate_per_s: Any
    ttft_attainment: Any
    tpot_met: Any
    attainment: Any
    goodput_per_s: Any
    goodput_per_s_per_device: Any
    output_tokens_per_s_per_device: Any
    ttft_mean_s: Any
    tpot_s: Any
    decode_batch: Any
    prefill_utilisation: Any
    meets_slo: Any
    n_devices: int


@dataclass(frozen=True)
class Goodput:
    """The largest request rate at which the SLOs are met, and the service there.

    Attributes
    ----------
    layout : str
        ``"disaggregated"`` or ``"colocated"``.
    n_prefill, n_decode : int
        Instances serving prefill and decode (colocated: both the instance count, every
        instance serving both phases).
    n_devices : int
        Devices of the whole system.
    rate_per_s : float
        Largest request rate at which at least ``slo_fraction`` of requests meet the TTFT
        SLO and the TPOT SLO is met [req/s]; > 0.
    goodput_per_s_per_device : float
        ``rate_per_s / n_devices`` [req/s/device].
    output_tokens_per_s_per_device : float
        ``goodput_per_s_per_device * output_tokens`` [token/s/device].
    binding : str
        The constraint that stops a higher rate: ``"ttft"`` (prefill queueing),
        ``"tpot"`` (decode step), ``"memory"`` (the decode batch fills memory) or
        ``"link"`` (the KV transfers saturate the prefill instances' links).
    ttft_mean_s, ttft_quantile_s : float
        Mean TTFT and the ``slo_fraction`` quantile at that rate [s] (quantile <= SLO).
    tpot_s : float
        TPOT at that rate [s] (<= SLO).
    decode_batch : float
        Mean sequences decoding per instance.
    prefill_utilisation : float
        Utilisation of one prefill server.
    rate_limits_per_s : dict
        The largest rate each constraint alone allows [req/s] (``inf`` when it never binds).
    """

    layout: str
    n_prefill: int
    n_decode: int
    n_devices: int
    rate_per_s: float
    goodput_per_s_per_device: float
    output_tokens_per_s_per_device: float
    binding: str
    ttft_mean_s: float
    ttft_quantile_s: float
    tpot_s: float
    decode_batch: float
    prefill_utilisation: float
    rate_limits_per_s: dict[str, float]


def _attainment(rate: np.ndarray, ttft_att: np.ndarray, tpot_ok: np.ndarray,
                ttft_mean: np.ndarray, tpot: np.ndarray, batch: np.ndarray, rho: np.ndarray,
                n_dev: int, w: _Workload) -> SLOAttainment:
    att = ttft_att * tpot_ok
    good = rate * att
    S = V.scalar_or_array

    def b(x: np.ndarray) -> Any:
        return bool(x) if np.ndim(x) == 0 else x

    return SLOAttainment(
        rate_per_s=S(rate), ttft_attainment=S(ttft_att), tpot_met=b(tpot_ok),
        attainment=S(att), goodput_per_s=S(good), goodput_per_s_per_device=S(good / n_dev),
        output_tokens_per_s_per_device=S(good * w.out / n_dev), ttft_mean_s=S(ttft_mean),
        tpot_s=S(tpot), decode_batch=S(batch), prefill_utilisation=S(rho),
        meets_slo=b(att >= w.frac * (1 - 1e-9)), n_devices=n_dev)


# --------------------------------------------------------------------------------------------
# Disaggregated
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Disagg:
    w: _Workload
    S_p: float
    t_x: float
    kv_bytes: float
    link: float
    table: _DecodeTable
    n_dev_p: int
    n_dev_d: int
    rho_ttft: float          # largest prefill utilisation meeting the TTFT SLO
    r_d: float               # largest rate one decode instance takes within TPOT and memory
    decode_binding: str      # "tpot" or "memory"
    B_c: float               # its batch


def _disagg(prefill_dep: Deployment, decode_dep: Deployment, input_tokens: Any,
            output_tokens: Any, ttft_slo_s: Any, tpot_slo_s: Any, slo_fraction: Any,
            link_bytes_per_s: Any, link_latency_s: Any) -> _Disagg:
    if prefill_dep.model != decode_dep.model:
        raise TokenomicsError(
            f"the prefill and decode deployments must serve the same model, got "
            f"{prefill_dep.model.id} and {decode_dep.model.id}")
    w = _workload(decode_dep, input_tokens, output_tokens, ttft_slo_s, tpot_slo_s,
                  slo_fraction)
    link = _scalar(V.positive(link_bytes_per_s, "link_bytes_per_s", "B/s"), "link_bytes_per_s")
    lat = _scalar(V.non_negative(link_latency_s, "link_latency_s", "s"), "link_latency_s")
    S_p = float(prefill(prefill_dep, w.P).time_s)
    kv = float(kv_cache_bytes(decode_dep.model, w.P, 1, decode_dep.kv_dtype,
                              decode_dep.allow_beyond_max_context))
    t_x = float(p2p_time(kv, link, lat))
    slack = w.ttft - S_p - t_x
    if slack < 0:
        raise TokenomicsError(
            f"ttft binds: ttft_slo_s={V.fmt(w.ttft)} is below the prefill service time "
            f"{S_p:.4g} s plus the KV transfer {t_x:.4g} s ({kv / 1e9:.4g} GB at "
            f"{link / 1e9:.4g} GB/s) = {S_p + t_x:.4g} s, which no rate or pool size can "
            "beat; relax the TTFT SLO, use a faster link, or a faster prefill deployment")
    table = _decode_table(decode_dep, w.ctx)
    t1 = float(table.t[1])
    if t1 > w.tpot:
        raise TokenomicsError(
            f"tpot binds: tpot_slo_s={V.fmt(w.tpot)} is below the decode step at batch 1, "
            f"{t1:.4g} s ({decode_dep.model.id} on {decode_dep.n_devices} x "
            f"{decode_dep.hardware.id}, context {w.ctx}), which no rate or pool size can "
            "beat; relax the TPOT SLO or use a faster decode deployment")
    rho_ttft = _max_rho_for_wait(slack / S_p, w.frac)
    # Decode: largest real batch with t(B) <= SLO (t interpolated between integers).
    tt = table.t[1:]
    k = int(np.flatnonzero(tt <= w.tpot)[-1]) + 1          # largest integer batch within SLO
    if k == table.bmax:
        B_c, binding = float(k), "memory"
    else:
        B_c = k + (w.tpot - tt[k - 1]) / (tt[k] - tt[k - 1])
        binding = "tpot"
    r_d = B_c / (w.out * float(table.t_of(np.asarray(B_c))))
    return _Disagg(w, S_p, t_x, kv, link, table, prefill_dep.n_devices, decode_dep.n_devices,
                   rho_ttft, r_d, binding, B_c)


def _disagg_limits(m: _Disagg, n_p: Any, n_d: Any) -> dict[str, Any]:
    """Largest request rate each constraint allows [1/s]; scalars or arrays of instance
    counts (each limit is linear in its pool's count)."""
    n_p_arr, n_d_arr = np.asarray(n_p, float), np.asarray(n_d, float)
    out = {"ttft": n_p_arr * m.rho_ttft / m.S_p,
           "link": n_p_arr * m.link / m.kv_bytes if m.kv_bytes > 0
           else np.full(n_p_arr.shape, math.inf),
           m.decode_binding: n_d_arr * m.r_d}
    return {k: float(v) if np.ndim(v) == 0 else v for k, v in out.items()}


def _disagg_at(m: _Disagg, n_p: int, n_d: int, rate: np.ndarray) -> SLOAttainment:
    w = m.w
    rho = rate * m.S_p / n_p
    link_u = rate * m.kv_bytes / (n_p * m.link)
    stable = (rho < 1) & (link_u <= 1 + 1e-12)
    r_s = np.where(stable, rho, 0.0)
    x = np.full(rate.shape, (w.ttft - m.S_p - m.t_x) / m.S_p)
    F = _wait_cdf(np.ravel(r_s), np.ravel(x)).reshape(rate.shape)
    ttft_att = np.where(stable, F, 0.0)
    wq = np.where(stable, r_s * m.S_p / (2 * (1 - r_s)), np.inf)
    B = m.table.batch_at(rate * w.out / n_d)
    fits = np.isfinite(B)
    tpot = np.where(fits, m.table.t_of(np.where(fits, B, 0.0)), np.inf)
    ok = fits & (tpot <= w.tpot * (1 + 1e-12))
    n_dev = n_p * m.n_dev_p + n_d * m.n_dev_d
    return _attainment(rate, ttft_att, ok, wq + m.S_p + m.t_x, tpot, B, rho, n_dev, w)


def disaggregated_at_rate(prefill_dep: Deployment, decode_dep: Deployment, n_prefill: int,
                          n_decode: int, input_tokens: int, output_tokens: int,
                          ttft_slo_s: float, tpot_slo_s: float, rate_per_s: Any,
                          slo_fraction: float = 0.9, link_bytes_per_s: float = 200e9,
                          link_latency_s: float = 10e-6) -> SLOAttainment:
    """SLO attainment and goodput of a disaggregated system at given request rates.

    Parameters
    ----------
    prefill_dep, decode_dep : Deployment
        One prefill instance and one decode instance (the same model; may be equal).
    n_prefill, n_decode : int
        Instances in each pool, >= 1.
    input_tokens, output_tokens : int
        Prompt and output length of every request [token].
    ttft_slo_s, tpot_slo_s : float
        SLOs on the time to first token and the time per output token [s], > 0.
    rate_per_s : float or array_like
        Request rates to evaluate [req/s], >= 0.
    slo_fraction : float
        Share of requests that must meet the TTFT SLO, in (0, 1) (reported in
        ``meets_slo``).
    link_bytes_per_s : float
        Per-direction bandwidth each prefill instance has to the decode pool [B/s] (default
        200 GB/s: four 400 Gb/s NICs, one per GPU of a tp=4 H100 instance).
    link_latency_s : float
        Latency of one KV transfer [s] (default 10 us).

    Returns
    -------
    SLOAttainment
        Goodput ``rate * P(TTFT <= SLO) * [TPOT <= SLO]``, which falls to 0 as the rate
        reaches the prefill pool's capacity ``n_prefill / S_p`` (0 beyond it: an unstable
        queue; never negative, never NaN).

    Raises
    ------
    TokenomicsError
        For SLOs no rate can meet (the message names ``ttft`` or ``tpot``), bad inputs.
    DoesNotFitError
        When not one sequence fits the decode deployment's memory, or a prompt the prefill
        deployment's.

    Notes
    -----
    Per prefill server (arrivals split evenly, one prompt at a time, service
    :math:`S_p` = :func:`~tokenomics.physics.step.prefill` at batch 1,
    :math:`\\rho = \\lambda S_p / n_p`): :math:`\\mathrm{TTFT} = W + S_p + t_x`,
    :math:`P(\\mathrm{TTFT} \\le T) = P(W \\le T - S_p - t_x)` from :func:`mdl_wait_cdf`;
    :math:`t_x = \\alpha + M_{KV}(P)/\\beta` with the KV in the decode deployment's format.
    The link is a capacity only (transfers do not queue): above :math:`n_p \\beta / M_{KV}`
    requests per second the goodput is 0. Per decode instance, the Little's-law fixed point
    :math:`B = (\\lambda/n_d)\\, O\\, t(B)`, :math:`t` the decode step at context
    :math:`P + O/2` interpolated between integer batches (:math:`t(B<1) = t(1)`); TPOT
    :math:`= t(B)`; no solution within :func:`~tokenomics.physics.memory.max_batch`: TPOT fails.

    References
    ----------
    .. [1] Y. Zhong et al., DistServe, OSDI 2024, arXiv:2401.09670.
    .. [2] L. Kleinrock, "Queueing Systems, Volume 1", Wiley, 1975.

    Examples
    --------
    >>> import tokenomics as tk
    >>> d = tk.Deployment("llama-3.1-8b", "h100-sxm")
    >>> r = disaggregated_at_rate(d, d, 1, 1, 2048, 256, 1.0, 0.033, [10.0, 40.0])
    >>> bool(r.meets_slo[0]), float(r.goodput_per_s[1])   # 40/s > 1 / 30 ms: unstable
    (True, 0.0)
    """
    m = _disagg(prefill_dep, decode_dep, input_tokens, output_tokens, ttft_slo_s, tpot_slo_s,
                slo_fraction, link_bytes_per_s, link_latency_s)
    n_p = _int(n_prefill, "n_prefill")
    n_d = _int(n_decode, "n_decode")
    return _disagg_at(m, n_p, n_d, _rates(rate_per_s))


def _disagg_goodput(m: _Disagg, n_p: int, n_d: int) -> Goodput:
    lim = _disagg_limits(m, n_p, n_d)
    binding = min(lim, key=lambda k: lim[k])
    rate = lim[binding]
    at = _disagg_at(m, n_p, n_d, np.asarray(rate))
    rho = rate * m.S_p / n_p
    wq = float(mdl_wait_quantile_s(rho / m.S_p, m.S_p, m.w.frac)) if rho < 1 else math.inf
    n_dev = at.n_devices
    limits = {"ttft": math.inf, "tpot": math.inf, "memory": math.inf, "link": math.inf}
    limits.update(lim)
    return Goodput(
        layout="disaggregated", n_prefill=n_p, n_decode=n_d, n_devices=n_dev,
        rate_per_s=float(rate), goodput_per_s_per_device=float(rate) / n_dev,
        output_tokens_per_s_per_device=float(rate) * m.w.out / n_dev, binding=binding,
        ttft_mean_s=float(at.ttft_mean_s), ttft_quantile_s=wq + m.S_p + m.t_x,
        tpot_s=float(at.tpot_s), decode_batch=float(at.decode_batch),
        prefill_utilisation=float(rho), rate_limits_per_s=limits)


def disaggregated_goodput(prefill_dep: Deployment, decode_dep: Deployment, n_prefill: int,
                          n_decode: int, input_tokens: int, output_tokens: int,
                          ttft_slo_s: float, tpot_slo_s: float, slo_fraction: float = 0.9,
                          link_bytes_per_s: float = 200e9,
                          link_latency_s: float = 10e-6) -> Goodput:
    """Largest request rate a disaggregated prefill/decode system serves within its SLOs.

    Parameters
    ----------
    prefill_dep, decode_dep : Deployment
        One prefill instance and one decode instance (the same model; may be equal).
    n_prefill, n_decode : int
        Instances in each pool, >= 1.
    input_tokens, output_tokens : int
        Prompt and output length of every request [token].
    ttft_slo_s, tpot_slo_s : float
        SLOs on the time to first token and the time per output token [s], > 0.
    slo_fraction : float
        Share of requests that must meet the TTFT SLO, in (0, 1) (default 0.9). The TPOT is
        the same for every request in this model and must meet its SLO.
    link_bytes_per_s : float
        Per-direction bandwidth each prefill instance has to the decode pool [B/s] (default
        200 GB/s).
    link_latency_s : float
        Latency of one KV transfer [s] (default 10 us).

    Returns
    -------
    Goodput
        ``rate_per_s`` > 0 [req/s], per device [req/s/device] and in output tokens
        [token/s/device], the binding constraint, TTFT and TPOT there.

    Raises
    ------
    TokenomicsError
        When no rate meets an SLO, naming the constraint that binds: ``ttft`` when the SLO is
        below the prefill service plus the KV transfer, ``tpot`` when it is below the decode
        step at batch 1. (A vanishing rate fails exactly then, so the goodput is never 0
        here; :func:`disaggregated_at_rate` gives 0 at rates too high to serve.)
    DoesNotFitError
        When not one sequence fits a deployment (``memory``).

    Notes
    -----
    The rate limits (see :func:`disaggregated_at_rate` for the model) are separable:

    .. math:: \\lambda^* = \\min\\!\\left(n_p \\frac{\\rho^*}{S_p},\\;
              n_p \\frac{\\beta}{M_{KV}},\\; n_d \\frac{B^*}{O\\, t(B^*)}\\right)

    with :math:`\\rho^*` the largest utilisation at which
    :math:`P(W \\le T_\\mathrm{TTFT} - S_p - t_x) \\ge f` (a monotone search, relative
    resolution ~1e-6 of the search range) and :math:`B^*` the largest batch with :math:`t(B^*) \\le
    T_\\mathrm{TPOT}` that fits memory (:math:`B/t(B)` grows with :math:`B`). Batching
    prefills is a later refinement: each prefill server takes one prompt at a time.

    References
    ----------
    .. [1] Y. Zhong et al., DistServe, OSDI 2024, arXiv:2401.09670.
    .. [2] P. Patel et al., Splitwise, ISCA 2024, arXiv:2311.18677.
    .. [3] Seed digest S50, S51.

    Examples
    --------
    >>> import tokenomics as tk
    >>> d = tk.Deployment("llama-3.1-70b", "h100-sxm", tp=4)
    >>> g = disaggregated_goodput(d, d, 3, 1, 2048, 256, ttft_slo_s=1.0, tpot_slo_s=0.033)
    >>> g.binding, g.n_devices, round(g.rate_per_s, 1)   # 3 x 0.893 / 90.5 ms
    ('ttft', 16, 29.6)
    """
    m = _disagg(prefill_dep, decode_dep, input_tokens, output_tokens, ttft_slo_s, tpot_slo_s,
                slo_fraction, link_bytes_per_s, link_latency_s)
    return _disagg_goodput(m, _int(n_prefill, "n_prefill"), _int(n_decode, "n_decode"))


@dataclass(frozen=True)
class PoolSplit:
    """The best prefill:decode split of a device budget.

    Attributes
    ----------
    n_prefill, n_decode : int
        The split.
    goodput : Goodput
        Its goodput (``goodput_per_s_per_device`` over the devices it uses).
    goodput_per_s_per_budget_device : float
        Its rate over the whole budget, idle devices included [req/s/device]: the quantity
        maximised.
    table : pandas.DataFrame
        Every split: ``n_prefill``, ``n_decode``, ``n_devices``, ``rate_per_s``,
        ``goodput_per_s_per_budget_device``, ``binding``.
    """

    n_prefill: int
    n_decode: int
    goodput: Goodput
    goodput_per_s_per_budget_device: float
    table: pd.DataFrame


def best_pool_ratio(prefill_dep: Deployment, decode_dep: Deployment, total_devices: int,
                    input_tokens: int, output_tokens: int, ttft_slo_s: float,
                    tpot_slo_s: float, slo_fraction: float = 0.9,
                    link_bytes_per_s: float = 200e9,
                    link_latency_s: float = 10e-6) -> PoolSplit:
    """The prefill:decode split of ``total_devices`` that maximises goodput per device.

    Parameters
    ----------
    prefill_dep, decode_dep : Deployment
        One instance of each pool.
    total_devices : int
        Device budget; every split with at least one instance of each kind and
        ``n_p * prefill_dep.n_devices + n_d * decode_dep.n_devices <= total_devices`` is
        tried.
    input_tokens, output_tokens, ttft_slo_s, tpot_slo_s, slo_fraction, link_bytes_per_s, \
link_latency_s
        As in :func:`disaggregated_goodput` ([token], [s], [B/s]).

    Returns
    -------
    PoolSplit
        The split with the largest rate over the whole budget [req/s/device] (ties: fewer
        devices used, then fewer prefill instances) and the table of all splits.

    Raises
    ------
    TokenomicsError
        When the budget holds no prefill instance beside a decode instance, or an SLO cannot
        be met (as :func:`disaggregated_goodput`).

    Notes
    -----
    The rate of a split is :math:`\\min(n_p c_p, n_d c_d)` (capacities per instance, see
    :func:`disaggregated_goodput`): it grows with whichever pool binds, so the best split
    balances :math:`n_p c_p \\approx n_d c_d`; at small budgets the integer split cannot,
    and leftover devices count against it.

    References
    ----------
    .. [1] Y. Zhong et al., DistServe, OSDI 2024, arXiv:2401.09670 (placement search).

    Examples
    --------
    >>> import tokenomics as tk
    >>> d = tk.Deployment("llama-3.1-70b", "h100-sxm", tp=4)
    >>> s = best_pool_ratio(d, d, 32, 2048, 256, ttft_slo_s=1.0, tpot_slo_s=0.033)
    >>> s.n_prefill, s.n_decode      # a decode instance takes what three prefill ones send
    (6, 2)
    """
    m = _disagg(prefill_dep, decode_dep, input_tokens, output_tokens, ttft_slo_s, tpot_slo_s,
                slo_fraction, link_bytes_per_s, link_latency_s)
    total = _int(total_devices, "total_devices")
    dp, dd = m.n_dev_p, m.n_dev_d
    if dp + dd > total:
        raise TokenomicsError(
            f"total_devices={total} cannot hold one prefill instance ({dp} devices) beside one "
            f"decode instance ({dd}): at least {dp + dd} devices are needed")
    # Every split at once: the limits are linear in the instance counts (_disagg_limits).
    P_, D_ = np.meshgrid(np.arange(1, (total - dd) // dp + 1),
                         np.arange(1, (total - dp) // dd + 1), indexing="ij")
    keep = P_ * dp + D_ * dd <= total
    n_p_all, n_d_all = P_[keep], D_[keep]
    lim = _disagg_limits(m, n_p_all, n_d_all)
    names = list(lim)
    stacked = np.stack([np.broadcast_to(np.asarray(lim[k], float), n_p_all.shape)
                        for k in names])
    which = np.argmin(stacked, axis=0)          # first binding limit in ttft, link, decode order
    rate = stacked[which, np.arange(n_p_all.size)]
    table = pd.DataFrame(dict(n_prefill=n_p_all, n_decode=n_d_all,
                              n_devices=n_p_all * dp + n_d_all * dd, rate_per_s=rate,
                              goodput_per_s_per_budget_device=rate / total,
                              binding=np.asarray(names, dtype=object)[which]))
    best = table.sort_values(["goodput_per_s_per_budget_device", "n_devices", "n_prefill"],
                             ascending=[False, True, True], kind="stable").iloc[0]
    n_p, n_d = int(best.n_prefill), int(best.n_decode)
    return PoolSplit(n_p, n_d, _disagg_goodput(m, n_p, n_d),
                     float(best.goodput_per_s_per_budget_device), table)


# --------------------------------------------------------------------------------------------
# Colocated with chunked prefill
# --------------------------------------------------------------------------------------------
def _mixed_step_time(dep: Deployment, b: Any, ctx: int, P: int, a: Any) -> np.ndarray:
    """Mixed step: ``b`` decodes at ``ctx`` and ``a`` prompts' worth of ``P``-token prefill."""
    return mixed_step_seconds(dep, b, float(ctx), float(P), 0.0, a)


@dataclass(frozen=True)
class _Coloc:
    dep: Deployment
    w: _Workload
    budget: int
    bmax: int
    t1: float


def _coloc(dep: Deployment, input_tokens: Any, output_tokens: Any, ttft_slo_s: Any,
           tpot_slo_s: Any, slo_fraction: Any, token_budget: Any) -> _Coloc:
    if dep.pp != 1:
        raise TokenomicsError("colocated serving models a single pipeline stage; use pp=1")
    w = _workload(dep, input_tokens, output_tokens, ttft_slo_s, tpot_slo_s, slo_fraction)
    S = _int(token_budget, "token_budget", minimum=2, unit="token")
    bm = int(max_batch(dep, w.ctx))
    if bm >= 1:   # the workspace of a full budget step, not of a decode step
        fit = memory_fit(dep, np.arange(1, bm + 1), w.ctx, tokens_per_step=S)
        fits = np.atleast_1d(np.asarray(fit.fits, bool))
        bm = int(np.flatnonzero(fits)[-1]) + 1 if fits.any() else 0
    if bm < 1:
        raise DoesNotFitError(
            f"memory binds: not one sequence of {w.ctx} tokens (input + output/2) fits beside "
            f"the weights and a {S}-token step's workspace of {dep.model.id} on "
            f"{dep.n_devices} x {dep.hardware.id}; add devices or use smaller formats")
    t1 = float(_mixed_step_time(dep, 1.0, w.ctx, w.P, 0.0))
    if t1 > w.tpot:
        raise TokenomicsError(
            f"tpot binds: tpot_slo_s={V.fmt(w.tpot)} is below the decode step at batch 1, "
            f"{t1:.4g} s ({dep.model.id} on {dep.n_devices} x {dep.hardware.id}, context "
            f"{w.ctx}), which no rate or instance count can beat; relax the TPOT SLO")
    n0 = max(w.P / S, 1.0)
    sc0 = n0 * float(_mixed_step_time(dep, 0.0, w.ctx, w.P, 1.0 / n0))
    if sc0 > w.ttft:
        raise TokenomicsError(
            f"ttft binds: ttft_slo_s={V.fmt(w.ttft)} is below the chunked prefill of one "
            f"{w.P}-token prompt alone, {n0:.4g} steps = {sc0:.4g} s, which no rate or instance "
            "count can beat; relax the TTFT SLO or raise the token budget")
    return _Coloc(dep, w, S, bm, t1)


def _coloc_parts(c: _Coloc, tau: np.ndarray, lam: np.ndarray) -> dict[str, np.ndarray]:
    """One instance at rate ``lam`` if the TPOT were ``tau``: batch, steps, utilisation."""
    w, dep = c.w, c.dep
    B = lam * w.out * tau                                  # Little's law
    room = c.budget - B                                  # decodes go first
    fits = (B <= c.bmax) & (room >= 1)
    Bs = np.where(fits, B, 0.0)
    n = np.maximum(w.P / np.where(fits, room, 1.0), 1.0)  # chunk steps per prompt
    t_c = _mixed_step_time(dep, Bs, w.ctx, w.P, 1.0 / n)     # B decodes + a P/n-token chunk
    t_d = _mixed_step_time(dep, np.maximum(Bs, 1.0), w.ctx, w.P, 0.0 * Bs)
    S_c = n * t_c
    rho = lam * S_c
    busy = np.minimum(rho, 1.0)
    phi = 1.0 / (busy / t_c + (1.0 - busy) / t_d)       # mean time between a sequence's tokens
    return dict(B=B, S_c=S_c, rho=rho, phi=np.where(fits, phi, np.inf), fits=fits)


def _coloc_state(c: _Coloc, lam: np.ndarray) -> dict[str, np.ndarray]:
    """Steady state of one instance at per-instance rates ``lam`` (1-d): the least TPOT
    :math:`\\tau` with :math:`\\Phi(\\tau) \\le \\tau`."""
    w = c.w
    tau = np.full(lam.size, c.t1)
    found = lam <= 0
    pos = ~found
    if pos.any():
        lp = lam[pos]
        with np.errstate(divide="ignore", over="ignore"):
            t_mem = np.minimum(min(c.bmax, c.budget - 1) / (lp * w.out), 1e6 * c.t1)
        lo = np.full(lp.size, c.t1)
        ok_mem = t_mem >= lo
        # a coarse log grid from t(1) to the memory limit, then bisection on the first crossing
        g = np.linspace(0.0, 1.0, 25)[None, :]
        tg = lo[:, None] * (np.maximum(t_mem, lo) / lo)[:, None] ** g
        f = _coloc_parts(c, tg, lp[:, None])["phi"] - tg
        neg = f <= 0
        has = neg.any(axis=1) & ok_mem
        i = np.argmax(neg, axis=1)
        rows = np.arange(lp.size)
        a = np.where(i > 0, tg[rows, np.maximum(i - 1, 0)], lo)
        b = tg[rows, i]
        for _ in range(45):
            mid = 0.5 * (a + b)
            below = _coloc_parts(c, mid, lp)["phi"] - mid <= 0
            b = np.where(below, mid, b)
            a = np.where(below, a, mid)
        tau[pos] = np.where(has, b, np.inf)
        found[pos] = has
    parts = _coloc_parts(c, np.where(found, tau, c.t1), lam)
    inf = np.inf
    return dict(t=np.where(found, tau, inf), B=np.where(found, parts["B"], inf),
                S_c=np.where(found, parts["S_c"], inf), rho=np.where(found, parts["rho"], inf),
                found=found)


def _coloc_at(c: _Coloc, n: int, rate: np.ndarray) -> SLOAttainment:
    w = c.w
    shape = rate.shape
    lam = np.ravel(rate) / n
    s = _coloc_state(c, lam)
    stable = s["found"] & (s["rho"] < 1) & (s["S_c"] <= w.ttft)
    r_s = np.where(stable, s["rho"], 0.0)
    S_c = np.where(stable, s["S_c"], 1.0)
    F = _wait_cdf(r_s, np.where(stable, (w.ttft - S_c) / S_c, 0.0))
    ttft_att = np.where(stable, F, 0.0)
    qs = s["found"] & (s["rho"] < 1)
    rq = np.where(qs, s["rho"], 0.0)
    wq = np.where(qs, rq * np.where(qs, s["S_c"], 0.0) / (2 * (1 - rq)), np.inf)
    tpot_ok = s["found"] & (s["t"] <= w.tpot * (1 + 1e-12))
    R = lambda x: np.reshape(x, shape)  # noqa: E731
    return _attainment(rate, R(ttft_att), R(tpot_ok), R(wq + s["S_c"]), R(s["t"]), R(s["B"]),
                       R(s["rho"]), n * c.dep.n_devices, w)


def colocated_at_rate(dep: Deployment, n_instances: int, input_tokens: int,
                      output_tokens: int, ttft_slo_s: float, tpot_slo_s: float,
                      rate_per_s: Any, slo_fraction: float = 0.9,
                      token_budget: int = 2048) -> SLOAttainment:
    """SLO attainment and goodput of colocated instances (chunked prefill) at given rates.

    Parameters
    ----------
    dep : Deployment
        One instance (``pp`` = 1).
    n_instances : int
        Instances, each serving both phases; requests split evenly.
    input_tokens, output_tokens : int
        Prompt and output length of every request [token].
    ttft_slo_s, tpot_slo_s : float
        SLOs [s], > 0.
    rate_per_s : float or array_like
        Request rates of the whole system [req/s], >= 0.
    slo_fraction : float
        Share of requests that must meet the TTFT SLO, in (0, 1).
    token_budget : int
        Tokens one mixed step may carry (decodes first, then prompt chunks) [token]
        (default 2048).

    Returns
    -------
    SLOAttainment
        Goodput falls to 0 as the per-instance rate reaches the prompt server's capacity
        (:math:`\\rho_c \\to 1`); 0 beyond it (never negative, never NaN).

    Raises
    ------
    TokenomicsError
        For SLOs no rate can meet (naming ``ttft`` or ``tpot``), bad inputs.
    DoesNotFitError
        When not one sequence fits memory beside a full step's workspace.

    Notes
    -----
    A steady-state model of one instance at rate :math:`\\lambda`, scheduled as vLLM and
    Sarathi-Serve schedule: each step carries the running decodes first, then, while a
    prompt is pending, a chunk of it filling the rest of the token budget :math:`S`. Two
    kinds of step alternate:

    * *chunk steps* while the prompt slot is busy: :math:`B` decodes and a chunk of
      :math:`\\min(P, S - B)` prompt tokens, :math:`n = \\max(1, P/(S - B))` of them per
      prompt (the last, partial chunk counted as a fraction of a step, which keeps the model
      continuous in the rate), each taking :math:`t_c`
      (:func:`~tokenomics.serving.batching.mixed_step`; each chunk is charged :math:`1/n` of the
      prompt's causal attention);
    * *decode steps* otherwise, :math:`t_d = t_\\mathrm{decode}(\\max(B, 1))`.

    Prompts queue for the slot as an M/D/1 queue with service :math:`S_c = n t_c`:
    :math:`\\rho_c = \\lambda S_c`, :math:`\\mathrm{TTFT} = W + S_c`. A decoding sequence
    gains one token per step, so its mean time per output token and Little's law
    :math:`B = \\lambda O\\,\\mathrm{TPOT}` close the loop:

    .. math:: \\mathrm{TPOT} = \\Big(\\frac{\\rho_c}{t_c} + \\frac{1 - \\rho_c}{t_d}
              \\Big)^{-1},

    solved for its least fixed point (every term grows with the TPOT through :math:`B`; no
    solution with :math:`B` within memory: the TPOT fails). Spreading each prompt thinly over
    every step instead would let its tokens ride in the decode steps' idle compute (below
    the ridge) for free; the budget-filling scheduler does not, and a large budget makes the
    chunk steps slow (S24). The step's workspace is that of a full budget; TPOT is a mean,
    not the worst gap between tokens.

    References
    ----------
    .. [1] A. Agrawal et al., Sarathi-Serve, OSDI 2024, arXiv:2403.02310.
    .. [2] Y. Zhong et al., DistServe, OSDI 2024, arXiv:2401.09670.

    Examples
    --------
    >>> import tokenomics as tk
    >>> d = tk.Deployment("llama-3.1-8b", "h100-sxm")
    >>> r = colocated_at_rate(d, 1, 2048, 256, 1.0, 0.033, [1.0, 100.0])
    >>> bool(r.meets_slo[0]), float(r.goodput_per_s[1])
    (True, 0.0)
    """
    c = _coloc(dep, input_tokens, output_tokens, ttft_slo_s, tpot_slo_s, slo_fraction,
               token_budget)
    return _coloc_at(c, _int(n_instances, "n_instances"), _rates(rate_per_s))


def colocated_goodput(dep: Deployment, n_instances: int, input_tokens: int,
                      output_tokens: int, ttft_slo_s: float, tpot_slo_s: float,
                      slo_fraction: float = 0.9, token_budget: int = 2048) -> Goodput:
    """Largest request rate colocated instances with chunked prefill serve within the SLOs.

    Parameters
    ----------
    dep : Deployment
        One instance (``pp`` = 1).
    n_instances : int
        Instances, each serving both phases.
    input_tokens, output_tokens : int
        Prompt and output length of every request [token].
    ttft_slo_s, tpot_slo_s : float
        SLOs [s], > 0.
    slo_fraction : float
        Share of requests that must meet the TTFT SLO, in (0, 1) (default 0.9).
    token_budget : int
        Tokens per mixed step [token] (default 2048).

    Returns
    -------
    Goodput
        ``rate_per_s`` > 0 [req/s] and per device, binding constraint, TTFT and TPOT there.

    Raises
    ------
    TokenomicsError
        When no rate meets an SLO (``ttft``: below one prompt's chunked prefill alone;
        ``tpot``: below the decode step at batch 1).
    DoesNotFitError
        When not one sequence fits (``memory``).

    Notes
    -----
    The model of :func:`colocated_at_rate`; every constraint gets worse as the rate grows
    (the batch, the step, the prompt's steps and the queue all grow), so the largest
    feasible rate is found by a monotone search over :math:`(0, 1/S_c(0))` (relative
    resolution ~1e-6 of the search range). Unlike the disaggregated model the limits interact (the prompt's
    chunks share steps with the decodes), so ``rate_limits_per_s`` holds only the binding
    one.

    References
    ----------
    .. [1] A. Agrawal et al., Sarathi-Serve, OSDI 2024, arXiv:2403.02310.
    .. [2] Seed digest S24, S50, S51.

    Examples
    --------
    >>> import tokenomics as tk
    >>> d = tk.Deployment("llama-3.1-70b", "h100-sxm", tp=4)
    >>> g = colocated_goodput(d, 4, 2048, 256, ttft_slo_s=1.0, tpot_slo_s=0.033)
    >>> g.binding, bool(g.tpot_s <= 0.033)
    ('tpot', True)
    """
    c = _coloc(dep, input_tokens, output_tokens, ttft_slo_s, tpot_slo_s, slo_fraction,
               token_budget)
    n = _int(n_instances, "n_instances")
    w = c.w
    n0 = max(w.P / c.budget, 1.0)
    hi = 1.0 / (n0 * float(_mixed_step_time(dep, 0.0, w.ctx, w.P, 1.0 / n0)))   # per instance
    lo = 0.0
    fail_at = hi
    rounds = 0
    while rounds <= _ROUNDS or (lo == 0.0 and rounds < 40):
        rounds += 1
        grid = np.linspace(lo, hi, _GRID + 1)[1:]
        at = _coloc_at(c, 1, grid)
        ok = np.asarray(at.meets_slo, bool)
        bad = np.flatnonzero(~ok)
        first_bad = int(bad[0]) if bad.size else grid.size
        if first_bad > 0:
            lo = float(grid[first_bad - 1])
        if first_bad < grid.size:
            hi = fail_at = float(grid[first_bad])
    s = _coloc_state(c, np.array([fail_at]))
    if not s["found"][0]:
        binding = "memory"
    elif s["t"][0] > w.tpot:
        binding = "tpot"
    else:
        binding = "ttft"
    st = _coloc_state(c, np.array([lo]))
    rho, S_c = float(st["rho"][0]), float(st["S_c"][0])
    wq = float(mdl_wait_quantile_s(lo, S_c, w.frac))
    rate = lo * n
    n_dev = n * dep.n_devices
    return Goodput(
        layout="colocated", n_prefill=n, n_decode=n, n_devices=n_dev, rate_per_s=rate,
        goodput_per_s_per_device=rate / n_dev, output_tokens_per_s_per_device=rate * w.out / n_dev,
        binding=binding, ttft_mean_s=float(mdl_mean_wait_s(lo, S_c)) + S_c,
        ttft_quantile_s=wq + S_c, tpot_s=float(st["t"][0]), decode_batch=float(st["B"][0]),
        prefill_utilisation=rho,
        rate_limits_per_s={"ttft": math.inf, "tpot": math.inf, "memory": math.inf,
                           "link": math.inf, binding: rate})


__all__ = [
    "EXACT_WAIT_SPAN",
    "Goodput",
    "PoolSplit",
    "SLOAttainment",
    "best_pool_ratio",
    "colocated_at_rate",
    "colocated_goodput",
    "disaggregated_at_rate",
    "disaggregated_goodput",
    "mdl_mean_wait_s",
    "mdl_wait_cdf",
    "mdl_wait_quantile_s",
]
