"""Local extractive generator and judge.

The generator answers from the passages that reached it: it scores each sentence by how
much of the query it covers (and its passage's title), weighted by the passage's
re-ranking score, takes the best sentence of each passage, keeps the two best passages
(the second only if it scores at least 75% of the first) and cites them. The judge
checks an answer against the correction: does it state the corrected value, does it
stay grounded in what it cites.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from optimizer.accounting import Meter, estimate_tokens
from optimizer.claims import STRONG_KINDS, content_stems, item_keys
from optimizer.fidelity import answer_verdict, stale_claims
from optimizer.lexicon import coverage, sentences
from optimizer.types import Answer, ContextPassage, Extraction, Judgement, NuggetDraft
from query.embeddings import CachedVectors, Embedder

MAX_SENTENCES = 2
KEEP_RATIO = 0.75  # a sentence must score at least this share of the best one


class LocalGenerator:
    """Deterministic extractive answerer with citations: the best sentence of each of
    the two best passages, or the whole body of a nugget.

    With an embedder, a sentence's score blends lexical coverage with its cosine
    similarity to the query (a reader understands paraphrases); without one it is lexical.
    """

    def __init__(self, embedder: Embedder | None = None, cache_size: int = 20_000) -> None:
        self.embedder = embedder
        self._vectors = CachedVectors(embedder, cache_size) if embedder else None

    def answer(self, query: str, passages: Sequence[ContextPassage], meter: Meter) -> Answer:
        """Best-covering sentences from the passages, each tagged with its source id."""
        meter.check("generator")
        best_of: dict[str, tuple[float, int, str]] = {}  # one sentence per passage
        units = [(p, s) for p in passages for s in sentences(p.text)]
        sims: list[float] = [0.0] * len(units)
        if self._vectors is not None and units:
            qv, *svs = self._vectors([query, *(f"{p.title}: {s}" for p, s in units)])
            sims = [max(0.0, float(qv @ v)) for v in svs]
        for i, (p, s) in enumerate(units):
            cov = 0.6 * coverage(query, s) + 0.4 * coverage(query, p.title)
            if self.embedder is not None:
                cov = 0.5 * cov + 0.5 * sims[i]
            score = cov * (0.5 + p.score)
            if cov > 0 and score > best_of.get(p.id, (0.0, 0, ""))[0]:
                # A nugget is one atomic fact of 1-3 sentences: an answer that uses it
                # relays all of it, as a reader would; a passage gives its best sentence.
                best_of[p.id] = (score, -passages.index(p), p.text.strip() if p.is_nugget
                                 else s)
        ranked = sorted(((v[0], v[1], v[2], pid) for pid, v in best_of.items()), reverse=True)
        chosen: list[tuple[str, str]] = []
        if ranked:
            best = ranked[0][0]
            chosen = [(s, pid) for score, _, s, pid in ranked[:MAX_SENTENCES]
                      if score >= KEEP_RATIO * best]
        text = " ".join(f"{s} [{pid}]" for s, pid in chosen) or "I could not find this."
        cited = tuple(dict.fromkeys(pid for _, pid in chosen))
        meter.record("generator", estimate_tokens(query, *(p.text for p in passages)),
                     estimate_tokens(text), estimated=True)
        return Answer(text, cited)


class LocalJudge:
    """Judges an answer against the corrected facts mechanically (optimizer.fidelity):
    compliance from fact coverage and stale claims, faithfulness from the sentences the
    answer attributes to the nugget, non-regression, groundedness from citations."""

    def __init__(self, embedder: Embedder | None = None) -> None:
        self._vectors = CachedVectors(embedder, 4096) if embedder else None

    def judge(self, query: str, answer: str, nugget: NuggetDraft, extraction: Extraction,
              meter: Meter, *, facts: Sequence[str] = (), superseded: str = "") -> Judgement:
        """The four judge axes (see the class docstring)."""
        meter.check("judge")
        stated = list(facts) or [s for s in sentences(nugget.body) if s.strip()]
        vectors = self._vectors
        embed = (lambda texts: np.asarray(vectors(list(texts)))) if vectors is not None \
            else None
        compliance = answer_verdict(answer, stated, superseded, embed)
        faithful = all(_faithful(a, sentences(f"{nugget.title}. {nugget.body}"))
                       for a in sentences(answer))
        stale = bool(superseded) and bool(stale_claims("", answer, superseded, stated))
        non_regression = bool(answer.strip()) and not stale
        grounded = "[" in answer or answer.startswith("I could not")
        meter.record("judge", estimate_tokens(query, answer, nugget.text()), 8, estimated=True)
        return Judgement(compliance, faithful, non_regression, grounded)


def _faithful(answer_sentence: str, nugget_sentences: Sequence[str]) -> bool:
    """An answer sentence drawn from the nugget (half of its words shared with one of
    the nugget's sentences) keeps every concrete item of that sentence."""
    words = content_stems(answer_sentence)
    for ns in nugget_sentences:
        theirs = content_stems(ns)
        if words and theirs and len(words & theirs) / len(words | theirs) >= 0.5:
            mine = item_keys(answer_sentence)
            return all(k in mine or k in answer_sentence.lower()
                       for k in item_keys(ns, STRONG_KINDS))
    return True
