"""Parameter counts of an architecture, as pure functions of its :class:`Model` fields.

The counts follow the weight tensors a checkpoint stores (biases and norm scales included),
so a model file's stated totals can be checked against them when the file is loaded
(:func:`check_official_params`, which :func:`tokenomics.data.catalog.parse_model_file` runs on
every bundled and user model). They live in the data stage for that reason; the physics stage's
:func:`tokenomics.physics.params.param_count` and ``param_breakdown`` are the user-facing forms
(accepting catalog ids, returning tables) and call these.

Notes
-----
Per layer, with hidden size :math:`h`, query heads :math:`n_q`, KV heads :math:`n_{kv}`, head
dimension :math:`d`:

* standard attention: :math:`h n_q d + 2 h n_{kv} d + n_q d h` (+ biases, Q/K norms, sinks);
* MLA (DeepSeek-V2/V3): :math:`h r_q + r_q n_q (d_{nope}+d_{rope}) + h (r_{kv}+d_{rope})
  + r_{kv} n_q (d_{nope}+d_v) + n_q d_v h` (+ the two latent norms :math:`r_q + r_{kv}`);
* gated FFN: :math:`3 h I`; two-matrix FFN (OPT): :math:`2 h I`;
* MoE layer: router :math:`E h`, :math:`E` routed experts of :math:`3 h I_e` each, shared
  experts of :math:`3 h I_s` each.

Embedding :math:`V h` (plus learned positions for OPT) and an untied LM head :math:`V h`.
*Active* parameters per token count the routed experts a token uses (:math:`k` of :math:`E`)
instead of all of them.

References
----------
.. [1] DeepSeek-AI, "DeepSeek-V3 Technical Report", arXiv:2412.19437, 2024 (MLA, 671B/37B).
.. [2] A. Q. Jiang et al., "Mixtral of Experts", arXiv:2401.04088, 2024 (46.7B/12.9B).
"""

from __future__ import annotations

from tokenomics.core import checks as V
from tokenomics.core.errors import CatalogError, TokenomicsError
from tokenomics.data.specs import Attention, Model


def attention_params_per_layer(model: Model, attention: Attention | None = None,
                               kv_shared: bool = False) -> float:
    """Attention parameters of one layer [parameters] (projections, biases, norms, sinks).

    ``attention`` is the layer's shape, default ``model.attention`` (a model with
    ``global_attention`` has a second shape for its full layers: :func:`attention_params`
    sums both). With ``k_eq_v`` the layer has no value projection; a ``kv_shared`` layer
    (:attr:`~tokenomics.data.specs.Model.layer_kv_shared`) has neither key nor value
    projection nor key norm.

    Examples
    --------
    >>> from tokenomics.data.catalog import model
    >>> attention_params_per_layer(model("llama-3.1-70b"))  # 8192*(64+8+8)*128 + 64*128*8192
    150994944.0
    """
    a = model.attention if attention is None else attention
    h = model.hidden_size
    if a.kind == "MLA":
        qk = a.qk_nope_head_dim + a.qk_rope_head_dim
        if a.q_lora_rank:
            q = h * a.q_lora_rank + a.q_lora_rank + a.q_lora_rank * a.num_q_heads * qk
        else:
            q = h * a.num_q_heads * qk
        kv_a = h * (a.kv_lora_rank + a.qk_rope_head_dim) + a.kv_lora_rank
        kv_b = a.kv_lora_rank * a.num_q_heads * (a.qk_nope_head_dim + a.v_head_dim)
        o = a.num_q_heads * a.v_head_dim * h
        n = q + kv_a + kv_b + o
        if a.qkv_bias:
            n += a.num_q_heads * qk
        if a.o_bias:
            n += h
        return float(n + dsa_indexer_params_per_layer(model))
    q_out = a.num_q_heads * a.head_dim
    # the K and V projections' width (K alone where the keys double as values)
    kv_out = a.num_kv_heads * (a.head_dim + (0 if a.k_eq_v else a.v_head_dim))
    n = h * (q_out + kv_out) + a.num_q_heads * a.v_head_dim * h
    if a.qkv_bias:
        n += q_out + kv_out
    if a.o_bias:
        n += h
    if a.qk_norm:      # per head (2d), or over the whole projections (MiniMax-M2)
        n += (a.num_q_heads + a.num_kv_heads) * a.head_dim if a.qk_norm_full else 2 * a.head_dim
    if kv_shared:      # queries only: no K/V projections (and biases), no key norm
        n -= h * kv_out + (kv_out if a.qkv_bias else 0)
        n -= (a.num_kv_heads * a.head_dim if a.qk_norm_full else a.head_dim) if a.qk_norm else 0
    if a.sinks:
        n += a.num_q_heads
    if a.output_gate:
        n += h * q_out        # the gate half of the doubled query projection
    return float(n)


