"""Result figures inside the docs' prose, rendered from ``results/numbers.json`` and checked against it.

A figure in a sentence is written ``<!-- n:KIND attr=value ... -->VALUE<!-- /n -->`` on one line;
its kind and attributes are one lookup of :mod:`cookproc.evaluation.lookups` (the list of kinds is
there), and every kind also takes ``digits=`` and ``thousands=,`` (4,004 rather than 4004; a
percentage's "%" stays outside the marker). A value carries no stamp: a document with values holds
a ``<!-- numbers:stamp -->`` block (the run they come from), which
:func:`cookproc.evaluation.render.lint_text` requires. A marker quoted in backticks is an example,
not a value.
"""
from __future__ import annotations

import re
from typing import Mapping

from cookproc.core.formatting import format_number
from cookproc.evaluation.lookups import KINDS, BlockError, lookup, parse_attrs

INLINE = re.compile(r"(?<!`)(?P<marker><!-- n:(?P<kind>[a-z0-9-]+)(?P<attrs>[^>\n]*?)\s*-->)"
                    r"(?P<value>[^<\n]*)<!-- /n -->")
OPENED = re.compile(r"(?<!`)<!-- n:")
#: The attributes every kind takes besides its own.
FORMAT_ATTRS = ("digits", "thousands")


def value_attrs(kind: str, attrs: str) -> dict[str, str]:
    """A value's attributes, checked against its kind (unknown kinds and attributes are errors)."""
    if kind not in KINDS:
        raise BlockError(f"unknown value kind {kind!r}; known: {sorted(KINDS)}")
    parsed = parse_attrs(attrs)
    known = (*KINDS[kind].attrs, *FORMAT_ATTRS)
    unknown = sorted(set(parsed) - set(known))
    if unknown:
        raise BlockError(f"unknown attributes {unknown} of a {kind} value; known: {list(known)}")
    for key in KINDS[kind].attrs[:KINDS[kind].required]:
        if key not in parsed:
            raise BlockError(f"a {kind} value needs {key}=...")
    if parsed.get("thousands", ",") != ",":
        raise BlockError(f"thousands={parsed['thousands']}: the separator is ',' (thousands=,)")
    return parsed


def render_value(kind: str, attrs: str, numbers: Mapping) -> str:
    parsed = value_attrs(kind, attrs)
    value, digits = lookup(numbers, kind, **{k: v for k, v in parsed.items() if k not in FORMAT_ATTRS})
    return format_number(value, int(parsed.get("digits", digits)), thousands="thousands" in parsed)


def substitute(text: str, matches: list[re.Match], group: str, render, where) -> str:
    """``text`` with the ``group`` of each match replaced by ``render(match)``; a BlockError is
    raised again prefixed by ``where(match)`` (values here, blocks in cookproc.evaluation.render)."""
    out, end = [], 0
    for match in matches:
        try:
            rendered = render(match)
        except BlockError as exc:
            raise BlockError(f"{where(match)}: {exc}") from None
        out += [text[end:match.start(group)], rendered]
        end = match.end(group)
    return "".join(out) + text[end:]


def values(text: str) -> list[re.Match]:
    return list(INLINE.finditer(text))


def _where(name: str, text: str, match: re.Match) -> str:
    return f"{name}, line {text.count(chr(10), 0, match.start()) + 1}, value {match['marker']}"


def render_values(text: str, numbers: Mapping, name: str = "<text>") -> str:
    """``text`` with every value rendered from ``numbers``."""
    return substitute(text, values(text), "value", lambda m: render_value(m["kind"], m["attrs"], numbers),
                      lambda m: _where(name, text, m))


def check_values(text: str, numbers: Mapping, name: str = "<text>") -> list[str]:
    """One message per value that differs from its rendering (or cannot be rendered)."""
    problems = []
    for match in values(text):
        try:
            expected = render_value(match["kind"], match["attrs"], numbers)
        except BlockError as exc:
            problems.append(f"{_where(name, text, match)}: {exc}")
            continue
        if match["value"] != expected:
            problems.append(f"{_where(name, text, match)}: is {match['value']!r}, the numbers file gives {expected!r}")
    return problems


def lint_values(text: str, name: str = "<text>") -> list[str]:
    """Problems of a document's values that need no numbers file: each marker closed on its line,
    a known kind and attributes, and a value between the markers."""
    problems, found = [], values(text)
    closed = {m.start() for m in found}
    for opened in OPENED.finditer(text):
        if opened.start() not in closed:
            line = text.count("\n", 0, opened.start()) + 1
            problems.append(f"{name}, line {line}: a value marker {text[opened.start():].splitlines()[0][:60]!r} "
                            "is not closed by '<!-- /n -->' on its line")
    for match in found:
        try:
            value_attrs(match["kind"], match["attrs"])
        except BlockError as exc:
            problems.append(f"{_where(name, text, match)}: {exc}")
        if not match["value"].strip():
            problems.append(f"{_where(name, text, match)}: no value between the markers")
    return problems
