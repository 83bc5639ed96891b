"""KV-cache memory tiers: reload against recompute, and how long to keep a session's KV in HBM.

An agent session spends most of its time waiting for its human (S62: median gap between
requests 25 minutes, ~40 GB of KV held over it). Its KV can stay in HBM, move to a cheaper tier
(host DRAM, local NVMe, networked storage) and be reloaded when the user returns, or be dropped
and recomputed. This module loads the tiers (``price_catalog/kv_tiers.toml``), compares
reloading a prefix with recomputing it (S63), prices the keep / offload / drop policy over a
heavy-tailed gap distribution (S62), and costs one agent step on a long cached prefix (S61).

Notes
-----
**Tiers.** Each tier has a capacity, a bandwidth into one GPU's HBM per direction, a latency
floor and a holding cost per byte-second. HBM's holding cost is an opportunity cost computed
here, not stored: the device's rental price per hour over its HBM capacity,
:math:`h_H = p / (3600\\,C_\\mathrm{HBM})` (H100 SXM at $3.78/h: $0.0473 per GB-hour, about
200 times host DRAM's amortised $2.3e-4).

**Reload or recompute** a prefix of :math:`P` tokens on a replica of :math:`n` devices:
:math:`t_\\mathrm{reload} = \\ell + K_\\mathrm{dev}(P)/\\beta` with :math:`K_\\mathrm{dev}` the
KV bytes one device holds and :math:`\\beta` the tier's bandwidth into one GPU (every device
loads its own shard in parallel); :math:`t_\\mathrm{recompute}` is the prefill of :math:`P`
tokens. Reload grows linearly in :math:`P`; recompute has a floor (the weights are read at least
once) and then grows like :math:`(2 N P + n_q (d_k + d_v) L\\,P(P+1))/\\Pi` (matmul parameters
:math:`N`, causal attention, peak FLOP/s :math:`\\Pi`). When the tier's time per token,
:math:`k/\\beta` (KV bytes per token per device over bandwidth), is below :math:`2N/\\Pi`,
reload wins at every length (host DRAM: 2.05 us against 14.1 us per token for Llama 3.1 8B on
an H100); otherwise recompute wins in a middle band and reload again beyond
:math:`P^* + 1 = \\Pi\\,(k/\\beta - 2N/\\Pi) / (n_q (d_k + d_v) L)`.

**Retention policy.** Keep the KV in HBM for :math:`t_1`, then in a cheaper tier until
:math:`t_2`, then drop it. With the gap :math:`G` between requests distributed as :math:`F`,
KV bytes :math:`K` and holding costs :math:`c_H = h_H K`, :math:`c_T = h_T K` [USD/s], the
expected cost of one gap is

.. math::
   C(t_1, t_2) = c_H\\,E[\\min(G,t_1)] + c_T\\,(E[\\min(G,t_2)] - E[\\min(G,t_1)])
   + (F(t_2) - F(t_1))\\,R_r + (1 - F(t_2))\\,R_c,

with :math:`R_r`, :math:`R_c` the USD cost of a reload and of a recompute (their time times the
replica's device-hour price, plus optional penalties). :math:`C` separates into a function of
:math:`t_1` and one of :math:`t_2`; their first-order conditions put the hazard of the gap,
:math:`\\lambda = f/(1-F)`, at

.. math::
   \\lambda(t_1) = \\frac{c_H - c_T}{R_r}, \\qquad \\lambda(t_2) = \\frac{c_T}{R_c - R_r},

on the decreasing side of the hazard (a heavy-tailed gap has a hazard that peaks early and then
falls: a user who has not come back soon is ever less likely to come back in the next minute).
:math:`E[\\min(G,t)]` of a lognormal is closed-form (:meth:`GapDistribution.expected_min`).

**S62, reconciled.** The source keeps the KV in HBM for a 5-10 minute "golden time". GPU-time
accounting alone does not give that: reloading from host DRAM costs
:math:`C_\\mathrm{HBM}/\\beta` = 80 GB / 64 GB/s = 1.25 s of HBM rent, so HBM residence pays
only for returns within seconds, and the optimum offloads at once (:math:`t_1 = 0`, drop after
about 3 h). A 5-10 minute golden time needs a return that misses HBM to cost as much as 28-41
minutes of the KV's HBM rent: about $0.85-1.26 per miss for 39 GB on H100s at $3.78/h, a price
of the user's experience of a resume that is not instant. The library states that price as a
default (``price_catalog/kv_tiers.toml``, ``[retention] miss_price``: $8.40 per million tokens
of context, $1.00 for the source's 119K-token prefix, giving 6.7 minutes) and labels it an
assumption; ``miss_usd=0`` gives the GPU-time-only answer.

References
----------
.. [1] AI Frontier Korea, "EP 112. What Happens Inside an AI Chip: From KV Cache to Roofline",
   2026, sections 8.2-8.4 (seed digest S60-S63).
.. [2] R. Qin et al., "Mooncake: A KVCache-centric Disaggregated Architecture for LLM
   Serving", arXiv:2407.00079, 2024 (KV pool in CPU DRAM and SSD).
.. [3] J. Aitchison, J. A. C. Brown, "The Lognormal Distribution", Cambridge University Press,
   1957 (moments and partial expectations of the lognormal).
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd
from scipy import optimize, special

from tokenomics.core import checks as V
from tokenomics.core.errors import (
    CatalogError,
    DoesNotFitError,
    NotPublishedError,
    TokenomicsError,
    UnknownEntryError,
)
from tokenomics.core.units import as_magnitude, to_array
from tokenomics.data.catalog import catalog_dir, data_sources, read_toml, sourced_quantity
from tokenomics.data.deployment import Deployment
from tokenomics.data.specs import Hardware
from tokenomics.physics.kv import kv_bytes_per_token
from tokenomics.physics.memory import kv_per_sequence_bytes
from tokenomics.physics.step import decode, prefill

#: Median gap between two requests of an agent session [s] (S62: "중앙값은 25분").
GAP_MEDIAN_S = 25 * 60.0
#: Mean over median of the heavy-tailed agent workload (S60: "최대 15배"), used for the gap.
GAP_MEAN_TO_MEDIAN = 15.0
#: The source's agent step (S61): cached prefix, new input and output tokens.
AGENT_STEP_TOKENS = (119_000, 875, 214)

_TIER_KEYS = ("title", "capacity", "capacity_per", "gpus_per_node", "read_bandwidth",
              "bandwidth_direction", "bandwidth_per", "latency", "holding_cost",
              "purchase_price", "service_life", "note")
_REQUIRED = ("title", "capacity", "capacity_per", "read_bandwidth", "bandwidth_direction",
             "bandwidth_per", "latency", "holding_cost")
_BOUNDS = {  # canonical unit, plausible range
    "capacity": ("B", 1e9, 1e16),
    "read_bandwidth": ("B/s", 1e8, 1e13),
    "latency": ("s", 1e-9, 1.0),
    "holding_cost": ("USD/B/s", 1e-21, 1e-12),
    "purchase_price": ("USD/B", 1e-12, 1e-7),
    "service_life": ("s", 3.0e7, 5.0e8),
}


def _money(x: Any, name: str, unit: str) -> float:
    arr = V.non_negative(x, name, unit)
    if arr.size != 1:
        raise TokenomicsError(f"{name} must be a single number [{unit}], got {x!r}")
    return float(arr.reshape(()))


def _one(x: Any, name: str, minimum: float = 1, unit: str = "count") -> int:
    arr = V.counts(x, name, minimum=minimum, unit=unit)
    if arr.size != 1:
        raise TokenomicsError(f"{name} must be a single whole number, got {x!r}")
    return int(arr.reshape(()))


# --------------------------------------------------------------------------------------------
# Tiers
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Tier:
    """One memory tier a KV cache can wait in, in canonical units.

    Attributes
    ----------
    name, title : str
    capacity_bytes : float
        What the tier holds [B], per ``capacity_per``; ``inf`` when capacity is bought as needed.
    capacity_per : {"gpu", "node", "unbounded"}
    gpus_per_node : int
        GPUs sharing a per-node capacity (1 otherwise).
    read_bytes_per_s : float
        Bandwidth from the tier into **one GPU's** HBM, per direction [B/s]: every GPU of a
        replica loads its own KV shard over its own path in parallel.
    latency_s : float
        Latency floor of one transfer [s].
    usd_per_byte_s : float or None
        Holding cost [USD/B/s] (1 USD/GB-hour = 2.78e-13 USD/B/s); None when not published.
    sources : Mapping[str, str]
        Field -> bibliography key.
    notes : str
    """

    name: str
    title: str
    capacity_bytes: float
    capacity_per: str
    read_bytes_per_s: float
    latency_s: float
    usd_per_byte_s: float | None
    gpus_per_node: int = 1
    sources: Mapping[str, str] = field(default_factory=dict)
    notes: str = ""

    def __post_init__(self) -> None:
        if self.capacity_per not in ("gpu", "node", "unbounded"):
            raise TokenomicsError(f"tier {self.name!r}: capacity_per must be 'gpu', 'node' or "
                                  f"'unbounded', got {self.capacity_per!r}")
        for name in ("read_bytes_per_s", "capacity_bytes"):
            v = getattr(self, name)
            if not v > 0:
                raise TokenomicsError(f"tier {self.name!r}: {name} must be > 0, got {v!r}")
        if not (self.latency_s >= 0 and math.isfinite(self.latency_s)):
            raise TokenomicsError(f"tier {self.name!r}: latency_s must be >= 0 seconds, "
                                  f"got {self.latency_s!r}")
        if self.usd_per_byte_s is not None and not (self.usd_per_byte_s >= 0
                                                    and math.isfinite(self.usd_per_byte_s)):
            raise TokenomicsError(f"tier {self.name!r}: usd_per_byte_s must be >= 0 [USD/B/s], "
                                  f"got {self.usd_per_byte_s!r}")

    @property
    def capacity_per_gpu_bytes(self) -> float:
        """Capacity one GPU can count on [B] (a node's capacity split over its GPUs)."""
        return self.capacity_bytes / (self.gpus_per_node if self.capacity_per == "node" else 1)

    @property
    def usd_per_gb_hour(self) -> float | None:
        """Holding cost in the unit prices are quoted in [USD/GB/hour]."""
        return None if self.usd_per_byte_s is None else self.usd_per_byte_s * 1e9 * 3600.0

    def holding_usd_per_byte_s(self) -> float:
        """Holding cost [USD/B/s]; raises :class:`NotPublishedError` when none is sourced."""
        if self.usd_per_byte_s is None:
            raise NotPublishedError(
                f"tier {self.name!r}: no sourced holding cost (kv_tiers.toml says 'not "
                "published'); pass tier_usd_per_byte_s or a Tier with usd_per_byte_s")
        return self.usd_per_byte_s


def _err(path: Path, fld: str, msg: str) -> CatalogError:
    return CatalogError(f"{path}: field {fld}: {msg}")


def _parse_tier(name: str, raw: Any, path: Path, sources: Mapping[str, Any]) -> Tier:
    f = f"tiers.{name}"
    if not isinstance(raw, Mapping):
        raise _err(path, f, "must be a table")
    unknown = sorted(set(raw) - set(_TIER_KEYS))
    if unknown:
        raise _err(path, f"{f}.{unknown[0]}", f"unknown key; allowed keys: {', '.join(_TIER_KEYS)}")
    for k in _REQUIRED:
        if k not in raw:
            raise _err(path, f"{f}.{k}", "required key is missing (write \"not published\" "
                                         "where no source gives it)")
    for k in ("title", "capacity_per", "bandwidth_direction", "bandwidth_per"):
        if not isinstance(raw[k], str):
            raise _err(path, f"{f}.{k}", f"must be a string, got {raw[k]!r}")
    if raw["capacity_per"] not in ("gpu", "node", "unbounded"):
        raise _err(path, f"{f}.capacity_per",
                   f"{raw['capacity_per']!r} is not one of gpu, node, unbounded")
    if raw["bandwidth_direction"] not in ("bidirectional", "per_direction"):
        raise _err(path, f"{f}.bandwidth_direction",
                   f"{raw['bandwidth_direction']!r} is not one of bidirectional, per_direction")
    if raw["bandwidth_per"] != "gpu":
        raise _err(path, f"{f}.bandwidth_per", f"{raw['bandwidth_per']!r}: only 'gpu' (a path "
                   "into each GPU) is modelled; divide a shared path's bandwidth by its GPUs")

    def q(key: str) -> float | None:
        unit, lo, hi = _BOUNDS[key]
        if key not in raw:
            return None
        return sourced_quantity(raw[key], f"{f}.{key}", path, unit, lo, hi, sources)

    if raw["capacity_per"] == "unbounded":
        if raw["capacity"] != "unbounded":
            raise _err(path, f"{f}.capacity", "capacity_per = 'unbounded' needs capacity = "
                                              "\"unbounded\"")
        capacity = math.inf
    else:
        capacity = float(q("capacity"))  # type: ignore[arg-type]
    gpn = raw.get("gpus_per_node", 1)
    if raw["capacity_per"] == "node" and "gpus_per_node" not in raw:
        raise _err(path, f"{f}.gpus_per_node", "required when capacity_per = 'node'")
    if isinstance(gpn, bool) or not isinstance(gpn, int) or gpn < 1:
        raise _err(path, f"{f}.gpus_per_node", f"must be a positive integer, got {gpn!r}")
    bw = float(q("read_bandwidth"))  # type: ignore[arg-type]
    if raw["bandwidth_direction"] == "bidirectional":
        bw /= 2.0
    latency = float(q("latency"))  # type: ignore[arg-type]
    if raw["holding_cost"] == "not published":
        holding = None
    elif isinstance(raw["holding_cost"], str):
        raise _err(path, f"{f}.holding_cost", f"string {raw['holding_cost']!r} is not allowed; "
                   "use a {value, unit, source} table or \"not published\"")
    else:
        holding = q("holding_cost")
    price, life = q("purchase_price"), q("service_life")
    if (price is None) != (life is None):
        raise _err(path, f"{f}.{'service_life' if life is None else 'purchase_price'}",
                   "purchase_price and service_life go together")
    if price is not None and life is not None:
        if holding is None or abs(holding - price / life) > 0.01 * price / life:
            raise _err(path, f"{f}.holding_cost",
                       f"{holding!r} USD/B/s is not purchase_price / service_life = "
                       f"{price / life:.4g} USD/B/s ({price / life * 3.6e12:.4g} USD/GB/hour)")
    note = raw.get("note", "")
    used = {k: str(raw[k]["source"]) for k in _BOUNDS if isinstance(raw.get(k), Mapping)}
    return Tier(name=name, title=raw["title"], capacity_bytes=capacity,
                capacity_per=raw["capacity_per"], read_bytes_per_s=bw, latency_s=latency,
                usd_per_byte_s=holding, gpus_per_node=gpn, sources=MappingProxyType(used),
                notes=str(note))


def load_kv_tiers(folder: Path | str | None = None) -> dict[str, Tier]:
    """Read and validate ``kv_tiers.toml`` of a data folder (HBM excluded: see :func:`hbm_tier`).

    Parameters
    ----------
    folder : Path or str, optional
        Folder holding ``kv_tiers.toml`` and its bibliography ``sources*.toml``; default the
        bundled ``price_catalog``.

    Returns
    -------
    dict of str to Tier

    Raises
    ------
    CatalogError
        Naming the file and the field: unknown or missing key, a unit of the wrong dimension,
        an unresolved source, an implausible value, a holding cost that is not the purchase
        price over the service life.

    Examples
    --------
    >>> t = load_kv_tiers()
    >>> t["dram"].read_bytes_per_s / 1e9      # PCIe Gen5 x16: 128 GB/s both ways
    64.0
    """
    return _load_file(folder)[0]


def _load_file(folder: Path | str | None) -> tuple[dict[str, Tier], RetentionDefaults]:
    folder = Path(folder) if folder is not None else catalog_dir("price_catalog")
    path = folder / "kv_tiers.toml"
    data = read_toml(path)
    if data.get("schema") != 1:
        raise _err(path, "schema", f"must be 1, got {data.get('schema')!r}")
    unknown = sorted(set(data) - {"schema", "tiers", "retention"})
    if unknown:
        raise _err(path, unknown[0], "unknown key; allowed: schema, tiers, retention")
    tiers = data.get("tiers")
    if not isinstance(tiers, Mapping) or not tiers:
        raise _err(path, "tiers", "a [tiers.<name>] table per tier is required")
    sources = data_sources(folder)
    out: dict[str, Tier] = {}
    for name, raw in tiers.items():
        if name == "hbm":
            if not isinstance(raw, Mapping) or raw.get("derived_from") != "hardware":
                raise _err(path, "tiers.hbm.derived_from", "HBM comes from the hardware "
                           "catalog: write derived_from = \"hardware\" and no numbers")
            extra = sorted(set(raw) - {"title", "derived_from", "note"})
            if extra:
                raise _err(path, f"tiers.hbm.{extra[0]}", "HBM takes no numbers here (its "
                           "capacity, bandwidth and price come from the hardware catalog)")
            continue
        out[name] = _parse_tier(name, raw, path, sources)
    return out, _parse_retention(data.get("retention"), path, sources)


@dataclass(frozen=True)
class RetentionDefaults:
    """Stated prices :func:`retention_policy` uses when the caller gives none.

    Attributes
    ----------
    miss_usd_per_token : float
        Price of a return that does not find its KV in HBM, per token of the session's context
        [USD/token] (bundled: $8.40 per million tokens, $1.00 for the source's 119K-token
        prefix). A stated assumption, not a measurement: see ``price_catalog/kv_tiers.toml``.
    source : str
        Bibliography key of the figure.
    note : str
        Its reasoning, as the data file gives it.
    """

    miss_usd_per_token: float
    source: str
    note: str


def _parse_retention(raw: Any, path: Path, sources: Mapping[str, Any]) -> RetentionDefaults:
    if raw is None:
        raise _err(path, "retention", "a [retention] table with miss_price (the stated price "
                   "of a KV-cache miss, USD per token of context) is required")
    if not isinstance(raw, Mapping):
        raise _err(path, "retention", "must be a table")
    unknown = sorted(set(raw) - {"miss_price"})
    if unknown:
        raise _err(path, f"retention.{unknown[0]}", "unknown key; allowed: miss_price")
    if "miss_price" not in raw:
        raise _err(path, "retention.miss_price", "required key is missing (USD per token of "
                   "the session's context, e.g. {value = 8.4, unit = \"USD/Mtok\", ...})")
    v = sourced_quantity(raw["miss_price"], "retention.miss_price", path, "USD/token",
                         0.0, 1e-3, sources)
    entry = raw["miss_price"]
    return RetentionDefaults(miss_usd_per_token=float(v), source=str(entry["source"]),
                             note=str(entry.get("note", "")))


def load_retention_defaults(folder: Path | str | None = None) -> RetentionDefaults:
    """Read the ``[retention]`` table of ``kv_tiers.toml`` (the file is validated whole).

    Parameters
    ----------
    folder : Path or str, optional
        Default the bundled ``price_catalog``.

    Returns
    -------
    RetentionDefaults

    Raises
    ------
    CatalogError
        Naming the file and the field (see :func:`load_kv_tiers`).

    Examples
    --------
    >>> d = load_retention_defaults()
    >>> round(d.miss_usd_per_token * 1e6, 2), round(d.miss_usd_per_token * 119_000, 2)
    (8.4, 1.0)
    """
    return _load_file(folder)[1]


@lru_cache(maxsize=1)
def _bundled_retention() -> RetentionDefaults:
    return load_retention_defaults()


@lru_cache(maxsize=1)
def _bundled_tiers() -> Mapping[str, Tier]:
    return MappingProxyType(load_kv_tiers())


def _rental_usd_per_hour(hw: Hardware) -> float:
    from tokenomics.data.specs import rental_price

    return float(rental_price(hw).usd)


def _hardware(hw: Hardware | str) -> Hardware:
    if isinstance(hw, Hardware):
        return hw
    from tokenomics.data.catalog import hardware

    return hardware(hw)


def hbm_usd_per_byte_s(hardware: Hardware | str = "h100-sxm",
                       usd_per_device_hour: float | None = None) -> float:
    """Opportunity cost of holding a byte in HBM for a second [USD/B/s].

    Parameters
    ----------
    hardware : Hardware or str
    usd_per_device_hour : float, optional
        Rental price [USD/hour]; default the catalog's latest rental price of the device
        (:func:`tokenomics.rental_price`).

    Returns
    -------
    float
        :math:`p / (3600\\,C_\\mathrm{HBM})` [USD/B/s].

    Notes
    -----
    A byte of KV held in HBM keeps that byte from serving other requests; renting the device
    buys its whole HBM, so the byte's share of the rent is the price over the capacity. The
    number is not stored in ``kv_tiers.toml`` because it follows the device and its price.

    Examples
    --------
    >>> round(hbm_usd_per_byte_s("h100-sxm") * 1e9 * 3600, 5)    # $3.78/h / 80 GB
    0.04725
    """
    hw = _hardware(hardware)
    p = (_rental_usd_per_hour(hw) if usd_per_device_hour is None
         else _money(usd_per_device_hour, "usd_per_device_hour", "USD/hour"))
    return p / 3600.0 / hw.mem_capacity_bytes


def hbm_tier(hardware: Hardware | str = "h100-sxm",
             usd_per_device_hour: float | None = None) -> Tier:
    """The HBM of a device as a :class:`Tier` (capacity, bandwidth and price from its catalog).

    Examples
    --------
    >>> t = hbm_tier("h100-sxm")
    >>> t.capacity_bytes / 1e9, round(t.usd_per_gb_hour, 5)
    (80.0, 0.04725)
    """
    hw = _hardware(hardware)
    src = {"capacity": hw.sources.get("memory.capacity", ""),
           "read_bandwidth": hw.sources.get("memory.bandwidth", "")}
    if usd_per_device_hour is None:
        from tokenomics.data.specs import rental_price

        src["holding_cost"] = rental_price(hw).source
    return Tier(name="hbm", title=f"{hw.name} HBM", capacity_bytes=hw.mem_capacity_bytes,
                capacity_per="gpu", read_bytes_per_s=hw.mem_bw_bytes_per_s, latency_s=0.0,
                usd_per_byte_s=hbm_usd_per_byte_s(hw, usd_per_device_hour),
                sources=MappingProxyType(src),
                notes="opportunity cost: rental price per hour / HBM capacity")


def kv_tiers(hardware: Hardware | str = "h100-sxm") -> Mapping[str, Tier]:
    """Every KV tier, HBM of ``hardware`` first, then the bundled ``kv_tiers.toml``.

    Examples
    --------
    >>> list(kv_tiers())
    ['hbm', 'dram', 'grace_lpddr', 'ssd', 'network']
    """
    return MappingProxyType({"hbm": hbm_tier(hardware), **_bundled_tiers()})


def tier(name: str | Tier, hardware: Hardware | str = "h100-sxm") -> Tier:
    """One tier by name (``"hbm"``, ``"dram"``, ``"grace_lpddr"``, ``"ssd"``, ``"network"``).

    A :class:`Tier` passes through, so functions taking a tier accept either.

    Raises
    ------
    UnknownEntryError
        For an unknown name, listing the known ones and the closest match.

    Examples
    --------
    >>> tier("ssd").read_bytes_per_s / 1e9
    14.0
    """
    if isinstance(name, Tier):
        return name
    if name == "hbm":
        return hbm_tier(hardware)
    tiers = _bundled_tiers()
    if not isinstance(name, str) or name not in tiers:
        known = ["hbm", *tiers]
        close = difflib.get_close_matches(str(name), known, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else "."
        raise UnknownEntryError(f"unknown KV tier {name!r}{hint} Known tiers: "
                                f"{', '.join(known)}")
    return tiers[name]


def _offload_tier(name: str | Tier, hw: Hardware) -> Tier:
    t = tier(name, hw)
    if t.name == "hbm":
        raise TokenomicsError("tier 'hbm' is where the KV is used, not where it is reloaded "
                              "from; choose an offload tier: " + ", ".join(_bundled_tiers()))
    return t


def _check_capacity(t: Tier, kv_per_device: Any) -> None:
    """A tier must hold what each GPU offloads into it."""
    cap = t.capacity_per_gpu_bytes
    over = np.asarray(kv_per_device, float) > cap
    if np.any(over):
        v = float(np.asarray(kv_per_device, float)[over].flat[0])
        raise DoesNotFitError(
            f"tier {t.name!r} gives each GPU {cap / 1e9:.4g} GB; the KV to hold is "
            f"{v / 1e9:.4g} GB per device: use a larger tier or more devices")


# --------------------------------------------------------------------------------------------
# Reload or recompute (S63)
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ReloadOrRecompute:
    """Reloading a prefix's KV from a tier against recomputing it, per replica.

    Attributes
    ----------
    tier : str
    prefix_tokens : array
        [token]
    kv_bytes_per_device : array
        KV of the prefix one device holds (and reloads) [B].
    reload_s, recompute_s : array
        Reload: latency + bytes / per-GPU bandwidth; recompute: prefill time [s].
    faster : array of str
        ``"reload"`` or ``"recompute"``.
    speedup : array
        ``recompute_s / reload_s``.
    breakeven_tokens : float
        Shortest prefix from which reloading is faster at every longer length up to the model's
        maximum context [token]; 1 when reloading always wins, ``inf`` when it still loses at
        the maximum context.
    """

    tier: str
    prefix_tokens: Any
    kv_bytes_per_device: Any
    reload_s: Any
    recompute_s: Any
    faster: Any
    speedup: Any
    breakeven_tokens: float


def _reload_s(dep: Deployment, t: Tier, tokens: Any, batch: float) -> np.ndarray:
    kv = batch * np.asarray(kv_per_sequence_bytes(dep, tokens), float)
    return np.asarray(t.latency_s + kv / t.read_bytes_per_s, float)


def _breakeven_tokens(dep: Deployment, t: Tier, batch: float, points: int = 160) -> float:
    top = dep.model.max_context
    grid = np.unique(np.round(np.geomspace(1, top, points)))

    def diff(p: Any) -> np.ndarray:
        rec = np.asarray(prefill(dep, p, batch, on_oom="mark").time_s, float)
        return _reload_s(dep, t, p, batch) - rec

    d = diff(grid)
    if d[-1] > 0:
        return math.inf
    loses = np.nonzero(d > 0)[0]
    if loses.size == 0:
        return 1.0
    lo, hi = int(grid[loses[-1]]), int(grid[loses[-1] + 1])   # d(lo) > 0 >= d(hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if float(diff(mid)) > 0:
            lo = mid
        else:
            hi = mid
    return float(hi)


def reload_or_recompute(dep: Deployment, prefix_tokens: Any, tier: str | Tier = "dram",
                        batch: int = 1) -> ReloadOrRecompute:
    """Time to reload a prefix's KV from a tier against recomputing it, and the break-even.

    Parameters
    ----------
    dep : Deployment
    prefix_tokens : int or array_like
        Prefix length per sequence [token], >= 1.
    tier : str or Tier
        Where the KV waits (default ``"dram"``: host memory over PCIe Gen5 x16).
    batch : int
        Sequences reloaded (or recomputed) together, >= 1.

    Returns
    -------
    ReloadOrRecompute
        Scalars in, floats out.

    Raises
    ------
    DoesNotFitError
        When the prefix's KV per device exceeds what the tier gives one GPU (or the prefill
        does not fit the devices).

    Notes
    -----
    :math:`t_\\mathrm{reload} = \\ell + B\\,K_\\mathrm{seq,dev}(P)/\\beta`, with
    :math:`K_\\mathrm{seq,dev}` from :func:`tokenomics.physics.memory.kv_per_sequence_bytes` (KV heads
    replicated under tensor parallelism are reloaded by each device holding them) and
    :math:`\\beta` the tier's bandwidth **per GPU** (each device loads its shard over its own
    PCIe link, C2C link, drive or NIC, in parallel). :math:`t_\\mathrm{recompute}` is
    :func:`tokenomics.prefill` of the prefix (cold). The break-even is found on a logarithmic
    grid of prefix lengths up to the model's maximum context and refined by bisection.

    References
    ----------
    .. [1] Seed digest S63: "reloading KV from DRAM or SSD usually beats recomputing it".
    .. [2] R. Qin et al., Mooncake, arXiv:2407.00079, 2024.

    Examples
    --------
    >>> import tokenomics as tk
    >>> r = reload_or_recompute(tk.Deployment("llama-3.1-8b", "h100-sxm"), 32_768)
    >>> r.faster, round(r.reload_s, 3), r.breakeven_tokens    # 4.3 GB over 64 GB/s
    ('reload', 0.067, 1.0)
    """
    P = V.counts(prefix_tokens, "prefix_tokens", unit="token")
    b = float(_one(batch, "batch"))
    t = _offload_tier(tier, dep.hardware)
    V.context_within(dep.model, P, dep.allow_beyond_max_context, "prefix_tokens")
    kv = b * np.asarray(kv_per_sequence_bytes(dep, P), float)
    _check_capacity(t, kv)
    recompute = np.asarray(prefill(dep, P, b).time_s, float)
    reload = _reload_s(dep, t, P, b)
    S = V.scalar_or_array
    faster = np.where(reload <= recompute, "reload", "recompute")
    return ReloadOrRecompute(
        tier=t.name, prefix_tokens=S(P), kv_bytes_per_device=S(kv), reload_s=S(reload),
        recompute_s=S(recompute), faster=faster.item() if faster.ndim == 0 else faster,
        speedup=S(recompute / reload), breakeven_tokens=_breakeven_tokens(dep, t, b))


# --------------------------------------------------------------------------------------------
# Gap distribution
# --------------------------------------------------------------------------------------------
def lognormal_params(median_s: float = GAP_MEDIAN_S,
                     mean_to_median: float = GAP_MEAN_TO_MEDIAN) -> tuple[float, float]:
    """Lognormal :math:`(\\mu, \\sigma)` with a given median and mean-to-median ratio.

    Parameters
    ----------
    median_s : float
        Median [s], > 0. Default 25 minutes (S62).
    mean_to_median : float
        Mean over median, > 1. Default 15 (S60: "the mean can be up to 15x the median").

    Returns
    -------
    (float, float)
        :math:`\\mu = \\ln m`, :math:`\\sigma = \\sqrt{2 \\ln(\\bar g / m)}`.

    Notes
    -----
    A lognormal has median :math:`e^\\mu` and mean :math:`e^{\\mu + \\sigma^2/2}`, so the ratio
    is :math:`e^{\\sigma^2/2}`.

    References
    ----------
    .. [1] J. Aitchison, J. A. C. Brown, "The Lognormal Distribution", 1957.

    Examples
    --------
    >>> mu, sigma = lognormal_params()
    >>> round(math.exp(mu) / 60, 6), round(sigma, 4)      # 25 min, sqrt(2 ln 15)
    (25.0, 2.3273)
    """
    m_arr = V.positive(median_s, "median_s", "s")
    r_arr = to_array(as_magnitude(mean_to_median, "count", "mean_to_median"), "mean_to_median")
    if m_arr.size != 1 or r_arr.size != 1:
        raise TokenomicsError("median_s and mean_to_median must be single numbers, got "
                              f"{median_s!r} and {mean_to_median!r}")
    m, r = float(m_arr.reshape(())), float(r_arr.reshape(()))
    if not (math.isfinite(r) and r > 1.0):
        raise TokenomicsError(f"mean_to_median must be > 1 (a right-skewed gap; 1 would be a "
                              f"point mass), got {V.fmt(r)}")
    return math.log(m), math.sqrt(2.0 * math.log(r))


def _times(t: Any, name: str = "t_s") -> np.ndarray:
    arr = to_array(as_magnitude(t, "s", name), name)
    bad = np.isnan(arr) | (arr < 0)
    if bad.any():
        raise TokenomicsError(f"{name} must be >= 0 seconds (inf allowed), got "
                              f"{V.fmt(arr[bad].flat[0])}")
    return arr


@dataclass(frozen=True)
class GapDistribution:
    """Lognormal distribution of the idle gap between two requests of a session.

    Attributes
    ----------
    mu, sigma : float
        Parameters of :math:`\\ln G` (:math:`G` in seconds).

    Examples
    --------
    >>> g = GapDistribution.from_median_mean()
    >>> round(g.median_s / 60, 6), round(g.mean_s / 60, 6)
    (25.0, 375.0)
    >>> round(float(g.cdf(600)), 3)            # back within 10 minutes
    0.347
    """

    mu: float
    sigma: float

    def __post_init__(self) -> None:
        if not (math.isfinite(self.mu) and math.isfinite(self.sigma) and self.sigma > 0):
            raise TokenomicsError(f"GapDistribution needs a finite mu and sigma > 0, got "
                                  f"mu={self.mu!r}, sigma={self.sigma!r}")

    @classmethod
    def from_median_mean(cls, median_s: float = GAP_MEDIAN_S,
                         mean_to_median: float = GAP_MEAN_TO_MEDIAN) -> GapDistribution:
        """Fit to a median [s] and a mean-to-median ratio (:func:`lognormal_params`)."""
        return cls(*lognormal_params(median_s, mean_to_median))

    @property
    def median_s(self) -> float:
        """:math:`e^\\mu` [s]."""
        return math.exp(self.mu)

    @property
    def mean_s(self) -> float:
        """:math:`e^{\\mu + \\sigma^2/2}` [s]."""
        return math.exp(self.mu + self.sigma ** 2 / 2)

    def _z(self, t: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return (np.log(t) - self.mu) / self.sigma

    def cdf(self, t_s: Any) -> Any:
        """:math:`P(G \\le t)`, vectorized [probability]."""
        return V.scalar_or_array(special.ndtr(self._z(_times(t_s))))

    def sf(self, t_s: Any) -> Any:
        """:math:`P(G > t)` [probability]."""
        return V.scalar_or_array(special.ndtr(-self._z(_times(t_s))))

    def hazard(self, t_s: Any) -> Any:
        """Return rate of a user still away at ``t``, :math:`f(t)/(1-F(t))` [1/s].

        Computed in logs (:math:`\\log \\phi(z) - \\log \\sigma t - \\log \\Phi(-z)`) so the far
        tail does not divide zero by zero; 0 at ``t = 0`` and ``t = inf``.
        """
        t = _times(t_s)
        z = self._z(t)
        with np.errstate(divide="ignore", invalid="ignore"):
            log_h = (-0.5 * z ** 2 - 0.5 * math.log(2 * math.pi) - np.log(self.sigma * t)
                     - special.log_ndtr(-z))
            h = np.where((t > 0) & np.isfinite(t), np.exp(log_h), 0.0)
        return V.scalar_or_array(h)

    def expected_min(self, t_s: Any) -> Any:
        """:math:`E[\\min(G, t)]`, the expected time a KV held until ``t`` is held [s].

        .. math::
           E[\\min(G,t)] = e^{\\mu+\\sigma^2/2}\\,\\Phi\\!\\left(\\frac{\\ln t-\\mu-\\sigma^2}
           {\\sigma}\\right) + t\\left(1 - \\Phi\\!\\left(\\frac{\\ln t - \\mu}{\\sigma}\\right)\\right)

        (the partial expectation :math:`E[G; G \\le t]` plus :math:`t\\,P(G > t)`); 0 at
        ``t = 0``, the mean at ``t = inf``.

        Examples
        --------
        >>> g = GapDistribution.from_median_mean()
        >>> round(float(g.expected_min(600)), 1)     # a 10-minute hold lasts 7.8 min on average
        465.1
        """
        t = _times(t_s)
        z = self._z(t)
        with np.errstate(invalid="ignore"):
            tail = np.where(np.isfinite(t), t * special.ndtr(-z), 0.0)
        out = self.mean_s * special.ndtr(z - self.sigma) + np.where(t > 0, tail, 0.0)
        return V.scalar_or_array(np.asarray(out, float))


# --------------------------------------------------------------------------------------------
# Retention policy (S62)
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RetentionPolicy:
    """The cheapest keep-in-HBM / offload / drop policy for one idle gap.

    Attributes
    ----------
    t1_s : float
        HBM residence before offloading [s] (0: offload at once; ``inf``: never leave HBM).
    t2_s : float
        Time the KV is dropped [s], >= ``t1_s`` (``t2 == t1``: dropped without offloading;
        ``inf``: never dropped).
    expected_cost_usd : float
        Expected cost of one gap under the policy [USD].
    keep_cost_usd, offload_now_cost_usd, drop_now_cost_usd : float
        The same for "keep in HBM until the user returns", "offload at once and keep in the
        tier" and "drop at once" [USD].
    p_hbm_hit, p_reload, p_recompute : float
        Probabilities that the returning user finds the KV in HBM, in the tier, or gone.
    tier : str
    kv_bytes : float
        KV held in HBM, all devices [B].
    hbm_usd_per_s, tier_usd_per_s : float
        Holding cost of the whole KV [USD/s].
    reload_s, recompute_s : float
        [s]
    reload_usd, recompute_usd : float
        Cost of one reload or recompute, penalties included [USD].
    miss_usd : float
        The per-miss penalty included in both [USD].
    hbm_hazard_threshold_per_s, drop_hazard_threshold_per_s : float
        :math:`(c_H - c_T)/R_r` and :math:`c_T/(R_c - R_r)` [1/s]: the return rates at which
        moving on pays (``inf`` when it never does).
    t_grid_s, cost_curve_usd : ndarray
        Candidate ``t1`` [s] and the expected cost with the best ``t2`` for each [USD].
    gap : GapDistribution
    """

    t1_s: float
    t2_s: float
    expected_cost_usd: float
    keep_cost_usd: float
    offload_now_cost_usd: float
    drop_now_cost_usd: float
    p_hbm_hit: float
    p_reload: float
    p_recompute: float
    tier: str
    kv_bytes: float
    hbm_usd_per_s: float
    tier_usd_per_s: float
    reload_s: float
    recompute_s: float
    reload_usd: float
    recompute_usd: float
    miss_usd: float
    hbm_hazard_threshold_per_s: float
    drop_hazard_threshold_per_s: float
    t_grid_s: np.ndarray = field(repr=False)
    cost_curve_usd: np.ndarray = field(repr=False)
    gap: GapDistribution = field(repr=False, default_factory=GapDistribution.from_median_mean)
    tier_kv_bytes: float = math.nan
    hbm_capacity_bytes: float = math.nan
    tier_capacity_bytes: float = math.nan

    def occupancy(self, idle_gaps_per_s: Any) -> RetentionOccupancy:
        """Mean KV a stream of idle gaps keeps in HBM and in the tier under this policy.

        Parameters
        ----------
        idle_gaps_per_s : float or array_like
            Rate at which sessions on the replica go idle [1/s], >= 0: sessions over the
            mean length of one request cycle (gap plus active time); e.g. 100 sessions with
            a 375-minute mean gap and little active time, ~100 / 22,500 s.

        Returns
        -------
        RetentionOccupancy

        Notes
        -----
        Little's law, :math:`L = \\lambda W`: a gap holds the KV in HBM for
        :math:`\\min(G, t_1)` and in the tier for :math:`\\min(G, t_2) - \\min(G, t_1)`, so on
        average :math:`\\lambda E[\\min(G, t_1)]` sessions sit in HBM and
        :math:`\\lambda (E[\\min(G, t_2)] - E[\\min(G, t_1)])` in the tier. Fractions are of
        the replica's physical HBM (devices x capacity; weights included, so the room for idle
        KV is less) and of the tier capacity its GPUs reach.

        References
        ----------
        .. [1] J. D. C. Little, "A proof for the queuing formula L = lambda W", Operations
           Research 9(3), 1961.

        Examples
        --------
        >>> import tokenomics as tk
        >>> p = retention_policy(tk.Deployment("llama-3.1-70b", "h100-sxm", tp=8), 119_000)
        >>> o = p.occupancy(100 / 22_500)           # ~100 sessions on the replica
        >>> round(o.sessions_in_hbm, 2), round(o.sessions_in_tier, 1)   # in HBM, in DRAM
        (1.46, 15.7)
        >>> round(o.tier_fraction, 2)             # of the 8 GPUs' 2 TB of host DRAM
        0.31
        """
        lam = V.non_negative(idle_gaps_per_s, "idle_gaps_per_s", "1/s")
        e1 = float(self.gap.expected_min(self.t1_s))
        e2 = float(self.gap.expected_min(self.t2_s))
        in_hbm, in_tier = lam * e1, lam * (e2 - e1)
        S = V.scalar_or_array
        return RetentionOccupancy(
            sessions_in_hbm=S(in_hbm), sessions_in_tier=S(in_tier),
            hbm_bytes=S(in_hbm * self.kv_bytes), tier_bytes=S(in_tier * self.tier_kv_bytes),
            hbm_fraction=S(in_hbm * self.kv_bytes / self.hbm_capacity_bytes),
            tier_fraction=S(in_tier * self.tier_kv_bytes / self.tier_capacity_bytes))

    def miss_usd_for_hbm_residence(self, t_s: Any) -> Any:
        """Per-miss penalty that makes ``t_s`` the optimal HBM residence [USD].

        From the first-order condition :math:`\\lambda(t_1) = (c_H - c_T)/(R_r^0 + m)` with
        :math:`R_r^0` the reload cost without penalty: :math:`m = (c_H - c_T)/\\lambda(t) -
        R_r^0`. Meaningful where the hazard falls with ``t`` (beyond its early peak).

        Examples
        --------
        >>> import tokenomics as tk
        >>> p = retention_policy(tk.Deployment("llama-3.1-70b", "h100-sxm", tp=8), 119_000)
        >>> [round(float(m), 2) for m in p.miss_usd_for_hbm_residence([300, 600])]
        [0.85, 1.26]
        """
        lam = _times(t_s)
        h = np.asarray(self.gap.hazard(lam), float)
        base = self.reload_usd - self.miss_usd
        with np.errstate(divide="ignore"):
            m = np.where(h > 0, (self.hbm_usd_per_s - self.tier_usd_per_s) / h - base, np.inf)
        return V.scalar_or_array(m)

    def to_frame(self) -> pd.DataFrame:
        """Cost curve: ``t1_s``, ``t1_min``, ``expected_cost_usd`` (best ``t2`` per ``t1``)."""
        return pd.DataFrame({"t1_s": self.t_grid_s, "t1_min": self.t_grid_s / 60.0,
                             "expected_cost_usd": self.cost_curve_usd})


@dataclass(frozen=True)
class RetentionOccupancy:
    """Mean KV held by idle sessions under a retention policy (Little's law).

    Attributes
    ----------
    sessions_in_hbm, sessions_in_tier : float or ndarray
        Mean number of idle sessions whose KV sits in HBM / in the tier [sessions].
    hbm_bytes, tier_bytes : float or ndarray
        Mean bytes held there, over the replica [B].
    hbm_fraction, tier_fraction : float or ndarray
        Of the replica's physical HBM and of the tier capacity its GPUs reach; above 1 the
        policy does not fit the memory it assumes.
    """

    sessions_in_hbm: Any
    sessions_in_tier: Any
    hbm_bytes: Any
    tier_bytes: Any
    hbm_fraction: Any
    tier_fraction: Any


def _refine(f: Any, grid: np.ndarray, i: int, lo: float = 0.0,
            hi: float = math.inf) -> tuple[float, float]:
    """Grid point ``i`` of ``f`` refined by bounded Brent search between its neighbours,
    within ``[lo, hi]``; ``(t, f(t))``."""
    t, v = float(grid[i]), float(f(np.asarray(grid[i])))
    if 0 < i < len(grid) - 1 and np.isfinite(grid[i + 1]):
        a, b = max(float(grid[i - 1]), lo), min(float(grid[i + 1]), hi)
        if b > a:
            r = optimize.minimize_scalar(lambda x: float(f(np.asarray(x))), method="bounded",
                                         bounds=(a, b), options={"xatol": 1e-3})
            if r.success and float(r.fun) < v:
                t, v = float(r.x), float(r.fun)
    return t, v


def retention_policy(dep: Deployment, context_tokens: Any = None, *, kv_bytes: Any = None,
                     tier: str | Tier = "dram", hbm_usd_per_byte_s: Any = None,
                     tier_usd_per_byte_s: Any = None, usd_per_device_hour: Any = None,
                     gap: GapDistribution | None = None, wait_usd_per_s: Any = 0.0,
                     miss_usd: Any = None, reload_usd: Any = None,
                     recompute_usd: Any = None) -> RetentionPolicy:
    """Cheapest policy for a session's KV over an idle gap: keep in HBM until ``t1``, then in
    a cheaper tier until ``t2``, then drop.

    Parameters
    ----------
    dep : Deployment
        The replica the session runs on (its devices' price, bandwidths and prefill).
    context_tokens : int, optional
        Tokens in the session's KV [token]. Required unless ``kv_bytes`` is given (then it is
        ``kv_bytes`` over the model's KV bytes per token, for the recompute time).
    kv_bytes : float, optional
        KV held in HBM over all devices [B]; default from ``context_tokens`` (replicated heads
        included, as they occupy HBM). The tier holds one copy, ``kv_bytes / kv_replication``.
    tier : str or Tier
        Offload tier (default ``"dram"``).
    hbm_usd_per_byte_s : float, optional
        HBM holding cost [USD/B/s]; default the device-hour price over the HBM capacity
        (:func:`hbm_usd_per_byte_s`).
    tier_usd_per_byte_s : float, optional
        Offload tier's holding cost [USD/B/s]; default the tier's sourced figure.
    usd_per_device_hour : float, optional
        Price of one device-hour [USD/hour]; default the catalog's latest rental price
        (H100 SXM: $3.78, Lambda, 2026-05). Prices the GPU time of reloads and recomputes and,
        unless ``hbm_usd_per_byte_s`` is given, the HBM.
    gap : GapDistribution, optional
        Default lognormal with median 25 minutes and mean 15 x the median (S60, S62).
    wait_usd_per_s : float
        Penalty per second the returning user waits for a reload or recompute [USD/s]
        (default 0).
    miss_usd : float, optional
        Penalty per return that does not find the KV in HBM [USD]. Default: the stated price
        of ``price_catalog/kv_tiers.toml`` (``[retention] miss_price``, $8.40 per million
        tokens of context; :func:`load_retention_defaults`) times the session's context
        tokens: $1.00 for a 119K-token agent prefix. Pass ``0`` for GPU-time-only accounting.
    reload_usd, recompute_usd : float, optional
        Replace the computed cost of one reload / recompute, penalties included [USD].

    Returns
    -------
    RetentionPolicy

    Notes
    -----
    Minimises :math:`C(t_1, t_2)` of the module notes. With
    :math:`A(t) = (c_H - c_T) E[\\min(G,t)] - R_r F(t)` and
    :math:`B(t) = c_T E[\\min(G,t)] + (R_r - R_c) F(t) + R_c`, :math:`C = A(t_1) + B(t_2)`:
    :math:`A(t_1) + \\min_{t_2 \\ge t_1} B(t_2)` is minimised on a grid (0, 560 points from
    1 s to 365 days, and inf) and refined by bounded Brent search between grid neighbours; when
    the best :math:`t_2` is :math:`t_1` itself the policy is "drop without offloading" and
    :math:`A + B` is refined along :math:`t_1 = t_2`.

    :math:`R_r = t_r (n p + w) + m` and :math:`R_c = t_c (n p + w) + m` with :math:`t_r`,
    :math:`t_c` from :func:`reload_or_recompute` (cold prefill of the whole context),
    :math:`n` devices at :math:`p` USD/s, wait penalty :math:`w` and miss penalty :math:`m`.
    Writing the KV out at :math:`t_1` is an asynchronous DMA and is not charged.

    **The source's 5-10 minute golden time (S62), and the price it needs.** GPU time alone
    (``miss_usd=0``: H100 at $3.78/h, so HBM $0.0473/GB-hour; host DRAM $2.28e-4/GB-hour)
    offloads the 39 GB of a 119K-token Llama 3.1 70B session at once (``t1 = 0``) and drops it
    after ~3 hours: a DRAM reload costs 1.25 s of the KV's HBM rent, and users come back far
    more rarely than that. ``t1`` lands in 5-10 minutes when a miss costs $0.85-1.26 (28-41
    minutes of that HBM rent; :meth:`RetentionPolicy.miss_usd_for_hbm_residence`). The
    bundled default states $8.40 per million context tokens ($1.00 for this session: 6.7
    minutes) -- the source's rule turned into a price, labelled an assumption in
    ``kv_tiers.toml``, not a measured cost. Because that default scales with the context like
    the HBM rent does, the default golden time does not depend on the session's length.

    References
    ----------
    .. [1] Seed digest S62: median gap 25 min, ~40 GB held, HBM "golden time" of 5-10 min.
    .. [2] Seed digest S60: heavy-tailed agent workload, mean up to 15x the median.

    Examples
    --------
    >>> import tokenomics as tk
    >>> d = tk.Deployment("llama-3.1-70b", "h100-sxm", tp=8)
    >>> p = retention_policy(d, 119_000)                  # stated default: $1.00 per miss
    >>> round(p.miss_usd, 2), round(p.t1_s / 60, 1), round(p.t2_s / 3600, 1)
    (1.0, 6.7, 3.2)
    >>> q = retention_policy(d, 119_000, miss_usd=0)     # GPU time only: offload at once
    >>> q.t1_s, round(q.t2_s / 3600, 1)
    (0.0, 3.2)
    """
    hw = dep.hardware
    t = _offload_tier(tier, hw)
    g = GapDistribution.from_median_mean() if gap is None else gap
    if not isinstance(g, GapDistribution):
        raise TokenomicsError(f"gap must be a GapDistribution, got {type(gap).__name__}")
    if context_tokens is None and kv_bytes is None:
        raise TokenomicsError("give context_tokens (tokens in the session's KV) or kv_bytes")
    n = dep.n_devices
    if kv_bytes is not None:
        k_arr = V.positive(kv_bytes, "kv_bytes", "B")
        if k_arr.size != 1:
            raise TokenomicsError(f"kv_bytes must be a single number [B], got {kv_bytes!r}")
        K = float(k_arr.reshape(()))
    if context_tokens is not None:
        C = float(_one(context_tokens, "context_tokens", unit="token"))
        V.context_within(dep.model, np.asarray(C), dep.allow_beyond_max_context)
        if kv_bytes is None:
            K = float(kv_per_sequence_bytes(dep, C)) * n
    else:
        C = float(max(1, round(K / dep.kv_replication
                               / kv_bytes_per_token(dep.model, dep.kv_dtype))))
    p_hour = (_rental_usd_per_hour(hw) if usd_per_device_hour is None
              else _money(usd_per_device_hour, "usd_per_device_hour", "USD/hour"))
    h_H = (p_hour / 3600.0 / hw.mem_capacity_bytes if hbm_usd_per_byte_s is None
           else _money(hbm_usd_per_byte_s, "hbm_usd_per_byte_s", "USD/B/s"))
    h_T = (t.holding_usd_per_byte_s() if tier_usd_per_byte_s is None
           else _money(tier_usd_per_byte_s, "tier_usd_per_byte_s", "USD/B/s"))
    w = _money(wait_usd_per_s, "wait_usd_per_s", "USD/s")
    m = (C * _bundled_retention().miss_usd_per_token if miss_usd is None
         else _money(miss_usd, "miss_usd", "USD"))
    _check_capacity(t, K / n)
    t_r = t.latency_s + K / n / t.read_bytes_per_s
    t_c = float(prefill(dep, C).time_s)
    gpu_usd_per_s = n * p_hour / 3600.0
    R_r = (t_r * (gpu_usd_per_s + w) + m if reload_usd is None
           else _money(reload_usd, "reload_usd", "USD"))
    R_c = (t_c * (gpu_usd_per_s + w) + m if recompute_usd is None
           else _money(recompute_usd, "recompute_usd", "USD"))
    c_H = h_H * K
    c_T = h_T * K / dep.kv_replication

    def A(x: Any) -> np.ndarray:
        return np.asarray((c_H - c_T) * g.expected_min(x) - R_r * g.cdf(x), float)

    def Bf(x: Any) -> np.ndarray:
        return np.asarray(c_T * g.expected_min(x) + (R_r - R_c) * g.cdf(x) + R_c, float)

    grid = np.concatenate([[0.0], np.geomspace(1.0, 365 * 86400.0, 560), [np.inf]])
    Ag, Bg = A(grid), Bf(grid)
    best_b = np.minimum.accumulate(Bg[::-1])[::-1]       # min over t2 >= t1, per t1
    curve = Ag + best_b
    i = int(np.argmin(curve))
    j = i + int(np.argmin(Bg[i:]))
    if j > i:     # offload at t1, drop at t2
        t2, b2 = _refine(Bf, grid, j, lo=float(grid[i]))
        t1, a1 = _refine(A, grid, i, hi=t2)
        cost = a1 + b2
    else:         # offloading does not pay: hold in HBM, then drop
        t1, cost = _refine(lambda x: A(x) + Bf(x), grid, i)
        t2 = t1
    F1, F2 = float(g.cdf(t1)), float(g.cdf(t2))
    thr_h = (c_H - c_T) / R_r if R_r > 0 else math.inf
    thr_d = c_T / (R_c - R_r) if R_c > R_r else math.inf
    return RetentionPolicy(
        t1_s=t1, t2_s=t2, expected_cost_usd=float(cost),
        keep_cost_usd=c_H * g.mean_s, offload_now_cost_usd=R_r + c_T * g.mean_s,
        drop_now_cost_usd=R_c, p_hbm_hit=F1, p_reload=F2 - F1, p_recompute=1.0 - F2,
        tier=t.name, kv_bytes=K, hbm_usd_per_s=c_H, tier_usd_per_s=c_T, reload_s=t_r,
        recompute_s=t_c, reload_usd=R_r, recompute_usd=R_c, miss_usd=m,
        hbm_hazard_threshold_per_s=thr_h, drop_hazard_threshold_per_s=thr_d,
        t_grid_s=grid, cost_curve_usd=curve, gap=g, tier_kv_bytes=K / dep.kv_replication,
        hbm_capacity_bytes=n * hw.mem_capacity_bytes,
        tier_capacity_bytes=n * t.capacity_per_gpu_bytes)


# --------------------------------------------------------------------------------------------
# One agent step (S61)
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class AgentStep:
    """Time and cost of one agent step on a cached prefix, per sequence of the batch.

    Attributes
    ----------
    cached_tokens, new_tokens, output_tokens, batch : int
    midfill_s : float
        Prefill of the new tokens on the cached prefix; it emits the first output token [s].
    decode_s : float
        The ``output_tokens - 1`` decode steps at the growing context [s].
    time_s : float
        ``midfill_s + decode_s`` [s].
    prefix_kv_read_s : float
        Time the devices spend reading the cached prefix's KV over the step: its bytes per
        device over the achieved memory bandwidth, once in the midfill and once per decode
        step [s].
    prefix_kv_share : float
        ``prefix_kv_read_s / time_s``: the share of the step's time, hence of its rental cost,
        spent re-reading the prefix.
    usd : float
        Rental cost of the step for one sequence: ``time_s`` x devices x price / batch [USD].
    """

    cached_tokens: int
    new_tokens: int
    output_tokens: int
    batch: int
    midfill_s: float
    decode_s: float
    time_s: float
    prefix_kv_read_s: float
    prefix_kv_share: float
    usd: float


def agent_step(dep: Deployment, cached_tokens: int = AGENT_STEP_TOKENS[0],
               new_tokens: int = AGENT_STEP_TOKENS[1], output_tokens: int = AGENT_STEP_TOKENS[2],
               batch: int = 1, usd_per_device_hour: float | None = None) -> AgentStep:
    """Cost one agent step: a midfill on a cached prefix, then decode at the growing context.

    Parameters
    ----------
    dep : Deployment
    cached_tokens : int
        Prefix already in the KV cache [token] (S61: 119,000).
    new_tokens : int
        New input tokens (tool results, the user's message) [token], >= 1 (S61: 875).
    output_tokens : int
        Tokens generated [token], >= 1 (S61: 214).
    batch : int
        Agents stepping together on the replica, each with such a prefix.
    usd_per_device_hour : float, optional
        Default the catalog's latest rental price of the device.

    Returns
    -------
    AgentStep

    Notes
    -----
    Midfill: :func:`tokenomics.prefill` of ``cached + new`` tokens with ``cached`` cached. Decode
    step :math:`k = 1 \\ldots O-1` reads a cache of :math:`c + n + k - 1` tokens. The prefix
    read time per decode step is :math:`B\\,K_\\mathrm{seq,dev}(c)/(\\beta\\,\\mathrm{MBU})`
    (the prefix's part of the attention operator's KV bytes); in the compute-bound midfill the
    same bytes are counted once (over all pipeline stages), an upper bound on their share.
    The cost share equals the time share because a rented replica costs the same every second
    (S61: "at cloud rental prices about 60% of the cost reads the prefix").

    References
    ----------
    .. [1] Seed digest S61: a typical step reads a ~119K-token cached prefix, adds 875 tokens
       and emits 214; prefix reads are ~60% of the cost.

    Examples
    --------
    >>> import tokenomics as tk
    >>> d = tk.Deployment("llama-3.1-70b", "h100-sxm", tp=8, weight_dtype="fp8",
    ...                   compute_dtype="fp8")
    >>> s = agent_step(d, batch=4)
    >>> round(s.prefix_kv_share, 2), round(s.time_s, 2)
    (0.62, 2.0)
    """
    c = _one(cached_tokens, "cached_tokens", minimum=0, unit="token")
    n_new = _one(new_tokens, "new_tokens", unit="token")
    o = _one(output_tokens, "output_tokens", unit="token")
    B = _one(batch, "batch")
    p_hour = (_rental_usd_per_hour(dep.hardware) if usd_per_device_hour is None
              else _money(usd_per_device_hour, "usd_per_device_hour", "USD/hour"))
    mid = float(prefill(dep, c + n_new, B, cached_tokens=c).time_s)
    if o > 1:
        ctx = c + n_new + np.arange(o - 1, dtype=float)
        dec = float(np.sum(decode(dep, B, ctx).time_s))
    else:
        dec = 0.0
    bw = dep.hardware.mem_bw_bytes_per_s * dep.efficiency.mbu
    per_step = B * float(kv_per_sequence_bytes(dep, c)) / bw
    prefix = per_step * dep.pp + per_step * (o - 1)
    total = mid + dec
    return AgentStep(cached_tokens=c, new_tokens=n_new, output_tokens=o, batch=B,
                     midfill_s=mid, decode_s=dec, time_s=total, prefix_kv_read_s=prefix,
                     prefix_kv_share=prefix / total,
                     usd=total * dep.n_devices * p_hour / 3600.0 / B)


__all__ = [
    "AGENT_STEP_TOKENS", "AgentStep", "GAP_MEAN_TO_MEDIAN", "GAP_MEDIAN_S", "GapDistribution",
    "ReloadOrRecompute", "RetentionDefaults", "RetentionOccupancy", "RetentionPolicy", "Tier",
    "agent_step",
    "hbm_tier", "hbm_usd_per_byte_s", "kv_tiers", "load_kv_tiers", "load_retention_defaults",
    "lognormal_params",
    "reload_or_recompute", "retention_policy", "tier",
]
