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

from tokenomics.core.errors import TokenomicsError
from tokenomics.data.specs import Hardware

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
    """

    domain_size: int
    up_bytes_per_s: float | None
    up_latency_s: float
    out_bytes_per_s: float | None
    out_latency_s: float

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
    )
