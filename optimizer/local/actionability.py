"""Local actionability and extraction, decided from what the feedback's sentences are.

A message is actionable when at least one of its sentences is a *claim*: it names a
concrete item (number, version, path, key combination, menu path, quoted string,
address, name) or states a rule (a modal, negation or policy verb over something the
organisation does), says something the answer did not, is on the conversation's topic,
and is neither a question, an opinion, praise, a remark about the answer itself, nor
text addressed to the system. Whether the user also says "that's wrong" does not
matter: a policy stated plainly is as actionable as a correction with a cue.

Extraction keeps every claim sentence as the user wrote it (opening discourse markers
and remarks about the answer removed, "it"/"there" resolved where the sentence they
refer to was dropped), never the answer's superseded claim, and titles the nugget with
the trigger query made into a topic or a question (see :mod:`optimizer.local.titles`).

Feedback is untrusted data. A message with any text addressed to the system (role
prefixes, attempts to override instructions, requests to publish or label, claimed
confidence, secret values) is refused as a whole: none of it becomes a nugget.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from nuggetflow.logging import get_logger
from optimizer.accounting import Meter, estimate_tokens
from optimizer.claims import (
    CONVERSATION_REFERENCE,
    EVALUATIVE,
    IRREGULAR_PAST,
    MODALS,
    POLICY,
    POSITIVE,
    ROLE_WORDS,
    RULE_OR_ADVICE,
    RULE_WORD,
    STANCE_START,
    STRONG_KINDS,
    Item,
    SentenceView,
    addressed_to_system,
    capitalized,
    clause_in_past,
    clause_split,
    content_stems,
    english_word,
    is_negated,
    is_self_introduction,
    items,
    normalize,
    novel_items,
    past_tense,
    plain_text,
    plain_voice,
    sentence_case,
    split_sentences,
    strip_discourse,
    tokens,
    view,
)
from optimizer.lexicon import INSTRUCTION_VERBS
from optimizer.local.layout import (
    PRESENT_RULE_WORD,
    advice_as_instruction,
    affirmed_questions_as_statements,
    aligned_tables_as_pipes,
    analogy_as_statement,
    announced_scope_joined,
    answered_questions_as_statements,
    arrows_as_values,
    banner_removed,
    bare_answer_as_subject,
    before_after_read,
    bookkeeping_removed,
    boxed_lines_unboxed,
    broken_lines_joined,
    chat_as_lines,
    checkmarks_as_statements,
    circled_numbers_as_bullets,
    code_comments_as_text,
    code_in_sentence_joined,
    commit_lines_removed,
    config_as_statements,
    dashed_pairs_as_labels,
    diff_as_lines,
    do_labels_read,
    does_question_as_claim,
    form_fields_as_lines,
    fragment_questions_as_conditions,
    handover_status_removed,
    headings_as_labels,
    joke_removed,
    leading_asides_removed,
    learned_fact_unframed,
    list_lead_trimmed,
    log_lines_removed,
    minutes_as_decisions,
    minutes_residue_removed,
    negative_question_as_claim,
    plain_version_read,
    pointed_command_named,
    qa_pairs_as_statements,
    quiz_answer_read,
    quiz_key_read,
    quoted_question_answered,
    records_read,
    reminder_question_as_statement,
    restated_code_removed,
    rhetorical_tail_as_statement,
    rota_removed,
    shell_comments_as_text,
    shown_file_read,
    signature_removed,
    sql_statements_joined,
    state_labels_as_statements,
    statement_before_question_split,
    states_pairs,
    strip_line_labels,
    struck_through_removed,
    tables_as_statements,
    value_lists_joined,
)
from optimizer.local.message_check import MessageCheck, may_veto, shipped_check
from optimizer.local.residue import (
    BOT_TAIL,
    CHANGE_VERBS,
    CONDITION_ONLY,
    COUNT_WORDS,
    DANGLING_CONDITION,
    announces,
    apply_self_corrections,
    forwarded_message,
    is_greeting,
    reply_scope,
    scoped,
    strip_frame,
    strip_mention,
    strip_quoted,
    strip_residue,
    strip_sign_off,
    without_asides,
    without_greeting,
    writer_named,
)
from optimizer.local.titles import scope_of, task_of, title_for
from optimizer.types import Extraction, FeedbackContext
from query.embeddings import CachedVectors, Embedder
from query.text import STOPWORDS

log = get_logger(__name__)

MAX_BODY_SENTENCES = 3
RELEVANCE_MIN = 0.15  # cosine a message needs to the conversation when no word is shared
# Words every support conversation uses; sharing only these is not sharing a topic.
_GENERIC = frozenset(content_stems("""use get make go see need want work try thing way
time new one also just still really please thank thanks help question answer know""") )
#: Thanks, or a success said of the answer or the asker ("that worked", "fixed it",
#: "saved me"): with no rule next to it, the sentence is praise.
_PRAISE = re.compile(
    # "was exactly what I needed", "just what we were looking for"
    r"\b(?:exactly|just|precisely)\s+what\s+(?:i|we)\s+(?:needed|need|wanted|was\s+looking\s+for|"
    r"were\s+looking\s+for)\b|"
    r"\b(?:thanks|thank you|thx|ty|cheers|kudos)\b|\b(?:worked|works|fixed|solved|helped|"
    r"saved|did the trick)\s+(?:it|that|this|me|my|us|our|for me|for us|like a charm|"
    r"perfectly|great|fine|first try|the first time|first time|right away|straight away|"
    r"instantly|immediately)\b|(?<!how )\b(?:it|that|this|which)\s+(?:worked|works|helped|"
    r"fixed it|did "
    r"it|did the trick)\b|\bworks? now\b|\ball good\b|\bfine again\b|\bback to normal\b|"
    r"\b(?:loving|love) (?:the|this|it|your)\b|\bkeep (?:it up|up the good work)\b|"
    r"\b(?:is|are|was|were)\s+(?:(?:very|so|really|greatly|truly|much)\s+)*appreciated\b",
    re.IGNORECASE)
#: Agreement with the answer.
_CONFIRM = re.compile(r"^(?:yes|yep|yeah|exactly|correct|right|indeed|true|agreed)\b",
                      re.IGNORECASE)
_UPDATE_BOT = re.compile(r"\b(?:update|fix|correct|retrain|teach)\s+(?:the|your)\s+(?:assistant|"
                         r"bot|ai|chatbot|model)\b", re.IGNORECASE)
#: An imperative addressed to the assistant ("give me the commands", "show me", "please
#: update the assistant, it's sending people into Sharing").
_TO_ASSISTANT = re.compile(r"^(?:just\s+|please\s+)?(?:give|show|tell|send|explain|write)"
                           r"\s+(?:me|us)\b|^(?:so\s+)?(?:please\s+)?(?:update|fix|correct|"
                           r"retrain|teach)\s+(?:the|your)\s+(?:assistant|bot|ai|chatbot|model)\b",
                           re.IGNORECASE)
#: Whom the message is for: "this is for whoever looks after the assistant feedback".
_FOR_WHOEVER = re.compile(r"^(?:so\s+)?(?:this|it)(?:'s|\s+is)\s+(?:(?:just|mainly|mostly)\s+)?"
                          r"for\s+(?:whoever|whomever|anyone\s+who|the\s+(?:person|people|"
                          r"team|folks)\s+(?:who|that)|those\s+who)\s+(?:looks?|runs?|"
                          r"maintains?|handles?|reads?|owns?|manages?|looking|running)\b",
                          re.IGNORECASE)
#: "Please stop sending people to that panel": what the answers do, said to the assistant
#: (with a named item it states the rule too: "Stop telling people to run VACUUM FULL").
_STOP_TELLING = re.compile(r"^(?:so\s+)?(?:please\s+)?(?:stop|quit)\s+(?:telling|sending|pointing|"
                           r"directing|recommending|suggesting)\s+(?:people|users|staff|everyone|"
                           r"them|us)\b", re.IGNORECASE)
#: An order to tell a person or a team something, not the assistant: "tell the on-call in
#: SEISOPS before you start", "inform your manager first".
_TELL_SOMEONE = re.compile(r"^(?:(?:oh\s+)?and\s+|also\s+|then\s+)?(?:tell|inform|notify|warn|"
                           r"ping)\s+(?:the|your)\s+(?!(?:bot|assistant|ai|model|answer)\b)"
                           r"[\w-]+(?:\s+[\w-]+)?\s+(?:in|on|at|from|before|after|when|if|first|"
                           r"about|that)\b", re.IGNORECASE)
#: What an answer left out ("nothing about X", "doesn't mention Y").
_COVERAGE = re.compile(r"\b(?:nothing (?:about|on)|no mention|(?:does(?:n't| not)|did(?:n't|"
                       r" not)|never) (?:mention|cover|explain|say|talk about)|missing|lacks|"
                       r"too (?:shallow|short|long|vague|basic))\b", re.IGNORECASE)
#: A negative imperative: "don't install lxc on other servers", "never use backports".
_PROHIBITION = re.compile(r"^(?:(?:and|but|so|also|please)\s+)*(?:don't|do not|never|dont)\s+"
                          r"(?:(?:ever|please|try to)\s+)?[a-z]", re.IGNORECASE)
#: What the writer's machine shows, announced over pasted output: "this is what I get
#: on HV-04:", "here's what we see:".
_WHAT_I_GET = re.compile(r"^(?:so\s+)?(?:this|that|here)(?:'s|\s+is)\s+what\s+(?:i|we)\s+"
                         r"(?:get|got|see|saw|have)\b[^.!?]*:?$", re.IGNORECASE)
#: A place in the answer's text: "in the first sentence", "in your second paragraph".
_ANSWER_PLACE = re.compile(r"\b(?:in|of)\s+(?:the|your)\s+(?:first|second|third|last|final|"
                           r"opening|closing)\s+(?:sentence|line|paragraph|bullet|step)\b",
                           re.IGNORECASE)


def _spelling_fix(text: str) -> bool:
    """The sentence mends the answer's spelling of an English word: "typo: 'cummulative'
    in the first sentence should be 'cumulative'" (not a name or a value put right, "the
    share is 'fs02', not 'fs20'")."""
    quoted = re.findall(r"['\"\u2018\u201c]([A-Za-z][a-z-]{2,30})['\"\u2019\u201d]", text)
    return bool(_TONE.search(text) or _ANSWER_PLACE.search(text)) and len(quoted) == 2 and \
        english_word(
        quoted[1].lower()) and quoted[0].lower() != quoted[1].lower() and \
        difflib.SequenceMatcher(None, quoted[0].lower(), quoted[1].lower()).ratio() >= 0.8


#: A link with nothing else: "https://www.postgresql.org/docs/15/jsonb-subscripting.html".
_BARE_LINK = re.compile(r"<?(?:https?://|www\.)\S+?>?[.!]?")
#: A measured figure: "812 ms", "4.2 Mbps", "61%", "1.4 GB".
_MEASURED = re.compile(r"\b\d+(?:[.,]\d+)?\s*(?:ms|s|secs?|seconds|min|minutes|%|[KMGT]i?B|"
                       r"[KMG]bps|Mbit/s|rps|qps|tps)(?![\w/])", re.IGNORECASE)
#: A question that asks why things are so: "Why is every X this bad", "Why does Y always".
_WHY_SO = re.compile(r"^(?:but\s+|and\s+|honestly,?\s+)?why\s+(?:is|are|does|do|must|can't|won't|"
                     r"doesn't|don't)\b", re.IGNORECASE)
#: "We use X", "Our clinics run Y": what the house uses, by name.
_WE_USE = re.compile(r"(?:we|our\s+[\w-]+)\s+(?:use|run|have|go\s+with|rely\s+on|"
                     r"standardi[sz]ed\s+on)\s+\S", re.IGNORECASE)
def _names_what_we_use(text: str, answer: str) -> bool:
    """ "We use logwatch", "Our clinics run Orthanc": what the house uses, in the present,
    named by a word that is no English word and that the answer did not name."""
    return bool(_WE_USE.match(text.strip())) and not past_tense(text) and any(
        t.isalpha() and not english_word(t) and t not in answer.lower() for t in tokens(text))


#: A thing said to be allowed: "Passphrases of three or more random words are fine.",
#: "Personal mugs in the lab kitchen are OK." (not "That's fine", "The rest is fine").
_PERMITTED = re.compile(r"^(?!(?:that|this|it|which|the\s+(?:answer|rest|reply|steps?|tip)|your|"
                        r"yours|both|everything|all\s+of)\b)[\w-]+(?:\s+[\w/.-]+){1,8}\s+(?:is|are)\s+"
                        r"(?:totally\s+|perfectly\s+|also\s+|still\s+)?(?:fine|ok|okay|acceptable|"
                        r"allowed|permitted)\b[.!]?$", re.IGNORECASE)
#: A ban said without its verb: "No food in the booth.", "No home-made triggers for X."
#: (not "No idea", "No worries", "No way", "No one ...").
_BAN = re.compile(r"^(?:(?:and|also|so|plus|again)\s+)?no\s+(?!(?:one|idea|way|need|problem|"
                  r"problems|worries|thanks|clue|luck|longer|more|matter|doubt|rush|sorry|issue|"
                  r"issues|big|change|changes|difference|response|reply|answer|joy|dice|chance|"
                  r"wonder|kidding|offence|offense|pressure|hurry)\b)[a-z]", re.IGNORECASE)
#: Words about how an answer is written, not what it says.
_TONE = re.compile(r"\b(?:tone|style|format|formatting|bullet(?: points)?|emojis?|verbose|"
                   r"lectur(?:e|ing)|preachy|jargon|"
                   r"wordy|rude|polite|impolite|condescending|patronizing|robotic|formal|"
                   r"informal|friendlier|too (?:long|short|technical)|shorter|longer|language|"
                   r"german|english|french|spanish|typos?|misspel\w*|spelling\s+(?:mistake|"
                   r"error)|spell|spelled|spelt|american\s+way|british\s+way)\b", re.IGNORECASE)
#: How an answer is written (the subset of _TONE that never states a fact).
_STYLE = re.compile(r"\b(?:tone|formatting|bullet points|emojis?|verbose|wordy|rude|"
                    r"impolite|condescending|patronizing|robotic|lectur(?:e|ing)|preachy|"
                    r"jargon)\b", re.IGNORECASE)
#: A score given to the answer ("10/10", "5 stars").
_SCORE = re.compile(r"^\W*\d+\s*(?:/\s*\d+|stars?|out of \d+)\b", re.IGNORECASE)
#: "I'm not sure that's quite right": politeness about the answer, not doubt of one's own.
_POLITE = (r"(?!\s+(?:that|this|it|the answer|your answer)(?:'s|\s+is|\s+was)?\s+(?:quite\s+|"
           r"entirely\s+|100%\s+|completely\s+)?(?:right|correct|accurate|true|the case)\b)")
#: Hedges: a sentence that guesses is not a fact to publish.
_HEDGE = re.compile(r"^guess\b|\b(?:maybe|perhaps|probably|possibly|i think|i guess|i believe|"
                    r"i suppose|"
                    # (not the reader's doubt: "If you're not sure -> ask in #eng")
                    r"(?<!you're )(?<!you are )(?<!youre )not (?:100% )?sure" + _POLITE +
                    r"|no idea|"
                    # ("could be recovered from the totals": a passive, not a guess)
                    r"(?:might|could) be(?!\s+(?:\w+ed|\w+en|done|made|seen|set|kept|put)\b)|"
                    r"seems? to|"
                    r"apparently|"
                    r"afaik|iirc|i'm not certain|might be mixing|i may be wrong|don't quote me)\b",
    re.IGNORECASE)
#: A time of one event: what happened then is an incident, not a standing rule.
_EPISODIC = re.compile(r"\b(?:yesterday|last (?:night|week|month|year|time|friday|monday|"
                       r"tuesday|wednesday|thursday|saturday|sunday|january|february|march|"
                       r"april|may|june|july|august|september|october|november|december|"
                       r"spring|summer|autumn|fall|winter|term|semester|quarter)|"
                       r"back in (?:\d{4}|the\s+(?:day|days|old\s+days|\d{2,4}s))|this (?:morning|"
                       r"afternoon|evening)|earlier today|tonight|just now|\d+ (?:minutes?|"
                       r"hours?|days?) ago|an? (?:hour|minute|day) ago|in the end)\b",
                       re.IGNORECASE)
_MONTH = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
          r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)")
#: When something happened: a clock time or "today" (with a verb in the past tense).
_CLOCK_WHEN = re.compile(r"\b(?:today|(?:at|around|about|since)\s+\d{1,2}[:.]\d{2}|"
                         # "Dome closed 05:50, no faults": a past verb with its clock time
                         r"(?<=ed )\d{1,2}[:.]\d{2}|"
                         # "we had the power flicker twice on Saturday" (not "was renamed on
                         # Monday")
                         r"(?<!renamed )(?<!moved )(?<!changed )(?<!replaced )(?<!upgraded )"
                         r"(?<!migrated )(?<!switched )on\s+(?:monday|tuesday|wednesday|thursday|"
                         r"friday|saturday|sunday)(?!s))\b", re.IGNORECASE)
#: A date: "on 14 February", "in March 2023", "during the 3 May outage".
_DATE = re.compile(r"\b(?:(?:on|in|during)\s+(?:the\s+)?\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?"
                   + _MONTH + r"|(?:in|during)\s+" + _MONTH + r"\s+\d{4})\b", re.IGNORECASE)
#: A verb of what holds now: "The agreement signed on 12 February says X", "went to 45 in
#: August 2024 and the laptops are on 46".
_HOLDS_NOW = re.compile(r"\b(?:is|are|says|say|states|holds|applies|has|have|stays|runs|"
                        r"must|needs?)\b", re.IGNORECASE)


def _when(text: str) -> bool:
    """When something happened: a clock time, "today" or a weekday (with a verb in the
    past tense), or a date in a sentence that says nothing of what holds now."""
    return bool(_CLOCK_WHEN.search(text) or (
        _DATE.search(text) and not _HOLDS_NOW.search(text)))


#: A schedule, not an event: "at 02:30 every night", "now ... nightly".
_RECURRING = re.compile(r"\b(?:every|each|nightly|daily|weekly|monthly|hourly|always)\b",
                        re.IGNORECASE)
#: Hearsay from an unnamed source: "Someone on a forum said X", "Forecast says -4".
_HEARSAY = re.compile(
    r"^(?:someone|somebody|a\s+(?:colleague|friend|guy|forum|blog|video|post|thread|random)|"
    r"people|the\s+internet|reddit|google|chatgpt|(?:the\s+)?forecast|(?:the\s+)?weather|"
    r"(?:the\s+)?rumou?r)\b[^.]{0,60}?\b(?:said|says|claims?|claimed|reckons?|reckoned|"
    r"posted|wrote|told\s+(?:me|us))\b", re.IGNORECASE)
#: Whom the request is for: "It's for Marta on the weekend shift."
_FOR_WHOM = re.compile(r"^(?:it'?s|it is|this is|that'?s)\s+for\s+(?:my\s+|our\s+|a\s+|the\s+)?"
                       r"(?-i:[A-Z][a-z]+|[a-z]+)\b[^.]{0,40}$", re.IGNORECASE)
#: Policy words that state a rule by themselves ("set", "use" or "run" need more).
STRICT_POLICY = frozenset("""disabled enabled blocked forbidden prohibited allowed permitted
required enforced locked restricted reserved mandatory limited capped expires expire denied
rejected refused accepted approved only always never must""".split())


def _strict_policy(v: SentenceView) -> bool:
    # ("the UPS only lasted 11 minutes": "only" before a past verb measures, it restricts
    # nothing)
    words = set(tokens(_ONLY_PAST.sub(" ", v.text))) if "only" in tokens(v.text) else \
        set(tokens(v.text))
    return bool(words & STRICT_POLICY)


_ONLY_PAST = re.compile(r"\bonly\s+(?=(?:lasted|took|worked|ran|managed|got|had|reached|"
                        r"held|saw|found|made|came|went|needed|used)\b)", re.IGNORECASE)


#: "no way to tell which is which": a complaint, not a negated fact.
_NO_WAY = re.compile(r"\bno way to\b", re.IGNORECASE)
#: The asker's own need or plan, the context of a question ("need it for the cover",
#: "I need edit rights by Monday").
_PERSONAL_NEED = re.compile(r"^(?:i\s+)?(?:need|want|would like|am trying|trying|hoping|"
                            r"wondering|looking)\s+(?:it|this|that|to|for)\b|"
                            r"^i\s+(?:really\s+|urgently\s+|just\s+)?(?:need|want|would like|"
                            r"'d like)\b", re.IGNORECASE)
#: A malfunction that repeats ("keeps losing the wifi", "hangs every single time"): a
#: symptom to report, not a rule to publish.
_SYMPTOM = re.compile(
    # "keeps changing my fonts", "keeps eating our labels": what it does to the writer
    r"\b(?:keeps?|kept)\s+(?:on\s+)?\w+ing\s+(?:my|our|me|us)\b|"
    r"\b(?:keeps?|kept)\s+(?:on\s+)?(?:hanging|freezing|crashing|losing|dropping|failing|"
    r"disconnecting|stalling|jamming|lagging|dying|rebooting|restarting|timing out|breaking|"
    r"closing|logging (?:me|us) out)\b|\b(?:hangs?|freezes?|crash(?:es)?|drops?|fails?|"
    r"disconnects?|stalls?|jams?|lags?|dies|reboots?|times? out|breaks?|stops? working|"
    r"crackles?|flickers?|buzz(?:es)?|stutters?|glitch(?:es)?|slow|sluggish|laggy|unusable)\b"
    r"(?:\s+[\w']+){0,8}?\s+(?:every (?:single )?time|every few|every (?:single )?(?:morning|"
    r"afternoon|evening|night|day|week|weekend|hour|monday|tuesday|wednesday|thursday|friday|"
    r"saturday|sunday)|all the time|constantly|randomly|again and again|over and "
    r"over|at random)\b|\b(?:been|was|has been) like (?:that|this) (?:since|for)\b|"
    r"\btakes?\s+(?:ages|forever|an eternity|hours)\s+to\b|"
    r"\b(?:every (?:single )?time|whenever|each time)\s+(?:i|we)\s+(?:open|start|try|run|"
    r"click|log|plug|connect|use|print|load|launch|boot)\b",
    re.IGNORECASE)
#: What people know, remember or believe ("nobody understands the refund screen", "my
#: pupils think the corner is a magic trick"): an opinion.
_MENTAL = re.compile(
    r"\b(?:nobody|no one|everyone|everybody|people|anyone|i|we|they)\s+(?:[\w-]+\s+){0,4}?"
    r"(?:understands?|knows?|remembers?|cares?|gets it|realises?|realizes?|"
    r"(?:has|have|had) (?:ever )?heard of)\b|"
    r"\b(?:can't|cannot|don't|do not)\s+remember\b|"
    r"^(?:[\w'-]+\s+){1,4}(?:think|thinks|thought|believe|believes|assume|assumes)\b",
    re.IGNORECASE)
#: Doubt about one's own facts.
# ("afaik", "iirc" hedge only the sentence they stand in: see _HEDGE.)
_DEFAULT_VALUE = re.compile(r"\b(?:is|are|becomes|became|stays)\s+(?:now\s+|still\s+)?the\s+"
                            r"default\b|\bthe\s+default\s+(?:\w+\s+)?(?:is|are)\s+(?:now\s+)?"
                            r"\S|\bdefaults?\s+to\s+\S", re.IGNORECASE)
_UNSURE = re.compile(r"^guess\b|\b(?:(?<!you're )(?<!you are )(?<!youre )not (?:100% |entirely |"
                     r"totally )?sure" + _POLITE + r"|no idea"
                     r"(?!\s+about\s+(?:the\s+)?(?:rest|others?|other\s+\w+))"
                     # "no idea why Files is so slow": not knowing the cause of what one
                     # reports doubts nothing of it
                     r"(?!\s+(?:why|how\s+come)\b)|"
                     r"might be mixing|haven't (?:checked|verified|tested|tried)|have not "
                     r"(?:checked|verified|tested)|not (?:checked|verified)|unverified|"
                     r"may be (?:wrong|mixing)|might be wrong|don't quote me|something like|"
                     r"or something|(?:just\s+)?a\s+hunch|gut\s+feeling|my\s+(?:best\s+)?guess|"
                     # hearsay the writer asks about: "Heard from someone at X that ...
                     # Anyone know if that's actually true?"
                     r"(?:anyone|anybody|does\s+anyone|can\s+someone)\s+(?:know|confirm)\s+"
                     r"(?:if|whether)\s+(?:that|this|it)(?:'s|\s+is)\s+(?:actually\s+|really\s+)?"
                     r"true|is\s+(?:that|this|it)\s+(?:actually\s+|really\s+)?true)\b",
                     re.IGNORECASE)
#: What a doubt is about, when it says so: "don't quote me on the colours", "not sure
#: about the weekend rota".
_DOUBT_OBJECT = re.compile(r"\b(?:about|on|regarding|re)\s+(?:the\s+|those\s+|these\s+|our\s+|"
                           r"your\s+)?(?P<np>[\w'-]+(?:\s+[\w'-]+){0,3})", re.IGNORECASE)


def _doubt_elsewhere(text: str, others: Sequence[str]) -> bool:
    """A doubt that names what it is about, and that thing is in no other sentence of the
    message ("The number is 900 seconds. Don't quote me on the colours."): it hedges that
    thing, not the message's facts. "Not sure about that" names nothing."""
    m = _UNSURE.search(text)
    if m and re.search(r"\b(?:but|though)\s+(?:that's|that\s+is)\s+(?:another|a\s+different|a\s+"
                       r"separate)\s+(?:story|matter|question|issue|thing)\b", text[m.end():],
                       re.IGNORECASE):
        return True  # ("not convinced X is on the right VLAN but that's another story")
    obj = _DOUBT_OBJECT.search(text, m.end()) if m else None
    if obj is None:
        return False
    words = tokens(obj.group("np"))
    if not words or words[0] in ("that", "this", "it", "those", "these", "them", "any",
                                 "all", "everything", "anything", "exact", "exactly"):
        return False
    named = content_stems(obj.group("np")) - _GENERIC
    return bool(named) and not named & content_stems(" ".join(others))


#: Doubt about what the same sentence reports: "the old wiki says X, no idea if that's
#: still true".
_DOUBT = re.compile(r"\b(?:no idea|not sure|don't know|do not know|dunno|unsure|can't say|"
                    r"cannot say|not certain)\s+(?:if|whether)\b|\byou never know\b|"
                    # someone else's guess: "Stefan reckons ...", "he wasn't sure"
                    # (not "before anyone even thinks about dropping it")
                    r"\b(?:reckons|reckoned|thinks|believes|suspects)\b"
                    r"(?!\s+(?:about|of)\s+\w+ing\b)|"
                    r"\b(?:he|she|they)\s+(?:wasn't|weren't|isn't|aren't|was not|is not)\s+sure\b|"
                    r"\bsaid\s+(?:he|she|they)(?:'d|\s+would)\s+confirm\b", re.IGNORECASE)
#: The writer vouches for one fact among doubts: "this one I actually checked", "I know
#: this one for definite", "I checked myself with `chronyc sources`", "just looked".
_VOUCHED = re.compile(r"\b(?:(?:actually|personally|just|definitely|myself)\s+(?:checked|"
                      r"tested|verified|looked)|(?:checked|tested|verified)\s+(?:it\s+)?"
                      r"(?:myself|personally)|i\s+(?:know|checked)\s+this\s+one|for\s+"
                      r"(?:definite|certain|sure)\b|this\s+one\s+i\s+(?:actually\s+)?"
                      r"(?:checked|know|tested)|(?:yes it is|yep it is),?\s+just\s+looked)",
                      re.IGNORECASE)
def _vouched(text: str) -> bool:
    """The writer vouches for a fact ("checked it myself"), not "haven't checked it
    myself"."""
    return any(not re.search(r"\b(?:haven't|have not|hasn't|didn't|did not|not|never)\s+"
                             r"(?:\w+\s+)?$", text[max(0, m.start() - 20):m.start()],
                             re.IGNORECASE)
               for m in _VOUCHED.finditer(text))


#: "I must correct this answer, as it misrepresents ...": a note about correcting.
_CORRECTING = re.compile(r"^(?:i|we)\s+(?:must|have to|need to|should|would like to|wish to|"
                         r"feel obliged to)\s+(?:\w+ly\s+)?(?:correct|amend|challenge|dispute)\s+"
                         r"(?:this|that|the|your)\b", re.IGNORECASE)
