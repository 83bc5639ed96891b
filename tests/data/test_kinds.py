"""The data-file kinds (data/kinds.py): the hardware and model files read through the one engine.

Each case corrupts a copy of a bundled file the way a hand edit would and checks that the
loader names the file and the field; the bundled files themselves are read in
tests/data/test_catalog.py (canonical units by hand: 80 GiB = 85,899,345,920 B, ...).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import tokenomics as tk
from tokenomics.data.bibliography import catalog_dir
from tokenomics.data.catalog import load_catalog
from tokenomics.data.kinds import HARDWARE, MODEL, PRICE, SCHEMAS


@pytest.fixture()
def copies(tmp_path):
    hw, md = tmp_path / "hw", tmp_path / "md"
    hw.mkdir()
    md.mkdir()
    for folder, name, dst in (("hardware_catalog", "h100-sxm.toml", hw),
                              ("model_catalog", "llama-3.1-8b.toml", md)):
        src = catalog_dir(folder)
        shutil.copy(src / "sources.toml", dst / "sources.toml")
        shutil.copy(src / name, dst / name)
    return hw, md


def _broken(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


def _refused(copies, name: str, field: str, why: str) -> None:
    """Loading the broken copies fails naming the file ``name`` and ``field``, saying ``why``."""
    with pytest.raises(tk.CatalogError) as exc:
        load_catalog(*copies)
    msg = str(exc.value)
    assert name in msg and f"field {field}" in msg and why in msg, msg


def test_every_kind_is_declared_once_by_name():
    # the ten file kinds of issue 25 (the KV tiers file holds two: tiers and retention)
    assert set(SCHEMAS) == {"hardware", "model", "system", "journey", "assumptions",
                            "api_prices", "kv_tier", "retention", "measurements", "corpus"}
    assert SCHEMAS["hardware"] is HARDWARE and SCHEMAS["model"] is MODEL
    assert HARDWARE.get("prices").sub is PRICE


@pytest.mark.parametrize("old, new, field, why", [
    # bits for bytes anywhere in [memory]: 80 Gib would be 10 GiB
    ('value = 80, unit = "GiB"', 'value = 80, unit = "Gib"', "memory.capacity.unit",
     "counts bits"),
    ('value = 50, unit = "MB"', 'value = 50, unit = "Mb"', "memory.sram.unit", "counts bits"),
    # a per-minute rental is 60x a per-hour one
    ('value = 3.78\nunit = "USD/hour"', 'value = 3.78\nunit = "USD/minute"', "prices[2].unit",
     "is not one of USD/hour, USD"),
    ('value = 3.78\nunit = "USD/hour"', 'value = 37800\nunit = "USD/hour"', "prices[2].value",
     "expected between 0.01 and 10000 USD/hour"),
    ('source = "techbytes-serverless-gpu-pricing-2026"', 'source = "nowhere"',
     "prices[2].source", "not in the bibliography"),
    ('tier = "neocloud-on-demand"\n', 'tier = "neocloud-on-demand"\ncolour = 1\n',
     "prices[2].colour", "unknown key"),
    ('released = "2022"', 'released = "early 2022"', "released", "YYYY"),
    ('released = "2022"', 'released = 2022', "released", "must be a string"),
    ('vendor = "NVIDIA"', 'vendor = "  "', "vendor", "non-empty"),
    ('aliases = ["h100", "h100-sxm5"]', 'aliases = "h100"', "aliases", "list of non-empty"),
    ('status = "shipping"', 'status = "shipping"\noverrides = "yes"', "overrides",
     "true or false"),
    ('[power]\n', '[power]\nfans = 4\n', "power.fans", "unknown key"),
    ('convention = "measured"', 'convention = "measured"\nfp4 = "not supported"',
     "achievable.fp4", None),          # a word is allowed and not a measured rate
    ('latency = { value = 2, unit = "us"', 'latency = { value = 2000, unit = "s"',
     "scale_out.latency", "implausible"),
])
def test_hardware_fields_are_named_when_wrong(copies, old, new, field, why):
    hw, md = copies
    _broken(hw / "h100-sxm.toml", old, new)
    if why is None:
        assert "fp4" not in load_catalog(hw, md).hardware["h100-sxm"].achievable_flop_per_s
        return
    _refused(copies, "h100-sxm.toml", field, why)


@pytest.mark.parametrize("old, new, field, why", [
    ('dtype = "bf16"\nsource = "hf-llama-3.1-8b-config"', 'dtype = "bf16"\nsource = "nowhere"',
     "weights.source", "not in the bibliography"),
    ('config_source = "hf-llama-3.1-8b-config"', 'config_source = "nowhere"', "config_source",
     "not in the bibliography"),
    ('active_params = { value = 8e9', 'active_params = { value = 9e9', "official.active_params",
     "exceeds total_params"),
    ('active_params = { value = 8e9, unit = "count"', 'active_params = { value = 8e9, unit = "GB"',
     "official.active_params.unit", "dimension"),
    ('[weights]\ndtype = "bf16"', '[weights]\ndtype = "bf16"\nkv = "fp8"', "weights.kv",
     "unknown key"),
    ('[official]', 'colour = "red"\n[official]', "colour", "unknown key"),
])
def test_model_fields_are_named_when_wrong(copies, old, new, field, why):
    hw, md = copies
    _broken(md / "llama-3.1-8b.toml", old, new)
    _refused(copies, "llama-3.1-8b.toml", field, why)


def test_a_stated_total_far_from_the_config_is_refused(copies):
    # Llama 3.1 8B's [config] gives 8.03e9 parameters; a stated 8e12 is a typo, 1000x off
    hw, md = copies
    _broken(md / "llama-3.1-8b.toml", 'total_params  = { value = 8e9',
            'total_params  = { value = 8e12')
    _broken(md / "llama-3.1-8b.toml", 'active_params = { value = 8e9',
            'active_params = { value = 8e12')
    with pytest.raises(tk.CatalogError, match=r"llama-3.1-8b.toml.*total"):
        load_catalog(hw, md)


def test_a_models_config_must_be_a_table(copies):
    hw, md = copies
    text = (md / "llama-3.1-8b.toml").read_text()
    head = text[:text.index("[config]")]
    (md / "llama-3.1-8b.toml").write_text(head.replace("[official]", 'config = "llama"\n'
                                                                       "[official]", 1))
    with pytest.raises(tk.CatalogError, match=r"field config: must be a table"):
        load_catalog(hw, md)
