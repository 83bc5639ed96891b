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


# ---- attention / FFN split ------------------------------------------------------------------
from tokenomics.serving.batching import attention_ffn_split  # noqa: E402


@pytest.fixture(scope="module")
def gpu70():
    return tk.Deployment("llama-3.1-70b", "h100-sxm", tp=8, weight_dtype="fp8",
                         compute_dtype="fp8", kv_dtype="fp8")


def test_split_moves_only_activations(gpu70):
    r = attention_ffn_split(gpu70, "h100-sxm", 8, 64, 8192, link_bytes_per_s=400e9)
    # 2 crossings per layer x 80 layers x 64 tokens x 8192 hidden x 2 B (BF16 activations).
    assert r.transfer_bytes == 2 * 80 * 64 * 8192 * 2
    kv = tk.kv_cache_bytes(tk.model("llama-3.1-70b"), 8192, 64, "fp8")
    assert r.transfer_bytes < kv / 50


def test_split_on_the_same_hardware_with_a_free_link_is_the_decode_roofline(gpu70):
    r = attention_ffn_split(gpu70, "h100-sxm", 8, 32, 4096, link_bytes_per_s=1e18,
                            microbatches=1)
    ref = tk.decode(gpu70, 32, 4096)
    assert r.step_time_s == pytest.approx(ref.roofline_s, rel=1e-6)


def test_S52_ffn_on_a_low_ridge_sram_chip():
    # Attention with its KV on 8 H100s; the FFN on Groq LPUs (INT8 ridge 750/80 = 9.4
    # FLOP/B, 230 MB SRAM each): 70B's FFN at INT8 is ~56 GB -> ~245 chips.
    gpu = tk.Deployment("llama-3.1-70b", "h100-sxm", tp=8, weight_dtype="int8",
                        compute_dtype="int8", kv_dtype="fp8")
    assert tk.ridge_point(tk.hardware("groq-lpu"), "int8") == pytest.approx(750 / 80)
    with pytest.raises(tk.DoesNotFitError, match="at least 2"):
        attention_ffn_split(gpu, "groq-lpu", 100, 64, 8192, link_bytes_per_s=400e9,
                            ffn_compute_dtype="int8")
    r = attention_ffn_split(gpu, "groq-lpu", 300, 64, 8192, link_bytes_per_s=400e9,
                            link_latency_s=2e-6, ffn_compute_dtype="int8")
    alone = tk.decode(gpu, 64, 8192)
    assert r.step_time_s < alone.step_time_s         # the FFN's weight stream leaves the GPUs
    assert r.attention_utilisation > 0.9 and r.ffn_utilisation < 0.05


@given(n=st.integers(8, 64), b=st.integers(1, 128))
def test_more_ffn_devices_never_slower(n, b):
    gpu = tk.Deployment("llama-3.1-70b", "h100-sxm", tp=8, weight_dtype="fp8",
                        compute_dtype="fp8", kv_dtype="fp8")
    t1 = attention_ffn_split(gpu, "h200", n, b, 2048, 400e9, check_memory=False).step_time_s
    t2 = attention_ffn_split(gpu, "h200", n + 8, b, 2048, 400e9,
                             check_memory=False).step_time_s
    assert t2 <= t1 * (1 + 1e-12)


def test_split_errors(gpu70):
    with pytest.raises(tk.TokenomicsError, match="microbatches must be >= 1"):
        attention_ffn_split(gpu70, "h100-sxm", 8, 1, 1024, 400e9, microbatches=0)
    with pytest.raises(tk.TokenomicsError, match="link_bytes_per_s must be > 0"):
        attention_ffn_split(gpu70, "h100-sxm", 8, 1, 1024, 0)


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


# ---- the FFN pool and the link as objects; release 0.1's loose arguments still work ---------
from tokenomics.data.workload import Link  # noqa: E402
from tokenomics.serving.batching import AttentionFFNSplit, FFNPool  # noqa: E402


def _same_split(a: AttentionFFNSplit, b: AttentionFFNSplit) -> None:
    for name in AttentionFFNSplit.__dataclass_fields__:
        assert np.array_equal(np.asarray(getattr(a, name)), np.asarray(getattr(b, name))), name


def test_split_objects_and_0_1_arguments_agree(gpu70):
    new = attention_ffn_split(gpu70, FFNPool("h100-sxm", 8), 64, 8192, Link(400e9))
    # 2 crossings x 80 layers x 64 tokens x 8,192 hidden x 2 B.
    assert new.transfer_bytes == 2 * 80 * 64 * 8192 * 2
    _same_split(new, attention_ffn_split(gpu70, "h100-sxm", 8, 64, 8192,
                                         link_bytes_per_s=400e9))
    # Every 0.1 argument in its position.
    old = attention_ffn_split(gpu70, "h200", 16, [8, 32], 4096, 400e9, 2e-6, "fp8", 1, False)
    _same_split(old, attention_ffn_split(gpu70, FFNPool("h200", 16, "fp8"), [8, 32], 4096,
                                         Link(400e9, 2e-6), 1, False))
    # Taking turns (one micro-batch): step = attention + FFN + 2 x 80 crossings.
    assert np.allclose(old.step_time_s, np.asarray(old.attention_time_s) + old.ffn_time_s
                       + old.transfer_time_s, rtol=1e-12)
    lat = 2 * 80 * 2e-6 + 2 * 80 * np.array([8, 32]) * 8192 * 2 / 400e9
    assert np.allclose(old.transfer_time_s, lat, rtol=1e-12)


def test_split_value_object_errors(gpu70):
    with pytest.raises(tk.TokenomicsError, match="link must be a tokenomics Link"):
        attention_ffn_split(gpu70, FFNPool("h100-sxm", 8), 1, 1024, 400e9)
    with pytest.raises(tk.TokenomicsError, match="ffn_devices"):
        FFNPool("h100-sxm", 0)
    with pytest.raises(tk.UnknownEntryError):
        FFNPool("no-such-chip", 8)
