"""Benchmark: the frontier's cost against the number of deployments, as ratios in one run.

Run: ``python benchmarks/bench_frontier.py``. Not part of the test suite (speed is measured
here, never asserted in tests). For 10 to ~300 dense deployments (catalog models x GPUs x TP x
BF16/FP8, the layouts that fit) it prints the milliseconds per deployment of ``tk.frontier``
and, as the baseline measured in the same run, of a bare numpy roofline over the same
deployments' batch grids (weights and KV streamed, FLOPs at peak: the least work any frontier
must do). Linear cost shows as a flat "ms per deployment" column and a steady ratio.
"""

from __future__ import annotations

import itertools
import time

import numpy as np

import tokenomics as tk

MODELS = ("llama-3.1-8b", "llama-3.1-70b", "llama-3.3-70b", "qwen3-32b", "gemma-3-27b",
          "mistral-large-2", "llama-2-70b", "llama-2-13b")
GPUS = ("h100-sxm", "h200", "b200", "mi300x", "a100-80gb")
CONTEXT = 4096


def _deployments() -> list[tk.Deployment]:
    out = []
    for m, h, tp, f in itertools.product(MODELS, GPUS, (1, 2, 4, 8), ("bf16", "fp8")):
        try:
            d = tk.Deployment(m, h, tp=tp, weight_dtype=f, compute_dtype=f, kv_dtype=f)
        except tk.TokenomicsError:
            continue
        if tk.max_batch(d, CONTEXT) >= 1:
            out.append(d)
    return out


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


def main(repeats: int = 3) -> None:
    deps = _deployments()
    print(f"{len(deps)} dense deployments that fit at {CONTEXT} tokens\n")
    print(f"{'deployments':>11} {'frontier ms':>12} {'ms/dep':>8} {'numpy ms':>9} {'ratio':>7}")
    for n in (10, 30, 100, len(deps)):
        part = deps[:n]
        tk.frontier(part, CONTEXT)                          # warm up (catalog, caches)
        f = _best(lambda p=part: tk.frontier(p, CONTEXT), repeats)
        base = _best(lambda p=part: _numpy_baseline(p), repeats)
        print(f"{n:>11} {f * 1e3:>12.1f} {f * 1e3 / n:>8.2f} {base * 1e3:>9.2f} "
              f"{f / base:>7.1f}")


if __name__ == "__main__":
    main()
