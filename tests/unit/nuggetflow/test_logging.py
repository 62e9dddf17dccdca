"""Structured logging: untrusted values are clipped, lines are bounded, repeats throttled."""

from __future__ import annotations

import io
import json
import logging

from nuggetflow.logging import MAX_FIELD_CHARS, LogThrottle, _Formatter, clip, get_logger


def test_clip_keeps_short_values_and_says_what_it_cut() -> None:
    assert clip("n-123") == "n-123"
    assert clip("x" * 100, 10) == "xxxxxxxxxx...(+90 chars)"


def test_a_log_line_never_carries_unbounded_input() -> None:
    for as_json in (False, True):
        out = io.StringIO()
        handler = logging.StreamHandler(out)
        handler.setFormatter(_Formatter(as_json=as_json))
        base = logging.getLogger("tests.logging.bounded")
        base.addHandler(handler)
        base.propagate = False
        try:
            get_logger("tests.logging.bounded").warning("x" * 100_000, field="y" * 100_000,
                                                        count=3, items=["z"] * 50_000)
        finally:
            base.removeHandler(handler)
        line = out.getvalue()
        assert len(line) < 4 * MAX_FIELD_CHARS + 500, len(line)
        if as_json:
            doc = json.loads(line)
            assert doc["count"] == 3 and doc["field"].endswith("(+98000 chars)")


def test_throttle_allows_one_line_per_key_and_interval() -> None:
    now = [0.0]
    throttle = LogThrottle(60.0, clock=lambda: now[0])
    assert throttle.allow("corrupt") == (True, 0)
    assert throttle.allow("corrupt") == (False, 0)
    assert throttle.allow("invalid_utf8") == (True, 0), "keys are independent"
    assert throttle.allow("corrupt") == (False, 0)
    now[0] = 61.0
    assert throttle.allow("corrupt") == (True, 2), "reports how many were held back"
