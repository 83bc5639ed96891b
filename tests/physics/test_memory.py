"""Memory fit: every term visible and checked by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tokenomics as tk


def test_memory_fit_terms_by_hand():
    m = tk.model("llama-3.1-70b")
    d = tk.Deployment(m, "h200", tp=2, weight_dtype="fp8", kv_dtype="fp8",
                      runtime_reserve_bytes=3e9)
    f = tk.memory_fit(d, 16, 8192)
    # FP8 linear weights, BF16 embedding table and LM head (2 x 128,256 x 8,192), over tp=2.
    table = 2 * 128_256 * 8_192
    assert f.weights_bytes == pytest.approx(((tk.param_count(m) - table) * 1 + table * 2) / 2)
    assert f.kv_bytes == pytest.approx(16 * 8192 * 2 * 80 * 8 * 128 * 1 / 2)
    # Workspace estimate: per token (4h + max(qkv, 2I)/tp) x 2 B, plus FP32 logits per sequence.
    per_tok = (4 * 8192 + 2 * 28672 / 2) * 2
    assert f.workspace_bytes == pytest.approx(16 * per_tok + 16 * 4 * 128_256 / 2)
    assert f.total_bytes == pytest.approx(f.weights_bytes + f.kv_bytes + f.workspace_bytes + 3e9)
    # 90% of what the driver reports: nvidia-smi 143,771 MiB on H200 (was 0.9 x 141e9 when the
    # catalog read NVIDIA's GB as decimal).
    assert f.usable_bytes == 0.9 * 143_771 * 2**20
    assert f.free_bytes == pytest.approx(f.usable_bytes - f.total_bytes)
    assert f.fits


def test_quantized_weights_keep_the_released_embedding_and_lm_head():
    # Weight quantization converts the linear layers of the blocks; the embedding table and LM
    # head stay at the release format unless asked (Neural Magic's Llama 3.1 FP8 checkpoints).
    d = tk.Deployment("llama-3.1-8b", "h100-sxm", weight_dtype="fp8")
    assert d.embedding_dtype == "bf16"
    table = 128_256 * 4_096                               # one table, parameters
    ops = {o.name: o for o in tk.operators.step_costs(d, 1.0, 1.0, 1024.0, 1.0)}
    assert float(ops["lm_head"].weight_bytes) == table * 2            # streamed each step
    assert float(ops["embedding"].weight_bytes) == 4_096 * 2          # one row gathered
    full = d.with_(embedding_dtype="fp8")
    assert tk.weight_bytes_per_device(d) - tk.weight_bytes_per_device(full) == \
        pytest.approx(2 * table * (2 - 1))
    # Everything follows a wider release: a BF16 model served in BF16 is unchanged.
    assert tk.Deployment("llama-3.1-8b", "h100-sxm").embedding_dtype == "bf16"
    with pytest.raises(tk.TokenomicsError, match="unknown numeric format"):
        tk.Deployment("llama-3.1-8b", "h100-sxm", embedding_dtype="fp9")


def test_prefill_workspace_counts_logits_once_per_sequence():
    # A 128K-token prompt on Llama 3.1 8B: activations per token, logits only for the last.
    d = tk.Deployment("llama-3.1-8b", "h200")
    f = tk.memory_fit(d, 1, 131_072, tokens_per_step=131_072)
    per_tok = (4 * 4096 + 2 * 14336) * 2
    assert f.workspace_bytes == pytest.approx(131_072 * per_tok + 4 * 128_256)
    assert f.fits


def test_explicit_workspace_overrides_the_estimate():
    d = tk.Deployment("llama-3.1-8b", "h100-sxm", workspace_bytes=5e9, usable_memory_fraction=1.0)
    f = tk.memory_fit(d, [1, 10], 4096)
    assert np.all(np.asarray(f.workspace_bytes) == 5e9)
    # max_batch: (81,559 MiB visible - weights - 5e9) / (4096 x 131,072 B); nvidia-smi reports
    # 81,559 MiB = 85,520,809,984 B on H100 SXM (was 80e9 when NVIDIA's GB was read as decimal).
    room = 81_559 * 2**20 - tk.weight_bytes(tk.model("llama-3.1-8b")) - 5e9
    assert tk.max_batch(d, 4096) == int(room // (4096 * 131_072))


def test_max_batch_arrays_and_windows():
    # Gemma 3 27B: 52 sliding layers hold at most 1024 tokens, so at long context the KV per
    # sequence grows only with the 10 global layers: max batch falls slowly.
    d = tk.Deployment("gemma-3-27b", "h200", usable_memory_fraction=1.0, workspace_bytes=0)
    mb = tk.max_batch(d, np.array([1024, 32_768, 131_072]))
    per_layer = 2 * 16 * 128 * 2
    room = 143_771 * 2**20 - tk.weight_bytes(tk.model("gemma-3-27b"))   # nvidia-smi total, H200
    expected = [room // (per_layer * (62 * 1024)),
                room // (per_layer * (52 * 1024 + 10 * 32_768)),
                room // (per_layer * (52 * 1024 + 10 * 131_072))]
    assert list(mb) == [int(x) for x in expected]


def test_memory_fit_frame():
    d = tk.Deployment("llama-3.1-8b", "h100-sxm")
    df = tk.memory_fit(d, [1, 2, 3], 1024).to_frame()
    assert len(df) == 3 and {"weights_bytes", "kv_bytes", "workspace_bytes", "fits"} <= set(df)


# ---- pooled device counts: a Deployment, or release 0.1's loose arguments ------------------
from tokenomics.data.workload import accepts_legacy_forms  # noqa: E402
from tokenomics.physics.memory import MemoryBudget, devices_needed, min_devices, weight_bytes  # noqa: E402
from tokenomics.physics.operators import step_costs  # noqa: E402

# The source's convention (S15): 80 GB = 80e9 B per H100, passed explicitly; the catalog's
# H100 has 80 GiB physical and 81,559 MiB visible (test_visible_memory_sizes_the_budget).
M405, H100 = tk.model("llama-3.1-405b"), tk.hardware("h100-sxm").with_(mem_capacity_bytes=80e9)
# S15 by hand: 405,853,388,800 BF16 weights (2 B) plus 32 sequences x 131,072 tokens x
# 126 layers x 8 KV heads x 256 x 2 B, over 80 GB per H100.
S15_NEED = (2 * 405_853_388_800 + 32 * 131_072 * 126 * 8 * 256 * 2) / 80e9


def test_release_0_1_forms_keep_their_numbers():
    assert tk.param_count(M405) == 405_853_388_800
    assert devices_needed(M405, H100, 32, 131072, usable_memory_fraction=1.0) == \
        pytest.approx(S15_NEED, rel=1e-12)
    assert round(S15_NEED, 1) == 37.2
    assert min_devices(M405, H100, 32, 131072, usable_memory_fraction=1.0, multiple_of=8) == 40
    # Every argument in its 0.1 position gives the same as by name.
    pos = min_devices(M405, H100, 32, 131072, "bf16", "bf16", 1.0, 0.0, 0.0, 8, False)
    assert pos == 40
    assert devices_needed(M405, H100, 32, 131072, None, "bf16", 1.0, 0.0, 0.0, False) == \
        devices_needed(model=M405, hardware=H100, batch=32, context_tokens=131072,
                       usable_memory_fraction=1.0)
    # And the budget as one object.
    b = MemoryBudget(M405, H100, usable_memory_fraction=1.0)
    assert devices_needed(b, 32, 131072) == devices_needed(M405, H100, 32, 131072,
                                                           usable_memory_fraction=1.0)
    assert min_devices(b, 32, 131072, multiple_of=8) == 40


def test_a_deployment_gives_its_formats_and_budget():
    d = tk.Deployment(M405, H100, usable_memory_fraction=1.0, workspace_bytes=0)
    assert devices_needed(d, 32, 131072) == pytest.approx(S15_NEED, rel=1e-12)
    # 37.2 -> 38 devices, but a Deployment's replica wider than the 8-GPU NVLink domain spans
    # whole domains (its own layout rule), so its count is 40 with or without multiple_of=8.
    assert min_devices(d, 32, 131072) == 40 and min_devices(d, 32, 131072, multiple_of=8) == 40
    assert min_devices(M405, H100, 32, 131072, usable_memory_fraction=1.0) == 38   # 0.1 form
    # Its 90% default and FP8 KV: (W + K / 2) / 72 GB.
    f = tk.Deployment(M405, H100, kv_dtype="fp8", workspace_bytes=0)
    assert devices_needed(f, 32, 131072) == pytest.approx(
        (2 * 405_853_388_800 + 32 * 131_072 * 126 * 8 * 256) / 72e9, rel=1e-12)


def test_a_deployment_keeps_gpt_oss_experts_at_mxfp4():
    # 0.1's weight_dtype="bf16" puts every weight at BF16, routed experts included; the
    # Deployment keeps the released MXFP4 experts (4 bits + an 8-bit scale per 32: 4.25 bits).
    m = tk.model("gpt-oss-120b")
    routed = tk.param_breakdown(m)["routed_experts"]
    d = tk.Deployment(m, H100, workspace_bytes=0)
    loose = devices_needed(m, H100, 8, 8192, "bf16")
    assert loose - devices_needed(d, 8, 8192) == pytest.approx(
        routed * (2 - 4.25 / 8) / (0.9 * 80e9), rel=1e-9)
    # Without weight_dtype the 0.1 form keeps the model's formats too.
    assert devices_needed(m, H100, 8, 8192) == pytest.approx(devices_needed(d, 8, 8192))


def test_a_deployment_without_workspace_uses_its_estimate():
    # Llama 3.1 8B at tp=1: (4h + max(qkv, 2I)) x 2 B per token = (4 x 4096 + 2 x 14336) x 2
    # = 90,112 B, plus FP32 logits 4 x 128,256 B per sequence; at batch 8 that is 4,825,088 B.
    d = tk.Deployment("llama-3.1-8b", H100)
    ws = 8 * ((4 * 4096 + 2 * 14336) * 2 + 4 * 128_256)
    assert MemoryBudget.of(d, 8).workspace_bytes == ws == 4_825_088
    w = weight_bytes(d.model)
    kv = 8 * 4096 * 32 * 8 * 256 * 2
    assert devices_needed(d, 8, 4096) == pytest.approx((w + kv) / (0.9 * 80e9 - ws), rel=1e-12)


def test_budget_errors():
    with pytest.raises(tk.TokenomicsError,
                       match=r"usable_memory_fraction must be a number in \(0, 1\]"):
        devices_needed(M405, H100, 1, 1024, usable_memory_fraction=0)
    with pytest.raises(tk.DoesNotFitError, match="leave no usable memory"):
        devices_needed(M405, H100, 1, 1024, runtime_reserve_bytes=80e9)
    with pytest.raises(tk.TokenomicsError, match="needs a Model and a Hardware"):
        MemoryBudget(1, H100)
    with pytest.raises(tk.TokenomicsError, match="do not bind"):
        devices_needed(M405, H100, 1, 1024, hardware=H100)
    assert MemoryBudget("llama-3.1-405b", "h100-sxm").model == M405     # catalog ids


class _Pair:
    """The toy's new value object: two numbers 0.1 took loose."""

    def __init__(self, a, b):
        self.ab = (a, b)


