"""Tenant corpus ingestion: JSONL documents -> versioned passages -> the index.

Input lines: ``{"id", "tenant", "title", "text"}`` plus optional ``url``, ``timestamp``
(ISO 8601 or epoch seconds: the document is valid from then) and ``valid_to``; other
fields are ignored. A removal is ``{"id", "tenant", "deleted": true}`` with an optional
``timestamp`` (the instant it is gone; now without one), and no text. Each document is
split into passages of about ``chunk_chars`` characters at paragraph, then sentence
boundaries; a sentence longer than ``max_passage_chars`` is split at words, a word longer
than ``chunk_chars`` at characters.

A run is all or nothing per file: every line is validated (types, required fields, UTF-8,
sizes, one record per document id) and compared with what the store holds before anything
is written. Then, per document id of the tenant:

- not stored yet: version 1, valid from its timestamp (1970-01-01 without one);
- stored with the same title, url and passages: unchanged, skipped (nothing embedded);
- stored with other content: a new version valid from its timestamp (now without one),
  which must be later than the stored version's start; the stored version's validity is
  closed at that instant, in the same write (its passages stay, for ``as_of`` queries);
- removed (``deleted``): the stored version's validity is closed at the removal's
  timestamp (now without one), which must be later than its start; its passages stay
  for ``as_of`` queries. A removal of a document the store does not hold, or holds
  closed already, changes nothing (running the file again is harmless), and a record
  that brings a removed document back is a new version even when its content is the
  removed one's.

Each document is written whole in one store call, so a run the store interrupts leaves
whole documents behind, and running the file again resumes where it stopped.

Every write is recorded as a :class:`CorpusChange` (the tenant, and per new, changed or
removed document its version and the ids of the passages written or closed) in
``IngestReport.changes``: what the re-probe step (docs/architecture.md, "Re-probing on
corpus change") reads, from the ``corpus.changes`` topic or in-process.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nuggetflow.errors import IngestInterruptedError, InputError, NuggetflowError
from nuggetflow.inputs import read_lines
from nuggetflow.settings import Settings
from query.model import Passage, document_digest, passage_id, utcnow

if TYPE_CHECKING:
    from query.index import NuggetIndex
    from query.store import DocumentHead, IndexStore

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MAX_ID_BYTES = 256  # document ids and tenants, UTF-8 (ids become OpenSearch _id parts)
# Room a passage id takes beyond its document id ("#<n>@v<k>"): passage ids stay within
# NUGGETFLOW_GRPC_MAX_ID_CHARS, so every passage can be fetched and cited.
PASSAGE_SUFFIX_CHARS = 20
MAX_TITLE_CHARS = 1000
MAX_URL_CHARS = 4096
HEADS_BATCH = 500
REMOVED = "removed"  # the kind of a removed document in a CorpusChange
CHANGE_KINDS = ("new", "changed", REMOVED)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
_JSON_TYPES = {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
               int: "a number", float: "a number", type(None): "null"}


@dataclass(frozen=True)
class Document:
    """One corpus document before chunking.

    ``valid_from`` is the record's timestamp (None when it has none: a first version is
    then valid from 1970-01-01, a changed version from the time of ingestion); ``line`` is
    its line in the file (0 when it did not come from one).
    """

    id: str
    tenant: str
    title: str
    text: str
    url: str = ""
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    line: int = 0
    deleted: bool = False


# --- reading and validating --------------------------------------------------------------


def _type_name(value: object) -> str:
    return _JSON_TYPES.get(type(value), type(value).__name__)


def _check_text(value: str) -> str | None:
    """Why a string cannot be stored (None: it can)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        return (f"holds a lone surrogate (U+{ord(value[exc.start]):04X} at character "
                f"{exc.start + 1}), which is not encodable as UTF-8")
    if "\0" in value:
        return f"holds a NUL character (at character {value.index(chr(0)) + 1})"
    return None


