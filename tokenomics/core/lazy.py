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
import types
from collections.abc import Callable, Mapping, Sequence
from typing import Any


class MovedModule(types.ModuleType):
    """A release-0.1 module whose contents now live in several modules.

    Attribute lookups try each new module in turn, so ``tk.tiering.retention_policy`` finds the
    function in :mod:`tokenomics.economics.retention` and ``tk.tiering.tier`` the one in
    :mod:`tokenomics.serving.tiers`. Only attribute access is kept working; new code should
    import from the new modules.
    """

    def __init__(self, name: str, targets: Sequence[str]) -> None:
        super().__init__(name, f"Moved in release 0.2 to: {', '.join(targets)}.")
        self._targets = tuple(targets)

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        for target in self._targets:
            mod = importlib.import_module(target)
            if hasattr(mod, attr):
                return getattr(mod, attr)
        raise AttributeError(f"{self.__name__} (now {', '.join(self._targets)}) has no "
                             f"attribute {attr!r}")

    def __dir__(self) -> list[str]:
        names: set[str] = set()
        for target in self._targets:
            names.update(n for n in dir(importlib.import_module(target)) if not n.startswith("_"))
        return sorted(names)


def attach(package: str, namespace: dict[str, Any], exports: Mapping[str, str],
           submodules: tuple[str, ...] = (),
           moved: Mapping[str, str | tuple[str, ...]] | None = None,
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
    moved : Mapping[str, str or tuple of str], optional
        Old attribute name -> absolute name of the module now behind it, or of the modules its
        contents were split into (a :class:`MovedModule` then searches them in order), so that
        modules that moved stay reachable under their old attribute path.

    Returns
    -------
    tuple
        The two module-level functions PEP 562 looks up and the ``__all__`` list: the
        sorted ``exports`` names. ``__dir__`` lists those names and ``submodules``; the old
        names of ``moved`` resolve but are not listed.

    Notes
    -----
    The returned ``__getattr__`` raises ``AttributeError`` naming the package and the
    attribute for any name in none of the three tables (so ``hasattr`` works), and stores
    every value it resolves in ``namespace``.
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
            target = old[name]
            value = (importlib.import_module(target) if isinstance(target, str)
                     else MovedModule(f"{package}.{name}", target))
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(table) | subs)

    return __getattr__, __dir__, sorted(table)
