"""Catalog hardware figures against the vendors' published numbers (dense peaks).

Expected values are the datasheet figures (NVIDIA sparse headlines halved), written here with
their sources so that a reader can check them without reading the catalog.
"""

from __future__ import annotations

import pytest

import tokenomics as tk

T = 1e12
G = 1e9
GiB = 2**30
MiB = 2**20

# id, bf16 dense TFLOP/s, fp8 dense TFLOP/s (None: not published/supported), physical memory
# [B] (HBM: the vendor's GB is GiB), TB/s
FIGURES = [
    # NVIDIA A100 datasheet: BF16 312 (624 sparse), 80 GB HBM2e, 2,039 GB/s (SXM).
    ("a100-80gb", 312, None, 80 * GiB, 2.039),
    # NVIDIA H100 datasheet (SXM): BF16 1,979 / FP8 3,958 with sparsity; 80 GB; 3.35 TB/s.
    ("h100-sxm", 989.4, 1978.9, 80 * GiB, 3.35),
    # NVIDIA H100 PCIe product brief PB-11133: BF16 1,513 / FP8 3,026 sparse; 2.0 TB/s.
    ("h100-pcie", 756.5, 1513, 80 * GiB, 2.0),
    # NVIDIA H200 datasheet: H100 compute, 141 GB HBM3e at 4.8 TB/s.
    ("h200", 989.4, 1978.9, 141 * GiB, 4.8),
    # NVIDIA DGX B200: 72 PF FP8 / 144 PF FP4 sparse per 8 GPUs -> 4.5 / 9 PF dense per GPU;
    # 1,440 GB / 8 = 180 GB; 64 TB/s / 8 = 8 TB/s.
    ("b200", 2250, 4500, 180 * GiB, 8.0),
    # GB200 NVL72: 360 PF FP8 dense / 72 = 5 PF; 186 GB; 8 TB/s.
    ("gb200", 2500, 5000, 186 * GiB, 8.0),
    # AMD MI300X (ROCm docs): 1,307.4 BF16, 2,614.9 FP8 dense; 5.3 TB/s. ROCm's GPU
    # specifications table gives VRAM in GiB: MI300X 192, MI325X 256, MI355X 288.
    ("mi300x", 1307.4, 2614.9, 192 * GiB, 5.3),
    # AMD MI325X: MI300X compute, 256 GB HBM3E, 6 TB/s.
    ("mi325x", 1307.4, 2614.9, 256 * GiB, 6.0),
    # AMD MI355X: 256 CU x 8,192 FP8 FLOP/clk x 2.4 GHz = 5,033 dense FP8; 288 GB; 8 TB/s.
    ("mi355x", 2516.6, 5033.2, 288 * GiB, 8.0),
    # Google Cloud TPU docs: v5e 197 BF16, 16 GiB, 819 GB/s; v6e 918, 32 GiB (TPU7x table),
    # 1,638 GB/s.
    ("tpu-v5e", 197, None, 16 * GiB, 0.819),
    ("tpu-v6e", 918, 918, 32 * GiB, 1.638),
    # Intel Gaudi 3 (Hot Chips 2024): 1,835 BF16/FP8 (MME), 128 GB HBM2e, 3.67 TB/s; hl-smi
    # reports 131,072 MiB = 128 GiB, so Intel's GB is binary.
    ("gaudi3", 1835, 1835, 128 * GiB, 3.67),
    # A800 SXM4 80GB: A100's compute (tweakers-a800, slicast-a800) at A100's 312 BF16 dense,
    # 80 GB HBM2e at 2,039 GB/s; no FP8.
    ("a800-80gb", 312, None, 80 * GiB, 2.039),
    # H800 PCIe 80GB: H100 PCIe's tensor rates, 1,513 / 3,026 sparse halved; 2.0 TB/s.
    ("h800-pcie", 756.5, 1513, 80 * GiB, 2.0),
    # L20 48GB GDDR6 (spec tables, github-code-l20-specs): 119.5 BF16, 239 FP8; 864 GB/s;
    # nvidia-smi reads 49,140 MiB with ECC off, so the 48 GB is binary.
    ("l20", 119.5, 239, 48 * GiB, 0.864),
]


@pytest.mark.parametrize("hw_id, bf16, fp8, mem_bytes, bw_tbs", FIGURES)
def test_published_figures(hw_id, bf16, fp8, mem_bytes, bw_tbs):
    h = tk.hardware(hw_id)
    assert h.peak("bf16") == pytest.approx(bf16 * T, rel=1e-9)
    if fp8 is None:
        assert "fp8" not in h.peak_flop_per_s
    else:
        assert h.peak("fp8") == pytest.approx(fp8 * T, rel=1e-9)
    assert h.mem_capacity_bytes == pytest.approx(mem_bytes, rel=1e-9)
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


# nvidia-smi memory.total [MiB] pasted in public GitHub issues: H100 SXM (NVIDIA/nccl#1264,
# modal-labs/modal-client#2797), H800 (NVIDIA/DCGM#120), H200 (public nvidia-smi tables),
# B200 (NVIDIA/TensorRT-LLM#10278), A100 80GB and L40S (modal-labs/modal-client#2797).
VISIBLE = [("h100-sxm", 81_559, 85_520_809_984), ("h800", 81_559, 85_520_809_984),
           ("h200", 143_771, 150_754_820_096), ("b200", 183_359, 192_265_846_784),
           ("a100-80gb", 81_920, 85_899_345_920), ("l40s", 46_068, 48_305_799_168)]


