"""Disaggregated prefill/decode serving: pool sizing and goodput under SLOs.

Notes
-----
``n_prefill`` prefill instances and ``n_decode`` decode instances, each a replica of its
deployment (:func:`disaggregated_goodput`, :func:`disaggregated_at_rate`). Arrivals are split
evenly over the prefill instances, each an M/D/1 queue serving one prompt at a time
(:mod:`tokenomics.serving.queueing`; service :math:`S_p` =
:func:`~tokenomics.physics.step.prefill` at batch 1); the KV of the prompt then crosses to a
decode instance (:math:`t_x = \\alpha + M_{KV}/\\beta`,
:func:`~tokenomics.physics.collectives.p2p_time`), so :math:`\\mathrm{TTFT} = W + S_p + t_x`.
Decode instances batch continuously: by Little's law the mean batch of one instance at rate
:math:`\\lambda_d = \\lambda / n_d` is :math:`B = \\lambda_d\\,O\\,t(B)` with :math:`t(B)` the
decode step at the mean context :math:`P + O/2` (:func:`~tokenomics.serving.slo.decode_table`),
and TPOT :math:`= t(B)`. The rate limits of the two pools are separable and linear in their
instance counts, so :func:`best_pool_ratio` evaluates every split of a device budget at once.

Every function takes the request shape as a :class:`~tokenomics.data.workload.Workload`, the
targets as an :class:`~tokenomics.data.workload.SLO` and the KV path as a
:class:`~tokenomics.data.workload.Link`; release 0.1's loose arguments (``input_tokens,
output_tokens, ttft_slo_s, tpot_slo_s, slo_fraction``, ``link_bytes_per_s, link_latency_s``)
are still accepted, positionally or by keyword, with the same results. Results are the
:class:`~tokenomics.serving.slo.SLOAttainment` and :class:`~tokenomics.serving.slo.Goodput`
that the colocated model (:mod:`tokenomics.serving.colocated`) reports too.

The interference that disaggregation removes is the prompt work inside the decode steps of a
colocated instance, so a strict TPOT caps the colocated prompt rate (S50). Splitting does not
raise raw throughput: the work per request is the same. Disaggregation pays for its goodput
with the KV transfer and with pools only as good as their ratio (S51).

References
----------
.. [1] Y. Zhong et al., "DistServe: Disaggregating Prefill and Decoding for Goodput-optimized
   Large Language Model Serving", OSDI 2024, arXiv:2401.09670.
.. [2] P. Patel et al., "Splitwise: Efficient Generative LLM Inference Using Phase Splitting",
   ISCA 2024, arXiv:2311.18677.
.. [3] Seed digest S50 (disaggregation raises goodput, not raw throughput) and S51 (when it
   pays).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from tokenomics.core import checks as V
from tokenomics.core.errors import TokenomicsError
from tokenomics.core.units import Result
from tokenomics.data.boundary import inputs
from tokenomics.data.deployment import Deployment, check_deployment
from tokenomics.data.workload import SLO, Link, Workload, accepts_legacy
from tokenomics.physics.collectives import p2p_time
from tokenomics.physics.kv import kv_cache_bytes
from tokenomics.physics.step import prefill
from tokenomics.serving.queueing import (
    mdl_max_utilisation,
    mdl_mean_wait_s,
    mdl_wait_cdf,
    mdl_wait_quantile_s,
)
from tokenomics.serving.slo import (
    LEGACY_DEFAULTS,
    LEGACY_REQUEST_PARAMS,
    DecodeTable,
    Goodput,
    RequestTargets,
    SLOAttainment,
    decode_table,
    legacy_workload_slo,
    request_rates,
    request_targets,
    single_count,
    single_value,
    slo_attainment,
)


# --------------------------------------------------------------------------------------------
# Inputs and release 0.1's call forms
# --------------------------------------------------------------------------------------------
def _same_model(prefill_dep: Deployment, decode_dep: Deployment) -> None:
    """Raise unless both pools serve the same model."""
    if prefill_dep.model != decode_dep.model:
        raise TokenomicsError(
            f"the prefill and decode deployments must serve the same model, got "
            f"{prefill_dep.model.id} and {decode_dep.model.id}")


def _link(link: Link | None) -> Link:
    """The KV-transfer path: ``link``, or :meth:`Link.nvlink_like` when None."""
    if link is None:
        return Link.nvlink_like()
    if not isinstance(link, Link):
        raise TokenomicsError(f"link must be a Link(bytes_per_s, latency_s) or None, got {link!r}")
    return link


_LINK_0_1 = ("link_bytes_per_s", "link_latency_s")
_DEFAULTS_0_1 = {**LEGACY_DEFAULTS, "link_bytes_per_s": 200e9, "link_latency_s": 10e-6}
_DISAGG_AT_0_1 = ("prefill_dep", "decode_dep", "n_prefill", "n_decode", *LEGACY_REQUEST_PARAMS,
                  "rate_per_s", "slo_fraction", *_LINK_0_1)
_DISAGG_0_1 = ("prefill_dep", "decode_dep", "n_prefill", "n_decode", *LEGACY_REQUEST_PARAMS,
               "slo_fraction", *_LINK_0_1)
_POOLS_0_1 = ("prefill_dep", "decode_dep", "total_devices", *LEGACY_REQUEST_PARAMS,
              "slo_fraction", *_LINK_0_1)


def _disagg_0_1(a: dict[str, Any]) -> dict[str, Any]:
    """A disaggregated function's 0.1 arguments as its new ones (``workload, slo, link``)."""
    for k in ("prefill_dep", "decode_dep"):
        check_deployment(a[k], k)
    _same_model(a["prefill_dep"], a["decode_dep"])
    a["workload"], a["slo"] = legacy_workload_slo(a, a["decode_dep"])
    bw = single_value(V.positive(a.pop("link_bytes_per_s"), "link_bytes_per_s", "B/s"),
                      "link_bytes_per_s")
    lat = single_value(V.non_negative(a.pop("link_latency_s"), "link_latency_s", "s"),
                       "link_latency_s")
    a["link"] = Link(bw, lat)
    return a


