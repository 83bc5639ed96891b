"""Load and validate the hardware and model catalogs (TOML files) and their bibliography.

This is the only module where pint parses strings: every ``{value, unit, source}`` is converted
once to canonical units (B, B/s, FLOP/s, s, W, USD) and the source key is checked against the
bibliography. Anything the loader cannot interpret is a :class:`~tokenomics.core.errors.CatalogError`
naming the file and the field: unknown or missing keys, a unit of the wrong dimension, an
unresolved source, an implausible value. The file format is documented in
``docs/catalog-schema.md``.

The bundled catalogs are found inside the installed package (``tokenomics/_data``) or, in a
source checkout, at the repository root (``hardware_catalog/``, ``model_catalog/``). User
catalog folders (``hardware/`` and ``models/``, each with its ``sources.toml``) are layered on
top of them (:mod:`tokenomics.data.user_catalog`: the ``TOKENOMICS_CATALOG`` environment
variable, then ``use_catalog``, the CLI's ``--catalog DIR``); see ``docs/user-catalogs.md``.

Run ``python -m tokenomics.data.catalog`` to validate every bundled file.
"""

from __future__ import annotations

import difflib
import math
import re
import sys
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from tokenomics.core.dtypes import PEAK_KEYS, dtype
from tokenomics.core.errors import CatalogError, TokenomicsError, UnitError, UnknownEntryError
from tokenomics.core.units import is_bit_unit, parse_quantity
from tokenomics.data.counts import check_official_params
from tokenomics.data.hf_config import model_from_hf_config
from tokenomics.data.peaks import parse_achievable, parse_quoted
from tokenomics.data.specs import PRICE_TIERS, SCALE_UP_TOPOLOGIES, Hardware, Model, Price
from tokenomics.data.user_catalog import catalog_generation, check_folders, search_path, user_subdir

_PKG = Path(__file__).resolve().parent.parent  # the tokenomics package folder
_ID_RE = re.compile(r"^[a-z0-9][a-z0-9.\-]*$")
_UNAVAILABLE = ("not published", "not supported")
_STATUSES = ("shipping", "announced", "unverified")
_TIERS = PRICE_TIERS
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


# --------------------------------------------------------------------------------------------
# Bibliography
# --------------------------------------------------------------------------------------------
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


# --------------------------------------------------------------------------------------------
# Field helpers
# --------------------------------------------------------------------------------------------
class _File:
    """Validation context for one catalog file."""

    def __init__(self, path: Path, sources: Mapping[str, Source]) -> None:
        self.path = path
        self.sources = sources
        self.used: dict[str, str] = {}
        self.unavailable: dict[str, str] = {}

    def err(self, field: str, msg: str) -> CatalogError:
        return CatalogError(f"{self.path}: field {field}: {msg}")

    def keys(self, table: Mapping[str, Any], field: str, required: tuple[str, ...],
             optional: tuple[str, ...] = ()) -> None:
        unknown = set(table) - set(required) - set(optional)
        if unknown:
            raise self.err(f"{field}.{sorted(unknown)[0]}" if field else sorted(unknown)[0],
                           f"unknown key; allowed keys here: "
                           f"{', '.join(required + optional)}")
        for k in required:
            if k not in table:
                raise self.err(f"{field}.{k}" if field else k, "required key is missing")

    def source(self, key: Any, field: str) -> str:
        if not isinstance(key, str) or key not in self.sources:
            raise self.err(field + ".source",
                           f"source {key!r} is not in the bibliography (sources.toml)")
        return key

    def quantity(self, table: Mapping[str, Any], name: str, field: str, to: str,
                 lo: float, hi: float, *, link: bool = False,
                 required: bool = True) -> float | None:
        """Parse ``table[name]`` into ``to`` units, or None when absent/not published."""
        f = f"{field}.{name}" if field else name
        if name not in table:
            if required:
                raise self.err(f, "required key is missing (write \"not published\" if no "
                                  "source gives it)")
            return None
        raw = table[name]
        if isinstance(raw, str):
            if raw not in _UNAVAILABLE:
                raise self.err(f, f"string {raw!r} is not allowed; use a "
                                  "{value, unit, source} table, \"not published\" or "
                                  "\"not supported\"")
            self.unavailable[f] = raw
            return None
        if not isinstance(raw, Mapping):
            raise self.err(f, "must be an inline table {value, unit, source}")
        allowed = ("value", "unit", "source", "note") + (("direction",) if link else ())
        self.keys(raw, f, ("value", "unit", "source") + (("direction",) if link else ()),
                  tuple(k for k in allowed if k not in ("value", "unit", "source", "direction")))
        v = raw["value"]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise self.err(f + ".value", f"must be a finite number, got {v!r}")
        if not isinstance(raw["unit"], str):
            raise self.err(f + ".unit", "must be a unit string such as \"TB/s\"")
        try:
            x = parse_quantity(float(v), raw["unit"], to)
        except UnitError as exc:
            raise self.err(f + ".unit", str(exc)) from None
        if link:
            d = raw["direction"]
            if d not in _DIRECTIONS:
                raise self.err(f + ".direction", f"{d!r} is not one of {', '.join(_DIRECTIONS)}")
            if d == "bidirectional":
                x = x / 2.0  # store per direction
        if not (lo <= x <= hi):
            raise self.err(f, f"implausible value {v} {raw['unit']} (= {x:.4g} {to}); "
                              f"expected between {lo:.3g} and {hi:.3g} {to}")
        self.used[f] = self.source(raw["source"], f)
        return x

    def string(self, table: Mapping[str, Any], name: str, field: str,
               required: bool = True) -> str:
        f = f"{field}.{name}" if field else name
        if name not in table:
            if required:
                raise self.err(f, "required key is missing")
            return ""
        if not isinstance(table[name], str):
            raise self.err(f, f"must be a string, got {table[name]!r}")
        return table[name]


