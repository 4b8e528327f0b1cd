"""Stage 4 of the rule planner, with its repairs: each clause read into a frame of its family.

Beyond one frame per clause, this is where the pieces people leave loose are put back: a
verbless lead-in ("For 5 min, shake ...") joins what follows; the verbless pieces of a dilution
sentence ("2-fold, A1 to A11, A12 blank, 100 uL final") join it; two volumes of two liquids in
one clause become two transfers; a recipe's "A1 holds 200 uL standard" about an empty well is a
filling step.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from agents.task.planning._blanks import split_blanks
from agents.task.planning._clauses import Clause
from agents.task.planning._entities import Entities, extract
from agents.task.planning._frames import Frame, read
from agents.task.planning._labels import diluent_of
from agents.task.planning._labels import label_verb as _label_verb
from agents.task.planning._lexicon import Lexicon
from agents.task.planning._normalise import Normalised
from agents.task.planning._wellsets import SelectionError
from agents.task.planning.families import FAMILIES, Family, classify


def _names_place(frame: Frame) -> bool:
    """A heading that is only a place ("elisa_a:", "plate_a row A -")."""
    rest = frame.text
    for m in sorted(
        [(m.start, m.end) for m in frame.ents.labware]
        + [(w.start, w.end) for w in frame.ents.wellsets],
        reverse=True,
    ):
        rest = rest[: m[0]] + rest[m[1] :]
    return bool(frame.ents.labware) and not re.sub(r"[\W_]+|\b(?:the|of|in|on|plate)\b", "", rest)


def _names_plate(frame: Frame) -> bool:
    lex = frame.extra.get("lex")
    label = frame.clause.label or ""
    return isinstance(lex, Lexicon) and bool(label) and bool(lex.labware_mentions(label)[0])


_LEAD_IN = re.compile(r"^(?:for|at|with|using|in)\b", re.IGNORECASE)


def _lead_ins(
    read_in: list[tuple[Frame | None, Family | None]], lex: Lexicon, norm: Normalised
) -> list[tuple[Frame | None, Family | None]]:
    """ "For 5 min, shake plate_a at 500 rpm": a verbless lead-in is part of what follows."""
    out: list[tuple[Frame | None, Family | None]] = []
    i = 0
    while i < len(read_in):
        frame, family = read_in[i]
        nxt = read_in[i + 1] if i + 1 < len(read_in) else None
        if (
            family is None
            and frame is not None
            and nxt is not None
            and nxt[0] is not None
            and nxt[1] is not None
            and nxt[0].clause.sentence == frame.clause.sentence
            and _LEAD_IN.match(frame.text)
            and frame.ents.quantities
        ):
            after = nxt[0]
            joined = replace(after.clause, text=f"{after.clause.text}, {frame.clause.text}")
            merged, fam = _read(joined, lex, norm.quoted)
            if merged is not None and fam is not None:
                merged.extra["folded"] = [frame.clause]
                out.append((merged, fam))
                i += 2
                continue
        out.append((frame, family))
        i += 1
    return out


_EACH = re.compile(
    r"(?:at\s+)?(?:\d+(?:\.\d+)?|\.\d+)\s*(?:u[lL]|ml|mL)\s*(?:each|per\s+(?:well|pick|transfer|sample))",
    re.IGNORECASE,
)
_PICKING = re.compile(
    r"\b(?:cherry|hit|pick|re-?array|rearray|map)|\bfrom\s+\S+\s+(?:to|into|->)\s+\S+\s*$",
    re.IGNORECASE,
)  # a list under "Cherry-pick ...:" or "From samples to dest_plate:" pairs wells
_SERIES_LABEL = re.compile(r"\b(?:dilut\w*|titrat\w*|serial\w*)\b", re.IGNORECASE)
_LEADING_X = re.compile(r"^(\d+(?:\.\d+)?)\s*x(?=\s*(?:[,;(]|of\b|dilut|serial|steps?\b|$))", re.I)
# "transfer 10 uL within grow_96:" over "A1 to A7; B1 to B7": an amount moved from well to well
_MOVES_AMOUNT = re.compile(
    r"^(?:transfer|move|pipett?e|copy)\s+[\d.]+\s*[um]L\b(?!.*\b(?:into|to|onto)\b)", re.I
)
_WELL_TO_WELL = re.compile(r"^([A-Pa-p]\d{1,2})\s+(?:to|into)\s+([A-Pa-p]\d{1,2})\b", re.IGNORECASE)


_RATIO_LEAD = re.compile(
    r"^(?:1\s*[:/]\s*\d+(?:\.\d+)?|1\s+in\s+\d+|\d+(?:\.\d+)?\s*-?\s*(?:fold|x)\b)"
    r"(?:\s+dilution)?\s+(?:in|with|into)\b",
    re.IGNORECASE,
)


def _one_liquid(label: str, lex: Lexicon) -> bool:
    """A label that is one lab liquid's name and nothing more ("Serum", "IL-6 standard")."""
    named = lex.liquid_mentions(label)
    rest = label
    for m in named:
        rest = rest[: m.start] + rest[m.end :]
    return len(named) == 1 and not re.sub(
        r"[\W_]+|\b(?:the|stock|samples?)\b", "", rest, flags=re.I
    )


