"""A request's journey (economics/journey.py): the latency budget from keypress to last token.

Figures from the 001 seed (Data Gravity, "How an AI Token Travels Through a Data Center"):
the API gateway's budget is under 1 ms, the router decides "within a few milliseconds",
RoCEv2 hops take 5-10 us (InfiniBand 1-2 us), typical GPU inference gives the first token in
400-600 ms, and SLAs ask TTFT under 200 ms for 99.99% of calls. Its running example: a
12,000-token RFP and a question, 12,022 tokens, to a 70B model at FP8.
"""

from __future__ import annotations

import numpy as np
import pytest

import tokenomics as tk
from tokenomics.economics.journey import load_journey_defaults, request_journey

CAL = tk.efficiency_presets()["calibrated"]
FP8 = dict(weight_dtype="fp8", compute_dtype="fp8", kv_dtype="fp8")
NODE = tk.Deployment("llama-3.1-70b", "h100-sxm", tp=8, efficiency=CAL, **FP8)
ONE = tk.Deployment("llama-3.1-70b", "h100-sxm", efficiency=CAL, **FP8)
RFP = 12_022


def test_the_source_s_step_figures_are_the_defaults():
    d = load_journey_defaults()
    assert d["gateway"].value == pytest.approx(1e-3)        # "under 1 ms" (upper end)
    assert d["router"].value == pytest.approx(3e-3)         # "a few milliseconds"
    assert 5e-6 <= d["fabric_hop"].value <= 10e-6           # RoCEv2 "5-10 us"
    for k in ("gateway", "router", "fabric_hop"):
        assert d[k].source == "journey-datagravity-token-journey"
    for k in ("client_network", "auth_billing", "load_balancer", "tokenize_rate"):
        assert d[k].kind == "assumption"                    # no figure in the source


def test_steps_sum_to_the_totals():
    j = request_journey(NODE, RFP, 500, device_price=2.0)
    f = j.to_frame()
    before_first = f.step.tolist().index("decode")
    assert j.ttft_s == pytest.approx(f.latency_s[:before_first].sum(), rel=1e-12)
    assert j.e2e_s == pytest.approx(f.latency_s.sum(), rel=1e-12)
    assert f.cumulative_s.iloc[-1] == pytest.approx(j.e2e_s, rel=1e-12)
    assert f.cost_usd.sum() == pytest.approx(j.usd_per_request, rel=1e-12)
    # the decode is the other 499 tokens at the steady state's TPOT
    ss = tk.steady_state(NODE, 1, RFP, 500)
    assert f.set_index("step").latency_s["decode"] == pytest.approx(499 * float(ss.tpot_s))


def test_ttft_of_the_source_s_request_on_a_gpu_node_is_typical():
    # the source's 12,022-token request to a 70B model at FP8, on one 8 x H100 node: the
    # first token lands in the 400-600 ms the source calls typical for GPU inference
    assert 0.4 <= request_journey(NODE, RFP, 500, device_price=2.0).ttft_s <= 0.6
    # on one H100 (where the source says an FP8 70B fits) the cold prefill alone is ~1.7 s
    assert request_journey(ONE, RFP, 500, device_price=2.0).ttft_s > 1.0
    # the cache-aware router's hit on the 12,000-token RFP turns it nearly free: under the
    # 200 ms TTFT SLA the source cites
    assert request_journey(ONE, RFP, 500, cached_tokens=12_000, device_price=2.0).ttft_s < 0.2


