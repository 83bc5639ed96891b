"""Disaggregated prefill/decode serving: goodput under SLOs, the best pool ratio, seeds S50
and S51 against colocation, and the value-object call forms against 0.1's (the M/D/1 queue
itself: tests/serving/test_queueing.py; the colocated model: tests/serving/test_colocated.py;
the shared results and decode table: tests/serving/test_slo.py)."""

from __future__ import annotations

import math
from functools import cache

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tokenomics as tk
from tokenomics.data.workload import SLO, Link, Workload
from tokenomics.physics.kv import kv_cache_bytes
from tokenomics.physics.memory import max_batch
from tokenomics.physics.step import decode, prefill
from tokenomics.serving.colocated import colocated_goodput
from tokenomics.serving.disagg import (
    best_pool_ratio,
    disaggregated_at_rate,
    disaggregated_goodput,
)
from tokenomics.serving.queueing import mdl_mean_wait_s, mdl_wait_cdf

# 4 devices per instance, the all-reduces run after the kernels (collective_overlap 0), as
# an engine without an overlap scheme runs them (the bound would hide them behind compute)
SERIAL = tk.Efficiency(collective_overlap=0.0)
D70 = tk.Deployment("llama-3.1-70b", "h100-sxm", tp=4, efficiency=SERIAL)
D8 = tk.Deployment("llama-3.1-8b", "h100-sxm")



def crommelin(lam: float, S: float, t: float) -> float:
    """Erlang/Crommelin's alternating sum, written out (usable while rho t/S is small)."""
    rho = lam * S
    return (1 - rho) * sum((lam * (k * S - t)) ** k / math.factorial(k) * math.exp(-lam * (k * S - t))
                           for k in range(int(math.floor(t / S)) + 1))


# ---- disaggregated: the pieces by hand ------------------------------------------------------
def test_disaggregated_goodput_by_hand():
    # Llama 3.1 70B on 4 x H100 per instance, 2,048 in / 256 out, TTFT <= 1 s for 90%,
    # TPOT <= 33 ms, 3 prefill + 1 decode instances, KV over 200 GB/s with 10 us latency.
    g = disaggregated_goodput(D70, D70, 3, 1, 2048, 256, 1.0, 0.033)
    S_p = prefill(D70, 2048).time_s                          # 90.5 ms at batch 1
    kv = 2048 * 327_680                                      # BF16 KV: 80 x 8 x 128 x 2 x 2 B
    assert kv_cache_bytes(D70.model, 2048) == kv
    t_x = 10e-6 + kv / 200e9                                 # 3.37 ms
    # Decode: memory holds 233 sequences at 2,048 + 128 tokens: per device 0.9 x 81,559 MiB
    # = 76.969e9 B, less a quarter of the 141.1e9 B weights (35.277e9), over 2,176 x 327,680 / 4
    # = 178.26e6 B of KV per sequence = 233.9 (233 with the workspace estimate; 205 when the
    # catalog read 80 GB as 80e9 B). Memory allows more than TTFT: TTFT still binds.
    bm = max_batch(D70, 2048 + 128)
    t_bm = decode(D70, bm, 2176).step_time_s
    assert bm == 233 and t_bm < 0.033
    assert g.rate_limits_per_s["memory"] == pytest.approx(bm / (256 * t_bm))
    # Prefill: the utilisation at which P(W <= 1 s - S_p - t_x) = 0.9 (x = 10.0 S_p).
    x = (1.0 - S_p - t_x) / S_p
    rho = g.rate_limits_per_s["ttft"] * S_p / 3
    assert crommelin(rho / S_p, S_p, x * S_p) == pytest.approx(0.9, abs=1e-4)
    assert 0.88 < rho < 0.9
    # 3 x 0.893 / 90.5 ms = 29.6 req/s < 33.7: TTFT binds; per device / 16.
    assert g.binding == "ttft" and g.rate_per_s == pytest.approx(29.6, abs=0.05)
    assert g.n_devices == 16
    assert g.goodput_per_s_per_device == pytest.approx(g.rate_per_s / 16)
    assert g.output_tokens_per_s_per_device == pytest.approx(g.rate_per_s * 256 / 16)
    # TTFT at that rate: the mean is the P-K wait plus service plus transfer; the p90 is
    # the SLO itself (it binds).
    assert g.ttft_mean_s == pytest.approx(mdl_mean_wait_s(rho / S_p, S_p) + S_p + t_x)
    assert g.ttft_quantile_s == pytest.approx(1.0, abs=1e-4)
    assert g.tpot_s <= 0.033 and g.prefill_utilisation == pytest.approx(rho)


