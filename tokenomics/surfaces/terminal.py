"""Terminal output for the command line: docstrings as plain help text, progress bars.

Nothing here computes; the command line (:mod:`tokenomics.surfaces.cli`) uses both.
"""

from __future__ import annotations

import sys
from typing import Any


def plain_help(doc: str) -> str:
    r"""A numpydoc/RST docstring as terminal text: no ``double backticks``, no ``::`` literal
    markers, no section underlines, roles (``:func:`x```) as their target.

    Examples
    --------
    >>> print(plain_help("Run it.\n\nExamples\n--------\n::\n\n    tokenomics ``hardware``"))
    Run it.
    <BLANKLINE>
    Examples:
    <BLANKLINE>
        tokenomics hardware
    """
    import re

    out: list[str] = []
    for line in doc.strip("\n").splitlines():
        if re.fullmatch(r"\s*-{3,}\s*", line) and out:
            out[-1] = out[-1].rstrip() + ":"
            continue
        if line.strip() == "::":
            continue
        line = re.sub(r":[a-z]+:`~?([^`]+)`", r"\1", line)
        out.append(line.replace("``", "").replace(" ::", ":").rstrip())
    text = "\n".join(out)
    return re.sub(r"\n{3,}", "\n\n", text)


class ProgressBar:
    """A progress bar on standard error, driven by a callback ``step(done, total, label)``.

    tqdm's bar where tqdm is installed, else one rewritten line per step; silent when
    standard error is not a terminal, so pipes and logs stay clean. Use it as a context
    manager: ``with ProgressBar("held-out fits") as step: grouped_cv(progress=step)``.

    Parameters
    ----------
    what : str
        What the steps are, shown before the count.
    """

    def __init__(self, what: str) -> None:
        self.what = what
        self.bar: Any = None

    def __enter__(self) -> Any:
        return self.step

    def step(self, done: int, total: int, label: str) -> None:
        if not sys.stderr.isatty():
            return
        try:
            from tqdm import tqdm
        except ImportError:
            print(f"\r{self.what}: {done}/{total} {label:<40}", end="", file=sys.stderr)
            return
        if self.bar is None:
            self.bar = tqdm(total=total, desc=self.what, file=sys.stderr, leave=False)
        self.bar.set_postfix_str(label)
        self.bar.update(done - self.bar.n)

    def __exit__(self, *exc: Any) -> None:
        if self.bar is not None:
            self.bar.close()
        elif sys.stderr.isatty():
            print(file=sys.stderr)
