"""A ratio dilution told with the volumes of its two parts: "1+100 (10 uL serum + 1000 uL
sample diluent)", "1:10, i.e. 20 uL lysate and 180 uL buffer". The volumes say what goes in
each well; the ratio only names the dilution, so they must agree with it (one part in k in
all, or one part plus k parts), else the planner asks which is meant."""

from __future__ import annotations

import re
from dataclasses import dataclass

from agents.task.planning._entities import Entities
from agents.task.planning._frames import Frame
from agents.task.planning._lexicon import Mention
from agents.task.planning._outcomes import Ask
from agents.task.planning._quantities import fmt

_GAP = re.compile(r"\s*(?:of\s+)?(?:the\s+)?$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Parts:
    """The volume of stock and of diluent per well, and the diluent's mention."""

    stock: float
    diluent: float
    diluent_said: Mention | None  # None: the parts' volumes said without their liquids


def told(ents: Entities) -> list[tuple[float, Mention]]:
    """The (volume, liquid) pairs a clause tells: "10 uL serum", "1000 uL of sample diluent"."""
    said = []
    for m in ents.liquids:
        q = next(
            (
                q
                for q in ents.quantities
                if q.kind == "volume"
                and q.end <= m.start
                and _GAP.fullmatch(ents.text[q.end : m.start])
            ),
            None,
        )
        if q is not None:
            said.append((q.value, m))
    return said


def _agrees(small: float, large: float, k: float) -> bool:
    """One part in k in all, or one part plus k parts ("1:10" said either way)."""
    total = small + large
    return any(abs(small * n - total) <= 0.01 * total for n in (k, k + 1))


def is_recipe(ents: Entities) -> bool:
    """The clause gives a ratio and the two parts that make it ("1+100 (10 uL serum + 1000 uL
    sample diluent)"): one ratio dilution, not two transfers."""
    if ents.fold is None or ents.fold[1] != "ratio":
        return False
    said = told(ents)
    if len(said) != 2 or said[0][1].name == said[1][1].name:
        return False
    small, large = sorted(v for v, _ in said)
    return _agrees(small, large, ents.fold[0])


def _stock_part(ents: Entities, said: list[tuple[float, Mention]]) -> float | None:
    """ "10 uL serum + 190 uL of PBS 1X": the other of exactly two volumes, when only the
    diluent's part names a liquid of the lab (the stock said by a word of its own)."""
    vols = ents.volumes()
    if len(said) != 1 or len(vols) != 2:
        return None
    other = [q.value for q in vols if q.value != said[0][0]]
    return other[0] if len(other) == 1 and other[0] < said[0][0] else None


def _unnamed(frame: Frame, k: float) -> Parts | None:
    """ "1:10 in EB buffer (10 uL sample + 90 uL buffer)": exactly two volumes, neither after
    a lab liquid's name, and no final volume said apart: the parts (asked about when they do
    not make the ratio)."""
    vols = sorted(q.value for q in frame.ents.volumes())
    if len(vols) != 2 or frame.final is not None or frame.total is not None:
        return None
    small, large = vols
    if not _agrees(small, large, k):
        raise Ask(
            f"{fmt(small, 'uL')} + {fmt(large, 'uL')} is not a 1:{k:g} dilution: which is right, "
            "the ratio or the volumes?",
            ["volume"],
            [f"{fmt(small, 'uL')} + {fmt(large, 'uL')}", f"1:{k:g}"],
        )
    return Parts(small, large, None)


def parts(frame: Frame, k: float) -> Parts | None:
    """The two (volume, liquid) parts the clause tells, checked against the ratio ``k``."""
    said = told(frame.ents)
    if (stock := _stock_part(frame.ents, said)) is not None:
        said = [(stock, said[0][1]), said[0]]  # (the stock's mention is not used)
    elif not said:
        return _unnamed(frame, k)
    elif len(said) != 2 or said[0][1].name == said[1][1].name:
        return None
    (small, _), (large, diluent) = sorted(said, key=lambda x: x[0])
    total = small + large
    if not _agrees(small, large, k):
        raise Ask(
            f"{fmt(small, 'uL')} + {fmt(large, 'uL')} is not a 1:{k:g} dilution: which is right, "
            "the ratio or the volumes?",
            ["volume"],
            [f"{fmt(small, 'uL')} + {fmt(large, 'uL')}", f"1:{k:g}"],
        )
    final = frame.final or frame.total
    if final is not None and abs(final.value - total) > 0.01 * total:
        raise Ask(
            f"{fmt(small, 'uL')} + {fmt(large, 'uL')} makes {fmt(total, 'uL')}, not the "
            f"{final.text} final: which is right?",
            ["volume"],
            [fmt(total, "uL"), final.text],
        )
    return Parts(small, large, diluent)
