"""The one server interceptor of the query service: access, decoding, limits, deadlines,
errors, latency.

Every QueryService call goes through :class:`ServiceInterceptor`, which

1. authenticates the bearer token (metadata only: before the request bytes are even
   decoded, so an unauthenticated caller reaches nothing, whatever it sends);
2. decodes the request itself (gRPC hands over the raw bytes): bytes that are not a valid
   message (corrupt wire format, a string field that is not UTF-8) are INVALID_ARGUMENT
   with a short fixed message, counted like any call and logged at most once a minute
   per kind, without the payload and without a traceback;
3. checks the size of every field (:class:`~query.limits.RequestLimits`), then the
   request's ``tenant`` against the token (every QueryService request has one, except
   WhoAmI's, which asks what the token grants), and makes the caller known to the
   handler (:data:`CALLER`);
4. runs the handler under the call's deadline (``context.time_remaining()``): a call
   whose deadline has passed is not started, and a running read is cancelled when it
   passes. Writes (Review, EditNugget) get the deadline instead and check it themselves right before
   the write begins; a write that has begun is finished, never cancelled half way;
5. maps exceptions to status codes, in :func:`status_for` and nowhere else
   (``nuggetflow.errors`` -> gRPC codes; anything unexpected is INTERNAL with an error id
   that is also logged, never the exception text);
6. observes the latency histogram by method and status code (a Retrieve or
   ReportCitations made in a probe session as ``Retrieve.probe`` / ``ReportCitations.probe``,
   so probe traffic never shows in the production series).

Other services on the same server (health, reflection) pass through, except that the
requests of their unary methods (the health check) are decoded the same way: undecodable
bytes are INVALID_ARGUMENT, logged at most once a minute per kind.
"""

from __future__ import annotations

import asyncio
import contextvars
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
from google.protobuf.message import DecodeError

from nuggetflow.errors import (
    BackendUnavailableError,
    BudgetExceededError,
    ConflictError,
    DeadlineExceededError,
    NotFoundError,
    UndecodableRequestError,
    ValidationError,
)
from nuggetflow.logging import LogThrottle, clip, get_logger
from query.auth import AuthenticationError, PermissionDeniedError, Principal, TokenAuth
from query.limits import RequestLimits
from query.metrics import QueryMetrics
from query.probes import SessionLimitError

log = get_logger(__name__)

SERVICE_PREFIX = "/nuggetflow.v1.QueryService/"
FIELD_METADATA_KEY = "nuggetflow-field"
DEADLINE_SLACK_SECONDS = 0.005
WRITE_METHODS = frozenset({"Review", "EditNugget"})  # they honour the deadline themselves
# Methods whose request has no tenant: the token alone is checked (WhoAmI).
TENANTLESS_METHODS = frozenset({"WhoAmI"})
# The authenticated caller of the call being handled (set before the handler runs).
CALLER: contextvars.ContextVar[Principal] = contextvars.ContextVar("nuggetflow_caller")
DECODE_LOG_INTERVAL_SECONDS = 60.0  # one "undecodable request" line per kind per minute

Behavior = Callable[[Any, grpc.aio.ServicerContext], Awaitable[Any]]
Decoder = Callable[[bytes], Any]

__all__ = ["DeadlineExceededError", "ServiceInterceptor", "status_for"]


def status_for(exc: BaseException) -> tuple[grpc.StatusCode, str]:
    """The status code and client-facing message for an exception (the one mapping).

    Messages of nuggetflow errors start with the field name (``"k: k must be in ..."``).
    """
    table: tuple[tuple[type[BaseException], grpc.StatusCode], ...] = (
        (ValidationError, grpc.StatusCode.INVALID_ARGUMENT),  # incl. InvalidTransitionError
        (NotFoundError, grpc.StatusCode.NOT_FOUND),
        (AuthenticationError, grpc.StatusCode.UNAUTHENTICATED),
        (PermissionDeniedError, grpc.StatusCode.PERMISSION_DENIED),
        (BackendUnavailableError, grpc.StatusCode.UNAVAILABLE),
        (DeadlineExceededError, grpc.StatusCode.DEADLINE_EXCEEDED),
        (BudgetExceededError, grpc.StatusCode.RESOURCE_EXHAUSTED),
        (SessionLimitError, grpc.StatusCode.RESOURCE_EXHAUSTED),
        (ConflictError, grpc.StatusCode.ABORTED),
    )
    for cls, code in table:
        if isinstance(exc, cls):
            if code is grpc.StatusCode.UNAVAILABLE:
                # The backend's address and driver message are internals: say what failed.
                return code, "index backend unavailable; retry later"
            return code, str(exc)
    return grpc.StatusCode.INTERNAL, "internal error"


class ServiceInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    """Auth, decoding, limits, deadline, status mapping and latency for every QueryService
    method."""

    def __init__(self, auth: TokenAuth, metrics: QueryMetrics,
                 limits: RequestLimits | None = None) -> None:
        self.auth = auth
        self.metrics = metrics
        self.limits = limits if limits is not None else RequestLimits()
        self._wrapped: dict[str, grpc.RpcMethodHandler] = {}
        self._decode_log = LogThrottle(DECODE_LOG_INTERVAL_SECONDS)

    async def intercept_service(
        self, continuation: Callable[[Any], Awaitable[grpc.RpcMethodHandler | None]],
        handler_call_details: Any,
    ) -> grpc.RpcMethodHandler | None:
        """Wrap unary QueryService handlers (cached per method), and the decoding of other
        unary-unary handlers (health checks); pass the rest through.

        The wrapped handler takes the raw request bytes (no deserializer at the gRPC
        level, where a decoding error would escape as UNKNOWN with its text, before auth,
        and log a traceback).
        """
        method: str = handler_call_details.method
        cached = self._wrapped.get(method)
        if cached is not None:
            return cached
        handler = await continuation(handler_call_details)
        if (handler is None or handler.unary_unary is None
                or handler.request_deserializer is None):
            return handler
        if method.startswith(SERVICE_PREFIX):
            behavior = self._wrap(method.removeprefix(SERVICE_PREFIX), handler.unary_unary,
                                  handler.request_deserializer)
        else:
            behavior = self._wrap_decoding(method, handler.unary_unary,
                                           handler.request_deserializer)
        wrapped = grpc.unary_unary_rpc_method_handler(
            behavior, request_deserializer=None,
            response_serializer=handler.response_serializer)
        self._wrapped[method] = wrapped
        return wrapped

    def _wrap_decoding(self, method: str, inner: Behavior, decode: Decoder) -> Behavior:
        """Only the decoding of ``inner``'s request (a service without tokens or metrics
        of its own, e.g. grpc.health.v1.Health/Check)."""
        async def behavior(raw: bytes, context: grpc.aio.ServicerContext) -> Any:
            try:
                request = _decode(decode, raw)
            except UndecodableRequestError as exc:
                self._log_undecodable(method, exc, len(raw))
                await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
            return await inner(request, context)

        return behavior

    def _log_undecodable(self, method: str, exc: UndecodableRequestError, size: int) -> None:
        allowed, held = self._decode_log.allow(exc.kind)
        if allowed:
            log.warning("undecodable request refused", method=method, kind=exc.kind,
                        bytes=size, not_logged_since_last=held)

    def _wrap(self, name: str, inner: Behavior, decode: Decoder) -> Behavior:
        async def behavior(raw: bytes, context: grpc.aio.ServicerContext) -> Any:
            started = time.perf_counter()
            code, message = grpc.StatusCode.OK, ""
            failure: BaseException | None = None
            label = [name]
            try:
                return await self._call(name, inner, decode, raw, context, label)
            except asyncio.CancelledError:
                # gRPC itself cancels a call whose deadline passed, possibly a moment
                # before our own timeout fires: count that as the deadline it is.
                remaining = context.time_remaining()
                code = (grpc.StatusCode.DEADLINE_EXCEEDED
                        if remaining is not None and remaining <= DEADLINE_SLACK_SECONDS
                        else grpc.StatusCode.CANCELLED)
                raise
            except Exception as exc:  # every failure is mapped below
                failure = exc
                code, message = status_for(exc)
            finally:
                self.metrics.observe_call(label[0], code.name, time.perf_counter() - started)
            await self._abort(name, context, code, message, failure, len(raw))

        return behavior

    async def _call(self, name: str, inner: Behavior, decode: Decoder, raw: bytes,
                    context: grpc.aio.ServicerContext, label: list[str]) -> Any:
        principal = self.auth.authenticate(context.invocation_metadata())
        request = _decode(decode, raw)
        if getattr(request, "probe_session", ""):
            label[0] = f"{name}.probe"
        self.limits.check(request)
        if name not in TENANTLESS_METHODS:
            tenant = str(getattr(request, "tenant", ""))
            if not tenant.strip():
                raise ValidationError("tenant is empty", field="tenant")
            self.auth.authorize(principal, tenant)
        CALLER.set(principal)
        remaining = context.time_remaining()
        if remaining is not None and remaining <= 0:
            raise DeadlineExceededError("deadline passed before the call started")
        if remaining is None or name in WRITE_METHODS:
            return await inner(request, context)
        try:
            async with asyncio.timeout(remaining) as scope:
                return await inner(request, context)
        except TimeoutError:
            if scope.expired():
                raise DeadlineExceededError(
                    f"deadline of {remaining * 1000:.0f} ms passed") from None
            raise

    async def _abort(self, name: str, context: grpc.aio.ServicerContext,
                     code: grpc.StatusCode, message: str,
                     failure: BaseException | None, size: int) -> None:
        if code is grpc.StatusCode.INTERNAL:
            error_id = uuid.uuid4().hex[:12]
            log.error("query call failed", method=name, error_id=error_id,
                      error=type(failure).__name__, exc_info=failure)
            message = f"internal error (id {error_id})"
        elif code is grpc.StatusCode.UNAVAILABLE:
            log.warning("index backend unavailable", method=name, error=clip(failure, 300))
        elif isinstance(failure, UndecodableRequestError):
            self._log_undecodable(name, failure, size)
        else:
            log.info("query call rejected", method=name, code=code.name,
                     reason=clip(message, 300))
        field = getattr(failure, "field", None)
        if field:
            context.set_trailing_metadata(((FIELD_METADATA_KEY, str(field)),))
        await context.abort(code, message)


def _decode(decode: Decoder, raw: bytes) -> Any:
    """The request message of ``raw``; UndecodableRequestError with a fixed message."""
    try:
        return decode(raw)
    except (DecodeError, UnicodeDecodeError, RecursionError) as exc:
        utf8 = isinstance(exc, UnicodeDecodeError) or "UTF-8" in str(exc)
        kind = "invalid_utf8" if utf8 else "corrupt"
        what = "a string field is not valid UTF-8" if utf8 else "corrupt protobuf"
        raise UndecodableRequestError(f"not a valid request message ({what})", kind=kind,
                                      field="request") from None
