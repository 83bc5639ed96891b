"""The physics spec: laws every catalog entry must obey, checked against the installed library.

``python -m tokenomics.spec [--catalog DIR ...]`` runs each law of :data:`LAWS` over every
hardware and model entry of the catalog (the bundled files plus the user folders of
``TOKENOMICS_CATALOG`` and ``--catalog``) and exits with status 1 naming the law and the
entry that broke it, 2 when the catalog does not even load (the loader's message names the
file and the field), 0 when every law holds. The laws are plain checks on the entry's
figures, and four Hypothesis properties of the step model over batch, context and bandwidth
(Hypothesis, a core dependency, so the plain install runs them).

The laws and the reasons for their ranges are listed in ``docs/user-catalogs.md``.

References
----------
.. [1] S. Williams, A. Waterman, D. Patterson, "Roofline: an insightful visual performance
   model for multicore architectures", Communications of the ACM 52(4), 2009 (ridge point).
.. [2] JEDEC, "JEDEC Releases New HBM4 Standard (JESD270-4)", press release, April 2025:
   2048-bit interface at up to 8 Gb/s per pin, up to 2 TB/s per stack (the DRAM bandwidth
   range).
.. [3] D. MacIver et al., "Hypothesis: A new approach to property-based testing", Journal of
   Open Source Software 4(43), 2019.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tokenomics.core.errors import TokenomicsError

__all__ = ["LAWS", "Law", "SpecReport", "Violation", "check_catalog", "main"]

#: Pairs (higher precision, lower precision) of dense peaks: the second is never below the
#: first on one chip (a lower-precision multiply-accumulate takes fewer transistors and bits
#: moved, so vendors run it at least as fast). INT formats are left out: Blackwell Ultra runs
#: INT8 below FP8 by design.
PRECISION_PAIRS = (("fp32", "tf32"), ("tf32", "bf16"), ("tf32", "fp16"), ("bf16", "fp8"),
                   ("fp16", "fp8"), ("fp8", "fp6"), ("fp6", "fp4"), ("fp8", "fp4"))
#: Plausible memory bandwidth [B/s] and capacity [B] of one device, by memory kind.
#: Off-chip DRAM (HBM, GDDR, LPDDR): bandwidth 100 GB/s .. 40 TB/s, i.e. up to 20 HBM4 stacks
#: at JEDEC's 2 TB/s each, about twice the fastest bundled device (Rubin, 22 TB/s announced);
#: capacity 1 GB .. 2 TB, about 7x the largest bundled device (288 GB). On-chip SRAM
#: (Groq, Cerebras): bandwidth 1 TB/s .. 100 PB/s (Cerebras WSE-3: 21 PB/s), capacity
#: 1 MB .. 100 GB (WSE-3: 44 GB on the wafer).
MEMORY_RANGES = {"dram": {"bandwidth": (1e11, 4e13), "capacity": (1e9, 2e12)},
                 "sram": {"bandwidth": (1e12, 1e17), "capacity": (1e6, 1e11)}}
#: Largest relative gap between the parameter count computed from the architecture and the
#: vendor's stated one: vendors round (8.03e9 is "8B"); the bundled models are within 1.5 %.
PARAM_TOLERANCE = 0.03
#: Compute formats tried, in order, to run a reference model on a device.
_FORMATS = ("bf16", "fp16", "fp8")


@dataclass(frozen=True)
class Law:
    """One law: its name, what it applies to, its statement and its check.

    ``check(entry, ctx)`` returns None when the law holds, a message when it is broken, or
    raises :class:`NotApplicable` (e.g. no published peak to compare).
    """

    name: str
    applies_to: str  # "hardware" or "model"
    statement: str
    check: Callable[[Any, Context], str | None]
    needs_hypothesis: bool = False


@dataclass(frozen=True)
class Violation:
    """A broken law: which law, which entry (kind, id, file) and what was found."""

    law: str
    kind: str
    entry: str
    path: str
    message: str

    def __str__(self) -> str:
        return f"law {self.law} broken by {self.kind} {self.entry!r} ({self.path}): {self.message}"


@dataclass
class SpecReport:
    """What :func:`check_catalog` found: counts, violations, and laws that did not apply."""

    checks: int = 0
    violations: list[Violation] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when no law was broken."""
        return not self.violations


