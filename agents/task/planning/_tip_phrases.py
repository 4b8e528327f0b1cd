"""How people say which tips to use: a new tip per source, per column, per row, per
destination, or one tip throughout ("change tips between reagents", "new tips per column",
"fresh tip for each well", "don't change tips"). The first policy whose phrase a clause says
wins, so the narrower scopes come first."""

from __future__ import annotations

import re

_FLAGS = re.IGNORECASE
# A form's tip field: "Tip change: every well", "Tips: change after each column"
_FIELD = (
    r"\btips?(?:\s+(?:change|changes|policy|use|usage|handling))?\s*[:=]\s*(?:(?:change|new|fresh)"
    r"\s+(?:tips?\s+)?)?(?:(?:after|at|for|per|between|on)\s+)?(?:each|every|per)\s+"
)

TIP_POLICIES: list[tuple[str, re.Pattern[str]]] = [
    (
        "per_source",
        re.compile(
            # ("the same tip per source": one tip for each source's moves, never one for all)
            r"\b(?:one|a|new|fresh|separate|clean|(?:the\s+)?same)\s+(?:set\s+of\s+)?tips?\s+"
            r"(?:per|for\s+each|for\s+every|each|within\s+(?:a|each|the\s+same))\s+"
            r"(?:source|input|sample\s+well\s+you\s+take\s+from|liquid|reagent|solution)\b(?:\s+wells?)?"
            r"|\bre-?use\s+(?:the\s+)?tips?\s+(?:per|for\s+each|within\s+(?:a|each|the\s+same))\s+"
            r"(?:source|liquid|reagent|solution)\b"
            r"|\bchange\s+(?:the\s+)?tips?\s+(?:when(?:ever)?|each\s+time)\s+the\s+source\s+changes"
            # "change tips between reagents, keep the same tip within a reagent"
            r"|\b(?:chang(?:e|ing)|new|fresh|swap(?:ping)?)\s+(?:the\s+)?tips?\s+(?:between|for\s+each|"
            r"with\s+each|per|for\s+every|for\s+a\s+new)\s+(?:different\s+|new\s+)?(?:reagents?|"
            r"sources?|liquids?|solutions?|buffers?|troughs?|reservoirs?)\b"
            # "change tips between compounds / samples": a new tip when the sample changes (its
            # replicates share one); "between wells / dispenses" is a tip per destination
            r"|\b(?:chang(?:e|ing)|new|fresh|swap(?:ping)?)\s+(?:the\s+)?tips?\s+between\s+(?:each\s+)?"
            r"(?:different\s+)?(?:samples?|compounds?|strains?|hits?|librar(?:y|ies)|templates?|"
            r"isolates?|cultures?|sera|serums?|specimens?)\b",
            _FLAGS,
        ),
    ),
    (
        "per_column",
        re.compile(
            r"\b(?:new|fresh|change|clean|different|one)\s+(?:set\s+of\s+)?(?:8\s+|eight\s+)?tips?\s+"
            r"(?:for\s+|at\s+)?(?:every|each|per)\s+column"
            r"|\b(?:chang(?:e|ing)|replac(?:e|ing)|swap(?:ping)?|discard(?:ing)?|eject(?:ing)?|drop(?:ping)?)"
            r"\s+(?:the\s+)?(?:8\s+|eight\s+)?tips?\s+(?:between|after|every|each|for\s+each|at|per)\s+"
            r"(?:each\s+|every\s+)?(?:new\s+)?columns?"
            r"|\btip\s+changes?\s+(?:(?:between|after|at|for)\s+)?(?:each\s+|every\s+)?columns?"
            rf"|{_FIELD}col(?:umn)?s?\b",
            _FLAGS,
        ),
    ),
    (
        "per_row",  # with one channel; the 8-channel head's tips each serve one row anyway
        re.compile(
            r"\b(?:new|fresh|change|clean|different|one|a)\s+(?:set\s+of\s+)?tips?\s+"
            r"(?:for\s+|at\s+)?(?:every|each|per)\s+row\b"
            r"|\b(?:chang(?:e|ing)|replac(?:e|ing)|swap(?:ping)?|discard(?:ing)?|eject(?:ing)?)"
            r"\s+(?:the\s+)?tips?\s+(?:between|after|every|each|for\s+each|at|per)\s+"
            r"(?:each\s+|every\s+)?(?:new\s+)?rows?\b"
            r"|\btip\s+changes?\s+(?:(?:between|after|at|for)\s+)?(?:each\s+|every\s+)?rows?\b"
            rf"|{_FIELD}rows?\b",
            _FLAGS,
        ),
    ),
    (
        "per_destination",
        re.compile(
            r"\b(?:new|fresh|clean|separate|different|dedicated)\s+tips?\b\s*(?:for|at|per|into|on|with|in)?\s*"
            r"(?:each|every|per|all)?\s*(?:one|well|transfer|destination|dispense|time|aliquot|"
            r"sample|pair|pick|move|step|replicate|wells|transfers|dispenses)?\b"
            r"|(?<!n't\s)(?<!not\s)(?<!without\s)(?<!need\sto\s)(?<!\bdont\s)(?<!never\s)"
            r"\bchang(?:e|es|ed|ing)\s+(?:the\s+)?tips?\b"
            r"|(?<!no\s)\btips?\s+(?:are\s+|is\s+)?changed\b"
            r"|\b(?:replace|swap|discard|eject)\s+(?:the\s+)?tips?\s+(?:between|after|each|every|for)"
            r"|\bnever\s+re-?use|\bdon'?t\s+re-?use|\bdo\s+not\s+re-?use|\bno\s+tip\s+re-?use"
            r"|\btips?\s*[:=-]\s*(?:a\s+)?(?:new|fresh)\s+(?:one\s+)?(?:for\s+)?(?:each|every|per)\b"
            r"|\btip\s+changes?\s+(?:between|after|(?:(?:at|for|on)\s+)?(?:each|every)\b)|\b(?:1|one|a|new)\s+tips?\s*/\s*(?:well|destination|transfer)"
            r"|\b(?:one|a)\s+tip\s+(?:per|for\s+each|for\s+every|each)\s+"
            r"(?:well|transfer|destination|sample|pair|replicate|dispense|aliquot|pick|library|"
            r"libraries|compound|standard|hit|tube|specimen|template|primer|input|lib|entry|strain|"
            r"culture|isolate|clone|colony|spot|dot|drop)"
            rf"|{_FIELD}(?:well|destination|transfer|dispense|sample|pick|aliquot)s?\b",
            _FLAGS,
        ),
    ),
    (
        "once",
        re.compile(
            # ("one tip per serum" is no single tip: a tip for each, which the transfer reads)
            r"\b(?:(?:one|a\s+single|single)(?=\s+(?:set\s+of\s+)?(?:8\s+|eight\s+)?tips?\b(?!\s+"
            r"(?:per|for\s+each|for\s+every|each)\b))|the\s+same|same)\s+(?:set\s+of\s+)?(?:8\s+|eight\s+)?"
            r"tips?\s*(?:set\s+)?(?:for|throughout|across|(?:the\s+)?whole|all|is\s+fine|is\s+ok|"
            r"the\s+entire|everything|for\s+everything)?"
            r"|\bdon'?t\s+change\s+(?:the\s+)?tips?|\bdo\s+not\s+change\s+(?:the\s+)?tips?"
            r"|\bnever\s+change\s+(?:the\s+)?tips?|\bno\s+tip\s+changes?"
            r"|\bno\s+need\s+to\s+change\s+(?:the\s+)?tips?|\bneedn'?t\s+change\s+(?:the\s+)?tips?"
            r"|\bwithout\s+changing\s+tips?|\bre-?us(?:e|ing)\s+(?:the\s+)?(?:same\s+)?(?:8\s+)?tips?"
            r"|\bkeep(?:ing)?\s+(?:the\s+)?(?:same\s+)?tips?|\btips?\s*[:=-]\s*re-?use"
            r"|\btip\s+re-?use\s+(?:is\s+)?(?:ok|okay|fine|allowed)"
            r"|\b(?:8|eight)\s+tips?\s+(?:in\s+total|total|throughout|for\s+(?:(?:the\s+)?whole|everything|all))"
            r"|(?<!no\s)(?<!not\s)\btips?\s+(?:(?:are|get|can|may)\s+(?:be\s+)?)?re-?used\b"
            r"|\btips?\s+(?:can|may)\s+be\s+re-?used|\b(?:one|a|single)\s+column\s+of\s+tips\b"
            r"|\b(?:use\s+)?(?:1|one)\s+tip\b(?!\s+(?:per|for\s+each|each))"
            r"|\b(?:don'?t|do\s+not|never|no\s+need\s+to)\s+(?:swap|switch|replace)\s+(?:the\s+)?tips?",
            _FLAGS,
        ),
    ),
]


# "no new tips", "without a tip change between wells", "change tips: no": a phrase for new tips
# said negated asks for the same tip; never the fresh tips its words alone would say.
_NEGATED_BEFORE = re.compile(
    r"\b(?:no|not|without|never|don'?t|needn'?t)\s+(?:(?:a|any|the|to|be|need)\s+){0,2}$", _FLAGS
)
_NEGATED_AFTER = re.compile(r"^\s*(?:[:=?-]\s*)?(?:no|none|never|not\s+needed)\b", _FLAGS)


def tip_policy(text: str) -> str | None:
    """The tip policy ``text`` says: the first of ``TIP_POLICIES`` whose phrase it says, or
    "once" when that phrase (for new tips) is negated."""
    for name, rx in TIP_POLICIES:
        for m in rx.finditer(text):
            if name != "once" and (
                _NEGATED_BEFORE.search(text[: m.start()]) or _NEGATED_AFTER.match(text[m.end() :])
            ):
                return "once"
            return name
    return None
