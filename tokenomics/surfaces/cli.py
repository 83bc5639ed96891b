"""The ``tokenomics`` command line.

Examples
--------
::

    tokenomics hardware                      # table of accelerators
    tokenomics hardware h200                 # one entry with its sources
    tokenomics models
    tokenomics fit llama-3.1-405b h100-sxm --batch 32 --context 131072
    tokenomics decode llama-3.1-70b h200 --weight-dtype fp8 --kv-dtype fp8 \\
        --batch 1 8 64 --context 8192 --csv decode.csv
    tokenomics prefill llama-3.1-8b h100-sxm --prompt 8192
    tokenomics roofline llama-3.1-70b h100-sxm --tp 4 --phase decode --batch 1 --context 4096

Every command prints a table; ``--csv PATH`` / ``--json PATH`` also write it. Bad input exits
with status 2 and a one-line message.

Your own accelerators, models and prices: ``tokenomics --catalog DIR decode my-model my-chip``
reads the user catalog folder DIR (``hardware/*.toml``, ``models/*.toml``) after the bundled
catalogs (repeatable; the TOKENOMICS_CATALOG environment variable adds folders too; see
docs/user-catalogs.md). ``python -m tokenomics.spec --catalog DIR`` checks the entries
against the physics laws.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

# Only the standard library at module level, so that ``tokenomics --help`` loads no numerical
# library: each command imports what it needs when it runs, through ``tokenomics.*``.
if TYPE_CHECKING:
    import pandas as pd

    from tokenomics.data import Deployment, Efficiency


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # one line, status 2
        self.exit(2, f"tokenomics: error: {message}\n")


# --------------------------------------------------------------------------------------------
# Shared plumbing
# --------------------------------------------------------------------------------------------
def _efficiency_of(a: argparse.Namespace) -> Efficiency:
    """The ``--efficiency`` preset with ``--mfu``, ``--mbu`` and ``--overhead-ms`` applied."""
    import tokenomics as tk

    e = tk.efficiency_presets()[a.efficiency]
    changes = {}
    if a.mfu is not None:
        changes["mfu"] = a.mfu
    if a.mbu is not None:
        changes["mbu"] = a.mbu
    if a.overhead_ms is not None:
        changes["step_overhead_s"] = a.overhead_ms / 1e3
    if changes:
        from dataclasses import replace

        e = replace(e, **changes)
    return e


def _deployment(a: argparse.Namespace) -> Deployment:
    """The Deployment the deployment arguments describe."""
    import tokenomics as tk

    return tk.Deployment(
        tk.model(a.model), tk.hardware(a.hardware), tp=a.tp, pp=a.pp, ep=a.ep,
        dp_attention=a.dp_attention, mlp_data_parallel=a.mlp_data_parallel,
        ep_exchange=a.ep_exchange,
        comm_overlap=a.overlap, allreduce_algorithm=a.allreduce,
        weight_dtype=a.weight_dtype, kv_dtype=a.kv_dtype, act_dtype=a.act_dtype,
        compute_dtype=a.compute_dtype,
        efficiency=_efficiency_of(a),
        usable_memory_fraction=a.usable_fraction, runtime_reserve_bytes=a.reserve_gb * 1e9,
        allow_beyond_max_context=a.allow_beyond_max_context,
    )


def _pooled_budget(d: Deployment) -> Any:
    """The memory budget of ``d`` with its KV pooled over any layout (the device count a
    model needs whatever its parallelism): its formats, usable share and reserve, no
    workspace."""
    import tokenomics as tk

    return tk.MemoryBudget(d.model, d.hardware, d.weight_dtype, d.kv_dtype,
                           d.usable_memory_fraction, d.runtime_reserve_bytes,
                           allow_beyond_max_context=d.allow_beyond_max_context)


def _save_table(df: pd.DataFrame, a: argparse.Namespace, dep: Deployment | None = None,
                **more: Any) -> None:
    """Write ``df`` to the ``--csv`` and ``--json`` paths, where given (``-``: stdout), with
    the provenance columns of ``dep`` and ``more`` appended
    (:func:`~tokenomics.surfaces.report.with_provenance`); the terminal table stays narrow."""
    if not (getattr(a, "csv", None) or getattr(a, "json", None)):
        return
    from tokenomics.surfaces.report import with_provenance

    df = with_provenance(df, dep, **more)
    if getattr(a, "csv", None):
        df.to_csv(sys.stdout if a.csv == "-" else a.csv, index=False)
    if getattr(a, "json", None):
        records = json.loads(df.to_json(orient="records"))
        if a.json == "-":
            json.dump(records, sys.stdout, indent=1)
            print()
        else:
            with open(a.json, "w") as fh:
                json.dump(records, fh, indent=1)


def _terminal_view(df: pd.DataFrame) -> pd.DataFrame:
    """The table as the terminal shows it: a seconds column whose values are all under a
    second in milliseconds (``step_time_s`` 1.95e-05 reads ``step_time_ms`` 0.0195); the
    files keep the canonical units."""
    out = df.copy()
    for c in [c for c in df.columns if c.endswith("_s") and df[c].dtype.kind == "f"]:
        v = df[c].to_numpy()
        finite = v[v == v]
        if finite.size and abs(finite).max() < 1.0:
            out = out.rename(columns={c: c[:-2] + "_ms"})
            out[c[:-2] + "_ms"] = v * 1e3
    return out


def _emit(df: pd.DataFrame, a: argparse.Namespace, title: str = "",
          dep: Deployment | None = None, **more: Any) -> None:
    """The title on stderr, the table (6 significant digits) on stdout, then ``--csv``/``--json``.

    With ``--csv -`` or ``--json -`` the table goes to stderr and stdout carries only the
    data. Rows whose ``fits`` is False get a warning on stderr (``--strict``: exit status 3).
    """
    import pandas as pd

    from tokenomics.surfaces.report import whole_counts

    df = whole_counts(df)
    to_stdout = "-" not in (getattr(a, "csv", None), getattr(a, "json", None))
    if title:
        print(title, file=sys.stderr)
    import shutil

    width = max(60, shutil.get_terminal_size((120, 24)).columns)
    with pd.option_context("display.max_rows", 500, "display.max_columns", 50,
                           "display.float_format", "{:.6g}".format):
        print(_terminal_view(df).to_string(index=False, line_width=width),
              file=sys.stdout if to_stdout else sys.stderr)
    _save_table(df, a, dep, **more)
    if "fits" in df.columns and not df["fits"].astype(bool).all():
        n = int((~df["fits"].astype(bool)).sum())
        print(f"tokenomics: warning: {n} of {len(df)} rows do not fit in memory (fits = "
              f"False){'' if getattr(a, 'strict', False) else '; --strict exits 3 on this'}",
              file=sys.stderr)
        a.did_not_fit = True


def _frame(rows: Any) -> pd.DataFrame:
    """A table of one row per record (dicts) or column (dict of lists)."""
    import pandas as pd

    return pd.DataFrame(rows)


def _entry_frame(obj: Any, srcs: dict[str, str]) -> pd.DataFrame:
    """One row per field of a catalog entry, with its source key, title and URL."""
    import tokenomics as tk

    cat = tk.sources()
    rows = []
    for k, v in obj.items():
        key = srcs.get(k, "")
        s = cat.get(key)
        rows.append(dict(field=k, value=v, source=key, source_title=s.title if s else "",
                         source_url=s.url if s else ""))
    return _frame(rows)


def _label(d: Deployment) -> str:
    """What the numbers are: the pure bound, the calibrated forecast or custom efficiencies."""
    import tokenomics as tk
    from tokenomics.calibration import committed
    from tokenomics.calibration.fitting import interval_for, novelty_of

    e = d.efficiency
    comm = (f"communication overlap {d.comm_overlap:g}, all-reduce {d.allreduce_algorithm}")
    if e == tk.Efficiency():
        return f"pure roofline bound (all efficiencies 1, no overhead); {comm}"
    cal = committed()
    if e.label == "calibrated":
        lo, hi = interval_for(novelty_of(d))
        stack = f"stack {d.stack}" if d.stack else "no engine given: pooled over stacks"
        kind = (f"calibrated forecast (fitted {cal.date}; {stack}; 80% interval x{lo:.2f}-"
                f"x{hi:.2f})")
    else:
        kind = "custom efficiencies"
    return (f"{kind}: mbu={e.mbu:.3g} mfu={e.mfu:.3g} overlap={e.overlap:.2g} "
            f"expert_half_tokens={e.expert_half_tokens:.3g} "
            f"attention_mfu_scale={e.attention_mfu_scale:.3g} link={e.link_efficiency:.3g} "
            f"overhead={e.step_overhead_s * 1e3:.3g} ms; {comm}")


# --------------------------------------------------------------------------------------------
# Catalog commands
# --------------------------------------------------------------------------------------------
_HARDWARE_COLUMNS = ["id", "name", "status", "peak_bf16_dense_tflop_per_s",
                     "peak_fp8_dense_tflop_per_s", "peak_fp4_dense_tflop_per_s",
                     "mem_capacity_gb", "mem_visible_gb", "mem_bw_tb_per_s", "ridge_bf16_flop_per_byte", "tdp_w",
                     "price_usd_per_hour"]

# (row label, Hardware field, divisor, source key) of the scalar hardware fields shown.
_HARDWARE_FIELDS = [
    ("memory.capacity_gb", "mem_capacity_bytes", 1e9, "memory.capacity"),
    ("memory.visible_gb", "mem_visible_bytes", 1e9, "memory.visible"),
    ("memory.bandwidth_tb_per_s", "mem_bw_bytes_per_s", 1e12, "memory.bandwidth"),
    ("memory.sram_mb", "sram_bytes", 1e6, "memory.sram"),
    ("scale_up.gb_per_s_per_direction", "scale_up_bw_bytes_per_s", 1e9, "scale_up.bandwidth"),
    ("scale_up.domain_size", "scale_up_domain_size", 1, "scale_up.domain_size"),
    ("scale_out.gb_per_s_per_direction", "scale_out_bw_bytes_per_s", 1e9,
     "scale_out.bandwidth"),
    ("power.tdp_w", "tdp_w", 1, "power.tdp"),
]


def cmd_hardware(a: argparse.Namespace) -> None:
    """``tokenomics hardware [ID]``: the accelerator table, or one entry with its sources."""
    import tokenomics as tk

    if not a.id:
        t = tk.hardware_table().reset_index()
        _emit(t if a.all_columns else t[_HARDWARE_COLUMNS], a)
        return
    h = tk.hardware(a.id)
    vals: dict[str, Any] = {"name": h.name, "status": h.status}
    srcs: dict[str, str] = {}
    for k, v in h.peak_flop_per_s.items():
        vals[f"compute.{k}_dense_tflop_per_s"] = v / 1e12
        srcs[f"compute.{k}_dense_tflop_per_s"] = h.sources.get(f"compute.{k}", "")
    for k, why in h.unavailable.items():
        vals[k] = why
    for label, field, scale, key in _HARDWARE_FIELDS:
        v = getattr(h, field)
        if v is not None:
            vals[label] = v / scale
            srcs[label] = h.sources.get(key, "")
    for k, v in h.peak_flop_per_s.items():     # peak / bandwidth, per peak key (fp6 too)
        vals[f"ridge_{k}_flop_per_byte"] = v / h.mem_bw_bytes_per_s
    for i, p in enumerate(h.prices):
        label = f"price[{i}] ({p.tier}, {p.date})"
        vals[label] = f"{p.usd:g} USD{'/hour' if p.per_hour else ''}"
        srcs[label] = p.source
    _emit(_entry_frame(vals, srcs), a, f"{h.id}: {h.name}" + (f"\n{h.notes}" if h.notes else ""))


def cmd_models(a: argparse.Namespace) -> None:
    """``tokenomics models [ID]``: the model table, or one entry with its sources."""
    import tokenomics as tk

    if not a.id:
        _emit(tk.model_table().reset_index(), a)
        return
    m = tk.model(a.id)
    vals: dict[str, Any] = {
        "attention": m.attention.kind, "layers": m.num_layers, "hidden_size": m.hidden_size,
        "q_heads": m.attention.num_q_heads, "kv_heads": m.attention.num_kv_heads,
        "head_dim": m.attention.head_dim, "max_context_tokens": m.max_context,
        "window_groups": "; ".join(f"{n} {k}" + ("" if k == "full" else f" {int(w)}")
                                   for k, w, n in m.window_groups()),
    }
    if m.moe:
        vals.update({"experts": m.moe.num_experts, "top_k": m.moe.top_k,
                     "shared_experts": m.moe.num_shared_experts,
                     "moe_layers": m.num_moe_layers})
    for k, v in tk.param_breakdown(m).items():
        vals[f"params.{k}"] = v
    vals["params_total (computed)"] = tk.param_count(m)
    vals["params_active (computed)"] = tk.param_count(m, active=True)
    vals["official_total_params"] = m.official_total_params
    vals["official_active_params"] = m.official_active_params
    vals["kv_bytes_per_token_bf16"] = tk.kv_bytes_per_token(m)
    vals["weight_dtype"] = (m.weight_dtype
                            + (f" (experts {m.expert_dtype})" if m.expert_dtype else "")
                            + (f" (embedding, LM head {m.embedding_dtype})"
                               if m.embedding_dtype else ""))
    srcs = {"official_total_params": m.sources.get("official.total_params", ""),
            "official_active_params": m.sources.get("official.active_params", ""),
            "weight_dtype": m.sources.get("weights", "")}
    for k in list(vals)[:8]:
        srcs[k] = m.sources.get("config", "")
    _emit(_entry_frame(vals, srcs), a, f"{m.id}: {m.name}" + (f"\n{m.notes}" if m.notes else ""))


# --------------------------------------------------------------------------------------------
# Step commands
# --------------------------------------------------------------------------------------------
def cmd_fit(a: argparse.Namespace) -> None:
    """``tokenomics fit``: memory per device over batch x context, max batch, devices."""
    import tokenomics as tk
    from tokenomics.surfaces.report import layout_min_devices

    d = _deployment(a)
    rows = []
    for b, c in itertools.product(a.batch, a.context):
        f = tk.memory_fit(d, b, c)
        mb = tk.max_batch(d, c)
        need = tk.devices_needed(_pooled_budget(d), b, c)
        rows.append(dict(
            batch=b, context_tokens=c, weights_gb=f.weights_bytes / 1e9,
            kv_gb=f.kv_bytes / 1e9, workspace_gb=f.workspace_bytes / 1e9,
            reserve_gb=f.runtime_reserve_bytes / 1e9, total_gb=f.total_bytes / 1e9,
            usable_gb=f.usable_bytes / 1e9, capacity_gb=f.capacity_bytes / 1e9,
            fits=bool(f.fits), max_batch=int(mb), devices_needed=float(need),
            min_devices=layout_min_devices(d, b, c, a.multiple_of),
            min_devices_pooled=int(tk.min_devices(_pooled_budget(d), b, c,
                                                  multiple_of=a.multiple_of)),
        ))
    _emit(_frame(rows), a, f"memory per device: {d.model.id} on {d.n_devices} x "
          f"{d.hardware.id} (tp={d.tp}, pp={d.pp}), weights {d.weight_dtype}, KV {d.kv_dtype}",
          dep=d)


def cmd_decode(a: argparse.Namespace) -> None:
    """``tokenomics decode``: step time and throughput over batch x context."""
    import numpy as np

    import tokenomics as tk

    d = _deployment(a)
    B, C = np.meshgrid(np.asarray(a.batch, float), np.asarray(a.context, float), indexing="ij")
    r = tk.decode(d, B.ravel(), C.ravel(), on_oom="mark")
    df = r.to_frame()[["batch", "context_tokens", "step_time_s", "tokens_per_s_per_user",
                       "tokens_per_s_per_device", "bound", "compute_time_s", "memory_time_s",
                       "comm_time_s", "overhead_s", "fits"]]
    _emit(df, a, f"decode: {d.model.id} on {d.n_devices} x {d.hardware.id} (tp={d.tp}, "
          f"pp={d.pp}), weights {d.weight_dtype}, KV {d.kv_dtype}, compute "
          f"{d.compute_dtype}; {_label(d)}", dep=d)


def cmd_prefill(a: argparse.Namespace) -> None:
    """``tokenomics prefill``: time to first token over prompt x batch."""
    import tokenomics as tk

    d = _deployment(a)
    rows = []
    for p, b in itertools.product(a.prompt, a.batch):
        r = tk.prefill(d, p, b, a.cached, on_oom="mark")
        rows.append(dict(prompt_tokens=p, cached_tokens=a.cached, batch=b, ttft_s=r.time_s,
                         prompt_tokens_per_s_per_device=r.tokens_per_s_per_device,
                         bound=r.bound, compute_time_s=r.compute_time_s,
                         memory_time_s=r.memory_time_s, fits=bool(r.fits), phase=r.phase))
    _emit(_frame(rows), a, f"prefill: {d.model.id} on {d.n_devices} x {d.hardware.id}; "
          f"{_label(d)}", dep=d)


def _concurrency_arg(values: list[str]) -> list[int]:
    """``--concurrency`` values other than ``max``, as whole numbers."""
    from tokenomics.core.errors import TokenomicsError

    try:
        return [int(v) for v in values]
    except ValueError:
        raise TokenomicsError(f"--concurrency takes whole numbers and 'max', got "
                              f"{' '.join(values)}") from None


def cmd_steady(a: argparse.Namespace) -> None:
    """``tokenomics steady``: TPOT, TTFT and throughput of continuous batching under load."""
    import tokenomics as tk

    d = _deployment(a)
    vals = [v for v in a.concurrency if v != "max"]
    frames = []
    kw = dict(cached_tokens=a.cached, chunk_tokens=a.chunk)
    if vals:
        frames.append(tk.steady_state(d, _concurrency_arg(vals), a.input, a.output,
                                      **kw).to_frame())
    if "max" in a.concurrency:
        frames.append(tk.steady_state(d, "max", a.input, a.output, **kw).to_frame())
    import pandas as pd  # noqa: PLC0415 (the CLI imports its libraries lazily)

    df = pd.concat(frames, ignore_index=True)[[
        "concurrency", "tpot_s", "decode_only_tpot_s", "ttft_s", "tokens_per_s_per_user",
        "output_tokens_per_s_per_device", "requests_per_s", "prefill_tokens_per_step",
        "fits"]]
    _emit(df, a, f"steady state: {d.model.id} on {d.n_devices} x {d.hardware.id} (tp={d.tp}),"
          f" {a.input} in / {a.output} out per request, {a.cached} cached; TPOT carries the "
          f"prefill of the requests that join each step; {_label(d)}", dep=d,
          input_tokens=a.input, output_tokens=a.output, cached_tokens=a.cached)


def cmd_roofline(a: argparse.Namespace) -> None:
    """``tokenomics roofline``: per-operator FLOPs, bytes, intensity and bound."""
    import tokenomics as tk

    if a.prompt < 1 or a.cached < 0:    # checked in every phase, not only where used
        raise tk.TokenomicsError(f"--prompt must be a whole number of tokens >= 1 and --cached "
                                 f">= 0, got {a.prompt} and {a.cached}")
    d = _deployment(a)
    if a.phase == "decode":
        t = tk.operator_table(d, "decode", a.batch[0], context_tokens=a.context[0])
    else:
        t = tk.operator_table(d, a.phase, a.batch[0], prompt_tokens=a.prompt,
                              cached_tokens=a.cached)
    derated = "" if d.efficiency == tk.ROOFLINE else (
        "; the ridge_flop_per_byte column is the achievable ridge, peak x MFU / (bandwidth x "
        "MBU)")
    _emit(t, a, f"{a.phase} operators per device: {d.model.id} on {d.hardware.id} "
          f"(datasheet ridge {tk.ridge_point(d.hardware, str(d.compute_dtype)):.1f} FLOP/B at "
          f"{d.compute_dtype}{derated}); {_label(d)}", dep=d)


# --------------------------------------------------------------------------------------------
# Frontier, cost and serving commands
# --------------------------------------------------------------------------------------------
def _frontier_deployments(a: argparse.Namespace) -> list[Deployment]:
    """One deployment per (hardware, tp) that is valid; the others reported on stderr."""
    import tokenomics as tk

    deps, skipped = [], []
    for hw in a.hardware:
        for tp in a.tp:
            try:
                deps.append(tk.Deployment(
                    tk.model(a.model), tk.hardware(hw), tp=tp,
                    weight_dtype=a.weight_dtype, kv_dtype=a.kv_dtype,
                    compute_dtype=a.compute_dtype, usable_memory_fraction=a.usable_fraction,
                    efficiency=tk.efficiency_presets()[a.efficiency]))
            except tk.TokenomicsError as exc:
                skipped.append(f"{hw} tp={tp}: {exc}")
    for line in skipped:
        print(f"skipped {line}", file=sys.stderr)
    if not deps:
        raise tk.TokenomicsError("no valid configuration; check --hardware and --tp")
    return deps


def cmd_frontier(a: argparse.Namespace) -> None:
    """``tokenomics frontier``: the Pareto frontier over hardware and TP degrees."""
    import tokenomics as tk

    deps = _frontier_deployments(a)
    try:
        f = tk.frontier(deps, a.context, efficiency="deployment", on_oom="skip")
    except tk.DoesNotFitError as exc:
        raise tk.TokenomicsError(f"{exc}; add devices (--tp) or lower --context") from None
    for label in f.attrs["skipped"]:
        print(f"skipped {label}: does not fit at {a.context} tokens", file=sys.stderr)
    cols = ["tokens_per_s_per_user", "tokens_per_s_per_device", "batch", "cost_usd_per_mtok",
            "joules_per_token", "label"]
    _emit(f[cols + [c for c in f.columns if c not in cols]], a,
          f"Pareto frontier of {a.model} at {a.context} tokens; {_label(deps[0])}",
          model=deps[0].model.id, efficiency=deps[0].efficiency.label,
          context_tokens=a.context)
    if a.slo is not None:
        r = tk.best_at(f, a.slo)
        print(f"best at >= {a.slo:g} tokens/s per user: {r.tokens_per_s_per_device:.6g} "
              f"tokens/s per device with {r.label} (batch {r.batch:.4g})")


def cmd_cost(a: argparse.Namespace) -> None:
    """``tokenomics cost``: cost per million tokens by phase, blended, and energy."""
    import tokenomics as tk

    d = _deployment(a)
    c = tk.deployment_cost(d, a.batch[0], a.context[0], prompt_tokens=a.prompt,
                           device_price=a.price if a.price is not None else a.tier)
    pre = tk.energy_per_token(c.input_tokens_per_s_per_device, d.hardware) \
        if d.hardware.tdp_w else None
    dec = tk.energy_per_token(c.output_tokens_per_s_per_device, d.hardware) \
        if d.hardware.tdp_w else None
    nan = float("nan")
    rows = [
        dict(phase="input (prefill)", usd_per_mtok=c.input_usd_per_mtok,
             tokens_per_s_per_device=c.input_tokens_per_s_per_device,
             joules_per_token=pre.joules_per_token if pre else nan),
        dict(phase="cached input", usd_per_mtok=c.cached_input_usd_per_mtok,
             tokens_per_s_per_device=nan, joules_per_token=nan),
        dict(phase="output (decode)", usd_per_mtok=c.output_usd_per_mtok,
             tokens_per_s_per_device=c.output_tokens_per_s_per_device,
             joules_per_token=dec.joules_per_token if dec else nan),
        dict(phase=f"blended {a.input_ratio:g}:{a.output_ratio:g}, hit rate {a.hit_rate:g}",
             usd_per_mtok=c.blended(a.input_ratio, a.output_ratio, a.hit_rate),
             tokens_per_s_per_device=nan, joules_per_token=nan),
    ]
    _emit(_frame(rows), a, f"cost per million tokens: {d.model.id} on {d.n_devices} x "
          f"{d.hardware.id} at ${c.usd_per_device_hour:g}/device-hour, decode batch "
          f"{a.batch[0]} at {a.context[0]} tokens; {_label(d)}", dep=d,
          usd_per_device_hour=c.usd_per_device_hour, price_tier=c.price_tier,
          price_date=c.price_date, price_source=c.price_source)


def cmd_facility(a: argparse.Namespace) -> None:
    """``tokenomics facility``: systems, output, cost and margin of a facility by its power
    (``--waterfall``: its cost per million tokens part by part)."""
    import pandas as pd

    import tokenomics as tk
    from tokenomics.data.systems import system

    s = system(a.system)
    a.hardware = s.device.id
    d = _deployment(a)
    if a.concurrency < 1 or a.input < 1 or a.output < 1:
        raise tk.TokenomicsError("--concurrency, --input and --output must be >= 1")
    ss = tk.steady_state(d, a.concurrency, a.input, a.output)
    if not bool(ss.fits):
        raise tk.DoesNotFitError(f"{a.concurrency} sequences of {a.input} + {a.output} tokens "
                                 f"do not fit {d.n_devices} x {d.hardware.id}; lower "
                                 f"--concurrency or widen --tp")
    rate = float(ss.output_tokens_per_s_per_device)
    f = tk.facility(s, [mw * 1e6 for mw in a.power_mw], rate, devices_per_replica=d.n_devices,
                    device_price=a.price, pue=a.pue, utilisation=a.utilisation,
                    price_usd_per_mtok=a.sell)
    if a.sla is not None:
        f = f.with_spares(a.sla, repair_hours=a.repair_hours)
    elif a.repair_hours is not None:
        raise tk.TokenomicsError("--repair-hours needs --sla (the availability target)")
    if a.waterfall:      # USD/Mtok by part, one column per budget; the rows add up
        w = f.cost_waterfall()
        df = w.rename_axis("part").reset_index()
        total = pd.DataFrame([["total", *w.sum(axis=0)]], columns=df.columns)
        df = pd.concat([df, total], ignore_index=True)
    else:
        df = f.to_frame()[["power_w", "systems", "devices", "replicas", "stranded_devices",
                           "spare_replicas", "draw_w", "tokens_per_s", "tokens_per_day",
                           "usd_per_hour", "usd_per_mtok", "wh_per_mtok", "revenue_usd_per_day",
                           "margin"]]
    _emit(df, a, f"facility: {s.id} ({s.devices} x {s.device.id}, {f.system_power_w / 1e3:g} "
          f"kW a system, PUE {f.pue:g}) serving {d.model.id} in replicas of {d.n_devices} "
          f"(tp={d.tp}) at {a.concurrency} sequences, {a.input} in / {a.output} out: "
          f"{rate:.4g} output tok/s per device at ${f.usd_per_device_hour:g}/device-hour; "
          f"{_label(d)}", dep=d, system=s.id, usd_per_device_hour=f.usd_per_device_hour)


def cmd_plan(a: argparse.Namespace) -> None:
    """``tokenomics plan``: the cheapest fleet each year for a growing demand."""
    from tokenomics.surfaces.cli_plan import plan_table

    df, title, d = plan_table(a, _deployment)
    _emit(df, a, f"{title}; {_label(d)}", dep=d)


def cmd_disagg(a: argparse.Namespace) -> None:
    """``tokenomics disagg``: disaggregated against colocated goodput under SLOs."""
    import tokenomics as tk

    d = _deployment(a)
    work, slo = tk.Workload(a.input, a.output), tk.SLO(a.ttft, a.tpot, a.slo_fraction)
    split = tk.best_pool_ratio(d, d, a.devices, work, slo,
                               tk.Link(a.link_gbps * 1e9 / 8, 10e-6))   # 10 us per transfer
    n_inst = max(1, a.devices // d.n_devices)
    col = tk.colocated_goodput(d, n_inst, work, slo, token_budget=a.token_budget)
    g = split.goodput
    rows = [dict(layout=f"disaggregated {split.n_prefill}P:{split.n_decode}D",
                 devices=g.n_devices, goodput_req_per_s_per_device=g.goodput_per_s_per_device,
                 output_tokens_per_s_per_device=g.output_tokens_per_s_per_device,
                 binding=g.binding, ttft_quantile_s=g.ttft_quantile_s, tpot_s=g.tpot_s),
            dict(layout=f"colocated x{n_inst} (chunked prefill, budget {a.token_budget})",
                 devices=col.n_devices,
                 goodput_req_per_s_per_device=col.goodput_per_s_per_device,
                 output_tokens_per_s_per_device=col.output_tokens_per_s_per_device,
                 binding=col.binding, ttft_quantile_s=col.ttft_quantile_s, tpot_s=col.tpot_s)]
    _emit(_frame(rows), a, f"goodput within TTFT <= {a.ttft:g} s and TPOT <= {a.tpot:g} s "
          f"for {a.slo_fraction:.0%} of requests: {d.model.id} on {a.devices} x {d.hardware.id}"
          f" (instances of tp={d.tp}), {a.input} in / {a.output} out", dep=d)


def _retention_row(p: Any, tier_name: str, label: str, sessions_per_s: float) -> dict[str, Any]:
    """One table row of a retention policy, with Little's-law occupancy at the arrival rate."""
    occ = p.occupancy(sessions_per_s)
    return dict(
        tier=tier_name, miss_pricing=label, miss_usd=p.miss_usd,
        keep_in_hbm_min=p.t1_s / 60.0, drop_after_h=p.t2_s / 3600.0,
        expected_usd_per_gap=p.expected_cost_usd, keep_usd=p.keep_cost_usd,
        offload_now_usd=p.offload_now_cost_usd, drop_now_usd=p.drop_now_cost_usd,
        p_hbm_hit=p.p_hbm_hit, p_reload=p.p_reload, p_recompute=p.p_recompute,
        reload_s=p.reload_s, recompute_s=p.recompute_s,
        idle_in_hbm=occ.sessions_in_hbm, idle_in_tier=occ.sessions_in_tier,
        tier_fraction_used=occ.tier_fraction)


