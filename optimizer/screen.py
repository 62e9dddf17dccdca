"""A mechanical screen for candidate nuggets, whatever backend wrote them.

Feedback is untrusted. The actionability roles refuse feedback addressed to the system,
but a candidate may also come from another producer, a model that was talked into it,
or an edit. Before a candidate is published without a person looking at it, this screen
reads the nugget and the feedback it came from; any reason it finds holds the candidate
for review (docs/architecture.md, "Untrusted feedback"):

- the feedback, or the nugget's title, body or anchors, addresses the system (role
  prefixes, attempts to override instructions, requests to publish or label, claimed
  confidence, secret values such as passwords or keys);
- the feedback carried HTML or script (the nugget itself is stored as plain text);
- the nugget links with a scheme that runs code or embeds data (javascript:, data:,
  vbscript:).
"""

from __future__ import annotations

import re

from optimizer.claims import addressed_to_system, has_markup
from query.model import Nugget

_UNSAFE_LINK = re.compile(r"\b(?:javascript|vbscript|data)\s*:", re.IGNORECASE)


def screen(nugget: Nugget) -> list[str]:
    """Why this candidate must wait for a person ([] when nothing was found)."""
    reasons = []
    feedback = nugget.provenance.feedback_text
    why = addressed_to_system(feedback)
    if why:
        reasons.append(f"feedback: {why}")
    if has_markup(feedback):
        reasons.append("feedback: contains HTML or script")
    for name, text in (("title", nugget.title), ("body", nugget.body),
                       ("anchors", "\n".join(nugget.anchors))):
        why = addressed_to_system(text)
        if why:
            reasons.append(f"{name}: {why}")
        if _UNSAFE_LINK.search(text):
            reasons.append(f"{name}: a javascript:, vbscript: or data: link")
    return reasons
