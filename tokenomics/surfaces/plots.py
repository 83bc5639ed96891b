"""Matplotlib figures: roofline with operators, throughput frontier, memory budget, cost split.

Every function draws into ``ax`` when given one and otherwise into a new
:class:`matplotlib.figure.Figure` (created without :mod:`matplotlib.pyplot`, so no backend is
chosen, no window opens and a user's backend is never changed; that plumbing is
:mod:`tokenomics.surfaces.canvas`), and returns the Axes. Nothing
is shown or written to disk: call ``ax.figure.savefig(...)`` for a file. Matplotlib is imported
only when a function is called, so ``import tokenomics`` stays light.

Artists carry ``gid`` values (``"compute_roof"``, ``"ridge"``, ``"slo"``...) listed in each
docstring, so that a test or a caller can read the numbers back from the figure.

References
----------
.. [1] S. Williams, A. Waterman, D. Patterson, "Roofline: an insightful visual performance
   model for multicore architectures", CACM 52(4), 2009. doi:10.1145/1498765.1498785
.. [2] SemiAnalysis, "InferenceMAX" throughput-vs-interactivity curves (the frontier plot).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from tokenomics.core import TokenomicsError, counts
from tokenomics.core import checks as V
from tokenomics.data import Deployment
from tokenomics.data.boundary import inputs
from tokenomics.economics import DeploymentCost
from tokenomics.physics import memory_fit, operator_table, ridge_point
from tokenomics.surfaces.canvas import (
    axes_or_new,
    labelled_items,
    series_colours,
    si_prefixed,
    single_count,
    true_runs,
    usd_text,
)

if TYPE_CHECKING:
    from matplotlib.artist import Artist
    from matplotlib.axes import Axes

__all__ = ["GOLDEN_TIME_MIN", "plot_cost", "plot_frontier", "plot_memory", "plot_retention",
           "plot_roofline"]

GB = 1e9
"""Bytes per GB (decimal; the library's convention, ``docs/physics.md``)."""

# Operator families, told apart by colour on the roofline.
_FAMILY = {"attn_qkv": "attention", "attn_core": "attention", "attn_out": "attention",
           "ffn_dense": "FFN / MoE", "moe_router": "FFN / MoE", "moe_shared": "FFN / MoE",
           "moe_experts": "FFN / MoE", "embedding": "embedding / LM head",
           "lm_head": "embedding / LM head"}
_FAMILY_COLOUR = {"attention": "tab:blue", "FFN / MoE": "tab:orange",
                  "embedding / LM head": "tab:gray"}


# --------------------------------------------------------------------------------------------
# Roofline
# --------------------------------------------------------------------------------------------
@inputs(dep="deployment")
def plot_roofline(dep: Deployment, batch: int = 64, context_tokens: int = 4096,
                  prompt_tokens: int | None = None,
                  phases: Sequence[str] = ("prefill", "decode"),
                  annotate: bool = True, ax: Axes | None = None) -> Axes:
    """Log-log roofline of a deployment's device with the step's operators placed on it.

    The roof is the device's dense peak at the deployment's compute format and its memory
    bandwidth: attainable :math:`\\min(P, I\\beta)` per device [FLOP/s] against arithmetic
    intensity :math:`I` [FLOP/B], with the ridge point :math:`I^* = P/\\beta` marked. Each
    operator of :func:`tokenomics.operator_table` sits at its intensity (per device FLOPs over
    bytes) and the throughput its roofline time gives, ``flops / time_s``: on the roof, or on
    the derated roof when the deployment's efficiency has ``mfu`` or ``mbu`` below 1 (that roof
    is drawn dotted). Colours tell attention from FFN/MoE (and embedding/LM head); markers tell
    prefill, decode at batch 1 and decode at batch ``batch``.

    Parameters
    ----------
    dep : Deployment
    batch : int
        Decode batch B [sequences], >= 1; decode is also drawn at batch 1 (once when B is 1).
    context_tokens : int
        Decode KV length per sequence [token].
    prompt_tokens : int, optional
        Prefill prompt length [token] (one prompt); default ``context_tokens``.
    phases : sequence of {"prefill", "decode"}
        Phases to place.
    annotate : bool
        Write each operator's name beside its marker (small, faint).
    ax : matplotlib.axes.Axes, optional
        Axes to draw into; default a new Figure's.

    Returns
    -------
    matplotlib.axes.Axes
        Artists by ``gid``: ``"memory_roof"`` (slope :math:`I\\beta`, from the left edge to
        the ridge), ``"compute_roof"`` (flat at :math:`P`, from the ridge to the right edge),
        ``"ridge"`` (one marker at :math:`(I^*, P)`), ``"derated_roof"`` (only with
        efficiency < 1), and one scatter per operator set, ``"operators:prefill"``,
        ``"operators:decode_b1"``, ``"operators:decode_bB"``, whose points follow
        :func:`~tokenomics.operator_table`'s rows.

    Raises
    ------
    TokenomicsError
        For a bad batch, context, prompt or phase (from :func:`~tokenomics.operator_table`),
        or an empty ``phases``.
    NotPublishedError
        When the device has no published peak for the compute format.

    Notes
    -----
    Operators with no FLOPs (the embedding lookup) or no bytes have intensity 0 or infinity
    and cannot sit on a log axis; they are left out. Decode at batch B is placed whether or not
    it fits in memory (see :func:`plot_memory`).

    References
    ----------
    .. [1] S. Williams, A. Waterman, D. Patterson, "Roofline: an insightful visual performance
           model for multicore architectures", CACM 52(4), 2009. doi:10.1145/1498765.1498785

    Examples
    --------
    >>> import tokenomics as tk
    >>> ax = plot_roofline(tk.Deployment("llama-3.1-8b", "h100-sxm"), batch=64,
    ...                    context_tokens=4096)
    >>> ax.get_xscale(), ax.get_yscale()
    ('log', 'log')
    >>> [l.get_gid() for l in ax.lines if l.get_gid() == "ridge"]
    ['ridge']
    """
    phases = _check_phases(phases)
    batch = single_count(batch, "batch", "count")
    C = single_count(context_tokens, "context_tokens", "token")
    P = C if prompt_tokens is None else single_count(prompt_tokens, "prompt_tokens", "token")
    peak = dep.hardware.peak(dep.compute_dtype)
    bw = dep.hardware.mem_bw_bytes_per_s
    ridge = ridge_point(dep.hardware, dep.compute_dtype)
    sets = _operator_sets(dep, phases, batch, C, P)

    ax = axes_or_new(ax)
    ax.set_xscale("log")
    ax.set_yscale("log")
    placed, names, families = _place_operators(ax, sets)
    if V.flag(annotate, "annotate"):
        _label_operators(ax, names, peak)
    xs = np.concatenate([p[0] for p in placed] + [np.array([ridge])])
    ys = np.concatenate([p[1] for p in placed] + [np.array([peak])])
    x_lo, x_hi = float(xs.min()) / 4.0, float(xs.max()) * 4.0
    _draw_roofs(ax, dep, x_lo, x_hi)
    ax.set_xlim(x_lo, x_hi)
    ax.set_ylim(min(float(ys.min()), x_lo * bw) / 2.0, peak * 3.0)
    ax.set_xlabel("Arithmetic intensity [FLOP/B]")
    ax.set_ylabel("Attainable throughput per device [FLOP/s]")
    ax.set_title(f"Roofline: {dep.model.id} on {dep.n_devices}x{dep.hardware.id} tp{dep.tp} "
                 f"({dep.weight_dtype}/{dep.kv_dtype}/{dep.compute_dtype}), "
                 f"context {C}", fontsize=9)
    ax.grid(True, which="major", alpha=0.3)
    _roofline_legend(ax, sets, families)
    return ax


#: An operator set on the roofline: (gid, legend text, marker, operator_table frame).
_OpSet = tuple[str, str, str, pd.DataFrame]


def _check_phases(phases: Sequence[str]) -> tuple[str, ...]:
    """``phases`` as a non-empty tuple of "prefill"/"decode", or a TokenomicsError."""
    if isinstance(phases, str):
        phases = (phases,)
    if not isinstance(phases, (list, tuple)):
        raise TokenomicsError(f"phases must be a list of 'prefill' and/or 'decode', got "
                              f"{phases!r}")
    phases = tuple(phases)
    if not phases:
        raise TokenomicsError("phases is empty; give 'prefill', 'decode' or both")
    bad = [p for p in phases if not isinstance(p, str) or p not in ("prefill", "decode")]
    if bad:
        raise TokenomicsError(f"phases must be 'prefill' and/or 'decode', got {bad[0]!r}")
    return phases


def _operator_sets(dep: Deployment, phases: tuple[str, ...], batch: int, context: int,
                   prompt: int) -> list[_OpSet]:
    """The operator tables to place: prefill of one prompt, decode at batch 1 and at B."""
    sets: list[_OpSet] = []
    if "prefill" in phases:
        sets.append(("operators:prefill", f"prefill, {prompt} tokens", "s",
                     operator_table(dep, "prefill", batch=1, prompt_tokens=prompt)))
    if "decode" in phases:
        sets.append(("operators:decode_b1", "decode, batch 1", "v",
                     operator_table(dep, "decode", batch=1, context_tokens=context)))
        if batch > 1:
            sets.append(("operators:decode_bB", f"decode, batch {batch}", "o",
                         operator_table(dep, "decode", batch=int(batch),
                                        context_tokens=context)))
    return sets


def _place_operators(ax: Axes, sets: list[_OpSet]) -> tuple[
        list[tuple[np.ndarray, np.ndarray]], list[tuple[float, float, str]], set[str]]:
    """One scatter per operator set at (intensity, FLOPs / time), coloured by family.

    Returns the points of each set, every (x, y, operator name), and the families drawn.
    """
    placed = []
    names: list[tuple[float, float, str]] = []
    families: set[str] = set()
    for gid, text, marker, t in sets:
        ok = (t.flops > 0) & (t.bytes > 0) & (t.time_s > 0)
        t = t[ok]
        x = t.intensity_flop_per_byte.to_numpy(float)
        y = (t.flops / t.time_s).to_numpy(float)
        fams = [_FAMILY.get(o, "embedding / LM head") for o in t.operator]
        families.update(fams)
        colours = [_FAMILY_COLOUR[f] for f in fams]
        if gid == "operators:decode_b1":   # hollow, so batch B's marker shows through
            ax.scatter(x, y, marker=marker, s=70, facecolors="none", edgecolors=colours,
                       linewidths=1.3, zorder=4, gid=gid, label=text)
        else:
            ax.scatter(x, y, c=colours, marker=marker, s=42, edgecolors="black",
                       linewidths=0.5, zorder=3, gid=gid, label=text)
        placed.append((x, y))
        names += list(zip(x, y, t.operator, strict=True))
    return placed, names, families


def _draw_roofs(ax: Axes, dep: Deployment, x_lo: float, x_hi: float) -> None:
    """Memory slope, compute roof, ridge marker and, below 100% efficiency, the derated roof.

    Roof :math:`\\min(P, I\\beta)`; ridge :math:`I^* = P/\\beta`
    (:func:`tokenomics.ridge_point`); derated with :math:`P\\,\\mathrm{MFU}` and
    :math:`\\beta\\,\\mathrm{MBU}`.
    """
    hw = dep.hardware
    peak = hw.peak(dep.compute_dtype)
    bw = hw.mem_bw_bytes_per_s
    ridge = ridge_point(hw, dep.compute_dtype)
    ax.plot([x_lo, ridge], [x_lo * bw, peak], color="black", lw=1.8, gid="memory_roof",
            label=f"memory: {si_prefixed(bw)}B/s")
    ax.plot([ridge, x_hi], [peak, peak], color="black", lw=1.8, ls="-", gid="compute_roof",
            label=f"compute: {si_prefixed(peak)}FLOP/s ({dep.compute_dtype})")
    ax.plot([ridge], [peak], marker="D", ms=7, color="tab:red", ls="none", zorder=4,
            gid="ridge", label=f"ridge: {ridge:.3g} FLOP/B")
    ax.annotate(f"ridge {ridge:.3g} FLOP/B", (ridge, peak), xytext=(-6, 6),
                textcoords="offset points", ha="right", fontsize=8, color="tab:red",
                gid="ridge_label")
    eff = dep.efficiency
    if eff.mfu != 1 or eff.mbu != 1:
        p2, b2 = peak * eff.mfu, bw * eff.mbu
        r2 = p2 / b2
        ax.plot([x_lo, r2, x_hi], [x_lo * b2, p2, p2], color="0.4", lw=1.2, ls=":",
                gid="derated_roof", label=f"derated roof (MFU {eff.mfu:g}, MBU {eff.mbu:g})")


def _roofline_legend(ax: Axes, sets: list[_OpSet], families: set[str]) -> None:
    """Legend: the roofs, then one grey marker per operator set and one colour per family."""
    from matplotlib.lines import Line2D

    handles, labels = ax.get_legend_handles_labels()
    roofs = [(h, lab) for h, lab in zip(handles, labels, strict=True)
             if not lab.startswith(("prefill", "decode"))]
    marker_of = {text: m for _, text, m, _ in sets}
    proxies = [Line2D([], [], ls="none", marker=marker_of[text],
                      markerfacecolor="none" if gid == "operators:decode_b1" else "0.6",
                      markeredgecolor="0.3" if gid == "operators:decode_b1" else "black",
                      markeredgewidth=1.3 if gid == "operators:decode_b1" else 0.5,
                      label=text)
               for gid, text, _, _ in sets]
    proxies += [Line2D([], [], ls="none", marker="o", color=_FAMILY_COLOUR[f], label=f)
                for f in sorted(families, key=list(_FAMILY_COLOUR).index)]
    hs: list[Artist] = [h for h, _ in roofs]
    hs += proxies
    ax.legend(hs, [lab for _, lab in roofs] + [str(p.get_label()) for p in proxies],
              loc="upper left", fontsize=7)


def _label_operators(ax: Axes, points: list[tuple[float, float, str]], peak: float,
                     tol_decades: float = 0.04) -> None:
    """Write operator names once per cluster of coincident markers (faint, small).

    Markers within ``tol_decades`` of each other in both log coordinates share one label
    (``"attn_qkv, attn_out, ..."``); labels on the compute roof are slanted down under it,
    the others written below and to the right of the slope.
    """
    clusters: list[tuple[float, float, list[str]]] = []
    for x, y, name in sorted(points):
        lx, ly = math.log10(x), math.log10(y)
        for cx, cy, members in clusters:
            if abs(lx - cx) < tol_decades and abs(ly - cy) < tol_decades:
                if name not in members:
                    members.append(name)
                break
        else:
            clusters.append((lx, ly, [name]))
    for lx, ly, members in clusters:
        on_roof = 10 ** ly >= peak * (1 - 1e-6)
        ax.annotate(", ".join(members), (10 ** lx, 10 ** ly),
                    xytext=(2, -8) if on_roof else (6, -10), textcoords="offset points",
                    rotation=-60 if on_roof else 0, rotation_mode="anchor", fontsize=6,
                    alpha=0.7, color="0.25", gid="operator_label")


# --------------------------------------------------------------------------------------------
# Frontier
# --------------------------------------------------------------------------------------------
_FRONTIER_COLUMNS = ("tokens_per_s_per_user", "tokens_per_s_per_device")


def plot_frontier(frontier_df: pd.DataFrame, slo_tokens_per_s_per_user: float | None = None,
                  label_cost: bool = True, by: str = "label", max_cost_labels: int = 5,
                  ax: Axes | None = None) -> Axes:
    """Throughput per device against interactivity, one colour per configuration.

    Draws the envelope of :func:`tokenomics.pareto.envelope` as a thin grey polyline (exact: straight
    between vertices) and, per group of ``by``, its vertices joined where consecutive on the
    envelope (a gap where another configuration takes over, so no chord is drawn across it).
    With ``include_dominated=True`` frames, each group's whole curve is drawn and its dominated
    vertices are hollow. An SLO draws S23's vertical line and marks the best point at or above
    it (:func:`tokenomics.best_at` on the envelope).

    Parameters
    ----------
    frontier_df : pandas.DataFrame
        From :func:`tokenomics.pareto.envelope` (or any frame with ``tokens_per_s_per_user`` and
        ``tokens_per_s_per_device`` [token/s] and the ``by`` column).
    slo_tokens_per_s_per_user : float, optional
        Interactivity floor [token/s per user], > 0.
    label_cost : bool
        Write ``cost_usd_per_mtok`` [USD/Mtok] beside up to ``max_cost_labels`` envelope
        vertices, spread along it (when the column exists and is finite there).
    by : str
        Column that names a configuration (default ``"label"``; ``"hardware"`` to colour by
        device).
    max_cost_labels : int
        Most cost labels to write.
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
        Artists by ``gid``: ``"envelope"`` (the grey polyline), ``"frontier:<group>"`` (one
        line per group; NaN breaks between its runs), ``"slo"`` (the vertical line),
        ``"slo_best"`` (the best point; absent when no configuration reaches the SLO, where a
        note is written instead), texts ``"cost_label"``.

    Raises
    ------
    TokenomicsError
        For a frame that is empty, lacks a needed column, or an SLO that is not > 0.

    References
    ----------
    .. [1] Seed digest S23 (the SLO is a vertical line on this plot).
    .. [2] SemiAnalysis, "InferenceMAX" throughput-vs-interactivity curves.

    Examples
    --------
    >>> import tokenomics as tk
    >>> f = tk.frontier([tk.Deployment("llama-3.1-8b", "h100-sxm"),
    ...                  tk.Deployment("llama-3.1-8b", "h200")], 2048)
    >>> ax = plot_frontier(f, slo_tokens_per_s_per_user=100)
    >>> [l.get_xdata()[0] for l in ax.lines if l.get_gid() == "slo"]
    [100.0]
    """
    _check_frontier_frame(frontier_df, by)
    slo = _slo_floor(slo_tokens_per_s_per_user)
    f = frontier_df.sort_values("tokens_per_s_per_user", kind="stable").reset_index(drop=True)
    has_dom = "dominated" in f.columns
    on_env = ~f["dominated"].astype(bool).to_numpy() if has_dom else np.ones(len(f), bool)
    env = f[on_env].reset_index(drop=True)

    ax = axes_or_new(ax)
    if has_dom:   # the envelope over the full curves: a dark line on top
        ax.plot(env.tokens_per_s_per_user, env.tokens_per_s_per_device, color="black",
                lw=1.3, alpha=0.8, zorder=4, gid="envelope", label="envelope")
    else:         # the groups' runs cover it; grey shows the hand-over between runs
        ax.plot(env.tokens_per_s_per_user, env.tokens_per_s_per_device, color="0.6", lw=3.0,
                alpha=0.5, zorder=1, gid="envelope", label="_envelope")
    _draw_groups(ax, f, by, has_dom)
    if V.flag(label_cost, "label_cost") and "cost_usd_per_mtok" in env.columns:
        _label_costs(ax, env, V.single_whole(max_cost_labels, "max_cost_labels", minimum=0))
    if slo is not None:
        _draw_slo(ax, env, slo, by)
    _frontier_frame(ax, f)
    return ax


def _check_frontier_frame(frontier_df: Any, by: str) -> None:
    """A TokenomicsError unless ``frontier_df`` is a non-empty frame with the needed columns."""
    if not isinstance(frontier_df, pd.DataFrame):
        raise TokenomicsError(f"frontier_df must be a pandas DataFrame from tk.frontier, got "
                              f"{type(frontier_df).__name__}")
    if not isinstance(by, str):
        raise TokenomicsError(f"by must name a column of frontier_df, got {by!r}")
    missing = [c for c in (*_FRONTIER_COLUMNS, by) if c not in frontier_df.columns]
    if missing:
        raise TokenomicsError(f"frontier_df lacks column(s) {', '.join(map(repr, missing))}; "
                              f"give a frame from tk.frontier (or name an existing column "
                              f"with by=)")
    if frontier_df.empty:
        raise TokenomicsError("frontier_df is empty; nothing to plot")


def _slo_floor(slo_tokens_per_s_per_user: Any) -> float | None:
    """The SLO as a float > 0 [token/s per user], None when not given."""
    if slo_tokens_per_s_per_user is None:
        return None
    slo = V.single_amount(slo_tokens_per_s_per_user, "slo_tokens_per_s_per_user", "token/s")
    if not (math.isfinite(slo) and slo > 0):
        raise TokenomicsError(f"slo_tokens_per_s_per_user must be > 0 [token/s], got "
                              f"{slo_tokens_per_s_per_user!r}")
    return slo


def _draw_groups(ax: Axes, f: pd.DataFrame, by: str, has_dom: bool) -> None:
    """One line per group of ``by``: its whole curve (dominated vertices hollow) when the
    frame has them, else its runs on the envelope with a NaN break between runs."""
    groups = list(dict.fromkeys(f[by]))
    for colour, g in zip(series_colours(len(groups)), groups, strict=True):
        mine = (f[by] == g).to_numpy()
        if has_dom:
            sel = f[mine]
            xs, ys = sel.tokens_per_s_per_user.to_numpy(float), \
                sel.tokens_per_s_per_device.to_numpy(float)
            ax.plot(xs, ys, color=colour, lw=1.2, marker="o", ms=4, zorder=2,
                    gid=f"frontier:{g}", label=str(g))
            dom = sel["dominated"].astype(bool).to_numpy()
            ax.plot(xs[dom], ys[dom], ls="none", marker="o", ms=4, mfc="white", mec=colour,
                    zorder=3)
        else:
            xs_l: list[float] = []
            ys_l: list[float] = []
            for a, b in true_runs(mine):
                if xs_l:
                    xs_l.append(np.nan)
                    ys_l.append(np.nan)
                xs_l += f.tokens_per_s_per_user.iloc[a:b].astype(float).tolist()
                ys_l += f.tokens_per_s_per_device.iloc[a:b].astype(float).tolist()
            ax.plot(xs_l, ys_l, color=colour, lw=1.8, marker="o", ms=4, zorder=2,
                    gid=f"frontier:{g}", label=str(g))


def _label_costs(ax: Axes, env: pd.DataFrame, max_labels: int) -> None:
    """Cost [USD/Mtok] beside up to ``max_labels`` finite-cost envelope vertices: those
    nearest to evenly spaced interactivities (no pile-up where vertices crowd)."""
    cost = env.cost_usd_per_mtok.to_numpy(float)
    idx = np.flatnonzero(np.isfinite(cost))
    if not idx.size or max_labels <= 0:
        return
    xv = env.tokens_per_s_per_user.to_numpy(float)[idx]
    targets = np.linspace(xv.min(), xv.max(), min(max_labels, idx.size))
    pick = idx[np.unique([int(np.argmin(np.abs(xv - t))) for t in targets])]
    for i in pick:
        ax.annotate(f"{usd_text(cost[i])}/Mtok",
                    (env.tokens_per_s_per_user.iloc[i], env.tokens_per_s_per_device.iloc[i]),
                    xytext=(5, 5), textcoords="offset points", fontsize=7,
                    color="0.3", gid="cost_label")


def _draw_slo(ax: Axes, env: pd.DataFrame, slo: float, by: str) -> None:
    """S23's vertical SLO line and the best point at or above it, or a note that none is."""
    from tokenomics.pareto import best_at

    ax.axvline(slo, color="tab:red", ls="--", lw=1.2, gid="slo",
               label=f"SLO: {slo:g} tokens/s per user")
    try:
        best = best_at(env, slo)
    except TokenomicsError:
        # an SLO past the frame (which ends at 1.12x the fastest point) is noted at its right
        # edge: text placed at the SLO itself would be drawn far off the canvas
        beyond = slo > float(env.tokens_per_s_per_user.max()) * 1.12
        ax.annotate(f"no configuration reaches {slo:g} tokens/s per user"
                    + (" (beyond the frame)" if beyond else ""),
                    (0.99 if beyond else slo, 0.5),
                    xycoords=("axes fraction" if beyond else "data", "axes fraction"),
                    rotation=90, fontsize=7, color="tab:red", ha="right", va="center",
                    gid="slo_note")
        return
    y = float(best.tokens_per_s_per_device)
    x = float(best.tokens_per_s_per_user)
    text = f"{y:.4g} tok/s/device"
    if "batch" in best:
        text += f", B={float(best.batch):.4g}"
    c = _cost_at(env, best, by)
    if math.isfinite(c):
        text += f", {usd_text(c)}/Mtok"
    ax.plot([x], [y], marker="*", ms=15, color="tab:red", mec="black", mew=0.6,
            ls="none", zorder=5, gid="slo_best", label="best at SLO")
    ax.annotate(text, (x, y), xytext=(12, 8), textcoords="offset points", fontsize=8,
                color="tab:red", gid="slo_label")


def _frontier_frame(ax: Axes, f: pd.DataFrame) -> None:
    """Limits from zero, axis labels, a title naming the context and efficiency, legend."""
    ax.set_xlim(0, float(f.tokens_per_s_per_user.max()) * 1.12)
    ax.set_ylim(0, float(f.tokens_per_s_per_device.max()) * 1.15)
    ax.set_xlabel("Interactivity [tokens/s per user]")
    ax.set_ylabel("Throughput [tokens/s per device]")
    ctx = f.context_tokens.iloc[0] if "context_tokens" in f.columns else None
    kinds = sorted(set(f.efficiency)) if "efficiency" in f.columns else []
    what = {"calibrated": "calibrated forecast", "roofline": "pure roofline bound"}
    ax.set_title("Throughput vs interactivity" + (f", context {ctx:g}" if ctx is not None
                                                    else "")
                 + (f" ({', '.join(what.get(k, k) for k in kinds)})" if kinds else ""),
                 fontsize=9)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, loc="best")


