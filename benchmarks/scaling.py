"""The scaling plot of docs/speed.md: time against points and against deployments, one run.

Run: ``python benchmarks/scaling.py`` (needs the dask extra; about a minute on 2 cores). It
times ``tk.decode`` over 1e3-1e6 points of one deployment, ``tk.lazy_pareto(tk.sweep_lazy(...))``
over 1e5-1e7 points of four, and ``tk.frontier`` over 10-1,000 dense deployments (cold: fresh
deployments; warm: asked again, their decode curves kept), each beside
the bare numpy roofline of the same work measured in the same run (see bench_frontier.py and
bench_sweep.py), and writes ``benchmarks/results/scaling.csv`` (with the date and machine)
and ``docs/img/scaling.png``. Not part of the test suite.
"""

from __future__ import annotations

import datetime
import os
import platform
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

import tokenomics as tk  # noqa: E402

HERE = Path(__file__).resolve().parent
import bench_frontier as bf  # noqa: E402
import bench_sweep as bs  # noqa: E402


def _best(fn, repeats: int = 3) -> float:
    fn()
    return min(_time(fn) for _ in range(repeats))


def _time(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> None:
    rows = []
    d = tk.Deployment("llama-3.1-70b", "h100-sxm", tp=8)
    rng = np.random.default_rng(0)
    for n in (1_000, 10_000, 100_000, 1_000_000):
        b, c = rng.integers(1, 512, n), rng.integers(128, 131_072, n)
        t = _best(lambda b=b, c=c: tk.decode(d, b, c, on_oom="mark"))
        rows.append(dict(kind="decode, one deployment", size=n, seconds=t))
    for n in (1e5, 1e6, 1e7):
        B, C = bs._grid(int(n))
        pts = len(bs.DEPS) * B.size * C.size
        t = _time(lambda B=B, C=C: tk.lazy_pareto(tk.sweep_lazy(bs.DEPS, B, C)))
        base = _time(lambda B=B, C=C: bs._numpy_baseline(B, C))
        rows.append(dict(kind="Dask sweep to its Pareto set", size=pts, seconds=t,
                         numpy_seconds=base))
    deps = bf._deployments()[:1000]
    for n in (10, 30, 100, 300, len(deps)):
        part = deps[:n]
        cold = bf._cold(part, 3)
        tk.frontier(part, bf.CONTEXT)
        warm = _best(lambda p=part: tk.frontier(p, bf.CONTEXT))
        base = _best(lambda p=part: bf._numpy_baseline(p))
        rows.append(dict(kind="frontier, dense deployments (cold)", size=n, seconds=cold,
                         numpy_seconds=base))
        rows.append(dict(kind="frontier, dense deployments (warm)", size=n, seconds=warm,
                         numpy_seconds=base))
    df = pd.DataFrame(rows)
    df["date"] = datetime.date.today().isoformat()
    df["machine"] = f"{platform.machine()} {os.cpu_count()} cores, {platform.python_version()}"
    df.to_csv(HERE / "results" / "scaling.csv", index=False)
    _plot(df)
    print(df.to_string(index=False))


def _plot(df: pd.DataFrame) -> None:
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 4))
    front = df.kind.str.startswith("frontier")
    for kind, g in df[~front].groupby("kind"):
        a1.loglog(g["size"], g.seconds, marker="o", label=kind)
    g = df[df.kind == "Dask sweep to its Pareto set"]
    a1.loglog(g["size"], g.numpy_seconds, ls=":", marker=".", label="bare numpy roofline")
    x = np.array([1e3, 1e8])
    a1.loglog(x, x * 1e-6, color="0.6", lw=0.8, label="1 us a point")
    a1.set_xlabel("points")
    a1.set_ylabel("seconds")
    a1.legend(fontsize=7)
    a1.grid(True, which="both", alpha=0.3)
    for kind, g in df[front].groupby("kind"):
        a2.loglog(g["size"], g.seconds, marker="o", label="tk.frontier" + kind[27:])
    g = df[df.kind == "frontier, dense deployments (warm)"]
    a2.loglog(g["size"], g.numpy_seconds, ls=":", marker=".", label="bare numpy roofline")
    a2.loglog(g["size"], g["size"] * 5e-4, color="0.3", ls="--", lw=0.8,
              label="issue 15 goal: 0.5 ms a deployment")
    a2.set_xlabel("deployments")
    a2.set_ylabel("seconds")
    a2.legend(fontsize=7)
    a2.grid(True, which="both", alpha=0.3)
    fig.suptitle(f"tokenomics speed, {df.date.iloc[0]}, {df.machine.iloc[0]}", fontsize=9)
    fig.tight_layout()
    fig.savefig(HERE.parent / "docs" / "img" / "scaling.png", dpi=110)


if __name__ == "__main__":
    import sys

    sys.path.insert(0, str(HERE))
    main()
