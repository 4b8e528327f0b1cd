"""Read a plate: absorbance at a wavelength, fluorescence at excitation / emission,
luminescence; the whole plate or the wells named, one or several plates.

The world brings each plate to the reader (drawer opened, plate moved in, drawer closed).
"""

from __future__ import annotations

import re

from agents.task.planning import _resolve as r
from agents.task.planning._clauses import Clause
from agents.task.planning._entities import Entities
from agents.task.planning._frames import Frame
from agents.task.planning._numberwords import small_count
from agents.task.planning._outcomes import Ask, Refuse
from agents.task.planning.families import Family

_FLAGS = re.IGNORECASE
MODES = {
    "absorbance": re.compile(
        r"\b(?:absorbance|absorbances|abs|od|o\.d\.|optical\s+density|od\d{3}|a\d{3}|turbidity)\b",
        _FLAGS,
    ),
    "fluorescence": re.compile(
        r"\b(?:fluorescence|fluor|fluo|rfu|fluorescent|gfp|fitc|excitation|emission|ex/em)\b"
        r"|\b(?:ex|em)\s*\d{3}\b",
        _FLAGS,
    ),
    "luminescence": re.compile(r"\b(?:luminescence|lum|rlu|luminescent|glow|luciferase)\b", _FLAGS),
}
_VERB = re.compile(
    r"^(?:read|measure|scan|record|quantify|detect|(?:take|get|do|run)\s+(?:an?\s+)?(?:\w+\s+)?readings?|"
    r"a\s+read(?:ing)?|readout|(?:an?\s+)?(?:od|absorbance|fluorescence|luminescence)\s+read)\b",
    _FLAGS,
)
_EX = re.compile(r"\b(?:excitation|ex|exc|λex)(?![a-z])\D{0,12}?(\d{3,4})", _FLAGS)
_EM = re.compile(r"\b(?:emission|em|λem)(?![a-z])\D{0,12}?(\d{3,4})", _FLAGS)
_EX_AFTER = re.compile(r"\b(\d{3,4})\s*(?:nm)?\s*(?:excitation|ex|exc)\b", _FLAGS)
_EM_AFTER = re.compile(r"\b(\d{3,4})\s*(?:nm)?\s*(?:emission|em)\b", _FLAGS)
_PAIRED = re.compile(r"\b(?:ex(?:citation)?\s*/\s*em(?:ission)?|λex\s*/\s*λem)\b", _FLAGS)
_PAIR = re.compile(r"\b(\d{3,4})\s*(?:nm)?\s*/\s*(\d{3,4})\b")
_AT = re.compile(
    r"\b(?:at|@|absorbance|abs|od|optical\s+density)\s+(?:at\s+)?(\d{3,4})\b"
    r"(?!\s*(?:rpm|c\b|uL|ul|x\b|times|min|s\b|sec))"
    r"|^(?:read|measure)\s+(?:(?!(?:row|col(?:umn)?|well|plate)s?\b)[\w-]+\s+)?(\d{3})\W*$",
    _FLAGS,
)  # "at 450", "absorbance 450", "read std_curve 450" (the number alone ends it): nm
# A reference wavelength read as well ("A450 with 570 ref", "reference 630 nm", "ref. 620").
_REF = re.compile(
    r"\b(?:ref(?:erence)?\.?|background|correction)\s*(?:wavelength\s*)?(?:at|of|:|=)?\s*(\d{3})\b"
    r"|\b(\d{3})\s*(?:nm\s*)?(?:as\s+(?:the\s+)?)?ref(?:erence)?\b",
    _FLAGS,
)


_BOTH_OF_THEM = re.compile(
    r"\bboth\b(?!\s+(?:wavelengths?|modes?|ways?|filters?|channels?|reads?))|\b(?:all|each)\s+of\s+them\b",
    _FLAGS,
)
_EVERY_PLATE = re.compile(r"\b(?:both|all|each|every)\s+(?:the\s+|of\s+the\s+)?plates?\b", _FLAGS)


