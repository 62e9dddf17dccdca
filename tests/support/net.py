"""Ports and Prometheus scraping shared by the tests and the benchmarks."""

from __future__ import annotations

import socket
import urllib.request

from prometheus_client.parser import text_string_to_metric_families


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def metrics_text(port: int, timeout: float = 5) -> str:
    """The text of ``http://127.0.0.1:<port>/metrics`` ("" when it cannot be read)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=timeout) as r:
            return str(r.read().decode())
    except OSError:
        return ""


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of a Prometheus text exposition, keyed by name and sorted labels,
    read with the client library's own parser."""
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def metric_sum(text: str, name: str, **labels: str) -> float:
    """Sum of the samples of ``name`` whose labels include ``labels`` (0 when absent)."""
    return sum(value for (sample, have), value in samples(text).items()
               if sample == name and all(dict(have).get(k) == v for k, v in labels.items()))
