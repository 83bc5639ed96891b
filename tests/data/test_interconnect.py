"""Links (data/interconnect.py): topology() reads a device's scale-up and scale-out links off its
catalog entry; Topology.check rejects groups the published links cannot connect.

Catalog figures used: H100 SXM NVLink 4 is 900 GB/s bidirectional = 450 GB/s per direction,
8 GPUs per HGX domain, a 400 Gb/s NIC = 50 GB/s per direction, a 2 us network latency;
it publishes no NVLink latency. B200 publishes neither latency.
"""

from __future__ import annotations

import pytest

import tokenomics as tk
from tokenomics.data.interconnect import (
    ALGORITHMS,
    DEFAULT_SCALE_OUT_LATENCY_S,
    DEFAULT_SCALE_UP_LATENCY_S,
    Topology,
    topology,
)


def test_per_direction_bandwidth_times_link_efficiency():
    t = topology(tk.hardware("h100-sxm"))
    assert (t.domain_size, t.up_bytes_per_s, t.out_bytes_per_s) == (8, 450e9, 50e9)
    # At 80% achieved link bandwidth: 450 x 0.8 = 360 GB/s and 50 x 0.8 = 40 GB/s.
    t80 = topology(tk.hardware("h100-sxm"), 0.8)
    assert t80.up_bytes_per_s == pytest.approx(360e9)
    assert t80.out_bytes_per_s == pytest.approx(40e9)
    assert t80.domain_size == 8 and t80.up_latency_s == t.up_latency_s   # latency unscaled


def test_nccl_default_latencies_where_the_catalog_has_none():
    # NCCL's tuning model (src/graph/tuning.cc): 0.6 us per NVLink hop, 2.7 us over the network.
    assert (DEFAULT_SCALE_UP_LATENCY_S, DEFAULT_SCALE_OUT_LATENCY_S) == (0.6e-6, 2.7e-6)
    b200 = topology(tk.hardware("b200"))
    assert (b200.up_latency_s, b200.out_latency_s) == (0.6e-6, 2.7e-6)
    # The H100 entry publishes a 2 us network latency, which wins over the default.
    h100 = topology(tk.hardware("h100-sxm"))
    assert (h100.up_latency_s, h100.out_latency_s) == (0.6e-6, 2e-6)


def test_explicit_latencies_win():
    t = topology(tk.hardware("h100-sxm"), scale_up_latency_s=1e-6, scale_out_latency_s=5e-6)
    assert (t.up_latency_s, t.out_latency_s) == (1e-6, 5e-6)


def test_domain_size_when_the_catalog_gives_none():
    # No scale-up link at all (a wafer-scale part): a domain of one device.
    # Cerebras: one wafer per CS-3, 12 x 100 GbE system I/O = 1.2 Tb/s = 150 GB/s each way.
    wse = topology(tk.hardware("cerebras-wse3"))
    assert (wse.domain_size, wse.up_bytes_per_s, wse.out_bytes_per_s) == (1, None, 150e9)
    # A scale-up link without a published domain size: 0, "unknown", for the layout check.
    unknown = tk.hardware("h100-sxm").with_(scale_up_domain_size=None)
    assert topology(unknown).domain_size == 0


@pytest.mark.parametrize("eff", [0.0, -0.1, 1.01])
def test_link_efficiency_must_be_a_fraction(eff):
    with pytest.raises(tk.TokenomicsError, match=rf"link_efficiency must be in \(0, 1\], "
                                                 rf"got {eff!r}"):
        topology(tk.hardware("h100-sxm"), eff)


# ---- Topology.check ------------------------------------------------------------------------
NVL8 = Topology(domain_size=8, up_bytes_per_s=450e9, up_latency_s=0.6e-6,
                out_bytes_per_s=50e9, out_latency_s=2.7e-6)


@pytest.mark.parametrize("group", [0, 1, 2, 8, 16, 64])
def test_groups_the_links_connect(group):
    NVL8.check(group, "tp", "x")       # within a domain, or whole domains over the NIC


def test_a_group_that_is_not_whole_domains():
    # 12 devices = one domain of 8 plus 4: 12 / 8 is not whole.
    with pytest.raises(tk.TokenomicsError, match=r"tp=12 spans 12 devices, which is not a "
                                                 r"multiple of x's scale-up domain of 8"):
        NVL8.check(12, "tp=12", "x")


def test_no_scale_up_bandwidth():
    # A domain of 8 without a scale-up bandwidth (the MI355X entry before its Infinity Fabric
    # figure was added).
    t = topology(tk.hardware("mi355x").with_(scale_up_bw_bytes_per_s=None))
    assert (t.domain_size, t.up_bytes_per_s) == (8, None)
    with pytest.raises(tk.TokenomicsError, match=r"tp=8 spans 8 devices but mi355x has no "
                                                 r"published scale-up bandwidth"):
        t.check(8, "tp=8", "mi355x")
    t.check(1, "tp=1", "mi355x")       # one device needs no link


def test_no_scale_out_bandwidth():
    no_nic = Topology(8, 300e9, 0.6e-6, None, 2.7e-6)
    no_nic.check(8, "tp=8", "a100")
    with pytest.raises(tk.TokenomicsError, match=r"spans 16 devices, more than a100's scale-up "
                                                 r"domain of 8, and no scale-out bandwidth"):
        no_nic.check(16, "tp=16", "a100")


def test_algorithm_names():
    assert ALGORITHMS == ("ring", "tree", "one_shot", "two_shot")
