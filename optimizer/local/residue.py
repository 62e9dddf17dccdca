"""Conversational residue: the parts of a correction that are not part of its fact.

A user writes to a person, not to a knowledge base. Around the fact there is talk: an
acknowledgement ("Thanks for the quick answer, but ..."), the writer's own story ("I
pasted it into my migration and the review check rejected it"), an opinion ("I think
it makes sense"), a label pointing at what follows ("For the next person: ..."), an
elliptical reply to the question ("Not on a Friday."), a verdict with nothing in it
("Our guideline is different"), or a request to the assistant ("better to show that
one"). None of it belongs in a nugget body, which every future user's generator reads as
fact. This module removes such clauses from a claim sentence, by what the clause is
(who its subject is, what it names, whether it states a rule), not by the phrases one
benchmark uses (docs/architecture.md, "Nugget quality").

A clause that names a concrete item (a number, path, key combination, address,
identifier) is never removed as residue: when in doubt, the fact stays and a reviewer
edits the wording.
"""

from __future__ import annotations

import re

from optimizer.claims import (
    ATTITUDE_START,
    EMOJI,
    EVALUATIVE,
    INTENSIFIERS,
    IRREGULAR_PAST,
    MODALS,
    POLICY,
    REPAIR_CUE,
    REPAIR_VALUE,
    SPEECH_VERBS,
    STRONG_KINDS,
    WORD_NUMBER,
    content_stems,
    english_word,
    items,
    named_take_backs,
    negated,
    number_value,
    past_tense,
    repaired_value,
    scrapped_spans,
    statement_taken_back,
    strip_discourse,
    tokens,
    value_unit,
)
from optimizer.lexicon import IMPERATIVE
from query.text import STOPWORDS

#: Words that acknowledge or answer the previous turn rather than state anything.
ACKNOWLEDGEMENTS = frozenset("""thanks thank thx ty cheers appreciate appreciated ok okay
fine sure right great nice good close almost ha haha hah heh lol yes yeah yep yup well
hmm wow true fair agreed gotcha understood alright cool indeed exactly correct careful
beware mostly partly partially half""".split())

#: Nouns and fillers of talk about the conversation itself.
_CONVERSATION = frozenset("""answer answers reply replies response responses help tip tips
suggestion suggestions explanation info information pointer pointers try effort idea
attempt quick fast prompt anyway though much lot lots very so really for you your that
this it the a an and is was that's it's as always again all in general mostly partly
kind sort of far point""".split())

#: Words that put a clause in the organisation's scope: with one, a first-person clause
#: states a rule ("I've disabled it on all laptops"), not the writer's story.
_SCOPE = frozenset("""we we're we've our ours all every each everyone everybody nobody
anyone anybody company corporate organisation organization org policy staff team teams
users department site sites office offices fleet""".split())

_FIRST_PERSON = frozenset("""i me my mine myself i'm i've i'd i'll""".split())

#: Verbs by which a clause points at itself or at the assistant's answer ("I write it
#: here for others", "better to show that one", "don't suggest this to people").
_POINTING_VERBS = SPEECH_VERBS | frozenset("""show showing shown share sharing post posting
suggest suggesting suggested recommend recommending recommended propose proposing""".split())
_DEICTIC = frozenset("""this that it these those one""".split())
#: Who or where a pointing clause is aimed at, or the modality of advice to the assistant.
_ADDRESSEES = frozenset("""here people others everyone anyone users user person next
better best please don't stop never again instead future""".split())
#: The organisation as a subject: a past-tense first-person clause with one of these is
#: a decision reported, not the writer's story ("I moved us to WireGuard last year, we
#: no longer run OpenVPN").
_ORGANISATION = frozenset("""we we're we've our ours us company corporate organisation
organization org policy staff team teams users department everyone everybody nobody
it-security""".split())

#: Nouns that a label before a colon ends with when it only announces what follows
#: ("For the next person:", "Our setup is like this:", "There is an easier way:").
_CATAPHORIC = frozenset("""this these following way person people others everyone record
note fyi tip trick deal thing things answer fix solution story reminder""".split())

_SEPARATORS = re.compile(
    r"(\s*:\s+|\s*;\s+|(?:\.{3}|\u2026)\s*(?=(?:but|and|so|though|because)\s)|\s+[\u2014\u2013]\s+|\s+-{1,2}\s+|,\s+(?:and\s+(?:then\s+)?|so\s+|but\s+|"
    r"which is why\s+|then\s+)?|\s+(?:and then|which is why|so that's why)\s+)",
    re.IGNORECASE)

_LEAD = re.compile(r"^(?:and|so|but|then|which is why|so that's why|though|also|yeah|yep|yup)\s+"
                   r"(?=[a-z])", re.IGNORECASE)
#: A clause left over from a frame ("I was given to understand -- aside -- that the
#: laptops ..."): "that" before its own subject is a conjunction, never the subject. (A
#: demonstrative "that" is followed by a verb or a noun: "That fails", "That switch".)
_COMPLEMENTIZER = re.compile(
    # ("that at Rotamo engineers do not ...": a scope before the subject)
    r"^that\s+(?=(?:at|in|on|for|from|since|after|before|during|under|per)\s+[A-Z0-9])|"
    r"^that\s+(?=(?:the|a|an|our|your|their|its|his|her|all|every|each|no|some|any|it|they|"
    r"we|you|he|she|there|these|those|this)\s|(?:[a-z][\w-]*\s+)?[a-z][\w-]*[^\Wsuia]s\s+"
    r"(?:[\w'-]+\s+){0,6}?(?:are|have|were|do|don't|aren't|haven't|weren't)\s)", re.IGNORECASE)
#: The writer's whereabouts with the subject left out: "Just back from the 8th grade
#: trip", "Back from leave, so ...", "Only just got back from site".
_BACK_FROM = re.compile(r"^(?:(?:i'm|i am|we're|we are|i've|we've)\s+)?(?:only\s+)?(?:just\s+)?"
                        r"(?:got\s+|come\s+|came\s+)?back\s+(?:from|off)\s", re.IGNORECASE)
#: "we got it back ourselves in two minutes": the team telling what it did once (a
#: number in it is the story's).
_WE_PAST = re.compile(r"^(?:so\s+|and\s+)?we\s+(?:\w+ly\s+)?(?:got|had|did|found|managed|"
                      r"fixed|sorted|spent|took|ended up)\b", re.IGNORECASE)
#: The West African clause-final particle "o" ("not to connect directly at all o."): an
#: emphasis, not a word of the fact. (Not after words that name a key or letter.)
# (nor in a key sequence: "Right Alt then / then o, for ł ...")
_PARTICLE_O = re.compile(r"(?<![Pp]ress)(?<![Tt]ype)(?<![Kk]ey)(?<![Ll]etter)(?<!then)(?<![/+])"
                         r"\s+o(?=\s*[.!,;]|\s*$)")

# Someone else's words reported as the fact: "My colleague told me (that) X", "I was told
# X", "It turns out X". The frame goes, X stays.
#: A closing clause on what the bot should do: "X, so I'd rather the bot didn't suggest
#: anything else."
BOT_TAIL = re.compile(r",?\s+(?:so|and)\s+(?:i|we)(?:'d|\s+would)\s+(?:much\s+)?(?:rather|prefer)"
                       r"\s+(?:that\s+)?(?:the\s+(?:bot|assistant|chatbot|ai)|you)\b[^.;!?]*[.!]?$",
                       re.IGNORECASE)
#: Someone's words or findings reported as the fact: a verb of saying or finding out,
#: then (at most) when or where it was said, then "that".
_REPORTED = re.compile(
    r"^(?:[^.;:?!]{0,200}?\s)?(?P<verb>(?:said|told\s+(?:me|us)|pointed\s+out|explained|"
    r"mentioned|noted|stressed|clarified|made\s+(?:it\s+)?clear|reminded\s+(?:me|us)|agreed|"
    r"decided|confirmed|found\s+out|learn(?:ed|t)|warned\s+(?:me|us))(?:\s+to\s+(?:me|us))?"
    r"(?:\s+(?:at|in|on|during|after|before|last|this|yesterday|today|when)\b[^.;:?!]{0,60}?)?"
    r"|what\s+(?:i|we)\s+(?:found\s+out|learn(?:ed|t)|was\s+told|were\s+told|heard)\b"
    r"[^.;:?!]{0,60}?\s+is)\s+that\s+(?=\S)", re.IGNORECASE)
#: The answer (or the writer's reader) as the one who said it: "You said that X".
_ANSWER_SUBJECT = re.compile(r"(?:^|\s)(?:you|it|the\s+(?:answer|bot|assistant|reply|chatbot|"
                             r"article|page|docs?|manual))\s+(?:also\s+|just\s+|clearly\s+)?$",
                             re.IGNORECASE)
_FRAME = re.compile(
    # (not the answer's own words: "It told me to install X" reports the answer)
    r"^(?!(?:it|you|the\s+(?:answer|bot|assistant|reply|chatbot))\s)"
    r"(?:(?:my|our|a|one|the|some)\s+)?(?:[\w-]+\s+){0,2}?(?:told|tell|tells|said|says|"
    r"explained|confirmed|mentioned)\s+(?:to\s+)?(?:me|us)\s+(?:that\s+)?(?=\S)|"
    r"^(?:i|we)\s+(?:was|were|have been|'ve been|got)\s+told\s+(?:that\s+)?(?=\S)|"
    # The writer naming themself before the message: "this is Rahul dictating, X"
    r"^(?:this\s+is|it's)\s+(?-i:[A-Z][\w'-]+)(?:\s+(?-i:[A-Z][\w'-]+))?\s+(?:dictating|speaking|"
    r"calling|writing)\b,?\s+(?=\S)|"
    # What the writer knows, said as such: "(Because) as far as I know X", "To my
    # knowledge, X"
    r"^(?:because\s+)?(?:as\s+far\s+as\s+(?:i|we)\s+know|to\s+(?:my|our)\s+knowledge)"
    r"(?:\s+that)?,?\s+(?=\S)|"
    # A polite frame: "May I respectfully add our local arrangement: X", "I should be most
    # grateful if you would also note that X"
    r"^(?:may|might|can|could)\s+i\s+(?:(?:respectfully|kindly|just|also)\s+)*(?:add|mention|"
    r"point\s+out|note|suggest)\b[^:.!?]{0,60}:\s*(?=\S)|"
    # "With the greatest respect to the author, may I kindly point out that X"
    r"^(?:with\s+(?:the\s+greatest|all\s+due|the\s+utmost|great)\s+respect(?:\s+to\s+[^,]{1,40})?"
    r",\s*)?(?:may|might|can|could)\s+i\s+(?:(?:respectfully|kindly|just|also|perhaps)\s+)*"
    r"(?:point\s+out|mention|note|add|remind\s+(?:you|everyone))\s+that\s+(?=\S)|"
    r"^i\s+(?:should|would)\s+be\s+(?:most\s+|very\s+|most\s+)?grateful\s+if\s+you\s+(?:would|"
    r"could)\s+(?:also\s+)?(?:note|add|mention|record)\s+(?:that\s+)?(?=\S)|"
    # "Please tell people that X", "Do remind everyone that X": X is what to pass on
    r"^(?:please\s+|do\s+)?(?:tell|remind|let)\s+(?:people|everyone|everybody|users|staff|"
    r"folks|them|colleagues|the\s+team|others|new\s+starters)(?:\s+know)?\s+that\s+(?=\S)|"
    # A note on what the answer should have said: "This should say the timeout is set
    # per role", "The answer needs to mention that X".
    r"^(?:this|that|it|the\s+answer|your\s+answer|the\s+reply)\s+(?:should|ought\s+to|needs\s+"
    r"to|must)\s+(?:really\s+|also\s+)?(?:say|read|mention|state|explain|point\s+out)\s+"
    r"(?:that\s+)?(?=\S)|"
    # "Having tried twice, I was at length informed by a clerk from IT that X"
    r"^(?:[^.;]{0,200}?,\s*)?(?:i|we)\s+(?:was|were|am|are|have been|'ve been|got)\s+"
    r"(?:\w+\s+){0,3}?"
    r"(?:told|informed|advised|assured|notified|reminded)\s+(?:[^.;]{0,100}?\s+)?that\s+(?=\S)|"
    # "She also said X", "Marisol said that X"
    # ("I checked with Gareth this morning, and he confirmed that X")
    r"^(?:[^.;]{0,200}?(?:,\s*|\s+)(?:and|but|so)\s+)?(?:she|he|they|(?-i:[A-Z][a-z]+))\s+(?:also\s+)?"
    r"(?:said|says|confirmed|explained|mentioned)\s+(?:that\s+)?(?=\S)|"
    # "I checked with Rosa and she was very clear that X", "Gethin came to the rescue
    # and showed us that X", "Arjun reminded me that X"
    r"^(?:[^.;]{0,200}?(?:,\s*|\s+)(?:and|but|so)\s+)?(?:she|he|they|(?-i:[A-Z][a-z]+))\s+"
    r"(?:also\s+)?(?:(?:was|were|is|are)\s+(?:\w+\s+)?(?:clear|adamant|firm|explicit|certain|"
    r"sure)|(?:showed|reminded|assured|warned|taught)\s+(?:me|us|them|everyone))\s+that\s+(?=\S)|"
    r"^(?-i:[A-Z][a-z]+)\s+[^.;]{0,80}?\s+and\s+(?:showed|reminded|assured|warned|taught|told)\s+"
    r"(?:me|us|them|everyone)\s+that\s+(?=\S)|"
    # "The thing to know is that X", "The catch is that X"
    r"^the\s+(?:main\s+|key\s+|important\s+|only\s+)?(?:thing|point)\s+to\s+(?:know|remember|"
    r"understand|note|keep in mind)\s+(?:here\s+)?is\s+(?:that\s+)?(?=\S)|^the\s+(?:catch|"
    r"thing|trick|point|gotcha)\s+is\s+that\s+(?=\S)|"
    # "Raj on the helpdesk confirmed that X", "Priya from Library Systems said X"
    r"^(?!(?i:someone|somebody|anyone|anybody|everyone|nobody|people|some|one|a|an|the|"
    r"this|that|my|our|your|their)\b)(?-i:[A-Z][a-z]+)\s+(?:on|from|in|at|of)\s+(?:the\s+)?(?:[\w&'-]+\s+){1,3}?(?:also\s+)?"
    r"(?:said|says|confirmed|explained|mentioned)\s+(?:that\s+)?(?=\S)|"
    # "We agreed at the managers' meeting in September that X"
    r"^(?:we|they|management|the board|it)\s+(?:\w+\s+)?(?:agreed|decided|confirmed|announced|"
    r"ruled)\s+(?:[^.;]{0,80}?\s+)?that\s+(?=\S)|"
    # "Staff need to know that X", "Please make sure people know that X"
    r"^(?:please\s+)?(?:make sure|ensure|let)\s+(?:that\s+)?(?:the\s+|all\s+|our\s+|your\s+)?"
    r"[\w-]+(?:\s+[\w-]+)?\s+(?:know|knows|are aware|is aware|understand|understands)\s+"
    r"(?:that\s+)?(?=\S)|^(?:staff|people|everyone|everybody|users|colleagues|new starters|"
    r"you)\s+(?:all\s+)?(?:need|needs|should|must|ought)\s+to\s+know\s+(?:that\s+)?(?=\S)|"
    # "I must say, X", "I'd add that X", "I should mention that X"
    # ("I must gently point out, though, that X", "I just wanted to flag that X")
    r"^(?:thanks?(?: you)?(?:\s+for\s+[^,]{1,40})?,\s*(?:but|though|although)\s+)?"
    r"(?:i|we)\s+(?:\w+ly\s+|just\s+|also\s+)?(?:must|have to|should|would|'d|will|'ll|might|"
    r"want to|wanted to|need to|would like to|'d like to)\s+(?:\w+ly\s+|just\s+|also\s+)?"
    r"(?:say|add|admit|mention|point out|note|flag|stress|clarify|remind you|let you know)\s*,?"
    r"\s*(?:(?:though|however|also)\s*,\s*)?(?:that\s+)?(?=\S)|"
    r"^(?:i|we)\s+(?:heard|learned|learnt|found out|noticed|realised|realized|checked)\s+"
    r"that\s+|^(?:it\s+)?turns out\s+(?:that\s+)?|"
    # "I rang Practice Systems and it turns out (that) X": X, found out by asking
    r"^(?:(?:anyway|so)\s*,?\s+)?(?:i|we)\s+(?:rang|called|phoned|asked|emailed|messaged|"
    r"checked\s+with|spoke\s+to|talked\s+to)\s+[^.;]{1,60}?\s+and\s+(?:it\s+)?"
    r"turn(?:s|ed)\s+out\s+(?:that\s+)?(?=\S)|"
    # "I add also that X", "We'd stress that X" (without a modal too)
    r"^(?:i|we)\s+(?:also\s+)?(?:add|note|stress|mention|point out)\s+(?:also\s+)?"
    r"(?:that\s+)?(?=\S)|"
    # Memo and letter frames: "Please be advised that X", "It has been decided that X",
    # "I am writing to let you know that X", "..., but I thought you ought to know that X".
    r"^kindly\s+note\s+(?:that\s*,?\s*)?(?=\S)|"
    # "The way it works here is X", "How it works for us: X"
    r"^(?:the\s+way\s+it\s+works|how\s+it\s+works)\s+(?:here|for us|at\s+\w+)\s*(?:is\s+"
    r"(?:that\s+)?|:\s*)(?=\S)|"
    r"^(?:please\s+|kindly\s+)?(?:be\s+(?:advised|informed|aware)|note)\s*(?:that\s*,?\s*|,\s*)"
    r"(?=\S)|^it\s+has\s+(?:now\s+)?been\s+(?:decided|agreed|confirmed|announced)\s+(?:that\s+)?"
    r"(?=\S)|^(?:i\s+am|i'm|we\s+are|we're)\s+writing\s+to\s+(?:let\s+you\s+know|inform\s+you|"
    r"say|tell\s+you)\s*(?:that\s+)?(?=\S)|^(?:[^.;]{0,200}?,\s*(?:but|and|so)\s+)?(?:i|we)\s+"
    r"(?:thought|think|felt|feel)\s+(?:you|people|everyone|the team)\s+(?:ought to|should|"
    r"might want to|would want to|need to|needed to)\s+know\s+(?:that\s+)?(?=\S)",
    re.IGNORECASE)
