"""Published measurements against the library's roofline bound.

Each row of ``measurements/measured.toml`` expresses a published measurement (MLPerf, the
TensorRT-LLM performance tables, EAGLE-3, a vLLM benchmark) in the library's own terms: model,
hardware, layout, formats and workload. :func:`measured_vs_bound` computes the pure roofline
bound (every efficiency 1, no overhead) for each and the ratio measured / bound, which must
never exceed 1: a measurement above the bound is a bug in the model, the catalog or the row.

Notes
-----
Speeds only, so that "bound >= measured" reads the same for every row:

* ``tokens_per_s_per_user`` (1 / TPOT): the decode step at the row's batch and a context of
  ``input + output / 2`` tokens; bound = ``1 / step_time_s``.
* ``tokens_per_s_per_device`` (output tokens): ``B`` sequences decode while ``B / O`` new
  requests are prefilled per step (``O`` mean output tokens), so a step lasts at least
  :math:`\\max(t_\\mathrm{decode}(B),\\; C_\\mathrm{decode}(B) + (B/O)\\,C_\\mathrm{prefill})`
  where :math:`C` are compute times; bound = :math:`B / t / n_\\mathrm{devices}`. ``B`` is the
  engine's batch where published, else the largest that fits with all memory usable.

An unknown mean input length is taken as 1 token, which only loosens the bound.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tokenomics.core.dtypes import dtype
from tokenomics.core.errors import CatalogError, TokenomicsError, UnknownEntryError
from tokenomics.data.bibliography import catalog_dir
from tokenomics.data.catalog import hardware, model
from tokenomics.data.deployment import Deployment
from tokenomics.data.kinds import MEASUREMENTS
from tokenomics.data.schema import read_entries
from tokenomics.data.specs import ROOFLINE, Efficiency
from tokenomics.physics.memory import max_batch
from tokenomics.physics.step import decode, prefill

# The file's fields, kinds and ranges are declared once, in tokenomics.data.kinds.MEASUREMENTS.


@dataclass(frozen=True)
class Measurement:
    """One published measurement in the library's terms (see the module notes)."""

    id: str
    source: str
    model: str
    hardware: str
    tp: int
    weight_dtype: str
    kv_dtype: str
    compute_dtype: str
    metric: str
    measured: float
    output_tokens: int
    pp: int = 1
    ep: int = 1
    dp_attention: int = 1
    input_tokens: int | None = None
    batch: int | None = None
    note: str = ""
    calibrate: bool = True
    calibrate_note: str = ""
    reserved: bool = False

    def deployment(self) -> Deployment:
        """The row's deployment, all memory usable and no workspace (the generous fit)."""
        return Deployment(model(self.model), hardware(self.hardware), tp=self.tp, pp=self.pp, ep=self.ep,
                          dp_attention=self.dp_attention, weight_dtype=self.weight_dtype,
                          kv_dtype=self.kv_dtype, compute_dtype=self.compute_dtype,
                          usable_memory_fraction=1.0, workspace_bytes=0.0)


def load_measurements(path: str | Path | None = None, *, include_reserved: bool = False
                      ) -> list[Measurement]:
    """Read and validate a measurements file (default: the bundled one).

    Parameters
    ----------
    path : str or Path, optional
        A measurements TOML file; default the bundled ``measurements/measured.toml``.
    include_reserved : bool
        Also return the rows held for independent validation.

    Returns
    -------
    list of Measurement

    Rows marked ``reserved = true`` (MLPerf Inference v5.1 and later: held out for
    independent validation) are left out unless ``include_reserved``.

    Raises
    ------
    CatalogError
        Naming the file, the row and the field for a missing/unknown field or a bad metric.
    """
    if not isinstance(include_reserved, bool):
        raise TokenomicsError(f"include_reserved must be True or False, got {include_reserved!r}")
    if path is not None and not isinstance(path, (str, Path)):
        raise CatalogError(f"load_measurements: path must be a file path, got {path!r}")
    p = Path(path) if path else catalog_dir("measurements") / "measured.toml"
    rows: list[Measurement] = []
    for i, v in enumerate(read_entries(MEASUREMENTS, p, {})):
        where = f"{p}: field row[{i}]"
        for k in ("weight_dtype", "kv_dtype", "compute_dtype"):
            try:
                dtype(v[k])
            except UnknownEntryError as exc:
                raise CatalogError(f"{where}.{k}: {exc}") from None
        if v["id"] in {m.id for m in rows}:
            raise CatalogError(f"{where}.id: {v['id']!r} appears twice")
        m = Measurement(**{f.name: v[f.name] for f in MEASUREMENTS.fields
                           if v[f.name] is not None})
        if include_reserved or not m.reserved:
            rows.append(m)
    return rows


