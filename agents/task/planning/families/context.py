"""Sentences that do not ask for an action: facts about the lab, settings for the whole
request, pleasantries.

A fact ("A1 already holds 200 uL of dye", "the buffer is in reservoir A2", "plate_1 is in the
reader") is checked against the lab state: when it agrees it changes nothing; when it
disagrees the planner asks which is right (``lab_state``) rather than plan on either. A
setting ("use the 8-channel for everything", "fresh tips throughout") applies to the clauses
after it.
"""

from __future__ import annotations

import re

from agents.task.planning import _resolve as r
from agents.task.planning._blanks import blank_note
from agents.task.planning._clauses import Clause
from agents.task.planning._entities import _ASIDE, Entities
from agents.task.planning._frames import Frame
from agents.task.planning._off_bench import kept, off_bench
from agents.task.planning._outcomes import Refuse
from agents.task.planning._remarks import is_purpose, is_reason
from agents.task.planning._social import is_pleasantry
from agents.task.planning._tip_classes import kind_named
from agents.task.planning.families import Family
from agents.task.planning.families._facts import check_fact
from agents.task.planning.families._replicate_note import replicate_note
from agents.task.planning.families._tip_wishes import (
    channels_only,
    scoped_tips,
    tip_words,
    tips_only,
)

_FLAGS = re.IGNORECASE
PLEASANTRY = re.compile(
    r"^(?:thanks?(?:\s+(?:a\s+lot|so\s+much|again|in\s+advance))?|thank\s+you(?:\s+\w+)?|cheers|ta|thx|"
    r"ty|please|pls|ok(?:ay)?|great|cool|hi|hello|hey|no\s+rush|asap|much\s+appreciated|"
    r"appreciate\s+it|that'?s\s+(?:it|all)|done|good|nice|lovely|perfect|sounds\s+good|"
    r"(?:good\s+)?(?:morning|afternoon|evening)|hiya|yo|greetings|there)"
    r"(?:\s+(?:team|folks|all|everyone|labwright|robot|there))?[\s!.:)]*$",
    _FLAGS,
)


def pleasantry(text: str) -> bool:
    """Only social words ("thanks!", "Hope you're well", "Many thanks, Sam")."""
    return bool(PLEASANTRY.match(text)) or is_pleasantry(text)


