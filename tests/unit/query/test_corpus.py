"""Corpus JSONL parsing and validation, chunking and size limits, interrupted runs."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest

from nuggetflow.errors import BackendUnavailableError, IngestInterruptedError, InputError
from nuggetflow.settings import Settings
from query.backends.sqlite import SQLiteStore
from query.corpus import IngestReport, chunk_text, ingest_corpus, read_documents
from query.embeddings import MiniLMEmbedder
from query.index import NuggetIndex
from query.model import Passage


def write(path: Path, rows: Sequence[object]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def test_chunking_respects_sentences_and_size() -> None:
    text = " ".join(f"Sentence number {i} is here." for i in range(40))
    chunks = chunk_text(text, 120)
    assert all(len(c) <= 120 for c in chunks)
    assert " ".join(chunks) == text
    assert chunk_text("Para one.\n\nPara two.", 800) == ["Para one. Para two."]


def test_a_single_long_word_is_split_at_characters() -> None:
    word = "x" * 10_000
    chunks = chunk_text(word, 800, 2000)
    assert all(len(c) <= 800 for c in chunks) and "".join(chunks) == word


def test_a_long_sentence_stays_whole_up_to_the_passage_limit() -> None:
    sentence = " ".join(["word"] * 300)  # 1,499 characters, no sentence end
    assert chunk_text(sentence, 800, 2000) == [sentence]
    longer = " ".join(["word"] * 600)  # 2,999 characters
    chunks = chunk_text(longer, 800, 2000)
    assert all(len(c) <= 800 for c in chunks) and " ".join(chunks) == longer


@pytest.mark.parametrize(("row", "field"), [
    ({"tenant": "t", "title": "x", "text": "y"}, "id"),
    ({"id": "1", "title": "x", "text": "y"}, "tenant"),
    ({"id": "1", "tenant": "t", "title": "x", "text": ""}, "text"),
    ({"id": "1", "tenant": "t", "text": "y", "timestamp": "yesterday"}, "timestamp"),
    ({"id": "1", "tenant": "t", "text": "y", "timestamp": "2024-02-01",
      "valid_to": "2024-01-01"}, "valid_to"),
    ({"id": "1\n2", "tenant": "t", "text": "y"}, "id"),
    ({"id": "1", "tenant": "t", "text": "y", "title": "t" * 1001}, "title"),
    ({"id": "d" * 181, "tenant": "t", "text": "y"}, "id"),  # its passage ids must be citable
    ({"id": "1", "tenant": "t" * 201, "text": "y"}, "tenant"),
    ({"id": "1", "tenant": "t", "text": "y", "deleted": "yes"}, "deleted"),
    ({"id": "1", "tenant": "t", "text": "still here", "deleted": True}, "text"),
    ({"id": "1", "tenant": "t", "deleted": True, "timestamp": "soon"}, "timestamp"),
    ("not an object", None),
])
def test_malformed_lines_name_the_field(tmp_path: Path, row: object, field: str | None
                                        ) -> None:
    with pytest.raises(InputError) as err:
        read_documents(write(tmp_path / "c.jsonl", [row]))
    assert err.value.field == field
    assert err.value.line == 1 and "line 1" in str(err.value)


def test_a_removal_needs_no_text(tmp_path: Path) -> None:
    [gone] = read_documents(write(tmp_path / "c.jsonl", [
        {"id": "kb-7", "tenant": "t", "deleted": True, "timestamp": "2025-03-01"}]))
    assert (gone.id, gone.deleted, gone.text, gone.valid_from) == (
        "kb-7", True, "", datetime(2025, 3, 1, tzinfo=UTC))


def test_a_document_over_the_limit_is_rejected(tmp_path: Path) -> None:
    path = write(tmp_path / "c.jsonl", [{"id": "ok", "tenant": "t", "text": "Fine."},
                                        {"id": "big", "tenant": "t", "text": "w" * 5000}])
    with pytest.raises(InputError) as err:
        read_documents(path, settings=Settings.from_env({}, max_document_chars=1000))
    assert (err.value.line, err.value.field) == (2, "text")
    assert "5000 characters" in str(err.value)
    assert "NUGGETFLOW_MAX_DOCUMENT_CHARS" in str(err.value)


def test_a_line_far_over_the_limit_is_rejected_unread(tmp_path: Path) -> None:
    """A 5 MB single-word line against a 1,000-character limit: only the first ~100 KB
    that a valid line could take are read."""
    path = tmp_path / "c.jsonl"
    with path.open("w") as fh:
        fh.write(json.dumps({"id": "big", "tenant": "t", "text": "w" * 5_000_000}) + "\n")
    with pytest.raises(InputError) as err:
        read_documents(path, settings=Settings.from_env({}, max_document_chars=1000))
    assert err.value.line == 1 and "longer than" in str(err.value)
    assert "NUGGETFLOW_MAX_DOCUMENT_CHARS=1000" in str(err.value)


async def test_a_long_single_word_document_becomes_bounded_passages(
        tmp_path: Path, embedder: MiniLMEmbedder) -> None:
    settings = Settings.from_env({}, max_document_chars=20_000, max_passage_chars=1000,
                                 chunk_chars=500)
    idx = NuggetIndex(SQLiteStore(tmp_path / "c.db"), embedder, settings)
    await idx.start()
    path = write(tmp_path / "c.jsonl", [{"id": "w", "tenant": "t", "text": "w" * 12_000}])
    report = await ingest_corpus(idx, path)
    assert (report.new_documents, report.passages) == (1, 24)
    passages = await idx.store.fetch("t", [f"w#{i}" for i in range(30)])
    assert len(passages) == 24
    assert all(len(p.text) <= 500 for p in passages.values())
    await idx.stop()


async def test_an_interrupted_run_says_where_it_stopped_and_resumes(
        tmp_path: Path, embedder: MiniLMEmbedder, settings: Settings) -> None:
    idx = NuggetIndex(SQLiteStore(tmp_path / "c.db"), embedder, settings)
    await idx.start()
    path = write(tmp_path / "c.jsonl", [{"id": f"d{i}", "tenant": "acme", "title": f"T{i}",
                                         "text": f"Text {i}."} for i in range(6)])
    real = idx.store.add_passages
    calls = 0

    async def flaky(passages: Sequence[Passage], vectors: object) -> int:
        nonlocal calls
        calls += 1
        if calls == 2:
            raise BackendUnavailableError("the store went away")
        return await real(passages, vectors)  # type: ignore[arg-type]

    idx.store.add_passages = flaky  # type: ignore[method-assign]
    seen: list[IngestReport] = []
    with pytest.raises(IngestInterruptedError) as err:
        await ingest_corpus(idx, path, batch=2, progress=seen.append)
    assert f"{path}: writing stopped at line 3 (document 'd2')" in str(err.value)
    assert "2 of 6 new or changed documents" in str(err.value)
    assert err.value.retriable
    assert sorted(await idx.store.document_heads("acme", [f"d{i}" for i in range(6)])) == [
        "d0", "d1"]
    again = await ingest_corpus(idx, path, batch=2)
    assert (again.unchanged_documents, again.new_documents, again.new_passages) == (2, 4, 4)
    await idx.stop()


async def test_progress_and_counts(tmp_path: Path, embedder: MiniLMEmbedder,
                                   settings: Settings) -> None:
    idx = NuggetIndex(SQLiteStore(tmp_path / "c.db"), embedder, settings)
    await idx.start()
    rows = [{"id": f"d{i}", "tenant": "acme", "title": f"T{i}", "text": f"Text {i}."}
            for i in range(5)]
    seen: list[tuple[int, int]] = []
    good = write(tmp_path / "good.jsonl", rows)
    got = await ingest_corpus(idx, good, "other", batch=2,
                              progress=lambda r: seen.append((r.stored_documents, r.passages)))
    assert got.to_dict() == {"documents": 5, "new_documents": 5, "changed_documents": 0,
                             "unchanged_documents": 0, "removed_documents": 0, "passages": 5,
                             "new_passages": 5}
    assert seen == [(2, 2), (4, 4), (5, 5)]
    assert await idx.store.has_tenant("other") and not await idx.store.has_tenant("acme")
    await idx.stop()