# Plausibility bounds, canonical units.
_B = dict(
    peak=(1e11, 1e18),            # 0.1 TFLOP/s .. 1 EFLOP/s per device
    capacity=(1e8, 1e14),         # 100 MB .. 100 TB
    bandwidth=(1e10, 1e17),       # 10 GB/s .. 100 PB/s
    sram=(1e5, 1e12),
    link=(1e8, 1e14),             # per direction
    domain=(1, 1e6),
    latency=(1e-9, 1e-2),
    tdp=(1, 1e5),
    rent=(0.01, 1e4),             # USD per device-hour
    purchase=(10, 1e8),           # USD per device
    params=(1e6, 1e14),
)


def _table(f: _File, data: Mapping[str, Any], name: str, required: bool = True) -> dict[str, Any]:
    if name not in data:
        if required:
            raise f.err(name, "required section is missing")
        return {}
    t = data[name]
    if not isinstance(t, Mapping):
        raise f.err(name, "must be a table")
    return dict(t)


def _common_header(f: _File, data: Mapping[str, Any]) -> tuple[str, tuple[str, ...]]:
    if data.get("schema") != 1:
        raise f.err("schema", f"must be 1, got {data.get('schema')!r}")
    id_ = f.string(data, "id", "")
    if id_ != f.path.stem:
        raise f.err("id", f"{id_!r} must equal the file name stem {f.path.stem!r}")
    if not _ID_RE.match(id_):
        raise f.err("id", f"{id_!r} must be lowercase letters, digits, '.', '-'")
    aliases = data.get("aliases", [])
    if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
        raise f.err("aliases", "must be a list of strings")
    return id_, tuple(a.lower() for a in aliases)


# --------------------------------------------------------------------------------------------
# Hardware
# --------------------------------------------------------------------------------------------
_HW_REQUIRED = ("schema", "id", "name", "vendor", "status", "released", "compute", "memory")
_HW_OPTIONAL = ("aliases", "notes", "form_factor", "scale_up", "scale_out", "power", "prices",
                "overrides", "achievable", "quoted")
_DATE_RE = re.compile(r"^\d{4}(-\d{2}(-\d{2})?)?$")