_STATE = re.compile(
    r"\b(?:already|currently|contains?|holds?|has|have|had|is|are|was|were|pre-?filled|pre-?loaded|"
    r"loaded|sitting|sits|there'?s|there\s+(?:is|are))\b|\b[A-Pa-p]\d{1,2}\s*=\s*[\w«]"
    r"|\bwent\s+(?:in|into|on|onto)\b|\b(?:i|we)\s+(?:already\s+|just\s+)?(?:added|loaded|pipetted"
    r"|placed|dispensed|transferred|plated|aliquoted|filled)\b|\b(?:i|we)\s+(?:(?:already|just)\s+"
    r"put|put(?=[^.;]*\b(?:earlier|yesterday|this\s+morning|last\s+night|before)\b))\b",
    _FLAGS,
)
# "..., multichannel is fine", "same tip is ok": how to pipette, not a fact about the lab.
_FINE = re.compile(
    r"\b(?:multi[\s-]?channel|8[\s-]?channel|single[\s-]?channel|(?:the\s+)?same\s+tips?|one\s+tip|"
    r"either|that|this|it)\s+(?:is|'s)\s+(?:fine|ok(?:ay)?|good|enough)\b",
    _FLAGS,
)
_IMPERATIVE = re.compile(
    r"^(?:transfer|add|dispense|distribute|aliquot|pip+e?t+e?|put|place|fill|move|bring|return|mix|mx|"
    r"resuspend|triturate|"
    r"shake|incubate|heat|read|measure|make|prepare|dilute|serially|pool|combine|spot|stamp|"
    r"replicate|copy|duplicate(?!\s+wells?\b)|remove|aspirate|discard|top|normali[sz]e|run|thermocycle|take|use|using|do|"
    r"hold|keep|store|cool|chill|warm|leave|wash|rinse|coat|block|seed|feed|load|set|spin)\b",
    _FLAGS,
)
_LAYOUT_SETTING = re.compile(
    r"^(?:well[\s-]+to[\s-]+well|same\s+positions?|matching\s+wells?|one[\s-]to[\s-]one|1:1"
    r"|in\s+(?:duplicate|triplicate|quadruplicate)s?|(?:duplicate|triplicate|quadruplicate)s?)$",
    _FLAGS,
)
_SETTING = re.compile(
    r"^(?:use|using|with|please\s+use|go\s+with|do\s+(?:it|this|everything)\s+with)\b"
    # a head said alone: "... . 8-channel.", "Head: multichannel"
    r"|^(?:the\s+)?(?:8|eight|multi|single|one|1)[\s-]?(?:channels?|ch)(?:\s+(?:head|pipette))?"
    r"(?:\s+(?:please|only|throughout|for\s+(?:all|everything)))?\s*$",
    _FLAGS,
)
# "D2-D8 prefilled with 150 uL buffer" in a recipe: fill them (a fact says "already").
_FILL_WITH = re.compile(
    r"\b(?:(?:pre-?)?(?:filled|loaded)\s+)?with\s+(?:another\s+)?\d+(?:\.\d+)?\s*(?:u|m)l", _FLAGS
)
_NOTE = re.compile(
    r"(?:\b(?:is|are|stays?|remains?|as|serves?\s+as|will\s+be|left\s+as)|'s|=|:)\s+(?:the\s+|a\s+|our\s+)?"
    r"(?:(?:growth|sterility|vehicle|solvent|no[\s-]drug|untreated|media|medium|broth|buffer|"
    r"negative|positive)\s+)?"
    r"(?:blanks?|controls?|ctrls?|negative|positive|ntcs?|no[\s-]template|reference"
    r"|(?-i:GC|SC|NC|PC|VC|NRT))\b|\bleft\s+(?:empty|alone|untouched)\b"
    r"|\bstays?\s+(?:empty|untouched)\b",
    _FLAGS,
)
# "leave both alone for now", "leave col 11 and 12 untouched", "don't touch H1": not to be done
_LEAVE = re.compile(
    r"^(?:(?:and|but|please|just)\s+)*(?:leave|keep)\s+(?:[\w-]+\s+){0,5}?(?:alone|empty|untouched"
    r"|as\s+(?:is|they\s+are|it\s+is))\b|^(?:(?:and|but|please|just)\s+)*(?:don'?t|do\s+not)\s+"
    r"touch\b",
    _FLAGS,
)
_ROLE = re.compile(
    r"\b(?:is|are|as)\s+(?:the\s+|our\s+|my\s+)?diluents?\b"
    # "S1 is the neat calibrator", "the top standard is undiluted BSA": the stock's role
    r"|\b(?:S0?1|std\s*#?1|standard\s*#?1|(?:the\s+)?(?:top|highest|first)\s+(?:standard|std|point))"
    r"\s+(?:is|=)\s+(?:just\s+)?(?:the\s+)?(?:neat|undiluted|straight|pure|stock)?\b",
    _FLAGS,
)


def leaves_alone(text: str) -> bool:
    """The clause says to leave wells as they are ("leave both alone for now")."""
    return bool(_LEAVE.search(text))


