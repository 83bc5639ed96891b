"""Lazy attribute tables (core/lazy.py): PEP 562 ``__getattr__``/``__dir__`` built by attach()."""

from __future__ import annotations

import sys
import textwrap

import pytest

import tokenomics
from tokenomics.core import checks, dtypes, units
from tokenomics.core.lazy import attach


def _table(moved=None):
    ns: dict = {}
    get, dir_, all_ = attach(
        "tokenomics.core", ns,
        {"dtype": ".dtypes", "fmt": "tokenomics.core.checks"},   # relative and absolute
        ("units",), moved=moved)
    return ns, get, dir_, all_


def test_a_name_resolves_to_the_object_in_its_module():
    ns, get, _, _ = _table()
    assert get("dtype") is dtypes.dtype        # ".dtypes" is relative to the package
    assert get("fmt") is checks.fmt            # an absolute module path works too
    assert get("units") is units               # a listed submodule is reachable


def test_a_resolved_name_is_cached_in_the_namespace():
    ns, get, _, _ = _table()
    assert "dtype" not in ns
    value = get("dtype")
    # After the first lookup the package's globals hold it: Python finds it there next time
    # and never calls __getattr__ again.
    assert ns["dtype"] is value
    get("units")
    assert ns["units"] is units


def test_dir_and_all():
    _, _, dir_, all_ = _table(moved={"old": "tokenomics.core.units"})
    assert dir_() == ["dtype", "fmt", "units"]      # names and submodules, sorted
    assert all_ == ["dtype", "fmt"]                 # only the public names
    assert "old" not in dir_()                      # old paths resolve but are not advertised


def test_an_unknown_name_raises_attribute_error_naming_it():
    _, get, _, _ = _table()
    with pytest.raises(AttributeError, match=r"module 'tokenomics.core' has no attribute "
                                             r"'nope'"):
        get("nope")
    assert not hasattr(tokenomics, "no_such_name_anywhere")


def test_a_moved_module_alias_resolves():
    ns, get, _, _ = _table(moved={"old_units": "tokenomics.core.units"})
    assert get("old_units") is units and ns["old_units"] is units
    # The package's own release-0.1 path: tokenomics.dtypes now lives in tokenomics.core.
    assert tokenomics.dtypes is dtypes


def test_a_stage_table_matches_its_modules():
    import tokenomics.core as core

    assert core.dtype is dtypes.dtype
    assert {"dtype", "checks", "units"} <= set(dir(core))
    assert "dtype" in core.__all__ and "checks" not in core.__all__


def test_a_module_is_imported_only_when_a_name_is_first_used(tmp_path, monkeypatch):
    pkg = tmp_path / "lazy_probe_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(textwrap.dedent("""
        from tokenomics.core.lazy import attach
        __getattr__, __dir__, __all__ = attach(__name__, globals(), {"VALUE": ".heavy"})
    """))
    (pkg / "heavy.py").write_text("VALUE = 42\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        import lazy_probe_pkg

        assert "lazy_probe_pkg.heavy" not in sys.modules
        assert lazy_probe_pkg.VALUE == 42
        assert "lazy_probe_pkg.heavy" in sys.modules
        assert lazy_probe_pkg.__all__ == ["VALUE"]
    finally:
        for name in ("lazy_probe_pkg", "lazy_probe_pkg.heavy"):
            sys.modules.pop(name, None)


def test_a_module_split_in_several_resolves_through_each():
    from tokenomics.core.lazy import MovedModule

    ns, get, _, _ = _table(moved={"old_helpers": ("tokenomics.core.checks",
                                                  "tokenomics.core.dtypes")})
    old = get("old_helpers")
    assert isinstance(old, MovedModule) and ns["old_helpers"] is old
    assert old.fmt is checks.fmt            # found in the first new home
    assert old.dtype is dtypes.dtype        # found in the second
    assert {"fmt", "dtype", "counts", "formats"} <= set(dir(old))
    with pytest.raises(AttributeError, match=r"has no attribute 'nope'"):
        old.nope  # noqa: B018
