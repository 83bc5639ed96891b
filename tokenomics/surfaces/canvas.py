"""Figure plumbing the plots share: a pyplot-free Axes, series colours, labels, argument checks.

Nothing here knows about models or hardware; :mod:`tokenomics.surfaces.plots` draws the
figures. Matplotlib is imported only inside the functions that need it.

References
----------
.. [1] J. D. Hunter, "Matplotlib: a 2D graphics environment", Computing in Science &
   Engineering 9(3), 2007. doi:10.1109/MCSE.2007.55
.. [2] BIPM, "The International System of Units (SI)", 9th edition, 2019 (the decimal
   prefixes k, M, G, T, P).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from tokenomics.core import TokenomicsError, counts

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["axes_or_new", "labelled_items", "series_colours", "si_prefixed", "single_count",
           "true_runs", "usd_text"]

#: Decimal prefixes from the largest down, as (power of ten, symbol) (SI brochure).
_PREFIXES = ((15, "P"), (12, "T"), (9, "G"), (6, "M"), (3, "k"))


def axes_or_new(ax: Axes | None, figsize: tuple[float, float] = (7.5, 5.0)) -> Axes:
    """``ax`` itself, or the Axes of a new Figure made without pyplot.

    Parameters
    ----------
    ax : matplotlib.axes.Axes or None
    figsize : (float, float)
        Width and height of a new figure [inch].

    Returns
    -------
    matplotlib.axes.Axes
        A new figure's Axes is laid out ``"constrained"``; outside a notebook no backend is
        chosen and no window opens (:class:`matplotlib.figure.Figure` directly, not
        ``pyplot.figure``); in a Jupyter kernel the figure is pyplot's, so that it displays
        (:func:`in_notebook`).

    Examples
    --------
    >>> ax = axes_or_new(None, figsize=(4.0, 3.0))
    >>> [float(v) for v in ax.get_figure().get_size_inches()]
    [4.0, 3.0]
    >>> axes_or_new(ax) is ax
    True
    """
    from matplotlib.axes import Axes as _Axes
    from matplotlib.figure import Figure

    if ax is not None:
        if not isinstance(ax, _Axes):
            raise TokenomicsError(f"ax must be a matplotlib Axes (or None for a new figure), "
                                  f"got {type(ax).__name__}")
        return ax
    if in_notebook():    # a Jupyter kernel shows pyplot figures without %matplotlib inline
        import matplotlib.pyplot as plt

        return plt.figure(figsize=figsize, layout="constrained").add_subplot()
    fig = Figure(figsize=figsize, layout="constrained")
    return fig.add_subplot()


def in_notebook() -> bool:
    """Whether the code runs in a Jupyter (IPython kernel) session.

    There a new figure is made with pyplot, so that the kernel's inline backend shows it under
    the cell that drew it with no ``%matplotlib inline`` nor ``import matplotlib.pyplot``;
    elsewhere (scripts, servers, tests) figures are made without pyplot and no backend is
    chosen. The plots return the Axes either way.
    """
    import sys

    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    shell = ipython.get_ipython()
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


def single_count(x: Any, name: str, unit: str) -> int:
    """A single whole number >= 1 [``unit``], or a TokenomicsError naming ``name``.

    Parameters
    ----------
    x : int or array_like of one element
    name, unit : str
        For the message (``"batch"``, ``"count"``; ``"context_tokens"``, ``"token"``).

    Returns
    -------
    int

    Raises
    ------
    TokenomicsError
        For a bool, a value that is not a whole number >= 1 (from
        :func:`tokenomics.core.checks.counts`), or more than one value.

    Examples
    --------
    >>> single_count(64, "batch", "count")
    64
    >>> single_count([8], "batch", "count")
    8
    """
    if isinstance(x, bool):
        raise TokenomicsError(f"{name} must be a whole number >= 1, got {x!r}")
    arr = counts(x, name, unit=unit)
    if arr.size != 1:
        raise TokenomicsError(f"{name} must be a single value here, got {arr.size} values")
    return int(arr.ravel()[0])


def labelled_items(obj: Any, cls: type, what: str, maker: str, labels: Sequence[str] | None,
                   default: Callable[[int, Any], str]) -> tuple[list[Any], list[str]]:
    """``obj`` as a non-empty list of ``cls`` instances with one label each.

    Parameters
    ----------
    obj : cls or iterable of cls
    cls : type
        The class every item must be.
    what : str
        The argument's name, for messages (``"costs"``).
    maker : str
        The function that makes a ``cls``, for messages (``"tk.deployment_cost"``).
    labels : sequence of str, optional
        One per item; when None, ``default(i, item)`` names item ``i``.
    default : callable
        ``(index, item) -> str``.

    Returns
    -------
    (list, list of str)
        The items and their labels, equally long.

    Raises
    ------
    TokenomicsError
        For no items, an item that is not a ``cls``, or labels of the wrong length.

    Examples
    --------
    >>> labelled_items(2.5, float, "prices", "float", None, lambda i, x: f"#{i}: {x:g}")
    ([2.5], ['#0: 2.5'])
    """
    if not isinstance(obj, cls) and not isinstance(obj, (list, tuple)):
        raise TokenomicsError(f"{what} must be a {cls.__name__} (from {maker}) or a list of "
                              f"them, got {type(obj).__name__}")
    items = [obj] if isinstance(obj, cls) else list(obj)
    if not items:
        raise TokenomicsError(f"{what} is empty; give at least one {cls.__name__}")
    for i, x in enumerate(items):
        if not isinstance(x, cls):
            raise TokenomicsError(f"{what}[{i}] must be a {cls.__name__} (from {maker}), "
                                  f"got {type(x).__name__}")
    if labels is not None and not isinstance(labels, (list, tuple)):
        raise TokenomicsError(f"labels must be a list of strings, got {labels!r}")
    names = ([default(i, x) for i, x in enumerate(items)] if labels is None
             else [str(lab) for lab in labels])
    if len(names) != len(items):
        raise TokenomicsError(f"labels has {len(names)} entries for {len(items)} {what}")
    return items, names


def si_prefixed(x: float) -> str:
    """Three significant digits with a decimal SI prefix and a trailing space.

    :math:`x / 10^{3k}` with the largest prefix ``k``, ``M``, ``G``, ``T``, ``P`` whose
    power of ten :math:`|x|` reaches; below 1000 no prefix. A unit follows directly
    (``si_prefixed(3.35e12) + "B/s"``).

    Examples
    --------
    >>> si_prefixed(989.4e12)            # H100 SXM dense BF16, FLOP/s
    '989 T'
    >>> si_prefixed(3.35e12) + "B/s"     # its HBM3 bandwidth
    '3.35 TB/s'
    >>> si_prefixed(512.0)
    '512 '
    """
    for exp, prefix in _PREFIXES:
        if abs(x) >= 10.0 ** exp:
            return f"{x / 10.0 ** exp:.3g} {prefix}"
    return f"{x:.3g} "


def usd_text(x: float) -> str:
    """A US-dollar amount to three significant digits, ``"n/a"`` when not finite.

    Examples
    --------
    >>> usd_text(0.5556), usd_text(float("nan"))
    ('$0.556', 'n/a')
    """
    return f"${x:.3g}" if math.isfinite(x) else "n/a"


def series_colours(n: int) -> list[Any]:
    """``n`` colours from matplotlib's qualitative ``tab10`` (``tab20`` beyond 10), cycling.

    Returns
    -------
    list of RGBA tuples
        Colour ``i`` is the map's entry ``i mod N``.

    Examples
    --------
    >>> c = series_colours(12)
    >>> len(c), c[0] == c[0], len(set(c))
    (12, True, 12)
    """
    from matplotlib import colormaps

    cmap = colormaps["tab10" if n <= 10 else "tab20"]
    return [cmap(i % cmap.N) for i in range(n)]


def true_runs(mask: Any) -> list[tuple[int, int]]:
    """``(start, stop)`` of each run of consecutive True values in a boolean sequence.

    Examples
    --------
    >>> true_runs([True, True, False, True])
    [(0, 2), (3, 4)]
    """
    out = []
    start = None
    for i, m in enumerate(np.asarray(mask, bool)):
        if m and start is None:
            start = i
        elif not m and start is not None:
            out.append((start, i))
            start = None
    if start is not None:
        out.append((start, len(mask)))
    return out
