"""A learned second look at messages the local rules accept as corrections.

The rules read sentences (``optimizer/local/actionability.py``); a fresh voice brings
shapes they were never written for, and what slips through is mostly a message that
*contains* a checkable-looking sentence but is something else: praise with the numbers of
what worked, a request for another format, an off-topic question, a rumour, a pasted
secret "so you can debug". This check reads the whole message as one embedding and gives
the probability that it is a reusable correction (logistic regression over the message's
MiniLM vector, its cosines with the query and the answer, and the rating). The weights
are trained by ``python -m bench.train_actionability`` on the project's benchmark cases
and ship in ``optimizer/local/data/message_check.json`` with the sets they came from and
their leave-one-set-out figures (docs/architecture.md, "Nugget quality").

It only ever vetoes: a message the rules accept is turned down when the probability is
below the threshold, the message is short (at most three sentences) *and* the rules read
some of its sentences as something other than a claim (a question, praise, a story, a
remark), so a plain statement of fact is never overruled by the embedding alone.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
import numpy.typing as npt

from nuggetflow.logging import get_logger
from optimizer.types import FeedbackContext
from query.embeddings import Embedder

log = get_logger(__name__)

WEIGHTS = Path(__file__).with_name("data") / "message_check.json"
RATINGS = ("up", "down", "")
# The veto reads short messages only: in a longer one the embedding is mostly the story
# around a claim buried in it, and says little about the claim (leave-one-set-out, the
# vetoes of messages of 4+ sentences broke right verdicts and fixed none).
MAX_SENTENCES = 3


def may_veto(kinds: list[str]) -> bool:
    """Whether the check may overrule the rules on a message whose sentences were read
    as ``kinds``: at most MAX_SENTENCES sentences, and one is not a claim or its support."""
    return len(kinds) <= MAX_SENTENCES and bool(set(kinds) - {"claim", "support"})


def features(message: npt.NDArray[np.float32], query: npt.NDArray[np.float32],
             answer: npt.NDArray[np.float32], rating: str) -> npt.NDArray[np.float64]:
    """One row: the message vector, its cosines with the query and the answer, the
    rating one-hot (up, down, none) and a bias."""
    onehot = [float(rating == "up"), float(rating == "down"),
              float(rating not in ("up", "down"))]
    return np.concatenate([np.asarray(message, dtype=np.float64),
                           [float(message @ query), float(message @ answer)], onehot, [1.0]])


@dataclass(frozen=True)
class MessageCheck:
    """Trained weights for one embedder (its class name and dimension)."""

    weights: npt.NDArray[np.float64]
    embedder: str
    dim: int
    threshold: float = 0.05  # veto below this probability

    def fits(self, embedder: Embedder) -> bool:
        """True when the weights were trained on this kind of embedder."""
        return type(embedder).__name__ == self.embedder and embedder.dim == self.dim

    def probability(self, ctx: FeedbackContext, embedder: Embedder) -> float:
        """The probability that the message is a reusable factual correction."""
        texts = [ctx.comment, ctx.query, ctx.answer or ctx.query]
        m, q, a = embedder.embed(texts)
        z = float(features(m, q, a, ctx.rating) @ self.weights)
        return 1.0 / (1.0 + float(np.exp(-np.clip(z, -30.0, 30.0))))


@cache
def shipped_check(path: Path = WEIGHTS) -> MessageCheck | None:
    """The shipped weights (None, logged, when the file is missing or unreadable)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        weights = np.asarray(data["weights"], dtype=np.float64)
        check = MessageCheck(weights, str(data["embedder"]), int(data["dim"]),
                             float(data["threshold"]))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        log.warning("message check unavailable", path=str(path), error=repr(exc))
        return None
    if len(weights) != check.dim + 6:
        log.warning("message check weights do not match their dimension", path=str(path),
                    weights=len(weights), dim=check.dim)
        return None
    return check
