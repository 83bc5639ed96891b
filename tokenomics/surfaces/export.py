"""Spreadsheet export: a decode sizing sheet whose outputs are live formulas, and plain tables.

Notes
-----
:func:`export_sizing_sheet` writes a CSV a spreadsheet (Excel, LibreOffice, Google Sheets)
opens as a worksheet of four columns: **label**, **value**, **unit**, **note**. Row 1 is the
header; every value cell is ``B<row>``. Input cells hold plain numbers; output cells hold
spreadsheet formulas (``=MAX(B40*B31/B25,(B41+B42*B31)/B26)``) referencing the inputs by A1
address, so changing the batch, the bandwidth or the context recomputes the sheet.

The formulas are printed from SymPy expressions over symbols named after cells (a small
printer, :func:`spreadsheet_formula`): each operator's time is
:func:`tokenomics.pareto.symbolic.roofline_step_time` with the operator's coefficients substituted.
The sheet models one decode step (one new token per sequence) per device, as
:func:`tokenomics.decode` does:

.. math::
   t = \\sum_o \\max\\!\\left(\\frac{F_{1,o}\\, b}{P\\,\\mathrm{MFU}},
       \\frac{Q_{0,o} + Q_{1,o}\\, b}{\\beta\\,\\mathrm{MBU}}\\right)
       + t_\\mathrm{comm} - \\min(\\omega\\, t_\\mathrm{comm}, t_\\mathrm{roof})
       + t_\\mathrm{overhead}, \\qquad b = B / pp.

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
* Fixed at the exported batch: the communication time (an input cell computed by
  :func:`tokenomics.step_comm`; collectives are affine in the message with an algorithm
  switch, so it is not re-derived in the sheet). It is zero for ``tp = pp = 1``. Re-export,
  or overwrite that cell, after changing the batch of a parallel deployment.
* Structural, not live: ``tp``, ``pp``, formats and the model. The per-device coefficients
  already include the ``tp`` split; changing the ``tp`` cell does not re-shard.

References
----------
.. [1] S. Williams, A. Waterman, D. Patterson, "Roofline: an insightful visual performance
   model for multicore architectures", CACM 52(4), 2009. doi:10.1145/1498765.1498785
.. [2] A. Meurer et al., "SymPy: symbolic computing in Python", PeerJ Comput. Sci. 3:e103,
   2017. doi:10.7717/peerj-cs.103
"""

from __future__ import annotations

import csv
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tokenomics.core import checks as V
from tokenomics.core.dtypes import bytes_per_element
from tokenomics.core.errors import NotPublishedError, TokenomicsError
from tokenomics.data.deployment import Deployment
from tokenomics.physics import formulas as F
from tokenomics.physics.collectives import step_comm
from tokenomics.physics.kv import kv_bytes_per_token_per_layer
from tokenomics.physics.memory import (
    activation_workspace_bytes_per_token,
    logits_workspace_bytes_per_sequence,
    weight_bytes_per_device,
)
from tokenomics.physics.operators import step_costs

__all__ = ["export_sizing_sheet", "export_table_csv", "spreadsheet_formula"]

HEADER = ("label", "value", "unit", "note")


# --------------------------------------------------------------------------------------------
# SymPy -> spreadsheet syntax
# --------------------------------------------------------------------------------------------
def _printer() -> Any:
    from sympy.printing.str import StrPrinter

    class SheetPrinter(StrPrinter):  # type: ignore[misc]
        """SymPy expressions in spreadsheet syntax; symbols print as their names (cells)."""

        def _print_Symbol(self, e: Any) -> str:
            return str(e.name)

        def _call(self, name: str, args: Any) -> str:
            return f"{name}(" + ",".join(self._print(a) for a in args) + ")"

        def _print_Max(self, e: Any) -> str:
            return self._call("MAX", e.args)

        def _print_Min(self, e: Any) -> str:
            return self._call("MIN", e.args)

        def _print_Mod(self, e: Any) -> str:
            return self._call("MOD", e.args)

        def _print_floor(self, e: Any) -> str:
            return self._call("INT", e.args)

        def _print_Pow(self, e: Any, rational: bool = False) -> str:
            base, exp = e.as_base_exp()
            if exp == -1:
                return f"(1/({self._print(base)}))"
            # Fully parenthesised: spreadsheets bind unary minus tighter than ^ (-2^2 = 4).
            return f"(({self._print(base)})^({self._print(exp)}))"

        def _print_Rational(self, e: Any) -> str:
            return f"({e.p}/{e.q})"

        def _print_Integer(self, e: Any) -> str:
            return str(e.p)

        def _print_Float(self, e: Any) -> str:
            return repr(float(e))

    return SheetPrinter()


