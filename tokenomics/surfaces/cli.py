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
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from tokenomics.core.errors import DoesNotFitError, TokenomicsError
from tokenomics.data import catalog as catalog
from tokenomics.data.deployment import Deployment
from tokenomics.data.specs import Efficiency
from tokenomics.physics.kv import kv_bytes_per_token
from tokenomics.physics.memory import devices_needed, max_batch, memory_fit, min_devices
from tokenomics.physics.params import param_breakdown, param_count
from tokenomics.physics.roofline import ridge_point
from tokenomics.physics.step import decode, operator_table, prefill
from tokenomics.surfaces.tables import hardware_table, model_table


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # one line, status 2
        self.exit(2, f"tokenomics: error: {message}\n")


def _add_output(p: argparse.ArgumentParser) -> None:
    p.add_argument("--csv", metavar="PATH", help="also write the table as CSV")
    p.add_argument("--json", metavar="PATH", help="also write the table as JSON records")


def _add_deployment(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", help="model id or alias (see `tokenomics models`)")
    p.add_argument("hardware", help="hardware id or alias (see `tokenomics hardware`)")
    p.add_argument("--tp", type=int, default=1,
                   help="tensor-parallel degree (default 1; report: smallest that fits)")
    p.add_argument("--pp", type=int, default=1, help="pipeline-parallel degree (default 1)")
    p.add_argument("--ep", type=int, default=1,
                   help="expert parallelism: 1 (experts tensor-parallel) or equal to --tp")
    p.add_argument("--dp-attention", type=int, default=1,
                   help="attention data-parallel degree inside a stage (divides --tp)")
    p.add_argument("--overlap", type=float, default=0.0,
                   help="fraction of communication hidden behind compute (default 0)")
    p.add_argument("--allreduce", default="auto",
                   choices=["auto", "ring", "tree", "one_shot", "two_shot"],
                   help="all-reduce algorithm (default auto: the fastest per message)")
    p.add_argument("--weight-dtype", help="weight format (default: the model's release)")
    p.add_argument("--kv-dtype", default="bf16", help="KV-cache format (default bf16)")
    p.add_argument("--act-dtype", default="bf16", help="activation format (default bf16)")
    p.add_argument("--compute-dtype", help="matrix-unit format (default: activation format)")
    p.add_argument("--efficiency", choices=["calibrated", "roofline"], default="calibrated",
                   help="efficiency preset: the calibrated forecast (default) or the pure "
                        "roofline bound; --mfu/--mbu/--overhead-ms override its fields")
    p.add_argument("--mfu", type=float, help="achieved fraction of peak FLOP/s")
    p.add_argument("--mbu", type=float, help="achieved fraction of bandwidth")
    p.add_argument("--overhead-ms", type=float, help="fixed time per step [ms]")
    p.add_argument("--usable-fraction", type=float, default=0.9,
                   help="usable fraction of device memory (default 0.9)")
    p.add_argument("--reserve-gb", type=float, default=0.0,
                   help="runtime reserve per device [GB] (default 0)")
    p.add_argument("--allow-beyond-max-context", action="store_true",
                   help="permit contexts beyond the model's maximum")


def _efficiency_of(a: argparse.Namespace) -> Efficiency:
    from tokenomics.calibration.fitting import efficiency_presets

    e = efficiency_presets()[a.efficiency]
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
    return Deployment(
        catalog.model(a.model), catalog.hardware(a.hardware), tp=a.tp, pp=a.pp, ep=a.ep,
        dp_attention=a.dp_attention, comm_overlap=a.overlap, allreduce_algorithm=a.allreduce,
        weight_dtype=a.weight_dtype, kv_dtype=a.kv_dtype, act_dtype=a.act_dtype,
        compute_dtype=a.compute_dtype,
        efficiency=_efficiency_of(a),
        usable_memory_fraction=a.usable_fraction, runtime_reserve_bytes=a.reserve_gb * 1e9,
        allow_beyond_max_context=a.allow_beyond_max_context,
    )


def _emit(df: pd.DataFrame, a: argparse.Namespace, title: str = "") -> None:
    if title:
        print(title)
    with pd.option_context("display.max_rows", 500, "display.max_columns", 50,
                           "display.width", 200, "display.float_format", "{:.6g}".format):
        print(df.to_string(index=False))
    if getattr(a, "csv", None):
        df.to_csv(a.csv, index=False)
    if getattr(a, "json", None):
        with open(a.json, "w") as fh:
            json.dump(json.loads(df.to_json(orient="records")), fh, indent=1)


def _entry_frame(obj: Any, srcs: dict[str, str]) -> pd.DataFrame:
    cat = catalog.sources()
    rows = []
    for k, v in obj.items():
        key = srcs.get(k, "")
        s = cat.get(key)
        rows.append(dict(field=k, value=v, source=key, source_title=s.title if s else "",
                         source_url=s.url if s else ""))
    return pd.DataFrame(rows)


def cmd_hardware(a: argparse.Namespace) -> None:
    if not a.id:
        cols = ["id", "name", "status", "peak_bf16_dense_tflop_per_s",
                "peak_fp8_dense_tflop_per_s", "peak_fp4_dense_tflop_per_s", "mem_capacity_gb",
                "mem_bw_tb_per_s", "ridge_bf16_flop_per_byte", "tdp_w", "price_usd_per_hour"]
        t = hardware_table()
        _emit(t if a.all_columns else t[cols], a)
        return
    h = catalog.hardware(a.id)
    vals: dict[str, Any] = {"name": h.name, "status": h.status}
    srcs: dict[str, str] = {}
    for k, v in h.peak_flop_per_s.items():
        vals[f"compute.{k}_dense_tflop_per_s"] = v / 1e12
        srcs[f"compute.{k}_dense_tflop_per_s"] = h.sources.get(f"compute.{k}", "")
    for k, why in h.unavailable.items():
        vals[k] = why
    for label, field, scale, key in [
        ("memory.capacity_gb", "mem_capacity_bytes", 1e9, "memory.capacity"),
        ("memory.bandwidth_tb_per_s", "mem_bw_bytes_per_s", 1e12, "memory.bandwidth"),
        ("memory.sram_mb", "sram_bytes", 1e6, "memory.sram"),
        ("scale_up.gb_per_s_per_direction", "scale_up_bw_bytes_per_s", 1e9, "scale_up.bandwidth"),
        ("scale_up.domain_size", "scale_up_domain_size", 1, "scale_up.domain_size"),
        ("scale_out.gb_per_s_per_direction", "scale_out_bw_bytes_per_s", 1e9,
         "scale_out.bandwidth"),
        ("power.tdp_w", "tdp_w", 1, "power.tdp"),
    ]:
        v = getattr(h, field)
        if v is not None:
            vals[label] = v / scale
            srcs[label] = h.sources.get(key, "")
    for k, v in h.peak_flop_per_s.items():
        vals[f"ridge_{k}_flop_per_byte"] = v / h.mem_bw_bytes_per_s
    for i, p in enumerate(h.prices):
        label = f"price[{i}] ({p.tier}, {p.date})"
        vals[label] = f"{p.usd:g} USD{'/hour' if p.per_hour else ''}"
        srcs[label] = p.source
    _emit(_entry_frame(vals, srcs), a, f"{h.id}: {h.name}" + (f"\n{h.notes}" if h.notes else ""))


def cmd_models(a: argparse.Namespace) -> None:
    if not a.id:
        _emit(model_table(), a)
        return
    m = catalog.model(a.id)
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
    for k, v in param_breakdown(m).items():
        vals[f"params.{k}"] = v
    vals["params_total (computed)"] = param_count(m)
    vals["params_active (computed)"] = param_count(m, active=True)
    vals["official_total_params"] = m.official_total_params
    vals["official_active_params"] = m.official_active_params
    vals["kv_bytes_per_token_bf16"] = kv_bytes_per_token(m)
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


def cmd_fit(a: argparse.Namespace) -> None:
    d = _deployment(a)
    rows = []
    for b, c in itertools.product(a.batch, a.context):
        f = memory_fit(d, b, c)
        mb = max_batch(d, c)
        need = devices_needed(d.model, d.hardware, b, c, d.weight_dtype, d.kv_dtype,
                              d.usable_memory_fraction, d.runtime_reserve_bytes,
                              allow_beyond_max_context=d.allow_beyond_max_context)
        rows.append(dict(
            batch=b, context_tokens=c, weights_gb=f.weights_bytes / 1e9,
            kv_gb=f.kv_bytes / 1e9, workspace_gb=f.workspace_bytes / 1e9,
            reserve_gb=f.runtime_reserve_bytes / 1e9, total_gb=f.total_bytes / 1e9,
            usable_gb=f.usable_bytes / 1e9, capacity_gb=f.capacity_bytes / 1e9,
            fits=bool(f.fits), max_batch=int(mb), devices_needed=float(need),
            min_devices=int(min_devices(d.model, d.hardware, b, c, d.weight_dtype, d.kv_dtype,
                                        d.usable_memory_fraction, d.runtime_reserve_bytes,
                                        multiple_of=a.multiple_of,
                                        allow_beyond_max_context=d.allow_beyond_max_context)),
        ))
    _emit(pd.DataFrame(rows), a, f"memory per device: {d.model.id} on {d.n_devices} x "
          f"{d.hardware.id} (tp={d.tp}, pp={d.pp}), weights {d.weight_dtype}, KV {d.kv_dtype}")


def cmd_decode(a: argparse.Namespace) -> None:
    d = _deployment(a)
    B, C = np.meshgrid(np.asarray(a.batch, float), np.asarray(a.context, float), indexing="ij")
    r = decode(d, B.ravel(), C.ravel(), on_oom="mark")
    df = r.to_frame()[["batch", "context_tokens", "time_s", "tokens_per_s_per_user",
                       "tokens_per_s_per_device", "bound", "compute_time_s", "memory_time_s",
                       "comm_time_s", "overhead_s", "fits"]].rename(
        columns={"time_s": "step_time_s"})
    _emit(df, a, f"decode: {d.model.id} on {d.n_devices} x {d.hardware.id} (tp={d.tp}, "
          f"pp={d.pp}), weights {d.weight_dtype}, KV {d.kv_dtype}, compute "
          f"{d.compute_dtype}; {_label(d)}")


def cmd_prefill(a: argparse.Namespace) -> None:
    d = _deployment(a)
    rows = []
    for p, b in itertools.product(a.prompt, a.batch):
        r = prefill(d, p, b, a.cached, on_oom="mark")
        rows.append(dict(prompt_tokens=p, cached_tokens=a.cached, batch=b, ttft_s=r.time_s,
                         prompt_tokens_per_s_per_device=r.tokens_per_s_per_device,
                         bound=r.bound, compute_time_s=r.compute_time_s,
                         memory_time_s=r.memory_time_s, fits=bool(r.fits), phase=r.phase))
    _emit(pd.DataFrame(rows), a, f"prefill: {d.model.id} on {d.n_devices} x {d.hardware.id}; "
          f"{_label(d)}")


def cmd_roofline(a: argparse.Namespace) -> None:
    d = _deployment(a)
    if a.phase == "decode":
        t = operator_table(d, "decode", a.batch[0], context_tokens=a.context[0])
    else:
        t = operator_table(d, a.phase, a.batch[0], prompt_tokens=a.prompt,
                           cached_tokens=a.cached)
    _emit(t, a, f"{a.phase} operators per device: {d.model.id} on {d.hardware.id} "
          f"(ridge {ridge_point(d.hardware, str(d.compute_dtype)):.1f} FLOP/B at "
          f"{d.compute_dtype}); {_label(d)}")


def cmd_frontier(a: argparse.Namespace) -> None:
    from tokenomics.calibration.fitting import efficiency_presets
    from tokenomics.pareto.envelope import best_at, frontier

    deps, skipped = [], []
    for hw in a.hardware:
        for tp in a.tp:
            try:
                deps.append(Deployment(
                    catalog.model(a.model), catalog.hardware(hw), tp=tp,
                    weight_dtype=a.weight_dtype, kv_dtype=a.kv_dtype,
                    compute_dtype=a.compute_dtype, usable_memory_fraction=a.usable_fraction,
                    efficiency=efficiency_presets()[a.efficiency]))
            except TokenomicsError as exc:
                skipped.append(f"{hw} tp={tp}: {exc}")
    for line in skipped:
        print(f"skipped {line}", file=sys.stderr)
    if not deps:
        raise TokenomicsError("no valid configuration; check --hardware and --tp")
    try:
        f = frontier(deps, a.context, efficiency="deployment", on_oom="skip")
    except DoesNotFitError as exc:
        raise TokenomicsError(f"{exc}; add devices (--tp) or lower --context") from None
    for label in f.attrs["skipped"]:
        print(f"skipped {label}: does not fit at {a.context} tokens", file=sys.stderr)
    cols = ["tokens_per_s_per_user", "tokens_per_s_per_device", "batch", "cost_usd_per_mtok",
            "joules_per_token", "label"]
    _emit(f[cols + [c for c in f.columns if c not in cols]], a,
          f"Pareto frontier of {a.model} at {a.context} tokens; {_label(deps[0])}")
    if a.slo is not None:
        r = best_at(f, a.slo)
        print(f"best at >= {a.slo:g} tokens/s per user: {r.tokens_per_s_per_device:.6g} "
              f"tokens/s per device with {r.label} (batch {r.batch:.4g})")


def cmd_cost(a: argparse.Namespace) -> None:
    from tokenomics.economics.cost import deployment_cost, energy_per_token

    d = _deployment(a)
    c = deployment_cost(d, a.batch[0], a.context[0], prompt_tokens=a.prompt,
                        usd_per_device_hour=a.price, tier=a.tier)
    pre = energy_per_token(c.input_tokens_per_s_per_device, d.hardware) \
        if d.hardware.tdp_w else None
    dec = energy_per_token(c.output_tokens_per_s_per_device, d.hardware) \
        if d.hardware.tdp_w else None
    rows = [
        dict(phase="input (prefill)", usd_per_mtok=c.input_usd_per_mtok,
             tokens_per_s_per_device=c.input_tokens_per_s_per_device,
             joules_per_token=pre.joules_per_token if pre else float("nan")),
        dict(phase="cached input", usd_per_mtok=c.cached_input_usd_per_mtok,
             tokens_per_s_per_device=float("nan"), joules_per_token=float("nan")),
        dict(phase="output (decode)", usd_per_mtok=c.output_usd_per_mtok,
             tokens_per_s_per_device=c.output_tokens_per_s_per_device,
             joules_per_token=dec.joules_per_token if dec else float("nan")),
        dict(phase=f"blended {a.input_ratio:g}:{a.output_ratio:g}, hit rate {a.hit_rate:g}",
             usd_per_mtok=c.blended(a.input_ratio, a.output_ratio, a.hit_rate),
             tokens_per_s_per_device=float("nan"), joules_per_token=float("nan")),
    ]
    _emit(pd.DataFrame(rows), a, f"cost per million tokens: {d.model.id} on {d.n_devices} x "
          f"{d.hardware.id} at ${c.usd_per_device_hour:g}/device-hour, decode batch "
          f"{a.batch[0]} at {a.context[0]} tokens; {_label(d)}")


def cmd_disagg(a: argparse.Namespace) -> None:
    from tokenomics.serving.disagg import best_pool_ratio, colocated_goodput

    d = _deployment(a)
    split = best_pool_ratio(d, d, a.devices, a.input, a.output, a.ttft, a.tpot,
                            slo_fraction=a.slo_fraction, link_bytes_per_s=a.link_gbps * 1e9 / 8)
    n_inst = max(1, a.devices // d.n_devices)
    col = colocated_goodput(d, n_inst, a.input, a.output, a.ttft, a.tpot,
                            slo_fraction=a.slo_fraction, token_budget=a.token_budget)
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
    _emit(pd.DataFrame(rows), a, f"goodput within TTFT <= {a.ttft:g} s and TPOT <= {a.tpot:g} s "
          f"for {a.slo_fraction:.0%} of requests: {d.model.id} on {a.devices} x {d.hardware.id}"
          f" (instances of tp={d.tp}), {a.input} in / {a.output} out")


def cmd_retention(a: argparse.Namespace) -> None:
    from tokenomics.serving.tiering import GapDistribution, retention_policy

    d = _deployment(a)
    gap = GapDistribution.from_median_mean(a.gap_median_min * 60.0, a.gap_mean_to_median)
    pricing = [("stated default" if a.miss_usd is None else "given", a.miss_usd)]
    if a.miss_usd != 0:
        pricing.append(("GPU time only", 0.0))
    rows, first = [], None
    for tier_name in a.tier:
        for label, miss in pricing:
            p = retention_policy(d, a.context, tier=tier_name, miss_usd=miss, gap=gap,
                                 usd_per_device_hour=a.price)
            first = first or p
            occ = p.occupancy(a.sessions / gap.mean_s)
            rows.append(dict(
                tier=tier_name, miss_pricing=label, miss_usd=p.miss_usd,
                keep_in_hbm_min=p.t1_s / 60.0, drop_after_h=p.t2_s / 3600.0,
                expected_usd_per_gap=p.expected_cost_usd, keep_usd=p.keep_cost_usd,
                offload_now_usd=p.offload_now_cost_usd, drop_now_usd=p.drop_now_cost_usd,
                p_hbm_hit=p.p_hbm_hit, p_reload=p.p_reload, p_recompute=p.p_recompute,
                reload_s=p.reload_s, recompute_s=p.recompute_s,
                idle_in_hbm=occ.sessions_in_hbm, idle_in_tier=occ.sessions_in_tier,
                tier_fraction_used=occ.tier_fraction))
    assert first is not None          # argparse: --tier takes at least one name
    _emit(pd.DataFrame(rows), a, f"KV retention over an idle gap (lognormal, median "
          f"{a.gap_median_min:g} min, mean {a.gap_mean_to_median:g}x the median): "
          f"{d.model.id} on {d.n_devices} x {d.hardware.id}, {a.context} tokens = "
          f"{first.kv_bytes / 1e9:.1f} GB of KV; HBM ${first.hbm_usd_per_s * 3600:.3g}/hour; "
          f"{a.sessions:g} sessions per replica for the occupancy columns; {_label(d)}")


def _auto_tp(a: argparse.Namespace) -> Deployment:
    """The smallest valid tensor-parallel degree whose memory holds one sequence."""
    from tokenomics.physics.memory import max_batch

    hw = catalog.hardware(a.hardware)
    dom = hw.scale_up_domain_size or 1
    errors = []
    for tp in [t for t in (1, 2, 4, 8, 16, 32, 64, 72) if t <= max(dom, 1)]:
        a.tp = tp
        try:
            d = _deployment(a)
        except TokenomicsError as exc:
            errors.append(f"tp={tp}: {exc}")
            continue
        if int(max_batch(d, a.context[0])) >= 1:
            return d
        errors.append(f"tp={tp}: not one sequence of {a.context[0]} tokens fits")
    raise TokenomicsError(f"{a.model} does not fit one scale-up domain of {hw.id} at "
                          f"{a.context[0]} tokens ({errors[-1] if errors else 'no layout'}); "
                          "pass --tp/--pp or a smaller --weight-dtype")


def _save(ax: Any, path: Any) -> None:
    """Write the figure an Axes belongs to as a PNG."""
    ax.get_figure(root=True).savefig(path, dpi=110)


def cmd_report(a: argparse.Namespace) -> None:
    from pathlib import Path

    from tokenomics.core.errors import NotPublishedError
    from tokenomics.economics.cost import deployment_cost, energy_per_token
    from tokenomics.pareto.envelope import best_at, frontier
    from tokenomics.physics.memory import max_batch, min_devices
    from tokenomics.surfaces.plots import plot_cost, plot_frontier, plot_memory, plot_roofline

    d = _deployment(a) if a.tp else _auto_tp(a)
    ctx = a.context[0]
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    mb = int(max_batch(d, ctx))
    batches = sorted({b for b in (1, 8, 32, 64, 128, 256, mb) if 1 <= b <= mb})
    lines = [f"tokenomics sizing report: {d.model.id} on {d.n_devices} x {d.hardware.id} "
             f"(tp={d.tp}, pp={d.pp}), weights {d.weight_dtype}, KV {d.kv_dtype}, compute "
             f"{d.compute_dtype}, context {ctx} tokens", f"  {_label(d)}", ""]
    # Memory
    fit = memory_fit(d, batches, ctx).to_frame()
    fit.insert(0, "batch", batches)
    fit.to_csv(out / "memory.csv", index=False)
    need = min_devices(d.model, d.hardware, 1, ctx, d.weight_dtype, d.kv_dtype,
                       d.usable_memory_fraction)
    lines += [f"memory per device: weights {fit.weights_bytes.iloc[0] / 1e9:.1f} GB of "
              f"{d.hardware.mem_capacity_bytes / 1e9:.0f} GB ({d.usable_memory_fraction:.0%} "
              f"usable); max batch at {ctx} tokens: {mb}; min devices for one sequence: {need}"]
    # Decode
    r = decode(d, batches, ctx)
    dec = r.to_frame()[["batch", "step_time_s", "tokens_per_s_per_user",
                        "tokens_per_s_per_device", "bound", "comm_time_s"]]
    dec.to_csv(out / "decode.csv", index=False)
    lines += ["", "decode:", dec.to_string(index=False,
                                                                   float_format="{:.4g}".format)]
    pre = prefill(d, a.prompt)
    lines += ["", f"prefill of {a.prompt} tokens: TTFT {pre.time_s * 1e3:.1f} ms ({pre.bound}-"
              f"bound)"]
    operator_table(d, "decode", batches[-1], context_tokens=ctx).to_csv(
        out / "operators.csv", index=False)
    # Frontier over TP degrees on this hardware
    deps = []
    for tp in (1, 2, 4, 8, 16):
        try:
            x = d.with_(tp=tp)
        except TokenomicsError:
            continue
        if int(max_batch(x, ctx)) >= 1:
            deps.append(x)
    f = frontier(deps, ctx, efficiency="deployment")
    f.to_csv(out / "frontier.csv", index=False)
    try:
        b = best_at(f, a.slo)
        lines += ["", f"best at >= {a.slo:g} tokens/s per user: {b.tokens_per_s_per_device:.4g} "
                  f"tokens/s per device ({b.label})"]
    except TokenomicsError as exc:
        lines += ["", f"SLO {a.slo:g} tokens/s per user: {exc}"]
    # Cost and energy
    try:
        c = deployment_cost(d, min(64, mb), ctx, prompt_tokens=a.prompt,
                            usd_per_device_hour=a.price)
        e = energy_per_token(c.output_tokens_per_s_per_device, d.hardware) \
            if d.hardware.tdp_w else None
        cost = pd.DataFrame([dict(phase="input", usd_per_mtok=c.input_usd_per_mtok),
                             dict(phase="cached input", usd_per_mtok=c.cached_input_usd_per_mtok),
                             dict(phase="output", usd_per_mtok=c.output_usd_per_mtok)])
        cost.to_csv(out / "cost.csv", index=False)
        lines += ["", f"cost at ${c.usd_per_device_hour:g}/device-hour (decode batch "
                  f"{min(64, mb)}): input ${c.input_usd_per_mtok:.4g}, cached input "
                  f"${c.cached_input_usd_per_mtok:.4g}, output ${c.output_usd_per_mtok:.4g} per "
                  "million tokens"
                  + (f"; {e.joules_per_token:.3g} J per output token at TDP" if e else "")]
        _save(plot_cost(c, labels=[d.hardware.id]), out / "cost.png")
    except NotPublishedError as exc:
        lines += ["", f"cost: {exc}"]
    _save(plot_roofline(d, batch=min(64, mb), context_tokens=ctx, prompt_tokens=a.prompt),
          out / "roofline.png")
    _save(plot_frontier(f, slo_tokens_per_s_per_user=a.slo), out / "frontier.png")
    _save(plot_memory(d, batches, ctx), out / "memory.png")
    (out / "report.txt").write_text("\n".join(lines) + "\n")
    if a.csv:
        dec.to_csv(a.csv, index=False)
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(json.loads(dec.to_json(orient="records")), fh, indent=1)
    print("\n".join(lines))
    print(f"\nwrote {', '.join(sorted(p.name for p in out.iterdir()))} to {out}")


def cmd_calibrate(a: argparse.Namespace) -> None:
    from tokenomics.calibration.fitting import calibration_report, excluded_rows, write_calibration

    if a.write:
        data = write_calibration()
        print("wrote measurements/calibrated.toml: " + ", ".join(
            f"{k}={data[k]:.4g}" for k in ("mbu", "mfu", "step_overhead_s")))
    t = calibration_report(refit=not a.write)
    _emit(t, a, "calibration: measured vs bound vs calibrated forecast (leave-one-out "
          "errors in cv_relative_error)")
    print(f"median |error|: forecast in-sample {t.relative_error.median():.1%}, "
          f"leave-one-out {t.cv_relative_error.median():.1%} (worst "
          f"{t.cv_relative_error.max():.1%}); pure roofline {t.bound_relative_error.median():.1%}")
    ex = excluded_rows()
    for r in ex.itertuples():
        print(f"not fitted: {r.id}: {r.reason}")


def _label(d: Deployment) -> str:
    e = d.efficiency
    from tokenomics.calibration.fitting import committed

    comm = (f"communication overlap {d.comm_overlap:g}, all-reduce {d.allreduce_algorithm}")
    if e == Efficiency():
        return f"pure roofline bound (all efficiencies 1, no overhead); {comm}"
    cal = committed()
    kind = (f"calibrated forecast (fitted {cal.date}; interval x{cal.loo_ratio_low:.2f}-"
            f"x{cal.loo_ratio_high:.2f})" if e == cal.efficiency else "custom efficiencies")
    return (f"{kind}: mbu={e.mbu:.3g} mfu={e.mfu:.3g} overhead={e.step_overhead_s * 1e3:.3g} "
            f"ms; {comm}")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="tokenomics", description=__doc__,
                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    h = sub.add_parser("hardware", help="list accelerators or show one with sources",
                       epilog="examples: tokenomics hardware; tokenomics hardware mi355x")
    h.add_argument("id", nargs="?", help="hardware id or alias")
    h.add_argument("--all-columns", action="store_true", help="every column of the table")
    _add_output(h)
    h.set_defaults(func=cmd_hardware)

    m = sub.add_parser("models", help="list models or show one with sources",
                       epilog="examples: tokenomics models; tokenomics models deepseek-v3")
    m.add_argument("id", nargs="?", help="model id or alias")
    _add_output(m)
    m.set_defaults(func=cmd_models)

    f = sub.add_parser("fit", help="memory per device: weights, KV, workspace; max batch",
                       epilog="example: tokenomics fit llama-3.1-405b h100-sxm --tp 8 --pp 5 "
                              "--batch 32 --context 131072 --multiple-of 8")
    _add_deployment(f)
    f.add_argument("--batch", type=int, nargs="+", default=[1])
    f.add_argument("--context", type=int, nargs="+", default=[8192])
    f.add_argument("--multiple-of", type=int, default=1, help="round min_devices up to this")
    _add_output(f)
    f.set_defaults(func=cmd_fit)

    d = sub.add_parser("decode", help="decode step time and throughput over batch x context",
                       epilog="example: tokenomics decode llama-3.1-70b h200 --weight-dtype fp8 "
                              "--kv-dtype fp8 --batch 1 8 64 --context 8192")
    _add_deployment(d)
    d.add_argument("--batch", type=int, nargs="+", default=[1, 8, 32, 64])
    d.add_argument("--context", type=int, nargs="+", default=[8192])
    _add_output(d)
    d.set_defaults(func=cmd_decode)

    pf = sub.add_parser("prefill", help="prefill time (TTFT), optionally on a cached prefix",
                        epilog="example: tokenomics prefill llama-3.1-8b h100-sxm --prompt 8192")
    _add_deployment(pf)
    pf.add_argument("--prompt", type=int, nargs="+", default=[8192])
    pf.add_argument("--batch", type=int, nargs="+", default=[1])
    pf.add_argument("--cached", type=int, default=0, help="cached prefix tokens")
    _add_output(pf)
    pf.set_defaults(func=cmd_prefill)

    r = sub.add_parser("roofline", help="per-operator FLOPs, bytes, intensity and bound",
                       epilog="example: tokenomics roofline llama-3.1-70b h100-sxm --tp 4 "
                              "--phase decode --batch 1 --context 4096")
    _add_deployment(r)
    r.add_argument("--phase", choices=["decode", "prefill", "midfill"], default="decode")
    r.add_argument("--batch", type=int, nargs="+", default=[1])
    r.add_argument("--context", type=int, nargs="+", default=[8192])
    r.add_argument("--prompt", type=int, default=8192)
    r.add_argument("--cached", type=int, default=0)
    _add_output(r)
    r.set_defaults(func=cmd_roofline)

    fr = sub.add_parser("frontier", help="Pareto frontier over hardware and TP degrees",
                        epilog="example: tokenomics frontier llama-3.3-70b --hardware h100-sxm "
                               "h200 b200 --tp 1 2 4 8 --weight-dtype fp8 --compute-dtype fp8 "
                               "--kv-dtype fp8 --context 4096 --slo 100")
    fr.add_argument("model", help="model id or alias")
    fr.add_argument("--hardware", nargs="+", default=["h100-sxm", "h200", "b200"])
    fr.add_argument("--tp", type=int, nargs="+", default=[1, 2, 4, 8])
    fr.add_argument("--weight-dtype")
    fr.add_argument("--kv-dtype", default="bf16")
    fr.add_argument("--compute-dtype")
    fr.add_argument("--usable-fraction", type=float, default=0.9)
    fr.add_argument("--efficiency", choices=["calibrated", "roofline"], default="calibrated",
                    help="efficiency preset (default: the calibrated forecast)")
    fr.add_argument("--context", type=int, default=4096)
    fr.add_argument("--slo", type=float, help="tokens/s per user floor: print the best there")
    _add_output(fr)
    fr.set_defaults(func=cmd_frontier)

    co = sub.add_parser("cost", help="cost per million tokens by phase, blended, energy",
                        epilog="example: tokenomics cost llama-3.1-70b h200 --weight-dtype fp8 "
                               "--compute-dtype fp8 --kv-dtype fp8 --batch 64 --context 4096 "
                               "--price 3.0 --input-ratio 3 --output-ratio 1 --hit-rate 0.5")
    _add_deployment(co)
    co.add_argument("--batch", type=int, nargs=1, default=[64])
    co.add_argument("--context", type=int, nargs=1, default=[4096])
    co.add_argument("--prompt", type=int, default=None, help="prompt length (default context)")
    co.add_argument("--price", type=float, help="USD per device-hour (default catalog rental)")
    co.add_argument("--tier", help="catalog rental tier to use")
    co.add_argument("--input-ratio", type=float, default=3.0)
    co.add_argument("--output-ratio", type=float, default=1.0)
    co.add_argument("--hit-rate", type=float, default=0.0)
    _add_output(co)
    co.set_defaults(func=cmd_cost)

    dg = sub.add_parser("disagg", help="disaggregated vs colocated goodput under SLOs",
                        epilog="example: tokenomics disagg llama-3.1-70b h100-sxm --tp 4 "
                               "--devices 32 --input 2048 --output 256 --ttft 2 --tpot 0.05")
    _add_deployment(dg)
    dg.add_argument("--devices", type=int, default=32, help="device budget")
    dg.add_argument("--input", type=int, default=2048, help="input tokens per request")
    dg.add_argument("--output", type=int, default=256, help="output tokens per request")
    dg.add_argument("--ttft", type=float, default=2.0, help="TTFT SLO [s]")
    dg.add_argument("--tpot", type=float, default=0.05, help="TPOT SLO [s]")
    dg.add_argument("--slo-fraction", type=float, default=0.9)
    dg.add_argument("--link-gbps", type=float, default=1600.0,
                    help="prefill-to-decode link per prefill instance [Gb/s per direction]")
    dg.add_argument("--token-budget", type=int, default=2048,
                    help="chunked-prefill token budget of the colocated layout")
    _add_output(dg)
    dg.set_defaults(func=cmd_disagg)

    rt = sub.add_parser("retention", help="keep a session's KV in HBM, offload it, or drop "
                        "it over an idle gap (S62)",
                        epilog="example: tokenomics retention llama-3.1-70b h100-sxm --tp 8 "
                               "--context 119000 --tier dram ssd")
    _add_deployment(rt)
    rt.add_argument("--context", type=int, default=119_000,
                    help="tokens in the session's KV (default 119000, S61)")
    rt.add_argument("--tier", nargs="+", default=["dram"],
                    help="offload tier(s) from price_catalog/kv_tiers.toml (default dram)")
    rt.add_argument("--miss-usd", type=float, default=None,
                    help="price of a return that misses HBM [USD] (default: the stated "
                         "$8.40 per million context tokens; 0 for GPU time only)")
    rt.add_argument("--price", type=float, help="USD per device-hour (default catalog rental)")
    rt.add_argument("--gap-median-min", type=float, default=25.0,
                    help="median idle gap [min] (default 25, S62)")
    rt.add_argument("--gap-mean-to-median", type=float, default=15.0,
                    help="mean over median of the gap (default 15, S60)")
    rt.add_argument("--sessions", type=float, default=100.0,
                    help="agent sessions per replica, each idling one mean gap per request "
                         "(default 100): mean idle sessions in HBM and in the tier, and the "
                         "tier's fraction used (Little's law)")
    _add_output(rt)
    rt.set_defaults(func=cmd_retention)

    cb = sub.add_parser("calibrate", help="fit efficiencies to the published measurements",
                        epilog="example: tokenomics calibrate (report); tokenomics calibrate "
                               "--write (refit and rewrite measurements/calibrated.toml)")
    cb.add_argument("--write", action="store_true", help="rewrite measurements/calibrated.toml")
    _add_output(cb)
    cb.set_defaults(func=cmd_calibrate)

    rp = sub.add_parser("report", help="sizing report: text, CSV tables and PNG figures",
                        epilog="example: tokenomics report llama-3.1-70b h200 --weight-dtype fp8 "
                               "--compute-dtype fp8 --kv-dtype fp8 --out report")
    _add_deployment(rp)
    rp.set_defaults(tp=None)
    rp.add_argument("--context", type=int, nargs=1, default=[8192])
    rp.add_argument("--prompt", type=int, default=2048, help="prompt length for TTFT")
    rp.add_argument("--slo", type=float, default=30.0, help="tokens/s per user floor")
    rp.add_argument("--price", type=float, help="USD per device-hour (default catalog)")
    rp.add_argument("--out", default="report", help="output folder (default ./report)")
    _add_output(rp)
    rp.set_defaults(func=cmd_report)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``tokenomics`` console script; returns the exit status."""
    parser = build_parser()
    a = parser.parse_args(argv)
    try:
        a.func(a)
    except (TokenomicsError, KeyError, OSError) as exc:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"tokenomics: error: {msg}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
