"""Controlled lab English -> intents: what each clause of a request asks for, not yet checked.

A request is split into clauses at "then" (", then", "and then", ";", a full stop). Each clause
is matched to one family by its verb and read into an intent dataclass: the numbers with their
units, the labware and well selections, the liquid names, as written. Whether they exist in
the lab, fit the instruments or are missing is for the builders to decide.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from agents.task.planning import _units, _wells
from agents.task.planning._units import Quantity
from agents.task.planning.models import LabView

_FLAGS = re.IGNORECASE
_SPLIT = re.compile(
    r"\s*(?:[,;]?\s*\band\s+then\b|[,;]\s*then\b|\bthen\b|;|\.\s+(?=[a-z])|[,;]?\s*\bafter that\b"
    r"|[,;]?\s*\bfinally\b|,?\s+and\s+(?=(?:transfer|add|distribute|dispense|read|measure|"
    r"shake|incubate|heat|move|bring|return|make|prepare|dilute|serially)\b))\s*,?\s*",
    _FLAGS,
)
_LEAD = re.compile(
    r"^(?:(?:please|now|first|next|and|also|then|can you|could you)\b[\s,]*)+", _FLAGS
)
_TOKEN = re.compile(r"[A-Za-z][\w\-]*")
_WORDS = re.compile(r"([\w\-]+)")
_PLATE_LIKE = re.compile(
    r"^(?:plate|reservoir|trough|rack|tiprack|tips?|tube)s?[_\-]?\w*\d\w*$", _FLAGS
)
_REFER = re.compile(r"\b(it|them|those|these|same wells|the plate|that plate)\b", _FLAGS)
_STOP = frozenset(("of", "the", "a", "an", "each", "per", "well", "wells", "in", "with", "more"))

_DILUTION = re.compile(r"\bdilut(?:e|ion|ions|ing)\b", _FLAGS)
_READ = re.compile(r"^(?:read|measure|scan)\b", _FLAGS)
_RECORD = re.compile(r"^(?:record|take|get|do)\b", _FLAGS)
_INCUBATE = re.compile(r"^(shake|incubate|heat|warm|agitate)\b", _FLAGS)
_MIX = re.compile(r"^mix\b", _FLAGS)
_MOVE = re.compile(r"^(?:move|bring|take|put|place|return|send|carry|transport)\b", _FLAGS)
_TRANSFER = re.compile(
    r"^(transfer|add|distribute|dispense|pipette|pipet|aliquot|put|move|fill|place)\b", _FLAGS
)
_AND_MIX = re.compile(r"(?:,\s*|\s+)(?:and\s+)?(?:then\s+)?mix(?:ing)?\b(.*)$", _FLAGS)
_FILL = re.compile(r"(.+?)\s+with\s+(.+)$", _FLAGS)
_MIXING = re.compile(r"\bmix(?:ing)?\b(.*)$", _FLAGS)
_FROM = re.compile(r"\bfrom\b", _FLAGS)
_TO = re.compile(r"\b(?:to|into|onto|across|over|throughout)\b", _FLAGS)
_IN = re.compile(r"\bin\b", _FLAGS)
_FINAL = re.compile(r"\b(final|per well|each well|in each|total)\b", _FLAGS)
_OF_STOCK = re.compile(
    r"\b(?:dilutions?(?:\s+series)?\s+of|dilute|serially\s+dilute)\s+(?:the\s+)?([a-z][\w\-]*)",
    _FLAGS,
)
_DILUENT = re.compile(
    r"\b(?:with|using|in)\s+(?:the\s+)?([a-z][\w\-]*)(?:\s+as\s+(?:the\s+)?diluent)?"
    r"|\bdiluent\s*(?:is|:|=)?\s*([a-z][\w\-]*)|\b([a-z][\w\-]*)\s+as\s+(?:the\s+)?diluent",
    _FLAGS,
)
_NOT_LIQUID = frozenset(
    ("row", "column", "col", "all", "every", "each", "the", "a", "an", "plate", "mixing", "final",
     "well", "wells", "step", "steps", "duplicate", "triplicate")
)  # fmt: skip
MODES = {
    "absorbance": re.compile(r"\b(?:absorbance|abs|od\s?\d{3}|od|optical density)\b", _FLAGS),
    "fluorescence": re.compile(r"\b(?:fluorescence|fluor|rfu)\b", _FLAGS),
    "luminescence": re.compile(r"\b(?:luminescence|lum|rlu)\b", _FLAGS),
}
_OD = re.compile(r"\bod\s?(\d{3})\b", _FLAGS)
_AT_NM = re.compile(r"\bat\s+(\d{3,4})\b(?!\s*[a-z])", _FLAGS)
_EX = re.compile(r"\b(?:excitation|ex|exc)\b\D{0,12}?(\d{3,4})", _FLAGS)
_EM = re.compile(r"\b(?:emission|em)\b\D{0,12}?(\d{3,4})", _FLAGS)
_PAIR = re.compile(r"\b(\d{3,4})\s*/\s*(\d{3,4})\b")
_MOVE_TO = re.compile(r"\b(?:back\s+to|to|into|onto|on|in|back)\b(.*)$", _FLAGS)
_SHAKING = re.compile(r"\b(?<!without )shak(?:e|ing)\b", _FLAGS)

FAMILIES = [
    "transfer 50 uL from reservoir A1 to plate_1 A1:A12",
    "add 100 uL of buffer to row A of plate_2",
    "make a 2-fold serial dilution of dye across row A of plate_1, 100 uL final volume",
    "mix plate_1 A1 5 times with 50 uL",
    "shake plate_1 at 37 C for 5 min at 600 rpm",
    "read absorbance of plate_1 at 600 nm",
    "move plate_1 to the reader",
    "run 35 cycles of 95 C for 15 s, 60 C for 30 s on plate_1, then hold at 4 C",
]


class Lexicon:
    """The names a request may use for this lab: labware, instruments, liquids."""

    def __init__(self, lab: LabView) -> None:
        self.labware = {i.lower(): i for i in lab.labware}
        self.instruments = {i.lower(): i for i in lab.instruments}
        self.liquids = {n.lower(): n for n in lab.liquids()}
        spaced = {
            re.sub(r"[_\-]", sep, i): i for i in lab.labware for sep in (" ", "-", "") if "_" in i
        }
        spaced = {k: v for k, v in spaced.items() if k != v}
        self._alias = (
            re.compile(
                r"\b(" + "|".join(map(re.escape, sorted(spaced, key=len, reverse=True))) + r")\b",
                _FLAGS,
            )
            if spaced
            else None
        )
        self._spaced = {k.lower(): v for k, v in spaced.items()}

    def normalize(self, text: str) -> str:
        text = text.replace("µ", "u").replace("μ", "u").replace("°", " ").replace("º", " ")
        text = text.replace("−", "-").replace("–", "-").replace("—", " - ")
        text = " ".join(text.split()).strip(" .!")
        if self._alias is not None:
            text = self._alias.sub(lambda m: self._spaced[m.group(1).lower()], text)
        return text


@dataclass
class Target:
    """The labware and wells a phrase names."""

    plates: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    instruments: list[str] = field(default_factory=list)
    selection: str | None = None
    refers_back: bool = False


@dataclass
class Clause:
    text: str
    vague: str | None
    bare: list[str]


@dataclass
class TransferIntent(Clause):
    volume: Quantity | None
    liquid: str | None
    source: Target | None
    dest: Target
    mix_text: str | None


@dataclass
class DilutionIntent(Clause):
    fold: float | None
    steps: int | None
    stock: str | None
    diluent: str | None
    target: Target
    volumes: list[Quantity]
    labelled_final: bool
    mix_times: int | None


@dataclass
class MixIntent(Clause):
    target: Target
    volume: Quantity | None
    times: int | None


@dataclass
class IncubateIntent(Clause):
    verb: str
    target: Target
    temperature: Quantity | None
    duration: Quantity | None
    speed: Quantity | None
    shaking: bool


@dataclass
class ReadIntent(Clause):
    modes: list[str]
    target: Target
    wavelengths: list[Quantity]
    od: int | None
    at_nm: int | None
    excitation: int | None
    emission: int | None


@dataclass
class MoveIntent(Clause):
    target: Target
    destination: str


Intent = TransferIntent | DilutionIntent | MixIntent | IncubateIntent | ReadIntent | MoveIntent


def split(text: str) -> list[str]:
    """The clauses of a chained request."""
    parts = (_LEAD.sub("", p).strip(" ,.") for p in _SPLIT.split(text))
    return [p for p in parts if p]


def target(text: str, lex: Lexicon) -> Target:
    """Labware, instruments and the well selection named in a phrase."""
    found = Target(refers_back=bool(_REFER.search(text)))
    rest = text
    for tok in _TOKEN.findall(text):
        low = tok.lower()
        if low in lex.labware:
            found.plates.append(lex.labware[low])
        elif low in lex.instruments:
            found.instruments.append(lex.instruments[low])
        elif _PLATE_LIKE.match(tok):
            found.unknown.append(tok)
        else:
            continue
        rest = _without(rest, tok)
    found.plates = list(dict.fromkeys(found.plates))
    found.selection = _wells.find(rest)
    return found


def _without(text: str, word: str) -> str:
    """``text`` with every whole-word ``word`` blanked out."""
    return "".join(" " if t == word else t for t in _WORDS.split(text))


def _clause(text: str) -> dict[str, object]:
    vague = _units.VAGUE.search(text)
    return {
        "text": text,
        "vague": vague.group(1) if vague else None,
        "bare": _units.bare_numbers(text),
    }


def parse(text: str, lex: Lexicon) -> Intent | None:
    """The intent of one clause, or None when no family matches."""
    if _DILUTION.search(text):
        return _dilution(text, lex)
    if _READ.match(text) or (_RECORD.match(text) and any(m.search(text) for m in MODES.values())):
        return _read(text, lex)
    if m := _INCUBATE.match(text):
        return _incubate(text, m.group(1).lower(), lex)
    if _MIX.match(text):
        qs = _units.quantities(text)
        return MixIntent(
            **_clause(text),  # type: ignore[arg-type]
            target=target(_strip(text, qs), lex),
            volume=_units.first(qs, "volume"),
            times=_units.times(text),
        )
    has_volume = _units.first(_units.quantities(text), "volume") is not None
    # A vague amount makes "move a bit of dye to plate_1 A1" a transfer; with no destination
    # ("move plate_1 a bit") it is a plate move that lacks its location.
    vague_liquid = _units.VAGUE.search(text) and _TO.search(text)
    if _TRANSFER.match(text) and (has_volume or not _MOVE.match(text) or vague_liquid):
        return _transfer(text, lex)
    if _MOVE.match(text):
        m = _MOVE_TO.search(text)
        head, dest = (text[: m.start()], m.group(1)) if m else (text, "")
        if m is None and (vague := _units.VAGUE.search(text)):
            # "move plate_1 a bit": a vague displacement is not a place; ask where.
            head, dest = text[: vague.start()], vague.group(0)
        return MoveIntent(
            **_clause(text),  # type: ignore[arg-type]
            target=target(head, lex),
            destination=dest.strip(),
        )
    return None


def _strip(text: str, qs: list[Quantity]) -> str:
    for q in reversed(qs):
        text = text[: q.start] + " " + text[q.end :]
    return text


def _transfer(text: str, lex: Lexicon) -> TransferIntent:
    verb, body = text.split(" ", 1) if " " in text else (text, "")
    mix_text = None
    if m := _AND_MIX.search(body):
        mix_text, body = m.group(1).strip(), body[: m.start()]
    if verb.lower() == "fill" and (m := _FILL.match(body)):
        dest_text, body = m.group(1), m.group(2)
        head, src_text = [*_FROM.split(body, maxsplit=1), ""][:2]
    else:
        f, t = _FROM.search(body), _TO.search(body) or _IN.search(body)
        cuts = sorted(x.start() for x in (f, t) if x)
        head = body[: cuts[0]] if cuts else body
        src_text = body[f.end() : t.start() if t and t.start() > f.start() else None] if f else ""
        dest_text = body[t.end() : f.start() if f and f.start() > t.start() else None] if t else ""
    qs = _units.quantities(head)
    volume = _units.first(qs, "volume") or _units.first(_units.quantities(body), "volume")
    words = [w for w in _strip(head, qs).lower().split() if w not in _STOP]
    words = [
        w for w in words if not _units.VAGUE.fullmatch(w) and w not in ("bit", "little", "lot")
    ]
    liquid, source = " ".join(words) or None, target(src_text, lex) if src_text else None
    if liquid and source is None and (named := target(_strip(head, qs), lex)).plates:
        liquid, source = None, named
    return TransferIntent(
        **_clause(text),  # type: ignore[arg-type]
        volume=volume,
        liquid=liquid,
        source=source,
        dest=target(dest_text, lex),
        mix_text=mix_text,
    )


def _dilution(text: str, lex: Lexicon) -> DilutionIntent:
    stock = _OF_STOCK.search(text)
    diluent = None
    for m in _DILUENT.finditer(text):
        word = next(g for g in m.groups() if g)
        if word.lower() not in _NOT_LIQUID and word.lower() not in lex.labware:
            diluent = word
            break
    rest = text
    for word in (stock.group(1) if stock else None, diluent):
        if word:
            rest = _without(rest, word)
    mix = _MIXING.search(text)
    return DilutionIntent(
        **_clause(text),  # type: ignore[arg-type]
        fold=_units.fold(text),
        steps=_units.steps(text),
        stock=stock.group(1) if stock else None,
        diluent=diluent,
        target=target(rest, lex),
        volumes=[q for q in _units.quantities(text) if q.kind == "volume"],
        labelled_final=bool(_FINAL.search(text)),
        mix_times=_units.times(mix.group(1)) if mix else None,
    )


def _incubate(text: str, verb: str, lex: Lexicon) -> IncubateIntent:
    qs = _units.quantities(text)
    return IncubateIntent(
        **_clause(text),  # type: ignore[arg-type]
        verb=verb,
        target=target(_strip(text, qs), lex),
        temperature=_units.first(qs, "temperature"),
        duration=_units.first(qs, "duration"),
        speed=_units.first(qs, "speed"),
        shaking=verb in ("shake", "agitate") or bool(_SHAKING.search(text)),
    )


def _read(text: str, lex: Lexicon) -> ReadIntent:
    qs = _units.quantities(text)
    where = {mode: m.start() for mode, rx in MODES.items() if (m := rx.search(text))}
    od, at, ex, em = _OD.search(text), _AT_NM.search(text), _EX.search(text), _EM.search(text)
    excitation, emission = (int(ex.group(1)) if ex else None), (int(em.group(1)) if em else None)
    if (pair := _PAIR.search(text)) and not (ex or em):
        excitation, emission = int(pair.group(1)), int(pair.group(2))
    stripped = _OD.sub(" ", _strip(text, qs))
    return ReadIntent(
        **_clause(text),  # type: ignore[arg-type]
        modes=sorted(where, key=where.__getitem__),
        target=target(stripped, lex),
        wavelengths=[q for q in qs if q.kind == "wavelength"],
        od=int(od.group(1)) if od else None,
        at_nm=int(at.group(1)) if at else None,
        excitation=excitation,
        emission=emission,
    )
