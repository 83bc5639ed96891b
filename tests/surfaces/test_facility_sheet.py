"""The facility sheet (surfaces/facility_sheet.py): live formulas that equal tk.facility."""

from __future__ import annotations

import pytest

import tokenomics as tk
from tests.surfaces.test_export import Sheet
from tokenomics.data.systems import system


def _sheet(tmp_path, **kw):
    args = dict(devices_per_replica=8, device_price=2.0, pue=1.25, utilisation=0.8,
                price_usd_per_mtok=1.5) | kw
    path = tk.export_facility_sheet(tmp_path / "f.csv", "hgx-h100", 1e6, 1000.0, **args)
    return Sheet(path)


def test_a_1_mw_hgx_h100_sheet_by_hand(tmp_path):
    # 1 MW at PUE 1.25 feeds 800 kW of IT load; an HGX H100 node is published at 10.2 kW
    # (tokenomics.data.systems.system("hgx-h100").power_w), so 78 whole nodes, 624 GPUs, 78 replicas of 8.
    # At 1,000 tok/s per GPU and 80% utilisation: 499,200 tok/s; 624 x $2 = $1,248 an hour,
    # $1,248 / (3,600 x 499,200) x 1e6 = $0.6944 per million tokens.
    v = _sheet(tmp_path).evaluate()
    node = system("hgx-h100").power_w
    assert node == 10_200.0 and v["systems"] == 78 == 1e6 // (1.25 * node)
    assert v["devices"] == 8 * v["systems"] and v["replicas"] == v["systems"]
    assert v["tokens per second"] == pytest.approx(0.8 * v["devices"] * 1000.0)
    assert v["cost per hour"] == pytest.approx(2.0 * v["devices"])
    assert v["cost per million tokens"] == pytest.approx(2.0 / (3600 * 0.8 * 1000.0) * 1e6)
    assert v["margin"] == pytest.approx(1 - v["cost per million tokens"] / 1.5)


@pytest.mark.parametrize("power_w, price, rate", [(1e6, 2.0, 1000.0), (37e6, 3.1, 417.0),
                                                  (1.5e5, 0.9, 12_000.0)])
def test_its_formulas_recompute_as_the_library_does(tmp_path, power_w, price, rate):
    # the sheet exported at 1 MW, then other inputs typed into it, against tk.facility
    sheet = _sheet(tmp_path)
    got = sheet.evaluate(power_at_the_meter=power_w, price_per_device_hour=price,
                         output_per_device=rate)
    f = tk.facility("hgx-h100", power_w, rate, devices_per_replica=8, device_price=price,
                    pue=1.25, utilisation=0.8, price_usd_per_mtok=1.5)
    for label, field in (("systems", "systems"), ("devices", "devices"),
                         ("replicas", "replicas"), ("stranded devices", "stranded_devices"),
                         ("draw at full load", "draw_w"), ("tokens per second", "tokens_per_s"),
                         ("tokens per day", "tokens_per_day"), ("cost per hour", "usd_per_hour"),
                         ("cost per million tokens", "usd_per_mtok"),
                         ("energy per million tokens", "wh_per_mtok"),
                         ("revenue per day", "revenue_usd_per_day"), ("margin", "margin")):
        assert got[label] == pytest.approx(float(getattr(f, field)), rel=1e-12), label


def test_replicas_of_three_strand_devices_and_bad_input_is_refused(tmp_path):
    v = _sheet(tmp_path, devices_per_replica=3).evaluate()
    assert v["stranded devices"] == v["devices"] - 3 * (v["devices"] // 3)
    assert "margin" not in _sheet(tmp_path, price_usd_per_mtok=None).evaluate()
    with pytest.raises(tk.TokenomicsError, match="power_w"):
        tk.export_facility_sheet(tmp_path / "x.csv", "hgx-h100", [1e6, 2e6], 1000.0)
    with pytest.raises(tk.TokenomicsError):
        tk.export_facility_sheet(tmp_path / "x.csv", "hgx-h100", -1.0, 1000.0)
    with pytest.raises(tk.TokenomicsError):
        tk.export_facility_sheet(tmp_path / "x.csv", "hgx-h100", 1e6, 1000.0, utilisation=2.0)
    with pytest.raises(tk.TokenomicsError, match="unknown option"):
        tk.export_facility_sheet(tmp_path / "x.csv", "hgx-h100", 1e6, 1000.0, spares=2)
    with pytest.raises(tk.TokenomicsError, match="path must be a file name"):
        tk.export_facility_sheet(3, "hgx-h100", 1e6, 1000.0)
    with pytest.raises(tk.TokenomicsError, match="cannot write"):
        tk.export_facility_sheet(tmp_path, "hgx-h100", 1e6, 1000.0)       # a folder