#: A wish or a feature request: "it would be great if the assistant could ...", "I wish
#: the kiosk remembered me".
_WISH = re.compile(r"^(?:somebody|someone|anybody|anyone)\s+should\s+(?:really\s+)?(?:make|write|"
                   r"build|create|do|draw|film|invent)\b|"  # ("Somebody should make a version ...")
                   r"\b(?:it\s+(?:would|'d)\s+be\s+(?:\w+\s+)?(?:great|nice|good|helpful|handy|"
                   r"useful|awesome|lovely|amazing|ideal|better|cool|brilliant)\s+(?:if|to)\b|"
                   r"(?:i|we)\s+wish\b|(?:would|'d)\s+love\s+(?:it\s+)?(?:if|to)\b|"
                   r"feature request|(?:could|can) you (?:please )?add\b|"
                   r"(?:i|we)(?:'d|\s+would)\s+(?:much\s+)?(?:rather|prefer)\b|"
                   # "Would have been nice to know that before deadline"
                   r"\b(?:it\s+)?(?:would|'d)\s+have\s+been\s+(?:\w+\s+)?(?:nice|good|great|"
                   r"helpful|handy|useful|lovely)\b)", re.IGNORECASE)
#: The writer's appointments: "I have a deadline on Thursday", "we've got a demo at 3".
_APPOINTMENT = re.compile(r"\b(?:i|we)\s+(?:have|'ve got|'ve|got|had)\s+(?:a|an|my|our|the)\s+"
                          r"(?:\w+\s+)?(?:deadline|meeting|exam|presentation|demo|call|"
                          r"appointment|interview|review|audit|flight|class|lecture)\b",
                          re.IGNORECASE)
#: Context offered for a question: "we're on 13.0.1 if that matters", "fwiw".
_CONTEXT_NOTE = re.compile(r"\b(?:if (?:that|it|this) (?:matters|helps)|in case (?:that|it|this) "
                           r"(?:matters|helps)|for context|fwiw|for what it's worth|in case "
                           r"(?:you|anyone|someone|people) (?:saw|see|noticed|notice|wondered|"
                           r"were wondering|was wondering|missed))\b",
                           re.IGNORECASE)
#: What the writer needs from someone: "I need the number of accounts with sudo".
_NEED = re.compile(r"\b(?:i|we)\s+(?:urgently\s+|really\s+|still\s+)?need\s+(?:the|a|an|some|"
                   r"all|evidence|confirmation|a list|to know|to get|to have|to see)\b|"
                   r"\bplease advise\b|^(?:please\s+)?(?:advise|let (?:me|us) know|get back to "
                   r"(?:me|us))\b", re.IGNORECASE)
#: A remark to a colleague in the thread: "@Kenji this bit you last week" (not "@here").
_TO_COLLEAGUE = re.compile(r"^@(?!(?:here|channel|everyone|all)\b)[\w.-]+", re.IGNORECASE)
#: The assistant as the subject: "the bot could at least pretend", "one might have hoped
#: the assistant would know".
_ASSISTANT_SUBJECT = re.compile(
    # "Please make the assistant stop telling people that ..."
    r"\b(?:make|get|have|tell)\s+(?:the|this|your)\s+(?:bot|assistant|chatbot|ai|model)\s+"
    r"(?:stop|quit|say|tell|mention)\b|"
    r"\b(?:the|this|your|our)\s+(?:bot|assistant|chatbot|ai|tool|model)\s+(?:could|should|"
    r"would|might|must|needs?|has to|ought|is|was|keeps|doesn't|does not|can't|cannot|told|"
    r"said|says|suggested|wrote|gave)\b",
    re.IGNORECASE)
#: The words of a test message ("test test 123", "testing, please ignore").
_TEST_WORDS = frozenset("""test tests testing ping hello hi hey ignore please pls this is a
just only""".split())
#: What the writer owns or does as a habit: "We've got 14 of them in Planning", "I print
#: them out for our volunteers". Context for the writer's question, not a rule.
#: Where the writer stands now: "We're at 1.87", "I'm over 90% of my quota".
_STANDING = re.compile(r"^(?:we're|we are|i'm|i am)\s+(?:currently\s+|now\s+|already\s+)?(?:at|"
                       r"over|under|near|close to|using)\s+(?:about\s+|around\s+|almost\s+)?\d",
                       re.IGNORECASE)
#: A rule over everything, in telegraph style: "root ssh disabled everywhere".
#: A setting stated for every machine of a kind: "the proxy on all our machines is
#: automatic", "Screen lock on every kiosk stays at 2 minutes".
_SCOPED_STATE = re.compile(r"^(?:the\s+)?[\w-]+(?:\s+[\w-]+){0,3}?\s+(?:on|for|in|across)\s+(?:all|"
                           r"every|each)\s+(?:of\s+)?(?:our\s+|the\s+|club\s+|site\s+)?[\w-]+"
                           r"(?:\s+[\w-]+)?\s+(?:is|are|stays?|remains?)\s+(?:set\s+to\s+|at\s+)?"
                           r"[\w-]+", re.IGNORECASE)
_BLANKET = re.compile(r"\b(?:disabled|blocked|forbidden|prohibited|banned|not allowed|not "
                      r"permitted|required|mandatory|enforced|locked)\s+(?:everywhere|across the "
                      r"board|on all\b|on every\b|for (?:all|everyone|everybody)\b|"
                      r"company-wide|org-wide|fleet-wide|globally)|"
                      # "Hardware clocks are UTC everywhere": a value made the house's rule
                      r"\b(?:is|are|stays?|stay)\s+(?:on\s+|in\s+|at\s+)?[\w/+.-]+\s+(?:everywhere|"
                      r"on\s+(?:all|every)\s+(?:\w+\s+)?(?:machines?|hosts?|servers?|pcs?|boxes|"
                      r"devices?|computers?|laptops?)|across\s+the\s+board)\s*[.!]?$|"
                      # "All indexes on vault-main go to fastssd": where every one of them goes
                      r"^(?:all|every|each|any)\s+(?:[\w-]+\s+){1,5}?(?:go|goes|belong|belongs|"
                      r"live|lives|sit|sits|land|lands)\s+(?:to|in|into|on|under)\s+\S",
                      re.IGNORECASE)
#: A scope on its own: "On every server.", "In all branches."
_SCOPE_FRAGMENT = re.compile(r"^(?:on|in|at|for|across)\s+(?:every|all|each|our)\s+[\w -]{2,30}"
                             r"[.!]?$", re.IGNORECASE)
#: A scope before a colon: "Admin laptops only:", "On the kiosks:" ("For everyone reading:"
#: is a label for the reader).
_SCOPE_HEAD = re.compile(r"^\s*(?:(?:on|for|in|at|with)\s+)?(?:the\s+|all\s+|our\s+)?[\w-]+"
                         r"(?:\s+[\w-]+){0,3}\s+only\s*$|^\s*(?:on|in|at)\s+(?:the\s+|all\s+|"
                         r"our\s+)?[\w-]+(?:\s+[\w-]+){0,3}\s*$", re.IGNORECASE)
#: A head that names what the values after it are: "then the team code: IPU, DH, CN".
_VALUE_KIND_HEAD = re.compile(r"\b(?:codes?|names?|prefix(?:es)?|suffix(?:es)?|formats?|"
                              r"numbers?|ids?|tags?|labels?|extensions?|ports?|hosts?)\s*$",
                              re.IGNORECASE)
#: "If you're on board:", "When growing:": the condition the rule after the colon holds in.
_CONDITION_HEAD = re.compile(r"^\s*(?:if|when|whenever|unless|while|once|during|before|after|"
                             # ("End of shift: log out, don't just lock.": when it holds)
                             r"(?:at\s+)?(?:the\s+)?(?:end|start|close)\s+of)\b[^:]{0,120}$|"
                             # ("Only exception:", "Exceptions:", "Except:": what follows
                             # is the rule's exception, not the rule)
                             r"^\s*(?:the\s+)?(?:only\s+|one\s+)?(?:exceptions?|except(?:ion)?s?|"
                             r"excluding|exempt(?:ions?)?)\s*$", re.IGNORECASE)
#: "LV first (`lvresize ...`), then `resize2fs`": an order of steps.
_ORDER = re.compile(r"\bfirst\b[^.]{0,80}?,?\s*then\b", re.IGNORECASE)
_COMMAND_ONLY = re.compile(r"^`[^`\n]{2,}`[.!]?$")
_HOLDINGS = re.compile(r"^(?:we|i)(?:'ve\s+got|\s+have\s+got|\s+have|\s+got|\s+own)\s+"
                       r"(?:\d+|a few|several|some|many|lots|loads|two|three|four|five|six|"
                       r"seven|eight|nine|ten|dozens?)\b|^i(?:'ve\s+got|\s+have\s+got|"
                       r"\s+have|\s+got)\s+(?:a|an|my|the|no|two|three)\b(?!\s+to\b)",
                       re.IGNORECASE)
#: What the writer sees go wrong: "I get a syntax error at RETURNING", "we keep seeing a
#: timeout".
#: What the writer cannot find: "I can't find Remote Desktop in Sharing".
_LOST = re.compile(r"\bi\s+(?:still\s+|just\s+)?(?:can't|cannot|can not|couldn't|could not|"
                   r"don't|do not|didn't|did not)\s+(?:find|see|spot|locate|figure out|work out|"
                   r"remember)\b", re.IGNORECASE)
#: Past forms that are never participles: a sentence that opens with one tells what
#: the writer did ("Grew lv_shares by 20G", "Took me an hour").
_SIMPLE_PAST = frozenset("""grew took went ran wrote broke gave saw did came began drove ate
fell flew rode rose spoke threw woke wore tried""".split())
#: Verbs by which the writer changes a setting, which then holds ("I raised it to 20").
_SETTING_CHANGE = re.compile(r"\b(?:changed|set|moved|raised|lowered|increased|reduced|"
                             r"switched|renamed|configured|updated|enabled|disabled|limited|"
                             r"capped|extended|shortened)\b", re.IGNORECASE)
_DENIALS = frozenset("""not no never cannot can't none disabled blocked removed forbidden
prohibited denied unavailable deprecated off""".split())


def _told_in_past(text: str) -> bool:
    """Every clause of the sentence is in the past tense: a story ("grew lv_shares by 20G
    over lunch and nobody noticed"), not a state ("bastion-1 got retired, you hop through
    bastion-2 now")."""
    clauses = [c for c in clause_split(text) if len(tokens(c)) > 2 and not (
        _PRAISE.search(c) or tokens(c)[0] in POSITIVE)]  # ("Spot on - X found it")
    return bool(clauses) and all(past_tense(c) for c in clauses)


def _told_once(text: str) -> bool:
    """What happened once, with when: "germtest import finished 02:47", "Wallboard was on
    the login screen again at 03:40" (a log entry or a story, not a step or a rule)."""
    main = re.split(r",\s+(?:so|but|because|which|and|although)\b|;", text, maxsplit=1)[0]
    past = past_tense(main) or bool(re.match(r"^(?:[\w'-]+\s+){0,5}(?:was|were)\b", main,
                                             re.IGNORECASE))
    return past and bool(_when(main) or _EPISODIC.search(main)
                         or re.search(r"\bagain\b", main, re.IGNORECASE))


def _denies(text: str) -> bool:
    """A plain negation or a denied state ("not", "never", "disabled"); "old", "nobody
    noticed" and "anything" do not deny a rule."""
    return any(t in _DENIALS or (t.endswith("n't") and t != "can't've") for t in tokens(text))


#: A reaction framed as a feeling: "Love that X", "Gotta love how X", "We adore that X".
_EMOTIVE_FRAME = re.compile(r"^(?:(?:i|we)\s+(?:just\s+|really\s+)?|(?:gotta|got\s+to)\s+|"
                            r"(?:just|really)\s+)?(?:love|loving|adore)\s+(?:that|how)\b",
                            re.IGNORECASE)
#: A laugh that opens a sentence: "Ha, ...", "Haha -", "LOL".
_LAUGH = re.compile(r"^(?:ha(?:ha)*|heh|hah|lol|lmao)\b[\s,!.:\u2014-]*", re.IGNORECASE)


#: Sarcasm: what it names is the thing not to do.
_SARCASM = re.compile(r"\bwhat could (?:possibly )?go wrong\b|"
                      # "Oh brilliant, yes, let's have X nod off mid-shoot. Love that for us."
                      r"\blove\s+that\s+for\s+(?:us|me)\b|^oh\s+(?:brilliant|great|wonderful|"
                      r"perfect|lovely|fantastic|marvellous|super)\b[^.!?]*\blet'?s\b|"
                      # "Love that it 'restarts itself', it doesn't": mocking a quoted claim
                      r"^(?:(?:i|we)\s+|(?:gotta|got\s+to)\s+)?(?:love|loving|adore)\s+(?:that|how)\b"
                      r"[^.!?]*[\"'“‘]|"
                      # "Sure, go ahead, and then enjoy watching Salt wipe it"
                      r"\b(?:then\s+)?enjoy\s+(?:watching|the\s+(?:fallout|show|chaos))\b|"
                      r"\bgood\s+luck\s+with\s+that\b|^(?:fun|good|great)\s+times\b|"
                      # "Only if you enjoy explaining to 2,000 people why ...": the price
                      r"^only\s+if\s+you\s+(?:enjoy|like|love|fancy)\b|\bif\s+you\s+enjoy\s+"
                      r"\w+ing\b|"
                      r"\bhave\s+fun\s+(?:with\s+that|watching)\b|"
                      # "Sure, and then watch ansible quietly undo it"
                      r"^(?:oh\s+)?sure\s*,\s*and\s+then\s+watch\b|"
                      # "Sure, and while we're at it let's take the brakes off the trucks,
                      # they'd be faster too": a worse idea proposed, mocking the answer's
                      r"\bwhile\s+we'?re\s+at\s+it\b[^.!?]*\blet'?s\b|"
                      r"\b(?:they|it|that|we|you)(?:'d|\s+would)\s+be\s+\w+er\s+too\b|"
                      # "Lovely idea, and so is juggling chainsaws": an ironic comparison
                      r",\s*and\s+so\s+(?:is|are|was|were)\s+\w+ing\b|"
                      # "... they let devs install whatever they like and look where that got
                      # them": another place's way, mocked
                      r"\b(?:and\s+)?look\s+(?:where|how)\s+(?:that|it)\s+(?:got|left|ended\s+up)\b|"
                      r"\bwe\s+all\s+know\s+how\s+(?:that|it)\s+(?:went|ended)\b|"
                      # "Technically yes, and then the DMX drops out ...": granted, then mocked
                      r"^(?:technically|in\s+theory|theoretically)\s*,?\s+(?:yes|yeah|you\s+can|it\s+"
                      r"works)\b[^.!?]*\band\s+then\b|"
                      r"^(?:oh\s+)?(?:sure|yeah right|"
                      r"great idea)\s*,\s*(?:because|let's|just|go\s+ahead)\b|^oh sure\b|"
                      # "Lovely weather for it, not.", "Revolutionary stuff."
                      r"^[^,.]{3,40},\s*not[.!]*$|^(?:revolutionary|groundbreaking|shocking)"
                      r"\s+(?:stuff|news|idea)\b|"
                      # "Oh great, 'restart it', because I totally have time for that"
                      r"^oh\s+(?:brilliant|great|wonderful|perfect|lovely|fantastic|marvellous|"
                      r"super|good)\s*,[^.!?]*\bbecause\b|\bbecause\s+(?:i|we)\s+(?:totally|"
                      r"definitely|obviously|clearly|of\s+course)\s+have\s+(?:the\s+)?"
                      r"(?:time|nothing\s+better)\b", re.IGNORECASE)
#: A reply that only gives a value: "It's 30s.", "Should be 5433.", "5s.", "90 days."
_VALUE_REPLY = re.compile(r"^(?:(?:it'?s|it is|that'?s|it should be|should be|it was|now|make it|"
                          r"try)\s+\S|\d[\w.:%/-]*(?:\s+[a-z]{1,8})?[.!]?$)", re.IGNORECASE)


def _shape(text: str) -> str:
    return re.sub(r"\d+(?:[.,]\d+)?", "9", normalize(text))


def _value_reply(text: str, answer: str) -> bool:
    """The text gives a value of the same shape as one of the answer's ("30s" for "60s",
    "5433" for "5432") that the answer does not have."""
    def values(found: Sequence[Item]) -> list[Item]:
        return [i for i in found if i.kind in ("number", "tech") and i.text[:1].isdigit()]
    answer_values = values(items(answer))
    theirs = {_shape(i.text) for i in answer_values}
    keys = {i.key for i in answer_values}  # ("5min" is new next to "15min")
    return any(_shape(i.text) in theirs and i.key not in keys for i in values(items(text)))


def _only_without(text: str) -> bool:
    """The sentence's only negation is "without" (how something went)."""
    return bool(re.search(r"\bwithout\b", text, re.IGNORECASE)) and not re.search(
        r"\b(?:not|never|no|none|nobody|nothing|cannot|only|must)\b|n't\b", text, re.IGNORECASE)


def _bare_item_reply(text: str, answer: str) -> bool:
    """The sentence is nothing but a key combination, menu path or command of the kind
    the answer gave, and not the answer's own ("Super+V." after "Press Super+N")."""
    found = [i for i in items(text) if i.kind in ("keys", "menu", "command")]
    if len(found) != 1 or tokens(_without_items(text).strip(" .!`'\"")):
        return False
    return any(i.kind == found[0].kind for i in items(answer)) and bool(
        novel_items(found, answer))


_WEEKDAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
_BARE_WHEN = re.compile(r"^(?:on\s+|every\s+)?(?P<day>" + _WEEKDAY + r")s?(?:\s+(?:at\s+)?"
                        r"(?P<time>\d{1,2}[:.]\d{2}))?[.!]*$|^(?:at\s+)?(?P<only>\d{1,2}[:.]\d{2})"
                        r"[.!]*$", re.IGNORECASE)


def _bare_when_reply(text: str, answer: str) -> bool:
    """The sentence is nothing but a day and time ("Sunday 00:00.") where the answer gave
    another ("every Monday at 00:00"): the schedule corrected."""
    m = _BARE_WHEN.match(text.strip())
    if m is None:
        return False
    day, time_ = m.group("day"), m.group("time") or m.group("only")
    said_days = {d.lower() for d in re.findall(_WEEKDAY, answer, re.IGNORECASE)}
    said_times = set(re.findall(r"\b\d{1,2}[:.]\d{2}\b", answer))
    return bool((day and said_days and day.lower() not in said_days) or (
        time_ and said_times and time_ not in said_times))


_ASKING_FOR = re.compile(r"^(?:i'm\s+|i am\s+)?asking\s+(?:for|on behalf of|because|since)\b",
                         re.IGNORECASE)
_SEEN_ERROR = re.compile(r"\b(?:i|we)\s+(?:still\s+|now\s+|keep\s+)?(?:get|got|see|saw|seeing|"
                         r"getting|hit|receive|received)\s+(?:a|an|the|this|that|some)?\s*"
                         r"(?:[\w-]+\s+){0,3}?(?:error|exception|warning|failure|timeout|"
                         r"crash)s?\b", re.IGNORECASE)
#: A judgement of how something reads: "the docs are impossible to read".
_HARD_TO = re.compile(r"\b(?:impossible|hard|difficult|painful|a pain|confusing)\s+to\s+"
                      r"(?:read|follow|understand|use|find|navigate|parse)\b|\bunreadable\b",
                      re.IGNORECASE)
_HABIT = re.compile(r"^i\s+(?:usually\s+|always\s+|often\s+|normally\s+|just\s+)?(?!can|"
                    r"cannot|can't|must|have to|need|am|was|will|won't|would|should|don't|do|"
                    r"did|didn't|had|think|guess|believe|know)[a-z]+\b", re.IGNORECASE)
#: A malfunction that happened ("froze twice during 2nd period", "the projector died"):
#: an incident to report, not a rule.
_INCIDENT = re.compile(r"\b(?:froze|crashed|died|broke|hung|went down|went dark|stopped "
                       r"working|blew up|ate all|came back|"
                       # "On 3 May the VPN was down for two hours": an outage, dated
                       r"(?:was|were)\s+(?:\w+\s+)?(?:down|offline|unreachable|out|dead)\b"
                       r"(?=[^.!?]*\b(?:for\s+(?:about\s+|around\s+|nearly\s+|over\s+)?"
                       r"(?:\d+|an?|half|two|three|four|five|several|a\s+few)\s+|"
                       r"(?:on|last|this|yesterday)\b)))\b", re.IGNORECASE)
#: The writer's plan or wait ("I'm presenting to 40 families", "still waiting to hear
#: back").
_PLAN = re.compile(r"^(?:i'm|i am)\s+(?:\w+ly\s+)?\w+ing\b|"
                   # "Planning to reinstall my laptop once it's out" (the writer's, unsaid)
                   r"^(?:planning|hoping|thinking of|meaning|going)\s+to\s+\w+\s+(?:my|our)\b|"
                   # "We're thinking of upgrading the booth PC in August" (not "We're
                   # running Debian 12": a fact about the organisation)
                   r"^(?:we're|we are|we were)\s+(?:\w+ly\s+)?(?:thinking (?:of|about)|"
                   r"planning (?:to|on)|hoping to|considering|about to|looking into)\b|"
                   r"^(?:i'm|i am|i'll be|i will be)\s+(?:off|away|out of (?:the )?office|on "
                   r"(?:leave|holiday|vacation|annual leave))\b|\b(?:i'll|i will) (?:need|have) "
                   r"to\b|^(?:will|i'll) (?:come back|get back|look) (?:to|at|into) (?:this|it)\b|"
                   # "Will try this on my dev copy tomorrow and see whether it beats X"
                   r"^(?:(?:i'll|i\s+will|will|gonna|going\s+to)\s+)(?:try|test|check|run)\s+"
                   r"(?:this|that|it|these|them)\b|"
                   r"\b(?:still\s+)?waiting\s+(?:for|to|on)\b|"
                   # "I shall pass this along to her", "I'll forward it to the ward manager"
                   r"(?:^|,\s*)(?:so\s+|and\s+)?(?:i'll|i will|i shall|i'm going to|"
                   r"i am going to)\s+"
                   r"(?:\w+ly\s+|also\s+|just\s+)?(?:pass|forward|share|send|show|tell|let|"
                   r"print|circulate|mention|bring|try|check|ask|raise)\b", re.IGNORECASE)


_TRAILING_CHATTER = re.compile(
    r"(?:[,;]?\s*(?:thanks|thank you|thx|cheers|hope (?:this|that) helps|fyi|btw|just so "
    r"you know|for what it's worth|if that helps|yeah|yep|"
    # a handover's closing: "nothing else open", "all quiet otherwise"
    r"nothing else (?:open|pending|to report|outstanding)|all (?:quiet|good) otherwise|"
    r"otherwise all (?:quiet|good))[.!]*)+\s*$", re.IGNORECASE)
_REPORTED = re.compile(
    r"^(?:(?:you|(?:the\s+)?(?:answer|assistant|bot|chatbot|article))\s+(?:said|says|say|wrote|claimed|"
    r"claims|suggested|suggests|mentioned|mentions|(?:keep|kept|always)\s+(?:telling|saying|"
    r"suggesting|sending|pointing))\b)", re.IGNORECASE)


@dataclass(frozen=True)
class Sentence:
    """A sentence of the feedback and what it was read as."""

    raw: str
    view: SentenceView
    kind: str  # claim support question system meta verdict opinion praise chatter offtopic


#: A setting as ``layout`` writes it: "[name: ]key = value[, key = value]".
_SETTING = re.compile(r"^(?:[^:=\n]{1,60}:\s+)?[\w.\-/]+(?:\s[\w.\-/]+){0,2}\s=\s\S")
# (not a clock time's colon: "Kiln 2 fired 06:10")
_LABEL_VALUE = re.compile(r"^((?:--?)?[\w][\w .'/-]{0,40}):(?!\d)\s*(\S[^:]{0,60})$")


#: Fields of a ticket or report form: who and what of the record, not the knowledge.
_FORM_FIELDS = frozenset("""ticket status assignee assigned requester reporter reported
linked link links priority severity category component labels label sprint owner created
updated resolved closed opened time spent effort id ref reference cc from to subject date
sent""".split())


_WH_QUESTION = re.compile(r"^\s*(?:what|which|how\s+(?:many|much|long|often|big|old)|when|"
                          r"where|who(?:m|se)?)\b", re.IGNORECASE)


#: Words that "only" follows without naming a thing: "If only.", "Me only?"
_NOT_A_THING = frozenset("""if the a an not one me you us them it this that we i he she they
yes no ok okay""".split())
_ONLY = re.compile(r"\s+only\b", re.IGNORECASE)  # ("chrony only": no verb in "only")


def _telegraphic(text: str) -> bool:
    """A fragment of a note: at most four words and no verb ("chrony only.")."""
    return 0 < len(tokens(text)) <= 4 and _verbless(_ONLY.sub("", text))


def _bare_answer(v: SentenceView, ctx: FeedbackContext) -> bool:
    """A message's opening value that answers the question asked ("what port does the
    primary listen on" -- "5433."; "what proxy settings should I use" -- "Automatic."):
    at most three words, no verb, and a number or a technical item, or an option the
    answer names with a capital ("None, Manual or Automatic"), or one capitalised word
    when the message refuses another by its name ("Automatic. ... never Manual.")."""
    toks = tokens(v.text)
    # (not what the answer got wrong, "Not template1.", nor a status, "Ticket X closed.",
    # a verdict, "Step 1 fine.", a quoted phrase or a script's first line)
    if v.question or v.system or not 0 < len(toks) <= 3 or v.personal or not (
            ctx.query.rstrip().endswith("?") or _WH_QUESTION.match(ctx.query)) or \
            set(toks) <= _BARE_VALUES or is_greeting(v.text) or _FAREWELL.match(v.text) or \
            _THANKS_ONLY.fullmatch(v.text.strip()) or toks[0] in ("not", "no", "never") or \
            not _verbless(_ONLY.sub("", v.text)) or v.evaluative or v.about_answer or \
            v.text.lstrip().startswith(("#", "//", "--")):
        return False
    asked = ctx.query.lower()
    if any(i.kind in STRONG_KINDS - {"quoted"} and i.text.lower() not in asked
           for i in v.strong):
        return True
    offered = set(re.findall(r"(?<=[\w,;] )[A-Z][a-z]+\b", ctx.answer))
    words = re.findall(r"[A-Za-z]+", v.text)
    if len(toks) == 2 and toks[1] == "only" and toks[0] not in asked and \
            toks[0] not in _NOT_A_THING and re.fullmatch(r"[a-z][\w.-]*", toks[0]):
        return True  # "chrony only.": the one thing that is used
    if len(words) == 1 and re.fullmatch(r"[A-Z][a-z]+", words[0]) and \
            words[0].lower() not in asked and _REFUSED_OPTION.search(ctx.comment):
        return True  # "Automatic. ... never Manual.": the message names options itself
    return bool(words) and all(w[:1].upper() + w[1:].lower() in offered
                               and w.lower() not in asked for w in words)


#: Another option the message refuses, by its capitalised name: "never Manual", "not Eco".
#: (the name alone: "not Internet site" refuses no option)
_REFUSED_OPTION = re.compile(r"\b(?:never|not|avoid)\s+(?-i:[A-Z][a-z]+)\b(?=\s*(?:[.,;!]|$))",
                             re.IGNORECASE)


def _label_value(text: str) -> bool:
    """A telegraphic note "offsite copy: fridays" (a short label and a short value; not a
    greeting, not a form field such as "Assignee: Priya", not a bare "Roles: no")."""
    m = _LABEL_VALUE.match(text.strip().rstrip("."))
    if m is None:
        return False
    label, value = tokens(m.group(1)), tokens(m.group(2))
    # ("--all: no!": a bare yes or no is a value when the label names an option or a
    # command, not a word: "Roles: no")
    named = any(i.kind in STRONG_KINDS for i in items(m.group(1)))
    return len(label) <= 4 and 1 <= len(value) <= 6 and not is_greeting(m.group(1)) and \
        not set(label) & _FORM_FIELDS and (named or not set(value) <= _BARE_VALUES)


_BARE_VALUES = frozenset("""yes no nope yep n/a none ok okay true false""".split())


#: Function words of the languages people most often repeat a fact in (es, fr, de, nl,
#: it, pt); English ones do not count.
_FOREIGN_FUNCTION = frozenset("""el la los las del y que es está están para por con una
un unos le les des du est sont et pour avec dans sur une der die das und ist sind nicht mit
für auf werden wird dem den ein eine het een van niet zijn voor wordt il lo gli che è non
per della delle sono os não com são uma""".split())


