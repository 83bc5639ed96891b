"""Read a Hugging Face ``config.json`` into a :class:`~tokenomics.data.specs.Model`.

The interpretation follows the ``transformers`` configuration classes of each architecture
(defaults included), so that a catalog file, which stores the config verbatim, and a config
downloaded by a user give the same spec. Supported ``model_type`` values:

``llama``, ``mistral``, ``mixtral``, ``qwen2``, ``qwen3``, ``qwen2_moe``, ``qwen3_moe``,
``deepseek_v2``, ``deepseek_v3``, ``kimi_k2``, ``llama4`` / ``llama4_text``, ``gpt_oss``,
``gemma2``, ``gemma3`` / ``gemma3_text``, ``opt``, ``glm4_moe`` (GLM-4.5, GLM-4.5-Air),
``qwen3_next`` (Qwen3-Next: Gated DeltaNet linear-attention layers between gated full-attention
layers), ``qwen3_5`` / ``qwen3_5_moe`` (Qwen3.5 and Qwen3.6, dense and MoE: the same layers,
inside a multimodal config's ``text_config``), ``deepseek_v32`` (DeepSeek-V3.2-Exp: MLA with
DeepSeek Sparse Attention's lightning indexer) and ``glm_moe_dsa`` (GLM-5: the same
attention, an indexer in every layer), ``glm4_moe_lite`` (GLM-4.7-Flash: MLA and a
DeepSeek-style MoE), ``gemma4`` / ``gemma4_text`` (Gemma 4 31B and 26B-A4B: full layers
of their own shape, :mod:`tokenomics.data.hf_gemma4`), ``kimi_k25`` (Kimi-K2.5/K2.6: a
``kimi_k2`` text model in a multimodal wrapper) and ``minimax_m2`` (MiniMax-M2: 256-expert
MoE in every layer, a sigmoid router with correction bias, Q/K norms over the whole
projections) and
``nemotron_h`` (NVIDIA Nemotron-H / Nemotron 3: Mamba-2, attention and MoE blocks in one
stack, ``hybrid_override_pattern``; Nemotron 3 Super's latent MoE, ``moe_latent_size``).

Any other ``model_type`` is read as a Llama-style decoder (gated FFN, RMSNorm, no biases) when
it has the standard keys, and the spec's ``notes`` say so. Keys that change the architecture
in a way this reader does not model raise :class:`~tokenomics.core.errors.CatalogError` naming the
key.

References
----------
Hugging Face transformers, ``models/<arch>/configuration_<arch>.py`` (v4.57):
https://github.com/huggingface/transformers
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tokenomics.core.errors import CatalogError, TokenomicsError
from tokenomics.data.hf_gemma4 import GEMMA4_DEFAULTS, gemma4_model
from tokenomics.data.specs import (
    MAX_LAYERS,
    MAX_WIDTH,
    Attention,
    AttentionKind,
    LinearAttention,
    Model,
    MoE,
)

_TIE_DEFAULT = {
    "gemma2": True, "gemma3": True, "gemma3_text": True, "opt": True, "gemma4_text": True,
}

_KNOWN_TYPES = {
    "llama", "mistral", "mixtral", "qwen2", "qwen3", "qwen2_moe", "qwen3_moe", "deepseek_v2",
    "deepseek_v3", "kimi_k2", "llama4", "llama4_text", "gpt_oss", "gemma2", "gemma3",
    "gemma3_text", "opt", "glm4_moe", "qwen3_next", "deepseek_v32", "minimax_m2",
    "nemotron_h", "qwen3_5", "qwen3_5_text", "qwen3_5_moe", "qwen3_5_moe_text", "kimi_k25",
    "glm_moe_dsa", "glm4_moe_lite", "gemma4", "gemma4_text",
}

#: Families of Gated DeltaNet layers between gated full-attention layers (Qwen3-Next's
#: layout; Qwen3.5 and Qwen3.6 keep it, with separate q/k/v, z, b and a input projections of
#: the same total width).
_GDN_HYBRID = ("qwen3_next", "qwen3_5", "qwen3_5_moe")
#: Families of MLA with DeepSeek Sparse Attention's lightning indexer in every layer.
_DSA = ("deepseek_v32", "glm_moe_dsa")
#: Families with a DeepSeek-V3-style MoE (``first_k_dense_replace``, ``n_routed_experts``).
_DEEPSEEK_MOE = ("deepseek_v2", "deepseek_v3", "deepseek_v32", "kimi_k2", "glm_moe_dsa",
                 "glm4_moe_lite")

# Defaults of the transformers configuration classes for keys that published config.json files
# sometimes omit (because they equal the default). Used only when the key is absent, and the
# spec's notes list them. Source: transformers v4.57 configuration_<arch>.py.
_HF_DEFAULTS: dict[str, dict[str, Any]] = {
    "gemma3_text": {"vocab_size": 262_208, "max_position_embeddings": 131_072,
                    "sliding_window": 4096, "head_dim": 256, "sliding_window_pattern": 6},
    "gemma4_text": GEMMA4_DEFAULTS,
    "gemma2": {"vocab_size": 256_000, "max_position_embeddings": 8192, "sliding_window": 4096,
               "head_dim": 256},
    "llama4_text": {"vocab_size": 202_048, "max_position_embeddings": 4096 * 32,
                    "head_dim": 128},
    "gpt_oss": {"vocab_size": 201_088, "max_position_embeddings": 131_072,
                "sliding_window": 128, "head_dim": 64},
    "llama": {"vocab_size": 32_000, "max_position_embeddings": 2048},
    "mistral": {"vocab_size": 32_000, "max_position_embeddings": 4096 * 32},
    "mixtral": {"vocab_size": 32_000, "max_position_embeddings": 4096 * 32},
    "opt": {"vocab_size": 50_272, "max_position_embeddings": 2048},
}

# Keys that would change the parameter or KV arithmetic and that the generic reader does not
# understand: their presence in a config of an unknown model_type is an error, not a guess.
_UNMODELLED_KEYS = (
    "num_experts", "n_routed_experts", "num_local_experts", "kv_lora_rank", "sliding_window",
    "layer_types", "attention_chunk_size", "ssm_cfg", "mamba_d_state", "linear_attn_config",
    "layers_block_type", "hybrid_override_pattern",
)


def model_from_hf_config(
    config: str | Path | Mapping[str, Any],
    *,
    id: str | None = None,  # noqa: A002 - catalog vocabulary
    name: str | None = None,
    weight_dtype: str | None = None,
    expert_dtype: str | None = None,
    embedding_dtype: str | None = None,
    where: str = "config.json",
) -> Model:
    """Build a :class:`~tokenomics.data.specs.Model` from a Hugging Face ``config.json``.

    Parameters
    ----------
    config : str, Path or Mapping
        Path to a ``config.json`` file, or its parsed contents.
    id, name : str, optional
        Catalog id and display name; default from ``_name_or_path`` or ``model_type``.
    weight_dtype : str, optional
        Weight format; default from ``torch_dtype``/``dtype`` (``bf16`` if absent), or
        ``fp8_e4m3`` when ``quantization_config.quant_method == "fp8"``.
    expert_dtype : str, optional
        Routed-expert format; default ``mxfp4`` when ``quantization_config.quant_method ==
        "mxfp4"`` (gpt-oss), else the weight format.
    embedding_dtype : str, optional
        Format of the embedding and LM head; default, for a quantized checkpoint (any
        ``quantization_config``), its ``torch_dtype`` (quantizers leave them unconverted),
        else the weight format.
    where : str
        Name used in error messages (the file being read).

    Returns
    -------
    Model

    Raises
    ------
    CatalogError
        When a required key is missing or a key cannot be interpreted; the message names it.

    References
    ----------
    .. [1] Hugging Face transformers, configuration_<arch>.py (v4.57).

    Examples
    --------
    >>> m = model_from_hf_config({"model_type": "llama", "hidden_size": 4096,
    ...     "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32,
    ...     "num_key_value_heads": 8, "vocab_size": 128256, "max_position_embeddings": 131072})
    >>> m.attention.kind, m.attention.head_dim
    ('GQA', 128)
    """
    for arg, v in (("id", id), ("name", name), ("weight_dtype", weight_dtype),
                   ("expert_dtype", expert_dtype), ("embedding_dtype", embedding_dtype),
                   ("where", where)):
        if v is not None and (not isinstance(v, str) or not v.strip()):
            raise TokenomicsError(f"model_from_hf_config: {arg} must be a non-empty string, "
                                  f"got {v!r}")
    top, where = _read_config(config, where)
    cfg, mt = _text_config(top)
    notes: list[str] = []
    cfg, filled = _fill_hf_defaults(cfg, mt, notes)
    r = _Reader(cfg, where)
    _check_model_type(cfg, mt, where, notes)

    fam = mt.replace("_text", "")
    if fam == "gemma4":                  # full layers of their own shape: its own reader
        wd, ed = _dtypes(top, weight_dtype, expert_dtype)
        return gemma4_model(r, top, (id or _default_id(top, mt),
                                     name or str(top.get("_name_or_path", mt))),
                            (wd, ed, embedding_dtype or _release_embedding_dtype(top)), notes)
    if fam in ("opt", "nemotron_h"):     # architectures with a reader of their own
        return (_opt(r, {**top, **filled}, id, name, weight_dtype, notes) if fam == "opt" else
                _nemotron_h(r, top, id, name, (weight_dtype, expert_dtype, embedding_dtype),
                            notes))

    h = r.int("hidden_size")
    L = r.int("num_hidden_layers")
    nq, nkv = _heads(r, where)
    vocab = r.int("vocab_size")
    max_ctx = r.int("max_position_embeddings")
    tie = bool(cfg.get("tie_word_embeddings", top.get("tie_word_embeddings",
                                                       _TIE_DEFAULT.get(mt, False))))
    att = _attention(r, cfg, fam, h, nq, nkv)
    windows, kinds = _layer_windows(cfg, fam, L, where)
    is_linear, linear = _linear_layers(r, cfg, fam, L, where)
    is_moe, moe, dense_inter = _moe(r, cfg, fam, L, where)

    norms = 4 if fam in ("gemma2", "gemma3") else 2
    mtp = _mtp_layers(r, cfg, fam)

    wd, ed = _dtypes(top, weight_dtype, expert_dtype)
    emb = embedding_dtype or _release_embedding_dtype(top)
    return Model(
        id=id or _default_id(top, mt), name=name or str(top.get("_name_or_path", mt)),
        num_layers=L, hidden_size=h, vocab_size=vocab, max_context=max_ctx, attention=att,
        intermediate_size=dense_inter, layer_window=tuple(windows),
        layer_window_kind=tuple(kinds), layer_is_moe=tuple(is_moe), moe=moe,
        layer_is_linear=tuple(is_linear), linear_attention=linear,
        gated_ffn=True, ffn_bias=bool(cfg.get("mlp_bias", False)), norm="rms",
        norms_per_layer=norms, tie_word_embeddings=tie, mtp_layers=mtp,
        weight_dtype=wd, expert_dtype=ed, embedding_dtype=emb if emb != wd else None,
        model_type=mt, family=fam,
        notes="; ".join(notes), config=top,
    )


def _heads(r: _Reader, where: str) -> tuple[int, int]:
    """(query heads, KV heads): each >= 1, the first a multiple of the second."""
    nq = r.int("num_attention_heads")
    nkv = r.int("num_key_value_heads", default=nq)
    if nq < 1 or nkv < 1:
        raise CatalogError(f"{where}: num_attention_heads ({nq}) and num_key_value_heads "
                           f"({nkv}) must be >= 1")
    if nq % nkv:
        raise CatalogError(f"{where}: num_attention_heads={nq} is not a multiple of "
                           f"num_key_value_heads={nkv}")
    return nq, nkv


def _mtp_layers(r: _Reader, cfg: Mapping[str, Any], fam: str) -> int:
    """Multi-token-prediction layers shipped beside the main model (not in its count)."""
    if fam == "minimax_m2" and cfg.get("use_mtp", False):     # MTP modules of 1 layer each
        return r.opt("num_mtp_modules", 0) * r.opt("mtp_transformer_layers", 1)
    if fam in _GDN_HYBRID:                                     # Qwen3-Next and Qwen3.5
        return r.opt("mtp_num_hidden_layers", 0)
    return r.opt("num_nextn_predict_layers", 0)


def _read_config(config: str | Path | Mapping[str, Any],
                 where: str) -> tuple[dict[str, Any], str]:
    """The config as a dict and the name errors use (a file's path when read from one)."""
    if isinstance(config, (str, Path)):
        path = Path(config)
        where = str(path)
        try:
            config = json.loads(path.read_text())
        except FileNotFoundError:
            raise CatalogError(f"{where}: no such file") from None
        except (IsADirectoryError, PermissionError, UnicodeDecodeError) as exc:
            raise CatalogError(f"{where}: not a readable config.json file ({exc.__class__.__name__}"
                               f"); give the path of a config.json or its parsed dict") from None
        except json.JSONDecodeError as exc:
            raise CatalogError(f"{where}: not valid JSON ({exc})") from None
    if not isinstance(config, Mapping):
        raise CatalogError(f"{where}: a config must be a mapping, got {type(config).__name__}")
    return dict(config), where


def _text_config(top: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The language model's own config and its ``model_type``.

    Multimodal Llama 4, Gemma 3, Mistral 3 (Mistral Small 3.1), Qwen3.5 / Qwen3.6 and
    Kimi-K2.5 configs nest it under ``text_config`` (model type ``llama4_text`` /
    ``gemma3_text`` / ``qwen3_5_moe_text``; Mistral 3's states ``mistral``, Kimi-K2.5's
    ``kimi_k2``); every other config is its own text config.
    """
    mtype = str(top.get("model_type", ""))
    cfg = top
    if mtype in ("llama4", "gemma3", "gemma4", "mistral3", "qwen3_5", "qwen3_5_moe",
                 "kimi_k25") and \
            isinstance(top.get("text_config"), Mapping):
        cfg = dict(top["text_config"])      # Mistral 3's text_config says "mistral" itself
        cfg.setdefault("model_type", mtype + "_text")
    return cfg, str(cfg.get("model_type", mtype)) or "unknown"


def _fill_hf_defaults(cfg: dict[str, Any], mt: str,
                      notes: list[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Add the transformers defaults of keys the config omits; note which were used."""
    filled = {k: v for k, v in _HF_DEFAULTS.get(mt, {}).items() if k not in cfg}
    if filled:
        cfg = {**cfg, **filled}
        notes.append("transformers defaults used for absent keys: "
                     + ", ".join(f"{k}={v}" for k, v in filled.items()))
    return cfg, filled


def _check_model_type(cfg: Mapping[str, Any], mt: str, where: str, notes: list[str]) -> None:
    """Accept an unknown ``model_type`` as Llama-style unless it has keys this reader ignores."""
    if mt in _KNOWN_TYPES:
        return
    bad = [k for k in _UNMODELLED_KEYS if cfg.get(k) not in (None, False, 0, [])]
    if bad:
        raise CatalogError(
            f"{where}: model_type {mt!r} is not supported and its keys "
            f"{', '.join(bad)} change the architecture in ways the generic reader does not "
            f"model; supported model types: {', '.join(sorted(_KNOWN_TYPES))}. Way forward: "
            "if those keys do not apply to this checkpoint, remove them from the mapping "
            "passed to model_from_hf_config; otherwise the architecture needs its own reader "
            "(see 'Reading a config.json' in docs/catalog-schema.md)")
    notes.append(f"model_type {mt!r} read as a generic Llama-style decoder")


def _attention(r: _Reader, cfg: Mapping[str, Any], fam: str, h: int, nq: int,
               nkv: int) -> Attention:
    """The attention block: MLA when ``kv_lora_rank`` is set, else MHA/GQA/MQA by head counts."""
    if "kv_lora_rank" in cfg and cfg.get("kv_lora_rank"):
        rope = r.int("qk_rope_head_dim")
        nope = r.int("qk_nope_head_dim")
        return Attention(
            kind="MLA", num_q_heads=nq, num_kv_heads=nkv, head_dim=rope + nope,
            v_head_dim=r.int("v_head_dim"), q_lora_rank=r.opt("q_lora_rank", 0),
            kv_lora_rank=r.int("kv_lora_rank"), qk_rope_head_dim=rope, qk_nope_head_dim=nope,
            qkv_bias=bool(cfg.get("attention_bias", False)),
            o_bias=bool(cfg.get("attention_bias", False)),
            **_dsa_indexer(r, fam),
        )
    hd = _head_dim(r, cfg, h, nq)
    kind: AttentionKind = "MHA" if nkv == nq else ("MQA" if nkv == 1 else "GQA")
    qkv_bias = bool(cfg.get("attention_bias", False)) or fam in ("qwen2", "qwen2_moe")
    # GLM-4.5 (Glm4MoeAttention): attention_bias applies to q/k/v only, o_proj has no bias;
    # use_qk_norm adds per-head q_norm/k_norm. partial_rotary_factor changes neither count.
    o_bias = bool(cfg.get("attention_bias", False)) and fam != "glm4_moe"
    qk_norm = fam in ("qwen3", "qwen3_moe", "gemma3", *_GDN_HYBRID) or (
        fam == "glm4_moe" and bool(cfg.get("use_qk_norm", False))) or (
        fam == "minimax_m2" and bool(cfg.get("use_qk_norm", True)))
    # MiniMaxM2Attention: q_norm / k_norm over the whole projections ("per_layer", the only
    # form transformers implements; its v5 configs drop the key)
    full = fam == "minimax_m2" and cfg.get("qk_norm_type", "per_layer") == "per_layer"
    return Attention(
        kind=kind, num_q_heads=nq, num_kv_heads=nkv, head_dim=hd, v_head_dim=hd,
        qkv_bias=qkv_bias, o_bias=o_bias,
        qk_norm=qk_norm, qk_norm_full=qk_norm and full,
        sinks=fam == "gpt_oss",
        # Qwen3NextAttention: q_proj emits the query and a sigmoid output gate (2 n_q d).
        output_gate=fam in _GDN_HYBRID,
    )


def _dsa_indexer(r: _Reader, fam: str) -> dict[str, int]:
    """DeepSeek-V3.2-Exp's lightning indexer keys (``index_n_heads``, ``index_head_dim``,
    ``index_topk``), required for ``deepseek_v32`` and ``glm_moe_dsa``; none for other
    families. GLM-5.2's indexer shared over several layers (``index_topk_freq`` above 1) is
    not modelled and is refused."""
    if fam not in _DSA:
        return {}
    if r.opt("index_topk_freq", 1) != 1:
        raise CatalogError(f"{r.where}: index_topk_freq={r.cfg['index_topk_freq']!r}: an "
                           "indexer shared over several layers (GLM-5.2's IndexShare) is not "
                           "modelled; only an indexer in every layer (1, GLM-5's) is")
    return {"index_n_heads": r.int("index_n_heads"), "index_head_dim": r.int("index_head_dim"),
            "index_topk": r.int("index_topk")}


def _linear_layers(r: _Reader, cfg: Mapping[str, Any], fam: str, L: int,
                   where: str) -> tuple[list[bool], LinearAttention | None]:
    """Qwen3-Next's Gated DeltaNet layers: per-layer flags and their shape.

    transformers ``Qwen3NextConfig``: an explicit ``layer_types`` list (``linear_attention`` /
    ``full_attention``) wins; otherwise layer *i* is full attention when
    ``(i + 1) % full_attention_interval == 0`` (default interval 4), linear otherwise.
    """
    if fam not in _GDN_HYBRID:
        return [], None
    lt = cfg.get("layer_types")
    if lt is None:
        interval = r.int("full_attention_interval", default=4)
        if interval < 1:
            raise CatalogError(f"{where}: full_attention_interval must be >= 1, got {interval}")
        flags = [(i + 1) % interval != 0 for i in range(L)]
    else:
        if len(lt) != L or any(t not in ("linear_attention", "full_attention") for t in lt):
            raise CatalogError(f"{where}: layer_types must list {L} entries, each "
                               f"'linear_attention' or 'full_attention', got {lt!r}")
        flags = [t == "linear_attention" for t in lt]
    lin = LinearAttention(
        num_k_heads=r.int("linear_num_key_heads"), num_v_heads=r.int("linear_num_value_heads"),
        head_k_dim=r.int("linear_key_head_dim"), head_v_dim=r.int("linear_value_head_dim"),
        conv_kernel=r.int("linear_conv_kernel_dim"))
    return flags, lin


def _head_dim(r: _Reader, cfg: Mapping[str, Any], h: int, nq: int) -> int:
    """``head_dim`` where given (a whole number >= 1: 0 is not "absent"), else
    ``hidden_size / num_attention_heads``, which must then be whole (Hugging Face's
    convention: 4,097 over 32 heads is a typo, not a head of 128)."""
    v = cfg.get("head_dim")
    if v is not None:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) \
                or v != int(v) or v < 1:
            raise CatalogError(f"{r.where}: head_dim must be a whole number from 1 (the "
                               f"width of one attention head), got {v!r}")
        return r.int("head_dim")
    if h % nq:
        raise CatalogError(
            f"{r.where}: hidden_size {h} is not a multiple of num_attention_heads {nq} and no "
            f"head_dim is given, so the head width hidden_size / heads = {h / nq:g} is not a "
            f"whole number; fix hidden_size or give head_dim")
    return h // nq


class _Reader:
    """Typed access to config keys with errors that name the file and key."""

    def __init__(self, cfg: Mapping[str, Any], where: str) -> None:
        self.cfg = cfg
        self.where = where

    def int(self, key: str, default: int | None = None) -> int:
        v = self.cfg.get(key, default)
        if v is None:
            raise CatalogError(f"{self.where}: required key {key!r} is missing "
                               f"(model_type {self.cfg.get('model_type')!r})")
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) \
                or v != int(v) or v < 0:
            raise CatalogError(f"{self.where}: key {key!r} must be a non-negative integer, "
                               f"got {v!r}")
        top = MAX_LAYERS if key == "num_hidden_layers" else MAX_WIDTH * 1000
        if v > top:                # checked before any per-layer tuple is built
            raise CatalogError(f"{self.where}: key {key!r} is {v:.4g}, beyond any model "
                               f"(at most {top:,})")
        return int(v)

    def opt(self, key: str, default: int) -> int:
        """An optional integer key: ``default`` where absent or null, else checked as
        :meth:`int` checks a required one."""
        return default if self.cfg.get(key) is None else self.int(key)