def attention_params(model: Model) -> float:
    """Attention parameters of all softmax-attention layers [parameters]: each shape of
    :meth:`~tokenomics.data.specs.Model.attention_shapes` times its layers, by
    :func:`attention_params_per_layer`.

    Examples
    --------
    >>> from tokenomics.data.catalog import model
    >>> attention_params(model("llama-3.1-70b")) / 80   # one shape: 80 layers alike
    150994944.0
    """
    own = sum(attention_params_per_layer(model, a) * n
              for a, n in model.attention_shapes(storing=True))
    return float(own + sum(attention_params_per_layer(model, a, kv_shared=True) * n
                           for a, n in model.shared_attention_shapes() if n))


def dsa_indexer_params_per_layer(model: Model) -> float:
    """Parameters of DeepSeek Sparse Attention's lightning indexer in one layer [parameters].

    :math:`r_q H_I d_I + h d_I + 2 d_I + h H_I`: the indexer's query up-projection from the
    query latent (``wq_b``), its key projection (``wk``), the key LayerNorm (scale and bias)
    and the per-head weight projection (``weights_proj``). 0 without DSA.

    References
    ----------
    .. [1] deepseek-ai/DeepSeek-V3.2-Exp, ``inference/model.py`` (class ``Indexer``).

    Examples
    --------
    >>> from dataclasses import replace
    >>> from tokenomics.data.catalog import model
    >>> v3 = model("deepseek-v3")       # V3.2-Exp = V3 + indexer (64 heads of 128, top 2048)
    >>> v32 = replace(v3, attention=replace(v3.attention, index_n_heads=64,
    ...                                     index_head_dim=128, index_topk=2048))
    >>> dsa_indexer_params_per_layer(v32)   # 1536*8192 + 7168*128 + 256 + 7168*64
    13959424.0
    """
    a = model.attention
    if not a.is_sparse:
        return 0.0
    h, HI, dI = model.hidden_size, a.index_n_heads, a.index_head_dim
    return float(a.q_lora_rank * HI * dI + h * dI + 2 * dI + h * HI)


def linear_attention_params_per_layer(model: Model) -> float:
    """Parameters of one linear-attention layer's token mixer [parameters] (0 without one).

    With :math:`D_k = n_k d_k`, :math:`D_v = n_v d_v`. **Gated DeltaNet**: the fused q/k/v/z
    projection :math:`h (2 D_k + 2 D_v)`, the beta/alpha projection :math:`2 h n_v`, the
    depthwise convolution :math:`K (2 D_k + D_v)` (no bias), ``dt_bias`` and ``A_log``
    (:math:`n_v` each), the gated RMSNorm :math:`d_v` and the output projection
    :math:`D_v h`. **Mamba-2**: the input projection to z, x, B, C and dt,
    :math:`h (2 D_v + 2 D_k + n_v)`, the convolution over x, B, C, :math:`K (D_v + 2 D_k)`
    (plus as many biases with ``conv_bias``), ``dt_bias``, ``A_log`` and ``D``
    (:math:`n_v` each), the gated RMSNorm over the whole :math:`D_v` and the output
    projection :math:`D_v h`.

    References
    ----------
    .. [1] Hugging Face transformers, ``models/qwen3_next/modeling_qwen3_next.py``
       (``Qwen3NextGatedDeltaNet``: ``in_proj_qkvz``, ``in_proj_ba``, ``conv1d``,
       ``dt_bias``, ``A_log``, ``norm``, ``out_proj``).
    .. [2] Hugging Face transformers, ``models/nemotron_h/modeling_nemotron_h.py``
       (``NemotronHMamba2Mixer``: ``in_proj``, ``conv1d``, ``dt_bias``, ``A_log``, ``D``,
       ``norm``, ``out_proj``); T. Dao, A. Gu, "Transformers are SSMs", ICML 2024,
       arXiv:2405.21060 (Mamba-2).

    Examples
    --------
    >>> from tokenomics.data.catalog import model
    >>> linear_attention_params_per_layer(model("qwen3-next-80b-a3b"))
    33718464.0
    """
    la = model.linear_attention
    if la is None:
        return 0.0
    h = model.hidden_size
    dk, dv, nv = la.num_k_heads * la.head_k_dim, la.num_v_heads * la.head_v_dim, la.num_v_heads
    conv = (la.conv_kernel + la.conv_bias) * (2 * dk + dv)
    if la.kind == "mamba2":
        return float(h * (2 * dv + 2 * dk + nv) + conv + 3 * nv + dv + dv * h)
    return float(h * (2 * dk + 2 * dv) + 2 * h * nv + conv + 2 * nv + la.head_v_dim + dv * h)


