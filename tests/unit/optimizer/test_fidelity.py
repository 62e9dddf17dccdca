"""The fidelity checks of the evaluation, on nuggets that pass them and nuggets that must
fail them (the checks are only worth something if they can fail)."""

from __future__ import annotations

import numpy as np

from optimizer.fidelity import (
    answer_verdict,
    fact_coverage,
    judge_nugget,
    overturned_values,
    stale_claims,
    unsupported_text,
)
from query.embeddings import MiniLMEmbedder

FEEDBACK = ("Not in Reports. Freezer temperatures are exported from Tools > Export > "
            "Temperature Log, and the log covers 90 days.")
QUERY = "where do I export the freezer temperatures"
ANSWER = "Open Reports > Freezers and click Download; the report covers 30 days."
FACTS = ("Freezer temperatures are exported from Tools > Export > Temperature Log.",
         "The temperature log covers 90 days.")


def test_a_fact_needs_its_items_and_most_of_its_words() -> None:
    good = "Freezer temperatures are exported from Tools > Export > Temperature Log."
    assert fact_coverage(FACTS[0], good).covered
    wrong_path = "Freezer temperatures are exported from Tools > Temperature Log."
    verdict = fact_coverage(FACTS[0], wrong_path)
    assert not verdict.covered and verdict.missing_items == ("Tools > Export > Temperature Log",)
    wrong_number = "The temperature log covers 30 days."
    assert not fact_coverage(FACTS[1], wrong_number).covered
    too_few_words = "90 days."
    assert not fact_coverage(FACTS[1], too_few_words).covered


def test_a_menu_path_may_be_stated_part_by_part() -> None:
    split = "Use Tools > Export, then Temperature Log, to export freezer temperatures."
    assert fact_coverage(FACTS[0], split).covered


def test_a_paraphrase_counts_when_its_embedding_is_close() -> None:
    fact = "Weekend shifts are paid at 150 percent of the hourly rate."
    paraphrase = "Saturday and Sunday work earns 150 percent."
    by_words = fact_coverage(fact, paraphrase)
    assert not by_words.covered and by_words.word_recall < 0.6

    def same(texts: object) -> np.ndarray:
        return np.ones((len(texts), 4), dtype=np.float32) / 2.0  # type: ignore[arg-type]

    def apart(texts: object) -> np.ndarray:
        return np.eye(len(texts), 4, dtype=np.float32)  # type: ignore[arg-type]

    assert fact_coverage(fact, paraphrase, same).covered
    assert not fact_coverage(fact, paraphrase, apart).covered


def test_real_embeddings_tell_a_paraphrase_from_another_fact(embedder: MiniLMEmbedder) -> None:
    fact = "Returned books go into the drop box next to the main entrance."
    close = fact_coverage(fact, "Books are returned in the drop box by the main entrance.",
                          embedder.embed)
    far = fact_coverage(fact, "The main entrance closes at 22 during exam weeks.",
                        embedder.embed)
    assert close.covered and not far.covered


def test_items_the_user_never_wrote_are_not_required() -> None:
    fact = "Freezer temperatures are exported from Tools > Export > Temperature Log on LIMS."
    body = "Freezer temperatures are exported from Tools > Export > Temperature Log."
    assert not fact_coverage(fact, body).covered  # LIMS is missing
    assert fact_coverage(fact, body, source=FEEDBACK).covered  # ...but nobody wrote it


def test_unsupported_text_is_what_neither_the_feedback_nor_the_query_says() -> None:
    assert unsupported_text("Where do I export the freezer temperatures?",
                            "Freezer temperatures are exported from Tools > Export > "
                            "Temperature Log.", FEEDBACK, QUERY) == []
    template = unsupported_text(
        "Export freezer temperatures: 90", "If exporting does not work, this is why; it "
        "does not concern the fridge inventory.", FEEDBACK, QUERY)
    assert len(template) == 1 and "concern" in template[0] and "inventory" in template[0]


def test_cannot_is_two_function_words_and_adds_no_content() -> None:
    said = "Can volunteers drive the van? No. Only staff with a D1 licence drive it."
    assert unsupported_text("", "Volunteers cannot drive the van.", said, "van drivers") == []
    assert unsupported_text("", "Volunteers cannot park the van.", said, "van drivers") != []


def test_a_number_the_writer_spelled_out_supports_its_digits() -> None:
    said = "The cap is ninety, sorry, one hundred and twenty per group."
    assert unsupported_text("", "The cap is 120 per group.", said, "group cap") == []
    assert unsupported_text("", "The cap is 125 per group.", said, "group cap") != []


