"""A decode over many (batch, context) points from a deployment's plan: the vector engine on
the plans' coefficients.

:func:`tokenomics.decode` over an array of :data:`GRID_POINTS` points or more, on a
deployment with a :class:`~tokenomics.physics.plan.DecodePlan`, is timed here instead of by
the operator engine; the result equals the engine's to 1e-12 (tests/physics/test_plan.py).

Notes
-----
Every operator of a decode step but the routed experts has FLOPs and bytes affine in the
batch :math:`b` and in :math:`bC` (context :math:`C`); its time is
:math:`t_o = \\max(t_c, t_m) + (1 - \\omega)\\min(t_c, t_m)` of two affine terms. Most
operators do not grow with :math:`bC` at all (the weight GEMMs, the embedding, the head):
their :math:`t_o(b)` is linear on either side of the operator's ridge batch, where its two
terms cross, and each collective's fastest algorithm is linear between the batches where two
algorithms' lines cross. Between consecutive crossings, the sum of all of them is one line
in :math:`b`, so a grid reads it per whole batch from a table (or per segment past
:data:`GRID_TABLE`). The operators that grow with :math:`bC` (attention over the cache)
keep their two terms, and one whose :math:`t_c - t_m` keeps its sign at the four corners of
a block's (batch, context) box keeps it inside (the difference is bilinear in :math:`b` and
:math:`C`): its time is then affine too. What remains is one small matrix product per block
of :data:`GRID_BLOCK` points, and the routed experts by the engine's own law, per batch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from tokenomics.physics.engine import exposed_comm, operator_seconds, operator_time
from tokenomics.physics.lines import crossing_batch
from tokenomics.physics.plan import DecodePlan

#: Points from which an array decode is timed from the deployment's plan (built then if it
#: has none yet: the build, about 2 ms, is then a small share of the engine's time).
GRID_POINTS = 2048
#: Points per block (its arrays stay in cache), and the largest batch whose batch-only
#: terms are read from a table of every whole batch (and never a table longer than the
#: grid, or 4,096).
GRID_BLOCK = 1 << 14
GRID_TABLE = 1 << 20
#: The float fields of :class:`~tokenomics.physics.engine.StepResult` a grid computes.
GRID_FIELDS = ("time_s", "roofline_s", "lower_bound_s", "compute_time_s", "memory_time_s",
               "comm_time_s", "overhead_s", "flops_per_device", "bytes_per_device",
               "collective_time_s")


@dataclass(frozen=True)
class DecodeGrid:
    """A decode plan's step as lines in the batch between crossings, plus the terms that
    grow with the batch-context product (module notes).

    Attributes
    ----------
    knots : numpy.ndarray
        Batches where a batch-only operator's two terms or two algorithms of a collective
        cross, sorted [seq].
    time, compute, comm : numpy.ndarray
        (segments, 2): per segment between knots, :math:`a + x b` of the batch-only
        operators' roofline time, of its compute-bound part and of the collectives' total
        (each at its fastest algorithm) [s].
    ctx_fc, ctx_fm : numpy.ndarray
        (operators, 3): the compute and memory seconds of the operators that grow with
        :math:`bC`, on :math:`[1, b, bC]` [s].
    fixed : numpy.ndarray
        (4, 3): FLOPs and bytes per device [FLOP], [B], and the total compute and memory
        seconds of every affine operator [s], on :math:`[1, b, bC]`.
    """

    knots: np.ndarray
    time: np.ndarray
    compute: np.ndarray
    comm: np.ndarray
    ctx_fc: np.ndarray
    ctx_fm: np.ndarray
    fixed: np.ndarray

    @classmethod
    def of(cls, plan: DecodePlan) -> DecodeGrid:
        """The plan's grid (built once, kept on the frozen plan)."""
        got = plan.__dict__.get("_grid")
        if got is None:
            got = cls._build(plan)
            object.__setattr__(plan, "_grid", got)
        return got

    @classmethod
    def _build(cls, plan: DecodePlan) -> DecodeGrid:
        ops = np.asarray(plan.ops, float).reshape(-1, 8)
        ops = ops[np.any(ops[:, :6] != 0.0, axis=1)]
        fc, fm = ops[:, 0:3] * ops[:, 6:7], ops[:, 3:6] * ops[:, 7:8]
        fixed = np.vstack([ops[:, 0:3].sum(axis=0) / plan.tp, ops[:, 3:6].sum(axis=0) / plan.tp,
                           fc.sum(axis=0), fm.sum(axis=0)])
        ctx = (fc[:, 2] != 0.0) | (fm[:, 2] != 0.0)
        lines = [(fc[i, :2], fm[i, :2]) for i in np.flatnonzero(~ctx)]
        cross = {crossing_batch(*u, *v) for u, v in lines} | {
            crossing_batch(*u, *v) for col in plan.comm for u in col for v in col}
        knots = np.asarray(sorted(k for k in cross if k is not None), float)
        # one batch inside each segment: below the first knot, between, above the last
        mids = np.concatenate([[0.5 * knots[0]] if len(knots) else [1.0],
                               0.5 * (knots[1:] + knots[:-1]), knots[-1:] * 2.0 + 1.0])
        hidden = 1.0 - plan.overlap
        time, comp, comm = (np.zeros((len(mids), 2)) for _ in range(3))
        for s, beta in enumerate(mids):
            for c_line, m_line in lines:
                above = c_line[0] + c_line[1] * beta > m_line[0] + m_line[1] * beta
                t = c_line + hidden * m_line if above else m_line + hidden * c_line
                time[s] += t
                comp[s] += t if above else 0.0
            for col in plan.comm:
                comm[s] += min(col, key=lambda ln, x=beta: ln[0] + ln[1] * x)
        return cls(knots, time, comp, comm, fc[ctx], fm[ctx], fixed)

    def lines(self, b: np.ndarray) -> list[np.ndarray]:
        """The batch-only operators' roofline time, its compute-bound part and the
        collectives' total at batches ``b`` [s] (each segment's line at its batches)."""
        seg = np.searchsorted(self.knots, b)
        return [v[seg, 0] + v[seg, 1] * b for v in (self.time, self.compute, self.comm)]

    def context_rows(self, overlap: float, b: tuple[float, float],
                     c: tuple[float, float]) -> tuple[np.ndarray, int]:
        """The rows of a block whose batches and contexts lie in the boxes ``b`` and ``c``:
        the compute and memory rows of the context-growing operators of either bound inside
        the box, the fixed rows, then the time and compute-bound time of those of one
        bound (module notes); and how many are of either bound."""
        corners = np.array([[1.0, bb, bb * cc] for bb in b for cc in c]).T
        gap = (self.ctx_fc - self.ctx_fm) @ corners
        comp, mem = (gap > 0).all(axis=1), (gap < 0).all(axis=1)
        mixed = ~(comp | mem)
        hidden = 1.0 - overlap
        t_comp = self.ctx_fc[comp] + hidden * self.ctx_fm[comp]
        t_mem = self.ctx_fm[mem] + hidden * self.ctx_fc[mem]
        one = np.vstack([t_comp.sum(axis=0) + t_mem.sum(axis=0), t_comp.sum(axis=0)])
        mat = np.vstack([self.ctx_fc[mixed], self.ctx_fm[mixed], self.fixed, one])
        return mat, int(mixed.sum())


