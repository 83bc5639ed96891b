"""docs/tutorial.md runs as written, and its stated numbers hold."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

TUTORIAL = Path(__file__).parents[1] / "docs" / "tutorial.md"


@pytest.fixture(scope="module")
def ns():
    blocks = re.findall(r"```python\n(.*?)```", TUTORIAL.read_text(), re.S)
    assert len(blocks) >= 7
    env: dict = {}
    for code in blocks:
        exec(compile(code, str(TUTORIAL), "exec"), env)   # noqa: S102 - our own page
    return env


def test_the_tutorial_numbers(ns):
    assert ns["ridge"] == pytest.approx(989.4e12 / 3.35e12)               # 295.3 FLOP/B
    assert ns["kv"] == 2 * 80 * 8 * 128 * 2                               # 327,680 B
    assert ns["fit"].fits and ns["most"] >= 32
    assert ns["tpot"] >= ns["step"]                     # TPOT carries the arriving prefills
    assert ns["forecast"].tokens_per_s_per_user < ns["steps"].tokens_per_s_per_user.iloc[-1]
    assert ns["per_mtok"] == pytest.approx(2.00 / 3600 / 1000 * 1e6)      # $0.5556
    assert ns["book"].suffix == ".xlsx"
    assert ns["racks"] == 586                 # floor(100e6 / 1.2 / 142e3), NVIDIA's 142 kW
    # 5,274 replicas of 8, each down u = 1 - 1/(1 + 8 x 1.973e-5 x 24) = 0.38% of the time:
    # the 99.9% quantile of the number down lies between the mean (20) and 4 sd above it
    mean = 5274 * (1 - 1 / (1 + 8 * 419 / (16384 * 54 * 24) * 24))
    assert mean < ns["spares"] < mean + 4 * mean**0.5
    # the waterfall adds up, and at $60,000 over 4 years the purchase outweighs the power:
    # 60,000 / 4 / 8,760 = $1.71 a GPU-hour against 142 kW / 72 x 1.2 x $0.08 = $0.19
    w = ns["parts"].iloc[:, 0]
    assert w.sum() == pytest.approx(float(ns["owned"].with_spares(
        0.999, repair_hours=24.0).usd_per_mtok))
    assert w["device_capital"] / w["electricity"] == pytest.approx(
        (60_000 / 4 / 8760) / (142e3 / 72 / 1000 * 1.2 * 0.08))
    # the plan: ceil(1e7 / r_H100) H100s in 2024; from 2025 the growth goes to the GB200
    # (its cost per token, (50,000 / 0.85 / 5.5 / 8760 + 1.667 kW x 1.2 x $0.0892) / r_GB200,
    # is below the H100's), and every year serves at least its demand
    plan, gens = ns["plan"], ns["gens"]
    r_h, r_g = gens[0].tokens_per_s_per_device, gens[1].tokens_per_s_per_device
    g = plan.by_generation.set_index(["year", "generation"])
    assert g.loc[(2024, "h100"), "bought"] == math.ceil(1e7 / r_h)
    assert g.loc[(2025, "gb200"), "bought"] == math.ceil((7e7 - math.ceil(1e7 / r_h) * r_h)
                                                         / r_g)
    assert all(g.loc[(y, "h100"), "bought"] == 0 for y in (2025, 2026, 2027))
    assert (plan.capacity_tokens_per_s >= plan.demand_tokens_per_s).all()
    assert plan.margin[0] > 0 > plan.margin[-1]
