"""The one exception tree of nuggetflow.

Every error carries a message and, where it applies, the offending ``field``; ``retriable``
tells callers (stream agents, gRPC interceptor) whether trying again can succeed.
"""

from __future__ import annotations


class NuggetflowError(Exception):
    """Root of every error raised on purpose by nuggetflow."""

    retriable: bool = False

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field

    def __str__(self) -> str:
        return f"{self.field}: {self.message}" if self.field else self.message


class ConfigError(NuggetflowError):
    """A setting is missing or has a bad value (named in ``field``)."""


class ValidationError(NuggetflowError):
    """Input data is malformed; ``field`` names the bad part. Nothing was written."""


class InputError(ValidationError):
    """A file given to a command cannot be used: missing, a directory, unreadable, not
    UTF-8 text, or one of its records is malformed. ``path``, ``line`` and ``field`` say
    where; the message says why (``<path> line <n>: field <f>: <why>``)."""

    def __init__(self, path: str, message: str, *, line: int | None = None,
                 field: str | None = None) -> None:
        super().__init__(message, field=field)
        self.path = path
        self.line = line

    def __str__(self) -> str:
        where = self.path + (f" line {self.line}" if self.line is not None else "")
        what = f"field {self.field}: " if self.field else ""
        return f"{where}: {what}{self.message}"


class NotFoundError(NuggetflowError):
    """The requested record does not exist (for this tenant)."""


class ConflictError(NuggetflowError):
    """A write was made from a version that is no longer the lineage's head (someone
    changed the nugget meanwhile): nothing was written. ``current`` is the head now."""

    def __init__(self, message: str, *, field: str | None = None,
                 current: object = None) -> None:
        super().__init__(message, field=field)
        self.current = current


class WriteContentionError(ConflictError):
    """Another writer (another process or host) committed for the same tenant between
    this write's reads and its commit: nothing was written. The index retries such a
    write from a fresh read; this reaches a caller only when the retries ran out."""

    retriable = True


class LLMOutputError(ValidationError):
    """A model's reply did not match its role's schema after retries (dead-lettered with
    the reason ``llm_output``)."""

    reason_code = "llm_output"


class InvalidTransitionError(ValidationError):
    """A review or lifecycle action is not allowed from the record's current state."""


class BackendUnavailableError(NuggetflowError):
    """A server the code depends on (OpenSearch, Kafka, an LLM endpoint) cannot be reached."""

    retriable = True


class WritesPausedError(BackendUnavailableError):
    """The store refuses every write for now (OpenSearch during ``nuggetflow reindex``):
    nothing of the write was applied; try again later."""


class BudgetExceededError(NuggetflowError):
    """A per-nugget LLM call or token budget was used up."""


class DeadlineExceededError(NuggetflowError):
    """The call's deadline passed before the work was done (a write: before it began, so
    nothing was written)."""


class UndecodableRequestError(ValidationError):
    """A request's bytes are not a valid protobuf message of its type; ``kind`` says why
    (``invalid_utf8``: a string field is not UTF-8; ``corrupt``: the wire format is broken)."""

    def __init__(self, message: str, *, kind: str, field: str | None = None) -> None:
        super().__init__(message, field=field)
        self.kind = kind


class IngestInterruptedError(NuggetflowError):
    """Writing a validated corpus file stopped part way (the store failed): the message
    says at which line and how many documents were stored. Each document is written
    whole, so a re-run resumes: documents already stored unchanged are skipped."""

    def __init__(self, message: str, *, retriable: bool = False) -> None:
        super().__init__(message)
        self.retriable = retriable
