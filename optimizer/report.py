"""Evaluation report: markdown, PNG chart (variants x rates) and the JSON figures.

``eval.json`` keeps the first benchmark's figures (the GNOME help one) at the top level,
as it always has, and adds ``benchmarks: {name: figures}`` with the same keys for every
benchmark run. ``eval_nuggets.json`` holds every case's final nugget with its verdicts
(the appendix of ``eval.md``).
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

PAPER = {  # INO paper, held-out historical queries (retrieval / citation, %)
    "A": (52.3, 41.3), "E": (77.3, 68.1)}


def flatten(figures: dict[str, Any], command: str) -> dict[str, Any]:
    """One benchmark's figures as eval.json writes them: per variant the means under the
    metric names and the standard deviations under ``std``; the appendix left out."""
    flat: dict[str, Any] = {"command": command,
                            **{k: v for k, v in figures.items() if k != "nuggets_appendix"}}
    for v, d in figures["variants"].items():
        flat[v] = {k: (m["mean"] if isinstance(m, dict) else m) for k, m in d.items()}
        flat[v]["std"] = {k: m["std"] for k, m in d.items() if isinstance(m, dict)}
    return flat


def write_report(benchmarks: dict[str, dict[str, Any]], out_dir: Path,
                 command: str) -> dict[str, Path]:
    """Write eval.json, eval.md, eval.png and eval_nuggets.json into out_dir."""
    out_dir.mkdir(parents=True, exist_ok=True)
    names = list(benchmarks)
    first = benchmarks[names[0]]
    data = {**flatten(first, command), "benchmark": names[0],
            "benchmarks": {n: flatten(f, command) for n, f in benchmarks.items()}}
    paths = {"json": out_dir / "eval.json", "md": out_dir / "eval.md",
             "png": out_dir / "eval.png", "nuggets": out_dir / "eval_nuggets.json"}
    paths["json"].write_text(json.dumps(data, indent=2) + "\n")
    paths["nuggets"].write_text(json.dumps(
        {n: f.get("nuggets_appendix", []) for n, f in benchmarks.items()}, indent=1,
        ensure_ascii=False) + "\n")
    paths["md"].write_text(markdown_all(benchmarks, command))
    chart(benchmarks, paths["png"])
    return paths


def _pct(m: dict[str, float]) -> str:
    return f"{100 * m['mean']:.1f} ± {100 * m['std']:.1f}"


def md(text: str) -> str:
    """User text made inert in markdown and HTML: tags escaped, markdown punctuation
    backslashed, line breaks flattened."""
    text = html.escape(" ".join(str(text).split()), quote=False)
    return re.sub(r"([\\`*_\[\]|#~])", r"\\\1", text)


SUMMARY = [  # (label, key in the figures, how it is shown)
    ("held-out retrieval A / E", ("A", "E", "heldout_retrieval"), "pair"),
    ("held-out citation A / E", ("A", "E", "heldout_citation"), "pair"),
    ("actionability accuracy", "actionability_accuracy", "pct"),
    ("fact recall (E nuggets; missed cases count 0)", "fact_recall", "pct"),
    ("fact recall of extracted nuggets", "fact_recall_extracted", "pct"),
    ("unsupported text rate", "unsupported_text_rate", "pct"),
    ("stale claim rate", "stale_claim_rate", "pct"),
    ("conversational text rate", "conversational_text_rate", "pct"),
    ("preservation violations", "preservation_violations", "int"),
    ("answers addressing the correction A / E", "compliance", "compliance"),
    ("negative control, off-topic titles", "negative_offtopic_retrieval", "pct"),
]


def _summary_cell(f: dict[str, Any], key: Any, how: str) -> str:
    if how == "pair":
        a, e, k = key
        v = f["variants"]
        if a in v and e in v:
            return f"{100 * v[a][k]['mean']:.1f} / {100 * v[e][k]['mean']:.1f}"
        return "-"
    if how == "compliance":
        c = f.get("answer_compliance", {})
        if "A" in c and "E" in c:
            return f"{100 * c['A']['addresses']:.1f} / {100 * c['E']['addresses']:.1f}"
        return "-"
    if key not in f:
        return "-"
    return f"{100 * f[key]:.1f}%" if how == "pct" else str(f[key])


def markdown_all(benchmarks: dict[str, dict[str, Any]], command: str) -> str:
    """The whole report: benchmarks side by side, then each in full with its appendix."""
    names = list(benchmarks)
    lines = ["# nuggetflow evaluation", "", f"Command: `{command}`", ""]
    if len(names) > 1:
        lines += ["## Benchmarks side by side", "",
                  "| | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
        for label, key, how in SUMMARY:
            cells = [_summary_cell(benchmarks[n], key, how) for n in names]
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
        lines.append("")
    for n in names:
        lines += markdown(benchmarks[n], n)
    lines += [FIDELITY_RULES, ""]
    for n in names:
        lines += appendix(benchmarks[n].get("nuggets_appendix", []), n)
    return "\n".join(lines)


FIDELITY_RULES = """## How fidelity is decided

