"""Colocated prefill and decode with chunked prefill: goodput under SLOs.

Notes
-----
``n_instances`` instances, each a replica of one deployment serving both phases
(:func:`colocated_goodput`, :func:`colocated_at_rate`); arrivals are split evenly. Every step
is a mixed step (:func:`~tokenomics.serving.batching.mixed_step`), scheduled as vLLM and
Sarathi-Serve schedule: the running decodes first, then, while a prompt is pending, a chunk of
it filling the rest of the token budget :math:`S`. With :math:`B` decodes running a prompt of
:math:`P` tokens takes :math:`n = \\max(1, P/(S - B))` chunk steps of :math:`t_c` each, so the
prompts queue for the slot as an M/D/1 queue (:mod:`tokenomics.serving.queueing`) with
service :math:`S_c = n t_c`: :math:`\\rho_c = \\lambda S_c` and
:math:`\\mathrm{TTFT} = W + S_c`. Between prompts the steps are decode steps of :math:`t_d`;
with Little's law :math:`B = \\lambda O\\,\\mathrm{TPOT}` the time per output token is the
least fixed point of

.. math:: \\mathrm{TPOT} = \\Big(\\frac{\\rho_c}{t_c} + \\frac{1 - \\rho_c}{t_d}\\Big)^{-1}.

This is the interference that disaggregation (:mod:`tokenomics.serving.disagg`) removes:
while a prompt is being prefilled, every token of every running sequence waits for a chunk
step, so a strict TPOT caps the colocated prompt rate (S50); mixed steps on the other hand
fill the decode steps' idle compute, so colocation keeps at least the raw throughput.

The request is a :class:`~tokenomics.data.workload.Workload` and an
:class:`~tokenomics.data.workload.SLO`; release 0.1's loose arguments (``input_tokens,
output_tokens, ttft_slo_s, tpot_slo_s, slo_fraction``) are still accepted, positionally or by
keyword, with the same results. Results are :class:`~tokenomics.serving.slo.SLOAttainment`
and :class:`~tokenomics.serving.slo.Goodput`.

References
----------
.. [1] A. Agrawal et al., "Taming Throughput-Latency Tradeoff in LLM Inference with
   Sarathi-Serve", OSDI 2024, arXiv:2403.02310 (chunked prefill).
.. [2] Y. Zhong et al., "DistServe: Disaggregating Prefill and Decoding for Goodput-optimized
   Large Language Model Serving", OSDI 2024, arXiv:2401.09670.
.. [3] Seed digest S24 (chunk size), S50 (disaggregation raises goodput, not raw throughput)
   and S51 (when it pays).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from tokenomics.core import checks as V
from tokenomics.core.errors import DoesNotFitError, TokenomicsError
from tokenomics.data.boundary import inputs
from tokenomics.data.deployment import Deployment
from tokenomics.data.workload import SLO, Workload, accepts_legacy
from tokenomics.physics.memory import max_batch, memory_fit
from tokenomics.serving.batching import mixed_step_seconds
from tokenomics.serving.queueing import mdl_mean_wait_s, mdl_wait_cdf, mdl_wait_quantile_s
from tokenomics.serving.slo import (
    LEGACY_DEFAULTS,
    LEGACY_REQUEST_PARAMS,
    Goodput,
    RequestTargets,
    SLOAttainment,
    legacy_workload_slo,
    request_rates,
    request_targets,
    single_count,
    slo_attainment,
)

_GRID = 48          # points per round of the colocated rate search
_ROUNDS = 3         # rounds: resolution (1/_GRID)**_ROUNDS of the bracket


# --------------------------------------------------------------------------------------------
# Inputs and release 0.1's call forms
# --------------------------------------------------------------------------------------------
def _single_stage(dep: Deployment) -> None:
    """Raise unless the colocated instance is one pipeline stage."""
    if dep.pp != 1:
        raise TokenomicsError("colocated serving models a single pipeline stage; use pp=1")


_DEFAULTS_0_1 = {**LEGACY_DEFAULTS, "token_budget": 2048}
_COLOC_AT_0_1 = ("dep", "n_instances", *LEGACY_REQUEST_PARAMS, "rate_per_s", "slo_fraction",
                 "token_budget")
_COLOC_0_1 = ("dep", "n_instances", *LEGACY_REQUEST_PARAMS, "slo_fraction", "token_budget")


def _coloc_0_1(a: dict[str, Any]) -> dict[str, Any]:
    """A colocated function's 0.1 arguments as its new ones (``workload, slo``)."""
    _single_stage(a["dep"])
    a["workload"], a["slo"] = legacy_workload_slo(a, a["dep"])
    return a