# Agreeing with part of the answer: "(You're) right that X, but Y" publishes "X, but Y".
# (For deciding whether the message is a correction the frame stays: agreement alone,
# "Correct that it's install time", says nothing new.)
_AGREE = re.compile(
    r"^(?:(?:you're|you are|you were|that's|it's|it is)\s+)?(?:right|correct|true|agreed)\s+"
    r"that\s+(?=\S)", re.IGNORECASE)
# "The reason they gave me is that X": the relative clause about who said it goes.
_GIVEN_BY = re.compile(
    r"\s+(?:that\s+)?(?:they|he|she|someone|somebody|people)\s+(?:gave|told|sent|showed|"
    r"offered)\s+(?:me|us)(?=\s+(?:is|was|are|were)\b)", re.IGNORECASE)
_ASIDE = re.compile(r",\s*(?:though|however|anyway|honestly|frankly|sorry)\s*,|"
                    # "(I use it in the e-learning player all the time)": the writer's habit
                    r"\s*\(\s*(?:i|i'm|i've|i'd)\s+[^()]{3,120}\)|"
                    # "(sorry typing on phone, autocorrect keeps ...)": an apology aside
                    r"\s*\(\s*(?:sorry|apologies|excuse)\b[^()]{0,120}\)|"
                    # ", as I understand it:", "(last time that was 11 minutes of ...)"
                    r",\s*as\s+(?:i|far\s+as\s+i)\s+(?:understand|know)(?:\s+it)?\s*(?=[,:])|"
                    r"\s*\((?:the\s+)?(?:last\s+time|once|yesterday|last\s+week|last\s+month)\b"
                    r"[^)]*\)|"
                    # "(that one bit us on kvm03)": a story in brackets
                    r"\s*\((?:that|this|which|it)?\s*(?:one\s+)?(?:bit|caught|burned|burnt|got)"
                    r"\s+(?:us|me)\b[^)]*\)|"
                    # "(the one that cost us the front page)": what it cost the writer
                    r"\s*\((?:the\s+one\s+)?(?:that|which|when\s+it)\s+(?:cost|lost|took|"
                    r"wasted|ate|ruined|killed)\s+(?:us|me)\b[^)]*\)", re.IGNORECASE)
# A copula with nothing after it but a verdict: "Our guideline is different", "that was
# the real problem", "Not a bug".
_EMPTY_VERDICT = re.compile(
    r"^(?:[\w'.-]+\s+){0,6}?(?:is|are|was|were|'s)\s+(?:(?:a|the|just|simply|plain|flat|"
    r"dead|quite|very|also|kind of|a bit|somewhat|\w+ly)\s+)*(?:different|"
    r"wrong|incorrect|outdated|out of date|old|stale|obsolete|not (?:right|correct|true|accurate|"
    r"the case|a bug|up to date)|"
    r"(?:not\s+)?a bug|(?:the\s+)?(?:real|actual|whole|main)\s+(?:problem|issue|cause|"
    r"reason|culprit))\s*[.!]*$", re.IGNORECASE)
# "Other way round", "Order's backwards": the answer had it reversed.
_WRONG_WAY = re.compile(r"^(?:(?:the\s+)?(?:other|wrong|opposite)\s+way\s+(?:a)?round|"
                        r"(?:(?:the|your|that|this)\s+)?(?:order|steps|sequence|it|that|this)"
                        r"(?:'s|\s+is|\s+are|\s+was|\s+were)\s+(?:all\s+)?"
                        r"(?:backwards|reversed|upside down|the (?:wrong|other) way (?:a)?round))"
                        r"(?:\s+(?:for|when|on|in|with)\s+[\w -]{1,30})?$", re.IGNORECASE)
# "That's not how we have it set up", "This is not the correct process", "That's only
# half of it": the answer judged as a whole, nothing of the world named.
_NOT_HOW = re.compile(
    r"^(?:that|this|it)(?:'s|\s+is|\s+was)\s+(?:not|only|just|not\s+quite)\s+(?:(?:how|what|"
    r"where|when|why)\s+(?:we|you|it|things|they|i|people|the\s+\w+)\b[^,;:]{0,40}|half\s+"
    r"(?:of\s+)?(?:it|the\s+(?:story|answer|picture|truth))|the\s+(?:\w+\s+)?(?:correct|right|"
    r"proper|usual|whole|full|real|current)\s+(?:process|way|procedure|approach|story|answer|"
    r"picture|steps?|method))\s*[.!]*$", re.IGNORECASE)
# "I'm not sure that's quite right, I'm afraid", "I don't think that's correct".
_POLITE_VERDICT = re.compile(
    r"^(?:i'm|i am)\s+(?:not sure|afraid)\s+(?:that|this|it)(?:'s|\s+is)\s+(?:quite\s+|"
    r"entirely\s+|100%\s+)?(?:right|correct|accurate|true|the case)(?:,?\s+i'm afraid)?$|"
    r"^i\s+(?:don't|do not)\s+think\s+(?:that|this|it)(?:'s|\s+is)\s+(?:quite\s+)?(?:right|"
    r"correct|accurate|true)$|^i'm afraid$|"
    # "The rest of the steps are right", "everything else is fine": the rest of the answer
    r"^(?:(?:but|and)\s+)?(?:the\s+rest(?:\s+of\s+(?:the|it|your|that|this)(?:\s+\w+)?)?|"
    r"everything\s+else|all\s+the\s+rest|the\s+other\s+(?:steps|parts|bits))\s+"
    r"(?:is|are|was|were|looks?|seems?)\s+(?:\w+\s+)?(?:right|rigth|correct|fine|ok|okay|good|"
    r"accurate|spot on)$", re.IGNORECASE)
_OLD_VALUE = re.compile(r"^\d[\w.:/%+-]*(?:\s+[a-z]+)?\s+(?:was|is)\s+(?:the\s+)?(?:old|previous|"
                        r"former|outdated|wrong)\s+(?:value|setting|number|limit|figure|one)$",
                        re.IGNORECASE)
_OTHER_DOUBT = re.compile(r"^(?:no idea|not sure|dunno|can't say)\s+about\s+(?:the\s+)?(?:rest|"
                          r"others?|other\s+\w+)\b|^i\s+(?:might|may|could)\s+have\s+(?:the\s+)?"
                          r"[\w\s-]{1,30}\s+wrong$", re.IGNORECASE)
_GUESS = re.compile(r"\b(?:probably|maybe|perhaps|i think|i guess|i suppose|might be)\b",
                    re.IGNORECASE)
_PLUS_ONE = re.compile(r"^\+1\b(?:\s+(?:to|on)\s+.*)?$")
# "Because Debian is famous for never rotating anything": a retort with no main clause.
_RETORT = re.compile(r"^because\s+\w", re.IGNORECASE)
# Time spent by the writer: "it cost us a day to find out", "took me hours".
_EFFORT = re.compile(r"\b(?:cost|took|takes|wasted|spent|lost)\s+(?:me|us)\b|"
                     r"\b(?:i|we)\s+(?:spent|wasted|lost)\b", re.IGNORECASE)
# "In the end it turns out (that) X", "Eventually, X": how the writer got there.
_OUTCOME = re.compile(r"^(?:in the end|eventually|finally|at last|as it turns out)\s*,?\s*"
                      r"(?:it\s+)?(?:turn(?:s|ed)\s+out\s+(?:that\s+)?)?", re.IGNORECASE)
# "It isn't.", "That doesn't.": a reply that only negates the question.
_BARE_NEGATION = re.compile(r"^(?:it|that|this|they)\s+(?:isn't|is not|wasn't|doesn't|does not|"
                            r"won't|can't|aren't|don't|weren't)(?:\s+(?:it|them|that|this|so|"
                            r"the (?:case|problem|issue|cause)))?\s*$|"
                            # "It's not the port", "That isn't the printer": not the cause
                            r"^(?:it|that|this)(?:'s|\s+is|\s+was)\s+not\s+(?:the|a|an|your)\s+"
                            r"[a-z][\w-]*$|^(?:it|that|this)\s+(?:isn't|wasn't)\s+(?:the|a|an|your)\s+"
                            r"[a-z][\w-]*$", re.IGNORECASE)
_HEDGE = re.compile(r"\b(?:i|we)\s+(?:think|guess|believe|suppose|feel|reckon|hope|wonder)\b|"
                    r"\b(?:imo|imho|in my (?:opinion|view|experience))\b", re.IGNORECASE)
_HEDGE_ASIDE = re.compile(r"^(?:ymmv|your mileage may vary|(?:just\s+)?my (?:2|two) cents|"
                          r"no guarantees?|don't quote me)\b", re.IGNORECASE)
#: Past forms that are also the base form: "Set the city by hand" is an instruction.
_BASE_FORMS = frozenset("""set put cut hit let read quit shut split cost hurt spread
bet""".split())
# ("left projector set as Primary Display": "left" before a bare noun is the side)
_DETERMINERS = frozenset("""the a an my our your his her their its it them this that these
those all some""".split())
_PREPOSITIONS = frozenset("""by from in on at to into onto under with via through for as per
after before during until within across over""".split())
#: Verbs in the present: with one, a clause that opens with a participle ("Deleted files
#: are purged") states how things are, not what the writer did.
_PRESENT = frozenset("""is are am stay stays get gets has have can must will need needs go
goes come comes remain remains show shows live lives run runs use uses mean means""".split())
_NOT_START = re.compile(r"^not\b(?!\s+(?:all|every|everyone|everything|many|much|even|only|"
                        r"one|a single|any|every|allowed|permitted|supported|recommended|"
                        r"available|needed|required|possible|installed|enabled)\b)",
                        re.IGNORECASE)

# A sign-off: "- Ms. Kowalski", "Mr. Haddad (Science, Lakeside MS)".
_SIGNATURE = re.compile(r"^[-\u2013\u2014~]*\s*(?:mr|mrs|ms|miss|dr|prof)\.?\s+[A-Z][\w'-]+"
                        r"(?:\s+[A-Z][\w'-]+)?\s*(?:\([^)]*\))?\s*[.!]*$", re.IGNORECASE)
# A person's name with their organisation and nothing else, after a label: "Handover
# notes - Tom Hale (Halewire IT)" (as a sentence's first clause it may be a setting's name).
_BYLINE = re.compile(r"^(?-i:[A-Z][a-z'-]+(?:\s+[A-Z][a-z'-]+){1,2})\s*\([^)]{2,40}\)\s*[.!]*$")
# "Hi all", "Hello po", "Hey there", "Dear DS team", "Good morning everyone".
#: Greetings, also those of the languages people often mix into work English.
_HELLO = (r"(?:hi|hello|hey|hiya|dear|greetings|good (?:morning|afternoon|evening)|morning|"
          r"afternoon|bonjour|bonsoir|salut|hola|buenos d[ií]as|buenas(?: tardes| noches)?|hallo|"
          r"guten (?:morgen|tag|abend)|moin|servus|hoi|goedemorgen|goedemiddag|ciao|buongiorno|"
          r"ol[aá]|bom dia|boa tarde|hej|cze[sś][cć]|"
          # greetings of other languages people mix into work English
          r"ahoj|dobr[yý] den|szia|sziasztok|j[oó] napot|hei|moi|terve|bun[aă](?: ziua)?|"
          r"xin ch[aà]o|ch[aà]o|jambo|habari|hujambo|kumusta|magandang (?:umaga|hapon)|"
          r"marhaba|salam|ahlan|shalom|pryvit|vitayu|merhaba|selam|namaste|annyeong(?:haseyo)?)")
_GREETING = re.compile(r"^" + _HELLO + r"\b(?:\s+[\w&.'-]+){0,3}$", re.IGNORECASE)
# "hope everyone had a lovely Easter", "hope you're well", "sorry in advance".
_WELL_WISHING = re.compile(r"^(?:i\s+)?(?:hope|trust)\s+(?:you|you're|everyone|everybody|all|"
                           r"this finds)\b|^sorry in advance\b|^have a (?:good|great|nice|"
                           r"lovely)\b", re.IGNORECASE)
# Kind words to the asker: "good question", "don't worry", "everyone trips over this one".
_REASSURANCE = re.compile(r"^(?:(?:a\s+)?(?:good|great|fair|excellent)\s+question|"
                          r"(?:don't|do not)\s+"
                          r"worry|no\s+worries|(?:everyone|everybody|we\s+all|all\s+of\s+us)\s+"
                          r"(?:\w+\s+){0,2}?(?:trips?|falls?|gets?\s+caught|gets?\s+bitten|"
                          r"struggles?|stumbles?|makes?\s+(?:this|that|the same))\b)",
                          re.IGNORECASE)
# An offer of help: "ping me if you want to pair", "happy to walk you through it if you like".
_OFFER = re.compile(r"^(?:(?:just\s+)?(?:ping|message|dm|call|ask|email|poke|grab|give)\s+me\b|"
                    r"(?:i'm\s+|i\s+am\s+)?(?:happy|glad)\s+to\s+\w+|(?:let\s+me\s+know|shout)\b)",
                    re.IGNORECASE)
_DISCLAIMER = re.compile(r"^(?:i'm|i am)\s+(?:not|no)\s+(?:really\s+)?(?:a|an|much of a)\s+"
                         r"(?:[\w-]+\s+){0,2}(?:person|expert|guy|girl|specialist|developer|"
                         r"admin|dba|techie|engineer)\b|^sorry\s+if\s+i\b", re.IGNORECASE)
_SIGNING_OUT = re.compile(r"^(?:(?:right|ok(?:ay)?|anyway|well)\s*,?\s*)?(?:i'm\s+)?off\s+to\s+"
                          r"(?:find|get|grab|make|the)\b|^(?:over\s+and\s+)?out$|^closing$|"
                          r"^(?:ticket\s+)?(?:closed|resolved)$", re.IGNORECASE)
#: What the writer has already done or checked: "I have already raised ticket with IT",
#: "I have checked with chage -l on my laptop".
_DONE_ALREADY = re.compile(r"^(?:i|we)\s+(?:have|'ve|had|'d)\s+(?:already\s+|also\s+|just\s+)?"
                           r"(?:raised|opened|logged|filed|created|sent|emailed|checked|"
                           r"verified|tested|confirmed|asked|double-checked)\b", re.IGNORECASE)
#: "I am sick of finding ...", "we're fed up with ...".
_NOT_SURE_OF_REST = re.compile(r"^(?:um,?\s+|well,?\s+)?(?:(?:i'm|i am)\s+)?(?:honestly\s+)?"
                               r"not\s+(?:100%\s+|entirely\s+|totally\s+|really\s+)?sure\b|"
                               r"^i\s+(?:might|may|could)\s+be\s+wrong\b|^(?:i|we)\s+(?:don't|"
                               r"do not)\s+(?:really\s+)?(?:get|understand|know)\s+(?:how|why|"
                               r"what|whether|if)\b", re.IGNORECASE)
_I_CHECKED = re.compile(r"^(?:(?:but|and|so)\s+)?(?:(?:on|in|at|for)\s+[^,]{1,40}?\s+)?(?:i|we)\s+"
                        r"(?:actually\s+|just\s+|also\s+)?(?:checked|tested|verified|looked)"
                        r"(?:\s+(?:it\s+)?(?:myself|personally))?\b(?!\s+(?:that|with)\b)",
                        re.IGNORECASE)
_FED_UP = re.compile(r"^(?:i|we)(?:'m|'re|\s+am|\s+are)\s+(?:so\s+|really\s+)?(?:sick|tired|"
                     r"fed up|weary)\s+(?:of|with)\b", re.IGNORECASE)
#: Requests in Indian business English: "kindly revert back", "kindly do the needful".
_KINDLY = re.compile(r"\bkindly\s+(?:revert|reply|respond|let\s+me\s+know|advise|do\s+the\s+"
                     r"needful|confirm|acknowledge)\b", re.IGNORECASE)
_HOPE = re.compile(r"^(?:i\s+|we\s+)?(?:really\s+|do\s+)?hope\b(?!\s+(?:is|was)\b)",
                   re.IGNORECASE)
# "Just a quick one from us", "small correction", "just to add", "fun fact", "side note".
_ANNOUNCING = re.compile(
    r"^(?:(?:just|only)\s+)?(?:a\s+)?(?:quick|small|tiny|minor|little|brief)\s+(?:one|note|"
    r"correction|update|fix|thing|point|addition|heads-up)\b(?:\s+(?:from|here|for)"
    r"\b.*)?$|^(?:just\s+)?to add(?:\s+\w+)?$|^(?:fun fact|pro tip|protip|side note|"
    r"one more thing|also worth knowing|for the record|for reference|for info)$",
    re.IGNORECASE)
# "Yes they did", "It does", "No it isn't": an answer to a question with nothing else.
_AUX_REPLY = re.compile(r"^(?:(?:yes|yeah|yep|no|nope|indeed)\s*,?\s+)?(?:it|they|he|she|we|"
                        r"that|this|you|there)\s+(?:do|does|did|is|are|was|were|can|could|will|"
                        r"would|has|have|had)(?:n't| not)?(?:\s+(?:indeed|too|though))?$",
                        re.IGNORECASE)
# "Made no difference, obviously", "Didn't help", "No luck": what a try came to.
_NO_EFFECT = re.compile(r"^(?:(?:it|that|this|which)\s+)?(?:made|makes|make) no difference\b|"
                        r"^no (?:luck|joy|dice)\b|^(?:it\s+|that\s+)?did nothing\b|^(?:it\s+|"
                        r"that\s+)?(?:didn't|did not) (?:help|work|change anything)\b",
                        re.IGNORECASE)
