"""The bibliography and the sourced quantity: how every data file names where a number is from.

Every data file of the library is read through :func:`read_toml` (a missing, unreadable or
malformed file is a :class:`~tokenomics.core.errors.CatalogError` naming it), cites the keys of
a bibliography (``sources.toml``, read by :func:`load_sources` into :class:`Source` entries), and
states each number as an inline table ``{value, unit, source[, note]}`` that
:func:`sourced_quantity` converts once to a canonical unit (B, B/s, FLOP/s, s, W, USD) after
checking the unit string, its dimension, the source key and a plausible range. The schema
engine (:mod:`tokenomics.data.schema`) and every loader build on these.

This is the only module where pint parses a data file's unit strings.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tokenomics.core.errors import CatalogError, UnitError
from tokenomics.core.units import is_bit_unit, parse_quantity

_PKG = Path(__file__).resolve().parent.parent  # the tokenomics package folder
#: Words a file may write instead of a quantity no source gives.
UNAVAILABLE = ("not published", "not supported")
_SOURCE_KINDS = ("datasheet", "documentation", "config", "model-card", "paper", "secondary",
                 "announcement", "team-figure", "assumption")
_DIRECTIONS = ("bidirectional", "per_direction")


def catalog_dir(name: str) -> Path:
    """Folder of a bundled catalog (``"hardware_catalog"`` or ``"model_catalog"``).

    Looks in the installed package's ``_data`` folder first, then at the source checkout's
    root.

    Raises
    ------
    CatalogError
        If neither exists (a broken install).
    """
    for cand in (_PKG / "_data" / name, _PKG.parent / name):
        if cand.is_dir():
            return cand
    raise CatalogError(f"bundled catalog {name!r} not found in {_PKG / '_data'} or "
                       f"{_PKG.parent}; reinstall the package")


@dataclass(frozen=True)
class Source:
    """One bibliography entry."""

    key: str
    title: str
    publisher: str
    url: str
    accessed: str
    kind: str
    note: str = ""


def read_toml(path: Path) -> dict[str, Any]:
    """Parse one data file; :class:`CatalogError` naming it when it is missing, unreadable or
    not valid TOML (every data file of the library is read through here)."""
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise CatalogError(f"{path}: not found") from None
    except OSError as exc:
        raise CatalogError(f"{path}: cannot be read ({exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise CatalogError(f"{path}: not valid TOML ({exc})") from None
    except UnicodeDecodeError as exc:
        raise CatalogError(f"{path}: not UTF-8 text (byte {exc.start}: {exc.reason}); save "
                           f"the file as UTF-8") from None
    except RecursionError:
        raise CatalogError(f"{path}: nested too deeply to be a data file (arrays or tables "
                           f"inside one another thousands of levels deep)") from None


def load_sources(paths: list[Path]) -> dict[str, Source]:
    """Read and validate bibliography files (``sources.toml``); keys must be unique.

    Raises
    ------
    CatalogError
        On a missing/unknown field, a bad ``kind`` or a key defined twice.
    """
    out: dict[str, Source] = {}
    required = ("title", "publisher", "url", "accessed", "kind")
    for path in paths:
        data = read_toml(path)
        for key, entry in data.items():
            where = f"{path}: [{key}]"
            if not isinstance(entry, Mapping):
                raise CatalogError(f"{where}: a source must be a table")
            unknown = set(entry) - set(required) - {"note"}
            if unknown:
                raise CatalogError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}; "
                                   f"allowed: {', '.join(required)}, note")
            for f in required:
                if not isinstance(entry.get(f), str) or not entry[f].strip():
                    raise CatalogError(f"{where}.{f}: missing or empty (a string is required)")
            if entry["kind"] not in _SOURCE_KINDS:
                raise CatalogError(f"{where}.kind: {entry['kind']!r} is not one of "
                                   f"{', '.join(_SOURCE_KINDS)}")
            if key in out:
                raise CatalogError(f"{where}: source key defined twice")
            out[key] = Source(key=key, note=str(entry.get("note", "")),
                              **{f: str(entry[f]) for f in required})
    return out


def data_sources(folder: Path) -> dict[str, Source]:
    """Bibliography of a data folder: every ``sources*.toml`` in it, merged (keys unique)."""
    return load_sources(sorted(folder.glob("sources*.toml")))


def sourced_quantity(raw: Any, field: str, path: Path | str, to: str, lo: float, hi: float,
                     sources: Mapping[str, Source], *, link: bool = False) -> float:
    """Parse one ``{value, unit, source[, note]}`` table of a data file into ``to`` units.

    Parameters
    ----------
    raw : Mapping
        The inline table as read by ``tomllib``.
    field : str
        Its dotted name, for error messages (e.g. ``"tiers.dram.bandwidth"``).
    path : Path or str
        The file, for error messages.
    to : str
        Canonical unit, e.g. ``"B/s"``, ``"USD/B/s"``, ``"USD/hour"``.
    lo, hi : float
        Plausible range in ``to`` units.
    sources : Mapping
        Bibliography (see :func:`data_sources`); the ``source`` key must be in it.
    link : bool
        A bandwidth that states ``direction`` (``"per_direction"`` or ``"bidirectional"``):
        returned per direction (a bidirectional figure halved), the range checked on that.

    Returns
    -------
    float
        The value in ``to``: ``value x factor(unit -> to)``, halved where ``link`` and the
        table says ``direction = "bidirectional"``.

    Raises
    ------
    CatalogError
        ``"<path>: field <field>[.key]: ..."``: not a table, an unknown or missing key, a value
        that is not a finite number, a unit string that is not plain or of the wrong dimension,
        a direction that is neither word, an unresolved source, an implausible value.
    """
    def fail(sub: str, msg: str) -> CatalogError:
        return CatalogError(f"{path}: field {field}{'.' + sub if sub else ''}: {msg}")

    if not isinstance(raw, Mapping):
        if isinstance(raw, str):
            raise fail("", f"a number is required here, got {raw!r}")
        raise fail("", "must be an inline table {value, unit, source}")
    required = ("value", "unit", "source") + (("direction",) if link else ())
    unknown = sorted(set(raw) - set(required) - {"note"})
    if unknown:
        raise fail(unknown[0], f"unknown key; allowed keys here: {', '.join(required)}, note")
    for k in required:
        if k not in raw:
            raise fail(k, "required key is missing")
    v = raw["value"]
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise fail("value", f"must be a finite number, got {v!r}")
    if not isinstance(raw["unit"], str):
        raise fail("unit", "must be a unit string such as \"TB/s\"")
    try:
        x = parse_quantity(float(v), raw["unit"], to)
    except UnitError as exc:
        raise fail("unit", str(exc)) from None
    if link:
        if raw["direction"] not in _DIRECTIONS:
            raise fail("direction", f"{raw['direction']!r} is not one of {', '.join(_DIRECTIONS)}")
        if raw["direction"] == "bidirectional":
            x = x / 2.0  # store per direction
    if not (lo <= x <= hi):
        raise fail("", f"implausible value {v} {raw['unit']} (= {x:.4g} {to}); expected "
                       f"between {lo:.3g} and {hi:.3g} {to}")
    key = raw["source"]
    if not isinstance(key, str) or key not in sources:
        raise fail("source", f"source {key!r} is not in the bibliography (sources.toml)")
    return x


def counts_bits(raw: Any) -> str | None:
    """The unit string of a ``{value, unit, ...}`` table when it counts bits (``"Tb/s"``,
    ``"Gbit"``), else None: a field quoted in bytes reads such a unit as a typo 8x off."""
    u = raw.get("unit") if isinstance(raw, Mapping) else None
    return u if isinstance(u, str) and is_bit_unit(u) else None
