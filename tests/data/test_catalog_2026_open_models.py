"""Catalog entries of the 2026 open models added on 2026-12-04 (issue 27): Qwen3.5 / Qwen3.6,
Kimi-K2.5 / K2.6 / K2-Thinking / K2-Instruct-0905, MiniMax-M2.1 / M2.5, GLM-5 and
GLM-4.7-Flash, Gemma 4 31B, 26B-A4B, E4B and E2B (their counts: tests/data/test_hf_gemma4.py), and the
small Gemma 3 sizes (4B, 12B).

Expected numbers are the vendors' published figures (cited), hand counts from the
architecture numbers written out below, or figures other projects publish about the
checkpoints; none is copied from the library's output.
"""

from __future__ import annotations

import pytest

import tokenomics as tk
from tokenomics.core.errors import CatalogError
from tokenomics.data.catalog import sources

NEW = {
    "qwen3.5-397b-a17b": "qwen/qwen3.5-397b-a17b", "qwen3.5-122b-a10b": "qwen/qwen3.5-122b-a10b",
    "qwen3.5-35b-a3b": "qwen/qwen3.5-35b-a3b", "qwen3.5-27b": "qwen/qwen3.5-27b",
    "qwen3.5-9b": "qwen/qwen3.5-9b", "qwen3.5-4b": "qwen/qwen3.5-4b",
    "qwen3.6-35b-a3b": "qwen/qwen3.6-35b-a3b", "qwen3.6-27b": "qwen/qwen3.6-27b",
    "kimi-k2.5": "moonshotai/kimi-k2.5", "kimi-k2.6": "moonshotai/kimi-k2.6",
    "kimi-k2-thinking": "moonshotai/kimi-k2-thinking",
    "kimi-k2-0905": "moonshotai/kimi-k2-instruct-0905",
    "gemma-4-31b": "google/gemma-4-31b-it", "gemma-4-26b-a4b": "google/gemma-4-26b-a4b-it",
    "gemma-4-e4b": "google/gemma-4-e4b-it", "gemma-4-e2b": "google/gemma-4-e2b-it",
    "nemotron-3-super-120b-a12b": "nvidia/nvidia-nemotron-3-super-120b-a12b-bf16",
    "minimax-m2.1": "minimaxai/minimax-m2.1", "minimax-m2.5": "minimaxai/minimax-m2.5",
    "glm-5": "zai-org/glm-5", "glm-4.7-flash": "zai-org/glm-4.7-flash",
    "gemma-3-4b": "google/gemma-3-4b-it", "gemma-3-12b": "google/gemma-3-12b-it",
}


@pytest.mark.parametrize("model_id, alias", sorted(NEW.items()))
def test_each_loads_by_id_and_alias_with_a_source_per_field(model_id, alias):
    m = tk.model(alias)
    assert m.id == model_id and tk.model(model_id) is m
    keys = ("config", "weights") + (("official.total_params",)
                                    if m.official_total_params else ())   # E4B: nominal only
    for key in keys:
        assert sources()[m.sources[key]].url.startswith("https://")


def _gdn(h: int, nk: int, nv: int, d: int = 128, conv: int = 4) -> int:
    """A Gated DeltaNet layer by hand: q/k/v/z and b/a input projections, the causal conv
    over q, k and v, dt_bias and A_log, the gated norm, the output projection."""
    return (h * (2 * nk * d + 2 * nv * d) + h * 2 * nv + conv * (2 * nk * d + nv * d)
            + 2 * nv + d + nv * d * h)


def _gated_attention(h: int, nq: int, nkv: int, d: int = 256) -> int:
    """A gated full-attention layer: q and its output gate, k, v, o, per-head Q/K norms."""
    return h * 2 * nq * d + 2 * h * nkv * d + nq * d * h + 2 * d


def test_qwen35_27b_counts_by_hand():
    # Card / Megatron-Bridge: hidden 5120, 64 layers = 16 x (3 GDN + 1 gated attention), 24 Q /
    # 4 KV heads of 256, 16 QK / 48 V linear heads of 128, FFN 17,408, vocab 248,320 untied.
    h, V = 5120, 248_320
    total = (48 * _gdn(h, 16, 48) + 16 * _gated_attention(h, 24, 4) + 64 * 3 * h * 17_408
             + h * (2 * 64 + 1) + 2 * V * h)
    assert total == 26_895_998_464
    m = tk.model("qwen3.5-27b")
    assert tk.param_count(m) == total == tk.param_count(tk.model("qwen3.6-27b"))
    assert m.num_linear_layers == 48 and m.mtp_layers == 1
    # KV: only the 16 full-attention layers cache, 4 heads x (256 + 256) x 2 B each
    assert tk.kv_bytes_per_token(m) == 16 * 4 * 512 * 2


