"""Token economics: the cost identity, TCO, per-phase cost and energy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tokenomics as tk
from tokenomics.data.rentals import rental_price
from tokenomics.economics.cost import (
    cost_per_million_tokens,
    deployment_cost,
    energy_per_token,
)
from tokenomics.economics.ownership import tco_usd_per_device_hour


def test_cost_identity_two_dollars_at_1000_tokens_per_s():
    # $2.00 / (3600 s x 1,000 tokens/s) x 1e6 = $0.5556 per million tokens.
    assert cost_per_million_tokens(2.00, 1000) == pytest.approx(0.5556, abs=5e-5)
    assert np.allclose(cost_per_million_tokens([2, 4], [1000, 2000]), 2 / 3.6 / 1000 * 1000)


@given(p=st.floats(0, 1e3), r=st.floats(1e-3, 1e7))
def test_cost_times_throughput_is_the_hourly_price(p, r):
    c = cost_per_million_tokens(p, r)
    assert c * r * 3600 / 1e6 == pytest.approx(p, rel=1e-12, abs=1e-12)


def test_deployment_cost_per_phase():
    d = tk.Deployment("llama-3.1-70b", "h200", weight_dtype="fp8", compute_dtype="fp8",
                      kv_dtype="fp8")
    c = deployment_cost(d, 64, 4096, usd_per_device_hour=3.0)
    # Output: $3 / (3600 x decode tokens/s) x 1e6, checked against the identity.
    dec = tk.decode(d, 64, 4096)
    assert c.output_usd_per_mtok == pytest.approx(3.0 / 3600 / dec.tokens_per_s_per_device * 1e6)
    # Prefill is compute-bound and batched over the prompt: far cheaper per token than decode.
    assert c.input_usd_per_mtok < c.output_usd_per_mtok / 3
    assert c.cached_input_usd_per_mtok < c.input_usd_per_mtok
    mix = c.blended(3, 1, cache_hit_rate=0.5)
    assert c.cached_input_usd_per_mtok < mix < c.output_usd_per_mtok
    # Rental price from the catalog, or a TCO.
    assert deployment_cost(d, 64, 4096).usd_per_device_hour == rental_price(d.hardware).usd
    owned = deployment_cost(d, 64, 4096, tco=dict(purchase_usd=30_000, amortisation_years=5))
    assert owned.usd_per_device_hour == pytest.approx(
        tco_usd_per_device_hour(30_000, 5, 700))


def test_energy_by_hand():
    # 700 W at 1,000 tokens/s: 0.7 J/token = 194.4 Wh per million tokens; 1.43 tokens/s/W.
    e = energy_per_token(1000, tk.hardware("h100-sxm"))
    assert e.joules_per_token == pytest.approx(0.7)
    assert e.wh_per_mtok == pytest.approx(0.7 * 1e6 / 3600)
    assert e.tokens_per_s_per_w == pytest.approx(1000 / 700)
    # PUE and utilisation scale it.
    assert energy_per_token(1000, 700, 0.5, 1.5).joules_per_token == pytest.approx(0.525)
    with pytest.raises(tk.TokenomicsError, match="utilisation"):
        energy_per_token(1000, 700, utilisation=0)
    with pytest.raises(tk.NotPublishedError, match="TDP not published"):
        energy_per_token(1000, tk.hardware("rubin"))


def test_decode_costs_more_energy_per_token_than_prefill():
    # S22: decode is the largest energy consumer per token.
    d = tk.Deployment("llama-3.1-70b", "h200", weight_dtype="fp8", compute_dtype="fp8")
    pre = energy_per_token(tk.prefill(d, 4096).tokens_per_s_per_device, d.hardware)
    dec = energy_per_token(tk.decode(d, 32, 4096).tokens_per_s_per_device, d.hardware)
    assert dec.joules_per_token > 5 * pre.joules_per_token


# ---- ownership terms and the device price as objects; 0.1's forms still work ----------------
from tokenomics.economics.cost import DeploymentCost, device_hour_usd  # noqa: E402
from tokenomics.economics.ownership import Ownership  # noqa: E402


def _same_cost(a: DeploymentCost, b: DeploymentCost) -> None:
    for name in DeploymentCost.__dataclass_fields__:
        assert np.array_equal(np.asarray(getattr(a, name)), np.asarray(getattr(b, name))), name


def test_device_price_and_0_1_price_arguments_agree():
    d = tk.Deployment("llama-3.1-70b", "h200", weight_dtype="fp8", compute_dtype="fp8",
                      kv_dtype="fp8")
    _same_cost(deployment_cost(d, 64, 4096, device_price=3.0),
               deployment_cost(d, 64, 4096, usd_per_device_hour=3.0))
    # Owning: the TDP (700 W for an H200) fills in the power.
    owned = deployment_cost(d, 64, 4096, device_price=Ownership(30_000, 5))
    assert owned.usd_per_device_hour == pytest.approx(tco_usd_per_device_hour(30_000, 5, 700))
    _same_cost(owned, deployment_cost(d, 64, 4096,
                                      tco=dict(purchase_usd=30_000, amortisation_years=5)))
    # A rental tier of the catalog (H200: a capacity block at $5.408 per hour).
    tier = deployment_cost(d, 64, 4096, device_price="hyperscaler-capacity-block")
    assert tier.usd_per_device_hour == 5.408
    _same_cost(tier, deployment_cost(d, 64, 4096, tier="hyperscaler-capacity-block"))
    # Every 0.1 argument in its position: prompt, prefill batch, price, tier, tco, cache.
    _same_cost(deployment_cost(d, [8, 64], 4096, 2048, 4, 2.0, None, None, 1000),
               deployment_cost(d, [8, 64], 4096, 2048, 4, 2.0, cached_prefix_tokens=1000))
    with pytest.raises(tk.TokenomicsError, match="give usd_per_device_hour or tco, not both"):
        deployment_cost(d, 64, 4096, usd_per_device_hour=3.0, tco=dict(purchase_usd=1,
                                                                       amortisation_years=1))


def test_device_hour_usd_by_source():
    # DeepSeek's $2 per H800-hour is tier "estimate": the default basis reads it after the
    # on-demand tiers (H800 has none); an on-demand-only basis refuses it
    assert device_hour_usd(tk.hardware("h800"), "estimate") == 2.0
    assert device_hour_usd(tk.hardware("h800"), price_basis="estimate") == 2.0
    assert device_hour_usd(tk.hardware("h800")) == 2.0
    with pytest.raises(tk.NotPublishedError, match="no rental price on the basis"):
        device_hour_usd(tk.hardware("h800"), price_basis=("neocloud-on-demand",
                                                          "hyperscaler-on-demand"))
    assert device_hour_usd(tk.hardware("h800"), 3.5) == 3.5
    # H800's TDP is 700 W (nvidia-smi power cap); without a TDP ownership cannot price power.
    with pytest.raises(tk.NotPublishedError, match="TDP not published"):
        device_hour_usd(tk.hardware("h800").with_(tdp_w=None), Ownership(30_000, 5))
    with pytest.raises(tk.TokenomicsError, match="usd_per_device_hour must be >= 0"):
        device_hour_usd(tk.hardware("h800"), -1.0)


def test_cost_per_mtok_by_hand_from_a_price_and_a_throughput():
    # $4.54 per device-hour at 2,000 tokens/s per device:
    # 4.54 / 3600 s = 1.2611e-3 USD/s; / 2000 tok/s = 6.3056e-7 USD/tok; x 1e6 = 0.63056
    assert cost_per_million_tokens(4.54, 2000.0) == pytest.approx(4.54 / 3600 / 2000 * 1e6)
    assert cost_per_million_tokens(4.54, 2000.0) == pytest.approx(0.630556, rel=1e-5)


def test_deployment_cost_reports_the_price_it_used():
    d = tk.Deployment("llama-3.1-70b", "h200", weight_dtype="fp8", compute_dtype="fp8",
                      kv_dtype="fp8")
    c = deployment_cost(d, 64, 4096)
    # default basis: Spheron's H200 on-demand, $4.54 on 2026-03-17
    assert (c.price_usd_per_device_hour, c.price_tier, c.price_date) == (
        4.54, "neocloud-on-demand", "2026-03-17")
    cb = deployment_cost(d, 64, 4096, price_basis="hyperscaler-capacity-block")
    assert (cb.usd_per_device_hour, cb.price_tier, cb.price_date) == (
        5.408, "hyperscaler-capacity-block", "2024-12")
    # an explicit price wins over the basis
    u = deployment_cost(d, 64, 4096, device_price=3.0, price_basis="neocloud-spot")
    assert (u.usd_per_device_hour, u.price_tier) == (3.0, "user")
    # same throughput, so cost scales with the price: 5.408 / 4.54
    assert cb.output_usd_per_mtok / c.output_usd_per_mtok == pytest.approx(5.408 / 4.54)


def test_deployment_cost_frame_one_row_per_batch_with_its_price():
    d = tk.Deployment("llama-3.1-8b", "h100-sxm")
    c = deployment_cost(d, [8, 64], 4096, usd_per_device_hour=2.0)
    f = c.to_frame()
    assert len(f) == 2 and set(f.price_usd_per_device_hour) == {2.0}
    # $2/hour / 3600 s / (output tok/s per device) x 1e6
    assert f.output_usd_per_mtok.tolist() == pytest.approx(
        (2.0 / 3600 / f.output_tokens_per_s_per_device * 1e6).tolist(), rel=1e-12)
    assert f.price_tier.iloc[0] == "user"
