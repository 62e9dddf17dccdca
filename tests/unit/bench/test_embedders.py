"""bench/embedders.py: the recall measure, the data it reads, and one tiny run on MiniLM."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from bench.embedders import Benchmark, bench_model, load_benchmark, ratios, recall_at_k, table


def test_recall_counts_a_query_whose_top_k_holds_a_passage_of_a_cited_page() -> None:
    # passages: a0 a1 b0 c0 (unit vectors); q0 is nearest a1, q1 nearest c0
    pvecs = np.eye(4, dtype=np.float32)
    docs = ["a", "a", "b", "c"]
    qvecs = np.array([[0.1, 0.9, 0.0, 0.0], [0.0, 0.0, 0.2, 0.8]], dtype=np.float32)
    cited = [frozenset({"a"}), frozenset({"b"})]
    assert recall_at_k(qvecs, pvecs, docs, cited, k=1) == (0.5, 0.5)
    # k=2: q1's two nearest passages are c0, b0 -> a hit
    assert recall_at_k(qvecs, pvecs, docs, cited, k=2) == (1.0, 1.0)
    # page level: a page counts once, however many of its passages are near
    qa = np.array([[0.7, 0.6, 0.5, 0.0]], dtype=np.float32)
    assert recall_at_k(qa, pvecs, docs, [frozenset({"b"})], k=2) == (0.0, 1.0)


def test_shipped_benchmark_data_loads_as_passages_and_cited_queries() -> None:
    b = load_benchmark("gnome-help", 800, 2000)
    assert len(b.passage_texts) == len(b.passage_docs) > 273  # long pages are chunked
    assert len(b.queries) == len(b.cited) > 100
    assert all(c for c in b.cited)
    assert all(t.split("\n", 1)[0] for t in b.passage_texts)  # "title\ntext"


def test_a_tiny_run_on_minilm_reports_every_figure() -> None:
    bench = Benchmark("tiny", ["Passwords\nOnly the owner can reset a password.",
                               "Wallpaper\nChange the background in Settings."],
                      ["pw", "bg"], ["who resets passwords", "new desktop picture"],
                      [frozenset({"pw"}), frozenset({"bg"})])
    r = bench_model("minilm", Path("unused"), [bench], n_queries=2, n_bulk=2)
    assert r["recall@10"] == 1.0 and r["recall_by_benchmark"]["tiny"]["queries"] == 2
    assert r["query_cpu_ms_p50"] > 0 and r["bulk_all_threads"]["per_s"] > 0
    rel = ratios({"minilm": r})
    assert rel["minilm"]["query_cpu_ms_p50"] == 1.0
    assert "recall@10 tiny" in table({"minilm": r}, rel)
