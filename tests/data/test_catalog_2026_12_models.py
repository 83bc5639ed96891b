"""Catalog entries added on 2026-12-03 (issue 27): MiniMax-M2 and Nemotron 3 Nano (the
reader learns Mamba-2 and Nemotron-H's single-block stacks).

Expected numbers are the vendor's published counts (cited) or hand calculations from the
config.json numbers written out below; none is copied from the library's output.
"""

from __future__ import annotations

import pytest

import tokenomics as tk


def test_minimax_m2_loads_by_id_and_alias_with_its_sources():
    m = tk.model("minimaxai/minimax-m2")
    assert m.id == "minimax-m2" and m.family == "minimax"
    assert m.sources["config"] == "hf-minimax-m2-config"
    assert m.sources["official.total_params"] == "hf-transformers-minimax-m2"
    assert m.official_total_params == 230e9 and m.official_active_params == 10e9


def test_minimax_m2_architecture_as_its_config_states():
    # config.json @ fbd8a14b: 62 layers, 48 q / 8 kv heads of 128, 256 experts top-8 of 1536,
    # no shared expert, every layer MoE and full attention; 3 MTP modules of 1 layer
    m = tk.model("minimax-m2")
    a = m.attention
    assert (m.num_layers, m.hidden_size, a.num_q_heads, a.num_kv_heads, a.head_dim) == \
        (62, 3072, 48, 8, 128)
    assert (m.moe.num_experts, m.moe.top_k, m.moe.expert_intermediate_size,
            m.moe.num_shared_experts) == (256, 8, 1536, 0)
    assert m.num_moe_layers == 62 and m.num_linear_layers == 0 and m.mtp_layers == 3
    assert a.qk_norm and a.qk_norm_full and m.moe.router_bias


def test_minimax_m2_counts_by_hand():
    h, L, V, E, w, k = 3072, 62, 200_064, 256, 1536, 8
    att = h * (48 * 128 + 2 * 8 * 128) + 48 * 128 * h + (48 + 8) * 128   # + Q/K norms, whole
    expert = 3 * h * w
    router = E * h + E                                                     # + correction bias
    norms = h * (2 * L + 1)
    total = 2 * V * h + L * (att + E * expert + router) + norms
    m = tk.model("minimax-m2")
    assert tk.param_count(m) == total
    assert total == pytest.approx(230e9, rel=0.01)          # MiniMax: 230B
    active = total - L * (E - k) * expert
    assert tk.param_count(m, active=True) == active
    # "10 billion active": the count without the input embedding is 10.42B (4% above)
    assert tk.param_count(m, active=True, include_embedding=False) == active - V * h
    assert (active - V * h) == pytest.approx(10e9, rel=0.05)


def test_minimax_m2_kv_per_token():
    # 62 layers x 8 KV heads x (128 + 128) x 2 B at BF16
    assert tk.kv_bytes_per_token(tk.model("minimax-m2")) == 62 * 8 * 256 * 2
    assert tk.kv_bytes_per_token(tk.model("minimax-m2"), "fp8") == 62 * 8 * 256


def test_minimax_m2_fp8_weights_fit_four_h200():
    # 228.7e9 FP8 weights (lm_head and embedding in BF16: 2 x 0.61e9 x 1 more byte) need more
    # than two 141 GB H200s and fit four
    d4 = tk.Deployment("minimax-m2", "h200", tp=4)
    assert bool(tk.memory_fit(d4, 32, 8192).fits)
    assert not bool(tk.memory_fit(tk.Deployment("minimax-m2", "h200", tp=1), 1, 1024).fits)


# ---- NVIDIA Nemotron 3 Nano 30B-A3B: hybrid Mamba-2 / attention / MoE (nemotron_h) ----
NANO = "nemotron-3-nano-30b-a3b"
PATTERN = "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME"


def test_nano_pattern_is_read_as_mixers_with_the_ffn_after_them():
    # the config's 52 blocks: 23 M, 6 *, 23 E; 29 mixers, 6 of them with no FFN after them
    assert (PATTERN.count("M"), PATTERN.count("*"), PATTERN.count("E")) == (23, 6, 23)
    m = tk.model("nemotron-3-nano")
    assert m.id == NANO and m.num_layers == 29
    assert (m.num_linear_layers, m.num_attention_layers, m.num_moe_layers,
            m.num_dense_layers, m.num_ffnless_layers) == (23, 6, 23, 0, 6)
    la = m.linear_attention
    assert (la.kind, la.num_k_heads, la.head_k_dim, la.num_v_heads, la.head_v_dim,
            la.conv_kernel, la.state_dtype) == ("mamba2", 8, 128, 64, 64, 4, "fp32")
    assert not m.gated_ffn                       # relu2 experts: up and down, no gate


def test_nano_counts_by_hand_against_the_technical_report():
    h, V = 2688, 131_072
    dk, dv, nh = 8 * 128, 64 * 64, 64            # groups x state, heads x head_dim
    mamba = (h * (2 * dv + 2 * dk + nh)          # in_proj: z, x, B, C, dt
             + (4 + 1) * (dv + 2 * dk)           # conv1d weights and bias
             + 3 * nh + dv + dv * h)             # dt_bias, A_log, D; gated norm; out_proj
    att = h * (32 * 128 + 2 * 2 * 128) + 32 * 128 * h
    expert = 2 * h * 1856
    moe = 128 * h + 128 + 128 * expert + 2 * h * 3712     # router + bias, experts, shared
    norms = h * (52 + 1)                         # one per block, and the final norm
    total = 2 * V * h + 23 * mamba + 6 * att + 23 * moe + norms
    m = tk.model(NANO)
    assert tk.param_count(m) == total
    assert total == pytest.approx(31.6e9, rel=0.005)        # report: 31.6B
    active = total - 23 * (128 - 6) * expert
    assert tk.param_count(m, active=True) == active
    assert active == pytest.approx(3.6e9, rel=0.01)         # "3.6B including embeddings"
    assert active - V * h == pytest.approx(3.2e9, rel=0.01)  # "3.2B active"