def test_stale_claims_are_overturned_values_stated_without_negation() -> None:
    assert overturned_values(ANSWER, FACTS) >= {"30", "reports > freezers", "freezers"}
    assert stale_claims("Where do I export the freezer temperatures?",
                        "Not in Reports > Freezers. Use Tools > Export > Temperature Log.",
                        ANSWER, FACTS) == []
    assert stale_claims("Export freezer temperatures: Reports > Freezers",
                        "Tools > Export > Temperature Log covers 90 days.", ANSWER,
                        FACTS) == ["freezers", "reports > freezers"]
    assert stale_claims("Freezer log", "The report covers 30 days.", ANSWER, FACTS) == ["30"]


def test_a_setting_that_cannot_be_changed_is_the_topic_not_an_overturned_value() -> None:
    answer = ("Raise the Idle Timeout in Preferences > Session, or turn Idle Timeout off "
              "for the kiosk.")
    facts = ["The Idle Timeout of the kiosks is 3 minutes and cannot be turned off.",
             "Clerks cannot change the Idle Timeout; the facilities team sets it."]
    assert "idle timeout" not in overturned_values(answer, facts)
    assert stale_claims("Kiosk idle timeout", "The Idle Timeout of the kiosks is 3 minutes "
                        "and cannot be turned off.", answer, facts) == []
    # Refusing a tool still overturns the tool the answer recommended.
    assert overturned_values("Install Dconf Editor and edit the key.",
                             ["Dconf Editor is not allowed on office PCs."]) >= {
        "dconf editor"}


def test_the_negation_belongs_to_the_nearer_value_of_two() -> None:
    answer = "Open Files > Other Locations and pick the archive under Windows Network."
    facts = ["The archive does not appear under Windows Network in Other Locations."]
    assert overturned_values(answer, facts) == {"windows network"}
    facts = ["Screen Reader is not in Settings > Universal Access; it is in Settings > "
             "Accessibility > Seeing."]
    out = overturned_values("Turn on Settings > Universal Access > Screen Reader.", facts)
    assert "screen reader" not in out and "settings > universal access > screen reader" in out


def test_judge_nugget_combines_the_three(embedder: MiniLMEmbedder) -> None:
    fid = judge_nugget("Where do I export the freezer temperatures?",
                       "Freezer temperatures are exported from Tools > Export > Temperature "
                       "Log, and the log covers 90 days.", feedback=FEEDBACK, query=QUERY,
                       answer=ANSWER, facts=FACTS, embed=embedder.embed)
    assert fid.fact_recall == 1.0 and not fid.unsupported and not fid.stale
    half = judge_nugget("Freezer temperatures", "Freezer temperatures are exported from "
                        "Tools > Export > Temperature Log.", feedback=FEEDBACK, query=QUERY,
                        answer=ANSWER, facts=FACTS)
    assert half.fact_recall == 0.5


def test_answer_verdicts() -> None:
    both = ("Freezer temperatures are exported from Tools > Export > Temperature Log "
            "[n-1]. The temperature log covers 90 days [n-1].")
    assert answer_verdict(both, FACTS, ANSWER) == "addresses"
    assert answer_verdict(FACTS[0], FACTS, ANSWER) == "partial"
    assert answer_verdict("Open Reports > Freezers and click Download [kb-1].", FACTS,
                          ANSWER) == "contradicts"
    assert answer_verdict("I could not find this.", FACTS, ANSWER) == "misses"


def test_word_recall_counts_only_the_fact_words_the_user_wrote() -> None:
    # The gold fact names the organisation and says "authentication"; the user wrote
    # neither, so a nugget cannot be asked to.
    fact = "md5 authentication is disabled on all Harbourview servers."
    body = "md5 is disabled everywhere, every pg_hba entry is scram-sha-256."
    source = "nope md5 is disabled everywhere, every pg_hba entry is scram-sha-256"
    assert not fact_coverage(fact, body).covered
    assert fact_coverage(fact, body, source=source).covered
    # A body that drops what the user wrote is still a miss.
    assert not fact_coverage(fact, "Every pg_hba entry is scram-sha-256.", source=source).covered


def test_a_team_name_with_an_ampersand_is_not_the_writer() -> None:
    from optimizer.fidelity import conversational_text
    assert conversational_text("", "Access requests go to I&O and R&D signs them off.") == []
    assert conversational_text("", "I&O installs it, and I checked.") != []


