"""Figures in time (surfaces/timeplots.py): each draws what its result holds."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import tokenomics as tk  # noqa: E402

D8 = tk.Deployment("llama-3.1-8b", "h100-sxm")


def _by_gid(ax, gid):
    return [a for a in [*ax.lines, *ax.patches] if a.get_gid() == gid]


def test_journey_waterfall_bars_end_to_end():
    j = tk.request_journey(D8, 2048, 128, device_price=2.0)
    ax = tk.plot_journey(j)
    bars = _by_gid(ax, "step")
    assert len(bars) == len(j.step)
    # each bar starts where the previous one ended: the last ends at the end-to-end time
    ends = [b.get_x() + b.get_width() for b in bars]
    assert ends[-1] == pytest.approx(j.e2e_s * 1e3, rel=1e-9)
    assert all(bars[k + 1].get_x() == pytest.approx(ends[k]) for k in range(len(bars) - 1))
    (ttft,) = _by_gid(ax, "ttft")
    assert ttft.get_xdata()[0] == pytest.approx(j.ttft_s * 1e3)
    (read,) = _by_gid(ax, "read_start")
    assert read.get_xdata()[0] == 300            # the source's ~0.3 s


def test_serving_trace_lines_per_policy():
    trs = [tk.simulate_serving(D8, 10.0, 1024, 256, admission=p, steps=300)
           for p in ("naive", "smoothed")]
    ax = tk.plot_serving(trs)
    lines = _by_gid(ax, "decode_batch")
    assert len(lines) == 2 and np.array_equal(lines[0].get_ydata(), trs[0].decode_batch)
    with pytest.raises(tk.TokenomicsError, match="ServingTrace"):
        tk.plot_serving([1, 2])


def test_sessions_occupancy_against_capacity():
    a = tk.agent_sessions(tk.Deployment("llama-3.1-70b", "h100-sxm", tp=8), 200,
                          concurrent=5, horizon_s=7200)
    ax = tk.plot_sessions(a)
    (hbm,) = _by_gid(ax, "hbm")
    assert np.allclose(hbm.get_ydata(), a.hbm_fraction)
    assert np.allclose(hbm.get_xdata(), np.asarray(a.time_s) / 3600)
    with pytest.raises(tk.TokenomicsError, match="AgentSessions"):
        tk.plot_sessions(a.sessions)


def test_cost_waterfall_bars_stack_to_the_facilitys_cost():
    f = tk.facility("gb300-nvl72", 100e6, 1000.0, pue=1.2, device_price=tk.Ownership(
        60_000, 4, electricity_usd_per_kwh=0.08))
    ax = tk.plot_cost_waterfall(f)
    parts = _by_gid(ax, "part")
    assert len(parts) == 6              # four parts of a device-hour, stranded, spares
    top = parts[-1].get_y() + parts[-1].get_height()
    assert top == pytest.approx(float(f.usd_per_mtok))
    assert _by_gid(ax, "total")[0].get_height() == pytest.approx(float(f.usd_per_mtok))
    for a, b in zip(parts, parts[1:], strict=False):            # each starts where one ended
        assert b.get_y() == pytest.approx(a.get_y() + a.get_height())


def test_cost_waterfall_refuses_what_it_cannot_draw():
    f = tk.facility("gb300-nvl72", np.array([1e5, 1e6]), 1000.0, device_price=3.0)
    with pytest.raises(tk.TokenomicsError, match="holds no replica"):
        tk.plot_cost_waterfall(f, 0)            # 100 kW feeds no 142 kW rack
    with pytest.raises(tk.TokenomicsError, match="index must be a whole number from 0 to 1"):
        tk.plot_cost_waterfall(f, 2)
    with pytest.raises(tk.TokenomicsError, match="expected a Facility"):
        tk.plot_cost_waterfall(D8)


def test_tokens_per_mw_by_system():
    # 10 MW at PUE 1.2 and 1,000 tok/s a GPU: HGX H100 nodes of 10.2 kW hold 8 GPUs
    # (floor(8.33 MW / 10.2 kW) = 816 nodes, 6,528 GPUs); GB200 NVL72 racks of 120 kW hold
    # 72 (69 racks, 4,968 GPUs). Tokens per MW: 652,800 and 496,800.
    fs = [tk.facility(s, 10e6, 1000.0, device_price=3.0, pue=1.2)
          for s in ("hgx-h100", "gb200-nvl72")]
    ax = tk.plot_tokens_per_mw(fs)
    bars = _by_gid(ax, "system")
    assert [b.get_height() for b in bars] == pytest.approx([6528 * 1000 / 10, 4968 * 1000 / 10])
    with pytest.raises(tk.TokenomicsError, match="a Facility or a list of them"):
        tk.plot_tokens_per_mw([])
    with pytest.raises(tk.TokenomicsError, match="expected a Facility"):
        tk.plot_tokens_per_mw([D8])


def test_the_facility_figures_take_a_grid_of_budgets():
    g = tk.facility("gb300-nvl72", np.array([[1e6, 2e6], [5e6, 1e7]]), 1000.0, device_price=3.0)
    ax = tk.plot_cost_waterfall(g, 3)                       # the 10 MW budget, in C order
    assert "10 MW" in ax.get_title()
    bars = _by_gid(tk.plot_tokens_per_mw([g]), "system")
    assert bars[0].get_height() == pytest.approx(float(g.tokens_per_s_per_mw[0, 0]))
