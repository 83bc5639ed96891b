"""Parameter counts from a model's fields, and the load-time check of a file's stated totals
(issue 25: a stated ``total_params`` 1000x what the fields give loaded silently)."""

from __future__ import annotations

import re
import shutil

import pytest

import tokenomics as tk
from tokenomics.data.bibliography import catalog_dir
from tokenomics.data.catalog import load_catalog
from tokenomics.data.counts import (
    OFFICIAL_PARAMS_TOLERANCE,
    attention_params_per_layer,
    check_official_params,
    component_params,
    counted_params,
    expert_params,
    ffn_params,
)


def test_llama_3_1_8b_counts_by_hand():
    # config.json of meta-llama/Llama-3.1-8B: h 4096, 32 layers, 32 query heads and 8 KV heads
    # of 128, FFN 14336 (gated), vocab 128,256, untied head, RMSNorm (2 per layer + final)
    m = tk.model("llama-3.1-8b")
    att = 4096 * (32 * 128 + 2 * 8 * 128) + 32 * 128 * 4096
    ffn = 3 * 4096 * 14336
    assert attention_params_per_layer(m) == att
    assert ffn_params(m, 14336) == ffn
    assert expert_params(m) == 0.0
    total = 2 * 128256 * 4096 + 32 * (att + ffn) + 4096 * (2 * 32 + 1)
    assert counted_params(m) == total                      # 8,030,261,248: Meta states 8B
    assert sum(component_params(m).values()) == total
    assert counted_params(m, include_embedding=False, include_lm_head=False) == \
        total - 2 * 128256 * 4096


def test_mixtral_active_counts_two_of_eight_experts():
    # Mistral: 46.7B total, 12.9B active (2 of 8 experts of 3 x 4096 x 14336 in 32 layers)
    m = tk.model("mixtral-8x7b")
    expert = 3 * 4096 * 14336
    assert expert_params(m) == expert
    assert counted_params(m) - counted_params(m, active=True) == 6 * expert * 32
    assert counted_params(m) == pytest.approx(46.7e9, rel=0.01)
    assert counted_params(m, active=True) == pytest.approx(12.9e9, rel=0.01)


def test_every_catalog_model_states_counts_its_config_gives():
    for mid in tk.model_table().index:
        check_official_params(tk.model(mid))


def _corrupted_copy(tmp_path, old: str, new: str):
    md = tmp_path / "models"
    shutil.copytree(catalog_dir("model_catalog"), md)
    f = md / "llama-3.1-8b.toml"
    text = f.read_text()
    assert old in text
    f.write_text(text.replace(old, new, 1))
    return md


def test_a_stated_total_1000x_the_fields_is_refused_at_load(tmp_path):
    # 8e12 for Llama 3.1 8B (a unit slip: the config counts 8.03e9, so 996x)
    md = _corrupted_copy(tmp_path, "total_params  = { value = 8e9,",
                         "total_params  = { value = 8e12,")
    with pytest.raises(tk.CatalogError, match=r"llama-3.1-8b.toml: field official.total_params"
                                              r": 8e\+12 is 99\d x"):
        load_catalog(catalog_dir("hardware_catalog"), md)


def test_a_config_of_another_checkpoint_is_refused_at_load(tmp_path):
    # 70B's width under the 8B's stated 8B total: 4096 -> 8192 hidden gives about 3.6x
    md = _corrupted_copy(tmp_path, "hidden_size = 4096", "hidden_size = 8192")
    with pytest.raises(tk.CatalogError, match=re.escape("llama-3.1-8b.toml") +
                       r": field official\.(total|active)_params: .* x the"):
        load_catalog(catalog_dir("hardware_catalog"), md)


def test_within_the_tolerance_loads(tmp_path):
    # 8.5e9 is 5.9% above the config's 8.03e9, inside the 10% a vendor's rounding may take
    assert OFFICIAL_PARAMS_TOLERANCE == 0.10
    md = _corrupted_copy(tmp_path, "total_params  = { value = 8e9,",
                         "total_params  = { value = 8.5e9,")
    m = load_catalog(catalog_dir("hardware_catalog"), md).models["llama-3.1-8b"]
    assert m.official_total_params == 8.5e9
    with pytest.raises(tk.CatalogError, match="at most 5% apart"):
        check_official_params(m, tolerance=0.05)


def test_check_official_params_refuses_what_is_not_a_model():
    with pytest.raises(tk.TokenomicsError, match="needs a Model"):
        check_official_params("llama-3.1-8b")
    with pytest.raises(tk.TokenomicsError, match="tolerance"):
        check_official_params(tk.model("llama-3.1-8b"), tolerance=-0.1)
