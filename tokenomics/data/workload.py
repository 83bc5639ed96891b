"""Small value objects for argument groups that travel together: a workload, an SLO, a link.

Release 0.1 passed these as loose keywords (``input_tokens, output_tokens, ttft_slo_s,
tpot_slo_s, slo_fraction`` in five disaggregation functions, ``link_bytes_per_s,
link_latency_s`` in four). Functions now take the objects; :func:`accepts_legacy` keeps every
0.1 call form working (positional or keyword) by binding it to the old signature and building
the objects from it.

Examples
--------
>>> w = Workload(input_tokens=2048, output_tokens=256)
>>> s = SLO(ttft_s=1.0, tpot_s=0.05)
>>> s.fraction                        # share of requests that must meet both targets
0.9
>>> Link.nvlink_like().bytes_per_s / 1e9
200.0
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from tokenomics.core.errors import TokenomicsError
from tokenomics.core.units import coerce_fields


@dataclass(frozen=True)
class Workload:
    """A request shape: prompt and generated lengths.

    Attributes
    ----------
    input_tokens : int
        Prompt tokens per request [token], >= 1.
    output_tokens : int
        Generated tokens per request [token], >= 1.
    """

    input_tokens: int
    output_tokens: int

    def __post_init__(self) -> None:
        coerce_fields(self, {"input_tokens": "token", "output_tokens": "token"})
        for name in ("input_tokens", "output_tokens"):
            v = getattr(self, name)
            if not _real(v) or not (
                    math.isfinite(v) and v >= 1 and float(v).is_integer()):
                raise TokenomicsError(
                    f"Workload.{name} must be a whole number of tokens >= 1, got {v!r}")
            object.__setattr__(self, name, int(v))


@dataclass(frozen=True)
class SLO:
    """Latency targets a request must meet, and the share of requests that must meet them.

    Attributes
    ----------
    ttft_s : float
        Time to first token target [s], > 0.
    tpot_s : float
        Time per output token target [s], > 0 (the mean inter-token time of a request).
    fraction : float
        Share of requests that must meet both, (0, 1]; default 0.9 (DistServe's 90%
        attainment).

    References
    ----------
    .. [1] Y. Zhong et al., "DistServe", OSDI 2024, arXiv:2401.09670 (goodput at 90% SLO
       attainment).
    """

    ttft_s: float
    tpot_s: float
    fraction: float = 0.9

    def __post_init__(self) -> None:
        coerce_fields(self, {"ttft_s": "s", "tpot_s": "s"})
        for name in ("ttft_s", "tpot_s"):
            v = getattr(self, name)
            if not _real(v) or not (v > 0 and math.isfinite(v)):
                raise TokenomicsError(f"SLO.{name} must be a finite time > 0 seconds, got {v!r}")
        if not _real(self.fraction) or not (0 < self.fraction <= 1):
            raise TokenomicsError(f"SLO.fraction must be in (0, 1], got {self.fraction!r}")


@dataclass(frozen=True)
class Link:
    """A point-to-point path between devices or pools.

    Attributes
    ----------
    bytes_per_s : float
        Bandwidth **per direction** [B/s], > 0.
    latency_s : float
        Latency floor of one transfer [s], >= 0.
    """

    bytes_per_s: float
    latency_s: float = 0.0

    def __post_init__(self) -> None:
        coerce_fields(self, {"bytes_per_s": "B/s", "latency_s": "s"})
        if not _real(self.bytes_per_s) or not (self.bytes_per_s > 0
                                               and math.isfinite(self.bytes_per_s)):
            raise TokenomicsError(
                f"Link.bytes_per_s must be a finite bandwidth > 0 B/s, got {self.bytes_per_s!r}")
        if not _real(self.latency_s) or not (self.latency_s >= 0
                                             and math.isfinite(self.latency_s)):
            raise TokenomicsError(
                f"Link.latency_s must be a finite time >= 0 seconds, got {self.latency_s!r}")

    @classmethod
    def nvlink_like(cls) -> Link:
        """The default KV-transfer path of the disaggregation functions: 200 GB/s, 10 us.

        About one 400 Gb/s-class NIC per GPU pair in each direction plus a switch hop; the
        0.1 release's ``link_bytes_per_s=200e9, link_latency_s=10e-6`` defaults.
        """
        return cls(200e9, 10e-6)


def _real(v: Any) -> bool:
    """A real number (numpy scalars included), not a bool."""
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def _number_like(v: Any) -> bool:
    """What 0.1 took where a value object goes now: a number, array, sequence or Quantity."""
    return _real(v) or isinstance(v, (list, tuple)) or hasattr(v, "dtype") or \
        hasattr(v, "magnitude")


_VALUE_OBJECTS = (Workload, SLO, Link)
_F = TypeVar("_F", bound=Callable[..., Any])
#: The release that drops the 0.1 call forms (each warns with a DeprecationWarning until
#: then).
LEGACY_REMOVAL = "0.2"


def _caller_level() -> int:
    """The ``stacklevel`` that points a warning at the first frame outside this module (the
    user's call, through however many of this module's wrappers)."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename == __file__:
        frame, level = frame.f_back, level + 1
    return level


