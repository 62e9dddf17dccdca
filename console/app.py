"""The review console: a Starlette application, server-rendered Jinja2 templates, no
JavaScript. A client of the gRPC query service (nuggetflow-client's AsyncQueryClient) with
the reviewer's own per-tenant bearer token.

Pages (``/t/<tenant>/...`` only for tenants the token grants):

- ``GET /signin``, ``POST /signin``, ``POST /signout``;
- ``GET /t/<tenant>/queue`` — pending candidates, newest first (``?mine=1``: assigned to
  me), each with its provenance, the nugget and the INO outcome;
- ``GET /t/<tenant>/n/<id>`` — one nugget: provenance, content, the optimization trace
  round by round, its governance neighbourhood side by side, usage, its open review
  flags, versions, actions;
- ``POST /t/<tenant>/n/<id>/review`` — approve, reject (reason required), unpublish,
  revert; ``POST /t/<tenant>/n/<id>/edit`` — check an edit with the factual guard
  (``step=check``, nothing saved), then save it (``step=save``) as a new version;
- ``GET /t/<tenant>/n/<id>/versions`` — version history and a diff of two versions;
- ``GET /t/<tenant>/knowledge`` — the published knowledge: words, state, validity,
  assigned to me; retrieved and cited counts;
- ``GET /t/<tenant>/flags`` — published nuggets flagged for review (by their use or a
  corpus change) with the reason; ``POST /t/<tenant>/flags/<lineage>/dismiss`` — keep
  the nugget as it is (the flag of ``kind``, or all of them, is dismissed).

Every POST carries the session's CSRF token (:func:`form_action` refuses it otherwise,
403); every page is escaped (Jinja2 autoescape) and sent with a strict Content Security
Policy; sessions expire (:mod:`console.sessions`). A review or edit sends the version the
reviewer saw, so the second of two concurrent changes is refused with the newer version
shown, and a request id, so a resubmitted form applies once.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import jinja2
from starlette.applications import Starlette
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from console import views
from console.diff import version_diff
from console.sessions import COOKIE, Session, SessionStore
from nuggetflow_client import (
    Aborted,
    AsyncQueryClient,
    ClientError,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    Unauthenticated,
    Unavailable,
)
from nuggetflow_client.v1 import nugget_pb2 as pb

HERE = Path(__file__).resolve().parent
MAX_REVIEWER_CHARS = 100
SECURITY_HEADERS = {
    "Content-Security-Policy": ("default-src 'none'; style-src 'self'; img-src 'self'; "
                                "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"),
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}
ClientFactory = Callable[[str], AsyncQueryClient]


@dataclass
class ConsoleConfig:
    """What the console needs: the query service and how sessions behave."""

    grpc_target: str
    session_idle_seconds: float = 30 * 60
    session_lifetime_seconds: float = 12 * 3600
    secure_cookies: bool = False
    page_size: int = 20
    client_factory: ClientFactory | None = None

    def client(self, token: str) -> AsyncQueryClient:
        """A client of the query service with the reviewer's token."""
        if self.client_factory is not None:
            return self.client_factory(token)
        return AsyncQueryClient(self.grpc_target, token or None)


def _templates() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"),
                             autoescape=True, undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True)
    env.globals.update(ts=views.ts_text, validity=views.validity_text,
                       publication=lambda n: views.PUBLICATION_LABELS.get(n.publication, "?"),
                       state=lambda n: views.STATE_LABELS.get(n.state, "?"),
                       rating=lambda r: views.RATING_LABELS.get(r, r),
                       flag_label=lambda k: views.FLAG_LABELS.get(k, k.replace("_", " ")),
                       time=views.time_text,
                       date_input=views.date_input, is_current=views.is_current, pb=pb)
    return env


