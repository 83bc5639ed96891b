"""The files of ``tokenomics report``: memory, decode, frontier and cost tables and figures.

Each ``_report_*`` writes its CSV (and figure) into the report's folder and returns the lines
it adds to ``report.txt``; :func:`build_report` runs them in order. The command itself
(:func:`tokenomics.surfaces.cli.cmd_report`) checks the arguments first and builds the report in
a staging folder, so a failure writes nothing to ``--out``.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from tokenomics.data.deployment import Deployment


#: Columns that count whole things (sequences, tokens, devices): written as integers where
#: every value is whole.
COUNT_COLUMNS = ("batch", "context_tokens", "prompt_tokens", "cached_tokens", "concurrency",
                 "devices", "tp", "pp", "ep", "max_batch")


def whole_counts(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with each of :data:`COUNT_COLUMNS` whose values are all whole (and finite) as
    integers: a batch of 8 reads ``8``, not ``8.0``; a fractional mean stays as it is."""
    import numpy as np

    out = df.copy()
    for c in COUNT_COLUMNS:
        if c in out.columns and out[c].dtype.kind == "f":
            v = out[c].to_numpy()
            if np.isfinite(v).all() and (v == np.round(v)).all():
                out[c] = v.astype(np.int64)
    return out


def with_provenance(df: pd.DataFrame, d: Deployment | None, **more: Any) -> pd.DataFrame:
    """``df`` with the columns that say what produced it appended: the model, hardware,
    device count, parallel layout, formats and efficiency (``efficiency``: the preset's
    label; ``stack``: the fitted stack used, empty for the bound), the library version,
    and any ``more`` (the price with its tier and date...); a column ``df`` already has is
    left as it is. ``d`` None adds the version and ``more`` only."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        release = version("inference-tokenomics")
    except PackageNotFoundError:            # run from a source tree that is not installed
        release = "unknown"
    out = whole_counts(df)
    cols: dict[str, Any] = {}
    if d is not None:
        cols.update(model=d.model.id, hardware=d.hardware.id, devices=d.n_devices, tp=d.tp,
                    pp=d.pp, ep=d.ep, dp_attention=d.dp_attention,
                    weight_dtype=d.weight_dtype, kv_dtype=d.kv_dtype,
                    compute_dtype=d.compute_dtype, efficiency=d.efficiency.label,
                    stack=d.efficiency.stack)
    cols.update(more)
    cols["tokenomics_version"] = release
    for k, v in cols.items():
        if k not in out.columns:
            out[k] = v
    return out


def _save(ax: Any, path: Any) -> None:
    """Write the figure an Axes belongs to as a PNG."""
    ax.get_figure(root=True).savefig(path, dpi=110)


def layout_min_devices(d: Deployment, batch: int, ctx: int, multiple_of: int) -> int | None:
    """Devices this deployment's own layout (its tp, KV sharding) needs for ``batch``
    sequences of ``ctx`` tokens, a multiple of ``multiple_of``; None where no count fits."""
    import tokenomics as tk

    try:
        return int(tk.min_devices(d, batch, ctx, multiple_of=multiple_of))
    except tk.DoesNotFitError:
        return None


def _report_memory(d: Deployment, batches: list[int], ctx: int, mb: int,
                   out: Any) -> list[str]:
    """memory.csv over the report's batches, and the memory line of the report."""
    import tokenomics as tk

    fit = tk.memory_fit(d, batches, ctx).to_frame()      # batch and context columns first
    with_provenance(fit, d).to_csv(out / "memory.csv", index=False)
    pooled = tk.min_devices(tk.MemoryBudget(d.model, d.hardware, d.weight_dtype, d.kv_dtype,
                                            d.usable_memory_fraction), 1, ctx)
    own = layout_min_devices(d, 1, ctx, 1)
    need = f"{own} at tp={d.tp}" if own is not None else f"none at tp={d.tp}"
    return [f"memory per device: weights {fit.weights_bytes.iloc[0] / 1e9:.1f} GB of "
            f"{d.hardware.mem_usable_bytes / 1e9:.0f} GB ({d.usable_memory_fraction:.0%} "
            f"usable); max batch at {ctx} tokens: {mb}; min devices for one sequence: {need} "
            f"({pooled} with the KV pooled, any layout)"]


def _report_decode(d: Deployment, batches: list[int], ctx: int, prompt: int,
                   out: Any) -> tuple[pd.DataFrame, list[str]]:
    """decode.csv and operators.csv, and the decode table and prefill line of the report."""
    import tokenomics as tk

    r = tk.decode(d, batches, ctx)
    dec = r.to_frame()[["batch", "step_time_s", "tokens_per_s_per_user",
                        "tokens_per_s_per_device", "bound", "comm_time_s"]]
    with_provenance(dec, d).to_csv(out / "decode.csv", index=False)
    lines = ["", "decode:", dec.to_string(index=False, float_format="{:.4g}".format)]
    pre = tk.prefill(d, prompt)
    lines += ["", f"prefill of {prompt} tokens: TTFT {pre.time_s * 1e3:.1f} ms ({pre.bound}-"
              f"bound)"]
    ops = tk.operator_table(d, "decode", batches[-1], context_tokens=ctx)
    with_provenance(ops, d, batch=batches[-1], context_tokens=ctx).to_csv(
        out / "operators.csv", index=False)
    return dec, lines


