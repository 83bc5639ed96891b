"""``python -m tokenomics.spec [--catalog DIR ...]``: check the catalog entries against the
physics laws (a thin launcher of :func:`tokenomics.surfaces.spec.main`; ``--help`` lists the
options, ``--list`` the laws).

This module sits above the stages (it belongs to none): it only hands over to the surfaces
stage's runner.
"""

from __future__ import annotations

from tokenomics.surfaces.spec import main

__all__ = ["main"]

if __name__ == "__main__":
    raise SystemExit(main())