def _translations(views: Sequence[SentenceView]) -> set[int]:
    """Sentences that repeat another's items in another language ("Shared data is in
    /project/shared. Los datos compartidos están en /project/shared."): more function
    words of another language than English ones (two at least), and every concrete item
    already named in another sentence."""
    out = set()
    for i, v in enumerate(views):
        toks = tokens(v.text)
        keys = {it.key for it in v.strong}
        foreign = sum(t in _FOREIGN_FUNCTION for t in toks)
        if not keys or foreign < 2 or foreign <= sum(t in STOPWORDS for t in toks):
            continue
        others = {it.key for j, w in enumerate(views) if j != i and j not in out
                  for it in w.strong}
        if keys <= others:
            out.add(i)
    return out


def _bare_list(text: str) -> bool:
    """Three or more short items with commas and no verb ("Grafana, DBeaver, psql…")."""
    parts = [p for p in re.split(r",|\band\b|\bor\b", text.strip(" .…!?")) if p.strip()]
    return len(parts) >= 3 and all(len(tokens(p)) <= 2 for p in parts) and not any(
        t in _LIST_VERBS or t in MODALS or t.endswith(("ed", "ing")) for t in tokens(text))


_LIST_VERBS = frozenset("""is are was were be been has have had do does did get gets got
go goes went use uses run runs need needs""".split())


#: The writer's own setup at home or on a personal machine, not the organisation's world:
#: "At home I run three containers on a Raspberry Pi ...", "On my own laptop I keep ...".
_PRIVATE_SETUP = re.compile(
    r"^(?:(?:so|and|but|also|fwiw|btw|funnily\s+enough)[,\s]+)?(?:at\s+home(?![-\w])|"
    r"(?:on|in|with)\s+my\s+(?:home\s*lab|homelab|home\s+(?:server|network|pc|machine|setup|"
    r"box|router|nas)|(?:own|personal|private)\s+(?:laptop|pc|machine|server|box|setup|"
    r"computer|phone|nas)))\b[^.!?]*?\b(?:i|i'm|i've|my|we)\b", re.IGNORECASE)
#: A head that names the exception the tail describes: "Bus laptops are the exception: they
#: pull straight from deb.debian.org" (without it the tail says it of everything).
_EXCEPTION_HEAD = re.compile(r"\b(?:is|are|'s|'re)\s+(?:the\s+(?:one\s+)?|an\s+)?(?:exception|"
                             r"exceptions|odd\s+ones?\s+out|special\s+case|excluded|exempt|"
                             r"different|left\s+out|not\s+included)\s*$", re.IGNORECASE)
_FIRST_SINGULAR = re.compile(r"\b(?:i|i'm|i've|i'd|me|my)\b", re.IGNORECASE)


