"""Local anchors and probe paraphrases: templates, a thesaurus and the corpus vocabulary.

Both roles read the trigger query as slots (actor, action verb, affected person, object,
place). Anchors are written from the nugget's fact; probes only from the trigger query,
with other templates, a seeded choice, and a check that none repeats an anchor.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass

from optimizer.accounting import Meter, estimate_tokens
from optimizer.claims import items
from optimizer.lexicon import (
    INSTRUCTION_VERBS,
    PERSON_WORDS,
    ROLE_WORDS,
    THESAURUS,
    content_terms,
    near_duplicate,
    stem,
)
from optimizer.local.titles import task_of
from optimizer.types import Extraction, NuggetDraft, Vocabulary
from query.embeddings import CachedVectors, Embedder
from query.text import STOPWORDS, words

VERBS = frozenset("""reset change delete remove add create export import connect install
update upgrade open find set enable disable turn share invite edit view access restore
print scan sync backup back sign log configure move copy rename download upload approve
assign cancel renew transfer recover unlock lock use see make print mount""".split())
PERSON_NOUNS = frozenset("""teammate teammates colleague colleagues coworker coworkers user
users member members lead employee employees person people someone""".split())


@dataclass(frozen=True)
class Slots:
    """What a support query is about."""

    actor: str
    verb: str
    person: str
    obj: str
    place: str
    terms: tuple[str, ...]


def slots(query: str) -> Slots:
    """Read actor, verb, person, object and place out of a query (best effort)."""
    ws = [w.removesuffix("'s") for w in words(query)]
    verb = next((w for w in ws if w in VERBS), "")
    actor = ""
    m = re.search(r"\b(?:my|our|the|an?)\s+([a-z]+)\s+(?:can't|cannot|can|to|is|isn't|"
                  + "|".join(sorted(VERBS)) + r")\b", query.lower())
    # (an actor is a role or a person: "the nightly backup", "my laptop to" name things,
    # and the who-may-do-what templates made junk of them: "backup another account ...")
    if m and (m.group(1) in ROLE_WORDS or m.group(1) in PERSON_NOUNS):
        actor = m.group(1)
    # (the person is the one acted on, after the verb: in "Someone turned on big text, how
    # do I turn it off?" nobody is; a person noun before another noun only says what kind
    # of thing, "a user account", "the members database", unless it is a possessive, "a
    # colleague's password")
    after_verb = ws[ws.index(verb) + 1:] if verb else []
    raw_after_verb = words(query)[ws.index(verb) + 1:] if verb else []
    person = next((w for i, (w, raw) in enumerate(zip(after_verb, raw_after_verb,
                                                      strict=False))
                   if w in PERSON_NOUNS and w != actor
                   and (raw.endswith("'s") or i + 1 == len(after_verb)
                        or after_verb[i + 1] in STOPWORDS or after_verb[i + 1] in VERBS)), "")
    obj = ""
    if verb:
        after = ws[ws.index(verb) + 1:]
        raw_after = words(query)[ws.index(verb) + 1:]
        run: list[str] = []  # the first noun phrase after the verb; its last word is the head
        for w, raw in zip(after, raw_after, strict=False):
            skip = (w in STOPWORDS or w in PERSON_NOUNS or w in ("another", "other")
                    or raw.endswith("'s"))
            if skip and run:
                break
            if not skip:
                run.append(w)
        obj = run[-1] if run else ""
    if not obj:
        rest = [w for w in content_terms(query) if w not in (verb, actor, person)]
        obj = rest[0] if rest else ""
    place = ""
    m = re.search(r"\b(?:from|in|on|via|under)\s+(?:the|my|a)\s+([a-z-]+(?:\s+[a-z-]+)?)",
                  query.lower())
    if m:
        place = m.group(1)
    return Slots(actor, verb, person, obj, place, tuple(content_terms(query)))


def _synonym(word: str, rng: random.Random) -> str:
    options = THESAURUS.get(word)
    return rng.choice(options) if options else word


def paraphrase_q0(q0: str, rng: random.Random) -> list[str]:
    """Rewordings of the trigger query (for the anchor that paraphrases q0)."""
    s = slots(q0)
    out: list[str] = []
    # "analyst unable to reset another teammate's password": the template reads for a
    # query about who can do what to whom; for others it makes fragments.
    if s.verb and s.obj and (s.actor or s.person):
        who = f"{s.actor} " if s.actor else ""
        target = f"another {s.person}'s " if s.person else ""
        out.append(f"{who}unable to {s.verb} {target}{s.obj}".strip())
        where = f" in the {s.place}" if s.place else ""
        out.append(f"how can {('an ' + s.actor) if s.actor else 'I'} {s.verb} "
                   f"{target}{s.obj}{where}")
    swapped = " ".join(_synonym(w, rng) for w in content_terms(q0))
    out.append(swapped)
    task = task_of(q0)
    if task and task.split()[0] in VERBS:
        out.append(f"how to {task}")
    return [o for o in dict.fromkeys(out) if o and not near_duplicate(o, q0)]


def _roles_in(text: str) -> list[str]:
    found: list[str] = []
    for m in re.finditer(r"\b([A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)\b", text):
        name = re.sub(r"^(?:The|A|An)\s+", "", m.group(1))
        last = name.split()[-1].lower()
        if last in ROLE_WORDS and name.lower() not in ("the", "a", "an") and name not in found:
            found.append(name)
    return found


def synthetic_queries(extraction: Extraction, draft: NuggetDraft,
                      vocabulary: Sequence[str], q0: str = "") -> list[str]:
    """Future queries the nugget should answer, written from its fact: what the trigger
    query asks about (its task), asked the ways the fact's kind is asked about, and the
    names the correction gives (settings, places, items) next to the task."""
    subj, obj, scope = extraction.subject, extraction.object, extraction.scope
    task = task_of(q0) if q0 else subj
    in_scope = f" in {scope}" if scope and scope != "global" else ""
    names = [i.text for i in items(draft.body) if i.kind in ("name", "menu", "keys", "dotted",
                                                              "tech", "path", "quoted")]
    place = names[0].split(">")[-1].strip() if names else ""
    out: list[str] = []
    keys = " ".join(content_terms(task)[:5]) or task
    if extraction.predicate != "allowed_role":
        # Users describe a symptom more often than they name the setting: first.
        out.append(f"{keys} not working{in_scope}")
    if extraction.predicate == "allowed_role":
        others = [r for r in _roles_in(draft.body) if r.lower() != obj.lower()]
        other = others[0] if others else "another user"
        out += [f"which role is required to {subj}{in_scope}",
                f"can {other.lower()}s {subj}",
                f"permissions needed to {subj}",
                f"{obj} vs {other} capabilities",
                f"who is allowed to {subj}"]
    # "keyboard shortcut to <task>" reads when the task is an action ("lock the screen");
    # a symptom ("screen goes black after 5 minutes") takes "for <key words>".
    action = bool(task) and task.split()[0] in (VERBS | INSTRUCTION_VERBS)
    to_task = f"to {task}" if action else f"for {keys}"
    if extraction.predicate == "shortcut":
        out += [f"keyboard shortcut {to_task}", f"{keys} shortcut key",
                f"which keys {task if action else 'for ' + keys}{in_scope}"]
    elif extraction.predicate == "location":
        out += [f"where is the setting {to_task}", f"{keys} setting missing",
                f"where to find {place or obj}{in_scope}"]
    elif extraction.predicate in ("restriction", "requirement"):
        out += ([f"why can't I {task}", f"can I {task}{in_scope}"] if action else
                [f"why {keys} not possible"]) + [f"{keys} not allowed"]
    out += [f"{keys} {obj}".strip()]
    out += [f"{keys} {n}" for n in names[:3] if n.lower() not in task]
    # More keys from the correction's own items, never generic words ("help", "problem
    # with ...") that would match unrelated pages as well as this one.
    out += [f"{n} {keys}" for n in names[:3] if n.lower() not in task]
    if in_scope:
        out.append(f"{keys} {scope}")
    extra = [v for v in vocabulary if v.lower() not in draft.text().lower()][:2]
    if extra:
        out.append(f"{task} {' '.join(extra)}")
    kept = [o for o in dict.fromkeys(" ".join(x.split()) for x in out) if o]
    return [o for o in kept if not q0 or not near_duplicate(o, q0)]


SYNONYM_MIN = 0.6  # cosine a corpus word needs to stand in for a query word


class CorpusSynonyms:
    """Stand-ins for query words from the tenant's own vocabulary: the corpus word whose
    embedding is closest to the query word (at least ``SYNONYM_MIN``), never a word of
    the same stem or prefix. The tenant corpus decides ("wifi" -> "wireless" where the
    help pages say wireless), so it needs no hand-written, domain-specific list."""

    def __init__(self, embedder: Embedder | None, cache_size: int = 20_000) -> None:
        self.embedder = embedder
        self._vectors = CachedVectors(embedder, cache_size) if embedder else None

    def of(self, terms: Sequence[str], vocabulary: Sequence[str]) -> dict[str, str]:
        """term -> its closest vocabulary word, for the terms that have one."""
        terms = [t for t in terms if t.isalpha() and len(t) > 2]
        vocab = [v for v in vocabulary if v.isalpha() and " " not in v]
        if self._vectors is None or not terms or not vocab:
            return {}
        tv, vv = self._vectors(terms), self._vectors(vocab)
        out: dict[str, str] = {}
        for t, a in zip(terms, tv, strict=True):
            best, score = "", SYNONYM_MIN
            for v, b in zip(vocab, vv, strict=True):
                if stem(v) == stem(t) or v[:5] == t[:5]:
                    continue
                cos = float(a @ b)
                if cos >= score:
                    best, score = v, cos
            if best:
                out[t] = best
        return out

    def closest(self, text: str, candidates: Sequence[str], k: int) -> list[str]:
        """The ``k`` candidates most similar to text, best first."""
        if self._vectors is None or not candidates:
            return list(candidates[:k])
        qv, *cv = self._vectors([text, *candidates])
        order = sorted(range(len(candidates)), key=lambda i: -float(qv @ cv[i]))
        return [candidates[i] for i in order[:k]]


class LocalAnchors:
    """Anchors from templates, the fact triple and the tenant corpus: the words of the
    documents on the trigger query's topic that are closest to it, and stand-ins for the
    trigger query's words in the corpus's own terms (with an embedder)."""

    def __init__(self, embedder: Embedder | None = None) -> None:
        self.synonyms = CorpusSynonyms(embedder)

    def anchors(self, draft: NuggetDraft, extraction: Extraction, q0: str, *,
                q0_paraphrases: int, synthetic: int, vocabulary: Sequence[str],
                meter: Meter) -> list[str]:
        """``q0_paraphrases`` rewordings of q0 then ``synthetic`` future queries."""
        meter.check("anchors")
        rng = random.Random(q0)
        terms = content_terms(q0)
        from optimizer.guard import factual_tokens  # the guard imports this package

        # Corpus words are vocabulary, never facts: none that would bring a
        # number, version, role or name the nugget does not already state.
        known = factual_tokens(f"{q0}\n{draft.text()}")
        # A word the passages on this topic already use needs no stand-in: its
        # embedding neighbour may be its opposite or a sibling ("rows" -> "columns").
        spoken = vocabulary.spoken if isinstance(vocabulary, Vocabulary) else frozenset()
        vocabulary = [v for v in vocabulary if factual_tokens(v) <= known]
        swap = self.synonyms.of([t for t in terms if t not in spoken], vocabulary)
        paras = paraphrase_q0(q0, rng)
        if swap:
            # q0 in the corpus's words first: it carries vocabulary q0 itself lacks.
            reworded = " ".join(swap.get(t, t) for t in terms)
            paras = [reworded, *paras]
        # Anchors are search keys, not claims, but they still add no number, version,
        # role or name the trigger query and the nugget do not have (the guard's rule).
        paras = [p for p in paras if factual_tokens(p) <= known]
        out: list[str] = []
        for q in paras:
            if len(out) >= q0_paraphrases:
                break
            if not any(near_duplicate(q, o) for o in out):
                out.append(q)
        synth = synthetic_queries(extraction, draft, vocabulary, q0)
        if vocabulary:
            close = self.synonyms.closest(q0, [v for v in vocabulary
                                               if v.lower() not in draft.text().lower()], 3)
            topical = [f"{task_of(q0) or ' '.join(terms[:4])} {' '.join(close)}"
                       ] if close else []
            synth = [*topical, *synth]
        # C's synthetic queries, whatever else the variant takes: D (C's five and a
        # paraphrase of q0) is then a superset of C, so it never loses a query C found.
        synth = [q for q in synth if factual_tokens(q) <= known]
        pool: list[str] = []
        for q in synth:
            if len(pool) >= synthetic:
                break
            if not any(near_duplicate(q, o) for o in pool):
                pool.append(q)
        out += pool
        meter.record("anchors", estimate_tokens(draft.text(), q0), estimate_tokens(*out),
                     estimated=True)
        return out


_LEAD = re.compile(r"^(?:how (?:do|can|should) (?:i|we|you)|how to|why (?:does|do|is|are|can't"
                   r"|cannot|won't|doesn't)(?: (?:my|the|it|i))?|what(?:'s| is)|where is|"
                   r"where (?:do|can) i|can i|is it possible to|i want(?: to)?)\s+",
                   re.IGNORECASE)
_SYMPTOM = re.compile(r"\b(?:not working|doesn'?t work|won'?t|can'?t|cannot|missing|broken|"
                      r"wrong|stuck|keeps|fails?)\b", re.IGNORECASE)


def _general_rewordings(q0: str, rng: random.Random) -> list[str]:
    """Paraphrases that need no slots: the query as a problem report, as a how-to
    question, shortened to its key words, with a synonym swapped in, and reordered."""
    core = _LEAD.sub("", q0.strip().rstrip("?.!").strip())
    terms = content_terms(core) or content_terms(q0)
    if not terms:
        return []
    key = " ".join(terms[:4])
    swapped = [_synonym(t, rng) for t in terms]
    symptom = bool(_SYMPTOM.search(q0))
    out = [f"problem with {key}" if symptom else f"{key} not working",
           f"how do i fix {key}" if symptom else f"is there a way to {core}",
           " ".join(terms[1:] + terms[:1]) if len(terms) > 2 else f"{key} help",
           " ".join(swapped) if swapped != terms else f"{key} settings",
           f"{key} fix" if symptom else f"how to {core}",
           f"what to do when {core}" if symptom else f"steps to {core}",
           f"trouble with {key}", f"{key} help"]
    rng.shuffle(out)
    return out


class LocalProbes:
    """Held-out paraphrases of q0 in user vocabulary (symptoms, other roles, keywords)."""

    def paraphrases(self, q0: str, count: int, *, avoid: Sequence[str], seed: int,
                    meter: Meter) -> list[str]:
        """``count`` paraphrases, none equal or near-equal to q0 or an ``avoid`` query."""
        meter.check("probes")
        rng = random.Random(f"{seed}:{q0}")
        s = slots(q0)
        person = s.person or "user"
        people = [p for p in (*PERSON_WORDS, *THESAURUS.get(person, [])) if p != person]
        cands: list[str] = []
        obj = s.obj or "account"
        if s.verb and not (s.person or s.actor):
            cands += [
                f"{s.verb} {obj} not working",
                f"where is the option to {_synonym(s.verb, rng)} the {obj}",
                f"how to {s.verb} my {_synonym(obj, rng)}",
                f"{obj} {s.verb} doesn't work",
                f"can't {_synonym(s.verb, rng)} {obj}",
            ]
        elif s.verb:
            cands += [
                f"user {s.verb} isn't working for my {rng.choice(people)}",
                f"{s.verb} {obj} for {rng.choice(people)} not working",
                f"{s.actor or 'member'} can't {s.verb} {rng.choice(people)} {obj}",
                f"who is allowed to {_synonym(s.verb, rng)} {obj} for other users",
                f"{obj} {s.verb} option missing for {s.actor or 'my account'}",
                f"how do i {s.verb} a {rng.choice(people)}'s {_synonym(obj, rng)}",
                f"{s.verb} another account {obj} greyed out",
            ]
        terms = list(s.terms)
        rng.shuffle(terms)
        cands.append(" ".join(_synonym(t, rng) for t in terms))
        if s.place:
            cands.append(f"{s.place} {s.verb or 'problem'} {s.obj}".strip())
        rng.shuffle(cands)
        out: list[str] = []
        # The slot templates first; queries they cannot read (no known verb, no person)
        # still get their paraphrases from rewordings that need no slots.
        general = _general_rewordings(q0, rng)
        for c in [*cands, *general]:
            c = " ".join(c.split())
            if len(out) >= count:
                break
            if near_duplicate(c, q0) or any(near_duplicate(c, a) for a in (*avoid, *out)):
                continue
            out.append(c)
        meter.record("probes", estimate_tokens(q0), estimate_tokens(*out), estimated=True)
        return out
