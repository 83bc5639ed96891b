"""A deployment's decode and prefill as precomputed coefficients: the scalar fast paths.

A scalar :func:`tokenomics.decode` call spends its time in Python, not in arithmetic: a
dozen operators, their collectives and the memory check are built and validated as arrays
for one point. For a dense deployment every ingredient of a decode step is affine in the
batch :math:`b` and in :math:`b C` (context :math:`C`): each operator's FLOPs and bytes, the
memory it holds, and each collective's time under each all-reduce algorithm. A
:class:`DecodePlan` reads those coefficients once from the engine itself (at three points),
then times a scalar point in plain floats. It is built once a deployment has had
:data:`WARM_UP_CALLS` scalar calls, and before it is used it is checked against the
engine at 24 points spread over batch and context; a deployment whose costs are not affine
(mixture of experts, sliding windows, linear or sparse attention, pipelines, a compute peak
the hardware does not publish) or that fails the check gets no plan, and decode takes the
full path.

Notes
-----
Operator :math:`o`: :math:`F_o = f_0 + f_1 b + f_2 bC`, :math:`Q_o = q_0 + q_1 b + q_2 bC`,
timed :math:`t_c = F_o r_c`, :math:`t_m = Q_o r_m` with the engine's rates
(:func:`~tokenomics.physics.engine.operator_times`), :math:`t_o = \\max(t_c, t_m) + (1 -
\\omega_o)\\min(t_c, t_m)`. Collective :math:`k`: :math:`\\min_a(\\alpha_{ka} + \\beta_{ka} b)`
over the algorithms the deployment may pick. The step is then assembled as
:func:`~tokenomics.physics.engine.step_result` does.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from tokenomics.data.deployment import Deployment
from tokenomics.physics.collectives import ALGORITHMS, step_comm
from tokenomics.physics.engine import (
    StepResult,
    compute_scale,
    operator_times,
    overhead_s,
)
from tokenomics.physics.memory import memory_fit
from tokenomics.physics.operators import step_costs

#: Probe contexts [token] the coefficients are read at, and the check's tolerance.
_C1, _C2 = 1024.0, 2048.0
_RTOL = 1e-10


def _affine(v11: float, v21: float, v12: float) -> tuple[float, float, float]:
    """(a, x, y) of v = a + x b + y b C from v at (b, C) = (1, C1), (2, C1), (1, C2)."""
    y = (v12 - v11) / (_C2 - _C1)
    x = v21 - v11 - y * _C1
    return v11 - x - y * _C1, x, y


@dataclass(frozen=True)
class DecodePlan:
    """Coefficients of one deployment's decode step (module notes); call with (b, C)."""

    ops: tuple[tuple[float, ...], ...]       # (f0, f1, f2, q0, q1, q2, rc, rm) per operator
    comm: tuple[tuple[tuple[float, float], ...], ...]   # per collective: (alpha, beta) lines
    overlap: float
    comm_overlap: float
    overhead_s: float
    memory: tuple[float, float, float]      # total bytes = m0 + m1 b + m2 b C
    usable_bytes: float
    n_devices: int
    tp: int
    label: str

    def __call__(self, B: int, C: int) -> StepResult:
        b, bc = float(B), float(B) * float(C)
        work = [(f0 + f1 * b + f2 * bc, q0 + q1 * b + q2 * bc, rc, rm)
                for f0, f1, f2, q0, q1, q2, rc, rm in self.ops]
        comm = sum(min(a + x * b for a, x in lines) for lines in self.comm)
        m0, m1, m2 = self.memory
        return _assemble(self, work, comm, self.usable_bytes - (m0 + m1 * b + m2 * bc) >= 0,
                         phase="decode", point=(B, C, 1), tokens=b)


