"""Load and validate the hardware and model catalogs (TOML files) and their bibliography.

Each file is checked against its kind, declared once in :mod:`tokenomics.data.kinds`
(:data:`~tokenomics.data.kinds.HARDWARE`, :data:`~tokenomics.data.kinds.MODEL`), by the schema
engine (:mod:`tokenomics.data.schema`): every ``{value, unit, source}`` is converted once to
canonical units (B, B/s, FLOP/s, s, W, USD) and its source key checked against the bibliography
(:mod:`tokenomics.data.bibliography`). Anything the loader cannot interpret is a
:class:`~tokenomics.core.errors.CatalogError` naming the file and the field: unknown or missing
keys, a unit of the wrong dimension or counting bits where bytes are meant, an unresolved
source, an implausible value, a broken cross-field rule. The file format is documented in
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
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from tokenomics.core.dtypes import dtype
from tokenomics.core.errors import CatalogError, TokenomicsError, UnknownEntryError
from tokenomics.data.bibliography import UNAVAILABLE, Source, catalog_dir, load_sources, read_toml
from tokenomics.data.counts import check_official_params
from tokenomics.data.hf_config import model_from_hf_config
from tokenomics.data.kinds import HARDWARE, MODEL
from tokenomics.data.schema import Schema, check_entry
from tokenomics.data.specs import Hardware, Model, Price
from tokenomics.data.user_catalog import catalog_generation, check_folders, search_path, user_subdir


def _entry(schema: Schema, path: Path, sources: Mapping[str, Source]) -> dict[str, Any]:
    """One catalog file checked against its kind (:mod:`tokenomics.data.kinds`), plus the
    rule that needs its path: the id is the file name's stem."""
    v = check_entry(schema, read_toml(path), path, "", sources)
    if v["id"] != path.stem:
        raise CatalogError(f"{path}: field id: {v['id']!r} must equal the file name stem "
                           f"{path.stem!r}")
    return v


def _unavailable(v: Mapping[str, Any], tables: tuple[str, ...]) -> dict[str, str]:
    """``"<table>.<field>" -> word`` for each quantity a file marks "not published" or
    "not supported"."""
    return {f"{t}.{k}": x for t in tables for k, x in (v[t] or {}).items()
            if k != "convention" and x in UNAVAILABLE}


def _figures(table: Mapping[str, Any] | None) -> dict[str, float]:
    """The published figures of a per-format table [FLOP/s] (words and absences dropped)."""
    return {k: x for k, x in (table or {}).items() if isinstance(x, float)}


def _number(x: Any) -> Any:
    """A quantity's value, None where the file gives a word instead."""
    return None if isinstance(x, str) else x


def parse_hardware_file(path: Path, sources: Mapping[str, Source]) -> Hardware:
    """Parse and validate one hardware TOML file into a :class:`Hardware` (canonical units).

    Every field is checked against :data:`tokenomics.data.kinds.HARDWARE` (its kind, unit,
    range and the cross-field rules: lower-precision peaks not slower, measured rates under
    their peaks, visible memory within the physical); this adds the id against the file name.

    Raises
    ------
    CatalogError
        Naming the file and the field for any problem.
    """
    v = _entry(HARDWARE, path, sources)
    peaks = _figures(v["compute"])
    mem = v["memory"]
    up, out, pw = v["scale_up"] or {}, v["scale_out"] or {}, v["power"] or {}
    unavailable = _unavailable(v, ("compute", "memory", "scale_up", "scale_out", "power"))
    if not peaks:
        unavailable.setdefault("compute", "not published")
    prices = tuple(Price(usd=float(p["value"]), per_hour=p["unit"] == "USD/hour", tier=p["tier"],
                         date=p["date"], source=p["source"], note=p["note"] or "")
                   for p in v["prices"] or ())
    try:
        return Hardware(
            id=v["id"], name=v["name"], vendor=v["vendor"], status=v["status"],
            aliases=tuple(a.lower() for a in v["aliases"] or ()), released=v["released"],
            peak_flop_per_s=peaks, mem_capacity_bytes=mem["capacity"],
            mem_visible_bytes=_number(mem["visible"]), mem_bw_bytes_per_s=mem["bandwidth"],
            memory_type=mem["type"], sram_bytes=_number(mem["sram"]),
            scale_up_name=up.get("name") or "",
            scale_up_bw_bytes_per_s=_number(up.get("bandwidth")),
            scale_up_domain_size=_number(up.get("domain_size")),
            scale_up_latency_s=_number(up.get("latency")),
            scale_up_topology=up.get("topology") or "switched",
            scale_out_name=out.get("name") or "",
            scale_out_bw_bytes_per_s=_number(out.get("bandwidth")),
            scale_out_latency_s=_number(out.get("latency")), tdp_w=_number(pw.get("tdp")),
            prices=prices, unavailable=unavailable, sources=dict(v["_sources"]),
            notes=v["notes"] or "", path=str(path),
            achievable_flop_per_s=_figures(v["achievable"]),
            quoted_flop_per_s=_figures(v["quoted"]),
        )
    except TokenomicsError as exc:
        raise CatalogError(f"{path}: {exc}") from None


def parse_model_file(path: Path, sources: Mapping[str, Source]) -> Model:
    """Parse and validate one model TOML file into a :class:`Model`.

    Every field is checked against :data:`tokenomics.data.kinds.MODEL`; the ``[config]``
    table is interpreted by :func:`tokenomics.model_from_hf_config`, exactly as a user's
    ``config.json`` would be, and the stated ``official`` totals are checked against the
    parameters it gives (:func:`tokenomics.data.counts.check_official_params`).

    Raises
    ------
    CatalogError
        Naming the file and the field for any problem.
    """
    v = _entry(MODEL, path, sources)
    off, w = v["official"], v["weights"]
    try:
        m = model_from_hf_config(v["config"], id=v["id"], name=v["name"],
                                 weight_dtype=dtype(w["dtype"]).name,
                                 expert_dtype=w["expert_dtype"],
                                 embedding_dtype=w["embedding_dtype"],
                                 where=f"{path}: [config]")
    except TokenomicsError as exc:
        msg = str(exc)
        raise CatalogError(msg if str(path) in msg else f"{path}: [config]: {msg}") from None
    inc_emb, inc_head = (True if off[k] is None else off[k]
                         for k in ("active_include_embedding", "active_include_lm_head"))
    srcs = {k: x for k, x in v["_sources"].items() if k not in ("weights.source", "config_source")}
    m = replace(
        m, aliases=tuple(a.lower() for a in v["aliases"] or ()), family=v["family"],
        official_total_params=_number(off["total_params"]),
        official_active_params=_number(off["active_params"]),
        official_active_include_embedding=inc_emb, official_active_include_lm_head=inc_head,
        sources={"config": v["config_source"], **srcs, "weights": w["source"]},
        notes=(v["notes"] or "") + (("; " + m.notes) if m.notes else ""), path=str(path),
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
