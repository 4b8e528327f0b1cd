"""A volume said after its transfer, as a clause of its own: "cmpd B3 -> assay A24, cmpd C7
-> assay B24; 1.5 uL each". The piece names no place, liquid or action, only how much; the
transfer before it names no volume. The two are read as one clause (the piece folded into it,
so the trace still shows it)."""

from __future__ import annotations

import itertools
import re
from dataclasses import replace

from agents.task.planning._clauses import Clause
from agents.task.planning._entities import without_how
from agents.task.planning._frames import Frame
from agents.task.planning._lexicon import Lexicon
from agents.task.planning._normalise import Normalised
from agents.task.planning._reading import Read, _read, fold_into_previous
from agents.task.planning._vocabulary import ACTION_VERBS
from agents.task.planning._wellsets import WellSet
from agents.task.planning.families import Family
from agents.task.planning.families._concentrations import CONC, bracketed_unit
from agents.task.planning.families._diluent_piece import diluent_piece
from agents.task.planning.families._places import head_is_source
from agents.task.planning.families._ratio_parts import told
from agents.task.planning.families.normalise import conc_list, dest_piece, final_piece
from agents.task.planning.families.read import said_optics

_VERB_FIRST = re.compile(rf"^(?:{ACTION_VERBS})\b", re.IGNORECASE)

_ONLY_VOLUME = re.compile(
    r"^(?:with\s+|at\s+|using\s+|(?:please\s+)?use\s+|make\s+it\s+|all\s+(?:at\s+)?"
    r"|vol(?:ume)?\.?\s*(?:is\s+|=\s*|:\s*|of\s+)?)?[\d.]+\s*(?:uL|mL)\s*"  # "Volume 10 uL."
    r"(?:each(?:\s+well)?|per\s+(?:well|pair|pick|transfer|spot|dot|drop(?:let)?|hit|sample|line)"
    r"|apiece|a\s+well|/\s*well|(?:in|into|to)\s+(?:each|every)\s+well"
    r"|in\s+total|total|altogether|all\s+together|in\s+all)?"
    r"(?:\s+(?:is\s+(?:fine|ok(?:ay)?|enough|good)|will\s+do|please))?$",
    re.IGNORECASE,
)


# What may sit beside the volume: how to pipette it ("8-channel", "fresh tips", "same layout").
_HOW_ELSE = re.compile(
    r"\b(?:(?:with|using|use)\s+(?:the\s+|a\s+)?)?(?:same\s+(?:layout|positions?|wells?)|well[\s-]+(?:to|for)"
    r"[\s-]+well|matching\s+(?:wells?|positions?)|(?:by|per)\s+column|column[\s-]?(?:wise|by[\s-]column)|"
    r"(?:head|pipette|tips?)\b)",
    re.IGNORECASE,
)


def _volume_only(frame: Frame | None) -> bool:
    if frame is None:
        return False
    ents = frame.ents
    rest = _HOW_ELSE.sub(" ", without_how(frame.text))
    rest = re.sub(r"\s*[,;]\s*", " ", rest).strip(" ,;.")
    return bool(
        _ONLY_VOLUME.match(re.sub(r"\s+", " ", rest))
        # "5 uL in every well": the wells of the transfer before, not a set of its own
        and all(len(w.parts) == 1 and w.parts[0].kind == "all" for w in ents.wellsets)
        and not ents.labware
        and not ents.liquids
    )


_WELL = re.compile(r"\b[A-Pa-p]\d{1,2}\b")
_EVERY = re.compile(r"\b(?:each|per|all|apiece|every)\b", re.IGNORECASE)


def _heads_items(read_in: Read) -> set[int]:
    """The volume pieces said under a heading that items with wells of their own follow in
    the same sentence ("Pick from X into Y; 20 uL each; H1 to F1; H6 to F2"): the volume
    belongs to the heading, which still heads those items."""
    frames = [f for f, _ in read_in if f is not None]
    out: set[int] = set()
    for i, f in enumerate(frames):
        label = f.clause.label
        if label and any(
            g.clause.label == label and g.clause.sentence == f.clause.sentence
            and _WELL.search(g.text)
            for g in frames[i + 1 :]
        ):  # fmt: skip
            out.add(id(f))
    return out


