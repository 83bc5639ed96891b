"""Compute figures beside a device's dense datasheet peaks: measured and quoted.

A hardware file's ``[compute]`` holds dense peaks only. Two optional tables sit beside it:
``[achievable]``, the best dense matmul rate a benchmark measured per format (at most the
peak), and ``[quoted]``, figures of unknown convention; both are declared with the rest of
the file in :data:`tokenomics.data.kinds.HARDWARE`.

**Quoted figures.** NVIDIA's Rubin is announced at "50 PF NVFP4 inference" per GPU with
no sparsity convention: a dense peak is what every time law needs, and half of the quoted
figure would be as defensible as all of it. The catalog keeps such a figure apart from
``[compute]`` (which holds dense peaks only), in a ``[quoted]`` table whose ``convention``
is ``"unknown"``::

    [quoted]
    convention = "unknown"
    fp4 = { value = 50, unit = "PFLOP/s", source = "...", note = "CES 2026, 'NVFP4 inference'" }

A device with quoted figures is used at them only when asked: ``tk.hardware("rubin",
allow_quoted=True)`` (or :meth:`~tokenomics.data.specs.Hardware.with_quoted_peaks`) returns a
copy whose missing dense peaks are the quoted figures, its id suffixed ``-quoted`` and its
name saying so, so every result and label computed on it carries the mark. The quoted figure
is an upper reading (a dense figure is at most it); a bound computed on it may be up to 2x
optimistic where the vendor's figure was sparse.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import Any

from tokenomics.core.dtypes import PEAK_KEYS
from tokenomics.core.errors import TokenomicsError
from tokenomics.core.units import as_magnitude

#: The id suffix of a device read at its quoted figures.
QUOTED_SUFFIX = "-quoted"


def checked_quoted(hw_id: str, quoted: Mapping[str, Any]) -> Mapping[str, float]:
    """Quoted figures as a read-only map: known compute keys, each > 0 [FLOP/s]."""
    out = {k: as_magnitude(v, "flop/s", f"quoted_flop_per_s[{k!r}]")
           for k, v in dict(quoted).items()}
    for k, v in out.items():
        if k not in PEAK_KEYS:
            raise TokenomicsError(f"hardware {hw_id!r}: unknown quoted compute key {k!r}; "
                                  f"expected one of {', '.join(PEAK_KEYS)}")
        if isinstance(v, bool) or not (isinstance(v, (int, float)) and 0 < v < float("inf")):
            raise TokenomicsError(f"hardware {hw_id!r}: quoted {k} must be a positive number "
                                  f"of FLOP/s, got {v!r}")
    return MappingProxyType(out)


def with_quoted_peaks(hw: Any) -> Any:
    """``hw`` read at its quoted figures where it has no dense peak (module notes).

    Parameters
    ----------
    hw : Hardware
        A device with ``quoted_flop_per_s``.

    Returns
    -------
    Hardware
        A copy: ``peak_flop_per_s`` gains each quoted format without a dense peak, the id
        ends in ``-quoted`` and the name lists the formats read so; dense peaks stay.

    Raises
    ------
    TokenomicsError
        When the device has no quoted figure to use.
    """
    if hw.id.endswith(QUOTED_SUFFIX):
        return hw
    used = {k: v for k, v in hw.quoted_flop_per_s.items() if k not in hw.peak_flop_per_s}
    if not used:
        raise TokenomicsError(f"{hw.id}: no quoted compute figure beyond its dense peaks "
                              f"(quoted: {', '.join(hw.quoted_flop_per_s) or 'none'}); use it "
                              f"as it is")
    unavailable = {k: v for k, v in hw.unavailable.items()
                   if k.removeprefix("compute.") not in used}
    return replace(hw, id=hw.id + QUOTED_SUFFIX,
                   name=f"{hw.name} [quoted peaks, dense or sparse unstated: "
                        f"{', '.join(sorted(used))}]",
                   peak_flop_per_s={**hw.peak_flop_per_s, **used}, unavailable=unavailable,
                   aliases=())
