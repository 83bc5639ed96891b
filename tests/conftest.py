"""Test configuration: Hypothesis profiles ("ci" derandomized, "fuzz" many examples), and the
user-catalog fixtures shared by tests/data/test_user_catalog.py and tests/surfaces/test_spec.py."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("ci", derandomize=True, max_examples=60, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("fuzz", max_examples=10_000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("probe", max_examples=2_000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def _write_user_catalog(root: Path, hw_dir: str = "hardware", model_dir: str = "models", *,
                        aliases: str = "[]", hw_extra: str = "", bib: str = "") -> Path:
    """A user folder: 'my-chip' (the bundled H100 SXM file under a new id, ``hw_extra``
    appended, ``bib`` as its own bibliography) and 'my-model' (Llama 3.1 8B's config under a
    new id)."""
    from tokenomics.data.bibliography import catalog_dir

    (root / hw_dir).mkdir(parents=True)
    (root / model_dir).mkdir(parents=True)
    hw = (catalog_dir("hardware_catalog") / "h100-sxm.toml").read_text()
    hw = hw.replace('id = "h100-sxm"', 'id = "my-chip"').replace(
        'aliases = ["h100", "h100-sxm5"]', f"aliases = {aliases}")
    (root / hw_dir / "my-chip.toml").write_text(hw + hw_extra)
    if bib:
        (root / hw_dir / "sources.toml").write_text(bib)
    m = (catalog_dir("model_catalog") / "llama-3.1-8b.toml").read_text()
    m = re.sub(r"aliases = \[.*?\]\n", "aliases = []\n", m, flags=re.S)
    (root / model_dir / "my-model.toml").write_text(m.replace('id = "llama-3.1-8b"',
                                                             'id = "my-model"'))
    return root


@pytest.fixture()
def write_user_catalog():
    """The function that writes a user catalog folder (see :func:`_write_user_catalog`)."""
    return _write_user_catalog


@pytest.fixture()
def clean_search_path(monkeypatch):
    """No TOKENOMICS_CATALOG and no use_catalog folders during the test; restored after."""
    from tokenomics.data.user_catalog import CATALOG_ENV, use_catalog

    monkeypatch.delenv(CATALOG_ENV, raising=False)
    previous = use_catalog()
    yield
    use_catalog(*previous)
