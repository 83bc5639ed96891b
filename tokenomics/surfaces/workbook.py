"""An .xlsx sizing workbook: one sheet per deployment, named cells, live formulas, a comparison.

Notes
-----
Each deployment's sheet holds the rows of :func:`tokenomics.surfaces.export.sizing_sheet`
(label, value, unit, note, and the cell's name): inputs are plain numbers on a yellow fill,
outputs are formulas of them, so editing a batch, a context or a bandwidth recomputes every
output, communication included. Every value cell has a workbook-wide defined name, the
row's label in lower case with runs of other characters as ``_``, then ``_<sheet number>``
(``batch_1``, ``step_time_2``), and the formulas are written over those names
(``=MAX(attn_qkv_flops_per_sequence_per_device_1*micro_batch_1/achievable_flop_s_1, ...)``)
instead of cell addresses. A first sheet, ``about``, says what the workbook is; the last,
``compare``, sets the headline outputs of the deployments side by side as references to
their sheets.

Written with openpyxl (an optional dependency: ``pip install inference-tokenomics[workbook]``);
a spreadsheet application computes the formulas on opening, and the tests recompute them
with the ``formulas`` engine after editing inputs, against the library to 1e-9.

References
----------
.. [1] ECMA-376, Office Open XML File Formats, Part 1, §18.2.5 (defined names).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tokenomics.core.errors import TokenomicsError
from tokenomics.data.deployment import Deployment
from tokenomics.surfaces.export import sizing_sheet

#: The outputs the comparison sheet sets side by side, with their number formats.
COMPARED = (("step time", "0.000E+00"), ("tokens/s per user", "#,##0.0"),
            ("tokens/s per device", "#,##0.0"), ("communication time per step", "0.000E+00"),
            ("memory total per device", "#,##0"), ("usable memory per device", "#,##0"),
            ("fits", "0"), ("max batch", "#,##0"), ("cost per million tokens", "0.0000"),
            ("joules per token", "0.0000"))

_FORMATS = {"s": "0.000E+00", "B": "#,##0", "token/s": "#,##0.0", "USD/Mtok": "0.0000",
            "USD/hour": "0.00", "1": "0.0000", "FLOP/s": "0.000E+00", "B/s": "0.000E+00",
            "FLOP": "0.000E+00", "sequences": "#,##0.##", "token": "#,##0"}
_MAX_SHEETS = 50
_INPUT_FILL = "FFF2CC"
_REF = re.compile(r"(?<![A-Za-z0-9_.])B(\d+)(?::B(\d+))?(?![0-9A-Za-z_(])")


def _slug(label: str) -> str:
    s = re.sub(r"[^a-z0-9]+", "_", label.lower()).strip("_")
    return s if s and s[0].isalpha() else f"n_{s}"


def _names(rows: list[Any], k: int) -> dict[int, str]:
    """Defined name of each value row (by its sheet row number), unique in the sheet."""
    out: dict[int, str] = {}
    used: set[str] = set()
    for i, r in enumerate(rows):
        if r.value is None or isinstance(r.value, str) and not r.value.startswith("="):
            continue
        base, n = f"{_slug(r.label)}_{k}", 2
        name = base
        while name in used:
            name, n = f"{base}_{n}", n + 1
        used.add(name)
        out[i + 2] = name
    return out


def _by_name(formula: str, names: dict[int, str]) -> str:
    """A formula over ``B<row>`` addresses rewritten over the rows' names (a range
    ``B3:B7`` becomes the list of its names)."""
    def sub(m: re.Match[str]) -> str:
        a = int(m.group(1))
        b = int(m.group(2)) if m.group(2) else a
        try:
            return ",".join(names[i] for i in range(a, b + 1) if i in names)
        except KeyError:   # pragma: no cover - every reference is to a value row
            raise TokenomicsError(f"internal: formula {formula!r} refers to a row with no "
                                  "value") from None
    return _REF.sub(sub, formula)


def _sheet_title(k: int, dep: Deployment, taken: set[str]) -> str:
    raw = f"{k} {dep.model.id} {dep.hardware.id} tp{dep.tp}" + (f"pp{dep.pp}" if dep.pp > 1
                                                                 else "")
    title = re.sub(r"[\[\]:*?/\\]", "-", raw)[:31]
    while title in taken:    # pragma: no cover - the leading number keeps titles apart
        title = title[:-1]
    taken.add(title)
    return title


def _write_sheet(ws: Any, rows: list[Any], names: dict[int, str]) -> None:
    from openpyxl.styles import Font, PatternFill

    bold = Font(bold=True)
    ws.append(["label", "value", "unit", "note", "name"])
    for c in ws[1]:
        c.font = bold
    fill = PatternFill("solid", fgColor=_INPUT_FILL)
    for i, r in enumerate(rows):
        row = i + 2
        v = r.value
        if isinstance(v, str) and v.startswith("="):
            v = _by_name(v, names)
        ws.append([r.label, v, r.unit, r.note, names.get(row, "")])
        cell = ws.cell(row=row, column=2)
        if r.value is None:
            ws.cell(row=row, column=1).font = bold
        elif isinstance(r.value, float):
            cell.fill = fill
        if row in names:
            cell.number_format = _FORMATS.get(r.unit, "General")
    for col, width in zip("ABCDE", (46, 22, 14, 70, 44), strict=True):
        ws.column_dimensions[col].width = width
    ws.freeze_panes = "B2"


def _define(wb: Any, title: str, names: dict[int, str]) -> None:
    from openpyxl.workbook.defined_name import DefinedName

    quoted = "'" + title.replace("'", "''") + "'"
    for row, name in names.items():
        wb.defined_names[name] = DefinedName(name, attr_text=f"{quoted}!$B${row}")


def _about(ws: Any, deps: list[Deployment], batch: int, context_tokens: int) -> None:
    import importlib.metadata as md

    try:
        version = md.version("inference-tokenomics")
    except md.PackageNotFoundError:   # pragma: no cover - a checkout without its metadata
        version = "unknown"
    lines = [
        "tokenomics sizing workbook",
        f"written by tokenomics {version} at batch {batch}, context {context_tokens} tokens",
        "One sheet per deployment: yellow cells are inputs, every other value is a formula "
        "of them (one decode step, as tokenomics.decode).",
        "Edit an input (batch, context tokens, memory bandwidth, MFU, MBU, price...) and "
        "every output recomputes, communication of TP/PP layouts included.",
        "Every value cell has a name (column E), and the formulas use the names.",
        "Structural cells (tp, pp, formats, the model) do not re-shard: export again.",
        "'compare' sets the headline outputs of the deployments side by side.",
    ]
    for line in lines:
        ws.append([line])
    from openpyxl.styles import Font

    ws["A1"].font = Font(bold=True)
    ws.column_dimensions["A"].width = 110
    for k, d in enumerate(deps, 1):
        ws.append([f"sheet {k}: {d.model.id} on {d.hardware.id}, tp={d.tp} pp={d.pp} "
                   f"ep={d.ep}, {d.weight_dtype} weights, {d.kv_dtype} KV, efficiency "
                   f"{d.efficiency.label}"])


def _compare(ws: Any, sheets: list[tuple[str, list[Any], dict[int, str]]]) -> dict[str, float]:
    """The comparison sheet; returns each of its formula cells' cached value by address."""
    from openpyxl.styles import Font
    from openpyxl.utils import get_column_letter

    ws.append(["output", "unit", *[t for t, _r, _n in sheets]])
    for c in ws[1]:
        c.font = Font(bold=True)
    cached: dict[str, float] = {}
    for label, fmt in COMPARED:
        unit, cells = "", []
        for j, (_t, rows, names) in enumerate(sheets):
            hit = [i + 2 for i, r in enumerate(rows) if r.label == label and i + 2 in names]
            unit = next((r.unit for r in rows if r.label == label), unit)
            cells.append(f"={names[hit[0]]}" if hit else "")
            if hit and rows[hit[0] - 2].cached is not None:
                cached[f"{get_column_letter(3 + j)}{ws.max_row + 1}"] = rows[hit[0] - 2].cached
        ws.append([label, unit, *cells])
        for c in ws[ws.max_row][2:]:
            c.number_format = fmt
    ws.column_dimensions["A"].width = 30
    ws.freeze_panes = "C2"
    return cached


