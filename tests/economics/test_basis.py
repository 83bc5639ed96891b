"""One price basis: every shipping device priced on it, tier/date policy, tier-mixing warning."""

import tomllib
import warnings
from pathlib import Path

import pytest

import tokenomics as tk
from tokenomics.economics.basis import (
    DEFAULT_PRICE_BASIS,
    BasisPrice,
    PriceBasis,
    as_price_basis,
    price_on_basis,
    warn_if_mixed_tiers,
)

_CATALOG = Path(__file__).resolve().parents[2] / "hardware_catalog"

#: Shipping devices without a dated neocloud/hyperscaler on-demand price in a stored source.
UNPRICED = {
    "cerebras-wse3": "sold as CS-3 systems and an API; no per-device rental price",
    "groq-lpu": "sold as an API (tokens); no per-device rental price",
    "gaudi3": "only Intel's 2024 kit list price (purchase); a search for IBM Cloud / Intel "
              "Tiber Gaudi 3 hourly rates found availability news but no per-hour figure",
    "h800": "only DeepSeek's assumed $2/hr (tier 'estimate'); not rented on-demand",
    "tpu-ironwood": "Google Cloud per-chip on-demand price not found in a stored source",
    "trainium3": "the stored instances.vantage.sh copy (tsaol/aws-gpu, 2026-01) lists no Trn3 "
                 "instance; a '~$32/hr' figure found treats trn3.48xlarge as one chip (wrong)",
    "h20": "only an analyst's average selling price ($12,000, purchase tier); searches for an "
           "hourly H20 rental rate found none",
    "mi250x": "only an undated MI250 (not MI250X) rate of $1.00/hr without its unit (per GPU "
              "or per package); not used",
    "ascend-910c": "searched Ascend 910C and CloudMatrix 384 rental and purchase prices; no "
                   "stored page states one",
    "gaudi2": "Databricks (2024-01) compared Intel Developer Cloud on-demand Gaudi 2 pricing, "
              "but the stored copies show no figure; no other Gaudi 2 rate found",
}


def _shipping() -> list[str]:
    out = []
    for f in sorted(_CATALOG.glob("*.toml")):
        if f.name == "sources.toml":
            continue
        d = tomllib.loads(f.read_text())
        if d.get("status") == "shipping":
            out.append(d["id"])
    return out


@pytest.mark.parametrize("hw_id", [h for h in _shipping() if h not in UNPRICED])
def test_default_basis_prices_every_shipping_device(hw_id):
    p = price_on_basis(tk.hardware(hw_id))
    assert p.tier in DEFAULT_PRICE_BASIS.tiers
    assert p.usd_per_device_hour > 0 and p.date and p.source


@pytest.mark.parametrize("hw_id", sorted(h for h in UNPRICED if h in _shipping()))
def test_listed_unpriced_devices_really_are(hw_id):
    # if one of these gains a price on the default basis, take it off the list
    with pytest.raises(tk.NotPublishedError, match="no rental price on the basis"):
        price_on_basis(tk.hardware(hw_id))


def test_catalog_figures_on_the_default_basis():
    # Spheron's on-demand prices as of 2026-03-17 (spheron-h200-b200-gb200-2026)
    h200 = price_on_basis(tk.hardware("h200"))
    assert (h200.usd_per_device_hour, h200.tier, h200.date) == (4.54, "neocloud-on-demand",
                                                                 "2026-03-17")
    # GB200: $9.08 per Superchip of 2 GPUs
    assert price_on_basis(tk.hardware("gb200")).usd_per_device_hour == pytest.approx(9.08 / 2)
    # TPU v6e has no neocloud price: the basis falls back to Google's $2.70 per chip-hour
    v6e = price_on_basis(tk.hardware("tpu-v6e"))
    assert (v6e.usd_per_device_hour, v6e.tier) == (2.70, "hyperscaler-on-demand")


