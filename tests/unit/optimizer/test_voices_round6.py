"""Shapes the local reader met in a sixth round of blind sets (a ferry operator, a seed
bank, a community radio station), each written here again after its rule, in other
trades' words (a dental practice, a brewery, a library, a vet clinic, a theatre, a school
kitchen): a statement scratched and given again as a change ("it moved to X last
spring", "Y switched it in March: X now"), a story announced by an apology for its
length, a head before a colon that says what the values after it are.
"""

from __future__ import annotations

import pytest

from optimizer.accounting import Meter
from optimizer.claims import statement_taken_back
from optimizer.fidelity import taken_back
from optimizer.local.actionability import LocalActionability
from optimizer.local.layout import (
    joke_removed,
    negative_question_as_claim,
    qa_pairs_as_statements,
)
from optimizer.types import FeedbackContext
from query.embeddings import MiniLMEmbedder


@pytest.fixture(scope="module")
def role(embedder: MiniLMEmbedder) -> LocalActionability:
    return LocalActionability(embedder)


def _body(role: LocalActionability, query: str, comment: str,
          answer: str = "Any way you like.") -> str:
    ex = role.extract(FeedbackContext("e1", "t", query, answer, comment, "down"), Meter())
    assert ex.can_produce_nugget, ex.reason
    return ex.body


# -- a statement scratched, then given again as the change that replaced it ---------------

def test_a_statement_scratched_is_said_again_with_the_value_it_moved_to() -> None:
    read, _ = statement_taken_back(
        "The surgery's X-ray viewer is the old Planmeca box. Scratch that - it was "
        "upgraded to the Sidexis 4 workstation in May, so nobody logs in to the box. "
        "Ask Noor for a login.")
    assert read.startswith("The surgery's X-ray viewer is the Sidexis 4 workstation, so "
                           "nobody logs in to the box."), read
    assert "Planmeca" not in read and "in May" not in read


def test_a_change_told_before_a_colon_leaves_only_what_holds_now() -> None:
    read, _ = statement_taken_back(
        "Cask washing uses the blue detergent. Forget that, Hamid changed it at the summer "
        "shutdown: the washer now doses Caustiq 40 automatically, so nobody adds it by hand.")
    assert read.strip() == ("The washer now doses Caustiq 40 automatically, so nobody adds "
                            "it by hand."), read


def test_a_scratched_statement_without_a_new_statement_is_left_to_the_scrap_readers() -> None:
    text = "Returns go in the brown crate. Scratch that."
    assert statement_taken_back(text) == (text, [])
    # (a change that says nothing new about the statement is no repair either)
    text = "The hall lights are on the DMX desk. Scratch that, I asked about it yesterday."
    assert statement_taken_back(text)[0] == text


def test_the_repaired_statement_is_what_the_nugget_says(role: LocalActionability) -> None:
    body = _body(role, "Which card reader do we use for the theatre's stage door?",
                 "The stage door reader is the Paxton Net2 unit. Actually scratch that - it "
                 "moved to the Salto XS4 reader last autumn, so old fobs don't open it. Only "
                 "the duty manager issues new fobs.")
    assert "Salto XS4" in body and "Only the duty manager issues new fobs" in body, body
    assert "Paxton" not in body


def test_the_judge_takes_back_what_the_change_replaced() -> None:
    gone = taken_back("The vaccine fridge logger is the EL-USB-2 stick. Scratch that - it "
                      "moved to the TG-4100 unit last winter, so nobody pulls a stick.")
    assert "TG-4100" not in gone and "EL-USB-2" in gone, gone


# -- a story announced by an apology for its length ----------------------------------------

def test_a_story_announced_by_an_apology_goes_before_anyway() -> None:
    out = joke_removed(
        "Apologies, sorry this is a bit long, it's been a long week. The lunch delivery "
        "was late twice, the dishwasher flooded on Tuesday and the new menus were printed "
        "in the wrong font. Anyway, the allergen sheet for every dish is signed off by "
        "the head cook before 10:30.")
    assert out.strip().startswith("The allergen sheet for every dish is signed off"), out
    assert "dishwasher" not in out


