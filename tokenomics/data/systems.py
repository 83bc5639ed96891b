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
from typing import Any, cast

from tokenomics.core.errors import CatalogError, TokenomicsError, UnknownEntryError
from tokenomics.data.bibliography import Source, catalog_dir, read_toml
from tokenomics.data.catalog import default_catalog, hardware
from tokenomics.data.interconnect import Topology, topology
from tokenomics.data.kinds import SYSTEM
from tokenomics.data.schema import Schema, check_entry
from tokenomics.data.specs import SCALE_UP_TOPOLOGIES, Hardware
from tokenomics.data.user_catalog import catalog_generation, search_path, user_subdir

#: Largest relative gap between a published system total and ``devices x`` the device figure.
TOTAL_TOLERANCE = 0.05

#: Published totals a system file may give: key -> canonical unit (the device figure it sums;
#: declared in :data:`tokenomics.data.kinds.SYSTEM`): all devices' scale-up links per
#: direction, memory capacity, memory bandwidth, dense peaks.
TOTALS = {f.name: f.unit for f in cast(Schema, SYSTEM.get("totals").sub).fields}


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
    v = check_entry(SYSTEM, read_toml(path), path, "", sources)
    err = _errors(path)
    device = _device(v["device"], devices, err)
    up, sw, power = v["scale_up"], v["switch"], v["power"]
    try:
        system = System(
            id=v["id"], name=v["name"], vendor=v["vendor"], device=device,
            devices=v["devices"], domain_size=up["domain_size"] or v["devices"],
            topology_kind=up["topology"], status=v["status"] or "shipping",
            switch=None if sw is None else Switch(name=sw["name"], chips=sw["chips"],
                                                  bytes_per_s=sw["bandwidth"]),
            power_w=None if power is None else power["system"],
            totals={k: x for k, x in (v["totals"] or {}).items() if x is not None},
            aliases=tuple(v["aliases"] or ()), sources=v["_sources"],
            notes=v["notes"] or "", path=str(path))
    except TokenomicsError as exc:
        raise CatalogError(f"{path}: {exc}") from None
    _check_totals(system, err)
    return system


def _errors(path: Path) -> Any:
    def err(fld: str, msg: str) -> CatalogError:
        return CatalogError(f"{path}: field {fld}: {msg}")
    return err


def _device(name: str, devices: Mapping[str, Hardware] | None, err: Any) -> Hardware:
    if devices is not None:
        if name not in devices:
            raise err("device", f"no hardware entry {name!r}; known: {', '.join(sorted(devices))}")
        return devices[name]
    try:
        return hardware(name)
    except UnknownEntryError as exc:
        raise err("device", str(exc)) from None


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