# --------------------------------------------------------------------------------------------
# Disaggregated pools
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Disagg:
    r: RequestTargets
    S_p: float
    t_x: float
    kv_bytes: float
    link: float              # per-direction bandwidth of a prefill instance's link [B/s]
    table: DecodeTable
    n_dev_p: int
    n_dev_d: int
    rho_ttft: float          # largest prefill utilisation meeting the TTFT SLO
    r_d: float               # largest rate one decode instance takes within TPOT and memory
    decode_binding: str      # "tpot" or "memory"
    B_c: float               # its batch


def _decode_capacity(table: DecodeTable, r: RequestTargets) -> tuple[float, str]:
    """Largest real batch with t(B) <= the TPOT SLO (t interpolated between integers), and
    whether memory (the largest batch that fits) or the TPOT stops it."""
    tt = table.step_time_s[1:]
    k = int(np.flatnonzero(tt <= r.tpot_s)[-1]) + 1          # largest integer batch within SLO
    if k == table.max_batch:
        return float(k), "memory"
    return k + (r.tpot_s - tt[k - 1]) / (tt[k] - tt[k - 1]), "tpot"


def _disagg(prefill_dep: Deployment, decode_dep: Deployment, workload: Workload, slo: SLO,
            link: Link | None) -> _Disagg:
    """Check the inputs; the per-request service, transfer and per-instance capacities."""
    _same_model(prefill_dep, decode_dep)
    r = request_targets(decode_dep, workload, slo)
    ln = _link(link)
    bw, lat = float(ln.bytes_per_s), float(ln.latency_s)
    S_p = float(prefill(prefill_dep, r.input_tokens).time_s)
    kv = float(kv_cache_bytes(decode_dep.model, r.input_tokens, 1, decode_dep.kv_dtype,
                              decode_dep.allow_beyond_max_context))
    t_x = float(p2p_time(kv, bw, lat))
    slack = r.ttft_s - S_p - t_x
    if slack < 0:
        raise TokenomicsError(
            f"ttft binds: ttft_slo_s={V.fmt(r.ttft_s)} is below the prefill service time "
            f"{S_p:.4g} s plus the KV transfer {t_x:.4g} s ({kv / 1e9:.4g} GB at "
            f"{bw / 1e9:.4g} GB/s) = {S_p + t_x:.4g} s, which no rate or pool size can "
            "beat; relax the TTFT SLO, use a faster link, or a faster prefill deployment")
    table = decode_table(decode_dep, r.context_tokens)
    t1 = float(table.step_time_s[1])
    if t1 > r.tpot_s:
        raise TokenomicsError(
            f"tpot binds: tpot_slo_s={V.fmt(r.tpot_s)} is below the decode step at batch 1, "
            f"{t1:.4g} s ({decode_dep.model.id} on {decode_dep.n_devices} x "
            f"{decode_dep.hardware.id}, context {r.context_tokens}), which no rate or pool size "
            "can beat; relax the TPOT SLO or use a faster decode deployment")
    rho_ttft = float(mdl_max_utilisation(slack, S_p, r.fraction))
    B_c, binding = _decode_capacity(table, r)
    r_d = B_c / (r.output_tokens * float(table.step_time_at(np.asarray(B_c))))
    return _Disagg(r, S_p, t_x, kv, bw, table, prefill_dep.n_devices, decode_dep.n_devices,
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
    """Attainment of ``n_p`` prefill and ``n_d`` decode instances at each rate."""
    r = m.r
    rho = rate * m.S_p / n_p
    link_u = rate * m.kv_bytes / (n_p * m.link)
    stable = (rho < 1) & (link_u <= 1 + 1e-12)
    r_s = np.where(stable, rho, 0.0)
    x = np.full(rate.shape, (r.ttft_s - m.S_p - m.t_x) / m.S_p)
    F = np.reshape(mdl_wait_cdf(np.ravel(r_s), 1.0, np.ravel(x)), rate.shape)   # t/S = x
    ttft_att = np.where(stable, F, 0.0)
    wq = np.where(stable, mdl_mean_wait_s(r_s / m.S_p, m.S_p), np.inf)   # M/D/1, once
    B = m.table.batch_at(rate * r.output_tokens / n_d)
    fits = np.isfinite(B)
    tpot = np.where(fits, m.table.step_time_at(np.where(fits, B, 0.0)), np.inf)
    ok = fits & (tpot <= r.tpot_s * (1 + 1e-12))
    n_dev = n_p * m.n_dev_p + n_d * m.n_dev_d
    service = dict(ttft_mean_s=wq + m.S_p + m.t_x, tpot_s=tpot, decode_batch=B,
                   prefill_utilisation=rho)
    return slo_attainment(rate, ttft_att, ok, service, n_dev, r)


@accepts_legacy(_DISAGG_AT_0_1, _DEFAULTS_0_1, _disagg_0_1, "workload")
@inputs(prefill_dep="deployment", decode_dep="deployment")
def disaggregated_at_rate(prefill_dep: Deployment, decode_dep: Deployment, n_prefill: int,
                          n_decode: int, workload: Workload, slo: SLO, rate_per_s: Any,
                          link: Link | None = None) -> SLOAttainment:
    """SLO attainment and goodput of a disaggregated system at given request rates.

    Release 0.1's call ``(prefill_dep, decode_dep, n_prefill, n_decode, input_tokens,
    output_tokens, ttft_slo_s, tpot_slo_s, rate_per_s, slo_fraction=0.9,
    link_bytes_per_s=200e9, link_latency_s=10e-6)`` is accepted too, positionally or by
    keyword, with the same result.

    Parameters
    ----------
    prefill_dep, decode_dep : Deployment
        One prefill instance and one decode instance (the same model; may be equal).
    n_prefill, n_decode : int
        Instances in each pool, >= 1.
    workload : Workload
        Prompt and output length of every request [token].
    slo : SLO
        Targets on the time to first token and the time per output token [s], and the share
        of requests that must meet the TTFT one, in (0, 1) (reported in ``meets_slo``).
    rate_per_s : float or array_like
        Request rates to evaluate [req/s], >= 0.
    link : Link, optional
        Per-direction bandwidth [B/s] and latency [s] each prefill instance has to the decode
        pool (default :meth:`~tokenomics.data.workload.Link.nvlink_like`, 200 GB/s and
        10 us: four 400 Gb/s NICs, one per GPU of a tp=4 H100 instance).

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
    :math:`P(\\mathrm{TTFT} \\le T) = P(W \\le T - S_p - t_x)` from
    :func:`~tokenomics.serving.queueing.mdl_wait_cdf`; :math:`t_x = \\alpha + M_{KV}(P)/\\beta`
    with the KV in the decode deployment's format.
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
    >>> from tokenomics.data.workload import SLO, Workload
    >>> d = tk.Deployment("llama-3.1-8b", "h100-sxm")
    >>> r = disaggregated_at_rate(d, d, 1, 1, Workload(2048, 256), SLO(1.0, 0.033),
    ...                           [10.0, 40.0])
    >>> bool(r.meets_slo[0]), float(r.goodput_per_s[1])   # 40/s > 1 / 30 ms: unstable
    (True, 0.0)
    """
    m = _disagg(prefill_dep, decode_dep, workload, slo, link)
    n_p = single_count(n_prefill, "n_prefill")
    n_d = single_count(n_decode, "n_decode")
    return _disagg_at(m, n_p, n_d, request_rates(rate_per_s))


def _disagg_goodput(m: _Disagg, n_p: int, n_d: int) -> Goodput:
    """The largest rate ``n_p`` prefill and ``n_d`` decode instances serve, and the service."""
    lim = _disagg_limits(m, n_p, n_d)
    binding = min(lim, key=lambda k: lim[k])
    rate = lim[binding]
    at = _disagg_at(m, n_p, n_d, np.asarray(rate))
    rho = rate * m.S_p / n_p
    wq = float(mdl_wait_quantile_s(rho / m.S_p, m.S_p, m.r.fraction)) if rho < 1 else math.inf
    n_dev = at.n_devices
    limits = {"ttft": math.inf, "tpot": math.inf, "memory": math.inf, "link": math.inf}
    limits.update(lim)
    return Goodput(
        layout="disaggregated", n_prefill=n_p, n_decode=n_d, n_devices=n_dev,
        rate_per_s=float(rate), goodput_per_s_per_device=float(rate) / n_dev,
        output_tokens_per_s_per_device=float(rate) * m.r.output_tokens / n_dev, binding=binding,
        ttft_mean_s=float(at.ttft_mean_s), ttft_quantile_s=wq + m.S_p + m.t_x,
        tpot_s=float(at.tpot_s), decode_batch=float(at.decode_batch),
        prefill_utilisation=float(rho), rate_limits_per_s=limits)


@accepts_legacy(_DISAGG_0_1, _DEFAULTS_0_1, _disagg_0_1, "workload")
@inputs(prefill_dep="deployment", decode_dep="deployment")
def disaggregated_goodput(prefill_dep: Deployment, decode_dep: Deployment, n_prefill: int,
                          n_decode: int, workload: Workload, slo: SLO,
                          link: Link | None = None) -> Goodput:
    """Largest request rate a disaggregated prefill/decode system serves within its SLOs.

    Release 0.1's call ``(prefill_dep, decode_dep, n_prefill, n_decode, input_tokens,
    output_tokens, ttft_slo_s, tpot_slo_s, slo_fraction=0.9, link_bytes_per_s=200e9,
    link_latency_s=10e-6)`` is accepted too, positionally or by keyword, with the same result.

    Parameters
    ----------
    prefill_dep, decode_dep : Deployment
        One prefill instance and one decode instance (the same model; may be equal).
    n_prefill, n_decode : int
        Instances in each pool, >= 1.
    workload : Workload
        Prompt and output length of every request [token].
    slo : SLO
        Targets on the time to first token and the time per output token [s], and the share
        of requests that must meet the TTFT one, in (0, 1) (default 0.9). The TPOT is the
        same for every request in this model and must meet its target.
    link : Link, optional
        Per-direction bandwidth [B/s] and latency [s] each prefill instance has to the decode
        pool (default 200 GB/s and 10 us, :meth:`~tokenomics.data.workload.Link.nvlink_like`).

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
    :math:`P(W \\le T_\\mathrm{TTFT} - S_p - t_x) \\ge f`
    (:func:`~tokenomics.serving.queueing.mdl_max_utilisation`) and :math:`B^*` the largest
    batch with :math:`t(B^*) \\le T_\\mathrm{TPOT}` that fits memory (:math:`B/t(B)` grows
    with :math:`B`). Batching prefills is a later refinement: each prefill server takes one
    prompt at a time.

    References
    ----------
    .. [1] Y. Zhong et al., DistServe, OSDI 2024, arXiv:2401.09670.
    .. [2] P. Patel et al., Splitwise, ISCA 2024, arXiv:2311.18677.
    .. [3] Seed digest S50, S51.

    Examples
    --------
    >>> import tokenomics as tk
    >>> from tokenomics.data.workload import SLO, Workload
    >>> d = tk.Deployment("llama-3.1-70b", "h100-sxm", tp=4)
    >>> g = disaggregated_goodput(d, d, 3, 1, Workload(2048, 256), SLO(1.0, 0.033))
    >>> g.binding, g.n_devices, round(g.rate_per_s, 1)   # 3 x 0.915 / 72.4 ms (the bound)
    ('ttft', 16, 37.9)
    """
    m = _disagg(prefill_dep, decode_dep, workload, slo, link)
    return _disagg_goodput(m, single_count(n_prefill, "n_prefill"),
                           single_count(n_decode, "n_decode"))


@dataclass(frozen=True, repr=False)
class PoolSplit(Result):
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
        The candidate splits, for each prefill count the decode counts that can be best
        (the largest the budget allows and the smallest that matches the prefill pool):
        ``n_prefill``, ``n_decode``, ``n_devices``, ``rate_per_s``,
        ``goodput_per_s_per_budget_device``, ``binding``. Linear in the budget up to
        :data:`MAX_SPLIT_ROWS` prefill counts, then those counts nearest the balance point.
    """

    n_prefill: int
    n_decode: int
    goodput: Goodput
    goodput_per_s_per_budget_device: float
    table: pd.DataFrame


#: Largest device budget :func:`best_pool_ratio` searches.
MAX_POOL_DEVICES = 10_000_000
#: Most prefill counts :func:`best_pool_ratio` tabulates: beyond it, the window of this many
#: around the balance point :math:`n_p c_p = n_d c_d` (the best split is always inside it).
MAX_SPLIT_ROWS = 4096


def _candidate_splits(m: _Disagg, total: int) -> tuple[np.ndarray, np.ndarray]:
    r"""For each prefill count, the decode counts that can be best: O(budget), not O(budget²).

    Past :data:`MAX_SPLIT_ROWS` prefill counts only a window of that many around the balance
    point is kept: the rate :math:`\min(a n_p, b\, d_{max}(n_p))` rises with :math:`n_p`
    below the crossing and never rises above it, so the best split is within a count or two of
    it and the work stays bounded for any budget. The rate :math:`\min(a n_p, b n_d)` never falls as :math:`n_d` grows, so for a given
    :math:`n_p` only the largest :math:`n_d` the budget allows can win, or, where the
    prefill pool binds first, the smallest :math:`n_d` that reaches :math:`a n_p` (fewer
    devices for the same rate); the neighbours of that count are kept against rounding.
    """
    dp, dd = m.n_dev_p, m.n_dev_d
    top = (total - dd) // dp
    one = _disagg_limits(m, 1, 1)
    a = min(one["ttft"], one["link"])                 # rate per prefill instance
    b = float(one[m.decode_binding])                  # rate per decode instance
    lo, hi = 1, top
    if top > MAX_SPLIT_ROWS and a > 0 and b > 0:
        # a n_p rises and b (total - n_p dp) / dd falls: the best split sits where they cross
        mid = int(round(b * total / (a * dd + b * dp)))
        lo = max(1, mid - MAX_SPLIT_ROWS // 2)
        hi = min(top, lo + MAX_SPLIT_ROWS - 1)
        lo = max(1, hi - MAX_SPLIT_ROWS + 1)
    n_p = np.arange(lo, hi + 1, dtype=np.int64)
    d_max = (total - n_p * dp) // dd
    lim = _disagg_limits(m, n_p, np.ones_like(n_p))
    per_prefill = np.min([np.broadcast_to(np.asarray(lim[k], float), n_p.shape)
                          for k in lim if k in ("ttft", "link")], axis=0)
    per_decode = b
    reach = np.ceil(per_prefill / per_decode) if per_decode > 0 else d_max
    cand = [d_max] + [np.clip(reach + j, 1, d_max) for j in (-1, 0, 1)]
    P_ = np.concatenate([n_p] * len(cand))
    D_ = np.concatenate(cand).astype(np.int64)
    key = np.unique(P_ * (int(d_max.max()) + 1) + D_)   # one sort of integers, not of rows
    return key // (int(d_max.max()) + 1), key % (int(d_max.max()) + 1)


@accepts_legacy(_POOLS_0_1, _DEFAULTS_0_1, _disagg_0_1, "workload")
@inputs(prefill_dep="deployment", decode_dep="deployment")
def best_pool_ratio(prefill_dep: Deployment, decode_dep: Deployment, total_devices: int,
                    workload: Workload, slo: SLO, link: Link | None = None) -> PoolSplit:
    """The prefill:decode split of ``total_devices`` that maximises goodput per device.

    Release 0.1's call ``(prefill_dep, decode_dep, total_devices, input_tokens,
    output_tokens, ttft_slo_s, tpot_slo_s, slo_fraction=0.9, link_bytes_per_s=200e9,
    link_latency_s=10e-6)`` is accepted too, positionally or by keyword, with the same result.

    Parameters
    ----------
    prefill_dep, decode_dep : Deployment
        One instance of each pool.
    total_devices : int
        Device budget; the best of every split with at least one instance of each kind and
        ``n_p * prefill_dep.n_devices + n_d * decode_dep.n_devices <= total_devices`` is
        found in time linear in the budget (:func:`_candidate_splits`).
    workload, slo, link
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
    >>> from tokenomics.data.workload import SLO, Workload
    >>> s = best_pool_ratio(d, d, 32, Workload(2048, 256), SLO(ttft_s=1.0, tpot_s=0.033))
    >>> s.n_prefill, s.n_decode      # a decode instance takes what three prefill ones send
    (6, 2)
    """
    m = _disagg(prefill_dep, decode_dep, workload, slo, link)
    total = single_count(total_devices, "total_devices")
    if total > MAX_POOL_DEVICES:
        raise TokenomicsError(f"total_devices={total:,} is more than {MAX_POOL_DEVICES:,}; the "
                              f"split of a larger fleet is the same ratio, so size a part of it")
    dp, dd = m.n_dev_p, m.n_dev_d
    if dp + dd > total:
        raise TokenomicsError(
            f"total_devices={total} cannot hold one prefill instance ({dp} devices) beside one "
            f"decode instance ({dd}): at least {dp + dd} devices are needed")
    n_p_all, n_d_all = _candidate_splits(m, total)
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
