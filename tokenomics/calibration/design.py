"""The corpus as a design: each row's work, timed by the step engine's own law, all rows at once.

Fitting the efficiency model means evaluating every corpus row thousands of times. The work
of a row (FLOPs and bytes of each operator of its steady-state step over its length
distribution, the collectives as lines in the inverse link efficiency) does not depend on the
efficiencies, so it is computed once by the library's own functions
(:func:`tokenomics.physics.operators.mixed_costs_over`, the pipeline's micro-batches of
:func:`tokenomics.serving.steady.pipeline_microbatches`,
:func:`tokenomics.physics.collectives.step_comm`); :func:`predict_rows` then applies the
efficiencies, one value per row when the parameters differ by serving stack, through the
engine's law itself (:func:`~tokenomics.physics.engine.operator_scale`,
:func:`~tokenomics.physics.engine.load_factor`,
:func:`~tokenomics.physics.engine.operator_terms`,
:func:`~tokenomics.physics.engine.operator_time`,
:func:`~tokenomics.physics.engine.exposed_comm`,
:func:`~tokenomics.physics.engine.fixed_overhead`): there is no second copy of the step-time
formula to keep in step. A test holds :func:`predict_rows` equal to
:func:`tokenomics.calibration.corpus.forecast` (the public ``steady_state`` per row) to 1e-9
on every row at several efficiencies.

Notes
-----
Each collective of a row is timed under every all-reduce algorithm at link efficiencies 1,
1/2 and 1/4; its time is affine in :math:`u = 1/\\eta` under each algorithm (the bandwidth
terms scale with :math:`u`, the latency floors do not), so two points give the line
:math:`\\alpha + \\beta u` and the third checks it, and the step takes the fastest algorithm
at the row's :math:`\\eta`, as :func:`~tokenomics.physics.collectives.step_comm` does. Where
the check fails (a hierarchical all-to-all whose slower branch changes with :math:`\\eta`), the
row keeps the collectives as a function and is timed by
:func:`~tokenomics.physics.collectives.step_comm` at each evaluation.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import numpy as np

from tokenomics.calibration.corpus import CorpusRow, chunk_tokens, concurrency, runtime_caps
from tokenomics.core.dtypes import bytes_per_element, dtype
from tokenomics.core.errors import TokenomicsError
from tokenomics.data.specs import ROOFLINE, Efficiency
from tokenomics.physics.collectives import step_comm
from tokenomics.physics.engine import (
    achievable_factor,
    exposed_comm,
    fixed_overhead,
    host_seconds,
    load_factor,
    operator_scale,
    operator_terms,
    operator_time,
    weight_only,
)
from tokenomics.physics.operators import OPERATORS, mixed_costs_over
from tokenomics.serving.steady import chunk_counts, pipeline_microbatches

_EXPERTS = OPERATORS.index("moe_experts")
#: The design's fields of a row (the others are of its steps).
_ROW_FIELDS = ("ids", "stacks", "hardware_families", "concurrency", "n_devices",
               "chunks_per_prompt", "kind", "measured")
#: The efficiency fields a row's time depends on (the rest are held at their defaults).
FIELDS = ("mbu", "mfu", "achievable_peaks", "overlap", "expert_half_tokens", "expert_tile_tokens",
          "attention_mfu_scale", "fp4_mfu_scale", "mixed_input_mfu_scale", "expert_mfu_scale",
          "link_efficiency", "step_overhead_s",
          "layer_overhead_s", "token_overhead_s", "request_overhead_s", "expert_imbalance",
          "collective_overlap")
_ETAS = (1.0, 0.5, 0.25)


@dataclass(frozen=True)
class Design:
    """Per-row work of a list of corpus rows (arrays over rows, or rows x operators).

    Attributes
    ----------
    ids, stacks, hardware_families : tuple of str
        Row ids, each row's serving stack and hardware family.
    row_of, share : numpy.ndarray
        Each step's row and its share of the row's steps: a row's mean step time is
        :math:`\\sum_v s_v t_v` over the steps of whole chunks that make its mean
        (:func:`~tokenomics.serving.steady.chunk_counts`). The other arrays are per step
        (``flops`` ...) or per row (``concurrency``, ``n_devices``, ``chunks_per_prompt``,
        ``kind``, ``measured``).
    flops, bytes, act_bytes : numpy.ndarray
        (rows, operators) replica-wide FLOPs [FLOP], bytes [B] and activation bytes [B] of
        the row's timed step (one micro-batch of a pipeline).
    expert_tokens : numpy.ndarray
        Tokens per distinct routed expert in the step (``inf`` without experts) [token].
    devices, n_devices : numpy.ndarray
        ``tp`` (the devices a step's work is split over) and ``tp x pp`` [-].
    weight_only : numpy.ndarray of bool
        (rows, operators): the operator's weights are stored narrower than its compute
        format (:func:`~tokenomics.physics.engine.weight_only`).
    gemm_share, attention_share : numpy.ndarray
        The device's achievable share of the compute and attention formats' peaks
        (:meth:`~tokenomics.data.specs.Hardware.achievable_share`) [-].
    peak, attention_peak, bandwidth : numpy.ndarray
        Dense peak at the compute format and at the attention format [FLOP/s], memory
        bandwidth [B/s].
    gemm_fp4, attention_fp4, expert_parallel : numpy.ndarray of bool
    comm_lines : numpy.ndarray
        (rows, collectives, algorithms, 2) lines :math:`(\\alpha, \\beta)` of each collective
        under each algorithm in :math:`u = 1/\\eta` (``inf`` where an algorithm is missing).
    comm_exact : tuple
        (row index, function of the efficiency giving the row's collectives [s]) for the rows
        whose collectives are not lines (module notes).
    layers, concurrency, chunks_per_prompt, comm_overlap : numpy.ndarray
        Layers, sequences in flight, mean chunks a prompt spans, the layout's published
        share of communication hidden.
    sampled_rows : numpy.ndarray
        Tokens a step samples per scheduler (every micro-batch's, over the attention-DP
        ranks): the host's share.
    kind : numpy.ndarray of str
        ``"speed"``, ``"tpot"`` or ``"ttft"``.
    measured : numpy.ndarray
        The published value (token/s per device, or s).
    """

    ids: tuple[str, ...]
    stacks: tuple[str, ...]
    hardware_families: tuple[str, ...]
    flops: np.ndarray
    bytes: np.ndarray
    act_bytes: np.ndarray
    expert_tokens: np.ndarray
    devices: np.ndarray
    n_devices: np.ndarray
    peak: np.ndarray
    attention_peak: np.ndarray
    gemm_share: np.ndarray
    attention_share: np.ndarray
    weight_only: np.ndarray
    bandwidth: np.ndarray
    gemm_fp4: np.ndarray
    attention_fp4: np.ndarray
    expert_parallel: np.ndarray
    comm_lines: np.ndarray
    comm_exact: tuple[tuple[int, Any], ...]
    layers: np.ndarray
    sampled_rows: np.ndarray
    concurrency: np.ndarray
    chunks_per_prompt: np.ndarray
    comm_overlap: np.ndarray
    kind: np.ndarray
    measured: np.ndarray
    row_of: np.ndarray
    share: np.ndarray

    def take(self, idx: Any) -> Design:
        """The design of the rows ``idx`` only (their steps with them)."""
        idx = np.asarray(idx, int)
        pos = np.full(len(self.ids), -1)
        pos[idx] = np.arange(len(idx))
        order = np.argsort(pos[self.row_of], kind="stable")
        entries = order[pos[self.row_of][order] >= 0]
        epos = np.full(len(self.row_of), -1)
        epos[entries] = np.arange(len(entries))
        vals: dict[str, Any] = {}
        for name in self.__dataclass_fields__:
            v = getattr(self, name)
            if name == "comm_exact":
                vals[name] = tuple((int(epos[i]), f) for i, f in v if epos[i] >= 0)
            elif name == "row_of":
                vals[name] = pos[v[entries]]
            elif name in _ROW_FIELDS:
                vals[name] = tuple(v[int(i)] for i in idx) if isinstance(v, tuple) else v[idx]
            else:
                vals[name] = v[entries]
        return Design(**vals)


def _step_of(row: CorpusRow, dep: Any) -> dict[str, Any]:
    """The timed step of a row (as :func:`~tokenomics.calibration.corpus.forecast` times
    it): decodes, their context nodes and weights, prefill chunk nodes, per micro-batch."""
    B = float(concurrency(row, dep))
    dist = row.lengths
    ctx, w = dist.decode_nodes()
    i_n, u = np.array(dist.input_nodes), np.array(dist.input_weights)
    m, phase = pipeline_microbatches(dep, B)
    m = float(m)
    if row.workload:
        budget = runtime_caps(row, dep)[1]
        s = float(budget) if budget > 0 else None
    else:
        c = chunk_tokens(row, dep)
        s = None if c is None else float(c)
    k = np.ones_like(i_n) if s is None else np.ceil(i_n / s)
    if row.pool == "decode":
        dec, chunks, k_mean = B, np.zeros_like(i_n), 0.0
        T, c = np.ones_like(i_n), np.zeros_like(i_n)
        if not row.workload:                       # steady_state's decode pool: I + O/2
            ctx, w = np.array([row.isl + row.osl / 2.0]), np.array([1.0])
        return dict(B=B, ctx=ctx, w=w, T=T, c=c, steps=[(dec / m, chunks, 1.0)], m=m,
                    phase=phase, k=k_mean)
    a = B / dist.output_mean
    dec = B - a
    k_mean = float(u @ k)
    n, sh = chunk_counts(a * k_mean / m)           # whole chunks a micro-batch step
    pair = (2, 3) if row.metric == "ttft_s" else (0, 1)   # the own step, or the mean
    mix = u * k / k_mean
    steps = [(dec / m, float(n[j]) * mix, float(sh[j])) for j in pair]
    T, c = i_n / k, i_n * (k - 1) / (2 * k)
    if not row.workload:                           # steady_state's exact shares
        ctx, w = np.array([row.isl + row.osl / 2.0]), np.array([1.0])
    return dict(B=B, ctx=ctx, w=w, T=T, c=c, steps=steps, m=m, phase=phase, k=k_mean)


def _comm(dep: Any, n: float, logits: float, phase: str) -> tuple[np.ndarray | None, Any]:
    """A row's collectives as lines in :math:`u = 1/\\eta` (module notes), or None and a
    function of the efficiency where they are not lines."""
    times = []
    for eta in _ETAS:
        d = dep.with_(efficiency=Efficiency(link_efficiency=eta))
        cols = step_comm(d, 1.0, n, logits, phase, algorithm="each")
        times.append([np.atleast_1d(np.asarray(col.time_s, float)).ravel() for col in cols])
    if not times[0]:
        return np.zeros((0, 1, 2)), None
    n_alg = max(len(t) for t in times[0])
    lines = np.full((len(times[0]), n_alg, 2), np.inf)
    ok = True
    for j in range(len(times[0])):
        t1, t2, t4 = (times[i][j] for i in range(3))
        beta = t2 - t1                              # u = 1, 2, 4
        alpha = t1 - beta
        ok &= bool(np.allclose(alpha + 4 * beta, t4, rtol=1e-12, atol=1e-18))
        lines[j, :len(t1), 0], lines[j, :len(t1), 1] = alpha, beta
    if ok:
        return lines, None

    def exact(p: Any) -> float:
        d = dep.with_(efficiency=Efficiency(link_efficiency=float(p.link_efficiency)))
        return float(sum(np.asarray(x.time_s, float) for x in step_comm(d, 1.0, n, logits,
                                                                       phase)))
    return None, exact


def _row_work(row: CorpusRow) -> list[dict[str, Any]]:
    """One row's timed steps: each step's operator costs and collectives, and its share."""
    if row.pool == "prefill":
        raise TokenomicsError(f"{row.id}: the design covers steady-state rows; a prefill "
                              f"pool's row is forecast by corpus.forecast alone")
    dep = row.deployment(ROOFLINE)
    st = _step_of(row, dep)
    common = dict(devices=float(dep.tp), n_devices=float(dep.n_devices),
                  peak=dep.compute_peak_flop_per_s("the corpus row's step"),
                  attention_peak=dep.attention_peak_flop_per_s(),
                  weight_only=[weight_only(dep, n) for n in OPERATORS],
                  gemm_share=dep.hardware.achievable_share(dep.compute_dtype),
                  attention_share=dep.hardware.achievable_share(dep.attention_dtype),
                  gemm_fp4=dtype(dep.compute_dtype).peak == "fp4",
                  attention_fp4=dtype(dep.attention_dtype).peak == "fp4",
                  expert_parallel=dep.ep > 1, bandwidth=dep.hardware.mem_bw_bytes_per_s,
                  layers=float(dep.model.num_layers), concurrency=st["B"],
                  chunks_per_prompt=st["k"], comm_overlap=float(row.comm_overlap),
                  kind={"server_tpot_at_concurrency": "tpot", "ttft_s": "ttft"}.get(
                      row.metric, "speed"), measured=row.measured)
    out = []
    for dec, chunks, share in st["steps"]:
        costs = mixed_costs_over(dep, dec, st["ctx"], st["w"], st["T"], st["c"], chunks)
        n_tok = dec + float((chunks * st["T"]).sum())
        logits = dec + float(chunks.sum())
        lines, exact = _comm(dep, n_tok, logits, st["phase"])
        ex = costs[_EXPERTS]
        wb = float(ex.weight_bytes)
        tokens = float(ex.flops) * bytes_per_element(dep.expert_dtype) / (2 * wb) if wb > 0 \
            else np.inf
        out.append(dict(common, flops=[float(o.flops) for o in costs],
                        bytes=[float(o.bytes) for o in costs],
                        act_bytes=[float(o.act_bytes) for o in costs], expert_tokens=tokens,
                        lines=lines, exact=exact,
                        sampled_rows=logits * st["m"] / dep.dp_attention, share=share))
    return out


def build_design(rows: list[CorpusRow]) -> Design:
    """The design of ``rows`` (module notes)."""
    per_row = [_row_work(r) for r in rows]
    work = [w for steps in per_row for w in steps]
    row_of = np.repeat(np.arange(len(rows)), [len(steps) for steps in per_row])
    n_col = max((0 if w["lines"] is None else w["lines"].shape[0]) for w in work) if work else 0
    n_alg = max((1 if w["lines"] is None or not w["lines"].size else w["lines"].shape[1])
                for w in work) if work else 1
    lines = np.full((len(work), n_col, n_alg, 2), np.inf)
    lines[..., 1] = 0.0
    for i, w in enumerate(work):
        if w["lines"] is not None and w["lines"].size:
            c, a = w["lines"].shape[:2]
            lines[i, :c, :a] = w["lines"]
        if w["lines"] is not None:                  # absent collectives cost nothing
            lines[i, w["lines"].shape[0]:, 0, 0] = 0.0
    lines[~np.isfinite(lines[..., 0]).any(axis=2), 0, 0] = 0.0
    exact = tuple((i, w["exact"]) for i, w in enumerate(work) if w["exact"] is not None)
    skip = {"lines", "exact"}
    cols = {k: np.array([w[k] for w in work]) for k in (work[0] if work else {}) if k not in skip}
    first = np.searchsorted(row_of, np.arange(len(rows)))
    for k in _ROW_FIELDS[3:]:
        cols[k] = cols[k][first]
    return Design(ids=tuple(r.id for r in rows), stacks=tuple(r.stack for r in rows),
                  hardware_families=tuple(r.hardware_family for r in rows),
                  comm_lines=lines, comm_exact=exact, row_of=row_of, **cols)


def row_parameters(eff: Efficiency, n: int) -> SimpleNamespace:
    """One efficiency as per-row parameters (every row the same): what :func:`predict_rows`
    takes, for ``n`` rows."""
    return SimpleNamespace(**{f: np.full(n, float(getattr(eff, f))) for f in FIELDS})


def predict_rows(d: Design, p: Any) -> np.ndarray:
    """Every row's forecast, in the row's unit (token/s per device, or s).

    Parameters
    ----------
    d : Design
    p : Efficiency or namespace of arrays
        One efficiency for every row, or per-row values of each of :data:`FIELDS` (arrays
        over the rows: a fit whose parameters differ by serving stack).

    Raises
    ------
    TokenomicsError
        If an efficiency's ``collective_overhead_s`` is not 0: the design holds no count of
        collective calls (the fit leaves that parameter at 0).
    """
    if isinstance(p, Efficiency):
        if p.collective_overhead_s != 0.0:
            raise TokenomicsError("predict_rows needs collective_overhead_s = 0 (the design "
                                  "does not count collective calls); use forecast() per row")
        p = row_parameters(p, len(d.ids))
    rows = p
    p = SimpleNamespace(**{f: np.asarray(v, float)[d.row_of] if np.ndim(v) else v
                           for f, v in vars(p).items()})            # per step
    roof = np.zeros(len(d.row_of))
    for k, name in enumerate(OPERATORS):
        if not d.flops[:, k].any() and not d.bytes[:, k].any():
            continue
        experts = name == "moe_experts"
        scale = operator_scale(name, p, d.gemm_fp4, d.attention_fp4,
                               d.expert_tokens if experts else None, d.weight_only[:, k])
        load = load_factor(p, d.expert_parallel) if experts else 1.0
        peak = (d.attention_peak * achievable_factor(d.attention_share, p) if name == "attn_core"
                else d.peak * achievable_factor(d.gemm_share, p)) * p.mfu
        tc, tm = operator_terms(d.flops[:, k], d.bytes[:, k], d.devices, peak,
                                d.bandwidth * p.mbu, scale, load, d.act_bytes[:, k])
        roof = roof + operator_time(tc, tm, p.overlap)
    u = 1.0 / np.asarray(p.link_efficiency, float)
    per_alg = d.comm_lines[..., 0] + d.comm_lines[..., 1] * u[:, None, None]
    comm = np.min(per_alg, axis=2).sum(axis=1)
    for i, f in d.comm_exact:
        comm[i] = f(SimpleNamespace(link_efficiency=float(u[i] ** -1)))
    hidden = 1.0 - (1.0 - d.comm_overlap) * (1.0 - np.asarray(p.collective_overlap, float))
    t = roof + exposed_comm(comm, roof, hidden) + fixed_overhead(p, d.layers)
    t = t + host_seconds(p, d.sampled_rows)
    t = np.bincount(d.row_of, weights=d.share * t, minlength=len(d.ids))   # the mean step
    return np.where(d.kind == "speed",
                    d.concurrency / np.where(t > 0, t, 1.0) / d.n_devices,
                    np.where(d.kind == "ttft", d.chunks_per_prompt * t + rows.request_overhead_s,
                             t))
