"""The step engine: roofline per operator + exposed communication + overhead."""

from __future__ import annotations

import pytest

import tokenomics as tk
from tokenomics.physics.collectives import step_comm
from tokenomics.physics.engine import (
    check_on_oom,
    exposed_comm_s,
    operator_times,
    overhead_s,
    step_seconds,
)
from tokenomics.physics.operators import OpCost, step_costs

P_H100 = 989.4e12          # dense BF16 [FLOP/s]
BW_H100 = 3.35e12          # HBM3 [B/s]


@pytest.fixture(scope="module")
def l70():
    return tk.Deployment("llama-3.1-70b", "h100-sxm", tp=4)


def test_operator_times_by_hand(l70):
    # Two operators over tp = 4 H100s at the datasheet roofs:
    #   a: 2 ms of compute, 1 ms of memory -> 2 ms (compute-bound);
    #   b: 0.5 ms of compute, 3 ms of memory -> 3 ms (memory-bound).
    a = OpCost("a", 4 * P_H100 * 2e-3, 4 * BW_H100 * 1e-3, 0.0, 0.0)
    b = OpCost("b", 4 * P_H100 * 0.5e-3, 0.0, 4 * BW_H100 * 3e-3, 0.0)
    t = operator_times(l70, [a, b])
    assert t.per_op["a"][2] == pytest.approx(2e-3) and t.per_op["b"][2] == pytest.approx(3e-3)
    assert t.roofline_s == pytest.approx(5e-3)                  # the sum of the maxima
    assert t.compute_s == pytest.approx(2.5e-3) and t.memory_s == pytest.approx(4e-3)
    assert t.lower_bound_s == pytest.approx(4e-3)               # perfect overlap
    assert str(t.bound) == "memory"                             # 2 ms of 5 ms compute-bound
    assert t.flops == pytest.approx(P_H100 * 2.5e-3)           # one device's share
    assert t.bytes == pytest.approx(BW_H100 * 4e-3)
    # On one device of the four (shard=1) each time is four times longer.
    assert operator_times(l70, [a, b], shard=1).roofline_s == pytest.approx(20e-3)


def test_step_time_is_roofline_plus_exposed_comm_plus_overhead(l70):
    # an engine that runs its collectives after the kernels (collective_overlap 0)
    eff = tk.Efficiency(step_overhead_s=100e-6, layer_overhead_s=2e-6, collective_overlap=0.0)
    d = l70.with_(efficiency=eff)
    # Fixed time: 100 us per step + 80 layers x 2 us.
    assert overhead_s(d) == pytest.approx(100e-6 + 80 * 2e-6)
    costs = step_costs(d, 8.0, 1.0, 4096.0, 1.0)
    roof = operator_times(d, costs).roofline_s
    # comm_overlap = 0: every collective of the step is exposed.
    comm = sum(c.time_s for c in step_comm(d, 8.0, 1.0, 1.0, "decode"))
    assert comm > 0
    assert exposed_comm_s(d, roof, 8.0, 1.0, 1.0, "decode") == pytest.approx(comm)
    t = step_seconds(d, costs, 8.0, 1.0, 1.0, "decode")
    assert t == pytest.approx(roof + comm + 100e-6 + 80 * 2e-6, rel=1e-12)
    r = tk.decode(d, 8, 4096)
    assert r.time_s == pytest.approx(float(t), rel=1e-12)
    assert r.time_s == pytest.approx(r.roofline_s + r.comm_time_s + r.overhead_s, rel=1e-12)


def test_the_bound_hides_every_collective_behind_the_roofline(l70):
    # The roofline preset's step is max(roofline, collectives): what no implementation of
    # the same work and the same wire bytes can beat (issue 24).
    costs = step_costs(l70, 8.0, 1.0, 4096.0, 1.0)
    roof = float(operator_times(l70, costs).roofline_s)
    comm = float(sum(c.time_s for c in step_comm(l70, 8.0, 1.0, 1.0, "decode")))
    assert l70.comm_hidden_share == 1.0
    assert step_seconds(l70, costs, 8.0, 1.0, 1.0, "decode") == pytest.approx(
        max(roof, comm), rel=1e-12)
    r = tk.decode(l70, 8, 4096)
    assert r.comm_time_s == 0.0 and r.collective_time_s == pytest.approx(comm, rel=1e-12)


def test_layout_and_engine_overlaps_combine(l70):
    # omega = 1 - (1 - layout)(1 - engine): a two-batch overlap of 0.5 under an engine that
    # hides 0.2 of what is left hides 0.6.
    d = l70.with_(comm_overlap=0.5, efficiency=tk.Efficiency(collective_overlap=0.2))
    assert d.comm_hidden_share == pytest.approx(0.6, rel=1e-12)


