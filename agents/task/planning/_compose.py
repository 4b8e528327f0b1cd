"""Stage 5 of the rule planner: compose the frames of a request into the actions to plan.

A clause that only says "and mix" joins the transfer before it; a serial-dilution sentence whose
steps are spelled out names the chain for them; "then 72 C for 5 min" and "then hold at 4 C"
belong to the profile before; "do the same for row B" repeats the clause before on new wells;
"continue to A8" carries a transfer on as a chain; a verbless item under a heading or label
is the action the heading says; wells are filled before a chain carries liquid along them.
"""

from __future__ import annotations

import re
from dataclasses import replace

from agents.task.planning._again import _again, _again_before, repeats
from agents.task.planning._frames import Frame, read
from agents.task.planning._lexicon import Lexicon
from agents.task.planning._mix_joins import fold_mix, mixes_step_before
from agents.task.planning._not_understood import NOT_UNDERSTOOD
from agents.task.planning._reading import (
    _folded,
    _names_place,
    _names_plate,
    _reframe,
    _reread,
)
from agents.task.planning._refill import _fresh_in
from agents.task.planning._scaled import scaled_volume
from agents.task.planning._step_joins import last_well_into_series, step_into_series
from agents.task.planning._wellsets import SelectionError
from agents.task.planning.families import FAMILIES, Family
from agents.task.planning.families import thermocycle as thermo
from agents.task.planning.families._dilution_words import carried_by_steps
from agents.task.planning.families._exchange import takes_the_wash_out
from agents.task.planning.families._series_end import said_discards

_NORMALISING = re.compile(r"\bnormali[sz](?:e|ation|ing)\b", re.IGNORECASE)


_ADDING = re.compile(
    r"\bnormali[sz](?:e|ation|ing)\b|^(?:add|dispense|put|pipette|fill|top)\b|\bvolumes?\b"
    r"|\badditions?\b|\bamounts?\b|\bto\s+add\b|\bdilut\w*\s+(?:\([^)]*\)\s+)?into\b",
    re.IGNORECASE,
)


