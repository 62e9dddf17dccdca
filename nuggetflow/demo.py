"""The embedded demo: no servers, no API key, one SQLite file under ``var/demo``.

It indexes a tenant corpus (the GNOME help when the repository ships it, plus the
worked example's portal articles), submits the paper's worked-example correction as a
nugget, shows that an unreviewed nugget is not served, publishes it, then walks through
governance: a later correction succeeds it in time, and a disputed one is flagged.
"""

from __future__ import annotations

import shutil
import sys
from datetime import UTC, datetime
from pathlib import Path

from nuggetflow.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
GNOME_CORPUS = ROOT / "bench" / "data" / "gnome-help" / "corpus.jsonl"
T0 = datetime(2025, 1, 1, tzinfo=UTC)

PORTAL_DOCS = [
    ("kb-reset-own", "Resetting your own password",
     "If your password reset isn't working, open the login screen and choose Forgot "
     "password. A reset link is sent to your email. Reset links expire after one hour."),
    ("kb-admin-panel", "Using the admin panel",
     "The admin panel lists team members, their roles and their last sign-in. Open it from "
     "the gear menu. Team leads can invite new members from the admin panel."),
    ("kb-roles", "Roles in the portal",
     "The portal has three roles: Workspace Owner, Team Lead and Analyst. Roles decide "
     "which pages of the portal a member can open."),
]


def _say(text: str = "") -> None:
    print(text, file=sys.stdout, flush=True)


async def run_demo(settings: Settings, workdir: str | Path = "var/demo") -> int:
    """Run the demo and print a report; returns the process exit code."""
    from query.backends.sqlite import SQLiteStore
    from query.corpus import Document, ingest_corpus, passages_of
    from query.embeddings import make_embedder
    from query.index import NuggetIndex
    from query.model import Evidence, FactTriple, Nugget, Provenance, Validity, View
    from query.retrieval import RetrieveRequest

    work = Path(workdir)
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    index = NuggetIndex(SQLiteStore(work / "index.db", settings.embedding_dim),
                        make_embedder(settings), settings, clock=lambda: T0)
    await index.start()
    try:
        _say("== nuggetflow demo (embedded: SQLite FTS5 + HNSW, local MiniLM, no servers) ==")
        docs = [Document(i, "acme", t, x, valid_from=T0) for i, t, x in PORTAL_DOCS]
        for d in docs:
            await index.ingest_passages(passages_of(d, settings.chunk_chars))
        if GNOME_CORPUS.is_file():
            n_docs, n_pass, _ = await ingest_corpus(
                index.ingest_passages, GNOME_CORPUS, "acme", settings.chunk_chars)
            _say(f"indexed the GNOME help as tenant 'acme' corpus: {n_docs} pages, "
                 f"{n_pass} passages (+{len(docs)} portal articles)")
        else:
            _say(f"indexed {len(docs)} portal articles as the tenant corpus")

        query = "user reset isn't working for my team lead"
        nugget = Nugget(
            tenant="acme",
            title="Password reset role restriction in portal v8.2",
            body="In portal v8.2 only the Workspace Owner role can reset another user's "
                 "password. The Analyst role can view team members but not reset.",
            anchors=("why can't my analyst reset another teammate's password",
                     "which role is required to reset passwords in v8.2"),
            fact=FactTriple("reset another user's password", "allowed_role",
                            "Workspace Owner", "portal v8.2"),
            validity=Validity(T0),
            evidence=(Evidence("fb-1001"),),
            provenance=Provenance(event_id="fb-1001", tenant="acme",
                                  trigger_query="why can't my analyst reset another "
                                                "teammate's password from the admin panel?",
                                  feedback_text="In portal v8.2 only the Workspace Owner can "
                                                "reset another user's password."),
        )

        async def show(label: str, q: str, when: datetime, view: View = View.ACTIVE) -> None:
            res = await index.retriever.retrieve(
                RetrieveRequest("acme", q, as_of=when, view=view, k=3))
            _say(f"\n-- {label}\n   query: {q!r}  as_of={when.date()}  view={view.name}")
            for i, h in enumerate(res.hits, 1):
                flag = "  [CONTESTED]" if h.contested else ""
                _say(f"   {i}. {h.type.name.lower():8s} {h.fused:.3f}  {h.title}{flag}")
            _say(f"   suppressed by governance: {res.suppressed}")

        sub = await index.submit(nugget)
        _say(f"\nsubmitted nugget {sub.id} (pending review)")
        await show("before review: a pending nugget is never served", query, T0)
        pub = await index.approve("acme", sub.id, reviewer="demo")
        _say(f"\napproved -> {pub.publication.name}, version {pub.version}")
        await show("after publication", query, T0)

        later = datetime(2025, 6, 1, tzinfo=UTC)
        succ = Nugget(
            tenant="acme", title="Password reset roles in portal v8.2 after the June update",
            body="Since June 2025, in portal v8.2 the Team Lead role can also reset another "
                 "user's password.",
            fact=FactTriple("reset another user's password", "allowed_role",
                            "Workspace Owner or Team Lead", "portal v8.2"),
            validity=Validity(later), evidence=(Evidence("fb-2001"),),
            provenance=Provenance(event_id="fb-2001", tenant="acme"))
        s2 = await index.approve("acme", (await index.submit(succ)).id, reviewer="demo")
        _say(f"\na later correction (valid from {later.date()}) was published: {s2.id}")
        await show("as of March: the original fact", query, datetime(2025, 3, 1, tzinfo=UTC))
        await show("as of July: its successor", query, datetime(2025, 7, 1, tzinfo=UTC))
        _say("\nversion history of the original nugget (nothing is deleted):")
        for v in await index.store.history("acme", sub.id):
            end = v.validity.end.date() if v.validity.end else "open"
            _say(f"   v{v.version} {v.publication.name:9s} {v.state.name:10s} "
                 f"[{v.validity.start.date()}, {end})  {v.change_reason}")
        _say(f"\nindex file: {work / 'index.db'}")
    finally:
        await index.stop()
    return 0
