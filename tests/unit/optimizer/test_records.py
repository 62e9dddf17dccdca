"""Records pasted as they are filed (audit findings, change requests, work instructions,
checklists) read for the rules they carry: the line that names the document, the
record's bookkeeping and the observation before a requirement go; the rules stay.

Written after the rule, in trades the benchmarks do not have (a bakery chain's food-safety
audit, a ferry port's change record, a brewery's project note, a hospital pharmacy's work
instruction, a warehouse's incident note).
"""

from __future__ import annotations

import pytest

from optimizer.accounting import Meter
from optimizer.fidelity import conversational_text, fact_coverage
from optimizer.local.actionability import LocalActionability
from optimizer.local.layout import records_read
from optimizer.types import FeedbackContext
from query.embeddings import MiniLMEmbedder

AUDIT = (
    "FOOD SAFETY AUDIT FS-2025-11 (Northgate Bakeries, site visit)\n"
    "Observation: two probe thermometers at the Dock Road bakery had not been calibrated "
    "since March.\n"
    "Risk rating: High\n"
    "Corrective action (owner: Dana Okafor, QA manager): probe thermometers are calibrated "
    "every 30 days against the ice-point check and logged in QA-LOG-7.\n"
    "Status: open")

CHANGE = (
    "CHG-7781 - Gate barrier controllers\n"
    "Change: the barrier controllers at gates 3 and 4 run firmware BX-2.4.\n"
    "Approver: L. Moreau\n"
    "Rollback plan: reflash BX-2.1 from the service laptop\n"
    "Risk: Medium")

WORK_INSTRUCTION = (
    "From WI-PH-207 'Controlled drug cupboard', section 3:\n"
    "3.1 The CD cupboard key stays with the nurse in charge.\n"
    "3.2 Two registered staff sign every CD register entry.\n"
    "3.3 Ward stock is counted every Sunday night.")


def test_an_audit_finding_keeps_its_corrective_action_only() -> None:
    read = records_read(AUDIT)
    assert read == ("Probe thermometers are calibrated every 30 days against the ice-point "
                    "check and logged in QA-LOG-7."), read


def test_a_change_record_loses_its_header_and_bookkeeping() -> None:
    read = records_read(CHANGE)
    assert "CHG-7781" not in read and "Approver" not in read and "Risk" not in read, read
    assert "Rollback" not in read, read
    assert "The barrier controllers at gates 3 and 4 run firmware BX-2.4." in read, read


def test_a_work_instruction_loses_its_source_line_and_clause_numbers() -> None:
    assert records_read(WORK_INSTRUCTION).split("\n") == [
        "The CD cupboard key stays with the nurse in charge.",
        "Two registered staff sign every CD register entry.",
        "Ward stock is counted every Sunday night."]


@pytest.mark.parametrize(("text", "first"), [
    # an id alone labels the rule: the id goes, the rule stays
    ("PRJ-0042 (signed off 3/5): Store hop pellets at 2-4 °C in cold room B.\n"
     "Scope: all three brewhouses.\nOwner: K. Lind", "Store hop pellets at 2-4 °C in cold room B."),
    # an id over a title, then the record: the title goes
    ("DEC-12: Forklift charging\nDecision: forklifts charge only in bay C overnight.\n"
     "Status: agreed\nOwner: shift lead", "Forklifts charge only in bay C overnight."),
])
def test_an_id_before_a_colon_goes_and_a_rule_after_it_stays(text: str, first: str) -> None:
    # (a word the vocabulary lacks keeps its case: "forklifts" is no "passwd" to it)
    assert records_read(text).split("\n")[0].lower() == first.lower()


