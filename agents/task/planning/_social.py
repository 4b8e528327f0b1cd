"""The social words around a lab request: greetings, thanks, praise, apologies, hedges, sign-offs.

People write to Labwright as they write to a colleague ("Hi! Hope you're well. Could you ...?
Thanks so much, Sam"). These words ask for nothing, so they must neither become a clause the
planner "did not understand" nor hide one that asks for something. Three things here:

- :data:`PLEASANTRY` matches a clause made only of such phrases (one or several, joined by
  commas or "and"), with an optional name after a sign-off ("Many thanks, Sam"). A clause
  with any other word does not match, so no action can be taken for a pleasantry.
- :data:`LEAD` matches the polite openings before a verb ("would it be possible to",
  "what I need is", "go ahead and").
- :data:`TAIL` matches the hedges after what is asked ("..., if that's ok", "... when you get
  a moment", "... for me please").
"""

from __future__ import annotations

import re

_FLAGS = re.IGNORECASE

_YOU = r"(?:you(?:'re|\s+are)|u\s+r|ur)"
# Who is asked to do the work: the reader of the request, or the machine.
_AGENT = (
    r"(?:you|u|it|labwright|the\s+(?:robot|system|machine|instrument|deck|star|setup|platform|"
    r"(?:liquid[\s-]+)?handler|pipetting\s+robot))"
)
_MOMENT = r"(?:a\s+)?(?:chance|moment|minute|sec(?:ond)?|spare\s+minute|bit\s+of\s+time)"
_NICE = (
    r"(?:amazing|awesome|great|lovely|brilliant|perfect|wonderful|fantastic|fab|super|"
    r"(?:super\s+|really\s+|very\s+)?helpful|much\s+appreciated|a\s+(?:big\s+|huge\s+)?help|"
    r"ideal|excellent|grand)"
)
# One social phrase, as a regex alternation (no anchors).
_PHRASE = "|".join(
    [
        # greetings
        r"(?:hi|hello|hey|hiya|heya|yo|greetings|howdy|dear\s+(?:labwright|robot|team|all))"
        r"(?:\s+(?:there|team|folks|all|everyone|guys|y'?all|labwright|robot|again))*",
        r"(?:good\s+)?(?:morning|afternoon|evening|day)(?:\s+(?:team|folks|all|everyone|there))?",
        # how someone is
        r"(?:i\s+)?hope\s+(?:" + _YOU + r"(?:\s+doing)?|all\s+is|everything\s+is|things\s+are|"
        r"your\s+(?:day|week|morning|afternoon|shift)\s+is(?:\s+going)?|this\s+finds\s+you)"
        r"\s+(?:well|good|great|fine|ok(?:ay)?|going\s+well)(?:\s+today)?",
        r"how\s+(?:are\s+you|is\s+it\s+going|are\s+things)(?:\s+doing)?(?:\s+today)?|how'?s\s+it\s+going",
        # thanks
        r"(?:(?:many|big|huge)\s+)?(?:thanks?|thank\s+you|thx|tnx|ty|cheers|ta|merci|danke)"
        r"(?:\s+(?:so|very|a|again|in\s+advance|much|a\s+lot|a\s+bunch|a\s+ton|heaps|loads|"
        r"a\s+million|a\s+mil|kindly|mate|buddy|friend|"
        r"for\s+(?:this|that|the\s+help|your\s+help|helping)))*",
        r"(?:(?:really|much|greatly|very\s+much)\s+)?appreciated?(?:\s+(?:it|this|that|"
        r"your\s+help))?(?:\s+(?:so|very|a\s+lot|much))*",
        r"(?:i|we)(?:'d|\s+would)?\s+(?:really\s+|truly\s+|greatly\s+)?appreciate\s+"
        r"(?:it|this|that|the\s+help|your\s+help)"
        r"(?:\s+(?:a\s+lot|so\s+much|very\s+much))?",
        r"(?:please\s+and\s+)?thank\s+you(?:\s+(?:so|very)\s+much)?",
        # praise
        _YOU + r"\s+(?:a\s+(?:star|legend|lifesaver|life\s+saver|gem|hero)|the\s+best|amazing|"
        r"awesome|great|brilliant)",
        r"(?:that|this|it)(?:'d|\s+would|'ll|\s+will)\s+be\s+" + _NICE,
        _NICE,
        r"(?:ok(?:ay)?|cool|nice|good|great|sounds\s+good|done|that'?s\s+(?:it|all)|"
        r"that\s+is\s+(?:it|all)|all\s+good|no\s+problem|np)",
        # apologies
        r"(?:so\s+)?(?:sorry|apologies)(?:\s+(?:to\s+(?:bother|trouble|pester|bug)\s+you|"
        r"for\s+(?:the\s+)?(?:late|short|last[\s-]minute)\s+(?:notice|request)|"
        r"for\s+(?:the\s+)?(?:trouble|bother|hassle|rush|inconvenience)|again|in\s+advance))*",
        # hedges about time and manner
        r"(?:there'?s\s+)?no\s+(?:rush|hurry|pressure|stress)(?:\s+(?:on\s+(?:this|it)|at\s+all))?",
        r"no\s+worries(?:\s+if\s+(?:not|(?:you\s+)?can'?t|(?:that'?s|it'?s|that\s+is|it\s+is)\s+not\s+"
        r"(?:possible|doable|feasible)))?",
        r"(?:when|whenever)\s+(?:you\s+(?:get|have|find)\s+" + _MOMENT + r"|you\s+can|"
        r"(?:it'?s\s+)?convenient|(?:you'?re\s+)?free|possible)",
        r"if\s+(?:that'?s|that\s+is|it'?s|it\s+is)\s+(?:ok(?:ay)?|alright|all\s+right|fine|"
        r"possible|not\s+too\s+much\s+trouble)",
        r"if\s+(?:possible|you\s+(?:can|could|don'?t\s+mind|do\s+not\s+mind|have\s+time|"
        r"get\s+" + _MOMENT + r"))",
        r"at\s+your\s+(?:convenience|earliest\s+convenience)|asap|"
        r"as\s+soon\s+as\s+(?:possible|you\s+can)",
        r"(?:just\s+)?(?:go\s+ahead|carry\s+on|go\s+for\s+it)",
        r"(?:a\s+)?quick\s+(?:one|favou?r|request|thing|job|ask)|one\s+more\s+thing|"
        r"(?:a\s+)?small\s+(?:favou?r|request)",
        # asking for what the other sentences say ("Could you sort that out?") and opening
        # it ("OK here's the plan.")
        r"(?:(?:could|can|would|will)\s+(?:you|u)\s+(?:please\s+)?|please\s+)?"
        r"(?:sort|do|handle|manage|take\s+care\s+of|set|get|organi[sz]e|deal\s+with)"
        r"\s+(?:that|this|it|these|those|them)(?:\s+(?:out|up|done|for\s+(?:me|us)|today|"
        r"tomorrow|now|for\s+me\s+please))*",
        r"(?:is\s+)?(?:that|this)\s+(?:ok(?:ay)?|doable|possible|alright|fine)",
        r"here(?:'s|\s+is)\s+(?:(?:the\s+)?plan|what\s+(?:i|we)(?:\s+(?:need|want)|'d\s+like|\s+would"
        r"\s+like)(?:\s+(?:done|you\s+to\s+do))?|the\s+deal|the\s+thing|goes)|"
        r"(?:the\s+)?plan\s+is(?:\s+as\s+follows)?|as\s+follows",
        # asides before a fact ("Just so you know, reservoir A1 ...", "FYI -", "btw,")
        r"(?:just\s+)?so\s+you\s+know|fyi|f\.y\.i\.?|for\s+your\s+(?:info|information)|"
        r"(?:a\s+)?heads[\s-]+up|by\s+the\s+way|btw|for\s+the\s+record|(?:quick\s+)?note|n\.?b\.?",
        # a check after the request ("Is that ok?", "Does that make sense?", "right?")
        r"(?:is|would)\s+(?:that|this|it)\s+(?:be\s+)?(?:ok(?:ay)?|alright|all\s+right|fine|possible|"
        r"doable)|(?:does|do)\s+(?:that|this|it)\s+(?:make\s+sense|work)|makes?\s+sense|right|"
        r"can\s+you\s+do\s+(?:that|this|it)|(?:any\s+)?questions",
        # whether the machine can do what the other sentences ask ("Can the robot do that?",
        # "Is the robot able to handle this?", "Do you think it can manage that?")
        r"(?:do\s+you\s+think\s+|i\s+wonder\s+if\s+)?(?:(?:can|could|would|will|is|are|does)\s+)?"
        + _AGENT
        + r"\s+(?:(?:be\s+)?able\s+to\s+|(?:can|could|would|will)\s+(?:be\s+able\s+to\s+)?|"
        r"manage\s+to\s+)?(?:do|manage|handle|cope\s+with|run|sort(?:\s+out)?|pull\s+off)\s+"
        r"(?:that|this|it|these|those|them)(?:\s+(?:for\s+(?:me|us)|ok(?:ay)?|alright))*",
        r"is\s+(?:that|this)\s+something\s+" + _AGENT + r"\s+(?:can|could)\s+(?:do|handle|manage)",
        r"(?:would|will|does|can)\s+(?:that|this|it)\s+work",
        # whether the lab holds enough for it ("is there enough water in res for that?"): the
        # plan answers it - it is refused when a source runs short
        r"(?:(?:is|are|will)\s+there\s+(?:be\s+)?|(?:do|will)\s+(?:we|i|you)\s+have\s+)enough\s+"
        r"(?:[\w.-]+\s+){0,3}?(?:(?:left\s+)?(?:in|on)\s+(?:the\s+)?[\w-]+\s*)?"
        r"(?:for\s+(?:that|this|it|them|all\s+of\s+(?:them|it)))?",
        # sign-offs
        r"(?:best|kind|warm|many)?\s*regards|best(?:\s+wishes)?|all\s+the\s+best|"
        r"talk\s+(?:soon|later)|see\s+(?:you|ya)(?:\s+(?:soon|later|tomorrow))?|bye|ttyl|xo+|"
        r"have\s+a\s+(?:good|great|nice)\s+(?:one|day|evening|weekend)",
        r"please|pls|plz|kindly|(?:for\s+me)|(?:please\s+)?and\s+thanks?",
    ]
)
# What may trail an asked-for action: hedges, thanks, "for me" - never a word that could be
# part of the action ("for 1 day", "until done").
_TRAILING = "|".join(
    [
        r"(?:please\s+and\s+)?(?:(?:many|big|huge)\s+)?(?:thanks?|thank\s+you|thx|ty|cheers|ta)"
        r"(?:\s+(?:so|very|a|again|in\s+advance|much|a\s+lot|a\s+bunch|a\s+ton|heaps|loads))*",
        r"(?:(?:really|much|greatly)\s+)?appreciated",
        r"please|pls|plz|for\s+me|if\s+possible|asap|as\s+soon\s+as\s+(?:possible|you\s+can)",
        r"(?:there'?s\s+)?no\s+(?:rush|hurry|pressure)(?:\s+(?:on\s+(?:this|it)|at\s+all))?",
        r"no\s+worries(?:\s+if\s+not)?",
        r"(?:when|whenever)\s+(?:you\s+(?:get|have|find)\s+" + _MOMENT + r"|you\s+can|"
        r"(?:it'?s\s+)?convenient|you'?re\s+free)",
        r"if\s+(?:that'?s|that\s+is|it'?s|it\s+is)\s+(?:ok(?:ay)?|alright|all\s+right|fine|"
        r"possible|not\s+too\s+much\s+trouble)",
        r"if\s+you\s+(?:can|could|don'?t\s+mind|do\s+not\s+mind|have\s+time)",
        r"at\s+your\s+(?:earliest\s+)?convenience",
    ]
)
# A signature is a name, never a lab verb ("Thanks, Read" is not signed by Read).
_VERB = (
    r"(?:add|transfer|dispense|aliquot|pipett?e|put|place|fill|move|mix|shake|incubate|heat|"
    r"read|measure|dilute|pool|spot|stamp|remove|discard|run|cycle|wash|spin|seal|load|set|"
    r"hold|wait|stop|start|repeat|do|take|bring|return|send|combine|copy|cool|warm)\b"
)
# "Many thanks, Sam" / "cheers - Kim"
_SIGNED = (  # "Many thanks, Sam", "Best regards, Dr. Smith", "cheers - Kim Lee"
    rf"(?:\s*,?\s*(?:[-—–]\s*)?(?:(?:dr|prof|mr|mrs|ms)\.?\s+)?(?!{_VERB})(?-i:[A-Z][a-z]+)"
    r"(?:\s+(?-i:[A-Z][a-z]+))?\.?)?"
)
PLEASANTRY = re.compile(
    rf"^\s*(?:{_PHRASE})(?:[\s,!.:;)-]+(?:and\s+)?(?:{_PHRASE}))*{_SIGNED}"
    r"[\s!.:)]*$",
    _FLAGS,
)
LEAD = re.compile(
    r"^(?:(?:would|will|is|was)\s+it\s+be\s+(?:possible|ok(?:ay)?)\s+(?:for\s+you\s+)?to|"
    r"is\s+it\s+possible\s+(?:for\s+you\s+)?to|(?:would|could)\s+you\s+be\s+able\s+to|"
    r"are\s+you\s+able\s+to|(?:any|is\s+there\s+any)\s+chance\s+(?:you\s+)?(?:could|can)|"
    r"i\s+(?:was|am)\s+wondering\s+if\s+you\s+(?:could|can|would)|"
    r"do\s+you\s+think\s+you\s+(?:could|can)|"
    r"(?:so\s+)?(?:basically|essentially)|(?:what|all)\s+(?:i|we)\s+(?:really\s+)?(?:need|want|"
    r"would\s+like|'d\s+like)\s+(?:is|are)(?:\s+(?:to|for\s+you\s+to))?|"
    r"(?:could|can|may)\s+(?:we|i\s+ask\s+you\s+to|i\s+get\s+you\s+to)|"
    r"(?:i\s+)?(?:need|want)\s+you\s+to|maybe|perhaps|"
    r"(?:so\s+)?(?:i|we)(?:'ll|\s+will)?\s+(?:need|want|'d\s+like|would\s+like)\s+(?:like\s+)?(?=\d)|"
    r"(?:so\s+)?(?:i|we)\s+(?:was|were|am|are|'m|'re)\s+(?:thinking|hoping|wondering)"
    r"(?:\s+(?:that|if|whether|maybe|perhaps))*(?:\s+(?:we|you)\s+(?:could|can|might|should))?|"
    r"(?:so\s+)?i\s+(?:think|guess|reckon|figure|suppose)\s+(?:that\s+)?"
    r"(?:we|you)\s+(?:should|need\s+to|could|can|want\s+to|ought\s+to))\b[\s,:-]*",
    _FLAGS,
)
TAIL = re.compile(
    rf"(?:[\s,;-]+(?:and\s+)?(?:{_TRAILING})\b)+{_SIGNED}[\s!.?)]*$",
    _FLAGS,
)


