"""KV tiers: the tier catalog, reload against recompute (S63), the lognormal idle gap, the
keep / offload / drop retention policy (S62) and one agent step on a cached prefix (S61)."""

from __future__ import annotations

import dataclasses
import math
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import integrate, stats

import tokenomics as tk
from tokenomics.data.catalog import catalog_dir, data_sources
from tokenomics.physics.memory import kv_per_sequence_bytes
from tokenomics.serving.tiering import (
    GapDistribution,
    Tier,
    agent_step,
    hbm_usd_per_byte_s,
    kv_tiers,
    load_kv_tiers,
    load_retention_defaults,
    lognormal_params,
    reload_or_recompute,
    retention_policy,
    tier,
)

GB_HOUR = 1e9 * 3600.0          # byte-seconds in a GB-hour
H100_USD_PER_HOUR = 3.78        # latest H100 SXM rental price in the catalog (Lambda, 2026-05)


@pytest.fixture(scope="module")
def d70x8():
    return tk.Deployment("llama-3.1-70b", "h100-sxm", tp=8)


@pytest.fixture(scope="module")
def d8():
    return tk.Deployment("llama-3.1-8b", "h100-sxm")


# --------------------------------------------------------------------------------------------
# Tier catalog
# --------------------------------------------------------------------------------------------
def test_every_tier_loads_with_sources():
    tiers = kv_tiers("h100-sxm")
    assert list(tiers) == ["hbm", "dram", "grace_lpddr", "ssd", "network"]
    bib = data_sources(catalog_dir("price_catalog"))
    for t in tiers.values():
        if t.name != "hbm":
            assert t.sources and set(t.sources.values()) <= set(bib), t.name
            assert all(k.startswith("tier-") for k in t.sources.values()), t.name
    # Bandwidth into one GPU, per direction.
    assert tiers["dram"].read_bytes_per_s == 64e9             # PCIe Gen5 x16, 128 GB/s both ways
    assert tiers["grace_lpddr"].read_bytes_per_s == 450e9     # NVLink-C2C, 900 GB/s both ways
    assert tiers["ssd"].read_bytes_per_s == 14e9              # one Gen5 drive
    assert tiers["network"].read_bytes_per_s == 50e9          # 400 Gb/s NIC
    # Capacity: 2 TB per node of 8 GPUs.
    assert tiers["dram"].capacity_per == "node"
    assert tiers["dram"].capacity_per_gpu_bytes == 250e9
    assert math.isinf(tiers["network"].capacity_bytes)
    # Holding costs: DRAM $10/GB over 5 years, SSD $0.195/GB over 5 years, FSx $0.145/GB-month.
    assert tiers["dram"].usd_per_gb_hour == pytest.approx(10 / (5 * 8766), rel=2e-3)
    assert tiers["ssd"].usd_per_gb_hour == pytest.approx(0.195 / (5 * 8766), rel=2e-3)
    assert tiers["network"].usd_per_gb_hour == pytest.approx(0.145 / (8766 / 12), rel=1e-9)
    assert tiers["grace_lpddr"].usd_per_byte_s is None       # "not published"


def test_hbm_holding_cost_is_rent_over_capacity():
    # An opportunity cost computed from the hardware catalog, not stored in kv_tiers.toml.
    hw = tk.hardware("h100-sxm")
    assert tk.rental_price(hw).usd == H100_USD_PER_HOUR
    assert hbm_usd_per_byte_s(hw) * GB_HOUR == pytest.approx(3.78 / 80, rel=1e-12)
    assert tier("hbm").usd_per_byte_s == hbm_usd_per_byte_s("h100-sxm")
    assert hbm_usd_per_byte_s("h100-sxm", usd_per_device_hour=2.0) * GB_HOUR == \
        pytest.approx(2.0 / 80)
    # ~200 times host DRAM.
    assert 150 < tier("hbm").usd_per_byte_s / tier("dram").usd_per_byte_s < 250
    text = (catalog_dir("price_catalog") / "kv_tiers.toml").read_text()
    hbm_section = text.split("[tiers.hbm]")[1].split("[tiers.")[0]
    assert "value" not in hbm_section


def _copy(tmp_path: Path) -> Path:
    dst = tmp_path / "price_catalog"
    shutil.copytree(catalog_dir("price_catalog"), dst)
    return dst


