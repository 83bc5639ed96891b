"""Benchmark: tk.decode over 1,000,000 (batch, context) points for one deployment.

Run: ``python benchmarks/bench_decode.py``. Not part of the test suite (speed is measured
here, never asserted in tests). For each case it prints the best of five calls of
``tk.decode`` (the grid path of ``tokenomics/physics/grid.py`` where the deployment has a
plan, the engine otherwise), of the full engine on the same points (``decode_reference``),
and of a bare numpy roofline of the same grid (weights plus KV over bandwidth against the
active parameters' FLOPs over the peak: the least any model computes), and the ratios to the
bare roofline. Issue 30 asks for the grid within 10x of it.
"""

from __future__ import annotations

import statistics
import sys
import time

import numpy as np
from bench_steady import _best

import tokenomics as tk
from tokenomics.physics.step import decode_reference


def _bare(d: tk.Deployment, batch: np.ndarray, context: np.ndarray):
    w = tk.weight_bytes_per_device(d)
    kv = tk.kv_bytes_per_token(d.model, d.kv_dtype) / d.tp
    flops = 2.0 * tk.param_count(d.model, active=True) / d.tp
    bw, peak = d.hardware.mem_bw_bytes_per_s, d.hardware.peak(d.compute_dtype)
    return lambda: np.maximum((w + batch * kv * context) / bw, batch * flops / peak)


def main(n: int = 1_000_000, repeats: int = 5) -> None:
    rng = np.random.default_rng(0)
    batch = rng.integers(1, 512, n)
    context = rng.integers(1, 131_072, n)
    cases = {
        "llama-3.1-70b / 8 x h100 (dense, GQA)": tk.Deployment("llama-3.1-70b", "h100-sxm", tp=8),
        "deepseek-v3 / 8 x b200 fp8 (MoE, MLA)": tk.Deployment(
            "deepseek-v3", "b200", tp=8, weight_dtype="fp8", compute_dtype="fp8"),
        "qwen3-30b-a3b / 1 x h100 (MoE, calibrated)": tk.Deployment(
            "qwen3-30b-a3b", "h100-sxm", efficiency=tk.efficiency_presets()["calibrated"]),
        "gemma-3-27b / 1 x h200 (sliding windows: the engine)": tk.Deployment(
            "gemma-3-27b", "h200"),
    }
    print(f"{'case':<54} {'decode s':>9} {'engine s':>9} {'bare ms':>8} {'x bare':>7} "
          f"{'engine x bare':>13}")
    for name, d in cases.items():
        c = np.minimum(context, int(d.model.max_context))
        tk.decode(d, batch[:4096], c[:4096], on_oom="mark")       # builds the plan
        fast = _best(lambda d=d, c=c: tk.decode(d, batch, c, on_oom="mark"), repeats)
        full = _best(lambda d=d, c=c: decode_reference(d, batch, c, on_oom="mark"), 2)
        bare = _best(_bare(d, batch, c), repeats)
        print(f"{name:<54} {fast:>9.3f} {full:>9.3f} {bare * 1e3:>8.1f} {fast / bare:>7.1f} "
              f"{full / bare:>13.1f}")


def bench_sweep(n_side: int = 1000) -> None:
    """tk.sweep over a 1000 x 1000 (batch, context) grid = 1,000,000 configurations."""
    B, C = np.meshgrid(np.arange(1, n_side + 1), np.linspace(128, 131_072, n_side).round())
    d = tk.Deployment("llama-3.1-70b", "h100-sxm", tp=8)
    tk.sweep([d], B[:5, :5], C[:5, :5])
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        s = tk.sweep([d], B, C)
        times.append(time.perf_counter() - t0)
    print(f"sweep: {len(s):,} configurations, min {min(times):.3f} s, median "
          f"{statistics.median(times):.3f} s")


def bench_frontier() -> None:
    """tk.frontier over every MoE deployment of four models x four devices x TP 1-8 that fits
    (FP8, 4K context): ~50 curves of ~100 refined vertices each, crossings included."""
    deps = []
    for hw in ("h100-sxm", "h200", "b200", "mi300x"):
        for tp in (1, 2, 4, 8):
            for m in ("deepseek-v3", "qwen3-30b-a3b", "gpt-oss-120b", "mixtral-8x7b"):
                d = tk.Deployment(m, hw, tp=tp, weight_dtype="fp8", compute_dtype="fp8",
                                  kv_dtype="fp8")
                if int(tk.max_batch(d, 4096)) >= 1:
                    deps.append(d)
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        f = tk.frontier(deps, 4096)
        times.append(time.perf_counter() - t0)
    print(f"frontier: {len(deps)} MoE deployments, {len(f)} envelope vertices, min "
          f"{min(times):.3f} s, median {statistics.median(times):.3f} s")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
    bench_sweep()
    bench_frontier()
