"""Synthetic feedback streams for tests, the stream benchmark and demos.

:func:`mixed_events` makes a reproducible mix of actionable corrections, non-actionable
feedback (vague, praise, tone, questions), malformed records (not JSON, wrong types,
missing fields, binary garbage) and re-deliveries of earlier events, with the expected
outcome of each, for a small portal corpus (:func:`portal_corpus`) like the INO paper's
worked example. Labels are what the local backend decides (a unit test checks that).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

T0 = datetime(2025, 1, 1, tzinfo=UTC)

PORTAL = [
    ("kb-reset-own", "Resetting your own password",
     "Password reset isn't working? Every user can reset their own password. Open the login "
     "screen, choose Forgot password and follow the reset link sent to your email. If the "
     "reset link isn't working, it may have expired: reset links expire after one hour. "
     "Ask your team lead if you still cannot sign in."),
    ("kb-admin-panel", "Using the admin panel",
     "The admin panel lists team members, their roles and their last sign-in. Open it from "
     "the gear menu. Team leads can invite new members from the admin panel."),
    ("kb-roles", "Roles in the portal",
     "The portal has three roles: Workspace Owner, Team Lead and Analyst. Roles decide which "
     "pages of the portal a member can open."),
    ("kb-2fa", "Two-factor authentication",
     "Turn on two-factor authentication from your profile. You need an authenticator app."),
    ("kb-sso", "Single sign-on",
     "Workspaces on the Enterprise plan can sign in with SSO. Password resets are then "
     "handled by your identity provider."),
]

ROLES = ("Workspace Owner", "Team Lead", "Billing Admin", "Security Officer")
ACTIONS = (("reset another user's password", "why can't my analyst reset another "
            "teammate's password from the admin panel?"),
           ("export the audit log", "how do I export the audit log for my workspace?"),
           ("delete a project", "who is allowed to delete a project in the portal?"),
           ("change the billing plan", "can a team lead change our billing plan?"),
           ("invite external guests", "how can I invite an external guest to a project?"),
           ("rotate the API keys", "where do I rotate the workspace API keys?"))
NOT_ACTIONABLE = ("not helpful", "This answer did not help me at all.",
                  "Great answer, thanks a lot!", "The tone is too formal and a bit rude.",
                  "What about single sign-on?", "meh", "Too long, please be shorter.")


@dataclass
class EventMix:
    """A feedback stream and what should come of it."""

    lines: list[bytes] = field(default_factory=list)
    actionable: set[tuple[str, str]] = field(default_factory=set)  # (tenant, event_id)
    not_actionable: set[tuple[str, str]] = field(default_factory=set)
    malformed: list[bytes] = field(default_factory=list)
    duplicates: int = 0

    @property
    def tenants(self) -> set[str]:
        """Tenants of the well-formed events."""
        return {t for t, _ in self.actionable | self.not_actionable}


def portal_corpus(tenant: str) -> list[dict[str, Any]]:
    """The portal knowledge base as corpus records for a tenant."""
    # Passage ids are global: make them unique per tenant.
    return [{"id": f"{tenant}-{doc_id}", "tenant": tenant, "title": title, "text": text,
             "timestamp": T0.isoformat()} for doc_id, title, text in PORTAL]


def event(event_id: str, tenant: str, query: str, answer: str, comment: str,
          rating: str = "down", minutes: int = 0) -> dict[str, Any]:
    """A FeedbackEvent in the proto's canonical JSON form."""
    return {"eventId": event_id, "tenant": tenant, "query": query, "answer": answer,
            "feedback": {"rating": rating, "comment": comment},
            "timestamp": (T0 + timedelta(minutes=minutes)).isoformat().replace("+00:00", "Z"),
            "user": f"user-{minutes % 17}", "agent": "chat"}


def correction(i: int) -> tuple[str, str, str]:
    """(query, answer, comment) of the i-th distinct factual correction."""
    role, other = ROLES[i % len(ROLES)], ROLES[(i + 1) % len(ROLES)]
    action, query = ACTIONS[(i // len(ROLES)) % len(ACTIONS)]
    version = f"v{8 + i // (len(ROLES) * len(ACTIONS))}.{i % 10}"
    comment = (f"No, that's wrong. In portal {version} only the {role} role can {action}; "
               f"the {other} role can view the settings but not {action.split()[0]}.")
    return query, f"Anyone with admin-panel access can {action}.", comment


def malformed(i: int) -> bytes:
    """The i-th malformed record (each one distinct)."""
    kinds = [
        lambda: f"this is not json #{i}".encode(),
        lambda: json.dumps({"eventId": f"bad-{i}", "tenant": "acme",
                            "feedback": {"comment": "x"}}).encode(),  # no query
        lambda: json.dumps({"eventId": f"bad-{i}", "query": "q", "tenant": "",
                            "feedback": {"comment": "x"}}).encode(),  # empty tenant
        lambda: json.dumps({"eventId": f"bad-{i}", "tenant": "acme", "query": "q",
                            "feedback": {"rating": "sideways"}}).encode(),  # bad rating
        lambda: (f'{{"eventId": "bad-{i}", "tenant": "acme", "query": ').encode(),
        lambda: json.dumps({"eventId": f"bad-{i}", "tenant": "acme", "query": "q",
                            "feedback": {"comment": "x"}, "unknownField": 1}).encode(),
        lambda: bytes([0xFF, 0xFE, 0x00, i % 256, 0x13, 0x37]) + str(i).encode(),
    ]
    return kinds[i % len(kinds)]()


def mixed_events(n: int, *, tenants: tuple[str, ...] = ("acme", "globex"),
                 actionable_share: float = 0.1, malformed_share: float = 0.05,
                 duplicate_share: float = 0.1, seed: int = 0,
                 prefix: str = "fb") -> EventMix:
    """``n`` records: corrections, other feedback, malformed records and re-deliveries."""
    rng = random.Random(seed)
    mix = EventMix()
    sent: list[bytes] = []
    corrections = 0
    for i in range(n):
        r = rng.random()
        if sent and r < duplicate_share:
            mix.lines.append(rng.choice(sent))
            mix.duplicates += 1
            continue
        if r < duplicate_share + malformed_share:
            raw = malformed(len(mix.malformed))
            mix.malformed.append(raw)
            mix.lines.append(raw)
            continue
        tenant = tenants[i % len(tenants)]
        event_id = f"{prefix}-{i:06d}"
        if r < duplicate_share + malformed_share + actionable_share:
            query, answer, comment = correction(corrections)
            corrections += 1
            mix.actionable.add((tenant, event_id))
            doc = event(event_id, tenant, query, answer, comment, minutes=i)
        else:
            comment = NOT_ACTIONABLE[rng.randrange(len(NOT_ACTIONABLE))]
            rating = "up" if comment.startswith("Great") else "down"
            doc = event(event_id, tenant, "how do I reset my password?",
                        "Open the login screen and choose Forgot password.", comment,
                        rating=rating, minutes=i)
            mix.not_actionable.add((tenant, event_id))
        raw = json.dumps(doc, separators=(",", ":")).encode()
        sent.append(raw)
        mix.lines.append(raw)
    return mix