def cmd_retention(a: argparse.Namespace) -> None:
    """``tokenomics retention``: keep a session's KV in HBM, offload it or drop it."""
    import tokenomics as tk

    d = _deployment(a)
    gap = tk.GapDistribution.from_median_mean(a.gap_median_min * 60.0, a.gap_mean_to_median)
    pricing = [("stated default" if a.miss_usd is None else "given", a.miss_usd)]
    if a.miss_usd != 0:
        pricing.append(("GPU time only", 0.0))
    rows, first = [], None
    for tier_name in a.tier:
        for label, miss in pricing:
            p = tk.retention_policy(d, a.context, tier=tier_name, miss_usd=miss, gap=gap,
                                    usd_per_device_hour=a.price)
            first = first or p
            rows.append(_retention_row(p, tier_name, label, a.sessions / gap.mean_s))
    assert first is not None          # argparse: --tier takes at least one name
    _emit(_frame(rows), a, f"KV retention over an idle gap (lognormal, median "
          f"{a.gap_median_min:g} min, mean {a.gap_mean_to_median:g}x the median): "
          f"{d.model.id} on {d.n_devices} x {d.hardware.id}, {a.context} tokens = "
          f"{first.kv_bytes / 1e9:.1f} GB of KV; HBM ${first.hbm_usd_per_s * 3600:.3g}/hour; "
          f"{a.sessions:g} sessions per replica for the occupancy columns; {_label(d)}")


