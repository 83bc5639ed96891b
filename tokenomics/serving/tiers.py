"""KV-cache memory tiers, and reloading a prefix's KV from one against recomputing it.

A session's KV can stay in HBM, wait in a cheaper tier (host DRAM, Grace LPDDR over C2C, local
NVMe, networked storage) and be reloaded when the session resumes, or be dropped and recomputed.
This module loads and validates the tiers (``price_catalog/kv_tiers.toml``) and compares
reloading a prefix with recomputing it (S63). What holding the KV costs over an idle gap, and
when to move it, is an economic decision: :mod:`tokenomics.economics.retention`.

Notes
-----
**Tiers.** Each tier has a capacity, a bandwidth into one GPU's HBM per direction [B/s], a
latency floor [s] and a holding cost per byte-second [USD/B/s]. HBM's holding cost is an
opportunity cost computed here, not stored: the device's rental price per hour over its HBM
capacity, :math:`h_H = p / (3600\\,C_\\mathrm{HBM})` (H100 SXM at $3.78/h: $0.0473 per
GB-hour, about 200 times host DRAM's amortised $2.3e-4). A tier's stored holding cost is its
purchase price over its service life where both are given (checked to 1%).

**Reload or recompute** a prefix of :math:`P` tokens on a replica of :math:`n` devices:
:math:`t_\\mathrm{reload} = \\ell + K_\\mathrm{dev}(P)/\\beta` [s] with :math:`K_\\mathrm{dev}`
the KV bytes one device holds and :math:`\\beta` the tier's bandwidth into one GPU (every device
loads its own shard in parallel); :math:`t_\\mathrm{recompute}` is the prefill of :math:`P`
tokens. Reload grows linearly in :math:`P`; recompute has a floor (the weights are read at least
once) and then grows like :math:`(2 N P + n_q (d_k + d_v) L\\,P(P+1))/\\Pi` (matmul parameters
:math:`N`, causal attention, peak FLOP/s :math:`\\Pi`). When the tier's time per token,
:math:`k/\\beta` (KV bytes per token per device over bandwidth), is below :math:`2N/\\Pi`,
reload wins at every length (host DRAM: 2.05 us against 14.1 us per token for Llama 3.1 8B on
an H100); otherwise recompute wins in a middle band and reload again beyond
:math:`P^* + 1 = \\Pi\\,(k/\\beta - 2N/\\Pi) / (n_q (d_k + d_v) L)`.

References
----------
.. [1] AI Frontier Korea, "EP 112. What Happens Inside an AI Chip: From KV Cache to Roofline",
   2026, sections 8.2-8.4 (seed digest S60-S63).
.. [2] R. Qin et al., "Mooncake: A KVCache-centric Disaggregated Architecture for LLM
   Serving", arXiv:2407.00079, 2024 (KV pool in CPU DRAM and SSD).
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

from tokenomics.core import checks as V
from tokenomics.core.errors import (
    CatalogError,
    DoesNotFitError,
    NotPublishedError,
    TokenomicsError,
    UnknownEntryError,
)
from tokenomics.core.units import Result
from tokenomics.data.bibliography import catalog_dir, data_sources, read_toml
from tokenomics.data.boundary import inputs
from tokenomics.data.catalog import hardware as _catalog_hardware
from tokenomics.data.deployment import Deployment
from tokenomics.data.kinds import KV_TIER, RETENTION
from tokenomics.data.rentals import rental_price
from tokenomics.data.schema import check_entry
from tokenomics.data.specs import Hardware
from tokenomics.physics.memory import kv_per_sequence_bytes
from tokenomics.physics.step import prefill


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
    """One ``[tiers.<name>]`` table as a :class:`Tier` (bandwidth per direction), checked
    against :data:`tokenomics.data.kinds.KV_TIER`."""
    v = check_entry(KV_TIER, raw, path, f"tiers.{name}", sources)
    bw = float(v["read_bandwidth"])
    if v["bandwidth_direction"] == "bidirectional":
        bw /= 2.0
    capacity = math.inf if v["capacity"] == "unbounded" else float(v["capacity"])
    return Tier(name=name, title=v["title"], capacity_bytes=capacity,
                capacity_per=v["capacity_per"], read_bytes_per_s=bw, latency_s=v["latency"],
                usd_per_byte_s=v["holding_cost"], gpus_per_node=v["gpus_per_node"] or 1,
                sources=MappingProxyType(dict(v["_sources"])), notes=str(v["note"] or ""))


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
    return read_kv_tiers_file(folder)[0]


def read_kv_tiers_file(folder: Path | str | None
                       ) -> tuple[dict[str, Tier], tuple[float, str, str]]:
    """Validate the whole ``kv_tiers.toml``: its tiers (HBM excluded) and its stated miss price
    ``(USD/token, source key, note)``, which the retention policy reads."""
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


def _parse_retention(raw: Any, path: Path, sources: Mapping[str, Any]) -> tuple[float, str, str]:
    """The ``[retention]`` table (:data:`tokenomics.data.kinds.RETENTION`): miss price
    [USD/token], its source key and its note."""
    if raw is None:
        raise _err(path, "retention", "a [retention] table with miss_price (the stated price "
                   "of a KV-cache miss, USD per token of context) is required")
    v = check_entry(RETENTION, raw, path, "retention", sources)
    return float(v["miss_price"]), v["_sources"]["miss_price"], v["_notes"]["miss_price"]


@lru_cache(maxsize=1)
def _bundled_tiers() -> Mapping[str, Tier]:
    return MappingProxyType(load_kv_tiers())


def rental_usd_per_hour(hw: Hardware) -> float:
    """The catalog's latest rental price of a device [USD/hour] (:func:`~tokenomics.data.rentals.rental_price`)."""
    return float(rental_price(hw).usd)