def _compose(read_in: list[tuple[Frame | None, Family | None]]) -> list[tuple[Frame, Family]]:
    """Join "..., and mix (3 times)" to the transfer it follows; a serial-dilution sentence
    whose steps are spelled out names the chain for them; keep the rest in order."""
    out: list[tuple[Frame, Family]] = []
    read_in = last_well_into_series(read_in)  # "..., leave the last well as is"
    names = [fam.name if fam else "" for _, fam in read_in]
    headers = [
        f for f, fam in read_in if fam is not None and fam.name == "dilution" and f is not None
    ]
    spelled = "chain" in names or any(  # "A1 into B1, mix, B1 into C1, and so on to G1"
        f is not None and _CONTINUE.match(f.text) for f, _ in read_in
    )
    for header in headers:
        if header is not headers[-1] and not (header.ents.fold or header.ents.wellsets):
            header.extra["defer"] = not header.ents.volumes()  # "std curve on X: <the steps>"
        if header.ents.fold is not None and step_into_series(read_in, header):
            continue  # "3-fold ... across P row A. Transfer 45 uL": the series' own step
        if spelled:
            header.extra["defer"] = True
            for f, fam in read_in:
                if fam is not None and fam.name == "chain" and f is not None:
                    f.extra.setdefault("header", header)
        elif "transfer" in names and carried_by_steps(header.ents):
            placeless = [
                i
                for i, (f, fam) in enumerate(read_in)
                if fam is not None and fam.name == "transfer" and f is not None and not f.places
            ]
            if placeless:  # "..., transfer 150 uL": the carrying steps of the dilution
                chain = next(f for f in FAMILIES if f.name == "chain")
                i = placeless[0]
                frame_i = read_in[i][0]
                assert frame_i is not None
                carried = read(frame_i.clause, frame_i.ents, "chain")
                carried.extra["header"] = header
                read_in[i] = (carried, chain)
                header.extra["defer"] = True
            else:
                header.extra["chain_only"] = True
        elif "transfer" in names and header.ents.fold is None and len(header.ents.volumes()) == 1:
            header.extra["chain_only"] = True  # "..., serial dilution ... with 100 uL transfers"
    if any(f.extra.get("chain_only") for f in headers):
        # The carrying steps come after the wells are filled (with the mixing said after them).
        read_in = _after_fills(_mix_into_chain(read_in))
    for frame, family in read_in:
        assert frame is not None
        prev = out[-1] if out else None
        said_before = (prev[0].text if prev is not None and prev[0].clause.heading else "") + (
            " " + frame.clause.label if frame.clause.label else ""
        )
        if (
            family is None
            and said_before
            and frame.ents.volumes()
            and (
                (_ADDING.search(said_before) and (frame.ents.wellsets or frame.ents.labware))
                or (prev is not None and prev[0].clause.heading and _names_place(prev[0]))
                or (frame.ents.liquids and _names_plate(frame))  # "elisa_a: 100 uL TMB ..."
                or (  # "Controls (buffer only): plate_1 G1-G3, 100 uL": the label's liquid
                    frame.clause.label
                    and (frame.ents.wellsets or frame.ents.labware)
                    and isinstance(lex := frame.extra.get("lex"), Lexicon)
                    and len(lex.liquid_mentions(frame.clause.label)) == 1
                )
            )
        ):  # "Normalise libs with EB: A1 10 uL, B1 12 uL", "plate_a row A - 100 uL PBS"
            family = next(f for f in FAMILIES if f.name == "transfer")  # "- dna_plate A1 10 uL"
            frame = _reframe(
                frame.clause,
                frame.ents,
                family,
                frame.extra["lex"],  # type: ignore[arg-type]
                frame.extra["quoted"],  # type: ignore[arg-type]
            )
        if (
            prev is not None
            and prev[1].name == "transfer"
            and (cont := _CONTINUE.match(frame.text))
            and (chained := _continue_chain(prev[0], cont.group(1) or cont.group(2)))
        ):
            out[-1] = chained  # "transfer 100 uL from A1 to A2, mix, and continue to A8"
            out[-1][0].extra["folded"] = [*_folded(prev[0]), frame.clause]
            continue
        if prev is not None and repeats(frame, out) and (again := _again(frame, prev[0])):
            out.extend(_again_before(frame, out))  # "100 uL out, 100 uL in. Same for row B."
            frame, family = again  # "..., then do the same for row B"
        if (
            prev is not None
            and prev[0].volume is not None
            and frame.volume is None
            and (scaled := scaled_volume(frame.text, prev[0].volume.value))
            and (again := _reread(replace(frame.clause, text=scaled), prev[0]))
        ):  # "..., then refill with the same volume of medium", "twice that volume of dye"
            frame, family = again
        if (
            prev is not None
            and prev[1].name == "volumes"
            and not frame.ents.liquids
            and (fresh := _fresh_in(frame, prev[0]))
        ):
            frame, family = fresh  # "120 uL out, 120 uL fresh in": the lab's medium, same wells
        if family is None and prev is not None and _continues(frame, prev[1]):
            family = prev[1]  # "..., then plate_2 to hotel 3": the verb before carries on
            frame = _reframe(
                frame.clause,
                frame.ents,
                family,
                frame.extra["lex"],  # type: ignore[arg-type]
                frame.extra["quoted"],  # type: ignore[arg-type]
            )  # "Water: 5 uL/well, same wells": the label's liquid
            if frame.clause.sentence == prev[0].clause.sentence:  # and the head said with it
                frame.ents.channels = frame.ents.channels or prev[0].ents.channels
        elif (
            family is None
            and prev is not None
            and (_A_PLACE.match(frame.text) or _to_instrument(frame))
        ):
            family = next(f for f in FAMILIES if f.name == "move")  # "... then hotel 1"
            frame = read(frame.clause, frame.ents, family.name)
        if (
            prev is not None
            and prev[1].name == "move"
            and any(kind == "thermocycler" for kind, *_ in prev[0].ents.instruments)
            and thermo.is_hold(thermo.part_text(frame.clause))
        ):  # "load rt_plt in the cycler and hold it at 4 C": the block holds it
            family = thermo.FAMILY
            frame = read(frame.clause, frame.ents, family.name)
        if (
            prev is not None
            and prev[1].name == "thermocycle"
            and (
                thermo.is_hold(thermo.part_text(frame.clause))
                or (thermo.HOLD.match(thermo.part_text(frame.clause)) and frame.duration is None)
            )
        ):
            if (held := prev[0].extra.get("hold")) is not None:  # "4 C, hold": both said it
                more = prev[0].extra.get("continued")
                prev[0].extra["continued"] = [*(more if isinstance(more, list) else []), held]
            prev[0].extra["hold"] = frame.clause  # "..., then hold at 4 C"
            prev[0].extra["folded"] = [*_folded(prev[0]), frame.clause]
            continue
        if (
            prev is not None
            and prev[1].name == "thermocycle"
            and thermo.continues(frame, prev[0])
            and not thermo.is_hold(thermo.part_text(frame.clause))
        ):  # "..., then 72 C for 7 min": more of the profile
            more = prev[0].extra.get("continued")
            prev[0].extra["continued"] = [*(more if isinstance(more, list) else []), frame.clause]
            prev[0].extra["folded"] = [*_folded(prev[0]), frame.clause]
            continue
        while (
            family is not None
            and family.name == "thermocycle"
            and out
            and thermo.part_before(out[-1][0], out[-1][1].name, frame)
        ):  # "rxn_plate: 99 C 30 s, then 35 cycles of ...": the first part of the profile
            before = out.pop()[0]
            frame.extra["preceding"] = [before.clause, *_preceding(frame)]
            frame.extra["folded"] = [before.clause, *_folded(frame)]
        if family is None:
            out.append((frame, NOT_UNDERSTOOD))
            continue
        if prev is not None and mixes_step_before(prev, frame, family):
            fold_mix(prev[0], frame)  # "...; 100 uL final; mix 5x", "top up ... and mix"
            continue
        if (
            prev
            and prev[1].name == family.name == "volumes"
            and takes_the_wash_out(*prev[:1], frame)
        ):
            prev[0].extra["folded"] = [*_folded(prev[0]), frame.clause]  # the wash's own "out"
            continue
        out.append((frame, family))
    return said_discards(_fills_first(out))  # "... 100 uL final. Discard ... last well": once


