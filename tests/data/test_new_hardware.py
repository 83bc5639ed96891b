"""Catalog entries added for parts the catalog lacked: figures pinned against their sources.

Each expected value below is the source's printed figure (cited in the comment, bibliography
keys of ``hardware_catalog/sources.toml``) or a hand calculation written out from it. Sparse
headlines are halved by hand; link figures printed as the sum of both directions are halved
by hand to the per-direction value the catalog exposes.
"""

from __future__ import annotations

import math

import pytest

import tokenomics as tk
from tokenomics.physics.roofline import ridge_point

GIB = 2**30
MIB = 2**20


def test_l4_datasheet_figures():
    hw = tk.hardware("l4")
    # NVIDIA L4 datasheet (sourcecode-l4-datasheet, yobitel-l4): 24 GB GDDR6, 300 GB/s, 72 W,
    # FP8 485 TFLOPS with sparsity -> 485 / 2 = 242.5 dense; BF16 242 sparse -> 121 dense;
    # INT8 485 TOPS sparse -> 242.5 dense.
    assert hw.mem_capacity_bytes == 24 * GIB
    assert hw.mem_visible_bytes == 23034 * MIB  # nvidia-smi (modal-client-pr-2797)
    assert hw.mem_bw_bytes_per_s == 300e9
    assert hw.tdp_w == 72
    assert hw.peak_flop_per_s["fp8"] == pytest.approx(485e12 / 2)
    assert hw.peak_flop_per_s["bf16"] == pytest.approx(242e12 / 2)
    assert hw.peak_flop_per_s["int8"] == pytest.approx(485e12 / 2)
    # PCIe Gen4 x16: 64 GB/s bidirectional = 32 GB/s each way.
    assert hw.scale_up_bw_bytes_per_s == 32e9


def test_a40_datasheet_figures():
    hw = tk.hardware("a40")
    # A40 datasheet copy (reseller-a40-datasheet): 48 GB GDDR6 ECC, 696 GB/s, 300 W.
    assert hw.mem_capacity_bytes == 48 * 2**30   # binary: nvidia-smi shows 46,068 MiB > 48e9 B
    assert hw.mem_bw_bytes_per_s == 696e9
    assert hw.tdp_w == 300
    # hmctech-a40: BF16 tensor 149.67 dense (299.34 with sparsity = 2 x 149.67).
    assert hw.peak_flop_per_s["bf16"] == pytest.approx(299.34e12 / 2)


def test_rtx_5090_figures():
    hw = tk.hardware("rtx-5090")
    # spheron-rtx-5090: 32 GB GDDR7, 1,792 GB/s, 575 W, FP4 3,352 sparse -> 1,676 dense,
    # FP8 1,676.8 sparse -> 838.4 dense.
    assert hw.mem_capacity_bytes == 32 * GIB
    assert hw.mem_visible_bytes == 32607 * MIB  # pasted nvidia-smi (github-code-rtx5090-smi)
    assert hw.mem_bw_bytes_per_s == 1792e9
    assert hw.tdp_w == 575
    assert hw.peak_flop_per_s["fp4"] == pytest.approx(3352e12 / 2)
    assert hw.peak_flop_per_s["fp8"] == pytest.approx(1676.8e12 / 2)
    # PCIe Gen5 x16: 128 GB/s bidirectional = 64 GB/s each way.
    assert hw.scale_up_bw_bytes_per_s == 64e9


def test_rtx_pro_6000_server_figures():
    hw = tk.hardware("rtx-pro-6000-server")
    # gpuname-rtx-pro-6000: 96 GB GDDR7, 1,792 GB/s, 600 W; the driver reports 97,887 MiB,
    # more than 96e9 B: 97,887 x 2^20 = 102,642,466,816 B.
    assert hw.mem_capacity_bytes == 96 * GIB
    assert hw.mem_visible_bytes == 97887 * MIB > 96e9
    assert hw.mem_bw_bytes_per_s == 1792e9
    assert hw.tdp_w == 600
    # topcpu-rtx-pro-6000: 4,000 AI TOPS (FP4, read as sparse) -> 2,000 dense.
    assert hw.peak_flop_per_s["fp4"] == pytest.approx(4000e12 / 2)


