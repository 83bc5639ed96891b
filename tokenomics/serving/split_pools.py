"""Attention and FFN on two hardware pools: the attention pool holds the KV cache, the FFN (or
expert) pool the weights, and activations cross a link each layer.

Each pool's operators run at their roofline time on that pool's devices; the link carries
:math:`b h b_a` bytes each way per layer, a latency per crossing. With micro-batches the two
pools work on different micro-batches at once, so the step is the busiest of the three
(attention, FFN, link) rather than their sum (:func:`attention_ffn_split`).

References
----------
.. [1] R. Zhu et al., "MegaScale-Infer: Serving Mixture-of-Experts at Scale with Disaggregated
   Expert Parallelism", 2025, arXiv:2504.02263 (attention/FFN disaggregation, ping-pong
   micro-batches).
.. [2] StepFun, "Step-3 is Large yet Affordable: Model-system Co-design for Cost-effective
   Decoding", 2025, arXiv:2507.19427 (attention-FFN disaggregation).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from tokenomics.core import checks as V
from tokenomics.core.dtypes import bytes_per_element
from tokenomics.core.errors import DoesNotFitError, TokenomicsError
from tokenomics.core.units import Result
from tokenomics.data.boundary import inputs
from tokenomics.data.deployment import Deployment
from tokenomics.data.workload import Link, accepts_legacy_forms
from tokenomics.physics.memory import (
    kv_per_sequence_bytes,
    redundancy_factor,
    weight_bytes_per_device,
)
from tokenomics.physics.operators import step_costs
from tokenomics.physics.params import param_breakdown

# ---- Attention / FFN split across two hardware pools ---------------------------------------
_ATTENTION_OPS = ("embedding", "attn_qkv", "attn_core", "attn_out", "lm_head")
_FFN_OPS = ("ffn_dense", "moe_router", "moe_shared", "moe_experts")


@dataclass(frozen=True, repr=False)
class AttentionFFNSplit(Result):
    """Decode with attention (and the KV) on one pool and the FFN/experts on another.

    Times are per decode step [s]; utilisations are busy time over step time.

    Attributes
    ----------
    step_time_s : array
    attention_time_s, ffn_time_s, transfer_time_s : array
        Busy time of the attention pool, the FFN pool and the link, over the step.
    attention_utilisation, ffn_utilisation : array
    transfer_bytes : array
        Activation bytes crossing between the pools per step (both directions) [B].
    tokens_per_s_per_user : array
    tokens_per_s_per_device : array
        Output tokens per second per device of both pools together.
    attention_memory_bytes, ffn_memory_bytes : array
        Per device: attention weights + KV, and FFN/expert weights [B].
    """

    step_time_s: Any
    attention_time_s: Any
    ffn_time_s: Any
    transfer_time_s: Any
    attention_utilisation: Any
    ffn_utilisation: Any
    transfer_bytes: Any
    tokens_per_s_per_user: Any
    tokens_per_s_per_device: Any
    attention_memory_bytes: Any
    ffn_memory_bytes: Any


@dataclass(frozen=True)
class FFNPool:
    """The pool that holds the FFN and expert weights in an attention/FFN split.

    Attributes
    ----------
    hardware : Hardware or str
        Its device (a catalog id is looked up), e.g. a low-ridge SRAM chip.
    devices : int
        Devices in the pool, >= 1; the FFN and expert weights are spread evenly over them.
    compute_dtype : str, optional
        Format the pool computes in; default the attention deployment's.

    Examples
    --------
    >>> FFNPool("h100-sxm", 8).hardware.id
    'h100-sxm'
    """

    hardware: Any
    devices: int
    compute_dtype: str | None = None

    def __post_init__(self) -> None:
        from tokenomics.data.catalog import hardware as _hw

        object.__setattr__(self, "hardware", _hw(self.hardware))
        object.__setattr__(self, "devices", V.single_whole(self.devices, "ffn_devices"))
        if self.compute_dtype is not None:
            from tokenomics.core.dtypes import dtype

            dtype(self.compute_dtype)          # a format name, or its error


def _split_busy(attention: Deployment, ffn: FFNPool, link: Link, b: Any,
                C: Any) -> tuple[Any, Any, Any]:
    """Busy time of the attention pool, the FFN pool and the link in a decode at batch b [s].

    Each pool's operators at their roofline time on that pool's devices; the link carries
    :math:`b h b_a` bytes each way per layer, a latency per crossing.
    """
    m = attention.model
    eff = attention.efficiency
    n_a, n_f = attention.tp, ffn.devices
    peak_a = attention.hardware.peak(attention.compute_dtype) * eff.mfu
    bw_a = attention.hardware.mem_bw_bytes_per_s * eff.mbu
    peak_f = ffn.hardware.peak(ffn.compute_dtype or attention.compute_dtype) * eff.mfu
    bw_f = ffn.hardware.mem_bw_bytes_per_s * eff.mbu
    act = bytes_per_element(attention.act_dtype)
    ops = {o.name: o for o in step_costs(attention, b, 1.0, C, 1.0)}
    ta = sum(np.maximum(ops[k].flops / (n_a * peak_a), ops[k].bytes / (n_a * bw_a))
             for k in _ATTENTION_OPS)
    tf = sum(np.maximum(ops[k].flops / (n_f * peak_f), ops[k].bytes / (n_f * bw_f))
             for k in _FFN_OPS)
    per_layer = b * m.hidden_size * act
    tx = 2 * m.num_layers * (link.latency_s + per_layer / link.bytes_per_s)
    return ta, tf, tx


def _split_memory(attention: Deployment, ffn: FFNPool, B: Any, C: Any,
                  check_memory: bool) -> tuple[Any, float]:
    """Per-device memory of the two pools [B]: attention weights + KV, FFN/expert weights.

    Raises :class:`~tokenomics.core.errors.DoesNotFitError` (when ``check_memory``) naming
    the pool that does not fit.
    """
    b = param_breakdown(attention.model)
    w = bytes_per_element(attention.weight_dtype)
    ffn_part = ((b["dense_ffn"] + b["router"] + b["shared_experts"]
                 + b["latent_projections"]) * w
                + b["routed_experts"] * redundancy_factor(attention)
                * bytes_per_element(attention.expert_dtype))
    ffn_w = ffn_part / ffn.devices
    attn_w = weight_bytes_per_device(attention) - ffn_part / attention.n_devices
    mem_a = attn_w + B * kv_per_sequence_bytes(attention, C)
    if not V.flag(check_memory, "check_memory"):
        return mem_a, ffn_w
    usable_a = attention.hardware.mem_usable_bytes * attention.usable_memory_fraction
    usable_f = ffn.hardware.mem_usable_bytes * attention.usable_memory_fraction
    if np.any(mem_a > usable_a):
        raise DoesNotFitError(
            f"attention pool: {float(np.max(mem_a)) / 1e9:.4g} GB per device of attention "
            f"weights and KV exceed {usable_a / 1e9:.4g} GB usable on "
            f"{attention.hardware.id}; lower the batch or context or add devices")
    if ffn_w > usable_f:
        need = int(np.ceil(ffn_w * ffn.devices / usable_f))
        raise DoesNotFitError(
            f"FFN pool: {ffn_w / 1e9:.4g} GB of FFN weights per {ffn.hardware.id} exceed "
            f"{usable_f / 1e9:.4g} GB usable; at least {need} devices are needed")
    return mem_a, ffn_w


def _split_01(a: dict[str, Any]) -> dict[str, Any]:
    """The new arguments of a 0.1 call: the FFN pool's and the link's loose arguments as an
    :class:`FFNPool` and a :class:`~tokenomics.data.workload.Link`."""
    ffn = FFNPool(a.pop("ffn_hardware"), a.pop("ffn_devices"), a.pop("ffn_compute_dtype"))
    link = Link(float(V.positive(a.pop("link_bytes_per_s"), "link_bytes_per_s", "B/s")),
                float(V.non_negative(a.pop("link_latency_s"), "link_latency_s", "s")))
    return dict(a, ffn=ffn, link=link)


@accepts_legacy_forms(("attention", "ffn_hardware", "ffn_devices", "batch", "context_tokens",
                       "link_bytes_per_s", "link_latency_s", "ffn_compute_dtype",
                       "microbatches", "check_memory"),
                      dict(link_latency_s=0.0, ffn_compute_dtype=None, microbatches=2,
                           check_memory=True),
                      _split_01, "ffn", FFNPool)
@inputs(attention="deployment")
def attention_ffn_split(attention: Deployment, ffn: FFNPool, batch: Any, context_tokens: Any,
                        link: Link, microbatches: int = 2,
                        check_memory: bool = True) -> AttentionFFNSplit:
    """Decode step with attention on one pool and the FFN/experts on another.

    Release 0.1's form ``attention_ffn_split(attention, ffn_hardware, ffn_devices, batch,
    context_tokens, link_bytes_per_s, link_latency_s=0.0, ffn_compute_dtype=None,
    microbatches=2, check_memory=True)`` still works: its loose arguments are an
    :class:`FFNPool` and a :class:`~tokenomics.data.workload.Link`.

    Parameters
    ----------
    attention : Deployment
        The attention pool: its hardware, ``tp`` devices, formats and efficiencies. It holds
        the attention weights, embedding, LM head and every sequence's KV.
    ffn : FFNPool
        The FFN pool: its device, device count and compute format.
    batch, context_tokens : int or array_like
        Decode batch and KV length [token].
    link : Link
        Between the pools: aggregate per-direction bandwidth [B/s] and the latency of one
        crossing [s].
    microbatches : int
        Micro-batches ping-ponging between the pools (>= 1). With 1 the pools take turns
        (step = attention + FFN + transfers); with :math:`m \\ge 2` they overlap and the step
        is the busiest of the three, each pool re-reading its weights for every micro-batch.
    check_memory : bool
        Raise :class:`~tokenomics.core.errors.DoesNotFitError` when a pool's share does not fit.

    Returns
    -------
    AttentionFFNSplit

    Notes
    -----
    Only activations cross: per layer :math:`N h b_a` bytes each way for :math:`N` tokens, so
    :math:`2 L N h b_a` per step, against the KV that stays with attention. With
    :math:`T_a(B), T_f(B), T_x(B)` the busy times at batch :math:`B`:

    .. math:: t = \\begin{cases} T_a + T_f + T_x & m = 1 \\\\
              \\max(m T_a(B/m),\\; m T_f(B/m),\\; m T_x(B/m)) & m \\ge 2 \\end{cases}

    References
    ----------
    .. [1] R. Zhu et al., "MegaScale-Infer: Serving Mixture-of-Experts at Scale with
       Disaggregated Expert Parallelism", arXiv:2504.02263, 2025 (ping-pong micro-batches).
    .. [2] StepFun, "Step-3 is Large yet Affordable: Model-system Co-design for Cost-effective
       Decoding", arXiv:2507.19427, 2025 (attention-FFN disaggregation).
    .. [3] Seed digest S52 (attention on GPUs with the KV, FFN on a low-ridge SRAM chip).

    Examples
    --------
    >>> import tokenomics as tk
    >>> gpu = tk.Deployment("llama-3.1-70b", "h100-sxm", tp=8, weight_dtype="fp8",
    ...                     compute_dtype="fp8", kv_dtype="fp8")
    >>> r = attention_ffn_split(gpu, FFNPool("h100-sxm", 8), 64, 8192, Link(400e9))
    >>> bool(r.transfer_bytes < 1e9)    # activations only: ~0.17 GB against ~11 GB of KV
    True
    """
    if not isinstance(link, Link):
        raise TokenomicsError(f"link must be a tokenomics Link (bandwidth per direction [B/s], "
                              f"latency [s]), got {type(link).__name__}")
    if not isinstance(ffn, FFNPool):
        raise TokenomicsError(f"ffn must be an FFNPool(hardware, devices), got "
                              f"{type(ffn).__name__}")
    if isinstance(microbatches, bool) or not isinstance(microbatches, (int, np.integer)):
        raise TokenomicsError(f"microbatches must be a whole number, got {microbatches!r}")
    if microbatches < 1:
        raise TokenomicsError(f"microbatches must be >= 1, got {microbatches!r}")
    if attention.pp != 1:
        raise TokenomicsError("the attention pool is one stage: use pp=1")
    B = V.counts(batch, "batch")
    C = V.counts(context_tokens, "context_tokens", unit="token")
    V.context_within(attention.model, C, attention.allow_beyond_max_context)
    m = attention.model
    if microbatches == 1:
        busy_a, busy_f, tx = _split_busy(attention, ffn, link, B, C)
        step = busy_a + busy_f + tx
    else:
        ta_m, tf_m, tx_m = _split_busy(attention, ffn, link, B / microbatches, C)
        busy_a, busy_f, tx = (microbatches * ta_m, microbatches * tf_m, microbatches * tx_m)
        step = np.maximum(np.maximum(busy_a, busy_f), tx)
    mem_a, ffn_w = _split_memory(attention, ffn, B, C, check_memory)
    act = bytes_per_element(attention.act_dtype)
    S = V.scalar_or_array
    return AttentionFFNSplit(
        step_time_s=S(step), attention_time_s=S(busy_a), ffn_time_s=S(busy_f),
        transfer_time_s=S(tx), attention_utilisation=S(busy_a / step),
        ffn_utilisation=S(busy_f / step),
        transfer_bytes=S(2 * m.num_layers * B * m.hidden_size * act),
        tokens_per_s_per_user=S(1.0 / step),
        tokens_per_s_per_device=S(B / step / (attention.tp + ffn.devices)),
        attention_memory_bytes=S(mem_a), ffn_memory_bytes=float(ffn_w))