def _hardware(hw: Hardware | str) -> Hardware:
    return hw if isinstance(hw, Hardware) else _catalog_hardware(hw)


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
    >>> round(hbm_usd_per_byte_s("h100-sxm") * 1e9 * 3600, 4)  # $3.78/h / 85.52 GB visible
    0.0442
    """
    hw = _hardware(hardware)
    p = (rental_usd_per_hour(hw) if usd_per_device_hour is None
         else V.single_amount(usd_per_device_hour, "usd_per_device_hour", "USD/hour"))
    return p / 3600.0 / hw.mem_usable_bytes


def hbm_tier(hardware: Hardware | str = "h100-sxm",
             usd_per_device_hour: float | None = None) -> Tier:
    """The HBM of a device as a :class:`Tier` (capacity, bandwidth and price from its catalog).

    Examples
    --------
    >>> t = hbm_tier("h100-sxm")
    >>> t.capacity_bytes / 1e9, round(t.usd_per_gb_hour, 4)   # 81,559 MiB; $3.78/h over it
    (85.520809984, 0.0442)
    """
    hw = _hardware(hardware)
    src = {"capacity": hw.sources.get("memory.capacity", ""),
           "read_bandwidth": hw.sources.get("memory.bandwidth", "")}
    if usd_per_device_hour is None:
        src["holding_cost"] = rental_price(hw).source
    return Tier(name="hbm", title=f"{hw.name} HBM", capacity_bytes=hw.mem_usable_bytes,
                capacity_per="gpu", read_bytes_per_s=hw.mem_bw_bytes_per_s, latency_s=0.0,
                usd_per_byte_s=hbm_usd_per_byte_s(hw, usd_per_device_hour),
                sources=MappingProxyType(src),
                notes="opportunity cost: rental price per hour / HBM capacity")


@inputs(hardware="hardware")
def kv_tiers(hardware: Hardware | str = "h100-sxm") -> Mapping[str, Tier]:
    """Every KV tier, HBM of ``hardware`` first, then the bundled ``kv_tiers.toml``.

    Parameters
    ----------
    hardware : Hardware or str
        The device whose HBM is the first tier (its capacity and bandwidth); default
        ``"h100-sxm"``.

    Returns
    -------
    Mapping of str to Tier
        Tier name -> :class:`Tier`, fastest first.

    Examples
    --------
    >>> list(kv_tiers())
    ['hbm', 'dram', 'grace_lpddr', 'ssd', 'network']
    """
    return MappingProxyType({"hbm": hbm_tier(hardware), **_bundled_tiers()})


def tier(name: str | Tier, hardware: Hardware | str = "h100-sxm") -> Tier:
    """One tier by name (``"hbm"``, ``"dram"``, ``"grace_lpddr"``, ``"ssd"``, ``"network"``).

    Parameters
    ----------
    name : str or Tier
        A tier name of :func:`kv_tiers`; a Tier passes through.
    hardware : Hardware or str
        The device whose HBM ``"hbm"`` is; default ``"h100-sxm"``.

    Returns
    -------
    Tier

    A :class:`Tier` passes through, so functions taking a tier accept either.

    Raises
    ------
    UnknownEntryError
        For an unknown name, listing the known ones and the closest match, or an unknown
        ``hardware`` id (the bundled tiers other than ``"hbm"`` do not depend on it, but a
        misspelt id is an error, not ignored).

    Examples
    --------
    >>> tier("ssd").read_bytes_per_s / 1e9
    14.0
    """
    if isinstance(name, Tier):
        return name
    hw = _hardware(hardware)   # checked for every tier: an unknown id is not ignored
    if isinstance(name, str) and name == "hbm":
        return hbm_tier(hw)
    tiers = _bundled_tiers()
    if not isinstance(name, str) or name not in tiers:
        known = ["hbm", *tiers]
        close = difflib.get_close_matches(str(name), known, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else "."
        raise UnknownEntryError(f"unknown KV tier {name!r}{hint} Known tiers: "
                                f"{', '.join(known)}")
    return tiers[name]


def offload_tier(name: str | Tier, hw: Hardware) -> Tier:
    """The tier a KV cache is offloaded to and reloaded from: any tier but ``"hbm"``."""
    t = tier(name, hw)
    if t.name == "hbm":
        raise TokenomicsError("tier 'hbm' is where the KV is used, not where it is reloaded "
                              "from; choose an offload tier: " + ", ".join(_bundled_tiers()))
    return t


def check_tier_capacity(t: Tier, kv_per_device: Any) -> None:
    """Raise :class:`DoesNotFitError` unless the tier holds what each GPU offloads into it [B]."""
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
@dataclass(frozen=True, repr=False)
class ReloadOrRecompute(Result):
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


@inputs(dep="deployment")
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
    b = float(V.single_whole(batch, "batch"))
    t = offload_tier(tier, dep.hardware)
    V.context_within(dep.model, P, dep.allow_beyond_max_context, "prefix_tokens")
    kv = b * np.asarray(kv_per_sequence_bytes(dep, P), float)
    check_tier_capacity(t, kv)
    recompute = np.asarray(prefill(dep, P, b).time_s, float)
    reload = _reload_s(dep, t, P, b)
    S = V.scalar_or_array
    faster = np.where(reload <= recompute, "reload", "recompute")
    return ReloadOrRecompute(
        tier=t.name, prefix_tokens=S(P), kv_bytes_per_device=S(kv), reload_s=S(reload),
        recompute_s=S(recompute), faster=faster.item() if faster.ndim == 0 else faster,
        speedup=S(recompute / reload), breakeven_tokens=_breakeven_tokens(dep, t, b))


__all__ = ["ReloadOrRecompute", "Tier", "hbm_tier", "hbm_usd_per_byte_s", "kv_tiers",
           "load_kv_tiers", "reload_or_recompute", "tier"]
