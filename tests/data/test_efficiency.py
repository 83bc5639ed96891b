"""Efficiencies (data/efficiency.py): the roofline preset, range checks that name the field
and its range, quantities for overheads, and per-stack values resolved most-specific first."""

from __future__ import annotations

import math

import pytest

import tokenomics as tk
from tokenomics.data.efficiency import ROOFLINE, Efficiency


# ---- Efficiency ----------------------------------------------------------------------------
def test_roofline_is_the_bound():
    assert ROOFLINE == Efficiency()
    assert (ROOFLINE.mfu, ROOFLINE.mbu, ROOFLINE.link_efficiency) == (1.0, 1.0, 1.0)
    assert ROOFLINE.step_overhead_s == ROOFLINE.layer_overhead_s == 0.0


def test_bad_efficiency():
    with pytest.raises(tk.TokenomicsError, match=r"mfu must be in \(0, 1\]"):
        tk.Efficiency(mfu=1.2)
    with pytest.raises(tk.TokenomicsError, match=r"step_overhead_s must be >= 0"):
        tk.Efficiency(step_overhead_s=-1)


@pytest.mark.parametrize("changes, match", [
    (dict(mfu=0.0), r"efficiency mfu must be in \(0, 1\], got 0.0"),
    (dict(mbu=1.01), r"efficiency mbu must be in \(0, 1\]"),
    (dict(link_efficiency=-0.5), r"efficiency link_efficiency must be in \(0, 1\]"),
    (dict(layer_overhead_s=-1e-6), r"efficiency layer_overhead_s must be >= 0 seconds"),
    (dict(collective_overhead_s=math.inf), r"collective_overhead_s must be >= 0 seconds, got inf"),
    (dict(step_overhead_s=math.nan), r"step_overhead_s must be >= 0 seconds, got nan"),
])
def test_efficiency_validation(changes, match):
    with pytest.raises(tk.TokenomicsError, match=match):
        Efficiency(**changes)


def test_efficiency_overheads_take_quantities():
    # 20 us = 2e-5 s; 1.5 ms = 1.5e-3 s.
    e = Efficiency(layer_overhead_s=tk.Q_(20, "us"), collective_overhead_s=tk.Q_(1.5, "ms"),
                   mfu=0.5)
    assert e.layer_overhead_s == pytest.approx(2e-5)
    assert e.collective_overhead_s == pytest.approx(1.5e-3)
    assert e.mfu == 0.5
    with pytest.raises(tk.UnitError, match=r"step_overhead_s has unit"):
        Efficiency(step_overhead_s=tk.Q_(1, "GB"))


@pytest.mark.parametrize("changes, match", [
    (dict(achievable_peaks=1.5), r"achievable_peaks must be in \[0, 1\]"),
    (dict(collective_overlap=-0.1), r"collective_overlap must be in \[0, 1\]"),
    (dict(mixed_input_mfu_scale=0.0), r"mixed_input_mfu_scale must be in \(0, 1\]"),
    (dict(expert_mfu_scale=0.0), r"expert_mfu_scale must be in \(0, 1\]"),
    (dict(token_overhead_s=-1e-6), r"token_overhead_s must be >= 0 seconds"),
    (dict(expert_tile_tokens=math.nan), r"expert_tile_tokens must be >= 0 tokens"),
    (dict(mfu=0.8, attention_mfu_scale=1.5), r"mfu x attention_mfu_scale <= 1"),
])
def test_the_newer_fields_are_range_checked(changes, match):
    with pytest.raises(tk.TokenomicsError, match=match):
        Efficiency(**changes)


def test_the_bound_reads_datasheet_peaks_and_hides_collectives():
    # the roofline is an upper bound: datasheet peaks (not the measured achievable ones) and
    # every collective behind compute
    assert ROOFLINE.achievable_peaks == 0.0 and ROOFLINE.collective_overlap == 1.0
    assert ROOFLINE.token_overhead_s == 0.0 and ROOFLINE.mixed_input_mfu_scale == 1.0
    assert ROOFLINE.expert_mfu_scale == 1.0


def test_for_stack_takes_the_most_specific_values_it_has():
    # stack and family, then stack, then family, then the pooled values
    e = Efficiency(mbu=0.8, stacks={"|": {"mbu": 0.8}, "|amd": {"mbu": 0.7},
                                    "amd-vllm|": {"mbu": 0.6}, "amd-vllm|amd": {"mbu": 0.5}},
                   families={"mi300x": "amd"})
    assert e.for_stack("amd-vllm", "mi300x").mbu == 0.5
    assert e.for_stack("amd-vllm", "h100-sxm").mbu == 0.6
    assert e.for_stack("nvidia-sglang", "mi300x").mbu == 0.7
    assert e.for_stack("nvidia-sglang", "h100-sxm").stack == "|"
    assert Efficiency(mbu=0.9).for_stack("amd-vllm").mbu == 0.9   # no stacks: unchanged


@pytest.mark.parametrize("stacks, match", [
    ({"amd-vllm|": {"mbu": 0.6}}, r"the pooled ones under '\|'"),
    ({"|": {"speed": 2.0}}, r"unknown fields: speed"),
])
def test_bad_stacks_are_named(stacks, match):
    with pytest.raises(tk.TokenomicsError, match=match):
        Efficiency(stacks=stacks)


@pytest.mark.parametrize("bad", [-1, "h200", {"h200": 1}, [("h200", "h200")]])
def test_families_must_map_hardware_ids_to_family_names(bad):
    # the fuzz profile found Efficiency(families=-1) accepted (and -1 read back as a number)
    with pytest.raises(tk.TokenomicsError, match="families must map hardware ids"):
        tk.Efficiency(families=bad)
