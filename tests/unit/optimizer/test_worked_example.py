"""The INO paper's worked example (docs/architecture.md, "INO"), end to end on the local
backend with its lexical generator.

A small portal corpus holds a generic "Resetting your own password" article. The standard
nugget (variant A) and variant D fail the probe "user reset isn't working for my team
lead": the generic article wins the answer. INO revises the nugget from that trace and
passes every probe within 3 iterations, without adding a fact and without writing a
sentence the user did not write: the disambiguation the paper describes ("not your own
password") goes into an anchor, and the title becomes the correction's own statement.

The paper scores a nugget by one vector (title + body); the stores here also score it by
its anchors' vectors (best cosine). Both setups are run.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest

from nuggetflow.settings import Settings
from optimizer.guard import factual_tokens
from optimizer.harness import BuiltinHarness
from optimizer.local import local_roles
from optimizer.pipeline import Optimizer
from optimizer.types import FeedbackContext, correction_context
from query.backends.sqlite import SQLiteStore
from query.corpus import Document, passages_of
from query.embeddings import MiniLMEmbedder
from query.index import NuggetIndex
from stream.synthetic import PORTAL  # the worked example's portal corpus

T0 = datetime(2025, 1, 1, tzinfo=UTC)
PROBE = "user reset isn't working for my team lead"
EVENT = FeedbackContext(
    event_id="fb-1001", tenant="acme",
    query="why can't my analyst reset another teammate's password from the admin panel?",
    answer="Anyone with admin-panel access can reset passwords.",
    comment="No, that's wrong. In portal v8.2 only the Workspace Owner role can reset another "
            "user's password; the Analyst role can view team members but not reset.",
    rating="down", timestamp=T0)


@pytest.fixture(params=[False, True], ids=["single-vector", "anchor-vectors"])
async def optimizer(request: pytest.FixtureRequest, embedder: MiniLMEmbedder,
                    settings: Settings) -> AsyncIterator[Optimizer]:
    store = SQLiteStore(":memory:")
    index = NuggetIndex(store, embedder, settings)
    await index.start()
    for doc_id, title, text in PORTAL:
        await index.ingest_passages(passages_of(Document(doc_id, "acme", title, text,
                                                         valid_from=T0), 800))
    roles = local_roles()
    harness = BuiltinHarness(store, embedder, roles.generator, settings,
                             as_of=datetime(2025, 6, 1, tzinfo=UTC),
                             anchor_vectors=request.param)
    yield Optimizer(store, embedder, roles, settings, harness=harness)
    await harness.close()
    await index.stop()


def probe_of(outcome: object, iteration: int, query: str) -> object:
    result = outcome.result  # type: ignore[attr-defined]
    return next(p for p in result.history[iteration - 1].probes if p.query == query)


@pytest.mark.parametrize("variant", ["A", "D"])
async def test_standard_nugget_fails_the_team_lead_probe(optimizer: Optimizer,
                                                         variant: str) -> None:
    out = await optimizer.process(EVENT, variant=variant, extra_probes=(PROBE,))
    assert out.extraction.can_produce_nugget
    assert out.nugget is not None and out.result is not None
    assert not out.result.passed and out.result.iterations == 1
    probe = probe_of(out, 1, PROBE)
    assert not probe.passed  # type: ignore[attr-defined]
    assert probe.competitors[0].title == "Resetting your own password"  # type: ignore[attr-defined]


async def test_ino_passes_within_three_iterations_without_new_facts(optimizer: Optimizer
                                                                    ) -> None:
    out = await optimizer.process(EVENT, variant="E", extra_probes=(PROBE,))
    assert out.result is not None and out.nugget is not None
    assert out.result.passed and 2 <= out.result.iterations <= 3
    assert all(p.passed for p in out.result.history[-1].probes)
    assert probe_of(out, out.result.iterations, PROBE).passed  # type: ignore[attr-defined]
    assert out.result.rejected == []
    final = out.result.draft
    context = correction_context(EVENT)
    assert factual_tokens(f"{final.title}\n{final.body}") <= (
        factual_tokens(context) | {w for w in context.lower().split()})
    assert "Workspace Owner" in final.body and "portal v8.2" in final.title
    assert final.body == out.extraction.body  # the user's words, nothing appended
    assert any("your own password" in a for a in final.anchors)  # the paper's contrast
    first = out.result.history[0]
    assert any(e.startswith("title:") for e in first.edits)
    assert any("told apart" in e for e in first.edits)
    # The nugget record carries the trace and the provenance.
    assert out.nugget.optimization is not None
    assert out.nugget.optimization["iterations"] == out.result.iterations
    assert out.nugget.provenance.event_id == "fb-1001"
    assert out.nugget.fact.object == "Workspace Owner"
    assert out.nugget.fact.scope == "portal v8.2"
    assert out.nugget.validity.inferred
    calls = out.accounting["calls_by_role"]
    assert calls["actionability"] == 1 and calls["anchors"] == 1 and calls["probes"] == 1
    assert calls["reflector"] <= 3
    assert calls["generator"] <= len(out.result.probes) * out.result.iterations