def _toy_adapter():
    # New form f(pair, x, *, flag); 0.1 form f(a, b, x, flag=False) with pair = _Pair(a, b).
    def build(a):
        return dict(pair=_Pair(a.pop("a"), a.pop("b")), **a)

    @accepts_legacy_forms(("a", "b", "x", "flag"), dict(flag=False), build, "pair", _Pair)
    def f(pair, x, *, flag=False):
        return pair.ab, x, flag

    return f


def test_call_form_adapter_routes_by_type_count_and_name():
    f = _toy_adapter()
    assert f(_Pair(1, 2), 3) == ((1, 2), 3, False)            # new form
    assert f(1, 2, 3) == ((1, 2), 3, False)                    # 0.1 by position (type)
    assert f(_Pair(1, 2), 3, flag=True) == ((1, 2), 3, True)
    assert f(1, 2, 3, True) == ((1, 2), 3, True)               # 0.1, more than 2 positionals
    assert f(a=1, b=2, x=3) == ((1, 2), 3, False)              # 0.1 by name
    with pytest.raises(tk.TokenomicsError, match="do not bind"):
        f(1, 2, 3, True, 5)
    with pytest.raises(tk.TokenomicsError, match="must come at or before"):
        accepts_legacy_forms(("obj", "x"), {}, dict, "obj", _Pair)(lambda obj, x: None)