def test_nano_keeps_kv_in_six_layers_and_a_fixed_mamba_state():
    m = tk.model(NANO)
    assert tk.kv_bytes_per_token(m) == 6 * 2 * (128 + 128) * 2          # 6,144 B at BF16
    # per Mamba layer: the SSM state 64 heads x 128 x 64 in FP32 (mamba_ssm_cache_dtype),
    # the convolution's last 3 inputs over x, B and C (4096 + 2 x 1024) in BF16
    per_layer = 64 * 128 * 64 * 4 + 3 * (4096 + 2 * 1024) * 2
    assert tk.physics.kv.linear_state_bytes_per_sequence(m) == 23 * per_layer
    # a 128K context: the 6 attention layers' KV, plus the state once
    assert float(tk.kv_cache_bytes(m, 131_072)) == pytest.approx(
        131_072 * 6_144 + 23 * per_layer, rel=1e-12)


def test_mamba2_recurrence_flops_by_hand():
    from tokenomics.physics.formulas import mamba2_flops_per_token_per_layer
    # per head: decay N P, input 2 N P, output 2 N P; conv 2 K over x, B, C
    assert mamba2_flops_per_token_per_layer(8, 64, 128, 64, 4) == \
        5 * 64 * 128 * 64 + 2 * 4 * (2 * 8 * 128 + 64 * 64)


def test_nano_decode_reads_experts_not_a_growing_cache():
    # at 8K and 128K the decode step differs only by the 6 attention layers' KV reads
    d = tk.Deployment(NANO, "h100-sxm")
    a = tk.decode(d, 8, 8192)
    b = tk.decode(d, 8, 131_072)
    extra = 8 * (131_072 - 8192) * 6_144
    assert float(b.bytes_per_device) - float(a.bytes_per_device) == pytest.approx(extra,
                                                                                  rel=1e-9)


@pytest.mark.parametrize("pattern, match", [
    ("EM" + PATTERN[2:], "FFN with no mixer"),
    ("MEE" + PATTERN[3:], "FFN with no mixer"),
    (PATTERN[:-1], "52 letters"),
    (PATTERN[:-1] + "X", "letters M"),
])
def test_a_pattern_the_reader_cannot_pair_is_refused_by_name(pattern, match):
    cfg = dict(tk.model(NANO).config)
    cfg["hybrid_override_pattern"] = pattern
    with pytest.raises(tk.CatalogError, match=match):
        tk.model_from_hf_config(cfg)


@pytest.mark.parametrize("key, value", [("use_bias", True), ("mamba_proj_bias", True)])
def test_what_the_reader_does_not_model_is_refused_not_ignored(key, value):
    # (moe_latent_size, once refused here, is read now: tests/data/test_nemotron_super.py)
    cfg = dict(tk.model(NANO).config)
    cfg[key] = value
    with pytest.raises(tk.CatalogError, match=key):
        tk.model_from_hf_config(cfg)


# ---- Mistral Small 3.1 24B (mistral3: a Mistral text model nested in text_config) ----
def test_mistral_small_3_1_text_model_by_hand():
    # text_config: h 5120, 40 layers, 32 q / 8 kv heads of 128, FFN 32768, vocab 131072,
    # untied head; full attention everywhere (sliding_window null), 128K context
    m = tk.model("mistralai/mistral-small-3.1-24b-instruct-2503")
    assert m.id == "mistral-small-3.1-24b" and m.max_context == 131_072
    assert m.window_groups() == [("full", float("inf"), 40)]
    h = 5120
    layer = h * (32 * 128 + 2 * 8 * 128) + 32 * 128 * h + 3 * h * 32768 + 2 * h
    total = 2 * 131_072 * h + 40 * layer + h
    assert tk.param_count(m) == total
    # Mistral's "24 billion" counts the Pixtral encoder too: 24 layers of 4 x 1024^2
    # attention + 3 x 1024 x 4096 gated FFN is 0.40B, so the text model is under 24B by ~2%
    vision = 24 * (4 * 1024**2 + 3 * 1024 * 4096)
    assert total < 24e9 < total + vision + 0.1e9
    assert tk.kv_bytes_per_token(m) == 40 * 8 * 256 * 2


def test_glm_47_config_is_zai_s_own_file():
    # hf-glm-4.7-config (zai-org/GLM-4.7 refs/pr/49): 92 layers, 96 q / 8 kv heads of 128,
    # 160 experts of 1536 top-8 + 1 shared after 3 dense layers of 12288, 202,752 context
    m = tk.model("glm-4.7")
    assert m.sources["config"] == "hf-glm-4.7-config"
    c = m.config
    assert c["transformers_version"] == "4.54.0" and c["max_position_embeddings"] == 202_752
    assert (m.num_layers, m.attention.num_q_heads, m.attention.num_kv_heads,
            m.moe.num_experts, m.moe.top_k, m.num_dense_layers) == (92, 96, 8, 160, 8, 3)