def test_h20_figures():
    hw = tk.hardware("h20")
    # willitrunai-h20: 96 GB HBM3 (GiB by the HBM convention), 4.0 TB/s, 148 TFLOPS FP16,
    # 296 INT8 TOPS, NVLink 900 GB/s bidirectional -> 450 GB/s each way, 400 W.
    assert hw.mem_capacity_bytes == 96 * GIB
    assert hw.mem_bw_bytes_per_s == 4.0e12
    assert hw.peak_flop_per_s["fp16"] == pytest.approx(148e12)
    assert hw.peak_flop_per_s["int8"] == pytest.approx(296e12)
    assert hw.scale_up_bw_bytes_per_s == 450e9
    assert hw.tdp_w == 400


def test_mi250x_figures():
    hw = tk.hardware("mi250x")
    # zexron-mi250x (AMD table): 383.0 TF FP16/BF16, 128 GiB HBM2e, 3.2 TB/s, 560 W.
    assert hw.peak_flop_per_s["bf16"] == pytest.approx(383e12)
    assert hw.mem_capacity_bytes == 128 * GIB
    assert hw.mem_bw_bytes_per_s == 3.2e12
    assert hw.tdp_w == 560
    # gpublog-mi250x: Infinity Fabric 800 GB/s aggregate -> 400 GB/s each way; 8 per node.
    assert hw.scale_up_bw_bytes_per_s == 400e9
    assert hw.scale_up_domain_size == 8


def test_groq_3_lpu_announced_figures():
    hw = tk.hardware("groq-3-lpu")
    assert hw.status == "announced"
    # lapaas-groq-3-lpu: 500 MB SRAM per chip at 150 TB/s; rack 128 GB / 256 chips = 500 MB.
    assert hw.mem_capacity_bytes == 500e6 == 128e9 / 256
    assert hw.mem_bw_bytes_per_s == 150e12
    # blockchain-news-groq-3-lpx: 2.5 TB/s bidirectional per chip -> 1.25 TB/s each way
    # (96 links x 112 Gb/s = 10.752 Tb/s = 1.344 TB/s each way, the same to 7%); 256 per rack.
    assert hw.scale_up_bw_bytes_per_s == 1.25e12
    assert 96 * 112e9 / 8 == pytest.approx(hw.scale_up_bw_bytes_per_s, rel=0.08)
    assert hw.scale_up_domain_size == 256
    # Rack 315 PFLOPS FP8 / 256 chips = 1.2305 PFLOP/s per chip.
    assert hw.peak_flop_per_s["fp8"] == pytest.approx(315e15 / 256, rel=1e-4)


def test_ridge_points_by_hand():
    # L4 FP8: 242.5e12 FLOP/s / 300e9 B/s = 808.3 FLOP/B.
    assert ridge_point(tk.hardware("l4"), "fp8") == pytest.approx(242.5e12 / 300e9)
    assert ridge_point(tk.hardware("l4"), "fp8") == pytest.approx(808.33, rel=1e-4)
    # MI250X BF16: 383e12 / 3.2e12 = 119.7 FLOP/B.
    assert ridge_point(tk.hardware("mi250x"), "bf16") == pytest.approx(119.6875)


@pytest.mark.parametrize(
    "hw_id, kw",
    [
        ("l4", dict(tp=2)),  # 16.06 GB of BF16 weights / 2 = 8.03 GB per 24 GiB card
        ("a40", dict(tp=2)),
        ("rtx-5090", dict(tp=2)),
        ("rtx-pro-6000-server", dict(tp=4)),
        ("h20", dict(tp=8)),
        ("mi250x", dict(tp=4)),
        # 8.03 GB of FP8 weights / 32 = 251 MB per 500 MB chip.
        ("groq-3-lpu", dict(tp=32, weight_dtype="fp8", act_dtype="fp8")),
    ],
)
def test_tp_decode_on_each_new_device(hw_id, kw):
    d = tk.Deployment("llama-3.1-8b", hw_id, **kw)
    assert d.n_devices == kw["tp"] > 1
    r = tk.decode(d, 1, 1024)
    assert math.isfinite(r.time_s) and r.time_s > 0
    assert r.collective_time_s > 0


