"""Local reflector: revise from the failure trace itself (RePAIR), no error taxonomy.

Discoverability work goes into anchors: search keys the retriever matches and the
generator never reads. For the failed probes the reflector adds

1. the probes' words the nugget lacks, next to the words of its topic (so a user who
   says "greyed out" or "isn't working" meets the nugget);
2. where a competitor that outranked the nugget is a near miss (its topic mostly in the
   correction's own words: "resetting your own password" against a correction about
   resetting another user's), an anchor that puts the two apart;
3. the correction's own words the failed probes used, with the scope.

The title and body keep the user's words: a body is what the generator reads as fact,
so the reflector never writes sentences into it. It may reorder the body's sentences so
that the one the failed probes ask about comes first, when no sentence leans on the one
before it ("It", "They", "This"), and it may title the nugget with the correction's own
first statement instead of the trigger query when that statement shares more words with
the failed probes.
"""

from __future__ import annotations

import re

from optimizer.accounting import Meter, estimate_tokens
from optimizer.claims import split_sentences
from optimizer.lexicon import content_terms, stem
from optimizer.lexicon import stems as stem_set
from optimizer.local.titles import task_of
from optimizer.roles import ReflectionInput
from optimizer.types import NuggetDraft, Revision
from query.text import words

MAX_ANCHORS = 10
_CAPS = re.compile(r"\b[A-Z][\w-]*\b")
_LEANS_BACK = re.compile(r"^(?:it|its|it's|they|they're|this|that|these|those|there|then|"
                         r"also|and|but|so)\b", re.IGNORECASE)


#: A pronoun anywhere in a sentence that may stand for something an earlier one names.
_POINTS_BACK = re.compile(r"\b(?:it|its|them|they|their|there|this one|that one)\b",
                          re.IGNORECASE)


def _confusable(topic: str, context: str) -> bool:
    """True when a competitor's topic is mostly in the correction's own words: a near
    miss worth telling apart. Spelling out an unrelated competitor's topic would only
    make the nugget match that topic's queries."""
    own = stem_set(topic)
    return bool(own) and len(own & stem_set(context)) / len(own) > 0.5


def _topic(title: str, context: str) -> str:
    """A competitor's topic in lower case, without names the correction never used."""
    ctx = {w.lower() for w in words(context)}
    kept = [w for i, w in enumerate(title.split())
            if i == 0 or not (_CAPS.fullmatch(w.strip(".,:;()"))
                              and w.lower().strip(".,:;()") not in ctx)]
    return " ".join(kept).lower().strip(" .:;")


def _reorder(body: str, queries: list[str]) -> str:
    """The body with the sentence the queries share most words with first, unless a
    sentence refers back to the one before it (then the order stays)."""
    sents = split_sentences(body)
    if len(sents) < 2 or any(_LEANS_BACK.match(s) for s in sents[1:]):
        return body
    want = stem_set(" ".join(queries))
    best = max(range(len(sents)), key=lambda i: (len(stem_set(sents[i]) & want), -i))
    if best == 0 or not stem_set(sents[best]) & want or _POINTS_BACK.search(sents[best]):
        return body  # ("Laptops must never join it": "it" is named before, so it stays after)
    return " ".join([sents[best], *sents[:best], *sents[best + 1:]])


MAX_STATEMENT_WORDS = 16


def _statement_title(body: str) -> str:
    """The body's first claim as a title: its first sentence, cut at a semicolon or
    colon when longer than MAX_STATEMENT_WORDS, or "" when no clause is short enough."""
    sents = split_sentences(body)
    if not sents or _LEANS_BACK.match(sents[0]):
        return ""
    first = sents[0].rstrip(".!")
    if len(first.split()) > MAX_STATEMENT_WORDS:
        first = re.split(r"\s*[;:]\s+", first)[0]
    return first if 4 <= len(first.split()) <= MAX_STATEMENT_WORDS else ""


class LocalReflector:
    """Deterministic reflector (see the module docstring)."""

    def revise(self, inp: ReflectionInput, meter: Meter) -> Revision:
        """A revised draft plus the edits, from the failed probes of ``inp``."""
        meter.check("reflector")
        draft, ex = inp.draft, inp.extraction
        failed = [p for p in inp.probes if not p.passed]
        edits: list[str] = []
        topic = task_of(inp.q0) or " ".join(content_terms(inp.q0)[:5])
        scope = f" {ex.scope}" if ex.scope and ex.scope != "global" else ""
        ctx_stems = {stem(w) for w in content_terms(inp.correction_context)}

        have = {stem(w) for w in content_terms(draft.text())}
        missing: list[str] = []
        for p in failed:
            for w in content_terms(p.query):
                if stem(w) not in have and w not in missing:
                    missing.append(w)

        anchors = list(draft.anchors)

        def add(anchor: str, why: str) -> None:
            anchor = " ".join(anchor.split())
            if anchor and anchor not in anchors:
                anchors.append(anchor)
                edits.append(f"anchor+ ({why}): {anchor!r}")

        if missing:
            add(f"{' '.join(missing[:6])} {topic}", "words of the failed probes")
        for c in [c for p in failed for c in p.competitors[:1]][:2]:
            other = _topic(c.title, inp.correction_context)
            if other and _confusable(other, inp.correction_context) and \
                    stem_set(other) != stem_set(topic):
                add(f"{topic} not {other}", f"told apart from {c.title!r}")
        in_context = [w for w in missing if stem(w) in ctx_stems]
        if in_context:
            add(f"{' '.join(in_context[:5])} {topic}{scope}", "the correction's own words")
        anchors = anchors[-MAX_ANCHORS:]

        title = draft.title
        statement = _statement_title(draft.body)
        want = stem_set(" ".join(p.query for p in failed))
        if statement and len(stem_set(statement) & want) > len(stem_set(title) & want):
            title = statement
            edits.append(f"title: {draft.title!r} -> {title!r} (the correction's own "
                         "statement, closer to the failed probes)")
        body = _reorder(draft.body, [p.query for p in failed])
        if body != draft.body:
            edits.append("body: sentences reordered, the one the failed probes ask about "
                         "first")
        revised = NuggetDraft(title, body, tuple(anchors))
        meter.record("reflector", estimate_tokens(draft.text(), *(p.query for p in failed)),
                     estimate_tokens(revised.text()), estimated=True)
        return Revision(revised, tuple(edits))