class LocalActionability:
    """Deterministic actionability classifier and extractor (no network).

    With an embedder, a claim that shares no word with the query and the answer can
    still be judged on topic by its cosine to them."""

    def __init__(self, embedder: Embedder | None = None, *, message_check: bool = True,
                 check: MessageCheck | None = None) -> None:
        """``message_check``: let the learned check (:mod:`optimizer.local.message_check`,
        the shipped weights unless ``check`` is given) veto accepted messages; it needs
        an embedder of the kind it was trained on."""
        self._vectors = CachedVectors(embedder, 4096) if embedder else None
        self._embedder = embedder
        self._check: MessageCheck | None = None
        if message_check and embedder is not None:
            chosen = check or shipped_check()
            if chosen is not None and chosen.fits(embedder):
                self._check = chosen
            elif chosen is not None:
                log.info("message check off: trained for another embedder",
                         trained_for=chosen.embedder, embedder=type(embedder).__name__)

    def extract(self, ctx: FeedbackContext, meter: Meter) -> Extraction:
        """Classify the feedback and, when it carries a concrete claim, extract it."""
        meter.check("actionability")
        result = self._extract(ctx)
        meter.record("actionability", estimate_tokens(ctx.query, ctx.answer, ctx.comment),
                     estimate_tokens(result.title, result.body, result.reason), estimated=True)
        return result

    # -- reading -----------------------------------------------------------------------

    def read(self, ctx: FeedbackContext) -> list[Sentence]:
        """Every sentence of the feedback with the kind it was read as.

        A sentence is a claim when one of its clauses is (a verdict on the answer
        next to a complaint is not). Claims count when the message is on the
        conversation's topic: some sentence of it shares a word with the query or the
        answer (or, with an embedder, the message is close to them); a message is about
        one thing, so "Ctrl+Alt+L is the KDE one. In GNOME it's Super+L." is on topic as
        a whole. Declarative sentences that add detail to a claim ("the top-left now
        shows a small workspace indicator") are kept as support. In a message that
        praises the answer, a short status remark without a rule ("db-01 is back") is
        part of the praise. Table rows, configuration lines and chat logs are read as
        statements (``layout``); pasted log output goes, a report form is read field by
        field against the answer (``form_fields_as_lines``); dictation and chat habits as
        written English (``plain_voice``)."""
        # (log output and a commit's bookkeeping before the lines lose their indentation)
        text = sql_statements_joined(commit_lines_removed(log_lines_removed(bookkeeping_removed(
            code_in_sentence_joined(restated_code_removed(signature_removed(pointed_command_named(
                writer_named(broken_lines_joined(boxed_lines_unboxed(aligned_tables_as_pipes(
                do_labels_read(shown_file_read(quoted_question_answered(ctx.comment)))))))))))))))
        text = strip_quoted(plain_text(headings_as_labels(shell_comments_as_text(text)),
                                       keep_lines=True), f"{ctx.query}\n{ctx.answer}")
        text = announced_scope_joined(value_lists_joined(
            form_fields_as_lines(banner_removed(records_read(rota_removed(before_after_read(
                handover_status_removed(quiz_key_read(quiz_answer_read(list_lead_trimmed(
                    text)))))))),
                         ctx.answer)))
        for step in (struck_through_removed, plain_version_read, joke_removed,
                     fragment_questions_as_conditions,
                     learned_fact_unframed,
                     analogy_as_statement,
                     statement_before_question_split,
                     minutes_as_decisions, minutes_residue_removed,
                     qa_pairs_as_statements, affirmed_questions_as_statements,
                     answered_questions_as_statements,
                     leading_asides_removed,
                     code_comments_as_text,
                     chat_as_lines, diff_as_lines, dashed_pairs_as_labels,
                     state_labels_as_statements, circled_numbers_as_bullets,
                     checkmarks_as_statements,
                     config_as_statements, tables_as_statements,
                     strip_line_labels, arrows_as_values, plain_voice, apply_self_corrections,
                     strip_sign_off, bare_answer_as_subject, does_question_as_claim,
                     negative_question_as_claim,
                     reminder_question_as_statement,
                     rhetorical_tail_as_statement, advice_as_instruction):
            text = step(text)
        parts = [(raw, kind) for s in split_sentences(text) for raw, kind in
                 self._after_colon(s, ctx)]
        steps = _list_items(text)
        # A frame that reports or announces the claim ("I felt you ought to know that
        # X", "Our manager told me that X") is read as X.
        views = [(raw, view(strip_frame(without_asides(raw)))) for raw, _ in parts]
        kinds = [kind or ("chatter" if _FAREWELL.match(strip_discourse(raw)) and not v.system
                          # ("Please update the assistant, it's ...": the frame goes first)
                          else "meta" if _UPDATE_BOT.search(raw) and not v.strong
                          and not v.system else self._sentence_kind(v, ctx))
                 for (_, kind), (raw, v) in zip(parts, views, strict=True)]
        # "Ha, the weather table with San Francisco again.": a laugh at what it names
        kinds = ["opinion" if k == "claim" and _LAUGH.match(raw.strip()) and _verbless(
            _LAUGH.sub("", raw.strip())) and not RULE_WORD.search(raw) else k
                 for k, (raw, _) in zip(kinds, views, strict=True)]
        # ("I'm off until Monday 3 June. For urgent DB issues contact Priya Nair.": whom to
        # ask while the writer is away belongs to the away notice)
        aside = {i for i, (_, v) in enumerate(views) if i > 0 and _AWAY.match(
            views[i - 1][1].text) and _URGENT_CONTACT.match(v.text)}
        # ("Lessons learned from incident INC-0412 (April): a personal Google account was
        # added ... and its reminders showed ...": what happened in the incident; "Then
        # Fiona came in and ... so I never got round to it": the story's next event, where
        # "never" told in the past is no rule)
        for i, (raw, v) in enumerate(views):
            told = _INCIDENT_TOLD.match(raw)
            named = _NAMED_TO_DO.match(raw)
            if _ASSIGNED.match(raw) or (named and (english_word(
                    named.group("name").lower()) is not True or (
                    _MINUTES_WORDS.search(ctx.comment) and not named.group("name").endswith("s")
                    and named.group("name").lower() not in STOPWORDS | {"just", "need", "how",
                                                                       "remember", "note"}))):
                aside.add(i)  # ("Action: Priya to add a check ...", "ACTION Wen: add till-2.")
            if len({m.group(1).lower() for m in _SAYS.finditer(raw)}) >= 2 and not v.system:
                aside.add(i)  # "Karen says switch it off, Gary says leave it on.": a dispute
            if kinds[i] in ("claim", "support") and ((told and past_tense(told.group(
                    "tail")) and not PRESENT_RULE_WORD.search(told.group("tail"))) or ((
                    _THEN_PAST.match(raw) or _story_goes_on(views, kinds, i))
                    and past_tense(v.text) and not (
                        _present_rule(v) or re.search(
                            r"\b(?:must|can|cannot|can't|may|should|need\s+to|has\s+to|"
                            # ("We only noticed when ...": "only" on a past verb)
                            r"have\s+to|always|only(?!\s+\w+ed\b)|is|are)\b|"
                            r"\bnever\b.*\bagain\b", v.text, re.IGNORECASE)))):
                aside.add(i)
        # ("the wiki page I wrote in 2021 still says X. That stopped in 2023.", "the old
        # handout said to use that, and it's long gone"): what an outdated document says
        # is the claim that was overturned, and the note that it was goes with it
        for i, (_, v) in enumerate(views):
            if not _DOC_SAYS.search(v.text):
                continue
            gone_next = i + 1 < len(views) and bool(_GONE_NEXT.match(views[i + 1][1].text))
            if _GONE_TAIL.search(v.text) or gone_next:
                aside.add(i)
                if gone_next:
                    aside.add(i + 1)
        kinds = ["chatter" if i in aside else k for i, k in enumerate(kinds)]
        on_topic = self._on_topic([v.text for _, v in views], ctx)
        # "apt-cache policy showed the old pin and it works now on login02": a report
        # that the answer worked, whatever it names
        # ("The help page itself says '...' so that matches.": the answer confirmed)
        kinds = ["praise" if k == "claim" and _confirms_answer(v) else k
                 for k, (_, v) in zip(kinds, views, strict=True)]
        # (a closing "Thank you!" under a correction praises nothing)
        # (unless the message says it worked: "Yes, that was it ... it works now. Thanks!")
        # (praise that turns ("The restore itself is ok but you forget the important
        # part.") announces what is missing: the sentences after it are no praise)
        praised = [i for i, ((raw, _), k) in enumerate(zip(views, kinds, strict=True))
                   if k == "praise" and (not _THANKS_ONLY.fullmatch(raw.strip())
                                         or bool(_WORKED.search(text)))
                   and not _PRAISE_TURNS.search(raw)]
        praising = bool(praised)
        # ("Good general answer for bind, keep it for home labs. For rc.example though
        # nobody edits zone files: ... Requests go to the rc-network queue."): from a
        # rule that turns against the praise on, the sentences are the correction
        turned = next((i for i, ((_, v), k) in enumerate(zip(views, kinds, strict=True))
                       if praised and i > praised[0] and k == "claim"
                       and _TURN.search(v.text) and (v.organisational or v.firm_modal
                                                      or _denies(v.text))), len(views))
        # A complaint about the world ("This is ridiculous.", "The panel is a mess.")
        # makes the sentences next to it symptoms, unless they state a rule.
        complaining = any(k == "opinion" and ((v.negative and not (
            v.about_answer or v.positive or v.personal or _SARCASM.search(v.text))) or (
            _DISMAYED.search(v.text) and not v.about_answer))
            for k, (_, v) in zip(kinds, views, strict=True)) or any(
            # ("Why is every SQL tool this bad at showing a plan?": a complaint asked)
            k == "question" and v.negative and _WHY_SO.match(v.text)
            for k, (_, v) in zip(kinds, views, strict=True))  # (sarcasm mocks the answer)
        # A message unsure of its facts ("not sure though", "something like ...") makes
        # the sentences next to it guesses too, unless they state a firm rule. ("I
        # think this is not correct" is politeness about the answer, not doubt.)
        # ("not sure about the rest, but this one I actually checked: X": the writer
        # vouches for X, the doubt is about the rest)
        hedged = any(_UNSURE.search(v.text) and not _doubt_elsewhere(
            v.text, [o.text for _, o in views if o is not v]) for _, v in views) and \
            not _vouched(text)
        # A message that opens by asking for another form of answer ("Could you put this
        # in a table next time?") goes on describing that form, not the world.
        form_request = bool(views) and kinds[0] in ("question", "meta") and bool(
            _FORM_REQUEST.search(views[0][1].text))
        # A message that asks for advice first ("Would raising work_mem help a 12-way
        # join?") and then describes the asker's situation ("The sort spills 1.4 GB right
        # now. We're on 15.6, if that matters."): the rest is the question's context.
        asking = bool(views) and kinds[0] == "question" and bool(_ADVICE_QUESTION.match(
            views[0][1].text)) and bool(_SITUATION.search(text)) and not any(
            v.firm_modal or v.negation or _strict_policy(v) or verdict(v.text)
            for _, v in views[1:])
        # A question about the writer's own machine, with what it shows ("mine prints
        # 43.9 but About says 43 ... which do they want?"), or an errand for the assistant
        # ("can you book me a taxi ...? Cost centre VAL-220."): the statements are the
        # question's context.
        # ("Mine says 12.4 GB free ...": the frame "Mine says" is what makes it personal)
        # (or what the writer's tools read: "Disk Usage Analyzer says 212 GB used ... Is
        # that normal?"; "Ours are five years old ...")
        asking = asking or ("question" in kinds and any(
            k == "claim" for k in kinds) and all(
            (v.personal or view(raw).personal or _READING.search(v.text)
             or (_GAUGE.search(v.text) and not RULE_WORD.search(v.text))
             or re.match(r"(?i)(?:ours|mine)\b", v.text) or _subjectless_past(v.text))
            and not _HOUSE_RULE.search(v.text)
            for (raw, v), k in zip(views, kinds, strict=True) if k == "claim")) or any(
            (k == "question" or _ASKED_OF_YOU.match(v.text)) and _ERRAND.search(v.text)
            for (_, v), k in zip(views, kinds, strict=True))
        # What the writer measured or saw, then asks the assistant to judge ("4.2 Mbps
        # down, 86 ms ping at 19:10. Is that bad for a rural line?"): the figures are the
        # question's context, unless one of them is stated as a rule.
        # ("812 ms with the index, 790 ms without, 3 runs each. Is that just noise?": a
        # line of measurements is the question's context, whatever its words)
        asking = asking or (any(k == "question" and _JUDGE_IT.search(v.text)
                                for (_, v), k in zip(views, kinds, strict=True)) and not any(
            k == "claim" and (v.firm_modal or v.policy or _strict_policy(v)
                              or _HOUSE_RULE.search(v.text)) and not (
                len(_MEASURED.findall(v.text)) >= 2 and not RULE_WORD.search(v.text))
            for (_, v), k in zip(views, kinds, strict=True)))
        if asking:
            kinds = [k if k != "claim" else "chatter" for k in kinds]
        if len(views) == 1 and _BARE_LINK.fullmatch(views[0][1].text.strip()):
            kinds = ["chatter"]  # a link alone states nothing: what it holds is not read
        # "Does that still hold with X? We run Y. Asking before I flip anything.": the
        # writer says it was a question; what they said before it is its context
        said = next((i for i, (_, v) in enumerate(views) if _ASKING.match(v.text)), None)
        if said is not None and "question" in kinds[:said]:
            kinds = [k if k != "claim" or i > said else "chatter" for i, k in enumerate(kinds)]
        anchored = on_topic and any(k == "claim" for k in kinds)
        # (numbered steps then "Worked first time after that.": the report is on the
        # steps, not praise that takes the steps before it along)
        listed = sum(1 for (r, _), k in zip(views, kinds, strict=True)
                     if k == "claim" and _step_key(r) in steps) >= 2
        out = []
        translated = _translations([v for _, v in views])
        for i, ((raw, v), k) in enumerate(zip(views, kinds, strict=True)):
            if i in translated or i in aside:
                k = "chatter"  # the same fact again in another language
            elif k == "claim" and not on_topic:
                k = "offtopic"
            elif k == "claim" and praising and (praised[0] < i or not listed) and i < turned \
                    and ((not v.rule and (
                    v.words <= 5 or not novel_items([*v.strong, *v.names], ctx.answer))) or (
                    _told_in_past(v.text) and not _strict_policy(v) and (
                        v.personal or not (v.modal or v.policy or _denies(v.text)))
                    and not _instruction(v.text) and not (any(
                            re.search(r"\b(?:not|never|no longer)\s+(?:\S+\s+){0,2}?"
                                      + re.escape(i.text), v.text) for i in v.strong)))):
                # In a message that praises, nothing new is part of the praise, and so is
                # the writer's story of how it went ("My 3rd graders typed their poems").
                k = "praise"
            elif k == "claim" and complaining and not (
                    (v.firm_modal and not _shows_fault(v.text)) or _strict_policy(v) or (
                    _denies(v.text) and not _NO_WAY.search(v.text) and not _shows_fault(
                        v.text)) or (len([
                            i for i in novel_items(list(v.strong), ctx.answer)]) >= 2 and not (
                            _DURATION.search(v.text) and not v.negation) and not _shows_fault(
                                v.text))):
                # ("The Kyocera has been streaky since the day it arrived, and LibreOffice
                # still can't pick the right tray half the time.": symptoms, however named)
                k = "opinion"  # "sbuild takes 40 minutes every single time. Ridiculous."
            elif k == "claim" and form_request and not (v.firm_modal or _strict_policy(v)):
                k = "meta"  # "... in a table next time? setting | value | where it's set."
            elif k == "claim" and hedged and (not (v.firm_modal or _strict_policy(v)) or
                                              _quoted_rule(v.text) or
                                              bool(_SOURCE_SAYS.match(v.text))):
                # "Something like B-Hall-something... not sure though"; and a rule the
                # writer only quotes ('the old wiki: "always use exclusive mode"') is as
                # firm as the writer's doubt about it ("no idea if anyone still does that")
                k = "opinion"
            elif k == "chatter" and anchored and (i == 0 or (len(tokens(v.text)) >= 2 and all(
                    _telegraphic(o.text) for _, o in views[:i]))) and _bare_answer(v, ctx) \
                    and not _status_note(v.text):
                # ("chrony only. ntp1.x.lan + ntp2.x.lan. no pool": a note of fragments
                # answers in each of them)
                k = "support"  # "5433. apps go thru pgbouncer on 6432": what was asked
            elif k == "chatter" and anchored and (_support(v, ctx) or (
                    _label_value(v.text) and not _status_note(v.text))) \
                    and not is_self_introduction(without_greeting(v.text)) \
                    and not _FAREWELL.match(v.text) and not _FAREWELL.match(
                        strip_discourse(raw)) and not _ANNOUNCED_LIST.match(v.text) \
                    and not _aside(v.text) and not _AWAY.match(v.text):
                k = "support"  # "offsite copy: fridays" next to "backups: nightly, 01:30"
            elif k in ("chatter", "meta") and _step_key(raw) in steps and any(
                    kk == "claim" and _step_key(r) in steps
                    for (r, _), kk in zip(views, kinds, strict=True)) and not (
                    v.question or v.personal or v.about_answer or v.evaluative
                    or _aside(v.text) or (
                        _AMENDED.search(text) and not novel_items(list(v.strong), ctx.answer))
                    or _told_once(v.text) or _status_note(v.text)):
                # ("- germtest import finished 02:47, report sent": a log entry, no step)
                # A step of a procedure whose other steps are claims belongs to it, even
                # one the answer also had ("1. Open Files", "4. `DROP ROLE ewa_k;`"),
                # unless the writer amends the list afterwards ("edit: make that -L +200G"):
                # then a step copied from the answer may be the amended one.
                k = "support"
            out.append(Sentence(raw, v, k))
        return out

    def _after_colon(self, sentence: str, ctx: FeedbackContext) -> list[tuple[str, str]]:
        """The sentence, or its two parts when it opens with talk before a colon: "My
        lead walked me through this yesterday: all our servers run in UTC" is a story and
        a claim, each read on its own. A head that names something ("Ours is
        /etc/logrotate.d/site: ..."), states a claim or judges the answer keeps the
        sentence whole."""
        # "Nope — login nodes: no docker": the reply word is not part of the head.
        # ("no -d, no -s, ever": a hyphen before a letter is an option's, not a pause)
        lead = re.match(r"^(?:no|nope|nah|yes|yeah|yep|well|ok(?:ay)?|actually)\s*"
                        r"(?:[—–]+|-+(?!\w))\s*(?=\w)", sentence, re.IGNORECASE)
        if lead:
            sentence = sentence[lead.end()].upper() + sentence[lead.end() + 1:]
        head, sep, tail = sentence.partition(": ")
        if re.search(r"(?<![\w-])[A-Z]$", head):  # "on the H: drive": a drive letter
            return [(sentence, "")]
        # ("After the incident in January where a laptop was opened with a sleeping
        # colleague's finger, the rule is: X": the story before the rule goes)
        lead_in = re.match(r"(?P<story>.+?),?\s+(?:so\s+)?(?:the|our)\s+(?:house\s+)?(?:rule|"
                           r"policy|standard)\s+(?:now\s+)?is$", head,
                           re.IGNORECASE) if sep else None
        if lead_in and (past_tense(lead_in.group("story")) or re.search(
                r"\b(?:was|were|had)\b", lead_in.group("story"), re.IGNORECASE)) and tokens(tail):
            return [(head + ":", "chatter"), (capitalized(tail), "")]
        # ("That's the control room standard: 1.5, not the 1.2 ...": what the value is)
        named = re.fullmatch(r"(?:that|this)(?:'s|\s+is)\s+(?:the|our)\s+(?P<what>[^,;:]{3,50}?)",
                             head.strip(), re.IGNORECASE) if sep else None
        if named and re.match(r"\s*[\d\"'`A-Z]", tail):
            what = named.group("what")
            return [(f"The {what}: {tail}", "")]
        if sep and _ANNOUNCING_HEAD.search(head) and not items(head) and (
                _verbless(head) or re.search(r"(?i)\bplease\b", head)):
            # ("Hello, please do one thing: use ldaps://ldap1 ..."): the head only
            # announces what the tail says
            return [(head + ":", "chatter"), (capitalized(tail), "")]
        if not sep or _SCOPE_HEAD.match(head) or _CONDITION_HEAD.match(head) or any(
                i.kind in STRONG_KINDS for i in items(head)) or \
                len(tokens(head)) < 3 or len(tokens(_without_items(tail))) < 3 or \
                _instruction(head) or states_pairs(tail) or _VALUE_KIND_HEAD.search(head):
            return [(sentence, "")]  # ("then the team code: IPU, DH, CN": what they are)
        hv = view(head)
        # (a short noun phrase, no aside or list in it: not "nit (review habit, sorry)")
        if _verbless(head) and not hv.personal and not re.search(r"[(,]", head) and len(
                tokens(head)) <= 5 and not _LABEL_WORD.match(head) and re.match(
                r"(?i)(?:no|not|never|none|only|always|nobody|allowed|permitted|forbidden|"
                r"banned|blocked|required|mandatory|disabled|enabled)\b", tail.strip()):
            return [(sentence, "")]  # ("exam office staff: NO VPN, policy": whom it binds)
        values = [v for v in re.split(r"\s*[,;]\s*|\s+and\s+", tail.strip(" .")) if v]
        if _verbless(head) and _verbless(tail) and not hv.personal and len(tokens(head)) <= 6 \
                and not _LABEL_WORD.match(head) and (re.search(r"\d", tail) or (
                    len(values) >= 2 and all(len(tokens(v)) <= 3 for v in values)
                    and not hv.evaluative and not re.search(r"\bbut\b", head, re.IGNORECASE))):
            return [(sentence, "")]  # ("QA group (lab-qa): soft 100G, hard 120G", "one
            # schema per business area: sales, stock, hr": a label and its values)
        if _verbless(tail) and any(i.kind in STRONG_KINDS and i.start == len(tail) - len(
                tail.lstrip()) for i in items(tail)) and len(tokens(head)) >= 4 and not (
                past_tense(head) or hv.evaluative or hv.about_answer or _verbless(head) or
                _FIRST_SINGULAR.search(head) or _PRONOUN_START.match(head.strip())):
            # ("Station machines get their packages from our cache on lugworm: http://...
            # for the main archive and http://... for security": the head says what the
            # values are, and they mean nothing without it)
            return [(sentence, "")]
        if _EXCEPTION_HEAD.search(head) and not _PRONOUN_START.match(head.strip()):
            return [(sentence, "")]  # ("Bus laptops are the exception: they pull ...")
        if _names_what_we_use(head, ctx.answer):
            return [(sentence, "")]  # ("We use logwatch: one daily summary ..."): what we use
            # is the fact, and what follows its colon says how
        story = hv.personal and past_tense(head) and not hv.about_answer
        kind = self._kind(hv, ctx)
        if kind not in ("chatter", "praise", "meta") and not story:
            return [(sentence, "")]  # a claim, or a verdict announcing one ("X is pointless:")
        scope = reply_scope(head)
        if scope:  # "Can't go that high on company laptops: the delay is capped ..."
            return [(head + ":", "chatter"), (scoped(scope, tail), "")]
        return [(head + ":", "praise" if kind == "praise" else "chatter"),
                (capitalized(tail), "")]

    def _sentence_kind(self, v: SentenceView, ctx: FeedbackContext) -> str:
        if (_FAREWELL.match(v.text) or _ANNOUNCED_LIST.match(v.text) or _JUST_SAYING.match(
                v.text) or _NOTE_RUN_UP.fullmatch(v.text) or (
                (_status_note(v.text) or _SEASONAL.match(v.text))
                and not (v.modal or v.policy or v.negation)) or _AWAY.match(v.text)) and \
                not v.system:
            # "Let me know if X, and see you at Y": every clause is talk; "Two things.":
            # what follows is the list
            return "chatter"
        if _PRIVATE_SETUP.match(v.text) and not v.system:
            return "chatter"  # "At home I run three containers on a Pi 4 ...": not ours
        if _TO_OTHER_READERS.search(v.text) and not (v.firm_modal or _strict_policy(v)):
            return "chatter"  # "the coffee machine is broken again, if anyone from
            # facilities reads this": a word to somebody else
        if _BARE_POINTER.fullmatch(v.text.strip()):
            return "chatter"  # "See https://.../app-pgdump.html": where to read, no fact
        if _SARCASM.search(v.text) and not v.system:
            return "opinion"  # the whole sentence mocks, whatever its clauses name
        if _DISMAYED.search(v.text) and not (v.modal or v.policy or v.negation or v.system):
            return "opinion"  # "psql is a museum piece.", "Honestly I miss Lotus 1-2-3."
        if _UPDATE_BOT.search(v.text) and not v.strong and not v.system:
            return "meta"  # "Please update the assistant, it's sending people into Sharing."
        if _ANSWER_IS_ABOUT.match(without_greeting(v.text)) and not (v.policy or re.search(
                r"\b(?:must|never|always|only|mandatory)\b", v.text, re.IGNORECASE)):
            return "meta"  # "the bot answer is about local accounts": what the answer did
        if _WRAPPED.fullmatch(v.text) and past_tense(v.text):
            return "chatter"  # "(He left us two databases' worth of tables and a cake.)"
        if not v.system and (((_STORY_OPEN.match(v.text) or _sigh(v.text))
                              and not v.policy and not re.search(
                                  r"\b(?:must|never|always|mandatory|required|only)\b", v.text,
                                  re.IGNORECASE)) or (
                _PAST_ANCHOR.match(v.text) and past_tense(v.text) and not _present_rule(
                    v, changes=not _ONE_TIME.match(v.text)))):
            return "chatter"  # "So this happened again at Ferndale yesterday, ..."
        unframed = BOT_TAIL.sub(".", strip_frame(_unwrapped(v.text)))
        if unframed != v.text:
            v = view(unframed)  # "Our manager told me that X": X is what is claimed
        kind = self._kind(v, ctx)
        if kind in ("system", "question"):
            return kind
        agreed = _CONFIRMED.match(v.text)
        rest = v.text[agreed.end():] if agreed else ""
        if agreed and tokens(rest) and not _strict_policy(v) and (
                (_DOCS_SAY.match(rest) and not v.organisational) or (
                    _told_in_past(_SAW_IT.sub("", rest)) and not v.firm_modal)):
            # ("Correct - and per the manual it also needs extra disk space": what the
            # product's manual says; "Yes, that's right - matches what I saw, the dump ran
            # while people were working": the writer's own run) agree with the answer
            return "praise"
        if kind == "claim" and _ONE_OFF.search(v.text) and not _FROM_NOW.search(v.text) and \
                not (v.firm_modal or _strict_policy(v)):
            return "chatter"  # "the printer ... is out of toner today; Arjun brings one"
        if kind == "claim" and _we_did(v.text) and _told_in_past(v.text) and not (
                v.modal or v.policy or _strict_policy(v)):
            return "chatter"  # "Anyway we made it in 25 minutes late, the cars got off fine."
        if kind == "chatter" and (is_self_introduction(v.text) or _status_note(v.text)
                                  or _LUCK.search(v.text)):
            return kind  # ("IT, this is Vessel Ops.": no clause of it is a claim)
        if kind == "chatter" and _told_once(v.text) and not re.search(
                r"\b(?:is|are|must|never|always|has to|have to|don't|do not)\b", v.text,
                re.IGNORECASE):
            return kind  # a dated story told whole: "... bit us in March 2023: X stalled, ..."
        if _DOUBT.search(v.text) or _WISH.search(v.text):
            return kind  # its clauses stand under the doubt or the wish
        if kind == "chatter" and _EPISODIC.search(v.text) and past_tense(v.text) and not (
                v.firm_modal or _strict_policy(v)):
            return kind  # a story with its date: "Last week ... nobody could save it"
        if kind in ("chatter", "claim") and _incident(v):
            return "chatter"  # what went wrong once: "The till froze twice, ... out of action"
        clauses = [c for c in clause_split(v.text) if tokens(c)]
        if len(clauses) < 2:
            return kind
        views = [view(c) for c in clauses]
        kinds = [self._kind(cv, ctx) for cv in views]
        if "claim" in kinds:
            # Next to a negative opinion ("This answer is useless, nobody can find
            # anything on that page"), a claim that names nothing and states no strict
            # rule is part of the complaint. (A verdict, "That's wrong for contractors:
            # ...", announces a correction.)
            judged = any(k == "opinion" and cv.negative
                         for k, cv in zip(kinds, views, strict=True))
            if judged and not any(k == "claim" and (cv.concrete or cv.roles or _strict_policy(
                    cv)) for k, cv in zip(kinds, views, strict=True)):
                return "opinion"
            return "claim"
        # Every clause is an opinion, a remark on the answer or praise: so is the
        # sentence ("apt on build-03 is painfully slow, this answer didn't help").
        if kind == "claim" and all(k in ("opinion", "meta", "verdict", "praise")
                                   for k in kinds):
            return next(k for k in kinds if k != "chatter")
        # A verdict on the answer after an interjection or a greeting ("Arre yaar, this
        # is not correct only.", "Oh dear, that's wrong"): the sentence is the verdict.
        if kind == "claim" and not v.strong and any(
                k in ("verdict", "meta") for k in kinds) and all(
                k in ("opinion", "meta", "verdict", "praise", "chatter") for k in kinds):
            return next(k for k in kinds if k in ("verdict", "meta"))
        if kind == "claim" and any(k in ("praise", "opinion") for k in kinds) and all(
                k in ("opinion", "meta", "verdict", "praise") or (
                    k == "chatter" and (past_tense(cv.text) or cv.personal))
                for k, cv in zip(kinds, views, strict=True)):
            # "Worked first time - grew lv_shares by 20G over lunch": praise and the story
            # ("thanks for the rota sheet, it has made my Mondays easier": and its effect)
            return next(k for k in kinds if k in ("praise", "opinion"))
        return kind

    def _kind(self, v: SentenceView, ctx: FeedbackContext) -> str:
        if v.system:
            return "system"
        bare = without_greeting(v.text)
        addressed = v.text  # ("IT, this is Vessel Ops.": the addressee is part of it)
        if bare != v.text.strip() and tokens(bare):
            v = view(bare)  # "Dear Sir or Madam, forgive the long note": no names in it
        if is_greeting(v.text.rstrip(".!,")) or _ISSUED_BY.match(v.text) or \
                is_self_introduction(v.text) or is_self_introduction(addressed) or \
                _FAREWELL.match(v.text) or _LUCK.search(v.text) or \
                _status_note(v.text):
            # "Good morning.", "Dear all,", "Issued on behalf of IT.", "Harriet from
            # Brindle Street here."
            return "chatter"
        if _WHAT_I_GET.match(v.text) and not (v.firm_modal or _strict_policy(v)):
            return "chatter"  # "this is what I get on HV-04:" over pasted output
        if _spelling_fix(v.text):
            return "meta"  # "typo: 'cummulative' should be 'cumulative'": the answer's spelling
        if _ALMOST_BUT_OURS.match(v.text) and not v.strong:
            return "verdict"  # "Nearly, but we have specifics.": the answer judged, no fact
        if _TASTE.match(v.text) and not RULE_WORD.search(v.text):
            return "opinion"  # "(Personally) I'd always pick vim over nano": a taste
        if STANCE_START.match(v.text) and not _strict_policy(v):
            return "opinion"  # "Honestly the makerspace needs a UPS too": a view
        if _SETTING.match(v.text) and not v.question:
            return "claim"  # "MaxSessions = 4.", "FZ-80-A: alarm = -70 °C" (see layout)
        if _heading(v.text, ctx.comment):
            return "chatter"  # "Guides' laptop DON'Ts (from Ruaridh, after the trip):"
        if not v.text or v.words < 2:
            # "Annoying.", "Useless!": a one-word judgement is an opinion.
            return "opinion" if v.evaluative else "chatter"
        if v.question:
            return "question"
        if v.speech_imperative and not _DONT_TELL.match(v.text) and not _TELL_SOMEONE.match(
                v.text):
            return "meta"
        if verdict(v.text) and not v.strong:
            return "verdict"
        if _answer_did(v):
            return "meta"  # "You put CREATE INDEX CONCURRENTLY between BEGIN and COMMIT."
        if _CORRECTING.match(v.text):
            return "meta"  # "I must correct this answer, as it misrepresents a control"
        if _FORGETFUL.search(v.text):
            return "chatter"  # "I can never remember which of our machines are Debian"
        # (in its main clause: "If a colour looks wrong, raise it with X" instructs)
        # ("If the default looks wrong raise a ticket": the comma left out)
        feels = _FEELS.search(re.sub(r"^(?:if|when|whenever|once)\b[^,]{3,80}?(?:,\s*|\s+(?="
                                     r"(?:please\s+)?(?:raise|call|ring|ask|tell|contact|email|"
                                     r"e-mail|log|open|report|ping|phone|send|book|message)\b))",
                                     "", v.text, flags=re.IGNORECASE))
        if feels and set(tokens(feels.group(1))) & EVALUATIVE and not (
                _firm_rule(v) or _strict_policy(v)):
            return "opinion"  # "Files and Deja Dup both feel so clunky next to Windows 10"
        if _PREFERENCE.search(v.text) and not (v.firm_modal or _strict_policy(v)):
            return "opinion"  # "half of the staff would rather read it in Welsh"
        if _MAYBE_WAS.search(v.text) and not _strict_policy(v):
            return "opinion"  # "could have been 8080 before the migration": a guess
        if _NO_BETTER.search(v.text) and not (v.firm_modal or _strict_policy(v)):
            return "opinion"  # "DBeaver isn't much better", "the new one is even worse"
        if _SARCASM.search(v.text):
            return "opinion"  # "oh sure, VACUUM FULL at noon, what could possibly go wrong"
        if _EMOTIVE_FRAME.match(v.text) and not (RULE_WORD.search(v.text)
                                                 or _strict_policy(v)):
            # "Love that Falcot has a tidy network and a budget for everything.": a
            # reaction, whatever it names
            return "opinion"
        if (_DOUBT.search(v.text) or (_HEDGE.search(v.text) and not any(
                not _HEDGE.search(p) and len(tokens(p)) >= 3 and not past_tense(p)
                and any(i.kind in STRONG_KINDS for i in items(p))
                for p in re.split(r",\s+|;\s+", v.text)))) and not _vouched(v.text):
            # A guess is not a fact to publish; a hedge holds for its own clause only
            # ("X is probably what you want, analyst_ro already has work_mem 256MB"), and
            # not where the writer vouches for the fact ("I think... yes it is, just looked").
            return "opinion"
        if _CONTEXT_NOTE.search(v.text) and not (v.firm_modal or _strict_policy(v)):
            return "chatter"  # "we're on bacula 13.0.1 if that matters"
        if _bare_list(v.text):
            # "Washington, Brussels, Nairobi.": a list says nothing of its own; after a
            # claim it details it, after a question it is part of the question.
            return "support"
        if _APPOINTMENT.search(v.text) and not (v.policy or _strict_policy(v)):
            return "chatter"  # "I have a deadline on Thursday"
        if _NEED.search(v.text) and not _strict_policy(v):
            return "chatter"  # "for the audit I need the number of sudo accounts by 12 May"
        if (past_tense(v.text) or re.match(r"^(?:[\w'-]+\s+){0,5}(?:was|were)\b", v.text,
                                           re.IGNORECASE)) \
                and re.search(r"\bagain\b", v.text, re.IGNORECASE) and not (
                v.modal or v.policy):
            return "chatter"  # "apt update on ps09 took 14 minutes AGAIN"
        if _TO_COLLEAGUE.match(v.text) and not _strict_policy(v):
            return "chatter"  # "@Kenji this is the thing that bit you last week"
        if _ASSISTANT_SUBJECT.search(v.text) and not v.strong:
            return "meta"  # "the bot could at least pretend"
        toks = tokens(v.text)
        if toks and all(t in _TEST_WORDS or t.isdigit() for t in toks):
            return "chatter"  # "test test 123"
        if _WISH.search(v.text) and not _strict_policy(v):  # ("would" is the wish's own)
            return "meta"  # "it would be great if the assistant could book it for me"
        if (_HOLDINGS.match(v.text) and not (v.policy or v.negation)) or _STANDING.match(
                v.text) or (
                _HABIT.match(v.text) and not (v.firm_modal or v.negation or any(
                    t in POLICY for t in tokens(v.text)[3:]))):
            # (the habit's own verb may be a policy word: "I use it all day")
            return "chatter"  # "we've got 14 of them", "I print them out for volunteers"
        # ("Two registered staff sign every CD entry.": a quantifier is a function word)
        if v.words >= 4 and not v.strong and not set(tokens(v.text)) & (
                STOPWORDS | COUNT_WORDS) and \
                not (_BLANKET.search(v.text) or v.negation or v.policy
                     or re.search(r"\w[ \t]+=[ \t]+\w", v.text)
                     # ("Office PCs stay user choice.": a verb of state reads)
                     or re.search(r"\b(?:stays?|remains?)\b", v.text, re.IGNORECASE)):
            # ("X don't query Y" reads: a negated verb is English however terse, and so
            # does a policy verb: "Design review rejects serial columns"; and "X = Y" is
            # "X is Y": "lift PLCs + humans = Europe/Zurich")
            return "chatter"  # no English function word: not a sentence we can read
        if _foreign(v.text):
            return "chatter"  # "Mein Englisch ist für technische Sachen nicht so gut."
        novel = novel_items([*v.strong, *v.names], ctx.answer)
        new_words = content_stems(v.text) - content_stems(ctx.answer) - _GENERIC
        firm = v.firm_modal or v.policy or v.negation or bool(_SCOPED_CONTRAST.match(v.text))
        if _PRAISE.search(v.text) and not (v.firm_modal or v.policy or (
                v.negation and v.concrete) or _SCOPED_CONTRAST.match(v.text)):
            return "praise"  # "the Ctrl+Shift+R tip worked, thanks": nothing new asserted
        if _CONFIRM.match(v.text) and not firm and not novel_items(
                [*v.strong, *v.names], ctx.answer):
            return "praise"  # "yes exactly, X, that's how we do it": agreement
        if _TO_ASSISTANT.match(v.text) or _FOR_WHOEVER.match(v.text) or (
                _STOP_TELLING.match(v.text) and not (
                v.strong or v.names)) or (_STYLE.search(v.text) and not (
                v.firm_modal or v.policy)):
            return "meta"  # "just give me the commands", "less lecturing please"
        if tokens(v.text)[:1] and tokens(v.text)[0] in POSITIVE and v.positive and not (
                v.policy or ((v.firm_modal or v.negation) and not _only_without(v.text))):
            # (v.positive: not "Clear History… before handing it back", a verb)
            # ("Perfect, 500G added without unmounting anything": "without" tells how it
            # went, it forbids nothing)
            return "praise"  # "Perfect, the import now takes 20 minutes"
        if v.evaluative and not firm and (v.personal or v.about_answer) and not (
                _OURS_INSTEAD.search(v.text) and novel_items(list(v.strong), ctx.answer)):
            # An opinion of the answer or of one's own experience with it ("very clear
            # explanation, I'm sending it to my team"), whatever it names; but "the name
            # in your example is wrong, ours are arrival_yYYYYmMM" says what holds.
            return "praise" if v.positive else "opinion"
        if v.about_answer and v.negative and not (v.concrete or v.roles or _strict_policy(v)):
            # "This answer is useless, nobody can find anything on that page": a verdict
            # on the answer with a complaint, naming nothing a nugget could state.
            return "opinion"
        if v.about_answer and _COVERAGE.search(v.text):
            return "verdict"  # "nothing about BUFFERS": what the answer left out
        strong_novel = [i for i in novel if i.kind != "name"]
        if _names_what_we_use(v.text, ctx.answer):
            return "claim"  # "We use logwatch:": what the house uses, named
        if _PERMITTED.match(v.text) and not v.about_answer and len(new_words) >= 2:
            return "claim"  # "Passphrases of three or more random words are fine.": allowed
        # ("GNOME on these old PCs is painfully slow": "old" overturns no rule here)
        judged = v.evaluative >= 2 and not (v.firm_modal or v.policy or _denies(v.text)
                                            or _SCOPED_CONTRAST.match(v.text))
        opinion = judged or (v.evaluative == 1 and not firm and not novel)
        if opinion or _SCORE.search(v.text):
            return "praise" if v.success or v.positive else "opinion"
        if v.about_answer and not (v.modal or _strict_policy(v) or (v.negation and strong_novel)
                                   or (_OURS_INSTEAD.search(v.text) and strong_novel)):
            return "meta" if _TONE.search(v.text) or not (v.evaluative or v.negation) \
                else "verdict"
        # (the main clause's: "X is the slow keys toggle, which is what happened to a
        # trainee yesterday" states X; "not posted anymore, TSS removed it last year"
        # states what holds now)
        main = _CHANGE_TAIL.split(_STORY_TAIL.split(v.text)[0])[0]
        # ("OpenVPN was replaced by WireGuard last autumn": what holds since)
        if not _NOW_STATE.search(main) and not _STATE_CHANGE.search(main) and (
                _EPISODIC.search(main) or (_when(main) and past_tense(
                    # ("starts at 02:30 since the new PMS went live": the change is past,
                    # what holds since is not)
                    re.split(r"\s+since\s+", main, maxsplit=1)[0]) and not
                                          _RECURRING.search(v.text))) and not (
                (view(_ONLY_PAST.sub(" ", v.text)).modal and not re.search(
                    r"\b(?:could|would)(?:n't| not)?\b", v.text, re.IGNORECASE))
                or _strict_policy(v)):
            # ("nobody could save the plan last week": a past "could" is the story's)
            return "chatter"  # what happened once ("hung around 14:20 today") is no rule
        if not strip_residue(v.text):
            # Every clause is talk: "I have a deadline on Thursday", "I lost an hour on
            # this", "Thanks, that was the real problem".
            return "chatter"
        if _HARD_TO.search(v.text) and not (v.firm_modal or _strict_policy(v)):
            return "opinion"  # "the docs on window functions are impossible to read"
        if (_SYMPTOM.search(main) or _INCIDENT.search(main) or _SEEN_ERROR.search(
                main)) and not (
                v.firm_modal or _strict_policy(v)):
            return "chatter"  # "TimeTabler hangs every single time", "the projector died"
        if _HEARSAY.match(v.text):
            return "opinion"  # what an unnamed source says is not the writer's fact
        if _FOR_WHOM.match(v.text.rstrip(".!")) and v.words <= 8 and not v.strong:
            return "chatter"  # "It's for Marta on the weekend shift": the request's purpose
        if _ASKING_FOR.match(v.text):
            return "chatter"  # "asking for the whole QA team lol": who the question is for
        if _VALUE_REPLY.match(v.text) and v.words <= 4 and not _SCORE.search(v.text) and \
                _value_reply(v.text, ctx.answer):
            return "claim"  # "It's 30s." where the answer said 60s: the value corrected
        if _bare_item_reply(v.text, ctx.answer) or _bare_when_reply(v.text, ctx.answer):
            return "claim"  # "Super+V." where the answer said Super+N: the key corrected
        if _LOST.search(v.text) and not _strict_policy(v):
            return "chatter"  # "I can't find Remote Desktop in Sharing": the asker's search
        if _PLAN.search(v.text) and not (v.roles or _strict_policy(v)):
            return "chatter"  # "I'm presenting to 40 families", "still waiting to hear back"
        if _MENTAL.search(v.text) and not _strict_policy(v):
            return "opinion"  # "nobody at the desk understands the refund screen"
        if _PERSONAL_NEED.match(v.text) and not (v.roles or any(
                t in ("we", "our", "all", "every", "everyone") for t in tokens(v.text))):
            return "chatter"  # "need it for the cover by Thursday": the asker's context
        if tokens(v.text)[:1] and tokens(v.text)[0] in _SIMPLE_PAST and not (
                v.modal or v.policy or _strict_policy(v)):
            return "chatter"  # "Grew lv_shares by 20G over lunch": the writer's act, told
        head = tokens(v.text)[:2]
        if len(head) == 2 and (head[0] in IRREGULAR_PAST or (
                head[0].endswith("ed") and len(head[0]) > 4)) and head[1] in STOPWORDS and \
                head[1] not in ("is", "are", "was", "were", "has", "have") and \
                not (v.modal or v.policy) and not _instruction(v.text):
            # "Reprinted on PROOF-A3", "Tried it twice": what the writer did, with the
            # subject left out (unlike "Deleted files stay ..." or "Balanced is the
            # default", where it is a noun).
            return "chatter"
        if all(_ABOUT_ME.match(c.strip()) for c in re.split(r",\s+|;\s+", v.text)) and not (
                v.policy or _strict_policy(v) or v.organisational or re.search(
                    r"\b(?:can|can't|cannot|must|may|only|allowed|have to|need to)\b", v.text,
                    re.IGNORECASE)):
            # ("I can't reset other users' passwords" is a permission: a rule)
            return "chatter"  # "I'm a PhD student, I don't have sudo anywhere": the writer
        told = v
        if told.personal and _ANECDOTE.search(told.text) and told.strong and all(
                re.fullmatch(r"(?:19|20)\d\d", i.text) for i in told.strong) and not (
                told.names or told.firm_modal or _strict_policy(told)):
            return "chatter"  # "I had been told otherwise at my induction in 2019": a story
        if v.personal and _told_in_past(v.text) and not (
                v.modal or v.policy or v.negation or v.organisational or _strict_policy(v)
                or _SETTING_CHANGE.search(v.text)) and all(
                i.kind == "number" for i in v.strong) and not v.names:
            return "chatter"  # "lol my cat sat on the keyboard and opened 9 tabs": a story
        personal_only = v.personal and not v.organisational and not novel
        concrete_claim = v.concrete and v.words >= 3 and (
            bool(novel) or (v.negation and bool(new_words)) or len(new_words) >= 2)
        instruction = _instruction(v.text) and (
            len(new_words) >= 2 or (len(new_words) == 1 and v.words <= 4))
        rule_claim = v.rule and len(new_words) >= 2 and not personal_only and v.words >= 4 \
            and (v.organisational or bool(v.roles) or v.concrete or len(new_words) >= 3
                 or v.firm_modal)
        # "apt-file is only on tern-build": a firm restriction on a named subject.
        restriction = v.firm_modal and bool(new_words) and v.words >= 4 and not (
            personal_only or v.evaluative) and not _PRONOUN_START.match(v.text)
        # A rule over a named item, even one the answer named ("NetworkManager is only on
        # workstations"), or a prohibition ("don't run your own apt-cacher-ng").
        limited = v.concrete and (v.firm_modal or v.negation or v.policy) and bool(new_words)
        # ("No unattended upgrades on on-air machines.": a ban with its verb left out)
        prohibition = bool(_PROHIBITION.match(v.text) or (
            _BAN.match(v.text) and v.words >= 3 and not _FINITE_VERB.search(v.text)
            and not v.question)) and bool(content_stems(v.text) - _GENERIC - {"need"})
        blanket = (bool(_BLANKET.search(v.text)) and v.words >= 3) or (
            bool(_SCOPED_STATE.match(v.text)) and bool(new_words))
        # "`exportfs -ra`." on its own: the command the writer gives instead.
        command = bool(_COMMAND_ONLY.match(v.text)) and bool(novel_items(list(v.strong),
                                                                          ctx.answer))
        # "LV first (`lvresize ...`), then `resize2fs`": an order of named steps.
        order = bool(_ORDER.search(v.text)) and len(v.strong) >= 2 and not past_tense(v.text)
        # "Super+Up maximises." after an answer that tiled with Super+Up: what the named
        # item does, said anew.
        redefined = any(i.start == 0 and i.kind in ("keys", "menu", "path", "quoted", "tech")
                        and re.search(r"[A-Za-z]{3,}", v.text[i.end:]) for i in v.strong) and \
            bool(new_words) and 2 <= v.words <= 6
        # "Balanced is the default", "the default is 5 minutes", "it defaults to en_GB":
        # which value holds when nobody changes it, a setting's fact.
        default = bool(_DEFAULT_VALUE.search(v.text)) and bool(
            new_words - {"default", "defaults"}) and v.words >= 3 and not (
            v.personal or re.search(r"\b(?:was|were|used\s+to)\b", v.text, re.IGNORECASE))
        # "Clients use sssd.": a policy verb between a subject and a name that is no
        # English word, a rule however terse
        terse = (v.policy and v.words == 3 and len(new_words) >= 2 and any(
            t.isalpha() and not english_word(t) for t in tokens(v.text))) or bool(
            _NAMED_VALUE.match(v.text)) or bool(  # ("the command is tidewater-desk.")
            (called := _CALLED.match(v.text)) and not english_word(called.group("name").lower()))
        # ("the superuser is called emsadmin.": a name no English word is)
        rule_claim = rule_claim or limited or prohibition or blanket or command or order or \
            redefined or default or terse or (
            v.words >= 4 and _overturns(v, ctx.answer)) or _denies_answer(v, ctx.answer)
        if not (concrete_claim or rule_claim or instruction or restriction) or \
                (personal_only and not concrete_claim):
            if _SCOPED_CONTRAST.match(v.text):
                return "support"  # "In every other clinic autodiscovery works fine."
            return "opinion" if v.evaluative else "chatter"
        return "claim"

    def _on_topic(self, sentences: Sequence[str], ctx: FeedbackContext) -> bool:
        if _value_reply(" ".join(sentences), ctx.answer):
            return True  # "It's 30s." after an answer that said 60s
        return self._on_topic_words(sentences, ctx)

    def _on_topic_words(self, sentences: Sequence[str], ctx: FeedbackContext) -> bool:
        topic = content_stems(f"{ctx.query}\n{ctx.answer}") - _GENERIC
        if any(content_stems(s) & topic for s in sentences):
            return True
        if self._vectors is None or not sentences:
            return False
        m, qa, q = self._vectors([" ".join(sentences), f"{ctx.query}\n{ctx.answer}",
                                  ctx.query])
        return max(float(np.dot(m, qa)), float(np.dot(m, q))) >= RELEVANCE_MIN

    # -- deciding ----------------------------------------------------------------------

    def _extract(self, ctx: FeedbackContext) -> Extraction:
        sents = self.read(ctx)
        system = [s.view.system for s in sents if s.kind == "system"]
        whole = addressed_to_system(_without_answer_quotes(ctx.comment, ctx.answer))
        if whole:
            # "my codes if that helps: 4471-9902 ..." across a colon, a note to the model
            # in an HTML comment that the reading drops: the raw message is checked too.
            system.append(whole)
        forwarded = forwarded_message(ctx.comment)
        if not system and forwarded is not None and not any(
                s.kind == "claim" and s.view.strong for s in sents):
            # The writer passes a message on ("+1, still current, go by this", "see
            # below from IT") and names nothing concrete of their own: the forwarded
            # text is what they say (their note only vouches for it).
            ctx = dataclasses.replace(ctx, comment=forwarded[1])
            sents = self.read(ctx)
            system = [s.view.system for s in sents if s.kind == "system"]
        if system:
            return Extraction("other", False,
                              f"refused: {system[0]} (feedback is data, not instructions)")
        claims = [s for s in sents if s.kind == "claim"]
        if claims:
            result = self._nugget(ctx, sents)
            return self._second_look(ctx, sents, result)
        kinds = {s.kind for s in sents}
        lowered = ctx.comment.lower()
        if "praise" in kinds and ctx.rating != "down":
            return Extraction("praise", False, "positive feedback without a new fact")
        if "meta" in kinds or _TONE.search(lowered):
            return Extraction("tone_or_style", False,
                              "remarks on how the assistant answers, no fact")
        if "question" in kinds:
            return Extraction("question", False, "a follow-up question, not a correction")
        if "offtopic" in kinds:
            return Extraction("other", False,
                              "states something unrelated to the question and its answer")
        if ctx.rating == "down" or "opinion" in kinds or "verdict" in kinds:
            return Extraction("vague_negative", False,
                              "negative feedback without a concrete, checkable claim")
        return Extraction("other", False, "no concrete, checkable claim")

    def _second_look(self, ctx: FeedbackContext, sents: Sequence[Sentence],
                     result: Extraction) -> Extraction:
        """The learned check's veto: an accepted short message whose sentences are not
        all claims, and which reads as a whole like something other than a correction."""
        if self._check is None or self._embedder is None or not result.can_produce_nugget:
            return result
        # (a sentence that mocks the answer is the correction's cue, not another reading)
        if not may_veto([("claim" if s.kind == "opinion" and _SARCASM.search(s.view.text)
                          else s.kind) for s in sents]):
            return result
        # ("Half right. X is fine for small files. But anything over 10 MB bounces ...":
        # a claim set against what was granted is the correction, whatever the rest reads as)
        if any(s.kind == "claim" and _CONTRAST_OPEN.match(s.raw.strip()) and any(
                p.kind in ("praise", "verdict") for p in sents[:i])
               for i, s in enumerate(sents)):
            return result
        others = sorted({s.kind for s in sents} - {"claim", "support"})
        p = self._check.probability(ctx, self._embedder)
        if p >= self._check.threshold:
            return result
        return Extraction("other", False,
                          f"the claim sentences sit in a message that reads as something "
                          f"else ({', '.join(others)} beside them; learned check "
                          f"{p:.2f} < {self._check.threshold:g})")

    def _nugget(self, ctx: FeedbackContext, sents: Sequence[Sentence]) -> Extraction:
        body_sents = body_sentences(sents, ctx.answer,
                                    f"{ctx.query}\n{ctx.answer}\n{ctx.comment}",
                                    topic=f"{ctx.query}\n{ctx.answer}", query=ctx.query)
        if not body_sents:
            return Extraction("actionable_correction", False,
                              "the claim does not stand alone once remarks are removed")
        body = " ".join(merge_to(body_sents, MAX_BODY_SENTENCES))
        claims = [s for s in sents if s.kind == "claim"]
        scope = scope_of(body) or scope_of(ctx.query) or "global"
        title = title_for(ctx.query, body, ctx.answer, scope)
        subject, predicate, obj = fact_triple(body_sents[0], body, ctx)
        kind = "Instruction" if tokens(body_sents[0])[:1] and tokens(body_sents[0])[0] in \
            INSTRUCTION_VERBS else "SemanticFact"
        dropped = len(sents) - len(claims)
        what = sorted({i.kind for s in claims for i in (*s.view.strong, *s.view.names)})
        reason = (f"{len(claims)} claim sentence(s)"
                  + (f" naming {', '.join(what)}" if what else " stating a rule")
                  + (f"; {dropped} other sentence(s) left out" if dropped else ""))
        return Extraction("actionable_correction", True, reason, title=title, body=body,
                          subject=subject, predicate=predicate, object=obj, scope=scope,
                          kind=kind)