def volume_after(read_in: Read, lex: Lexicon, norm: Normalised) -> Read:
    """``read_in`` with each volume-only piece joined to the transfer before it."""
    itemed, read_in = _heads_items(read_in), list(read_in)
    made: set[int] = set()  # "Pick from X into Y; 20 uL each; H1 to F1; ...": a heading too
    for i, (f, _) in enumerate(read_in):
        if f is not None and id(f) in itemed and _volume_only(f):
            read_in[i] = _read(replace(f.clause, heading=True), lex, norm.quoted)
            made.add(id(read_in[i][0]))
    # "- X A1 -> Y A1\n- X A2 -> Y A2\n2 uL per spot": the line after a list is the whole
    # list's (given to every item by the shared-volume stage), never only its last item's
    listed = {
        id(f)
        for (e, _), (f, _) in itertools.pairwise(read_in)
        if e is not None and f is not None and e.clause.joined == f.clause.joined == "item"
    }
    read_in = fold_into_previous(
        read_in,
        lex,
        norm,
        "transfer",
        lambda f, _, head: (
            not head.ents.volumes()
            and _volume_only(f)
            and id(f) not in made
            and not (id(head) in listed and f.clause.joined != "item" and _EVERY.search(f.text))
        ),
        heading=False,  # "Copy samples onto dest_plate: 20 uL each": one clause, not a heading
    )
    # "DMSO from master A11 into assay A1-A4 - 5 uL each": a dash before the last piece of a
    # sentence is not a heading over items; the line and its volume are one transfer.
    last = {f.clause.sentence: f for f, _ in read_in if f is not None}
    read_in = fold_into_previous(
        read_in,
        lex,
        norm,
        "context",
        lambda f, _, head: (
            head.clause.heading
            and not head.ents.volumes()
            and last.get(f.clause.sentence) is f
            and _volume_only(f)
        ),
        heading=False,
        becomes="transfer",
    )
    read_in = fold_into_previous(  # "Dilute 1:5: pt_sera A1-D1 into dil_blk A1-D1 with ..."
        read_in,
        lex,
        norm,
        "dilution",
        lambda f, _, head: (
            head.ents.fold is not None
            and not head.places
            and not head.ents.volumes()
            and f.ents.fold is None
            and bool(f.places)
            and f.clause.sentence == head.clause.sentence
            # ("1:10: 150 uL water into row H": the diluent's part or the whole, asked)
            and len(told(f.ents)) != 1
        ),
        text=lambda head, f: f"{head.clause.text} {f.clause.text}",
    )
    return fold_into_previous(  # "Dilute the dye 1:2 into A1-A4. Final volume 100 uL."
        read_in,
        lex,
        norm,
        "dilution",
        lambda f, _, head: (
            head.ents.fold is not None
            and not head.ents.volumes()
            and len(f.ents.volumes()) == 1
            and bool(_FINAL_ONLY.fullmatch(f.text.strip()))
        ),
        text=lambda head, f: f"{head.clause.text}, {f.ents.volumes()[0].text} final",
    )


# a piece that only gives a dilution's final volume: "Final volume should be 100 uL.",
# "100 uL final per well", "total vol: 200 uL each"
_FINAL_ONLY = re.compile(
    r"(?:(?:the\s+)?(?:final|total)(?:\s+vol(?:ume)?)?\s*(?:should\s+be|will\s+be|is|of|=|:)?\s*"
    r"\d+(?:\.\d+)?\s*(?:u[lL]|m[lL])|\d+(?:\.\d+)?\s*(?:u[lL]|m[lL])\s+(?:final|total)"
    r"(?:\s+vol(?:ume)?)?)(?:\s+(?:each|per\s+well|in\s+each\s+well|please))*\s*[.!]?",
    re.IGNORECASE,
)


