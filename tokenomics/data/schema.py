"""Data-file schemas: each field of a file kind declared once, checked by one engine.

A :class:`Schema` lists a file kind's fields (:class:`Field`): a sourced quantity
``{value, unit, source[, note]}`` with its canonical unit and plausible range (the unit's
dimension is checked by :func:`~tokenomics.data.bibliography.sourced_quantity` before the value
is converted; a field quoted in bytes refuses a unit that counts bits), a text, a quantity
that may be ``"not published"`` (or another stated word such as ``"unbounded"``), one of a
fixed set of words, a whole number, a bibliography key, a nested table, an array of tables,
a table kept verbatim for its own reader (a model's ``config.json``); whether each is
required; what it means. :func:`read_entries` checks one file against its schema and names
file, entry and field in every :class:`~tokenomics.core.errors.CatalogError`; cross-field
rules are functions of the parsed entry (:attr:`Schema.rules`). :func:`check_record` does
the same for a CSV row of plain fields.

The kinds themselves (hardware, model, system, the price catalog's files, the measurements
and the calibration corpus) are declared in :mod:`tokenomics.data.kinds`; their loaders,
``python -m tokenomics.surfaces.validate`` and the schema page all read those declarations,
so a field's unit, range and meaning are written in one place.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from tokenomics.core.errors import CatalogError
from tokenomics.data.bibliography import Source, counts_bits, read_toml, sourced_quantity

#: What a field may hold: a sourced quantity, a quantity or ``"not published"``, a text, one
#: of a fixed set of words, a whole number, a plain number (in the field's unit, for files
#: whose rows cite one source each), true/false, a list of texts, a nested table (its own
#: :class:`Schema`), an array of such tables, a bibliography key, a table kept as written for
#: its own reader.
FIELD_KINDS = ("quantity", "quantity_or_unpublished", "text", "choice", "count", "number",
               "flag", "texts", "table", "tables", "source", "verbatim")


@dataclass(frozen=True)
class Field:
    """One field of a data file.

    Attributes
    ----------
    name : str
    kind : str
        One of :data:`FIELD_KINDS`.
    unit : str
        Canonical unit a quantity is converted to (``"s"``, ``"USD/Mtok"``, ``"count"``);
        its dimension is the dimension the file's unit must have. Empty for a text.
    lo, hi : float
        Plausible range in ``unit`` (inclusive).
    required : bool
    meaning : str
        What the field is, for the schema page.
    words : tuple of str
        For a ``"choice"``, the words it may be; for a quantity, words it may hold instead of
        a number (kept as the word, e.g. ``"unbounded"``).
    whole : bool
        A quantity that must be a whole number (a ``{value, unit = "count", source}`` count).
    directed : bool
        A bandwidth quantity that states ``direction = "per_direction"`` or
        ``"bidirectional"``; the value is kept per direction (a bidirectional figure halved).
    sub : Schema or None
        For a ``"table"`` or ``"tables"``, the nested table's schema.
    in_bytes : bool
        A quantity quoted in bytes (a memory, a bandwidth into memory): a unit that counts
        bits (``"Tb/s"``) is refused before conversion, not read 8x off.
    """

    name: str
    kind: str = "quantity"
    unit: str = ""
    lo: float = -math.inf
    hi: float = math.inf
    required: bool = True
    meaning: str = ""
    words: tuple[str, ...] = ()
    whole: bool = False
    directed: bool = False
    sub: Schema | None = None
    in_bytes: bool = False

    def __post_init__(self) -> None:
        if self.kind not in FIELD_KINDS:
            raise ValueError(f"field {self.name}: kind {self.kind!r} not in {FIELD_KINDS}")
        if (self.kind in ("table", "tables")) != (self.sub is not None):
            raise ValueError(f"field {self.name}: a table field (and only one) has a sub-schema")


@dataclass(frozen=True)
class Schema:
    """A data-file kind: where it lives, its fields, how entries are laid out, its rules.

    Attributes
    ----------
    kind : str
        Name of the kind (``"journey"``).
    file : str
        Path of the bundled file relative to the package data (``"price_catalog/journey.toml"``).
    fields : tuple of Field
    array : str
        Name of the array of tables that holds one entry each (``"price"`` for
        ``[[price]]``); empty: the file's top level is the one entry.
    rules : tuple of callables
        ``rule(values, fail)`` for each parsed entry: ``values`` maps field -> parsed value,
        ``fail(field, message)`` returns the CatalogError to raise.
    meaning : str
        One line for the schema page.
    min_entries : int
        For an array kind, the fewest entries a file must hold (an empty price list is a
        truncated file, not a catalog without prices).
    """

    kind: str
    file: str
    fields: tuple[Field, ...]
    array: str = ""
    rules: tuple[Callable[..., None], ...] = field(default=(), compare=False)
    meaning: str = ""
    min_entries: int = 0

    def get(self, name: str) -> Field:
        """The declared field ``name``."""
        return next(f for f in self.fields if f.name == name)


def _fail(path: Path, where: str) -> Callable[[str, str], CatalogError]:
    def fail(name: str, message: str) -> CatalogError:
        dotted = f"{where}.{name}" if where else name
        return CatalogError(f"{path}: field {dotted}: {message}")
    return fail


#: Field kinds held as plain TOML values (no {value, unit, source} table).
_PLAIN = ("text", "choice", "count", "number", "flag")


def _plain_value(f: Field, v: Any, fail: Callable[[str, str], CatalogError]) -> Any:
    """A text, choice, whole number, number or flag checked against its field."""
    if f.kind in ("text", "choice"):
        if not isinstance(v, str):
            raise fail(f.name, f"must be a string, got {v!r}")
        if f.kind == "choice" and v not in f.words:
            if len(f.words) == 1:       # a fixed word: say why it is the only one
                raise fail(f.name, f"must be \"{f.words[0]}\" ({f.meaning}), got {v!r}")
            raise fail(f.name, f"{v!r} is not one of {', '.join(f.words)}")
        return v
    if f.kind == "flag":
        if not isinstance(v, bool):
            raise fail(f.name, f"must be true or false, got {v!r}")
        return v
    whole = f.kind == "count"
    if whole and f.lo == f.hi and v != f.lo:   # a format version
        raise fail(f.name, f"must be {f.lo:g}, got {v!r}")
    if isinstance(v, bool) or not isinstance(v, (int,) if whole else (int, float)) \
            or not math.isfinite(v) or not f.lo <= v <= f.hi:
        what = "a whole number" if whole else "a number"
        top = f" to {f.hi:g}" if math.isfinite(f.hi) else ""
        raise fail(f.name, f"must be {what} from {f.lo:g}{top}"
                           f"{' ' + f.unit if f.unit and f.unit != 'count' else ''}, got {v!r}")
    return v


def _texts(f: Field, v: Any, fail: Callable[[str, str], CatalogError]) -> list[str]:
    if not isinstance(v, list) or not all(isinstance(x, str) and x.strip() for x in v):
        raise fail(f.name, f"must be a list of non-empty strings, got {v!r}")
    return v


def _quantity(f: Field, v: Mapping[str, Any], path: Path, dotted: str,
              sources: Mapping[str, Source], fail: Callable[[str, str], CatalogError]) -> Any:
    """A sourced quantity in the field's unit: per direction where ``directed``, an int where
    ``whole``."""
    if f.directed and (not isinstance(v, Mapping) or v.get("direction") not in (
            "per_direction", "bidirectional")):
        got = v.get("direction") if isinstance(v, Mapping) else None
        raise fail(f.name + ".direction", 'a bandwidth needs direction = "per_direction" '
                   'or "bidirectional"' if got is None else
                   f"{got!r} is not one of bidirectional, per_direction")
    if f.in_bytes and (u := counts_bits(v)):
        # 3.35 Tb/s would be read as 0.42 TB/s: 8x too slow
        raise fail(f.name + ".unit", f"{u!r} counts bits: {f.name} is quoted in bytes (write "
                                     f"e.g. 'TB/s' or 'GiB'; 1 B = 8 b)")
    x = sourced_quantity(v, dotted, path, f.unit, f.lo, f.hi, sources, link=f.directed)
    if f.whole:
        if x != int(x):
            raise fail(f.name, f"must be a whole number, got {x!r}")
        return int(x)
    return x


def _field_value(f: Field, v: Any, path: Path, dotted: str, sources: Mapping[str, Source],
                 fail: Callable[[str, str], CatalogError], srcs: dict[str, str],
                 notes: dict[str, str]) -> Any:
    """One present field's value (:func:`check_entry`); a quantity's source and note, and a
    nested table's (under ``<field>.``), go into ``srcs`` and ``notes``."""
    if f.kind in _PLAIN:
        return _plain_value(f, v, fail)
    if f.kind == "texts":
        return _texts(f, v, fail)
    if f.kind == "table":
        got = check_entry(cast(Schema, f.sub), v, path, dotted, sources)
        srcs.update({f"{f.name}.{k}": x for k, x in got.pop("_sources").items()})
        notes.update({f"{f.name}.{k}": x for k, x in got.pop("_notes").items()})
        return got
    if f.kind == "tables":
        if not isinstance(v, list):
            raise fail(f.name, f"must be an array of tables ([[{f.name}]])")
        rows = [check_entry(cast(Schema, f.sub), e, path, f"{dotted}[{i}]", sources)
                for i, e in enumerate(v)]
        for i, got in enumerate(rows):
            srcs.update({f"{f.name}[{i}].{k}": x for k, x in got.pop("_sources").items()})
            notes.update({f"{f.name}[{i}].{k}": x for k, x in got.pop("_notes").items()})
        return rows
    if f.kind == "source":
        if not isinstance(v, str) or v not in sources:
            raise fail(f.name, f"source {v!r} is not in the bibliography (sources.toml)")
        srcs[f.name] = v
        return v
    if f.kind == "verbatim":
        if not isinstance(v, Mapping):
            raise fail(f.name, f"must be a table ({f.meaning})")
        return dict(v)
    if f.kind == "quantity_or_unpublished" and v == "not published":
        return None
    if isinstance(v, str) and v in f.words:
        return v
    if isinstance(v, str):
        allowed = ", ".join(repr(w) for w in (*f.words, *(
            ("not published",) if f.kind == "quantity_or_unpublished" else ())))
        raise fail(f.name, f"string {v!r} is not allowed; use a {{value, unit, source}} "
                           f"table{' or ' + allowed if allowed else ''}")
    x = _quantity(f, v, path, dotted, sources, fail)
    srcs[f.name] = v["source"]
    notes[f.name] = str(v.get("note", ""))
    return x


