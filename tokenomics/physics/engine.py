"""The step engine: the time of one forward step from its operator costs.

Every stage that times a step goes through these functions: decode and prefill
(:mod:`tokenomics.physics.step`), mixed continuous-batching steps
(:mod:`tokenomics.serving.batching`), speculative cycles, disaggregated and colocated pools,
the frontier's curves and the calibration's forecasts. Changing how a step is timed means
changing this module alone.

Notes
-----
For operator costs :math:`(F_o, Q_o)` of a replica (:func:`tokenomics.physics.operators.step_costs`)
sharded over ``tp`` devices, with :math:`P` the dense peak of the compute format times MFU and
:math:`\\beta` the memory bandwidth times MBU:

.. math::
   t = t_\\mathrm{roof} + t_\\mathrm{comm} - \\min(\\omega\\, t_\\mathrm{comm}, t_\\mathrm{roof})
       + t_\\mathrm{step} + L\\,t_\\mathrm{layer},\\qquad
   t_\\mathrm{roof} = \\sum_{o} \\left[\\max(t_{c,o}, t_{m,o})
       + (1 - v)\\min(t_{c,o}, t_{m,o})\\right]

where :math:`t_{c,o} = F_o / (tp\\,P_o\\,s_o)`, :math:`P_o` the peak of the compute format
(attention: of :attr:`~tokenomics.Deployment.attention_dtype`, the wider of the compute and
KV formats) times MFU and :math:`t_{m,o} = Q_o / (tp\\,\\beta)`,
:math:`s_o` the operator's fraction of MFU (:func:`compute_scale`: attention kernels and
small grouped expert GEMMs run below the GEMMs' fraction) and :math:`v` the efficiency's
``overlap`` (1 at the roofline: the sum of per-operator maxima), with
:math:`t_\\mathrm{comm}` the step's collectives (:func:`tokenomics.physics.collectives.step_comm`),
:math:`\\omega` the hidden share of communication
(:attr:`~tokenomics.Deployment.comm_hidden_share`: the layout's ``comm_overlap`` and the
efficiency's ``collective_overlap``; at most the roofline time can hide it) and the
efficiency model's step and per-layer overheads. At the roofline :math:`v = \\omega = 1` and
the step is :math:`\\max(t_\\mathrm{roof}, t_\\mathrm{comm})`: no implementation of the same
work beats it. The single maximum over totals, :math:`\\max(\\sum F / P, \\sum Q / \\beta)`,
is the perfect-overlap lower bound of the operators alone.

The law is written once, here: :func:`operator_time` (one operator from its two terms),
:func:`exposed_comm` (the collectives a step cannot hide) and :func:`operator_terms` (an
operator's two terms from its work, the efficiency's per-operator scales included). The
precomputed plans (:mod:`tokenomics.physics.plan`, :mod:`tokenomics.physics.lines`) and the
calibration's design (:mod:`tokenomics.calibration.design`) call the same functions, with
arrays over corpus rows where the calibration evaluates every row at once.

References
----------
.. [1] S. Williams, A. Waterman, D. Patterson, "Roofline", CACM 52(4), 2009.
.. [2] R. Pope et al., "Efficiently Scaling Transformer Inference", MLSys 2023.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Literal

import numpy as np
import pandas as pd

from tokenomics.core import checks as V
from tokenomics.core.dtypes import bytes_per_element, dtype
from tokenomics.core.errors import TokenomicsError
from tokenomics.core.units import ReadableRepr
from tokenomics.data.deployment import Deployment
from tokenomics.physics.collectives import step_comm
from tokenomics.physics.operators import OpCost

#: What to do at a point that does not fit in memory: raise, or compute and mark ``fits``.
OnOOM = Literal["raise", "mark"]


def check_on_oom(on_oom: str) -> None:
    """Raise a :class:`TokenomicsError` unless ``on_oom`` is ``"raise"`` or ``"mark"``."""
    if not isinstance(on_oom, str) or on_oom not in ("raise", "mark"):
        raise TokenomicsError(f"on_oom must be 'raise' or 'mark', got {on_oom!r}")


@dataclass(frozen=True, repr=False)
class StepResult(ReadableRepr):
    """Timing of one forward step, broadcast over the inputs. Times per step [s].

    Attributes
    ----------
    phase : str
        ``"decode"``, ``"prefill"`` or ``"midfill"``.
    time_s : array
        Step time: ``roofline_s + comm_time_s + overhead_s`` [s]. For prefill, the TTFT.
    roofline_s : array
        Sum over operators of max(compute time, memory time) [s].
    lower_bound_s : array
        max(total compute time, total memory time) [s] (perfect overlap).
    compute_time_s, memory_time_s : array
        Totals of the two roofline terms over operators [s]. ``compute_time_s`` is NaN for a
        decode on hardware that publishes no peak for the compute format: the step is then
        timed by memory traffic alone, so ``time_s`` is a lower bound on the true time.
    comm_time_s : array
        Exposed communication: the step's collectives (:func:`tokenomics.physics.collectives.step_comm`)
        less what the deployment's hidden share (its ``comm_overlap`` and the efficiency's
        ``collective_overlap``) hides behind compute [s].
    collective_time_s : array
        The step's collectives in full, before any is hidden [s]: what the links take
        (at the bound every collective hides behind compute, so ``comm_time_s`` is 0 wherever
        this is below ``roofline_s``).
    overhead_s : array
        Fixed step and per-layer overhead from the efficiency model [s].
    flops_per_device, bytes_per_device : array
        Work of one device in the step [FLOP], [B].
    bound : array of str
        ``"compute"`` when compute-bound operators take most of the roofline time, else
        ``"memory"``.
    tokens_per_s_per_user : array
        Decode: new tokens per second of one sequence, ``1 / time_s`` [token/s].
        Prefill: prompt tokens per second of one sequence [token/s].
    tokens_per_s_per_device : array
        Tokens (generated in decode, prompt in prefill) per second per device [token/s].
    fits : array of bool
        Whether the point fits in memory.
    batch, context_tokens, new_tokens : array
        The inputs, broadcast.
    efficiency : str
        What produced the numbers: the deployment's
        :attr:`~tokenomics.data.specs.Efficiency.label` (``"roofline"``, ``"calibrated"``
        or ``"custom"``).
    """

    phase: str
    time_s: Any
    roofline_s: Any
    lower_bound_s: Any
    compute_time_s: Any
    memory_time_s: Any
    comm_time_s: Any
    overhead_s: Any
    flops_per_device: Any
    bytes_per_device: Any
    bound: Any
    tokens_per_s_per_user: Any
    tokens_per_s_per_device: Any
    fits: Any
    batch: Any
    context_tokens: Any
    new_tokens: Any
    efficiency: str = "roofline"
    collective_time_s: Any = 0.0

    @property
    def step_time_s(self) -> Any:
        """Alias of ``time_s`` (decode vocabulary)."""
        return self.time_s

    @property
    def ttft_s(self) -> Any:
        """Alias of ``time_s`` (prefill vocabulary: time to first token)."""
        return self.time_s

    def to_frame(self) -> pd.DataFrame:
        """Tidy DataFrame, one row per point, unit-suffixed columns.

        The step time is one column named by the phase: ``step_time_s`` (decode) or
        ``ttft_s`` (prefill, midfill), placed where ``time_s`` sits among the fields.
        """
        shape = np.shape(self.time_s)
        name = "step_time_s" if self.phase == "decode" else "ttft_s"
        cols: dict[str, Any] = {}
        for f in fields(self):
            v = getattr(self, f.name)
            cols[name if f.name == "time_s" else f.name] = (
                [v] * int(np.prod(shape)) if f.name in ("phase", "efficiency")
                else np.ravel(np.broadcast_to(v, shape)))
        return pd.DataFrame(cols)


@dataclass(frozen=True)
class OperatorTimes:
    """Roofline times of a step's operators on one device [s].

    Attributes
    ----------
    per_op : dict
        Operator name -> ``(compute_s, memory_s, time_s)``, each ``time_s`` the larger.
    compute_s, memory_s : array
        Totals of the two terms over operators [s].
    roofline_s : array
        Sum of the per-operator maxima [s].
    lower_bound_s : array
        ``max(compute_s, memory_s)`` (perfect overlap) [s].
    flops, bytes : array
        Work of one device [FLOP], [B].
    bound : array of str
        ``"compute"`` where compute-bound operators take most of ``roofline_s``.
    """

    per_op: dict[str, tuple[Any, Any, Any]]
    compute_s: Any
    memory_s: Any
    roofline_s: Any
    lower_bound_s: Any
    flops: Any
    bytes: Any
    bound: Any


def operator_times(dep: Deployment, costs: list[OpCost], shard: int | None = None, *,
                   memory_only_if_unpublished: bool = False) -> OperatorTimes:
    """Roofline time of each operator and their totals on one of ``shard`` devices.

    Parameters
    ----------
    dep : Deployment
        Its hardware, compute format and efficiencies set the peak and bandwidth.
    costs : list of OpCost
        Replica-wide operator costs (:func:`tokenomics.physics.operators.step_costs`).
    shard : int, optional
        Devices the costs are split over; default ``dep.tp``.
    memory_only_if_unpublished : bool
        Where the hardware publishes no peak for ``dep.compute_dtype``: False (default)
        raises :class:`~tokenomics.core.errors.NotPublishedError`; True (memory-bound
        decode) leaves each compute time NaN ("unknown") and times every operator by its
        memory traffic alone, :math:`Q_o / (n \\beta)`: a **lower bound** on the step time.

    Returns
    -------
    OperatorTimes
        :math:`\\max(F_o / (n P), Q_o / (n \\beta))` per operator, and the totals [s].
        Without a published peak (and ``memory_only_if_unpublished``): ``compute_s`` is NaN,
        ``roofline_s`` and ``lower_bound_s`` are the memory time, ``bound`` is ``"memory"``.
    """
    n = dep.tp if shard is None else shard
    eff = dep.efficiency
    if memory_only_if_unpublished and not dep.compute_peak_published:
        peak = attn_peak = np.nan   # compute time unknown: NaN, skipped by np.fmax below
    else:
        peak, attn_peak = effective_peaks(dep)
    bw = dep.hardware.mem_bw_bytes_per_s * eff.mbu
    per_op = {}
    total_c: Any = 0.0
    total_m: Any = 0.0
    roof: Any = 0.0
    t_compute_bound: Any = 0.0
    flops: Any = 0.0
    bytes_: Any = 0.0
    for op in costs:
        tc, tm = _op_seconds(dep, op, n, attn_peak if op.name == "attn_core" else peak, bw)
        t = operator_time(tc, tm, eff.overlap)
        per_op[op.name] = (tc, tm, t)
        total_c = total_c + tc
        total_m = total_m + tm
        roof = roof + t
        t_compute_bound = t_compute_bound + np.where(tc > tm, t, 0.0)
        flops = flops + op.flops / n
        bytes_ = bytes_ + op.bytes / n
    return OperatorTimes(per_op=per_op, compute_s=total_c, memory_s=total_m, roofline_s=roof,
                         lower_bound_s=np.fmax(total_c, total_m), flops=flops, bytes=bytes_,
                         bound=np.where(t_compute_bound > 0.5 * roof, "compute", "memory"))


def operator_time(tc: Any, tm: Any, overlap: Any) -> Any:
    """Time of one operator from its compute and memory terms [s].

    :math:`\\max(t_c, t_m) + (1 - v)\\min(t_c, t_m)` with :math:`v` the efficiency's
    ``overlap`` (1 at the roofline: the larger term alone). A NaN compute term (no published
    peak) leaves the memory term alone. Plain floats in, a float out (the scalar fast
    paths); arrays broadcast (``overlap`` may be an array over corpus rows).
    """
    if type(tc) is float and type(tm) is float and type(overlap) is float:
        hi, lo = (tc, tm) if tc > tm else (tm, tc)
        return hi + (1.0 - overlap) * lo if overlap < 1.0 else hi
    t = np.fmax(tc, tm)          # = max(tc, tm); tm alone where tc is NaN (no peak)
    if np.ndim(overlap) or overlap < 1.0:   # the unhidden part of the shorter term
        t = t + (1.0 - np.asarray(overlap, float)) * np.where(np.isnan(tc), 0.0,
                                                               np.minimum(tc, tm))
    return t


def exposed_comm(total: Any, roofline_s: Any, hidden_share: Any) -> Any:
    """Communication time a step cannot hide [s]: :math:`t_c - \\min(\\omega t_c,
    t_\\mathrm{roof})`, for the collectives' total :math:`t_c`, the roofline time and the hidden
    share :math:`\\omega` (:attr:`~tokenomics.Deployment.comm_hidden_share`). Floats or arrays."""
    if type(total) is float and type(roofline_s) is float and type(hidden_share) is float:
        return total - min(hidden_share * total, roofline_s) if hidden_share > 0.0 else total
    return total - np.minimum(np.asarray(hidden_share, float) * total, roofline_s)


def operator_terms(flops: Any, bytes_: Any, n: Any, peak: Any, bw: Any, scale: Any,
                   load: Any = 1.0, act_bytes: Any = 0.0) -> tuple[Any, Any]:
    """An operator's (compute, memory) terms on one of ``n`` devices [s].

    :math:`t_c = \\ell F / (n P s)`, :math:`t_m = (Q + (\\ell - 1) A) / (n \\beta)` for FLOPs
    :math:`F`, bytes :math:`Q`, the peak :math:`P` and bandwidth :math:`\\beta` already at the
    efficiency's MFU and MBU, the operator's fraction of MFU :math:`s`
    (:func:`compute_scale`), and for the routed experts the busiest rank's load
    :math:`\\ell` (:func:`expert_load_factor`) on their activation bytes :math:`A`. Every
    argument may be an array (the calibration passes one value per corpus row).
    """
    tc = flops / (n * peak * scale)
    tm = bytes_ / (n * bw)
    if np.ndim(load) or load != 1.0:
        tc = tc * load
        tm = tm + (load - 1.0) * act_bytes / (n * bw)
    return tc, tm


def _op_seconds(dep: Deployment, op: OpCost, n: int, peak: Any, bw: float) -> tuple[Any, Any]:
    """(compute, memory) time of one operator on one of ``n`` devices at ``peak`` FLOP/s and
    ``bw`` B/s, the efficiency's per-operator scales and the experts' load included [s]."""
    load = expert_load_factor(dep) if op.name == "moe_experts" else 1.0
    return operator_terms(op.flops, op.bytes, n, peak, bw, compute_scale(dep, op), load,
                          op.act_bytes)


def operator_seconds(dep: Deployment, op: OpCost) -> tuple[Any, Any]:
    """(compute, memory) time of one operator on one of the ``dep.tp`` devices [s], as
    :func:`operator_times` times each (for a plan's one curved operator, the routed
    experts); needs a published compute peak."""
    eff = dep.efficiency
    gemm, attn = effective_peaks(dep)
    peak = attn if op.name == "attn_core" else gemm
    return _op_seconds(dep, op, dep.tp, peak, dep.hardware.mem_bw_bytes_per_s * eff.mbu)


def effective_peaks(dep: Deployment) -> tuple[float, float]:
    """(matrix products', attention's) compute rate under the deployment's efficiency
    [FLOP/s]: the dense peak of the format (:meth:`~tokenomics.Deployment.compute_peak_flop_per_s`,
    :meth:`~tokenomics.Deployment.attention_peak_flop_per_s`) times
    :func:`achievable_factor` times ``mfu``; needs a published peak."""
    eff = dep.efficiency
    gemm = dep.compute_peak_flop_per_s("the step's compute time") * eff.mfu * \
        achievable_factor(dep.hardware.achievable_share(dep.compute_dtype), eff)
    attn = dep.attention_peak_flop_per_s() * eff.mfu * \
        achievable_factor(dep.hardware.achievable_share(dep.attention_dtype), eff)
    return gemm, attn


def achievable_factor(share: Any, p: Any) -> Any:
    """:math:`a^{k}` for a device's achievable share :math:`a` of its peak
    (:meth:`~tokenomics.data.specs.Hardware.achievable_share`) and the efficiency's
    ``achievable_peaks`` :math:`k` (0 at the bound: 1; ``p`` an efficiency or per-row
    arrays)."""
    k = p.achievable_peaks
    if not np.ndim(k) and k == 0.0:
        return 1.0
    return np.asarray(share, float) ** k


def compute_scale(dep: Deployment, op: OpCost) -> Any:
    r"""Fraction of ``mfu`` an operator's FLOPs run at under the deployment's efficiency.

    Parameters
    ----------
    dep : Deployment
        Its :class:`~tokenomics.data.specs.Efficiency` supplies ``attention_mfu_scale`` and
        ``expert_half_tokens``; its ``expert_dtype`` the routed experts' bytes per weight.
    op : OpCost

    Returns
    -------
    float or numpy.ndarray
        ``attention_mfu_scale`` for ``attn_core``; ``expert_mfu_scale`` times
        :func:`grouped_gemm_efficiency` at :math:`m` for ``moe_experts``, with
        :math:`m = F\,b / (2 Q_w)` the tokens per distinct expert the step touches (:math:`F`
        its FLOPs, :math:`Q_w` its weight bytes, :math:`b` bytes per expert weight); 1 for
        every other operator; each times ``fp4_mfu_scale`` where the operator computes at a
        4-bit floating-point format. At the roofline (default) every value is 1.

    Notes
    -----
    A grouped GEMM with few rows per expert runs its tiles mostly empty; the saturating form
    is the simplest with one parameter, the tokens at half efficiency.
    """
    tokens = None
    if op.name == "moe_experts":
        w = np.asarray(op.weight_bytes, float)
        tokens = np.where(w > 0, np.asarray(op.flops, float) * bytes_per_element(
            dep.expert_dtype) / (2.0 * np.where(w > 0, w, 1.0)), np.inf)
    return operator_scale(op.name, dep.efficiency, dtype(dep.compute_dtype).peak == "fp4",
                          dtype(dep.attention_dtype).peak == "fp4", tokens,
                          weight_only(dep, op.name))


#: The weights each operator reads: the routed experts', the embedding's, the others'.
_WEIGHTS_OF = {"moe_experts": "expert_dtype", "embedding": "embedding_dtype",
               "lm_head": "embedding_dtype"}


def weight_only(dep: Deployment, name: str) -> bool:
    """Whether an operator multiplies weights stored narrower than the format it computes
    at (weight-only quantisation, W4A16: MXFP4 experts on Hopper), so each tile is
    dequantised before the matrix product. Attention reads no weights: False."""
    if name == "attn_core":
        return False
    stored = getattr(dep, _WEIGHTS_OF.get(name, "weight_dtype"))
    return bytes_per_element(stored) < bytes_per_element(dep.compute_dtype)


def operator_scale(name: str, p: Any, gemm_fp4: Any, attention_fp4: Any,
                   tokens_per_expert: Any = None, weight_only: Any = False) -> Any:
    r"""Fraction of ``mfu`` an operator's FLOPs run at, from the efficiency's parameters.

    The law behind :func:`compute_scale`, on plain values: ``p`` is an
    :class:`~tokenomics.data.specs.Efficiency` or any object with its fields as attributes
    (the calibration passes one array per field, a value per corpus row), ``gemm_fp4`` and
    ``attention_fp4`` whether the matrix products and the attention compute at a 4-bit
    floating-point format, ``tokens_per_expert`` the routed experts' tokens per distinct
    expert :math:`m` (``inf`` where the step has none), ``weight_only`` whether the
    operator's weights are stored narrower than its compute format (:func:`weight_only`:
    its FLOPs then run at ``mixed_input_mfu_scale`` of the rest).

    Returns
    -------
    float or numpy.ndarray
        ``attention_mfu_scale`` (times ``fp4_mfu_scale`` at FP4) for ``attn_core``;
        ``expert_mfu_scale`` times :func:`grouped_gemm_efficiency` for ``moe_experts`` (times
        ``fp4_mfu_scale`` at FP4);
        ``fp4_mfu_scale`` at FP4, else 1, for every other operator.
    """
    fp4 = np.where(gemm_fp4, p.fp4_mfu_scale, 1.0) if np.ndim(gemm_fp4) else (
        p.fp4_mfu_scale if gemm_fp4 else 1.0)
    if name == "attn_core":
        a = np.where(attention_fp4, p.fp4_mfu_scale, 1.0) if np.ndim(attention_fp4) else (
            p.fp4_mfu_scale if attention_fp4 else 1.0)
        return p.attention_mfu_scale * a
    mixed = getattr(p, "mixed_input_mfu_scale", 1.0)
    if np.ndim(weight_only) or weight_only:
        fp4 = fp4 * (np.where(weight_only, mixed, 1.0) if np.ndim(weight_only) else mixed)
    if name != "moe_experts":
        return fp4
    fp4 = fp4 * getattr(p, "expert_mfu_scale", 1.0)
    if tokens_per_expert is not None:
        return fp4 * grouped_gemm_efficiency(tokens_per_expert, p)
    return fp4


def grouped_gemm_efficiency(tokens_per_expert: Any, p: Any) -> Any:
    r"""A grouped expert GEMM's fraction of MFU at :math:`m` tokens per distinct expert [-].

    :math:`m / (m + m_{1/2})` for the efficiency's ``expert_half_tokens`` :math:`m_{1/2}`
    (a fixed cost per expert), times :math:`m / (m^4 + T^4)^{1/4}` for its
    ``expert_tile_tokens`` :math:`T` (a tile of :math:`T` rows computed whole however few
    are filled); each factor is 1 where its parameter is 0, and 1 without experts
    (``m`` infinite). ``p`` is an efficiency or per-row arrays.
    """
    m = np.asarray(tokens_per_expert, float)
    finite = np.isfinite(m)
    m = np.where(finite, m, 1.0)
    out: Any = 1.0
    half, tile = p.expert_half_tokens, getattr(p, "expert_tile_tokens", 0.0)
    if np.ndim(half) or half > 0.0:
        out = out * m / (m + half)
    if np.ndim(tile) or tile > 0.0:
        out = out * m / (m ** 4 + np.asarray(tile, float) ** 4) ** 0.25
    return np.where(finite, out, 1.0)


def expert_load_factor(dep: Deployment) -> float:
    r"""The busiest expert-parallel rank's routed-expert load over the mean rank's [-].

    :math:`1 + \iota` with :math:`\iota` the efficiency's ``expert_imbalance`` when the
    experts are spread over ``ep > 1`` ranks, else 1 (one rank holds every expert, and the
    per-expert imbalance is already inside the grouped GEMM's efficiency). The routed
    experts' FLOPs and activation bytes are timed at this factor; the step waits for the
    slowest rank (DeepSeek-AI, "Expert Parallelism Load Balancer", github.com/deepseek-ai/EPLB,
    2025, describes the imbalance it corrects).
    """
    return load_factor(dep.efficiency, dep.ep > 1)


def load_factor(p: Any, expert_parallel: Any) -> Any:
    """:func:`expert_load_factor` on plain values: :math:`1 + \\iota` where
    ``expert_parallel``, else 1 (``p`` an efficiency or per-row arrays, as in
    :func:`operator_scale`)."""
    if np.ndim(expert_parallel) or np.ndim(p.expert_imbalance):
        return 1.0 + np.where(expert_parallel, p.expert_imbalance, 0.0)
    return 1.0 + p.expert_imbalance if expert_parallel else 1.0


def collectives_s(dep: Deployment, batch: Any, new_tokens: Any, logits_tokens: Any,
                  phase: str) -> Any:
    """The step's collectives in full (:func:`tokenomics.physics.collectives.step_comm` at
    ``batch`` sequences of ``new_tokens``), before any is hidden [s]."""
    costs = step_comm(dep, batch, new_tokens, logits_tokens, phase)
    return sum((c.time_s for c in costs), np.zeros(()))


def exposed_comm_s(dep: Deployment, roofline_s: Any, batch: Any, new_tokens: Any,
                   logits_tokens: Any, phase: str) -> Any:
    """Communication time a step cannot hide behind its compute [s].

    The step's collectives (:func:`tokenomics.physics.collectives.step_comm` at ``batch``
    sequences of ``new_tokens``) total :math:`t_c`; the deployment's hidden share
    :math:`\\omega` (:attr:`~tokenomics.Deployment.comm_hidden_share`) hides
    :math:`\\min(\\omega t_c, t_\\mathrm{roof})` of it (:func:`exposed_comm`).
    """
    costs = step_comm(dep, batch, new_tokens, logits_tokens, phase)
    total = sum((c.time_s for c in costs), np.zeros_like(np.asarray(roofline_s, float)))
    return exposed_comm(total, roofline_s, dep.comm_hidden_share)


def overhead_s(dep: Deployment, sampled_rows: Any = 0.0) -> Any:
    """Time per step outside the kernels from the efficiency model [s]: the step and
    per-layer overheads (:func:`fixed_overhead`) and the host's work for ``sampled_rows``
    sampled tokens (:func:`host_seconds`)."""
    fixed = fixed_overhead(dep.efficiency, dep.model.num_layers)
    if dep.efficiency.token_overhead_s == 0.0:
        return fixed
    return fixed + host_seconds(dep.efficiency, sampled_rows, dep.dp_attention)


def host_seconds(p: Any, sampled_rows: Any, dp_ranks: Any = 1) -> Any:
    """Host time of a step that samples ``sampled_rows`` tokens over ``dp_ranks``
    schedulers [s]: :math:`t_\\mathrm{tok} R / d` (``p`` an efficiency or per-row arrays)."""
    return p.token_overhead_s * np.asarray(sampled_rows, float) / dp_ranks


def fixed_overhead(p: Any, layers: Any) -> Any:
    """:func:`overhead_s` on plain values: :math:`t_\\mathrm{step} + L\\,t_\\mathrm{layer}` [s]
    (``p`` an efficiency or per-row arrays, ``layers`` :math:`L`)."""
    return p.step_overhead_s + p.layer_overhead_s * layers


def step_seconds(dep: Deployment, costs: list[OpCost], batch: Any, new_tokens: Any,
                 logits_tokens: Any, phase: str, sampled_rows: Any = None) -> np.ndarray:
    """Time of one step with the given operator costs, unvalidated [s].

    Roofline over ``dep.tp`` devices + exposed communication + overhead: the number every
    other stage's step time is made of. ``sampled_rows`` (default: ``batch x
    logits_tokens``, the rows whose logits the step computes) sets the host's share
    (:func:`overhead_s`).
    """
    t = operator_times(dep, costs)
    comm = exposed_comm_s(dep, t.roofline_s, batch, new_tokens, logits_tokens, phase)
    rows = (np.asarray(batch, float) * np.asarray(logits_tokens, float)
            if sampled_rows is None else sampled_rows)
    return np.asarray(t.roofline_s + comm + overhead_s(dep, rows), float)


def step_result(dep: Deployment, phase: str, times: OperatorTimes, comm_s: Any, *,
                point: tuple[Any, Any, Any], tokens_per_step: Any, fits: Any,
                sampled_rows: Any = 0.0) -> StepResult:
    """Assemble a :class:`StepResult` from operator times and the step's collectives.

    Parameters
    ----------
    comm_s : array_like
        The step's collectives in full [s] (:func:`collectives_s`); the exposed part is
        :func:`exposed_comm` of it at the deployment's hidden share.
    point : (batch, context_tokens, new_tokens)
        The inputs, reported back broadcast.
    tokens_per_step : array_like
        Tokens the replica produces (decode) or processes (prefill) in the step.
    fits : array_like of bool
    sampled_rows : array_like
        Tokens the step samples (its host work, :func:`overhead_s`).
    """
    B, C, T = point
    total = np.broadcast_to(np.asarray(comm_s, float), np.shape(times.roofline_s))
    comm = exposed_comm(total, times.roofline_s, dep.comm_hidden_share)
    overhead = overhead_s(dep, sampled_rows) + 0 * comm
    time_s = times.roofline_s + comm + overhead
    per_user = T / time_s
    per_dev = tokens_per_step / time_s / dep.n_devices
    shape = np.shape(time_s)
    S = V.scalar_or_array
    return StepResult(
        phase=phase, time_s=S(time_s), roofline_s=S(times.roofline_s),
        lower_bound_s=S(times.lower_bound_s), compute_time_s=S(times.compute_s),
        memory_time_s=S(times.memory_s), comm_time_s=S(comm), overhead_s=S(overhead),
        flops_per_device=S(times.flops), bytes_per_device=S(times.bytes),
        bound=times.bound.item() if np.ndim(times.bound) == 0 else times.bound,
        tokens_per_s_per_user=S(np.broadcast_to(per_user, shape)),
        tokens_per_s_per_device=S(np.broadcast_to(per_dev, shape)),
        fits=bool(fits) if np.ndim(fits) == 0 else np.broadcast_to(fits, shape),
        batch=S(np.broadcast_to(B, shape)), context_tokens=S(np.broadcast_to(C, shape)),
        new_tokens=S(np.broadcast_to(T, shape)), efficiency=dep.efficiency.label,
        collective_time_s=S(np.broadcast_to(total, shape)),
    )
