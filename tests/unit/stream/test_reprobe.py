"""Re-probing on corpus change, end to end on the embedded runner (optimizer.reprobe,
Steps.reprobe): published nuggets, then a corpus write, then what the re-probe step
finds and writes. The local roles are deterministic, so each scenario has one outcome."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from nuggetflow.settings import Settings
from query.corpus import CorpusChange, ingest_corpus
from query.index import NuggetIndex
from query.model import Nugget, Publication
from query.usage import FlagKind
from stream.metrics import WorkerMetrics
from stream.runner import EmbeddedRunner, RunReport
from stream.steps import Steps
from stream.synthetic import event
from stream.topics import Topics
from tests.support.corpus_change import AUDIT, FAQ, RESET, UNRELATED


async def publish(steps: Steps, index: NuggetIndex, tenant: str) -> dict[str, Nugget]:
    """The reset and audit corrections of ``tenant`` as published nuggets (approved by
    hand when the tenant's policy is manual)."""
    events = [event(f"{tenant}-{name}", tenant, q, a, c, minutes=i)
              for i, (name, (q, a, c)) in enumerate((("reset", RESET), ("audit", AUDIT)))]
    await EmbeddedRunner(steps, Topics()).run(
        (n, json.dumps(e).encode()) for n, e in enumerate(events, 1))
    out = {}
    for name in ("reset", "audit"):
        [made] = await index.store.find_by_event(tenant, f"{tenant}-{name}")
        head = await index.head(tenant, made.id)
        if head.publication is not Publication.PUBLISHED:
            head = await index.approve(tenant, head.id, reviewer="ko")
        out[name] = head
    return out


async def change(index: NuggetIndex, tmp_path: Path, tenant: str,
                 *docs: Mapping[str, object]) -> list[CorpusChange]:
    path = tmp_path / f"change-{docs[0]['id']}.jsonl"
    path.write_text("".join(json.dumps({**d, "tenant": tenant}) + "\n" for d in docs))
    return (await ingest_corpus(index, path)).changes


async def reprobe(steps: Steps, changes: list[CorpusChange]) -> RunReport:
    return await EmbeddedRunner(steps, Topics()).reprobe(c.to_bytes() for c in changes)


async def test_a_change_that_buries_a_nugget_gets_it_reoptimized_and_published_again(
        steps: Steps, index: NuggetIndex, tmp_path: Path, metrics: WorkerMetrics) -> None:
    before = await publish(steps, index, "acme")  # acme auto-publishes
    changes = await change(index, tmp_path, "acme", FAQ)
    assert [[p for d in c.documents for p in d.passage_ids] for c in changes] == [
        ["faq-portal-reset#0"]]
    report = await reprobe(steps, changes)
    assert report.outcomes[("reprobe", "reprobed")] == 1 and not report.dead_letters

    reset = before["reset"]
    head = await index.head("acme", reset.id)
    assert head.version == reset.version + 1 and head.publication is Publication.PUBLISHED
    assert head.reviewer == "reprobe" and head.change_reason.startswith("edit by reprobe")
    # INO revised the wording around the same facts: the body says what it said
    assert head.body == reset.body and head.anchors != reset.anchors
    [trace] = await index.store.traces("acme", reset.lineage_id or reset.id)
    assert trace.outcome == "reoptimized" and trace.version_id == reset.id
    assert trace.detail["new_version"] == head.id
    assert trace.detail["passages"] == ["faq-portal-reset#0"]
    failed = [p["query"] for p in trace.detail["probes"] if not p["passed"]]
    assert failed, "the trace shows the probes the change made fail"
    assert trace.detail["optimization"]["passed"] is True
    assert trace.detail["proposal"]["anchors"] == list(head.anchors)

    # the audit nugget shares a probe word with the page: re-probed, still passing
    audit = before["audit"]
    [atrace] = await index.store.traces("acme", audit.lineage_id or audit.id)
    assert atrace.outcome == "passed" and all(p["passed"] for p in atrace.detail["probes"])
    assert (await index.head("acme", audit.id)).id == audit.id, "nothing written for it"
    assert await index.store.review_flags("acme") == []
    assert metrics.registry.get_sample_value(
        "nuggetflow_reprobe_nuggets_total", {"tenant": "acme", "outcome": "reoptimized"}) == 1

    # the same change handled again (a redelivery): the re-optimized head passes now
    await reprobe(steps, changes)
    assert (await index.head("acme", reset.id)).id == head.id
    assert [t.outcome for t in await index.store.traces(
        "acme", reset.lineage_id or reset.id)] == ["reoptimized", "passed"]


async def test_a_change_no_probe_reaches_reprobes_nothing(
        steps: Steps, index: NuggetIndex, tmp_path: Path) -> None:
    before = await publish(steps, index, "acme")
    results: list[str] = []
    report = await EmbeddedRunner(steps, Topics(), on_result=lambda a, r: results.append(
        r.detail)).reprobe(c.to_bytes() for c in await change(index, tmp_path, "acme",
                                                              UNRELATED))
    assert report.outcomes[("reprobe", "reprobed")] == 1 and results == ["none reached"]
    for n in before.values():
        assert await index.store.traces("acme", n.lineage_id or n.id) == []
        assert (await index.head("acme", n.id)).id == n.id


async def test_a_removed_page_reprobes_the_nuggets_it_competed_with(
        steps: Steps, index: NuggetIndex, tmp_path: Path) -> None:
    before = await publish(steps, index, "acme")
    await change(index, tmp_path, "acme", UNRELATED)
    await reprobe(steps, await change(index, tmp_path, "acme", FAQ))  # buries, re-optimized
    reset = before["reset"]
    lineage = reset.lineage_id or reset.id
    assert [t.outcome for t in await index.store.traces("acme", lineage)] == ["reoptimized"]

    gone = await change(index, tmp_path, "acme", {"id": FAQ["id"], "deleted": True})
    assert [(d.doc_id, d.kind, d.passage_ids) for c in gone for d in c.documents] == [
        (FAQ["id"], "removed", ("faq-portal-reset#0",))]
    await reprobe(steps, gone)
    traces = await index.store.traces("acme", lineage)
    assert [t.outcome for t in traces] == ["reoptimized", "passed"]
    assert traces[-1].detail["passages"] == ["faq-portal-reset#0"]
    assert not await index.store.review_flags("acme")

    # a page no probe reached: its removal re-probes nothing
    results: list[str] = []
    await EmbeddedRunner(steps, Topics(), on_result=lambda a, r: results.append(
        r.detail)).reprobe(c.to_bytes() for c in await change(
            index, tmp_path, "acme", {"id": UNRELATED["id"], "deleted": True}))
    assert results == ["none reached"]
    assert len(await index.store.traces("acme", lineage)) == 2


async def test_a_page_that_now_states_the_fact_proposes_to_deprecate_the_nugget(
        steps: Steps, index: NuggetIndex, tmp_path: Path) -> None:
    before = await publish(steps, index, "acme")
    roles = {"id": "acme-kb-roles", "title": "Roles in the portal",
             "text": "The portal has three roles: Workspace Owner, Team Lead and Analyst. "
                     "Since portal v8.2 only the Workspace Owner can reset another user's "
                     "password; team leads cannot."}
    changes = await change(index, tmp_path, "acme", roles)
    assert changes[0].documents[0].kind == "changed"  # a rewrite of a shipped page
    await reprobe(steps, changes)
    reset = before["reset"]
    [flag] = await index.store.review_flags("acme")
    assert flag.kind is FlagKind.REDUNDANT and flag.version_id == reset.id
    assert "acme-kb-roles now states what it says" in flag.reason
    [trace] = await index.store.traces("acme", reset.lineage_id or reset.id)
    assert trace.outcome == "redundant" and trace.detail["document"] == "acme-kb-roles"
    head = await index.head("acme", reset.id)
    assert head.id == reset.id, "a person decides: nothing is deprecated by the re-probe"


async def test_under_the_manual_policy_the_revision_waits_for_a_reviewer(
        steps: Steps, index: NuggetIndex, tmp_path: Path) -> None:
    before = await publish(steps, index, "globex")  # globex: manual review policy
    await reprobe(steps, await change(index, tmp_path, "globex", FAQ))
    reset = before["reset"]
    assert (await index.head("globex", reset.id)).id == reset.id, "published version stays"
    [flag] = await index.store.review_flags("globex")
    assert flag.kind is FlagKind.BURIED and "INO proposes a revision" in flag.reason
    assert "review policy is manual" in flag.reason
    [trace] = await index.store.traces("globex", reset.lineage_id or reset.id)
    assert trace.outcome == "proposed" and "new_version" not in trace.detail
    assert trace.detail["proposal"]["body"] == reset.body


async def test_a_change_nothing_can_fix_raises_a_buried_flag(
        steps: Steps, index: NuggetIndex, tmp_path: Path) -> None:
    before = await publish(steps, index, "acme")
    # a page per probe query of the reset nugget: every answer has a better source now
    reset = before["reset"]
    pages = [{"id": f"faq-{i}", "title": q.capitalize(),
              "text": f"{q.capitalize()} Team Leads can reset another user's password from "
                      "the admin panel: open the gear menu and choose Reset password."}
             for i, q in enumerate((reset.optimization or {})["probes"])]
    await reprobe(steps, await change(index, tmp_path, "acme", *pages))
    flags = {f.kind: f for f in await index.store.review_flags("acme")}
    assert "no revision that passes" in flags[FlagKind.BURIED].reason
    [trace] = await index.store.traces("acme", reset.lineage_id or reset.id)
    assert trace.outcome == "buried" and trace.detail["optimization"]["passed"] is False
    assert (await index.head("acme", reset.id)).id == reset.id


async def test_a_malformed_change_record_goes_to_the_dead_letters(steps: Steps) -> None:
    report = await EmbeddedRunner(steps, Topics()).reprobe(
        [b"not json", json.dumps({"tenant": "acme", "at": "2026-01-01T00:00:00+00:00",
                                  "documents": []}).encode()])
    assert [d.reason for d in report.dead_letters] == ["invalid_field", "invalid_field"]
    assert report.dead_letters[0].error.startswith("corpus_change: not JSON")
    assert report.dead_letters[1].error == "documents: must be a non-empty array"


def test_change_records_round_trip_and_name_the_bad_field(stream_settings: Settings) -> None:
    from datetime import UTC, datetime

    import pytest

    from nuggetflow.errors import ValidationError
    from query.corpus import ChangedDocument

    c = CorpusChange("acme", (ChangedDocument("kb-1", 2, "changed", ("kb-1#0@v2",)),
                              ChangedDocument("kb-2", 1, "removed", ("kb-2#0", "kb-2#1"))),
                     datetime(2026, 5, 1, tzinfo=UTC))
    assert CorpusChange.from_bytes(c.to_bytes()) == c
    assert (c.written_ids, c.removed_ids) == (["kb-1#0@v2"], ["kb-2#0", "kb-2#1"])
    assert c.id == CorpusChange.from_bytes(c.to_bytes()).id and c.id.startswith("cc-")
    bad = json.loads(c.to_bytes())
    for key, value, field in (("tenant", "", "tenant"), ("at", "yesterday", "at"),
                              ("documents", [{"id": "kb-1"}], "documents")):
        with pytest.raises(ValidationError) as err:
            CorpusChange.from_bytes(json.dumps({**bad, key: value}).encode())
        assert err.value.field == field
