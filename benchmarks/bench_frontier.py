"""Benchmark: the frontier's cost against the number of deployments, as ratios in one run.

Run: ``python benchmarks/bench_frontier.py``. Not part of the test suite (speed is measured
here, never asserted in tests). For 10 to 1,000 dense deployments (catalog models x GPUs x TP
x BF16/FP8 weights x BF16/FP8 KV x roofline/calibrated efficiency, the layouts that fit) it
prints the milliseconds per deployment of ``tk.frontier`` twice:

* **cold**: on fresh Deployment objects (every decode curve computed: its step lines read
  from the engine, its kinks, its vertices);
* **warm**: asked again of the same deployments (each keeps its decode curves, so only the
  envelope is computed: a notebook re-asking at another SLO or price);

and, as the baseline measured in the same run, a bare numpy roofline over the same
deployments' batch grids (weights and KV streamed, FLOPs at peak: the least work any frontier
must do). Then the same for MoE deployments, and their cost per deployment over dense.
Linear cost shows as a flat "ms per deployment" column and a steady ratio.
"""

from __future__ import annotations

import itertools
import time

import numpy as np

import tokenomics as tk

MODELS = ("llama-3.1-8b", "llama-3.1-70b", "llama-3.3-70b", "qwen3-32b", "gemma-3-27b",
          "mistral-large-2", "llama-2-70b", "llama-2-13b")
MOE = ("qwen3-30b-a3b", "mixtral-8x7b", "gpt-oss-120b", "deepseek-v3", "qwen3-235b-a22b")
GPUS = ("h100-sxm", "h200", "b200", "mi300x", "a100-80gb", "mi325x", "b300")
CONTEXT = 4096


def _deployments(models=MODELS) -> list[tk.Deployment]:
    """Every layout of ``models`` that fits one sequence at CONTEXT, roofline ones first."""
    cal = tk.efficiency_presets()["calibrated"]
    out = []
    for eff, kv, m, h, tp, f in itertools.product(("roofline", cal), ("weights", "fp8"),
                                                  models, GPUS, (1, 2, 4, 8),
                                                  ("bf16", "fp8")):
        kvd = f if kv == "weights" else "fp8"
        kw = {} if eff == "roofline" else {"efficiency": eff}
        try:
            d = tk.Deployment(m, h, tp=tp, weight_dtype=f, compute_dtype=f, kv_dtype=kvd, **kw)
        except tk.TokenomicsError:
            continue
        if tk.max_batch(d, CONTEXT) >= 1:
            out.append(d)
    return list({(d.model.id, d.hardware.id, d.tp, d.weight_dtype, d.kv_dtype,
                  d.efficiency.label): d for d in out}.values())


def _numpy_baseline(deps: list[tk.Deployment]) -> None:
    """Roofline step time over each deployment's whole-batch grid, in plain numpy."""
    for d in deps:
        b = np.arange(1, int(tk.max_batch(d, CONTEXT)) + 1, dtype=float)
        w = tk.weight_bytes_per_device(d)
        kv = tk.kv_bytes_per_token(d.model, d.kv_dtype) * CONTEXT / d.tp
        flops = 2.0 * tk.param_count(d.model, active=True) / d.tp
        t = np.maximum((w + b * kv) / d.hardware.mem_bw_bytes_per_s,
                       b * flops / d.hardware.peak(d.compute_dtype))
        np.maximum.accumulate(b / t)


def _best(fn, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _cold(deps: list[tk.Deployment], repeats: int) -> float:
    """Best time of the frontier on fresh copies of ``deps`` (nothing kept from before)."""
    best = float("inf")
    for _ in range(repeats):
        fresh = [d.with_() for d in deps]
        t0 = time.perf_counter()
        tk.frontier(fresh, CONTEXT)
        best = min(best, time.perf_counter() - t0)
    return best


def _table(deps: list[tk.Deployment], sizes: tuple[int, ...], repeats: int) -> dict:
    print(f"{'deployments':>11} {'cold ms':>9} {'ms/dep':>7} {'warm ms':>9} {'ms/dep':>7} "
          f"{'numpy ms':>9} {'cold x':>7} {'warm x':>7}")
    per = {}
    for n in sizes:
        part = deps[:n]
        cold = _cold(part, repeats)
        tk.frontier(part, CONTEXT)                          # the curves kept
        warm = _best(lambda p=part: tk.frontier(p, CONTEXT), repeats)
        base = _best(lambda p=part: _numpy_baseline(p), repeats)
        print(f"{n:>11} {cold * 1e3:>9.1f} {cold * 1e3 / n:>7.2f} {warm * 1e3:>9.1f} "
              f"{warm * 1e3 / n:>7.2f} {base * 1e3:>9.2f} {cold / base:>7.1f} "
              f"{warm / base:>7.1f}")
        per[n] = (cold / n, warm / n)
    return per


def main(repeats: int = 3) -> None:
    tk.frontier(_deployments()[:3], CONTEXT)                # warm up (catalog, imports)
    deps = _deployments()[:1000]
    print(f"{len(deps)} dense deployments that fit at {CONTEXT} tokens\n")
    dense = _table(deps, tuple(n for n in (10, 30, 100, 300, 1000) if n <= len(deps)), repeats)
    moe = _deployments(MOE)
    print(f"\n{len(moe)} MoE deployments\n")
    n = min(100, len(moe))
    per = _table(moe, (n,), repeats)[n]
    ref = dense[100] if 100 in dense else next(iter(dense.values()))
    print(f"\nMoE over dense, per deployment: cold {per[0] / ref[0]:.1f}x, "
          f"warm {per[1] / ref[1]:.1f}x (issue 15: at most 3x)")


if __name__ == "__main__":
    main()
