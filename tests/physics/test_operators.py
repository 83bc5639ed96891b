"""Per-operator FLOPs and bytes of one step, worked from the model configs."""

from __future__ import annotations

import numpy as np
import pytest

import tokenomics as tk
from tokenomics.physics.operators import (
    OPERATORS,
    OpCost,
    expected_active_experts,
    step_costs,
)
from tokenomics.physics.roofline import attention_decode_intensity

L8 = tk.Deployment("llama-3.1-8b", "h100-sxm")


def _ops(dep, batch, new, cached, logits):
    return {o.name: o for o in step_costs(dep, batch, new, cached, logits)}


def test_operators_come_in_order_and_a_dense_model_has_no_moe_cost():
    ops = step_costs(L8, 1.0, 1.0, 1024.0, 1.0)
    assert [o.name for o in ops] == list(OPERATORS)
    for name in ("moe_router", "moe_shared", "moe_experts"):
        o = next(x for x in ops if x.name == name)
        assert float(o.flops) == float(o.bytes) == 0.0


def test_llama_8b_decode_batch_1_reads_every_weight_once():
    # Llama 3.1 8B: 8,030,261,248 parameters (Meta's model card: 8.03B), BF16. A decode step
    # at batch 1 reads every weight once, except that the embedding table (128,256 x 4,096)
    # is gathered, one row, and the norms (65 x 4,096) are not counted.
    assert tk.param_count(tk.model("llama-3.1-8b")) == 8_030_261_248
    ops = _ops(L8, 1.0, 1.0, 1024.0, 1.0)
    weights = sum(float(o.weight_bytes) for o in ops.values())
    assert weights == 2 * (8_030_261_248 - 128_256 * 4096 + 4096 - 65 * 4096)
    assert float(ops["lm_head"].weight_bytes) == 2 * 128_256 * 4096       # read whole
    assert float(ops["embedding"].weight_bytes) == 2 * 4096               # one row


@pytest.mark.parametrize("c", [0, 1023, 8191])
def test_llama_8b_decode_attention_core_by_hand(c):
    # The new token at position c + 1 attends to c + 1 keys (itself included) in each of 32
    # layers: 2 x 32 heads x (128 + 128) FLOPs per key. It reads the c cached tokens' KV and
    # writes its own: 32 layers x 8 heads x (128 + 128) x 2 B = 131,072 B per token.
    ops = _ops(L8, 1.0, 1.0, float(c), 1.0)
    assert float(ops["attn_core"].flops) == 32 * 2 * 32 * (128 + 128) * (c + 1)
    assert float(ops["attn_core"].kv_bytes) == 131_072 * c + 131_072
    assert float(ops["attn_core"].weight_bytes) == 0.0


def test_prefill_attention_computes_the_causal_half_square():
    # P = 4096 prompt tokens, no cache: pairs P (P + 1) / 2 per layer.
    ops = _ops(L8, 1.0, 4096.0, 0.0, 1.0)
    assert float(ops["attn_core"].flops) == 32 * 2 * 32 * 256 * 4096 * 4097 / 2
    # Projections and FFN do 2 FLOPs per weight per token.
    b = tk.param_breakdown(tk.model("llama-3.1-8b"))
    assert float(ops["ffn_dense"].flops) == 2 * 4096 * b["dense_ffn"]
    assert float(ops["attn_qkv"].flops + ops["attn_out"].flops) == 2 * 4096 * b["attention"]
    # Prefill computes logits for one token per sequence: 2 h V.
    assert float(ops["lm_head"].flops) == 2 * 4096 * 128_256


def test_batch_shares_weights_but_not_kv():
    one = _ops(L8, 1.0, 1.0, 2048.0, 1.0)
    many = _ops(L8, 16.0, 1.0, 2048.0, 1.0)
    for name in ("attn_qkv", "attn_out", "ffn_dense", "lm_head"):
        assert float(many[name].weight_bytes) == float(one[name].weight_bytes)
        assert float(many[name].flops) == 16 * float(one[name].flops)
    assert float(many["attn_core"].kv_bytes) == 16 * float(one["attn_core"].kv_bytes)


def test_deepseek_v3_routed_experts_read_the_distinct_experts():
    # 58 MoE layers of 256 experts (top 8), each 3 x 7,168 x 2,048 weights, FP8 (1 B).
    d = tk.Deployment("deepseek-v3", "b200", tp=8, weight_dtype="fp8", compute_dtype="fp8")
    per_expert = 3 * 7168 * 2048
    for batch in (1.0, 64.0):
        ops = _ops(d, batch, 1.0, 4096.0, 1.0)
        distinct = 256 * (1 - (1 - 8 / 256) ** batch)
        assert float(ops["moe_experts"].weight_bytes) == pytest.approx(
            58 * distinct * per_expert, rel=1e-12)
        # FLOPs follow top_k per token, whatever the distinct count.
        assert float(ops["moe_experts"].flops) == pytest.approx(
            2 * batch * 8 * per_expert * 58, rel=1e-12)


