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

from dataclasses import dataclass
from typing import Any

import numpy as np

from tokenomics.core import checks as V
from tokenomics.core.errors import DoesNotFitError, TokenomicsError
from tokenomics.data.boundary import inputs
from tokenomics.data.deployment import Deployment
from tokenomics.data.interconnect import ALGORITHMS
from tokenomics.physics.collectives import step_comm
from tokenomics.physics.engine import step_seconds
from tokenomics.physics.formulas import distinct_experts, tokens_for_distinct_fraction
from tokenomics.physics.memory import max_batch
from tokenomics.physics.operators import OPERATORS, OpCost, step_costs

_MOE_FRACTIONS = (0.5, 0.75, 0.9, 0.99)


def _step_time(dep: Deployment, B: Any, C: float, T: float = 1.0) -> np.ndarray:
    """Exact decode step time at real-valued batch ``B``, ``T`` tokens per sequence [s]."""
    b = np.asarray(B, float) / dep.pp
    return step_seconds(dep, step_costs(dep, b, T, C, T), b, T, T, "decode")


def _crossing_batch(f0: float, f1: float, q0: float, q1: float) -> float | None:
    """Batch where a compute time ``f0 + f1 b`` meets a memory time ``q0 + q1 b`` [seq].

    :math:`b^* = (q_0 - f_0)/(f_1 - q_1)`; None when compute never overtakes memory
    (:math:`f_1 - q_1 \\le 10^{-30}`). SymPy's :func:`tokenomics.pareto.symbolic.ridge_batch`
    is the case :math:`f_0 = 0`.
    """
    if f1 - q1 > 1e-30:
        return (q0 - f0) / (f1 - q1)
    return None


def _operator_ridges(dep: Deployment, one: dict, two: dict, peak: float,
                     bw: float) -> list[float]:
    """Batches where each linear operator turns compute-bound, from its costs at b = 1, 2."""
    out: list[float] = []
    for name in OPERATORS:
        if name == "moe_experts" and dep.model.is_moe:
            continue
        f1 = float(two[name].flops - one[name].flops) / (dep.tp * peak)
        q1 = float(two[name].bytes - one[name].bytes) / (dep.tp * bw)
        q0 = float(one[name].bytes) / (dep.tp * bw) - q1
        f0 = float(one[name].flops) / (dep.tp * peak) - f1
        # compute f0 + f1 b = memory q0 + q1 b
        b = _crossing_batch(f0, f1, q0, q1)
        if b is not None:
            out.append(b * dep.pp)
    return out


def _moe_kinks(dep: Deployment, one: dict, two: dict, peak: float, bw: float, b_max: float,
               T: float) -> list[float]:
    """The routed experts' ridge (found by ``brentq``) and their 50/75/90/99% coverage batches.

    Expert FLOPs are linear in the batch, their bytes :math:`w D(b T) + a b` with
    :math:`D` the distinct-expert law; the ridge solves :math:`f_1 b = (w D + a b)/\\beta`.
    """
    from scipy.optimize import brentq

    m = dep.model.moe
    assert m is not None
    pp = dep.pp
    out: list[float] = []
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
    return out


def _allreduce_swaps(dep: Deployment, T: float) -> list[float]:
    """Batches where the fastest all-reduce algorithm of a collective changes (lines cross).

    Each collective picks its own fastest algorithm, so kinks come per collective; none
    unless the algorithm is ``"auto"`` and ``tp > 1``.
    """
    out: list[float] = []
    if dep.allreduce_algorithm != "auto" or dep.tp <= 1:
        return out
    lines: dict[str, list[tuple[float, float]]] = {}
    b12 = np.array([1.0, 2.0])
    for a in ALGORITHMS:
        d = dep.with_(allreduce_algorithm=a)
        both = {c.name: np.broadcast_to(np.asarray(c.time_s, float), (2,))
                for c in step_comm(d, b12, T, T, "decode")}      # b = 1 and 2 in one call
        c1 = {k: float(v[0]) for k, v in both.items()}
        c2 = {k: float(v[1]) for k, v in both.items()}
        for name in c1:
            lines.setdefault(name, []).append((2 * c1[name] - c2[name], c2[name] - c1[name]))
    for ls in lines.values():
        for i in range(len(ls)):
            for j in range(i + 1, len(ls)):
                (a0, a1), (b0, b1) = ls[i], ls[j]
                if abs(a1 - b1) > 1e-30:
                    out.append((b0 - a0) / (a1 - b1) * dep.pp)
    return out


def _costs_at_one_and_two(dep: Deployment, C: float, T: float) -> tuple[dict, dict]:
    """Each operator's costs at batch 1 and at batch 2, from one engine call over both."""
    out: tuple[dict, dict] = ({}, {})
    for o in step_costs(dep, np.array([1.0, 2.0]), T, C, T):
        *cols, _ = np.broadcast_arrays(*(np.asarray(v, float) for v in (
            o.flops, o.weight_bytes, o.kv_bytes, o.act_bytes)), np.zeros(2))
        for i in (0, 1):
            out[i][o.name] = OpCost(o.name, *(float(c[i]) for c in cols))
    return out


def _kinks(dep: Deployment, C: float, b_max: float, T: float = 1.0) -> list[float]:
    """Batches (real-valued, in (1, b_max)) where the piecewise-linear step time bends."""
    eff = dep.efficiency
    peak = dep.hardware.peak(dep.compute_dtype) * eff.mfu
    bw = dep.hardware.mem_bw_bytes_per_s * eff.mbu
    one, two = _costs_at_one_and_two(dep, C, T)
    out = _operator_ridges(dep, one, two, peak, bw)
    if dep.model.is_moe:
        out += _moe_kinks(dep, one, two, peak, bw, b_max, T)
    out += _allreduce_swaps(dep, T)
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
    C = float(V.single_whole(context_tokens, "context_tokens", unit="token"))
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
    B, t = _vertices_and_refine(B, lambda b: _cycle_time(dep, b, C, speculation))
    return DecodeCurve(deployment=dep, context_tokens=C, batch=B, step_time_s=t,
                       tokens_per_s_per_user=E / t,
                       tokens_per_s_per_device=B * E / t / dep.n_devices, max_batch=bm,
                       tokens_per_step=E,
                       speculation=dict(speculation) if (k and speculation) else None)