def test_tier_order_and_date_policy():
    h200 = tk.hardware("h200")
    # AWS capacity block $43.26 / 8 GPUs = $5.408, dated 2024-12
    cb = price_on_basis(h200, "hyperscaler-capacity-block")
    assert cb.usd_per_device_hour == pytest.approx(43.26 / 8, abs=1e-3)
    # on or before 2025-01: the 2026 neocloud price does not exist yet, the block is next
    old = price_on_basis(h200, PriceBasis(("neocloud-on-demand", "hyperscaler-capacity-block"),
                                          on_or_before="2025-01"))
    assert (old.tier, old.date) == ("hyperscaler-capacity-block", "2024-12")
    with pytest.raises(tk.NotPublishedError, match="rental prices it has"):
        price_on_basis(h200, PriceBasis(("neocloud-on-demand",), on_or_before="2025"))
    spot = price_on_basis(tk.hardware("b200"), "neocloud-spot")
    assert spot.usd_per_device_hour == 2.25     # Spheron B200 spot, 2026-03-19


def test_a_partial_date_counts_as_its_first_day():
    v6e = tk.hardware("tpu-v6e")                  # priced "2024-12"
    assert price_on_basis(v6e, PriceBasis(("hyperscaler-on-demand",), "2024-12-01")).date \
        == "2024-12"
    with pytest.raises(tk.NotPublishedError):
        price_on_basis(v6e, PriceBasis(("hyperscaler-on-demand",), "2024-11-30"))


@pytest.mark.parametrize("bad", [dict(tiers=()), dict(tiers=("purchase",)),
                                 dict(tiers=("on-demand",)), dict(on_or_before="2025/06"),
                                 dict(on_or_before="June 2025")])
def test_bad_basis_names_what_is_wrong(bad):
    with pytest.raises(tk.TokenomicsError, match="PriceBasis"):
        PriceBasis(**bad)


def test_as_price_basis_forms():
    assert as_price_basis(None) is DEFAULT_PRICE_BASIS
    assert as_price_basis("neocloud-spot").tiers == ("neocloud-spot",)
    assert as_price_basis(["neocloud-spot", "estimate"]).tiers == ("neocloud-spot", "estimate")
    with pytest.raises(tk.TokenomicsError, match="price_basis must be"):
        as_price_basis(3.0)
    assert DEFAULT_PRICE_BASIS.label == "neocloud-on-demand > hyperscaler-on-demand, latest"


def test_mixing_tiers_warns_naming_the_devices():
    a = BasisPrice(4.54, "neocloud-on-demand", "2026-03-17", "s")
    b = BasisPrice(2.70, "hyperscaler-on-demand", "2024-12", "s")
    with pytest.warns(UserWarning, match=r"hyperscaler-on-demand: tpu-v6e; "
                                         r"neocloud-on-demand: h200"):
        warn_if_mixed_tiers({"h200": a, "tpu-v6e": b})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # one tier, unpriced devices and caller-given prices: no warning
        warn_if_mixed_tiers({"h200": a, "b200": a, "x": None,
                             "y": BasisPrice(1.0, "user", "", "prices=")})


def test_rental_price_keeps_working():
    # latest of any tier, as before; and of one tier
    assert tk.rental_price(tk.hardware("h800")).usd == 2.0
    assert tk.rental_price(tk.hardware("h200"), "hyperscaler-capacity-block").usd == 5.408


def test_prices_added_2026_12():
    # AWS p3dn.24xlarge on-demand $31.212 per instance-hour / 8 V100 32 GB (instances.vantage.sh)
    v100 = price_on_basis(tk.hardware("v100-sxm2-32gb"))
    assert v100.usd_per_device_hour == pytest.approx(31.212 / 8)
    assert v100.tier == "hyperscaler-on-demand"
    # Vultr MI355X $2.590 per GPU-hour on-demand (2026-07-31); neocloud comes first on the basis
    mi355x = price_on_basis(tk.hardware("mi355x"))
    assert (mi355x.usd_per_device_hour, mi355x.tier) == (2.59, "neocloud-on-demand")
    # GB300: Oracle's BM.GPU.GB300.4 at $18.00 per GPU-hour is the only published list price
    gb300 = price_on_basis(tk.hardware("gb300"))
    assert (gb300.usd_per_device_hour, gb300.tier, gb300.date) == (18.0, "hyperscaler-on-demand",
                                                                   "2026-09-19")