def test_pcie_link_is_slower_than_nvlink_for_the_same_decode():
    # The same TP=2 FP8 decode of Llama 3.1 8B exposes more communication over PCIe Gen4
    # (32 GB/s each way, L4) than over NVLink 4 (450 GB/s each way, H20).
    pcie = tk.decode(tk.Deployment("llama-3.1-8b", "l4", tp=2, weight_dtype="fp8"), 1, 1024)
    nvl = tk.decode(tk.Deployment("llama-3.1-8b", "h20", tp=2, weight_dtype="fp8"), 1, 1024)
    assert nvl.collective_time_s < pcie.collective_time_s


# ---------------------------------------------------------------- second batch of added parts


def test_a100_40gb_figures():
    hw = tk.hardware("a100-40gb")
    # upb-pc2-a100-40gb (NVIDIA datasheet table): BF16 312 / 624* TFLOPS, INT8 624 / 1,248* TOPS
    # (* with sparsity: dense is half of it), 40 GB HBM2, 1,555 GB/s, 400 W.
    assert hw.peak_flop_per_s["bf16"] == pytest.approx(624e12 / 2)
    assert hw.peak_flop_per_s["int8"] == pytest.approx(1248e12 / 2)
    assert hw.mem_bw_bytes_per_s == 1555e9
    assert hw.tdp_w == 400
    # nvidia-smi reports 40,960 MiB (modal-client-pr-2797) = 40 x 2^30 B exactly.
    assert hw.mem_visible_bytes == 40960 * MIB == 40 * GIB == hw.mem_capacity_bytes
    # glennklockwood-a100: '300+300 GB/s NVLink' -> 300 GB/s each way, 8 per HGX board.
    assert hw.scale_up_bw_bytes_per_s == 300e9
    assert hw.scale_up_domain_size == 8


def test_tpu_v4_figures():
    hw = tk.hardware("tpu-v4")
    # google-tpu-v4-docs: 275 TFLOPS (bf16 or int8), 32 GiB at 1200 GBps, 4,096-chip pod,
    # measured maximum power 192 W.
    assert hw.peak_flop_per_s["bf16"] == pytest.approx(275e12)
    assert hw.peak_flop_per_s["int8"] == pytest.approx(275e12)
    assert hw.mem_capacity_bytes == 32 * GIB
    assert hw.mem_bw_bytes_per_s == 1200e9
    assert hw.scale_up_domain_size == 4096
    assert hw.tdp_w == 192
    # ICI: 6 links x 400 Gb/s each way (glennklockwood-tpuv4) = 2.4e12 / 8 = 300 GB/s each way.
    assert hw.scale_up_bw_bytes_per_s == pytest.approx(6 * 400e9 / 8)


def test_inferentia2_figures():
    hw = tk.hardware("inferentia2")
    # aws-neuron-inferentia2: 190 FP16/BF16/cFP8/TF32 TFLOPS, 380 INT8 TOPS, 32 GiB at
    # 820 GiB/s = 820 x 2^30 = 880.5e9 B/s.
    assert hw.peak_flop_per_s["bf16"] == pytest.approx(190e12)
    assert hw.peak_flop_per_s["int8"] == pytest.approx(380e12)
    assert hw.mem_capacity_bytes == 32 * GIB
    assert hw.mem_bw_bytes_per_s == pytest.approx(820 * GIB)
    # aws-neuron-inf2-arch: NeuronLink-v2 192 GiB/s per chip (read as both directions:
    # 96 GiB/s each way); Inf2.48xlarge holds 12 chips, and 12 x 820 = 9,840 GiB/s in its table.
    assert hw.scale_up_bw_bytes_per_s == pytest.approx(192 * GIB / 2)
    assert hw.scale_up_domain_size == 12
    assert 12 * 820 == 9840