_EMOJI_RUN = re.compile(EMOJI.pattern + r"\s*")  # the emoji of claims.py and the space after
_NOTE = re.compile(r"^(?i:note|nb|remember|important)\s+(?=[A-Z])")


#: The writer's first person as the reader's second ("my laptop" -> "your laptop").
SECOND_PERSON = {"i": "you", "me": "you", "my": "your", "mine": "yours", "myself": "yourself",
         "i'm": "you're", "i've": "you've", "i'd": "you'd", "i'll": "you'll"}


def _strong(text: str) -> bool:
    return any(i.kind in STRONG_KINDS for i in items(text))


def reply_scope(clause: str) -> str:
    """The scope a subjectless reply names ("Can't go that high on company laptops" ->
    "On company laptops"), "" when it is not such a reply or names none."""
    c = clause.strip(" ,;:.")
    if not _SUBJECTLESS_REPLY.match(c):
        return ""
    m = _REPLY_SCOPE.search(c)
    return f"{m.group(1)[0].upper()}{m.group(1)[1:]}" if m else ""


def scoped(scope: str, clause: str) -> str:
    """``clause`` under ``scope``: "On company laptops" + "The delay is capped" -> "On
    company laptops, the delay is capped" (a first word that is only capitalised as the
    sentence start goes to lower case; "Priya", "GNOME" stay)."""
    first = clause.split(maxsplit=1)[0]
    if first[1:].islower() and english_word(first.lower()):
        clause = clause[0].lower() + clause[1:]
    return f"{scope}, {clause}"


def is_greeting(text: str) -> bool:
    """"Good morning", "Hi all", "Dear colleagues": a greeting and nothing else."""
    return bool(_GREETING.match(text.strip()))


def acknowledgement(text: str) -> bool:
    """A clause that only acknowledges the previous turn: it opens with an
    acknowledgement ("Thanks", "Fine", "Ha", "Close") and holds nothing but words about
    the conversation and judgements ("Thanks for the quick answer")."""
    toks = tokens(text)
    if toks[:1] and toks[0] in ("you're", "that's", "it's", "you") and len(toks) <= 4:
        toks = toks[1:] if toks[0] != "you" else toks[2:]  # "You're half right"
    named = [i for i in items(text) if i.kind != "role" and not (
        i.kind == "name" and i.start == 0)]  # "Cheers" opens the clause: not a name
    if not toks or toks[0] not in ACKNOWLEDGEMENTS or len(toks) > 8 or named:
        return False
    allowed = ACKNOWLEDGEMENTS | _CONVERSATION | EVALUATIVE | INTENSIFIERS | {"here", "there"}
    return all(t in allowed for t in toks)


#: A reply whose subject is the answer's suggestion: "Can't go that high", "Won't work
#: like that here", "Doesn't help with this".
_SUBJECTLESS_REPLY = re.compile(r"^(?:can't|cannot|won't|doesn't|does not|isn't|wouldn't|"
                                r"didn't)\s+(?:\w+\s+){0,2}?(?:that|this|it|so)\b",
                                re.IGNORECASE)
_REPLY_SCOPE = re.compile(r"\b((?:on|for|in|at)\s+(?:the\s+|our\s+|all\s+|any\s+)?[\w-]+"
                          r"(?:\s+[\w-]+){0,2})\s*$", re.IGNORECASE)
_BARE_REPLY = frozenset("""please don't dont do not no nope nah never again just really
    definitely absolutely yes yeah yep sure ok okay unfortunately sadly afraid""".split())


def residue(clause: str, first: bool = True) -> str:
    """Why a clause of a claim sentence is talk rather than fact ("" when it is fact).

    ``first`` says whether the clause opens its sentence (an elliptical reply such as
    "Not on a Friday" is one only there)."""
    c = _LEAD.sub("", clause.strip(" ,;:.!")).strip()
    toks = tokens(c)
    if not toks:
        return "empty"
    strong = _strong(c)
    if first and acknowledgement(c):
        return "acknowledgement"
    if first and _GREETING.match(c) and not strong:
        return "a greeting"
    if _REASSURANCE.match(c) or (_OFFER.match(c) and re.search(r"\bif\s+(?:you|u)\b", c,
                                                                re.IGNORECASE)):
        return "a greeting"  # "good question, and don't worry", "ping me if you want to pair"
    if _SIGNING_OUT.match(c):
        return "a greeting"  # "Right, off to find coffee.", "Out.", "Closing."
    if (_WELL_WISHING.match(c) and not strong) or _HOPE.match(c):
        return "a greeting"  # ("Hope the coffee machine on 3 is fixed by now": a wish)
    if _ANNOUNCING.match(c) and not strong:
        return "a label"
    if first and _AUX_REPLY.match(c):
        return "elliptical reply"
    if (_EMPTY_VERDICT.match(c) or _WRONG_WAY.match(c) or _POLITE_VERDICT.match(c)
            or _NOT_HOW.match(c)) and \
            not strong:
        return "verdict"
    if re.match(r"^(?:we|i|they)\s+used\s+to\b", c, re.IGNORECASE) and not strong:
        return "the writer's own story or opinion"  # "we used to wait till morning"
    if first and _BACK_FROM.match(c):
        return "the writer's own story or opinion"  # "just back from the Leeds trip, so ..."
    if _OLD_VALUE.match(c):
        return "verdict"  # "60 was the old value": the value the repair replaced
    if first and _PLUS_ONE.match(c) and not _strong(c[2:]):
        return "acknowledgement"  # "+1 to what Elin said further up"
    if _NO_EFFECT.match(c) and not strong:
        return "verdict"
    if first and _NOT_START.match(c) and len(toks) <= 5 and not strong and not any(
            t in ("anymore", "longer", "since", "until", "yet") for t in toks):
        return "elliptical reply"
    if first and _SUBJECTLESS_REPLY.match(c) and not strong:
        return "elliptical reply"  # "Can't go that high on company laptops"
    if first and set(tokens(re.sub(r"\([^()]*\)", " ", c))) <= _BARE_REPLY and not re.search(
            r"(?<!\w)[\"'`‘“][^\"'`’”\n]+[\"'`’”](?!\w)", c):  # ("'yes' and '1'": values)
        return "elliptical reply"  # "Please don't (not tonight anyway)", "Nope!"
    if first and (_BARE_NEGATION.match(c) or re.fullmatch(
            r"(?i)no\s+need(?:\s+(?:for\s+(?:that|it|this)|to))?|(?:nope|nah),?\s+not\s+\w+", c)):
        return "elliptical reply"
    if re.match(r"^(?:i'm|i am|we're|we are)\s+(?:never|not always|not ever)\s+(?:\w+\s+)?"
                r"sure\b", c, re.IGNORECASE):
        return "the writer's own story or opinion"  # "I'm never quite sure with the new system"
    if toks[:2] == ["had", "to"] and len(toks) >= 4 and not items(c):
        return "the writer's own story or opinion"  # "had to ring tomasz from the court steps"
    if toks[0] in ("tried", "spent", "wasted") and len(toks) >= 3 and all(
            i.kind == "number" for i in items(c)):  # (what it was tried on may be a fact)
        return "the writer's own story or opinion"  # "Tried this for twenty minutes with ..."
    if len(toks) >= 3 and (toks[0] in IRREGULAR_PAST - _BASE_FORMS or (
            toks[0].endswith("ed") and len(toks[0]) > 4)) and toks[1] not in _PREPOSITIONS and \
            toks[1] not in _HOW_OFTEN and \
            not (toks[0] == "left" and toks[1] not in _DETERMINERS) and \
            not strong and not any(t in _SCOPE or t in _PRESENT for t in toks) and \
            not _states_rule(c):
        # "Tried this for twenty minutes", "swapped cables for an hour": the writer's
        # story with its subject left out. "Deleted files are purged nightly" has a verb
        # in the present; "managed by Ansible", "deducted from salary", "rotated daily by
        # logrotate" are participles.
        return "the writer's own story or opinion"
    if _NOT_SURE_OF_REST.search(c):
        return "a guess"  # "I'm not 100% sure how the rest of it works", "Not sure if ..."
    if _I_CHECKED.match(c):
        return "the writer's effort"  # "on the servers I checked myself with `chronyc`"
    if _DONE_ALREADY.match(c) or _FED_UP.match(c) or _KINDLY.search(c):
        return "the writer's own story or opinion"  # "I have already raised a ticket"
    if _DISCLAIMER.match(c):
        return "the writer's own story or opinion"  # "I'm not a database person, so ..."
    if _HEDGE_ASIDE.match(c):
        return "the writer's own story or opinion"  # "ymmv on older builds", "my 2 cents"
    if _OTHER_DOUBT.match(c) and not strong:
        return "a guess"  # "No idea about the rest of it", "I might have the cupboard wrong"
    if not first and not strong and _GUESS.search(c):
        return "a guess"  # "..., X is probably what you want"
    if _EFFORT.search(c) and (not strong or re.match(r"^(?:it\s+)?(?:took|cost|wasted)\s+"
                                                    r"(?:me|us)\b", c, re.IGNORECASE)):
        return "the writer's effort"  # ("took me 20 min on a live call": the time is the story's)
    if any(t in _POINTING_VERBS for t in toks) and any(t in _DEICTIC for t in toks) and \
            any(t in _ADDRESSEES for t in toks) and not items(c) and len(toks) <= 10:
        return "addressed to the assistant"
    if _SIGNATURE.match(c) or (not first and _BYLINE.match(c)):
        return "a signature"
    if toks[0] in ("i", "my") and _narrative(c) and not _states_rule(c) and not (
            set(toks) & _PRESENT) and not any(t in _ORGANISATION for t in toks):
        # The writer's story, whatever it names: "I tried this with 28 fourth graders
        # staring at me" (nothing in it is in the present).
        return "the writer's own story or opinion"
    if "us" in toks and _narrative(c) and not strong and not _states_rule(c):
        return "the writer's own story or opinion"  # "this bit us in the audit last month"
    if _named_story(c):
        return "the writer's own story or opinion"  # "Magnus swore the box was haunted"
    if _SELF_INTRO.match(c) and not re.search(r"\b(?:can|can't|cannot|must|may|never|not)\b",
                                               c, re.IGNORECASE):
        return "the writer's own story or opinion"  # "I'm only here for two weeks"
    if set(toks) & {"we", "our", "ours"} and _narrative(c) and (
            (not items(c) and not _states_rule(c)) or (_WE_PAST.match(c) and all(
                i.kind == "number" for i in items(c)) and not set(toks) & {
                    "not", "never", "no", "cannot", "can't", "won't", "don't", "doesn't"})):
        # The team's story: "Our error came from another column", "Ours was off after the
        # upgrade" (a change the team made names what changed: "We moved to nginx in
        # 2023", "Our printers were replaced by Ricoh models").
        return "the writer's own story or opinion"
    # ("delete it under My Jobs": a menu's name, not the writer's)
    personal = any(t in _FIRST_PERSON for t in tokens(re.sub(r"(?<=\S )My(?= [A-Z])", "", c)))
    if personal and not strong:
        # The writer's story (past tense, unless the organisation is its subject), a
        # guess or opinion, or a remark that states no rule. "I can't reset other users'
        # passwords" states one and stays (said to the reader: "you can't ...").
        # ("I use it all day": a time, not a scope of the rule)
        toks = tokens(re.sub(r"\ball\s+(?:day|night|week|morning|afternoon|evening|year|"
                             r"the time)\b", " ", c, flags=re.IGNORECASE))
        organisational = any(t in _ORGANISATION for t in toks)
        rule = negated(c) or any((t in MODALS and not _possession(toks, i)) or t in POLICY
                                 for i, t in enumerate(toks))
        if (_narrative(c) and not organisational) or _HEDGE.search(c) or not (
                rule or any(t in _SCOPE for t in toks)):
            return "the writer's own story or opinion"
    return ""


_VERBS = frozenset("""is are was were be been has have had 's do does did get gets go goes
come comes""".split())


#: Words that make a clause a rule by themselves (the policy list also has "kept",
#: "set" and "used", which a story uses as often as a rule).
_RULE_WORDS = MODALS | frozenset("""disabled enabled blocked forbidden prohibited allowed
permitted required enforced locked restricted reserved mandatory limited capped managed
denied""".split())


def _possession(toks: list[str], i: int) -> bool:
    """"have" or "has" as a verb of possession ("I have a deadline"), not "have to"."""
    return toks[i] in ("have", "has") and toks[i + 1:i + 2] != ["to"]


def _states_rule(clause: str) -> bool:
    """A negation, a modal, or a state word after a form of "be" ("is locked", "are
    blocked"): "I locked myself out" is the writer's act, not a rule."""
    toks = tokens(clause)
    return negated(clause) or any(
        (t in MODALS and not _possession(toks, i)) or (
            t in _RULE_WORDS and any(b in _BE for b in toks[max(0, i - 3):i]))
        for i, t in enumerate(toks))


_BE = frozenset("""is are was were be been being stays stay remain remains get gets 's
're""".split())


#: Verbs that report a change to the world ("We moved to nginx", "Priya renamed it"):
#: past tense, but the state they leave is the fact.
CHANGE_VERBS = frozenset("""moved renamed replaced changed switched migrated upgraded
downgraded raised lowered increased decreased reduced extended shortened added removed
disabled enabled installed uninstalled set configured retired dropped blocked opened
closed merged split rotated reset""".split())
#: "I'm only here for two weeks", "I'm new in the lab": who the writer is.
_SELF_INTRO = re.compile(r"^(?:i'm|i am)\s+(?:only|just|still|new|from|visiting|here|a|an)\b"
                         r"(?![^.]*\b(?:allowed|able|permitted|required|supposed)\b)",
                         re.IGNORECASE)


#: Words that count, not name: "Two registered staff sign ...", "Several ... ".
COUNT_WORDS = frozenset("""one two three four five six seven eight nine ten eleven twelve
twenty several many most few every per""".split())


def _named_story(clause: str) -> bool:
    """A person, named, did something once: "Magnus swore the box was haunted",
    "Gethin tried pairing it for an hour" (a change the person made, "Priya moved the
    backups", is a fact; so is a rule in the present)."""
    words = clause.split()
    if len(words) < 3 or not re.fullmatch(r"[A-Z][a-z]+", words[0]) or words[0].lower() in (
            IMPERATIVE | STOPWORDS | COUNT_WORDS):
        return False  # ("Choose Protected EAP": an instruction; "Two trained staff ...")
    verb = words[1].lower().strip(",.")
    past = (verb in IRREGULAR_PAST and verb not in _BASE_FORMS) or (
        verb.endswith("ed") and len(verb) > 4)
    if words[2].lower() in _PREPOSITIONS:
        return False  # "Repos located under /backup": a participle, telegraphic
    return past and verb not in CHANGE_VERBS and not _states_rule(clause) and not (
        set(tokens(clause)) & _PRESENT)


def _narrative(clause: str) -> bool:
    """A verb in the simple past: "I pasted it", "my script opened" (not "I've disabled",
    a present state)."""
    toks = tokens(clause)
    return past_tense(clause) and not any(
        t in ("i've", "we've", "have", "has", "we have", "i have") for t in toks)


# A label addressed to later readers: "For anyone who finds this later:", "For future
# reference:", "To whoever reads this next:", "The long version, for newcomers:".
_FOR_READERS = re.compile(
    r"(?:^|\s)(?:so\s+)?(?:for|to)\s+(?:the\s+|all\s+)?(?:next|future|other|anyone|anybody|"
    r"everyone|everybody|whoever|those|others|people|readers?|colleagues?|newcomers?|record)\b"
    # ("Copy the key to the other hosts": where to, not who for)
    r"(?!\s+(?:hosts?|servers?|machines?|boxes|nodes?|sites?|branches|rooms?|printers?|"
    r"laptops?|pcs?|desks?|floors?|offices?|buildings?|clusters?|databases?|side|end)\b)",
    re.IGNORECASE)


_ANNOUNCEMENTS = frozenset("""heads-up heads psa fyi reminder announcement""".split())


def announces(head: str) -> bool:
    """A heading that only says who what follows is for ("For anyone else from Farebox
    who hits this", "For the next person"), whatever it names. ("Copy the key to the
    other hosts" is an instruction.)"""
    return _FOR_READERS.match(head.strip()) is not None and len(tokens(head)) <= 12


#: How often something is done: after a participle, a description ("rotated daily").
_HOW_OFTEN = frozenset("""daily weekly nightly hourly monthly yearly annually quarterly
automatically centrally locally remotely once twice""".split())


def _label(head: str) -> bool:
    """A short label before a colon that only announces what follows."""
    toks = tokens(head)
    if (_FOR_READERS.search(head.strip()) or set(toks) & _ANNOUNCEMENTS) and len(toks) <= 10 \
            and not items(head):
        return True  # "For anyone who finds this:", "Just a heads-up from facilities:"
    if not toks or len(toks) > 7 or items(head) or any(
            t in MODALS or t in POLICY or t in ("not", "no", "never") for t in toks):
        return False
    allowed = ACKNOWLEDGEMENTS | _CONVERSATION | EVALUATIVE | INTENSIFIERS | {"there", "here",
                                                                             "easier", "is",
                                                                             "like"}
    return toks[-1] in _CATAPHORIC or (len(toks) <= 5 and all(t in allowed for t in toks))