def test_under_load_the_replica_s_queue_is_the_one_the_simulation_runs():
    # Issue 28: the journey read a continuous-batching replica as one M/D/1 server and its
    # p99 TTFT came out 3.3x simulate_serving's at 80% load (1,034 vs 312 ms on this
    # deployment). Its queue is now tk.replica_ttft's: the wait for a place in the batch,
    # the rest of the step in flight and the steps shared with other prompts.
    d = tk.Deployment("llama-3.1-8b", "h100-sxm", efficiency=CAL)
    cap = float(tk.steady_state(d, "max", 2048, 256).requests_per_s)
    lam = 0.8 * cap
    j = request_journey(d, 2048, 256, arrival_rate_per_s=lam, device_price=2.0)
    rq = tk.replica_ttft(d, 2048, 256, lam)
    f = j.to_frame().set_index("step").latency_s
    assert f["queue"] == pytest.approx(rq.slot_wait_mean_s + rq.sharing_mean_s, rel=1e-12)
    assert f["scheduler"] == pytest.approx(rq.step_residual_mean_s, rel=1e-12)
    assert f["prefill"] == pytest.approx(rq.own_step_s, rel=1e-12)
    rest = j.ttft_s - rq.mean_s                       # the network, gateway, router, ...
    assert j.ttft_p99_s == pytest.approx(rest + rq.p99_s, rel=1e-12)
    assert j.utilisation == pytest.approx(0.8)
    tr = tk.simulate_serving(d, lam, 2048, 256, steps=20_000, seed=0)
    sim_p99 = float(np.percentile(np.asarray(tr.ttft_s)[len(tr.ttft_s) // 4:], 99))
    assert rq.p99_s == pytest.approx(sim_p99, rel=0.2)       # was 3.3x
    with pytest.raises(tk.TokenomicsError, match="429"):
        request_journey(d, 2048, 256, arrival_rate_per_s=1.1 * cap, device_price=2.0)


def test_cost_is_the_replica_s_time_per_request():
    j = request_journey(NODE, RFP, 500, device_price=2.0)
    ss = tk.steady_state(NODE, 1, RFP, 500)
    # 8 devices x $2/h over the replica time one request takes alone: O x TPOT
    assert j.usd_per_request == pytest.approx(8 * 2.0 / 3600 * 500 * float(ss.tpot_s))


def test_steps_are_named_inputs():
    base = request_journey(NODE, 1024, 128, device_price=2.0)
    ib = request_journey(NODE, 1024, 128, device_price=2.0,
                         steps={"fabric_hop": tk.Q_(1.5, "us"), "client_network": 0.08})
    f = ib.to_frame().set_index("step")
    assert f.latency_s["fabric_in"] == pytest.approx(2 * 1.5e-6)
    assert f.source["client_network"] == "user"
    # 60 ms more each way on the client network, 6 us less on the fabric (4 hops)
    assert ib.ttft_s - base.ttft_s == pytest.approx(2 * 0.06 - 4 * 6e-6, rel=1e-9)
    with pytest.raises(tk.TokenomicsError, match="unknown step"):
        request_journey(NODE, 1024, 128, steps={"warp_drive": 1.0}, device_price=2.0)
    with pytest.raises(tk.TokenomicsError, match="gateway"):
        request_journey(NODE, 1024, 128, steps={"gateway": -1.0}, device_price=2.0)


@pytest.mark.parametrize("rate", [0.5, 3.0, 10.0])
def test_the_operating_point_is_the_smallest_concurrency_that_keeps_up(rate):
    # Little's law: the replica runs at the smallest B whose completion rate reaches the
    # arrival rate; found by bisection (issue 25: one steady state per B up to 1.87 million
    # took 8 GB), checked here against every B
    import numpy as np

    from tokenomics.economics.journey import _operating_point
    from tokenomics.serving.steady import steady_state
    d = tk.Deployment("llama-3.1-70b", "h100-sxm", tp=8)
    B = np.arange(1, int(float(steady_state(d, "max", 2048, 256).concurrency)) + 1)
    rps = np.asarray(steady_state(d, B, 2048, 256).requests_per_s, float)
    want = int(B[np.argmax(rps >= rate)])
    ss, _, _ = _operating_point(d, 2048, 256, 0, rate)
    assert float(ss.concurrency) == want
