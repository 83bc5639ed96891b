"""Request-length distributions of benchmark workloads, as weighted quadrature nodes.

A serving benchmark runs a dataset, not one request shape: MLPerf's Llama 2 70B task has a
mean prompt of 222 tokens and a median of 152; its Llama 3.1 405B task 9,429 and 10,112. A
forecast at the mean misstates every term that is not linear in the lengths: the quadratic
attention of a prompt, sliding windows, the context a decoding slot holds (a sequence that
lives longer holds its slot longer, so the time-averaged context is length-biased:
:math:`\\mathbb E[I] + \\mathbb E[O^2] / (2\\,\\mathbb E[O])`, not :math:`\\mathbb E[I] + \\mathbb E[O]/2`).

:class:`RequestLengths` holds the input and the output lengths as nodes with weights
(independent of each other: the published input-output correlations of the MLPerf tasks are
-0.34 to +0.04), built from published quantiles by :meth:`RequestLengths.from_quantiles`.
The bundled distributions live in ``measurements/workloads.toml``, each with its source;
:func:`request_lengths` reads one, :func:`request_lengths_table` tabulates them.

Notes
-----
From quantiles :math:`(p_k, x_k)` with the minimum at :math:`p = 0` and the maximum at
:math:`p = 1`, the inverse CDF is taken piecewise linear, and the nodes are its values at the
midpoints :math:`u_j = (j + 1/2)/n` of :math:`n` equal-probability bins, each of weight
:math:`1/n`; the nodes are then scaled so that their mean is the published mean exactly (the
interpolated shape keeps the published spread).

References
----------
.. [1] MLCommons, ``inference`` repository (language/llama2-70b, mixtral-8x7b, llama3.1-405b,
   llama3.1-8b, deepseek-r1: dataset scripts and reference token counts).
.. [2] openshift-psap/performance-dashboard, ``mlperf-data/summaries`` (per-sample token
   counts extracted from the official MLCommons dataset files).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tokenomics.core.errors import CatalogError, TokenomicsError, UnknownEntryError
from tokenomics.data.bibliography import catalog_dir, read_toml

#: Quadrature nodes per length by default (equal-probability bins).
NODES = 16


def _nodes(quantiles: dict[float, float], lo: float, hi: float, mean: float | None,
           n: int) -> np.ndarray:
    """Equal-probability nodes of a piecewise-linear inverse CDF, scaled to ``mean``."""
    ps = np.array([0.0, *sorted(quantiles), 1.0])
    xs = np.array([lo, *(quantiles[p] for p in sorted(quantiles)), hi], float)
    u = (np.arange(n) + 0.5) / n
    x = np.interp(u, ps, xs)
    if mean is not None:
        x = x * (mean / x.mean())
    return x


@dataclass(frozen=True)
class RequestLengths:
    """Input and output lengths of a workload's requests as weighted nodes [token].

    Attributes
    ----------
    name : str
    input_nodes, input_weights : tuple of float
        Prompt lengths :math:`I_i` [token] and their probabilities (summing to 1).
    output_nodes, output_weights : tuple of float
        Generated lengths :math:`O_j` [token] and their probabilities.
    source : str
        Where the figures come from.

    Examples
    --------
    >>> d = RequestLengths.fixed(2048, 256)
    >>> d.input_mean, d.output_mean, d.slot_context_mean
    (2048.0, 256.0, 2176.0)
    """

    name: str
    input_nodes: tuple[float, ...]
    input_weights: tuple[float, ...]
    output_nodes: tuple[float, ...]
    output_weights: tuple[float, ...]
    source: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not isinstance(self.source, str):
            raise TokenomicsError(f"a RequestLengths' name and source are strings, got "
                                  f"{self.name!r}, {self.source!r}")
        for what in ("input", "output"):
            try:
                x = np.asarray(getattr(self, f"{what}_nodes"), float)
                w = np.asarray(getattr(self, f"{what}_weights"), float)
            except (TypeError, ValueError):
                raise TokenomicsError(f"{self.name or 'length distribution'}: {what} nodes and "
                                      f"weights must be lists of numbers") from None
            if x.ndim != 1 or len(x) == 0 or x.shape != w.shape:
                raise TokenomicsError(f"{self.name or 'length distribution'}: {what} nodes "
                                      f"and weights must be two non-empty lists of one length")
            if not (np.all(np.isfinite(x)) and np.all(x >= 1)):
                raise TokenomicsError(f"{self.name or 'length distribution'}: {what} lengths "
                                      f"must be finite and >= 1 token, got {x.min()!r}")
            if not (np.all(w >= 0) and abs(w.sum() - 1.0) < 1e-9):
                raise TokenomicsError(f"{self.name or 'length distribution'}: {what} weights "
                                      f"must be >= 0 and sum to 1, got a sum of {w.sum()!r}")
            object.__setattr__(self, f"{what}_nodes", tuple(float(v) for v in x))
            object.__setattr__(self, f"{what}_weights", tuple(float(v) for v in w))

    @classmethod
    def fixed(cls, input_tokens: float, output_tokens: float,
              name: str = "") -> RequestLengths:
        """Every request the same shape (a synthetic fixed ISL/OSL benchmark)."""
        return cls(name or f"fixed {input_tokens:g}/{output_tokens:g}", (float(input_tokens),),
                   (1.0,), (float(output_tokens),), (1.0,))

    @classmethod
    def from_quantiles(cls, name: str, inputs: dict[str, Any], outputs: dict[str, Any],
                       nodes: int = NODES, source: str = "") -> RequestLengths:
        """A distribution from published summaries of the input and output lengths.

        Parameters
        ----------
        inputs, outputs : dict
            ``mean`` [token], and optionally ``min``, ``max`` and ``quantiles`` (a mapping
            ``"p10" -> tokens``); with only a mean the lengths are a point mass there.
        nodes : int
            Nodes per length.
        """
        return cls(name, *_side(inputs, nodes, name, "input"),
                   *_side(outputs, nodes, name, "output"), source=source)

    def _arrays(self, what: str) -> tuple[np.ndarray, np.ndarray]:
        return (np.array(getattr(self, f"{what}_nodes")),
                np.array(getattr(self, f"{what}_weights")))

    @property
    def input_mean(self) -> float:
        """:math:`\\mathbb E[I]` [token]."""
        x, w = self._arrays("input")
        return float(x @ w)

    @property
    def output_mean(self) -> float:
        """:math:`\\mathbb E[O]` [token]."""
        x, w = self._arrays("output")
        return float(x @ w)

    @property
    def slot_context_mean(self) -> float:
        """Mean KV length of a decoding slot over time,
        :math:`\\mathbb E[I] + \\mathbb E[O^2] / (2\\,\\mathbb E[O])` [token]: a sequence holds
        its slot for :math:`O` steps, so long outputs weigh more (length bias)."""
        o, v = self._arrays("output")
        return self.input_mean + float((o * o) @ v) / (2.0 * self.output_mean)

    def decode_nodes(self) -> tuple[np.ndarray, np.ndarray]:
        """(contexts, weights) of the decoding slots: every pair :math:`(I_i, O_j)` at its
        mean context over its life :math:`I_i + O_j/2`, weighted by the time it holds a slot,
        :math:`u_i v_j O_j / \\mathbb E[O]`."""
        i, u = self._arrays("input")
        o, v = self._arrays("output")
        ctx = (i[:, None] + o[None, :] / 2.0).ravel()
        w = (u[:, None] * (v * o)[None, :] / float(o @ v)).ravel()
        return ctx, w

    def to_dict(self) -> dict[str, Any]:
        """The nodes and weights as plain lists (for a workbook or a report)."""
        return dict(name=self.name, input_nodes=list(self.input_nodes),
                    input_weights=list(self.input_weights),
                    output_nodes=list(self.output_nodes),
                    output_weights=list(self.output_weights), source=self.source)


def _side(raw: dict[str, Any], nodes: int, name: str, what: str
          ) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Nodes and weights of one length from its summary (see ``from_quantiles``)."""
    if not isinstance(raw, dict) or "mean" not in raw:
        raise TokenomicsError(f"{name}: {what} lengths need at least a mean")
    mean = float(raw["mean"])
    q = raw.get("quantiles")
    if not q:
        return (mean,), (1.0,)
    try:
        qs = {float(str(k).lstrip("p")) / 100.0: float(v) for k, v in q.items()}
    except (TypeError, ValueError):
        raise TokenomicsError(f"{name}: {what} quantiles must map 'p10'-style keys to token "
                              f"counts, got {q!r}") from None
    lo = float(raw.get("min", min(qs.values())))
    hi = float(raw.get("max", max(qs.values())))
    xs = [lo, *(qs[p] for p in sorted(qs)), hi]
    if any(not math.isfinite(x) for x in xs) or any(b < a for a, b in zip(xs, xs[1:], strict=False)) \
            or not all(0.0 < p < 1.0 for p in qs):
        raise TokenomicsError(f"{name}: {what} quantiles must rise from min to max with "
                              f"levels strictly between p0 and p100, got {q!r}")
    x = _nodes(qs, lo, hi, mean, nodes)
    return tuple(float(v) for v in np.maximum(x, 1.0)), tuple([1.0 / nodes] * nodes)


