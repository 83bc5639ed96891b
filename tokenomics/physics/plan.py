"""A deployment's decode step as precomputed coefficients: the scalar fast path of decode.

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
        o1 = 1.0 - self.overlap
        roof = comp = mem = cb = fl = by = 0.0
        for f0, f1, f2, q0, q1, q2, rc, rm in self.ops:
            flops, bytes_ = f0 + f1 * b + f2 * bc, q0 + q1 * b + q2 * bc
            tc, tm = flops * rc, bytes_ * rm
            t = max(tc, tm) + (o1 * min(tc, tm) if o1 > 0 else 0.0)
            roof, comp, mem = roof + t, comp + tc, mem + tm
            cb += t if tc > tm else 0.0
            fl, by = fl + flops / self.tp, by + bytes_ / self.tp
        total = sum(min(a + x * b for a, x in lines) for lines in self.comm)
        comm = total - min(self.comm_overlap * total, roof)
        time = roof + comm + self.overhead_s
        m0, m1, m2 = self.memory
        fits = self.usable_bytes - (m0 + m1 * b + m2 * bc) >= 0
        return StepResult(
            phase="decode", time_s=time, roofline_s=roof, lower_bound_s=max(comp, mem),
            compute_time_s=comp, memory_time_s=mem, comm_time_s=comm,
            overhead_s=self.overhead_s, flops_per_device=fl, bytes_per_device=by,
            bound="compute" if cb > 0.5 * roof else "memory", tokens_per_s_per_user=1.0 / time,
            tokens_per_s_per_device=b / time / self.n_devices, fits=bool(fits), batch=B,
            context_tokens=C, new_tokens=1, efficiency=self.label)


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
    n, eff = dep.tp, dep.efficiency
    out = []
    for op in costs:
        f = np.broadcast_to(np.asarray(op.flops, float), (3,))
        q = np.broadcast_to(np.asarray(op.bytes, float), (3,))
        p = (dep.attention_peak_flop_per_s() if op.name == "attn_core"
             else dep.compute_peak_flop_per_s()) * eff.mfu
        scale = float(np.ravel(compute_scale(dep, op))[0])
        rc = 1.0 / (n * p * scale)
        rm = 1.0 / (n * dep.hardware.mem_bw_bytes_per_s * eff.mbu)
        if not np.allclose(np.asarray(times.per_op[op.name][0], float), f * rc, rtol=1e-12):
            raise ValueError(op.name)                       # the rates are not the engine's
        out.append((*_affine(*f), *_affine(*q), rc, rm))
    return tuple(out)


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
    for i, (b, c) in enumerate(zip(np.repeat(B, C.size), np.tile(C, B.size), strict=True)):
        got = plan(int(b), int(c))
        for name in ("time_s", "roofline_s", "comm_time_s", "compute_time_s", "memory_time_s",
                     "flops_per_device", "bytes_per_device", "tokens_per_s_per_device"):
            want = float(np.ravel(getattr(ref, name))[i])
            if not math.isclose(getattr(got, name), want, rel_tol=_RTOL, abs_tol=1e-300):
                return False
        if got.bound != np.ravel(ref.bound)[i] or got.fits != bool(np.ravel(ref.fits)[i]):
            return False
    return True


#: Scalar decode calls a deployment takes before its plan is built (the build costs about
#: as much as eight full calls, so a one-off call never pays for it; a loop does, once).
WARM_UP_CALLS = 3


def decode_plan(dep: Deployment, reference: Callable[..., Any]) -> DecodePlan | None:
    """The deployment's plan once it has had :data:`WARM_UP_CALLS` scalar decode calls
    (None before, and for a deployment without one); kept on the frozen deployment."""
    d = dep.__dict__
    if "_decode_plan" in d:
        return d["_decode_plan"]
    calls = d.get("_decode_calls", 0) + 1
    d["_decode_calls"] = calls
    if calls <= WARM_UP_CALLS:
        return None
    d["_decode_plan"] = build_decode_plan(dep, reference)
    return d["_decode_plan"]