def ffn_params(model: Model, intermediate: int, bias: bool | None = None) -> float:
    """Parameters of one FFN block of width ``intermediate`` [parameters]."""
    h = model.hidden_size
    mats = 3 if model.gated_ffn else 2
    n = mats * h * intermediate
    if model.ffn_bias if bias is None else bias:
        n += (2 if model.gated_ffn else 1) * intermediate + h
    return float(n)


def expert_params(model: Model) -> float:
    """Parameters of one routed expert [parameters] (0 for a dense model).

    The FFN of :func:`ffn_params` at the expert width, on the hidden size, or on the
    ``latent_size`` :math:`\\ell` where the experts compute in a latent (Nemotron 3 Super:
    :math:`2 \\ell I` for its two ungated matrices)."""
    moe = model.moe
    if moe is None:
        return 0.0
    if not moe.latent_size:
        return ffn_params(model, moe.expert_intermediate_size, bias=moe.expert_bias)
    lat, inter = moe.latent_size, moe.expert_intermediate_size
    n = (3 if model.gated_ffn else 2) * lat * inter
    if moe.expert_bias:
        n += (2 if model.gated_ffn else 1) * inter + lat
    return float(n)


def latent_projection_params_per_layer(model: Model) -> float:
    """The projections into and out of a latent-MoE layer's expert width [parameters]:
    :math:`2 h \\ell` (``fc1_latent_proj``, ``fc2_latent_proj``, no biases); 0 without a
    latent.

    References
    ----------
    .. [1] Hugging Face transformers, ``models/nemotron_h/modular_nemotron_h.py`` (commit
       008d9e95): ``NemotronHMoE`` (``fc1_latent_proj``, ``fc2_latent_proj``,
       ``NemotronHExperts`` on ``moe_latent_size``).
    """
    moe = model.moe
    if moe is None or not moe.latent_size:
        return 0.0
    return float(2 * model.hidden_size * moe.latent_size)


