"""How the console shows records: times, validity, enum names, the optimization trace.

Everything here returns plain text; the templates escape it (autoescape), so untrusted
feedback (HTML, scripts) is always shown as the text it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from nuggetflow_client.v1 import nugget_pb2 as pb

PUBLICATION_LABELS = {pb.DRAFT: "draft", pb.PENDING_REVIEW: "pending review",
                      pb.PUBLISHED: "published", pb.REJECTED: "rejected",
                      pb.UNPUBLISHED: "unpublished"}
STATE_LABELS = {pb.ACTIVE: "active", pb.DEPRECATED: "deprecated", pb.CONTESTED: "contested"}
RATING_LABELS = {"up": "thumbs up", "down": "thumbs down", "": "no rating"}
#: What each review flag kind means, as a badge says it.
FLAG_LABELS = {"uncited": "never cited", "seldom_cited": "seldom cited",
               "expiring": "validity ending", "buried": "buried by a corpus change",
               "redundant": "restated by the corpus"}


def when(msg: Any, name: str) -> datetime | None:
    """The datetime of a Timestamp field of ``msg`` (None when unset)."""
    if not msg.HasField(name):
        return None
    value: datetime = getattr(msg, name).ToDatetime(tzinfo=UTC)
    return value


def ts_text(msg: Any, name: str, empty: str = "—") -> str:
    """A Timestamp field as ``YYYY-MM-DD HH:MM UTC``."""
    t = when(msg, name)
    return t.strftime("%Y-%m-%d %H:%M UTC") if t else empty


def time_text(t: datetime | None, empty: str = "—") -> str:
    """A datetime as ``YYYY-MM-DD HH:MM UTC``."""
    return t.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC") if t else empty


def validity_text(n: Any) -> str:
    """``from <start> until <end>`` (``open-ended``), ``(inferred)`` when guessed."""
    v = n.validity
    start = ts_text(v, "start", "?")
    end = ts_text(v, "end", "open-ended")
    return f"from {start} until {end}" + (" (start inferred)" if v.inferred else "")


def date_input(msg: Any, name: str) -> str:
    """A Timestamp field as an ISO 8601 value for a text input ("" when unset)."""
    t = when(msg, name)
    return t.isoformat().replace("+00:00", "Z") if t else ""


def is_current(n: Any, now: datetime | None = None) -> bool:
    """Whether the nugget's validity contains ``now``."""
    now = now or datetime.now(UTC)
    start, end = when(n.validity, "start"), when(n.validity, "end")
    return (start is None or start <= now) and (end is None or now < end)


@dataclass(frozen=True)
class ProbeRow:
    """One probe of one INO round, as the trace table shows it."""

    query: str
    held_out: bool
    retrieved: bool
    rank: int
    reached: bool
    cited: bool
    passed: bool
    competitors: list[str]


@dataclass(frozen=True)
class Round:
    """One INO round: probes passed and failed, competitors, edits, guard refusals, cost."""

    number: int
    passed: bool
    probes: list[ProbeRow]
    edits: list[str]
    rejected: list[str]
    llm_calls: int
    tokens: int
    cost_usd: float
    seconds: float

    @property
    def passed_count(self) -> int:
        """Probes that passed (reached the generator and were cited)."""
        return sum(p.passed for p in self.probes)


def rounds(n: Any) -> list[Round]:
    """The optimization trace of a nugget, round by round."""
    out = []
    for r in n.optimization.history:
        probes = [ProbeRow(p.query, p.held_out, p.retrieved, p.rank, p.reached_generator,
                           p.cited, p.reached_generator and p.cited, list(p.competitors))
                  for p in r.probes]
        edits = [e for e in r.edits if not e.startswith("rejected: ")]
        out.append(Round(r.iteration, r.passed, probes, edits, list(r.rejected_edits),
                         r.llm_calls, r.tokens, r.cost_usd, r.seconds))
    return out


def parse_time(text: str, field: str) -> datetime | None:
    """An ISO 8601 date or date-time typed in a form (UTC when no offset is given); None
    for an empty value; ValueError naming ``field`` otherwise."""
    text = text.strip()
    if not text:
        return None
    try:
        t = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"{field}: not a date (YYYY-MM-DD or YYYY-MM-DDTHH:MM)") from None
    return t if t.tzinfo else t.replace(tzinfo=UTC)
