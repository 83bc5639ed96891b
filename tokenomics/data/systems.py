"""Systems: racks, pods and supernodes as topologies of one catalog device.

A :class:`System` is a count of one catalog accelerator wired as one product: a GB200 NVL72
rack (72 GPUs behind NVLink Switch chips), Huawei's CloudMatrix 384 (384 Ascend 910C on the
Unified Bus), a TPU pod (a 2-D or 3-D torus of ICI links), an AMD MI300X node (a full mesh of
Infinity Fabric links), a Groq LPX rack. It names its device, how many it holds, how its
scale-up domain is wired (:data:`~tokenomics.data.specs.SCALE_UP_TOPOLOGIES`), its switch chips
where it has them, and the totals the vendor publishes for the whole system (scale-up
bandwidth, memory, compute, power), each with its source.

The published totals are a check, not a second copy of the data: on load each must agree
with ``devices x`` the device's own figure within :data:`TOTAL_TOLERANCE` (a rack whose
"130 TB/s" is not 72 x 1.8 TB/s names a wrong device entry or a wrong count). Vendors sum
memory in the unit they print per device, so a total of 72 x 186 "GB" of HBM (NVIDIA's
"13.4 TB") is read either way: it must match the binary or the decimal sum.

Files live in ``hardware_catalog/systems/*.toml`` (and a user catalog folder's
``hardware/systems/``); sources come from the hardware bibliography. Schema in
``docs/catalog-schema.md``.

References
----------
.. [1] NVIDIA GB200 NVL72: 72 GPUs, 1.8 TB/s NVLink per GPU, 130 TB/s in the rack.
.. [2] Huawei, "Serving Large Language Models on Huawei CloudMatrix384" (2025): 384 Ascend
   910C NPUs with all-to-all Unified Bus links.
.. [3] Google Cloud TPU docs: pods of 256 (v5e, v6e; 2-D torus), 4,096 (v4), 8,960 (v5p) and
   9,216 (Ironwood) chips (3-D torus).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from tokenomics.core.errors import CatalogError, TokenomicsError, UnknownEntryError
from tokenomics.data.catalog import (
    Source,
    catalog_dir,
    default_catalog,
    hardware,
    read_toml,
    sourced_quantity,
)
from tokenomics.data.interconnect import Topology, topology
from tokenomics.data.specs import SCALE_UP_TOPOLOGIES, Hardware
from tokenomics.data.user_catalog import catalog_generation, search_path, user_subdir

#: Largest relative gap between a published system total and ``devices x`` the device figure.
TOTAL_TOLERANCE = 0.05

#: Published totals a system file may give: key -> (canonical unit, device figure it sums).
TOTALS = {
    "scale_up_bandwidth": "B/s",   # all devices' scale-up links, per direction
    "memory": "B",                 # all devices' memory capacity
    "memory_bandwidth": "B/s",
    "bf16": "flop/s", "fp8": "flop/s", "fp4": "flop/s",   # dense peaks
}

_STATUS = ("shipping", "announced", "retired")
_REQUIRED = ("schema", "id", "name", "vendor", "device", "devices", "scale_up")
_OPTIONAL = ("status", "aliases", "notes", "switch", "totals", "power")


@dataclass(frozen=True)
class Switch:
    """The switch chips of a switched domain.

    Attributes
    ----------
    name : str
    chips : int
        Switch chips in the system.
    bytes_per_s : float or None
        Switching bandwidth of one chip, per direction [B/s], where published.
    """

    name: str
    chips: int
    bytes_per_s: float | None = None


@dataclass(frozen=True)
class System:
    """A catalog device wired as one product (rack, pod, node, supernode).

    Attributes
    ----------
    id, name, vendor, status : str
    device : Hardware
        The accelerator, as the hardware catalog has it.
    devices : int
        Accelerators in the system.
    domain_size : int
        Devices per scale-up domain (``devices`` where the whole system is one domain).
    topology_kind : str
        How the domain is wired, one of :data:`~tokenomics.data.specs.SCALE_UP_TOPOLOGIES`.
    switch : Switch or None
    power_w : float or None
        Published power of the whole system (devices, CPUs, switches, fans) [W].
    totals : Mapping[str, float]
        Published totals (keys of :data:`TOTALS`, canonical units), checked on load.
    aliases : tuple of str
    sources : Mapping[str, str]
        Field -> bibliography key.
    notes, path : str
    """

    id: str
    name: str
    vendor: str
    device: Hardware
    devices: int
    domain_size: int
    topology_kind: str = "switched"
    status: str = "shipping"
    switch: Switch | None = None
    power_w: float | None = None
    totals: Mapping[str, float] = field(default_factory=dict)
    aliases: tuple[str, ...] = ()
    sources: Mapping[str, str] = field(default_factory=dict)
    notes: str = ""
    path: str = ""

    def __post_init__(self) -> None:
        if self.topology_kind not in SCALE_UP_TOPOLOGIES:
            raise TokenomicsError(f"system {self.id!r}: topology must be one of "
                                  f"{', '.join(SCALE_UP_TOPOLOGIES)}, got {self.topology_kind!r}")
        for name in ("devices", "domain_size"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise TokenomicsError(f"system {self.id!r}: {name} must be a whole number >= 1, "
                                      f"got {v!r}")
        if self.devices % self.domain_size:
            raise TokenomicsError(f"system {self.id!r}: {self.devices} devices are not whole "
                                  f"scale-up domains of {self.domain_size}")

    @property
    def hardware(self) -> Hardware:
        """The device with this system's scale-up domain and wiring, for a Deployment.

        ``Deployment(system.hardware, model, tp=..., ep=...)`` lays the model out inside this
        system's domain; :func:`tokenomics.hardware` also accepts a System and returns this.
        """
        return self.device.with_(scale_up_domain_size=self.domain_size,
                                 scale_up_topology=self.topology_kind)

    def topology(self, link_efficiency: float = 1.0) -> Topology:
        """The links the system's collectives cross (:func:`~tokenomics.data.topology`)."""
        return topology(self.hardware, link_efficiency)

    def total(self, key: str) -> float:
        """``devices x`` the device's figure for one of :data:`TOTALS` (canonical units).

        Raises
        ------
        TokenomicsError
            For a key not in :data:`TOTALS`; NotPublishedError (from the device) for a peak
            the device does not publish.
        """
        d = self.device
        per = {"scale_up_bandwidth": lambda: d.scale_up_bw_bytes_per_s,
               "memory": lambda: d.mem_capacity_bytes,
               "memory_bandwidth": lambda: d.mem_bw_bytes_per_s}
        if key in per:
            v = per[key]()
            if v is None:
                raise TokenomicsError(f"system {self.id!r}: {d.id} publishes no {key}")
            return self.devices * float(v)
        if key in TOTALS:
            return self.devices * d.peak(key)
        raise TokenomicsError(f"system total {key!r} unknown; use one of {', '.join(TOTALS)}")


