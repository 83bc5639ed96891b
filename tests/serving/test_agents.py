"""One agent step on a cached prefix (S61)."""

from __future__ import annotations

import pytest

import tokenomics as tk
from tokenomics.physics.memory import kv_per_sequence_bytes
from tokenomics.serving.agents import agent_step

H100_USD_PER_HOUR = 3.78        # latest H100 SXM rental price in the catalog (Lambda, 2026-05)


def test_S61_agent_step_prefix_reads_are_about_60_percent():
    # Llama 3.1 70B in FP8 (W8A8) with a BF16 KV cache on 8 x H100 SXM, four agents stepping
    # together, each on the source's step: 119,000 cached tokens, 875 new, 214 out. A decode
    # step reads 68.4 GB of FP8 block weights and the 2.1 GB BF16 LM head, / 8 = 8.8 GB per
    # device, once for the batch (the embedding is only gathered), and
    # 4 x 119,000 x 327,680 B / 8 = 19.5 GB of prefix KV, so the prefix dominates.
    d = tk.Deployment("llama-3.1-70b", "h100-sxm", tp=8, weight_dtype="fp8",
                      compute_dtype="fp8")
    s = agent_step(d, 119_000, 875, 214, batch=4)
    per_step = 4 * 119_000 * 327_680 / 8 / 3.35e12                        # 5.8 ms
    assert s.prefix_kv_read_s == pytest.approx(per_step * 214)            # midfill + 213 steps
    assert 0.50 <= s.prefix_kv_share <= 0.70                              # 0.63; source ~0.6
    assert s.time_s == pytest.approx(s.midfill_s + s.decode_s)
    # Decode-dominated: the midfill's attention, 4 x 875 x 119,000 pairs x 2 x 64 heads x 256
    # x 80 layers = 1.09e15 FLOP, runs at BF16's 989 TFLOP/s per device (the cache is BF16,
    # so attention cannot run at FP8): 0.14 s on 8 devices, against 213 decode steps of
    # ~8.7 ms = 1.9 s.
    attn = 4 * 875 * 119_000 * 2 * 64 * 256 * 80 / (8 * 989.4e12)
    assert attn < s.midfill_s < 2 * attn
    assert s.decode_s > 5 * s.midfill_s
    assert s.usd == pytest.approx(s.time_s * 8 * H100_USD_PER_HOUR / 3600 / 4)
    # The prefix bytes are the attention operator's KV reads (the rest is the new tokens' KV).
    ops = tk.operator_table(d, "decode", batch=4, context_tokens=120_000).set_index("operator")
    kv_read = 4 * kv_per_sequence_bytes(d, 120_000)
    assert ops.loc["attn_core", "kv_bytes"] == pytest.approx(kv_read, rel=1e-4)
    # One agent alone: the weights dominate and the prefix share drops to a third.
    assert agent_step(d, batch=1).prefix_kv_share < 0.4


def test_agent_step_errors():
    d = tk.Deployment("llama-3.1-8b", "h100-sxm")
    with pytest.raises(tk.TokenomicsError, match="new_tokens must be a whole number >= 1"):
        agent_step(d, 1000, 0, 10)
    with pytest.raises(tk.TokenomicsError, match="usd_per_device_hour must be >= 0"):
        agent_step(d, usd_per_device_hour=-1)
    s = agent_step(d, 1000, 10, 1)                    # one output token: the midfill alone
    assert s.decode_s == 0.0 and s.time_s == s.midfill_s