def check_entry(schema: Schema, raw: Any, path: Path, where: str,
                sources: Mapping[str, Source]) -> dict[str, Any]:
    """One entry checked against its schema: field -> value (quantities in their unit, None
    for ``"not published"``), plus ``"_sources"`` and ``"_notes"``: field -> a quantity's
    source key and note.

    Raises
    ------
    CatalogError
        Naming the file, the entry (``where``, e.g. ``price[3]``) and the field: not a table,
        an unknown or missing key, a wrong type, a unit of the wrong dimension or not a plain
        unit string, an unresolved source, an implausible value, a broken rule.
    """
    fail = _fail(path, where)
    if not isinstance(raw, Mapping):
        raise CatalogError(f"{path}: field {where or '(top level)'}: must be a table of "
                           f"{', '.join(f.name for f in schema.fields)}")
    names = [f.name for f in schema.fields]
    unknown = sorted(set(raw) - set(names))
    if unknown:
        raise fail(unknown[0], f"unknown key; allowed keys here: {', '.join(names)}")
    out: dict[str, Any] = {}
    srcs: dict[str, str] = {}
    notes: dict[str, str] = {}
    for f in schema.fields:
        if f.name not in raw:
            if f.required:
                raise fail(f.name, "required key is missing")
            out[f.name] = None
            continue
        dotted = f"{where}.{f.name}" if where else f.name
        out[f.name] = _field_value(f, raw[f.name], path, dotted, sources, fail, srcs, notes)
    out["_sources"], out["_notes"] = srcs, notes
    for rule in schema.rules:
        rule(out, fail)
    return out


