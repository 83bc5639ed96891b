"""The library's one unit registry and the conversions at its boundary.

Inside tokenomics every number is a plain ``float`` or ``numpy.ndarray`` in a canonical unit:

=============  ==========  =========================================
quantity       canonical   notes
=============  ==========  =========================================
data           ``B``       byte = 8 bit; ``GB`` = 1e9 B, ``GiB`` = 2**30 B
compute        ``flop``    integer operations (``op``, ``TOPS``) count as flop
time           ``s``
tokens         ``token``   ``ktoken`` = 1e3 and ``Mtoken`` = 1e6 (SI: USD/Mtok);
                           ``Ktoken`` (``Ktok``) = 1,024, the convention of context
                           windows (a "128K" context is 131,072 tokens), as ``Kitoken``
money          ``USD``
power, energy  ``W``, ``J``
counts         ``count``   dimensionless
=============  ==========  =========================================

pint parses catalog strings ("3.35 TB/s") once at load and, optionally, user quantities at a
function's boundary. The registry is built from this module's own definitions, not pint's
defaults, so that a byte has its own dimension (``[information]``; in pint's defaults a byte is
dimensionless and ``to_base_units`` turns it into bits) and ``flop``, ``token`` and ``USD`` are
dimensions of their own: a bandwidth can never be mistaken for a FLOP rate.

References
----------
pint documentation, "Defining units" and "Performance": https://pint.readthedocs.io/
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import numpy as np

from tokenomics.core.errors import UnitError

_DEFINITIONS = """
kilo- = 1e3 = k-
mega- = 1e6 = M-
giga- = 1e9 = G-
tera- = 1e12 = T-
peta- = 1e15 = P-
exa- = 1e18 = E-
zetta- = 1e21 = Z-
milli- = 1e-3 = m-
micro- = 1e-6 = u- = µ-
nano- = 1e-9 = n-
pico- = 1e-12 = p-
kibi- = 2**10 = Ki-
mebi- = 2**20 = Mi-
gibi- = 2**30 = Gi-
tebi- = 2**40 = Ti-
pebi- = 2**50 = Pi-
second = [time] = s = sec
minute = 60 * second = min
hour = 60 * minute = h = hr
day = 24 * hour = d
week = 7 * day
year = 365.25 * day = a = yr
month = year / 12
bit = [information] = b
byte = 8 * bit = B
flop = [compute] = FLOP
op = flop = OP
FLOPS = flop / second
TOPS = 1e12 * op / second
token = [token] = tok
Ktoken = 1024 * token = Ktok
USD = [currency] = dollar = usd
cent = 0.01 * USD
joule = [energy] = J
watt = joule / second = W
watt_hour = watt * hour = Wh
count = [] = device = devices = parameter = params
percent = 0.01 * count = %
"""

#: Canonical unit string per dimension name used by catalogs and docs.
CANONICAL = {
    "bytes": "B",
    "bytes_per_s": "B/s",
    "flop": "flop",
    "flop_per_s": "flop/s",
    "s": "s",
    "tokens": "token",
    "usd": "USD",
    "usd_per_hour": "USD/hour",
    "watts": "W",
    "joules": "J",
    "count": "count",
}


@lru_cache(maxsize=1)
def registry() -> Any:
    """Return the library's pint ``UnitRegistry``, built on first use.

    Returns
    -------
    pint.UnitRegistry
        Registry with ``flop``, ``token`` and ``USD`` as dimensions and bytes as
        ``[information]``.

    Examples
    --------
    >>> ureg = registry()
    >>> round(ureg.Quantity(3.35, "TB/s").m_as("B/s"))
    3350000000000
    >>> float(ureg.Quantity(1, "GiB").m_as("B"))
    1073741824.0
    """
    import pint

    ureg: Any = pint.UnitRegistry(None, autoconvert_offset_to_baseunit=False)
    for line in _DEFINITIONS.strip().splitlines():
        ureg.define(line)
    _extend_application_registry()
    return ureg


#: The library's units that pint's default registry lacks, added to the application registry
#: (their lines of :data:`_DEFINITIONS`, so the two registries define them alike).
_APPLICATION_UNITS = ("token", "Ktoken", "USD", "flop", "op", "FLOPS", "TOPS")


def _extend_application_registry() -> None:
    """Define ``token``, ``USD``, ``flop``, ``op``, ``FLOPS`` and ``TOPS`` on pint's
    application registry where it lacks them, so that ``pint.get_application_registry()``
    (pint's ``Quantity``, xarray's and pandas' pint integrations) can build every quantity
    a tokenomics function takes. Units the user's registry already has are left alone."""
    import pint

    app = pint.get_application_registry()
    lines = {ln.split("=")[0].strip(): ln for ln in _DEFINITIONS.strip().splitlines()}
    for unit in _APPLICATION_UNITS:
        line = lines[unit]
        try:
            app.parse_units(unit)
        except pint.errors.UndefinedUnitError:
            app.define(line)


def Q_(value: Any, unit: str) -> Any:  # noqa: N802 - pint's conventional name
    """Build a pint ``Quantity`` in the library's registry, e.g. ``Q_(3.35, "TB/s")``.

    Parameters
    ----------
    value : float or array_like
        The magnitude, in ``unit``.
    unit : str
        A unit string the registry knows (``"TB/s"``, ``"GiB"``, ``"ms"``, ``"USD/hour"``).

    Returns
    -------
    pint.Quantity
        Of the library's registry, so it converts with every function's inputs.

    Raises
    ------
    UnitError
        When ``unit`` is not a unit string the registry knows or ``value`` is not a number
        (or array of numbers).
    """
    if not isinstance(unit, str):
        raise UnitError(f"Q_: unit must be a unit string such as 'TB/s', got {unit!r}")
    if isinstance(value, (bool, str)) or value is None:
        raise UnitError(f"Q_: value must be a number or an array of numbers, got {value!r}")
    try:
        return registry().Quantity(value, unit)
    except Exception as exc:   # pint raises several unrelated types for a bad unit string
        raise UnitError(f"Q_: {unit!r} is not a unit this registry knows ({exc})") from None


#: A data file's unit string: unit names (letters, ``µ``, ``%``) joined by ``/``, ``*``,
#: ``.`` or a space, each with an optional small integer power (``**2``, ``^2``, ``²``); no
#: parentheses, numbers or expressions, at most 40 characters (pint would evaluate them).
_UNIT_STRING = re.compile(
    r"[A-Za-zµ%]+(?:(?:\*\*|\^)-?[1-4]|[²³])?"
    r"(?:\s*[/*. ]\s*[A-Za-zµ%]+(?:(?:\*\*|\^)-?[1-4]|[²³])?){0,5}")


def check_unit_string(unit: str) -> str:
    """Check that a unit string read from a data file is a plain unit expression [-].

    A data file's unit goes through pint's parser, which evaluates arithmetic: ``"TB/s/0"``
    divides by zero, 3,000 nested parentheses exhaust the recursion limit. This gate lets
    only unit names joined by ``/``, ``*``, ``.`` or spaces, with small integer powers, reach
    it.

    Returns
    -------
    str
        ``unit``, unchanged.

    Raises
    ------
    UnitError
        When ``unit`` is not such a string, saying what is allowed.

    Examples
    --------
    >>> check_unit_string("USD/GB/hour")
    'USD/GB/hour'
    """
    if not isinstance(unit, str) or len(unit) > 40 or not _UNIT_STRING.fullmatch(unit.strip()):
        shown = repr(unit) if not isinstance(unit, str) or len(unit) <= 40 else \
            repr(unit[:40]) + "..."
        raise UnitError(f"unit {shown} is not a plain unit string: write unit names joined by "
                        f"'/', '*' or spaces with small integer powers (e.g. 'TB/s', "
                        f"'USD/GB/hour', 'm**2'), no numbers, parentheses or arithmetic")
    return unit


def is_bit_unit(unit: str) -> bool:
    """Whether a unit string counts bits (``Gb/s``, ``Tbit/s``, ``Mbps``) rather than bytes.

    Examples
    --------
    >>> is_bit_unit("Gb/s"), is_bit_unit("GB/s"), is_bit_unit("Gbps"), is_bit_unit("GiB")
    (True, False, True, False)
    """
    words = re.split(r"[/*. ]+", unit.strip())
    return any(re.fullmatch(r"[kKMGTPE]?i?(b|bit|bits|bps)", w) for w in words)


#: (unit, canonical unit) -> the exact factor between them, for the unit strings the bundled
#: catalogs are written in (decimal and binary byte prefixes, bits at 1/8 B, FLOP/s and
#: TOPS, watts, microseconds, prices); :func:`parse_quantity` uses pint for any other.
LINEAR_FACTORS: dict[tuple[str, str], float] = {
    ("B", "B"): 1.0, ("kB", "B"): 1e3, ("MB", "B"): 1e6, ("GB", "B"): 1e9, ("TB", "B"): 1e12,
    ("PB", "B"): 1e15, ("KiB", "B"): 2.0**10, ("MiB", "B"): 2.0**20, ("GiB", "B"): 2.0**30,
    ("TiB", "B"): 2.0**40,
    ("GB/s", "B/s"): 1e9, ("TB/s", "B/s"): 1e12, ("PB/s", "B/s"): 1e15,
    ("GiB/s", "B/s"): 2.0**30, ("Gb/s", "B/s"): 1.25e8, ("Tb/s", "B/s"): 1.25e11,
    ("TFLOP/s", "flop/s"): 1e12, ("PFLOP/s", "flop/s"): 1e15, ("EFLOP/s", "flop/s"): 1e18,
    ("TOPS", "flop/s"): 1e12,
    ("W", "W"): 1.0, ("kW", "W"): 1e3, ("s", "s"): 1.0, ("ms", "s"): 1e-3, ("us", "s"): 1e-6,
    ("ns", "s"): 1e-9, ("USD", "USD"): 1.0, ("USD/hour", "USD/hour"): 1.0,
    ("count", "count"): 1.0,
}


def parse_quantity(value: float, unit: str, to: str) -> float:
    """Convert ``value`` given in ``unit`` to the unit ``to``; raise ``UnitError`` on mismatch.

    Parameters
    ----------
    value : float
        Magnitude as printed in a source.
    unit : str
        Unit of ``value``, e.g. ``"TB/s"``, ``"GiB"``, ``"TFLOP/s"``.
    to : str
        Target (canonical) unit, e.g. ``"B/s"``.

    Returns
    -------
    float
        Magnitude in ``to``.

    Examples
    --------
    >>> parse_quantity(400, "Gb/s", "B/s")
    50000000000.0
    >>> parse_quantity(989.4, "TFLOP/s", "flop/s")
    989400000000000.0

    Notes
    -----
    The unit strings the bundled catalogs use convert by the exact factor of
    :data:`LINEAR_FACTORS` without building the pint registry (which takes about a second;
    a test holds every factor bit-identical to pint's conversion); any other unit goes
    through pint.
    """
    check_unit_string(unit)
    factor = LINEAR_FACTORS.get((unit, to))
    if factor is not None:
        return float(value) * factor
    import pint

    ureg = registry()
    try:
        q = ureg.Quantity(value, unit)
    except Exception as exc:   # pint raises several unrelated types for a bad unit string
        raise UnitError(f"cannot parse unit {unit!r}: {exc}") from None
    try:
        return float(q.m_as(to))
    except pint.errors.DimensionalityError:
        raise UnitError(
            f"unit {unit!r} has dimension {q.dimensionality}, expected one convertible to {to!r}"
        ) from None


def as_magnitude(x: Any, unit: str, name: str = "value") -> Any:
    """Strip a pint Quantity to a float/array in ``unit``; pass plain numbers through.

    Plain numbers (and arrays) are taken to be in ``unit`` already: the library's canonical
    unit for that argument, which every docstring states.

    Parameters
    ----------
    x : float, array_like or pint.Quantity
    unit : str
        Canonical unit of the argument (e.g. ``"B/s"``).
    name : str
        Argument name, for the error message.

    Returns
    -------
    float or numpy.ndarray
    """
    if hasattr(x, "magnitude") and hasattr(x, "units"):
        import pint

        x = _in_our_registry(x, name)
        try:
            return x.m_as(unit)
        except pint.errors.DimensionalityError:
            raise UnitError(
                f"{name} has unit {x.units}, which cannot be converted to {unit!r}"
            ) from None
    return x


def _in_our_registry(q: Any, name: str) -> Any:
    """A Quantity of another pint registry (the application registry, a user's own) as one
    of the library's: its magnitude with its unit string read by the library's registry, so
    that the library's dimensions apply (a byte is ``[information]`` here, dimensionless in
    pint's defaults)."""
    ours = registry()
    if getattr(q, "_REGISTRY", None) is ours:
        return q
    try:
        return ours.Quantity(q.magnitude, str(q.units))
    except Exception as exc:   # pint raises several unrelated types for an unknown unit
        raise UnitError(f"{name} has unit {q.units!s} (from another pint registry), which "
                        f"tokenomics does not know ({type(exc).__name__}); use units such as "
                        f"'GB/s', 'token', 'USD/hour' or build it with tk.Q_") from None


#: Field-name endings and the unit each stands for (first match wins): the library's column
#: convention (docs/glossary.md) read back as units.
_SUFFIX_UNITS: tuple[tuple[str, str], ...] = (
    ("tokens_per_s_per_user", "token/s"), ("tokens_per_s_per_device", "token/s"),
    ("tokens_per_s", "token/s"), ("_usd_per_mtok", "USD/Mtoken"),
    ("_usd_per_device_hour", "USD/hour"), ("_usd_per_hour", "USD/hour"),
    ("joules_per_token", "J/token"), ("wh_per_mtok", "Wh/Mtoken"),
    ("flops_per_device", "flop"), ("bytes_per_device", "B"), ("_bytes_per_token", "B/token"),
    ("_bytes_per_sequence", "B"), ("flops_uncached", "flop"),
    ("_flop_per_byte", "flop/B"), ("_flop_per_s", "flop/s"), ("flops", "flop"),
    ("_bytes_per_s", "B/s"), ("_bytes", "B"), ("bytes", "B"), ("_usd_per_s", "USD/s"),
    ("flops_per_s", "flop/s"), ("joules_per_s", "W"), ("_per_s", "1/s"),
    ("_tokens", "token"), ("_usd", "USD"), ("_s", "s"), ("_w", "W"), ("_j", "J"),
)


def unit_of(name: str) -> str | None:
    """The unit a field or column name stands for by the library's naming convention
    (``step_time_s`` -> ``"s"``, ``cost_usd_per_mtok`` -> ``"USD/Mtoken"``), or None.

    Parameters
    ----------
    name : str
        A result field or table column name (``tokens_per_s_per_device``, ``kv_bytes``).

    Returns
    -------
    str or None
        The pint unit string its suffix stands for; None for a name without a unit suffix.

    Examples
    --------
    >>> unit_of("tokens_per_s_per_device"), unit_of("kv_bytes"), unit_of("label")
    ('token/s', 'B', None)
    """
    if not isinstance(name, str):
        raise UnitError(f"unit_of takes a field or column name (a string such as "
                        f"'step_time_s'), got {name!r}")
    for end, unit in _SUFFIX_UNITS:
        if name == end.lstrip("_") or name.endswith(end):
            return unit
    return None


def as_quantities(result: Any) -> dict[str, Any]:
    """A result's numeric fields as pint Quantities in the library's registry, on request.

    Parameters
    ----------
    result : dataclass result, mapping (e.g. an ``OperatingPoint``) or pandas.DataFrame
        Anything with unit-suffixed field or column names.

    Returns
    -------
    dict
        Field name -> ``Quantity`` (magnitude an array for arrays and columns) for every
        numeric field whose name carries a unit (:func:`unit_of`); other fields unchanged.

    Raises
    ------
    UnitError
        For something that has no named fields.

    Examples
    --------
    >>> import tokenomics as tk
    >>> q = tk.as_quantities(tk.decode(tk.Deployment("llama-3.1-8b", "h100-sxm"), 8, 4096))
    >>> q["time_s"].to("ms").units, q["tokens_per_s_per_user"].units
    (<Unit('millisecond')>, <Unit('token / second')>)
    """
    from dataclasses import fields, is_dataclass

    if is_dataclass(result) and not isinstance(result, type):
        items = {f.name: getattr(result, f.name) for f in fields(result)}
    elif hasattr(result, "columns") and hasattr(result, "to_numpy"):
        items = {str(c): result[c].to_numpy() for c in result.columns}
    elif isinstance(result, Mapping):
        items = dict(result)
    else:
        raise UnitError(f"as_quantities takes a result (a dataclass, a mapping or a "
                        f"DataFrame), got {type(result).__name__}")
    ureg = registry()
    out: dict[str, Any] = {}
    for k, v in items.items():
        unit = unit_of(k) if isinstance(k, str) else None
        if hasattr(v, "magnitude") and hasattr(v, "units"):      # already a Quantity: kept
            out[k] = _in_our_registry(v, str(k))
            continue
        try:
            arr = None if isinstance(v, str) else np.asarray(v)
        except (TypeError, ValueError):          # ragged or odd values: left unchanged
            arr = None
        numeric = arr is not None and arr.dtype.kind in "iuf"
        out[k] = ureg.Quantity(arr if arr.ndim else arr.item(), unit) \
            if unit and numeric else v
    return out


#: Units shown with an SI prefix chosen for the value (35.28 GB, 11.43 ms) in reprs.
_COMPACT = {"B", "s", "flop", "W", "J"}


def readable(name: str, value: Any) -> str:
    """One field as a repr shows it: a number with the unit its name carries, scaled for
    reading (``weights_bytes=35.28 GB``, ``time_s=11.43 ms``); an array as its range."""
    unit = unit_of(name) if isinstance(name, str) else None
    if isinstance(value, (str, bool, np.bool_)) or value is None:
        return repr(value) if isinstance(value, str) else str(value)
    if not isinstance(value, (int, float, np.generic, np.ndarray, list, tuple)):
        return repr(value)                     # a nested result shows its own repr
    try:
        raw = np.asarray(value)
    except ValueError:                       # ragged: not one array
        return repr(value)
    if raw.dtype.kind == "b":
        return f"{int(raw.sum())} of {raw.size} True"
    if raw.dtype.kind in "USO":
        vals = sorted({str(v) for v in raw.ravel()})
        return "/".join(vals) if len(vals) <= 3 else f"{len(vals)} values"
    try:
        arr = raw.astype(float)
    except (TypeError, ValueError):
        return repr(value)

    def one(x: float) -> str:
        if not unit or not np.isfinite(x):
            return f"{x:.6g}"
        q = registry().Quantity(x, unit)
        if unit in _COMPACT and x != 0:
            q = q.to_compact()
        return f"{q.magnitude:.4g} {q.units:~P}".replace("dollar", "USD")

    if arr.ndim == 0:
        return one(float(arr))
    if arr.size == 0:
        return "[] (0 points)"
    return f"[{one(float(np.nanmin(arr)))} .. {one(float(np.nanmax(arr)))}] ({arr.size} points)"


class ReadableRepr:
    """Mixin: a dataclass result's repr with units and scaled numbers (use with
    ``@dataclass(repr=False)``)."""

    def __repr__(self) -> str:
        from dataclasses import fields

        body = ", ".join(f"{f.name}={readable(f.name, getattr(self, f.name))}"
                         for f in fields(self))   # type: ignore[arg-type]
        return f"{type(self).__name__}({body})"


def _column(v: Any) -> np.ndarray | None:
    """A field as a table column (numbers, bools, labels, arrays of them), else None."""
    if isinstance(v, (bool, int, float, str, np.generic)):
        return np.asarray(v)
    if isinstance(v, np.ndarray) and v.dtype.kind in "biufUS":
        return v
    return None


class Result(ReadableRepr):
    """Mixin of the library's result dataclasses: the readable repr and a tidy
    ``to_frame()`` (use with ``@dataclass(repr=False)``)."""

    def to_frame(self) -> Any:
        """Tidy DataFrame: one row per point, a column per field (unit-suffixed names).

        Scalar fields repeat down the rows; fields that are not numbers, flags or labels
        (nested results, distributions) are left out.
        """
        from dataclasses import fields

        import pandas as pd

        cols = {f.name: c for f in fields(self)   # type: ignore[arg-type]
                if (c := _column(getattr(self, f.name))) is not None}
        try:
            shape = np.broadcast_shapes(*(c.shape for c in cols.values()))
        except ValueError:
            raise UnitError(f"{type(self).__name__}.to_frame: its fields have shapes that "
                            f"do not broadcast together") from None
        return pd.DataFrame({k: np.ravel(np.broadcast_to(c, shape)) for k, c in cols.items()})


def made(cls: type, values: dict[str, Any]) -> Any:
    """An instance of the frozen dataclass ``cls`` holding ``values`` (every field), without
    its generated ``__init__``: what the scalar fast paths return (a frozen ``__init__`` sets
    each field through ``object.__setattr__``, a fifth of a fast call). Only for classes
    without ``__post_init__``; the caller gives every field."""
    obj = object.__new__(cls)
    obj.__dict__.update(values)
    return obj


def to_array(x: Any, name: str) -> np.ndarray:
    """Return ``x`` as a float ndarray, rejecting non-numeric input with a clear error.

    Booleans are refused: ``True`` is not a batch of 1 nor an amount of 1.
    """
    if isinstance(x, (bool, np.bool_)) or (isinstance(x, np.ndarray) and x.dtype == bool) or (
            isinstance(x, (list, tuple)) and any(isinstance(v, (bool, np.bool_)) for v in x)):
        raise UnitError(f"{name} must be a number or an array of numbers, not a bool "
                        f"(got {x!r})")
    try:
        arr = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise UnitError(f"{name} must be a number or an array of numbers, got {x!r}") from None
    return arr


def coerce_fields(obj: Any, units: Mapping[str, str]) -> None:
    """Convert pint Quantities given for the named fields of a frozen dataclass to floats.

    Parameters
    ----------
    obj : dataclass instance
        Its fields named in ``units`` may hold a pint Quantity; each becomes a plain float in
        that field's canonical unit (other values are left as they are).
    units : Mapping[str, str]
        Field name -> canonical unit (``{"mem_capacity_bytes": "B"}``).

    Raises
    ------
    UnitError
        For a Quantity of the wrong dimension.
    """
    for name, unit in units.items():
        v = getattr(obj, name)
        if v is not None and hasattr(v, "units"):
            object.__setattr__(obj, name, float(as_magnitude(v, unit, name)))
