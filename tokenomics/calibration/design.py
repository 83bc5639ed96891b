"""The corpus as a design matrix: each row's operator work, timed in closed form per efficiency.

Fitting the efficiency model means evaluating every corpus row thousands of times. The work
of a row (FLOPs and bytes of each operator at its steady-state concurrency, the latency and
bandwidth parts of its collectives) does not depend on the efficiencies, so it is computed
once; :func:`predict_rows` then applies an :class:`~tokenomics.data.specs.Efficiency` to all
rows at once with the step engine's own formula (:mod:`tokenomics.physics.engine`), and a
test holds the two equal to 1e-9 at the committed parameters.

Notes
-----
For row :math:`r` and operator :math:`o` with FLOPs :math:`F`, bytes :math:`Q`, devices
:math:`n`, peak :math:`P` and bandwidth :math:`\\beta`:

.. math::
   t_{c} = \\frac{F}{n P\\,\\mathrm{mfu}\\,s_o},\\quad t_{m} = \\frac{Q}{n \\beta\\,\\mathrm{mbu}},
   \\quad t_o = \\sum_o \\left[\\max(t_c, t_m) + (1 - v)\\min(t_c, t_m)\\right],
   \\quad t = t_o + t_x - \\min(\\omega t_x, t_o) + t_\\mathrm{step} (+ t_\\mathrm{req}),
   \\quad t_x = t_\\mathrm{lat} + t_\\mathrm{bw} / \\eta

with :math:`s_o` from :func:`tokenomics.physics.engine.compute_scale`, :math:`v` the overlap,
:math:`\\omega` the row's published ``comm_overlap``,
:math:`\\eta` the link efficiency and :math:`t_\\mathrm{req}` for TTFT rows. Collective
time is linear in :math:`1/\\eta` for each algorithm; the fastest algorithm is the one chosen
at :math:`\\eta = 1` (the test above checks the committed point).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from tokenomics.calibration.corpus import CorpusRow, chunk_tokens, concurrency
from tokenomics.core.dtypes import bytes_per_element, dtype
from tokenomics.core.errors import TokenomicsError
from tokenomics.data.specs import ROOFLINE, Efficiency
from tokenomics.physics.engine import exposed_comm_s
from tokenomics.physics.operators import OPERATORS, mixed_costs

_ATTN = OPERATORS.index("attn_core")
_EXPERTS = OPERATORS.index("moe_experts")


@dataclass(frozen=True)
class Design:
    """Per-row work of a list of corpus rows (arrays over rows, or rows x operators).

    Attributes
    ----------
    ids : tuple of str
    flops, bytes : numpy.ndarray
        (rows, operators) replica-wide FLOPs [FLOP] and bytes [B] of the row's timed step.
    expert_tokens : numpy.ndarray
        Tokens per distinct routed expert in the step (NaN without experts) [token].
    devices, peak, attention_peak, bandwidth : numpy.ndarray
        ``tp`` [-], dense peak at the compute format and at the attention format [FLOP/s],
        memory bandwidth [B/s].
    gemm_fp4, attention_fp4 : numpy.ndarray of bool
        Whether the GEMMs and attention compute at a 4-bit floating-point format.
    comm_latency_s, comm_bandwidth_s : numpy.ndarray
        The step's collectives: latency floors, and bandwidth time at link efficiency 1 [s].
    expert_act_bytes : numpy.ndarray
        The routed experts' activation bytes [B] (timed at the busiest rank's load).
    expert_parallel : numpy.ndarray of bool
        Whether the experts are spread over ``ep > 1`` ranks.
    layers : numpy.ndarray
        Layers per replica [-].
    concurrency : numpy.ndarray
        Sequences in flight [-].
    chunks_per_prompt : numpy.ndarray
        Steps a prompt's prefill spans (a TTFT row's time is that many steps) [-].
    comm_overlap : numpy.ndarray
        The row's published share of communication hidden behind compute, [0, 1].
    kind : numpy.ndarray of str
        ``"speed"``, ``"tpot"`` or ``"ttft"``.
    measured : numpy.ndarray
        The published value (token/s per device, or s).
    """

    ids: tuple[str, ...]
    flops: np.ndarray
    bytes: np.ndarray
    expert_tokens: np.ndarray
    devices: np.ndarray
    peak: np.ndarray
    attention_peak: np.ndarray
    gemm_fp4: np.ndarray
    attention_fp4: np.ndarray
    bandwidth: np.ndarray
    comm_latency_s: np.ndarray
    comm_bandwidth_s: np.ndarray
    expert_act_bytes: np.ndarray
    expert_parallel: np.ndarray
    layers: np.ndarray
    concurrency: np.ndarray
    chunks_per_prompt: np.ndarray
    comm_overlap: np.ndarray
    kind: np.ndarray
    measured: np.ndarray


def _row_work(row: CorpusRow) -> dict[str, Any]:
    """One row's timed step: its operator costs and collectives at its concurrency."""
    if row.pool == "prefill":
        raise TokenomicsError(f"{row.id}: the design covers steady-state rows; a prefill "
                              f"pool's row is forecast by corpus.forecast alone")
    dep = row.deployment(ROOFLINE)
    b = float(concurrency(row, dep))
    s = chunk_tokens(row)
    k = 1.0 if s is None else float(np.ceil(row.isl / s))
    cached = row.isl * (k - 1) / (2 * k)          # steady_state's mean cache under a chunk
    if row.pool == "decode":      # steady_state(pool="decode"): all b decode, no prefill
        dec, chunks, per_chunk, cached = b, 0.0, 1.0, 0.0
    else:
        a = b / row.osl
        dec, per_chunk = b - a, row.isl / k
        chunks = max(a * k, 1.0) if row.metric == "ttft_s" else a * k   # TTFT's own step
    costs = mixed_costs(dep, dec, row.isl + row.osl / 2.0, per_chunk, cached, chunks)
    n_tok = dec + chunks * per_chunk
    logits = dec + chunks

    def comm(eff: Efficiency) -> float:
        return float(exposed_comm_s(dep.with_(efficiency=eff), 0.0, 1.0, n_tok, logits,
                                    "prefill"))

    c1, c_half = comm(ROOFLINE), comm(Efficiency(link_efficiency=0.5))
    ex = costs[_EXPERTS]
    w = float(ex.weight_bytes)
    tokens = float(ex.flops) * bytes_per_element(dep.expert_dtype) / (2 * w) if w > 0 else np.nan
    return dict(flops=[float(o.flops) for o in costs], bytes=[float(o.bytes) for o in costs],
                expert_tokens=tokens, devices=float(dep.tp),
                peak=dep.compute_peak_flop_per_s("the corpus row's step"),
                attention_peak=dep.attention_peak_flop_per_s(),
                gemm_fp4=dtype(dep.compute_dtype).peak == "fp4",
                attention_fp4=dtype(dep.attention_dtype).peak == "fp4",
                bandwidth=dep.hardware.mem_bw_bytes_per_s, comm_latency_s=2 * c1 - c_half,
                comm_bandwidth_s=c_half - c1, expert_act_bytes=float(ex.act_bytes),
                expert_parallel=dep.ep > 1, layers=float(dep.model.num_layers),
                concurrency=b, chunks_per_prompt=k, comm_overlap=row.comm_overlap, kind={"server_tpot_at_concurrency": "tpot",
                                     "ttft_s": "ttft"}.get(row.metric, "speed"),
                measured=row.measured)


