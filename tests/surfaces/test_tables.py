"""Catalog tables: datasheet figures in unit-suffixed columns, hand-computed model sizes."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tokenomics as tk
from tokenomics.surfaces.tables import hardware_table, model_table

# Units a numeric column name ends with (decimal prefixes: GB = 1e9 B, TB/s = 1e12 B/s).
HARDWARE_UNITS = ("_tflop_per_s", "_gb", "_tb_per_s", "_flop_per_byte", "_mb",
                  "_gb_per_s_per_direction", "_w", "_usd_per_hour")
HARDWARE_COUNTS = {"scale_up_domain_size"}           # devices in one scale-up domain
MODEL_UNITS = ("_b", "_bytes_per_token_bf16", "_tokens")  # billions of parameters, B, tokens
MODEL_COUNTS = {"layers", "hidden_size", "q_heads", "kv_heads", "head_dim", "experts",
                "top_k", "full_kv_heads", "full_head_dim", "kv_layers"}


@pytest.fixture(scope="module")
def hw():
    return hardware_table()


@pytest.fixture(scope="module")
def md():
    return model_table()


def test_h100_sxm_row_matches_nvidia_datasheet(hw):
    # NVIDIA H100 SXM5 datasheet: 80 GB HBM3 at 3.35 TB/s, 989.4 TFLOP/s dense BF16
    # (1,979 with sparsity), 1,978.9 dense FP8, 700 W; Hopper has no FP4 units.
    h = hw.loc["h100-sxm"]
    # 80 GB read as 80 GiB = 85.899 decimal GB physical; nvidia-smi 81,559 MiB = 85.521 GB.
    assert h.mem_capacity_gb == 80 * 2**30 / 1e9
    assert h.mem_visible_gb == 81_559 * 2**20 / 1e9
    assert h.mem_bw_tb_per_s == 3.35
    assert h.peak_bf16_dense_tflop_per_s == pytest.approx(989.4)
    assert h.peak_fp8_dense_tflop_per_s == pytest.approx(1978.9)
    assert h.tdp_w == 700.0
    assert math.isnan(h.peak_fp4_dense_tflop_per_s)     # empty cell: not supported
    assert math.isnan(h.ridge_fp4_flop_per_byte)
    # Ridge point: 989.4e12 FLOP/s / 3.35e12 B/s = 295.34 FLOP/B.
    assert h.ridge_bf16_flop_per_byte == pytest.approx(989.4 / 3.35, rel=1e-12)


def test_h200_and_mi300x_memory_match_their_datasheets(hw):
    # NVIDIA H200: 141 GB (= GiB, 151.4 decimal GB) HBM3e at 4.8 TB/s. AMD MI300X: 192 GiB
    # (ROCm's VRAM column) HBM3 at 5.3 TB/s.
    assert (hw.loc["h200", "mem_capacity_gb"], hw.loc["h200", "mem_bw_tb_per_s"]) == \
        (141 * 2**30 / 1e9, 4.8)
    assert (hw.loc["mi300x", "mem_capacity_gb"],
            hw.loc["mi300x", "mem_bw_tb_per_s"]) == (192 * 2**30 / 1e9, 5.3)


def test_ridge_columns_are_peak_over_bandwidth(hw):
    # The same TFLOP/s and TB/s scale, so the ratio of the two columns is FLOP/B.
    for fmt in ("bf16", "fp8", "fp4"):
        peak, ridge = hw[f"peak_{fmt}_dense_tflop_per_s"], hw[f"ridge_{fmt}_flop_per_byte"]
        assert (peak.isna() == ridge.isna()).all()
        ok = peak.notna()
        np.testing.assert_allclose(ridge[ok], peak[ok] / hw.mem_bw_tb_per_s[ok], rtol=1e-12)


def test_llama_3_1_70b_row(md):
    m = md.loc["llama-3.1-70b"]
    assert (m.layers, m.q_heads, m.kv_heads, m.head_dim) == (80, 64, 8, 128)
    # K and V, 80 layers, 8 KV heads of 128, 2 bytes each in BF16.
    assert m.kv_bytes_per_token_bf16 == 2 * 80 * 8 * 128 * 2 == 327_680
    # Parameters from the config (hidden 8192, FFN 28672, vocab 128256, untied head):
    # embedding + LM head 2 * 128256 * 8192 = 2,101,346,304; per layer attention
    # 2 * 8192^2 + 2 * 8192 * 1024 = 150,994,944, FFN 3 * 8192 * 28672 = 704,643,072,
    # norms 2 * 8192; 80 layers = 68,452,352,000; final norm 8192 -> 70,553,706,496.
    assert m.params_total_b == pytest.approx(70_553_706_496 / 1e9, rel=1e-12)
    assert m.params_active_b == m.params_total_b        # dense
    assert m.official_total_b == 70.0                    # Meta's model card
    assert m.max_context_tokens == 131_072


def test_mla_and_moe_rows(md):
    # DeepSeek-V3 caches the 512-dim latent plus the 64-dim RoPE key: (512 + 64) * 61 * 2 B.
    d = md.loc["deepseek-v3"]
    assert d.kv_bytes_per_token_bf16 == (512 + 64) * 61 * 2 == 70_272
    assert (d.attention, d.experts, d.top_k) == ("MLA", 256, 8)
    assert d.official_total_b == 671.0 and d.params_total_b == pytest.approx(671, rel=2e-3)
    # Llama 3.1 8B: 2 * 32 layers * 8 KV heads * 128 * 2 B.
    assert md.loc["llama-3.1-8b", "kv_bytes_per_token_bf16"] == 2 * 32 * 8 * 128 * 2


@pytest.mark.parametrize("table, units, counts", [
    (hardware_table, HARDWARE_UNITS, HARDWARE_COUNTS),
    (model_table, MODEL_UNITS, MODEL_COUNTS),
])
def test_numeric_columns_carry_their_unit(table, units, counts):
    t = table()
    numeric = [c for c in t.columns if t[c].dtype.kind in "fiu"]
    assert numeric
    for col in numeric:
        assert col in counts or col.endswith(units), f"{col} has no unit suffix"
    for col in counts:
        vals = t[col].dropna()
        assert (vals == np.floor(vals)).all(), f"{col} is a count"


def test_one_row_per_catalog_entry_with_known_sources():
    cat = tk.load_catalog()                  # read afresh from the catalog folders
    hw, md = hardware_table(), model_table()
    # indexed by id (issue 14: t.loc['h200'])
    assert hw.index.name == md.index.name == "id"
    assert hw.index.is_unique and md.index.is_unique
    assert set(hw.index) == set(cat.hardware) and set(md.index) == set(cat.models)
    known = set(tk.sources())
    for t in (hw, md):
        for keys in t.sources:
            assert keys and set(keys.split()) <= known


def test_every_surface_reports_one_price_per_device_on_the_default_basis(capsys):
    # issue 26: B200 was $2.25 (a spot rate) in hardware_table, rental_price, the docs
    # catalog page and the workbook, and $6.03 (neocloud on-demand) in deployment_cost,
    # cheapest_at and `tokenomics cost`. Each device now has one default price everywhere
    import re

    from tokenomics.surfaces.cli import main
    from tokenomics.surfaces.export import sizing_sheet
    t = tk.hardware_table()
    checked = 0
    for hw in t.index:
        try:
            ref = tk.price_on_basis(hw)
        except tk.NotPublishedError:
            assert np.isnan(t.loc[hw, "price_usd_per_hour"])
            continue
        usd = ref.usd_per_device_hour
        assert t.loc[hw, "price_usd_per_hour"] == usd and t.loc[hw, "price_tier"] == ref.tier
        if ref.tier != "tco":
            assert tk.rental_price(hw).usd == usd
        try:
            d = tk.Deployment("llama-3.1-8b", hw, weight_dtype="fp8", kv_dtype="fp8",
                              compute_dtype="bf16")
            cost = tk.deployment_cost(d, 1, 1024)
        except tk.TokenomicsError:
            continue                   # no BF16 peak, or 8B does not fit: no cost to compare
        assert cost.usd_per_device_hour == usd
        sheet = next(r for r in sizing_sheet(d, 1, 1024).rows
                     if r.label == "price per device-hour")
        assert sheet.value == usd
        assert main(["cost", "llama-3.1-8b", hw, "--weight-dtype", "fp8", "--kv-dtype", "fp8",
                     "--batch", "1", "--context", "1024"]) == 0
        cap = capsys.readouterr()
        shown = re.search(r"at \$([0-9.]+)/device-hour", cap.out + cap.err)
        assert shown and float(shown.group(1)) == pytest.approx(usd, abs=0.005), hw
        checked += 1
    assert checked >= 20


def test_the_model_table_shows_each_layer_kind_and_the_layers_that_keep_a_kv(md):
    # transformers' converter: Gemma 4 31B's full layers have 4 KV heads of 512 beside the
    # sliding layers' 16 of 256; E2B's last 20 of 35 layers read an earlier layer's KV;
    # Qwen3-Next keeps a KV in its 12 gated-attention layers only (36 Gated DeltaNet)
    g = md.loc["gemma-4-31b"]
    assert (g.kv_heads, g.head_dim, g.full_kv_heads, g.full_head_dim) == (16, 256, 4, 512)
    assert md.loc["gemma-4-e2b", "kv_layers"] == 15
    assert md.loc["qwen3-next-80b-a3b", "kv_layers"] == 12
    ll = md.loc["llama-3.1-70b"]
    assert (ll.full_kv_heads, ll.full_head_dim, ll.kv_layers) == (8, 128, 80)
