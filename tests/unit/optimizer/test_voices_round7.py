"""Shapes the local reader met in the sixth and seventh rounds of blind sets (a seed bank,
a community radio station, a ferry operator; a group of vet clinics, a road-freight broker,
a rowing club), each written here again after its rule, in other trades' words (a bakery,
a cinema, a dental practice, a garden centre, a school, a lab, a hotel): look-alikes taken
for corrections (a past incident cut in two at "a.m.", a document quoted to confirm the
answer, a gauge reading beside a question, complaints), do/don't labels, a decimal taken
back, a quoted question answered "No", negative questions answered "Yes", a joke before
"House rule:", dictated addresses, house settings said of every machine. Each has a
control.
"""

from __future__ import annotations

import pytest

from optimizer import claims
from optimizer.accounting import Meter
from optimizer.claims import plain_voice, split_sentences, statement_taken_back
from optimizer.fidelity import unsupported_text
from optimizer.local import layout
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
    assert layout._me_named("[10:02] Priya Shah: message me on 4410 and I reset it from the "
                     "office") == ("[10:02] Priya Shah: message Priya on 4410 and Priya "
                               "resets it from the office")
    assert layout._me_named("[10:02] Priya Shah: ask me and I'll unlock the till") == (
        "[10:02] Priya Shah: ask Priya and Priya will unlock the till")
    line = "[10:02] Priya Shah: I reset it yesterday and I was fine"
    assert layout._me_named(line) == line  # (no "contact me": the writer's own story stays)


# -- a file shown at a prompt, then pointed at -----------------------------------------------

def test_a_file_shown_and_pointed_at_is_read_by_its_name() -> None:
    read = layout.shown_file_read(
        "$ cat /etc/chrony/chrony.conf\n# house time\nserver ntp1.brew.lan iburst\nmakestep 1 "
        "3\n\n^ that's the config on every till, leave it alone.")
    assert read == ("/etc/chrony/chrony.conf: server ntp1.brew.lan iburst; makestep 1 "
                    "3.\n\n/etc/chrony/chrony.conf is the config on every till, leave it "
                    "alone."), read


def test_a_file_shown_with_no_word_about_it_is_left_alone() -> None:
    text = "$ cat /etc/chrony/chrony.conf\nserver ntp1.brew.lan iburst\n\nRestart chronyd after."
    assert layout.shown_file_read(text) == text


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


# -- what a label says is the rule's own word ------------------------------------------------

def test_a_dont_label_keeps_its_negation() -> None:
    text = ("DO: sterilise handpieces in the Lisa autoclave.\nDON'T: reuse a bur between "
            "patients.\nNEVER: leave the amalgam separator open.")
    assert layout.do_labels_read(text) == (
        "Sterilise handpieces in the Lisa autoclave.\nDon't reuse a bur between patients.\n"
        "Never leave the amalgam separator open.")


def test_the_nugget_says_dont_where_the_writer_did(role: LocalActionability) -> None:
    ok, body = _read(role, "How do I clean a handpiece?",
                     "DO: run handpieces through the Lisa cycle after each patient.\nDON'T: "
                     "oil them by hand before the cycle.")
    assert ok and "Don't oil them by hand before the cycle." in body, body
    assert "Oil them" not in body, body


def test_a_note_label_still_goes() -> None:
    assert layout.do_labels_read("Note: the Lisa cycle takes 40 minutes.") == (
        "Note: the Lisa cycle takes 40 minutes.")


# -- a decimal taken back ----------------------------------------------------------------------

def test_a_decimal_taken_back_is_given_again() -> None:
    read, replaced = statement_taken_back(
        "The dough hydration target is 0.68. Actually scratch that, Marek raised it after "
        "the flour change - it's 0.72 now. The mixer runs 6 minutes.")
    assert read.startswith("The dough hydration target is 0.72."), read
    assert replaced == ["0.68"] and "0. 72" not in read


# -- a quoted question answered "No" -------------------------------------------------------------

def test_a_quoted_question_answered_no_is_denied() -> None:
    read = layout.quoted_question_answered(
        "> Can I just reboot the till during service?\n\nNo please don't, it drops the card "
        "terminal. Reboot after close.")
    assert read.startswith("You cannot reboot the till during service. It drops the card "
                           "terminal."), read