# --------------------------------------------------------------------------------------------
# Colocated with chunked prefill
# --------------------------------------------------------------------------------------------
def _mixed_step_time(dep: Deployment, w: RequestTargets, b: Any, a: Any) -> np.ndarray:
    """Mixed step [s]: ``b`` decodes at the mean context and ``a`` prompts' worth of prefill."""
    return mixed_step_seconds(dep, b, float(w.context_tokens), float(w.input_tokens), 0.0, a)


@dataclass(frozen=True)
class _Coloc:
    dep: Deployment
    w: RequestTargets
    budget: int
    bmax: int
    t1: float


def _coloc(dep: Deployment, workload: Workload, slo: SLO, token_budget: Any) -> _Coloc:
    """Check the inputs; the memory-limited batch and the SLOs a vanishing rate must meet."""
    _single_stage(dep)
    w = request_targets(dep, workload, slo)
    S = single_count(token_budget, "token_budget", minimum=2, unit="token")
    bm = int(max_batch(dep, w.context_tokens))
    if bm >= 1:   # the workspace of a full budget step, not of a decode step
        fit = memory_fit(dep, np.arange(1, bm + 1), w.context_tokens, tokens_per_step=S)
        fits = np.atleast_1d(np.asarray(fit.fits, bool))
        bm = int(np.flatnonzero(fits)[-1]) + 1 if fits.any() else 0
    if bm < 1:
        raise DoesNotFitError(
            f"memory binds: not one sequence of {w.context_tokens} tokens (input + output/2) "
            f"fits beside the weights and a {S}-token step's workspace of {dep.model.id} on "
            f"{dep.n_devices} x {dep.hardware.id}; add devices or use smaller formats")
    t1 = float(_mixed_step_time(dep, w, 1.0, 0.0))
    if t1 > w.tpot_s:
        raise TokenomicsError(
            f"tpot binds: tpot_slo_s={V.fmt(w.tpot_s)} is below the decode step at batch 1, "
            f"{t1:.4g} s ({dep.model.id} on {dep.n_devices} x {dep.hardware.id}, context "
            f"{w.context_tokens}), which no rate or instance count can beat; relax the TPOT SLO")
    n0 = max(w.input_tokens / S, 1.0)
    sc0 = n0 * float(_mixed_step_time(dep, w, 0.0, 1.0 / n0))
    if sc0 > w.ttft_s:
        raise TokenomicsError(
            f"ttft binds: ttft_slo_s={V.fmt(w.ttft_s)} is below the chunked prefill of one "
            f"{w.input_tokens}-token prompt alone, {n0:.4g} steps = {sc0:.4g} s, which no rate "
            "or instance count can beat; relax the TTFT SLO or raise the token budget")
    return _Coloc(dep, w, S, bm, t1)


def _coloc_parts(c: _Coloc, tau: np.ndarray, lam: np.ndarray) -> dict[str, np.ndarray]:
    """One instance at rate ``lam`` if the TPOT were ``tau``: batch, steps, utilisation."""
    w, dep = c.w, c.dep
    B = lam * w.output_tokens * tau                      # Little's law
    room = c.budget - B                                  # decodes go first
    fits = (B <= c.bmax) & (room >= 1)
    Bs = np.where(fits, B, 0.0)
    n = np.maximum(w.input_tokens / np.where(fits, room, 1.0), 1.0)  # chunk steps per prompt
    t_c = _mixed_step_time(dep, w, Bs, 1.0 / n)          # B decodes + a P/n-token chunk
    t_d = _mixed_step_time(dep, w, np.maximum(Bs, 1.0), 0.0 * Bs)
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
            t_mem = np.minimum(min(c.bmax, c.budget - 1) / (lp * w.output_tokens), 1e6 * c.t1)
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
    """Attainment of ``n`` colocated instances at each rate."""
    w = c.w
    shape = rate.shape
    lam = np.ravel(rate) / n
    s = _coloc_state(c, lam)
    stable = s["found"] & (s["rho"] < 1) & (s["S_c"] <= w.ttft_s)
    r_s = np.where(stable, s["rho"], 0.0)
    S_c = np.where(stable, s["S_c"], 1.0)
    F = mdl_wait_cdf(r_s, 1.0, np.where(stable, (w.ttft_s - S_c) / S_c, 0.0))   # t/S
    ttft_att = np.where(stable, F, 0.0)
    qs = s["found"] & (s["rho"] < 1)
    rq = np.where(qs, s["rho"], 0.0)
    Sq = np.where(qs, s["S_c"], 1.0)
    wq = np.where(qs, mdl_mean_wait_s(rq / Sq, Sq), np.inf)             # M/D/1, once
    tpot_ok = s["found"] & (s["t"] <= w.tpot_s * (1 + 1e-12))
    R = lambda x: np.reshape(x, shape)  # noqa: E731
    service = dict(ttft_mean_s=R(wq + s["S_c"]), tpot_s=R(s["t"]), decode_batch=R(s["B"]),
                   prefill_utilisation=R(s["rho"]))
    return slo_attainment(rate, R(ttft_att), R(tpot_ok), service, n * c.dep.n_devices, w)