def second_person(text: str) -> str:
    """The writer's situation said to the reader: "my laptop" -> "your laptop", "I get
    permission denied" -> "you get permission denied" (a nugget speaks to whoever reads
    it). Only possessives, objects and a present-tense experience ("I get", "I see", "I
    can't", "I have to") change; "I've disabled it on all laptops" is the writer's own
    act and stays for the reviewer."""
    if re.search(r"\bI\b(?![&/]\w)(?!\s+(?:get|see|need|have to|can|can't|cannot|must|only|also|"
                 r"don't|do not|am not)\b)", text):
        return text  # the writer is the subject here: "you" would garble the sentence
    spans = [(i.start, i.end) for i in items(text) if i.kind != "role"]

    def swap(m: re.Match[str]) -> str:
        word = m.group(0)
        if any(a <= m.start() < b for a, b in spans):
            return word  # "Databases > My accounts": a menu's text is not the writer's
        out = SECOND_PERSON[word.lower()]
        return out[0].upper() + out[1:] if m.start() == 0 else out
    # Lower case only: "My accounts" in a menu or a name is not the writer's possessive.
    # ("written approval from me", "ping me", "tell me": the writer as the one who
    # approves or is contacted stays the writer)
    return re.sub(r"\b(?:my|mine|myself)\b|(?<=\s)(?<![Ff]rom\s)(?<![Bb]y\s)(?<![Tt]o\s)"
                  r"(?<![Pp]ing\s)(?<![Aa]sk\s)(?<![Tt]ell\s)(?<![Cc]all\s)(?<![Rr]ing\s)"
                  r"(?<![Ee]mail\s)(?<![Cc]ontact\s)(?<![Mm]essage\s)(?<![Ww]ith\s)(?<![Cc]c\s)"
                  r"me\b|\bI(?=\s+(?:get|see|need|have to|"
                  r"can|can't|cannot|must|only|also|don't|do not|am not)\b)", swap, text)


#: The words that close a message before the writer's name ("Kind regards").
CLOSING = (r"(?:thanks|thank you|many thanks|cheers|regards|kind regards|best regards|best|"
            r"best wishes|all the best|ta|yours(?: sincerely| truly| faithfully)?|"
            r"i remain|sent from my \w+|"
            # "Sorry, dictating this while walking to the tram." over the name
            r"(?:sorry,?\s+)?(?:dictating|dictated|typing|typed|writing)\s+(?:this\s+)?"
            r"(?:on\s+(?:my|the)\s+\w+|while\s+[\w' -]{1,40}|from\s+(?:my|the)\s+\w+)|"
            # closings of the languages people often mix into work English
            r"cordialement|bien cordialement|bien à vous|merci(?: beaucoup| bien)?|gracias|"
            r"muchas gracias|saludos|un saludo|atentamente|danke(?: schön| sehr)?|"
            r"(?:viele|liebe|schöne|beste|herzliche) grüße|mit freundlichen grüßen|gruß|"
            r"groetjes|groeten|met vriendelijke groet(?:en)?|grazie(?: mille)?|"
            r"cordiali saluti|saluti|obrigad[oa]|abraços|tack|hälsningar|pozdrawiam|grüße|"
            r"gruesse|hilsen|(?:med )?vennlig hilsen|mvh|un abrazo|abrazos|pozdrowienia|"
            r"un saluto|buona giornata|atenciosamente|cumprimentos|dank je(?:wel)?|bedankt|"
            r"mvg|vänliga hälsningar|kiitos|tak|děkuji|s pozdravem|köszönöm|mulțumesc|"
            r"teşekkürler|teşekkür ederim|saygılarımla|iyi çalışmalar|"
            r"감사합니다|고맙습니다|수고하세요|ευχαριστώ|ευχαριστούμε|φιλικά|με εκτίμηση|"
            r"dhanyavaad|dhanyavad|dhanyawad|shukriya|धन्यवाद|спасибо|с уважением|shukran|"
            r"köszi|asante(?: sana)?|salamat(?: po)?|maraming salamat|"
            r"ありがとうございます|よろしくお願いします|谢谢|cảm ơn)")
# (capitalised, as a title is: "I miss WordPerfect" is no "Miss WordPerfect")
_TITLE = (r"(?-i:(?:Mr|Mrs|Ms|Miss|Dr|Prof|Cllr|Sr|Fr|Dott(?:\.ssa)?|Dra|Sra|Sig|Ing|Mme|Herr|"
          r"Frau|MR|MRS|MS|DR|PROF)\.?)")
# A sign-off at the end of a message: a closing word then a name, a dash then a name, or
# a titled name, optionally with a role ("Cheers,\nRhiannon (Fenmoor depot)", "— Mr.
# Okafor, Video Production, North HS", "I remain, yours &c., Cllr Harold").
_SIGN_OFF = re.compile(
    r"(?:^|(?<=[.!?\n])|\s)\s*(?:" + CLOSING + r"\b[^\n]{0,40}?[,!.]?\s*(?:[-–—~]\s*)?"
    r"(?:" + _TITLE + r"\s+)?|(?:-\s+|[–—~]\s*)(?:" + _TITLE + r"\s+)?|" + _TITLE + r"\s+)"
    # ("Office of Data Governance": a name with its small words)
    r"(?-i:[A-Z][\w'-]+)(?:[ \t]+(?:(?-i:of|for|and|the|de|van|von|du)[ \t]+)?"
    r"(?-i:[A-Z][\w'.-]*)){0,3}\s*"
    r"(?:\([^)\n]{0,60}\)|,\s*[^\n.!?]{0,60})?"
    r"(?:\n[ \t]*[^\n.!?]{1,60})?"  # a title line under the name ("IT, Harbourlight")
    r"\s*[.!]*\s*$", re.IGNORECASE)


# Where a reply's own text ends: a forwarded or original message, or "On ... wrote:".
_QUOTED_START = re.compile(r"^\s*(?:-{2,}\s*(?:forwarded message|original message)\b.*|"
                           r"on .{5,100} wrote:\s*|begin forwarded message:?\s*)$",
                           re.IGNORECASE | re.MULTILINE)
# A name alone on the last line ("Oskar", "Ana Lima").
_NAME_LINE = re.compile(r"\n\s*[-–—~]?\s*(?-i:[A-Z][a-z'-]+)(?:\s+(?-i:[A-Z][a-z'-]+))?"
                        # ("Sasha (RF / Sound No.2)", "Karen Mills | Collections")
                        r"(?:\s*\([^()\n]{1,40}\)|[ \t]*\|[ \t]*[^\n|.!?]{1,40})?\s*$")


_REPLY_NO = re.compile(r"^(?:no|nope|nah|not quite|wrong|incorrect|actually)\b[,.!:;]*\s*",
                       re.IGNORECASE)


def _answer_to_quote(quoted: str, reply: str) -> str:
    """"> The lock timeout is 10 minutes." answered "no, 3 minutes on wards": the quoted
    sentence with the one value of that unit replaced, and the reply's qualifier after
    it ("The lock timeout is 3 minutes, on wards."); "" when the reply is not such a
    short value."""
    r = _REPLY_NO.sub("", reply.strip())
    m = _NOTE_VALUE.match(r)
    if not m or len(tokens(r)) > 8 or m.group(0).strip().lower().startswith(("it", "that")):
        return ""
    fixed = _replace_value(quoted, m)
    if not fixed:
        return ""
    fixed = fixed.strip().rstrip(".")
    rest = r[m.end():].strip(" ,.;")
    return f"{fixed}, {rest}." if rest else f"{fixed}."


#: A reply that agrees with the quoted line before it adds to it: "Yes, on ca01, nowhere
#: else.", "Yes, and Kit revokes it on the day someone leaves."
_AGREED = re.compile(r"^(?:yes|yep|yeah|correct|right|exactly)\b[ \t]*[,.!:;\u2014\u2013-]+[ \t]*",
                     re.IGNORECASE)


def _agreed_quote(quoted: str, reply: str) -> str:
    """ "> Create the certificates with easy-rsa" answered "Yes, on ca01, nowhere else."
    reads "Create the certificates with easy-rsa, on ca01, nowhere else.": what the reply
    adds needs the quoted line it agrees with. "" when the reply does not open with
    agreement, adds nothing, or the quoted line is a question."""
    m = _AGREED.match(reply.strip())
    rest = reply.strip()[m.end():].strip() if m else ""
    if not m or not tokens(rest) or "?" in quoted or len(tokens(quoted)) < 3 or re.match(
            r"(?i)(?:but|though|however|except|only)\b", rest):
        return ""  # ("Yes, but on our side ...": the reply turns from the quoted line)
    head = quoted.strip().rstrip(".;:")
    return f"{head[:1].upper()}{head[1:]}, {rest}"


#: A reply that opens by pointing at what the quoted line named: "No, that one was
#: retired.", "It moved to room 4 in May."
_POINTING = re.compile(r"^(?P<lead>(?:(?:no|nope|nah|yes|yeah|actually)\b[,.!]*\s*)*)"
                       r"(?P<pronoun>that\s+one|this\s+one|that|this|it)\s+(?=(?:was|is|has|"
                       r"had|got|isn't|wasn't|hasn't|no\s+longer|doesn't|won't|can't|cannot|"
                       r"moved|went|lives|sits)\b)", re.IGNORECASE)


def _term_from_quote(quoted: str, reply: str) -> str:
    """"> DocumentRoot" answered "Always under /srv/www/<site>/public" reads "DocumentRoot:
    always under /srv/www/<site>/public": a quoted term of one or two words is what the
    reply is said of (the reply as it is when it names the term itself, or is a yes/no)."""
    term, said = quoted.strip().rstrip(":."), reply.strip()
    # (a term, not an order of the answer's: "> restart nfs-kernel-server")
    if not re.fullmatch(r"[A-Za-z][\w.-]*(?:[ \t][A-Za-z][\w.-]*)?", term) or \
            term.split()[0].lower() in IMPERATIVE or \
            term.lower() in said.lower() or re.match(
                r"(?i)(?:yes|yeah|yep|no|nope|fine|ok(?:ay)?|right|correct|agreed|sure|"
                r"thanks?)\b", said):
        return reply
    return f"{term}: {said[:1].lower() if said[1:2].islower() else said[:1]}{said[1:]}"


def _pronoun_from_quote(quoted: str, reply: str) -> str:
    """The reply with a leading "that one"/"it" read as the one thing the quoted line names
    ("> print on the lab printer (LAB-Laser)" then "No, that one was retired." reads "No,
    LAB-Laser was retired."); the reply as it is otherwise."""
    m = _POINTING.match(reply.strip())
    named = [i for i in items(quoted) if i.kind in ("name", "tech", "dotted", "path", "url",
                                                     "quoted", "email")]
    if m is None or len(named) != 1:
        return reply
    rest = reply.strip()[m.end():]
    return f"{m.group('lead')}{named[0].text} {rest}"


#: A line that announces the writer's own words pasted under it: "Review comment on !412,
#: pasting it here too:", "Copying my note from the ticket:", "Here's what I wrote:".
_OWN_PASTE = re.compile(r"\b(?:past(?:e|ed|ing)|copy(?:ing)?|cop(?:y|ied)\s+over)\s+(?:it|this|"
                        r"them|that|my|our|the\s+(?:[\w-]+\s+){0,2}?(?:review|comment|note|notice|"
                        r"sign|poster|sticker|card|policy|rules?))\b|"
                        r"\bhere(?:'s|\s+is|\s+are)\s+(?:what\s+(?:i|we)\s+wrote|my|our)\b",
                        re.IGNORECASE)


#: A line that forwards the reply quoted under it as what holds: "Forwarding Priya's reply
#: for the assistant, this is the agreed setup."
_FORWARDS = re.compile(r"\bforward(?:ing|ed)\b[^\n]{0,80}?\b(?:reply|answer|mail|e-?mail|"
                       r"message|note|response)\b", re.IGNORECASE)


def strip_quoted(message: str, answer: str = "") -> str:
    """The writer's own text of a reply: what follows a forwarded-message or "On ...
    wrote:" line goes, and so do lines quoted with ">" (a short value answering a quoted
    line replaces that line's value: see ``_answer_to_quote``), but for a block the line
    before announces as the writer's own, pasted again ("pasting it here too:"), or
    forwards as what holds ("Forwarding Priya's reply for the assistant", without its
    "From:" line), and,
    given the ``answer`` (with the query), a block that does not quote it: a runbook or a
    handbook quoted with ">" is what the writer brings, read as text."""
    m = _QUOTED_START.search(message)
    if m and len(tokens(message[:m.start()])) >= 3:
        message = message[:m.start()]
    out: list[str] = []
    quoted: list[str] = []
    own = False  # the block under the line before is the writer's own, pasted again
    theirs = content_stems(answer) if answer.strip() else None
    for line in [*message.splitlines(), ""]:
        if line.lstrip().startswith(">"):
            if not quoted and not own:
                before = next((ln for ln in reversed(out) if ln.strip()), "")
                # ("(copying the yellow note stuck on the ward monitor)" over ">> ..." lines)
                own = (bool(_OWN_PASTE.search(before))
                       and before.rstrip().endswith((":", ")"))) or \
                    bool(_FORWARDS.search(before))
            if own:
                if not _THREAD_LINE.search(line.lstrip().lstrip(">")):
                    out.append(line.lstrip().lstrip(">").strip())
                continue
            quoted.append(line.lstrip().lstrip(">").strip())
            continue
        own = False
        if quoted and theirs is not None and _quotes_a_document(out, quoted, theirs):
            out.extend(quoted)
            quoted = []
        if quoted and line.strip():
            line = _answer_to_quote(" ".join(quoted), line) or \
                _agreed_quote(" ".join(quoted), line) or \
                _term_from_quote(" ".join(quoted), _pronoun_from_quote(" ".join(quoted), line))
        quoted = [] if line.strip() else quoted
        out.append(line)
    return "\n".join(out).strip()


#: A line announcing a quoted document: "From runbook RB-DB-007 (Logs):", "Handbook,
#: section 7:", "Our policy says:" (a colon ends it).
_DOCUMENT_LINE = re.compile(r"\b(?:wiki|handbook|runbook|manual|guide|policy|standard|procedure|"
                            r"sop|checklist|faq|notice|memo|section|clause|rule ?book|"
                            r"guidelines?)\b[^\n]*:\s*$", re.IGNORECASE)
#: A quoted e-mail thread's lines: "On Mon, Sam wrote:", "Sent: Tuesday 09:41".
_THREAD_LINE = re.compile(r"\bwrote\s*:|^\s*(?:from|sent|to|cc|subject|date)\s*:", re.IGNORECASE)


def _quotes_a_document(before: list[str], quoted: list[str], answer_stems: set[str]) -> bool:
    """The ">" block quotes a document the line before announces ("From runbook RB-7:"),
    not the answer (most of its eight or more content words are not the answer's) and not
    an e-mail thread."""
    line = next((ln for ln in reversed(before) if ln.strip()), "")
    stems = content_stems(" ".join(quoted))
    return bool(_DOCUMENT_LINE.search(line)) and len(stems) >= 8 and \
        len(stems - answer_stems) > len(stems) // 2 and \
        not any(_THREAD_LINE.search(q) for q in quoted)


_FORWARD_MARK = re.compile(r"^\s*(?:-{2,}\s*forwarded message\b.*|begin forwarded message:?\s*)$",
                           re.IGNORECASE | re.MULTILINE)
_ORIGINAL_MARK = re.compile(r"^\s*-{2,}\s*original message\s*-{2,}\s*$",
                            re.IGNORECASE | re.MULTILINE)
_POINTS_BELOW = re.compile(r"\b(?:see|read|as)\s+below\b|\bbelow\s*[:.!]|\bfyi\b|"
                           r"\bforwarding\b", re.IGNORECASE)
_MAIL_HEADER = re.compile(r"^\s*(?:from|date|sent|subject|to|cc)\s*:", re.IGNORECASE)


def forwarded_message(message: str) -> tuple[str, str] | None:
    """(the writer's own text, the forwarded message's text) of a message that forwards
    one, or None: the forwarded text without its header lines (From:, Date:, Subject:,
    ...) and the question it answers quoted above it, up to a thread quoted inside it
    (``>`` lines or another quote marker)."""
    m = _FORWARD_MARK.search(message)
    if m is None:
        # a reply whose own text points at the message it quotes ("Short answer: no. See
        # below." over "-----Original Message-----"): that message is what it says
        m = _ORIGINAL_MARK.search(message)
        if m is None or not _POINTS_BELOW.search(message[:m.start()]):
            return None
    body: list[str] = []
    for line in message[m.end():].splitlines():
        if not body and line.lstrip().startswith(">"):
            continue  # (the question the forwarded reply answers, quoted above it)
        if line.lstrip().startswith(">") or _QUOTED_START.match(line):
            break
        if not body and (_MAIL_HEADER.match(line) or not line.strip()):
            continue
        body.append(line)
    text = strip_sign_off("\n".join(body).strip())
    return (message[:m.start()].strip(), text) if text else None


_DASH_SIGNATURE = re.compile(r"(?:^|(?<=[.!?])|\s)[ \t]*--[ \t]+(?=[A-Z])[^\n.!?]{1,60}$|"
                             # (initials after a dash: "... policy. -T", "— JK"; an
                             # initial and a surname with a team: "- P. Nandakumar, HelpPoint")
                             r"(?:(?<=[.!?])|\n)[ \t]*[-–—~][ \t]*(?-i:[A-Z]{1,3})\.?[ \t]*$|"
                             r"(?:(?<=[.!?])|\n)[ \t]*[-–—~][ \t]*(?-i:[A-Z]\.[ \t]*[A-Z][a-z'-]+)"
                             r"(?:,[ \t]*[^\n.!?]{1,40})?[ \t]*$")


#: A name with an initial closing the message, with a role: "... in SEC-OPS. Eleni P., IT
#: Security", "Mehmet A."
_INITIAL_NAME = re.compile(r"(?:(?<=[.!?])[ \t]+(?-i:[A-Z][\w'-]+[ \t]+[A-Z]\.),[ \t]*"
                           r"[^\n.!?]{1,50}|\n[ \t]*(?-i:[A-Z][\w'-]+[ \t]+[A-Z]\.)"
                           r"(?:,[ \t]*[^\n.!?]{1,50})?)[ \t]*[.!]?\s*$")


