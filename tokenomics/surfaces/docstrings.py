"""Numpydoc docstrings as Markdown for the docs site: sections, math, cross-references.

The docstrings are numpydoc (reStructuredText inside); the site is MkDocs (Markdown). The
sections are parsed by numpydoc's own parser (``numpydoc.docscrape``, the docs extra) and
written as Markdown: parameters as lists of ``name`` (type): description, ``.. math::``
blocks and ``:math:`` roles as ``$$...$$`` and ``$...$`` (which the site's math hook renders
to MathML), ``:func:`x``` and the other roles as links to the documented name where the page builder
resolves it (:func:`linking`), else as code, double backticks as single,
``::`` literal blocks and Examples as code blocks. Without numpydoc the docstring is shown
as preformatted text.
"""

from __future__ import annotations

import inspect
import re
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager

_ROLE = re.compile(r":(?:func|class|mod|data|attr|meth|obj|exc|py:\w+):`~?([^`<]+?)(?:\s*<[^>]+>)?`")
_MATH_ROLE = re.compile(r":math:`([^`]+)`")
_SECTIONS = ("Parameters", "Attributes", "Returns", "Yields", "Receives", "Raises", "Warns",
             "Other Parameters")


#: Turns a role's target (``"tokenomics.decode"``, ``"steady_state"``) into the URL of its
#: documentation, or None; set by the page builder (:func:`linking`), None: roles are code.
_RESOLVE: list[Callable[[str], str | None]] = []


@contextmanager
def linking(resolve: Callable[[str], str | None]) -> Iterator[None]:
    """Within the block, cross-reference roles whose target ``resolve`` finds become links
    (``[`decode`](physics.step.md#decode)``); the others stay code."""
    _RESOLVE.append(resolve)
    try:
        yield
    finally:
        _RESOLVE.pop()


def _role(m: re.Match[str]) -> str:
    target = m.group(1).strip()
    label = "`" + target.split(".")[-1].rstrip("()") + "`"
    url = _RESOLVE[-1](target.rstrip("()")) if _RESOLVE else None
    return f"[{label}]({url})" if url else label


def inline(text: str) -> str:
    """One line of RST inline markup as Markdown.

    Examples
    --------
    >>> inline("see :func:`~tokenomics.decode` and ``batch``; :math:`B / t`")
    'see `decode` and `batch`; $B / t$'
    >>> with linking(lambda t: "physics.step.md#decode" if t.endswith("decode") else None):
    ...     inline("see :func:`~tokenomics.decode`")
    'see [`decode`](physics.step.md#decode)'
    """
    text = _MATH_ROLE.sub(lambda m: "$" + m.group(1) + "$", text)
    text = _ROLE.sub(_role, text)
    return text.replace("``", "`")


def block(lines: list[str]) -> str:
    """RST paragraphs as Markdown: ``.. math::`` as display math, ``::`` literal blocks and
    ``>>>`` sessions as code, ``.. [n]`` references as a numbered list.

    Examples
    --------
    >>> print(block([".. math:: a = b", "", "Text with ``x``."]))
    $$a = b$$
    <BLANKLINE>
    Text with `x`.
    """
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        s = line.strip()
        if s.startswith(".. math::"):
            body = [s[len(".. math::"):].strip()]
            i += 1
            while i < len(lines) and (not lines[i].strip() or lines[i].startswith((" ", "\t"))):
                body.append(lines[i].strip())
                i += 1
            tex = " ".join(b for b in body if b)
            out += [f"$${tex}$$", ""]
            continue
        if s.startswith(">>>"):
            code = []
            while i < len(lines) and lines[i].strip():
                code.append(lines[i].strip())
                i += 1
            out += ["```python", *code, "```", ""]
            continue
        if s.endswith("::") and not s.startswith(".."):
            out.append(inline(s[:-1].rstrip(":") + ":" if s != "::" else ""))
            i += 1
            code = []
            while i < len(lines) and (not lines[i].strip() or lines[i].startswith((" ", "\t"))):
                code.append(lines[i])
                i += 1
            out += ["```text", *inspect.cleandoc("\n".join(code)).splitlines(), "```", ""]
            continue
        ref = re.match(r"\.\. \[(\w+)\]\s*(.*)", s)
        if ref:
            out.append(f"{ref.group(1)}. {inline(ref.group(2))}")
        else:   # indentation means nothing in Markdown prose but "code" at four spaces
            out.append(("   " if out and re.match(r"\d+\. ", out[-1]) and s else "")
                       + inline(s))
        i += 1
    return "\n".join(out).strip()


def docstring_markdown(doc: str) -> str:
    """A numpydoc docstring as Markdown (module notes); preformatted text without numpydoc.

    Parameters
    ----------
    doc : str
        The raw docstring.

    Returns
    -------
    str
        Markdown.
    """
    text = inspect.cleandoc(doc or "")
    try:
        from numpydoc.docscrape import NumpyDocString
    except ImportError:   # pragma: no cover - the docs extra installs numpydoc
        return "```text\n" + text + "\n```"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            d = NumpyDocString(text)
        except Exception:  # noqa: BLE001 - an unparsable docstring is shown as it is
            return "```text\n" + text + "\n```"
    parts = [block(d["Summary"]), block(d["Extended Summary"])]
    for sec in _SECTIONS:
        items = d[sec]
        if items:
            parts.append(f"**{sec}**\n\n" + "\n".join(_item(p) for p in items))
    if d["See Also"]:
        names = ", ".join(f"`{n}`" for group, _desc in d["See Also"] for n, _role in group)
        parts.append(f"**See also**: {names}")
    for sec in ("Notes", "Warnings", "References"):
        if d[sec]:
            parts.append(f"**{sec}**\n\n" + block(d[sec]))
    if d["Examples"]:
        parts.append("**Examples**\n\n" + block(d["Examples"]))
    return "\n\n".join(p for p in parts if p)


def _item(p: object) -> str:
    name, kind, desc = p.name, p.type, p.desc      # numpydoc's Parameter
    head = f"`{name}`" + (f" ({inline(kind)})" if kind else "") if name else inline(kind)
    body = inline(" ".join(x.strip() for x in desc)) if desc else ""
    return f"- {head}" + (f": {body}" if body else "")
