"""What a faster tier costs: the frontier read at two interactivities (S27).

A provider that sells a "fast mode" (the source's example: Anthropic's, about 2.5x the speed for
about 6x the price, S27) serves each user at a higher tokens/s per user. On the Pareto frontier
(:func:`tokenomics.pareto.envelope.frontier`) a higher interactivity :math:`x_1 = s\\,x_0` can
only be bought with a lower throughput per device, :math:`y_1 \\le y_0`, because smaller batches
(or wider tensor parallelism) share each weight read among fewer tokens. With the device price
unchanged the cost per token scales as :math:`1/y`, so the physics' price of the speed-up is

.. math:: m(s) = \\frac{c_1}{c_0} = \\frac{y_0\\,/\\,p_0}{y_1\\,/\\,p_1}

(:math:`p` the device-hour prices of the two winning configurations; with one price it is
:math:`y_0 / y_1`). :math:`m \\ge 1` and :math:`m` does not fall as :math:`s` grows, since the
frontier's :math:`y` is non-increasing in :math:`x`. A quoted price multiple above :math:`m` is
margin (or a scarcity price of the fast tier), not cost.

References
----------
.. [1] Seed digest S27 (fast mode: ~2.5x the speed for ~6x the price) and S23 (the SLO is a
   vertical line on the interactivity-throughput frontier).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import pandas as pd

from tokenomics.core import checks as V
from tokenomics.core.errors import TokenomicsError
from tokenomics.core.units import Result
from tokenomics.pareto.queries import best_at


@dataclass(frozen=True, repr=False)
class SpeedPremium(Result):
    """The frontier at a base interactivity and at ``speedup`` times it.

    Attributes
    ----------
    base, fast : pandas.Series
        The frontier's best point at each interactivity (:func:`~tokenomics.pareto.queries.best_at`).
    speedup : float
        :math:`s = x_1 / x_0`.
    throughput_ratio : float
        :math:`y_0 / y_1` [-], >= 1: tokens per device-second given up for the speed.
    cost_ratio : float
        :math:`c_1 / c_0` [-] from the two points' cost per million tokens; equal to
        ``throughput_ratio`` when both run on the same device price; NaN where a price is not
        known.
    """

    base: pd.Series
    fast: pd.Series
    speedup: float
    throughput_ratio: float
    cost_ratio: float

    def explains(self, price_ratio: float) -> bool:
        """Whether the cost of the speed-up alone accounts for a quoted price multiple.

        True when ``price_ratio`` is at most :attr:`cost_ratio` (or
        :attr:`throughput_ratio` where no price is known).
        """
        m = self.cost_ratio if math.isfinite(self.cost_ratio) else self.throughput_ratio
        return float(price_ratio) <= m * (1 + 1e-12)


def speed_premium(frontier: pd.DataFrame, base_tokens_per_s_per_user: float,
                  speedup: float = 2.5) -> SpeedPremium:
    """Cost of serving each user ``speedup`` times faster, read off a frontier.

    Parameters
    ----------
    frontier : pandas.DataFrame
        From :func:`tokenomics.pareto.envelope.frontier` (any deployments, prices, efficiency).
    base_tokens_per_s_per_user : float
        The ordinary tier's interactivity :math:`x_0` [token/s], > 0.
    speedup : float
        :math:`s`, >= 1; default 2.5 (S27's fast mode).

    Returns
    -------
    SpeedPremium
        Both points, :math:`y_0/y_1` and the cost ratio :math:`m(s)` (module notes).

    Raises
    ------
    TokenomicsError
        When the frontier does not reach :math:`s\\,x_0` (the message gives its fastest point),
        or for a speed-up below 1.

    Examples
    --------
    >>> import tokenomics as tk
    >>> d = [tk.Deployment("llama-3.1-8b", "h100-sxm", tp=t) for t in (1, 2)]
    >>> p = speed_premium(tk.frontier(d, context_tokens=2048), 50.0, 2.5)
    >>> p.throughput_ratio >= 1.0
    True
    """
    x0 = V.single_amount(V.positive(base_tokens_per_s_per_user, "base_tokens_per_s_per_user",
                                    "token/s"), "base_tokens_per_s_per_user", "token/s")
    s = V.single_amount(V.positive(speedup, "speedup", "count"), "speedup", "count")
    if s < 1.0:
        raise TokenomicsError(f"speedup must be >= 1 (a faster tier), got {speedup!r}")
    if not isinstance(frontier, pd.DataFrame) or "tokens_per_s_per_user" not in frontier:
        raise TokenomicsError("speed_premium reads a frontier: pass tk.frontier(...)'s frame")
    base, fast = best_at(frontier, x0), best_at(frontier, s * x0)
    y_ratio = float(base.tokens_per_s_per_device) / float(fast.tokens_per_s_per_device)
    c0, c1 = float(base.cost_usd_per_mtok), float(fast.cost_usd_per_mtok)
    cost = c1 / c0 if math.isfinite(c0) and math.isfinite(c1) and c0 > 0 else math.nan
    return SpeedPremium(base=base, fast=fast, speedup=s, throughput_ratio=y_ratio,
                        cost_ratio=cost)


def premium_curve(frontier: pd.DataFrame, base_tokens_per_s_per_user: float,
                  speedups: Any) -> pd.DataFrame:
    """:func:`speed_premium` at several speed-ups: one row each.

    Returns
    -------
    pandas.DataFrame
        ``speedup``, ``fast_tokens_per_s_per_user``, ``throughput_ratio``, ``cost_ratio``,
        ``fast_label``; rows stop where the frontier ends.
    """
    rows = []
    for s in speedups:
        try:
            p = speed_premium(frontier, base_tokens_per_s_per_user, float(s))
        except TokenomicsError:
            break
        rows.append(dict(speedup=p.speedup,
                         fast_tokens_per_s_per_user=float(p.fast.tokens_per_s_per_user),
                         throughput_ratio=p.throughput_ratio, cost_ratio=p.cost_ratio,
                         fast_label=str(p.fast.label)))
    return pd.DataFrame(rows)
