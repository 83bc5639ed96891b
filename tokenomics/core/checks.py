"""Input checks shared by the pure functions: clear errors instead of NaNs or clamps."""

from __future__ import annotations

from typing import Any

import numpy as np

from tokenomics.core.errors import TokenomicsError
from tokenomics.core.units import as_magnitude, to_array

#: Largest whole number a count may be: 2**53, the last integer a float holds exactly.
MAX_COUNT = 2.0**53


def together(**arrays: np.ndarray) -> None:
    """Raise a :class:`TokenomicsError` unless the named arrays broadcast to one shape."""
    try:
        np.broadcast_shapes(*(np.shape(a) for a in arrays.values()))
    except ValueError:
        shapes = ", ".join(f"{k} {np.shape(v)}" for k, v in arrays.items())
        raise TokenomicsError(f"the arrays do not broadcast together ({shapes}); give "
                              f"scalars or arrays of shapes numpy can broadcast") from None


def counts(x: Any, name: str, minimum: float = 1, unit: str = "count") -> np.ndarray:
    """Return ``x`` as a float array of whole numbers >= ``minimum``; raise otherwise.

    Parameters
    ----------
    x : int, array_like or pint.Quantity
    name : str
        Argument name for the message (e.g. ``"batch"``).
    minimum : float
        Smallest allowed value (1 for a batch, 0 for cached tokens).
    unit : str
        Unit a Quantity is converted to (``"token"`` for token counts).
    """
    if (isinstance(x, np.ndarray) and x.dtype.kind in "iu" and x.size
            and x.min() >= minimum and x.max() <= MAX_COUNT):
        return x.astype(float)          # whole numbers in range: two reductions suffice
    arr = to_array(as_magnitude(x, unit, name), name)
    if arr.size == 0:
        raise TokenomicsError(f"{name} is empty; give at least one value")
    # above 2**53 a float holds no exact whole number, and no count of tokens, sequences or
    # devices comes near it
    bad = ~np.isfinite(arr) | (arr < minimum) | (arr != np.floor(arr)) | (arr > MAX_COUNT)
    if bad.any():
        first = fmt(arr[bad].flat[0])
        big = arr[bad]
        top = " and at most 2**53" if np.any(np.isfinite(big) & (big > MAX_COUNT)) else ""
        raise TokenomicsError(
            f"{name} must be a whole number >= {minimum:g}{top}, got {first}"
            + (f" (and {int(bad.sum()) - 1} more invalid values)" if bad.sum() > 1 else ""))
    return arr


def positive(x: Any, name: str, unit: str) -> np.ndarray:
    """Return ``x`` (converted to ``unit``) as a float array of finite values > 0."""
    arr = to_array(as_magnitude(x, unit, name), name)
    if arr.size == 0:
        raise TokenomicsError(f"{name} is empty; give at least one value")
    bad = ~np.isfinite(arr) | (arr <= 0)
    if bad.any():
        raise TokenomicsError(f"{name} must be > 0 [{unit}], got {fmt(arr[bad].flat[0])}")
    return arr


def non_negative(x: Any, name: str, unit: str) -> np.ndarray:
    """Return ``x`` (converted to ``unit``) as a float array of finite values >= 0."""
    arr = to_array(as_magnitude(x, unit, name), name)
    if arr.size == 0:
        raise TokenomicsError(f"{name} is empty; give at least one value")
    bad = ~np.isfinite(arr) | (arr < 0)
    if bad.any():
        raise TokenomicsError(f"{name} must be >= 0 [{unit}], got {fmt(arr[bad].flat[0])}")
    return arr


def context_within(model: Any, context: np.ndarray, allow_beyond: bool,
                   name: str = "context_tokens") -> None:
    """Reject contexts longer than the model's ``max_position_embeddings`` unless allowed."""
    if flag(allow_beyond, "allow_beyond_max_context"):
        return
    over = context > model.max_context
    if np.any(over):
        raise TokenomicsError(
            f"{name}={context[over].flat[0]:g} exceeds {model.id}'s maximum context of "
            f"{model.max_context} tokens (max_position_embeddings); pass "
            "allow_beyond_max_context=True to extrapolate")


