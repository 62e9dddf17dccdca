"""What happened to a published nugget after publication, kept beside it.

A :class:`NuggetTrace` is one entry of a lineage's after-publication record: a re-probe
after a corpus change (docs/architecture.md, "Re-probing on corpus change") writes one per
nugget it re-probed, with what it found and did. Traces are stored by the index store
beside the nuggets (never as a new version: a re-probe that finds nothing wrong changes
nothing) and read per lineage, oldest first.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class NuggetTrace:
    """One after-publication event of a nugget version.

    ``kind``: what ran ("reprobe"); ``outcome``: what it found or did ("passed",
    "reoptimized", "proposed", "redundant", "buried"); ``cause``: what started it (a
    corpus change id); ``detail``: JSON-ready particulars (probes and their results, the
    passages that changed, the version written or proposed).
    """

    tenant: str
    lineage_id: str
    version_id: str
    at: datetime
    kind: str
    outcome: str
    cause: str = ""
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        """Content id: the same trace stored twice is kept once."""
        raw = json.dumps([self.tenant, self.lineage_id, self.version_id, self.kind,
                          self.cause, self.at.isoformat()])
        return "tr-" + hashlib.sha256(raw.encode()).hexdigest()[:24]

    def to_json(self) -> str:
        """The trace as one JSON object (how stores keep it)."""
        return json.dumps({"tenant": self.tenant, "lineage_id": self.lineage_id,
                           "version_id": self.version_id, "at": self.at.isoformat(),
                           "kind": self.kind, "outcome": self.outcome, "cause": self.cause,
                           "detail": self.detail}, sort_keys=True)

    @classmethod
    def from_json(cls, raw: str) -> NuggetTrace:
        """The trace :meth:`to_json` wrote."""
        data: dict[str, Any] = json.loads(raw)
        data["at"] = datetime.fromisoformat(data["at"])
        return cls(**data)
