"""Catalog hardware figures against the vendors' published numbers (dense peaks).

Expected values are the datasheet figures (NVIDIA sparse headlines halved), written here with
their sources so that a reader can check them without reading the catalog.
"""

from __future__ import annotations

import pytest

import tokenomics as tk

T = 1e12
G = 1e9

# id, bf16 dense TFLOP/s, fp8 dense TFLOP/s (None: not published/supported), memory GB, TB/s
FIGURES = [
    # NVIDIA A100 datasheet: BF16 312 (624 sparse), 80 GB HBM2e, 2,039 GB/s (SXM).
    ("a100-80gb", 312, None, 80, 2.039),
    # NVIDIA H100 datasheet (SXM): BF16 1,979 / FP8 3,958 with sparsity; 80 GB; 3.35 TB/s.
    ("h100-sxm", 989.4, 1978.9, 80, 3.35),
    # NVIDIA H100 PCIe product brief PB-11133: BF16 1,513 / FP8 3,026 sparse; 2.0 TB/s.
    ("h100-pcie", 756.5, 1513, 80, 2.0),
    # NVIDIA H200 datasheet: H100 compute, 141 GB HBM3e at 4.8 TB/s.
    ("h200", 989.4, 1978.9, 141, 4.8),
    # NVIDIA DGX B200: 72 PF FP8 / 144 PF FP4 sparse per 8 GPUs -> 4.5 / 9 PF dense per GPU;
    # 1,440 GB / 8 = 180 GB; 64 TB/s / 8 = 8 TB/s.
    ("b200", 2250, 4500, 180, 8.0),
    # GB200 NVL72: 360 PF FP8 dense / 72 = 5 PF; 186 GB; 8 TB/s.
    ("gb200", 2500, 5000, 186, 8.0),
    # AMD MI300X (ROCm docs): 1,307.4 BF16, 2,614.9 FP8 dense; 192 GB; 5.3 TB/s.
    ("mi300x", 1307.4, 2614.9, 192, 5.3),
    # AMD MI325X: MI300X compute, 256 GB HBM3E, 6 TB/s.
    ("mi325x", 1307.4, 2614.9, 256, 6.0),
    # AMD MI355X: 256 CU x 8,192 FP8 FLOP/clk x 2.4 GHz = 5,033 dense FP8; 288 GB; 8 TB/s.
    ("mi355x", 2516.6, 5033.2, 288, 8.0),
    # Google Cloud TPU docs: v5e 197 BF16, 16 GB, 819 GB/s; v6e 918, 32 GB, 1,638 GB/s.
    ("tpu-v5e", 197, None, 16, 0.819),
    ("tpu-v6e", 918, 918, 32, 1.638),
    # Intel Gaudi 3 (Hot Chips 2024): 1,835 BF16/FP8 (MME), 128 GB HBM2e, 3.67 TB/s.
    ("gaudi3", 1835, 1835, 128, 3.67),
]


@pytest.mark.parametrize("hw_id, bf16, fp8, mem_gb, bw_tbs", FIGURES)
def test_published_figures(hw_id, bf16, fp8, mem_gb, bw_tbs):
    h = tk.hardware(hw_id)
    assert h.peak("bf16") == pytest.approx(bf16 * T, rel=1e-9)
    if fp8 is None:
        assert "fp8" not in h.peak_flop_per_s
    else:
        assert h.peak("fp8") == pytest.approx(fp8 * T, rel=1e-9)
    assert h.mem_capacity_bytes == pytest.approx(mem_gb * G, rel=1e-9)
    assert h.mem_bw_bytes_per_s == pytest.approx(bw_tbs * T, rel=1e-9)


def test_binary_capacities_stay_binary():
    # Google: TPU v5p 95 GiB, Ironwood 192 GiB; AWS: Trainium2 96 GiB.
    assert tk.hardware("tpu-v5p").mem_capacity_bytes == 95 * 2**30
    assert tk.hardware("tpu-ironwood").mem_capacity_bytes == 192 * 2**30
    assert tk.hardware("trainium2").mem_capacity_bytes == 96 * 2**30


def test_links_stored_per_direction():
    # NVLink 5: 1.8 TB/s per GPU, both directions (S40) -> 900 GB/s each way.
    assert tk.hardware("b200").scale_up_bw_bytes_per_s == 900 * G
    # GB200 NVL72: 72 x 1.8 TB/s = 130 TB/s aggregate (S41).
    gb = tk.hardware("gb200")
    assert 2 * gb.scale_up_bw_bytes_per_s * gb.scale_up_domain_size == pytest.approx(129.6 * T)
    # NVLink 5 is ~14x PCIe Gen5 x16 (128 GB/s both directions) (S40).
    pcie = tk.hardware("h100-pcie").scale_up_bw_bytes_per_s
    assert pcie == 64 * G
    assert tk.hardware("b200").scale_up_bw_bytes_per_s / pcie == pytest.approx(14, rel=0.01)


def test_bertha_is_the_source_materials_unverified_figures():
    # S70: 546 GB/s, 192 GB per chip; H100's 3.35 TB/s is ~6x more.
    b = tk.hardware("bertha")
    assert b.status == "unverified"
    assert b.mem_bw_bytes_per_s == 546 * G and b.mem_capacity_bytes == 192 * G
    assert tk.hardware("h100-sxm").mem_bw_bytes_per_s / b.mem_bw_bytes_per_s == \
        pytest.approx(6.1, abs=0.1)
    assert not b.peak_flop_per_s  # no compute figure published: none invented
