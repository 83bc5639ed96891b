"""Agent sessions over time: sampled sessions, their KV in each tier over a day, their cost.

An agent session alternates work (LLM steps and tool calls) with a human's gaps (S60, S62).
:func:`agent_sessions` samples sessions from the source's statistics, runs a population of
them through a day under a retention policy (:func:`tokenomics.retention_policy`: KV in HBM
for :math:`t_1` of each gap, then in a cheaper tier until :math:`t_2`, then dropped), and
reports the KV held in each tier over time, the cost per session and per agent step, and the
golden time.

Notes
-----
**Generator** (:class:`SessionStats`, every figure the source's unless marked):

* requests per session :math:`R`: geometric on 1, 2, ... with mean 9.2 (S60);
* steps per request: 1 + Poisson(8), mean 9 (S60: "about 9");
* each step: :math:`\\ell` of LLM time and :math:`\\tau` of tool time, fixed by the time
  split (S62: LLM 3.3%, tools 4.8%) of the mean session (S60: 62.6 min) over its
  :math:`9.2 \\times 9` steps: :math:`\\ell = 0.033 \\times 3756 / 82.8 = 1.50` s,
  :math:`\\tau = 2.18` s;
* :math:`R - 1` human gaps, lognormal with a mean that makes the mean session 62.6 min
  (the rest of the time, 91.9%: a 7.0 min mean gap) and a mean-to-median ratio of 15
  (S60: "the mean can be up to 15 times the median"), hence a 28 s median.

The source also gives a 25-minute median gap between requests (S62). It cannot hold together
with the 62.6-minute mean session of 9.2 requests: 8.2 gaps with a 25-minute median would make
the median session longer than three hours, against a 62.6-minute mean. The generator keeps
the session figures (duration, requests, steps, time split); ``gap_median_s`` in
:class:`SessionStats` sets the median instead (the mean duration then no longer holds).

**Population.** Sessions start as a Poisson stream at :math:`N / \\bar D` per second, so
:math:`N` are under way on average (Little's law), from a warm-up (the window or 30 mean
sessions, whichever is longer) before the window to its end. A session's KV (``context_tokens`` of the model: S61's
119,000-token prefix by default) is in HBM while it works, and over each gap (and after its
last request, since the server cannot tell the last from the others) in HBM for
:math:`\\min(g, t_1)`, in the tier for :math:`\\min(g, t_2) - \\min(g, t_1)`, then nowhere.

**Cost.** A session pays its steps (:func:`tokenomics.agent_step`: S61's midfill on the cached
prefix and its decode) and its gaps: HBM rent over :math:`\\min(g, t_1)`, tier rent over the
rest up to :math:`t_2`, a reload when the user returns between :math:`t_1` and :math:`t_2`, a
recompute after :math:`t_2` (the policy's prices).

References
----------
.. [1] AI Frontier Korea, "EP 112. What Happens Inside an AI Chip", 2026, sections 8.1-8.3
   (seed digest S60: 62.6-minute sessions, 9.2 requests, ~9 steps per request, mean up to
   15x the median; S62: human 92%, tools 4.8%, LLM 3.3%, median gap 25 min, ~40 GB of KV,
   a 5-10 minute golden time in HBM).
.. [2] J. D. C. Little, "A proof for the queuing formula L = lambda W", 1961.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from tokenomics.core import checks as V
from tokenomics.core.errors import TokenomicsError
from tokenomics.core.units import ReadableRepr
from tokenomics.data.boundary import inputs
from tokenomics.data.deployment import Deployment
from tokenomics.economics.retention import (
    GAP_MEAN_TO_MEDIAN,
    GapDistribution,
    RetentionPolicy,
    lognormal_params,
    retention_policy,
)
from tokenomics.serving.agents import AGENT_STEP_TOKENS, agent_step

#: Mean agent session [s] (S60: 62.6 minutes).
SESSION_MEAN_S = 62.6 * 60
#: Requests per session (S60).
REQUESTS_PER_SESSION = 9.2
#: Steps (LLM or tool calls) per request (S60: "about 9").
STEPS_PER_REQUEST = 9.0
#: Share of a session's time: human, tools, LLM (S62).
TIME_SPLIT = (0.92, 0.048, 0.033)
#: Requests a call may sample, the sessions drawn and the population together (about 80 B of
#: state a request, about a second per million: 2M is 0.16 GB).
_MAX_REQUESTS = 2_000_000
_MAX_STAT = 1e6


@dataclass(frozen=True)
class SessionStats:
    """The statistics sessions are sampled from (module notes); defaults S60 and S62.

    Attributes
    ----------
    mean_duration_s : float
        [s], default 62.6 min.
    requests_per_session : float
        Mean, >= 1 (default 9.2).
    steps_per_request : float
        Mean, >= 1 (default 9).
    tool_share, llm_share : float
        Of the mean session's time (defaults 0.048, 0.033); the human's is the rest.
    gap_mean_to_median : float
        Of the lognormal gap, > 1 (default 15).
    gap_median_s : float, optional
        Fix the gap's median instead of its mean [s] (e.g. S62's 25 minutes); the mean
        duration then follows from it.
    """

    mean_duration_s: float = SESSION_MEAN_S
    requests_per_session: float = REQUESTS_PER_SESSION
    steps_per_request: float = STEPS_PER_REQUEST
    tool_share: float = TIME_SPLIT[1]
    llm_share: float = TIME_SPLIT[2]
    gap_mean_to_median: float = GAP_MEAN_TO_MEDIAN
    gap_median_s: float | None = None

    def __post_init__(self) -> None:
        for name, lo in (("mean_duration_s", 0.0), ("requests_per_session", 1.0),
                         ("steps_per_request", 1.0), ("gap_mean_to_median", 1.0)):
            unit = "s" if name == "mean_duration_s" else "count"
            v = V.single_amount(V.positive(getattr(self, name), f"SessionStats.{name}",
                                           unit), f"SessionStats.{name}", unit)
            if name != "mean_duration_s" and v > _MAX_STAT:
                raise TokenomicsError(f"SessionStats.{name} must be at most {_MAX_STAT:g}, "
                                      f"got {v:g}")
            if v < lo or (name == "gap_mean_to_median" and v == lo):
                raise TokenomicsError(f"SessionStats.{name} must be "
                                      f"{'>' if name == 'gap_mean_to_median' else '>='} "
                                      f"{lo:g}, got {v:g}")
            object.__setattr__(self, name, v)
        for name in ("tool_share", "llm_share"):
            object.__setattr__(self, name, float(V.fraction(
                getattr(self, name), f"SessionStats.{name}", upper_open=True).reshape(())))
        if self.tool_share + self.llm_share >= 1:
            raise TokenomicsError("SessionStats: tool_share + llm_share must leave the human "
                                  "some of the session (< 1)")
        if self.gap_median_s is not None:
            object.__setattr__(self, "gap_median_s", V.single_amount(V.positive(
                self.gap_median_s, "SessionStats.gap_median_s", "s"),
                "SessionStats.gap_median_s", "s"))

    @property
    def step_s(self) -> tuple[float, float]:
        """LLM and tool time of one step [s]."""
        n = self.requests_per_session * self.steps_per_request
        return (self.llm_share * self.mean_duration_s / n,
                self.tool_share * self.mean_duration_s / n)

    @property
    def gap_mu_sigma(self) -> tuple[float, float]:
        """Lognormal parameters of a human gap (:math:`\\ln` of seconds): the median given,
        or the one whose mean fills the human's share of the mean session."""
        if self.gap_median_s is not None:
            return lognormal_params(self.gap_median_s, self.gap_mean_to_median)
        gaps = self.requests_per_session - 1.0
        human = (1.0 - self.tool_share - self.llm_share) * self.mean_duration_s
        mean = human / gaps if gaps > 0 else 1.0
        return lognormal_params(mean / self.gap_mean_to_median, self.gap_mean_to_median)


