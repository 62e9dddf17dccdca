"""A corpus-change scenario shared by the re-probe tests (embedded runner and Kafka): two
corrections of the portal tenant, a page that buries one of them, a page that reaches
neither."""

from __future__ import annotations

RESET = ("who can reset another user's password in the portal?",
         "Team leads can reset passwords from the admin panel.",
         "No. In portal v8.2 only the Workspace Owner can reset another user's password; "
         "team leads cannot.")
AUDIT = ("how do I export the audit log for my workspace?",
         "Open the admin panel and click Export.",
         "The audit log export moved: in v8.2 it is under Settings > Compliance > Audit log, "
         "and only the Security Officer role sees it.")
#: A new FAQ page whose title is one of the reset nugget's probe queries: it pushes the
#: nugget out of that probe's answer (an FAQ import outranking a correction). It names the
#: workspace too, a word of the audit nugget's trigger query, so that nugget is re-probed
#: and still passes.
FAQ = {"id": "faq-portal-reset", "title": "Portal reset password",
       "text": "Portal reset password Team Leads can reset another user's password in the "
               "portal from the admin panel of their workspace: open the gear menu, pick the "
               "member and choose Reset password."}
UNRELATED = {"id": "kb-invoices", "title": "Printing invoices",
             "text": "Invoices are printed from the Billing page as PDF files on A4 paper."}
