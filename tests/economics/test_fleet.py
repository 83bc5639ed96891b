"""The plan over years (tokenomics.economics.fleet): hand-checked books, the sourced presets,
and the plan's properties as Hypothesis tests."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tokenomics as tk
from tokenomics.core.errors import TokenomicsError
from tokenomics.economics.fleet import GROWTH_PRESETS, PRICE_DECLINE_PRESETS, USEFUL_LIFE_YEARS

HOURS = 8760.0
# The sourced cost-of-ownership defaults (price_catalog/assumptions.toml): PUE 1.56 (Uptime
# 2024), $0.0892/kWh (EIA 2023), networking 15% of cluster capital (S44), 5-year life.
PUE, KWH, NET, LIFE = 1.56, 0.0892, 0.15, 5.0

H100 = tk.Generation("h100", 2024, 1000.0, power_w=1400.0, purchase_usd=30_000.0,
                     rent_usd_per_device_hour=2.5)
B200 = tk.Generation("b200", 2025, 3000.0, power_w=1800.0, purchase_usd=45_000.0,
                     rent_usd_per_device_hour=4.0)


def test_first_year_books_by_hand():
    # 1e6 token/s at 1,000 token/s a device: 1,000 H100s. Owning one costs
    # 30,000 / 0.85 / 5 / 8760 = 0.80580 USD/h of capital and 1.4 kW x 1.56 x 0.0892 =
    # 0.19481 USD/h of power: 1.0006 USD/h, under the 2.50 rental, so they are bought.
    p = tk.fleet_plan([1e6], [H100], 2024)
    own_h = 30_000 / (1 - NET) / LIFE / HOURS + 1.4 * PUE * KWH
    assert p.bought_devices.tolist() == [1000] and p.rented_devices.tolist() == [0]
    assert p.capex_usd[0] == pytest.approx(1000 * 30_000 / 0.85, rel=1e-12)
    assert p.depreciation_usd[0] == pytest.approx(1000 * 30_000 / 0.85 / 5, rel=1e-12)
    assert p.electricity_usd[0] == pytest.approx(1000 * 1.4 * PUE * KWH * HOURS, rel=1e-12)
    assert p.cost_usd[0] == pytest.approx(1000 * own_h * HOURS, rel=1e-12)
    # cost over a year of 1e6 token/s, per million tokens: 8.765e6 / 3.1536e7 = 0.278
    assert p.usd_per_mtok[0] == pytest.approx(1000 * own_h * HOURS / (1e6 * 3600 * HOURS)
                                              * 1e6, rel=1e-12)
    assert p.usd_per_mtok[0] == pytest.approx(0.2779, abs=1e-4)


def test_rentals_are_decided_each_year_in_whole_devices():
    g = tk.Generation("h100", 2024, 1000.0, power_w=1000.0, rent_usd_per_device_hour=2.0)
    p = tk.fleet_plan([1500.0, 2500.0, 800.0], [g], 2024)
    assert p.rented_devices.tolist() == [2, 3, 1]          # ceil(1.5), ceil(2.5), ceil(0.8)
    assert p.rental_usd.tolist() == pytest.approx([2 * 2.0 * HOURS, 3 * 2.0 * HOURS,
                                                   1 * 2.0 * HOURS], rel=1e-12)
    assert p.capex_usd.tolist() == [0.0, 0.0, 0.0]


def test_cheaper_generation_takes_the_growth_and_old_cohorts_stay_until_end_of_life():
    # B200 per token: (45,000 / 0.85 / 5 / 8760 + 1.8 x 1.56 x 0.0892) / (3000 x 3600)
    # = 1.459 / 10.8e6, against the H100's 1.0006 / 3.6e6: B200 wins from 2025.
    p = tk.fleet_plan(tk.demand_path(1e6, 7.0, 5), [H100, B200], 2024)
    g = p.by_generation.set_index(["year", "generation"])
    assert g.loc[(2024, "h100"), "bought"] == 1000
    assert all(g.loc[(y, "h100"), "bought"] == 0 for y in range(2025, 2029))
    assert all(g.loc[(y, "h100"), "owned"] == 1000 for y in range(2024, 2029))
    # 2025: 7e6 - 1e6 from the H100s = 6e6 at 3,000 a device = 2,000 B200s
    assert g.loc[(2025, "b200"), "bought"] == 2000
    # the H100s' electricity per token (0.19481 / 3.6e6 = 5.4e-8 USD) is below the B200's
    # full cost per token (1.351e-7), so nothing is retired as obsolete
    assert p.retired_devices.sum() == 0


def test_end_of_life_retires_and_the_plan_buys_again():
    terms = tk.FleetTerms(life_years=2.0)
    p = tk.fleet_plan([1000.0] * 4, [H100], 2024, terms)
    assert p.bought_devices.tolist() == [1, 0, 1, 0]
    assert p.retired_devices.tolist() == [0, 0, 1, 0]
    assert p.capex_usd[2] == pytest.approx(30_000 / 0.85, rel=1e-12)


def test_a_fractional_life_pays_its_last_fraction():
    # Meta's 5.5 years: the device serves a sixth year and depreciates half a year's worth.
    terms = tk.FleetTerms(life_years=USEFUL_LIFE_YEARS["meta"])
    p = tk.fleet_plan([1000.0] * 7, [H100], 2024, terms)
    year = 30_000 / 0.85 / 5.5
    assert p.depreciation_usd[:5].tolist() == pytest.approx([year] * 5, rel=1e-12)
    assert p.depreciation_usd[5] == pytest.approx(0.5 * year, rel=1e-12)
    assert p.bought_devices.tolist() == [1, 0, 0, 0, 0, 0, 1]
    assert p.depreciation_usd.sum() == pytest.approx(30_000 / 0.85 + year, rel=1e-12)


def test_an_obsolete_cohort_is_retired_when_new_tokens_cost_less_than_its_power():
    # An old part drawing 10 kW for 100 token/s: 10 x 1.56 x 0.0892 / 360,000 = 3.9e-6 USD
    # of power per token, above a B200's full 1.35e-7: retired in 2025, not at end of life.
    old = tk.Generation("old", 2024, 100.0, power_w=10_000.0, purchase_usd=1_000.0)
    p = tk.fleet_plan([1000.0, 1000.0], [old, B200], 2024)
    g = p.by_generation.set_index(["year", "generation"])
    assert g.loc[(2024, "old"), "bought"] == 10
    assert g.loc[(2025, "old"), "retired"] == 10 and g.loc[(2025, "old"), "owned"] == 0
    assert g.loc[(2025, "b200"), "bought"] == 1
    kept = tk.fleet_plan([1000.0, 1000.0], [old, B200], 2024,
                         tk.FleetTerms(retire_obsolete=False))
    assert kept.retired_devices.tolist() == [0, 0] and kept.bought_devices.tolist() == [10, 0]


def test_revenue_and_margin_at_a_declining_price():
    p = tk.fleet_plan([1e6, 1e6], [H100], 2024, price_usd_per_mtok=2.0, price_decline=2.0)
    tokens = 1e6 * 3600 * HOURS
    assert p.price_usd_per_mtok.tolist() == [2.0, 1.0]
    assert p.revenue_usd.tolist() == pytest.approx([tokens / 1e6 * 2.0, tokens / 1e6],
                                                   rel=1e-12)
    assert p.margin[1] == pytest.approx((p.revenue_usd[1] - p.cost_usd[1]) / p.revenue_usd[1])
    assert np.isnan(tk.fleet_plan([1e6], [H100], 2024).margin).all()


def test_presets_are_the_sources_figures():
    # S34: usage ~7x a year; Google 480 trillion tokens a month (May 2025) -> 3.2
    # quadrillion (May 2026); unit cost ~200x cheaper a year.
    assert GROWTH_PRESETS["s34-usage"] == 7.0
    assert GROWTH_PRESETS["s34-google-2025-2026"] == pytest.approx(3.2e15 / 4.8e14)
    assert PRICE_DECLINE_PRESETS["s34-unit-cost"] == 200.0
    # Microsoft 10-Q Q2 FY2023 and Alphabet 10-K 2022: six years; Meta 2025: 5.5; Amazon
    # from 2025: five (10-K 2024)
    assert USEFUL_LIFE_YEARS == {"microsoft": 6.0, "alphabet": 6.0, "meta": 5.5,
                                 "amazon": 5.0}
    assert tk.demand_path(10.0, "s34-usage", 3).tolist() == [10.0, 70.0, 490.0]


def test_a_generation_from_the_catalogs():
    # GB200 NVL72: 120 kW for 72 GPUs (ServeTheHome, GTC 2024), the B200-class GPU of
    # 2024; its rental on the default basis is Spheron's $9.08 per Superchip-hour / 2
    g = tk.generation_of("gb200-nvl72", 1500.0, purchase_usd=50_000.0)
    assert g.name == "gb200-nvl72" and g.first_year == 2024
    assert g.power_w == pytest.approx(120e3 / 72)
    assert g.rent_usd_per_device_hour == pytest.approx(9.08 / 2)
    assert "neocloud-on-demand" in g.note
    # a bare device: its TDP alone (H100 SXM 700 W), released 2022
    h = tk.generation_of("h100-sxm", 600.0, rent=False, purchase_usd=25_000.0)
    assert (h.power_w, h.first_year, h.rent_usd_per_device_hour) == (700.0, 2022, None)
    with pytest.raises(tk.NotPublishedError, match="no published power"):
        tk.generation_of("mi300x-platform", 600.0)


@pytest.mark.parametrize("call, match", [
    (lambda: tk.fleet_plan([1e6, 1e6], [B200], 2024), "year 2024.*no generation offered"),
    (lambda: tk.fleet_plan([], [H100], 2024), "demand_tokens_per_s"),
    (lambda: tk.fleet_plan([-1.0], [H100], 2024), "demand_tokens_per_s"),
    (lambda: tk.fleet_plan([math.nan], [H100], 2024), "demand_tokens_per_s"),
    (lambda: tk.fleet_plan([1.0], [], 2024), "non-empty list of Generation"),
    (lambda: tk.fleet_plan([1.0], [H100, H100], 2024), "distinct names"),
    (lambda: tk.fleet_plan([1.0], [H100], 2024.5), "whole year"),
    (lambda: tk.fleet_plan([1.0], [H100], 2024, "x"), "FleetTerms"),
    (lambda: tk.fleet_plan([1.0], [H100], 2024, price_decline=0.0), "price_decline"),
    (lambda: tk.FleetTerms(life_years=0.0), "life_years"),
    (lambda: tk.FleetTerms(utilisation=1.5), "utilisation"),
    (lambda: tk.FleetTerms(pue=0.9), "pue"),
    (lambda: tk.FleetTerms(retire_obsolete="yes"), "retire_obsolete"),
    (lambda: tk.Generation("x", 2024, 0.0, purchase_usd=1.0), "tokens_per_s_per_device"),
    (lambda: tk.Generation("x", 2024, 1.0), "neither bought nor rented"),
    (lambda: tk.Generation("x", 2025, 1.0, purchase_usd=1.0, last_year=2024), "before"),
    (lambda: tk.Generation("", 2025, 1.0, purchase_usd=1.0), "name"),
    (lambda: tk.demand_path(1.0, "nope", 3), "unknown growth_per_year preset"),
    (lambda: tk.demand_path(1.0, 7.0, 0), "years"),
    (lambda: tk.demand_path(1e300, 1e10, 90), "overflows"),
])
def test_bad_input_names_the_term(call, match):
    with pytest.raises(TokenomicsError, match=match):
        call()


def _make(name, first, rate, power, buy, rent):
    rent = 1.0 if buy is None and rent is None else rent
    return tk.Generation(name, first, rate, power_w=power, purchase_usd=buy,
                         rent_usd_per_device_hour=rent)


_gen = st.builds(
    _make,
    st.sampled_from(["a", "b", "c"]), st.integers(2024, 2027),
    st.floats(10.0, 1e4), st.floats(0.0, 5000.0),
    st.one_of(st.none(), st.floats(0.0, 1e5)), st.one_of(st.none(), st.floats(0.1, 20.0)))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0.0, 1e7), min_size=1, max_size=8),
       st.lists(_gen, min_size=1, max_size=3, unique_by=lambda g: g.name),
       st.floats(1.0, 8.0), st.floats(0.2, 1.0), st.booleans())
def test_a_plan_never_serves_less_than_the_demand(demand, gens, life, util, retire):
    gens = [tk.Generation(g.name, 2024, g.tokens_per_s_per_device, power_w=g.power_w,
                          purchase_usd=g.purchase_usd,
                          rent_usd_per_device_hour=g.rent_usd_per_device_hour)
            if i == 0 else g for i, g in enumerate(gens)]        # one offered from the start
    terms = tk.FleetTerms(life_years=life, utilisation=util, retire_obsolete=retire)
    p = tk.fleet_plan(demand, gens, 2024, terms)
    assert np.all(p.capacity_tokens_per_s >= p.demand_tokens_per_s)
    for col in ("capex_usd", "depreciation_usd", "electricity_usd", "rental_usd", "cost_usd"):
        assert np.all(getattr(p, col) >= 0)
    by = p.by_generation.groupby("year")[["owned", "bought", "rented", "retired"]].sum()
    assert by["owned"].tolist() == p.owned_devices.tolist()
    assert by["rented"].tolist() == p.rented_devices.tolist()


@settings(max_examples=40, deadline=None)
@given(st.floats(1e3, 1e7), st.floats(1.01, 10.0))
def test_more_demand_never_costs_less_in_a_year(d0, more):
    # one generation, no retirement question: the fleet and its cost follow the demand
    a = tk.fleet_plan([d0], [H100], 2024)
    b = tk.fleet_plan([d0 * more], [H100], 2024)
    assert b.cost_usd[0] >= a.cost_usd[0] and b.owned_devices[0] >= a.owned_devices[0]
