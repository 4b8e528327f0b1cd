"""Lines that ask for no action: a title over the work ("qPCR run", "Day 2 - MIC_P2 readout",
"MIC - cipro vs E. coli") and a remark said in passing ("I'm new to the robot so bear with
me", "This step fixes the monolayers in HEK12", "ok we're done with HEK12 for now").

Such a line is neither planned nor "not understood": it is noted, and the one plate it names
is the plate of what follows ("..., can you park it in hotel:1"). A line that may ask for
work is never one of them: a quantity, a well, a lab verb at its start, a need or a wish
("the plate needs sealing", "can you ...", "please ..."), a step said to come next ("then",
"afterwards"), all keep it a clause to plan or to ask about. And a request made only of such
lines is no request: they are remarks only beside the work the other clauses ask for.
"""

from __future__ import annotations

import re
from dataclasses import replace

from agents.task.planning._frames import Frame
from agents.task.planning._resolve import Planning
from agents.task.planning._social import SPELLED_OUT
from agents.task.planning._vocabulary import ACTION_VERBS
from agents.task.planning.families import Family

_FLAGS = re.IGNORECASE

# Verbs of bench work beyond what the planner does ("image", "centrifuge", "seal"): an
# imperative with one of them asks for work (answered as such), never a title.
_OTHER_WORK = (
    r"centrifuge|vortex|sonicate|image|photograph|freeze|thaw|lyse|stain|fix|harvest|passage|"
    r"count|label|store|filter|weigh|autoclave|sterili[sz]e|dry|evaporate|elute|bind|pellet|"
    r"decant|invert|cap|uncap|lid|de-?lid|uncover|check|inspect|note|log|split|sample|collect|"
    r"fetch|get|grab|keep|chill|flash|clean|dump|flip|rotate|image|scan|sequence|quantify|"
    r"design|write|send|email"
)
_VERB_FIRST = re.compile(rf"^(?:{ACTION_VERBS}|{_OTHER_WORK})(?:s|es|ed|ing)?\b", _FLAGS)
# A noun that names the run, not the verb: "PCR" opens "PCR run" as often as "PCR the plate".
_NOUN_FIRST = re.compile(r"^(?:q?pcr|rt-?q?pcr)\b", _FLAGS)
# What asks, even in a sentence about something: a need, a wish, a request, a next step, a
# passive of an action ("gets stained"), a modal addressed to the robot.
_ASKS = re.compile(
    r"\b(?:need(?:s|ed)?|must|should|ought|has\s+to|have\s+to|want(?:s|ed)?|wish|"
    r"(?:can|could|would|will|shall)\s+(?:you|u|we|it|the\s+robot)|please|pls|kindly|"
    r"make\s+sure|remember|don'?t\s+forget|then|next|afterwards?|after\s+that|later|finally|"
    r"lastly|before|once|until|(?:gets?|getting|be|been|being|is\s+to\s+be)\s+\w+(?:ed|en)|"
    r"let'?s|go\s+ahead|(?<!\bfor\s)now)\b",
    _FLAGS,
)
# "Tomorrow's MIC needs the S. aureus row started today": a goal, the lines after it say how.
_GOAL = re.compile(
    r"\bneeds?\b(?:\s+[\w.'-]+){1,6}?\s+(?:started|set\s+up|prepared|done|going|ready|underway)"
    r"(?:\s+(?:today|tomorrow|tonight|now|first))?$",
    _FLAGS,
)
# A sentence about something: its subject is the person, the work, a plate or a day.
_SUBJECT = re.compile(
    r"^(?:i|i'?m|i\s+am|i'?ve|i\s+have|we|we'?re|we\s+are|we'?ve|this|that|these|those|it|it'?s|"
    r"my|our|the|today'?s|tomorrow'?s|yesterday'?s|today|tomorrow|yesterday|here|there)\b",
    _FLAGS,
)
# "Tips don't matter for the broth", "I don't care about tips": no wish, the default holds.
_NO_TIP_WISH = re.compile(
    r"^(?:i\s+|we\s+)?(?:don'?t|do\s+not)\s+(?:care|mind)\s+(?:about|which|what)\s+tips?\b"
    r"|^tips?\s+(?:don'?t|do\s+not|doesn'?t|does\s+not)\s+matter\b|^(?:any|whatever)\s+tips?\b"
    r"|^tips?\s+(?:are\s+|is\s+)?(?:up\s+to\s+you|your\s+call)\b|^no\s+tip\s+preference\b",
    _FLAGS,
)
_NOTED = re.compile(r"^(?:ok(?:ay)?|so|well|right|alright|anyway)\b[\s,]*", _FLAGS)