def _default_id(top: Mapping[str, Any], mt: str) -> str:
    nm = str(top.get("_name_or_path", "")).strip()
    if nm:
        return nm.split("/")[-1].lower()
    return mt.replace("_", "-")


def _layer_windows(cfg: Mapping[str, Any], fam: str, L: int,
                   where: str) -> tuple[list[int], list[str]]:
    """Per-layer (window, kind). Window 0 means full attention.

    An explicit ``layer_types`` list wins; otherwise each family's fixed pattern applies
    (gpt-oss and Gemma 2: sliding on even layers; Gemma 3: every ``sliding_window_pattern``-th
    layer global; Llama 4: chunked on RoPE layers; Qwen: sliding from ``max_window_layers``
    on; Mistral/Mixtral: sliding everywhere), and full attention for everything else.
    """
    sw = cfg.get("sliding_window")
    chunk = cfg.get("attention_chunk_size")
    lt = cfg.get("layer_types")
    if fam in _GDN_HYBRID:   # no windows; the linear layers are flagged by _linear_layers
        return [0] * L, ["full"] * L
    if lt is not None:
        return _windows_from_layer_types(lt, sw, chunk, L, where)
    if fam in ("gpt_oss", "gemma2", "gemma3") and not sw:
        raise CatalogError(f"{where}: model_type {fam!r} uses sliding-window layers but "
                           "sliding_window is not set")
    if fam in ("gpt_oss", "gemma2"):
        # gpt-oss reference implementation and Gemma 2: sliding window on even layers.
        return _spans([i % 2 == 0 for i in range(L)], sw, "sliding")
    if fam == "gemma3":
        pattern = int(cfg.get("sliding_window_pattern", 6))
        return _spans([(i + 1) % pattern != 0 for i in range(L)], sw, "sliding")
    if fam == "llama4":
        return _llama4_windows(cfg, chunk, L, where)
    if fam in ("qwen2", "qwen3", "qwen2_moe", "qwen3_moe"):
        if cfg.get("use_sliding_window") and sw:
            mwl = int(cfg.get("max_window_layers", L))
            return _spans([i >= mwl for i in range(L)], sw, "sliding")
        return [0] * L, ["full"] * L
    if sw and fam in ("mistral", "mixtral"):
        return [int(sw)] * L, ["sliding"] * L
    return [0] * L, ["full"] * L


