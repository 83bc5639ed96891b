"""Lazy attribute tables for the package and its stage subpackages.

``import tokenomics`` (and ``import tokenomics.physics`` ...) imports no numerical library: each
package ``__init__`` declares which public name lives in which module, and a name's module is
imported the first time the name is used (PEP 562 module ``__getattr__``). The CLI's ``--help``
and any script that needs one corner of the library do not pay for the rest; scipy, sympy and
matplotlib are imported only inside the functions that need them.

References
----------
.. [1] PEP 562, "Module __getattr__ and __dir__", 2017. https://peps.python.org/pep-0562/
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def attach(package: str, namespace: dict[str, Any], exports: Mapping[str, str],
           submodules: tuple[str, ...] = (), moved: Mapping[str, str] | None = None,
           ) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """Return ``(__getattr__, __dir__, __all__)`` for a package with lazily imported names.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    namespace : dict
        The package's ``globals()``: a resolved name is stored there, so the next lookup is
        an ordinary attribute access.
    exports : Mapping[str, str]
        Public name -> module it is defined in (absolute, or relative to ``package`` when it
        starts with ``"."``).
    submodules : tuple of str
        Subpackages or modules reachable as attributes (``tokenomics.physics``).
    moved : Mapping[str, str], optional
        Old attribute name -> absolute name of the module now behind it (modules that moved
        stay reachable under their old attribute path).

    Returns
    -------
    tuple
        The two module-level functions PEP 562 looks up and the ``__all__`` list (sorted).
    """
    table = dict(exports)
    subs = frozenset(submodules)
    old = dict(moved or {})

    def __getattr__(name: str) -> Any:
        if name in table:
            target = table[name]
            mod = importlib.import_module(target, package if target.startswith(".") else None)
            value = getattr(mod, name)
        elif name in subs:
            value = importlib.import_module(f"{package}.{name}")
        elif name in old:
            value = importlib.import_module(old[name])
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(table) | subs)

    return __getattr__, __dir__, sorted(table)
