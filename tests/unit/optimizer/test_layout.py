"""Tables and configuration snippets read as statements (cases written for this test:
a biology lab's freezers, a print server, a backup tool; no benchmark wording)."""

from __future__ import annotations

import pytest

from optimizer.local.layout import (
    aligned_tables_as_pipes,
    arrows_as_values,
    banner_removed,
    bare_answer_as_subject,
    chat_as_lines,
    checkmarks_as_statements,
    code_comments_as_text,
    config_as_statements,
    diff_as_lines,
    fragment_questions_as_conditions,
    genre_header_removed,
    headings_as_labels,
    learned_fact_unframed,
    minutes_as_decisions,
    minutes_residue_removed,
    qa_pairs_as_statements,
    quiz_key_read,
    reminder_question_as_statement,
    restated_code_removed,
    states_pairs,
    strip_line_labels,
    struck_through_removed,
    tables_as_statements,
)


def test_each_table_row_becomes_one_statement_with_its_column_names() -> None:
    text = ("Freezer limits from the lab manual:\n"
            "| freezer | alarm | call facilities |\n"
            "|:--|--:|---|\n"
            "| FZ-80-A | -70 °C | -60 °C |\n"
            "| FZ-20-B | -15 °C | -10 °C |\n"
            "Both are checked at 08:00.")
    assert tables_as_statements(text).splitlines() == [
        "FZ-80-A: alarm = -70 °C, call facilities = -60 °C.",
        "FZ-20-B: alarm = -15 °C, call facilities = -10 °C.",
        "Both are checked at 08:00."]


def test_a_tracker_table_and_a_value_column_read_plainly() -> None:
    text = "||queue||value||\n|lab-colour|duplex off|\n|lab-mono|A3 allowed|"
    assert tables_as_statements(text) == "lab-colour: duplex off.\nlab-mono: A3 allowed."


def test_a_single_row_or_prose_with_pipes_is_left_alone() -> None:
    text = "Use `grep foo | sort` here.\n| only | one row |"
    assert tables_as_statements(text) == text


def test_config_lines_under_their_section_become_one_statement() -> None:
    text = ("The retention is in the job file:\n[nightly-home]\nkeep_daily = 10\n"
            "keep_weekly = 6\ncompression = zstd\nRestores go through the service desk.")
    assert config_as_statements(text).splitlines() == [
        "nightly-home: keep_daily = 10, keep_weekly = 6, compression = zstd.",
        "Restores go through the service desk."]


def test_yaml_pairs_and_a_mapping_name() -> None:
    text = "cupsd:\n  max_jobs: 500\n  preserve_job_history: false\n"
    assert config_as_statements(text) == \
        "cupsd: max_jobs = 500, preserve_job_history = false."


def test_prose_with_colons_and_a_lone_pair_are_not_config() -> None:
    text = ("note: the vendor changed the firmware last spring, so the old trick no longer "
            "works\nreason: nobody asked them to\nport: 631")
    assert config_as_statements(text) == text
    assert states_pairs("warn = 5 min, page = 30 min.")
    assert not states_pairs("the limit is 5 = too low")


def test_a_pasted_chat_log_reads_as_the_lines_people_wrote() -> None:
    log = ("[14:02] dana: which gate do the night buses leave from?\n"
           "14:03 Ravi K: gate 6 since the works started\n"
           "ravi [14:03]: not gate 2\n"
           "<dana> ta")
    assert chat_as_lines(log).splitlines() == [
        "which gate do the night buses leave from?", "gate 6 since the works started",
        "not gate 2", "ta"]
    one = "[14:02] the backup ran at 14:02: fine"
    assert chat_as_lines(one) == one  # one time-stamped line is not a chat log


def test_an_identifier_alone_as_the_first_sentence_labels_the_next() -> None:
    assert bare_answer_as_subject("logrotate_v2. Rotates weekly, keeps 8.") == \
        "logrotate_v2: Rotates weekly, keeps 8."
    assert bare_answer_as_subject("Nope. It rotates weekly.") == "Nope. It rotates weekly."
    assert bare_answer_as_subject("Cron. It rotates weekly.") == "Cron. It rotates weekly."