def spreadsheet_formula(expr: Any, cells: dict[Any, str] | None = None) -> str:
    """A SymPy expression as a spreadsheet formula (``"=..."``).

    Parameters
    ----------
    expr : sympy.Expr
        Built from ``+ - * /``, powers, ``Max``, ``Min``, ``Mod`` and ``floor``.
    cells : dict, optional
        Symbol -> A1 address; symbols not in it print as their names (name them ``"B12"``
        to make them cells directly).

    Returns
    -------
    str
        ``Max`` -> ``MAX(a,b)``, ``Min`` -> ``MIN``, ``Mod`` -> ``MOD``, ``floor`` ->
        ``INT``, powers as ``((a)^(b))``.

    Examples
    --------
    >>> import sympy as sp
    >>> from tokenomics.pareto.symbolic import roofline_step_time
    >>> e = roofline_step_time()
    >>> B, F1, P, Q0, Q1, bm = sorted(e.free_symbols, key=lambda s: "B F1 P Q0 Q1 beta_m"
    ...                                .split().index(s.name))
    >>> spreadsheet_formula(e, {B: "B9", F1: "B5", P: "B2", Q0: "B6", Q1: "B7", bm: "B3"})
    '=MAX(B5*B9/B2,(B6+B7*B9)/B3)'
    """
    import sympy as sp

    if cells:
        expr = expr.xreplace({s: sp.Symbol(a, nonnegative=True) for s, a in cells.items()})
    # No strings or ranges in these formulas, so spaces can go (a space between two
    # references is Excel's intersection operator).
    return "=" + _printer().doprint(expr).replace(" ", "")


# --------------------------------------------------------------------------------------------
# The sheet builder
# --------------------------------------------------------------------------------------------
@dataclass
class _Row:
    label: str
    value: Any
    unit: str = ""
    note: str = ""


