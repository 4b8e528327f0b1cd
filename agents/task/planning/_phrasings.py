"""Ways of saying a command that are written the planner's one way before anything reads it:
a verb's particle ("add in 45 uL"), a short form's period ("1x assay dil. to"), a remark in
brackets ("(these are my blanks)"), one transfer said with two verbs ("take 40 uL ... and add
it to ..."), "the first 6 wells of row B", and work said of its plate as a wish or in the
passive ("get plate_1 read at 450 nm", "plate_1 needs to be read").
"""

from __future__ import annotations

import re

from agents.task.planning._implied_units import implied_units
from agents.task.planning._narrative import narrative
from agents.task.planning._using_first import using_after

# "add in 45 uL", "pipette out 20 uL", "transfer over 30 uL": the particle says nothing more
# ("in 45 uL" would read as a final volume)
_PARTICLE = re.compile(
    r"\b(add|pipett?e|dispense|spike|put|pop|squirt|transfer|move|aliquot|load|deliver)\s+"
    r"(?:in|out|over)\s+(?=(?:\d|\.\d|an?\s+|one\s))",
    re.IGNORECASE,
)
# "A1+A2 -> pool A1, B1+B2 -> pool B1": a comma between two such pairs ends the first (else
# "pool A1, B1" would read as one well set)
_W = r"[A-Pa-p]\d{1,2}"
_GROUP_AFTER_PAIR = re.compile(
    rf"((?:->|→|=>)\s*(?:[\w-]+\s+)?{_W})\s*,\s*"
    rf"(?=(?:[\w-]+\s+)?{_W}(?:\s*(?:\+|,|&|and)\s*{_W})+\s*(?:->|→|=>))",
    re.IGNORECASE,
)
# "replace w/ 500 uL medium", "top up w/ buffer": "with" (not "w/v", "w/w": weight ratios)
_W_SLASH = re.compile(r"(?<![\w/])w/(?![vwo]\b)\s*(?=[\w«])", re.IGNORECASE)  # ("w/o": without)
_W_O = re.compile(r"(?<![\w/])w/o\b", re.IGNORECASE)  # "w/o changing tips", "w/o mixing"
_N_EQ = re.compile(r"\bn\s*=\s*([2-9])\b(?!\s*(?:u|µ|m)?[lL]\b)")  # "Dye, n=3, 20 uL": a count
# "1x assay dil. to D1-D4", "50 uL ea. into", "Stop Sol. 2N": a short form's period, not a
# sentence's end
_ABBR_DOT = re.compile(
    r"\b((?i:soln|sol|dil|buf|buff|std|stds|conc|cmpd|ctrl|smpl)|ea|vol|temp|approx|resp|sat"
    r"|rxn|rxns|incl|max|min|avg|ca)\.(?=[ \t]+[a-z(0-9])"
)
# "q.s. to 250 uL", "Q.S. with PBS": quantum satis, one word (no sentence ends at its dots)
_QS = re.compile(r"\bq\.\s?s\.(?=\s|$|[,;])|\bq\.s\b", re.IGNORECASE)
# "(these are my blanks)", "(I think)", "(for the calibration)": a remark in brackets that says
# nothing to do (no number, no well, no tip or mixing word) is set aside.
_ASIDE = re.compile(
    r"\s*\(\s*(?:these|this|that|it|they|i|we|my|our|which|as|hopefully|just|not\s+sure|"
    r"for\s+(?:my|our|the|a|an|tomorrow|today|this|next))\b(?![^()]*(?:\d|\b(?:tips?|channels?|"
    r"mix\w*|same|fresh|new|change|multi\w*|each|every|all|first|then|after|before)\b))[^()]*\)",
    re.IGNORECASE,
)
# "into H1 to H11 (H12 is my sterility control so no bugs there!)": a note about a well, said
# in brackets inside a step, is a sentence of its own (never a fact about the step's wells).
_WELL_NOTE = re.compile(
    r"\s*\((?P<note>[A-Pa-p]\d{1,2}\b(?![^()]*=\s*S\d{1,2}\b)(?![^()]*\d\s*(?:u[lL]|m[lL])\b)"
    r"(?![^()]*\b(?:left\s+(?:out|empty)|excluded|omitted|skipped)\s*\))[^()]*?"  # (A12 left out)
    r"(?:\s(?:is|are|stays?|remains?|serves?|left)\b|\s*=)[^()]*)\)\s*,?"
)
# "Take 40 uL of dye from the reservoir and add it to A1-A4", "Aspirate 50 uL from A1, then
# dispense into B1": one transfer said with two verbs.
_TAKE_PUT = re.compile(
    r"\b(?:take|grab|aspirate|draw(?:\s+up)?|withdraw|suck\s+up|pick\s+up|collect)\s+"
    r"(?P<what>(?:[^.;\n]|(?<=\d)\.(?=\d))*?\d(?:[^.;\n]|(?<=\d)\.(?=\d))*?)\s*(?:,\s*(?:and\s+)?(?:then\s+)?|\s+(?:and\s+)?then\s+|\s+and\s+"
    r"|(?:[.;]|\n\s*(?:\d{1,2}[.)]|[-*])?)\s*(?:then\s+)?)"
    r"(?:add|put|dispense|transfer|deliver|place|pipett?e|move|eject|expel|release|squirt|load|"
    r"drop|pool|combine|consolidate)\s+(?:(?:it|them|this|that|all\s+of\s+it|the\s+lot)\s+)?"
    r"(?:(?:all\s+)?together\s+)?(?P<to>(?:in|into|to|onto)\b)",
    re.IGNORECASE,
)
# "the first 6 wells of row B", "the first 4 wells in column 3": the wells from the row's or
# column's start
_FIRST_WELLS = re.compile(
    r"\b(?:the\s+)?first\s+(\d{1,2})\s+wells?\s+(?:of|in|on|along|down)\s+(?:the\s+)?"
    r"(?:row\s+([A-Pa-p])|col(?:umn)?\s+(\d{1,2}))\b",
    re.IGNORECASE,
)


