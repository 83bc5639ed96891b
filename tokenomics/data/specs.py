"""Frozen specifications: hardware and its prices, model architecture, efficiencies.

Specs hold plain floats in canonical units (B, FLOP, s, W, USD) and the source of every
catalog field. They carry no behaviour beyond validation and small derived properties; the
physics lives in the pure-function modules (:mod:`tokenomics.physics.kv`, :mod:`tokenomics.physics.params`,
:mod:`tokenomics.physics.roofline`, :mod:`tokenomics.physics.memory`, :mod:`tokenomics.physics.operators`,
:mod:`tokenomics.physics.step`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from types import MappingProxyType
from typing import Any, Literal

import numpy as np

from tokenomics.core.dtypes import PEAK_KEYS, DType, dtype
from tokenomics.core.errors import NotPublishedError, TokenomicsError
from tokenomics.core.units import as_magnitude, coerce_fields

AttentionKind = Literal["MHA", "GQA", "MQA", "MLA"]
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


@dataclass(frozen=True)
class Hardware:
    """One accelerator (per device), in canonical units.

    Attributes
    ----------
    id, name, vendor, status : str
        ``status`` is ``"shipping"``, ``"announced"`` or ``"unverified"``.
    peak_flop_per_s : Mapping[str, float]
        Dense peak matrix throughput per compute format [FLOP/s] (integer formats: op/s).
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

    def __post_init__(self) -> None:
        coerce_fields(self, _HARDWARE_UNITS)
        if self.scale_up_topology not in SCALE_UP_TOPOLOGIES:
            raise TokenomicsError(f"hardware {self.id!r}: scale_up_topology must be one of "
                                  f"{', '.join(SCALE_UP_TOPOLOGIES)}, got "
                                  f"{self.scale_up_topology!r}")
        peaks = {k: as_magnitude(v, "flop/s", f"peak_flop_per_s[{k!r}]")
                 for k, v in dict(self.peak_flop_per_s).items()}
        object.__setattr__(self, "peak_flop_per_s", MappingProxyType(peaks))
        for k, v in self.peak_flop_per_s.items():
            if k not in PEAK_KEYS:
                raise TokenomicsError(f"hardware {self.id!r}: unknown compute key {k!r}; "
                                      f"expected one of {', '.join(PEAK_KEYS)}")
            if not (v > 0 and math.isfinite(v)):
                raise TokenomicsError(f"hardware {self.id!r}: peak {k} must be > 0, got {v!r}")
        for name in ("mem_capacity_bytes", "mem_bw_bytes_per_s"):
            v = getattr(self, name)
            if not (v > 0 and math.isfinite(v)):
                raise TokenomicsError(f"hardware {self.id!r}: {name} must be > 0, got {v!r}")
        vis = self.mem_visible_bytes
        if vis is not None and not (0 < vis <= self.mem_capacity_bytes and math.isfinite(vis)):
            raise TokenomicsError(
                f"hardware {self.id!r}: mem_visible_bytes must be > 0 and at most the physical "
                f"mem_capacity_bytes ({self.mem_capacity_bytes:.6g} B), got {vis!r}")

    def __getstate__(self) -> dict[str, Any]:
        """The fields, the read-only peaks as a plain dict (a mapping proxy does not pickle:
        a deployment goes to a worker process or a Dask cluster whole)."""
        state = dict(self.__dict__)
        state["peak_flop_per_s"] = dict(self.peak_flop_per_s)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Restore :meth:`__getstate__`'s fields, the peaks read-only again."""
        self.__dict__.update(state)
        object.__setattr__(self, "peak_flop_per_s", MappingProxyType(state["peak_flop_per_s"]))

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
#: Plausibility bounds of a model's shape: most layers, widest dimension (hidden size, heads,
#: head width). Larger values are typos (1e30) or attacks (10**12 layers), not models.
MAX_LAYERS = 10_000
MAX_WIDTH = 1_000_000


