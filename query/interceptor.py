"""The one server interceptor of the query service: access, deadlines, errors, latency.

Every QueryService call goes through :class:`ServiceInterceptor`, which

1. authenticates the bearer token and checks it against the request's ``tenant``
   (every QueryService request has one);
2. runs the handler under the call's deadline (``context.time_remaining()``): a call
   whose deadline has passed is not started, and a running one is cancelled when it
   passes, so the server stops working for a client that has given up;
3. maps exceptions to status codes, in :func:`status_for` and nowhere else
   (``nuggetflow.errors`` -> gRPC codes; anything unexpected is INTERNAL with an error id
   that is also logged, never the exception text);
4. observes the latency histogram by method and status code.

Other services on the same server (health, reflection) pass through untouched.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import grpc

from nuggetflow.errors import (
    BackendUnavailableError,
    BudgetExceededError,
    NotFoundError,
    NuggetflowError,
    ValidationError,
)
from nuggetflow.logging import get_logger
from query.auth import AuthenticationError, PermissionDeniedError, TokenAuth
from query.metrics import QueryMetrics

log = get_logger(__name__)

SERVICE_PREFIX = "/nuggetflow.v1.QueryService/"
FIELD_METADATA_KEY = "nuggetflow-field"
DEADLINE_SLACK_SECONDS = 0.005

Behavior = Callable[[Any, grpc.aio.ServicerContext], Awaitable[Any]]


class DeadlineExceededError(NuggetflowError):
    """The call's deadline passed before the work was done."""


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
    )
    for cls, code in table:
        if isinstance(exc, cls):
            if code is grpc.StatusCode.UNAVAILABLE:
                # The backend's address and driver message are internals: say what failed.
                return code, "index backend unavailable; retry later"
            return code, str(exc)
    return grpc.StatusCode.INTERNAL, "internal error"


class ServiceInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    """Auth, deadline, status mapping and latency for every QueryService method."""

    def __init__(self, auth: TokenAuth, metrics: QueryMetrics) -> None:
        self.auth = auth
        self.metrics = metrics
        self._wrapped: dict[str, grpc.RpcMethodHandler] = {}

    async def intercept_service(
        self, continuation: Callable[[Any], Awaitable[grpc.RpcMethodHandler | None]],
        handler_call_details: Any,
    ) -> grpc.RpcMethodHandler | None:
        """Wrap unary QueryService handlers (cached per method); pass the rest through."""
        method: str = handler_call_details.method
        cached = self._wrapped.get(method)
        if cached is not None:
            return cached
        handler = await continuation(handler_call_details)
        if (handler is None or not method.startswith(SERVICE_PREFIX)
                or handler.unary_unary is None):
            return handler
        wrapped = grpc.unary_unary_rpc_method_handler(
            self._wrap(method.removeprefix(SERVICE_PREFIX), handler.unary_unary),
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer)
        self._wrapped[method] = wrapped
        return wrapped

    def _wrap(self, name: str, inner: Behavior) -> Behavior:
        async def behavior(request: Any, context: grpc.aio.ServicerContext) -> Any:
            started = time.perf_counter()
            code, message = grpc.StatusCode.OK, ""
            failure: BaseException | None = None
            try:
                return await self._call(inner, request, context)
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
                self.metrics.observe_call(name, code.name, time.perf_counter() - started)
            await self._abort(name, context, code, message, failure)

        return behavior

    async def _call(self, inner: Behavior, request: Any,
                    context: grpc.aio.ServicerContext) -> Any:
        principal = self.auth.authenticate(context.invocation_metadata())
        tenant = str(getattr(request, "tenant", ""))
        if not tenant.strip():
            raise ValidationError("tenant is empty", field="tenant")
        self.auth.authorize(principal, tenant)
        remaining = context.time_remaining()
        if remaining is None:
            return await inner(request, context)
        if remaining <= 0:
            raise DeadlineExceededError("deadline passed before the call started")
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
                     failure: BaseException | None) -> None:
        if code is grpc.StatusCode.INTERNAL:
            error_id = uuid.uuid4().hex[:12]
            log.error("query call failed", method=name, error_id=error_id,
                      error=type(failure).__name__, exc_info=failure)
            message = f"internal error (id {error_id})"
        elif code is grpc.StatusCode.UNAVAILABLE:
            log.warning("index backend unavailable", method=name, error=str(failure))
        else:
            log.info("query call rejected", method=name, code=code.name, reason=message)
        field = getattr(failure, "field", None)
        if field:
            context.set_trailing_metadata(((FIELD_METADATA_KEY, str(field)),))
        await context.abort(code, message)
