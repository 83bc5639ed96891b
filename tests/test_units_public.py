"""Every public function takes Quantities of pint's application registry (issue 14, item 5).

For each public callable the fuzz table calls (``tests/test_fuzz_public.py``), the valid
call is run once while the library's unit boundary (``as_magnitude``) records which
arguments it converts and to which unit. Each such argument is then passed as a Quantity
of ``pint.get_application_registry()`` in that unit, and the call must return the same
numbers as with the plain figure: so a user's pint Quantities work wherever a number does.
"""

from __future__ import annotations

import importlib.util
import inspect
from pathlib import Path

import numpy as np
import pint
import pytest

import tokenomics as tk
import tokenomics.core.checks as checks
import tokenomics.core.units as units

# the fuzz table's valid calls (the tests run with --import-mode=importlib: load it by path)
_SPEC = importlib.util.spec_from_file_location(
    "_fuzz_table", Path(__file__).with_name("test_fuzz_public.py"))
_FUZZ = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(_FUZZ)
TARGETS, _numbers, _valid = _FUZZ.TARGETS, _FUZZ._numbers, _FUZZ._valid


def _required(name: str) -> dict:
    valid = _valid(name)
    sig = inspect.signature(getattr(tk, name))
    return {p.name: valid[p.name] for p in sig.parameters.values()
            if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and p.default is p.empty}


def _converted_arguments(name: str, kw: dict) -> dict[str, str]:
    """The call's arguments that the unit boundary converts, with their units."""
    from unittest import mock

    seen: dict[str, str] = {}
    real = units.as_magnitude

    def record(x, unit, arg="value"):
        if arg in kw and kw[arg] is x:
            seen.setdefault(arg, unit)
        return real(x, unit, arg)

    with mock.patch.object(checks, "as_magnitude", record), \
            mock.patch.object(units, "as_magnitude", record):
        try:
            getattr(tk, name)(**kw)
        except tk.TokenomicsError:
            return {}
    return seen


def _plain_number(v) -> bool:
    if isinstance(v, bool):
        return False
    if isinstance(v, (int, float, np.integer, np.floating)):
        return True
    return isinstance(v, np.ndarray) and v.dtype.kind in "fiu"


def _same(a, b) -> bool:
    x, y = list(_numbers(a)), list(_numbers(b))
    return len(x) == len(y) and np.allclose(x, y, rtol=1e-12, atol=0, equal_nan=True)


@pytest.fixture(scope="module")
def app():
    tk.registry()       # defines token, USD, flop... on the application registry
    return pint.get_application_registry()


def test_the_application_registry_knows_the_library_units(app):
    for unit in ("token", "USD/hour", "TFLOP/s", "TOPS", "GB/s", "GiB", "W", "s"):
        app.Quantity(1.0, unit)


def _plain_arguments() -> dict[str, dict[str, str]]:
    """Public callable -> its plain-number arguments that the unit boundary converts."""
    out = {}
    for name in TARGETS:
        kw = _required(name)
        conv = {a: u for a, u in _converted_arguments(name, kw).items()
                if _plain_number(kw[a])}
        if conv:
            out[name] = conv
    return out


CONVERTING = _plain_arguments()


@pytest.mark.parametrize("name", sorted(CONVERTING))
def test_each_public_function_takes_application_registry_quantities(name, app):
    kw = _required(name)
    fn = getattr(tk, name)
    base = fn(**kw)
    for arg, unit in CONVERTING[name].items():
        q = app.Quantity(kw[arg], unit)
        assert _same(fn(**{**kw, arg: q}), base), f"{name}({arg}={q!r}) differs"


def test_enough_functions_cross_the_unit_boundary():
    # the public callables whose numeric arguments the boundary converts: the check above
    # covers them all, and the set must not silently shrink
    assert len(CONVERTING) >= 45, sorted(CONVERTING)