def workloads_path() -> Path:
    """The bundled workload file, ``measurements/workloads.toml``."""
    return catalog_dir("measurements") / "workloads.toml"


@lru_cache(maxsize=1)
def _catalog() -> dict[str, RequestLengths]:
    p = workloads_path()
    data = read_toml(p)
    out = {}
    for name, entry in data.items():
        if not isinstance(entry, dict):
            raise CatalogError(f"{p}: [{name}]: must be a table")
        for k in ("input", "output", "source"):
            if k not in entry:
                raise CatalogError(f"{p}: [{name}]: field {k}: required key is missing")
        try:
            out[name] = RequestLengths.from_quantiles(name, dict(entry["input"]),
                                                          dict(entry["output"]),
                                                          source=str(entry["source"]))
        except TokenomicsError as exc:
            raise CatalogError(f"{p}: [{name}]: {exc}") from None
    return out


def request_lengths(name: str | RequestLengths) -> RequestLengths:
    """A bundled workload's length distribution (``measurements/workloads.toml``).

    Parameters
    ----------
    name : str or RequestLengths
        A bundled workload's name (``"mlperf-llama3.1-405b"``); a RequestLengths passes
        through.

    Returns
    -------
    RequestLengths
        Input and output length nodes and weights, with their source.

    Raises
    ------
    UnknownEntryError
        Naming the bundled workloads.

    Examples
    --------
    >>> d = request_lengths("mlperf-llama3.1-405b")
    >>> round(d.input_mean), round(d.output_mean)     # the task's published means
    (9429, 685)
    """
    if isinstance(name, RequestLengths):
        return name
    table = _catalog()
    if not isinstance(name, str) or name not in table:
        raise UnknownEntryError(f"unknown workload {name!r}; bundled: {', '.join(sorted(table))}")
    return table[name]


def request_lengths_table() -> pd.DataFrame:
    """The bundled workloads' length distributions, one row each.

    Returns
    -------
    pandas.DataFrame
        Indexed by ``name``: ``input_mean_tokens``, ``output_mean_tokens``,
        ``slot_context_mean_tokens`` (a decoding slot's time-averaged context, the length
        bias included), ``mean_only_context_tokens`` (:math:`\\mathbb E[I] + \\mathbb E[O]/2`,
        what a mean-only forecast assumes) and ``source``.
    """
    recs = [dict(name=n, input_mean_tokens=d.input_mean, output_mean_tokens=d.output_mean,
                 slot_context_mean_tokens=d.slot_context_mean,
                 mean_only_context_tokens=d.input_mean + d.output_mean / 2, source=d.source)
            for n, d in sorted(_catalog().items())]
    return pd.DataFrame(recs).set_index("name")
