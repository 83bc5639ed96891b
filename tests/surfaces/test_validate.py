"""Every data-file kind, corrupted on purpose, is caught by name (issue 13, must show)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import tokenomics as tk
from tokenomics.calibration.corpus import load_corpus
from tokenomics.calibration.measurements import load_measurements
from tokenomics.data.bibliography import catalog_dir
from tokenomics.data.catalog import load_catalog
from tokenomics.serving.tiers import read_kv_tiers_file
from tokenomics.surfaces.validate import main, validate_data

ROOT = Path(__file__).resolve().parents[2]

# (file kind, mutation, what the error must say). A mutation is (old text, new text) applied
# once, or b"..." for raw bytes replacing the whole file.
HARDWARE = [
    ("missing field", ('name = "NVIDIA H100 SXM5 80GB"\n', ""), "name"),
    ("wrong type", ("value = 3.35, unit = \"TB/s\"", "value = \"fast\", unit = \"TB/s\""),
     "bandwidth"),
    ("negative", ("value = 3.35, unit = \"TB/s\"", "value = -3.35, unit = \"TB/s\""),
     "bandwidth"),
    ("absurd", ("value = 3.35, unit = \"TB/s\"", "value = 3.35e12, unit = \"TB/s\""),
     "bandwidth"),
    ("unit typo", ("value = 3.35, unit = \"TB/s\"", "value = 3.35, unit = \"TB/ss\""),
     "bandwidth"),
    ("bad TOML", ('vendor = "NVIDIA"', 'vendor = "NVIDIA'), "not valid TOML"),
    ("bad encoding", b'id = "\xff"\n', "not UTF-8"),
    # issue 25: each was accepted silently
    ("bits for bytes", ("value = 3.35, unit = \"TB/s\"", "value = 3.35, unit = \"Tb/s\""),
     "bandwidth"),                                                        # 8x slow
    ("per-minute price", ('unit = "USD/hour"', 'unit = "USD/minute"'), r"prices\[0\]\.unit"),
    ("fractional domain", ("domain_size = { value = 8,", "domain_size = { value = 7.5,"),
     "domain_size"),                                                      # truncated to 7
]


def _mutate(src: Path, dst: Path, m) -> None:
    if isinstance(m, bytes):
        dst.write_bytes(m)
        return
    old, new = m
    text = src.read_text()
    assert old in text, old
    dst.write_text(text.replace(old, new, 1))


@pytest.mark.parametrize("what, m, match", HARDWARE, ids=[h[0] for h in HARDWARE])
def test_hardware_file_corruptions_are_caught_by_name(tmp_path, what, m, match):
    hw = tmp_path / "hw"
    shutil.copytree(catalog_dir("hardware_catalog"), hw)
    _mutate(hw / "h100-sxm.toml", hw / "h100-sxm.toml", m)
    with pytest.raises(tk.CatalogError, match=match) as exc:
        load_catalog(hw, catalog_dir("model_catalog"))
    assert "h100-sxm.toml" in str(exc.value)


def test_model_file_duplicate_id_is_caught(tmp_path):
    md = tmp_path / "models"
    shutil.copytree(catalog_dir("model_catalog"), md)
    shutil.copy(md / "llama-3.1-8b.toml", md / "llama-3.1-8b-copy.toml")
    with pytest.raises(tk.CatalogError, match="llama-3.1-8b"):
        load_catalog(catalog_dir("hardware_catalog"), md)


MEASURED = [
    ("wrong type", ("measured = 3065.6", 'measured = "fast"'), r"field row\[0\]\.measured"),
    ("negative", ("measured = 3065.6", "measured = -3065.6"), r"field row\[0\]\.measured"),
    ("absurd", ("measured = 3065.6", "measured = 3e30"), r"field row\[0\]\.measured"),
    ("missing field", ('metric = "tokens_per_s_per_device"\nmeasured = 3065.6',
                       "measured = 3065.6"), r"field row\[0\]\.metric: required key"),
    # issue 25: the schema engine now reads this file; each was accepted before
    ("fractional degree", ("tp = 2\n", "tp = 2.5\n"), r"field row\[0\]\.tp: must be a whole"),
    ("text degree", ("tp = 2\n", 'tp = "two"\n'), r"field row\[0\]\.tp"),
    ("unknown format", ('weight_dtype = "fp8"', 'weight_dtype = "fp9"'),
     r"field row\[0\]\.weight_dtype"),
    ("flag as text", ('id = "B01"', 'id = "B01"\nreserved = "yes"'),
     r"field row\[0\]\.reserved: must be true or false"),
    ("duplicate id", ('id = "B02"', 'id = "B01"'), "appears twice"),
    ("bad TOML", ('id = "B01"', 'id = "B01'), "not valid TOML"),
    ("bad encoding", b'id = "\xff"\n', "not UTF-8"),
]


@pytest.mark.parametrize("what, m, match", MEASURED, ids=[x[0] for x in MEASURED])
def test_measurement_file_corruptions_are_caught_by_name(tmp_path, what, m, match):
    p = tmp_path / "measured.toml"
    _mutate(ROOT / "measurements" / "measured.toml", p, m)
    with pytest.raises(tk.CatalogError, match=match) as exc:
        load_measurements(p, include_reserved=True)
    assert "measured.toml" in str(exc.value)


CORPUS = [
    ("wrong type", (",3062.72,", ",fast,"), "field measured"),
    ("negative", (",3062.72,", ",-3062.72,"), "field measured"),
    ("absurd", (",3062.72,", ",3e30,"), "field measured"),
    ("unit typo", ("offline_tok_s_per_device,3062.72", "offline_tok_s_per_dev,3062.72"),
     "field metric"),
    ("duplicate id", ("P002,", "P001,"), "appears twice"),
    ("bad encoding", b"id,model\n\xff\xfe,x\n", "not UTF-8"),
    # an empty corpus passed the validator and failed in `tokenomics calibrate` (issue 25)
    ("empty", b"", "holds no rows"),
    ("header only", b"id,model,hardware\n", "holds no rows"),
    ("unknown compute format", (",mxfp4,mxfp8,", ",mxfp4,fp3,"), "field compute_dtype"),
    ("unknown weight format", (",colocated,bf16,fp8,8192,", ",colocated,bf15,fp8,8192,"),
     "field weight_dtype"),
]


@pytest.mark.parametrize("what, m, match", CORPUS, ids=[x[0] for x in CORPUS])
def test_corpus_corruptions_are_caught_by_name(tmp_path, what, m, match):
    p = tmp_path / "corpus.csv"
    _mutate(ROOT / "measurements" / "corpus.csv", p, m)
    with pytest.raises(tk.CatalogError, match=match) as exc:
        load_corpus(p, include_reserved=True)
    assert "corpus.csv" in str(exc.value)


CALIBRATION = [
    ("wrong type", "mbu = ", 'mbu = "high"  # ', "must be a number"),
    ("interval reversed", "\nall = [", "\nall = [2.0, 0.5]  # [", "interval.all"),
    ("missing field", "overlap = ", "# overlap = ", "overlap: required key is missing"),
    ("absurd", "mfu = ", "mfu = 7.0  # ", "mfu must be in"),
]


@pytest.mark.parametrize("what, old, new, match", CALIBRATION, ids=[c[0] for c in CALIBRATION])
def test_calibration_file_corruptions_are_caught_by_name(tmp_path, monkeypatch, what, old,
                                                         new, match):
    import tokenomics.calibration.fitting as cal_mod

    p = tmp_path / "calibrated.toml"
    p.write_text((ROOT / "measurements" / "calibrated.toml").read_text().replace(old, new, 1))
    monkeypatch.setattr(cal_mod, "calibration_path", lambda: p)
    cal_mod.committed.cache_clear()
    try:
        with pytest.raises(tk.CatalogError, match=match) as exc:
            cal_mod.committed()
        assert "calibrated.toml" in str(exc.value)
    finally:
        cal_mod.committed.cache_clear()


TIERS = [
    ("unit typo", ('unit = "TB", source = "tier-nvidia-dgx-basepod',
                   'unit = "TBB", source = "tier-nvidia-dgx-basepod'), "capacity"),
    ("negative", ("capacity = { value = 2, unit", "capacity = { value = -2, unit"), "capacity"),
    ("bad TOML", ("schema = 1", "schema = = 1"), "not valid TOML"),
]


@pytest.mark.parametrize("what, m, match", TIERS, ids=[x[0] for x in TIERS])
def test_kv_tier_file_corruptions_are_caught_by_name(tmp_path, what, m, match):
    folder = tmp_path / "prices"
    shutil.copytree(catalog_dir("price_catalog"), folder)
    _mutate(folder / "kv_tiers.toml", folder / "kv_tiers.toml", m)
    with pytest.raises(tk.CatalogError, match=match) as exc:
        read_kv_tiers_file(folder)
    assert "kv_tiers.toml" in str(exc.value)


def test_the_bundled_data_validates_whole(capsys):
    t = validate_data()
    assert set(t.kind) == {"catalogs", "systems", "api_prices", "assumptions", "kv_tiers",
                           "journey", "measurements", "corpus", "calibration"}
    assert t.ok.all(), t[~t.ok].detail.tolist()
    assert main([]) == 0
    assert "ok: corpus: 1185 corpus rows" in capsys.readouterr().out


# issue 25: model fields that disagree with each other, each refused at load naming the field
MODEL = [
    ("hidden not a multiple of heads", ("hidden_size = 4096", "hidden_size = 4097"),
     "hidden_size"),
    ("zero head width", ("num_attention_heads = 32", "num_attention_heads = 32\nhead_dim = 0"),
     "head_dim"),
    ("fractional layers", ("num_hidden_layers = 32", "num_hidden_layers = 32.5"),
     "num_hidden_layers"),
    ("stated total 1000x the config", ("total_params  = { value = 8e9,",
                                       "total_params  = { value = 8e12,"),
     r"official\.total_params"),
    ("bad TOML", ('id = "llama-3.1-8b"', 'id = "llama-3.1-8b'), "not valid TOML"),
]


@pytest.mark.parametrize("what, m, match", MODEL, ids=[x[0] for x in MODEL])
def test_model_file_corruptions_are_caught_by_name(tmp_path, what, m, match):
    md = tmp_path / "models"
    shutil.copytree(catalog_dir("model_catalog"), md)
    _mutate(md / "llama-3.1-8b.toml", md / "llama-3.1-8b.toml", m)
    with pytest.raises(tk.CatalogError, match=match) as exc:
        load_catalog(catalog_dir("hardware_catalog"), md)
    assert "llama-3.1-8b.toml" in str(exc.value)


def _load_kind(kind: str, folder: Path) -> None:
    """Load one data-file kind from a copy of its bundled folder, through the library's loader."""
    from tokenomics.data.bibliography import data_sources
    from tokenomics.data.kinds import API_PRICES, ASSUMPTIONS
    from tokenomics.data.schema import read_entries
    from tokenomics.data.systems import parse_system_file
    from tokenomics.economics.journey import load_journey_defaults

    if kind in ("hardware", "system"):
        c = load_catalog(folder, catalog_dir("model_catalog"))
        parse_system_file(folder / "systems" / "hgx-h100.toml", c.sources, c.hardware)
    elif kind == "model":
        load_catalog(catalog_dir("hardware_catalog"), folder)
    elif kind == "api_prices":
        read_entries(API_PRICES, folder / "api_prices.toml", data_sources(folder))
    elif kind == "assumptions":
        read_entries(ASSUMPTIONS, folder / "assumptions.toml", data_sources(folder))
    elif kind == "journey":
        load_journey_defaults(folder)
    elif kind == "kv_tiers":
        read_kv_tiers_file(folder)
    elif kind == "measurements":
        load_measurements(folder / "measured.toml", include_reserved=True)
    else:
        load_corpus(folder / "corpus.csv", include_reserved=True)


