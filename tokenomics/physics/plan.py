"""A deployment's decode, prefill and mixed steps as precomputed coefficients: the scalar
fast paths.

A scalar :func:`tokenomics.decode` call spends its time in Python, not in arithmetic: a
dozen operators, their collectives and the memory check are built and validated as arrays
for one point. For a deployment without sliding windows, linear or sparse attention or
pipeline stages, every ingredient of a decode step but one is affine in the batch :math:`b`
and in :math:`b C` (context :math:`C`): each operator's FLOPs and bytes, the memory it
holds, and each collective's time under each all-reduce algorithm. The exception, a mixture
of experts' routed experts (their weight bytes follow the distinct-expert law, their grouped
GEMM's efficiency the tokens per expert), is a function of the step's tokens alone and keeps
the engine's own per-operator law (:func:`~tokenomics.physics.engine.operator_seconds`). A
:class:`DecodePlan` reads the coefficients once from the engine itself (at three points),
then times a scalar point in plain floats; :class:`PrefillPlan` does the same on the
monomials of (batch, new tokens, cached tokens), and :class:`MixedPlan` for the mixed steps
of continuous batching (:func:`tokenomics.steady_state`). A plan is built once a deployment
has had :data:`WARM_UP_CALLS` scalar calls, and before it is used it is checked against the
engine (24, 36 and 90 points); a deployment whose costs are not polynomial, or that fails
the check, gets no plan and takes the full path.

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

from tokenomics.core.errors import TokenomicsError
from tokenomics.data.deployment import Deployment
from tokenomics.physics.collectives import step_comm
from tokenomics.physics.engine import (
    StepResult,
    compute_scale,
    effective_peaks,
    exposed_comm,
    operator_seconds,
    operator_time,
    operator_times,
    overhead_s,
)
from tokenomics.physics.lines import experts_of, two_point_line
from tokenomics.physics.memory import batch_budget, max_batch, memory_fit
from tokenomics.physics.operators import mixed_costs, step_costs

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
    experts: Any = None                     # a mixture of experts' routed experts, or None
    host_per_row: float = 0.0               # host seconds per sampled token (token overhead)

    def __call__(self, B: int, C: int) -> StepResult:
        b, bc = float(B), float(B) * float(C)
        work = [_work(f0 + f1 * b + f2 * bc, q0 + q1 * b + q2 * bc, rc, rm)
                for f0, f1, f2, q0, q1, q2, rc, rm in self.ops]
        if self.experts is not None:
            work.append(_expert_work(self.experts, b))
        comm = sum(min(a + x * b for a, x in lines) for lines in self.comm)
        m0, m1, m2 = self.memory
        return _assemble(self, work, comm, self.usable_bytes - (m0 + m1 * b + m2 * bc) >= 0,
                         phase="decode", point=(b, float(C), 1.0), tokens=b, rows=b)


def _work(flops: float, bytes_: float, rc: float, rm: float) -> tuple[float, ...]:
    """An affine operator's (compute time, memory time, FLOPs, bytes) at its rates."""
    return flops * rc, bytes_ * rm, flops, bytes_


def _expert_work(experts: Any, tokens: float) -> tuple[float, ...]:
    """The routed experts' (compute time, memory time, FLOPs, bytes) at ``tokens`` tokens
    in the step, timed by the engine's own per-operator law
    (:func:`~tokenomics.physics.engine.operator_seconds`: the grouped GEMM's efficiency and
    the ranks' load depend on the tokens per expert)."""
    dep, ex = experts
    op = ex.cost(float(tokens))
    tc, tm = operator_seconds(dep, op)
    return float(tc), float(tm), float(op.flops), float(op.bytes)


