"""Validate every data file the package reads, by kind, naming the file and field that fails.

``python -m tokenomics.surfaces.validate`` (or :func:`validate_data`) loads the hardware and
model catalogs with their bibliographies (each model's stated parameter counts checked against
its config, :func:`~tokenomics.data.counts.check_official_params`, also run at load), the systems (racks, pods), the API prices, the
cost-of-ownership assumptions, the KV tiers and retention defaults, the request-journey
defaults, the bound-check measurements, the measurement corpus (at least one row) and the
committed calibration, each through the loader the library itself uses, so a file that passes here is a file the library can use. ``python -m
tokenomics.data.catalog`` checks the catalogs alone.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import pandas as pd

from tokenomics.core.errors import CatalogError, TokenomicsError


def _catalogs() -> str:
    from tokenomics.data.catalog import load_catalog
    from tokenomics.data.counts import check_official_params

    c = load_catalog()
    for m in c.models.values():          # stated parameter counts against the configs
        check_official_params(m)
    return f"{len(c.hardware)} hardware, {len(c.models)} models, {len(c.sources)} sources"


def _systems() -> str:
    from tokenomics.data.systems import load_systems

    return f"{len(load_systems())} systems"


def _api_prices() -> str:
    from tokenomics.economics.api_prices import price_table

    return f"{len(price_table())} API prices"


def _assumptions() -> str:
    from tokenomics.economics.ownership import default_assumptions

    return f"{len(default_assumptions())} cost-of-ownership defaults"


def _kv_tiers() -> str:
    from tokenomics.serving.tiers import read_kv_tiers_file

    tiers, _ = read_kv_tiers_file(None)
    return f"{len(tiers)} KV tiers and the retention default"


def _measurements() -> str:
    from tokenomics.calibration.measurements import load_measurements

    return f"{len(load_measurements(include_reserved=True))} bound-check rows"


def _corpus() -> str:
    from tokenomics.calibration.corpus import load_corpus

    return f"{len(load_corpus(include_reserved=True))} corpus rows"


def _journey() -> str:
    from tokenomics.economics.journey import load_journey_defaults

    return f"{len(load_journey_defaults())} request-journey defaults"


def _calibration() -> str:
    from tokenomics.calibration.fitting import committed

    committed.cache_clear()
    c = committed()
    return f"calibration of {c.date} on {len(c.inputs)} rows"


#: Data kinds and the check that loads each.
CHECKS: dict[str, Callable[[], str]] = {
    "catalogs": _catalogs, "systems": _systems, "api_prices": _api_prices, "assumptions": _assumptions,
    "kv_tiers": _kv_tiers, "journey": _journey, "measurements": _measurements,
    "corpus": _corpus, "calibration": _calibration,
}


def validate_data() -> pd.DataFrame:
    """Load every data file kind; one row each with ``kind``, ``ok`` and ``detail``.

    Returns
    -------
    pandas.DataFrame
        ``detail`` is what was loaded, or the error naming file and field.

    Examples
    --------
    >>> bool(validate_data().ok.all())
    True
    """
    recs: list[dict[str, Any]] = []
    for kind, check in CHECKS.items():
        try:
            recs.append(dict(kind=kind, ok=True, detail=check()))
        except (CatalogError, TokenomicsError) as exc:
            recs.append(dict(kind=kind, ok=False, detail=str(exc)))
    return pd.DataFrame(recs, columns=["kind", "ok", "detail"])


def main(argv: list[str] | None = None) -> int:
    """Print one line per data kind; exit status 1 when any fails."""
    del argv
    t = validate_data()
    for r in t.itertuples():
        print(f"{'ok' if r.ok else 'INVALID'}: {r.kind}: {r.detail}",
              file=sys.stdout if r.ok else sys.stderr)
    return 0 if bool(t.ok.all()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
