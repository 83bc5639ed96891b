"""The links a device's collectives cross: its scale-up domain and its scale-out NIC.

A :class:`Topology` is read off a :class:`~tokenomics.data.specs.Hardware` entry (bandwidths
**per direction** [B/s], per-hop latencies [s]); deployments check their layout against it and
the collectives in :mod:`tokenomics.physics.collectives` time traffic over it.

References
----------
.. [1] NVIDIA NCCL, src/graph/tuning.cc: modelled per-hop latency 0.6 us over NVLink and
   2.7 us over the network (ring, LL protocol), used here as default latency floors where a
   catalog publishes none.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from tokenomics.core import checks as V
from tokenomics.core.errors import TokenomicsError
from tokenomics.data import catalog
from tokenomics.data.specs import SCALE_UP_TOPOLOGIES, Hardware

Algorithm = Literal["ring", "tree", "one_shot", "two_shot", "auto"]
ALGORITHMS = ("ring", "tree", "one_shot", "two_shot")

#: Default per-hop latency floors [s] where the hardware catalog publishes none: NCCL's own
#: tuning model (src/graph/tuning.cc, LL protocol): NVLink 0.6 us, network (ring) 2.7 us.
DEFAULT_SCALE_UP_LATENCY_S = 0.6e-6
DEFAULT_SCALE_OUT_LATENCY_S = 2.7e-6



# --------------------------------------------------------------------------------------------
# Topology: which link a group's traffic crosses
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Topology:
    """Links of one device, as the collectives see them.

    Attributes
    ----------
    domain_size : int
        Devices in one scale-up domain.
    up_bytes_per_s, up_latency_s : float or None
        Scale-up link, per direction [B/s], per hop [s]. None when the device has none.
    out_bytes_per_s, out_latency_s : float or None
        Scale-out NIC, per direction [B/s], per hop [s].
    kind : str
        How the domain is wired, one of :data:`~tokenomics.data.specs.SCALE_UP_TOPOLOGIES`
        (default ``"switched"``): it decides what share of ``up_bytes_per_s`` a group smaller
        than the domain reaches (:meth:`group_bytes_per_s`).
    """

    domain_size: int
    up_bytes_per_s: float | None
    up_latency_s: float
    out_bytes_per_s: float | None
    out_latency_s: float
    kind: str = "switched"

    def group_bytes_per_s(self, group: int) -> float | None:
        """Scale-up bandwidth per device, per direction, that a group inside one domain uses [B/s].

        ``up_bytes_per_s * link_share(kind, group, domain_size)``; None where the device has no
        scale-up link. A group larger than the domain is cut to the domain (the rest of its
        traffic crosses the scale-out NICs).
        """
        if self.up_bytes_per_s is None:
            return None
        g = min(group, self.domain_size) if self.domain_size > 0 else group
        return self.up_bytes_per_s * link_share(self.kind, g, self.domain_size)

    def check(self, group: int, what: str, hw_id: str) -> None:
        """Raise a clear error if ``group`` devices cannot talk over the published links."""
        if group <= 1:
            return
        if group <= self.domain_size and self.up_bytes_per_s is None:
            raise TokenomicsError(
                f"{what} spans {group} devices but {hw_id} has no published scale-up "
                "bandwidth; give one with hardware.with_(scale_up_bw_bytes_per_s=...)")
        if group > self.domain_size and self.out_bytes_per_s is None:
            raise TokenomicsError(
                f"{what} spans {group} devices, more than {hw_id}'s scale-up domain of "
                f"{self.domain_size}, and no scale-out bandwidth is published; give one with "
                "hardware.with_(scale_out_bw_bytes_per_s=...) or shrink the group")
        if group > self.domain_size and group % self.domain_size:
            raise TokenomicsError(
                f"{what} spans {group} devices, which is not a multiple of {hw_id}'s "
                f"scale-up domain of {self.domain_size}")


def link_share(kind: str, group: int, domain_size: int) -> float:
    """Share of a device's scale-up links a collective over ``group`` devices can drive.

    Parameters
    ----------
    kind : str
        One of :data:`~tokenomics.data.specs.SCALE_UP_TOPOLOGIES`.
    group : int
        Devices in the collective, all inside one domain (>= 1).
    domain_size : int
        Devices in the domain (0: unknown, read as the group).

    Returns
    -------
    float
        In (0, 1]:

        * ``"switched"``: 1 (every port reaches a switch, so any peer set uses them all);
        * ``"mesh"``: ``(g - 1) / (n - 1)``, the direct links to the group's peers out of the
          links to all ``n - 1`` peers (MI300X: a TP=2 pair shares one Infinity Fabric link,
          64 GB/s each way, 1/7 of the 448 GB/s a full node of 8 drives);
        * ``"torus-kd"``: the group is laid out as the most compact sub-grid (prime factors of
          ``g`` spread over the ``k`` dimensions, largest first onto the shortest side); an
          extent of 1 uses no port of that dimension, an extent of 2 one of its two ports
          (its two neighbours are the same chip), 3 or more both (a ring with wrap-around).
          The share is the ports used over ``2k`` (TPU v5e, 2-D: a 2 x 2 slice uses 2 of its
          4 ports, a 4 x 4 slice all 4).

    Examples
    --------
    >>> link_share("mesh", 2, 8), link_share("switched", 2, 72)
    (0.14285714285714285, 1.0)
    >>> link_share("torus-2d", 4, 256), link_share("torus-2d", 16, 256)
    (0.5, 1.0)
    >>> link_share("torus-3d", 8, 8960)
    0.5

    References
    ----------
    AMD, "AMD Instinct MI300X platform" (ROCm docs): 8 GPUs fully connected by 7 Infinity
    Fabric links, 64 GB/s each way per link. Google Cloud TPU system architecture: chips on
    a 2-D (v5e, v6e) or 3-D (v4, v5p, Ironwood) torus of inter-chip links to nearest
    neighbours, with wrap-around.
    """
    if kind not in SCALE_UP_TOPOLOGIES:
        raise TokenomicsError(f"topology kind must be one of {', '.join(SCALE_UP_TOPOLOGIES)}, "
                              f"got {kind!r}")
    if group <= 1 or kind == "switched":
        return 1.0
    n = domain_size if domain_size > 0 else group
    if kind == "mesh":
        return (min(group, n) - 1) / (n - 1) if n > 1 else 1.0
    dims = 2 if kind == "torus-2d" else 3
    extents = [1] * dims
    for p in _prime_factors(group):
        extents[extents.index(min(extents))] *= p
    ports = sum(min(e - 1, 2) for e in extents)
    return ports / (2 * dims)


def _prime_factors(n: int) -> list[int]:
    """Prime factors of ``n``, largest first; a cofactor without a factor below 1,000 is kept
    whole (it only decides whether an extent is 1, 2 or more, and keeps 2**53 fast)."""
    out, p = [], 2
    while p * p <= n and p < 1000:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    if n > 1:
        out.append(n)
    return sorted(out, reverse=True)


def topology(hw: Hardware, link_efficiency: float = 1.0, *,
             scale_up_latency_s: float | None = None,
             scale_out_latency_s: float | None = None) -> Topology:
    """The links a device's collectives use, from its catalog entry.

    Parameters
    ----------
    hw : Hardware
    link_efficiency : float
        Achieved fraction of each link's bandwidth, (0, 1].
    scale_up_latency_s, scale_out_latency_s : float, optional
        Per-hop latency overrides [s]. Default: the catalog's figure, else
        :data:`DEFAULT_SCALE_UP_LATENCY_S` / :data:`DEFAULT_SCALE_OUT_LATENCY_S` (NCCL's
        tuning model).

    Returns
    -------
    Topology
        A device without a published domain size is its own domain of 1 when it has no
        scale-up link, else its domain size must be given (``hw.with_(scale_up_domain_size=)``).
    """
    hw = catalog.hardware(hw)
    if isinstance(link_efficiency, bool) or not isinstance(link_efficiency, (int, float)):
        raise TokenomicsError(f"link_efficiency must be a number in (0, 1], got "
                              f"{link_efficiency!r}")
    if scale_up_latency_s is not None:
        scale_up_latency_s = V.single_amount(scale_up_latency_s, "scale_up_latency_s", "s")
    if scale_out_latency_s is not None:
        scale_out_latency_s = V.single_amount(scale_out_latency_s, "scale_out_latency_s", "s")
    if not (0 < link_efficiency <= 1):
        raise TokenomicsError(f"link_efficiency must be in (0, 1], got {link_efficiency!r}")
    up = hw.scale_up_bw_bytes_per_s
    dom = hw.scale_up_domain_size
    if dom is None:
        dom = 1 if up is None else 0  # 0: unknown, resolved by check_layout
    up_lat = scale_up_latency_s if scale_up_latency_s is not None else (
        hw.scale_up_latency_s if hw.scale_up_latency_s is not None else DEFAULT_SCALE_UP_LATENCY_S)
    out_lat = scale_out_latency_s if scale_out_latency_s is not None else (
        hw.scale_out_latency_s if hw.scale_out_latency_s is not None
        else DEFAULT_SCALE_OUT_LATENCY_S)
    out = hw.scale_out_bw_bytes_per_s
    return Topology(
        domain_size=int(dom),
        up_bytes_per_s=None if up is None else up * link_efficiency,
        up_latency_s=float(up_lat),
        out_bytes_per_s=None if out is None else out * link_efficiency,
        out_latency_s=float(out_lat),
        kind=hw.scale_up_topology,
    )