def parse_hardware_file(path: Path, sources: Mapping[str, Source]) -> Hardware:
    """Parse and validate one hardware TOML file into a :class:`Hardware` (canonical units).

    The sections are read in file-schema order (header, ``[compute]``, ``[memory]``,
    ``[scale_up]``, ``[scale_out]``, ``[power]``, ``[[prices]]``), each by its own step; the
    first problem found is the one reported.

    Raises
    ------
    CatalogError
        Naming the file and the field for any problem.
    """
    f = _File(path, sources)
    data = read_toml(path)
    f.keys(data, "", _HW_REQUIRED, _HW_OPTIONAL)
    id_, aliases = _common_header(f, data)
    status = _hw_status(f, data)
    peaks = _hw_peaks(f, data)
    _check_peak_order(f, peaks)
    achievable = parse_achievable(f, data, peaks, _B["peak"])
    quoted = parse_quoted(f, data, _B["peak"])
    mem, cap, vis, bw, sram = _hw_memory(f, data)
    up, up_bw, dom, up_lat = _hw_scale_up(f, data)
    out, out_bw, out_lat = _hw_scale_out(f, data)
    tdp = _hw_power(f, data)
    prices = _hw_prices(f, data)
    try:
        return Hardware(
            id=id_, name=f.string(data, "name", ""), vendor=f.string(data, "vendor", ""),
            status=status, aliases=aliases, released=str(data.get("released", "")),
            peak_flop_per_s=peaks, mem_capacity_bytes=cap, mem_visible_bytes=vis,
            mem_bw_bytes_per_s=bw,
            memory_type=f.string(mem, "type", "memory"), sram_bytes=sram,
            scale_up_name=f.string(up, "name", "scale_up", required=False),
            scale_up_bw_bytes_per_s=up_bw,
            scale_up_domain_size=int(dom) if dom is not None else None,
            scale_up_latency_s=up_lat, scale_up_topology=up.get("topology", "switched"),
            scale_out_name=f.string(out, "name", "scale_out", required=False),
            scale_out_bw_bytes_per_s=out_bw, scale_out_latency_s=out_lat, tdp_w=tdp,
            prices=tuple(prices), unavailable=dict(f.unavailable), sources=dict(f.used),
            notes=str(data.get("notes", "")), path=str(path),
            achievable_flop_per_s=achievable, quoted_flop_per_s=quoted,
        )
    except TokenomicsError as exc:
        raise CatalogError(f"{path}: {exc}") from None


def _hw_status(f: _File, data: Mapping[str, Any]) -> str:
    """The entry's ``status``: one of ``shipping``, ``announced``, ``unverified``."""
    status = f.string(data, "status", "")
    if status not in _STATUSES:
        raise f.err("status", f"{status!r} is not one of {', '.join(_STATUSES)}")
    return status


def _hw_peaks(f: _File, data: Mapping[str, Any]) -> dict[str, float]:
    """The ``[compute]`` table: dense peak per compute key [FLOP/s], published ones only."""
    comp = _table(f, data, "compute")
    f.keys(comp, "compute", ("convention",), PEAK_KEYS)
    if comp["convention"] != "dense":
        raise f.err("compute.convention",
                    f"must be \"dense\" (halve a 2:4-sparsity figure), got {comp['convention']!r}")
    peaks: dict[str, float] = {}
    for k in PEAK_KEYS:
        v = f.quantity(comp, k, "compute", "flop/s", *_B["peak"], required=False)
        if v is not None:
            peaks[k] = v
    if not peaks:
        f.unavailable.setdefault("compute", "not published")
    return peaks


def _hw_memory(f: _File, data: Mapping[str, Any],
               ) -> tuple[dict[str, Any], float, float | None, float, float | None]:
    """The ``[memory]`` table: physical capacity [B], driver-visible memory [B] or None,
    bandwidth [B/s] and optional SRAM [B].

    ``capacity`` is the physical memory, ``visible`` (optional) what the driver reports as
    device memory (nvidia-smi ``memory.total``, ROCm's VRAM); visible may not exceed capacity.
    """
    mem = _table(f, data, "memory")
    f.keys(mem, "memory", ("type", "capacity", "bandwidth"), ("sram", "visible"))
    for k in ("capacity", "bandwidth", "visible", "sram"):
        u = mem.get(k, {}).get("unit") if isinstance(mem.get(k), Mapping) else None
        if isinstance(u, str) and is_bit_unit(u):
            # a device's memory is quoted in bytes: 3.35 Tb/s would be 0.42 TB/s, 8x too slow
            raise f.err(f"memory.{k}.unit", f"{u!r} counts bits: memory is quoted in bytes "
                                            f"(write e.g. 'TB/s' or 'GiB'; 1 B = 8 b)")
    cap = f.quantity(mem, "capacity", "memory", "B", *_B["capacity"])
    bw = f.quantity(mem, "bandwidth", "memory", "B/s", *_B["bandwidth"])
    if cap is None or bw is None:
        raise f.err("memory", "capacity and bandwidth must be published to model a device")
    vis = f.quantity(mem, "visible", "memory", "B", *_B["capacity"], required=False)
    if vis is not None and vis > cap:
        raise f.err("memory.visible", f"{vis:.6g} B exceeds the physical capacity {cap:.6g} B; "
                                      "visible is the driver's share of the physical memory")
    sram = f.quantity(mem, "sram", "memory", "B", *_B["sram"], required=False)
    return mem, cap, vis, bw, sram