def _first_wells(m: re.Match[str]) -> str:
    n = int(m.group(1))
    if m.group(2):
        return f"{m.group(2).upper()}1-{m.group(2).upper()}{n}"
    return f"A{m.group(3)}-{chr(64 + min(n, 26))}{m.group(3)}"


# "get plate_1 read at 450 nm", "have it shaken for 2 min", "plate_1 needs to be read", "then
# the plate read at 600 nm", "I want plate_1 read": the work said of its plate, as a command.
_DONE_TO = {"read": "read", "shaken": "shake", "incubated": "incubate", "mixed": "mix",
            "measured": "measure", "scanned": "scan", "spun": "spin", "heated": "heat",
            "sealed": "seal", "centrifuged": "centrifuge", "imaged": "image"}  # fmt: skip
_CAUSATIVE = re.compile(
    r"\b(?P<lead>(?:get|have)\s+|(?:then|and)\s+|(?:(?:i|we)(?:'d|\s+would)?\s+)?(?:want|like|need)\s+)?"
    r"(?P<obj>(?:the\s+|this\s+|that\s+)?plate|it|[A-Za-z][\w-]*\d\w*|[A-Za-z][\w-]*_[\w-]+)\s+"
    r"(?P<be>(?:then\s+|also\s+)?(?:needs?|has|have)\s+to\s+be\s+|(?:should|must|is\s+to|will)\s+be\s+"
    r"|to\s+be\s+)?"
    r"(?P<pp>read|shaken|incubated|mixed|measured|scanned|spun|heated|sealed|centrifuged|imaged)"
    r"(?=\s+(?:at|for|on|in|@|with|by|\d)|\s*[,.;]|\s*$)",
    re.IGNORECASE,
)


