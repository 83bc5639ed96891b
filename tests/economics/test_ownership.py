"""Owning a device: the hourly cost of a purchase and its sourced defaults."""

from __future__ import annotations

import pytest

import tokenomics as tk
from tokenomics.economics.ownership import Ownership, default_assumptions, tco_usd_per_device_hour


def test_tco_by_hand():
    # $25,000 / 4 years straight-line = $0.7134/hour; 700 W x PUE 1.5 x $0.10/kWh = $0.105.
    t = tco_usd_per_device_hour(25_000, 4, 700, 1.0, 0.0, 1.5, 0.10, 0.0)
    assert t == pytest.approx(25_000 / 4 / 8760 + 0.7 * 1.5 * 0.10)
    # Cost of capital 8%: annuity 25,000 x 0.08 / (1 - 1.08^-4) a year.
    t8 = tco_usd_per_device_hour(25_000, 4, 700, 1.0, 0.08, 1.5, 0.10, 0.0)
    assert t8 == pytest.approx(25_000 * 0.08 / (1 - 1.08 ** -4) / 8760 + 0.105)
    # Networking share 15%: capital 25,000 / 0.85.
    tn = tco_usd_per_device_hour(25_000, 4, 700, 1.0, 0.0, 1.5, 0.10, 0.15)
    assert tn == pytest.approx(25_000 / 0.85 / 4 / 8760 + 0.105)


def test_sourced_defaults():
    a = default_assumptions()
    # Uptime 2024 PUE, EIA 2023 Virginia industrial price, S44's networking share, and
    # Amazon's five-year server life (2025)
    assert a == {"pue": 1.56, "electricity_price": pytest.approx(0.0892),
                 "networking_share": 0.15, "service_life": 5.0}


@pytest.mark.parametrize("kwargs, match", [
    (dict(purchase_usd=-1), "purchase_usd must be >= 0"),
    (dict(utilisation=0), r"utilisation must be in \(0, 1\]"),
    (dict(utilisation=1.5), r"utilisation must be in \(0, 1\]"),
    (dict(pue=0.9), "pue must be >= 1"),
    (dict(amortisation_years=0), "amortisation_years must be > 0"),
])
def test_tco_errors(kwargs, match):
    base = dict(purchase_usd=25_000, amortisation_years=4, power_w=700)
    with pytest.raises(tk.TokenomicsError, match=match):
        tco_usd_per_device_hour(**{**base, **kwargs})


def test_ownership_object_and_0_1_arguments_agree():
    # $25,000 / 4 years / 8,760 h + 700 W x PUE 1.5 x $0.10/kWh = $0.7134 + $0.105 per hour.
    o = Ownership(25_000, 4, 700, 1.0, 0.0, 1.5, 0.10, 0.0)
    assert tco_usd_per_device_hour(o) == pytest.approx(25_000 / 4 / 8760 + 0.7 * 1.5 * 0.10)
    assert tco_usd_per_device_hour(o) == tco_usd_per_device_hour(25_000, 4, 700, 1.0, 0.0, 1.5,
                                                                 0.10, 0.0)
    assert tco_usd_per_device_hour(Ownership(30_000, 5, 700, facility_usd_per_device_hour=0.2)) \
        == tco_usd_per_device_hour(purchase_usd=30_000, amortisation_years=5, power_w=700,
                                   facility_usd_per_device_hour=0.2)
    with pytest.raises(tk.TokenomicsError, match="power_w is required"):
        tco_usd_per_device_hour(Ownership(25_000, 4))
    with pytest.raises(tk.TokenomicsError, match="networking_share must be in"):
        Ownership(25_000, 4, 700, networking_share=1.0)


@pytest.mark.parametrize("r", [1e-17, 1e-12, 1e-9])
def test_a_vanishing_cost_of_capital_tends_to_straight_line(r):
    # the annuity r / (1 - (1 + r)^-n) -> 1/n as r -> 0 (its plain form divided by zero at
    # r = 1e-17, issue 25); at r = 1e-9 it is 1/n x (1 + (n + 1) r / 2), 2.5e-9 above
    flat = tco_usd_per_device_hour(Ownership(30000, 4, 700))
    assert tco_usd_per_device_hour(Ownership(30000, 4, 700, cost_of_capital=r)) == \
        pytest.approx(flat, rel=1e-8)


def test_the_parts_of_an_hour_by_hand_add_up_to_the_tco():
    # $25,000 at 8% over 4 years, 15% networking, 700 W at PUE 1.5 and $0.10/kWh, $0.05/h of
    # facility: the annuity factor 0.08 / (1 - 1.08^-4) = 0.30192 a year per dollar
    from tokenomics.economics.ownership import TCO_PARTS, tco_parts
    o = Ownership(25_000, 4, 700, 1.0, 0.08, 1.5, 0.10, 0.15, facility_usd_per_device_hour=0.05)
    p = tco_parts(o)
    ann = 0.08 / (1 - 1.08 ** -4)
    assert list(p) == list(TCO_PARTS)
    assert p["device_capital"] == pytest.approx(25_000 * ann / 8760)
    assert p["networking_capital"] == pytest.approx(25_000 * (1 / 0.85 - 1) * ann / 8760)
    assert p["electricity"] == pytest.approx(0.105) and p["facility"] == 0.05
    assert sum(p.values()) == pytest.approx(tco_usd_per_device_hour(o), rel=1e-15)
    with pytest.raises(tk.TokenomicsError, match="power_w is required"):
        tco_parts(Ownership(25_000, 4))
