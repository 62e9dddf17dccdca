"""The shared test support reads Prometheus text with the client's parser and finds free
ports."""

from __future__ import annotations

import socket

from tests.support.net import free_port, metric_sum, metrics_text, samples

TEXT = """# HELP nuggetflow_events_total Events.
# TYPE nuggetflow_events_total counter
nuggetflow_events_total{tenant="a",outcome="ok"} 3.0
nuggetflow_events_total{tenant="b",outcome="ok"} 2.0
nuggetflow_events_total{tenant="a",outcome="dead_letter"} 1.0
"""


def test_metric_sum_adds_the_samples_whose_labels_match() -> None:
    assert metric_sum(TEXT, "nuggetflow_events_total") == 6.0
    assert metric_sum(TEXT, "nuggetflow_events_total", tenant="a") == 4.0
    assert metric_sum(TEXT, "nuggetflow_events_total", outcome="dead_letter") == 1.0
    assert metric_sum(TEXT, "nuggetflow_missing_total") == 0.0


def test_samples_are_keyed_by_name_and_sorted_labels() -> None:
    assert samples(TEXT)[("nuggetflow_events_total",
                          (("outcome", "ok"), ("tenant", "b")))] == 2.0


def test_a_free_port_can_be_bound_and_an_unreachable_one_reads_empty() -> None:
    port = free_port()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))
    assert metrics_text(free_port(), timeout=1) == ""