# "read those wells", "on that column", "those six wells", "only the wells we filled": the
# wells the work before filled, not the whole plate ("read it" / "read the plate" stay whole).
_THOSE_WELLS = re.compile(
    r"\b(?:those|these|the\s+same|same|that|this|said|the\s+(?:filled|treated|dosed|used))\s+"
    r"(?:(?P<n>\d{1,3}|[a-z]+)\s+)?(?:wells?|columns?|rows?|samples?|reactions?)\b"
    r"|\b(?:only|just)\s+(?:those|these|them|the\s+ones)\b"
    r"|\bthe\s+(?:wells|ones)\s+(?:(?:I|we|you)\s+)?(?:just\s+)?(?:filled|used|loaded|dosed|added\s+to)\b",
    _FLAGS,
)


def _those_wells(frame: Frame, plate: str, p: r.Planning) -> list[str] | None:
    """The wells the clause before worked on, when the read says it reads those."""
    m = _THOSE_WELLS.search(frame.text)
    if m is None:
        return None
    if p.plate != plate or not p.wells:
        raise Ask(f"Which wells of {plate} should I read?", ["wells"], ["all wells"])
    said = (m.group("n") or "").lower()
    count = small_count(said) if said else None
    noun = m.group(0).lower()
    filled = len(p.wells)  # "those two columns": counted in columns (or rows)
    if re.search(r"\bcolumns?\b", noun):
        filled = len({w[1:] for w in p.wells})
    elif re.search(r"\brows?\b", noun):
        filled = len({w[0] for w in p.wells})
    if count is not None and count != filled:
        raise Ask(
            f"Which {count} of {plate} should I read? The step before filled "
            f"{len(p.wells)} wells ({p.wells[0]}..{p.wells[-1]}).",
            ["wells"],
            [f"{p.wells[0]}..{p.wells[-1]}"],
        )
    return list(p.wells)


# "spectrum", "scan P 300-700 nm", "read P from 300 to 700 nm": a spectrum, not one wavelength
_SPECTRUM = re.compile(
    r"\bspectr(?:um|a|al)\b|\bscan\s+from\s+\d{3}|\bwavelength\s+scan\b"
    r"|\bscan\w*\b[^.;\n]*?\b\d{3}\s*(?:nm\s*)?(?:to|-|–)\s*\d{3}\b"
    r"|\b(?:from|between)\s+\d{3}\s*(?:nm\s*)?(?:to|and|-|–)\s*\d{3}\s*nm\b",
    _FLAGS,
)


# A read named by its noun, not its verb: "FAM read on pcrA", "Hoechst signal on X", "the
# resazurin readout of X" - the dye or channel first, then what is read.
_READ_NOUN = re.compile(r"\b(?:read|reading|readout|read-out|signal)\s+(?:on|of|from|in)\b", _FLAGS)
_ACTS = re.compile(
    r"^(?:add|transfer|dispense|shake|incubate|mix|move|put|pipett?e|fill)\b", _FLAGS
)


_PUT_IN = re.compile(
    r"^(?:put|place|pop|stick|slide|load|move|take|bring|send)\s+\S+(?:\s+\S+)?\s+(?:in|into|on"
    r"|onto|to)\s+(?:the\s+)?",
    _FLAGS,
)


def _into_reader(ents: Entities) -> bool:
    """The clause puts a plate into the plate reader, no liquid said ("pop P in the reader")."""
    return (
        bool(_PUT_IN.match(ents.text))
        and any(kind == "plate_reader" for kind, *_ in ents.instruments)
        and not (ents.volumes() or ents.liquids)
    )


def _ex_em(text: str) -> bool:
    """Both an excitation and an emission wavelength are given ("ex 485 / em 520", "494 ex /
    517 em"): only a fluorescence read has them."""
    return bool((_EX.search(text) or _EX_AFTER.search(text)) and (
        _EM.search(text) or _EM_AFTER.search(text)
    ))  # fmt: skip


