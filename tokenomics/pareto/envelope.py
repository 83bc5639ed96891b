"""Pareto frontiers of throughput per device against tokens per second per user.

For one deployment at a fixed context, the decode step time :math:`t(B)` is a sum of
per-operator maxima of terms linear in the batch (weights, KV, activations, FLOPs), plus
communication (a minimum over all-reduce algorithms of terms linear in the batch) and fixed
overheads: a **piecewise-linear**, increasing function of :math:`B` whose kinks are where an
operator turns from memory- to compute-bound or the fastest collective algorithm changes, cut
off where memory runs out. With :math:`x = 1/t` (tokens/s per user) and
:math:`y = B/(n\\,t)` (tokens/s per device), on a piece :math:`t = \\alpha B + \\beta`:

.. math:: y = \\frac{1 - \\beta x}{\\alpha n},

a straight line in :math:`(x, y)`. So each deployment's curve is a polyline through its kinks
(:func:`decode_curve`), the frontier over discrete choices (hardware, device count,
parallelism, formats) is the upper envelope of polylines (:func:`frontier`), and the best
throughput at an interactivity floor (:func:`best_at`, S23's "vertical line at 100") is found by
inverting :math:`t` on the right piece, with no grid. MoE's distinct-expert term
:math:`E(1 - (1 - k/E)^{B})` is not linear: its curve starts from the kinks plus the batches
where 50/75/90/99% of the experts are touched, and pieces are halved until each chord is within
``CURVE_RTOL`` (1e-4, relative) of the exact step time at its midpoint; :func:`best_at` inverts
the exact step time by bisection on the integer batch.

:mod:`tokenomics.pareto.symbolic` derives the per-piece line with SymPy as an oracle; the brute-force
:func:`sweep` over integer batches is the reference the closed form is tested against.

References
----------
.. [1] Seed digest S23 (interactivity vs throughput trade-off along the batch; the SLO is a
   vertical line).
.. [2] SemiAnalysis, "InferenceMAX" throughput-vs-interactivity curves (the form of the plot).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from tokenomics.core import checks as V
from tokenomics.core.errors import DoesNotFitError, NotPublishedError, TokenomicsError
from tokenomics.data.deployment import Deployment
from tokenomics.data.interconnect import ALGORITHMS
from tokenomics.data.specs import rental_price
from tokenomics.economics.cost import cost_per_million_tokens
from tokenomics.physics.collectives import step_comm
from tokenomics.physics.engine import step_seconds
from tokenomics.physics.formulas import distinct_experts, tokens_for_distinct_fraction
from tokenomics.physics.memory import max_batch
from tokenomics.physics.operators import OPERATORS, step_costs

_MOE_FRACTIONS = (0.5, 0.75, 0.9, 0.99)


def _step_time(dep: Deployment, B: Any, C: float, T: float = 1.0) -> np.ndarray:
    """Exact decode step time at real-valued batch ``B``, ``T`` tokens per sequence [s]."""
    b = np.asarray(B, float) / dep.pp
    return step_seconds(dep, step_costs(dep, b, T, C, T), b, T, T, "decode")


def _kinks(dep: Deployment, C: float, b_max: float, T: float = 1.0) -> list[float]:
    """Batches (real-valued, in (1, b_max)) where the piecewise-linear step time bends."""
    eff = dep.efficiency
    peak = dep.hardware.peak(dep.compute_dtype) * eff.mfu
    bw = dep.hardware.mem_bw_bytes_per_s * eff.mbu
    pp = dep.pp
    one = {o.name: o for o in step_costs(dep, 1.0, T, C, T)}
    two = {o.name: o for o in step_costs(dep, 2.0, T, C, T)}
    out: list[float] = []
    for name in OPERATORS:
        if name == "moe_experts" and dep.model.is_moe:
            continue
        f1 = float(two[name].flops - one[name].flops) / (dep.tp * peak)
        q1 = float(two[name].bytes - one[name].bytes) / (dep.tp * bw)
        q0 = float(one[name].bytes) / (dep.tp * bw) - q1
        f0 = float(one[name].flops) / (dep.tp * peak) - f1
        # compute f0 + f1 b = memory q0 + q1 b
        if f1 - q1 > 1e-30:
            b = (q0 - f0) / (f1 - q1)
            out.append(b * pp)
    if dep.model.is_moe:
        # Expert op: compute linear in b, bytes q0 + c D(b): find the crossing numerically.
        from scipy.optimize import brentq

        m = dep.model.moe
        assert m is not None
        f1 = float(two["moe_experts"].flops - one["moe_experts"].flops) / (dep.tp * peak)
        wb = float(one["moe_experts"].weight_bytes) / float(distinct_experts(m.num_experts,
                                                                              m.top_k, T))
        act1 = float(two["moe_experts"].act_bytes - one["moe_experts"].act_bytes)

        def g(b: float) -> float:
            d = float(distinct_experts(m.num_experts, m.top_k, b * T))
            return f1 * b - (wb * d + act1 * b) / (dep.tp * bw)

        lo, hi = 1.0 / pp, b_max / pp
        if g(lo) < 0 < g(hi):
            out.append(brentq(g, lo, hi) * pp)
        for frac in _MOE_FRACTIONS:
            k, E = m.top_k, m.num_experts
            if k < E:
                b = tokens_for_distinct_fraction(E, k, frac) / T
                out.append(b * pp)
    # Communication: where the fastest all-reduce algorithm changes (lines cross).
    # Each collective picks its own fastest algorithm, so kinks come per collective.
    if dep.allreduce_algorithm == "auto" and dep.tp > 1:
        lines: dict[str, list[tuple[float, float]]] = {}
        for a in ALGORITHMS:
            d = dep.with_(allreduce_algorithm=a)
            c1 = {c.name: float(c.time_s) for c in step_comm(d, 1.0, T, T, "decode")}
            c2 = {c.name: float(c.time_s) for c in step_comm(d, 2.0, T, T, "decode")}
            for name in c1:
                lines.setdefault(name, []).append((2 * c1[name] - c2[name], c2[name] - c1[name]))
        for ls in lines.values():
            for i in range(len(ls)):
                for j in range(i + 1, len(ls)):
                    (a0, a1), (b0, b1) = ls[i], ls[j]
                    if abs(a1 - b1) > 1e-30:
                        out.append((b0 - a0) / (a1 - b1) * pp)
    return sorted(x for x in out if 1.0 < x < b_max)


#: Largest relative gap allowed between a curve's chord and the exact step time at the midpoint
#: of any piece (MoE's distinct-expert term is curved; dense pieces are straight already).
CURVE_RTOL = 1e-4
_MAX_VERTICES = 20_000


def _refine_vertices(B: np.ndarray, t: np.ndarray, time: Any,
                     rtol: float = CURVE_RTOL) -> tuple[np.ndarray, np.ndarray]:
    """Insert midpoints until every piece's chord is within ``rtol`` of the exact time there.

    Each round evaluates the exact step time at the midpoints of all pieces at once and keeps
    those where the chord misses by more than ``rtol`` (relative); a straight piece passes at
    once, so dense curves cost one extra evaluation. Stops at ``_MAX_VERTICES``.
    """
    while len(B) < _MAX_VERTICES:
        mid = 0.5 * (B[:-1] + B[1:])
        wide = np.diff(B) > 1e-9 * B[1:]
        tm = np.asarray(time(mid[wide]), float)
        chord = 0.5 * (t[:-1] + t[1:])[wide]
        bad = np.abs(chord - tm) > rtol * tm
        if not bad.any():
            break
        B = np.concatenate([B, mid[wide][bad]])
        t = np.concatenate([t, tm[bad]])
        order = np.argsort(B, kind="stable")
        B, t = B[order], t[order]
    return B, t


def _spec(speculation: dict[str, float] | None) -> tuple[int, float]:
    """(k, expected tokens per cycle) of a speculation option; (0, 1) without one."""
    if not speculation:
        return 0, 1.0
    from tokenomics.serving.speculative import expected_accepted_tokens

    allowed = {"k", "alpha", "accepted_tokens", "draft_fraction", "draft_step_time_s"}
    bad = set(speculation) - allowed
    if bad:
        raise TokenomicsError(f"unknown speculation key(s) {', '.join(sorted(bad))}; allowed: "
                              f"{', '.join(sorted(allowed))}")
    k = int(speculation.get("k", 0))
    if k < 1:
        raise TokenomicsError(f"speculation needs k >= 1 drafted tokens, got {k}")
    if ("alpha" in speculation) == ("accepted_tokens" in speculation):
        raise TokenomicsError("speculation needs exactly one of alpha and accepted_tokens")
    if ("draft_fraction" in speculation) == ("draft_step_time_s" in speculation):
        raise TokenomicsError("speculation needs exactly one of draft_fraction and "
                              "draft_step_time_s")
    e = (float(expected_accepted_tokens(speculation["alpha"], k)) if "alpha" in speculation
         else float(speculation["accepted_tokens"]))
    if not (1 <= e <= k + 1):
        raise TokenomicsError(f"accepted tokens per cycle must be in [1, k + 1], got {e}")
    return k, e


def _cycle_time(dep: Deployment, B: Any, C: float,
                speculation: dict[str, float] | None) -> np.ndarray:
    """Plain decode step, or draft steps plus a (k + 1)-token verification pass [s]."""
    k, _ = _spec(speculation)
    if not k:
        return _step_time(dep, B, C)
    assert speculation is not None
    verify = _step_time(dep, B, C, float(k + 1))
    if "draft_fraction" in speculation:
        draft = float(speculation["draft_fraction"]) * _step_time(dep, B, C)
    else:
        draft = np.full_like(verify, float(speculation["draft_step_time_s"]))
    return np.asarray(k * draft + verify, float)


@dataclass(frozen=True)
class DecodeCurve:
    """One deployment's throughput-interactivity curve at a context.

    Attributes
    ----------
    deployment : Deployment
    context_tokens : float
    batch : numpy.ndarray
        Vertices of the curve: 1, every kink, the points that bring a curved (MoE) piece's
        chord within ``CURVE_RTOL`` of the exact step time, and the largest batch that fits
        [sequences] (real-valued; the step time is exact at each).
    step_time_s : numpy.ndarray
    tokens_per_s_per_user : numpy.ndarray
    tokens_per_s_per_device : numpy.ndarray
    max_batch : int
        Largest whole batch that fits memory.
    tokens_per_step : float
        Tokens each sequence emits per step: 1, or the expected accepted tokens per
        speculative cycle.
    speculation : dict or None
        The speculative-decoding option of this curve (``k``, ``alpha`` or
        ``accepted_tokens``, ``draft_fraction`` or ``draft_step_time_s``).
    """

    deployment: Deployment
    context_tokens: float
    batch: np.ndarray
    step_time_s: np.ndarray
    tokens_per_s_per_user: np.ndarray
    tokens_per_s_per_device: np.ndarray
    max_batch: int
    tokens_per_step: float = 1.0
    speculation: dict[str, float] | None = None

    def time_at(self, batch: Any) -> Any:
        """Exact step (or speculative cycle) time at a real-valued batch [s]."""
        return _cycle_time(self.deployment, batch, self.context_tokens, self.speculation)

    def batch_at_step_time(self, t: Any) -> Any:
        """Real batch whose step time is ``t`` (inverse on the linear pieces) [seq]; NaN
        outside the curve's range of step times."""
        tt = np.asarray(t, float)
        b = np.interp(tt, self.step_time_s, self.batch)
        lo, hi = self.step_time_s[0], self.step_time_s[-1]
        inside = (tt >= lo * (1 - 1e-12)) & (tt <= hi * (1 + 1e-12))
        return np.where(inside, b, np.nan)

    def throughput_at(self, tokens_per_s_per_user: Any) -> Any:
        """Tokens/s per device on this curve at an interactivity [token/s]; NaN off the curve.

        Exact on linear pieces: :math:`y = (1 - \\beta x)/(\\alpha n)`.
        """
        x = np.asarray(tokens_per_s_per_user, float)
        b = self.batch_at_step_time(self.tokens_per_step / x)
        return b * x / self.deployment.n_devices