class Console:
    """The application's state: configuration, sessions, templates."""

    def __init__(self, config: ConsoleConfig) -> None:
        self.config = config
        self.sessions = SessionStore(config.session_idle_seconds,
                                     config.session_lifetime_seconds)
        self.env = _templates()

    # --- responses ----------------------------------------------------------------

    def page(self, request: Request, session: Session | None, template: str,
             status: int = 200, **context: Any) -> HTMLResponse:
        """A rendered page (escaped) with the security headers and the session cookie."""
        tenant = context.get("tenant", "")
        html = self.env.get_template(template).render(
            session=session, flash=session.take_flash() if session else [],
            tenant=tenant, request_path=request.url.path, **{
                k: v for k, v in context.items() if k != "tenant"})
        response = HTMLResponse(html, status_code=status, headers=SECURITY_HEADERS)
        if session is not None:
            self.set_cookie(response, session)
        return response

    def set_cookie(self, response: Response, session: Session) -> None:
        """The session id cookie: HttpOnly, SameSite=Strict, Secure when configured."""
        response.set_cookie(COOKIE, session.id, httponly=True, samesite="strict",
                            secure=self.config.secure_cookies, path="/")

    def redirect(self, url: str, session: Session | None = None) -> RedirectResponse:
        """303 See Other (after a POST), keeping the session cookie."""
        response = RedirectResponse(url, status_code=303, headers=SECURITY_HEADERS)
        if session is not None:
            self.set_cookie(response, session)
        return response

    def problem(self, request: Request, session: Session | None, status: int, title: str,
                message: str, tenant: str = "") -> HTMLResponse:
        """An error page that says what went wrong and what to do."""
        return self.page(request, session, "problem.html", status=status, title=title,
                         message=message, tenant=tenant)

    # --- sessions -----------------------------------------------------------------

    def session_of(self, request: Request) -> Session | None:
        """The request's live session, if any."""
        return self.sessions.get(request.cookies.get(COOKIE))

    def signed_in(self, request: Request) -> Session | Response:
        """The signed-in session, or a redirect to the sign-in page (saying why)."""
        sid = request.cookies.get(COOKIE)
        session = self.sessions.get(sid)
        if session is not None and session.signed_in:
            return session
        fresh = session or self.sessions.new()
        if sid and session is None:
            fresh.say("error", "Your session expired: sign in again.")
        return self.redirect("/signin?" + urlencode({"next": str(request.url.path)}), fresh)


def _console(request: Request) -> Console:
    value: Console = request.app.state.console
    return value


Handler = Callable[[Request, Console, Session], Awaitable[Response]]
FormHandler = Callable[[Request, Console, Session, FormData], Awaitable[Response]]


