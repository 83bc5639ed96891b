"""Catalog entries for DeepSeek-V3.2-Exp, GLM-4.5 and GLM-4.5-Air.

Every expected value is a hand calculation from the published config (written out below) or
the vendor's published parameter count (cited).
"""

from __future__ import annotations

import math

import pytest

import tokenomics as tk
from tokenomics.physics.operators import step_costs

# ---------------------------------------------------------------- DeepSeek-V3.2-Exp


def test_v32_reads_the_indexer_keys_of_the_release():
    # DeepSeek-V3.2-Exp inference/model.py ModelArgs: index_n_heads 64, index_head_dim 128,
    # index_topk 2048; the rest is DeepSeek-V3's MLA (kv_lora 512, rope 64).
    m = tk.model("deepseek-v3.2-exp")
    a = m.attention
    assert (a.kind, a.index_n_heads, a.index_head_dim, a.index_topk) == ("MLA", 64, 128, 2048)
    assert (a.kv_lora_rank, a.qk_rope_head_dim, m.num_layers) == (512, 64, 61)


def test_v32_kv_bytes_per_token_adds_the_index_key():
    m = tk.model("deepseek-v3.2-exp")
    # 61 layers x (512 latent + 64 rope + 128 index key) x 2 B (BF16) = 85,888 B.
    assert tk.kv_bytes_per_token(m) == 61 * (512 + 64 + 128) * 2 == 85_888
    # DeepSeek-V3 (no indexer): 61 x 576 x 2 = 70,272 B; the difference is 61 x 128 x 2.
    assert tk.kv_bytes_per_token(m) - tk.kv_bytes_per_token(tk.model("deepseek-v3")) \
        == 61 * 128 * 2


def test_v32_total_params_near_deepseeks_671b():
    m = tk.model("deepseek-v3.2-exp")
    # DeepSeek-V3 README: 671B main-model parameters (MTP excluded). The indexer adds, per
    # layer, wq_b (1536 -> 64 x 128), wk (7168 -> 128), weights_proj (7168 -> 64) and the
    # 128-wide LayerNorm k_norm (weight and bias): about 0.85B over 61 layers.
    indexer = 61 * (1536 * 64 * 128 + 7168 * 128 + 7168 * 64 + 2 * 128)
    assert indexer == 61 * 13_959_424 == 851_524_864
    assert tk.param_count(m) == pytest.approx(671e9, rel=0.02)
    assert tk.param_count(m) - tk.param_count(tk.model("deepseek-v3")) == indexer


def _core(dep, cached):
    """attn_core of one decode step (one sequence, one new token)."""
    return next(o for o in step_costs(dep, 1, 1, cached, 1) if o.name == "attn_core")


def test_v32_decode_at_100k_reads_2048_latents_and_scans_every_key():
    m = tk.model("deepseek-v3.2-exp")
    dep = tk.Deployment(m, "h200", kv_dtype="bf16")
    a = m.attention
    c = 100_000
    core = _core(dep, c)
    # Attention: the new token (position c + 1) attends to the top-k = 2,048 selected keys,
    # in MLA's absorbed form 2 x 128 heads x (2 x 512 + 64) FLOPs per pair.
    attn_per_layer = 2_048 * 2 * 128 * (2 * 512 + 64)
    # Indexer: 64 heads x 128 dims, 2 FLOPs per multiply-add, against every key of positions
    # 1..c+1 (the c cached ones and the new token's own, causally): 2 x 64 x 128 x 100,001.
    indexer_per_layer = 2 * 64 * 128 * (c + 1)
    assert indexer_per_layer == 1_638_416_384
    assert float(core.flops) == pytest.approx(61 * (attn_per_layer + indexer_per_layer),
                                              rel=1e-12)
    # KV read per layer: 2,048 latent entries of (512 + 64) x 2 B, and the index key
    # (128 x 2 B) of all 100,000 cached tokens; plus the new token's 704 x 2 B written.
    read = 61 * (2_048 * 576 * 2 + c * 128 * 2)
    write = 61 * 704 * 2
    assert float(core.kv_bytes) == pytest.approx(read + write, rel=1e-12)
    assert a.is_sparse


