"""Time to first token on a loaded continuous-batching replica: one queue, from the steps up.

A continuous-batching replica is not one server taking one request at a time. A request that
arrives waits for two things: a place in the running batch (KV memory for one more
sequence), and then the next step boundary, where its prompt joins the step's prefill
beside the running decodes and beside the other prompts that arrived in the meantime.
:func:`replica_ttft` puts both together; :func:`tokenomics.request_journey` reads its queue
from it, and it agrees with :func:`tokenomics.simulate_serving` on the same deployment.

Notes
-----
**Places in the batch** (:func:`slot_wait`). Sequences in the replica form a birth-death
chain: arrivals at :math:`\\lambda`, completions at :math:`r(n)`, the replica's completion
rate with :math:`n` sequences running (:func:`tokenomics.steady_state` at concurrency
:math:`n`, which grows with :math:`n` and saturates as the steps lengthen). Its stationary
distribution is :math:`\\pi(n) \\propto \\prod_{k=1}^{n} \\lambda / r(k)` up to the
:math:`c` sequences the memory holds; beyond, :math:`r = r(c) = \\mu` and the tail is
geometric in :math:`\\rho = \\lambda/\\mu`. An arrival finding all :math:`c` places taken
(probability :math:`P_w`, by PASTA) waits for completions; over the geometric tail that wait
is exponential at rate :math:`\\mu (1 - \\rho)` (Erlang C's form; :math:`c = 1` and constant
:math:`r` is M/M/1). Completions are read as memoryless (an output length's exact law is
not); where :math:`r(n)` is nearly flat near :math:`c`, a load near capacity fills the memory
and the wait appears.

**The steps** (:func:`replica_ttft`). Given :math:`B` sequences decoding (the chain's mean,
given the replica busy), a step carrying :math:`m` new prompts lasts
:math:`T_m` (the step engine's mixed step, :func:`tokenomics.mixed_step`), at most
:math:`m_{max} = \\lfloor b / I \\rfloor` prompts of :math:`I` tokens within the token
budget :math:`b`. The prompts waiting at a step's start, :math:`q`, form a Markov chain:
the step takes :math:`m = \\min(q, m_{max})` and :math:`A \\sim \\mathrm{Poisson}(\\lambda
T_m)` arrive meanwhile, :math:`q' = q - m + A` (a gated batch service). A request arriving
a fraction :math:`u` into a step of state :math:`q` (time-stationary: weight
:math:`\\pi_q T_{m(q)}`) waits the rest of it, :math:`(1 - u) T`, then rides the first step
with room for it: the next one, of :math:`m' = \\min(p + A_a, m_{max})` prompts, when its
place :math:`p = q - m + A_b + 1` in the queue is within :math:`m_{max}` (:math:`A_b`,
:math:`A_a` the arrivals before and after it), else :math:`\\lceil p/m_{max} \\rceil` full
steps. An idle replica (probability :math:`\\pi(0)` of the chain above) starts the prompt's
step at once. A prompt longer than the budget runs as :math:`\\lceil I/b \\rceil` chunks, one
prompt at a time: an M/D/1 queue (:mod:`tokenomics.serving.queueing`) whose service is its
chunks' steps. The TTFT is the place's wait plus the steps' time; its distribution is their
convolution, tabulated on a grid and read at any quantile.

References
----------
.. [1] L. Kleinrock, "Queueing Systems, Volume 1: Theory", Wiley, 1975, §3.2 (birth-death
   processes), §3.5 (M/M/m, Erlang's C formula), §4.3 (bulk service).
.. [2] G. Yu et al., "Orca: a distributed serving system for transformer-based generative
   models", OSDI 2022 (iteration-level scheduling: requests join at step boundaries).
.. [3] A. Agrawal et al., "Taming throughput-latency tradeoff in LLM inference with
   Sarathi-Serve", OSDI 2024 (prompts share a step's token budget with the decodes).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from tokenomics.core import checks as V
from tokenomics.core.errors import TokenomicsError
from tokenomics.core.units import Result, to_array
from tokenomics.data.boundary import inputs
from tokenomics.data.deployment import Deployment
from tokenomics.physics.memory import max_batch
from tokenomics.serving.batching import mixed_step_seconds
from tokenomics.serving.queueing import mdl_wait_cdf

#: Default prompt tokens a step may carry (TensorRT-LLM's ``max_num_tokens``), as in
#: :func:`tokenomics.simulate_serving`.
TOKEN_BUDGET = 8192
#: Concurrencies below this are each a node of the place chain; above, geometric nodes.
EXACT_SLOTS = 2048
_GEOMETRIC = 256
_U_BINS = 16          # fractions of a step at which an arrival is resolved
_GRID = 4096          # points of the TTFT distribution's time grid
_MAX_QUEUE = 2000     # prompts (groups) the step chain may hold before it is called unstable
_ARRIVALS = 20        # most prompts a step brings in the chain's unit (larger: groups)


def slot_wait(concurrency: Any, completion_rate_per_s: Any, arrival_rate_per_s: float
              ) -> tuple[float, float, float]:
    """Wait for a place in a batch of ``c`` sequences: birth-death chain (module notes).

    Parameters
    ----------
    concurrency : array_like of int
        Increasing nodes :math:`n` from 1 to :math:`c` (every whole number, or a subset:
        between nodes the log rate is interpolated and the products integrated) [-].
    completion_rate_per_s : array_like
        :math:`r(n)` at the nodes, > 0 [1/s]; the last, :math:`\\mu = r(c)`, serves every
        :math:`n > c`.
    arrival_rate_per_s : float
        :math:`\\lambda`, below :math:`r(c)` [1/s].

    Returns
    -------
    (probability, mean_wait_s, decay_per_s) : floats
        :math:`P_w`, the mean wait :math:`P_w / (\\mu (1-\\rho))` [s] and the rate
        :math:`\\mu(1-\\rho)` of the exponential wait of those who wait [1/s].

    Examples
    --------
    >>> p, w, d = slot_wait([1], [2.0], 1.0)      # M/M/1 at rho = 0.5, mu = 2 /s
    >>> round(p, 6), round(w, 6), round(d, 6)      # P = rho, W = rho / (mu - lambda)
    (0.5, 0.5, 1.0)
    """
    n = to_array(concurrency, "concurrency")
    r = to_array(completion_rate_per_s, "completion_rate_per_s")
    a = to_array(arrival_rate_per_s, "arrival_rate_per_s")
    lam = float(a.reshape(-1)[0]) if a.size == 1 else math.nan   # refused below
    if n.ndim != 1 or n.shape != r.shape or n.size == 0 or n[0] != 1 or \
            np.any(np.diff(n) < 1):
        raise TokenomicsError("slot_wait needs increasing concurrency nodes from 1 with one "
                              "completion rate each")
    if not (np.all(np.isfinite(r)) and np.all(r > 0)) or not (math.isfinite(lam) and lam > 0):
        raise TokenomicsError("slot_wait needs completion rates and an arrival rate, finite "
                              "and > 0 [1/s]")
    mu = float(r[-1])
    if lam >= mu:
        raise TokenomicsError(f"arrival rate {lam:g}/s is at or above the batch's completion "
                              f"rate {mu:g}/s at its {int(n[-1])} places: no steady state")
    c = _chain(n, r, lam)
    return c["wait"], c["wait"] / c["decay"], c["decay"]


def _chain(n: np.ndarray, r: np.ndarray, lam: float) -> dict[str, float]:
    """The birth-death chain's masses: P(wait), the wait's decay, P(idle), E[min(N, c) | N >= 1].

    Between nodes the increments :math:`\\log(\\lambda / r)` are linear in :math:`n`, so
    :math:`\\log \\pi` is summed exactly over each gap and :math:`\\pi` inside a gap is a
    geometric series (exact where the nodes are consecutive).
    """
    f = math.log(lam) - np.log(r)                         # log pi(k) - log pi(k - 1)
    g = np.diff(n)
    inc = 0.5 * (f[1:] + f[:-1]) * g + 0.5 * (f[1:] - f[:-1])    # sum of f over a gap
    logp = np.concatenate([[0.0, f[0]], f[0] + np.cumsum(inc)])   # pi(0) = 1, then nodes
    top = float(logp.max())
    p = np.exp(logp - top)
    # interior points of each gap: pi(n_{i-1}) * sum_{j=1}^{g-1} x^j, x = e^d, d the step
    d = (logp[2:] - logp[1:-1]) / g
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        series = np.where(np.abs(d) < 1e-12, g - 1.0,
                          np.exp(d) * np.expm1((g - 1) * d) / np.expm1(d))
    inner = p[1:-1] * series
    mid = 0.5 * (n[1:] + n[:-1])
    rho = lam / float(r[-1])
    tail = p[-1] * rho / (1.0 - rho)                      # n > c
    z = float(p.sum() + inner.sum() + tail)
    busy_mass = z - p[0]
    running = float((n * p[1:]).sum() + (mid * inner).sum() + n[-1] * tail)
    return dict(wait=float((p[-1] + tail) / z), decay=float(r[-1]) * (1.0 - rho),
                idle=float(p[0] / z), busy_mean=running / busy_mass if busy_mass > 0 else 1.0)


@dataclass(frozen=True, repr=False)
class ReplicaTTFT(Result):
    """Time to first token on a loaded replica, its parts and its distribution.

    Attributes
    ----------
    mean_s, p50_s, p99_s : float
        Mean, median and 99th percentile of the engine-side TTFT (place, steps) [s].
    slot_wait_probability, slot_wait_mean_s : float
        :math:`P_w` and the mean wait for a place in the batch [s] (:func:`slot_wait`).
    step_residual_mean_s : float
        Mean rest of the step in flight at arrival [s].
    own_step_s : float
        The prompt's own step(s) with no other prompt in them, beside the running decodes
        when busy and alone when idle, averaged over the two [s].
    sharing_mean_s : float
        What sharing steps with other prompts adds on average [s] (longer steps, steps
        that come before there is room).
    busy_probability : float
        Share of time the replica runs a step.
    decode_batch : float
        Sequences decoding beside the prompt in a busy step (the chain's mean) [-].
    time_s, cdf : numpy.ndarray
        The distribution tabulated: :math:`P(\\mathrm{TTFT} \\le t)` at each time.
    """

    mean_s: float
    p50_s: float
    p99_s: float
    slot_wait_probability: float
    slot_wait_mean_s: float
    step_residual_mean_s: float
    own_step_s: float
    sharing_mean_s: float
    busy_probability: float
    decode_batch: float
    time_s: np.ndarray
    cdf: np.ndarray

    def quantile(self, probability: Any) -> Any:
        """The TTFT at a probability in (0, 1) [s] (scalar or array)."""
        p = V.non_negative(probability, "probability", "count")
        if np.any((np.asarray(p) <= 0) | (np.asarray(p) >= 1)):
            raise TokenomicsError("probability must be in (0, 1)")
        return V.scalar_or_array(np.interp(p, self.cdf, self.time_s))


def _place_chain(dep: Deployment, inp: int, out: int, cached: int, lam: float
                 ) -> tuple[float, float, float, float, float]:
    """P_w, its mean wait and decay, the busy probability and the busy mean batch."""
    from tokenomics.serving.steady import steady_state

    c = int(max_batch(dep, inp + out))
    if c < 1:
        raise TokenomicsError(f"{dep.model.id} on {dep.n_devices} x {dep.hardware.id} cannot "
                              f"hold one request of {inp + out} tokens")
    nodes = np.arange(1, min(c, EXACT_SLOTS) + 1, dtype=float)
    if c > EXACT_SLOTS:
        nodes = np.unique(np.concatenate([nodes, np.rint(np.geomspace(EXACT_SLOTS, c,
                                                                      _GEOMETRIC))]))
    r = np.asarray(steady_state(dep, nodes, inp, out, cached_tokens=cached).requests_per_s,
                   float)
    if lam >= r[-1]:
        raise TokenomicsError(f"arrival_rate_per_s {lam:g} is at or above the replica's "
                              f"capacity {r[-1]:.4g} requests/s ({int(nodes[-1])} sequences "
                              f"in memory): no steady state; add replicas or lower the rate")
    ch = _chain(nodes, r, lam)
    return ch["wait"], ch["wait"] / ch["decay"], ch["decay"], 1.0 - ch["idle"], ch["busy_mean"]


def _step_components(dep: Deployment, B: float, inp: int, out: int, cached: int, lam: float,
                     budget: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, float,
                                           float]:
    """Uniform components (start, width, weight) of the steps' part of the TTFT when busy, the
    mean rest of the step in flight, the prompt's step on an idle replica and beside the
    decodes alone."""
    new = inp - cached
    ctx = inp + out / 2.0
    alone = float(mixed_step_seconds(dep, 0.0, ctx, new, cached, 1.0))
    cap = budget // new
    if cap < 1:                                            # chunked: one prompt at a time
        return _chunked(dep, B, new, cached, ctx, lam, budget, alone)
    ch = _prompt_chain(dep, B, ctx, new, cached, lam, cap)
    s, wd, wt, resid_mean = _tagged(ch)
    own = float(mixed_step_seconds(dep, B, ctx, new, cached, 1.0))
    return s, wd, wt, resid_mean, alone, own


def _prompt_chain(dep: Deployment, B: float, ctx: float, new: int, cached: int, lam: float,
                  cap: int) -> dict[str, Any]:
    """The stationary distribution of the prompts waiting at a step's start (module notes),
    counted in groups of ``g`` where a step brings more than :data:`_ARRIVALS` of them."""
    from scipy.stats import poisson

    t_full = float(mixed_step_seconds(dep, B, ctx, new, cached, float(cap)))
    if lam * t_full >= cap:
        raise TokenomicsError(f"arrival rate {lam:g}/s brings more prompts than full steps "
                              f"of {cap} prompts can take ({cap / t_full:.4g}/s): the prefill "
                              f"cannot keep up; add replicas or lower the rate")
    g = max(1, math.ceil(lam * t_full / _ARRIVALS))
    cap_g, lam_g = max(cap // g, 1), lam / g
    t_full = float(mixed_step_seconds(dep, B, ctx, new, cached, float(cap_g * g)))
    # a queue below the step's room empties each step, so its size is one step's arrivals
    # (a Poisson tail) whatever the room; near the room, more
    amax = int(poisson.ppf(1 - 1e-12, lam_g * t_full)) + 2
    qmax = int(min(cap_g, amax) + 40 + 20 * lam_g * t_full)
    while True:
        mtop = min(cap_g, qmax + 2 * amax + 1)
        T = np.asarray(mixed_step_seconds(dep, B, ctx, new, cached,
                                          g * np.arange(mtop + 1, dtype=float)), float)
        q = np.arange(qmax + 1)
        mq = np.minimum(q, cap_g)
        nxt = q[None, :] - (q - mq)[:, None]               # arrivals needed for q -> q'
        P = poisson.pmf(nxt, lam_g * T[np.minimum(mq, mtop)][:, None])
        P[:, -1] += 1.0 - P.sum(axis=1)                    # the rest of the tail onto the edge
        pi = np.full(qmax + 1, 1.0 / (qmax + 1))
        for _ in range(20_000):
            new_pi = pi @ P
            if np.abs(new_pi - pi).sum() < 1e-13:
                break
            pi = new_pi
        pi = new_pi / new_pi.sum()
        if pi[-1] < 1e-12 or qmax >= _MAX_QUEUE:
            break
        qmax = min(2 * qmax, _MAX_QUEUE)
    if pi[-1] >= 1e-9:
        raise TokenomicsError(f"the prompts waiting for a step exceed {_MAX_QUEUE:,} groups: "
                              f"the replica is too near its prefill capacity for a steady "
                              f"state; lower the rate")
    return dict(q=q, mq=mq, pi=pi, T=T, t_full=t_full, cap=cap_g, lam=lam_g, amax=amax,
                top=min(cap_g, mtop))


def _tagged(ch: dict[str, Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """A tagged arrival's steps: uniform components (start, width, weight) and the mean rest
    of the step in flight."""
    from scipy.stats import poisson

    q, mq, pi, T, top, cap, lam = (ch[k] for k in ("q", "mq", "pi", "T", "top", "cap", "lam"))
    Tq = T[np.minimum(mq, top)]
    wq = pi * Tq / float((pi * Tq).sum())                  # arrival in a step of state q
    edges = np.linspace(0.0, 1.0, _U_BINS + 1)
    u = 0.5 * (edges[1:] + edges[:-1])
    starts, widths, weights = [], [], []
    a = np.arange(ch["amax"] + 1)
    for qi in np.flatnonzero(wq > 1e-15):
        for ui, hi_edge in zip(u, edges[1:], strict=True):
            pb = poisson.pmf(a, lam * ui * Tq[qi])          # arrivals before it
            pa = poisson.pmf(a, lam * (1 - ui) * Tq[qi])    # and after it
            pos = q[qi] - mq[qi] + a + 1
            w0 = wq[qi] / _U_BINS * pb
            start0 = (1.0 - hi_edge) * Tq[qi]               # the rest of the step, uniform
            room = np.flatnonzero((pos <= cap) & (w0 > 1e-15))     # rides the next step
            tnext = T[np.minimum(pos[room][:, None] + a[None, :], top)]
            starts.append((start0 + tnext).ravel())
            weights.append((w0[room][:, None] * pa[None, :]).ravel())
            late = (pos > cap) & (w0 > 1e-15)               # waits for full steps first
            starts.append(start0 + np.ceil(pos[late] / cap) * ch["t_full"])
            weights.append(w0[late])
            widths.append(np.full(starts[-2].size + starts[-1].size, Tq[qi] / _U_BINS))
    return (np.concatenate(starts), np.concatenate(widths), np.concatenate(weights),
            float((wq * Tq).sum() / 2.0))


def _chunked(dep: Deployment, B: float, new: int, cached: int, ctx: float, lam: float,
             budget: int, alone: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, float,
                                                 float, float]:
    """A prompt over the budget: chunks one prompt at a time, an M/D/1 server."""
    k = math.ceil(new / budget)
    done = np.arange(k) * budget
    chunk = np.minimum(budget, new - done).astype(float)
    S = float(np.sum(mixed_step_seconds(dep, B, ctx, chunk, cached + done, 1.0)))
    if lam * S >= 1.0:
        raise TokenomicsError(f"arrival rate {lam:g}/s needs {lam * S:.3g} of the prefill's "
                              f"time for prompts of {k} chunks: it cannot keep up; add "
                              f"replicas or lower the rate")
    t_step = float(mixed_step_seconds(dep, B, ctx, float(budget), cached, 1.0))
    grid = np.linspace(0.0, 40.0 * S / (1 - lam * S) + S, _GRID)
    F = np.asarray(mdl_wait_cdf(lam, S, grid), float)
    dens = np.diff(np.concatenate([[0.0], F]))             # wait at each grid point
    starts = grid + S
    return starts, np.full(starts.shape, t_step), dens, t_step / 2.0, alone, S


def _cdf_of(starts: np.ndarray, widths: np.ndarray, weights: np.ndarray, t: np.ndarray
            ) -> np.ndarray:
    """CDF on ``t`` of a mixture of uniforms [start, start + width] with weights (width 0:
    a point mass), exactly: :math:`F(t) = \\sum_j c_j \\max(t - e_j, 0)` over the ramps'
    corners :math:`e_j` (slope :math:`+w/d` at a start, :math:`-w/d` at an end), read as
    :math:`t C(t) - E(t)` from cumulative sums in O((components + points) log)."""
    ramp = widths > 0
    e = np.concatenate([starts[ramp], starts[ramp] + widths[ramp]])
    slope = weights[ramp] / widths[ramp]
    c = np.concatenate([slope, -slope])
    order = np.argsort(e, kind="stable")
    e, c = e[order], c[order]
    C = np.concatenate([[0.0], np.cumsum(c)])
    E = np.concatenate([[0.0], np.cumsum(c * e)])
    k = np.searchsorted(e, t, side="right")
    out = t * C[k] - E[k]
    pt = np.argsort(starts[~ramp], kind="stable")
    ps, pw = starts[~ramp][pt], weights[~ramp][pt]
    out = out + np.concatenate([[0.0], np.cumsum(pw)])[np.searchsorted(ps, t, side="right")]
    return out


@inputs(dep="deployment")
def replica_ttft(dep: Deployment, input_tokens: int, output_tokens: int,
                 arrival_rate_per_s: float, *, cached_tokens: int = 0,
                 token_budget: int = TOKEN_BUDGET) -> ReplicaTTFT:
    """Time to first token on one continuous-batching replica under Poisson arrivals.

    Parameters
    ----------
    dep : Deployment
        The replica (``pp`` 1).
    input_tokens, output_tokens : int
        Prompt :math:`I` and mean output :math:`O` [token].
    arrival_rate_per_s : float
        :math:`\\lambda`, > 0, below the replica's capacity
        (``tk.steady_state(dep, "max", I, O).requests_per_s``) [1/s].
    cached_tokens : int
        Prompt prefix found in the prefix cache (not computed) [token].
    token_budget : int
        Prompt tokens a step may carry, >= 1 (default :data:`TOKEN_BUDGET`) [token].

    Returns
    -------
    ReplicaTTFT
        Mean, median, 99th percentile and the tabulated distribution, with the parts: the
        wait for a place in the batch, the rest of the step in flight, the prompt's own step
        and what sharing steps with other prompts adds (module notes). Work is bounded by
        the chain's size, not by the memory's capacity (:data:`EXACT_SLOTS` exact places,
        then geometric nodes).

    Raises
    ------
    TokenomicsError
        For bad inputs, a rate at or above the replica's capacity, or one the prefill
        cannot keep up with.

    Examples
    --------
    >>> import tokenomics as tk
    >>> d = tk.Deployment("llama-3.1-8b", "h100-sxm")
    >>> r = replica_ttft(d, 2048, 256, 9.0)             # half the replica's 18 requests/s
    >>> bool(r.p50_s < r.p99_s < 0.2)
    True
    """
    if dep.pp != 1:
        raise TokenomicsError("replica_ttft models one pipeline stage; use pp=1")
    inp = V.single_whole(input_tokens, "input_tokens", minimum=1, unit="token")
    out = V.single_whole(output_tokens, "output_tokens", minimum=1, unit="token")
    cached = V.single_whole(cached_tokens, "cached_tokens", minimum=0, unit="token")
    if cached >= inp:
        raise TokenomicsError(f"cached_tokens {cached} must be fewer than input_tokens {inp}: "
                              f"at least one prompt token is computed")
    budget = V.single_whole(token_budget, "token_budget", minimum=1, unit="token")
    lam = V.single_amount(V.positive(arrival_rate_per_s, "arrival_rate_per_s", "1/s"),
                          "arrival_rate_per_s", "1/s")
    prob, wmean, decay, busy, B = _place_chain(dep, inp, out, cached, lam)
    s, wd, wt, resid, alone, own = _step_components(dep, B, inp, out, cached, lam, budget)
    # an idle replica (1 - busy) starts the prompt's own step at once, beside no decodes
    s = np.concatenate([s, [alone]])
    wd = np.concatenate([wd, [0.0]])
    wt = np.concatenate([wt / wt.sum() * busy, [1.0 - busy]])
    hi = float((s + wd).max()) + 20.0 / decay * (prob > 1e-12)
    t = np.linspace(0.0, hi, _GRID)
    F = _cdf_of(s, wd, wt, t)
    if prob > 1e-12:                 # add the exponential wait of those who wait for a place
        dt = t[1] - t[0]
        dens = decay * np.exp(-decay * t) * dt
        F = (1.0 - prob) * F + prob * np.convolve(F, dens)[: len(t)]
    F = np.maximum.accumulate(np.clip(F, 0.0, 1.0))
    steps_mean = float(np.sum(wt * (s + wd / 2.0)))
    mean = steps_mean + wmean
    q50, q99 = (float(np.interp(p, F, t)) for p in (0.5, 0.99))
    resid_all = busy * resid
    own_all = busy * own + (1.0 - busy) * alone
    # every path takes at least the rest of its step and the prompt's own step, so sharing is
    # >= 0 exactly; a difference of means below zero by rounding is zero
    sharing = steps_mean - resid_all - own_all
    sharing = 0.0 if -1e-9 * max(steps_mean, 1e-300) < sharing < 0.0 else sharing
    return ReplicaTTFT(mean, q50, q99, prob, wmean, resid_all, own_all, sharing, busy, B, t, F)
