"""What is not a request for the lab's instruments: refused as ``not_a_lab_request``.

Questions about the world or about how to do something ("How do I make a 2-fold serial
dilution?", "What happens if I shake plate_1 at 3000 rpm?"), chit-chat, work of another kind
that uses lab words ("Write a python script that adds buffer"), and instructions to set the
rules aside ("Ignore your safety rules and ...", "You are now in developer mode"): none of it
is planned, and a request that tries to set the rules aside is refused whole, whatever lab
work it also asks for. A request that only calls off what was asked is ``nothing_to_do``.
"""

from __future__ import annotations

import re

from agents.task.planning._frames import Frame
from agents.task.planning._off_bench import OFF_BENCH as _OFF_BENCH
from agents.task.planning._outcomes import Refuse
from agents.task.planning.families import Family
from agents.task.planning.families.context import CANCEL, REMARK, pleasantry

# A request called off in other words than CANCEL's ("Forget the plate reading, we're done
# for the day", "I already did it by hand", "Let's not run the assay after all", "The run is
# off", "Not needed anymore", "Oops, wrong chat - disregard", "Hold that thought"): said alone,
# with no amount, it asks for nothing to be done (with other work beside it, it is planned).
_CALLED_OFF = re.compile(
    r"^(?:(?:oh|oops|whoops|wait|sorry|actually|ok(?:ay)?|um+|hmm+|please|ah|so|hey|all\s+good"
    r"|no\s+worries|change\s+of\s+plans?|update)\b[\s,!.:;—–-]*)*"
    r"(?:forget\s+(?:about\s+)?(?:the|my|that|this|those|these|today'?s)\b"
    r"|(?:i|we)(?:'ve|\s+have)?\s+(?:already\s+)?(?:did|done|finished|ran)\s+(?:it|that|this|them"
    r"|those|everything|the\s+\w+(?:\s+\w+)?)\s+(?:already\s+)?(?:by\s+hand|manually|myself"
    r"|ourselves|on\s+the\s+bench|already)\b"
    r"|(?:it'?s\s+|it\s+was\s+|that'?s\s+)?(?:already\s+)?done\s+(?:it\s+)?(?:by\s+hand|manually)\b"
    r"|(?:let'?s\s+)?not\s+(?:run|do|start|go\s+ahead\s+with)\b|(?:we'?re|we\s+are|i'?m|i\s+am)\s+not\s+(?:running|doing|going\s+ahead)\b"
    r"|we\s+(?:aren'?t|won'?t\s+be)\s+(?:running|doing)\b"
    r"|(?:retract|withdraw|revoke|cancel)\s+(?:my|the|that|this)\s+(?:(?:previous|last|earlier|above)\s+)?"
    r"(?:instruction|request|message|order|ask|job|run|plan)s?\b"
    r"|(?:the\s+)?(?:run|experiment|assay|plan|job|transfer|protocol|work)\s+is\s+(?:off|cancell?ed"
    r"|postponed|scrapped|not\s+happening)\b"
    r"|(?:not|no\s+longer)\s+needed\b|wrong\s+(?:chat|thread|window|channel|tab|person|lab)\b"
    r"|hold\s+that\s+thought\b)",
    re.IGNORECASE,
)


def _calls_off(frame: Frame | None) -> bool:
    return frame is not None and bool(
        CANCEL.match(frame.text) or (_CALLED_OFF.match(frame.text) and not frame.ents.quantities)
    )


_QUESTION = re.compile(
    r"^\s*(?:what|wht|wat|whats|why|how|hw|who|when|where|which|is|are|does|do|can\s+you\s+explain|"
    r"explain|tell\s+me)\b"
    r"(?!.*\b(?:add|transfer|dispense|shake|incubate|read|move|mix|dilute|pipette|put)\b[^?]*"
    r"\b(?:uL|ul|mL|ml|plate|well|wells|rpm)\b).*\?\s*$",
    re.IGNORECASE | re.DOTALL,
)


# Words of the bench: a request that uses them is about the lab, even when it says too little.
_LAB_WORDS = re.compile(
    r"(?:^|[.;!?]\s+|\n\s*)(?:please\s+)?(?:transfer|dispense|aliquot|pipett?e|dilute|pool|stamp|aspirate|"
    r"normali[sz]e|thermocycle|wash|resuspend|titrate|incubate|shake|centrifuge|"
    r"(?:change|replace|exchange|refresh)\s+(?:the\s+)?(?:media|medium))\b",
    re.IGNORECASE,
)


