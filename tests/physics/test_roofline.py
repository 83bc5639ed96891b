"""Roofline quantities at datasheet numbers, worked by hand."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import tokenomics as tk
from tokenomics.physics.roofline import (
    attainable_flop_per_s,
    attention_decode_intensity,
    critical_batch,
    gemm_bytes,
    gemm_flops,
    gemm_intensity,
    ridge_point,
    roofline_time,
)


def test_ridge_point_h100_sxm_bf16():
    # Dense BF16 989.4 TFLOP/s over 3.35 TB/s of HBM3: 295 FLOP per byte (S01).
    assert ridge_point(tk.hardware("h100-sxm"), "bf16") == pytest.approx(989.4e12 / 3.35e12)
    assert round(ridge_point(tk.hardware("h100-sxm"))) == 295


def test_critical_batch_tpu_v5e():
    # 197 TFLOP/s BF16 over 819 GB/s: 240.5 FLOP/B; a BF16 weight is 2 B read for 2 FLOP per
    # token, so weight GEMMs turn compute-bound at 240.5 tokens ("How to Scale Your Model").
    v5e = tk.hardware("tpu-v5e")
    assert critical_batch(v5e, "bf16") == pytest.approx(197e12 / 819e9)
    assert round(critical_batch(v5e, "bf16"), 1) == 240.5
    # INT8 weights multiplied in BF16: half the bytes per weight, half the batch.
    assert critical_batch(v5e, "int8", "bf16") == pytest.approx(197e12 / 819e9 / 2)


def test_roofline_time_by_hand():
    # 2e12 FLOP at 1 PFLOP/s = 2 ms; 1 GB at 1 TB/s = 1 ms: compute-bound, 2 ms.
    assert roofline_time(2e12, 1e9, 1e15, 1e12) == pytest.approx(2e-3)
    # 15 GB of weights at 3.35 TB/s with 30 GFLOP at 989.4 TFLOP/s: memory-bound.
    assert roofline_time(30e9, 15e9, 989.4e12, 3.35e12) == pytest.approx(15e9 / 3.35e12)
    with pytest.raises(tk.TokenomicsError, match="flops must be >= 0"):
        roofline_time(-1, 1, 1, 1)
    with pytest.raises(tk.TokenomicsError, match="mem_bw_bytes_per_s must be > 0"):
        roofline_time(1, 1, 1, 0)


def test_attainable_flop_per_s_by_hand():
    # Batch-1 decode (~1 FLOP/B) on an H100 runs at the bandwidth line: 3.35 TFLOP/s.
    assert attainable_flop_per_s(1.0, 989.4e12, 3.35e12) == pytest.approx(3.35e12)
    # Past the ridge (1,000 > 295 FLOP/B) at the peak.
    assert attainable_flop_per_s(1000.0, 989.4e12, 3.35e12) == 989.4e12
    # At the ridge both lines meet.
    assert attainable_flop_per_s(989.4e12 / 3.35e12, 989.4e12, 3.35e12) == pytest.approx(
        989.4e12)


@given(i=st.floats(0, 1e4), peak=st.floats(1e9, 1e16), bw=st.floats(1e9, 1e14))
def test_attainable_is_the_lower_of_the_two_roofs(i, peak, bw):
    a = attainable_flop_per_s(i, peak, bw)
    assert a <= peak and a <= i * bw * (1 + 1e-12)
    assert a == pytest.approx(min(peak, i * bw))


def test_gemm_counts_by_hand():
    assert gemm_flops(2, 3, 4) == 2 * 2 * 3 * 4
    # (1, 8192) x (8192, 8192) in BF16: the weights 8192^2 x 2 B, the vectors (8192 + 8192) x 2.
    assert gemm_bytes(1, 8192, 8192) == 8192 * 8192 * 2 + (8192 + 8192) * 2
    assert gemm_bytes(1, 8192, 8192, include_activations=False) == 8192 * 8192 * 2
    # S03: batch-1 decode GEMMs do ~1 FLOP per byte; batch 64 about 64 (S04).
    assert gemm_intensity(1, 8192, 8192) == pytest.approx(2 * 8192**2 / (2 * 8192**2 + 4 * 8192))
    assert gemm_intensity(64, 8192, 8192, include_activations=False) == pytest.approx(64.0)


@pytest.mark.parametrize("model_id, kv_dtype, want", [
    ("llama-3.1-70b", "bf16", 2 * 64 / (8 * 2)),                       # GQA group of 8
    ("llama-3.1-70b", "fp8", 2 * 64 / (8 * 1)),
    ("llama-2-13b", "bf16", 1.0),                                      # MHA
    ("deepseek-v3", "bf16", 2 * 128 * (1024 + 64) / (576 * 2)),        # MLA absorbed, 241.8
    ("deepseek-v3", "fp8", 2 * 128 * (1024 + 64) / (576 * 1)),
])
def test_attention_decode_intensity_by_hand(model_id, kv_dtype, want):
    assert attention_decode_intensity(tk.model(model_id), kv_dtype) == pytest.approx(want)
    # An Attention alone gives the same number.
    assert attention_decode_intensity(tk.model(model_id).attention, kv_dtype) == \
        pytest.approx(want)
