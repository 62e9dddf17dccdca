"""Per-tenant bearer tokens for the query service.

Configuration is a mapping ``{token: [tenant, ...]}`` from a JSON file
(``NUGGETFLOW_AUTH_TOKENS_FILE``) or an environment variable (``NUGGETFLOW_AUTH_TOKENS``).
A call carries ``authorization: Bearer <token>`` in its metadata; a missing or unknown
token is an :class:`AuthenticationError` (UNAUTHENTICATED), a token used for a tenant it
was not issued for is a :class:`PermissionDeniedError` (PERMISSION_DENIED).

A server started from the settings (:func:`server_auth`: ``nuggetflow serve``, and
:func:`query.service.create_server` without an explicit ``auth``) refuses to start without
tokens, unless ``NUGGETFLOW_INSECURE_DEV`` (``nuggetflow serve --insecure-dev``) says
otherwise: then it runs *open* (every caller may use every tenant) and logs a loud warning.

Tokens are kept only as SHA-256 digests, and never logged; logs name a token by the first
8 hex digits of its digest.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from nuggetflow.errors import ConfigError, NuggetflowError
from nuggetflow.logging import get_logger
from nuggetflow.settings import Settings, parse_token_map

log = get_logger(__name__)

NO_TOKENS_MESSAGE = (
    "no tokens configured: the query service would let every caller read and review "
    "every tenant. Give it NUGGETFLOW_AUTH_TOKENS_FILE (a JSON file {token: [tenant, ...]}, "
    "tokens of at least 16 characters), or for local development only start it with "
    "--insecure-dev (NUGGETFLOW_INSECURE_DEV=true)")
INSECURE_DEV_WARNING = (
    "INSECURE DEV MODE: AUTH DISABLED. No NUGGETFLOW_AUTH_TOKENS_FILE or "
    "NUGGETFLOW_AUTH_TOKENS and NUGGETFLOW_INSECURE_DEV / --insecure-dev given: every "
    "caller may read and review every tenant. Never expose this port")


class AuthenticationError(NuggetflowError):
    """The call has no valid credentials (missing, malformed or unknown token)."""


class PermissionDeniedError(NuggetflowError):
    """The credentials are valid but not for the requested tenant."""


@dataclass(frozen=True)
class Principal:
    """Who is calling: a token (by digest prefix) and the tenants it may use."""

    token_id: str
    tenants: frozenset[str]
    unrestricted: bool = False

    def may_use(self, tenant: str) -> bool:
        """True when this caller may read and review ``tenant``."""
        return self.unrestricted or tenant in self.tenants


OPEN_PRINCIPAL = Principal("open", frozenset(), unrestricted=True)


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class TokenAuth:
    """Checks bearer tokens against a ``{token: tenants}`` mapping (None: open mode)."""

    def __init__(self, tokens: Mapping[str, Iterable[str]] | None) -> None:
        self._by_digest: dict[str, frozenset[str]] | None = (
            None if tokens is None
            else {_digest(t): frozenset(tenants) for t, tenants in tokens.items()})

    @classmethod
    def from_settings(cls, settings: Settings) -> TokenAuth:
        """Tokens from NUGGETFLOW_AUTH_TOKENS_FILE or NUGGETFLOW_AUTH_TOKENS (else open)."""
        if settings.auth_tokens_file:
            return cls(parse_token_map(Path(settings.auth_tokens_file).read_text(),
                                       "NUGGETFLOW_AUTH_TOKENS_FILE"))
        if settings.auth_tokens:
            return cls(parse_token_map(settings.auth_tokens, "NUGGETFLOW_AUTH_TOKENS"))
        return cls(None)

    @property
    def open(self) -> bool:
        """True when no tokens are configured (development mode)."""
        return self._by_digest is None

    @property
    def token_count(self) -> int:
        """How many tokens are configured (0 in open mode)."""
        return len(self._by_digest or {})

    @property
    def tenant_count(self) -> int:
        """How many distinct tenants the tokens cover."""
        return len(set().union(*(self._by_digest or {}).values()))

    def authenticate(self, metadata: Sequence[tuple[str, str | bytes]] | None) -> Principal:
        """The caller named by the ``authorization`` metadata; AuthenticationError if none."""
        if self._by_digest is None:
            return OPEN_PRINCIPAL
        values = [v for k, v in (metadata or ()) if k.lower() == "authorization"]
        if not values:
            raise AuthenticationError("missing 'authorization: Bearer <token>' metadata")
        raw = values[0]
        text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
        scheme, _, token = text.strip().partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise AuthenticationError("authorization metadata must be 'Bearer <token>'")
        digest = _digest(token.strip())
        tenants = self._by_digest.get(digest)
        if tenants is None:
            raise AuthenticationError("unknown token")
        return Principal(digest[:8], tenants)

    @staticmethod
    def authorize(principal: Principal, tenant: str) -> None:
        """PermissionDeniedError unless ``principal`` may use ``tenant``."""
        if not principal.may_use(tenant):
            raise PermissionDeniedError(f"token {principal.token_id} is not valid for "
                                        f"tenant {tenant!r}", field="tenant")


def server_auth(settings: Settings, *, announce: bool = True) -> TokenAuth:
    """The tokens a query service started from ``settings`` checks.

    ConfigError (field NUGGETFLOW_AUTH_TOKENS_FILE) when no tokens are configured and
    NUGGETFLOW_INSECURE_DEV is not set; with it, open mode, and (``announce``) a warning
    naming the bind address. With tokens, logs how many (never the tokens).
    """
    auth = TokenAuth.from_settings(settings)
    if auth.open:
        if not settings.insecure_dev:
            raise ConfigError(NO_TOKENS_MESSAGE, field="NUGGETFLOW_AUTH_TOKENS_FILE")
        if announce:
            log.warning(INSECURE_DEV_WARNING, host=settings.serve_host)
    elif announce:
        log.info("per-tenant tokens enabled", tokens=auth.token_count,
                 tenants=auth.tenant_count)
    return auth