def decode_curve(dep: Deployment, context_tokens: float,
                 speculation: dict[str, float] | None = None) -> DecodeCurve:
    """The vertices of a deployment's decode curve at a context (closed form, no grid).

    Parameters
    ----------
    dep : Deployment
    context_tokens : float
        KV length per sequence [token].
    speculation : dict, optional
        Speculative decoding on this curve: ``k`` drafted tokens, ``alpha`` (per-token
        acceptance) or ``accepted_tokens`` (per cycle), and ``draft_fraction`` (a draft step as
        a fraction of a plain step) or ``draft_step_time_s``. A cycle then takes
        :math:`k\\,t_{draft}(B) + t_{verify}(B)`, both piecewise linear in :math:`B`, and emits
        :math:`E` tokens per sequence: :math:`x = E/t`, :math:`y = B E/(n t)`.

    Returns
    -------
    DecodeCurve

    Raises
    ------
    DoesNotFitError
        (as :func:`tokenomics.max_batch` reports 0) when not one sequence fits.

    Notes
    -----
    Kinks: operator :math:`o` turns compute-bound at
    :math:`b^* = (q_0 - f_0)/(f_1 - q_1)` (its compute time :math:`f_0 + f_1 b` meets its
    memory time :math:`q_0 + q_1 b`); collective algorithms swap where their lines cross; MoE
    experts cross where :math:`f_1 b = (w D(b) + a b)/\\beta`. Batches are scaled by ``pp``
    (micro-batches). Curved pieces (MoE) are then halved until every chord is within
    ``CURVE_RTOL`` of the exact time at its midpoint.

    References
    ----------
    .. [1] Seed digest S23.

    Examples
    --------
    >>> import tokenomics as tk
    >>> c = decode_curve(tk.Deployment("llama-3.1-8b", "h100-sxm"), 2048)
    >>> bool(np.all(np.diff(c.tokens_per_s_per_user) < 0))   # slower per user as B grows
    True
    """
    C = float(V.counts(context_tokens, "context_tokens", unit="token"))
    V.context_within(dep.model, np.asarray(C), dep.allow_beyond_max_context)
    k, E = _spec(speculation)
    bm = int(max_batch(dep, C + k))
    if k and bm >= 1:
        from tokenomics.physics.memory import memory_fit

        while bm >= 1 and not bool(memory_fit(dep, bm, C + k,
                                              tokens_per_step=bm * (k + 1)).fits):
            bm -= 1
    if bm < 1:
        raise DoesNotFitError(f"{dep.model.id} on {dep.n_devices} x {dep.hardware.id}: not one "
                              f"sequence of {C:g} tokens fits beside the weights")
    kinks = _kinks(dep, C, float(bm))
    if k:
        kinks += _kinks(dep, C, float(bm), float(k + 1))
    B = np.asarray(sorted({1.0, float(bm), *kinks}))
    t = _cycle_time(dep, B, C, speculation)
    B, t = _refine_vertices(B, t, lambda b: _cycle_time(dep, b, C, speculation))
    return DecodeCurve(deployment=dep, context_tokens=C, batch=B, step_time_s=t,
                       tokens_per_s_per_user=E / t,
                       tokens_per_s_per_device=B * E / t / dep.n_devices, max_batch=bm,
                       tokens_per_step=E, speculation=dict(speculation) if (k and speculation) else None)


