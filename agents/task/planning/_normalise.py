"""Stage 1 of the rule planner: normalise a request's text.

One spelling for what people write many ways (µL, μl -> uL; en and em dashes; arrows; the
degree sign; non-breaking spaces; curly quotes), and every quoted span replaced by a
placeholder so that nothing inside quotes (a liquid named "wash; then shake at 90 C") can
become a clause or an entity. The quoted text comes back, verbatim, as a name:
:func:`unquote`. Line breaks are kept: list items and labels ("ELISA step:") are the
splitter's business.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

from agents.task.planning._conc_tables import rewrite as conc_tables
from agents.task.planning._curve_specs import dashed, one_line
from agents.task.planning._list_heads import to_pairs
from agents.task.planning._map_colons import map_items
from agents.task.planning._markdown import (
    bracketed_lines,
    item_how,
    markdown_line,
    nested,
    unwrapped,
)
from agents.task.planning._norm_forms import rewrite as norm_forms
from agents.task.planning._numberwords import digits
from agents.task.planning._phrasings import held_for, rephrase
from agents.task.planning._programme_tables import count_blocks, goto_lists, programme_tables
from agents.task.planning._spelling import keywords, units
from agents.task.planning._step_marks import step_marks
from agents.task.planning._tables import rewrite as rewrite_tables
from agents.task.planning._volume_sheets import rewrite as volume_sheets
from agents.task.planning._well_aliases import named_wells

# A placeholder is a word of its own: «q0», «q1», ...
PLACEHOLDER = re.compile(r"«q(\d+)»")

_QUOTES = re.compile(
    r'"([^"\n]{1,80})"'  # straight double quotes
    r"|(?<![\w'])'([^'\n]{1,80})'(?![\w'])"  # single quotes, not apostrophes (don't, plate's)
)
_CHARS = str.maketrans(
    {
        "µ": "u",
        "μ": "u",
        "–": "-",  # en dash (ranges: A1–A12)
        "‒": "-",
        "−": "-",  # minus sign
        "‐": "-",
        "‑": "-",
        "—": " - ",  # em dash: a pause, never a range
        "→": " -> ",
        "⇒": " -> ",
        "⟶": " -> ",
        "×": "x",
        "“": '"',
        "”": '"',
        "«": '"',  # guillemets and backticks quote a name too
        "»": '"',
        "‹": "'",
        "›": "'",
        "`": "'",
        "‚": "'",
        "„": '"',
        "‘": "'",
        "’": "'",
        "\u00a0": " ",
        "\u2009": " ",
        "\u202f": " ",
        "\t": " ",
        "•": "\n- ",
        "·": "\n- ",
        "▪": "\n- ",
    }
)
_DEGREE = re.compile(r"\s*[°º˚]\s*([CcFf])\b")
_ARROW = re.compile(
    r"\s*(?:-+>|=+>)\s*|(?<=\b[A-Pa-p]\d)\s*>\s*(?=[\w-]*\s*[A-Pa-p]\d)"
    r"|(?<=\b[A-Pa-p]\d\d)\s*>\s*(?=[\w-]*\s*[A-Pa-p]\d)"
)  # "A3 > A1": a well to a well
# "A1 to B1 to C1 to D1": three or more wells joined by "to" are a chain, as with arrows.
_TO_CHAIN = re.compile(r"\b[A-Pa-p]\d{1,2}(?:\s+to\s+[A-Pa-p]\d{1,2}\b){2,}")
# "column 1 -> column 2 -> column 3" (or "col 1 -> 2 -> 3"): whole columns carried one to the
# next, written as the planner reads it, "column to column from 1 to 3"; rows the same.
_LINE_CHAIN = re.compile(
    r"\b(?P<kind>columns?|cols?|rows?)\s*(?P<a>\d{1,2}|[A-Pa-p])\b"
    r"(?:\s*->\s*(?:(?:columns?|cols?|rows?)\s*)?(?P<b>\d{1,2}|[A-Pa-p])\b){2,}",
    re.IGNORECASE,
)


def _line_chain(m: re.Match[str]) -> str:
    kind = "row" if m.group("kind").lower().startswith("row") else "column"
    last = re.findall(r"(\d{1,2}|[A-Pa-p])\b", m.group(0))[-1]
    return f"{kind} to {kind} from {m.group('a')} to {last}"


# "100 uL/step", "20 uL/transfer": a volume for each of something, written "per".
_SIDES = r"(?:col(?:umn)?s?\.?\s*\d{1,2}\s*(?:-|to)\s*\d{1,2}|rows?\s*[A-P]\s*(?:-|to)\s*[A-P])"
_CROSSED = re.compile(
    rf"\b({_SIDES})\s*[x×]\s*({_SIDES})\b", re.IGNORECASE
)  # "cols 4-6 x rows A-G"
_PER = re.compile(
    r"(\d\s*(?:u[lL]|m[lL]))\s*/\s*"
    r"(steps?|transfers?|points?|dilutions?|samples?|spots?|dots?|drops?|picks?|hits?)\b"
)
_SPACES = re.compile(r"[ ]{2,}")
# "normalise libs A1-C1 -> 2 nM": the level a range of wells is brought to, never C1's own
_RANGE_LEVEL = re.compile(
    r"(\b[A-Pa-p]\d{1,2}\s*-\s*[A-Pa-p]\d{1,2})\s*->\s*(?=~?\d+(?:\.\d+)?\s*(?:[pnum]g/|[pnum]M\b))"
)
# "100λ": the old notebook sign for a microlitre (after a number only; λ alone is a wavelength)
_LAMBDA = re.compile(r"(?<=\d)\s?[λΛ](?![\w=])")
# "samples:A3", "dest_plate:B1..B12": a labware and its wells written with a colon.
_LABWARE_WELL = re.compile(r"\b([A-Za-z][\w-]*):(?=[A-Pa-p]\d{1,2}\b)")
# "5/10/15 uL", "A1/A2/A3", "20/40/80 ng/uL": a list written with slashes.
_LISTED_UNIT = r"(?=\s*(?:u[lL]|m[lL]|[pnuµm]g\s*/\s*[uµm]?[lL]|[pnuµm]M)\b)"
_SLASHED = re.compile(
    rf"\b(?:\d+(?:\.\d+)?(?:/\d+(?:\.\d+)?)+{_LISTED_UNIT}|[A-Pa-p]\d{{1,2}}(?:/[A-Pa-p]\d{{1,2}})+\b"
    rf"|\d+(?:\.\d+)?(?:[ ]/[ ]\d+(?:\.\d+)?)+{_LISTED_UNIT})"  # "100 / 50 / 25 uL"
)
# "B1  10 / 40 uL": a recipe row (a well, then each liquid's volume), not a list of volumes
_ROW_START = re.compile(r"(?:^|\n)\s*(?:[-*•]\s*)?\|?\s*[A-Pa-p]\d{1,2}\b[^\n]*$")


# "A1, A2, A 3": a well of a list written with a space inside it is that well
_SPACED_WELL = re.compile(
    r"(\b[A-P]\d{1,2}\s*(?:,|&|\band\b)\s*)([A-P])\s+(\d{1,2})\b"
    r"(?![\d.]|\s*(?:u[lL]|µ|m[lL]|%|x\b|C\b|min|h\b|s\b|rpm|nm))"
)


def _labware_well(m: re.Match[str]) -> str:
    if re.fullmatch(r"[A-Pa-p]\d{1,2}", m.group(1)):
        return m.group(0)  # "A1:A12" is a range
    return f"{m.group(1)} "


def _slashed(m: re.Match[str]) -> str:
    if " " in m.group(0) and _ROW_START.search(m.string, 0, m.start()):
        return m.group(0)
    items = re.split(r"\s*/\s*", m.group(0))
    return ", ".join(items[:-1]) + " and " + items[-1]


_UNIT_DOT = re.compile(
    r"(?<=\d)(\s*(?:u[lL]|µ[lL]|m[lL]|mins?|secs?|hrs?|sec|deg))\.(?=\s+(?:of|from|into|to|in|each|per|at|for)\b"
    r"|[ \t]+(?!(?:then|next|and|after|mix|shake|read|incubate|wait|add|transfer|move|remove|"
    r"measure|agitate|record|scan|heat|cool|hold|leave|let|pool|spot|stamp|mix|wash|centrifuge|"
    r"aspirate|discard|dispense|put|pipett?e|take|replace|refill|place|fill|top|dilute|spin|run|seal|"
    r"wash|repeat|stop|do|now|finally|also|please)\b)[a-z])"
)  # "50 ul. of buffer", "50 ul. buffer": an abbreviation, not a sentence's end
# "0,05 mL", "1,5 mL": a decimal comma (three digits after it are thousands: "1,000 uL")
_DECIMAL_COMMA = re.compile(r"(?<![\d,.])(\d{1,3}),(\d{1,2})(?=\s*(?:u[lL]|m[lL])\b)")
# "A1 = 10 uL", "A1 -> 10 uL", "A1: 10 uL", "A1 +10" (that much added): a well and its
# volume, written "A1 10 uL".
_WELL_VOLUME = re.compile(
    r"\b([A-Pa-p]\d{1,2})\s*(?:(?:=|->|\+)\s*(?=\d+(?:\.\d+)?\b(?!\s*[A-Pa-p]\d))"
    r"|:\s*(?=\d+(?:\.\d+)?\s*(?:u[lL]|m[lL])?\s*(?:[,;)]|$|\s+and\b|\s+[A-Pa-p]\d)))"
)
# "(uL)", "volumes in uL": the unit of the bare numbers after the wells on that line.
_UNIT_NOTE = re.compile(r"\((?:in\s+)?(uL|mL)\)|\bvolumes?\s+in\s+(uL|mL)\b", re.IGNORECASE)
_BARE_AFTER_WELL = re.compile(
    r"\b([A-Pa-p]\d{1,2})\s+(\d+(?:\.\d+)?)\b(?!\s*(?:uL|ul|mL|ml|%|x|nm|rpm|C|min|s|h)\b)(?!\.\d)"
)


# "H1 70 / H2 55 / H3 40 / H4 20 uL": wells and bare volumes, the unit written once at the end
_UNIT_LAST = re.compile(
    r"\b[A-Pa-p]\d{1,2}\s+\d+(?:\.\d+)?(?:\s*[,/;]\s*(?:and\s+)?[A-Pa-p]\d{1,2}\s+\d+(?:\.\d+)?)+"
    r"\s*(uL|mL)\b",
    re.IGNORECASE,
)


def _unit_last(m: re.Match[str]) -> str:
    unit = m.group(1)
    return _BARE_AFTER_WELL.sub(lambda w: f"{w.group(1)} {w.group(2)} {unit}", m.group(0))


def _units(line: str, carried: str | None = None) -> tuple[str, str | None]:
    """The line with its bare well volumes given their unit, and the unit a heading carries
    to the lines under it ("Normalise with water (uL):" then "A1 10", "B1 12.5")."""
    line = _UNIT_LAST.sub(_unit_last, _WELL_VOLUME.sub(r"\1 ", line))
    note = _UNIT_NOTE.search(line)
    unit = (note.group(1) or note.group(2)) if note else carried
    if unit:
        line = _BARE_AFTER_WELL.sub(lambda m: f"{m.group(1)} {m.group(2)} {unit}", line)
        line = _UNIT_NOTE.sub(" ", line)
    heading = note is not None and line.rstrip().endswith(":")
    return line, (unit if heading or (carried and not note) else None)


_UNIT_HEAD = re.compile(
    r"(?:,\s*|\()(?:in\s+)?(uL|mL)\)\s*:?\s*$|\(?\s*\b(?:all\s+)?volumes?\s+(?:are\s+)?in\s+(uL|mL)\b\s*\)?",
    re.IGNORECASE,
)


def _with_unit(line: str, unit: str) -> str:
    line = _WELL_VOLUME.sub(r"\1 ", line)
    return _BARE_AFTER_WELL.sub(lambda m: f"{m.group(1)} {m.group(2)} {unit}", line)


def _carry_units(lines: list[str]) -> list[str]:
    """'Cherry-pick (cmpd -> assay, uL):' or a line '(volumes in uL)': the unit of the bare
    numbers after the wells on the lines of that list."""
    out = list(lines)
    for i, line in enumerate(lines):
        note = _UNIT_HEAD.search(line)
        if note is None or _BARE_AFTER_WELL.search(_WELL_VOLUME.sub(r"\1 ", line)):
            continue
        unit = note.group(1) or note.group(2)
        heading = line.rstrip().endswith(":")
        targets = [j for j in range(len(lines)) if j != i]
        if heading:  # the entries under the heading, up to the first line that is none
            nxt = [j for j in targets if j > i]
            end = next(
                (j for j in nxt if not _BARE_AFTER_WELL.search(_with_unit(lines[j], ""))),
                len(lines),
            )
            targets = [j for j in nxt if j < end]
        for j in targets:
            out[j] = _with_unit(out[j], unit)
        closed = ")" if note.group(0).startswith(",") else ""  # "(cmpd -> assay, uL)": keep plates
        out[i] = (line[: note.start()].rstrip() + closed + line[note.end() :]).rstrip()
        if heading and not out[i].endswith(":"):
            out[i] += ":"
        if not out[i].strip(" :()"):
            out[i] = ""
    return out


@dataclass(frozen=True, slots=True)
class Normalised:
    """A request in one spelling, its quoted spans held aside."""

    text: str
    quoted: tuple[str, ...]


# "1 hr 30 min", "1h30", "1 h and 30 minutes": one time, in minutes ("2 min 30 s" in seconds).
_HOURS_MINUTES = re.compile(
    r"\b(\d{1,3})(?:(?:h|hr|hrs)|[ \t]*(?:h|hr|hrs|hours?)(?=[ \t]))[ \t]*(?:and[ \t]+)?(\d{1,2})"
    r"(?:[ \t]*(?:m|min|mins|minutes?)\b|(?!\d|\.\d)"
    r"(?![ \t]*(?:rpm|c|°|u[lL]|m[lL]|nm|x|%|s|secs?|seconds?|cycles?|times|degrees?|g)\b))",
    re.IGNORECASE,
)
_MINUTES_SECONDS = re.compile(
    r"\b(\d{1,3})[ \t]*(?:min|mins|minutes?)[ \t]*(?:and[ \t]+)?(\d{1,2})[ \t]*"
    r"(?:s|sec|secs|seconds?)\b",
    re.IGNORECASE,
)
# "A1 DMSO: 10 uL, A2 DPBS: 15 uL": a plate map item's volume after a colon, never a heading
# (read as one, "A1 DMSO" had no step under it and its 10 uL was lost)
_ITEM_COLON = re.compile(
    r"(?<![\w-])([A-Pa-p]\d{1,2}(?:\s*[-–]\s*[A-Pa-p]?\d{1,2})?\s+"
    r"(?!(?:in|of|on|at|to|into|from|for|with)\b)[A-Za-z][\w%+.-]*"
    r"(?:\s+(?!(?:in|of|on|at|to|into|from|for|with)\b)[A-Za-z][\w%+.-]*){0,2})\s*:\s*"
    r"(?=\d+(?:\.\d+)?\s*(?:u|µ|m)[lL]\b)",
)


def _item_colons(line: str) -> str:
    """``line`` with its items' colons dropped when it lists two or more such items ("A1 DMSO:
    10 uL, A2 DPBS: 15 uL"); one alone may be a heading ("A1 stock: 200 uL, then ...")."""
    return _ITEM_COLON.sub(r"\1 ", line) if len(_ITEM_COLON.findall(line)) > 1 else line