def _whole(v: Any, what: str, lo: int, hi: float) -> None:
    """Raise unless ``v`` is a whole number in [lo, hi] (not a bool)."""
    ok = not isinstance(v, bool) and isinstance(v, (int, np.integer)) and lo <= v <= hi
    if not ok:
        raise TokenomicsError(f"{what} must be a whole number from {lo} to {hi:,}, got {v!r}")


@dataclass(frozen=True)
class Attention:
    """Attention block shape (one layer).

    Attributes
    ----------
    kind : {"MHA", "GQA", "MQA", "MLA"}
    num_q_heads, num_kv_heads : int
        For MLA ``num_kv_heads`` is the nominal head count of the up-projected K/V.
    head_dim : int
        Query/key head dimension (MLA: ``qk_nope_head_dim + qk_rope_head_dim``).
    v_head_dim : int
        Value head dimension.
    q_lora_rank, kv_lora_rank, qk_rope_head_dim, qk_nope_head_dim : int
        MLA ranks (0 when not MLA; ``q_lora_rank`` 0 means a direct query projection).
    qkv_bias, o_bias, qk_norm, sinks : bool
        Parameters that add to the count: projection biases, per-head Q/K norms, and
        gpt-oss's learned per-head attention sinks.
    output_gate : bool
        A sigmoid output gate per query channel (Qwen3-Next's gated attention): the query
        projection is twice as wide, :math:`2 n_q d`.
    index_n_heads, index_head_dim, index_topk : int
        DeepSeek Sparse Attention's lightning indexer (DeepSeek-V3.2-Exp): heads
        :math:`H_I`, key width :math:`d_I` (one index key of :math:`d_I` elements cached per
        token per layer) and the :math:`k` cached tokens each query attends to; 0 without DSA.
    """

    kind: AttentionKind
    num_q_heads: int
    num_kv_heads: int
    head_dim: int
    v_head_dim: int
    q_lora_rank: int = 0
    kv_lora_rank: int = 0
    qk_rope_head_dim: int = 0
    qk_nope_head_dim: int = 0
    qkv_bias: bool = False
    o_bias: bool = False
    qk_norm: bool = False
    sinks: bool = False
    output_gate: bool = False
    index_n_heads: int = 0
    index_head_dim: int = 0
    index_topk: int = 0

    def __post_init__(self) -> None:
        for name in ("num_q_heads", "num_kv_heads", "head_dim", "v_head_dim"):
            _whole(getattr(self, name), f"attention {name}", 1, MAX_WIDTH)
        for name in ("q_lora_rank", "kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim",
                     "index_n_heads", "index_head_dim", "index_topk"):
            _whole(getattr(self, name), f"attention {name}", 0, MAX_WIDTH)

    @property
    def is_sparse(self) -> bool:
        """True for DeepSeek Sparse Attention (a lightning indexer picks ``index_topk`` keys)."""
        return self.index_topk > 0

    @property
    def group_size(self) -> float:
        """Query heads per stored KV head (MLA: all query heads share one latent)."""
        if self.kind == "MLA":
            return float(self.num_q_heads)
        return self.num_q_heads / self.num_kv_heads


