"""Local probes and query slots: the who-may-do-what-to-whom templates only for queries
about people (cases written for this test, not from a benchmark)."""

from __future__ import annotations

import random

from optimizer.accounting import Meter
from optimizer.local.queries import LocalProbes, paraphrase_q0, slots

#: Words that only the people templates write.
PEOPLE_TEMPLATE_WORDS = ("another account", "greyed out", "for other users", "isn't working for")


def _probes(q0: str, seed: int) -> list[str]:
    return LocalProbes().paraphrases(q0, 5, avoid=[], seed=seed, meter=Meter())


def test_a_thing_before_the_verb_is_no_actor() -> None:
    # "the weekly export", "my tablet to": things, not people who act
    assert slots("How do I schedule the weekly export of the orders database?").actor == ""
    assert slots("Which network should I connect my tablet to in the kiln shed?").actor == ""
    assert slots("Why can't the supervisor approve overtime?").actor == "supervisor"


def test_a_person_is_the_one_acted_on() -> None:
    # someone who did something before the verb is not its target
    assert slots("Someone switched on high contrast in the print room, how do I turn it "
                 "off?").person == ""
    # a person noun before a noun says what kind of thing it is
    assert slots("How do I create a user account on the till PC?").person == ""
    assert slots("How do I reset another colleague's passphrase?").person == "colleague"
    assert slots("How do I disable the login of someone who retired?").person == "someone"


def test_queries_about_things_get_no_people_probes_or_anchors() -> None:
    for q0 in ("How should I take the weekly export of the orders database?",
               "Someone switched on high contrast in the print room, how do I turn it off?",
               "How do I create a user account on the till PC?"):
        for seed in range(4):
            text = " | ".join([*_probes(q0, seed), *paraphrase_q0(q0, random.Random(seed))])
            assert not any(w in text for w in PEOPLE_TEMPLATE_WORDS), (q0, text)


def test_queries_about_people_keep_the_people_probes() -> None:
    q0 = "How do I reset another colleague's passphrase?"
    seen = " | ".join(p for seed in range(4) for p in _probes(q0, seed))
    assert any(w in seen for w in PEOPLE_TEMPLATE_WORDS), seen