# --------------------------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------------------------
def parse_system_file(path: Path | str, sources: Mapping[str, Source],
                      devices: Mapping[str, Hardware] | None = None) -> System:
    """Parse and validate one system TOML file.

    Parameters
    ----------
    path : path
    sources : Mapping
        The hardware bibliography (:func:`tokenomics.data.sources`).
    devices : Mapping, optional
        Hardware by id to resolve ``device`` in (default: :func:`tokenomics.hardware`).

    Raises
    ------
    CatalogError
        Naming the file and the field: unknown or missing key, unknown device, a count that
        is not whole domains, a switch or total that is not sourced, a published total that
        disagrees with ``devices x`` the device figure by more than :data:`TOTAL_TOLERANCE`.
    """
    path = Path(path)
    data = read_toml(path)
    err = _errors(path)
    unknown = set(data) - set(_REQUIRED) - set(_OPTIONAL)
    missing = [k for k in _REQUIRED if k not in data]
    if unknown or missing:
        k = sorted(unknown)[0] if unknown else missing[0]
        raise err(k, "unknown key" if unknown else "required key is missing")
    if data["schema"] != 1:
        raise err("schema", f"must be 1, got {data['schema']!r}")
    device = _device(data["device"], devices, err)
    used: dict[str, str] = {}
    n = _count(data["devices"], "devices", path, sources, used)
    up = data["scale_up"]
    if not isinstance(up, Mapping):
        raise err("scale_up", "must be a table with topology and optional domain_size")
    _keys(up, "scale_up", ("topology",), ("name", "domain_size", "note"), err)
    kind = up["topology"]
    if kind not in SCALE_UP_TOPOLOGIES:
        raise err("scale_up.topology", f"{kind!r} is not one of {', '.join(SCALE_UP_TOPOLOGIES)}")
    dom = _count(up["domain_size"], "scale_up.domain_size", path, sources, used) \
        if "domain_size" in up else n
    try:
        system = System(
            id=_text(data, "id", err), name=_text(data, "name", err),
            vendor=_text(data, "vendor", err), device=device, devices=n, domain_size=dom,
            topology_kind=kind, status=_status(data, err),
            switch=_switch(data.get("switch"), path, sources, used, err),
            power_w=_power(data.get("power"), path, sources, used, err),
            totals=_totals(data.get("totals", {}), path, sources, used, err),
            aliases=tuple(_aliases(data, err)), sources=used,
            notes=str(data.get("notes", "")), path=str(path))
    except TokenomicsError as exc:
        raise CatalogError(f"{path}: {exc}") from None
    _check_totals(system, err)
    return system