def test_qwen35_35b_a3b_counts_by_hand():
    # transformers Qwen3_5MoeTextConfig (checkpoint Qwen/Qwen3.5-35B-A3B): hidden 2048, 40
    # layers (30 GDN + 10 attention), 16 Q / 2 KV, 16 / 32 linear heads, 256 experts of 512
    # top-8 and one shared expert of 512 in every layer.
    h, V, E = 2048, 248_320, 256
    expert = 3 * h * 512
    total = (30 * _gdn(h, 16, 32) + 10 * _gated_attention(h, 16, 2)
             + 40 * (E * h + (E + 1) * expert) + h * (2 * 40 + 1) + 2 * V * h)
    m = tk.model("qwen3.5-35b-a3b")
    assert tk.param_count(m) == total
    assert tk.param_count(m, active=True, include_embedding=False) == \
        total - V * h - 40 * (E - 8) * expert
    # Qwen: "35B in total and 3B activated" (both one or two significant figures)
    assert total == pytest.approx(35e9, rel=0.02)


def test_qwen35_large_moe_counts_are_the_cards_language_model_figures():
    # Qwen's "397B in total and 17B activated" and "122B ... 10B": the language model alone
    # (the checkpoints' stored totals, 403.4B and 125.1B as third parties record them from
    # the safetensors index, add the vision tower and the MTP layer).
    for mid, card, stored in (("qwen3.5-397b-a17b", 397e9, 403_397_928_944),
                              ("qwen3.5-122b-a10b", 122e9, 125_086_497_008)):
        n = tk.param_count(tk.model(mid))
        assert n == pytest.approx(card, rel=2e-3)
        assert 0.01 < stored / n - 1 < 0.03       # MTP (a full layer with its MoE) + ViT


def test_kimi_k25_int4_experts_weigh_what_the_checkpoint_weighs():
    # vLLM recipe: "Packed INT4 via compressed-tensors (~595 GB on disk)"; that file also holds
    # the ~0.4B-parameter vision encoder in BF16 (~0.8 GB). Routed experts 4 bits + a BF16
    # scale per 32 (4.5 bits a weight); everything else BF16.
    m = tk.model("kimi-k2.5")
    assert m.expert_dtype == "int4_g32" and m.weight_dtype == "bf16"
    b = tk.param_breakdown(m)
    routed = b["routed_experts"]
    rest = tk.param_count(m) - routed
    by_hand = routed * 4.5 / 8 + rest * 2
    assert tk.weight_bytes(m) == pytest.approx(by_hand, rel=1e-9)
    assert by_hand + 0.8e9 == pytest.approx(595e9, rel=0.01)
    # same architecture as Kimi K2 (Moonshot: "built on Kimi-K2-Base"), 262,144 context
    assert tk.param_count(m) == tk.param_count(tk.model("kimi-k2"))
    assert m.max_context == 262_144 == tk.model("kimi-k2-thinking").max_context


def test_minimax_m21_and_m25_keep_m2s_architecture():
    # vLLM recipes: each "retains the M2 architecture (10B active, 230B total)", 196,608 context
    m2 = tk.model("minimax-m2")
    for mid in ("minimax-m2.1", "minimax-m2.5"):
        m = tk.model(mid)
        assert tk.param_count(m) == tk.param_count(m2)
        assert tk.kv_bytes_per_token(m) == tk.kv_bytes_per_token(m2)
        assert m.max_context == 196_608


def test_glm5_counts_by_hand():
    # GLM-5 config (as extracted): hidden 6144, 78 layers, first 3 dense (FFN 12,288), 64 heads
    # MLA q_lora 2048 / kv_lora 512 / nope 192 / rope 64 / v 256, 256 routed + 1 shared experts
    # of 2048, top-8, indexer 32 heads of 128, vocab 154,880 untied. README: "744B-A40B".
    h, L, V, E = 6144, 78, 154_880, 256
    mla = (h * 2048 + 2048 + 2048 * 64 * 256 + h * (512 + 64) + 512 + 512 * 64 * (192 + 256)
           + 64 * 256 * h)
    expert = 3 * h * 2048
    b = tk.param_breakdown(tk.model("glm-5"))
    assert b["routed_experts"] == 75 * E * expert
    assert b["shared_experts"] == 75 * expert
    assert b["dense_ffn"] == 3 * 3 * h * 12_288
    assert b["embedding"] == b["lm_head"] == V * h                       # untied
    assert b["attention"] - L * mla == pytest.approx(0.731e9, rel=0.01)   # the indexers
    assert tk.param_count(tk.model("glm-5")) == pytest.approx(744e9, rel=0.002)
    # KV per token: (512 + 64) latent + one 128-wide index key per layer, BF16
    assert tk.kv_bytes_per_token(tk.model("glm-5")) == L * (512 + 64 + 128) * 2


