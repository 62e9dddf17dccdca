"""The review metrics of a process that reviews or serves: correction lag and backlog.

Correction lag (docs/architecture.md, "Correction lag") is measured where a correction
becomes retrievable: a NuggetIndex write that publishes a nugget that was a draft or
waited for review, or merges it into a published one. Every process that applies reviews
records it (the query service for the console's and the API's reviews, the stream worker
for the review topic and the auto-publish policy), so the histogram's series sum across
processes. The backlog (nuggets by publication state, per tenant) is a count the store
answers from its index of heads; the query service samples it, and each of its worker
processes exports the same numbers (dashboards take ``max by (tenant)``).
"""

from __future__ import annotations

import asyncio

from nuggetflow.logging import get_logger
from query.index import NuggetIndex, Publishing
from query.metrics import ReviewMetrics

log = get_logger(__name__)


class ReviewWatch:
    """Records each publication's lag and samples the publication counts."""

    def __init__(self, index: NuggetIndex, metrics: ReviewMetrics,
                 interval_seconds: float = 30.0) -> None:
        self.index = index
        self.metrics = metrics
        self.interval = interval_seconds

    def attach(self) -> ReviewWatch:
        """Listen to the index's publications (once)."""
        if self.observe not in self.index.publish_listeners:
            self.index.publish_listeners.append(self.observe)
        return self

    def observe(self, event: Publishing) -> None:
        """One correction made retrievable: its lag, when the feedback had a time."""
        lag = event.lag_seconds
        if lag is not None:
            self.metrics.observe_publication(event.tenant, event.outcome, lag)

    async def sample(self) -> dict[tuple[str, str], int]:
        """Count every tenant's nuggets by publication state now, and export the counts."""
        counts = {(tenant, publication.name.lower()): n
                  for (tenant, publication), n in
                  (await self.index.store.publication_counts()).items()}
        self.metrics.set_counts(counts)
        return counts

    async def run(self) -> None:
        """Sample every ``interval`` seconds until cancelled; a failed sample is logged
        and tried again at the next tick (the backlog is diagnostics, never a reason to
        stop serving)."""
        while True:
            try:
                await self.sample()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("review backlog sample failed", error=str(exc) or repr(exc))
            await asyncio.sleep(self.interval)
