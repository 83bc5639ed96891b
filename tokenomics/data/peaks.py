"""Compute figures beside a device's dense datasheet peaks: measured and quoted.

A hardware file's ``[compute]`` holds dense peaks only. Two optional tables sit beside it:
``[achievable]``, the best dense matmul rate a benchmark measured per format (at most the
peak; :func:`parse_achievable`), and ``[quoted]``, figures of unknown convention
(:func:`parse_quoted`).

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


def _formats_table(f: Any, data: Mapping[str, Any], name: str, convention: str,
                   why: str) -> Mapping[str, Any] | None:
    """The optional table ``name`` of figures per compute key with its required
    ``convention``, checked (None when the file has no such table)."""
    if name not in data:
        return None
    t = data[name]
    if not isinstance(t, Mapping):
        raise f.err(name, f"must be a table: convention = \"{convention}\" and figures per "
                          f"format")
    f.keys(t, name, ("convention",), PEAK_KEYS)
    if t["convention"] != convention:
        raise f.err(f"{name}.convention",
                    f"must be \"{convention}\" ({why}), got {t['convention']!r}")
    return t


def parse_achievable(f: Any, data: Mapping[str, Any], peaks: Mapping[str, float],
                     bounds: tuple[float, float]) -> dict[str, float]:
    """The optional ``[achievable]`` table: measured maximum achievable matmul rate per
    compute key [FLOP/s] (``convention = "measured"``), each of a format with a published
    ``[compute]`` peak and at most 2% above it (a measurement's noise, not a sparse figure).

    Parameters
    ----------
    f : catalog file context
        Its ``err``, ``keys`` and ``quantity`` name the file and field of a problem.
    data : Mapping
        The parsed TOML file.
    peaks : Mapping
        The file's dense peaks [FLOP/s].
    bounds : (float, float)
        Plausible range of a peak [FLOP/s].

    Returns
    -------
    dict of str to float
        Compute key -> measured rate [FLOP/s]; empty without the table.
    """
    ach = _formats_table(f, data, "achievable", "measured",
                         "a benchmark's best dense matmul, not a datasheet figure")
    if ach is None:
        return {}
    out: dict[str, float] = {}
    for k in PEAK_KEYS:
        v = f.quantity(ach, k, "achievable", "flop/s", *bounds, required=False)
        if v is None:
            continue
        if k not in peaks:
            raise f.err(f"achievable.{k}", f"has no [compute] peak of that format to be "
                                           f"measured against; published: {', '.join(peaks)}")
        if v > 1.02 * peaks[k]:
            raise f.err(f"achievable.{k}", f"{v / 1e12:.1f} TFLOP/s is above the format's "
                                           f"dense peak of {peaks[k] / 1e12:.1f} TFLOP/s: a "
                                           f"matmul cannot beat it (a sparse figure?)")
        out[k] = v
    return out


def parse_quoted(f: Any, data: Mapping[str, Any], bounds: tuple[float, float]
                 ) -> dict[str, float]:
    """The optional ``[quoted]`` table of a hardware file: compute figures of unknown
    convention per compute key [FLOP/s] (``convention = "unknown"``).

    Parameters
    ----------
    f : catalog file context
        Its ``err``, ``keys`` and ``quantity`` name the file and field of a problem.
    data : Mapping
        The parsed TOML file.
    bounds : (float, float)
        Plausible range of a peak [FLOP/s].

    Returns
    -------
    dict of str to float
        Compute key -> quoted figure [FLOP/s]; empty without the table.
    """
    q = _formats_table(f, data, "quoted", "unknown",
                       "a figure known to be dense goes in [compute]; one known to be sparse "
                       "goes there halved")
    if q is None:
        return {}
    out: dict[str, float] = {}
    for k in PEAK_KEYS:
        v = f.quantity(q, k, "quoted", "flop/s", *bounds, required=False)
        if v is not None:
            out[k] = v
    return out


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