# "The plate needs sealing afterwards", "viab_96 then needs reading": the work, as a command.
_NEEDS_ING = re.compile(
    r"\b(?P<obj>(?:the\s+|this\s+|that\s+)?plate|it|[A-Za-z][\w-]*\d\w*|[A-Za-z][\w-]*_[\w-]+)\s+"
    r"(?P<adv>(?:then|also|now)\s+)?needs?\s+(?P<ger>sealing|spinning|shaking|reading|mixing|"
    r"incubating|imaging|centrifuging|heating|measuring|scanning)\b",
    re.IGNORECASE,
)
_ING_VERB = {
    "spinning": "spin",
    "imaging": "image",
    "centrifuging": "centrifuge",
    "shaking": "shake",
    "incubating": "incubate",
    "measuring": "measure",
    "sealing": "seal",
    "reading": "read",
    "mixing": "mix",
    "heating": "heat",
    "scanning": "scan",
}


# where a sentence, a line or a list item starts (after its marker and a "then")
_STEP_START = (
    r"(?:^|(?<=[.;!?:]\s)|(?<=\n))[ \t]*(?:[-*\u2022][ \t]+|\d{1,2}[.)][ \t]+)?(?:then\s+)?"
)
# "2. cells_96 is incubated at 37 C for 4 h", "The plate is then read at 450 nm": a protocol's
# step said in the passive, at the start of a sentence or item (never "once X is read, ...")
_IS_DONE = re.compile(
    rf"(?P<lead>{_STEP_START})"
    r"(?P<obj>(?:the\s+|this\s+)?plate|[A-Za-z][\w-]*\d\w*|[A-Za-z][\w-]*_[\w-]+)\s+(?:is|are)\s+"
    r"(?:then\s+|now\s+)?(?P<pp>read|shaken|incubated|mixed|measured|scanned|heated|imaged)"
    r"(?=\s+(?:at|for|on|in|@|with|by|\d))",
    re.IGNORECASE,
)


def _needs_ing(m: re.Match[str]) -> str:
    return f"{m['adv'] or ''}{_ING_VERB[m.group('ger').lower()]} {m['obj']}"


def _causative(m: re.Match[str]) -> str:
    if not (m.group("lead") or m.group("be")):
        return m.group(0)  # "plate_1 read 0.4 at 600 nm": no command
    lead = m.group("lead") or ""
    keep = lead if re.match(r"(?:then|and)\b", lead, re.IGNORECASE) else ""
    return f"{keep}{_DONE_TO[m.group('pp').lower()]} {m.group('obj')}"


# "Using the library plate, put 5 uL from A2 into E2": the plate said first is where "from A2" is
# (at the start of a line or of a sentence: "Hi! Using the library plate, ...")
_USING_PLATE = re.compile(
    r"(?im)(?:^|(?<=[.!?:;] )|(?<= - ))"
    r"(?P<lead>(?:using|with|from|out\s+of|taking\s+from)\s+)(?P<lw>(?:the\s+)?[\w-]+"
    r"(?:\s+(?:plate|block))?)\s*,\s*(?P<rest>[^\n]*?\bfrom\s+)(?=(?:wells?\s+)?[A-Pa-p]\d{1,2}\b)"
)


# "A 1-A 6": a well written with a space, in a range; "ad 30 uL": the verb "add" one letter short
_SPACED_RANGE = re.compile(
    r"\b([A-P]) (\d{1,2})(\s*(?:-|to|through|thru)\s*)([A-P]) (\d{1,2})\b(?!\s*(?:u[lL]|m[lL]))"
)
_AD = re.compile(r"(?im)^([ \t]*(?:[-*•][ \t]+|\d{1,2}[.)][ \t]+)?)ad(?=[ \t]+\d)")


# "300 rpm x 10 min", "37 C x 1 h", "1000 g x 5 min": a setting held for a time, said with a
# times sign ("x 10" alone counts cycles: "(95 C 15 s, 60 C 30 s) x 35")
_HELD_FOR = re.compile(
    r"(?<=\d)(\s*(?:rpm|C|g|x\s*g))\s*[x*]\s*(?=\d+(?:\.\d+)?\s*(?:h|hrs?|hours?|min|mins|"
    r"minutes?|s|secs?|seconds?)\b)",
    re.IGNORECASE,
)


