"""Local reflector: revise from the failure trace itself (RePAIR), no error taxonomy.

For each failed probe it looks at the probe's words the nugget lacks, and at the
competitor that outranked it: what the competitor shares with the probe, and what sets it
apart. It then (1) rewrites the title around the action, the corrected value and the
scope, (2) adds one sentence that separates the nugget from the competitor, using only
words from the correction and the competitor's topic, and (3) adds anchors in the probes'
vocabulary. It never adds numbers, versions, roles or names (the guard checks it too).
"""

from __future__ import annotations

import re

from optimizer.accounting import Meter, estimate_tokens
from optimizer.local.lexicon import capitalize, content_terms, ensure_period, sentences, stem
from optimizer.local.lexicon import stems as stem_set
from optimizer.local.queries import VERBS
from optimizer.roles import ReflectionInput
from optimizer.types import NuggetDraft, Revision
from query.text import words

MAX_ANCHORS = 10
_CAPS = re.compile(r"\b[A-Z][\w-]*\b")


def _gerund(phrase: str) -> str:
    """'reset another user's password' -> 'resetting another user's password'."""
    parts = phrase.split()
    if not parts:
        return phrase
    verb = parts[0].lower()
    if verb.endswith("ing") or verb not in VERBS:
        return phrase
    if verb.endswith("e") and not verb.endswith("ee"):
        g = verb[:-1] + "ing"
    elif (len(verb) >= 3 and verb[-1] not in "aeiouwxy" and verb[-2] in "aeiou"
          and verb[-3] not in "aeiou" and verb not in ("open", "edit", "visit", "enter", "offer")):
        g = verb + verb[-1] + "ing"
    else:
        g = verb + "ing"
    return " ".join([g, *parts[1:]])


def _confusable(topic: str, context: str) -> bool:
    """True when a competitor's topic is mostly in the correction's own words: a near
    miss worth telling apart ("resetting your own password" against a correction about
    resetting another user's). Spelling out an unrelated competitor's topic in the nugget
    would only make the nugget match that topic's queries."""
    own = stem_set(topic)
    return bool(own) and len(own & stem_set(context)) / len(own) > 0.5


def _topic(title: str, context: str) -> str:
    """A competitor's topic in lower case, without names the correction never used."""
    ctx = {w.lower() for w in words(context)}
    kept = [w for i, w in enumerate(title.split())
            if i == 0 or not (_CAPS.fullmatch(w.strip(".,:;()"))
                              and w.lower().strip(".,:;()") not in ctx)]
    return " ".join(kept).lower().strip(" .:;")


_QUESTION_HEAD = re.compile(
    r"^(?:how (?:do|can|should) (?:i|we|you)|how to|why (?:can't|cannot|doesn't|won't|isn't)"
    r"(?: (?:my|the|our|i))?|what is|where (?:do|can) (?:i|we)|where is|can (?:i|we)|"
    r"is it possible to)\s+", re.IGNORECASE)


def _q0_phrase(q0: str) -> str:
    """The trigger query as a heading: question words and the question mark removed."""
    return capitalize(_QUESTION_HEAD.sub("", q0.strip().rstrip("?").strip()))


_SYMPTOMS = ("isn't working", "not working", "doesn't work", "is greyed out", "greyed out",
             "is missing", "missing", "fails", "is disabled", "won't work")


def _symptom(queries: list[str]) -> str:
    """The first symptom wording the failed probes use ("isn't working", ...)."""
    for q in queries:
        low = q.lower()
        for s in _SYMPTOMS:
            if s in low:
                return s if s.startswith(("is", "isn't", "not", "does", "won't")) or \
                    " " in s else f"is {s}"
    return "does not work"


class LocalReflector:
    """Deterministic reflector (see the module docstring)."""

    def revise(self, inp: ReflectionInput, meter: Meter) -> Revision:
        """A revised draft plus the edits, from the failed probes of ``inp``."""
        meter.check("reflector")
        draft, ex = inp.draft, inp.extraction
        failed = [p for p in inp.probes if not p.passed]
        edits: list[str] = []
        subject = ex.subject or " ".join(content_terms(inp.q0)[:5])
        action = _gerund(subject)
        scope = f" ({ex.scope})" if ex.scope and ex.scope != "global" else ""
        ctx_stems = {stem(w) for w in content_terms(inp.correction_context)}

        # Probe words the nugget lacks; those the correction context also uses may go into
        # the title, the rest only into anchors.
        have = {stem(w) for w in content_terms(draft.text())}
        missing: list[str] = []
        for p in failed:
            for w in content_terms(p.query):
                if stem(w) not in have and w not in missing:
                    missing.append(w)
        place = next((m for m in re.findall(r"\b(?:from|in|on) the ([a-z-]+ [a-z-]+)\b",
                                            inp.q0.lower())), "")
        where = f" from the {place}" if place and place not in draft.title.lower() else ""
        if ex.predicate == "allowed_role":
            title = f"{capitalize(action)}{where} is restricted to the {ex.object}{scope}"
        else:
            # A bare subject ("wallpaper") reads better, and is found more often, in the
            # trigger query's own words ("Change the desktop wallpaper").
            head = _q0_phrase(inp.q0)
            if not stem_set(subject) <= stem_set(head):
                head = capitalize(action)
            title = f"{head}: {ex.object}{scope}"
        if title != draft.title:
            edits.append(f"title: {draft.title!r} -> {title!r}")

        body_sents = sentences(draft.body)
        competitors = [c for p in failed for c in p.competitors[:1]]
        contrast = ""
        if competitors:
            topic = _topic(competitors[0].title, inp.correction_context)
            symptom = _symptom([p.query for p in failed])
            if topic and topic not in draft.body.lower() and _confusable(
                    topic, inp.correction_context):
                # Symptom wording and the competitor's topic: no facts, only the words that
                # tell a reader (and the ranker) which situation this nugget is about.
                contrast = ensure_period(
                    f"If {action} {symptom}, this is why; it does not concern {topic}")
        if contrast:
            body_sents = [*[b for b in body_sents if not b.startswith("If ")][:2], contrast]
            edits.append(f"body: added contrast {contrast!r}")
        body = " ".join(body_sents)

        anchors = list(draft.anchors)
        if missing:
            terms = " ".join(missing[:6])
            new = f"{terms} - {subject}"
            if new not in anchors:
                anchors.append(new)
                edits.append(f"anchor+: {new!r}")
        for c in competitors[:2]:
            topic = _topic(c.title, inp.correction_context)
            if topic and _confusable(topic, inp.correction_context):
                new = f"{subject} vs {topic}"
                if new not in anchors:
                    anchors.append(new)
                    edits.append(f"anchor+: {new!r}")
        in_context = [w for w in missing if stem(w) in ctx_stems]
        if in_context:
            new = f"{' '.join(in_context[:5])} {subject}{scope}"
            if new not in anchors:
                anchors.append(new)
                edits.append(f"anchor+: {new!r}")
        anchors = anchors[-MAX_ANCHORS:]
        revised = NuggetDraft(title, body, tuple(anchors))
        meter.record("reflector", estimate_tokens(draft.text(), *(p.query for p in failed)),
                     estimate_tokens(revised.text()), estimated=True)
        return Revision(revised, tuple(edits))