class _Record:
    """Field access for one parsed line, raising InputError with the line and field."""

    def __init__(self, rec: dict[str, Any], path: str, line: int) -> None:
        self.rec = rec
        self.path = path
        self.line = line

    def fail(self, field: str, why: str) -> InputError:
        return InputError(self.path, why, line=self.line, field=field)

    def string(self, field: str, *, required: bool, value: Any = None, max_chars: int = 0,
               max_bytes: int = 0, limit_hint: str = "", plain: bool = False) -> str:
        """A string field: the right type, UTF-8 encodable, within its size limit."""
        value = self.rec.get(field) if value is None else value
        if value is None:
            if required:
                raise self.fail(field, "is missing")
            return ""
        if not isinstance(value, str):
            raise self.fail(field, f"must be a string, got {_type_name(value)}")
        if required and not value.strip():
            raise self.fail(field, "is empty")
        problem = _check_text(value)
        if problem:
            raise self.fail(field, problem)
        if max_chars and len(value) > max_chars:
            raise self.fail(field, f"is {len(value)} characters long, more than {max_chars}"
                            + (f" ({limit_hint})" if limit_hint else ""))
        if max_bytes and len(value.encode()) > max_bytes:
            raise self.fail(field, f"is longer than {max_bytes} bytes (UTF-8)")
        if plain and any(ord(c) < 32 or 127 <= ord(c) < 160 for c in value):
            raise self.fail(field, "holds a control character")
        return value

    def time(self, field: str) -> datetime | None:
        """An optional time: ISO 8601 text (UTC unless it says otherwise) or epoch seconds."""
        value = self.rec.get(field)
        if value is None or value == "":
            return None
        expected = "must be an ISO 8601 time or epoch seconds"
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise self.fail(field, f"{expected}, got {_type_name(value)}")
        try:
            if isinstance(value, str):
                problem = _check_text(value)
                if problem:
                    raise self.fail(field, problem)
                t = datetime.fromisoformat(value.replace("Z", "+00:00"))
                return t.astimezone(UTC) if t.tzinfo else t.replace(tzinfo=UTC)
            if not math.isfinite(value):
                raise ValueError("not a finite number")
            return datetime.fromtimestamp(float(value), UTC)
        except (ValueError, OverflowError, OSError) as exc:
            raise self.fail(field, f"{expected}, got {value!r} ({exc})") from None


def parse_document(raw: bytes, line: int, path: str, tenant: str | None = None, *,
                   settings: Settings | None = None) -> Document:
    """One corpus line (UTF-8 JSON) as a Document; InputError naming line and field.
    Limits: ``settings.max_document_chars`` of text; ids within
    ``settings.grpc_max_id_chars`` (document ids leave room for the passage suffix)."""
    settings = settings or Settings.from_env({})
    max_id = settings.grpc_max_id_chars
    try:
        rec = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise InputError(path, f"not JSON: {exc}", line=line) from None
    except RecursionError:
        raise InputError(path, "not JSON: nested too deeply", line=line) from None
    if not isinstance(rec, dict):
        raise InputError(path, f"not a JSON object but {_type_name(rec)}", line=line)
    r = _Record(rec, path, line)
    deleted = rec.get("deleted", False)
    if not isinstance(deleted, bool):
        raise r.fail("deleted", f"must be true or false, got {_type_name(deleted)}")
    doc_id = r.string("id", required=True, max_bytes=MAX_ID_BYTES, plain=True,
                      max_chars=max(1, max_id - PASSAGE_SUFFIX_CHARS),
                      limit_hint=f"NUGGETFLOW_GRPC_MAX_ID_CHARS={max_id} less "
                                 f"{PASSAGE_SUFFIX_CHARS} for the passage suffix")
    ten = r.string("tenant", required=True, value=tenant, max_bytes=MAX_ID_BYTES, plain=True,
                   max_chars=max_id, limit_hint="NUGGETFLOW_GRPC_MAX_ID_CHARS")
    start = r.time("timestamp")
    if deleted:
        if rec.get("text"):
            raise r.fail("text", "must be absent from a removal (deleted: true)")
        return Document(id=doc_id, tenant=ten, title="", text="", valid_from=start,
                        line=line, deleted=True)
    title = r.string("title", required=False, max_chars=MAX_TITLE_CHARS)
    text = r.string("text", required=True, max_chars=settings.max_document_chars,
                    limit_hint="NUGGETFLOW_MAX_DOCUMENT_CHARS")
    url = r.string("url", required=False, max_chars=MAX_URL_CHARS, plain=True)
    end = r.time("valid_to")
    if end is not None and end <= (start or EPOCH):
        raise r.fail("valid_to", f"{end.isoformat()} is not after the timestamp "
                                 f"{(start or EPOCH).isoformat()}")
    return Document(id=doc_id, tenant=ten, title=title, text=text, url=url,
                    valid_from=start, valid_to=end, line=line)