def _plain(frame: Frame, title: bool) -> bool:
    """Nothing in the clause names an amount, a well or a way of pipetting (a title's bare
    numbers are its day, date or strain: "Day 2 - ...", "06/12 ...", "ATCC 25922"; its "(all
    24 wells)" is the whole plate it names)."""
    e = frame.ents
    whole = title and all(part.kind == "all" for w in e.wellsets for part in w.parts)
    return not (
        e.quantities
        or (e.wellsets and not whole)
        or (e.steps and not (whole and e.wellsets))
        or e.fold
        or e.times
        or e.mix_times
        or e.replicates
        or e.series
        or e.tips
        or e.channels
        or e.blanks
        or (e.bare and not title)
    )


# "Plate: maxisorp_1", "plate = elisa_plate", "Labware - lp384_b": which plate the steps use
_PLATE_LABEL = re.compile(
    r"^(?:(?:assay|work(?:ing)?|target|destination|dest|the)\s+)?(?:plate|labware)$", _FLAGS
)


def _plate_named(frame: Frame, text: str) -> bool:
    """The clause only names a plate under a plate label (or as "plate = X")."""
    label = (frame.clause.label or "").strip()
    if not _PLATE_LABEL.match(label):
        said = re.match(r"^(\w+(?:\s+\w+)?)\s*[=:]\s*(.+)$", text)
        if said is None or not _PLATE_LABEL.match(said.group(1)):
            return False
        text = said.group(2)
    names = [m for m in frame.ents.labware if m.sure]
    return len(names) == 1 and text.strip(" .").lower() == names[0].written.strip().lower()


def asks_nothing(frame: Frame, first: bool) -> bool:
    """A title (``first``: the request's opening line or sentence) or a remark."""
    text = _NOTED.sub("", frame.clause.said.strip()).strip(" .!?")
    if _plate_named(frame, text) and _plain(frame, False):
        return True
    if _NO_TIP_WISH.match(text) and not frame.ents.quantities and not frame.ents.wellsets:
        return True
    if not _plain(frame, first):
        return False
    if not text or (_VERB_FIRST.match(text) and not _NOUN_FIRST.match(text)):
        return False
    asks = _ASKS.search(text)
    if asks and not (_GOAL.search(text) and _ASKS.findall(text) == [asks.group(0)]):
        return False
    return first or bool(_SUBJECT.match(text))


def titles(read_in: list[tuple[Frame | None, Family | None]]) -> None:
    """Read, in place, each unread clause that asks for nothing as a title or a remark, when
    other clauses ask for work."""
    if not any(fam is not None and fam.name != "context" for _, fam in read_in):
        return
    noted = _noted_to_self(read_in)
    for i, (frame, family) in enumerate(read_in):
        if i in noted:
            read_in[i] = (frame, NOTE)  # "Note to self: wash plate later. For now ..."
            continue
        if (
            frame is not None
            and _spelled_out_next(read_in, i)
            and _summary(frame, read_in[i + 1][0])
        ):
            read_in[i] = (frame, REMARK)  # "Could you set the sera up in duplicate? That's ..."
            continue
        if family is not None or frame is None:
            continue
        first = i == 0 and frame.clause.joined == "start"
        if i + 1 < len(read_in) and (nxt := read_in[i + 1][0]) is not None:
            first = first and nxt.clause.sentence != frame.clause.sentence
        if _inventory(frame):
            read_in[i] = (frame, INVENTORY)
        elif asks_nothing(frame, first):
            read_in[i] = (frame, REMARK)


# "Reagents: 2X GoTaq Green, NFW": the liquids a protocol uses, listed under a label
_INVENTORY_LABEL = re.compile(
    r"^(?:reagents?|materials?|liquids?|components?|inputs?|reagent\s+list|what\s+you(?:'ll|\s+will)?"
    r"\s+need|you(?:'ll|\s+will)\s+need|used|mm\s+components?)$",
    _FLAGS,
)
_LEFT_OVER = re.compile(r"^[\s,;/+&]*(?:(?:and|plus)\b[\s,;/+&]*)*$", _FLAGS)


