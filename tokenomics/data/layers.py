"""The shapes of a model's layers: attention, linear attention, mixture of experts.

Frozen value objects a :class:`~tokenomics.data.specs.Model` is built from, each validated
on construction, with the plausibility bounds of a model's shape. Re-exported by
:mod:`tokenomics.data.specs`, where they were first defined.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from tokenomics.core.dtypes import dtype
from tokenomics.core.errors import TokenomicsError

AttentionKind = Literal["MHA", "GQA", "MQA", "MLA"]

#: Plausibility bounds of a model's shape: most layers, widest dimension (hidden size, heads,
#: head width). Larger values are typos (1e30) or attacks (10**12 layers), not models.
MAX_LAYERS = 10_000
MAX_WIDTH = 1_000_000


def check_whole(v: Any, what: str, lo: int, hi: float) -> None:
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
    qk_norm_full : bool
        With ``qk_norm``, one norm over the whole projected query and key (MiniMax-M2's
        ``qk_norm_type = "per_layer"``): :math:`(n_q + n_{kv}) d` scales instead of the
        per-head :math:`2 d`.
    output_gate : bool
        A sigmoid output gate per query channel (Qwen3-Next's gated attention): the query
        projection is twice as wide, :math:`2 n_q d`.
    index_n_heads, index_head_dim, index_topk : int
        DeepSeek Sparse Attention's lightning indexer (DeepSeek-V3.2-Exp): heads
        :math:`H_I`, key width :math:`d_I` (one index key of :math:`d_I` elements cached per
        token per layer) and the :math:`k` cached tokens each query attends to; 0 without DSA.
    k_eq_v : bool
        Keys double as values (Gemma 4's full-attention layers, ``attention_k_eq_v``): no
        value projection, the values are the key projection's output (normalised, not
        rotated). The cache still holds both, keys rotated and values not, so the KV bytes
        per token are those of separate K and V; only the parameters and the projection's
        FLOPs lose the value projection. Needs ``v_head_dim == head_dim``.
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
    qk_norm_full: bool = False
    index_n_heads: int = 0
    index_head_dim: int = 0
    index_topk: int = 0
    k_eq_v: bool = False

    def __post_init__(self) -> None:
        for name in ("num_q_heads", "num_kv_heads", "head_dim", "v_head_dim"):
            check_whole(getattr(self, name), f"attention {name}", 1, MAX_WIDTH)
        if self.k_eq_v and (self.kind == "MLA" or self.v_head_dim != self.head_dim):
            raise TokenomicsError(
                f"attention k_eq_v (keys used as values) needs a non-MLA attention with "
                f"v_head_dim == head_dim, got {self.kind} with {self.v_head_dim} and "
                f"{self.head_dim}")
        for name in ("q_lora_rank", "kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim",
                     "index_n_heads", "index_head_dim", "index_topk"):
            check_whole(getattr(self, name), f"attention {name}", 0, MAX_WIDTH)

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


#: The linear-attention recurrences a :class:`LinearAttention` may be.
LINEAR_KINDS = ("gated_deltanet", "mamba2")


@dataclass(frozen=True)
class LinearAttention:
    """A linear-attention (state-space) block's shape, one layer: Gated DeltaNet (Qwen3-Next)
    or Mamba-2 (Nemotron-H).

    Mamba-2 maps onto the same shape: its ``n_groups`` groups of ``ssm_state_size`` play the
    key heads (B and C are per group, as k and q are per key head), its ``mamba_num_heads``
    heads of ``mamba_head_dim`` the value heads; the state is one :math:`d_k \\times d_v`
    matrix per value head in both.

    Attributes
    ----------
    num_k_heads, num_v_heads : int
        Key (and query) heads :math:`n_k`, value heads :math:`n_v`
        (``linear_num_key_heads``, ``linear_num_value_heads``).
    head_k_dim, head_v_dim : int
        :math:`d_k`, :math:`d_v` (``linear_key_head_dim``, ``linear_value_head_dim``).
    conv_kernel : int
        Width :math:`K` of the short causal convolution (``linear_conv_kernel_dim``).
    kind : {"gated_deltanet", "mamba2"}
        Which recurrence (they differ in FLOPs per token and in their projections).
    state_dtype : str or None
        Format the recurrent state is kept in when it differs from the activations (Mamba-2
        checkpoints state ``mamba_ssm_cache_dtype = "float32"``); None: the activation format.
    conv_bias : bool
        A bias on the convolution (Mamba-2's ``use_conv_bias``).

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
    kind: str = "gated_deltanet"
    state_dtype: str | None = None
    conv_bias: bool = False

    def __post_init__(self) -> None:
        for name in ("num_k_heads", "num_v_heads", "head_k_dim", "head_v_dim", "conv_kernel"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
                raise TokenomicsError(f"linear attention {name} must be a positive integer, "
                                      f"got {v!r}")
        if self.kind not in LINEAR_KINDS:
            raise TokenomicsError(f"linear attention kind must be one of {LINEAR_KINDS}, got "
                                  f"{self.kind!r}")
        if self.state_dtype is not None:
            dtype(self.state_dtype)


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
    n_group, topk_group : int
        Group-limited routing (DeepSeek-V3's ``n_group`` 8 / ``topk_group`` 4): the experts
        fall in ``n_group`` groups and a token's ``top_k`` experts come from at most
        ``topk_group`` of them; 0 where the router is not group-limited. Placed one group
        per scale-up domain or fewer, a token crosses to at most ``topk_group`` domains.
    router_scales : bool
        Learned scales around the router (Gemma 4's ``Gemma4TextRouter``): one per hidden
        dimension on its input and one per expert on its output weights, :math:`h + E`
        parameters a layer beside the :math:`E h` projection.
    latent_size : int
        Width :math:`\\ell` the routed experts compute in (Nemotron 3 Super's
        ``moe_latent_size``, "latent MoE"): each token is projected from the hidden size to
        :math:`\\ell` once before the experts and back once after (:math:`2 h \\ell`
        parameters a layer, no biases), the experts map :math:`\\ell \\to I \\to \\ell`, and
        tokens cross expert parallelism at :math:`\\ell`; the router and the shared experts
        read the hidden state. A tensor-parallel MoE layer's all-reduce is still counted at
        the hidden width, once, as for any MoE layer (where an engine reduces the experts'
        latent output apart from the shared expert's, it moves less). 0 (the default): the
        experts compute at the hidden size.
    """

    num_experts: int
    top_k: int
    expert_intermediate_size: int
    num_shared_experts: int = 0
    shared_intermediate_size: int = 0
    router_bias: bool = False
    expert_bias: bool = False
    n_group: int = 0
    topk_group: int = 0
    router_scales: bool = False
    latent_size: int = 0

    def __post_init__(self) -> None:
        check_whole(self.latent_size, "MoE latent_size", 0, MAX_WIDTH)