def _spans(limited: list[bool], window: Any, kind: str) -> tuple[list[int], list[str]]:
    """Per-layer (window, kind): ``window`` tokens of ``kind`` where ``limited``, else full."""
    return ([int(window) if s else 0 for s in limited],
            [kind if s else "full" for s in limited])


_LAYER_TYPES = {"full_attention": "full", "sliding_attention": "sliding",
                "chunked_attention": "chunked"}


def _windows_from_layer_types(lt: Any, sw: Any, chunk: Any, L: int,
                              where: str) -> tuple[list[int], list[str]]:
    """Per-layer (window, kind) from an explicit ``layer_types`` list (transformers >= 4.53)."""
    if len(lt) != L:
        raise CatalogError(f"{where}: layer_types has {len(lt)} entries, "
                           f"num_hidden_layers is {L}")
    w, k = [], []
    for i, t in enumerate(lt):
        kind = _LAYER_TYPES.get(t) if isinstance(t, str) else None
        if kind is None:
            raise CatalogError(f"{where}: layer_types[{i}] = {t!r} is not interpreted "
                               "(expected full_attention, sliding_attention or "
                               "chunked_attention)")
        if kind == "sliding" and not sw:
            raise CatalogError(f"{where}: layer_types[{i}] is sliding_attention but "
                               "sliding_window is not set")
        if kind == "chunked" and not chunk:
            raise CatalogError(f"{where}: layer_types[{i}] is chunked_attention but "
                               "attention_chunk_size is not set")
        w.append(0 if kind == "full" else int(sw if kind == "sliding" else chunk))
        k.append(kind)
    return w, k


