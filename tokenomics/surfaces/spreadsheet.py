"""Spreadsheet building blocks: SymPy expressions as formulas, and a four-column worksheet.

Notes
-----
:class:`Worksheet` collects rows of **label**, **value**, **unit**, **note** and writes them as
a CSV that a spreadsheet (Excel, LibreOffice, Google Sheets) opens as a worksheet: row 1 is
the header :data:`HEADER`, so the value of the i-th row added (counting from 0) is cell
``B{i + 2}``. Adding a number or a formula returns a SymPy symbol named after its cell
(``B12``); expressions over those symbols print, through :func:`spreadsheet_formula`, as
formulas that reference the cells (``=MAX(B40*B31/B25,(B41+B42*B31)/B26)``), so changing an
input cell recomputes every output that depends on it.

:mod:`tokenomics.surfaces.export` builds the decode sizing sheet from these.

References
----------
.. [1] A. Meurer et al., "SymPy: symbolic computing in Python", PeerJ Comput. Sci. 3:e103,
   2017. doi:10.7717/peerj-cs.103
.. [2] OASIS, "Open Document Format for Office Applications (OpenDocument) v1.3, Part 4:
   Recalculated Formula (OpenFormula) Format", 2021 (operators and MAX, MIN, MOD, INT, IF).
"""

from __future__ import annotations

import csv
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tokenomics.core.errors import TokenomicsError

__all__ = ["HEADER", "Worksheet", "spreadsheet_formula"]

HEADER = ("label", "value", "unit", "note")
"""The worksheet's columns, row 1 of every sheet written."""


# --------------------------------------------------------------------------------------------
# SymPy -> spreadsheet syntax
# --------------------------------------------------------------------------------------------
def _printer() -> Any:
    from sympy.printing.str import StrPrinter

    class SheetPrinter(StrPrinter):  # type: ignore[misc]
        """SymPy expressions in spreadsheet syntax; symbols print as their names (cells)."""

        def _print_Symbol(self, e: Any) -> str:
            return str(e.name)

        def _call(self, name: str, args: Any) -> str:
            return f"{name}(" + ",".join(self._print(a) for a in args) + ")"

        def _print_Max(self, e: Any) -> str:
            return self._call("MAX", e.args)

        def _print_Min(self, e: Any) -> str:
            return self._call("MIN", e.args)

        def _print_Mod(self, e: Any) -> str:
            return self._call("MOD", e.args)

        def _print_floor(self, e: Any) -> str:
            return self._call("INT", e.args)

        def _print_Pow(self, e: Any, rational: bool = False) -> str:
            base, exp = e.as_base_exp()
            if exp == -1:
                return f"(1/({self._print(base)}))"
            # Fully parenthesised: spreadsheets bind unary minus tighter than ^ (-2^2 = 4).
            return f"(({self._print(base)})^({self._print(exp)}))"

        def _print_Rational(self, e: Any) -> str:
            return f"({e.p}/{e.q})"

        def _print_Integer(self, e: Any) -> str:
            return str(e.p)

        def _print_Float(self, e: Any) -> str:
            return repr(float(e))

    return SheetPrinter()


def spreadsheet_formula(expr: Any, cells: dict[Any, str] | None = None) -> str:
    """A SymPy expression as a spreadsheet formula (``"=..."``).

    Parameters
    ----------
    expr : sympy.Expr
        Built from ``+ - * /``, powers, ``Max``, ``Min``, ``Mod`` and ``floor``.
    cells : dict, optional
        Symbol -> A1 address; symbols not in it print as their names (name them ``"B12"``
        to make them cells directly).

    Returns
    -------
    str
        ``Max`` -> ``MAX(a,b)``, ``Min`` -> ``MIN``, ``Mod`` -> ``MOD``, ``floor`` ->
        ``INT``, powers as ``((a)^(b))``.

    Examples
    --------
    >>> import sympy as sp
    >>> from tokenomics.pareto.symbolic import roofline_step_time
    >>> e = roofline_step_time()
    >>> B, F1, P, Q0, Q1, bm = sorted(e.free_symbols, key=lambda s: "B F1 P Q0 Q1 beta_m"
    ...                                .split().index(s.name))
    >>> spreadsheet_formula(e, {B: "B9", F1: "B5", P: "B2", Q0: "B6", Q1: "B7", bm: "B3"})
    '=MAX(B5*B9/B2,(B6+B7*B9)/B3)'
    """
    import sympy as sp

    if cells:
        expr = expr.xreplace({s: sp.Symbol(a, nonnegative=True) for s, a in cells.items()})
    # No strings or ranges in these formulas, so spaces can go (a space between two
    # references is Excel's intersection operator).
    return "=" + _printer().doprint(expr).replace(" ", "")