def test_disaggregated_at_rate_matches_the_queue():
    r = disaggregated_at_rate(D70, D70, 2, 1, 2048, 256, 1.0, 0.033, 10.0)
    S_p = prefill(D70, 2048).time_s
    t_x = 10e-6 + 2048 * 327_680 / 200e9
    assert r.prefill_utilisation == pytest.approx(5 * S_p)
    assert r.ttft_attainment == pytest.approx(mdl_wait_cdf(5.0, S_p, 1.0 - S_p - t_x))
    # Little's law on the decode instance: B = 10/s x 256 x TPOT(B).
    assert r.decode_batch == pytest.approx(10 * 256 * r.tpot_s, rel=1e-9)
    assert r.tpot_met and r.meets_slo and r.goodput_per_s == pytest.approx(10 * r.attainment)


CAP_P = 1 / prefill(D8, 2048).time_s          # one Llama 3.1 8B prefill instance: 33 req/s


@given(frac=st.floats(0.0, 1.5))
def test_goodput_falls_to_zero_at_the_prefill_pools_capacity(frac):
    # 1 prefill + 4 decode instances of Llama 3.1 8B on one H100 each: decode never binds,
    # the prefill queue does. Goodput = rate x P(TTFT <= SLO): never negative, never NaN,
    # never above the rate, and 0 from the prefill pool's capacity 1/S_p on.
    rate = frac * CAP_P
    r = disaggregated_at_rate(D8, D8, 1, 4, 2048, 256, 2.0, 0.05, rate)
    assert math.isfinite(r.goodput_per_s) and 0.0 <= r.goodput_per_s <= rate + 1e-12
    assert 0.0 <= r.attainment <= 1.0
    if frac >= 1.0:
        assert r.goodput_per_s == 0.0 and r.ttft_mean_s == math.inf
    if 0.9999 <= frac < 1.0:
        assert r.goodput_per_s < 0.3 * rate


def test_goodput_vanishes_approaching_capacity():
    rates = CAP_P * np.array([0.5, 0.9, 0.99, 0.999, 0.99999, 1.0, 2.0])
    g = disaggregated_at_rate(D8, D8, 1, 4, 2048, 256, 2.0, 0.05, rates).goodput_per_s
    assert np.all(np.isfinite(g)) and np.all(g >= 0)
    assert g[4] < 0.01 * rates[4] and g[5] == 0 and g[6] == 0
    assert np.all(np.diff(g[2:]) <= 0)          # past the peak it only falls


@given(f1=st.floats(0.5, 0.98), f2=st.floats(0.5, 0.98), bw=st.floats(5e9, 400e9),
       ttft=st.floats(0.5, 3.0))
def test_disaggregated_goodput_monotone_in_slo_fraction_link_and_ttft(f1, f2, bw, ttft):
    lo, hi = sorted((f1, f2))
    args = (D8, D8, 2, 1, 2048, 256)
    base = disaggregated_goodput(*args, ttft, 0.02, hi, bw).rate_per_s
    assert base > 0
    assert disaggregated_goodput(*args, ttft, 0.02, lo, bw).rate_per_s >= base * (1 - 1e-6)
    assert disaggregated_goodput(*args, ttft, 0.02, hi, 2 * bw).rate_per_s >= base * (1 - 1e-6)
    assert disaggregated_goodput(*args, ttft * 1.5, 0.02, hi, bw).rate_per_s >= \
        base * (1 - 1e-6)


