"""A request's journey from the user's keypress to its last token: the latency budget.

The source follows one request through fifteen steps (the 001 seed; here 13 rows, the
accelerator-side steps it lists one by one being timed together): tokenizer, API gateway,
authentication and billing, load balancing, the inference router, the scheduler's continuous
batching, the KV cache and prefix cache, prefill, decode, the networks, detokenisation and
streaming back. :func:`request_journey` composes them into one budget, each step a named input
with a sourced default (``price_catalog/journey.toml``): the source's figures where it gives
them, labelled assumptions where it names a step without a number.

Notes
-----
Steps before the first token, in order (latencies [s]):

=====================  ====================================================================
``tokenize``           :math:`I / r_\\mathrm{tok}` on the client's CPU
``client_network``     the user to the data centre, one way
``gateway``            API gateway (source: under 1 ms)
``auth_billing``       key to organisation, rate tier, pricing mode
``load_balancer``      replica choice
``queue``              what the load adds: the wait for a place in the running batch and the
                       time sharing steps with other prompts adds
                       (:func:`tokenomics.replica_ttft`: a birth-death chain of sequences over
                       the replica's completion rates, a gated batch chain of the prompts
                       waiting for a step); mean here, quantiles in
                       :attr:`Journey.ttft_p99_s`; at :math:`\\lambda \\ge \\mu`, the
                       replica's capacity, the balancer refuses (HTTP 429)
``router``             model, silicon and replica choice (source: a few ms)
``fabric_in``          scale-out hops into the replica (source: RoCEv2 5-10 us, IB 1-2 us)
``scheduler``          the rest of the step in flight at arrival (length-biased: the mean of
                       :math:`T^2 / 2T` over the steps)
``prefill``            the prompt's own step(s) beside the running decodes, less the cached
                       prefix (alone: the steady state's TTFT at concurrency 1)
``first_token_out``    detokenise and stream (server-sent events), fabric hops out, the
                       network back to the user
=====================  ====================================================================

Their sum is the TTFT; the decode of the other :math:`O - 1` tokens at the steady state's TPOT
brings the end-to-end time (each later token travels the same path out, so the path is counted
once). Billing closes off the user's path.

**Cost per step.** Only the accelerator steps are priced. The replica costs
:math:`n p` per second (:math:`n` devices at :math:`p` USD per device-second) and, at the
request's operating point, completes :math:`r` requests a second (the steady state's
``requests_per_s``, not the capacity :math:`\\mu` of the queue), so a request costs
:math:`n p / r`; the prefill's share is
the part of each mixed step its prompt adds, :math:`(t - t_0)/t` (:math:`t` the mixed step,
:math:`t_0` the decode-only step), the decode's the rest.

**Quantiles.** Only the replica's part varies here (queue, scheduler, prefill: the
distribution of :func:`tokenomics.replica_ttft`, which agrees with
:func:`tokenomics.simulate_serving` on the same deployment); every other step is its stated
budget, so TTFT and end-to-end quantiles are the deterministic part plus the replica's.

References
----------
.. [1] Data Gravity, "How an AI Token Travels Through a Data Center" (the team's seed 001):
   gateway budget under 1 ms, router within a few milliseconds, InfiniBand 1-2 us and
   RoCEv2 5-10 us hops, first tokens at ~0.3 s to the reader, typical GPU TTFT 400-600 ms.
.. [2] D. G. Kendall, "Stochastic processes occurring in the theory of queues", 1953 (M/D/1).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tokenomics.core import checks as V
from tokenomics.core.errors import TokenomicsError
from tokenomics.core.units import ReadableRepr, as_magnitude
from tokenomics.data.bibliography import catalog_dir, data_sources
from tokenomics.data.boundary import inputs
from tokenomics.data.deployment import Deployment
from tokenomics.data.kinds import JOURNEY
from tokenomics.data.schema import read_entries
from tokenomics.economics.cost import device_hour_usd
from tokenomics.serving.replica_queue import TOKEN_BUDGET, replica_ttft
from tokenomics.serving.steady import steady_state

#: Terms of ``price_catalog/journey.toml``: canonical unit and plausible range (declared in
#: :data:`tokenomics.data.kinds.JOURNEY`).
JOURNEY_TERMS: dict[str, tuple[str, float, float]] = {
    f.name: (f.unit, f.lo, f.hi) for f in JOURNEY.fields}
#: Scale-out hops each way between the load balancer and the replica (an assumption).
FABRIC_HOPS = 2


@dataclass(frozen=True)
class JourneyDefault:
    """One sourced default of the journey: value in its canonical unit, source, note."""

    value: float
    source: str
    kind: str
    note: str


def load_journey_defaults(folder: Path | str | None = None) -> dict[str, JourneyDefault]:
    """Read and validate ``journey.toml`` (default the bundled ``price_catalog``).

    Raises
    ------
    CatalogError
        Naming the file and the field: a missing or unknown term, a wrong unit, an
        unresolved source, an implausible value.
    """
    folder = Path(folder) if folder is not None else catalog_dir("price_catalog")
    src = data_sources(folder)
    v = read_entries(JOURNEY, folder / "journey.toml", src)[0]
    return {k: JourneyDefault(v[k], src[v["_sources"][k]].key, src[v["_sources"][k]].kind,
                              v["_notes"][k]) for k in JOURNEY_TERMS}


@lru_cache(maxsize=1)
def _bundled() -> dict[str, JourneyDefault]:
    return load_journey_defaults()


@dataclass(frozen=True, repr=False)
class Journey(ReadableRepr):
    """A request's latency budget and cost, step by step (:func:`request_journey`).

    Attributes
    ----------
    step : tuple of str
        The steps in order (module notes), ``decode`` and ``billing_close`` last.
    latency_s : ndarray
        Each step's latency [s] (the queue's mean wait).
    cost_usd : ndarray
        Each step's cost [USD] (accelerator steps only; 0 elsewhere).
    source : tuple of str
        Where each step's figure comes from: a bibliography key, ``"computed"`` (the step
        engine, the queue model) or ``"user"``.
    ttft_s, e2e_s : float
        Time to first token and to the last token, mean wait [s].
    ttft_p50_s, ttft_p99_s, e2e_p50_s, e2e_p99_s : float
        The same at the wait's median and 99th percentile [s].
    utilisation : float
        :math:`\\rho = \\lambda / \\mu` of the replica.
    usd_per_request : float
        The request's cost [USD].
    """

    step: tuple[str, ...]
    latency_s: Any
    cost_usd: Any
    source: tuple[str, ...]
    ttft_s: float
    e2e_s: float
    ttft_p50_s: float
    ttft_p99_s: float
    e2e_p50_s: float
    e2e_p99_s: float
    utilisation: float
    usd_per_request: float

    def to_frame(self) -> pd.DataFrame:
        """One row per step: ``step``, ``latency_s``, ``cost_usd``, ``source``,
        ``cumulative_s`` (the time the step ends)."""
        return pd.DataFrame(dict(step=self.step, latency_s=self.latency_s,
                                 cost_usd=self.cost_usd, source=self.source,
                                 cumulative_s=np.cumsum(self.latency_s)))


def _terms(overrides: Any) -> dict[str, tuple[float, str]]:
    """The journey's terms: bundled defaults, then the caller's overrides (by name)."""
    base = {k: (d.value, d.source) for k, d in _bundled().items()}
    base["fabric_hops"] = (float(FABRIC_HOPS), "journey-assumption")
    if overrides is None:
        return base
    if not isinstance(overrides, dict):
        raise TokenomicsError(f"steps must be a dict of step name -> value, got {overrides!r}")
    for k, v in overrides.items():
        if k not in base:
            raise TokenomicsError(f"steps: unknown step {k!r}; known: {', '.join(base)}")
        name = f"steps[{k!r}]"
        if k == "fabric_hops":
            base[k] = (float(V.single_whole(v, name, minimum=0)), "user")
            continue
        unit, lo, hi = JOURNEY_TERMS[k]
        x = V.single_amount(V.non_negative(as_magnitude(v, unit, name), name, unit), name, unit)
        if not lo <= x <= hi:
            raise TokenomicsError(f"{name} must be in [{lo:g}, {hi:g}] {unit} (a plausible "
                                  f"budget for that step), got {x:g}")
        base[k] = (x, "user")
    return base


def _operating_point(dep: Deployment, inp: int, out: int, cached: int,
                     rate: float | None) -> tuple[Any, float, float]:
    """The steady state a request meets, the replica's capacity [request/s] and rho.

    With no rate the request is alone (concurrency 1). With a rate, the concurrency is the
    smallest whose completion rate reaches it (Little's law: :math:`B = \\lambda W`).
    """
    cap = steady_state(dep, "max", inp, out, cached_tokens=cached)
    mu = float(cap.requests_per_s)
    if rate is None or rate == 0:
        return steady_state(dep, 1, inp, out, cached_tokens=cached), mu, 0.0
    if rate >= mu * (1 - 1e-6):          # at capacity the M/D/1 wait has no finite tail
        raise TokenomicsError(
            f"arrival_rate_per_s {rate:g} is at or above the replica's capacity {mu:.4g} "
            f"requests/s (concurrency {float(cap.concurrency):g}): the load balancer would "
            f"refuse with HTTP 429; add replicas or lower the rate")
    # the smallest B whose completion rate reaches the arrival rate, by bisection over
    # 1..B_max (the completion rate grows with B): ~log2(B_max) scalar steady states, not
    # one per concurrency (1.87 million of them took 8 GB and 30 s for gpt-oss-20b on B300)
    lo, hi = 1, int(float(cap.concurrency))
    while lo < hi:
        mid = (lo + hi) // 2
        if float(steady_state(dep, mid, inp, out, cached_tokens=cached).requests_per_s) >= rate:
            hi = mid
        else:
            lo = mid + 1
    return steady_state(dep, lo, inp, out, cached_tokens=cached), mu, rate / mu


@inputs(dep="deployment")
def request_journey(dep: Deployment, input_tokens: int, output_tokens: int, *,
                    cached_tokens: int = 0, arrival_rate_per_s: float | None = None,
                    steps: dict[str, Any] | None = None, device_price: Any = None,
                    token_budget: int = TOKEN_BUDGET) -> Journey:
    """The latency budget and cost of one request from the user's keypress to its last token.

    Parameters
    ----------
    dep : Deployment
        The replica that serves it (``pp`` 1).
    input_tokens, output_tokens : int
        Prompt :math:`I` and answer :math:`O` [token].
    cached_tokens : int
        Prompt prefix the cache-aware router finds in the replica's prefix cache [token].
    arrival_rate_per_s : float, optional
        Requests per second reaching this replica; None: the request is alone (no queue,
        concurrency 1). Above the replica's capacity the balancer refuses (an error).
    steps : dict, optional
        Overrides of the stated step budgets by name (:data:`JOURNEY_TERMS` and
        ``"fabric_hops"``), numbers in the canonical unit or Quantities
        (``{"client_network": tk.Q_(80, "ms")}``).
    device_price : float, str, Ownership or None
        As in :func:`tokenomics.deployment_cost`: USD per device-hour, a rental tier, or
        None for the catalog's price on the default basis.
    token_budget : int
        Prompt tokens the replica's steps may carry (its engine's ``max_num_tokens``),
        default 8,192 [token]; read under load (:func:`tokenomics.replica_ttft`).

    Returns
    -------
    Journey
        Steps with latency, cost and source; TTFT and end-to-end time with their median and
        99th percentile; the replica's utilisation; the request's cost.

    Raises
    ------
    TokenomicsError
        For bad inputs or a rate the replica cannot serve.

    Examples
    --------
    >>> import tokenomics as tk
    >>> j = request_journey(tk.Deployment("llama-3.1-8b", "h100-sxm"), 1024, 256,
    ...                     device_price=2.0)
    >>> bool(abs(j.to_frame().latency_s.sum() - j.e2e_s) < 1e-12)
    True
    """
    inp = V.single_whole(input_tokens, "input_tokens", unit="token")
    out = V.single_whole(output_tokens, "output_tokens", unit="token")
    cached = V.single_whole(cached_tokens, "cached_tokens", minimum=0, unit="token")
    rate = None if arrival_rate_per_s is None else V.single_amount(
        V.non_negative(arrival_rate_per_s, "arrival_rate_per_s", "1/s"),
        "arrival_rate_per_s", "1/s")
    terms = _terms(steps)
    price = device_hour_usd(dep.hardware, device_price)
    ss, mu, rho = _operating_point(dep, inp, out, cached, rate)
    rq = replica_ttft(dep, inp, out, rate, cached_tokens=cached, token_budget=token_budget) \
        if rate else None
    return _compose(dep, ss, terms, inp, out, (mu, rho, rq, price))


def _compose(dep: Deployment, ss: Any, terms: dict[str, tuple[float, str]], inp: int,
             out: int, load: tuple[float, float, Any, float]) -> Journey:
    """The steps in order, their latencies, costs and sources; totals and quantiles."""
    mu, rho, rq, price = load
    val = {k: v for k, (v, _) in terms.items()}
    srcs = {k: s for k, (_, s) in terms.items()}
    tpot = float(ss.tpot_s)
    if rq is None:                           # alone: no queue, the step starts at once
        wait, sched, pre = 0.0, 0.0, float(ss.ttft_s)
    else:
        wait = rq.slot_wait_mean_s + rq.sharing_mean_s
        sched, pre = rq.step_residual_mean_s, rq.own_step_s
    fabric = val["fabric_hops"] * val["fabric_hop"]
    rows = [
        ("tokenize", inp / val["tokenize_rate"], srcs["tokenize_rate"]),
        ("client_network", val["client_network"], srcs["client_network"]),
        ("gateway", val["gateway"], srcs["gateway"]),
        ("auth_billing", val["auth_billing"], srcs["auth_billing"]),
        ("load_balancer", val["load_balancer"], srcs["load_balancer"]),
        ("queue", wait, "computed"),
        ("router", val["router"], srcs["router"]),
        ("fabric_in", fabric, srcs["fabric_hop"]),
        ("scheduler", sched, "computed"),
        ("prefill", pre, "computed"),
        ("first_token_out", val["detokenize_stream"] + fabric + val["client_network"],
         srcs["detokenize_stream"]),
        ("decode", (out - 1) * tpot, "computed"),
        ("billing_close", 0.0, "journey-datagravity-token-journey"),
    ]
    lat = np.array([r[1] for r in rows], float)
    usd = dep.n_devices * price / 3600.0 / float(ss.requests_per_s)
    share = (tpot - float(ss.decode_only_tpot_s)) / tpot
    cost = np.zeros(len(rows))
    cost[[r[0] for r in rows].index("prefill")] = usd * share
    cost[[r[0] for r in rows].index("decode")] = usd * (1.0 - share)
    ttft = float(lat[:-2].sum())
    e2e = float(lat.sum())
    engine = wait + sched + pre                 # the replica's mean part, replaced below
    q = (rq.p50_s, rq.p99_s) if rq is not None else (engine, engine)
    return Journey(step=tuple(r[0] for r in rows), latency_s=lat, cost_usd=cost,
                   source=tuple(r[2] for r in rows), ttft_s=ttft, e2e_s=e2e,
                   ttft_p50_s=ttft - engine + q[0], ttft_p99_s=ttft - engine + q[1],
                   e2e_p50_s=e2e - engine + q[0], e2e_p99_s=e2e - engine + q[1],
                   utilisation=rho, usd_per_request=usd)
