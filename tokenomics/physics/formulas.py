"""The per-unit cost formulas of a transformer step, each written once.

Every later formula is a product of these with counts (tokens, layers, pairs, batch): the
per-operator costs (:mod:`tokenomics.physics.operators`), the roofline helpers
(:mod:`tokenomics.physics.roofline`), the KV sizes (:mod:`tokenomics.physics.kv`), the
frontier's kinks (:mod:`tokenomics.pareto.curves`) and the spreadsheet and SymPy forms
(:mod:`tokenomics.surfaces.export`) all call them, so changing one changes every stage.

The functions marked *symbolic* use arithmetic only (``+ - * / **``), so they take numbers,
numpy arrays or SymPy expressions alike; that is how the spreadsheet's formulas and the
library's numbers share one source.

Notes
-----
With query heads :math:`n_q`, KV heads :math:`n_{kv}`, key and value head widths :math:`d_k`,
:math:`d_v`, and for MLA the latent rank :math:`r_{kv}`, the decoupled RoPE width
:math:`d_{rope}` and the no-RoPE key width :math:`d_{nope}`:

==================================  ===================================================
attention FLOPs per (query, key)    :math:`2 n_q (d_k + d_v)` (scores and weighted values)
MLA absorbed, per pair              :math:`2 n_q (2 r_{kv} + d_{rope})` (attention in the latent)
MLA up-projection, per cached token :math:`2 r_{kv} n_q (d_{nope} + d_v)` (expanded form)
KV elements per token per layer     :math:`n_{kv} (d_k + d_v)`; MLA :math:`r_{kv} + d_{rope}`
query/output elements per token     :math:`n_q (d_k + d_v)` per layer
pairs of positions c+1..c+T         :math:`S(c+T) - S(c)`, :math:`S(n) = \\sum_{i \\le n}` span(i)
distinct experts of n tokens        :math:`E (1 - (1 - k/E)^n)` (uniform top-k routing)
==================================  ===================================================

References
----------
.. [1] A. Vaswani et al., "Attention Is All You Need", NeurIPS 2017 (scores and values).
.. [2] DeepSeek-AI, "DeepSeek-V2", arXiv:2405.04434, 2024 (MLA latent cache, absorption).
.. [3] W. Fedus, B. Zoph, N. Shazeer, "Switch Transformers", JMLR 23, 2022 (top-k routing;
   the distinct-expert expectation assumes independent uniform routing).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from tokenomics.core.errors import TokenomicsError
from tokenomics.data.specs import Attention


# --------------------------------------------------------------------------------------------
# Attention
# --------------------------------------------------------------------------------------------
def attention_pair_flops(att: Attention) -> float:
    """FLOPs of one (query, key) pair in one layer, uncompressed attention [FLOP].

    :math:`2 n_q (d_k + d_v)`: a multiply-add for each score element and each weighted-value
    element. MLA in its expanded form costs the same per pair (with :math:`d_k` its full key
    width, no-RoPE plus RoPE parts).

    Examples
    --------
    >>> from tokenomics.data.catalog import model
    >>> attention_pair_flops(model("llama-3.1-70b").attention)   # 2 * 64 * (128 + 128)
    32768.0
    """
    return 2.0 * att.num_q_heads * (att.head_dim + att.v_head_dim)


def mla_absorbed_pair_flops(att: Attention) -> float:
    """FLOPs of one (query, key) pair in one layer, MLA with absorbed projections [FLOP].

    :math:`2 n_q (2 r_{kv} + d_{rope})`: scores against the :math:`r_{kv} + d_{rope}` latent and
    values read back in the :math:`r_{kv}`-dim latent, as decode kernels run MLA.

    Examples
    --------
    >>> from tokenomics.data.catalog import model
    >>> mla_absorbed_pair_flops(model("deepseek-v3").attention)   # 2 * 128 * (1024 + 64)
    278528.0
    """
    return 2.0 * att.num_q_heads * (2 * att.kv_lora_rank + att.qk_rope_head_dim)


def mla_up_projection_flops_per_token(att: Attention) -> float:
    """FLOPs to up-project one cached token's MLA latent to keys and values, one layer [FLOP].

    :math:`2 r_{kv} n_q (d_{nope} + d_v)`, paid per cached token read in the expanded form
    (as prefill kernels run MLA).

    Examples
    --------
    >>> from tokenomics.data.catalog import model
    >>> mla_up_projection_flops_per_token(model("deepseek-v3").attention)  # 2*512*128*256
    33554432.0
    """
    return 2.0 * att.kv_lora_rank * att.num_q_heads * (att.qk_nope_head_dim + att.v_head_dim)


def kv_elements_per_token_per_layer(att: Attention) -> float:
    """Elements one token stores in one layer's KV cache [element].

    :math:`n_{kv} (d_k + d_v)` (MHA/GQA/MQA), or :math:`r_{kv} + d_{rope}` for MLA (the latent
    plus the decoupled RoPE key, shared by all heads). Times the KV format's bytes per element
    it is :func:`tokenomics.physics.kv.kv_bytes_per_token_per_layer`.

    Examples
    --------
    >>> from tokenomics.data.catalog import model
    >>> kv_elements_per_token_per_layer(model("llama-3.1-70b").attention)  # 8 * (128 + 128)
    2048.0
    >>> kv_elements_per_token_per_layer(model("deepseek-v3").attention)    # 512 + 64
    576.0
    >>> from dataclasses import replace                 # DeepSeek-V3.2-Exp: + index key 128
    >>> kv_elements_per_token_per_layer(replace(model("deepseek-v3").attention,
    ...     index_n_heads=64, index_head_dim=128, index_topk=2048))
    704.0

    With DeepSeek Sparse Attention the lightning indexer's key (:math:`d_I` elements per
    token per layer) is cached beside the latent and is counted here too.
    """
    if att.kind == "MLA":
        return float(att.kv_lora_rank + att.qk_rope_head_dim + att.index_head_dim)
    return float(att.num_kv_heads * (att.head_dim + att.v_head_dim))


def attention_io_elements_per_token(att: Attention) -> float:
    """Activation elements attention reads and writes per new token per layer [element].

    :math:`n_q (d_k + d_v)`: the query in, the output out.
    """
    return float(att.num_q_heads * (att.head_dim + att.v_head_dim))


def attention_pair_flops_as_run(att: Attention) -> float:
    """FLOPs per (query, key) pair in the form decode kernels run [FLOP].

    :func:`mla_absorbed_pair_flops` for MLA, :func:`attention_pair_flops` otherwise: the
    numerator of :func:`tokenomics.physics.roofline.attention_decode_intensity`.
    """
    return mla_absorbed_pair_flops(att) if att.kind == "MLA" else attention_pair_flops(att)


# --------------------------------------------------------------------------------------------
# Which (query, key) pairs a step computes, and which cached tokens it reads
# --------------------------------------------------------------------------------------------
def span_sum(kind: str, window: float, n: Any) -> np.ndarray:
    """Pairs of the first ``n`` positions of a layer, :math:`\\sum_{i=1}^{n} \\mathrm{span}(i)`.

    Closed forms: full (causal) :math:`n(n+1)/2`; sliding window :math:`W`: the causal sum up
    to :math:`W`, then :math:`W` per position; chunked attention (chunks of :math:`W`):
    :math:`q W (W+1)/2 + r (r+1)/2` with :math:`n = q W + r`. A step's new tokens at positions
    :math:`c+1..c+T` compute :math:`S(c+T) - S(c)` pairs.

    Examples
    --------
    >>> float(span_sum("full", float("inf"), 4))              # 1 + 2 + 3 + 4
    10.0
    >>> float(span_sum("sliding", 2.0, 4))                    # 1 + 2 + 2 + 2
    7.0
    >>> float(span_sum("chunked", 3.0, 4))                    # 1 + 2 + 3 + 1
    7.0
    """
    n = np.asarray(n, float)
    if kind == "full" or not np.isfinite(window):
        return n * (n + 1.0) / 2.0
    w = float(window)
    if kind == "sliding":
        return np.where(n <= w, n * (n + 1.0) / 2.0, w * (w + 1.0) / 2.0 + (n - w) * w)
    q = np.floor(n / w)
    r = n - q * w
    return q * w * (w + 1.0) / 2.0 + r * (r + 1.0) / 2.0


def kv_read_tokens(kind: str, window: float, cached: Any) -> np.ndarray:
    """Cached tokens a step's new tokens read in one layer [token].

    All ``c`` (full), :math:`\\min(c, W)` (sliding window), :math:`c \\bmod W` (chunked: the
    current chunk's earlier tokens).

    Examples
    --------
    >>> float(kv_read_tokens("sliding", 4096.0, 10_000))
    4096.0
    """
    c = np.asarray(cached, float)
    if kind == "full" or not np.isfinite(window):
        return c
    if kind == "sliding":
        return np.minimum(c, window)
    return np.mod(c, window)


# --------------------------------------------------------------------------------------------
# Mixture of experts
# --------------------------------------------------------------------------------------------
def distinct_experts(num_experts: Any, top_k: Any, tokens: Any) -> Any:
    """Expected distinct routed experts ``tokens`` tokens touch in one layer (*symbolic*).

    :math:`E (1 - (1 - k/E)^n)`: each token picks :math:`k` of :math:`E` experts uniformly and
    independently, so an expert is missed by all :math:`n` tokens with probability
    :math:`(1 - k/E)^n`. It is :math:`k` at one token and rises towards :math:`E`; with
    :math:`k = E` it is :math:`E` for every :math:`n \\ge 1`. Unvalidated: the public,
    checked form is :func:`tokenomics.physics.operators.expected_active_experts`.

    Examples
    --------
    >>> distinct_experts(256, 8, 1)
    8.0
    >>> round(distinct_experts(256, 8, 64), 1)        # DeepSeek-V3, 64 tokens
    222.4
    """
    if isinstance(tokens, (list, tuple)):
        tokens = np.asarray(tokens, float)
    return num_experts * (1 - (1 - top_k / num_experts) ** tokens)


def tokens_for_distinct_fraction(num_experts: int, top_k: int, fraction: float) -> float:
    """Tokens at which the expected distinct experts reach ``fraction`` of all [token].

    The inverse of :func:`distinct_experts`:
    :math:`n = \\ln(1 - f) / \\ln(1 - k/E)` for :math:`0 \\le f < 1` and :math:`k < E`.

    Examples
    --------
    >>> round(tokens_for_distinct_fraction(256, 8, 0.5), 2)   # ln 0.5 / ln(248/256)
    21.83
    """
    if not (0.0 <= fraction < 1.0):
        raise TokenomicsError(f"fraction must be in [0, 1), got {fraction!r}")
    if top_k >= num_experts:
        raise TokenomicsError(
            "every expert is active from the first token when top_k >= num_experts")
    return math.log(1.0 - fraction) / math.log(1.0 - top_k / num_experts)


# --------------------------------------------------------------------------------------------
# Linear attention (Gated DeltaNet) and DeepSeek Sparse Attention: per-unit laws
# --------------------------------------------------------------------------------------------
def gdn_state_elements_per_layer(num_k_heads: Any, num_v_heads: Any, head_k_dim: Any,
                                 head_v_dim: Any, conv_kernel: Any) -> Any:
    """Elements of one sequence's fixed state in one Gated DeltaNet layer (*symbolic*) [element].

    :math:`n_v d_k d_v + (K - 1)(2 n_k d_k + n_v d_v)`: the recurrent state (one
    :math:`d_k \\times d_v` matrix per value head) plus the short causal convolution's last
    :math:`K - 1` inputs over the q, k and v channels. It does not grow with the context.

    Parameters
    ----------
    num_k_heads, num_v_heads : int
        Key (and query) heads, value heads (``linear_num_key_heads``, ``linear_num_value_heads``).
    head_k_dim, head_v_dim : int
        ``linear_key_head_dim``, ``linear_value_head_dim``.
    conv_kernel : int
        ``linear_conv_kernel_dim`` K.

    Returns
    -------
    int or float
        [element] per sequence per layer.

    References
    ----------
    .. [1] S. Yang, J. Kautz, A. Hatamizadeh, "Gated Delta Networks: Improving Mamba2 with
       Delta Rule", ICLR 2025, arXiv:2412.06464.

    Examples
    --------
    >>> gdn_state_elements_per_layer(16, 32, 128, 128, 4)  # Qwen3-Next: 524288 + 3 * 8192
    548864
    """
    conv_channels = 2 * num_k_heads * head_k_dim + num_v_heads * head_v_dim
    return num_v_heads * head_k_dim * head_v_dim + (conv_kernel - 1) * conv_channels


def gdn_flops_per_token_per_layer(num_k_heads: Any, num_v_heads: Any, head_k_dim: Any,
                                  head_v_dim: Any, conv_kernel: Any) -> Any:
    """FLOPs of one token's Gated DeltaNet recurrence in one layer, projections excluded.

    :math:`7 n_v d_k d_v + 2 K (2 n_k d_k + n_v d_v)` (*symbolic*) [FLOP]: per value head the
    gated decay :math:`S \\leftarrow \\alpha S` (:math:`d_k d_v`), the read-out
    :math:`S^\\top k`, the rank-one delta update :math:`S \\mathrel{+}= k\\,\\Delta v^\\top` and
    the output :math:`S^\\top q` (:math:`2 d_k d_v` each), plus the depthwise convolution
    (:math:`2K` per channel). Linear in the state size and independent of the context.

    References
    ----------
    .. [1] S. Yang, J. Kautz, A. Hatamizadeh, "Gated Delta Networks", arXiv:2412.06464, 2024
       (the recurrent form, eq. 10).

    Examples
    --------
    >>> gdn_flops_per_token_per_layer(16, 32, 128, 128, 4)  # 7*524288 + 8*8192
    3735552
    """
    conv_channels = 2 * num_k_heads * head_k_dim + num_v_heads * head_v_dim
    return 7 * num_v_heads * head_k_dim * head_v_dim + 2 * conv_kernel * conv_channels


def mamba2_flops_per_token_per_layer(num_groups: Any, num_heads: Any, state_size: Any,
                                     head_dim: Any, conv_kernel: Any) -> Any:
    """FLOPs of one token's Mamba-2 recurrence in one layer, projections excluded.

    :math:`5 n_h N P + 2 K (2 G N + n_h P)` (*symbolic*) [FLOP], with :math:`G` groups of
    state size :math:`N` and :math:`n_h` heads of :math:`P`: per head the decay
    :math:`h \\leftarrow e^{\\Delta A} h` (:math:`N P`), the input
    :math:`h \\mathrel{+}= \\Delta\\, x B^\\top` (:math:`2 N P`) and the output
    :math:`y = h C` (:math:`2 N P`), plus the depthwise convolution over x, B and C
    (:math:`2K` per channel). Gated DeltaNet's delta rule reads the state once more
    (:func:`gdn_flops_per_token_per_layer`, :math:`7 n_v d_k d_v`).

    References
    ----------
    .. [1] T. Dao, A. Gu, "Transformers are SSMs: Generalized Models and Efficient Algorithms
       Through Structured State Space Duality", ICML 2024, arXiv:2405.21060 (the recurrent
       form of the SSD layer).

    Examples
    --------
    >>> mamba2_flops_per_token_per_layer(8, 64, 128, 64, 4)  # 5*524288 + 8*6144
    2670592
    """
    conv_channels = 2 * num_groups * state_size + num_heads * head_dim
    return 5 * num_heads * state_size * head_dim + 2 * conv_kernel * conv_channels


def dsa_indexer_flops_per_query(index_n_heads: Any, index_head_dim: Any, cached: Any) -> Any:
    """FLOPs of the DeepSeek Sparse Attention lightning indexer for one query, one layer.

    :math:`2 H_I d_I c` (*symbolic*) [FLOP]: every one of the ``cached`` tokens is scored
    by each of the :math:`H_I` indexer heads against its :math:`d_I`-element index key
    (the per-head weights and ReLU are lower order and not counted).

    References
    ----------
    .. [1] DeepSeek-AI, "DeepSeek-V3.2-Exp: Boosting Long-Context Efficiency with DeepSeek
       Sparse Attention", 2025, §2.1 (the lightning indexer); config.json ``index_n_heads``,
       ``index_head_dim``.

    Examples
    --------
    >>> dsa_indexer_flops_per_query(64, 128, 10_000)   # 2 * 64 * 128 * 10,000
    163840000
    """
    return 2 * index_n_heads * index_head_dim * cached


def dsa_read_tokens(cached: Any, topk: float) -> np.ndarray:
    """Cached latent entries one DSA query attends to in one layer [token].

    :math:`\\min(c, k)` with :math:`k` = ``index_topk`` (2048 in DeepSeek-V3.2-Exp): the
    indexer keeps the top-k cached tokens, so attention's reads and pair FLOPs stop growing
    at k while the indexer's (:func:`dsa_indexer_flops_per_query`) keep growing with c.

    Examples
    --------
    >>> float(dsa_read_tokens(100_000, 2048))
    2048.0
    """
    return np.minimum(np.asarray(cached, float), float(topk))