def _mix_into_chain(
    read_in: list[tuple[Frame | None, Family | None]],
) -> list[tuple[Frame | None, Family | None]]:
    out: list[tuple[Frame | None, Family | None]] = []
    for frame, family in read_in:
        prev = out[-1][0] if out else None
        if (
            prev is not None
            and prev.extra.get("chain_only")
            and frame is not None
            and family is not None
            and family.name == "mix"
            and not frame.places
        ):
            fold_mix(prev, frame)  # "..., serial dilution ... with 100 uL transfers, mix 3x"
            continue
        out.append((frame, family))
    return out


def _after_fills(
    read_in: list[tuple[Frame | None, Family | None]],
) -> list[tuple[Frame | None, Family | None]]:
    """Each serial-dilution sentence that only carries liquid moved after the fills said right
    after it ("2-fold dilution ..., 100 uL buffer into A2-A12, 200 uL dye into A1"), never
    after what comes later ("..., then discard 100 uL from column 10": that stays after)."""
    out = list(read_in)
    for item in [x for x in read_in if x[0] is not None and x[0].extra.get("chain_only")]:
        i = out.index(item)
        j = i
        while j + 1 < len(out) and (fam := out[j + 1][1]) is not None and fam.name == "transfer":
            j += 1
        out.insert(j, out.pop(i))
    return out


def _wells_named(frame: Frame) -> set[str]:
    found: set[str] = set()
    for w in frame.ents.wellsets:
        try:
            found.update(w.expand(16, 24))
        except SelectionError:
            continue
    return found


def _fills_first(out: list[tuple[Frame, Family]]) -> list[tuple[Frame, Family]]:
    """ "C1 -> C2 -> C3 (100 uL steps); C2-C4 pre-filled with 100 uL diluent; C1 gets 200 uL
    stock": the wells are filled before the chain carries liquid along them."""
    for i, (frame, family) in enumerate(out):
        if family.name != "chain":
            continue
        chain = _wells_named(frame)
        later = [
            j
            for j in range(i + 1, len(out))
            if out[j][1].name == "transfer" and _wells_named(out[j][0]) & chain
        ]
        if later and all(j == i + 1 + k for k, j in enumerate(later)):
            moved = [out[j] for j in later]
            rest = [x for k, x in enumerate(out) if k not in later]
            return rest[:i] + moved + rest[i:]
    return out


