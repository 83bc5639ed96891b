"""Gemma 4 (tokenomics/data/hf_gemma4.py): full layers of their own shape, keys as values,
and the small sizes' KV-shared layers, double-wide FFNs and per-layer embeddings.

Facts from transformers' converter (convert_gemma4_weights.py, commit 0f3f0632: the 31B
and 26B-A4B variants) and modeling_gemma4.py (commit c308a309); published counts from the
model card as restated by third parties (model_catalog/sources.toml, model-card-gemma-4).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

import tokenomics as tk
from tokenomics.data.hf_config import model_from_hf_config
from tokenomics.data.specs import Attention
from tokenomics.physics.kv import kv_bytes_held
from tokenomics.physics.memory import kv_per_sequence_bytes
from tokenomics.physics.operators import step_costs

G31, G26 = tk.model("gemma-4-31b"), tk.model("gemma-4-26b-a4b")


def test_31b_count_by_hand_is_the_published_30_7b():
    h, V = 5376, 262_144
    sliding = h * 32 * 256 + 2 * h * 16 * 256 + 32 * 256 * h + 2 * 256   # q, k, v, o, QK norms
    full = h * 32 * 512 + h * 4 * 512 + 32 * 512 * h + 2 * 512          # no v_proj (K = V)
    mlp = 3 * h * 21504
    norms = h * (4 * 60 + 1)                                             # 4 a layer + final
    want = V * h + 50 * sliding + 10 * full + 60 * mlp + norms           # tied head
    assert want == 30_697_345_280
    assert tk.param_count(G31) == want
    assert tk.param_count(G31) == pytest.approx(30.7e9, rel=2e-3)


def test_26b_a4b_count_by_hand_is_the_published_25_2b_total_and_3_8b_active():
    h, V, E, k = 2816, 262_144, 128, 8
    sliding = h * 16 * 256 + 2 * h * 8 * 256 + 16 * 256 * h + 2 * 256
    full = h * 16 * 512 + h * 2 * 512 + 16 * 512 * h + 2 * 512
    dense = 3 * h * 2112                              # the MLP beside the experts
    expert = 3 * h * 704
    router = E * h + h + E                            # projection, input and expert scales
    norms = h * (7 * 30 + 1)
    shared = V * h + 25 * sliding + 5 * full + 30 * (dense + router) + norms
    assert tk.param_count(G26) == shared + 30 * E * expert == 25_233_141_760
    assert tk.param_count(G26, active=True) == shared + 30 * k * expert
    assert tk.param_count(G26) == pytest.approx(25.2e9, rel=2e-3)
    assert tk.param_count(G26, active=True) == pytest.approx(3.8e9, rel=1e-2)


def test_kv_per_token_counts_each_layer_kind_at_its_own_shape():
    # 31B: 50 sliding layers x 2 x 16 x 256 + 10 full x 2 x 4 x 512 elements, 2 B each: K
    # and V are both cached on the full layers (keys rotated, values not)
    assert tk.kv_bytes_per_token(G31) == 2 * (50 * 2 * 16 * 256 + 10 * 2 * 4 * 512) == 901_120
    assert tk.kv_bytes_per_token(G26) == 2 * (25 * 2 * 8 * 256 + 5 * 2 * 2 * 512) == 225_280
    # at 8,192 tokens the sliding layers hold their 1,024-token window only
    want = 2 * (50 * 2 * 16 * 256 * 1024 + 10 * 2 * 4 * 512 * 8192)
    assert tk.kv_cache_bytes(G31, 8192) == want


def test_each_layer_kind_is_replicated_at_its_own_head_count():
    # tp 8: the 16 sliding KV heads split two per rank; the full layers' 4 are each held by
    # two ranks, so a device keeps 1/8 of the sliding cache and 2/8 of the full one
    d = tk.Deployment(G31, "h100-sxm", tp=8)
    assert d.kv_replication_of(G31.attention) == 1.0
    assert d.kv_replication_of(G31.global_attention) == 2.0
    with pytest.raises(tk.TokenomicsError, match="no one replication"):
        _ = d.kv_replication
    want = 2 * (50 * 2 * 16 * 256 * 1024 * 1 + 10 * 2 * 4 * 512 * 8192 * 2) / 8
    assert float(kv_per_sequence_bytes(d, 8192)) == pytest.approx(want, rel=1e-12)
    # the decode step reads what it holds: B x that, plus each new token's write
    core = next(o for o in step_costs(d, 4.0, 1.0, 8192.0, 1.0) if o.name == "attn_core")
    write = 4 * 2 * (50 * 2 * 16 * 256 * 1 + 10 * 2 * 4 * 512 * 2)
    assert float(core.kv_bytes) == pytest.approx(4 * want * 8 + write, rel=1e-12)
    assert tk.Deployment(G31, "h100-sxm", tp=4).kv_replication == 1.0   # 4 divides both


def test_keys_as_values_drop_the_value_projection_and_nothing_else():
    plain = replace(G31, global_attention=replace(G31.global_attention, k_eq_v=False))
    # one 4 x 512-wide projection of 5,376 inputs per full layer, 10 full layers
    assert tk.param_count(plain) - tk.param_count(G31) == 10 * 5376 * 4 * 512
    assert tk.kv_bytes_per_token(plain) == tk.kv_bytes_per_token(G31)
    d, dp = tk.Deployment(G31, "h100-sxm", tp=2), tk.Deployment(plain, "h100-sxm", tp=2)
    qkv = [next(o for o in step_costs(x, 1.0, 1.0, 100.0, 1.0) if o.name == "attn_qkv")
           for x in (d, dp)]
    assert float(qkv[1].flops - qkv[0].flops) == 2 * 10 * 5376 * 4 * 512


def test_a_step_prices_the_full_layers_wider_heads():
    # decode attention FLOPs per cached token: 2 n_q (d_k + d_v) per (query, key) pair, each
    # layer at its own width; at context 100 every layer sees all 101 keys
    d = tk.Deployment(G31, "h100-sxm", tp=2)
    core = next(o for o in step_costs(d, 1.0, 1.0, 100.0, 1.0) if o.name == "attn_core")
    pairs = 101
    want = pairs * (50 * 2 * 32 * (256 + 256) + 10 * 2 * 32 * (512 + 512))
    assert float(core.flops) == want
    r = tk.decode(d, 8, 8192)
    assert r.fits and 0 < r.time_s < 1


E2B, E4B = tk.model("gemma-4-e2b"), tk.model("gemma-4-e4b")


def test_e2b_count_by_hand_is_the_published_2_3b_effective():
    # 35 layers, 4 sliding : 1 full (full at 4, 9, ..., 34); layers 15-34 read the KV of
    # 13 / 14: of the 15 that keep their own, 12 sliding and 3 full; of the 20 sharing, 16
    # and 4. MQA: 8 query heads, one KV head, 256 wide (sliding) or 512 (full).
    h, V, p, L = 1536, 262_144, 256, 35
    own_s = h * (8 * 256 + 256 + 256 + 8 * 256) + 2 * 256      # q, k, v, o, q/k norms
    own_f = h * (8 * 512 + 512 + 512 + 8 * 512) + 2 * 512
    shr_s = h * (8 * 256 + 8 * 256) + 256                      # queries only: q, o, q norm
    shr_f = h * (8 * 512 + 8 * 512) + 512
    ffn = 15 * 3 * h * 6144 + 20 * 3 * h * 12288               # double width on the 20
    ple_proj = h * L * p + p + L * (2 * h * p + h)             # projection in, gate and out
    effective = (12 * own_s + 3 * own_f + 16 * shr_s + 4 * shr_f + ffn + V * h
                 + h * (4 * L + 1) + ple_proj)
    assert effective == 2_279_759_104
    assert tk.param_count(E2B, include_per_layer_embedding=False) == effective
    assert tk.param_count(E2B) == effective + V * L * p          # the table: 2.35B more
    assert effective == pytest.approx(2.3e9, rel=0.01)


def test_only_the_layers_that_keep_a_kv_are_in_the_cache():
    # E4B: layers 0-23 keep their own (20 sliding, 4 full), 2 KV heads; E2B: 0-14 (12, 3)
    assert tk.kv_bytes_per_token(E4B) == 2 * (20 * 2 * 2 * 256 + 4 * 2 * 2 * 512) == 57_344
    assert tk.kv_bytes_per_token(E2B) == 2 * (12 * 2 * 1 * 256 + 3 * 2 * 1 * 512) == 18_432
    # at 8,192 tokens the 20 own sliding layers hold their 512-token window
    assert tk.kv_cache_bytes(E4B, 8192) == 2 * (20 * 2 * 2 * 256 * 512 + 4 * 2 * 2 * 512 * 8192)


def test_a_shared_layer_reads_its_source_kv_but_writes_none():
    d = tk.Deployment(E2B, "l4")
    core = next(o for o in step_costs(d, 1.0, 1.0, 100.0, 1.0) if o.name == "attn_core")
    # every one of the 35 layers reads 100 cached tokens of 1 KV head; 15 write the new one
    per_tok = {"s": 2 * 1 * 256 * 2, "f": 2 * 1 * 512 * 2}     # K and V, 2 B each
    read = 100 * (28 * per_tok["s"] + 7 * per_tok["f"])
    write = 12 * per_tok["s"] + 3 * per_tok["f"]
    assert float(core.kv_bytes) == read + write
    # and each layer attends over its 101 keys at its own width, shared or not
    assert float(core.flops) == 101 * (28 * 2 * 8 * 512 + 7 * 2 * 8 * 1024)


def test_per_layer_embeddings_are_gathered_rows_and_small_projections():
    d = tk.Deployment(E4B, "l4")
    emb = next(o for o in step_costs(d, 3.0, 1.0, 100.0, 1.0) if o.name == "embedding")
    h, L, p = 2560, 42, 256
    # 3 tokens: each gathers its 2,560-wide row and its 42 x 256-wide per-layer row (BF16)
    proj = h * L * p + p + L * (2 * h * p + h)
    assert float(emb.weight_bytes) == 3 * (h + L * p) * 2 + proj * 2
    assert float(emb.flops) == 3 * 2 * (h * L * p + L * 2 * h * p)
    # the table is held at the embedding format beside the rest
    assert tk.weight_bytes(E4B) == 2 * tk.param_count(E4B)


def test_sharing_needs_an_earlier_layer_to_read_and_a_config_that_leaves_one():
    with pytest.raises(tk.TokenomicsError, match="no earlier"):
        replace(E2B, layer_kv_shared=(True,) + (False,) * 34)
    with pytest.raises(tk.TokenomicsError, match="kv_shared_ffn_scale"):
        replace(E4B, kv_shared_ffn_scale=2, layer_kv_shared=())
    cfg = {"model_type": "gemma4_text", "hidden_size": 1024, "intermediate_size": 4096,
           "num_hidden_layers": 8, "num_attention_heads": 8, "num_key_value_heads": 4}
    with pytest.raises(tk.CatalogError, match="leaves no layer"):
        model_from_hf_config({**cfg, "num_kv_shared_layers": 8})
    with pytest.raises(tk.CatalogError, match="use_double_wide_mlp must be true or false"):
        model_from_hf_config({**cfg, "use_double_wide_mlp": "yes"})


def test_defaults_and_the_last_layer_rule_follow_the_config_class():
    cfg = {"model_type": "gemma4_text", "hidden_size": 1024, "intermediate_size": 4096,
           "num_hidden_layers": 8, "num_attention_heads": 8, "num_key_value_heads": 4}
    m = model_from_hf_config(cfg)
    # every 6th layer full, and the last forced full; 512-token windows; 512-wide full heads
    assert [w for w in m.layer_window] == [512] * 5 + [0, 512, 0]
    assert m.global_attention.head_dim == 512 and m.attention.head_dim == 256
    assert m.global_attention.num_kv_heads == 4 and not m.global_attention.k_eq_v
    assert m.vocab_size == 262_144 and m.max_context == 131_072 and m.tie_word_embeddings
    with pytest.raises(tk.CatalogError, match="layer_types"):
        model_from_hf_config({**cfg, "layer_types": ["sliding_attention"] * 7})
    with pytest.raises(tk.CatalogError, match="num_global_key_value_heads"):
        model_from_hf_config({**cfg, "attention_k_eq_v": True,
                              "num_global_key_value_heads": 3})


def test_shapes_that_cannot_hold_are_library_errors():
    with pytest.raises(tk.TokenomicsError, match="k_eq_v"):
        Attention(kind="GQA", num_q_heads=8, num_kv_heads=2, head_dim=128, v_head_dim=64,
                  k_eq_v=True)
    with pytest.raises(tk.TokenomicsError, match="both windowed and full"):
        replace(G31, layer_window=(0,) * 60, layer_window_kind=("full",) * 60)
    with pytest.raises(tk.TokenomicsError, match="must be an Attention"):
        replace(G31, global_attention="512-wide")
    with pytest.raises(tk.TokenomicsError, match="context_tokens"):
        kv_bytes_held(G31, -1)
    with pytest.raises(tk.TokenomicsError, match="replication must be a function"):
        kv_bytes_held(G31, 10, replication=2.0)


def test_the_model_s_repr_names_the_full_layers_shape():
    # the converter's 31B: 16 KV heads of 256 on sliding layers, 4 of 512 with K = V on full
    assert "GQA 32 q / 16 kv heads x 256 (full layers 4 kv heads x 512, K = V)" in repr(G31)


def test_the_sizing_sheet_refuses_a_model_it_cannot_carry():
    from tokenomics.surfaces.export import check_sheet_supports

    with pytest.raises(NotImplementedError, match="global_attention"):
        check_sheet_supports(tk.Deployment(G31, "h100-sxm", tp=2))


_SMALL = {"model_type": "gemma4_text", "hidden_size": 1024, "intermediate_size": 4096,
          "num_hidden_layers": 8, "num_attention_heads": 8, "num_key_value_heads": 4}


@pytest.mark.parametrize("change, match", [
    ({"sliding_window": 0}, "sliding_window must be >= 1"),
    ({"global_head_dim": 0}, "global_head_dim must be >= 1"),
    ({"num_key_value_heads": 3}, "num_key_value_heads=3"),
    ({"enable_moe_block": True, "num_experts": 4, "top_k_experts": 8,
      "moe_intermediate_size": 10}, "top_k_experts=8"),
    ({"enable_moe_block": True}, "'num_experts' is missing"),
    ({"tie_word_embeddings": "no"}, "tie_word_embeddings must be true or false"),
    ({"attention_k_eq_v": 1}, "attention_k_eq_v must be true or false"),
    ({"attention_bias": True}, "no biases"),
])
def test_malformed_configs_get_catalog_errors_naming_the_key(change, match):
    with pytest.raises(tk.CatalogError, match=match):
        model_from_hf_config({**_SMALL, **change})


def test_a_tier_holds_one_copy_while_hbm_holds_each_shape_replicated():
    # 32,768 tokens: sliding layers keep their 1,024-token window, full layers everything
    one = 2 * (50 * 2 * 16 * 256 * 1024 + 10 * 2 * 4 * 512 * 32768)
    assert one == 3_523_215_360
    r = tk.retention_policy(tk.Deployment(G31, "h100-sxm", tp=8), 32768)
    # over the 8 devices HBM holds the full layers twice (4 KV heads over 8 ranks)
    assert r.kv_bytes == 2 * (50 * 2 * 16 * 256 * 1024 + 2 * 10 * 2 * 4 * 512 * 32768)
    assert r.tier_kv_bytes == one


def test_replicated_kv_bytes_is_one_law_for_every_layout():
    from tokenomics.physics.memory import replicated_kv_bytes

    # Gemma 4 31B at tp 8 (hand count above: the full layers held twice)
    d = tk.Deployment(G31, "h100-sxm", tp=8)
    assert replicated_kv_bytes(d, 32768, "bf16") == 2 * (
        50 * 2 * 16 * 256 * 1024 + 2 * 10 * 2 * 4 * 512 * 32768)
    # uniform layouts: the cache times the one replication (Llama 70B's 8 KV heads over 8
    # ranks: 1; DeepSeek-V3's MLA latent on each of 8 ranks: 8)
    for mid, rep in (("llama-3.1-70b", 1), ("deepseek-v3", 8)):
        dep = tk.Deployment(mid, "h200", tp=8)
        assert replicated_kv_bytes(dep, 4096, "bf16") == pytest.approx(
            rep * tk.kv_cache_bytes(mid, 4096), rel=1e-12)