def _cost_at(env: pd.DataFrame, best: Any, by: str) -> float:
    """Cost [USD/Mtok] at the best point: USD per device-second of its group over its rate.

    :func:`tokenomics.best_at` interpolates the throughput but not the cost; cost times
    throughput is the group's price per device-second, constant along its curve.
    """
    if "cost_usd_per_mtok" not in env.columns or by not in best:
        return float("nan")
    g = env[env[by] == best[by]]
    k = (g.cost_usd_per_mtok * g.tokens_per_s_per_device).to_numpy(float)
    k = k[np.isfinite(k)]
    if not k.size:
        return float("nan")
    return float(np.median(k) / float(best.tokens_per_s_per_device))


# --------------------------------------------------------------------------------------------
# Memory
# --------------------------------------------------------------------------------------------
@inputs(dep="deployment")
def plot_memory(dep: Deployment, batch: Any = 1, context_tokens: Any = 4096,
                ax: Axes | None = None) -> Axes:
    """Stacked bars of one device's memory against its usable and total capacity [GB].

    One bar per (batch, context) point of :func:`tokenomics.memory_fit` (the two broadcast):
    weights, KV cache, activation workspace and runtime reserve stacked, in GB (10^9 B); a
    dashed line at the usable memory (capacity times ``usable_memory_fraction``) and a solid
    one at the capacity. Each bar's total is written above it, in red when it does not fit.

    Parameters
    ----------
    dep : Deployment
    batch : int or array_like
        Concurrent sequences on the replica, >= 1.
    context_tokens : int or array_like
        KV length per sequence [token]; broadcast with ``batch``.
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
        ``ax.containers`` holds one bar container per term, labelled ``"weights"``,
        ``"KV cache"``, ``"workspace"``, ``"runtime reserve"`` (heights in GB per device);
        lines ``"usable"`` and ``"capacity"`` by ``gid``.

    Raises
    ------
    TokenomicsError
        For a batch or context that is not a whole number >= 1 (>= 0 for the context) or a
        context beyond the model's limit (from :func:`tokenomics.memory_fit`).

    Examples
    --------
    >>> import tokenomics as tk
    >>> d = tk.Deployment("llama-3.1-70b", "h200", weight_dtype="fp8", kv_dtype="fp8")
    >>> ax = plot_memory(d, batch=[1, 32, 128], context_tokens=8192)
    >>> [c.get_label() for c in ax.containers]
    ['weights', 'KV cache', 'workspace', 'runtime reserve']
    >>> len(ax.containers[0])
    3
    """
    fit = memory_fit(dep, batch, context_tokens)
    B = counts(batch, "batch")
    C = counts(context_tokens, "context_tokens", minimum=0, unit="token")
    shape = np.broadcast(B, C).shape
    Bf, Cf = (np.ravel(np.broadcast_to(v, shape)) for v in (B, C))
    n = Bf.size

    def per_point(v: Any) -> np.ndarray:
        return np.ravel(np.broadcast_to(np.asarray(v, float), shape)) / GB

    terms = [("weights", per_point(fit.weights_bytes), "tab:blue"),
             ("KV cache", per_point(fit.kv_bytes), "tab:orange"),
             ("workspace", per_point(fit.workspace_bytes), "tab:green"),
             ("runtime reserve", per_point(fit.runtime_reserve_bytes), "tab:gray")]
    total = per_point(fit.total_bytes)
    fits = np.ravel(np.broadcast_to(np.asarray(fit.fits, bool), shape))
    vary_c = np.unique(Cf).size > 1
    names = [(f"B={b:g}\nC={c:g}" if vary_c else f"B={b:g}") for b, c in zip(Bf, Cf,
                                                                            strict=True)]

    ax = axes_or_new(ax, figsize=(max(4.5, 1.1 * n + 3.0), 4.5))
    pos = np.arange(n)
    bottom = np.zeros(n)
    for label, h, colour in terms:
        ax.bar(pos, h, bottom=bottom, width=0.6, color=colour, label=label)
        bottom = bottom + h
    cap, usable = fit.capacity_bytes / GB, fit.usable_bytes / GB
    ax.axhline(usable, color="black", ls="--", lw=1.0, gid="usable",
               label=f"usable: {usable:.4g} GB ({dep.usable_memory_fraction:g} of capacity)")
    ax.axhline(cap, color="black", ls="-", lw=1.2, gid="capacity",
               label=f"capacity: {cap:.4g} GB")
    for p, t, ok in zip(pos, total, fits, strict=True):
        ax.annotate(f"{t:.4g} GB" + ("" if ok else "\ndoes not fit"), (p, t),
                    xytext=(0, 3), textcoords="offset points", ha="center", va="bottom",
                    fontsize=7, color="black" if ok else "tab:red", gid="total_label")
    ax.set_xticks(pos, names)
    ax.set_ylim(0, max(cap, float(total.max())) * 1.15)
    ax.set_ylabel("Memory per device [GB]")
    ax.set_xlabel("Batch [sequences]" + (" and context [tokens]" if vary_c
                                         else f" at context {Cf[0]:g} tokens"))
    ax.set_title(f"Memory per device: {dep.model.id} on {dep.n_devices}x{dep.hardware.id} "
                 f"tp{dep.tp} ({dep.weight_dtype} weights, {dep.kv_dtype} KV)", fontsize=9)
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left")
    return ax