_CONTINUE = re.compile(
    r"^(?:and\s+)?(?:then\s+)?(?:continue|carry\s+on|keep\s+going|proceed|go\s+on|repeat|so\s+on"
    r"|etc\.?|on(?=\s+(?:down|across|along)\s))"
    r"(?:\s+(?:the\s+same|like\s+that|this\s+way|down|across|along|(?:down|across|along)\s+the\s+(?:row|column)))*"
    r"\s+(?:to|until|through|up\s+to|as\s+far\s+as)\s+(?:well\s+)?([A-Pa-p]\d{1,2})\b"
    # "..., then B1 to C1 and so on down to G1": the next step written out, then the rest
    r"|^(?:and\s+)?(?:then\s+)?(?:from\s+)?[A-Pa-p]\d{1,2}\s+(?:to|into|->)\s+[A-Pa-p]\d{1,2}\s*,?\s*"
    r"(?:and\s+)?(?:so\s+on|etc\.?|on(?=\s+(?:down|across|along))|onwards?)\s+"
    r"(?:(?:down|across|along)\s+)?(?:to|until|through)\s+"
    r"([A-Pa-p]\d{1,2})\b",
    re.IGNORECASE,
)


def _continue_chain(prev: Frame, end: str) -> tuple[Frame, Family] | None:
    """The transfer before, carried on well by well to ``end``: a dilution chain."""
    clause = replace(prev.clause, text=f"{prev.clause.text} and so on to {end.upper()}")
    again = _reread(clause, prev)
    if again is None or again[1].name != "chain":
        return None
    again[0].extra["folded"] = _folded(prev)
    return again


_A_PLACE = re.compile(
    r"^(?:(?:finally|lastly)\s+)?(?:(?:back|over|across)\s+)?(?:(?:in)?to|in|on|onto|->)\s+"
    r"(?:the\s+|its\s+)?(?:hotel(?:\s+(?:slot\s+)?\d+)?|deck|home"
    r"|(?:original\s+)?(?:slot|spot|position)"
    r"|(?:(?:plate\s+)?reader|(?:heater[\s-]?)?shaker|(?:thermo)?cycler)"
    r"(?:(?:'s)?\s+(?:drawer|holder|block|nest))?)$|^back\s+home$|^(?:the\s+)?hotel\s+#?\d+$",
    re.I,
)  # "..., then back to the deck", "then to the reader": a move of the plate before


_TO_WHERE = re.compile(
    r"^(?:(?:back|over|across)\s+)?(?:(?:in)?to|onto|on|in|->)\s+(?:the\s+)?", re.I
)


def _to_instrument(frame: Frame) -> bool:
    """'..., then onto tc1': only a place, an instrument the lab names by its id."""
    to = _TO_WHERE.match(frame.text)
    return to is not None and any(
        iid and start == to.end() and end >= len(frame.text.rstrip(" .")) - 1
        for kind, iid, start, end in frame.ents.instruments
        if kind in ("plate_reader", "heater_shaker", "thermocycler")
    )


def _continues(frame: Frame, family: Family) -> bool:
    """A clause with no verb of its own that carries on the action before it."""
    ents = frame.ents
    if family.name in ("chain", "volumes") and ents.liquids:
        return False  # a liquid of its own: not more of the same removal or carrying
    if family.name == "volumes" and re.search(r"\b(?:in|back|added)\W*$", frame.text):
        return False  # "1.5 mL in" after "1.5 mL out" adds: never a second removal
    if family.name in ("transfer", "chain", "volumes"):
        return bool(ents.volumes() or ents.wellsets)
    if family.name in ("move", "read", "incubate", "mix"):
        if ents.liquids and ents.volumes():
            return False  # "then 50 uL stop solution": a liquid added, not more incubation
        return bool(ents.labware or ents.wellsets or ents.quantities)
    return False


def _preceding(frame: Frame) -> list[object]:
    more = frame.extra.get("preceding")
    return more if isinstance(more, list) else []