def page_for_tenant(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
    """A GET page under ``/t/<tenant>``: signed in, for a tenant the token grants."""

    async def endpoint(request: Request) -> Response:
        console = _console(request)
        session = console.signed_in(request)
        if isinstance(session, Response):
            return session
        tenant = request.path_params.get("tenant", "")
        if not session.may_use(tenant):
            return console.problem(request, session, 403, "Not your tenant",
                                   f"Your token does not grant tenant {tenant!r}. You may "
                                   f"review: {', '.join(session.tenants)}.")
        return await _calling(request, console, session, handler)

    return endpoint


def form_action(handler: FormHandler, *, signed_in: bool = True
                ) -> Callable[[Request], Awaitable[Response]]:
    """A POST: the form must carry the session's CSRF token (403 otherwise, nothing
    done) and come from this console's origin; under ``/t/<tenant>`` the token must grant
    the tenant."""

    async def endpoint(request: Request) -> Response:
        console = _console(request)
        session = console.session_of(request)
        form = await request.form()
        # A browser names the page a POST comes from; it must be this console's host (the
        # scheme is not compared: behind a TLS proxy the console itself sees http).
        origin = request.headers.get("origin")
        same_origin = origin is None or urlsplit(origin).netloc == request.headers.get("host")
        token = form.get("csrf")
        if session is None or not same_origin or not session.csrf_ok(
                token if isinstance(token, str) else None):
            fresh = session or console.sessions.new()
            why = ("your session expired" if console.sessions.expired(
                request.cookies.get(COOKIE)) else "the form did not carry this session's "
                   "security token (CSRF)")
            return console.problem(request, fresh, 403, "Request refused",
                                   f"Nothing was done: {why}. Go back, reload the page "
                                   "and try again.")
        if signed_in and not session.signed_in:
            return console.redirect("/signin", session)
        tenant = request.path_params.get("tenant")
        if tenant is not None and not session.may_use(tenant):
            return console.problem(request, session, 403, "Not your tenant",
                                   f"Your token does not grant tenant {tenant!r}.")

        async def run(request: Request, console: Console, session: Session) -> Response:
            return await handler(request, console, session, form)

        return await _calling(request, console, session, run)

    return endpoint


async def _calling(request: Request, console: Console, session: Session,
                   handler: Handler) -> Response:
    """Run a handler; a failed query-service call becomes a page that says why."""
    tenant = request.path_params.get("tenant", "")
    try:
        return await handler(request, console, session)
    except NotFound as exc:
        return console.problem(request, session, 404, "Not found",
                               f"{_what(request)} does not exist in tenant {tenant!r} "
                               f"({exc.message}).", tenant)
    except Unauthenticated:
        console.sessions.end(session.id)
        fresh = console.sessions.new()
        fresh.say("error", "The query service no longer accepts your token: sign in again.")
        return console.redirect("/signin", fresh)
    except PermissionDenied:
        return console.problem(request, session, 403, "Not your tenant",
                               f"Your token does not grant tenant {tenant!r}.", tenant)
    except Unavailable:
        return console.problem(request, session, 503, "Query service unreachable",
                               "The query service does not answer right now; nothing was "
                               "changed. Try again in a moment.", tenant)
    except ClientError as exc:
        return console.problem(request, session, 400, "The query service refused this",
                               f"{exc.message}", tenant)


def _what(request: Request) -> str:
    nid = request.path_params.get("nugget")
    return f"Nugget {nid!r}" if nid else "This page"


# --- sign-in -----------------------------------------------------------------------


async def signin_page(request: Request) -> Response:
    """The sign-in form (a fresh pre-sign-in session carries its CSRF token)."""
    console = _console(request)
    session = console.session_of(request) or console.sessions.new()
    if session.signed_in:
        return console.redirect(_home(session), session)
    return console.page(request, session, "signin.html", next=_safe_next(
        request.query_params.get("next", "")), reviewer="", open_mode=False)


async def signin(request: Request, console: Console, session: Session,
                 form: FormData) -> Response:
    """Check the token with the query service (WhoAmI); sign in as the named reviewer."""
    token = str(form.get("token", "")).strip()
    reviewer = " ".join(str(form.get("reviewer", "")).split())
    wanted = [t.strip() for t in str(form.get("tenants", "")).split(",") if t.strip()]
    nxt = _safe_next(str(form.get("next", "")))

    def again(message: str, open_mode: bool = False) -> Response:
        session.say("error", message)
        return console.page(request, session, "signin.html", status=400, next=nxt,
                            reviewer=reviewer, open_mode=open_mode)

    if not token:
        return again("Enter the bearer token your administrator gave you.")
    if not reviewer or len(reviewer) > MAX_REVIEWER_CHARS:
        return again(f"Enter your name (1-{MAX_REVIEWER_CHARS} characters): every action is "
                     "recorded with it.")
    try:
        async with console.config.client(token) as client:
            me = await client.who_am_i()
    except Unauthenticated:
        return again("The query service does not know this token.")
    except Unavailable:
        return again("The query service does not answer right now: try again in a moment.")
    tenants = me.tenants
    if me.unrestricted:
        if not wanted:
            return again("The query service runs without tokens (development): name the "
                         "tenants you review, separated by commas.", open_mode=True)
        tenants = tuple(dict.fromkeys(wanted))
    if not tenants:
        return again("This token grants no tenant.")
    signed = console.sessions.sign_in(session, token, reviewer, tuple(tenants))
    signed.say("ok", f"Signed in as {reviewer}.")
    return console.redirect(nxt if _tenant_of(nxt) in tenants else _home(signed), signed)


async def signout(request: Request, console: Console, session: Session,
                  form: FormData) -> Response:
    """End the session."""
    console.sessions.end(session.id)
    fresh = console.sessions.new()
    fresh.say("ok", "Signed out.")
    return console.redirect("/signin", fresh)


async def home(request: Request) -> Response:
    """The first tenant's review queue."""
    console = _console(request)
    session = console.signed_in(request)
    if isinstance(session, Response):
        return session
    return console.redirect(_home(session), session)


def _home(session: Session) -> str:
    return f"/t/{session.tenants[0]}/queue" if session.tenants else "/signin"


def _safe_next(value: str) -> str:
    """A local path to go to after sign-in (never another site)."""
    return value if value.startswith("/t/") and "//" not in value and "\\" not in value else ""


def _tenant_of(path: str) -> str:
    parts = path.split("/")
    return parts[2] if len(parts) > 2 and parts[1] == "t" else ""


# --- the review queue and the knowledge --------------------------------------------


async def queue(request: Request, console: Console, session: Session) -> Response:
    """Pending candidates, newest first; ``mine=1``: those assigned to me."""
    tenant = request.path_params["tenant"]
    mine = request.query_params.get("mine") == "1"
    async with console.config.client(session.token) as client:
        page = await client.list_candidates(
            tenant, order="newest", page_size=console.config.page_size,
            page_token=request.query_params.get("page", ""),
            owner=session.reviewer if mine else "")
    return console.page(request, session, "queue.html", tenant=tenant, page=page, mine=mine)


STATE_FILTERS = ("active", "deprecated", "contested")
VALIDITY_FILTERS = ("current", "expired", "future")


async def knowledge(request: Request, console: Console, session: Session) -> Response:
    """The published knowledge: words, lifecycle state, validity, assigned to me; with
    how often each (current version) was retrieved and cited."""
    tenant = request.path_params["tenant"]
    q = request.query_params
    state = q.get("state", "") if q.get("state", "") in STATE_FILTERS else ""
    validity = q.get("validity", "") if q.get("validity", "") in VALIDITY_FILTERS else ""
    mine = q.get("mine") == "1"
    words = q.get("q", "").strip()[:200]
    async with console.config.client(session.token) as client:
        page = await client.list_candidates(
            tenant, publications=["published"], states=[state] if state else [],
            validity=validity, query=words, owner=session.reviewer if mine else "",  # type: ignore[arg-type]
            order="newest", page_size=console.config.page_size,
            page_token=q.get("page", ""))
        usage = {u.id: u for u in await client.get_usage(tenant, [n.id for n in page.nuggets])}
    filters = {"q": words, "state": state, "validity": validity, "mine": "1" if mine else ""}
    return console.page(request, session, "knowledge.html", tenant=tenant, page=page,
                        usage=usage, filters=filters, states=STATE_FILTERS,
                        validities=VALIDITY_FILTERS,
                        next_url=_with(request, page=page.next_page_token))


async def flags_page(request: Request, console: Console, session: Session) -> Response:
    """The open review flags: published nuggets sent back to review by their use or a
    corpus change, each with its reason and counts, and "Keep as it is"."""
    tenant = request.path_params["tenant"]
    async with console.config.client(session.token) as client:
        flags = await client.list_review_flags(tenant)
    return console.page(request, session, "flags.html", tenant=tenant, flags=flags)


async def dismiss(request: Request, console: Console, session: Session,
                  form: FormData) -> Response:
    """Keep a flagged nugget as it is: dismiss its flag of ``kind`` ("": every kind), then
    back to the flags page (``back=nugget``: to the nugget's page)."""
    tenant, lineage = request.path_params["tenant"], request.path_params["lineage"]
    kind = str(form.get("kind", ""))
    back = (f"/t/{tenant}/n/{lineage}" if form.get("back") == "nugget"
            else f"/t/{tenant}/flags")
    async with console.config.client(session.token) as client:
        try:
            done = await client.dismiss_review_flag(tenant, lineage, kind,
                                                    reviewer=session.reviewer)
        except NotFound:
            session.say("error", "Nothing was changed: this nugget has no such flag any "
                        "more (a newer review may have lifted it).")
            return console.redirect(back, session)
        except InvalidArgument as exc:
            session.say("error", f"Nothing was changed: {exc.message}")
            return console.redirect(back, session)
    title = done[0].title or lineage
    kinds = ", ".join(views.FLAG_LABELS.get(f.kind, f.kind) for f in done)
    session.say("ok", f'Kept as it is: "{title}" is no longer flagged ({kinds}).')
    return console.redirect(back, session)


def _with(request: Request, **params: str) -> str:
    query = {k: v for k, v in request.query_params.items() if k not in params}
    query.update({k: v for k, v in params.items() if v})
    return f"{request.url.path}?{urlencode(query)}"


# --- one nugget ---------------------------------------------------------------------


@dataclass
class EditForm:
    """An edit as typed in the form (kept whole when it is not saved)."""

    title: str = ""
    body: str = ""
    anchors: str = ""
    subject: str = ""
    predicate: str = ""
    object: str = ""
    scope: str = ""
    valid_from: str = ""
    valid_until: str = ""
    reason: str = ""
    expected_version_id: str = ""

    @classmethod
    def of(cls, n: pb.Nugget) -> EditForm:
        """The form filled with a version's content."""
        return cls(n.title, n.body, "\n".join(n.anchors), n.fact.subject, n.fact.predicate,
                   n.fact.object, n.fact.scope, views.date_input(n.validity, "start"),
                   views.date_input(n.validity, "end"), "", n.id)

    @classmethod
    def from_form(cls, form: FormData) -> EditForm:
        """The form as submitted."""
        return cls(**{f: str(form.get(f, "")) for f in cls.__dataclass_fields__})

    @property
    def anchor_list(self) -> list[str]:
        """One anchor per non-empty line."""
        return [a.strip() for a in self.anchors.splitlines() if a.strip()]


async def _nugget_context(client: AsyncQueryClient, tenant: str, nid: str) -> dict[str, Any]:
    """What the nugget page shows: the head, its first version (the provenance as
    extracted), neighbourhood, usage per version, versions, its open review flags."""
    head = await client.get_nugget(tenant, nid)
    hood = await client.get_neighbourhood(tenant, head.lineage_id)
    versions: list[pb.Nugget] = []
    token = ""
    while True:
        page = await client.list_versions(tenant, head.lineage_id, page_token=token)
        versions += page.nuggets
        token = page.next_page_token
        if not token:
            break
    usage = await client.get_usage(tenant, [v.id for v in versions])
    flags = [f for f in await client.list_review_flags(tenant)
             if f.lineage_id == head.lineage_id]
    return {"n": head, "hood": hood, "versions": versions, "usage": usage, "flags": flags,
            "retrieved": sum(u.retrieved for u in usage), "cited": sum(u.cited for u in usage),
            "rounds": views.rounds(head), "first": versions[0] if versions else head}


async def nugget_page(request: Request, console: Console, session: Session) -> Response:
    """One nugget with everything a reviewer needs, and the actions."""
    tenant, nid = request.path_params["tenant"], request.path_params["nugget"]
    async with console.config.client(session.token) as client:
        context = await _nugget_context(client, tenant, nid)
    return _render_nugget(request, console, session, tenant, context,
                          EditForm.of(context["n"]))


def _render_nugget(request: Request, console: Console, session: Session, tenant: str,
                   context: dict[str, Any], edit: EditForm, status: int = 200,
                   **extra: Any) -> Response:
    values: dict[str, Any] = {"check": None, "stale": None, "reject_reason": ""}
    values.update(extra)
    return console.page(request, session, "nugget.html", status=status, tenant=tenant,
                        edit=edit, request_id=uuid.uuid4().hex, **context, **values)


#: Each review action and what the page says it did.
ACTION_OUTCOMES = {"approve": "approved", "reject": "rejected", "unpublish": "unpublished",
                   "revert": "reverted"}


async def review(request: Request, console: Console, session: Session,
                 form: FormData) -> Response:
    """Approve, reject (a reason is required), unpublish or revert the version seen."""
    tenant, nid = request.path_params["tenant"], request.path_params["nugget"]
    action = str(form.get("action", ""))
    reason = str(form.get("reason", "")).strip()
    expected = str(form.get("expected_version_id", ""))
    target = str(form.get("target_version_id", ""))
    async with console.config.client(session.token) as client:
        problem = ""
        if action not in ACTION_OUTCOMES:
            problem = f"Unknown action {action!r}."
        elif action == "reject" and not reason:
            problem = "Say why you reject it: the reason is kept with the nugget."
        elif action == "revert" and not target:
            problem = "Choose the version to restore."
        if problem:
            session.say("error", problem + " Nothing was changed.")
            context = await _nugget_context(client, tenant, nid)
            return _render_nugget(request, console, session, tenant, context,
                                  EditForm.of(context["n"]), status=400,
                                  reject_reason=reason)
        try:
            done = await client.review(tenant, nid, action,  # type: ignore[arg-type]
                                       reviewer=session.reviewer, reason=reason,
                                       target_version_id=target,
                                       request_id=str(form.get("request_id", "")),
                                       expected_version_id=expected)
        except Aborted:
            context = await _nugget_context(client, tenant, nid)
            session.say("error", f"Not {ACTION_OUTCOMES[action]}: someone changed this nugget "
                        "meanwhile. Its current version is shown; decide again.")
            return _render_nugget(request, console, session, tenant, context,
                                  EditForm.of(context["n"]), status=409,
                                  reject_reason=reason)
        except InvalidArgument as exc:
            context = await _nugget_context(client, tenant, nid)
            session.say("error", f"Not done: {exc.message}")
            return _render_nugget(request, console, session, tenant, context,
                                  EditForm.of(context["n"]), status=400,
                                  reject_reason=reason)
    label = views.PUBLICATION_LABELS.get(done.publication, "?")
    session.say("ok", f"{ACTION_OUTCOMES[action].capitalize()}: version {done.version} is "
                f"now {label}.")
    return console.redirect(f"/t/{tenant}/n/{done.lineage_id}", session)


async def edit(request: Request, console: Console, session: Session,
               form: FormData) -> Response:
    """``step=check``: the guard's verdict and what would change, nothing saved;
    ``step=save``: save the checked edit as a new version (refused, with the edit kept,
    when the guard objects or someone changed the nugget meanwhile)."""
    tenant, nid = request.path_params["tenant"], request.path_params["nugget"]
    typed = EditForm.from_form(form)
    save = form.get("step") == "save"
    async with console.config.client(session.token) as client:
        try:
            fact = pb.FactTriple(subject=typed.subject, predicate=typed.predicate,
                                 object=typed.object, scope=typed.scope)
            start = views.parse_time(typed.valid_from, "valid from")
            end = views.parse_time(typed.valid_until, "valid until")
            if start is None and end is not None:
                raise ValueError("valid from: needed when 'valid until' is given")
            result = await client.edit_nugget(
                tenant, nid, expected_version_id=typed.expected_version_id,
                title=typed.title, body=typed.body, anchors=typed.anchor_list, fact=fact,
                valid_from=start, valid_until=end, reviewer=session.reviewer,
                reason=typed.reason.strip(), dry_run=not save,
                request_id=str(form.get("request_id", "")) if save else "")
        except Aborted:
            context = await _nugget_context(client, tenant, nid)
            session.say("error", "Not saved: someone changed this nugget meanwhile. The "
                        f"current version (v{context['n'].version}) is shown; your edit is "
                        "kept below: compare, then check and save it again.")
            typed.expected_version_id = context["n"].id
            return _render_nugget(request, console, session, tenant, context, typed,
                                  status=409, stale=context["n"])
        except (InvalidArgument, ValueError) as exc:
            context = await _nugget_context(client, tenant, nid)
            message = exc.message if isinstance(exc, InvalidArgument) else str(exc)
            session.say("error", f"Not saved: {message}. Your edit is kept below.")
            return _render_nugget(request, console, session, tenant, context, typed,
                                  status=400)
        if save and result.saved:
            session.say("ok", f"Saved as version {result.nugget.version}.")
            return console.redirect(f"/t/{tenant}/n/{result.nugget.lineage_id}", session)
        context = await _nugget_context(client, tenant, nid)
    if save and result.violations:
        session.say("error", "Not saved: the factual guard refused the edit (below). Your "
                    "edit is kept.")
    elif not result.changed_fields:
        session.say("error", "Nothing changed: there is nothing to save.")
    proposed = result.nugget
    return _render_nugget(request, console, session, tenant, context, typed,
                          status=200 if result.guard_ok else 422,
                          check=Check(result.guard_ok, list(result.violations),
                                      list(result.changed_fields),
                                      version_diff(context["n"], proposed)))


@dataclass
class Check:
    """The guard's verdict on an edit and what it would change."""

    ok: bool
    violations: list[str]
    changed: list[str]
    diff: list[Any]


async def versions_page(request: Request, console: Console, session: Session) -> Response:
    """Every version, and the differences between two (``a`` and ``b``, version numbers;
    default: the previous and the current)."""
    tenant, nid = request.path_params["tenant"], request.path_params["nugget"]
    async with console.config.client(session.token) as client:
        context = await _nugget_context(client, tenant, nid)
    versions: list[pb.Nugget] = context["versions"]
    by_number = {v.version: v for v in versions}
    b = _int(request.query_params.get("b"), versions[-1].version)
    a = _int(request.query_params.get("a"), max(1, b - 1))
    if a not in by_number or b not in by_number:
        return console.problem(request, session, 404, "No such version",
                               f"This nugget has versions 1 to {versions[-1].version}.",
                               tenant)
    usage = dict(zip([v.id for v in versions], context["usage"], strict=True))
    return console.page(request, session, "versions.html", tenant=tenant, n=context["n"],
                        versions=versions, a=by_number[a], b=by_number[b], usage=usage,
                        diff=version_diff(by_number[a], by_number[b]))


def _int(value: str | None, default: int) -> int:
    try:
        return int(value) if value else default
    except ValueError:
        return default


# --- the application ----------------------------------------------------------------


def create_app(config: ConsoleConfig) -> Starlette:
    """The console's ASGI application."""
    console = Console(config)
    app = Starlette(routes=[
        Route("/", home),
        Route("/signin", signin_page, methods=["GET"]),
        Route("/signin", form_action(signin, signed_in=False), methods=["POST"]),
        Route("/signout", form_action(signout), methods=["POST"]),
        Route("/t/{tenant}/queue", page_for_tenant(queue)),
        Route("/t/{tenant}/knowledge", page_for_tenant(knowledge)),
        Route("/t/{tenant}/flags", page_for_tenant(flags_page)),
        Route("/t/{tenant}/flags/{lineage}/dismiss", form_action(dismiss), methods=["POST"]),
        Route("/t/{tenant}/n/{nugget}", page_for_tenant(nugget_page)),
        Route("/t/{tenant}/n/{nugget}/versions", page_for_tenant(versions_page)),
        Route("/t/{tenant}/n/{nugget}/review", form_action(review), methods=["POST"]),
        Route("/t/{tenant}/n/{nugget}/edit", form_action(edit), methods=["POST"]),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ])
    app.state.console = console
    return app