def said_optics(text: str) -> bool:
    """The clause gives a wavelength to read at ("at 450", "ex 485 / em 520", "485/535")."""
    return bool(_ex_em(text) or _AT.search(text) or _PAIR.search(text) or _EX.search(text))


def detect(clause: Clause, ents: Entities) -> int | None:
    text = ents.text
    if clause.label and any(rx.fullmatch(clause.label.strip()) for rx in MODES.values()):
        return 60  # "fluorescence: excitation 350, emission 460 on plate_2"
    if _VERB.match(text) or (_SPECTRUM.search(text) and not ents.volumes()):
        return 60
    if not _ACTS.match(text) and not ents.volumes() and (_ex_em(text) or _READ_NOUN.search(text)):
        return 55  # "PicoGreen read of eluates, ex 485 / em 535"
    if _into_reader(ents) and (said_optics(text) or any(rx.search(text) for rx in MODES.values())):
        return 55  # "put plate_1 in the reader at 450 nm", "pop P into the reader, luminescence"
    unnamed = text  # "Split 240 uL of luciferase reagent across D1-D8": a liquid's name
    for m in ents.liquids:  # says nothing about reading
        unnamed = unnamed[: m.start] + " " * (m.end - m.start) + unnamed[m.end :]
    if any(rx.search(unnamed) for rx in MODES.values()) and not re.match(
        r"^(?:add|transfer|dispense|shake|incubate|mix|move)\b", text, _FLAGS
    ):
        return 45
    return None


# What the assay's chemistry reads by: a dye or kit that fluoresces, a colour read by its
# absorbance. It settles only "read at 485/530" (ex/em, or two absorbance wavelengths?).
_CHEMISTRY = {
    "fluorescence": re.compile(
        r"\b(?:qubit|pico\s*green|ribo\s*green|quant-?it|resazurin|alamar\s*blue|presto\s*blue"
        r"|sybr|eva\s*green|cyquant|fluorescein|calcein|amplex|hoechst|dapi|propidium|alexa"
        r"|fitc|gfp|mcherry|rhodamine|cy[35])\b",
        _FLAGS,
    ),
    "absorbance": re.compile(
        r"\b(?:tmb|bca|bradford|coomassie|mtt|xtt|wst-?\d?|mts|crystal\s+violet|pnpp|abts|opd"
        r"|lowry|stop\s+solution|elisa)\b",
        _FLAGS,
    ),
}


def _chemistry(frame: Frame, p: r.Planning) -> str | None:
    """The one mode the assay's words and the liquids in the plates point to, if one."""
    plates = {*p.named, *([p.plate] if p.plate else [])}
    liquids = {k for (lw, _), mix in p.world.contents.items() if lw in plates for k in mix}
    said = " ".join([frame.clause.label or "", frame.text, *sorted(liquids)])
    found = [mode for mode, rx in _CHEMISTRY.items() if rx.search(said)]
    return found[0] if len(found) == 1 else None


def _modes(text: str, frame: Frame, chemistry: str | None = None) -> list[str]:
    where = {mode: m.start() for mode, rx in MODES.items() if (m := rx.search(text))}
    pair = _PAIR.search(text)
    if not where and pair and not (_EX.search(text) or _EM.search(text)) and chemistry:
        where[chemistry] = 0  # "Qubit assay: ... read at 485/530": ex/em by the dye
    elif not where and pair and not (_EX.search(text) or _EM.search(text)):
        a, b = pair.groups()  # "read at 450/620": an ELISA's two wavelengths, or ex/em?
        raise Ask(
            f"Should I read absorbance at {a} and {b} nm, or fluorescence (excitation {a} / "
            f"emission {b} nm)?",
            ["mode"],
            [f"absorbance at {a} and {b} nm", f"fluorescence ex {a} / em {b} nm"],
        )
    if not where and _EX.search(text):
        where["fluorescence"] = 0
    if not where and (frame.wavelengths or _AT.search(text)):
        where["absorbance"] = 0
    return sorted(where, key=where.__getitem__)


