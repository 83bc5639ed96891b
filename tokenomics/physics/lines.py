"""A deployment's decode step at one context as lines in the batch: the fast decode curve.

At a fixed context :math:`C` and :math:`T` tokens per sequence, every ingredient of a decode
step is affine in the micro-batch :math:`b = B/pp`: each operator's compute time
:math:`t_c = a_c + x_c b` and memory time :math:`t_m = a_m + x_m b` (FLOPs and bytes are
sums of per-sequence terms times :math:`b` plus the weights), and each collective's time
under each all-reduce algorithm. The one exception is a mixture of experts' routed experts,
whose weight bytes follow the distinct-expert law and whose grouped GEMM runs at an
efficiency that depends on the tokens per expert; that operator keeps the engine's own timing
(:func:`~tokenomics.physics.engine.operator_times` on its cost at each batch).

:func:`step_lines` reads the lines from the engine once (the operators at :math:`b = 1, 2`
in one call, every algorithm's collectives in one call); :class:`StepLines` then times any
batch vectorised, with no engine call, and names the batches where the step time bends
(:meth:`StepLines.kinks`): where an operator turns from memory- to compute-bound
(:math:`a_c + x_c b = a_m + x_m b`), where the fastest algorithm of a collective changes
(two lines cross) and, with ``comm_overlap`` :math:`\\omega > 0`, where the hidden share of
communication stops being capped by the roofline (:math:`\\omega\\, t_{comm} = t_{roof}`,
:meth:`StepLines.overlap_kinks`). Between kinks a dense step is exactly a straight line in
:math:`B`, which is what makes the decode curve a polyline
(:mod:`tokenomics.pareto.curves`).

Notes
-----
Per operator the time is :math:`\\max(t_c, t_m) + (1 - o)\\min(t_c, t_m)` (the efficiency's
overlap :math:`o`), the step :math:`t = t_{roof} + t_{comm} - \\min(\\omega t_{comm},
t_{roof}) + t_{over}` as in :func:`~tokenomics.physics.engine.step_seconds`; the lines are
the engine's times at two batches, so they carry its rates, peaks and efficiencies without
restating them. ``tests/physics/test_lines.py`` checks the lines against the engine to 1e-12.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from tokenomics.core import checks as V
from tokenomics.core.errors import TokenomicsError
from tokenomics.data.deployment import Deployment
from tokenomics.physics.collectives import step_comm
from tokenomics.physics.engine import exposed_comm, operator_time, operator_times, overhead_s
from tokenomics.physics.formulas import distinct_experts
from tokenomics.physics.operators import OpCost, step_costs

_B12 = np.array([1.0, 2.0])


def two_point_line(v: Any) -> tuple[float, float]:
    """(a, x) of the line :math:`a + x b` through its values :math:`v_1, v_2` at
    :math:`b = 1, 2`: :math:`x = v_2 - v_1`, :math:`a = 2 v_1 - v_2` (``v`` broadcast to
    two values)."""
    a = _lines([v])[0]
    return float(a[0]), float(a[1])


def _lines(values: list[Any]) -> np.ndarray:
    """(len(values), 2) lines a + x b from each value's (broadcast) values at b = 1 and 2."""
    v = np.empty((len(values), 2))
    for i, x in enumerate(values):
        v[i] = x
    return np.column_stack([2 * v[:, 0] - v[:, 1], v[:, 1] - v[:, 0]])


@dataclass(frozen=True)
class Experts:
    """A mixture of experts' routed-expert operator as a function of the micro-batch.

    FLOPs :math:`f_0 + f_1 b` and activation bytes :math:`a_0 + a_1 b` are lines; weight
    bytes are ``per_expert`` times the expected distinct experts
    (:func:`~tokenomics.physics.formulas.distinct_experts`) of ``experts`` physical experts,
    ``top_k`` per token, over the :math:`bT` tokens of the step.
    """

    flops: tuple[float, float]
    act: tuple[float, float]
    per_expert: float
    experts: int
    top_k: int
    tokens: float

    def cost(self, b: Any) -> OpCost:
        """The operator's :class:`OpCost` at micro-batches ``b`` (an array, or a float for
        one point)."""
        d = distinct_experts(self.experts, self.top_k, b * self.tokens)
        z = 0.0 if isinstance(b, float) else np.zeros_like(b)
        return OpCost("moe_experts", self.flops[0] + self.flops[1] * b,
                      self.per_expert * d, z, self.act[0] + self.act[1] * b)