_SIGNED_NAME = re.compile(
    # (a closing at a line's start, or after a sentence's end: "... by me. Groetjes, Pieter")
    r"(?:(?:^|\n)[ \t]*(?:(?i:" + CLOSING + r")[ \t]*[,!.]?[ \t]*(?:\n[ \t]*|[ \t]+)|"
    r"[-–—~/][ \t]*)|(?<=[.!?])[ \t]+(?i:" + CLOSING + r")[ \t]*[,!]?[ \t]+)"
    r"(?:" + _TITLE + r"[ \t]+)?(?P<name>(?-i:[A-Z][\w'-]+)(?:[ \t]+(?-i:[A-Z][\w'-]+))?)"
    r"[ \t]*(?:[,(][^\n]*)?(?:\n[^\n]{0,60})?\s*$", re.IGNORECASE)
#: What a header line naming its sender calls the message: "ANNOUNCEMENT from X", "Memo by
#: Y" (the layout reads the header, the residue the name in it).
SENDER_WORDS = r"(?:announcement|notice|memo(?:randum)?|update|reminder|psa|bulletin|circular|" \
    r"message|note|all[ -](?:staff|hands|teams|users))"
_SENDER_NAME = re.compile(r"^\s*" + SENDER_WORDS + r"\s*(?:[—–]|-{1,2})?\s*(?:from|by)\s+"
                          r"(?P<name>(?-i:[A-Z][\w'-]+)[ \t]+(?-i:[A-Z][\w'-]+))", re.IGNORECASE)
#: The writer's own room or desk, where something is kept: "on the whiteboard in my office".
_WRITERS_PLACE = re.compile(r"\bmy\s+(office|desk|room|drawer|locker|cabin|workshop|cupboard|"
                            r"pigeonhole|shed|van|truck|approval|sign-?off|permission|consent|"
                            r"go-ahead|authori[sz]ation)\b", re.IGNORECASE)
#: A name and a role closing the message on the line of its last sentence: "... at the
#: team leader desk. Emre Yıldız, Team Leader".
_INLINE_SIGNATURE = re.compile(r"(?<=[.!?])[ \t]+(?P<name>(?-i:[A-Z][\w'-]+)[ \t]+"
                               r"(?-i:[A-Z][\w'-]+)),[ \t]*[^\n.!?,]{2,50}[.!]?\s*$")
#: A name after a dash closing the message: "Thanks for your cooperation — Fiona MacLeod,
#: Head of IT".
_DASH_NAME = re.compile(r"[—–-][ \t]*(?P<name>(?-i:[A-Z][\w'-]+)[ \t]+(?-i:[A-Z][\w'-]+))"
                        r"(?:,[^\n.!?]{1,60})?[ \t]*[.!]?\s*$")
#: A banner over the message naming who it is from: "[Voicemail transcript, 07:12, from
#: Bernie Tallack, press hall foreman]".
_BANNER_NAME = re.compile(r"^\s*\[[^\]\n]*?\bfrom\s+(?P<name>(?-i:[A-Z][\w'-]+)[ \t]+"
                          r"(?-i:[A-Z][\w'-]+))", re.IGNORECASE)
#: "me" as the one who approves or is contacted: "approval from me", "a message to me".
# (not what befell the writer: "it happened to me already")
_AUTHORITY_ME = re.compile(r"(?<!happened\s)(?<!happens\s)(?<!occurred\s)(?<!happen\s)"
                           r"\b(?P<prep>from|by|to|ping|ask|tell|call|ring|email|e-mail|contact|"
                           r"message|with|cc)[ \t]+me\b", re.IGNORECASE)


def writer_named(message: str) -> str:
    """The message with "me" as the one who approves or is contacted ("written approval
    from me", "not a direct message to me") replaced by the writer's name when the message
    gives it (a sender header "ANNOUNCEMENT from Dorothy Okafor", a sign-off "Thanks,
    Gráinne"): a nugget is read by people who never saw who wrote it."""
    if not (_AUTHORITY_ME.search(message) or _WRITERS_PLACE.search(message)):
        return message
    own = message
    cut = _QUOTED_START.search(own) or _FORWARD_MARK.search(own)
    if cut:
        own = own[:cut.start()].rstrip()
    m = _SENDER_NAME.match(own) or _BANNER_NAME.match(own) or _SIGNED_NAME.search(own) or \
        _DASH_NAME.search(own) or _INLINE_SIGNATURE.search(own)
    if m is None or m.group("name").lower() in ("thanks", "cheers", "regards", "team", "all"):
        return message
    name = m.group("name")
    # ("the key is in my office" -> "in Bernie Tallack's office", "with my approval" ->
    # "with Fiona MacLeod's approval": where, and whose, for whoever asks)
    message = _WRITERS_PLACE.sub(lambda p: f"{name}'s {p.group(1)}", message)
    return _AUTHORITY_ME.sub(lambda a: f"{a.group('prep')} {name}", message)


#: A name typed in lower case after the last sentence, with where the writer is: "...
#: even if Maps asks. lee (van 14)".
_TYPED_NAME = re.compile(r"(?<=[.!?])[ \t]+[a-z][a-z'-]{1,15}[ \t]*\([^()\n]{1,30}\)[ \t]*$")


def strip_sign_off(message: str) -> str:
    """The message without the sign-off at its end (see ``_SIGN_OFF``), a name alone on
    its last line, or a "-- " signature ("-- Corvid IT / TP-Desk")."""
    dashes = _DASH_SIGNATURE.search(message)
    if dashes and len(tokens(message[:dashes.start()])) >= 3:
        message = message[:dashes.start()].rstrip()
    name = _NAME_LINE.search(message) or _INITIAL_NAME.search(message) or \
        _TYPED_NAME.search(message)
    if name and len(tokens(message[:name.start()])) >= 3:
        message = message[:name.start()].rstrip()
    m = _SIGN_OFF.search(message)
    if not m or len(tokens(message[:m.start()])) < 3:
        return message
    return message[:m.start()].rstrip()


_VALUE = r"\d[\w.:/%+-]*"
_REPAIR_WORDS = r"(?:sorry|i mean|i meant|correction|make that|no wait|wait|or rather|rather|edit)"
# "valid 30 days — sorry, 14 days": the writer corrects a value in passing.
_INLINE_VALUE = r"\d(?:[\w.:/%+-]*[\w%])?"  # a value that does not end a sentence
_INLINE_REPAIR = re.compile(r"\b(" + _INLINE_VALUE + r")((?:[ \t]+[a-z]+){1,2})?[ \t]*"
                            # ("00:30 -- sorry, 00:45": two hyphens for the dash)
                            r"(?:(?:[-–—,(;]|--(?=[ \t]*sorry\b))[ \t]*)?"
                            + r"(?:(?:no[ \t]*,?[ \t]*)?" + _REPAIR_WORDS
                            + r"[ \t]*[:,]?[ \t]*){1,2}(?<=[\s:,])("
                            + _INLINE_VALUE
                            # "45 — sorry, 25 — minutes": the dash that closes the aside goes
                            + r")(?:[ \t]*[-–—](?=[ \t]+[a-z]))?((?:[ \t]+[a-z]+){1,2})?\)?",
                            re.IGNORECASE)
# "room B07, no wait, B17", "UTC+1, sorry, UTC", "3128, no, 8081": a code or a number
# repaired in passing by one of the same shape; the rest of the sentence stays.
_CODE = r"[A-Za-z0-9][\w.:/%+@-]*[\w%+]|[A-Za-z0-9]"
_CODE_REPAIR = re.compile(r"(?<![\w.:/@-])(?P<old>" + _CODE + r")[ \t]*(?:[-–—,(;][ \t]*|"
                          r"(?=(?i:no):[ \t]))"  # ("en_US.UTF-8 no: en_GB.UTF-8")
                          r"(?P<words>(?:(?:no|nope|" + _REPAIR_WORDS[3:-1]
                          + r")\b[ \t]*[:,!]?[ \t]*){1,3})(?P<new>" + _CODE
                          + r")(?![\w@/])(?:[ \t]*[-–—)](?=[ \t]+[a-z]))?", re.IGNORECASE)


_ADDRESS = r"(?:[a-z][a-z0-9+.-]*://[^\s,;]+|/[\w./-]+|[\w-]+(?:\.[\w-]+){2,}(?::\d+)?(?:/[^\s,;]*)?)"
#: An address repaired in passing, with the reason the old one was wrong between:
#: "ipp://print:631/x, no wait, port 631 was the old server, it is ipp://print/x now".
_ADDRESS_REPAIR = re.compile(r"(?P<old>" + _ADDRESS + r")[ \t]*[,;–—-][ \t]*(?:no[ \t]*,?[ \t]*)?"
                             r"(?:wait|sorry|i\s+mean|correction|scratch\s+that)[,:]?[ \t]+"
                             r"(?:[^,.;\n]{3,60}?,[ \t]*)?(?:it(?:'s|[ \t]+is)[ \t]+|make[ \t]+that"
                             r"[ \t]+|should[ \t]+be[ \t]+|use[ \t]+)?(?P<new>" + _ADDRESS + r")",
                             re.IGNORECASE)


# "0.05 — no wait, that was before the March change, it's 0.02 now": the repair with why
# the first value was wrong between the two.
# (a type with its arguments is one value: "numeric(3,1)")
_CODE_ARGS = r"(?:[A-Za-z][\w.-]*\([\d, ]+\)|" + _CODE + r")"
_CODE_REPAIR_WHY = re.compile(r"(?<![\w.:/@-])(?P<old>" + _CODE_ARGS + r")[ \t]*[-–—,(;][ \t]*"
                              r"(?:(?:no|nope)\b[ \t]*,?[ \t]*)?(?:wait|sorry|i\s+mean|correction)"
                              r"(?:[ \t,]+no)?[,:]?[ \t]+(?:that|this|it|those)(?:'s|\s+was|\s+is|"
                              r"\s+were)[^,.;\n]{3,60}?[,.][ \t]*(?:it(?:'s|[ \t]+is)[ \t]+|"
                              r"now[ \t]+|make[ \t]+(?:it|that)[ \t]+)?(?P<new>" + _CODE_ARGS
                              + r")(?![\w@/(])", re.IGNORECASE)


#: A code taken back with what changed, then the new one: "CEN-CONSULT3-LJ... wait, no,
#: the rooms were renamed last month, it's CEN-C3-LASER now".
_CODE_REPAIR_REASON = re.compile(
    r"(?<![\w.:/@-])(?P<old>" + _CODE_ARGS + r")[ \t]*(?:\.{2,}|\u2026|[-–—,(;])[ \t]*"
    r"(?:(?:no|nope|wait|sorry|oops)\b[ \t]*[,!:]*[ \t]*){1,3}(?<=[\s,!:])"
    r"[^,.;!?\n]{3,80}?,[ \t]*(?:it|that)(?:'s|[ \t]+is)[ \t]+(?:now[ \t]+)?"
    r"(?P<new>" + _CODE_ARGS + r")(?![\w@/(])(?:[ \t]+now\b)?", re.IGNORECASE)


#: A value taken back by saying it was moved to the new one: "at 01:00 — no wait, it was
#: moved to 00:45 when the catalogue dump got earlier — written to ..." (why goes too, up
#: to the dash that closes the aside).
_MOVED_REPAIR = re.compile(
    r"(?<![\w.:/@-])(?P<old>" + _CODE + r")[ \t]*(?:\.{2,}|\u2026|[-–—,(;])[ \t]*"
    r"(?:(?:no|nope|wait|sorry|oops)\b[ \t]*[,!:]*[ \t]*){1,3}(?<=[\s,!:])"
    r"(?:it|that|this|they)[ \t]+(?:was|were|has[ \t]+been|have[ \t]+been|got)[ \t]+"
    r"(?:moved|changed|pushed|brought[ \t]+forward|put[ \t]+back|raised|lowered|cut|bumped|"
    r"switched|shifted|renamed)[ \t]+to[ \t]+(?P<new>" + _CODE + r")(?![\w@/])"
    r"(?P<why>[^—–\n.;]{0,80}?[ \t]*[—–]+[ \t]*|[^—–\n.;]{0,80}?(?=[.;]))?", re.IGNORECASE)


def _skeleton(value: str) -> str:
    return re.sub(r"\d", "9", re.sub(r"[A-Z]", "A", re.sub(r"[a-z]", "a", value)))


def _same_shape(old: str, new: str) -> bool:
    """Whether ``new`` can be a repair of ``old``: both numbers, both codes in capitals
    ("CET" / "UTC"), or both codes that open with the same capital letter ("B07" / "B17",
    "UTC+1" / "UTC"), or one type with other arguments ("numeric(3,1)" / "numeric(4,2)");
    or the same value said again ("2202, sorry, 2202": the writer confirms the repair)."""
    if old.lower() == new.lower():
        return True
    if "(" in old and "(" in new and old.split("(")[0].lower() == new.split("(")[0].lower():
        return True
    if old[0].isdigit() and new[0].isdigit():
        return True
    if all(re.fullmatch(r"[A-Z][A-Z0-9+-]+", t) for t in (old, new)):
        return True  # "CET, sorry, UTC": two codes in capitals
    if len(old) >= 4 and re.search(r"[._:/-]", old) and _skeleton(old) == _skeleton(new):
        return True  # "en_US.UTF-8 no: en_GB.UTF-8": one pattern, other letters
    return old[0].isupper() and old[0] == new[0] and any(
        c.isdigit() or c.isupper() for t in (old, new) for c in t[1:])


def _code_repair(m: re.Match[str]) -> str:
    words = m.group("words").lower()
    old, new = m.group("old"), m.group("new")
    if not _same_shape(old, new) or (re.fullmatch(r"no\W*", words.strip()) and ":" not in words
                                     and not (old[0].isdigit() and new[0].isdigit())):
        # a bare "no" repairs numbers only ("3 users, no, B2 ..."); "X no: Y" any value
        return m.group(0)
    return new
# "... after 90 days. edit: 60 days, not 90 — 90 was before the cut.": a later note.
_EDIT_NOTE = re.compile(r"(?:^|(?<=[.!?\n])\s*)\s*(?:edit|update|correction|ps)\s*:\s*(" + _VALUE
                        + r")(\s+[a-z]+)?,?\s+not\s+(" + _VALUE + r")\b[^.!?\n]*[.!?]?",
                        re.IGNORECASE)


# ("purged after 30 days -- edit: 21 days, they shortened it": after a dash, too)
_EDIT_SENTENCE = re.compile(r"(?:(?:^|(?<=[.!?\n]))\s*|[ \t]*(?:-{1,2}|[\u2013\u2014])[ \t]*)"
                            r"(?:edit|update|correction)\s*:\s*([^\n]*?"
                            r"(?:[.!?](?=\s)|$))", re.IGNORECASE | re.MULTILINE)


_NOTE_VALUE = re.compile(r"\s*(?:(?:it'?s|it is|that'?s|make (?:it|that)|should (?:be|read))\s+)?"
                         r"(" + _VALUE + r")\s+([a-z]+)\b", re.IGNORECASE)


def _replace_value(text: str, note: re.Match[str]) -> str:
    """``text`` with the one value that has the unit of ``note`` (a ``_NOTE_VALUE``
    match: "14 days") replaced by the note's value; "" when text has no such value or
    more than one."""
    new, unit = note.group(1).rstrip(".,;"), note.group(2).lower().rstrip("s")
    olds = {o.rstrip(".,;") for o, u in re.findall(
        r"(?<![\w.:])(" + _VALUE + r")\s+([a-z]+)\b", text, re.IGNORECASE)
        if u.lower().rstrip("s") == unit} - {new}
    if len(olds) != 1:
        return ""
    unit_word = re.escape(note.group(2)[:len(unit)])
    return re.sub(rf"(?<![\w.:]){re.escape(olds.pop())}(?=\s+{unit_word})", new, text,
                  flags=re.IGNORECASE)


def _apply_value_note(note: str, head: str, tail: str) -> str:
    """"kept 7 days. edit: 14 days, it was raised in Q1": a note that opens with a value
    and its unit replaces the one other value with that unit in the message, and goes
    ("" when the note does not, or that value is not unique)."""
    m = _NOTE_VALUE.match(note)
    if not m:
        return ""
    head = _replace_value(head, m).rstrip()
    if not head:
        return ""
    return head + ("" if head.endswith((".", "!", "?")) else ".") + " " + tail.lstrip()


#: An edit note that puts one name for another: "gw-hq, not gw-ash, we renamed it".
_NAME_NOTE = re.compile(r"\s*(?P<new>[A-Za-z0-9][\w.-]*[\w])\s*,?\s+not\s+"
                        r"(?P<old>[A-Za-z0-9][\w.-]*[\w])\b")


#: A note that a name changed: "the portal file got renamed in March, it's X now".
_RENAMED = re.compile(r"\b(?:renamed|changed|moved|replaced|now\s+called)\b[^.!?\n]*?"
                      r"\b(?:it'?s|it\s+is|is\s+now|now)\s+(?P<new>\w[\w.-]*\w)", re.IGNORECASE)


def _same_file(old: str, new: str) -> bool:
    """Two names of one file or host: the same extension and a common stem
    ("mf-remote.ovpn" / "mf-remote-2024.ovpn")."""
    if old.lower() == new.lower():
        return False
    (o, o_ext), (n, n_ext) = _stem_ext(old), _stem_ext(new)
    return o_ext == n_ext and (n.startswith(o) or o.startswith(n) or _same_family(o, n))


def _stem_ext(name: str) -> tuple[str, str]:
    stem, _, ext = name.lower().rpartition(".")
    return (stem, ext) if stem else (ext, "")


def _same_family(old: str, new: str) -> bool:
    """Two names of one family: the same shape ("B07" / "B17") or the same stem before a
    hyphen ("gw-ash" / "gw-hq")."""
    if old.lower() == new.lower():
        return False
    if "-" in old and "-" in new and old.split("-")[0].lower() == new.split("-")[0].lower():
        return True
    return _same_shape(old, new)