@dataclass(frozen=True)
class LinearAttention:
    """Gated DeltaNet linear-attention block shape (one layer; Qwen3-Next).

    Attributes
    ----------
    num_k_heads, num_v_heads : int
        Key (and query) heads :math:`n_k`, value heads :math:`n_v`
        (``linear_num_key_heads``, ``linear_num_value_heads``).
    head_k_dim, head_v_dim : int
        :math:`d_k`, :math:`d_v` (``linear_key_head_dim``, ``linear_value_head_dim``).
    conv_kernel : int
        Width :math:`K` of the short causal convolution (``linear_conv_kernel_dim``).

    Notes
    -----
    The layer keeps a fixed state per sequence instead of a KV cache:
    :func:`tokenomics.physics.formulas.gdn_state_elements_per_layer`.
    """

    num_k_heads: int
    num_v_heads: int
    head_k_dim: int
    head_v_dim: int
    conv_kernel: int

    def __post_init__(self) -> None:
        for name in ("num_k_heads", "num_v_heads", "head_k_dim", "head_v_dim", "conv_kernel"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
                raise TokenomicsError(f"linear attention {name} must be a positive integer, "
                                      f"got {v!r}")


@dataclass(frozen=True)
class MoE:
    """Mixture-of-experts FFN shape (one MoE layer).

    Attributes
    ----------
    num_experts : int
        Routed experts E.
    top_k : int
        Routed experts per token k.
    expert_intermediate_size : int
        Hidden width of one routed expert.
    num_shared_experts : int
        Always-active experts.
    shared_intermediate_size : int
        Hidden width of one shared expert.
    router_bias : bool
        A bias per expert in the router (DeepSeek's correction bias, gpt-oss).
    expert_bias : bool
        Biases inside each expert (gpt-oss).
    """

    num_experts: int
    top_k: int
    expert_intermediate_size: int
    num_shared_experts: int = 0
    shared_intermediate_size: int = 0
    router_bias: bool = False
    expert_bias: bool = False


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
    sources: Mapping[str, str] = field(default_factory=dict)
    notes: str = ""
    config: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)
    path: str = ""

    def __post_init__(self) -> None:
        n = self.num_layers
        for name in ("layer_window", "layer_window_kind", "layer_is_moe"):
            seq = getattr(self, name)
            if len(seq) != n:
                raise TokenomicsError(
                    f"model {self.id!r}: {name} has {len(seq)} entries, expected num_layers={n}")
        for name, top in (("num_layers", MAX_LAYERS), ("hidden_size", MAX_WIDTH),
                          ("vocab_size", 10**8), ("max_context", 10**9)):
            _whole(getattr(self, name), f"model {self.id!r}: {name}", 1, top)
        if self.num_dense_layers:
            _whole(self.intermediate_size, f"model {self.id!r}: intermediate_size (the "
                   f"{self.num_dense_layers} dense layers' FFN width)", 1, 16 * MAX_WIDTH)
        if self.layer_is_linear and len(self.layer_is_linear) != n:
            raise TokenomicsError(
                f"model {self.id!r}: layer_is_linear has {len(self.layer_is_linear)} entries, "
                f"expected num_layers={n} (or none for a model without linear layers)")
        if any(self.layer_is_linear) and self.linear_attention is None:
            raise TokenomicsError(f"model {self.id!r}: linear-attention layers given but no "
                                  "LinearAttention spec")
        if any(self.layer_is_moe) and self.moe is None:
            raise TokenomicsError(f"model {self.id!r}: MoE layers given but no MoE spec")
        dtype(self.weight_dtype)
        if self.expert_dtype is not None:
            dtype(self.expert_dtype)
        if self.embedding_dtype is not None:
            dtype(self.embedding_dtype)

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
        return self.num_layers - self.num_moe_layers

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


