"""Catalog entries added on 2026-12-03 (issue 27): MiniMax-M2.

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