def _assemble(plan: Any, work: list[tuple[float, float, float, float]], comm_total: float,
              fits: bool, *, phase: str, point: tuple[int, int, int],
              tokens: float) -> StepResult:
    """A :class:`StepResult` from each operator's (FLOPs, bytes, rates) and the collectives'
    total, as :func:`~tokenomics.physics.engine.operator_times` and
    :func:`~tokenomics.physics.engine.step_result` assemble them."""
    o1 = 1.0 - plan.overlap
    roof = comp = mem = cb = fl = by = 0.0
    for flops, bytes_, rc, rm in work:
        tc, tm = flops * rc, bytes_ * rm
        t = max(tc, tm) + (o1 * min(tc, tm) if o1 > 0 else 0.0)
        roof, comp, mem = roof + t, comp + tc, mem + tm
        cb += t if tc > tm else 0.0
        fl, by = fl + flops / plan.tp, by + bytes_ / plan.tp
    comm = comm_total - min(plan.comm_overlap * comm_total, roof)
    time = roof + comm + plan.overhead_s
    B, C, T = point
    return StepResult(
        phase=phase, time_s=time, roofline_s=roof, lower_bound_s=max(comp, mem),
        compute_time_s=comp, memory_time_s=mem, comm_time_s=comm,
        overhead_s=plan.overhead_s, flops_per_device=fl, bytes_per_device=by,
        bound="compute" if cb > 0.5 * roof else "memory", tokens_per_s_per_user=T / time,
        tokens_per_s_per_device=tokens / time / plan.n_devices, fits=bool(fits), batch=B,
        context_tokens=C, new_tokens=T, efficiency=plan.label)


def _supported(dep: Deployment) -> bool:
    m = dep.model
    return (dep.pp == 1 and not m.is_moe and m.num_linear_layers == 0
            and not getattr(m.attention, "is_sparse", False)
            and all(w == math.inf for _, w, _ in m.window_groups())
            and dep.compute_peak_published)


def _op_coefficients(dep: Deployment) -> tuple[tuple[float, ...], ...]:
    probe = np.array([1.0, 2.0, 1.0]), np.array([_C1, _C1, _C2])
    costs = step_costs(dep, probe[0], 1.0, probe[1], 1.0)
    times = operator_times(dep, costs)
    out = []
    for op, (rc, rm) in zip(costs, _rates(dep, costs, times), strict=True):
        f = np.broadcast_to(np.asarray(op.flops, float), (3,))
        q = np.broadcast_to(np.asarray(op.bytes, float), (3,))
        out.append((*_affine(*f), *_affine(*q), rc, rm))
    return tuple(out)


def _rates(dep: Deployment, costs: list[Any], times: Any) -> list[tuple[float, float]]:
    """Each operator's seconds per FLOP and per byte, checked against the engine's times."""
    n, eff = dep.tp, dep.efficiency
    rm = 1.0 / (n * dep.hardware.mem_bw_bytes_per_s * eff.mbu)
    out = []
    for op in costs:
        p = (dep.attention_peak_flop_per_s() if op.name == "attn_core"
             else dep.compute_peak_flop_per_s()) * eff.mfu
        rc = 1.0 / (n * p * float(np.ravel(compute_scale(dep, op))[0]))
        f = np.asarray(op.flops, float)
        if not np.allclose(np.asarray(times.per_op[op.name][0], float), f * rc, rtol=1e-12):
            raise ValueError(op.name)                       # the rates are not the engine's
        out.append((rc, rm))
    return out


def _comm_lines(dep: Deployment) -> tuple[tuple[tuple[float, float], ...], ...]:
    algs = ALGORITHMS if dep.allreduce_algorithm == "auto" else (dep.allreduce_algorithm,)
    lines: dict[str, list[tuple[float, float]]] = {}
    for a in algs:
        d = dep if a == dep.allreduce_algorithm else dep.with_(allreduce_algorithm=a)
        for c in step_comm(d, np.array([1.0, 2.0]), 1.0, 1.0, "decode"):
            t1, t2 = np.broadcast_to(np.asarray(c.time_s, float), (2,))
            lines.setdefault(c.name, []).append((2 * t1 - t2, t2 - t1))
    return tuple(tuple(v) for v in lines.values())


def build_decode_plan(dep: Deployment, reference: Callable[..., Any]) -> DecodePlan | None:
    """The deployment's :class:`DecodePlan`, or None when its decode is not affine or the
    plan does not reproduce ``reference`` (the full decode,
    :func:`tokenomics.physics.step.decode_reference`) at the check's points."""
    if not _supported(dep):
        return None
    try:
        fit = memory_fit(dep, np.array([1.0, 2.0, 1.0]), np.array([_C1, _C1, _C2]),
                         tokens_per_step=np.array([1.0, 2.0, 1.0]))
        plan = DecodePlan(
            ops=_op_coefficients(dep), comm=_comm_lines(dep),
            overlap=float(dep.efficiency.overlap), comm_overlap=float(dep.comm_overlap),
            overhead_s=float(overhead_s(dep)),
            memory=_affine(*np.broadcast_to(np.asarray(fit.total_bytes, float), (3,))),
            usable_bytes=float(fit.usable_bytes), n_devices=dep.n_devices, tp=dep.tp,
            label=dep.efficiency.label)
    except (ValueError, ArithmeticError):
        return None
    return plan if _reproduces(dep, plan, reference) else None


