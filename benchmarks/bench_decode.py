"""Benchmark: tk.decode over 1,000,000 (batch, context) points for one deployment.

Run: ``python benchmarks/bench_decode.py``. Not part of the test suite (speed is measured
here, never asserted in tests). Target: under 1 s on a 2-core machine.
"""

from __future__ import annotations

import statistics
import sys
import time

import numpy as np

import tokenomics as tk


def main(n: int = 1_000_000, repeats: int = 5) -> None:
    rng = np.random.default_rng(0)
    batch = rng.integers(1, 512, n)
    context = rng.integers(1, 131_072, n)
    cases = {
        "llama-3.1-70b / 8 x h100 (dense, GQA)": tk.Deployment("llama-3.1-70b", "h100-sxm", tp=8),
        "deepseek-v3 / 8 x b200 fp8 (MoE, MLA)": tk.Deployment(
            "deepseek-v3", "b200", tp=8, weight_dtype="fp8", compute_dtype="fp8"),
        "gemma-3-27b / 1 x h200 (sliding windows)": tk.Deployment("gemma-3-27b", "h200"),
    }
    for name, d in cases.items():
        tk.decode(d, batch[:1000], context[:1000], on_oom="mark")  # warm up
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            tk.decode(d, batch, context, on_oom="mark")
            times.append(time.perf_counter() - t0)
        print(f"{name}: {n:,} points, min {min(times):.3f} s, median "
              f"{statistics.median(times):.3f} s over {repeats} runs")



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
