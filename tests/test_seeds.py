"""Every **derive** id S01-S17 of ../shared/docs/seed-digest.md, from the library's own functions.

Each expected value is the seed's figure (or the digest's reconciliation) with the arithmetic
written out, so it can be checked by hand.
"""

from __future__ import annotations

import math

import pytest

import tokenomics as tk

GB = 1e9
GiB = 2**30


@pytest.fixture(scope="module")
def l70():
    return tk.model("llama-3.1-70b")


@pytest.fixture(scope="module")
def h100():
    return tk.hardware("h100-sxm")


def test_S01_h100_bf16_ridge_point(h100):
    # 989.4 TFLOP/s dense BF16 / 3.35 TB/s = 295.3 FLOP/B ("~295"; ~300 with 1 PFLOP/s).
    r = tk.ridge_point(h100, "bf16")
    assert r == pytest.approx(989.4e12 / 3.35e12, rel=1e-12)
    assert round(r) == 295


def test_S02_fp8_ridge_points_h200_and_h100(h100):
    # H200: 1978.9 / 4.8 = 412; H100: 1978.9 / 3.35 = 591.
    assert tk.ridge_point(tk.hardware("h200"), "fp8") == pytest.approx(412.3, abs=0.5)
    assert tk.ridge_point(h100, "fp8") == pytest.approx(590.7, abs=0.5)


def test_S03_batch1_decode_intensity_is_about_one():
    # One multiply-add (2 FLOP) per 2-byte weight: 1 FLOP/B for a weight GEMM at batch 1.
    assert tk.gemm_intensity(1, 8192, 8192, "bf16") == pytest.approx(1.0, rel=1e-3)
    # The library's own decode operator table for a 16-bit model agrees, operator by operator.
    d = tk.Deployment("llama-3.1-8b", "h100-sxm")
    t = tk.operator_table(d, "decode", batch=1, context_tokens=1024).set_index("operator")
    for op in ("attn_qkv", "attn_out", "ffn_dense", "lm_head"):
        assert t.loc[op, "intensity_flop_per_byte"] == pytest.approx(1.0, rel=2e-3)


def test_S04_batching_scales_gemm_intensity_not_attention():
    # Weight GEMMs: x B (2 B n k / (2 n k + activations)).
    for b in (8, 32):
        assert tk.gemm_intensity(b, 8192, 8192, "bf16") == pytest.approx(b, rel=0.01)
    # Attention over a sequence's own KV: ~1 for MHA whatever the batch.
    d = tk.Deployment("llama-2-13b", "h100-sxm")
    i1 = tk.operator_table(d, "decode", batch=1, context_tokens=4000).set_index(
        "operator").loc["attn_core", "intensity_flop_per_byte"]
    i32 = tk.operator_table(d, "decode", batch=32, context_tokens=4000).set_index(
        "operator").loc["attn_core", "intensity_flop_per_byte"]
    assert i1 == pytest.approx(1.0, rel=0.01) and i32 == pytest.approx(i1, rel=1e-6)
    # GQA with 8 query heads per KV head: ~8 (Llama 3.1 70B: 64 q / 8 kv).
    assert tk.attention_decode_intensity(tk.model("llama-3.1-70b"), "bf16") == 8.0
    # MQA with 16 query heads: ~16.
    mqa = tk.model_from_hf_config({
        "model_type": "llama", "hidden_size": 2048, "intermediate_size": 8192,
        "num_hidden_layers": 4, "num_attention_heads": 16, "num_key_value_heads": 1,
        "vocab_size": 32000, "max_position_embeddings": 4096})
    assert mqa.attention.kind == "MQA"
    assert tk.attention_decode_intensity(mqa, "bf16") == 16.0


def test_S05_4x4_weights_times_4_tokens_reuse_4():
    # 4x4 weight matrix x 4 token vectors: 64 MACs over 16 weight elements = 4 per element.
    macs = tk.gemm_flops(4, 4, 4) / 2
    assert macs / (4 * 4) == 4


def test_S06_h200_same_compute_lower_ridge(h100):
    h200 = tk.hardware("h200")
    assert h200.peak("bf16") == h100.peak("bf16")
    # NVIDIA's 141 GB read as GiB (physical); the driver shows 143,771 MiB of it.
    assert h200.mem_capacity_bytes == 141 * GiB
    assert h200.mem_visible_bytes == 143_771 * 2**20
    assert h200.mem_bw_bytes_per_s == 4.8e12
    assert tk.ridge_point(h200, "bf16") == pytest.approx(989.4 / 4.8, rel=1e-9)  # ~206
    assert round(tk.ridge_point(h200, "bf16")) == 206


def test_S10_llama31_70b_kv_bytes_per_token(l70):
    assert tk.kv_bytes_per_token(l70, "bf16") == 2 * 80 * 8 * 128 * 2 == 327_680


