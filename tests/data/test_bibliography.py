"""The bibliography and the sourced quantity (data/bibliography.py)."""

from __future__ import annotations

import pytest

import tokenomics as tk
from tokenomics.data.bibliography import (
    UNAVAILABLE,
    catalog_dir,
    counts_bits,
    data_sources,
    load_sources,
    read_toml,
    sourced_quantity,
)

SRC = {"s": object()}


def test_quantities_convert_to_canonical_units_by_hand():
    # NVLink 4: 900 GB/s summed over both directions = 450e9 B/s each way
    assert sourced_quantity({"value": 900, "unit": "GB/s", "direction": "bidirectional",
                             "source": "s"}, "bw", "f.toml", "B/s", 1e8, 1e14, SRC,
                            link=True) == 450e9
    # a 400 Gb/s NIC, quoted per direction: 400e9 / 8 = 50e9 B/s
    assert sourced_quantity({"value": 400, "unit": "Gb/s", "direction": "per_direction",
                             "source": "s"}, "nic", "f.toml", "B/s", 1e8, 1e14, SRC,
                            link=True) == 50e9
    # 80 GiB = 80 x 2^30 = 85,899,345,920 B
    assert sourced_quantity({"value": 80, "unit": "GiB", "source": "s", "note": "x"}, "cap",
                            "f.toml", "B", 1e8, 1e14, SRC) == 85_899_345_920


@pytest.mark.parametrize("raw, where, why", [
    ({"value": 1, "unit": "TB/s"}, "field q.source", "required key is missing"),
    ({"value": 1, "unit": "TB/s", "source": "s", "colour": 1}, "field q.colour", "unknown key"),
    ({"value": float("nan"), "unit": "TB/s", "source": "s"}, "field q.value", "finite number"),
    ({"value": True, "unit": "TB/s", "source": "s"}, "field q.value", "finite number"),
    ({"value": 1, "unit": 3, "source": "s"}, "field q.unit", "unit string"),
    ({"value": 1, "unit": "TB", "source": "s"}, "field q.unit", "dimension"),
    ({"value": 1, "unit": "TB/s/0", "source": "s"}, "field q.unit", "plain unit string"),
    ({"value": 1e9, "unit": "TB/s", "source": "s"}, "field q", "implausible value"),
    ({"value": 1, "unit": "TB/s", "source": "t"}, "field q.source", "not in the bibliography"),
    ("fast", "field q", "a number is required"),
    ([1, 2], "field q", "inline table"),
])
def test_a_bad_quantity_names_its_file_and_field(raw, where, why):
    with pytest.raises(tk.CatalogError) as exc:
        sourced_quantity(raw, "q", "f.toml", "B/s", 1e8, 1e14, SRC)
    assert str(exc.value).startswith("f.toml: ") and where in str(exc.value) \
        and why in str(exc.value), str(exc.value)


def test_bits_are_told_from_bytes():
    assert counts_bits({"unit": "Tb/s"}) == "Tb/s" and counts_bits({"unit": "Gbit"}) == "Gbit"
    assert counts_bits({"unit": "TB/s"}) is None and counts_bits("not published") is None
    assert UNAVAILABLE == ("not published", "not supported")


def test_files_and_bibliographies_are_read_or_named(tmp_path):
    with pytest.raises(tk.CatalogError, match="not found"):
        read_toml(tmp_path / "none.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("x = = 1\n")
    with pytest.raises(tk.CatalogError, match="not valid TOML"):
        read_toml(bad)
    src = tmp_path / "sources.toml"
    src.write_text('[a]\ntitle = "t"\npublisher = "p"\nurl = "u"\naccessed = "2026"\n'
                   'kind = "rumour"\n')
    with pytest.raises(tk.CatalogError, match=r"\[a\]\.kind: 'rumour' is not one of"):
        load_sources([src])
    # the bundled bibliographies resolve, and a folder's sources*.toml merge
    assert (catalog_dir("hardware_catalog") / "h100-sxm.toml").exists()
    assert "oci-price-list-gpu-2026-09" in tk.sources()
    assert len(data_sources(catalog_dir("price_catalog"))) > 0