def _errors(path: Path) -> Any:
    def err(fld: str, msg: str) -> CatalogError:
        return CatalogError(f"{path}: field {fld}: {msg}")
    return err


def _keys(table: Mapping[str, Any], where: str, required: tuple[str, ...],
          optional: tuple[str, ...], err: Any) -> None:
    unknown = set(table) - set(required) - set(optional)
    if unknown:
        raise err(f"{where}.{sorted(unknown)[0]}", "unknown key; allowed keys here: "
                  + ", ".join(required + optional))
    for k in required:
        if k not in table:
            raise err(f"{where}.{k}", "required key is missing")


def _text(data: Mapping[str, Any], key: str, err: Any) -> str:
    v = data[key]
    if not isinstance(v, str) or not v.strip():
        raise err(key, f"must be a non-empty string, got {v!r}")
    return v


def _status(data: Mapping[str, Any], err: Any) -> str:
    s = data.get("status", "shipping")
    if s not in _STATUS:
        raise err("status", f"{s!r} is not one of {', '.join(_STATUS)}")
    return str(s)


def _aliases(data: Mapping[str, Any], err: Any) -> list[str]:
    a = data.get("aliases", [])
    if not isinstance(a, list) or not all(isinstance(x, str) and x.strip() for x in a):
        raise err("aliases", "must be a list of non-empty strings")
    return a


def _device(name: Any, devices: Mapping[str, Hardware] | None, err: Any) -> Hardware:
    if not isinstance(name, str):
        raise err("device", f"must be a hardware id string, got {name!r}")
    if devices is not None:
        if name not in devices:
            raise err("device", f"no hardware entry {name!r}; known: {', '.join(sorted(devices))}")
        return devices[name]
    try:
        return hardware(name)
    except UnknownEntryError as exc:
        raise err("device", str(exc)) from None


def _count(raw: Any, fld: str, path: Path, sources: Mapping[str, Source],
           used: dict[str, str]) -> int:
    v = sourced_quantity(raw, fld, path, "count", 1, 1e6, sources)
    if v != int(v):
        raise CatalogError(f"{path}: field {fld}: must be a whole number, got {v!r}")
    used[fld] = raw["source"]
    return int(v)


def _switch(raw: Any, path: Path, sources: Mapping[str, Source], used: dict[str, str],
            err: Any) -> Switch | None:
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise err("switch", "must be a table with name, chips and optional bandwidth")
    _keys(raw, "switch", ("name", "chips"), ("bandwidth", "note"), err)
    chips = _count(raw["chips"], "switch.chips", path, sources, used)
    bw = None
    if "bandwidth" in raw:
        bw = _link(raw["bandwidth"], "switch.bandwidth", path, sources, used, err)
    return Switch(name=str(raw["name"]), chips=chips, bytes_per_s=bw)


def _link(raw: Any, fld: str, path: Path, sources: Mapping[str, Source], used: dict[str, str],
          err: Any) -> float:
    """A ``{value, unit, direction, source}`` bandwidth, per direction [B/s]."""
    if not isinstance(raw, Mapping) or raw.get("direction") not in ("per_direction",
                                                                     "bidirectional"):
        raise err(fld + ".direction", "a bandwidth needs direction = \"per_direction\" or "
                                      "\"bidirectional\"")
    rest = {k: v for k, v in raw.items() if k != "direction"}
    v = sourced_quantity(rest, fld, path, "B/s", 1e8, 1e18, sources)
    used[fld] = raw["source"]
    return v / 2 if raw["direction"] == "bidirectional" else v


def _power(raw: Any, path: Path, sources: Mapping[str, Source], used: dict[str, str],
           err: Any) -> float | None:
    if raw is None:
        return None
    if not isinstance(raw, Mapping) or set(raw) - {"system"}:
        raise err("power", "must be a table with one key, system = {value, unit, source}")
    v = sourced_quantity(raw["system"], "power.system", path, "W", 1, 1e9, sources)
    used["power.system"] = raw["system"]["source"]
    return v


