"""Every catalog device its vendor ships multi-chip decodes multi-chip.

For each device a model that fits is deployed over more than one chip (tensor parallel inside
the scale-up domain, or a pipeline over the scale-out link for one-chip domains) and decoded at
batch 1, 1,024 tokens of context: the step time is finite and the exposed communication is
positive. Link figures are the catalog's (``hardware_catalog/*.toml`` ``[scale_up]`` and
``[scale_out]``; the PCIe fallback of L40S and H100 PCIe, Groq's RealScale C2C and Cerebras's
12 x 100 GbE system I/O are documented in ``docs/catalog-schema.md``).
"""

from __future__ import annotations

import math

import pytest

import tokenomics as tk
from tokenomics.data import catalog

#: Devices that cannot be deployed multi-chip from published figures, with the reason.
SINGLE_CHIP = {
    "bertha": "HyperAccel's ESL chip-to-chip link has no published bandwidth or domain size",
    "mi430x": "AMD has published no MI430X scale-up or scale-out figure (announced part)",
    "rubin-cpx": "PCIe Gen 6 without a published lane count or rate, and no per-CPX NIC rate "
                 "(announced part)",
}

#: Layouts other than the default (Llama 3.1 8B at the release BF16, tp=2).
LAYOUTS = {
    # 230 MB of SRAM per chip: 8.03 GB of INT8 weights / 64 chips = 125 MB each; one
    # 8-card node (tp=8) per pipeline stage, 8 stages over the node-to-node C2C links.
    "groq-lpu": dict(tp=8, pp=8, weight_dtype="int8", act_dtype="fp16"),
    # One wafer per CS-3: Cerebras runs a 70B model on four systems as a pipeline
    # (141 GB of BF16 weights / 44 GB per wafer = 3.2 -> 4).
    "cerebras-wse3": dict(model="llama-3.1-70b", tp=1, pp=4),
    # Groq 3 LPU (announced): 500 MB of SRAM per chip: 8.03 GB of FP8 weights / 32 chips =
    # 251 MB each, inside one 256-chip LPX rack (tp=32 over the C2C links).
    "groq-3-lpu": dict(tp=32, weight_dtype="fp8", act_dtype="fp8"),
    # The smallest TPU v5e (16 GiB) holds half of the 16 GB model per chip.
    "tpu-v5e": dict(tp=2),
    # Volta/Turing have no BF16 tensor format: the BF16 checkpoint runs cast to FP16.
    "v100-sxm2-32gb": dict(tp=2, weight_dtype="fp16", act_dtype="fp16"),
    "t4": dict(tp=2, weight_dtype="fp16", act_dtype="fp16"),
}


def _multichip_devices():
    return [h for h in sorted(catalog.default_catalog().hardware) if h not in SINGLE_CHIP]


@pytest.mark.parametrize("hw_id", _multichip_devices())
def test_decodes_multichip(hw_id):
    kw = {"model": "llama-3.1-8b", "tp": 2, **LAYOUTS.get(hw_id, {})}
    d = tk.Deployment(hardware=hw_id, **kw)
    assert d.n_devices > 1
    r = tk.decode(d, 1, 1024)
    assert math.isfinite(r.time_s) and r.time_s > 0
    assert r.collective_time_s > 0


@pytest.mark.parametrize("hw_id", sorted(SINGLE_CHIP))
def test_single_chip_devices_say_why(hw_id):
    # The reason above is what the layout check reports: no link figure to time traffic by.
    with pytest.raises(tk.TokenomicsError, match="no scale-out bandwidth is published"):
        tk.Deployment("llama-3.1-8b", hw_id, tp=2)


def test_pcie_fallback_and_the_h100_nvlink_bridge():
    # L40S: PCIe Gen4 x16, 64 GB/s bidirectional = 32 GB/s per direction (datasheet).
    # H100 PCIe: Gen5 x16, 128 GB/s bidirectional = 64 GB/s per direction (datasheet).
    assert tk.hardware("l40s").scale_up_bw_bytes_per_s == 32e9
    h = tk.hardware("h100-pcie")
    assert h.scale_up_bw_bytes_per_s == 64e9 and h.scale_up_domain_size == 8
    # A bridged pair: NVLink bridge 600 GB/s bidirectional = 300 GB/s each way, 2 cards.
    bridged = h.with_(scale_up_bw_bytes_per_s=300e9, scale_up_domain_size=2)
    pcie = tk.decode(tk.Deployment("llama-3.1-70b", h, tp=2, weight_dtype="fp8"), 1, 1024)
    nvl = tk.decode(tk.Deployment("llama-3.1-70b", bridged, tp=2, weight_dtype="fp8"), 1, 1024)
    assert nvl.collective_time_s < pcie.collective_time_s
    with pytest.raises(tk.TokenomicsError, match="scale-up domain of 2"):
        tk.Deployment("llama-3.1-70b", bridged, tp=4)


def test_amd_infinity_fabric_mi355x():
    # 7 links x 153.6 GB/s (sum of both directions) = 1,075.2 GB/s; per direction 537.6.
    assert tk.hardware("mi355x").scale_up_bw_bytes_per_s == pytest.approx(7 * 153.6e9 / 2)


def test_memory_bound_decode_without_a_compute_peak():
    # Bertha publishes no compute peak: decode is its memory traffic over its bandwidth, a
    # lower bound; compute time is unknown (NaN). Prefill needs the peak and says so.
    d = tk.Deployment("llama-3.1-8b", "bertha")
    r = tk.decode(d, 1, 1024)
    assert math.isnan(r.compute_time_s) and r.bound == "memory"
    assert r.time_s == pytest.approx(r.memory_time_s)
    assert r.memory_time_s == pytest.approx(r.bytes_per_device / d.hardware.mem_bw_bytes_per_s)
    with pytest.raises(tk.NotPublishedError, match=r"needs the compute peak: bertha: dense bf16 "
                                                   r"peak is not published"):
        tk.prefill(d, 1024)
    with pytest.raises(tk.NotPublishedError, match="bf16 peak is not published"):
        tk.ridge_point(d.hardware, "bf16")
