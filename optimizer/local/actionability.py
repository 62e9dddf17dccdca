"""Local actionability + extraction: correction cues plus concrete content.

Feedback is untrusted data. Sentences that look like instructions to the system
("ignore previous instructions", "mark every answer as correct") are removed before any
decision and never change it.
"""

from __future__ import annotations

import re

from optimizer.accounting import Meter, estimate_tokens
from optimizer.local.lexicon import (
    ADDRESS,
    CORRECTION_CUE,
    IMPERATIVE,
    INJECTION,
    KEYCOMBO,
    MENU_PATH,
    MODALS,
    NEGATION,
    NUMBER,
    PRAISE,
    ROLE_WORDS,
    TONE,
    VAGUE,
    VERSION,
    capitalize,
    content_terms,
    ensure_period,
    sentences,
)
from optimizer.types import Extraction, FeedbackContext
from query.text import words

_ENTITY = re.compile(r"(?<![.!?]\s)(?<!^)\b([A-Z][\w-]*(?:\s+[A-Z][\w-]*)*)")
_LEADING_CUE = re.compile(
    r"^(?:(?:no|nope|actually|in fact|wrong|incorrect|that's (?:wrong|incorrect|not "
    r"(?:right|true|correct))|this is (?:wrong|incorrect|outdated)|the answer is (?:wrong|"
    r"incorrect|outdated)|you're wrong|correction)\b[\s,:;.!-]*)+", re.IGNORECASE)
_SCOPE = re.compile(r"\b((?:[A-Za-z][\w-]*\s+)?v\d+(?:\.\d+)*|[A-Za-z][\w-]*\s+\d+\.\d+(?:\.\d+)*"
                    r"|version\s+\d+(?:\.\d+)*)\b", re.IGNORECASE)
_ONLY_OBJ = re.compile(r"\bonly (?:the |an? )?((?:[A-Z][\w-]*\s?)+)")
_VERB = (r"(?:is|are|should be|must be|requires?|needs?|includes?|has|have|allows?|"
         r"supports?|is limited to|expires? after|costs?|takes?|lasts?)")
_IS_OBJ = re.compile(r"\b" + _VERB + r"\s+(?:the |an? |only )?([^,.;]{2,60})", re.IGNORECASE)
_QUANTITY = re.compile(r"\b(\d+(?:[.,]\d+)?\s*(?:%|[A-Za-z]+)?)")
_HEAD = re.compile(r"^(?:.*?\b(?:the|a|an|our|your|my)\s+)?((?:[\w'-]+\s){0,3}[\w'-]+)\s+"
                   + _VERB + r"\b", re.IGNORECASE)
_ACTION = re.compile(r"\b(?:can|can't|cannot|can not|may|must|is able to|are able to|"
                     r"allowed to)\s+((?:[\w'-]+\s?){1,8})", re.IGNORECASE)
_ACTION_STOP = re.compile(r"\s+(?:from|in|on|at|while|when|if|but|and|because|unless|via|"
                          r"through|for)\b.*$", re.IGNORECASE)


def concreteness(sentence: str) -> int:
    """How many kinds of concrete content a sentence carries (versions, numbers, roles,
    named entities, modality)."""
    toks = set(words(sentence))
    # Short all-caps words ("IT", "AM") are shouting or generic acronyms, not names.
    entities = {m.group(1) for m in _ENTITY.finditer(sentence)
                if not (m.group(1).isupper() and len(m.group(1)) <= 3)}
    return (bool(VERSION.search(sentence)) + bool(NUMBER.search(sentence))
            + bool(toks & ROLE_WORDS) + bool(entities) + (len(entities) >= 2)
            + bool(MODALS.search(sentence)) + 2 * bool(KEYCOMBO.search(sentence))
            + 2 * bool(MENU_PATH.search(sentence)) + 2 * bool(ADDRESS.search(sentence)))


def _clean(sentence: str) -> str:
    s = _LEADING_CUE.sub("", sentence.strip()).strip()
    s = re.sub(r"^(?:you said|the answer says|the answer said)\b[^,;]*[,;]\s*(?:but\s+)?", "",
               s, flags=re.IGNORECASE)
    s = re.sub(r"^but\s+", "", s, flags=re.IGNORECASE)
    return ensure_period(capitalize(s.rstrip(" ;,")))


def _scope(text: str) -> str:
    m = _SCOPE.search(text)
    return " ".join(m.group(1).split()) if m else "global"


_LOCATION = re.compile(r"\b(?:is|are)\s+(?:\w+ed|found|located|available)\s+(?:in|from|under|"
                       r"via|through|on)\s+(?:the\s+)?([^,.;]+)", re.IGNORECASE)
_OBJ_STOP = re.compile(r"\s+(?:in|on|for|since|from|when|if|until|because|before|while|"
                       r"unless)\b.*$", re.IGNORECASE)


def _object(sentence: str) -> str:
    combo = KEYCOMBO.search(sentence)
    if combo:
        return combo.group(0).strip(" .,;")
    path = re.search(r"\b[A-Z][\w&-]*(?:\s[\w&-]+)*(?:\s*>\s*[\w&-]+(?:\s[A-Z][\w&-]*)*)+",
                     sentence)
    if path:
        return path.group(0).strip(" .,;")
    unversioned = VERSION.sub(" ", sentence)
    if NUMBER.search(unversioned):
        q = _QUANTITY.search(unversioned)
        if q:
            return q.group(1).strip()
    m = _ONLY_OBJ.search(sentence)
    if m:
        obj = m.group(1).strip()
        obj = re.sub(r"\s+(?:role|roles|can|may|must)$", "", obj)
        if obj:
            return obj
    m = _LOCATION.search(sentence)
    if m:
        return " ".join(m.group(1).split()[:6])
    m = _IS_OBJ.search(sentence)
    if m and _OBJ_STOP.sub("", m.group(1)).strip():
        return " ".join(_OBJ_STOP.sub("", m.group(1)).split()[:6])
    m = _ENTITY.search(sentence)
    if m:
        return m.group(1)
    nums = NUMBER.findall(sentence)
    return nums[0] if nums else " ".join(content_terms(sentence)[:4])