def require(frame: Frame) -> None:
    """Refuse, before any range is asked about, a read the reader cannot make."""
    if _SPECTRUM.search(frame.text):
        raise Refuse(
            "the reader reads at one wavelength at a time, not a spectrum: name the wavelengths "
            "to read (e.g. 'at 450 and 570 nm')",
            "capacity",
        )


def _nm(value: float, what: str, reader: str, p: r.Planning) -> int:
    r.within(value, "wavelength_range_nm", reader, p.world, what, "nm")
    if value != int(value):
        raise Refuse(f"{what} must be a whole number of nm, not {value:g}", "capacity")
    return int(value)


_SEVERAL = re.compile(r"\b(\d{3})(?:\s*(?:,|and|&|/|\+)\s*(\d{3}))+\s*nm\b", _FLAGS)
# "read abs 450 and 620": an absorbance read's wavelengths, the unit left out
_SEVERAL_ABS = re.compile(
    r"\b(?:abs(?:orbance)?|od)\b[^,;]*?\b(\d{3})(?:\s*(?:,|and|&|\+)\s*(\d{3}))+\b(?!\s*(?:nm|u[lL]))",
    _FLAGS,
)


def wavelengths(frame: Frame) -> list[float]:
    """Absorbance wavelengths: 'at 405 and 450 nm', 'A450/620' and 'A450 with 570 ref' are
    two reads each."""
    text = frame.text
    if _EX.search(text) or _EM.search(text):
        return [q.value for q in frame.wavelengths]
    found = [(q.start, q.value) for q in frame.wavelengths]
    if m := _SEVERAL.search(text) or _SEVERAL_ABS.search(text):
        found = [(m.start() + n.start(), float(n.group(0))) for n in re.finditer(r"\d{3}", m[0])]
    if pair := _PAIR.search(text):
        found += [(pair.start(k), float(pair.group(k))) for k in (1, 2)]
    found += [(m.start(), float(m.group(1) or m.group(2))) for m in _REF.finditer(text)]
    return list(dict.fromkeys(v for _, v in sorted(found)))


def _optics(mode: str, frame: Frame, reader: str, p: r.Planning) -> dict[str, int]:
    text = frame.text
    if mode == "absorbance":
        stated = frame.wavelengths[0].value if frame.wavelengths else None
        if stated is None and (m := _AT.search(text)):
            stated = float(m.group(1) or m.group(2))
        if stated is None:
            raise Ask(
                "At what wavelength (nm) should I read absorbance?",
                ["wavelength"],
                ["450 nm", "600 nm"],
            )
        return {"wavelength_nm": _nm(stated, "wavelength", reader, p)}
    if mode == "fluorescence":
        if re.search(r"\b(?:ex|excitation|exc|λex)(?![a-z])[\s:=]*(?:at\s+)?\d", text, _FLAGS):
            ex, em = _EX.search(text), _EM.search(text)  # "ex 485 / em 520"
        else:
            ex, em = _EX_AFTER.search(text), _EM_AFTER.search(text)  # "485 ex, 520 em"
            ex, em = ex or _EX.search(text), em or _EM.search(text)
        exc, emi = (int(ex.group(1)) if ex else None), (int(em.group(1)) if em else None)
        pair = _PAIR.search(text)
        if pair and (exc is None or emi is None or _PAIRED.search(text)):
            exc, emi = int(pair.group(1)), int(pair.group(2))  # "ex/em 485/535"
        if exc is None or emi is None:
            if len(frame.wavelengths) >= 2:
                exc, emi = int(frame.wavelengths[0].value), int(frame.wavelengths[1].value)
            else:
                raise Ask(
                    "At what excitation and emission wavelengths (e.g. ex 485 nm / em 520 nm)?",
                    ["wavelength"],
                    ["ex 485 / em 520 nm"],
                )
        exc, emi = _nm(exc, "excitation", reader, p), _nm(emi, "emission", reader, p)
        if emi <= exc:
            raise Refuse(
                f"emission ({emi} nm) must be longer than excitation ({exc} nm)", "capacity"
            )
        return {"excitation_nm": exc, "emission_nm": emi}
    return {}


