"""Check a built site: math rendered, figures present, no raw markup (run after mkdocs build).

    python docs/hooks/check_site.py SITE_DIR

Exits 1 naming each failure: a page whose TeX was left raw (``$`` around TeX, ``.. math::``,
``:func:``), a paragraph broken by a formula that began a source line, a cross-reference
whose page or heading is missing, an ``<img>`` whose file is missing, a script or stylesheet loaded from the
network (the build must work offline), or a sample page without its MathML.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

#: Pages that must carry rendered formulas.
MATH_PAGES = ("physics/index.html", "generated/api/physics.formulas/index.html",
              "generated/api/serving.batching/index.html")
#: Pages that must show figures.
FIGURE_PAGES = ("generated/calibration/index.html", "generated/gallery/index.html")
_RAW = re.compile(r"\.\. math::|:(?:func|class|mod|data|attr|meth):`|\$\$")
#: TeX left between single dollars: a backslash, a sub- or superscript or a brace inside
#: ``$...$`` (prices such as "$4.54 and $5" carry none of them)
_RAW_TEX = re.compile(r"(?<![\\$\w])\$(?=\S)[^$\n]{1,200}?[\\^_{][^$\n]{0,200}?(?<=\S)\$(?![\w$])")
#: Inline math that is not inside a paragraph, list item or cell: a line that began with a
#: formula and broke its paragraph in two
_STRAY_INLINE = re.compile(r'</p>\s*<math[^>]*display="inline"|^<math[^>]*display="inline"',
                           re.M)


def _text(html: str) -> str:
    html = re.sub(r"<(pre|code|script|style)\b.*?</\1>", "", html, flags=re.S)
    return re.sub(r"<[^>]+>", "", html)


def check(site: Path) -> list[str]:
    errors = []
    for rel in MATH_PAGES:
        page = site / rel
        if not page.exists():
            errors.append(f"{rel}: missing")
        elif "<math" not in page.read_text(encoding="utf-8"):
            errors.append(f"{rel}: no rendered formula (<math>)")
    for rel in FIGURE_PAGES:
        page = site / rel
        if not page.exists() or "<img" not in page.read_text(encoding="utf-8"):
            errors.append(f"{rel}: no figure")
    for page in site.rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        text = _text(html)
        raw = _RAW.search(text) or _RAW_TEX.search(text)
        if raw:
            errors.append(f"{page.relative_to(site)}: raw markup {raw.group(0)[:60]!r}")
        stray = len(_STRAY_INLINE.findall(html))
        if stray:
            errors.append(f"{page.relative_to(site)}: {stray} inline formulas outside their "
                          f"paragraph (a line that starts with $...$ broke it)")
        for url in re.findall(r'<(?:script|link)[^>]+(?:src|href)="(https?://[^"]+)"', html):
            errors.append(f"{page.relative_to(site)}: loads {url} (the site must work offline)")
        for rel, anchor in re.findall(r'href="\.\./([\w.]+)/#([\w\-]+)"', html):
            target = page.parent.parent / rel / "index.html"
            if not target.exists() or f'id="{anchor}"' not in target.read_text(
                    encoding="utf-8"):
                errors.append(f"{page.relative_to(site)}: link to {rel}/#{anchor} has no "
                              f"target")
        for src in re.findall(r'<img[^>]+src="([^"]+)"', html):
            if not src.startswith(("http:", "https:", "data:")) and \
                    not (page.parent / src).resolve().exists():
                errors.append(f"{page.relative_to(site)}: image {src} missing")
    return errors


if __name__ == "__main__":
    problems = check(Path(sys.argv[1]))
    for p in problems:
        print(p, file=sys.stderr)
    sys.exit(1 if problems else 0)
