"""MkDocs hook: TeX between ``$...$`` and ``$$...$$`` rendered to MathML at build time.

Browsers draw MathML natively (Chromium 109+, Firefox, Safari), so the site needs no
JavaScript and no network to show its formulas: the offline build renders math. Code blocks
and inline code are left alone. The conversion is latex2mathml's (docs extra).
"""

from __future__ import annotations

import re

_CODE = re.compile(r"(```.*?```|`[^`\n]*`)", re.S)
# inline math as pandoc reads it: the opening $ followed by a non-space, the closing one
# preceded by a non-space and not followed by a digit (so "$4.54 ... $5" is not math); it
# may run over a line break but not a blank line
_MATH = re.compile(r"\$\$(.+?)\$\$|(?<![\\$\w])\$(?=\S)((?:[^$\n]|\n(?!\s*\n))+?)(?<=\S)\$(?![\w$])",
                   re.S)


def render(markdown: str) -> str:
    """Every math span of ``markdown`` outside code as MathML (display or inline)."""
    from latex2mathml.converter import convert

    def one(m: re.Match[str]) -> str:
        display = m.group(1) is not None
        tex = (m.group(1) or m.group(2)).strip()
        html = convert(tex, display="block" if display else "inline")
        # inline math stays inside its paragraph: Python-Markdown counts <math> among the
        # block-level tags, so a line that began with one would end the paragraph there
        return f"\n\n{html}\n\n" if display else f'<span class="math">{html}</span>'


    parts = _CODE.split(markdown)
    return "".join(p if i % 2 else _MATH.sub(one, p) for i, p in enumerate(parts))


def on_page_markdown(markdown: str, **kwargs: object) -> str:
    return render(markdown)