def _llama4_windows(cfg: Mapping[str, Any], chunk: Any, L: int,
                    where: str) -> tuple[list[int], list[str]]:
    """Llama 4: chunked attention on the RoPE layers, full (NoPE) on every ``interval``-th."""
    nrl = cfg.get("no_rope_layers")
    if not nrl:
        interval = int(cfg.get("no_rope_layer_interval", cfg.get("nope_layer_interval", 4)))
        nrl = [int((i + 1) % interval != 0) for i in range(L)]
    nrl = list(nrl)
    if len(nrl) != L:
        raise CatalogError(f"{where}: no_rope_layers has {len(nrl)} entries, expected {L}")
    if chunk:
        return _spans([bool(r) for r in nrl], chunk, "chunked")
    return [0] * L, ["full"] * L


def _moe(r: _Reader, cfg: Mapping[str, Any], fam: str, L: int,
         where: str) -> tuple[list[bool], MoE | None, int]:
    """Per-layer MoE flags, the MoE spec and the dense-layer FFN width."""
    if fam == "minimax_m2":     # every layer: E experts of intermediate_size, sigmoid router
        moe = MoE(num_experts=r.int("num_local_experts"), top_k=r.int("num_experts_per_tok"),
                  expert_intermediate_size=r.int("intermediate_size"),
                  router_bias=bool(cfg.get("use_routing_bias", True)))
        return [True] * L, moe, r.int("intermediate_size")
    if fam == "mixtral":
        moe = MoE(num_experts=r.int("num_local_experts"), top_k=r.int("num_experts_per_tok"),
                  expert_intermediate_size=r.int("intermediate_size"))
        return [True] * L, moe, r.int("intermediate_size")
    if fam in ("qwen2_moe", "qwen3_moe", "qwen3_next", "qwen3_5_moe"):
        step = r.int("decoder_sparse_step", 1)
        only = set(cfg.get("mlp_only_layers") or [])
        flags = [(i not in only) and step > 0 and (i + 1) % step == 0 for i in range(L)]
        shared_size = r.opt("shared_expert_intermediate_size", 0)
        moe = MoE(num_experts=r.int("num_experts"), top_k=r.int("num_experts_per_tok"),
                  expert_intermediate_size=r.int("moe_intermediate_size"),
                  num_shared_experts=1 if shared_size else 0,
                  shared_intermediate_size=shared_size)
        # Qwen3.5's MoE text config has no dense FFN width (every layer is MoE)
        return flags, moe, (r.opt("intermediate_size", 0) if fam == "qwen3_5_moe"
                            else r.int("intermediate_size"))
    if fam in _DEEPSEEK_MOE:
        first = r.int("first_k_dense_replace", 0)
        freq = r.int("moe_layer_freq", 1)
        if freq < 1:
            raise CatalogError(f"{r.where}: key 'moe_layer_freq' must be >= 1 (every how many "
                               f"layers a layer is MoE), got {freq!r}")
        flags = [i >= first and i % freq == 0 for i in range(L)]
        ns = r.opt("n_shared_experts", 0)
        inter = r.int("moe_intermediate_size")
        moe = MoE(num_experts=r.int("n_routed_experts"), top_k=r.int("num_experts_per_tok"),
                  expert_intermediate_size=inter, num_shared_experts=ns,
                  shared_intermediate_size=inter if ns else 0,
                  # GLM's MoE (Glm4MoeMoE: GLM-5, GLM-4.7-Flash) always has the correction bias
                  router_bias=cfg.get("topk_method") == "noaux_tc" or fam.startswith("glm"),
                  n_group=r.opt("n_group", 0),
                  topk_group=r.opt("topk_group", 0))
        return flags, moe, r.int("intermediate_size")
    if fam == "glm4_moe":
        return _glm4_moe(r, cfg, L)
    if fam == "llama4":
        step = r.opt("interleave_moe_layer_step", 1)
        layers = cfg.get("moe_layers")
        if layers is None:
            layers = list(range(step - 1, L, step)) if step > 0 else []
        flags = [i in set(layers) for i in range(L)]
        inter = r.int("intermediate_size")
        moe = MoE(num_experts=r.int("num_local_experts"), top_k=r.int("num_experts_per_tok"),
                  expert_intermediate_size=inter, num_shared_experts=1,
                  shared_intermediate_size=inter)
        return flags, moe, int(cfg.get("intermediate_size_mlp") or inter)
    if fam == "gpt_oss":
        k = cfg.get("num_experts_per_tok", cfg.get("experts_per_token"))
        if k is None:
            raise CatalogError(f"{where}: required key 'num_experts_per_tok' is missing")
        moe = MoE(num_experts=r.int("num_local_experts"), top_k=int(k),
                  expert_intermediate_size=r.int("intermediate_size"),
                  router_bias=True, expert_bias=True)
        return [True] * L, moe, r.int("intermediate_size")
    return [False] * L, None, r.int("intermediate_size")