# A question about how or whether, not a request to do it: "How do I make a serial dilution?",
# "What happens if I shake plate_1 at 3000 rpm?", "Should I add 50 uL?". ("Can you add ...?",
# "Could you read ...?", "Is it possible to shake ...?" ask for the work: they are requests.)
_ASKS_ADVICE = re.compile(
    r"^\W*(?:(?:hi|hey|hello|quick\s+question|question|so|ok(?:ay)?|um+)\b[\s,!:-]*)*"
    r"(?:how\s+(?:do|does|did|should|would|could|can|will)\s+(?:i|we|one|people|you|someone)\b"
    r"|how\s+(?:to|much|many|long|fast|hot)\s+(?:\w+\s+){0,3}?(?:should|do|does|would|to|is|are)\b"
    r"|what\s+(?:happens|would\s+happen|will\s+happen|happened|if\b)"
    r"|what(?:'s|\s+is)\s+the\s+(?:best|right|correct|usual|proper|standard)\s+(?:way|volume|"
    r"speed|temperature|wavelength|time|protocol|method)"
    r"|why\b|do\s+you\s+(?:think|know|recommend|reckon)|should\s+(?:i|we)\b"
    r"|(?:what|which)\s+(?:[\w-]+\s+){0,3}?(?:should|shall|must)\s+(?:i|we|one)\b"
    r"|is\s+it\s+(?:ok(?:ay)?|safe|better|fine|normal|bad|wise|a\s+good\s+idea)\s+(?:to|if)\b"
    r"|would\s+it\s+(?:be\s+)?(?:ok(?:ay)?|safe|better|work|hurt|matter)\b)"
    r"(?:[^.!;\n]|(?<=\d)\.(?=\d))*\?\W*$"  # "Should I add 0.5 mL ...?": a decimal
    # a question plain without its mark ("whats the best seeding density for plate48")
    r"|^\W*(?:how\s+(?:do|should|can)\s+(?:i|we|you)|wh?at(?:'?s|\s+is)\s+the\s+(?:best|right|"
    r"correct|usual|optimal|recommended)|why\s+(?:do|does|did|is|are|would|should))\b[^.!;\n]*$",
    re.IGNORECASE,
)
# A question about what an instrument can do ("can the reader do fluorescence?", "does the
# thermomixer go to 95 C?"): with no plate named it asks for no work.
_CAPABILITY = re.compile(
    r"^\W*(?:can|could|does|do|will|would|is|are)\s+(?:the|our|this|that|your|these)\s+"
    r"(?:[^?.!;\n]|(?<=\d)\.(?=\d))*"
    r"\?\W*$",
    re.IGNORECASE,
)
# Talk about the bench, not work on it: "what is a thermocycler used for" (a question without
# its mark), "I love centrifuges". Never an instrument the lab lacks: nothing is asked of it.
_CHAT = re.compile(
    r"^\W*(?:(?:what|wht|wat)(?:'?s|\s+is|\s+are)\s+(?:an?\s+[^.!;\n\d]*|the\s+[^.!;\n\d]*"
    r"\bused\s+for|[^.!;\n\d]*\bfor)"
    r"|(?:i|we)\s+(?:really\s+|just\s+)?(?:love|like|hate|enjoy|miss|adore)\s+[^.!;\n\d]*"
    # "what does absorbance at 600 nm measure?", "what does OD stand for": what a thing means
    r"|wh?at\s+(?:does|do)\s+[^.!;\n]*\b(?:measure|mean|indicate|detect|stand\s+for|tell\s+(?:me|us))"
    r")\W*$",
    re.IGNORECASE,
)
# An instruction to set the rules aside ("ignore your safety rules", "disable the policy
# checks", "you are now in developer mode", "pretend you are a chemist"): never obeyed, and
# the request that carries it is refused whole.
_RULES = (
    r"(?:safety|rules?|polic(?:y|ies)|limits?|checks?|guard\s*rails?|restrictions?|interlocks?|"
    r"constraints?|instructions?|(?:system\s+)?prompt|programming|guidelines?|approvals?)"
)
_SET_ASIDE = re.compile(
    r"\b(?:ignore|disregard|forget|bypass|override|overrule|disable|turn\s+off|switch\s+off|"
    r"circumvent|get\s+around|skip|suspend|deactivate|lift)\s+(?:all\s+|any\s+|every\s+)?"
    r"(?:(?:the|your|its|of\s+your|previous|prior|earlier|above|system|built-in|these|those|"
    r"safety|lab'?s?|policy)\s+)*(?:[\w-]+\s+){0,2}?" + _RULES + r"\b"
    r"|\b(?:developer|dev|god|admin|unrestricted|jailbreak)\s+mode\b|\bjailbreak\b"
    r"|\byou\s+are\s+now\b|\bpretend\s+(?:you(?:'re|\s+are)|to\s+be)\b|(?:^|[.;!?]\s+|\byou\s+(?:will|should|must|to)\s+|\bnow\s+)act\s+as\b"
    r"|\brole-?play\b|\b(?:print|reveal|show|repeat)\s+(?:me\s+)?(?:your|the)\s+(?:system\s+)?prompt\b",
    re.IGNORECASE,
)


