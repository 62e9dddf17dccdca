"""Corpus ingestion (query.corpus.ingest_corpus) on every backend: tenant-scoped document
ids, document versions, all-or-nothing files. Each backend's test module subclasses
:class:`CorpusConformance` and provides the ``index`` fixture (a NuggetIndex on a started,
empty store)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest

from nuggetflow.errors import InputError, ValidationError
from query.corpus import ingest_corpus
from query.index import NuggetIndex
from query.model import Passage, View
from query.retrieval import RetrieveRequest

NOW = datetime(2025, 6, 1, tzinfo=UTC)


def write(path: Path, rows: Sequence[object]) -> Path:
    """A JSONL file of the rows (JSON escapes, so a lone surrogate stays one)."""
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def doc(doc_id: str, text: str, tenant: str = "acme", **extra: object) -> dict[str, object]:
    return {"id": doc_id, "tenant": tenant, "title": f"Page {doc_id}", "text": text, **extra}


async def search(index: NuggetIndex, tenant: str, query: str,
                 as_of: datetime = NOW) -> list[tuple[str, str]]:
    res = await index.retriever.retrieve(RetrieveRequest(tenant, query, as_of=as_of,
                                                         view=View.ACTIVE, k=5),
                                         lexical_only=True)
    return [(h.id, h.text) for h in res.hits]


class CorpusConformance:
    """Ingestion contract; subclasses provide ``index``."""

    async def test_the_same_document_id_in_two_tenants(self, index: NuggetIndex,
                                                       tmp_path: Path) -> None:
        acme = write(tmp_path / "acme.jsonl", [doc("a11y", "Screen readers speak aloud.")])
        t3 = write(tmp_path / "t3.jsonl",
                   [doc("a11y", "The magnifier enlarges the display.", tenant="t3")])
        first = await ingest_corpus(index, acme, now=NOW)
        second = await ingest_corpus(index, t3, now=NOW)
        assert (first.new_documents, first.new_passages) == (1, 1)
        assert (second.new_documents, second.new_passages) == (1, 1)
        assert await search(index, "t3", "magnifier enlarges") == [
            ("a11y#0", "The magnifier enlarges the display.")]
        assert await search(index, "t3", "screen readers") == []
        assert await search(index, "acme", "screen readers") == [
            ("a11y#0", "Screen readers speak aloud.")]
        assert (await index.store.fetch("t3", ["a11y#0"]))["a11y#0"].tenant == "t3"

    async def test_a_changed_document_becomes_a_new_version(self, index: NuggetIndex,
                                                            tmp_path: Path) -> None:
        v1 = write(tmp_path / "v1.jsonl", [
            doc("policy", "Passwords expire every 90 days.", timestamp="2024-01-01"),
            doc("other", "Printers are set up in Settings.")])
        await ingest_corpus(index, v1, now=NOW)
        v2 = write(tmp_path / "v2.jsonl", [
            doc("policy", "Passwords expire every 30 days.", timestamp="2025-01-01"),
            doc("other", "Printers are set up in Settings.")])
        report = await ingest_corpus(index, v2, now=NOW)
        assert report.to_dict() == {"documents": 2, "new_documents": 0,
                                    "changed_documents": 1, "unchanged_documents": 1,
                                    "removed_documents": 0,
                                    "passages": 1, "new_passages": 1}
        assert await search(index, "acme", "passwords expire") == [
            ("policy#0@v2", "Passwords expire every 30 days.")]
        old = datetime(2024, 6, 1, tzinfo=UTC)
        assert await search(index, "acme", "passwords expire", as_of=old) == [
            ("policy#0", "Passwords expire every 90 days.")]
        closed = (await index.store.fetch("acme", ["policy#0"]))["policy#0"]
        assert isinstance(closed, Passage) and closed.valid_to == datetime(2025, 1, 1, tzinfo=UTC)
        again = await ingest_corpus(index, v2, now=NOW)
        assert (again.unchanged_documents, again.passages, again.new_passages) == (2, 0, 0)

    async def test_a_changed_document_without_timestamp_is_valid_from_now(
            self, index: NuggetIndex, tmp_path: Path) -> None:
        await ingest_corpus(index, write(tmp_path / "a.jsonl", [doc("p", "Old text here.")]),
                            now=NOW)
        await ingest_corpus(index, write(tmp_path / "b.jsonl", [doc("p", "New text here.")]),
                            now=NOW)
        head = (await index.store.document_heads("acme", ["p"]))["p"]
        assert (head.version, head.valid_from) == (2, NOW)
        assert await search(index, "acme", "text") == [("p#0@v2", "New text here.")]

    async def test_a_changed_document_must_start_after_the_stored_version(
            self, index: NuggetIndex, tmp_path: Path) -> None:
        await ingest_corpus(index, write(tmp_path / "a.jsonl", [
            doc("p", "Old text.", timestamp="2025-01-01")]), now=NOW)
        late = write(tmp_path / "b.jsonl", [doc("q", "Fine."),
                                            doc("p", "New text.", timestamp="2024-01-01")])
        with pytest.raises(InputError) as err:
            await ingest_corpus(index, late, now=NOW)
        assert (err.value.line, err.value.field) == (2, "timestamp")
        assert "version 2" in str(err.value) and str(late) in str(err.value)
        assert await index.store.document_heads("acme", ["q"]) == {}

    async def test_a_removed_document_is_gone_from_then_on(self, index: NuggetIndex,
                                                           tmp_path: Path) -> None:
        await ingest_corpus(index, write(tmp_path / "a.jsonl", [
            doc("vpn", "The VPN gateway is vpn2.corp.", timestamp="2024-01-01"),
            doc("vpn-faq", "The VPN client is WireGuard.", timestamp="2024-01-01")]), now=NOW)
        await ingest_corpus(index, write(tmp_path / "b.jsonl", [
            doc("vpn", "The VPN gateway is vpn3.corp now.", timestamp="2024-06-01")]), now=NOW)
        gone = write(tmp_path / "gone.jsonl", [
            {"id": "vpn", "tenant": "acme", "deleted": True, "timestamp": "2025-01-01"},
            {"id": "never-held", "tenant": "acme", "deleted": True}])
        report = await ingest_corpus(index, gone, now=NOW)
        assert (report.removed_documents, report.unchanged_documents, report.passages) == (
            1, 1, 0)
        [change] = report.changes
        assert [(d.doc_id, d.version, d.kind, d.passage_ids) for d in change.documents] == [
            ("vpn", 2, "removed", ("vpn#0@v2",))]
        assert await search(index, "acme", "gateway") == []
        assert await search(index, "acme", "gateway", as_of=datetime(
            2024, 9, 1, tzinfo=UTC)) == [("vpn#0@v2", "The VPN gateway is vpn3.corp now.")]
        assert await search(index, "acme", "gateway", as_of=datetime(
            2024, 3, 1, tzinfo=UTC)) == [("vpn#0", "The VPN gateway is vpn2.corp.")]
        closed = (await index.store.fetch("acme", ["vpn#0@v2"]))["vpn#0@v2"]
        assert isinstance(closed, Passage) and closed.valid_to == datetime(2025, 1, 1, tzinfo=UTC)
        assert await search(index, "acme", "wireguard") == [
            ("vpn-faq#0", "The VPN client is WireGuard.")]
        # again: nothing left to remove, nothing changes
        again = await ingest_corpus(index, gone, now=NOW)
        assert (again.removed_documents, again.unchanged_documents, again.changes) == (0, 2, [])
        # the store's operation, closing twice or before the version started
        assert await index.store.close_document("acme", "vpn", NOW) == []
        with pytest.raises(ValidationError) as err:
            await index.store.close_document("acme", "vpn-faq", datetime(2023, 1, 1,
                                                                         tzinfo=UTC))
        assert err.value.field == "timestamp"
        assert await search(index, "acme", "wireguard") != []
        # the same text again brings it back as a new version
        back = await ingest_corpus(index, write(tmp_path / "c.jsonl", [
            doc("vpn", "The VPN gateway is vpn3.corp now.")]), now=NOW)
        assert back.changed_documents == 1
        assert await search(index, "acme", "gateway") == [
            ("vpn#0@v3", "The VPN gateway is vpn3.corp now.")]

    async def test_a_removal_must_come_after_the_version_it_ends(
            self, index: NuggetIndex, tmp_path: Path) -> None:
        await ingest_corpus(index, write(tmp_path / "a.jsonl", [
            doc("p", "Text.", timestamp="2025-01-01")]), now=NOW)
        early = write(tmp_path / "b.jsonl", [
            {"id": "p", "tenant": "acme", "deleted": True, "timestamp": "2024-01-01"}])
        with pytest.raises(InputError) as err:
            await ingest_corpus(index, early, now=NOW)
        assert (err.value.line, err.value.field) == (1, "timestamp")
        assert await search(index, "acme", "text") == [("p#0", "Text.")]

    async def test_a_duplicate_id_in_one_file_names_both_lines(self, index: NuggetIndex,
                                                               tmp_path: Path) -> None:
        path = write(tmp_path / "dup.jsonl", [
            doc("dup-1", "First record."), doc("x", "Other."),
            doc("dup-1", "Second record. " * 200)])
        with pytest.raises(InputError) as err:
            await ingest_corpus(index, path, now=NOW)
        assert (err.value.line, err.value.field) == (3, "id")
        assert "line 1" in str(err.value)
        assert await index.store.document_heads("acme", ["dup-1", "x"]) == {}

    async def test_a_bad_line_late_in_the_file_writes_nothing(self, index: NuggetIndex,
                                                              tmp_path: Path) -> None:
        rows: list[object] = [doc(f"d{i}", f"Text of page {i}.") for i in range(420)]
        rows[399] = doc("d399", "A lone surrogate \ud800 in the text.")
        path = write(tmp_path / "c.jsonl", rows)
        with pytest.raises(InputError) as err:
            await ingest_corpus(index, path, batch=16, now=NOW)
        assert (err.value.line, err.value.field) == (400, "text")
        assert "surrogate" in str(err.value)
        assert str(err.value).endswith("(nothing from the file was written)")
        assert not await index.store.has_tenant("acme")

    @pytest.mark.parametrize(("extra", "field", "why"), [
        ({"title": {"evil": 1}}, "title", "must be a string, got an object"),
        ({"url": ["http://x"]}, "url", "must be a string, got an array"),
        ({"timestamp": True}, "timestamp", "got a boolean"),
        ({"valid_to": {"at": 1}}, "valid_to", "got an object"),
        ({"id": 7}, "id", "must be a string, got a number"),
        ({"tenant": ["acme"]}, "tenant", "must be a string, got an array"),
        ({"text": None}, "text", "is missing"),
        ({"timestamp": float("nan")}, "timestamp", "finite"),
    ])
    async def test_wrong_types_are_rejected_with_line_and_field(
            self, index: NuggetIndex, tmp_path: Path, extra: dict[str, object], field: str,
            why: str) -> None:
        path = tmp_path / "t.jsonl"
        path.write_text(json.dumps(doc("good", "Fine.")) + "\n"
                        + json.dumps({**doc("bad", "Text."), **extra}) + "\n")
        with pytest.raises(InputError) as err:
            await ingest_corpus(index, path, now=NOW)
        assert (err.value.line, err.value.field) == (2, field)
        assert why in str(err.value)
        assert str(err.value).startswith(f"{path} line 2: field {field}: ")
        assert not await index.store.has_tenant("acme")