def concentration_lists(read_in: Read, lex: Lexicon, norm: Normalised) -> Read:
    """A normalisation to a concentration and the pieces after it that only list wells and
    their concentrations ("A1 25.3", "Concs: B1 40 nM"), read once as one clause (the pieces
    folded in the trace)."""
    out: Read = []
    i = 0
    while i < len(read_in):
        head, fam = read_in[i]
        j = i + 1
        final = None  # the final volume a piece after the head gives ("IDTE to 20 uL total")
        later = None  # a list after other steps ("1. Normalise ... 2. Pool ... Concs: A1 10 nM")
        before = 0  # pieces just before the head that only list concentrations
        if head is not None and fam is not None and fam.name == "normalise":
            while j < len(read_in) and (f := read_in[j][0]) is not None:
                if not (
                    conc_list(f, None, head)
                    or final_piece(f, head)
                    or dest_piece(f, head, final is not None)
                    or diluent_piece(f, head)
                ):
                    break
                if final_piece(f, head) or (dest_piece(f, head) and f.ents.volumes()):
                    final = f.ents.volumes()[0]
                j += 1
            if j == i + 1 and len(CONC.findall(head.text)) <= 1:
                later = _later_list(read_in, j, head)
                while later is None and before < len(out) and _only_list(out[-1 - before], head):
                    before += 1  # "Concentrations (ng/uL): A1 10, A2 8.\nNormalise these ..."
        if (j > i + 1 or later is not None or before) and head is not None:
            spans = read_in[i + 1 : j] if later is None else read_in[later : later + 1]
            spans = out[len(out) - before :] if before else spans
            pieces = [f.clause for f, _ in spans if f is not None]
            text = "; ".join([head.clause.text, *(_with_unit(c) for c in pieces)])
            merged, got = _read(replace(head.clause, text=text, heading=False), lex, norm.quoted)
            if merged is not None and got is not None and got.name == "normalise":
                merged.extra["folded"] = pieces
                merged.final = merged.final or final
                out.append((merged, got))
                if before:  # the list said first leaves its place: read once, in the head
                    del out[-1 - before : -1]
                elif later is not None:  # ... and so does one said after other steps
                    read_in = [x for k, x in enumerate(read_in) if k != later]
                i = j
                continue
        out.append(read_in[i])
        i += 1
    return out


def _later_list(read_in: Read, start: int, head: Frame) -> int | None:
    """The index of the one piece after ``start`` that only lists concentrations and that
    nothing else reads (no family), with no other normalisation between: the list of a
    normalisation said apart from it, at the end of the steps."""
    for k in range(start, len(read_in)):
        frame, family = read_in[k]
        if family is not None and family.name == "normalise":
            return None
        if frame is not None and family is None and conc_list(frame, None, head):
            return k
    return None


def _only_list(item: tuple[Frame | None, Family | None], head: Frame) -> bool:
    """Whether a piece read before a normalisation only lists concentrations (and nothing
    else reads it)."""
    frame, family = item
    quiet = family is None or family.name == "context"  # ("X A1-C1 are at 8, 4 and 16 nM.")
    return frame is not None and quiet and conc_list(frame, None, head)


def _with_unit(clause: Clause) -> str:
    """A piece's text, after the unit its label gives in brackets ("Qubit (ng/uL): 10, 8")."""
    unit = bracketed_unit(clause.label or "")
    return f"({unit}) {clause.text}" if unit and not bracketed_unit(clause.text) else clause.text


# A piece that only says how to read: "Excitation 485, emission 520.", "ex 350 / em 461",
# "450 nm", "A450 with 570 ref" - nothing to read it on, no volume, no other verb.
_ONLY_OPTICS = re.compile(
    r"^(?:(?:at|@|with|using|read\s+at|and|,|/|\s|nm|ref(?:erence)?|excitation|emission|ex|em|exc"
    r"|λex|λem|wavelengths?|filters?|[:=]|a?\d{3,4})+)$",
    re.IGNORECASE,
)


def _optics_only(frame: Frame | None) -> bool:
    return (
        frame is not None
        and not frame.ents.wellsets
        and not frame.ents.labware
        and not frame.ents.liquids
        and not frame.ents.volumes()
        and bool(re.search(r"\d{3}", frame.text))
        and bool(_ONLY_OPTICS.match(frame.text.strip(" .;")))
    )


def _plate_and_optics(frame: Frame | None, family: Family | None) -> bool:
    """ "stain_plt at 570 and 600 nm": a plate (or its wells) and wavelengths, no verb or volume."""
    return (
        frame is not None
        and (family is None or family.name == "read")
        and bool(frame.ents.labware)
        and not frame.ents.volumes()
        and not frame.ents.liquids
        and said_optics(frame.text)
        and not _VERB_FIRST.match(frame.text)
    )