class NotApplicable(TokenomicsError):
    """A law that cannot be checked on an entry (the figure it needs is not published)."""


@dataclass(frozen=True)
class Context:
    """What the property laws run on: the reference device and model, the example count."""

    reference_device: Any
    reference_model: Any
    max_examples: int = 20


# --------------------------------------------------------------------------------------------
# Hardware laws
# --------------------------------------------------------------------------------------------
def _memory_kind(hw: Any) -> str:
    """``"sram"`` where the device's main memory is on-chip SRAM, else ``"dram"``."""
    return "sram" if "sram" in (hw.memory_type or "").lower() else "dram"


def _ridge_positive(hw: Any, ctx: Context) -> str | None:
    """Ridge point peak / bandwidth [FLOP/B] is finite and > 0 for every published peak."""
    if not hw.peak_flop_per_s:
        raise NotApplicable("no dense peak is published")
    for fmt, peak in hw.peak_flop_per_s.items():
        ridge = peak / hw.mem_bw_bytes_per_s
        if not (math.isfinite(ridge) and ridge > 0):
            return f"{fmt} ridge point {peak:.4g} / {hw.mem_bw_bytes_per_s:.4g} = {ridge}"
    return None


def _precision_order(hw: Any, ctx: Context) -> str | None:
    """Lower-precision dense peaks are at least the higher-precision ones (1 % slack)."""
    p = hw.peak_flop_per_s
    pairs = [(a, b) for a, b in PRECISION_PAIRS if a in p and b in p]
    if not pairs:
        raise NotApplicable("fewer than two comparable peaks are published")
    bad = [f"{b} {p[b] / 1e12:.6g} TFLOP/s < {a} {p[a] / 1e12:.6g} TFLOP/s"
           for a, b in pairs if p[b] < 0.99 * p[a]]
    return "; ".join(bad) or None


def _in_range(hw: Any, what: str, value: float, unit: str) -> str | None:
    kind = _memory_kind(hw)
    lo, hi = MEMORY_RANGES[kind][what]
    if lo <= value <= hi:
        return None
    return (f"{what} {value:.4g} {unit} is outside {lo:.3g}..{hi:.3g} {unit}, the plausible "
            f"range for {kind.upper()} (memory type {hw.memory_type!r})")


def _bandwidth_range(hw: Any, ctx: Context) -> str | None:
    return _in_range(hw, "bandwidth", hw.mem_bw_bytes_per_s, "B/s")


def _capacity_range(hw: Any, ctx: Context) -> str | None:
    return _in_range(hw, "capacity", hw.mem_capacity_bytes, "B")


# --------------------------------------------------------------------------------------------
# Model laws
# --------------------------------------------------------------------------------------------
def _stated_rounding(stated: float) -> float:
    """Half a unit in the last significant digit of a stated count: "3B" means 2.5-3.5B.

    Vendors round headline counts ("80B", "3B active"); the law grants that rounding where it
    is wider than :data:`PARAM_TOLERANCE`.

    Examples
    --------
    >>> _stated_rounding(3e9), _stated_rounding(70.6e9)
    (500000000.0, 50000000.0)
    """
    digits = f"{stated:.12e}".split("e")[0].replace(".", "").rstrip("0") or "0"
    exponent = math.floor(math.log10(abs(stated)))
    return 0.5 * 10.0 ** (exponent - (len(digits) - 1))


def _param_count(m: Any, ctx: Context) -> str | None:
    """Total and active counts from the architecture within PARAM_TOLERANCE of the stated
    (or within the stated figure's own rounding, where that is wider)."""
    import tokenomics as tk

    if not m.official_total_params:
        raise NotApplicable("no official total is stated")
    out = []
    ple = m.official_total_include_per_layer_embedding     # Gemma 4's "effective" counts
    checks = [("total", tk.param_count(m, include_per_layer_embedding=ple),
               m.official_total_params)]
    if m.official_active_params:
        checks.append(("active", tk.param_count(
            m, active=True, include_embedding=m.official_active_include_embedding,
            include_lm_head=m.official_active_include_lm_head,
            include_per_layer_embedding=ple), m.official_active_params))
    for what, got, stated in checks:
        allowed = max(PARAM_TOLERANCE * stated, _stated_rounding(stated))
        if abs(got - stated) > allowed:
            out.append(f"computed {what} {got:.6g} vs stated {stated:.6g}")
    return (("; ".join(out) + f" (more than {PARAM_TOLERANCE:.0%} apart, and beyond the "
             "stated figures' rounding)") if out else None)