def _reproduces(dep: Deployment, plan: DecodePlan, reference: Callable[..., Any]) -> bool:
    """The plan against the engine at 24 points over batch and context (module notes)."""
    top = max(1, int(dep.model.max_context))
    C = np.unique(np.array([1, 7, 1000, 4096, top // 2, top])).astype(int)
    B = np.array([1, 2, 3, 17])
    ref = reference(dep, np.repeat(B, C.size), np.tile(C, B.size), on_oom="mark")
    pts = zip(np.repeat(B, C.size), np.tile(C, B.size), strict=True)
    return all(_matches(plan(int(b), int(c)), ref, i) for i, (b, c) in enumerate(pts))


def _matches(got: StepResult, ref: StepResult, i: int) -> bool:
    """Whether a plan's result equals point ``i`` of the engine's (to the check's tolerance)."""
    for name in ("time_s", "roofline_s", "comm_time_s", "compute_time_s", "memory_time_s",
                 "flops_per_device", "bytes_per_device", "tokens_per_s_per_device"):
        want = float(np.ravel(getattr(ref, name))[i])
        if not math.isclose(getattr(got, name), want, rel_tol=_RTOL, abs_tol=1e-300):
            return False
    return got.bound == np.ravel(ref.bound)[i] and got.fits == bool(np.ravel(ref.fits)[i])


#: Scalar decode calls a deployment takes before its plan is built (the build costs about
#: as much as eight full calls, so a one-off call never pays for it; a loop does, once).
WARM_UP_CALLS = 3


def decode_plan(dep: Deployment, reference: Callable[..., Any]) -> DecodePlan | None:
    """The deployment's plan once it has had :data:`WARM_UP_CALLS` scalar decode calls
    (None before, and for a deployment without one); kept on the frozen deployment."""
    return _kept(dep, "decode", build_decode_plan, reference)


def _kept(dep: Deployment, phase: str, build: Callable[..., Any],
          reference: Callable[..., Any]) -> Any:
    """A phase's plan kept on the frozen deployment, built at its WARM_UP_CALLS + 1st call."""
    d = dep.__dict__
    key = f"_{phase}_plan"
    if key in d:
        return d[key]
    calls = d.get(f"_{phase}_calls", 0) + 1
    d[f"_{phase}_calls"] = calls
    if calls <= WARM_UP_CALLS:
        return None
    d[key] = build(dep, reference)
    return d[key]


# --------------------------------------------------------------------------------------------
# Prefill: costs are polynomial in (B, T, c): B sequences of T new tokens on c cached ones
# --------------------------------------------------------------------------------------------
#: Probe points (B, T, c): two batches at T = 1, 2, 3 uncached and T = 1, 2 on C1 cached.
_GT = ((1.0, 0.0), (2.0, 0.0), (3.0, 0.0), (1.0, _C1), (2.0, _C1))
_PROBE = tuple(np.array(v, float) for v in zip(*[(b, t, c) for t, c in _GT for b in (1, 2)],
                                                 strict=True))


def _fit(values: Any) -> tuple[float, ...]:
    """Coefficients on :math:`[1, B, BT, BT^2, BTc, Bc]` (what a dense prefill's costs are
    made of: linear operators in the tokens :math:`BT`, causal attention in
    :math:`BT(c + (T+1)/2)`, the cached prefix read in :math:`Bc`, per-sequence logits in
    :math:`B`) from the values at :data:`_PROBE`, by finite
    differences (exact where the costs are integers or halves, as they are: a zero
    coefficient comes out zero, so nothing grows when a long prompt extrapolates it)."""
    v = np.broadcast_to(np.asarray(values, float), (len(_PROBE[0]),)).reshape(len(_GT), 2)
    g = v[:, 1] - v[:, 0]                      # per extra sequence at each (T, c)
    a = float(v[0, 0] - g[0])
    b3 = (g[2] - 2 * g[1] + g[0]) / 2          # g(T, 0) = b1 + b2 T + b3 T^2
    b2 = g[1] - g[0] - 3 * b3
    b1 = g[0] - b2 - b3
    h1, h2 = (g[3] - g[0]) / _C1, (g[4] - g[1]) / _C1   # c (b4 T + b5) / c at T = 1, 2
    b4 = h2 - h1
    b5 = h1 - b4
    return a, float(b1), float(b2), float(b3), float(b4), float(b5)


@dataclass(frozen=True)
class PrefillPlan:
    """Coefficients of one deployment's prefill (one micro-batch, ``pp`` 1); call with
    (batch, prompt, cached)."""

    ops: tuple[tuple[tuple[float, ...], tuple[float, ...], float, float], ...]
    comm: tuple[tuple[tuple[float, float, float], ...], ...]   # (alpha, per B, per BT) lines
    memory: tuple[float, ...]
    overlap: float
    comm_overlap: float
    overhead_s: float
    usable_bytes: float
    n_devices: int
    tp: int
    label: str

    def __call__(self, B: int, P: int, c: int) -> StepResult:
        T = P - c
        b, bt = float(B), float(B) * T
        m3, m4, m5 = bt * T, bt * c, b * c

        def poly(k: tuple[float, ...]) -> float:
            return k[0] + k[1] * b + k[2] * bt + k[3] * m3 + k[4] * m4 + k[5] * m5

        work = [(poly(f), poly(q), rc, rm) for f, q, rc, rm in self.ops]
        comm = sum(min(a + xb * b + xn * bt for a, xb, xn in lines) for lines in self.comm)
        total = poly(self.memory)
        return _assemble(self, work, comm, self.usable_bytes - total >= 0,
                         phase="midfill" if c > 0 else "prefill", point=(B, P, T), tokens=bt)


def _prefill_lines(dep: Deployment) -> tuple[tuple[tuple[float, float, float], ...], ...]:
    algs = ALGORITHMS if dep.allreduce_algorithm == "auto" else (dep.allreduce_algorithm,)
    B, T = np.array([1.0, 2.0, 1.0]), np.array([1.0, 1.0, 2.0])
    lines: dict[str, list[tuple[float, float, float]]] = {}
    for a in algs:
        d = dep if a == dep.allreduce_algorithm else dep.with_(allreduce_algorithm=a)
        for col in step_comm(d, B, T, 1.0, "prefill"):
            t11, t21, t12 = np.broadcast_to(np.asarray(col.time_s, float), (3,))
            per_bt = t12 - t11                      # message per token: grows with BT
            per_b = t21 - t12                       # message per sequence (logits)
            lines.setdefault(col.name, []).append((t11 - per_bt - per_b, per_b, per_bt))
    return tuple(tuple(v) for v in lines.values())


def build_prefill_plan(dep: Deployment, reference: Callable[..., Any]) -> PrefillPlan | None:
    """The deployment's :class:`PrefillPlan`, or None (as :func:`build_decode_plan`)."""
    if not _supported(dep):
        return None
    B, T, c = _PROBE
    try:
        costs = step_costs(dep, B, T, c, 1.0)
        times = operator_times(dep, costs)
        rates = _rates(dep, costs, times)
        fit = memory_fit(dep, B, T + c, tokens_per_step=B * T)
        plan = PrefillPlan(
            ops=tuple((_fit(o.flops), _fit(o.bytes), rc, rm)
                      for o, (rc, rm) in zip(costs, rates, strict=True)),
            comm=_prefill_lines(dep), memory=_fit(fit.total_bytes),
            overlap=float(dep.efficiency.overlap), comm_overlap=float(dep.comm_overlap),
            overhead_s=float(overhead_s(dep)), usable_bytes=float(fit.usable_bytes),
            n_devices=dep.n_devices, tp=dep.tp, label=dep.efficiency.label)
    except (ValueError, ArithmeticError):
        return None
    return plan if _prefill_reproduces(dep, plan, reference) else None


def _prefill_reproduces(dep: Deployment, plan: PrefillPlan,
                        reference: Callable[..., Any]) -> bool:
    top = max(2, int(dep.model.max_context))
    pts = [(b, p, cc) for b in (1, 3, 16) for p in sorted({2, 7, 1000, 8192, top // 2, top})
           if p <= top for cc in (0, p // 2)]
    B, P, c = (np.array(v) for v in zip(*pts, strict=True))
    ref = reference(dep, P, B, c, on_oom="mark")
    return all(_matches(plan(int(b), int(p), int(cc)), ref, i)
               for i, (b, p, cc) in enumerate(pts))


def prefill_plan(dep: Deployment, reference: Callable[..., Any]) -> PrefillPlan | None:
    """The deployment's prefill plan after :data:`WARM_UP_CALLS` scalar calls (as
    :func:`decode_plan`)."""
    return _kept(dep, "prefill", build_prefill_plan, reference)