def test_v32_indexer_keeps_growing_after_attention_stops():
    dep = tk.Deployment("deepseek-v3.2-exp", "h200", kv_dtype="bf16")
    # Past k = 2,048 cached keys the attention part is flat; only the indexer grows, by
    # 2 x 64 x 128 FLOPs per extra cached token per layer.
    f1, f2 = float(_core(dep, 50_000).flops), float(_core(dep, 150_000).flops)
    assert f2 - f1 == pytest.approx(61 * 2 * 64 * 128 * 100_000, rel=1e-12)


def test_v32_decodes_on_8_h200_in_fp8():
    dep = tk.Deployment("deepseek-v3.2-exp", "h200", tp=8, weight_dtype="fp8")
    # MLA's latent cache is replicated on every tensor-parallel rank: one 100,000-token
    # sequence holds 100,000 x 85,888 B = 8.6 GB on each device (BF16 KV).
    r = tk.decode(dep, batch=1, context_tokens=100_000)
    assert bool(r.fits)
    assert math.isfinite(float(r.time_s)) and float(r.time_s) > 0
    assert str(r.bound) == "memory"          # one sequence: weight and KV reads dominate
    # Lower bound on the bytes each device reads, by hand: its eighth of the activated
    # weights in FP8 (DeepSeek's 37B activated less the 2 x 129,280 x 7,168 embedding and LM
    # head, ~35.1e9 B / 8), plus the whole KV read (the latent is replicated on every rank):
    # 61 layers x (2,048 selected x 576 x 2 B + 100,000 index keys x 128 x 2 B) = 1.705e9 B.
    kv = 61 * (2_048 * 576 * 2 + 100_000 * 128 * 2)
    assert kv == 1_705_517_056
    floor = (37e9 - 2 * 129_280 * 7_168) / 8 + kv
    assert float(r.bytes_per_device) > floor
    # At H200's 4.8 TB/s (NVIDIA H200 datasheet) that is at least 1.27 ms per token.
    assert float(r.time_s) > floor / 4.8e12 > 1.27e-3


# ---------------------------------------------------------------- GLM-4.5 and GLM-4.5-Air


def test_glm45_air_kv_and_counts():
    m = tk.model("glm-4.5-air")
    # Config: 46 layers, 8 KV heads, head_dim 128 for K and for V, BF16:
    # 46 x 8 x (128 + 128) x 2 B = 188,416 B per token.
    assert (m.num_layers, m.attention.num_kv_heads, m.attention.head_dim) == (46, 8, 128)
    assert tk.kv_bytes_per_token(m) == 46 * 8 * 256 * 2 == 188_416
    # Z.ai (GLM-4.5 README): 106B total, 12B active; the active count leaves out the
    # embedding and the LM head (151,552 x 4,096 each).
    assert tk.param_count(m) == pytest.approx(106e9, rel=0.02)
    active = tk.param_count(m, active=True, include_embedding=False, include_lm_head=False)
    assert active == pytest.approx(12e9, rel=0.02)
    assert tk.param_count(m, active=True) - active == 2 * 151_552 * 4_096
    assert not m.official_active_include_embedding and not m.official_active_include_lm_head


def test_glm45_kv_and_counts():
    m = tk.model("glm-4.5")
    # 92 layers x 8 KV heads x (128 + 128) x 2 B = 376,832 B per token.
    assert tk.kv_bytes_per_token(m) == 92 * 8 * 256 * 2 == 376_832
    assert m.attention.qk_norm and m.layer_is_moe[:4] == (False, False, False, True)
    # Z.ai: 355B total, 32B active (embedding and LM head, 151,552 x 5,120 each, left out).
    assert tk.param_count(m) == pytest.approx(355e9, rel=0.02)
    active = tk.param_count(m, active=True, include_embedding=False, include_lm_head=False)
    assert active == pytest.approx(32e9, rel=0.02)
    assert tk.param_count(m, active=True) - active == 2 * 151_552 * 5_120
    assert not m.official_active_include_embedding and not m.official_active_include_lm_head


@pytest.mark.parametrize("mid", ["deepseek-v3.2-exp", "glm-4.5", "glm-4.5-air"])
def test_new_entries_cite_their_sources(mid):
    m = tk.model(mid)
    assert m.sources["config"] and m.path.endswith(f"{mid}.toml")
