"""Factual-preservation guard: a revision may reword, never add facts.

A revision is rejected when its title or body mentions a number, version, role or named
entity that is absent from the correction context (feedback, trigger query, corrected
answer, the extracted nugget), or when it drops the corrected value itself. Anchors are
queries, not claims: they may also use the probe queries' wording, nothing else.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from optimizer.claims import WORD_NUMBER, number_value
from optimizer.lexicon import ROLE_WORDS, VERSION
from optimizer.types import NuggetDraft
from query.model import Nugget
from query.text import words

# (not a number that starts inside a version: "v4.2.0" holds no "2.0" of its own)
_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*\b")
_CAPWORD = re.compile(r"\b[A-Z][a-zA-Z0-9-]+\b")
_SENT_START = re.compile(r"(?:^|[.!?:;(]\s*|\n)\s*$")


def _entities(text: str) -> set[str]:
    """Capitalized words that are not sentence-initial (title-cased text is skipped)."""
    tokens = text.split()
    if tokens and sum(t[:1].isupper() for t in tokens) / len(tokens) >= 0.6:
        return set()
    out = set()
    for m in _CAPWORD.finditer(text):
        if _SENT_START.search(text[: m.start()]):
            continue
        out.add(m.group(0).lower())
    return out


def factual_tokens(text: str) -> set[str]:
    """Numbers, versions, role words and named entities mentioned in text (lowercased)."""
    found = {m.group(0).lower() for m in VERSION.finditer(text)}
    found |= {m.group(0) for m in _NUMBER.finditer(text)}
    for w in words(text):
        w = w.removesuffix("'s")
        if w in ROLE_WORDS:
            found.add(w.removesuffix("s") if w.endswith("s") and w[:-1] in ROLE_WORDS else w)
    found |= _entities(text)
    return found


@dataclass(frozen=True)
class GuardVerdict:
    """Whether a revision may be used, and why not."""

    ok: bool
    violations: tuple[str, ...] = ()


_NUM = re.compile(r"\d+(?:\.\d+)*")


def _novel(token: str, allowed: set[str]) -> bool:
    """A token is new when a word or a whole number in it is not allowed.

    "middle-click" is known when "middle" and "click" are; "version 46" and "v46" when
    "46" is (a whole number: "8.3" is not allowed by "8.2" and "3"; "10.20.0" is by
    "10.20.0.1", whose leading parts it is).
    """
    low = token.lower()
    numbers = _NUM.findall(low)
    letters = re.findall(r"[a-z]+", _NUM.sub(" ", low))
    letters = [w for w in letters if w not in ("v", "version")]
    # (the leading parts of a dotted number the context has are its: "10.20.0" read out of
    # "10.20.0.1NN", a placeholder address, where the context's reader took "10.20.0.1")
    return any(n not in allowed and not any(a.startswith(n + ".") for a in allowed)
               for n in numbers) or any(w not in allowed for w in letters)


def check_revision(revision: NuggetDraft, context: str, obj: str,
                   probe_queries: Iterable[str] = ()) -> GuardVerdict:
    """Reject a revision that adds facts (or drops the corrected value)."""
    allowed = {v for w in re.findall(r"[a-z]+", context.lower())
               for v in (w, w.removesuffix("s"))}
    allowed |= set(_NUM.findall(context)) | set(re.findall(r"\d+", context))
    # (a number the writer spelled out allows its digits: "thirty minutes" -> "30")
    allowed |= {str(n) for m in re.finditer(r"\b" + WORD_NUMBER + r"\b", context,
                                             re.IGNORECASE)
                if (n := number_value(m.group(0))) is not None}
    violations: list[str] = []
    claims = f"{revision.title}\n{revision.body}"
    for tok in sorted(t for t in factual_tokens(claims) if _novel(t, allowed)):
        violations.append(f"title/body introduces {tok!r}")
    query_words = {w for q in probe_queries
                   for w in (*re.findall(r"[a-z]+", q.lower()), *_NUM.findall(q))}
    anchor_tokens = factual_tokens("\n".join(revision.anchors))
    for tok in sorted(t for t in anchor_tokens if _novel(t, allowed | query_words)):
        violations.append(f"anchor introduces {tok!r}")
    if obj and obj.lower() not in claims.lower():
        violations.append(f"the corrected value {obj!r} is no longer stated")
    return GuardVerdict(not violations, tuple(violations))


def edit_context(original: Nugget) -> str:
    """The correction context of a stored nugget: what its facts may come from (the
    trigger query, the corrected answer, the feedback, and the nugget as extracted)."""
    p = original.provenance
    return "\n".join([p.trigger_query, p.corrected_answer, p.feedback_text, original.title,
                      original.body, original.fact.subject, original.fact.object])


def check_edit(original: Nugget, edited: Nugget) -> list[str]:
    """The guard on a reviewer's edit (EditNugget): ``edited`` may reword ``original``
    (the lineage's first version, with its provenance), never add a number, version, role
    or name absent from the correction context, and must still state its fact's value.
    Anchors may also use the words of INO's probe queries. Returns the violations."""
    probes = [str(q) for q in (original.optimization or {}).get("probes", ())]
    verdict = check_revision(NuggetDraft(edited.title, edited.body, edited.anchors),
                             edit_context(original), edited.fact.object, probes)
    return list(verdict.violations)