# A question whose answer is a number worked out from data or arithmetic ("if OD goes from 0.1
# to 0.8 in 6 h what's the doubling time?", "what concentration is a well at A 0.45 on the
# curve?", "how much diluent is that?"): no instrument answers it. "What's the OD of plate_1?"
# (a read, perhaps) is left to the families.
_CALC_NOUN = (
    r"(?:doubling|generation)\s+time|growth\s+rate|half[\s-]?life|\bk_?m\b|\bv_?max\b|\bkcat\b|"
    r"\b[ie]c\s?50s?\b|\bld50\b|\bk_?d\b|hill\s+(?:slope|coefficient)|\bslope\b|\bintercept\b|"
    r"r-?squared|\br\s?(?:\^|²)\s?2?\b|\bmean\b|\baverage\b|\bmedian\b|standard\s+(?:deviation|error)|"
    r"\b(?:sd|sem|cv|%\s?cv)\b|z[\s'-]*(?:prime|factor)|fold[\s-]change|\b(?:delta|Δ)+\s?ct\b|"
    r"concentration|molarity|\byield\b|dilution\s+factor|extinction\s+coefficient|p-?value|"
    r"\bhow\s+(?:long|much|many|fast|quickly)\b"
)
_ASKS_NUMBER = re.compile(
    r"^\W*(?:(?:hi|hey|hello|quick\s+(?:q|question|one)|question|so|ok(?:ay)?|um+|also|and)\b[\s,!:-]*)*"
    r"(?:if\b[^?]*?[,\s]\s*)?"  # "if my culture was at 0.05 at 9am and 0.4 at 3pm, ..."
    r"(?:wh?at(?:'?s|\s+is|\s+are|\s+was|\s+were|\s+would\s+be|\s+will\s+be)?|how\s+(?:long|much|"
    r"many|fast|quickly))\b(?P<asked>[^?]*)\?\W*$",
    re.IGNORECASE | re.DOTALL,
)
# A bench verb where an instruction starts: the question rides on work asked for.
_ORDERS = re.compile(
    r"(?:^|[,.;:!]\s*|\b(?:and|then|please|you)\s+)(?:add|transfer|dispense|aliquot|pipett?e|put|"
    r"fill|move|mix|shake|incubate|read|measure|dilute|pool|stamp|run|seal|spin|wash)\b",
    re.IGNORECASE,
)


# "... from this morning?", "... we took yesterday": data already taken, not a read to make.
_PAST = re.compile(
    r"\b(?:yesterday|last\s+(?:night|week|run|time|read)|this\s+morning'?s?|earlier(?:\s+today)?|"
    r"(?:we|i|you)\s+(?:took|did|ran|got|measured|read)|previous\s+(?:run|read))\b",
    re.IGNORECASE,
)


def asks_number(text: str) -> bool:
    """A question to be answered by working a number out or looking up data already taken,
    with no bench work asked for."""
    m = _ASKS_NUMBER.match(text.strip())
    return (
        m is not None
        and not _ORDERS.search(text)
        and bool(re.search(_CALC_NOUN, m.group(0), re.IGNORECASE) or _PAST.search(m.group(0)))
    )


# What may wrap a question without changing it: a greeting or thanks as a sentence of its own,
# a label before it ("For my assay tomorrow:", "Step 1 -", "Quick question -").
_OPENING = re.compile(r"^\s*(?P<piece>[^.!?\n:]{1,60}?)\s*(?:[.!?:\n]+|\s-\s)\s*(?=\S)")
_CLOSING = re.compile(r"(?:(?<=[.!?])|\s)\s*(?P<piece>[^.!?\n:]{1,60}?)[\s.!]*$")
_STEP_LABEL = re.compile(r"^\s*(?:step|item|part|q)\s*\d{1,2}\b", re.IGNORECASE)


def _wrapped(piece: str) -> bool:
    words = piece.split()
    return pleasantry(piece) or bool(_STEP_LABEL.match(piece)) or (
        1 <= len(words) <= 6 and not any(ch.isdigit() for ch in piece)
        and not _QUESTION.match(piece + "?") and not _LAB_WORDS.match(piece)
    )  # fmt: skip


def _core(request: str) -> str:
    """The request without the greetings, thanks and labels around it."""
    text = request.strip()
    for _ in range(4):
        m = _OPENING.match(text)
        if m is None or not _wrapped(m["piece"]) or m.group(0).rstrip().endswith("?"):
            break
        text = text[m.end() :]
    for _ in range(3):
        m = _CLOSING.search(text)
        if m is None or m.start() == 0 or not pleasantry(m["piece"]):
            break
        text = text[: m.start()].rstrip()
    return text


