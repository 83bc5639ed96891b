"""Decode, prefill, midfill and the operator table: values checked by hand."""

from __future__ import annotations

import numpy as np
import pytest

import tokenomics as tk


def test_decode_batch1_is_weights_plus_kv_over_bandwidth():
    # Llama 3.1 8B BF16 on an H100: weights read once (embedding gathered, LM head read),
    # plus the KV cache at 1024 tokens, over 3.35 TB/s.
    m = tk.model("llama-3.1-8b")
    d = tk.Deployment(m, "h100-sxm")
    r = tk.decode(d, 1, 1024)
    b = tk.param_breakdown(m)
    weights = (sum(b.values()) - b["embedding"] - b["norms"]) * 2
    kv = 1024 * 131_072 + 131_072  # read the cache, write the new token
    assert r.memory_time_s == pytest.approx((weights + kv) / 3.35e12, rel=2e-3)
    assert r.tokens_per_s_per_user == pytest.approx(1 / r.step_time_s)
    assert r.tokens_per_s_per_device == pytest.approx(1 / r.step_time_s)


def test_decode_arrays_broadcast_and_scalars_give_floats():
    d = tk.Deployment("llama-3.1-8b", "h100-sxm")
    r = tk.decode(d, np.array([[1], [8], [64]]), np.array([1024, 4096]))
    assert np.shape(r.step_time_s) == (3, 2)
    assert isinstance(tk.decode(d, 1, 1024).step_time_s, float)
    assert len(r.to_frame()) == 6


def test_moe_decode_reads_distinct_experts_not_topk_nor_all():
    m = tk.model("deepseek-v3")
    d = tk.Deployment(m, "b200", tp=8, weight_dtype="fp8", compute_dtype="fp8")
    per_expert = 3 * 7168 * 2048  # fp8: 1 byte each
    for batch in (1, 64):
        t = tk.operator_table(d, "decode", batch=batch, context_tokens=4096).set_index(
            "operator")
        distinct = 256 * (1 - (1 - 8 / 256) ** batch)
        assert t.loc["moe_experts", "weight_bytes"] * 8 == pytest.approx(
            58 * distinct * per_expert, rel=1e-9)
    # batch 1 reads 8 experts per layer; batch 64 reads ~222 of 256.


def test_deepseek_v3_decode_batch64_on_8_b200_fp8():
    # "How fast can DeepSeek-V3 decode at batch 64 on 8 B200s in FP8?" -- the pure bound,
    # communication not modelled.
    d = tk.Deployment("deepseek-v3", "b200", tp=8, weight_dtype="fp8", compute_dtype="fp8",
                      kv_dtype="fp8", kv_shard="all")
    r = tk.decode(d, 64, 4096)
    assert r.bound == "memory"
    # weights touched per step: non-expert ~17.0e9 + 58 layers x 222.4 experts x 44.0e6 B.
    assert 100 < r.tokens_per_s_per_user < 400
    assert r.tokens_per_s_per_device == pytest.approx(64 * r.tokens_per_s_per_user / 8)


def test_sliding_window_caps_decode_attention_reads():
    m = tk.model("gpt-oss-120b")
    d = tk.Deployment(m, "h100-sxm")
    t = tk.operator_table(d, "decode", batch=1, context_tokens=100_000).set_index("operator")
    per_layer = tk.kv_bytes_per_token_per_layer(m)
    # 18 full layers read 100,000 tokens, 18 sliding layers read 128; plus one token written.
    expected = per_layer * (18 * 100_000 + 18 * 128 + 36)
    assert t.loc["attn_core", "kv_bytes"] == pytest.approx(expected, rel=1e-12)


def test_prefill_attention_is_causal_half_square():
    m = tk.model("llama-3.1-8b")
    d = tk.Deployment(m, "h100-sxm")
    t = tk.operator_table(d, "prefill", prompt_tokens=8192).set_index("operator")
    pairs = 8192 * 8193 / 2
    assert t.loc["attn_core", "flops"] == 32 * 2 * 32 * (128 + 128) * pairs


def test_chunked_attention_prefill_pairs():
    m = tk.model("llama-4-scout")
    d = tk.Deployment(m, "h100-sxm", tp=8, allow_beyond_max_context=False)
    t = tk.operator_table(d, "prefill", prompt_tokens=20_000).set_index("operator")
    c = 8192
    chunked_pairs = 2 * c * (c + 1) / 2 + 3616 * 3617 / 2   # 20,000 = 2 x 8192 + 3616
    full_pairs = 20_000 * 20_001 / 2
    per_pair = 2 * 40 * (128 + 128)
    expected = (36 * chunked_pairs + 12 * full_pairs) * per_pair
    assert t.loc["attn_core", "flops"] * 8 == pytest.approx(expected, rel=1e-12)


