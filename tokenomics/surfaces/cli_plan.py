"""The ``tokenomics plan`` command's work: a fleet plan over years from the command line.

:func:`plan_table` reads the parsed arguments, times the model on each device or system
with :func:`~tokenomics.steady_state` (a progress bar over them on a terminal), makes each a
:func:`~tokenomics.economics.fleet.generation_of` and runs
:func:`~tokenomics.economics.fleet.fleet_plan`; :func:`tokenomics.surfaces.cli.cmd_plan`
prints and writes the table it returns.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import pandas as pd

from tokenomics.core.errors import TokenomicsError, UnknownEntryError

__all__ = ["plan_table"]


def _per_device(a: argparse.Namespace) -> list[Any]:
    """Each listed device's value of a per-device flag (one value: every device)."""
    n = len(a.devices)
    out = []
    for flag in ("purchase", "first_year"):
        v = getattr(a, flag)
        if v is None:
            out.append([None] * n)
        elif len(v) in (1, n):
            out.append(list(v) * (n if len(v) == 1 else 1))
        else:
            raise TokenomicsError(f"--{flag.replace('_', '-')} takes one value or one per "
                                  f"device ({n}), got {len(v)}")
    return out


def _growth(v: str) -> Any:
    try:
        return float(v)
    except ValueError:
        return v                       # a preset name, checked by demand_path


def plan_table(a: argparse.Namespace, deployment: Callable[[argparse.Namespace], Any]
               ) -> tuple[pd.DataFrame, str, Any]:
    """(table, title, the first deployment) of ``tokenomics plan``'s arguments ``a``;
    ``deployment`` builds a Deployment from ``a`` (its ``hardware`` set per device)."""
    import tokenomics as tk
    from tokenomics.data.systems import system
    from tokenomics.surfaces.terminal import ProgressBar

    if a.concurrency < 1 or a.input < 1 or a.output < 1:
        raise TokenomicsError("--concurrency, --input and --output must be >= 1")
    purchases, years = _per_device(a)
    gens, first = [], None
    with ProgressBar("devices timed") as step:
        for i, dev in enumerate(a.devices):
            try:
                a.hardware = system(dev).device.id
            except UnknownEntryError:
                a.hardware = dev                 # a hardware id (or the catalog's error)
            d = deployment(a)
            first = first or d
            ss = tk.steady_state(d, a.concurrency, a.input, a.output)
            if not bool(ss.fits):
                raise tk.DoesNotFitError(f"{a.concurrency} sequences of {a.input} + "
                                         f"{a.output} tokens do not fit {d.n_devices} x "
                                         f"{d.hardware.id}; lower --concurrency or widen --tp")
            gens.append(tk.generation_of(dev, float(ss.output_tokens_per_s_per_device),
                                         first_year=years[i], purchase_usd=purchases[i],
                                         rent=not a.no_rent))
            step(i + 1, len(a.devices), dev)
    demand = tk.demand_path(a.start_tokens_per_s, _growth(a.growth), a.years)
    plan = tk.fleet_plan(demand, gens, a.start_year,
                         tk.FleetTerms(life_years=a.life, utilisation=a.utilisation,
                                       pue=a.pue),
                         price_usd_per_mtok=a.sell, price_decline=_growth(a.price_decline))
    df = plan.by_generation if a.by_generation else plan.to_frame()
    from tokenomics.economics.fleet import GROWTH_PRESETS
    g = GROWTH_PRESETS.get(a.growth, _growth(a.growth))
    rates = ", ".join(f"{g.name} {g.tokens_per_s_per_device:.4g}" for g in gens)
    title = (f"plan: {first.model.id} from {a.start_year}, {a.years} years, demand "
             f"{a.start_tokens_per_s:g} tok/s growing {g:.3g}x a year; output tok/s per "
             f"device: {rates}")
    return df, title, first
