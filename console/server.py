"""Serving the console: ``nuggetflow console`` (uvicorn, until SIGTERM/SIGINT) and an
in-process server for the demo and the tests."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

import uvicorn

from console.app import ConsoleConfig, create_app
from nuggetflow.errors import ConfigError
from nuggetflow.logging import get_logger
from nuggetflow.settings import Settings

log = get_logger(__name__)


def config_from_settings(settings: Settings, grpc_target: str | None = None) -> ConsoleConfig:
    """The console's configuration from ``NUGGETFLOW_CONSOLE_*``."""
    return ConsoleConfig(
        grpc_target=grpc_target or settings.console_grpc_target,
        session_idle_seconds=settings.console_session_minutes * 60.0,
        session_lifetime_seconds=settings.console_session_max_hours * 3600.0,
        secure_cookies=settings.console_secure_cookies)


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (0: any free port); ConfigError if taken."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ConfigError(f"cannot bind {host}:{port}: {exc.strerror}",
                          field="NUGGETFLOW_CONSOLE_PORT") from None
    sock.listen(128)
    sock.setblocking(False)
    return sock


class _Server(uvicorn.Server):
    """uvicorn's server without its own signal handling (the caller stops it)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


@dataclass
class RunningConsole:
    """A console served in this process: its URL and the uvicorn server."""

    url: str
    server: uvicorn.Server


@contextlib.asynccontextmanager
async def serving(config: ConsoleConfig, host: str = "127.0.0.1",
                  port: int = 0) -> AsyncIterator[RunningConsole]:
    """Serve the console on the running event loop until the block ends."""
    sock = bind(host, port)
    bound = sock.getsockname()[1]
    server = _Server(uvicorn.Config(create_app(config), log_level="warning",
                                    access_log=False, lifespan="off"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        if task.done():
            task.result()
        await asyncio.sleep(0.02)
    shown = f"[{host}]" if ":" in host else host
    try:
        yield RunningConsole(f"http://{shown}:{bound}", server)
    finally:
        server.should_exit = True
        await task
        sock.close()


async def run(settings: Settings) -> int:
    """``nuggetflow console``: serve until SIGTERM or SIGINT."""
    import signal

    config = config_from_settings(settings)
    async with serving(config, settings.console_host, settings.console_port) as running:
        log.info("review console started", url=running.url,
                 query_service=config.grpc_target)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        print(f"review console on {running.url} (query service {config.grpc_target}); "
              "Ctrl-C stops it", flush=True)
        await stop.wait()
        log.info("review console stopping")
    return 0
