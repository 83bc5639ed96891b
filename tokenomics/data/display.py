"""How catalog entries show themselves: one readable line, and a table in a notebook.

The generated dataclass repr of a :class:`~tokenomics.data.specs.Hardware` prints every
field in canonical units (``mem_capacity_bytes=151397597184.0``, a ``mappingproxy`` of
peaks); a reader wants the datasheet line. :func:`hardware_repr`, :func:`model_repr` and
:func:`deployment_repr` give it, with binary sizes in GiB where the catalog stores them so
(device memory), decimal rates (TB/s, TFLOP/s) and the scale-up bandwidth **per
direction**, as the catalog stores it. :func:`entry_html` is the ``_repr_html_`` of each:
every set field with its value in readable units and its source key, for Jupyter.

Nothing here changes an entry; equality and hashing still compare the fields.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from tokenomics.core.units import readable

_GIB = 2.0**30


def _gib(b: float) -> str:
    return f"{b / _GIB:.4g} GiB"


def _rate(x: float, unit: str) -> str:
    """A decimal rate: 4.8 TB/s, 989.4 TFLOP/s, 450 GB/s."""
    for scale, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= scale:
            return f"{x / scale:.4g} {prefix}{unit}"
    return f"{x:.4g} {unit}"


def hardware_repr(h: Any) -> str:
    """One line for a :class:`~tokenomics.data.specs.Hardware`: memory (physical, and
    driver-visible where recorded), bandwidth, dense peaks by format, scale-up link per
    direction and domain, TDP, and how many dated prices it carries.

    Examples
    --------
    >>> import tokenomics as tk
    >>> print(repr(tk.hardware("h100-sxm")).split(": ")[1].split(",")[0])
    80 GiB HBM3 (79.65 GiB visible)
    """
    mem = f"{_gib(h.mem_capacity_bytes)} {h.memory_type}".rstrip()
    if h.mem_visible_bytes is not None and h.mem_visible_bytes != h.mem_capacity_bytes:
        mem += f" ({_gib(h.mem_visible_bytes)} visible)"
    peaks = ", ".join(f"{k} {_rate(v, 'FLOP/s')}" for k, v in h.peak_flop_per_s.items())
    parts = [mem, _rate(h.mem_bw_bytes_per_s, "B/s"), f"dense {peaks}"]
    if h.scale_up_bw_bytes_per_s:
        link = f"{h.scale_up_name or 'scale-up'} {_rate(h.scale_up_bw_bytes_per_s, 'B/s')} " \
               f"per direction"
        if h.scale_up_domain_size:
            link += f" x {h.scale_up_domain_size}"
        parts.append(link)
    if h.tdp_w:
        parts.append(f"{h.tdp_w:g} W")
    if h.prices:
        parts.append(f"{len(h.prices)} price{'s' if len(h.prices) > 1 else ''}")
    return f"Hardware({h.id!r}, {h.name!r}: {', '.join(parts)})"


def model_repr(m: Any) -> str:
    """One line for a :class:`~tokenomics.data.specs.Model`: layers, width, attention
    heads, FFN or experts, vocabulary, context, released format and the vendor's parameter
    counts where recorded.

    Examples
    --------
    >>> import tokenomics as tk
    >>> print(repr(tk.model("llama-3.1-8b")).split(": ")[1].split(", ")[2])
    GQA 32 q / 8 kv heads x 128
    """
    a = m.attention
    att = f"{a.kind} {a.num_q_heads} q / {a.num_kv_heads} kv heads x {a.head_dim}"
    if a.kind == "MLA":
        att = f"MLA {a.num_q_heads} heads, KV rank {a.kv_lora_rank} + rope {a.qk_rope_head_dim}"
    g = m.global_attention
    if g is not None:          # Gemma 4: the full layers' own shape
        att += (f" (full layers {g.num_kv_heads} kv heads x {g.head_dim}"
                f"{', K = V' if g.k_eq_v else ''})")
    parts = [f"{m.num_layers} layers", f"hidden {m.hidden_size}", att]
    if m.moe is not None:
        e = m.moe
        moe = f"MoE {e.num_experts} experts top-{e.top_k} x {e.expert_intermediate_size}"
        if e.num_shared_experts:
            moe += f" (+{e.num_shared_experts} shared)"
        parts.append(moe)
    else:
        parts.append(f"FFN {m.intermediate_size}")
    parts += [f"vocab {m.vocab_size:,}", f"context {m.max_context:,}",
              f"{m.expert_dtype or m.weight_dtype} weights" if m.expert_dtype is None
              else f"{m.weight_dtype} weights, {m.expert_dtype} experts"]
    if m.official_total_params:
        p = f"{m.official_total_params / 1e9:.4g}B parameters"
        if m.official_active_params and m.official_active_params != m.official_total_params:
            p += f" ({m.official_active_params / 1e9:.4g}B active)"
        parts.append(p)
    return f"Model({m.id!r}, {m.name!r}: {', '.join(parts)})"


_DEFAULTS = dict(dp_attention=1, kv_shard="heads", comm_overlap=0.0, allreduce_algorithm="auto",
                 redundant_experts=0, engine=None, runtime_reserve_bytes=0.0,
                 workspace_bytes=None, allow_beyond_max_context=False,
                 mlp_data_parallel=False, ep_exchange="alltoall")


def deployment_repr(d: Any) -> str:
    """One line for a :class:`~tokenomics.data.deployment.Deployment`: model on devices,
    the parallel layout, formats, efficiency, usable memory, and each layout option that
    differs from its default.

    Examples
    --------
    >>> import tokenomics as tk
    >>> tk.Deployment("llama-3.1-8b", "h100-sxm", tp=2)
    Deployment('llama-3.1-8b' on 2 x 'h100-sxm': tp 2, pp 1, ep 1; weights bf16, KV bf16, \
compute bf16, activations bf16; efficiency 'roofline'; 90% of memory usable)
    """
    fmt = f"weights {d.weight_dtype}"
    if d.expert_dtype != d.weight_dtype:
        fmt += f", experts {d.expert_dtype}"
    fmt += f", KV {d.kv_dtype}, compute {d.compute_dtype}, activations {d.act_dtype}"
    extra = [f"{k} {getattr(d, k)!r}" for k, v in _DEFAULTS.items() if getattr(d, k) != v]
    tail = f"; {', '.join(extra)}" if extra else ""
    return (f"Deployment({d.model.id!r} on {d.n_devices} x {d.hardware.id!r}: tp {d.tp}, "
            f"pp {d.pp}, ep {d.ep}; {fmt}; efficiency {d.efficiency.label!r}; "
            f"{d.usable_memory_fraction:.0%} of memory usable{tail})")


#: Entry field -> the catalog keys (``sources`` keys, TOML paths) that source it; a prefix
#: ending in "." or "[" takes every key under it. Architecture fields of a model come from
#: its ``config`` source.
_SOURCE_KEYS = dict(
    peak_flop_per_s=("compute.",), achievable_flop_per_s=("achievable.",),
    mem_capacity_bytes=("memory.capacity",), mem_visible_bytes=("memory.visible",),
    mem_bw_bytes_per_s=("memory.bandwidth",), sram_bytes=("memory.sram",),
    scale_up_bw_bytes_per_s=("scale_up.bandwidth",),
    scale_up_domain_size=("scale_up.domain_size",),
    scale_up_latency_s=("scale_up.latency",), scale_out_bw_bytes_per_s=("scale_out.bandwidth",),
    scale_out_latency_s=("scale_out.latency",), tdp_w=("power.tdp",), prices=("prices[",),
    official_total_params=("official.total_params",),
    official_active_params=("official.active_params",), weight_dtype=("weights",),
    **{k: ("config",) for k in ("num_layers", "hidden_size", "vocab_size", "max_context",
                                "attention", "intermediate_size", "moe")})


def _sources_of(name: str, sources: Mapping[str, str]) -> str:
    keys = _SOURCE_KEYS.get(name, (name,))
    found = {v for k, v in sources.items()
             for p in keys if k == p or (p[-1] in ".[" and k.startswith(p))}
    return ", ".join(sorted(found))


def _cell(name: str, v: Any) -> str:
    if isinstance(v, Mapping):
        if "flop" in name:
            return ", ".join(f"{k}: {_rate(x, 'FLOP/s')}" for k, x in v.items())
        return ", ".join(f"{k}: {x if isinstance(x, str) else readable(name, x)}"
                         for k, x in v.items())
    if hasattr(v, "_repr_html_"):                # a catalog entry inside a deployment
        return repr(v)
    if isinstance(v, tuple) and v and hasattr(v[0], "__dataclass_fields__"):
        return f"{len(v)} entries"
    if hasattr(v, "__dataclass_fields__"):
        return ", ".join(f"{f.name}={getattr(v, f.name)!r}" for f in fields(v)
                         if getattr(v, f.name) not in (0, False, None, "", ()))
    if isinstance(v, tuple) and len(v) > 8:
        return f"{len(v)} entries"
    if name in ("mem_capacity_bytes", "mem_visible_bytes") and v:
        return f"{_gib(v)} ({readable(name, v)})"
    if name.endswith("bytes_per_s") and isinstance(v, (int, float)):
        return _rate(v, "B/s") + (" per direction" if "scale" in name else "")
    return readable(name, v)


def entry_html(obj: Any) -> str:
    """An HTML table of a catalog entry's set fields, each with its value in readable units
    and, where the entry records one, its source key (Jupyter's ``_repr_html_``)."""
    sources = getattr(obj, "sources", {}) or {}
    rows = []
    for f in fields(obj):
        v = getattr(obj, f.name)
        if f.name in ("sources", "config", "path") or v in (None, "", (), {}) or \
                (isinstance(v, Mapping) and not v):
            continue
        src = _sources_of(f.name, sources)
        rows.append(f"<tr><th style='text-align:left'>{html.escape(f.name)}</th>"
                    f"<td style='text-align:left'>{html.escape(_cell(f.name, v))}</td>"
                    f"<td style='text-align:left'><code>{html.escape(str(src))}</code></td></tr>")
    title = html.escape(repr(obj).split(":")[0] + ")")
    return (f"<table><caption style='text-align:left'><b>{title}</b></caption>"
            f"<tr><th>field</th><th>value</th><th>source</th></tr>{''.join(rows)}</table>")
