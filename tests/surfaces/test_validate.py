"""Every data-file kind, corrupted on purpose, is caught by name (issue 13, must show)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import tokenomics as tk
from tokenomics.calibration.corpus import load_corpus
from tokenomics.calibration.measurements import load_measurements
from tokenomics.data.catalog import catalog_dir, load_catalog
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
    ("wrong type", ("measured = 3065.6", 'measured = "fast"'), "field measured"),
    ("negative", ("measured = 3065.6", "measured = -3065.6"), "field measured"),
    ("absurd", ("measured = 3065.6", "measured = 3e30"), "field measured"),
    ("missing field", ('metric = "tokens_per_s_per_device"\nmeasured = 3065.6',
                       "measured = 3065.6"), "missing field"),
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