def test_a_no_followed_by_its_own_dont_keeps_it() -> None:
    read = layout.quoted_question_answered("> can the juniors just move the plants?\n\nNo, please "
                                    "don't touch the stock bench.")
    assert "don't touch the stock bench" in read, read
    assert "Touch the stock bench" not in read, read


def test_a_quoted_question_answered_yes_is_left_alone() -> None:
    text = "> Can I reboot the till?\n\nYes, after close."
    assert layout.quoted_question_answered(text) == text


def test_a_question_with_a_noun_subject_answered_no_in_a_qa() -> None:
    read = layout.qa_pairs_as_statements("Q: Can a supply teacher book the minibus?\nA: No. Only "
                                  "permanent staff with a D1 licence book it.")
    assert read.startswith("A supply teacher cannot book the minibus."), read


# -- negative questions answered yes ------------------------------------------------------------

def test_negative_questions_answered_yes_state_what_they_ask() -> None:
    read = layout.negative_question_as_claim(
        "Isn't the walk-in freezer locked after 22:00 by the night manager? Yes, it is. And "
        "isn't restocking the night porter's job? Also yes - so leave the trolley by the "
        "door.")
    assert read.startswith("The walk-in freezer is locked after 22:00 by the night manager. "
                           "Restocking is the night porter's job."), read


def test_a_negative_question_answered_with_doubt_stays() -> None:
    text = "Isn't the freezer locked after 22:00? Not sure, ask Mo."
    assert layout.negative_question_as_claim(text) == text


# -- jokes, stories and talk ------------------------------------------------------------------

def test_a_joke_before_house_rule_goes(role: LocalActionability) -> None:
    ok, body = _read(role, "How do I reset the oven controller?",
                     "Ha, 'just pull the plug'. The last baker who did that mid-bake lost 40 "
                     "loaves and the fire door alarm went off. House rule: never cut power to "
                     "the deck oven while it is above 100 C. Use the soft stop on the panel.")
    assert ok and body.startswith("Never cut power to the deck oven"), body
    assert "40 loaves" not in body, body


def test_house_rule_in_a_plain_message_keeps_what_comes_before(role: LocalActionability) -> None:
    ok, body = _read(role, "How do I reset the oven controller?",
                     "Deck ovens are serviced by Tecnopast every March. House rule: never cut "
                     "power while the oven is above 100 C.")
    assert ok and "Tecnopast every March" in body, body


def test_what_happened_to_someone_who_followed_the_answer_is_the_story(
        role: LocalActionability) -> None:
    ok, body = _read(role, "Can I turn off the lab fridge alarm?",
                     "Priya did exactly this on fridge F-03 last spring and a week of samples "
                     "thawed over Easter. So now: the alarm on every sample fridge stays armed, "
                     "and only facilities can silence it.")
    assert ok and "stays armed" in body, body
    assert "Priya" not in body and "thawed" not in body, body


def test_a_reproach_about_the_answer_is_not_published(role: LocalActionability) -> None:
    ok, body = _read(role, "How do I give myself admin rights?",
                     "You've told two interns this month how to make themselves admins. At "
                     "the lab only the group lab-it-admins has administrator rights, and "
                     "software is installed by IT from a 'Software request' ticket.",
                     answer="Open Settings > Users, unlock, and switch Account Type to "
                            "Administrator.")
    assert ok and "You've told" not in body and "lab-it-admins" in body, body


# -- dictation ---------------------------------------------------------------------------------

def test_a_dictated_address_and_path_are_written_out() -> None:
    read = plain_voice("the printer is at ten dot twelve dot three dot forty full stop the "
                       "queue is on printhost dot school dot lan slash staff full stop")
    assert "10.12.3.40" in read and "printhost.school.lan/staff" in read, read


def test_the_judge_reads_a_dictated_address_as_the_writer_said_it() -> None:
    said = ("the printer is at ten dot twelve dot three dot forty full stop the queue is on "
            "printhost dot school dot lan full stop")
    assert unsupported_text("Printer", "The queue is on printhost.school.lan at 10.12.3.40.",
                            said, "Where is the printer?") == []


# -- house settings and permissions --------------------------------------------------------------