def read_documents(path: str | Path, tenant: str | None = None, *,
                   settings: Settings | None = None) -> list[Document]:
    """Parse and validate a whole corpus JSONL file; ``tenant`` overrides the records'.

    Raises InputError for the file (missing, a directory, binary, not UTF-8) or for the
    first bad line, naming the line and field; a document id that appears twice for one
    tenant is an error naming both lines. A line is read only up to the size a document of
    ``settings.max_document_chars`` (default settings without) can take, so an oversized
    one is rejected without reading it.
    """
    settings = settings or Settings.from_env({})
    max_document_chars = settings.max_document_chars
    name = str(path)
    # A JSON string escapes a character in at most 6 bytes (\\uXXXX); room for the rest.
    max_line = 6 * max_document_chars + 16 * (MAX_TITLE_CHARS + MAX_URL_CHARS + 1024)
    docs: list[Document] = []
    first_line: dict[tuple[str, str], int] = {}
    try:
        for number, raw in read_lines(path, max_line_bytes=max_line,
                                      too_long="NUGGETFLOW_MAX_DOCUMENT_CHARS="
                                               f"{max_document_chars} characters of text"):
            if not raw.strip():
                continue
            doc = parse_document(raw, number, name, tenant, settings=settings)
            seen = first_line.setdefault((doc.tenant, doc.id), number)
            if seen != number:
                raise InputError(name, f"document id {doc.id!r} of tenant {doc.tenant!r} is "
                                 f"also on line {seen}; one record per document", line=number,
                                 field="id")
            docs.append(doc)
    except InputError as exc:
        raise _nothing_written(exc) from None
    return docs


def _nothing_written(exc: InputError) -> InputError:
    """The error, saying that nothing of the file was stored (it is raised before)."""
    return InputError(exc.path, f"{exc.message} (nothing from the file was written)",
                      line=exc.line, field=exc.field)


# --- chunking ------------------------------------------------------------------------------


def _split_long(piece: str, chunk_chars: int) -> list[str]:
    """Split text at spaces into parts of at most ``chunk_chars`` (words longer than that
    at characters)."""
    parts: list[str] = []
    current = ""
    for word in piece.split(" "):
        while len(word) > chunk_chars:
            if current:
                parts.append(current)
                current = ""
            parts.append(word[:chunk_chars])
            word = word[chunk_chars:]
        if current and len(current) + 1 + len(word) > chunk_chars:
            parts.append(current)
            current = word
        else:
            current = f"{current} {word}" if current else word
    if current:
        parts.append(current)
    return parts


def chunk_text(text: str, chunk_chars: int, max_passage_chars: int | None = None) -> list[str]:
    """Split text into chunks of about ``chunk_chars``: at paragraph and sentence ends,
    never mid-sentence unless a sentence is longer than ``max_passage_chars`` (default
    ``chunk_chars``); such a sentence is split at words, and a word longer than
    ``chunk_chars`` at characters. No chunk is longer than ``max_passage_chars``."""
    limit = max(max_passage_chars or chunk_chars, chunk_chars)
    pieces: list[str] = []
    for para in re.split(r"\n\s*\n", text):
        para = " ".join(para.split())
        if not para:
            continue
        sentences = [para] if len(para) <= chunk_chars else _SENTENCE_END.split(para)
        for sentence in sentences:
            pieces.extend([sentence] if len(sentence) <= limit
                          else _split_long(sentence, chunk_chars))
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


