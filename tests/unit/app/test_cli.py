"""The CLI end to end on the embedded store (subprocesses, like a user runs it)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def run(args: list[str], tmp: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NUGGETFLOW_STORE": f"sqlite:///{tmp}/cli.db"}
    proc = subprocess.run([sys.executable, "-m", "app.cli", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def test_help_lists_the_commands(tmp_path: Path) -> None:
    out = run(["--help"], tmp_path).stdout
    for cmd in ("demo", "ingest", "search", "history", "review", "settings", "serve",
                "candidates", "console"):
        assert cmd in out


def test_ingest_then_search(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("\n".join(json.dumps(r) for r in [
        {"id": "wall", "tenant": "x", "title": "Change the wallpaper",
         "text": "Open Settings, choose Background and pick a picture."},
        {"id": "wifi", "tenant": "x", "title": "Connect to a wireless network",
         "text": "Open the system menu, select Wi-Fi and choose a network."}]) + "\n")
    ing = run(["ingest", str(corpus), "--tenant", "gnome", "--changes-file",
               str(tmp_path / "changes.jsonl")], tmp_path)
    first = json.loads(ing.stdout)
    assert first["passages"] == 2 and first["changes"] == 1
    # what changed went to the re-probe step (no nugget is published: none reached)
    assert first["reprobe"]["steps"] == {"reprobe": {"reprobed": 1}}
    assert "reprobe gnome: reprobed (none reached)" in ing.stderr
    [change] = [json.loads(line) for line in (tmp_path / "changes.jsonl").read_text()
                .splitlines()]
    assert change["tenant"] == "gnome" and [d["passages"] for d in change["documents"]] == [
        ["wall#0"], ["wifi#0"]]
    assert "ingested 2 documents of 2" in ing.stderr and "ETA" in ing.stderr
    again = json.loads(run(["ingest", str(corpus), "--tenant", "gnome"], tmp_path).stdout)
    assert {k: v for k, v in again.items() if k != "seconds"} == {
        "documents": 2, "new_documents": 0, "changed_documents": 0, "unchanged_documents": 2,
        "removed_documents": 0, "passages": 0, "new_passages": 0, "changes": 0}
    replay = json.loads(run(["reprobe", str(tmp_path / "changes.jsonl")], tmp_path).stdout)
    assert replay["reprobe"]["steps"] == {"reprobe": {"reprobed": 1}}
    res = json.loads(run(["search", "how do I change my background picture", "--tenant",
                          "gnome", "--json"], tmp_path).stdout)
    assert res["hits"][0]["id"] == "wall#0"
    assert res["hits"][0]["type"] == "document"


def test_errors_are_clear_and_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "tenant": "t"}\n')
    proc = run(["ingest", str(bad)], tmp_path, check=False)
    assert proc.returncode == 2
    assert "text" in proc.stderr and "line 1" in proc.stderr
    proc = run(["search", "x", "--tenant", "nobody"], tmp_path, check=False)
    assert proc.returncode == 2 and "unknown tenant" in proc.stderr


def test_demo_runs_on_the_embedded_default(tmp_path: Path) -> None:
    """The README's first command, end to end: runner, INO, auto-publish, gRPC calls; with
    --serve the query service and the review console stay up (signed in to, over HTTP,
    with the demo's token) until SIGINT."""
    env = {**os.environ, "NUGGETFLOW_STORE": f"sqlite:///{tmp_path}/cli.db",
           "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "client"),
                                          os.environ.get("PYTHONPATH", "")])}
    # stderr to a file: an undrained pipe fills with the service's logs and blocks it
    err_path = tmp_path / "demo.stderr"
    err = err_path.open("w")
    proc = subprocess.Popen([sys.executable, "-m", "app.cli", "demo", "--serve",
                             "--console-port", "0", "--workdir", str(tmp_path / "demo")],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=err, text=True)
    assert proc.stdout is not None
    lines: list[str] = []
    try:
        deadline = time.monotonic() + 400
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line)
            if "press Ctrl-C to stop" in line:
                break
        out = "".join(lines)
        assert "press Ctrl-C to stop" in out, out + err_path.read_text()
        assert "indexed the GNOME help as tenant 'gnome': 273 pages" in out
        assert "8 nuggets published, 1 dead letter(s)" in out
        assert "rejected (praise)" in out and "rejected (vague_negative)" in out
        assert "dead letter (feedback.events:0:4): invalid_field" in out
        assert out.count("INO: ") == 8
        assert "Retrieve(" in out and "nugget" in out
        assert "2 more correction(s) held for review (manual policy), assigned to gnome-owner" \
            in out
        assert (tmp_path / "demo" / "index.db").is_file()
        url, token = re.search(r"review console: open (\S+) and sign in with the token (\S+)",
                               out).groups()  # type: ignore[union-attr]
        assert json.loads((tmp_path / "demo" / "tokens.json").read_text()) == {
            token: ["gnome"]}
        queue = _console_sign_in(url, token, "gnome-owner")
        assert "2 candidates waiting for review" in queue
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            assert proc.wait(120) == 0, err_path.read_text()[-3000:]
        finally:
            proc.kill()
            err.close()


