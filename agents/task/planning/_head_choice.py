"""A head chosen per liquid, said after the work: "Buffer goes in first with a single channel;
the compound goes with the 8-channel, mix 3x". Each such clause sets the channels of the moves
of the liquid it names in the work before it (in a ratio dilution: the diluent's or the
stock's), and is kept in the trace as part of that work. A clause that names no liquid of that
work is left as it was (and asked about)."""

from __future__ import annotations

import re

from agents.task.planning._frames import Frame
from agents.task.planning.families import Family

_FLAGS = re.IGNORECASE
_CHOICE = re.compile(
    r"^(?:and\s+)?(?:the\s+)?(?P<who>[\w.%+-]+(?:\s+[\w.%+-]+){0,3}?)\s+"
    r"(?:goes|go|is\s+added|are\s+added|gets\s+added|is\s+pipetted|are\s+pipetted|is\s+dispensed)"
    r"(?:\s+(?:in|out))?(?:\s+(?:first|last|second|next|after))?\s*,?\s+(?:with|using|on|by)\s+"
    r"(?:the\s+|a\s+)?(?P<how>single[\s-]?channel|1[\s-]?channel|one[\s-]?channel|8[\s-]?channel|"
    r"eight[\s-]?channel|multi-?channel)\b(?:\s+(?:head|pipette))?(?P<rest>.*)$",
    _FLAGS,
)
_HOW = (
    r"(?:the\s+|a\s+)?(?P<how>single[\s-]?channel|1[\s-]?channel|one[\s-]?channel|8[\s-]?channel|"
    r"eight[\s-]?channel|multi-?channel)\b(?:\s+(?:head|pipette))?"
)
# "..., the genomic DNA with the 8-channel": a second choice with its verb left out
_GAPPED = re.compile(
    r"^\s*[,;]?\s*(?:and\s+)?(?:the\s+)?(?P<who>[\w.%+-]+(?:\s+[\w.%+-]+){0,3}?)\s+"
    rf"(?:goes\s+|go\s+)?(?:with|using|on|by)\s+{_HOW}(?P<rest>.*)$",
    _FLAGS,
)
_DILUENT_WORDS = {"buffer", "diluent", "the buffer", "the diluent", "medium", "media"}
_MIX = re.compile(r"^\s*,?\s*(?:and\s+)?mix(?:ed|ing)?\s+(\d+)\s*(?:x|times)\s*$", _FLAGS)

Read = list[tuple[Frame | None, Family | None]]


def _channels(how: str) -> int:
    return 1 if re.match(r"single|1|one", how, _FLAGS) else 8


def _names(who: str, liquid: str) -> bool:
    words = re.findall(r"[a-z0-9][\w.%+-]*", who.lower())
    own = re.findall(r"[a-z0-9][\w.%+-]*", liquid.lower())
    return bool(words) and all(w in own or w.rstrip("s") in own for w in words)


def _chosen(out: Read, who: str, n: int) -> Frame | None:
    """The latest work that moves the liquid ``who`` names, its head set to ``n`` channels."""
    for work, fam in reversed(out):
        if work is None or fam is None:
            continue
        if fam.name == "dilution" and who.lower() in _DILUENT_WORDS:
            work.extra["diluent_channels"] = n
        elif fam.name == "dilution" and any(_names(who, q.name) for q in work.liquids):
            work.extra["stock_channels"] = n
        elif fam.name == "transfer" and work.liquid is not None and _names(who, work.liquid.name):
            work.ents.channels = n
        else:
            continue
        return work
    return None


def per_liquid_heads(read_in: Read) -> Read:
    """``read_in`` with each head choice set on the work before it and folded into it."""
    out: Read = []
    chose: tuple[Frame, Frame] | None = None  # (the work, the choice folded into it)
    for frame, family in read_in:
        if (  # "...; the compound goes with the 8-channel, mix 3x": the mixing of that liquid
            chose is not None
            and frame is not None
            and family is not None
            and family.name == "mix"
            and frame.clause.sentence == chose[1].clause.sentence
            and (again := _MIX.match(frame.text))
        ):
            chose[0].ents.mix_times, chose[0].ents.mix = int(again.group(1)), True
            chose[0].extra["folded"] = [*_folded(chose[0]), frame.clause]
            chose = None
            continue
        chose = None
        m = _CHOICE.match(frame.text) if frame is not None and family is None else None
        rest = m.group("rest").strip(" .") if m else ""
        mix = _MIX.match(rest) if rest else None
        if m is None or frame is None:
            out.append((frame, family))
            continue
        second = _GAPPED.match(rest) if rest and mix is None else None
        if second is not None:
            rest = second.group("rest").strip(" .")
            mix = _MIX.match(rest) if rest else None
        if rest and mix is None:
            out.append((frame, family))
            continue
        work = _chosen(out, m.group("who").strip(), _channels(m.group("how")))
        if second is not None and work is not None:
            work = _chosen(out, second.group("who").strip(), _channels(second.group("how")))
        if work is None:
            out.append((frame, family))
            continue
        if mix is not None:
            work.ents.mix_times, work.ents.mix = int(mix.group(1)), True
        work.extra["folded"] = [*_folded(work), frame.clause]
        chose = (work, frame)
    return out


def _folded(frame: Frame) -> list[object]:
    folded = frame.extra.get("folded")
    return list(folded) if isinstance(folded, list) else []