# --------------------------------------------------------------------------------------------
# Cost
# --------------------------------------------------------------------------------------------
_PHASES = (("input", "input_usd_per_mtok"), ("cached input", "cached_input_usd_per_mtok"),
           ("output", "output_usd_per_mtok"))


def plot_cost(costs: DeploymentCost | Iterable[DeploymentCost],
              labels: Sequence[str] | None = None, logy: bool = False,
              ax: Axes | None = None) -> Axes:
    """Grouped bars of cost per million tokens by phase: input, cached input, output.

    One group per phase, one bar per :class:`tokenomics.DeploymentCost` in it, each labelled
    with its value [USD/Mtok].

    Parameters
    ----------
    costs : DeploymentCost or iterable of DeploymentCost
        From :func:`tokenomics.deployment_cost` at scalar batch and context.
    labels : sequence of str, optional
        One legend entry per cost; default ``"#i: $p/device-h"``.
    logy : bool
        Log y axis (cached input is often orders of magnitude cheaper than output).
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
        ``ax.containers[i]`` holds cost ``i``'s three bars (input, cached input, output),
        heights in USD/Mtok, labelled with ``labels[i]``.

    Raises
    ------
    TokenomicsError
        For no costs, an entry that is not a DeploymentCost, a DeploymentCost over an array of
        points (pass one per point), or labels of the wrong length.

    Examples
    --------
    >>> import tokenomics as tk
    >>> c = tk.deployment_cost(tk.Deployment("llama-3.1-70b", "h200", weight_dtype="fp8",
    ...                        compute_dtype="fp8", kv_dtype="fp8"), 64, 4096,
    ...                        usd_per_device_hour=3.0)
    >>> ax = plot_cost(c, labels=["70B fp8 on H200"])
    >>> [round(float(b.get_height()), 4) for b in ax.containers[0]] == [
    ...     round(float(c.input_usd_per_mtok), 4), round(float(c.cached_input_usd_per_mtok), 4),
    ...     round(float(c.output_usd_per_mtok), 4)]
    True
    """
    items, labels = labelled_items(
        costs, DeploymentCost, "costs", "tk.deployment_cost", labels,
        lambda i, c: f"#{i + 1}: ${c.usd_per_device_hour:.3g}/device-h")
    for i, c in enumerate(items):
        if any(np.size(getattr(c, attr)) != 1 for _, attr in _PHASES):
            raise TokenomicsError(f"costs[{i}] holds an array of points; plot_cost needs one "
                                  f"DeploymentCost per point (scalar batch and context)")

    ax = axes_or_new(ax)
    n = len(items)
    width = 0.8 / n
    pos = np.arange(len(_PHASES))
    colours = series_colours(n)
    for i, (c, lab) in enumerate(zip(items, labels, strict=True)):
        h = [float(np.asarray(getattr(c, attr), float).ravel()[0]) for _, attr in _PHASES]
        bars = ax.bar(pos + (i - (n - 1) / 2) * width, h, width=width * 0.95,
                      color=colours[i], label=lab)
        ax.bar_label(bars, labels=[usd_text(v) for v in h], fontsize=7, padding=2)
    ax.set_xticks(pos, [p for p, _ in _PHASES])
    if V.flag(logy, "logy"):
        ax.set_yscale("log")
    else:
        ax.set_ylim(bottom=0)
        ax.margins(y=0.12)
    ax.set_ylabel("Cost [USD per million tokens]")
    ax.set_title("Cost per million tokens by phase", fontsize=9)
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=7)
    return ax


