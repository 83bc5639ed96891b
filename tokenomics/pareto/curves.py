"""Decode curves: one deployment's throughput against interactivity, as a polyline.

For one deployment at a fixed context, the decode step time :math:`t(B)` is a sum of
per-operator maxima of terms linear in the batch (weights, KV, activations, FLOPs), plus
communication (a minimum over all-reduce algorithms of terms linear in the batch) and fixed
overheads: a **piecewise-linear**, increasing function of :math:`B` whose kinks are where an
operator turns from memory- to compute-bound or the fastest collective algorithm changes, cut
off where memory runs out. With :math:`x = 1/t` (tokens/s per user) and
:math:`y = B/(n\\,t)` (tokens/s per device), on a piece :math:`t = \\alpha B + \\beta`:

.. math:: y = \\frac{1 - \\beta x}{\\alpha n},

a straight line in :math:`(x, y)`. So each deployment's curve is a polyline through its kinks
(:func:`decode_curve`), found in closed form with no grid.

The pieces come from the step's lines (:func:`tokenomics.physics.lines.step_lines`: each
operator's compute and memory time and each collective's time under each algorithm, read
from the engine at batches 1 and 2), so a dense curve costs two engine calls (four with
speculation) and no grid; its vertex times are the lines' (equal to the engine to 1e-12,
``tests/physics/test_lines.py``). An MoE curve adds one engine call over a 48-batch grid and
one per refinement round, for its experts.
A deployment keeps its curves (by context and speculation option, read-only), so a frontier
asked again computes only its envelope.

MoE's distinct-expert term :math:`E(1 - (1 - k/E)^{B})`
(:func:`tokenomics.physics.formulas.distinct_experts`) is not linear: its curve starts from
the kinks plus the batches where 50/75/90/99% of the experts are touched
(:func:`tokenomics.physics.formulas.tokens_for_distinct_fraction`), and pieces are halved
until each chord is within ``CURVE_RTOL`` (1e-4, relative) of the exact step time at its
midpoint.

With speculative decoding a cycle is :math:`k` draft steps plus one :math:`(k + 1)`-token
verification pass, both piecewise linear in :math:`B`, emitting :math:`E` tokens per sequence
(:func:`tokenomics.serving.speculative.expected_accepted_tokens`).

:mod:`tokenomics.pareto.symbolic` derives the per-piece line and the ridge batch with SymPy as
oracles (``tests/pareto/test_symbolic.py``).

References
----------
.. [1] Seed digest S23 (interactivity vs throughput trade-off along the batch; the SLO is a
   vertical line).
.. [2] SemiAnalysis, "InferenceMAX" throughput-vs-interactivity curves (the form of the plot).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from tokenomics.core import checks as V
from tokenomics.core.errors import DoesNotFitError, TokenomicsError
from tokenomics.data.boundary import inputs
from tokenomics.data.deployment import Deployment
from tokenomics.physics.engine import operator_times, step_seconds
from tokenomics.physics.formulas import tokens_for_distinct_fraction
from tokenomics.physics.lines import StepLines, step_lines
from tokenomics.physics.memory import max_batch
from tokenomics.physics.operators import step_costs

_MOE_FRACTIONS = (0.5, 0.75, 0.9, 0.99)


def _step_time(dep: Deployment, B: Any, C: float, T: float = 1.0) -> np.ndarray:
    """Exact decode step time at real-valued batch ``B``, ``T`` tokens per sequence, through
    the full engine [s] (the reference :func:`decode_curve`'s lines are tested against)."""
    b = np.asarray(B, float) / dep.pp
    return step_seconds(dep, step_costs(dep, b, T, C, T), b, T, T, "decode",
                        np.asarray(B, float) * T)


#: Decode curves kept per deployment, by context and speculation option: a frontier asked
#: again (another SLO, a plot, a sweep over contexts) reuses them; the oldest go first past
#: this many.
_KEPT_CURVES = 16


def _moe_kinks(dep: Deployment, lines: StepLines, b_max: float, T: float) -> list[float]:
    """Where the routed experts turn compute-bound, and their 50/75/90/99% coverage batches.

    The experts' compute and memory times (the engine's, :func:`operator_times`) are compared
    on a geometric grid of 48 batches in one call; each sign change brackets the ridge and
    both ends become vertices (the chord refinement then follows the bend). Coverage
    fraction :math:`f` is reached at
    :func:`~tokenomics.physics.formulas.tokens_for_distinct_fraction` tokens.
    """
    ex = lines.experts
    if ex is None:
        return []
    pp = dep.pp
    out: list[float] = []
    if b_max > 1.0:
        grid = np.geomspace(1.0, b_max, 48) / pp
        tc, tm, _ = operator_times(dep, [ex.cost(grid)]).per_op["moe_experts"]
        g = np.asarray(tc, float) - np.asarray(tm, float)
        i = np.flatnonzero(np.sign(g[:-1]) * np.sign(g[1:]) < 0)
        out += list(grid[i] * pp) + list(grid[i + 1] * pp)
    if ex.top_k < ex.experts:
        for frac in _MOE_FRACTIONS:
            out.append(tokens_for_distinct_fraction(ex.experts, ex.top_k, frac) / T * pp)
    return out


def _kinks(dep: Deployment, lines: StepLines, b_max: float, T: float) -> list[float]:
    """Batches (real-valued, in (1, b_max)) where the step time of ``lines`` bends: operator
    ridges and algorithm swaps (:meth:`StepLines.kinks`), and MoE's expert ridge and
    coverage points."""
    out = lines.kinks() + _moe_kinks(dep, lines, b_max, T)
    return sorted(x for x in out if 1.0 < x < b_max)


#: Largest relative gap allowed between a curve's chord and the exact step time at the midpoint
#: of any piece (MoE's distinct-expert term is curved; dense pieces are straight already).
CURVE_RTOL = 1e-4
_MAX_VERTICES = 20_000


def _vertices_and_refine(B: np.ndarray, time: Any) -> tuple[np.ndarray, np.ndarray]:
    """Exact times at the vertices and at their first midpoints in one call, then
    :func:`_refine_vertices` (dense curves need no second call)."""
    mid = 0.5 * (B[:-1] + B[1:])
    wide = np.diff(B) > 1e-9 * B[1:]
    both = np.asarray(time(np.concatenate([B, mid[wide]])), float)
    return _refine_vertices(B, both[:len(B)], time, first_mid=both[len(B):])


def _refine_vertices(B: np.ndarray, t: np.ndarray, time: Any,
                     rtol: float = CURVE_RTOL,
                     first_mid: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Insert midpoints until every piece's chord is within ``rtol`` of the exact time there.

    Each round evaluates the exact step time at the midpoints of all pieces at once and keeps
    those where the chord misses by more than ``rtol`` (relative); a straight piece passes at
    once, so dense curves cost one extra evaluation. Stops at ``_MAX_VERTICES``.
    """
    while len(B) < _MAX_VERTICES:
        mid = 0.5 * (B[:-1] + B[1:])
        wide = np.diff(B) > 1e-9 * B[1:]
        tm = np.asarray(time(mid[wide]), float) if first_mid is None else first_mid
        first_mid = None
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
    if speculation is None or (isinstance(speculation, dict) and not speculation):
        return 0, 1.0
    if not isinstance(speculation, dict):
        raise TokenomicsError(f"a speculation option is a dict such as {{'k': 4, 'alpha': 0.7, "
                              f"'draft_fraction': 0.05}} or None, got {speculation!r}")
    for key, v in speculation.items():
        V.single_amount(v, f"speculation[{key!r}]", "dimensionless" if key != "draft_step_time_s"
                        else "s")
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
                speculation: dict[str, float] | None, step: Any = None) -> np.ndarray:
    """Plain decode step, or draft steps plus a (k + 1)-token verification pass [s];
    ``step(B, T)`` times a step (default: the full engine, :func:`_step_time`)."""
    step = step or (lambda b, T: _step_time(dep, b, C, T))
    k, _ = _spec(speculation)
    if not k:
        return np.asarray(step(B, 1.0), float)
    assert speculation is not None
    verify = np.asarray(step(B, float(k + 1)), float)
    if "draft_fraction" in speculation:
        draft = float(speculation["draft_fraction"]) * np.asarray(step(B, 1.0), float)
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


@inputs(dep="deployment")
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
    Kinks: operator :math:`o` turns compute-bound where its compute line meets its memory
    line, :math:`b^* = (q_0 - f_0)/(f_1 - q_1)`; collective algorithms swap where their
    lines cross; with ``comm_overlap`` the hidden share stops being capped by the roofline
    where :math:`\\omega t_{comm} = t_{roof}`; MoE experts cross where their compute meets
    their memory time (bracketed on a 48-batch grid). Batches are scaled by ``pp``
    (micro-batches). Curved pieces (MoE) are then halved until every chord is within
    ``CURVE_RTOL`` of the exact time at its midpoint. The curve is kept on the deployment:
    asked again at the same context and speculation it is returned as it is (its arrays
    are read-only).

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
    C = float(V.single_whole(context_tokens, "context_tokens", unit="token"))
    V.context_within(dep.model, np.asarray(C), dep.allow_beyond_max_context)
    k, E = _spec(speculation)
    kept = dep.__dict__.setdefault("_decode_curves", {})
    key = (C, tuple(sorted((n, float(v)) for n, v in speculation.items())) if k else None)
    curve = kept.get(key)
    if curve is None:
        curve = _curve(dep, C, speculation, k, E)
        while len(kept) >= _KEPT_CURVES:
            kept.pop(next(iter(kept), None), None)
        kept[key] = curve
    # the kept curve's arrays are read-only; its speculation option is handed out as a copy
    return curve if curve.speculation is None else replace(
        curve, speculation=dict(curve.speculation))


def _curve(dep: Deployment, C: float, speculation: dict[str, float] | None, k: int,
           E: float) -> DecodeCurve:
    """:func:`decode_curve` once its inputs are checked (``k`` drafted tokens, ``E``
    accepted per cycle)."""
    bm = int(max_batch(dep, C + k))
    if k and bm >= 1:
        from tokenomics.physics.memory import memory_fit

        while bm >= 1 and not bool(memory_fit(dep, bm, C + k,
                                              tokens_per_step=bm * (k + 1)).fits):
            bm -= 1
    if bm < 1:
        raise DoesNotFitError(f"{dep.model.id} on {dep.n_devices} x {dep.hardware.id}: not one "
                              f"sequence of {C:g} tokens fits beside the weights")
    tokens = [1.0] + ([float(k + 1)] if k else [])
    lines = {T: step_lines(dep, C, T) for T in tokens}
    B = np.asarray(sorted({1.0, float(bm), *(b for T in tokens
                                              for b in _kinks(dep, lines[T], float(bm), T))}))
    extra = [b for T in tokens for b in lines[T].overlap_kinks(B)]
    if extra:
        B = np.unique(np.concatenate([B, extra]))

    def time(b: Any) -> np.ndarray:
        return _cycle_time(dep, b, C, speculation, lambda x, T: lines[T].time(x))

    B, t = _vertices_and_refine(B, time)
    arrays = dict(batch=B, step_time_s=t, tokens_per_s_per_user=E / t,
                  tokens_per_s_per_device=B * E / t / dep.n_devices)
    for a in arrays.values():
        a.flags.writeable = False        # the curve is kept on the deployment and shared
    return DecodeCurve(deployment=dep, context_tokens=C, max_batch=bm, tokens_per_step=E,
                       speculation=dict(speculation) if (k and speculation) else None,
                       **arrays)
