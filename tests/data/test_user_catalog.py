"""Users' own catalog folders: found by argument, environment variable and CLI option, validated
like the bundled files, and an id already defined replaced only with ``overrides = true``."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

import tokenomics as tk
from tokenomics.data.bibliography import catalog_dir
from tokenomics.data.catalog import default_catalog, load_catalog
from tokenomics.data.user_catalog import CATALOG_ENV, search_path, use_catalog
from tokenomics.surfaces.cli import main

CONTRACT = '''
[[prices]]
value = 2.10
unit = "USD/hour"
tier = "long-term-contract"
date = "2026-06"
source = "acme-contract-2026"
note = "our negotiated rate"
'''
BIB = '''[acme-contract-2026]
title = "ACME cloud contract, schedule B"
publisher = "ACME procurement"
url = "https://intranet.example/contracts/2026-b"
accessed = "2026-06-01"
kind = "team-figure"
'''


pytestmark = pytest.mark.usefixtures("clean_search_path")


@pytest.fixture()
def make_user_catalog(write_user_catalog):
    """'my-chip' (the bundled H100 SXM figures, sourced from the bundled bibliography, plus a
    negotiated price of its own source) and 'my-model' (Llama 3.1 8B's config under a new id)."""
    def make(root: Path, hw_dir: str = "hardware", model_dir: str = "models") -> Path:
        return write_user_catalog(root, hw_dir, model_dir, aliases='["my-accelerator"]',
                                  hw_extra=CONTRACT, bib=BIB)
    return make


@pytest.fixture()
def user_dir(tmp_path, make_user_catalog):
    return make_user_catalog(tmp_path / "mine")


def test_by_argument_usable_by_id_everywhere(user_dir):
    use_catalog(user_dir)
    h = tk.hardware("my-chip")
    assert tk.hardware("my-accelerator") is h
    # The copied figure: NVIDIA H100 SXM5 datasheet, 3.35 TB/s.
    assert h.mem_bw_bytes_per_s == 3.35e12
    assert h.mem_capacity_bytes == tk.hardware("h100-sxm").mem_capacity_bytes
    assert tk.rental_price(h, "long-term-contract").usd == 2.10
    assert tk.sources()["acme-contract-2026"].kind == "team-figure"
    # Same figures as the bundled pair, so the same step time.
    mine = tk.decode(tk.Deployment("my-model", "my-chip"), 8, 4096).step_time_s
    ref = tk.decode(tk.Deployment("llama-3.1-8b", "h100-sxm"), 8, 4096).step_time_s
    assert mine == pytest.approx(ref, rel=1e-12)
    use_catalog()
    with pytest.raises(tk.UnknownEntryError, match="unknown hardware 'my-chip'"):
        tk.hardware("my-chip")


def test_load_catalog_catalog_path_argument(user_dir):
    cat = load_catalog(catalog_path=[user_dir])
    assert {"my-chip", "h100-sxm"} <= set(cat.hardware) and "my-model" in cat.models
    assert cat.search_path == (user_dir.resolve(),)
    assert "my-chip" not in load_catalog(catalog_path=()).hardware


def test_environment_variable_and_cache_follow_the_path(user_dir, tmp_path, monkeypatch,
                                                         make_user_catalog):
    other = make_user_catalog(tmp_path / "other", "hardware_catalog", "model_catalog")
    for p in (other / "hardware_catalog").glob("my-chip.toml"):
        p.rename(p.with_name("other-chip.toml"))
        p.with_name("other-chip.toml").write_text(p.with_name("other-chip.toml").read_text()
                                                  .replace('"my-chip"', '"other-chip"')
                                                  .replace('"my-accelerator"', '"other-acc"'))
    (other / "model_catalog" / "my-model.toml").unlink()
    (other / "hardware_catalog" / "sources.toml").unlink()   # cites the user folder's source
    assert "my-chip" not in default_catalog().hardware
    monkeypatch.setenv(CATALOG_ENV, f"{other}{os.pathsep}{user_dir}")
    assert search_path() == (other.resolve(), user_dir.resolve())
    assert tk.hardware("other-chip").id == "other-chip"
    assert tk.model("my-model").id == "my-model"
    monkeypatch.setenv(CATALOG_ENV, str(tmp_path / "missing"))
    with pytest.raises(tk.CatalogError, match="TOKENOMICS_CATALOG: user catalog folder"):
        tk.hardware("h100")
    monkeypatch.delenv(CATALOG_ENV)
    assert "other-chip" not in default_catalog().hardware


def test_cli_global_catalog_option(user_dir, capsys):
    assert main(["--catalog", str(user_dir), "decode", "my-model", "my-chip", "--batch", "1",
                 "--context", "1024"]) == 0
    assert "my-model on 1 x my-chip" in capsys.readouterr().err  # the title is prose: stderr
    assert main(["--catalog", str(user_dir), "hardware", "my-chip"]) == 0
    assert "acme-contract-2026" in capsys.readouterr().out
    # The option lasts one call.
    assert main(["hardware", "my-chip"]) == 2
    assert "unknown hardware 'my-chip'" in capsys.readouterr().err
    assert main(["--catalog", "/nonexistent-folder", "hardware"]) == 2
    assert "--catalog: user catalog folder" in capsys.readouterr().err


def _copy_bundled_h100(user_dir: Path, extra: str = "") -> Path:
    text = (catalog_dir("hardware_catalog") / "h100-sxm.toml").read_text()
    p = user_dir / "hardware" / "h100-sxm.toml"
    p.write_text(extra + text.replace('aliases = ["h100", "h100-sxm5"]', "aliases = []") + CONTRACT)
    return p


def test_duplicate_id_is_an_error(user_dir):
    p = _copy_bundled_h100(user_dir)
    with pytest.raises(tk.CatalogError, match=re.escape(str(p)) +
                       r": field id: hardware 'h100-sxm' is already defined by .*overrides = true"):
        load_catalog(catalog_path=[user_dir])


def test_overrides_true_replaces_the_bundled_entry(user_dir):
    p = _copy_bundled_h100(user_dir, "overrides = true\n")
    h = load_catalog(catalog_path=[user_dir]).hardware["h100-sxm"]
    assert h.path == str(p)
    assert [x.tier for x in h.prices][-1] == "long-term-contract"


def test_overrides_must_name_an_existing_entry_and_be_a_boolean(user_dir):
    p = user_dir / "hardware" / "my-chip.toml"
    p.write_text("overrides = true\n" + p.read_text())
    with pytest.raises(tk.CatalogError, match=r"my-chip.toml: field overrides: no earlier"):
        load_catalog(catalog_path=[user_dir])
    p.write_text(p.read_text().replace("overrides = true", 'overrides = "yes"'))
    with pytest.raises(tk.CatalogError, match=r"my-chip.toml: field overrides: must be true"):
        load_catalog(catalog_path=[user_dir])


def test_broken_user_file_names_file_and_field(user_dir):
    p = user_dir / "hardware" / "my-chip.toml"
    p.write_text(p.read_text().replace('value = 3.35, unit = "TB/s"',
                                       'value = 3.35, unit = "TFLOP/s"'))
    with pytest.raises(tk.CatalogError, match=re.escape(str(p)) +
                       r": field memory.bandwidth.unit"):
        load_catalog(catalog_path=[user_dir])


def test_user_model_file_validated_like_bundled(user_dir):
    p = user_dir / "models" / "my-model.toml"
    p.write_text(p.read_text().replace('source = "model-card-llama-3.1", note = "dense',
                                       'source = "my-notes", note = "dense'))
    with pytest.raises(tk.CatalogError, match=re.escape(str(p)) +
                       r": field official.active_params.source: .*not in the bibliography"):
        load_catalog(catalog_path=[user_dir])


def test_source_keys_and_aliases_may_not_shadow_bundled_ones(user_dir):
    bib = user_dir / "hardware" / "sources.toml"
    bib.write_text(BIB + BIB.replace("acme-contract-2026", "glennklockwood-h100"))
    with pytest.raises(tk.CatalogError, match="source key defined twice"):
        load_catalog(catalog_path=[user_dir])
    bib.write_text(BIB)
    p = user_dir / "hardware" / "my-chip.toml"
    p.write_text(p.read_text().replace('aliases = ["my-accelerator"]', 'aliases = ["h200"]'))
    with pytest.raises(tk.CatalogError, match=r"my-chip.toml: field aliases: 'h200' already"):
        load_catalog(catalog_path=[user_dir])


def test_folder_layout_errors(tmp_path, user_dir):
    with pytest.raises(tk.CatalogError, match="not found"):
        use_catalog(tmp_path / "absent")
    (tmp_path / "empty").mkdir()
    with pytest.raises(tk.CatalogError, match="holds neither a hardware/ nor a models/"):
        use_catalog(tmp_path / "empty")
    (user_dir / "hardware_catalog").mkdir()
    with pytest.raises(tk.CatalogError, match="both hardware/ and hardware_catalog/"):
        load_catalog(catalog_path=[user_dir])


def test_a_folder_that_is_not_a_path_is_named():
    with pytest.raises(tk.CatalogError, match="is a path .* got int -1"):
        tk.use_catalog(-1)