# "35 cyc", "40 cyc.", "30cyc": cycles, in a notebook's shorthand
_CYC = re.compile(r"(?<=\d)\s*cycs?\b\.?", re.IGNORECASE)


# "after a 5 min 95 C hot start", "with a 10 min 95 C activation": the time said before its
# temperature (only after an article, where a list "72 C 30 s 55 C ..." cannot be meant)
_TIME_FIRST = re.compile(
    r"\b(?P<a>an?|the|one)\s+(?P<t>\d+(?:\.\d+)?\s*-?\s*(?:min|s|h))\s+(?:at\s+)?"
    r"(?P<c>-?\d+(?:\.\d+)?\s*C)\b(?!\s*(?:for\b|\d))",
    re.IGNORECASE,
)


def held_for(text: str) -> str:
    """``text`` with "300 rpm x 10 min" written "300 rpm for 10 min" (units already one way)
    and "35 cyc" written "35 cycles"."""
    text = _TIME_FIRST.sub(lambda m: f"{m['a']} {m['c']} {m['t'].replace('-', ' ')}", text)
    return _CYC.sub(" cycles", _HELD_FOR.sub(r"\1 for ", text))


# "into column 3 and again into column 4 of X": one set of places, said twice over ("into
# column 3 and column 4 of X"), so the plate said at the end is the plate of both.
_LINE = r"(?:columns?|cols?|rows?)\s+[\w-]+"
_AGAIN_INTO = re.compile(
    rf"\b(?P<to>into|to|onto|in)\s+(?P<said>(?:{_LINE}\s*(?:,|,?\s+and)\s+)*{_LINE})"
    r"\s*(?P<sep>,|,?\s+and)\s+(?:again|also|then|once\s+more)?\s*(?:into|to|onto|in)\s+"
    r"(?=(?:columns?|cols?|rows?)\s)",
    re.IGNORECASE,
)


# "the cells are already fixed, so basically I just need 300 uL DPBS in each well of row C":
# what is wanted, after what is so. Two clauses: the fact is checked, the wish is the work
# (read as one, its amount would be taken for a claim about what the wells hold).
_SO_WANTED = re.compile(
    r"(?:\s*,\s*|\s+)(?:and\s+)?so\s+(?:basically\s+|essentially\s+|really\s+|now\s+)?"
    r"(?=(?:all\s+)?(?:i|we)\s+(?:just\s+|only\s+|really\s+|basically\s+)?(?:need|want|'d\s+like|"
    r"would\s+like)\b)",
    re.IGNORECASE,
)


# "the gDNA in pcr_plate columns 1 and 2 needs 15 uL TE each": the liquid goes to the wells
# holding the gDNA there ("add 15 uL TE each to the gDNA in pcr_plate columns 1 and 2").
_HELD_NEEDS = re.compile(
    r"(?P<lead>^|[.;!?,]\s+)(?P<held>the\s+(?:[\w-]+\s+){1,2}?in\s+[^.;,]*?)\s+needs?\s+"
    r"(?:another\s+)?(?P<what>\d[^.;!?,]*?)(?=\s*(?:[.;!?,]|$))",
    re.IGNORECASE,
)


# "add 10 uL X to A3-H3 - is there enough X in res for that?": the check after a dash or a
# comma is a sentence of its own, never part of the places of the work before it.
_CHECK_AFTER = re.compile(
    r"\s*(?:\s[-–—]|,)\s+(?=(?:(?:is|are|will)\s+there\s+(?:be\s+)?|(?:do|will)\s+(?:we|i|you)\s+"
    r"have\s+)enough\b|(?:can|could|will|would)\s+(?:the\s+robot|it|you|the\s+system)\s+"
    r"(?:do|handle|manage)\s+(?:that|this|it)\b)",
    re.IGNORECASE,
)