@pytest.mark.parametrize("text", [
    # a header that names what the lines are about is no document's name
    "Printer PRN-204 (Finance):\n- duplex only\n- A3 paper in tray 2",
    # a record that asks for nothing keeps what it saw
    "Incident note INC-33\nFinding: the bay 6 scanner drops Wi-Fi when the shutter is down.\n"
    "Workaround: scan at bay 5 until the access point moves.",
    # prose with one label is no record
    "The loading dock opens at 05:30.\nNote: the side gate stays shut.\nAsk security for keys.",
])
def test_what_is_not_a_filed_record_keeps_its_lines(text: str) -> None:
    kept = records_read(text)
    assert "the bay 6 scanner" in kept or "PRN-204" in kept or "05:30" in kept, kept
    if "INC-33" in text:
        assert "scanner drops Wi-Fi" in kept and "Workaround" in kept, kept
    if "PRN-204" in text:
        assert kept == text


@pytest.fixture(scope="module")
def role(embedder: MiniLMEmbedder) -> LocalActionability:
    return LocalActionability(embedder)


@pytest.mark.parametrize(("query", "answer", "comment", "facts", "residue"), [
    ("How often do we calibrate the probe thermometers?",
     "Calibrate thermometers once a year.", AUDIT,
     ("Probe thermometers are calibrated every 30 days against the ice-point check.",
      "Probe thermometer calibrations are logged in QA-LOG-7."),
     ("FS-2025-11", "Observation", "Risk", "Status", "Dana Okafor")),
    ("Who keeps the controlled drug cupboard key?",
     "The pharmacist keeps the key.", WORK_INSTRUCTION,
     ("The CD cupboard key stays with the nurse in charge.",
      "Two registered staff sign every CD register entry."),
     ("WI-PH-207", "3.1", "3.2", "section")),
    # a terse clause of a procedure: a policy verb and a tool's name
    ("Which time service do the ward workstations use?", "They use ntpd.",
     "From IT-SOP-31 'Ward workstations', section 2:\n2.1 Workstations use chronyd.\n"
     "2.2 The time servers are time1.ward.example and time2.ward.example.",
     ("Workstations use chronyd.",
      "The time servers are time1.ward.example and time2.ward.example."),
     # (the SOP and its section stay as the source: "(IT-SOP-31 section 2)")
     ("2.1", "section 2:", "'Ward workstations'")),
])
def test_a_pasted_record_becomes_a_nugget_of_its_rules(
        role: LocalActionability, query: str, answer: str, comment: str,
        facts: tuple[str, ...], residue: tuple[str, ...]) -> None:
    ex = role.extract(FeedbackContext("e1", "t", query, answer, comment, "down"), Meter())
    assert ex.can_produce_nugget, ex.reason
    text = f"{ex.title} {ex.body}"
    for fact in facts:
        assert fact_coverage(fact, text).covered, (fact, ex.body)
    for word in residue:
        assert word not in ex.body, (word, ex.body)
    assert not conversational_text(ex.title, ex.body), ex.body


def test_item_codes_of_agreed_actions_go_and_a_ticket_form_is_left_to_the_form_reader() -> None:
    read = records_read("Agreed actions:\nAC-1: Every pallet is scanned at the gate.\n"
                        "AC-2: Damaged pallets go to bay 9, never back to the racks.")
    assert read.split("\n")[1:] == ["Every pallet is scanned at the gate.",
                                    "Damaged pallets go to bay 9, never back to the racks."]
    ticket = ("TICKET: OPS-881\nTYPE: correction\nHOST: gate-pc-2\nRULE: the gate PC prints "
              "to ZB-GATE only\nSTATUS: closed")
    assert records_read(ticket) == ticket
    # a writer's sentence before the document's name keeps the line
    kept = "Good summary. From the review of INC-77, section 'What changed':\n- a\n- b"
    assert records_read(kept) == kept