def test_introductions_stances_and_verdicts_are_talk() -> None:
    """Written for this test (a ferry operator's crew notes)."""
    from optimizer.fidelity import conversational_text
    for talk in ("Ana from the Skerry terminal here.", "Ruben here, deck crew.",
                 "Ruben here (deck crew, Skerry).",
                 "Honestly the ramp needs new hinges too.", "Tbh nobody reads the manifest.",
                 "That was true until the refit in May.", "That's the normal rule, but on "
                 "Sundays the ramp opens at 06:40."):
        assert conversational_text("", talk) != [], talk
    for fact in ("Ana Costa approves every manifest change.",
                 "The ramp opens at 06:40 on Sundays.",
                 "That ramp is only used by freight.", "Skerry terminal is here on the map.",
                 "Ferries here don't carry fuel trucks.", "Tickets here are checked twice."):
        assert conversational_text("", fact) == [], fact



def test_the_writers_attitude_is_talk_and_the_same_adverb_inside_a_fact_is_not() -> None:
    """Written for this test (a bakery's supplier notes)."""
    from optimizer.fidelity import conversational_text
    for talk in ("Sadly the mill only delivers on Tuesdays.",
                 "Luckily, rye flour comes from a second supplier.",
                 "Weirdly enough the invoices arrive in Danish."):
        assert conversational_text("", talk) != [], talk
    for fact in ("The mill delivers rye flour on Tuesdays.",
                 "Late invoices are charged 2 % interest, unfortunately for small shops.",
                 "Oddly shaped loaves are sold at half price."):
        assert conversational_text("", fact) == [], fact

def test_stopped_accepting_negates_what_follows() -> None:
    answer = "Create an RSA key with ssh-keygen -t rsa and copy it to gw-2."
    facts = ["gw-2 no longer accepts RSA keys."]
    assert "rsa" in overturned_values(answer, facts)
    assert stale_claims("Keys for gw-2", "gw-2 stopped accepting RSA keys in May.", answer,
                        facts) == []
    assert stale_claims("Keys for gw-2", "Copy your RSA key to gw-2.", answer,
                        facts) == ["rsa"]


def test_a_value_named_with_another_predicate_is_not_a_stale_claim(
        embedder: MiniLMEmbedder) -> None:
    """With an embedder, only a sentence that restates the answer's claim about the
    overturned value counts (cases written for this test: a ferry's booking shortcuts)."""
    answer = "Press Alt+F9 to open the manifest, then export it to PDF."
    facts = ["Ctrl+M opens the manifest."]
    body_other = "Alt+F9 is the old booking system's key. Ctrl+M opens the manifest."
    body_same = "Press Alt+F9 to open the manifest. Ctrl+M opens the manifest."
    stale = overturned_values(answer, facts)
    assert stale and stale_claims("Manifest", body_other, answer, facts) == sorted(stale)
    assert stale_claims("Manifest", body_other, answer, facts, embed=embedder.embed) == []
    assert stale_claims("Manifest", body_same, answer, facts, embed=embedder.embed) == \
        sorted(stale)


def test_words_the_reader_writes_out_for_marks_and_shorthand_are_the_feedbacks() -> None:
    feedback = "ppl on the late shift: ✅ side door ❌ loading bay, pls use the side door"
    body = "Allowed: side door. Not allowed: loading bay. People on the late shift please " \
        "use the side door."
    assert unsupported_text("Late shift door", body, feedback, "which door at night") == []
    assert unsupported_text("Late shift door", "Visitors use the side door.", feedback,
                            "which door at night") != []


def test_the_value_a_change_moved_from_is_named_as_the_old_one() -> None:
    answer = "The nightly export runs from /etc/cron.d/export."
    facts = ["The nightly export runs from export.timer, no longer /etc/cron.d/export."]
    feedback = "Moved the nightly export from /etc/cron.d/export to export.timer in May."
    assert stale_claims("Nightly export", feedback, answer, facts, feedback) == []
    assert stale_claims("Nightly export", "The export job is /etc/cron.d/export.", answer,
                        facts, feedback) == ["/etc/cron.d/export"]


def test_a_key_value_item_is_stated_with_spaces_around_the_sign() -> None:
    fact = "The kiln controller uses ramp=slow."
    assert fact_coverage(fact, "Kiln controller: ramp = slow, always.").covered
    assert not fact_coverage(fact, "Kiln controller: ramp = fast, always.").covered
