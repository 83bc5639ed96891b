"""Hardware and systems added for issue 27: each importable by id and alias, its figures
against the sources it cites (bibliography keys of ``hardware_catalog/sources.toml``).

Expected values are the sources' printed figures or hand calculations from them. NVIDIA and
AMD headline tensor figures are quoted with 2:4 sparsity: the dense figure is half, halved by
hand below. Link figures printed as the sum of both directions are halved to the per-direction
value the catalog exposes.
"""

from __future__ import annotations

import pytest

import tokenomics as tk
from tokenomics.data import catalog
from tokenomics.data.systems import system

GIB = 2**30
MIB = 2**20

NEW_HARDWARE = {          # id: an alias
    "h100-nvl": "h100nvl", "a100-pcie-80gb": "a100-80gb-pcie", "l40": "l40-48gb",
    "rtx-6000-ada": "rtx6000-ada", "gh200": "grace-hopper", "gh200-144gb": "gh200-hbm3e",
    "b100": "hgx-b100", "mi350x": "instinct-mi350x", "gaudi3-pcie": "hl-338",
}
NEW_SYSTEMS = {"hgx-h200": "dgx-h200", "hgx-b300": "dgx-b300",
               "mi325x-platform": "mi325x-node", "mi355x-platform": "mi355x-node",
               "trn2-ultraserver": "trn2u"}


@pytest.mark.parametrize("hw_id, alias", NEW_HARDWARE.items())
def test_each_new_device_resolves_by_id_and_alias_and_every_figure_is_sourced(hw_id, alias):
    hw = tk.hardware(hw_id)
    assert tk.hardware(alias) is hw and tk.hardware(hw_id.upper()) is hw
    bib = catalog.default_catalog().sources
    assert hw.sources and all(key in bib for key in hw.sources.values())
    for field in ("memory.capacity", "memory.bandwidth", "power.tdp"):
        assert field in hw.sources, field
    assert any(k.startswith("compute.") for k in hw.sources)


@pytest.mark.parametrize("sys_id, alias", NEW_SYSTEMS.items())
def test_each_new_system_resolves_by_id_and_alias(sys_id, alias):
    s = system(sys_id)
    assert system(alias) is s and s.devices >= 8 and s.sources


def test_h100_nvl_figures():
    hw = tk.hardware("h100-nvl")
    # NVIDIA H100 NVL (nvidia-h100-product-page-nvl): 94 GB HBM3, 3.9 TB/s, 350-400 W; BF16
    # 1,671 and FP8 3,341 TFLOPS with sparsity -> 835.5 and 1,670.5 dense; NVLink bridge
    # 600 GB/s bidirectional between the two cards of a pair.
    assert hw.mem_capacity_bytes == 94 * GIB
    assert hw.mem_visible_bytes == 95830 * MIB           # nvidia-smi (github-code-h100nvl-smi)
    assert hw.mem_bw_bytes_per_s == 3.9e12 and hw.tdp_w == 400
    assert hw.peak_flop_per_s["bf16"] == pytest.approx(1671e12 / 2)
    assert hw.peak_flop_per_s["fp8"] == pytest.approx(3341e12 / 2)
    assert hw.scale_up_bw_bytes_per_s == 600e9 / 2 and hw.scale_up_domain_size == 2


def test_a100_pcie_l40_and_rtx_6000_ada_figures():
    a = tk.hardware("a100-pcie-80gb")
    # A100 80GB PCIe datasheet: 1,935 GB/s, 300 W, BF16 312 TFLOPS dense (624 sparse)
    assert a.mem_bw_bytes_per_s == 1935e9 and a.tdp_w == 300
    assert a.peak_flop_per_s["bf16"] == pytest.approx(312e12)
    assert a.mem_visible_bytes == 81920 * MIB            # nvidia-smi 81920MiB
    l40 = tk.hardware("l40")
    # L40 (mullet-l40s-datasheet, L40 column): 48 GB GDDR6, 864 GB/s, 300 W, FP8 724 TFLOPS
    # with sparsity -> 362 dense; BF16 362.1 sparse -> 181.05 dense
    assert l40.mem_bw_bytes_per_s == 864e9 and l40.tdp_w == 300
    assert l40.peak_flop_per_s["fp8"] == pytest.approx(724e12 / 2)
    assert l40.peak_flop_per_s["bf16"] == pytest.approx(362.1e12 / 2)
    ada = tk.hardware("rtx-6000-ada")
    # RTX 6000 Ada: 960 GB/s, 300 W; FP8 1,457 TFLOPS with sparsity -> 728.5 dense (the
    # catalog's source prints 728)
    assert ada.mem_bw_bytes_per_s == 960e9 and ada.tdp_w == 300
    assert ada.peak_flop_per_s["fp8"] == pytest.approx(1457e12 / 2, rel=1e-3)
    for hw in (l40, ada):                                  # GDDR6 over PCIe Gen4 x16
        assert hw.mem_capacity_bytes == 48 * GIB
        assert hw.scale_up_bw_bytes_per_s == 64e9 / 2


