"""Deployments (data/deployment.py): catalog ids resolve, invalid layouts are rejected with the
reason, formats default to the release, and the KV cache's replication over tensor parallelism.

Architecture figures are those of each model's config.json (Llama 3.1 70B: 64 query heads,
8 KV heads, 80 layers; Llama 3.1 8B: 32 layers, 32 query heads; Mixtral 8x7B: 8 routed
experts; DeepSeek-V3: MLA, 128 query heads); hardware figures are the bundled catalog's
(HGX H100: 8 GPUs per NVLink domain, 400 Gb/s NIC; A100 entry: no scale-out link listed).
"""

from __future__ import annotations

import numpy as np
import pytest

import tokenomics as tk
from tokenomics.data.deployment import Deployment
from tokenomics.data.specs import ROOFLINE


# ---- catalog ids ---------------------------------------------------------------------------
def test_string_ids_resolve_through_the_catalog():
    d = Deployment("llama-3.1-70b", "H100", tp=8)           # an alias, any case
    assert d.model is tk.model("llama-3.1-70b")
    assert d.hardware is tk.hardware("h100-sxm")
    # Specs given directly are used as they are.
    h = tk.hardware("h100-sxm").with_(mem_bw_bytes_per_s=5e12)
    assert Deployment(tk.model("llama-3.1-8b"), h).hardware is h
    # Defaults: one device, the roofline bound, vLLM's 0.9 memory fraction.
    one = Deployment("llama-3.1-8b", "h100-sxm")
    assert (one.tp, one.pp, one.ep, one.n_devices) == (1, 1, 1, 1)
    assert one.efficiency is ROOFLINE and one.usable_memory_fraction == 0.9


def test_unknown_dtype_and_model():
    with pytest.raises(tk.UnknownEntryError, match=r"unknown numeric format 'fp7'"):
        tk.Deployment("llama-3.1-8b", "h100-sxm", weight_dtype="fp7")
    with pytest.raises(tk.UnknownEntryError, match=r"unknown model 'gpt-5'"):
        tk.Deployment("gpt-5", "h100-sxm")


def test_compute_format_without_a_peak():
    with pytest.raises(tk.NotPublishedError, match=r"fp4 peak is not supported"):
        tk.Deployment("llama-3.1-8b", "h100-sxm", compute_dtype="nvfp4")


@pytest.mark.parametrize("kwargs, match", [
    (dict(tp=0), "tp must be a positive integer"),
    (dict(tp=2, ep=2), "ep=2 but llama-3.1-8b has no experts"),
    (dict(usable_memory_fraction=1.5), "usable_memory_fraction"),
    (dict(kv_shard="rows"), "kv_shard"),
])
def test_bad_deployment(kwargs, match):
    with pytest.raises(tk.TokenomicsError, match=match):
        tk.Deployment("llama-3.1-8b", "h100-sxm", **kwargs)


# ---- layouts -------------------------------------------------------------------------------
@pytest.mark.parametrize("model, kwargs, match", [
    # 64 query heads split over 3 devices: 64 / 3 is not whole.
    ("llama-3.1-70b", dict(tp=3), r"attention tensor parallelism 3 \(tp / dp_attention\) must "
                                  r"divide llama-3.1-70b's 64 query heads"),
    # ep must be 1 or tp.
    ("mixtral-8x7b", dict(tp=2, ep=4), r"ep must be 1 \(experts tensor-parallel\) or tp=2 "
                                       r"\(whole experts spread over the stage\), got ep=4"),
    # tp = ep = 16 divides 32 query heads and is a multiple of 8 KV heads, but not of the
    # 8 experts: 8 / 16 is not whole.
    ("mixtral-8x7b", dict(tp=16, ep=16), r"ep=16 must divide mixtral-8x7b's 8 routed experts"),
    # 33 pipeline stages for 32 layers.
    ("llama-3.1-8b", dict(pp=33), r"pp=33 exceeds the model's 32 layers"),
    ("llama-3.1-8b", dict(tp=4, dp_attention=3), r"dp_attention=3 must divide tp=4"),
    ("llama-3.1-8b", dict(tp=True), r"tp must be a positive integer, got True"),
    ("llama-3.1-8b", dict(pp=2.0), r"pp must be a positive integer, got 2.0"),
    ("llama-3.1-8b", dict(comm_overlap=1.5), r"comm_overlap must be in \[0, 1\], got 1.5"),
    ("llama-3.1-8b", dict(allreduce_algorithm="butterfly"),
     r"allreduce_algorithm must be one of ring, tree, one_shot, two_shot, auto"),
    ("llama-3.1-8b", dict(runtime_reserve_bytes=-1.0), r"runtime_reserve_bytes must be finite and >= 0"),
    ("llama-3.1-8b", dict(workspace_bytes=-1.0), r"workspace_bytes must be finite and >= 0"),
])
def test_invalid_layouts_are_rejected_with_the_reason(model, kwargs, match):
    with pytest.raises(tk.TokenomicsError, match=match):
        Deployment(model, "h100-sxm", **kwargs)