def test_glm47_flash_is_a_30b_mla_moe():
    # "30B-A3B MoE" (model card); 47 layers of MLA, 64 experts of 1536 top-4 + 1 shared
    m = tk.model("glm-4.7-flash")
    assert m.attention.kind == "MLA" and m.moe.top_k == 4 and m.num_moe_layers == 46
    assert tk.param_count(m) == pytest.approx(30e9, rel=0.01)
    assert m.official_active_params is None      # the name's "A3B" is not stated as a count
    assert tk.kv_bytes_per_token(m) == 47 * (512 + 64) * 2


def test_the_multimodal_wrapper_reads_as_the_catalogs_text_model():
    # A user's config.json of Qwen3.5 nests the text model under text_config with model_type
    # qwen3_5_moe; Kimi-K2.5's under kimi_k25 with a compressed-tensors INT4 config.
    for mid, outer in (("qwen3.5-35b-a3b", "qwen3_5_moe"), ("qwen3.5-27b", "qwen3_5")):
        cat = tk.model(mid)
        text = {k: v for k, v in cat.config.items() if k != "model_type"}
        m = tk.model_from_hf_config({"model_type": outer, "text_config": text,
                                     "vision_config": {"depth": 27}})
        assert tk.param_count(m) == tk.param_count(cat)
        assert m.num_linear_layers == cat.num_linear_layers
    k = tk.model("kimi-k2.5").config
    q = k["quantization_config"]
    text = {x: v for x, v in k.items() if x != "quantization_config"}
    m = tk.model_from_hf_config({"model_type": "kimi_k25", "text_config": text,
                                 "quantization_config": q})
    assert m.expert_dtype == "int4_g32"
    assert tk.param_count(m) == tk.param_count(tk.model("kimi-k2.5"))


def test_an_indexer_shared_over_layers_is_refused():
    cfg = dict(tk.model("glm-5").config, index_topk_freq=4)      # GLM-5.2's IndexShare
    with pytest.raises(CatalogError, match="index_topk_freq=4.*not modelled"):
        tk.model_from_hf_config(cfg)


@pytest.mark.parametrize("model_id, h, L, nq, nkv, inter, report", [
    ("gemma-3-4b", 2560, 34, 8, 4, 10_240, 3.2e9),
    ("gemma-3-12b", 3840, 48, 16, 8, 15_360, 10.8e9),
])
def test_gemma3_text_models_non_embedding_count_is_the_reports(model_id, h, L, nq, nkv, inter,
                                                               report):
    # Gemma 3 report Table 1 (as transcribed): 4B = 3.2B non-embedding + 675M embedding + 417M
    # vision; 12B = 10.8B + 1B + 417M. Per layer by hand: q, k, v, o of 256-wide heads, Q/K
    # norms, a gated FFN and four sandwich norms; one final norm. Vocab 262,208, tied.
    per_layer = h * (nq + 2 * nkv) * 256 + nq * 256 * h + 2 * 256 + 3 * h * inter + 4 * h
    non_emb = L * per_layer + h
    m = tk.model(model_id)
    b = tk.param_breakdown(m)
    assert tk.param_count(m) - b["embedding"] == non_emb
    assert b["embedding"] == 262_208 * h
    assert non_emb == pytest.approx(report, abs=0.05e9)        # the report's two figures
    assert sum(1 for w in m.layer_window if w == 0) == L // 6   # every 6th layer global


@pytest.mark.parametrize("field, value", [("config_groups", [1]), ("ignore", 5)])
def test_a_malformed_compressed_tensors_config_gets_a_library_error(field, value):
    cfg = dict(tk.model("kimi-k2.5").config)
    cfg["quantization_config"] = dict(cfg["quantization_config"], **{field: value})
    with pytest.raises(CatalogError, match="compressed-tensors 'ignore' must be a list"):
        tk.model_from_hf_config(cfg)


def test_kimi_k2_0905_is_k2_at_twice_the_context():
    # Model card: "context window has been increased from 128k to 256k tokens", the summary
    # table otherwise Kimi K2's (1T, 32B activated, 61 layers, 384 experts, MLA)
    m, k2 = tk.model("kimi-k2-0905"), tk.model("kimi-k2")
    assert m.max_context == 262_144 == 2 * k2.max_context
    assert tk.param_count(m) == tk.param_count(k2)
    assert tk.kv_bytes_per_token(m) == (512 + 64) * 61 * 2     # MLA latent, as K2's
    # the July entry keeps the July context: the 0905 id no longer resolves to it
    assert tk.model("moonshotai/kimi-k2-instruct") is k2
