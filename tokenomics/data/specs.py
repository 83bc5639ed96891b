"""Frozen specifications: hardware and its prices, model architecture (efficiencies live in
:mod:`tokenomics.data.efficiency` and are re-exported here).

Specs hold plain floats in canonical units (B, FLOP, s, W, USD) and the source of every
catalog field. They carry no behaviour beyond validation and small derived properties; the
physics lives in the pure-function modules (:mod:`tokenomics.physics.kv`, :mod:`tokenomics.physics.params`,
:mod:`tokenomics.physics.roofline`, :mod:`tokenomics.physics.memory`, :mod:`tokenomics.physics.operators`,
:mod:`tokenomics.physics.step`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Literal

import numpy as np

from tokenomics.core.dtypes import PEAK_KEYS, DType, dtype
from tokenomics.core.errors import NotPublishedError, TokenomicsError
from tokenomics.core.units import as_magnitude, coerce_fields
from tokenomics.data.display import entry_html, hardware_repr, model_repr
from tokenomics.data.efficiency import ROOFLINE, Efficiency  # noqa: F401  (re-exported)
from tokenomics.data.layers import (  # noqa: F401  (re-exported: their first home)
    LINEAR_KINDS,
    MAX_LAYERS,
    MAX_WIDTH,
    Attention,
    AttentionKind,
    LinearAttention,
    MoE,
    check_whole,
)
from tokenomics.data.peaks import checked_quoted, with_quoted_peaks

WindowKind = Literal["full", "sliding", "chunked"]


# --------------------------------------------------------------------------------------------
# Hardware
# --------------------------------------------------------------------------------------------
_HARDWARE_UNITS = {
    "mem_capacity_bytes": "B", "mem_visible_bytes": "B", "mem_bw_bytes_per_s": "B/s",
    "sram_bytes": "B", "scale_up_bw_bytes_per_s": "B/s", "scale_up_latency_s": "s",
    "scale_out_bw_bytes_per_s": "B/s", "scale_out_latency_s": "s", "tdp_w": "W",
}


#: The price tiers a catalog ``[[prices]]`` entry may name. Rentals [USD/device-hour]:
#: on-demand at a hyperscaler or a neocloud, a neocloud's spot (interruptible) rate, a
#: hyperscaler's capacity block, a 1- or 3-year commitment (``hyperscaler-committed``), a
#: negotiated long-term contract; ``purchase`` [USD]; ``estimate`` (either unit).
PRICE_TIERS = ("hyperscaler-on-demand", "hyperscaler-capacity-block", "hyperscaler-committed",
               "neocloud-on-demand", "neocloud-spot", "long-term-contract", "purchase",
               "estimate")

#: How a scale-up domain is wired (see :attr:`Hardware.scale_up_topology`).
SCALE_UP_TOPOLOGIES = ("switched", "mesh", "torus-2d", "torus-3d")


@dataclass(frozen=True)
class Price:
    """A dated price of one device.

    Attributes
    ----------
    usd : float
        Price [USD/hour] for a rental tier, or [USD] for ``tier == "purchase"``/``"estimate"``
        of a purchase.
    per_hour : bool
        True for a rental price per device-hour.
    tier : str
    date : str
    source : str
    note : str
    """

    usd: float
    per_hour: bool
    tier: str
    date: str
    source: str
    note: str = ""


#: Share of a format's peak a matmul reaches on a device whose maximum achievable matmul
#: rate is not published: the median of the 20 measured shares (12 BF16, 8 FP8) of the
#: ml-engineering MAMF table (0.766; Hardware.achievable_share's reference).
DEFAULT_ACHIEVABLE_SHARE = 0.766
_SHARE_FALLBACK = {"bf16": ("fp16",), "fp16": ("bf16",), "tf32": ("bf16",),
                   "fp8": ("bf16", "fp16"), "fp6": ("fp8", "bf16"), "fp4": ("fp8", "bf16"),
                   "int8": ("fp8", "bf16"), "int4": ("int8", "fp8", "bf16")}


@dataclass(frozen=True)
class Hardware:
    """One accelerator (per device), in canonical units.

    Attributes
    ----------
    id, name, vendor, status : str
        ``status`` is ``"shipping"``, ``"announced"`` or ``"unverified"``.
    peak_flop_per_s : Mapping[str, float]
        Dense peak matrix throughput per compute format [FLOP/s] (integer formats: op/s).
    quoted_flop_per_s : Mapping[str, float]
        Compute figures the vendor quotes without a dense/sparse convention, per format
        [FLOP/s] (the catalog's ``[quoted]`` table); used only through
        :meth:`with_quoted_peaks` (:mod:`tokenomics.data.peaks`).
    achievable_flop_per_s : Mapping[str, float]
        Measured maximum achievable matmul throughput per format [FLOP/s] (MAMF: the best
        dense GEMM a brute-force shape search reaches), where published; see
        :meth:`achievable_share`.
    mem_capacity_bytes : float
        **Physical** device memory [B]: the vendor's capacity read in the unit the vendor
        meant (HBM stacks are binary-sized, so NVIDIA's and AMD's "80 GB" is 80 GiB =
        85,899,345,920 B; see ``docs/catalog-schema.md``).
    mem_visible_bytes : float or None
        Device memory the driver reports as usable [B] (nvidia-smi's ``memory.total``, ROCm's
        VRAM figure); None where no such report is published. Never above the physical
        capacity.
    mem_bw_bytes_per_s : float
        Peak device-memory bandwidth [B/s].
    sram_bytes : float or None
        On-chip SRAM / last-level cache [B].
    scale_up_bw_bytes_per_s : float or None
        Scale-up link bandwidth per device, **per direction** [B/s] (a bidirectional catalog
        figure is halved once at load).
    scale_up_domain_size : int or None
        Devices in one scale-up domain.
    scale_up_topology : str
        How the domain's devices are wired, one of :data:`SCALE_UP_TOPOLOGIES`:
        ``"switched"`` (every device reaches every peer at its full link bandwidth through
        switches: NVSwitch, NVLink Switch, Huawei's UB switches; the default where a catalog
        does not say, the optimistic case), ``"mesh"`` (a direct link to each peer: AMD
        Infinity Fabric, Gaudi's RoCE ports; a group of g of the domain's n devices uses
        g - 1 of its n - 1 links), ``"torus-2d"`` / ``"torus-3d"`` (nearest-neighbour links
        in 2 or 3 dimensions: TPU ICI, Trainium2 NeuronLink). See
        :meth:`tokenomics.data.interconnect.Topology.group_bytes_per_s`.
    scale_up_latency_s, scale_out_latency_s : float or None
        Latency floor of one transfer [s], where published.
    scale_out_bw_bytes_per_s : float or None
        Scale-out NIC bandwidth per device, per direction [B/s].
    tdp_w : float or None
        Thermal design power [W].
    prices : tuple of Price
    unavailable : Mapping[str, str]
        Field -> ``"not published"`` / ``"not supported"`` for fields a source lacks.
    sources : Mapping[str, str]
        Field -> bibliography key.
    """

    id: str
    name: str
    peak_flop_per_s: Mapping[str, float]
    mem_capacity_bytes: float
    mem_bw_bytes_per_s: float
    vendor: str = ""
    status: str = "shipping"
    aliases: tuple[str, ...] = ()
    released: str = ""
    memory_type: str = ""
    sram_bytes: float | None = None
    mem_visible_bytes: float | None = None
    scale_up_name: str = ""
    scale_up_bw_bytes_per_s: float | None = None
    scale_up_domain_size: int | None = None
    scale_up_latency_s: float | None = None
    scale_up_topology: str = "switched"
    scale_out_name: str = ""
    scale_out_bw_bytes_per_s: float | None = None
    scale_out_latency_s: float | None = None
    tdp_w: float | None = None
    prices: tuple[Price, ...] = ()
    unavailable: Mapping[str, str] = field(default_factory=dict)
    sources: Mapping[str, str] = field(default_factory=dict)
    notes: str = ""
    path: str = ""
    achievable_flop_per_s: Mapping[str, float] = field(default_factory=dict)
    quoted_flop_per_s: Mapping[str, float] = field(default_factory=dict)

    def __repr__(self) -> str:
        return hardware_repr(self)

    def with_quoted_peaks(self) -> Hardware:
        """This device read at its quoted figures of unknown convention where it has no
        dense peak (:func:`tokenomics.data.peaks.with_quoted_peaks`): id ``<id>-quoted``."""
        return with_quoted_peaks(self)

    def _repr_html_(self) -> str:
        return entry_html(self)

    def __post_init__(self) -> None:
        coerce_fields(self, _HARDWARE_UNITS)
        if self.scale_up_topology not in SCALE_UP_TOPOLOGIES:
            raise TokenomicsError(f"hardware {self.id!r}: scale_up_topology must be one of "
                                  f"{', '.join(SCALE_UP_TOPOLOGIES)}, got "
                                  f"{self.scale_up_topology!r}")
        if not isinstance(self.peak_flop_per_s, Mapping):
            raise TokenomicsError(f"hardware {self.id!r}: peak_flop_per_s must map compute "
                                  f"formats to FLOP/s (e.g. {{'bf16': 989.4e12}}), got "
                                  f"{type(self.peak_flop_per_s).__name__}")
        for name in ("mem_capacity_bytes", "mem_bw_bytes_per_s"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
                raise TokenomicsError(f"hardware {self.id!r}: {name} must be one number, got "
                                      f"{v!r}")
        peaks = {k: as_magnitude(v, "flop/s", f"peak_flop_per_s[{k!r}]")
                 for k, v in dict(self.peak_flop_per_s).items()}
        object.__setattr__(self, "peak_flop_per_s", MappingProxyType(peaks))
        for k, v in self.peak_flop_per_s.items():
            if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
                raise TokenomicsError(f"hardware {self.id!r}: peak {k} must be a number of "
                                      f"FLOP/s, got {v!r}")
            if k not in PEAK_KEYS:
                raise TokenomicsError(f"hardware {self.id!r}: unknown compute key {k!r}; "
                                      f"expected one of {', '.join(PEAK_KEYS)}")
            if not (v > 0 and math.isfinite(v)):
                raise TokenomicsError(f"hardware {self.id!r}: peak {k} must be > 0, got {v!r}")
        self._check_achievable()
        object.__setattr__(self, "quoted_flop_per_s",
                           checked_quoted(self.id, self.quoted_flop_per_s))
        for name in ("mem_capacity_bytes", "mem_bw_bytes_per_s"):
            v = getattr(self, name)
            if not (v > 0 and math.isfinite(v)):
                raise TokenomicsError(f"hardware {self.id!r}: {name} must be > 0, got {v!r}")
        vis = self.mem_visible_bytes
        if vis is not None and not (0 < vis <= self.mem_capacity_bytes and math.isfinite(vis)):
            raise TokenomicsError(
                f"hardware {self.id!r}: mem_visible_bytes must be > 0 and at most the physical "
                f"mem_capacity_bytes ({self.mem_capacity_bytes:.6g} B), got {vis!r}")

    def _check_achievable(self) -> None:
        """Measured matmul rates: known formats, > 0, at most 2% above the format's peak."""
        ach = {k: as_magnitude(v, "flop/s", f"achievable_flop_per_s[{k!r}]")
               for k, v in dict(self.achievable_flop_per_s).items()}
        for k, v in ach.items():
            if k not in PEAK_KEYS or k not in self.peak_flop_per_s:
                raise TokenomicsError(f"hardware {self.id!r}: achievable {k!r} needs a published "
                                      f"peak of that format; known: "
                                      f"{', '.join(sorted(self.peak_flop_per_s)) or 'none'}")
            if not (0 < v <= 1.02 * self.peak_flop_per_s[k]):
                raise TokenomicsError(f"hardware {self.id!r}: achievable {k} must be > 0 and "
                                      f"at most the {self.peak_flop_per_s[k]:.4g} FLOP/s peak, "
                                      f"got {v!r}")
        object.__setattr__(self, "achievable_flop_per_s", MappingProxyType(ach))

    def achievable_share(self, fmt: str) -> float:
        """Share of a format's dense peak that a matmul reaches on this device [-].

        The measured maximum achievable matmul rate over the datasheet peak
        (:attr:`achievable_flop_per_s`): the format's own where measured, else a measured
        format of the same family (FP16 for BF16 and back, FP8 for FP4/FP6/INT8, BF16 for
        FP8), else :data:`DEFAULT_ACHIEVABLE_SHARE`; at most 1. The calibrated forecast times
        matrix products at this share of the peak before its MFU (a device that reaches
        51% of its datasheet, like MI300X in BF16, is not fitted as if it reached 80%).

        References
        ----------
        .. [1] S. Bekman, "Machine Learning Engineering", compute/accelerator: Maximum
           Achievable Matmul FLOPS comparison table (github.com/stas00/ml-engineering).
        """
        key = dtype(fmt).peak
        for k in (key, *_SHARE_FALLBACK.get(key, ())):
            if k in self.achievable_flop_per_s:
                return min(self.achievable_flop_per_s[k] / self.peak_flop_per_s[k], 1.0)
        return DEFAULT_ACHIEVABLE_SHARE

    def __getstate__(self) -> dict[str, Any]:
        """The fields, the read-only peaks as a plain dict (a mapping proxy does not pickle:
        a deployment goes to a worker process or a Dask cluster whole)."""
        state = dict(self.__dict__)
        state["peak_flop_per_s"] = dict(self.peak_flop_per_s)
        state["achievable_flop_per_s"] = dict(self.achievable_flop_per_s)
        state["quoted_flop_per_s"] = dict(self.quoted_flop_per_s)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Restore :meth:`__getstate__`'s fields, the peaks read-only again."""
        self.__dict__.update(state)
        object.__setattr__(self, "peak_flop_per_s", MappingProxyType(state["peak_flop_per_s"]))
        for name in ("achievable_flop_per_s", "quoted_flop_per_s"):
            object.__setattr__(self, name, MappingProxyType(state.get(name, {})))

    @property
    def mem_usable_bytes(self) -> float:
        """Device memory a deployment can allocate from [B].

        Returns
        -------
        float
            ``mem_visible_bytes`` (what the driver reports) where published, else the physical
            ``mem_capacity_bytes``. Memory fit, batch limits, device counts, paged KV and the
            HBM tier take a ``usable_memory_fraction`` of this figure.

        Notes
        -----
        The driver reserves part of the physical HBM (ECC/row remapping, firmware, page
        tables): an H100 SXM 80 GB has 80 GiB = 85,899,345,920 B physical and nvidia-smi
        reports 81,559 MiB = 85,520,809,984 B total.
        """
        return self.mem_visible_bytes if self.mem_visible_bytes is not None \
            else self.mem_capacity_bytes

    def peak(self, fmt: str | DType) -> float:
        """Dense peak throughput for the compute format ``fmt`` [FLOP/s].

        Raises
        ------
        NotPublishedError
            If the catalog lists the format as not published or not supported.
        """
        key = dtype(fmt).peak
        try:
            return self.peak_flop_per_s[key]
        except KeyError:
            why = self.unavailable.get(f"compute.{key}", "not published")
            have = ", ".join(sorted(self.peak_flop_per_s)) or "none"
            raise NotPublishedError(
                f"{self.id}: dense {key} peak is {why} (format {dtype(fmt).name!r}); "
                f"formats with a published peak: {have}"
            ) from None

    def with_(self, **changes: Any) -> Hardware:
        """Return a copy with fields replaced (e.g. a different bandwidth for a what-if).

        A new ``mem_capacity_bytes`` without a ``mem_visible_bytes`` drops the driver's
        visible figure (it described the old memory), so ``mem_usable_bytes`` is then the
        capacity passed: ``hw.with_(mem_capacity_bytes=80e9)`` models exactly 80e9 B.
        """
        if "mem_capacity_bytes" in changes:
            changes.setdefault("mem_visible_bytes", None)
        return replace(self, **changes)


# --------------------------------------------------------------------------------------------
# Model
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Model:
    """A decoder-only transformer architecture.

    Per-layer patterns are tuples of length ``num_layers``:
    ``layer_window[i]`` is the attention span of layer *i* in tokens (0 = full causal
    attention), ``layer_window_kind[i]`` says how the span applies (``"sliding"``: the last W
    tokens; ``"chunked"``: tokens of the current W-token chunk, as Llama 4), and
    ``layer_is_moe[i]`` whether the FFN is a MoE.

    Attributes
    ----------
    id, name : str
    num_layers, hidden_size, vocab_size, max_context : int
    attention : Attention
    intermediate_size : int
        Dense FFN width (dense layers).
    gated_ffn : bool
        Three FFN matrices (SwiGLU/GeGLU) instead of two (OPT).
    ffn_bias : bool
    moe : MoE or None
    norm : {"rms", "layer"}
    norms_per_layer : int
    tie_word_embeddings : bool
    learned_positions : int
        Rows of a learned position-embedding table (OPT), else 0.
    mtp_layers : int
        Multi-token-prediction modules shipped beside the main model (DeepSeek-V3), not part
        of the main parameter count.
    weight_dtype : str
        Format of the released weights; ``expert_dtype`` overrides it for routed experts.
    embedding_dtype : str or None
        Released format of the token embedding and LM head when it differs from
        ``weight_dtype`` (quantized releases keep them at the checkpoint's ``torch_dtype``:
        DeepSeek-V3 and Kimi K2 FP8 with BF16 embeddings); None: ``weight_dtype``.
    official_total_params, official_active_params : float or None
        Vendor counts [parameters], with ``sources``.
    official_active_include_embedding : bool
        Whether the vendor's active count includes the input embedding table (gpt-oss's
        model card leaves it out).
    official_active_include_lm_head : bool
        Whether the vendor's active count includes the LM head (Z.ai's GLM-4.5 counts and
        Qwen's Qwen3-Next count leave it out).
    layer_is_linear : tuple of bool
        Per layer, True for a linear-attention (Gated DeltaNet) layer that keeps a fixed
        state instead of a KV cache; empty (the default) when the model has none.
    linear_attention : LinearAttention or None
        The shape of those layers.
    layer_has_ffn : tuple of bool
        Per layer, False for a mixer block with no FFN after it (Nemotron-H alternates single
        blocks: a layer here is a mixer and the FFN block that follows it, if any); empty (the
        default) when every layer has one. A layer without an FFN has half the norms.
    global_attention : Attention or None
        The full-attention layers' shape where it differs from the windowed layers'
        (``attention``): Gemma 4's global layers have 512-wide heads, a quarter of the KV
        heads and keys as values. None (the default): every softmax-attention layer has
        ``attention``. :meth:`attention_for` picks a layer group's.
    layer_kv_shared : tuple of bool
        Per layer, True for a layer that computes its queries only and attends to the keys
        and values of an earlier layer of the same span (Gemma 4 E2B/E4B: the last
        ``num_kv_shared_layers``): it has no key or value projection (nor key norm), stores
        and writes no KV, and reads its source's. Empty (the default): every layer keeps
        its own.
    kv_shared_ffn_scale : int
        FFN width multiple on the KV-shared layers (Gemma 4 E2B's ``use_double_wide_mlp``:
        2); 1 by default.
    per_layer_input_size, per_layer_vocab_size : int
        Per-layer embeddings (Gemma 4 E2B/E4B, ``hidden_size_per_layer_input``,
        ``vocab_size_per_layer_input``): a table of ``per_layer_vocab_size`` rows of
        ``num_layers x per_layer_input_size`` gathered per token, a projection of the
        embedding to the same width, and in each layer a gate and a projection back to the
        hidden size that add each layer's slice to the residual. 0: none.
    official_total_include_per_layer_embedding : bool
        Whether the vendor's counts include the per-layer embedding table (Gemma 4's
        "effective" parameters leave it out).
    """

    id: str
    name: str
    num_layers: int
    hidden_size: int
    vocab_size: int
    max_context: int
    attention: Attention
    intermediate_size: int
    layer_window: tuple[int, ...]
    layer_window_kind: tuple[str, ...]
    layer_is_moe: tuple[bool, ...]
    moe: MoE | None = None
    gated_ffn: bool = True
    ffn_bias: bool = False
    norm: str = "rms"
    norms_per_layer: int = 2
    tie_word_embeddings: bool = False
    learned_positions: int = 0
    mtp_layers: int = 0
    weight_dtype: str = "bf16"
    expert_dtype: str | None = None
    embedding_dtype: str | None = None
    model_type: str = ""
    family: str = ""
    aliases: tuple[str, ...] = ()
    official_total_params: float | None = None
    official_active_params: float | None = None
    official_active_include_embedding: bool = True
    official_active_include_lm_head: bool = True
    layer_is_linear: tuple[bool, ...] = ()
    linear_attention: LinearAttention | None = None
    layer_has_ffn: tuple[bool, ...] = ()
    global_attention: Attention | None = None
    layer_kv_shared: tuple[bool, ...] = ()
    kv_shared_ffn_scale: int = 1
    per_layer_input_size: int = 0
    per_layer_vocab_size: int = 0
    official_total_include_per_layer_embedding: bool = True
    sources: Mapping[str, str] = field(default_factory=dict)
    notes: str = ""
    config: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)
    path: str = ""

    def __repr__(self) -> str:
        return model_repr(self)

    def _repr_html_(self) -> str:
        return entry_html(self)

    def __post_init__(self) -> None:
        n = self.num_layers
        for name in ("layer_window", "layer_window_kind", "layer_is_moe"):
            seq = getattr(self, name)
            if len(seq) != n:
                raise TokenomicsError(
                    f"model {self.id!r}: {name} has {len(seq)} entries, expected num_layers={n}")
        for name, top in (("num_layers", MAX_LAYERS), ("hidden_size", MAX_WIDTH),
                          ("vocab_size", 10**8), ("max_context", 10**9)):
            check_whole(getattr(self, name), f"model {self.id!r}: {name}", 1, top)
        if self.num_dense_layers:
            check_whole(self.intermediate_size, f"model {self.id!r}: intermediate_size (the "
                   f"{self.num_dense_layers} dense layers' FFN width)", 1, 16 * MAX_WIDTH)
        if self.layer_is_linear and len(self.layer_is_linear) != n:
            raise TokenomicsError(
                f"model {self.id!r}: layer_is_linear has {len(self.layer_is_linear)} entries, "
                f"expected num_layers={n} (or none for a model without linear layers)")
        if self.layer_has_ffn and len(self.layer_has_ffn) != n:
            raise TokenomicsError(
                f"model {self.id!r}: layer_has_ffn has {len(self.layer_has_ffn)} entries, "
                f"expected num_layers={n} (or none when every layer has an FFN)")
        if any(m and not f for m, f in zip(self.layer_is_moe, self.layer_has_ffn,
                                           strict=False)):   # none given: every layer has one
            raise TokenomicsError(f"model {self.id!r}: a layer marked MoE has no FFN")
        if any(self.layer_is_linear) and self.linear_attention is None:
            raise TokenomicsError(f"model {self.id!r}: linear-attention layers given but no "
                                  "LinearAttention spec")
        self._check_shapes()
        if any(self.layer_is_moe) and self.moe is None:
            raise TokenomicsError(f"model {self.id!r}: MoE layers given but no MoE spec")
        dtype(self.weight_dtype)
        if self.expert_dtype is not None:
            dtype(self.expert_dtype)
        if self.embedding_dtype is not None:
            dtype(self.embedding_dtype)

    def _check_shapes(self) -> None:
        """The full layers' own shape, KV sharing and per-layer embeddings hold together."""
        if self.global_attention is not None and not isinstance(self.global_attention,
                                                                Attention):
            raise TokenomicsError(f"model {self.id!r}: global_attention must be an Attention "
                                  f"(the full layers' shape) or None, got "
                                  f"{type(self.global_attention).__name__}")
        if self.global_attention is not None and (
                self.global_attention.kind == "MLA" or self.attention.kind == "MLA"
                or all(w > 0 for w in self.layer_window) or all(w <= 0 for w in self.layer_window)):
            raise TokenomicsError(
                f"model {self.id!r}: global_attention (the full layers' own shape) needs a "
                f"non-MLA model with both windowed and full-attention layers")
        self._check_kv_sharing()
        for name in ("per_layer_input_size", "per_layer_vocab_size"):
            check_whole(getattr(self, name), f"model {self.id!r}: {name}", 0, 10**8)
        if bool(self.per_layer_input_size) != bool(self.per_layer_vocab_size):
            raise TokenomicsError(f"model {self.id!r}: per-layer embeddings need both "
                                  f"per_layer_input_size and per_layer_vocab_size (or neither)")

    def _check_kv_sharing(self) -> None:
        """``layer_kv_shared`` has one entry a layer, marks no linear layer, and every shared
        layer has an earlier layer of its span that keeps its own KV; the FFN scale is a
        whole number from 1, above 1 only with shared layers and unbiased FFNs."""
        flags = self.layer_kv_shared
        check_whole(self.kv_shared_ffn_scale, f"model {self.id!r}: kv_shared_ffn_scale", 1, 16)
        if self.kv_shared_ffn_scale > 1 and (not any(flags) or self.ffn_bias):
            raise TokenomicsError(f"model {self.id!r}: kv_shared_ffn_scale above 1 needs "
                                  "KV-shared layers and an FFN without biases")
        if not flags:
            return
        if self.attention.kind == "MLA" or self.attention.is_sparse:
            raise TokenomicsError(f"model {self.id!r}: KV-shared layers are modelled for "
                                  "MHA/GQA/MQA attention, not MLA or sparse attention")
        if len(flags) != self.num_layers:
            raise TokenomicsError(f"model {self.id!r}: layer_kv_shared has {len(flags)} "
                                  f"entries, expected num_layers={self.num_layers}")
        linear = self.layer_is_linear or (False,) * self.num_layers
        seen: set[tuple[str, int]] = set()
        for i, (shared, lin, w, k) in enumerate(zip(flags, linear, self.layer_window,
                                                     self.layer_window_kind, strict=True)):
            key = ("full", 0) if w <= 0 else (k, w)
            if shared and (lin or key not in seen):
                raise TokenomicsError(
                    f"model {self.id!r}: layer {i} is marked KV-shared but no earlier "
                    f"softmax-attention layer of its span ({key[0]}, {key[1]}) keeps a KV "
                    f"it could read")
            if not shared and not lin:
                seen.add(key)

    def dense_ffn_widths(self) -> list[tuple[int, int]]:
        """(width, layers) of the dense FFNs: ``intermediate_size`` on the dense layers, and
        ``kv_shared_ffn_scale`` times it on those that are KV-shared where that scale is
        above 1 (Gemma 4 E2B)."""
        if self.kv_shared_ffn_scale == 1 or not self.num_dense_layers:
            return [(self.intermediate_size, self.num_dense_layers)]
        has_ffn = self.layer_has_ffn or (True,) * self.num_layers
        wide = sum(1 for sh, moe, f in zip(self.layer_kv_shared, self.layer_is_moe, has_ffn,
                                           strict=True) if sh and f and not moe)
        return [(self.intermediate_size, self.num_dense_layers - wide),
                (self.intermediate_size * self.kv_shared_ffn_scale, wide)]

    @property
    def num_kv_shared_layers(self) -> int:
        """Layers that read an earlier layer's KV instead of keeping their own."""
        return int(sum(self.layer_kv_shared))

    def kv_shared_counts(self) -> dict[tuple[str, float], int]:
        """KV-shared layers per (kind, window) group of :meth:`window_groups` (window
        ``inf`` for full layers); empty without KV sharing."""
        out: dict[tuple[str, float], int] = {}
        for shared, w, k in zip(self.layer_kv_shared, self.layer_window,
                                self.layer_window_kind, strict=False):
            if shared:
                key = ("full", math.inf) if w <= 0 else (k, float(w))
                out[key] = out.get(key, 0) + 1
        return out

    def kv_groups(self) -> list[tuple[str, float, int]]:
        """:meth:`window_groups` counting only the layers that keep their own KV (those a
        cache holds and a step writes)."""
        shared = self.kv_shared_counts()
        return [(k, w, c - shared.get((k, w), 0)) for k, w, c in self.window_groups()]

    # Derived layer groupings, cached as arrays for vectorised use.
    @property
    def window_array(self) -> np.ndarray:
        """Per-layer window in tokens, ``inf`` for full attention."""
        w = np.asarray(self.layer_window, dtype=float)
        return np.where(w > 0, w, np.inf)

    @property
    def num_moe_layers(self) -> int:
        return int(sum(self.layer_is_moe))

    @property
    def num_dense_layers(self) -> int:
        """Layers with a dense FFN: neither MoE nor without an FFN."""
        return self.num_layers - self.num_moe_layers - self.num_ffnless_layers

    @property
    def num_ffnless_layers(self) -> int:
        """Layers whose mixer has no FFN block after it (``layer_has_ffn`` False)."""
        return int(sum(not f for f in self.layer_has_ffn))

    @property
    def is_moe(self) -> bool:
        return self.moe is not None and self.num_moe_layers > 0

    @property
    def num_linear_layers(self) -> int:
        """Linear-attention (Gated DeltaNet) layers: a fixed state, no KV cache."""
        return int(sum(self.layer_is_linear))

    @property
    def num_attention_layers(self) -> int:
        """Softmax-attention layers, the ones that keep a KV cache."""
        return self.num_layers - self.num_linear_layers

    def attention_for(self, window: float) -> Attention:
        """The attention shape of the layers of span ``window`` [token]: ``global_attention``
        for full layers (``inf``) where the model has one, else ``attention``."""
        if self.global_attention is not None and window == math.inf:
            return self.global_attention
        return self.attention

    def attention_shapes(self, storing: bool = False) -> list[tuple[Attention, int]]:
        """(shape, softmax-attention layers of that shape): one entry, or two with
        ``global_attention`` (the windowed layers' first). With ``storing``, only the layers
        that keep their own KV (not ``layer_kv_shared``)."""
        groups = self.kv_groups() if storing else self.window_groups()
        total = sum(c for _, _, c in groups)
        if self.global_attention is None:
            return [(self.attention, total)]
        full = sum(c for _, w, c in groups if w == math.inf)
        return [(self.attention, total - full), (self.global_attention, full)]

    def shared_attention_shapes(self) -> list[tuple[Attention, int]]:
        """(shape, KV-shared layers of that shape) (:attr:`layer_kv_shared`)."""
        full = self.attention_shapes()
        own = self.attention_shapes(storing=True)
        return [(a, n - m) for (a, n), (_, m) in zip(full, own, strict=True)]

    def window_groups(self) -> list[tuple[str, float, int]]:
        """Distinct (kind, window, layer count) groups of the softmax-attention layers.

        Window ``inf`` for full layers; linear-attention layers are not in any group. Read
        on every step, so computed once per model (a fresh list each call).
        """
        cached = self.__dict__.get("_window_groups")
        if cached is None:
            cached = tuple(self._window_groups_now())
            self.__dict__["_window_groups"] = cached     # a frozen model: never stale
        return list(cached)

    def _window_groups_now(self) -> list[tuple[str, float, int]]:
        groups: dict[tuple[str, float], int] = {}
        linear = self.layer_is_linear or (False,) * self.num_layers
        for kind, w, lin in zip(self.layer_window_kind, self.layer_window, linear, strict=True):
            if lin:
                continue
            key = ("full", math.inf) if w <= 0 else (kind, float(w))
            groups[key] = groups.get(key, 0) + 1
        return [(k, w, c) for (k, w), c in groups.items()]