class _Sheet:
    """Rows of (label, value, unit, note); the value of row i (0-based) is cell B{i + 2}."""

    def __init__(self) -> None:
        self.rows: list[_Row] = []

    def _add(self, row: _Row) -> str:
        if row.value is not None and any(r.label == row.label for r in self.rows
                                         if r.value is not None):
            raise TokenomicsError(f"internal: duplicate sheet label {row.label!r}")
        self.rows.append(row)
        return f"B{len(self.rows) + 1}"

    def section(self, title: str, note: str = "") -> None:
        self._add(_Row(title, None, "", note))

    def text(self, label: str, value: str, note: str = "") -> None:
        self._add(_Row(label, value, "", note))

    def value(self, label: str, v: float, unit: str, note: str = "") -> Any:
        import sympy as sp

        v = float(v)
        if not math.isfinite(v):
            raise TokenomicsError(f"internal: {label} is {v!r}")
        return sp.Symbol(self._add(_Row(label, v, unit, note)), nonnegative=True)

    def formula(self, label: str, expr: Any, unit: str, note: str = "") -> Any:
        import sympy as sp

        f = expr if isinstance(expr, str) else spreadsheet_formula(expr)
        return sp.Symbol(self._add(_Row(label, f, unit, note)), nonnegative=True)

    def write(self, path: Path) -> None:
        with open(path, "w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh)
            w.writerow(HEADER)
            for r in self.rows:
                w.writerow([r.label, _cell(r.value), r.unit, r.note])


def _cell(v: Any) -> str:
    """A value cell: whole numbers without a decimal point, other floats as ``repr``."""
    if v is None:
        return ""
    if isinstance(v, float):
        return str(int(v)) if v.is_integer() and abs(v) < 2.0**53 else repr(v)
    return str(v)


def _num(x: Any) -> float:
    return float(np.asarray(x, float))


def _close(a: float, b: float, rel: float = 1e-9) -> bool:
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
    OSError
        The path cannot be written.

    Notes
    -----
    Layout: columns ``label, value, unit, note``; row 1 the header; then a *Deployment*
    section (text), an *Inputs* section (numbers: peak FLOP/s of the compute format, MFU,
    memory bandwidth, MBU, capacity, usable fraction, tp, pp, batch, context, memory terms,
    KV bytes per token per layer on a tp shard, window groups, attention coefficients, each
    operator's FLOPs per sequence and fixed/per-sequence bytes per device, MoE experts,
    communication, overhead, price, TDP) and an *Outputs* section (formulas: ridge point,
    micro-batch, KV tokens held, attention work, one row per operator time
    ``MAX(compute, memory)``, the roofline ``SUM``, exposed communication, step time,
    tokens/s per user and per device, KV bytes, memory total and usable, ``fits``
    (``IF(total<=usable,1,0)``), ``max batch`` (``INT``), USD per million tokens, joules per
    token at TDP). Numbers are written with full precision (``repr`` of floats). The sheet
    reproduces :func:`tokenomics.decode` (``step_time_s``, tokens/s), :func:`memory_fit`,
    :func:`max_batch`, :func:`ridge_point` and :func:`cost_per_million_tokens` to rounding;
    see the module notes for what is fixed at the exported batch (communication).

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
    import sympy as sp

    from tokenomics.pareto.symbolic import roofline_step_time

    if not isinstance(dep, Deployment):
        raise TokenomicsError(f"dep must be a Deployment, got {type(dep).__name__}")
    Barr = V.counts(batch, "batch")
    Carr = V.counts(context_tokens, "context_tokens", unit="token")
    if Barr.ndim or Carr.ndim:
        raise TokenomicsError("batch and context_tokens must be single numbers for a sheet "
                              "(export one sheet per point)")
    V.context_within(dep.model, Carr, dep.allow_beyond_max_context)
    B, C = float(Barr), float(Carr)
    price_note = ""
    if usd_per_device_hour is None:
        from tokenomics.data.specs import rental_price

        try:
            pr = rental_price(dep.hardware)
            price: float | None = pr.usd
            price_note = f"catalog rental price, {pr.tier} {pr.date}"
        except NotPublishedError:
            price = None
    else:
        price = float(V.non_negative(usd_per_device_hour, "usd_per_device_hour", "USD/hour"))
        price_note = "given"

    m, hw, eff = dep.model, dep.hardware, dep.efficiency
    a = m.attention
    tp, pp = dep.tp, dep.pp
    act = bytes_per_element(dep.act_dtype)
    s = _Sheet()

    # ---------------------------------------------------------------- deployment (text)
    s.section("Deployment", "text; changing these does not recompute: re-export")
    s.text("model", m.id)
    s.text("hardware", hw.id)
    s.text("formats (weights / experts / KV / activations / compute)",
           f"{dep.weight_dtype} / {dep.expert_dtype} / {dep.kv_dtype} / {dep.act_dtype} / "
           f"{dep.compute_dtype}")
    s.text("layout", f"tp={tp} pp={pp} ep={dep.ep} dp_attention={dep.dp_attention}",
           "per-device coefficients below already include the tp split")

    # ---------------------------------------------------------------- inputs
    s.section("Inputs", "plain values: edit them and the outputs recompute")
    P = s.value("peak FLOP/s", hw.peak(dep.compute_dtype), "FLOP/s",
                f"dense peak of one device at {dep.compute_dtype}")
    mfu = s.value("MFU", eff.mfu, "1", "achieved fraction of peak FLOP/s")
    bw = s.value("memory bandwidth", hw.mem_bw_bytes_per_s, "B/s", "peak, one device")
    mbu = s.value("MBU", eff.mbu, "1", "achieved fraction of peak bandwidth")
    cap = s.value("memory capacity", hw.mem_capacity_bytes, "B", "one device")
    frac = s.value("usable memory fraction", dep.usable_memory_fraction, "1",
                   "vLLM gpu_memory_utilization")
    tp_s = s.value("tp", tp, "devices", "tensor parallel (structural: re-export to change)")
    pp_s = s.value("pp", pp, "stages", "pipeline stages (structural: re-export to change)")
    Bs = s.value("batch", B, "sequences", "concurrent sequences on the replica")
    Cs = s.value("context tokens", C, "token", "tokens in each sequence's KV cache")
    W = s.value("weight bytes per device", weight_bytes_per_device(dep), "B")
    R = s.value("runtime reserve per device", dep.runtime_reserve_bytes, "B")
    if dep.workspace_bytes is None:
        ws_seq_v = (activation_workspace_bytes_per_token(dep)
                    + logits_workspace_bytes_per_sequence(dep)) / pp
        ws_fix_v = 0.0
        notes = ("estimate: activations of the decode token plus FP32 logits, over pp",
                 "0: the estimate scales with the batch")
    else:
        ws_seq_v, ws_fix_v = 0.0, float(dep.workspace_bytes)
        notes = ("0: the deployment gives a fixed workspace", "given by the deployment")
    ws_seq = s.value("workspace bytes per sequence per device", ws_seq_v, "B", notes[0])
    ws_fix = s.value("workspace bytes fixed per device", ws_fix_v, "B", notes[1])
    kvs = s.value("KV bytes per token per layer on a tp shard",
                  kv_bytes_per_token_per_layer(m, dep.kv_dtype) * dep.kv_replication / tp,
                  "B/token", f"{dep.kv_dtype}, KV replication {dep.kv_replication:g} "
                  "over tp included")
    L = s.value("layers", m.num_layers, "layers", "KV written in every layer")

    groups = []
    for kind, win, count in m.window_groups():
        what = "full attention" if kind == "full" else f"{kind} window {win:g}"
        n_g = s.value(f"layers with {what}", count, "layers")
        w_g = None if kind == "full" else s.value(f"window of the {what} layers", win, "token")
        groups.append((kind, n_g, w_g))

    # Attention core, per micro-batch sequence on one device, as functions of the context.
    mla = a.kind == "MLA"
    pair_v = F.attention_pair_flops(a) / tp
    if mla:
        fe = s.value("attention FLOPs per (query, key) pair per layer, expanded MLA", pair_v,
                     "FLOP", "2 n_q (d_k + d_v) / tp")
        fu = s.value("MLA latent up-projection FLOPs per cached token per layer",
                     F.mla_up_projection_flops_per_token(a) / tp, "FLOP",
                     "2 r_kv n_q (d_nope + d_v) / tp")
        fa = s.value("attention FLOPs per (query, key) pair per layer, absorbed MLA",
                     F.mla_absorbed_pair_flops(a) / tp,
                     "FLOP", "2 n_q (2 r_kv + d_rope) / tp; the cheaper form is costed")
    else:
        fp = s.value("attention FLOPs per (query, key) pair per layer", pair_v, "FLOP",
                     "2 n_q (d_k + d_v) / tp")
    att_io = s.value("attention activation bytes per sequence per device",
                     F.attention_io_elements_per_token(a) * act * m.num_layers / tp,
                     "B", "queries in, outputs out")

    # Every other operator: FLOPs F1 b, bytes Q0 + Q1 b, from step_costs at b = 1, 2, 4.
    bs = (1.0, 2.0, 4.0)
    costs = {b: {o.name: o for o in step_costs(dep, b, 1.0, C, 1.0)} for b in bs}
    ops: list[tuple[str, Any, Any, Any]] = []   # (name, F1, Q0 expr, Q1)
    moe = m.moe
    for name in costs[1.0]:
        if name == "attn_core":
            ops.append((name, None, None, None))
            continue
        if all(not np.any(costs[b][name].flops) and not np.any(costs[b][name].bytes)
               for b in bs):
            continue
        f0, f1 = _linear(f"{name} FLOPs", {b: _num(costs[b][name].flops) / tp for b in bs})
        if not _close(f0, 0.0, 1e-12) and abs(f0) > 1e-6 * max(abs(f1), 1.0):
            raise TokenomicsError(f"internal: {name} FLOPs have a batch-independent part")
        F1 = s.value(f"{name}: FLOPs per sequence per device", f1, "FLOP")
        if name == "moe_experts" and moe is not None:
            lin = {b: (_num(costs[b][name].kv_bytes) + _num(costs[b][name].act_bytes)) / tp
                   for b in bs}
            q0, q1 = _linear(f"{name} activation bytes", lin)
            per_expert = {b: _num(costs[b][name].weight_bytes) / tp
                          / float(F.distinct_experts(moe.num_experts, moe.top_k, b)) for b in bs}
            if not (_close(per_expert[1.0], per_expert[2.0]) and
                    _close(per_expert[1.0], per_expert[4.0])):
                raise TokenomicsError("internal: expert bytes are not per distinct expert")
            E = s.value("routed experts", moe.num_experts, "experts")
            k = s.value("experts per token (top-k)", moe.top_k, "experts")
            we = s.value("moe_experts: weight bytes per distinct expert per device",
                         per_expert[1.0], "B", "all MoE layers; the step reads the expected "
                         "distinct experts E(1-(1-k/E)^b) of its b tokens (exact, uniform "
                         "routing), not linearised")
            Q0x = s.value("moe_experts: other fixed bytes per device", q0, "B")
            Q1 = s.value("moe_experts: bytes per sequence per device", q1, "B",
                         "activations")
            distinct = F.distinct_experts(E, k, _B())
            ops.append((name, F1, Q0x + we * distinct, Q1))
        else:
            q0, q1 = _linear(f"{name} bytes", {b: _num(costs[b][name].bytes) / tp for b in bs})
            Q0 = s.value(f"{name}: fixed bytes per device", q0, "B", "weights read once")
            Q1 = s.value(f"{name}: bytes per sequence per device", q1, "B",
                         "activations, gathered rows")
            ops.append((name, F1, Q0, Q1))

    b_micro = B / pp
    comm_total = sum((_num(c.time_s) for c in step_comm(dep, b_micro, 1.0, 1.0, "decode")),
                     0.0)
    comm = s.value("communication time per step", comm_total, "s",
                   f"computed by tokenomics.step_comm at batch {B:g} and NOT recomputed "
                   "here (0 for tp = pp = 1): re-export or overwrite after changing the "
                   "batch")
    overlap = s.value("communication overlap", dep.comm_overlap, "1",
                      "fraction hidden behind compute and memory time")
    ovh = s.value("overhead per step", eff.step_overhead_s
                  + eff.layer_overhead_s * m.num_layers, "s",
                  "step overhead + layers x layer overhead")
    price_s = (s.value("price per device-hour", price, "USD/hour", price_note)
               if price is not None else None)
    tdp = s.value("TDP", hw.tdp_w, "W", "one device") if hw.tdp_w is not None else None

    # ---------------------------------------------------------------- outputs
    s.section("Outputs", "formulas of the inputs")
    n = s.formula("devices", tp_s * pp_s, "devices", "tp x pp")
    Pa = s.formula("achievable FLOP/s", P * mfu, "FLOP/s", "peak x MFU")
    bwa = s.formula("achievable bandwidth", bw * mbu, "B/s", "bandwidth x MBU")
    s.formula("ridge point", P / bw, "FLOP/B", "peak / bandwidth (tokenomics.ridge_point)")
    b = s.formula("micro-batch", Bs / pp_s, "sequences", "batch / pp sequences per step")

    held = sum(n_g * (Cs if w_g is None else sp.Min(Cs, w_g)) for _k, n_g, w_g in groups)
    held_s = s.formula("KV tokens held per sequence (all layers)", held, "token x layers",
                       "sum over layer groups of min(context, window)")
    span = {}
    read = {}
    for kind, n_g, w_g in groups:
        if w_g is None:
            span[n_g], read[n_g] = Cs + 1, Cs
        elif kind == "sliding":
            span[n_g], read[n_g] = sp.Min(Cs + 1, w_g), sp.Min(Cs, w_g)
        else:
            span[n_g], read[n_g] = sp.Mod(Cs, w_g) + 1, sp.Mod(Cs, w_g)
    if mla:
        fcore = sum(n_g * sp.Min(span[n_g] * fe + read[n_g] * fu, span[n_g] * fa)
                    for _k, n_g, _w in groups)
    else:
        fcore = fp * sum(n_g * span[n_g] for _k, n_g, _w in groups)
    F1c = s.formula("attn_core: FLOPs per sequence per device", fcore, "FLOP",
                    "pairs of the new token x FLOPs per pair, over layer groups")
    Q1c = s.formula("attn_core: bytes per sequence per device",
                    kvs * (sum(n_g * read[n_g] for _k, n_g, _w in groups) + L) + att_io, "B",
                    "KV read (windows honoured) and written, plus activations")

    rt = roofline_step_time()
    sym = {x.name: x for x in rt.free_symbols}
    first = None
    last = None
    for name, F1, Q0, Q1 in ops:
        if name == "attn_core":
            F1, Q0, Q1 = F1c, sp.Integer(0), Q1c
        expr = rt.xreplace({sym["B"]: b, sym["F1"]: F1, sym["P"]: Pa, sym["Q0"]: Q0,
                            sym["Q1"]: Q1, sym["beta_m"]: bwa})
        cell = s.formula(f"{name}: time", expr.xreplace({_B(): b}), "s",
                         "max(compute, memory) of the operator (roofline_step_time)")
        first = cell if first is None else first
        last = cell
    roof = s.formula("roofline time", f"=SUM({first}:{last})", "s",
                     "sum over operators of max(compute, memory)")
    comm_x = s.formula("exposed communication", comm - sp.Min(overlap * comm, roof), "s",
                       "communication minus what overlap hides")
    step = s.formula("step time", roof + comm_x + ovh, "s", "tokenomics.decode step_time_s")
    tps = s.formula("tokens/s per device", Bs / step / n, "token/s", "batch / step / devices")
    s.formula("tokens/s per user", 1 / step, "token/s", "1 / step")

    kv_seq = s.formula("KV bytes per sequence per device", kvs * held_s / pp_s, "B")
    kv_dev = s.formula("KV bytes per device", Bs * kv_seq, "B", "at the batch")
    ws = s.formula("workspace bytes per device", Bs * ws_seq + ws_fix, "B")
    total = s.formula("memory total per device", W + kv_dev + ws + R, "B",
                      "weights + KV + workspace + reserve (tokenomics.memory_fit)")
    usable = s.formula("usable memory per device", cap * frac, "B")
    s.formula("fits", f"=IF({total.name}<={usable.name},1,0)", "1", "1 if it fits")
    s.formula("max batch",
              sp.floor(sp.Max(usable - W - R - ws_fix, 0) / (kv_seq + ws_seq)), "sequences",
              "tokenomics.max_batch")
    if price_s is not None:
        s.formula("cost per million tokens", f"={price_s.name}/3600/{tps.name}*1000000",
                  "USD/Mtok",
                  "price / 3600 / (tokens/s per device) x 1e6")
    else:
        s.section("cost per million tokens", f"no rental price for {hw.id} in the catalog: "
                  "pass usd_per_device_hour")
    if tdp is not None:
        s.formula("joules per token", tdp / tps, "J/token", "TDP / (tokens/s per device); "
                  "PUE and utilisation not applied")
    else:
        s.section("joules per token", f"{hw.id}: TDP not published")

    # Self-check: the sheet's attention formulas reproduce step_costs at the exported point.
    vals = {sp.Symbol(f"B{i + 2}", nonnegative=True): r.value for i, r in enumerate(s.rows)
            if isinstance(r.value, float)}
    core = costs[1.0]["attn_core"]
    for what, expr, ref in (("FLOPs", fcore, _num(core.flops) / tp),
                            ("bytes", kvs * (sum(n_g * read[n_g] for _k, n_g, _w in groups)
                                             + L) + att_io, _num(core.bytes) / tp)):
        got = float(sp.sympify(expr).xreplace(vals))
        if not _close(got, ref):
            raise TokenomicsError(f"internal: sheet attention {what} {got!r} != {ref!r}")

    out = Path(path)
    s.write(out)
    return out


def _B() -> Any:
    """Placeholder symbol for the micro-batch inside the expert formula."""
    import sympy as sp

    return sp.Symbol("_microbatch", nonnegative=True)


# --------------------------------------------------------------------------------------------
# Plain tables
# --------------------------------------------------------------------------------------------
def export_table_csv(df: pd.DataFrame, path: str | os.PathLike[str],
                     index: bool = False) -> Path:
    """Write a DataFrame as a plain CSV of values.

    Parameters
    ----------
    df : pandas.DataFrame
        Any table (e.g. ``decode(...).to_frame()``, :func:`tokenomics.pareto.envelope`). Units
        belong in the column names (``step_time_s``), not in the cells.
    path : str or path-like
    index : bool
        Write the index as the first column (default False).

    Returns
    -------
    pathlib.Path

    Raises
    ------
    TokenomicsError
        ``df`` is not a DataFrame, or a cell holds a unit-carrying quantity (convert it to a
        magnitude and put the unit in the column name).
    OSError
        The path cannot be written.

    Notes
    -----
    Floats are written with full precision (``repr``, the shortest string that reads back
    to the same double), so ``pandas.read_csv`` returns the same numbers; no thousands
    separators, no units, no rounding.

    Examples
    --------
    >>> import tempfile, os
    >>> import pandas as pd
    >>> df = pd.DataFrame({"batch": [1, 2], "step_time_s": [1 / 3, 0.1 + 0.2]})
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     p = export_table_csv(df, os.path.join(tmp, "t.csv"))
    ...     back = pd.read_csv(p)
    >>> bool((back.step_time_s == df.step_time_s).all())
    True
    """
    if not isinstance(df, pd.DataFrame):
        raise TokenomicsError(f"df must be a pandas DataFrame, got {type(df).__name__}")
    for col in df.columns:
        if df[col].dtype == object and any(hasattr(v, "units") and hasattr(v, "magnitude")
                                           for v in df[col]):
            raise TokenomicsError(
                f"column {col!r} holds quantities with units; write magnitudes and put the "
                "unit in the column name (e.g. 'step_time_s')")
    out = Path(path)
    df.to_csv(out, index=index, float_format=lambda v: repr(float(v)))
    return out
