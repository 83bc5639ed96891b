"""The upper envelope of decode curves over deployments, and the Pareto set on it.

Between its vertices each deployment's decode curve is a straight line in
:math:`(x, y)` = (tokens/s per user, tokens/s per device) (:mod:`tokenomics.pareto.curves`),
so the frontier over discrete choices (hardware, device count, parallelism, formats,
speculation) is the upper envelope of polylines, exact once three kinds of points are added to
the curves' vertices:

* crossings: for segments :math:`y = a_i + b_i x` of two curves the crossing is
  :math:`x = (a_j - a_i)/(b_i - b_j)` within both segments' spans; only segments whose
  x-ranges overlap are paired (:func:`_overlapping_pairs`, sorted by left end and cut with
  ``searchsorted``, not all :math:`n^2/2` pairs);
* cuts where a curve ends: the other curves' points at every curve's end interactivities, and
  the points where another curve falls to the height of a curve's end (beyond it, that end
  dominates them);
* then the points on the envelope (no curve higher at the same :math:`x`) that no other
  point dominates (:func:`pareto_mask`: a running maximum after sorting by :math:`x`).

The queries on the envelope (:func:`tokenomics.pareto.queries.best_at`, ``cheapest_at``) and
the brute-force sweep it is tested against are in :mod:`tokenomics.pareto.queries`.

References
----------
.. [1] Seed digest S23 (interactivity vs throughput trade-off along the batch).
.. [2] SemiAnalysis, "InferenceMAX" throughput-vs-interactivity curves (the form of the plot).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from tokenomics.core import checks as V
from tokenomics.core.errors import DoesNotFitError, TokenomicsError
from tokenomics.data.deployment import Deployment
from tokenomics.economics.basis import as_price_basis
from tokenomics.economics.cost import cost_per_million_tokens
from tokenomics.pareto.curves import DecodeCurve, decode_curve
from tokenomics.pareto.inputs import (
    config_columns,
    deployment_label,
    deployments_of,
    device_prices,
    price_columns,
    with_efficiency,
)

#: A frontier row before it is dressed: (curve index, batch, step time [s], x, y).
_Row = tuple[float, float, float, float, float]


def _dominated(x: np.ndarray, y: np.ndarray, rel: float = 1e-12) -> np.ndarray:
    """Mask of points dominated by another (>= in both, beyond ``rel``), vectorised.

    Sorting by ``x`` descending (ties: ``y`` descending), a point is dominated when an earlier
    point has a ``y`` at least as large: a running maximum.
    """
    order = np.lexsort((-y, -x))
    ys = y[order]
    prev = np.maximum.accumulate(np.concatenate(([-np.inf], ys[:-1])))
    finite = np.isfinite(prev)
    with np.errstate(invalid="ignore"):
        dom_sorted = finite & (ys <= np.where(finite, prev + rel * np.abs(prev), 0.0))
    dom = np.empty_like(dom_sorted)
    dom[order] = dom_sorted
    return dom


def _overlapping_pairs(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs ``(i, j)`` of intervals ``[lo, hi]`` whose interiors overlap, each once.

    Sorted by left end, interval ``i`` overlaps exactly the later ones that start before it
    ends (``searchsorted``), so only those pairs are built, not all :math:`n^2/2`.
    """
    order = np.argsort(lo, kind="stable")
    ls, hs = lo[order], hi[order]
    pos = np.arange(ls.size)
    cnt = np.maximum(np.searchsorted(ls, hs, side="left") - pos - 1, 0)
    ii = np.repeat(pos, cnt)
    jj = ii + 1 + (np.arange(int(cnt.sum())) - np.repeat(np.cumsum(cnt) - cnt, cnt))
    return order[ii], order[jj]



def _gather_curves(deps: list[Deployment], specs: list[Any], context_tokens: float,
                   on_oom: str) -> tuple[list[DecodeCurve], list[str]]:
    """Every (deployment, speculation) curve; those that do not fit raise or are listed."""
    curves, skipped = [], []
    for d in deps:
        for sp in specs:
            try:
                curves.append(decode_curve(d, context_tokens, sp))
            except DoesNotFitError as exc:
                if on_oom == "raise":
                    raise DoesNotFitError(f"{exc}; pass on_oom='skip' to leave such "
                                          "deployments out of the frontier") from None
                skipped.append(deployment_label(d, sp))
    if not curves:
        raise DoesNotFitError(f"no deployment fits one sequence of {context_tokens:g} tokens: "
                              f"{'; '.join(skipped)}")
    return curves, skipped