def speed(m: Measurement, efficiency: Efficiency = ROOFLINE) -> dict[str, Any]:
    """A measurement's speed predicted under an efficiency model (ROOFLINE: the bound).

    Parameters
    ----------
    m : Measurement
    efficiency : Efficiency

    Returns
    -------
    dict
        ``speed`` [token/s per user or per device, as the row's metric], ``batch``,
        ``context_tokens``, ``fits`` (the batch fits the memory model), ``kind``.

    Notes
    -----
    Latency rows: :math:`1 / t_{dec}(B)`. Throughput rows: :math:`B / \\max(t_{dec},\\ C_{dec}
    + (B/O)\\,C_{pre} + t_0) / n` (module notes), :math:`t_0` the per-step overhead.
    """
    d = m.deployment().with_(efficiency=efficiency)
    isl = m.input_tokens or 1
    ctx = int(np.ceil(isl + m.output_tokens / 2))
    if m.metric == "tokens_per_s_per_user":
        b = m.batch or 1
        r = decode(d, b, ctx, on_oom="mark")
        return dict(speed=float(1.0 / r.step_time_s), batch=b, context_tokens=ctx,
                    fits=bool(r.fits), kind="1 / decode step")
    fit_b = int(max_batch(d, ctx))
    b = m.batch or fit_b
    if b < 1:
        raise TokenomicsError(f"{m.id}: the model does not fit {d.n_devices} x {m.hardware}")
    r = decode(d, b, ctx, on_oom="mark")
    pre = prefill(d, isl, 1, on_oom="mark").compute_time_s
    step = max(r.step_time_s, r.compute_time_s + b / m.output_tokens * pre
               + efficiency.step_overhead_s)
    return dict(speed=float(b / step / d.n_devices), batch=b, context_tokens=ctx,
                fits=bool(b <= fit_b), kind="B / max(decode, compute incl. prefill)")


def bound_for(m: Measurement) -> dict[str, Any]:
    """The roofline bound of one measurement, with the quantities behind it."""
    r = speed(m, ROOFLINE)
    return dict(bound=r["speed"], batch=r["batch"], context_tokens=r["context_tokens"],
                fits=r["fits"], bound_kind=r["kind"])


def measured_vs_bound(path: str | Path | None = None) -> pd.DataFrame:
    """Every measurement beside its roofline bound.

    Parameters
    ----------
    path : str or Path, optional
        A measurements TOML file; default the bundled one (:func:`load_measurements`).

    Returns
    -------
    pandas.DataFrame
        ``id``, ``model``, ``hardware``, ``layout``, ``metric``, ``measured``, ``bound``,
        ``measured_over_bound`` (<= 1 when the model is right), ``batch``,
        ``context_tokens``, ``batch_fits_memory_model``, ``bound_kind``, ``source``.

    Examples
    --------
    >>> t = measured_vs_bound()
    >>> bool((t.measured_over_bound <= 1).all())
    True
    """
    rows = []
    for m in load_measurements(path):
        b = bound_for(m)
        rows.append(dict(
            id=m.id, model=m.model, hardware=m.hardware,
            layout=f"tp{m.tp}" + (f"xpp{m.pp}" if m.pp > 1 else ""), metric=m.metric,
            measured=m.measured, bound=b["bound"], measured_over_bound=m.measured / b["bound"],
            batch=b["batch"], context_tokens=b["context_tokens"],
            batch_fits_memory_model=b["fits"], bound_kind=b["bound_kind"], source=m.source))
    return pd.DataFrame(rows)
