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
    warn_if_mixed_ages,
    warn_if_mixed_tiers,
)

_CATALOG = Path(__file__).resolve().parents[2] / "hardware_catalog"

#: Shipping devices with no price on the default basis: no dated rental (on-demand or a
#: published estimate) and no purchase price with a TDP to own it at, in a stored source.
UNPRICED = {
    "cerebras-wse3": "sold as CS-3 systems and an API; no per-device rental price, and the "
                     "system prices found are undated or an analyst calculator's estimate",
    "tpu-ironwood": "Google publishes no price: 'To get access to TPU7x, contact your account "
                    "team' (docs.cloud.google.com/tpu/docs/tpu7x)",
    "trainium3": "no AWS list price for a Trn3 instance in a stored source; the one per-core "
                 "figure found calls itself 'an illustrative estimate'",
    "mi250x": "only an undated $1.35/hour (Runcrate) and a 2024 RunPod rate for MI250, a "
              "different part; not used",
    "ascend-910c": "a reported purchase price ($28,000, 2024) but no published TDP to cost "
                   "its power",
    "gh200-144gb": "no rental or purchase price for the 144 GB HBM3e part in a stored source "
                   "(the GH200 prices found are for the 96 GB part, gh200)",
    "gaudi3-pcie": "no public price for the HL-338 PCIe card in a stored source",
    "mi350x": "the one price found is a 12-month reservation (DigitalOcean, tier "
              "long-term-contract), which the default basis does not take",
    "a800-80gb": "China-market part; no dated rental or purchase price in a stored source",
    "h800-pcie": "China-market part; no dated rental or purchase price in a stored source",
    "l20": "China-market part; no dated rental or purchase price in a stored source",
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
    assert p.tier in DEFAULT_PRICE_BASIS.tiers + ("tco",)   # tco: owned at a purchase price
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
    assert not as_price_basis("neocloud-spot").owned      # just the tiers named
    assert as_price_basis(["neocloud-spot", "estimate"]).tiers == ("neocloud-spot", "estimate")
    with pytest.raises(tk.TokenomicsError, match="price_basis must be"):
        as_price_basis(3.0)
    assert DEFAULT_PRICE_BASIS.label == ("neocloud-on-demand > hyperscaler-on-demand > "
                                         "estimate > owned, latest")
    assert PriceBasis("neocloud-spot", owned=False).label == "neocloud-spot, latest"
    with pytest.raises(tk.TokenomicsError, match="owned must be True or False"):
        PriceBasis(owned="yes")


def test_the_default_basis_prices_new_devices_from_their_sources():
    # Intel Tiber AI Cloud, 2025-02-28: 8-card instances at $19.92 (Gaudi 3) and $10.40
    # (Gaudi 2) an hour on demand, per card $2.49 and $1.30
    g3, g2 = price_on_basis("gaudi3"), price_on_basis("gaudi2")
    assert (g3.usd_per_device_hour, g3.tier, g3.date) == (19.92 / 8, "neocloud-on-demand",
                                                          "2025-02-28")
    assert g2.usd_per_device_hour == pytest.approx(10.40 / 8)
    # H800: DeepSeek's assumed $2 per GPU-hour (V3 technical report), tier "estimate"
    assert (price_on_basis("h800").usd_per_device_hour, price_on_basis("h800").tier) == \
        (2.0, "estimate")


def test_a_device_no_one_rents_is_priced_by_owning_it():
    # H20: $12,000 (SemiAnalysis' average selling price) over Amazon's 5-year server life,
    # with the 15% networking share (S44), plus 400 W x PUE 1.56 x $0.0892/kWh:
    # 12000 / 0.85 / (5 x 8760) + 0.4 x 1.56 x 0.0892 = 0.32228 + 0.05566 = $0.3779 an hour
    p = price_on_basis("h20")
    assert p.tier == "tco" and p.date == "2024-07"
    assert p.usd_per_device_hour == pytest.approx(12000 / 0.85 / (5 * 8760)
                                                  + 0.4 * 1.56 * 0.0892, rel=1e-12)
    assert "owned: purchase $12,000 over 5 years at 400 W" in p.note
    # GroqCard: $20,000 from Mouser (2024) at ~300 W
    assert price_on_basis("groq-lpu").usd_per_device_hour == pytest.approx(
        20000 / 0.85 / (5 * 8760) + 0.3 * 1.56 * 0.0892, rel=1e-12)
    # owning is a fallback that can be switched off
    with pytest.raises(tk.NotPublishedError, match="owned=False"):
        price_on_basis("h20", PriceBasis(owned=False))
    # a purchase price without a TDP names what is missing
    with pytest.raises(tk.NotPublishedError, match=r"\$28,000, 2024-08\) but no published TDP"):
        price_on_basis("ascend-910c")


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


# ---------------------------------------------------------------- issue 27: prices with an age


def test_a_resolved_price_carries_its_age_from_the_pinned_date():
    # tpu-v4.toml: Google's TPU v4 on-demand price 'as of 2022-08-11'; pinned at 2023-08-11 the
    # price is 365 days old (2022-08-11 -> 2023-08-11, no leap day between).
    p = price_on_basis("tpu-v4", PriceBasis(on_or_before="2023-08-11"))
    assert (p.date, p.age_days) == ("2022-08-11", 365)
    # a month-dated price counts from the month's first day: 2024-12-01 -> 2025-12-01 = 365
    q = price_on_basis("tpu-v6e", PriceBasis(("hyperscaler-on-demand",), on_or_before="2025-12"))
    assert (q.date, q.age_days) == ("2024-12", 365)


def test_a_pinned_basis_is_reproducible_on_any_day():
    basis = PriceBasis(on_or_before="2026-06-30")
    assert basis.as_of.isoformat() == "2026-06-30"
    first = {h: price_on_basis(h, basis) for h in ("h100-sxm", "tpu-v4", "mi300x")}
    again = {h: price_on_basis(h, PriceBasis(on_or_before="2026-06-30")) for h in first}
    assert first == again
    assert all(p.age_days >= 0 for p in first.values())    # nothing dated after the pin


def test_the_default_basis_warns_on_a_cross_age_comparison():
    # Default basis: TPU v4 resolves to its 2022-08-11 price and the H100 to a 2026 one
    # (hardware_catalog/*.toml): more than 12 months apart, so a comparison warns, naming both.
    from tokenomics.pareto.inputs import device_prices
    deps = [tk.Deployment("llama-3.1-8b", h) for h in ("tpu-v4", "h100-sxm")]
    with pytest.warns(UserWarning, match=r"months apart \(tpu-v4 2022-08-11, h100-sxm 2026"):
        device_prices(deps, None)


def test_the_age_spread_is_configurable_and_caller_prices_are_left_out():
    a = BasisPrice(4.54, "neocloud-on-demand", "2026-03-17", "s")
    b = BasisPrice(2.70, "neocloud-on-demand", "2025-01", "s")      # 14.5 months before a
    with pytest.warns(UserWarning, match="more than 12"):
        warn_if_mixed_ages({"h200": a, "x": b})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_if_mixed_ages({"h200": a, "x": b}, max_spread_months=15)
        warn_if_mixed_ages({"h200": a, "y": BasisPrice(1.0, "user", "", "prices="), "z": None})
    with pytest.raises(tk.TokenomicsError, match="max_spread_months"):
        PriceBasis(max_spread_months=-1)


@pytest.mark.parametrize("bad", [None, 5, {"h200": 3.0}])
def test_the_warnings_refuse_what_is_not_a_price_map(bad):
    for fn in (warn_if_mixed_tiers, warn_if_mixed_ages):
        with pytest.raises(tk.TokenomicsError, match="mapping of hardware id to BasisPrice"):
            fn(bad)
    with pytest.raises(tk.TokenomicsError, match="max_spread_months"):
        warn_if_mixed_ages({}, "12")