def _hw_scale_up(f: _File, data: Mapping[str, Any],
                 ) -> tuple[dict[str, Any], float | None, float | None, float | None]:
    """The ``[scale_up]`` table, its per-direction bandwidth [B/s], domain size and latency [s]."""
    up = _table(f, data, "scale_up", required=False)
    if up:
        f.keys(up, "scale_up", ("name",), ("bandwidth", "domain_size", "latency", "topology",
                                          "note"))
        topo = up.get("topology", "switched")
        if topo not in SCALE_UP_TOPOLOGIES:
            raise f.err("scale_up.topology", f"{topo!r} is not one of "
                                             f"{', '.join(SCALE_UP_TOPOLOGIES)}")
    up_bw = f.quantity(up, "bandwidth", "scale_up", "B/s", *_B["link"], link=True,
                       required=False)
    dom = f.quantity(up, "domain_size", "scale_up", "count", *_B["domain"], required=False)
    if dom is not None and dom != math.floor(dom):
        raise f.err("scale_up.domain_size.value", f"must be a whole number of devices, got "
                                                  f"{up['domain_size']['value']!r}")
    up_lat = f.quantity(up, "latency", "scale_up", "s", *_B["latency"], required=False)
    return up, up_bw, dom, up_lat


def _hw_scale_out(f: _File, data: Mapping[str, Any],
                  ) -> tuple[dict[str, Any], float | None, float | None]:
    """The ``[scale_out]`` table, its per-direction NIC bandwidth [B/s] and latency [s]."""
    out = _table(f, data, "scale_out", required=False)
    if out:
        f.keys(out, "scale_out", ("name",), ("bandwidth", "latency", "note"))
    out_bw = f.quantity(out, "bandwidth", "scale_out", "B/s", *_B["link"], link=True,
                        required=False)
    out_lat = f.quantity(out, "latency", "scale_out", "s", *_B["latency"], required=False)
    return out, out_bw, out_lat


def _hw_power(f: _File, data: Mapping[str, Any]) -> float | None:
    """The ``[power]`` table's TDP [W], or None."""
    pw = _table(f, data, "power", required=False)
    if pw:
        f.keys(pw, "power", (), ("tdp",))
    return f.quantity(pw, "tdp", "power", "W", *_B["tdp"], required=False)


def _hw_prices(f: _File, data: Mapping[str, Any]) -> list[Price]:
    """The ``[[prices]]`` array, each entry validated by :func:`_hw_price`."""
    raw_prices = data.get("prices", [])
    if not isinstance(raw_prices, list):
        raise f.err("prices", "must be an array of tables ([[prices]])")
    return [_hw_price(f, p, f"prices[{i}]") for i, p in enumerate(raw_prices)]


def _hw_price(f: _File, p: Any, fld: str) -> Price:
    """One dated price: ``USD`` is a purchase [USD], any other unit a rental [USD/hour]."""
    if not isinstance(p, Mapping):
        raise f.err(fld, "must be a table")
    f.keys(p, fld, ("value", "unit", "tier", "date", "source"), ("note",))
    if p["tier"] not in _TIERS:
        raise f.err(fld + ".tier", f"{p['tier']!r} is not one of {', '.join(_TIERS)}")
    if p["unit"] not in ("USD", "USD/hour"):     # a per-minute rate would be 60x off
        raise f.err(fld + ".unit", f"{p['unit']!r} must be 'USD/hour' (a rental, per "
                    f"device-hour) or 'USD' (a purchase, per device); convert a rate per "
                    f"minute, second or month to per hour")
    per_hour = p["unit"] != "USD"
    to = "USD/hour" if per_hour else "USD"
    lo, hi = _B["rent"] if per_hour else _B["purchase"]
    usd = f.quantity({"x": {k: p[k] for k in ("value", "unit", "source")}}, "x", fld, to,
                     lo, hi)
    date = p["date"]
    if not isinstance(date, str) or not _DATE_RE.match(date):
        raise f.err(fld + ".date", f"{date!r} must be YYYY, YYYY-MM or YYYY-MM-DD")
    assert usd is not None  # a dict entry, never "not published"
    return Price(usd=usd, per_hour=per_hour, tier=p["tier"], date=date,
                 source=p["source"], note=str(p.get("note", "")))


