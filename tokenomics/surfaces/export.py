"""Spreadsheet export: a decode sizing sheet whose outputs are live formulas, and plain tables.

Notes
-----
:func:`export_sizing_sheet` writes a CSV a spreadsheet (Excel, LibreOffice, Google Sheets)
opens as a worksheet of four columns: **label**, **value**, **unit**, **note**. Row 1 is the
header; every value cell is ``B<row>``. Input cells hold plain numbers; output cells hold
spreadsheet formulas (``=(1-B16)*MIN(...)+MAX(...)``) referencing the inputs by A1
address, so changing the batch, the bandwidth or the context recomputes the sheet.

The formulas are printed from SymPy expressions over symbols named after cells (the rows
and the printer are :mod:`tokenomics.surfaces.spreadsheet`'s), and each formula's value at
the exported inputs is kept beside it (written into the .xlsx, so readers that do not
recompute read numbers). The sheet models one decode step (one new token per sequence) per
device by the step engine's own law (:mod:`tokenomics.physics.engine`), for whatever
efficiency the deployment carries, the calibrated forecast included:

.. math::
   t = \\sum_o \\left[\\max(t_{c,o}, t_{m,o}) + (1 - v) \\min(t_{c,o}, t_{m,o})\\right]
       + t_\\mathrm{comm} - \\min(\\omega\\, t_\\mathrm{comm}, t_\\mathrm{roof})
       + t_\\mathrm{overhead} + t_\\mathrm{tok} B / d, \\qquad b = B / pp,

with :math:`t_{c,o} = \\ell_o F_{1,o} b / (P a\\,\\mathrm{MFU}\\, s_o)` (the attention core at
its own format's peak), :math:`t_{m,o} = (Q_{0,o} + Q_{1,o} b + (\\ell_o - 1) Q_{1,o} b) /
(\\beta\\,\\mathrm{MBU})`, :math:`a` the device's achievable share of its peak, :math:`s_o`
the operator's fraction of MFU (for the routed experts times the grouped GEMM's tile term at
:math:`m = b k / (E (1 - (1 - k/E)^b))` tokens per distinct expert), :math:`\\ell_o` the
busiest expert-parallel rank's load (1 elsewhere), :math:`v` the operator overlap,
:math:`\\omega` the hidden share of the collectives and :math:`t_\\mathrm{tok}` the host time
per sampled token over :math:`d` attention data-parallel ranks. At the roofline preset
:math:`a = s_o = v = 1` and the host and overhead terms are 0.

What is exact and what is fixed at export
-----------------------------------------
* Exact for any batch: every operator's FLOPs are :math:`F_1 b` and its bytes
  :math:`Q_0 + Q_1 b` (the coefficients are taken from :func:`tokenomics.physics.operators.step_costs`
  at micro-batch 1 and 2 and checked at 4). Routed-expert weight bytes are not linear in the
  batch; the sheet writes their exact expected-distinct-experts form
  :math:`w_e E (1 - (1 - k/E)^b)`, nothing is linearised.
* Exact for any context: the attention core (pairs, KV reads, windows: sliding
  ``MIN(C+1,W)``, chunked ``MOD(C,W)+1``; MLA as the cheaper of absorbed and expanded) and
  the KV memory (:math:`\\sum_g n_g \\min(C, W_g)` tokens) are formulas of the context cell.
* Exact for any batch, communication included: each collective kind of
  :func:`tokenomics.step_comm` is :math:`t_0 + t_1 b` (latency floors and per-call overhead,
  plus message bytes per sequence over the link bandwidth), read off the library and checked
  affine at five batches; an automatic all-reduce is the ``MIN`` over its four algorithms,
  as the library takes the fastest. Zero for ``tp = pp = 1``.
* Structural, not live: ``tp``, ``pp``, formats and the model. The per-device coefficients
  already include the ``tp`` split, so ``tp`` and ``pp`` are constants of the formulas
  (stated in the Deployment rows), not input cells: re-export to change the layout.

References
----------
.. [1] S. Williams, A. Waterman, D. Patterson, "Roofline: an insightful visual performance
   model for multicore architectures", CACM 52(4), 2009. doi:10.1145/1498765.1498785
.. [2] A. Meurer et al., "SymPy: symbolic computing in Python", PeerJ Comput. Sci. 3:e103,
   2017. doi:10.7717/peerj-cs.103
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from tokenomics.core import checks as V
from tokenomics.core.dtypes import bytes_per_element, dtype
from tokenomics.core.errors import NotPublishedError, TokenomicsError
from tokenomics.data.boundary import inputs
from tokenomics.data.deployment import Deployment
from tokenomics.physics import formulas as F
from tokenomics.physics.collectives import step_comm
from tokenomics.physics.engine import (
    achievable_factor,
    compute_scale,
    expert_load_factor,
    operator_scale,
    overhead_s,
    weight_only,
)
from tokenomics.physics.kv import kv_bytes_per_token_per_layer
from tokenomics.physics.memory import (
    activation_workspace_bytes_per_token,
    logits_workspace_bytes_per_sequence,
    weight_bytes_per_device,
)
from tokenomics.physics.operators import step_costs
from tokenomics.surfaces.spreadsheet import HEADER, Worksheet, spreadsheet_formula

# HEADER and spreadsheet_formula live in tokenomics.surfaces.spreadsheet; kept here too, as in
# release 0.1 (``from tokenomics.surfaces.export import spreadsheet_formula``).
__all__ = ["HEADER", "export_sizing_sheet", "sizing_sheet", "spreadsheet_formula"]

# --------------------------------------------------------------------------------------------
# Coefficients read off step_costs
# --------------------------------------------------------------------------------------------
def _num(x: Any) -> float:
    """A one-element array or number as a float."""
    return float(np.asarray(x, float))


def _close(a: float, b: float, rel: float = 1e-9) -> bool:
    """Whether ``a`` and ``b`` agree to ``rel`` of the larger magnitude."""
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)


def _linear(name: str, at: dict[float, float]) -> tuple[float, float]:
    """Intercept and slope of a quantity evaluated at micro-batch 1, 2 and 4 (checked)."""
    slope = at[2.0] - at[1.0]
    icpt = at[1.0] - slope
    if not _close(icpt + 4.0 * slope, at[4.0]) and abs(icpt + 4 * slope - at[4.0]) > 1e-6:
        raise TokenomicsError(f"internal: {name} is not affine in the batch "
                              f"({at[1.0]!r}, {at[2.0]!r}, {at[4.0]!r})")
    return icpt, slope


# --------------------------------------------------------------------------------------------
# Sizing sheet
# --------------------------------------------------------------------------------------------
#: Micro-batches at which step_costs is evaluated to read off each operator's coefficients.
_PROBE = (1.0, 2.0, 4.0)


def check_sheet_supports(dep: Deployment) -> None:
    """Refuse architectures whose terms the sheet's formulas do not carry yet.

    Raises
    ------
    NotImplementedError
        For hybrid linear attention, sparse (indexer + top-k) attention and full layers of
        their own shape (Gemma 4's ``global_attention``): the sheet's
        formulas would disagree with the library (the ``report --xlsx`` command calls this
        before it writes anything).
    """
    m = dep.model
    if m.num_linear_layers or m.attention.is_sparse or m.global_attention is not None:
        kind = ("hybrid linear attention" if m.num_linear_layers else
                "sparse attention (indexer + top-k)" if m.attention.is_sparse else
                "full layers of their own shape (global_attention)")
        raise NotImplementedError(
            f"{m.id}: the sizing sheet does not yet model {kind} (a fixed state per sequence, "
            "or the indexer's scan and top-k reads), so its formulas would disagree with the "
            "library; use tk.decode and tk.memory_fit for this model")


@inputs(dep="deployment")
def export_sizing_sheet(path: str | os.PathLike[str], dep: Deployment, batch: int,
                        context_tokens: int, usd_per_device_hour: float | None = None) -> Path:
    """Write a decode sizing sheet (CSV) whose outputs are spreadsheet formulas of its inputs.

    Parameters
    ----------
    path : str or path-like
        CSV file to write (overwritten).
    dep : Deployment
    batch : int
        Concurrent sequences on the replica, >= 1 (a whole number).
    context_tokens : int
        Tokens in each sequence's KV cache [token], >= 1.
    usd_per_device_hour : float, optional
        Price of one device-hour [USD/hour]; default the catalog's latest rental price. When
        neither exists the cost row is left out (a note row says so); likewise the energy row
        when the device's TDP is not published.

    Returns
    -------
    pathlib.Path
        The file written.

    Raises
    ------
    TokenomicsError
        Bad batch, context or price (the message names it).
    NotImplementedError
        For a hybrid linear-attention model (Qwen3-Next) or sparse attention (DeepSeek-V3.2):
        the sheet does not yet carry the fixed per-sequence state nor the indexer and top-k
        terms, so its formulas would disagree with the library; size those with
        :func:`tokenomics.decode` and :func:`tokenomics.memory_fit`.
    OSError
        The path cannot be written.

    Notes
    -----
    Layout: columns ``label, value, unit, note``; row 1 the header; then a *Deployment*
    section (text), an *Inputs* section (numbers: peak FLOP/s of the compute format, MFU,
    memory bandwidth, MBU, capacity, usable fraction, tp, pp, batch, context, memory terms,
    KV bytes per token per layer on a tp shard, window groups, attention coefficients, each
    operator's FLOPs per sequence and fixed/per-sequence bytes per device, MoE experts,
    each collective's fixed and per-sequence time, overhead, price, TDP) and an *Outputs* section (formulas: ridge point,
    micro-batch, KV tokens held, attention work, one row per operator time
    ``MAX(compute, memory) + (1 - overlap) MIN(compute, memory)``, the roofline ``SUM``, each
    collective's time and their sum,
    exposed communication, step time,
    tokens/s per user and per device, KV bytes, memory total and usable, ``fits``
    (``IF(total<=usable,1,0)``), ``max batch`` (``INT``), USD per million tokens, joules per
    token at TDP). Numbers are written with full precision (``repr`` of floats). The sheet
    reproduces :func:`tokenomics.decode` (``step_time_s``, tokens/s), :func:`memory_fit`,
    :func:`max_batch`, :func:`ridge_point` and :func:`cost_per_million_tokens` to rounding,
    at any batch and context typed into the sheet (module notes).

    Examples
    --------
    >>> import tempfile, os, csv
    >>> import tokenomics as tk
    >>> d = tk.Deployment("llama-3.1-8b", "h100-sxm")
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     p = export_sizing_sheet(os.path.join(tmp, "sheet.csv"), d, 16, 4096)
    ...     rows = {r[0]: r[1] for r in csv.reader(open(p))}
    >>> rows["batch"], rows["step time"].startswith("=")
    ('16', True)
    """
    s = sizing_sheet(dep, batch, context_tokens, usd_per_device_hour)
    out = Path(path)
    s.write(out)
    return out


def sizing_sheet(dep: Deployment, batch: int, context_tokens: int,
                 usd_per_device_hour: float | None = None) -> Worksheet:
    """The decode sizing sheet of one deployment as rows, before it is written anywhere.

    The rows :func:`export_sizing_sheet` writes as CSV and
    :func:`tokenomics.surfaces.workbook.export_sizing_workbook` as an .xlsx sheet; the
    parameters, the layout and the errors are those of :func:`export_sizing_sheet`.

    Returns
    -------
    Worksheet
        ``rows``: (label, value, unit, note), the value a number (input), a formula string
        over ``B<row>`` addresses (output), text, or None (section).

    Examples
    --------
    >>> import tokenomics as tk
    >>> ws = sizing_sheet(tk.Deployment("llama-3.1-8b", "h100-sxm"), 16, 4096)
    >>> [r.value for r in ws.rows if r.label == "batch"]
    [16.0]
    """
    B, C = _sheet_point(dep, batch, context_tokens)
    check_sheet_supports(dep)
    price, price_note = _sheet_price(dep, usd_per_device_hour)
    s = _SizingSheet(dep, B, C)
    _deployment_rows(s)
    _device_inputs(s)
    _memory_inputs(s)
    _window_inputs(s)
    _attention_inputs(s)
    _operator_inputs(s)
    _step_inputs(s, price, price_note)
    _rate_outputs(s)
    _attention_outputs(s)
    _time_outputs(s)
    _memory_outputs(s)
    _cost_outputs(s)
    _check_attention(s)
    return s


class _SizingSheet(Worksheet):
    """The sizing sheet being built for one deployment at one (batch, context) point.

    ``c`` holds the cells later sections refer to, by a short name (``"P"`` the peak, ``"B"``
    the batch...); ``groups`` the layer groups ``(kind, layers cell, window cell or None)``;
    ``ops`` the operators ``(name, F1, Q0, Q1)`` in :func:`step_costs` order; ``costs`` the
    step costs at each micro-batch of :data:`_PROBE`, by batch, then operator name; ``core``
    the attention core's (FLOPs, bytes) expressions.
    """

    def __init__(self, dep: Deployment, batch: float, context: float) -> None:
        super().__init__()
        self.dep, self.B, self.C = dep, batch, context
        self.c: dict[str, Any] = {}
        self.groups: list[tuple[str, Any, Any]] = []
        self.ops: list[tuple[str, Any, Any, Any]] = []
        self.costs = {b: {o.name: o for o in step_costs(dep, b, 1.0, context, 1.0)}
                      for b in _PROBE}
        self.core: tuple[Any, Any] = (None, None)
        self.comm: list[tuple[str, list[tuple[Any, Any]]]] = []
        self.scale: dict[str, Any] = {}     # operator -> its fraction-of-MFU cell

    @property
    def mla(self) -> bool:
        """Whether the model's attention is MLA (two costed forms, the cheaper taken)."""
        return bool(self.dep.model.attention.kind == "MLA")


def _sheet_point(dep: Deployment, batch: Any, context_tokens: Any) -> tuple[float, float]:
    """The exported (batch, context) as floats, after the library's checks on both."""
    if not isinstance(dep, Deployment):
        raise TokenomicsError(f"dep must be a Deployment, got {type(dep).__name__}")
    Barr = V.counts(batch, "batch")
    Carr = V.counts(context_tokens, "context_tokens", unit="token")
    if Barr.ndim or Carr.ndim:
        raise TokenomicsError("batch and context_tokens must be single numbers for a sheet "
                              "(export one sheet per point)")
    V.context_within(dep.model, Carr, dep.allow_beyond_max_context)
    return float(Barr), float(Carr)


def _sheet_price(dep: Deployment, usd_per_device_hour: Any) -> tuple[float | None, str]:
    """The device-hour price [USD/hour] and its note: given, the catalog's, or none."""
    if usd_per_device_hour is not None:
        return float(V.non_negative(usd_per_device_hour, "usd_per_device_hour",
                                    "USD/hour")), "given"
    from tokenomics.economics.basis import DEFAULT_PRICE_BASIS, price_on_basis

    try:
        pr = price_on_basis(dep.hardware)
    except NotPublishedError:
        return None, ""
    return pr.usd_per_device_hour, (f"catalog price on the default basis "
                                    f"({DEFAULT_PRICE_BASIS.label}): {pr.tier} {pr.date}")


# ---------------------------------------------------------------- deployment and inputs
def _deployment_rows(s: _SizingSheet) -> None:
    """The *Deployment* section: model, hardware, formats and layout, as text."""
    dep = s.dep
    s.section("Deployment", "text; changing these does not recompute: re-export")
    s.text("model", dep.model.id)
    s.text("hardware", dep.hardware.id)
    s.text("formats (weights / experts / KV / activations / compute)",
           f"{dep.weight_dtype} / {dep.expert_dtype} / {dep.kv_dtype} / {dep.act_dtype} / "
           f"{dep.compute_dtype}")
    s.text("layout", f"tp={dep.tp} pp={dep.pp} ep={dep.ep} dp_attention={dep.dp_attention}",
           "per-device coefficients below already include the tp split; tp and pp are "
           "constants of the formulas (re-export to change the layout)")
    s.text("efficiency", dep.efficiency.label, "MFU, MBU, overlaps, operator scales and "
           "overheads below are this efficiency's (edit them as inputs)")


def _device_inputs(s: _SizingSheet) -> None:
    """The device and the point: peaks, MFU, bandwidth, MBU, capacity, batch, context."""
    import sympy as sp

    dep, c = s.dep, s.c
    hw, eff = dep.hardware, dep.efficiency
    s.section("Inputs", "plain values: edit them and the outputs recompute")
    c["P"] = s.value("peak FLOP/s", hw.peak(dep.compute_dtype), "FLOP/s",
                     f"dense peak of one device at {dep.compute_dtype}")
    c["Patt"] = s.value("attention peak FLOP/s", dep.attention_peak_flop_per_s(), "FLOP/s",
                        f"dense peak at {dep.attention_dtype}, the wider of the compute and KV "
                        "formats (the attention core computes at it)")
    c["mfu"] = s.value("MFU", eff.mfu, "1", "achieved fraction of peak FLOP/s")
    c["ag"] = s.value("achievable share of the peak", achievable_factor(
        hw.achievable_share(dep.compute_dtype), eff), "1",
        "the device's measured matmul rate over its datasheet peak, as the efficiency applies "
        "it (1 at the bound)")
    c["aa"] = s.value("achievable share of the attention peak", achievable_factor(
        hw.achievable_share(dep.attention_dtype), eff), "1", "as above, at the attention format")
    c["bw"] = s.value("memory bandwidth", hw.mem_bw_bytes_per_s, "B/s", "peak, one device")
    c["mbu"] = s.value("MBU", eff.mbu, "1", "achieved fraction of peak bandwidth")
    c["v"] = s.value("operator overlap", eff.overlap, "1",
                     "share of the shorter of an operator's compute and memory times hidden "
                     "behind the longer (1 at the bound)")
    c["cap"] = s.value("memory capacity", hw.mem_usable_bytes, "B",
                       "one device, usable: driver-visible (physical where not published)")
    c["frac"] = s.value("usable memory fraction", dep.usable_memory_fraction, "1",
                        "vLLM gpu_memory_utilization")
    # tp and pp are structural (they re-shard every coefficient and change the collectives):
    # constants of the formulas, stated in the Deployment section, not input cells
    c["tp"], c["pp"] = sp.Integer(dep.tp), sp.Integer(dep.pp)
    c["B"] = s.value("batch", s.B, "sequences", "concurrent sequences on the replica")
    c["C"] = s.value("context tokens", s.C, "token", "tokens in each sequence's KV cache")


def _memory_inputs(s: _SizingSheet) -> None:
    """Memory terms per device: weights, reserve, workspace, KV bytes per token per layer."""
    dep, c = s.dep, s.c
    c["W"] = s.value("weight bytes per device", weight_bytes_per_device(dep), "B")
    c["R"] = s.value("runtime reserve per device", dep.runtime_reserve_bytes, "B")
    if dep.workspace_bytes is None:
        ws_seq = (activation_workspace_bytes_per_token(dep)
                  + logits_workspace_bytes_per_sequence(dep)) / dep.pp
        ws_fix = 0.0
        notes = ("estimate: activations of the decode token plus FP32 logits, over pp",
                 "0: the estimate scales with the batch")
    else:
        ws_seq, ws_fix = 0.0, float(dep.workspace_bytes)
        notes = ("0: the deployment gives a fixed workspace", "given by the deployment")
    c["ws_seq"] = s.value("workspace bytes per sequence per device", ws_seq, "B", notes[0])
    c["ws_fix"] = s.value("workspace bytes fixed per device", ws_fix, "B", notes[1])
    c["kvs"] = s.value("KV bytes per token per layer on a tp shard",
                       kv_bytes_per_token_per_layer(dep.model, dep.kv_dtype)
                       * dep.kv_replication / dep.tp,
                       "B/token", f"{dep.kv_dtype}, KV replication {dep.kv_replication:g} "
                       "over tp included")
    c["L"] = s.value("layers", dep.model.num_layers, "layers", "KV written in every layer")


def _window_inputs(s: _SizingSheet) -> None:
    """One layer count per attention window group, and the window of each windowed group."""
    for kind, win, count in s.dep.model.window_groups():
        what = "full attention" if kind == "full" else f"{kind} window {win:g}"
        n_g = s.value(f"layers with {what}", count, "layers")
        w_g = None if kind == "full" else s.value(f"window of the {what} layers", win, "token")
        s.groups.append((kind, n_g, w_g))


def _attention_inputs(s: _SizingSheet) -> None:
    """Attention-core coefficients per micro-batch sequence on one device (formulas.py's)."""
    dep, c = s.dep, s.c
    a, tp = dep.model.attention, dep.tp
    pair = F.attention_pair_flops(a) / tp
    if s.mla:
        c["fe"] = s.value("attention FLOPs per (query, key) pair per layer, expanded MLA",
                          pair, "FLOP", "2 n_q (d_k + d_v) / tp")
        c["fu"] = s.value("MLA latent up-projection FLOPs per cached token per layer",
                          F.mla_up_projection_flops_per_token(a) / tp, "FLOP",
                          "2 r_kv n_q (d_nope + d_v) / tp")
        c["fa"] = s.value("attention FLOPs per (query, key) pair per layer, absorbed MLA",
                          F.mla_absorbed_pair_flops(a) / tp,
                          "FLOP", "2 n_q (2 r_kv + d_rope) / tp; the cheaper form is costed")
    else:
        c["fp"] = s.value("attention FLOPs per (query, key) pair per layer", pair, "FLOP",
                          "2 n_q (d_k + d_v) / tp")
    c["att_io"] = s.value("attention activation bytes per sequence per device",
                          F.attention_io_elements_per_token(a)
                          * bytes_per_element(dep.act_dtype) * dep.model.num_layers / tp,
                          "B", "queries in, outputs out")


def _operator_inputs(s: _SizingSheet) -> None:
    """Every other operator: FLOPs F1 b and bytes Q0 + Q1 b per device, from step_costs."""
    costs, tp = s.costs, s.dep.tp
    for name in costs[1.0]:
        if name == "attn_core":          # written as formulas of the context (outputs)
            s.scale[name] = _operator_scale_cells(s, name, costs[1.0][name])
            s.ops.append((name, None, None, None))
            continue
        if all(not np.any(costs[b][name].flops) and not np.any(costs[b][name].bytes)
               for b in _PROBE):
            continue
        f0, f1 = _linear(f"{name} FLOPs", {b: _num(costs[b][name].flops) / tp for b in _PROBE})
        if not _close(f0, 0.0, 1e-12) and abs(f0) > 1e-6 * max(abs(f1), 1.0):
            raise TokenomicsError(f"internal: {name} FLOPs have a batch-independent part")
        F1 = s.value(f"{name}: FLOPs per sequence per device", f1, "FLOP")
        s.scale[name] = _operator_scale_cells(s, name, costs[1.0][name])
        if name == "moe_experts" and s.dep.model.moe is not None:
            Q0, Q1 = _expert_bytes(s)
        else:
            q0, q1 = _linear(f"{name} bytes",
                             {b: _num(costs[b][name].bytes) / tp for b in _PROBE})
            Q0 = s.value(f"{name}: fixed bytes per device", q0, "B", "weights read once")
            Q1 = s.value(f"{name}: bytes per sequence per device", q1, "B",
                         "activations, gathered rows")
        s.ops.append((name, F1, Q0, Q1))


def _operator_scale_cells(s: _SizingSheet, name: str, op: Any) -> Any:
    """An operator's fraction of MFU (:func:`~tokenomics.physics.engine.compute_scale`) as a
    cell, and for the routed experts the grouped GEMM's terms: a cell each, combined in the
    outputs with the tokens per distinct expert at the micro-batch."""
    dep, eff = s.dep, s.dep.efficiency
    if name != "moe_experts" or dep.model.moe is None:
        return s.value(f"{name}: fraction of MFU", float(np.asarray(compute_scale(dep, op))),
                       "1", "attention_mfu_scale, fp4_mfu_scale or mixed_input_mfu_scale as "
                       "they apply (1 at the bound)")
    base = operator_scale(name, eff, dtype(dep.compute_dtype).peak == "fp4",
                          dtype(dep.attention_dtype).peak == "fp4", None,
                          weight_only(dep, name))
    s.c["e_base"] = s.value("moe_experts: fraction of MFU before the grouped GEMM's terms",
                            float(base), "1", "expert_mfu_scale, times fp4_mfu_scale or "
                            "mixed_input_mfu_scale as they apply")
    s.c["e_half"] = s.value("expert half tokens", eff.expert_half_tokens, "token",
                            "tokens per expert at half efficiency (0: off)")
    s.c["e_tile"] = s.value("expert tile tokens", eff.expert_tile_tokens, "token",
                            "rows of a grouped-GEMM tile, computed whole (0: off)")
    s.c["e_load"] = s.value("expert load factor", float(expert_load_factor(dep)), "1",
                            "the busiest expert-parallel rank's routed load over the mean")
    return None


def _expert_bytes(s: _SizingSheet) -> tuple[Any, Any]:
    """Routed-expert bytes: ``(Q0, Q1)`` with Q0 holding the exact distinct-experts form.

    The weights read are :math:`w_e E (1 - (1 - k/E)^b)` (:func:`formulas.distinct_experts`
    of the micro-batch, a placeholder symbol until the micro-batch cell exists), the rest
    affine in the batch.
    """
    tp, moe = s.dep.tp, s.dep.model.moe
    assert moe is not None
    op = {b: s.costs[b]["moe_experts"] for b in _PROBE}
    q0, q1 = _linear("moe_experts activation bytes",
                     {b: (_num(op[b].kv_bytes) + _num(op[b].act_bytes)) / tp for b in _PROBE})
    per_expert = {b: _num(op[b].weight_bytes) / tp
                  / float(F.distinct_experts(moe.num_experts, moe.top_k, b)) for b in _PROBE}
    if not (_close(per_expert[1.0], per_expert[2.0]) and
            _close(per_expert[1.0], per_expert[4.0])):
        raise TokenomicsError("internal: expert bytes are not per distinct expert")
    E = s.value("routed experts", moe.num_experts, "experts")
    k = s.value("experts per token (top-k)", moe.top_k, "experts")
    s.c["E"], s.c["k"] = E, k
    we = s.value("moe_experts: weight bytes per distinct expert per device",
                 per_expert[1.0], "B", "all MoE layers; the step reads the expected "
                 "distinct experts E(1-(1-k/E)^b) of its b tokens (exact, uniform "
                 "routing), not linearised")
    Q0x = s.value("moe_experts: other fixed bytes per device", q0, "B")
    Q1 = s.value("moe_experts: bytes per sequence per device", q1, "B", "activations")
    return Q0x + we * F.distinct_experts(E, k, _B()), Q1


def _step_inputs(s: _SizingSheet, price: float | None, price_note: str) -> None:
    """Per-step inputs: each collective's coefficients, overlap, overhead, price and TDP (the
    last two only where known)."""
    dep, c = s.dep, s.c
    hw = dep.hardware
    _comm_inputs(s)
    c["overlap"] = s.value("communication overlap", dep.comm_hidden_share, "1",
                           "fraction hidden behind compute and memory time: 1 - (1 - layout "
                           "comm_overlap)(1 - efficiency collective_overlap); 1 at the bound")
    c["ovh"] = s.value("overhead per step", overhead_s(dep), "s",
                       "step overhead + layers x layer overhead")
    c["tok"] = s.value("host time per sampled token", dep.efficiency.token_overhead_s, "s",
                       "sampling, detokenising and scheduling, per token the step samples")
    c["dp"] = s.value("attention data-parallel ranks", dep.dp_attention, "ranks",
                      "schedulers sharing the host work")
    c["price"] = (s.value("price per device-hour", price, "USD/hour", price_note)
                  if price is not None else None)
    c["tdp"] = s.value("TDP", hw.tdp_w, "W", "one device") if hw.tdp_w is not None else None


#: Micro-batches at which each collective's time is read off and checked to be affine.
_COMM_PROBE = (1.0, 2.0, 4.0, 64.0, 1000.0)


def _kind_times(dep: Deployment, b: float) -> dict[str, float]:
    return {x.name: _num(x.time_s) for x in step_comm(dep, b, 1.0, 1.0, "decode")}


def _affine(dep: Deployment, kind: str) -> tuple[float, float]:
    """(fixed, per-sequence) time of one collective kind: :math:`t(b) = t_0 + t_1 b`."""
    t = {b: _kind_times(dep, b)[kind] for b in _COMM_PROBE}
    t1 = t[2.0] - t[1.0]
    t0 = t[1.0] - t1
    for b, v in t.items():
        if not _close(t0 + t1 * b, v, 1e-9):
            raise NotImplementedError(f"{kind} on {dep.hardware.id}: its time is not affine in "
                                      "the batch, so the sheet cannot carry it as a formula")
    return t0, t1


def _comm_inputs(s: _SizingSheet) -> None:
    """Each collective kind's time as :math:`t_0 + t_1 b` (per algorithm for an automatic
    all-reduce, the sheet taking the fastest: ``MIN``), read off
    :func:`tokenomics.step_comm`; ``s.comm`` keeps the (kind, [(t0, t1) cells]) pairs."""
    from tokenomics.physics.collectives import ALGORITHMS

    dep = s.dep
    s.comm = []
    for kind in _kind_times(dep, 1.0):
        auto = kind.endswith("allreduce") and dep.allreduce_algorithm == "auto"
        variants = [(a, dep.with_(allreduce_algorithm=a)) for a in ALGORITHMS] if auto \
            else [("", dep)]
        cells = []
        for alg, d in variants:
            t0, t1 = _affine(d, kind)
            tag = f"{kind}{' ' + alg if alg else ''}"
            cells.append((s.value(f"{tag}: fixed time", t0, "s",
                                  "latency floors and per-call overhead (tokenomics.step_comm)"),
                          s.value(f"{tag}: time per sequence", t1, "s",
                                  "message bytes per sequence / link bandwidth")))
        s.comm.append((kind, cells))


# ---------------------------------------------------------------- outputs
def _rate_outputs(s: _SizingSheet) -> None:
    """Devices, achievable FLOP/s and bandwidth, the ridge point and the micro-batch."""
    c = s.c
    s.section("Outputs", "formulas of the inputs")
    c["n"] = s.formula("devices", c["tp"] * c["pp"], "devices", "tp x pp")
    c["Pa"] = s.formula("achievable FLOP/s", c["P"] * c["ag"] * c["mfu"], "FLOP/s",
                        "peak x achievable share x MFU")
    c["Paa"] = s.formula("achievable attention FLOP/s", c["Patt"] * c["aa"] * c["mfu"],
                         "FLOP/s", "attention peak x achievable share x MFU")
    c["bwa"] = s.formula("achievable bandwidth", c["bw"] * c["mbu"], "B/s", "bandwidth x MBU")
    s.formula("ridge point", c["P"] / c["bw"], "FLOP/B",
              "peak / bandwidth (tokenomics.ridge_point)")
    c["b"] = s.formula("micro-batch", c["B"] / c["pp"], "sequences",
                       "batch / pp sequences per step")


def _window_reads(s: _SizingSheet) -> tuple[dict[Any, Any], dict[Any, Any]]:
    """Per layer group (by its layers cell): the pairs the new token computes and the cached
    tokens it reads, as formulas of the context cell.

    The spreadsheet forms of ``span_sum(c + 1) - span_sum(c)`` and ``kv_read_tokens(c)`` of
    :mod:`tokenomics.physics.formulas` (numpy-only there): full ``C+1`` and ``C``, sliding
    ``MIN(C+1,W)`` and ``MIN(C,W)``, chunked ``MOD(C,W)+1`` and ``MOD(C,W)``.
    """
    import sympy as sp

    Cs = s.c["C"]
    span: dict[Any, Any] = {}
    read: dict[Any, Any] = {}
    for kind, n_g, w_g in s.groups:
        if w_g is None:
            span[n_g], read[n_g] = Cs + 1, Cs
        elif kind == "sliding":
            span[n_g], read[n_g] = sp.Min(Cs + 1, w_g), sp.Min(Cs, w_g)
        else:
            span[n_g], read[n_g] = sp.Mod(Cs, w_g) + 1, sp.Mod(Cs, w_g)
    return span, read


def _attention_outputs(s: _SizingSheet) -> None:
    """KV tokens held, and the attention core's FLOPs and bytes as formulas of the context."""
    import sympy as sp

    c, groups = s.c, s.groups
    Cs = c["C"]
    held = sum(n_g * (Cs if w_g is None else sp.Min(Cs, w_g)) for _k, n_g, w_g in groups)
    c["held"] = s.formula("KV tokens held per sequence (all layers)", held, "token x layers",
                          "sum over layer groups of min(context, window)")
    span, read = _window_reads(s)
    if s.mla:   # the cheaper of the expanded and the absorbed forms, as step_costs takes
        fcore = sum(n_g * sp.Min(span[n_g] * c["fe"] + read[n_g] * c["fu"],
                                 span[n_g] * c["fa"]) for _k, n_g, _w in groups)
    else:
        fcore = c["fp"] * sum(n_g * span[n_g] for _k, n_g, _w in groups)
    qcore = c["kvs"] * (sum(n_g * read[n_g] for _k, n_g, _w in groups) + c["L"]) + c["att_io"]
    s.core = (fcore, qcore)
    c["F1c"] = s.formula("attn_core: FLOPs per sequence per device", fcore, "FLOP",
                         "pairs of the new token x FLOPs per pair, over layer groups")
    c["Q1c"] = s.formula("attn_core: bytes per sequence per device", qcore, "B",
                         "KV read (windows honoured) and written, plus activations")


def _time_outputs(s: _SizingSheet) -> None:
    """Each operator's time by the engine's law, their sum, exposed communication, host
    work, step and rates."""
    import sympy as sp

    c = s.c
    cells = []
    for name, F1, Q0, Q1 in s.ops:
        if name == "attn_core":
            F1, Q0, Q1 = c["F1c"], sp.Integer(0), c["Q1c"]
        peak = c["Paa"] if name == "attn_core" else c["Pa"]
        scale, load = s.scale.get(name), sp.Integer(1)
        if scale is None:                  # the routed experts: the grouped GEMM's terms
            scale, load = _expert_scale(s), c["e_load"]
        tc = load * F1 * c["b"] / (peak * scale)
        tm = (Q0 + Q1 * c["b"] + (load - 1) * Q1 * c["b"]) / c["bwa"]
        expr = sp.Max(tc, tm) + (1 - c["v"]) * sp.Min(tc, tm)
        cells.append(s.formula(f"{name}: time", expr.xreplace({_B(): c["b"]}), "s",
                               "max(compute, memory) + (1 - overlap) min(compute, memory) "
                               "(tokenomics.physics.engine.operator_time)"))
    parts = [s.number(x) for x in cells]
    roof = s.formula("roofline time", f"=SUM({cells[0]}:{cells[-1]})", "s",
                     "sum over operators", cached=sum(parts) if None not in parts else None)
    comm = _comm_outputs(s)
    comm_x = s.formula("exposed communication", comm - sp.Min(c["overlap"] * comm, roof), "s",
                       "communication minus what overlap hides")
    host = s.formula("host time per step", c["tok"] * c["B"] / c["dp"], "s",
                     "host time per sampled token x batch / attention DP ranks")
    step = s.formula("step time", roof + comm_x + c["ovh"] + host, "s",
                     "tokenomics.decode step_time_s")
    c["tps"] = s.formula("tokens/s per device", c["B"] / step / c["n"], "token/s",
                         "batch / step / devices")
    s.formula("tokens/s per user", 1 / step, "token/s", "1 / step")


def _expert_scale(s: _SizingSheet) -> Any:
    """The routed experts' fraction of MFU at the micro-batch: the base scale times the
    grouped GEMM's efficiency at :math:`m = b k / (E (1 - (1 - k/E)^b))` tokens per distinct
    expert (:func:`~tokenomics.physics.engine.grouped_gemm_efficiency`)."""
    import sympy as sp

    c = s.c
    m = c["b"] * c["k"] / F.distinct_experts(c["E"], c["k"], c["b"])
    out = c["e_base"]
    eff = s.dep.efficiency
    if eff.expert_half_tokens > 0:
        out = out * m / (m + c["e_half"])
    if eff.expert_tile_tokens > 0:
        out = out * m / (m ** 4 + c["e_tile"] ** 4) ** sp.Rational(1, 4)
    return out


def _comm_outputs(s: _SizingSheet) -> Any:
    """Each collective's time at the micro-batch and their sum (0 without collectives)."""
    import sympy as sp

    b = s.c["b"]
    kinds = []
    for kind, cells in s.comm:
        terms = [t0 + t1 * b for t0, t1 in cells]
        kinds.append(s.formula(f"{kind}: time", terms[0] if len(terms) == 1 else sp.Min(*terms),
                               "s", "fixed + per sequence x micro-batch"
                               + ("; the fastest all-reduce algorithm" if len(terms) > 1 else "")))
    if not kinds:
        return s.formula("communication time per step", "=0", "s",
                         "no collectives (tp = pp = 1)", cached=0.0)
    return s.formula("communication time per step", sum(kinds), "s",
                     "sum over collectives (tokenomics.step_comm)")


def _memory_outputs(s: _SizingSheet) -> None:
    """KV and workspace bytes, the memory total against the usable memory, fits, max batch."""
    import sympy as sp

    c = s.c
    kv_seq = s.formula("KV bytes per sequence per device", c["kvs"] * c["held"] / c["pp"], "B")
    kv_dev = s.formula("KV bytes per device", c["B"] * kv_seq, "B", "at the batch")
    ws = s.formula("workspace bytes per device", c["B"] * c["ws_seq"] + c["ws_fix"], "B")
    total = s.formula("memory total per device", c["W"] + kv_dev + ws + c["R"], "B",
                      "weights + KV + workspace + reserve (tokenomics.memory_fit)")
    usable = s.formula("usable memory per device", c["cap"] * c["frac"], "B")
    t, u = s.number(total), s.number(usable)
    s.formula("fits", f"=IF({total.name}<={usable.name},1,0)", "1", "1 if it fits",
              cached=None if t is None or u is None else float(t <= u))
    s.formula("max batch",
              sp.floor(sp.Max(usable - c["W"] - c["R"] - c["ws_fix"], 0)
                       / (kv_seq + c["ws_seq"])), "sequences", "tokenomics.max_batch")


def _cost_outputs(s: _SizingSheet) -> None:
    """USD per million tokens and joules per token, or a note row saying what is missing."""
    c, hw = s.c, s.dep.hardware
    if c["price"] is not None:
        pr, tps = s.number(c["price"]), s.number(c["tps"])
        s.formula("cost per million tokens", f"={c['price'].name}/3600/{c['tps'].name}*1000000",
                  "USD/Mtok", "price / 3600 / (tokens/s per device) x 1e6",
                  cached=pr / 3600 / tps * 1e6 if pr is not None and tps else None)
    else:
        s.section("cost per million tokens", f"no rental price for {hw.id} in the catalog: "
                  "pass usd_per_device_hour")
    if c["tdp"] is not None:
        s.formula("joules per token", c["tdp"] / c["tps"], "J/token",
                  "TDP / (tokens/s per device); PUE and utilisation not applied")
    else:
        s.section("joules per token", f"{hw.id}: TDP not published")


def _check_attention(s: _SizingSheet) -> None:
    """The sheet's attention formulas, at the exported point, equal step_costs' numbers."""
    import sympy as sp

    vals = {sp.Symbol(f"B{i + 2}", nonnegative=True): r.value for i, r in enumerate(s.rows)
            if isinstance(r.value, float)}
    core, tp = s.costs[1.0]["attn_core"], s.dep.tp
    for what, expr, ref in (("FLOPs", s.core[0], _num(core.flops) / tp),
                            ("bytes", s.core[1], _num(core.bytes) / tp)):
        got = float(sp.sympify(expr).xreplace(vals))
        if not _close(got, ref):
            raise TokenomicsError(f"internal: sheet attention {what} {got!r} != {ref!r}")


def _B() -> Any:
    """Placeholder symbol for the micro-batch inside the expert formula."""
    import sympy as sp

    return sp.Symbol("_microbatch", nonnegative=True)
