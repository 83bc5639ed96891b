"""Collectives against hand calculations; communication inside the decode loop (S43);
impossible layouts rejected; properties of the new functions."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tokenomics as tk
from tokenomics.data.interconnect import topology
from tokenomics.physics.collectives import (
    group_allreduce_time,
    group_alltoall_time,
    pipeline_bubble_fraction,
    step_comm,
)

BW = 450e9      # H100 NVLink 4, per direction
#: An efficiency at the bound's rates that runs every collective after the kernels (none hidden).
SERIAL = tk.Efficiency(collective_overlap=0.0)
LAT = 1e-6


# ---- collectives by hand ------------------------------------------------------------------
def test_ring_allreduce_8_devices_by_hand():
    # 2(n-1) hops of latency + 2(n-1)/n of the message over the link: 64 MB over 8 devices.
    m = 64e6
    expected = 2 * 7 * 1e-6 + 2 * 7 / 8 * m / BW
    assert tk.allreduce_time(m, 8, BW, LAT, algorithm="ring") == pytest.approx(expected,
                                                                              rel=1e-12)
    assert expected == pytest.approx(262.9e-6, abs=0.1e-6)


def test_other_allreduce_algorithms_by_hand():
    m = 32e3  # a batch-1 decode all-reduce of Llama 3.1 405B: 16,384 x 2 B
    assert tk.allreduce_time(m, 8, BW, LAT, "tree") == pytest.approx(2 * 3 * LAT + 2 * m / BW)
    assert tk.allreduce_time(m, 8, BW, LAT, "one_shot") == pytest.approx(LAT + 7 * m / BW)
    assert tk.allreduce_time(m, 8, BW, LAT, "two_shot") == pytest.approx(2 * LAT +
                                                                          2 * 7 / 8 * m / BW)
    auto = tk.allreduce_time(m, 8, BW, LAT, "auto")
    assert auto == min(tk.allreduce_time(m, 8, BW, LAT, a)
                       for a in ("ring", "tree", "one_shot", "two_shot"))
    # Small messages are latency-bound: one-shot wins; large ones bandwidth-bound: ring/two-shot.
    assert auto == tk.allreduce_time(m, 8, BW, LAT, "one_shot")
    big = 1e9
    assert tk.allreduce_time(big, 8, BW, LAT, "auto") == pytest.approx(
        tk.allreduce_time(big, 8, BW, LAT, "two_shot"))


def test_allgather_reduce_scatter_alltoall_p2p_by_hand():
    m = 8e6
    ag = 7 * LAT + 7 / 8 * m / BW
    assert tk.allgather_time(m, 8, BW, LAT) == pytest.approx(ag)
    assert tk.reduce_scatter_time(m, 8, BW, LAT) == pytest.approx(ag)
    assert tk.alltoall_time(m, 8, 50e9, 2e-6) == pytest.approx(2e-6 + 7 / 8 * m / 50e9)
    assert tk.p2p_time(m, 50e9, 2e-6) == pytest.approx(2e-6 + m / 50e9)


def test_one_device_or_empty_message_costs_nothing():
    assert tk.allreduce_time(1e6, 1, BW, LAT) == 0
    assert tk.allreduce_time(0, 8, BW, LAT) == 0
    assert tk.alltoall_time(1e6, 1, BW, LAT) == 0


def test_collectives_broadcast_over_arrays():
    t = tk.allreduce_time(np.array([1e3, 1e6, 1e9]), np.array([[2], [8]]), BW, LAT)
    assert np.shape(t) == (2, 3)


def test_bad_collective_input():
    with pytest.raises(tk.TokenomicsError, match="link_bytes_per_s must be > 0"):
        tk.allreduce_time(1e6, 8, 0, LAT)
    with pytest.raises(tk.TokenomicsError, match="n_devices must be a whole number >= 1"):
        tk.allreduce_time(1e6, 0, BW, LAT)
    with pytest.raises(tk.TokenomicsError, match="unknown all-reduce algorithm"):
        tk.allreduce_time(1e6, 8, BW, LAT, algorithm="butterfly")
    with pytest.raises(tk.TokenomicsError, match="message_bytes must be >= 0"):
        tk.allgather_time(-1, 8, BW, LAT)


def test_hierarchical_allreduce_across_two_domains_by_hand():
    # 16 H100s = 2 NVLink domains of 8: ring RS + AG inside (scale-up) + all-reduce of the
    # 1/8 shard across 2 domains over each GPU's 400 Gb/s NIC (2 us).
    topo = topology(tk.hardware("h100-sxm"))
    assert topo.domain_size == 8 and topo.out_bytes_per_s == 50e9
    m = 64e6
    intra = 2 * (7 * 0.6e-6 + 7 / 8 * m / BW)
    inter = min(2 * 1 * 2e-6 + 2 * 1 / 2 * (m / 8) / 50e9,        # ring over 2
                2 * 1 * 2e-6 + 2 * (m / 8) / 50e9,                 # tree
                2e-6 + 1 * (m / 8) / 50e9,                         # one-shot
                2 * 2e-6 + 2 * 1 / 2 * (m / 8) / 50e9)             # two-shot
    assert group_allreduce_time(topo, m, 16, "auto") == pytest.approx(intra + inter)


def test_alltoall_across_domains_splits_traffic():
    topo = topology(tk.hardware("h800"))
    m = 10e6
    up = topo.up_latency_s + 7 / 16 * m / topo.up_bytes_per_s
    out = topo.out_latency_s + 8 / 16 * m / topo.out_bytes_per_s
    assert group_alltoall_time(topo, m, 16) == pytest.approx(max(up, out))
    assert out > up  # InfiniBand, not NVLink, sets the pace


def test_pipeline_bubble():
    assert pipeline_bubble_fraction(1, 1) == 0
    assert pipeline_bubble_fraction(4, 4) == pytest.approx(3 / 7)
    with pytest.raises(tk.TokenomicsError):
        pipeline_bubble_fraction(0, 1)


# ---- communication inside the decode loop ---------------------------------------------------
def test_tp1_reproduces_single_device_results_exactly():
    d = tk.Deployment("llama-3.1-8b", "h100-sxm")
    r = tk.decode(d, [1, 16, 64], 4096)
    assert np.all(np.asarray(r.comm_time_s) == 0)
    assert np.all(np.asarray(r.step_time_s) == np.asarray(r.roofline_s))
    assert step_comm(d, 16, 1, 1) == []


def test_S43_llama_405b_on_8_h100_allreduces_in_the_decode_loop():
    # TP=8: two all-reduces per layer x 126 layers of B x 16,384 x 2 B, plus the logits gather.
    d = tk.Deployment("llama-3.1-405b", "h100-sxm", tp=8, weight_dtype="fp8",
                      compute_dtype="fp8", allreduce_algorithm="ring")
    B = 32
    r = tk.decode(d, B, 4096)
    m = B * 16384 * 2
    ar = 2 * 7 * 0.6e-6 + 2 * 7 / 8 * m / BW
    gather = 7 * 0.6e-6 + 7 / 8 * (B * 128_256 * 2) / BW
    assert r.collective_time_s == pytest.approx(2 * 126 * ar + gather, rel=1e-9)
    # The bound hides the collectives behind the kernels: the step is the larger of the two.
    assert r.comm_time_s == 0 and r.step_time_s == pytest.approx(
        max(r.roofline_s, r.collective_time_s), rel=1e-12)
    # Run after the kernels, as an engine without an overlap scheme runs them, the network
    # sits inside the loop: ~9% of the step at this batch.
    s = tk.decode(d.with_(efficiency=SERIAL), B, 4096)
    assert s.comm_time_s == pytest.approx(r.collective_time_s, rel=1e-12)
    assert 0.05 < s.comm_time_s / s.step_time_s < 0.2


def test_S43_deepseek_v3_on_2x8_h800_alltoall_crosses_infiniband():
    # Attention data-parallel over 16 GPUs, experts spread one group per GPU (EP16): dispatch
    # and combine all-to-alls per MoE layer, half the traffic over InfiniBand.
    d = tk.Deployment("deepseek-v3", "h800", tp=16, dp_attention=16, ep=16,
                      weight_dtype="fp8", compute_dtype="fp8", kv_dtype="fp8")
    B = 256
    costs = {c.name: c for c in step_comm(d, B, 1, 1)}
    assert set(costs) == {"tp_ffn_allreduce", "ep_dispatch", "ep_combine"}
    # dispatch at the experts' FP8 (1 B), combine at BF16 (2 B); across the two nodes one
    # copy of a token per remote node: of its 8 experts, the other node holds at least one
    # with probability 1 - (1/2)^8, so 0.996 copies of 8 cross InfiniBand (not 8/16 of them)
    topo = topology(tk.hardware("h800"))
    crossing = (1 - 0.5 ** 8) / 8
    for name, b in (("ep_dispatch", 1), ("ep_combine", 2)):
        msg = B / 16 * 8 * 7168 * b            # tokens per GPU x top-8 x hidden x bytes
        one = max(topo.up_latency_s + 7 / 16 * msg / topo.up_bytes_per_s,
                  topo.out_latency_s + crossing * msg / topo.out_bytes_per_s)
        assert costs[name].time_s == pytest.approx(58 * one), name
    assert costs["tp_ffn_allreduce"].calls == 3   # the three dense layers
    # inside the decode loop: a dispatch and a combine per MoE layer of every step
    assert costs["ep_dispatch"].calls == costs["ep_combine"].calls == 58
    r = tk.decode(d, B, 4096)
    assert r.collective_time_s == pytest.approx(sum(c.time_s for c in costs.values()))


def test_allgather_exchange_gathers_every_ranks_tokens_by_hand():
    # Llama 4 Scout (top-1 routing, hidden 5,120, 48 MoE layers) on 4 PCIe RTX PRO 6000s,
    # attention data-parallel, experts over the 4: without NVLink TensorRT-LLM all-gathers
    # every rank's tokens and reduce-scatters the outputs instead of an all-to-all.
    ag = tk.Deployment("llama-4-scout", "rtx-pro-6000-server", tp=4, ep=4, dp_attention=4,
                       ep_exchange="allgather")
    a2a = ag.with_(ep_exchange="alltoall")
    B = 512                                          # decode tokens of the step, all ranks
    topo = topology(tk.hardware("rtx-pro-6000-server"))
    # PCIe Gen5 x16: 128 GB/s both ways = 64e9 B/s each way; the default 0.6 us a hop
    assert (topo.up_bytes_per_s, topo.up_latency_s) == (64e9, 0.6e-6)
    costs = {c.name: c for c in step_comm(ag, B, 1, 1)}
    M = B * 5120 * 2                                 # the step's tokens x hidden x BF16
    ring = 3 * 0.6e-6 + 3 / 4 * M / 64e9             # (n-1) hops + (n-1)/n of M, n = 4
    for name in ("ep_dispatch", "ep_combine"):
        assert costs[name].message_bytes == M
        assert costs[name].time_s == pytest.approx(48 * ring), name
    # the all-to-all sends each rank's B/4 tokens to its one expert: 3/4 of B/4 x h x 2 B
    # leave the device, so the gather moves ep / k = 4 times the bytes
    one = {c.name: c for c in step_comm(a2a, B, 1, 1)}["ep_dispatch"]
    assert one.message_bytes == B / 4 * 1 * 5120 * 2
    assert one.time_s == pytest.approx(48 * (0.6e-6 + 3 / 4 * (B / 4 * 5120 * 2) / 64e9))


@pytest.mark.parametrize("kwargs, match", [
    (dict(ep_exchange="allgather"), "needs ep > 1 and dp_attention > 1"),
    (dict(dp_attention=4, ep_exchange="allgather"), "needs ep > 1"),
    (dict(ep=4, ep_exchange="allgather"), "dp_attention=1"),
    (dict(ep=4, dp_attention=4, ep_exchange="gather"), "one of alltoall, allgather"),
    (dict(ep=4, dp_attention=4, ep_exchange=None), "one of alltoall, allgather"),
])
def test_an_exchange_without_its_layout_is_refused(kwargs, match):
    with pytest.raises(tk.TokenomicsError, match=match):
        tk.Deployment("llama-4-scout", "rtx-pro-6000-server", tp=4, **kwargs)


def test_domain_boundary_adds_scale_out_time():
    h = tk.hardware("h100-sxm")
    d16 = tk.Deployment("llama-3.1-405b", h, tp=16)
    one_domain = d16.with_(hardware=h.with_(scale_up_domain_size=16))
    r, r1 = tk.decode(d16, 64, 4096), tk.decode(one_domain, 64, 4096)
    assert r.collective_time_s > r1.collective_time_s
    assert r.roofline_s == pytest.approx(r1.roofline_s)


def test_pipeline_across_nodes_sends_over_the_nic():
    d = tk.Deployment("llama-3.1-405b", "h100-sxm", tp=8, pp=2, weight_dtype="fp8")
    c = {x.name: x for x in step_comm(d, 16, 1, 1)}["pp_send"]
    assert c.calls == 2
    assert c.time_s == pytest.approx(2 * (2e-6 + 16 * 16384 * 2 / 8 / 50e9))


def test_overlap_hides_communication_up_to_the_compute_time():
    # an engine that runs its collectives after the kernels (SERIAL), with a layout that
    # overlaps them (comm_overlap, e.g. a two-batch overlap)
    d = tk.Deployment("llama-3.1-405b", "h100-sxm", tp=8, weight_dtype="fp8",
                      compute_dtype="fp8", efficiency=SERIAL)
    none = tk.decode(d, 32, 4096)
    full = tk.decode(d.with_(comm_overlap=1.0), 32, 4096)
    half = tk.decode(d.with_(comm_overlap=0.5), 32, 4096)
    assert full.comm_time_s == 0 and full.step_time_s == pytest.approx(none.roofline_s)
    assert half.comm_time_s == pytest.approx(0.5 * none.comm_time_s)


def test_link_efficiency_and_collective_overhead():
    d = tk.Deployment("llama-3.1-405b", "h100-sxm", tp=8, allreduce_algorithm="ring",
                      weight_dtype="fp8")
    base = tk.decode(d, 8, 2048).collective_time_s
    slow = tk.decode(d.with_(efficiency=tk.Efficiency(collective_overhead_s=5e-6)), 8,
                     2048).collective_time_s
    assert slow == pytest.approx(base + (2 * 126 + 1) * 5e-6)


def test_dp_attention_replicates_attention_weights_not_kv():
    m = tk.model("deepseek-v3")
    tp = tk.Deployment(m, "h800", tp=8, weight_dtype="fp8", compute_dtype="fp8")
    dp = tp.with_(dp_attention=8, ep=8)
    b = tk.param_breakdown(m)
    # FP8 attention projections and norms, BF16 embedding and LM head (DeepSeek's release).
    attn = b["attention"] + b["norms"] + 2 * (b["embedding"] + b["lm_head"])
    assert tk.weight_bytes_per_device(dp) - tk.weight_bytes_per_device(tp) == pytest.approx(
        attn * 7 / 8)
    # MLA under attention TP=8 keeps the latent on all 8 ranks; under DP attention once.
    assert tp.kv_replication == 8 and dp.kv_replication == 1


@pytest.mark.parametrize("kwargs, match", [
    (dict(model="llama-3.1-70b", tp=3), "must divide llama-3.1-70b's 64 query heads"),
    (dict(model="qwen3-30b-a3b", tp=8, ep=8), None),                       # valid
    (dict(model="qwen3-30b-a3b", tp=4, ep=2), "ep must be 1"),
    (dict(model="mixtral-8x7b", tp=16, ep=16), "must divide mixtral-8x7b's 8 routed experts"),
    (dict(model="llama-3.1-70b", tp=8, dp_attention=3), "dp_attention=3 must divide tp=8"),
    # The catalog now publishes these links; the checks are kept on entries without them.
    (dict(model="llama-3.1-70b", tp=2, hardware=tk.hardware("l40s").with_(
        scale_up_domain_size=None)), "domain size not published"),
    (dict(model="llama-3.1-8b", tp=2, hardware=tk.hardware("groq-lpu").with_(
        scale_up_bw_bytes_per_s=None, scale_up_domain_size=None,
        scale_out_bw_bytes_per_s=None)), "no scale-out bandwidth is published"),
    (dict(model="llama-3.1-405b", tp=16, hardware="mi355x"), "no scale-out bandwidth"),
    (dict(model="llama-3.1-70b", tp=8, comm_overlap=2.0), "comm_overlap"),
    (dict(model="llama-3.1-70b", tp=8, allreduce_algorithm="x"), "allreduce_algorithm"),
])
def test_impossible_layouts_are_rejected(kwargs, match):
    kwargs = {"hardware": "h100-sxm", **kwargs}
    if match is None:
        tk.Deployment(**kwargs)
        return
    with pytest.raises(tk.TokenomicsError, match=match):
        tk.Deployment(**kwargs)


# ---- properties ------------------------------------------------------------------------------
sizes = st.floats(0, 1e10)
counts = st.integers(1, 1024)
bws = st.floats(1e8, 1e13)
lats = st.floats(0, 1e-4)


@given(m=sizes, n=counts, bw=bws, lat=lats,
       alg=st.sampled_from(["ring", "tree", "one_shot", "two_shot"]))
def test_auto_never_slower_and_times_non_negative(m, n, bw, lat, alg):
    t = tk.allreduce_time(m, n, bw, lat, alg)
    assert t >= 0
    assert tk.allreduce_time(m, n, bw, lat, "auto") <= t * (1 + 1e-12)


@given(m=sizes, n=counts, bw=bws, lat=lats, f=st.floats(1, 100))
def test_more_bandwidth_never_slower_bigger_message_never_faster(m, n, bw, lat, f):
    for fn in (tk.allgather_time, tk.alltoall_time):
        assert fn(m, n, bw * f, lat) <= fn(m, n, bw, lat) * (1 + 1e-12)
        assert fn(m * f, n, bw, lat) >= fn(m, n, bw, lat) * (1 - 1e-12)
    assert tk.allreduce_time(m, n, bw * f, lat, "auto") <= \
        tk.allreduce_time(m, n, bw, lat, "auto") * (1 + 1e-12)


@given(n=st.integers(2, 512), m=st.floats(1, 1e9))
def test_ring_allreduce_bandwidth_term_tends_to_2m(n, m):
    t = tk.allreduce_time(m, n, 1e9, 0.0, "ring")
    assert t == pytest.approx(2 * (n - 1) / n * m / 1e9)
    assert t < 2 * m / 1e9


@given(model_id=st.sampled_from(["llama-3.1-405b", "deepseek-v3", "qwen3-235b-a22b"]),
       b=st.integers(1, 512), c=st.integers(1, 16_384), f=st.floats(1.01, 8))
def test_doubling_scale_up_bandwidth_never_slows_anything(model_id, b, c, f):
    h = tk.hardware("h200")
    kw = dict(weight_dtype="fp8", compute_dtype="fp8")
    if model_id == "deepseek-v3":
        kw.update(dp_attention=16, ep=16, tp=16)
    else:
        kw.update(tp=16, ep=1)
    d = tk.Deployment(model_id, h, **kw)
    fast = d.with_(hardware=h.with_(scale_up_bw_bytes_per_s=h.scale_up_bw_bytes_per_s * f))
    r, r2 = tk.decode(d, b, c, on_oom="mark"), tk.decode(fast, b, c, on_oom="mark")
    assert r2.step_time_s <= r.step_time_s * (1 + 1e-12)
    assert math.isfinite(r2.step_time_s)


def test_prefill_pipeline_microbatches_by_gpipe_formula():
    # pp=2, 4 micro-batches of 2 prompts: (4 + 2 - 1) = 5 stage times of half the model at
    # batch 2, against the whole batch of 8 passing the 2 stages once (2 stage times at 8).
    d = tk.Deployment("llama-3.1-70b", "h100-sxm", tp=4, pp=2, weight_dtype="fp8",
                      compute_dtype="fp8")
    one = tk.prefill(d, 2048, batch=8)
    four = tk.prefill(d, 2048, batch=8, microbatches=4)
    ref = tk.Deployment("llama-3.1-70b", "h100-sxm", tp=4, weight_dtype="fp8",
                        compute_dtype="fp8", usable_memory_fraction=1.0)
    stage8 = tk.prefill(ref, 2048, batch=8, on_oom="mark").roofline_s / 2
    stage2 = tk.prefill(ref, 2048, batch=2, on_oom="mark").roofline_s / 2
    assert one.roofline_s == pytest.approx(2 * stage8)
    assert four.roofline_s == pytest.approx(5 * stage2)
    assert four.flops_per_device == pytest.approx(one.flops_per_device)
    with pytest.raises(tk.TokenomicsError, match="microbatches"):
        tk.prefill(d, 2048, batch=8, microbatches=0)


def test_tp2_allreduce_on_a_mesh_crosses_one_link():
    # MI300X: a TP=2 pair talks over one Infinity Fabric link, 64 GB/s each way (AMD's
    # MI300X platform docs); a 16 MiB all-reduce over 2 devices moves (2-1)/2 * 2 * M per
    # device = 16 MiB each way: 16 * 2**20 / 64e9 s, plus the ring's 2 * (2-1) hops of latency
    from tokenomics.data.interconnect import topology
    from tokenomics.physics.collectives import group_allreduce_time
    topo = topology(tk.hardware("mi300x"))
    m = 16 * 2**20
    t = group_allreduce_time(topo, m, 2, algorithm="ring")
    assert float(t) == pytest.approx(m / 64e9 + 2 * topo.up_latency_s, rel=1e-9)


@pytest.mark.parametrize("bad", [np.array([]), np.array([1.0, 2.0]), 3, None.__class__])
def test_an_algorithm_that_is_not_a_name_is_refused_by_name(bad):
    # issue 25: an array here reached "the truth value of an array is ambiguous"
    d = tk.Deployment("llama-3.1-8b", "h100-sxm", tp=2)
    with pytest.raises(tk.TokenomicsError, match="unknown all-reduce algorithm"):
        tk.step_comm(d, 1, 1, 1, algorithm=bad)
