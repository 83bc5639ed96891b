"""Units registry and numeric formats."""

from __future__ import annotations

import pytest

import tokenomics as tk
from tokenomics.core.units import parse_quantity


def test_decimal_vs_binary_and_bits_vs_bytes():
    assert parse_quantity(1, "GB", "B") == 1e9
    assert parse_quantity(1, "GiB", "B") == 2**30
    assert parse_quantity(400, "Gb/s", "B/s") == 50e9          # NIC line rate
    assert parse_quantity(3.35, "TB/s", "B/s") == 3.35e12       # H100, decimal
    assert parse_quantity(1, "TOPS", "flop/s") == 1e12


def test_dimensions_are_distinct():
    for unit, to in (("TB/s", "flop/s"), ("W", "B"), ("USD", "token"), ("token", "B")):
        with pytest.raises(tk.UnitError, match="cannot be converted|expected one convertible"):
            parse_quantity(1, unit, to)


def test_unparseable_unit():
    with pytest.raises(tk.UnitError, match="cannot parse unit"):
        parse_quantity(1, "furlongs", "B")


@pytest.mark.parametrize("name, bits", [
    ("bf16", 16), ("fp16", 16), ("fp8", 8), ("fp8_e5m2", 8), ("mxfp8", 8.25), ("mxfp6", 6.25),
    ("mxfp4", 4.25), ("nvfp4", 4.5), ("int8", 8), ("int4", 4), ("int4_g128", 4.125)])
def test_effective_bits(name, bits):
    # OCP MX v1.0: 8-bit E8M0 scale per 32; NVFP4: 8-bit E4M3 scale per 16 (S17);
    # INT4 with an FP16 scale per 128 weights.
    assert tk.dtype(name).bits == bits
    assert tk.bytes_per_element(name) == bits / 8


def test_peak_each_format_runs_at():
    assert tk.dtype("mxfp4").peak == tk.dtype("nvfp4").peak == "fp4"
    assert tk.dtype("mxfp8").peak == "fp8"
    assert tk.dtype("int4_g128").peak == "int4"


def test_unknown_format():
    with pytest.raises(tk.UnknownEntryError, match=r"unknown numeric format 'fp5'.*known"):
        tk.dtype("fp5")


def test_quantities_at_the_boundary():
    Q = tk.Q_
    hw = tk.Hardware(id="what-if", name="H100 with 5 TB/s",
                     peak_flop_per_s={"bf16": Q(989.4, "TFLOP/s")},
                     mem_capacity_bytes=Q(80, "GB"), mem_bw_bytes_per_s=Q(5, "TB/s"))
    assert hw.mem_bw_bytes_per_s == 5e12 and hw.peak("bf16") == 989.4e12
    assert tk.roofline_time(Q(2, "TFLOP"), Q(1, "GB"), Q(1, "PFLOP/s"), Q(1, "TB/s")) == 2e-3
    d = tk.Deployment("llama-3.1-8b", hw, runtime_reserve_bytes=Q(2, "GiB"),
                      efficiency=tk.Efficiency(step_overhead_s=Q(3, "ms")))
    assert d.runtime_reserve_bytes == 2 * 2**30 and d.efficiency.step_overhead_s == 3e-3
    with pytest.raises(tk.UnitError, match="mem_bw_bytes_per_s has unit"):
        tk.Hardware(id="x", name="x", peak_flop_per_s={"bf16": 1e15},
                    mem_capacity_bytes=80e9, mem_bw_bytes_per_s=Q(5, "TFLOP/s"))
