"""The units registry and the conversions at its boundary (core/units.py)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

import tokenomics as tk
from tokenomics.core.units import (
    as_magnitude,
    coerce_fields,
    is_bit_unit,
    parse_quantity,
    to_array,
)


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


def test_time_and_money_units():
    assert parse_quantity(1, "hour", "s") == 3600.0
    assert parse_quantity(2.5, "USD/hour", "USD/s") == pytest.approx(2.5 / 3600)
    assert parse_quantity(150, "cent", "USD") == pytest.approx(1.5)
    assert parse_quantity(1, "kWh", "J") == pytest.approx(3.6e6)     # 1000 W x 3600 s


def test_as_magnitude_strips_quantities_and_passes_numbers():
    assert as_magnitude(tk.Q_(20, "us"), "s") == pytest.approx(2e-5)
    assert as_magnitude(7.0, "s") == 7.0                  # a plain number is already canonical
    arr = np.array([1.0, 2.0])
    assert as_magnitude(arr, "B") is arr
    with pytest.raises(tk.UnitError, match=r"link has unit .* cannot be converted to 'B/s'"):
        as_magnitude(tk.Q_(1, "flop/s"), "B/s", "link")


def test_to_array_rejects_non_numbers():
    assert to_array([1, 2], "x").dtype == np.float64
    with pytest.raises(tk.UnitError, match=r"x must be a number or an array of numbers"):
        to_array(["a"], "x")


def test_coerce_fields_converts_only_quantities():
    @dataclass(frozen=True)
    class Box:
        size_bytes: object
        time_s: object = None

    b = Box(tk.Q_(1, "KiB"), None)
    coerce_fields(b, {"size_bytes": "B", "time_s": "s"})
    assert b.size_bytes == 1024.0 and b.time_s is None       # 1 KiB = 2**10 B
    c = Box(5.0, tk.Q_(2, "min"))
    coerce_fields(c, {"size_bytes": "B", "time_s": "s"})
    assert c.size_bytes == 5.0 and c.time_s == 120.0
    with pytest.raises(tk.UnitError, match=r"time_s has unit"):
        coerce_fields(Box(1.0, tk.Q_(1, "GB")), {"time_s": "s"})


def test_quantities_of_other_registries_are_read_in_the_library_units():
    import pint

    from tokenomics.core.units import registry

    registry()
    app = pint.get_application_registry()
    # pint's defaults make a byte dimensionless; the library reads the unit string, so a
    # GB is still 1e9 B of [information] and cannot pass for a count
    assert as_magnitude(app.Quantity(80, "GB"), "B") == 80e9
    assert as_magnitude(app.Quantity(3.35, "TB/s"), "B/s") == pytest.approx(3.35e12)
    assert as_magnitude(app.Quantity(2, "USD/hour"), "USD/hour") == 2.0
    with pytest.raises(tk.UnitError, match="cannot be converted"):
        as_magnitude(app.Quantity(80, "GB"), "count")
    # a user's own registry with pint's defaults: standard units work, unknown ones are named
    own = pint.UnitRegistry()
    assert as_magnitude(own.Quantity(700, "W"), "W") == 700
    with pytest.raises(tk.UnitError, match="inch .from another pint registry"):
        as_magnitude(own.Quantity(1, "inch"), "B")


def test_capital_k_tokens_are_the_context_window_convention():
    # Llama 3.1's "128K" context is 131,072 tokens (max_position_embeddings in its config);
    # SI k and M stay decimal, as in USD per Mtok
    assert tk.Q_(128, "Ktok").m_as("token") == 131_072 == tk.model("llama-3.1-8b").max_context
    assert tk.Q_(128, "Ktoken").m_as("token") == tk.Q_(128, "Kitoken").m_as("token")
    assert tk.Q_(128, "ktokens").m_as("token") == 128_000
    assert tk.Q_(1, "Mtok").m_as("token") == 1_000_000
    d = tk.Deployment("llama-3.1-8b", "h100-sxm")
    assert float(tk.decode(d, 1, tk.Q_(8, "Ktok")).context_tokens) == 8192
    import pint
    assert pint.get_application_registry().Quantity(128, "Ktoken").m_as("token") == 131_072


def test_results_as_quantities_on_request():
    d = tk.Deployment("llama-3.1-8b", "h100-sxm")
    r = tk.decode(d, [1, 8], 4096)
    q = tk.as_quantities(r)
    # the step time in ms is a thousand times the seconds; throughput is tokens per second
    assert np.allclose(q["time_s"].m_as("ms"), 1e3 * np.asarray(r.time_s))
    assert q["tokens_per_s_per_device"].units == tk.registry().Unit("token/s")
    assert q["bytes_per_device"].m_as("GB") == pytest.approx(np.asarray(r.bytes_per_device) / 1e9)
    assert q["bound"] is r.bound and q["phase"] == "decode"
    # USD per million tokens: 1 USD/Mtok is 1e-6 USD per token
    p = tk.best_at([d], 100, context_tokens=4096)
    c = tk.as_quantities(p)["cost_usd_per_mtok"]
    assert c.m_as("USD/token") == pytest.approx(p.cost_usd_per_mtok * 1e-6)
    f = tk.as_quantities(r.to_frame())
    assert np.allclose(f["step_time_s"].m_as("s"), r.time_s)
    assert tk.unit_of("label") is None and tk.unit_of("kv_bytes_per_token") == "B/token"
    with pytest.raises(tk.UnitError, match="takes a result"):
        tk.as_quantities(3.0)


def test_reprs_carry_units_and_scaled_numbers():
    from tokenomics.core.units import readable
    assert readable("weights_bytes", 35.28e9) == "35.28 GB"       # decimal GB, as catalogs
    assert readable("time_s", 0.01143) == "11.43 ms"
    assert readable("tokens_per_s_per_device", 175.0) == "175 tok/s"
    assert readable("output_usd_per_mtok", 3.175) == "3.175 USD/Mtok"
    assert readable("fits", np.array([True, False, True])) == "2 of 3 True"
    assert readable("batch", np.array([8.0, 16.0])) == "[8 .. 16] (2 points)"
    d = tk.Deployment("llama-3.1-70b", "h100-sxm", tp=4)
    m = repr(tk.memory_fit(d, 8, 8192))
    # 70.6e9 parameters x 2 bytes / 4 devices: about 35.3 GB of weights per device
    assert m.startswith("MemoryFit(weights_bytes=35.") and " GB" in m and "fits=True" in m
    assert " ms" in repr(tk.decode(d, 8, 4096))


def test_every_result_class_tabulates_and_prints_its_units():
    # issue 14: one result protocol. Inputs (Deployment, Efficiency, ...) are not results.
    d = tk.Deployment("llama-3.1-70b", "h100-sxm", tp=8)
    s = tk.agent_step(d)
    f = s.to_frame()
    assert len(f) == 1 and f.loc[0, "time_s"] == pytest.approx(s.time_s)
    assert "time_s=1." in repr(s) and " s," in repr(s)
    c = tk.chunked_prefill(tk.Deployment("llama-3.1-8b", "h100-sxm"), 8192, 2048)
    cf = c.to_frame()
    assert len(cf) == 4 and (cf.chunk_tokens == 2048).all()   # 8,192 tokens in 4 chunks
    r = tk.reload_or_recompute(d, 119_000)
    assert "GB" in repr(r) and r.to_frame().loc[0, "faster"] == r.faster


def test_unit_names_of_rates_and_quantities_given_back():
    assert tk.unit_of("hbm_usd_per_s") == "USD/s"          # a price per second, not a rate
    assert tk.unit_of("requests_per_s") == "1/s"
    q = tk.as_quantities({"time_s": tk.Q_(5, "ms")})["time_s"]
    assert q.m_as("s") == pytest.approx(0.005)            # not relabelled 5 seconds
    from tokenomics.core.units import readable
    assert readable("x_s", [1, [2, 3]]) == "[1, [2, 3]]"   # ragged: shown as given


@pytest.mark.parametrize("unit", ["TB/s/0", "1/0", "(" * 3000 + "B" + ")" * 3000,
                                  '__import__("os")', "B**99", "GB/s" * 20, "", 3.0])
def test_unit_strings_that_pint_would_evaluate_are_refused_first(unit):
    # pint's parser evaluates arithmetic (TB/s/0 divides by zero, deep parentheses recurse);
    # a data file's unit must be plain unit names, refused with the library's error
    with pytest.raises(tk.UnitError, match="not a plain unit string"):
        parse_quantity(1.0, unit, "B")


@pytest.mark.parametrize("unit, bits", [("Gb/s", True), ("Tbit/s", True), ("Mbps", True),
                                        ("GB/s", False), ("GiB", False), ("USD/GB/hour", False),
                                        ("kB", False)])
def test_bit_units_are_told_from_byte_units(unit, bits):
    assert is_bit_unit(unit) is bits


def test_the_catalogs_unit_factors_are_pints_own_conversions_bit_for_bit():
    # parse_quantity converts the catalogs' unit strings by a fixed factor instead of building
    # the pint registry (a second on first use); each factor must give exactly pint's result
    import numpy as np

    from tokenomics.core.units import LINEAR_FACTORS, registry

    ureg = registry()
    values = [*np.random.default_rng(0).uniform(0, 5e3, 500), 3.35, 989.4, 81559, 4.8, 0.1]
    for (unit, to), factor in LINEAR_FACTORS.items():
        for v in values:
            assert float(v) * factor == float(ureg.Quantity(float(v), unit).m_as(to)), (unit, v)


def test_reading_the_bundled_catalogs_needs_no_pint_registry():
    import subprocess
    import sys

    code = ("import sys, tokenomics as tk; h = tk.hardware('h200'); tk.model('llama-3.1-8b'); "
            "assert h.mem_bw_bytes_per_s == 4.8e12; assert 'pint' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)