def _prices(deps: list[Deployment], prices: Any) -> list[float | None]:
    if prices is None or isinstance(prices, (int, float)) and not isinstance(prices, bool):
        return [prices] * len(deps)
    if isinstance(prices, Mapping):
        return [prices.get(d.hardware.id) for d in deps]
    raise TokenomicsError(f"prices must be None, one USD/hour for every device, or a mapping "
                          f"of hardware id to USD/hour, got {type(prices).__name__}")


def export_sizing_workbook(path: str | os.PathLike[str],
                           deployments: Deployment | Sequence[Deployment], batch: int,
                           context_tokens: int, prices: Any = None) -> Path:
    """Write an .xlsx sizing workbook: a sheet per deployment with named, live cells.

    Parameters
    ----------
    path : str or path-like
        The .xlsx file to write (overwritten).
    deployments : Deployment or sequence of Deployment
        One to 50 deployments, a sheet each, in order.
    batch : int
        Concurrent sequences on each replica, >= 1, written into each sheet's batch cell.
    context_tokens : int
        Tokens in each sequence's KV cache [token], >= 1.
    prices : float, mapping or None
        USD per device-hour: one figure for every sheet, a mapping of hardware id to price,
        or None (each device's latest catalog rental; a sheet without one has no cost row).

    Returns
    -------
    pathlib.Path
        The file written.

    Raises
    ------
    TokenomicsError
        No deployment, too many, something else where a Deployment goes, a bad batch,
        context or price (the message names it).
    NotImplementedError
        For models the sheet does not carry yet (hybrid linear attention, sparse attention),
        as :func:`tokenomics.export_sizing_sheet`.
    ImportError
        Without openpyxl (``pip install inference-tokenomics[workbook]``).

    Notes
    -----
    Each sheet is :func:`tokenomics.surfaces.export.sizing_sheet` of its deployment, whose
    outputs reproduce :func:`tokenomics.decode`, :func:`tokenomics.memory_fit`,
    :func:`tokenomics.max_batch` and the cost per million tokens at any batch and context
    typed into it; the module notes give the names and the layout.

    Examples
    --------
    >>> import os, tempfile
    >>> import tokenomics as tk
    >>> deps = [tk.Deployment("llama-3.1-8b", "h100-sxm"),
    ...         tk.Deployment("llama-3.1-70b", "h200", tp=4)]
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     p = export_sizing_workbook(os.path.join(tmp, "sizing.xlsx"), deps, 16, 4096)
    ...     p.suffix
    '.xlsx'
    """
    try:
        import openpyxl
    except ImportError as exc:   # pragma: no cover - the test extras install it
        raise ImportError("export_sizing_workbook needs openpyxl: pip install "
                          "'inference-tokenomics[workbook]'") from exc
    deps = [deployments] if isinstance(deployments, Deployment) else deployments
    if isinstance(deps, (str, bytes)) or not isinstance(deps, Sequence) or not deps:
        raise TokenomicsError("deployments must be a Deployment or a non-empty sequence of "
                              "them")
    deps = list(deps)
    if len(deps) > _MAX_SHEETS:
        raise TokenomicsError(f"at most {_MAX_SHEETS} deployments in one workbook, got "
                              f"{len(deps)}")
    bad = [i for i, d in enumerate(deps) if not isinstance(d, Deployment)]
    if bad:
        raise TokenomicsError(f"deployments[{bad[0]}] is a {type(deps[bad[0]]).__name__}, not "
                              "a Deployment; build one with tk.Deployment(model, hardware)")
    wb = openpyxl.Workbook()
    _about(wb.active, deps, batch, context_tokens)
    wb.active.title = "about"
    taken: set[str] = {"about", "compare"}
    sheets = []
    for k, (d, price) in enumerate(zip(deps, _prices(deps, prices), strict=True), 1):
        rows = sizing_sheet(d, batch, context_tokens, price).rows
        names = _names(rows, k)
        title = _sheet_title(k, d, taken)
        _write_sheet(wb.create_sheet(title), rows, names)
        _define(wb, title, names)
        sheets.append((title, rows, names))
    cached = _compare(wb.create_sheet("compare"), sheets)
    out = Path(path)
    wb.save(out)
    _write_cached_values(out, {k + 2: _cached_cells(rows) for k, (_t, rows, _n)
                               in enumerate(sheets)} | {len(sheets) + 2: cached})
    return out


