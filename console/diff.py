"""Word-level differences between two texts, and between two nugget versions, for the
version history page (rendered by the templates, escaped like all other text)."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Any

_TOKENS = re.compile(r"\s+|[^\s]+")


@dataclass(frozen=True)
class Piece:
    """A run of text that is in both texts (``same``), only the new one (``added``) or
    only the old one (``removed``)."""

    kind: str
    text: str


def word_diff(old: str, new: str) -> list[Piece]:
    """The pieces that turn ``old`` into ``new``, word by word (whitespace kept)."""
    a, b = _TOKENS.findall(old), _TOKENS.findall(new)
    out: list[Piece] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            out.append(Piece("same", "".join(a[i1:i2])))
            continue
        if i2 > i1:
            out.append(Piece("removed", "".join(a[i1:i2])))
        if j2 > j1:
            out.append(Piece("added", "".join(b[j1:j2])))
    return out


@dataclass(frozen=True)
class FieldDiff:
    """One field of two versions: its label, whether it changed, and the word diff."""

    label: str
    changed: bool
    pieces: list[Piece]


def version_fields(n: Any) -> list[tuple[str, str]]:
    """The reviewable fields of a ``nuggetflow.v1.Nugget`` as (label, text)."""
    from console.views import validity_text

    f = n.fact
    return [
        ("Title", n.title), ("Body", n.body), ("Anchors", "\n".join(n.anchors)),
        ("Fact", f"{f.subject} | {f.predicate} | {f.object}"), ("Scope", f.scope),
        ("Validity", validity_text(n)), ("Publication", _enum_name(n, "publication")),
        ("State", _enum_name(n, "state")),
    ]


def _enum_name(n: Any, name: str) -> str:
    field = n.DESCRIPTOR.fields_by_name[name]
    value = field.enum_type.values_by_number.get(getattr(n, name))
    return value.name if value is not None else ""


def version_diff(old: Any, new: Any) -> list[FieldDiff]:
    """Field by field, what changed from version ``old`` to version ``new``."""
    out = []
    for (label, a), (_, b) in zip(version_fields(old), version_fields(new), strict=True):
        out.append(FieldDiff(label, a != b, word_diff(a, b)))
    return out