def optics_after(read_in: Read, lex: Lexicon, norm: Normalised) -> Read:
    """``read_in`` with each piece that only gives wavelengths joined to the read before it
    that gives none ("Hoechst readout on stain_plt B2-G11. Excitation 350, emission 461."), and
    the plate and wavelengths said after a read named only by its mode ("Absorbance please!
    stain_plt at 570 and 600 nm")."""
    return fold_into_previous(
        read_in,
        lex,
        norm,
        "read",
        lambda f, fam, head: (
            not head.wavelengths
            and not said_optics(head.text)
            and (
                _optics_only(f)
                or (not head.ents.labware and not head.ents.wellsets and _plate_and_optics(f, fam))
            )
        ),
        heading=False,
    )


# The words a piece that only says where may have beside its plate and wells.
_WHERE_WORDS = frozenset(
    ["in", "into", "to", "onto", "on", "->", "the", "well", "wells", "of", "only"]
)
# A form's label before such a piece: "Plate: elisa_plate, columns 1-6", "Wells: columns 1-6"
_PLACE_LABEL = re.compile(
    r"(?:dest(?:ination)?\s+)?(?:plates?|wells?|columns?|cols?|rows?|where|layout|target)",
    re.IGNORECASE,
)


def _places_only(frame: Frame) -> bool:
    """'maxisorp_1 column 1', 'into plate_2 A1-A6', 'Columns 1-6 only', 'Plate: P': at most
    one plate and one well set, nothing else."""
    ents = frame.ents
    if len(ents.labware) > 1 or len(ents.wellsets) > 1 or not (ents.labware or ents.wellsets):
        return False
    if ents.labware and not ents.labware[0].sure:
        return False
    spans = [(m.start, m.end) for m in ents.labware] + [(w.start, w.end) for w in ents.wellsets]
    inside = [m for m in ents.liquids if any(a <= m.start and m.end <= b for a, b in spans)]
    if ents.quantities or len(ents.liquids) > len(inside):  # "sample" of "sample_plate": none
        return False
    label = frame.clause.label
    if label is not None and not _PLACE_LABEL.fullmatch(label.strip()):
        return False
    text = ents.text
    for a, b in sorted(spans, reverse=True):
        text = f"{text[:a]} {text[b:]}"
    return set(re.sub(r"[\s,.;:]+", " ", text).lower().split()) <= _WHERE_WORDS


def _where_only(frame: Frame) -> bool:
    """'maxisorp_1 column 1', 'into plate_2 A1-A6': one plate and its wells, nothing else."""
    return len(frame.ents.labware) == len(frame.ents.wellsets) == 1 and _places_only(frame)


def _fills_open_place(frame: Frame, head: Frame) -> bool:
    """A piece that only says where, for a transfer that left it open: its plate (and wells)
    when the transfer names no place it goes to ("Add 100 uL X to each well. Plate: P,
    columns 1-6.", "Pool 100 uL from each well of Q column 1. Into P A1."), its wells alone
    when the transfer names that plate but no wells ("Add 100 uL X to P. Columns 1-6 only.")."""
    if frame.clause.joined not in ("start", "sentence", "semicolon") or not _places_only(frame):
        return False
    sources_first = head_is_source(head.text)
    dests = [
        place
        for role, place in head.places
        if role == "dest" or (role == "head" and not sources_first)
    ]
    if any(p.wells is not None and not _all_wells(p.wells) for p in dests):
        return False  # the transfer says its own wells
    to_plate = any(p.labware is not None for p in dests)
    return not to_plate if frame.ents.labware else to_plate


def _all_wells(wells: WellSet) -> bool:
    return len(wells.parts) == 1 and wells.parts[0].kind == "all"


_INTO = re.compile(r"^(?:in|into|to|onto|->)\b", re.IGNORECASE)


def place_after(read_in: Read, lex: Lexicon, norm: Normalised) -> Read:
    """``read_in`` with a piece that only says where ("dispense 50 uL TMB; maxisorp_1 column
    1", "Add 100 uL X to P. Columns 1-6 only.") read as the destination of the transfer before
    it that left it open."""

    def joins(frame: Frame, _: Family | None, head: Frame) -> bool:
        return (
            frame.clause.joined == "semicolon" and not head.ents.wellsets and _where_only(frame)
        ) or _fills_open_place(frame, head)

    def text(head: Frame, frame: Frame) -> str:
        sep = " " if _INTO.match(frame.clause.text) else " to "
        return f"{head.clause.text}{sep}{frame.clause.text}"

    return fold_into_previous(read_in, lex, norm, "transfer", joins, text=text)