def passages_of(doc: Document, chunk_chars: int, max_passage_chars: int | None = None, *,
                version: int = 1, valid_from: datetime | None = None) -> list[Passage]:
    """The passages of one version of a document (ids: :func:`query.model.passage_id`),
    valid from ``valid_from`` (default: the document's timestamp, else 1970-01-01)."""
    return _passages(doc, chunk_text(doc.text, chunk_chars, max_passage_chars), version,
                     valid_from or doc.valid_from or EPOCH)


def _passages(doc: Document, chunks: Sequence[str], version: int,
              valid_from: datetime) -> list[Passage]:
    digest = document_digest(doc.title, doc.url, chunks)
    return [Passage(id=passage_id(doc.id, i, version), tenant=doc.tenant, doc_id=doc.id,
                    title=doc.title, text=chunk, valid_from=valid_from, valid_to=doc.valid_to,
                    url=doc.url, version=version, digest=digest)
            for i, chunk in enumerate(chunks)]


# --- planning and writing ----------------------------------------------------------------


@dataclass(frozen=True)
class ChangedDocument:
    """One document version a corpus run wrote: ``kind`` "new", "changed" or "removed",
    the ids of its passages (written, or for a removal closed)."""

    doc_id: str
    version: int
    kind: str
    passage_ids: tuple[str, ...]


@dataclass(frozen=True)
class CorpusChange:
    """The documents of one tenant that one write of a corpus run stored, and when: a
    record of the ``corpus.changes`` topic (JSON, :meth:`to_bytes`)."""

    tenant: str
    documents: tuple[ChangedDocument, ...]
    at: datetime

    @property
    def id(self) -> str:
        """Content id: the same write announced twice has the same id."""
        raw = json.dumps([self.tenant, [(d.doc_id, d.version) for d in self.documents]])
        return "cc-" + hashlib.sha256(raw.encode()).hexdigest()[:20]

    @property
    def passage_ids(self) -> list[str]:
        """Every passage written or closed, in document order."""
        return [p for d in self.documents for p in d.passage_ids]

    @property
    def written_ids(self) -> list[str]:
        """The passages written (of new and changed documents), in document order."""
        return [p for d in self.documents if d.kind != REMOVED for p in d.passage_ids]

    @property
    def removed_ids(self) -> list[str]:
        """The passages a removal closed, in document order."""
        return [p for d in self.documents if d.kind == REMOVED for p in d.passage_ids]

    def to_bytes(self) -> bytes:
        """The topic record."""
        return json.dumps({"tenant": self.tenant, "at": self.at.isoformat(), "documents": [
            {"id": d.doc_id, "version": d.version, "kind": d.kind,
             "passages": list(d.passage_ids)} for d in self.documents]},
            sort_keys=True).encode()

    @classmethod
    def from_bytes(cls, raw: bytes) -> CorpusChange:
        """The record :meth:`to_bytes` wrote; ValidationError (field named) otherwise."""
        from nuggetflow.errors import ValidationError

        try:
            doc = json.loads(raw)
        except (ValueError, UnicodeDecodeError) as exc:
            raise ValidationError(f"not JSON: {exc}", field="corpus_change") from None
        if not isinstance(doc, dict):
            raise ValidationError("must be a JSON object", field="corpus_change")
        tenant, docs = doc.get("tenant"), doc.get("documents")
        if not isinstance(tenant, str) or not tenant.strip():
            raise ValidationError("must be a non-empty string", field="tenant")
        if not isinstance(docs, list) or not docs:
            raise ValidationError("must be a non-empty array", field="documents")
        try:
            at = datetime.fromisoformat(str(doc.get("at")))
        except ValueError:
            raise ValidationError("must be an ISO 8601 time", field="at") from None
        out = []
        for d in docs:
            ok = (isinstance(d, dict) and isinstance(d.get("id"), str)
                  and isinstance(d.get("version"), int) and d.get("kind") in CHANGE_KINDS
                  and isinstance(d.get("passages"), list)
                  and all(isinstance(p, str) for p in d["passages"]))
            if not ok:
                raise ValidationError("each needs id, version, kind (new, changed or "
                                      "removed) and passages (ids)", field="documents")
            out.append(ChangedDocument(d["id"], d["version"], d["kind"], tuple(d["passages"])))
        return cls(tenant, tuple(out), at if at.tzinfo else at.replace(tzinfo=UTC))