def _check_peak_order(f: _File, peaks: Mapping[str, float]) -> None:
    """Cross-field plausibility: a lower-precision format is never slower on the same chip."""
    order = [k for k in ("bf16", "fp8", "fp4") if k in peaks]
    for a, b in zip(order, order[1:], strict=False):
        if peaks[b] < 0.99 * peaks[a]:
            raise f.err(f"compute.{b}", f"dense {b} peak {peaks[b]:.4g} FLOP/s is below {a} "
                                        f"{peaks[a]:.4g}: a sparse/dense mix-up?")


# --------------------------------------------------------------------------------------------
# Models
# --------------------------------------------------------------------------------------------
def parse_model_file(path: Path, sources: Mapping[str, Source]) -> Model:
    """Parse and validate one model TOML file into a :class:`Model`.

    Its stated ``official`` totals are checked against the parameters its ``[config]`` gives
    (:func:`tokenomics.data.counts.check_official_params`).

    The ``[config]`` table is interpreted by :func:`tokenomics.model_from_hf_config`, exactly
    as a user's ``config.json`` would be.

    Raises
    ------
    CatalogError
        Naming the file and the field for any problem.
    """
    f = _File(path, sources)
    data = read_toml(path)
    f.keys(data, "", ("schema", "id", "name", "family", "config_source", "official", "weights",
                      "config"), ("aliases", "released", "notes", "overrides"))
    id_, aliases = _common_header(f, data)
    cfg_src = f.source(data["config_source"], "config_source")
    off = _table(f, data, "official")
    f.keys(off, "official", ("total_params", "active_params"),
           ("active_include_embedding", "active_include_lm_head"))
    inc_emb = off.get("active_include_embedding", True)
    inc_head = off.get("active_include_lm_head", True)
    for key, v in (("active_include_embedding", inc_emb), ("active_include_lm_head", inc_head)):
        if not isinstance(v, bool):
            raise f.err(f"official.{key}", f"must be true or false, got {v!r}")
    total = f.quantity(off, "total_params", "official", "count", *_B["params"])
    active = f.quantity(off, "active_params", "official", "count", *_B["params"])
    w = _table(f, data, "weights")
    f.keys(w, "weights", ("dtype", "source"), ("expert_dtype", "embedding_dtype", "note"))
    for k in ("dtype", "expert_dtype", "embedding_dtype"):
        if k in w:
            try:
                dtype(w[k])
            except UnknownEntryError as exc:
                raise f.err(f"weights.{k}", str(exc)) from None
    f.used["weights"] = f.source(w["source"], "weights")
    cfg = _table(f, data, "config")
    try:
        m = model_from_hf_config(cfg, id=id_, name=f.string(data, "name", ""),
                                 weight_dtype=dtype(w["dtype"]).name,
                                 expert_dtype=w.get("expert_dtype"),
                                 embedding_dtype=w.get("embedding_dtype"),
                                 where=f"{path}: [config]")
    except TokenomicsError as exc:
        msg = str(exc)
        raise CatalogError(msg if str(path) in msg else f"{path}: [config]: {msg}") from None
    if total is not None and active is not None and active > total * 1.0001:
        raise f.err("official.active_params", "exceeds total_params")
    from dataclasses import replace

    m = replace(
        m, aliases=aliases, family=f.string(data, "family", ""),
        official_total_params=total, official_active_params=active,
        official_active_include_embedding=inc_emb, official_active_include_lm_head=inc_head,
        sources={"config": cfg_src, **f.used}, notes=str(data.get("notes", "")) +
        (("; " + m.notes) if m.notes else ""), path=str(path),
    )
    check_official_params(m)     # a stated total 1000x what [config] gives is a typo
    return m


