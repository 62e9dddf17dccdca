"""Structured logging: ``log.info("event", extra={"fields": {...}})`` or :func:`get_logger`.

Library code logs an event name plus fields; the formatter renders ``key=value`` text or
one JSON object per line. Nothing here runs at import time: the CLI calls :func:`configure`.
Untrusted values go through :func:`clip` at the call site; the formatter also cuts every
field at ``MAX_FIELD_CHARS``, so no input makes a log line unbounded.
:class:`LogThrottle` rate-limits a line that an attacker could repeat at will.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import Any

_RESERVED = set(vars(logging.LogRecord("", 0, "", 0, "", (), None)))
CLIP_CHARS = 80  # untrusted values (ids, names from requests) in log fields
MAX_FIELD_CHARS = 2000  # any field value: a log line never carries unbounded input


def clip(value: object, limit: int = CLIP_CHARS) -> str:
    """``value`` as text of at most ``limit`` characters plus a note of what was cut: for
    untrusted input (request fields) in log lines and error messages."""
    text = str(value)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}...(+{len(text) - limit} chars)"


class LogThrottle:
    """At most one log line per key every ``interval`` seconds.

    ``allow(key)`` returns ``(True, n)`` when a line may be written, ``n`` being how many
    were held back for this key since the last one, else ``(False, 0)``.
    """

    def __init__(self, interval: float, clock: Any = time.monotonic) -> None:
        self.interval = interval
        self._clock = clock
        self._last: dict[str, float] = {}
        self._held: dict[str, int] = {}

    def allow(self, key: str) -> tuple[bool, int]:
        """Whether a line for ``key`` may be written now, and how many were held back."""
        now = self._clock()
        last = self._last.get(key)
        if last is not None and now - last < self.interval:
            self._held[key] = self._held.get(key, 0) + 1
            return False, 0
        self._last[key] = now
        return True, self._held.pop(key, 0)


class StructuredLogger(logging.LoggerAdapter[logging.Logger]):
    """A logger whose methods take keyword fields: ``log.info("ingested", docs=3)``."""

    def process(self, msg: Any, kwargs: Any) -> tuple[Any, Any]:
        fields = {k: kwargs.pop(k) for k in list(kwargs) if k not in ("exc_info", "stack_info",
                                                                     "stacklevel", "extra")}
        kwargs.setdefault("extra", {})["fields"] = fields
        return msg, kwargs


def get_logger(name: str) -> StructuredLogger:
    """A structured logger for a module (``get_logger(__name__)``)."""
    return StructuredLogger(logging.getLogger(name), {})


class _Formatter(logging.Formatter):
    def __init__(self, as_json: bool) -> None:
        super().__init__()
        self.as_json = as_json

    def format(self, record: logging.LogRecord) -> str:
        fields: dict[str, Any] = dict(getattr(record, "fields", {}) or {})
        for key, value in vars(record).items():
            if key not in _RESERVED and key != "fields":
                fields[key] = value
        ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
        if self.as_json:
            doc = {"ts": ts, "level": record.levelname, "logger": record.name,
                   "event": clip(record.getMessage(), MAX_FIELD_CHARS),
                   **{k: _bounded(v) for k, v in fields.items()}}
            if record.exc_info:
                doc["exc"] = self.formatException(record.exc_info)
            return json.dumps(doc, default=str)
        parts = " ".join(f"{k}={_fmt(v)}" for k, v in fields.items())
        line = f"{ts} {record.levelname:<7} {record.name}: "
        line += clip(record.getMessage(), MAX_FIELD_CHARS)
        line = f"{line} {parts}" if parts else line
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


def _bounded(value: Any) -> Any:
    """A JSON field value, cut to MAX_FIELD_CHARS when its text is longer."""
    if value is None or isinstance(value, int | float | bool):
        return value
    if isinstance(value, str) or len(str(value)) > MAX_FIELD_CHARS:
        return clip(value, MAX_FIELD_CHARS)
    return value


def _fmt(value: Any) -> str:
    text = clip(value, MAX_FIELD_CHARS)
    return json.dumps(text) if (" " in text or not text) else text


def configure(level: str = "INFO", fmt: str = "text") -> None:
    """Install the structured formatter on the root logger (stderr)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_Formatter(as_json=fmt == "json"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    for noisy in ("opensearch", "urllib3", "aiokafka", "faust", "mode", "httpx"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, root.level))
