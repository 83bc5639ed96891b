"""``python -m tokenomics.catalog``: validate every data file the package reads, by kind.

The issue tracker's name for the check; a thin launcher of
:func:`tokenomics.surfaces.validate.main` (hardware and model catalogs, systems, API prices,
assumptions, KV tiers, bound-check rows, the corpus and the calibration, each loaded through
the library's own loader; exit status 1 naming the file and field when one fails). It sits
above the stages, as ``tokenomics.spec`` does.
"""

from __future__ import annotations

from tokenomics.surfaces.validate import main

__all__ = ["main"]

if __name__ == "__main__":
    raise SystemExit(main())