_IS = re.compile(
    r"\b(\w+)'s\s+(?=(?:in|on|at|already|currently|now|still|sitting|loaded|there|empty|full)\b)",
    re.IGNORECASE,
)


_PRIMES = re.compile(
    r"(?P<t>-?\d+(?:\.\d+)?\s*[°º˚]?\s*[Cc])\s*,?\s*(?P<n>\d+(?:\.\d+)?)\s*(?P<u>''|'|\"|′|″)"
    # "94 for 3'", "(94 30\", 55 30\", 72 1')": a bare block temperature, then its time in primes
    r"|(?<![\w.«\"'])(?P<b>\d{2,3})(?:\s*,|\s+for|\s*/|\s*@)?\s+(?P<bn>\d{1,3})\s*(?P<bu>'|\"|′|″)"
    r"(?![\w\"'])"
)


_MINUTE_MARKS = ("'", "′")
# "72 C 1'30", "95 C for 1'30\"": minutes, then seconds after the minute mark
_MIN_SEC_PRIMES = re.compile(
    r"(?<![\w.'])(\d{1,2})\s*['′]\s*([0-5]\d)(?:\s*(?:''|\"|″))?(?![\w'\"″])"
)


def _primed(m: re.Match[str]) -> str:
    if m["b"]:
        if int(m["b"]) > 110:
            return m.group(0)
        return f"{m['b']} C {m['bn']} {'min' if m['bu'] in _MINUTE_MARKS else 's'}"
    unit = "min" if m["u"] in _MINUTE_MARKS else "s"
    return f"{m['t']} {m['n']} {unit}"


def _outside_quotes(fn: Callable[[str], str], text: str) -> str:
    """``fn`` applied to the text between quoted spans; what is quoted stays as written."""
    out, last = [], 0
    for m in _QUOTES.finditer(text):
        out += [fn(text[last : m.start()]), m.group(0)]
        last = m.end()
    return "".join([*out, fn(text[last:])])


# Wells paired between two spaced dashes inside a sentence are an aside, as if in brackets ("5
# uL of each amplicon - column 1 into A1-A8 and column 2 into A9-A16 - mix 3x"); never a range
# ("A1 - A6", "rows A - D", "1 - 3") at either dash.
_ASIDE = re.compile(r"(?<=\S)[ \t]+-[ \t]+(?P<inner>[^\n;.()]+?)[ \t]+-[ \t]+(?=\S)")
_END = re.compile(r"(?:\b[A-Pa-p]?\d+|\b[A-Pa-p])$")  # what a range "X - Y" has either side
_PAIRS_IN = re.compile(r"\b(?:into|onto)\b|->", re.IGNORECASE)  # wells paired in the aside
_START = re.compile(r"^(?:[A-Pa-p]?\d+|[A-Pa-p])\b")


def _aside(m: re.Match[str]) -> str:
    before, inner, after = m.string[: m.start()], m["inner"], m.string[m.end() :]
    if (_END.search(before) and _START.match(inner)) or (
        _END.search(inner) and _START.match(after)
    ):
        return m.group(0)
    if not _PAIRS_IN.search(inner):
        return m.group(0)  # "95C - 30s, 55C - 30s", "- A1 12 uL, B1 8 uL -": not an aside
    return f" ({inner}) "


# "Std curve: 1. 100 uL TE into A2-A8. 2. 200 uL stock into A1. 3. ...": numbered steps pasted
# onto one line, each its own line (as a numbered list is read)
_INLINE_STEP = re.compile(r"(?<=[.;:!])[ \t]+(?=\d{1,2}[.)][ \t]+\S)")
_FIRST_STEPS = re.compile(r"(?:^|[.;:!][ \t]+)1[.)][ \t]+\S[^\n]*?[.;!][ \t]+2[.)][ \t]+\S")


def _inline_steps(text: str) -> str:
    return _INLINE_STEP.sub("\n", text) if _FIRST_STEPS.search(text) else text


def normalise(request: str) -> Normalised:
    """The request in one spelling; quoted spans become «qN» placeholders."""
    text = count_blocks(unicodedata.normalize("NFC", request))  # "35 cycles of" + indented steps
    text = named_wells(_inline_steps(text))
    text = rewrite_tables(volume_sheets(conc_tables(norm_forms(nested(unwrapped(text))))))
    text = text.translate(_CHARS)
    text = dashed(
        one_line(text)
    )  # a curve's spec sheet: "Std curve:\n- stock: X\n- diluent: Y ..."
    quoted: list[str] = []

    def hold(m: re.Match[str]) -> str:
        quoted.append((m.group(1) or m.group(2) or "").strip())
        return f" «q{len(quoted) - 1}» "

    text = "\n".join(item_how(markdown_line(line)) for line in text.split("\n"))
    text = _outside_quotes(keywords, text)  # "incubtae", "dipsense": before any verb is read
    text = units(rephrase(_LAMBDA.sub(" uL", digits(text))))
    text = _MIN_SEC_PRIMES.sub(lambda m: f"{int(m[1]) * 60 + int(m[2])} s", text)
    text = _PRIMES.sub(_primed, text)  # "95°C 2'", "60°C 30\"": minutes and seconds
    text = _QUOTES.sub(hold, text)
    text = held_for(_DEGREE.sub(lambda m: f" {m.group(1).upper()}", text))
    text = step_marks(_RANGE_LEVEL.sub(r"\1 to ", _ARROW.sub(" -> ", text)))
    text = _PER.sub(r"\1 per \2", text)
    text = _CROSSED.sub(r"\1, \2", text)  # the area where they cross, not "6 times"
    text = _LINE_CHAIN.sub(_line_chain, text)
    text = _TO_CHAIN.sub(lambda m: re.sub(r"\s+to\s+", " -> ", m.group(0)), text)
    text = to_pairs(text)  # "A3 to A1, B7 to A2": picks, not ranges that run backwards
    text = _LABWARE_WELL.sub(_labware_well, text)
    text = _SPACED_WELL.sub(r"\1\2\3", text)
    text = _SLASHED.sub(_slashed, text)
    text = _UNIT_DOT.sub(
        r"\1", _DECIMAL_COMMA.sub(r"\1.\2", text)
    )  # "50 ul. of buffer": an abbreviation, not a sentence end
    text = _HOURS_MINUTES.sub(lambda m: f"{int(m.group(1)) * 60 + int(m.group(2))} min", text)
    text = _MINUTES_SECONDS.sub(lambda m: f"{int(m.group(1)) * 60 + int(m.group(2))} s", text)
    text = "\n".join(map_items(_item_colons(line)) for line in text.split("\n"))
    text = _IS.sub(r"\1 is ", text)  # "Buffer's in the trough": a fact, not a possessive
    text = programme_tables(text)  # "Step | Temp | Time | Cycles" rows: one line
    text = goto_lists(text)  # "5) go to step 2, 29 more times": steps 2-4 thirty times
    lines, carried = [], None
    text = bracketed_lines(text)  # "(all on plate_2)" on a line of its own
    text = _ASIDE.sub(_aside, text)  # "5 uL of each - X into A1-A8 and ... - mix"
    for raw in _carry_units(text.replace("\r", "\n").split("\n")):
        line, carried = _units(raw, carried if raw.strip() else None)
        lines.append(_SPACES.sub(" ", line).strip())
    return Normalised("\n".join(line for line in lines if line), tuple(quoted))


def unquote(text: str, quoted: tuple[str, ...], mark: str = "") -> str:
    """``text`` with its placeholders replaced by the quoted text they stand for (in ``mark``)."""
    return PLACEHOLDER.sub(lambda m: f"{mark}{quoted[int(m.group(1))]}{mark}", text).strip()
