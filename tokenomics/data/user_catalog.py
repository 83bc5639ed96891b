"""Where users' own catalog folders are found: the search path of the catalog loader.

A user catalog folder holds ``hardware/*.toml`` and/or ``models/*.toml``, each folder with its
own ``sources.toml`` (the bundled folder names ``hardware_catalog/`` and ``model_catalog/``
are accepted too). The files follow ``docs/catalog-schema.md`` and are validated exactly like
the bundled ones by :func:`tokenomics.data.catalog.load_catalog`, which reads the folders of
:func:`search_path` after the bundled catalogs. The folders come from, in this order:

1. the ``TOKENOMICS_CATALOG`` environment variable (folders separated by ``os.pathsep``);
2. :func:`use_catalog` (the CLI's global ``--catalog DIR``, repeatable).

The rules for ids (a user entry may replace an earlier one only with ``overrides = true``) are
the loader's; ``docs/user-catalogs.md`` describes both.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from tokenomics.core.errors import CatalogError

__all__ = ["CATALOG_ENV", "USER_SUBDIRS", "catalog_generation", "check_folders", "search_path",
           "use_catalog", "user_subdir"]

#: Environment variable holding user catalog folders, separated by ``os.pathsep``.
CATALOG_ENV = "TOKENOMICS_CATALOG"
#: Accepted names of the two subfolders of a user catalog folder (the first is documented).
USER_SUBDIRS = {"hardware": ("hardware", "hardware_catalog"),
                "models": ("models", "model_catalog")}
_state: dict[str, object] = {"folders": (), "catalog_generation": 0}


def check_folders(folders: Iterable[Path | str] | Path | str, origin: str) -> tuple[Path, ...]:
    """Resolve user catalog folders to absolute paths and check each one's layout.

    Parameters
    ----------
    folders : path or iterable of path
        The folders, as given.
    origin : str
        Where they came from, for messages (``"TOKENOMICS_CATALOG"``, ``"--catalog"``...).

    Returns
    -------
    tuple of pathlib.Path

    Raises
    ------
    CatalogError
        When a folder does not exist or holds neither ``hardware/`` nor ``models/``.
    """
    if isinstance(folders, (str, Path)):
        folders = [folders]
    out = []
    for raw in folders:
        if not isinstance(raw, (str, os.PathLike)):
            raise CatalogError(f"{origin}: a user catalog folder is a path (str or "
                               f"pathlib.Path), got {type(raw).__name__} {raw!r}")
        d = Path(raw).expanduser().resolve()
        if not d.is_dir():
            raise CatalogError(f"{origin}: user catalog folder {str(raw)!r} not found (a folder "
                               "holding hardware/*.toml and/or models/*.toml is expected)")
        if user_subdir(d, "hardware") is None and user_subdir(d, "models") is None:
            raise CatalogError(f"{origin}: user catalog folder {d} holds neither a hardware/ "
                               "nor a models/ folder (see docs/user-catalogs.md)")
        out.append(d)
    return tuple(out)


def user_subdir(folder: Path, kind: str) -> Path | None:
    """The ``"hardware"`` or ``"models"`` subfolder of a user catalog folder, or None.

    Raises
    ------
    CatalogError
        When both accepted names exist (``hardware/`` and ``hardware_catalog/``).
    """
    found = [folder / n for n in USER_SUBDIRS[kind] if (folder / n).is_dir()]
    if len(found) > 1:
        raise CatalogError(f"{folder}: both {found[0].name}/ and {found[1].name}/ exist; keep "
                           f"one ({USER_SUBDIRS[kind][0]}/)")
    return found[0] if found else None


def search_path() -> tuple[Path, ...]:
    """The user catalog folders read after the bundled catalogs, in order.

    First the folders of the ``TOKENOMICS_CATALOG`` environment variable (separated by
    ``os.pathsep``: ``:`` on POSIX, ``;`` on Windows), then those set by :func:`use_catalog`
    (the CLI's ``--catalog DIR``). A later folder may replace an earlier entry only where its
    file says ``overrides = true``.

    Returns
    -------
    tuple of pathlib.Path
        Absolute folders; empty when none is set.

    Raises
    ------
    CatalogError
        When a folder of the environment variable does not exist or holds neither
        ``hardware/`` nor ``models/``.

    Examples
    --------
    >>> import os
    >>> search_path() if not os.environ.get("TOKENOMICS_CATALOG") else ()
    ()
    """
    env = [s for s in os.environ.get(CATALOG_ENV, "").split(os.pathsep) if s.strip()]
    folders = _state["folders"]
    assert isinstance(folders, tuple)
    return check_folders(env, CATALOG_ENV) + folders


def use_catalog(*folders: Path | str) -> tuple[Path, ...]:
    """Set this process's user catalog folders (read after ``TOKENOMICS_CATALOG``'s).

    Parameters
    ----------
    *folders : path
        Folders holding ``hardware/*.toml`` and/or ``models/*.toml`` with their
        ``sources.toml`` (``docs/user-catalogs.md``); they replace the folders set before.
        No folder clears them. Either way the next lookup re-reads the files.

    Returns
    -------
    tuple of pathlib.Path
        The folders set before, so that ``use_catalog(*previous)`` restores them.

    Raises
    ------
    CatalogError
        When a folder does not exist or holds neither ``hardware/`` nor ``models/``; the
        files themselves are validated when the catalog is next read.

    Examples
    --------
    >>> import tokenomics as tk
    >>> previous = tk.use_catalog()       # no user folders: the bundled catalog only
    >>> tk.hardware("h100").id
    'h100-sxm'
    >>> _ = tk.use_catalog(*previous)
    """
    previous = _state["folders"]
    assert isinstance(previous, tuple)
    _state["folders"] = check_folders(folders, "use_catalog")
    _state["catalog_generation"] = catalog_generation() + 1
    return previous


def catalog_generation() -> int:
    """How many times :func:`use_catalog` was called: part of the catalog cache's key, so that
    a call re-reads edited files even where the folders are the same."""
    g = _state["catalog_generation"]
    assert isinstance(g, int)
    return g