# --------------------------------------------------------------------------------------------
# Loading and lookup
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Catalog:
    """Validated catalog contents: entries by id, aliases, bibliography.

    ``search_path`` lists the user catalog folders layered on the bundled (or given) folders,
    in the order they were read; an entry whose ``path`` lies under one of them is a user
    entry.
    """

    hardware: Mapping[str, Hardware]
    models: Mapping[str, Model]
    sources: Mapping[str, Source]
    hardware_aliases: Mapping[str, str]
    model_aliases: Mapping[str, str]
    search_path: tuple[Path, ...] = ()


def load_catalog(hardware_dir: Path | str | None = None,
                 model_dir: Path | str | None = None, *,
                 catalog_path: Iterable[Path | str] | None = None) -> Catalog:
    """Load and validate a hardware and a model catalog folder, plus user catalog folders.

    Parameters
    ----------
    hardware_dir, model_dir : path, optional
        The base folders (default: the bundled ``hardware_catalog`` and ``model_catalog``).
    catalog_path : iterable of path, optional
        User catalog folders read after the base folders, in order, each holding
        ``hardware/*.toml`` and/or ``models/*.toml`` with a ``sources.toml`` beside them.
        Default: :func:`search_path` (``TOKENOMICS_CATALOG``, then :func:`use_catalog`);
        ``()`` reads the base folders only.

    Returns
    -------
    Catalog

    Raises
    ------
    CatalogError
        On the first invalid file, naming it and the field, exactly as for a bundled file; on
        an alias that collides with another entry; on a user entry whose id is already defined
        by an earlier folder unless the file says ``overrides = true`` (then it replaces that
        entry), and on ``overrides = true`` with nothing to replace.
    """
    hdir = Path(hardware_dir) if hardware_dir else catalog_dir("hardware_catalog")
    mdir = Path(model_dir) if model_dir else catalog_dir("model_catalog")
    users = search_path() if catalog_path is None else check_folders(catalog_path, "catalog_path")
    layers = [(hdir, mdir)] + [(user_subdir(u, "hardware"), user_subdir(u, "models"))
                               for u in users]
    folders = [d for layer in layers for d in layer if d is not None]
    sources = load_sources([d / "sources.toml" for d in folders if (d / "sources.toml").exists()])
    hw: dict[str, Hardware] = {}
    models: dict[str, Model] = {}
    for h_dir, m_dir in layers:
        _read_folder(h_dir, hw, lambda p: parse_hardware_file(p, sources), "hardware")
        _read_folder(m_dir, models, lambda p: parse_model_file(p, sources), "model")
    return Catalog(hardware=hw, models=models, sources=sources,
                   hardware_aliases=_alias_map(hw, "hardware"),
                   model_aliases=_alias_map(models, "model"), search_path=users)


def _read_folder(folder: Path | None, into: dict[str, Any], parse: Any, what: str) -> None:
    """Parse every entry file of ``folder`` into ``into`` under the overrides rule."""
    if folder is None:
        return
    for p in sorted(folder.glob("*.toml")):
        if p.name == "sources.toml":
            continue
        entry = parse(p)
        overrides = read_toml(p).get("overrides", False)
        if not isinstance(overrides, bool):
            raise CatalogError(f"{p}: field overrides: must be true or false, got {overrides!r}")
        earlier = into.get(entry.id)
        if earlier is not None and not overrides:
            raise CatalogError(f"{p}: field id: {what} {entry.id!r} is already defined by "
                               f"{earlier.path}; choose another id, or write `overrides = "
                               "true` at the top of this file to replace that entry")
        if earlier is None and overrides:
            raise CatalogError(f"{p}: field overrides: no earlier {what} entry {entry.id!r} "
                               "to replace (bundled or in an earlier catalog folder); remove "
                               "`overrides` or correct the id")
        into[entry.id] = entry