def _with_efficiency(deps: list[Deployment], efficiency: Any) -> list[Deployment]:
    """Apply an efficiency preset to every deployment (``"deployment"``: keep their own)."""
    if efficiency == "deployment":
        return deps
    from tokenomics.calibration.fitting import efficiency_presets
    from tokenomics.data.specs import Efficiency

    if isinstance(efficiency, Efficiency):
        e = efficiency
    else:
        presets = efficiency_presets()
        if efficiency not in presets:
            raise TokenomicsError(f"efficiency must be 'calibrated', 'roofline', 'deployment' or "
                                  f"an Efficiency, got {efficiency!r}")
        e = presets[efficiency]
    return [d.with_(efficiency=e) for d in deps]


def _efficiency_label(dep: Deployment) -> str:
    from tokenomics.calibration.fitting import efficiency_presets

    for name, e in efficiency_presets().items():
        if dep.efficiency == e:
            return name
    return "custom"


def _config(dep: Deployment) -> dict[str, Any]:
    return dict(model=dep.model.id, hardware=dep.hardware.id, n_devices=dep.n_devices,
                tp=dep.tp, pp=dep.pp, ep=dep.ep, dp_attention=dep.dp_attention,
                weight_dtype=dep.weight_dtype, kv_dtype=dep.kv_dtype,
                compute_dtype=dep.compute_dtype, efficiency=_efficiency_label(dep))