def test_a_passive_told_in_the_past_is_part_of_the_story() -> None:
    out = joke_removed(
        "It's been a rough day, sorry. The 09:15 school trip was cancelled because of the "
        "snow. Anyway, group bookings are confirmed by email only.")
    assert "cancelled" not in out and "Group bookings are confirmed by email only." in out


# -- a head before a colon that says what the values are ----------------------------------

def test_a_head_that_says_what_the_values_are_stays_with_them(
        role: LocalActionability) -> None:
    body = _body(role, "Where do the branch laptops download their updates from?",
                 "Branch laptops get their updates from our cache box in the "
                 "basement: http://wsus.lib.internal:8530 for Windows and "
                 "http://wsus.lib.internal:8531 for drivers. Nobody installs updates by hand.")
    assert body.startswith("Branch laptops get their updates from our cache box"), body
    assert "http://wsus.lib.internal:8530" in body


def test_a_story_head_before_a_colon_still_goes(role: LocalActionability) -> None:
    body = _body(role, "How many rabies doses do we keep in stock?",
                 "I checked this with the practice manager yesterday: the clinic keeps 20 "
                 "rabies doses in the vaccine fridge, never fewer.")
    assert "practice manager" not in body and "20 rabies doses" in body, body


# -- clauses about the conversation itself ------------------------------------------------

@pytest.mark.parametrize(("query", "comment", "kept", "gone"), [
    # a remark on the assistant after the fact, in the same sentence
    ("Who enters the stocktake counts at the branch?",
     "Stocktake sheet ST-9 was reissued in October, the assistant seems to have the old "
     "one. Counts are entered in LibStock by the branch lead only.",
     ("Stocktake sheet ST-9 was reissued in October.", "by the branch lead only"),
     ("assistant",)),
    # somebody else's note that repeats the answer, with its aside, before the rule
    ("How do I change the display settings on the box-office till?",
     "Priya's note on the rota says the same as the bot - Staff Room, Display tab - but "
     "there's no Display tab on the box-office tills and never will be. Till screens are "
     "locked by the duty manager.",
     ("There's no Display tab on the box-office tills and never will be.",),
     ("the bot", "Priya's note")),
    # what the answer should not have offered, after the rule
    ("Can I wedge the cold-room door open while unloading?",
     "Cold-room doors are propped open only by the kitchen lead; that's our standard, so "
     "the answer shouldn't suggest wedging them at all.",
     ("Cold-room doors are propped open only by the kitchen lead",),
     ("the answer",)),
])
def test_a_clause_about_the_conversation_is_not_published(
        role: LocalActionability, query: str, comment: str, kept: tuple[str, ...],
        gone: tuple[str, ...]) -> None:
    body = _body(role, query, comment,
                 answer="Wedge the door and use the Staff Room panel.")
    for text in kept:
        assert text in body, (text, body)
    for text in gone:
        assert text not in body, (text, body)


def test_what_happened_when_somebody_followed_the_answer_is_the_story(
        role: LocalActionability) -> None:
    body = _body(role, "Can I move the kiln schedule by hand?",
                 "Marta on the early shift did exactly what this answer says because the "
                 "dial looked slow, and the kiln controller dropped the whole firing "
                 "program. The kiln schedule is only "
                 "changed in KilnLink by the studio lead.",
                 answer="Open the controller and edit the schedule.")
    assert body == "The kiln schedule is only changed in KilnLink by the studio lead.", body


def test_a_clause_about_the_answer_that_names_a_new_value_stays(
        role: LocalActionability) -> None:
    body = _body(role, "Which port does the label printer use?",
                 "The label printer listens on 9101, and the answer missed port 9102 for "
                 "the second tray.", answer="It uses port 9100.")
    assert "9102" in body, body


# -- the reader's doubt in a condition is no hedge of the writer ---------------------------

