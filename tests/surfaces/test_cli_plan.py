"""``tokenomics plan`` (tokenomics.surfaces.cli_plan): the table it writes equals the library's
plan, per-device flags align, and bad arguments get one-line errors."""

from __future__ import annotations

import math

import pandas as pd
import pytest

import tokenomics as tk
from tokenomics.surfaces.cli import main

BASE = ["plan", "llama-3.1-8b", "hgx-h100", "gb200-nvl72", "--start-year", "2025",
        "--years", "3", "--start-tokens-per-s", "1e6", "--growth", "7"]


def test_the_table_is_the_librarys_plan(tmp_path):
    out = tmp_path / "plan.csv"
    assert main([*BASE, "--purchase", "25000", "50000", "--sell", "0.6", "--no-rent",
                 "--csv", str(out)]) == 0
    got = pd.read_csv(out)
    rates = [float(tk.steady_state(tk.Deployment("llama-3.1-8b", hw), 64, 2048, 256)
                   .output_tokens_per_s_per_device) for hw in ("h100-sxm", "gb200")]
    gens = [tk.generation_of("hgx-h100", rates[0], purchase_usd=25000.0, rent=False),
            tk.generation_of("gb200-nvl72", rates[1], purchase_usd=50000.0, rent=False)]
    want = tk.fleet_plan(tk.demand_path(1e6, 7.0, 3), gens, 2025, price_usd_per_mtok=0.6)
    assert got["year"].tolist() == [2025, 2026, 2027]
    assert got["bought_devices"].tolist() == want.bought_devices.tolist()
    assert got["usd_per_mtok"].to_numpy() == pytest.approx(want.usd_per_mtok, rel=1e-9)
    # every year serves its demand: 1e6, 7e6, 4.9e7 token/s
    assert (got["capacity_tokens_per_s"] >= [1e6, 7e6, 4.9e7]).all()
    assert got["rented_devices"].sum() == 0


def test_by_generation_and_one_price_for_every_device(tmp_path):
    out = tmp_path / "gen.csv"
    assert main([*BASE, "--purchase", "40000", "--by-generation", "--csv", str(out)]) == 0
    got = pd.read_csv(out)
    assert set(got["generation"]) == {"hgx-h100", "gb200-nvl72"}
    assert len(got) == 2 * 3 and math.isfinite(got["owned"].sum())


@pytest.mark.parametrize("extra, match", [
    (["--purchase", "1", "2", "3"], "one value or one per device"),
    (["--first-year", "2024", "2025", "2026"], "one value or one per device"),
    (["--growth", "nope"], "unknown growth_per_year preset"),
    (["--price-decline", "nope"], "unknown price_decline preset"),
    (["--years", "0"], "years"),
    (["--life", "0"], "life_years"),
    (["--concurrency", "0"], "--concurrency"),
    (["--first-year", "2030", "--no-rent", "--purchase", "1"], "year 2025"),
])
def test_bad_arguments_one_line(extra, match, capsys):
    assert main([*BASE, *extra]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("tokenomics: error:")
    assert pytest.importorskip("re").search(match, err[0])