def _sample(n: int, st: SessionStats, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """``n`` sessions as flat per-request arrays (module notes)."""
    R = rng.geometric(1.0 / st.requests_per_session, n)
    sess = np.repeat(np.arange(n), R)
    steps = 1 + rng.poisson(st.steps_per_request - 1.0, sess.size)
    llm, tool = st.step_s
    mu, sigma = st.gap_mu_sigma
    gap = np.exp(mu + sigma * rng.standard_normal(sess.size))
    last = np.r_[sess[1:] != sess[:-1], True] if sess.size else np.zeros(0, bool)  # last one
    gap[last] = np.inf                                 # no return after the last request
    return dict(session=sess, steps=steps, active_s=steps * (llm + tool), gap_s=gap,
                last=last, requests=R)


def _expected_duration(st: SessionStats) -> float:
    mu, sigma = st.gap_mu_sigma
    llm, tool = st.step_s
    return ((st.requests_per_session - 1) * math.exp(mu + sigma ** 2 / 2)
            + st.requests_per_session * st.steps_per_request * (llm + tool))


def _warm_up(horizon_s: float, mean_session_s: float) -> float:
    """How long before the window sessions start: the window, or 30 mean sessions, which
    ever is longer (the heavy-tailed sessions begun earlier are still under way)."""
    return max(horizon_s, 30.0 * mean_session_s)


def _gap_cost(g: np.ndarray, p: RetentionPolicy) -> np.ndarray:
    """USD of each gap under the policy (HBM and tier rent, reload or recompute)."""
    in_hbm = np.minimum(g, p.t1_s)
    in_tier = np.minimum(g, p.t2_s) - in_hbm
    back = np.isfinite(g)
    reload = back & (g > p.t1_s) & (g <= p.t2_s)
    recompute = back & (g > p.t2_s)
    return (p.hbm_usd_per_s * in_hbm + p.tier_usd_per_s * in_tier
            + np.where(reload, p.reload_usd, 0.0) + np.where(recompute, p.recompute_usd, 0.0))


def _per_session(s: dict[str, np.ndarray], n: int, step_usd: float,
                 p: RetentionPolicy) -> pd.DataFrame:
    """One row per sampled session: its time split and cost."""
    def total(x: np.ndarray) -> np.ndarray:
        return np.bincount(s["session"], weights=x, minlength=n)

    human = np.where(s["last"], 0.0, s["gap_s"])
    steps = total(s["steps"].astype(float))
    active = total(s["active_s"])
    gaps = total(human)
    usd = steps * step_usd + total(_gap_cost(s["gap_s"], p))
    return pd.DataFrame(dict(duration_s=active + gaps, requests=s["requests"],
                             steps=steps.astype(int), active_s=active, human_s=gaps, usd=usd))


def _intervals(s: dict[str, np.ndarray], start: np.ndarray,
               p: RetentionPolicy) -> tuple[np.ndarray, ...]:
    """Per request: when its work starts and ends, and its KV's HBM and tier holds."""
    cycle = s["active_s"] + np.where(s["last"], 0.0, s["gap_s"])
    first = np.r_[True, s["session"][1:] != s["session"][:-1]]
    offset = np.cumsum(cycle) - cycle                  # running sum, restarted per session
    offset -= np.maximum.accumulate(np.where(first, offset, 0.0))
    t0 = start[s["session"]] + offset
    t_end = t0 + s["active_s"]
    hbm_end = t_end + np.minimum(s["gap_s"], p.t1_s)
    tier_end = t_end + np.minimum(s["gap_s"], p.t2_s)
    return t0, t_end, hbm_end, tier_end


def _occupied(grid: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """How many of the intervals [start, end) cover each grid time."""
    return (np.searchsorted(np.sort(starts), grid, "right")
            - np.searchsorted(np.sort(ends), grid, "right")).astype(float)


@dataclass(frozen=True, repr=False)
class AgentSessions(ReadableRepr):
    """Sampled agent sessions, their KV per tier over time, and their cost (:func:`agent_sessions`).

    Attributes
    ----------
    sessions : pandas.DataFrame
        One row per sampled session: ``duration_s``, ``requests``, ``steps``, ``active_s``
        (LLM and tools), ``human_s`` (the gaps), ``usd``.
    time_s : ndarray
        The occupancy grid over the window [s].
    active_sessions, sessions_in_hbm, sessions_in_tier : ndarray
        Sessions at work, and sessions whose KV sits in HBM / in the tier, at each time.
    sessions_open : ndarray
        Sessions between their first request and the end of their last (:math:`N` on
        average, by Little's law).
    hbm_bytes, tier_bytes : ndarray
        KV held there over the replica [B].
    hbm_fraction, tier_fraction : ndarray
        The same over the replica's HBM and over the tier capacity its devices reach (the
        policy's); above 1 the population does not fit what the policy assumes.
    golden_time_s : float
        The policy's HBM residence :math:`t_1` over a gap [s].
    hbm_hit_rate : float
        Share of the population's returns that find their KV still in HBM; NaN when no
        session returns inside the window (a horizon shorter than every gap drawn).
    usd_per_session, usd_per_step : float
        Mean cost of a sampled session, and of its agent steps (the session's cost over its
        steps, gaps included) [USD].
    policy : RetentionPolicy
    """

    sessions: pd.DataFrame
    time_s: Any
    active_sessions: Any
    sessions_in_hbm: Any
    sessions_in_tier: Any
    sessions_open: Any
    hbm_bytes: Any
    tier_bytes: Any
    hbm_fraction: Any
    tier_fraction: Any
    golden_time_s: float
    hbm_hit_rate: float
    usd_per_session: float
    usd_per_step: float
    policy: RetentionPolicy

    def __repr__(self) -> str:
        return (f"AgentSessions({len(self.sessions)} sessions, mean "
                f"{self.sessions.duration_s.mean() / 60:.4g} min, "
                f"{self.sessions.requests.mean():.3g} requests; golden time "
                f"{self.golden_time_s / 60:.3g} min; ${self.usd_per_session:.4g} a session)")

    def to_frame(self) -> pd.DataFrame:
        """The occupancy over time: one row per grid time."""
        return pd.DataFrame(dict(time_s=self.time_s, active_sessions=self.active_sessions,
                                 sessions_in_hbm=self.sessions_in_hbm,
                                 sessions_in_tier=self.sessions_in_tier,
                                 sessions_open=self.sessions_open, hbm_bytes=self.hbm_bytes,
                                 tier_bytes=self.tier_bytes, hbm_fraction=self.hbm_fraction,
                                 tier_fraction=self.tier_fraction))

    def summary(self) -> pd.DataFrame:
        """Mean, standard error and spread (10th, 50th, 90th percentile) of the sampled
        sessions' duration, requests, steps and time split."""
        s = self.sessions
        cols = dict(duration_min=s.duration_s / 60, requests=s.requests, steps=s.steps,
                    human_share=s.human_s / s.duration_s.where(s.duration_s > 0))
        recs = [dict(statistic=k, mean=float(v.mean()),
                     standard_error=float(v.std(ddof=1) / math.sqrt(v.count())),
                     p10=float(v.quantile(0.1)), p50=float(v.quantile(0.5)),
                     p90=float(v.quantile(0.9))) for k, v in cols.items()]
        return pd.DataFrame(recs).set_index("statistic")


@inputs(dep="deployment")
def agent_sessions(dep: Deployment, sessions: int = 2000, *, concurrent: float = 10.0,
                   stats: SessionStats | None = None, policy: RetentionPolicy | None = None,
                   context_tokens: int = AGENT_STEP_TOKENS[0], horizon_s: float = 86_400.0,
                   seed: int = 0) -> AgentSessions:
    """Sample agent sessions and follow ``concurrent`` of them through a day (module notes).

    Parameters
    ----------
    dep : Deployment
        The replica the sessions' steps run on.
    sessions : int
        Sessions sampled for the statistics and the cost, >= 2.
    concurrent : float
        Mean sessions under way on the replica (:math:`N`), > 0.
    stats : SessionStats, optional
        Default the source's figures (S60, S62).
    policy : RetentionPolicy, optional
        Default :func:`tokenomics.retention_policy` for ``context_tokens`` with the
        sampled gaps' distribution (host DRAM tier, the stated miss price).
    context_tokens : int
        Tokens of KV a session holds [token] (S61: 119,000).
    horizon_s : float
        Window of the occupancy [s] (default a day), sampled every minute or finer.
    seed : int

    Returns
    -------
    AgentSessions

    Raises
    ------
    TokenomicsError
        For a bad argument, or when the sampled sessions and the population over the window
        would hold more than 2,000,000 requests (each request's state is held in memory;
        about 80 B a request).

    Examples
    --------
    >>> import tokenomics as tk
    >>> a = agent_sessions(tk.Deployment("llama-3.1-70b", "h100-sxm", tp=8), 500,
    ...                    concurrent=20, horizon_s=3600)
    >>> bool(a.sessions.requests.min() >= 1), bool(a.golden_time_s >= 0)
    (True, True)
    """
    st = stats if stats is not None else SessionStats()
    if not isinstance(st, SessionStats):
        raise TokenomicsError(f"stats must be a tk.SessionStats, got {stats!r}")
    n = V.single_whole(sessions, "sessions", minimum=2)
    N = V.single_amount(V.positive(concurrent, "concurrent", "count"), "concurrent", "count")
    C = V.single_whole(context_tokens, "context_tokens", unit="token")
    H = V.single_amount(V.positive(horizon_s, "horizon_s", "s"), "horizon_s", "s")
    D = _expected_duration(st)
    population = N * (_warm_up(H, D) + H) / D
    if (n + population) * st.requests_per_session > _MAX_REQUESTS:
        raise TokenomicsError(f"sessions, concurrent, horizon_s and requests_per_session ask "
                              f"for more than {_MAX_REQUESTS:,} requests (the sampled sessions "
                              f"and the population together, each request's state held in "
                              f"memory); sample fewer sessions or a shorter horizon")
    seed = V.seed(seed)
    p = policy if policy is not None else retention_policy(
        dep, C, gap=GapDistribution(*st.gap_mu_sigma))
    if not isinstance(p, RetentionPolicy):
        raise TokenomicsError(f"policy must be a tk.RetentionPolicy, got {policy!r}")
    rng = np.random.default_rng(int(seed))
    step_usd = agent_step(dep, C).usd
    table = _per_session(_sample(n, st, rng), n, step_usd, p)
    return _population(table, st, p, (N, H, rng), step_usd)


def _population(table: pd.DataFrame, st: SessionStats, p: RetentionPolicy,
                run: tuple[float, float, np.random.Generator], step_usd: float) -> AgentSessions:
    """Poisson session starts over a warm-up and the window; occupancy on a grid."""
    N, H, rng = run
    D = _expected_duration(st)
    lam = N / D
    warm = _warm_up(H, D)
    k = int(rng.poisson(lam * (warm + H)))
    start = -warm + (warm + H) * rng.random(k)
    s = _sample(k, st, rng)
    t0, t_end, hbm_end, tier_end = _intervals(s, start, p)
    grid = np.linspace(0.0, H, int(min(max(H / 60.0, 60), 100_000)) + 1)
    work = _occupied(grid, t0, t_end)
    in_hbm = _occupied(grid, t_end, hbm_end)
    in_tier = _occupied(grid, hbm_end, tier_end)
    last_end = np.full(k, -np.inf)
    np.maximum.at(last_end, s["session"], t_end)
    is_open = _occupied(grid, start[np.isfinite(last_end)], last_end[np.isfinite(last_end)])
    back = ~s["last"] & (t_end + s["gap_s"] >= 0) & (t_end + s["gap_s"] <= H)
    hit = float(np.mean(s["gap_s"][back] <= p.t1_s)) if back.any() else math.nan
    return AgentSessions(
        sessions=table, time_s=grid, active_sessions=work, sessions_in_hbm=work + in_hbm,
        sessions_in_tier=in_tier, sessions_open=is_open, hbm_bytes=(work + in_hbm) * p.kv_bytes,
        tier_bytes=in_tier * p.tier_kv_bytes,
        hbm_fraction=(work + in_hbm) * p.kv_bytes / p.hbm_capacity_bytes,
        tier_fraction=in_tier * p.tier_kv_bytes / p.tier_capacity_bytes,
        golden_time_s=float(p.t1_s), hbm_hit_rate=hit,
        usd_per_session=float(table.usd.mean()),
        usd_per_step=float(table.usd.sum() / table.steps.sum()), policy=p)