Mechanically, per case, from the case's gold `facts` and its original `answer`
(`optimizer/fidelity.py`):

- a gold fact is *stated* by a nugget when every concrete item of the fact (numbers,
  versions, names, quoted strings, key combinations, menu paths, addresses, paths, roles)
  is in the nugget's title or body (a menu path part by part, a name word by word), and
  either 60% of the fact's content words (by stem) are too, or the fact is within cosine
  0.8 of one of the nugget's sentences; `fact_recall` counts a case that gave no nugget
  as stating none of its facts, `fact_recall_extracted` only counts cases with a nugget;
- *unsupported text*: a title or body sentence with a content word found in neither the
  feedback nor the trigger query;
- *stale claim*: the title or body states, outside a negated clause, a value of the
  original answer that the gold facts overturn (negate, or replace with another value of
  the same kind), in a sentence that restates what the answer said of it (within cosine
  0.65 of an answer sentence naming the value: "Use Alt+Shift to switch layouts" is
  stale, "Alt+Shift is the Windows habit" says something else of it);
- *conversational text*: talk rather than knowledge, found on the surface of the
  published text: in the body the first person singular ("I", "my"), a sentence opening
  with an interjection ("Ha,", "Fine,"), the writer's stance or attitude ("Honestly",
  "Sadly"), an elliptical reply ("Not on a Friday."), a
  question or "!!"; in the title or the body thanks, greetings or a reference to the
  conversation ("your answer", "you said");
- *answer compliance* (variants A and E, the answers to the held-out queries): the
  answer *addresses* the correction when it states every gold fact, is *partial* when it
  states some, *contradicts* it when it states an overturned value and none of the
  facts, and *misses* it otherwise."""


def markdown(f: dict[str, Any], name: str) -> list[str]:
    """One benchmark's section."""
    lines = [
        f"## {name}", "",
        f"{f['actionable_cases']} correction cases ({f['cases']} cases in all), {f['runs']} runs "
        f"(seeds {f['seeds']}), local LLM backend unless stated. Retrieval = the nugget "
        "reached the generator's context (top-k 60, then the tenant's calibrated gate, "
        "top 3 that pass); citation = the answer cited it. Rates in %, mean ± std over "
        "runs.", "",
        "| variant | held-out retrieval | held-out citation | in-sample retrieval | "
        "in-sample citation | fact recall | unsupported text | stale claims | "
        "conversational text |",
        "|---|---|---|---|---|---|---|---|---|"]
    for v, d in f["variants"].items():
        fid = [_pct(d[k]) if k in d else "-" for k in
               ("fact_recall", "unsupported_text_rate", "stale_claim_rate",
                "conversational_text_rate")]
        lines.append(f"| {v} | {_pct(d['heldout_retrieval'])} | {_pct(d['heldout_citation'])} "
                     f"| {_pct(d['insample_retrieval'])} | {_pct(d['insample_citation'])} | "
                     + " | ".join(fid) + " |")
    (pa_r, pa_c), (pe_r, pe_c) = PAPER["A"], PAPER["E"]
    lines += ["", f"Paper (held-out historical queries): A {pa_r} / {pa_c}, "
                  f"E {pe_r} / {pe_c}.", ""]
    compliance = f.get("answer_compliance") or {}
    if compliance:
        lines += ["Answers to the held-out queries, judged against the gold facts (paper: "
                  "52.2% -> 73.4% addressed):", "",
                  "| variant | addresses | partial | misses | contradicts | faithful | "
                  "non-regression | answers |", "|---|---|---|---|---|---|---|---|"]
        for v, c in compliance.items():
            lines.append(f"| {v} | " + " | ".join(
                f"{100 * c[k]:.1f}" for k in ("addresses", "partial", "misses",
                                               "contradicts", "faithful", "non_regression"))
                + f" | {c['answers']} |")
        lines.append("")
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
    if f.get("negative_offtopic_hits"):
        lines += ["", "Off-topic queries a nugget reached (query -> nugget title):", ""]
        lines += [f"- {md(h['query'])} -> {md(h['nugget'])}"
                  for h in f["negative_offtopic_hits"]]
    conf = f["actionability_confusion"]
    lines += [
        "",
        f"Actionability accuracy: {100 * f['actionability_accuracy']:.1f}% "
        f"(TP {conf['true_positive']}, FP {conf['false_positive']}, "
        f"FN {conf['false_negative']}, TN {conf['true_negative']})"
        + "".join(f"; {label} {', '.join(ids)}" for label, ids in (
            ("false positives:", f.get("actionability_errors", {}).get("false_positive", [])),
            ("false negatives:", f.get("actionability_errors", {}).get("false_negative", [])))
            if ids) + ".",
        f"Fidelity of the final nuggets: fact recall {100 * f.get('fact_recall', 0):.1f}% "
        f"({100 * f.get('fact_recall_extracted', 0):.1f}% of extracted nuggets), unsupported "
        f"text {100 * f.get('unsupported_text_rate', 0):.1f}%, stale claims "
        f"{100 * f.get('stale_claim_rate', 0):.1f}%, conversational text "
        f"{100 * f.get('conversational_text_rate', 0):.1f}%.",
        f"Factual-preservation violations in final nuggets: {f['preservation_violations']} "
        f"(revisions blocked by the guard: {f['guard_rejected_revisions']}).",
        f"INO iterations (probe rounds until every probe passed): "
        f"{f['iterations_histogram']}.",
        f"Per nugget (E): {f['llm_calls_per_nugget']} LLM calls, {f['tokens_per_nugget']} "
        f"tokens{' (estimated)' if f.get('tokens_estimated') else ''}, "
        f"{f['seconds_per_nugget']} s.",
        f"Whole evaluation: {f['eval_seconds']} s.", ""]
    return lines


