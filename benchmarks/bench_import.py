"""Benchmark: start-up cost of ``import tokenomics``, of one public name, and of the CLI's help.

Run: ``python benchmarks/bench_import.py``. Not part of the test suite. Each figure is the
median wall time of fresh interpreter processes, reported with its ratio to a bare
``python -c pass`` measured in the same run (start-up speed varies from machine to machine;
the ratio and the difference are what to compare).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

CASES = {
    "python -c pass (baseline)": [sys.executable, "-c", "pass"],
    "import tokenomics": [sys.executable, "-c", "import tokenomics"],
    "import tokenomics; tk.decode": [sys.executable, "-c",
                                     "import tokenomics as tk; tk.decode"],
    "every public name resolved": [sys.executable, "-c",
                                   "import tokenomics as tk\nfor n in tk.__all__: getattr(tk, n)"],
    "tokenomics --help": [sys.executable, "-c",
                          "import sys; from tokenomics.surfaces.cli import main\n"
                          "try:\n    main(['--help'])\nexcept SystemExit:\n    pass"],
}


def _median_s(cmd: list[str], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main(repeats: int = 9) -> None:
    for cmd in CASES.values():            # warm the file cache
        subprocess.run(cmd, check=True, capture_output=True)
    base = None
    for name, cmd in CASES.items():
        t = _median_s(cmd, repeats)
        base = base or t
        print(f"{name:32s} {t * 1e3:8.0f} ms   x{t / base:5.1f} of baseline   "
              f"+{(t - base) * 1e3:6.0f} ms")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 9)