def test_trainium3_figures():
    hw = tk.hardware("trainium3")
    # aws-neuron-trainium3: 2,517 MXFP8 dense, 671 BF16 dense (2,517 with sparsity), 144 GiB at
    # 4.9 TB/s, NeuronLink-v4 2.56 TB/s per device (read as both directions: 1.28 TB/s each way).
    assert hw.peak_flop_per_s["fp8"] == pytest.approx(2517e12)
    assert hw.peak_flop_per_s["bf16"] == pytest.approx(671e12)
    assert hw.mem_capacity_bytes == 144 * GIB
    assert hw.mem_bw_bytes_per_s == 4.9e12
    assert hw.scale_up_bw_bytes_per_s == pytest.approx(1.28e12)
    # aws-neuron-trn3-arch: Gen2 UltraServer, 144 chips, 362 PF dense MXFP8 and 706 TB/s in all:
    # 362e15 / 144 = 2.514e15 and 706e12 / 144 = 4.90e12, the per-chip figures to 0.2%.
    assert hw.scale_up_domain_size == 144
    assert 362e15 / 144 == pytest.approx(hw.peak_flop_per_s["fp8"], rel=2e-3)
    assert 706e12 / 144 == pytest.approx(hw.mem_bw_bytes_per_s, rel=2e-3)


def test_gaudi2_figures():
    hw = tk.hardware("gaudi2")
    # intel-gaudi3-hotchips2024 (Gaudi 2 column): 432 TFLOPs BF16, 96 GB, 2.46 TB/s, 600 W.
    assert hw.peak_flop_per_s["bf16"] == pytest.approx(432e12)
    assert hw.mem_capacity_bytes == 96 * 2**30   # read as GiB: hl-smi reports 98,304 MiB
    assert hw.mem_bw_bytes_per_s == 2.46e12
    assert hw.tdp_w == 600
    # habana-gaudi2-networking: 24 x 100 GbE; 2.4 Tb/s scale-out per 8-card server = 3 ports
    # each; the other 21 ports scale up: 21 x 100e9 / 8 = 262.5 GB/s each way.
    assert hw.scale_up_bw_bytes_per_s == pytest.approx(21 * 100e9 / 8)
    assert hw.scale_out_bw_bytes_per_s == pytest.approx(2.4e12 / 8 / 8)
    assert hw.scale_up_domain_size == 8


def test_ascend_910c_figures():
    hw = tk.hardware("ascend-910c")
    # The CloudMatrix384 paper (reportify-cloudmatrix384-paper-summary, besthub-cloudmatrix384-
    # planes; issue 27): 752 TFLOPS BF16 for the dual-die package (techpowerup-ascend-920c's
    # 780 was a press figure), "over 392 GB/s of unidirectional" UB bandwidth (the catalog
    # had 200 GB/s each way; crc-cloudmatrix384's 196 GB/s per NPU is half of it, one die's);
    # 3,200 GB/s of HBM (techpowerup-ascend-920c).
    assert hw.peak_flop_per_s["bf16"] == pytest.approx(752e12)
    assert hw.mem_bw_bytes_per_s == 3.2e12
    assert hw.scale_up_bw_bytes_per_s == 392e9
    assert 2 * 196e9 == pytest.approx(hw.scale_up_bw_bytes_per_s, rel=0.001)
    # crc-cloudmatrix384: ~48 TB HBM over 384 NPUs = 125 GB each; one 384-NPU UB domain.
    assert hw.mem_capacity_bytes == pytest.approx(48e12 / 384)
    assert hw.scale_up_domain_size == 384


def test_rtx_4090_figures():
    hw = tk.hardware("rtx-4090")
    # waredb-rtx-4090: BF16 330.30 with sparsity -> 165.15 dense; FP8 660.60 sparse -> 330.30
    # (FP32 accumulate). tomshardware-rtx-4090-specs: 21 Gbps x 384 bit / 8 = 1,008 GB/s, 450 W.
    assert hw.peak_flop_per_s["bf16"] == pytest.approx(330.30e12 / 2)
    assert hw.peak_flop_per_s["fp8"] == pytest.approx(660.60e12 / 2)
    assert hw.mem_bw_bytes_per_s == 21e9 * 384 / 8 == 1008e9
    assert hw.tdp_w == 450
    # Pasted nvidia-smi (github-code-rtx4090-smi): 24,564 MiB = 25.76e9 B > 24e9 B, so 24 GiB.
    assert hw.mem_visible_bytes == 24564 * MIB > 24e9
    assert hw.mem_capacity_bytes == 24 * GIB
    assert hw.scale_up_bw_bytes_per_s == 32e9  # PCIe Gen4 x16, 64 GB/s both directions