def _glm4_moe(r: _Reader, cfg: Mapping[str, Any], L: int) -> tuple[list[bool], MoE, int]:
    """GLM-4.5 MoE: dense FFN on the first ``first_k_dense_replace`` layers, MoE after.

    transformers ``Glm4MoeMoE``: ``n_routed_experts`` experts of width
    ``moe_intermediate_size``, one shared MLP of width ``moe_intermediate_size *
    n_shared_experts`` (counted here as ``n_shared_experts`` experts of the routed width, the
    same parameters), and a router with ``e_score_correction_bias`` (always present).
    """
    first = r.opt("first_k_dense_replace", 1)
    flags = [i >= first for i in range(L)]
    ns = r.opt("n_shared_experts", 0)
    inter = r.int("moe_intermediate_size")
    moe = MoE(num_experts=r.int("n_routed_experts"), top_k=r.int("num_experts_per_tok"),
              expert_intermediate_size=inter, num_shared_experts=ns,
              shared_intermediate_size=inter if ns else 0, router_bias=True)
    return flags, moe, r.int("intermediate_size")


def _dtypes(top: Mapping[str, Any], weight_dtype: str | None,
            expert_dtype: str | None) -> tuple[str, str | None]:
    q = top.get("quantization_config") or {}
    method = str(q.get("quant_method", "")).lower() if isinstance(q, Mapping) else ""
    if weight_dtype is None:
        if method == "fp8":
            weight_dtype = "fp8_e4m3"
        else:
            td = str(top.get("torch_dtype", top.get("dtype", "bfloat16"))).lower()
            weight_dtype = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}.get(
                td, "bf16")
    if expert_dtype is None and method == "mxfp4":
        expert_dtype = "mxfp4"
    if expert_dtype is None and method == "compressed-tensors":
        expert_dtype = _int4_groups(q)
    return weight_dtype, expert_dtype