def build_design(rows: list[CorpusRow]) -> Design:
    """The design matrix of ``rows`` (module notes)."""
    work = [_row_work(r) for r in rows]
    cols = {k: np.array([w[k] for w in work]) for k in work[0]} if work else {}
    return Design(ids=tuple(r.id for r in rows), **cols)


def predict_rows(d: Design, eff: Efficiency) -> np.ndarray:
    """Every row's forecast under ``eff``, in the row's unit (token/s per device, or s).

    Raises
    ------
    TokenomicsError
        If ``eff.collective_overhead_s`` is not 0: the design holds no count of collective
        calls (the fit leaves that parameter at 0).
    """
    if eff.collective_overhead_s != 0.0:
        raise TokenomicsError("predict_rows needs collective_overhead_s = 0 (the design "
                              "does not count collective calls); use forecast() per row")
    scale = np.repeat(np.where(d.gemm_fp4, eff.fp4_mfu_scale, 1.0)[:, None], d.flops.shape[1],
                      axis=1)
    scale[:, _ATTN] = eff.attention_mfu_scale * np.where(d.attention_fp4, eff.fp4_mfu_scale,
                                                         1.0)
    if eff.expert_half_tokens > 0:
        m = np.nan_to_num(d.expert_tokens, nan=1.0)
        scale[:, _EXPERTS] *= m / (m + eff.expert_half_tokens)
    peak = np.repeat(d.peak[:, None], d.flops.shape[1], axis=1)
    peak[:, _ATTN] = d.attention_peak
    tc = d.flops / (d.devices[:, None] * peak * eff.mfu * scale)
    tm = d.bytes / (d.devices[:, None] * d.bandwidth[:, None] * eff.mbu)
    if eff.expert_imbalance > 0:      # the busiest expert-parallel rank sets the step
        extra = np.where(d.expert_parallel, eff.expert_imbalance, 0.0)
        tc[:, _EXPERTS] *= 1.0 + extra
        tm[:, _EXPERTS] += extra * d.expert_act_bytes / (d.devices * d.bandwidth * eff.mbu)
    t_ops = (np.maximum(tc, tm) + (1.0 - eff.overlap) * np.minimum(tc, tm)).sum(axis=1)
    comm = d.comm_latency_s + d.comm_bandwidth_s / eff.link_efficiency
    exposed = comm - np.minimum(d.comm_overlap * comm, t_ops)   # as the step engine hides it
    t = t_ops + exposed + eff.step_overhead_s + eff.layer_overhead_s * d.layers
    return np.where(d.kind == "speed", d.concurrency / np.where(t > 0, t, 1.0) / d.devices,
                    np.where(d.kind == "ttft", d.chunks_per_prompt * t + eff.request_overhead_s,
                             t))
