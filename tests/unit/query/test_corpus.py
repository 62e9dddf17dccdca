"""Corpus JSONL parsing, chunking, ingestion with progress."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from nuggetflow.errors import ValidationError
from nuggetflow.settings import Settings
from query.backends.sqlite import SQLiteStore
from query.corpus import chunk_text, ingest_corpus, read_documents
from query.embeddings import MiniLMEmbedder
from query.index import NuggetIndex


def write(path: Path, rows: Sequence[object]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def test_chunking_respects_sentences_and_size() -> None:
    text = " ".join(f"Sentence number {i} is here." for i in range(40))
    chunks = chunk_text(text, 120)
    assert all(len(c) <= 120 for c in chunks)
    assert " ".join(chunks) == text
    assert chunk_text("Para one.\n\nPara two.", 800) == ["Para one. Para two."]


@pytest.mark.parametrize(("row", "field"), [
    ({"tenant": "t", "title": "x", "text": "y"}, "id"),
    ({"id": "1", "title": "x", "text": "y"}, "tenant"),
    ({"id": "1", "tenant": "t", "title": "x", "text": ""}, "text"),
    ({"id": "1", "tenant": "t", "text": "y", "timestamp": "yesterday"}, "timestamp"),
    ({"id": "1", "tenant": "t", "text": "y", "timestamp": "2024-02-01",
      "valid_to": "2024-01-01"}, "valid_to"),
    ("not an object", "line"),
])
def test_malformed_lines_name_the_field(tmp_path: Path, row: object, field: str) -> None:
    with pytest.raises(ValidationError) as err:
        list(read_documents(write(tmp_path / "c.jsonl", [row])))
    assert err.value.field == field
    assert "line 1" in str(err.value)


async def test_ingest_validates_whole_file_before_writing(
        tmp_path: Path, embedder: MiniLMEmbedder, settings: Settings) -> None:
    idx = NuggetIndex(SQLiteStore(tmp_path / "c.db"), embedder, settings)
    await idx.start()
    rows = [{"id": f"d{i}", "tenant": "acme", "title": f"T{i}", "text": f"Text {i}."}
            for i in range(5)]
    bad = write(tmp_path / "bad.jsonl", [*rows, {"id": "x", "tenant": "acme"}])
    with pytest.raises(ValidationError):
        await ingest_corpus(idx.ingest_passages, bad, None, 800)
    assert (await idx.store.stats())["passages"] == 0
    seen: list[tuple[int, int, int]] = []
    good = write(tmp_path / "good.jsonl", rows)
    got = await ingest_corpus(idx.ingest_passages, good, "other", 800, batch=2,
                              progress=lambda *a: seen.append(a))
    assert got == (5, 5, 5)
    assert seen[-1] == (5, 5, 5) and len(seen) >= 3
    assert await idx.store.has_tenant("other") and not await idx.store.has_tenant("acme")
    again = await ingest_corpus(idx.ingest_passages, good, "other", 800)
    assert again == (5, 5, 0)
    await idx.stop()