def test_midfill_reads_prefix_instead_of_recomputing():
    # Agent step (S61): 119K cached prefix, 875 new tokens.
    m = tk.model("llama-3.1-70b")
    d = tk.Deployment(m, "h200", tp=8, weight_dtype="fp8", kv_dtype="fp8", compute_dtype="fp8")
    mid = tk.operator_table(d, "midfill", prompt_tokens=119_000 + 875,
                            cached_tokens=119_000).set_index("operator")
    kv_layer = 2 * 8 * 128 * 1  # fp8
    assert mid.loc["attn_core", "kv_bytes"] * 8 == pytest.approx(
        80 * kv_layer * (119_000 + 875), rel=1e-12)
    r = tk.prefill(d, 119_875, cached_tokens=119_000)
    full = tk.prefill(d, 119_875)
    assert r.phase == "midfill" and r.time_s < full.time_s / 20


def test_efficiencies_slow_things_down_and_overhead_adds():
    d = tk.Deployment("llama-3.1-8b", "h100-sxm")
    base = tk.decode(d, 16, 2048)
    slow = tk.decode(d.with_(efficiency=tk.Efficiency(mbu=0.5, step_overhead_s=2e-3)), 16, 2048)
    assert slow.step_time_s == pytest.approx(2 * base.step_time_s + 2e-3, rel=1e-9)


def test_pipeline_parallel_rereads_weights_per_microbatch():
    # pp=2, tp=1: two micro-batches of B/2 each read the whole model's weights once per cycle,
    # over one device's bandwidth: step = time(B/2 on 1 device); memory per device halves.
    m = tk.model("llama-3.1-70b")
    d1 = tk.Deployment(m, "h200", tp=1, pp=2, weight_dtype="fp8")
    half = tk.Deployment(m, "h200", tp=1, weight_dtype="fp8", usable_memory_fraction=1.0)
    r = tk.decode(d1, 32, 4096)
    ref = tk.decode(half, 16, 4096, on_oom="mark")
    assert r.roofline_s == pytest.approx(ref.roofline_s, rel=1e-12)
    # plus the stage-to-stage sends: 2 per cycle of 16 x 8192 x 2 B over NVLink (450 GB/s).
    assert r.collective_time_s == pytest.approx(2 * (0.6e-6 + 16 * 8192 * 2 / 450e9), rel=1e-9)


def test_prefill_batch_and_ttft_aliases():
    d = tk.Deployment("llama-3.1-8b", "h100-sxm")
    r = tk.prefill(d, [1024, 2048], batch=2)
    assert np.all(np.asarray(r.ttft_s) == np.asarray(r.time_s))
    assert r.bound[0] == "compute"


def test_operator_table_rows_are_operators_and_the_total_sums_them():
    # issue 14: a "total" row among the data broke t.time_s.sum() and groupbys
    d = tk.Deployment("llama-3.1-70b", "h100-sxm", tp=4)
    t = tk.operator_table(d, "decode", batch=8, context_tokens=4096)
    assert "total" not in set(t.operator)
    tot = t.attrs["total"]
    assert tot["time_s"] == pytest.approx(t.time_s.sum(), rel=1e-12)
    assert tot["flops"] == pytest.approx(t.flops.sum(), rel=1e-12)
    assert tot["intensity_flop_per_byte"] == pytest.approx(t.flops.sum() / t.bytes.sum())
    # the sum over operators of max(compute, memory) is the step's roofline time
    assert tot["time_s"] == pytest.approx(float(tk.decode(d, 8, 4096).roofline_s), rel=1e-12)


def test_step_frames_name_the_time_by_phase_once():
    d = tk.Deployment("llama-3.1-8b", "h100-sxm")
    dec = tk.decode(d, [1, 8], 1024).to_frame()
    pre = tk.prefill(d, 1024).to_frame()
    assert "step_time_s" in dec and "time_s" not in dec and "ttft_s" not in dec
    assert "ttft_s" in pre and "time_s" not in pre and "step_time_s" not in pre


def test_an_operator_table_is_one_steps_and_takes_one_batch():
    d8 = tk.Deployment("llama-3.1-8b", "h100-sxm")
    with pytest.raises(tk.TokenomicsError, match="batch must be a single whole number"):
        tk.operator_table(d8, "decode", batch=[1, 8], context_tokens=4096)
