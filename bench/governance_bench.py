"""Governance benchmark: versioned facts with ground truth, queried at as_of times.

A seeded generator writes a small world of facts about office systems (owners, locations,
versions, names, supported systems) and their history: successions, conflicts settled by
evidence counts (>= 2 sources deprecate, an old value with more sources wins), disputes
left Contested, disputes resolved at >= 3 sources, renames, and multi-valued predicates.
Each claim is published into a governed index (NuggetIndex on SQLite) as a nugget, in
time order, with its sources as evidence. The same claims, each inside a short notice
document, go into a plain hybrid index with no governance (the baseline).

For queries "what is the <predicate> of <subject>" at as_of times, it measures:

- temporal correctness: the context states exactly the true value(s) at as_of, as facts
  (for a disputed value: states none as fact);
- conflict rate: the context states two or more different values for the queried
  functional key as facts;
- generator-context tokens (words x 4/3) of the top-k context.

Usage: python -m bench.governance_bench [--subjects 150] [--seed 7]
Writes bench/results/governance.json (keys in the README).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from nuggetflow.settings import Settings
from query.backends.sqlite import SQLiteStore
from query.embeddings import MiniLMEmbedder
from query.governance import PredicateSchema
from query.index import NuggetIndex
from query.model import Evidence, FactTriple, Nugget, Passage, Provenance, Validity, View
from query.retrieval import RetrieveRequest

ROOT = Path(__file__).resolve().parent.parent
T0 = datetime(2024, 1, 1, tzinfo=UTC)
TENANT = "corp"
K = 5
THINGS = ["print server", "VPN gateway", "build farm", "shared mailbox", "badge reader",
          "payroll portal", "wiki space", "backup vault", "design review board", "CI runner",
          "expense tool", "ticket queue", "file share", "video bridge", "mail relay"]
TEAMS = ["Platform team", "Finance IT", "Security office", "Facilities", "Data team",
         "Helpdesk", "Network team", "People Ops"]
PLACES = ["room 4.12", "basement rack B", "floor 3 east", "building C lobby", "datacenter row 7",
          "floor 9 west"]
SYSTEMS = ["Windows 11", "macOS 14", "Ubuntu 24.04", "Fedora 40", "ChromeOS"]
PROJECTS = ["Falcon", "Eagle", "Heron", "Osprey", "Kestrel", "Condor"]
BOILERPLATE = [
    "This notice was posted by the IT service desk.",
    "Contact the owning team through the service portal for access requests.",
    "Changes of this kind are announced in the weekly operations digest.",
    "Older notices about this system may no longer be accurate.",
    "Questions about this change can be raised in the operations channel.",
]


@dataclass(frozen=True)
class Claim:
    """One published statement: value of (subject, predicate) from ``start``, by sources."""

    subject: str
    predicate: str
    value: str
    start: datetime
    sources: tuple[str, ...]
    published: datetime


@dataclass
class World:
    """Claims in publication order, ground truth, and queries."""

    claims: list[Claim] = field(default_factory=list)
    truth: dict[tuple[str, str], list[tuple[datetime, frozenset[str] | None]]] = field(
        default_factory=dict)  # key -> [(from time, values or None = disputed)]
    scenario: dict[tuple[str, str], str] = field(default_factory=dict)

    def true_at(self, key: tuple[str, str], t: datetime) -> frozenset[str] | None:
        """True values at t (empty: unknown yet; None: disputed)."""
        current: frozenset[str] | None = frozenset()
        for start, values in self.truth[key]:
            if start <= t:
                current = values
        return current


def sentence(subject: str, predicate: str, value: str) -> str:
    """The claim as one sentence (the nugget body)."""
    return {
        "owner": f"The {subject} is owned by the {value}.",
        "location": f"The {subject} is located in {value}.",
        "version": f"The {subject} runs version {value}.",
        "name": f"The {subject} is called Project {value}.",
        "supported_os": f"The {subject} supports {value}.",
    }[predicate]


def generate(n_subjects: int, seed: int) -> World:
    """A seeded world with every scenario kind represented."""
    rng = random.Random(seed)
    w = World()
    kinds = ["succession", "evidence_wins", "old_superior", "contested", "resolved", "rename",
             "multi"]
    day = timedelta(days=1)
    n = 0
    for i in range(n_subjects):
        thing = THINGS[i % len(THINGS)]
        subject = f"{thing} {rng.choice('ABCDEFGHJK')}{i:03d}"
        kind = kinds[i % len(kinds)]
        pred = {"rename": "name", "multi": "supported_os"}.get(
            kind, rng.choice(["owner", "location", "version"]))
        pool = {"owner": TEAMS, "location": PLACES, "name": PROJECTS, "supported_os": SYSTEMS,
                "version": [f"{a}.{b}" for a in range(1, 9) for b in range(10)]}[pred]
        a, b, c = rng.sample(pool, 3)
        t1 = T0 + rng.randint(20, 120) * day
        t2 = t1 + rng.randint(30, 120) * day
        key = (subject, pred)
        w.scenario[key] = kind

        def src(k: int) -> tuple[str, ...]:
            nonlocal n
            n += k
            return tuple(f"s{n - j}" for j in range(k))

        if kind in ("succession", "rename"):
            w.claims += [Claim(subject, pred, a, T0, src(1), T0),
                         Claim(subject, pred, b, t1, src(1), t1),
                         Claim(subject, pred, c, t2, src(1), t2)]
            w.truth[key] = [(T0, frozenset([a])), (t1, frozenset([b])), (t2, frozenset([c]))]
        elif kind == "evidence_wins":  # a better-supported correction of the same period
            w.claims += [Claim(subject, pred, a, T0, src(1), T0),
                         Claim(subject, pred, b, T0, src(2), t1)]
            w.truth[key] = [(T0, frozenset([b]))]
        elif kind == "old_superior":
            w.claims += [Claim(subject, pred, a, T0, src(3), T0),
                         Claim(subject, pred, b, T0, src(2), t1)]
            w.truth[key] = [(T0, frozenset([a]))]
        elif kind == "contested":
            w.claims += [Claim(subject, pred, a, T0, src(1), T0),
                         Claim(subject, pred, b, T0, src(1), t1)]
            w.truth[key] = [(T0, None)]
        elif kind == "resolved":  # disputed, then two more confirmations of b
            w.claims += [Claim(subject, pred, a, T0, src(1), T0),
                         Claim(subject, pred, b, T0, src(1), t1),
                         Claim(subject, pred, b, T0, src(1), t2),
                         Claim(subject, pred, b, T0, src(1), t2 + day)]
            w.truth[key] = [(T0, frozenset([b]))]
        else:  # multi-valued: values accumulate
            w.claims += [Claim(subject, pred, a, T0, src(1), T0),
                         Claim(subject, pred, b, t1, src(1), t1)]
            w.truth[key] = [(T0, frozenset([a])), (t1, frozenset([a, b]))]
    w.claims.sort(key=lambda c: c.published)
    return w


def queries(w: World, seed: int) -> list[tuple[tuple[str, str], datetime]]:
    """(key, as_of) pairs: before, between and after each key's changes."""
    rng = random.Random(seed + 1)
    out = []
    for key, timeline in w.truth.items():
        times = [start for start, _ in timeline]
        probes = [t + timedelta(days=rng.randint(1, 15)) for t in times]
        probes.append(max(times) + timedelta(days=400))
        probes.append(min(times) - timedelta(days=10))  # before anything was true
        out += [(key, t) for t in probes]
    return out