def _assemble(plan: Any, work: list[tuple[float, ...]], comm_total: float,
              fits: bool, *, phase: str, point: tuple[int, int, int],
              tokens: float, rows: float) -> StepResult:
    """A :class:`StepResult` from each operator's (compute time, memory time, FLOPs, bytes)
    and the collectives' total, as :func:`~tokenomics.physics.engine.operator_times` and
    :func:`~tokenomics.physics.engine.step_result` assemble them."""
    o = plan.overlap
    roof = comp = mem = cb = fl = by = 0.0
    for tc, tm, flops, bytes_ in work:
        t = operator_time(tc, tm, o)
        roof, comp, mem = roof + t, comp + tc, mem + tm
        cb += t if tc > tm else 0.0
        fl, by = fl + flops / plan.tp, by + bytes_ / plan.tp
    comm = exposed_comm(float(comm_total), roof, plan.comm_overlap)
    overhead = plan.overhead_s + plan.host_per_row * rows
    time = roof + comm + overhead
    B, C, T = point
    return StepResult(
        phase=phase, time_s=time, roofline_s=roof, lower_bound_s=max(comp, mem),
        compute_time_s=comp, memory_time_s=mem, comm_time_s=comm,
        overhead_s=overhead, flops_per_device=fl, bytes_per_device=by,
        bound="compute" if cb > 0.5 * roof else "memory", tokens_per_s_per_user=T / time,
        tokens_per_s_per_device=tokens / time / plan.n_devices, fits=bool(fits), batch=B,
        context_tokens=C, new_tokens=T, efficiency=plan.label,
        collective_time_s=float(comm_total))


def _host_per_row(dep: Deployment) -> float:
    """Host seconds per sampled token of the deployment's steps (token overhead over its
    attention-data-parallel schedulers) [s]."""
    return float(dep.efficiency.token_overhead_s) / dep.dp_attention


def _supported(dep: Deployment) -> bool:
    m = dep.model
    return (dep.pp == 1 and m.num_linear_layers == 0
            and not getattr(m.attention, "is_sparse", False)
            and all(w == math.inf for _, w, _ in m.window_groups())
            and dep.compute_peak_published)


def _affine_ops(dep: Deployment, costs: list[Any]) -> list[Any]:
    """The operators whose costs are polynomial: all but a mixture of experts' routed
    experts (:func:`_experts` times those)."""
    return [o for o in costs if not (o.name == "moe_experts" and dep.model.is_moe)]


def _experts(dep: Deployment) -> tuple[Deployment, Any] | None:
    """(deployment, :class:`~tokenomics.physics.lines.Experts` per token) of a mixture of
    experts, None for a dense model."""
    if not dep.model.is_moe:
        return None
    costs = step_costs(dep, np.array([1.0, 2.0]), 1.0, 0.0, 1.0)
    return dep, experts_of(dep, next(o for o in costs if o.name == "moe_experts"), 1.0)


def _op_coefficients(dep: Deployment) -> tuple[tuple[float, ...], ...]:
    probe = np.array([1.0, 2.0, 1.0]), np.array([_C1, _C1, _C2])
    costs = _affine_ops(dep, step_costs(dep, probe[0], 1.0, probe[1], 1.0))
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
    gemm, attn = effective_peaks(dep)
    for op in costs:
        p = attn if op.name == "attn_core" else gemm
        rc = 1.0 / (n * p * float(np.ravel(compute_scale(dep, op))[0]))
        f = np.asarray(op.flops, float)
        if not np.allclose(np.asarray(times.per_op[op.name][0], float), f * rc, rtol=1e-12):
            raise ValueError(op.name)                       # the rates are not the engine's
        out.append((rc, rm))
    return out


def _times_by_algorithm(dep: Deployment, batch: Any, new: Any, logits: Any,
                        phase: str) -> list[np.ndarray]:
    """Per collective, (algorithms it may take, probe points): its time under each, from
    one :func:`~tokenomics.physics.collectives.step_comm` call (``algorithm="each"``)."""
    alg = "each" if dep.allreduce_algorithm == "auto" else None
    k = np.broadcast(np.asarray(batch), np.asarray(new), np.asarray(logits)).size
    out = []
    for col in step_comm(dep, batch, new, logits, phase, algorithm=alg):
        t = np.asarray(col.time_s, float)
        out.append(t.reshape(-1, k) if t.ndim > 1 else np.broadcast_to(t, (k,))[None, :])
    return out


def _comm_lines(dep: Deployment) -> tuple[tuple[tuple[float, float], ...], ...]:
    """Per collective, its (alpha, per sequence) line under each algorithm it may take."""
    return tuple(tuple(two_point_line(r) for r in rows)
                 for rows in _times_by_algorithm(dep, np.array([1.0, 2.0]), 1.0, 1.0,
                                                 "decode"))


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
            overlap=float(dep.efficiency.overlap), comm_overlap=float(dep.comm_hidden_share),
            overhead_s=float(overhead_s(dep)), host_per_row=_host_per_row(dep),
            memory=_affine(*np.broadcast_to(np.asarray(fit.total_bytes, float), (3,))),
            usable_bytes=float(fit.usable_bytes), n_devices=dep.n_devices, tp=dep.tp,
            label=dep.efficiency.label, experts=_experts(dep))
    except (ValueError, ArithmeticError):
        return None
    return plan if _reproduces(dep, plan, reference) else None