# "Before sampling, mix ...", "Resuspend the overnights before imaging: ...": when the work is
# for, a step off the robot (never one the request asks for: "before reading" stays)
_BEFORE_OFF_ROBOT = re.compile(
    r"(?:,\s*|\s+|^)(?:(?:just|right)\s+)?(?:before|prior\s+to|ahead\s+of)\s+(?:the\s+)?"
    r"(?:sampling|imaging|harvest(?:ing)?|staining|counting|sequencing|freezing|storage|storing"
    r"|passaging|analysis|use|using\s+(?:it|them)|the\s+run|microscopy|FACS|flow)\b,?(?=\s*[,:.;\n]|\s+\w)",
    re.IGNORECASE,
)


# "100 uL of TMB is added to all wells", "Wash buffer (200 uL) should be dispensed into each
# well": a protocol's passive is its command (present or modal; "was added" stays a fact)
_PASSIVE_PP = {"added": "add", "dispensed": "dispense", "pipetted": "pipette",
               "transferred": "transfer", "aliquoted": "aliquot", "aliquotted": "aliquot",
               "loaded": "load", "distributed": "distribute", "plated": "dispense"}  # fmt: skip
_TEXT = r"(?:[^.;:\n]|(?<=\d)\.(?=\d))"  # within one sentence ("0.5 M" is not its end)
_PASSIVE = re.compile(
    rf"(?P<lead>{_STEP_START})"
    rf"(?P<what>{_TEXT}{{0,60}}?\d\s*[u\u00b5m]l\b{_TEXT}{{0,40}}?)\s+(?:is|are|should\s+be|must\s+be|"
    r"(?:is|are)\s+to\s+be|will\s+be|gets?|get)\s+(?:then\s+)?(?P<pp>added|dispensed|pipetted|"
    r"transferred|aliquott?ed|loaded|distributed|plated)(?:\s+out)?\s+(?P<to>to|into|onto|in|across)\b",
    re.IGNORECASE,
)


# "rows A-G, 100 uL, H = blank", "H = assay buffer blank", ". H: blanks": a row said by its
# letter alone, as the blank of a curve
_BLANK_WORDS = (
    r"(?=(?:the\s+|a\s+)?(?:(?:[^,;.\n]|\.(?=\d)){0,40}?\s)?"
    r"(?:blanks?|zeros?(?:\s+std|\s+standards?)?|ntcs?|[\w-]+\s+only)\b)"
)
_ROW_BLANK = re.compile(
    rf"(?:(?<=[,;(.]\s)|(?<=^)|(?<=\n))(?-i:([A-HJ-P]))\s*(?:=|:|is)\s*{_BLANK_WORDS}",
    re.IGNORECASE | re.MULTILINE,
)
# "; 11 and 12 blank", "11-12 = blanks": columns said by their numbers alone, as the blanks of a
# curve across rows (two numbers or a sign joining them: "2 blanks" alone is a count)
_COL_BLANK = re.compile(
    r"(?:(?<=[,;(.]\s)|(?<=^)|(?<=\n))(\d{1,2}(?:\s*(?:-|and|&|\+)\s*\d{1,2})+"
    rf"|\d{{1,2}}(?=\s*(?:=|:)))\s*(?:=|:|are|is)?\s*{_BLANK_WORDS}",
    re.IGNORECASE | re.MULTILINE,
)