# "if it's not too much trouble - we put ...": a hedge before what is asked.
_HEDGE_FIRST = re.compile(rf"^(?:{_TRAILING})\b[\s,:-]+(?=\w)", _FLAGS)
# "Sorry if this is a dumb question but ...", "I know this is a bit odd, but ...", "not sure
# this is possible but ...": an excuse before what is asked, about the asking, not the lab.
_EXCUSE_FIRST = re.compile(
    r"^(?:(?:so\s+|really\s+)?sorry|apologies|forgive\s+me|i\s+know|this\s+(?:might|may)\s+be|"
    r"not\s+sure|i'?m\s+not\s+sure|i'?m\s+new|bear\s+with\s+me|probably\s+a)\b"
    r"[^.;:!?\d]{0,60}?(?:question|request|ask|weird|odd|strange|silly|dumb|stupid|obvious|"
    r"possible|doable|right|here|this|me)[\s,-]+but\s+(?=\w)",
    _FLAGS,
)


def is_pleasantry(text: str) -> bool:
    """A clause made only of social words: nothing to do for it."""
    return not any(ch.isdigit() for ch in text) and bool(PLEASANTRY.match(text))


# "That's SERA1 A1 through H1, 50 uL of each ...", "i.e. 100 uL into row B", "Specifically:
# ...": the words that open the spelled-out form of what the sentence before asked for. Only
# before a comma or colon, or before a volume ("That's the blank" stays a remark).
SPELLED_OUT = re.compile(
    r"^(?:that'?s|that\s+is|i\.\s?e\.?|ie|namely|specifically|in\s+other\s+words|concretely|"
    r"to\s+be\s+(?:specific|exact|precise|clear)|in\s+detail|(?:so\s+)?what\s+i\s+mean\s+is)"
    r"(?:\s*[,:-]\s*|\s+(?=[^.;]*?\d\s*(?:uL|mL)\b))",
    _FLAGS,
)


