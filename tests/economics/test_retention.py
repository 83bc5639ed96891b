"""KV retention: the lognormal idle gap and the keep / offload / drop policy that prices HBM
residence against a cache miss (S62)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import integrate, stats

import tokenomics as tk
from tokenomics.core.units import Q_
from tokenomics.data.bibliography import catalog_dir, data_sources
from tokenomics.economics.retention import (
    GapDistribution,
    RetentionPrices,
    load_retention_defaults,
    lognormal_params,
    retention_policy,
)
from tokenomics.serving.agents import agent_step
from tokenomics.serving.tiers import hbm_usd_per_byte_s, tier


@pytest.fixture(scope="module")
def d70x8():
    # The source's convention (S62): an H100 holds 80 GB = 80e9 B, passed explicitly; the
    # catalog's driver-visible 81,559 MiB is checked in test_hbm_rent_uses_visible_memory.
    h100 = tk.hardware("h100-sxm").with_(mem_capacity_bytes=80e9)
    return tk.Deployment("llama-3.1-70b", h100, tp=8)


@pytest.fixture(scope="module")
def d8():
    return tk.Deployment("llama-3.1-8b", "h100-sxm")


# --------------------------------------------------------------------------------------------
# Idle-gap distribution
# --------------------------------------------------------------------------------------------
def test_gap_fit_to_the_source():
    # S62: median gap 25 min; S60: mean up to 15x the median -> sigma = sqrt(2 ln 15) = 2.327.
    mu, sigma = lognormal_params(25 * 60, 15)
    assert mu == pytest.approx(math.log(1500)) and sigma == pytest.approx(math.sqrt(2 * math.log(15)))
    g = GapDistribution.from_median_mean()
    assert g.median_s == pytest.approx(1500) and g.mean_s == pytest.approx(15 * 1500)
    assert g.cdf(1500) == pytest.approx(0.5)


@given(st.floats(10.0, 1e5), st.floats(1.01, 50.0))
def test_lognormal_round_trip(median, ratio):
    g = GapDistribution.from_median_mean(median, ratio)
    assert g.median_s == pytest.approx(median, rel=1e-12)
    assert g.mean_s / g.median_s == pytest.approx(ratio, rel=1e-12)
    ref = stats.lognorm(s=g.sigma, scale=median)
    t = np.array([0.1, 1.0, 3.0]) * median
    assert np.allclose(g.cdf(t), ref.cdf(t), rtol=1e-10, atol=1e-14)
    assert np.allclose(g.hazard(t), ref.pdf(t) / ref.sf(t), rtol=1e-8)


def test_expected_min_closed_form_against_quadrature():
    g = GapDistribution.from_median_mean()
    t = np.array([0.0, 60.0, 600.0, 3600.0, 86400.0, np.inf])
    em = g.expected_min(t)
    # E[min(G, t)] = integral_0^t P(G > u) du.
    for ti, ei in zip(t[1:-1], em[1:-1], strict=True):
        ref, _ = integrate.quad(lambda u: g.sf(u), 0, ti, limit=200)
        assert ei == pytest.approx(ref, rel=1e-7)
    assert em[0] == 0.0 and em[-1] == pytest.approx(g.mean_s)
    assert np.all(np.diff(em) > 0) and np.all(em[:-1] <= t[:-1])
    assert isinstance(g.expected_min(600), float)


def test_gap_errors():
    with pytest.raises(tk.TokenomicsError, match="mean_to_median must be > 1.*got 1"):
        lognormal_params(1500, 1.0)
    with pytest.raises(tk.TokenomicsError, match=r"median_s must be > 0 \[s\], got -5"):
        lognormal_params(-5, 15)
    with pytest.raises(tk.TokenomicsError, match="t_s must be >= 0 seconds"):
        GapDistribution.from_median_mean().cdf(-1)


# --------------------------------------------------------------------------------------------
# S62: retention policy
# --------------------------------------------------------------------------------------------
def test_S62_gpu_time_only_offloads_at_once(d70x8):
    # The source's ~40 GB: Llama 3.1 70B's 119K-token agent prefix, 119,000 x 327,680 B = 39 GB.
    p = retention_policy(d70x8, 119_000, miss_usd=0)
    assert p.kv_bytes == pytest.approx(119_000 * 327_680) and 38e9 < p.kv_bytes < 42e9
    # HBM rent of the 39 GB: 39 GB x $3.78/h / 80 GB = $1.84/h. A DRAM reload: 4.9 GB per
    # device / 64 GB/s = 76 ms on 8 GPUs at $3.78/h = $0.00064 = 1.25 s of that HBM rent.
    assert p.hbm_usd_per_s * 3600 == pytest.approx(39.0 * 3.78 / 80, rel=1e-3)
    assert p.reload_usd / p.hbm_usd_per_s == pytest.approx(80 / 64, rel=1e-3)
    # Returns are far rarer than one per 1.25 s, so GPU-time accounting offloads at once and
    # drops after ~3 h, when the return rate falls to (DRAM rent) / (recompute - reload).
    assert p.t1_s == 0.0 and 2 * 3600 < p.t2_s < 5 * 3600
    assert float(p.gap.hazard(p.t2_s)) == pytest.approx(p.drop_hazard_threshold_per_s, rel=1e-3)
    assert p.expected_cost_usd < min(p.keep_cost_usd, p.offload_now_cost_usd,
                                     p.drop_now_cost_usd)
    assert p.p_hbm_hit + p.p_reload + p.p_recompute == pytest.approx(1.0)


def _lognormal_hazard_by_hand(t_s, median_s=1500.0, mean_to_median=15.0):
    # f(t) / (1 - F(t)) of a lognormal with mu = ln(median), sigma = sqrt(2 ln(mean/median)).
    mu, sigma = math.log(median_s), math.sqrt(2 * math.log(mean_to_median))
    z = (math.log(t_s) - mu) / sigma
    pdf = math.exp(-z * z / 2) / (sigma * t_s * math.sqrt(2 * math.pi))
    return pdf / (0.5 * math.erfc(z / math.sqrt(2)))


def test_S62_golden_time_of_5_to_10_minutes_under_the_default_prices(d70x8):
    # Documented defaults: H100 SXM at $3.78/h (HBM $0.0473/GB-hour), host DRAM at
    # $10/GB over 5 years ($2.28e-4/GB-hour), a reload at 64 GB/s, and the stated price of a
    # miss in price_catalog/kv_tiers.toml: $8.40 per million context tokens = $1.00 here.
    p = retention_policy(d70x8, 119_000)
    assert p.miss_usd == pytest.approx(8.4e-6 * 119_000)
    assert 5 * 60 <= p.t1_s <= 10 * 60                                    # 6.7 min
    assert p.tier == "dram" and p.t1_s < p.t2_s                           # then DRAM, then drop
    # First-order condition by hand: the return rate at t1 equals (c_H - c_T) / R_r, with
    # c_H = 39.0 GB x 3.78 / 80 per hour, c_T = 39.0 GB x 10 / (5 x 8766) per hour, and
    # R_r = 76 ms on 8 GPUs at $3.78/h plus the $1.00 miss.
    kv_gb = 119_000 * 327_680 / 1e9
    c_h = kv_gb * 3.78 / 80 / 3600
    c_t = kv_gb * 10 / (5 * 8766) / 3600
    r_r = 119_000 * 327_680 / 8 / 64e9 * 8 * 3.78 / 3600 + 8.4e-6 * 119_000
    assert _lognormal_hazard_by_hand(p.t1_s) == pytest.approx((c_h - c_t) / r_r, rel=2e-3)
    # The bracket of miss prices that puts t1 at 5 and at 10 minutes, from the same condition:
    # m = (c_H - c_T) / hazard(t) - GPU cost of the reload.
    gpu_reload = r_r - 8.4e-6 * 119_000
    lo, hi = ((c_h - c_t) / _lognormal_hazard_by_hand(t) - gpu_reload for t in (300.0, 600.0))
    assert 0.8 < lo < 0.9 and 1.2 < hi < 1.3 and lo < p.miss_usd < hi
    assert list(p.miss_usd_for_hbm_residence([300.0, 600.0])) == pytest.approx([lo, hi],
                                                                               rel=2e-3)
    for m, t in ((lo, 300.0), (hi, 600.0)):
        assert retention_policy(d70x8, 119_000, miss_usd=m).t1_s == pytest.approx(t, rel=2e-3)
    # Cost curve: its minimum is the policy's cost.
    assert p.cost_curve_usd.min() >= p.expected_cost_usd - 1e-9
    assert p.to_frame().expected_cost_usd.min() == pytest.approx(p.expected_cost_usd, rel=1e-3)


def test_S62_default_miss_price_is_sourced_and_labelled_an_assumption():
    d = load_retention_defaults()
    assert d.miss_usd_per_token == pytest.approx(8.40e-6)                 # $8.40 per Mtok
    bib = data_sources(catalog_dir("price_catalog"))
    assert bib[d.source].kind == "assumption"
    assert "S62" in bib[d.source].title and "assumption" in d.note
    # The note's plausibility check: what the API market charges a customer for a miss over
    # a hit (cache write minus cache read) spans $2.30-28.50 per million tokens across the
    # Anthropic models of the price catalog, and $8.40 lies inside.
    t = tk.price_table()
    t = t[t.provider == "Anthropic"]
    gap = pd.concat([t.cache_write_5m_usd_per_mtok - t.cached_input_usd_per_mtok,
                     t.cache_write_1h_usd_per_mtok - t.cached_input_usd_per_mtok]).dropna()
    assert (gap.min(), gap.max()) == pytest.approx((2.30, 28.50))
    assert gap.min() < d.miss_usd_per_token * 1e6 < gap.max()
    assert "$2.30-28.50" in d.note and "Opus 5: $5.75" in d.note


def test_retention_occupancy_is_littles_law_by_hand(d70x8):
    # 100 sessions idling with the source's gaps (mean 375 min): 100 / 22,500 gaps per second.
    # L = lambda W, W = E[min(G, t)] = integral of P(G > g) from 0 to t (a lognormal with
    # median 25 min and sigma sqrt(2 ln 15)), integrated numerically here.
    p = retention_policy(d70x8, 119_000)
    g = stats.lognorm(s=math.sqrt(2 * math.log(15)), scale=1500.0)
    w1 = integrate.quad(g.sf, 0, p.t1_s, limit=200)[0]
    w2 = integrate.quad(g.sf, 0, p.t2_s, limit=200)[0]
    lam = 100 / 22_500
    o = p.occupancy(lam)
    assert o.sessions_in_hbm == pytest.approx(lam * w1, rel=1e-6)
    assert o.sessions_in_tier == pytest.approx(lam * (w2 - w1), rel=1e-6)
    kv = 119_000 * 327_680
    assert o.hbm_bytes == pytest.approx(lam * w1 * kv, rel=1e-6)
    assert o.hbm_fraction == pytest.approx(lam * w1 * kv / (8 * 80e9), rel=1e-6)
    # The tier holds one copy of the KV; 8 GPUs reach 8 x 250 GB of the node's DRAM.
    assert o.tier_fraction == pytest.approx(lam * (w2 - w1) * kv / 2e12, rel=1e-6)
    # Linear in the rate, arrays welcome; a negative rate is an error.
    many = p.occupancy(np.array([0.0, lam, 2 * lam]))
    assert np.allclose(many.tier_bytes, [0.0, o.tier_bytes, 2 * o.tier_bytes])
    with pytest.raises(tk.TokenomicsError, match="idle_gaps_per_s must be >= 0"):
        p.occupancy(-1.0)


@given(st.floats(0.25, 4.0), st.floats(1.05, 4.0))
def test_S62_dearer_hbm_shortens_hbm_residence(d70x8, scale, factor):
    # Default prices otherwise; HBM scale x and scale x factor its catalog price.
    h = scale * hbm_usd_per_byte_s("h100-sxm")
    a = retention_policy(d70x8, 119_000, hbm_usd_per_byte_s=h)
    b = retention_policy(d70x8, 119_000, hbm_usd_per_byte_s=h * factor)
    assert b.t1_s <= a.t1_s * (1 + 1e-6)
    if a.t1_s > 0:
        assert b.t1_s < a.t1_s


@given(st.floats(0.05, 5.0), st.floats(1.05, 4.0))
def test_S62_dearer_misses_keep_kv_longer_in_hbm(d70x8, miss, factor):
    # The mirror of dearer HBM: a pricier miss raises R_r, lowers the hazard threshold
    # (c_H - c_T) / R_r, and the decreasing hazard meets it later.
    a = retention_policy(d70x8, 119_000, miss_usd=miss)
    b = retention_policy(d70x8, 119_000, miss_usd=miss * factor)
    assert b.t1_s >= a.t1_s * (1 - 1e-6)
    assert b.expected_cost_usd >= a.expected_cost_usd - 1e-12      # never cheaper


@given(st.floats(2.0, 8.0))
def test_S62_dearer_device_hours_shorten_hbm_residence(d70x8, usd_per_hour):
    # Raising the rental price raises the HBM rent and the GPU cost of a reload together; the
    # rent grows faster (the reload is 76 ms), so the KV leaves HBM sooner.
    a = retention_policy(d70x8, 119_000, usd_per_device_hour=usd_per_hour)
    b = retention_policy(d70x8, 119_000, usd_per_device_hour=usd_per_hour * 1.5)
    assert b.t1_s < a.t1_s


@given(st.integers(2_000, 128_000))
def test_S62_default_golden_time_does_not_depend_on_the_session_length(d70x8, tokens):
    # The stated miss price scales with the context like the HBM rent, so the hazard
    # threshold (c_H - c_T) / R_r hardly moves: only the reload's GPU time (0.06% of R_r)
    # and its latency floor are not per token.
    p = retention_policy(d70x8, tokens)
    assert p.t1_s == pytest.approx(retention_policy(d70x8, 119_000).t1_s, rel=2e-3)


@given(st.floats(0.2, 5.0), st.floats(1.05, 4.0))
def test_S62_dearer_recompute_keeps_kv_longer(d70x8, usd, factor):
    base = retention_policy(d70x8, 119_000)
    a = retention_policy(d70x8, 119_000, recompute_usd=base.reload_usd + usd)
    b = retention_policy(d70x8, 119_000, recompute_usd=base.reload_usd + usd * factor)
    assert b.t2_s >= a.t2_s * (1 - 1e-6) and b.t1_s >= a.t1_s * (1 - 1e-6)


@pytest.mark.parametrize("kw", [{}, {"miss_usd": 0}, {"tier": "ssd", "miss_usd": 0.3},
                                {"tier": "network", "wait_usd_per_s": 0.05},
                                {"miss_usd": 1.0, "reload_usd": 5.0, "recompute_usd": 5.0}])
def test_retention_policy_matches_brute_force(d70x8, kw):
    # C(t1, t2) on a fine 2-D grid with t1 <= t2: the policy is at least as cheap.
    p = retention_policy(d70x8, 119_000, **kw)
    g = p.gap
    t = np.concatenate([[0.0], np.geomspace(0.5, 400 * 86400, 2000), [np.inf]])
    E, F = g.expected_min(t), g.cdf(t)
    c = (p.hbm_usd_per_s * E[:, None] + p.tier_usd_per_s * (E[None, :] - E[:, None])
         + (F[None, :] - F[:, None]) * p.reload_usd + (1 - F[None, :]) * p.recompute_usd)
    c[np.tril_indices(len(t), -1)] = np.inf
    i, j = np.unravel_index(np.argmin(c), c.shape)
    assert p.expected_cost_usd <= c[i, j] * (1 + 1e-9)
    assert p.expected_cost_usd == pytest.approx(c[i, j], rel=1e-5)
    assert p.t1_s == pytest.approx(t[i], rel=0.02, abs=1e-9)
    assert p.t2_s == pytest.approx(t[j], rel=0.02)


def test_retention_policy_drops_without_offload_when_no_tier_pays(d70x8):
    # A tier whose reload costs as much as recomputing is never worth filling.
    p = retention_policy(d70x8, 119_000, miss_usd=1.0, reload_usd=5.0, recompute_usd=5.0)
    assert p.t1_s == p.t2_s and p.p_reload == 0.0


def test_retention_policy_errors(d70x8):
    with pytest.raises(tk.TokenomicsError, match=r"hbm_usd_per_byte_s must be >= 0 \[USD/B/s\]"
                                                 r", got -1"):
        retention_policy(d70x8, 119_000, hbm_usd_per_byte_s=-1.0)
    with pytest.raises(tk.TokenomicsError, match=r"usd_per_device_hour must be >= 0"):
        retention_policy(d70x8, 119_000, usd_per_device_hour=-3.78)
    with pytest.raises(tk.TokenomicsError, match=r"miss_usd must be >= 0 \[USD\], got -1"):
        retention_policy(d70x8, 119_000, miss_usd=-1)
    with pytest.raises(tk.TokenomicsError, match="give context_tokens"):
        retention_policy(d70x8)
    with pytest.raises(tk.NotPublishedError, match="grace_lpddr.*no sourced holding cost"):
        retention_policy(d70x8, 119_000, tier="grace_lpddr")
    with pytest.raises(tk.UnknownEntryError, match="unknown KV tier 'disk'"):
        retention_policy(d70x8, 119_000, tier="disk")
    # The C2C tier works once a holding cost is given.
    p = retention_policy(d70x8, 119_000, tier="grace_lpddr",
                         tier_usd_per_byte_s=tier("dram").usd_per_byte_s)
    assert p.reload_s < retention_policy(d70x8, 119_000).reload_s / 5


def test_retention_policy_from_kv_bytes(d70x8):
    # 40 GB given directly: the recompute covers 40e9 / 327,680 = 122,070 tokens.
    p = retention_policy(d70x8, kv_bytes=40e9)
    q = retention_policy(d70x8, 122_070)
    assert p.kv_bytes == 40e9
    assert p.recompute_s == pytest.approx(q.recompute_s)
    assert p.miss_usd == pytest.approx(q.miss_usd, rel=1e-5)              # 122,070 x $8.40/M
    assert 5 * 60 <= p.t1_s <= 10 * 60


def test_scalar_arguments_are_checked(d70x8, d8):
    with pytest.raises(tk.TokenomicsError, match="context_tokens must be a single whole number"):
        retention_policy(d70x8, [1000, 2000])
    with pytest.raises(tk.TokenomicsError, match=r"miss_usd must be a single number \[USD\]"):
        retention_policy(d70x8, 1000, miss_usd=[1, 2])
    with pytest.raises(tk.TokenomicsError, match="context_tokens=200000 exceeds"):
        retention_policy(d8, 200_000)
    with pytest.raises(tk.TokenomicsError, match="batch must be a single whole number"):
        agent_step(d8, batch=[1, 2])


# --------------------------------------------------------------------------------------------
# The prices as one value object, and the 0.1 keyword form
# --------------------------------------------------------------------------------------------
def _same_policy(a, b):
    # Every field equal: floats exactly, arrays element by element, the gap by value.
    for f in dataclasses.fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, np.ndarray):
            assert np.array_equal(x, y), f.name
        else:
            assert x == y or (x != x and y != y), f.name


def test_retention_prices_are_checked_and_stored_as_floats():
    p = RetentionPrices(miss_usd=1, usd_per_device_hour=3)
    assert p == RetentionPrices(miss_usd=1.0, usd_per_device_hour=3.0)
    assert type(p.miss_usd) is float and p.wait_usd_per_s == 0.0 and p.reload_usd is None
    # A quantity is converted: $0.063 per minute = 0.063 x 60 = $3.78 per hour.
    assert RetentionPrices(usd_per_device_hour=Q_(0.063, "USD/minute")).usd_per_device_hour \
        == pytest.approx(3.78, rel=1e-12)
    with pytest.raises(tk.TokenomicsError, match=r"miss_usd must be >= 0 \[USD\], got -1"):
        RetentionPrices(miss_usd=-1)
    with pytest.raises(tk.TokenomicsError, match=r"tier_usd_per_byte_s must be a single number "
                                                 r"\[USD/B/s\]"):
        RetentionPrices(tier_usd_per_byte_s=[1e-17, 2e-17])
    with pytest.raises(tk.TokenomicsError, match=r"wait_usd_per_s must be >= 0 \[USD/s\], got inf"):
        RetentionPrices(wait_usd_per_s=math.inf)
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.miss_usd = 2.0  # type: ignore[misc]


@pytest.mark.parametrize("kw", [{}, {"miss_usd": 0}, {"usd_per_device_hour": 2.5},
                                {"hbm_usd_per_byte_s": 1e-14, "wait_usd_per_s": 0.05},
                                {"tier_usd_per_byte_s": 1e-16, "miss_usd": 0.3},
                                {"miss_usd": 1.0, "reload_usd": 5.0, "recompute_usd": 5.0}])
def test_keyword_and_value_object_forms_agree(d70x8, kw):
    old = retention_policy(d70x8, 119_000, **kw)                 # the 0.1 call form
    new = retention_policy(d70x8, 119_000, prices=RetentionPrices(**kw))
    _same_policy(old, new)


def test_value_object_prices_by_hand(d70x8):
    # $2 per device-hour, no miss penalty: 39.0 GB of KV holds 39.0 / 80 of an H100's HBM,
    # 119,000 x 327,680 B x 2 / (3600 x 80e9) USD/s; a DRAM reload moves 1/8 of it per GPU at
    # 64 GB/s after the 80 ns floor, on 8 GPUs at $2/h.
    p = retention_policy(d70x8, 119_000, prices=RetentionPrices(miss_usd=0,
                                                                usd_per_device_hour=2.0))
    kv = 119_000 * 327_680
    assert p.hbm_usd_per_s == pytest.approx(kv * 2.0 / 3600 / 80e9, rel=1e-12)
    reload_s = 80e-9 + kv / 8 / 64e9
    assert p.reload_s == pytest.approx(reload_s, rel=1e-12)
    assert p.reload_usd == pytest.approx(reload_s * 8 * 2.0 / 3600, rel=1e-12)
    assert p.miss_usd == 0.0


def test_price_keywords_apply_on_top_of_the_value_object(d70x8):
    both = retention_policy(d70x8, 119_000, prices=RetentionPrices(miss_usd=5.0),
                            usd_per_device_hour=2.5, miss_usd=0)
    _same_policy(both, retention_policy(d70x8, 119_000, prices=RetentionPrices(
        miss_usd=0, usd_per_device_hour=2.5)))
    assert both.miss_usd == 0.0


def test_unknown_keyword_and_wrong_prices_are_named(d70x8):
    with pytest.raises(tk.TokenomicsError, match=r"unexpected keyword 'miss_price'; it takes "
                                                 r"dep, .*prices .*miss_usd, reload_usd"):
        retention_policy(d70x8, 119_000, miss_price=1.0)
    with pytest.raises(tk.TokenomicsError, match="prices must be a RetentionPrices, got dict"):
        retention_policy(d70x8, 119_000, prices={"miss_usd": 0})


@given(st.floats(0.0, 10.0), st.floats(0.5, 10.0))
def test_keyword_form_equals_value_object_form(d70x8, miss, usd_per_hour):
    _same_policy(retention_policy(d70x8, 119_000, miss_usd=miss, usd_per_device_hour=usd_per_hour),
                 retention_policy(d70x8, 119_000, prices=RetentionPrices(
                     miss_usd=miss, usd_per_device_hour=usd_per_hour)))


def test_hbm_rent_uses_visible_memory():
    # With the catalog's H100 the rent of 39.0 GB is spread over the 81,559 MiB = 85.52e9 B
    # the driver reports: 119,000 x 327,680 B x 3.78 / (3600 x 85,520,809,984) USD/s.
    p = retention_policy(tk.Deployment("llama-3.1-70b", "h100-sxm", tp=8), 119_000, miss_usd=0)
    kv = 119_000 * 327_680
    assert p.hbm_usd_per_s == pytest.approx(kv * 3.78 / 3600 / 85_520_809_984, rel=1e-12)


def test_a_mean_gap_beyond_any_session_is_refused_not_overflowed():
    # 2,326 s x 1e308 overflowed exp() in the moments (issue 25)
    with pytest.raises(tk.TokenomicsError, match="mean gap, at most 1e15 s"):
        tk.GapDistribution.from_median_mean(2326.0, 1e308)