def decode_grid(plan: DecodePlan, B: np.ndarray, C: np.ndarray) -> dict[str, np.ndarray]:
    """A decode at every point of two broadcast float arrays of whole batches ``B`` and
    contexts ``C`` (validated by the caller) from the plan, in blocks of
    :data:`GRID_BLOCK` points (module notes).

    Returns
    -------
    dict of numpy.ndarray
        The :data:`GRID_FIELDS` of :class:`~tokenomics.physics.engine.StepResult`, flat, as
        :func:`~tokenomics.physics.engine.step_result` computes them [s], [FLOP], [B]; and
        ``compute_bound`` (the operators bound by compute take over half the roofline
        time) and ``fits`` (bool).
    """
    b_all, c_all = (np.asarray(v, float).ravel() for v in np.broadcast_arrays(B, C))
    out = {k: np.empty(b_all.size) for k in GRID_FIELDS}
    out["compute_bound"], out["fits"] = np.empty((2, b_all.size), bool)
    g = DecodeGrid.of(plan)
    top = float(b_all.max())
    # a table of every whole batch up to the largest, read by index, where it is no longer
    # than the grid (else each block's batches are looked up by segment)
    tables = (_batch_terms(plan, g, np.arange(int(top) + 1, dtype=float))
              if top <= min(GRID_TABLE, max(4096, b_all.size)) else None)
    # one matrix for every block where the whole grid's box already fixes each bound
    whole = g.context_rows(plan.overlap, (b_all.min(), top), (c_all.min(), c_all.max()))
    for lo in range(0, b_all.size, GRID_BLOCK):
        sl = slice(lo, lo + GRID_BLOCK)
        b, c = b_all[sl], c_all[sl]
        if tables is None:
            terms = _batch_terms(plan, g, b)
        else:
            i = b.astype(np.intp)
            terms = [v[i] if np.ndim(v) else v for v in tables]
        rows = whole if not whole[1] else g.context_rows(
            plan.overlap, (b.min(), b.max()), (c.min(), c.max()))
        _block(plan, rows, b, c, terms, {k: v[sl] for k, v in out.items()})
    return out