def test_visible_memory_sizes_the_budget():
    # H100 SXM: 80 GiB physical (85,899,345,920 B); nvidia-smi reports 81,559 MiB
    # = 85,520,809,984 B, and that is what a deployment can allocate from.
    h = tk.hardware("h100-sxm")
    assert h.mem_capacity_bytes == 80 * 2**30 == 85_899_345_920
    assert h.mem_visible_bytes == h.mem_usable_bytes == 81_559 * 2**20 == 85_520_809_984
    b = MemoryBudget(M405, h, usable_memory_fraction=1.0)
    assert b.per_device_bytes == 85_520_809_984
    # S15's weights + 405B's own KV over the visible memory: 2,976,370,294,784 / 85,520,809,984
    assert devices_needed(b, 32, 131072) == pytest.approx(S15_NEED * 80e9 / 85_520_809_984,
                                                          rel=1e-12)
    assert round(S15_NEED * 80e9 / 85_520_809_984, 2) == 34.80


def test_405b_on_h200_for_32_users_at_128k():
    # Llama 3.1 405B, BF16 weights 2 x 405,853,388,800 = 811,706,777,600 B; KV 32 x 131,072 x
    # 126 layers x 8 heads x 256 x 2 B = 2,164,663,517,184 B; sum 2,976,370,294,784 B.
    # H200 usable: 0.9 x 143,771 MiB = 0.9 x 150,754,820,096 = 135,679,338,086.4 B per device.
    # 2,976,370,294,784 / 135,679,338,086.4 = 21.94 -> 22 devices (24 when 141 GB was read as
    # 141e9 B: 2,976,370,294,784 / 126.9e9 = 23.45); rounded up to a multiple of 8 both are 24.
    h200 = tk.hardware("h200")
    need = (811_706_777_600 + 2_164_663_517_184) / (0.9 * 143_771 * 2**20)
    assert round(need, 2) == 21.94
    assert devices_needed(M405, h200, 32, 131_072) == pytest.approx(need, rel=1e-12)
    assert min_devices(M405, h200, batch=32, context_tokens=131_072) == 22
    assert min_devices(M405, h200, batch=32, context_tokens=131_072, multiple_of=8) == 24
    old = h200.with_(mem_capacity_bytes=141e9)               # the decimal reading, for contrast
    assert min_devices(M405, old, batch=32, context_tokens=131_072) == 24


