"""One Protocol per LLM role, and the bundle of roles a backend provides.

Backends: ``local`` (deterministic algorithms, no network, the default) in
:mod:`optimizer.local`, and ``openai`` (any OpenAI-compatible endpoint) in
:mod:`optimizer.openai_backend`. Every call takes the nugget's :class:`Meter` so calls,
tokens and cost are counted and the budget is enforced.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from optimizer.accounting import Meter
from optimizer.types import (
    Answer,
    ContextPassage,
    Extraction,
    FeedbackContext,
    Judgement,
    NuggetDraft,
    ProbeTrace,
    Revision,
)


class ActionabilityRole(Protocol):
    """Decides whether feedback is an actionable factual correction and extracts it."""

    def extract(self, ctx: FeedbackContext, meter: Meter) -> Extraction:
        """Usefulness label, can_produce_nugget, reason, and title/body/fact if actionable."""


class AnchorRole(Protocol):
    """Writes retrieval anchors: queries the nugget answers."""

    def anchors(self, draft: NuggetDraft, extraction: Extraction, q0: str, *,
                q0_paraphrases: int, synthetic: int, vocabulary: Sequence[str],
                meter: Meter) -> list[str]:
        """``q0_paraphrases`` rewordings of q0 plus ``synthetic`` future queries."""


class ProbeRole(Protocol):
    """Writes held-out paraphrases of the trigger query for probing."""

    def paraphrases(self, q0: str, count: int, *, avoid: Sequence[str], seed: int,
                    meter: Meter) -> list[str]:
        """``count`` paraphrases of q0, none equal or near-equal to a query in ``avoid``."""


@dataclass(frozen=True)
class ReflectionInput:
    """What the reflector sees (RePAIR: the failure trace itself, no error taxonomy)."""

    draft: NuggetDraft
    extraction: Extraction
    q0: str
    probes: Sequence[ProbeTrace]
    correction_context: str


class ReflectorRole(Protocol):
    """Revises title, body wording and anchors from failed probes; adds no facts."""

    def revise(self, inp: ReflectionInput, meter: Meter) -> Revision:
        """A revised draft and the list of edits made."""


class GeneratorRole(Protocol):
    """Answers a query from the passages that reached it, citing them."""

    def answer(self, query: str, passages: Sequence[ContextPassage], meter: Meter) -> Answer:
        """The answer text and the ids of cited passages."""


class JudgeRole(Protocol):
    """Judges an answer against the correction."""

    def judge(self, query: str, answer: str, nugget: NuggetDraft, extraction: Extraction,
              meter: Meter, *, facts: Sequence[str] = (), superseded: str = "") -> Judgement:
        """Compliance, faithfulness, non-regression and groundedness.

        ``facts`` are the corrected facts (a benchmark's gold facts; the nugget's body
        when empty), ``superseded`` the answer the correction overturned."""


@dataclass(frozen=True)
class Roles:
    """The set of roles a backend provides."""

    actionability: ActionabilityRole
    anchors: AnchorRole
    probes: ProbeRole
    reflector: ReflectorRole
    generator: GeneratorRole
    judge: JudgeRole