# --------------------------------------------------------------------------------------------
# Efficiencies
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Efficiency:
    r"""Achieved fractions of peak and fixed overheads.

    With every factor at its default (1, 1, 0, 0) results are the pure roofline bound.

    Attributes
    ----------
    mfu : float
        Achieved fraction of the dense peak FLOP/s in compute-bound operators, (0, 1].
    mbu : float
        Achieved fraction of peak memory bandwidth in memory-bound operators, (0, 1].
    step_overhead_s : float
        Fixed time per forward step (launches, scheduling, sampling) [s].
    layer_overhead_s : float
        Fixed time per layer per step (kernel launches that CUDA graphs do not hide) [s].
    token_overhead_s : float
        Host time per sampled token per step of one scheduler [s] (sampling, detokenising,
        building the next batch: work that grows with the sequences a step samples); each
        attention-data-parallel rank runs its own, so a step of :math:`R` sampled rows over
        :math:`d` ranks adds :math:`t_\mathrm{tok} R / d`. Default 0.
    link_efficiency : float
        Achieved fraction of scale-up and scale-out link bandwidth in collectives, (0, 1].
    collective_overhead_s : float
        Fixed software time per collective call on top of the links' latency floors [s].
    overlap : float
        Fraction of the shorter of an operator's compute and memory times hidden behind the
        longer, [0, 1]: the operator takes :math:`\max(t_c, t_m) + (1 - o)\min(t_c, t_m)`.
        1 (default) is the roofline's perfect overlap; 0 runs the two in series.
    expert_half_tokens : float
        Tokens per routed expert at which a grouped expert GEMM reaches half of ``mfu``
        [token], >= 0: at :math:`m` tokens per expert it runs at
        :math:`\mathrm{mfu}\, m / (m + m_{1/2})`. 0 (default): full ``mfu`` at any size.
    expert_tile_tokens : float
        Rows of the tile a grouped expert GEMM computes in [token], >= 0: an expert that
        receives :math:`m` tokens is computed as if it had
        :math:`m_\mathrm{eff} = (m^4 + T^4)^{1/4}` (about :math:`\max(m, T)`: a tile of
        :math:`T` rows runs whole however few of them are filled), so its compute runs at
        :math:`\mathrm{mfu}\, m / m_\mathrm{eff}` and at a few tokens per expert the
        operator is bound by reading the experts' weights, as measured; far above :math:`T`
        the penalty vanishes. 0 (default): full ``mfu`` at any size.
    attention_mfu_scale : float
        Attention kernels' (scores and weighted values) fraction of peak relative to ``mfu``,
        > 0; ``mfu x attention_mfu_scale`` must not exceed 1. Default 1.
    request_overhead_s : float
        Fixed time a request spends outside the forward steps before its first token
        (HTTP, tokenisation, scheduling) [s], added to TTFT by
        :func:`tokenomics.serving.steady.steady_state`. Default 0.
    fp4_mfu_scale : float
        Matrix products at a 4-bit floating-point compute format (NVFP4, MXFP4) run at
        ``mfu x fp4_mfu_scale``, (0, 1]: block-scaled FP4 GEMMs reach a smaller share of
        their (doubled) peak than FP8 and BF16 ones. Default 1.
    expert_imbalance : float
        Under expert parallelism (``ep > 1``) the busiest rank's routed-expert tokens exceed
        the mean rank's by this fraction, >= 0, and that rank sets the step: the routed
        experts' FLOPs and activation bytes are multiplied by :math:`1 + \iota` (their
        weight bytes are not: every rank reads its own experts). Real routers are not
        uniform (DeepSeek's EPLB exists to even out hot experts). Default 0.
    collective_overlap : float
        Fraction of the step's collective time the engine hides behind its compute and
        memory time (communication on its own streams, overlapped kernels), [0, 1]. It
        combines with the layout's published overlap (the deployment's ``comm_overlap``, e.g.
        a two-batch overlap) into the hidden share
        :math:`\omega = 1 - (1 - \omega_\mathrm{layout})(1 - \omega_\mathrm{eff})`, of which
        at most the roofline time is hidden. 1 (default) is the bound's: a step takes
        :math:`\max(t_\mathrm{roof}, t_\mathrm{comm})`, what no implementation can beat;
        0 runs the collectives after the kernels, as most engines do without a published
        overlap scheme.
    name : str
        The preset's name (``"calibrated"`` for the committed fit); not compared. Every
        result carries :attr:`label` so that a table says what produced it.
    stack : str
        The serving stack these values are for (``"nvidia-trtllm"``, ``"amd-vllm"``...),
        ``"pooled"`` for the pooled fit of a stack the calibration did not see, or ``""``
        (not stack-specific); not compared.
    stacks : mapping, optional
        Values of a calibration fitted with partial pooling by serving stack and hardware
        family: ``"<stack>|<hardware family>" -> {field: value}``, with ``""`` for a stack
        or family the fit did not see (the pooled values under ``"|"``). A
        :class:`~tokenomics.Deployment` takes its own values from such an efficiency
        (:meth:`for_stack`); not compared.
    families : mapping, optional
        Hardware id -> hardware family, for :attr:`stacks`; not compared.

    Notes
    -----
    **The library's one default is the bound.** A :class:`~tokenomics.Deployment` takes
    :data:`ROOFLINE` unless given an efficiency, and every function (``decode``,
    ``steady_state``, ``frontier``, ``best_at``, ``cheapest_at``) and every CLI command uses
    the deployment's: the calibrated forecast is asked for by name
    (``efficiency=tk.efficiency_presets()["calibrated"]``, ``efficiency="calibrated"``,
    ``--efficiency calibrated``). A bound has no fitted parameter that a refit can move.
    """

    mfu: float = 1.0
    mbu: float = 1.0
    step_overhead_s: float = 0.0
    layer_overhead_s: float = 0.0
    token_overhead_s: float = 0.0
    link_efficiency: float = 1.0
    collective_overhead_s: float = 0.0
    overlap: float = 1.0
    expert_half_tokens: float = 0.0
    expert_tile_tokens: float = 0.0
    attention_mfu_scale: float = 1.0
    request_overhead_s: float = 0.0
    fp4_mfu_scale: float = 1.0
    expert_imbalance: float = 0.0
    collective_overlap: float = 1.0
    name: str = field(default="", compare=False)
    stack: str = field(default="", compare=False)
    stacks: Any = field(default=None, compare=False, repr=False)
    families: Any = field(default=None, compare=False, repr=False)

    @property
    def label(self) -> str:
        """What produced a result: the preset's ``name`` (``"calibrated"`` for the committed
        fit), ``"roofline"`` for the bound, else ``"custom"``."""
        if self.name:
            return self.name
        return "roofline" if self == ROOFLINE else "custom"

    def for_stack(self, stack: str, hardware: str = "") -> Efficiency:
        """The values for a serving stack (``"<vendor>-<engine>"``) on a device (its catalog
        id): the fit's own for the stack and the device's family where :attr:`stacks` has
        them, the pooled ones for what it has not seen; without :attr:`stacks`, this
        efficiency unchanged. :attr:`stack` then names what was used
        (``"<stack>|<family>"``, an unseen part empty).

        Examples
        --------
        >>> e = Efficiency(mbu=0.8, stacks={"|": {"mbu": 0.8}, "amd-vllm|": {"mbu": 0.6}})
        >>> e.for_stack("amd-vllm").mbu, e.for_stack("intel-tgi").stack
        (0.6, '|')
        """
        if not self.stacks:
            return self
        if not isinstance(stack, str) or not isinstance(hardware, str):
            raise TokenomicsError(f"a stack is a string '<vendor>-<engine>' and a hardware a "
                                  f"catalog id, got {stack!r}, {hardware!r}")
        fam = (self.families or {}).get(hardware, "")
        for key in (f"{stack}|{fam}", f"{stack}|", f"|{fam}", "|"):
            if key in self.stacks:
                return replace(self, **self.stacks[key], stack=key)
        raise TokenomicsError("efficiency stacks has no pooled values (key '|')")

    def __post_init__(self) -> None:
        coerce_fields(self, {"step_overhead_s": "s", "layer_overhead_s": "s",
                       "token_overhead_s": "s",
                       "collective_overhead_s": "s", "request_overhead_s": "s"})
        if not isinstance(self.name, str):
            raise TokenomicsError(f"efficiency name must be a string, got {self.name!r}")
        if not isinstance(self.stack, str):
            raise TokenomicsError(f"efficiency stack must be a string, got {self.stack!r}")
        self._check_stacks()
        for f in fields(self):
            if f.name in ("name", "stack", "stacks", "families"):
                continue
            v = getattr(self, f.name)
            if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
                raise TokenomicsError(f"efficiency {f.name} must be a number, got {v!r}")
        self._check_ranges()

    def _check_stacks(self) -> None:
        """``stacks`` maps ``"<stack>|<family>"`` to known fields (the pooled under ``"|"``)."""
        if self.stacks is not None:
            if not isinstance(self.stacks, Mapping) or "|" not in self.stacks or not all(
                    isinstance(k, str) and isinstance(v, Mapping)
                    for k, v in self.stacks.items()):
                raise TokenomicsError("efficiency stacks must map each '<stack>|<family>' "
                                      "to a mapping of field values, the pooled ones "
                                      "under '|'")
            known = {f.name for f in fields(self)} - {"name", "stack", "stacks", "families"}
            bad = {k for v in self.stacks.values() for k in v} - known
            if bad:
                raise TokenomicsError(f"efficiency stacks name unknown fields: "
                                      f"{', '.join(sorted(bad))}")
            object.__setattr__(self, "stacks", {k: dict(v) for k, v in self.stacks.items()})
            if self.families is not None:
                object.__setattr__(self, "families", {str(k): str(v)
                                                      for k, v in dict(self.families).items()})

    def _check_ranges(self) -> None:
        """Every field within its physical range (fractions, times, counts)."""
        for name in ("mfu", "mbu", "link_efficiency", "fp4_mfu_scale"):
            v = getattr(self, name)
            if not (0.0 < v <= 1.0):
                raise TokenomicsError(f"efficiency {name} must be in (0, 1], got {v!r}")
        if not (0.0 <= self.overlap <= 1.0):
            raise TokenomicsError(f"efficiency overlap must be in [0, 1] (1: the roofline's "
                                  f"perfect overlap), got {self.overlap!r}")
        if not (0.0 <= self.collective_overlap <= 1.0):
            raise TokenomicsError(f"efficiency collective_overlap must be in [0, 1] (1: the "
                                  f"bound hides every collective behind compute), got "
                                  f"{self.collective_overlap!r}")
        if not (0.0 < self.attention_mfu_scale and self.mfu * self.attention_mfu_scale <= 1.0):
            raise TokenomicsError(
                f"efficiency attention_mfu_scale must be > 0 with mfu x attention_mfu_scale "
                f"<= 1, got {self.attention_mfu_scale!r} at mfu {self.mfu!r}")
        for name in ("step_overhead_s", "layer_overhead_s", "collective_overhead_s",
                     "request_overhead_s", "token_overhead_s"):
            v = getattr(self, name)
            if not (v >= 0.0 and math.isfinite(v)):
                raise TokenomicsError(f"efficiency {name} must be >= 0 seconds, got {v!r}")
        if not (self.expert_imbalance >= 0.0 and math.isfinite(self.expert_imbalance)):
            raise TokenomicsError(f"efficiency expert_imbalance must be >= 0 (the busiest "
                                  f"expert-parallel rank's excess load over the mean), got "
                                  f"{self.expert_imbalance!r}")
        if not (self.expert_tile_tokens >= 0.0 and math.isfinite(self.expert_tile_tokens)):
            raise TokenomicsError(f"efficiency expert_tile_tokens must be >= 0 tokens, got "
                                  f"{self.expert_tile_tokens!r}")
        if not (self.expert_half_tokens >= 0.0 and math.isfinite(self.expert_half_tokens)):
            raise TokenomicsError(f"efficiency expert_half_tokens must be >= 0 tokens, got "
                                  f"{self.expert_half_tokens!r}")


#: The pure roofline bound: every efficiency at 1, no overhead.
ROOFLINE = Efficiency()
