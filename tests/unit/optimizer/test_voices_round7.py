"""Look-alikes the local reader took for corrections in the sixth round of blind sets (a
seed bank, a community radio station, a ferry operator), each written here again after
its rule, in other trades' words (a bakery, a cinema, a vet clinic, a lab, a hotel): a
past incident cut in two at "a.m.", a document quoted to confirm the answer, a gauge
reading beside a question, complaints about products and about looks. Each has a control
that must stay a correction.
"""

from __future__ import annotations

import pytest

from optimizer import claims
from optimizer.accounting import Meter
from optimizer.claims import split_sentences
from optimizer.local.actionability import LocalActionability
from optimizer.types import FeedbackContext
from query.embeddings import MiniLMEmbedder


@pytest.fixture(scope="module")
def role(embedder: MiniLMEmbedder) -> LocalActionability:
    return LocalActionability(embedder)


def _read(role: LocalActionability, query: str, comment: str, rating: str = "down",
          answer: str = "Any way you like.") -> tuple[bool, str]:
    ex = role.extract(FeedbackContext("e1", "t", query, answer, comment, rating), Meter())
    return ex.can_produce_nugget, ex.body


# -- the time of day is no sentence end ----------------------------------------------------

def test_a_time_of_day_does_not_end_the_sentence() -> None:
    assert split_sentences("The proofer tripped at 4 a.m. on Sunday and again at 9 p.m. "
                           "Then the fuse went.") == [
        "The proofer tripped at 4 a.m. on Sunday and again at 9 p.m.", "Then the fuse went."]
    assert split_sentences("Lock up by 11 P.M. The alarm arms itself.") == [
        "Lock up by 11 P.M.", "The alarm arms itself."]


def test_a_night_that_went_wrong_once_is_no_correction(role: LocalActionability) -> None:
    ok, body = _read(role, "How do I restart the proofer?",
                     "Back in March the proofer at the Mill Lane bakery cut out at 2 a.m. "
                     "after five hours because of a missing fuse, and the whole batch was "
                     "lost. Not great.")
    assert not ok, body


def test_a_rule_with_a_time_of_day_is_still_a_rule(role: LocalActionability) -> None:
    ok, body = _read(role, "When can I restart the proofer?",
                     "The proofer at Mill Lane may only be restarted after 5 a.m. by the "
                     "shift baker.")
    assert ok and "after 5 a.m. by the shift baker" in body, body


def test_a_clause_is_told_in_the_past_by_its_auxiliary_too() -> None:
    clause_in_past = claims.clause_in_past
    assert clause_in_past("The 18:40 screening was moved for the premiere")
    assert clause_in_past("the projector didn't start")
    assert not clause_in_past("Screen 2 is booked for the premiere")


# -- a source quoted to confirm the answer -------------------------------------------------

def test_a_document_quoted_to_agree_with_the_answer_is_no_correction(
        role: LocalActionability) -> None:
    ok, body = _read(role, "Can a ward nurse sign out controlled drugs?",
                     "The RCVS guidance literally says 'a registered nurse may not supply "
                     "Schedule 2 drugs without a vet present' - matches what you said.",
                     rating="up")
    assert not ok, body


def test_a_rule_given_beside_a_matching_quote_stays(role: LocalActionability) -> None:
    ok, body = _read(role, "Can a ward nurse sign out controlled drugs?",
                     "The guidance says 'a registered nurse may not supply Schedule 2 drugs "
                     "without a vet present' - matches what you said. Here the CD register "
                     "must also be countersigned by the duty vet before 8 p.m.")
    assert ok and "countersigned by the duty vet" in body, body


# -- a gauge read beside a question --------------------------------------------------------

def test_a_gauge_reading_beside_questions_is_their_context(role: LocalActionability) -> None:
    ok, body = _read(role, "How much space does a sequencing run need?",
                     "If one run writes 600 GB of raw reads, do I need 1.2 TB for the "
                     "temporary files too, or just 800? And do the BAM indexes count? "
                     "/scratch has 2.1 TB free, 74% used.")
    assert not ok, body


def test_a_free_space_rule_beside_a_question_stays(role: LocalActionability) -> None:
    ok, body = _read(role, "How much space does a sequencing run need?",
                     "Does that hold for the NovaSeq too? Either way, /scratch must keep "
                     "500 GB free before a run starts; the scheduler refuses it otherwise.")
    assert ok and "500 GB free" in body, body


# -- complaints --------------------------------------------------------------------------

@pytest.mark.parametrize(("query", "answer", "comment"), [
    ("Which spreadsheet program should the front desk use?",
     "Use LibreOffice Calc, which opens Excel files.",
     "Excel Online still garbles the housekeeping rota workbook every single week and "
     "Numbers won't even keep the formulas. Honestly both are a pain."),
    ("How do I rename a booking?", "Right-click the booking and pick Rename.",
     "Small thing: 'Check out' has the hyphen in one place and not the other, looks a bit "
     "sloppy."),
])
def test_a_complaint_about_products_or_looks_is_no_correction(
        role: LocalActionability, query: str, answer: str, comment: str) -> None:
    ok, body = _read(role, query, comment, answer=answer)
    assert not ok, body