# --------------------------------------------------------------------------------------------
# The worksheet
# --------------------------------------------------------------------------------------------
@dataclass
class _Row:
    label: str
    value: Any
    unit: str = ""
    note: str = ""
    cached: float | None = None     # a formula's value at the exported inputs


class Worksheet:
    """Rows of (label, value, unit, note); the value of row i (from 0) is cell ``B{i + 2}``.

    Section and text rows hold no number; :meth:`value` rows hold an input number and
    :meth:`formula` rows a spreadsheet formula. Both return the SymPy symbol of their cell
    (named ``"B<row>"``, non-negative), for building later formulas.

    Attributes
    ----------
    rows : list
        The rows added so far, each with ``label``, ``value`` (None for a section, str for
        text and formulas, float for numbers), ``unit`` and ``note``.

    Examples
    --------
    >>> ws = Worksheet()
    >>> ws.section("Inputs")
    >>> bw = ws.value("bandwidth", 3.35e12, "B/s")        # cell B3: row 1 header, B2 section
    >>> w = ws.value("weights", 16e9, "B")                # B4
    >>> ws.formula("time", w / bw, "s").name              # B5 = B4 / B3
    'B5'
    >>> ws.rows[-1].value
    '=B4/B3'
    """

    def __init__(self) -> None:
        self.rows: list[_Row] = []
        self._numbers: dict[Any, float] = {}      # cell symbol -> its number

    def number(self, cell: Any) -> float | None:
        """The number a cell holds at the exported inputs: an input's value or a formula's
        cached value (None for a formula given as a string without one)."""
        return self._numbers.get(cell)

    def _add(self, row: _Row) -> str:
        if row.value is not None and any(r.label == row.label for r in self.rows
                                         if r.value is not None):
            raise TokenomicsError(f"duplicate sheet label {row.label!r}: every row with a "
                                  "value needs its own label")
        self.rows.append(row)
        return f"B{len(self.rows) + 1}"

    def section(self, title: str, note: str = "") -> None:
        """A row with a title (and a note) but no value: a section heading or a remark."""
        self._add(_Row(title, None, "", note))

    def text(self, label: str, value: str, note: str = "") -> None:
        """A row whose value is text (not referenced by formulas)."""
        self._add(_Row(label, value, "", note))

    def value(self, label: str, v: float, unit: str, note: str = "") -> Any:
        """An input number in ``unit``; returns its cell's symbol.

        Raises
        ------
        TokenomicsError
            When ``v`` is not finite (a spreadsheet cell cannot hold NaN or infinity), or the
            label is already used by a value row.
        """
        import sympy as sp

        v = float(v)
        if not math.isfinite(v):
            raise TokenomicsError(f"{label} is {v!r}; a sheet cell needs a finite number")
        sym = sp.Symbol(self._add(_Row(label, v, unit, note)), nonnegative=True)
        self._numbers[sym] = v
        return sym

    def formula(self, label: str, expr: Any, unit: str, note: str = "",
                cached: float | None = None) -> Any:
        """An output: a SymPy expression of earlier cells (or a formula string ``"=..."``),
        in ``unit``; returns its cell's symbol.

        The formula's value at the exported inputs is kept beside it (``cached``: what a
        spreadsheet program would compute, written into the file so that readers that do not
        recompute, such as pandas, read numbers): a SymPy expression is evaluated over the
        earlier cells' numbers; a string formula takes ``cached`` from the caller.
        """
        import sympy as sp

        if isinstance(expr, str):
            f, value = expr, cached
        else:
            f = spreadsheet_formula(expr)
            value = _evaluate(expr, self._numbers)
        sym = sp.Symbol(self._add(_Row(label, f, unit, note, value)), nonnegative=True)
        if value is not None:
            self._numbers[sym] = value
        return sym

    def write(self, path: str | os.PathLike[str]) -> Path:
        """Write the sheet as CSV (UTF-8, :data:`HEADER` first); returns the path.

        Whole numbers are written without a decimal point, other floats with ``repr`` (the
        shortest string that reads back to the same double).
        """
        out = Path(path)
        with open(out, "w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh)
            w.writerow(HEADER)
            for r in self.rows:
                w.writerow([r.label, _cell(r.value), r.unit, r.note])
        return out


def _evaluate(expr: Any, numbers: dict[Any, float]) -> float | None:
    """A SymPy expression of cells at the cells' numbers (None where one is unknown)."""
    missing = expr.free_symbols - numbers.keys()
    if missing:
        return None
    v = float(expr.xreplace({s: numbers[s] for s in expr.free_symbols}))
    return v if math.isfinite(v) else None


def _cell(v: Any) -> str:
    """A value cell: whole numbers without a decimal point, other floats as ``repr``."""
    if v is None:
        return ""
    if isinstance(v, float):
        return str(int(v)) if v.is_integer() and abs(v) < 2.0**53 else repr(v)
    return str(v)
