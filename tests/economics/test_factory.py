"""A facility sized from its power at the meter (issue 29): hand calculations, published
facility figures and the properties a capacity planner relies on."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tokenomics as tk
from tokenomics.economics.factory import facility


def test_a_100_mw_gb300_facility_by_hand():
    # NVIDIA's reference architecture: a GB300 NVL72 rack draws up to 142 kW. At PUE 1.2,
    # 100 MW feeds 100e6 / 1.2 = 83.3 MW of IT load: floor(83.3e6 / 142e3) = 586 racks of
    # 72 GPUs = 42,192 GPUs, drawing 586 x 142 kW x 1.2 = 99.85 MW at the meter.
    f = facility("gb300-nvl72", 100e6, 1000.0, device_price=3.0, pue=1.2)
    assert int(f.systems) == 586 and int(f.devices) == 586 * 72
    assert float(f.draw_w) == pytest.approx(586 * 142e3 * 1.2)
    # 42,192 GPUs x 1,000 tok/s; $3 per GPU-hour at 1,000 tok/s is 3 / 3600 * 1e6 / 1000
    assert float(f.tokens_per_s) == pytest.approx(42_192_000)
    assert float(f.usd_per_mtok) == pytest.approx(3.0 / 3600 / 1000 * 1e6)
    # energy at the meter: 142 kW x 1.2 / 72 GPUs = 2,366.7 W a GPU over 1,000 tok/s
    assert float(f.wh_per_mtok) == pytest.approx(142e3 * 1.2 / 72 / 1000 / 3600 * 1e6)
    # beyond its 72 x 1,400 W GPUs the rack draws 142 - 100.8 = 41.2 kW (Grace CPUs, switch
    # trays, NICs, fans, conversion)
    assert f.overhead_w == pytest.approx(142e3 - 72 * 1400)


def test_replicas_strand_the_devices_they_cannot_use():
    # 10 racks of 72 GPUs in replicas of 16: floor(720 / 16) = 45 replicas, 0 stranded;
    # replicas of 7: 102 replicas, 720 - 714 = 6 stranded, paid for and idle
    p = 10 * 142e3 * 1.5
    f16 = facility("gb300-nvl72", p, 500.0, devices_per_replica=16, device_price=2.0, pue=1.5)
    f7 = facility("gb300-nvl72", p, 500.0, devices_per_replica=7, device_price=2.0, pue=1.5)
    assert (int(f16.replicas), int(f16.stranded_devices)) == (45, 0)
    assert (int(f7.replicas), int(f7.stranded_devices)) == (102, 6)
    # the cost is every device's; the output only the serving ones'
    assert float(f7.usd_per_mtok) == pytest.approx(720 * 2.0 / (3600 * 714 * 500.0) * 1e6)


def test_revenue_and_margin_by_hand():
    # 1 rack, $2/Mtok, $3/GPU-hour, 1,000 tok/s/GPU: 72 x 1,000 x 86,400 / 1e6 x $2 =
    # $12,441.6 a day against 72 x $3 x 24 = $5,184: margin 1 - 5184 / 12441.6 = 58.3%
    f = facility("gb300-nvl72", 142e3 * 1.2, 1000.0, device_price=3.0, pue=1.2,
                 price_usd_per_mtok=2.0)
    assert float(f.revenue_usd_per_day) == pytest.approx(72 * 1000 * 86_400 / 1e6 * 2.0)
    assert float(f.margin) == pytest.approx(1 - 5184 / 12_441.6)


def test_owning_charges_the_systems_power_per_device_at_the_facilitys_pue():
    # an Ownership without power_w is charged the rack's 142 kW / 72 = 1,972 W a GPU (hosts
    # and switches included), at this facility's PUE 1.3 and $0.10/kWh
    own = tk.Ownership(50_000, 5, electricity_usd_per_kwh=0.10, networking_share=0.0)
    f = facility("gb300-nvl72", 1e6, 1000.0, device_price=own, pue=1.3)
    by_hand = 50_000 / 5 / 8760 + 142e3 / 72 / 1000 * 1.3 * 0.10
    assert f.usd_per_device_hour == pytest.approx(by_hand)


def test_a_system_without_published_power_is_refused_with_the_way_out():
    s = tk.data.system("mi300x-platform")      # no 8-GPU server power published by AMD
    assert s.power_w is None
    with pytest.raises(tk.NotPublishedError, match="power_w"):
        facility(s, 1e6, 100.0, device_price=2.0)
    f = facility(replace(s, power_w=10_000.0), 1e6, 100.0, device_price=2.0, pue=1.0)
    assert int(f.systems) == math.floor(1e6 / 10_000)


@pytest.mark.parametrize("sid, kw, gpu_w", [
    ("hgx-h100", 10.2, 700),     # DGX H100 user guide: 10.2 kW max, 8 x 700 W
    ("hgx-b200", 14.3, 1000),    # DGX B200 user guide: 14.3 kW max, 8 x 1,000 W
    ("gb200-nvl72", 120, 1200),  # ServeTheHome, GTC 2024: the 120 kW rack (S41), 72 x 1,200 W
    ("gb300-nvl72", 142, 1400),  # NVIDIA's NVL72 reference architecture: up to 142 kW
])
def test_published_system_power_and_what_beyond_the_gpus_it_holds(sid, kw, gpu_w):
    s = tk.data.system(sid)
    f = facility(s, 1e7, 100.0, device_price=2.0, pue=1.0)
    assert f.system_power_w == pytest.approx(kw * 1e3)
    assert f.overhead_w == pytest.approx(kw * 1e3 - s.devices * gpu_w)
    # hosts, switches, NICs and fans: 28-45% of a system's power, never none of it
    assert 0.25 < f.overhead_w / f.system_power_w < 0.5


def test_colossus_100k_h100_on_150_mw_implies_a_pue_below_the_average():
    # Tom's Hardware (Nov 2024): xAI's Colossus was approved 150 MW "enabling all 100,000
    # GPUs to run concurrently". In DGX H100 systems at their 10.2 kW maximum, 100,000 GPUs
    # are 12,500 x 10.2 kW = 127.5 MW of IT load: PUE 150 / 127.5 = 1.176 by hand
    implied = 150e6 / (100_000 / 8 * 10.2e3)
    assert implied == pytest.approx(1.176, abs=1e-3)
    f = facility("hgx-h100", 150e6, 100.0, device_price=2.0, pue=implied)
    assert int(f.devices) == pytest.approx(100_000, rel=1e-3)
    # at the industry-average PUE 1.56 (Uptime 2024, the default) the same 150 MW feeds a
    # quarter fewer: 150e6 / 1.56 / 10.2e3 = 9,426 systems, 75,408 GPUs
    avg = facility("hgx-h100", 150e6, 100.0, device_price=2.0)
    assert int(avg.devices) == 9_426 * 8


@pytest.mark.parametrize("kw, msg", [
    (dict(power_w=-1.0), "power_w"), (dict(power_w=float("nan")), "power_w"),
    (dict(tokens_per_s_per_device=0.0), "tokens_per_s_per_device"),
    (dict(tokens_per_s_per_device=1e300), "tokens_per_s_per_device"),
    (dict(devices_per_replica=0), "devices_per_replica"),
    (dict(devices_per_replica=2.5), "devices_per_replica"),
    (dict(pue=0.9), "pue"), (dict(utilisation=0.0), "utilisation"),
    (dict(utilisation=1.5), "utilisation"), (dict(price_usd_per_mtok=0.0), "price"),
    (dict(system_id="no-such-rack"), "unknown system"),
])
def test_bad_terms_get_the_librarys_error(kw, msg):
    args = dict(system_id="gb300-nvl72", power_w=1e6, tokens_per_s_per_device=100.0,
                device_price=2.0)
    args.update(kw)
    with pytest.raises(tk.TokenomicsError, match=msg):
        facility(**args)


def test_a_budget_below_one_system_serves_nothing_and_says_so():
    f = facility("gb300-nvl72", [1e3, 1e9], 100.0, device_price=2.0, pue=1.2)
    assert f.systems[0] == 0 and f.tokens_per_s[0] == 0
    assert math.isinf(f.usd_per_mtok[0]) and math.isfinite(f.usd_per_mtok[1])


@settings(max_examples=60, deadline=None)
@given(p=st.floats(1e4, 1e10), q=st.floats(1e4, 1e10), rate=st.floats(1.0, 1e5),
       d_r=st.integers(1, 144), pue=st.floats(1.0, 2.5))
def test_more_power_never_serves_fewer_tokens(p, q, rate, d_r, pue):
    lo, hi = sorted((p, q))
    f = facility("gb300-nvl72", [lo, hi], rate, devices_per_replica=d_r, device_price=2.0,
                 pue=pue)
    assert f.tokens_per_s[1] >= f.tokens_per_s[0]
    assert np.all(f.draw_w <= f.power_w * (1 + 1e-12))
    assert np.all(f.replicas * d_r + f.stranded_devices == f.devices)


@settings(max_examples=60, deadline=None)
@given(u1=st.floats(0.01, 1.0), u2=st.floats(0.01, 1.0), rate=st.floats(1.0, 1e5))
def test_cost_per_token_falls_as_utilisation_rises(u1, u2, rate):
    lo, hi = sorted((u1, u2))
    a = facility("gb300-nvl72", 1e7, rate, device_price=2.0, utilisation=lo)
    b = facility("gb300-nvl72", 1e7, rate, device_price=2.0, utilisation=hi)
    assert float(b.usd_per_mtok) <= float(a.usd_per_mtok) * (1 + 1e-12)


def test_the_cost_waterfall_by_hand():
    # 1 MW of HGX B200 nodes (14.3 kW) at PUE 1.25: floor(800 kW / 14.3 kW) = 55 nodes, 440
    # GPUs; replicas of 3 GPUs leave 440 - 3 x 146 = 2 stranded. Owning at $40,000 over 4
    # years, no networking share, $0.10/kWh on the node's 14.3 kW / 8 per GPU at PUE 1.25.
    own = tk.Ownership(40_000, 4, electricity_usd_per_kwh=0.10, networking_share=0.0)
    f = facility("hgx-b200", 1e6, 500.0, devices_per_replica=3, device_price=own, pue=1.25)
    assert (int(f.systems), int(f.devices), int(f.stranded_devices)) == (55, 440, 2)
    w = f.cost_waterfall()
    tok_h = 438 * 500.0 * 3600 / 1e6                   # Mtok an hour from 146 replicas
    cap = 40_000 / 4 / 8760
    elec = 14.3e3 / 8 / 1000 * 1.25 * 0.10
    assert w.loc["device_capital"].iloc[0] == pytest.approx(438 * cap / tok_h)
    assert w.loc["electricity"].iloc[0] == pytest.approx(438 * elec / tok_h)
    assert w.loc["networking_capital"].iloc[0] == 0.0 and w.loc["spares"].iloc[0] == 0.0
    assert w.loc["stranded"].iloc[0] == pytest.approx(2 * (cap + elec) / tok_h)
    assert w.iloc[:, 0].sum() == pytest.approx(float(f.usd_per_mtok))
    # an SLA's spares join the waterfall, which still adds up to the (higher) $/Mtok
    g = f.with_spares(0.999, repair_hours=24.0)
    wg = g.cost_waterfall()
    assert wg.loc["spares"].iloc[0] > 0
    assert wg.iloc[:, 0].sum() == pytest.approx(float(g.usd_per_mtok))


def test_a_rented_fleet_waterfalls_as_one_rental_part_per_budget():
    f = facility("gb300-nvl72", np.array([1e6, 100e6]), 1000.0, device_price=3.0, pue=1.2)
    w = f.cost_waterfall()
    assert list(w.columns) == ["1 MW", "100 MW"]
    assert list(w.index) == ["rental", "stranded", "spares"]
    np.testing.assert_allclose(w.sum().to_numpy(), f.usd_per_mtok)
    assert w.loc["rental"].to_numpy() == pytest.approx([3.0 / 3.6] * 2)


def test_a_grid_of_budgets_waterfalls_in_c_order():
    # found by the fuzz profile: a 2-D array of budgets (the facility is vectorised over any
    # shape) gave a formatting TypeError; its columns are the budgets in C order
    p = np.array([[1e6, 2e6], [5e6, 1e7]])
    f = facility("gb300-nvl72", p, 1000.0, device_price=3.0, pue=1.2)
    w = f.cost_waterfall()
    assert list(w.columns) == ["1 MW", "2 MW", "5 MW", "10 MW"]
    np.testing.assert_allclose(w.sum().to_numpy(), np.ravel(f.usd_per_mtok))