def cmd_calibrate(a: argparse.Namespace) -> None:
    """``tokenomics calibrate``: the corpus against bound, forecast and held-out forecasts;
    ``--write`` refits and rewrites ``measurements/calibrated.toml``."""
    from tokenomics.calibration import (
        GROUPINGS,
        PARAMS,
        calibration_report,
        calibration_summary,
        excluded_rows,
        write_calibration,
    )
    from tokenomics.surfaces.terminal import ProgressBar

    if a.write:
        with ProgressBar("refit, then one fit per held-out group") as step:
            data = write_calibration(a.write, progress=step)
        print(f"wrote {a.write}: " + ", ".join(
            f"{k}={data[k]:.4g}" for k in PARAMS))
    with ProgressBar("held-out fits (one per group)") as step:
        t = calibration_report(refit=False, progress=step)
    _emit(t, a, "calibration: each corpus row, measured vs bound vs calibrated forecast; "
          "cv_<grouping>_error: the row forecast by a fit without its group")
    s = calibration_summary(t).set_index("slice")
    for name in ("all", "moe", "tpot_under_load"):
        r = s.loc[name]
        held = ", ".join(f"{g} out {r[f'cv_{g}']:.1%}" for g in GROUPINGS)
        print(f"median |error| ({name}, {int(r.rows)} rows): in-sample {r.in_sample:.1%}; "
              f"{held}; roofline preset {r.roofline:.1%}")
    ex = excluded_rows()
    for reason, ids in ex.groupby("reason", sort=False)["id"]:
        which = ", ".join(ids) if len(ids) <= 3 else f"{len(ids)} rows ({ids.iloc[0]}...)"
        print(f"not fitted: {which}: {reason}")


