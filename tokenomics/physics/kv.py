"""KV-cache bytes: per token, per layer, and for a context (windows and chunks honoured).

Notes
-----
Bytes stored per token per layer, with :math:`b` the KV format's effective bytes per element:

* MHA/GQA/MQA: :math:`n_{kv} (d_k + d_v) b` (i.e. :math:`2 n_{kv} d b` when
  :math:`d_k = d_v = d`);
* MLA: :math:`(r_{kv} + d_{rope}) b`: the compressed latent plus the decoupled RoPE key,
  shared by all heads (DeepSeek-V2 §2.1).

A layer with a sliding window of :math:`W` tokens holds :math:`\\min(C, W)` tokens of a
:math:`C`-token context; a chunked-attention layer (Llama 4) needs at most its chunk,
:math:`\\min(C, W)`. Full-attention layers hold all :math:`C`.

References
----------
.. [1] DeepSeek-AI, "DeepSeek-V2: A Strong, Economical, and Efficient Mixture-of-Experts
   Language Model", arXiv:2405.04434, 2024.
.. [2] W. Kwon et al., "Efficient Memory Management for Large Language Model Serving with
   PagedAttention", SOSP 2023, arXiv:2309.06180 (OPT-13B: ~800 KB per token).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tokenomics.core import checks as V
from tokenomics.core.dtypes import bytes_per_element
from tokenomics.core.errors import TokenomicsError
from tokenomics.data.boundary import inputs
from tokenomics.data.specs import Model
from tokenomics.physics.formulas import (
    gdn_state_elements_per_layer,
    kv_elements_per_token_per_layer,
)


@inputs(model="model")
def kv_bytes_per_token_per_layer(model: Model, kv_dtype: str = "bf16") -> float:
    """KV bytes one token stores in one layer [B/token/layer].

    Parameters
    ----------
    model : Model
    kv_dtype : str

    Returns
    -------
    float
        :math:`n_{kv}(d_k + d_v) b` (standard) or :math:`(r_{kv} + d_{rope}) b` (MLA) [B].

    References
    ----------
    .. [1] DeepSeek-AI, "DeepSeek-V2", arXiv:2405.04434, 2024 (MLA latent cache).

    Examples
    --------
    >>> from tokenomics.data.catalog import model
    >>> kv_bytes_per_token_per_layer(model("llama-3.1-70b"))  # 2 * 8 * 128 * 2
    4096.0

    Notes
    -----
    A model whose full layers have their own shape (``global_attention``, Gemma 4) has two
    figures; this is its windowed layers' (``model.attention``), and
    :func:`kv_bytes_per_token` and :func:`kv_cache_bytes` sum each group at its own.
    """
    return float(kv_elements_per_token_per_layer(model.attention) * bytes_per_element(kv_dtype))


@inputs(model="model")
def kv_bytes_per_token(model: Model, kv_dtype: str = "bf16") -> float:
    """KV bytes per token over all softmax-attention layers, each at full attention [B/token].

    This is the figure usually quoted ("320 KB per token"); windows are ignored here and
    honoured by :func:`kv_cache_bytes`. Linear-attention (Gated DeltaNet) layers store no
    per-token KV and are not counted: their fixed state per sequence is
    :func:`linear_state_bytes_per_sequence`, which :func:`kv_cache_bytes` adds once per
    sequence.

    Parameters
    ----------
    model : Model
    kv_dtype : str
        KV-cache format (``"bf16"``, ``"fp8"``, ``"int8"``...).

    Returns
    -------
    float
        [B/token]

    References
    ----------
    .. [1] J. Austin et al., "How to Scale Your Model", 2025, "All About Transformer Inference".
    .. [2] DeepSeek-AI, "DeepSeek-V2", arXiv:2405.04434, 2024 (MLA latent cache).

    Examples
    --------
    >>> from tokenomics.data.catalog import model
    >>> kv_bytes_per_token(model("llama-3.1-70b"))  # 2*80*8*128*2 (S10)
    327680.0
    >>> kv_bytes_per_token(model("deepseek-v3"))    # (512+64)*61*2, MLA latent
    70272.0
    >>> kv_bytes_per_token(model("qwen3-next-80b-a3b"))  # 12 full layers * 2*2*256 * 2 B
    24576.0

    Layers that read an earlier layer's KV (``layer_kv_shared``) add nothing.
    """
    b = bytes_per_element(kv_dtype)
    return float(sum(kv_elements_per_token_per_layer(a) * b * n
                     for a, n in model.attention_shapes(storing=True)))


def linear_state_bytes_per_sequence(model: Model, state_dtype: str = "bf16") -> float:
    """Fixed state one sequence keeps in all linear-attention layers [B/sequence].

    Parameters
    ----------
    model : Model
    state_dtype : str
        Format of the recurrent and convolution state (default ``"bf16"``, the model's
        activation format; a quantized KV cache does not quantize it). A checkpoint that
        states its own recurrent-state format (``LinearAttention.state_dtype``: Mamba-2's
        float32 SSM cache) keeps the recurrent matrices in that format and only the
        convolution's inputs in this one.

    Returns
    -------
    float
        :math:`L_{lin} \\, [n_v d_k d_v + (K - 1)(2 n_k d_k + n_v d_v)] \\, b` [B]; 0 for a
        model without linear-attention layers. Independent of the context length.

    References
    ----------
    .. [1] S. Yang, J. Kautz, A. Hatamizadeh, "Gated Delta Networks", arXiv:2412.06464.

    Examples
    --------
    >>> from tokenomics.data.catalog import model
    >>> linear_state_bytes_per_sequence(model("qwen3-next-80b-a3b"))  # 36 * 548,864 * 2
    39518208.0
    """
    la = model.linear_attention
    if la is None or not model.num_linear_layers:
        return 0.0
    per_layer = gdn_state_elements_per_layer(la.num_k_heads, la.num_v_heads, la.head_k_dim,
                                             la.head_v_dim, la.conv_kernel)
    b = bytes_per_element(state_dtype)
    if la.state_dtype is not None:     # the recurrent part in the checkpoint's own format
        rec = la.num_v_heads * la.head_k_dim * la.head_v_dim
        return float(((per_layer - rec) * b + rec * bytes_per_element(la.state_dtype))
                     * model.num_linear_layers)
    return float(per_layer * model.num_linear_layers * b)


@inputs(model="model")
def kv_bytes_held(model: Model, context_tokens: Any, kv_dtype: str = "bf16",
                  replication: Any = None) -> Any:
    """KV bytes one sequence of ``context_tokens`` keeps in all softmax-attention layers [B].

    Parameters
    ----------
    model : Model or str
    context_tokens : int or array_like
        Tokens in the sequence [token], >= 0.
    kv_dtype : str
        KV-cache format.
    replication : callable, optional
        Copies of each layer shape's KV, a function of the shape
        (:meth:`~tokenomics.Deployment.kv_replication_of`); default 1.

    Returns
    -------
    float or numpy.ndarray
        :math:`\\sum_g n_g\\, s_g\\, r_g \\min(C, W_g)` over the layer groups of
        :meth:`~tokenomics.data.specs.Model.window_groups`: :math:`n_g` layers of span
        :math:`W_g` at :math:`s_g` bytes per token and layer (their own shape's,
        :meth:`~tokenomics.data.specs.Model.attention_for`), each copied :math:`r_g` times
        [B]. Linear layers' fixed state is not included
        (:func:`linear_state_bytes_per_sequence`).

    Examples
    --------
    >>> kv_bytes_held("llama-3.1-70b", 1024) == 327680 * 1024
    True
    """
    c = V.counts(context_tokens, "context_tokens", minimum=0, unit="token")
    if replication is not None and not callable(replication):
        raise TokenomicsError(f"replication must be a function of an attention shape (e.g. "
                              f"Deployment.kv_replication_of), got {replication!r}")
    return V.scalar_or_array(group_kv_bytes(model, c, kv_dtype, replication))


def group_kv_bytes(model: Model, context_tokens: Any, kv_dtype: str,
                   replication: Any = None) -> Any:
    """:func:`kv_bytes_held` on checked arguments (the step engine's form: no validation)
    [B]."""
    c = np.asarray(context_tokens, dtype=float)
    b = bytes_per_element(kv_dtype)
    total: Any = 0.0
    for _kind, w, n in model.kv_groups():         # KV-shared layers keep none of their own
        a = model.attention_for(w)
        r = 1.0 if replication is None else replication(a)
        total = total + n * (kv_elements_per_token_per_layer(a) * b * r) * np.minimum(c, w)
    return total


def kv_tokens_held(model: Model, context_tokens: Any) -> list[tuple[int, Any]]:
    """Tokens each layer group keeps for a context: ``[(layer_count, tokens), ...]``.

    Full layers keep ``C``; sliding and chunked layers keep ``min(C, W)``.
    """
    c = np.asarray(context_tokens, dtype=float)
    return [(n, np.minimum(c, w)) for _kind, w, n in model.window_groups()]


@inputs(model="model")
def kv_cache_bytes(model: Model, context_tokens: Any, batch: Any = 1,
                   kv_dtype: str = "bf16", allow_beyond_max_context: bool = False,
                   state_dtype: str = "bf16") -> Any:
    """KV-cache bytes for ``batch`` sequences of ``context_tokens`` each [B].

    Parameters
    ----------
    model : Model
    context_tokens : int or array_like
        Tokens per sequence [token], >= 0.
    batch : int or array_like
        Sequences, >= 1.
    kv_dtype : str
    allow_beyond_max_context : bool
        Permit contexts longer than the model's maximum.
    state_dtype : str
        Format of linear-attention layers' fixed state (see
        :func:`linear_state_bytes_per_sequence`).

    Returns
    -------
    float or numpy.ndarray
        [B], broadcast over ``context_tokens`` and ``batch``.

    Notes
    -----
    :math:`\\text{bytes} = B (\\sum_\\ell s_\\ell \\min(C, W_\\ell) + S)` with :math:`s_\\ell` from
    :func:`kv_bytes_per_token_per_layer` (each layer at its own shape: :func:`kv_bytes_held`),
    :math:`W_\\ell = \\infty` for full layers, the sum over softmax-attention layers, and
    :math:`S` the linear layers' fixed state per sequence
    (:func:`linear_state_bytes_per_sequence`; 0 for most models).

    References
    ----------
    .. [1] I. Beltagy, M. Peters, A. Cohan, "Longformer", arXiv:2004.05150, 2020 (sliding windows).
    .. [2] Meta, Llama 4 reference code, models/llama4/model.py (attention_chunk_size).

    Examples
    --------
    >>> from tokenomics.data.catalog import model
    >>> kv_cache_bytes(model("llama-3.1-70b"), 131072) / 2**30   # S11: 40 GiB
    40.0
    """
    c = V.counts(context_tokens, "context_tokens", minimum=0, unit="token")
    b = V.counts(batch, "batch", minimum=1)
    V.context_within(model, c, allow_beyond_max_context)
    held = group_kv_bytes(model, c, kv_dtype)
    state = linear_state_bytes_per_sequence(model, state_dtype)
    return V.scalar_or_array(b * (held + state))


def kv_context_crossover_tokens(model: Model, weight_bytes_total: float,
                                kv_dtype: str = "bf16") -> float:
    """Context at which one sequence's KV equals the weights, full attention [token].

    ``weight_bytes_total / kv_bytes_per_token`` (S13: ~431,000 tokens for Llama 3.1 70B at
    BF16).
    """
    return float(weight_bytes_total / kv_bytes_per_token(model, kv_dtype))
