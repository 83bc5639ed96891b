"""Rentals (data/rentals.py): a device's latest dated rental price, of a tier, before a date."""

from __future__ import annotations

import pytest

import tokenomics as tk
from tokenomics.data.rentals import latest_rental, rental_price, rentals_listed
from tokenomics.data.specs import Hardware, Price


def _hw(**changes):
    base = dict(id="toy", name="toy device", peak_flop_per_s={"bf16": 1e15},
                mem_capacity_bytes=80e9, mem_bw_bytes_per_s=4e12)
    return Hardware(**{**base, **changes})


# ---- rental_price --------------------------------------------------------------------------
PRICES = (
    Price(usd=4.0, per_hour=True, tier="neocloud-on-demand", date="2024-06", source="s"),
    Price(usd=3.0, per_hour=True, tier="neocloud-on-demand", date="2025-03", source="s"),
    Price(usd=9.0, per_hour=True, tier="hyperscaler-on-demand", date="2024-12", source="s"),
    Price(usd=30_000.0, per_hour=False, tier="purchase", date="2026-01", source="s"),
)


def test_rental_price_picks_the_latest_dated_rental():
    h = _hw(prices=PRICES)
    # Rentals dated 2024-06, 2025-03, 2024-12: the latest is 2025-03 at 3 USD/hour. The
    # purchase (2026-01) is newer but is not a rental.
    assert rental_price(h).usd == 3.0
    assert rental_price(h, tier="hyperscaler-on-demand").usd == 9.0
    assert rental_price(h, "neocloud-on-demand").date == "2025-03"


def test_no_rental_price():
    with pytest.raises(tk.NotPublishedError, match=r"toy: no rental price of tier 'estimate' in "
                                                   r"the catalog \(rental prices it has: "
                                                   r"neocloud-on-demand 2024-06, "
                                                   r"neocloud-on-demand 2025-03, "
                                                   r"hyperscaler-on-demand 2024-12\)"):
        rental_price(_hw(prices=PRICES), tier="estimate")
    with pytest.raises(tk.NotPublishedError, match=r"on the default tiers .* has: none\); "
                                                   r"name a tier"):
        rental_price(_hw(prices=PRICES[3:]))


def test_the_default_price_is_on_demand_not_a_newer_spot_rate():
    # issue 26: B200 read $2.25 (a spot rate two days newer) in hardware_table and
    # rental_price, and $6.03 (neocloud on-demand) in the cost functions. One default now:
    # the first of neocloud on-demand, hyperscaler on-demand, estimate
    spot = Price(usd=1.0, per_hour=True, tier="neocloud-spot", date="2026-01", source="s")
    h = _hw(prices=(*PRICES, spot))
    assert rental_price(h).usd == 3.0 and rental_price(h, "neocloud-spot").usd == 1.0
    b200 = tk.hardware("b200")
    assert rental_price(b200).usd == 6.03 == tk.price_on_basis(b200).usd_per_device_hour
    only_spot = _hw(prices=(spot,))
    with pytest.raises(tk.NotPublishedError, match="neocloud-spot 2026-01"):
        rental_price(only_spot)


# ---- Attention and Model -------------------------------------------------------------------


def test_latest_rental_picks_the_latest_of_a_tier_within_a_date():
    # Two dated prices of one tier and one of another, written by hand.
    hw = tk.hardware("h100-sxm").with_(prices=(
        tk.Price(usd=2.0, per_hour=True, tier="neocloud-on-demand", date="2025-01", source="s1"),
        tk.Price(usd=3.0, per_hour=True, tier="neocloud-on-demand", date="2026-03-17", source="s2"),
        tk.Price(usd=9.0, per_hour=True, tier="hyperscaler-on-demand", date="2026-06", source="s3")))
    assert latest_rental(hw, "neocloud-on-demand").usd == 3.0
    assert latest_rental(hw, "neocloud-on-demand", on_or_before="2026-03").usd == 2.0
    assert latest_rental(hw).usd == 9.0                      # any tier: the latest date
    assert latest_rental(hw, "neocloud-spot") is None
    assert "hyperscaler-on-demand 2026-06" in rentals_listed(hw)


def test_an_id_is_accepted_where_the_entry_is():
    # DeepSeek's assumed $2 per H800-hour (deepseek-v3-tech-report)
    assert rental_price("h800").usd == rental_price(tk.hardware("h800")).usd == 2.0