def test_gh200_is_an_h100_gpu_with_more_memory():
    h100 = tk.hardware("h100-sxm")
    g = tk.hardware("gh200")
    # GH200 (nishikiout-gh200-hbm3e): 96 GB HBM3 at 4 TB/s; nvidia-smi "GH200 480GB" shows
    # 97,871 MiB (github-code-gh200-smi); the Hopper GPU is H100's, so its peaks are H100's
    assert g.mem_capacity_bytes == 96 * GIB and g.mem_visible_bytes == 97871 * MIB
    assert g.mem_bw_bytes_per_s == 4e12
    assert dict(g.peak_flop_per_s) == dict(h100.peak_flop_per_s)
    # NVLink 4: 900 GB/s bidirectional per GPU; DGX GH200 joins up to 256 in one domain
    assert g.scale_up_bw_bytes_per_s == 450e9 and g.scale_up_domain_size == 256
    e = tk.hardware("gh200-144gb")
    assert e.mem_capacity_bytes == 144 * GIB and e.mem_visible_bytes == 146831 * MIB
    # more memory per GPU: Llama 3.1 70B FP8 holds a larger batch at 32K on the HBM3e part
    d = tk.Deployment("llama-3.1-70b", "gh200", weight_dtype="fp8", kv_dtype="fp8")
    assert int(tk.max_batch(d.with_(hardware=e), 32768)) > int(tk.max_batch(d, 32768))


def test_b100_figures_are_half_the_sparse_headlines():
    hw = tk.hardware("b100")
    # NVIDIA Blackwell technical brief (chenzomi-aisystem-blackwell-brief), B100: FP4 14 PF,
    # FP8 7 PF, BF16 3.5 PF, all with sparsity; 192 GB HBM3e at 8 TB/s; 700 W; NVLink 5
    # 1.8 TB/s bidirectional
    assert hw.status == "announced"
    assert hw.peak_flop_per_s["fp4"] == pytest.approx(14e15 / 2)
    assert hw.peak_flop_per_s["fp8"] == pytest.approx(7e15 / 2)
    assert hw.peak_flop_per_s["bf16"] == pytest.approx(3.5e15 / 2)
    assert hw.mem_capacity_bytes == 192 * GIB and hw.mem_bw_bytes_per_s == 8e12
    assert hw.tdp_w == 700 and hw.scale_up_bw_bytes_per_s == 1.8e12 / 2


def test_mi350x_is_mi355x_at_its_lower_clock():
    a, b = tk.hardware("mi350x"), tk.hardware("mi355x")
    # AMD MI350X / MI355X: same CDNA 4 die (256 CUs, 288 GB HBM3E, 8 TB/s); MI350X 2.2 GHz
    # and 1,000 W vs MI355X 2.4 GHz and 1,400 W: FP8 dense 256 x 8,192 FLOP/clock x 2.2 GHz
    # = 4.614 PF (AMD rounds to 4.6)
    assert a.mem_capacity_bytes == b.mem_capacity_bytes == 288 * GIB
    assert a.mem_bw_bytes_per_s == b.mem_bw_bytes_per_s == 8e12
    assert a.peak_flop_per_s["fp8"] == pytest.approx(256 * 8192 * 2.2e9, rel=1e-4)
    assert a.tdp_w == 1000 and b.tdp_w == 1400
    assert a.scale_up_topology == "mesh"


def test_gaudi3_pcie_is_the_oam_chip_at_600_w():
    card, oam = tk.hardware("gaudi3-pcie"), tk.hardware("gaudi3")
    # Intel Gaudi 3 HL-338 PCIe (github-gaudi3-pcie-wiki): 128 GB HBM2e, 3.7 TB/s, 600 W,
    # 1,835 TFLOPS BF16 (the OAM part's peak)
    assert card.mem_capacity_bytes == oam.mem_capacity_bytes == 128 * GIB
    assert card.mem_bw_bytes_per_s == 3.7e12 and card.tdp_w == 600 < oam.tdp_w
    assert card.peak_flop_per_s["bf16"] == pytest.approx(1835e12)