def _totals(raw: Any, path: Path, sources: Mapping[str, Source], used: dict[str, str],
            err: Any) -> dict[str, float]:
    if not isinstance(raw, Mapping):
        raise err("totals", "must be a table of published system totals")
    out: dict[str, float] = {}
    for k, q in raw.items():
        fld = f"totals.{k}"
        if k not in TOTALS:
            raise err(fld, f"unknown total; allowed: {', '.join(TOTALS)}")
        if TOTALS[k] == "B/s" and isinstance(q, Mapping) and "direction" in q:
            out[k] = _link(q, fld, path, sources, used, err)
        else:
            out[k] = sourced_quantity(q, fld, path, TOTALS[k], 1, 1e24, sources)
            used[fld] = q["source"]
    return out


def _check_totals(s: System, err: Any) -> None:
    """Each published total against ``devices x`` the device's figure."""
    for k, published in s.totals.items():
        try:
            derived = s.total(k)
        except TokenomicsError as exc:
            raise err(f"totals.{k}", str(exc)) from None
        readings = (derived, derived * 1e9 / 2**30) if k == "memory" else (derived,)
        gap = min(abs(published / r - 1) for r in readings)
        if gap > TOTAL_TOLERANCE:
            raise err(f"totals.{k}", f"published {published:.4g} is {gap:.0%} away from "
                                     f"{s.devices} x {s.device.id}'s figure = {derived:.4g}; "
                                     "correct the count, the total or the device entry")
    if s.switch is not None and s.switch.bytes_per_s is not None and \
            s.device.scale_up_bw_bytes_per_s is not None:
        need = s.devices * s.device.scale_up_bw_bytes_per_s
        have = s.switch.chips * s.switch.bytes_per_s
        if have < need * (1 - TOTAL_TOLERANCE):
            raise err("switch.bandwidth", f"{s.switch.chips} chips switch {have:.4g} B/s per "
                                          f"direction, less than the {need:.4g} B/s the "
                                          "devices' links carry: the domain would be blocking")
    if s.power_w is not None and s.device.tdp_w is not None and \
            s.power_w < s.devices * s.device.tdp_w * (1 - TOTAL_TOLERANCE):
        raise err("power.system", f"{s.power_w:.4g} W is less than {s.devices} x "
                                  f"{s.device.tdp_w:.4g} W of device TDP alone")


def systems_dirs() -> tuple[Path, ...]:
    """Folders read for system files: the bundled one, then each user catalog's."""
    out = [catalog_dir("hardware_catalog") / "systems"]
    for u in search_path():
        h = user_subdir(u, "hardware")
        if h is not None and (h / "systems").is_dir():
            out.append(h / "systems")
    return tuple(out)


def _key(name: str) -> str:
    """An id or alias as looked up: case-insensitive, ``_`` and spaces read as ``-``."""
    return name.strip().lower().replace("_", "-").replace(" ", "-")


@lru_cache(maxsize=8)
def _load(folders: tuple[Path, ...], _generation: int
          ) -> tuple[dict[str, System], dict[str, str]]:
    """Systems by id, and every id and alias (looked-up form) -> id; a name used twice raises."""
    srcs = default_catalog().sources
    out: dict[str, System] = {}
    names: dict[str, str] = {}
    for folder in folders:
        for p in sorted(folder.glob("*.toml")) if folder.is_dir() else ():
            s = parse_system_file(p, srcs)
            for key in (s.id, *s.aliases):
                if _key(key) in names:
                    raise CatalogError(f"{p}: field id: {key!r} already names system "
                                       f"{names[_key(key)]!r}")
                names[_key(key)] = s.id
            out[s.id] = s
    return out, names


def load_systems() -> Mapping[str, System]:
    """Every system of :func:`systems_dirs`, validated, by id (cached per search path)."""
    return _load(systems_dirs(), catalog_generation())[0]


def system(name: str | System) -> System:
    """Look up a system by id or alias (case-insensitive), e.g. ``"gb200-nvl72"``.

    Raises
    ------
    UnknownEntryError
        Listing the known ids.

    Examples
    --------
    >>> s = system("gb200-nvl72")
    >>> s.devices, s.hardware.scale_up_domain_size, round(s.total("scale_up_bandwidth") / 1e12, 1)
    (72, 72, 64.8)
    """
    if isinstance(name, System):
        return name
    table, names = _load(systems_dirs(), catalog_generation())
    if isinstance(name, str) and _key(name) in names:
        return table[names[_key(name)]]
    raise UnknownEntryError(f"unknown system {name!r}. Known ids: {', '.join(sorted(table))}")