def test_a_diff_leaves_the_lines_it_adds_and_a_bullet_list_is_not_a_diff() -> None:
    text = "For the print server, our override is:\n--- a/cupsd.conf\n+++ b/cupsd.conf\n" \
        "@@ -1,2 +1,2 @@\n-MaxJobs 500\n+MaxJobs 200\n-LogLevel warn\n+LogLevel debug"
    assert diff_as_lines(text).splitlines() == [
        "For the print server, MaxJobs = 200.", "For the print server, LogLevel = debug."]
    bullets = "- restart cups\n- MaxJobs 500 is fine\n+ one more thing"
    assert diff_as_lines(bullets) == bullets  # "+ one" replaces no "-" line with its key
    scoped = "On the lab printers, the drop-in says:\n- Timeout 300\n+ Timeout 60"
    assert diff_as_lines(scoped) == "On the lab printers, Timeout = 60."


def test_check_marks_say_allowed_and_not_allowed_and_an_arrow_leaves_its_target() -> None:
    text = "Visitor badges:\n✅ ground floor\n✔ canteen\n❌ labs\n🚫 server room"
    assert checkmarks_as_statements(text).splitlines() == [
        "Allowed: ground floor, canteen.", "Not allowed: labs, server room."]
    assert checkmarks_as_statements("✅ done") == "✅ done"  # one mark is not a list
    assert arrows_as_values("Quota 50G → 80G from May, retries 3 -> 5") == \
        "Quota 80G from May, retries 5"
    assert arrows_as_values("go to Settings -> Privacy") == "go to Settings -> Privacy"


def test_labels_of_reviews_answers_and_reports_go_and_what_they_introduce_stays() -> None:
    text = "nitpick: tabs, not spaces\nTL;DR: the mirror is apt.corp\nRoot cause: DNS\n" \
        "Owner: Priya\nDecision: kiosks reboot at 04:00\nFix: pg_dump runs at 02:00"
    # (the line's first plain word takes a capital; a command keeps its case)
    assert strip_line_labels(text).splitlines() == [
        "Tabs, not spaces", "The mirror is apt.corp", "DNS", "Owner: Priya",
        "Kiosks reboot at 04:00", "pg_dump runs at 02:00"]


def test_a_heading_goes_in_parentheses_after_the_first_line_under_it() -> None:
    text = ("## Pool cars\n- Keys are in the blue box at reception.\n- Book a day ahead.\n\n"
            "### Vans ###\nThe van needs a C1 licence!")
    assert headings_as_labels(text) == (
        "- Keys are in the blue box at reception (Pool cars).\n- Book a day ahead.\n\n"
        "The van needs a C1 licence (Vans)!")
    assert headings_as_labels("Plain text\n#hashtag not a heading") == \
        "Plain text\n#hashtag not a heading"
    assert headings_as_labels("Notes\n## Nothing under me") == "Notes\nNothing under me"


@pytest.mark.parametrize(("text", "expected"), [
    ("[Phone transcript 01:12] the gate code is 5521", "the gate code is 5521"),
    ("[Machine translated from Dutch]\nThe canteen closes at 14:00.",
     "The canteen closes at 14:00."),
    ("[Unit]\nDescription=backup\n[Service]\nExecStart=/usr/bin/bk", None),
    ("[x] VPN on\n[ ] Wi-Fi off", None),
    ("Inside a message a note stays: not a shared [inaudible] login", None),
    ("no banner here [options]", None),
])
def test_a_bracketed_banner_that_opens_the_message_goes(text: str,
                                                        expected: str | None) -> None:
    assert banner_removed(text) == (text if expected is None else expected)


@pytest.mark.parametrize(("text", "kept"), [
    ("The loading dock closes at ~~17:00~~ 18:30 on weekdays.",
     "The loading dock closes at 18:30 on weekdays."),
    ("Quota is <del>20 GB</del> 50 GB per student.", "Quota is 50 GB per student."),
    ("Use ~~Thunderbird~~ Evolution for the shared calendar.",
     "Use Evolution for the shared calendar."),
    ("a ~ b ~ c stays", "a ~ b ~ c stays"),
])
def test_struck_through_words_are_the_value_replaced(text: str, kept: str) -> None:
    assert struck_through_removed(text) == kept


