"""Catalog entries added on 2026-12-02: Qwen3 dense sizes, Llama 3.2, Gemma 3 1B, Qwen3-Coder,
the Qwen3 2507 MoE releases, DeepSeek-V3.2 and Qwen2.5.

Every expected number is either the vendor's published parameter count (cited in the table) or
a hand calculation from the config.json numbers written out below; none is copied from the
library's output.
"""

from __future__ import annotations

import pytest

import tokenomics as tk

# id -> aliases (as written in the entry's TOML file).
ALIASES = {
    "qwen3-0.6b": ["qwen/qwen3-0.6b"],
    "qwen3-1.7b": ["qwen/qwen3-1.7b"],
    "qwen3-4b": ["qwen/qwen3-4b"],
    "qwen3-8b": ["qwen/qwen3-8b"],
    "qwen3-14b": ["qwen/qwen3-14b"],
    "llama-3.2-1b": ["meta-llama/llama-3.2-1b", "meta-llama/llama-3.2-1b-instruct",
                     "llama3.2-1b"],
    "llama-3.2-3b": ["meta-llama/llama-3.2-3b", "meta-llama/llama-3.2-3b-instruct",
                     "llama3.2-3b"],
    "gemma-3-1b": ["google/gemma-3-1b-it", "google/gemma-3-1b-pt", "gemma3-1b"],
    "qwen3-coder-480b-a35b": ["qwen/qwen3-coder-480b-a35b-instruct",
                              "qwen3-coder-480b-a35b-instruct"],
    "qwen3-coder-30b-a3b": ["qwen/qwen3-coder-30b-a3b-instruct", "qwen3-coder-30b-a3b-instruct"],
    "qwen3-235b-a22b-2507": ["qwen/qwen3-235b-a22b-instruct-2507",
                             "qwen3-235b-a22b-instruct-2507"],
    "qwen3-30b-a3b-2507": ["qwen/qwen3-30b-a3b-instruct-2507", "qwen3-30b-a3b-instruct-2507"],
    "deepseek-v3.2": ["deepseek-ai/deepseek-v3.2"],
    "qwen2.5-3b": ["qwen/qwen2.5-3b"],
    "qwen2.5-7b": ["qwen/qwen2.5-7b-instruct", "qwen2.5-7b-instruct"],
    "qwen2.5-14b": ["qwen/qwen2.5-14b"],
    "qwen2.5-32b": ["qwen/qwen2.5-32b"],
    "qwen2.5-72b": ["qwen/qwen2.5-72b-instruct", "qwen2.5-72b-instruct"],
}

NEW_IDS = sorted(ALIASES)


@pytest.mark.parametrize("mid", NEW_IDS)
def test_loads_by_id_and_every_alias(mid):
    m = tk.model(mid)
    assert m.id == mid
    assert m.path.endswith(f"{mid}.toml")
    assert m.sources["config"] and m.sources["official.total_params"]
    for alias in ALIASES[mid]:
        assert tk.model(alias).id == mid, alias
    assert set(m.aliases) == set(ALIASES[mid])


