"""Tenant corpus ingestion: JSONL documents -> passages -> the index, beside the nuggets.

Input lines: ``{"id", "tenant", "title", "text"}`` plus optional ``url``, ``timestamp``
(ISO 8601 or epoch seconds: the document is valid from then; default 1970-01-01) and
``valid_to``. Each document is split into passages of about ``chunk_chars`` characters at
paragraph, then sentence boundaries.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from nuggetflow.errors import ValidationError
from query.model import Passage

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")


@dataclass(frozen=True)
class Document:
    """One corpus document before chunking."""

    id: str
    tenant: str
    title: str
    text: str
    url: str = ""
    valid_from: datetime = EPOCH
    valid_to: datetime | None = None


def _time(value: Any, field: str, line: int) -> datetime | None:
    if value is None or value == "":
        return None
    try:
        if isinstance(value, int | float):
            return datetime.fromtimestamp(float(value), UTC)
        t = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except (ValueError, OverflowError, OSError) as exc:
        raise ValidationError(f"line {line}: bad time {value!r}: {exc}", field=field) from exc
    return t if t.tzinfo else t.replace(tzinfo=UTC)


def read_documents(path: str | Path, tenant: str | None = None) -> Iterator[Document]:
    """Parse a corpus JSONL file; ``tenant`` overrides the records' own tenant.

    Raises ValidationError naming the line and field of the first malformed record.
    """
    with Path(path).open(encoding="utf-8") as fh:
        for number, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            try:
                rec = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise ValidationError(f"line {number}: not JSON: {exc}", field="line") from exc
            if not isinstance(rec, dict):
                raise ValidationError(f"line {number}: not a JSON object", field="line")
            ten = tenant or rec.get("tenant")
            for name, value in (("id", rec.get("id")), ("tenant", ten),
                                ("text", rec.get("text"))):
                if not isinstance(value, str) or not value.strip():
                    raise ValidationError(f"line {number}: missing or empty {name}", field=name)
            start = _time(rec.get("timestamp"), "timestamp", number) or EPOCH
            end = _time(rec.get("valid_to"), "valid_to", number)
            if end is not None and end <= start:
                raise ValidationError(f"line {number}: valid_to <= timestamp", field="valid_to")
            yield Document(id=rec["id"], tenant=str(ten), title=str(rec.get("title") or ""),
                           text=rec["text"], url=str(rec.get("url") or ""),
                           valid_from=start, valid_to=end)


def chunk_text(text: str, chunk_chars: int) -> list[str]:
    """Split text into chunks of at most about ``chunk_chars`` (never mid-sentence)."""
    pieces: list[str] = []
    for para in re.split(r"\n\s*\n", text):
        para = " ".join(para.split())
        if not para:
            continue
        if len(para) <= chunk_chars:
            pieces.append(para)
        else:
            pieces.extend(_SENTENCE_END.split(para))
    chunks: list[str] = []
    current = ""
    for piece in pieces:
        if current and len(current) + 1 + len(piece) > chunk_chars:
            chunks.append(current)
            current = piece
        else:
            current = f"{current} {piece}".strip()
    if current:
        chunks.append(current)
    return chunks


def passages_of(doc: Document, chunk_chars: int) -> list[Passage]:
    """The passages of one document (ids ``<doc id>#<n>``)."""
    return [Passage(id=f"{doc.id}#{i}", tenant=doc.tenant, doc_id=doc.id, title=doc.title,
                    text=chunk, valid_from=doc.valid_from, valid_to=doc.valid_to, url=doc.url)
            for i, chunk in enumerate(chunk_text(doc.text, chunk_chars))]


async def ingest_corpus(ingest: Callable[[list[Passage]], Any], path: str | Path,
                        tenant: str | None, chunk_chars: int, batch: int = 256,
                        progress: Callable[[int, int, int], None] | None = None
                        ) -> tuple[int, int, int]:
    """Read, chunk and store a corpus in batches; returns (documents, passages, new).

    ``ingest`` is ``NuggetIndex.ingest_passages``; ``progress(docs, passages, new)`` is
    called after each batch. The file is fully validated before anything is written.
    """
    docs = list(read_documents(path, tenant))
    total_docs = total_passages = total_new = 0
    pending: list[Passage] = []
    for doc in docs:
        pending.extend(passages_of(doc, chunk_chars))
        total_docs += 1
        if len(pending) >= batch:
            total_new += await ingest(pending)
            total_passages += len(pending)
            pending = []
            if progress:
                progress(total_docs, total_passages, total_new)
    if pending:
        total_new += await ingest(pending)
        total_passages += len(pending)
    if progress:
        progress(total_docs, total_passages, total_new)
    return total_docs, total_passages, total_new