@given(n_p=st.integers(1, 6), n_d=st.integers(1, 6), tpot=st.floats(0.006, 0.05))
def test_disaggregated_goodput_monotone_in_pools_and_tpot(n_p, n_d, tpot):
    g = disaggregated_goodput(D8, D8, n_p, n_d, 1024, 512, 1.0, tpot)
    assert g.rate_per_s > 0 and g.tpot_s <= tpot * (1 + 1e-9)
    assert g.binding in ("ttft", "tpot", "memory", "link")
    assert g.rate_per_s == min(g.rate_limits_per_s.values())
    for more in (disaggregated_goodput(D8, D8, n_p + 1, n_d, 1024, 512, 1.0, tpot),
                 disaggregated_goodput(D8, D8, n_p, n_d + 1, 1024, 512, 1.0, tpot),
                 disaggregated_goodput(D8, D8, n_p, n_d, 1024, 512, 1.0, tpot * 1.2)):
        assert more.rate_per_s >= g.rate_per_s * (1 - 1e-9)


@given(rates=st.lists(st.floats(0.0, 80.0), min_size=2, max_size=6))
def test_disaggregated_tpot_and_batch_grow_with_rate(rates):
    r = disaggregated_at_rate(D8, D8, 3, 1, 1024, 512, 1.0, 0.05, sorted(rates))
    tpot, b = np.asarray(r.tpot_s), np.asarray(r.decode_batch)
    assert np.all(tpot[1:] >= tpot[:-1] * (1 - 1e-12)) and np.all(b[1:] >= b[:-1] - 1e-9)
    assert np.all(np.asarray(r.goodput_per_s) >= 0)
    assert np.all(np.isinf(tpot) == ~np.asarray(r.tpot_met) | np.isinf(tpot))   # inf: no fit


def test_impossible_slos_name_the_binding_constraint():
    # TPOT below the decode step at batch 1 (4.6 ms for 8B at 2,048 + 128 tokens).
    with pytest.raises(tk.TokenomicsError, match=r"tpot binds: tpot_slo_s=0\.004 is below the "
                                                 r"decode step at batch 1"):
        disaggregated_goodput(D8, D8, 1, 1, 2048, 256, 1.0, 0.004)
    # TTFT below prefill (30.3 ms) + transfer of 268 MB at 1 GB/s (268 ms).
    with pytest.raises(tk.TokenomicsError, match=r"ttft binds: .*prefill service time.*KV "
                                                 r"transfer"):
        disaggregated_goodput(D8, D8, 1, 1, 2048, 256, 0.25, 0.05, link_bytes_per_s=1e9)
    with pytest.raises(tk.TokenomicsError, match="ttft binds"):
        disaggregated_at_rate(D8, D8, 1, 1, 2048, 256, 0.01, 0.05, 1.0)
    # Memory: Llama 3.1 70B on 2 H100s holds no 120K-token sequence beside its weights.
    with pytest.raises(tk.DoesNotFitError, match="memory binds"):
        disaggregated_goodput(tk.Deployment("llama-3.1-70b", "h100-sxm", tp=8),
                              tk.Deployment("llama-3.1-70b", "h100-sxm", tp=2), 1, 1,
                              120_000, 1000, 60.0, 0.5)


def test_bad_inputs_are_errors():
    with pytest.raises(tk.TokenomicsError, match="rate_per_s must be >= 0"):
        disaggregated_at_rate(D8, D8, 1, 1, 2048, 256, 1.0, 0.05, -1.0)
    with pytest.raises(tk.TokenomicsError, match=r"slo_fraction must be in \(0, 1\)"):
        disaggregated_goodput(D8, D8, 1, 1, 2048, 256, 1.0, 0.05, slo_fraction=1.0)
    with pytest.raises(tk.TokenomicsError, match="n_decode must be a whole number >= 1"):
        disaggregated_goodput(D8, D8, 1, 0, 2048, 256, 1.0, 0.05)
    with pytest.raises(tk.TokenomicsError, match="link_bytes_per_s must be > 0"):
        disaggregated_goodput(D8, D8, 1, 1, 2048, 256, 1.0, 0.05, link_bytes_per_s=0)
    with pytest.raises(tk.TokenomicsError, match="same model"):
        disaggregated_goodput(D8, D70, 1, 1, 2048, 256, 1.0, 0.05)
    with pytest.raises(tk.TokenomicsError, match="at least 8 devices"):
        best_pool_ratio(D70, D70, 7, 2048, 256, 1.0, 0.033)
    with pytest.raises(tk.TokenomicsError, match="exceeds llama-3.1-8b's maximum context"):
        disaggregated_goodput(D8, D8, 1, 1, 131_000, 2000, 60.0, 0.5)