# ---------------------------------------------------------------------------------------
# Body
# ---------------------------------------------------------------------------------------

_PRONOUN_START = re.compile(r"^(?:it|it's|its|they|they're|this|that|there)\b", re.IGNORECASE)
_SUBJECT_NP = re.compile(
    r"^((?:the|this|that|our|your|a|an)\s+(?:[\w&'-]+\s+){0,3}?[\w&'-]+|(?:[A-Z][\w&'-]*\s+)"
    r"{0,3}[A-Z][\w&'-]*)\s+(?:is|are|was|were|has|have|lives|sits|runs|can|cannot|can't|must|"
    r"only|will|does|doesn't|isn't|aren't)\b")


_ANECDOTE = re.compile(r"\b(?:i|me|my|mine|ours)\b.*\b(?:was|were|had|did|got|went|been|\w+ed)\b|"
                       r"\b(?:was|were|had|did|got|went|been|\w+ed)\b.*\b(?:i|me|my|mine|ours)\b",
                       re.IGNORECASE)


#: A story told as one: "So this happened again at Ferndale yesterday, ...", "Funny story:
#: last week ...", "Long story short, ...".
_STORY_OPEN = re.compile(r"^(?:so\s+|ok(?:ay)?\s+so\s+|right\s+so\s+)?(?:this|that|it)\s+"
                         r"(?:already\s+)?happened\b|"
                         r"^(?:(?:this|that|it)\s+)?reminds\s+me\s+of\b|"
                         # ("this is the thing that bit us on 1 March": the story's pointer)
                         r"^(?:this|that|it)\s+(?:is|was|'s)\s+(?:exactly\s+)?(?:the\s+(?:\w+\s+)?"
                         r"(?:thing|bug|problem|issue|mistake|trap)\s+(?:that\s+)?|what\s+)"
                         r"(?:bit|hit|caught|burned|burnt|got|tripped)\s+(?:us|me|them)\b|"
                         r"^(?:and\s+)?(?:it|this|that)\s+(?:hasn't|has\s+not|never)\s+happened\s+"
                         r"(?:since|again)\b|"
                         r"^(?:so\s+)?(?:this|it)\s+is\s+going\s+to\s+be\s+(?:a\s+bit\s+of\s+)?a\s+"
                         r"(?:ramble|rant|long\s+one|long\s+story)\b|^(?:ok(?:ay)?\s+so\s+|so\s+)?(?:funny|true|long)\s+"
                         r"story(?!\s+short)\b|"
                         # an item left open: "disk encryption, not decided yet, ignore for now"
                         r".*\b(?:not\s+(?:yet\s+)?decided(?:\s+yet)?|undecided|to\s+be\s+"
                         r"(?:decided|confirmed|agreed)|ignore\s+(?:this\s+|it\s+)?for\s+now)\b|"
                         # "Also the battery is shot but that's a separate story."
                         r".*\b(?:that's|that\s+is)\s+(?:(?:a\s+)?(?:separate|another|different)\s+"
                         r"(?:story|matter|issue|topic)|not\s+your\s+problem)\b", re.IGNORECASE)
#: "Falcot Corp again.": a name and "again", a sigh, not a statement.
_AGAIN_RE = re.compile(r"^(?:(?:ha|haha|oh|ah|lol)\W+)?(?!(?:wrong|broken|outdated|incorrect|false|"
                       r"down|failing|failed|crashed|dead|slow|stuck|not\b|same)\b)"
                       r"(?P<what>[\w .&'-]{1,60}?)\s+again\s*[.!]*$", re.IGNORECASE)


def _sigh(text: str) -> bool:
    """A name and "again", with no verb: a sigh ("Falcot Corp again.", "Ha, the weather
    table with Hayward again."), not "It silences the banners until you turn it off again"."""
    m = _AGAIN_RE.match(text)
    if m is None:
        return False
    what = m.group("what")
    # (no word that may be a verb: "Pressing Print again just opens the overlay again")
    return _verbless(what) and not re.search(r"\b[a-z]\w*(?:s|ed|ing)\b", what)


#: The writer's own taste: "I'd always pick vim over nano", "I would go with the blue
#: trays myself" (what they would choose, not what holds).
_TASTE = re.compile(r"(?:(?:personally|honestly|frankly|tbh|imo|imho)\s*,?\s+)?"
                    r"i(?:'d|\s+would)\s+(?:always\s+|probably\s+|rather\s+|personally\s+|"
                    r"still\s+)?(?:pick|choose|prefer|go\s+(?:with|for)|take|vote\s+for|"
                    # ("Personally I'd always tell people to use nano rather than vi")
                    r"(?:tell|advise|recommend)\s+(?:people|everyone|folks|beginners|newcomers)"
                    r"\s+to\s+(?:use|pick|go\s+with))\b", re.IGNORECASE)




def _aside(text: str) -> bool:
    """A sentence told beside the rule, never support of it: a story ("So this happened
    again ..."), a sigh ("Falcot Corp again."), a sentence that only announces a remark
    ("Quick clarification after the review.")."""
    return bool(_STORY_OPEN.match(text) or _NOTE_RUN_UP.fullmatch(text)) or _sigh(text)
#: A sentence opening with a past time: "Last year at Northern Masters three encoders
#: dropped frames ...", "Between 19:42 and 19:58 gs-14 sat at load 11" (an incident told,
#: unless it states what holds now: "Since last year ..." opens no past).
_PAST_ANCHOR = re.compile(r"^(?:(?:so|and|but|also)\s+)?(?:last\s+(?:year|week|month|night|"
                          r"time|season|winter|summer|spring|autumn|fall|weekend|event)|"
                          r"yesterday|this\s+morning|earlier\s+(?:today|this\s+week)|"
                          r"back\s+in\s+(?:january|february|march|april|may|june|july|august|"
                          r"september|october|november|december|spring|summer|autumn|winter|"
                          r"\d{4})|"
                          r"between\s+\d{1,2}:\d{2}\s+and\s+\d{1,2}:\d{2}|"
                          r"on\s+\d{4}-\d{2}-\d{2}|a\s+(?:few|couple\s+of)\s+"
                          r"(?:days|weeks|months)\s+ago|"
                          # ("During the February floods the server filled its disk", "In
                          # March 2022 the hall lost power": a time the story happened in)
                          r"during\s+(?:the|that|our|last)|"
                          # ("At my last job we did exactly that, VNC over SSH": elsewhere)
                          r"(?:at|in|on)\s+my\s+(?:last|previous|old|former|first)\s+(?:job|"
                          r"company|employer|place|workplace|school|site|team|role|trust|firm)|"
                          # ("The one time someone fiddled with it, the night shift ...")
                          r"the\s+(?:one|only|last|first)\s+time|"
                          r"in\s+(?:(?:early|late|mid)[\s-]+)?(?:january|february|march|april|june|"
                          r"july|august|september|october|november|december|\d{4}))\b",
                          re.IGNORECASE)
#: An action given to a person: "Action: Priya to add a check to the lint.", "ACTION Wen:
#: add till-2."
# (not a list's label: "Action items:", "Actions taken:")
_ASSIGNED = re.compile(r"^\s*(?i:actions?)\s*(?::\s*[A-Z][\w'-]+(?:\s+(?:and|&)\s+[A-Z][\w'-]+)?"
                       r"\s+to\s+\w|\s+(?!(?i:items?|taken|points?|plan|list|required|needed|"
                       r"agreed)\b)[A-Z][\w'-]+\s*:\s*\S|"
                       # ("Action: Ffion.": whose it is, and nothing else)
                       r"\s*:\s*[A-Z][\w'-]+(?:\s+(?:and|&)\s+[A-Z][\w'-]+)?\s*[.!]?\s*$)")
#: Words of a meeting's minutes, where "Name to do X" is an action.
_MINUTES_WORDS = re.compile(r"\b(?:minutes|actions?|agreed|item\s+\d|present:|attendees)\b",
                            re.IGNORECASE)
#: A minute's action given to a person by name: "Hamish to update the signage at Tenpenny."
#: (a name, not a word: "Requests to add a domain go via Mei", "Just to add, ...")
_NAMED_TO_DO = re.compile(r"^\s*(?P<name>[A-Z][a-z'-]+)(?:\s+(?:and|&)\s+[A-Z][a-z'-]+)?\s+to\s+"
                          r"(?:update|send|check|publish|write|ask|chase|book|order|look|fix|draft|"
                          r"arrange|contact|raise|review|confirm|add|remove|tell|email|e-mail|"
                          r"call|ring|follow|circulate|share|investigate|find|sort|organise|"
                          r"organize|schedule|prepare|brief|speak|talk|get|buy|replace|test|"
                          r"report)\b[^.!?]*[.!]?\s*$")
#: An incident's story under its name: "Lessons learned from incident INC-0412 (April): ...".
_INCIDENT_TOLD = re.compile(r"^[^:\n]{0,60}\b(?:lessons?\s+learn(?:ed|t)|post-?mortem|incident|"
                            r"outage|root\s+cause|what\s+happened)\b[^:\n]{0,40}:\s*(?P<tail>\S.*)$",
                            re.IGNORECASE)
#: The next event of a story: "Then Fiona came in and we had a long chat ...".
_THEN_PAST = re.compile(r"^\s*(?i:(?:and\s+)?then)\s+(?:[A-Z][a-z]+|i|we|he|she|they|it|"
                        r"the\s+\w+)\s+(?:\w+ed|came|went|had|got|said|told|saw|took|made|ran|left|gave|"
                        r"found|rang|sent|broke|fell|froze)\b")


#: Who says what, in a dispute: "Karen says switch it off, Gary says leave it on", "some
#: say 30 days, others say 90".
_SAYS = re.compile(r"(?:^|[,;]\s*|\b(?:and|but|while)\s+)((?-i:[A-Z][a-z]+)|some(?:one|body)?|"
                   r"others?|half\s+of\s+us|the\s+other\s+half)\s+(?:says?|said|thinks?|"
                   r"reckons?|wants?|swears?)\b", re.IGNORECASE)
#: A word to other readers of the channel: "..., if anyone from facilities reads this".
_TO_OTHER_READERS = re.compile(r"\bif\s+(?:anyone|anybody|someone|somebody)\s+(?:from\s+"
                               r"(?:the\s+)?[\w&-]+(?:\s+[\w&-]+)?\s+)?(?:ever\s+)?(?:reads|sees|is\s+"
                               r"reading)\s+(?:this|these|it)\b", re.IGNORECASE)
#: A sentence that only points at a page: "See https://www.postgresql.org/docs/...", "Check
#: the docs here: https://...". It says where to read, not what holds.
_BARE_POINTER = re.compile(r"(?:(?:please|just|also)[ \t]+)?(?:see|check|read|look[ \t]+at|"
                           r"refer[ \t]+to|try)[ \t]+(?:(?:the[ \t]+)?(?:docs?|documentation|"
                           r"manual|page|link|article)[ \t]*(?:here|at|on)?[ \t]*:?[ \t]*)?"
                           r"(?:<)?(?:https?://)\S+?(?:>)?[ \t]*[.!]?", re.IGNORECASE)


def _story_goes_on(views: Sequence[tuple[str, SentenceView]], kinds: Sequence[str],
                   i: int) -> bool:
    """Sentence ``i`` follows a story told in the past ("Back in 2021 the dump sat waiting
    until 7am ...") and every clause of it is in the past too ("We only noticed when the
    box office opened and the tills were slow."): the story's next event."""
    if i == 0 or kinds[i - 1] != "chatter":
        return False
    before, here = views[i - 1][1].text, views[i][1].text
    return bool(_PAST_ANCHOR.match(before) or _EPISODIC.search(before)) and past_tense(
        before) and all(clause_in_past(c) for c in re.split(r",\s+|\s+(?:and|but|so)\s+", here)
                        if tokens(c))


#: What happened once, told as such: "The one time someone set UTC on a session, ...".
_ONE_TIME = re.compile(r"^(?:(?:and|but|so)\s+)?the\s+(?:one|only)\s+time\b", re.IGNORECASE)


def _present_rule(v: SentenceView, changes: bool = True) -> bool:
    """A clause in the present that states how things are ("..., and since then the
    dumps are kept 14 days"); with ``changes``, also a change told in the past, which
    leaves a new state ("Last week we moved the share to fs02"; not in what happened
    "the one time someone set UTC on a session")."""
    # ("We only noticed when ...": "only" on a past verb states nothing now)
    return bool(re.search(r"\b(?:is|are|runs?|stays?|goes|must|always|only(?!\s+\w+ed\b)|"
                          r"now|mandatory|required|(?:do|does)\s+not|don't|doesn't)\b", v.text,
                          re.IGNORECASE)) or (changes and bool(re.search(
                              r"\b(?:moved|changed|switched|replaced|migrated|renamed|upgraded|"
                              r"raised|lowered|retired|decommissioned|introduced|set|turned|"
                              r"disabled|enabled|removed|added|banned|dropped\s+support)\b",
                              v.text, re.IGNORECASE)))


#: The writer says the answer worked: "it works now", "that was it", "sorted".
_WORKED = re.compile(r"\bworks?\s+now\b|\b(?:it|that|this)\s+worked\b|\bworked\s+(?:fine|"
                     r"perfectly|first\s+time|like\s+a\s+charm|a\s+treat)\b|\b(?:fixed|solved)\s+"
                     r"it\b|\bdid\s+the\s+trick\b|\bthat\s+was\s+it\b|\b(?:all\s+)?sorted\s+now\b",
                     re.IGNORECASE)  # ("What actually worked was \\copy ...": a fact, no thanks)
#: The answer confirmed against a source: "... so that matches", "that checks out".
#: (the subject may be left out after a dash: "The docs say '...' - matches what you wrote.")
_MATCHES = re.compile(r"(?:\b(?:so\s+)?(?:that|it|this|which)\s+|\s[\u2014\u2013-]\s*)(?:matches|"
                      r"checks\s+out|lines\s+up|agrees)(?:\s+(?:with\s+)?(?:what\s+(?:you|the\s+"
                      r"(?:bot|assistant|answer))\s+(?:said|says|wrote|gave|had)|your\s+answer|the\s+"
                      r"answer))?[.!]*$", re.IGNORECASE)
#: A quotation inside a sentence, however long: what a document or a person said.
_QUOTATION = re.compile(r"(?<!\w)[\"“‘'][^\"”’'\n]{2,240}[\"”’'](?!\w)")


def _confirms_answer(v: SentenceView) -> bool:
    """The sentence reports that the answer worked or matches a source, and states no rule
    of its own. A rule inside a quotation of the source is the source's, which the answer
    already follows ("The docs literally say 'X does not convey Y' - matches what you
    wrote.")."""
    if _MATCHES.search(v.text):
        v = view(_QUOTATION.sub('"..."', v.text))
    elif not _WORKED.search(v.text):
        return False
    return not (v.firm_modal or v.policy or _denies(v.text))


#: Praise that turns to what the answer lacks: "ok but you forget", "fine, except that".
_PRAISE_TURNS = re.compile(r"\b(?:but|however|though|although)\b[^.!?]*:\s*$|"
                           # ("Right screen, thumbs up, but the values for the record:")
                           r"\b(?:but|however|except|though|although|yet)\b[^.!?]*\b(?:you|it|"
                           r"the\s+answer)\s+(?:forg[eo]t|miss(?:es|ed)?|left\s+out|leaves?\s+"
                           r"out|skip(?:s|ped)?|didn't|doesn't|don't|does\s+not|did\s+not)\b|"
                           r"\b(?:but|except)\s+(?:for\s+)?(?:one|a\s+few|two|some)\s+(?:thing|"
                           r"detail|point|bit|catch)s?\b", re.IGNORECASE)
#: A document's words reported: "the wiki page I wrote still says", "the handout said".
_DOC_SAYS = re.compile(r"\b(?:wiki|page|handout|document|doc|guide|runbook|notes|sheet|article|"
                       r"slides?|poster|sop|faq|readme)\b[^.;:!?]{0,40}?\b(?:still\s+)?(?:says|said|"
                       r"tells|told|shows|showed|lists|listed|mentions|mentioned)\b", re.IGNORECASE)
#: ... and, in the same sentence, that it no longer holds: ", and it's long gone".
_NO_LONGER_HOLDS = r"long\s+gone|gone|out\s+of\s+date|outdated|obsolete|wrong|retired"
_GONE_TAIL = re.compile(r"(?:,|\band\b|;)\s+(?:it|that|this|which)(?:'s|\s+is|\s+was|\s+has)?\s+"
                        r"(?:been\s+)?(?:" + _NO_LONGER_HOLDS + r"|no\s+longer\s+\w+)\s*[.!]?$",
                        re.IGNORECASE)
#: ... or in the next one: "That stopped in 2023.", "It's long gone."
_GONE_NEXT = re.compile(r"^(?:that|this|it)(?:'s|\s+is|\s+was|\s+has)?\s+(?:been\s+)?(?:stopped|"
                        r"changed|went\s+away|" + _NO_LONGER_HOLDS + r"|no\s+longer\s+true)\b"
                        r"[^.;:!?]{0,40}[.!]?$", re.IGNORECASE)
#: Agreement with the answer at the start of a sentence: "Correct -", "Yes, that's right -".
_CONFIRMED = re.compile(r"^(?:(?:yes|yep|yeah)[,.!]?\s+)?(?:that'?s\s+(?:right|correct|it)|"
                        r"correct|exactly|spot\s+on|indeed|agreed)\b(?=[ \t]*[,.!:;\u2014\u2013-])"
                        r"[\s,.!:;\u2014\u2013-]*"
                        r"(?:(?:and|also|plus)\s+)?", re.IGNORECASE)
#: "matches what I saw, ...": the writer's own experience agrees.
_SAW_IT = re.compile(r"^(?:(?:that|it|this)\s+)?(?:matches|fits|agrees\s+with)\s+what\s+(?:i|we)\s+"
                     r"(?:saw|see|found|got|observed|had)\b[\s,;:\u2014\u2013-]*", re.IGNORECASE)
#: What the product's own documentation says: "per the manual", "according to the docs".
_DOCS_SAY = re.compile(r"(?:per|according\s+to|as\s+per)\s+(?:the\s+)?(?:manual|docs|"
                       r"documentation|man\s+page|upstream\s+docs)\b|the\s+(?:manual|docs|"
                       r"documentation|man\s+page)\s+(?:also\s+)?says\b", re.IGNORECASE)
#: A question that asks the assistant to judge what the writer reports: "Is that
#: normal?", "Is this bad for a rural line?", "Should I be worried?".
_JUDGE_IT = re.compile(r"^(?:so\s+|and\s+)?(?:is|are|was|were)\s+(?:that|this|these|those|it)\s+"
                       r"(?:\w+\s+){0,2}?(?:normal|bad|ok|okay|fine|good|expected|right|"
                       r"healthy|acceptable|reasonable|worrying|a\s+problem|an\s+issue|too\s+\w+|"
                       r"noise|significant|a\s+fluke)"
                       r"\b|^should\s+(?:i|we)\s+(?:be\s+)?(?:worried|concerned|panic)\b|"
                       r"^what\s+does\s+(?:that|this|it)\s+mean\b", re.IGNORECASE)
#: A head that only announces what follows it: "please do one thing:", "note the
#: following:", "one more thing:".
_ANNOUNCING_HEAD = re.compile(r"\b(?:one|two|three|a\s+few|a\s+couple\s+of)\s+(?:more\s+|"
                              r"small\s+|quick\s+|other\s+)?things?\s*$|\bthe\s+following\s*$",
                              re.IGNORECASE)
#: A word that turns a message against what came before ("For us though ...").
_TURN = re.compile(r"\b(?:though|however|although|whereas|but|except|unlike)\b|"
                   r"\b(?:here|for\s+us|at\s+our\s+\w+)\s*,?\s+(?:though|it's|it\s+is)\b",
                   re.IGNORECASE)
#: A closing thanks alone: "Thank you!", "Thanks a lot.", "Cheers".
_THANKS_ONLY = re.compile(r"(?:thanks?|thank\s+you|many\s+thanks|cheers|ta|thx|ty)"
                          r"(?:\s+(?:a\s+lot|so\s+much|very\s+much|again|all|everyone|in\s+"
                          r"advance))?\s*[.!,]*", re.IGNORECASE)
_PERSONAL_WORD = re.compile(r"\b(?:i|me|my|mine|i'm|i've)\b", re.IGNORECASE)
_VERDICT = re.compile(
    r"^(?:(?:for|on|in|at|with)\s+[^,:;]{2,40}?\s*,?\s*)?(?:(?:that|this|it|which|the answer|"
    r"your answer|the tip|the suggestion)(?:'s|\s+is|\s+was|\s+\w+)?\s+|(?:is|was)\s+|"
    # ("Das ist falsch for the wards": the copula in the writer's language)
    r"(?:das\s+ist|dat\s+is|dit\s+is|c'est|questo\s+è|isso\s+é|esto\s+es|det\s+er|"
    r"det\s+är)\s+)"
    r"(?:\w+\s+){0,2}?"
    r"(?:wrong|incorrect|inaccurate|outdated|out of date|obsolete|old|stale|"
    # ("This is falsch for the MCC": the writer's own language)
    r"falsch|faux|fout|sbagliato|errado|errada|incorrecto|forkert|feil|fel|väärin|"
    r"not (?:(?:so|quite|"
    r"really|entirely|fully|totally|very)\s+)?(?:(?:the|a)\s+(?=\w+\s+one\b))?(?:right|true|"
    r"correct|accurate|it|the case|possible|how it works|good|ok|okay|valid|applicable)"
    r"(?:\s+one)?|false|"
    r"misleading|fails?|(?:won't|will\s+not|doesn't|does\s+not)\s+do\s+anything|"
    r"failed|(?:does(?:n't| not)|won't|will not|did(?:n't| not)|can't|cannot|not) (?:work|help|"
    r"apply(?!\s+to\s+(?!us\b|me\b|our\b|my\b|here\b|this\b|that\b)\w)|exist|"
    # ("it doesn't tell anyone what WE do", "it doesn't say how we do it")
    r"(?:tell|say|cover|mention|explain)\s+(?:anyone|anybody|us|you|people)?\s*"
    r"(?:what|how|where|who|when|which)\s+(?:we|our|you)\b)|no longer "
    r"(?:works|true|correct|applies))\b[^,:;]{0,40}[.!]?$", re.IGNORECASE)


#: A verdict that names what was wrong: "Wrong server name.", "Outdated info!".
_NAMED_VERDICT = re.compile(r"^(?:wrong|incorrect|outdated|obsolete|inaccurate|bad|old)\s+"
                            r"(?:[\w-]+\s+){0,2}[\w-]+\s*[.!]*$", re.IGNORECASE)


#: A shift's status note, not a rule: "coldroom DB quiet, no alarms overnight", "all
#: green, no faults".
_STATUS_NOTE = re.compile(r"^(?:ticket|case|incident|request)\s+\S+\s+(?:closed|resolved|done|"
                          r"fixed)\b[.!]?$|"  # "Ticket IT-DESK-4471 closed."
                          r"^(?:closing|closed|resolving|resolved)(?:\s+(?:the\s+|this\s+)?"
                          r"(?:ticket|case|call|incident|request))?(?:\s+now)?[.!]?$|"
                          # ("MD-4471 RESOLVED (leaver: k.mills).": a ticket's state)
                          r"^[A-Z][A-Z0-9]*-\d+\s+(?:resolved|closed|done|fixed)\b(?:\s*\([^()]*\))?"
                          r"[.!]?$|"
                          # ("Otherwise quiet, printer on floor 2 still jammed": the rest of
                          # the shift)
                          r"^(?:otherwise|all\s+else|everything\s+else)\s+(?:quiet|fine|ok|okay|"
                          r"normal|calm|good)\b|"
                          # ("The kettle in the dye house is broken, if anyone has a spare.",
                          # "The coffee machine on floor 2 is fixed, before anyone asks.")
                          r"^(?:also\s+)?the\s+(?:[\w'-]+\s+){1,6}(?:is|are)\s+(?:broken|fixed|"
                          r"repaired|working\s+again|back\s+up|out\s+of\s+order|leaking)(?:\s+now)?"
                          r"(?:\s+again)?(?:\s*,?\s*(?:if\s+anyone|before\s+anyone|in\s+case)[^.!?]*|"
                          # ("The letter template is fixed now and the family were very
                          # understanding in the end.": the rest of the story)
                          r",?\s+and\s+[^.!?]*\b(?:was|were)\b[^.!?]*)?[.!]?$|"
                          # a handover's items: "Hensley shoot done, 212/400 frames, rest
                          # Tues", "Light 2 flickering, DESK-HW ticket logged", "Tea's gone,
                          # sorry"
                          # ("Resolution DBA-4471: PITR done for billing.": a record's
                          # id before it, what it was done for after it)
                          # (no auxiliary nor negation before it: "Restores are never done
                          # on pg-orders-01" is a rule)
                          r"^(?:[\w ]{0,20}\b[A-Z][A-Z0-9]*-\d+:\s+)?"
                          r"(?!(?:[\w'/-]+\s+){0,5}(?:is|are|was|were|be|been|never|not|"
                          r"always|only|if|when)\s)"
                          r"(?:[\w'/-]+\s+){1,5}(?:done|finished|completed|wrapped\s+up)\b"
                          r"(?:\s+(?:for|on|in|at)\s+[\w-]+(?:\s+[\w-]+)?)?"
                          r"(?:,[^.;!?]{0,40})?[.!]?$|"
                          r"^[^.;!?]{0,40}\b(?:ticket|call)\s+(?:logged|raised|opened|filed)\b"
                          r"[.!]?$|^(?:\S+\s+){0,3}\S+,\s*sorry[.!]?$|"
                          # "pg-ledger-02 replay fine overnight", "payroll pre-checks green",
                          # "nothing else open, queue empty", "nothing for you to do ..."
                          r"^(?:[\w.-]+\s+){1,4}(?:fine|ok|okay|green|healthy|clean)\b"
                          r"(?:\s+(?:overnight|all\s+night|today|this\s+shift))?\s*[.!]?$|"
                          r"^nothing\s+(?:else\s+)?(?:open|pending|outstanding|to\s+report|for\s+you"
                          r"\s+to\s+do)\b|"
                          r"^(?:[\w-]+\s+){0,4}?(?:quiet|calm|green|stable|uneventful|all\s+good|"
                          r"all\s+quiet|all\s+green|no\s+(?:alarms?|faults?|incidents?|alerts?|"
                          r"issues|errors|pages))\b(?:,?\s+(?:no\s+(?:alarms?|faults?|incidents?|"
                          r"alerts?|issues|errors|pages)|nothing\s+to\s+report)\b)?"
                          r"(?:\s+(?:overnight|all\s+night|today|this\s+shift|since\s+\S+))?"
                          r"\s*[.!]?$", re.IGNORECASE)


#: How a thing went, in a handover's status item: "show fine", "night quiet".
_WENT = r"(?:fine|ok|okay|green|quiet|calm|smooth)"
_STATUS_WORD = re.compile(r"\b(?:" + _WENT + r"|no\s+(?:\w+\s+)?(?:problems?|issues?|alarms?|"
                          r"faults?|errors?|complaints?|incidents?))\b", re.IGNORECASE)


def _status_note(text: str) -> bool:
    """A handover's status item (``_STATUS_NOTE``), or a list of them: "doors 19:30, show
    fine, no scanner problems" (every part a few words with no verb, one of them says
    how things went)."""
    if _STATUS_NOTE.match(text):
        return True
    parts = [p for p in re.split(r",\s+|;\s+", text.strip().rstrip(".!")) if p]
    # (a part that opens with a preposition is a condition: "After 23:00, fine." allows)
    return len(parts) >= 2 and not any(re.match(
        r"(?i)(?:after|before|until|till|from|on|at|during|outside|except|if|when|for|with|"
        r"in)\b", p) for p in parts) and all(_status_part(p) for p in parts) and any(
        _STATUS_WORD.search(p) for p in parts)


def _status_part(part: str) -> bool:
    """A few words of a status list: no verb ("doors 19:30", "no scanner problems"), or
    a thing and how it went ("show fine", "laptops are fine")."""
    if len(tokens(part)) > 5:
        return False
    return _verbless(re.sub(r"(?i)^no\s+", "", part)) or bool(re.fullmatch(
        r"(?i)(?:\S+\s+){1,3}" + _WENT, part))


