"""The review console over HTTP (httpx on the ASGI app, same event loop) against the real
query service (SQLite store, per-tenant tokens): sign-in, tenant isolation, CSRF on every
POST, escaping, session expiry, review and edit with their bad inputs, version diffs, the
knowledge listing and the review flags ("Keep as it is"). The browser tests
(tests/integration/test_console_browser.py) drive the same pages in chromium."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from html import unescape
from pathlib import Path

import httpx
import pytest
from starlette.routing import Route

from console.app import ConsoleConfig, create_app
from console.diff import word_diff
from console.sessions import SessionStore
from nuggetflow.settings import Settings
from optimizer.guard import check_edit
from query.auth import TokenAuth
from query.embeddings import MiniLMEmbedder
from query.index import NuggetIndex
from query.model import Nugget, Provenance, Publication
from query.service import QueryServer
from query.usage import FlagKind, ReviewFlag, raise_flags
from tests.helpers import T0, days, make_nugget
from tests.support.service import seeded_service

TOKEN_A = "tenant-a-token-0123456789"
TOKEN_B = "tenant-b-token-0123456789"
TOKENS = {TOKEN_A: ["acme"], TOKEN_B: ["globex"]}
SCRIPT = "<script>document.title='pwned'</script><b>bold</b> only the Workspace Owner"
UNCITED = "not cited in 30 days while its topic was queried 24 times (returned 24 times)"


def candidate(tenant: str = "acme", *, comment: str = SCRIPT, event: str = "ev-1",
              obj: str = "Workspace Owner", **kw: object) -> Nugget:
    n = make_nugget(tenant, obj=obj, sources=(event,), publication=Publication.PENDING_REVIEW,
                    **kw)  # type: ignore[arg-type]
    return dataclasses.replace(n, provenance=Provenance(
        event_id=event, trigger_query="who can reset a teammate's password",
        corrected_answer="Any Admin can reset it.", feedback_text=comment,
        timestamp=T0 + days(1), tenant=tenant, owner="alice", rating="down", user="u7",
        agent="chat"))


def flag(n: Nugget, kind: FlagKind = FlagKind.UNCITED, reason: str = UNCITED) -> ReviewFlag:
    """A review flag on the head ``n``, as the usage review stores it."""
    return ReviewFlag(n.tenant, n.lineage_id or n.id, n.id, kind, reason, T0 + days(40),
                      24, 24, 0, title=n.title)


@dataclass
class Setup:
    index: NuggetIndex
    server: QueryServer
    http: httpx.AsyncClient
    app_config: ConsoleConfig


@pytest.fixture
async def setup(tmp_path: Path, embedder: MiniLMEmbedder,
                settings: Settings) -> AsyncIterator[Setup]:
    async with seeded_service(tmp_path / "console.db", embedder, settings,
                              auth=TokenAuth(TOKENS), guard=check_edit) as s:
        config = ConsoleConfig(grpc_target=s.target)
        app = create_app(config)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                     base_url="http://console.test") as http:
            yield Setup(s.index, s.server, http, config)


def csrf_of(html: str) -> str:
    m = re.search(r'name="csrf" value="([^"]+)"', html)
    assert m, "every form carries the CSRF token"
    return m.group(1)


async def sign_in(http: httpx.AsyncClient, token: str, name: str = "alice") -> httpx.Response:
    page = await http.get("/signin")
    return await http.post("/signin", data={"csrf": csrf_of(page.text), "token": token,
                                            "reviewer": name}, follow_redirects=True)


async def test_sign_in_shows_only_the_tokens_tenant(setup: Setup) -> None:
    a = await setup.index.submit(candidate())
    b = await setup.index.submit(candidate("globex", comment="globex secret text",
                                           event="ev-g"))
    bad = await sign_in(setup.http, "not-a-known-token-at-all")
    assert bad.status_code == 400 and "does not know this token" in bad.text
    page = await sign_in(setup.http, TOKEN_A)
    assert page.status_code == 200 and str(page.url).endswith("/t/acme/queue")
    assert a.title in unescape(page.text) and "globex secret" not in page.text
    for path in ("/t/globex/queue", f"/t/globex/n/{b.id}", "/t/globex/knowledge",
                 "/t/globex/flags"):
        other = await setup.http.get(path)
        assert other.status_code == 403 and "globex secret" not in other.text
    own_id_other_tenant = await setup.http.get(f"/t/acme/n/{b.id}")
    assert own_id_other_tenant.status_code == 404


async def test_feedback_markup_is_shown_as_text(setup: Setup) -> None:
    n = await setup.index.submit(candidate())
    await sign_in(setup.http, TOKEN_A)
    for path in ("/t/acme/queue", f"/t/acme/n/{n.id}"):
        page = await setup.http.get(path)
        assert "<script>document" not in page.text and "<b>bold" not in page.text
        assert "&lt;script&gt;document.title=&#39;pwned&#39;&lt;/script&gt;" in page.text
        assert "script-src" not in page.headers["content-security-policy"]  # none allowed
        assert "default-src 'none'" in page.headers["content-security-policy"]


async def test_every_post_needs_the_csrf_token(setup: Setup) -> None:
    n = await setup.index.submit(candidate())
    await raise_flags(setup.index.store, "acme", [flag(n)])
    await sign_in(setup.http, TOKEN_A)
    app = setup.http._transport.app  # type: ignore[attr-defined]
    posts = [r.path for r in app.routes if isinstance(r, Route) and "POST" in (r.methods or ())]
    assert set(posts) == {"/signin", "/signout", "/t/{tenant}/n/{nugget}/review",
                          "/t/{tenant}/n/{nugget}/edit", "/t/{tenant}/flags/{lineage}/dismiss"}
    for path in posts:
        url = path.replace("{tenant}", "acme").replace("{nugget}", n.id).replace(
            "{lineage}", n.id)
        for data in ({"action": "approve", "expected_version_id": n.id, "kind": "uncited"},
                     {"csrf": "forged", "action": "approve", "expected_version_id": n.id,
                      "kind": "uncited"}):
            refused = await setup.http.post(url, data=data)
            assert refused.status_code == 403 and "Nothing was done" in refused.text, url
    head = await setup.index.head("acme", n.id)
    assert head.version == 1 and head.publication is Publication.PENDING_REVIEW
    assert [f.dismissed for f in await setup.index.store.review_flags("acme")] == [False]
    page = await setup.http.get(f"/t/acme/n/{n.id}")
    cross = await setup.http.post(f"/t/acme/n/{n.id}/review", headers={
        "origin": "http://evil.example"}, data={"csrf": csrf_of(page.text), "action": "approve",
                                                "expected_version_id": n.id})
    assert cross.status_code == 403


async def test_review_actions_and_their_bad_inputs(setup: Setup) -> None:
    n = await setup.index.submit(candidate())
    await sign_in(setup.http, TOKEN_A, "alice")
    page = await setup.http.get(f"/t/acme/n/{n.id}")
    token = csrf_of(page.text)
    empty = await setup.http.post(f"/t/acme/n/{n.id}/review", data={
        "csrf": token, "action": "reject", "reason": "  ", "expected_version_id": n.id})
    assert empty.status_code == 400 and "Say why you reject it" in empty.text
    assert (await setup.index.head("acme", n.id)).version == 1
    unknown = await setup.http.get("/t/acme/n/n-doesnotexist")
    assert unknown.status_code == 404 and "does not exist in tenant" in unknown.text
    done = await setup.http.post(f"/t/acme/n/{n.id}/review", data={
        "csrf": token, "action": "approve", "expected_version_id": n.id,
        "request_id": "r-1"}, follow_redirects=True)
    assert done.status_code == 200 and "now published" in done.text
    head = await setup.index.head("acme", n.id)
    assert head.publication is Publication.PUBLISHED and head.reviewer == "alice"
    again = await setup.http.post(f"/t/acme/n/{n.id}/review", data={
        "csrf": token, "action": "unpublish", "expected_version_id": n.id})
    assert again.status_code == 409 and "changed this nugget meanwhile" in again.text
    reverted = await setup.http.post(f"/t/acme/n/{n.id}/review", data={
        "csrf": token, "action": "revert", "expected_version_id": head.id,
        "target_version_id": n.id}, follow_redirects=True)
    assert "Reverted" in reverted.text
    assert (await setup.index.head("acme", n.id)).publication is Publication.PENDING_REVIEW


async def test_edit_is_checked_then_saved_and_a_stale_edit_is_kept(setup: Setup) -> None:
    n = await setup.index.submit(candidate())
    await sign_in(setup.http, TOKEN_A, "alice")
    page = await setup.http.get(f"/t/acme/n/{n.id}")
    form = {"csrf": csrf_of(page.text), "expected_version_id": n.id, "title": n.title,
            "body": n.body + " Resets take 45 minutes.", "anchors": "", "subject":
            n.fact.subject, "predicate": n.fact.predicate, "object": n.fact.object,
            "scope": n.fact.scope, "valid_from": "2024-01-01", "valid_until": "",
            "reason": "r", "step": "check"}
    refused = await setup.http.post(f"/t/acme/n/{n.id}/edit", data=form)
    assert refused.status_code == 422 and "introduces &#39;45&#39;" in refused.text
    assert 'id="edit-save"' not in refused.text and "Resets take 45 minutes." in refused.text
    form["step"] = "save"  # saving anyway (a crafted request) is refused by the service
    forced = await setup.http.post(f"/t/acme/n/{n.id}/edit", data=form)
    assert forced.status_code == 422 and (await setup.index.head("acme", n.id)).version == 1
    form.update(body=n.body, title="Who can reset a teammate's password", step="check")
    checked = await setup.http.post(f"/t/acme/n/{n.id}/edit", data=form)
    assert checked.status_code == 200 and "accepts this edit" in checked.text
    assert 'id="edit-save"' in checked.text and "<ins>" in checked.text
    await setup.index.edit("acme", n.id, "meanwhile", title="Another reviewer's title")
    form["step"] = "save"
    stale = await setup.http.post(f"/t/acme/n/{n.id}/edit", data=form)
    assert stale.status_code == 409 and "Another reviewer&#39;s title" in stale.text
    assert "Who can reset a teammate&#39;s password" in stale.text, "the edit is kept"
    current = await setup.index.head("acme", n.id)
    form["expected_version_id"] = current.id
    saved = await setup.http.post(f"/t/acme/n/{n.id}/edit", data=form, follow_redirects=True)
    assert "Saved as version 3" in saved.text
    diff = await setup.http.get(f"/t/acme/n/{n.id}/versions?a=1&b=3")
    assert diff.status_code == 200 and "<del>" in diff.text and "<ins>" in diff.text
    bad_date = await setup.http.post(f"/t/acme/n/{n.id}/edit", data={
        **form, "valid_from": "yesterday", "expected_version_id": n.id})
    assert bad_date.status_code == 400 and "not a date" in bad_date.text


async def test_knowledge_filters_and_assigned_to_me(setup: Setup) -> None:
    n = await setup.index.submit(candidate())
    await setup.index.approve("acme", n.id)
    other = await setup.index.submit(candidate(event="ev-2", subject="printer quota",
                                               obj="200 pages"))
    await sign_in(setup.http, TOKEN_A, "bob")
    page = await setup.http.get("/t/acme/knowledge?state=active&validity=current")
    assert n.title in unescape(page.text) and other.title not in unescape(page.text)
    assert "1 published nugget." in page.text
    none = await setup.http.get("/t/acme/knowledge?q=printer")
    assert "No published nugget matches" in none.text
    mine = await setup.http.get("/t/acme/queue?mine=1")
    assert "Nothing waits for review for you" in mine.text  # owner is alice


async def test_flagged_nuggets_are_listed_and_kept_as_they_are(setup: Setup) -> None:
    n = await setup.index.submit(candidate())
    head = await setup.index.approve("acme", n.id)
    other = await setup.index.approve("acme", (await setup.index.submit(candidate(
        event="ev-2", subject="printer quota", obj="200 pages"))).id)
    await sign_in(setup.http, TOKEN_A, "bob")
    empty = await setup.http.get("/t/acme/flags")
    assert empty.status_code == 200 and 'id="nav-flags"' in empty.text
    assert "No published nugget is flagged for review" in empty.text
    await raise_flags(setup.index.store, "acme", [
        flag(head), flag(other, FlagKind.BURIED, "3 of 4 probes fail since doc-7 changed")])
    await raise_flags(setup.index.store, "globex", [flag(dataclasses.replace(
        head, tenant="globex", title="globex secret title"))])
    page = await setup.http.get("/t/acme/flags")
    text = unescape(page.text)
    assert page.status_code == 200 and "No published nugget is flagged" not in text
    assert UNCITED in text and "3 of 4 probes fail since doc-7 changed" in text
    assert f'<a class="open" href="/t/acme/n/{n.id}">{head.title}</a>' in text
    assert "never cited" in text and "buried by a corpus change" in text
    assert "topic queried 24 · retrieved 24 · cited 0" in text
    assert (T0 + days(40)).strftime("%Y-%m-%d") in text
    assert "globex secret title" not in text
    nugget = await setup.http.get(f"/t/acme/n/{n.id}")
    assert 'id="flags"' in nugget.text and UNCITED in unescape(nugget.text)

    kept = await setup.http.post(f"/t/acme/flags/{n.id}/dismiss", data={
        "csrf": csrf_of(page.text), "kind": "uncited"}, follow_redirects=True)
    assert kept.status_code == 200 and str(kept.url).endswith("/t/acme/flags")
    text = unescape(kept.text)
    assert f'Kept as it is: "{head.title}" is no longer flagged (never cited).' in text
    assert UNCITED not in text and "3 of 4 probes fail" in text
    stored = {f.lineage_id: f.dismissed for f in await setup.index.store.review_flags("acme")}
    assert stored == {n.id: True, other.lineage_id: False}
    assert 'id="flags"' not in (await setup.http.get(f"/t/acme/n/{n.id}")).text
    # from the nugget's page: back to it; a flag that is gone: said, nothing changed
    back = await setup.http.post(f"/t/acme/flags/{other.lineage_id}/dismiss", data={
        "csrf": csrf_of(page.text), "kind": "buried", "back": "nugget"},
        follow_redirects=True)
    assert str(back.url).endswith(f"/t/acme/n/{other.lineage_id}")
    assert "is no longer flagged (buried by a corpus change)" in unescape(back.text)
    gone = await setup.http.post(f"/t/acme/flags/{n.id}/dismiss", data={
        "csrf": csrf_of(page.text), "kind": "expiring"}, follow_redirects=True)
    assert str(gone.url).endswith("/t/acme/flags") and "no such flag" in gone.text
    assert "No published nugget is flagged for review" in gone.text


async def test_sessions_expire_and_sign_out_ends_them(setup: Setup) -> None:
    await sign_in(setup.http, TOKEN_A)
    app = setup.http._transport.app  # type: ignore[attr-defined]
    store: SessionStore = app.state.console.sessions
    now = [0.0]
    store.clock = lambda: now[0]
    for s in list(store._sessions.values()):
        s.seen = s.created = 0.0
    assert (await setup.http.get("/t/acme/queue")).status_code == 200
    now[0] = store.idle + 1
    expired = await setup.http.get("/t/acme/queue", follow_redirects=True)
    assert str(expired.url).startswith("http://console.test/signin")
    assert "Your session expired" in expired.text
    store.clock = lambda: 0.0
    page = await sign_in(setup.http, TOKEN_A)
    out = await setup.http.post("/signout", data={"csrf": csrf_of(page.text)},
                                follow_redirects=True)
    assert "Signed out" in out.text
    assert (await setup.http.get("/t/acme/queue")).status_code == 303


def test_word_diff_marks_added_and_removed_words() -> None:
    pieces = word_diff("only the owner can", "only the admin can")
    assert [(p.kind, p.text) for p in pieces] == [
        ("same", "only the "), ("removed", "owner"), ("added", "admin"), ("same", " can")]
