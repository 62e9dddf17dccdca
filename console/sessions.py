"""Server-side console sessions with expiry, and their CSRF tokens.

The browser holds only a random session id (256 bits, an HttpOnly SameSite=Strict cookie);
the bearer token, the tenants it grants and the reviewer's name stay on the server. A
session ends after ``idle`` without a request, ``lifetime`` after it began, or at sign-out.
Signing in replaces the pre-sign-in session by a new id (no session fixation).

Every session, signed in or not, has a CSRF token that every form carries in a hidden
field and every POST must send back (:meth:`Session.csrf_ok`, compared in constant time).
"""

from __future__ import annotations

import hmac
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

COOKIE = "nuggetflow_console"
MAX_SESSIONS = 10_000  # oldest sessions are dropped past this (a bound on memory)


@dataclass
class Session:
    """One browser's session: signed in when ``token`` is set."""

    id: str
    csrf: str
    created: float
    seen: float
    token: str = ""
    reviewer: str = ""
    tenants: tuple[str, ...] = ()
    flash: list[tuple[str, str]] = field(default_factory=list)  # (kind, message)

    @property
    def signed_in(self) -> bool:
        """True once a token was accepted by the query service."""
        return bool(self.token)

    def csrf_ok(self, sent: str | None) -> bool:
        """Whether ``sent`` is this session's CSRF token."""
        return bool(sent) and hmac.compare_digest(str(sent).encode(), self.csrf.encode())

    def may_use(self, tenant: str) -> bool:
        """Whether the signed-in token grants ``tenant``."""
        return self.signed_in and tenant in self.tenants

    def say(self, kind: str, message: str) -> None:
        """A message for the next page shown (kind: ok, error)."""
        self.flash.append((kind, message))

    def take_flash(self) -> list[tuple[str, str]]:
        """The pending messages, once."""
        out, self.flash = self.flash, []
        return out


class SessionStore:
    """Sessions in memory (a console restart signs everyone out), bounded in number."""

    def __init__(self, idle_seconds: float, lifetime_seconds: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.idle = idle_seconds
        self.lifetime = lifetime_seconds
        self.clock = clock
        self._sessions: OrderedDict[str, Session] = OrderedDict()

    def __len__(self) -> int:
        return len(self._sessions)

    def new(self) -> Session:
        """A fresh session (not signed in)."""
        now = self.clock()
        s = Session(secrets.token_urlsafe(32), secrets.token_urlsafe(32), now, now)
        self._sessions[s.id] = s
        while len(self._sessions) > MAX_SESSIONS:
            self._sessions.popitem(last=False)
        return s

    def get(self, session_id: str | None) -> Session | None:
        """The live session with this id (touched), or None (unknown or expired)."""
        if not session_id:
            return None
        s = self._sessions.get(session_id)
        if s is None:
            return None
        now = self.clock()
        if now - s.seen > self.idle or now - s.created > self.lifetime:
            del self._sessions[session_id]
            return None
        s.seen = now
        self._sessions.move_to_end(session_id)
        return s

    def expired(self, session_id: str | None) -> bool:
        """True when ``session_id`` named a session that is gone (to say so once)."""
        return bool(session_id) and session_id not in self._sessions

    def sign_in(self, old: Session, token: str, reviewer: str,
                tenants: tuple[str, ...]) -> Session:
        """A new signed-in session replacing ``old`` (new id and CSRF token)."""
        self.end(old.id)
        s = self.new()
        s.token, s.reviewer, s.tenants = token, reviewer, tenants
        return s

    def end(self, session_id: str) -> None:
        """Forget a session (sign-out)."""
        self._sessions.pop(session_id, None)
