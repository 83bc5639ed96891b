"""KV-cache bytes: per token from the model configs, windows and chunks honoured."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tokenomics as tk
from tokenomics.physics.kv import (
    kv_bytes_per_token,
    kv_bytes_per_token_per_layer,
    kv_cache_bytes,
    kv_context_crossover_tokens,
    kv_tokens_held,
)
from tokenomics.physics.memory import weight_bytes


def test_llama_3_1_70b_per_token():
    m = tk.model("llama-3.1-70b")
    # K and V x 80 layers x 8 KV heads x 128 x 2 B (BF16) = 327,680 B ("320 KB per token").
    assert kv_bytes_per_token(m) == 2 * 80 * 8 * 128 * 2 == 327_680
    assert kv_bytes_per_token_per_layer(m) == 2 * 8 * 128 * 2
    assert kv_bytes_per_token(m, "fp8") == 327_680 / 2


def test_deepseek_v3_mla_latent_per_token():
    # MLA caches the 512-dim latent plus the 64-dim RoPE key, shared by all 128 heads:
    # (512 + 64) x 61 layers x 2 B = 70,272 B, against 2 x 128 x 128 x 61 x 2 for MHA.
    m = tk.model("deepseek-v3")
    assert kv_bytes_per_token(m) == (512 + 64) * 61 * 2 == 70_272


def test_a_context_of_131072_tokens_is_40_gib_for_llama_70b():
    # S11: 327,680 B x 131,072 tokens = 40 x 2^30 B.
    assert kv_cache_bytes(tk.model("llama-3.1-70b"), 131_072) == 40 * 2**30
    assert kv_cache_bytes(tk.model("llama-3.1-70b"), 1000, batch=3) == 3 * 1000 * 327_680


@pytest.mark.parametrize("context", [500, 1024, 32_768])
def test_gemma_3_sliding_layers_hold_at_most_their_window(context):
    # Gemma 3 27B: 52 of 62 layers slide over 1,024 tokens, 10 are global; 16 KV heads x
    # (128 + 128) x 2 B = 8,192 B per token per layer.
    m = tk.model("gemma-3-27b")
    want = 16 * 256 * 2 * (52 * min(context, 1024) + 10 * context)
    assert kv_cache_bytes(m, context) == want


def test_gpt_oss_alternating_128_token_windows():
    # gpt-oss-120b: 18 layers with a 128-token window, 18 full; 8 KV heads x (64 + 64) x 2 B.
    m = tk.model("gpt-oss-120b")
    assert kv_cache_bytes(m, 131_072) == 8 * 128 * 2 * (18 * 128 + 18 * 131_072)


def test_llama_4_chunked_layers_hold_one_chunk():
    # Llama 4 Scout: 36 of 48 layers attend within 8,192-token chunks (at most one chunk
    # held), 12 globally; 8 KV heads x 256 x 2 B = 4,096 B per token per layer.
    m = tk.model("llama-4-scout")
    assert kv_cache_bytes(m, 100_000) == 4096 * (36 * 8192 + 12 * 100_000)
    assert [(n, float(t)) for n, t in kv_tokens_held(m, 100_000)] == [(36, 8192.0),
                                                                      (12, 100_000.0)]


@given(c=st.integers(0, 131_072), b=st.integers(1, 64))
def test_a_windowed_layer_holds_min_of_context_and_window(c, b):
    m = tk.model("gemma-3-27b")
    held = dict((n, float(t)) for n, t in kv_tokens_held(m, c))
    assert held == {52: float(min(c, 1024)), 10: float(c)}
    assert kv_cache_bytes(m, c, b) == b * kv_cache_bytes(m, c)


def test_arrays_broadcast():
    m = tk.model("llama-3.1-8b")
    out = kv_cache_bytes(m, np.array([1024, 2048]), np.array([[1], [4]]))
    # 32 layers x 8 heads x 256 x 2 B = 131,072 B per token.
    assert out.tolist() == [[1024 * 131_072, 2048 * 131_072],
                            [4 * 1024 * 131_072, 4 * 2048 * 131_072]]


def test_crossover_context_where_kv_equals_the_weights():
    # S13: 70B BF16 weights (~141 GB) over 327,680 B per token: ~431,000 tokens.
    m = tk.model("llama-3.1-70b")
    w = weight_bytes(m, "bf16")
    assert kv_context_crossover_tokens(m, w) == pytest.approx(w / 327_680)
    assert 425_000 < kv_context_crossover_tokens(m, w) < 435_000


def test_context_beyond_the_model_maximum_is_refused_unless_allowed():
    m = tk.model("llama-3.1-8b")                            # 131,072 tokens
    with pytest.raises(tk.TokenomicsError, match="exceeds llama-3.1-8b's maximum context"):
        kv_cache_bytes(m, 200_000)
    assert kv_cache_bytes(m, 200_000, allow_beyond_max_context=True) == 200_000 * 131_072
    with pytest.raises(tk.TokenomicsError, match="batch"):
        kv_cache_bytes(m, 1024, batch=0)


def test_qwen3_next_kv_counts_full_attention_layers_and_state_once():
    # 12 of 48 layers are full attention (every 4th): 2 KV heads x (256 + 256) x 2 B = 2,048
    # B per layer -> 24,576 B/token. 36 Gated DeltaNet layers keep 32 x 128 x 128 + 3 x
    # (2 x 16 x 128 + 32 x 128) = 548,864 elements each, at 2 B: 39,518,208 B per sequence.
    import tokenomics as tk
    from tokenomics.physics.kv import linear_state_bytes_per_sequence

    m = tk.model("qwen3-next-80b-a3b")
    assert tk.kv_bytes_per_token(m) == 24_576
    assert linear_state_bytes_per_sequence(m) == 36 * 548_864 * 2
    # Two sequences of 1,000 tokens: 2 x (1,000 x 24,576 + 39,518,208).
    assert tk.kv_cache_bytes(m, 1000, batch=2) == 2 * (1000 * 24_576 + 39_518_208)
    d = tk.Deployment("qwen3-next-80b-a3b", "h200")
    from tokenomics.physics.memory import kv_per_sequence_bytes
    assert kv_per_sequence_bytes(d, 1000) == 1000 * 24_576 + 39_518_208


@settings(max_examples=60, deadline=None)
@given(mid=st.sampled_from(["gemma-4-31b", "gemma-4-e2b", "llama-3.1-70b", "gpt-oss-120b",
                            "deepseek-v3"]),
       c1=st.integers(0, 262_144), c2=st.integers(0, 262_144))
def test_kv_held_grows_with_context_and_is_the_cache_of_one_sequence(mid, c1, c2):
    # a law: a longer context never holds less; without linear layers the bytes one sequence
    # holds are kv_cache_bytes at batch 1, and a replication of r copies every byte r times
    from tokenomics.physics.kv import kv_bytes_held

    m = tk.model(mid)
    lo, hi = sorted((c1, c2))
    assert kv_bytes_held(m, lo) <= kv_bytes_held(m, hi)
    assert kv_bytes_held(m, hi) == pytest.approx(
        tk.kv_cache_bytes(m, hi, allow_beyond_max_context=True), rel=1e-12)
    assert kv_bytes_held(m, hi, replication=lambda a: 3.0) == pytest.approx(
        3 * kv_bytes_held(m, hi), rel=1e-12)