@pytest.mark.parametrize(("comment", "kept"), [
    ("The proxy on all our tills is automatic. Nobody types an address by hand.",
     "The proxy on all our tills is automatic."),
    ("Card readers are UTC everywhere. Receipts print local time.",
     "Card readers are UTC everywhere."),
    ("Minimum PIN is 6 digits. Passphrases of four or more random words are fine.",
     "Passphrases of four or more random words are fine."),
])
def test_a_house_setting_or_permission_is_kept(role: LocalActionability, comment: str,
                                               kept: str) -> None:
    ok, body = _read(role, "How should the tills be set up?", comment,
                     answer="Set the proxy by hand and keep the clock in UTC; passwords "
                            "need symbols.")
    assert ok and kept in body, body


def test_that_is_fine_is_still_no_permission(role: LocalActionability) -> None:
    ok, body = _read(role, "How should the tills be set up?", "That's fine, thanks.",
                     rating="up")
    assert not ok, body


def test_a_house_spelling_rule_is_no_request_about_the_answer(role: LocalActionability) -> None:
    ok, body = _read(role, "How do I write micrograms on a label?",
                     "Write mcg in full on every dispensing label, because µg is misread as mg.")
    assert ok and "Write mcg in full" in body, body


# -- look-alikes -------------------------------------------------------------------------------

@pytest.mark.parametrize(("query", "comment"), [
    ("Which till software should we buy?",
     "Square still garbles the stock export and Lightspeed freezes on anything over 500 lines. "
     "Why is every till app this bad at exports?"),
    ("Is the new oven profile faster?",
     "Bake test: 41 min with the new profile, 43 min with the old one, 2 runs each. Is that "
     "just noise?"),
    ("How do I export the stock list?", "Will try this on the back-office PC tomorrow and see "
     "whether it beats the CSV we use now."),
    ("How do I export the stock list?", "https://support.example.com/stock-export"),
    ("What does proofing mean?", "typo: 'prooving' in the second sentence should be "
     "'proving'. otherwise fine."),
])
def test_look_alikes_are_no_correction(role: LocalActionability, query: str,
                                       comment: str) -> None:
    ok, body = _read(role, query, comment)
    assert not ok, body


def test_a_wrong_name_in_quotes_is_still_a_correction(role: LocalActionability) -> None:
    ok, body = _read(role, "Which share holds the recipes?",
                     "The share is 'bakes02', not 'bakes20'; bakes20 is the old one.",
                     answer="Recipes are on the bakes20 share.")
    assert ok and "bakes02" in body, body


# -- a statement scrapped and said again after a dash; a note copied in quote marks -----------

def test_what_follows_the_dash_after_a_scrap_stays(role: LocalActionability) -> None:
    ok, body = _read(role, "Where do till receipts go at night?",
                     "Receipts can stay in the drawer for up to a week. Actually scrap that, I "
                     "checked with Ola and it's not a week - they have to go to the office safe "
                     "the same evening and be logged in the cash book.")
    assert ok and "office safe the same evening" in body, body
    assert "up to a week" not in body, body


def test_a_copied_note_in_quote_marks_is_the_writers_own(role: LocalActionability) -> None:
    ok, body = _read(role, "How do I change the oven timer to 12-hour?",
                     "(copying the laminated card stuck on the bakehouse oven)\n>> TIMERS: "
                     "24-hour ONLY on all ovens - bake sheets use 24h.\n>> Never change the "
                     "clock by hand.")
    assert ok and "24-hour" in body and "Never change the clock by hand" in body, body


def test_a_quoted_reply_line_still_goes(role: LocalActionability) -> None:
    ok, body = _read(role, "How do I change the oven timer?",
                     "> you can change it in Settings > Timer\n\nNot on ours: the deck oven "
                     "timers are locked by the engineer, ring Bakeserve on 0161 555 0199.")
    assert ok and "you can change it in Settings" not in body, body


def test_a_cause_the_next_sentence_points_back_at_stays(role: LocalActionability) -> None:
    ok, body = _read(role, "Why can't the lab tablet reach the LIMS?",
                     "LAB-220 resolved.\nCause: a tech connected from the guest Wi-Fi "
                     "(10.60.0.0/16). That range is not allowed into the LIMS, on purpose.\n"
                     "Note: the LIMS is reached only over the lab VPN.")
    assert ok and "10.60.0.0/16" in body, body