_TIMED = re.compile(
    r"\d\s*(?:s|secs?|seconds?|mins?|minutes?|h|hrs?|hours?)\b|\bovernight\b", _FLAGS
)
# "This is for tomorrow's assay", "For the blocking step", "I'll check it later": remarks.
REMARK = re.compile(
    r"^(?:(?:this|it)(?:\s+is|'s)|these\s+are|that'?s)\s+(?:for|the|our|part\s+of)\b"
    r"|^for\s+(?:the|our|my|a|an|tomorrow|today|this|next)\b(?!.*\d\s*(?:u[lL]|m[lL]|min|s|h|rpm|c)\b)"
    r"|^(?:for|to|as\s+part\s+of|before)\s+(?:the\s+|our\s+)?normali[sz](?:e|ation|ing)\b[^\d]*$"
    r"|^(?:i'?ll|i\s+will|we'?ll|we\s+will|let\s+me\s+know|ping\s+me|notify\s+me)\b"
    # "We're doing a Bradford today", "Today I'm setting up the qPCR": what the work is for
    r"|^(?:(?:today|tomorrow|this\s+(?:morning|afternoon|week))\s*,?\s*)?(?:we'?re|we\s+are|i'?m|i\s+am)"
    r"\s+(?:doing|running|setting\s+up|prepping|preparing|starting|working\s+on|trying)\b(?!.*\d)"
    r"|^(?:don'?t|do\s+not|no\s+need\s+to)\s+mix(?:\s+(?:it|them|afterwards|after))?$"
    # "..., then stop.", "That's all.", "done": the end of the work asked for
    r"|^(?:(?:and|then)\s+)*(?:stop(?:\s+there)?|that'?s\s+(?:all|it)|(?:we'?re|you'?re)\s+done|done|"
    r"finished|nothing\s+else)[\s.!]*$"
    r"|^(?:no\s+mixing|without\s+mixing)$"
    r"|^(?:protect(?:ed)?|keep|kept)\s+(?:it\s+|them\s+|the\s+plate\s+)?(?:away\s+)?from\s+"
    r"(?:the\s+)?light$|^(?:in\s+the\s+dark|(?:protected\s+)?from\s+light)$",
    _FLAGS,
)
# A step said to be left out ("no wash step", "skip the wash", "wash not needed", "don't
# shake"): a remark, never the step itself.
SKIPPED = re.compile(
    r"^(?:don'?t|do\s+not|no\s+need\s+to|skip(?:\s+the)?|no|without(?:\s+an?)?"
    r"|(?:let'?s\s+)?not|(?:forget|omit|drop|leave\s+out)(?:\s+about)?(?:\s+the)?)\s+"
    r"(?:mix|shake|wash|spin|seal|mixing|shaking|washing|washes|spinning|sealing)"
    r"(?:\s+(?:steps?|needed|it|them|afterwards|after|the\s+plate|this\s+time))?$"
    r"|^(?:the\s+)?(?:mix|shake|wash|spin)(?:ing)?\s+(?:steps?\s+)?(?:is\s+|are\s+)?(?:not\s+"
    r"(?:needed|required|necessary)|unnecessary|skipped|optional)$"
    r"|^(?:the\s+)?(?:wash|mix|spin|seal)(?:es|ing)?\s+(?:steps?\s+)?(?:is|are|was|were|ha(?:s|ve)\s+been)"
    r"\s+(?:(?:already\s+)?(?:done|performed|handled)|taken\s+care\s+of)(?:\s+(?:by\s+hand|manually"
    r"|already|offline|separately|off[\s-]deck))*$",  # "wash step is done by hand"
    _FLAGS,
)
CANCEL = re.compile(
    r"^(?:(?:oh|wait|sorry|actually|ok(?:ay)?|um+|hmm+|please|ah|so|hey)\b[\s,!.-]*)*"
    r"(?:never\s*mind|disregard\b|no\s+need\s+to\s+(?:do|run)\s+anything|nothing\s+to\s+(?:do|run)\b|"
    r"we\s+(?:won'?t|don'?t|do\s+not|will\s+not)\s+need\b|nevermind|forget\s+(?:it|that|about\s+it)|cancel(?:\s+(?:that|this|it|everything))?|"
    r"scratch\s+that|hold\s+off|belay\s+that|on\s+second\s+thought|not\s+now|no\s+thanks|"
    r"abort(?:\s+(?:that|it|everything))?|(?:actually\s*,?\s*)?(?:don'?t|do\s+not)\s+(?:bother|run\s+(?:it|anything))|"
    r"(?:don'?t|do\s+not)\s+do\s+anything|do\s+nothing|nothing(?:\s+for\s+now)?|ignore\s+(?:that|this|me))\b"
    # "skip it", "ignore my last message", "call it off" (never "..., then stop", "that's all":
    # the end of work asked for, not a cancel)
    r"|(?:skip\s+(?:it|that|this|everything|the\s+(?:whole\s+)?(?:thing|run|lot))|"
    r"ignore\s+(?:my|the)\s+(?:last|previous|earlier|above)\s+(?:message|request|one))"
    r"\s*(?:,?\s*(?:thanks|thank\s+you|thx|cheers|please))?[\s.!]*$"
    r"|(?:let'?s\s+)?call\s+(?:it|that|the\s+run|everything)\s+off\b",
    _FLAGS,
)


_ALL_IN = re.compile(
    r"^(?:and\s+)?(?:all|everything|each|both)\s*(?:in|on|of|for|into)\s+(?:the\s+)?\S+$", _FLAGS
)