# --------------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------------
def _check_price_flag(a: argparse.Namespace) -> None:
    """Refuse a bad ``--price`` naming the flag (not the library's argument)."""
    import math

    from tokenomics.core.errors import TokenomicsError

    p = getattr(a, "price", None)
    if p is not None and not (math.isfinite(p) and p >= 0):
        raise TokenomicsError(f"--price must be USD per device-hour >= 0, got {p}")


def _check_report_arguments(a: argparse.Namespace) -> None:
    """Refuse a report's bad numbers (and efficiency overrides) before it writes a file."""
    import math

    from tokenomics.core.errors import TokenomicsError

    if not (math.isfinite(a.slo) and a.slo > 0):
        raise TokenomicsError(f"--slo must be a number of tokens/s per user > 0, got {a.slo}")
    _check_price_flag(a)
    for name, v in (("--prompt", a.prompt), ("--context", a.context[0])):
        if v < 1:
            raise TokenomicsError(f"{name} must be a whole number of tokens >= 1, got {v}")
    _efficiency_of(a)                   # --mfu 0 is a bad efficiency, not "does not fit"


def _auto_tp(a: argparse.Namespace) -> Deployment:
    """The smallest valid tensor-parallel degree whose memory holds one sequence."""
    import tokenomics as tk

    hw = tk.hardware(a.hardware)
    dom = hw.scale_up_domain_size or 1
    errors = []
    for tp in [t for t in (1, 2, 4, 8, 16, 32, 64, 72) if t <= max(dom, 1)]:
        a.tp = tp
        try:
            d = _deployment(a)
        except tk.NotPublishedError:
            raise                          # a missing figure, not a memory fit: say so
        except tk.TokenomicsError as exc:
            errors.append(f"tp={tp}: {exc}")
            continue
        if int(tk.max_batch(d, a.context[0])) >= 1:
            return d
        errors.append(f"tp={tp}: not one sequence of {a.context[0]} tokens fits")
    raise tk.TokenomicsError(f"{a.model} does not fit one scale-up domain of {hw.id} at "
                             f"{a.context[0]} tokens ({errors[-1] if errors else 'no layout'}); "
                             "pass --tp/--pp or a smaller --weight-dtype")