def question(key: tuple[str, str]) -> str:
    """The query text for a key."""
    subject, predicate = key
    return f"what is the {predicate.replace('_', ' ')} of the {subject}"


def tokens(text: str) -> int:
    """Generator tokens, estimated as 4/3 per word."""
    return round(len(text.split()) * 4 / 3)


def _value_of(text: str, key: tuple[str, str], w: World) -> str | None:
    subject, predicate = key
    if subject not in text:
        return None
    pool = {v for c in w.claims if (c.subject, c.predicate) == key for v in [c.value]}
    for v in pool:
        if sentence(subject, predicate, v) in text:
            return v
    return None


async def run_governed(w: World, qs: list[tuple[tuple[str, str], datetime]],
                       embedder: MiniLMEmbedder, work: Path) -> dict[str, Any]:
    """Publish claims into the governed index and answer the queries."""
    settings = Settings.from_env({})
    index = NuggetIndex(SQLiteStore(work / "governed.db"), embedder, settings,
                        PredicateSchema.from_mapping({"supported_os": "multi"}))
    await index.start()
    t_pub = time.perf_counter()
    for c in w.claims:
        index.clock = lambda c=c: c.published  # type: ignore[misc]
        n = Nugget(tenant=TENANT, title=f"{c.subject}: {c.predicate.replace('_', ' ')}",
                   body=sentence(c.subject, c.predicate, c.value),
                   fact=FactTriple(c.subject, c.predicate, c.value),
                   validity=Validity(c.start),
                   evidence=tuple(Evidence(s) for s in c.sources),
                   provenance=Provenance(event_id=c.sources[0], tenant=TENANT))
        sub = await index.submit(n)
        await index.approve(TENANT, sub.id, reviewer="bench")
    publish_s = time.perf_counter() - t_pub
    correct = conflicts = 0
    ctx_tokens: list[int] = []
    flagged_ok = flagged_total = 0
    for key, t in qs:
        res = await index.retriever.retrieve(RetrieveRequest(
            TENANT, question(key), as_of=t, view=View.ACTIVE, k=K, include_documents=False,
            gate=False))  # governance alone, as the baseline has no gate either
        values = [h.record.fact.object for h in res.hits if isinstance(h.record, Nugget)
                  and (h.record.fact.subject, h.record.fact.predicate) == key]
        truth = w.true_at(key, t)
        stated = frozenset(values)
        correct += int(stated == (truth or frozenset()))
        conflicts += int(key[1] != "supported_os" and len(stated) >= 2)
        ctx_tokens.append(tokens(res.context_block))
        if truth is None:
            flagged_total += 1
            apc = await index.retriever.retrieve(RetrieveRequest(
                TENANT, question(key), as_of=t, view=View.ACTIVE_PLUS_CONTESTED, k=K,
                include_documents=False, gate=False))
            mine = [h for h in apc.hits if isinstance(h.record, Nugget)
                    and (h.record.fact.subject, h.record.fact.predicate) == key]
            flagged_ok += int(len(mine) >= 2 and all(h.contested for h in mine)
                              and "Disputed" in apc.context_block)
    await index.stop()
    return {"temporal_correctness": correct / len(qs), "conflict_rate": conflicts / len(qs),
            "context_tokens_median": statistics.median(ctx_tokens),
            "contested_flagged": flagged_ok / max(1, flagged_total),
            "contested_queries": flagged_total, "publish_seconds": round(publish_s, 2)}


