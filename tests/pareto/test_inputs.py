"""The inputs a frontier query normalises: deployments, efficiency presets, prices, labels."""

from __future__ import annotations

import math

import pytest

import tokenomics as tk
from tokenomics.pareto.inputs import (
    config_columns,
    deployment_label,
    deployments_of,
    device_price_usd_per_hour,
    efficiency_label,
    with_efficiency,
)

D = tk.Deployment("llama-3.1-8b", "h100-sxm")


def test_deployments_of_accepts_one_a_list_or_a_sweep():
    assert deployments_of(D) == [D]
    assert deployments_of([D, D]) == [D, D]
    frame = tk.sweep([D], [1, 2], 1024)
    assert deployments_of(frame) == [D]        # the frame carries its deployment once


def test_deployments_of_rejects_what_is_not_a_deployment():
    with pytest.raises(tk.TokenomicsError, match="Deployment objects"):
        deployments_of([])
    with pytest.raises(tk.TokenomicsError, match="Deployment objects"):
        deployments_of(["llama-3.1-8b"])
    import pandas as pd

    with pytest.raises(tk.TokenomicsError, match="tk.sweep"):
        deployments_of(pd.DataFrame({"a": [1]}))


def test_with_efficiency_applies_a_preset_or_keeps_the_deployments_own():
    (r,) = with_efficiency([D], "roofline")
    assert r.efficiency == tk.ROOFLINE and efficiency_label(r) == "roofline"
    custom = D.with_(efficiency=tk.Efficiency(mbu=0.5))
    assert with_efficiency([custom], "deployment") == [custom]
    assert efficiency_label(custom) == "custom"
    with pytest.raises(tk.TokenomicsError, match="'calibrated', 'roofline', 'deployment'"):
        with_efficiency([D], "optimistic")


def test_a_preset_copy_is_kept_so_a_frontier_asked_again_reuses_its_curves():
    d = tk.Deployment("llama-3.1-70b", "h100-sxm", tp=4)
    (a,) = with_efficiency([d], "calibrated")
    (b,) = with_efficiency([d], "calibrated")
    assert a is b and a.efficiency.label == "calibrated" and d.efficiency.label == "roofline"
    assert with_efficiency([a], "calibrated")[0] is a      # already under the preset
    tk.frontier([d], 4096, efficiency="calibrated")
    assert tk.decode_curve(a, 4096) is a.__dict__["_decode_curves"][(4096.0, None)]


def test_device_price_from_the_mapping_else_the_catalog_else_nan():
    assert device_price_usd_per_hour(D, {"h100-sxm": 2.5}) == 2.5
    # DeepSeek's own assumption for an H800-hour, as the catalog records it: $2, tier
    # "estimate": the default basis reads it after the on-demand tiers; an on-demand basis
    # has no price for it (NaN)
    h800 = tk.Deployment("llama-3.1-8b", "h800")
    assert device_price_usd_per_hour(h800, None) == 2.0
    assert device_price_usd_per_hour(h800, None, "estimate") == 2.0
    assert math.isnan(device_price_usd_per_hour(h800, None, "neocloud-on-demand"))
    nopr = D.with_(hardware=D.hardware.with_(prices=()))
    assert math.isnan(device_price_usd_per_hour(nopr, None))


def test_label_and_config_columns_describe_the_layout():
    # "fp8" is the OCP E4M3 format under its canonical name.
    d = tk.Deployment("llama-3.1-70b", "h100-sxm", tp=4, pp=2, kv_dtype="fp8")
    assert deployment_label(d) == "llama-3.1-70b | 8xh100-sxm tp4 pp2 bf16/fp8_e4m3/bf16"
    assert deployment_label(d, {"k": 3, "alpha": 0.8}) == \
        "llama-3.1-70b | 8xh100-sxm tp4 spec k=3 pp2 bf16/fp8_e4m3/bf16"
    cols = config_columns(d)
    assert (cols["n_devices"], cols["tp"], cols["pp"], cols["kv_dtype"]) == (8, 4, 2, "fp8_e4m3")


def test_device_prices_carry_tier_and_date_and_warn_on_mixed_tiers():
    from tokenomics.pareto.inputs import device_prices, price_columns

    h200 = tk.Deployment("llama-3.1-8b", "h200")
    v6e = tk.Deployment("llama-3.1-8b", "tpu-v6e")
    with pytest.warns(UserWarning, match="different tiers"):
        got = device_prices([h200, v6e], None)
    assert price_columns(got["h200"]) == dict(price_usd_per_device_hour=4.54,
                                              price_tier="neocloud-on-demand",
                                              price_date="2026-03-17")
    # one tier for both: no neocloud price for the TPU, so it is unpriced, no warning
    one = device_prices([h200, v6e], None, "neocloud-on-demand")
    assert one["tpu-v6e"] is None
    assert math.isnan(price_columns(None)["price_usd_per_device_hour"])
    # a mapping wins, tier "user"
    assert device_prices([h200], {"h200": 2.0})["h200"].tier == "user"
