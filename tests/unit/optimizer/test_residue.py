"""Conversational residue on messages written for this test (a warehouse, a university
lab, a law firm, a city council: voices and topics no shipped benchmark has). The body
a knowledge owner would publish keeps every fact and none of the talk around it; the
evaluation's surface check (``conversational_text``) finds the talk when it is left in.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from optimizer.accounting import Meter
from optimizer.claims import plain_voice, restore_contractions, sentence_case, split_sentences
from optimizer.fidelity import (
    conversational_text,
    fact_coverage,
    stale_claims,
    unsupported_text,
)
from optimizer.local.actionability import LocalActionability, demonstrative_as_article
from optimizer.local.residue import (
    apply_self_corrections,
    residue,
    second_person,
    strip_residue,
)
from optimizer.local.titles import title_for, topic_of
from optimizer.types import FeedbackContext
from query.embeddings import MiniLMEmbedder


@dataclass(frozen=True)
class Message:
    query: str
    answer: str
    comment: str
    facts: tuple[str, ...]
    gone: tuple[str, ...]  # words of the talk that must not reach the body


MESSAGES = {
    "acknowledgement-then-rule": Message(
        "how many pallets can a forklift team move per shift",
        "There is no limit on pallets per shift.",
        "Appreciate the quick reply, but at the Leeds depot a team moves at most 40 pallets "
        "per shift because of the floor load rating.",
        ("At the Leeds depot a forklift team moves at most 40 pallets per shift.",),
        ("Appreciate", "reply")),
    "writers-story-around-the-fact": Message(
        "where do I book the confocal microscope",
        "Book it in the university room booking system.",
        "I wasted a whole morning on this last term. The confocal microscope is booked "
        "only through LabSlot (labslot.uni.example), and first-time users need a 2-hour "
        "induction with the imaging officer.",
        ("The confocal microscope is booked only through LabSlot.",
         "First-time users need a 2-hour induction with the imaging officer."),
        ("wasted", "morning", "I ")),
    "reported-by-a-colleague": Message(
        "when do the badge readers reset",
        "Badge readers reset at midnight.",
        "Our facilities manager told me that the badge readers on level 4 reset at 02:00, "
        "not at midnight.",
        ("The badge readers on level 4 reset at 02:00.",),
        ("told me", "facilities manager")),
    "label-before-the-fact": Message(
        "what is the VPN gateway address",
        "Connect to vpn.council.example.",
        "For anyone who finds this later: the gateway moved to gw2.council.example in "
        "March, the old name no longer resolves.",
        ("The VPN gateway moved to gw2.council.example.",),
        ("anyone who finds",)),
    "elliptical-reply-first": Message(
        "can we run the failover test on a weekday",
        "Yes, any weekday evening works.",
        "Not during the week. Failover tests on the case-management database run on "
        "Saturdays between 22:00 and 23:00, announced 5 days ahead.",
        ("Failover tests on the case-management database run on Saturdays between 22:00 "
         "and 23:00.",),
        ("Not during",)),
    "hedge-and-request-to-the-assistant": Message(
        "how big is the shared drive quota",
        "Each shared drive has 50 GB.",
        "I reckon most people never hit it, but shared drives get 200 GB each since the "
        "storage upgrade. Please stop recommending the 50 GB figure.",
        ("Shared drives get 200 GB each.",),
        ("reckon", "please")),
    "a team's story with its subject left out": Message(
        "docking station screens stay black",
        "Update the graphics driver.",
        "Back from the client site, swapped cables for an hour and kept blaming the "
        "monitors. It wasn't them; the docks in meeting rooms need firmware 1.4.2 or newer, "
        "which the service desk installs on request.",
        ("The docks in meeting rooms need firmware 1.4.2 or newer.",),
        ("swapped", "blaming", "client site", "wasn't them")),
    "how-we-found-out": Message(
        "who can approve a refund over 500 euros",
        "Any shift supervisor can approve it.",
        "We spent most of Monday on this with the finance team, and in the end it turns out "
        "refunds over 500 euros need the store manager's approval in TillOne.",
        ("Refunds over 500 euros need the store manager's approval in TillOne.",),
        ("spent", "Monday", "turns out")),
    "chat-style-without-apostrophes": Message(
        "is the gym open on bank holidays",
        "Yes, the staff gym is open every day.",
        "lol no thats outdated. since the refurb the staff gym is closed on bank holidays "
        "and opens 7-19 on weekdays only",
        ("The staff gym is closed on bank holidays.",
         "The staff gym opens 7-19 on weekdays only."),
        ("lol", "outdated")),
    "a bulleted list with topic labels": Message(
        "how do I replace a broken laptop charger",
        "Order one from the web shop.",
        "Hi all,\n- Broken chargers: swap them at the IT counter in B-104, no ticket needed\n"
        "- Spare chargers: the counter keeps 65 W USB-C ones only\n"
        "- Lost chargers cost 30 EUR, charged to the cost centre\nCheers,\nPriya",
        ("Broken chargers are swapped at the IT counter in B-104 without a ticket.",
         "The IT counter keeps only 65 W USB-C spare chargers.",
         "Lost chargers cost 30 EUR, charged to the cost centre."),
        ("Hi all", "Priya", "Cheers")),
    "stop-recommending-a-named-thing": Message(
        "how do I free space on the shared drive",
        "Run TreeSizer on S: and delete large files.",
        "Please stop telling people to run TreeSizer on S:. It scans for hours and locks "
        "files for everyone; the storage team cleans S: every quarter.",
        ("TreeSizer must not be run on S:.",
         "The storage team cleans S: every quarter."),
        ("Please",)),
    "a warning and what it cost the team": Message(
        "which account runs the audit export",
        "Run it with your own account.",
        "Careful here, this burned us during the spring audit. The audit export must run "
        "as svc-audit, never as a personal account.",
        ("The audit export must run as svc-audit, never as a personal account.",),
        ("Careful", "burned", "spring audit")),
    "agreeing-with-half-the-answer": Message(
        "can I use the standby for the morning report",
        "Yes, the standby is a copy of the primary.",
        "You're right that rpt-standby is a copy of the primary, but it replays changes 30 "
        "minutes late on purpose, so morning numbers are behind.",
        ("rpt-standby replays changes 30 minutes late on purpose.",),
        ("You're right", "right that")),
    "yes-then-a-noun-phrase": Message(
        "how do I load the supplier csv",
        "Use the import wizard.",
        "Yes the wizard works, but files over 50 MB time out there; the night loader on "
        "etl-02 takes anything bigger.",
        ("Files over 50 MB time out in the import wizard.",
         "The night loader on etl-02 takes files over 50 MB."),
        ("Yes the",)),
    "a teachers story with numbers and a signature": Message(
        "projector shows only my desktop background",
        "Drag the slides window onto the projector.",
        "OK so I tried this with 30 kids watching me and the projector kept showing my "
        "wallpaper 🙃. Mostly right, but here you pick Mirror in Settings > Displays, "
        "the room projectors are set up for mirroring only!! Call the AV desk, ext. 4410, "
        "if Mirror is missing.\n- Mr. Okafor (Maths)",
        ("Room projectors are set up for mirroring only; pick Mirror in Settings > "
         "Displays.", "If Mirror is missing, call the AV desk at extension 4410."),
        ("30 kids", "wallpaper", "Okafor", "Mostly right", "!!", "\U0001F643")),
    "tell-people-and-keys-that-end-in-a-dash": Message(
        "zoom the whole screen",
        "Use Ctrl and the scroll wheel.",
        "You keep telling people to use Ctrl+scroll, and every time they come to my desk. "
        "Tell people to use Alt+Super+8 to toggle zoom, and zoom out is Alt+Super+-",
        ("Alt+Super+8 toggles zoom.", "Zoom out is Alt+Super+-."),
        ("You keep telling", "my desk")),
    "thanks-then-an-easier-way": Message(
        "how do I see who edited a contract last",
        "Export the audit log and search it for the file name.",
        "Thanks, though there is a quicker way: the History tab of each matter in "
        "CaseBox shows every edit with the user and time.",
        ("The History tab of each matter in CaseBox shows every edit with the user and "
         "time.",),
        ("Thanks", "quicker way")),
    # Chat voices: emoji as punctuation, sarcasm, a colleague tagged in the thread.
    "emoji-ends-a-reply": Message(
        "when do the canteen tills close",
        "The tills close at 16:00 every day.",
        "nope \U0001F62C the canteen tills close at 14:30 on Fridays, 16:00 otherwise",
        ("The canteen tills close at 14:30 on Fridays.",
         "The canteen tills close at 16:00 on other days."),
        ("nope",)),
    "sarcasm-before-the-rule": Message(
        "can I restart the ticket server during the day",
        "Yes, restart tix-01 whenever it is slow.",
        "great plan, restart the ticket server at 9am, it's not like anyone sells tickets "
        "then \U0001F644 tix-01 is only restarted on Sundays at 06:00.",
        ("tix-01 is only restarted on Sundays at 06:00.",),
        ("great plan", "9am")),
    "a-colleague-tagged": Message(
        "who can use the level 3 lockers",
        "Anyone with a staff badge.",
        "lockers on level 3 are for contractors only. @Sam this is the one that caught you "
        "out last month :grimacing:",
        ("Lockers on level 3 are for contractors only.",),
        ("@sam", "caught you", ":grimacing:")),
    "the-assistant-as-subject": Message(
        "when are archive boxes collected",
        "Archive boxes are collected on request.",
        "Archive boxes are collected from the loading bay every Thursday at 10:00. The "
        "assistant should really know this by now.",
        ("Archive boxes are collected every Thursday at 10:00.",),
        ("assistant",)),
    # Sign-offs the message ends with.
    "closing-and-name-lines": Message(
        "where do damaged pallets go",
        "Leave them at the dock door.",
        "Damaged pallets go to quarantine bay Q2 and get a red tag.\n\nBest regards,\n"
        "Tomasz (Goods-in, Leeds)",
        ("Damaged pallets go to quarantine bay Q2.",),
        ("Tomasz", "regards", "Leeds")),
    "dash-and-titled-name": Message(
        "how long are blood samples kept",
        "Samples are discarded after 3 days.",
        "Blood samples are kept for 7 days in fridge F3 before disposal. — Dr. Amani, "
        "Pathology Lab",
        ("Blood samples are kept for 7 days in fridge F3.",),
        ("Amani", "Pathology Lab")),
    # The writer repairs a value.
    "a-value-repaired-in-passing": Message(
        "how often do locker codes reset",
        "Locker codes never reset.",
        "Locker codes reset every 7 days — sorry, 10 days — at midnight.",
        ("Locker codes reset every 10 days.",),
        ("7 days", "sorry")),
    "an-edit-note-at-the-end": Message(
        "how long are kiosk receipts archived",
        "Receipts are deleted after a week.",
        "Kiosk receipts are archived after 30 days and then purged.\nedit: 45 days, not 30",
        ("Kiosk receipts are archived after 45 days.",),
        ("30 days", "edit")),
    # Talk before a colon, a question answered by the writer, greetings and labels.
    "a-story-before-a-colon": Message(
        "do refunds need approval at the till",
        "No, any cashier can refund.",
        "My supervisor showed me on Tuesday: refunds over 50 EUR need a manager PIN at "
        "the till.",
        ("Refunds over 50 EUR need a manager PIN at the till.",),
        ("supervisor showed",)),
    "the-writer-answers-their-own-question": Message(
        "does quiet hours affect the tills",
        "Quiet Hours only affects phones.",
        "Doesn't Quiet Hours mute the tills too? It does \u2014 it silences every till "
        "speaker from 20:00.",
        ("Quiet Hours silences every till speaker from 20:00.",),
        ("it does",)),
    "greeting-wish-and-announcement": Message(
        "which bay takes heavy pallets",
        "Any bay can take heavy pallets.",
        "Hi team, hope you're all well! Quick one from stores \u2014 pallets over 800 kg go "
        "to bay 4 only.",
        ("Pallets over 800 kg go to bay 4 only.",),
        ("hope", "quick one", "hi team")),
    "markdown-emphasis": Message(
        "can the level 2 fire door be propped open",
        "Yes, during deliveries.",
        "- **never** prop the fire door on level 2, not even for deliveries",
        ("Never prop the fire door on level 2.",),
        ("**",)),
    "told-that-in-a-long-sentence": Message(
        "can I change the lock time on my council laptop",
        "Yes, under Settings.",
        "Having tried twice, I was at length informed by a courteous officer from the "
        "service desk that the lock time on council laptops is fixed at ten minutes.",
        ("The lock time on council laptops is fixed at ten minutes.",),
        ("informed", "having tried")),
    # Mail: a forwarded thread below the reply, a name alone on the last line.
    "a-reply-above-a-forwarded-thread": Message(
        "reload the intranet after a theme change",
        "Run systemctl restart lighttpd on intra-01.",
        "Quick correction to what the assistant told Priya below: intra-01 runs Caddy, "
        "not lighttpd. Run `systemctl reload caddy` instead.\n\nMarek\n\n"
        "---------- Forwarded message ---------\nFrom: Priya <priya@example.org>\n"
        "Date: Tue, 4 Feb, 10:12\nSubject: theme\n\nHi Marek, the assistant says restart "
        "lighttpd. We'd like the new logo live by Thursday 08:00.\n"
        "> From: Comms <comms@example.org>\n> Can the logo change please?",
        ("intra-01 runs Caddy, not lighttpd.",),
        ("Marek", "Thursday", "Priya", "logo", "10:12")),
    "an-edit-note-with-a-range": Message(
        "when can I schedule the payroll export",
        "Any time except midnight.",
        "Nothing may be scheduled on pay-01 between 01:00 and 04:00, that's the payroll "
        "run.\n\nedit: the payroll window is 22:00 to 04:00, not 01:00, sorry, it changed "
        "in spring.",
        ("Nothing may be scheduled on pay-01 between 22:00 and 04:00.",),
        ("01:00", "sorry", "edit")),
    "a-story-in-brackets": Message(
        "do I need to rebuild the initramfs after editing crypttab",
        "No, crypttab is read at boot.",
        "Yes: after editing /etc/crypttab run `update-initramfs -u` (that one bit us on "
        "db-07 last winter).",
        ("After editing /etc/crypttab run update-initramfs -u.",),
        ("bit us", "winter")),
    "locked-myself-out-and-praise": Message(
        "give a contractor shell access on build-02",
        "Add them to the admin group.",
        "Thanks! My second day here I did exactly that and locked myself out of build-02, "
        "so careful. Contractors get shell access only through the bastion host "
        "bastion-01. Loving the new search, keep it up!",
        ("Contractors get shell access only through bastion-01.",),
        ("locked myself", "loving", "keep it up")),
    "a-dated-story-then-a-windows-path": Message(
        "where does the scanner share live on the server",
        "It is under /srv/samba/scans.",
        "Morning! Last month at the Leeds depot the night shift filled the scanner share "
        "and nobody could upload manifests, so I spent an hour on fs-02 tracing it. "
        "\\\\fs-02\\scans is /srv/scans, not under /srv/samba, and it is capped at 100 GB. "
        "The old manifests went to tape in the end.",
        ("The scanner share is /srv/scans, capped at 100 GB.",),
        ("last month", "went to tape", "nobody could")),
    "a-rule-then-the-writers-case-after-a-semicolon": Message(
        "kiosk goes to sleep during the exhibition",
        "Set a longer blank-screen delay in Settings.",
        "Screen Blank is locked on gallery kiosks. With the motion sensor plugged in and "
        "mains power the kiosk "
        "stays awake all day; mine slept because the sensor cable was loose.",
        ("With the motion sensor plugged in and mains power the kiosk stays awake all day.",),
        ()),
    "a-flag-at-the-end-is-not-a-sign-off": Message(
        "make the archive restore faster",
        "Use -j 16 on any host.",
        "Parallel restore needs a directory-format archive. Our archives are -Fd, so -j 8 "
        "is fine on arc-02, which has 8 cores.",
        ("-j 8 is fine on arc-02, which has 8 cores.",),
        ()),
    "a-pasted-table-and-a-config-block": Message(
        "at what temperature does the freezer alarm go off",
        "Freezer alarms go off at -50 °C.",
        "Not for our lab. From the facilities sheet:\n\n| freezer | alarm | call facilities |"
        "\n|---|---|---|\n| FZ-80-A | -70 °C | -60 °C |\n| FZ-20-B | -15 °C | -10 °C |\n\n"
        "and the logger config on the bench PC:\n```\n[fz-logger]\ninterval_s = 60\n"
        "retention_days = 400\n```",
        ("The FZ-80-A alarm goes off at -70 °C.", "Facilities is called for FZ-20-B at -10 °C.",
         "The freezer logger records every 60 seconds.",
         "The freezer logger keeps 400 days."),
        ("Not for our lab", "|", "---", "```")),
    "a-memo": Message(
        "can visitors bring bikes on the ferry",
        "Bikes travel free on every crossing.",
        "Dear all, please be advised that, from 1 June, bicycles are carried only on the "
        "07:10 and 18:40 crossings. A bike ticket costs 4 euros. Kind regards, Passenger "
        "Services",
        ("From 1 June bicycles are carried only on the 07:10 and 18:40 crossings.",
         "A bike ticket costs 4 euros."),
        ("be advised", "Dear", "Kind regards", "Passenger Services")),
    "a-chat-log-where-one-person-answers": Message(
        "what is the loan period for laptops in the library",
        "Laptops are lent for one week.",
        "[10:31] noor: anyone know how long the library laptops are lent for?\n"
        "[10:32] felix: 4 hours, and they must stay in the building\n"
        "[10:32] noor: oh ok thx\n[10:33] ines: +1, that's right",
        ("Library laptops are lent for 4 hours.", "Library laptops must stay in the building."),
        ("noor", "felix", "10:3", "thx", "+1")),
    "answers-under-quoted-lines": Message(
        "how long is a parking permit valid",
        "A staff parking permit is valid for 12 months. Renew it at reception.",
        "> A staff parking permit is valid for 12 months.\nnope, 6 months for contractors\n"
        "> Renew it at reception.\nyes",
        ("A staff parking permit is valid for 6 months for contractors.",),
        ("nope", "12 months")),
    "a-dictated-message-with-fillers": Message(
        "where is the spill kit in the chemistry lab",
        "The spill kit is under the sink.",
        "uh so the spill kit in lab C is um on the wall next to the eyewash station and "
        "the um acid neutraliser is in the yellow cabinet so yeah",
        ("The spill kit in lab C is on the wall next to the eyewash station.",
         "The acid neutraliser is in the yellow cabinet."),
        ("uh ", " um", "so yeah")),
    "a-long-letter-with-the-fact-in-the-middle": Message(
        "can I switch off the hearing loop at the front desk",
        "Yes, switch it off in the desk's audio settings.",
        "Good morning. I have volunteered at this museum for twenty-two years and have seen "
        "a great many changes, but I felt you ought to know that the hearing loop at the "
        "front desk is to stay switched on during opening hours, because visitors rely on "
        "it. With all good wishes.",
        ("The hearing loop at the front desk stays switched on during opening hours.",),
        ("twenty-two", "volunteered", "ought to know", "good wishes")),
    "a-shouted-rule-with-a-checklist": Message(
        "what do I need before my first shift on the wards",
        "Just bring your ID badge.",
        "PLEASE READ:\n- [x] badge activated at the security office\n- [x] fire training "
        "done in the first WEEK\nand you MUST NOT use your own phone to photograph "
        "wounds, EVER.",
        ("The badge is activated at the security office.",
         "You must not use your own phone to photograph wounds."),
        ("[x]", "PLEASE READ")),
    "greeting-and-closing-in-another-language": Message(
        "when does the canteen close",
        "The canteen closes at 15:00.",
        "Buongiorno, the canteen in building C closes at 14:30 on Fridays, the other days at "
        "15:00. Grazie mille, Paola",
        ("The canteen in building C closes at 14:30 on Fridays.",
         "The canteen in building C closes at 15:00 on the other days."),
        ("Buongiorno", "Grazie", "Paola")),
    "dictated-with-a-spoken-goodbye": Message(
        "when can I collect my repaired laptop",
        "Repairs can be collected any time.",
        "yeah hi so repaired laptops are collected at the service desk on level 1 between "
        "9 and 11 only okay thanks bye",
        ("Repaired laptops are collected at the service desk on level 1 between 9 and 11.",),
        ("thanks", "bye", "yeah")),
    "review-labels-a-diff-and-a-translation": Message(
        "how many print jobs can the lab printer queue hold",
        "The queue holds 500 jobs.",
        "Nope — lab printers: not 500.\n```diff\n- MaxJobs 500\n+ MaxJobs 200\n```\n"
        "nit: jobs older than 2 days are purged.\nowner: Kofi\n"
        "Die Warteschlange hält 200 Aufträge, ältere als 2 Tage werden gelöscht.",
        ("The lab printer queue holds at most 200 jobs (MaxJobs 200).",
         "Print jobs older than 2 days are purged."),
        ("nit", "Warteschlange", "Nope")),
    "indian-business-english-and-check-marks": Message(
        "which networks can the meeting room tablets join",
        "They can join any network.",
        "Kindly note the meeting room tablets are restricted:\n✅ CORP-ROOMS\n✅ CORP-IOT\n"
        "❌ CORP-GUEST\nFor changes please raise ticket under queue NET-OPS. Please do the "
        "needful.",
        ("The meeting room tablets may join CORP-ROOMS and CORP-IOT.",
         "The meeting room tablets may not join CORP-GUEST.",
         "Changes go through a ticket in the NET-OPS queue."),
        ("Kindly", "needful")),
    "tracker-markup-and-a-mention": Message(
        "which label printer does the returns desk use",
        "Use the default office printer.",
        "h3. Returns desk\n[~okafor] returns labels print on *lbl-returns-02* (Zebra ZD421), "
        "not the office printer. The label size is {{100x150 mm}}.\n{noformat}\n"
        "lpstat -p lbl-returns-02\n{noformat}",
        ("Returns labels print on lbl-returns-02.", "The label size is 100x150 mm."),
        ("okafor", "[~", "*", "{{", "noformat")),
    "memo-with-an-exception-and-a-sign-off": Message(
        "when does the ferry ticket office close on Sundays",
        "The ticket office closes at 18:00 every day.",
        "Please be advised that from 1 June the ferry ticket office closes at 16:00 on "
        "Sundays. This does not apply to the summer timetable weeks, which follow their "
        "own hours. Issued on behalf of Harbour Operations.",
        ("The ferry ticket office closes at 16:00 on Sundays.",
         "The Sunday closing time does not apply to the summer timetable weeks."),
        ("Issued", "behalf", "advised")),
    "chat-log-with-speaker-roles": Message(
        "open dental x-ray images on the reception pc",
        "Open the images in the clinic viewer on any PC.",
        "[08:02] tomas (front desk): they want the dental images, I can't find the viewer\n"
        "[08:04] aisha (vet IT): the dental viewer only runs on the Surgery 2 workstation, "
        "it is not installed on reception PCs\n[08:05] tomas (front desk): ah ok thanks",
        ("The dental viewer only runs on the Surgery 2 workstation.",
         "The dental viewer is not installed on reception PCs."),
        ("08:04", "aisha", "vet it", "can't find", "tomas")),
    "a-colleague-confirms-in-a-long-letter": Message(
        "who can issue complimentary theatre tickets",
        "Any box office clerk can issue complimentary tickets.",
        "Dear Sir or Madam, forgive the long note, but I was puzzled by this reply, as I "
        "had been shown a different procedure at my training day in 2021. I rang Imogen "
        "at the box office this afternoon, and she confirmed that complimentary tickets "
        "for the matinee are issued only by the house manager, and that they must be "
        "collected by 13:00 on the day. I thought it right to pass this on.",
        ("Complimentary matinee tickets are issued only by the house manager.",
         "Complimentary tickets must be collected by 13:00 on the day."),
        ("2021", "training", "Imogen", "Dear", "confirmed", "puzzled")),
    "polite-disagreement-with-a-framed-point": Message(
        "how often is the pharmacy fridge checked",
        "The pharmacy fridge is checked once a day.",
        "Thank you, it is very much appreciated. I must respectfully point out, though, "
        "that the vet pharmacy fridge is checked at 07:30 and at 19:00, not once a day.",
        ("The vet pharmacy fridge is checked at 07:30 and at 19:00.",),
        ("respectfully", "point out", "appreciated", "thank")),
    "arrows-from-labels-to-marks": Message(
        "what changed on the brewhouse controller after the audit",
        "Nothing changed on the brewhouse controller.",
        "brewhouse controller after the audit:\nMaxBatchLitres 4000 → 3200\n"
        "weekend CIP cycles → ❌ not run any more\nsampling valve → ✅ QA staff only",
        ("MaxBatchLitres on the brewhouse controller is 3200.",
         "Weekend CIP cycles are not run any more.",
         "The sampling valve is for QA staff only."),
        ("4000",)),
    "a-named-colleague-with-a-department": Message(
        "when do the loading bay doors close",
        "The loading bay doors close at 20:00.",
        "Tomasz from Facilities said the loading bay doors close at 18:30 on weekdays, and "
        "Saturday deliveries use gate C.",
        ("The loading bay doors close at 18:30 on weekdays.",
         "Saturday deliveries use gate C."),
        ("Tomasz", "said")),
    "agreed-at-a-meeting": Message(
        "which day can loaned objects leave the museum",
        "Loans can leave on any weekday.",
        "We agreed at the curators' meeting in June that loans leave the museum only on "
        "Tuesdays, always with two couriers.",
        ("Loans leave the museum only on Tuesdays.", "Loans always leave with two couriers."),
        ("agreed", "meeting", "June")),
    "make-sure-the-crew-knows": Message(
        "who lowers the ferry ramp",
        "Any crew member can lower the ramp.",
        "Please make sure the deckhands know that the ferry ramp is lowered only by the "
        "deck officer, never by the purser.",
        ("The ferry ramp is lowered only by the deck officer.",),
        ("make sure", "know that")),
    "reassurance-and-an-offer": Message(
        "when do we feed the sourdough starter",
        "Feed the starter once a day.",
        "Good question, and don't worry, everybody gets caught by this in week one. The "
        "starters are fed at 05:00 and 17:00 with 200 g of rye flour. Ping me if you want "
        "to go through the feeding log together.",
        ("The starters are fed at 05:00 and 17:00 with 200 g of rye flour.",),
        ("question", "worry", "ping", "week one")),
    "a-wish-at-the-end": Message(
        "when does the autoclave test cycle run",
        "The autoclave test runs on Fridays.",
        "The dental autoclave runs its test cycle every Monday at 07:15, before the first "
        "patient. Hope the new nurse on 2 settles in well!",
        ("The dental autoclave runs its test cycle every Monday at 07:15.",),
        ("hope", "nurse", "settles")),
    "the-rest-is-fine": Message(
        "how do tutors change an exam date",
        "Tutors change the date in the exam planner.",
        "Only the registrar can change an exam date once it is published, so tutors have "
        "to email the registry. The other steps are fine.",
        ("Only the registrar can change a published exam date.",),
        ("other steps", "fine")),
    "an-interjection-without-a-comma": Message(
        "which gate is the night ferry",
        "The night ferry leaves from gate 2.",
        "nah its gate 7 for the night ferry, boarding closes 20 minutes before departure",
        ("The night ferry leaves from gate 7.", "Boarding closes 20 minutes before departure."),
        ("nah",)),
    "a-step-the-answer-also-had": Message(
        "how do I archive a finished project folder",
        "Open the project share and drag the folder to Archive.",
        "Archive works differently since the move:\n1. Open the project share\n"
        "2. Run `arch-proj <code>` from a terminal\n3. Wait for the mail from ArchiveBot "
        "before deleting anything",
        ("Open the project share.", "Run `arch-proj <code>` from a terminal.",
         "Wait for the mail from ArchiveBot before deleting anything."),
        ()),
    "the-answers-value-denied": Message(
        "what booking hold should I set on the island route",
        "Set the booking hold to 0 so it never expires.",
        "Two things. The booking hold is never 0 on the island route. The maximum is 45 "
        "minutes, and a longer hold needs the duty manager.",
        ("The booking hold is never 0 on the island route.",
         "The maximum booking hold is 45 minutes."),
        ("Two things",)),
    "a-terse-negated-rule": Message(
        "can lab technicians order reagents",
        "Yes, from the supplier portal.",
        "Lab technicians don't order reagents directly. Orders go through the stores desk "
        "on level 2.",
        ("Lab technicians do not order reagents directly.",
         "Reagent orders go through the stores desk on level 2."),
        ()),
    "what-a-key-does": Message(
        "how do I print a shelf label",
        "Use File > Print in the stock app.",
        "Ctrl+Alt+P sends the label straight to the shelf printer. Esc cancels it.",
        ("Ctrl+Alt+P sends the label straight to the shelf printer.", "Esc cancels it."),
        ()),
    "a-negative-question-backed-up": Message(
        "how do I reopen a tab I closed in the booking browser",
        "Use the History menu to find the page again.",
        "Isn't it just Ctrl+Shift+T? That reopens the last closed tab, we use it at the "
        "counter every day.",
        ("Ctrl+Shift+T reopens the last closed tab.",),
        ()),
    "name-dash-value-lines-under-a-colon": Message(
        "which printer is the default in each clinic",
        "Every clinic uses the printer you pick in Settings > Printers.",
        "Reception can't change it. The practice manager sets the default per clinic:\n"
        "Northgate - NG-LASER-2\nRiverside - RS-COLOUR\nHillcrest - HC-LASER\n\nThanks, Dana",
        ("The default printer at Northgate is NG-LASER-2.",
         "The default printer at Riverside is RS-COLOUR.",
         "The default printer at Hillcrest is HC-LASER."),
        ("Thanks", "Dana")),
    "a-reply-under-a-quoted-line": Message(
        "where is the large-format scanner",
        "The large-format scanner, LF-SCAN-1, is in room 204 next to the library.",
        "> The large-format scanner, LF-SCAN-1, is in room 204 next to the library.\n\n"
        "Not any more. It moved to the basement print room in March. Same queue name.",
        ("LF-SCAN-1 moved to the basement print room in March.",),
        ("Not any more",)),
    "a-german-sign-off": Message(
        "which key switches windows of one app",
        "Use Alt+Tab for windows of the same application.",
        "Nein, for windows of one app it is Super plus the key above Tab. Viele Grüße, "
        "Lukas (Werkstudent)",
        ("Windows of one app are switched with Super plus the key above Tab.",),
        ("Grüße", "Lukas", "Nein")),
    "a-list-under-not-how-it-works": Message(
        "how do I get admin rights to install software",
        "Open Settings > Users and switch on Administrator.",
        "Not how it works here:\n- only service-desk accounts have admin rights\n"
        "- staff accounts are never made administrators\n- allow 5 working days for requests",
        ("Only service-desk accounts have admin rights.",
         "Staff accounts are never made administrators.",
         "Software requests take 5 working days."),
        ()),
    "an-edit-after-a-dash": Message(
        "how long are files kept in the scratch area",
        "Files in the scratch area are kept for 60 days.",
        "Scratch on the render farm isn't backed up. Files older than 45 days are deleted "
        "-- edit: 14 days, they cut it in spring. Keep finished renders on the archive share.",
        ("Files older than 14 days are deleted from scratch.",
         "Scratch on the render farm isn't backed up."),
        ("45", "edit", "spring")),
    "a-dashed-edit-with-the-old-value-named": Message(
        "how far back can the ledger database be restored",
        "Point-in-time recovery on the ledger database goes back 7 days.",
        "The restore window on ledger-db is 10 days \u2014 edit: it's 21 days, not 10, they "
        "raised it after the audit. Base backups run nightly at 01:00.",
        ("The restore window on ledger-db is 21 days.", "Base backups run nightly at 01:00."),
        ("10 days", "edit", "audit")),
    "a-vocative-after-no": Message(
        "what's the query timeout on the scoreboard database",
        "The scoreboard database has no statement timeout.",
        "nah mate, scoreboard-db caps statements at 3s for the app roles. Don't ship a query "
        "that needs longer.",
        ("scoreboard-db caps statements at 3s for the app roles.",),
        ("nah", "mate")),
    "a-disclaimer-before-the-rule": Message(
        "can we run maintenance on the ticketing database on sale days",
        "Maintenance can run at any time with a short lock.",
        "I'm not a technical person so sorry if I say this wrong, but the ticketing database "
        "must never be touched on on-sale days. On-sale days are every first Friday.",
        ("The ticketing database must never be touched on on-sale days.",
         "On-sale days are every first Friday."),
        ("technical person", "sorry")),
    "a-habit-all-day-long": Message(
        "how do I type the degree sign",
        "Hold Alt and type 0176 on the number pad.",
        "Alt codes don't work here. Press Ctrl+Shift+U, type 00b0, then Space. I use it all "
        "day for the site sketches.",
        ("Press Ctrl+Shift+U, type 00b0, then Space to type the degree sign.",),
        ("I use", "sketches")),
    "conditions-before-colons": Message(
        "how do I log in to the lighthouse server",
        "Log in as root over SSH.",
        "If you're on the mainland: root SSH is disabled on every keeper host, and it stays "
        "that way. If you're on the island: use the console in the lamp room with the local "
        "`keeper` account.",
        ("On the mainland, root SSH is disabled on every keeper host.",
         "On the island, use the console in the lamp room with the local `keeper` account."),
        ()),
    "an-order-of-named-steps": Message(
        "grow the archive volume by 300G",
        "Run `resize2fs` first, then `lvextend -L 300G vg0/archive`.",
        "Backwards: `lvextend -L +300G vg0/archive` first, then `resize2fs`. Growing works "
        "online.",
        ("Run `lvextend -L +300G vg0/archive` first, then `resize2fs`.",),
        ()),
    "a-pasted-config-with-comments": Message(
        "which proxy does the survey ship use for apt",
        "The ship uses deb.debian.org directly.",
        "// /etc/apt/apt.conf.d/80vessel on deck-srv\n"
        'Acquire::http::Proxy "http://cache.harbour.example:3142";   // only alongside\n'
        'APT::Periodic::Update-Package-Lists "0";   // never at sea, the link is metered',
        ('Acquire::http::Proxy is "http://cache.harbour.example:3142" only alongside.',),
        ("// ",)),
    "a-stamped-radio-log": Message(
        "which time source does the survey ship use",
        "The ship syncs with pool.ntp.org.",
        "0915 - deck-srv time source is the GPS receiver.\n0916 - pool.ntp.org NOT used at "
        "sea.\n0917 - shore NTP only reachable alongside. Out.",
        ("deck-srv takes its time from the GPS receiver.", "pool.ntp.org is not used at sea."),
        ("0915", "0916", "Out")),
    "til-and-just-so-everyone-knows": Message(
        "where do scanned invoices go",
        "Scans are saved to the Desktop.",
        "TIL scans don't go to the Desktop at all: they land in Documents/Scans. Just so "
        "everyone knows, the scanner names them by date.",
        ("Scans land in Documents/Scans.", "The scanner names scans by date."),
        ("TIL", "Just so")),
    "sarcasm-and-a-signature": Message(
        "no sound from the boardroom screen",
        "Select HDMI in Sound > Output.",
        "Great timing for it, not. In the boardroom you choose Jabra 510 in Sound > Output, "
        "not HDMI. Never again.\n-- Facilities / Room Desk",
        ("In the boardroom, choose Jabra 510 in Sound > Output.",),
        ("timing", "Never again", "Facilities")),
    "a-named-colleagues-story-and-a-coffee-exit": Message(
        "why did the nightly jobs stop after installing anacron",
        "Cron runs /etc/cron.daily as usual.",
        "Ha, we chased this for days, Tomasz swore the server was cursed. Once anacron is "
        "installed, anacron runs /etc/cron.daily instead of cron. Right, off to find coffee.",
        ("Once anacron is installed, anacron runs /etc/cron.daily instead of cron.",),
        ("Tomasz", "cursed", "coffee")),
    "a-visitor-introduces-themselves": Message(
        "where is the syslog on the ingest server",
        "Read /var/log/syslog on ingest02.",
        "So sorry to bother you, I'm only here for a month from Bergen... but ingest02 has no "
        "rsyslog, so there is no /var/log/syslog on it.",
        ("ingest02 has no rsyslog.", "There is no /var/log/syslog on ingest02."),
        ("Bergen", "only here", "sorry")),
    "advice-in-the-first-person": Message(
        "does large text double the font size",
        "Large Text doubles the size of all text.",
        "If I were you I wouldn't promise anyone it doubles anything \u2014 Large Text only "
        "scales text by 1.2 times. If I were you I'd use Zoom for the reception screen.",
        ("Large Text only scales text by 1.2 times.", "Use Zoom for the reception screen."),
        ("If I were you", "I'd", "I wouldn't")),
    "nope-without-an-apostrophe": Message(
        "where do screen recordings go",
        "Screen recordings are saved to the Desktop.",
        "nope theyre in Videos/Screencasts in ur home folder, name starts w the date",
        ("Screen recordings are saved in Videos/Screencasts in the home folder.",),
        ("nope", "theyre")),
    "doubts-then-a-checked-fact": Message(
        "which time service do the depot servers run",
        "The depot servers run ntpd against pool.ntp.org.",
        "Not sure if the laptops are the same, and I don't really get how the GPS clock "
        "works, but on the servers I checked myself with `chronyc sources`: it's chrony, not "
        "ntpd, pointed at time.depot.example. The config is /etc/chrony/conf.d/depot.conf I "
        "think... yes it is, just looked.",
        ("The depot servers run chrony, not ntpd.", "Chrony points at time.depot.example.",
         "The chrony config is /etc/chrony/conf.d/depot.conf."),
        ("Not sure", "GPS", "I checked", "just looked", "I think")),
    "a-formal-correction-with-a-relayed-rule": Message(
        "where do payslip e-mails go out from",
        "Payslips are sent directly by the payroll server.",
        "I must correct this answer, as it misrepresents a control I am accountable for. All "
        "payslip e-mail is routed through relay.depot.example. I am further advised by the IT "
        "team that the relay refuses any message over 15 MB.",
        ("All payslip e-mail is routed through relay.depot.example.",
         "The relay refuses any message over 15 MB."),
        ("I must correct", "advised", "accountable")),
    "indian-business-english-around-a-rule": Message(
        "who can open the payroll share",
        "All office staff can open the payroll share.",
        "Sir, the payroll share is separate one and only payroll group members are having "
        "access. I have already raised ticket with IT but kindly revert back if any more "
        "details needed.",
        ("Only payroll group members have access to the payroll share.",),
        ("Sir", "raised ticket", "revert")),
    "fed-up-after-the-fact": Message(
        "does passwd -l lock an account completely",
        "Yes, passwd -l locks the account.",
        "`passwd -l` only stops password logins; a leaver with an SSH key still gets in. "
        "I am sick of finding 'locked' accounts with live keys on them.",
        ("`passwd -l` only stops password logins.",),
        ("sick of",)),
    # A forward the writer only vouches for: the forwarded text is the message.
    "an-endorsed-forward": Message(
        "where do I send expense claims",
        "E-mail them to finance@corp.example with the receipts attached.",
        "Still valid, see below.\n\n-------- Forwarded message ---------\n"
        "From: Ines <ines@corp.example>\nDate: Fri, 7 Jun 2024 at 11:02\n"
        "Subject: Expenses\nTo: all-staff@corp.example\n\nAll expense claims go through "
        "the Spendly app now, not e-mail. Receipts over 50 EUR need a photo attached.\n\n"
        "Best,\nInes\nFinance Operations",
        ("Expense claims go through the Spendly app, not e-mail.",
         "Receipts over 50 EUR need a photo attached."),
        ("Ines", "Finance Operations", "Still valid", "From:", "Subject")),
    # Markdown headings scope the bullets under them.
    "headings-scope-their-bullets": Message(
        "what is the door code at the depots",
        "All depots use the code 4411.",
        "## North depot\n- The door code is 7302.\n\n## Harbour depot\n"
        "- The keypad was removed in May, staff open the door with their badge.",
        ("The North depot door code is 7302.",
         "At the Harbour depot the keypad was removed; staff use their badge."),
        ("##",)),
    "a-transcript-banner": Message(
        "who resets the warehouse alarm",
        "Any staff member can reset it from the panel.",
        "[Call transcript, 02:13] Only the shift lead resets the warehouse alarm. The reset "
        "code is kept by the security office.",
        ("Only the shift lead resets the warehouse alarm.",
         "The reset code is kept by the security office."),
        ("transcript", "02:13")),
    "an-interjection-before-a-verdict": Message(
        "which port does the reporting pool listen on",
        "The reporting pool listens on port 7000.",
        "Ayyo, this is wrong only. Reporting jobs use port 7010 on the pooler.",
        ("Reporting jobs use port 7010 on the pooler.",),
        ("Ayyo", "wrong only")),
    "a-demonstrative-pointing-at-the-answer": Message(
        "where do I reorder toner for the copier",
        "Press Reorder Toner on the copier's web page.",
        "That button was taken out in firmware 6.1. Toner is ordered through the facilities "
        "portal now, under Supplies.",
        ("The reorder button was taken out in firmware 6.1.",
         "Toner is ordered through the facilities portal, under Supplies."),
        ("That button",)),
}


@pytest.mark.parametrize(("sentence", "expected"), [
    ("This dropdown only lists printers on the same floor.",
     "The dropdown only lists printers on the same floor."),
    ("Those tokens expire after one shift.", "The tokens expire after one shift."),
    ("That fails when the disk is full.", "That fails when the disk is full."),
    ("This explains the slow boot.", "This explains the slow boot."),
    ("That's only for the night crew.", "That's only for the night crew."),
    ("That one is for guests.", "That one is for guests."),
    ("This went away after the patch.", "This went away after the patch."),
    ("That really helps.", "That really helps."),
    ("That changed in May.", "That changed in May."),
    ("That status page is internal.", "The status page is internal."),
])
def test_a_first_demonstrative_before_a_noun_becomes_an_article(sentence: str,
                                                                 expected: str) -> None:
    assert demonstrative_as_article(sentence) == expected


@pytest.fixture(scope="module")
def role(embedder: MiniLMEmbedder) -> LocalActionability:
    return LocalActionability(embedder)


@pytest.mark.parametrize("name", sorted(MESSAGES))
def test_the_body_keeps_the_facts_and_drops_the_talk(name: str, role: LocalActionability,
                                                     embedder: MiniLMEmbedder) -> None:
    m = MESSAGES[name]
    ex = role.extract(FeedbackContext("e1", "t", m.query, m.answer, m.comment, "down"),
                      Meter())
    assert ex.can_produce_nugget, (name, ex.reason)
    text = f"{ex.title}\n{ex.body}"
    for fact in m.facts:
        verdict = fact_coverage(fact, text, embedder.embed, source=f"{m.comment}\n{m.query}")
        assert verdict.covered, (name, fact, verdict, ex.body)
    for word in m.gone:
        assert word.lower() not in ex.body.lower(), (name, word, ex.body)
    assert conversational_text(ex.title, ex.body) == [], (name, ex.body)
    assert unsupported_text(ex.title, ex.body, m.comment, m.query) == [], (name, ex.body)
    assert stale_claims(ex.title, ex.body, m.answer, m.facts) == [], (name, ex.body)


@pytest.mark.parametrize(("clause", "first", "why"), [
    ("Cheers for that", True, "acknowledgement"),
    ("Close", True, "acknowledgement"),
    ("Not before lunch", True, "elliptical reply"),
    ("The vendor's manual is just plain wrong", True, "verdict"),
    ("that was the actual culprit", False, "verdict"),
    ("it took us two evenings to figure out", False, "the writer's effort"),
    ("I logged a ticket and waited three days", True, "the writer's own story or opinion"),
    ("I guess that is how most teams do it", True, "the writer's own story or opinion"),
    ("please never suggest that again", False, "addressed to the assistant"),
    ("Tried it with three different badges", False, "the writer's own story or opinion"),
    ("It doesn't", True, "elliptical reply"),
    ("our mistake came from a typo in the sheet", True, "the writer's own story or opinion"),
    ("No need for that", True, "elliptical reply"),
    ("Please don't (at least not during exams)", True, "elliptical reply"),
])
def test_residue_names_what_a_clause_is(clause: str, first: bool, why: str) -> None:
    assert residue(clause, first=first) == why


@pytest.mark.parametrize("clause", [
    # Facts stay, whoever says them and however they start.
    "Not in Preferences anymore",  # what changed is the fact
    "Not 30 days but 90",  # a number
    "I checked with the service desk and the queue is F3-Colour now",  # a concrete item
    "I've disabled USB storage on all kiosks",  # the organisation's rule, in the 1st person
    "As a contractor I can't open the finance share",  # a rule the writer is under
    "No underscores in host names",  # a determiner "no", not a reply
    "No need for a VPN on the guest network",  # what is not needed is the fact
    "Only the duty manager can void a sale",
    "Set the timer by hand in the Clocks app",  # "set" is an instruction here, not a story
    "managed by the platform team",
    "Our kiosks were replaced by Elo terminals",  # what the team changed, named
])
def test_facts_are_not_residue(clause: str) -> None:
    assert residue(clause, first=True) == ""


@pytest.mark.parametrize(("message", "repaired"), [
    # A repair as a sentence of its own, and a note that gives only the new value.
    ("Guest passes last 3 hours. 4 hours, sorry.", "Guest passes last 4 hours."),
    ("The kiln cools for 12 hours before opening.\nupdate: 16 hours, the new one is slower",
     "The kiln cools for 16 hours before opening."),
    ("Door codes change every 30 days. edit: it's 60 days", "Door codes change every 60 days."),
    # Ambiguous (two values with that unit) or another unit: the message stays as written.
    ("Mugs are washed after 2 days and cups after 3 days.\nedit: 4 days",
     "Mugs are washed after 2 days and cups after 3 days.\nedit: 4 days"),
    ("Line 2 opens at 9.", "Line 2 opens at 9."),
])
def test_a_later_repair_replaces_the_one_value_it_corrects(message: str, repaired: str) -> None:
    assert apply_self_corrections(message) == repaired


def test_a_label_for_later_readers_goes_wherever_the_phrase_sits_in_it() -> None:
    assert strip_residue("The short version for newcomers: the kiln room is locked after "
                         "18:00") == "the kiln room is locked after 18:00"


def test_a_subjectless_reply_goes_and_leaves_its_scope_to_the_fact() -> None:
    assert strip_residue("Won't work like that at the Hull site: the gate opens at 06:00") \
        == "At the Hull site, the gate opens at 06:00"
    assert strip_residue("Can't set it that low: pallets stack 4 high at most") == \
        "pallets stack 4 high at most"


def test_a_mention_that_addresses_someone_goes_and_a_handle_as_subject_stays() -> None:
    assert strip_residue("@lena for the spring intake the deadline is 14 March") == \
        "For the spring intake the deadline is 14 March"
    assert strip_residue("@facilities owns the key safe in room B12") == \
        "@facilities owns the key safe in room B12"


def test_strip_residue_keeps_menus_and_speaks_to_the_reader() -> None:
    assert strip_residue("Remove it under Profile > My devices > Remove") == \
        "Remove it under Profile > My devices > Remove"
    assert second_person("As a contractor I can't open the finance share from my laptop") \
        == "As a contractor you can't open the finance share from your laptop"
    # The writer's own act is not turned into the reader's.
    assert "I've" in strip_residue("I've disabled USB storage on all kiosks")
    assert strip_residue("Honestly, though, the vendor's manual is just plain wrong") == ""


def test_a_title_keeps_an_identifier_in_lower_case_and_restores_acronyms() -> None:
    assert topic_of("kubectl logs -f hangs", "Run kubectl -n prod logs ...") == \
        "kubectl logs -f hangs"
    assert topic_of("pg_restore takes forever") == "pg_restore takes forever"
    assert topic_of("fingerprint reader missing", "the fingerprint reader needs a driver") \
        == "Fingerprint reader missing"
    assert title_for("vpn drops at night", "Reconnect the client.", "Restart it.",
                     "global") == "vpn drops at night"  # as typed: never "Vpn"
    assert title_for("psql hangs on login", "Use the pooler.", "Run psql -h db1.",
                     "global") == "psql hangs on login"
    assert title_for("usb drive not mounting", "USB drives are mounted read-only here.",
                     "Plug it in.", "global") == "USB drive not mounting"
    # "DROP" next to other capitals is SQL, not an acronym for the English word.
    assert title_for("drop a column on a big table", "It rewrites nothing.",
                     "ALTER TABLE t DROP COLUMN c;", "global").startswith("Drop a column")


def test_conversational_text_names_what_it_found() -> None:
    found = conversational_text("Printer queue", "Ha, nice try. My queue is PRN-7. Not now.")
    assert any("interjection" in f for f in found)
    assert any("first person (My)" in f for f in found)
    assert any("elliptical" in f for f in found)
    assert conversational_text("Do I need a badge for level 4?",
                               "Level 4 needs a badge after 18:00.") == []
    assert conversational_text("Thanks for the help", "The badge is needed.") != []
    assert conversational_text("Audit export", "Right that we export nightly, but it runs "
                               "as svc-audit.") != []
    assert conversational_text("Audit export", "This burned us last spring.") != []
    assert conversational_text("Audit export", "Yes the export is nightly.") != []


@pytest.mark.parametrize("comment", [
    "Worthless answer, nobody can find anything in that wiki.",
    "ugh same here, the scanner jams every 10 pages\nSo annoying.",
])
def test_a_complaint_with_a_vague_or_symptom_claim_makes_no_nugget(
        comment: str, role: LocalActionability) -> None:
    ex = role.extract(FeedbackContext("e2", "t", "where are the scanner instructions",
                                      "See the facilities wiki.", comment, ""), Meter())
    assert not ex.can_produce_nugget, (comment, ex.body, ex.reason)


@pytest.mark.parametrize(("query", "title"), [
    # A question keeps its whole wording: either half alone is a fragment.
    ("if I move a VM to the other host, does it keep its MAC address?",
     "If I move a VM to the other host, does it keep its MAC address?"),
    ("the cron job ran twice last night, how do I stop the duplicate run?",
     "The cron job ran twice last night, how do I stop the duplicate run?"),
    # "?" inside is an operator, "()" belongs to a call.
    ("why is WHERE tags ? 'urgent' slow on tickets, is tags indexed?",
     "Why is WHERE tags ? 'urgent' slow on tickets, is tags indexed?"),
    ("why do my rows all get the same stamp from clock_timestamp()?",
     "Why do my rows all get the same stamp from clock_timestamp()?"),
    # Too long even for a question: the part that asks, unless it only points back.
    ("the nightly export from the warehouse database to the finance share has been "
     "failing since Monday with a permission error, which account should own the share?",
     "Which account should own the share?"),
    ("the backup job on the second storage node stopped with exit code 12 after the "
     "kernel update on Tuesday night, what does that mean for tonight's run?",
     "The backup job on the second storage node stopped with exit code 12 after the "
     "kernel update on Tuesday night"),
])
def test_a_long_query_becomes_a_title_that_is_not_a_fragment(query: str, title: str) -> None:
    assert topic_of(query) == title


def test_a_long_first_claim_as_title_is_cut_at_a_clause_boundary() -> None:
    body = ("Loaner laptops must be returned to the IT desk in room 1.12 (not to reception) "
            "and the charger has to come back with them.")
    assert title_for("loaners??", body, "Give loaner laptops back at reception.",
                     "global") == \
        "Loaner laptops must be returned to the IT desk in room 1.12"


def test_a_subjectless_reply_before_a_colon_scopes_the_fact_after_it(
        role: LocalActionability) -> None:
    ex = role.extract(FeedbackContext(
        "e1", "t", "raise the upload limit to 5 GB", "Set the upload limit to 5 GB.",
        "Can't set it that high for student accounts: uploads are capped at 2 GB by the "
        "storage policy.", "down"), Meter())
    assert ex.body.startswith("For student accounts, uploads are capped at 2 GB"), ex.body


def test_quoted_yes_and_no_are_values_not_replies() -> None:
    assert strip_residue("'yes', 'y' and '1' are read as true, 'no' and '0' as false") == \
        "'yes', 'y' and '1' are read as true, 'no' and '0' as false"


def test_a_shouted_run_of_english_words_is_read_in_lower_case_and_acronyms_stay() -> None:
    assert plain_voice("The staff car park is for STAFF AND CONTRACTORS only.") == \
        "The staff car park is for staff and contractors only."
    assert plain_voice("It is LOCKED IN THE BIOS on every till.") == \
        "It is locked in the BIOS on every till."
    # SQL keywords in prose keep their capitals.
    assert plain_voice("keys are bigint GENERATED ALWAYS AS IDENTITY here") == \
        "keys are bigint GENERATED ALWAYS AS IDENTITY here"


def test_a_quoted_label_with_a_question_mark_does_not_end_the_sentence() -> None:
    assert split_sentences("You get a 'Share your screen?' prompt, click Share. Done.") == \
        ["You get a 'Share your screen?' prompt, click Share.", "Done."]


def test_a_hyphenated_english_word_opens_a_sentence_in_capitals() -> None:
    assert sentence_case("walk-in customers are served at desk 3") == \
        "Walk-in customers are served at desk 3."
    assert sentence_case("ssh-keygen is run by the user") == "ssh-keygen is run by the user."


@pytest.mark.parametrize(("sentence", "kept"), [
    ("I'm not sure that's quite right, I'm afraid - the ferry office shuts at 16:00",
     "the ferry office shuts at 16:00"),
    ("+1 to what Sanjay wrote above, and: the kiln is off on bank holidays",
     "the kiln is off on bank holidays"),
    ("Other way round - the tare weight is set before the batch is loaded",
     "the tare weight is set before the batch is loaded"),
    ("The order's backwards for refunds, the voucher is cancelled first",
     "the voucher is cancelled first"),
    ("The way it works here is the cold store alarm rings at -15 C",
     "the cold store alarm rings at -15 C"),
    ("We used to print them at reception, now only the back office can",
     "now only the back office can"),
    # A value the writer dates stays: it is history the message states.
    ("We used to close at 17:00, since May the depot closes at 18:30",
     "We used to close at 17:00, since May the depot closes at 18:30"),
    # A reversal stated as the fact, and "because" with its main clause, are kept.
    ("The bytes are reversed, so 0x0A0B is stored as 0B 0A",
     "The bytes are reversed, so 0x0A0B is stored as 0B 0A"),
    ("because the scale drifts in the cold, it is recalibrated every Monday",
     "because the scale drifts in the cold, it is recalibrated every Monday"),
])
def test_replies_about_the_answer_go_and_the_fact_stays(sentence: str, kept: str) -> None:
    assert strip_residue(sentence) == kept


def test_a_retort_without_a_main_clause_is_talk() -> None:
    assert strip_residue("Sure, because the till is famous for never crashing.") == ""


def test_a_scope_before_a_colon_stays_with_the_rule(role: LocalActionability) -> None:
    ex = role.extract(FeedbackContext(
        "e1", "t", "can the box office laptops use bluetooth speakers",
        "Yes, pair them in Settings > Bluetooth.",
        "Box office laptops have Bluetooth switched off in firmware. Manager laptops only: "
        "Bluetooth is allowed for headsets, nothing else.", "down"), Meter())
    assert "Manager laptops only: Bluetooth is allowed for headsets" in ex.body, ex.body


def test_everyday_office_words_open_a_sentence_in_capitals() -> None:
    assert sentence_case("thumbnails are made by the worker") == \
        "Thumbnails are made by the worker."
    assert sentence_case("admin page is on port 631") == "Admin page is on port 631."
    assert sentence_case("featherlift runs the migrations") == \
        "featherlift runs the migrations."


def test_an_edit_note_that_apologises_replaces_the_value_and_the_old_one_goes() -> None:
    text = apply_self_corrections("Vouchers are valid 30 days — edit: sorry, 21 days since "
                                  "the spring change, 30 was the old value.")
    assert text == "Vouchers are valid 21 days since the spring change, 30 was the old value."
    assert strip_residue(text.rstrip(".")) == "Vouchers are valid 21 days since the spring change"


@pytest.mark.parametrize(("sentence", "kept"), [
    ("Thanks for the reply, but I should point out that the loading bay closes at 15:00",
     "the loading bay closes at 15:00"),
    ("yeah the kiln room is locked after 18:00", "the kiln room is locked after 18:00"),
    ("After the June flood (the one that cost us the whole archive shelf) boxes go on "
     "pallets only", "After the June flood boxes go on pallets only"),
])
def test_thanks_agreement_and_a_costly_story_in_brackets_go(sentence: str, kept: str) -> None:
    assert strip_residue(sentence) == kept


@pytest.mark.parametrize(("sentence", "kept"), [
    ("The rule from HR, as I understand it: badges are returned on the last day",
     "The rule from HR: badges are returned on the last day"),
    ("Never rotate the keys by hand (last time that took the tills down for an hour), the "
     "vault job does it", "Never rotate the keys by hand, the vault job does it"),
    ("I checked with the depot before doing it and she said that pallets over 800 kg go on "
     "bay 4", "pallets over 800 kg go on bay 4"),
    ("Labels print on the Zebra, and the thermal roll is probably what you want anyway, the "
     "roll size is 100x150 mm", "Labels print on the Zebra, the roll size is 100x150 mm"),
])
def test_asides_frames_and_guesses_around_a_fact_go(sentence: str, kept: str) -> None:
    assert strip_residue(sentence) == kept


def test_a_short_new_value_next_to_a_claim_is_kept(role: LocalActionability) -> None:
    ex = role.extract(FeedbackContext(
        "e1", "t", "how does the price sync retry", "The price sync does not retry.",
        "The price sync job is started by cron on stock-01 at 06:00. Retries 4x.", "down"),
        Meter())
    assert ex.body.endswith("Retries 4x."), ex.body


def test_doubt_about_other_things_leaves_the_firm_fact(role: LocalActionability) -> None:
    ex = role.extract(FeedbackContext(
        "e1", "t", "how are the backup tapes rotated", "Tapes are rotated monthly.",
        "No idea about the rest of it, and I might have the shelf wrong, but the tape is "
        "changed every Monday before 9am. The old tape goes to the bank safe.", "down"),
        Meter())
    assert ex.body == ("The tape is changed every Monday before 9am. The old tape goes to "
                       "the bank safe."), ex.body


@pytest.mark.parametrize(("text", "restored"), [
    ("its in the Sharing panel", "it's in the Sharing panel"),
    ("nope, its Harbour-Guest for visitors", "nope, it's Harbour-Guest for visitors"),
    ("Its default is 5 minutes", "Its default is 5 minutes"),
    ("the scanner and its cradle", "the scanner and its cradle"),
])
def test_its_before_a_place_or_a_name_is_it_is(text: str, restored: str) -> None:
    assert restore_contractions(text) == restored


@pytest.mark.parametrize(("sentence", "kept"), [
    ("Hiya, Tomasz here from the loading bay - the forklift chargers switch off at 22:00.",
     "the forklift chargers switch off at 22:00."),
    ("It's Grainne from accounts... so the VAT export runs on the 3rd of each month.",
     "the VAT export runs on the 3rd of each month."),
    ("Ok hi, this is, Amara, night porter at the east gate.", ""),
    ("I'm Lukas, the lab's safety officer: fume hoods are certified every 6 months.",
     "fume hoods are certified every 6 months."),
    # A value, not the writer: these stay as they are.
    ("It's Kestrel, the new backup server.", "It's Kestrel, the new backup server."),
    ("It's Nextcloud from the staff portal.", "It's Nextcloud from the staff portal."),
    ("It's Halcyon from now on.", "It's Halcyon from now on."),
    ("This is Kestrel, the new backup server.", "This is Kestrel, the new backup server."),
    ("This is Fedora 40, not Ubuntu.", "This is Fedora 40, not Ubuntu."),
])
def test_the_writer_introducing_themselves_is_not_part_of_the_fact(sentence: str,
                                                                   kept: str) -> None:
    assert strip_residue(sentence) == kept


def test_a_voicemail_greeting_with_the_callers_name_stays_out_of_the_body(
        role: LocalActionability) -> None:
    ex = role.extract(FeedbackContext(
        "e1", "t", "visitor parking at the depot", "Visitors park in bay C.",
        "Yeah hello, this is Bongani, site supervisor at the north depot. Visitors park "
        "in bay F now, bay C is for the fuel tankers only.", "down"), Meter())
    assert "Bongani" not in ex.body and ex.body.startswith("Visitors park in bay F"), ex.body


@pytest.mark.parametrize(("query", "comment", "body"), [
    ("what's the retention on the audit bucket?", "It's 400 days, set by legal.",
     "The retention on the audit bucket is 400 days, set by legal."),
    ("where are the spare badges kept", "They're in key safe KS-2 behind reception.",
     "They're in key safe KS-2 behind reception."),  # "where ... kept": not "where is X"
    ("where are the spare badges?", "They're in key safe KS-2 behind reception.",
     "The spare badges are in key safe KS-2 behind reception."),
    ("what's my mailbox quota?", "It's 50 GB for everyone.", "It's 50 GB for everyone."),
])
def test_it_in_a_reply_to_what_is_x_reads_as_x(role: LocalActionability, query: str,
                                              comment: str, body: str) -> None:
    ex = role.extract(FeedbackContext("e1", "t", query, "I don't know.", comment, "down"),
                      Meter())
    assert ex.body == body, ex.body


def test_asking_the_assistant_not_to_suggest_it_is_not_part_of_the_body(
        role: LocalActionability) -> None:
    ex = role.extract(FeedbackContext(
        "e1", "t", "enable guest checkout on the shop tablet", "Turn on Guest Checkout.",
        "Guest Checkout is disabled on all shop tablets by the payments team, and only "
        "they can enable it. Please don't recommend that again.", "down"), Meter())
    assert ex.body == ("Guest Checkout is disabled on all shop tablets by the payments "
                       "team, and only they can enable it."), ex.body


def test_a_runbook_step_that_writes_a_file_is_a_step(role: LocalActionability) -> None:
    ex = role.extract(FeedbackContext(
        "e1", "t", "how do I rotate the API key", "Regenerate it in the portal.",
        "Regenerate it with `keyctl rotate --service billing`. Write the new key to "
        "/etc/billing/api.key, mode 0600, then restart billing-api.", "down"), Meter())
    assert "/etc/billing/api.key" in ex.body, ex.body


@pytest.mark.parametrize(("comment", "actionable"), [
    ("What the review settled on is 45 minutes of idle before the kiosk logs out. Not "
     "sure about the screensaver picture though.", True),
    ("What the review settled on is 45 minutes of idle before the kiosk logs out. Don't "
     "quote me on that.", False),
    ("What the review settled on is 45 minutes of idle before the kiosk logs out. Not "
     "sure about the kiosk part really.", False),
])
def test_a_doubt_about_something_else_leaves_the_fact(role: LocalActionability, comment: str,
                                                      actionable: bool) -> None:
    ex = role.extract(FeedbackContext("e1", "t", "when does the kiosk log out",
                                      "The kiosk logs out after 10 minutes.", comment, "down"),
                      Meter())
    assert ex.can_produce_nugget is actionable, ex


def test_a_sentence_telling_what_went_wrong_once_is_the_story(role: LocalActionability) -> None:
    ex = role.extract(FeedbackContext(
        "e1", "t", "who restocks the label printer", "Anyone can restock it.",
        "Friday was chaos. The scanner crashed twice, the courier came an hour late, and "
        "dock 2 was blocked. Only the dispatch lead restocks the label printer, the rolls "
        "are in cupboard D4.", "down"), Meter())
    assert ex.body.startswith("Only the dispatch lead restocks"), ex.body
    assert "crashed" not in ex.body, ex.body


@pytest.mark.parametrize(("query", "comment", "body"), [
    # A frame ending in "that" after an aside leaves a clause, not a demonstrative.
    ("when do the loading bay doors close",
     "Having asked the facilities desk, I was told - and I pass it on for the next "
     "person - that the loading bay doors close at 18:00 on weekdays, and that only "
     "security can open them later.",
     "The loading bay doors close at 18:00 on weekdays, and only security can open them "
     "later."),
    ("how long are visitor badges valid",
     "Please note that visitor badges expire at midnight and are not reissued.",
     "Visitor badges expire at midnight and are not reissued."),
    ("how long are visitor badges valid",
     "I add also that visitor badges for contractors last one week.",
     "Visitor badges for contractors last one week."),
    ("who has the kiln room key",
     "Hi there, the kiln room key is kept by the ceramics technician, in drawer K3.",
     "The kiln room key is kept by the ceramics technician, in drawer K3."),
    # The clause-final particle "o" is emphasis.
    ("when is the generator tested",
     "Abeg note it: the generator is tested every Saturday at 07:00 o. Nobody else "
     "starts it.", "The generator is tested every Saturday at 07:00. Nobody else starts it."),
])
def test_frames_greetings_and_particles_leave_the_clause_as_written(
        role: LocalActionability, query: str, comment: str, body: str) -> None:
    ex = role.extract(FeedbackContext("e1", "t", query, "There is no rule.", comment, "down"),
                      Meter())
    assert ex.body == body, ex.body


@pytest.mark.parametrize("comment", [
    "Only just got back off the Glasgow site visit so I can settle this one: the fire "
    "door on level 2 stays locked after 20:00.",
    "That's not how we run it at all. The fire door on level 2 stays locked after 20:00.",
    "This is not the right procedure; the fire door on level 2 stays locked after 20:00.",
    "That's only half the story. The fire door on level 2 stays locked after 20:00.",
    "The answer should really mention that the fire door on level 2 stays locked after "
    "20:00.",
])
def test_where_the_writer_was_and_verdicts_on_the_whole_answer_are_not_the_fact(
        role: LocalActionability, comment: str) -> None:
    ex = role.extract(FeedbackContext("e1", "t", "fire door level 2", "It is always open.",
                                      comment, "down"), Meter())
    assert ex.body == "The fire door on level 2 stays locked after 20:00.", ex.body


@pytest.mark.parametrize(("comment", "body"), [
    ("You wrapped the upgrade in a screen session on the jump host. That gets killed "
     "when the VPN drops; run it under systemd-run on the target instead.",
     "Wrapping the upgrade in a screen session on the jump host gets killed when the VPN "
     "drops; run it under systemd-run on the target instead."),
    ("You copied the certificate into /etc/ssl/private. That's wrong for nginx here, it "
     "reads /srv/tls/site.pem.", None),
])
def test_that_after_what_the_answer_did_names_the_doing(role: LocalActionability, comment: str,
                                                        body: str | None) -> None:
    ex = role.extract(FeedbackContext("e1", "t", "upgrade the web host", "Run it.", comment,
                                      "down"), Meter())
    if body is not None:
        assert ex.body == body, ex.body
    assert not ex.body.startswith(("That", "This")), ex.body


@pytest.mark.parametrize("comment", [
    "The desk 4 scanner only works on the rear USB port. Took me 40 min to find that out.",
    "Off the night shift, tried it for half an hour with two cables. The desk 4 scanner "
    "only works on the rear USB port.",
])
def test_the_time_a_task_took_the_writer_is_the_story_even_with_a_number(
        role: LocalActionability, comment: str) -> None:
    ex = role.extract(FeedbackContext("e1", "t", "scanner on desk 4", "Plug it in.", comment,
                                      "down"), Meter())
    assert ex.body == "The desk 4 scanner only works on the rear USB port.", ex.body


@pytest.mark.parametrize(("sentence", "kept"), [
    ("that the loading bay doors close at 18:00.", "The loading bay doors close at 18:00."),
    ("that spare keys are held at reception.", "Spare keys are held at reception."),
    # A demonstrative before a verb or a singular noun points back; it stays.
    ("That index can't serve range queries.", "That index can't serve range queries."),
    ("That settings page is gone in GNOME 47.", "That settings page is gone in GNOME 47."),
    ("That process has to run as root.", "That process has to run as root."),
])
def test_a_leftover_that_before_a_clause_goes_and_a_demonstrative_stays(sentence: str,
                                                                       kept: str) -> None:
    assert sentence_case(strip_residue(sentence)) == kept


def test_a_heading_over_a_list_is_not_a_fact_and_a_scoped_failure_is(
        role: LocalActionability) -> None:
    ex = role.extract(FeedbackContext(
        "e1", "t", "kiosk rules in the lobby", "Kiosks can be used by anyone.",
        "Lobby kiosk rules (from Priya, after the March audit):\n"
        "- the guest Wi-Fi is no use for kiosks, it doesn't work behind the reception desk\n"
        "- kiosks lock after 5 minutes idle", "down"), Meter())
    assert not ex.body.startswith("Lobby kiosk rules"), ex.body
    assert "it doesn't work behind the reception desk" in ex.body, ex.body
    assert "5 minutes" in ex.body, ex.body


@pytest.mark.parametrize(("query", "comment", "body"), [
    # Thanks and what the help did for the writer are not part of the fact.
    ("where do the loan laptops charge", "They charge in the cage in room B12, not at the "
     "desk. Cheers again for sorting the rota sheet, it has saved my mornings.",
     "They charge in the cage in room B12, not at the desk."),
    # A frame ("she was adamant that", "came over and showed us that") goes with the
    # writer's story around it; a list in brackets stays one clause.
    ("which network do the lobby screens use",
     "I rang Marta on Friday and she was adamant that everything in the lobby (screens, "
     "the kiosk, the visitor tablet) joins LOBBY-NET, never the staff network.",
     "Everything in the lobby (screens, the kiosk, the visitor tablet) joins LOBBY-NET, "
     "never the staff network."),
    ("can I undo a deleted scan",
     "Piotr came over and showed us that deleted scans stay in the Bin folder of the scan "
     "share for 14 days, so we sorted it ourselves in ten minutes.",
     "Deleted scans stay in the Bin folder of the scan share for 14 days."),
    # The writer's story before a colon goes; the rule after it stays.
    ("how do I book the minibus",
     "I was about to email the office when Leon reminded me how it works here: the "
     "minibus is booked in the FLEET calendar by a team lead, at least two days ahead.",
     "The minibus is booked in the FLEET calendar by a team lead, at least two days ahead."),
])
def test_stories_frames_and_thanks_around_a_rule_go(role: LocalActionability, query: str,
                                                    comment: str, body: str) -> None:
    ex = role.extract(FeedbackContext("e1", "t", query, "Ask anyone.", comment, "down"),
                      Meter())
    assert ex.body == body, ex.body


def test_the_other_side_of_an_exception_is_kept_with_it(role: LocalActionability) -> None:
    ex = role.extract(FeedbackContext(
        "e1", "t", "badge reader on the annex door", "Badge in as usual.",
        "The reader on door A3 at the annex ignores visitor badges, visitors have to ring "
        "the bell. In all the other buildings the readers work fine.", "down"), Meter())
    assert ex.body == ("The reader on door A3 at the annex ignores visitor badges, visitors "
                       "have to ring the bell. In all the other buildings the readers work "
                       "fine."), ex.body


def test_a_handover_note_loses_its_byline_and_keeps_its_labels_and_repairs(
        role: LocalActionability) -> None:
    ex = role.extract(FeedbackContext(
        "e1", "t", "mailbox quotas", "Everyone gets 2 GB.",
        "Notes for the new admin - Ines Duarte (Brightline IT), from my last week\n"
        "* quotas: 5 GB staff, 20 GB researchers, 50 GB labs (edit: 30 GB researchers, "
        "agreed in May)\n* quota raises go through the MAIL queue", "down"), Meter())
    assert "Ines Duarte" not in ex.body, ex.body
    assert "Quotas: 5 GB staff, 30 GB researchers, 50 GB labs" in ex.body, ex.body
    assert "20 GB" not in ex.body and "agreed in May" not in ex.body, ex.body


@pytest.mark.parametrize(("query", "answer", "comment", "body"), [
    ("lab pc screen lock", "It locks after 20 minutes.",
     "Was 20 min until the review in March, now it's 10 minutes on all lab PCs.",
     "Was 20 min until the review in March, now it's 10 minutes on all lab PCs."),
    ("hide the sidebar in the viewer", "Press F9 to print.", "Nope. F9 hides the sidebar.",
     "F9 hides the sidebar."),
    ("two monitors on the reception desk", "Mirror them.",
     "Reception runs Join Displays, left monitor set as Primary Display, right one for the "
     "queue screen.",
     "Reception runs Join Displays, left monitor set as Primary Display, right one for the "
     "queue screen."),
    ("zoom in the booking app", "Use the Zoom setting.",
     "In the booking app Ctrl++ zooms up to 200% (I do it every morning on the front "
     "desk).", "In the booking app Ctrl++ zooms up to 200%."),
    ("guest wifi for the lab", "Use LAB-NET.",
     "Hello po, sorry but guests must not join LAB-NET, only GUEST-NET. And the LAB-NET "
     "key is not on the whiteboard anymore, facilities wiped it last month.",
     "Guests must not join LAB-NET, only GUEST-NET. The LAB-NET key is not on the "
     "whiteboard anymore, facilities wiped it last month."),
    ("turn on mouse keys", "Use the Accessibility menu.",
     "Pressing Shift+Alt+NumLock toggles mouse keys, which is what happened to a visitor "
     "at the kiosk yesterday when the pointer 'froze'. (Kiosk 3 has no number pad at all.)",
     "Pressing Shift+Alt+NumLock toggles mouse keys. Kiosk 3 has no number pad at all."),
    ("locker key", "Ask reception for the locker key.",
     "Lockers open with the staff badge, there's no key for them at all, so why would "
     "anyone ask reception for one?", "Lockers open with the staff badge, there's no key "
     "for them at all."),
])
def test_old_values_bracketed_asides_stories_and_rhetoric_leave_the_facts(
        role: LocalActionability, query: str, answer: str, comment: str, body: str) -> None:
    ex = role.extract(FeedbackContext("e1", "t", query, answer, comment, "down"), Meter())
    assert ex.body == body, ex.body


@pytest.mark.parametrize(("query", "comment", "kept", "gone"), [
    # A heading that scopes its list stays; one that only says who it is for goes.
    ("print from the new pc", "Steps that work at the Leeds office:\n1. Open Settings > "
     "Printers and unlock it\n2. Add LEEDS-MFP-2 by its address", ["Leeds office"], []),
    ("vpn error 809", "For anyone else from Finance who gets this:\n1. Switch the VPN "
     "profile to CORP-IKEV2\n2. Restart the laptop", ["CORP-IKEV2"], ["For anyone"]),
    ("copy the ssh key", "Copy the key to the other hosts:\n- web1.corp.example\n- "
     "web2.corp.example", ["Copy the key to the other hosts"], []),
    # A story told wholly in brackets, and a bare "unfortunately not", go.
    ("raise the mailbox quota", "Unfortunately not (we asked twice last spring). Quotas "
     "are fixed at 50 GB for all staff. (We lost a whole afternoon to this last year.)",
     ["Quotas are fixed at 50 GB for all staff"], ["Unfortunately", "afternoon"]),
])
def test_headings_and_bracketed_stories(role: LocalActionability, query: str, comment: str,
                                        kept: list[str], gone: list[str]) -> None:
    ex = role.extract(FeedbackContext("e1", "t", query, "Ask the helpdesk.", comment, "down"),
                      Meter())
    assert all(k in ex.body for k in kept) and not any(g in ex.body for g in gone), ex.body


def test_a_real_question_with_a_so_how_tail_stays_a_question(role: LocalActionability) -> None:
    ex = role.extract(FeedbackContext(
        "e1", "t", "archive format", "Use zip.", "What is the difference between tar.zst "
        "and zip for our 2 TB archive share, so how long would each take?", "down"), Meter())
    assert not ex.can_produce_nugget, ex


@pytest.mark.parametrize(("message", "repaired"), [
    ("Guest accounts expire after sixty days - sorry, a hundred and eighty days, since "
     "the spring review.", "Guest accounts expire after 180 days, since the spring review."),
    ("The token lasts twelve hours, I mean twenty-four hours.", "The token lasts 24 hours."),
    # Units that differ are not a repair of the value.
    ("Ten laptops, sorry, two trolleys.", "Ten laptops, sorry, two trolleys."),
])
def test_a_repair_in_words_replaces_the_value_it_repairs(message: str, repaired: str) -> None:
    assert apply_self_corrections(message) == repaired


def test_a_rule_only_quoted_from_an_old_source_with_a_guess_is_not_a_correction(
        role: LocalActionability) -> None:
    ex = role.extract(FeedbackContext(
        "e1", "t", "lock the screen", "Press Super+L.",
        "My 2014 induction binder says 'hold the power button for three seconds to lock'. "
        "Guess that was before the new laptops.", "down"), Meter())
    assert not ex.can_produce_nugget, ex


@pytest.mark.parametrize(("query", "comment"), [
    ("export a table as csv", "Pouvez-vous répondre en français, s'il vous plaît ? Mon "
     "anglais technique n'est vraiment pas très bon."),
    ("kiosk reset", "A Reddit thread from 2018 says the lobby kiosks reset every night at "
     "02:00. Haven't checked it myself."),
    ("upgrade my desktop", "Hoping to move my desktop to Fedora 41 after the audit, maybe "
     "over Easter."),
])
def test_other_languages_unchecked_sources_and_plans_are_not_corrections(
        role: LocalActionability, query: str, comment: str) -> None:
    ex = role.extract(FeedbackContext("e1", "t", query, "Ask IT.", comment, "down"), Meter())
    assert not ex.can_produce_nugget, ex


@pytest.mark.parametrize(("comment", "kept", "gone"), [
    ("Per SEC-4.1, the side gate badge must be worn on site. Per SEC-4.1.2, a lost badge "
     "could be reused by anyone at the side gate, so report it within an hour.",
     "could be reused", ""),
    ("The side gate is closed after 19:00. Had to ring facilities from the car park to "
     "get out.", "The side gate is closed after 19:00.", "ring facilities"),
    ("The side gate is closed after 19:00. Please make the bot stop saying it is open "
     "till 22:00.", "The side gate is closed after 19:00.", "bot"),
])
def test_passive_modals_stay_and_stories_and_requests_to_the_bot_go(
        role: LocalActionability, comment: str, kept: str, gone: str) -> None:
    ex = role.extract(FeedbackContext("e1", "t", "when is the side gate closed",
                                      "Anything goes.", comment, "down"), Meter())
    assert kept in ex.body and (not gone or gone not in ex.body), ex.body


def test_a_guess_taken_back_leaves_what_holds() -> None:
    """Written for this test (a bike-share depot)."""
    from optimizer.local.residue import apply_self_corrections
    assert apply_self_corrections(
        "Bay C charges e-bikes. The gate opens at 06:00 I think... no, sorry, the gate "
        "opens at 05:30 on weekdays, just checked.") == (
        "Bay C charges e-bikes. The gate opens at 05:30 on weekdays.")
    # no retraction word after "no": a plain statement stays whole
    kept = "Pedal bikes are checked weekly, no exceptions for the new fleet."
    assert apply_self_corrections(kept) == kept


def test_a_title_is_the_question_asked_first_not_the_reason_after_it() -> None:
    assert topic_of("How do I stop the scale beeping? It wakes the night baker.") == (
        "How do I stop the scale beeping?")
    # a question after its context keeps the context it points back to
    assert topic_of("A driver left on Friday. How do I close his fuel card?") == (
        "A driver left on Friday. How do I close his fuel card?")
