"""Weight bytes, the per-device memory budget, maximum batch and minimum device count.

Notes
-----
Per device, for a replica of :math:`n = tp \\cdot pp` devices:

.. math::
   M = \\frac{W + r\\,K(B, C) + A}{n} + R \\le f \\cdot \\mathrm{capacity}

with :math:`W` the weight bytes, :math:`K` the KV bytes of :math:`B` sequences of
:math:`C` tokens (windows honoured), :math:`r` the KV replication under tensor parallelism
(:attr:`tokenomics.Deployment.kv_replication`), :math:`A` the activation workspace,
:math:`R` the runtime reserve and :math:`f` the usable fraction. Every term is reported.

References
----------
.. [1] W. Kwon et al., "Efficient Memory Management for Large Language Model Serving with
   PagedAttention", SOSP 2023 (vLLM; ``gpu_memory_utilization`` default 0.9).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
import pandas as pd

from tokenomics.core import checks as V
from tokenomics.core.dtypes import bytes_per_element
from tokenomics.core.dtypes import dtype as _dtype
from tokenomics.core.errors import DoesNotFitError, TokenomicsError
from tokenomics.core.units import ReadableRepr
from tokenomics.data import catalog
from tokenomics.data.boundary import inputs
from tokenomics.data.deployment import Deployment
from tokenomics.data.specs import Hardware, Model
from tokenomics.data.workload import accepts_legacy_forms
from tokenomics.physics.kv import (
    group_kv_bytes,
    linear_state_bytes_per_sequence,
)
from tokenomics.physics.params import param_breakdown


@inputs(model="model")
def weight_bytes(model: Model, dtype: str | None = None,  # noqa: A002 - public name
                 expert_dtype: str | None = None, embedding_dtype: str | None = None) -> float:
    """Bytes of the model's weights [B].

    Parameters
    ----------
    model : Model
    dtype : str, optional
        Format of the weights other than the embedding and LM head; default the model's
        released format.
    expert_dtype : str, optional
        Format of routed-expert weights; default the model's (gpt-oss: MXFP4) when ``dtype``
        is not given, else ``dtype``.
    embedding_dtype : str, optional
        Format of the token embedding and LM head; default their released format
        (``model.embedding_dtype``, else ``model.weight_dtype``) whatever ``dtype`` is, as
        weight quantization leaves them unconverted (see :class:`~tokenomics.Deployment`).

    Returns
    -------
    float
        :math:`\\sum_c N_c b_c` over components [B] (block scales included).

    References
    ----------
    .. [1] Open Compute Project, "OCP Microscaling Formats (MX) v1.0", 2023 (block-scale bits).

    Examples
    --------
    >>> from tokenomics.data.catalog import model
    >>> round(weight_bytes(model("llama-3.1-70b"), "bf16") / 1e9, 1)   # S12: ~141 GB
    141.1
    >>> round(weight_bytes(model("llama-3.1-70b"), "fp8") / 1e9, 1)    # embedding, head BF16
    72.7
    """
    wd = _dtype(dtype).name if dtype is not None else model.weight_dtype
    if expert_dtype is None:
        expert_dtype = model.expert_dtype if (dtype is None and model.expert_dtype) else wd
    if embedding_dtype is None:
        embedding_dtype = model.embedding_dtype or model.weight_dtype
    b = param_breakdown(model)
    routed = b.pop("routed_experts")
    table = b.pop("embedding") + b.pop("lm_head") + b.pop("per_layer_embedding")
    return float(sum(b.values()) * bytes_per_element(wd) + routed * bytes_per_element(expert_dtype)
                 + table * bytes_per_element(embedding_dtype))


@inputs(dep="deployment")
def weight_bytes_per_device(dep: Deployment) -> float:
    r"""Weight bytes one device of the replica holds [B].

    Parameters
    ----------
    dep : Deployment
        The replica: its model, formats, ``tp``, ``pp`` and ``dp_attention``.

    Returns
    -------
    float
        :math:`W_\mathrm{dev}` below [B].

    Notes
    -----
    Everything is split evenly over the ``tp * pp`` devices, except that attention data
    parallelism (``dp_attention``) keeps one copy of the attention projections, norms,
    embedding and LM head per attention group (the embedding and LM head at
    ``dep.embedding_dtype``, routed experts at ``dep.expert_dtype``, the rest at
    ``dep.weight_dtype``), and of the dense FFN, shared experts and router too with
    ``mlp_data_parallel`` (:math:`c` = :attr:`~tokenomics.Deployment.mlp_copies`):

    .. math:: W_\mathrm{dev} = \frac{d_{attn} W_{attn} + c\,W_{mlp} + W_{routed}}{tp \cdot pp}

    with the routed experts in :math:`W_{rest}` counted :math:`(E + r)/E` times when the
    deployment holds ``redundant_experts`` :math:`r`.

    Examples
    --------
    >>> import tokenomics as tk
    >>> d = tk.Deployment("llama-3.1-70b", "h100-sxm", tp=4)
    >>> round(weight_bytes_per_device(d) / 1e9, 2)    # 141.1 GB / 4
    35.28
    """
    m = dep.model
    b = param_breakdown(m)
    w = bytes_per_element(dep.weight_dtype)
    attn_like = ((b["attention"] + b["norms"] + b["per_layer_projection"]) * w
                 + (b["embedding"] + b["lm_head"] + b["per_layer_embedding"])
                 * bytes_per_element(dep.embedding_dtype))
    mlp = (b["dense_ffn"] + b["router"] + b["shared_experts"] + b["latent_projections"]) * w
    routed = b["routed_experts"] * redundancy_factor(dep) * bytes_per_element(dep.expert_dtype)
    return float((attn_like * dep.dp_attention + mlp * dep.mlp_copies + routed)
                 / dep.n_devices)


def redundancy_factor(dep: Deployment) -> float:
    """Routed-expert weights held relative to one copy of each: :math:`(E + r) / E` [-].

    1 without redundant experts or experts. DeepSeek-V3 on EP144 with 32 redundant experts:
    288 / 256 = 1.125.
    """
    m = dep.model.moe
    return 1.0 if m is None else dep.physical_experts / m.num_experts


def activation_workspace_bytes_per_token(dep: Deployment) -> float:
    """Estimated peak live activation bytes per token in a step, per device [B/token].

    Notes
    -----
    An estimate, not a measurement: the residual stream and a few hidden-size buffers
    (:math:`4h`) plus the widest intermediate of the step (QKV output, the gated FFN's
    :math:`2I`, or :math:`2 k I_e` for routed experts) split over ``tp``, at the activation
    format. Logits are per sequence, not per token: see
    :func:`logits_workspace_bytes_per_sequence`. Pass ``workspace_bytes`` to a
    :class:`~tokenomics.Deployment` to use a measured figure instead.
    """
    m = dep.model
    act = bytes_per_element(dep.act_dtype)
    widest = max(*(a.num_q_heads * a.head_dim + 2 * a.num_kv_heads * a.head_dim
                   for a, _ in m.attention_shapes()),
                 2 * max(w for w, _ in m.dense_ffn_widths()),
                 2 * m.moe.top_k * m.moe.expert_intermediate_size if m.moe else 0)
    return float((4 * m.hidden_size + widest / dep.tp) * act)


def logits_workspace_bytes_per_sequence(dep: Deployment) -> float:
    """FP32 logits of one sequence's sampled token, per device: :math:`4 V / tp` [B].

    A step computes logits for one token per sequence (the last prompt token in prefill, the
    new token in decode), so this term scales with the batch, not with the prompt length.
    """
    return 4.0 * dep.model.vocab_size / dep.tp


@dataclass(frozen=True, repr=False)
class MemoryFit(ReadableRepr):
    """Memory budget of one device. All byte fields are per device [B].

    Attributes
    ----------
    weights_bytes, kv_bytes, workspace_bytes, runtime_reserve_bytes : array
        The terms.
    total_bytes : array
        Their sum.
    capacity_bytes : float
        Device memory.
    usable_bytes : float
        ``capacity_bytes * usable_memory_fraction``.
    free_bytes : array
        ``usable_bytes - total_bytes`` (negative when it does not fit).
    fits : array of bool
    batch, context_tokens : array or None
        The point each value is at (sequences, tokens); None when built by hand.
    """

    weights_bytes: Any
    kv_bytes: Any
    workspace_bytes: Any
    runtime_reserve_bytes: float
    total_bytes: Any
    capacity_bytes: float
    usable_bytes: float
    free_bytes: Any
    fits: Any
    batch: Any = None
    context_tokens: Any = None

    def to_frame(self) -> pd.DataFrame:
        """One row per point: the inputs (``batch``, ``context_tokens``) first, then the
        byte terms [B] and ``fits``."""
        shape = np.shape(self.total_bytes)
        names = [f.name for f in fields(self) if f.name not in ("batch", "context_tokens")]
        inputs = [n for n in ("batch", "context_tokens") if getattr(self, n) is not None]
        cols = {n: np.ravel(np.broadcast_to(getattr(self, n), shape)) for n in inputs + names}
        for n in inputs:    # whole sequences and tokens as integers
            if np.all(np.mod(cols[n], 1) == 0):
                cols[n] = cols[n].astype(np.int64)
        return pd.DataFrame(cols)


@inputs(dep="deployment")
def memory_fit(dep: Deployment, batch: Any, context_tokens: Any,
               tokens_per_step: Any | None = None) -> MemoryFit:
    """Per-device memory budget for ``batch`` sequences of ``context_tokens`` each.

    Parameters
    ----------
    dep : Deployment
    batch : int or array_like
        Concurrent sequences on the replica, >= 1.
    context_tokens : int or array_like
        Tokens per sequence held in the KV cache [token].
    tokens_per_step : int or array_like, optional
        Tokens in the largest step, for the workspace estimate; default ``batch`` (decode).

    Returns
    -------
    MemoryFit

    References
    ----------
    .. [1] W. Kwon et al., "Efficient Memory Management for Large Language Model Serving with
           PagedAttention", SOSP 2023, arXiv:2309.06180.

    Examples
    --------
    >>> import tokenomics as tk
    >>> d = tk.Deployment("llama-3.1-70b", "h200", weight_dtype="fp8", kv_dtype="fp8",
    ...                   usable_memory_fraction=1.0, workspace_bytes=0)
    >>> bool(memory_fit(d, 32, 8192).fits)
    True
    """
    b = V.counts(batch, "batch")
    c = V.counts(context_tokens, "context_tokens", minimum=0, unit="token")
    V.context_within(dep.model, c, dep.allow_beyond_max_context)
    w = weight_bytes_per_device(dep)
    kv = kv_per_sequence_bytes(dep, c) * b
    if dep.workspace_bytes is not None:
        ws = np.full(np.broadcast(b, c).shape, float(dep.workspace_bytes))
    else:
        tps = b if tokens_per_step is None else V.counts(tokens_per_step, "tokens_per_step")
        ws = (tps * activation_workspace_bytes_per_token(dep)
              + b * logits_workspace_bytes_per_sequence(dep)) / dep.pp + 0 * c
    total = w + kv + ws + dep.runtime_reserve_bytes
    cap = dep.hardware.mem_usable_bytes
    usable = cap * dep.usable_memory_fraction
    free = usable - total
    return MemoryFit(
        weights_bytes=V.scalar_or_array(np.full(np.shape(total), w)),
        kv_bytes=V.scalar_or_array(kv), workspace_bytes=V.scalar_or_array(ws),
        runtime_reserve_bytes=float(dep.runtime_reserve_bytes),
        total_bytes=V.scalar_or_array(total), capacity_bytes=cap, usable_bytes=usable,
        free_bytes=V.scalar_or_array(free), fits=V.scalar_or_array(free >= 0)
        if np.ndim(free) else bool(free >= 0),
        batch=V.scalar_or_array(b + 0 * c), context_tokens=V.scalar_or_array(c + 0 * b),
    )


def replicated_kv_bytes(dep: Deployment, context_tokens: Any, kv_dtype: str) -> Any:
    """KV bytes one sequence holds over all the replica's devices, every copy counted [B].

    :math:`\\sum_g n_g s_g r_g \\min(C, W_g) + S r`: each layer shape's KV at its own
    replication :math:`r_g` (:meth:`~tokenomics.Deployment.kv_replication_of`) plus linear
    layers' fixed state :math:`S` (at BF16, as :func:`~tokenomics.physics.kv.kv_cache_bytes`
    keeps it) at the attention's; ``kv_cache_bytes(model, C) * kv_replication`` where every
    layer replicates alike. Arguments already checked (an engine form)."""
    m = dep.model
    return (group_kv_bytes(m, context_tokens, kv_dtype, dep.kv_replication_of)
            + linear_state_bytes_per_sequence(m) * dep.kv_replication_of(m.attention))


def kv_per_sequence_bytes(dep: Deployment, context_tokens: Any) -> Any:
    """KV bytes one sequence occupies on one device of the replica [B].

    ``kv_cache_bytes(model, C) * kv_replication / n_devices``: the per-token KV of the
    softmax-attention layers plus, once per sequence, the fixed state of any linear-attention
    layers (:func:`tokenomics.physics.kv.linear_state_bytes_per_sequence`, at the activation
    format), split and replicated as the KV is.
    """
    c = np.asarray(context_tokens, float)
    held = group_kv_bytes(dep.model, c, dep.kv_dtype, dep.kv_replication_of)
    state = linear_state_bytes_per_sequence(dep.model, dep.act_dtype)
    return (held + state * dep.kv_replication_of(dep.model.attention)) / dep.n_devices


@inputs(dep="deployment")
def max_batch(dep: Deployment, context_tokens: Any) -> Any:
    """Largest number of sequences of ``context_tokens`` that fit the replica's memory.

    Parameters
    ----------
    dep : Deployment
    context_tokens : int or array_like
        Tokens per sequence [token], >= 1.

    Returns
    -------
    int or numpy.ndarray of int
        >= 0; 0 when not even one sequence fits beside the weights (never negative).

    Notes
    -----
    Solves the budget of :func:`memory_fit` for B with the workspace linear in the decode
    batch: :math:`B = \\lfloor (f\\,\\mathrm{cap} - W/n - R - A_0) / (k_{seq} + a_{tok})
    \\rfloor`.

    References
    ----------
    .. [1] W. Kwon et al., PagedAttention, SOSP 2023, arXiv:2309.06180.

    Examples
    --------
    >>> import tokenomics as tk
    >>> d = tk.Deployment("llama-3.1-70b", "h100-sxm", tp=2, usable_memory_fraction=1.0,
    ...                   workspace_bytes=0)
    >>> int(max_batch(d, 131072))  # (160e9 - 141.1e9) / 42.95e9
    0
    """
    c = V.counts(context_tokens, "context_tokens", unit="token")
    V.context_within(dep.model, c, dep.allow_beyond_max_context)
    room, per_seq = batch_budget(dep, c)
    b = np.floor(np.maximum(room, 0.0) / per_seq)
    b = b.astype(np.int64)
    return int(b) if np.ndim(b) == 0 else b


def batch_budget(dep: Deployment, context_tokens: Any) -> tuple[Any, Any]:
    r"""(room [B], bytes per sequence [B]) of :func:`max_batch`'s budget, unvalidated.

    Room: :math:`f\,\mathrm{cap} - W/n - R` (less a fixed ``workspace_bytes`` when one is
    given); per sequence: its KV at ``context_tokens`` plus, without a fixed workspace, the
    activation and logits workspace of its token, divided by ``pp``.
    """
    room = (dep.hardware.mem_usable_bytes * dep.usable_memory_fraction
            - weight_bytes_per_device(dep) - dep.runtime_reserve_bytes)
    if dep.workspace_bytes is not None:
        return room - dep.workspace_bytes, kv_per_sequence_bytes(dep, context_tokens)
    return room, kv_per_sequence_bytes(dep, context_tokens) + (
        activation_workspace_bytes_per_token(dep)
        + logits_workspace_bytes_per_sequence(dep)) / dep.pp


# --------------------------------------------------------------------------------------------
# Release 0.1 call forms
# --------------------------------------------------------------------------------------------


# --------------------------------------------------------------------------------------------
# Pooled device counts
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class MemoryBudget:
    """What a pooled device count needs besides batch and context: formats and budget.

    The release 0.1 arguments of :func:`devices_needed` and :func:`min_devices` as one object,
    with their defaults (no workspace, no reserve, 90% usable).

    Attributes
    ----------
    model : Model or str
        A catalog id is looked up.
    hardware : Hardware or str
    weight_dtype : str, optional
        Format of the weights other than the embedding and LM head; default the model's
        released format (:func:`weight_bytes`' ``dtype``).
    kv_dtype : str
        KV-cache format; default ``"bf16"``.
    usable_memory_fraction : float
        Share of each device's memory available, (0, 1]; default 0.9.
    runtime_reserve_bytes, workspace_bytes : float or array_like
        Per device [B], >= 0; default 0.
    allow_beyond_max_context : bool
    expert_dtype, embedding_dtype : str, optional
        Formats of routed experts and of the embedding and LM head, as :func:`weight_bytes`
        takes them (default: its defaults).

    Examples
    --------
    >>> import tokenomics as tk
    >>> b = MemoryBudget(tk.model("llama-3.1-70b"), tk.hardware("h100-sxm"), "fp8")
    >>> round(b.weights_bytes / 1e9, 1), round(b.per_device_bytes / 1e9, 2)  # 81,559 MiB x 0.9
    (72.7, 76.97)
    """

    model: Any
    hardware: Any
    weight_dtype: str | None = None
    kv_dtype: str = "bf16"
    usable_memory_fraction: float = 0.9
    runtime_reserve_bytes: Any = 0.0
    workspace_bytes: Any = 0.0
    allow_beyond_max_context: bool = False
    expert_dtype: str | None = None
    embedding_dtype: str | None = None

    def __post_init__(self) -> None:
        if isinstance(self.model, str):
            object.__setattr__(self, "model", catalog.model(self.model))
        if isinstance(self.hardware, str):
            object.__setattr__(self, "hardware", catalog.hardware(self.hardware))
        if not isinstance(self.model, Model) or not isinstance(self.hardware, Hardware):
            raise TokenomicsError(
                "MemoryBudget needs a Model and a Hardware (or their catalog ids), got "
                f"{type(self.model).__name__} and {type(self.hardware).__name__}")
        f = self.usable_memory_fraction
        if isinstance(f, bool) or not isinstance(f, (int, float, np.integer, np.floating)) \
                or not (0 < f <= 1):
            raise TokenomicsError(f"usable_memory_fraction must be a number in (0, 1], got {f!r}")
        for name in ("runtime_reserve_bytes", "workspace_bytes"):
            V.non_negative(getattr(self, name), name, "B")   # finite, >= 0, not a bool
        for name in ("weight_dtype", "kv_dtype", "expert_dtype", "embedding_dtype"):
            if getattr(self, name) is not None:
                _dtype(getattr(self, name))                  # a format name, or its error
        V.flag(self.allow_beyond_max_context, "allow_beyond_max_context")

    @classmethod
    def of(cls, dep: Deployment, batch: Any = 1) -> MemoryBudget:
        """A deployment's formats and memory budget, its workspace at a decode of ``batch``.

        The workspace is ``dep.workspace_bytes`` when given, else the estimate
        :func:`memory_fit` uses for a decode step of ``batch`` sequences at the deployment's
        ``tp`` and ``pp``: :math:`B (a_{tok} + a_{seq}) / pp` [B].
        """
        if dep.workspace_bytes is not None:
            ws: Any = float(dep.workspace_bytes)
        else:
            b = V.counts(batch, "batch")
            ws = V.scalar_or_array((b * activation_workspace_bytes_per_token(dep)
                                    + b * logits_workspace_bytes_per_sequence(dep)) / dep.pp)
        return cls(dep.model, dep.hardware, dep.weight_dtype, dep.kv_dtype,
                   dep.usable_memory_fraction, dep.runtime_reserve_bytes, ws,
                   dep.allow_beyond_max_context, dep.expert_dtype, dep.embedding_dtype)

    @property
    def weights_bytes(self) -> float:
        """The whole model's weight bytes at these formats, :func:`weight_bytes` [B]."""
        wd = _dtype(self.weight_dtype).name if self.weight_dtype else None
        return weight_bytes(self.model, wd, self.expert_dtype, self.embedding_dtype)

    @property
    def per_device_bytes(self) -> Any:
        """Memory of one device left for weights and KV: :math:`f\\,cap - R - A` [B]."""
        return self.hardware.mem_usable_bytes * self.usable_memory_fraction \
            - self.runtime_reserve_bytes - self.workspace_bytes


_DEVICE_COUNT_01 = ("model", "hardware", "batch", "context_tokens", "weight_dtype", "kv_dtype",
                    "usable_memory_fraction", "runtime_reserve_bytes", "workspace_bytes")
_DEVICE_COUNT_DEFAULTS = dict(weight_dtype=None, kv_dtype="bf16", usable_memory_fraction=0.9,
                              runtime_reserve_bytes=0.0, workspace_bytes=0.0,
                              allow_beyond_max_context=False)


def _budget_01(a: dict[str, Any]) -> dict[str, Any]:
    """The new arguments of a 0.1 device-count call: its loose arguments as a MemoryBudget."""
    budget = MemoryBudget(*(a.pop(k) for k in ("model", "hardware", "weight_dtype", "kv_dtype",
                                               "usable_memory_fraction",
                                               "runtime_reserve_bytes", "workspace_bytes",
                                               "allow_beyond_max_context")))
    return dict(deployment=budget, **a)


@accepts_legacy_forms(_DEVICE_COUNT_01 + ("allow_beyond_max_context",),
                      _DEVICE_COUNT_DEFAULTS, _budget_01, "deployment",
                      (Deployment, MemoryBudget))
@inputs(deployment="deployment_like")
def devices_needed(deployment: Deployment | MemoryBudget, batch: Any,
                   context_tokens: Any) -> Any:
    """Fractional number of devices whose pooled memory holds weights and KV.

    Two call forms give the formats and the budget: a Deployment, or release 0.1's loose
    arguments ``devices_needed(model, hardware, batch, context_tokens, weight_dtype=None,
    kv_dtype="bf16", usable_memory_fraction=0.9, runtime_reserve_bytes=0.0,
    workspace_bytes=0.0, allow_beyond_max_context=False)`` (a :class:`MemoryBudget`).

    Parameters
    ----------
    deployment : Deployment or MemoryBudget
        A Deployment gives its weight, expert, embedding and KV formats, usable fraction,
        runtime reserve, context check and workspace (``MemoryBudget.of(deployment,
        batch)``: the estimate unless ``workspace_bytes`` is set). A MemoryBudget (the 0.1
        form) gives them loose, with no workspace by default.
    batch : int or array_like
        Concurrent sequences, >= 1.
    context_tokens : int or array_like
        Tokens per sequence [token].

    Returns
    -------
    float or numpy.ndarray
        :math:`(W + B\\,K(C)) / (f\\,\\mathrm{cap} - R - A)` [devices], KV sharded without
        replication (e.g. tensor parallel up to the KV-head count, pipeline beyond). The
        deployment's layout (``tp``, ``pp``) enters only through the workspace estimate.

    Notes
    -----
    :math:`W` is :func:`weight_bytes` at the given formats. The 0.1 form's ``weight_dtype``
    is :func:`weight_bytes`' ``dtype``: with it given, routed experts follow it too, whereas a
    Deployment keeps a model's expert format (gpt-oss: MXFP4) while its weights stay at the
    released format; so the two forms differ there, as they do in the workspace.

    References
    ----------
    .. [1] Seed digest S15 (source material) and its reconciliation in docs/physics.md.

    Examples
    --------
    >>> import tokenomics as tk
    >>> m, h = tk.model("llama-3.1-405b"), tk.hardware("h100-sxm")
    >>> round(devices_needed(m, h.with_(mem_capacity_bytes=80e9), 32, 131072,
    ...       usable_memory_fraction=1.0), 1)   # S15, corrected, at the source's 80 GB
    37.2
    >>> round(devices_needed(m, h, 32, 131072, usable_memory_fraction=1.0), 1)  # 81,559 MiB
    34.8
    >>> d = tk.Deployment("llama-3.1-405b", "h100-sxm", usable_memory_fraction=1.0,
    ...                   workspace_bytes=0)
    >>> round(devices_needed(d, 32, 131072), 1)          # the Deployment form, same budget
    34.8
    """
    from tokenomics.physics.kv import kv_cache_bytes

    b = deployment if isinstance(deployment, MemoryBudget) else \
        MemoryBudget.of(deployment, batch)
    kv = np.asarray(kv_cache_bytes(b.model, context_tokens, batch, b.kv_dtype,
                                   b.allow_beyond_max_context))
    per_dev = b.per_device_bytes
    if np.any(np.asarray(per_dev) <= 0):
        lost = np.max(np.asarray(b.runtime_reserve_bytes + b.workspace_bytes))
        raise DoesNotFitError(
            f"{b.hardware.id}: runtime reserve and workspace ({lost:.4g} B) leave no usable "
            f"memory of {b.hardware.mem_usable_bytes:.4g} B")
    return V.scalar_or_array((b.weights_bytes + kv) / per_dev)


@accepts_legacy_forms(_DEVICE_COUNT_01 + ("multiple_of", "allow_beyond_max_context"),
                      dict(_DEVICE_COUNT_DEFAULTS, batch=1, context_tokens=None, multiple_of=1),
                      _budget_01, "deployment", (Deployment, MemoryBudget))
@inputs(deployment="deployment_like")
def min_devices(deployment: Deployment | MemoryBudget, batch: Any = 1,
                context_tokens: Any = None, multiple_of: int = 1) -> Any:
    """Smallest device count whose memory holds the weights and ``batch`` KV caches.

    The call forms of :func:`devices_needed`: a Deployment, or release 0.1's loose arguments
    ``min_devices(model, hardware, batch=1, context_tokens=None, weight_dtype=None,
    kv_dtype="bf16", usable_memory_fraction=0.9, runtime_reserve_bytes=0.0,
    workspace_bytes=0.0, multiple_of=1, allow_beyond_max_context=False)``.

    Parameters
    ----------
    deployment : Deployment or MemoryBudget
        Formats and memory budget, as for :func:`devices_needed`.
    batch : int or array_like
        Concurrent sequences, >= 1.
    context_tokens : int or array_like, optional
        Tokens per sequence; default the model's maximum context.
    multiple_of : int
        Round up to a multiple (8 for whole 8-GPU servers).

    Returns
    -------
    int or numpy.ndarray of int
        The 0.1 form (a model and a device): :math:`\\lceil n / m \\rceil m` with ``n`` from
        :func:`devices_needed`, the KV pooled over the devices without replication.
        A Deployment: the count **its own layout** needs, keeping its tensor parallelism
        :math:`t` and adding pipeline stages: the smallest multiple :math:`n` of
        :math:`\\mathrm{lcm}(t, m)` with :math:`(W + B\\,K(C)\\,r)/n \\le f\\,\\mathrm{cap} -
        R - A`, where :math:`r` is ``Deployment.kv_replication`` (1 with ``kv_shard="all"``;
        :math:`t / n_{kv}` beyond the KV heads; :math:`t` for MLA's latent sharded by head).
        A replica wider than the scale-up domain is rounded up to whole domains. So a
        Deployment never gets a count its own ``memory_fit`` would reject.

    Raises
    ------
    DoesNotFitError
        When a Deployment would need more pipeline stages than the model has layers (the
        message says why and suggests ``kv_shard="all"`` where replication is the cause).

    References
    ----------
    .. [1] Seed digest S15 (source material) and its reconciliation in docs/physics.md.

    Examples
    --------
    >>> import tokenomics as tk
    >>> min_devices(tk.model("llama-3.1-405b"), tk.hardware("h100-sxm"), 32, 131072,
    ...             usable_memory_fraction=1.0, multiple_of=8)   # S15: 38 -> 40
    40
    """
    if not isinstance(multiple_of, (int, np.integer)) or multiple_of < 1:
        raise TokenomicsError(f"multiple_of must be a positive integer, got {multiple_of!r}")
    model = deployment.model
    ctx = model.max_context if context_tokens is None else context_tokens
    if isinstance(deployment, Deployment):
        return _min_devices_for_layout(deployment, batch, ctx, int(multiple_of))
    with np.errstate(over="ignore", invalid="ignore"):    # an absurd batch: refused below
        need = np.asarray(devices_needed(deployment, batch, ctx))
    _countable(need)
    # Guard against 37.0000000001 from rounding: tolerance far below one device.
    n = np.ceil(need - 1e-9)
    n = np.ceil(n / multiple_of) * multiple_of
    n = np.maximum(n, multiple_of).astype(np.int64)
    return int(n) if n.ndim == 0 else n


#: Most devices a sizing answers with; beyond it the request (a batch of 1e300) is nonsense.
MAX_DEVICES = 2**40


def _countable(need: np.ndarray) -> None:
    """Raise unless every device count is finite and at most :data:`MAX_DEVICES`."""
    if np.any(~np.isfinite(need)) or np.any(need > MAX_DEVICES):
        raise TokenomicsError(
            f"the request needs more than {MAX_DEVICES:.3g} devices (batch or context "
            f"beyond any deployment); give a batch and context a real fleet could serve")


def _min_devices_for_layout(dep: Deployment, batch: Any, context_tokens: Any,
                            multiple_of: int) -> Any:
    """:func:`min_devices` for a Deployment: its tensor parallelism kept, stages added."""
    from tokenomics.physics.kv import kv_cache_bytes

    b = MemoryBudget.of(dep, batch)
    kv_cache_bytes(b.model, context_tokens, batch, b.kv_dtype,   # checks the arguments
                   b.allow_beyond_max_context)
    room = np.asarray(b.per_device_bytes, float)
    if np.any(room <= 0):
        raise DoesNotFitError(f"{b.hardware.id}: runtime reserve and workspace leave no usable "
                              f"memory of {b.hardware.mem_usable_bytes:.4g} B")
    step = math.lcm(dep.tp, multiple_of)
    kv = replicated_kv_bytes(dep, context_tokens, b.kv_dtype) * np.asarray(batch, float)
    need = np.ceil((b.weights_bytes + kv) / room - 1e-9)
    _countable(need)
    n = (np.maximum(np.ceil(need / step), 1) * step).astype(np.int64)
    # A replica larger than a scale-up domain spans whole domains (Deployment's layout rule).
    domain = dep.hardware.scale_up_domain_size or 0
    if domain > 1:
        wide = math.lcm(step, domain)
        n = np.where(n > domain, (np.ceil(n / wide) * wide).astype(np.int64), n)
    stages = n // dep.tp
    if np.any(stages > dep.model.num_layers):
        rep = dep.kv_replication_of(dep.model.attention)
        why = (f"its KV is replicated {rep:g} times over tp={dep.tp} (MLA's "
               "latent on every rank), and pipeline stages cannot split it further; pass "
               "kv_shard='all' (sharded by sequence) or a smaller tp"
               if rep > 1 else "the weights and KV need more stages than layers")
        raise DoesNotFitError(
            f"{dep.model.id} at tp={dep.tp} on {dep.hardware.id} needs more than "
            f"{dep.model.num_layers} pipeline stages of {dep.tp} devices: {why}")
    return int(n) if n.ndim == 0 else n


def ensure_fits(dep: Deployment, fit: MemoryFit, what: str, **inputs: Any) -> None:
    """Raise :class:`DoesNotFitError` naming the first point that does not fit.

    ``inputs`` (e.g. ``batch=B, context_tokens=C``) are broadcast with the fit and the
    offending point's values are quoted.
    """
    fits = np.asarray(fit.fits)
    if fits.all():
        return
    shape = np.shape(fit.total_bytes)
    flat = int(np.flatnonzero(~np.broadcast_to(fits, shape))[0]) if shape else 0
    total = float(np.ravel(fit.total_bytes)[flat])
    point = ", ".join(f"{k}={_num(np.ravel(np.broadcast_to(v, shape))[flat])}"
                      for k, v in inputs.items())
    w = float(np.ravel(fit.weights_bytes)[0])
    raise DoesNotFitError(
        f"{what} at {point} needs {total / 1e9:.4g} GB per device on {dep.hardware.id} "
        f"(weights {w / 1e9:.4g} GB; usable {fit.usable_bytes / 1e9:.4g} GB of "
        f"{fit.capacity_bytes / 1e9:.4g} GB) with tp={dep.tp}, pp={dep.pp}; "
        + ("the weights alone do not fit: add devices or use a smaller weight format"
           if w + fit.runtime_reserve_bytes > fit.usable_bytes else
           "lower the batch or context (see tokenomics.max_batch), or add devices")
        + "; pass on_oom='mark' to compute anyway and get a 'fits' mask")


def _num(v: Any) -> Any:
    v = float(v)
    return int(v) if v.is_integer() else v