def component_params(model: Model) -> dict[str, float]:
    """Parameters per component of the main model (MTP modules excluded) [parameters].

    The keys are those of :func:`tokenomics.physics.params.param_breakdown`, which wraps this
    for catalog ids and adds ``to_frame()``: ``embedding``, ``lm_head`` (0 when tied),
    ``attention``, ``linear_attention``, ``norms``, ``dense_ffn``, ``router``,
    ``shared_experts``, ``routed_experts``, ``latent_projections``
    (:func:`latent_projection_params_per_layer`), ``per_layer_embedding`` and
    ``per_layer_projection`` (:func:`per_layer_embedding_params`).

    Examples
    --------
    >>> from tokenomics.data.catalog import model
    >>> component_params(model("llama-3.1-8b"))["embedding"]   # 128,256 x 4,096
    525336576.0
    """
    h = model.hidden_size
    L = model.num_layers
    norm_size = h * (2 if model.norm == "layer" else 1)
    out = {
        "embedding": float(model.vocab_size * h + model.learned_positions * h),
        "lm_head": 0.0 if model.tie_word_embeddings else float(model.vocab_size * h),
        "attention": attention_params(model),
        "linear_attention": linear_attention_params_per_layer(model) * model.num_linear_layers,
        # a layer without an FFN block lacks that block's pre-norm
        "norms": float(norm_size * (model.norms_per_layer * L + 1
                                    - model.norms_per_layer // 2 * model.num_ffnless_layers)),
        "dense_ffn": float(sum(ffn_params(model, w) * n for w, n in model.dense_ffn_widths())),
        "router": 0.0,
        "shared_experts": 0.0,
        "routed_experts": 0.0,
        "latent_projections": 0.0,
        **per_layer_embedding_params(model),
    }
    if model.moe is not None and model.num_moe_layers:
        m = model.moe
        nl = model.num_moe_layers
        out["router"] = float(router_params_per_layer(model) * nl)
        out["shared_experts"] = (
            m.num_shared_experts * ffn_params(model, m.shared_intermediate_size) * nl)
        out["routed_experts"] = m.num_experts * expert_params(model) * nl
        out["latent_projections"] = latent_projection_params_per_layer(model) * nl
    return out


def per_layer_embedding_params(model: Model) -> dict[str, float]:
    """Parameters of per-layer embeddings (Gemma 4 E2B/E4B) [parameters]:
    ``per_layer_embedding``, the table :math:`V_p L p`, and ``per_layer_projection``, the
    embedding's projection to the layers' inputs :math:`h L p` with its norm :math:`p`,
    plus in each layer a gate :math:`h p`, a projection back :math:`p h` and a norm
    :math:`h`; both 0 without them.

    References
    ----------
    .. [1] Hugging Face transformers, ``models/gemma4/modeling_gemma4.py`` (commit c308a309):
       ``embed_tokens_per_layer``, ``per_layer_model_projection``,
       ``per_layer_projection_norm``, and per layer ``per_layer_input_gate``,
       ``per_layer_projection``, ``post_per_layer_input_norm``.
    """
    p, L, h = model.per_layer_input_size, model.num_layers, model.hidden_size
    if not p:
        return {"per_layer_embedding": 0.0, "per_layer_projection": 0.0}
    return {"per_layer_embedding": float(model.per_layer_vocab_size * L * p),
            "per_layer_projection": float(h * L * p + p + L * (2 * h * p + h))}


def router_params_per_layer(model: Model) -> float:
    """Router parameters of one MoE layer [parameters]: the :math:`E h` projection, plus
    :math:`E` with a per-expert bias (``router_bias``) and :math:`h + E` with Gemma 4's
    input and per-expert scales (``router_scales``); 0 for a dense model."""
    m = model.moe
    if m is None:
        return 0.0
    h, E = model.hidden_size, m.num_experts
    return float(E * h + (E if m.router_bias else 0) + (h + E if m.router_scales else 0))


def counted_params(model: Model, active: bool = False, include_embedding: bool = True,
                   include_lm_head: bool = True,
                   include_per_layer_embedding: bool = True) -> float:
    """Parameters of the main model as its fields give them [parameters].

    The sum of :func:`component_params`; with ``active`` the routed experts count ``top_k`` of
    ``num_experts`` per MoE layer. :func:`tokenomics.physics.params.param_count` is the public
    form (it also accepts a catalog id); the arguments mean the same there.

    Examples
    --------
    >>> from tokenomics.data.catalog import model
    >>> round(counted_params(model("llama-3.1-405b")) / 1e9, 1)  # Meta: 405B
    405.9
    """
    for name, v in (("active", active), ("include_embedding", include_embedding),
                    ("include_lm_head", include_lm_head),
                    ("include_per_layer_embedding", include_per_layer_embedding)):
        V.flag(v, name)
    b = component_params(model)
    total = sum(b.values())
    if active and model.moe is not None and model.num_moe_layers:
        m = model.moe
        total -= b["routed_experts"]
        total += m.top_k * expert_params(model) * model.num_moe_layers
    if not include_embedding:
        total -= b["embedding"]
    if not include_per_layer_embedding:
        total -= b["per_layer_embedding"]
    if not include_lm_head:
        total -= b["lm_head"]
    return float(total)


#: How far a model file's stated parameter counts may sit from what its [config] gives:
#: vendors' names round (Qwen3-Next's "A3B" is 3.25B counted the vendor's way, 8% off).
OFFICIAL_PARAMS_TOLERANCE = 0.10


def check_official_params(model: Model, tolerance: float = OFFICIAL_PARAMS_TOLERANCE) -> None:
    """Refuse a model whose stated ``official`` parameter counts disagree with its config.

    The stated total :math:`N_\\mathrm{off}` must lie within ``tolerance`` of
    :func:`counted_params` of the architecture, :math:`|N_\\mathrm{off} / N - 1| \\le` tolerance;
    the stated active count likewise against ``counted_params(active=True)`` under the file's
    ``active_include_embedding`` / ``active_include_lm_head`` conventions. A value 1000x off
    (a unit typo) or a ``[config]`` pasted from another checkpoint fails here, naming the file
    and field. Every model file is checked as it is loaded (bundled or a user's), and
    ``python -m tokenomics.surfaces.validate`` runs it again on every catalog model.

    Parameters
    ----------
    model : Model
    tolerance : float
        Allowed relative difference [fraction], default :data:`OFFICIAL_PARAMS_TOLERANCE`.

    Raises
    ------
    CatalogError
        Naming the model's file and ``official.total_params`` or ``official.active_params``.
    """
    if not isinstance(model, Model):
        raise TokenomicsError(f"check_official_params needs a Model (tk.model(id)), got "
                              f"{type(model).__name__}")
    V.fraction(tolerance, "tolerance")
    where = model.path or model.id
    ple = model.official_total_include_per_layer_embedding
    pairs = (("total_params", model.official_total_params,
              counted_params(model, include_per_layer_embedding=ple)),
             ("active_params", model.official_active_params,
              counted_params(model, active=True,
                          include_embedding=model.official_active_include_embedding,
                          include_lm_head=model.official_active_include_lm_head,
                          include_per_layer_embedding=ple)))
    for field, stated, counted in pairs:
        if stated is None or counted <= 0:
            continue
        ratio = stated / counted
        if abs(ratio - 1.0) > tolerance:
            raise CatalogError(
                f"{where}: field official.{field}: {stated:.4g} is {ratio:.3g} x the "
                f"{counted:.4g} parameters its [config] gives (at most {tolerance:.0%} apart): "
                f"a typo in the value or its unit, or a [config] of another checkpoint")
