"""The client's exceptions: one class per status code the query service sends on purpose.

Every error is a :class:`ClientError` carrying the gRPC status name (``code``), the
server's message, the method called and, for INVALID_ARGUMENT, the offending ``field``
(from the trailing metadata key ``nuggetflow-field``; the message starts with it too).
The original ``grpc.RpcError`` is the exception's ``__cause__``.
"""

from __future__ import annotations

from typing import Any

FIELD_METADATA_KEY = "nuggetflow-field"


class ClientError(Exception):
    """A call failed. ``retriable``: trying again (same request) may succeed."""

    retriable = False

    def __init__(self, message: str, *, code: str = "UNKNOWN", field: str | None = None,
                 method: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.field = field
        self.method = method

    def __str__(self) -> str:
        where = f"{self.method}: " if self.method else ""
        return f"{where}{self.code}: {self.message}"


class InvalidArgument(ClientError, ValueError):
    """A request field is wrong (``field`` names it), or a feedback event the publisher
    refused before sending. Nothing was done."""


class NotFound(ClientError):
    """No such nugget, version or request (for this tenant)."""


class Unauthenticated(ClientError):
    """The bearer token is missing or unknown."""


class PermissionDenied(ClientError):
    """The token is not valid for the tenant asked for."""


class Unavailable(ClientError):
    """The service (or its store, or Kafka for the publisher) cannot be reached; retry."""

    retriable = True


class DeadlineExceeded(ClientError):
    """The deadline passed. Sent by the server, the work was not done; fired on the client
    side the outcome is unknown: retry (a Review with the same ``request_id``)."""

    retriable = True


class ResourceExhausted(ClientError):
    """The request is larger than the service accepts."""


class Aborted(ClientError):
    """A review or edit was made from a version that is no longer the nugget's current one
    (someone changed it meanwhile): nothing was written. The message names the current
    version; read it (``get_nugget``) and decide again."""


_BY_CODE: dict[str, type[ClientError]] = {
    "INVALID_ARGUMENT": InvalidArgument,
    "NOT_FOUND": NotFound,
    "UNAUTHENTICATED": Unauthenticated,
    "PERMISSION_DENIED": PermissionDenied,
    "UNAVAILABLE": Unavailable,
    "DEADLINE_EXCEEDED": DeadlineExceeded,
    "RESOURCE_EXHAUSTED": ResourceExhausted,
    "ABORTED": Aborted,
}


def field_of(metadata: Any) -> str | None:
    """The field named in trailing metadata (``nuggetflow-field``), if any."""
    for key, value in metadata or ():
        if key == FIELD_METADATA_KEY:
            return value.decode() if isinstance(value, bytes) else str(value)
    return None


def from_rpc_error(err: Any, method: str | None = None) -> ClientError:
    """The ClientError for a ``grpc.RpcError`` (sync or ``grpc.aio``)."""
    code_fn = getattr(err, "code", None)
    status = code_fn() if callable(code_fn) else None
    code = getattr(status, "name", None) or "UNKNOWN"
    details_fn = getattr(err, "details", None)
    message = (details_fn() if callable(details_fn) else None) or str(err)
    trailing_fn = getattr(err, "trailing_metadata", None)
    field = field_of(trailing_fn() if callable(trailing_fn) else None)
    cls = _BY_CODE.get(code, ClientError)
    return cls(message, code=code, field=field, method=method)