def _kv_expected_elements(att: Any) -> float:
    """KV elements per token per layer by attention kind (independent of the library's)."""
    if att.kind == "MLA":  # latent + decoupled RoPE key (DeepSeek-V2)
        return float(att.kv_lora_rank + att.qk_rope_head_dim)
    return float(att.num_kv_heads * (att.head_dim + att.v_head_dim))


def _kind_mismatch(att: Any) -> str | None:
    """The head counts a kind implies: MHA kv = q, MQA kv = 1, GQA 1 < kv < q, MLA a rank."""
    q, kv = att.num_q_heads, att.num_kv_heads
    ok = {"MHA": kv == q, "MQA": kv == 1, "GQA": 1 < kv < q and q % kv == 0,
          "MLA": att.kv_lora_rank > 0}.get(att.kind, False)
    return None if ok else f"attention kind {att.kind} with {q} query and {kv} KV heads"


def _kv_bytes(m: Any, ctx: Context) -> str | None:
    """KV bytes per token > 0 and equal to the kind's formula at BF16 (2 B per element).

    Only softmax-attention layers keep a per-token cache (linear-attention layers of a hybrid
    keep a fixed state per sequence instead); a sparse-attention indexer (DeepSeek-V3.2) adds
    its own key of ``index_head_dim`` elements per token per layer.
    """
    import tokenomics as tk

    got = tk.kv_bytes_per_token(m, "bf16")
    want = 2.0 * sum(n * (_kv_expected_elements(a) + (a.index_head_dim if a.is_sparse else 0))
                     for a, n in m.attention_shapes(storing=True))
    if not (got > 0):
        return f"KV bytes per token {got}"
    if not math.isclose(got, want, rel_tol=1e-9):
        return f"KV bytes per token {got:.6g} B, the {m.attention.kind} formula gives {want:.6g}"
    for a, _ in m.attention_shapes():
        bad = _kind_mismatch(a)
        if bad:
            return bad
    return None


# --------------------------------------------------------------------------------------------
# Properties of the step model (Hypothesis)
# --------------------------------------------------------------------------------------------
def _deployment(model: Any, hw: Any, efficiency: str) -> Any:
    """The model on one device at the first published compute format of _FORMATS."""
    import tokenomics as tk

    fmt = next((f for f in _FORMATS if f in hw.peak_flop_per_s), None)
    if fmt is None:
        raise NotApplicable(f"{hw.id} publishes no {'/'.join(_FORMATS)} peak to run on")
    return tk.Deployment(model, hw, compute_dtype=fmt,
                         efficiency=tk.efficiency_presets()[efficiency])


def _run_property(body: Callable[..., str | None], ctx: Context, **strategies: Any) -> str | None:
    """Run ``body`` over Hypothesis examples; the shrunk failing example's message, or None."""
    from hypothesis import HealthCheck, Verbosity, given, settings

    class Broken(Exception):
        pass

    @settings(max_examples=ctx.max_examples, deadline=None, database=None, derandomize=True,
              verbosity=Verbosity.quiet, suppress_health_check=list(HealthCheck))
    @given(**strategies)
    def prop(**kw: Any) -> None:
        msg = body(**kw)
        if msg:
            raise Broken(msg)

    try:
        prop()
    except Broken as exc:
        return str(exc)
    return None