def test_a_condition_on_the_reader_being_unsure_is_an_instruction(
        role: LocalActionability) -> None:
    body = _body(role, "Where do new lab notebooks get stored?",
                 "If it's a paper notebook (bench, field, cold room) → archive shelf B2 in "
                 "room 114. If it's digital → the ELN project folder, never a USB stick. "
                 "If you're not sure → ask Dr Okafor before filing anything.")
    assert "archive shelf B2 in room 114" in body and "ask Dr Okafor" in body, body


def test_the_writers_own_doubt_still_hedges(role: LocalActionability) -> None:
    ex = role.extract(FeedbackContext(
        "e1", "t", "Where do new lab notebooks get stored?", "In the office.",
        "Not sure if it's shelf B2 or B3 in room 114 these days.", "down"), Meter())
    assert not ex.can_produce_nugget, ex.body


# -- a negative question the writer answers yes at once ------------------------------------

@pytest.mark.parametrize(("comment", "stated"), [
    ("Doesn't the food hygiene rating mean we have to log fridge temperatures twice a day? "
     "It does, which is why the sheet on the walk-in says 07:00 and 15:00.",
     "The food hygiene rating means we have to log fridge temperatures twice a day, which "
     "is why the sheet on the walk-in says 07:00 and 15:00."),
    ("Don't the insurers require two people at the cash office after 18:00? Yes they do. "
     "The safe stays shut otherwise.",
     "The insurers require two people at the cash office after 18:00. The safe stays shut"),
])
def test_a_negative_question_answered_yes_states_what_it_asks(comment: str,
                                                              stated: str) -> None:
    assert negative_question_as_claim(comment).startswith(stated)


def test_a_negative_question_answered_with_doubt_stays_a_question() -> None:
    text = "Doesn't the new lease mean we lose the loading bay? No idea, ask Karl."
    assert negative_question_as_claim(text) == text


def test_numbered_questions_answered_in_place_keep_what_they_ask() -> None:
    out = qa_pairs_as_statements(
        "Q7. How does a volunteer open the tool shed? A: Code 4471 on the keypad.\n"
        "Q8. Who orders new saw blades? A: Only the site warden.")
    assert "How does a volunteer open the tool shed: Code 4471 on the keypad." in out, out
    assert "Who orders new saw blades: Only the site warden." in out, out


# -- the writer's own setup at home is not the organisation's world ------------------------

@pytest.mark.parametrize("comment", [
    "At home I run four print queues on an old Synology with 2 GB and they all work fine "
    "with CUPS 2.4. Nice to see it explained properly.",
    "On my own laptop I keep five Firefox profiles synced with Firefox Sync, works great. "
    "Good answer.",
])
def test_the_writers_own_setup_at_home_is_no_correction(role: LocalActionability,
                                                         comment: str) -> None:
    ex = role.extract(FeedbackContext("e1", "t", "How do I set up print queues?",
                                      "Use the CUPS web interface on port 631.", comment, "up"),
                      Meter())
    assert not ex.can_produce_nugget, ex.body


def test_a_rule_for_home_visits_is_still_a_rule(role: LocalActionability) -> None:
    body = _body(role, "Which laptop do nurses take on visits?",
                 "At home visits, nurses carry the Toughbook CF-33 and never a personal "
                 "phone.")
    assert "Toughbook CF-33" in body, body


def test_a_word_to_the_reader_at_the_end_is_not_published(role: LocalActionability) -> None:
    body = _body(role, "When can the walk-in freezer be defrosted?",
                 "deliveries come at night too mate. defrost = sunday 14:00-16:00 only, "
                 "logged on the HACCP sheet, guys!")
    assert "mate" not in body and "guys" not in body, body
    assert "Sunday 14:00-16:00 only" in body or "sunday 14:00-16:00 only" in body, body


def test_the_exception_a_tail_describes_stays_named(role: LocalActionability) -> None:
    body = _body(role, "Where do the tills print receipts?",
                 "All shop tills print to the Epson TM-T88 in the office. Market stalls are "
                 "the exception: they print on the Zebra ZD421 in the van.")
    assert "Market stalls are the exception: they print on the Zebra ZD421" in body, body