# ---- a Deployment's device count is for its own layout (issue 11, item 6) --------------------
def test_a_deployments_count_keeps_its_tp_and_counts_mla_replication():
    # DeepSeek-V3 FP8 on GB200 at tp=8, 32 sequences of 128K. Sharded by head, MLA keeps its
    # whole latent on every one of the 8 ranks (replication 8), so the KV term is 8x the pooled
    # one; by sequence (kv_shard="all") it is pooled. Counts are multiples of tp = 8.
    d = tk.Deployment("deepseek-v3", "gb200", tp=8, weight_dtype="fp8", kv_dtype="fp8")
    assert d.kv_replication == 8.0
    b = MemoryBudget.of(d, 32)
    kv = tk.kv_cache_bytes(d.model, 131072, 32, "fp8")
    heads = (b.weights_bytes + 8 * kv) / b.per_device_bytes         # devices, by head
    pooled = (b.weights_bytes + kv) / b.per_device_bytes            # devices, by sequence
    n_heads, n_all = min_devices(d, 32, 131072), min_devices(d.with_(kv_shard="all"), 32, 131072)
    assert n_heads == 8 * math.ceil(heads / 8) and n_heads % 8 == 0
    assert n_all == 8 * math.ceil(pooled / 8)
    assert n_heads > n_all
    # The 0.1 form (a model and a device) pools the KV and rounds to whole devices only.
    assert min_devices(d.model, d.hardware, 32, 131072, weight_dtype="fp8",
                       kv_dtype="fp8") <= n_all


