"""The data-file kinds, each declared once: every field's kind, unit, range and meaning.

Each :class:`~tokenomics.data.schema.Schema` below is what its loader checks a file against
(through :func:`~tokenomics.data.schema.check_entry`, :func:`~tokenomics.data.schema.read_entries`
or :func:`~tokenomics.data.schema.check_record`), what ``python -m tokenomics.surfaces.validate``
runs, and what the schema page lists (:func:`schema_markdown`, generated into
``docs/catalog-schema.md``). :data:`SCHEMAS` holds them all by name:

* :data:`HARDWARE` and :data:`MODEL`, the catalog entries (their loaders in
  :mod:`tokenomics.data.catalog` add only what needs the file's path or another file: the id
  against the file name, a model's ``[config]`` read as a ``config.json``, a stated total
  parameter count against what that config gives);
* :data:`SYSTEM`, a rack, pod or supernode of one catalog device;
* the price catalog (:data:`JOURNEY`, :data:`ASSUMPTIONS`, :data:`API_PRICES`,
  :data:`KV_TIER`, :data:`RETENTION`), the bound-check measurements (:data:`MEASUREMENTS`) and
  the calibration corpus (:data:`CORPUS`, a CSV file).

Conventions: a quantity is converted to the field's canonical unit on load (``B``, ``B/s``,
``flop/s``, ``s``, ``W``, ``USD``); a bandwidth marked *directed* states ``direction`` and is
kept per direction; a field *in bytes* refuses a unit that counts bits; compute peaks are
dense (a 2:4-sparsity figure halved).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from tokenomics.core.dtypes import PEAK_KEYS, dtype
from tokenomics.core.errors import TokenomicsError
from tokenomics.data.bibliography import UNAVAILABLE
from tokenomics.data.lengths import request_lengths
from tokenomics.data.schema import Field, Schema
from tokenomics.data.specs import PRICE_TIERS, SCALE_UP_TOPOLOGIES

_Fail = Callable[[str, str], Exception]
_DATE_RE = re.compile(r"^\d{4}(-\d{2}(-\d{2})?)?$")
_ID_RE = re.compile(r"^[a-z0-9][a-z0-9.\-]*$")

# --------------------------------------------------------------------------------------------
# The price catalog, the measurements, the corpus, the systems
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


# --------------------------------------------------------------------------------------------
# The catalog entries: hardware and models
# --------------------------------------------------------------------------------------------
def _header(kind: str) -> tuple[Field, ...]:
    """The fields every catalog entry file begins with."""
    return (
        Field("schema", kind="count", unit="count", lo=1, hi=1, meaning="file format version"),
        Field("id", kind="text", meaning="lowercase letters, digits, '.', '-'; equal to the "
              "file name stem"),
        Field("name", kind="text", meaning=f"the {kind}'s full name"),
        Field("aliases", kind="texts", required=False,
              meaning="other names it is looked up by (case-insensitive)"),
        Field("notes", kind="text", required=False, meaning="anything a reader should know"),
        Field("overrides", kind="flag", required=False, meaning="a user file replacing an "
              "earlier folder's entry of the same id (default false)"),
    )


def _entry_header(v: Mapping[str, Any], fail: _Fail) -> None:
    """A lowercase id, non-empty names, a date of release as YYYY[-MM[-DD]]."""
    if not _ID_RE.match(v["id"]):
        raise fail("id", f"{v['id']!r} must be lowercase letters, digits, '.', '-'")
    for name in ("name", "vendor", "family"):
        if name in v and v[name] is not None and not v[name].strip():
            raise fail(name, "must be a non-empty string")
    if v.get("released") and not _DATE_RE.match(v["released"]):
        raise fail("released", f"{v['released']!r} must be YYYY, YYYY-MM or YYYY-MM-DD")


_PEAK = dict(unit="flop/s", lo=1e11, hi=1e18, required=False)


def _formats(convention: str, why: str, what: str, words: tuple[str, ...] = ()) -> Schema:
    """A table of compute figures per format with its required convention word."""
    return Schema(what, "", (
        Field("convention", kind="choice", words=(convention,), meaning=why),
        *(Field(k, words=words, meaning=f"{what} {k} rate", **_PEAK) for k in PEAK_KEYS)))


def _peak_order(v: Mapping[str, Any], fail: _Fail) -> None:
    """A lower-precision format is never slower on the same chip (a sparse/dense mix-up)."""
    peaks = {k: x for k, x in v["compute"].items() if isinstance(x, float)}
    order = [k for k in ("bf16", "fp8", "fp4") if k in peaks]
    for a, b in zip(order, order[1:], strict=False):
        if peaks[b] < 0.99 * peaks[a]:
            raise fail(f"compute.{b}", f"dense {b} peak {peaks[b]:.4g} FLOP/s is below {a} "
                                       f"{peaks[a]:.4g}: a sparse/dense mix-up?")


def _achievable_under_peak(v: Mapping[str, Any], fail: _Fail) -> None:
    """Each measured rate has a dense peak of its format and is at most 2% above it (a
    measurement's noise, not a sparse figure)."""
    peaks = {k: x for k, x in v["compute"].items() if isinstance(x, float)}
    for k, x in (v["achievable"] or {}).items():
        if not isinstance(x, float):
            continue
        if k not in peaks:
            raise fail(f"achievable.{k}", f"has no [compute] peak of that format to be "
                                          f"measured against; published: {', '.join(peaks)}")
        if x > 1.02 * peaks[k]:
            raise fail(f"achievable.{k}", f"{x / 1e12:.1f} TFLOP/s is above the format's "
                                          f"dense peak of {peaks[k] / 1e12:.1f} TFLOP/s: a "
                                          f"matmul cannot beat it (a sparse figure?)")


def _visible_within_capacity(v: Mapping[str, Any], fail: _Fail) -> None:
    vis, cap = v["visible"], v["capacity"]
    if isinstance(vis, float) and vis > cap:
        raise fail("visible", f"{vis:.6g} B exceeds the physical capacity {cap:.6g} B; "
                              "visible is the driver's share of the physical memory")


def _price_range(v: Mapping[str, Any], fail: _Fail) -> None:
    """A rental [USD/hour] of 0.01-10,000 per device-hour, a purchase [USD] of 10-1e8."""
    lo, hi = (0.01, 1e4) if v["unit"] == "USD/hour" else (10.0, 1e8)
    if not lo <= v["value"] <= hi:
        raise fail("value", f"implausible value {v['value']} {v['unit']}; expected between "
                            f"{lo:g} and {hi:g} {v['unit']}")
    if not _DATE_RE.match(v["date"]):
        raise fail("date", f"{v['date']!r} must be YYYY, YYYY-MM or YYYY-MM-DD")


_LINK = dict(lo=1e8, hi=1e14, directed=True, required=False, words=UNAVAILABLE)
_LATENCY = dict(unit="s", lo=1e-9, hi=1e-2, required=False, words=UNAVAILABLE)

#: A dated device price, one ``[[prices]]`` entry of a hardware file.
PRICE = Schema("prices", "", (
    Field("value", kind="number", lo=0.0, hi=1e8,
          meaning="the price, in unit (range by unit: see the rule)"),
    Field("unit", kind="choice", words=("USD/hour", "USD"),
          meaning="USD/hour: a rental per device-hour; USD: a purchase per device (a rate "
                  "per minute, second or month is converted to per hour first)"),
    Field("tier", kind="choice", words=PRICE_TIERS, meaning="what kind of price it is"),
    Field("date", kind="text", meaning="when the price was in force (YYYY[-MM[-DD]])"),
    Field("source", kind="source", meaning="bibliography key"),
    Field("note", kind="text", required=False, meaning="how it was read"),
), rules=(_price_range,))

#: ``hardware_catalog/<id>.toml``: one accelerator (tokenomics.data.catalog builds its
#: :class:`~tokenomics.data.specs.Hardware`).
HARDWARE = Schema(
    "hardware", "hardware_catalog/<id>.toml", (
        *_header("device"),
        Field("vendor", kind="text", meaning="who makes it"),
        Field("status", kind="choice", words=("shipping", "announced", "unverified"),
              meaning="shipping, announced (figures from an announcement) or unverified"),
        Field("released", kind="text", meaning="year (or date) of release, YYYY[-MM[-DD]]"),
        Field("form_factor", kind="text", required=False, meaning="SXM, OAM, PCIe..."),
        Field("compute", kind="table", meaning="dense peak per format",
              sub=_formats("dense", "halve a 2:4-sparsity figure", "dense peak",
                           words=UNAVAILABLE)),
        Field("achievable", kind="table", required=False,
              meaning="a benchmark's best dense matmul per format, at most the peak",
              sub=_formats("measured", "a benchmark's best dense matmul, not a datasheet "
                           "figure", "measured matmul", words=UNAVAILABLE)),
        Field("quoted", kind="table", required=False,
              meaning="figures of unknown sparsity convention, used only when asked",
              sub=_formats("unknown", "a figure known to be dense goes in [compute]; one "
                           "known to be sparse goes there halved", "quoted")),
        Field("memory", kind="table", meaning="the device's own memory", sub=Schema(
            "memory", "", (
                Field("type", kind="text", meaning="HBM3, HBM3e, GDDR7, SRAM..."),
                Field("capacity", unit="B", lo=1e8, hi=1e14, in_bytes=True,
                      meaning="physical capacity (binary where the stacks are GiB-sized)"),
                Field("visible", unit="B", lo=1e8, hi=1e14, in_bytes=True, required=False,
                      words=UNAVAILABLE, meaning="what the driver reports as device memory "
                      "(nvidia-smi memory.total, hl-smi, ROCm VRAM)"),
                Field("bandwidth", unit="B/s", lo=1e10, hi=1e17, in_bytes=True,
                      meaning="memory bandwidth"),
                Field("sram", unit="B", lo=1e5, hi=1e12, in_bytes=True, required=False,
                      words=UNAVAILABLE, meaning="on-chip SRAM or L2"),
            ), rules=(_visible_within_capacity,))),
        Field("scale_up", kind="table", required=False, meaning="its scale-up links",
              sub=Schema("scale_up", "", (
                  Field("name", kind="text", meaning="NVLink 5, Infinity Fabric..."),
                  Field("bandwidth", unit="B/s", meaning="per device", **_LINK),
                  Field("domain_size", unit="count", lo=1, hi=1e6, whole=True,
                        required=False, words=UNAVAILABLE,
                        meaning="devices one scale-up domain joins"),
                  Field("latency", meaning="one hop", **_LATENCY),
                  Field("topology", kind="choice", words=SCALE_UP_TOPOLOGIES,
                        required=False, meaning="how the domain is wired (default switched)"),
                  Field("note", kind="text", required=False, meaning="how it was read"),
              ))),
        Field("scale_out", kind="table", required=False, meaning="its network interface",
              sub=Schema("scale_out", "", (
                  Field("name", kind="text", meaning="the NIC"),
                  Field("bandwidth", unit="B/s", meaning="per device", **_LINK),
                  Field("latency", meaning="fabric latency", **_LATENCY),
                  Field("note", kind="text", required=False, meaning="how it was read"),
              ))),
        Field("power", kind="table", required=False, meaning="its power",
              sub=Schema("power", "", (
                  Field("tdp", unit="W", lo=1, hi=1e5, required=False, words=UNAVAILABLE,
                        meaning="thermal design power"),))),
        Field("prices", kind="tables", required=False, meaning="dated prices", sub=PRICE),
    ), rules=(_entry_header, _peak_order, _achievable_under_peak),
    meaning="one accelerator")


def _active_within_total(v: Mapping[str, Any], fail: _Fail) -> None:
    total, active = v["total_params"], v["active_params"]
    if isinstance(total, float) and isinstance(active, float) and active > total * 1.0001:
        raise fail("active_params", "exceeds total_params")


def _weight_formats(v: Mapping[str, Any], fail: _Fail) -> None:
    for name in ("dtype", "expert_dtype", "embedding_dtype"):
        if v[name] is not None:
            try:
                dtype(v[name])
            except TokenomicsError as exc:
                raise fail(name, str(exc)) from None


_PARAMS = dict(unit="count", lo=1e6, hi=1e14, words=("not published",))

#: ``model_catalog/<id>.toml``: one model (tokenomics.data.catalog builds its
#: :class:`~tokenomics.data.specs.Model`; ``[config]`` is read as a ``config.json``).
MODEL = Schema(
    "model", "model_catalog/<id>.toml", (
        *_header("model"),
        Field("family", kind="text", meaning="the model family (a cross-validation group)"),
        Field("released", kind="text", required=False, meaning="YYYY[-MM[-DD]]"),
        Field("config_source", kind="source", meaning="where the config.json is published"),
        Field("official", kind="table", meaning="the vendor's stated parameter counts, "
              "checked against what [config] gives", sub=Schema("official", "", (
                  Field("total_params", meaning="stated total parameters", **_PARAMS),
                  Field("active_params", meaning="stated parameters a token uses", **_PARAMS),
                  Field("active_include_embedding", kind="flag", required=False,
                        meaning="the stated active count includes the embedding (default "
                        "true)"),
                  Field("active_include_lm_head", kind="flag", required=False,
                        meaning="the stated active count includes the LM head (default "
                        "true)"),
              ), rules=(_active_within_total,))),
        Field("weights", kind="table", meaning="the released checkpoint's formats",
              sub=Schema("weights", "", (
                  Field("dtype", kind="text", meaning="weight format (a tk.formats() name)"),
                  Field("source", kind="source", meaning="bibliography key"),
                  Field("expert_dtype", kind="text", required=False,
                        meaning="routed experts' format where it differs"),
                  Field("embedding_dtype", kind="text", required=False,
                        meaning="embedding and LM head format where it differs"),
                  Field("note", kind="text", required=False, meaning="how it was read"),
              ), rules=(_weight_formats,))),
        Field("config", kind="verbatim", meaning="the model's config.json, verbatim (read by "
              "tk.model_from_hf_config)"),
    ), rules=(_entry_header,), meaning="one model architecture")


SCHEMAS: dict[str, Schema] = {s.kind: s for s in (
    HARDWARE, MODEL, SYSTEM, JOURNEY, ASSUMPTIONS, API_PRICES, KV_TIER, RETENTION, MEASUREMENTS,
    CORPUS)}

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
            "tables": "array of tables", "source": "bibliography key",
            "verbatim": "table, as written",
            "choice": " or ".join(f'"{w}"' for w in f.words)}[f.kind]


def _rows(fields: tuple[Field, ...], prefix: str = "") -> list[str]:
    """A schema's table rows, a nested table's fields after it as ``<table>.<field>``."""
    out = []
    for f in fields:
        rng = "" if f.kind in ("text", "choice", "flag", "texts", "table", "tables", "source",
                               "verbatim") \
            else f"{f.lo:g} to {f.hi:g}"
        out.append(f"| `{prefix}{f.name}` | {_cell(_holds(f))} | {f.unit or '-'} | "
                   f"{rng or '-'} | {'yes' if f.required else 'no'} | {_cell(f.meaning)} |")
        if f.sub is not None:
            out += _rows(f.sub.fields, f"{prefix}{f.name}{'[]' if f.kind == 'tables' else ''}.")
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