@dataclass
class IngestReport:
    """What a corpus run did (documents in the file, by outcome; passages written) and
    the changes it stored, one per tenant and write."""

    documents: int = 0
    new_documents: int = 0
    changed_documents: int = 0
    unchanged_documents: int = 0
    removed_documents: int = 0
    passages: int = 0
    new_passages: int = 0
    stored_documents: int = 0
    changes: list[CorpusChange] = field(default_factory=list)

    def to_dict(self) -> dict[str, int]:
        """JSON-ready counts."""
        out = asdict(self)
        del out["stored_documents"], out["changes"]
        return out

    def summary(self) -> str:
        """One line for a corpus run: documents by outcome, passages written."""
        removed = f", {self.removed_documents} removed" if self.removed_documents else ""
        return (f"{self.documents} documents ({self.new_documents} new, "
                f"{self.changed_documents} changed, {self.unchanged_documents} unchanged"
                f"{removed}), {self.passages} passages written")


@dataclass(frozen=True)
class _Planned:
    doc: Document
    passages: list[Passage]
    kind: str = "new"
    head: DocumentHead | None = None  # what a removal closes
    at: datetime | None = None  # when it is removed


def _plan_one(doc: Document, head: DocumentHead | None, path: str, chunk_chars: int,
              max_passage_chars: int, now: datetime) -> tuple[str, list[Passage]]:
    """("new" | "changed" | "unchanged" | "removed", the passages to write) for one
    document."""
    if doc.deleted:
        at = doc.valid_from or now
        if head is None or (head.valid_to is not None and head.valid_to <= at):
            return "unchanged", []  # not held, or gone by then already
        if at <= head.valid_from:
            raise InputError(
                path, f"document {doc.id!r} is removed at {at.isoformat()}, which must be "
                f"after its stored version {head.version} starts "
                f"({head.valid_from.isoformat()})", line=doc.line, field="timestamp")
        return REMOVED, []
    chunks = chunk_text(doc.text, chunk_chars, max_passage_chars)
    if head is None:
        return "new", _passages(doc, chunks, 1, doc.valid_from or EPOCH)
    removed = head.valid_to is not None and doc.valid_to is None and head.valid_to <= now
    if document_digest(doc.title, doc.url, chunks) == head.digest and not removed:
        return "unchanged", []
    start = doc.valid_from or now
    if start <= head.valid_from:
        raise InputError(
            path, f"document {doc.id!r} changed, so it becomes version {head.version + 1}, "
            f"which must start after the stored version {head.version} (valid from "
            f"{head.valid_from.isoformat()}); its timestamp is {start.isoformat()}",
            line=doc.line, field="timestamp")
    if doc.valid_to is not None and doc.valid_to <= start:
        raise InputError(path, f"{doc.valid_to.isoformat()} is not after the new version's "
                         f"start {start.isoformat()}", line=doc.line, field="valid_to")
    return "changed", _passages(doc, chunks, head.version + 1, start)