def test_a10_figures_and_memory_bound_decode():
    hw = tk.hardware("a10")
    # sysrqmts-a10: 12.5 Gbps x 384 bit / 8 = 600 GB/s (printed 600.2); nvidia-smi 23,028 MiB
    # (modal-client-pr-2797) = 24.15e9 B > 24e9 B, so 24 GiB.
    assert hw.mem_bw_bytes_per_s == 600.2e9
    assert 12.5e9 * 384 / 8 == pytest.approx(hw.mem_bw_bytes_per_s, rel=1e-3)
    assert hw.mem_visible_bytes == 23028 * MIB > 24e9
    assert hw.mem_capacity_bytes == 24 * GIB
    # Changed expectation: the A10 was compute-less (NaN compute time); kimbochen-gpu-table now
    # gives 'A10 | 125 TFLOP/s | 0.6 TB/s | 24 GB | 150 W' (FP16 tensor dense, BF16 at the same
    # rate), so a batch-1 decode has a finite compute time and is still memory-bound.
    assert hw.peak_flop_per_s["fp16"] == 125e12
    assert hw.peak_flop_per_s["bf16"] == 125e12
    assert hw.tdp_w == 150
    # Ridge: 125e12 / 600.2e9 = 208.3 FLOP/B.
    assert ridge_point(hw, "bf16") == pytest.approx(208.26, rel=1e-4)
    r = tk.decode(tk.Deployment("llama-3.1-8b", "a10", tp=2), 1, 1024)
    assert math.isfinite(r.compute_time_s) and r.bound == "memory"


@pytest.mark.parametrize(
    "hw_id, kw",
    [
        ("a100-40gb", dict(tp=2)),  # 16.06 GB of BF16 weights / 2 = 8.03 GB per 40 GiB GPU
        ("tpu-v4", dict(tp=4)),
        ("inferentia2", dict(tp=2)),
        ("trainium3", dict(tp=8)),
        ("gaudi2", dict(tp=8)),
        ("ascend-910c", dict(tp=16)),
        ("rtx-4090", dict(tp=2)),
        ("a10", dict(tp=2)),
    ],
)
def test_tp_decode_on_each_second_batch_device(hw_id, kw):
    d = tk.Deployment("llama-3.1-8b", hw_id, **kw)
    assert d.n_devices == kw["tp"] > 1
    r = tk.decode(d, 1, 1024)
    assert math.isfinite(r.time_s) and r.time_s > 0
    assert r.collective_time_s > 0


# ---------------------------------------------------------------- third batch: Volta and Turing


def test_v100_sxm2_32gb_figures():
    hw = tk.hardware("v100-sxm2-32gb")
    # nvidia-dev-tensor-cores-cuda9: 'up to 125 Tensor TFLOPS' (dense: Volta has no sparsity).
    assert hw.peak_flop_per_s["fp16"] == 125e12
    # wolfram77-v100-whitepaper-notes: 900 GB/s HBM2; cross-check from the NVML dump
    # (pastebin-v100-sxm2-32gb-nvml): 877 MHz x 2 x 4096 bit / 8 = 898 GB/s.
    assert hw.mem_bw_bytes_per_s == 900e9
    assert 877e6 * 2 * 4096 / 8 == pytest.approx(hw.mem_bw_bytes_per_s, rel=0.01)
    # NVML total 34,058,272,768 B > 32e9 B, so '32GB' is 32 GiB.
    assert hw.mem_visible_bytes == 34_058_272_768 > 32e9
    assert hw.mem_capacity_bytes == 32 * GIB
    assert hw.tdp_w == 300  # NVML default power limit 300,000 mW
    # 6 NVLink 2 links x 25 GB/s per direction = 150 GB/s each way; DGX-1 holds 8.
    assert hw.scale_up_bw_bytes_per_s == 6 * 25e9
    assert hw.scale_up_domain_size == 8
    # Volta has no BF16 tensor format: a BF16 deployment is refused, naming the format.
    with pytest.raises(tk.NotPublishedError, match="bf16 peak is not supported"):
        tk.Deployment("llama-3.1-8b", hw, tp=2)


