"""Read a Gemma 4 ``config.json`` (``gemma4`` / ``gemma4_text``) into a
:class:`~tokenomics.data.specs.Model`.

Gemma 4 (Google, April 2026) interleaves sliding-window and full-attention layers, as Gemma 3
does, but its full layers have a shape of their own: heads of ``global_head_dim`` (512
against the sliding layers' 256), and with ``attention_k_eq_v`` a quarter of the KV heads
(``num_global_key_value_heads``) and no value projection, the values being the key
projection's output. The reader gives those layers a
:attr:`~tokenomics.data.specs.Model.global_attention`. The MoE size (26B-A4B) runs a dense
MLP of ``intermediate_size`` beside its routed experts in every layer, read here as one
shared expert of that width (the model card's "1 shared expert": the same parameters and
FLOPs), and a router with learned input and per-expert scales
(:attr:`~tokenomics.data.specs.MoE.router_scales`).

The small sizes (E2B, E4B) add three mechanisms, each read into its own field: the last
``num_kv_shared_layers`` layers compute their queries only and attend to the KV of the last
earlier layer of their kind (:attr:`~tokenomics.data.specs.Model.layer_kv_shared`; the source
layer keeps its own span, so a sliding source holds its window), E2B's
``use_double_wide_mlp`` doubles those layers' FFN
(:attr:`~tokenomics.data.specs.Model.kv_shared_ffn_scale`), and per-layer embeddings
(``hidden_size_per_layer_input``: :attr:`~tokenomics.data.specs.Model.per_layer_input_size`),
whose table Google's "effective" parameter counts leave out.

Notes
-----
The interpretation follows transformers' ``Gemma4TextConfig`` and ``Gemma4TextAttention``:

- ``layer_types`` lists ``sliding_attention`` / ``full_attention`` per layer; without it,
  every 6th layer is full; the last layer is always full.
- A full layer's heads are ``global_head_dim`` wide (default 512); with
  ``attention_k_eq_v`` its KV heads are ``num_global_key_value_heads`` (default: the
  sliding layers' count) and it has no ``v_proj``. The cache still holds keys (normalised,
  rotated) and values (normalised, not rotated) separately.
- ``q_norm`` and ``k_norm`` carry a learned scale per head dimension; ``v_norm`` has none.
- A decoder layer has four norms (input, post-attention, pre- and post-feedforward); a MoE
  layer three more (``post_feedforward_layernorm_1``, ``pre_feedforward_layernorm_2``,
  ``post_feedforward_layernorm_2``). The per-layer ``layer_scalar`` (one number) is not
  counted.

Defaults for absent keys are the class's: vocabulary 262,144, ``head_dim`` 256,
``global_head_dim`` 512, ``sliding_window`` 512, ``max_position_embeddings`` 131,072, tied
embeddings; the spec's notes list those used.

References
----------
.. [1] Hugging Face transformers, ``models/gemma4/configuration_gemma4.py`` (commit
   351f643a) and ``modeling_gemma4.py`` (commit c308a309): ``Gemma4TextAttention``,
   ``Gemma4TextRouter``, ``Gemma4TextDecoderLayer``.
.. [2] Hugging Face transformers, ``models/gemma4/convert_gemma4_weights.py`` (commit
   0f3f0632): the released sizes' configurations.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tokenomics.core.errors import CatalogError
from tokenomics.data.specs import Attention, AttentionKind, Model, MoE

#: transformers ``Gemma4TextConfig`` defaults for keys a config may omit.
GEMMA4_DEFAULTS: dict[str, Any] = {
    "vocab_size": 262_144, "head_dim": 256, "global_head_dim": 512, "sliding_window": 512,
    "max_position_embeddings": 131_072,
}


def gemma4_model(r: Any, top: Mapping[str, Any], ident: tuple[str, str],
                 dtypes: tuple[str, str | None, str | None], notes: list[str]) -> Model:
    """A Gemma 4 text decoder from its (text) config.

    Parameters
    ----------
    r : reader
        Typed access to the text config's keys (``int``, ``opt``, ``cfg``, ``where``), as
        :func:`~tokenomics.data.hf_config.model_from_hf_config` passes it, defaults filled.
    top : Mapping
        The whole config (kept on the spec).
    ident : (str, str)
        Catalog id and display name.
    dtypes : (str, str or None, str or None)
        Weight, routed-expert and embedding formats (the last two None where they are the
        weights').
    notes : list of str
        Notes so far (defaults used); the spec's ``notes``.

    Returns
    -------
    Model

    Raises
    ------
    CatalogError
        For malformed keys (flags that are not true/false, head widths below 1, top-k beyond
        the experts, KV sharing that leaves no layer to share from, biases), naming the file
        and key.
    """
    cfg, where = r.cfg, r.where
    _refuse_unmodelled(r)
    h, L = r.int("hidden_size"), r.int("num_hidden_layers")
    nq, nkv = r.int("num_attention_heads"), r.int("num_key_value_heads")
    windows = _windows(cfg.get("layer_types"), r.int("sliding_window"), L, where)
    k_eq_v = _flag(r, "attention_k_eq_v", False)
    n_glob = r.opt("num_global_key_value_heads", nkv) if k_eq_v else nkv
    for n, key in ((nkv, "num_key_value_heads"), (n_glob, "num_global_key_value_heads")):
        if n < 1 or nq % n:
            raise CatalogError(f"{where}: {key}={n} must be >= 1 and divide "
                               f"num_attention_heads={nq}")
    dims = {k: r.int(k) for k in ("head_dim", "global_head_dim")}
    for key, d in dims.items():
        if d < 1:
            raise CatalogError(f"{where}: {key} must be >= 1 (a head's width), got {d}")
    sliding = _shape(nq, nkv, dims["head_dim"], False)
    full = _shape(nq, n_glob, dims["global_head_dim"], k_eq_v)
    moe_on, tie = (_flag(r, key, default) for key, default in (
        ("enable_moe_block", False), ("tie_word_embeddings", top.get("tie_word_embeddings",
                                                                   True))))
    inter = r.int("intermediate_size")
    moe = MoE(num_experts=r.int("num_experts"), top_k=r.int("top_k_experts"),
              expert_intermediate_size=r.int("moe_intermediate_size"), num_shared_experts=1,
              shared_intermediate_size=inter, router_scales=True) if moe_on else None
    if moe_on and not 1 <= moe.top_k <= moe.num_experts:
        raise CatalogError(f"{where}: top_k_experts={moe.top_k} must be in [1, "
                           f"num_experts={moe.num_experts}]")
    if moe_on:
        notes.append(f"the dense MLP of width {inter} beside the experts in every layer read "
                     "as one shared expert")
    wd, ed, emb = dtypes
    return Model(
        id=ident[0], name=ident[1], num_layers=L, hidden_size=h,
        vocab_size=r.int("vocab_size"), max_context=r.int("max_position_embeddings"),
        attention=sliding if any(windows) else full,
        global_attention=full if any(windows) else None, intermediate_size=inter,
        layer_window=tuple(windows), layer_window_kind=tuple(
            "sliding" if w else "full" for w in windows),
        layer_is_moe=(moe_on,) * L, moe=moe, gated_ffn=True, norm="rms",
        norms_per_layer=7 if moe_on else 4,
        tie_word_embeddings=tie,
        weight_dtype=wd, expert_dtype=ed, embedding_dtype=emb if emb != wd else None,
        model_type=str(cfg.get("model_type", "gemma4_text")), family="gemma4",
        **_small_size_fields(r, L),
        notes="; ".join(notes), config=dict(top))


def _flag(r: Any, key: str, default: bool) -> bool:
    """A true/false key (absent or null: ``default``); anything else is refused."""
    v = r.cfg.get(key)
    if v is None:
        return bool(default)
    if not isinstance(v, bool):
        raise CatalogError(f"{r.where}: {key} must be true or false, got {v!r}")
    return v


def _small_size_fields(r: Any, L: int) -> dict[str, Any]:
    """E2B/E4B's mechanisms as Model fields: the last ``num_kv_shared_layers`` layers read
    an earlier layer's KV (``layer_kv_shared``), with ``use_double_wide_mlp`` their FFN is
    twice as wide, and ``hidden_size_per_layer_input`` adds per-layer embeddings."""
    n = r.opt("num_kv_shared_layers", 0)
    if n >= L:
        raise CatalogError(f"{r.where}: num_kv_shared_layers={n} leaves no layer of the "
                           f"{L} to keep a KV the others could read")
    p = r.opt("hidden_size_per_layer_input", 0)
    wide = _flag(r, "use_double_wide_mlp", False)
    return {"layer_kv_shared": tuple(i >= L - n for i in range(L)) if n else (),
            "kv_shared_ffn_scale": 2 if wide and n else 1,
            "per_layer_input_size": p,
            "per_layer_vocab_size": r.opt("vocab_size_per_layer_input",
                                          r.int("vocab_size")) if p else 0,
            "official_total_include_per_layer_embedding": not p}


def _refuse_unmodelled(r: Any) -> None:
    """Biases on the projections are in no Gemma 4 and are refused, not guessed."""
    if r.cfg.get("attention_bias"):
        raise CatalogError(f"{r.where}: attention_bias: Gemma 4's projections have no biases "
                           "in transformers; a config with them is not a Gemma 4 this reader "
                           "knows")


def _shape(nq: int, nkv: int, d: int, k_eq_v: bool) -> Attention:
    """One layer kind's attention: QK norms with a learned scale, no biases."""
    kind: AttentionKind = "MHA" if nkv == nq else ("MQA" if nkv == 1 else "GQA")
    return Attention(kind=kind, num_q_heads=nq, num_kv_heads=nkv, head_dim=d, v_head_dim=d,
                     qk_norm=True, k_eq_v=k_eq_v)


def _windows(layer_types: Any, window: int, L: int, where: str) -> list[int]:
    """Per-layer span [token] (0: full): ``layer_types`` where given, else every 6th layer
    full; the last layer full either way (``Gemma4TextConfig``)."""
    if layer_types is None:
        kinds = ["full_attention" if (i + 1) % 6 == 0 else "sliding_attention"
                 for i in range(L)]
    elif not isinstance(layer_types, (list, tuple)) or len(layer_types) != L or any(
            t not in ("sliding_attention", "full_attention") for t in layer_types):
        raise CatalogError(f"{where}: layer_types must list num_hidden_layers={L} entries, "
                           f"each 'sliding_attention' or 'full_attention', got "
                           f"{layer_types!r:.200}")
    else:
        kinds = list(layer_types)
    if window < 1:
        raise CatalogError(f"{where}: sliding_window must be >= 1 token, got {window}")
    kinds[-1] = "full_attention"
    return [window if t == "sliding_attention" else 0 for t in kinds]