async def plan_documents(store: IndexStore, docs: Sequence[Document], path: str,
                         chunk_chars: int, max_passage_chars: int, now: datetime,
                         report: IngestReport) -> list[_Planned]:
    """Compare every document with the store's latest version of it (reads only); the
    new and changed ones with their passages, in file order. Counts go to ``report``."""
    heads: dict[tuple[str, str], DocumentHead] = {}
    by_tenant: dict[str, list[str]] = {}
    for d in docs:
        by_tenant.setdefault(d.tenant, []).append(d.id)
    for tenant, ids in by_tenant.items():
        for i in range(0, len(ids), HEADS_BATCH):
            for doc_id, head in (await store.document_heads(
                    tenant, ids[i : i + HEADS_BATCH])).items():
                heads[(tenant, doc_id)] = head
    plan: list[_Planned] = []
    for d in docs:
        try:
            outcome, passages = _plan_one(d, heads.get((d.tenant, d.id)), path, chunk_chars,
                                          max_passage_chars, now)
        except InputError as exc:
            raise _nothing_written(exc) from None
        setattr(report, f"{outcome}_documents", getattr(report, f"{outcome}_documents") + 1)
        if outcome == REMOVED:
            plan.append(_Planned(d, [], outcome, heads[(d.tenant, d.id)], d.valid_from or now))
        elif passages:
            plan.append(_Planned(d, passages, outcome))
    report.documents = len(docs)
    return plan


async def ingest_corpus(index: NuggetIndex, path: str | Path, tenant: str | None = None, *,
                        batch: int = 256, progress: Callable[[IngestReport], None] | None = None,
                        now: datetime | None = None,
                        documents: Sequence[Document] | None = None) -> IngestReport:
    """Validate, compare and store a corpus file (see the module docstring).

    ``progress(report)`` is called after each write. InputError (nothing written) for a
    bad file or line; IngestInterruptedError when the store fails part way, naming the
    line it stopped at and how many documents were stored. ``documents``: the file's
    records already read by :func:`read_documents` (callers that validate inputs before
    opening the store).
    """
    settings = index.settings
    name = str(path)
    docs = documents if documents is not None else read_documents(path, tenant,
                                                                  settings=settings)
    report = IngestReport()
    at = now or utcnow()
    plan = await plan_documents(index.store, docs, name, settings.chunk_chars,
                                settings.max_passage_chars, at, report)
    pending: list[_Planned] = []

    async def flush() -> None:
        passages = [p for item in pending for p in item.passages]
        closed: dict[int, list[str]] = {}
        try:
            report.new_passages += await index.ingest_passages(passages)
            for item in pending:
                if item.kind == REMOVED and item.at is not None:
                    closed[id(item)] = await index.remove_document(item.doc.tenant,
                                                                   item.doc.id, item.at)
        except NuggetflowError as exc:
            first = pending[0].doc
            raise IngestInterruptedError(
                f"{name}: writing stopped at line {first.line} (document {first.id!r}): "
                f"{exc}; {report.stored_documents} of {len(plan)} new or changed documents "
                "(the lines before) are stored, running the file again resumes",
                retriable=exc.retriable) from exc
        report.passages += len(passages)
        report.stored_documents += len(pending)
        report.changes.extend(_changes(pending, at, closed))
        pending.clear()
        if progress:
            progress(report)

    size = 0
    for item in plan:
        pending.append(item)
        size += len(item.passages)
        if size >= batch:
            await flush()
            size = 0
    if pending:
        await flush()
    if progress and not plan:
        progress(report)
    return report


def _changes(written: Sequence[_Planned], at: datetime,
             closed: dict[int, list[str]]) -> list[CorpusChange]:
    """One change per tenant of a write, documents in file order (``closed``: the passage
    ids each removal closed, by ``id()`` of its plan item)."""
    by_tenant: dict[str, list[ChangedDocument]] = {}
    for item in written:
        if item.kind == REMOVED:
            ids = tuple(closed.get(id(item), ()))
            if not ids or item.head is None:
                continue  # closed meanwhile by another run: nothing changed here
            entry = ChangedDocument(item.doc.id, item.head.version, REMOVED, ids)
        else:
            entry = ChangedDocument(item.doc.id, item.passages[0].version, item.kind,
                                    tuple(p.id for p in item.passages))
        by_tenant.setdefault(item.doc.tenant, []).append(entry)
    return [CorpusChange(t, tuple(docs), at) for t, docs in by_tenant.items()]