def test_tp_beyond_the_scale_up_domain_needs_scale_out():
    # HGX H100: 8 GPUs per NVLink domain, and a 400 Gb/s NIC: tp=16 spans two domains.
    assert Deployment("llama-3.1-70b", "h100-sxm", tp=16).n_devices == 16
    # The A100 entry lists no scale-out link: 16 devices cannot talk.
    with pytest.raises(tk.TokenomicsError, match=r"tp=16 spans 16 devices, more than "
                                                 r"a100-80gb's scale-up domain of 8, and no "
                                                 r"scale-out bandwidth is published"):
        Deployment("llama-3.1-70b", "a100-80gb", tp=16)
    # Within the domain the A100 is fine.
    assert Deployment("llama-3.1-70b", "a100-80gb", tp=8).n_devices == 8


def test_pipeline_replica_beyond_the_domain_needs_scale_out():
    # tp=8 x pp=2 = 16 devices: more than one A100 NVLink domain of 8.
    with pytest.raises(tk.TokenomicsError, match=r"the replica of tp\*pp=16 spans 16 devices"):
        Deployment("llama-3.1-70b", "a100-80gb", tp=8, pp=2)
    assert Deployment("llama-3.1-70b", "a100-80gb", tp=4, pp=2).n_devices == 8


def test_unknown_domain_size_must_be_given():
    h = tk.hardware("h100-sxm").with_(scale_up_domain_size=None)
    with pytest.raises(tk.TokenomicsError, match=r"h100-sxm: scale-up domain size not "
                                                 r"published; give it with hardware.with_"):
        Deployment("llama-3.1-8b", h, tp=2)
    assert Deployment("llama-3.1-8b", h, tp=1).n_devices == 1   # one device needs no link


def test_numpy_integers_are_accepted_and_with_revalidates():
    d = Deployment("llama-3.1-70b", "h100-sxm", tp=np.int64(8))
    assert d.n_devices == 8
    with pytest.raises(tk.TokenomicsError, match=r"must divide llama-3.1-70b's 64 query heads"):
        d.with_(tp=6)
    assert d.with_(pp=2).n_devices == 16 and d.pp == 1


# ---- formats -------------------------------------------------------------------------------
def test_default_formats_follow_the_release():
    # Llama 3.1: released in BF16; compute at the activation format.
    d = Deployment("llama-3.1-8b", "h100-sxm")
    assert (d.weight_dtype, d.expert_dtype, d.embedding_dtype, d.kv_dtype, d.act_dtype,
            d.compute_dtype) == ("bf16",) * 6
    # DeepSeek-V3: released in FP8 (E4M3, block-scaled) with BF16 embedding and LM head.
    v3 = Deployment("deepseek-v3", "h100-sxm", tp=8)
    assert (v3.weight_dtype, v3.expert_dtype, v3.embedding_dtype) == \
        ("fp8_e4m3", "fp8_e4m3", "bf16")


def test_quantizing_weights_keeps_the_embedding_at_its_release_format():
    # FP8 weights for Llama 3.1 70B: linear layers in FP8, embedding and LM head stay BF16
    # (Neural Magic's FP8 recipe).
    d = Deployment("llama-3.1-70b", "h100-sxm", tp=4, weight_dtype="FP8")
    assert (d.weight_dtype, d.embedding_dtype) == ("fp8_e4m3", "bf16")


def test_compute_defaults_to_the_activation_format():
    d = Deployment("llama-3.1-8b", "h100-sxm", act_dtype="fp8")
    assert d.compute_dtype == "fp8_e4m3"
    # Weight-only quantization (W4A16) computes at BF16.
    w4 = Deployment("llama-3.1-8b", "h100-sxm", weight_dtype="int4_g128")
    assert (w4.weight_dtype, w4.compute_dtype) == ("int4_g128", "bf16")


def test_expert_format_follows_the_release_only_at_the_released_weight_format():
    # gpt-oss ships its routed experts in MXFP4, everything else in BF16.
    d = Deployment("gpt-oss-120b", "h100-sxm")
    assert (d.weight_dtype, d.expert_dtype) == ("bf16", "mxfp4")
    # Re-quantizing the weights to FP8 re-quantizes the experts with them.
    q = Deployment("gpt-oss-120b", "h100-sxm", weight_dtype="fp8")
    assert (q.weight_dtype, q.expert_dtype) == ("fp8_e4m3", "fp8_e4m3")
    # An explicit expert format wins.
    assert Deployment("gpt-oss-120b", "h100-sxm", expert_dtype="bf16").expert_dtype == "bf16"