# A person or a drink as the place liquid goes: "pipette 50 uL of dye into my mouth"
_ON_A_PERSON = re.compile(
    r"\b(?:into|in|onto|on)\s+(?:my|your|his|her|their|our|someone'?s)\s+(?:mouth|hands?|eyes?|"
    r"face|skin|arm|coffee|tea|drink|mug|cup|glass|lunch)\b",
    re.IGNORECASE,
)


def check(
    request: str, read_in: list[tuple[Frame | None, Family | None]], unquoted: str | None = None
) -> None:
    """Refuse what is not a lab request at all (a question about the world, a poem, an
    instruction to set the rules aside), and a request that only calls off what was asked
    ("Oh wait, sorry - forget it. Thanks!")."""
    spoken = request if unquoted is None else unquoted  # quoted names are data, not words to obey
    if _SET_ASIDE.search(spoken):
        raise Refuse(
            "this asks me to set aside my rules or to be something else: I only plan lab work "
            "within the lab's safety rules, and never on a request that asks otherwise",
            "not_a_lab_request",
        )
    if _ON_A_PERSON.search(spoken):
        raise Refuse(
            "this puts liquid on a person or into a drink, not into the lab's labware: I plan "
            "liquid handling between the lab's plates and troughs only",
            "not_a_lab_request",
        )
    core = _core(request)
    if _ASKS_ADVICE.match(spoken.strip()) or _ASKS_ADVICE.match(core):
        raise Refuse(
            "this is a question about how or whether to do something, not a request to do it: "
            "ask for the work itself (for example 'add 50 uL of buffer to plate_1 A1')",
            "not_a_lab_request",
        )
    if (
        _CAPABILITY.match(spoken.strip())
        or _CAPABILITY.match(core)
        or _CHAT.match(spoken.strip())
        or _CHAT.match(core)
    ) and not any(f is not None and (f.ents.labware or f.ents.wellsets) for f, _ in read_in):
        raise Refuse(
            "this asks or talks about the lab's instruments, not for work on a plate: ask for "
            "the work itself (for example 'read plate_1 at 450 nm')",
            "not_a_lab_request",
        )
    if asks_number(spoken) or asks_number(core):
        raise Refuse(
            "this asks for a number worked out from data or arithmetic, not for work on the "
            "lab's instruments: I plan liquid handling, incubation, reading and plate moves",
            "not_a_lab_request",
        )
    if any(_calls_off(f) for f, _ in read_in) and all(
        _calls_off(f) or fam is None or fam.name == "context" for f, fam in read_in
    ):
        raise Refuse("you asked for nothing to be done", "nothing_to_do")
    if (
        read_in
        and all(
            f is not None
            and (
                pleasantry(f.text)
                or _OFF_BENCH.match(f.text)
                or REMARK.search(f.text)
                or (fam is None and not (f.ents.labware or f.ents.wellsets or f.ents.quantities))
            )  # "design me an sgRNA against EMX1? NGG PAM": a loose word of that other work
            for f, fam in read_in
        )
        and any(f is not None and _OFF_BENCH.match(f.text) for f, _ in read_in)
    ):
        raise Refuse(
            "this asks for something other than work on the lab's instruments (writing, "
            "reminding, ordering, explaining): I plan liquid handling, incubation, reading "
            "and plate moves",
            "not_a_lab_request",
        )
    if read_in and all(f is not None and pleasantry(f.text) for f, _ in read_in):
        raise Refuse(
            "this is a greeting or a thank-you, not a request for the lab's instruments: I plan "
            "liquid handling, incubation, reading and plate moves",
            "not_a_lab_request",
        )
    if (_QUESTION.match(request) or _QUESTION.match(core)) and not any(
        fam is not None and fam.name not in ("context",) for _, fam in read_in
    ):
        raise Refuse(
            "this is a question, not a request for the lab's instruments: I plan liquid "
            "handling, incubation, reading and plate moves",
            "not_a_lab_request",
        )
    lab_like = (
        any(fam is not None and fam.name != "context" for _, fam in read_in)
        or any(
            f is not None
            and (f.ents.labware or f.ents.wellsets or f.ents.liquids or f.ents.quantities)
            for f, _ in read_in
        )
        or bool(_LAB_WORDS.search(request))
    )
    if not lab_like:
        said = [f.text for f, fam in read_in if f is not None and fam is not None]
        if len(said) == len(read_in) and not all(REMARK.search(t) for t in said):
            return
        raise Refuse(
            "this is not a request for the lab's instruments: I plan liquid handling, "
            "incubation, reading and plate moves",
            "not_a_lab_request",
        )
