"""A volume said after its transfer, as a clause of its own: "cmpd B3 -> assay A24, cmpd C7
-> assay B24; 1.5 uL each". The piece names no place, liquid or action, only how much; the
transfer before it names no volume. The two are read as one clause (the piece folded into it,
so the trace still shows it)."""

from __future__ import annotations

import re
from dataclasses import replace

from agents.task.planning._frames import Frame
from agents.task.planning._lexicon import Lexicon
from agents.task.planning._normalise import Normalised
from agents.task.planning._reading import _folded, _read
from agents.task.planning.families import Family

_ONLY_VOLUME = re.compile(
    r"^(?:with\s+|at\s+|using\s+)?[\d.]+\s*(?:uL|mL)\s*(?:each|per\s+(?:well|pair|pick|transfer)"
    r"|apiece|a\s+well|/\s*well)?$",
    re.IGNORECASE,
)


def _volume_only(frame: Frame | None) -> bool:
    if frame is None:
        return False
    ents = frame.ents
    return bool(
        _ONLY_VOLUME.match(frame.text.strip())
        and not ents.wellsets
        and not ents.labware
        and not ents.liquids
    )


def volume_after(
    read_in: list[tuple[Frame | None, Family | None]], lex: Lexicon, norm: Normalised
) -> list[tuple[Frame | None, Family | None]]:
    """``read_in`` with each volume-only piece joined to the transfer before it."""
    out: list[tuple[Frame | None, Family | None]] = []
    for frame, family in read_in:
        prev = out[-1] if out else None
        if (
            prev is not None
            and prev[0] is not None
            and prev[1] is not None
            and prev[1].name == "transfer"
            and not prev[0].ents.volumes()
            and _volume_only(frame)
        ):
            assert frame is not None
            head = prev[0]
            joined = replace(head.clause, text=f"{head.clause.text}, {frame.clause.text}")
            merged, fam = _read(joined, lex, norm.quoted)
            if merged is not None and fam is not None and fam.name == "transfer":
                merged.extra["folded"] = [*_folded(head), frame.clause]
                out[-1] = (merged, fam)
                continue
        out.append((frame, family))
    return out
