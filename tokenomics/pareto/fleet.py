"""Sweeps beyond one machine: a lazy Dask frame over deployments x batch x context.

:func:`sweep_lazy` describes every deployment at every (batch, context) of an outer grid as a
Dask DataFrame of chunks, never materialising the grid on the client; each chunk is computed
where the scheduler runs it (threads, processes or a ``dask.distributed`` cluster) with the
library's own step engine (:func:`tokenomics.pareto.queries.sweep_points`), so memory stays at
one chunk per worker. Two reductions answer questions without collecting the points:
:func:`lazy_pareto` (the non-dominated points, reduced per chunk and then across chunks) and
:func:`lazy_best_at` (the best throughput per device at an interactivity floor).

Dask is an optional dependency (``pip install 'inference-tokenomics[dask]'``): it brings a
scheduler that already spreads chunks over cores and machines, with its progress bar
(``dask.diagnostics.ProgressBar`` locally, ``distributed.progress`` on a cluster), spilling
and retries.

Notes
-----
Chunk :math:`k` of a deployment covers flat indices :math:`[k m, (k+1) m)` of its
:math:`n_B \\times n_C` grid (``chunk_points`` :math:`m`); a worker recovers each point's
batch and context with ``numpy.unravel_index``. The Pareto reduction is exact: a point
non-dominated over all chunks is non-dominated in its own chunk, so keeping each chunk's
non-dominated points and reducing their union gives the global set.

References
----------
.. [1] M. Rocklin, "Dask: Parallel Computation with Blocked algorithms and Task Scheduling",
   SciPy 2015.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from tokenomics.core import checks as V
from tokenomics.core.errors import TokenomicsError
from tokenomics.pareto.envelope import pareto_mask
from tokenomics.pareto.inputs import deployments_of, device_prices, price_columns
from tokenomics.pareto.queries import OperatingPoint, plain_strings, sweep_points

#: Points per chunk when the caller gives none (about 100 MB of frame per chunk).
CHUNK_POINTS = 2 ** 20


def _dask() -> Any:
    try:
        import dask
        import dask.dataframe
    except ImportError:
        raise TokenomicsError("sweep_lazy needs Dask: pip install 'inference-tokenomics[dask]' "
                              "(dask[dataframe] and distributed)") from None
    return dask


def _axis(x: Any, name: str) -> np.ndarray:
    a = V.counts(x, name, unit="count" if name == "batch" else "token")
    a = np.unique(np.ravel(a))
    if a.size == 0:
        raise TokenomicsError(f"{name} must hold at least one value")
    return a


def _chunk(dep: Any, batch: np.ndarray, context: np.ndarray, lo: int, hi: int,
           price: dict[str, Any]) -> pd.DataFrame:
    """The points ``lo:hi`` of one deployment's batch x context grid."""
    ib, ic = np.unravel_index(np.arange(lo, hi), (batch.size, context.size))
    return sweep_points(dep, batch[ib], context[ic], price)


def sweep_lazy(deployments: Any, batch: Any, context_tokens: Any, *,
               chunk_points: int = CHUNK_POINTS, prices: dict[str, float] | None = None,
               price_basis: Any = None) -> Any:
    """Every deployment at every (batch, context) of an outer grid, as a lazy Dask frame.

    Parameters
    ----------
    deployments : Deployment or iterable of Deployment
    batch : array_like
        Batch values, >= 1 (one axis of the grid; duplicates dropped, sorted).
    context_tokens : array_like
        Context values [token], >= 1 (the other axis).
    chunk_points : int
        Points per chunk (a Dask partition), >= 1.
    prices, price_basis
        As in :func:`tokenomics.pareto.queries.sweep`.

    Returns
    -------
    dask.dataframe.DataFrame
        The columns of :func:`~tokenomics.pareto.queries.sweep` (without ``_deployment``),
        ``len(deployments) x ceil(n_B n_C / chunk_points)`` partitions; nothing is computed
        until asked (``.compute()``, :func:`lazy_pareto`, :func:`lazy_best_at`). Its text
        columns are categorical (a million-row chunk is built in a third of the time);
        :func:`lazy_pareto` and :func:`lazy_best_at` return them as strings, as
        :func:`~tokenomics.pareto.queries.sweep` does.

    Raises
    ------
    TokenomicsError
        For bad inputs, or without Dask installed.

    Examples
    --------
    >>> import tokenomics as tk
    >>> lz = sweep_lazy([tk.Deployment("llama-3.1-8b", "h100-sxm")], range(1, 65),
    ...                 [1024, 4096], chunk_points=32)       # doctest: +SKIP
    >>> lz.npartitions                                      # doctest: +SKIP
    4
    """
    dask = _dask()
    deps = deployments_of(deployments)
    B, C = _axis(batch, "batch"), _axis(context_tokens, "context_tokens")
    m = V.single_whole(chunk_points, "chunk_points")
    priced = device_prices(deps, prices, price_basis)
    n = B.size * C.size
    parts, chunk = [], dask.delayed(_chunk, pure=True)
    for dep in deps:
        pc = price_columns(priced.get(dep.hardware.id))
        parts += [chunk(dep, B, C, lo, min(lo + m, n), pc) for lo in range(0, n, m)]
    meta = _chunk(deps[0], B, C, 0, 1, price_columns(priced.get(deps[0].hardware.id))).iloc[:0]
    return dask.dataframe.from_delayed(parts, meta=meta, verify_meta=False)