# ---- best pool ratio -------------------------------------------------------------------------
@pytest.mark.parametrize("total, ttft, tpot", [(32, 1.0, 0.033), (48, 3.0, 0.02),
                                               (36, 60.0, 1.0)])
def test_best_pool_ratio_equals_the_search_over_every_split(total, ttft, tpot):
    # The search keeps O(budget) candidate splits; an exhaustive search over all of them
    # (here by disaggregated_goodput, split by split) finds the same best rate and split.
    s = best_pool_ratio(D70, D70, total, 2048, 256, ttft, tpot)
    n = total // 4
    best = max((disaggregated_goodput(D70, D70, p, d, 2048, 256, ttft, tpot).rate_per_s
                 / total, -(p + d), -p, p, d)
                for p in range(1, n) for d in range(1, n - p + 1))
    assert s.goodput_per_s_per_budget_device == pytest.approx(best[0], rel=1e-12)
    assert (s.n_prefill, s.n_decode) == best[3:]
    assert s.goodput_per_s_per_budget_device == s.table.goodput_per_s_per_budget_device.max()
    assert len(s.table) <= 4 * n                               # linear, not n^2 / 2


@pytest.mark.parametrize("total", [40_001, 266_999, 9_999_999])
def test_best_pool_ratio_of_a_fleet_equals_the_search_over_every_prefill_count(total):
    # Past MAX_SPLIT_ROWS prefill counts the search keeps a window around the balance point.
    # Against it, an exhaustive search over every prefill count n_p, each with the most decode
    # instances the rest of the budget holds, rate min(a n_p, b n_d), a and b the one-instance
    # rates of each pool (each read where the other pool is large enough not to bind).
    w, slo = Workload(2048, 256), SLO(1.0, 0.033)
    a = disaggregated_goodput(D70, D70, 1, 10**6, w, slo).rate_per_s
    b = disaggregated_goodput(D70, D70, 10**6, 1, w, slo).rate_per_s
    n_p = np.arange(1, total // 4)
    rate = np.minimum(a * n_p, b * ((total - 4 * n_p) // 4))
    s = best_pool_ratio(D70, D70, total, w, slo)
    assert s.goodput_per_s_per_budget_device == pytest.approx(rate.max() / total, rel=1e-12)
    assert s.n_prefill == n_p[np.argmax(rate)]
    assert len(s.table) <= 4 * 4096                       # bounded, whatever the budget


def test_best_pool_ratio_picks_six_prefill_for_two_decode():
    s = best_pool_ratio(D70, D70, 32, 2048, 256, 1.0, 0.033)
    # One decode instance takes 33.7 req/s within memory; a prefill instance ~9.9 within the
    # TTFT SLO: six prefill instances feed two decode instances.
    assert (s.n_prefill, s.n_decode) == (6, 2)
    assert s.goodput.rate_per_s == pytest.approx(6 / 3 * 29.6, abs=0.1)
    assert s.goodput.binding == "ttft"


# ---- S50: goodput, not raw throughput --------------------------------------------------------
@cache
def coloc(inp: int, out: int, ttft: float, tpot: float, budget: int = 2048) -> float:
    g = colocated_goodput(D70, 8, inp, out, ttft, tpot, token_budget=budget)
    return g.goodput_per_s_per_device


@cache
def disagg(inp: int, out: int, ttft: float, tpot: float, total: int = 32,
           bw: float = 200e9) -> float:
    return best_pool_ratio(D70, D70, total, inp, out, ttft, tpot,
                           link_bytes_per_s=bw).goodput_per_s_per_budget_device


def test_S50_splitting_does_not_raise_raw_throughput():
    # Llama 3.1 70B, 4 x H100 per instance, 32 GPUs, 2,048 in / 256 out, SLOs so loose that
    # every device can be kept busy (TTFT 60 s for half the requests, TPOT 1 s).
    # The work per request is fixed: 4 GPUs x 90.5 ms of prefill and 4 GPUs x 256 x
    # 23.7 ms / 205 of decode at the memory-limited batch, so no split exceeds
    # 1 / (0.362 + 0.119) = 2.08 req/s per GPU.
    S_p = prefill(D70, 2048).time_s
    t_bm = decode(D70, 205, 2176).step_time_s
    bound = 1 / (4 * S_p + 4 * 256 * t_bm / 205)
    assert bound == pytest.approx(2.08, abs=0.01)
    s = best_pool_ratio(D70, D70, 32, 2048, 256, 60.0, 1.0, slo_fraction=0.5)
    assert (s.n_prefill, s.n_decode) == (6, 2)
    assert s.goodput_per_s_per_budget_device <= bound            # 2.07
    # Colocated, the same GPUs serve both phases in mixed steps (the prompt's FLOPs fill the
    # decode steps' idle compute): at least as much raw throughput (about 2.2 req/s per GPU).
    c = colocated_goodput(D70, 8, 2048, 256, 60.0, 1.0, slo_fraction=0.5)
    raw_coloc = c.goodput_per_s_per_device
    assert raw_coloc >= s.goodput_per_s_per_budget_device
    # The state it stops at, from the step engine: Little's law, the prompt in chunks of the
    # budget the decodes leave, the TPOT as the harmonic mean of the chunked and decode-only
    # steps; and the instance is full, its memory (the most sequences that fit beside a
    # 2,048-token step's workspace) or its prompt slot (rho -> 1).
    from tokenomics.physics.memory import memory_fit
    from tokenomics.serving.batching import mixed_step_seconds

    lam, B = c.rate_per_s / 8, c.decode_batch
    assert B == pytest.approx(lam * 256 * c.tpot_s, rel=1e-5)
    n = 2048 / (2048 - B)
    t_c = float(mixed_step_seconds(D70, B, 2176.0, 2048.0, 0.0, 1 / n))
    t_d = float(mixed_step_seconds(D70, B, 2176.0, 2048.0, 0.0, 0.0))
    rho = lam * n * t_c
    assert c.prefill_utilisation == pytest.approx(rho, rel=1e-5) and rho <= 1
    assert 1 / (rho / t_c + (1 - rho) / t_d) == pytest.approx(c.tpot_s, rel=1e-5)
    fits = np.asarray(memory_fit(D70, np.arange(1, 300), 2176, tokens_per_step=2048).fits)
    bmax = int(np.flatnonzero(fits)[-1]) + 1
    assert B <= bmax and (bmax - B < 1 or rho > 0.98)
    assert raw_coloc == pytest.approx(c.rate_per_s / 32, rel=1e-12)


def test_S50_disaggregation_raises_goodput_under_a_strict_tpot():
    # Same system, TTFT <= 3 s for 90%, TPOT <= 20 ms (50 tokens/s per user), a 2,048-token
    # budget. Disaggregated (6 prefill : 2 decode): 1.79 req/s per GPU, each decode instance
    # running 147 sequences at 20 ms. Colocated: a step carrying a ~2,020-token chunk takes
    # 91 ms, so the TPOT SLO caps the prompt slot's utilisation at 0.45 (25 sequences
    # decoding): 1.23 req/s per GPU.
    strict_d, strict_c = disagg(2048, 256, 3.0, 0.02), coloc(2048, 256, 3.0, 0.02)
    s = best_pool_ratio(D70, D70, 32, 2048, 256, 3.0, 0.02)
    # By hand from the step engine: a decode instance at 2,048 + 128 tokens keeps its TPOT
    # at 20 ms up to the batch b* where decode(b*) = 20 ms (the step is affine between whole
    # batches: 146 + (20 ms - t(146)) / (t(147) - t(146))); the 2 decode instances then
    # finish 2 b* / (256 x 20 ms) requests a second, the TPOT-bound rate, over 32 GPUs.
    t146, t147 = (float(decode(D70, b, 2176).step_time_s) for b in (146, 147))
    assert t146 <= 0.02 < t147
    b_star = 146 + (0.02 - t146) / (t147 - t146)
    assert s.goodput.decode_batch == pytest.approx(b_star, rel=1e-6)
    tpot_rate = 2 * b_star / (256 * 0.02)
    assert s.goodput.rate_limits_per_s["tpot"] == pytest.approx(tpot_rate, rel=1e-6)
    assert s.goodput.binding == "tpot" and s.goodput.rate_limits_per_s["ttft"] > tpot_rate
    assert strict_d == pytest.approx(tpot_rate / 32, rel=1e-6)
    c = colocated_goodput(D70, 8, 2048, 256, 3.0, 0.02)
    # The colocated state is the fixed point of four laws, each checked here from the step
    # engine: Little's law for the decodes, B = lambda x 256 x TPOT; a prompt in
    # n = 2048 / (2048 - B) chunks (the decodes take their tokens of the budget first); the
    # prompt slot busy rho = lambda n t_c of the time; and the TPOT a sequence sees, the
    # harmonic mean of the chunked and the decode-only steps, at the 20 ms SLO.
    from tokenomics.serving.batching import mixed_step_seconds

    lam = c.rate_per_s / 8
    B = c.decode_batch
    assert B == pytest.approx(lam * 256 * 0.02, rel=1e-5)     # to the rate search's tolerance
    n = 2048 / (2048 - B)
    t_c = float(mixed_step_seconds(D70, B, 2176.0, 2048.0, 0.0, 1 / n))
    t_d = float(mixed_step_seconds(D70, B, 2176.0, 2048.0, 0.0, 0.0))
    rho = lam * n * t_c
    assert c.prefill_utilisation == pytest.approx(rho, rel=1e-5)
    assert 1 / (rho / t_c + (1 - rho) / t_d) == pytest.approx(0.02, rel=1e-5)
    assert 0.4 < rho < 0.5 and 20 < B < 30        # the comment's 0.45 and 25
    assert strict_c == pytest.approx(c.rate_per_s / 32, rel=1e-12)
    assert strict_d > 1.4 * strict_c
    # Under a loose TPOT (100 ms) the interference no longer binds and colocation is ahead
    # (2.17 vs 2.00 req/s per GPU): disaggregation pays for goodput, not throughput.
    assert coloc(2048, 256, 3.0, 0.1) > 1.05 * disagg(2048, 256, 3.0, 0.1)


def test_S50_with_step_overheads_disaggregation_beats_every_chunk_size():
    # In the pure roofline a colocated scheduler with ~256-token chunks (about the ridge,
    # 295 FLOP/B) lets prompts ride in the decode steps' idle compute at no cost. With a
    # per-step overhead (2 ms) and realistic MFU 0.5 / MBU 0.8, small chunks cost steps:
    # at TPOT <= 20 ms disaggregation (0.89 req/s per GPU) beats chunks of 256 (0.75),
    # 512 (0.46) and 2,048 (0.36).
    eff = tk.Efficiency(mfu=0.5, mbu=0.8, step_overhead_s=2e-3, collective_overlap=0.0)
    d = tk.Deployment("llama-3.1-70b", "h100-sxm", tp=4, efficiency=eff)
    dis = best_pool_ratio(d, d, 32, 2048, 256, 3.0, 0.02).goodput_per_s_per_budget_device
    assert dis == pytest.approx(0.887, abs=0.01)
    for budget in (256, 512, 2048):
        col = colocated_goodput(d, 8, 2048, 256, 3.0, 0.02, token_budget=budget)
        assert dis > col.goodput_per_s_per_device


# ---- S51: when disaggregation pays ----------------------------------------------------------
def test_S51_pays_most_with_long_inputs_and_short_outputs():
    # TTFT <= 3 s, TPOT <= 15 ms, 32 GPUs. Disaggregated / colocated goodput per GPU:
    # 4096/128: 0.949 / 0.424 = 2.24; 2048/256: 1.67 / 0.77 = 2.17; 1024/512: 2.04 / 1.29 =
    # 1.59; 512/1024: 1.50 / 1.42 = 1.05 (the decode work, which splitting does not help,
    # dominates).
    mixes = [(4096, 128), (2048, 256), (1024, 512), (512, 1024)]
    gain = [disagg(i, o, 3.0, 0.015) / coloc(i, o, 3.0, 0.015) for i, o in mixes]
    np.testing.assert_allclose(gain, [2.24, 2.17, 1.59, 1.05], atol=0.02)
    assert all(a > b for a, b in zip(gain, gain[1:], strict=False))


def test_S51_pays_most_under_strict_slos():
    # 2,048 in / 256 out, TTFT <= 3 s: the gain falls as the TPOT SLO loosens and turns into
    # a loss: 15 ms: 2.17, 20 ms: 1.46, 33 ms: 1.14, 100 ms: 0.92.
    tpots = [0.015, 0.02, 0.033, 0.1]
    gain = [disagg(2048, 256, 3.0, t) / coloc(2048, 256, 3.0, t) for t in tpots]
    np.testing.assert_allclose(gain, [2.17, 1.46, 1.14, 0.92], atol=0.02)
    assert all(a > b for a, b in zip(gain, gain[1:], strict=False))
    assert gain[-1] < 1


def test_S51_slow_link_lets_colocation_win():
    # 4,096 in / 128 out, TTFT <= 3 s, TPOT <= 20 ms. The KV of one prompt is 1.34 GB
    # (4,096 x 327,680 B). At 1 GB/s per prefill instance the transfers cap each prefill
    # instance at 0.75 req/s: 7 x 0.745 / 32 = 0.163 req/s per GPU, against 0.672 colocated;
    # at 200 GB/s the transfer takes 6.7 ms and disaggregation wins (1.02).
    col = coloc(4096, 128, 3.0, 0.02)
    slow, fast = disagg(4096, 128, 3.0, 0.02, bw=1e9), disagg(4096, 128, 3.0, 0.02, bw=200e9)
    assert slow == pytest.approx(7 * 1e9 / (4096 * 327_680) / 32, rel=1e-6)
    assert slow < col < fast
    assert col == pytest.approx(0.672, abs=0.01) and fast == pytest.approx(1.021, abs=0.01)


def test_S51_small_scale_favours_colocation():
    # 2,048 in / 256 out, TTFT <= 3 s, TPOT <= 33 ms. Colocated goodput per GPU does not
    # depend on scale (1.75). Disaggregated needs one instance of each: with 8 GPUs the only
    # split is 1:1 and the decode instance idles (1.33 req/s per GPU); from 16 GPUs (3:1)
    # the pools balance (2.00).
    col = coloc(2048, 256, 3.0, 0.033)
    small = disagg(2048, 256, 3.0, 0.033, total=8)
    large = [disagg(2048, 256, 3.0, 0.033, total=n) for n in (16, 32, 64)]
    assert small == pytest.approx(1.333, abs=0.01) and col == pytest.approx(1.75, abs=0.01)
    assert small < col < min(large)


# ---- value objects against 0.1's loose arguments ---------------------------------------------
def _fields(x):
    return {k: np.asarray(v) if isinstance(v, (np.ndarray, list)) else v
            for k, v in vars(x).items()}


def assert_same_attainment(a, b):
    fa, fb = _fields(a), _fields(b)
    assert fa.keys() == fb.keys()
    for k in fa:
        np.testing.assert_array_equal(fa[k], fb[k], err_msg=k)    # exact, not approximate


def test_disaggregated_goodput_new_form_equals_0_1_forms():
    w, s, ln = Workload(2048, 256), SLO(ttft_s=0.7, tpot_s=0.02, fraction=0.8), Link(3e10, 1e-4)
    new = disaggregated_goodput(D8, D8, 2, 1, w, s, ln)
    assert new == disaggregated_goodput(D8, D8, 2, 1, 2048, 256, 0.7, 0.02, 0.8, 3e10, 1e-4)
    assert new == disaggregated_goodput(D8, D8, 2, 1, input_tokens=2048, output_tokens=256,
                                        ttft_slo_s=0.7, tpot_slo_s=0.02, slo_fraction=0.8,
                                        link_bytes_per_s=3e10, link_latency_s=1e-4)
    assert new == disaggregated_goodput(prefill_dep=D8, decode_dep=D8, n_prefill=2, n_decode=1,
                                        workload=w, slo=s, link=ln)
    # 0.1's TTFT as a pint Quantity (700 ms = 0.7 s) is converted as 0.1 converted it.
    assert new == disaggregated_goodput(D8, D8, 2, 1, 2048, 256, tk.Q_(700, "ms"), 0.02, 0.8,
                                        3e10, 1e-4)
    # Defaults: 0.1's slo_fraction 0.9 and link 200 GB/s, 10 us are SLO's and Link.nvlink_like.
    d = disaggregated_goodput(D8, D8, 2, 1, 2048, 256, 0.7, 0.02)
    assert d == disaggregated_goodput(D8, D8, 2, 1, w, SLO(0.7, 0.02))
    assert d == disaggregated_goodput(D8, D8, 2, 1, w, SLO(0.7, 0.02), Link.nvlink_like())
    assert d != new


def test_disaggregated_at_rate_new_form_equals_0_1_forms():
    rates = np.linspace(0.0, 40.0, 9)
    new = disaggregated_at_rate(D8, D8, 1, 4, Workload(2048, 256), SLO(2.0, 0.05), rates,
                                Link(1e11, 0.0))
    assert_same_attainment(new, disaggregated_at_rate(D8, D8, 1, 4, 2048, 256, 2.0, 0.05, rates,
                                                      0.9, 1e11, 0.0))
    assert_same_attainment(new, disaggregated_at_rate(D8, D8, 1, 4, 2048, 256, 2.0, 0.05, rates,
                                                      link_bytes_per_s=1e11, link_latency_s=0))


def test_best_pool_ratio_new_form_equals_0_1_form():
    new = best_pool_ratio(D70, D70, 32, Workload(4096, 128), SLO(3.0, 0.02), Link(1e9))
    old = best_pool_ratio(D70, D70, 32, 4096, 128, 3.0, 0.02, link_bytes_per_s=1e9,
                          link_latency_s=0.0)
    assert (new.n_prefill, new.n_decode, new.goodput) == (old.n_prefill, old.n_decode, old.goodput)
    assert new.goodput_per_s_per_budget_device == old.goodput_per_s_per_budget_device
    assert new.table.equals(old.table)


@settings(max_examples=20, deadline=None)
@given(inp=st.integers(128, 4096), out=st.integers(16, 1024), ttft=st.floats(0.3, 3.0),
       tpot=st.floats(0.01, 0.1), frac=st.floats(0.5, 0.99))
def test_new_and_0_1_forms_agree_on_any_request(inp, out, ttft, tpot, frac):
    assert disaggregated_goodput(D8, D8, 2, 1, Workload(inp, out), SLO(ttft, tpot, frac)) == \
        disaggregated_goodput(D8, D8, 2, 1, inp, out, ttft, tpot, frac)


def test_value_object_calls_check_what_the_objects_cannot():
    w = Workload(2048, 256)
    # SLO accepts fraction 1 (every request); under Poisson arrivals no rate meets it.
    with pytest.raises(tk.TokenomicsError, match=r"slo\.fraction must be in \(0, 1\)"):
        disaggregated_goodput(D8, D8, 1, 1, w, SLO(1.0, 0.05, fraction=1.0))
    with pytest.raises(tk.TokenomicsError, match="workload must be a Workload"):
        disaggregated_goodput(D8, D8, 1, 1, workload="2048/256", slo=SLO(1.0, 0.05))
    with pytest.raises(tk.TokenomicsError, match="link must be a Link"):
        disaggregated_goodput(D8, D8, 1, 1, w, SLO(1.0, 0.05), 1e9)


def test_calls_that_fit_neither_form_name_the_new_signature():
    new_sig = r"disaggregated_goodput\(prefill_dep, decode_dep, n_prefill, n_decode, " \
              r"workload, slo, link=None\)"
    with pytest.raises(tk.TokenomicsError, match=r"missing a required argument: 'slo'.*" + new_sig):
        disaggregated_goodput(D8, D8, 1, 1, Workload(2048, 256))
    with pytest.raises(tk.TokenomicsError, match=r"'tpot_slo_s'.*" + new_sig):
        disaggregated_goodput(D8, D8, 1, 1, 2048, 256, 1.0)
    with pytest.raises(tk.TokenomicsError, match=new_sig):     # new objects, 0.1 keyword
        disaggregated_goodput(D8, D8, 1, 1, Workload(2048, 256), SLO(1.0, 0.05),
                              link_bytes_per_s=1e9)


def test_the_legacy_form_checks_its_deployments_first():
    # a Model where the prefill deployment goes raised AttributeError (issue 25)
    d8 = tk.Deployment("llama-3.1-8b", "h100-sxm")
    with pytest.raises(tk.TokenomicsError, match="prefill_dep needs a Deployment"):
        tk.disaggregated_goodput(tk.model("llama-3.1-8b"), d8, 2, 2, 8192, 256, 1.0, 0.05)