# "..., and put assay buffer alone in H1": a curve's blank said as a step with no volume
_ALONE_IN = re.compile(
    r"(?P<lead>(?:^|[,;.]\s*|\band\s+))(?:then\s+)?(?:put|add|leave|fill)\s+(?:just\s+|only\s+)?"
    r"(?P<liq>[\w%+-]+(?:\s+[\w%+-]+)?)\s+(?:alone|only)\s+(?:in|into)\s+(?:well\s+)?"
    r"(?P<w>[A-P]\d{1,2}(?:\s*(?:-|and|&)\s*[A-P]\d{1,2})?)\b(?=\s*(?:[,;.]|$))",
    re.IGNORECASE,
)
# "H1 should just have assay buffer": the same blank, said as what the well should hold
_SHOULD_ONLY = re.compile(
    r"(?P<lead>(?:^|[,;.]\s*|\band\s+))(?P<w>[A-P]\d{1,2}(?:\s*(?:-|and|&)\s*[A-P]\d{1,2})?)\s+"
    r"(?:should|will|must)\s+(?:just|only)\s+(?:have|hold|get|contain|receive)\s+"
    r"(?P<liq>[\w%+-]+(?:\s+[\w%+-]+)?)(?=\s*(?:[,;.]|$))",
    re.IGNORECASE,
)
_SERIES_SAID = re.compile(r"\b(?:serial\w*|series|\d+-fold|std\s+curve|standard\s+curve)\b", re.I)
# "..., leave 100 uL in each": the level a series' wells end at, its final volume
_LEAVE_EACH = re.compile(
    r"\b(?:leave|leaving|keep|keeping)\s+(?P<v>\d+(?:\.\d+)?\s*[uµm][lL])\s+(?:in|per)\s+"
    r"(?:each|every|all)(?:\s+(?:of\s+them|wells?|one))?\b",
    re.I,
)


def _passives(text: str) -> str:
    """Protocol steps said in the passive, written as commands."""
    text = _PASSIVE.sub(
        lambda m: f"{m['lead']}{_PASSIVE_PP[m['pp'].lower()]} {m['what']} {m['to']}", text
    )
    return _IS_DONE.sub(lambda m: f"{m['lead']}{_DONE_TO[m['pp'].lower()]} {m['obj']}", text)


# "From trough A3 of quad_res, add 100 uL to every well of X": the source said first, before
# the comma, is the source of the command after it ("add 100 uL to ... from trough A3 of ...")
# ("Using reservoir column 1 (DMEM), seed ...": a trough, a column or a well said, never
# "Using the 8-channel, ..." - a head or tips)
_FROM_FIRST = re.compile(
    rf"(?P<lead>{_STEP_START})(?:(?:from|out\s+of)\s+|(?:using|taking\s+from)\s+"
    r"(?=[^,.;:\n]{0,40}?\b(?:reservoir|trough|res|column|col|[A-Pa-p]\d{1,2})\b)"
    r"(?![^,.;:\n]*\b(?:channels?|tips?|head|pipett?e|multi\w*)\b))"
    r"(?P<src>[^,.;:\n]{1,40}?)\s*,\s*"
    r"(?P<rest>(?:add|dispense|transfer|pipett?e|put|aliquot|distribute|load|plate\s+out|seed"
    r"|fill|send|move|deliver|spread|give|spot|stamp|copy)\b"
    r"(?:[^.;\n]|(?<=\d)\.(?=\d))*?)(?=\s*(?:[.;\n]|$))",
    re.IGNORECASE,
)


# "tips: change after each dispense", "Tip policy - fresh for every well", "Tips: one per well":
# a tip rule under a "Tips" label, said the way the tip phrases read ("change tips after ...")
_TIP_LABEL = re.compile(
    r"(?im)(?P<lead>^|[;.,]\s*|\(\s*)tips?(?:\s+(?:policy|use|usage|handling|changes?|rule))?\s*"
    r"(?::|=|\s-)\s*(?P<neg>(?:don'?t|do\s+not|never|no\s+need\s+to)\s+)?"
    r"(?P<w>change|new|fresh|reuse|re-use|keep|one|a|single|1|same|separate|clean)\b(?![^\n;]*\btips?\b)"
)


def _tip_label(m: re.Match[str]) -> str:
    word = m["w"]
    noun = "tip" if word.lower() in ("one", "a", "single", "1", "same") else "tips"
    if word.lower() == "keep":
        return f"{m['lead']}{m['neg'] or ''}keep the same {noun}"
    return f"{m['lead']}{m['neg'] or ''}{word} {noun}"