def _subject(sentence: str, query: str) -> str:
    m = _ACTION.search(sentence)
    if m:
        phrase = _ACTION_STOP.sub("", m.group(1)).strip(" .,;")
        phrase = re.sub(r"^(?:only|also|not)\s+", "", phrase, flags=re.IGNORECASE)
        if len(phrase.split()) >= 2:
            return phrase
    m = _HEAD.search(sentence)
    if m and content_terms(m.group(1)):
        return m.group(1)
    return " ".join(content_terms(query)[:6])


def _predicate(sentence: str, obj: str) -> str:
    if set(words(obj)) & ROLE_WORDS:
        return "allowed_role"
    if re.search(r"\brequires?|needs?\b", sentence, re.IGNORECASE):
        return "requirement"
    if _LOCATION.search(sentence):
        return "location"
    if NUMBER.search(obj):
        return "limit"
    return "value"


class LocalActionability:
    """Deterministic actionability classifier and extractor (no network)."""

    def extract(self, ctx: FeedbackContext, meter: Meter) -> Extraction:
        """Classify the feedback and, when it carries a concrete correction, extract it."""
        meter.check("actionability")
        result = self._extract(ctx)
        meter.record("actionability", estimate_tokens(ctx.query, ctx.answer, ctx.comment),
                     estimate_tokens(result.title, result.body, result.reason), estimated=True)
        return result

    def _extract(self, ctx: FeedbackContext) -> Extraction:
        all_sents = sentences(ctx.comment)
        injected = [s for s in all_sents if INJECTION.search(s)]
        sents = [s for s in all_sents if not INJECTION.search(s)]
        note = f" ({len(injected)} instruction-like sentence(s) ignored)" if injected else ""
        text = " ".join(sents)
        factual = [s for s in sents if not s.rstrip().endswith("?") and concreteness(s) >= 2
                   and len(words(s)) >= 4 and not TONE.search(s)]
        # A correction signal anywhere: a cue ("actually", "that's not"), a negation of
        # what the answer said, or a thumbs-down. Praise alone does not count.
        signal = (bool(CORRECTION_CUE.search(text)) or bool(NEGATION.search(text))
                  or ctx.rating == "down")
        if factual and signal:
            return self._nugget(ctx, factual, note)
        if PRAISE.search(text) and ctx.rating != "down":
            label, reason = "praise", "positive feedback without a correction"
        elif TONE.search(text):
            label, reason = "tone_or_style", "remarks on tone or style, no factual content"
        elif VAGUE.search(text) or (ctx.rating == "down" and not factual):
            label, reason = "vague_negative", "negative feedback without concrete facts"
        elif text.strip().endswith("?"):
            label, reason = "question", "a follow-up question, not a correction"
        else:
            label, reason = "other", "no correction cue with concrete content"
        return Extraction(label, False, reason + note)

    def _nugget(self, ctx: FeedbackContext, factual: list[str], note: str) -> Extraction:
        body_sents = [_clean(s) for s in factual[:3]]
        body = " ".join(s for s in body_sents if len(words(s)) >= 3)
        first = body_sents[0]
        scope = _scope(" ".join(factual)) if _scope(" ".join(factual)) != "global" \
            else _scope(ctx.query)
        obj = _object(first)
        subject = _subject(first, ctx.query)
        predicate = _predicate(first, obj)
        if predicate == "allowed_role":
            title = f"{capitalize(subject)}: {obj} only"
        else:
            # The user's own question makes a clearer heading than a parsed subject.
            title = f"{_heading(ctx.query) or capitalize(subject)}: {obj}"
        if scope != "global":
            title += f" ({scope})"
        first_word = words(body)[0] if words(body) else ""
        kind = "Instruction" if first_word in IMPERATIVE else "SemanticFact"
        if len(words(body)) < 5:
            return Extraction("actionable_correction", False,
                              "correction too short to stand alone" + note)
        reason = (f"correction cue with concrete content ({', '.join(_kinds(first))})" + note)
        return Extraction("actionable_correction", True, reason, title=title, body=body,
                          subject=subject, predicate=predicate, object=obj, scope=scope,
                          kind=kind)


_QUESTION = re.compile(
    r"^(?:(?:how|why|what|where|when|which|who)\b(?:\s+(?:do|does|did|can|can't|should|is|"
    r"are|to|i|we|you|my|the))*|(?:can|could|is|are|do|does)\s+(?:i|we|you))\s+",
    re.IGNORECASE)


def _heading(query: str) -> str:
    """A trigger query as a short heading: question words and punctuation removed."""
    text = _QUESTION.sub("", query.strip()).strip(" ?.!")
    return capitalize(" ".join(text.split()[:8]))


def _kinds(sentence: str) -> list[str]:
    out = []
    if VERSION.search(sentence):
        out.append("version")
    if set(words(sentence)) & ROLE_WORDS:
        out.append("role")
    if _ENTITY.search(sentence):
        out.append("named entity")
    if NUMBER.search(sentence) and not VERSION.search(sentence):
        out.append("number")
    if NEGATION.search(sentence):
        out.append("negation")
    return out or ["modality"]