def _bandwidth_property(model: Any, hw: Any, ctx: Context) -> str | None:
    """Decode step time is non-increasing in memory bandwidth (all else fixed)."""
    from hypothesis import strategies as st

    import tokenomics as tk

    max_ctx = int(min(model.max_context, 131_072))

    def body(batch: int, context: int, f: float, r: float, eff: str) -> str | None:
        dep = _deployment(model, hw, eff)
        t = [tk.decode(dep.with_(hardware=hw.with_(mem_bw_bytes_per_s=hw.mem_bw_bytes_per_s * x)),
                       batch, context, on_oom="mark").step_time_s for x in (f, f * r)]
        if t[1] > t[0] * (1 + 1e-9):
            return (f"{eff}: batch {batch}, context {context}: step {t[0]:.6g} s at "
                    f"{f:.3g}x bandwidth but {t[1]:.6g} s at {f * r:.3g}x")
        return None

    return _run_property(body, ctx, batch=st.integers(1, 512), context=st.integers(1, max_ctx),
                         f=st.floats(0.25, 4.0), r=st.floats(1.0, 4.0),
                         eff=st.sampled_from(["roofline", "calibrated"]))


def _batch_property(model: Any, hw: Any, ctx: Context) -> str | None:
    """Decode tokens/s per device is non-decreasing in batch at a fixed context."""
    from hypothesis import strategies as st

    import tokenomics as tk

    max_ctx = int(min(model.max_context, 131_072))

    def body(batch: int, extra: int, context: int, eff: str) -> str | None:
        dep = _deployment(model, hw, eff)
        r = tk.decode(dep, [batch, batch + extra], context, on_oom="mark")
        tps = [float(x) for x in r.tokens_per_s_per_device]
        if tps[1] < tps[0] * (1 - 1e-9):
            return (f"{eff}: context {context}: {tps[0]:.6g} token/s per device at batch "
                    f"{batch} but {tps[1]:.6g} at batch {batch + extra}")
        return None

    return _run_property(body, ctx, batch=st.integers(1, 256), extra=st.integers(1, 256),
                         context=st.integers(1, max_ctx),
                         eff=st.sampled_from(["roofline", "calibrated"]))


#: Every law, in the order they run and are reported.
LAWS = (
    Law("ridge-point-positive", "hardware",
        "peak / bandwidth is finite and > 0 for every published dense peak", _ridge_positive),
    Law("precision-order", "hardware",
        "FP4 >= FP6 >= FP8 >= BF16/FP16 >= TF32 >= FP32 dense peaks, where published",
        _precision_order),
    Law("memory-bandwidth-range", "hardware",
        "DRAM 100 GB/s..40 TB/s, on-chip SRAM 1 TB/s..100 PB/s per device", _bandwidth_range),
    Law("memory-capacity-range", "hardware",
        "DRAM 1 GB..2 TB, on-chip SRAM 1 MB..100 GB per device", _capacity_range),
    Law("decode-time-vs-bandwidth", "hardware",
        "the reference model's decode step time is non-increasing in this device's bandwidth",
        lambda hw, ctx: _bandwidth_property(ctx.reference_model, hw, ctx), True),
    Law("throughput-vs-batch", "hardware",
        "the reference model's tokens/s per device is non-decreasing in batch on this device",
        lambda hw, ctx: _batch_property(ctx.reference_model, hw, ctx), True),
    Law("param-count", "model",
        f"parameters from the architecture within {PARAM_TOLERANCE:.0%} of the stated total "
        "and active counts", _param_count),
    Law("kv-bytes-per-token", "model",
        "KV bytes per token > 0, equal to the attention kind's formula, heads fit the kind",
        _kv_bytes),
    Law("decode-time-vs-bandwidth", "model",
        "decode step time on the reference device is non-increasing in its bandwidth",
        lambda m, ctx: _bandwidth_property(m, ctx.reference_device, ctx), True),
    Law("throughput-vs-batch", "model",
        "tokens/s per device on the reference device is non-decreasing in batch",
        lambda m, ctx: _batch_property(m, ctx.reference_device, ctx), True),
)


