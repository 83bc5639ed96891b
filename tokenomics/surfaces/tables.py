"""Catalog tables: one row per entry, unit-suffixed numeric columns, sources beside values.

Column units are in the names (``_tflop_per_s``, ``_gb``, ``_tb_per_s``...) and use decimal
prefixes (1 GB = 1e9 B). Cells are plain numbers (empty where not published), so a CSV export
opens in a spreadsheet as numbers.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tokenomics.core import PEAK_KEYS, NotPublishedError, TokenomicsError
from tokenomics.data import Hardware, default_catalog
from tokenomics.physics import kv_bytes_per_token, param_count, ridge_point


def hardware_table() -> pd.DataFrame:
    """All catalog accelerators, one row each.

    Returns
    -------
    pandas.DataFrame
        Indexed by catalog ``id`` (``t.loc["h200"]``); columns ``name``, ``vendor``, ``status``, ``peak_<fmt>_dense_tflop_per_s`` for every
        format, ``mem_capacity_gb`` (physical), ``mem_visible_gb`` (what the driver
        reports; NaN where not published), ``mem_bw_tb_per_s``, ``ridge_bf16_flop_per_byte``,
        ``ridge_fp8_flop_per_byte``, ``ridge_fp4_flop_per_byte``, ``sram_mb``,
        ``scale_up_gb_per_s_per_direction``, ``scale_up_domain_size``,
        ``scale_out_gb_per_s_per_direction``, ``tdp_w``, ``price_usd_per_hour`` (the price the cost
        functions use: :func:`~tokenomics.economics.basis.price_on_basis` on the default
        basis, NaN where the device has none), ``price_tier`` (``"tco"`` where it is owned,
        not rented), ``price_date``, ``sources`` (bibliography keys).

    Examples
    --------
    >>> t = hardware_table()
    >>> float(t.loc["h200", "mem_bw_tb_per_s"])
    4.8
    """
    rows = []
    for h in default_catalog().hardware.values():
        row: dict[str, object] = dict(id=h.id, name=h.name, vendor=h.vendor, status=h.status)
        for k in PEAK_KEYS:
            v = h.peak_flop_per_s.get(k)
            row[f"peak_{k}_dense_tflop_per_s"] = v / 1e12 if v else np.nan
        row["mem_capacity_gb"] = h.mem_capacity_bytes / 1e9
        row["mem_visible_gb"] = (h.mem_visible_bytes / 1e9 if h.mem_visible_bytes is not None
                                 else np.nan)
        row["mem_bw_tb_per_s"] = h.mem_bw_bytes_per_s / 1e12
        for k in ("bf16", "fp8", "fp4"):
            row[f"ridge_{k}_flop_per_byte"] = _ridge_or_nan(h, k)
        row["sram_mb"] = h.sram_bytes / 1e6 if h.sram_bytes else np.nan
        row["scale_up_gb_per_s_per_direction"] = (
            h.scale_up_bw_bytes_per_s / 1e9 if h.scale_up_bw_bytes_per_s else np.nan)
        row["scale_up_domain_size"] = h.scale_up_domain_size or np.nan
        row["scale_out_gb_per_s_per_direction"] = (
            h.scale_out_bw_bytes_per_s / 1e9 if h.scale_out_bw_bytes_per_s else np.nan)
        row["tdp_w"] = h.tdp_w if h.tdp_w else np.nan
        price = _default_price(h)
        row["price_usd_per_hour"] = price.usd_per_device_hour if price else np.nan
        row["price_tier"] = price.tier if price else ""
        row["price_date"] = price.date if price else ""
        row["sources"] = " ".join(sorted(set(h.sources.values())))
        rows.append(row)
    return pd.DataFrame(rows).set_index("id")


def _default_price(h: Hardware) -> Any:
    """The device's price on the default basis, or None where it has none."""
    from tokenomics.economics.basis import price_on_basis

    try:
        return price_on_basis(h)
    except NotPublishedError:
        return None


def _ridge_or_nan(h: Hardware, fmt: str) -> float:
    """:func:`tokenomics.ridge_point` at ``fmt`` [FLOP/B]; NaN where the peak is unpublished."""
    try:
        return ridge_point(h, fmt)
    except NotPublishedError:
        return np.nan


