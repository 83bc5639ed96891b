"""Frozen specs (data/specs.py): validation of Hardware and Model, and the small
derived properties (peak per format, group size, layer groups)."""

from __future__ import annotations

import math
from dataclasses import FrozenInstanceError, replace

import numpy as np
import pytest

import tokenomics as tk
from tokenomics.data.specs import Hardware

LLAMA = {"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
         "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
         "vocab_size": 128256, "max_position_embeddings": 131072}


def _hw(**changes):
    base = dict(id="toy", name="toy device", peak_flop_per_s={"bf16": 1e15},
                mem_capacity_bytes=80e9, mem_bw_bytes_per_s=4e12)
    return Hardware(**{**base, **changes})


# ---- Hardware ------------------------------------------------------------------------------
def test_peak_by_compute_format():
    h = tk.hardware("h100-sxm")
    # NVIDIA H100 SXM datasheet: 1,979 TFLOP/s BF16 and 3,958 FP8 *with sparsity*; the
    # catalog stores dense figures, half of those: 989.4 and 1,978.9 TFLOP/s.
    assert h.peak("bf16") == 989.4e12
    assert h.peak("fp8") == 1978.9e12
    # Every FP8 flavour (E4M3, E5M2, MX block-scaled) runs at the FP8 peak.
    assert h.peak("fp8_e5m2") == h.peak("mxfp8") == h.peak("fp8")


def test_peak_of_an_unpublished_format():
    # H100 has no FP4 tensor cores: the catalog marks fp4 "not supported".
    with pytest.raises(tk.NotPublishedError, match=r"h100-sxm: dense fp4 peak is not supported "
                                                   r"\(format 'mxfp4'\)"):
        tk.hardware("h100-sxm").peak("mxfp4")
    # A format the entry is silent about is "not published"; the message lists what it has.
    with pytest.raises(tk.NotPublishedError, match=r"toy: dense fp8 peak is not published "
                                                   r"\(format 'fp8_e4m3'\); formats with a "
                                                   r"published peak: bf16"):
        _hw().peak("fp8")


@pytest.mark.parametrize("changes, match", [
    (dict(peak_flop_per_s={"fp7": 1e15}), r"unknown compute key 'fp7'; expected one of fp32"),
    (dict(peak_flop_per_s={"bf16": 0.0}), r"peak bf16 must be > 0, got 0.0"),
    (dict(peak_flop_per_s={"bf16": math.nan}), r"peak bf16 must be > 0, got nan"),
    (dict(mem_capacity_bytes=0), r"mem_capacity_bytes must be > 0, got 0"),
    (dict(mem_bw_bytes_per_s=math.inf), r"mem_bw_bytes_per_s must be > 0, got inf"),
])
def test_hardware_validation(changes, match):
    with pytest.raises(tk.TokenomicsError, match=rf"hardware 'toy': {match}"):
        _hw(**changes)


def test_hardware_is_frozen_and_with_makes_a_copy():
    h = _hw()
    with pytest.raises(FrozenInstanceError):
        h.mem_bw_bytes_per_s = 1.0  # type: ignore[misc]
    with pytest.raises(TypeError):   # the peak table is read-only too
        h.peak_flop_per_s["bf16"] = 1.0  # type: ignore[index]
    faster = h.with_(mem_bw_bytes_per_s=8e12)
    assert faster.mem_bw_bytes_per_s == 8e12 and h.mem_bw_bytes_per_s == 4e12
    # A what-if copy is validated like a new entry.
    with pytest.raises(tk.TokenomicsError, match="mem_bw_bytes_per_s must be > 0"):
        h.with_(mem_bw_bytes_per_s=-1.0)