def _reproduces(dep: Deployment, plan: DecodePlan, reference: Callable[..., Any]) -> bool:
    """The plan against the engine at 24 points over batch and context (module notes)."""
    top = max(1, int(dep.model.max_context))
    C = np.unique(np.array([c for c in (1, 7, 1000, 4096, top // 2, top) if 1 <= c <= top]))
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


def decode_grid_plan(dep: Deployment, reference: Callable[..., Any]) -> DecodePlan | None:
    """The deployment's plan for a decode over many points
    (:data:`~tokenomics.physics.grid.GRID_POINTS` or more), built now when it has none (None
    for a deployment without one); kept as :func:`decode_plan` keeps it."""
    return _kept(dep, "decode", build_decode_plan, reference, now=True)


def _kept(dep: Deployment, phase: str, build: Callable[..., Any],
          reference: Callable[..., Any], now: bool = False) -> Any:
    """A phase's plan kept on the frozen deployment, built at its WARM_UP_CALLS + 1st call
    (at once with ``now``)."""
    d = dep.__dict__
    key = f"_{phase}_plan"
    if key in d:
        return d[key]
    calls = d.get(f"_{phase}_calls", 0) + 1
    d[f"_{phase}_calls"] = calls
    if calls <= WARM_UP_CALLS and not now:
        return None
    try:
        plan = build(dep, reference)
    except TokenomicsError:       # a probe the deployment refuses: no plan, and no retry
        plan = None
    d[key] = plan
    return plan


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
    experts: Any = None                     # a mixture of experts' routed experts, or None
    host_per_row: float = 0.0               # host seconds per sampled token (token overhead)

    def __call__(self, B: int, P: int, c: int) -> StepResult:
        T = P - c
        b, bt = float(B), float(B) * T
        m3, m4, m5 = bt * T, bt * c, b * c

        def poly(k: tuple[float, ...]) -> float:
            return k[0] + k[1] * b + k[2] * bt + k[3] * m3 + k[4] * m4 + k[5] * m5

        work = [_work(poly(f), poly(q), rc, rm) for f, q, rc, rm in self.ops]
        if self.experts is not None:
            work.append(_expert_work(self.experts, bt))
        comm = sum(min(a + xb * b + xn * bt for a, xb, xn in lines) for lines in self.comm)
        total = poly(self.memory)
        return _assemble(self, work, comm, self.usable_bytes - total >= 0,
                         phase="midfill" if c > 0 else "prefill",
                         point=(b, float(P), float(T)), tokens=bt, rows=b)


def _prefill_lines(dep: Deployment) -> tuple[tuple[tuple[float, float, float], ...], ...]:
    """Per collective, its (alpha, per sequence, per token) line under each algorithm: a
    message per token grows with BT, the logits' with B."""
    B, T = np.array([1.0, 2.0, 1.0]), np.array([1.0, 1.0, 2.0])
    out = []
    for rows in _times_by_algorithm(dep, B, T, 1.0, "prefill"):
        lines = []
        for t11, t21, t12 in rows:
            per_bt, per_b = t12 - t11, t21 - t12
            lines.append((float(t11 - per_bt - per_b), float(per_b), float(per_bt)))
        out.append(tuple(lines))
    return tuple(out)


def build_prefill_plan(dep: Deployment, reference: Callable[..., Any]) -> PrefillPlan | None:
    """The deployment's :class:`PrefillPlan`, or None (as :func:`build_decode_plan`)."""
    if not _supported(dep):
        return None
    B, T, c = _PROBE
    try:
        costs = _affine_ops(dep, step_costs(dep, B, T, c, 1.0))
        times = operator_times(dep, costs)
        rates = _rates(dep, costs, times)
        fit = memory_fit(dep, B, T + c, tokens_per_step=B * T)
        plan = PrefillPlan(
            ops=tuple((_fit(o.flops), _fit(o.bytes), rc, rm)
                      for o, (rc, rm) in zip(costs, rates, strict=True)),
            comm=_prefill_lines(dep), memory=_fit(fit.total_bytes),
            overlap=float(dep.efficiency.overlap), comm_overlap=float(dep.comm_hidden_share),
            overhead_s=float(overhead_s(dep)), host_per_row=_host_per_row(dep),
            usable_bytes=float(fit.usable_bytes),
            n_devices=dep.n_devices, tp=dep.tp, label=dep.efficiency.label,
            experts=_experts(dep))
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


# --------------------------------------------------------------------------------------------
# Mixed steps: D decodes at context C beside b prefill chunks of T tokens on c cached ones
# --------------------------------------------------------------------------------------------
#: Decode-part probes (D, C) = (1, C1), (2, C1), (1, C2), as the decode plan's.
_DPROBE = (np.array([1.0, 2.0, 1.0]), np.array([_C1, _C1, _C2]))


def _decode_part(values: Any) -> tuple[float, float, float]:
    """(a, x, y) of a + x D + y D C from values at the decode probes (D, C) = (1, C1),
    (2, C1), (1, C2)."""
    return _affine(*np.broadcast_to(np.asarray(values, float), (3,)))


def _other_bytes(op: Any) -> Any:
    """An operator's KV and activation bytes: what two parts of a mixed step add."""
    return np.asarray(op.kv_bytes, float) + np.asarray(op.act_bytes, float)


@dataclass(frozen=True)
class MixedPlan:
    """Coefficients of one deployment's mixed step (continuous batching, ``pp`` 1).

    Per operator, as :func:`~tokenomics.physics.operators.mixed_costs` composes a step, its
    compute and memory times are linear on the monomials
    :math:`[1, D, DC, b, bT, bT^2, bTc, bc]` of :math:`D` decodes at context :math:`C` beside
    :math:`b` prefill chunks of :math:`T` tokens on :math:`c` cached ones: the decode part's
    FLOPs and KV/activation bytes affine in :math:`D` and :math:`DC`, the prefill part's on
    the prefill plan's monomials, the weights read once for the step's :math:`n = D + bT`
    tokens (``fc``, ``qc``: seconds per monomial, the rates folded in). Each collective's
    time under each algorithm is affine in :math:`n` and in the rows whose logits are
    gathered, :math:`L = D + b` (only the calls' fixed overheads when :math:`n = 0`), and
    the step takes each
    collective's fastest (``lines``, grouped by ``starts``). ``budget`` is
    :func:`~tokenomics.physics.memory.max_batch`'s: room and bytes per sequence, affine in
    its length.
    """

    fc: np.ndarray                      # (operators, 8) compute seconds per monomial
    qc: np.ndarray                      # (operators, 8) memory seconds per monomial
    lines: np.ndarray                   # (lines, 3): alpha, per n, per L of every algorithm...
    starts: np.ndarray                  # ... of each collective, from these rows on
    overlap: float
    comm_overlap: float
    overhead_s: float
    budget: tuple[float, float, float]  # room, per sequence k0 + k1 x tokens [B]
    experts: Any = None                 # a mixture of experts' routed experts, or None
    idle_comm_s: float = 0.0            # the collectives' fixed overheads of a step of no tokens
    host_per_row: float = 0.0           # host seconds per sampled token (token overhead)

    def times(self, D: Any, C: Any, T: Any, c: Any, b: Any) -> np.ndarray:
        """Step times of ``D`` decodes at ``C`` beside ``b`` chunks of ``T`` tokens on ``c``
        cached, at each point of the (broadcast) arrays [s]
        (:func:`~tokenomics.serving.batching.mixed_step_seconds`)."""
        D, C, T, c, b = np.broadcast_arrays(*(np.asarray(v, float) for v in (D, C, T, c, b)))
        bt = b * T
        mono = np.stack([np.ones_like(D), D, D * C, b, bt, bt * T, bt * c, b * c])
        shape = D.shape
        return self._evaluate(mono.reshape(8, -1), (D + bt).ravel(),
                              (D + b).ravel()).reshape(shape)

    def __post_init__(self) -> None:
        # A line alpha + x n + y L is linear on the monomials too (n = D + bT, L = D + b):
        # every operator's two times and every collective line come from one product.
        a, x, y = (self.lines[:, i] if len(self.lines) else np.empty(0) for i in range(3))
        z = np.zeros_like(a)
        comm = np.column_stack([a, x + y, z, y, x, z, z, z]).reshape(-1, 8)
        object.__setattr__(self, "_rows", np.vstack([self.fc, self.qc, comm]))

    def times_at(self, points: list[tuple[float, float, float, float, float]]) -> list[float]:
        """:meth:`times` at a few points given as Python floats ``(D, C, T, c, b)`` (the
        monomials built in plain floats: the scalar fast path's form) [s]."""
        rows = [(1.0, D, D * C, b, b * T, b * T * T, b * T * c, b * c)
                for D, C, T, c, b in points]
        n = [D + b * T for D, _, T, _, b in points]
        sampled = [D + b for D, _, _, _, b in points]
        return self._evaluate(np.array(rows).T, n, sampled).tolist()

    def _evaluate(self, mono: np.ndarray, n: Any, sampled: Any = 0.0) -> np.ndarray:
        """Step times from the monomials (8, points), the step's tokens and its sampled
        rows [s]."""
        k = len(self.fc)
        r = self._rows @ mono
        roof = operator_time(r[:k], r[k:2 * k], self.overlap).sum(axis=0)
        if self.experts is not None:             # the routed experts see all n tokens
            dep, ex = self.experts
            e_tc, e_tm = operator_seconds(dep, ex.cost(np.asarray(n, float)))
            roof = roof + operator_time(e_tc, e_tm, self.overlap)
        overhead = self.overhead_s + self.host_per_row * np.asarray(sampled, float)
        if not len(self.starts):
            return roof + overhead
        # each collective's fastest algorithm, then their sum; no tokens, no messages
        comm = np.minimum.reduceat(r[2 * k:], self.starts, axis=0).sum(axis=0)
        if min(n) <= 0:                          # no tokens: only the calls' fixed overhead
            comm = np.where(np.asarray(n) > 0, comm, self.idle_comm_s)
        return roof + exposed_comm(comm, roof, self.comm_overlap) + overhead

    def max_batch(self, tokens: float) -> int | None:
        """:func:`~tokenomics.physics.memory.max_batch` at ``tokens`` per sequence; None
        where the quotient lies within 1e-9 of a whole number (the engine's rounding could
        floor it to the other side: ask the engine)."""
        room, k0, k1 = self.budget
        q = max(room, 0.0) / (k0 + k1 * tokens)
        if abs(q - round(q)) <= 1e-9 * max(1.0, q):
            return None
        return int(math.floor(q))


def _mixed_coefficients(dep: Deployment) -> tuple[np.ndarray, np.ndarray]:
    """(compute, memory) seconds per monomial of each operator of a mixed step (the
    :class:`MixedPlan` notes); operators with no cost left out."""
    dec = _affine_ops(dep, step_costs(dep, _DPROBE[0], 1.0, _DPROBE[1], 1.0))
    B, T, c = _PROBE
    pre = _affine_ops(dep, step_costs(dep, B, T, c, 1.0))
    w = _affine_ops(dep, step_costs(dep, 1.0, np.array([1.0, 2.0]), 0.0, 0.0))
    probe = _affine_ops(dep, mixed_costs(dep, _DPROBE[0], _DPROBE[1], 3.0, _C1, 2.0))
    rates = _rates(dep, probe, operator_times(dep, probe))
    fc, qc = [], []
    for d, p, wt, (rc, rm) in zip(dec, pre, w, rates, strict=True):
        fa, fx, fy = _decode_part(d.flops)
        qa, qx, qy = _decode_part(_other_bytes(d))
        f, q = _fit(p.flops), _fit(_other_bytes(p))
        w0, w1 = two_point_line(wt.weight_bytes)     # weights of n = D + bT tokens
        F = (fa + f[0], fx, fy, f[1], f[2], f[3], f[4], f[5])
        Q = (qa + q[0] + w0, qx + w1, qy, q[1], q[2] + w1, q[3], q[4], q[5])
        if any(F) or any(Q):
            fc.append([v * rc for v in F])
            qc.append([v * rm for v in Q])
    return np.asarray(fc, float).reshape(-1, 8), np.asarray(qc, float).reshape(-1, 8)


def _mixed_lines(dep: Deployment) -> tuple[np.ndarray, ...]:
    """Each collective's (alpha, per token, per logits row) under each algorithm the
    deployment may pick, from its times at (n, L) = (1, 1), (2, 1), (1, 2)."""
    out = []
    for rows in _times_by_algorithm(dep, 1.0, np.array([1.0, 2.0, 1.0]),
                                    np.array([1.0, 1.0, 2.0]), "prefill"):
        out.append(np.column_stack([rows[:, 0] - (rows[:, 1] - rows[:, 0])
                                    - (rows[:, 2] - rows[:, 0]),
                                    rows[:, 1] - rows[:, 0], rows[:, 2] - rows[:, 0]]))
    return tuple(out)


def _idle_comm(dep: Deployment) -> float:
    """The collectives' time in a step of no tokens: each call's fixed overhead [s]."""
    alg = "each" if dep.allreduce_algorithm == "auto" else None
    cols = step_comm(dep, 1.0, 0.0, 0.0, "prefill", algorithm=alg)
    return float(sum(np.min(np.atleast_1d(np.asarray(c.time_s, float))) for c in cols))


def build_mixed_plan(dep: Deployment, reference: Callable[..., Any]) -> MixedPlan | None:
    """The deployment's :class:`MixedPlan`, or None when it has none (as
    :func:`build_decode_plan`) or the plan does not reproduce ``reference``
    (:func:`tokenomics.serving.batching.mixed_step_seconds`) at the check's points."""
    if not _supported(dep):
        return None
    try:
        fc, qc = _mixed_coefficients(dep)
        room, per_seq = batch_budget(dep, np.array([_C1, _C2]))
        k1 = float(per_seq[1] - per_seq[0]) / (_C2 - _C1)
        comm = _mixed_lines(dep)
        plan = MixedPlan(fc=fc, qc=qc, lines=np.concatenate(comm or [np.empty((0, 3))]),
                         starts=np.cumsum([0] + [len(x) for x in comm[:-1]]).astype(int)
                         if comm else np.empty(0, int),
                         overlap=float(dep.efficiency.overlap),
                         comm_overlap=float(dep.comm_hidden_share),
                         overhead_s=float(overhead_s(dep)), host_per_row=_host_per_row(dep),
                         budget=(float(room), float(per_seq[0]) - k1 * _C1, k1),
                         experts=_experts(dep), idle_comm_s=_idle_comm(dep))
    except (ValueError, ArithmeticError):
        return None
    return plan if _mixed_reproduces(dep, plan, reference) else None


def _mixed_reproduces(dep: Deployment, plan: MixedPlan, reference: Callable[..., Any]) -> bool:
    """The plan against the engine: step times at 90 mixed steps (fractional decodes and
    chunks, no prefill, no decodes, neither, long prompts on long caches) and the batch
    limit at up to six lengths."""
    top = float(max(2, int(dep.model.max_context)))
    chunks = [(1.0, 0.0, 0.0), (1.0, 0.0, 1.0), (512.0, 0.0, 0.5), (2048.0, 1024.0, 1.0),
              (8192.0, 0.0, 3.25), (top // 2, top // 4, 1.0)]
    pts = [(D, C, T, c, b) for D in (0.0, 1.0, 3.5, 63.5, 1000.0)
           for C in (1.0, 2048.0, top) for T, c, b in chunks]
    D, C, T, c, b = (np.array(v) for v in zip(*pts, strict=True))
    want = np.asarray(reference(dep, D, C, T, c, b), float)
    one = plan.times_at(pts[::7])               # the floats form the scalar fast path takes
    if not (np.allclose(plan.times(D, C, T, c, b), want, rtol=_RTOL, atol=0)
            and np.allclose(one, want[::7], rtol=_RTOL, atol=0)):
        return False
    for tokens in sorted({t for t in (1.0, 7.0, 1000.0, 4096.0, top // 2, top) if t <= top}):
        got = plan.max_batch(tokens)
        if got is not None and got != int(max_batch(dep, tokens)):
            return False
    return True


def mixed_plan(dep: Deployment, reference: Callable[..., Any]) -> MixedPlan | None:
    """The deployment's mixed-step plan after :data:`WARM_UP_CALLS` scalar calls (as
    :func:`decode_plan`)."""
    return _kept(dep, "mixed", build_mixed_plan, reference)
