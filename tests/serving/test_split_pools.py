"""Attention and FFN on two pools (serving/split_pools.py): activations over a link, the
busiest pool setting the step (S52: attention on GPUs with the KV, FFN on a low-ridge chip)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tokenomics as tk
from tokenomics.data.workload import Link
from tokenomics.serving.split_pools import AttentionFFNSplit, FFNPool, attention_ffn_split

# ---- attention / FFN split ------------------------------------------------------------------


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


def test_split_errors(gpu70):
    with pytest.raises(tk.TokenomicsError, match="microbatches must be >= 1"):
        attention_ffn_split(gpu70, "h100-sxm", 8, 1, 1024, 400e9, microbatches=0)
    with pytest.raises(tk.TokenomicsError, match="link_bytes_per_s must be > 0"):
        attention_ffn_split(gpu70, "h100-sxm", 8, 1, 1024, 0)
# ---- the FFN pool and the link as objects; release 0.1's loose arguments still work ---------


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
