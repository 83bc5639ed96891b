"""The M/D/1 queue: Poisson arrivals, one server, a deterministic service time.

Notes
-----
Requests arrive as a Poisson process of rate :math:`\\lambda`; one server takes them one at a
time, each for the same service time :math:`S`; the utilisation is :math:`\\rho = \\lambda S`,
and the queue is stable for :math:`\\rho < 1` only. A prefill server that takes one prompt at
a time is such a queue (:mod:`tokenomics.serving.disagg`).

**Mean wait** (:func:`mdl_mean_wait_s`). The Pollaczek-Khinchine formula for M/G/1,
:math:`W_q = \\lambda E[S^2] / (2(1 - \\rho))`, with zero service variance:

.. math:: W_q = \\frac{\\rho S}{2 (1 - \\rho)},

half the M/M/1 wait at the same utilisation (e.g. :math:`\\rho = 0.5`, :math:`S = 1` s:
:math:`W_q = 0.5` s).

**Wait distribution** (:func:`mdl_wait_cdf`, :func:`mdl_wait_quantile_s`). Crommelin's
(Erlang's) closed form

.. math:: P(W \\le t) = (1 - \\rho) \\sum_{k=0}^{\\lfloor t/S \\rfloor}
          \\frac{[\\lambda (kS - t)]^k}{k!} e^{-\\lambda (kS - t)},

evaluated through the stationary number in system (a sum of positive terms, free of the
alternating sum's cancellation), exact up to :math:`t/S =` :data:`EXACT_WAIT_SPAN`; beyond it
the tail decays as :math:`e^{-\\theta t/S}` with the Cramer root
:math:`\\rho (e^{\\theta} - 1) = \\theta`.

**Load at a wait target** (:func:`mdl_max_utilisation`): the largest :math:`\\rho` at which
:math:`P(W \\le t) \\ge p`, found by a monotone search (the distribution falls as the load
grows).

References
----------
.. [1] L. Kleinrock, "Queueing Systems, Volume 1: Theory", Wiley, 1975, §5.6
   (Pollaczek-Khinchine formula, M/D/1).
.. [2] D. Gross, J. F. Shortle, J. M. Thompson, C. M. Harris, "Fundamentals of Queueing
   Theory", 4th ed., Wiley, 2008, §5.1.
.. [3] C. D. Crommelin, "Delay probability formulae when the holding times are constant",
   P.O. Elec. Eng. J. 25 (1932) 41-50.
.. [4] G. J. Franx, "A simple solution for the M/D/c waiting time distribution",
   Operations Research Letters 29 (2001) 221-229.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from tokenomics.core import checks as V
from tokenomics.core.errors import TokenomicsError

#: Largest t/S for which :func:`mdl_wait_cdf` sums the exact series; beyond it the exact tail
#: at this point is continued with the asymptotic exponential decay.
EXACT_WAIT_SPAN = 1000

_GRID = 48          # points per round of the monotone search
_ROUNDS = 3         # rounds: resolution (1/_GRID)**_ROUNDS of the bracket


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
    from scipy.stats import poisson

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
    from scipy.stats import poisson

    k = np.floor(x)
    u = x - k
    j = np.arange(qp.shape[1])[None, :]
    m = k[:, None] - j
    pc = np.where(m >= 0, poisson.cdf(np.maximum(m, 0), (rho * (1.0 - u))[:, None]), 0.0)
    return np.minimum(np.sum(qp * pc, axis=1), 1.0)


def _decay_rate(rho: float) -> float:
    """Cramer root :math:`x` of :math:`\\rho (e^x - 1) = x` (tail :math:`\\propto e^{-x t/S}`)."""
    from scipy.optimize import brentq

    L = -math.log(rho)
    hi = min(2.0 * (1.0 - rho) / rho, 2.0 * L + 10.0)
    # log((e^x - 1) / x) written so that it does not overflow for tiny rho (x near 700 and up)
    return float(brentq(lambda x: x + math.log1p(-math.exp(-x)) - math.log(x) - L, L, hi,
                        xtol=1e-14, rtol=1e-12))


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
    p = V.open_probability(probability, "probability")
    rho, S, p = np.broadcast_arrays(rho, S, p)
    out = _wait_quantile(np.ravel(rho).astype(float), np.ravel(p).astype(float))
    return V.scalar_or_array((out * np.ravel(S)).reshape(rho.shape))


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


def mdl_max_utilisation(wait_s: Any, service_time_s: Any, probability: Any) -> Any:
    """Largest utilisation at which an M/D/1 arrival waits at most ``wait_s`` with a probability.

    Parameters
    ----------
    wait_s : float or array_like
        Wait target :math:`t` [s], >= 0 (time in queue, service not included).
    service_time_s : float or array_like
        Deterministic service time :math:`S` [s], > 0.
    probability : float or array_like
        Share of arrivals :math:`p` that must wait at most :math:`t`, in (0, 1). All three
        broadcast.

    Returns
    -------
    float or numpy.ndarray
        :math:`\\rho^* = \\max\\{\\rho : P(W \\le t) \\ge p\\}` in [0, 1) (dimensionless); the
        largest arrival rate is :math:`\\rho^* / S` [1/s]. A feasible value: at most about
        1e-6 below the exact one.

    Raises
    ------
    TokenomicsError
        If a wait is negative, a service time not > 0, or a probability outside (0, 1).

    Notes
    -----
    :math:`P(W \\le t)` (:func:`mdl_wait_cdf`) depends on :math:`\\rho` and :math:`t/S` only
    and falls as :math:`\\rho` grows, so a search over :math:`\\rho \\in [0, 1)` brackets the
    largest feasible load (a grid over the bracket, 48 times narrower each round). Two
    cases by hand: at :math:`t = 0`, :math:`P(W = 0) = 1 - \\rho`, so :math:`\\rho^* = 1 - p`;
    at :math:`t = S`, :math:`(1 - \\rho^*) e^{\\rho^*} = p`.

    References
    ----------
    .. [1] L. Kleinrock, "Queueing Systems, Volume 1", Wiley, 1975.
    .. [2] Y. Zhong et al., "DistServe", OSDI 2024, arXiv:2401.09670 (the largest load that
       meets a TTFT percentile).

    Examples
    --------
    >>> round(mdl_max_utilisation(0.0, 0.1, 0.9), 6)   # 1 - rho >= 0.9
    0.1
    """
    t = V.non_negative(wait_s, "wait_s", "s")
    S = V.positive(service_time_s, "service_time_s", "s")
    p = V.open_probability(probability, "probability")
    t, S, p = np.broadcast_arrays(t, S, p)
    x = t / S
    rho = [_max_rho_for_wait(float(xi), float(pi)) for xi, pi in zip(x.flat, p.flat, strict=True)]
    return V.scalar_or_array(np.reshape(np.asarray(rho, float), x.shape))


__all__ = [
    "EXACT_WAIT_SPAN",
    "mdl_max_utilisation",
    "mdl_mean_wait_s",
    "mdl_wait_cdf",
    "mdl_wait_quantile_s",
]