def model_table() -> pd.DataFrame:
    """All catalog models, one row each, with computed and official parameter counts.

    Returns
    -------
    pandas.DataFrame
        Indexed by catalog ``id``; columns ``name``, ``attention``, ``layers``, ``hidden_size``, ``q_heads``,
        ``kv_heads``, ``head_dim``, ``full_kv_heads`` and ``full_head_dim`` (the full-attention
        layers', where they have a shape of their own: Gemma 4), ``kv_layers`` (the layers that
        keep a KV: not linear, not KV-shared), ``experts``, ``top_k``, ``params_total_b`` and
        ``params_active_b`` (computed, billions), ``official_total_b``,
        ``official_active_b``, ``kv_bytes_per_token_bf16`` (all layers full),
        ``max_context_tokens``, ``weight_dtype``, ``expert_dtype``, ``embedding_dtype`` (the
        embedding table and LM head, where the release keeps them apart), ``sources``.

    Examples
    --------
    >>> t = model_table()
    >>> int(t.loc["llama-3.1-70b", "kv_bytes_per_token_bf16"])
    327680
    """
    rows = []
    for m in default_catalog().models.values():
        a = m.attention
        rows.append(dict(
            id=m.id, name=m.name, attention=a.kind, layers=m.num_layers,
            hidden_size=m.hidden_size, q_heads=a.num_q_heads, kv_heads=a.num_kv_heads,
            head_dim=a.head_dim,
            full_kv_heads=(m.global_attention or a).num_kv_heads,
            full_head_dim=(m.global_attention or a).head_dim,
            kv_layers=sum(n for _, n in m.attention_shapes(storing=True)),
            experts=m.moe.num_experts if m.moe else 0,
            top_k=m.moe.top_k if m.moe else 0,
            params_total_b=param_count(m) / 1e9,
            params_active_b=param_count(m, active=True) / 1e9,
            official_total_b=(m.official_total_params or np.nan) / 1e9,
            official_active_b=(m.official_active_params or np.nan) / 1e9,
            kv_bytes_per_token_bf16=kv_bytes_per_token(m, "bf16"),
            max_context_tokens=m.max_context, weight_dtype=m.weight_dtype,
            expert_dtype=m.expert_dtype or "", embedding_dtype=m.embedding_dtype or "",
            sources=" ".join(sorted(set(m.sources.values()))),
        ))
    return pd.DataFrame(rows).set_index("id")


def export_table_csv(df: pd.DataFrame, path: str | os.PathLike[str],
                     index: bool = False) -> Path:
    """Write a DataFrame as a plain CSV of values.

    Parameters
    ----------
    df : pandas.DataFrame
        Any table (e.g. ``decode(...).to_frame()``, :func:`tokenomics.pareto.envelope`). Units
        belong in the column names (``step_time_s``), not in the cells.
    path : str or path-like
    index : bool
        Write the index as the first column (default False).

    Returns
    -------
    pathlib.Path

    Raises
    ------
    TokenomicsError
        ``df`` is not a DataFrame, or a cell holds a unit-carrying quantity (convert it to a
        magnitude and put the unit in the column name).
    OSError
        The path cannot be written.

    Notes
    -----
    Floats are written with full precision (``repr``, the shortest string that reads back
    to the same double), so ``pandas.read_csv`` returns the same numbers; no thousands
    separators, no units, no rounding.

    Examples
    --------
    >>> import tempfile, os
    >>> import pandas as pd
    >>> df = pd.DataFrame({"batch": [1, 2], "step_time_s": [1 / 3, 0.1 + 0.2]})
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     p = export_table_csv(df, os.path.join(tmp, "t.csv"))
    ...     back = pd.read_csv(p)
    >>> bool((back.step_time_s == df.step_time_s).all())
    True
    """
    if not isinstance(df, pd.DataFrame):
        raise TokenomicsError(f"df must be a pandas DataFrame, got {type(df).__name__}")
    if not isinstance(path, (str, os.PathLike)):
        raise TokenomicsError(f"path must be a file path (str or pathlib.Path), got "
                              f"{type(path).__name__} {path!r}")
    for col in df.columns:
        if df[col].dtype == object and any(hasattr(v, "units") and hasattr(v, "magnitude")
                                           for v in df[col]):
            raise TokenomicsError(
                f"column {col!r} holds quantities with units; write magnitudes and put the "
                "unit in the column name (e.g. 'step_time_s')")
    out = Path(path)
    df.to_csv(out, index=index, float_format=lambda v: repr(float(v)))
    return out