# ---- KV replication ------------------------------------------------------------------------
@pytest.mark.parametrize("tp, copies", [(1, 1.0), (4, 1.0), (8, 1.0), (16, 2.0)])
def test_gqa_kv_heads_replicate_beyond_their_count(tp, copies):
    # Llama 3.1 70B: 8 KV heads. Up to tp=8 each device holds 8 / tp whole heads, no copies;
    # at tp=16 two devices share each head: 16 / 8 = 2 copies.
    assert Deployment("llama-3.1-70b", "h100-sxm", tp=tp).kv_replication == copies


def test_mla_latent_replicates_on_every_rank_unless_sharded():
    # DeepSeek-V3's MLA has one shared latent per token: split by heads, each of 8 ranks
    # holds all of it (8 copies); sharded over all devices, one copy.
    assert Deployment("deepseek-v3", "h100-sxm", tp=8).kv_replication == 8.0
    assert Deployment("deepseek-v3", "h100-sxm", tp=8, kv_shard="all").kv_replication == 1.0
    # Attention data parallelism: tp=8 with dp_attention=2 runs attention over 8 / 2 = 4
    # devices, so 4 copies; dp_attention=8 leaves one device per attention group.
    d = Deployment("deepseek-v3", "h100-sxm", tp=8, ep=8, dp_attention=2)
    assert (d.attention_tp, d.kv_replication) == (4, 4.0)
    assert Deployment("deepseek-v3", "h100-sxm", tp=8, dp_attention=8).kv_replication == 1.0


def test_kv_shard_all_never_replicates():
    assert Deployment("llama-3.1-70b", "h100-sxm", tp=16, kv_shard="all").kv_replication == 1.0


# --------------------------------------------------------------------------------------------
# Wide expert parallelism with redundant experts (DeepSeek's published layouts)
# --------------------------------------------------------------------------------------------
# DeepSeek open-infra-index, day 6 (2025-02-28): prefill "Routed Expert EP32, MLA/Shared
# Expert DP32 ... 32 redundant routed experts, each GPU handles 9 routed experts"; decode
# "EP144, DP144 ... 32 redundant routed experts, each GPU manages 2 routed experts".
def _ds(hw, ep, r=32):
    return tk.Deployment("deepseek-v3", hw, tp=ep, ep=ep, dp_attention=ep, redundant_experts=r,
                         weight_dtype="fp8", compute_dtype="fp8", kv_shard="all")


@pytest.mark.parametrize("hw, ep, per_gpu", [("h800", 144, 2), ("h800", 72, 4),
                                             ("gb200", 48, 6), ("h800", 32, 9)])
def test_deepseek_wide_ep_layouts_build_and_fit(hw, ep, per_gpu):
    d = _ds(hw, ep)
    assert d.physical_experts == 288 and d.physical_experts // ep == per_gpu
    # ~88 sequences per GPU of 4,989 tokens (day 6's mean KV length) fit
    assert tk.memory_fit(d, 88 * ep, 4989).fits
    assert tk.decode(d, 88 * ep, 4989).time_s > 0


def test_a_redundant_expert_costs_its_weights_on_every_rank():
    # EP32 with 32 redundant experts holds 9 instead of 8 routed experts per GPU: one more
    # expert of 3 x 7168 x 2048 = 44,040,192 FP8 weights in each of the 58 MoE layers.
    extra = tk.weight_bytes_per_device(_ds("h800", 32)) - \
        tk.weight_bytes_per_device(_ds("h800", 32, r=0))
    assert extra == pytest.approx(3 * 7168 * 2048 * 58, rel=1e-9)


def test_ep_must_divide_the_physical_experts():
    with pytest.raises(tk.TokenomicsError, match="256 routed experts; add redundant_experts"):
        tk.Deployment("deepseek-v3", "h800", tp=144, ep=144, dp_attention=144)
    with pytest.raises(tk.TokenomicsError, match=r"256 \+ 16 redundant"):
        _ds("h800", 144, r=16)
    with pytest.raises(tk.TokenomicsError, match="needs expert parallelism"):
        tk.Deployment("deepseek-v3", "h800", tp=8, redundant_experts=8)
    with pytest.raises(tk.TokenomicsError, match="whole number >= 0"):
        _ds("h800", 32, r=-32)


def test_redundant_copies_share_the_load_so_a_step_reads_more_of_them():
    # One token reaches top_k = 8 copies either way; a large batch reaches all 288 copies
    # instead of all 256 experts.
    from tokenomics.physics.operators import step_costs

    with_r, without = _ds("h800", 32), _ds("h800", 32, r=0)
    one = [step_costs(x, 1, 1, 1024, 1)[7].weight_bytes for x in (with_r, without)]
    assert one[0] == pytest.approx(one[1], rel=0.01)
    many = [step_costs(x, 100_000, 1, 1024, 1)[7].weight_bytes for x in (with_r, without)]
    assert many[0] / many[1] == pytest.approx(288 / 256, rel=1e-6)