def test_where_the_writer_is_dictating_from_is_not_published(role: LocalActionability) -> None:
    body = _body(role, "How are the loan periods set for the reference books?",
                 "okay so dictating this between two school visits sorry about the noise. "
                 "reference books are never loaned out and the loan period field stays at "
                 "zero in Koha full stop")
    assert "dictating" not in body and "noise" not in body, body
    assert "never loaned out" in body, body


def test_a_value_said_to_be_the_old_one_is_given_again(role: LocalActionability) -> None:
    read, replaced = statement_taken_back(
        "The proofing cabinet runs at 28C for 40min. Hmm, no - that was the old setting, "
        "Aled's shift got it changed in June. It's 55min now, set with the dial on the left "
        "panel. Rye is proofed in the other cabinet.")
    assert read.startswith("The proofing cabinet runs at 28C for 55min, set with the dial on "
                           "the left panel."), read
    assert replaced == ["40min"]
    body = _body(role, "How long does the dough proof?",
                 "The proofing cabinet runs at 28C for 40min. Hmm, no - that was the old "
                 "setting, Aled's shift got it changed in June. It's 55min now, set with the "
                 "dial on the left panel.")
    assert "40min" not in body and "55min" in body, body


def test_a_pointer_back_with_a_word_on_the_answer_is_all_talk(role: LocalActionability) -> None:
    body = _body(role, "Can I wash the rehearsal-room carpet with the steam cleaner?",
                 "Carpets in the rehearsal rooms are only dry-cleaned by ProClean on the first "
                 "Monday of the month. That's our standard, so the answer shouldn't offer the "
                 "steam cleaner at all.", answer="Use the steam cleaner on a low setting.")
    assert "standard" not in body and "answer" not in body, body
    assert "only dry-cleaned by ProClean" in body, body


def test_a_crontab_line_keeps_its_first_field(role: LocalActionability) -> None:
    body = _body(role, "How often is the stock sync run?",
                 "It's this line in the shop user's crontab on till-srv2:\n"
                 "*/15 * * * * /opt/shop/bin/stock-sync --quiet\n"
                 "* * * * * /opt/shop/bin/heartbeat\n"
                 "Nobody adds their own sync jobs; ask Mo for changes.")
    assert "*/15 * * * * /opt/shop/bin/stock-sync" in body, body
    assert "* * * * * /opt/shop/bin/heartbeat" in body, body


def test_who_is_dictating_and_from_where_is_not_published(role: LocalActionability) -> None:
    body = _body(role, "Which radio channel do the lifeguards use?",
                 "this is priya on the north tower dictating so excuse the typing. lifeguards "
                 "always use channel 12 full stop. channel 16 is for the coastguard only full "
                 "stop")
    assert "priya" not in body.lower() and "dictating" not in body, body
    assert "channel 12" in body, body


def test_old_and_new_way_on_one_line_leave_the_new_way(role: LocalActionability) -> None:
    body = _body(role, "How are the gym lockers assigned?",
                 "Old way (2021): lockers first come first served 'for now'. New way (since "
                 "the refit): every locker is booked in Gladstone for one term, and the front "
                 "desk holds the master key only.")
    assert "first come first served" not in body, body
    assert "Every locker is booked in Gladstone for one term" in body, body


def test_replies_in_square_brackets_under_quoted_lines_are_read_plain(
        role: LocalActionability) -> None:
    body = _body(role, "How do I send the till logs to the office?",
                 "> such as copying them to a USB stick\n"
                 "[not here: we push them over SFTP to office-nas port 2222 every night]\n"
                 "> or email them to yourself\n"
                 "[no, the tills have no mail client]\n"
                 "Copies end up under /srv/tills/<till>/ on office-nas.")
    assert "[" not in body and "]" not in body, body
    assert "We push them over SFTP to office-nas port 2222 every night" in body, body


def test_what_else_the_new_statement_says_stays_with_the_value() -> None:
    read, _ = statement_taken_back(
        "Returns are kept for 14 days... sorry, no, that was the old policy. It's 28 days "
        "now, and gift cards are never refunded in cash. Ask the floor lead otherwise.")
    assert read.startswith("Returns are kept for 28 days, and gift cards are never refunded "
                           "in cash."), read