def _cached_cells(rows: list[Any]) -> dict[str, float]:
    """Column B's cached value of each formula row of a sheet, by cell address."""
    return {f"B{i + 2}": r.cached for i, r in enumerate(rows)
            if isinstance(r.value, str) and r.value.startswith("=") and r.cached is not None}


#: A formula cell as openpyxl writes it: ``<c r="B12" s="3"><f>...</f><v /></c>``.
_FORMULA_CELL = re.compile(r'<c r="([A-Z]+[0-9]+)"([^>]*)><f>([^<]*)</f><v ?/></c>')


def _write_cached_values(path: Path, cached: dict[int, dict[str, float]]) -> None:
    """Write each formula's value at the exported inputs beside it (the ``<v>`` a spreadsheet
    program writes after computing), so that readers that do not recompute (pandas,
    openpyxl with ``data_only=True``) read numbers; a spreadsheet program recomputes them on
    opening all the same. ``cached``: sheet number (``xl/worksheets/sheet<n>.xml``, in the
    workbook's order) -> cell -> value."""
    import zipfile

    with zipfile.ZipFile(path) as z:
        items = [(info, z.read(info.filename)) for info in z.infolist()]
    out = []
    for info, data in items:
        m = re.fullmatch(r"xl/worksheets/sheet(\d+)\.xml", info.filename)
        cells = cached.get(int(m.group(1))) if m else None
        if cells:
            def fill(mm: re.Match[str], cells: dict[str, float] = cells) -> str:
                v = cells.get(mm.group(1))
                if v is None:
                    return mm.group(0)
                return f'<c r="{mm.group(1)}"{mm.group(2)}><f>{mm.group(3)}</f><v>{v!r}</v></c>'
            data = _FORMULA_CELL.sub(fill, data.decode("utf-8")).encode("utf-8")
        out.append((info, data))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for info, data in out:
            z.writestr(info, data)