def test_full_overlap_hides_at_most_the_roofline_time(l70):
    serial = tk.Efficiency(collective_overlap=0.0)
    d = l70.with_(comm_overlap=1.0, efficiency=serial)
    total = sum(c.time_s for c in step_comm(d, 8.0, 1.0, 1.0, "decode"))
    # Exposed = total - min(total, roofline): all of it with no compute to hide behind,
    # half of it behind half as much compute, none behind more compute than communication.
    assert exposed_comm_s(d, 0.0, 8.0, 1.0, 1.0, "decode") == pytest.approx(total)
    assert exposed_comm_s(d, total / 2, 8.0, 1.0, 1.0, "decode") == pytest.approx(total / 2)
    assert exposed_comm_s(d, 2 * total, 8.0, 1.0, 1.0, "decode") == pytest.approx(0.0)
    # Half overlap behind ample compute leaves half exposed.
    half = l70.with_(comm_overlap=0.5, efficiency=serial)
    assert exposed_comm_s(half, 1.0, 8.0, 1.0, 1.0, "decode") == pytest.approx(total / 2)


def test_a_single_device_communicates_nothing():
    d = tk.Deployment("llama-3.1-8b", "h100-sxm")
    r = tk.decode(d, 1, 1024)
    assert r.comm_time_s == 0.0
    assert r.time_s == r.roofline_s                  # no overhead in the ROOFLINE efficiency


def test_result_frames_name_the_phase_time():
    d = tk.Deployment("llama-3.1-8b", "h100-sxm")
    assert "step_time_s" in tk.decode(d, [1, 8], 1024).to_frame()
    assert "ttft_s" in tk.prefill(d, 1024).to_frame()


def test_on_oom_is_raise_or_mark():
    check_on_oom("raise")
    check_on_oom("mark")
    with pytest.raises(tk.TokenomicsError, match="on_oom must be 'raise' or 'mark'"):
        check_on_oom("skip")


def test_the_busiest_expert_parallel_rank_sets_the_routed_experts_time():
    # expert_imbalance 0.5: the busiest of 8 EP ranks carries 1.5x the mean rank's tokens,
    # so the routed experts' compute time is 1.5x and their memory time grows by half the
    # activation bytes only (each rank still reads its own experts' weights once)
    from tokenomics.physics.engine import expert_load_factor

    def times(ep, iota):
        dep = tk.Deployment("qwen3-235b-a22b", "b200", tp=8, ep=ep,
                            efficiency=tk.Efficiency(expert_imbalance=iota))
        costs = step_costs(dep, 64, 1, 2048, 1)
        ex = next(c for c in costs if c.name == "moe_experts")
        return dep, ex, operator_times(dep, costs).per_op["moe_experts"]

    dep, ex, (tc1, tm1, _) = times(8, 0.5)
    _, _, (tc0, tm0, _) = times(8, 0.0)
    assert expert_load_factor(dep) == 1.5
    assert tc1 == pytest.approx(1.5 * tc0, rel=1e-12)
    bw = dep.hardware.mem_bw_bytes_per_s
    assert tm1 - tm0 == pytest.approx(0.5 * float(ex.act_bytes) / (8 * bw), rel=1e-9)
    # without expert parallelism one rank holds every expert: no rank to wait for
    dep1, _, (tc_tp, tm_tp, _) = times(1, 0.5)
    _, _, (tc_tp0, tm_tp0, _) = times(1, 0.0)
    assert expert_load_factor(dep1) == 1.0 and (tc_tp, tm_tp) == (tc_tp0, tm_tp0)


@pytest.mark.parametrize("bad", [-0.1, float("nan"), float("inf")])
def test_expert_imbalance_must_be_a_finite_excess(bad):
    with pytest.raises(tk.TokenomicsError, match="expert_imbalance must be >= 0"):
        tk.Efficiency(expert_imbalance=bad)


def test_achievable_peaks_time_gemms_at_the_measured_matmul_rate():
    # An 8,192-token prefill of Llama 3.1 70B on 8 x H100 is compute-bound: read against the
    # measured 794.5 TFLOP/s BF16 matmul rate (Bekman's MAMF table) instead of the 989.4
    # dense peak, it takes 989.4 / 794.5 = 1.245x as long (collectives and the few memory-
    # bound operators move the ratio by less than 0.1%). The bound reads datasheet peaks.
    d0 = tk.Deployment("llama-3.1-70b", "h100-sxm", tp=8)
    d1 = tk.Deployment("llama-3.1-70b", "h100-sxm", tp=8,
                       efficiency=tk.Efficiency(achievable_peaks=1.0))
    ratio = tk.prefill(d1, prompt_tokens=8192).ttft_s / tk.prefill(d0, prompt_tokens=8192).ttft_s
    assert ratio == pytest.approx(989.4 / 794.5, rel=1e-3)