def cmd_report(a: argparse.Namespace) -> None:
    """``tokenomics report``: a sizing report folder of text, CSV tables and PNG figures.

    Every argument is checked first, and the files are written to a staging folder that
    replaces their names in ``--out`` only once the whole report is built: a failure at any
    point leaves ``--out`` as it was.
    """
    import shutil
    import tempfile
    from pathlib import Path

    from tokenomics.surfaces.export import check_sheet_supports
    from tokenomics.surfaces.report import build_report

    _check_report_arguments(a)          # before anything is written to --out
    d = _deployment(a) if a.tp else _auto_tp(a)
    if a.xlsx:
        check_sheet_supports(d)        # a model the workbook cannot carry: refuse now
    out = Path(a.out)
    if out.exists() and not out.is_dir():
        raise OSError(f"--out {out} exists and is not a folder")
    stage = Path(tempfile.mkdtemp(prefix=".tokenomics-report-"))
    try:
        lines, dec = build_report(a, d, stage, _label(d))
        out.mkdir(parents=True, exist_ok=True)
        for f in sorted(stage.iterdir()):
            shutil.move(str(f), str(out / f.name))
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    _save_table(dec, a, d)
    print("\n".join(lines))
    print(f"\nwrote {', '.join(sorted(p.name for p in out.iterdir()))} to {out}")


