"""Anchors in the tenant corpus's words, slot-free probes, and the reflector's contrast rule
(contrasts go into anchors, never into the body)."""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np

from optimizer.accounting import Meter
from optimizer.guard import factual_tokens
from optimizer.ino import check_disjoint
from optimizer.local import local_roles
from optimizer.local.queries import CorpusSynonyms, LocalAnchors, LocalProbes
from optimizer.roles import ReflectionInput
from optimizer.types import Competitor, Extraction, NuggetDraft, ProbeTrace, Vocabulary
from query.embeddings import Vector

# Hand-made directions: words on one row are close, different rows are orthogonal.
GROUPS = [("wifi", "wireless", "wlan"), ("password", "passphrase"), ("connect", "join"),
          ("colour", "color"), ("printer", "banana"), ("administrator", "admin")]


class TableEmbedder:
    """Embeds a word as its group's direction plus a little word-specific noise (any other
    word on a direction of its own); a text as the normalized sum of its words."""

    dim = 256

    def __init__(self) -> None:
        self.calls = 0

    def _word(self, w: str) -> Vector:
        v = np.zeros(self.dim, dtype=np.float32)
        for i, group in enumerate(GROUPS):
            if w in group:
                v[i] = 1.0
                v[8 + group.index(w)] = 0.3
                return v
        v[16 + zlib.crc32(w.encode()) % (self.dim - 16)] = 1.0
        return v

    def embed(self, texts: Sequence[str]) -> Vector:
        self.calls += 1
        out = []
        for t in texts:
            v = sum((self._word(w) for w in t.lower().split()), np.zeros(self.dim, np.float32))
            out.append(v / (np.linalg.norm(v) or 1.0))
        return np.asarray(out, dtype=np.float32)

    embed_queries = embed  # no query prefix


def test_corpus_synonyms_pick_the_closest_corpus_word_of_another_stem() -> None:
    syn = CorpusSynonyms(TableEmbedder())
    found = syn.of(["wifi", "password", "connect", "keeps"],
                   ["wireless", "passphrase", "connecting", "network", "printer"])
    assert found == {"wifi": "wireless", "password": "passphrase"}
    # "connecting" shares the stem of "connect": it is not a stand-in; "keeps" has none.
    assert syn.of(["wifi"], []) == {}
    assert CorpusSynonyms(None).of(["wifi"], ["wireless"]) == {}


def test_corpus_synonym_lookups_are_cached() -> None:
    emb = TableEmbedder()
    syn = CorpusSynonyms(emb)
    syn.of(["wifi"], ["wireless", "network"])
    calls = emb.calls
    syn.of(["wifi"], ["wireless", "network"])
    assert emb.calls == calls


EXTRACTION = Extraction("actionable_correction", True, "", title="Wifi password: CorpNet",
                        body="CorpNet uses WPA2 Enterprise with your company password.",
                        subject="connect to CorpNet wifi", predicate="value",
                        object="WPA2 Enterprise")
DRAFT = NuggetDraft(EXTRACTION.title, EXTRACTION.body)
Q0 = "cant connect to wifi keeps asking for password"


def test_anchors_reword_the_trigger_query_in_the_corpus_words() -> None:
    anchors = LocalAnchors(TableEmbedder()).anchors(
        DRAFT, EXTRACTION, Q0, q0_paraphrases=1, synthetic=4,
        vocabulary=["wireless", "passphrase", "network"], meter=Meter())
    assert anchors[0] == "cant connect wireless keeps asking passphrase"
    assert len(anchors) == 5
    # Without an embedder the anchors are the templates of the fact, as before.
    plain = LocalAnchors().anchors(DRAFT, EXTRACTION, Q0, q0_paraphrases=1, synthetic=4,
                                   vocabulary=["wireless"], meter=Meter())
    assert not any("passphrase" in a for a in plain)


def test_a_word_the_passages_already_use_keeps_its_place_in_the_anchor() -> None:
    # The passages on the topic say "password" themselves: swapping it for its nearest
    # corpus word would say something else (as "rows" -> "columns" or "disable" ->
    # "enabling" did); "wifi" they do not say, so "wireless" stands in for it.
    vocab = Vocabulary(["wireless", "passphrase", "network"], spoken=frozenset({"password"}))
    anchors = LocalAnchors(TableEmbedder()).anchors(
        DRAFT, EXTRACTION, Q0, q0_paraphrases=1, synthetic=4, vocabulary=vocab,
        meter=Meter())
    assert anchors[0] == "cant connect wireless keeps asking password"


def test_corpus_words_never_bring_roles_or_numbers_into_anchors() -> None:
    anchors = LocalAnchors(TableEmbedder()).anchors(
        DRAFT, EXTRACTION, Q0, q0_paraphrases=1, synthetic=4,
        vocabulary=["administrator", "2019", "wireless", "passphrase"], meter=Meter())
    text = "\n".join(anchors)
    assert "administrator" not in text and "2019" not in text
    assert "wireless" in text
    assert not {"administrator", "2019"} & factual_tokens(text)


def test_queries_without_known_verb_still_get_enough_probes() -> None:
    for q0 in ("emoji keyboard", "performance mode missing", "screen locks too quickly",
               "what gnome version do i have"):
        for seed in range(3):
            probes = LocalProbes().paraphrases(q0, 4, avoid=[f"{q0} please"], seed=seed,
                                               meter=Meter())
            assert len(probes) == 4, (q0, probes)
            check_disjoint(probes, [q0, f"{q0} please"])
            assert len(set(probes)) == 4


def _failed(competitor_title: str) -> ProbeTrace:
    return ProbeTrace("change settings not working", True, True, False, 4, 0.4,
                      (Competitor("doc#0", competitor_title, "...", 0.6),), "... [doc#0]")


def test_reflector_spells_out_only_confusable_competitors() -> None:
    ex = Extraction("actionable_correction", True, "", title="Admin password on wifi edits",
                    body="Editing a saved wifi connection requires an admin password.",
                    subject="change wifi settings", predicate="requirement",
                    object="admin password")
    draft = NuggetDraft(ex.title, ex.body, ("unable to change wifi settings",))
    context = ("why does it ask for admin password when I change wifi settings\n"
               "Editing a saved wifi connection requires an admin password.")
    reflector = local_roles().reflector
    unrelated = reflector.revise(ReflectionInput(draft, ex, context.split("\n")[0],
                                                 [_failed("Change your timezone")], context),
                                 Meter())
    assert "timezone" not in unrelated.draft.text().lower()
    confusable = reflector.revise(ReflectionInput(
        draft, ex, context.split("\n")[0], [_failed("Change wifi settings of a hotspot")],
        context), Meter())
    # The contrast is a search key: the body the generator reads stays the user's words.
    assert confusable.draft.body == draft.body
    assert any("hotspot" in a for a in confusable.draft.anchors)