def test_a_no_after_a_dash_is_read_too() -> None:
    read = layout.quoted_question_answered("> Do we set the till clock by hand?\nNo - it "
                                           "syncs from the back office at 06:00.")
    assert read.startswith("We do not set the till clock by hand. It syncs"), read


@pytest.mark.parametrize(("query", "comment"), [
    ("Why does the card reader drop out?", "this is what I get on TILL-2:\nMar 03 10:14:02 "
     "till-2 pcscd[611]: <warn> reader removed\nMar 03 10:14:05 till-2 pcscd[611]: <info> "
     "reader added"),
    ("What is a colour profile?", "Small thing: you spell grey the American way. Doesn't "
     "matter, just noticed."),
    ("Which editor should I use on the server?", "Honestly I'd always tell beginners to use "
     "micro rather than emacs, much gentler."),
])
def test_more_look_alikes_are_no_correction(role: LocalActionability, query: str,
                                            comment: str) -> None:
    ok, body = _read(role, query, comment, rating="")
    assert not ok, body


def test_what_we_see_with_a_rule_beside_it_is_a_correction(role: LocalActionability) -> None:
    ok, body = _read(role, "Which editor should I use on the server?",
                     "Here's what we do: nano is the only editor installed on the web servers, "
                     "and vim must not be added.")
    assert ok and "Nano is the only editor installed" in body, body


def test_a_file_announced_before_its_prompt_keeps_its_name(role: LocalActionability) -> None:
    ok, body = _read(role, "How do the tills find the print server?",
                     "This is what goes on every till, nothing else:\n\n$ cat "
                     "/etc/cups/client.conf\nServerName print01.shop.lan:631\n\nLeave the local "
                     "queues empty.")
    assert ok and "/etc/cups/client.conf: `ServerName print01.shop.lan:631`" in body, body


def test_a_command_run_at_a_prompt_is_still_not_a_file_shown() -> None:
    text = "Run this first:\n$ systemctl restart cups\nJob for cups.service ok\n"
    assert layout.shown_file_read(text) == text


def test_a_file_announced_keeps_the_case_of_its_lines(role: LocalActionability) -> None:
    ok, body = _read(role, "How do I give someone sudo?",
                     "we don't use the sudo group. this is what's on every box:\n\n$ cat "
                     "/etc/sudoers.d/20-shop-admins\n%shop-admins ALL=(ALL:ALL) ALL\n\n"
                     "membership of shop-admins is granted by Ola only.")
    assert ok and "%shop-admins ALL=(ALL:ALL) ALL" in body, body


def test_a_step_that_shows_a_file_keeps_its_command(role: LocalActionability) -> None:
    ok, body = _read(role, "Which build is my till on?",
                     "For tickets we need the till build. Run this and paste it:\n$ cat "
                     "/etc/till-release\nTILL_BUILD = 7.2\n\nAnything below 7.0 is reimaged.")
    assert ok and "/etc/till-release" in body, body


# -- the judge sees a negation the nugget lost ---------------------------------------------------

def test_the_judge_flags_a_rule_published_without_its_dont() -> None:
    from optimizer.fidelity import negation_lost, stale_claims
    feedback = ("DO: sterilise handpieces in the Lisa cycle.\nDON'T: oil handpieces by hand "
                "before the cycle.")
    body = "Sterilise handpieces in the Lisa cycle. Oil handpieces by hand before the cycle."
    assert negation_lost(body, feedback) == ["Oil handpieces by hand before the cycle."]
    assert any("negation is lost" in s for s in stale_claims(
        "Handpieces", body, "Oil them first.", [], feedback))


@pytest.mark.parametrize(("body", "feedback"), [
    ("Don't oil handpieces by hand before the cycle.",
     "DON'T: oil handpieces by hand before the cycle."),
    ("We run apt-cacher-ng on the depot server.",
     "Not approx, we run apt-cacher-ng on the depot server."),
    ("Choose the certificate, it's depot-ca.crt, from the portal.",
     "Tick the box - no, wait, don't - choose the certificate, it's depot-ca.crt, from the "
     "portal."),
])
def test_the_judge_leaves_a_kept_or_unrelated_negation_alone(body: str, feedback: str) -> None:
    from optimizer.fidelity import negation_lost
    assert negation_lost(body, feedback) == []