def _liquid_said(text: str, lex: Lexicon) -> bool:
    """A liquid named in ``text`` that is not a plate's name ("samples" of plate samples)."""
    plates = [(m.start, m.end) for m in lex.labware_mentions(text)[0]]
    return any(not any(a <= m.start < b for a, b in plates) for m in lex.liquid_mentions(text))


def _read(
    clause: Clause, lex: Lexicon, quoted: tuple[str, ...]
) -> tuple[Frame | None, Family | None]:
    if (
        clause.label
        and (
            _PICKING.search(clause.label)
            # "Transfer 5 uL buffer: A1 to A6" names the liquid: its wells are a range
            or (_MOVES_AMOUNT.match(clause.label) and not _liquid_said(clause.label, lex))
        )
        and _WELL_TO_WELL.match(clause.text)
    ):
        # under "Cherry-pick from cmpd to assay:", "B3 to A1" is a pair, not a range
        clause = replace(clause, text=_WELL_TO_WELL.sub(r"\1 -> \2", clause.text, count=1))
    if clause.label and _SERIES_LABEL.search(clause.label) and _LEADING_X.match(clause.text):
        # "dilution series: 4x, 7 points, ...": the x after a series label is its fold
        clause = replace(clause, text=_LEADING_X.sub(r"\1-fold", clause.text, count=1))
    if clause.label and _RATIO_LEAD.match(clause.text) and _one_liquid(clause.label, lex):
        # "Serum: 1:10 in diluent (200 uL) into P D1": the label's liquid is what is diluted
        clause = replace(clause, text=f"dilute {clause.label} {clause.text}")
    if clause.label and _EACH.fullmatch(clause.text):
        clause = replace(clause, heading=True)  # "Pick from X to Y; 10 uL each; A1 to B2; ..."
    ents = extract(lex.fix_words(clause.text), lex, quoted)
    family = classify(clause, ents)
    verb = _label_verb(clause.label or "") if family is None else None
    if verb is not None:
        verbed = replace(clause, text=f"{verb} {clause.text}")  # "Read: plate_1, 600 nm"
        ents, clause = extract(lex.fix_words(verbed.text), lex, quoted), verbed
        family = classify(clause, ents)
    if family is None and clause.label and not clause.heading:
        family, ents, clause = _on_label(clause, ents, family, lex, quoted)
    if family is None and clause.heading:
        family = next(f for f in FAMILIES if f.name == "context")
    if family is None:
        frame = read(clause, ents, "?")
        frame.extra["lex"], frame.extra["quoted"] = lex, quoted
        return frame, None
    if family.name in ("dilution", "context", "chain"):
        split_blanks(ents)
    frame = _reframe(clause, ents, family, lex, quoted)
    return frame, family


def _on_label(
    clause: Clause, ents: Entities, family: Family | None, lex: Lexicon, quoted: tuple[str, ...]
) -> tuple[Family | None, Entities, Clause]:
    """A label that names the instrument its line runs on ("bioshake: elisa_P2, 5 min"): the
    line read as happening on it, when that makes it an incubation."""
    on = replace(clause, text=f"{clause.text} on {clause.label}")
    more = extract(lex.fix_words(on.text), lex, quoted)
    if len(more.instruments) > len(ents.instruments):
        found = classify(on, more)
        if found is not None and found.name == "incubate":
            return found, more, on
    return family, ents, clause


