"""The public boundary's argument roles: a deployment, a model, a device, given as objects or ids.

:func:`inputs` decorates a public function with the role of each of its object arguments,
so that every function checks them the same way before any arithmetic: a ``"deployment"``
must be a :class:`~tokenomics.data.deployment.Deployment` (a model or device id alone does
not say the layout, and the error says how to build one); a ``"model"`` or ``"hardware"`` may
be the catalog entry or its id (looked up, with the closest ids on a miss); a
``"deployment_like"`` is anything with a catalog ``model`` and ``hardware`` (a Deployment or
a :class:`~tokenomics.physics.memory.MemoryBudget`). Anything else raises the library's own
:class:`~tokenomics.core.errors.TokenomicsError` naming the function and the argument, never
an ``AttributeError`` from deep inside.

Numbers are checked by :mod:`tokenomics.core.checks` where each function reads them (their
units, signs and integrality differ by argument).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from tokenomics.core.errors import TokenomicsError
from tokenomics.data import catalog
from tokenomics.data.deployment import Deployment, check_deployment
from tokenomics.data.specs import Hardware, Model

F = TypeVar("F", bound=Callable[..., Any])

#: The roles an argument may have.
ROLES = ("deployment", "deployment_like", "model", "hardware")


def _deployment_like(v: Any, where: str) -> Any:
    if isinstance(v, Deployment) or (isinstance(getattr(v, "model", None), Model)
                                     and isinstance(getattr(v, "hardware", None), Hardware)):
        return v
    raise TokenomicsError(f"{where} needs a Deployment (or a MemoryBudget), got "
                          f"{type(v).__name__} {str(v)[:60]!r}; build one with "
                          "tk.Deployment(model, hardware)")


def _resolve(role: str, v: Any, where: str) -> Any:
    if role == "deployment":
        check_deployment(v, where)
        return v
    if role == "deployment_like":
        return _deployment_like(v, where)
    if role == "model":
        return catalog.model(v)
    return catalog.hardware(v)


def _not_together(name: str, names: list[str], args: list[Any],
                  kwargs: dict[str, Any]) -> TokenomicsError:
    """The library's error for array arguments that numpy could not broadcast, naming each
    array argument and its shape."""
    given = {**dict(zip(names, args, strict=False)), **kwargs}
    shapes = ", ".join(f"{k} {np.shape(v)}" for k, v in given.items()
                       if isinstance(v, (list, tuple, np.ndarray)) and np.ndim(v) > 0
                       and all(isinstance(x, (int, float, np.number)) for x in np.ravel(v)))
    return TokenomicsError(f"{name}: the array arguments do not broadcast together "
                           f"({shapes or 'see the arguments'}); give scalars or arrays of "
                           f"shapes numpy can broadcast (e.g. one of length n and the others "
                           f"scalars, or a column (n, 1) against a row (m,))")


def inputs(**roles: str) -> Callable[[F], F]:
    """Decorate a public function with the roles of its object arguments.

    Parameters
    ----------
    **roles : str
        Argument name -> one of :data:`ROLES`.

    Returns
    -------
    callable
        The decorator; the wrapped function keeps its name, docstring and signature.

    Examples
    --------
    >>> @inputs(hw="hardware")
    ... def bandwidth(hw):
    ...     return hw.mem_bw_bytes_per_s
    >>> bandwidth("h100-sxm")
    3350000000000.0
    """
    bad = {r for r in roles.values() if r not in ROLES}
    if bad:
        raise TokenomicsError(f"unknown argument roles {sorted(bad)}; use {', '.join(ROLES)}")

    def wrap(fn: F) -> F:
        names = list(inspect.signature(fn).parameters)
        missing = [n for n in roles if n not in names]
        if missing:
            raise TokenomicsError(f"{fn.__name__} has no argument {missing[0]!r}")
        pos = {n: names.index(n) for n in roles}

        @functools.wraps(fn)
        def inner(*args: Any, **kwargs: Any) -> Any:
            args_l = list(args)
            for n, role in roles.items():
                where = f"{fn.__name__}({n}=...)"
                if pos[n] < len(args_l):
                    args_l[pos[n]] = _resolve(role, args_l[pos[n]], where)
                elif n in kwargs:
                    kwargs[n] = _resolve(role, kwargs[n], where)
            try:
                return fn(*args_l, **kwargs)
            except ValueError as exc:
                if "broadcast" not in str(exc) or isinstance(exc, TokenomicsError):
                    raise
                raise _not_together(fn.__name__, names, args_l, kwargs) from None

        return inner  # type: ignore[return-value]

    return wrap
