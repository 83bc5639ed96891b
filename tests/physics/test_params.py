"""Parameter counts computed from each catalog architecture vs the vendors' official counts."""

from __future__ import annotations

import pytest

import tokenomics as tk
from tokenomics.data.catalog import default_catalog

MODELS = sorted(default_catalog().models)
#: Models whose vendor gives only a nominal size, not a count, and how far it is from the
#: config's count (the catalog states no official total for them; the size is in the notes).
NOMINAL_ONLY = {"phi-4": (14e9, 0.047),    # Microsoft: "a 14-billion parameter model"
                # Google: "4.5B effective", the count without the per-layer table 3.2% above
                "gemma-4-e4b": (4.5e9, 0.032)}


@pytest.mark.parametrize("model_id", MODELS)
def test_total_params_within_2pct_of_official(model_id):
    m = tk.model(model_id)
    if model_id in NOMINAL_ONLY:
        size, gap = NOMINAL_ONLY[model_id]
        assert m.official_total_params is None
        counted = tk.param_count(
            m, include_per_layer_embedding=m.official_total_include_per_layer_embedding)
        assert counted / size - 1 == pytest.approx(gap, abs=0.001)
        return
    assert m.official_total_params, f"{model_id} has no official total"
    counted = tk.param_count(
        m, include_per_layer_embedding=m.official_total_include_per_layer_embedding)
    assert counted == pytest.approx(m.official_total_params,
                                    rel=ROUNDED_TOTAL.get(model_id, 0.02))


@pytest.mark.parametrize("model_id", MODELS)
def test_active_params_within_2pct_of_official(model_id):
    m = tk.model(model_id)
    if m.official_active_params is None:   # "not published" (DeepSeek-V3.2-Exp), as the spec
        pytest.skip(f"{model_id}: no official active count is published")
    active = tk.param_count(m, active=True,
                            include_embedding=m.official_active_include_embedding,
                            include_lm_head=m.official_active_include_lm_head,
                            include_per_layer_embedding=(
                                m.official_total_include_per_layer_embedding))
    # Qwen publishes Qwen3-Next's active count as "3B", one significant figure: it stands
    # for [2.5B, 3.5B), so the check is half a unit of that figure there.
    rel = ROUNDED_ACTIVE.get(model_id, 0.02)
    assert active == pytest.approx(m.official_active_params, rel=rel)


# MiniMax states "10 billion active" for MiniMax-M2, likewise one significant figure.
# MiniMax-M2.1 and M2.5 keep M2's "10B"; Qwen3.5/3.6 state "17B", "10B" and "3B"; GLM-5 "40B".
ROUNDED_ACTIVE = {"qwen3-next-80b-a3b": 0.5 / 3, "minimax-m2": 0.5 / 10,
                  "minimax-m2.1": 0.5 / 10, "minimax-m2.5": 0.5 / 10,
                  "qwen3.5-397b-a17b": 0.5 / 17, "qwen3.5-122b-a10b": 0.5 / 10,
                  "qwen3.5-35b-a3b": 0.5 / 3, "qwen3.6-35b-a3b": 0.5 / 3, "qwen3.5-4b": 0.5 / 4,
                  # GLM-5's lightning indexers (78 x (2048 x 32 x 128 + 6144 x 128 + 128 x 2
                  # + 6144 x 32) = 0.73B) run for every token; Z.ai's "40B", like DeepSeek's
                  # 37B for V3, leaves them out: half a unit plus the indexers.
                  "glm-5": (0.5 + 0.73) / 40}
#: Totals stated to one significant figure ("4B" on the Qwen3.5-4B card): half a unit of it.
ROUNDED_TOTAL = {"qwen3.5-4b": 0.5 / 4}


