"""The review console in a real headless browser: Debian's chromium driven by selenium
through chromedriver (installed by deploy/browser/install.sh, like the other servers; a
browser that cannot be had fails these tests, it never skips them).

The stack runs on its own thread and event loop: a SQLite index with the portal corpus
for two tenants, candidates produced by the embedded runner (the worker's steps without
Kafka, manual review), the gRPC query service with per-tenant tokens, and the console.
The tests sign in, review a candidate, see the factual guard refuse an added number, edit
and approve it, find it through gRPC Retrieve, revert it; check that tenant A's token
never shows tenant B's data, that a comment holding markup renders as text (a script
never gets this far: the reader refuses feedback with markup that runs code), that a
POST without the CSRF token is refused and that the second of two concurrent edits is
refused with the newer version shown. With NUGGETFLOW_SCREENSHOTS=docs the queue and
candidate screenshots are written to docs/ (the README shows them).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.ui import Select, WebDriverWait

from nuggetflow.settings import Settings
from nuggetflow_client import QueryClient

pytestmark = [pytest.mark.integration, pytest.mark.browser]

ROOT = Path(__file__).resolve().parents[2]
TOKEN_A = "acme-console-token-0123456789"
TOKEN_B = "globex-console-token-0123456789"
# styling markup with an id: rendered as HTML it would put an element #injected on the page
MARKUP = '<b id="injected">Careful:</b>'


@dataclass
class Stack:
    """The running services and what the runner produced."""

    grpc_target: str = ""
    console_url: str = ""
    candidates: dict[str, str] = field(default_factory=dict)  # event id -> lineage id
    loop: asyncio.AbstractEventLoop | None = None
    stop: asyncio.Event | None = None
    error: BaseException | None = None


def _events() -> list[bytes]:
    from stream.synthetic import correction, event

    (q0, a0, c0), (q1, a1, c1), (q2, a2, c2) = correction(0), correction(1), correction(2)
    return [json.dumps(e).encode() for e in (
        event("ev-a1", "acme", q0, a0, c0, minutes=1),
        # the same key as ev-a1 (portal v8.0), another role, newer: it would succeed ev-a1
        event("ev-a2", "acme", q1, a1, f"{MARKUP} {c1.replace('v8.1', 'v8.0')}", minutes=5),
        event("ev-g1", "globex", q2, a2, c2, minutes=3))]


async def _serve(stack: Stack, workdir: Path, ready: threading.Event) -> None:
    from console.server import config_from_settings, serving
    from optimizer.guard import check_edit
    from optimizer.local import local_roles
    from query.auth import TokenAuth
    from query.backends.sqlite import SQLiteStore
    from query.corpus import Document, passages_of
    from query.embeddings import MiniLMEmbedder
    from query.index import NuggetIndex
    from query.service import create_server
    from stream.engine import InlineEngine
    from stream.runner import EmbeddedRunner
    from stream.steps import Steps
    from stream.synthetic import T0, portal_corpus
    from stream.topics import Topics

    settings = Settings.from_env({}, store=f"sqlite:///{workdir}/index.db",
                                 tenant_owners="acme=alice")
    embedder = MiniLMEmbedder()
    index = NuggetIndex(SQLiteStore(workdir / "index.db"), embedder, settings)
    await index.start()
    engine = InlineEngine(index.store, embedder, local_roles(), settings)
    await engine.start()
    try:
        for tenant in ("acme", "globex"):
            for rec in portal_corpus(tenant):
                await index.ingest_passages(passages_of(Document(
                    rec["id"], tenant, rec["title"], rec["text"], valid_from=T0), 800))
        report = await EmbeddedRunner(Steps(index, engine, settings), Topics()).run(
            enumerate(_events(), 1))
        assert report.summary()["steps"]["publish"] == {"pending_review": 3}, report.summary()
        for tenant, event_id in (("acme", "ev-a1"), ("acme", "ev-a2"), ("globex", "ev-g1")):
            [n] = await index.store.find_by_event(tenant, event_id)
            stack.candidates[event_id] = n.lineage_id or n.id
        server, port = create_server(index, settings, 0, guard=check_edit,
                                     auth=TokenAuth({TOKEN_A: ["acme"], TOKEN_B: ["globex"]}))
        await server.start()
        stack.grpc_target = f"127.0.0.1:{port}"
        async with serving(config_from_settings(settings, stack.grpc_target)) as console:
            stack.console_url = console.url
            stack.loop, stack.stop = asyncio.get_running_loop(), asyncio.Event()
            ready.set()
            await stack.stop.wait()
        await server.stop(0)
    finally:
        await engine.stop()
        await index.stop()


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """Index, runner candidates, query service and console on a thread of their own."""
    stack = Stack()
    ready = threading.Event()

    def main() -> None:
        try:
            asyncio.run(_serve(stack, tmp_path_factory.mktemp("console"), ready))
        except BaseException as exc:  # reported to the tests below
            stack.error = exc
            ready.set()

    thread = threading.Thread(target=main, name="console-stack", daemon=True)
    thread.start()
    assert ready.wait(300), "the console stack did not start in 300 s"
    if stack.error is not None:
        raise stack.error
    yield stack
    assert stack.loop is not None and stack.stop is not None
    stack.loop.call_soon_threadsafe(stack.stop.set)
    thread.join(30)


@pytest.fixture(scope="module")
def browser() -> Iterator[WebDriver]:
    """Headless chromium through chromedriver (Debian's packages)."""
    proc = subprocess.run([str(ROOT / "deploy/browser/install.sh")], capture_output=True,
                          text=True, timeout=900)
    if proc.returncode != 0:
        pytest.fail("chromium/chromedriver could not be installed (deploy/browser/install.sh):"
                    f"\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1280,1000", "--lang=en-US"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


def submit(driver: WebDriver, button: WebElement) -> None:
    """Click a form's button and wait for the page it leads to."""
    old = driver.find_element(By.TAG_NAME, "html")
    button.click()

    def left(_: WebDriver) -> bool:
        try:
            old.is_enabled()
        except WebDriverException:  # stale, or no longer in any document
            return True
        return False

    WebDriverWait(driver, 30).until(left)
    WebDriverWait(driver, 30).until(
        lambda d: d.execute_script("return document.readyState") == "complete")


def sign_in(driver: WebDriver, stack: Stack, token: str, name: str) -> None:
    driver.delete_all_cookies()
    driver.get(stack.console_url + "/signin")
    driver.find_element(By.ID, "token").send_keys(token)
    driver.find_element(By.ID, "reviewer").send_keys(name)
    submit(driver, driver.find_element(By.ID, "signin"))


def text(driver: WebDriver, css: str = "main") -> str:
    return str(driver.find_element(By.CSS_SELECTOR, css).text)


def screenshot(driver: WebDriver, name: str, tmp_path: Path) -> Path:
    """A full-page PNG: into docs/ with NUGGETFLOW_SCREENSHOTS=docs, else tmp_path."""
    height = int(driver.execute_script("return document.documentElement.scrollHeight"))
    driver.set_window_size(1280, min(max(height, 800), 3200))
    folder = ROOT / "docs" if os.environ.get("NUGGETFLOW_SCREENSHOTS") == "docs" else tmp_path
    path = folder / name
    assert driver.save_screenshot(str(path))
    driver.set_window_size(1280, 1000)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 10_000
    return path


def edit_body(driver: WebDriver, body: str, title: str | None = None) -> None:
    area = driver.find_element(By.ID, "edit-body")
    area.clear()
    area.send_keys(body)
    if title is not None:
        field_ = driver.find_element(By.ID, "edit-title")
        field_.clear()
        field_.send_keys(title)
    submit(driver, driver.find_element(By.ID, "edit-check"))


def test_review_edit_guard_approve_retrieve_revert(stack: Stack, browser: WebDriver,
                                                   tmp_path: Path) -> None:
    sign_in(browser, stack, TOKEN_A, "alice")
    assert browser.current_url.endswith("/t/acme/queue")
    queue = text(browser)
    assert "2 candidates waiting for review" in queue
    cards = browser.find_elements(By.CSS_SELECTOR, "article.candidate")
    assert [c.get_attribute("id") for c in cards] == [
        f"c-{stack.candidates['ev-a2']}", f"c-{stack.candidates['ev-a1']}"], "newest first"
    assert "Workspace Owner" in queue and "thumbs down" in queue and "alice" in queue
    screenshot(browser, "console-queue.png", tmp_path)

    lineage = stack.candidates["ev-a1"]
    submit(browser, browser.find_element(By.CSS_SELECTOR, f"#c-{lineage} a.open"))
    page = text(browser)
    assert "Optimization trace (INO)" in page and "Round 1:" in page
    hood = text(browser, "#neighbourhood")
    assert "same key: Why can't my analyst" in hood and "Approving it now: published" in hood
    original_body = browser.find_element(By.ID, "edit-body").get_attribute("value") or ""
    assert "Workspace Owner" in original_body

    # The guard refuses an added number; nothing can be saved and the edit is kept.
    edit_body(browser, original_body + " Resets take 45 minutes.")
    verdict = text(browser, "#guard-verdict")
    assert "refuses" in verdict and "'45'" in verdict
    assert not browser.find_elements(By.ID, "edit-save")
    assert "45 minutes" in (browser.find_element(By.ID, "edit-body").get_attribute("value")
                            or "")
    # A rewording passes the guard, shows what changes, then is saved as version 2.
    edit_body(browser, original_body, title="Who can reset another user's password in the portal")
    assert "accepts this edit" in text(browser, "#guard-verdict")
    submit(browser, browser.find_element(By.ID, "edit-save"))
    assert "Saved as version 2" in text(browser), text(browser)[:600]
    assert text(browser, "#version") == "version 2"

    submit(browser, browser.find_element(By.ID, "approve"))
    assert "version 3 is now published" in text(browser)
    with QueryClient(stack.grpc_target, TOKEN_A) as client:
        head = client.get_nugget("acme", lineage)
        assert head.reviewer == "alice" and head.version == 3
        hits = client.retrieve("acme", "who can reset another user's password", gate=False)
        assert lineage in [h.lineage_id for h in hits.hits]

    # The newer candidate with the same key (another role) would succeed the published value.
    browser.get(stack.console_url + f"/t/acme/n/{stack.candidates['ev-a2']}")
    hood = text(browser, "#neighbourhood")
    assert "Approving it now: succession" in hood and "supersedes: Who can reset" in hood, hood
    assert "ends this neighbour's validity" in hood
    screenshot(browser, "console-candidate.png", tmp_path)
    browser.get(stack.console_url + f"/t/acme/n/{lineage}")

    Select(browser.find_element(By.ID, "revert-target")).select_by_value(lineage)
    submit(browser, browser.find_element(By.ID, "revert"))
    assert "Reverted: version 4 is now pending review" in text(browser)
    with QueryClient(stack.grpc_target, TOKEN_A) as client:
        hits = client.retrieve("acme", "who can reset another user's password", gate=False)
        assert lineage not in [h.lineage_id for h in hits.hits]
    submit(browser, browser.find_element(By.ID, "versions-link"))
    assert "v3 → v4" in text(browser, "#diff-title")


def test_a_token_never_shows_another_tenants_data(stack: Stack, browser: WebDriver) -> None:
    sign_in(browser, stack, TOKEN_B, "gina")
    assert browser.current_url.endswith("/t/globex/queue")
    assert "Billing Admin" in text(browser) and "Workspace Owner" not in browser.page_source
    assert [a.text for a in browser.find_elements(By.CSS_SELECTOR, "nav.tenants a")] == [
        "globex"]
    for path in ("/t/acme/queue", f"/t/acme/n/{stack.candidates['ev-a1']}",
                 "/t/acme/knowledge", "/t/acme/flags"):
        browser.get(stack.console_url + path)
        assert "Not your tenant" in text(browser)
        assert "Workspace Owner" not in browser.page_source
    browser.get(stack.console_url + "/t/globex/queue")
    submit(browser, browser.find_element(By.ID, "nav-flags"))
    assert browser.current_url.endswith("/t/globex/flags")
    assert "No published nugget is flagged for review" in text(browser)
    browser.get(stack.console_url + f"/t/globex/n/{stack.candidates['ev-a1']}")
    assert "does not exist in tenant 'globex'" in text(browser)


def test_a_comment_with_markup_renders_as_text(stack: Stack, browser: WebDriver) -> None:
    sign_in(browser, stack, TOKEN_A, "alice")
    browser.get(stack.console_url + f"/t/acme/n/{stack.candidates['ev-a2']}")
    comment = text(browser, "dd.comment")
    assert comment.startswith(MARKUP), comment
    assert not browser.find_elements(By.ID, "injected")
    assert not browser.find_elements(By.CSS_SELECTOR, "dd.comment b")
    assert "held for review: feedback: contains HTML or script" in text(browser)


def test_a_request_without_the_csrf_token_is_refused(stack: Stack, browser: WebDriver) -> None:
    sign_in(browser, stack, TOKEN_A, "alice")
    lineage = stack.candidates["ev-a2"]
    browser.get(stack.console_url + f"/t/acme/n/{lineage}")
    browser.execute_script(
        "document.querySelectorAll('input[name=csrf]').forEach(e => e.remove())")
    submit(browser, browser.find_element(By.ID, "approve"))
    assert "Request refused" in text(browser) and "Nothing was done" in text(browser)
    with QueryClient(stack.grpc_target, TOKEN_A) as client:
        assert client.get_nugget("acme", lineage).version == 1


def test_the_second_of_two_concurrent_edits_is_refused(stack: Stack, browser: WebDriver) -> None:
    sign_in(browser, stack, TOKEN_A, "alice")
    lineage = stack.candidates["ev-a2"]
    browser.get(stack.console_url + f"/t/acme/n/{lineage}")
    body = browser.find_element(By.ID, "edit-body").get_attribute("value") or ""
    edit_body(browser, body, title="Who may reset another user's password")
    assert browser.find_elements(By.ID, "edit-save")
    with QueryClient(stack.grpc_target, TOKEN_A) as client:  # another reviewer, first
        head = client.get_nugget("acme", lineage)
        other = client.edit_nugget("acme", lineage, expected_version_id=head.id,
                                   title="Which role resets other users' passwords",
                                   body=head.body, anchors=list(head.anchors),
                                   reviewer="bob")
        assert other.saved
    submit(browser, browser.find_element(By.ID, "edit-save"))
    page = text(browser)
    assert "someone changed this nugget meanwhile" in page
    assert "Which role resets other users' passwords" in text(browser, "#stale")
    assert browser.find_element(By.ID, "edit-title").get_attribute("value") == \
        "Who may reset another user's password", "the refused edit is kept"
    with QueryClient(stack.grpc_target, TOKEN_A) as client:
        assert client.get_nugget("acme", lineage).version == 2
