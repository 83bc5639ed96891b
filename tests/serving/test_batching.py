"""Serving mechanics: mixed steps, chunked prefill (S24), prefix caching (S31), static vs
continuous batching (S21)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tokenomics as tk
from tokenomics.serving.batching import (
    batching_throughput,
    chunked_prefill,
    expected_max,
    mixed_step,
    prefix_cached_prefill,
    shared_prefix_kv_bytes,
)


@pytest.fixture(scope="module")
def d70():
    return tk.Deployment("llama-3.1-70b", "h100-sxm", tp=4)


def test_S24_chunked_prefill_of_8192_tokens(d70):
    # An 8,192-token prompt beside 32 running decodes (4,096 tokens each), 512 tokens per step:
    # 32 decode tokens first, 480 prompt tokens per step -> ceil(8192 / 480) = 18 steps.
    r = chunked_prefill(d70, 8192, 512, decode_batch=32, decode_context_tokens=4096)
    assert r.steps == 18
    assert r.chunk_tokens.sum() == 8192 and r.chunk_tokens[-1] == 8192 - 17 * 480
    # Lower worst-case TBT, higher TTFT than the unchunked (prefill-first) schedule.
    assert r.worst_tbt_s < r.unchunked_worst_tbt_s / 5
    assert r.ttft_s > r.unchunked_ttft_s
    # Unchunked: the decodes wait for the whole prefill plus their own step.
    assert r.unchunked_worst_tbt_s == pytest.approx(
        tk.prefill(d70, 8192).time_s + tk.decode(d70, 32, 4096).time_s)


def test_chunked_prefill_later_chunks_cost_more_attention(d70):
    r = chunked_prefill(d70, 8192, 1024, decode_batch=0)
    full_chunks = r.step_time_s[:-1]
    assert np.all(np.diff(full_chunks) > 0)   # each chunk attends to a longer cache


def test_chunked_prefill_errors(d70):
    with pytest.raises(tk.TokenomicsError, match="token_budget=32 must exceed decode_batch=32"):
        chunked_prefill(d70, 8192, 32, decode_batch=32)
    with pytest.raises(tk.TokenomicsError, match="cached_tokens=9000 must be below"):
        chunked_prefill(d70, 8192, 512, cached_tokens=9000)
    with pytest.raises(tk.DoesNotFitError, match="chunked prefill"):
        chunked_prefill(d70, 8192, 2048, decode_batch=1000, decode_context_tokens=8192)


def test_mixed_step_reads_weights_once(d70):
    both = mixed_step(d70, 32, 2048, 512)
    apart = tk.decode(d70, 32, 2048).time_s + tk.prefill(d70, 512).time_s
    assert both.time_s < apart
    # A mixed step with no decodes is the prefill chunk alone.
    assert mixed_step(d70, 0, 1, 512).time_s == pytest.approx(tk.prefill(d70, 512).time_s)


def test_S31_cached_document_leaves_22_new_tokens(d70):
    # A 12,000-token document plus a 22-token question: 12,022 tokens of prefill cold; with
    # the document cached, only the 22 new tokens are computed and the prefix's KV is read.
    r = prefix_cached_prefill(d70, 12_022, cached_tokens=12_000)
    m = tk.model("llama-3.1-70b")
    kv = 12_000 * 327_680 / 4            # BF16 KV per device under TP=4 (8 KV heads)
    assert r.kv_read_bytes == pytest.approx(kv)
    ops = tk.operator_table(d70, "midfill", prompt_tokens=12_022, cached_tokens=12_000)
    ops = ops.set_index("operator")
    # Weight GEMMs see 22 tokens: 2 x 22 x matmul params / 4 devices.
    b = tk.param_breakdown(m)
    assert ops.loc["ffn_dense", "flops"] == pytest.approx(2 * 22 * b["dense_ffn"] / 4)
    # The new tokens attend to the whole prompt: pairs = 22 x 12,000 + 22 x 23 / 2.
    pairs = 22 * 12_000 + 22 * 23 / 2
    assert ops.loc["attn_core", "flops"] == pytest.approx(80 * 2 * 64 * 256 * pairs / 4)
    assert r.flops < r.flops_uncached / 400
    assert r.speedup > 20


def test_prefix_cache_hit_rate_form(d70):
    r = prefix_cached_prefill(d70, 10_000, hit_rate=0.9)
    assert r.cached_tokens == 9000
    with pytest.raises(tk.TokenomicsError, match="hit_rate must be in"):
        prefix_cached_prefill(d70, 10_000, hit_rate=1.0)
    with pytest.raises(tk.TokenomicsError, match="exactly one"):
        prefix_cached_prefill(d70, 10_000)


def test_shared_prefix_stored_once():
    d = tk.Deployment("llama-3.1-8b", "h100-sxm")
    shared, each = shared_prefix_kv_bytes(d, 4000, 100, 10)
    per_tok = 131_072
    assert shared == pytest.approx((4000 + 10 * 100) * per_tok)
    assert each == pytest.approx(10 * 4100 * per_tok)


def test_expected_max_by_hand():
    # Max of 2 draws from {1, 2}: P(max=1) = 1/4 -> 0.25 + 2 * 0.75 = 1.75.
    assert expected_max([1, 2], 2) == pytest.approx(1.75)
    assert expected_max([5], 10) == 5
    with pytest.raises(tk.TokenomicsError, match="samples is empty"):
        expected_max([], 2)


@given(xs=st.lists(st.integers(1, 10_000), min_size=1, max_size=50), n=st.integers(1, 200))
def test_expected_max_between_mean_and_max_and_increasing(xs, n):
    e = expected_max(xs, n)
    assert np.mean(xs) - 1e-9 <= e <= max(xs) + 1e-9
    assert expected_max(xs, n + 1) >= e - 1e-9


def test_S21_continuous_batching_2_to_4x_over_static():
    # ShareGPT-like outputs: lognormal, median 200 tokens, sigma 1 (mean/median 1.65), at a
    # batch of 8 slots: static holds every slot until the batch's longest output ends.
    rng = np.random.default_rng(0)
    outs = np.round(rng.lognormal(np.log(200), 1.0, 20_000)) + 1
    d = tk.Deployment("llama-3.1-8b", "h100-sxm")
    r = batching_throughput(d, 8, 512, outs)
    assert 2 <= r.ratio <= 4
    # With equal output lengths there is little to gain (only the in-line batched prefill).
    same = batching_throughput(d, 8, 512, 300)
    assert same.ratio < 1.5


@given(b=st.integers(1, 128), o=st.integers(16, 2000))
def test_continuous_never_below_static_for_fixed_lengths_at_decode_scale(b, o):
    d = tk.Deployment("llama-3.1-8b", "h100-sxm")
    r = batching_throughput(d, b, 256, o)
    assert r.ratio > 0.95


@given(p=st.integers(1000, 30_000), s=st.integers(256, 8192), d=st.integers(0, 64))
def test_chunked_prefill_properties(p, s, d):
    dep = tk.Deployment("llama-3.1-8b", "h100-sxm")
    if s <= d:
        return
    r = chunked_prefill(dep, p, s, decode_batch=d, decode_context_tokens=1024)
    assert r.chunk_tokens.sum() == p
    assert r.steps == -(-p // (s - d))
    assert r.worst_tbt_s <= r.unchunked_worst_tbt_s * (1 + 1e-12)
    assert r.ttft_s >= r.unchunked_ttft_s * (1 - 1e-12) or r.steps == 1


@given(p=st.integers(2, 60_000), h=st.floats(0, 0.999))
def test_prefix_cache_hit_never_slower(p, h):
    dep = tk.Deployment("llama-3.1-8b", "h100-sxm")
    r = prefix_cached_prefill(dep, p, hit_rate=h)
    assert r.ttft_s <= r.ttft_uncached_s * (1 + 1e-12)
    assert r.flops <= r.flops_uncached


def test_batching_accepts_a_parametric_distribution():
    from tokenomics.serving.paged import LengthDistribution

    d = tk.Deployment("llama-3.1-8b", "h100-sxm")
    dist = LengthDistribution.lognormal(200, 1.0, 8192)
    r = batching_throughput(d, 8, 512, dist)
    assert 2 <= r.ratio <= 4.5
    # Weighted expected max by hand: values {1, 3} with P(3) = 0.25, two draws:
    # P(max = 1) = 0.75^2 -> 0.5625 + 3 * 0.4375 = 1.875.
    assert expected_max([3, 1], 2, [0.25, 0.75]) == pytest.approx(1.875)


@given(d=st.integers(1, 64), c=st.integers(64, 8192), t=st.integers(1, 2048))
def test_mixed_step_between_the_larger_part_and_the_sum(d, c, t):
    dep = tk.Deployment("llama-3.1-8b", "h100-sxm")
    both = mixed_step(dep, d, c, t).time_s
    dec = tk.decode(dep, d, c, on_oom="mark").time_s
    pre = tk.prefill(dep, t, on_oom="mark").time_s
    assert max(dec, pre) * (1 - 1e-12) <= both <= (dec + pre) * (1 + 1e-12)


@given(p=st.integers(0, 20_000), s=st.integers(0, 4000), b=st.integers(1, 64))
def test_shared_prefix_never_costs_more_memory(p, s, b):
    dep = tk.Deployment("llama-3.1-8b", "h100-sxm")
    shared, each = shared_prefix_kv_bytes(dep, p, s, b)
    assert shared <= each * (1 + 1e-12)
    if b == 1:
        assert shared == pytest.approx(each)
