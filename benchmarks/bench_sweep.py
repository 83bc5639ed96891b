"""Benchmark: a Dask sweep's cost against its size, beside a bare numpy roofline, in one run.

Run: ``python benchmarks/bench_sweep.py [max_points]`` (default 1e7; 1e8 and 1e9 take
minutes on one machine; ``--local-cluster 2`` runs them on a distributed LocalCluster of two
workers, ``--scheduler tcp://host:8786`` on a cluster, ``--progress`` shows the bar).
Needs the dask extra. Not part of the test suite. For each size it runs
``tk.lazy_pareto(tk.sweep_lazy(...))`` over four dense deployments x batch x context and
prints seconds, microseconds per point and the ratio to a plain numpy roofline over the
same points measured in the same run (weights and KV streamed, FLOPs at peak: the least
work any sweep must do). Memory stays flat: each chunk (2**20 points) is made, reduced to
its non-dominated points and dropped.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import tokenomics as tk

DEPS = [tk.Deployment("llama-3.1-8b", "h100-sxm"), tk.Deployment("llama-3.1-8b", "h200"),
        tk.Deployment("llama-3.1-70b", "h200", tp=4),
        tk.Deployment("llama-3.1-70b", "b200", tp=2, weight_dtype="fp8", compute_dtype="fp8")]


def _grid(points: int) -> tuple[np.ndarray, np.ndarray]:
    """Batches and contexts of about ``points`` points over the deployments (the contexts
    whole and distinct, the batches filling the rest)."""
    n_ctx = max(1, int(round(np.sqrt(points / len(DEPS) / 4))))
    C = np.unique(np.geomspace(128, 131_072, n_ctx).round())
    n_b = max(1, points // len(DEPS) // C.size)
    return np.arange(1, n_b + 1), C


def _numpy_baseline(B: np.ndarray, C: np.ndarray) -> None:
    for d in DEPS:
        w = tk.weight_bytes_per_device(d)
        kv = tk.kv_bytes_per_token(d.model, d.kv_dtype) / d.tp
        flops = 2.0 * tk.param_count(d.model, active=True) / d.tp
        for c in C:                         # one context at a time: memory stays flat too
            t = np.maximum((w + B * kv * c) / d.hardware.mem_bw_bytes_per_s,
                           B * flops / d.hardware.peak(d.compute_dtype))
            np.maximum.accumulate(B / t)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("max_points", nargs="?", type=float, default=1e7)
    ap.add_argument("--scheduler", default=None, help="a dask.distributed scheduler address")
    ap.add_argument("--local-cluster", type=int, default=0, metavar="N",
                    help="start a distributed LocalCluster of N single-threaded workers")
    ap.add_argument("--progress", action="store_true", help="show Dask's progress bar")
    ap.add_argument("--start", type=float, default=1e5, help="the first size (default 1e5)")
    a = ap.parse_args()
    if a.scheduler or a.local_cluster:
        from distributed import Client, LocalCluster
        Client(a.scheduler or LocalCluster(n_workers=a.local_cluster, threads_per_worker=1))
    print(f"{'points':>12} {'sweep s':>9} {'us/point':>9} {'numpy s':>9} {'ratio':>7} "
          f"{'pareto rows':>12}")
    n = a.start
    while n <= a.max_points * 1.0001:
        B, C = _grid(int(n))
        pts = len(DEPS) * B.size * C.size
        t0 = time.perf_counter()
        front = tk.lazy_pareto(tk.sweep_lazy(DEPS, B, C), progress=a.progress)
        ts = time.perf_counter() - t0
        t0 = time.perf_counter()
        _numpy_baseline(B, C)
        tn = time.perf_counter() - t0
        print(f"{pts:>12,} {ts:>9.2f} {ts / pts * 1e6:>9.3f} {tn:>9.3f} {ts / tn:>7.1f} "
              f"{len(front):>12,}")
        n *= 10


if __name__ == "__main__":
    main()