_REMOVES = re.compile(r"(?:discard|remove|aspirate|take\s+(?:off|out)|dump)\b", re.IGNORECASE)


def _reframe(
    clause: Clause, ents: Entities, family: Family, lex: Lexicon, quoted: tuple[str, ...]
) -> Frame:
    """The frame of a clause read as ``family`` (the label's liquid when it names none)."""
    frame = read(clause, ents, family.name)
    described = frame.extra.get("described")
    described = described if isinstance(described, list) else []
    if (
        (frame.liquid is None or frame.liquid in described)
        and clause.label
        and family.name != "context"
        and not _REMOVES.match(frame.text)  # "DNA std curve: ...; discard 80 uL from G1"
    ):
        # "CellTiter-Glo: add 100 uL to ...", "Add buffer for normalisation:" + items
        named = lex.liquid_mentions(clause.label)
        if named:  # under "Normalise gDNA with TE:", TE is what goes in
            frame.liquid = diluent_of(clause.label, named) or named[0]
    if family.read is not None:
        family.read(frame)
    frame.extra["lex"], frame.extra["quoted"] = lex, quoted
    return frame


_CURVE_WORDS = re.compile(r"\b(?:standard|std\.?)\s+curves?|\bserial\b|\bdilution", re.IGNORECASE)


_ALREADY = re.compile(
    r"\b(?:already|currently|still|now|at\s+the\s+moment|in\s+it|right\s+now)\b", re.IGNORECASE
)


_HOLDS = re.compile(r"\b(?:holds?|has|have|contains?|gets?|receives?)\b", re.IGNORECASE)


def _recipe_fills(
    read_in: list[tuple[Frame | None, Family | None]],
) -> list[tuple[Frame | None, Family | None]]:
    """In a dilution or standard-curve recipe, "A1 holds 200 uL standard, B1-H1 hold 100 uL
    buffer" about wells the lab says are empty means: put it there (never with "already")."""
    recipe = any(
        fam is not None and fam.name in ("dilution", "chain") for _, fam in read_in
    ) or any(f is not None and _CURVE_WORDS.search(f.clause.label or "") for f, _ in read_in)
    if not recipe:
        return read_in
    out: list[tuple[Frame | None, Family | None]] = []
    for frame, family in read_in:
        fills = _fills(frame) if frame is not None and family is not None else None
        if fills and family is not None and family.name == "context":
            out.extend(fills)
        else:
            out.append((frame, family))
    return out


def _fills(frame: Frame) -> list[tuple[Frame | None, Family | None]] | None:
    ents, text = frame.ents, frame.text
    lex = frame.extra.get("lex")
    if _ALREADY.search(text) or not _HOLDS.search(text) or not isinstance(lex, Lexicon):
        return None
    named = ents.labware[:1]
    plates = [m.name for m in named] or [
        lw.id for lw in lex.lab.labware.values() if lw.kind == "plate" and lw.rows * lw.cols > 12
    ]
    triples = []
    for i, w in enumerate(ents.wellsets):
        stop = ents.wellsets[i + 1].start if i + 1 < len(ents.wellsets) else len(text)
        q = next((q for q in ents.volumes() if w.end <= q.start < stop), None)
        m = next((m for m in ents.liquids if q is not None and q.end <= m.start < stop), None)
        if q is None or m is None:
            return None
        triples.append((w, q, m))
    if not triples or len(triples) != len(ents.volumes()):
        return None
    for name in plates:
        lw = lex.lab.labware[name]
        for w, _, _ in triples:
            try:
                names = w.expand(lw.rows, lw.cols)
            except SelectionError:
                return None
            if any(lw.wells.get(n) is not None and lw.wells[n].volume_ul > 0 for n in names):
                return None  # the lab says something is there: a fact to check
    where = f"{named[0].written or named[0].name} " if named else ""
    out: list[tuple[Frame | None, Family | None]] = []
    for k, (w, q, m) in enumerate(triples):
        said = f"add {q.text} of {m.written or m.name} to {where}{w.text}"
        again = _reread(replace(frame.clause, text=said), frame)
        if again is None or again[1].name != "transfer":
            return None
        if k:
            again[0].extra["same_clause"] = True
        out.append(again)
    return out