def _vertex_rows(curves: list[DecodeCurve]) -> list[_Row]:
    """Every curve's vertices as frontier rows."""
    rows = []
    for ci, c in enumerate(curves):
        for b, t, x, y in zip(c.batch, c.step_time_s, c.tokens_per_s_per_user,
                              c.tokens_per_s_per_device, strict=True):
            rows.append((ci, float(b), float(t), float(x), float(y)))
    return rows


def _segments(curves: list[DecodeCurve]) -> np.ndarray:
    """Each curve's straight pieces as rows (curve, piece, x left, x right, y left, y right)."""
    segs = []
    for ci, c in enumerate(curves):
        for k in range(len(c.batch) - 1):
            x0, x1 = c.tokens_per_s_per_user[k], c.tokens_per_s_per_user[k + 1]
            y0, y1 = c.tokens_per_s_per_device[k], c.tokens_per_s_per_device[k + 1]
            segs.append((ci, k, x1, x0, y1, y0))  # x1 < x0 (x falls with batch)
    return np.asarray(segs, float)


def _segment_crossings(s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(curve index, x) of every crossing between segments of different curves.

    Segments :math:`y = a_i + b_i x` cross at :math:`x = (a_j - a_i)/(b_i - b_j)`, kept when
    strictly inside both segments' x-ranges; the point is reported on segment ``i``'s curve.
    """
    cid, xl, xr, yl, yr = s[:, 0], s[:, 2], s[:, 3], s[:, 4], s[:, 5]
    slope = (yr - yl) / np.where(xr > xl, xr - xl, np.inf)
    icpt = yl - slope * xl
    i, j = _overlapping_pairs(xl, xr)
    keep = cid[i] != cid[j]
    i, j = i[keep], j[keep]
    ds = slope[i] - slope[j]
    ok = np.abs(ds) > 1e-300
    i, j, ds = i[ok], j[ok], ds[ok]
    xc = (icpt[j] - icpt[i]) / ds
    inside = ((xc > np.maximum(xl[i], xl[j])) & (xc < np.minimum(xr[i], xr[j])))
    return cid[i[inside]].astype(int), xc[inside]


def _crossing_rows(curves: list[DecodeCurve], keep: list[int]) -> list[_Row]:
    """Frontier rows at the crossings between the curves that reach the envelope (``keep``,
    :func:`_envelope_curves`; none with a single curve)."""
    if len(curves) <= 1:
        return []
    sub = [curves[i] for i in keep]
    s = _segments(sub)
    if not len(s):
        return []
    at, xs = _segment_crossings(s)
    rows: list[_Row] = []
    for si in np.unique(at):
        c, ci = sub[int(si)], keep[int(si)]
        xv = xs[at == si]
        b = np.asarray(c.batch_at_step_time(c.tokens_per_step / xv), float)
        rows.extend(zip(np.full(xv.size, float(ci)), b.tolist(),
                        (c.tokens_per_step / xv).tolist(), xv.tolist(),
                        (b * xv / c.deployment.n_devices).tolist(), strict=True))
    return rows


#: One curve's values on a slice of sorted points: (first, past the last, values).
_Part = tuple[int, int, np.ndarray]


def _heights_part(c: DecodeCurve, x: np.ndarray) -> _Part:
    """Tokens/s per device of curve ``c`` at the sorted interactivities ``x`` it spans."""
    cx, cy = c.tokens_per_s_per_user[::-1], c.tokens_per_s_per_device[::-1]
    lo, hi = np.searchsorted(x, cx[0], "left"), np.searchsorted(x, cx[-1], "right")
    return int(lo), int(hi), np.interp(x[lo:hi], cx, cy)


def _tops(parts: Any, n: int, size: int) -> list[tuple[int, int]]:
    """(curve, point) of every value within 1e-12 of the largest at its point, given each
    curve's values on a slice of the points (``parts(i)``, a :data:`_Part`): a running
    maximum, then a second pass, so no (curves x points) table is built."""
    best = np.full(size, -np.inf)
    for i in range(n):
        lo, hi, v = parts(i)
        if hi > lo:
            np.maximum(best[lo:hi], v, out=best[lo:hi])
    floor = best - 1e-12 * np.abs(best)
    out: list[tuple[int, int]] = []
    for i in range(n):
        lo, hi, v = parts(i)
        out.extend((i, lo + int(j)) for j in np.flatnonzero(v >= floor[lo:hi]))
    return out


def _envelope_curves(curves: list[DecodeCurve]) -> list[int]:
    """Indices of the curves that reach the upper envelope somewhere (the others cannot add
    a crossing to the frontier).

    Between consecutive vertex interactivities of all curves every curve is one straight
    line, and the envelope of a set of lines is convex; a line above that envelope anywhere
    is above it at one of its vertices (the difference is concave and piecewise linear). So:
    take the curves highest at some vertex of any curve, add the crossings among them, take
    the curves highest there, and repeat until none is added. Exact, and it pairs only the
    segments of the few curves on top instead of every overlapping pair.
    """
    x = np.unique(np.concatenate([c.tokens_per_s_per_user for c in curves]))
    keep: set[int] = set()
    while x.size:
        new = {i for i, _ in _tops(lambda i, x=x: _heights_part(curves[i], x), len(curves),
                                   x.size)} - keep
        if not new:
            break
        keep |= new
        idx = sorted(keep)
        s = _segments([curves[i] for i in idx])
        x = np.unique(_segment_crossings(s)[1]) if len(s) else np.empty(0)
    return sorted(keep)


def _point_row(ci: int, c: DecodeCurve, xv: float, yv: float) -> _Row:
    """The frontier row of curve ``c`` at interactivity ``xv`` and throughput ``yv``."""
    n_dev = c.deployment.n_devices
    return (ci, float(yv * n_dev / xv), c.tokens_per_step / xv, xv, float(yv))


def _rows_at_heights(ci: int, c: DecodeCurve, heights: list[float]) -> list[_Row]:
    """Points where curve ``c`` falls to each height (inverting y(x) on straight segments),
    every (height, segment) pair at once."""
    cx, cy = c.tokens_per_s_per_user, c.tokens_per_s_per_device
    Y = np.asarray(heights, float)[:, None]
    lo, hi = cy[:-1][None, :], cy[1:][None, :]
    hit_y, seg = np.nonzero((lo <= Y) & (hi >= Y) & (hi > lo))   # by height, then segment
    if not len(seg):
        return []
    w = (Y[hit_y, 0] - cy[seg]) / (cy[seg + 1] - cy[seg])
    xv = cx[seg] + w * (cx[seg + 1] - cx[seg])
    yv = c.throughput_at(xv)
    return [_point_row(ci, c, float(a), float(b))
            for a, b in zip(xv, yv, strict=True) if np.isfinite(b)]


def _end_rows(curves: list[DecodeCurve]) -> list[_Row]:
    """Cuts where a curve ends, below which the envelope may step down to another curve.

    At every curve's end interactivities the highest curve's point, and at the height of
    every curve's last vertex the point furthest right where a curve falls to it (beyond
    it, that end dominates them); a lower point at the same interactivity, or a point left
    of another at the same height, is never on the frontier, so only the top ones are kept.
    """
    if len(curves) <= 1:
        return []
    ends_x = np.unique([float(c.tokens_per_s_per_user[k]) for c in curves for k in (0, -1)])
    ends_y = sorted({float(c.tokens_per_s_per_device[-1]) for c in curves})
    tops = _tops(lambda i: _heights_part(curves[i], ends_x), len(curves), ends_x.size)
    ys = {i: _heights_part(curves[i], ends_x) for i in {i for i, _ in tops}}
    rows = [_point_row(ci, curves[ci], float(ends_x[j]), float(ys[ci][2][j - ys[ci][0]]))
            for ci, j in tops]
    H = np.asarray(ends_y)
    rising = [bool(np.all(np.diff(c.tokens_per_s_per_device) > 0)) for c in curves]
    for ci, c in enumerate(curves):
        if not rising[ci]:                    # not monotone: every crossing of every height
            rows.extend(_rows_at_heights(ci, c, ends_y))

    def at_heights(i: int) -> _Part:          # where a rising curve reaches each height
        if not rising[i]:
            return 0, 0, np.empty(0)
        cx, cy = curves[i].tokens_per_s_per_user, curves[i].tokens_per_s_per_device
        lo, hi = np.searchsorted(H, cy[0], "left"), np.searchsorted(H, cy[-1], "right")
        return int(lo), int(hi), np.interp(H[lo:hi], cy, cx)

    tops = _tops(at_heights, len(curves), H.size)
    xs = {i: at_heights(i) for i in {i for i, _ in tops}}
    rows.extend(_point_row(ci, curves[ci], float(xs[ci][2][j - xs[ci][0]]), float(H[j]))
                for ci, j in tops)
    return rows


def _off_frontier(rows: list[_Row], curves: list[DecodeCurve]) -> np.ndarray:
    """Mask of rows below the envelope (a curve higher at the same x) or dominated; only
    the curves that reach the envelope can be higher (``curves`` may be just those)."""
    arr = np.asarray(rows, float)
    x, y = arr[:, 3], arr[:, 4]
    off = _dominated(x, y)
    keep = np.flatnonzero(~off)      # a dominated row is off whatever the envelope: test the rest
    xs = x[keep]
    env = np.fmax.reduce(np.vstack([c.throughput_at(xs) for c in curves]), axis=0)
    off[keep] = y[keep] < env * (1 - 1e-12)
    return off


def _curve_columns(cur: DecodeCurve, priced: dict[str, Any],
                   context_tokens: float) -> dict[str, Any]:
    """The columns every frontier row of one curve shares: its label, configuration and
    price (and its device's TDP, under ``"_tdp"``)."""
    dep = cur.deployment
    return dict(label=deployment_label(dep, cur.speculation), **config_columns(dep),
                speculation_k=int(cur.speculation["k"]) if cur.speculation else 0,
                context_tokens=float(context_tokens),
                **price_columns(priced.get(dep.hardware.id)),
                _tdp=float(dep.hardware.tdp_w) if dep.hardware.tdp_w else math.nan)


def _frontier_frame(curves: list[DecodeCurve], rows: list[_Row], off: np.ndarray,
                    priced: dict[str, Any], include_dominated: bool,
                    context_tokens: float) -> pd.DataFrame:
    """The frontier table, sorted by interactivity (dominated rows flagged or dropped): the
    point, its cost and energy (at TDP), its configuration and price."""
    arr = np.asarray(rows, float).reshape(-1, 5)
    flags = np.asarray(off, bool)
    if not include_dominated:
        arr, flags = arr[~flags], flags[~flags]
    ci = arr[:, 0].astype(int)
    shared = {int(i): _curve_columns(curves[int(i)], priced, context_tokens)
              for i in np.unique(ci)}
    y = arr[:, 4]
    price = np.array([shared[i]["price_usd_per_device_hour"] for i in ci], float)
    cost = np.full(y.shape, np.nan)
    ok = np.isfinite(price)
    if ok.any():
        cost[ok] = cost_per_million_tokens(price[ok], y[ok])
    tdp = np.array([shared[i]["_tdp"] for i in ci], float)
    cols: dict[str, Any] = dict(tokens_per_s_per_user=arr[:, 3], tokens_per_s_per_device=y,
                                step_time_s=arr[:, 2], batch=arr[:, 1],
                                cost_usd_per_mtok=cost, joules_per_token=tdp / y)
    names = [k for k in next(iter(shared.values())) if k != "_tdp"] if shared else []
    for k in names:
        cols[k] = [shared[i][k] for i in ci]
    if include_dominated:
        cols["dominated"] = flags
    return pd.DataFrame(cols).sort_values("tokens_per_s_per_user").reset_index(drop=True)


def frontier(deployments: Any, context_tokens: float, prices: dict[str, float] | None = None,
             include_dominated: bool = False,
             speculation: Any = (None,), efficiency: Any = "deployment",
             on_oom: str = "raise", price_basis: Any = None) -> pd.DataFrame:
    """Upper envelope of the decode curves of several deployments (closed form).

    Parameters
    ----------
    deployments : Deployment, iterable of Deployment, or DataFrame from a sweep
        The discrete choices. A sweep's rows (:func:`tokenomics.pareto.queries.sweep`) are
        reduced to their deployments.
    context_tokens : float
        KV length per sequence [token].
    prices : dict, optional
        USD per device-hour by hardware id; they win over the catalog. Other devices are
        priced on ``price_basis`` (NaN cost where the catalog has no price on it).
    include_dominated : bool
        Keep every curve's vertices (with a ``dominated`` flag) instead of the envelope only.
    speculation : sequence of (dict or None)
        Speculative-decoding options crossed with every deployment (see
        :func:`tokenomics.pareto.curves.decode_curve`), e.g.
        ``(None, dict(k=4, alpha=0.8, draft_fraction=0.01))`` for on/off.
    efficiency : {"calibrated", "roofline", "deployment"} or Efficiency
        Efficiency model applied to every deployment: the calibrated forecast, the pure
        roofline bound, each deployment's own (default, as every function of the library:
        a :class:`~tokenomics.Deployment` is the bound unless given an efficiency), or a
        given one. The ``efficiency`` column says which.
    on_oom : {"raise", "skip"}
        A deployment where not one sequence fits: raise :class:`DoesNotFitError` (default),
        or leave it out and list it in ``result.attrs["skipped"]`` (a sweep over layouts).
        With every deployment left out, raise anyway.
    price_basis : PriceBasis, str, sequence of str or None
        Tier and date policy of catalog prices (:mod:`tokenomics.economics.basis`); default
        neocloud, else hyperscaler, on-demand, latest. Devices resolved to different tiers
        warn (``UserWarning``).

    Returns
    -------
    pandas.DataFrame
        One row per envelope vertex, sorted by interactivity: ``tokens_per_s_per_user``,
        ``tokens_per_s_per_device``, ``step_time_s``, ``batch``, ``cost_usd_per_mtok``,
        ``joules_per_token`` (at TDP), ``label`` and the configuration columns (``model``,
        ``hardware``, ``n_devices``, ``tp``, ``pp``, ``ep``, ``dp_attention``, formats,
        ``context_tokens``), and the price used: ``price_usd_per_device_hour``, ``price_tier``,
        ``price_date`` (``attrs["price_basis"]`` names the basis). Vertices include the
        crossings where one curve overtakes another.

    Notes
    -----
    Between vertices a curve is a straight line in (x, y) (:mod:`tokenomics.pareto.curves`),
    so the envelope of polylines is exact once crossing points are added: for segments
    :math:`y = a_i + b_i x` the crossing is :math:`x = (a_j - a_i)/(b_i - b_j)`; then the
    cuts where curves end and the Pareto set (module notes).

    References
    ----------
    .. [1] Seed digest S23.

    Examples
    --------
    >>> import tokenomics as tk
    >>> f = frontier([tk.Deployment("llama-3.1-8b", "h100-sxm"),
    ...               tk.Deployment("llama-3.1-8b", "h200")], 2048)
    >>> bool((f.hardware == "h200").any())
    True
    """
    if not isinstance(include_dominated, (bool, np.bool_)):
        raise TokenomicsError(f"include_dominated must be True or False, got "
                              f"{include_dominated!r}")
    deps = with_efficiency(deployments_of(deployments), efficiency)
    context_tokens = float(V.single_whole(context_tokens, "context_tokens", unit="token"))
    if speculation is not None and not isinstance(speculation, (list, tuple)):
        raise TokenomicsError(f"speculation must be a list of options (dicts, or None for plain "
                              f"decode), got {speculation!r}")
    specs = list(speculation) if speculation is not None else [None]
    if not specs:
        raise TokenomicsError("speculation must list at least one option (None: off)")
    if not isinstance(on_oom, str) or on_oom not in ("raise", "skip"):
        raise TokenomicsError(f"on_oom must be 'raise' or 'skip', got {on_oom!r}")
    curves, skipped = _gather_curves(deps, specs, context_tokens, on_oom)
    top = _envelope_curves(curves) if len(curves) > 1 else [0]
    rows = _vertex_rows(curves) + _crossing_rows(curves, top) + _end_rows(curves)
    priced = device_prices([c.deployment for c in curves], prices, price_basis)
    off = _off_frontier(rows, [curves[i] for i in top])
    df = _frontier_frame(curves, rows, off, priced, include_dominated, context_tokens)
    df.attrs["skipped"] = skipped
    df.attrs["price_basis"] = as_price_basis(price_basis).label
    return df


def crossings(a: DecodeCurve | Deployment, b: DecodeCurve | Deployment,
              context_tokens: float | None = None) -> pd.DataFrame:
    """Where two curves cross: the interactivities at which the better one changes.

    Parameters
    ----------
    a, b : DecodeCurve or Deployment
        Curves (or deployments, then ``context_tokens`` is required).
    context_tokens : float, optional
        KV length of every sequence [token] at which deployments' curves are computed
        (:func:`decode_curve`); ignored for curves.

    Returns
    -------
    pandas.DataFrame
        ``tokens_per_s_per_user``, ``tokens_per_s_per_device`` of every crossing, and
        ``better_below`` (the label of the curve ahead at lower interactivity).

    Notes
    -----
    Both curves are straight lines in (x, y) between their vertices, so crossings are exact:
    for segments :math:`y = p_i + q_i x` the crossing is :math:`x = (p_j - p_i)/(q_i - q_j)`
    within both segments' spans.

    Examples
    --------
    >>> import tokenomics as tk
    >>> x = crossings(tk.Deployment("llama-3.1-70b", "h200", tp=4, weight_dtype="fp8",
    ...                             compute_dtype="fp8"),
    ...               tk.Deployment("llama-3.1-70b", "h200", tp=8, weight_dtype="fp8",
    ...                             compute_dtype="fp8"), context_tokens=4096)
    >>> list(x.columns)
    ['tokens_per_s_per_user', 'tokens_per_s_per_device', 'better_below']
    """
    cs = []
    for c in (a, b):
        if isinstance(c, DecodeCurve):
            cs.append(c)
        else:
            if context_tokens is None:
                raise TokenomicsError("context_tokens is required when giving deployments")
            cs.append(decode_curve(c, context_tokens))
    ca, cb = cs

    def segs(c: DecodeCurve) -> np.ndarray:
        x, y = c.tokens_per_s_per_user[::-1], c.tokens_per_s_per_device[::-1]
        q = np.diff(y) / np.diff(x)
        return np.column_stack([x[:-1], x[1:], y[:-1] - q * x[:-1], q])

    sa, sb = segs(ca), segs(cb)
    rows = []
    for xa0, xa1, pa, qa in sa:
        for xb0, xb1, pb, qb in sb:
            if abs(qa - qb) < 1e-300:
                continue
            x = (pb - pa) / (qa - qb)
            if max(xa0, xb0) < x < min(xa1, xb1):
                below = ca if (pa + qa * (x * 0.999)) > (pb + qb * (x * 0.999)) else cb
                rows.append(dict(tokens_per_s_per_user=x, tokens_per_s_per_device=pa + qa * x,
                                 better_below=deployment_label(below.deployment, below.speculation)))
    return pd.DataFrame(rows, columns=["tokens_per_s_per_user", "tokens_per_s_per_device",
                                       "better_below"])


def pareto_mask(x: Any, y: Any) -> np.ndarray:
    """Mask of the non-dominated points (higher ``x`` and higher ``y`` are both better).

    Parameters
    ----------
    x, y : array_like
        The two objectives of each point (e.g. tokens/s per user and per device), same
        length.

    Returns
    -------
    numpy.ndarray of bool
        True where no other point is at least as good in both and better in one.

    Examples
    --------
    >>> pareto_mask([1, 2, 3], [3, 2, 1]).tolist()
    [True, True, True]
    >>> pareto_mask([1, 2], [1, 2]).tolist()
    [False, True]
    """
    pair = []
    for v, name in ((x, "x"), (y, "y")):
        try:
            a = np.asarray(v, float).ravel()
        except (TypeError, ValueError):
            raise TokenomicsError(f"pareto_mask: {name} must be numbers, got {v!r}") from None
        if not np.isfinite(a).all():
            raise TokenomicsError(f"pareto_mask: {name} must be finite, got {v!r}")
        pair.append(a)
    if pair[0].shape != pair[1].shape:
        raise TokenomicsError(f"pareto_mask: x and y must be the same length, got "
                              f"{pair[0].size} and {pair[1].size}")
    return ~_dominated(*pair)