def _price(dep: Deployment, prices: dict[str, float] | None) -> float:
    if prices and dep.hardware.id in prices:
        return float(prices[dep.hardware.id])
    try:
        return rental_price(dep.hardware).usd
    except NotPublishedError:
        return float("nan")


def _label(dep: Deployment, speculation: dict[str, float] | None = None) -> str:
    spec = ""
    if speculation:
        spec = f" spec k={int(speculation['k'])}"
    return (f"{dep.model.id} | {dep.n_devices}x{dep.hardware.id} tp{dep.tp}" + spec
            + (f" pp{dep.pp}" if dep.pp > 1 else "") + (f" ep{dep.ep}" if dep.ep > 1 else "")
            + (f" dpa{dep.dp_attention}" if dep.dp_attention > 1 else "")
            + f" {dep.weight_dtype}/{dep.kv_dtype}/{dep.compute_dtype}")


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


def frontier(deployments: Any, context_tokens: float, prices: dict[str, float] | None = None,
             include_dominated: bool = False,
             speculation: Any = (None,), efficiency: Any = "calibrated",
             on_oom: str = "raise") -> pd.DataFrame:
    """Upper envelope of the decode curves of several deployments (closed form).

    Parameters
    ----------
    deployments : Deployment, iterable of Deployment, or DataFrame from :func:`sweep`
        The discrete choices. A sweep's rows are reduced to their deployments.
    context_tokens : float
        KV length per sequence [token].
    prices : dict, optional
        USD per device-hour by hardware id; default each device's latest catalog rental price
        (NaN cost where none is published).
    include_dominated : bool
        Keep every curve's vertices (with a ``dominated`` flag) instead of the envelope only.
    speculation : sequence of (dict or None)
        Speculative-decoding options crossed with every deployment (see :func:`decode_curve`),
        e.g. ``(None, dict(k=4, alpha=0.8, draft_fraction=0.01))`` for on/off.
    efficiency : {"calibrated", "roofline", "deployment"} or Efficiency
        Efficiency model applied to every deployment: the calibrated forecast (default),
        the pure roofline bound, each deployment's own, or a given one. The ``efficiency``
        column says which.
    on_oom : {"raise", "skip"}
        A deployment where not one sequence fits: raise :class:`DoesNotFitError` (default),
        or leave it out and list it in ``result.attrs["skipped"]`` (a sweep over layouts).
        With every deployment left out, raise anyway.

    Returns
    -------
    pandas.DataFrame
        One row per envelope vertex, sorted by interactivity: ``tokens_per_s_per_user``,
        ``tokens_per_s_per_device``, ``step_time_s``, ``batch``, ``cost_usd_per_mtok``,
        ``joules_per_token`` (at TDP), ``label`` and the configuration columns (``model``,
        ``hardware``, ``n_devices``, ``tp``, ``pp``, ``ep``, ``dp_attention``, formats,
        ``context_tokens``). Vertices include the crossings where one curve overtakes another.

    Notes
    -----
    Between vertices a curve is a straight line in (x, y) (module notes), so the envelope of
    polylines is exact once crossing points are added: for segments
    :math:`y = a_i + b_i x` the crossing is :math:`x = (a_j - a_i)/(b_i - b_j)`.

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
    deps = _with_efficiency(_deployments(deployments), efficiency)
    specs = list(speculation) if speculation is not None else [None]
    if not specs:
        raise TokenomicsError("speculation must list at least one option (None: off)")
    if on_oom not in ("raise", "skip"):
        raise TokenomicsError(f"on_oom must be 'raise' or 'skip', got {on_oom!r}")
    curves, skipped = [], []
    for d in deps:
        for sp in specs:
            try:
                curves.append(decode_curve(d, context_tokens, sp))
            except DoesNotFitError as exc:
                if on_oom == "raise":
                    raise DoesNotFitError(f"{exc}; pass on_oom='skip' to leave such "
                                          "deployments out of the frontier") from None
                skipped.append(_label(d, sp))
    if not curves:
        raise DoesNotFitError(f"no deployment fits one sequence of {context_tokens:g} tokens: "
                              f"{'; '.join(skipped)}")
    rows = []
    segs = []
    for ci, c in enumerate(curves):
        for b, t, x, y in zip(c.batch, c.step_time_s, c.tokens_per_s_per_user,
                              c.tokens_per_s_per_device, strict=True):
            rows.append((ci, float(b), float(t), float(x), float(y)))
        for k in range(len(c.batch) - 1):
            x0, x1 = c.tokens_per_s_per_user[k], c.tokens_per_s_per_user[k + 1]
            y0, y1 = c.tokens_per_s_per_device[k], c.tokens_per_s_per_device[k + 1]
            segs.append((ci, k, x1, x0, y1, y0))  # x1 < x0 (x falls with batch)
    # Crossings between segments of different curves.
    if len(curves) > 1 and segs:
        s = np.asarray(segs, float)
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
        at, xs = cid[i[inside]].astype(int), xc[inside]
        for ci in np.unique(at):
            c = curves[int(ci)]
            xv = xs[at == ci]
            b = np.asarray(c.batch_at_step_time(c.tokens_per_step / xv), float)
            rows.extend(zip(np.full(xv.size, float(ci)), b.tolist(),
                            (c.tokens_per_step / xv).tolist(), xv.tolist(),
                            (b * xv / c.deployment.n_devices).tolist(), strict=True))
    # Where a curve ends, the envelope may step down to another curve: add the other curves'
    # points at every curve's end interactivities, and the points where another curve falls
    # to the height of a curve's end (beyond it, that end dominates them).
    if len(curves) > 1:
        ends_x = sorted({float(c.tokens_per_s_per_user[k]) for c in curves for k in (0, -1)})
        ends_y = sorted({float(c.tokens_per_s_per_device[-1]) for c in curves})
        for ci, c in enumerate(curves):
            n_dev = c.deployment.n_devices
            ys = c.throughput_at(np.asarray(ends_x))
            for xv, yv in zip(ends_x, ys, strict=True):
                if np.isfinite(yv):
                    rows.append((ci, float(yv * n_dev / xv), c.tokens_per_step / xv, xv,
                                 float(yv)))
            # y falls along the curve as x rises: invert y(x) on each straight segment
            cx, cy = c.tokens_per_s_per_user, c.tokens_per_s_per_device
            for Y in ends_y:
                idx = np.nonzero((cy[:-1] <= Y) & (cy[1:] >= Y) & (cy[1:] > cy[:-1]))[0]
                for si in idx:
                    w = (Y - cy[si]) / (cy[si + 1] - cy[si])
                    xv = float(cx[si] + w * (cx[si + 1] - cx[si]))
                    yv = float(c.throughput_at(xv))
                    if np.isfinite(yv):
                        rows.append((ci, float(yv * n_dev / xv), c.tokens_per_step / xv, xv,
                                     yv))
    arr = np.asarray(rows, float)
    x, y = arr[:, 3], arr[:, 4]
    # Keep the points on the envelope (no curve higher at the same x), then the Pareto set.
    env = np.nanmax(np.vstack([c.throughput_at(x) for c in curves]), axis=0)
    below = y < env * (1 - 1e-12)
    dom = _dominated(x, y) | below
    out = []
    for (ci, b, t, xv, yv), d in zip(rows, dom, strict=True):
        if d and not include_dominated:
            continue
        cur = curves[int(ci)]
        dep = cur.deployment
        p = _price(dep, prices)
        tdp = dep.hardware.tdp_w
        out.append(dict(
            tokens_per_s_per_user=xv, tokens_per_s_per_device=yv, step_time_s=t, batch=b,
            cost_usd_per_mtok=float(cost_per_million_tokens(p, yv)) if math.isfinite(p)
            else float("nan"),
            joules_per_token=tdp / yv if tdp else float("nan"),
            label=_label(dep, cur.speculation), **_config(dep),
            speculation_k=int(cur.speculation["k"]) if cur.speculation else 0,
            context_tokens=float(context_tokens),
            **({"dominated": bool(d)} if include_dominated else {})))
    df = pd.DataFrame(out).sort_values("tokens_per_s_per_user").reset_index(drop=True)
    df.attrs["skipped"] = skipped
    return df


def _deployments(obj: Any) -> list[Deployment]:
    if isinstance(obj, Deployment):
        return [obj]
    if isinstance(obj, pd.DataFrame):
        if "_deployment" not in obj.columns:
            raise TokenomicsError("a DataFrame given to frontier must come from tk.sweep "
                                  "(it carries the deployments)")
        seen: dict[int, Deployment] = {}
        for d in obj["_deployment"]:
            seen.setdefault(id(d), d)
        return list(seen.values())
    deps = list(obj)
    if not deps or not all(isinstance(d, Deployment) for d in deps):
        raise TokenomicsError("deployments must be Deployment objects (at least one)")
    return deps


def best_at(deployments: Any, min_tokens_per_s_per_user: float,
            context_tokens: float | None = None, speculation: Any = (None,),
            efficiency: Any = "calibrated") -> pd.Series:
    """Best throughput per device at or above an interactivity floor (S23's vertical line).

    Parameters
    ----------
    deployments : Deployment, iterable, or a DataFrame from :func:`frontier`
        With a frontier, the answer is read off its envelope (the straight segment spanning
        the floor); with deployments, each curve is inverted exactly at whole batches.
    min_tokens_per_s_per_user : float
        The floor [token/s].
    context_tokens : float, optional
        Required with deployments.
    speculation : sequence of (dict or None)
        Speculative-decoding options crossed with the deployments (see :func:`frontier`).
    efficiency : {"calibrated", "roofline", "deployment"} or Efficiency
        As in :func:`frontier` (with deployments).

    Returns
    -------
    pandas.Series
        The winning point: ``tokens_per_s_per_user``, ``tokens_per_s_per_device``, ``batch``,
        configuration columns.

    Raises
    ------
    TokenomicsError
        When no configuration reaches the floor; the message gives the fastest one's speed.

    Examples
    --------
    >>> import tokenomics as tk
    >>> d = tk.Deployment("llama-3.1-70b", "h200", tp=4, weight_dtype="fp8",
    ...                   compute_dtype="fp8")
    >>> r = best_at([d], 100, context_tokens=4096)
    >>> bool(r.tokens_per_s_per_user >= 100)
    True
    """
    X = float(V.positive(min_tokens_per_s_per_user, "min_tokens_per_s_per_user", "token/s"))
    if isinstance(deployments, pd.DataFrame) and "tokens_per_s_per_user" in deployments:
        f = deployments.sort_values("tokens_per_s_per_user").reset_index(drop=True)
        xs = f.tokens_per_s_per_user.to_numpy()
        if X > xs[-1] * (1 + 1e-12):
            raise TokenomicsError(
                f"no configuration reaches {X:g} tokens/s per user; the fastest on this "
                f"frontier gives {xs[-1]:.4g} ({f.label.iloc[-1]})")
        k = int(np.searchsorted(xs, X))
        row = f.iloc[k].copy()
        if k > 0 and xs[k] > X and f.label.iloc[k] == f.label.iloc[k - 1]:
            # on a straight segment of one curve: interpolate exactly
            w = (X - xs[k - 1]) / (xs[k] - xs[k - 1])
            for col in ("tokens_per_s_per_device", "batch", "step_time_s"):
                row[col] = f[col].iloc[k - 1] + w * (f[col].iloc[k] - f[col].iloc[k - 1])
            row["tokens_per_s_per_user"] = X
        return row
    if context_tokens is None:
        raise TokenomicsError("context_tokens is required when giving deployments")
    deps = _with_efficiency(_deployments(deployments), efficiency)
    pts = _curve_points_at(deps, X, context_tokens, speculation)
    if not pts:
        fastest = max(float(c.tokens_per_s_per_user[0])
                      for c in _curves(deps, context_tokens, speculation))
        raise TokenomicsError(f"no configuration reaches {X:g} tokens/s per user; the fastest "
                              f"gives {fastest:.4g} at batch 1")
    return max(pts, key=lambda r: r.tokens_per_s_per_device)


def _curves(deployments: Any, context_tokens: float, speculation: Any) -> list[DecodeCurve]:
    specs = list(speculation) if speculation is not None else [None]
    return [decode_curve(d, context_tokens, sp) for d in _deployments(deployments)
            for sp in specs]


def _curve_points_at(deployments: Any, X: float, context_tokens: float, speculation: Any,
                     prices: dict[str, float] | None = None) -> list[pd.Series]:
    """Each curve's best whole-batch point with interactivity >= X (exact bisection)."""
    out = []
    for c in _curves(deployments, context_tokens, speculation):
        if c.tokens_per_s_per_user[0] < X:
            continue
        dep, E = c.deployment, c.tokens_per_step
        tmax = E / X
        lo, hi = 1, c.max_batch
        if float(c.time_at(hi)) <= tmax:
            lo = hi
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if float(c.time_at(mid)) <= tmax:
                lo = mid
            else:
                hi = mid
        t = float(c.time_at(lo))
        y = lo * E / t / dep.n_devices
        p = _price(dep, prices)
        out.append(pd.Series(dict(
            tokens_per_s_per_user=E / t, tokens_per_s_per_device=y, step_time_s=t,
            batch=float(lo), cost_usd_per_mtok=float(cost_per_million_tokens(p, y))
            if math.isfinite(p) else float("nan"),
            label=_label(dep, c.speculation), **_config(dep),
            speculation_k=int(c.speculation["k"]) if c.speculation else 0)))
    return out


def cheapest_at(deployments: Any, min_tokens_per_s_per_user: float, context_tokens: float,
                prices: dict[str, float] | None = None, speculation: Any = (None,),
                efficiency: Any = "calibrated") -> pd.Series:
    """The cheapest configuration that meets an interactivity floor [USD/Mtok].

    Each configuration runs at its largest whole batch whose tokens/s per user stays at or
    above the floor (its cheapest point there); the one with the lowest cost per million
    tokens wins. Hardware prices: ``prices`` (USD per device-hour by hardware id) or the
    catalog's latest rental price; configurations without a price are skipped.

    Raises
    ------
    TokenomicsError
        When no priced configuration reaches the floor.

    Examples
    --------
    >>> import tokenomics as tk
    >>> deps = [tk.Deployment("llama-3.1-8b", h) for h in ("h100-sxm", "h200")]
    >>> r = cheapest_at(deps, 50, 2048, prices={"h100-sxm": 2.0, "h200": 3.0})
    >>> r.hardware in ("h100-sxm", "h200")
    True
    """
    X = float(V.positive(min_tokens_per_s_per_user, "min_tokens_per_s_per_user", "token/s"))
    deps = _with_efficiency(_deployments(deployments), efficiency)
    pts = [r for r in _curve_points_at(deps, X, context_tokens, speculation, prices)
           if math.isfinite(r.cost_usd_per_mtok)]
    if not pts:
        raise TokenomicsError(f"no priced configuration reaches {X:g} tokens/s per user "
                              "(check prices= for hardware without a catalog rental price)")
    return min(pts, key=lambda r: r.cost_usd_per_mtok)


def crossings(a: DecodeCurve | Deployment, b: DecodeCurve | Deployment,
              context_tokens: float | None = None) -> pd.DataFrame:
    """Where two curves cross: the interactivities at which the better one changes.

    Parameters
    ----------
    a, b : DecodeCurve or Deployment
        Curves (or deployments, then ``context_tokens`` is required).

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
                                 better_below=_label(below.deployment, below.speculation)))
    return pd.DataFrame(rows, columns=["tokens_per_s_per_user", "tokens_per_s_per_device",
                                       "better_below"])


def sweep(deployments: Any, batch: Any, context_tokens: Any,
          prices: dict[str, float] | None = None) -> pd.DataFrame:
    """Brute-force decode sweep: every deployment at every (batch, context), vectorised.

    Parameters
    ----------
    deployments : Deployment or iterable of Deployment
    batch, context_tokens : array_like
        Broadcast together per deployment (pass a grid with ``np.meshgrid``).
    prices : dict, optional
        USD per device-hour by hardware id (default: catalog rental prices).

    Returns
    -------
    pandas.DataFrame
        One row per point: configuration columns, ``batch``, ``context_tokens``,
        ``step_time_s``, ``tokens_per_s_per_user``, ``tokens_per_s_per_device``, ``bound``,
        ``fits``, ``cost_usd_per_mtok``, ``joules_per_token``, ``label``; the private column
        ``_deployment`` lets :func:`frontier` reuse the deployments.

    Examples
    --------
    >>> import tokenomics as tk
    >>> s = sweep([tk.Deployment("llama-3.1-8b", "h100-sxm")], [1, 8, 64], 2048)
    >>> len(s)
    3
    """
    from tokenomics.physics.step import decode

    frames = []
    for dep in _deployments(deployments):
        r = decode(dep, batch, context_tokens, on_oom="mark").to_frame()
        p = _price(dep, prices)
        df = pd.DataFrame({
            "batch": r.batch, "context_tokens": r.context_tokens,
            "step_time_s": r.time_s, "tokens_per_s_per_user": r.tokens_per_s_per_user,
            "tokens_per_s_per_device": r.tokens_per_s_per_device, "bound": r.bound,
            "fits": r.fits})
        df["cost_usd_per_mtok"] = (p / 3600.0 / df.tokens_per_s_per_device * 1e6
                                   if math.isfinite(p) else np.nan)
        df["joules_per_token"] = (dep.hardware.tdp_w / df.tokens_per_s_per_device
                                  if dep.hardware.tdp_w else np.nan)
        df["label"] = _label(dep)
        for k, v in _config(dep).items():
            df[k] = v
        df["_deployment"] = [dep] * len(df)
        frames.append(df)
    return pd.concat(frames, ignore_index=True)


def pareto_mask(x: Any, y: Any) -> np.ndarray:
    """Mask of the non-dominated points (higher ``x`` and higher ``y`` are both better).

    Examples
    --------
    >>> pareto_mask([1, 2, 3], [3, 2, 1]).tolist()
    [True, True, True]
    >>> pareto_mask([1, 2], [1, 2]).tolist()
    [False, True]
    """
    xa = np.asarray(x, float).ravel()
    ya = np.asarray(y, float).ravel()
    return ~_dominated(xa, ya)