def _batch_terms(plan: DecodePlan, g: DecodeGrid, b: np.ndarray) -> list[Any]:
    """What depends on the batch alone, at batches ``b``: the roofline time and its
    compute-bound part of the batch-only operators and of the routed experts (by the
    engine's law), the collectives' total [s], and the experts' compute and memory terms
    [s], FLOPs and bytes per device (zeros without experts)."""
    t, cb, comm = g.lines(b)
    if plan.experts is None:
        return [t, cb, comm, 0.0, 0.0, 0.0, 0.0]
    dep, ex = plan.experts
    op = ex.cost(b)
    e_tc, e_tm = operator_seconds(dep, op)
    e_t = operator_time(e_tc, e_tm, plan.overlap)
    return [t + e_t, cb + np.where(e_tc > e_tm, e_t, 0.0), comm, e_tc, e_tm,
            op.flops / plan.tp, op.bytes / plan.tp]


def _block(plan: DecodePlan, rows: tuple[np.ndarray, int], b: np.ndarray, c: np.ndarray,
           terms: list[Any], o: dict[str, np.ndarray]) -> None:
    """One block of :func:`decode_grid`, given its rows (:meth:`DecodeGrid.context_rows`)
    and what depends on its batches alone (:func:`_batch_terms`), written into the block's
    slices ``o`` of the outputs."""
    bc = b * c
    mat, mixed = rows
    r = mat @ np.stack([np.ones_like(b), b, bc])
    tc, tm, r = r[:mixed], r[mixed:2 * mixed], r[2 * mixed:]
    roof = np.add(terms[0], r[4], out=o["roofline_s"])
    cb = terms[1] + r[5]
    if mixed:
        t = operator_time(tc, tm, plan.overlap)
        roof += t.sum(axis=0)
        cb += np.where(tc > tm, t, 0.0).sum(axis=0)
    total = o["collective_time_s"]
    total[:] = terms[2]
    comm = o["comm_time_s"]
    comm[:] = exposed_comm(total, roof, plan.comm_overlap) if plan.comm_overlap else total
    np.add(plan.overhead_s, plan.host_per_row * b, out=o["overhead_s"])
    np.add(roof, comm, out=o["time_s"])
    o["time_s"] += o["overhead_s"]
    o["compute_time_s"][:], o["memory_time_s"][:] = r[2] + terms[3], r[3] + terms[4]
    np.fmax(o["compute_time_s"], o["memory_time_s"], out=o["lower_bound_s"])
    o["flops_per_device"][:], o["bytes_per_device"][:] = r[0] + terms[5], r[1] + terms[6]
    np.greater(cb, 0.5 * roof, out=o["compute_bound"])
    m0, m1, m2 = plan.memory
    np.greater_equal(plan.usable_bytes - (m0 + m1 * b + m2 * bc), 0, out=o["fits"])