# --------------------------------------------------------------------------------------------
# The parser
# --------------------------------------------------------------------------------------------
#: Subcommand -> the function that runs it.
_COMMANDS = {
    "hardware": cmd_hardware, "models": cmd_models, "fit": cmd_fit, "decode": cmd_decode, "steady": cmd_steady,
    "prefill": cmd_prefill, "roofline": cmd_roofline, "frontier": cmd_frontier,
    "cost": cmd_cost, "facility": cmd_facility, "plan": cmd_plan, "disagg": cmd_disagg, "retention": cmd_retention,
    "calibrate": cmd_calibrate, "report": cmd_report,
}


def build_parser() -> argparse.ArgumentParser:
    """The ``tokenomics`` argument parser: one subcommand per ``cmd_*`` function.

    Returns
    -------
    argparse.ArgumentParser
        Bad arguments exit with status 2 and a one-line message; each subcommand sets
        ``func`` to the ``cmd_*`` function that runs it (the arguments are
        :mod:`tokenomics.surfaces.arguments`'s).
    """
    from tokenomics.surfaces.arguments import add_global_arguments, add_subcommands
    from tokenomics.surfaces.terminal import plain_help

    p = _Parser(prog="tokenomics", description=plain_help(__doc__ or ""),
                formatter_class=argparse.RawDescriptionHelpFormatter)
    add_global_arguments(p)
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    add_subcommands(sub, _COMMANDS)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``tokenomics`` console script; returns the exit status."""
    parser = build_parser()
    a = parser.parse_args(argv)
    import tokenomics as tk  # after --help has exited
    from tokenomics.data.user_catalog import check_folders

    previous = None
    try:
        if a.catalog:  # this call's folders; the caller's are restored below
            check_folders(a.catalog, "--catalog")
            previous = tk.use_catalog(*a.catalog)
        _check_price_flag(a)
        a.func(a)
        if getattr(a, "strict", False) and getattr(a, "did_not_fit", False):
            return 3
    except (tk.TokenomicsError, KeyError, OSError, NotImplementedError) as exc:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        kind = "not implemented: " if isinstance(exc, NotImplementedError) else ""
        print(f"tokenomics: error: {kind}{msg}", file=sys.stderr)
        return 2
    finally:
        if previous is not None:
            tk.use_catalog(*previous)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