def _report_frontier(d: Deployment, ctx: int, slo: float,
                     out: Any) -> tuple[pd.DataFrame, list[str]]:
    """frontier.csv over the TP degrees that hold one sequence, and the best point at the SLO."""
    import tokenomics as tk

    deps = []
    for tp in (1, 2, 4, 8, 16):
        try:
            x = d.with_(tp=tp)
        except tk.TokenomicsError:
            continue
        if int(tk.max_batch(x, ctx)) >= 1:
            deps.append(x)
    f = tk.frontier(deps, ctx, efficiency="deployment")
    with_provenance(f, None, model=d.model.id, hardware=d.hardware.id,
                    weight_dtype=d.weight_dtype, kv_dtype=d.kv_dtype,
                    efficiency=d.efficiency.label, context_tokens=ctx).to_csv(
        out / "frontier.csv", index=False)
    try:
        b = tk.best_at(f, slo)
        return f, ["", f"best at >= {slo:g} tokens/s per user: {b.tokens_per_s_per_device:.4g} "
                   f"tokens/s per device ({b.label})"]
    except tk.TokenomicsError as exc:
        return f, ["", f"SLO {slo:g} tokens/s per user: {exc}"]


def _report_cost(d: Deployment, batch: int, ctx: int, a: argparse.Namespace,
                 out: Any) -> list[str]:
    """cost.csv and cost.png at decode batch ``batch``, and the cost line of the report."""
    import pandas as pd

    import tokenomics as tk

    try:
        c = tk.deployment_cost(d, batch, ctx, prompt_tokens=a.prompt, device_price=a.price)
        e = tk.energy_per_token(c.output_tokens_per_s_per_device, d.hardware) \
            if d.hardware.tdp_w else None
        cost = pd.DataFrame([dict(phase="input", usd_per_mtok=c.input_usd_per_mtok),
                       dict(phase="cached input", usd_per_mtok=c.cached_input_usd_per_mtok),
                       dict(phase="output", usd_per_mtok=c.output_usd_per_mtok)])
        with_provenance(cost, d, batch=batch, context_tokens=ctx, prompt_tokens=a.prompt,
                        usd_per_device_hour=c.usd_per_device_hour, price_tier=c.price_tier,
                        price_date=c.price_date, price_source=c.price_source).to_csv(
            out / "cost.csv", index=False)
        lines = ["", f"cost at ${c.usd_per_device_hour:g}/device-hour (decode batch "
                 f"{batch}): input ${c.input_usd_per_mtok:.4g}, cached input "
                 f"${c.cached_input_usd_per_mtok:.4g}, output ${c.output_usd_per_mtok:.4g} per "
                 "million tokens"
                 + (f"; {e.joules_per_token:.3g} J per output token at TDP" if e else "")]
        _save(tk.plot_cost(c, labels=[d.hardware.id]), out / "cost.png")
    except tk.NotPublishedError as exc:
        return ["", f"cost: {exc}"]
    return lines


def build_report(a: argparse.Namespace, d: Deployment, out: Any,
                 label: str) -> tuple[list[str], Any]:
    """Write every file of ``tokenomics report`` into the folder ``out``.

    Parameters
    ----------
    a : argparse.Namespace
        The parsed ``report`` arguments (``context``, ``prompt``, ``slo``, ``price``,
        ``xlsx``), already checked.
    d : Deployment
        The replica the report is about.
    out : pathlib.Path
        An existing, empty folder (the command's staging folder).
    label : str
        What the numbers are (the pure bound, the calibrated forecast...), printed under
        the title.

    Returns
    -------
    tuple of (list of str, pandas.DataFrame)
        The report's lines (as in ``report.txt``) and its decode table.
    """
    import tokenomics as tk

    ctx = a.context[0]
    mb = int(tk.max_batch(d, ctx))
    batches = sorted({b for b in (1, 8, 32, 64, 128, 256, mb) if 1 <= b <= mb})
    lines = [f"tokenomics sizing report: {d.model.id} on {d.n_devices} x {d.hardware.id} "
             f"(tp={d.tp}, pp={d.pp}), weights {d.weight_dtype}, KV {d.kv_dtype}, compute "
             f"{d.compute_dtype}, context {ctx} tokens", f"  {label}", ""]
    lines += _report_memory(d, batches, ctx, mb, out)
    dec, more = _report_decode(d, batches, ctx, a.prompt, out)
    lines += more
    f, more = _report_frontier(d, ctx, a.slo, out)
    lines += more
    lines += _report_cost(d, min(64, mb), ctx, a, out)
    _save(tk.plot_roofline(d, batch=min(64, mb), context_tokens=ctx, prompt_tokens=a.prompt),
          out / "roofline.png")
    _save(tk.plot_frontier(f, slo_tokens_per_s_per_user=a.slo), out / "frontier.png")
    _save(tk.plot_memory(d, batches, ctx), out / "memory.png")
    if a.xlsx:
        tk.export_sizing_workbook(out / "sizing.xlsx", d, min(64, mb), ctx, prices=a.price)
    (out / "report.txt").write_text("\n".join(lines) + "\n")
    return lines, dec
