"""The IndexStore contract as tests. Every backend's test module subclasses
:class:`StoreConformance` and provides the ``store`` fixture and :meth:`reopen`.

The same assertions run on the embedded SQLite store and on a real OpenSearch node.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Awaitable, Callable, Sequence
from datetime import date

import numpy as np
import pytest

from nuggetflow.errors import NotFoundError, ValidationError
from query.embeddings import MiniLMEmbedder, Vector
from query.model import ItemType, Kind, Nugget, Publication, State, View, next_version
from query.store import GovernanceFilter, IndexStore
from query.text import query_terms
from query.traces import NuggetTrace
from query.usage import FlagKind, ReviewFlag, UsageRow, UsageTotals
from tests.helpers import T0, days, make_nugget, make_passage

QUERY = "who can reset another user's password"


def flt(tenant: str = "acme", view: View = View.ACTIVE, **kw: object) -> GovernanceFilter:
    """A filter at T0 + 10 days unless as_of is given."""
    as_of = kw.pop("as_of", T0 + days(10))
    return GovernanceFilter(tenant=tenant, as_of=as_of, view=view, **kw)  # type: ignore[arg-type]


class StoreConformance:
    """Subclasses provide ``store`` (a started, empty store) and ``reopen``."""

    async def reopen(self, store: IndexStore) -> IndexStore:
        """Stop and start the same store (durability)."""
        raise NotImplementedError

    def twin(self, store: IndexStore) -> IndexStore:
        """Another handle on the same store, not started (what another process opens)."""
        raise NotImplementedError

    # helpers ------------------------------------------------------------------------

    @staticmethod
    async def put(store: IndexStore, embedder: MiniLMEmbedder, *nuggets: Nugget) -> None:
        vecs: Sequence[Vector | None] = list(embedder.embed([n.text for n in nuggets]))
        await store.write_nuggets(list(nuggets), vecs)

    @staticmethod
    async def ids(store: IndexStore, embedder: MiniLMEmbedder, f: GovernanceFilter,
                  query: str = QUERY) -> tuple[set[str], set[str]]:
        lex = await store.lexical(query_terms(query), f, 100)
        den = await store.dense(embedder.embed([query])[0], f, 100)
        return {s.id for s in lex}, {s.id for s in den}

    async def visible(self, store: IndexStore, embedder: MiniLMEmbedder,
                      f: GovernanceFilter) -> set[str]:
        """Ids seen by both retrievers; asserts both agree (filter inside both)."""
        lex, den = await self.ids(store, embedder, f)
        assert lex <= den, "every lexical hit passes the same filter in the dense query"
        return den

    # write / read -------------------------------------------------------------------

    async def test_write_get_roundtrip(self, store: IndexStore, embedder: MiniLMEmbedder
                                       ) -> None:
        n = make_nugget()
        await self.put(store, embedder, n)
        got = await store.get("acme", n.id)
        assert got == n

    async def test_get_unknown_id_or_other_tenant_is_not_found(
            self, store: IndexStore, embedder: MiniLMEmbedder) -> None:
        n = make_nugget()
        await self.put(store, embedder, n)
        with pytest.raises(NotFoundError):
            await store.get("acme", "n-missing")
        with pytest.raises(NotFoundError):
            await store.get("other", n.id)

    async def test_versions_move_head_and_keep_history(
            self, store: IndexStore, embedder: MiniLMEmbedder) -> None:
        v1 = make_nugget()
        await self.put(store, embedder, v1)
        v2 = next_version(v1, "edit", body="Only the Workspace Owner resets others' passwords.")
        await self.put(store, embedder, v2)
        hist = await store.history("acme", v1.id)
        assert [h.id for h in hist] == [v1.id, v2.id]
        assert [h.version for h in hist] == [1, 2]
        assert hist[1].parent_id == v1.id
        seen = await self.visible(store, embedder, flt())
        assert v2.id in seen and v1.id not in seen

    async def test_anchor_vectors_score_the_nugget(self, store: IndexStore,
                                                   embedder: MiniLMEmbedder) -> None:
        """Dense score = best cosine over the statement and its anchors; a new version
        with unchanged anchors (None) keeps them; superseded versions' anchors are
        filtered with their owner."""
        n = make_nugget(title="Workspace Owner resets passwords",
                        body="Only the Workspace Owner can reset another user's password.",
                        anchors=("my wallpaper picture keeps changing by itself",))
        query = "why does my desktop background picture change on its own"
        q = embedder.embed([query])[0]
        statement = float(embedder.embed([n.embedding_text])[0] @ q)
        anchor = float(embedder.embed(list(n.anchors))[0] @ q)
        assert anchor > statement + 0.2  # the query is about the anchor's words
        await store.write_nuggets([n], [embedder.embed([n.embedding_text])[0]],
                                  [embedder.embed(list(n.anchors))])
        hit = next(h for h in await store.dense(q, flt(), 10) if h.id == n.id)
        assert hit.score == pytest.approx(anchor, abs=1e-3)
        child = next_version(n, "reworded", T0 + days(1),
                             body="Only a Workspace Owner may reset other users' passwords.")
        await store.write_nuggets([child], [embedder.embed([child.embedding_text])[0]], [None])
        hits = {h.id: h.score for h in await store.dense(q, flt(), 10)}
        assert n.id not in hits, "the superseded version is filtered with its anchors"
        assert hits[child.id] == pytest.approx(anchor, abs=1e-3), "anchors carried over"
        plain = make_nugget(subject="other", obj="Value", title="Plain", sources=("ev-p",),
                            anchors=("my wallpaper picture keeps changing by itself",))
        await self.put(store, embedder, plain)  # written without anchor vectors
        hits = {h.id: h.score for h in await store.dense(q, flt(), 10)}
        assert hits[plain.id] < anchor - 0.1

    async def test_ping_answers(self, store: IndexStore) -> None:
        await store.ping()  # raises BackendUnavailableError when unreachable

    async def test_concurrent_edits_keep_a_single_chain(self, store: IndexStore,
                                                        embedder: MiniLMEmbedder) -> None:
        """Edits racing in one process take the writer lock in turn: every version is a
        child of the previous head (none derived from a stale head)."""
        import asyncio

        from nuggetflow.settings import Settings
        from query.index import NuggetIndex

        index = NuggetIndex(store, embedder, Settings.from_env({}))
        n = make_nugget()
        await self.put(store, embedder, n)
        await asyncio.gather(*(index.edit("acme", n.id, f"edit {i}", body=f"Body {i}.")
                               for i in range(6)))
        history = await store.history("acme", n.id)
        assert len(history) == 7
        for parent, child in itertools.pairwise(history):
            assert child.parent_id == parent.id

    # heads, pages, request ids: reads that do not grow with the lineage ------------------

    @staticmethod
    async def chain(store: IndexStore, embedder: MiniLMEmbedder, first: Nugget,
                    versions: int) -> list[Nugget]:
        """Write ``first`` and ``versions - 1`` alternating unpublish/approve children."""
        await StoreConformance.put(store, embedder, first)
        out, batch = [first], []
        for i in range(versions - 1):
            pub = (Publication.UNPUBLISHED if out[-1].publication is Publication.PUBLISHED
                   else Publication.PUBLISHED)
            out.append(next_version(out[-1], f"step {i}", T0 + days(1), publication=pub))
            batch.append(out[-1])
            if len(batch) == 100:
                await store.write_nuggets(batch, [None] * len(batch))
                batch = []
        if batch:
            await store.write_nuggets(batch, [None] * len(batch))
        return out

    async def test_head_and_history_pages(self, store: IndexStore,
                                          embedder: MiniLMEmbedder) -> None:
        chain = await self.chain(store, embedder, make_nugget(), 7)
        other = await self.chain(store, embedder, make_nugget(obj="Analyst", sources=("o",)), 2)
        for version in (chain[0], chain[3], chain[-1]):
            assert (await store.head("acme", version.id)) == chain[-1]
        pages, after = [], ""
        while True:
            page = await store.history_page("acme", chain[2].id, 3, after_id=after)
            pages.append([v.id for v in page])
            if len(page) < 3:
                break
            after = page[-1].id
        assert pages == [[v.id for v in chain[:3]], [v.id for v in chain[3:6]],
                         [chain[6].id]]
        assert await store.history_page("acme", chain[0].id, 100) == chain
        with pytest.raises(ValidationError) as err:
            await store.history_page("acme", chain[0].id, 3, after_id=other[0].id)
        assert err.value.field == "after_id"
        with pytest.raises(ValidationError):
            await store.history_page("acme", chain[0].id, 3, after_id="n-missing")
        for call in (store.head("acme", "n-missing"), store.head("globex", chain[0].id),
                     store.history_page("globex", chain[0].id, 3)):
            with pytest.raises(NotFoundError):
                await call

    async def test_lineage_version_by_number(self, store: IndexStore,
                                             embedder: MiniLMEmbedder) -> None:
        chain = await self.chain(store, embedder, make_nugget(), 5)
        for item in (chain[0].id, chain[3].id, chain[-1].id):  # lineage id or any version id
            for number in (1, 3, 5):
                assert await store.lineage_version("acme", item, number) == chain[number - 1]
        for number in (0, 6, -1):
            with pytest.raises(NotFoundError) as err:
                await store.lineage_version("acme", chain[0].id, number)
            assert err.value.field == "version"
        for tenant, item in (("acme", "n-missing"), ("globex", chain[0].id)):
            with pytest.raises(NotFoundError) as err:
                await store.lineage_version(tenant, item, 1)
            assert err.value.field == "id"

    async def test_heads_page_lists_heads_by_publication_in_id_order(
            self, store: IndexStore, embedder: MiniLMEmbedder) -> None:
        """The review queue: heads (never earlier versions) in the asked publications, in
        id order, a page at a time, per tenant."""
        pending = [make_nugget(obj=f"Role {i}", sources=(f"ev-{i}",),
                               publication=Publication.PENDING_REVIEW) for i in range(5)]
        draft = make_nugget(obj="Draft role", sources=("ev-d",), publication=Publication.DRAFT)
        published = make_nugget(obj="Published role", sources=("ev-p",))
        approved = make_nugget(obj="Approved role", sources=("ev-a",),
                               publication=Publication.PENDING_REVIEW)
        resubmitted = make_nugget(obj="Edited role", sources=("ev-e",))
        theirs = make_nugget("globex", obj="Their role", publication=Publication.PENDING_REVIEW)
        await self.put(store, embedder, *pending, draft, published, approved, resubmitted,
                       theirs)
        approved2 = next_version(approved, "approve", T0 + days(1),
                                 publication=Publication.PUBLISHED)
        pending2 = next_version(resubmitted, "edit for review", T0 + days(1),
                                publication=Publication.PENDING_REVIEW)
        await store.write_nuggets([approved2, pending2], [None, None])

        def ids(nuggets: Sequence[Nugget]) -> list[str]:
            return [n.id for n in nuggets]

        queue = sorted([*pending, pending2], key=lambda n: n.id)
        got = await store.heads_page("acme", [Publication.PENDING_REVIEW], 100)
        assert got == queue, "heads only (approved's v1 and pending2's parent are not)"
        pages, after = [], ""
        while page := await store.heads_page("acme", [Publication.PENDING_REVIEW], 4,
                                             after_id=after):
            pages.append(ids(page))
            after = page[-1].id
        assert pages == [ids(queue[:4]), ids(queue[4:])]
        merged = sorted(ids([*queue, draft]))  # two states: one listing in id order
        both = await store.heads_page("acme", [Publication.PENDING_REVIEW, Publication.DRAFT],
                                      100)
        assert ids(both) == merged
        start = merged.index(queue[0].id) + 1
        two = await store.heads_page("acme", [Publication.DRAFT, Publication.PENDING_REVIEW],
                                     2, after_id=queue[0].id)
        assert ids(two) == merged[start : start + 2]
        assert ids(await store.heads_page("acme", [Publication.PUBLISHED], 100)) == sorted(
            [published.id, approved2.id])
        assert await store.heads_page("acme", [], 100) == []
        assert await store.heads_page("acme", [Publication.REJECTED], 100) == []
        assert ids(await store.heads_page("globex", [Publication.PENDING_REVIEW], 100)) == [
            theirs.id]
        assert await store.heads_page("initech", [Publication.PENDING_REVIEW], 100) == []
        # review moves a nugget out of the queue; a page continues after any id
        reviewed = next_version(queue[1], "reject", T0 + days(2),
                                publication=Publication.REJECTED)
        await store.write_nuggets([reviewed], [None])
        rest = await store.heads_page("acme", [Publication.PENDING_REVIEW], 100,
                                      after_id=queue[0].id)
        assert ids(rest) == ids(queue[2:])
        assert ids(await store.heads_page("acme", [Publication.REJECTED], 100)) == [
            reviewed.id]

    async def test_publication_counts_count_heads_per_tenant_and_state(
            self, store: IndexStore, embedder: MiniLMEmbedder) -> None:
        """The review backlog: lineages by the publication of their head (earlier
        versions and corpus passages never count), for every tenant."""
        pending = [make_nugget(obj=f"Role {i}", sources=(f"ev-{i}",),
                               publication=Publication.PENDING_REVIEW) for i in range(3)]
        published = make_nugget(obj="Published role", sources=("ev-p",))
        theirs = make_nugget("globex", obj="Their role", publication=Publication.PENDING_REVIEW)
        await self.put(store, embedder, *pending, published, theirs)
        await store.add_passages([make_passage()], embedder.embed(["Some text."]))
        approved = next_version(pending[0], "approve", T0 + days(1),
                                publication=Publication.PUBLISHED)
        await store.write_nuggets([approved], [None])
        assert await store.publication_counts() == {
            ("acme", Publication.PENDING_REVIEW): 2, ("acme", Publication.PUBLISHED): 2,
            ("globex", Publication.PENDING_REVIEW): 1}

    async def test_heads_page_reads_only_the_page(
            self, store: IndexStore, embedder: MiniLMEmbedder,
            monkeypatch: pytest.MonkeyPatch) -> None:
        """Many published heads and three pending ones: a page of the queue decodes the
        nuggets it returns, not the tenant's other nuggets."""
        import sys

        published = [make_nugget(obj=f"Published {i}", sources=(f"ev-{i}",))
                     for i in range(150)]
        pending = [make_nugget(obj=f"Pending {i}", sources=(f"ev-q{i}",),
                               publication=Publication.PENDING_REVIEW) for i in range(3)]
        vector = embedder.embed(["one vector for all"])[0]
        everything = [*published, *pending]
        await store.write_nuggets(everything, [vector] * len(everything))
        module = sys.modules[type(store).__module__]
        real = module.nugget_from_bytes
        decoded = 0

        def counting(raw: bytes) -> Nugget:
            nonlocal decoded
            decoded += 1
            return real(raw)  # type: ignore[no-any-return]

        monkeypatch.setattr(module, "nugget_from_bytes", counting)
        page = await store.heads_page("acme", [Publication.PENDING_REVIEW], 10)
        assert {n.id for n in page} == {n.id for n in pending}
        assert decoded == 3
        decoded = 0
        page = await store.heads_page("acme", [Publication.PUBLISHED], 5)
        assert [n.id for n in page] == sorted(n.id for n in published)[:5]
        assert decoded == 5

    async def test_find_by_request(self, store: IndexStore, embedder: MiniLMEmbedder) -> None:
        v1 = make_nugget(publication=Publication.PENDING_REVIEW)
        await self.put(store, embedder, v1)
        v2 = next_version(v1, "approve", T0 + days(1), publication=Publication.PUBLISHED,
                          request_id="req-1")
        v3 = next_version(v2, "edit", T0 + days(2), title="Edited title")
        assert v3.request_id == "", "a request id names one version, children do not inherit"
        await store.write_nuggets([v2, v3], [None, embedder.embed([v3.text])[0]])
        assert (await store.find_by_request("acme", v1.id, "req-1")) == v2
        assert (await store.get("acme", v2.id)).request_id == "req-1"
        assert await store.find_by_request("acme", v1.id, "req-2") is None
        assert await store.find_by_request("acme", "n-other-lineage", "req-1") is None
        assert await store.find_by_request("globex", v1.id, "req-1") is None

    async def test_writes_read_a_bounded_number_of_versions(
            self, store: IndexStore, embedder: MiniLMEmbedder,
            monkeypatch: pytest.MonkeyPatch) -> None:
        """Review, approve, edit and revert on a lineage of 150 versions decode a handful
        of stored versions, not the lineage (the store module's nugget_from_bytes is
        counted, so reads inside the backend count too)."""
        import sys

        from nuggetflow.settings import Settings
        from query.index import NuggetIndex

        index = NuggetIndex(store, embedder, Settings.from_env({}))
        chain = await self.chain(store, embedder, make_nugget(), 150)
        assert chain[-1].publication is Publication.UNPUBLISHED
        module = sys.modules[type(store).__module__]
        real = module.nugget_from_bytes
        decoded = 0

        def counting(raw: bytes) -> Nugget:
            nonlocal decoded
            decoded += 1
            return real(raw)  # type: ignore[no-any-return]

        monkeypatch.setattr(module, "nugget_from_bytes", counting)
        calls: dict[str, Callable[[], Awaitable[Nugget]]] = {
            "edit": lambda: index.edit("acme", chain[0].id, "typo", title="Retitled"),
            "approve": lambda: index.approve("acme", chain[0].id, request_id="r-approve"),
            "replayed approve": lambda: index.approve("acme", chain[0].id,
                                                      request_id="r-approve"),
            "unpublish": lambda: index.review("acme", chain[5].id, "unpublish"),
            "revert": lambda: index.review("acme", chain[-1].id, "revert",
                                           target_version_id=chain[3].id),
        }
        for name, call in calls.items():
            decoded = 0
            await call()
            assert decoded <= 5, f"{name} decoded {decoded} versions of a 150-version lineage"
        assert len(await store.history("acme", chain[0].id)) == 150 + 4

    async def test_write_is_idempotent(self, store: IndexStore, embedder: MiniLMEmbedder
                                       ) -> None:
        n = make_nugget()
        await self.put(store, embedder, n)
        await self.put(store, embedder, n)
        assert [h.id for h in await store.history("acme", n.id)] == [n.id]

    async def test_vector_none_reuses_parent_vector(
            self, store: IndexStore, embedder: MiniLMEmbedder) -> None:
        v1 = make_nugget()
        await self.put(store, embedder, v1)
        v2 = next_version(v1, "approve", publication=Publication.PUBLISHED)
        await store.write_nuggets([v2], [None])
        assert v2.id in await self.visible(store, embedder, flt())

    async def test_statement_cosines_read_the_stored_vector(
            self, store: IndexStore, embedder: MiniLMEmbedder) -> None:
        """The cosine with the vector the write was given (a reused parent vector too);
        passages, unknown ids and other tenants' nuggets are left out."""
        v1 = make_nugget()
        written = embedder.embed([v1.embedding_text])
        await store.write_nuggets([v1], list(written))
        v2 = next_version(v1, "approve", publication=Publication.PUBLISHED)
        await store.write_nuggets([v2], [None])
        other = make_nugget("t2", title="Printer queue", body="Jobs wait in the queue.")
        await self.put(store, embedder, other)
        page = make_passage(pid="p-1#0", text="Reset a password from the admin page.")
        await store.add_passages([page], embedder.embed([page.text]))
        q = embedder.embed(["who may reset a password"])[0]
        got = await store.statement_cosines("acme", [v1.id, v2.id, "p-1#0", other.id,
                                                     "n-missing"], q)
        expected = float(np.asarray(written[0]) @ np.asarray(q))
        assert set(got) == {v1.id, v2.id}
        assert got[v1.id] == pytest.approx(expected, abs=1e-5)
        assert got[v2.id] == pytest.approx(expected, abs=1e-5)
        assert await store.statement_cosines("acme", [], q) == {}
        with pytest.raises(ValidationError):
            await store.statement_cosines("acme", [v1.id], np.zeros(3, dtype=np.float32))

    async def test_bad_batch_writes_nothing(self, store: IndexStore, embedder: MiniLMEmbedder
                                            ) -> None:
        good = make_nugget()
        bad_vec = np.zeros(17, dtype=np.float32)
        with pytest.raises(ValidationError) as err:
            await store.write_nuggets([good, make_nugget(obj="Analyst")],
                                      [embedder.embed([good.text])[0], bad_vec])
        assert err.value.field == "vector"
        with pytest.raises(NotFoundError):
            await store.get("acme", good.id)
        bad_record = dataclasses.replace(make_nugget(obj="Owner"), title=" ")
        with pytest.raises(ValidationError) as err:
            await self.put(store, embedder, good, bad_record)
        assert err.value.field == "title"
        with pytest.raises(NotFoundError):
            await store.get("acme", good.id)

    async def test_dense_rejects_wrong_dimension(self, store: IndexStore,
                                                 embedder: MiniLMEmbedder) -> None:
        await self.put(store, embedder, make_nugget())
        with pytest.raises(ValidationError) as err:
            await store.dense(np.ones(10, dtype=np.float32), flt(), 5)
        assert err.value.field == "vector"

    async def test_durable_across_restart(self, store: IndexStore, embedder: MiniLMEmbedder
                                          ) -> None:
        n = make_nugget()
        await self.put(store, embedder, n)
        store = await self.reopen(store)
        assert (await store.get("acme", n.id)) == n
        assert n.id in await self.visible(store, embedder, flt())

    # usage and review flags (query.usage) ------------------------------------------

    async def test_usage_counts_add_up_per_day_once_per_flush_and_survive_a_restart(
            self, store: IndexStore) -> None:
        d1, d2 = date(2026, 3, 1), date(2026, 3, 2)
        await store.add_usage([UsageRow("acme", "n1", d1, 3, 2, 1),
                               UsageRow("acme", "n2", d1, 1, 1, 0),
                               UsageRow("globex", "n1", d1, 9, 9, 9)], "flush-1")
        await store.add_usage([UsageRow("acme", "n1", d2, 1, 1, 0)], "flush-2")
        # a flush sent again (its answer was lost) is applied once
        await store.add_usage([UsageRow("acme", "n1", d2, 1, 1, 0)], "flush-2")
        await store.add_usage([UsageRow("acme", "n1", d2, 0, 0, 2)], "flush-3")
        store = await self.reopen(store)
        assert await store.usage_totals("acme", ["n1", "n2", "never"], d1) == {
            "n1": UsageTotals(4, 3, 3, d2), "n2": UsageTotals(1, 1, 0, None)}
        assert await store.usage_totals("acme", ["n1"], d2) == {
            "n1": UsageTotals(1, 1, 2, d2)}, "the window starts at since"
        assert await store.usage_totals("globex", ["n1"], d1) == {
            "n1": UsageTotals(9, 9, 9, d1)}, "counts are per tenant"

    async def test_review_flags_replace_the_tenants_earlier_ones(
            self, store: IndexStore) -> None:
        uncited = ReviewFlag("acme", "L1", "L1-v1", FlagKind.UNCITED, "not cited", T0,
                             25, 3, 0, title="VPN rotation")
        expiring = ReviewFlag("acme", "L2", "L2-v3", FlagKind.EXPIRING, "ends soon",
                              T0 + days(1), dismissed=True)
        theirs = ReviewFlag("globex", "L1", "L1-v9", FlagKind.UNCITED, "theirs", T0)
        await store.replace_review_flags("acme", [expiring, uncited])
        await store.replace_review_flags("globex", [theirs])
        assert await store.review_flags("acme") == [uncited, expiring]
        await store.replace_review_flags("acme", [expiring])
        store = await self.reopen(store)
        assert await store.review_flags("acme") == [expiring]
        assert await store.review_flags("globex") == [theirs]
        await store.replace_review_flags("acme", [])
        assert await store.review_flags("acme") == []

    async def test_flag_updates_from_two_processes_lose_nothing(
            self, store: IndexStore) -> None:
        """Two handles (as two processes have), each in its own thread and event loop,
        raise flags and dismiss them at once: every flag raised is there and every
        dismissal holds (a read-then-replace would drop the other's changes)."""
        import asyncio

        from query.usage import dismiss_flag, raise_flags

        def flag(i: int) -> ReviewFlag:
            return ReviewFlag("acme", f"L{i:02d}", f"L{i:02d}-v1", FlagKind.BURIED, f"#{i}", T0)

        await raise_flags(store, "acme", [flag(i) for i in range(0, 24, 2)])

        async def work(first: int) -> None:
            handle = self.twin(store)
            await handle.start()
            try:
                for i in range(first, 24, 2):
                    if first:  # this one raises the odd flags
                        await raise_flags(handle, "acme", [flag(i)])
                    else:  # and this one dismisses the even ones meanwhile
                        assert await dismiss_flag(handle, "acme", f"L{i:02d}")
            finally:
                await handle.stop()

        await asyncio.gather(*(asyncio.to_thread(asyncio.run, work(k)) for k in (0, 1)))
        flags = {f.lineage_id: f for f in await store.review_flags("acme")}
        assert sorted(flags) == [f"L{i:02d}" for i in range(24)]
        assert [i for i in range(24) if flags[f"L{i:02d}"].dismissed] == list(range(0, 24, 2))

    async def test_traces_are_kept_per_lineage_once_oldest_first_across_a_restart(
            self, store: IndexStore) -> None:
        assert await store.traces("acme", "L1") == [], "no trace yet (nor its index)"
        first = NuggetTrace("acme", "L1", "L1-v1", T0, "reprobe", "passed", "cc-1",
                            {"probes": [{"query": "vpn", "passed": True}]})
        later = NuggetTrace("acme", "L1", "L1-v1", T0 + days(1), "reprobe", "reoptimized",
                            "cc-2", {"new_version": "L1-v2"})
        other = NuggetTrace("acme", "L2", "L2-v1", T0, "reprobe", "buried", "cc-1")
        theirs = NuggetTrace("globex", "L1", "L1-v7", T0, "reprobe", "passed", "cc-9")
        await store.add_traces([later, other, theirs])
        await store.add_traces([first, later])  # later again: kept once
        store = await self.reopen(store)
        assert await store.traces("acme", "L1") == [first, later]
        assert await store.traces("acme", "L1", limit=1) == [later], "the last ones"
        assert await store.traces("acme", "L2") == [other]
        assert await store.traces("globex", "L1") == [theirs]

    # governance filters --------------------------------------------------------------

    async def test_filters_state_and_view(self, store: IndexStore, embedder: MiniLMEmbedder
                                          ) -> None:
        active = make_nugget(obj="Workspace Owner")
        deprecated = make_nugget(obj="Admin", state=State.DEPRECATED)
        contested = make_nugget(obj="Team Lead", state=State.CONTESTED)
        await self.put(store, embedder, active, deprecated, contested)
        assert await self.visible(store, embedder, flt()) == {active.id}
        assert await self.visible(store, embedder, flt(view=View.ACTIVE_PLUS_CONTESTED)) == {
            active.id, contested.id}

    async def test_filters_publication(self, store: IndexStore, embedder: MiniLMEmbedder
                                       ) -> None:
        pubs = {p: make_nugget(obj=f"Role {p.name}", publication=p) for p in Publication}
        await self.put(store, embedder, *pubs.values())
        seen = await self.visible(store, embedder, flt(view=View.ACTIVE_PLUS_CONTESTED))
        assert seen == {pubs[Publication.PUBLISHED].id}

    async def test_filters_validity_at_as_of(self, store: IndexStore, embedder: MiniLMEmbedder
                                             ) -> None:
        old = make_nugget(obj="Admin", start=T0, end=T0 + days(30))
        new = make_nugget(obj="Workspace Owner", start=T0 + days(30))
        await self.put(store, embedder, old, new)
        assert await self.visible(store, embedder, flt(as_of=T0 - days(1))) == set()
        assert await self.visible(store, embedder, flt(as_of=T0)) == {old.id}
        assert await self.visible(store, embedder, flt(as_of=T0 + days(29))) == {old.id}
        assert await self.visible(store, embedder, flt(as_of=T0 + days(30))) == {new.id}

    async def test_filters_scope_and_kind(self, store: IndexStore, embedder: MiniLMEmbedder
                                          ) -> None:
        v82 = make_nugget(scope="portal v8.2")
        v90 = make_nugget(scope="portal v9.0", obj="Admin")
        howto = make_nugget(obj="Owner", scope="portal v8.2", kind=Kind.INSTRUCTION)
        await self.put(store, embedder, v82, v90, howto)
        assert await self.visible(store, embedder, flt(scopes=("Portal v9.0",))) == {v90.id}
        assert await self.visible(store, embedder, flt(kinds=(Kind.INSTRUCTION,))) == {howto.id}

    async def test_tenant_isolation(self, store: IndexStore, embedder: MiniLMEmbedder) -> None:
        a = make_nugget("acme")
        b = make_nugget("globex")
        await self.put(store, embedder, a, b)
        await store.add_passages([make_passage("globex", title="Reset password",
                                               text="Reset another user's password.")],
                                 embedder.embed(["Reset another user's password."]))
        assert await self.visible(store, embedder, flt("acme")) == {a.id}
        assert b.id not in await store.fetch("acme", [a.id, b.id])
        assert await store.has_tenant("acme") and not await store.has_tenant("initech")
        assert await self.visible(store, embedder, flt("initech")) == set()

    async def test_documents_and_nuggets_rank_together(
            self, store: IndexStore, embedder: MiniLMEmbedder) -> None:
        n = make_nugget()
        p = make_passage(title="Resetting your own password",
                         text="Use Forgot password on the login screen to reset your password.")
        future = make_passage(pid="doc-2#0", title="Password policy",
                              text="Passwords reset every 90 days.", start=T0 + days(100))
        await self.put(store, embedder, n)
        added = await store.add_passages([p, future], embedder.embed([p.text, future.text]))
        assert added == 2
        assert await store.add_passages([p], embedder.embed([p.text])) == 0
        lex = await store.lexical(query_terms("reset password"), flt(), 10)
        types = {s.id: s.type for s in lex}
        assert types == {n.id: ItemType.NUGGET, p.id: ItemType.DOCUMENT}
        got = await store.fetch("acme", [p.id])
        assert got[p.id] == p
        only_nuggets = await self.visible(store, embedder, flt(include_documents=False))
        assert only_nuggets == {n.id}

    async def test_suppressed_counts_governed_out_heads(
            self, store: IndexStore, embedder: MiniLMEmbedder) -> None:
        await self.put(store, embedder, make_nugget(obj="Workspace Owner"),
                       make_nugget(obj="Admin", state=State.DEPRECATED),
                       make_nugget(obj="Lead", publication=Publication.UNPUBLISHED),
                       make_nugget(obj="Analyst", start=T0 + days(50)))
        assert await store.suppressed(query_terms(QUERY), flt()) == 3
        assert await store.suppressed(query_terms("unrelated zebra"), flt()) == 0

    async def test_heads_by_key_and_find_by_event(
            self, store: IndexStore, embedder: MiniLMEmbedder) -> None:
        a = make_nugget(obj="Workspace Owner", sources=("ev-a",))
        b = make_nugget(obj="Admin", sources=("ev-b",))
        other_key = make_nugget(subject="billing export", sources=("ev-c",))
        await self.put(store, embedder, a, b, other_key)
        heads = await store.heads_by_key("acme", a.key)
        assert {h.id for h in heads} == {a.id, b.id}
        assert [h.id for h in await store.find_by_event("acme", "ev-b")] == [b.id]
        a2 = next_version(a, "approve", publication=Publication.PUBLISHED)
        await store.write_nuggets([a2], [None])
        assert {h.id for h in await store.heads_by_key("acme", a.key)} == {a2.id, b.id}

    async def test_lexical_ranks_best_match_first(
            self, store: IndexStore, embedder: MiniLMEmbedder) -> None:
        target = make_nugget(title="Workspace Owner resets other users' passwords",
                             body="Only the Workspace Owner can reset another user's password.")
        other = make_nugget(subject="billing export", predicate="format", obj="CSV",
                            title="Billing export format", body="Billing exports are CSV files.")
        await self.put(store, embedder, target, other)
        lex = await store.lexical(query_terms("reset another user password"), flt(), 10)
        assert [s.id for s in lex] == [target.id]
        den = await store.dense(embedder.embed(["reset another user password"])[0], flt(), 10)
        assert den[0].id == target.id and den[0].score > den[1].score

    # probing support ----------------------------------------------------------------

    async def test_sample_passages_is_per_tenant_and_seeded(
            self, store: IndexStore, embedder: MiniLMEmbedder) -> None:
        mine = [make_passage(pid=f"d{i}#0", title=f"Page {i}", text=f"Text number {i}.")
                for i in range(12)]
        theirs = [make_passage("globex", pid=f"g{i}#0", text="Other text.") for i in range(3)]
        await store.add_passages(mine + theirs, embedder.embed([p.text for p in mine + theirs]))
        a = await store.sample_passages("acme", 5, seed=7)
        b = await store.sample_passages("acme", 5, seed=7)
        assert len(a) == 5 and [p.id for p in a] == [p.id for p in b]
        assert {p.tenant for p in a} == {"acme"}
        assert len(await store.sample_passages("acme", 50)) == 12

    async def test_overlay_scores_like_the_live_index_without_writing(
            self, store: IndexStore, embedder: MiniLMEmbedder) -> None:
        pages = [make_passage(pid=f"p{i}#0", title=t, text=x) for i, (t, x) in enumerate([
            ("Resetting your own password", "If your password reset isn't working, choose "
             "Forgot password on the login screen."),
            ("Using the admin panel", "The admin panel lists team members and roles."),
            ("Wallpaper", "Open Settings and choose Background to change the wallpaper.")])]
        await store.add_passages(pages, embedder.embed([p.text for p in pages]))
        n = make_nugget(title="Password reset role restriction in portal v8.2",
                        body="Only the Workspace Owner can reset another user's password.",
                        anchors=("who can reset passwords",))
        terms = query_terms("user reset isn't working for my team lead")
        scorer = await store.overlay_scorer()
        predicted = await scorer.score(terms, n.title, n.body, "\n".join(n.anchors))
        await scorer.close()
        assert predicted > 0
        assert n.id not in {s.id for s in await store.lexical(terms, flt(), 100)}
        await self.put(store, embedder, n)
        actual = {s.id: s.score for s in await store.lexical(terms, flt(), 100)}
        assert actual[n.id] == pytest.approx(predicted, rel=1e-3)

    # items keyed by tenant and id ---------------------------------------------------

    async def test_two_tenants_may_have_the_same_passage_id(
            self, store: IndexStore, embedder: MiniLMEmbedder) -> None:
        """acme's ``a11y#0`` does not hide t3's: each tenant stores, finds and fetches its
        own, and neither id reveals the other's."""
        acme = make_passage("acme", pid="a11y#0", title="Accessibility",
                            text="Screen readers speak the contents of the screen.")
        t3 = make_passage("t3", pid="a11y#0", title="Magnifier",
                          text="The zoom magnifier enlarges part of the display.")
        assert await store.add_passages([acme], embedder.embed([acme.text])) == 1
        assert await store.add_passages([t3], embedder.embed([t3.text])) == 1
        assert await store.add_passages([t3], embedder.embed([t3.text])) == 0
        assert (await store.fetch("t3", ["a11y#0"]))["a11y#0"] == t3
        assert (await store.fetch("acme", ["a11y#0"]))["a11y#0"] == acme
        f3 = flt("t3")
        lex = await store.lexical(query_terms("zoom magnifier enlarges display"), f3, 10)
        assert [s.id for s in lex] == ["a11y#0"]
        assert await store.lexical(query_terms("screen readers speak"), f3, 10) == []
        den = await store.dense(embedder.embed(["screen magnifier"])[0], f3, 10)
        assert [s.id for s in den] == ["a11y#0"]
        heads = await store.document_heads("t3", ["a11y", "missing"])
        assert list(heads) == ["a11y"] and heads["a11y"].version == 1
        store = await self.reopen(store)
        assert (await store.fetch("t3", ["a11y#0"]))["a11y#0"] == t3
        assert (await store.fetch("acme", ["a11y#0"]))["a11y#0"] == acme

    async def test_two_tenants_may_have_the_same_nugget_id(
            self, store: IndexStore, embedder: MiniLMEmbedder) -> None:
        """Same id (and lineage) in two tenants: two items; a new version in one tenant
        moves only that tenant's head."""
        acme = make_nugget("acme")
        other = dataclasses.replace(acme, tenant="t3", body="In t3, only admins reset it.")
        await self.put(store, embedder, acme)
        await self.put(store, embedder, other)
        assert await store.get("t3", acme.id) == other
        assert await store.get("acme", acme.id) == acme
        acme2 = next_version(acme, "edit", body="Only the Workspace Owner resets passwords.")
        await self.put(store, embedder, acme2)
        assert [v.id for v in await store.history("t3", acme.id)] == [acme.id]
        assert [v.id for v in await store.history("acme", acme.id)] == [acme.id, acme2.id]
        assert await store.head("t3", acme.id) == other
        assert (await store.head("acme", acme.id)).id == acme2.id
        assert await store.history_page("t3", acme.id, 10) == [other]
        assert [v.id for v in await store.history_page("acme", acme.id, 10)] == [acme.id,
                                                                                acme2.id]
        assert await self.visible(store, embedder, flt("t3")) == {other.id}
        assert await self.visible(store, embedder, flt("acme")) == {acme2.id}
        assert (await store.fetch("t3", [acme.id]))[acme.id] == other

    # document versions --------------------------------------------------------------

    async def test_a_new_document_version_closes_the_old_one(
            self, store: IndexStore, embedder: MiniLMEmbedder) -> None:
        v1 = [make_passage(pid="doc-1#0", title="Password policy",
                           text="Passwords expire every 90 days."),
              make_passage(pid="doc-1#1", title="Password policy",
                           text="Reuse of the last 5 passwords is blocked.")]
        v1 = [dataclasses.replace(p, digest="d1") for p in v1]
        await store.add_passages(v1, embedder.embed([p.text for p in v1]))
        v2 = dataclasses.replace(v1[0], id="doc-1#0@v2", text="Passwords expire every 30 days.",
                                 version=2, digest="d2", valid_from=T0 + days(5))
        assert await store.add_passages([v2], embedder.embed([v2.text])) == 1
        assert await store.add_passages([v2], embedder.embed([v2.text])) == 0  # re-sent
        before, after = flt(as_of=T0 + days(2)), flt(as_of=T0 + days(10))
        terms = query_terms("password expire days")
        assert {s.id for s in await store.lexical(terms, before, 10)} == {"doc-1#0", "doc-1#1"}
        assert {s.id for s in await store.lexical(terms, after, 10)} == {"doc-1#0@v2"}
        q = embedder.embed(["when do passwords expire"])[0]
        assert {s.id for s in await store.dense(q, before, 10)} == {"doc-1#0", "doc-1#1"}
        assert {s.id for s in await store.dense(q, after, 10)} == {"doc-1#0@v2"}
        got = await store.fetch("acme", ["doc-1#0", "doc-1#1", "doc-1#0@v2"])
        assert got["doc-1#0"] == dataclasses.replace(v1[0], valid_to=T0 + days(5))
        assert got["doc-1#1"] == dataclasses.replace(v1[1], valid_to=T0 + days(5))
        assert got["doc-1#0@v2"] == v2
        head = (await store.document_heads("acme", ["doc-1"]))["doc-1"]
        assert (head.version, head.digest, head.valid_from) == (2, "d2", T0 + days(5))

    async def test_a_version_that_does_not_start_later_writes_nothing(
            self, store: IndexStore, embedder: MiniLMEmbedder) -> None:
        v1 = make_passage(pid="doc-1#0", text="Passwords expire every 90 days.",
                          start=T0 + days(5))
        await store.add_passages([v1], embedder.embed([v1.text]))
        v2 = dataclasses.replace(v1, id="doc-1#0@v2", text="Every 30 days.", version=2,
                                 valid_from=T0 + days(5))
        other = make_passage(pid="doc-2#0", text="Another page.")
        with pytest.raises(ValidationError) as err:
            await store.add_passages([other, v2], embedder.embed([other.text, v2.text]))
        assert err.value.field == "valid_from"
        assert await store.fetch("acme", ["doc-1#0", "doc-1#0@v2", "doc-2#0"]) == {
            "doc-1#0": v1}

    async def test_a_passage_that_is_not_utf8_writes_nothing(
            self, store: IndexStore, embedder: MiniLMEmbedder) -> None:
        good = make_passage(pid="doc-1#0", text="A good page.")
        bad = make_passage(pid="doc-2#0", text="A lone surrogate \ud800 here.")
        with pytest.raises(ValidationError) as err:
            await store.add_passages([good, bad], embedder.embed([good.text, "x"]))
        assert err.value.field == "text"
        assert await store.fetch("acme", ["doc-1#0", "doc-2#0"]) == {}

    # other scripts ------------------------------------------------------------------

    async def test_an_arabic_query_finds_an_arabic_document(
            self, store: IndexStore, embedder: MiniLMEmbedder) -> None:
        ar = make_passage("ar", pid="reset#0", title="إعادة تعيين كلمة المرور",
                          text="يمكن لمالك مساحة العمل فقط إعادة تعيين كلمة مرور مستخدم آخر.")
        other = make_passage("ar", pid="wall#0", title="خلفية سطح المكتب",
                             text="افتح الإعدادات واختر الخلفية لتغيير صورة سطح المكتب.")
        ru = make_passage("ar", pid="ru#0", title="Сброс пароля",
                          text="Только владелец может сбросить пароль другого пользователя.")
        await store.add_passages([ar, other, ru], embedder.embed([ar.text, other.text, ru.text]))
        lex = await store.lexical(query_terms("من يستطيع إعادة تعيين كلمة المرور"), flt("ar"), 10)
        assert [s.id for s in lex] == ["reset#0"] and lex[0].score > 0
        lex = await store.lexical(query_terms("как сбросить пароль"), flt("ar"), 10)
        assert [s.id for s in lex] == ["ru#0"]