def setting_only(ents: Entities) -> bool:
    """A clause that only says how to pipette: tips ("one tip for the whole thing") or the
    head ("Use the multichannel."), no liquid, volume or wells of its own."""
    if tips_only(ents) or channels_only(ents):
        return True
    return bool(
        _SETTING.match(ents.text)
        and (ents.channels or ents.tips)
        and not ents.volumes()
        and not ents.wellsets
        and not ents.liquids
    )


# "Could you make me a replicate plate?" before the sentence that says how: the goal.
GOAL = re.compile(
    r"^(?:make|prepare|create|set\s+up|do|need|want)\s+(?:me\s+|us\s+)?(?:a|an|one|two|\d)\s+"
    r"(?:replicate|replica|copy|daughter|duplicate|mirror|stamped|cherry[\s-]?pick(?:ed)?|pooled?)"
    r"\s*(?:plates?|blocks?|copy|copies|list)?\s*$",
    _FLAGS,
)
_NOTE_THAT = re.compile(
    r"^(?:note(?:\s+that)?|fyi|n\.?b\.?|just\s+so\s+you\s+know|be\s+aware(?:\s+that)?|"
    r"keep\s+in\s+mind(?:\s+that)?|remember(?:\s+that)?|heads\s+up)\b",
    _FLAGS,
)
_ALREADY_FILLED = re.compile(
    r"\b(?:already|(?:is|are|was|were|been)\s+pre-?(?:filled|loaded))\b", _FLAGS
)  # "samples is pre-filled with ...": a state; "D2-D8 prefilled with ...": fill them


_ALREADY_HOLD = re.compile(
    r"\balready\s+(?:holds?|contains?|has|have|had|(?:is|are)\s+(?:filled|loaded)\s+with)\b",
    _FLAGS,
)


_FACT, _ALREADY = 65, 88  # a fact's claim on a clause; one that says "already" wins


def states_fact(clause: Clause, ents: Entities) -> bool:
    """The clause says what the lab holds ("cmpd_src_0042 column 12 is DMSO only"), even as
    a heading over what follows: it is checked against the lab like any fact."""
    return detect(clause, ents) in (_FACT, _ALREADY)


def detect(clause: Clause, ents: Entities) -> int | None:
    text = ents.text
    # "50 uL broth -> A1-A11 (A11 is the GC)": a remark in brackets is no fact of the clause
    said = _ASIDE.sub(" ", text) if re.search(r"\w", _ASIDE.sub("", text)) else text
    if GOAL.match(text) and not ents.volumes():
        return 66
    if pleasantry(text) or CANCEL.match(text) or (off_bench(text) and not ents.quantities):
        return 100
    if kept(text) and not ents.quantities:
        return 100
    if SKIPPED.match(text):
        return 90  # above the wash it names
    if _LEAVE.search(text) and not _TIMED.search(text):
        return 90  # "leave both alone for now": nothing to do there, never a wait
    if REMARK.search(text) and not ents.labware and not ents.wellsets:
        return 67
    if is_purpose(text) or is_purpose(clause.said):
        return 95  # "so the inner wells don't dry out": what for; its wells are no place
    if is_reason(text):
        return 68  # "they've been sitting", "Bradford's done": why, not what to do
    if _LAYOUT_SETTING.match(text) or replicate_note(text, ents):
        return 100
    if (_NOTE.search(said) and not ents.volumes()) or blank_note(ents):
        return 66
    if _NOTE.search(said) and _FILL_WITH.search(text):
        return None  # "H1 is the blank with 100 uL sample buffer": fill it
    if _SETTING.match(text) and (ents.channels or ents.tips or ents.rack) and not ents.volumes():
        return 70
    kind = not (ents.liquids or ents.quantities or ents.wellsets) and kind_named(text)
    if tips_only(ents) or scoped_tips(ents) or tip_words(ents) or channels_only(ents) or kind:
        return 70  # "...; one tip per pick", "Change tips between wells.", "...; 8-channel"
    if _ALREADY_HOLD.search(said) and not _IMPERATIVE.match(text) and ents.fold is None:
        return _ALREADY  # "std_dil A1-A8 already hold the IL-6 standard curve": what is
    said = _ROLE.sub(" ", said)  # "elution buffer is the diluent, ...": a role, no fact
    if (
        (not _IMPERATIVE.match(text) or _NOTE_THAT.match(text))
        and _STATE.search(_FINE.sub(" ", said))
        and (ents.labware or ents.wellsets or ents.liquids)
        and not (_FILL_WITH.search(text) and not _ALREADY_FILLED.search(text))
    ):
        return _FACT  # "Note that samples is pre-filled with 100 uL sample per well"
    if (
        _where_list(ents)
        and not (clause.heading and len(ents.liquids) == 1)
        and not _ASKED.search(clause.said)  # "TMB in P A1-A6 please": asked for, no fact
    ):
        return 65  # "water in A1, buffer in A2": where each liquid is (a heading such as
        # "MIC_P1 row A, ciprofloxacin:" names the wells and liquid the items work on)
    return None