# (id, published total, relative tolerance, citation). 3% throughout: every published figure
# here has at least two significant digits, and the computed counts fall within 1.3% of them.
TOTALS = [
    ("qwen3-0.6b", 0.6e9, 0.03, "Qwen3-0.6B card: 0.6B (0.44B non-embedding)"),
    ("qwen3-1.7b", 1.7e9, 0.03, "Qwen3-1.7B card: 1.7B (1.4B non-embedding)"),
    ("qwen3-4b", 4.0e9, 0.03, "Qwen3-4B card: 4.0B (3.6B non-embedding)"),
    ("qwen3-8b", 8.2e9, 0.03, "Qwen3-8B card: 8.2B (6.95B non-embedding)"),
    ("qwen3-14b", 14.8e9, 0.03, "Qwen3-14B card: 14.8B (13.2B non-embedding)"),
    ("llama-3.2-1b", 1.23e9, 0.03, "Llama 3.2 model card: 1B (1.23B)"),
    ("llama-3.2-3b", 3.21e9, 0.03, "Llama 3.2 model card: 3B (3.21B)"),
    ("gemma-3-1b", 1e9, 0.03, "Gemma 3 card / tech report: 1B = 302M embedding + 698M"),
    ("qwen3-coder-480b-a35b", 480e9, 0.03, "Qwen3-Coder-480B-A35B card: 480B total"),
    ("qwen3-coder-30b-a3b", 30.5e9, 0.03, "Qwen3-Coder-30B-A3B card: 30.5B total"),
    ("qwen3-235b-a22b-2507", 235e9, 0.03, "Qwen3-235B-A22B(-2507) card: 235B total"),
    ("qwen3-30b-a3b-2507", 30.5e9, 0.03, "Qwen3-30B-A3B-Instruct-2507 card: 30.5B total"),
    # DeepSeek-V3 README: 671B main model (MTP excluded); V3.2 adds the ~0.85B indexer.
    ("deepseek-v3.2", 671e9, 0.03, "DeepSeek-V3 README: 671B main-model parameters"),
    ("qwen2.5-3b", 3.09e9, 0.03, "Qwen2.5-3B card: 3.09B"),
    ("qwen2.5-7b", 7.61e9, 0.03, "Qwen2.5-7B-Instruct card: 7.61B"),
    ("qwen2.5-14b", 14.7e9, 0.03, "Qwen2.5-14B card: 14.7B"),
    ("qwen2.5-32b", 32.5e9, 0.03, "Qwen2.5-32B card: 32.5B"),
    ("qwen2.5-72b", 72.7e9, 0.03, "Qwen2.5-72B-Instruct card: 72.7B"),
]


@pytest.mark.parametrize("mid,published,tol,cite", TOTALS, ids=[t[0] for t in TOTALS])
def test_total_params_near_the_published_figure(mid, published, tol, cite):
    m = tk.model(mid)
    assert tk.param_count(m) == pytest.approx(published, rel=tol), cite
    assert m.official_total_params == published, cite


# MoE entries: published activated counts (same cards as above).
ACTIVE = [
    ("qwen3-coder-480b-a35b", 35e9, "Qwen3-Coder-480B-A35B card: 35B activated"),
    ("qwen3-coder-30b-a3b", 3.3e9, "Qwen3-Coder-30B-A3B card: 3.3B activated"),
    ("qwen3-235b-a22b-2507", 22e9, "Qwen3-235B-A22B card: 22B activated"),
    ("qwen3-30b-a3b-2507", 3.3e9, "Qwen3-30B-A3B-Instruct-2507 card: 3.3B activated"),
]


@pytest.mark.parametrize("mid,published,cite", ACTIVE, ids=[a[0] for a in ACTIVE])
def test_moe_active_params_near_the_published_figure(mid, published, cite):
    m = tk.model(mid)
    assert tk.param_count(m, active=True) == pytest.approx(published, rel=0.03), cite


def _gqa(layers, kv_heads, head_dim, elem_bytes=2):
    """K and V per layer per KV head, BF16 unless told."""
    return layers * kv_heads * head_dim * 2 * elem_bytes


# (id, expected bytes per token at BF16, hand calculation from the config's numbers).
KV = [
    ("qwen3-0.6b", 114_688, _gqa(28, 8, 128)),       # 28 layers, 8 KV heads, head_dim 128
    ("qwen3-1.7b", 114_688, _gqa(28, 8, 128)),
    ("qwen3-4b", 147_456, _gqa(36, 8, 128)),
    ("qwen3-8b", 147_456, _gqa(36, 8, 128)),
    ("qwen3-14b", 163_840, _gqa(40, 8, 128)),
    ("llama-3.2-1b", 32_768, _gqa(16, 8, 64)),       # head_dim 64 (config key)
    ("llama-3.2-3b", 114_688, _gqa(28, 8, 128)),
    # Gemma 3 1B: 26 layers x 1 KV head x 256. Per-token bytes count every layer (sliding ones
    # included) as for the other Gemma entries; the windows are checked separately below.
    ("gemma-3-1b", 26_624, _gqa(26, 1, 256)),
    ("qwen3-coder-480b-a35b", 253_952, _gqa(62, 8, 128)),
    ("qwen3-coder-30b-a3b", 98_304, _gqa(48, 4, 128)),
    ("qwen3-235b-a22b-2507", 192_512, _gqa(94, 4, 128)),
    ("qwen3-30b-a3b-2507", 98_304, _gqa(48, 4, 128)),
    # MLA + lightning indexer: 61 layers x (kv_lora_rank 512 + qk_rope_head_dim 64 + index
    # key 128) x 2 B.
    ("deepseek-v3.2", 85_888, 61 * (512 + 64 + 128) * 2),
    ("qwen2.5-3b", 36_864, _gqa(36, 2, 128)),        # head_dim = 2048 / 16
    ("qwen2.5-7b", 57_344, _gqa(28, 4, 128)),        # 3584 / 28
    ("qwen2.5-14b", 196_608, _gqa(48, 8, 128)),      # 5120 / 40
    ("qwen2.5-32b", 262_144, _gqa(64, 8, 128)),
    ("qwen2.5-72b", 327_680, _gqa(80, 8, 128)),      # 8192 / 64
]