# "B1 - 5 uL; B2 - 10 uL": a well and its volume joined by a dash (no range: no well after it;
# "B1:B12 - 140 uL out to waste" is the wells, then what to do with them)
_WELL_DASH_VOLUME = re.compile(
    r"\b([A-Pa-p]\d{1,2})[ \t]+-[ \t]+(?=(?:\d+(?:\.\d+)?|\.\d+)\s*(?:u[lL]|m[lL])\b"
    r"(?:\s*each)?[ \t]*(?:[;,.)]|$))",
    re.MULTILINE,
)


# "Per well, add 100 uL of X to Y": the volume is per well ("add 100 uL of X to Y per well")
_PER_WELL_FIRST = re.compile(
    rf"(?P<lead>{_STEP_START})(?:per\s+well|for\s+each\s+well|in\s+each\s+well)\s*,\s*"
    r"(?P<rest>[^.;\n]*?\d(?:[^.;\n]|(?<=\d)\.(?=\d))*?)(?=\s*(?:[.;\n]|$))",
    re.IGNORECASE,
)


# "Cherry pick 20 uL each: ...", "hit pick these": the verb written as one word, as the
# readers of verbs and headings know it
_SPACED_PICK = re.compile(r"\b(cherry|hit)\s+(pick(?:s|ed|ing)?)\b", re.IGNORECASE)
# "600 uL altogether", "1 mL in all": an amount for all the wells together, said "in total"
_ALTOGETHER = re.compile(
    r"(\d\s*(?:[uµm][lL]|micro-?lit\w*|milli-?lit\w*)\s+)(?:altogether|all\s+together|in\s+all\b(?!\s*\w))",
    re.IGNORECASE,
)


def rephrase(text: str) -> str:
    """``text`` with each of these ways of saying written the one way."""
    text = _W_O.sub("without", _N_EQ.sub(r"n=\1 replicates", text))
    text = _WELL_DASH_VOLUME.sub(r"\1 ", _TIP_LABEL.sub(_tip_label, text))
    text = _ALTOGETHER.sub(r"\1in total", _SPACED_PICK.sub(r"\1-\2", text))
    text = _AD.sub(
        r"\1add", _SPACED_RANGE.sub(r"\1\2\3\4\5", narrative(using_after(implied_units(text))))
    )
    text = _COL_BLANK.sub(r"columns \1 = ", _ROW_BLANK.sub(r"row \1 = ", text))
    text = _QS.sub("qs", text)
    if _SERIES_SAID.search(text):
        for rx in (_ALONE_IN, _SHOULD_ONLY):
            text = rx.sub(lambda m: f"{m['lead']}{m['w']} = {m['liq']} only", text)
        text = _LEAVE_EACH.sub(lambda m: f"{m['v']} final", text)
    text = _ABBR_DOT.sub(r"\1", _ASIDE.sub("", _FIRST_WELLS.sub(_first_wells, text)))
    text = _WELL_NOTE.sub(lambda m: f"; {m['note'].strip(' !.')}; ", text)
    text = _CAUSATIVE.sub(_causative, _NEEDS_ING.sub(_needs_ing, _passives(text)))
    text = _TAKE_PUT.sub(lambda m: f"transfer {m['what']} {m['to']}", text)
    text = _PER_WELL_FIRST.sub(lambda m: f"{m['lead']}{m['rest']} per well", text)
    text = _FROM_FIRST.sub(lambda m: f"{m['lead']}{m['rest']} from {m['src']}", text)
    text = _USING_PLATE.sub(lambda m: f"{m['rest']}{m['lw']} ", text)
    text = _W_SLASH.sub("with ", _BEFORE_OFF_ROBOT.sub(" ", text))
    text = _GROUP_AFTER_PAIR.sub(r"\1; ", text)
    text = _CHECK_AFTER.sub(". ", text)
    text = _HELD_NEEDS.sub(r"\g<lead>add \g<what> to \g<held>", _SO_WANTED.sub("; ", text))
    for _ in range(4):  # "into column 1, again into column 2 and again into column 3"
        text, n = _AGAIN_INTO.subn(lambda m: f"{m['to']} {m['said']}{m['sep']} ", text)
        if not n:
            break
    return _PARTICLE.sub(r"\1 ", text)