def read_entries(schema: Schema, path: Path | str, sources: Mapping[str, Source]
                 ) -> list[dict[str, Any]]:
    """Every entry of one file of ``schema``'s kind, checked (:func:`check_entry`).

    A file whose top level is its one entry gives a list of one; an array kind gives its
    entries in file order (at least :attr:`Schema.min_entries` of them).

    Raises
    ------
    CatalogError
        As :func:`check_entry`; and for an array kind, a top-level key other than the array
        or an array that is not a list of tables.
    """
    path = Path(path)
    data = read_toml(path)
    if not schema.array:
        return [check_entry(schema, data, path, "", sources)]
    other = sorted(set(data) - {schema.array})
    if other:
        raise CatalogError(f"{path}: field {other[0]}: unknown key; the file holds "
                           f"[[{schema.array}]] entries only")
    items = data.get(schema.array, [])
    if not isinstance(items, list):
        raise CatalogError(f"{path}: field {schema.array}: must be an array of tables "
                           f"([[{schema.array}]])")
    if len(items) < schema.min_entries:
        raise CatalogError(f"{path}: field {schema.array}: the file holds {len(items)} "
                           f"[[{schema.array}]] entries, at least {schema.min_entries} needed "
                           f"(an empty or truncated file?)")
    return [check_entry(schema, e, path, f"{schema.array}[{i}]", sources)
            for i, e in enumerate(items)]


def _from_text(f: Field, v: str) -> Any:
    """A CSV cell as the value its field's kind holds (raises ValueError)."""
    if f.kind == "count":
        return int(v)
    if f.kind == "number":
        return float(v)
    if f.kind == "flag":
        if v not in ("True", "False"):
            raise ValueError("write True or False")
        return v == "True"
    return v


def check_record(schema: Schema, raw: Mapping[str, str | None], path: Path, where: str
                 ) -> dict[str, Any]:
    """One CSV record (column -> text) checked against a schema of plain fields: field ->
    value (None for an absent optional column; an empty optional text stays "").

    Raises
    ------
    CatalogError
        ``"<path>: <where>: field <name>: ..."``: a missing column, a cell that is not its
        kind (``'two' is not valid``), out of range or not one of its words, a broken rule.
    """
    def fail(name: str, message: str) -> CatalogError:
        return CatalogError(f"{path}: {where}: field {name}: {message}")

    out: dict[str, Any] = {}
    for f in schema.fields:
        v = raw.get(f.name)
        if v is None:
            if f.required:
                raise fail(f.name, "missing (the column is required)")
            out[f.name] = None
            continue
        v = v.strip()
        try:
            typed = _from_text(f, v)
        except ValueError as exc:
            raise fail(f.name, f"{v!r} is not valid ({exc})") from None
        out[f.name] = _plain_value(f, typed, fail)
    for rule in schema.rules:
        rule(out, fail)
    return out