def strip(text: str) -> str:
    """``text`` without its polite opening and its trailing hedges (never the whole of it)."""
    out = _EXCUSE_FIRST.sub("", text, count=1)
    out = _HEDGE_FIRST.sub("", LEAD.sub("", SPELLED_OUT.sub("", out, count=1), count=1), count=1)
    tail = TAIL.search(out)
    if tail and tail.start() > 0:
        out = out[: tail.start()]
    return out if out.strip() else text


# The words that open a clause before its verb ("please", "now", "first", "could you", "just").
LEAD_IN = re.compile(
    r"^(?:(?:(?:would|do|could)\s+you\s+mind|please|pls|kindly|now|before\s+anything\s+else|first\s+of\s+all|first(?:ly)?|second(?:ly)?|next|and|also|then|lastly|finally|oh|ah|"
    r"(?:make|be)\s+sure\s+(?:to|you)|remember\s+to|"
    r"gently|carefully|thoroughly|slowly|vigorously|"
    r"ok(?:ay)?|so|hey|hi|hiya|heya|hello|yo|can\s+(?:you|u)|could\s+(?:you|u)|would\s+(?:you|u)"
    r"|will\s+(?:you|u)|"
    r"i(?:'d|\s+would)\s+like\s+(?:you\s+)?to|i\s+(?:need|want)\s+(?:you\s+)?to|"
    r"we\s+(?:need|want)\s+to|let'?s|go\s+ahead\s+and|just|quickly|then|"
    r"when\s+you\s+(?:get|have)\s+a\s+(?:chance|moment|minute)|"
    r"if\s+you\s+(?:can|could|get\s+a\s+chance)|at\s+some\s+point)\b[\s,:-]*)+",
    _FLAGS,
)


def polite_off(text: str) -> str:
    """A clause without its lead-ins ("please", "would it be possible to") and its trailing
    hedges ("..., if that's ok"); a clause that is all pleasantry stays as it is."""
    if is_pleasantry(text):
        return text
    for _ in range(3):
        before = text
        text = strip(LEAD_IN.sub("", text).strip(" ,.;:!?-")).strip(" ,.;:!?-")
        if text == before:
            break
    return text
