"""Arguments several commands share (one definition each)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

#: What an id argument may be.
LINEAGE_ID = "the lineage id or any version id"


def add_nugget_ref(parser: argparse.ArgumentParser, head: bool = False) -> None:
    """The nugget an action is about: its id and its tenant."""
    parser.add_argument("id", help=LINEAGE_ID + (" (the head is reviewed)" if head else ""))
    parser.add_argument("--tenant", required=True)


def add_review_arguments(parser: argparse.ArgumentParser, actions: Sequence[str]) -> None:
    """A review of a nugget's head: id, tenant, action, revert target, reviewer, reason
    (``nuggetflow review`` applies it, ``nuggetflow review-event`` publishes it)."""
    add_nugget_ref(parser, head=True)
    parser.add_argument("--action", required=True, choices=actions)
    parser.add_argument("--target", help="version id to revert to (a lineage id: version 1)")
    parser.add_argument("--reviewer", default="cli")
    parser.add_argument("--reason", default="")
