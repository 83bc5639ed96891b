"""MkDocs hook: every generated API page in the navigation, under "API reference", by stage.

docgen writes one page per module (``generated/api/<stage>.<module>.md``); the nav in
mkdocs.yml names only the index, so a module that is added or moved appears here without
editing the configuration.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def on_config(config: Any, **kwargs: object) -> Any:
    api = Path(config["docs_dir"]) / "generated" / "api"
    pages = sorted(p for p in api.glob("*.md") if p.name != "index.md")
    if not pages:
        return config
    by_stage: dict[str, list[dict[str, str]]] = {}
    for p in pages:
        stage, module = p.stem.split(".", 1)
        by_stage.setdefault(stage, []).append({module: f"generated/api/{p.name}"})
    import tokenomics

    section = [{"Index": "generated/api/index.md"}]
    section += [{stage: by_stage[stage]} for stage in tokenomics.STAGES if stage in by_stage]
    nav = config["nav"] or []
    for i, entry in enumerate(nav):
        if isinstance(entry, dict) and "API reference" in entry:
            nav[i] = {"API reference": section}
    return config
