"""model_from_hf_config: reads any HF config.json into the same spec as the catalog."""

from __future__ import annotations

import json

import pytest

import tokenomics as tk
from tokenomics.data.catalog import default_catalog

LLAMA = {"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
         "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
         "vocab_size": 128256, "max_position_embeddings": 131072,
         "tie_word_embeddings": False}


def test_catalog_models_round_trip_through_their_own_config():
    # A catalog file's [config] table is the model's config.json: parsing it again gives the
    # same architecture.
    for m in default_catalog().models.values():
        again = tk.model_from_hf_config(dict(m.config), id=m.id, name=m.name,
                                        weight_dtype=m.weight_dtype,
                                        expert_dtype=m.expert_dtype)
        assert tk.param_count(again) == tk.param_count(m), m.id
        assert tk.kv_bytes_per_token(again) == tk.kv_bytes_per_token(m), m.id
        assert again.layer_window == m.layer_window, m.id


def test_reads_a_config_json_file(tmp_path):
    p = tmp_path / "config.json"
    p.write_text(json.dumps({**LLAMA, "_name_or_path": "meta-llama/Llama-3.1-8B"}))
    m = tk.model_from_hf_config(p)
    assert m.id == "llama-3.1-8b"
    assert tk.param_count(m) == tk.param_count(tk.model("llama-3.1-8b"))


def test_mla_is_not_faked_as_gqa():
    m = tk.model("deepseek-v3")
    assert m.attention.kind == "MLA"
    # (kv_lora_rank 512 + qk_rope 64) x 61 layers x 2 B, not 2 x 128 heads x 192 x ... as GQA.
    assert tk.kv_bytes_per_token(m) == (512 + 64) * 61 * 2


def test_window_patterns():
    g = tk.model("gemma-3-27b")       # 5 local (1024) : 1 global
    assert dict(((k, w), n) for k, w, n in g.window_groups()) == {
        ("sliding", 1024.0): 52, ("full", float("inf")): 10}
    o = tk.model("gpt-oss-120b")      # alternating sliding 128 (even layers) / full
    assert o.layer_window[:4] == (128, 0, 128, 0)
    s = tk.model("llama-4-scout")     # chunked 8192 on RoPE layers, every 4th layer global
    assert s.layer_window_kind[:4] == ("chunked", "chunked", "chunked", "full")
    assert sum(1 for k in s.layer_window_kind if k == "full") == 12


def test_gpt_oss_experts_in_mxfp4():
    m = tk.model("gpt-oss-120b")
    assert m.expert_dtype == "mxfp4" and m.weight_dtype == "bf16"
    # Routed experts at 4.25 bits, everything else at 16 bits.
    b = tk.param_breakdown(m)
    rest = sum(v for k, v in b.items() if k != "routed_experts")
    assert tk.weight_bytes(m) == pytest.approx(rest * 2 + b["routed_experts"] * 4.25 / 8)
    assert tk.weight_bytes(m) / 1e9 == pytest.approx(65, abs=2)  # ~61-65 GB checkpoint


def test_quantized_checkpoints_keep_embedding_and_lm_head_at_torch_dtype():
    # DeepSeek-V3 and Kimi K2 ship FP8 block-scaled linear weights (quantization_config
    # quant_method "fp8") with torch_dtype bfloat16 for what the quantizer leaves alone.
    for mid in ("deepseek-v3", "kimi-k2"):
        m = tk.model(mid)
        assert m.weight_dtype == "fp8_e4m3" and m.embedding_dtype == "bf16", mid
        b = tk.param_breakdown(m)
        table = b["embedding"] + b["lm_head"]
        assert tk.weight_bytes(m) == pytest.approx(
            tk.weight_bytes(m, embedding_dtype="fp8") + table * (2 - 1)), mid
    # DeepSeek-V3: 129,280 x 7,168 per table, two tables: 1.85e9 B more than all-FP8.
    assert 2 * 129_280 * 7_168 == pytest.approx(1.853e9, rel=1e-3)
    # An unquantized config says nothing beyond its weight format.
    assert tk.model_from_hf_config(LLAMA).embedding_dtype is None
    q = tk.model_from_hf_config({**LLAMA, "torch_dtype": "bfloat16",
                                 "quantization_config": {"quant_method": "fp8"}})
    assert q.weight_dtype == "fp8_e4m3" and q.embedding_dtype == "bf16"