def _ours_named(sentence: str) -> str:
    """"the name in your example is wrong, ours are X": "..., our names are X" (the
    verdict goes later, the noun stays with the value)."""
    def say(m: re.Match[str]) -> str:
        noun = m.group("noun")
        plural = m.group("verb").lower() == "are" and not noun.endswith("s")
        return f"{m.group('verdict')}, our {noun}{'s' if plural else ''} {m.group('verb')}"
    return _VERDICT_THEN_OURS.sub(say, sentence)


#: A verdict on one thing of the answer, then "ours": "the name in your example is wrong,
#: ours are X".
_VERDICT_THEN_OURS = re.compile(
    r"(?P<verdict>\bthe\s+(?P<noun>[a-z][\w-]*)\s+(?:in|of)\s+(?:your|the|this)\s+(?:example|"
    r"answer|reply|suggestion)\s+(?:is|was)\s+(?:wrong|incorrect|outdated|off|not\s+ours))\s*,"
    r"\s*ours\s+(?P<verb>is|are)\b", re.IGNORECASE)
#: What holds instead, after a verdict: ", ours are X", ", here it's X", ", it should be X".
_OURS_INSTEAD = re.compile(r"[,;:—–-]\s*(?:ours|our\s+\w+|here\s+it|it|they|that)\s+(?:is|are|'s|"
                           r"should\s+be|must\s+be|has\s+to\s+be)\s+\S", re.IGNORECASE)
#: A seasonal greeting and what goes with it: "anyway happy Friday everyone, there's cake
#: in the kitchen".
#: An out-of-office reply's own lines: "Automatic reply: I'm out of the office until Monday
#: 14 April with limited access to e-mail.", "I am on leave until the 3rd." (the writer's
#: whereabouts, not the house's rules).
_AWAY = re.compile(r"^(?:(?:automatic|auto)[\s-]*reply\s*:\s*|out\s+of\s+(?:the\s+)?office\s*"
                   r"[:\-–—]\s*)?(?:thank\s+you\s+for\s+your\s+(?:e-?mail|message)[.,]?\s*)?"
                   r"(?:i'?m|i\s+am|i\s+will\s+be|i'll\s+be)\s+(?:currently\s+)?(?:out\s+of\s+"
                   r"(?:the\s+)?office|on\s+(?:annual\s+|parental\s+|sick\s+)?(?:leave|holiday|"
                   r"vacation|pto)|away|travell?ing|off)\b[^.!?]*\b(?:until|till|til|from|between|"
                   r"through|returning|back)\b[^.!?]*[.!]?$", re.IGNORECASE)
#: Whom to ask while someone is away: "For urgent DB issues contact Priya Nair (on-call)."
_URGENT_CONTACT = re.compile(r"^(?:for|in\s+case\s+of|with)\s+(?:anything\s+|any\s+)?(?:urgent|"
                             r"emergenc)[^.!?]{0,60}?\b(?:contact|call|ring|e-?mail|ask|page|"
                             r"message)\b", re.IGNORECASE)
_SEASONAL = re.compile(r"^(?:(?:anyway|and|oh|so)[,\s]+)?(?:happy|merry)\s+(?:\w+day|weekend|"
                       r"holidays?|new\s+year|easter|christmas|eid|diwali|hanukkah)\b",
                       re.IGNORECASE)
#: What makes a sentence a rule of the house, not what the writer's machine shows.
_HOUSE_RULE = re.compile(r"\b(?:we|our|us|everyone|everybody|every|each|staff|company|must|"
                         r"never|always|mandatory|required|forbidden|prohibited|not\s+allowed|"
                         r"allowed|only\s+(?:for|on|in|by|the)|policy\s+(?:is|says))\b",
                         re.IGNORECASE)
#: An errand for the assistant: "can you book me a taxi", "could you put it in my
#: calendar".
_ERRAND = re.compile(r"\b(?:can|could|would|will)\s+you\s+(?:please\s+)?(?:book|order|buy|send|"
                     r"e-?mail|schedule|remind|call|ring|reserve|arrange|forward|fetch|"
                     r"get\s+me|put\s+it\s+in)\b", re.IGNORECASE)
#: A question that asks for advice on the asker's own case.
_ADVICE_QUESTION = re.compile(r"^(?:would|could|should|can|will|does|do|is|are)\s+(?:it|i|we|"
                              r"raising|lowering|adding|using|increasing|setting|switching|"
                              r"a|an|the|my|our)\b", re.IGNORECASE)
#: The asker's situation, told as the context of the question.
_SITUATION = re.compile(r"\b(?:right now|at the moment|currently|these days|if that matters|"
                        r"if it matters|if that helps|in case it matters|fwiw)\b", re.IGNORECASE)


#: The writer's luck: "We were lucky nothing got corrupted."
_LUCK = re.compile(r"\b(?:we|i)\s+(?:were|was|got|are)\s+(?:very\s+|really\s+|so\s+|just\s+)?"
                   r"(?:lucky|unlucky)\b", re.IGNORECASE)


#: A farewell that closes a message, after thanks or "anyway" ("Anyway, thanks again, and
#: see you at the quiz on Friday!", "Have a good weekend, all").
_FAREWELL = re.compile(r"^(?:(?:anyway|anyhow|ok|okay|well|so|and|thanks(?:\s+again)?|"
                       r"thank\s+you(?:\s+again)?|cheers|many\s+thanks)\b[\s,!.]*)*"
                       # a wish for the reader ("Hope your week is going well, ...")
                       r"(?:(?:i\s+)?hope\s+(?:you|your|you're|things|all|everyone|the\s+\w+\s+"
                       r"(?:went|goes|is|was))\b|"
                       # a welcome: "Welcome aboard Dan!", "Welcome to the team, Sam."
                       # ("Welcome to the Phil!": any place, when the welcome is all it says)
                       r"welcome\s+(?:aboard|back|to\s+(?:the\s+)?(?:team|club|crew|unit|"
                       r"\w+\s+team))(?=[^.!?]{0,30}[.!]*$)|welcome\s+to\s+(?:the\s+)?"
                       r"[\w&'-]+(?:\s+[\w&'-]+){0,3}(?=\s*[,]?\s*(?:[A-Z][a-z]+\s*)?!+\s*$)|"
                       # what the message announces: "please note the following."
                       r"(?:[^.!?]{0,60},\s*)?(?:please\s+)?note\s+the\s+following\b"
                       r"(?=[.:]?\s*$)|"
                       r"(?:a\s+)?(?:handover|hand-over|shift\s+(?:handover|report|notes?))\b"
                       r"(?=[^.!?]{0,40}[.!]?$)|"
                       r"see\s+(?:you|ya|y'all|everyone)|talk\s+soon|catch\s+you|take\s+care|"
                       # radio sign-off: "Vessel Ops out."
                       r"(?-i:[A-Z][\w-]*)(?:\s+(?-i:[A-Z][\w-]*)){0,2}\s+out(?=\s*[.!]?\s*$)|"
                       # an offer to help further: "Let me know if the docs need updating"
                       r"(?:please\s+)?(?:let\s+(?:me|us)\s+know|give\s+(?:me|us)\s+a\s+shout|"
                       r"shout\s+if|ping\s+me)(?=[^.!?]*\b(?:if|when|whether)\b)|"
                       r"have\s+a\s+(?:good|nice|great|lovely)\s+\w+|enjoy\s+the\s+\w+)\b",
                       re.IGNORECASE)


#: An elliptical reply before the clause that says it whole: "You can't, X", "No you
#: don't - X".
_ELLIPTIC_LEAD = re.compile(r"^(?:no,?\s+)?(?:you|we|they|it|that)\s+(?:can't|cannot|can\s+not|"
                            r"don't|do\s+not|won't|shouldn't|mustn't|doesn't|isn't|aren't)"
                            # ("You can't (and shouldn't): X")
                            r"(?:\s*\([^()]{1,30}\))?\s*[,;:\u2013\u2014-]+\s*(?=\w)",
                            re.IGNORECASE)


_ELLIPTIC_ONLY = re.compile(r"^(?:no,?\s+)?(?:you|we|it|they|that)\s+(?:can't|cannot|can\s+not|"
                            r"don't|do\s+not|won't|shouldn't|mustn't|doesn't|isn't|aren't)"
                            r"(?:,?\s+(?:not\s+)?(?:here|there|anymore|any\s+more|at\s+all|"
                            r"really|on\s+ours|for\s+us))?\s*[.!]*$", re.IGNORECASE)
#: Agreement with a limit, about the answer: "Correct as far as it goes.", "Mostly right."
_PARTIAL_AGREEMENT = re.compile(r"^(?:(?:that's|that\s+is|it's|it\s+is|this\s+is|(?:the\s+)?"
                                r"(?:[\w-]+\s+){0,2}(?:part|half|bit|line|step|idea|bits|answer|"
                                r"reply|response|suggestion|tip)"
                                r"(?:'s|\s+is|\s+are)|(?:step|point|part|item|line|option)\s+\d+"
                                r"(?:\s+is)?)\s+)?"
                                r"(?:mostly|partly|partially|technically|half|sort\s+of|"
                                r"kind\s+of|basically)?\s*(?:right|correct|true|fine|ok|okay|"
                                r"wrong(?:\s+for\s+us)?|not\s+needed|unnecessary|"
                                # ("Useful, but ...", "Good as far as it goes, but ...")
                                r"good|useful|helpful|(?:right|good)\s+idea)"
                                r"(?:\s+as\s+far\s+as\s+it\s+goes|\s+in\s+principle|"
                                r"\s+in\s+theory|\s+on\s+paper)?\s*[.!]*$", re.IGNORECASE)


#: The bookkeeping of a ticket, a review or an incident before a colon: "Review note on MR
#: !482 (leaderboard-export)", "Resolution note from TIX-2291 (closed)", "PIR-2024-031,
#: action item 4 (owner: Emre, status: done)", "Quick clarification after the review".
#: A short remark announced as such: "quick clarification", "small remark".
_REMARK = (r"(?:a\s+)?(?:quick|small|short|brief|minor|one)\s+(?:clarification|remark|note|"
           r"correction|update|reminder|precisation|addition)\b")
_BOOKKEEPING_HEAD = re.compile(
    r"\b(?:review|resolution|closing|handover|incident|release|change|ticket)\s+note\b|"
    r"\baction\s+item\b|\((?:[^()]*\b)?(?:owner|status)\s*:|\b(?:MR|PR)\s*[!#]\d|"
    r"\((?:closed|resolved|done|fixed|merged)\)|^" + _REMARK, re.IGNORECASE)
#: A sentence that only announces a remark: "Quick clarification after yesterday's incident
#: review.", "Small remark from asset management.", "Dictated from the floor, sorry for the
#: typos."
_NOTE_RUN_UP = re.compile(
    # (not across a dash: "Quick one from stores — pallets over 800 kg go to bay 4")
    r"(?:(?:hi|hello|hey)\s+\w+\s*,?\s*)?" + _REMARK + r"[^.!?:;—–]{0,60}[.!:]?|"
    # ("Quick one following Tuesday's huddle.": what it follows, no clause after it)
    r"(?:(?:hi|hello|hey)\s+\w+\s*,?\s*)?(?:a\s+)?quick\s+one\b(?:\s+(?:from|following|"
    r"since|after|about|re|regarding|for|on)\b[^.!?:;,—–]{0,50})?[.!:]?|"
    r"(?:sorry,?\s+)?(?:dictated|dictating|typed|typing|written|writing)"
    r"\s+(?:this\s+)?(?:from|on|while|in|between|during|at|after|before)\b[^.!?]{0,50}?"
    r"(?:,?\s+sorry\b[^.!?]{0,40})?[.!]?|"
    # ("this is hamish on the skerry lass dictating so excuse the typing.": who and where,
    # the whole sentence)
    r"(?:this\s+is|it's)\s+[\w'-]+(?:\s+[\w'-]+){0,5}?\s+(?:dictating|speaking|calling|"
    r"typing|writing)\b[^.!?:;]{0,50}[.!]?",
    re.IGNORECASE)


def _partition_outside_brackets(text: str, sep: str) -> tuple[str, str, str]:
    """``str.partition`` at the first ``sep`` outside brackets ("PIR-1, item 4 (owner:
    Emre): X" splits before X)."""
    depth = 0
    for i, c in enumerate(text):
        depth += (c in "([{") - (c in ")]}")
        if depth <= 0 and text.startswith(sep, i):
            return text[:i], sep, text[i + len(sep):]
    return text, "", ""


#: "That's why X": X, the reason it points back to is the writer's question before it.
_THATS_WHY = re.compile(r"^(?:and\s+|so\s+)?(?:that's|that\s+is|this\s+is|which\s+is)\s+"
                        r"(?:exactly\s+|precisely\s+)?why\s+", re.IGNORECASE)
#: A verdict on the answer followed by its reason: "That doesn't help because X".
_VERDICT_BECAUSE = re.compile(r"^(?P<verdict>[^,;:]{3,60}?)\s*,?\s+(?:because|since|"
                              r"as(?!\s+far\s+as\b)|'?cause)"
                              r"\s+(?P<rest>\S.*)$", re.IGNORECASE)


#: The answer judged nearly right, and the house said to differ, with nothing of how:
#: "Nearly, but we have specifics.", "Close, but our setup differs.", "Almost right, but
#: here it works differently."
_ALMOST_BUT_OURS = re.compile(
    r"^(?:nearly|almost|close|partly|partially|mostly|half)(?:\s+(?:right|there|correct|"
    r"true))?\s*[,!.\u2014\u2013-]*\s*but\s+(?:we|our|here|in\s+our\s+case|for\s+us|ours)\b"
    r"(?:\s+[\w']+){0,5}?\s+(?:specifics|details|differs?|different(?:ly)?|own\s+(?:way|rules?|"
    r"setup)|exceptions?|twists?|quirks?|rules|tweaks?)\s*[.!]*$", re.IGNORECASE)
#: A verdict on one part of the answer: "Strictly speaking the remark about an SSH tunnel
#: is accurate but irrelevant."
_PART_VERDICT = re.compile(
    r"^(?:strictly\s+speaking,?\s+|to\s+be\s+fair,?\s+)?the\s+(?:remark|bit|part|point|"
    r"mention|note|suggestion|step|line|sentence|paragraph|tip)\s+(?:about|on|regarding|re|"
    r"of)\s+[^,.;:]{1,50}?\s+(?:is|was|are|were|'s)\s+(?:\w+\s+){0,2}?(?:accurate|correct|"
    r"right|fine|true|wrong|incorrect|irrelevant|outdated|misleading|beside\s+the\s+point|"
    r"useless|pointless)\b(?:,?\s+but\s+(?:\w+\s+)?(?:irrelevant|beside\s+the\s+point|"
    r"useless|pointless|wrong|outdated|not\s+needed|unnecessary)\b)?\s*[.!]?$",
    re.IGNORECASE)
#: A sentence that only announces a list: "Two precise corrections, in order of
#: importance.", "+1 on the mechanism, but two things."
_ANNOUNCED_LIST = re.compile(
    r"^(?:[^.!?]{0,40}?,\s*but\s+)?(?:two|three|four|five|a\s+few|a\s+couple\s+of|some|"
    r"several)\s+(?:(?:quick|small|minor|precise|important|more|other|further)\s+){0,2}"
    r"(?:things|points|corrections|notes|remarks|issues|fixes|details|problems|changes|"
    r"comments)\b(?:,?\s+(?:in\s+order\s+of\s+importance|here|to\s+note|for\s+you|"
    r"below|though))?\s*[.:!]?$", re.IGNORECASE)


#: What a named thing is called, as an identifier: "the command is tidewater-desk", "our
#: queue is dock_labels".
_NAMED_VALUE = re.compile(r"^(?:the|our|its)\s+(?:[a-z][\w-]*\s+){0,2}?[a-z][\w-]*\s+(?:is|are)\s+"
                          r"`?[A-Za-z0-9][\w.-]*[-_.][\w.-]*\w`?\.?$", re.IGNORECASE)
#: "the superuser is called emsadmin": what a thing of the site is named.
_CALLED = re.compile(r"^(?:the|our|its)\s+(?:[a-z][\w-]*\s+){0,2}?[a-z][\w-]*\s+(?:is|are)\s+"
                     r"(?:called|named)\s+[`'\"]?(?P<name>[A-Za-z0-9][\w.-]*\w)[`'\"]?\.?$",
                     re.IGNORECASE)
#: The writer's own story, told in the first person: "Anyway we made it in 25 minutes late"
#: (its first verb in the past; not a change the writer made to the world, "we switched
#: off the daily updatedb", whose state is the fact).
_WE_DID = re.compile(r"^(?:(?:anyway|so|and|then|in\s+the\s+end)[,]?\s+)?(?:we|i)\s+(?:\w+ly\s+)?"
                     r"(?P<verb>[a-z]+)\b", re.IGNORECASE)
# (besides the changes the residue reader knows: "we ripped all enums out", "we turned it
# off", "we made it non-executable" changed what holds too)
_CHANGED = CHANGE_VERBS | frozenset({"ripped", "turned", "made"})


def _we_did(text: str) -> bool:
    """A sentence of the writer's own story: "we"/"I", then a verb in the past that
    changed nothing in the world ("we made it in 25 minutes late" arrived; "we made it
    non-executable" and "we switched off updatedb" changed what holds, ``_CHANGED``)."""
    m = _WE_DID.match(text)
    if m is None:
        return False
    verb = m.group("verb").lower()
    if verb == "made" and re.match(r"\s+it\s+(?:in|back|home|through|out)\b", text[m.end():],
                                   re.IGNORECASE):
        return True  # "we made it in 25 minutes late": arrived, a story
    past = verb in IRREGULAR_PAST or (verb.endswith("ed") and len(verb) > 4)
    return past and verb not in _CHANGED
#: Dismay in words that are not negative ones: "not impressed with any of it", "the old HP
#: LaserJet was better" (the new one is worse).
_DISMAYED = re.compile(r"\bnot\s+(?:impressed|happy|pleased|convinced|a\s+fan)\b|"
                       # ("psql is a museum piece", "Honestly I miss Lotus 1-2-3")
                       r"\b(?:is|are)\s+(?:such\s+)?an?\s+(?:museum\s+piece|relic|dinosaur)\b|"
                       r"\bi\s+(?:really\s+|still\s+)?miss\s+(?:the\s+old\s+|my\s+old\s+)?"
                       r"(?-i:[A-Z])|"
                       r"\b(?:the|our|my)\s+old\s+[^.!?]{0,40}?\b(?:was|were)\s+(?:much\s+|way\s+|"
                       r"far\s+|a\s+lot\s+)?(?:better|nicer|easier|faster|less\s+hassle)\b",
                       re.IGNORECASE)
#: How a fault shows, besides ``_SYMPTOM``'s: "keeps mangling the tables", "half the time",
#: "has been streaky since the day it arrived", "is sluggish next to Xfce".
#: ("X still mangles the rota every single month and Y won't even run the macros": "even"
#: after a negation, a fault that recurs "every single" time, a thing "mangled")
_FAULT_SHOWN = re.compile(r"\bkeeps\s+\w+ing\b|\bhalf\s+the\s+time\b|\bhas\s+been\s+\w+\s+"
                          r"since\b|\b(?:sluggish|streaky|flaky|glitchy|laggy|temperamental|"
                          r"unreliable)\b|\b(?:won't|doesn't|can't|wouldn't|didn't)\s+even\b|"
                          r"\bevery\s+single\s+(?:time|day|week|month|morning|night|shift)\b|"
                          r"\b(?:mangles|mangled|garbles|garbled)\b|\b(?:freezes|crashes|hangs|"
                          r"chokes|dies)\s+on\s+(?:anything|everything|any)\b|\byet\s+another\b",
                          re.IGNORECASE)


#: Modal words that state no rule on their own: "has" and "have" possess ("'Rename' has
#: the three dots"), the rest advise.
_WEAK_MODALS = frozenset({"has", "have", "should", "could", "shouldn't", "may"})


def _firm_rule(v: SentenceView) -> bool:
    """The sentence holds a firm modal other than a possessive "has"/"have" (or "is to":
    "Keys are to stay in the safe")."""
    found = [t for t in tokens(v.text) if t in MODALS]
    return v.firm_modal and (not found or any(t not in _WEAK_MODALS for t in found))


def _shows_fault(text: str) -> bool:
    return bool(_SYMPTOM.search(text) or _FAULT_SHOWN.search(text))


def _subjectless_past(text: str) -> bool:
    """The writer's observation with its "I"/"it" left out: "Went from 100% to 38% in
    2h10 on the Petrel run"."""
    first = tokens(text)[:1]
    return bool(first) and (first[0] in IRREGULAR_PAST or (
        first[0].endswith("ed") and len(first[0]) > 4)) and past_tense(text)


#: A label that frames what follows, not a subject: "nit:", "note:", "update:".
_LABEL_WORD = re.compile(r"(?i)(?:nit|nitpick|note|nb|ps|fyi|update|edit|correction|reminder|"
                         r"heads[- ]up|tl;?dr|summary|answer|reply|short answer)\b")
#: When a state holds only now: "out of toner today", "down at the moment", "after lunch".
_ONE_OFF = re.compile(r"\b(?:today|tonight|this\s+(?:morning|afternoon|evening)|right\s+now|"
                      r"at\s+the\s+moment|after\s+lunch|later\s+today|for\s+now)\b", re.IGNORECASE)
#: ... unless it starts then: "from today", "as of tonight".
_FROM_NOW = re.compile(r"\b(?:from|as\s+of|starting|since|effective|until|till)\s+(?:today|"
                       r"tonight|now|this\s+(?:morning|afternoon|evening))\b", re.IGNORECASE)
#: A gauge's reading at one moment: "140 GB free", "61% used", "3.2 TB left".
_GAUGE = re.compile(r"\b\d+(?:[.,]\d+)?\s*(?:%|percent|[KMGTP]i?B)\s+(?:free|used|left|remaining|"
                    r"available|full|in\s+use)\b", re.IGNORECASE)
#: What the writer's tool reads: "Disk Usage Analyzer says 212 GB used", "df shows 91%".
_READING = re.compile(r"\b(?:says|shows|reports|reads|displays|is\s+showing)\s+(?:about\s+|"
                      r"around\s+|~\s*)?\d", re.IGNORECASE)
#: A request put to the reader, with or without its question mark: "while you're at it can
#: you book the H2 room ...", "Could you order sandwiches for 8".
_ASKED_OF_YOU = re.compile(r"^(?:[^,.!?]{0,30},?\s+)?(?:can|could|would|will)\s+you\b",
                           re.IGNORECASE)
#: What the answer did or would have done for the writer: "Your answer wouldn't have helped
#: with that at all.", "The suggestion didn't fix it."
_ANSWER_WOULD = re.compile(r"^(?:your|the|this|that)\s+(?:answer|reply|response|suggestion|advice|"
                           r"tip)\s+(?:would|could|does|did|will)(?:n't|\s+not)?\s+(?:have\s+)?"
                           r"(?:helped|help|worked|work|fixed|fix|solved|solve|done)\b",
                           re.IGNORECASE)


def verdict(text: str) -> bool:
    """A verdict on the answer with nothing else in it ("In our fleet that doesn't
    help.", "That's not it.", "Wrong printer name.", "Correct as far as it goes.", "Your
    answer wouldn't have helped with that at all.")."""
    if _PARTIAL_AGREEMENT.match(text.strip()) or _PART_VERDICT.match(text.strip()) or \
            _ANSWER_WOULD.match(strip_discourse(text).strip()):
        return True
    text = strip_discourse(text).strip()
    return bool(_VERDICT.match(text) or _NAMED_VERDICT.match(text)
                or _PARTIAL_AGREEMENT.match(text))


#: What follows a verb whose object is named ("closes it", "opens the list").
_OBJECT_START = frozenset("it them the a an this that these those you your my our its their "
                          "every all".split())
# (not "everything": "Documents desktop downloads everything" is a list, not a statement)


_QUOTATION = re.compile(r"[\"“]([^\"”\n]{12,})[\"”]|‘([^’\n]{12,})’|(?<!\w)'([^'\n]{12,})'(?!\w)")


#: A rule told as what an old document says: "An old Confluence page from 2019 says X",
#: "A Stack Overflow answer from 2013 says X".
_SOURCE_SAYS = re.compile(
    r"^(?:an?\s+|the\s+|my\s+|our\s+|some\s+)?(?:old\s+|older\s+|outdated\s+|archived\s+)?"
    r"(?:[\w-]+\s+){0,3}?(?:page|wiki|answer|post|article|thread|doc|document|handbook|binder|"
    r"manual|guide|blog|forum|tutorial|notes?|slides?)\s+(?:(?:from|dated|of)\s+\S+\s+)?"
    r"(?:says|said|claims|claimed|states|stated|suggests|recommends)\b", re.IGNORECASE)


def _foreign(text: str) -> bool:
    """Written in another language: most of its words (values aside) are not English."""
    words = tokens(_without_items(text))
    if len(words) < 6:
        return False
    # (English of six words or more has function words; headline English has English words)
    function = sum(1 for w in words if w in STOPWORDS)
    english = sum(1 for w in words if english_word(w))
    return function <= 1 and english <= 0.6 * len(words)


def _without_answer_quotes(comment: str, answer: str) -> str:
    """The comment without the ``>`` lines that quote the assistant's own answer (nearly
    all their content words are the answer's): the answer's words are the system's, not a
    request of the writer ("> ... unless you mark the source as trusted" is no request to
    label content). A quoted line with words the answer does not have is kept, so an
    instruction dressed as a quotation is still checked."""
    answer_stems = content_stems(answer)
    kept = []
    for line in comment.splitlines():
        if line.lstrip().startswith(">"):
            stems = content_stems(line.lstrip().lstrip(">"))
            if stems and len(stems - answer_stems) <= len(stems) // 10:
                continue
        kept.append(line)
    return "\n".join(kept)


def _quoted_rule(text: str) -> bool:
    """The sentence's rule is inside a quotation of four or more words, and nothing
    concrete is said outside it ('Found this on the old wiki: "always use exclusive mode:
    SELECT pg_start_backup(...)"')."""
    quotes = [m for m in _QUOTATION.finditer(text)
              if len(tokens(next(g for g in m.groups() if g))) >= 4]
    if not quotes:
        return False
    outside = _QUOTATION.sub(" ", text)
    return not any(i.kind in STRONG_KINDS and not re.fullmatch(r"(?:19|20)\d\d", i.text)
                   for i in items(outside))  # (a year dates the source: "a 2013 wiki page")


def _incident(v: SentenceView) -> bool:
    """A sentence that tells what went wrong once, every clause in the past, with no rule
    in it ("The till froze twice, a group turned up early, and wall 3 was out of action";
    not "nofail matters, img-01 hung at boot twice")."""
    return bool(_INCIDENT.search(v.text)) and all(
        clause_in_past(c) for c in re.split(r",\s+", v.text) if tokens(c)) and not (
        v.firm_modal or re.search(
            r"\b(?:is|are|isn't|aren't|has|have|do|does|don't|doesn't|must|never|always)\b",
            v.text, re.IGNORECASE))


def _support(v: SentenceView, ctx: FeedbackContext) -> bool:
    """A declarative sentence that adds detail to the message's claim: not personal,
    not an anecdote, not about the answer, at least six words of which three are new."""
    first = re.split(r";\s+", v.text)[0]
    if v.question or v.system or v.about_answer or v.evaluative >= 2 or v.words < 2 or \
            v.text.rstrip().endswith(":") or _TO_COLLEAGUE.match(v.text) or \
            _TO_OTHER_READERS.search(v.text) or \
            _status_note(v.text) or _FAREWELL.match(v.text) or _told_once(v.text) or (
                _HABIT.match(v.text) and not (v.firm_modal or v.negation)) or \
            _ISSUED_BY.match(v.text) or (
                _ONE_TIME.match(v.text) and past_tense(v.text)) or (
                past_tense(v.text) and bool(_EPISODIC.search(v.text) or (
                    _when(v.text) and not _RECURRING.search(v.text))) and not (
                    v.firm_modal or _strict_policy(v))) or (
                _PERSONAL_WORD.search(first) and past_tense(first) and not (
                    v.firm_modal or _strict_policy(v))) or _incident(v) or (
                _we_did(v.text) and _told_in_past(v.text) and not v.modal):
        return False  # also a label, "@Kenji this bit you", "I went through all of that"
    if v.words < 6:
        # A short statement counts only when it negates something ("It doesn't always
        # switch."), the usual way a correction says what the answer got wrong, or gives
        # a new value ("Retries 3x.").
        if v.personal or verdict(v.text):
            return False
        if _SCOPE_FRAGMENT.match(v.text):
            return True  # "On every server." after "90 days.": where the claim holds
        toks = tokens(v.text)
        if not past_tense(v.text) and len(toks) >= 3 and any(
                (t[:-1] in INSTRUCTION_VERBS or (t.endswith("es") and t[:-2] in INSTRUCTION_VERBS))
                and (n == len(toks) - 1 or toks[n + 1] in _OBJECT_START)
                for n, t in enumerate(toks) if n and t.endswith("s")) and bool(
                content_stems(v.text) - content_stems(ctx.answer) - _GENERIC):
            return True  # "Esc closes it.", "Same shortcut again restores it.": what a key does
        return (v.negation and bool(content_stems(v.text) - content_stems(ctx.answer)
                                    - _GENERIC)) or (
            not past_tense(v.text) and not _SCORE.search(v.text) and any(
                i.kind in ("number", "tech") and i.text[:1].isdigit()
                for i in novel_items(list(v.strong), ctx.answer)))
    if (v.personal and not v.organisational and _PERSONAL_WORD.search(first)) or \
            _ANECDOTE.search(first) or verdict(first):
        return False
    return len(content_stems(first) - content_stems(ctx.answer) - _GENERIC) >= 3