def test_qwen3_next_by_hand():
    # Gated DeltaNet layer: in_proj_qkvz 2048 x (2*2048 + 2*4096) = 25,165,824; in_proj_ba
    # 2048 x 64 = 131,072; conv1d 4 x 8192 = 32,768; dt_bias + A_log 64; norm 128; out_proj
    # 4096 x 2048 = 8,388,608 -> 33,718,464 per layer, 36 layers.
    # Full-attention layer: q (with gate) 2048 x 8192, k and v 2048 x 512 each, o 4096 x 2048,
    # q/k norms 2 x 256 -> 27,263,488, 12 layers. MoE per layer: router 512 x 2048, 512
    # experts of 3 x 2048 x 512 = 3,145,728, one shared expert; embedding and head
    # 151,936 x 2048 each; norms 2048 x 97.
    m = tk.model("qwen3-next-80b-a3b")
    per_moe = 512 * 2048 + 513 * 3_145_728
    total = (2 * 151_936 * 2048 + 36 * 33_718_464 + 12 * 27_263_488 + 48 * per_moe
             + 2048 * 97)
    assert tk.param_count(m) == total
    active = total - 2 * 151_936 * 2048 - 48 * 502 * 3_145_728
    assert tk.param_count(m, active=True, include_embedding=False,
                          include_lm_head=False) == active
    assert total == pytest.approx(80e9, rel=0.02)          # Qwen: 80B total


def test_llama31_70b_by_hand():
    # Embedding and LM head 128,256 x 8192 each; per layer: attention 8192 x (64+8+8) x 128
    # + 64 x 128 x 8192, FFN 3 x 8192 x 28672, two RMSNorms; final norm.
    m = tk.model("llama-3.1-70b")
    per_layer = 8192 * 80 * 128 + 64 * 128 * 8192 + 3 * 8192 * 28672 + 2 * 8192
    expected = 2 * 128_256 * 8192 + 80 * per_layer + 8192
    assert tk.param_count(m) == expected


def test_deepseek_v3_moe_and_mla_by_hand():
    m = tk.model("deepseek-v3")
    h = 7168
    mla = (h * 1536 + 1536 + 1536 * 128 * 192 + h * (512 + 64) + 512
           + 512 * 128 * (128 + 128) + 128 * 128 * h)
    expert = 3 * h * 2048
    b = tk.param_breakdown(m)
    assert b["attention"] == 61 * mla
    assert b["dense_ffn"] == 3 * 3 * h * 18432
    assert b["routed_experts"] == 58 * 256 * expert
    assert b["shared_experts"] == 58 * 1 * expert
    assert b["router"] == 58 * (256 * h + 256)  # + e_score_correction_bias
    # Active: 8 of 256 routed experts per MoE layer.
    assert tk.param_count(m) - tk.param_count(m, active=True) == 58 * (256 - 8) * expert


def test_gpt_oss_active_convention_excludes_input_embedding():
    # Model card: 5.13B active for 120b, counting the unembedding but not the embedding.
    m = tk.model("gpt-oss-120b")
    emb = 201_088 * 2880
    with_emb = tk.param_count(m, active=True)
    assert with_emb - tk.param_count(m, active=True, include_embedding=False) == emb
    assert with_emb == pytest.approx(5.13e9 + emb, rel=0.01)


def test_dense_model_active_equals_total():
    m = tk.model("qwen3-32b")
    assert tk.param_count(m, active=True) == tk.param_count(m)


def test_moe_layer_patterns():
    # Llama 4 Maverick interleaves MoE every 2nd layer; Scout every layer.
    assert tk.model("llama-4-maverick").num_moe_layers == 24
    assert tk.model("llama-4-scout").num_moe_layers == 48
    # DeepSeek-V3: first 3 layers dense; Kimi K2: first 1.
    assert tk.model("deepseek-v3").num_dense_layers == 3
    assert tk.model("kimi-k2").num_dense_layers == 1


def test_param_breakdown_tabulates_and_sums_to_the_count():
    # issue 14: the breakdown was a bare dict; it stays one (b["attention"]) and tabulates
    m = tk.model("deepseek-v3")
    b = tk.param_breakdown(m)
    t = b.to_frame()
    assert t.index.name == "component" and t.parameters.dtype.kind == "f"
    assert t.loc["routed_experts", "parameters"] == 58 * 256 * 3 * 7168 * 2048
    assert t.parameters.sum() == pytest.approx(tk.param_count(m), rel=1e-12)
    assert t.share.sum() == pytest.approx(1.0, rel=1e-12)