def test_unknown_model_type_with_standard_keys_reads_as_llama_style():
    m = tk.model_from_hf_config({**LLAMA, "model_type": "my_llama"})
    assert "generic Llama-style" in m.notes
    assert tk.param_count(m) == tk.param_count(tk.model_from_hf_config(LLAMA))


def test_unknown_model_type_with_unmodelled_keys_is_an_error():
    with pytest.raises(tk.CatalogError, match=r"model_type 'jamba'.*num_experts"):
        tk.model_from_hf_config({**LLAMA, "model_type": "jamba", "num_experts": 16})


@pytest.mark.parametrize("cfg, match", [
    ({k: v for k, v in LLAMA.items() if k != "hidden_size"}, r"required key 'hidden_size'"),
    ({**LLAMA, "num_attention_heads": 30}, r"not a multiple of num_key_value_heads"),
    ({**LLAMA, "layer_types": ["linear_attention"] * 32}, r"layer_types\[0\].*not interpreted"),
    ({**LLAMA, "num_hidden_layers": -2}, r"non-negative integer"),
    ([1, 2], r"must be a mapping"),
])
def test_clear_errors(cfg, match):
    with pytest.raises(tk.CatalogError, match=match):
        tk.model_from_hf_config(cfg)


def test_missing_and_invalid_files(tmp_path):
    with pytest.raises(tk.CatalogError, match="no such file"):
        tk.model_from_hf_config(tmp_path / "nope.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(tk.CatalogError, match="not valid JSON"):
        tk.model_from_hf_config(bad)


def test_opt_projection_variant_is_rejected():
    with pytest.raises(tk.CatalogError, match="word_embed_proj_dim"):
        tk.model_from_hf_config({"model_type": "opt", "hidden_size": 1024, "ffn_dim": 4096,
                                 "num_hidden_layers": 24, "num_attention_heads": 16,
                                 "word_embed_proj_dim": 512, "vocab_size": 50272,
                                 "max_position_embeddings": 2048})


# GLM-4.5-Air config.json as transformers prints it (Glm4MoeConfig), transcribed from the
# ms-swift model dump in the public code corpus (read_file id 48221590695); architecture keys
# only. The GLM-4.5 (355B) keys that differ are those of THUDM/slime's Megatron script
# scripts/models/glm4.5-355B-A32B.sh (hidden 5120, 92 layers of which 3 dense, FFN 12288, expert
# 1536, 160 experts, QK layernorm).
GLM45_AIR = {
    "architectures": ["Glm4MoeForCausalLM"], "attention_bias": True,
    "first_k_dense_replace": 1, "head_dim": 128, "hidden_size": 4096,
    "intermediate_size": 10944, "max_position_embeddings": 131072, "model_type": "glm4_moe",
    "moe_intermediate_size": 1408, "n_group": 1, "n_routed_experts": 128,
    "n_shared_experts": 1, "norm_topk_prob": True, "num_attention_heads": 96,
    "num_experts_per_tok": 8, "num_hidden_layers": 46, "num_key_value_heads": 8,
    "num_nextn_predict_layers": 1, "partial_rotary_factor": 0.5, "tie_word_embeddings": False,
    "topk_group": 1, "torch_dtype": "bfloat16", "use_qk_norm": False, "vocab_size": 151552,
}
GLM45 = {**GLM45_AIR, "hidden_size": 5120, "num_hidden_layers": 92, "first_k_dense_replace": 3,
         "intermediate_size": 12288, "moe_intermediate_size": 1536, "n_routed_experts": 160,
         "use_qk_norm": True}


def test_glm45_air_imports_and_sizes_by_hand():
    m = tk.model_from_hf_config(GLM45_AIR)
    # No name in the config: the id comes from model_type.
    assert m.id == "glm4-moe"
    assert m.attention.kind == "GQA" and m.attention.qkv_bias and not m.attention.o_bias
    assert m.layer_is_moe == (False,) + (True,) * 45 and m.mtp_layers == 1
    # KV per token: 46 layers x 8 KV heads x (128 + 128) x 2 B = 188,416 B.
    assert tk.kv_bytes_per_token(m) == 46 * 8 * 256 * 2 == 188_416
    # Parameters by hand (h = 4096):
    attn = 4096 * (96 * 128 + 2 * 8 * 128) + 96 * 128 * 4096 + (96 + 16) * 128  # + qkv bias
    assert attn == 109_066_240
    expert = 3 * 4096 * 1408                       # one routed (or the shared) expert
    total = (2 * 151552 * 4096                     # embedding + untied LM head
             + 46 * attn + 4096 * (2 * 46 + 1)     # attention, RMSNorm scales
             + 3 * 4096 * 10944                    # the one dense FFN layer
             + 45 * ((128 * 4096 + 128)            # router with e_score_correction_bias
                     + expert + 128 * expert))     # shared + routed experts
    assert total == 106_852_251_264                # Z.ai: 106B total
    assert tk.param_count(m) == total
    active = total - 45 * 120 * expert             # 8 of 128 routed experts per token
    assert tk.param_count(m, active=True) == active


def test_glm45_reads_qk_norm_and_sizes_by_hand():
    m = tk.model_from_hf_config(GLM45)
    assert m.attention.qk_norm
    assert m.layer_is_moe[:4] == (False, False, False, True)
    # KV per token: 92 x 8 x 256 x 2 B = 376,832 B.
    assert tk.kv_bytes_per_token(m) == 376_832
    attn = 5120 * (96 * 128 + 2048) + 96 * 128 * 5120 + (96 + 16) * 128 + 2 * 128
    expert = 3 * 5120 * 1536
    total = (2 * 151552 * 5120 + 92 * attn + 5120 * (2 * 92 + 1) + 3 * 3 * 5120 * 12288
             + 89 * ((160 * 5120 + 160) + expert + 160 * expert))
    assert tk.param_count(m) == total             # ~352.8e9; Z.ai: 355B total
    assert total == pytest.approx(355e9, rel=0.01)
    # Z.ai's 32B active leaves out the embedding and the LM head:
    active = tk.param_count(m, active=True, include_embedding=False) - 151552 * 5120
    assert active == pytest.approx(32e9, rel=0.01)


def test_unreadable_config_error_names_the_fields_and_the_way_forward():
    with pytest.raises(tk.CatalogError, match=r"num_experts.*docs/catalog-schema.md"):
        tk.model_from_hf_config({**LLAMA, "model_type": "jamba", "num_experts": 16})


def test_a_folder_or_binary_file_is_not_a_config(tmp_path):
    # found by the fuzz: '' is the current folder; a binary file is not UTF-8 JSON
    (tmp_path / "weights.bin").write_bytes(b"\xff\xfe\x00\x01")
    for bad in (tmp_path, tmp_path / "weights.bin"):
        with pytest.raises(tk.CatalogError, match="not a readable config.json file"):
            tk.model_from_hf_config(bad)


def test_group_limited_routing_is_read_from_the_config():
    # DeepSeek-V3's config.json: n_group 8, topk_group 4 (a token's 8 experts from at most 4
    # of 8 groups); Kimi K2's n_group 1 is one group of all 384 experts, i.e. not limited.
    ds, kimi = tk.model("deepseek-v3").moe, tk.model("kimi-k2").moe
    assert (ds.n_group, ds.topk_group) == (8, 4)
    assert kimi.n_group == 1


@pytest.mark.parametrize("changes, key", [({"moe_layer_freq": 0}, "moe_layer_freq"),
                                          ({"hidden_size": float("nan")}, "hidden_size"),
                                          ({"first_k_dense_replace": -1}, "first_k_dense_replace")])
def test_broken_integer_keys_are_named(changes, key):
    # a zero MoE layer frequency divided by zero, a NaN width raised numpy's ValueError
    cfg = {**dict(tk.model("deepseek-v3").config), **changes}
    with pytest.raises(tk.CatalogError, match=f"key '{key}'"):
        tk.model_from_hf_config(cfg)