def accepts_legacy(old_params: Sequence[str], defaults: Mapping[str, Any],
                   build: Callable[[dict[str, Any]], dict[str, Any]],
                   marker: str) -> Callable[[_F], _F]:
    """Let a function that now takes value objects still accept its 0.1 call forms.

    Parameters
    ----------
    old_params : sequence of str
        The 0.1 signature's parameter names, in order.
    defaults : Mapping[str, Any]
        The 0.1 defaults (names not in ``old_params`` are ignored).
    build : callable
        Turns the 0.1 arguments (a dict bound by name, defaults applied) into keyword
        arguments of the new signature; it may check them and raise as 0.1 did.
    marker : str
        The new parameter that holds a value object (``"workload"``): a call is a 0.1 call when
        it passes any 0.1-only keyword, or when the argument at that parameter's position is
        what 0.1 took there (a number, an array or sequence, a pint Quantity), not one of the
        new objects.

    Returns
    -------
    decorator
        The wrapped function shows the new signature (``inspect.signature``). A call that
        fits neither signature, or puts a value object among 0.1's arguments, raises
        :class:`~tokenomics.core.errors.TokenomicsError` naming both signatures (not
        Python's ``TypeError``).

    Examples
    --------
    >>> def _old(a):          # 0.1: f(input_tokens, output_tokens)
    ...     return {"workload": Workload(a["input_tokens"], a["output_tokens"])}
    >>> @accepts_legacy(["input_tokens", "output_tokens"], {}, _old, "workload")
    ... def total(workload):
    ...     return workload.input_tokens + workload.output_tokens
    >>> total(Workload(100, 20)), total(100, 20), total(input_tokens=100, output_tokens=20)
    (120, 120, 120)
    """
    old_sig = inspect.Signature([
        inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                          default=defaults.get(n, inspect.Parameter.empty))
        for n in old_params])

    def decorate(fn: _F) -> _F:
        new_sig = inspect.signature(fn)
        new_names = list(new_sig.parameters)
        pos = new_names.index(marker)
        legacy_only = set(old_params) - set(new_names)

        plain = new_sig.replace(
            parameters=[q.replace(annotation=inspect.Parameter.empty)
                        for q in new_sig.parameters.values()],
            return_annotation=inspect.Signature.empty)

        def wrong_call(why: Any) -> TokenomicsError:
            return TokenomicsError(
                f"{fn.__name__}: {why}; call it as {fn.__name__}{plain} (or as in 0.1, "
                f"{fn.__name__}{old_sig})")

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            legacy = bool(legacy_only & set(kwargs))
            if not legacy and len(args) > pos:
                legacy = _number_like(args[pos])
            sig = old_sig if legacy else new_sig
            try:
                bound = sig.bind(*args, **kwargs)
            except TypeError as exc:
                raise wrong_call(exc) from None
            if not legacy:
                return fn(*args, **kwargs)
            if any(isinstance(v, _VALUE_OBJECTS) for v in bound.arguments.values()):
                raise wrong_call("a value object among 0.1's loose arguments")
            warnings.warn(
                f"{fn.__name__}{old_sig} is the 0.1 call form, deprecated "
                f"and to be removed in {LEGACY_REMOVAL}; call {fn.__name__}{plain}",
                DeprecationWarning, stacklevel=_caller_level())
            bound.apply_defaults()
            return fn(**build(dict(bound.arguments)))

        return wrapper  # type: ignore[return-value]

    return decorate


def accepts_legacy_forms(old_params: Sequence[str], defaults: Mapping[str, Any],
                         build: Callable[[dict[str, Any]], dict[str, Any]], marker: str,
                         new_types: type | tuple[type, ...] | None = None
                         ) -> Callable[[_F], _F]:
    """:func:`accepts_legacy`, also for 0.1 calls told by position.

    ``accepts_legacy`` recognises a 0.1 call by a 0.1-only keyword, or by what 0.1 took at
    the ``marker`` parameter's position (a number, an array). This also recognises one that
    passes more positional arguments than the new signature takes, and, with ``new_types``,
    one whose argument at the marker's position is not one of the new objects (a Model where
    a Deployment now goes). Such a call's positional arguments are named after the 0.1
    parameters and handed to ``accepts_legacy``, which binds and builds it.

    Parameters
    ----------
    old_params, defaults, build, marker
        As for :func:`accepts_legacy`. Some 0.1-only parameter
        must come at or before the marker's position (with ``new_types``), else at or before
        the position just past the new signature's positional parameters, so that the
        named call is recognised as a 0.1 call.
    new_types : type or tuple of type, optional
        What the new signature takes at the marker's position.

    Returns
    -------
    decorator
        The wrapped function shows the new signature (``inspect.signature``).

    Raises
    ------
    TokenomicsError
        At decoration, if the names above are not 0.1-only; at a call, if a 0.1 call gives
        an argument both by position and by name, or more arguments than 0.1 took.
    """
    def decorate(fn: _F) -> _F:
        via = accepts_legacy(old_params, defaults, build, marker)(fn)
        params = list(inspect.signature(fn).parameters.values())
        names = [q.name for q in params]
        n_pos = sum(q.kind in (q.POSITIONAL_ONLY, q.POSITIONAL_OR_KEYWORD) for q in params)
        at = names.index(marker)
        first_01 = next((i for i, n in enumerate(old_params) if n not in names), None)
        if first_01 is None or first_01 > (at if new_types is not None else n_pos):
            raise TokenomicsError(
                f"{fn.__name__}: a 0.1 parameter absent from the new signature must come at "
                f"or before position {at if new_types is not None else n_pos} of "
                f"{list(old_params)}, so that a named 0.1 call is recognised")

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            typed = new_types is not None and len(args) > at and \
                not isinstance(args[at], new_types)
            if not (typed or len(args) > n_pos):
                return via(*args, **kwargs)
            named = dict(zip(old_params, args, strict=False))
            if len(args) > len(old_params) or set(named) & set(kwargs):
                raise TokenomicsError(
                    f"{fn.__name__}: {len(args)} positional arguments and "
                    f"{sorted(kwargs)} do not bind to {fn.__name__}{inspect.signature(fn)} nor "
                    f"to the 0.1 arguments ({', '.join(old_params)})")
            return via(**named, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate
