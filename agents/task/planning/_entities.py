"""Stage 3 of the rule planner: the typed entities of one clause.

Each entity keeps where it was written, so the frame stage can tell a source from a destination
by the words before it ("from", "into"). Found here: quantities (pint), well sets, labware,
lab liquids and quoted names, instruments, counts, folds and ratios, the tip policy and the
channels as the person says them, mixing, replicates, and vague or unit-less numbers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from agents.task.planning import _quantities as qty
from agents.task.planning import _wellsets as ws
from agents.task.planning._lexicon import Lexicon, Mention
from agents.task.planning._liquid_names import counted_points
from agents.task.planning._normalise import PLACEHOLDER
from agents.task.planning._quadrants import quadrant_spans
from agents.task.planning._quantities import Quantity
from agents.task.planning._series import Series, series
from agents.task.planning._start_well import start_within
from agents.task.planning._strengths import diluent_said, name_fold, parts_fold
from agents.task.planning._tip_phrases import TIP_POLICIES, tip_policy

_FLAGS = re.IGNORECASE

_MULTI = re.compile(
    r"\b(?:8|eight)[\s-]?(?:channel|chan|ch|tip)s?(?:\s+head|\s+pipette)?\b|\bmulti[\s-]?channel\b"
    r"|\bmultichannel\b|\ball\s+(?:8|eight)\s+channels\b|\bp\d+\s*multi\b|\b8\s+at\s+a\s+time\b"
    r"|\b(?:the|a|my|our)\s+multi\b(?![\s-]*(?:step|dispense|well|plate|aspirat))"
    r"|\b(?:one|a|single)\s+column\s+of\s+tips\b",  # the 8 tips of one rack column
    _FLAGS,
)
# "the 96-channel head", "a 12-channel pipette", "16 channels", "the 96 head": another head.
_OTHER_HEAD = re.compile(
    r"\b(\d{1,3})[\s-]?(?:channels?|ch)\b(?!\s*(?:reservoir|trough|plate|block|#))"
    r"|\b(96|384)[\s-]?(?:head|tip\s+head)\b",
    _FLAGS,
)
_SINGLE = re.compile(
    r"\bsingle[\s-]?channel\b|\b(?:one|1)[\s-]channel\b|\bone\s+well\s+at\s+a\s+time\b", _FLAGS
)
_MIX = re.compile(
    r"\b(?:mix(?:ing|ed)?|pipett?(?:e|ing)\s+up\s+and\s+down|triturat\w*|resuspend\w*)\b", _FLAGS
)
_NO_MIX = re.compile(
    r"\b(?:no|without|don'?t|do\s+not|skip(?:ping)?(?:\s+the)?)\s+mix(?:ing)?\b|\bno\s+mixing\b"
    r"|\b(?:no|not\s+any)\s+need\s+(?:to|for)\s+mix(?:ing)?\b|\b(?:don'?t|do\s+not|doesn'?t|does\s+not)"
    r"\s+(?:need|have)\s+to\s+(?:be\s+)?mix(?:ed)?\b|\bmixing\s+(?:is\s+)?(?:not|un)\s*(?:needed|"
    r"necessary|required)\b|\bnot\s+necessary\s+to\s+mix\b",
    _FLAGS,
)  # "no need to mix", "mixing not needed", "doesn't need to be mixed"
_HOW = re.compile(
    r"\b(?:for|throughout|across)\s+(?:the\s+)?(?:whole|entire)\s+(?:thing|lot|run|plate|set|job|transfer)\b",
    _FLAGS,
)
# "(H8 stays as the blank)", "(the stock is already in there)", "(no serial steps)": remarks.
_ASIDE = re.compile(  # (never "(column 12 left out)": wells left out of the set before it)
    r"\((?![^()]*\b(?:left\s+out|excluded|omitted|skipped|not\s+(?:used|filled)|(?:left|kept|stays?"
    r"|remains?)\s+(?:empty|dry|unfilled))\s*\))[^()]*\b(?:blanks?|controls?|stays?|remains?|empty|leave|left|untouched|note|"
    r"reference|ntc|so\s+on|etc|e\.g|i\.e|ctrls?|ctls?|(?-i:GC|SC|NC|PC|VC|NRT)"
    r"|already\s+(?:in\s+)?(?:there|here|place)|no[nt]?[\s-]+serial"
    r"|isolates?|strains?|patients?|donors?|clones?)\b[^()\d]*\)",  # "(rows A-H = 8 isolates)"
    _FLAGS,
)
# "(column 1, A to H, H blank)": where the dilution runs, its blank said last
_PLACE_ASIDE = re.compile(r"^\(\s*(?:columns?|cols?|rows?)\s+\w+\s*,[^()]*\bblanks?\b", _FLAGS)
# "changing tips after every well", "tips changed between each column", "change tips every
# well", "tip change each column": when, not where.
_TIP_SCOPE = re.compile(
    r"\btips?\b(?:\s+\w+){0,2}?\s+(?:(?:after|between|for|per|at|on|with|into|in)\s+"
    r"(?:(?:each|every|all|the)\s+)?|(?:each|every)\s+)(?:single\s+)?(?:one|wells?|transfers?|destinations?|dispenses?|"
    r"samples?|columns?|rows?|picks?|steps?|times?|aliquots?|replicates?)\b",
    _FLAGS,
)
# "Standards S1-S7 + blank", "S1 = 1000 ng/mL": the standards' own names, not wells (no lab
# plate has a row S).
_STANDARD_NAMES = re.compile(
    r"\bS\d{1,2}\s*(?:-|–|to|through|thru|\.\.)\s*S\d{1,2}\b"
    r"|\bS\d{1,2}\b(?=[^.;]*\b(?:standards?|stds?|curve|blanks?|points?|-fold|fold)\b)"
    r"|\bS\d{1,2}\b(?=\s*(?:=|:|\(|\.\.\.|…))"
    r"|(?:(?<==)|(?<==\s)|(?<=\()|(?<=\(\s))S\d{1,2}\b",  # "(A6 = S1 ... H6 = S8)"
    _FLAGS,
)

_REFER = re.compile(
    r"\b(it|them|those|these|same\s+wells|the\s+same\s+wells|those\s+wells|these\s+wells|"
    r"(?:each|every)\s+well(?!\s+(?:of|in|on)\s+(?:the\s+|an?\s+)?(?:other|empty|fresh|new|second)\b)"
    r"|the\s+plate|that\s+plate|this\s+plate|the\s+wells|all\s+of\s+them"
    r"|each(?=\s*$)|each\s+(?:one|of\s+them))\b",
    _FLAGS,
)


# "7 standards", not "the column 1 overnights" (a column's number is no count)
_PIPETTING = re.compile(r"\d\s*(?:u[lL]|µ[lL]|m[lL])\b", _FLAGS)
_SIZED_TIPS = re.compile(r"\b(\d+(?:\.\d+)?)\s*(u[lL]|µ[lL]|m[lL])\s+(?:filter\s+)?tips?\b", _FLAGS)


@dataclass
class Entities:
    """What one clause names, each with where it was written."""

    text: str
    quantities: list[Quantity] = field(default_factory=list)
    wellsets: list[ws.WellSet] = field(default_factory=list)
    labware: list[Mention] = field(default_factory=list)
    unknown_labware: list[Mention] = field(default_factory=list)
    liquids: list[Mention] = field(default_factory=list)
    instruments: list[tuple[str, str, int, int]] = field(default_factory=list)
    times: int | None = None
    mix_times: int | None = None  # the count said with the mixing ("mix 5x", "mixing twice")
    fold: tuple[float, str] | None = None
    steps: int | None = None
    series: Series | None = None  # "1000, 500, 250 ng/mL and 0": a dilution by its concentrations
    replicates: int | None = None
    tips: str | None = None
    channels: int | None = None
    mix: bool = False
    no_mix: bool = False
    vague: str | None = None
    blanks: list[ws.WellSet] = field(default_factory=list)  # "H1 is the blank", "A12 blank"
    rack: str | None = None  # the tip rack the person names ("use tips_50", "the 300 uL tips")
    no_rack: str | None = None  # tips of a size no rack of the lab holds ("with 50 uL tips")
    marked: str = ""  # the text with names blanked, as the well sets were found in it
    bare: list[str] = field(default_factory=list)
    refers_back: bool = False
    well_count: int | None = None
    tail: int = 0  # blanks ending the line, said with its place ("+ blank in column 1")

    def volumes(self) -> list[Quantity]:
        return qty.of_kind(self.quantities, "volume")


def _overlap(a: Mention, b: Mention) -> bool:
    return a.start < b.end and b.start < a.end


def _dedupe(mentions: list[Mention]) -> list[Mention]:
    """Mentions in order, none overlapping an earlier (longer) one."""
    out: list[Mention] = []
    for m in mentions:
        if not any(_overlap(m, o) for o in out):
            out.append(m)
    return out


def _blank(text: str, spans: list[tuple[int, int]], fill: str = " ") -> str:
    """``text`` with the spans overwritten (same length, so positions stay valid)."""
    for a, b in spans:
        text = text[:a] + fill * (b - a) + text[b:]
    return text


_BRACKETS = re.compile(r"\([^()]*\)")
_MOVES_IN = re.compile(r"->|\b(?:to|into|onto|from|then)\b", _FLAGS)
_SAYS_WHAT = re.compile(r"\s*(?:=|:|-\s|(?:is|are|will\s+be|serves?\s+as|as)\b)", _FLAGS)


def _restated(ents: Entities) -> list[tuple[int, int]]:
    """Brackets that say what wells the clause named before them are, with no volume ("into
    A1-A12 (A12 = sterility well)"): a remark about those wells, not more of them. Brackets
    that only name wells ("row A (A1-A6)") narrow the set before them and stay."""
    found: list[tuple[int, int]] = []
    for m in _BRACKETS.finditer(ents.marked):
        inside = [w for w in ents.wellsets if m.start() <= w.start < m.end()]
        before = [w for w in ents.wellsets if w.end <= m.start()]
        if (
            not inside
            or not before
            or _MOVES_IN.search(m.group(0))  # "(then A1 -> B2)": another move
            or not _SAYS_WHAT.match(ents.marked[inside[-1].end : m.end()])  # "row A (A1-A6)"
            or any(m.start() <= q.start < m.end() for q in ents.volumes())
        ):
            continue
        try:
            named = {w for s in before for w in s.expand(16, 24)}
            if all(w in named for s in inside for w in s.expand(16, 24)):
                found.append((m.start(), m.end()))
        except ws.SelectionError:
            continue
    return found


# "not the 8-channel", "no need for the multichannel", "8-channel not needed": one channel
_NOT_BEFORE = re.compile(
    r"\b(?:no|not|without|never\s+use|(?:don'?t|do\s+not)\s+(?:use|need)|no\s+need\s+for|"
    r"instead\s+of|rather\s+than)\s+(?:the\s+|a\s+|an\s+)?$",
    _FLAGS,
)
_NOT_AFTER = re.compile(
    r"^\s*(?:(?:is|'s)\s+)?(?:not\s+(?:needed|necessary|required)|unnecessary|isn'?t\s+needed)",
    _FLAGS,
)


def _channels(text: str) -> int | None:
    """The channels a piece of text asks for: 8 for "8-channel" / "multichannel", 1 for
    "single channel" or a multichannel declined, another count as said ("the 96-channel
    head", "12 channels")."""
    multi = list(_MULTI.finditer(text))
    declined = [
        m
        for m in multi
        if _NOT_BEFORE.search(text[: m.start()]) or _NOT_AFTER.match(text[m.end() :])
    ]
    if multi and len(declined) == len(multi):
        return 1
    if multi:
        return 8
    if _SINGLE.search(text):
        return 1
    other = _OTHER_HEAD.search(text)
    return int(other.group(1) or other.group(2)) if other else None


def without_how(text: str) -> str:
    """``text`` without its tip and channel phrases ("10 uL each, 8-channel, fresh tips" ->
    "10 uL each, , ")."""
    spans = [(m.start(), m.end()) for _, rx in TIP_POLICIES for m in rx.finditer(text)]
    for rx in (_MULTI, _SINGLE, _HOW, _TIP_SCOPE):
        spans += [(m.start(), m.end()) for m in rx.finditer(text)]
    return _blank(text, spans)


def how_said(text: str) -> tuple[int | None, str | None]:
    """(channels, tip policy) a piece of text says ("8-channel, fresh tips": 8, per_destination)."""
    return _channels(text), tip_policy(text)


def extract(text: str, lex: Lexicon, quoted: tuple[str, ...]) -> Entities:
    """The entities of one clause (``text`` already has its typos fixed)."""
    ents = Entities(text)
    for m in PLACEHOLDER.finditer(text):
        ents.liquids.append(Mention(quoted[int(m.group(1))], m.start(), m.end(), m.group(0)))
    unquoted = _blank(text, [(m.start, m.end) for m in ents.liquids], "#")
    labware, ents.unknown_labware = lex.labware_mentions(unquoted)
    racks = [m for m in labware if lex.lab.labware[m.name].kind == "tip_rack"]
    sized = list(_SIZED_TIPS.finditer(unquoted))
    if racks:
        ents.rack = racks[0].name
        if _PIPETTING.search(text) or re.match(r"^(?:use|using|with)\b", text, _FLAGS):
            labware = [m for m in labware if m not in racks]  # tips to pipette with
    elif sized:
        size = float(sized[0].group(1)) * (1000 if sized[0].group(2).lower() == "ml" else 1)
        near = sorted(
            (abs(lw.tip_max_volume_ul - size) / size, lw.id)
            for lw in lex.lab.labware.values()
            if lw.kind == "tip_rack" and lw.tip_max_volume_ul > 0
        )
        number = f"{size:g}"
        by_name = [  # "the 300 uL tips": the rack whose type or name says 300
            lw.id
            for lw in lex.lab.labware.values()
            if lw.kind == "tip_rack"
            and re.search(rf"(?<![\d.]){re.escape(number)}(?![\d.])", f"{lw.type} {lw.id}")
        ]
        if len(by_name) == 1:
            ents.rack = by_name[0]
        else:
            ents.rack = near[0][1] if near and near[0][0] <= 0.25 else None
        if ents.rack is None and near:  # never pipetted with other tips than those said
            ents.no_rack = sized[0].group(0)
    named = lex.liquid_mentions(unquoted) + lex.fuzzy_liquids(unquoted)
    # Where a labware name and a liquid's overlap ("assay buffer" and labware "assay"), the
    # longer one is meant; on a tie the labware ("samples A1": the plate, not the sample).
    ents.labware = [
        w
        for w in labware
        if not any(_overlap(w, q) and q.end - q.start > w.end - w.start for q in named)
    ]
    ents.liquids += [q for q in named if not any(_overlap(w, q) for w in ents.labware)]
    ents.liquids = _dedupe(sorted(ents.liquids, key=lambda m: (m.start, -(m.end - m.start))))
    starts = [w.start for w in ents.labware]  # "7 standards and a zero": points, not liquid
    ents.liquids = [
        m for m in ents.liquids if not counted_points(m.written, m.start, m.end, text, starts)
    ]
    ents.instruments = lex.instrument_mentions(unquoted)
    # A number inside a liquid's name ("Tris-HCl pH 8, 300 uL") is part of the name, never a
    # volume of its own: read quantities with the names blanked out.
    # So is a number inside a plate's id ("DB-1, 200 uL": no 1 uL).
    ents.quantities = [
        q
        for q in qty.quantities(_blank(text, [(m.start, m.end) for m in ents.liquids + labware]))
        if not any(m.start() <= q.start < m.end() for m in sized)  # "the 50 uL tips"
    ]
    # "Dilute sample 1:5": the lab's liquid "sample" and a ratio, not a plate "sample 1"
    ents.unknown_labware = [
        u for u in ents.unknown_labware if not any(_overlap(u, q) for q in ents.liquids)
    ]
    spans = [(m.start, m.end) for m in ents.labware + ents.liquids + ents.unknown_labware]
    spans += [(q.start, q.end) for q in ents.quantities]
    spans += [(a, b) for _, _, a, b in ents.instruments]
    # Tip and channel phrases ("fresh tips for every well", "one tip for the whole thing")
    # say how, not where: they name no wells.
    how = [(m.start(), m.end()) for _, rx in TIP_POLICIES for m in rx.finditer(text)]
    how += [(m.start(), m.end()) for rx in (_MULTI, _SINGLE) for m in rx.finditer(text)]
    how += [(m.start(), m.end()) for m in _HOW.finditer(text)]
    how += [(m.start(), m.end()) for m in _TIP_SCOPE.finditer(text)]
    how += quadrant_spans(text)  # "Q2", "quadrants 1-4": not wells
    how += [(m.start(), m.end()) for m in _STANDARD_NAMES.finditer(text)]
    how += [(m.start(), m.end()) for m in _ASIDE.finditer(text) if not _PLACE_ASIDE.search(m[0])]
    spans += how
    # "change tip between samples": a word in a tip phrase names no place, even a plate's name
    ents.labware = [m for m in ents.labware if not any(a <= m.start < b for a, b in how)]
    # Names become a solid mark, not spaces: "A2 to plate_1 A1" must not read as a range.
    ents.marked = _blank(text, spans, "#")
    ents.wellsets = ws.find_all(ents.marked)
    if restated := _restated(ents):  # "A1-A12 (A12 = no cells)": A12 once, not twice
        how += restated
        spans += restated
        ents.marked = _blank(text, spans, "#")
        ents.wellsets = ws.find_all(ents.marked)
    at = [(m.start, m.end) for m in ents.labware]  # "into every seedlings24 well"
    ents.wellsets = sorted(ents.wellsets + ws.every_plate_well(text, at), key=lambda w: w.start)
    start_within(ents)  # "row B starting at B4": B4 orders row B, no second dispense
    plain = _blank(text, spans[: len(spans) - len(how)], " ")
    ents.well_count = ws.well_count(text)
    ents.times = qty.times(plain)
    ents.fold = qty.fold(plain)
    stocks = [m.name for m in ents.liquids if not diluent_said(text[: m.start])]
    if ents.fold is None and (k := name_fold(plain, stocks)):
        ents.fold = (k, "ratio")  # "make 1x SYBR from the 2x SYBR mix": the name says 2x
    if ents.fold is None and (k := parts_fold(text)):
        ents.fold = (k, "ratio")  # "dilute 10 uL of X with 90 uL Y": 1:10
    ents.steps = qty.steps(plain)
    # the concentrations read with the names blanked but not a "0" the unit after it claimed
    # ("..., 0.1 copies/uL and 0, 50 uL each": the 0 is the blank)
    kept = [(q.start, q.end) for q in ents.quantities if q.value == 0]
    conc_text = _blank(text, [sp for sp in spans[: len(spans) - len(how)] if sp not in kept])
    ents.series = series(conc_text, ents.fold[0] if ents.fold else None)
    ents.replicates = qty.replicates(text)
    # liquids stay readable here: "one tip per library" names a liquid as what a tip serves
    said = _blank(unquoted, [(m.start, m.end) for m in ents.labware + ents.unknown_labware])
    ents.tips = tip_policy(said)
    # "the 12-channel reservoir": a count of channels before a labware's name (marked) is its
    ents.channels = _channels(_blank(plain, [(m.start, m.end) for m in ents.labware], "#"))
    ents.no_mix = bool(_NO_MIX.search(plain))
    ents.mix = bool(_MIX.search(plain)) and not ents.no_mix
    if ents.mix and (mixed := _MIX.search(plain)):
        ents.mix_times = qty.times(re.split(r"[,;]", plain[mixed.start() :])[0])
    if vague := qty.VAGUE.search(plain):
        ents.vague = vague.group(1)
    without_ratio = re.sub(r"\b1\s*(?::|in|to)\s*\d+(?:\.\d+)?", " ", plain)
    ents.bare = [
        b
        for b in qty.bare_numbers(_blank(without_ratio, [(w.start, w.end) for w in ents.wellsets]))
        if (not re.fullmatch(r"[1-9]", b) or not ents.times)
        and not (ents.series and b in ents.series.numbers)
    ]
    ents.refers_back = bool(_REFER.search(plain))
    return ents