#: A request for another form of answer: a table, a list, shorter, another language.
_FORM_REQUEST = re.compile(r"^(?:please\s+)?(?:could|can|would|will)\s+(?:you|u)\b.*\b(?:table|"
                           r"list|checklist|bullets?|bullet points|numbered|steps|shorter|"
                           r"longer|summary|summar(?:ise|ize)|format|in\s+(?:welsh|english|"
                           r"french|german|spanish|polish|dutch|italian|portuguese|japanese|"
                           r"chinese|arabic|[A-Z][a-z]+ish))\b", re.IGNORECASE)
_FORGETFUL = re.compile(r"^(?:i|we)\s+(?:can|could|just|always)?\s*(?:never|not|n't|can't|"
                        r"cannot|always)?\s*(?:remember|forget)\b", re.IGNORECASE)
#: "feel so clunky", "seems really slow", "looks a bit dated": an impression.
_FEELS = re.compile(r"\b(?:feels?|felt|seems?|seemed|looks?|looked)\s+((?:(?:so|too|really|very|"
                    r"super|quite|pretty|a bit|kind of|rather)\s+)?[\w-]+)", re.IGNORECASE)
_PREFERENCE = re.compile(r"\b(?:would|'d)\s+(?:much\s+)?(?:rather|prefer)\b", re.IGNORECASE)
_MAYBE_WAS = re.compile(r"\b(?:could|might|may)\s+(?:well\s+)?have\s+been\b", re.IGNORECASE)
#: "I'm a PhD student, I don't have sudo anywhere": every clause is the writer's state.
_ABOUT_ME = re.compile(r"^(?:i|i'm|i've|i am|i have|i don't|i do not|i can't|i cannot)\b",
                       re.IGNORECASE)
#: "takes like 40 seconds before it prints anything": how long something took, observed.
_DURATION = re.compile(r"\b(?:takes?|took|taking)\s+(?:like\s+|about\s+|around\s+|almost\s+|"
                       r"over\s+|nearly\s+|at least\s+)?\d+\s*(?:s|secs?|seconds?|mins?|minutes?|"
                       r"hours?|hrs?)\b", re.IGNORECASE)
_NO_BETTER = re.compile(r"\b(?:isn't|is not|aren't|are not|wasn't|not)\s+(?:much|any|a lot|"
                        r"that much|really)?\s*better\b|\b(?:is|are)\s+no\s+better\b|"
                        r"\b(?:even|much|way)\s+worse\b|\bjust\s+as\s+bad\b", re.IGNORECASE)
_AMENDED = re.compile(r"(?:^|\n|[.!?]\s+)\s*(?:edit|correction|update)\s*:|\bmake that\b",
                      re.IGNORECASE)
_LIST_ITEM = re.compile(r"^[ \t]*(?:\d{1,2}[.)]|[-*\u2022])[ \t]+(\S.*)$", re.MULTILINE)


def _step_key(sentence: str) -> str:
    return " ".join(tokens(sentence))


def _list_items(text: str) -> set[str]:
    """The items of the message's numbered or bulleted lists, as token keys."""
    return {_step_key(m.group(1)) for m in _LIST_ITEM.finditer(text)}


def _overturns(v: SentenceView, answer: str) -> bool:
    """The sentence negates a value the answer gave ("statement_timeout is never 0 in
    our migrations" after an answer that set it to 0): the correction itself, whatever
    else it names."""
    return v.negation and any(
        re.search(r"\b(?:not|never|no longer|isn't|aren't|n't)\s+(?:\S+\s+){0,2}?"
                  + re.escape(i.text) + r"(?!\w)", v.text, re.IGNORECASE)
        for i in v.strong if i not in novel_items([i], answer))


def _denies_answer(v: SentenceView, answer: str) -> bool:
    """The sentence says, in the present, that what the answer asserted does not hold
    ("createdb has no --force." after an answer that used it, "Local home folders are not
    backed up at all." after one that backed them up): the correction itself, though it
    names nothing the answer did not. Its subject is the world's, not the writer's or
    the answer's, and it shares at least two content words with the answer, or one that
    is its grammatical subject or an item of the answer ("unattended-upgrades is disabled
    on that box." after an answer that relied on unattended-upgrades)."""
    # ("Not pg_dumpall.", with no verb of its own, is an elliptical reply, not a sentence
    # a reader can take as the fact.)
    retired = bool(_RETIRED.search(v.text))  # ("LAB-Jet was retired.": a state since)
    if not (v.words >= 3 and (retired or (_denies(v.text) and _FINITE_VERB.search(v.text)))) \
            or v.question or v.personal or \
            v.about_answer or (past_tense(v.text) and not retired) or _NO_WAY.search(v.text):
        return False
    answer_stems = content_stems(answer)
    shared = (content_stems(v.text) & answer_stems) - _GENERIC
    subject = _FINITE_VERB.split(v.text, maxsplit=1)[0]
    return len(shared) >= 2 or (len(shared) >= 1 and (
        bool(content_stems(subject) & shared) or any(
            i not in novel_items([i], answer) for i in (*v.strong, *v.names))))


#: A thing taken out of service: what the answer relied on is gone since ("was retired",
#: "has been decommissioned", "got scrapped").
_RETIRED = re.compile(r"\b(?:was|were|has\s+been|have\s+been|got|is|are)\s+(?:now\s+|long\s+|"
                      r"finally\s+|already\s+)?(?:retired|scrapped|decommissioned|withdrawn|"
                      r"discontinued|binned|uninstalled|removed|replaced|shut\s+down|"
                      r"taken\s+out(?:\s+of\s+service)?)\b", re.IGNORECASE)


#: A passive change of state: what it names holds since ("X was replaced by Y", "the
#: validity was shortened in January").
_STATE_CHANGE = re.compile(r"\b(?:was|were|has\s+been|have\s+been|got)\s+(?:\w+\s+)?(?:replaced|"
                           r"moved|renamed|migrated|switched|changed|shortened|extended|raised|"
                           r"lowered|retired|decommissioned|upgraded|downgraded|merged|split)\b|"
                           # active: "Last month IT moved the manifest share to fs02"
                           r"\b(?:moved|migrated|switched|changed|renamed|raised|lowered|"
                           r"upgraded|replaced)\s+(?:[\w.'-]+\s+){0,5}?(?:to|into|onto|with|"
                           r"by)\s+\S*\d", re.IGNORECASE)


#: The first finite verb of a plain sentence: what stands before it is the subject.
_FINITE_VERB = re.compile(r"\b(?:is|are|isn't|aren't|was|were|has|have|hasn't|haven't|does|"
                          r"doesn't|do|don't|can|can't|cannot|won't|will|must|should|"
                          r"never)\b", re.IGNORECASE)


def _instruction(text: str) -> bool:
    """A clause of the text opens with an instruction verb ("It can: drag one app icon
    onto another ...", "Use the Service Desk portal instead")."""
    for clause in clause_split(text):
        toks = tokens(strip_discourse(clause))
        if toks[:1] == ["or"]:
            toks = toks[1:]  # "Or click the clock.": another way
        if toks[:1] and toks[0] in ("don't", "never", "do", "please", "always"):
            toks = [t for t in toks[1:3] if t not in ("not", "please")] + toks[3:]
        if toks[:1] and toks[0] in INSTRUCTION_VERBS:
            return True
    return False


def body_sentences(sents: Sequence[Sentence], answer: str, context: str = "",
                   topic: str = "", query: str = "") -> list[str]:
    """The claim and support sentences, cleaned, in order: discourse markers, remarks
    about the answer, anecdotes and trailing chatter removed; a leading "it"/"they"
    whose antecedent sentence was dropped is replaced by that sentence's subject, and an
    "instead" after a dropped "you wrote X" says what it stands instead of."""
    out: list[str] = []
    previous: Sentence | None = None
    for s in sents:
        if s.kind not in ("claim", "support"):
            previous = s
            continue
        text = clean_sentence(s.raw, context, topic)
        if not text and s.kind == "support" and len(tokens(s.raw)) == 1:
            text = s.raw.strip().rstrip(".") + "."  # the bare value asked for: "5433."
        # A demonstrative before a noun is an article here ("That switch" -> "The
        # switch"), not a pronoun to resolve.
        article = demonstrative_as_article(text) if text and not out else text
        if article != text:
            text = article
        elif text and previous is not None and previous.kind not in ("claim", "support",
                                                                     "system") and \
                _PRONOUN_START.match(text) and not out:
            text = _resolve(text, previous.view.text)
        if text and not out and re.match(r"(?i)(?:it|it's|they|they're)\b", text) and (
                previous is None or previous.kind not in ("claim", "support", "system")):
            # Nothing in the message names it: the writer answers the answer's subject
            # ("It moved to the ground floor in January" after "The A0 plotter, KM-PLOT-A0,
            # is on the 2nd floor").
            resolved = _resolve_from_answer(text, answer, query)
            text = resolved if resolved != text else _resolve_from_question(text, query)
        if text and previous is not None and previous.kind != "system" and \
                _REPORTED.match(strip_discourse(previous.raw)):
            # "You wrote /var/log/x. The logs are in /srv/y instead." -> "... instead
            # of /var/log/x.": the value the user refers back to, in the user's words.
            quoted = [i.text for i in items(previous.raw) if i.kind in STRONG_KINDS]
            if len(quoted) == 1:
                text = re.sub(r"\binstead\b(?!\s+of\b)", f"instead of {quoted[0]}", text,
                              count=1)
        word = re.match(r"[a-z]+\b(?![-.'/_(]\w?)", text)
        if word and s.raw.lstrip()[:1].isupper() and not s.raw.lstrip().startswith(text) and \
                (english_word(word.group(0)) or english_word(word.group(0).removesuffix("s"))):
            # The writer's capital, on the word that opens the sentence now ("Also
            # freelancers are external" lost its "Also"); a command or a name keeps its
            # case ("No, now() is ...", "Yes, dnsmasq on fs01 ...").
            text = text[:1].upper() + text[1:]
        # (a one-word support is the value a question asked for: "5433.", "Automatic.")
        if text and (len(tokens(text)) >= 2 or s.kind == "support") and text not in out:
            out.append(text)
        previous = s
    return _restatements_removed(_quotation_unwrapped(
        [t for t in (_talk_clauses_removed(t, answer) for t in out) if t]))


#: Where a clause of a sentence ends (the separator is kept by ``re.split``).
_CLAUSE_BREAK = re.compile(r"(;\s*|,\s+(?=(?:so|but|and|because|since|which|the|that|this|"
                           r"it|there)\b)|\s[\u2014\u2013-]\s)", re.IGNORECASE)


def _talk_clauses_removed(sentence: str, answer: str) -> str:
    """The sentence without its clauses about the conversation, when what is left still
    states something of its own: "Runbook RB-7 was changed, the assistant seems to have
    the old one." -> "Runbook RB-7 was changed."; "X's comment says the same as the bot -
    Tweaks, General tab - but there's no Tweaks on the bridge laptops" -> "There's no
    Tweaks on the bridge laptops" (the aside after the dropped clause goes with it). A
    clause that names a value the answer does not name stays: it may be the fact."""
    if not CONVERSATION_REFERENCE.search(sentence):
        return sentence
    if re.search(r"(?i)\b(?:did|tried|followed)\s+(?:exactly\s+)?(?:this|that|what)\b",
                 sentence) and all(clause_in_past(c) for c in clause_split(sentence)
                                   if tokens(c)) and not RULE_OR_ADVICE.search(sentence):
        # ("Hamish did exactly this on HV-03 ..., and it cooked itself in his car in
        # July": what happened to somebody who followed the answer, whatever it names)
        return ""
    parts = _CLAUSE_BREAK.split(sentence.rstrip().rstrip("."))
    clauses, seps = parts[0::2], ["", *parts[1::2]]
    kept: list[tuple[str, str]] = []
    dropped = False
    after_drop = False
    for sep, clause in zip(seps, clauses, strict=True):
        if CONVERSATION_REFERENCE.search(clause):
            if any(i.kind in STRONG_KINDS and i.text.lower() not in answer.lower()
                   for i in items(clause)):
                return sentence
            dropped, after_drop = True, True
            continue
        if after_drop and sep.strip() in ("-", "\u2014", "\u2013") and _verbless(clause):
            continue  # (the aside that went with the dropped clause)
        after_drop = False
        kept.append((sep, clause))
    if not dropped or not kept:
        return sentence
    text = "".join(sep + clause for sep, clause in kept).strip()
    text = re.sub(r"^[;,\u2014\u2013-]?\s*(?:(?:so|but|and|because|since)\s+)?", "", text,
                  flags=re.IGNORECASE)
    if len(tokens(text)) < 4 or re.match(r"(?i)(?:it|it's|its|they|they're|this|that)\b",
                                         text):
        # ("That's our standard, so the answer shouldn't offer X": a pointer back and a
        # word on the answer, all talk; "It's 14 days, not what the answer says" keeps
        # its value)
        short = len(tokens(text)) <= 5 and not any(i.kind in STRONG_KINDS for i in items(text))
        return "" if short else sentence
    if kept[0][0] and not RULE_OR_ADVICE.search(text):
        # (the clause about the answer was the sentence's own, and the rest goes on with
        # it: "Sandra did exactly what this answer says ..., and TideBook started refusing
        # check-ins" is the story of following the answer; "X says the same as the bot,
        # but there's no Tweaks on the laptops and never will be" turns to a rule)
        return ""
    return text[:1].upper() + text[1:] + ("" if text.endswith(("!", "?", ".")) else ".")


def _restatements_removed(sentences: list[str]) -> list[str]:
    """Without a last sentence that only sums up the ones before it (a "TL;DR" line): it
    names two or more concrete items, every one of them said before, and at least four in
    five of its content words (four or more) are said before. (A sentence in the middle
    with the same words may say something else of them: "X CONCURRENTLY only takes a
    SHARE UPDATE EXCLUSIVE lock" after "X takes a SHARE lock".)"""
    if len(sentences) < 2:
        return sentences
    *head, last = sentences
    before = " ".join(head)
    stems = content_stems(last)
    strong = [it for it in items(last) if it.kind in STRONG_KINDS]
    # (eight words or more: "etlmap etl01.ncg.example ncg_etl." is a map line, no summary)
    if len(tokens(last)) >= 8 and len(stems) >= 4 and len(strong) >= 2 and \
            5 * len(stems - content_stems(before)) <= \
            len(stems) and all(it.text.lower() in before.lower() for it in strong):
        return head
    return sentences


_EVAL_WORDS = (r"wrong|incorrect|inaccurate|outdated|out of date|old|obsolete|not (?:right|"
               r"true|correct|accurate|quite right|the case|possible|how it works)|false|"
               r"misleading|fails?|failed|(?:does(?:n't| not)|won't|will not|did(?:n't| not)|"
               r"can't|cannot) (?:work|help|apply|exist)|no longer (?:works|true|correct|"
               r"applies)|not here|not anymore|works|worked|correct|right|true|partly right")
_LEAD_EVAL = re.compile(
    r"^(?P<pp>(?:(?:for|on|in|at|with)\s+[^,:;]{2,40}?)\s*,?\s*)?"
    r"(?:(?:that|this|it|the answer|your answer|which|the\s+(?:assistant|bot|ai|chatbot))"
    r"(?:'s|\s+is|\s+was)?\s+"
    r"(?:\w+\s+){0,2}?|(?:that|this)\s+\w+\s+|(?:is|was)\s+)?"  # ("Is correct, but X")
    # ("right about logrotate doing the rotating, but X": what it is right about goes)
    # ("the assistant is right that roles need their own dump, but here X"; not when what
    # follows leans on what was conceded: "right that pg-lab-02 is a replica, but it's a
    # delayed one")
    r"(?:" + _EVAL_WORDS + r")\b(?:\s+about\s+[^,:;]{2,60}?(?=\s*,?\s+but\b)|\s+that\s+"
    r"[^,:;]{2,60}?(?=\s*,?\s+but\s+(?!(?:it|it's|its|they|they're|that|that's|this|these|"
    r"those|he|she)\b)))?"
    r"(?P<pp2>\s+(?:for|on|in|at|with)\s+[^,:;]{2,40}?)?"
    # ("kind of right on the mechanics but — X": what is right goes with the "but")
    r"(?:(?P<but>\s*,?\s+but)\s*(?:[,:;]|[\u2014\u2013-])?|\s*(?:[,:;]|\s[\u2014\u2013-]))"
    r"\s+(?=\S)", re.IGNORECASE)
#: The writer saying the message is a question: "Asking before I flip anything.", "Just
#: asking.", "Genuine question."
_ASKING = re.compile(r"^(?:(?:i'm|i\s+am)\s+)?(?:just\s+|only\s+)?asking\b(?:\s+(?:before|because|"
                     r"since|so)\b[^.!?]*)?[.!?]*$|^(?:genuine|honest|serious)\s+question\b",
                     re.IGNORECASE)
#: "Just saying it has happened before.", "Just saying.": the writer's aside.
_JUST_SAYING = re.compile(r"^(?:(?:i'm|i\s+am)\s+)?just\s+saying\b[^.!?]{0,60}[.!?]*$",
                          re.IGNORECASE)
#: What the answer was about: "Anyway, the bot answer is about local accounts which we
#: basically don't have", "your reply assumes a laptop".
_ANSWER_IS_ABOUT = re.compile(r"^(?:(?:anyway|but|so|also|and)\s*,?\s+)?(?:the|your|this|that)\s+"
                              r"(?:bot(?:'s)?\s+|assistant(?:'s)?\s+|ai(?:'s)?\s+)?(?:answer|reply|"
                              r"response|suggestion)\s+(?:is\s+(?:all\s+)?about|talks\s+about|"
                              r"covers|describes|assumes|is\s+written\s+for|refers\s+to|"
                              # "The answer is giving the Falcot example, that is the book"
                              r"(?:is\s+)?(?:giv(?:es|ing)|us(?:es|ing)|quot(?:es|ing)|show(?:s|ing)|"
                              r"cit(?:es|ing)|repeat(?:s|ing))\s+(?:\w+\s+){0,3}?(?:example|"
                              r"sample|setup|default|case|book|manual|handbook|docs?)\b)\b",
                              re.IGNORECASE)
#: A sentence set against the one before: "But anything over 10 MB bounces".
_CONTRAST_OPEN = re.compile(r"^(?:but|however|except\s+that|though|only)\b", re.IGNORECASE)
#: "okay so the thing is X": the run-up to X.
_RUN_UP = re.compile(r"^(?:(?:okay|ok|so|well|and)[\s,]+)*the\s+thing\s+is,?\s+(?=(?:we|you|"
                     r"they|i|it|there|our|the|nobody|no|only|this|that)\b)", re.IGNORECASE)


#: A request to stop recommending something ("Please stop telling people to run
#: VACUUM FULL on lab.results", "Stop suggesting SERIAL for new tables") carries a rule,
#: and what it names is the value the answer got wrong: the sentence is kept (in the
#: user's words, without "please"), not dropped as a remark to the assistant. "Please do
#: not suggest this." names nothing: it is a remark to the assistant.
_DONT_TELL = re.compile(
    r"^(?:please\s+)?(?:tell\s+(?:people|ppl|users|everyone|them|staff|students)\s+to|"
    r"(?:stop|quit)\s+(?:telling\s+(?:people|users|everyone|anyone|"
    r"them|staff)\s+to|suggesting|recommending|advising)|(?:don't|do not|never)\s+(?:tell\s+"
    r"(?:people|users|everyone|anyone|them|staff)\s+to|suggest|recommend|advise))\s+"
    r"(?!(?:this|that|it|them|these|those|so)(?:\s+(?:again|anymore|any more|please))*\s*[.!]*$)"
    r"(?=\S)", re.IGNORECASE)


#: A memo's sign-off line: "Issued on behalf of the Desktop Services Team."
_ISSUED_BY = re.compile(r"^(?:issued|sent|posted|published|circulated|distributed|written|"
                        r"signed)\s+(?:on behalf of|by|for)\s+[^.;:]{1,80}[.!]?$", re.IGNORECASE)
#: "..., and the help page when I looked, both say": a conjunct of the subject, not a story.
_CONJUNCT = re.compile(r"^(?:and|or|nor)\s+(?:the|a|an|our|its|their|his|her)\b", re.IGNORECASE)
_RELATIVE_START = re.compile(r"^(?:which|who|whom|whose|where)\b", re.IGNORECASE)


#: Where the exception does not hold: "In every other clinic autodiscovery works fine",
#: "On the other floors it works as written" (the rule's other side, not praise).
_SCOPED_CONTRAST = re.compile(r"^(?:but\s+|and\s+)?(?:in|on|at|for|with)\s+(?:every|all|any|each|"
                              r"the|all\s+the|all\s+of\s+the)\s+(?:other|remaining)\s+[\w-]+",
                              re.IGNORECASE)
_SCOPED_FAILURE = re.compile(
    r"^(?:it|they)(?:'s|\s+is|\s+are)?\s+(?:[\w']+\s+){0,2}?(?:work|works|apply|applies|exist|"
    r"exists)\s+(?:outside|inside|off|on|in|at|from|with|without|after|before|during|over|"
    r"behind|beyond|through|via|past)\s", re.IGNORECASE)


def _outside_brackets(text: str) -> list[str]:
    """``text`` split at ", " except inside brackets ("anything in a waiting room
    (tablets, the TV, the kiosk) goes on the guest Wi-Fi" is one clause); a sentence
    wholly in brackets is split inside them."""
    wrapped = _WRAPPED.fullmatch(text)
    if wrapped:
        return re.split(r",\s+", wrapped.group(1) + wrapped.group(2))
    parts: list[str] = []
    depth = start = 0
    for m in re.finditer(r"[()\[\]]|,\s+", text):
        tok = m.group(0)
        if tok in "([":
            depth += 1
        elif tok in ")]":
            depth = max(0, depth - 1)
        elif depth == 0:
            parts.append(text[start:m.start()])
            start = m.end()
    parts.append(text[start:])
    return parts


def clean_sentence(sentence: str, context: str = "", topic: str = "") -> str:
    """A claim as it goes into a body (``topic``: the query and the answer): opening
    discourse markers, a short label before a colon unless it names the topic ("Lost
    badges: ..."), a leading verdict on
    the answer ("That's wrong for CorpNet: ..." keeps "For CorpNet, ..."), reported
    speech ("You said X, but ..."), anecdote clauses, trailing chatter and the other
    conversational residue of :mod:`optimizer.local.residue` removed."""
    return _VOCATIVE_END.sub("", _unquoted_ends(_clean_sentence(sentence, context, topic)))


#: A word to the reader at the end of a sentence: "freight runs at night too mate.",
#: "it's on the shared drive, guys!"
_VOCATIVE_END = re.compile(r"(?:,[ \t]*|[ \t]+)(?:mate|m8|buddy|pal|dude|bro|guys|lads|chaps)"
                           r"(?=[ \t]*[.!]*[ \t]*$)", re.IGNORECASE)


def _unquoted_ends(text: str) -> str:
    """No "." after a closing quotation mark that follows a sentence's own end
    ('... every Monday.".' -> '... every Monday."')."""
    return re.sub(r"([.!?][\"”])\.(?=\s|$)", r"\1", text)


def _quotation_unwrapped(sentences: list[str]) -> list[str]:
    """A quotation over several whole sentences without its marks: its opening mark on
    the first of them and its closing one on the last, no other mark between (the words
    are the quoted document's, stated as they are)."""
    out = list(sentences)
    for i, first in enumerate(out):
        if not (first.startswith(('"', "“")) and first.count('"') + first.count("“") == 1):
            continue
        for j in range(i + 1, len(out)):
            marks = out[j].count('"') + out[j].count("”")
            if marks == 1 and re.search(r"[.!?][\"”]$", out[j]):
                out[i] = first[1:]
                out[j] = out[j][:-1]
                break
            if marks:
                break
    return out


#: Why the writer says it, before what they say: "to make it explicit for the assistant,",
#: "just to be clear,".
_MADE_EXPLICIT = re.compile(r"^(?:and\s+|so\s+)?(?:just\s+)?to\s+(?:make\s+(?:it|this|that)\s+"
                            r"(?:explicit|clear|official)|be\s+(?:clear|explicit|precise))"
                            r"(?:\s+(?:for|to)\s+(?:the\s+)?(?:assistant|bot|model|ai|everyone|"
                            r"record|team))?\s*[,:]\s*", re.IGNORECASE)
#: Thanks that open a sentence with more after them: "Thank you for answer, it is mostly
#: correct but X" (the verdict and the thanks go, X stays).
_THANKS_LEAD = re.compile(r"^(?:thanks?|thank\s+you|many\s+thanks)(?:\s+(?:a\s+lot|so\s+much|"
                          r"very\s+much))?(?:\s+for\s+(?:the\s+|your\s+|this\s+|that\s+)?"
                          r"(?:answer|reply|response|help|info|tip|this|that))?\s*"
                          r"(?:[,;:]|\s[\u2014\u2013-])\s*(?=\w)", re.IGNORECASE)


def _aside_story(clause: str) -> bool:
    """A short first-person clause of what the writer saw or did ("I have seen this
    already at another site"), naming nothing."""
    return len(tokens(clause)) <= 8 and not any(
        it.kind in STRONG_KINDS for it in items(clause)) and bool(
        _ANECDOTE.search(clause) or re.search(r"\b(?:i|we)(?:'ve|\s+have)\s+(?:\w+\s+)?(?:seen|"
                                               r"heard|had|done)\b", clause, re.IGNORECASE))