def test_a_runbook_edited_as_a_diff_keeps_only_the_added_lines() -> None:
    text = ("Cold-store checklist, revised after the audit:\n"
            "- 1. log the temperature once per shift\n"
            "+ 1. log the temperature every 2 hours on form CS-4\n"
            "+ 2. if it reads above -18 °C, move stock to CS-B and call ext. 5521\n"
            "- 2. tell the supervisor at the end of the shift")
    assert diff_as_lines(text).splitlines() == [
        "Cold-store checklist, revised after the audit:",
        "1. log the temperature every 2 hours on form CS-4",
        "2. if it reads above -18 °C, move stock to CS-B and call ext. 5521"]


def test_a_list_of_dash_bullets_is_not_a_diff() -> None:
    text = "Before you leave:\n- lock bay 3\n- switch off the forklift charger\n- sign out"
    assert diff_as_lines(text) == text


def test_sql_comments_read_as_text_and_a_prose_double_dash_stays() -> None:
    text = ("-- NB: the archive job runs at 04:10, not at midnight\n"
            "SELECT pg_switch_wal(); -- forces the segment out first\n"
            "Old files -- edit: older than 14 days -- get deleted.")
    assert code_comments_as_text(text).splitlines() == [
        "NB: the archive job runs at 04:10, not at midnight",
        "SELECT pg_switch_wal() (forces the segment out first)",
        "Old files -- edit: older than 14 days -- get deleted."]


def test_a_named_argument_arrow_inside_a_call_is_code() -> None:
    line = "SELECT * FROM make_report(region => 'north');"
    assert arrows_as_values(line) == line


def test_minutes_keep_what_was_decided_and_drop_who_came_and_who_does_what() -> None:
    text = ("Warehouse safety committee, minutes of 3 March\n"
            "Attendees: Ravi, Olu, Petra\n"
            "Apologies: Jan\n"
            "1. Canteen menu - unchanged.\n"
            "2. Forklifts. Decision: only staff with the FLT-2 card may drive the reach "
            "trucks. Action Petra: print the new card list.\n"
            "3. Any other business: parking.\n"
            "NOTE: the FLT-2 course runs every second Tuesday.")
    assert minutes_as_decisions(text).splitlines() == [
        "only staff with the FLT-2 card may drive the reach trucks.",
        "NOTE: the FLT-2 course runs every second Tuesday."]


def test_a_message_with_a_decision_word_but_no_minutes_is_left_alone() -> None:
    text = "We agreed: backups run at 02:00.\n1. Check the tape.\n2. Label it."
    assert minutes_as_decisions(text) == text


def test_self_answered_questions_keep_what_was_asked() -> None:
    text = ("Q: when does my parking permit run out? A: on 31 August, every year. "
            "Q: is the east car park included? A: no. Only bays 1-40 on the west side.")
    assert qa_pairs_as_statements(text) == (
        "When does your parking permit run out: on 31 August, every year. "
        "no (is the east car park included). Only bays 1-40 on the west side.")


def test_a_message_without_q_and_a_labels_is_left_alone() -> None:
    text = "A: the old value. Q was the queue name. Bay 3 is closed."
    assert qa_pairs_as_statements(text) == text


def test_a_question_that_reminds_states_its_clause() -> None:
    """Written for this test (a city bike-share depot)."""
    assert reminder_question_as_statement(
        "Didn't anyone tell you that e-bikes charge only in bay C? Bay A has no sockets."
    ) == "E-bikes charge only in bay C. Bay A has no sockets."
    assert reminder_question_as_statement(
        "Has nobody noticed the depot gate code changes every Monday?"
    ) == "The depot gate code changes every Monday."
    for asking in ("Didn't anyone say why the dock at Pier 3 is offline?",
                   "Did you see the match last night?", "Hasn't anyone checked?"):
        assert reminder_question_as_statement(asking) == asking


