"""Numeric formats (core/dtypes.py): effective storage per element and the peak each runs at.

Every expected value is the format's definition: element bits plus the shared scale's bits
spread over its block (OCP Microscaling Formats (MX) Specification v1.0, 2023: an 8-bit
E8M0 scale per 32 elements; NVIDIA NVFP4: an 8-bit E4M3 scale per 16 elements).
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import tokenomics as tk
from tokenomics.core.dtypes import PEAK_KEYS, DType, bytes_per_element, dtype, formats


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


def test_mxfp4_costs_four_and_a_quarter_bits():
    # OCP MX v1.0, MXFP4: E2M1 elements (4 bits) sharing one 8-bit E8M0 scale per block of 32:
    # 4 + 8 / 32 = 4.25 bits = 4.25 / 8 = 0.53125 bytes per element.
    m = dtype("mxfp4")
    assert (m.element_bits, m.block_size, m.scale_bits) == (4, 32, 8)
    assert m.bits == 4.25
    assert bytes_per_element("mxfp4") == 0.53125
    # A 1e9-parameter tensor in MXFP4: 1e9 x 0.53125 B = 531.25 MB (vs 2 GB in BF16).
    assert 1e9 * bytes_per_element("mxfp4") == 531.25e6


def test_whole_byte_formats():
    # FP8 (E4M3/E5M2) is one byte; BF16 and FP16 two; FP32 four. Per-tensor scales are
    # ignored: one scale per tensor is nothing against billions of elements.
    assert bytes_per_element("fp8") == bytes_per_element("fp8_e5m2") == 1.0
    assert bytes_per_element("bf16") == bytes_per_element("fp16") == 2.0
    assert bytes_per_element("fp32") == 4.0
    # bytes are bits / 8, never bits // 8: 4-bit integers take half a byte.
    assert bytes_per_element("int4") == 0.5


def test_block_scaled_int4_variants():
    # GPTQ/AWQ-style groups: an FP16 scale per 128 weights costs 16 / 128 = 0.125 bit, per 32
    # weights 16 / 32 = 0.5 bit.
    assert dtype("int4_g128").bits == 4.125
    assert dtype("int4_g32").bits == 4.5


@pytest.mark.parametrize("alias, canonical", [
    ("FP8", "fp8_e4m3"), ("e4m3", "fp8_e4m3"), ("float8_e4m3fn", "fp8_e4m3"),
    ("e5m2", "fp8_e5m2"), ("bfloat16", "bf16"), ("float16", "fp16"), ("half", "fp16"),
    ("float32", "fp32"), ("float", "fp32"), ("fp4", "nvfp4"), ("mxfp6_e2m3", "mxfp6"),
    ("int4-g128", "int4_g128"), ("w4", "int4_g128"), ("  BF16 ", "bf16")])
def test_aliases_case_and_whitespace(alias, canonical):
    # torch names (float8_e4m3fn, bfloat16) and common shorthands map to one canonical format.
    assert dtype(alias).name == canonical


def test_a_dtype_passes_through_and_non_strings_are_rejected():
    d = dtype("bf16")
    assert dtype(d) is d
    with pytest.raises(tk.UnknownEntryError, match=r"a format name must be a string, got 16"):
        dtype(16)  # type: ignore[arg-type]
    with pytest.raises(KeyError):  # a lookup error is also a KeyError for generic handlers
        dtype("fp7")


def test_format_table():
    names = [d.name for d in formats()]
    assert len(names) == len(set(names)) == 14
    assert names[:4] == ["fp32", "tf32", "bf16", "fp16"]    # table order
    for d in formats():
        assert d.peak in PEAK_KEYS, d.name
        assert dtype(d.name) is d
    # TF32 is stored as FP32 (4 bytes) but runs at the tensor cores' TF32 peak.
    assert dtype("tf32").bytes == 4.0 and dtype("tf32").peak == "tf32"


@given(element=st.sampled_from([4, 6, 8, 16]), block=st.sampled_from([16, 32, 64, 128]),
       scale=st.sampled_from([8, 16, 32]))
def test_block_scale_overhead_property(element, block, scale):
    # A shared scale adds scale / block bits per element: never negative, and exactly the
    # difference to the unscaled format.
    scaled = DType("x", element, block, scale, "fp8", "")
    plain = DType("y", element, 0, 0, "fp8", "")
    assert scaled.bits - plain.bits == scale / block
    assert scaled.bytes * 8 == scaled.bits