def _inventory(frame: Frame) -> bool:
    """A labelled list of lab liquids and nothing else: noted, nothing to do."""
    if not _INVENTORY_LABEL.match((frame.clause.label or "").strip()) or not frame.ents.liquids:
        return False
    if frame.ents.wellsets or frame.ents.quantities:
        return False  # "X (trough A1)": a fact about where it is, checked as such
    text = frame.ents.text
    for m in sorted([*frame.ents.liquids, *frame.ents.labware], key=lambda m: -m.start):
        text = text[: m.start] + text[m.end :]
    return bool(_LEFT_OVER.match(text.replace("(", " ").replace(")", " ")))


_TO_SELF = re.compile(
    r"^(?:(?:a\s+)?(?:note|memo|reminder)\s+(?:to|for)\s+(?:self|myself|me)|(?:my|personal)\s+notes?|"
    r"n\.?b\.?\s+to\s+self)$",
    _FLAGS,
)


def _noted_to_self(read_in: list[tuple[Frame | None, Family | None]]) -> set[int]:
    """The clauses of the sentence a "Note to self:" opens: the person's own note, not work."""
    out: set[int] = set()
    sentence = None
    for i, (frame, _) in enumerate(read_in):
        if frame is None:
            continue
        if _TO_SELF.match((frame.clause.label or "").strip()) or (
            frame.clause.heading and _TO_SELF.match(frame.clause.said.strip(" :-"))
        ):
            sentence = frame.clause.sentence if sentence is None else sentence
        if sentence is not None and frame.clause.sentence == sentence:
            out.add(i)
    return out


def _spelled_out_next(read_in: list[tuple[Frame | None, Family | None]], i: int) -> bool:
    """The next sentence opens by spelling out what this one asks for ("That's A1-H1, 50 uL
    of each into column 3", "i.e. 100 uL into row B"): this one is its summary."""
    frame = read_in[i][0]
    nxt = read_in[i + 1] if i + 1 < len(read_in) else (None, None)
    if frame is None or nxt[0] is None or nxt[1] is None or nxt[1].name == "context":
        return False
    said = nxt[0].clause.said.strip()
    if nxt[0].clause.label:
        said = f"{nxt[0].clause.label}: {said}"  # "Specifically: 50 uL dye into ..."
    return nxt[0].clause.sentence == frame.clause.sentence + 1 and bool(SPELLED_OUT.match(said))


def _summary(frame: Frame, spelled: Frame | None) -> bool:
    """The sentence names no amount or wells of its own: the next one says them all. Its
    replicates ("in duplicate") must be spelled out too ("into column 3 and again into 4")."""
    n = frame.ents.replicates
    copies = spelled is not None and (
        spelled.ents.replicates == n
        or max((len(w.parts) for w in spelled.ents.wellsets), default=0) >= (n or 0)
        or len(re.findall(r"\b(?:into|to|onto)\b", spelled.text, _FLAGS)) >= (n or 0)
    )
    plain = replace(frame.ents, replicates=None, bare=[]) if n else frame.ents
    return copies and _plain(replace(frame, ents=plain), False)


def _build(frame: Frame, p: Planning) -> str:
    frame.extra["kind"] = "fact"
    plates = [m.name for m in frame.ents.labware if m.sure]
    if len(set(plates)) == 1:
        p.plate = plates[0]  # "we're done with HEK12 for now, can you park it ..."
        return f"a title or a remark: nothing to do for it (about {plates[0]})"
    return "a title or a remark: nothing to do for it"


REMARK = Family("remark", lambda clause, ents: None, _build)


def _note(frame: Frame, p: Planning) -> str:
    frame.extra["kind"] = "fact"
    return "a note to yourself: nothing to do for it"  # its plate is no plate of what follows


NOTE = Family("remark", lambda clause, ents: None, _note)


def _listed(frame: Frame, p: Planning) -> str:
    frame.extra["kind"] = "fact"  # where the reagents sit is no plate to pipette into
    return "a list of the reagents used: nothing to do for it"


INVENTORY = Family("remark", lambda clause, ents: None, _listed)