async def run_baseline(w: World, qs: list[tuple[tuple[str, str], datetime]],
                       embedder: MiniLMEmbedder, work: Path) -> dict[str, Any]:
    """Plain hybrid retrieval over the claim documents: no validity, state or evidence."""
    settings = Settings.from_env({})
    store = SQLiteStore(work / "baseline.db")
    index = NuggetIndex(store, embedder, settings)
    await index.start()
    rng = random.Random(3)
    passages = []
    for i, c in enumerate(w.claims):
        extra = " ".join(rng.sample(BOILERPLATE, 3))
        passages.append(Passage(
            id=f"notice-{i}#0", tenant=TENANT, doc_id=f"notice-{i}",
            title=f"Notice: {c.subject}",
            text=f"{sentence(c.subject, c.predicate, c.value)} {extra}",
            valid_from=datetime(1970, 1, 1, tzinfo=UTC)))
    await index.ingest_passages(passages)
    correct = conflicts = 0
    ctx_tokens: list[int] = []
    for key, t in qs:
        res = await index.retriever.retrieve(RetrieveRequest(TENANT, question(key), as_of=t,
                                                             k=K, gate=False))
        values = [v for h in res.hits if (v := _value_of(h.text, key, w)) is not None]
        truth = w.true_at(key, t)
        # a generator reads the top mention of a functional value as the fact
        stated = frozenset(values) if key[1] == "supported_os" else frozenset(values[:1])
        correct += int(stated == (truth or frozenset()))
        conflicts += int(key[1] != "supported_os" and len(set(values)) >= 2)
        ctx_tokens.append(tokens(res.context_block))
    await index.stop()
    return {"temporal_correctness": correct / len(qs), "conflict_rate": conflicts / len(qs),
            "context_tokens_median": statistics.median(ctx_tokens)}