def test_a_deployments_count_is_one_its_own_memory_fit_accepts():
    for d in (tk.Deployment("deepseek-v3", "gb200", tp=8, weight_dtype="fp8", kv_dtype="fp8"),
              tk.Deployment("llama-3.1-70b", "h100-sxm", tp=4),
              tk.Deployment("llama-3.1-405b", "h200", tp=8, weight_dtype="fp8")):
        for batch, ctx in ((1, 8192), (32, 131072)):
            n = min_devices(d, batch, ctx)
            fit = tk.memory_fit(d.with_(pp=n // d.tp), batch, ctx)
            assert bool(fit.fits), (d.model.id, batch, ctx, n)


def test_more_stages_than_layers_is_refused_with_the_reason():
    # 256 sequences of 128K of DeepSeek-V3 on 24 GB L4s at tp=8 by head: the replicated latent
    # alone needs 8 x 256 x 131,072 x 70,272 B = 18.9 TB, over 800 devices: more than 61
    # stages of 8.
    d = tk.Deployment("deepseek-v3", "l4", tp=8)
    with pytest.raises(tk.DoesNotFitError, match="kv_shard='all'"):
        min_devices(d, 256, 131072)


def test_memory_fit_frame_carries_its_inputs_as_whole_numbers():
    d = tk.Deployment("llama-3.1-8b", "h100-sxm")
    f = tk.memory_fit(d, [1, 8], 4096).to_frame()
    assert list(f.columns[:2]) == ["batch", "context_tokens"]
    assert f.batch.tolist() == [1, 8] and f.batch.dtype.kind == "i"
    # KV: 2 x 32 layers x 8 KV heads x 128 x 2 B = 131,072 B/token x 4,096 x 8 sequences
    assert f.kv_bytes.iloc[1] == 131_072 * 4096 * 8


def test_mlp_data_parallel_holds_the_dense_ffn_shared_experts_and_router_per_group():
    # DeepSeek-V3 in FP8 over 8 GPUs with attention DP 8, as TensorRT-LLM runs it: each rank
    # holds the dense FFN, shared experts and router whole. By hand from config.json
    # (hidden 7,168; 3 dense layers of intermediate 18,432; 58 MoE layers with one shared
    # expert of 2,048 and a 256-expert router with its correction bias), at 1 byte each:
    dense = 3 * 3 * 7168 * 18432            # 1,189,085,184
    shared = 58 * 3 * 7168 * 2048           # 2,554,331,136
    router = 58 * (256 * 7168 + 256)        #   106,445,312
    kw = dict(tp=8, ep=8, dp_attention=8, weight_dtype="fp8", compute_dtype="fp8")
    split = tk.Deployment("deepseek-v3", "h200", **kw)
    whole = split.with_(mlp_data_parallel=True)
    extra = tk.weight_bytes_per_device(whole) - tk.weight_bytes_per_device(split)
    assert extra == pytest.approx((dense + shared + router) * (8 - 1) / 8, rel=1e-12)
    assert whole.mlp_copies == 8 and split.mlp_copies == 1
    # each rank reads its own copy once a step: 8x the dense FFN's weight bytes
    d_split = {o.name: o for o in step_costs(split, 64, 1, 4096, 1)}
    d_whole = {o.name: o for o in step_costs(whole, 64, 1, 4096, 1)}
    assert float(d_whole["ffn_dense"].weight_bytes) == pytest.approx(8 * dense, rel=1e-12)
    assert float(d_split["ffn_dense"].weight_bytes) == pytest.approx(dense, rel=1e-12)
    assert float(d_whole["moe_experts"].weight_bytes) == float(d_split["moe_experts"].weight_bytes)
    assert float(d_whole["ffn_dense"].flops) == float(d_split["ffn_dense"].flops)


def test_mlp_data_parallel_drops_the_dense_layers_all_reduce_over_the_stage():
    # With one device per attention group the dense layers need no all-reduce at all; split
    # over the stage, each of DeepSeek-V3's 3 dense layers all-reduces over tp = 8.
    kw = dict(tp=8, ep=8, dp_attention=8, weight_dtype="fp8", compute_dtype="fp8")
    split = tk.Deployment("deepseek-v3", "h200", **kw)
    names = {c.name: c.calls for c in tk.step_comm(split, 64, 1, 1, "decode")}
    assert names["tp_ffn_allreduce"] == 3
    whole = {c.name for c in tk.step_comm(split.with_(mlp_data_parallel=True), 64, 1, 1,
                                          "decode")}
    assert "tp_ffn_allreduce" not in whole and "ep_dispatch" in whole
    with pytest.raises(tk.TokenomicsError, match="needs dp_attention > 1"):
        tk.Deployment("deepseek-v3", "h200", tp=8, ep=8, mlp_data_parallel=True)
    with pytest.raises(tk.TokenomicsError, match="mlp_data_parallel must be True or False"):
        split.with_(mlp_data_parallel="yes")