@dataclass(frozen=True)
class StepLines:
    """One deployment's decode step at one context, as lines in the micro-batch (module notes).

    Attributes
    ----------
    tc, tm : numpy.ndarray
        (operators, 2): each affine operator's compute and memory time, :math:`a + x b` [s].
    comm : tuple of numpy.ndarray
        Per collective, (algorithms, 2): the time of each algorithm it may take, as lines;
        the step takes the fastest [s].
    overlap, comm_overlap : float
        The efficiency's compute-memory overlap :math:`o` and the hidden share of
        communication :math:`\\omega`.
    overhead_s : float
        Fixed time per step [s].
    pp : int
        Pipeline stages: the step serves micro-batches of :math:`B/pp`.
    host_per_row : float
        Host seconds per sequence of the step (the efficiency's token overhead times the
        tokens each samples, over the attention-data-parallel schedulers) [s].
    experts : Experts or None
        The routed experts (timed by the engine), for a mixture of experts.
    dep : Deployment
        The deployment (its efficiency times the experts).
    """

    tc: np.ndarray
    tm: np.ndarray
    comm: tuple[np.ndarray, ...]
    overlap: float
    comm_overlap: float
    overhead_s: float
    pp: int
    experts: Experts | None
    dep: Deployment
    host_per_row: float = 0.0

    def parts(self, B: Any) -> tuple[np.ndarray, np.ndarray]:
        """(roofline, total communication) at batches ``B`` [s]."""
        b = np.atleast_1d(np.asarray(B, float)) / self.pp
        tc = self.tc[:, :1] + self.tc[:, 1:] * b
        tm = self.tm[:, :1] + self.tm[:, 1:] * b
        roof = operator_time(tc, tm, self.overlap).sum(axis=0)
        if self.experts is not None:
            roof = roof + operator_times(self.dep, [self.experts.cost(b)]).roofline_s
        comm = np.zeros_like(b)
        for lines in self.comm:
            comm = comm + np.min(lines[:, :1] + lines[:, 1:] * b, axis=0)
        return roof, comm

    def time(self, B: Any) -> np.ndarray:
        """Decode step time at real-valued batches ``B`` [s]."""
        roof, comm = self.parts(B)
        host = self.host_per_row * np.atleast_1d(np.asarray(B, float))
        return roof + exposed_comm(comm, roof, self.comm_overlap) + self.overhead_s + host

    def kinks(self) -> list[float]:
        """Batches :math:`B > 0` where an affine operator's two terms cross or a collective's
        fastest algorithm changes (:func:`crossing_batch` of each pair; unsorted)."""
        pairs = [(c, m) for c, m in zip(self.tc, self.tm, strict=True)]
        for lines in self.comm:
            pairs += [(lines[i], lines[j]) for i in range(len(lines))
                      for j in range(i + 1, len(lines))]
        out = (crossing_batch(p[0], p[1], q[0], q[1]) for p, q in pairs)
        return [x * self.pp for x in out if x is not None]

    def overlap_kinks(self, B: np.ndarray) -> list[float]:
        """Batches between the sorted vertices ``B`` where :math:`\\omega t_{comm}` meets
        :math:`t_{roof}` (none without overlap); exact where both are straight between
        vertices (dense), a first estimate otherwise."""
        if self.comm_overlap <= 0.0 or len(B) < 2:
            return []
        roof, comm = self.parts(B)
        g = self.comm_overlap * comm - roof
        i = np.flatnonzero(np.sign(g[:-1]) * np.sign(g[1:]) < 0)
        return list(B[i] + (B[i + 1] - B[i]) * g[i] / (g[i] - g[i + 1]))


def experts_of(dep: Deployment, op: OpCost, tokens: float) -> Experts:
    """The routed experts of ``dep`` as :class:`Experts`, from their cost ``op`` at
    micro-batches 1 and 2 of ``tokens`` tokens per sequence."""
    m = dep.model.moe
    assert m is not None
    P = dep.physical_experts
    w1 = float(np.ravel(op.weight_bytes)[0])
    return Experts(flops=two_point_line(op.flops), act=two_point_line(op.act_bytes),
                   per_expert=w1 / float(distinct_experts(P, m.top_k, tokens)),
                   experts=P, top_k=m.top_k, tokens=float(tokens))


def crossing_batch(a0: float, a1: float, b0: float, b1: float) -> float | None:
    """Batch where the line :math:`a_0 + a_1 b` meets :math:`b_0 + b_1 b` [seq].

    :math:`b^* = (b_0 - a_0)/(a_1 - b_1)`; None when the lines are parallel or meet at
    :math:`b^* \\le 0`. For an operator's compute time :math:`F_1 b / P` against its memory
    time :math:`(Q_0 + Q_1 b)/\\beta` it is the ridge batch
    :math:`P Q_0 / (F_1 \\beta - P Q_1)` (:func:`tokenomics.pareto.symbolic.ridge_batch`).
    """
    d = float(a1) - float(b1)
    if d == 0.0:
        return None
    x = (float(b0) - float(a0)) / d
    return x if x > 0.0 else None


def step_lines(dep: Deployment, context_tokens: float, tokens: float = 1.0) -> StepLines:
    """The decode step of ``dep`` at ``context_tokens`` [token], ``tokens`` new tokens per
    sequence, as :class:`StepLines`: read from the engine at micro-batches 1 and 2 (one
    operator call, one call for every algorithm's collectives).

    Raises
    ------
    TokenomicsError
        For a context below 0 or tokens per sequence below 1 (or not finite numbers).
    """
    context_tokens = V.single_amount(context_tokens, "context_tokens", "token")
    tokens = V.single_amount(tokens, "tokens", "token")
    if tokens < 1:
        raise TokenomicsError(f"tokens per sequence must be >= 1, got {tokens:g}")
    costs = step_costs(dep, _B12, tokens, context_tokens, tokens)
    times = operator_times(dep, costs)
    tc, tm, experts = [], [], None
    for op in costs:
        if op.name == "moe_experts" and dep.model.is_moe:
            experts = experts_of(dep, op, tokens)
            continue
        c, mem, _ = times.per_op[op.name]
        tc.append(c)
        tm.append(mem)
    alg = "each" if dep.allreduce_algorithm == "auto" else None
    comm = []
    for col in step_comm(dep, _B12, tokens, tokens, "decode", algorithm=alg):
        t = np.asarray(col.time_s, float)
        comm.append(_lines(list(t) if t.ndim > 1 else [t]))
    eff = dep.efficiency
    return StepLines(tc=_lines(tc), tm=_lines(tm), comm=tuple(comm),
                     overlap=float(eff.overlap), comm_overlap=float(dep.comm_hidden_share),
                     overhead_s=float(overhead_s(dep)), pp=dep.pp, experts=experts, dep=dep,
                     host_per_row=float(eff.token_overhead_s) * tokens / dep.dp_attention)