_WHERE_FILLER = re.compile(r"[#\s,;:=()-]+|\b(?:in|at|and|the|is|are|wells?|troughs?)\b", _FLAGS)


_ASKED = re.compile(r"\b(?:please|pls|plz|need|needs|want|wants|would\s+like|'d\s+like)\b", _FLAGS)


def _where_list(ents: Entities) -> bool:
    """A list of liquids and the wells they are in, with no verb ("water in A1, buffer in A2")."""
    if not ents.liquids or len(ents.wellsets) != len(ents.liquids) or ents.volumes():
        return False
    rest = ents.marked
    for w in ents.wellsets:
        rest = rest[: w.start] + " " * (w.end - w.start) + rest[w.end :]
    return not _WHERE_FILLER.sub("", rest)


def build(frame: Frame, p: r.Planning) -> str:
    text = frame.text
    if CANCEL.match(text):
        raise Refuse("you asked for nothing to be done", "nothing_to_do")
    if pleasantry(text):
        frame.extra["kind"] = "pleasantry"
        return "a pleasantry: nothing to do"
    if kept(text) and not frame.ents.quantities:
        frame.extra["kind"] = "fact"
        return "kept in the run report (every reading, and when the run ends): nothing more to do"
    if off_bench(text) and not frame.ents.quantities:
        frame.extra["kind"] = "not_done"  # said in the plan, so the person sees it at approval
        return (
            "NOT DONE: this is not work for the lab's instruments (I plan liquid handling, "
            "incubation, reading and plate moves); the run report lists every reading"
        )
    if (
        SKIPPED.match(text)
        or is_reason(text)
        or is_purpose(frame.clause.said)
        or (_LEAVE.search(text) and not _TIMED.search(text))
        or (REMARK.search(text) and not frame.ents.labware and not frame.ents.wellsets)
    ):
        frame.extra["kind"] = "fact"
        return "a remark: nothing to do for it"
    if _LAYOUT_SETTING.match(text) or replicate_note(text, frame.ents):
        frame.extra["kind"] = "setting"
        return "a setting for what follows: the same well positions"
    if GOAL.match(text):
        frame.extra["kind"] = "setting"
        return "the goal: the clauses after it say how"
    if _ALL_IN.match(text) and len(frame.ents.labware) == 1 and not frame.ents.wellsets:
        frame.extra["kind"] = "setting"  # "..., A2 25 uL - all in dna_plate"
        return f"the plate of the pieces before it: {frame.ents.labware[0].name}"
    if (_NOTE.search(text) and not frame.ents.volumes()) or blank_note(frame.ents):
        frame.extra["kind"] = "fact"
        return "a note about the layout: nothing to do for it"
    frame.extra["kind"] = "fact"
    scoped = frame.extra.get("scoped") or scoped_tips(frame.ents)
    if isinstance(scoped, list) and scoped:  # the transfers of those liquids take it
        frame.extra["kind"] = "setting"
        return f"a setting for the {' and '.join(scoped)} transfers: tips {frame.ents.tips}"
    if (
        _SETTING.match(text)
        or tips_only(frame.ents)
        or tip_words(frame.ents)
        or channels_only(frame.ents)
    ):
        frame.extra["kind"] = "setting"
        if frame.ents.channels:
            p.channels = frame.ents.channels
        if frame.ents.tips:
            p.tips = frame.ents.tips
        said = [
            f"{p.channels} channel(s)" if frame.ents.channels else "",
            f"tips {p.tips}" if frame.ents.tips else "",
            f"tips from {frame.ents.rack}" if frame.ents.rack else "",
        ]
        scope = "the whole request" if tips_only(frame.ents) else "what follows"
        return f"a setting for {scope}: " + ", ".join(s for s in said if s)
    return check_fact(frame, p)


FAMILY = Family("context", detect, build)
