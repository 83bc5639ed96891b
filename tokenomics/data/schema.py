"""Data-file schemas: each field of a file kind declared once, checked by one engine.

A :class:`Schema` lists a file kind's fields (:class:`Field`): a sourced quantity
``{value, unit, source[, note]}`` with its canonical unit and plausible range (the unit's
dimension is checked by :func:`~tokenomics.data.catalog.sourced_quantity` before the value
is converted), a text, or a quantity that may be ``"not published"`` (or another stated word such as
``"unbounded"``), one of a fixed set of words, a whole number; whether each is required; what
it means. :func:`read_entries` checks one file against its schema and names
file, entry and field in every :class:`~tokenomics.core.errors.CatalogError`; cross-field
rules are functions of the parsed entry (:attr:`Schema.rules`). :data:`SCHEMAS` holds the
kinds that use it (the request journey's budgets, the cost-of-ownership defaults, the API
prices, a KV tier, the retention default, the bound-check measurements, the calibration
corpus (a CSV file, read by :func:`check_record`) and the system files); the loaders of those
kinds, ``python -m tokenomics.surfaces.validate`` and the schema page (:func:`schema_markdown`, in
``docs/catalog-schema.md``) all read these declarations, so a field's unit, range and meaning
are written in one place.

Notes
-----
A system file (:data:`SYSTEM`) nests tables (``scale_up``, ``switch``, ``power``,
``totals``: ``"table"`` fields with their own schema) and directed bandwidths; the rules that
need another file (the device exists, whole scale-up domains, each total against ``devices
x`` the device's figure) stay in :mod:`tokenomics.data.systems`. The hardware and model files
keep their own loaders (:mod:`tokenomics.data.catalog`): per-format peaks with a sparsity
convention, links by kind and a verbatim ``config.json`` reader. They share this engine's
quantity check, :func:`~tokenomics.data.catalog.sourced_quantity`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from tokenomics.core.dtypes import dtype
from tokenomics.core.errors import CatalogError, TokenomicsError
from tokenomics.data.catalog import Source, read_toml, sourced_quantity
from tokenomics.data.lengths import request_lengths
from tokenomics.data.specs import SCALE_UP_TOPOLOGIES

#: What a field may hold: a sourced quantity, a quantity or ``"not published"``, a text, one
#: of a fixed set of words, a whole number, a plain number (in the field's unit, for files
#: whose rows cite one source each), true/false, a list of texts, a nested table (its own
#: :class:`Schema`).
FIELD_KINDS = ("quantity", "quantity_or_unpublished", "text", "choice", "count", "number",
               "flag", "texts", "table")


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
        For a ``"table"``, the nested table's schema.
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

    def __post_init__(self) -> None:
        if self.kind not in FIELD_KINDS:
            raise ValueError(f"field {self.name}: kind {self.kind!r} not in {FIELD_KINDS}")
        if (self.kind == "table") != (self.sub is not None):
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
            raise fail(f.name, f"{v!r} is not one of {', '.join(f.words)}")
        return v
    if f.kind == "flag":
        if not isinstance(v, bool):
            raise fail(f.name, f"must be true or false, got {v!r}")
        return v
    whole = f.kind == "count"
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
        raise fail(f.name + ".direction", 'a bandwidth needs direction = "per_direction" '
                                          'or "bidirectional"')
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


# --------------------------------------------------------------------------------------------
# The kinds
# --------------------------------------------------------------------------------------------
def _cache_hit_below_input(v: Mapping[str, Any], fail: Callable[[str, str], Exception]) -> None:
    inp, hit = v.get("input"), v.get("cached_input")
    if inp is not None and hit is not None and hit > inp:
        raise fail("cached_input", f"{hit:g} USD/Mtok is above the uncached input price "
                                   f"{inp:g}; a cache hit costs less")


_USD_MTOK = dict(kind="quantity_or_unpublished", unit="USD/Mtok", lo=0.0, hi=1000.0)

JOURNEY = Schema(
    "journey", "price_catalog/journey.toml", (
        Field("client_network", unit="s", lo=0.0, hi=2.0,
              meaning="the user to the data centre, one way"),
        Field("gateway", unit="s", lo=0.0, hi=0.1, meaning="API gateway's latency budget"),
        Field("auth_billing", unit="s", lo=0.0, hi=0.5,
              meaning="key to organisation, rate tier and pricing mode"),
        Field("load_balancer", unit="s", lo=0.0, hi=0.1, meaning="replica choice"),
        Field("router", unit="s", lo=0.0, hi=0.5,
              meaning="inference router: model, silicon and replica"),
        Field("fabric_hop", unit="s", lo=0.0, hi=1e-3, meaning="one scale-out hop"),
        Field("tokenize_rate", unit="token/s", lo=1e3, hi=1e9,
              meaning="tokeniser throughput on the client's CPU"),
        Field("detokenize_stream", unit="s", lo=0.0, hi=0.1,
              meaning="detokenise one token and stream it out"),
    ), meaning="the request journey's step budgets outside the accelerator")

ASSUMPTIONS = Schema(
    "assumptions", "price_catalog/assumptions.toml", (
        Field("pue", unit="count", lo=1.0, hi=3.0,
              meaning="power usage effectiveness of the facility"),
        Field("electricity_price", unit="USD/kWh", lo=0.001, hi=2.0,
              meaning="price of a kilowatt-hour at the meter"),
        Field("networking_share", unit="count", lo=0.0, hi=0.9,
              meaning="networking's share of the cost of ownership"),
        Field("service_life", unit="year", lo=1.0, hi=15.0,
              meaning="years a purchase is amortised over"),
    ), meaning="cost-of-ownership defaults")

API_PRICES = Schema(
    "api_prices", "price_catalog/api_prices.toml", (
        Field("id", kind="text", meaning="provider/model, lowercase"),
        Field("provider", kind="text", meaning="the provider's name"),
        Field("model", kind="text", meaning="the model's name as the provider lists it"),
        Field("date", kind="text", meaning="when the price list was read (YYYY[-MM[-DD]])"),
        Field("input", meaning="uncached input price [USD/Mtok]", **_USD_MTOK),
        Field("cached_input", meaning="cache-hit (read) input price [USD/Mtok]", **_USD_MTOK),
        Field("cache_write_5m", meaning="5-minute cache write price [USD/Mtok]", **_USD_MTOK),
        Field("cache_write_1h", meaning="1-hour cache write price [USD/Mtok]", **_USD_MTOK),
        Field("output", meaning="output price [USD/Mtok]", **_USD_MTOK),
        Field("batch_discount", kind="quantity_or_unpublished", unit="count", lo=0.0, hi=1.0,
              meaning="fraction off input and output in the batch tier"),
        Field("note", kind="text", required=False, meaning="anything a reader should know"),
    ), array="price", rules=(_cache_hit_below_input,),
    meaning="providers' dated API prices", min_entries=1)

def _tier_capacity(v: Mapping[str, Any], fail: Callable[[str, str], Exception]) -> None:
    unbounded = v["capacity_per"] == "unbounded"
    if unbounded != (v["capacity"] == "unbounded"):
        raise fail("capacity", "capacity_per = 'unbounded' needs capacity = \"unbounded\""
                   if unbounded else "capacity = \"unbounded\" needs capacity_per = "
                   "'unbounded'")
    if v["capacity_per"] == "node" and v["gpus_per_node"] is None:
        raise fail("gpus_per_node", "required when capacity_per = 'node'")


def _tier_bandwidth_per(v: Mapping[str, Any], fail: Callable[[str, str], Exception]) -> None:
    if v["bandwidth_per"] != "gpu":
        raise fail("bandwidth_per", f"{v['bandwidth_per']!r}: only 'gpu' (a path into each GPU) "
                   "is modelled; divide a shared path's bandwidth by its GPUs")


def _tier_holding(v: Mapping[str, Any], fail: Callable[[str, str], Exception]) -> None:
    price, life, holding = v["purchase_price"], v["service_life"], v["holding_cost"]
    if (price is None) != (life is None):
        raise fail("service_life" if life is None else "purchase_price",
                   "purchase_price and service_life go together")
    if price is not None and (holding is None
                              or abs(holding - price / life) > 0.01 * price / life):
        raise fail("holding_cost", f"{holding!r} USD/B/s is not purchase_price / service_life "
                   f"= {price / life:.4g} USD/B/s ({price / life * 3.6e12:.4g} USD/GB/hour)")


KV_TIER = Schema(
    "kv_tier", "price_catalog/kv_tiers.toml", (
        Field("title", kind="text", meaning="what the tier is"),
        Field("capacity", unit="B", lo=1e9, hi=1e16, words=("unbounded",),
              meaning="what the tier holds, per capacity_per; \"unbounded\" if bought as needed"),
        Field("capacity_per", kind="choice", words=("gpu", "node", "unbounded"),
              meaning="whose capacity it is"),
        Field("gpus_per_node", kind="count", lo=1, hi=1e6, required=False,
              meaning="GPUs sharing a per-node capacity"),
        Field("read_bandwidth", unit="B/s", lo=1e8, hi=1e13,
              meaning="from the tier into one GPU's HBM, as the source prints it"),
        Field("bandwidth_direction", kind="choice", words=("bidirectional", "per_direction"),
              meaning="how read_bandwidth is quoted (the loader halves a bidirectional one)"),
        Field("bandwidth_per", kind="text", meaning="\"gpu\": each GPU has its own path"),
        Field("latency", unit="s", lo=1e-9, hi=1.0, meaning="latency floor of one transfer"),
        Field("holding_cost", kind="quantity_or_unpublished", unit="USD/B/s", lo=1e-21,
              hi=1e-12, meaning="USD per byte of KV per second held in the tier"),
        Field("purchase_price", unit="USD/B", lo=1e-12, hi=1e-7, required=False,
              meaning="what holding_cost was derived from, with service_life"),
        Field("service_life", unit="s", lo=3.0e7, hi=5.0e8, required=False,
              meaning="years the purchase is amortised over"),
        Field("note", kind="text", required=False, meaning="anything a reader should know"),
    ), rules=(_tier_capacity, _tier_bandwidth_per, _tier_holding),
    meaning="a memory tier a KV cache can wait in ([tiers.<name>] of kv_tiers.toml)")

RETENTION = Schema(
    "retention", "price_catalog/kv_tiers.toml", (
        Field("miss_price", unit="USD/token", lo=0.0, hi=1e-3,
              meaning="the stated price of a KV-cache miss, per token of the session's context"),
    ), meaning="the retention policy's default ([retention] of kv_tiers.toml)")

#: The file kinds read through this engine, by name.
def _count(name: str, lo: float, hi: float, meaning: str, required: bool = True) -> Field:
    return Field(name, kind="count", unit="count", lo=lo, hi=hi, required=required,
                 meaning=meaning)


def _counts(*names: str, required: bool = True, hi: float = 1e7,
            what: str = "") -> tuple[Field, ...]:
    return tuple(_count(n, 1, hi, what or n, required) for n in names)


#: ``measurements/measured.toml``: published measurements against the roofline bound, one
#: ``[[row]]`` each, each citing its source (tokenomics.calibration.measurements).
MEASUREMENTS = Schema(
    "measurements", "measurements/measured.toml", (
        Field("id", kind="text", meaning="row id (those of shared/reference/calibration.csv)"),
        Field("source", kind="text", meaning="where the figure is published (file, table)"),
        Field("model", kind="text", meaning="catalog model id or alias"),
        Field("hardware", kind="text", meaning="catalog hardware id or alias"),
        *_counts("tp", hi=4096, what="tensor-parallel degree"),
        *_counts("pp", "ep", "dp_attention", required=False, hi=4096,
                 what="pipeline / expert / attention data-parallel degree (default 1)"),
        Field("weight_dtype", kind="text", meaning="weight format (a tk.formats() name)"),
        Field("kv_dtype", kind="text", meaning="KV-cache format"),
        Field("compute_dtype", kind="text", meaning="format the GEMMs run in"),
        Field("metric", kind="choice", words=("tokens_per_s_per_device", "tokens_per_s_per_user"),
              meaning="output tokens per second per device, or per user (1 / TPOT)"),
        Field("measured", kind="number", unit="token/s", lo=1e-6, hi=1e9,
              meaning="the published speed"),
        *_counts("output_tokens", what="mean output tokens per request"),
        *_counts("input_tokens", "batch", required=False,
                 what="mean input tokens / the engine's batch, where published"),
        Field("note", kind="text", required=False, meaning="anything a reader should know"),
        Field("calibrate", kind="flag", required=False,
              meaning="used by the calibration (default true)"),
        Field("calibrate_note", kind="text", required=False, meaning="why not, when false"),
        Field("reserved", kind="flag", required=False,
              meaning="held out for independent validation (MLPerf v5.1 and later)"),
    ), array="row", meaning="published measurements against the roofline bound",
    min_entries=1)


def _text(name: str, meaning: str, required: bool = True) -> Field:
    return Field(name, kind="text", meaning=meaning, required=required)


def _known_formats(v: Mapping[str, Any], fail: Callable[[str, str], Exception]) -> None:
    for name in ("weight_dtype", "kv_dtype", "expert_dtype", "compute_dtype"):
        x = v.get(name)
        if x or name in ("weight_dtype", "kv_dtype"):
            try:
                dtype(x)
            except TokenomicsError as exc:
                raise fail(name, str(exc)) from None


def _bundled_workload(v: Mapping[str, Any], fail: Callable[[str, str], Exception]) -> None:
    if v.get("workload"):
        try:
            request_lengths(v["workload"])
        except TokenomicsError:
            raise fail("workload", f"{v['workload']!r} is not a bundled workload "
                                   f"(measurements/workloads.toml)") from None


def _named_engine(v: Mapping[str, Any], fail: Callable[[str, str], Exception]) -> None:
    if not v.get("engine"):
        raise fail("engine", "empty; name the serving engine (trtllm, vllm, sglang...)")


#: ``measurements/corpus.csv``: the calibration corpus, one published result a CSV row
#: (tokenomics.calibration.corpus, whose module notes say how each row is forecast).
CORPUS = Schema(
    "corpus", "measurements/corpus.csv", (
        _text("id", "row id, unique in the file"),
        _text("model", "catalog model id or alias"),
        _text("hardware", "catalog hardware id or alias"),
        _count("devices", 1, 1e5, "devices of the published system"),
        _count("tp", 1, 4096, "tensor-parallel degree of one replica"),
        _count("pp", 1, 4096, "pipeline stages"),
        _count("ep", 1, 4096, "expert-parallel degree (1: experts split by tp)"),
        _count("attn_dp", 0, 1, "1: attention data-parallel over the tp ranks"),
        _count("redundant_experts", 0, 4096, "extra expert copies (EPLB)"),
        Field("comm_overlap", kind="number", lo=0.0, hi=1.0,
              meaning="published share of communication hidden behind compute"),
        Field("pool", kind="choice", words=("colocated", "decode", "prefill"),
              meaning="a colocated replica or one pool of a disaggregated deployment"),
        _text("weight_dtype", "weight format (a tk.formats() name)"),
        _text("kv_dtype", "KV-cache format"),
        _count("isl", 1, 1e7, "mean input tokens (assumed where isl_assumed)"),
        _count("osl", 1, 1e7, "mean output tokens"),
        _count("batch_per_device", 0, 1e7, "published concurrency or batch per device (0: "
               "not published)"),
        _count("runtime_max_batch", -1, 1e7, "the runtime's batch limit (0: none, -1: "
               "trtllm-bench's own)"),
        _count("runtime_max_num_tokens", 0, 1e8, "the runtime's tokens-per-step limit (0: none)"),
        Field("metric", kind="choice", words=(
            "offline_tok_s_per_device", "fixed_isl_osl_tok_s_per_device",
            "prefill_tok_s_per_device", "server_tpot_at_concurrency", "ttft_s"),
            meaning="what was measured (module notes of tokenomics.calibration.corpus)"),
        Field("measured", kind="number", unit="token/s or s", lo=1e-9, hi=1e9,
              meaning="the published value: token/s per device, or seconds"),
        Field("unit", kind="choice", words=("tok/s", "s"), meaning="the value's unit"),
        Field("isl_assumed", kind="flag", meaning="True where the mean input length is assumed"),
        _text("source_family", "independent source family (a cross-validation group)"),
        _text("engine", "serving engine (trtllm, vllm, sglang...)"),
        _text("workload", "a bundled length distribution (measurements/workloads.toml) or "
              "empty"),
        _text("source_group", "source release (mlperf-v4.1...)"),
        _text("hardware_family", "hardware family (a cross-validation group)"),
        _text("model_family", "model family (a cross-validation group)"),
        Field("reserved", kind="flag", meaning="held out for independent validation "
              "(never fitted to or tested against)"),
        Field("fitted", kind="flag", meaning="False: the row checks the bound only"),
        Field("trust", kind="choice", words=("high", "medium", "low"),
              meaning="how directly the figure is published"),
        _text("assumptions", "what the row assumes"),
        _text("source", "where it is published (repository@commit path, or URL)"),
        _text("expert_dtype", "routed experts' storage where it differs from weight_dtype",
              required=False),
        _text("compute_dtype", "format the matrix products run at, where stated",
              required=False),
        _count("requests", 0, 1e8, "requests of a finite benchmark run (0: not finite or "
               "not stated)", required=False),
    ), array="row", rules=(_known_formats, _bundled_workload, _named_engine),
    meaning="the calibration corpus, one published result a row (CSV: one column per field, "
    "flags written True / False)", min_entries=1)

def _named(v: Mapping[str, Any], fail: Callable[[str, str], Exception]) -> None:
    for name in ("id", "name", "vendor"):
        if not v[name].strip():
            raise fail(name, "must be a non-empty string")


def _count_q(name: str, meaning: str, required: bool = True) -> Field:
    return Field(name, unit="count", lo=1, hi=1e6, whole=True, required=required,
                 meaning=meaning)


_TOTAL_Q = dict(lo=1, hi=1e24, required=False)

#: ``hardware_catalog/systems/*.toml``: a rack, pod, node or supernode of one catalog device
#: (tokenomics.data.systems, whose loader adds the rules across files: the device exists,
#: whole domains, each total against ``devices x`` the device's figure).
SYSTEM = Schema(
    "system", "hardware_catalog/systems/*.toml", (
        Field("schema", kind="count", unit="count", lo=1, hi=1, meaning="file format version"),
        Field("id", kind="text", meaning="system id, unique across the catalogs"),
        Field("name", kind="text", meaning="product name"),
        Field("vendor", kind="text", meaning="who sells it"),
        Field("status", kind="choice", words=("shipping", "announced", "retired"),
              required=False, meaning="default shipping"),
        Field("aliases", kind="texts", required=False, meaning="other names it is found by"),
        Field("device", kind="text", meaning="the catalog hardware id of its accelerator"),
        _count_q("devices", "accelerators in the system"),
        Field("notes", kind="text", required=False, meaning="what a reader should know"),
        Field("scale_up", kind="table", meaning="how its scale-up domain is wired", sub=Schema(
            "scale_up", "", (
                Field("name", kind="text", required=False, meaning="the fabric's name"),
                Field("topology", kind="choice", words=SCALE_UP_TOPOLOGIES,
                      meaning="switched, mesh, torus..."),
                _count_q("domain_size", "devices per domain (default: every device)",
                         required=False),
                Field("note", kind="text", required=False, meaning="a note"),
            ))),
        Field("switch", kind="table", required=False, meaning="its switch chips", sub=Schema(
            "switch", "", (
                Field("name", kind="text", meaning="the switch chip"),
                _count_q("chips", "switch chips in the system"),
                Field("bandwidth", unit="B/s", lo=1e8, hi=1e18, directed=True,
                      required=False, meaning="one chip's switching bandwidth"),
                Field("note", kind="text", required=False, meaning="a note"),
            ))),
        Field("power", kind="table", required=False, meaning="published power", sub=Schema(
            "power", "", (Field("system", unit="W", lo=1, hi=1e9,
                                meaning="the whole system's power (devices, CPUs, switches, "
                                        "fans)"),))),
        Field("totals", kind="table", required=False, meaning="published totals, each checked "
              "against devices x the device's figure", sub=Schema(
                  "totals", "", (
                      Field("scale_up_bandwidth", unit="B/s", directed=True, **_TOTAL_Q,
                            meaning="all devices' scale-up links"),
                      Field("memory", unit="B", **_TOTAL_Q,
                            meaning="all devices' memory (binary or decimal sum)"),
                      Field("memory_bandwidth", unit="B/s", **_TOTAL_Q,
                            meaning="all devices' memory bandwidth"),
                      *(Field(k, unit="flop/s", **_TOTAL_Q, meaning=f"dense {k} peak")
                        for k in ("bf16", "fp8", "fp4")),
                  ))),
    ), rules=(_named,), meaning="a rack, pod, node or supernode of one catalog device")

SCHEMAS: dict[str, Schema] = {s.kind: s for s in (JOURNEY, ASSUMPTIONS, API_PRICES, KV_TIER,
                                                  RETENTION, MEASUREMENTS, CORPUS, SYSTEM)}


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


def _cell(x: Any) -> str:
    return str(x).replace("|", "\\|")


def _holds(f: Field) -> str:
    if f.kind == "quantity":
        h = ("{value, unit, direction, source}" if f.directed else
             '{value, unit = "count", source}' if f.whole else "{value, unit, source}")
        return h + "".join(f' or "{w}"' for w in f.words)
    return {"quantity_or_unpublished": "{value, unit, source} or \"not published\"",
            "text": "string", "count": "whole number", "number": "number",
            "flag": "true or false", "texts": "list of strings", "table": "table",
            "choice": " or ".join(f'"{w}"' for w in f.words)}[f.kind]


def _rows(fields: tuple[Field, ...], prefix: str = "") -> list[str]:
    """A schema's table rows, a nested table's fields after it as ``<table>.<field>``."""
    out = []
    for f in fields:
        rng = "" if f.kind in ("text", "choice", "flag", "texts", "table") \
            else f"{f.lo:g} to {f.hi:g}"
        out.append(f"| `{prefix}{f.name}` | {_cell(_holds(f))} | {f.unit or '-'} | "
                   f"{rng or '-'} | {'yes' if f.required else 'no'} | {_cell(f.meaning)} |")
        if f.sub is not None:
            out += _rows(f.sub.fields, f"{prefix}{f.name}.")
    return out


def schema_markdown() -> str:
    """The schema page's section: one table per kind of :data:`SCHEMAS` (generated)."""
    out = []
    for s in SCHEMAS.values():
        head = ("one CSV row each" if s.file.endswith(".csv") else
                f"[[{s.array}]] entries" if s.array else "a table")
        out += [f"### `{s.file}`: {s.meaning} ({head})", "",
                "| field | holds | unit | range | required | meaning |", "|---|---|---|---|---|---|",
                *_rows(s.fields), ""]
    return "\n".join(out)
