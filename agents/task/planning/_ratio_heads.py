"""A ratio dilution said in two pieces: the ratio and the stock first, how much and where
after ("Dilute 10X TBS-T to 1X in water, 1 mL into dil_dw A1-A4"), or the ratio as a heading
over the step that gives the volume, the place and the diluent ("10X TBS-T to 1X: 1 mL into
dil_dw A1-A4 using water"). Read apart, the second piece would be a plain transfer of the
diluent and the stock would never be added."""

from __future__ import annotations

import re

from agents.task.planning._frames import Frame
from agents.task.planning._lexicon import Lexicon
from agents.task.planning._normalise import Normalised
from agents.task.planning._reading import Read, fold_into_previous
from agents.task.planning.families import Family

# "..., 1 mL into dil_dw A1-A4", "..., 1500 uL each in tubes A1": how much and where
_SIZE_PLACE = re.compile(
    r"^[\d.]+\s*(?:uL|mL)\s+(?:(?:each|per\s+well|/\s*well|of\s+it)\s+)?(?:in|into|to|onto)\b",
    re.IGNORECASE,
)


def sized_place(frame: Frame, header: Frame) -> bool:
    """ "Dilute 10X TBS-T to 1X in water, 1 mL into dil_dw A1-A4": after a ratio dilution that
    says no volume and no destination, a piece with one volume and a place says how much of
    the dilution each well ends with and where (never a liquid of its own: that is a step)."""
    ents = frame.ents
    return (
        header.ents.fold is not None
        and header.ents.fold[1] == "ratio"
        and not header.ents.volumes()
        and len({m.name for m in header.ents.labware}) <= 1
        and len(ents.volumes()) == 1
        and not ents.liquids
        and ents.fold is None
        and bool(ents.labware or ents.wellsets)
        and bool(_SIZE_PLACE.match(frame.text))
    )


def _ratio_heading(frame: Frame, family: Family | None, head: Frame) -> bool:
    """A heading that names a stock and a ratio and nothing else ("10X TBS-T to 1X:",
    "1X TBS-T from 10X TBS-T:"), over one step that gives one volume and a place and names no
    other liquid than the diluent."""
    ents, said = frame.ents, head.ents
    stock = {m.name for m in said.liquids}
    return (
        head.clause.heading
        and said.fold is not None
        and said.fold[1] == "ratio"
        and len(stock) == 1
        and not said.volumes()
        and not said.wellsets
        and not said.labware
        and (family is None or family.name == "transfer")
        and len(ents.volumes()) == 1
        and bool(ents.labware or ents.wellsets)
        and len({m.name for m in ents.liquids} - stock) <= 1
        and ents.fold is None
    )


_PLUS = re.compile(r"\+|\band\b|\bwith\b", re.IGNORECASE)


def _parts_after(frame: Frame, family: Family | None, head: Frame) -> bool:
    """ "Make a 1:20 of the sera in A3-H3 into dil_blk A3-H3: 10 uL serum + 190 uL of PBS":
    after a ratio dilution that says no volume, the piece that gives its two parts."""
    ents = frame.ents
    vols = ents.volumes()
    return (
        head.ents.fold is not None
        and head.ents.fold[1] == "ratio"
        and not head.ents.volumes()
        and len(vols) == 2
        and not ents.labware
        and not ents.wellsets
        and ents.fold is None
        and bool(_PLUS.search(frame.text[vols[0].end : vols[1].start]))
    )


def ratio_headings(read_in: Read, lex: Lexicon, norm: Normalised) -> Read:
    """Each ratio heading read together with the one step under it, as one dilution, and each
    ratio dilution with the piece after it that gives its two parts."""
    if not any(f is not None and f.ents.fold for f, _ in read_in):
        return read_in  # cheap: most requests have no ratio
    read_in = fold_into_previous(
        read_in, lex, norm, "context", _ratio_heading, heading=False, becomes="dilution"
    )
    return fold_into_previous(read_in, lex, norm, "dilution", _parts_after, heading=False)