def _clean_sentence(sentence: str, context: str = "", topic: str = "") -> str:
    """See :func:`clean_sentence`."""
    # ("Hi po, sorry but X": X; "okay so the thing is we X": we X)
    s = _RUN_UP.sub("", strip_discourse(_THANKS_LEAD.sub("", without_greeting(
        _unwrapped(_ours_named(strip_mention(sentence)))))))
    explicit = _MADE_EXPLICIT.match(s)
    if explicit and len(tokens(s[explicit.end():])) >= 3:
        s = sentence_case(s[explicit.end():])  # ("To make it explicit for the assistant, X")
    if _ELLIPTIC_ONLY.match(s):
        return ""  # "No you can't, not here.": the reply, the rest of the message says why
    elliptic = _ELLIPTIC_LEAD.match(s)
    if elliptic and len(tokens(s[elliptic.end():])) >= 4:
        s = sentence_case(s[elliptic.end():])  # ("You can't, default printers are set by IT")
    why = _THATS_WHY.match(s)
    if why and len(tokens(s[why.end():])) >= 3:
        s = sentence_case(s[why.end():])  # ("That's why meter_id is text": the fact)
    because = _VERDICT_BECAUSE.match(s)
    if because and verdict(because.group("verdict")) and len(tokens(because.group("rest"))) >= 4:
        s = sentence_case(because.group("rest"))  # ("That won't help, because X": X)
    head, *story = _STORY_TAIL.split(s, maxsplit=1)
    if story:  # ("X, which is what happened to a trainee yesterday ...": X)
        s = head.rstrip(" ,") + "."
    m = _LEAD_EVAL.match(s)
    if m and len(tokens(s[m.end():])) >= 3 and not any(
            i.kind in ("number", "keys", "menu", "path", "url", "quoted", "dotted")
            for i in items(s[:m.end()])):
        pp = (m.group("pp") or ("" if m.group("but") else m.group("pp2")) or "").strip(" ,")
        rest = _RUN_UP.sub("", strip_discourse(s[m.end():]))
        s = f"{pp[0].upper()}{pp[1:]}, {rest}" if pp else rest
    # "You said X, but Y" / "The answer says X; Y": keep only what the user states.
    if _REPORTED.match(s):
        clauses = clause_split(s)
        if len(clauses) < 2:
            return ""
        s = strip_discourse(" ".join(clauses[1:]))
    # A short label before a colon ("It can:", "Quicker way:") or a verdict clause
    # ("..., that's not it") carries nothing the rest does not say better.
    head, colon, tail = _partition_outside_brackets(s, ": ")
    if colon and len(tokens(tail)) >= 3 and len(tokens(head)) >= 2 and (
            verdict(head) or _BOOKKEEPING_HEAD.search(head) or (
                len(tokens(head)) >= 4 and not strip_residue(head)) or (
                len(tokens(head)) >= 4 and view(head).about_answer and not items(head)) or (
                _PERSONAL_WORD.search(head) and past_tense(head) and len(tokens(tail)) >= 6
                and not _PERSONAL_WORD.search(tail))):
        # "Not sure about the laptops, but on the servers I checked myself: it's chrony";
        # "... I was about to ask for a login when Arjun reminded me how it works here:
        # new starter accounts are requested in IT-ACCESS"
        s = sentence_case(tail)
        head, colon, tail = s.partition(": ")
    # (a head whose value follows an "=" is what the value is of: "S: = \\files-hr1\staff")
    if colon and len(tokens(head)) <= 3 and len(tokens(tail)) >= 4 and not items(head) and \
            not tail.lstrip().startswith("=") and not _VALUE_KIND_HEAD.search(head) and \
            not _SCOPE_HEAD.match(head) and not _CONDITION_HEAD.match(head) and \
            not states_pairs(tail) and not _noun_label(head, tail) and \
            not _label_with_value(head, tail) and \
            not (content_stems(head) & content_stems(topic) - _GENERIC
                 and not (set(tokens(head)) & EVALUATIVE) - set(tokens(topic))):
        # "It can:", "Quicker way:" (but "Lost badges:" names the topic asked about, and
        # "retention: 14 dailies, 8 weeklies" is what the values are of)
        s = tail
        if _REPORTED.match(s):  # "mirela: bot says to X": a chat line reporting the answer
            return ""
    clauses = _outside_brackets(s)
    # ("..., I have seen this already at another site; any work goes through X": the
    # anecdote before the semicolon goes, what follows it stays)
    pieces = []
    for i, c in enumerate(clauses):
        head, sep, tail = c.partition("; ")
        pieces.append(("; ", tail) if i > 0 and sep and _aside_story(head) else (", ", c))
    if any(joint == "; " for joint, _ in pieces):
        s = pieces[0][1] + "".join(joint + c for joint, c in pieces[1:])
        clauses = [c for _, c in pieces]
    if len(clauses) > 1:
        # "..., that's not it", "..., this fixed my report", "..., my DELETE removed
        # the rows": verdicts, praise and anecdotes are not part of the fact.
        # ("..., it doesn't work outside the gyms" is what the thing just named does
        # somewhere: a fact, not a verdict on the answer.)
        dropped = [(verdict(c) and not (i > 0 and _SCOPED_FAILURE.match(c))) or (
            i > 0 and (_ANECDOTE.search(c) or _PRAISE.search(c)) and len(tokens(c)) <= 8
            and not any(it.kind in STRONG_KINDS for it in items(c))
            and not _CONJUNCT.match(c)) for i, c in enumerate(clauses)]
        # (the condition of a dropped verdict goes with it: "— if you get them
        # personally, your alias is wrong")
        # (only when nothing kept comes after: "If you need X, that isn't possible, we
        # check it in the application" keeps the condition of what is kept)
        followed = [i + 1 < len(clauses) and all(dropped[i + 1:])
                    for i in range(len(clauses))]
        kept = [DANGLING_CONDITION.sub("", c) if followed[i] else c
                for i, c in enumerate(clauses)
                if not dropped[i] and not (followed[i] and CONDITION_ONLY.fullmatch(c))]
        if kept and len(kept) < len(clauses) and not _RELATIVE_START.match(kept[0]):
            s = ", ".join(kept)  # (not when only "which follow their own schedule" is left)
    parts = re.split(r"(;\s+)", s)
    if len(parts) > 1:
        kept = [p for p in parts[::2] if not _ANECDOTE.search(p) or len(parts) == 1]
        s = "; ".join(p.strip() for p in kept if p.strip())
    s = re.sub(r"\s+[-\u2013\u2014]+$", "", _TRAILING_CHATTER.sub("", s).strip(" ,;"))
    s = strip_residue(s)
    explicit = _MADE_EXPLICIT.match(s)  # (again, once the agreement before it is gone)
    if explicit and len(tokens(s[explicit.end():])) >= 3:
        s = s[explicit.end():]
    vocative = _VOCATIVE.match(s)
    # (what follows is a clause of its own: "Gregor, Tweaks isn't available"; not "Tilde,
    # so the next update wins" nor "Automatic, URL http://...")
    if vocative and len(tokens(s[vocative.end():])) >= 4 and not (
            vocative.group("name").lower() in _NOT_ADDRESSED or
            vocative.group("name").lower().endswith(("s", "ly")) or
            re.match(r"(?i)(?:so|and|but|or|because|which|then|if|when|not)\b",
                     s[vocative.end():]) or _verbless(s[vocative.end():vocative.end() + 80])):
        s = s[vocative.end():]  # ("Gregor, Tweaks isn't available on KF laptops")
    if not s or len(tokens(s)) < 2:
        return ""
    return sentence_case(s, context)


#: Capitalised words before a comma that address nobody: "Otherwise, ...", "Yes, ...".
_NOT_ADDRESSED = frozenset("""otherwise however also then yes yeah yep no nope sure note still
again instead so well now anyway besides meanwhile finally first second third next last
here there today tomorrow yesterday tonight currently normally usually generally basically
actually honestly seriously frankly ok okay right correct true fine good great thanks please
sorry hi hello hey dear update edit correction important warning caution reminder fyi""".split())
#: A first name alone before a comma, naming whom the reply is to: "Gregor, Tweaks isn't
#: available" (not a list, "Chromium, Firefox and Edge are ...", nor a name the clause is
#: about, "Priya, our DBA, ...").
_VOCATIVE = re.compile(r"^(?P<name>(?-i:[A-Z][a-z]{2,})),[ \t]+(?![\w'-]+(?:[ \t]+[\w'-]+)?[ \t]*"
                       r"(?:,|\b(?:and|or)\b))(?=\S)")


#: The subject of a yes/no question: "Doesn't Airplane Mode kill Bluetooth too?"
_APPOSED_NP = re.compile(
    r"^((?:the|this|that|our|your|a|an)\s+(?:[\w&'-]+\s+){0,3}?[\w&'-]+),\s+([^,]{1,40}),\s+"
    r"(?:is|are|was|were|has|have|lives|sits|runs|can|cannot|can't|must|only|will|does|"
    r"doesn't|isn't|aren't)\b", re.IGNORECASE)
_QUESTION_NP = re.compile(
    r"^(?i:do|does|did|doesn't|didn't|don't|is|isn't|are|aren't|was|wasn't|can|can't|will|"
    r"won't|has|hasn't|have|haven't|should|shouldn't)\s+((?:the|this|that|our|your|a|an)\s+"
    r"(?:[\w&'-]+\s+){0,3}?[\w&'-]+|(?:[A-Z][\w&'-]*\s+){0,3}[A-Z][\w&'-]*)\s+[a-z]")


def _without_items(text: str) -> str:
    """The text with its concrete items blanked out ("expire it: `usermod -e 1 x`" leaves
    "expire it:")."""
    for it in sorted(items(text), key=lambda i: -i.start):
        if it.kind in STRONG_KINDS:
            text = text[:it.start] + " " + text[it.end:]
    return text


_DEMONSTRATIVE = re.compile(r"^(?:this|that|these|those)\s+(?P<word>[\w'’-]+)", re.IGNORECASE)
# Words after "that"/"this" that are not nouns: function words, and verbs a pronoun
# takes ("That went away", "This cost us a day") that no suffix gives away.
_NOT_A_NOUN = STOPWORDS | frozenset(
    "isn't wasn't aren't weren't won't wouldn't can't cannot couldn't shouldn't must might "
    "may doesn't didn't don't hasn't hadn't haven't also still never always even already "
    "really means meant one ones way much many went came got made took broke ran said told "
    "gave left kept became put set let cost hurt".split())


def demonstrative_as_article(sentence: str) -> str:
    """A body's first sentence points at nothing in the nugget: "That switch isn't in
    Screen Lock" (the switch the answer named) reads "The switch isn't in Screen Lock".
    Only a demonstrative before a noun is changed: "That fails with ..." and "This one
    ..." keep their words (the word after it is a verb, an adverb or "one")."""
    m = _DEMONSTRATIVE.match(sentence)
    if m is None:
        return sentence
    word = m.group("word")
    low = word.lower()
    plural = sentence[:m.start("word")].strip().lower() in ("these", "those")
    if low in _NOT_A_NOUN or low.endswith(("'s", "’s", "ly")) or not word[0].isalpha():
        return sentence
    if not plural and low.endswith("s") and not low.endswith(("ss", "us", "is")):
        return sentence  # "That fails ...", "This means ..." (a verb after a pronoun)
    if low.endswith("ed") and not plural:
        return sentence  # "That changed in 46"
    return "The " + sentence[m.start("word"):]


def _resolve_from_answer(sentence: str, answer: str, query: str) -> str:
    """A leading "it"/"they" read as the subject of the answer's first sentence, when that
    subject is what the user asked about (it shares a word with the query) and agrees in
    number ("It moved ..." after "The A0 plotter, KM-PLOT-A0, is on the 2nd floor";
    not "It's Eastbrook-Free" after "Patrons use ...")."""
    if not answer.strip():
        return sentence
    resolved = _resolve(sentence, split_sentences(answer)[0])
    if resolved == sentence:
        return sentence
    subject = resolved[:len(resolved) - len(sentence.split(" ", 1)[-1])].strip()
    head = re.sub(r"\s*\([^)]*\)", "", subject).split()
    plural = bool(head) and head[-1].lower().endswith("s") and not head[-1].isupper()
    they = sentence.split(" ", 1)[0].lower() in ("they", "they're")
    if plural != they or not content_stems(subject) & content_stems(query):
        return sentence
    return resolved


#: A question that asks what something is: "What's the statement_timeout for the API
#: role?", "Where are the auth logs on bookworm?" (the thing asked about in ``np``).
_WH_COPULA = re.compile(
    r"^(?:what|which|where|who|when)(?P<verb>'s|\s+is|\s+are)\s+(?P<np>(?:the|our)\s+"
    r"[^?,;:]{2,80}?)\s*\??$", re.IGNORECASE)


_PARTICIPLES_EN = frozenset("""taken given written hidden chosen forgotten broken shown known
seen done driven stolen spoken frozen beaten eaten fallen ridden""".split())


def _resolve_from_question(sentence: str, query: str) -> str:
    """A leading "it's"/"they're" read as what the trigger query asks about, when it asks
    what something is and agrees in number ("It's 30s." after "What's the
    statement_timeout for the API role?" reads "The statement_timeout for the API role
    is 30s.")."""
    m = _WH_COPULA.match(" ".join(query.split()).rstrip(" ?") + "?")
    head = re.match(r"(?i)(it's|it\s+is|they're|they\s+are)\s+(?=\S)", sentence)
    if m is None or head is None:
        return sentence
    plural = m.group("verb").strip().lower() == "are"
    they = head.group(1).lower().startswith("they")
    if plural != they:
        return sentence
    np = m.group("np")
    last = np.split()[-1].lower()
    if last.endswith("ed") or last in IRREGULAR_PAST or last in _PARTICIPLES_EN:
        return sentence  # "where are the spare badges kept": what is asked is not "are X"
    verb = "are" if plural else "is"
    return f"{np[0].upper()}{np[1:]} {verb} {sentence[head.end():]}"


#: What the answer did, as the user reports it: "You put CREATE INDEX CONCURRENTLY
#: between BEGIN and COMMIT." (not what it said: that is :data:`_REPORTED`).
_DONE_BY_ANSWER = re.compile(r"^(?:you|the answer|the assistant)\s+(?:have\s+|'ve\s+)?"
                             r"([a-z]+)\s+(\S.*?)\s*[.!]*$", re.IGNORECASE)
_GERUND = {"put": "putting", "ran": "running", "set": "setting", "made": "making",
           "gave": "giving", "took": "taking", "left": "leaving", "cut": "cutting",
           "kept": "keeping", "sent": "sending", "built": "building", "got": "getting",
           "let": "letting", "hit": "hitting", "shut": "shutting", "split": "splitting",
           "chose": "choosing", "drew": "drawing", "held": "holding", "laid": "laying",
           "led": "leading", "lent": "lending", "stuck": "sticking", "threw": "throwing"}


def _gerund(past: str) -> str | None:
    """"putting" for "put", "adding" for "added", "copying" for "copied"; None when the
    word is not a verb in the past this knows."""
    word = past.lower()
    if word in _GERUND:
        return _GERUND[word]
    if word.endswith("ied") and len(word) > 4:
        return word[:-3] + "ying"
    if word.endswith("ed") and len(word) > 4 and word not in ("need", "feed", "seed"):
        return word[:-2] + "ing"
    return None


_FINITE = frozenset("""is are was were be been has have had do does did 's 're 've get gets
got goes go""".split())


#: A relative clause that tells what happened once, after the fact it hangs on.
_STORY_TAIL = re.compile(r",\s+(?:which|as)\s+(?:is|was)\s+(?:exactly\s+)?what\s+happened\b|"
                         # ", which is why the diff was so massive": what it caused once
                         r",\s+which\s+(?:is|was)\s+why\b(?=[^.!?]*\b(?:was|were|had|did|got|"
                         r"went|came|happened|broke|failed)\b)|"
                         # (", it ate the RAM on loom-05 last time": why, told as what
                         # happened once; "AND LAST TIME SOMEONE REUSED IT ...")
                         r"(?:,|\s+and)\s+(?=[^.!?;]*\blast\s+time\b)(?:it|that|this|they|"
                         r"someone|somebody|we|last\s+time)\b", re.IGNORECASE)
#: "The endpoint is gw-1, UDP 51821, we moved it last year": when what holds came to hold,
#: after it (the sentence states what holds; the tail stays in the body as its history).
_CHANGE_TAIL = re.compile(r",\s+(?:we|they|i|he|she|it|someone|ops)\s+(?:only\s+|just\s+)?"
                          r"(?:moved|changed|switched|renamed|replaced|migrated|upgraded|bumped|"
                          r"raised|lowered)\s+(?:it|that|this|them)\b(?=[^.;,]*[.!]?\s*$)|"
                          # "prod is on 15.6 — patched last month"
                          r"\s+[—–-]+\s+(?:patched|upgraded|changed|moved|migrated|updated|raised|"
                          r"lowered|switched|replaced|renamed)\b(?=[^.;]*[.!]?\s*$)",
                          re.IGNORECASE)
#: What holds now, whatever happened before: "not posted on the door anymore".
_NOW_STATE = re.compile(r"\b(?:not|no|never)\b[^.;]{0,40}\b(?:anymore|any more)\b|"
                        r"\bno\s+longer\b|"
                        # "It's GNOME 46 now, the upgrade finished last autumn", "now it's
                        # 5 minutes" (not a status: "it's fine now")
                        r"\b(?:is|are|'s|'re)\b(?![^,.;]{0,12}\b(?:fine|ok|okay|back|sorted|"
                        r"working|running|up|good|green|better|stable)\b)[^,.;]{0,40}\bnow\b|"
                        r"\bnow\s+(?:it's|it\s+is|they're|they\s+are|we're|we\s+are)\b"
                        r"(?!\s+(?:fine|ok|okay|back|sorted|working|running|up|good|green|better|"
                        r"stable)\b)",
                        re.IGNORECASE)


#: A sentence written wholly in brackets: its text, and the stop after the bracket.
_WRAPPED = re.compile(r"\s*\(([^()]+)\)\s*([.!]?)\s*")


def _unwrapped(text: str) -> str:
    """A sentence written wholly in brackets, without them: "(Debrief Room 1 has no
    external mic at all.)"."""
    m = _WRAPPED.fullmatch(text)
    # ("(1 row)" under a psql result is output, not a sentence)
    # (nor is "(the ultrasound in Room 4 paired fine this way btw)" a rule: a story)
    return m.group(1).strip() if m and not _verbless(m.group(1)) and not past_tense(
        m.group(1)) else text


_SUBJECT_PRONOUNS = frozenset("it he she this that which who there they we you i".split())
#: Header fields of a forwarded mail: "Subject: Re: ...", not labels of a fact.
_MAIL_FIELDS = frozenset("""subject re fwd fw from to cc bcc date sent edit update correction
ps nb note""".split())


def _verbless(text: str) -> bool:
    """No verb in it: a list of values ("14 dailies, 8 weeklies, 12 monthlies"), not a
    clause ("it holds ACCESS SHARE locks") or an instruction."""
    toks = tokens(text)
    return bool(toks) and not _instruction(text) and not any(
        _verb_word(w) or "'" in w or w in ("not", "no", "never")
        or (i > 0 and toks[i - 1] in _SUBJECT_PRONOUNS and w.endswith("s"))
        for i, w in enumerate(toks))


def _verb_word(word: str) -> bool:
    """A word that is a verb wherever it stands: a form of be/have/do, a modal, a policy
    word, an irregular past or an -ed form."""
    return word in _FINITE or word in MODALS or word in POLICY or word in IRREGULAR_PAST or (
        word.endswith("ed") and len(word) > 4)


def _noun_label(head: str, tail: str) -> bool:
    """"Retention: 14 dailies, 8 weeklies": a noun naming what the values after it are of
    (not "Subject:", "It's configurable:", "Wrap it:", which say nothing of them)."""
    toks = tokens(head)
    # (a participle's phrase describes the noun: "Backups: copied nightly by robocopy",
    # "Logs: /var/log/x on each host, rotated daily by logrotate")
    described = _PARTICIPLE_PHRASE.sub(" ", tail)
    return (not tokens(described) or _verbless(described)) and _verbless(head) and not set(
        toks) & (_MAIL_FIELDS | _SUBJECT_PRONOUNS | EVALUATIVE) and \
        english_word(toks[-1]) is not False


def _label_with_value(head: str, tail: str) -> bool:
    """"Control room: Performance, always (trend graphs lag otherwise)": a noun naming where
    the value after it holds, the value first and the reason after it (not "It can: ...",
    "Quicker way: open Settings", "Heads up: the VPN is down", which say nothing of it)."""
    toks = tokens(head)
    first = re.split(r"[,;(]", tail, maxsplit=1)[0]
    # (not a person's name alone: "Owner: Isla McLeod." names who, a byline)
    return bool(toks) and _verbless(head) and not set(toks) & (
        _MAIL_FIELDS | _SUBJECT_PRONOUNS | EVALUATIVE) and bool(
        re.match(r"[ \t]*[A-Z0-9]", tail)) and _verbless(first) and len(tokens(first)) <= 4 \
        and not re.fullmatch(r"\s*[A-Z][a-z'-]+(?:\s+[A-Z][\w'-]+){1,2}\s*[.!]?\s*", tail)


_PARTICIPLE_PHRASE = re.compile(r"(?:^|,)[ \t]*(?:[a-z]{3,}ed|kept|held|sent|run|made|"
                                r"done|shown|known|set|put|built|written|taken|given)\b[^,;]*",
                                re.IGNORECASE)


def _heading(text: str, message: str) -> bool:
    """A heading over a list: a line of ``message`` that ends in a colon, is followed by
    list items and has no verb, value, scope or condition in it ("Guides' laptop DON'Ts
    (from Ruaridh):", "Kiosk rules:"). ("On the GIS replica:" scopes what follows; "Ours
    is /etc/x:" states.)"""
    t = text.strip()
    if not t.endswith(":") or _SCOPE_HEAD.match(t[:-1]) or _CONDITION_HEAD.match(t[:-1]):
        return False
    if not re.search(re.escape(t) + r"[ \t]*\n\s*(?:[-*\u2022]|\d{1,2}[.)])\s", message):
        return False
    if announces(t[:-1]):
        return True  # "For anyone else from Farebox who hits this:"
    if _instruction(t[:-1]):
        return False  # "Copy the key to the other hosts:" is a step
    bare = re.sub(r"\([^()]*\)", " ", t)  # (who wrote it, when: not the heading's scope)
    if re.search(r"\b(?:that|which|who)\b|\b(?:at|in|for|on)\s+(?-i:[A-Z0-9])", bare,
                 re.IGNORECASE):
        return False  # "Steps that work at Harbourside:" scopes and states
    toks = tokens(t)
    return 0 < len(toks) <= 12 and not any(_verb_word(w) for w in toks) and not any(
        i.kind != "name" for i in items(t))


def _answer_did(v: SentenceView) -> bool:
    """The sentence tells what the answer did ("You wrapped the upgrade in a screen
    session."): the answer, retold, not a fact of the world. (Not "You used to need a
    ticket", nor a sentence with a modal, a rule or a time.)"""
    done = _DONE_BY_ANSWER.match(strip_discourse(v.text))
    return bool(done and done.group(1).lower() != "used" and _gerund(done.group(1))
                and not (v.modal or v.policy or _strict_policy(v)) and not v.question
                and not re.search(r"\b(?:until|since|before|anymore|any more|no longer|"
                                  r"which|who|where|because)\b|[;:,]", v.text, re.IGNORECASE))


def _resolve(sentence: str, antecedent: str) -> str:
    """"It turns off ..." after "Airplane Mode is ..." or "Doesn't Airplane Mode ...?"
    reads "Airplane Mode turns off ..."; "That fails ..." after "You put X between BEGIN
    and COMMIT." reads "Putting X between BEGIN and COMMIT fails ..."."""
    bare = strip_discourse(antecedent)
    done = _DONE_BY_ANSWER.match(bare)
    doing = _gerund(done.group(1)) if done and not _REPORTED.match(bare) else None
    m = _SUBJECT_NP.match(bare) or _QUESTION_NP.match(bare)
    apposed = _APPOSED_NP.match(bare) if not m else None
    if doing and done:
        subject = f"{doing} {done.group(2)}"
    elif apposed:  # "The A0 plotter, KM-PLOT-A0, is ..." -> "The A0 plotter (KM-PLOT-A0)"
        subject = f"{apposed.group(1)} ({apposed.group(2)})"
    elif m:
        subject = m.group(1)
    else:
        # "Oh brilliant, install Caffeine, what could go wrong." then "It's on the banned
        # list": the one thing the dropped sentence names
        named = [i for i in items(bare) if i.kind in ("name", "tech", "dotted", "quoted")]
        if len(named) != 1 or not _SARCASM.search(bare):
            return sentence
        subject = named[0].text
    head = sentence.split(" ", 1)
    word = head[0].lower()
    rest = head[1] if len(head) > 1 else ""
    if word in ("it", "they", "this", "that") and not (doing and word == "they"):
        return f"{subject[0].upper()}{subject[1:]} {rest}".strip()
    if word in ("it's", "they're", "that's", "this's"):
        verb = "are" if word == "they're" and not doing else "is"
        return f"{subject[0].upper()}{subject[1:]} {verb} {rest}".strip()
    return sentence


def merge_to(sentences: Sequence[str], limit: int) -> list[str]:
    """At most ``limit`` sentences: when there are more, the shortest neighbouring pair
    is joined with a semicolon until they fit (nothing is dropped)."""
    out = list(sentences)
    while len(out) > limit:
        i = min(range(len(out) - 1), key=lambda k: len(out[k]) + len(out[k + 1]))
        second = out[i + 1]
        first_word = second.split(" ", 1)[0]
        if not ((first_word.isupper() and first_word != "A")
                or first_word[1:].lower() != first_word[1:]
                or _is_name_start(second) or not (english_word(first_word) or english_word(
                    first_word.lower().removesuffix("s")))):  # "Priya"
            second = second[0].lower() + second[1:]
        out[i:i + 2] = [out[i].rstrip(".!") + "; " + second]
    return out


def _is_name_start(sentence: str) -> bool:
    return any(i.start == 0 and i.kind in ("name", "menu", "keys", "tech", "dotted")
               for i in items(sentence))


# ---------------------------------------------------------------------------------------
# Fact triple
# ---------------------------------------------------------------------------------------

_PRIORITY = ("keys", "menu", "path", "url", "email", "quoted", "dotted", "tech", "number",
             "name")


def fact_triple(first: str, body: str, ctx: FeedbackContext) -> tuple[str, str, str]:
    """(subject, predicate, object) of the correction: the subject is the trigger
    query's topic (so corrections of the same question meet under one key), the object
    the corrected value: the most specific item the body asserts (outside a negated
    clause) that the answer did not state, verbatim from the body."""
    subject = _action(first) or task_of(ctx.query)
    found = items(body)
    answer_keys = {i.key for i in items(ctx.answer)}
    answer_norm = normalize(ctx.answer)

    scope = normalize(scope_of(body))

    def rank(i: Item) -> tuple[int, int, int, int]:
        new = i.key not in answer_keys and i.key not in answer_norm
        positive = not is_negated(body, i)
        kind = _PRIORITY.index(i.kind) if i.kind in _PRIORITY else len(_PRIORITY)
        if i.kind == "name" and i.text.isupper():
            kind += 1  # an acronym ("IT") is rarely the corrected value
        if i.kind == "number" and re.search(r"[A-Z][\w-]*\s+$", body[:i.start]):
            kind = len(_PRIORITY)  # "GNOME 46": a release, not the corrected value
        in_scope = bool(scope) and i.key in scope
        return (int(in_scope) + (0 if positive else 1), 0 if new else 1, kind, i.start)

    only = re.search(r"\bonly\s+(?:the\s+|an?\s+)?((?:[A-Z][\w-]*\s?)+)", body)
    obj = ""
    if only:
        obj = re.sub(r"\s+(?:role|roles|team|group)$", "", only.group(1).strip())
    candidates = sorted((i for i in found if i.kind != "role"), key=rank)
    if not obj and candidates:
        obj = candidates[0].text
    if not obj:
        roles = [i.text for i in found if i.kind == "role"]
        obj = roles[0] if roles else _predicate_phrase(first)
    chosen = next((i for i in found if i.text == obj), None)
    low = first.lower()
    if obj and set(tokens(obj)) & ROLE_WORDS:
        predicate = "allowed_role"
    elif chosen is not None and chosen.kind == "keys":
        predicate = "shortcut"
    elif (chosen is not None and chosen.kind in ("menu", "path", "url")) or re.search(
            r"\b(?:is|are|lives|sits)\s+(?:in|under|on|at)\b|\blocated\b", low):
        predicate = "location"
    elif re.search(r"\b(?:requires?|needs?|must|mandatory|required)\b", low):
        predicate = "requirement"
    elif chosen is not None and chosen.kind == "number":
        predicate = "limit"
    elif re.search(r"\b(?:not|no|never|disabled|blocked|forbidden|cannot|can't)\b", low):
        predicate = "restriction"
    else:
        predicate = "value"
    return subject or " ".join(sorted(_content_words(first)))[:80], predicate, obj


_ACTION = re.compile(r"\b(?:can|can't|cannot|may|must|is able to|are able to|allowed to)\s+"
                     r"((?:[\w'-]+\s?){1,8})", re.IGNORECASE)
_ACTION_STOP = re.compile(r"\s+(?:from|in|on|at|while|when|if|but|and|because|unless|via|"
                          r"through|for|with|by)\b.*$", re.IGNORECASE)


def _action(sentence: str) -> str:
    """The action a rule is about ("only the Workspace Owner can reset another user's
    password" -> "reset another user's password"), or ""."""
    m = _ACTION.search(sentence)
    if not m:
        return ""
    phrase = _ACTION_STOP.sub("", m.group(1)).strip(" .,;")
    phrase = re.sub(r"^(?:only|also|not|now|still|no longer)\s+", "", phrase,
                    flags=re.IGNORECASE)
    first = tokens(phrase)[:1]
    if len(phrase.split()) < 2 or not first or first[0] in ("be", "see", "have", "get"):
        return ""
    return phrase.lower()


def _content_words(text: str) -> set[str]:
    from query.text import STOPWORDS

    return {w for w in tokens(text) if w not in STOPWORDS and len(w) > 1}


def _predicate_phrase(sentence: str) -> str:
    """The words after the first verb-like word of a sentence (at most six)."""
    m = re.search(r"\b(?:is|are|must|should|can|cannot|can't|only|needs?|requires?|has|have"
                  r"|uses?)\s+((?:[\w'./>+-]+\s*){1,6})", sentence)
    return m.group(1).strip(" .,;") if m else " ".join(sentence.split()[:6]).strip(" .,;")