# --------------------------------------------------------------------------------------------
# Runner
# --------------------------------------------------------------------------------------------
def check_catalog(catalog: Any, ctx: Context, *, user_only: bool = False,
                  properties: bool = True) -> SpecReport:
    """Check every law of :data:`LAWS` on every entry of a catalog.

    Parameters
    ----------
    catalog : tokenomics.data.catalog.Catalog
        E.g. :func:`~tokenomics.data.catalog.default_catalog` or ``load_catalog(...)``.
    ctx : Context
        The reference device and model of the property laws and their example count.
    user_only : bool
        Check only the entries read from ``catalog.search_path`` (the user folders).
    properties : bool
        Run the Hypothesis laws too (needs the ``spec`` extra).

    Returns
    -------
    SpecReport
        ``checks`` run, ``violations`` (law, entry, message) and ``skipped`` laws.
    """
    report = SpecReport()
    tables = {"hardware": catalog.hardware, "model": catalog.models}
    for law in LAWS:
        if law.needs_hypothesis and not properties:
            continue
        for entry in _entries(tables[law.applies_to].values(), catalog, user_only):
            _check_one(law, entry, ctx, report)
    return report


def _entries(entries: Iterable[Any], catalog: Any, user_only: bool) -> list[Any]:
    if not user_only:
        return list(entries)
    roots = [str(p) for p in catalog.search_path]
    return [e for e in entries if any(str(Path(e.path).resolve()).startswith(r) for r in roots)]


def _check_one(law: Law, entry: Any, ctx: Context, report: SpecReport) -> None:
    report.checks += 1
    try:
        msg = law.check(entry, ctx)
    except NotApplicable as exc:
        report.skipped.append(f"{law.name} on {law.applies_to} {entry.id!r}: {exc}")
        return
    except Exception as exc:  # a law that raises is broken by the entry, not skipped
        msg = f"raised {type(exc).__name__}: {exc}"
    if msg:
        report.violations.append(Violation(law.name, law.applies_to, entry.id, entry.path, msg))


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m tokenomics.spec",
        description="Check the catalog entries (bundled and user folders) against the physics "
                    "laws; exit 1 naming the law and the entry that broke one.")
    p.add_argument("--catalog", metavar="DIR", action="append", default=[],
                   help="a user catalog folder (hardware/, models/); repeatable")
    p.add_argument("--user-only", action="store_true",
                   help="check only the entries of the user folders")
    p.add_argument("--no-properties", action="store_true",
                   help="skip the Hypothesis properties of the step model")
    p.add_argument("--max-examples", type=int, default=20, help="Hypothesis examples a law")
    p.add_argument("--device", default="h200", help="reference device of the model laws")
    p.add_argument("--model", default="llama-3.1-8b", help="reference model of the device laws")
    p.add_argument("--list", action="store_true", help="list the laws and exit")
    return p


def _print_laws() -> None:
    for law in LAWS:
        tag = " [hypothesis]" if law.needs_hypothesis else ""
        print(f"{law.name:26s} {law.applies_to:8s} {law.statement}{tag}")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m tokenomics.spec``; returns the exit status (0, 1 or 2)."""
    a = _parser().parse_args(argv)
    if a.list:
        _print_laws()
        return 0
    if not a.no_properties:
        try:
            import hypothesis  # noqa: F401
        except ImportError:
            print("spec: the property laws need Hypothesis (a dependency of the package): "
                  "pip install hypothesis (or run with --no-properties)", file=sys.stderr)
            return 2
    import tokenomics as tk

    previous = None
    try:
        previous = tk.use_catalog(*a.catalog)
        cat = tk.data.default_catalog()
        ctx = Context(tk.hardware(a.device), tk.model(a.model), a.max_examples)
        report = check_catalog(cat, ctx, user_only=a.user_only, properties=not a.no_properties)
    except TokenomicsError as exc:
        print(f"spec: the catalog does not load: {exc}", file=sys.stderr)
        return 2
    finally:
        if previous is not None:
            tk.use_catalog(*previous)
    return _report(report, cat)


def _report(report: SpecReport, cat: Any) -> int:
    for v in report.violations:
        print(f"FAIL {v}")
    print(f"spec: {report.checks} checks over {len(cat.hardware)} hardware and "
          f"{len(cat.models)} model entries; {len(report.violations)} broken, "
          f"{len(report.skipped)} not applicable")
    return 0 if report.ok else 1