def test_the_new_systems_totals_are_their_devices():
    # HGX H200: 1,128 GB = 8 x 141 GB (ai-hpc-8x-h200)
    s = system("hgx-h200")
    assert s.devices == 8 and s.totals["memory"] == 1128e9
    # HGX B300: FP4 108 PF dense (nvidia-hgx-platform-page) = 8 x 13.5 PF; NVLink 14.4 TB/s
    # bidirectional total = 8 x 1.8 TB/s
    s = system("hgx-b300")
    assert s.totals["fp4"] == pytest.approx(8 * tk.hardware("b300").peak_flop_per_s["fp4"])
    assert s.totals["scale_up_bandwidth"] == 14.4e12 / 2
    # Trn2 UltraServer (aws-ec2-trn2-page): 64 Trainium2, 6 TB HBM, 185 TB/s, 83.2 PF FP8
    s = system("trn2-ultraserver")
    assert s.devices == 64 and s.domain_size == 64 and s.topology_kind == "torus-3d"
    assert s.totals["fp8"] == 83.2e15 and s.totals["memory_bandwidth"] == 185e12
    for sid in ("mi325x-platform", "mi355x-platform"):     # 8 GPUs, Infinity Fabric mesh
        s = system(sid)
        assert s.devices == 8 and s.topology_kind == "mesh"


def test_b300_fp4_is_nvidias_hgx_figure_over_eight():
    # issue 27: NVIDIA HGX B300 "144 | 108 PFLOPS" FP4 (sparse | dense) / 8 GPUs = 13.5 PF
    hw = tk.hardware("b300")
    assert hw.peak_flop_per_s["fp4"] == 108e15 / 8
    assert hw.sources["compute.fp4"] == "nvidia-hgx-platform-page"


def test_ascend_910c_as_the_cloudmatrix384_paper_gives_it():
    hw = tk.hardware("ascend-910c")
    # "Serving LLMs on Huawei CloudMatrix384" (arXiv 2506.12708, as summarised in
    # reportify-cloudmatrix384-paper-summary and besthub-cloudmatrix384-planes): a dual-die
    # package of "up to 752 TFLOPS"; "over 392 GB/s of unidirectional" UB bandwidth per
    # 910C; "up to 400 Gbps of unidirectional RDMA bandwidth" per NPU
    assert hw.peak_flop_per_s["bf16"] == 752e12
    assert hw.sources["compute.bf16"] == "reportify-cloudmatrix384-paper-summary"
    assert hw.scale_up_bw_bytes_per_s == 392e9            # per direction, as printed
    assert hw.scale_out_bw_bytes_per_s == 400e9 / 8


@pytest.mark.parametrize("hw_id", ["tpu-v6e", "tpu-ironwood"])
def test_tpu_dcn_is_100_gbps_per_chip(hw_id):
    # Google Cloud TPU docs (v6e, TPU7x): "DCN bandwidth per chip: 100 Gbps"
    assert tk.hardware(hw_id).scale_out_bw_bytes_per_s == 100e9 / 8


@pytest.mark.parametrize("hw_id, usd", [("h100-sxm", 10.0), ("h200", 10.0), ("b200", 14.0),
                                        ("b300", 15.0), ("gb200", 16.0), ("mi300x", 6.0)])
def test_oci_2026_list_prices_per_gpu_hour(hw_id, usd):
    # Oracle OCI pay-as-you-go list, per GPU-hour (oci-price-list-gpu-2026-09, 2026-09-19):
    # BM.GPU.H100.8 $10, H200.8 $10, B200.8 $14, B300.8 $15, GB200.4 $16, MI300X.8 $6
    oci = [p for p in tk.hardware(hw_id).prices if p.source == "oci-price-list-gpu-2026-09"]
    assert [(p.usd, p.tier, p.date, p.per_hour) for p in oci] == [
        (usd, "hyperscaler-on-demand", "2026-09-19", True)]


def test_an_index_level_never_passes_for_a_list_price():
    # issue 27: Ornn's market index levels ($7.00 B200, $5.00 B300) were labelled as list
    # tiers; they are estimates now, so B300's default price is a provider's list price
    for hw_id in ("b200", "b300"):
        ornn = [p for p in tk.hardware(hw_id).prices if "Ornn" in p.note]
        assert ornn and all(p.tier == "estimate" for p in ornn), hw_id
    from tokenomics.economics.basis import price_on_basis

    p = price_on_basis(tk.hardware("b300"))
    assert (p.tier, p.usd_per_device_hour) == ("hyperscaler-on-demand", 15.0)