def appendix(entries: list[dict[str, Any]], name: str) -> list[str]:
    """Every case's final nugget and its verdicts, as a reviewer would read them."""
    if not entries:
        return []
    lines = [f"## Appendix: the final nuggets of {name} (run 1, variant E)", ""]
    for e in entries:
        lines.append(f"### {md(e['case'])}: {md(e['query'])}")
        lines.append("")
        lines.append(f"- feedback: {md(e['feedback'])}")
        if e["title"] is None:
            lines.append(f"- **no nugget** ({md(e['usefulness'])}: {md(e['reason'])})")
        else:
            lines.append(f"- title: **{md(e['title'])}**")
            lines.append(f"- body: {md(e['body'])}")
            if e["anchors"]:
                lines.append("- anchors: " + "; ".join(md(a) for a in e["anchors"]))
            lines.append(f"- held-out retrieval: {e['heldout_reached']}/{e['heldout']}; "
                         f"INO iterations: {e['iterations']}")
        for fact in e["facts"]:
            mark = "stated" if fact["covered"] else "MISSED"
            missing = f" (missing: {md(', '.join(fact['missing']))})" if fact["missing"] else ""
            lines.append(f"- fact {mark}: {md(fact['fact'])}{missing}")
        for u in e["unsupported"]:
            lines.append(f"- UNSUPPORTED text: {md(u)}")
        if e["stale"]:
            lines.append(f"- STALE claim: {md(', '.join(e['stale']))}")
        for c in e.get("conversational", []):
            lines.append(f"- CONVERSATIONAL text: {md(c)}")
        for v in e.get("guard_violations", []):
            lines.append(f"- FACTUAL GUARD: {md(v)}")
        lines.append("")
    return lines


def chart(benchmarks: dict[str, dict[str, Any]], path: Path) -> None:
    """Grouped bars per benchmark: variants x (held-out retrieval and citation)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(benchmarks)
    fig, axes = plt.subplots(1, len(names), figsize=(4.2 * len(names) + 1, 4.2), dpi=110,
                             squeeze=False)
    keys = [("heldout_retrieval", "held-out retrieval"),
            ("heldout_citation", "held-out citation"),
            ("insample_retrieval", "in-sample retrieval"),
            ("insample_citation", "in-sample citation")]
    width = 0.2
    for ax, name in zip(axes[0], names, strict=True):
        f = benchmarks[name]
        variants = list(f["variants"])
        for j, (key, label) in enumerate(keys):
            means = [100 * f["variants"][v][key]["mean"] for v in variants]
            stds = [100 * f["variants"][v][key]["std"] for v in variants]
            xs = [i + (j - 1.5) * width for i in range(len(variants))]
            ax.bar(xs, means, width, yerr=stds, label=label, capsize=2)
        ax.set_xticks(range(len(variants)), variants)
        ax.set_ylim(0, 100)
        ax.set_title(name)
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].set_ylabel("% of queries")
    axes[0][-1].legend(fontsize=7, loc="lower right")
    fig.suptitle("Nugget retrieval and citation by variant (A-D baselines, E = INO)")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
