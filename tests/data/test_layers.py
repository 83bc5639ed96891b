"""A model's layer shapes (tokenomics/data/layers.py): validated on construction."""

from __future__ import annotations

import pytest

import tokenomics as tk
from tokenomics.data.layers import MAX_WIDTH, Attention, LinearAttention, MoE, check_whole


def test_group_size_is_query_heads_per_stored_kv_head():
    # Llama 3.1 70B: 64 query heads over 8 KV heads; MLA: every query head reads one latent
    assert Attention("GQA", 64, 8, 128, 128).group_size == 8.0
    assert Attention("MLA", 128, 128, 192, 128, kv_lora_rank=512).group_size == 128.0
    assert Attention("MLA", 64, 64, 192, 128, kv_lora_rank=512, index_topk=2048).is_sparse


@pytest.mark.parametrize("kw, match", [
    ({"num_q_heads": 0}, "num_q_heads"),
    ({"head_dim": MAX_WIDTH + 1}, "head_dim"),
    ({"num_kv_heads": True}, "num_kv_heads"),
    ({"index_topk": -1}, "index_topk"),
    ({"k_eq_v": True, "v_head_dim": 64}, "k_eq_v"),
])
def test_an_attention_shape_that_cannot_exist_is_refused(kw, match):
    args = {"kind": "GQA", "num_q_heads": 8, "num_kv_heads": 2, "head_dim": 128,
            "v_head_dim": 128, **kw}
    with pytest.raises(tk.TokenomicsError, match=match):
        Attention(**args)


def test_keys_as_values_on_mla_are_refused():
    with pytest.raises(tk.TokenomicsError, match="non-MLA"):
        Attention("MLA", 16, 16, 192, 192, kv_lora_rank=512, k_eq_v=True)


def test_linear_attention_checks_its_widths_kind_and_state_format():
    ok = LinearAttention(16, 32, 128, 128, 4)          # Qwen3-Next's Gated DeltaNet
    assert ok.kind == "gated_deltanet" and ok.state_dtype is None
    with pytest.raises(tk.TokenomicsError, match="positive integer"):
        LinearAttention(16, 32, 128, 0, 4)
    with pytest.raises(tk.TokenomicsError, match="kind"):
        LinearAttention(16, 32, 128, 128, 4, kind="rwkv")
    with pytest.raises(tk.UnknownEntryError):
        LinearAttention(16, 32, 128, 128, 4, kind="mamba2", state_dtype="fp7")


def test_moe_keeps_the_router_scales_flag_and_check_whole_names_the_bound():
    assert MoE(128, 8, 704, 1, 2112, router_scales=True).router_scales   # Gemma 4 26B-A4B
    check_whole(3, "layers", 1, 10)
    with pytest.raises(tk.TokenomicsError, match="layers must be a whole number from 1 to 10"):
        check_whole(11, "layers", 1, 10)
    with pytest.raises(tk.TokenomicsError, match="whole number"):
        check_whole(2.0, "layers", 1, 10)