def _int4_groups(q: Mapping[str, Any]) -> str | None:
    """A compressed-tensors config's 4-bit integer groups (Kimi-K2.5's routed experts: INT4,
    a scale per 32 weights) as ``int4_g32`` / ``int4_g128``, where its ``ignore`` list keeps
    the attention out (the experts-only layout); None for anything else (pass
    ``weight_dtype`` / ``expert_dtype`` for other layouts)."""
    ignore, groups = q.get("ignore") or (), q.get("config_groups") or {}
    if not isinstance(ignore, (list, tuple)) or not isinstance(groups, Mapping):
        raise CatalogError("quantization_config: compressed-tensors 'ignore' must be a list of "
                           "module names and 'config_groups' a mapping of groups, got "
                           f"{type(ignore).__name__} and {type(groups).__name__}")
    if not any("self_attn" in str(x) for x in ignore):
        return None
    for group in groups.values():
        w = group.get("weights") if isinstance(group, Mapping) else None
        if isinstance(w, Mapping) and w.get("num_bits") == 4 and w.get("type") == "int":
            return {32: "int4_g32", 128: "int4_g128"}.get(w.get("group_size"))
    return None


def _release_embedding_dtype(top: Mapping[str, Any]) -> str | None:
    """``torch_dtype`` of a quantized checkpoint (its embedding and LM head), else None."""
    if not top.get("quantization_config"):
        return None
    td = str(top.get("torch_dtype", top.get("dtype", "bfloat16"))).lower()
    return {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}.get(td, "bf16")


