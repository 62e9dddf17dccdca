"""Evaluation report: markdown table, PNG chart (variants x rates) and the JSON figures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

PAPER = {  # INO paper, held-out historical queries (retrieval / citation, %)
    "A": (52.3, 41.3), "E": (77.3, 68.1)}


def write_report(figures: dict[str, Any], out_dir: Path, command: str) -> dict[str, Path]:
    """Write eval.json, eval.md and eval.png into out_dir; return their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    flat: dict[str, Any] = {"command": command, **figures}
    for v, d in figures["variants"].items():
        flat[v] = {k: (m["mean"] if isinstance(m, dict) else m) for k, m in d.items()}
        flat[v]["std"] = {k: m["std"] for k, m in d.items() if isinstance(m, dict)}
    paths = {"json": out_dir / "eval.json", "md": out_dir / "eval.md",
             "png": out_dir / "eval.png"}
    paths["json"].write_text(json.dumps(flat, indent=2) + "\n")
    paths["md"].write_text(markdown(figures, command))
    chart(figures, paths["png"])
    return paths


def _pct(m: dict[str, float]) -> str:
    return f"{100 * m['mean']:.1f} ± {100 * m['std']:.1f}"


def markdown(f: dict[str, Any], command: str) -> str:
    """The human-readable report."""
    lines = [
        "# nuggetflow evaluation", "",
        f"Command: `{command}`", "",
        f"{f['actionable_cases']} correction cases ({f['cases']} cases in all), {f['runs']} runs "
        f"(seeds {f['seeds']}), local LLM backend unless stated. Retrieval = the nugget "
        "reached the generator's context (top-k 60, then the calibrated re-ranking "
        "threshold); citation = the answer cited it. Rates in %, mean ± std over runs.", "",
        "| variant | held-out retrieval | held-out citation | in-sample retrieval | "
        "in-sample citation |", "|---|---|---|---|---|"]
    for v, d in f["variants"].items():
        lines.append(f"| {v} | {_pct(d['heldout_retrieval'])} | {_pct(d['heldout_citation'])} "
                     f"| {_pct(d['insample_retrieval'])} | {_pct(d['insample_citation'])} |")
    (pa_r, pa_c), (pe_r, pe_c) = PAPER["A"], PAPER["E"]
    lines += ["", f"Paper (held-out historical queries): A {pa_r} / {pa_c}, "
                  f"E {pe_r} / {pe_c}.", ""]
    if "negative_retrieval" in f:
        lines.append(f"Negative control ({f['negative_queries']} random-traffic queries, all E "
                     f"nuggets published): {100 * f['negative_retrieval']:.1f}% retrieved a "
                     f"nugget, {100 * f['negative_citation']:.1f}% cited one (paper: 1.4% / "
                     "0.8%).")
    if "negative_offtopic_retrieval" in f:
        lines.append(f"Of those, the {f['negative_offtopic_queries']} titles of pages no case "
                     f"is about: {100 * f['negative_offtopic_retrieval']:.1f}% retrieved a "
                     f"nugget, {100 * f['negative_offtopic_citation']:.1f}% cited one. (Page "
                     "titles of the same help corpus are often on a nugget's topic; a nugget "
                     "reaching such a query is usually right, so the off-topic share is the "
                     "cleaner false-positive rate.)")
    conf = f["actionability_confusion"]
    lines += [
        "",
        f"Actionability accuracy: {100 * f['actionability_accuracy']:.1f}% "
        f"(TP {conf['true_positive']}, FP {conf['false_positive']}, "
        f"FN {conf['false_negative']}, TN {conf['true_negative']}).",
        f"Factual-preservation violations in final nuggets: {f['preservation_violations']} "
        f"(revisions blocked by the guard: {f['guard_rejected_revisions']}).",
        f"INO iterations (probe rounds until every probe passed): "
        f"{f['iterations_histogram']}.",
        f"Per nugget (E): {f['llm_calls_per_nugget']} LLM calls, {f['tokens_per_nugget']} "
        f"tokens{' (estimated)' if f.get('tokens_estimated') else ''}, "
        f"{f['seconds_per_nugget']} s.",
        f"Whole evaluation: {f['eval_seconds']} s.", ""]
    return "\n".join(lines)


def chart(f: dict[str, Any], path: Path) -> None:
    """Grouped bars: variants x (held-out retrieval, held-out citation, in-sample ...)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    variants = list(f["variants"])
    keys = [("heldout_retrieval", "held-out retrieval"), ("heldout_citation",
                                                          "held-out citation"),
            ("insample_retrieval", "in-sample retrieval"),
            ("insample_citation", "in-sample citation")]
    fig, ax = plt.subplots(figsize=(8, 4.2), dpi=110)
    width = 0.2
    for j, (key, label) in enumerate(keys):
        means = [100 * f["variants"][v][key]["mean"] for v in variants]
        stds = [100 * f["variants"][v][key]["std"] for v in variants]
        xs = [i + (j - 1.5) * width for i in range(len(variants))]
        ax.bar(xs, means, width, yerr=stds, label=label, capsize=2)
    ax.set_xticks(range(len(variants)), variants)
    ax.set_ylabel("% of queries")
    ax.set_ylim(0, 100)
    ax.set_title("Nugget retrieval and citation by variant (A-D baselines, E = INO)")
    ax.legend(fontsize=8, loc="lower right")
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