def _apply_edit_sentences(text: str) -> str:
    """"edit: the window is 23:30 to 03:00, not 00:00, sorry" after "between 00:00 and
    03:00": the one value of the note the message did not have replaces the one it
    overturns ("not 00:00"), and the note goes."""
    for m in list(_EDIT_SENTENCE.finditer(text))[::-1]:
        note, head = m.group(1), text[:m.start()]
        neg = re.search(r"\bnot\s+(" + _VALUE + r")", note, re.IGNORECASE)
        named = _NAME_NOTE.match(note)
        if not neg and named and _same_family(named.group("old"), named.group("new")) and \
                re.search(rf"(?<![\w-]){re.escape(named.group('old'))}(?![\w-])", head):
            # "edit: gw-hq, not gw-ash" after "tunnels to gw-ash.example": the name
            # replaced wherever the message said it, and the note goes
            head = re.sub(rf"(?<![\w-]){re.escape(named.group('old'))}(?![\w-])",
                          named.group("new"), head).rstrip()
            end = "" if head.endswith((".", "!", "?")) else "."
            text = head + end + " " + text[m.end():].lstrip()
            continue
        renamed = _RENAMED.search(note)
        if not neg and renamed:
            olds = {o for o in re.findall(r"(?<![\w-])[\w][\w.-]*\.\w+|(?<![\w-])[\w]+-[\w.-]+",
                                          head) if _same_file(o, renamed.group("new"))}
            if len(olds) == 1:
                # "use mf-remote.ovpn ... EDIT: the file got renamed in March, it's
                # mf-remote-2024.ovpn now": the new name where the message said the old
                old_name = olds.pop()
                head = re.sub(rf"(?<![\w-]){re.escape(old_name)}(?![\w-])",
                              renamed.group("new"), head).rstrip()
                end = "" if head.endswith((".", "!", "?")) else "."
                text = head + end + " " + text[m.end():].lstrip()
                continue
        if not neg:
            text = _apply_value_note(note, head, text[m.end():]) or text
            continue
        old = neg.group(1).rstrip(".,;")
        new = {v.rstrip(".,;") for v in re.findall(_VALUE, note[:neg.start()])}
        new = {v for v in new if not re.search(rf"(?<![\w.:]){re.escape(v)}(?![\w:])", head)}
        pattern = rf"(?<![\w.:]){re.escape(old)}(?![\w:])"
        if len(new) == 1 and re.search(pattern, head):
            head = re.sub(pattern, new.pop(), head).rstrip()
            end = "" if head.endswith((".", "!", "?")) else "."
            text = head + end + " " + text[m.end():].lstrip()
    return text.strip()


# "They are kept 7 days. 14 days, sorry.": a repair as a sentence of its own.
_REPAIR_SENTENCE = re.compile(r"(?:^|(?<=[.!?\n]))[ \t]*(" + _INLINE_VALUE + r"[ \t]+[a-z]+)[ \t]*"
                              r"[,;:–—-]?[ \t]*(?:sorry|my bad|typo|oops|i mean|i meant)\b"
                              r"[^.!?\n]*(?:[.!?]+|$)", re.IGNORECASE | re.MULTILINE)


def _apply_repair_sentences(text: str) -> str:
    for m in list(_REPAIR_SENTENCE.finditer(text))[::-1]:
        text = _apply_value_note(m.group(1), text[:m.start()], text[m.end():]) or text
    return _apply_sorry_values(text).strip()


# "... starts with SET lock_timeout = '5s' / sorry, '3s'. five was the old value": a repair
# sent as a message or a sentence of its own, the value first; a note that the first value
# was the old one goes with it.
_SORRY_THEN_VALUE = re.compile(
    # ("... at 04:00. No wait, we moved it to 04:15 last year so ...": the value again,
    # after a full stop, in a clause of its own)
    # (or after a dash: "keeps 7 – no wait, it's 14 now")
    rf"(?:^|(?<=[.!?\n–—])|(?<=\s-))[ \t]*{REPAIR_CUE}[ \t]+{REPAIR_VALUE}"
    r"(?:[ \t]+now\b)?(?:[ \t]*(?:[.!]+|$)|"
    r"(?P<why>[ \t]*,?[ \t]+(?:last|this|since|because|so|as|in)\b[^.!?\n]*"
    r"(?:[.!]+|$))|[ \t]*,[ \t]+(?:i|i've|i'm|i'd|we've|that's|that[ \t]+was)\b[^.!?\n]*"
    r"(?:[.!]+|$)|"
    # "23:00... sorry, 01:00, the 23:00 run was the old schedule before the move."
    r"[ \t]*,[ \t]+[^.!?\n]{0,40}?\b(?:was|is)[ \t]+(?:the[ \t]+)?old\b[^.!?\n]*(?:[.!]+|$))"
    r"(?:[ \t]*[^.!?\n]{0,30}\b(?:was|is)[ \t]+the[ \t]+old[ \t]+(?:value|one|setting|number)"
    r"\b[^.!?\n]*[.!]?)?", re.IGNORECASE | re.MULTILINE)


def _apply_sorry_values(text: str) -> str:
    """The repaired value in place of the last value of its kind before the repair (see
    :func:`optimizer.claims.repaired_value`)."""
    for m in list(_SORRY_THEN_VALUE.finditer(text))[::-1]:
        new, head = m.group("new"), text[:m.start()]
        last = repaired_value(head, new)
        if last is None:
            continue
        head = re.sub(r"[ \t]*(?:\.{2,}|\u2026|[–—]|\s-)$", "",  # ("at 23:00... sorry, 01:00")
                      (head[:last.start()] + new + head[last.end():]).rstrip())
        end = "" if head.endswith((".", "!", "?")) else "."
        text = head + end + " " + text[m.end():].lstrip()
    return text


# "Config is /etc/x.sources I think... yes it is, just looked": a doubt the writer
# settles at once; the value stays, the doubt and the settling go.
_SELF_CONFIRMED = re.compile(r"[ \t]+i\s+think\s*(?:\.{2,}|\u2026|,)\s*(?:yes|yep|yeah),?\s+"
                             r"(?:it\s+is|it's|that's\s+(?:right|it)|correct)"
                             r"(?:,?\s*(?:just\s+)?(?:looked|checked))?(?=[.!]|\s|$)",
                             re.IGNORECASE)

# "15:30 -- hm, let me check the calendar... yeah sorry, 15:30 UTC is right": the writer
# checks a value at once and says it again, maybe more fully; the check goes.
_CHECKED_AT_ONCE = re.compile(
    r"(?P<val>\d[\w:./]*)[ \t]*[-–—]+[ \t]*(?:(?:hm+|erm|um|uh)\b[,.]?[ \t]*)?let[ \t]+me[ \t]+"
    r"(?:check|look|double[- ]check|see)\b[^.…\n]*(?:\.{2,}|…)[ \t]*(?:(?:yeah|yes|yep|"
    r"ok(?:ay)?)\b[,.]?[ \t]*)?(?:sorry\b[,.]?[ \t]*)?(?P<conf>[^.!?\n]+?)[ \t]+(?:is|was)[ \t]+"
    r"(?:right|correct)\b", re.IGNORECASE)


# "Default is TY-LBL - no hang on, that's the label printer. Default is TY-MFP.": the
# writer takes the sentence back and says it again; the first one goes.
_RESTATED = re.compile(r"(?:^|(?<=[.!?][ \t])|(?<=\n))(?P<head>[A-Z][\w'-]*)\b(?P<said>[^.!?\n]*?)"
                       r"[ \t]*[-–—,][ \t]*(?:no[ \t,]+)?(?:hang[ \t]+on|hold[ \t]+on|wait)\b"
                       r"[^.!?\n]*[.!?][ \t]+(?=(?P=head)\b)(?P<again>[^.!?\n]*[.!?])?")
#: A sentence that ends in its value after "is", "are" or "=": "Default at X is Y".
_ENDS_IN_VALUE = re.compile(r"(?P<lead>.*\b(?:is|are)[ \t]+|.*=[ \t]*)(?P<value>\S+)$",
                            re.IGNORECASE)


def _restated(m: re.Match[str]) -> str:
    """The sentence said again; where it is said shorter ("Default is Y" after "Default at
    X is Z - no hang on, ..."), the first one's words around the new value."""
    again = m.group("again") or ""
    first = _ENDS_IN_VALUE.fullmatch(m.group("head") + m.group("said"))
    second = _ENDS_IN_VALUE.fullmatch(again.rstrip(".!?"))
    if first and second and len(first.group("lead")) > len(second.group("lead")):
        return f"{first.group('lead')}{second.group('value')}{again[-1]}"
    return again


def _checked_at_once(m: re.Match[str]) -> str:
    conf = m.group("conf").strip()
    return conf if conf.startswith(m.group("val")) else m.group(0)


# "Power Saver is the default I think... no, sorry, Balanced is the default, just
# checked": the writer takes back the clause before "no" and states the one after it.
_RETRACTED = re.compile(
    r"(?P<start>^|(?<=[.!?][ \t])|(?<=\n))(?P<old>(?:[^.!?\n]|\.(?=\w)){6,}?)"
    r"(?:,?[ \t]+(?:i[ \t]+think|i[ \t]+guess|i[ \t]+believe|i[ \t]+thought))?[ \t]*"
    # ("tick 'X'... no!! select Y": after a trailing-off, a "no" said loudly is enough)
    # (or after "wait": "Use X, wait, no, Y")
    r"(?:(?:(?:\.{2,}|\u2026)[ \t]*(?:wait[ \t]*[,!]*[ \t]*)?|[,;—–-][ \t]*wait[ \t]*[,!]*[ \t]*)"
    r"(?P<loud>no|nope)[ \t]*[!,.;]+[ \t]*"
    r"(?:(?:sorry|my[ \t]+bad|scratch[ \t]+that|actually|wait|i[ \t]+mean)\b[,!.]?[ \t]*)*"
    r"|(?:\.{2,}|\u2026|[,;—–-])[ \t]*(?:no|nope|wait|hmm)\b[,!.]?[ \t]*"
    r"(?:(?:sorry|my[ \t]+bad|scratch[ \t]+that|actually|wait|i[ \t]+mean)\b[,!.]?[ \t]*)+"
    # ("every 15 minutes — sorry, every 30 minutes": a bare "sorry" after a dash, which
    # repairs only a value said again in the same words, see restate)
    r"|[ \t]*[—–-]+[ \t]*(?P<sorry>sorry)[,!.]?[ \t]*)"
    # (a dot inside a name is no sentence end: "hvg-root-ca.pem", "/etc/ssl")
    r"(?P<new>(?:[^.!?\n]|\.(?=\w))+)", re.IGNORECASE)
#: Why the new value holds, after it: "..., we changed it in spring".
_WHY_NEW = re.compile(r",[ \t]*(?:we|they|it|that|someone|ops|it's)[ \t]+(?:changed|moved|"
                      r"switched|raised|lowered|cut|shortened|extended|got)\b[^.!?\n]*$",
                      re.IGNORECASE)
#: A verb that makes a clause of its own (the new value after a retraction may have none).
_FINITE = re.compile(r"\b(?:is|are|was|were|has|have|does|do|can|must|should|will|runs?|"
                     r"opens?|closes?|starts?|goes|takes?|uses?|needs?)\b", re.IGNORECASE)
_VOUCHED_TAIL = re.compile(r",?[ \t]*(?:i[ \t]+)?(?:just[ \t]+)?(?:checked|looked|verified)"
                           r"(?:[ \t]+(?:it|again|now))?[ \t]*$", re.IGNORECASE)


#: Why the old value was wrong, between the retraction and the new value: "that was last
#: year, it moved - ", "that's the old rota -".
_WHY_OLD = re.compile(r"^(?:that|this|it)(?:'s|\s+is|\s+was|\s+were)\s+[^–—-]{0,60}?"
                      r"(?:last\s+year|old|before|outdated|wrong|years\s+ago|the\s+previous|"
                      r"moved|changed)[^–—-]{0,40}?\s*[–—-]+\s*(?=\S)", re.IGNORECASE)
#: The head of a copular clause: "It's", "The window is", "Backups run at".
_COPULA_HEAD = re.compile(r"^(.{0,40}?\b(?:is|are|was|were|'s|runs?|opens?|closes?|starts?|"
                          r"ends?)\b)\s+\S", re.IGNORECASE)


#: A new value that can only be a complement (when, how often, where), never a subject.
_COMPLEMENT = re.compile(r"(?:every|each|at|on|in|from|since|until|after|before|once|twice|"
                         r"daily|weekly|nightly|hourly|monthly|\d+)\b", re.IGNORECASE)


#: A value as a later sentence gives it again: a number with its unit ("30 GB", "14
#: days"), or a number in words ("one thousand").
_AGAIN_VALUE = (r"(?:\d[\w.:%/+-]*(?:[ \t]+(?-i:[A-Za-z]{1,8})\b(?![ \t]+(?:is|are)\b))?|"
                + WORD_NUMBER + r"(?![\w-]))")
#: A later sentence that says a value said before has changed: "Actually I just checked
#: the script and hard is 30 GB now, it was raised last year.", "Actually scratch that,
#: it was raised to one thousand after X was added; five hundred was the old value."
_GIVEN_AGAIN = re.compile(
    r"(?:^|(?<=[.!?])[ \t]+|(?<=\n))(?:actually|correction|update|wait)[ \t]*[,:]?[ \t]+"
    r"(?:(?:no|sorry|scratch[ \t]+that|scrap[ \t]+that)[ \t]*[,;:]?[ \t]+)*"
    r"(?:(?:i|we)(?:'ve|[ \t]+have)?[ \t]+(?:just[ \t]+)?(?:checked|looked|verified)\b"
    r"[^.!?\n]{0,60}?[ \t]+and"
    r"[ \t]+)?(?:(?P<key>[a-z][\w-]*(?:[ \t]+[a-z][\w-]*)?)(?:[ \t]+(?:is|are)|'s)[ \t]+"
    r"(?:now[ \t]+)?|"
    r"(?:it|that|this)[ \t]+(?:was|has[ \t]+been|got)[ \t]+(?:raised|lowered|changed|moved|"
    r"cut|bumped|increased|reduced|set|put)[ \t]+to[ \t]+)(?P<new>" + _AGAIN_VALUE + r")"
    # ("it's 90 days for editorial staff": whom the new value holds for stays with it)
    r"(?:[ \t]+now)?(?P<scope>[ \t]+for[ \t]+(?!now\b)[^,;.!?\n]{2,40}?"
    r"(?=[ \t]+because\b|[,;.!]|$))?"
    r"(?P<why>[ \t]*(?:[,;][ \t]*|[ \t]+(?:after|since|when|because|in|on|"
    r"last|this)\b)"
    r"[^.!?\n]*)?(?:[.!]+|$)", re.IGNORECASE)


def _values_given_again(text: str) -> str:
    """A value said again, changed, in a later sentence replaces the one said before, and
    that sentence goes with why it changed ("soft 20 GB, hard 25 GB. Actually I just
    checked ... and hard is 30 GB now, it was raised last year." reads "soft 20 GB, hard
    30 GB."): with a key, the last value after that key; without one ("it was raised to
    one thousand"), the last value of the same kind in the sentence before."""
    for m in list(_GIVEN_AGAIN.finditer(text))[::-1]:
        head, new = text[:m.start()], m.group("new")
        spelled = number_value(new) is not None and not new[0].isdigit()
        if m.group("key") and m.group("key").lower() not in ("it", "that", "this", "they"):
            key = re.escape(m.group("key"))
            olds = list(re.finditer(rf"\b{key}\b[ \t:=]*(?:(?:is|of)[ \t]+)?(?:set[ \t]+to[ \t]+)?"
                                    rf"(?P<old>{_AGAIN_VALUE})", head, re.IGNORECASE))
        else:
            start = max(head.rstrip().rstrip(".!?").rfind(c) for c in ".!?\n") + 1
            olds = [o for o in re.finditer(rf"(?<![\w.-])(?P<old>{_AGAIN_VALUE})", head)
                    if o.start() >= start]
        olds = [o for o in olds if o.group("old") != new and (
            (number_value(o.group("old")) is not None and not o.group("old")[0].isdigit())
            == spelled) and (spelled or value_unit(o.group("old")) == value_unit(new))]
        if not olds:
            continue
        old = olds[-1]
        new += m.group("scope") or ""
        text = head[:old.start("old")] + new + head[old.end("old"):].rstrip() + " " + \
            text[m.end():].lstrip()
    return text


#: Why the old value was said, after it where the writer takes it back: "- that was
#: before the audit,", "I gave you,".
_WHY_SAID = re.compile(r"^[ \t]*(?:[A-Za-z%]+\b)?[ \t]*(?:(?:i|we)[ \t]+(?:gave|said|wrote|"
                       r"quoted)(?:[ \t]+you)?)?[ \t]*[—–,;:-]*[ \t]*(?:(?:that|this|it)(?:'s|"
                       r"[ \t]+(?:is|was|were))[ \t]+[^,;—–\n]{0,60}?[ \t]*[—–,;-]+[ \t]*)?")


#: A clause that tells how things were or changed: "the window was cut back last quarter".
_HISTORY = re.compile(r"\b(?:was|were|used[ \t]+to|ago|last[ \t]+(?:year|quarter|month|week|"
                      r"spring|summer|autumn|fall|winter|time))\b", re.IGNORECASE)