def _compute(x: Any, progress: bool) -> Any:
    """``x.compute()``, with Dask's progress bar when asked (a cluster's if a
    ``distributed`` client is active, else the local schedulers')."""
    if not progress:
        return x.compute()
    try:
        from distributed import default_client
        from distributed import progress as cluster_progress

        client = default_client()
    except (ImportError, ValueError):
        from dask.diagnostics import ProgressBar

        with ProgressBar():
            return x.compute()
    future = client.compute(x)
    cluster_progress(future)
    return future.result()


def _front(df: pd.DataFrame) -> pd.DataFrame:
    """The fitting, non-dominated points of a frame (interactivity vs throughput)."""
    df = df[df.fits.astype(bool)]
    if df.empty:
        return df
    keep = pareto_mask(df.tokens_per_s_per_user.to_numpy(float),
                       df.tokens_per_s_per_device.to_numpy(float))
    return df[keep]


def lazy_pareto(lazy: Any, progress: bool = False) -> pd.DataFrame:
    """The non-dominated points of a lazy sweep, reduced chunk by chunk (module notes).

    Parameters
    ----------
    lazy : dask.dataframe.DataFrame
        From :func:`sweep_lazy`.
    progress : bool
        Show Dask's progress bar while the chunks run.

    Returns
    -------
    pandas.DataFrame
        The sweep's columns, one row per point no other fitting point beats on both
        interactivity and throughput per device, sorted by interactivity.
    """
    _dask()
    if not hasattr(lazy, "map_partitions"):
        raise TokenomicsError("lazy_pareto takes the frame of tk.sweep_lazy")
    cand = plain_strings(_compute(lazy.map_partitions(_front, meta=lazy._meta), progress))
    return _front(cand).sort_values("tokens_per_s_per_user").reset_index(drop=True)


def lazy_best_at(lazy: Any, min_tokens_per_s_per_user: float,
                 progress: bool = False) -> OperatingPoint:
    """The fitting point with the most throughput per device at or above a floor.

    Parameters
    ----------
    lazy : dask.dataframe.DataFrame
        From :func:`sweep_lazy`.
    min_tokens_per_s_per_user : float
        The floor [token/s], > 0.
    progress : bool
        Show Dask's progress bar while the chunks run.

    Returns
    -------
    OperatingPoint
        The winning point, as :func:`tokenomics.best_at` gives it (whole batch).

    Raises
    ------
    TokenomicsError
        When no fitting point reaches the floor.
    """
    _dask()
    if not hasattr(lazy, "map_partitions"):
        raise TokenomicsError("lazy_best_at takes the frame of tk.sweep_lazy")
    X = V.single_amount(V.positive(min_tokens_per_s_per_user, "min_tokens_per_s_per_user",
                                   "token/s"), "min_tokens_per_s_per_user", "token/s")
    ok = lazy[(lazy.tokens_per_s_per_user >= X) & lazy.fits]
    top = plain_strings(_compute(ok.nlargest(1, "tokens_per_s_per_device"), progress))
    if top.empty or not math.isfinite(float(top.tokens_per_s_per_device.iloc[0])):
        raise TokenomicsError(f"no fitting point of the sweep reaches {X:g} tokens/s per user")
    row = top.iloc[0].to_dict()
    row["batch"] = int(row["batch"])
    return OperatingPoint(row)