def single_amount(x: Any, name: str, unit: str) -> float:
    """One non-negative amount in ``unit`` (a price, a rate), as a float.

    Raises
    ------
    TokenomicsError
        For an array of more than one value, a negative or non-finite value, or a Quantity of
        the wrong dimension.
    """
    arr = non_negative(x, name, unit)
    if arr.size != 1:
        raise TokenomicsError(f"{name} must be a single number [{unit}], got {x!r}")
    return float(arr.reshape(()))


def single_whole(x: Any, name: str, minimum: float = 1, unit: str = "count") -> int:
    """One whole number >= ``minimum`` (tokens, a batch), as an int.

    Raises
    ------
    TokenomicsError
        For an array of more than one value, a fraction, or a value below ``minimum``.
    """
    arr = counts(x, name, minimum=minimum, unit=unit)
    if arr.size != 1:
        raise TokenomicsError(f"{name} must be a single whole number, got {x!r}")
    return int(arr.reshape(()))


def seed(x: Any, name: str = "seed") -> int:
    """A random seed: a whole number >= 0 (what ``numpy.random.default_rng`` takes).

    Raises
    ------
    TokenomicsError
        For a bool, a float, a negative number or anything else.
    """
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)) or x < 0:
        raise TokenomicsError(f"{name} must be a whole number >= 0, got {x!r}")
    return int(x)


def fraction(x: Any, name: str, upper_open: bool = False) -> np.ndarray:
    """``x`` as an array of shares in [0, 1] (``upper_open``: [0, 1)); raise otherwise.

    Raises
    ------
    TokenomicsError
        Naming the parameter and the largest value, for a share outside the interval (and for
        everything :func:`non_negative` refuses).
    """
    v = non_negative(x, name, "count")
    if np.any(v > 1) or (upper_open and np.any(v >= 1)):
        raise TokenomicsError(f"{name} must be in [0, 1{')' if upper_open else ']'}, "
                              f"got {fmt(np.max(v))}")
    return v


def choice(x: Any, name: str, options: tuple[str, ...]) -> str:
    """One of a fixed set of option strings, as given.

    Raises
    ------
    TokenomicsError
        For anything that is not one of ``options`` (an array, a number, another string),
        listing them.

    Examples
    --------
    >>> choice("ring", "algorithm", ("ring", "tree"))
    'ring'
    """
    if not isinstance(x, str) or x not in options:
        raise TokenomicsError(f"{name} must be one of {', '.join(map(repr, options))}, "
                              f"got {x!r}")
    return x


def flag(x: Any, name: str) -> bool:
    """A True/False switch (a numpy bool too), as a Python bool.

    Raises
    ------
    TokenomicsError
        For anything else: 1, "yes", an array, None.
    """
    if not isinstance(x, (bool, np.bool_)):
        raise TokenomicsError(f"{name} must be True or False, got {x!r}")
    return bool(x)


def open_probability(x: Any, name: str) -> np.ndarray:
    """``x`` as an array of probabilities strictly inside (0, 1); raise otherwise.

    For a share of requests that must meet a waiting-time target under Poisson arrivals:
    some requests always wait longer than any finite bound, so 1 can never be met, and 0 is
    no target.

    Raises
    ------
    TokenomicsError
        Naming the parameter and the first offending value.
    """
    arr = np.asarray(non_negative(x, name, "count"), float)
    bad = (arr <= 0) | (arr >= 1)
    if bad.any():
        raise TokenomicsError(
            f"{name} must be in (0, 1), got {fmt(arr[bad].flat[0])}: with Poisson arrivals "
            "some requests always wait longer than any finite bound, so 1 cannot be met")
    return arr


def fmt(v: Any) -> str:
    """A number as a person writes it: 3, 1.5, nan."""
    v = float(v)
    return str(int(v)) if v.is_integer() and abs(v) < 1e15 else f"{v:g}"


def scalar_or_array(x: np.ndarray) -> Any:
    """A 0-d array becomes a Python float; anything else stays an array."""
    return float(x) if np.ndim(x) == 0 else x
