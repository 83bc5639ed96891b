"""Nemotron 3 Super 120B-A12B: a latent MoE (MoE.latent_size), read from its config.json.

Hand counts from the config's fields and transformers' NemotronHMoE / NemotronHMamba2Mixer
shapes (model_catalog/sources.toml, hf-nemotron-3-super-config); the check figure is
NVIDIA Megatron-Bridge's verification card for the BF16 checkpoint: 123,611,033,088
elements, of which the one MTP block (attention + MoE, sharing the embedding and head) is
2,942,325,248.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

import tokenomics as tk
from tokenomics.physics.collectives import step_comm
from tokenomics.physics.operators import step_costs

SUPER = tk.model("nemotron-3-super-120b-a12b")
H, LAT, E, K, I_E, I_S = 4096, 1024, 512, 22, 2688, 5376


def _moe_layer(active: bool = False) -> int:
    # router (+ correction bias), the two latent projections, the routed experts in the
    # latent (up and down, squared ReLU: no gate), the shared expert on the hidden state,
    # the block's norm
    routed = (K if active else E) * 2 * LAT * I_E
    return E * H + E + 2 * H * LAT + routed + 2 * H * I_S + H


def test_super_count_by_hand_is_the_checkpoint_less_its_mtp_block():
    mamba = (H * (2 * 8192 + 2 * 8 * 128 + 128) + 5 * 10240 + 3 * 128 + 8192 + 8192 * H + H)
    attention = H * (32 * 128 + 2 * 2 * 128) + 32 * 128 * H + H
    assert _moe_layer() == 2_873_102_848 and mamba == 109_640_064
    total = 40 * mamba + 40 * _moe_layer() + 8 * attention + 2 * 131_072 * H + H
    assert total == 123_611_033_088 - 2_942_325_248 == 120_668_707_840
    assert tk.param_count(SUPER) == total
    assert tk.param_count(SUPER) == pytest.approx(120e9, rel=0.01)       # "120B"


def test_super_active_count_is_the_published_12b():
    active = tk.param_count(SUPER, active=True, include_embedding=False)
    assert active == tk.param_count(SUPER, include_embedding=False) - 40 * (
        _moe_layer() - _moe_layer(active=True))
    assert active == pytest.approx(12e9, rel=0.02)                        # "12B active"


def test_the_experts_compute_at_the_latent_and_the_projections_on_every_token():
    d = tk.Deployment(SUPER, "b200", tp=2)
    ops = {o.name: o for o in step_costs(d, 4.0, 1.0, 100.0, 1.0)}
    # 4 tokens, 22 experts each, 2 x 1024 x 2688 weights an expert, 40 MoE layers
    assert float(ops["moe_experts"].flops) == 2 * 4 * K * 2 * LAT * I_E * 40
    # the shared expert and the two projections, dense on every token
    assert float(ops["moe_shared"].flops) == 2 * 4 * (2 * H * I_S + 2 * H * LAT) * 40
    # without the latent the same experts would read and compute at the hidden size
    wide = replace(SUPER, moe=replace(SUPER.moe, latent_size=0))
    assert tk.param_count(wide) - tk.param_count(SUPER) == 40 * (
        E * 2 * (H - LAT) * I_E - 2 * H * LAT)


def test_tokens_cross_expert_parallelism_at_the_latent_width():
    d = tk.Deployment(SUPER, "b200", tp=8, ep=8)
    cols = {c.name: c for c in step_comm(d, 16.0, 1.0, 1.0, "decode")}
    # 16 tokens over tp 8: 2 a rank, 22 copies each, 1,024 BF16 values: the dispatch and
    # the combine carry a quarter of what a 4,096-wide token would
    for name in ("ep_dispatch", "ep_combine"):
        assert float(cols[name].message_bytes) == 16 / 8 * K * LAT * 2
        assert cols[name].calls == 40


def test_a_latent_width_that_cannot_be_is_refused():
    with pytest.raises(tk.TokenomicsError, match="latent_size"):
        replace(SUPER.moe, latent_size=-1)
    cfg = dict(SUPER.config)
    cfg["moe_latent_size"] = "wide"
    with pytest.raises(tk.CatalogError, match="moe_latent_size"):
        tk.model_from_hf_config(cfg)
