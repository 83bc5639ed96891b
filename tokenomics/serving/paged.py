"""Paged versus contiguous KV-cache allocation: wasted KV memory and concurrent sequences.

A request's sequence ends holding :math:`L` tokens in its KV cache (prompt plus output).
How much memory the serving engine sets aside for it depends on the allocation policy:

* ``"contiguous"``: each request reserves one contiguous region for ``max_tokens`` tokens
  when it is admitted, as serving systems before PagedAttention did (FasterTransformer, Orca),
  because the output length is not known in advance.
* ``"paged"``: the cache is cut into blocks of ``block_tokens`` tokens, allocated on demand as
  the sequence grows (PagedAttention / vLLM); only the last block of a sequence is partly
  empty.

Request lengths are described by a :class:`LengthDistribution` (a fixed length, samples, a
lognormal or a uniform range); every function below also accepts a plain integer (a fixed
length) or an array of sampled lengths.

Notes
-----
With :math:`L` the final length of a request, :math:`M` = ``max_tokens`` and :math:`b` =
``block_tokens``, the expected fraction of reserved KV memory that holds no token is

.. math::
   w_\\mathrm{contiguous} = \\frac{E[M - L]}{M} = 1 - \\frac{E[L]}{M}, \\qquad
   w_\\mathrm{paged} = \\frac{E[\\lceil L/b \\rceil b - L]}{E[\\lceil L/b \\rceil b]}

(ratios of expectations: the share of the pooled memory of many requests, not the mean of
each request's share). A paged sequence wastes at most :math:`b - 1` tokens, so
:math:`w_\\mathrm{paged} \\le (b - 1)/(E[L] + b - 1)`.

These are the *end-of-sequence* figures: a request that has finished growing. While a
sequence decodes it holds fewer tokens than it will, so a contiguous reservation wastes more
on average over its life (:func:`kv_waste_fraction_over_decode`). The contiguous figure also
leaves out **external fragmentation** (free gaps between reservations too small for a new
one, and allocator rounding such as Orca's power-of-two buddy allocation), which adds to it:
the PagedAttention paper measured only 20.4%-38.2% of the KV memory of such systems holding
token states, against 96.3% (waste under 4%) for vLLM.

Capacity (:func:`kv_capacity_sequences`): the KV room of one device of the replica,
:math:`f\\,\\mathrm{cap} - W/n - R - A`, divided by the bytes one sequence takes: its KV
(:func:`tokenomics.physics.memory.kv_per_sequence_bytes` of the tokens reserved for it, which honours
sliding windows and KV replication under tensor parallelism) plus, when no measured workspace
is given, its share of the decode-step activation workspace (as :func:`tokenomics.max_batch`
counts it). In a memory-bound decode at full batch the step time barely grows with the batch,
so the capacity ratio paged/contiguous is the throughput gain (:func:`max_batch_ratio`).

References
----------
.. [1] W. Kwon et al., "Efficient Memory Management for Large Language Model Serving with
   PagedAttention", SOSP 2023, arXiv:2309.06180 (Fig. 2: 20.4%-38.2% of KV memory used by
   token states in existing systems, 96.3% in vLLM; 2-4x throughput).
.. [2] G.-I. Yu et al., "Orca: A Distributed Serving System for Transformer-Based Generative
   Models", OSDI 2022 (contiguous per-request reservation).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from tokenomics.core import checks as V
from tokenomics.core.errors import TokenomicsError
from tokenomics.core.units import Result, to_array
from tokenomics.data.boundary import inputs
from tokenomics.data.deployment import Deployment
from tokenomics.physics.memory import (
    activation_workspace_bytes_per_token,
    kv_per_sequence_bytes,
    logits_workspace_bytes_per_sequence,
    weight_bytes_per_device,
)

Policy = Literal["contiguous", "paged"]
POLICIES = ("contiguous", "paged")


def _ceil_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """:math:`\\lceil a/b \\rceil` for float arrays of whole numbers, exact."""
    return -np.floor_divide(-a, b)


def _blocks(block_tokens: Any) -> np.ndarray:
    return V.counts(block_tokens, "block_tokens", minimum=1, unit="token")


def allocated_tokens(lengths: Any, block_tokens: Any) -> Any:
    """Tokens of KV memory paged allocation gives a sequence of ``lengths`` tokens [token].

    Parameters
    ----------
    lengths : int or array_like
        Tokens the sequence holds [token], >= 0.
    block_tokens : int or array_like
        Tokens per block [token], >= 1.

    Returns
    -------
    float or numpy.ndarray
        :math:`\\lceil L/b \\rceil b` [token], broadcast over both arguments.

    References
    ----------
    .. [1] W. Kwon et al., PagedAttention, SOSP 2023, arXiv:2309.06180 (KV blocks).

    Examples
    --------
    >>> allocated_tokens(1000, 16)    # 62.5 blocks -> 63 blocks
    1008.0
    """
    n = V.counts(lengths, "lengths", minimum=0, unit="token")
    b = _blocks(block_tokens)
    return V.scalar_or_array(_ceil_div(n, b) * b)


#: Most support points a :class:`LengthDistribution` holds (one float each, twice).
MAX_SUPPORT = 10_000_000


def _support_size(n: int) -> None:
    """Refuse a support of more than :data:`MAX_SUPPORT` lengths before allocating it."""
    if n > MAX_SUPPORT:
        raise TokenomicsError(f"a length distribution over {n:,} lengths is more than "
                              f"{MAX_SUPPORT:,}; lengths beyond any context are not served")


@dataclass(frozen=True, eq=False)
class LengthDistribution:
    """Distribution of the tokens a request's sequence holds at its end (prompt + output).

    A discrete distribution over whole token counts. Build it with :meth:`fixed`,
    :meth:`samples`, :meth:`lognormal` or :meth:`uniform`, or directly from lengths and their
    probabilities.

    Parameters
    ----------
    tokens : array_like
        Lengths [token], whole numbers >= 1 (repeats are merged).
    probabilities : array_like
        Probability of each length, >= 0, summing to 1 (within 1e-9; then normalised).

    Attributes
    ----------
    tokens : numpy.ndarray
        Distinct lengths with positive probability, ascending [token].
    probabilities : numpy.ndarray
        Their probabilities, summing to 1.

    Notes
    -----
    Every expectation is a dot product over the support: :math:`E[g(L)] = \\sum_i p_i g(t_i)`.

    References
    ----------
    .. [1] W. Kwon et al., PagedAttention, SOSP 2023, arXiv:2309.06180 (Fig. 11: request
       length distributions of the ShareGPT and Alpaca traces).

    Examples
    --------
    >>> d = LengthDistribution([100, 300], [0.5, 0.5])
    >>> d.mean(), d.max()
    (200.0, 300.0)
    >>> d.allocated_tokens(16)    # (112 + 304) / 2
    208.0
    """

    tokens: Any
    probabilities: Any

    def __post_init__(self) -> None:
        t = V.counts(self.tokens, "tokens", minimum=1, unit="token")
        p = to_array(self.probabilities, "probabilities")
        if t.ndim != 1 or p.shape != t.shape:
            raise TokenomicsError(
                "tokens and probabilities must be 1-D arrays of the same length, got shapes "
                f"{t.shape} and {p.shape}")
        bad = ~np.isfinite(p) | (p < 0)
        if bad.any():
            raise TokenomicsError(
                f"probabilities must be finite and >= 0, got {V.fmt(p[bad].flat[0])}")
        total = float(p.sum())
        if abs(total - 1.0) > 1e-9:
            raise TokenomicsError(f"probabilities must sum to 1, got a sum of {total!r}")
        uniq, inv = np.unique(t, return_inverse=True)
        merged = np.bincount(inv.ravel(), weights=p, minlength=uniq.size)
        keep = merged > 0
        uniq, merged = uniq[keep], merged[keep] / merged[keep].sum()
        uniq.setflags(write=False)
        merged.setflags(write=False)
        object.__setattr__(self, "tokens", uniq)
        object.__setattr__(self, "probabilities", merged)

    # ---- constructors ----------------------------------------------------------------------
    @classmethod
    def fixed(cls, tokens: Any) -> LengthDistribution:
        """Every request ends at ``tokens`` tokens [token] (>= 1).

        Examples
        --------
        >>> LengthDistribution.fixed(1000).mean()
        1000.0
        """
        t = V.counts(tokens, "tokens", minimum=1, unit="token")
        if t.size != 1:
            raise TokenomicsError(
                f"fixed() takes one length, got {t.size}; use samples() for several")
        return cls(t.reshape(1), np.ones(1))

    @classmethod
    def samples(cls, lengths: Any) -> LengthDistribution:
        """The empirical distribution of sampled lengths [token] (whole numbers >= 1).

        Examples
        --------
        >>> round(LengthDistribution.samples([100, 100, 400]).mean(), 9)
        200.0
        """
        t = V.counts(lengths, "lengths", minimum=1, unit="token").ravel()
        uniq, cnt = np.unique(t, return_counts=True)
        return cls(uniq, cnt / t.size)

    @classmethod
    def lognormal(cls, median: float, sigma: float, max_tokens: int) -> LengthDistribution:
        """Lengths :math:`\\lceil X \\rceil`, :math:`X` lognormal, conditioned on at most
        ``max_tokens``.

        Parameters
        ----------
        median : float
            Median of :math:`X` [token], > 0.
        sigma : float
            Standard deviation of :math:`\\ln X`, > 0.
        max_tokens : int
            Largest length (the engine's limit, e.g. the model's context) [token], >= 1.

        Returns
        -------
        LengthDistribution
            Support 1..``max_tokens``.

        Notes
        -----
        :math:`P(L = n) = (F(n) - F(n-1)) / F(M)`, :math:`n = 1..M`, with :math:`F` the
        lognormal CDF (``scipy.stats.lognorm(s=sigma, scale=median)``). Untruncated, the mean
        is :math:`\\mathrm{median}\\cdot e^{\\sigma^2/2}`.

        References
        ----------
        .. [1] SciPy, ``scipy.stats.lognorm``.

        Examples
        --------
        >>> d = LengthDistribution.lognormal(400, 0.7, 2048)
        >>> round(d.mean())  # 400 exp(0.245) = 511 untruncated; the 1% beyond 2048 is cut
        490
        """
        from scipy import stats

        med = float(V.positive(median, "median", "token"))
        sig = float(V.positive(sigma, "sigma", "dimensionless"))
        top = V.counts(max_tokens, "max_tokens", minimum=1, unit="token")
        if top.size != 1:
            raise TokenomicsError(f"max_tokens must be one number, got {top.size}")
        m = int(top.flat[0])
        _support_size(m)
        edges = np.arange(m + 1, dtype=float)
        # Differences of the survival function keep the upper tail accurate.
        sf = stats.lognorm(s=sig, scale=med).sf(edges)
        p = sf[:-1] - sf[1:]
        mass = float(p.sum())
        if not mass > 0:
            raise TokenomicsError(
                f"lognormal(median={med:g}, sigma={sig:g}) puts no probability at or below "
                f"max_tokens={m}; use a smaller median or a larger max_tokens")
        return cls(edges[1:], p / mass)

    @classmethod
    def uniform(cls, low: int, high: int) -> LengthDistribution:
        """Lengths uniform over the whole numbers ``low..high`` inclusive [token].

        Examples
        --------
        >>> round(LengthDistribution.uniform(1, 100).mean(), 9)
        50.5
        """
        lo = V.counts(low, "low", minimum=1, unit="token")
        hi = V.counts(high, "high", minimum=1, unit="token")
        if lo.size != 1 or hi.size != 1:
            raise TokenomicsError("uniform() takes one low and one high length")
        a, b = int(lo.flat[0]), int(hi.flat[0])
        if b < a:
            raise TokenomicsError(f"uniform() needs low <= high, got low={a}, high={b}")
        _support_size(b - a + 1)
        t = np.arange(a, b + 1, dtype=float)
        return cls(t, np.full(t.size, 1.0 / t.size))

    # ---- moments ---------------------------------------------------------------------------
    def expect(self, g: Callable[[np.ndarray], Any]) -> Any:
        """:math:`E[g(L)]`: ``g`` maps the support (shape ``(K,)``) to ``(..., K)``.

        Examples
        --------
        >>> LengthDistribution([1, 3], [0.5, 0.5]).expect(lambda t: t ** 2)
        5.0
        """
        return V.scalar_or_array(np.asarray(g(self.tokens), float) @ self.probabilities)

    def mean(self) -> float:
        """:math:`E[L]` [token]."""
        return float(self.tokens @ self.probabilities)

    def max(self) -> float:
        """Longest length with positive probability [token]."""
        return float(self.tokens[-1])

    def min(self) -> float:
        """Shortest length with positive probability [token]."""
        return float(self.tokens[0])

    def allocated_tokens(self, block_tokens: Any) -> Any:
        """:math:`E[\\lceil L/b \\rceil b]`, the tokens paged allocation gives [token].

        ``block_tokens`` [token] (>= 1) may be an array: one value per block size.
        """
        b = _blocks(block_tokens)[..., None]
        return self.expect(lambda t: _ceil_div(t, b) * b)

    def expected_block_waste_tokens(self, block_tokens: Any) -> Any:
        """:math:`E[\\lceil L/b \\rceil b - L]`, empty slots of the last block [token].

        At most ``block_tokens - 1``; vectorised over ``block_tokens`` [token].
        """
        b = _blocks(block_tokens)[..., None]
        return self.expect(lambda t: _ceil_div(t, b) * b - t)


def as_length_distribution(lengths: Any) -> LengthDistribution:
    """``lengths`` as a :class:`LengthDistribution`.

    A distribution passes through; a single number is a fixed length; an array is a set of
    samples (one distribution, not a sweep over lengths).

    Examples
    --------
    >>> as_length_distribution([100, 300]).mean()
    200.0
    """
    if isinstance(lengths, LengthDistribution):
        return lengths
    if np.ndim(lengths) == 0 and not hasattr(lengths, "units"):
        return LengthDistribution.fixed(lengths)
    return LengthDistribution.samples(lengths)


def _policy(policy: str) -> str:
    if not isinstance(policy, str) or policy not in POLICIES:
        raise TokenomicsError(
            f"unknown allocation policy {policy!r}; expected one of {', '.join(POLICIES)}")
    return policy


def _max_tokens(max_tokens: Any, dist: LengthDistribution, policy: str) -> np.ndarray | None:
    """Validate ``max_tokens`` against the longest request; required for contiguous."""
    if max_tokens is None:
        if policy == "contiguous":
            raise TokenomicsError(
                "the contiguous policy reserves max_tokens per request: pass max_tokens "
                f"(e.g. the model's context), at least the longest length {V.fmt(dist.max())}")
        return None
    m = V.counts(max_tokens, "max_tokens", minimum=1, unit="token")
    short = m < dist.max()
    if short.any():
        raise TokenomicsError(
            f"max_tokens={V.fmt(m[short].flat[0])} is smaller than the longest request length "
            f"{V.fmt(dist.max())} [token]; a request cannot outgrow the engine's limit: use "
            f"max_tokens >= {V.fmt(dist.max())} or shorter lengths")
    return m


def kv_waste_fraction(lengths: Any, policy: Policy, max_tokens: Any = None,
                      block_tokens: Any = 16) -> Any:
    """Expected fraction of the reserved KV memory that holds no token, at sequence end.

    Parameters
    ----------
    lengths : LengthDistribution, int or array_like
        Final tokens per request [token] (prompt + output): a distribution, a fixed length, or
        samples (see :func:`as_length_distribution`).
    policy : {"contiguous", "paged"}
        Reserve ``max_tokens`` per request up front, or blocks of ``block_tokens`` on demand.
    max_tokens : int or array_like, optional
        Tokens reserved per request by the contiguous policy [token], >= every length.
        Required for ``"contiguous"``; for ``"paged"`` only checked against the lengths.
    block_tokens : int or array_like
        Tokens per KV block [token], >= 1 (vLLM's default is 16). Used by ``"paged"``.

    Returns
    -------
    float or numpy.ndarray
        In [0, 1), broadcast over ``max_tokens`` and ``block_tokens``.

    Notes
    -----
    .. math::
       w_\\mathrm{contiguous} = \\frac{E[M - L]}{M}, \\qquad
       w_\\mathrm{paged} = \\frac{E[\\lceil L/b \\rceil b - L]}{E[\\lceil L/b \\rceil b]}

    Token fractions; for a model with sliding-window layers the byte fraction differs (see
    :func:`kv_capacity_sequences`). The contiguous figure leaves out external fragmentation
    (gaps between reservations, allocator rounding), which only adds waste. Paged waste may
    exceed contiguous waste only when ``max_tokens`` is not a multiple of ``block_tokens``
    (a request that fills ``max_tokens`` still rounds up to a whole block).

    References
    ----------
    .. [1] W. Kwon et al., PagedAttention, SOSP 2023, arXiv:2309.06180 (Sec. 3, Fig. 2).

    Examples
    --------
    >>> round(kv_waste_fraction(1000, "contiguous", max_tokens=2048), 4)  # 1 - 1000/2048
    0.5117
    >>> round(kv_waste_fraction(1000, "paged", block_tokens=16), 4)       # 8 / 1008
    0.0079
    """
    pol = _policy(policy)
    dist = as_length_distribution(lengths)
    b = _blocks(block_tokens)
    m = _max_tokens(max_tokens, dist, pol)
    shape = np.broadcast_shapes(np.shape(b), () if m is None else np.shape(m))
    if pol == "contiguous":
        assert m is not None
        w = dist.expect(lambda t: m[..., None] - t) / m
    else:
        w = np.asarray(dist.expected_block_waste_tokens(b)) / np.asarray(
            dist.allocated_tokens(b))
    return V.scalar_or_array(np.broadcast_to(w, shape).copy())


def _paged_padding_sum(n: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Empty slots of the last block summed over sequence lengths 1..N:
    :math:`\\sum_{k=1}^{N} (\\lceil k/b \\rceil b - k) = q\\,b(b-1)/2 + r b - r(r+1)/2`,
    N = qb + r (a full block cycle pads :math:`0 + 1 + \\dots + (b-1)`; the first r lengths of
    the next pad :math:`b - k` each). Exact in doubles up to :math:`2^{53}`, unlike the
    difference of two sums of reserved slots near :math:`N^2`."""
    q = np.floor_divide(n, b)
    r = n - q * b
    return q * b * (b - 1) / 2 + r * b - r * (r + 1) / 2


def kv_waste_fraction_over_decode(prompt_tokens: Any, output_tokens: Any, policy: Policy,
                                  max_tokens: Any = None, block_tokens: Any = 16) -> Any:
    """Fraction of reserved KV memory holding no token, averaged over a request's decode.

    Each sweep point is one request of ``prompt_tokens`` + ``output_tokens``; the average is
    over its decode steps (the time-weighted share of reserved byte-seconds left empty).

    Parameters
    ----------
    prompt_tokens : int or array_like
        Tokens cached after prefill [token], >= 0.
    output_tokens : int or array_like
        Decode steps, each appending one token [token], >= 1.
    policy : {"contiguous", "paged"}
    max_tokens : int or array_like, optional
        Contiguous reservation [token], >= ``prompt_tokens + output_tokens``; required for
        ``"contiguous"``, only checked for ``"paged"``. Passing exactly ``prompt + output``
        is an oracle that knows each output length (Orca (Oracle) in [1]_).
    block_tokens : int or array_like
        Paged block size [token], >= 1.

    Returns
    -------
    float or numpy.ndarray
        In [0, 1), broadcast over all array arguments.

    Notes
    -----
    After step :math:`i = 1..o` the sequence holds :math:`n = p + i` tokens, so the held
    token-steps are :math:`H = op + o(o+1)/2`. Reserved token-steps are :math:`oM`
    (contiguous) or :math:`S(p+o) - S(p)` (paged) with
    :math:`S(N) = \\sum_{k=1}^{N} \\lceil k/b \\rceil b = b^2 q(q+1)/2 + r(q+1)b`,
    :math:`N = qb + r`. The fraction is :math:`1 - H/\\text{reserved}`. The prefill step and
    external fragmentation are not counted.

    References
    ----------
    .. [1] W. Kwon et al., PagedAttention, SOSP 2023, arXiv:2309.06180 (Fig. 2 and 3:
       reserved, internally and externally fragmented slots).

    Examples
    --------
    >>> # 161 prompt + 338 output tokens, exact reservation of 499: 1 - (161 + 169.5) / 499
    >>> round(kv_waste_fraction_over_decode(161, 338, "contiguous", max_tokens=499), 4)
    0.3377
    """
    pol = _policy(policy)
    p = V.counts(prompt_tokens, "prompt_tokens", minimum=0, unit="token")
    o = V.counts(output_tokens, "output_tokens", minimum=1, unit="token")
    b = _blocks(block_tokens)
    end = p + o
    # Tokens held summed over the steps, p + 1 .. p + o, written without a difference of two
    # large sums (at a 10^15-token prompt that difference lost every digit)
    held = o * p + o * (o + 1) / 2
    if max_tokens is None:
        if pol == "contiguous":
            raise TokenomicsError(
                "the contiguous policy reserves max_tokens per request: pass max_tokens >= "
                "prompt_tokens + output_tokens")
        m = None
    else:
        m = V.counts(max_tokens, "max_tokens", minimum=1, unit="token")
        short = np.broadcast_to(m < end, np.broadcast_shapes(m.shape, end.shape))
        if short.any():
            e = np.broadcast_to(end, short.shape)[short].flat[0]
            mm = np.broadcast_to(m, short.shape)[short].flat[0]
            raise TokenomicsError(
                f"max_tokens={V.fmt(mm)} is smaller than prompt_tokens + output_tokens = "
                f"{V.fmt(e)} [token]; use max_tokens >= {V.fmt(e)}")
    if pol == "contiguous":
        assert m is not None
        empty = o * ((m - p) - (o + 1) / 2) + 0 * b          # o M - held, no cancellation
    else:
        empty = _paged_padding_sum(end, b) - _paged_padding_sum(p, b)
        if m is not None:
            empty = empty + 0 * m
    return V.scalar_or_array(empty / (held + empty))


@dataclass(frozen=True, repr=False)
class KVCapacity(Result):
    """Concurrent sequences the KV room of one device holds. Byte fields are per device [B].

    Attributes
    ----------
    policy : str
        The policy asked for.
    sequences : int or numpy.ndarray of int
        Concurrent sequences under ``policy`` (>= 0; 0 when the weights leave no room).
    paged_sequences : int or numpy.ndarray of int
        The same under paged allocation.
    contiguous_sequences : int or numpy.ndarray of int or None
        The same under contiguous reservation of ``max_tokens`` (None without ``max_tokens``).
    paged_over_contiguous : float or numpy.ndarray or None
        Ratio of the unrounded capacities, :math:`(k_c + a)/(k_p + a)` (None without
        ``max_tokens``): finite even where the contiguous policy holds 0 sequences.
    room_bytes : float
        :math:`f\\,\\mathrm{cap} - W/n - R` (- the workspace when a figure is given) [B];
        negative when the weights and reserve alone exceed usable memory.
    kv_bytes_per_sequence : float or numpy.ndarray
        Expected KV bytes reserved per sequence under ``policy`` [B].
    workspace_bytes_per_sequence : float
        Decode-workspace share per sequence [B] (0 when ``dep.workspace_bytes`` is given).
    reserved_tokens_per_sequence : float or numpy.ndarray
        ``max_tokens`` (contiguous) or :math:`E[\\lceil L/b \\rceil b]` (paged) [token].
    """

    policy: str
    sequences: Any
    paged_sequences: Any
    contiguous_sequences: Any
    paged_over_contiguous: Any
    room_bytes: float
    kv_bytes_per_sequence: Any
    workspace_bytes_per_sequence: float
    reserved_tokens_per_sequence: Any


def _count(room: float, per_seq: np.ndarray) -> Any:
    n = np.floor(max(room, 0.0) / per_seq).astype(np.int64)
    return int(n) if n.ndim == 0 else n


@inputs(dep="deployment")
def kv_capacity_sequences(dep: Deployment, lengths: Any, policy: Policy,
                          max_tokens: Any = None, block_tokens: Any = 16) -> KVCapacity:
    """How many concurrent sequences one device's KV room holds under an allocation policy.

    Parameters
    ----------
    dep : Deployment
    lengths : LengthDistribution, int or array_like
        Final tokens per request [token] (see :func:`as_length_distribution`).
    policy : {"contiguous", "paged"}
    max_tokens : int or array_like, optional
        Contiguous reservation per request [token], >= every length and within the model's
        context (unless ``dep.allow_beyond_max_context``). Required for ``"contiguous"``;
        with ``"paged"`` it adds the contiguous comparison.
    block_tokens : int or array_like
        Paged block size [token], >= 1.

    Returns
    -------
    KVCapacity
        Sequence counts broadcast over ``max_tokens`` and ``block_tokens``.

    Notes
    -----
    .. math::
       N = \\left\\lfloor \\frac{\\max(0,\\ f\\,\\mathrm{cap} - W/n - R - A_0)}{k + a}
       \\right\\rfloor

    with :math:`k = K(M)` (contiguous) or :math:`E[K(\\lceil L/b \\rceil b)]` (paged),
    :math:`K` = :func:`tokenomics.physics.memory.kv_per_sequence_bytes` (windows, replication and
    the split over ``tp * pp`` devices honoured), and the workspace as in
    :func:`tokenomics.max_batch`: :math:`A_0` = ``dep.workspace_bytes`` and :math:`a = 0`
    when given, else :math:`A_0 = 0` and :math:`a = (a_\\mathrm{tok} + 4V/tp)/pp` per
    sequence (one decode token's activations and its FP32 logits). The paged count divides
    by the *expected* bytes: the concurrency many requests reach on average. Sliding-window
    layers are taken to hold :math:`\\min(\\lceil L/b \\rceil b, W)` tokens, slightly less
    than a block-granular ring buffer would.

    References
    ----------
    .. [1] W. Kwon et al., PagedAttention, SOSP 2023, arXiv:2309.06180.

    Examples
    --------
    >>> import tokenomics as tk
    >>> d = tk.Deployment("llama-3.1-8b", "h100-sxm", workspace_bytes=0)
    >>> c = kv_capacity_sequences(d, 1000, "paged", max_tokens=2048)
    >>> # room 0.9 x 85.52e9 (81,559 MiB) - 16.06e9 = 60.91e9 B; 131,072 B per token:
    >>> # 2048 tokens reserved (contiguous) or 1008 held on average (paged)
    >>> c.contiguous_sequences, c.paged_sequences
    (226, 461)
    >>> round(c.paged_over_contiguous, 4)             # 2048 / 1008
    2.0317
    """
    pol = _policy(policy)
    dist = as_length_distribution(lengths)
    b = _blocks(block_tokens)
    m = _max_tokens(max_tokens, dist, pol)
    V.context_within(dep.model, np.atleast_1d(dist.max()), dep.allow_beyond_max_context,
                     name="lengths")
    if m is not None:
        V.context_within(dep.model, m, dep.allow_beyond_max_context, name="max_tokens")
    room = (dep.hardware.mem_usable_bytes * dep.usable_memory_fraction
            - weight_bytes_per_device(dep) - dep.runtime_reserve_bytes)
    if dep.workspace_bytes is not None:
        room = room - dep.workspace_bytes
        a = 0.0
    else:
        a = (activation_workspace_bytes_per_token(dep)
             + logits_workspace_bytes_per_sequence(dep)) / dep.pp
    shape = np.broadcast_shapes(b.shape, () if m is None else m.shape)
    bb = b[..., None]
    kv_p = np.broadcast_to(np.asarray(dist.expect(
        lambda t: kv_per_sequence_bytes(dep, _ceil_div(t, bb) * bb))), shape)
    tok_p = np.broadcast_to(np.asarray(dist.allocated_tokens(b)), shape)
    paged = _count(room, kv_p + a)
    if m is not None:
        kv_c = np.broadcast_to(np.asarray(kv_per_sequence_bytes(dep, m), float), shape)
        contiguous = _count(room, kv_c + a)
        ratio = V.scalar_or_array((kv_c + a) / (kv_p + a))
    else:
        kv_c = None
        contiguous = ratio = None
    if pol == "paged":
        seqs, kv, tok = paged, kv_p, tok_p
    else:
        assert kv_c is not None and m is not None
        seqs, kv, tok = contiguous, kv_c, np.broadcast_to(m, shape)
    return KVCapacity(
        policy=pol, sequences=seqs, paged_sequences=paged, contiguous_sequences=contiguous,
        paged_over_contiguous=ratio, room_bytes=float(room),
        kv_bytes_per_sequence=V.scalar_or_array(np.array(kv, float)),
        workspace_bytes_per_sequence=float(a),
        reserved_tokens_per_sequence=V.scalar_or_array(np.array(tok, float)))


@inputs(dep="deployment")
def max_batch_ratio(dep: Deployment, lengths: Any, max_tokens: Any,
                    block_tokens: Any = 16) -> Any:
    """Paged over contiguous capacity: the decode throughput gain at full, memory-bound batch.

    Parameters
    ----------
    dep : Deployment
    lengths : LengthDistribution, int or array_like
        Final tokens per request [token].
    max_tokens : int or array_like
        Contiguous reservation per request [token], >= every length.
    block_tokens : int or array_like
        Paged block size [token], >= 1.

    Returns
    -------
    float or numpy.ndarray
        :math:`(k_c + a)/(k_p + a)` (see :func:`kv_capacity_sequences`), >= 1 when
        ``max_tokens`` is a multiple of ``block_tokens``.

    Notes
    -----
    In a memory-bound decode the step time is set by the weights read once per step plus the
    KV read per sequence; where the weights dominate, tokens per second grow with the batch,
    so the ratio of the largest batches that fit is the throughput gain. It is an upper bound
    where the KV read or compute also grows with the batch.

    References
    ----------
    .. [1] W. Kwon et al., PagedAttention, SOSP 2023, arXiv:2309.06180 (2-4x throughput over
       FasterTransformer and Orca).

    Examples
    --------
    >>> import tokenomics as tk
    >>> d = tk.Deployment("llama-3.1-8b", "h100-sxm", workspace_bytes=0)
    >>> round(max_batch_ratio(d, 1000, 2048), 4)     # 2048 / 1008
    2.0317
    """
    return kv_capacity_sequences(dep, lengths, "paged", max_tokens,
                                 block_tokens).paged_over_contiguous