def test_attention_data_parallel_copies_are_each_read():
    base = tk.Deployment("deepseek-v3", "b200", tp=8, weight_dtype="fp8", compute_dtype="fp8")
    dp = base.with_(dp_attention=8)
    a, b = _ops(base, 64.0, 1.0, 4096.0, 1.0), _ops(dp, 64.0, 1.0, 4096.0, 1.0)
    for name in ("attn_qkv", "attn_out", "lm_head"):
        assert float(b[name].weight_bytes) == 8 * float(a[name].weight_bytes)
    assert float(b["ffn_dense"].weight_bytes) == float(a["ffn_dense"].weight_bytes)


def test_arrays_broadcast_over_batch_tokens_and_cache():
    ops = step_costs(L8, np.array([[1.0], [8.0]]), 1.0, np.array([0.0, 512.0, 4096.0]), 1.0)
    for o in ops:   # each term broadcasts to (batch, cache); those that depend on the cache are
        for v in (o.flops, o.weight_bytes, o.kv_bytes, o.act_bytes):   # that shape already
            assert np.broadcast_shapes(np.shape(v), (2, 3)) == (2, 3)
    core = next(o for o in ops if o.name == "attn_core")
    assert np.shape(core.flops) == np.shape(core.kv_bytes) == (2, 3)
    o = OpCost("x", 1.0, 2.0, 3.0, 4.0)
    assert o.bytes == 9.0


def test_expected_active_experts_by_hand_and_checked():
    assert expected_active_experts(256, 8, 1) == pytest.approx(8.0)
    assert expected_active_experts(256, 8, 64) == pytest.approx(256 * (1 - (248 / 256) ** 64))
    with pytest.raises(tk.TokenomicsError, match="top_k must be in"):
        expected_active_experts(8, 9, 1)
    with pytest.raises(tk.TokenomicsError, match="tokens"):
        expected_active_experts(256, 8, 0)


# ---- the intensity formula against the operator costs ---------------------------------------
@pytest.mark.parametrize("model_id, hw, kv_dtype, want", [
    ("llama-3.1-70b", "h100-sxm", "bf16", 2 * 64 / (8 * 2)),                  # 8.0
    ("llama-3.1-70b", "h100-sxm", "fp8", 2 * 64 / (8 * 1)),                   # 16.0
    ("deepseek-v3", "h200", "bf16", 2 * 128 * (1024 + 64) / (576 * 2)),       # 241.8
    ("deepseek-v3", "h200", "fp8", 2 * 128 * (1024 + 64) / (576 * 1)),        # 483.6
])
def test_decode_intensity_is_the_marginal_intensity_of_attention_core(model_id, hw, kv_dtype,
                                                                      want):
    # One more cached token costs attention one more pair (FLOPs) and one more token's KV read
    # (bytes); their ratio is what attention_decode_intensity states. Batch 1, tp 1, decode.
    d = tk.Deployment(model_id, hw, kv_dtype=kv_dtype)
    c = 4096.0
    lo, hi = _ops(d, 1.0, 1.0, c, 1.0)["attn_core"], _ops(d, 1.0, 1.0, c + 1, 1.0)["attn_core"]
    marginal = float(hi.flops - lo.flops) / float(hi.kv_bytes - lo.kv_bytes)
    assert marginal == pytest.approx(want, rel=1e-12)
    assert attention_decode_intensity(d.model, kv_dtype) == pytest.approx(marginal, rel=1e-12)


def test_glm45_air_decode_flops_per_token_by_hand():
    # GLM-4.5-Air (tests/data/test_hf_config.py GLM45_AIR): one decode token at 1,024 cached
    # tokens. Matmul FLOPs are 2 x the active parameters that multiply (no embedding table,
    # no norm scales, no router bias); attention adds 1,025 pairs x 2 n_q (d_k + d_v) per layer.
    from tests.data.test_hf_config import GLM45_AIR
    m = tk.model_from_hf_config(GLM45_AIR)
    dep = tk.Deployment(m, "h100-sxm")
    ops = step_costs(dep, 1, 1, 1024, 1)
    attn = 4096 * (96 * 128 + 2048) + 96 * 128 * 4096 + (96 + 16) * 128
    expert = 3 * 4096 * 1408
    matmul = (46 * attn + 3 * 4096 * 10944 + 45 * (128 * 4096 + 9 * expert)
              + 151552 * 4096)                                   # LM head
    core = 1025 * 2 * 96 * (128 + 128) * 46
    assert sum(float(o.flops) for o in ops) == pytest.approx(2 * matmul + core, rel=1e-12)


def test_qwen3_next_decode_core_adds_linear_recurrence_and_state_traffic():
    # One sequence, one new token at c = 1,000. Full layers (12): pairs 1,001, each
    # 2 x 16 x (256 + 256) = 16,384 FLOPs. Linear layers (36): 7 x 32 x 128 x 128 +
    # 2 x 4 x 8,192 = 3,735,552 FLOPs each. State bytes: read + write of 39,518,208 B.
    import tokenomics as tk
    from tokenomics.physics.operators import step_costs

    d = tk.Deployment("qwen3-next-80b-a3b", "h200")
    core = [o for o in step_costs(d, 1, 1, 1000, 1) if o.name == "attn_core"][0]
    assert float(core.flops) == 12 * 1001 * 16_384 + 36 * 3_735_552
    kv = 12 * (1000 * 2048 + 2048)            # reads 1,000 tokens, writes 1, per full layer
    assert float(core.kv_bytes) == kv + 2 * 39_518_208