@pytest.mark.parametrize("old, new, match", [
    ('value = 128, unit = "GB/s"', 'value = 128, unit = "GB"',
     r"kv_tiers\.toml: field tiers\.dram\.read_bandwidth\.unit: unit 'GB' has dimension"),
    ('latency = { value = 60, unit = "us", source = "tier-storagereview-micron-9550", ',
     'latency = { value = 60, unit = "us", ',
     r"kv_tiers\.toml: field tiers\.ssd\.latency\.source: required key is missing"),
    ('source = "tier-c3x-fsx-lustre"', 'source = "tier-nowhere"',
     r"field tiers\.network\.holding_cost\.source: source 'tier-nowhere' is not in the "),
    ('holding_cost = { value = 2.28e-4', 'holding_cost = { value = 4.56e-4',
     r"field tiers\.dram\.holding_cost: .* is not purchase_price / service_life"),
    ('capacity_per = "gpu"\nread_bandwidth = { value = 14000',
     'capacity_per = "rack"\nread_bandwidth = { value = 14000',
     r"field tiers\.ssd\.capacity_per: 'rack' is not one of"),
    ('holding_cost = "not published"', 'holding_cost = "cheap"',
     r"field tiers\.grace_lpddr\.holding_cost: string 'cheap' is not allowed"),
    ('derived_from = "hardware"', 'derived_from = "hardware"\ncapacity = 80',
     r"field tiers\.hbm\.capacity: HBM takes no numbers here"),
    ('miss_price = { value = 8.4, unit = "USD/Mtok"', 'miss_price = { value = 8.4, unit = "USD/GB"',
     r"field retention\.miss_price\.unit: unit 'USD/GB' has dimension"),
    ('miss_price = { value = 8.4,', 'miss_price = { value = -8.4,',
     r"field retention\.miss_price: implausible value -8\.4 USD/Mtok .* expected between 0 "),
    ('[retention]\nmiss_price', '[retention]\nmiss_penalty',
     r"field retention\.miss_penalty: unknown key; allowed: miss_price"),
    ('[retention]\nmiss_price', '[retentions]\nmiss_price',
     r"field retentions: unknown key; allowed: schema, tiers, retention"),
])
def test_broken_copy_is_rejected_naming_file_and_field(tmp_path, old, new, match):
    folder = _copy(tmp_path)
    path = folder / "kv_tiers.toml"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    with pytest.raises(tk.CatalogError, match=match):
        load_kv_tiers(folder)
    # The intact copy loads.
    assert set(load_kv_tiers(_copy(tmp_path / "ok"))) == {"dram", "grace_lpddr", "ssd",
                                                          "network"}
    with pytest.raises(tk.CatalogError, match=match):
        load_retention_defaults(folder)


def test_missing_retention_table_is_rejected(tmp_path):
    folder = _copy(tmp_path)
    path = folder / "kv_tiers.toml"
    text = path.read_text()
    path.write_text(text[:text.index("[retention]")])
    with pytest.raises(tk.CatalogError, match=r"kv_tiers\.toml: field retention: a \[retention\] "
                                              r"table with miss_price .* is required"):
        load_kv_tiers(folder)


def test_unknown_tier_names_the_known_ones(d8):
    with pytest.raises(tk.UnknownEntryError, match=r"unknown KV tier 'dramm'; did you mean "
                                                   r"'dram'\? Known tiers: hbm, dram"):
        tier("dramm")
    with pytest.raises(tk.UnknownEntryError, match=r"unknown KV tier None\. Known tiers: hbm, "):
        tier(None)
    with pytest.raises(tk.TokenomicsError, match="tier 'hbm' is where the KV is used"):
        reload_or_recompute(d8, 1000, tier="hbm")


# --------------------------------------------------------------------------------------------
# S63: reload beats recompute
# --------------------------------------------------------------------------------------------
def test_S63_reload_from_dram_beats_recompute_for_a_long_prefix():
    # Llama 3.1 70B, tp=4 on H100 SXM, a 32K-token prefix.
    d = tk.Deployment("llama-3.1-70b", "h100-sxm", tp=4)
    r = reload_or_recompute(d, 32_768, tier="dram")
    # By hand: 327,680 B of BF16 KV per token (80 layers x 8 KV heads x 256 x 2 B), a quarter
    # per device, over PCIe Gen5 x16 at 64 GB/s, plus the 80 ns floor.
    kv_dev = 32_768 * 327_680 / 4
    assert r.kv_bytes_per_device == pytest.approx(kv_dev)
    assert r.reload_s == pytest.approx(80e-9 + kv_dev / 64e9)               # 0.042 s
    # Recompute is at least the matmul FLOPs 2 x N x P over 4 x 989.4 TFLOP/s.
    b = tk.param_breakdown(tk.model("llama-3.1-70b"))
    n_mm = b["attention"] + b["dense_ffn"]
    assert r.recompute_s > 2 * n_mm * 32_768 / (4 * 989.4e12)               # > 1.1 s
    assert r.faster == "reload" and r.speedup > 25
    # Per token: 81,920 B / 64 GB/s = 1.3 us against 2 N / (4 F) = 34.6 us of compute, and the
    # shortest recompute still reads the weights once: reload wins at every length.
    assert 81_920 / 64e9 < 2 * n_mm / (4 * 989.4e12)
    assert r.breakeven_tokens == 1.0