def _named_back(text: str) -> str:
    """A value the writer names again to take it back gives way to the one given for it
    where it was said ("kept for 60 days. Sorry, I said 60 - that was before the audit,
    the retention is 90 days now." reads "kept for 90 days."); the sentence that took it
    back goes when all it says beyond that is the new value again, and otherwise keeps
    what follows the take-back ("..., the window ends at 03:30 now and needs a CHG")."""
    for back in named_take_backs(text)[::-1]:
        rest = text[back.rest:back.end]
        rest = rest[_WHY_SAID.match(rest).end():]  # type: ignore[union-attr]
        # (the clause that says the new value again goes, and so does one that tells how
        # it changed, "the window was cut back last quarter"; the others stay)
        clauses = [c for c in re.split(r",[ \t]+|[ \t]+and[ \t]+", rest.strip().rstrip(".!?"))
                   if not re.search(rf"(?<![\w.:/@-]){re.escape(back.new)}(?![\w:/@+])", c)
                   and not _HISTORY.search(c) and not past_tense(c) and c.strip()]
        keep = ", ".join(clauses) + "." if clauses else ""
        keep = keep[:1].upper() + keep[1:]
        start, end = back.said
        text = (text[:start] + back.new + text[end:back.start].rstrip()
                + (" " + keep if keep else "") + text[back.end:]).replace("  ", " ")
    return text


#: A value scratched with nothing in its place: "Actually scratch the 2 seconds, that's
#: the old GK420s we got rid of."
_SCRATCHED_VALUE = re.compile(r"(?:^|(?<=[.!?])[ \t]+)(?:(?:actually|oh|wait|sorry|and)[ \t]*,?"
                              r"[ \t]+)?(?:scratch|scrap|forget|ignore|disregard|strike)[ \t]+"
                              r"(?:the|that|my)[ \t]+(?P<old>\d[\w.:%/-]*(?:[ \t]+[a-z]+)?)"
                              r"(?P<rest>[^.!?\n]*)[.!?]+", re.IGNORECASE)


def _scratched_values(text: str) -> str:
    """"..., then hold the feed button for 2 seconds to calibrate. Actually scratch the 2
    seconds, that's the old model." reads "...": the clause that said the scratched value
    goes with the sentence that scratches it, when that sentence gives no value in its
    place (:func:`_named_back` puts the one it gives)."""
    for m in list(_SCRATCHED_VALUE.finditer(text))[::-1]:
        old = m.group("old")
        said = [s for s in re.finditer(rf"(?<![\w.:/-]){re.escape(old)}\b", text[:m.start()])]
        unit = old.split()[1] if len(old.split()) > 1 else ""
        if not said or re.search(rf"(?<![\w.-])\d[\d.,:]*[ \t]*{re.escape(unit)}(?![\w.-]\w)"
                                 if unit else r"(?<![\w.-])\d[\d.,:]*(?![\w-])",
                                 m.group("rest"), re.IGNORECASE):
            continue  # (a new value of its kind is given: :func:`_named_back` puts it)
        at = said[-1].start()
        opens = [text.rfind(sep, 0, at) for sep in (", then ", ", and ", "; ", ". ", "\n")]
        start = max(opens)
        head_sep = next(sep for sep, o in zip((", then ", ", and ", "; ", ". ", "\n"), opens,
                                              strict=True) if o == start)
        end = min([e for e in (text.find(c, at) for c in (",", ";", ".", "\n")) if e >= 0] or
                  [m.start()])
        if start < 0 or head_sep in (". ", "\n"):
            continue  # (the whole sentence said it: the scrap-that readers decide)
        text = text[:start] + text[end:m.start()].rstrip() + " " + text[m.end():].lstrip()
    return text


def _apply_scrapped(text: str) -> str:
    """The message without statements the writer took back whole ("..., scrap that"):
    see :func:`optimizer.claims.scrapped_spans`."""
    for begin, end in scrapped_spans(text)[::-1]:
        text = text[:begin] + " " + text[end:].lstrip(" \t")
    return text


#: A clause asking (the "no" after it answers it: "Can guests print... no, only staff").
_ASKING = re.compile(r"(?:can|could|does|do|did|is|are|was|were|should|will|would|may|must|"
                     r"has|have)\b", re.IGNORECASE)


_MOVED_TO = re.compile(r"(?:it|that|this|they)\s+(?:was|were|has\s+been|have\s+been|got)\s+"
                       r"(?:moved|changed|cut|raised|lowered|shortened|extended|bumped|pushed|"
                       r"switched|shifted)\s+to\s+", re.IGNORECASE)


def _said_again(old: str, new: str) -> str | None:
    """What holds after "OLD... no, NEW" (None: read it as any retraction): not a question
    the "no" answers; "The label is Zebra... no, it's a Brother QL now" keeps the old
    clause's head; "Use Firefox... no, Chromium for the viewer" and "go to nas02.x.lan...
    no, nas03.x.lan" put a name or code for the one the old clause ended with; "... no;
    select X" says the clause again."""
    if _ASKING.match(old):
        return None
    # ("that was the old one, it was cut to '3s'": why the old value went, then the new)
    told = re.sub(r"^(?:that|this|it)(?:'s|\s+(?:is|was|were))\s+[^,.;]{0,40}?\b(?:old|previous|"
                  r"before|last\s+year|outdated|wrong)\b[^,.;]{0,20},\s*", "", new,
                  flags=re.IGNORECASE)
    moved = _MOVED_TO.match(told)
    value = re.match(r"['\"]?(" + _CODE + r")", told[moved.end():]) if moved else None
    if value:  # "lock_timeout = '10s' at the top, wait no, it was cut to '3s' after X"
        same = [t for t in re.finditer(r"(?<![\w.:/@-])(?:" + _CODE + r")", old)
                if _same_shape(t.group(0), value.group(1))]
        if same:
            return old[:same[-1].start()] + value.group(1) + old[same[-1].end():]
    said = re.match(r"(?:it|that|they)(?:'s|'re|\s+is|\s+are)\s+", new, re.IGNORECASE)
    head = _COPULA_HEAD.match(old)
    if said and head:
        return head.group(1) + " " + new[said.end():]
    last = re.search(r"(?<![\w.:/@-])(?:" + _CODE + r")$", old)
    first = re.match(_CODE, new)
    if last and first and last.start() > 0 and not _FINITE.search(new) and (
            _same_shape(last.group(0), first.group(0))
            or (last.group(0)[0].isupper() and first.group(0)[0].isupper())):
        return old[:last.start()] + new
    if re.match(r"[a-z]+\s+\S", new):
        return new[0].upper() + new[1:]
    return None


def _apply_retractions(text: str) -> str:
    def restate(m: re.Match[str]) -> str:
        if m.group("loud"):
            said = _said_again(m.group("old").strip(),
                               _VOUCHED_TAIL.sub("", m.group("new").strip()))
            if said is not None:
                return m.group("start") + said
            if _ASKING.match(m.group("old").strip()):
                return m.group(0)
        new = _VOUCHED_TAIL.sub("", m.group("new").strip())
        why = _WHY_OLD.match(new)
        if why:
            new = new[why.end():]
        old = m.group("old").strip()
        # ("sets Pin-Priority: 100 - no sorry, -10 - for backports": a number for the one
        # the clause ended with, the sign included, and the clause goes on after it)
        value = re.match(r"(?P<v>[-+]?\d[\w.:%/]*)(?P<rest>(?:[ \t]*[—–-]+[ \t]+|[ \t]*$|,)"
                         r"[^\n]*)$", new)
        last = re.search(r"(?<![\w.-])[-+]?\d[\w.:%/]*$", old)
        if value and last and value_unit(value.group("v").lstrip("-+")) == value_unit(
                last.group(0).lstrip("-+")):
            rest = re.sub(r"^[ \t]*[—–-]+[ \t]*", " ", value.group("rest"))
            return m.group("start") + old[:last.start()] + value.group("v") + rest
        lead = re.match(r"[A-Za-z]+\b", new)
        at = [w for w in re.finditer(rf"\b{lead.group(0)}\b", old, re.IGNORECASE)] \
            if lead and _COMPLEMENT.match(new) else []
        if at and at[-1].start() > 0:
            # "which is every 15 minutes — sorry, every 30 minutes": the new value said in
            # the old one's words takes its place
            return m.group("start") + old[:at[-1].start()] + _WHY_NEW.sub("", new)
        if m.group("sorry"):
            return m.group(0)
        if why or _COMPLEMENT.match(new):
            # "It's Tuesdays 18:00 - no wait, that was last year, it moved - Thursdays
            # 18:00", "they run every hour - no wait, every 2 hours" keep the old clause's
            # head before the new value: "It's Thursdays 18:00", "they run every 2 hours"
            old = m.group("old").strip()
            head = _COPULA_HEAD.match(old)
            if head and not _FINITE.search(new):
                # ("Starts at 16:00 -- no wait, 15:30": the preposition goes with the value)
                prep = re.match(r"\s*((?:at|on|in|from|by|until|after|before|every|each)\b)",
                                old[head.end(1):], re.IGNORECASE)
                if prep and not re.match(r"[a-z]", new, re.IGNORECASE):
                    return m.group("start") + f"{head.group(1)} {prep.group(1)} {new}"
                return m.group("start") + head.group(1) + " " + new
        if len(tokens(new)) < 3:
            return m.group(0)  # "10, no sorry, 14": a value repair (see _INLINE_REPAIR)
        return m.group("start") + new[0].upper() + new[1:]
    return _RETRACTED.sub(restate, text)


# "every ninety days - sorry, a hundred and twenty days": a repair in words.
_WORD_REPAIR = re.compile(r"\b(" + WORD_NUMBER + r"|\d+)[ \t]+([a-z]+)[ \t]*(?:[-–—,(;][ \t]*)?"
                          r"(?:" + _REPAIR_WORDS + r")[ \t]*[:,]?[ \t]*(" + WORD_NUMBER
                          + r"|\d+)[ \t]+([a-z]+)\b", re.IGNORECASE)


def _word_repair(m: re.Match[str]) -> str:
    old, old_unit, new, new_unit = m.groups()
    value = number_value(new)
    if (old.isdigit() and new.isdigit()) or value is None or \
            old_unit.lower().rstrip("s") != new_unit.lower().rstrip("s"):
        return m.group(0)  # (digits on both sides: the inline repair's)
    return f"{value} {new_unit}"


# "CONNECTION LIMIT ninety — sorry, one hundred and twenty — out of", "gets three — no,
# two gigabytes": a number in words repaired without a unit of its own.
_BARE_WORD_REPAIR = re.compile(r"\b(" + WORD_NUMBER + r")[ \t]*[-–—,;][ \t]*(?:(?:no|nope)\b"
                               r"[ \t]*,?[ \t]*)?(?:" + _REPAIR_WORDS + r"\b[ \t]*[:,]?[ \t]*)?"
                               r"(?<=[\s,:])(" + WORD_NUMBER + r")\b(?:[ \t]*[-–—](?=[ \t]+\w))?",
                               re.IGNORECASE)


def _bare_word_repair(m: re.Match[str]) -> str:
    between = m.group(0)[len(m.group(1)):m.start(2) - m.start()]
    if not re.search(r"\b(?:no|nope|sorry|i mean|i meant|correction|make that|wait|or rather|"
                     r"rather)\b", between, re.IGNORECASE):
        return m.group(0)  # "one, two, three": a list, not a repair
    value = number_value(m.group(2))
    return m.group(0) if value is None else str(value)


#: A port repaired by its own: "[mx-01]:587 — no sorry, :25, I mixed it up" (the
#: aside saying why goes too).
_PORT_REPAIR = re.compile(r"(?<=[\w\]]):(?P<old>\d{1,5})[ \t]*[-–—,(;][ \t]*(?:no[ \t]*,?[ \t]*)?"
                          r"(?:sorry|i mean|i meant|no wait|wait|correction|make that|"
                          r"rather)[ \t]*[:,]?[ \t]*:(?P<new>\d{1,5})\b\)?"
                          r"(?:,[ \t]*i[ \t]+(?:mixed|got|had|mis)[^.!?\n—–]*)?", re.IGNORECASE)


#: A number said in words, then written as the writer meant it: "at three fifteen, I mean
#: 03:15," (dictation), "after twenty, sorry, 21 days".
_WORDS_THEN_DIGITS = re.compile(r"\b" + WORD_NUMBER + r"[ \t]*,?[ \t]*(?:i[ \t]+mean|i[ \t]+meant|"
                                r"sorry|or[ \t]+rather)[ \t]*,?[ \t]*(?P<new>\d[\d:.]*\d|\d)\b"
                                r",?", re.IGNORECASE)


#: A value taken back across sentences: "emptied after 14 days... sorry, no, that was the
#: old build. It's 30 days now" (the same unit again, after the repair's own words).
_SENTENCE_REPAIR = re.compile(
    r"\b(?P<old>\d+(?:[.,]\d+)?)(?P<unit>[ \t]+[A-Za-z]+)(?:[ \t]*(?:\.{2,}|\u2026)|"
    r"[ \t]*[\u2014\u2013]|[ \t]+-)[ \t]*(?i:sorry|oops|wait)[,!]?[ \t]+"
    r"(?i:no|my\s+bad|scratch\s+that)[,.;!]?[ \t]+"
    r"(?:(?i:that\s+(?:was|is|'s)|i\s+was\s+thinking\s+of)[ \t]+[^.!?\n]{1,60}[.!?;][ \t]+)?"
    r"(?i:it's|it\s+is|they're|they\s+are|make\s+that|i\s+mean)[ \t]+"
    # (the new value ends its clause: "... they are 6 months for contractors" is no repair)
    r"(?P<new>\d+(?:[.,]\d+)?)(?P<unit2>[ \t]+[A-Za-z]+)\b(?=[ \t]*(?:now\b|[.,;!]|$))")


def _sentence_repair(m: re.Match[str]) -> str:
    if m.group("unit").strip().lower() != m.group("unit2").strip().lower():
        return m.group(0)
    return f"{m.group('new')}{m.group('unit2')}"


#: A word repaired after its preposition said again: "remapped to the sip snipping tool
#: sorry to the Snip tool".
_PREP_REPAIR = re.compile(r"\b(?P<prep>to|in|on|at|from|into|under|with)[ \t]+"
                          r"(?P<old>(?:the[ \t]+)?[\w-]+(?:[ \t]+[\w-]+){0,3}?)[ \t]*,?[ \t]+"
                          r"(?i:sorry|I[ \t]+mean)"
                          r",?[ \t]+(?P=prep)[ \t]+(?=\S)", re.IGNORECASE)


#: A value repaired by starting the next sentence again with the new one: "Laptops are
#: fine, twenty minutes on battery. Er, thirty, sorry, thirty minutes on battery, and
#: never when plugged in." (what goes: the old value to the new one, said in full).
_RESTARTED_VALUE = re.compile(
    r"\b(?:" + WORD_NUMBER + r"|\d+(?:[.,]\d+)?)[ \t]+(?P<unit>[a-z]+)\b[^.!?\n]{0,60}[.!?][ \t]+"
    r"(?:(?:er|erm|um|uh|oh)[,.]?[ \t]+)?(?:" + WORD_NUMBER + r"|\d+(?:[.,]\d+)?)[ \t]*,?[ \t]*"
    r"(?:sorry|i[ \t]+mean|i[ \t]+meant)[ \t]*,?[ \t]*"
    r"(?=(?:" + WORD_NUMBER + r"|\d+(?:[.,]\d+)?)[ \t]+(?P=unit)\b)", re.IGNORECASE)


def apply_self_corrections(message: str) -> str:
    """The message with the writer's own repairs applied: "valid 30 days — sorry, 14
    days" reads "valid 14 days", and so does "valid 30 days... sorry, no, that was the
    old build. It's 14 days now"; an "edit: 60 days, not 90" note replaces 90 days where
    the message said it, and goes."""
    message = _PREP_REPAIR.sub(lambda m: f"{m.group('prep')} ", _scratched_values(
        _named_back(statement_taken_back(message)[0])))
    message = _RESTARTED_VALUE.sub("", message)
    message = _SENTENCE_REPAIR.sub(_sentence_repair, message)
    message = _PORT_REPAIR.sub(lambda m: f":{m.group('new')}", message)
    message = _WORDS_THEN_DIGITS.sub(lambda m: m.group("new"), message)
    text = message = _BARE_WORD_REPAIR.sub(_bare_word_repair,
                                           _WORD_REPAIR.sub(_word_repair, message))
    for m in list(_INLINE_REPAIR.finditer(message))[::-1]:
        old_unit, new_unit = (m.group(2) or "").strip(), (m.group(4) or "").strip()
        rest = text[m.end():]
        if "(" in m.group(0) and not m.group(0).endswith(")"):
            # "(edit: 8 weeklies, Rosa changed it in January)": the whole aside goes
            close = re.match(r"[^()\n]*\)", rest)
            rest = rest[close.end():] if close else rest
        head = text[:m.start()]
        said = list(re.finditer(rf"\b{_INLINE_VALUE}(?=[ \t]+{re.escape(new_unit)}\b)", head,
                                re.IGNORECASE)) if old_unit and new_unit and \
            old_unit.lower() != new_unit.lower() else []
        if said:
            # "4 weeklies, 12 monthlies (edit: 8 weeklies)": the repair is of the
            # weeklies said before, not of the value it follows.
            last = said[-1]
            text = (head[:last.start()] + m.group(3) + head[last.end():]
                    + f"{m.group(1)}{m.group(2)}" + rest)
            continue
        # (a new value with its own unit keeps it: "15 min - no sorry, 20min")
        unit = m.group(4) or ("" if re.search(r"\d[a-z%]+$", m.group(3), re.IGNORECASE)
                              else m.group(2)) or ""
        # ("ext 2214 — sorry, 2241, 2214 is the kitchen lol — or Tomasz": why the old
        # value was wrong goes with it, up to the dash that closes the aside)
        why = re.match(rf"[ \t]*,[ \t]*{re.escape(m.group(1))}[ \t]+(?:is|was|'s)\b[^.!?\n—–]*?"
                       r"[ \t]*[—–]+[ \t]*", rest)
        if why is None and re.search(r"[ \t](?:[—–]|--)[ \t]*\D", m.group(0)):
            # ("00:30 — sorry, 00:45, we moved it last year — and writes ...": a repair
            # opened by a dash; the reason up to the dash that closes it goes too)
            why = re.match(r"[ \t]*,[ \t]*[^.!?\n—–]{1,100}?[ \t]+(?:[—–]+|--)[ \t]*", rest)
        if why:
            rest = " " + rest[why.end():]
        text = head + f"{m.group(3)}{unit}" + rest
    text = _ADDRESS_REPAIR.sub(lambda m: m.group("new"), text)
    text = _MOVED_REPAIR.sub(lambda m: m.group("new") + (", " if (m.group("why") or "").rstrip(
        ).endswith(("—", "–")) else "") if _same_shape(m.group("old"), m.group("new"))
        else m.group(0), text)
    for repair in (_CODE_REPAIR_WHY, _CODE_REPAIR_REASON):
        text = repair.sub(lambda m: m.group("new") if _same_shape(
            m.group("old"), m.group("new")) else m.group(0), text)
    for _ in range(3):  # ("2222 - no wait, 2202, sorry, 2202": a repair, then its echo)
        repaired = _CODE_REPAIR.sub(_code_repair, text)
        if repaired == text:
            break
        text = repaired
    text = _CHECKED_AT_ONCE.sub(_checked_at_once, _SELF_CONFIRMED.sub("", text))
    text = _RESTATED.sub(_restated, text)
    text = _apply_retractions(_apply_scrapped(_values_given_again(text)))
    text = _apply_repair_sentences(_apply_edit_sentences(text))
    for m in list(_EDIT_NOTE.finditer(text)):
        new, unit, old = m.group(1), (m.group(2) or "").strip(), m.group(3)
        head = text[:m.start()]
        pattern = rf"\b{re.escape(old)}(?=\s+{re.escape(unit)}\b)" if unit else \
            rf"\b{re.escape(old)}\b"
        if re.search(pattern, head):
            text = re.sub(pattern, new, head) + " " + text[m.end():].lstrip()
    return text.strip()