@pytest.mark.parametrize(("message", "kept"), [
    # a system's name before the ticket id; the document's own code after its kind
    ("Servicedesk PLT-5512 — Resolution notes (closed by M. Osei)\nForklift keys are signed "
     "out at the gatehouse.", "Forklift keys are signed out at the gatehouse."),
    ("Safety review SR-2025-07 (summary)\nFinding: a driver reversed without a banksman.\n"
     "Decision: reversing needs a banksman in yard B.",
     "Finding: a driver reversed without a banksman.\nDecision: reversing needs a banksman "
     "in yard B."),
    # a forwarded text: who it is from goes, its quoted words are the text
    ("Fwd WhatsApp from Bogdan (night shift): 'the dock doors lock at 23:00, we open them "
     "from the cabin'", "the dock doors lock at 23:00, we open them from the cabin"),
    # when a sender's rules take effect stays, without the bracket or the list's first mark
    ("MEMO from Ana Lima, Depot Manager (effective 3 March)\n• Hi-vis is worn in the yard."
     "\n• Visitors sign in.", "Effective 3 March: Hi-vis is worn in the yard.\n• Visitors "
     "sign in."),
])
def test_a_documents_header_goes_and_its_text_stays(message: str, kept: str) -> None:
    assert genre_header_removed(message) == kept


def test_a_records_holder_and_an_action_bullet_go_and_its_findings_stay() -> None:
    record = "Finding: pallets blocked exit 4.\nDecision: exits stay clear.\nOwner: J. Ruiz"
    assert minutes_residue_removed(record) == \
        "Finding: pallets blocked exit 4.\nDecision: exits stay clear."
    minutes = "Yard meeting 04/02:\n- Pallets go in bay 7.\n- Action: Tomas to paint bay 7."
    assert minutes_residue_removed(minutes) == "Yard meeting 04/02:\n- Pallets go in bay 7."
    # (an owner line outside a record may be the fact: who owns a thing)
    assert minutes_residue_removed("Scales are calibrated monthly.\nOwner: QA lab") == \
        "Scales are calibrated monthly.\nOwner: QA lab"


@pytest.mark.parametrize(("message", "fact"), [
    ("tell them we don't lend the ladders, the hire desk does.",
     "We don't lend the ladders, the hire desk does."),
    ("If anyone asks, just tell people that the canteen closes at 14:30.",
     "The canteen closes at 14:30."),
    # an order to tell someone named is an order of its own
    ("Tell the duty manager before you open the loading bay.",
     "Tell the duty manager before you open the loading bay."),
])
def test_what_the_writer_asks_to_pass_on_is_said_as_the_fact(message: str, fact: str) -> None:
    assert learned_fact_unframed(message) == fact


def test_a_row_whose_cell_says_what_the_first_does_is_one_sentence() -> None:
    text = ("| Radio call | Meaning |\n|---|---|\n| Code Amber | means the yard is closed |\n"
            "| Code Blue | calls first aid to gate 2 |\n| Channel 4 | yes |")
    assert tables_as_statements(text).splitlines() == [
        "Code Amber means the yard is closed.", "Code Blue calls first aid to gate 2.",
        "Channel 4: Meaning = yes."]


def test_a_code_block_said_again_in_words_gives_way_to_the_words() -> None:
    text = ("Our kiosks get this:\n\n```ini\n[kiosk]\nidle_logout = 300\n```\n\n"
            "in other words, kiosks log out after 5 minutes idle.")
    assert restated_code_removed(text) == \
        "Our kiosks get this:\n\nKiosks log out after 5 minutes idle."
    shown = "Set this:\n```\nidle_logout = 300\n```\nThen reboot."  # not said again
    assert restated_code_removed(shown) == shown


def test_a_code_block_shown_as_an_example_goes_with_the_sentence_showing_it() -> None:
    text = ("Tills take their address from the router. For example, this is what till 3 "
            "gets:\n\n```\nlease 192.168.8.43 {\n  binding state active;\n}\n```\n\n"
            "Leases last 12 hours.")
    assert restated_code_removed(text).split() == (
        "Tills take their address from the router. Leases last 12 hours.").split()
    # the house's own lines are no example
    ours = "Our lease line looks like this:\n\n```\nlease 192.168.8.0/24 12h;\n```\n"
    assert restated_code_removed(ours) == ours