@pytest.mark.parametrize("mid,expected,by_hand", KV, ids=[k[0] for k in KV])
def test_kv_bytes_per_token_by_hand(mid, expected, by_hand):
    assert expected == by_hand
    assert tk.kv_bytes_per_token(tk.model(mid)) == expected


def test_gemma_3_1b_local_global_pattern():
    g = tk.model("gemma-3-1b")
    # sliding_window_pattern 6 over 26 layers: layers 6, 12, 18, 24 (1-based) are global,
    # the other 22 slide over 512 tokens.
    assert dict(((k, w), n) for k, w, n in g.window_groups()) == {
        ("sliding", 512.0): 22, ("full", float("inf")): 4}
    assert g.tie_word_embeddings and g.attention.num_kv_heads == 1


@pytest.mark.parametrize("mid", ["qwen3-235b-a22b-2507", "qwen3-30b-a3b-2507",
                                 "qwen3-coder-480b-a35b", "qwen3-coder-30b-a3b"])
def test_2507_and_coder_releases_have_262k_context(mid):
    # config.json: max_position_embeddings 262144 (the April Qwen3 MoE releases: 40960).
    assert tk.model(mid).max_context == 262_144


def test_2507_entries_are_separate_from_the_april_releases():
    assert tk.model("qwen3-235b-a22b").max_context == 40_960
    assert tk.model("qwen3-30b-a3b").max_context == 40_960
    # Same geometry, so the same parameter count.
    assert tk.param_count(tk.model("qwen3-235b-a22b-2507")) == \
        tk.param_count(tk.model("qwen3-235b-a22b"))


def test_deepseek_v32_is_v3_plus_the_indexer():
    m = tk.model("deepseek-v3.2")
    a = m.attention
    assert (a.kind, a.index_n_heads, a.index_head_dim, a.index_topk) == ("MLA", 64, 128, 2048)
    assert m.weight_dtype == "fp8_e4m3"
    # Per layer: wq_b 1536 -> 64 x 128, wk 7168 -> 128, weights_proj 7168 -> 64, k_norm 128
    # weight + bias (the tensor shapes listed with the config).
    indexer = 61 * (1536 * 64 * 128 + 7168 * 128 + 7168 * 64 + 2 * 128)
    assert tk.param_count(m) - tk.param_count(tk.model("deepseek-v3")) == indexer
    assert m.official_active_params is None



def test_phi_4_from_its_config_and_why_it_states_no_count():
    # microsoft/phi-4 config.json (hf-phi-4-config): 40 layers, hidden 5120, 40 / 10 heads of
    # 128, FFN 17,920, vocabulary 100,352, untied. By hand: embedding and LM head
    # 2 x 100,352 x 5,120 = 1.028B; per layer attention 2 x 5120^2 + 2 x 5120 x 1280 = 65.5M,
    # FFN 3 x 5120 x 17920 = 275.3M, norms 10,240 -> 40 layers 13.63B; total 14.66B, which
    # Microsoft names "14B" (4.5% under: a nominal size, not recorded as a count)
    m = tk.model("phi-4")
    assert tk.model("microsoft/phi-4") is m
    per_layer = 2 * 5120**2 + 2 * 5120 * 1280 + 3 * 5120 * 17920 + 2 * 5120
    total = 2 * 100_352 * 5120 + 40 * per_layer + 5120
    assert sum(tk.param_breakdown(m).values()) == total
    assert total / 14e9 - 1 == pytest.approx(0.047, abs=0.001)
    assert m.official_total_params is None
    # KV: 40 layers x 10 heads x 128 x (K + V) x 2 B = 204,800 B per token at BF16
    assert tk.kv_bytes_per_token(m) == 40 * 10 * 128 * 2 * 2
