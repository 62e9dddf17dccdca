"""Data passed between the optimizer's roles, the harness and the INO loop."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime


@dataclass(frozen=True)
class FeedbackContext:
    """A feedback event with the answer it is about (all of it untrusted user data)."""

    event_id: str
    tenant: str
    query: str
    answer: str
    comment: str
    rating: str = ""
    cited_documents: tuple[str, ...] = ()
    timestamp: datetime | None = None
    user: str = ""
    agent: str = ""


USEFULNESS_LABELS = ("actionable_correction", "vague_negative", "tone_or_style", "praise",
                     "question", "other")


def correction_context(ctx: FeedbackContext) -> str:
    """The text a nugget's facts may come from: query, corrected answer, feedback."""
    return "\n".join([ctx.query, ctx.answer, ctx.comment])


@dataclass(frozen=True)
class Extraction:
    """Actionability verdict and, when actionable, the extracted nugget content."""

    usefulness: str
    can_produce_nugget: bool
    reason: str
    title: str = ""
    body: str = ""
    subject: str = ""
    predicate: str = ""
    object: str = ""
    scope: str = "global"
    kind: str = "SemanticFact"


@dataclass(frozen=True)
class ContextPassage:
    """Something handed to the generator: a nugget or a corpus passage."""

    id: str
    title: str
    text: str
    is_nugget: bool
    score: float


@dataclass(frozen=True)
class Answer:
    """A generated answer and the ids of the passages it cites."""

    text: str
    cited: tuple[str, ...]


@dataclass(frozen=True)
class Competitor:
    """An item that outranked the nugget for a probe."""

    id: str
    title: str
    text: str
    score: float


@dataclass(frozen=True)
class ProbeTrace:
    """What the RAG harness did with one probe query."""

    query: str
    retrieved: bool  # the nugget is in the top-k candidates
    reached_generator: bool  # it cleared the gate into the context
    cited: bool
    rank: int  # 1-based rank in the fused list, 0 when not retrieved
    rerank_score: float
    competitors: tuple[Competitor, ...]
    answer: str
    held_out: bool = True
    note: str = ""  # why the harness could not tell more (e.g. no citations reported)

    @property
    def passed(self) -> bool:
        """Pass(n*, q): reached the generator and was cited."""
        return self.reached_generator and self.cited


@dataclass(frozen=True)
class NuggetDraft:
    """The optimizable surface of a candidate: what INO may reword."""

    title: str
    body: str
    anchors: tuple[str, ...] = ()

    def text(self) -> str:
        """Everything indexed for retrieval."""
        return "\n".join([self.title, self.body, *self.anchors])


@dataclass(frozen=True)
class Revision:
    """A reflector's proposal and the edits it made, in words."""

    draft: NuggetDraft
    edits: tuple[str, ...] = ()


@dataclass(frozen=True)
class Judgement:
    """Answer-judge axes (docs/architecture.md, "Nugget quality")."""

    compliance: str  # addresses | partial | misses | contradicts
    faithful: bool
    non_regression: bool
    grounded: bool


@dataclass
class IterationRecord:
    """One INO iteration: probes, verdict, edits, cost."""

    iteration: int
    probes: list[ProbeTrace]
    passed: bool
    edits: list[str] = field(default_factory=list)
    llm_calls: int = 0
    tokens: int = 0
    seconds: float = 0.0
    rejected: list[str] = field(default_factory=list)  # the guard's reasons, this round
    cost_usd: float = 0.0


class Vocabulary(list[str]):
    """Words of the tenant passages that answer the trigger query (pseudo-relevance
    feedback), with the trigger query's own words those passages already use
    (``spoken``): such a word needs no stand-in from the corpus, and swapping it for a
    neighbour in embedding space would change what the anchor says ("rows" ->
    "columns", "disable" -> "enabling")."""

    def __init__(self, words: list[str] | tuple[str, ...] = (),
                 spoken: frozenset[str] = frozenset()) -> None:
        super().__init__(words)
        self.spoken = spoken
