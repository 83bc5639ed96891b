"""Per-operator FLOPs and bytes of one forward step: prefill, midfill and decode.

A step processes ``T`` new tokens for each of ``B`` sequences whose KV cache already holds
``c`` tokens: prefill is ``c = 0, T = prompt``; midfill (new tokens on a cached prefix, as an
agent step) is ``c > 0, T > 1``; decode is ``T = 1`` at ``c = context``. Every quantity is a
numpy array broadcast over ``B``, ``T`` and ``c``; nothing loops over configurations.

Operators (summed over the layers they occur in):

=================  ============================================================================
``embedding``      gather of ``B T`` rows of the token table (the table is not read whole)
``attn_qkv``       Q, K, V projections (MLA: the down- and up-projections)
``attn_core``      scores and weighted values against the cache: reads each sequence's own KV
``attn_out``       output projection
``ffn_dense``      dense FFN of non-MoE layers
``moe_router``     router logits
``moe_shared``     shared experts (always active)
``moe_experts``    routed experts: FLOPs for ``top_k`` per token, bytes for the *distinct*
                   experts the step touches, :math:`E (1 - (1 - k/E)^{B T})` per layer
``lm_head``        logits: all new tokens in decode, the last token of each sequence in prefill
=================  ============================================================================

Notes
-----
Attention pairs (query, key) per layer for new tokens at positions :math:`c+1..c+T` are
:math:`\\sum_{i=c+1}^{c+T} \\mathrm{span}(i)` with span :math:`i` (full, causal: the half
square, not the full one), :math:`\\min(i, W)` (sliding window) or
:math:`((i-1) \\bmod W) + 1` (chunked attention), each in closed form. A pair costs
:math:`2 n_q (d_k + d_v)` FLOPs (~:math:`4 n_q d` per cached token in decode). MLA is costed
in whichever form is cheaper: absorbed (attention in the :math:`r_{kv}`-dim latent, as
decode kernels run it) or expanded (the prefix latent up-projected, as prefill kernels run it).

Hybrid and sparse attention. Gated DeltaNet (Qwen3-Next) and Mamba-2 (Nemotron-H) layers add their input projections
to ``attn_qkv``, their output projection to ``attn_out``, and to ``attn_core`` the recurrence
(:func:`~tokenomics.physics.formulas.gdn_flops_per_token_per_layer` or
:func:`~tokenomics.physics.formulas.mamba2_flops_per_token_per_layer` per token) with one read
and one write of each sequence's fixed state per step; they keep no KV. With DeepSeek Sparse
Attention each query attends to :math:`\\min(i, k)` keys (the sliding-window closed form with
:math:`W = k`), the step reads :math:`\\min(c, kT)` latent entries, and the lightning
indexer scores every cached key (:math:`2 H_I d_I` FLOPs per pair, its key cache read
whole).

Norms, rotary embeddings and other element-wise kernels are not counted (a few percent of
bytes at most); communication is not part of this module.

References
----------
.. [1] R. Pope et al., "Efficiently Scaling Transformer Inference", MLSys 2023,
   arXiv:2211.05102.
.. [2] DeepSeek-AI, "DeepSeek-V2", arXiv:2405.04434, 2024 (MLA, weight absorption).
.. [3] W. Fedus, B. Zoph, N. Shazeer, "Switch Transformers", JMLR 2022 (top-k routing); the
   distinct-expert expectation assumes independent uniform routing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from tokenomics.core import checks as V
from tokenomics.core.dtypes import bytes_per_element
from tokenomics.core.errors import TokenomicsError
from tokenomics.data.deployment import Deployment
from tokenomics.physics import formulas as F
from tokenomics.physics.kv import linear_state_bytes_per_sequence
from tokenomics.physics.params import (
    attention_params_per_layer,
    expert_params,
    ffn_params,
    latent_projection_params_per_layer,
    linear_attention_params_per_layer,
    per_layer_embedding_params,
    router_params_per_layer,
)

OPERATORS = ("embedding", "attn_qkv", "attn_core", "attn_out", "ffn_dense", "moe_router",
             "moe_shared", "moe_experts", "lm_head")


def expected_active_experts(num_experts: int, top_k: int, tokens: Any) -> Any:
    """Expected number of distinct routed experts that ``tokens`` tokens touch in one layer.

    Parameters
    ----------
    num_experts : int
        Routed experts E.
    top_k : int
        Experts per token k (1 <= k <= E).
    tokens : int or array_like
        Tokens routed in the step (batch x tokens per sequence), >= 1.

    Returns
    -------
    float or numpy.ndarray
        :math:`E (1 - (1 - k/E)^n)`: ``top_k`` at one token, rising towards E.

    Notes
    -----
    Assumes each token picks k experts uniformly; real routers are less uniform, so fewer
    distinct experts are touched and this is an upper bound on expert bytes for a batch.

    References
    ----------
    .. [1] W. Fedus, B. Zoph, N. Shazeer, "Switch Transformers", JMLR 23, 2022.

    Examples
    --------
    >>> expected_active_experts(256, 8, 1)
    8.0
    >>> round(expected_active_experts(256, 8, 64), 1)   # 256 (1 - (248/256)^64), DeepSeek-V3
    222.4
    """
    E = V.single_whole(num_experts, "num_experts")
    k = V.single_whole(top_k, "top_k")
    if k > E:
        raise TokenomicsError(f"top_k must be in [1, num_experts={E}], got {k}")
    num_experts, top_k = E, k
    n = V.counts(tokens, "tokens")
    return V.scalar_or_array(F.distinct_experts(num_experts, top_k, np.asarray(n, float)))


@dataclass(frozen=True)
class OpCost:
    """FLOPs and bytes of one operator for a whole replica (all layers, all devices).

    Attributes
    ----------
    name : str
    flops : numpy.ndarray
        [FLOP]
    weight_bytes, kv_bytes, act_bytes : numpy.ndarray
        Bytes read/written from device memory, by kind [B]. ``kv_bytes`` counts every replica
        of a KV head held under tensor parallelism.
    """

    name: str
    flops: Any
    weight_bytes: Any
    kv_bytes: Any
    act_bytes: Any

    @property
    def bytes(self) -> Any:
        """Total bytes moved [B]."""
        return self.weight_bytes + self.kv_bytes + self.act_bytes


@dataclass(frozen=True)
class _Step:
    """The broadcast shape of one step: B, T, c, logits tokens, N = B T, and a zero array."""

    B: Any
    T: Any
    c: Any
    NL: Any
    N: Any
    zero: Any


def _embedding(dep: Deployment, s: _Step) -> OpCost:
    """Gather of the step's N rows of the token table, at the embedding format; with
    per-layer embeddings (Gemma 4 E2B/E4B) also the N rows of their table and the
    projections that mix each layer's slice into the residual, one copy per attention
    group (:func:`~tokenomics.physics.params.per_layer_embedding_params`)."""
    m = dep.model
    h = m.hidden_size
    wt = bytes_per_element(dep.embedding_dtype)
    act = bytes_per_element(dep.act_dtype)
    gathered, flops, weights, io = h * wt, 0.0, 0.0, h * act
    p = m.per_layer_input_size
    if p:
        L = m.num_layers
        proj = per_layer_embedding_params(m)["per_layer_projection"]
        gathered += L * p * wt                      # the token's row of the per-layer table
        flops = 2.0 * (h * L * p + L * 2 * h * p)   # the projection in; each layer's gate, out
        weights = dep.dp_attention * proj * bytes_per_element(dep.weight_dtype)
        io += (h + 2 * L * p + L * 2 * (h + p)) * act
    return OpCost("embedding", s.N * flops + s.zero, s.N * gathered + weights + s.zero,
                  s.zero, s.N * io + s.zero)


def _attention_projections(dep: Deployment, s: _Step) -> tuple[OpCost, OpCost]:
    """Q/K/V (MLA: down- and up-) projections and the output projection, all layers.

    Attention data parallelism keeps one copy of the attention weights per attention group:
    each copy is read once per step. A model with ``global_attention`` sums its two shapes,
    each over its own layers.
    """
    m = dep.model
    h = m.hidden_size
    w = bytes_per_element(dep.weight_dtype)
    act = bytes_per_element(dep.act_dtype)
    rep = float(dep.dp_attention)
    p_qkv = p_o = io_in = io_out = 0.0
    shapes = [(a, L, False) for a, L in m.attention_shapes(storing=True)]
    shapes += [(a, L, True) for a, L in m.shared_attention_shapes() if L]
    for a, L, shared in shapes:
        p_att = attention_params_per_layer(m, a, kv_shared=shared)
        o = a.num_q_heads * a.v_head_dim * h + (h if a.o_bias else 0)
        p_qkv, p_o = p_qkv + (p_att - o) * L, p_o + o * L
        # Outputs: the queries (and gate) plus what the cache stores (K and V, or MLA's
        # latent; the key projection alone where the keys double as values; nothing on a
        # layer that reads an earlier layer's KV).
        q_out = a.num_q_heads * a.head_dim * (2 if a.output_gate else 1)
        kv_out = (0 if shared else a.num_kv_heads * a.head_dim if a.k_eq_v
                  else F.kv_elements_per_token_per_layer(a))
        io_in += (h + q_out + kv_out) * L
        io_out += (a.num_q_heads * a.v_head_dim + h) * L
    lin_in, lin_out, lin_io_in, lin_io_out = _linear_projection_terms(m)
    Ll, N = m.num_linear_layers, s.N
    qkv = OpCost("attn_qkv", 2.0 * N * (p_qkv + lin_in * Ll),
                 rep * (p_qkv + lin_in * Ll) * w + s.zero, s.zero,
                 N * (io_in + lin_io_in * Ll) * act)
    out = OpCost("attn_out", 2.0 * N * (p_o + lin_out * Ll),
                 rep * (p_o + lin_out * Ll) * w + s.zero, s.zero,
                 N * (io_out + lin_io_out * Ll) * act)
    return qkv, out


def _linear_projection_terms(m: Any) -> tuple[float, float, float, float]:
    """A Gated DeltaNet layer's (input-side params, output params, input io, output io).

    Input side: everything but ``out_proj`` (:math:`D_v h`); io in elements per token.
    """
    la = m.linear_attention
    if la is None or not m.num_linear_layers:
        return 0.0, 0.0, 0.0, 0.0
    h = m.hidden_size
    dv = la.num_v_heads * la.head_v_dim
    p_all = linear_attention_params_per_layer(m)
    p_out = float(dv * h)
    dk = la.num_k_heads * la.head_k_dim
    # in_proj's outputs: q, k, v, z and beta, alpha (Gated DeltaNet); z, x, B, C, dt (Mamba-2)
    proj_out = 2 * dk + 2 * dv + (1 if la.kind == "mamba2" else 2) * la.num_v_heads
    return p_all - p_out, p_out, float(h + proj_out), float(dv + h)


def _attention_core(dep: Deployment, s: _Step) -> OpCost:
    """Scores and weighted values against each sequence's own cache; KV read and written.

    Pairs per layer group are :func:`~tokenomics.physics.formulas.span_sum` differences; MLA
    is costed in the cheaper of its expanded and absorbed forms. Each group is costed at its
    own shape (:meth:`~tokenomics.data.specs.Model.attention_for`: Gemma 4's full layers
    have their own) and its own KV replication.
    """
    m = dep.model
    B, T, c = s.B, s.T, s.c
    act = bytes_per_element(dep.act_dtype)
    kv_b = bytes_per_element(dep.kv_dtype)
    flops_core = s.zero.copy()
    kv_read = s.zero.copy()
    kv_write = att_io = 0.0
    shared = m.kv_shared_counts()          # layers that read another's KV write none
    for kind, win, count in m.window_groups():
        a = m.attention_for(win)
        rep = dep.kv_replication_of(a)
        kv_tok_layer = F.kv_elements_per_token_per_layer(a) * kv_b * rep
        # DSA: the latent part is read for the selected keys, the index key for every cached one.
        idx_tok_layer = a.index_head_dim * kv_b * rep if a.is_sparse else 0.0
        pairs, read = _pairs_and_reads(a, kind, win, c, T)
        per_seq = pairs * F.attention_pair_flops(a)
        if a.kind == "MLA":   # the cheaper of the expanded and the absorbed forms
            per_seq = np.minimum(per_seq + read * F.mla_up_projection_flops_per_token(a),
                                 pairs * F.mla_absorbed_pair_flops(a))
        if a.is_sparse:       # the lightning indexer scans every cached key, causally
            scanned = F.span_sum("full", np.inf, c + T) - F.span_sum("full", np.inf, c)
            per_seq = per_seq + F.dsa_indexer_flops_per_query(
                a.index_n_heads, a.index_head_dim, scanned)
        flops_core = flops_core + B * per_seq * count
        kv_read = kv_read + B * count * (read * (kv_tok_layer - idx_tok_layer)
                                         + c * idx_tok_layer)
        kv_write = kv_write + s.N * kv_tok_layer * (count - shared.get((kind, win), 0))
        att_io = att_io + s.N * F.attention_io_elements_per_token(a) * act * count
    lin_flops, lin_bytes, lin_io = _linear_core(dep, s)
    return OpCost("attn_core", flops_core + lin_flops, s.zero, kv_read + kv_write + lin_bytes,
                  att_io + lin_io + s.zero)


def _pairs_and_reads(a: Any, kind: str, win: float, c: Any, T: Any) -> tuple[Any, Any]:
    """(query, key) pairs and cached tokens read per sequence in one layer of a group.

    DeepSeek Sparse Attention caps each query's keys at ``index_topk`` k: pairs are
    :math:`\\sum \\min(i, k)` (the sliding-window sum with :math:`W = k`) and the step reads
    at most :math:`kT` distinct latent entries, :math:`\\min(c, kT)`
    (:func:`~tokenomics.physics.formulas.dsa_read_tokens` per query).
    """
    if a.is_sparse and kind == "full":
        k = float(a.index_topk)
        pairs = F.span_sum("sliding", k, c + T) - F.span_sum("sliding", k, c)
        return pairs, np.minimum(np.asarray(c, float), k * T)
    return (F.span_sum(kind, win, c + T) - F.span_sum(kind, win, c),
            F.kv_read_tokens(kind, win, c))


def _linear_core(dep: Deployment, s: _Step) -> tuple[Any, Any, Any]:
    """The recurrence of all linear layers: (FLOPs, state bytes, io bytes).

    FLOPs :math:`N L_{lin}` times
    :func:`~tokenomics.physics.formulas.gdn_flops_per_token_per_layer` (Gated DeltaNet) or
    :func:`~tokenomics.physics.formulas.mamba2_flops_per_token_per_layer`; each sequence's fixed
    state read once and written once per step, :math:`2 B S`; q/k/v in and the output out.
    """
    m = dep.model
    la = m.linear_attention
    if la is None or not m.num_linear_layers:
        return s.zero, s.zero, s.zero
    Ll = m.num_linear_layers
    law = (F.mamba2_flops_per_token_per_layer if la.kind == "mamba2"
           else F.gdn_flops_per_token_per_layer)
    f_tok = law(la.num_k_heads, la.num_v_heads, la.head_k_dim, la.head_v_dim, la.conv_kernel)
    state = (linear_state_bytes_per_sequence(m, dep.act_dtype)
             * dep.kv_replication_of(m.attention))
    act = bytes_per_element(dep.act_dtype)
    io = (2 * la.num_k_heads * la.head_k_dim + 2 * la.num_v_heads * la.head_v_dim) * act
    return s.N * f_tok * Ll + s.zero, 2.0 * s.B * state + s.zero, s.N * io * Ll + s.zero


def _dense_ffn(dep: Deployment, s: _Step) -> OpCost:
    """The dense FFN of the non-MoE layers (one copy per attention group, each read once a
    step, with ``mlp_data_parallel``); each width of
    :meth:`~tokenomics.data.specs.Model.dense_ffn_widths` over its layers."""
    m = dep.model
    h, N = m.hidden_size, s.N
    w = bytes_per_element(dep.weight_dtype) * dep.mlp_copies
    act = bytes_per_element(dep.act_dtype)
    p_all = io_all = 0.0
    for inter, Ld in m.dense_ffn_widths():
        p_all += ffn_params(m, inter) * Ld
        io_all += (2 * h + (3 if m.gated_ffn else 2) * inter) * act * Ld
    return OpCost("ffn_dense", 2.0 * N * p_all, p_all * w + s.zero, s.zero, N * io_all)


def _moe(dep: Deployment, s: _Step) -> list[OpCost]:
    """Router, shared experts and routed experts of the MoE layers (zero cost without any).

    Routed experts: FLOPs for ``top_k`` per token, weight bytes for the distinct experts the
    step's N tokens touch (:func:`~tokenomics.physics.formulas.distinct_experts` over the
    ``E + r`` physical experts when the deployment holds redundant copies). The router and
    shared experts: one copy per attention group with ``mlp_data_parallel``. A latent MoE's
    projections into and out of its expert width (``latent_size``) run on every token and
    are costed with the shared experts; its experts read and write at the latent width.
    """
    m = dep.model
    Lm = m.num_moe_layers
    zero = s.zero
    if m.moe is None or not Lm:
        return [OpCost(n, zero, zero, zero, zero)
                for n in ("moe_router", "moe_shared", "moe_experts")]
    moe = m.moe
    h, N = m.hidden_size, s.N
    w = bytes_per_element(dep.weight_dtype) * dep.mlp_copies
    we = bytes_per_element(dep.expert_dtype)
    act = bytes_per_element(dep.act_dtype)
    E, k = moe.num_experts, moe.top_k
    p_router = router_params_per_layer(m)
    router = OpCost("moe_router", 2.0 * N * E * h * Lm, p_router * w * Lm + zero, zero,
                    N * (h + E) * act * Lm)
    p_sh = moe.num_shared_experts * ffn_params(m, moe.shared_intermediate_size)
    sh_io = moe.num_shared_experts * (2 * h + 3 * moe.shared_intermediate_size) * act
    # a latent MoE's projections into and out of the experts' width: dense, every token
    lat = moe.latent_size
    p_sh += latent_projection_params_per_layer(m)
    sh_io += 2 * (h + lat) * act if lat else 0.0
    shared = OpCost("moe_shared", 2.0 * N * p_sh * Lm, p_sh * w * Lm + zero, zero,
                    N * sh_io * Lm)
    p_e = expert_params(m)
    # with redundant copies the tokens of a logical expert spread over its copies: the step
    # reaches k copies at one token and all E + r of them at many
    distinct = F.distinct_experts(dep.physical_experts, k, N)
    e_io = k * (2 * (lat or h) + 3 * moe.expert_intermediate_size) * act
    experts = OpCost("moe_experts", 2.0 * N * k * p_e * Lm, distinct * p_e * we * Lm, zero,
                     N * e_io * Lm)
    return [router, shared, experts]


def _lm_head(dep: Deployment, s: _Step) -> OpCost:
    """Logits of ``B x logits_tokens`` tokens; one copy of the head per attention group."""
    m = dep.model
    h, V_ = m.hidden_size, m.vocab_size
    wt = bytes_per_element(dep.embedding_dtype)
    act = bytes_per_element(dep.act_dtype)
    rep = float(dep.dp_attention)
    NLt = s.B * s.NL
    return OpCost("lm_head", 2.0 * NLt * h * V_, rep * h * V_ * wt + s.zero, s.zero,
                  NLt * (h + V_) * act)


def step_costs(dep: Deployment, batch: Any, new_tokens: Any, cached_tokens: Any,
               logits_tokens: Any) -> list[OpCost]:
    """Per-operator costs of one forward step for a replica.

    Parameters
    ----------
    dep : Deployment
    batch : array_like
        Sequences in the step B (>= 1; fractional values are allowed here, as a pipeline
        micro-batch may be).
    new_tokens : array_like
        New tokens per sequence T (>= 1).
    cached_tokens : array_like
        Tokens already in each sequence's KV cache c (>= 0).
    logits_tokens : array_like
        Tokens per sequence whose logits are computed (1 in prefill, T in decode).

    Returns
    -------
    list of OpCost
        In :data:`OPERATORS` order; operators a model lacks have zero cost.

    Notes
    -----
    One helper per operator group (embedding, attention projections, attention core, dense
    FFN, MoE, LM head), each built from the per-unit formulas of
    :mod:`tokenomics.physics.formulas`; the module docstring lists what each counts.

    References
    ----------
    .. [1] R. Pope et al., "Efficiently Scaling Transformer Inference", MLSys 2023,
       arXiv:2211.05102.

    Examples
    --------
    >>> import tokenomics as tk
    >>> ops = step_costs(tk.Deployment("llama-3.1-8b", "h100-sxm"), 1, 1, 1024, 1)
    >>> [o.name for o in ops] == list(OPERATORS)
    True
    """
    B = np.asarray(batch, float)
    T = np.asarray(new_tokens, float)
    c = np.asarray(cached_tokens, float)
    NL = np.asarray(logits_tokens, float)
    s = _Step(B=B, T=T, c=c, NL=NL, N=B * T, zero=np.zeros(np.broadcast(B, T, c, NL).shape))
    qkv, out = _attention_projections(dep, s)
    return [_embedding(dep, s), qkv, _attention_core(dep, s), out, _dense_ffn(dep, s),
            *_moe(dep, s), _lm_head(dep, s)]


def mixed_costs(dep: Deployment, dec_b: Any, dec_c: Any, pre_t: Any, pre_c: Any,
                 pre_b: Any) -> list[OpCost]:
    """Operator costs of one step carrying decodes and prefill chunks, weights read once.

    Parameters
    ----------
    dep : Deployment
    dec_b, dec_c : array_like
        Decoding sequences (>= 0, may be fractional: an average) and their KV length [token].
    pre_t, pre_c, pre_b : array_like
        Tokens of each prefill chunk, tokens already cached under it, and chunks [token],
        [token], [chunk].

    Returns
    -------
    list of OpCost
        Per operator: the FLOPs, KV and activation bytes of the two parts add; the weight
        bytes are one pass over all :math:`D + bT` tokens (MoE: their distinct experts).
    """
    a = step_costs(dep, dec_b, 1.0, dec_c, 1.0)
    p = step_costs(dep, pre_b, pre_t, pre_c, 1.0)
    n_total = np.asarray(dec_b, float) + np.asarray(pre_b, float) * np.asarray(pre_t, float)
    w = step_costs(dep, 1.0, n_total, 0.0, 0.0)  # weight bytes depend only on token count
    return [OpCost(x.name, x.flops + y.flops, z.weight_bytes, x.kv_bytes + y.kv_bytes,
                   x.act_bytes + y.act_bytes) for x, y, z in zip(a, p, w, strict=True)]


def mixed_costs_over(dep: Deployment, dec_b: Any, dec_c: Any, dec_w: Any, pre_t: Any,
                     pre_c: Any, pre_b: Any) -> list[OpCost]:
    """Operator costs of a mixed step whose sequences have a distribution of lengths.

    Parameters
    ----------
    dep : Deployment
    dec_b : float or array_like
        Decoding sequences in the step (may be fractional: an average).
    dec_c, dec_w : array_like
        Their KV lengths as nodes on the last axis [token] and each node's share of the
        decodes (summing to 1 over the last axis).
    pre_t, pre_c, pre_b : array_like
        Prefill chunks as nodes on the last axis: tokens of each chunk, tokens cached under
        it [token], and chunks of that kind in the step [chunk].

    Returns
    -------
    list of OpCost
        FLOPs, KV and activation bytes: the sum over the nodes of what their sequences do
        (:func:`step_costs` is linear in its batch); weight bytes: one pass over all the
        step's :math:`D + \\sum b T` tokens (MoE: their distinct experts). With one node
        each this is :func:`mixed_costs`.
    """
    D = np.asarray(dec_b, float)
    a = step_costs(dep, D[..., None] * np.asarray(dec_w, float), 1.0, dec_c, 1.0)
    p = step_costs(dep, pre_b, pre_t, pre_c, 1.0)
    n_total = D + (np.asarray(pre_b, float) * np.asarray(pre_t, float)).sum(axis=-1)
    w = step_costs(dep, 1.0, n_total, 0.0, 0.0)

    def node_sum(v: Any) -> Any:
        return np.sum(np.asarray(v, float), axis=-1)

    return [OpCost(x.name, node_sum(x.flops) + node_sum(y.flops), z.weight_bytes,
                   node_sum(x.kv_bytes) + node_sum(y.kv_bytes),
                   node_sum(x.act_bytes) + node_sum(y.act_bytes))
            for x, y, z in zip(a, p, w, strict=True)]
