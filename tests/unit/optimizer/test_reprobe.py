"""The pure parts of the re-probe step (optimizer.reprobe): which probes a nugget kept,
and when a changed page states what a nugget says. The end-to-end scenarios are in
tests/unit/stream/test_reprobe.py."""

from __future__ import annotations

import dataclasses

from optimizer.reprobe import restating_document, stored_probes
from query.model import Provenance
from tests.helpers import make_nugget, make_passage

BODY = ("Night buses leave the Harrow Road depot from bay 14 after 23:30. "
        "Drivers sign out the bay keys at the control room, not at the gate.")


def test_the_probes_are_those_ino_kept_else_the_trigger_query() -> None:
    kept = make_nugget(optimization={"probes": ["night bus bay", "", "night bus bay",
                                                "where do night buses leave from"]})
    assert stored_probes(kept) == ("night bus bay", "where do night buses leave from")
    bare = dataclasses.replace(make_nugget(), provenance=Provenance(
        event_id="ev-1", trigger_query="night bus bay?"))
    assert stored_probes(bare) == ("night bus bay?",)


def test_a_page_restates_a_nugget_only_when_it_says_every_sentence() -> None:
    nugget = make_nugget(body=BODY)
    says_all = [make_passage(pid="depot-guide#0@v2", text=(
        "Since the timetable change, night buses leave the Harrow Road depot from bay 14 "
        "after 23:30.")), make_passage(pid="depot-guide#1@v2", text=(
            "Drivers sign out the bay keys at the control room; the gate no longer hands "
            "them out."))]
    assert restating_document(nugget, says_all) == "depot-guide"
    # the same page without the keys sentence, and a page with another bay number
    assert restating_document(nugget, says_all[:1]) == ""
    other_bay = make_passage(pid="ops-notes#0", text=(
        "Night buses leave the Harrow Road depot from bay 12 after 23:30. Drivers sign "
        "out the bay keys at the control room, not at the gate."))
    assert restating_document(nugget, [other_bay]) == ""
    # the same words without the negation state the opposite
    negated = make_nugget(body="Drivers never take the bay keys home.")
    says_take = make_passage(pid="faq#1", text="Drivers take the bay keys home.")
    assert restating_document(negated, [says_take]) == ""
    assert restating_document(negated, [make_passage(
        pid="faq#2", text="Drivers never take the bay keys home, they stay in the safe.")]) \
        == "faq"
    # sentences spread over two different pages do not make either page a restatement
    split = [make_passage(pid="a#0", text=says_all[0].text),
             make_passage(pid="b#0", text=says_all[1].text)]
    assert restating_document(nugget, split) == ""