@pytest.mark.parametrize("hw_id, mib, nbytes", VISIBLE)
def test_driver_visible_memory(hw_id, mib, nbytes):
    h = tk.hardware(hw_id)
    assert mib * MiB == nbytes
    assert h.mem_visible_bytes == h.mem_usable_bytes == nbytes
    assert h.mem_visible_bytes <= h.mem_capacity_bytes
    # The decimal reading of the vendor's GB is below what the driver reports, so it cannot be
    # the physical capacity: 80e9 < 85.52e9 (H100), 141e9 < 150.75e9 (H200), 48e9 < 48.31e9.
    gb = {"h100-sxm": 80, "h800": 80, "h200": 141, "b200": 180, "a100-80gb": 80, "l40s": 48}
    assert gb[hw_id] * G < nbytes <= gb[hw_id] * GiB


def test_physical_capacity_is_binary_for_nvidia_hbm():
    assert tk.hardware("h100-sxm").mem_capacity_bytes == 80 * GiB == 85_899_345_920
    assert tk.hardware("h800").mem_capacity_bytes == 80 * GiB
    # With a driver figure the usable memory is the driver's: B300 nvidia-smi 275,040 MiB
    # (github-code-b300-smi), 6.7% under the physical 288 GiB.
    b300 = tk.hardware("b300")
    assert b300.mem_capacity_bytes == 288 * GiB
    assert b300.mem_usable_bytes == 275_040 * 2**20 < 288 * GiB


def test_gaudi3_links_follow_intels_network_docs():
    # docs.habana.ai Network Configuration: 21 scale-up ports x 200 Gb/s = 21 x 25 GB/s =
    # 525 GB/s per direction (3 ports to each of 7 peers: 75 GB/s); 3 scale-out ports x 200 Gb/s
    # = 600 Gb/s = 75 GB/s per direction; 8 Gaudi 3 per HLS-3 box.
    g = tk.hardware("gaudi3")
    assert g.scale_up_bw_bytes_per_s == 21 * 25 * G == 525 * G
    assert g.scale_up_bw_bytes_per_s / 7 == 75 * G
    assert g.scale_out_bw_bytes_per_s == 600e9 / 8 == 3 * 200e9 / 8
    assert g.scale_up_domain_size == 8


def test_audited_compute_and_power_figures():
    # H800 SXM: nvidia-smi power cap 700 W (NVIDIA/DCGM#120), as H100 SXM5.
    assert tk.hardware("h800").tdp_w == 700
    # L40S: INT8 733 TOPS dense (1,466 with sparsity).
    assert tk.hardware("l40s").peak("int8") == 733 * T
    # HGX B200: TF32 18 PFLOPS with sparsity per 8 GPUs -> 18,000 / 8 / 2 = 1,125 dense.
    assert tk.hardware("b200").peak("tf32") == 18_000 / 8 / 2 * T == 1125 * T
    # B300 dense FP4: NVIDIA's HGX B300 table, 108 PF dense / 8 = 13,500 (issue 27; it was the
    # secondary 105 PF / 8 = 13,125); the note records the 13,125-15,000 range.
    b300 = tk.hardware("b300")
    assert b300.peak("fp4") == 108_000 / 8 * T


# Announced parts: the vendors quote one figure without a dense/sparse convention, kept under
# [quoted] and read only on request (tk.hardware(id, allow_quoted=True)).
QUOTED = [
    ("rubin-cpx", "fp4", 30e15),      # NVIDIA, Sept 2025: "30 petaFLOPs of NVFP4" per CPX
    ("rubin-ultra", "fp4", 100e15),   # GTC 2025: 100 PF FP4 per Rubin Ultra package
    ("mi455x", "fp4", 40e15),         # AMD MI450 series: 40 PF FP4
    ("mi455x", "fp8", 20e15),         # and 20 PF FP8
]


@pytest.mark.parametrize("hw_id, fmt, flops", QUOTED)
def test_announced_parts_hold_quoted_figures_apart(hw_id, fmt, flops):
    assert fmt not in tk.hardware(hw_id).peak_flop_per_s            # no dense peak to use
    assert tk.hardware(hw_id, allow_quoted=True).peak(fmt) == pytest.approx(flops, rel=1e-12)


@pytest.mark.parametrize("sid, device, chips", [
    ("tpu-v5e-8", "tpu-v5e", 8), ("tpu-v6e-8", "tpu-v6e", 8), ("tpu-v6e-256", "tpu-v6e", 256),
])
def test_tpu_slices_are_systems_of_their_chips(sid, device, chips):
    # Google Cloud TPU configuration tables: v5litepod-8 and v6e-8 are 2x4 slices on one
    # host; v6e-256 is the 16x16 pod
    from tokenomics.data.systems import system
    s = system(sid)
    assert s.device.id == device and s.devices == chips