def test_a_policy_keeps_its_code_as_the_source_of_its_first_rule() -> None:
    read = records_read("HARBOUR SAFETY NOTICE HSN-12 (mooring lines)\n"
                        "1. Mooring lines are inspected before every departure.\n"
                        "2. Frayed lines are cut up and binned, never stored.")
    assert read.split("\n") == [
        "1. Mooring lines are inspected before every departure (HSN-12).",
        "2. Frayed lines are cut up and binned, never stored."], read
    # a finding's id is its filing, not a source
    assert "QA-77" not in records_read("Audit finding QA-77 (stores)\nObservation: x was "
                                       "seen.\nRequirement: gloves are worn in the cold "
                                       "store.\nStatus: open")
    # a status that names the fix's version keeps it
    assert "2025.03.2" in records_read("Incident INC-9 summary\nSummary: kiosks rebooted.\n"
                                       "Action item: reboot at 02:00 is off.\n"
                                       "Status: done (image 2025.03.2)")


@pytest.mark.parametrize(("text", "read"), [
    # a controlled document's code, title and revision over its clauses
    ("LAB-QP-11 Sample Handling, rev 6\n"
     "2.1 Blood samples are spun within 30 minutes of arrival.\n"
     "2.2 Spun samples wait in fridge F2 until the 16:00 courier.\n"
     "That is why the 17:00 run is empty.",
     "Blood samples are spun within 30 minutes of arrival (LAB-QP-11).\n"
     "Spun samples wait in fridge F2 until the 16:00 courier.\n"
     "That is why the 17:00 run is empty."),
    # two lines: the citation with its section and version over the quoted text, whose
    # first number is the section's (the source goes inside the quotation marks)
    ("Per HR-POL-04 Leave Policy v2, section 5.1:\n"
     "\"5.1 Annual leave is booked in StaffHub at least 14 days ahead.\"",
     "\"Annual leave is booked in StaffHub at least 14 days ahead (HR-POL-04 section 5.1).\""),
])
def test_a_cited_document_line_goes_and_its_code_stays_as_the_source(text: str,
                                                                      read: str) -> None:
    assert records_read(text) == read


def test_a_notice_title_in_capitals_goes_and_a_notice_that_says_something_stays() -> None:
    from optimizer.local.layout import genre_header_removed
    assert genre_header_removed("MEMO — KILN ROOM\nThe kiln stays locked after 18:00.") == \
        "The kiln stays locked after 18:00."
    for kept in ("Notice: nobody opens the kiln after 18:00\nAsk Priya.",
                 "Notice - kiln closed 14:00 Fridays\nAsk Priya."):
        assert genre_header_removed(kept) == kept


def test_a_handover_keeps_its_standing_items_and_drops_this_shifts_state() -> None:
    from optimizer.local.layout import handover_status_removed
    text = ("Shift handover - ward 4, late to night\n"
            "- bed 6 discharge delayed, transport at 21:30\n"
            "- drugs fridge door sticky\n"
            "- nurses' station kiosk stays logged in as WARD4-KIOSK, never as a person\n"
            "- Ola")
    assert handover_status_removed(text).split("\n") == [
        "Shift handover - ward 4, late to night",
        "- nurses' station kiosk stays logged in as WARD4-KIOSK, never as a person",
        "- Ola"]
    # a list that is no handover keeps its items
    listed = "Kit list\n- two torches\n- spare batteries"
    assert handover_status_removed(listed) == listed


def test_a_handover_header_naming_who_and_when_and_the_shifts_events_go() -> None:
    from optimizer.local.layout import handover_status_removed
    text = ("HANDOVER 06:45 Sat - N. Osei to P. Varga\n"
            "- press 3 guard was jammed, cleared it, didn't log it\n"
            "- guards on every press stay closed while it runs, no exceptions\n"
            "- FYI since the bot got it wrong: offcuts go in the red skip. Ask Ben for a key.\n"
            "- forklift 2 still on charge")
    assert [ln for ln in handover_status_removed(text).split("\n") if ln] == [
        "- guards on every press stay closed while it runs, no exceptions",
        "- FYI since the bot got it wrong: offcuts go in the red skip. Ask Ben for a key."]
    inline = "Handover to nights (Ana -> Tom): the bake log is signed by the shift lead."
    assert handover_status_removed(inline) == "the bake log is signed by the shift lead."