async def run(n_subjects: int, seed: int) -> dict[str, Any]:
    """Generate, run both systems, return the figures."""
    w = generate(n_subjects, seed)
    qs = queries(w, seed)
    embedder = MiniLMEmbedder()
    embedder.warm_up()
    with tempfile.TemporaryDirectory() as tmp:
        gov = await run_governed(w, qs, embedder, Path(tmp))
        base = await run_baseline(w, qs, embedder, Path(tmp))
    kinds: dict[str, int] = {}
    for k in w.scenario.values():
        kinds[k] = kinds.get(k, 0) + 1
    return {
        "temporal_correctness": round(gov["temporal_correctness"], 4),
        "conflict_rate": round(gov["conflict_rate"], 4),
        "baseline_temporal_correctness": round(base["temporal_correctness"], 4),
        "baseline_conflict_rate": round(base["conflict_rate"], 4),
        "context_tokens_median": gov["context_tokens_median"],
        "baseline_context_tokens_median": base["context_tokens_median"],
        "contested_flagged_in_active_plus_contested": round(gov["contested_flagged"], 4),
        "contested_queries": gov["contested_queries"],
        "claims": len(w.claims), "subjects": n_subjects, "queries": len(qs), "k": K,
        "scenarios": kinds, "seed": seed,
        "paper": {"temporal_correctness": 0.931, "conflict_rate": 0.072,
                  "baseline_temporal_correctness": 0.840, "baseline_conflict_rate": 0.161,
                  "context_tokens_median": 320, "baseline_context_tokens_median": 887},
    }


def main() -> int:
    """CLI: run and write bench/results/governance.json."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--subjects", type=int, default=150)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "governance.json"))
    args = ap.parse_args()
    started = time.perf_counter()
    figures = asyncio.run(run(args.subjects, args.seed))
    figures["command"] = "python -m bench.governance_bench " + " ".join(sys.argv[1:])
    figures["seconds"] = round(time.perf_counter() - started, 1)
    figures["date"] = datetime.now(UTC).isoformat(timespec="seconds")
    Path(args.out).write_text(json.dumps(figures, indent=2) + "\n")
    print(f"{'':28s}{'governed':>10s}{'baseline':>10s}{'paper gov/base':>16s}")
    print(f"{'temporal correctness':28s}{figures['temporal_correctness']:10.3f}"
          f"{figures['baseline_temporal_correctness']:10.3f}{'.931 / .840':>16s}")
    print(f"{'conflict rate':28s}{figures['conflict_rate']:10.3f}"
          f"{figures['baseline_conflict_rate']:10.3f}{'.072 / .161':>16s}")
    print(f"{'context tokens (median)':28s}{figures['context_tokens_median']:10.0f}"
          f"{figures['baseline_context_tokens_median']:10.0f}{'320 / 887':>16s}")
    print(f"contested values flagged in ACTIVE_PLUS_CONTESTED: "
          f"{figures['contested_flagged_in_active_plus_contested']:.3f} "
          f"({figures['contested_queries']} queries)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