def test_S63_breakeven_by_hand_for_a_slower_tier(d8):
    # A Gen4 NVMe drive per GPU (~7 GB/s, as in the DGX H100's own cache drives): Llama 3.1 8B
    # on one H100. Reload costs k / beta = 131,072 B / 7 GB/s = 18.7 us per token; recompute
    # 2 N / F = 14.1 us per token plus causal attention n_q (d_k + d_v) L P (P + 1) / F, so
    # reload wins again once
    #     P* + 1 = F (k / beta - 2 N / F) / (n_q (d_k + d_v) L)        (latency neglected).
    gen4 = dataclasses.replace(tier("ssd"), name="ssd-gen4", read_bytes_per_s=7e9)
    b = tk.param_breakdown(tk.model("llama-3.1-8b"))
    n_mm = b["attention"] + b["dense_ffn"]                                  # 6.98e9
    F, k, beta = 989.4e12, 131_072.0, 7e9
    p_star = F * (k / beta - 2 * n_mm / F) / (32 * 256 * 32) - 1            # ~17,400
    r = reload_or_recompute(d8, [100, 4_096, 60_000], tier=gen4)
    assert r.breakeven_tokens == pytest.approx(p_star, rel=0.01)
    # Short prefixes: reload wins (a prefill reads 16 GB of weights whatever its length);
    # middle: recompute; long: reload.
    assert list(r.faster) == ["reload", "recompute", "reload"]
    # Host DRAM: 2.05 us per token < 14.1 us, reload wins everywhere.
    assert reload_or_recompute(d8, 100).breakeven_tokens == 1.0


def test_reload_or_recompute_is_vectorized_and_checks_inputs(d8):
    r = reload_or_recompute(d8, [1_000, 10_000, 100_000], tier="network")
    assert np.shape(r.reload_s) == (3,) and np.all(np.diff(r.reload_s) > 0)
    assert np.all(r.faster == "reload")
    s = reload_or_recompute(d8, 10_000, tier="network")
    assert isinstance(s.reload_s, float) and s.reload_s == pytest.approx(r.reload_s[1])
    with pytest.raises(tk.TokenomicsError, match="prefix_tokens must be a whole number >= 1, "
                                                 "got 0"):
        reload_or_recompute(d8, [0, 10])
    with pytest.raises(tk.TokenomicsError, match="prefix_tokens=200000 exceeds"):
        reload_or_recompute(d8, 200_000)
    with pytest.raises(tk.TokenomicsError, match="batch must be a single whole number"):
        reload_or_recompute(d8, 1_000, batch=[1, 2])


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


def test_tier_validation():
    with pytest.raises(tk.TokenomicsError, match="read_bytes_per_s must be > 0"):
        Tier("x", "x", 1e12, "gpu", 0.0, 1e-6, 1e-17)
    with pytest.raises(tk.TokenomicsError, match=r"usd_per_byte_s must be >= 0 \[USD/B/s\]"):
        Tier("x", "x", 1e12, "gpu", 1e9, 1e-6, -1e-17)


# --------------------------------------------------------------------------------------------
# S61: one agent step
# --------------------------------------------------------------------------------------------
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
    assert s.decode_s > 10 * s.midfill_s                                  # decode-dominated
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


def test_tier_capacity_is_checked(d8):
    small = dataclasses.replace(tier("dram"), name="tiny", capacity_bytes=8e9)   # 1 GB per GPU
    with pytest.raises(tk.DoesNotFitError, match=r"tier 'tiny' gives each GPU 1 GB; the KV to "
                                                 r"hold is 1\.311 GB per device"):
        reload_or_recompute(d8, 10_000, tier=small)
    with pytest.raises(tk.DoesNotFitError, match="tier 'tiny' gives each GPU 1 GB"):
        retention_policy(d8, 10_000, tier=small)


def test_scalar_arguments_are_checked(d70x8, d8):
    with pytest.raises(tk.TokenomicsError, match="context_tokens must be a single whole number"):
        retention_policy(d70x8, [1000, 2000])
    with pytest.raises(tk.TokenomicsError, match=r"miss_usd must be a single number \[USD\]"):
        retention_policy(d70x8, 1000, miss_usd=[1, 2])
    with pytest.raises(tk.TokenomicsError, match="context_tokens=200000 exceeds"):
        retention_policy(d8, 200_000)
    with pytest.raises(tk.TokenomicsError, match="batch must be a single whole number"):
        agent_step(d8, batch=[1, 2])