def test_hardware_quantities_become_canonical_floats():
    # 80 GiB = 80 x 2**30 B; 900 GB/s = 9e11 B/s; 1 PFLOP/s = 1e15 FLOP/s; 700 W.
    h = _hw(mem_capacity_bytes=tk.Q_(80, "GiB"), scale_up_bw_bytes_per_s=tk.Q_(900, "GB/s"),
            peak_flop_per_s={"fp8": tk.Q_(1, "PFLOP/s")}, tdp_w=tk.Q_(0.7, "kW"))
    assert h.mem_capacity_bytes == 80 * 2**30
    assert h.scale_up_bw_bytes_per_s == 9e11
    assert h.peak("fp8") == 1e15
    assert h.tdp_w == pytest.approx(700.0)


def test_group_size():
    # Llama 3.1 70B config.json: 64 attention heads, 8 KV heads: 64 / 8 = 8 queries per KV head.
    a = tk.model("llama-3.1-70b").attention
    assert (a.num_q_heads, a.num_kv_heads) == (64, 8)
    assert a.group_size == 8.0
    # MLA: every one of DeepSeek-V3's 128 query heads reads the same latent.
    assert tk.model("deepseek-v3").attention.group_size == 128.0
    # MHA: one query per KV head.
    assert tk.model_from_hf_config({**LLAMA, "num_key_value_heads": 32}).attention.group_size \
        == 1.0


def test_moe_layer_counts():
    # DeepSeek-V3 config.json: 61 layers, first_k_dense_replace = 3: 3 dense + 58 MoE layers.
    m = tk.model("deepseek-v3")
    assert (m.num_layers, m.num_dense_layers, m.num_moe_layers) == (61, 3, 58)
    assert m.is_moe and m.moe.num_experts == 256 and m.moe.top_k == 8
    dense = tk.model("llama-3.1-8b")
    assert not dense.is_moe and dense.num_moe_layers == 0


def test_window_array_and_groups():
    # gpt-oss-120b: 36 layers alternating sliding-128 / full: 18 of each.
    m = tk.model("gpt-oss-120b")
    w = m.window_array
    assert w[0] == 128 and np.isinf(w[1]) and w.shape == (36,)
    assert sorted(m.window_groups(), key=str) == sorted(
        [("sliding", 128.0, 18), ("full", math.inf, 18)], key=str)
    # A dense, full-attention model is one group of all its layers.
    assert tk.model("llama-3.1-8b").window_groups() == [("full", math.inf, 32)]


@pytest.fixture(scope="module")
def llama():
    return tk.model_from_hf_config(LLAMA, id="toy-llama")


@pytest.mark.parametrize("changes, match", [
    (dict(layer_window=(0,) * 31), r"layer_window has 31 entries, expected num_layers=32"),
    (dict(layer_is_moe=(False,) * 33), r"layer_is_moe has 33 entries"),
    (dict(vocab_size=0), r"vocab_size must be a whole number from 1"),
    (dict(max_context=-1), r"max_context must be a whole number from 1"),
    (dict(layer_is_moe=(True,) * 32), r"MoE layers given but no MoE spec"),
])
def test_model_validation(llama, changes, match):
    with pytest.raises(tk.TokenomicsError, match=rf"model 'toy-llama': {match}"):
        replace(llama, **changes)


def test_model_formats_are_checked(llama):
    for field in ("weight_dtype", "expert_dtype", "embedding_dtype"):
        with pytest.raises(tk.UnknownEntryError, match=r"unknown numeric format 'fp7'"):
            replace(llama, **{field: "fp7"})


@pytest.mark.parametrize("args, match", [
    (("x", "X", 1e15, 80e9, 3e12), "peak_flop_per_s must map compute formats"),
    (("x", "X", {"bf16": "fast"}, 80e9, 3e12), "peak bf16 must be a number"),
    (("x", "X", {"bf16": 1e15}, 80e9, [3e12]), "mem_bw_bytes_per_s must be one number"),
])
def test_hardware_fields_of_the_wrong_kind_are_named(args, match):
    # the 0.1 positional form and a list bandwidth raised TypeError deep inside (issue 25)
    with pytest.raises(tk.TokenomicsError, match=match):
        Hardware(*args)
