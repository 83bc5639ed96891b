"""SymPy derivations of the closed forms: the tests' oracles and the spreadsheet's source.

Notes
-----
On a piece of a deployment's decode curve the step time is affine in the batch,
:math:`t = \\alpha B + \\beta`; interactivity :math:`x = 1/t` and throughput per device
:math:`y = B/(n t)`. Eliminating :math:`B` gives the line :func:`frontier_line` derives.

Each derivation is tested equal to the numeric code that uses the same law
(``tests/pareto/test_symbolic.py``):

=========================  ================================================================
:func:`frontier_line`      :meth:`tokenomics.pareto.curves.DecodeCurve.throughput_at` on a
                           straight piece (and :func:`tokenomics.physics.step.decode`'s
                           tokens/s per device at whole batches)
:func:`roofline_step_time` :func:`tokenomics.physics.roofline.roofline_time` of an operator
                           with FLOPs :math:`F_1 B` and bytes :math:`Q_0 + Q_1 B`
:func:`ridge_batch`        the operator kinks of :func:`tokenomics.pareto.curves.decode_curve`
                           (``tokenomics.pareto.curves._crossing_batch`` with
                           :math:`f_0 = 0`), and with :math:`Q_1 = 0` the critical batch
                           :func:`tokenomics.physics.roofline.critical_batch`
=========================  ================================================================

:func:`roofline_step_time` is also the source of the spreadsheet formulas
(:mod:`tokenomics.surfaces.export`). SymPy is imported inside each function only.

References
----------
.. [1] A. Meurer et al., "SymPy: symbolic computing in Python", PeerJ Comput. Sci. 3:e103,
   2017. doi:10.7717/peerj-cs.103
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any


@lru_cache(maxsize=1)
def frontier_line() -> Any:
    """Throughput per device as a function of interactivity on one linear piece (SymPy).

    Returns
    -------
    sympy.Expr
        :math:`y(x) = (1 - \\beta x) / (\\alpha n)`, in the symbols ``x``, ``alpha``,
        ``beta``, ``n``, derived by solving :math:`x = 1/(\\alpha B + \\beta)` for :math:`B`
        and substituting into :math:`y = B/(n(\\alpha B + \\beta))`.

    Examples
    --------
    >>> import sympy as sp
    >>> e = frontier_line()
    >>> x, a, b, n = sp.symbols("x alpha beta n", positive=True)
    >>> sp.simplify(e - (1 - b * x) / (a * n)) == 0
    True
    """
    import sympy as sp

    B, x, a, b, n = sp.symbols("B x alpha beta n", positive=True)
    t = a * B + b
    (b_of_x,) = sp.solve(sp.Eq(x, 1 / t), B)
    y = (B / (n * t)).subs(B, b_of_x)
    return sp.simplify(y)


@lru_cache(maxsize=1)
def roofline_step_time() -> Any:
    """Step time of one operator as a SymPy expression of the batch.

    Returns
    -------
    sympy.Expr
        :math:`\\max(F_1 B / P, (Q_0 + Q_1 B)/\\beta_m)` in symbols ``B F1 P Q0 Q1 beta_m``.
    """
    import sympy as sp

    B, F1, P, Q0, Q1, bm = sp.symbols("B F1 P Q0 Q1 beta_m", positive=True)
    return sp.Max(F1 * B / P, (Q0 + Q1 * B) / bm)


def ridge_batch() -> Any:
    """Batch at which an operator turns compute-bound (SymPy): solves
    :math:`F_1 B / P = (Q_0 + Q_1 B)/\\beta_m` for :math:`B`.

    Examples
    --------
    >>> str(ridge_batch())
    'P*Q0/(F1*beta_m - P*Q1)'
    """
    import sympy as sp

    B, F1, P, Q0, Q1, bm = sp.symbols("B F1 P Q0 Q1 beta_m", positive=True)
    (sol,) = sp.solve(sp.Eq(F1 * B / P, (Q0 + Q1 * B) / bm), B)
    return sol