def test_t4_figures():
    hw = tk.hardware("t4")
    # networkoutlet-t4: FP16 65 TFLOPS, INT8 130 TOPS, 16 GB GDDR6, 70 W; geektopia-t4-launch:
    # INT4 260 TOPS. Turing has no sparsity, so these are dense.
    assert hw.peak_flop_per_s["fp16"] == 65e12
    assert hw.peak_flop_per_s["int8"] == 130e12
    assert hw.peak_flop_per_s["int4"] == 260e12
    assert hw.tdp_w == 70
    # sysrqmts-t4: 10 Gbps x 256 bit / 8 = 320 GB/s.
    assert hw.mem_bw_bytes_per_s == 10e9 * 256 / 8 == 320e9
    # nvidia-smi 15,360 MiB (modal-client-pr-2797) = 16.11e9 B > 16e9 B, so 16 GiB.
    assert hw.mem_visible_bytes == 15360 * MIB > 16e9
    assert hw.mem_capacity_bytes == 16 * GIB
    # PCIe Gen3 x16: 8 GT/s x 16 x 128/130 / 8 = 15.75 GB/s each way, recorded rounded to 16.
    assert hw.scale_up_bw_bytes_per_s == 16e9
    assert 8e9 * 16 * 128 / 130 / 8 == pytest.approx(hw.scale_up_bw_bytes_per_s, rel=0.02)
    # Ridge INT8: 130e12 / 320e9 = 406.25 op/B.
    assert ridge_point(hw, "int8") == pytest.approx(406.25)


@pytest.mark.parametrize(
    "hw_id, kw",
    [
        # 16.06 GB of BF16 weights cast to FP16 (Volta/Turing lack BF16) / 2 = 8.03 GB per device.
        ("v100-sxm2-32gb", dict(tp=2, weight_dtype="fp16", act_dtype="fp16")),
        ("v100-sxm2-32gb", dict(tp=8, weight_dtype="fp16", act_dtype="fp16")),
        ("t4", dict(tp=2, weight_dtype="fp16", act_dtype="fp16")),
    ],
)
def test_tp_decode_on_each_third_batch_device(hw_id, kw):
    d = tk.Deployment("llama-3.1-8b", hw_id, **kw)
    assert d.n_devices == kw["tp"] > 1
    r = tk.decode(d, 1, 1024)
    assert math.isfinite(r.time_s) and r.time_s > 0
    assert r.collective_time_s > 0


def test_pcie_gen3_exposes_more_communication_than_nvlink_2():
    # The same TP=2 FP16 decode: T4's PCIe Gen3 (16 GB/s each way) against V100's NVLink 2
    # (150 GB/s each way).
    kw = dict(tp=2, weight_dtype="fp16", act_dtype="fp16")
    pcie = tk.decode(tk.Deployment("llama-3.1-8b", "t4", **kw), 1, 1024)
    nvl = tk.decode(tk.Deployment("llama-3.1-8b", "v100-sxm2-32gb", **kw), 1, 1024)
    assert nvl.collective_time_s < pcie.collective_time_s


# ---------------------------------------------------------------- issue 27: driver-visible memory