def test_a_product_the_house_has_dropped_is_still_a_correction(
        role: LocalActionability) -> None:
    ok, body = _read(role, "How do I export group bookings?",
                     "We don't use Opera PMS any more. Group bookings are exported from "
                     "Mews under Reports > Groups, and the file goes to reservations@ by "
                     "noon.")
    assert ok and "Reports > Groups" in body, body


# -- talk around the facts -----------------------------------------------------------------

@pytest.mark.parametrize("lead", ["Nearly, but we have specifics.", "Close, but our setup "
                                  "differs.", "Almost right, but here it works differently."])
def test_the_answer_judged_nearly_right_is_not_published(role: LocalActionability,
                                                         lead: str) -> None:
    ok, body = _read(role, "How are the cinema's projectors serviced?",
                     f"{lead} Projector lamps in screens 1-4 are swapped by Cinetec every "
                     "2,000 hours, and the log sheet stays in the booth.")
    assert ok and body.startswith("Projector lamps in screens 1-4"), body


def test_what_the_house_keeps_after_nearly_stays(role: LocalActionability) -> None:
    ok, body = _read(role, "How long are booth logs kept?",
                     "Nearly, but we keep them 18 months in the office safe.")
    assert ok and "18 months" in body, body


def test_a_chat_writer_who_goes_on_as_i_is_named() -> None:
    from optimizer.local.layout import _me_named
    assert _me_named("[10:02] Priya Shah: message me on 4410 and I reset it from the "
                     "office") == ("[10:02] Priya Shah: message Priya on 4410 and Priya "
                               "resets it from the office")
    assert _me_named("[10:02] Priya Shah: ask me and I'll unlock the till") == (
        "[10:02] Priya Shah: ask Priya and Priya will unlock the till")
    line = "[10:02] Priya Shah: I reset it yesterday and I was fine"
    assert _me_named(line) == line  # (no "contact me": the writer's own story stays)


# -- a file shown at a prompt, then pointed at -----------------------------------------------

def test_a_file_shown_and_pointed_at_is_read_by_its_name() -> None:
    from optimizer.local.layout import shown_file_read
    read = shown_file_read("$ cat /etc/chrony/chrony.conf\n# house time\nserver ntp1.brew.lan "
                           "iburst\nmakestep 1 3\n\n^ that's the config on every till, leave "
                           "it alone.")
    assert read == ("/etc/chrony/chrony.conf: server ntp1.brew.lan iburst; makestep 1 "
                    "3.\n\n/etc/chrony/chrony.conf is the config on every till, leave it "
                    "alone."), read


def test_a_file_shown_with_no_word_about_it_is_left_alone() -> None:
    from optimizer.local.layout import shown_file_read
    text = "$ cat /etc/chrony/chrony.conf\nserver ntp1.brew.lan iburst\n\nRestart chronyd after."
    assert shown_file_read(text) == text


def test_the_nugget_names_the_file_the_writer_pointed_at(role: LocalActionability) -> None:
    ok, body = _read(role, "Where do the till clocks get their time?",
                     "$ head -2 /etc/chrony/chrony.conf\nserver ntp1.brew.lan iburst\nmakestep "
                     "1 3\n\n^ that's the file on every till, never replace it by hand.")
    assert ok and "/etc/chrony/chrony.conf is the file on every till" in body, body
    assert "server ntp1.brew.lan iburst" in body, body


# -- a ban without its verb; an incident's cause -------------------------------------------

def test_a_ban_said_without_its_verb_is_a_rule(role: LocalActionability) -> None:
    ok, body = _read(role, "Can we run the autoclave overnight?",
                     "Autoclave cycles on the Harbour Road site run only between 07:00 and "
                     "19:00, when a nurse is in the building. No overnight autoclave runs at "
                     "branch clinics. Log each cycle in the sterilisation book.",
                     answer="Modern autoclaves can run unattended overnight cycles safely.")
    assert ok and "No overnight autoclave runs at branch clinics." in body, body


@pytest.mark.parametrize("comment", ["No idea what the cycle time is, sorry.",
                                     "No worries, found it myself."])
def test_no_idea_or_no_worries_is_no_ban(role: LocalActionability, comment: str) -> None:
    ok, body = _read(role, "Can we run the autoclave overnight?", comment)
    assert not ok, body


def test_an_incidents_cause_told_in_the_past_is_not_published(
        role: LocalActionability) -> None:
    ok, body = _read(role, "Where do scheduled exports live?",
                     "LAB-881 CLOSED. Cause: the nightly plate export lived in Wen's personal "
                     "crontab and stopped when her account expired. Fix: moved to "
                     "/etc/cron.d/lab-plates, running as svc-lims. From now on lab jobs live "
                     "in /etc/cron.d/ and run as svc- accounts, never in personal crontabs.")
    assert ok and "Wen" not in body and "never in personal crontabs" in body, body


def test_a_cause_that_states_a_rule_stays(role: LocalActionability) -> None:
    ok, body = _read(role, "Why do plate exports fail?",
                     "Cause: exports must not run as a personal account, because accounts "
                     "expire when staff leave. Run them as svc-lims.")
    assert ok and "must not run as a personal account" in body, body