#: The writer's obligation told as a story, naming what it was: "I had to request
#: 'Language Pack DE' from the Service Desk" states the way it is done.
_HAD_TO = re.compile(r"^(?:i|we)\s+(?:had|needed)\s+to\s+(?P<verb>request|ask|order|book|file|"
                     r"raise|submit|log|open|use|call|ring|email|e-mail|contact|fill\s+in|"
                     r"fill\s+out|install|enable|select|pick|choose|get)\b(?P<rest>[^.!?]*)",
                     re.IGNORECASE)


def obligation_as_rule(sentence: str) -> str:
    """"I had to request 'Pack DE' from the Service Desk." reads "You have to request
    'Pack DE' from the Service Desk.": the way it is done, when what it names is a named
    form, item or place (a quoted string or a name); the sentence as it is otherwise."""
    m = _HAD_TO.match(sentence.strip())
    if m is None or re.search(r"\b(?:because|when|after|before|until|but|since)\b",
                              m.group("rest"), re.IGNORECASE) or not any(
            i.kind in ("quoted", "name", "email", "url", "dotted", "tech")
            for i in items(m.group("rest"))):
        return sentence
    return f"You have to {m.group('verb').lower()}{m.group('rest').rstrip()}" + \
        sentence.strip()[m.end():]


def strip_frame(sentence: str) -> str:
    """The sentence without a frame that reports someone's words as the fact ("Our
    manager told me that X" -> "X"; "The reason they gave me is X" -> "The reason is
    X"); the writer's obligation as the rule it shows (:func:`obligation_as_rule`)."""
    s = obligation_as_rule(_GIVEN_BY.sub("", sentence.strip()))
    m = _FRAME.match(s)
    # ("But while we were digging, Mirela pointed out to me that X", "Sally said at
    # induction last night that X", "what I found out from Tomasz is that X")
    r = _REPORTED.match(s)
    if r and not _ANSWER_SUBJECT.search(s[:r.start("verb")]) and (
            not m or r.end() > m.end()):
        m = r
    if not m or len(tokens(s[m.end():])) < 3:
        return s
    rest = s[m.end():]
    if re.search(r"\bthat\s*$", m.group(0), re.IGNORECASE):
        # "he confirmed that X, but that Y": the reported clauses without their "that"
        rest = re.sub(r"(,\s*(?:and|but))\s+that\s+(?=\w)", r"\1 ", rest)
    return rest


#: "Dear all, please be advised that X": a greeting before the first clause.
# (its comma may be a dash: "Salut — Radu from Stackhaven here")
_LEADING_GREETING = re.compile(r"^" + _HELLO + r"(?:\s+sir\s+or\s+madam|(?:\s+[\w.-]+){0,2})\s*"
                               r"(?:,|[\u2014\u2013]|\s-(?=\s))\s*(?=\S)", re.IGNORECASE)


def without_asides(sentence: str) -> str:
    """The sentence without asides that only tell the writer's story or stance ("(last
    time that was 11 minutes of failed payments)", ", as I understand it:")."""
    return _ASIDE.sub("", sentence)


def without_greeting(sentence: str) -> str:
    """The sentence without a greeting before its first clause ("Dear Sir or Madam, I
    hope ..." -> "I hope ...")."""
    return _LEADING_GREETING.sub("", sentence.strip())


#: "@tomasz for new tables ...": a mention that addresses someone, not the subject of the
#: clause after it ("@dp-oncall gets paged first", "@ops owns the list" keep it).
#: The people a message is addressed to, and the "fyi" after them: "@osman @hattie fyi".
_MENTION_LEAD = re.compile(r"^(?:@[\w.-]+\s*[,:]?\s+(?:(?:and|&)\s+)?)+(?:(?:fyi|cc|re)\b[,:]?\s+)?"
                           r"(?=(\S+))", re.IGNORECASE)


def strip_mention(sentence: str) -> str:
    """The sentence without the people it is addressed to ("@osman @hattie fyi X": X),
    unless the name is its subject ("@kai runs the backups")."""
    m = _MENTION_LEAD.match(sentence)
    if not m:
        return sentence
    nxt = m.group(1).lower().strip(",.;:")
    verb = nxt in _VERBS or nxt in MODALS or (
        len(nxt) > 3 and nxt.endswith("s") and not nxt.endswith(("ss", "us", "is")))
    rest = sentence[m.end():]
    return sentence if verb or len(tokens(rest)) < 3 else rest[0].upper() + rest[1:]


#: The writer saying who they are before the fact: "It's Dario from the stage door...",
#: "This is Priya, company manager on the tour.", "Morag here from the Leith desk -",
#: "I'm Kofi, the night DBA.". A capitalized name after "I'm", or with where the writer
#: is from, or "here", or (after "this is") a role; "It's Postgres." and "This is
#: Kestrel, the new backup server." state values and stay.
_NAME = r"[A-Z][a-z\u00e0-\u00ff'\u2019-]+(?:\s+[A-Z][a-z\u00e0-\u00ff'\u2019-]+)?"
_WHENCE = (r"\s+from\s+(?!(?i:now|today|tomorrow|tonight|then|next|last|this|that|\w+day)\b)"
           r"(?:the\s+|our\s+)?[^,.;:!?\u2026\d]{1,40}?")
_FROM = r"(?:" + _WHENCE + r"|\s+(?:at|in|on|with|of)\s+(?:the\s+|our\s+)?[^,.;:!?\u2026\d]{1,40}?)"
_ROLE = (r",\s*(?!(?i:not|no|and|but|or|so|which|who|where|then|the\s+one)\b)"
         r"(?P<role>(?:the\s+|a\s+|an\s+|your\s+|our\s+)?[a-z][\w &'/-]{1,50}?)")
_END = r"(?:\s*(?:[.!\u2026]+|[;:]|\s[\u2014\u2013-])\s*|\s*$)"
_INTRODUCES = [
    re.compile(r"^(?i:i'm|i\s+am|my\s+name\s+is),?\s+" + _NAME + r"(?:" + _FROM + r"|"
               + _ROLE + r")?(?:" + _END + r"|,\s*)"),
    re.compile(r"^(?i:this\s+is|it's|it\s+is),?\s+" + _NAME + r"(?:" + _WHENCE
               + r"|\s+(?i:here))(?:" + _END + r"|,\s*)"),
    re.compile(r"^(?i:this\s+is),?\s+" + _NAME + _ROLE + _END),
    re.compile(r"^" + _NAME + r"\s+(?i:here)(?:" + _FROM + r")?(?:" + _END + r"|,\s*)"),
    # ("its Jo (CN) - fyi ...": a name with the team in brackets, typed without "'")
    re.compile(r"^(?i:it's|its|it\s+is)\s+" + _NAME + r"\s*\([^()\n]{1,20}\)[ \t]*(?:[-–—,:]+"
               r"[ \t]*(?:(?i:fyi|btw)\b[ \t,:-]*)?|[.!]\s*|$)"),
]
_ROLE_VERBS = frozenset("is are was were be can can't must will do does don't has have "
                        "should need needs goes runs uses".split())


#: Nouns in -er/-or that name things, not people ("the new backup server").
_THINGS_IN_ER = frozenset("""server servers computer printer router scanner controller folder
driver browser container cluster monitor adapter reader player charger filter counter
header footer timer buffer compiler editor sensor processor connector selector""".split())


def _job_title(phrase: str) -> bool:
    """"night porter at the east gate", "company manager on the tour": a person's role
    (a role word, or a noun in -er/-or/-ist/-ian/-ant that is not a thing's name)."""
    head = re.split(r"\s+(?:at|on|in|for|of|from|with)\s+", phrase.strip())[0]
    words = tokens(head)
    if not words:
        return False
    last = words[-1]
    return any(i.kind == "role" for i in items(head)) or (
        last.endswith(("er", "or", "ist", "ian", "ant")) and last not in _THINGS_IN_ER)


def strip_self_introduction(sentence: str) -> str:
    """The sentence without the writer introducing themselves at its start ("" when
    nothing else is in it); an introduction that names a concrete item stays."""
    text = re.sub(r"^(?i:ok(?:ay)?|so|well|yeah|yes|um|uh|erm|right)\b[,\s]*", "",
                  sentence.strip())
    text = _LEADING_GREETING.sub("", text)
    for rx in _INTRODUCES:
        m = rx.match(text)
        if m is None or _strong(m.group(0)):
            continue
        role = m.groupdict().get("role")
        if role and (set(tokens(role)) & _ROLE_VERBS or (
                rx is _INTRODUCES[2] and not _job_title(role))):
            continue
        if rx is _INTRODUCES[1] and not tokens(text[m.end():]) and \
                m.group(0).lower().startswith("it"):
            continue  # "It's Nextcloud from the IT portal.": a value, with nothing after it
        return text[m.end():]
    return sentence.strip()


#: A condition at the end of a clause, whose consequence is the next clause.
DANGLING_CONDITION = re.compile(r"\s*[—–-]+\s*(?:if|when|unless)\b[^,;—–]*$", re.IGNORECASE)
#: A clause that is only a condition ("if you get them"): with nothing after it, it goes.
CONDITION_ONLY = re.compile(r"\s*(?:if|when|unless)\b[^,;—–]*[.!]?\s*", re.IGNORECASE)
#: An operator standing alone between commas.
_OPERATOR = re.compile(r"\s*(?:[<>]=?|[!=~]=|={1,3}|@[>?@]|<@|&&|\|\||[-+*/%^])\s*")


def _kept_after(clauses: list[str], i: int) -> bool:
    """Whether a clause after the ``i``-th says something (is no talk)."""
    return any(c.strip() and not residue(c) for c in clauses[i + 1:])


def strip_residue(sentence: str) -> str:
    """The sentence without its conversational clauses (see the module docstring);
    "" when nothing factual is left."""
    s = _LEADING_GREETING.sub("", sentence.strip())
    attitude = ATTITUDE_START.match(s)
    if attitude and len(tokens(s[attitude.end():])) >= 3:
        s = s[attitude.end():]  # "Sadly the cold room is not logged": the writer's attitude
    introduced = strip_self_introduction(s)
    if introduced != s:  # "Yeah hi, this is Priya, company manager on the tour."
        if not tokens(introduced):
            return ""
        s = introduced
    s = BOT_TAIL.sub(".", strip_frame(_ASIDE.sub("", strip_mention(s))))
    bare = re.sub(r"^(?:right|sure|yeah|oh|well|ah|ha|lol)\s*[,.!]*\s+", "",
                  strip_discourse(_LEAD.sub("", s)), flags=re.IGNORECASE)
    if _RETORT.match(bare) and not re.search(r"[,;:]", bare):
        return ""  # "Right, because Debian is famous for never rotating anything."
    # "I tried all of that and still nothing": the outcome of the story is talk too.
    s = re.sub(r",?\s+(?:and|but)\s+(?:still\s+)?nothing(?:\s+happened)?\s*(?=[.!]*$)", "", s,
               flags=re.IGNORECASE)
    agree = _AGREE.match(s)
    if agree and len(tokens(s[agree.end():])) >= 3:
        s = s[agree.end():]
    parts = _SEPARATORS.split(s)
    clauses, seps = parts[0::2], parts[1::2]
    kept: list[tuple[str, str]] = []  # (separator before it, clause)
    story = dropped_story = False
    carried = ""  # the scope of a dropped elliptical reply, for the clause after it
    before_story: list[str] = []
    dropped_if = False  # the clause before was a condition that went
    for i, clause in enumerate(clauses):
        sep = seps[i - 1] if i else ""
        if not clause.strip():
            continue
        if sep.strip().startswith(":") and kept and _label(" ".join(c for _, c in kept)):
            kept = []  # "For the next person: X" -> "X"
        # (a capital after a comma names a thing: "Power Saver on the road, Balanced when
        # docked" is no story told in the past)
        named = re.match(r"[ \t]*[A-Z][a-z]+ed\b", clause) if i > 0 and sep.startswith(",") \
            else None
        why = residue("It" + clause[named.end():] if named else clause,
                      first=not kept and i == 0)
        if why == "a signature" and sep.strip().startswith(":"):
            why = ""  # ("protocol: Remote Desktop (RDP)": a label's value, no byline)
        if not why and dropped_if and len(tokens(clause)) <= 3 and re.search(
                r"\b(?:us|me)\b", clause, re.IGNORECASE) and not _strong(clause):
            why = "verdict"  # ("..., so if yours is different, tell us": whom to tell goes
            # with the condition it answers)
        dropped_if = bool(why) and bool(re.search(r"\bif\b", clause, re.IGNORECASE))
        if _OPERATOR.fullmatch(clause):
            why = ""  # "can't serve <, <=, >, >= though": an item of a list of operators
        if why == "the writer's own story or opinion" and kept and sep.strip(" ,").lower() in (
                "and", "or", "nor") and re.match(
                r"^(?:the|a|an|our|its|their|his|her)\b", clause.strip(), re.IGNORECASE):
            why = ""  # "the booklet, and the help page when I looked, both say": a conjunct
        # After the writer's story, what continues it ("that was the real problem, now
        # it runs fine") is the story too.
        if not why and story and re.match(r"^(?:it|that|this|now|then|and|so|\w+ing)\b",
                                          clause.strip(), re.IGNORECASE) and not _strong(
                clause) and not any(t in _SCOPE for t in tokens(clause)):
            why = "the writer's own story or opinion"
        story = why in ("the writer's own story or opinion", "the writer's effort") or (
            story and bool(why))
        if why:
            if story and not dropped_story:
                before_story = [c for _, c in kept]
            dropped_story = dropped_story or story
            carried = reply_scope(clause) or carried
            if kept and kept[-1][1] == clauses[i - 1] and not _kept_after(clauses, i) and (
                    CONDITION_ONLY.fullmatch(kept[-1][1])
                    or DANGLING_CONDITION.search(kept[-1][1])):
                # ("... not to individuals — if you get them personally, your alias is
                # wrong": the condition goes with what it was the condition of)
                head = DANGLING_CONDITION.sub("", CONDITION_ONLY.sub("", kept[-1][1])
                                              if CONDITION_ONLY.fullmatch(kept[-1][1])
                                              else kept[-1][1])
                kept[-1:] = [(kept[-1][0], head)] if head.strip() else []
            continue
        clause = _OUTCOME.sub("", clause.strip()) or clause
        if carried:
            # "Can't go that high on company laptops: the delay is capped at 5 minutes"
            # -> "On company laptops, the delay is capped at 5 minutes".
            clause, carried = scoped(carried, clause), ""
        kept.append((sep if kept else "", clause))
    if dropped_story:
        # What is left of a story before it ("Back from the match, tried this ...") is
        # not a fact either: a short verbless fragment naming nothing.
        # ("Off the night shift": a place or time the writer came from has no verb even
        # when one of its nouns could be one.)
        kept = [(sep, c) for sep, c in kept if c not in before_story or _strong(c) or items(c)
                or (not re.match(r"(?i)(?:fresh\s+|just\s+)?(?:off|back|after|from|out\s+of)"
                                 r"\s+(?:the|a|my|our|work|lunch|leave)\b", c) and (
                    _states_rule(c) or len(tokens(c)) > 6 or set(tokens(c)) & _VERBS))]
    if not kept:
        return ""
    out = re.sub(r"^[-\u2013\u2014]+\s+", "", "".join(sep + clause for sep, clause in kept)
                 .strip(" ,;:"))
    out = _EMOJI_RUN.sub("", out)
    # ("... photos on it (!!)": a gasp; "(?)" may be the operator it names)
    out = re.sub(r"\s*\([ \t]*(?:!+|[!?]{2,})[ \t]*\)", "", out)
    out = re.sub(r"\s*(?:!{2,}|\?{2,}[!?]*)", ".", out).strip()  # ("... anymore??": a statement)
    out = _LEAD.sub("", out)
    if _COMPLEMENTIZER.match(out):
        out = _COMPLEMENTIZER.sub("", out)
        out = re.sub(r"(,\s*(?:and|but))\s+that\s+(?=\w)", r"\1 ", out)  # ", and that Y"
    out = _PARTICLE_O.sub("", out)
    note = _NOTE.match(out)
    if note and len(tokens(out[note.end():])) >= 4:
        out = out[note.end():]
    return second_person(out) if len(tokens(out)) >= 2 else ""
