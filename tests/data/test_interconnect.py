"""Links (data/interconnect.py): topology() reads a device's scale-up and scale-out links off its
catalog entry; Topology.check rejects groups the published links cannot connect.

Catalog figures used: H100 SXM NVLink 4 is 900 GB/s bidirectional = 450 GB/s per direction,
8 GPUs per HGX domain, a 400 Gb/s NIC = 50 GB/s per direction, a 2 us network latency;
it publishes no NVLink latency. B200 publishes neither latency.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import tokenomics as tk
from tokenomics.data.interconnect import (
    ALGORITHMS,
    DEFAULT_SCALE_OUT_LATENCY_S,
    DEFAULT_SCALE_UP_LATENCY_S,
    Topology,
    link_share,
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


# --------------------------------------------------------------------------------------------
# How the domain is wired: the share of the links a smaller group drives
# --------------------------------------------------------------------------------------------
def test_mesh_pair_uses_one_of_seven_infinity_fabric_links():
    # AMD MI300X platform: 8 GPUs fully connected by 7 links of 64 GB/s each way; the catalog
    # stores the aggregate 896 GB/s bidirectional = 448 GB/s each way
    topo = topology(tk.hardware("mi300x"))
    assert topo.kind == "mesh"
    assert topo.group_bytes_per_s(8) == pytest.approx(448e9)
    assert topo.group_bytes_per_s(2) == pytest.approx(64e9)
    assert topo.group_bytes_per_s(4) == pytest.approx(3 * 64e9)


def test_switched_domain_gives_every_group_the_full_link():
    # NVLink Switch: 900 GB/s each way per B200 whatever the peer set
    topo = topology(tk.hardware("b200"))
    assert topo.kind == "switched"
    assert topo.group_bytes_per_s(2) == topo.group_bytes_per_s(8) == pytest.approx(900e9)


@pytest.mark.parametrize("kind, group, share", [
    ("torus-2d", 2, 1 / 4),    # one port of four (extent 2: both neighbours are one chip)
    ("torus-2d", 4, 2 / 4),    # 2 x 2
    ("torus-2d", 8, 3 / 4),    # 4 x 2
    ("torus-2d", 16, 4 / 4),   # 4 x 4 ring in both dimensions
    ("torus-3d", 8, 3 / 6),    # 2 x 2 x 2
    ("torus-3d", 64, 6 / 6),   # 4 x 4 x 4 cube
    ("torus-3d", 3, 2 / 6),    # a ring of 3 in one dimension
    ("mesh", 256, 1.0), ("mesh", 1, 1.0), ("mesh", 2, 1 / 255), ("switched", 5, 1.0),
])
def test_link_share_by_hand(kind, group, share):
    # a domain of 256 devices (a TPU v5e / v6e pod)
    assert link_share(kind, group, 256) == pytest.approx(share)


def test_tpu_and_trainium_domains_are_tori():
    assert topology(tk.hardware("tpu-v5e")).kind == "torus-2d"
    assert topology(tk.hardware("tpu-v5p")).kind == "torus-3d"
    # trn2.48xlarge: 16 Trainium2 on a 4 x 4 NeuronLink torus; TP=16 drives every link
    trn2 = topology(tk.hardware("trainium2"))
    assert trn2.group_bytes_per_s(16) == pytest.approx(trn2.up_bytes_per_s)


def test_link_share_names_the_kinds():
    with pytest.raises(tk.TokenomicsError, match="switched, mesh"):
        link_share("ring", 2, 8)


def test_catalog_refuses_an_unknown_topology(tmp_path):
    import shutil
    src = Path(tk.data.catalog_dir("hardware_catalog"))
    for f in ("b200.toml", "sources.toml"):
        shutil.copy(src / f, tmp_path / f)
    p = tmp_path / "b200.toml"
    p.write_text(p.read_text().replace('[scale_up]\n', '[scale_up]\ntopology = "ring"\n'))
    with pytest.raises(tk.CatalogError, match=r"b200.toml: field scale_up.topology"):
        tk.data.load_catalog(tmp_path, catalog_path=())
