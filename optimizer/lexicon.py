"""Word lists and small text tools shared by the local (deterministic) LLM roles, the
pipeline, the factual guard and INO."""

from __future__ import annotations

import re

from query.text import STOPWORDS, coverage, jaccard, stem, words

__all__ = ["coverage", "stem"]  # one stemmer and one coverage for roles, checks and the gate

ROLE_WORDS = frozenset("""owner admin admins administrator administrators analyst analysts
manager managers lead leads member members editor editors viewer viewers guest guests agent
agents supervisor supervisors moderator moderators contributor contributors approver approvers
auditor auditors operator operators developer developers""".split())

MODALS = re.compile(r"\b(can|can't|cannot|can not|could|may|must|only|allowed|able|requires?|"
                    r"needs?|should)\b", re.IGNORECASE)
NEGATION = re.compile(r"\b(not|can't|cannot|isn't|aren't|doesn't|don't|won't|never|no longer|"
                      r"no|fails?|failed|disabled|removed|blocked|forbidden|locked|"
                      r"unavailable)\b", re.IGNORECASE)
CORRECTION_CUE = re.compile(
    r"\b(actually|in fact|incorrect|inaccurate|wrong|not (?:true|correct|right|accurate)|"
    r"outdated|out of date|no longer|has changed|changed in|should (?:be|say|read)|"
    r"only\b|you said|the answer (?:says|said|claims|is)|rather than|instead of|"
    r"correction|but (?:in|it|the|only|that))\b|^\s*(no|nope)\b", re.IGNORECASE)
VERSION = re.compile(r"\bv\d+(?:\.\d+)*\b|\b\d+\.\d+(?:\.\d+)*\b|\bversion \d+(?:\.\d+)*\b",
                     re.IGNORECASE)
NUMBER = re.compile(r"\b\d+(?:[.,]\d+)?\b")
KEYCOMBO = re.compile(r"\b(?:Ctrl|Alt|Shift|Super|Fn|Cmd|Meta)(?:\s*\+\s*[\w.;,'/-]+)+")
MENU_PATH = re.compile(r"\b[A-Z][\w&-]*(?:\s[\w&-]+)*\s*>\s*[A-Z]")
ADDRESS = re.compile(r"\b(?:https?://|smb://)\S+|\b[\w-]+(?:\.[\w-]+){2,}\b"
                     r"|(?:~|\B/)[\w.-]+/[\w./-]+")
VAGUE = re.compile(r"\b(not helpful|unhelpful|useless|bad answer|wrong answer|didn't help|"
                   r"doesn't help|not useful|meh|confusing|didn't answer|makes no sense|"
                   r"not what i asked|irrelevant)\b", re.IGNORECASE)
TONE = re.compile(r"\b(rude|tone|too long|too short|verbose|wordy|robotic|condescending|"
                  r"too formal|informal|polite|impolite|emojis?|formatting|bullet points|"
                  r"patronizing|friendlier)\b", re.IGNORECASE)
PRAISE = re.compile(r"\b(thanks|thank you|great|perfect|awesome|helpful|worked|works now|"
                    r"love|excellent|nice|spot on|exactly what)\b", re.IGNORECASE)
INJECTION = re.compile(
    r"(ignore (?:all |any )?(?:the )?(?:previous|prior|above|earlier) (?:instructions|rules)|"
    r"disregard (?:all |the )?(?:previous |prior )?instructions|"
    r"(?:mark|label|classify|treat|rate) (?:this|it|every|all|each)\b.{0,40}\bas\b|"
    r"you are now|system prompt|new instructions|act as (?:an?|the)|output (?:the )?json)",
    re.IGNORECASE)
#: Verbs that open the steps of an instruction ("drag one icon onto another").
INSTRUCTION_VERBS = frozenset("""go click double-click right-click open close use select
choose press hold drag drop move set type tap run install uninstall restart reboot sign log
add remove delete create rename enable disable turn switch toggle plug unplug connect
disconnect mount unmount copy paste save export import upload download share print scan
sync update upgrade configure edit change check uncheck tick untick search find look
navigate scroll expand collapse pick attach detach pair unpair lock unlock reset restore
start stop launch quit exit enter leave join call email contact raise file submit request
ask book visit put keep write fill follow list cancel show view grow extend resize apply
reload clear rotate kill ping mute unmute""".split())
IMPERATIVE = frozenset("""go click open use select choose press navigate enable disable set
type tap run install restart sign log""".split())

# Support-domain synonyms used for paraphrases (both directions are listed explicitly).
THESAURUS: dict[str, list[str]] = {
    "reset": ["change", "restore"],
    "password": ["credentials", "login password"],
    "teammate": ["colleague", "team member", "coworker"],
    "colleague": ["teammate", "coworker"],
    "user": ["account", "member"],
    "can't": ["cannot", "unable to"],
    "cannot": ["can't", "unable to"],
    "admin": ["administrator"],
    "panel": ["console", "page"],
    "change": ["modify", "update"],
    "delete": ["remove"],
    "remove": ["delete"],
    "create": ["add", "set up"],
    "add": ["create"],
    "error": ["problem", "issue"],
    "working": ["functioning"],
    "settings": ["preferences", "options"],
    "open": ["launch"],
    "file": ["document"],
    "screen": ["display"],
    "computer": ["machine", "pc"],
    "wireless": ["wi-fi", "wifi"],
    "connect": ["join", "link"],
    "show": ["display"],
    "find": ["locate"],
    "turn": ["switch"],
    "allowed": ["permitted", "able"],
    "export": ["download"],
    "limit": ["maximum", "cap"],
}
PERSON_WORDS = ("team lead", "colleague", "coworker", "team member", "another user")

_SENT = re.compile(r"(?<=[.!?;])\s+|\n+")
def sentences(text: str) -> list[str]:
    """Split text into sentences (also on semicolons and newlines)."""
    return [s.strip() for s in _SENT.split(text) if s and s.strip()]


def content_terms(text: str) -> list[str]:
    """Distinct non-stopword words, in order."""
    seen: dict[str, None] = {}
    for w in words(text):
        if w not in STOPWORDS and len(w) > 1:
            seen.setdefault(w, None)
    return list(seen)


def stems(text: str) -> set[str]:
    """Stems of the content terms of text."""
    return {stem(w) for w in content_terms(text)}



def near_duplicate(a: str, b: str, threshold: float = 0.85) -> bool:
    """True when two queries are equal after normalization or nearly so."""
    na, nb = " ".join(words(a)), " ".join(words(b))
    return na == nb or jaccard(na, nb) >= threshold


def capitalize(text: str) -> str:
    """First letter upper-cased, the rest untouched."""
    return text[:1].upper() + text[1:] if text else text


def ensure_period(text: str) -> str:
    """Terminate a sentence."""
    text = text.strip()
    return text if text.endswith((".", "!", "?")) else text + "."