@accepts_legacy(_COLOC_AT_0_1, _DEFAULTS_0_1, _coloc_0_1, "workload")
@inputs(dep="deployment")
def colocated_at_rate(dep: Deployment, n_instances: int, workload: Workload, slo: SLO,
                      rate_per_s: Any, token_budget: int = 2048) -> SLOAttainment:
    """SLO attainment and goodput of colocated instances (chunked prefill) at given rates.

    Release 0.1's call ``(dep, n_instances, input_tokens, output_tokens, ttft_slo_s,
    tpot_slo_s, rate_per_s, slo_fraction=0.9, token_budget=2048)`` is accepted too,
    positionally or by keyword, with the same result.

    Parameters
    ----------
    dep : Deployment
        One instance (``pp`` = 1).
    n_instances : int
        Instances, each serving both phases; requests split evenly.
    workload : Workload
        Prompt and output length of every request [token].
    slo : SLO
        TTFT and TPOT targets [s] and the share of requests that must meet the TTFT one, in
        (0, 1).
    rate_per_s : float or array_like
        Request rates of the whole system [req/s], >= 0.
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
    >>> from tokenomics.data.workload import SLO, Workload
    >>> r = colocated_at_rate(d, 1, Workload(2048, 256), SLO(1.0, 0.033), [1.0, 100.0])
    >>> bool(r.meets_slo[0]), float(r.goodput_per_s[1])
    (True, 0.0)
    """
    c = _coloc(dep, workload, slo, token_budget)
    return _coloc_at(c, single_count(n_instances, "n_instances"), request_rates(rate_per_s))


@accepts_legacy(_COLOC_0_1, _DEFAULTS_0_1, _coloc_0_1, "workload")
@inputs(dep="deployment")
def colocated_goodput(dep: Deployment, n_instances: int, workload: Workload, slo: SLO,
                      token_budget: int = 2048) -> Goodput:
    """Largest request rate colocated instances with chunked prefill serve within the SLOs.

    Release 0.1's call ``(dep, n_instances, input_tokens, output_tokens, ttft_slo_s,
    tpot_slo_s, slo_fraction=0.9, token_budget=2048)`` is accepted too, positionally or by
    keyword, with the same result.

    Parameters
    ----------
    dep : Deployment
        One instance (``pp`` = 1).
    n_instances : int
        Instances, each serving both phases.
    workload : Workload
        Prompt and output length of every request [token].
    slo : SLO
        TTFT and TPOT targets [s] and the share of requests that must meet the TTFT one, in
        (0, 1) (default 0.9).
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
    resolution ~1e-6 of the search range). Unlike the disaggregated model the limits interact
    (the prompt's chunks share steps with the decodes), so ``rate_limits_per_s`` holds only the
    binding one.

    References
    ----------
    .. [1] A. Agrawal et al., Sarathi-Serve, OSDI 2024, arXiv:2403.02310.
    .. [2] Seed digest S24, S50, S51.

    Examples
    --------
    >>> import tokenomics as tk
    >>> d = tk.Deployment("llama-3.1-70b", "h100-sxm", tp=4)
    >>> from tokenomics.data.workload import SLO, Workload
    >>> g = colocated_goodput(d, 4, Workload(2048, 256), SLO(ttft_s=1.0, tpot_s=0.033))
    >>> g.binding, bool(g.tpot_s <= 0.033)
    ('tpot', True)
    """
    c = _coloc(dep, workload, slo, token_budget)
    n = single_count(n_instances, "n_instances")
    w = c.w
    n0 = max(w.input_tokens / c.budget, 1.0)
    hi = 1.0 / (n0 * float(_mixed_step_time(dep, w, 0.0, 1.0 / n0)))   # per instance
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
    elif s["t"][0] > w.tpot_s:
        binding = "tpot"
    else:
        binding = "ttft"
    st = _coloc_state(c, np.array([lo]))
    rho, S_c = float(st["rho"][0]), float(st["S_c"][0])
    wq = float(mdl_wait_quantile_s(lo, S_c, w.fraction))
    rate = lo * n
    n_dev = n * dep.n_devices
    return Goodput(
        layout="colocated", n_prefill=n, n_decode=n, n_devices=n_dev, rate_per_s=rate,
        goodput_per_s_per_device=rate / n_dev,
        output_tokens_per_s_per_device=rate * w.output_tokens / n_dev,
        binding=binding, ttft_mean_s=float(mdl_mean_wait_s(lo, S_c)) + S_c,
        ttft_quantile_s=wq + S_c, tpot_s=float(st["t"][0]), decode_batch=float(st["B"][0]),
        prefill_utilisation=rho,
        rate_limits_per_s={"ttft": math.inf, "tpot": math.inf, "memory": math.inf,
                           "link": math.inf, binding: rate})