def _reread(clause: Clause, prev: Frame) -> tuple[Frame, Family] | None:
    lex = prev.extra.get("lex")
    if not isinstance(lex, Lexicon):
        return None
    frame, family = _read(clause, lex, prev.extra.get("quoted", ()))  # type: ignore[arg-type]
    if frame is None or family is None:
        return None
    return frame, family


def _folded(frame: Frame) -> list[Clause]:
    folded = frame.extra.get("folded")
    return list(folded) if isinstance(folded, list) else []


_ALL_IN = re.compile(
    r"^(?:and\s+)?(?:all|everything|each|both)?\s*(?:in|on|of|for|into)\s+(?:the\s+)?\S+$", re.I
)


def _trailing_plate(
    read_in: list[tuple[Frame | None, Family | None]], lex: Lexicon, norm: Normalised
) -> list[tuple[Frame | None, Family | None]]:
    """'A1 40 uL; B1 40 uL - all in dna_plate': a plate named last for the pieces before it."""
    out = list(read_in)
    for i, (frame, _) in enumerate(read_in):
        if frame is None or not _ALL_IN.match(frame.text) or len(frame.ents.labware) != 1:
            continue
        plate = frame.ents.labware[0]
        if not plate.sure or frame.ents.wellsets or frame.ents.volumes():
            continue
        for j in range(i):
            earlier = out[j][0]
            if earlier is None or earlier.clause.sentence != frame.clause.sentence:
                continue
            if earlier.ents.labware or not earlier.ents.wellsets:
                continue
            text = f"{plate.name} {earlier.clause.text}"
            again = _read(replace(earlier.clause, text=text, heading=False), lex, norm.quoted)
            if again[0] is not None and again[1] is not None:
                out[j] = again
        out[i] = (frame, next(f for f in FAMILIES if f.name == "context"))
    return out


Read = list[tuple[Frame | None, Family | None]]


# "- diluent: X", "- stock: Y": a list item's own label that says which liquid is which
_ROLE_LABEL = re.compile(
    r"^(?:diluents?|stock|top(?:\s+(?:standard|std|conc\w*))?|compound|cmpd|drug)$", re.IGNORECASE
)


def _with_role(clause: Clause) -> str:
    """The piece's text, with its label when that label says the liquid's role."""
    label = (clause.label or "").strip()
    if not _ROLE_LABEL.match(label):
        return clause.text
    # ("cmpd", "drug": the stock's role, said in a word no liquid's name can take for its own)
    role = label if re.match(r"(?:diluent|top)", label, re.IGNORECASE) else "stock"
    return f"{role} = {clause.text}"


def fold_into_previous(
    read_in: Read,
    lex: Lexicon,
    norm: Normalised,
    family: str | None,
    joins: Callable[[Frame, Family | None, Frame], bool],
    *,
    then_sep: bool = False,
    heading: bool | None = None,
    becomes: str | None = None,
    text: Callable[[Frame, Frame], str] | None = None,
) -> Read:
    """``read_in`` with each piece that ``joins`` the ``family`` clause before it read again
    together with it, as one clause (the piece is folded in the trace). A joined text that no
    longer reads as ``family`` leaves both as they were. ``then_sep``: a piece said after
    "then" is joined with ", then "; ``family`` None: a clause no family reads; ``heading``:
    the joined clause's heading flag (None:
    the head's); ``becomes``: the family the joined text must read as (None: ``family``);
    ``text``: the joined text from (head, piece) (None: the two joined with a comma)."""
    out: Read = []
    for frame, fam in read_in:
        prev = out[-1] if out else None
        if (
            frame is not None
            and prev is not None
            and prev[0] is not None
            and (prev[1].name if prev[1] is not None else None) == family
            and joins(frame, fam, prev[0])
        ):
            head = prev[0]
            sep = ", then " if then_sep and frame.clause.joined == "then" else ", "
            said = (
                text(head, frame) if text else f"{head.clause.text}{sep}{_with_role(frame.clause)}"
            )
            keep = head.clause.heading if heading is None else heading
            merged, got = _read(replace(head.clause, text=said, heading=keep), lex, norm.quoted)
            if merged is not None and got is not None and got.name == (becomes or family):
                merged.extra["folded"] = [*_folded(head), frame.clause, *_folded(frame)]
                out[-1] = (merged, got)
                continue
        out.append((frame, fam))
    return out