def _console_sign_in(url: str, token: str, name: str) -> str:
    """Sign in to the console over HTTP; the page signing in leads to (the queue)."""
    import http.cookiejar
    import urllib.parse
    import urllib.request

    opener = urllib.request.build_opener(
        urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
    form = opener.open(url + "/signin", timeout=30).read().decode()
    csrf = re.search(r'name="csrf" value="([^"]+)"', form).group(1)  # type: ignore[union-attr]
    data = urllib.parse.urlencode({"csrf": csrf, "token": token, "reviewer": name}).encode()
    with opener.open(url + "/signin", data=data, timeout=30) as reply:
        return str(reply.read().decode())


def test_history_pages_and_review_request_ids(tmp_path: Path) -> None:
    """`history` pages through the lineage (--page-size versions per store read, pages
    that end exactly on the lineage's end included); `review --request-id` applies once."""
    import asyncio

    from query.backends.sqlite import SQLiteStore
    from query.embeddings import MiniLMEmbedder
    from query.model import Publication, next_version
    from tests.helpers import make_nugget

    async def build() -> list[str]:
        store = SQLiteStore(tmp_path / "cli.db")
        await store.start()
        first = make_nugget(publication=Publication.UNPUBLISHED)
        chain = [first]
        for i in range(24):
            chain.append(next_version(chain[-1], f"edit {i}", body=f"Body {i}."))
        vectors = MiniLMEmbedder().embed([n.embedding_text for n in chain])
        await store.write_nuggets(chain, list(vectors))
        await store.stop()
        return [n.id for n in chain]

    ids = asyncio.run(build())
    out = run(["history", ids[3], "--tenant", "acme", "--page-size", "10"], tmp_path).stdout
    lines = [line for line in out.splitlines() if not line.startswith(" ")]
    assert [line.split()[1] for line in lines] == ids
    assert lines[0].startswith("v1 ") and lines[-1].startswith("v25 ")
    # Each version shows what it says: its title and body on the lines below it.
    assert out.count("\n    title: ") == 25 and "\n    body:  Body 23.\n" in out
    review = ["review", ids[0], "--tenant", "acme", "--action", "approve",
              "--request-id", "cli-1"]
    first = json.loads(run(review, tmp_path).stdout)
    again = json.loads(run(review, tmp_path).stdout)
    assert first == again and first["requestId"] == "cli-1" and first["version"] == 26
    out = run(["history", ids[0], "--tenant", "acme", "--page-size", "25"], tmp_path).stdout
    assert len([line for line in out.splitlines() if line.startswith("v")]) == 26


def test_candidates_lists_what_waits_for_review(tmp_path: Path) -> None:
    """`candidates` shows each pending head with its title, body, provenance and INO
    outcome; --state picks other review states, --limit and --page-token page, --json is
    the ListCandidates reply; other tenants' and reviewed nuggets stay out. `search` hits
    name their lineage and version."""
    import asyncio
    import dataclasses

    from query.backends.sqlite import SQLiteStore
    from query.embeddings import MiniLMEmbedder
    from query.model import Provenance, Publication, next_version
    from tests.helpers import T0, days, make_nugget

    audited = make_nugget(subject="password reset audit", obj="audit log", sources=("ev-1",),
                          title="Password resets are audited",
                          body="Every reset of another user's password goes to the audit log.",
                          publication=Publication.PENDING_REVIEW,
                          optimization={"variant": "E", "iterations": 3, "passed": True,
                                        "seed": 0})
    audited = dataclasses.replace(audited, change_reason="extracted (E)", provenance=Provenance(
        event_id="ev-1", trigger_query="are password resets logged anywhere",
        feedback_text="Wrong:\nresets of other users\ngo to the audit log.", tenant="acme"))
    export = make_nugget(subject="export limit", obj="10,000 rows", sources=("ev-2",),
                         title="Exports stop at 10,000 rows", body="An export holds 10,000 rows.",
                         publication=Publication.PENDING_REVIEW)
    draft = make_nugget(subject="draft thing", sources=("ev-3",), title="A draft nugget",
                        publication=Publication.DRAFT)
    published = make_nugget(sources=("ev-4",), title="Workspace Owners reset passwords")
    theirs = make_nugget("globex", sources=("ev-5",), title="Globex pending nugget",
                         publication=Publication.PENDING_REVIEW)
    reviewed = make_nugget(subject="vpn", obj="90 days", sources=("ev-6",),
                           title="Reviewed nugget", publication=Publication.PENDING_REVIEW)
    approved = next_version(reviewed, "approve by cli", T0 + days(1),
                            publication=Publication.PUBLISHED)
    first = [audited, export, draft, published, theirs, reviewed]

    async def build() -> None:
        store = SQLiteStore(tmp_path / "cli.db")
        await store.start()
        vectors = MiniLMEmbedder().embed([n.embedding_text for n in first])
        await store.write_nuggets(first, list(vectors))
        await store.write_nuggets([approved], [None])
        await store.stop()

    asyncio.run(build())
    out = run(["candidates", "--tenant", "acme"], tmp_path).stdout
    queue = sorted([audited, export], key=lambda n: n.id)
    heads = [line for line in out.splitlines() if line.startswith("n-")]
    assert [line.split()[:3] for line in heads] == [[n.id, "v1", "PENDING_REVIEW"]
                                                   for n in queue]
    block = out[out.index(audited.id):]
    for text in ("    title: Password resets are audited\n",
                 "    body:  Every reset of another user's password goes to the audit log.\n",
                 "    provenance: event ev-1; query: are password resets logged anywhere\n",
                 "    feedback: Wrong: resets of other users go to the audit log.\n",
                 "    INO: variant E, 3 round(s), passed\n", "    note: extracted (E)\n"):
        assert text in block
    assert "Exports stop at 10,000 rows" in out and "INO: no record" in out
    for absent in ("A draft nugget", "Workspace Owners", "Globex", "Reviewed nugget"):
        assert absent not in out
    assert "(2 PENDING_REVIEW nugget(s) of tenant 'acme')" in out
    drafts = run(["candidates", "--tenant", "acme", "--state", "draft"], tmp_path).stdout
    assert "A draft nugget" in drafts and "Password resets" not in drafts
    done = run(["candidates", "--tenant", "acme", "--state", "published"], tmp_path).stdout
    assert f"{reviewed.id} v2 PUBLISHED" in done and f"id={approved.id}" in done
    assert "Workspace Owners reset passwords" in done
    assert "Globex pending nugget" in run(["candidates", "--tenant", "globex"], tmp_path).stdout
    # paging: --limit, then the token the last line gives
    one = run(["candidates", "--tenant", "acme", "--limit", "1"], tmp_path).stdout
    assert queue[0].id in one and queue[1].id not in one
    token = one.split("--page-token ")[1].split(")")[0]
    rest = run(["candidates", "--tenant", "acme", "--page-token", token], tmp_path).stdout
    assert queue[1].id in rest and queue[0].id not in rest and "--page-token" not in rest
    reply = json.loads(run(["candidates", "--tenant", "acme", "--json"], tmp_path).stdout)
    assert [c["id"] for c in reply["candidates"]] == [n.id for n in queue]
    shown = next(c for c in reply["candidates"] if c["id"] == audited.id)
    assert shown["provenance"]["triggerQuery"] == "are password resets logged anywhere"
    assert shown["optimization"] == {"variant": "E", "iterations": 3, "passed": True}
    bad = run(["candidates", "--tenant", "acme", "--state", "approved"], tmp_path, check=False)
    assert bad.returncode == 2 and "not a review state: 'approved'" in bad.stderr
    bad = run(["candidates", "--tenant", "acme", "--page-token", "junk"], tmp_path, check=False)
    assert bad.returncode == 2 and "page_token" in bad.stderr
    # search hits carry the lineage and version of the nugget version they serve
    hits = json.loads(run(["search", "who manages the vpn", "--tenant", "acme", "--json",
                           "--nuggets-only", "--no-gate", "--lexical-only"],
                          tmp_path).stdout)["hits"]
    hit = next(h for h in hits if h["id"] == approved.id)
    assert hit["lineage_id"] == reviewed.id and hit["version"] == 2