def _describe(optics: dict[str, int]) -> str:
    if "wavelength_nm" in optics:
        return f" at {optics['wavelength_nm']} nm"
    if optics:
        return f" ex {optics['excitation_nm']} / em {optics['emission_nm']} nm"
    return ""


def build(frame: Frame, p: r.Planning) -> str:
    world = p.world
    reader = r.instrument("plate_reader", p, frame)
    modes = _modes(frame.text + " " + (frame.clause.label or ""), frame, _chemistry(frame, p))
    if not modes:
        raise Ask(
            "What should I read: absorbance, fluorescence or luminescence?",
            ["mode"],
            ["absorbance", "fluorescence", "luminescence"],
        )
    plates = [
        m.name for m in frame.ents.labware if m.sure and world.labware(m.name).kind == "plate"
    ]
    if not plates and _EVERY_PLATE.search(frame.text):
        plates = r.work_plates(world)  # "read both plates"
    named = [n for n in p.named if world.labware(n).kind == "plate"]
    if not plates and _BOTH_OF_THEM.search(frame.text) and len(named) >= 2:
        plates = named  # "... plate_1 ... plate_2 ...; read both at 450 nm"
    plates = list(dict.fromkeys(plates)) or [
        r.labware(
            frame.head if not frame.head.empty else frame.dest,
            p,
            "read",
            holding=frame.liquid.name if frame.liquid else None,
        )
    ]
    settings = {mode: _optics(mode, frame, reader, p) for mode in modes}
    reads = [(m, o) for m, o in settings.items()]
    if "absorbance" in settings and len(wavelengths(frame)) > 1:
        more = [
            ("absorbance", {"wavelength_nm": _nm(w, "wavelength", reader, p)})
            for w in wavelengths(frame)
        ]
        reads = [x for x in reads if x[0] != "absorbance"] + more
    repeats = frame.ents.times or 1
    if repeats > 10:
        raise Refuse(f"{repeats} reads in a row: I read a plate at most 10 times", "capacity")
    for plate in plates:
        lw = world.labware(plate)
        place = next(
            (
                pl
                for _, pl in frame.places
                if pl.wells is not None and (pl.labware is None or pl.labware.name == plate)
            ),
            None,
        )
        wells = r.wells(place, plate, p, "should I read", frame) if place is not None else None
        if wells is None:
            wells = _those_wells(frame, plate, p)
        world.bring(plate, r.place_of(reader, world))
        if world.drawer.get(reader) != "closed":
            world.close_drawer(reader, plate)
        for mode, optics in reads * repeats:  # "read the OD600 3 times": three reads
            args = {"plate": plate, **optics, **({"wells": wells} if wells else {})}
            count = len(wells) if wells else lw.rows * lw.cols
            world.emit(
                reader,
                f"read_{mode}",
                args,
                {"reading": {"plate": plate, "mode": mode, "wells": count}},
            )
    p.plate = plates[-1]
    what = ", ".join(f"{m}{_describe(o)}" for m, o in reads)
    again = f", {repeats} times" if repeats > 1 else ""
    where = f" {wells[0]}..{wells[-1]} ({len(wells)} wells)" if wells and len(plates) == 1 else ""
    return f"read {what} of {', '.join(plates)}{where} in {reader}{again}"


FAMILY = Family("read", detect, build)