@pytest.mark.parametrize("hw_id, mib, source", [
    # nvidia-smi memory.total: 'NVIDIA B300 SXM6 AC ... 0MiB / 275040MiB' (github-code-b300-smi)
    ("b300", 275_040, "github-code-b300-smi"),
    # nvidia-smi memory.total: 'NVIDIA GB300 ... 0MiB / 284208MiB' (github-code-gb300-smi)
    ("gb300", 284_208, "github-code-gb300-smi"),
    # hl-smi on HL-225: '768MiB / 98304MiB' (github-code-gaudi2-hlsmi)
    ("gaudi2", 98_304, "github-code-gaudi2-hlsmi"),
    # hl-smi --format=csv on HL-325L: '131072 MiB' (github-code-gaudi3-hlsmi)
    ("gaudi3", 131_072, "github-code-gaudi3-hlsmi"),
    # nvidia-smi memory.total: 'NVIDIA A40 ... 0MiB / 46068MiB' (github-code-a40-smi)
    ("a40", 46_068, "github-code-a40-smi"),
    # nvidia-smi memory.total: 'NVIDIA H20 ... 0MiB / 97871MiB' (github-code-h20-smi)
    ("h20", 97_871, "github-code-h20-smi"),
    # nvidia-smi memory.total: 'NVIDIA GB200 ... 0MiB / 189471MiB' (github-code-gb200-smi)
    ("gb200", 189_471, "github-code-gb200-smi"),
    # rocm-smi: 'VRAM Total Memory (B): 206141652992' = 196,592 MiB (github-code-mi300x-rocmsmi)
    ("mi300x", 196_592, "github-code-mi300x-rocmsmi"),
    # amd-smi Mem-Usage: '283/262128 MB', amd-smi's MB being MiB (github-code-mi325x-amdsmi)
    ("mi325x", 262_128, "github-code-mi325x-amdsmi"),
    # rocm-smi: 309,220,868,096 B = 294,896 MiB; amd-smi '283/294896 MB' (github-code-mi355x-rocmsmi)
    ("mi355x", 294_896, "github-code-mi355x-rocmsmi"),
])
def test_driver_visible_memory_is_the_driver_report(hw_id, mib, source):
    hw = tk.hardware(hw_id)
    assert hw.mem_visible_bytes == mib * 2**20
    assert hw.sources["memory.visible"] == source


def test_amd_instinct_drivers_keep_16_mib_of_the_binary_capacity():
    # rocm-smi / amd-smi on MI300X, MI325X and MI355X report 192, 256 and 288 GiB less 16 MiB:
    # AMD's '192 GB' ... '288 GB' are binary, as the ROCm specifications table's 'VRAM (GiB)'.
    for hw_id, gib in (("mi300x", 192), ("mi325x", 256), ("mi355x", 288)):
        hw = tk.hardware(hw_id)
        assert hw.mem_capacity_bytes == gib * 2**30
        assert hw.mem_capacity_bytes - hw.mem_visible_bytes == 16 * 2**20


def test_gaudi_capacity_is_binary_as_hl_smi_reports():
    # hl-smi reports exactly 96 GiB and 128 GiB: Intel's '96 GB' / '128 GB' are binary.
    assert tk.hardware("gaudi2").mem_capacity_bytes == 96 * 2**30
    assert tk.hardware("gaudi3").mem_capacity_bytes == 128 * 2**30


def test_b300_bandwidth_is_the_hgx_figure():
    # verda-gb300-blog per-GPU table: B300 7.7 TB/s, GB300 8 TB/s.
    assert tk.hardware("b300").mem_bw_bytes_per_s == 7.7e12
    assert tk.hardware("gb300").mem_bw_bytes_per_s == 8e12


def test_llama_405b_at_32_x_128k_needs_more_b300s_on_driver_memory():
    # FP8 405B (405e9 B) + 32 x 128,000 tokens x 516,096 B/token (126 layers x 8 KV heads x 128 x
    # 2 x 2 B) = 2.519e12 B; on 275,040 MiB (288.4e9 B) each, at the library's usable share the
    # count must exceed what the 288 GiB (309.2e9 B) label alone would give.
    m = tk.model("llama-3.1-405b")
    need = 405e9 + 32 * 128_000 * 126 * 8 * 128 * 2 * 2
    assert need / 288.4e9 > need / 309.24e9 + 0.5
    assert tk.min_devices(m, "b300", context_tokens=128_000, batch=32) >= math.ceil(need / 288.4e9)


def test_tpu_v5p_ici_domain_is_the_largest_schedulable_slice():
    # google-tpu-v5p-docs: a v5p pod is 8,960 chips; the largest single slice (one ICI job) is
    # 6,144 chips, so one scale-up domain is 6,144.
    assert tk.hardware("tpu-v5p").scale_up_domain_size == 6144