def test_S11_llama31_70b_128k_context_is_40_gib(l70):
    b = tk.kv_cache_bytes(l70, 131_072)
    assert b == 327_680 * 131_072
    assert b / 1e9 == pytest.approx(42.9, abs=0.05)
    assert b / GiB == 40.0
    assert b / (80 * GB) == pytest.approx(0.54, abs=0.01)  # about half an 80 GB H100


def test_S12_llama31_70b_bf16_weights_about_141_gb(l70):
    assert tk.weight_bytes(l70, "bf16") / GB == pytest.approx(141, abs=0.5)


def test_S13_kv_outgrows_weights_at_431k_tokens(l70):
    w = tk.weight_bytes(l70, "bf16")
    crossover = w / tk.kv_bytes_per_token(l70)
    assert crossover == pytest.approx(141e9 / 327_680, rel=0.005)  # ~430,000
    assert tk.kv_cache_bytes(l70, 430_000, allow_beyond_max_context=True) < w
    assert tk.kv_cache_bytes(l70, 431_000, allow_beyond_max_context=True) > w


def test_S14_128k_context_batch_512_is_22_tb(l70):
    assert tk.kv_cache_bytes(l70, 131_072, batch=512) == pytest.approx(2.2e13, rel=0.005)


def test_S15_llama31_405b_32_users_devices(h100):
    h100 = h100.with_(mem_capacity_bytes=80 * GB)   # the source's convention: 80 GB = 80e9 B
    m405 = tk.model("llama-3.1-405b")
    # Source's 27: 405B weights (~810 GB) + 32 x 42.9 GB of the *70B* model's KV, / 80 GB.
    w405 = tk.weight_bytes(m405, "bf16")
    assert w405 / GB == pytest.approx(811.7, abs=0.1)
    kv70 = tk.kv_cache_bytes(tk.model("llama-3.1-70b"), 131_072, batch=32)
    source = (w405 + kv70) / h100.mem_capacity_bytes
    assert source == pytest.approx(27.3, abs=0.05)
    assert int(source) == 27                       # the source's "~27"
    assert -(-int(source + 1) // 8) * 8 == 32      # "~32 in multiples of 8"
    # Correct: 405B's own KV is 2*126*8*128*2 = 516,096 B/token.
    assert tk.kv_bytes_per_token(m405) == 516_096
    need = tk.devices_needed(m405, h100, 32, 131_072, usable_memory_fraction=1.0)
    assert need == pytest.approx((811.7 + 2164.6) / 80, abs=0.01)   # 37.2
    assert tk.min_devices(m405, h100, 32, 131_072, usable_memory_fraction=1.0) == 38
    assert tk.min_devices(m405, h100, 32, 131_072, usable_memory_fraction=1.0,
                          multiple_of=8) == 40


def test_S16_weight_format_decides_devices_and_kv_room(l70, h100):
    h100 = h100.with_(mem_capacity_bytes=80 * GB)   # the source's convention: 80 GB = 80e9 B
    # FP16: ~140 GB, two 80 GB H100s just to load it; FP8: ~70 GB, one H100. The source counts
    # every weight at the format, the embedding table and LM head included.
    assert tk.weight_bytes(l70, "fp16") / GB == pytest.approx(140, rel=0.01)
    assert tk.min_devices(l70, h100, 1, 0, weight_dtype="fp16", usable_memory_fraction=1.0) == 2
    assert tk.weight_bytes(l70, "fp8", embedding_dtype="fp8") / GB == pytest.approx(70, rel=0.01)
    # As FP8 checkpoints ship (Neural Magic's Llama 3.1 FP8: only the linear layers of the
    # blocks are converted) the two 128,256 x 8,192 tables stay BF16: +2 x 1.0507e9 B.
    assert tk.weight_bytes(l70, "fp8") == pytest.approx(
        tk.weight_bytes(l70, "fp8", embedding_dtype="fp8") + 2 * 128_256 * 8_192)
    assert tk.min_devices(l70, h100, 1, 0, weight_dtype="fp8", usable_memory_fraction=1.0) == 1
    # Every byte saved on weights becomes KV room: at 8K context, 80 - 70.55 = 9.45 GB holds
    # floor(9.45e9 / (8192 * 327,680)) = 3 sequences; with BF16 tables 80 - 72.66 = 7.34 GB
    # holds 2.
    d = tk.Deployment(l70, h100, weight_dtype="fp8", embedding_dtype="fp8",
                      usable_memory_fraction=1.0, workspace_bytes=0)
    assert tk.max_batch(d, 8192) == int((80e9 - 70.5537e9) // (8192 * 327_680)) == 3
    assert tk.max_batch(d.with_(embedding_dtype="bf16"), 8192) == \
        int((80e9 - 72.6550e9) // (8192 * 327_680)) == 2


def test_S16_70b_fp8_fits_one_h100_at_the_default_fraction(l70, h100):
    # With the driver's 81,559 MiB = 85,520,809,984 B visible, 90% is 76,968,728,985.6 B: the
    # FP8 checkpoint (BF16 tables, 72.655e9 B) fits one H100 with ~4.3 GB left for KV. Read as
    # 80e9 B, 90% was 72e9 B and it needed two.
    w = tk.weight_bytes(l70, "fp8")
    assert w / GB == pytest.approx(72.655, abs=0.001)
    assert 0.9 * 81_559 * 2**20 - w == pytest.approx(4.31e9, abs=0.01e9)
    assert tk.min_devices(l70, h100, 1, 0, weight_dtype="fp8") == 1
    assert tk.min_devices(l70, h100.with_(mem_capacity_bytes=80 * GB), 1, 0,
                          weight_dtype="fp8") == 2


def test_S17_nvfp4_and_mxfp4_bits_and_the_18x_cut(l70):
    assert tk.dtype("nvfp4").bits == 4 + 8 / 16 == 4.5
    assert tk.dtype("mxfp4").bits == 4 + 8 / 32 == 4.25
    # Whole model at each format (the source's arithmetic), tables included.
    ratio = (tk.weight_bytes(l70, "fp8", embedding_dtype="fp8")
             / tk.weight_bytes(l70, "nvfp4", embedding_dtype="nvfp4"))
    assert ratio == pytest.approx(8 / 4.5, rel=1e-9)   # 1.78 ~ "1.8x"
    assert round(ratio, 1) == 1.8


def test_S26_groq_llama_70b_tokens_per_user():
    # S26: fast-silicon clouds serve "1,600-2,100+ tokens/s per user on Llama-70B class models".
    # Groq LPU: 230 MB SRAM per chip, 80 TB/s, FP16 188 TFLOP/s (catalog); 8 cards per node
    # on RealScale C2C (480 GB/s bidirectional), nodes linked by cabled C2C (assumed 14 GB/s).
    # Chips to hold the weights: BF16 141.1 GB / 230 MB = 613.5 -> 614; one 8-chip node per
    # pipeline stage and one of the 80 layers per stage: tp=8 x pp=80 = 640 chips (220.5 MB
    # each). Groq's compiler allocates SRAM statically, so all of it is usable (fraction 1.0).
    w = tk.Deployment("llama-3.1-70b", "groq-lpu", tp=8, pp=80, act_dtype="fp16",
                      usable_memory_fraction=1.0)
    assert math.ceil(141.107e9 / 230e6) == 614
    assert tk.weight_bytes_per_device(w) * 640 == pytest.approx(141.107e9, rel=1e-4)
    # One sequence at a time: each layer's all-reduce and each stage's send wait on the
    # compute before them (nothing else to overlap with), so the figure to set beside the
    # source runs the collectives after the kernels (collective_overlap 0); the bound hides
    # them (max, not sum) and lies above it.
    serial = tk.Efficiency(collective_overlap=0.0)
    r = tk.decode(w.with_(efficiency=serial), 1, 1024)
    assert tk.decode(w, 1, 1024).tokens_per_s_per_user > 2100
    # Memory: weights read per token (all but the 2.10 GB embedding table, a gather) plus the
    # KV (1,024 x 327,680 B = 0.336 GB) over 8 chips x 80 TB/s = (139.0 + 0.34) GB / 640 TB/s.
    assert r.memory_time_s == pytest.approx((141.107e9 - 2.101e9 + 0.3355e9) / 640e12, rel=0.01)
    # Communication: 160 all-reduces at NCCL's 0.6 us NVLink floor + 80 stage sends at its
    # 2.7 us network floor (Groq publishes no C2C latency) = 96 + 216 = 312 us.
    assert r.comm_time_s == pytest.approx(160 * 0.6e-6 + 80 * 2.7e-6, rel=0.03)
    bound = r.tokens_per_s_per_user
    # What the library says: the BF16 bound, ~1,870 tok/s, lies WITHIN 1,600-2,100+; latency
    # (0.31 ms of 0.53 ms) dominates, not SRAM bandwidth.
    assert 1600 <= bound <= 2100
    # FP8 weights halve the chips (72.7 GB / 230 MB = 316 -> tp=8 x pp=40 = 320) and lift the
    # bound ABOVE the range (~3,100), as a bound should be. The calibrated forecast does not
    # transfer to an LPU: it was fitted to GPU engines, whose fixed time per layer (kernel
    # launches and minimum kernel durations, ~0.1 ms a layer, 8 ms over 80 layers) is many
    # times the whole 0.3 ms Groq step, so it falls BELOW the range; a statically scheduled
    # chip needs its own overheads.
    f8 = tk.Deployment("llama-3.1-70b", "groq-lpu", tp=8, pp=40, weight_dtype="fp8",
                       act_dtype="fp16", usable_memory_fraction=1.0)
    assert math.ceil(tk.weight_bytes_per_device(f8) * 320 / 230e6) == 316
    b8 = tk.decode(f8.with_(efficiency=serial), 1, 1024).tokens_per_s_per_user
    cal = tk.decode(f8.with_(efficiency=tk.efficiency_presets()["calibrated"]), 1, 1024)
    assert b8 > 2100 and cal.tokens_per_s_per_user < 1600
    e = tk.efficiency_presets()["calibrated"]
    assert e.step_overhead_s + 80 * e.layer_overhead_s > 1e-3


# ---- context ids the digest states without a derivation (issue 28: every id named) -------
def test_S19_attention_holds_about_a_fifth_of_a_dense_models_layer_weights(l70):
    # S19: "in a 100B dense model attention holds ~20% of parameters and the FFN ~80%".
    # Llama 3.1 70B per layer, by hand: attention q and o 2 h^2 = 2 x 8192^2 = 134.2M, k and v
    # 2 h (8 x 128) = 16.8M -> 151.0M; SwiGLU FFN 3 h I = 3 x 8192 x 28672 = 704.6M;
    # attention share 151.0 / 855.6 = 17.6%, FFN 82.4%.
    b = tk.param_breakdown(l70)
    assert b["attention"] == 80 * (2 * 8192**2 + 2 * 8192 * 1024)
    assert b["dense_ffn"] == 80 * 3 * 8192 * 28672
    share = b["attention"] / (b["attention"] + b["dense_ffn"])
    assert share == pytest.approx(0.176, abs=0.001) and 0.15 < share < 0.25


@pytest.mark.parametrize("model, hw, tp", [("llama-3.1-8b", "h100-sxm", 1),
                                           ("llama-3.1-70b", "h200", 4)])
def test_S20_prefill_is_compute_bound_and_decode_bandwidth_bound(model, hw, tp):
    # S20: "prefill is compute-bound and sets TTFT; decode is bandwidth-bound". A 2,048-token
    # prompt does 2,048 tokens of work per weight read (far right of the ridge, ~591 FLOP/B
    # on H100 at FP8); a batch-8 decode step ~8 (far left of it).
    d = tk.Deployment(model, hw, tp=tp, weight_dtype="fp8", compute_dtype="fp8")
    assert tk.prefill(d, 2048).bound == "compute"
    assert tk.decode(d, 8, 2048).bound == "memory"


def test_S20_holds_for_a_sparse_moe_only_with_enough_prompt_tokens_per_expert():
    # The claim assumes every weight is read for the whole prompt. DeepSeek-V3 routes each
    # token to 8 of 256 experts: one 2,048-token prompt gives an expert 2,048 x 8 / 256 = 64
    # tokens, ~64 FLOP per weight byte at FP8, under B200's FP8 ridge (4.5e15 / 8e12 = 562):
    # that prefill reads experts, it is memory-bound. Eight prompts (512 per expert) are
    # compute-bound again.
    d = tk.Deployment("deepseek-v3", "b200", tp=8, weight_dtype="fp8", compute_dtype="fp8")
    assert tk.prefill(d, 2048).bound == "memory"
    assert tk.prefill(d, 2048, 8).bound == "compute"
    assert tk.decode(d, 8, 2048).bound == "memory"


def test_S42_scale_up_against_scale_out_per_direction():
    # S42: "NVSwitch: 14.4 TB/s; scale-out 400-800 Gb/s per NIC, one NIC per GPU; InfiniBand
    # ~1-2 us; scale-up vs scale-out gap ~20-40x". HGX B200 NVLink: 8 x 1.8 TB/s = 14.4 TB/s
    # (both directions). Per direction, as the catalog stores links: B200 900 GB/s over a
    # 400 Gb/s = 50 GB/s NIC is 18x (H100: 450 / 50 = 9x); the digest's 20-40x reads NVLink's
    # two-direction figure against a one-direction NIC: 1,800 / 50 = 36x.
    from tokenomics.data.systems import system

    assert system("hgx-b200").totals["scale_up_bandwidth"] == 14.4e12 / 2   # per direction
    b200, h100 = tk.hardware("b200"), tk.hardware("h100-sxm")
    assert h100.scale_out_bw_bytes_per_s == 400e9 / 8
    assert b200.scale_up_bw_bytes_per_s / 50e9 == 18
    assert h100.scale_up_bw_bytes_per_s / h100.scale_out_bw_bytes_per_s == 9
    assert 20 <= 2 * b200.scale_up_bw_bytes_per_s / 50e9 <= 40
    assert 1e-6 <= h100.scale_out_latency_s <= 2e-6                         # InfiniBand
