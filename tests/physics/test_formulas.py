"""The per-unit formulas: hand values from the models' configs, and their properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tokenomics as tk
from tokenomics.physics import formulas as F

L70 = tk.model("llama-3.1-70b").attention      # 64 query heads, 8 KV heads, d = 128
DSV3 = tk.model("deepseek-v3").attention       # MLA: 128 heads, r_kv 512, RoPE 64, nope 128


# ---- attention ------------------------------------------------------------------------------
def test_attention_pair_flops_by_hand():
    # Scores (d_k) and weighted values (d_v), a multiply-add each: 2 x 64 x (128 + 128).
    assert F.attention_pair_flops(L70) == 2 * 64 * (128 + 128) == 32_768
    # MLA expanded: the full key width 128 + 64 = 192 and d_v = 128.
    assert F.attention_pair_flops(DSV3) == 2 * 128 * (192 + 128)


def test_mla_forms_by_hand():
    # Absorbed: scores against the 512 + 64 latent, values read back in the 512 latent.
    assert F.mla_absorbed_pair_flops(DSV3) == 2 * 128 * (2 * 512 + 64) == 278_528
    # Expanded: up-project one cached latent to 128 heads x (128 nope + 128 value).
    assert F.mla_up_projection_flops_per_token(DSV3) == 2 * 512 * 128 * (128 + 128)
    # Decode kernels run the absorbed form for MLA, the plain one otherwise.
    assert F.attention_pair_flops_as_run(DSV3) == F.mla_absorbed_pair_flops(DSV3)
    assert F.attention_pair_flops_as_run(L70) == F.attention_pair_flops(L70)


def test_kv_and_io_elements_by_hand():
    assert F.kv_elements_per_token_per_layer(L70) == 8 * (128 + 128) == 2_048
    assert F.kv_elements_per_token_per_layer(DSV3) == 512 + 64
    mha = tk.model("llama-2-13b").attention                 # 40 heads, MHA
    assert F.kv_elements_per_token_per_layer(mha) == 40 * 256
    assert F.attention_io_elements_per_token(L70) == 64 * (128 + 128)


# ---- spans ----------------------------------------------------------------------------------
@pytest.mark.parametrize("kind, w, n, pairs", [
    ("full", math.inf, 4, 1 + 2 + 3 + 4),
    ("full", math.inf, 1000, 1000 * 1001 / 2),
    ("sliding", 2.0, 4, 1 + 2 + 2 + 2),
    ("sliding", 4096.0, 10, 55),                  # below the window: the causal half square
    ("chunked", 3.0, 4, 1 + 2 + 3 + 1),
    ("chunked", 3.0, 7, (1 + 2 + 3) * 2 + 1),
])
def test_span_sum_by_hand(kind, w, n, pairs):
    assert float(F.span_sum(kind, w, n)) == pairs


@pytest.mark.parametrize("kind, w, c, read", [
    ("full", math.inf, 10_000, 10_000),
    ("sliding", 4096.0, 10_000, 4096),            # a window holds its last W tokens
    ("sliding", 4096.0, 100, 100),
    ("chunked", 8192.0, 10_000, 10_000 - 8192),   # the current chunk's earlier tokens
])
def test_kv_read_tokens_by_hand(kind, w, c, read):
    assert float(F.kv_read_tokens(kind, w, c)) == read


def _span(kind: str, w: int, i: int) -> int:
    """Keys position i (1-based) attends to."""
    if kind == "full":
        return i
    if kind == "sliding":
        return min(i, w)
    return (i - 1) % w + 1


@given(kind=st.sampled_from(["full", "sliding", "chunked"]), w=st.integers(1, 64),
       n=st.integers(0, 400))
def test_span_sum_is_the_sum_of_spans(kind, w, n):
    want = sum(_span(kind, w, i) for i in range(1, n + 1))
    assert float(F.span_sum(kind, float(w) if kind != "full" else math.inf, n)) == want


# ---- experts --------------------------------------------------------------------------------
def test_distinct_experts_by_hand():
    assert F.distinct_experts(256, 8, 1) == pytest.approx(8.0)   # one token: its top-k
    # 64 tokens on DeepSeek-V3: 256 (1 - (248/256)^64).
    assert F.distinct_experts(256, 8, 64) == pytest.approx(256 * (1 - (248 / 256) ** 64))
    assert F.distinct_experts(8, 8, 5) == 8                      # k = E: all from the start
    assert F.distinct_experts(256, 8, [1, 64]).shape == (2,)
    # Half the experts at ln 0.5 / ln(248/256) = 21.83 tokens.
    assert F.tokens_for_distinct_fraction(256, 8, 0.5) == pytest.approx(
        math.log(0.5) / math.log(248 / 256))


@given(E=st.integers(2, 512), data=st.data())
def test_distinct_experts_between_k_and_E_and_increasing(E, data):
    k = data.draw(st.integers(1, E))
    n = np.arange(1, 200, dtype=float)
    d = F.distinct_experts(E, k, n)
    assert np.all(d >= k - 1e-9) and np.all(d <= E + 1e-9)
    assert np.all(np.diff(d) >= -1e-9)                   # more tokens never touch fewer
    if k < E:   # a second token adds k (1 - k/E) > 0 experts on average: 2k - k^2/E
        assert d[1] == pytest.approx(2 * k - k * k / E) and d[1] > d[0]


@given(E=st.integers(2, 512), data=st.data(), f=st.floats(0.0, 0.999))
def test_tokens_for_distinct_fraction_inverts_distinct_experts(E, data, f):
    k = data.draw(st.integers(1, E - 1))
    n = F.tokens_for_distinct_fraction(E, k, f)
    assert F.distinct_experts(E, k, n) == pytest.approx(f * E, rel=1e-9, abs=1e-9)


def test_tokens_for_distinct_fraction_rejects_impossible_targets():
    with pytest.raises(tk.TokenomicsError, match=r"fraction must be in \[0, 1\)"):
        F.tokens_for_distinct_fraction(256, 8, 1.0)
    with pytest.raises(tk.TokenomicsError, match="every expert is active"):
        F.tokens_for_distinct_fraction(8, 8, 0.5)


def test_distinct_experts_takes_sympy_symbols():
    sympy = pytest.importorskip("sympy")
    E, k, n = sympy.symbols("E k n", positive=True)
    expr = F.distinct_experts(E, k, n)
    assert float(expr.subs({E: 256, k: 8, n: 64})) == pytest.approx(
        F.distinct_experts(256, 8, 64), rel=1e-12)
    assert sympy.simplify(expr.subs(n, 1) - k) == 0        # one token: exactly k


def test_gated_deltanet_state_and_flops_of_qwen3_next_by_hand():
    from tokenomics.physics.formulas import (
        gdn_flops_per_token_per_layer,
        gdn_state_elements_per_layer,
    )
    # Qwen3-Next-80B-A3B config.json: linear_num_key_heads 16, linear_num_value_heads 32,
    # linear_key_head_dim = linear_value_head_dim = 128, linear_conv_kernel_dim 4.
    recurrent = 32 * 128 * 128                       # one 128 x 128 state per value head
    conv = (4 - 1) * (2 * 16 * 128 + 32 * 128)       # 3 positions of the q, k, v channels
    assert (recurrent, conv) == (524_288, 24_576)
    assert gdn_state_elements_per_layer(16, 32, 128, 128, 4) == recurrent + conv
    # decay 1 + read-out 2 + update 2 + output 2 FLOPs per state element; conv 2K per channel
    assert gdn_flops_per_token_per_layer(16, 32, 128, 128, 4) == 7 * recurrent + 8 * 8192


def test_dsa_indexer_and_topk_reads_by_hand():
    from tokenomics.physics.formulas import dsa_indexer_flops_per_query, dsa_read_tokens
    # DeepSeek-V3.2-Exp config.json: index_n_heads 64, index_head_dim 128, index_topk 2048.
    assert dsa_indexer_flops_per_query(64, 128, 1) == 16_384        # 2 * 64 * 128 per token
    assert dsa_indexer_flops_per_query(64, 128, 131_072) == 16_384 * 131_072
    assert dsa_read_tokens([100, 2048, 131_072], 2048).tolist() == [100, 2048, 2048]
