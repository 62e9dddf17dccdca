"""Structured logging: ``log.info("event", extra={"fields": {...}})`` or :func:`get_logger`.

Library code logs an event name plus fields; the formatter renders ``key=value`` text or
one JSON object per line. Nothing here runs at import time: the CLI calls :func:`configure`.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import Any

_RESERVED = set(vars(logging.LogRecord("", 0, "", 0, "", (), None)))


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
                   "event": record.getMessage(), **fields}
            if record.exc_info:
                doc["exc"] = self.formatException(record.exc_info)
            return json.dumps(doc, default=str)
        parts = " ".join(f"{k}={_fmt(v)}" for k, v in fields.items())
        line = f"{ts} {record.levelname:<7} {record.name}: {record.getMessage()}"
        line = f"{line} {parts}" if parts else line
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


def _fmt(value: Any) -> str:
    text = str(value)
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