# --------------------------------------------------------------------------------------------
# KV retention (S62)
# --------------------------------------------------------------------------------------------
#: The source's HBM "golden time" [min] (S62), shaded by :func:`plot_retention`.
GOLDEN_TIME_MIN = (5.0, 10.0)


def plot_retention(policies: Any, labels: Sequence[str] | None = None,
                   ax: Axes | None = None) -> Axes:
    """Expected cost of one idle gap against the HBM residence ``t1``, with the optimum.

    One curve per :class:`tokenomics.RetentionPolicy`: for each candidate ``t1`` [min] (log
    axis) the expected cost [USD] with the best drop time ``t2`` for it; a marker at the
    policy's optimum; a dotted level for "offload at once" (``t1 = 0``, not on a log axis);
    the source's 5-10 minute golden time shaded.

    Parameters
    ----------
    policies : RetentionPolicy or iterable of RetentionPolicy
        From :func:`tokenomics.retention_policy`, e.g. the stated default beside
        ``miss_usd=0``.
    labels : sequence of str, optional
        One legend entry per policy; default ``"miss $m"``.
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
        Artists by ``gid``: ``"cost_curve"`` (x in minutes, y in USD, one per policy, labelled),
        ``"optimum"`` (a one-point line at ``(t1/60, expected cost)``, or
        ``"optimum_at_once"`` at the curve's left edge when ``t1 = 0``), ``"offload_now"``
        (the ``t1 = 0`` level) and ``"golden_time"`` (the shaded span).

    Raises
    ------
    TokenomicsError
        For no policies, an entry that is not a RetentionPolicy, or labels of the wrong
        length.

    References
    ----------
    .. [1] Seed digest S62 (5-10 minute golden time; median gap 25 min).

    Examples
    --------
    >>> import tokenomics as tk
    >>> d = tk.Deployment("llama-3.1-70b", "h100-sxm", tp=8)
    >>> ax = plot_retention([tk.retention_policy(d, 119_000),
    ...                      tk.retention_policy(d, 119_000, miss_usd=0)])
    >>> [(a.get_gid(), round(float(a.get_xdata()[0]), 1)) for a in ax.get_lines()
    ...  if a.get_gid().startswith("optimum")]   # minutes; GPU time alone offloads at once
    [('optimum', 7.5), ('optimum_at_once', 0.0)]
    """
    import tokenomics as tk

    items, labels = labelled_items(policies, tk.RetentionPolicy, "policies", "tk.retention_policy",
                             labels, lambda i, p: f"miss ${p.miss_usd:.3g}")

    ax = axes_or_new(ax)
    ax.axvspan(*GOLDEN_TIME_MIN, color="0.85", zorder=0, gid="golden_time",
               label="S62 golden time (5-10 min)")
    for p, lab, colour in zip(items, labels, series_colours(len(items)), strict=True):
        t = np.asarray(p.t_grid_s, float)
        c = np.asarray(p.cost_curve_usd, float)
        on_axis = (t > 0) & np.isfinite(t)
        ax.plot(t[on_axis] / 60.0, c[on_axis], color=colour, label=lab, gid="cost_curve")
        ax.axhline(float(c[0]), color=colour, linestyle=":", linewidth=1, gid="offload_now")
        # t1 = 0 has no place on a log axis: its marker sits at the curve's left edge.
        at_once = p.t1_s == 0
        x_opt = float(t[on_axis][0]) / 60.0 if at_once else p.t1_s / 60.0
        ax.plot([x_opt], [p.expected_cost_usd], marker="o", color=colour, linestyle="none",
                gid="optimum_at_once" if at_once else "optimum")
        ax.annotate(f"t1 = {p.t1_s / 60:.3g} min, {usd_text(p.expected_cost_usd)}",
                    (x_opt, p.expected_cost_usd), textcoords="offset points", xytext=(6, 6),
                    fontsize=7, color=colour)
    ax.set_xscale("log")
    ax.set_xlabel("HBM residence t1 before offloading [min] (dotted: offload at once)")
    ax.set_ylabel("Expected cost of one idle gap [USD]")
    ax.set_title("Keep in HBM, offload, drop: expected cost per gap", fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    return ax