#: kind -> (bundled folder, the file in it that is emptied or garbled)
KINDS = {
    "hardware": ("hardware_catalog", "h100-sxm.toml"),
    "system": ("hardware_catalog", "systems/hgx-h100.toml"),
    "model": ("model_catalog", "llama-3.1-8b.toml"),
    "api_prices": ("price_catalog", "api_prices.toml"),
    "assumptions": ("price_catalog", "assumptions.toml"),
    "journey": ("price_catalog", "journey.toml"),
    "kv_tiers": ("price_catalog", "kv_tiers.toml"),
    "measurements": ("measurements", "measured.toml"),
    "corpus": ("measurements", "corpus.csv"),
}


@pytest.mark.parametrize("content", [b"", b"   \n", b"\x00\x01", b"[[[", b"\xff\xfe"],
                         ids=["empty", "blank", "binary", "truncated", "not utf-8"])
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_an_empty_or_garbled_file_of_every_kind_is_refused_by_name(tmp_path, kind, content):
    # issue 25: an empty api_prices.toml and an empty measured.toml loaded as "no entries"
    where, name = KINDS[kind]
    folder = tmp_path / where
    shutil.copytree(catalog_dir(where) if where != "measurements" else ROOT / where, folder)
    (folder / name).write_bytes(content)
    with pytest.raises(tk.CatalogError) as exc:
        _load_kind(kind, folder)
    assert str(folder / name) in str(exc.value)