def _opt(r: _Reader, top: Mapping[str, Any], id: str | None, name: str | None,  # noqa: A002
         weight_dtype: str | None, notes: list[str]) -> Model:
    h = r.int("hidden_size")
    L = r.int("num_hidden_layers")
    nq = r.int("num_attention_heads")
    proj = int(top.get("word_embed_proj_dim", h))
    if proj != h:
        raise CatalogError(f"{r.where}: word_embed_proj_dim={proj} differs from hidden_size={h}; "
                           "OPT's project_in/project_out layers are not interpreted")
    if not top.get("do_layer_norm_before", True):
        notes.append("post-layer-norm OPT variant")
    bias = bool(top.get("enable_bias", True))
    att = Attention(kind="MHA", num_q_heads=nq, num_kv_heads=nq, head_dim=h // nq,
                    v_head_dim=h // nq, qkv_bias=bias, o_bias=bias)
    max_ctx = r.int("max_position_embeddings")
    wd, _ = _dtypes(top, weight_dtype, None)
    return Model(
        id=id or _default_id(top, "opt"), name=name or str(top.get("_name_or_path", "opt")),
        num_layers=L, hidden_size=h, vocab_size=r.int("vocab_size"), max_context=max_ctx,
        attention=att, intermediate_size=r.int("ffn_dim"), layer_window=(0,) * L,
        layer_window_kind=("full",) * L, layer_is_moe=(False,) * L, gated_ffn=False,
        ffn_bias=bias, norm="layer", norms_per_layer=2,
        tie_word_embeddings=bool(top.get("tie_word_embeddings", True)),
        # OPT's learned positions are offset by 2 rows (OPTLearnedPositionalEmbedding).
        learned_positions=max_ctx + 2, weight_dtype=wd, model_type="opt", family="opt",
        notes="; ".join(notes), config=dict(top),
    )


#: Nemotron-H block letters in ``hybrid_override_pattern``: the two mixers and the two FFNs.
_NEMOTRON_MIXERS, _NEMOTRON_FFNS = {"M": "mamba", "*": "attention"}, {"E": "moe", "-": "mlp"}


def _nemotron_layers(pattern: Any, L: int, where: str) -> list[tuple[str, str | None]]:
    """``hybrid_override_pattern`` as (mixer, FFN or None) per layer: a mixer block and the
    FFN block that follows it, if any (Nemotron-H stacks single blocks, one norm each)."""
    if not isinstance(pattern, str) or len(pattern) != L or \
            set(pattern) - set(_NEMOTRON_MIXERS) - set(_NEMOTRON_FFNS):
        raise CatalogError(f"{where}: hybrid_override_pattern must be a string of "
                           f"num_hidden_layers={L} letters M (Mamba-2), * (attention), E (MoE) "
                           f"or - (MLP), got {pattern!r}")
    out: list[tuple[str, str | None]] = []
    for i, c in enumerate(pattern):
        if c in _NEMOTRON_MIXERS:
            out.append((_NEMOTRON_MIXERS[c], None))
        elif not out or out[-1][1] is not None:
            raise CatalogError(f"{where}: hybrid_override_pattern block {i} ({c!r}) is an FFN "
                               f"with no mixer block of its own before it; this reader pairs "
                               f"each FFN block with the mixer it follows")
        else:
            out[-1] = (out[-1][0], _NEMOTRON_FFNS[c])
    return out


def _nemotron_h(r: _Reader, top: Mapping[str, Any], id: str | None,  # noqa: A002
                name: str | None, dtypes: tuple[str | None, str | None, str | None],
                notes: list[str]) -> Model:
    """NVIDIA Nemotron-H (``nemotron_h``): Mamba-2, attention and MoE blocks in one stack.

    transformers ``NemotronHConfig`` / ``NemotronHMamba2Mixer``: Mamba-2 with ``n_groups``
    groups of ``ssm_state_size`` and ``mamba_num_heads`` heads of ``mamba_head_dim``
    (inner width heads x head_dim), its SSM cache in ``mamba_ssm_cache_dtype``; GQA
    attention; MoE blocks of ``n_routed_experts`` non-gated experts (``mlp_hidden_act``
    ``relu2``) plus shared ones, a sigmoid router with correction bias.
    """
    layers = _nemotron_layers(top.get("hybrid_override_pattern"),
                              r.int("num_hidden_layers"), r.where)
    if top.get("use_bias") or top.get("mamba_proj_bias"):
        raise CatalogError(f"{r.where}: use_bias / mamba_proj_bias (biases on the Mamba "
                           f"projections) are not modelled; this reader counts none")
    n, h = len(layers), r.int("hidden_size")
    nq, nkv = _heads(r, r.where)
    att = _attention(r, top, "nemotron_h", h, nq, nkv)     # plain GQA, biases as stated
    ssm = str(top.get("mamba_ssm_cache_dtype", "")).replace("float32", "fp32")
    lin = LinearAttention(
        num_k_heads=r.int("n_groups"), num_v_heads=r.int("mamba_num_heads"),
        head_k_dim=r.int("ssm_state_size"), head_v_dim=r.int("mamba_head_dim"),
        conv_kernel=r.int("conv_kernel"), kind="mamba2",
        state_dtype="fp32" if ssm == "fp32" else None,
        conv_bias=bool(top.get("use_conv_bias", True)))
    is_moe = [f == "moe" for _, f in layers]
    moe = None
    if any(is_moe):
        shared = r.opt("n_shared_experts", 0)
        moe = MoE(num_experts=r.int("n_routed_experts"), top_k=r.int("num_experts_per_tok"),
                  expert_intermediate_size=r.int("moe_intermediate_size"),
                  num_shared_experts=shared,
                  shared_intermediate_size=r.int("moe_shared_expert_intermediate_size")
                  if shared else 0, router_bias=True, n_group=r.opt("n_group", 0),
                  topk_group=r.opt("topk_group", 0),
                  latent_size=r.opt("moe_latent_size", 0))   # Nemotron 3 Super's latent MoE
    gated = str(top.get("mlp_hidden_act", "relu2")) not in ("relu2", "relu", "gelu")
    wd, ed = _dtypes(top, dtypes[0], dtypes[1])
    emb = dtypes[2] or _release_embedding_dtype(top)
    notes.append(f"{len(top['hybrid_override_pattern'])} blocks read as {n} layers (a mixer "
                 f"and the FFN block after it)")
    return Model(
        id=id or _default_id(top, "nemotron_h"),
        name=name or str(top.get("_name_or_path", "nemotron_h")), num_layers=n,
        hidden_size=h, vocab_size=r.int("vocab_size"),
        max_context=r.int("max_position_embeddings"), attention=att,
        intermediate_size=r.int("intermediate_size"), layer_window=(0,) * n,
        layer_window_kind=("full",) * n, layer_is_moe=tuple(is_moe), moe=moe,
        layer_is_linear=tuple(m == "mamba" for m, _ in layers), linear_attention=lin,
        layer_has_ffn=tuple(f is not None for _, f in layers), gated_ffn=gated,
        ffn_bias=bool(top.get("mlp_bias", False)), norm="rms", norms_per_layer=2,
        tie_word_embeddings=bool(top.get("tie_word_embeddings", False)),
        mtp_layers=r.opt("num_nextn_predict_layers", 0), weight_dtype=wd, expert_dtype=ed,
        embedding_dtype=emb if emb != wd else None, model_type="nemotron_h",
        family="nemotron_h", notes="; ".join(notes), config=dict(top),
    )
