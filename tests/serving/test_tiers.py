"""KV tiers: the tier catalog (``price_catalog/kv_tiers.toml``) and reload against
recompute (S63)."""

from __future__ import annotations

import dataclasses
import math
import shutil
from pathlib import Path

import numpy as np
import pytest

import tokenomics as tk
from tokenomics.data.bibliography import catalog_dir, data_sources
from tokenomics.economics.retention import load_retention_defaults, retention_policy
from tokenomics.serving.tiers import (
    Tier,
    hbm_usd_per_byte_s,
    kv_tiers,
    load_kv_tiers,
    reload_or_recompute,
    tier,
)

GB_HOUR = 1e9 * 3600.0          # byte-seconds in a GB-hour
H100_USD_PER_HOUR = 3.78        # latest H100 SXM rental price in the catalog (Lambda, 2026-05)


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
    # Rent over the driver-visible 81,559 MiB = 85.52 GB (was 3.78 / 80 at 80e9 B).
    assert hbm_usd_per_byte_s(hw) * GB_HOUR == pytest.approx(3.78 / 85.520809984, rel=1e-12)
    assert tier("hbm").usd_per_byte_s == hbm_usd_per_byte_s("h100-sxm")
    assert hbm_usd_per_byte_s("h100-sxm", usd_per_device_hour=2.0) * GB_HOUR == \
        pytest.approx(2.0 / 85.520809984)
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
     r"field retention\.miss_penalty: unknown key; allowed keys here: miss_price"),
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


def test_tier_validation():
    with pytest.raises(tk.TokenomicsError, match="read_bytes_per_s must be > 0"):
        Tier("x", "x", 1e12, "gpu", 0.0, 1e-6, 1e-17)
    with pytest.raises(tk.TokenomicsError, match=r"usd_per_byte_s must be >= 0 \[USD/B/s\]"):
        Tier("x", "x", 1e12, "gpu", 1e9, 1e-6, -1e-17)


@pytest.mark.parametrize("old, new, match", [
    ('title = "Host DRAM (DDR5) over PCIe Gen5 x16"\n',
     'title = "Host DRAM (DDR5) over PCIe Gen5 x16"\ncolour = "red"\n',
     r"field tiers\.dram\.colour: unknown key; allowed keys here: title, capacity, "),
    ('latency = { value = 60, unit = "us", source = "tier-storagereview-micron-9550", '
     'note = "typical read latency" }\n', '',
     r"field tiers\.ssd\.latency: required key is missing"),
    ('title = "Host DRAM (DDR5) over PCIe Gen5 x16"', 'title = 5',
     r"field tiers\.dram\.title: must be a string, got 5"),
    ('bandwidth_direction = "bidirectional"', 'bandwidth_direction = "both"',
     r"field tiers\.dram\.bandwidth_direction: 'both' is not one of bidirectional, "),
    ('bandwidth_direction = "bidirectional"\nbandwidth_per = "gpu"',
     'bandwidth_direction = "bidirectional"\nbandwidth_per = "node"',
     r"field tiers\.dram\.bandwidth_per: 'node': only 'gpu' .* is modelled"),
    ('capacity_per = "node"\ngpus_per_node = 8\n', 'capacity_per = "node"\n',
     r"field tiers\.dram\.gpus_per_node: required when capacity_per = 'node'"),
    ('gpus_per_node = 8', 'gpus_per_node = 0',
     r"field tiers\.dram\.gpus_per_node: must be a whole number from 1 to 1e\+06, got 0"),
    ('capacity = "unbounded"', 'capacity = "plenty"',
     r"field tiers\.network\.capacity: string 'plenty' is not allowed; use a "
     r"\{value, unit, source\} table or 'unbounded'"),
    ('capacity = "unbounded"', 'capacity = { value = 1, unit = "PB", source = '
     '"tier-c3x-fsx-lustre" }',
     r"field tiers\.network\.capacity: capacity_per = 'unbounded' needs capacity = "
     r"\"unbounded\""),
    ('service_life = { value = 5, unit = "year", source = "tier-amazon-server-useful-life" }\n',
     '', r"field tiers\.ssd\.service_life: purchase_price and service_life go together"),
])
def test_each_tier_table_check_names_its_field(tmp_path, old, new, match):
    # The checks of a [tiers.<name>] table, one broken field at a time.
    folder = _copy(tmp_path)
    path = folder / "kv_tiers.toml"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    with pytest.raises(tk.CatalogError, match=match):
        load_kv_tiers(folder)


def test_bidirectional_bandwidth_is_halved(tmp_path):
    # The SSD's 14,000 MB/s read as a figure for both directions together: 7 GB/s each way.
    folder = _copy(tmp_path)
    path = folder / "kv_tiers.toml"
    text = path.read_text()
    ssd = text.index("[tiers.ssd]")
    head, tail = text[:ssd], text[ssd:]
    tail = tail.replace('bandwidth_direction = "per_direction"',
                        'bandwidth_direction = "bidirectional"', 1)
    path.write_text(head + tail)
    assert load_kv_tiers(folder)["ssd"].read_bytes_per_s == 14_000e6 / 2


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


def test_tier_capacity_is_checked(d8):
    small = dataclasses.replace(tier("dram"), name="tiny", capacity_bytes=8e9)   # 1 GB per GPU
    with pytest.raises(tk.DoesNotFitError, match=r"tier 'tiny' gives each GPU 1 GB; the KV to "
                                                 r"hold is 1\.311 GB per device"):
        reload_or_recompute(d8, 10_000, tier=small)
    with pytest.raises(tk.DoesNotFitError, match="tier 'tiny' gives each GPU 1 GB"):
        retention_policy(d8, 10_000, tier=small)


def test_an_unknown_hardware_id_is_an_error_for_every_tier():
    with pytest.raises(tk.UnknownEntryError, match="no-such-hw"):
        tk.tier("ssd", "no-such-hw")
