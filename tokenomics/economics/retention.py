"""How long to keep an idle session's KV in HBM: its rent against the price of a miss.

An agent session spends most of its time waiting for its human (S62: median gap between
requests 25 minutes, ~40 GB of KV held over it). Holding the KV in HBM rents memory the replica
could sell to other requests; moving it to a cheaper tier (:mod:`tokenomics.serving.tiers`)
costs a reload when the user returns, and dropping it costs a recompute. This module prices the
keep / offload / drop policy over a heavy-tailed gap distribution (S62).

Notes
-----
**Retention policy.** Keep the KV in HBM for :math:`t_1`, then in a cheaper tier until
:math:`t_2`, then drop it. With the gap :math:`G` between requests distributed as :math:`F`,
KV bytes :math:`K` and holding costs :math:`c_H = h_H K`, :math:`c_T = h_T K` [USD/s], the
expected cost of one gap is

.. math::
   C(t_1, t_2) = c_H\\,E[\\min(G,t_1)] + c_T\\,(E[\\min(G,t_2)] - E[\\min(G,t_1)])
   + (F(t_2) - F(t_1))\\,R_r + (1 - F(t_2))\\,R_c,

with :math:`R_r`, :math:`R_c` the USD cost of a reload and of a recompute (their time times the
replica's device-hour price, plus optional penalties). :math:`C` separates into a function of
:math:`t_1` and one of :math:`t_2`; their first-order conditions put the hazard of the gap,
:math:`\\lambda = f/(1-F)`, at

.. math::
   \\lambda(t_1) = \\frac{c_H - c_T}{R_r}, \\qquad \\lambda(t_2) = \\frac{c_T}{R_c - R_r},

on the decreasing side of the hazard (a heavy-tailed gap has a hazard that peaks early and then
falls: a user who has not come back soon is ever less likely to come back in the next minute).
:math:`E[\\min(G,t)]` of a lognormal is closed-form (:meth:`GapDistribution.expected_min`).

**S62, reconciled.** The source keeps the KV in HBM for a 5-10 minute "golden time". GPU-time
accounting alone does not give that: reloading from host DRAM costs
:math:`C_\\mathrm{HBM}/\\beta` = 80 GB / 64 GB/s = 1.25 s of HBM rent, so HBM residence pays
only for returns within seconds, and the optimum offloads at once (:math:`t_1 = 0`, drop after
about 3 h). A 5-10 minute golden time needs a return that misses HBM to cost as much as 28-41
minutes of the KV's HBM rent: about $0.85-1.26 per miss for 39 GB on H100s at $3.78/h, a price
of the user's experience of a resume that is not instant. The library states that price as a
default (``price_catalog/kv_tiers.toml``, ``[retention] miss_price``: $8.40 per million tokens
of context, $1.00 for the source's 119K-token prefix, giving 7.5 minutes on 8 x H100 with
the HBM the driver exposes, 6.7 with the source's 80 GB) and labels it an
assumption; ``miss_usd=0`` gives the GPU-time-only answer.

The prices the policy weighs travel together as :class:`RetentionPrices`; the 0.1 keyword form
(``retention_policy(dep, 119_000, miss_usd=0)``) still works and builds one.

References
----------
.. [1] AI Frontier Korea, "EP 112. What Happens Inside an AI Chip: From KV Cache to Roofline",
   2026, sections 8.2-8.4 (seed digest S60-S63).
.. [2] J. Aitchison, J. A. C. Brown, "The Lognormal Distribution", Cambridge University Press,
   1957 (moments and partial expectations of the lognormal).
.. [3] J. D. C. Little, "A proof for the queuing formula L = lambda W", Operations Research
   9(3), 1961.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import special

from tokenomics.core import checks as V
from tokenomics.core.errors import TokenomicsError
from tokenomics.core.units import Result, as_magnitude, to_array
from tokenomics.data.boundary import inputs
from tokenomics.data.deployment import Deployment
from tokenomics.data.specs import Hardware
from tokenomics.physics.kv import group_kv_bytes, kv_bytes_per_token
from tokenomics.physics.memory import kv_per_sequence_bytes
from tokenomics.physics.step import prefill
from tokenomics.serving.tiers import (
    Tier,
    check_tier_capacity,
    offload_tier,
    read_kv_tiers_file,
    rental_usd_per_hour,
)

#: Median gap between two requests of an agent session [s] (S62: "중앙값은 25분").
GAP_MEDIAN_S = 25 * 60.0
#: Mean over median of the heavy-tailed agent workload (S60: "최대 15배"), used for the gap.
GAP_MEAN_TO_MEDIAN = 15.0


# --------------------------------------------------------------------------------------------
# Stated defaults
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RetentionDefaults:
    """Stated prices :func:`retention_policy` uses when the caller gives none.

    Attributes
    ----------
    miss_usd_per_token : float
        Price of a return that does not find its KV in HBM, per token of the session's context
        [USD/token] (bundled: $8.40 per million tokens, $1.00 for the source's 119K-token
        prefix). A stated assumption, not a measurement: see ``price_catalog/kv_tiers.toml``.
    source : str
        Bibliography key of the figure.
    note : str
        Its reasoning, as the data file gives it.
    """

    miss_usd_per_token: float
    source: str
    note: str


def load_retention_defaults(folder: Path | str | None = None) -> RetentionDefaults:
    """Read the ``[retention]`` table of ``kv_tiers.toml`` (the file is validated whole).

    Parameters
    ----------
    folder : Path or str, optional
        Default the bundled ``price_catalog``.

    Returns
    -------
    RetentionDefaults

    Raises
    ------
    CatalogError
        Naming the file and the field (see :func:`~tokenomics.serving.tiers.load_kv_tiers`).

    Examples
    --------
    >>> d = load_retention_defaults()
    >>> round(d.miss_usd_per_token * 1e6, 2), round(d.miss_usd_per_token * 119_000, 2)
    (8.4, 1.0)
    """
    miss, source, note = read_kv_tiers_file(folder)[1]
    return RetentionDefaults(miss_usd_per_token=miss, source=source, note=note)


@lru_cache(maxsize=1)
def _bundled_retention() -> RetentionDefaults:
    return load_retention_defaults()


# --------------------------------------------------------------------------------------------
# Gap distribution
# --------------------------------------------------------------------------------------------
def lognormal_params(median_s: float = GAP_MEDIAN_S,
                     mean_to_median: float = GAP_MEAN_TO_MEDIAN) -> tuple[float, float]:
    """Lognormal :math:`(\\mu, \\sigma)` with a given median and mean-to-median ratio.

    Parameters
    ----------
    median_s : float
        Median [s], > 0. Default 25 minutes (S62).
    mean_to_median : float
        Mean over median, > 1. Default 15 (S60: "the mean can be up to 15x the median").

    Returns
    -------
    (float, float)
        :math:`\\mu = \\ln m`, :math:`\\sigma = \\sqrt{2 \\ln(\\bar g / m)}`.

    Notes
    -----
    A lognormal has median :math:`e^\\mu` and mean :math:`e^{\\mu + \\sigma^2/2}`, so the ratio
    is :math:`e^{\\sigma^2/2}`.

    References
    ----------
    .. [1] J. Aitchison, J. A. C. Brown, "The Lognormal Distribution", 1957.

    Examples
    --------
    >>> mu, sigma = lognormal_params()
    >>> round(math.exp(mu) / 60, 6), round(sigma, 4)      # 25 min, sqrt(2 ln 15)
    (25.0, 2.3273)
    """
    m_arr = V.positive(median_s, "median_s", "s")
    r_arr = to_array(as_magnitude(mean_to_median, "count", "mean_to_median"), "mean_to_median")
    if m_arr.size != 1 or r_arr.size != 1:
        raise TokenomicsError("median_s and mean_to_median must be single numbers, got "
                              f"{median_s!r} and {mean_to_median!r}")
    m, r = float(m_arr.reshape(())), float(r_arr.reshape(()))
    if not (math.isfinite(r) and r > 1.0):
        raise TokenomicsError(f"mean_to_median must be > 1 (a right-skewed gap; 1 would be a "
                              f"point mass), got {V.fmt(r)}")
    if not math.isfinite(m * r) or m * r > 1e15:
        # a mean gap beyond 30 million years has no physical reading, and exp() of its log
        # overflows in the distribution's moments
        raise TokenomicsError(f"median_s x mean_to_median is the mean gap, at most 1e15 s; "
                              f"got {V.fmt(m)} x {V.fmt(r)}")
    return math.log(m), math.sqrt(2.0 * math.log(r))


def _times(t: Any, name: str = "t_s") -> np.ndarray:
    arr = to_array(as_magnitude(t, "s", name), name)
    bad = np.isnan(arr) | (arr < 0)
    if bad.any():
        raise TokenomicsError(f"{name} must be >= 0 seconds (inf allowed), got "
                              f"{V.fmt(arr[bad].flat[0])}")
    return arr


@dataclass(frozen=True)
class GapDistribution:
    """Lognormal distribution of the idle gap between two requests of a session.

    Attributes
    ----------
    mu, sigma : float
        Parameters of :math:`\\ln G` (:math:`G` in seconds).

    Examples
    --------
    >>> g = GapDistribution.from_median_mean()
    >>> round(g.median_s / 60, 6), round(g.mean_s / 60, 6)
    (25.0, 375.0)
    >>> round(float(g.cdf(600)), 3)            # back within 10 minutes
    0.347
    """

    mu: float
    sigma: float

    def __post_init__(self) -> None:
        for name in ("mu", "sigma"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
                raise TokenomicsError(f"GapDistribution.{name} must be a number (log-seconds), "
                                      f"got {v!r}")
        if not (math.isfinite(self.mu) and math.isfinite(self.sigma) and self.sigma > 0):
            raise TokenomicsError(f"GapDistribution needs a finite mu and sigma > 0, got "
                                  f"mu={self.mu!r}, sigma={self.sigma!r}")

    @classmethod
    def from_median_mean(cls, median_s: float = GAP_MEDIAN_S,
                         mean_to_median: float = GAP_MEAN_TO_MEDIAN) -> GapDistribution:
        """Fit to a median [s] and a mean-to-median ratio (:func:`lognormal_params`)."""
        return cls(*lognormal_params(median_s, mean_to_median))

    @property
    def median_s(self) -> float:
        """:math:`e^\\mu` [s]."""
        return math.exp(self.mu)

    @property
    def mean_s(self) -> float:
        """:math:`e^{\\mu + \\sigma^2/2}` [s]."""
        return math.exp(self.mu + self.sigma ** 2 / 2)

    def _z(self, t: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return (np.log(t) - self.mu) / self.sigma

    def cdf(self, t_s: Any) -> Any:
        """:math:`P(G \\le t)`, vectorized [probability]."""
        return V.scalar_or_array(special.ndtr(self._z(_times(t_s))))

    def sf(self, t_s: Any) -> Any:
        """:math:`P(G > t)` [probability]."""
        return V.scalar_or_array(special.ndtr(-self._z(_times(t_s))))

    def hazard(self, t_s: Any) -> Any:
        """Return rate of a user still away at ``t``, :math:`f(t)/(1-F(t))` [1/s].

        Computed in logs (:math:`\\log \\phi(z) - \\log \\sigma t - \\log \\Phi(-z)`) so the far
        tail does not divide zero by zero; 0 at ``t = 0`` and ``t = inf``.
        """
        t = _times(t_s)
        z = self._z(t)
        with np.errstate(divide="ignore", invalid="ignore"):
            log_h = (-0.5 * z ** 2 - 0.5 * math.log(2 * math.pi) - np.log(self.sigma * t)
                     - special.log_ndtr(-z))
            h = np.where((t > 0) & np.isfinite(t), np.exp(log_h), 0.0)
        return V.scalar_or_array(h)

    def expected_min(self, t_s: Any) -> Any:
        """:math:`E[\\min(G, t)]`, the expected time a KV held until ``t`` is held [s].

        .. math::
           E[\\min(G,t)] = e^{\\mu+\\sigma^2/2}\\,\\Phi\\!\\left(\\frac{\\ln t-\\mu-\\sigma^2}
           {\\sigma}\\right) + t\\left(1 - \\Phi\\!\\left(\\frac{\\ln t - \\mu}{\\sigma}\\right)\\right)

        (the partial expectation :math:`E[G; G \\le t]` plus :math:`t\\,P(G > t)`); 0 at
        ``t = 0``, the mean at ``t = inf``.

        Examples
        --------
        >>> g = GapDistribution.from_median_mean()
        >>> round(float(g.expected_min(600)), 1)     # a 10-minute hold lasts 7.8 min on average
        465.1
        """
        t = _times(t_s)
        z = self._z(t)
        with np.errstate(invalid="ignore"):
            tail = np.where(np.isfinite(t), t * special.ndtr(-z), 0.0)
        out = self.mean_s * special.ndtr(z - self.sigma) + np.where(t > 0, tail, 0.0)
        return V.scalar_or_array(np.asarray(out, float))


# --------------------------------------------------------------------------------------------
# The prices a retention policy weighs
# --------------------------------------------------------------------------------------------
#: Field of :class:`RetentionPrices` -> its unit, as the error messages name it.
_PRICE_UNITS = {
    "hbm_usd_per_byte_s": "USD/B/s", "tier_usd_per_byte_s": "USD/B/s",
    "usd_per_device_hour": "USD/hour", "wait_usd_per_s": "USD/s", "miss_usd": "USD",
    "reload_usd": "USD", "recompute_usd": "USD",
}


@dataclass(frozen=True)
class RetentionPrices:
    """The prices :func:`retention_policy` weighs; a field left ``None`` takes its default.

    Attributes
    ----------
    hbm_usd_per_byte_s : float, optional
        HBM holding cost [USD/B/s]; default the device-hour price over the HBM capacity
        (:func:`tokenomics.serving.tiers.hbm_usd_per_byte_s`).
    tier_usd_per_byte_s : float, optional
        Offload tier's holding cost [USD/B/s]; default the tier's sourced figure.
    usd_per_device_hour : float, optional
        Price of one device-hour [USD/hour]; default the catalog's latest rental price
        (H100 SXM: $3.78, Lambda, 2026-05). Prices the GPU time of reloads and recomputes and,
        unless ``hbm_usd_per_byte_s`` is given, the HBM.
    wait_usd_per_s : float
        Penalty per second the returning user waits for a reload or recompute [USD/s]
        (default 0).
    miss_usd : float, optional
        Penalty per return that does not find the KV in HBM [USD]. Default: the stated price
        of ``price_catalog/kv_tiers.toml`` (``[retention] miss_price``, $8.40 per million
        tokens of context; :func:`load_retention_defaults`) times the session's context
        tokens. ``0`` is GPU-time-only accounting.
    reload_usd, recompute_usd : float, optional
        Replace the computed cost of one reload / recompute, penalties included [USD].

    Raises
    ------
    TokenomicsError
        For a negative, non-finite or non-scalar price, naming the field and its unit.

    Notes
    -----
    Each given price is stored as a float in the unit above (a pint quantity is converted),
    so two objects built from equal prices compare equal.

    Examples
    --------
    >>> RetentionPrices(miss_usd=0).miss_usd, RetentionPrices().wait_usd_per_s
    (0.0, 0.0)
    """

    hbm_usd_per_byte_s: Any = None
    tier_usd_per_byte_s: Any = None
    usd_per_device_hour: Any = None
    wait_usd_per_s: Any = 0.0
    miss_usd: Any = None
    reload_usd: Any = None
    recompute_usd: Any = None

    def __post_init__(self) -> None:
        for name, unit in _PRICE_UNITS.items():
            v = getattr(self, name)
            if v is not None or name == "wait_usd_per_s":
                object.__setattr__(self, name, V.single_amount(v, name, unit))


def _prices(prices: RetentionPrices | None, keywords: dict[str, Any]) -> RetentionPrices:
    """``prices`` with the price keywords of the 0.1 call form applied on top."""
    unknown = sorted(set(keywords) - set(_PRICE_UNITS))
    if unknown:
        raise TokenomicsError(
            f"retention_policy() got an unexpected keyword {unknown[0]!r}; it takes dep, "
            "context_tokens, kv_bytes, tier, gap, prices (a RetentionPrices) and the price "
            f"keywords {', '.join(_PRICE_UNITS)}")
    if prices is None:
        return RetentionPrices(**keywords)
    if not isinstance(prices, RetentionPrices):
        raise TokenomicsError(f"prices must be a RetentionPrices, got {type(prices).__name__}")
    return dataclasses.replace(prices, **keywords) if keywords else prices


# --------------------------------------------------------------------------------------------
# Retention policy (S62)
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RetentionPolicy:
    """The cheapest keep-in-HBM / offload / drop policy for one idle gap.

    Attributes
    ----------
    t1_s : float
        HBM residence before offloading [s] (0: offload at once; ``inf``: never leave HBM).
    t2_s : float
        Time the KV is dropped [s], >= ``t1_s`` (``t2 == t1``: dropped without offloading;
        ``inf``: never dropped).
    expected_cost_usd : float
        Expected cost of one gap under the policy [USD].
    keep_cost_usd, offload_now_cost_usd, drop_now_cost_usd : float
        The same for "keep in HBM until the user returns", "offload at once and keep in the
        tier" and "drop at once" [USD].
    p_hbm_hit, p_reload, p_recompute : float
        Probabilities that the returning user finds the KV in HBM, in the tier, or gone.
    tier : str
    kv_bytes : float
        KV held in HBM, all devices [B].
    hbm_usd_per_s, tier_usd_per_s : float
        Holding cost of the whole KV [USD/s].
    reload_s, recompute_s : float
        [s]
    reload_usd, recompute_usd : float
        Cost of one reload or recompute, penalties included [USD].
    miss_usd : float
        The per-miss penalty included in both [USD].
    hbm_hazard_threshold_per_s, drop_hazard_threshold_per_s : float
        :math:`(c_H - c_T)/R_r` and :math:`c_T/(R_c - R_r)` [1/s]: the return rates at which
        moving on pays (``inf`` when it never does).
    t_grid_s, cost_curve_usd : ndarray
        Candidate ``t1`` [s] and the expected cost with the best ``t2`` for each [USD].
    gap : GapDistribution
    """

    t1_s: float
    t2_s: float
    expected_cost_usd: float
    keep_cost_usd: float
    offload_now_cost_usd: float
    drop_now_cost_usd: float
    p_hbm_hit: float
    p_reload: float
    p_recompute: float
    tier: str
    kv_bytes: float
    hbm_usd_per_s: float
    tier_usd_per_s: float
    reload_s: float
    recompute_s: float
    reload_usd: float
    recompute_usd: float
    miss_usd: float
    hbm_hazard_threshold_per_s: float
    drop_hazard_threshold_per_s: float
    t_grid_s: np.ndarray = field(repr=False)
    cost_curve_usd: np.ndarray = field(repr=False)
    gap: GapDistribution = field(repr=False, default_factory=GapDistribution.from_median_mean)
    tier_kv_bytes: float = math.nan
    hbm_capacity_bytes: float = math.nan
    tier_capacity_bytes: float = math.nan

    def occupancy(self, idle_gaps_per_s: Any) -> RetentionOccupancy:
        """Mean KV a stream of idle gaps keeps in HBM and in the tier under this policy.

        Parameters
        ----------
        idle_gaps_per_s : float or array_like
            Rate at which sessions on the replica go idle [1/s], >= 0: sessions over the
            mean length of one request cycle (gap plus active time); e.g. 100 sessions with
            a 375-minute mean gap and little active time, ~100 / 22,500 s.

        Returns
        -------
        RetentionOccupancy

        Notes
        -----
        Little's law, :math:`L = \\lambda W`: a gap holds the KV in HBM for
        :math:`\\min(G, t_1)` and in the tier for :math:`\\min(G, t_2) - \\min(G, t_1)`, so on
        average :math:`\\lambda E[\\min(G, t_1)]` sessions sit in HBM and
        :math:`\\lambda (E[\\min(G, t_2)] - E[\\min(G, t_1)])` in the tier. Fractions are of
        the replica's physical HBM (devices x capacity; weights included, so the room for idle
        KV is less) and of the tier capacity its GPUs reach.

        References
        ----------
        .. [1] J. D. C. Little, "A proof for the queuing formula L = lambda W", Operations
           Research 9(3), 1961.

        Examples
        --------
        >>> import tokenomics as tk
        >>> p = retention_policy(tk.Deployment("llama-3.1-70b", "h100-sxm", tp=8), 119_000)
        >>> o = p.occupancy(100 / 22_500)           # ~100 sessions on the replica
        >>> round(o.sessions_in_hbm, 2), round(o.sessions_in_tier, 1)   # in HBM, in DRAM
        (1.63, 12.5)
        >>> round(o.tier_fraction, 2)             # of the 8 GPUs' 2 TB of host DRAM
        0.24
        """
        lam = V.non_negative(idle_gaps_per_s, "idle_gaps_per_s", "1/s")
        e1 = float(self.gap.expected_min(self.t1_s))
        e2 = float(self.gap.expected_min(self.t2_s))
        in_hbm, in_tier = lam * e1, lam * (e2 - e1)
        S = V.scalar_or_array
        return RetentionOccupancy(
            sessions_in_hbm=S(in_hbm), sessions_in_tier=S(in_tier),
            hbm_bytes=S(in_hbm * self.kv_bytes), tier_bytes=S(in_tier * self.tier_kv_bytes),
            hbm_fraction=S(in_hbm * self.kv_bytes / self.hbm_capacity_bytes),
            tier_fraction=S(in_tier * self.tier_kv_bytes / self.tier_capacity_bytes))

    def miss_usd_for_hbm_residence(self, t_s: Any) -> Any:
        """Per-miss penalty that makes ``t_s`` the optimal HBM residence [USD].

        From the first-order condition :math:`\\lambda(t_1) = (c_H - c_T)/(R_r^0 + m)` with
        :math:`R_r^0` the reload cost without penalty: :math:`m = (c_H - c_T)/\\lambda(t) -
        R_r^0`. Meaningful where the hazard falls with ``t`` (beyond its early peak).

        Examples
        --------
        >>> import tokenomics as tk
        >>> p = retention_policy(tk.Deployment("llama-3.1-70b", "h100-sxm", tp=8), 119_000)
        >>> [round(float(m), 2) for m in p.miss_usd_for_hbm_residence([300, 600])]
        [0.8, 1.18]
        """
        lam = _times(t_s)
        h = np.asarray(self.gap.hazard(lam), float)
        base = self.reload_usd - self.miss_usd
        with np.errstate(divide="ignore"):
            m = np.where(h > 0, (self.hbm_usd_per_s - self.tier_usd_per_s) / h - base, np.inf)
        return V.scalar_or_array(m)

    def to_frame(self) -> pd.DataFrame:
        """Cost curve: ``t1_s``, ``t1_min``, ``expected_cost_usd`` (best ``t2`` per ``t1``)."""
        return pd.DataFrame({"t1_s": self.t_grid_s, "t1_min": self.t_grid_s / 60.0,
                             "expected_cost_usd": self.cost_curve_usd})


@dataclass(frozen=True, repr=False)
class RetentionOccupancy(Result):
    """Mean KV held by idle sessions under a retention policy (Little's law).

    Attributes
    ----------
    sessions_in_hbm, sessions_in_tier : float or ndarray
        Mean number of idle sessions whose KV sits in HBM / in the tier [sessions].
    hbm_bytes, tier_bytes : float or ndarray
        Mean bytes held there, over the replica [B].
    hbm_fraction, tier_fraction : float or ndarray
        Of the replica's physical HBM and of the tier capacity its GPUs reach; above 1 the
        policy does not fit the memory it assumes.
    """

    sessions_in_hbm: Any
    sessions_in_tier: Any
    hbm_bytes: Any
    tier_bytes: Any
    hbm_fraction: Any
    tier_fraction: Any


def _refine(f: Any, grid: np.ndarray, i: int, lo: float = 0.0,
            hi: float = math.inf) -> tuple[float, float]:
    """Grid point ``i`` of ``f`` refined by bounded Brent search between its neighbours,
    within ``[lo, hi]``; ``(t, f(t))``."""
    from scipy import optimize

    t, v = float(grid[i]), float(f(np.asarray(grid[i])))
    if 0 < i < len(grid) - 1 and np.isfinite(grid[i + 1]):
        a, b = max(float(grid[i - 1]), lo), min(float(grid[i + 1]), hi)
        if b > a:
            r = optimize.minimize_scalar(lambda x: float(f(np.asarray(x))), method="bounded",
                                         bounds=(a, b), options={"xatol": 1e-3})
            if r.success and float(r.fun) < v:
                t, v = float(r.x), float(r.fun)
    return t, v


def _session_kv(dep: Deployment, context_tokens: Any, kv_bytes: Any) -> tuple[float, float]:
    """The session's context [token] and the KV it holds in HBM over all devices [B]."""
    if context_tokens is None and kv_bytes is None:
        raise TokenomicsError("give context_tokens (tokens in the session's KV) or kv_bytes")
    n = dep.n_devices
    if kv_bytes is not None:
        k_arr = V.positive(kv_bytes, "kv_bytes", "B")
        if k_arr.size != 1:
            raise TokenomicsError(f"kv_bytes must be a single number [B], got {kv_bytes!r}")
        K = float(k_arr.reshape(()))
    if context_tokens is not None:
        C = float(V.single_whole(context_tokens, "context_tokens", unit="token"))
        V.context_within(dep.model, np.asarray(C), dep.allow_beyond_max_context)
        if kv_bytes is None:
            K = float(kv_per_sequence_bytes(dep, C)) * n
    else:
        C = float(max(1, round(K / dep.kv_replication
                               / kv_bytes_per_token(dep.model, dep.kv_dtype))))
    return C, K


def _one_copy(dep: Deployment, C: float, K: float) -> float:
    """One copy of the session's KV [B] (what a tier holds): the HBM bytes over the KV
    replication, or, for a model whose layer shapes replicate differently (Gemma 4's full
    layers, :meth:`~tokenomics.Deployment.kv_replication_of`), each shape's own bytes."""
    if dep.model.global_attention is None:
        return K / dep.kv_replication
    return float(group_kv_bytes(dep.model, C, dep.kv_dtype))


def _holding_prices(hw: Hardware, t: Tier, pr: RetentionPrices) -> tuple[float, float, float]:
    """Device-hour price [USD/hour] and the HBM and tier holding costs [USD/B/s]."""
    p_hour = (rental_usd_per_hour(hw) if pr.usd_per_device_hour is None
              else pr.usd_per_device_hour)
    h_H = (p_hour / 3600.0 / hw.mem_usable_bytes if pr.hbm_usd_per_byte_s is None
           else pr.hbm_usd_per_byte_s)
    h_T = t.holding_usd_per_byte_s() if pr.tier_usd_per_byte_s is None else pr.tier_usd_per_byte_s
    return p_hour, h_H, h_T


def _miss_events(dep: Deployment, t: Tier, C: float, K: float, p_hour: float,
                 pr: RetentionPrices) -> tuple[float, float, float, float, float]:
    """Reload and recompute of the session: ``(t_r [s], t_c [s], R_r [USD], R_c [USD], m [USD])``,
    :math:`R = t\\,(n p + w) + m` unless given."""
    n = dep.n_devices
    w = pr.wait_usd_per_s
    m = C * _bundled_retention().miss_usd_per_token if pr.miss_usd is None else pr.miss_usd
    check_tier_capacity(t, K / n)
    t_r = t.latency_s + K / n / t.read_bytes_per_s
    t_c = float(prefill(dep, C).time_s)
    gpu_usd_per_s = n * p_hour / 3600.0
    R_r = t_r * (gpu_usd_per_s + w) + m if pr.reload_usd is None else pr.reload_usd
    R_c = t_c * (gpu_usd_per_s + w) + m if pr.recompute_usd is None else pr.recompute_usd
    return t_r, t_c, R_r, R_c, m


def _cheapest_t1_t2(g: GapDistribution, c_H: float, c_T: float, R_r: float, R_c: float
                    ) -> tuple[float, float, float, np.ndarray, np.ndarray]:
    """Minimise :math:`C = A(t_1) + B(t_2)` over :math:`t_1 \\le t_2`:
    ``(t1 [s], t2 [s], cost [USD], grid [s], cost with the best t2 per grid t1 [USD])``."""

    def A(x: Any) -> np.ndarray:
        return np.asarray((c_H - c_T) * g.expected_min(x) - R_r * g.cdf(x), float)

    def Bf(x: Any) -> np.ndarray:
        return np.asarray(c_T * g.expected_min(x) + (R_r - R_c) * g.cdf(x) + R_c, float)

    grid = np.concatenate([[0.0], np.geomspace(1.0, 365 * 86400.0, 560), [np.inf]])
    Ag, Bg = A(grid), Bf(grid)
    best_b = np.minimum.accumulate(Bg[::-1])[::-1]       # min over t2 >= t1, per t1
    curve = Ag + best_b
    i = int(np.argmin(curve))
    j = i + int(np.argmin(Bg[i:]))
    if j > i:     # offload at t1, drop at t2
        t2, b2 = _refine(Bf, grid, j, lo=float(grid[i]))
        t1, a1 = _refine(A, grid, i, hi=t2)
        cost = a1 + b2
    else:         # offloading does not pay: hold in HBM, then drop
        t1, cost = _refine(lambda x: A(x) + Bf(x), grid, i)
        t2 = t1
    return t1, t2, cost, grid, curve


@inputs(dep="deployment")
def retention_policy(dep: Deployment, context_tokens: Any = None, *, kv_bytes: Any = None,
                     tier: str | Tier = "dram", gap: GapDistribution | None = None,
                     prices: RetentionPrices | None = None,
                     **price_keywords: Any) -> RetentionPolicy:
    """Cheapest policy for a session's KV over an idle gap: keep in HBM until ``t1``, then in
    a cheaper tier until ``t2``, then drop.

    Parameters
    ----------
    dep : Deployment
        The replica the session runs on (its devices' price, bandwidths and prefill).
    context_tokens : int, optional
        Tokens in the session's KV [token]. Required unless ``kv_bytes`` is given (then it is
        ``kv_bytes`` over the model's KV bytes per token, for the recompute time).
    kv_bytes : float, optional
        KV held in HBM over all devices [B]; default from ``context_tokens`` (replicated heads
        included, as they occupy HBM). The tier holds one copy, ``kv_bytes / kv_replication``.
    tier : str or Tier
        Offload tier (default ``"dram"``).
    gap : GapDistribution, optional
        Default lognormal with median 25 minutes and mean 15 x the median (S60, S62).
    prices : RetentionPrices, optional
        Holding costs, device-hour price, penalties and cost overrides; default
        ``RetentionPrices()`` (every documented default).
    **price_keywords
        The 0.1 call form: any field of :class:`RetentionPrices` as a keyword
        (``hbm_usd_per_byte_s``, ``tier_usd_per_byte_s``, ``usd_per_device_hour``,
        ``wait_usd_per_s``, ``miss_usd``, ``reload_usd``, ``recompute_usd``), applied on top of
        ``prices``. ``miss_usd=0`` gives GPU-time-only accounting.

    Returns
    -------
    RetentionPolicy

    Raises
    ------
    TokenomicsError
        For neither ``context_tokens`` nor ``kv_bytes``, a bad price, or a keyword that is not
        one of the parameters or price fields (the message lists them).
    NotPublishedError
        For a tier without a sourced holding cost and no ``tier_usd_per_byte_s``.
    DoesNotFitError
        When the KV per device exceeds what the tier gives one GPU.

    Notes
    -----
    Minimises :math:`C(t_1, t_2)` of the module notes. With
    :math:`A(t) = (c_H - c_T) E[\\min(G,t)] - R_r F(t)` and
    :math:`B(t) = c_T E[\\min(G,t)] + (R_r - R_c) F(t) + R_c`, :math:`C = A(t_1) + B(t_2)`:
    :math:`A(t_1) + \\min_{t_2 \\ge t_1} B(t_2)` is minimised on a grid (0, 560 points from
    1 s to 365 days, and inf) and refined by bounded Brent search between grid neighbours; when
    the best :math:`t_2` is :math:`t_1` itself the policy is "drop without offloading" and
    :math:`A + B` is refined along :math:`t_1 = t_2`.

    :math:`R_r = t_r (n p + w) + m` and :math:`R_c = t_c (n p + w) + m` with :math:`t_r`,
    :math:`t_c` from :func:`~tokenomics.serving.tiers.reload_or_recompute` (cold prefill of
    the whole context), :math:`n` devices at :math:`p` USD/s, wait penalty :math:`w` and miss penalty :math:`m`.
    Writing the KV out at :math:`t_1` is an asynchronous DMA and is not charged.

    **The source's 5-10 minute golden time (S62), and the price it needs.** GPU time alone
    (``miss_usd=0``: H100 at $3.78/h, so HBM $0.0473/GB-hour; host DRAM $2.28e-4/GB-hour)
    offloads the 39 GB of a 119K-token Llama 3.1 70B session at once (``t1 = 0``) and drops it
    after ~3 hours: a DRAM reload costs 1.25 s of the KV's HBM rent, and users come back far
    more rarely than that. ``t1`` lands in 5-10 minutes when a miss costs $0.80-1.18 (28-41
    minutes of that HBM rent; :meth:`RetentionPolicy.miss_usd_for_hbm_residence`). The
    bundled default states $8.40 per million context tokens ($1.00 for this session: 7.5
    minutes) -- the source's rule turned into a price, labelled an assumption in
    ``kv_tiers.toml``, not a measured cost. Because that default scales with the context like
    the HBM rent does, the default golden time does not depend on the session's length.

    References
    ----------
    .. [1] Seed digest S62: median gap 25 min, ~40 GB held, HBM "golden time" of 5-10 min.
    .. [2] Seed digest S60: heavy-tailed agent workload, mean up to 15x the median.

    Examples
    --------
    >>> import tokenomics as tk
    >>> d = tk.Deployment("llama-3.1-70b", "h100-sxm", tp=8)
    >>> p = retention_policy(d, 119_000)                  # stated default: $1.00 per miss
    >>> round(p.miss_usd, 2), round(p.t1_s / 60, 1), round(p.t2_s / 3600, 1)
    (1.0, 7.5, 2.3)
    >>> q = retention_policy(d, 119_000, miss_usd=0)     # GPU time only: offload at once
    >>> q.t1_s, round(q.t2_s / 3600, 1)
    (0.0, 2.3)
    >>> retention_policy(d, 119_000, prices=RetentionPrices(miss_usd=0)).t1_s
    0.0
    """
    pr = _prices(prices, price_keywords)
    hw = dep.hardware
    t = offload_tier(tier, hw)
    g = GapDistribution.from_median_mean() if gap is None else gap
    if not isinstance(g, GapDistribution):
        raise TokenomicsError(f"gap must be a GapDistribution, got {type(gap).__name__}")
    C, K = _session_kv(dep, context_tokens, kv_bytes)
    n = dep.n_devices
    p_hour, h_H, h_T = _holding_prices(hw, t, pr)
    t_r, t_c, R_r, R_c, m = _miss_events(dep, t, C, K, p_hour, pr)
    c_H = h_H * K
    K1 = _one_copy(dep, C, K)
    c_T = h_T * K1
    t1, t2, cost, grid, curve = _cheapest_t1_t2(g, c_H, c_T, R_r, R_c)
    F1, F2 = float(g.cdf(t1)), float(g.cdf(t2))
    thr_h = (c_H - c_T) / R_r if R_r > 0 else math.inf
    thr_d = c_T / (R_c - R_r) if R_c > R_r else math.inf
    return RetentionPolicy(
        t1_s=t1, t2_s=t2, expected_cost_usd=float(cost),
        keep_cost_usd=c_H * g.mean_s, offload_now_cost_usd=R_r + c_T * g.mean_s,
        drop_now_cost_usd=R_c, p_hbm_hit=F1, p_reload=F2 - F1, p_recompute=1.0 - F2,
        tier=t.name, kv_bytes=K, hbm_usd_per_s=c_H, tier_usd_per_s=c_T, reload_s=t_r,
        recompute_s=t_c, reload_usd=R_r, recompute_usd=R_c, miss_usd=m,
        hbm_hazard_threshold_per_s=thr_h, drop_hazard_threshold_per_s=thr_d,
        t_grid_s=grid, cost_curve_usd=curve, gap=g, tier_kv_bytes=K1,
        hbm_capacity_bytes=n * hw.mem_usable_bytes,
        tier_capacity_bytes=n * t.capacity_per_gpu_bytes)


__all__ = ["GAP_MEAN_TO_MEDIAN", "GAP_MEDIAN_S", "GapDistribution", "RetentionDefaults",
           "RetentionOccupancy", "RetentionPolicy", "RetentionPrices", "load_retention_defaults",
           "lognormal_params", "retention_policy"]