def test_a_command_opening_a_line_keeps_its_case_and_an_order_to_them_stays() -> None:
    assert strip_line_labels("Cause: passwd -l only blocks passwords.\nFix: catalog.taxa "
                             "is indexed.") == "passwd -l only blocks passwords.\n" \
        "catalog.taxa is indexed."
    assert learned_fact_unframed("tell them to use the side door.") == \
        "tell them to use the side door."


def test_an_aside_opening_the_message_goes_before_a_lower_case_word_unless_it_bounds() -> None:
    from optimizer.local.layout import leading_asides_removed
    assert leading_asides_removed("(voice note) hi it's Dara. saws are locked at 17:00.") == \
        "hi it's Dara. saws are locked at 17:00."
    assert leading_asides_removed("(since March) saws are locked at 17:00.") == \
        "(since March) saws are locked at 17:00."


def test_how_the_message_was_written_goes_from_its_start() -> None:
    from optimizer.local.layout import leading_asides_removed
    assert leading_asides_removed("this is dictated sorry for typos. in the cold store the "
                                  "door alarm goes after 90 seconds.") == \
        "in the cold store the door alarm goes after 90 seconds."
    assert leading_asides_removed("Written rule: gloves in the cold store.") == \
        "Written rule: gloves in the cold store."


def test_a_boxed_label_reads_as_its_lines() -> None:
    from optimizer.local.layout import boxed_lines_unboxed
    text = ("+--------------------------+\n"
            "| COLD STORE 2             |\n"
            "| ALARM: -15 C             |\n"
            "|                          |\n"
            "| CALL: facilities ext 220 |\n"
            "+--------------------------+\n"
            "that sticker is on the door.")
    assert boxed_lines_unboxed(text) == \
        "COLD STORE 2\nALARM: -15 C\nCALL: facilities ext 220\nthat sticker is on the door."
    table = "| site | door |\n|---|---|\n| A | 3 |"  # a table is no box
    assert boxed_lines_unboxed(table) == table


def test_a_table_drawn_with_spaces_and_a_dashed_rule_reads_row_by_row() -> None:
    text = ("Copied from the ops board:\n\n"
            "mill       dryer host            alarm phone\n"
            "--------   -------------------   -----------\n"
            "Westmoor   dry-west.grain.lan    0161 555 0101\n"
            "Kettle Hill dry-kh.grain.lan     0161 555 0102\n")
    # (the last row's name runs into the next column: that row is no row of the table)
    out = tables_as_statements(aligned_tables_as_pipes(text))
    assert out.splitlines()[0] == (
        "Westmoor: dryer host = dry-west.grain.lan, alarm phone = 0161 555 0101.")
    assert "Kettle Hill dry-kh.grain.lan" in out
    assert "Copied from the ops board" not in out


def test_dashes_that_underline_no_columns_are_left_alone() -> None:
    text = "Rules below\n-- --\nwear boots"
    assert aligned_tables_as_pipes(text) == text
    assert aligned_tables_as_pipes("a|b\n--- ---\nc d") == "a|b\n--- ---\nc d"


def test_a_fragment_asked_and_answered_with_what_to_do_is_a_condition() -> None:
    assert fragment_questions_as_conditions(
        "The grinder guard stays on - jammed? switch off at the wall") == (
        "The grinder guard stays on. If jammed, switch off at the wall")
    assert fragment_questions_as_conditions("Labels print on the Zebra. out of ribbon? ask "
                                            "stores") == (
        "Labels print on the Zebra. If out of ribbon, ask stores")
    # a real question, and a file name before a question mark, stay as they are
    for text in ("Is that normal? I think so.", "settings go in local.conf? yes they do",
                 "We use v16 - right? yes"):
        assert fragment_questions_as_conditions(text) == text


def test_an_answer_key_reads_as_its_answers() -> None:
    text = ("Answer key for the forklift refresher, Q3: pallets over 800 kg go to bay 4. "
            "Q4: the reach truck is never used in the yard.")
    assert quiz_key_read(text) == ("Pallets over 800 kg go to bay 4. The reach truck is never "
                                   "used in the yard.")
    assert quiz_key_read("Q3: what goes to bay 4?") == "Q3: what goes to bay 4?"
