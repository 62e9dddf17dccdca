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

from optimizer.accounting import Meter, estimate_tokens
from optimizer.local.lexicon import coverage, sentences, stems
from optimizer.types import Answer, ContextPassage, Extraction, Judgement, NuggetDraft
from query.embeddings import CachedVectors, Embedder

MAX_SENTENCES = 2
KEEP_RATIO = 0.75  # a sentence must score at least this share of the best one


class LocalGenerator:
    """Deterministic extractive answerer with citations.

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
                best_of[p.id] = (score, -passages.index(p), s)
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
    """Judges compliance with the correction, faithfulness and groundedness."""

    def judge(self, query: str, answer: str, nugget: NuggetDraft, extraction: Extraction,
              meter: Meter) -> Judgement:
        """Heuristic judgement on the four axes of DESIGN section 5."""
        meter.check("judge")
        low = answer.lower()
        states_value = bool(extraction.object) and extraction.object.lower() in low
        subject_cov = len(stems(extraction.subject) & stems(answer)) / max(
            1, len(stems(extraction.subject)))
        nugget_sents = {s.strip() for s in sentences(nugget.body)}
        answer_sents = [s.split(" [")[0].strip() for s in sentences(answer)]
        faithful = all(s in nugget_sents for s in answer_sents if s in nugget_sents) and (
            not states_value or any(s in nugget_sents for s in answer_sents))
        if states_value and subject_cov >= 0.5:
            compliance = "addresses"
        elif states_value or subject_cov >= 0.5:
            compliance = "partial"
        else:
            compliance = "misses"
        grounded = "[" in answer or answer.startswith("I could not")
        meter.record("judge", estimate_tokens(query, answer, nugget.text()), 8, estimated=True)
        return Judgement(compliance, faithful, bool(answer.strip()), grounded)