def _alias_map(entries: Mapping[str, Any], what: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for id_, e in entries.items():
        for name in (id_, *e.aliases):
            key = _norm(name)
            if key in out and out[key] != id_:
                raise CatalogError(f"{e.path}: field aliases: {name!r} already names "
                                   f"{what} {out[key]!r}")
            out[key] = id_
    return out


def _norm(name: str) -> str:
    return name.strip().lower().replace("_", "-").replace(" ", "-")


@lru_cache(maxsize=8)
def _load_cached(path: tuple[Path, ...], _generation: int) -> Catalog:
    return load_catalog(catalog_path=path)


def default_catalog() -> Catalog:
    """The bundled catalogs plus the user folders of :func:`search_path`, validated.

    Loaded once per search path (an ``lru_cache`` keyed on the folders and on the count of
    :func:`~tokenomics.data.user_catalog.use_catalog` calls): changing ``TOKENOMICS_CATALOG``
    or calling ``use_catalog`` takes effect at the next lookup.
    """
    return _load_cached(search_path(), catalog_generation())


default_catalog.cache_clear = _load_cached.cache_clear  # type: ignore[attr-defined]


def _lookup(name: Any, table: Mapping[str, Any], aliases: Mapping[str, str], what: str) -> Any:
    if not isinstance(name, str):
        raise UnknownEntryError(f"{what} id must be a string, got {name!r}")
    key = _norm(name)
    if key in aliases:
        return table[aliases[key]]
    close = difflib.get_close_matches(key, list(aliases), n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else "."
    raise UnknownEntryError(f"unknown {what} {name!r}{hint} Known ids: "
                            f"{', '.join(sorted(table))}")


def hardware(name: str | Hardware, allow_quoted: bool = False) -> Hardware:
    """Look up an accelerator by id or alias (case-insensitive), e.g. ``"h100-sxm"``.

    A :class:`~tokenomics.data.systems.System` gives its device with the system's scale-up
    domain and wiring (``System.hardware``), so a Deployment may be built on a system.

    Parameters
    ----------
    name : str or Hardware or System
        A catalog id or alias; a Hardware passes through.
    allow_quoted : bool
        Read the device at its quoted compute figures of unknown convention where it has no
        dense peak (``[quoted]``; :mod:`tokenomics.data.peaks`): the entry's id then ends in
        ``-quoted``, so every result says so. Default False: dense peaks only.

    Returns
    -------
    Hardware
        The catalog entry (user catalog folders first, :func:`use_catalog`).

    Raises
    ------
    UnknownEntryError
        With the closest known ids.

    Examples
    --------
    >>> hardware("H100").mem_bw_bytes_per_s
    3350000000000.0
    """
    if not isinstance(allow_quoted, bool):
        raise TokenomicsError(f"allow_quoted must be True or False, got {allow_quoted!r}")
    if isinstance(name, Hardware):
        hw = name
    elif isinstance(as_hw := getattr(name, "hardware", None), Hardware):
        hw = as_hw                            # a System (tokenomics.data.systems) gives its own
    else:
        cat = default_catalog()
        hw = _lookup(name, cat.hardware, cat.hardware_aliases, "hardware")
    return hw.with_quoted_peaks() if allow_quoted else hw


def model(name: str | Model) -> Model:
    """Look up a model by id or alias (case-insensitive), e.g. ``"llama-3.1-70b"``.

    Parameters
    ----------
    name : str or Model
        A catalog id or alias; a Model passes through.

    Returns
    -------
    Model
        The catalog entry (user catalog folders first, :func:`use_catalog`).

    Raises
    ------
    UnknownEntryError
        With the closest known ids.

    Examples
    --------
    >>> model("deepseek-r1").id
    'deepseek-v3'
    """
    if isinstance(name, Model):
        return name
    cat = default_catalog()
    return _lookup(name, cat.models, cat.model_aliases, "model")


def sources() -> Mapping[str, Source]:
    """The merged bibliography of the bundled catalogs, by key."""
    return default_catalog().sources


def main(argv: list[str] | None = None) -> int:
    """Validate the bundled (or given) catalog folders; print a summary."""
    args = argv if argv is not None else sys.argv[1:]
    try:
        cat = load_catalog(*(args[:2] if args else ()))
    except CatalogError as exc:
        print(f"invalid catalog: {exc}", file=sys.stderr)
        return 1
    print(f"ok: {len(cat.hardware)} hardware, {len(cat.models)} models, "
          f"{len(cat.sources)} sources")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


# --------------------------------------------------------------------------------------------
# Other sourced data files (prices, tiers, assumptions)
# --------------------------------------------------------------------------------------------
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

    Raises
    ------
    CatalogError
        Naming the file and the field: not a table, unknown key, wrong dimension, unresolved
        source, implausible value.
    """
    f = _File(Path(path), sources)
    v = f.quantity({field.rsplit(".", 1)[-1]: raw}, field.rsplit(".", 1)[-1],
                   field.rsplit(".", 1)[0] if "." in field else "", to, lo, hi, link=link)
    if v is None:
        raise CatalogError(f"{path}: field {field}: a number is required here, got {raw!r}")
    return v
