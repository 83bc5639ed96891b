"""Figures of the token factory in time and at scale: a request's waterfall, a serving trace,
sessions, a facility's cost per token.

Each takes the result of its function (:func:`tokenomics.request_journey`,
:func:`tokenomics.simulate_serving`, :func:`tokenomics.agent_sessions`,
:func:`tokenomics.facility`) and an optional ``ax``, and returns the Axes; artists carry a
``gid`` for tests and for restyling.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from tokenomics.core.errors import TokenomicsError
from tokenomics.surfaces.canvas import axes_or_new, series_colours

if TYPE_CHECKING:
    from matplotlib.axes import Axes


def _check(obj: Any, cls_name: str, maker: str) -> None:
    if type(obj).__name__ != cls_name:
        raise TokenomicsError(f"expected a {cls_name} from {maker}, got "
                              f"{type(obj).__name__}")


def plot_journey(journey: Any, ax: Axes | None = None) -> Axes:
    """A request's journey as a waterfall: each step a bar from where the last one ended.

    Parameters
    ----------
    journey : Journey
        From :func:`tokenomics.request_journey`.
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
        Bars by ``gid`` ``"step"`` (one per step, x from its start to its end in ms, top
        to bottom in order), vertical lines ``"ttft"`` and ``"e2e"`` at the totals and
        ``"read_start"`` at the source's ~0.3 s (when a user starts reading).

    Examples
    --------
    >>> import tokenomics as tk
    >>> j = tk.request_journey(tk.Deployment("llama-3.1-8b", "h100-sxm"), 1024, 64,
    ...                        device_price=2.0)
    >>> ax = plot_journey(j)
    >>> len([p for p in ax.patches if p.get_gid() == "step"]) == len(j.step)
    True
    """
    _check(journey, "Journey", "tk.request_journey")
    ax = axes_or_new(ax, (7.5, 4.5))
    f = journey.to_frame()
    start = (f.cumulative_s - f.latency_s).to_numpy() * 1e3
    width = f.latency_s.to_numpy() * 1e3
    y = np.arange(len(f))[::-1]
    colours = ["tab:orange" if s == "computed" else "tab:blue" for s in f.source]
    for yi, x0, w, c in zip(y, start, width, colours, strict=True):
        ax.barh(yi, w, left=x0, color=c, height=0.6, gid="step")
    ax.set_yticks(y, [f"{s} ({w:.3g} ms)" for s, w in zip(f.step, width, strict=True)],
                  fontsize=7)
    ax.axvline(journey.ttft_s * 1e3, color="tab:red", ls="--", lw=1, gid="ttft",
               label=f"TTFT {journey.ttft_s * 1e3:.4g} ms")
    ax.axvline(journey.e2e_s * 1e3, color="0.3", ls=":", lw=1, gid="e2e",
               label=f"last token {journey.e2e_s:.3g} s")
    ax.axvline(300, color="tab:green", lw=0.8, gid="read_start",
               label="the user starts reading (~0.3 s, source)")
    ax.set_xscale("symlog", linthresh=1.0)
    ax.set_xlabel("Time since the keypress [ms] (orange: accelerator and queue, computed; "
                  "blue: stated budgets)", fontsize=7)
    ax.set_title("A request's journey", fontsize=9)
    ax.legend(fontsize=7, loc="lower right")
    return ax


def plot_serving(traces: Any, ax: Axes | None = None) -> Axes:
    """Decode batch over time of one or more serving traces (the retirement gate, S53).

    Parameters
    ----------
    traces : ServingTrace or iterable of ServingTrace
        From :func:`tokenomics.simulate_serving`, e.g. one per admission policy.
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
        One line per trace, ``gid`` ``"decode_batch"``, labelled with its policy and its
        oscillation (the decode batch's coefficient of variation over the second half).
    """
    if type(traces).__name__ == "ServingTrace":
        items = [traces]
    else:
        try:
            items = list(traces)
        except TypeError:
            items = []
    if not items:
        raise TokenomicsError("plot_serving takes a ServingTrace or a list of them "
                              "(tk.simulate_serving)")
    for t in items:
        _check(t, "ServingTrace", "tk.simulate_serving")
    ax = axes_or_new(ax)
    for t, c in zip(items, series_colours(len(items)), strict=True):
        ax.plot(t.time_s, t.decode_batch, color=c, lw=0.8, gid="decode_batch",
                label=f"{t.policy}: oscillation {t.oscillation:.1%}")
    ax.set_xlabel("Time [s]")
    ax.set_ylabel("Decode batch [sequences]")
    ax.set_title("Continuous batching under admission policies", fontsize=9)
    ax.legend(fontsize=7)
    ax.grid(True, alpha=0.3)
    return ax


def plot_sessions(sessions: Any, ax: Axes | None = None) -> Axes:
    """KV held in HBM and in the offload tier over the window, with the replica's limits.

    Parameters
    ----------
    sessions : AgentSessions
        From :func:`tokenomics.agent_sessions`.
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
        Lines ``"hbm"`` and ``"tier"`` (x in hours, y as a fraction of the capacity) and
        the level ``"capacity"`` at 1.
    """
    _check(sessions, "AgentSessions", "tk.agent_sessions")
    ax = axes_or_new(ax)
    h = np.asarray(sessions.time_s, float) / 3600.0
    ax.plot(h, sessions.hbm_fraction, color="tab:red", gid="hbm", label="KV in HBM")
    ax.plot(h, sessions.tier_fraction, color="tab:blue", gid="tier",
            label=f"KV in {sessions.policy.tier}")
    ax.axhline(1.0, color="0.3", ls="--", lw=1, gid="capacity", label="capacity")
    ax.set_xlabel("Time [h]")
    ax.set_ylabel("Share of the capacity the policy assumes")
    ax.set_title(f"Agent sessions: golden time {sessions.golden_time_s / 60:.3g} min", fontsize=9)
    ax.legend(fontsize=7)
    ax.grid(True, alpha=0.3)
    return ax


def plot_cost_waterfall(facility: Any, index: int = 0, ax: Axes | None = None) -> Axes:
    """A facility's cost per million tokens as a waterfall, part by part.

    Parameters
    ----------
    facility : Facility
        From :func:`tokenomics.facility` (:meth:`~tokenomics.economics.factory.Facility.with_spares`
        for the spares' share).
    index : int
        Which power budget of a vectorised facility, from 0 (default the first; budgets of
        more than one dimension in C order).
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
        One bar per part of :meth:`~tokenomics.economics.factory.Facility.cost_waterfall`
        (``gid`` ``"part"``, each starting where the last ended, in USD/Mtok), and the bar
        ``"total"`` from 0 to the facility's ``usd_per_mtok``.

    Raises
    ------
    TokenomicsError
        For something other than a Facility, an index outside its budgets, or a budget no
        replica fits in (an infinite cost has no waterfall).

    Examples
    --------
    >>> import tokenomics as tk
    >>> f = tk.facility("gb300-nvl72", 100e6, 1000.0, device_price=3.0, pue=1.2)
    >>> ax = plot_cost_waterfall(f)
    >>> len([p for p in ax.patches if p.get_gid() == "part"])      # rental, stranded, spares
    3
    """
    _check(facility, "Facility", "tk.facility")
    w = facility.cost_waterfall()
    if isinstance(index, bool) or not isinstance(index, (int, np.integer)) \
            or not 0 <= index < w.shape[1]:
        raise TokenomicsError(f"index must be a whole number from 0 to {w.shape[1] - 1} (one "
                              f"of the facility's {w.shape[1]} power budgets), got {index!r}")
    col = w.iloc[:, int(index)]
    if not np.isfinite(col.to_numpy()).all():
        raise TokenomicsError(f"the budget {col.name} holds no replica: its cost per token is "
                              f"infinite, with no waterfall to draw")
    ax = axes_or_new(ax, (7.0, 4.0))
    names = list(col.index)
    start = np.concatenate([[0.0], np.cumsum(col.to_numpy())[:-1]])
    colours = series_colours(len(names))
    for i, (s0, v, c) in enumerate(zip(start, col.to_numpy(), colours, strict=True)):
        ax.bar(i, v, bottom=s0, color=c, gid="part")
        ax.annotate(f"{v:.3g}", (i, s0 + v), ha="center", va="bottom", fontsize=7)
    total = float(col.sum())
    ax.bar(len(names), total, color="0.4", gid="total")
    ax.annotate(f"{total:.3g}", (len(names), total), ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(len(names) + 1), [n.replace("_", " ") for n in names] + ["total"],
                  fontsize=7, rotation=20)
    ax.set_ylabel("USD per million output tokens")
    ax.set_title(f"{facility.system} at {col.name}: cost per Mtok", fontsize=9)
    ax.grid(True, axis="y", alpha=0.3)
    return ax


def plot_tokens_per_mw(facilities: Any, ax: Axes | None = None) -> Axes:
    """Tokens per second per megawatt at the meter, one bar per facility (system).

    Parameters
    ----------
    facilities : Facility or iterable of Facility
        From :func:`tokenomics.facility`, e.g. one per system at the same power budget;
        each bar reads a facility's first budget (in C order).
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
        Bars ``gid`` ``"system"`` (height ``tokens_per_s_per_mw`` [token/s/MW]), labelled
        with each system's id and its cost per million tokens.

    Raises
    ------
    TokenomicsError
        For an empty input or something other than Facilities.

    Examples
    --------
    >>> import tokenomics as tk
    >>> fs = [tk.facility(s, 10e6, 1000.0, device_price=3.0) for s in ("hgx-h100", "gb200-nvl72")]
    >>> ax = plot_tokens_per_mw(fs)
    >>> len([p for p in ax.patches if p.get_gid() == "system"])
    2
    """
    items = [facilities] if type(facilities).__name__ == "Facility" else \
        list(facilities) if isinstance(facilities, (list, tuple)) else []
    if not items:
        raise TokenomicsError("plot_tokens_per_mw takes a Facility or a list of them "
                              "(tk.facility)")
    for f in items:
        _check(f, "Facility", "tk.facility")
    ax = axes_or_new(ax, (7.0, 4.0))
    per_mw = [float(np.ravel(f.tokens_per_s_per_mw)[0]) for f in items]
    cost = [float(np.ravel(f.usd_per_mtok)[0]) for f in items]
    for i, (y, c, col) in enumerate(zip(per_mw, cost, series_colours(len(items)),
                                        strict=True)):
        ax.bar(i, y, color=col, gid="system")
        ax.annotate(f"${c:.3g}/Mtok", (i, y), ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(len(items)), [f.system for f in items], fontsize=7, rotation=20)
    ax.set_ylabel("Output tokens/s per MW at the meter")
    ax.set_title("Tokens per megawatt by system", fontsize=9)
    ax.grid(True, axis="y", alpha=0.3)
    return ax
