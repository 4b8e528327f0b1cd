"""The embedded rule planner: lab English -> a plan, a question or a refusal.

Offline and deterministic, a pipeline whose stages are tested on their own:

1. :mod:`._normalise` — one spelling; quoted names held aside;
2. :mod:`._clauses` — sentences, list items, "then", semicolons, commas that start an action;
3. :mod:`._entities` — quantities (pint), well sets, lab names (rapidfuzz), counts, tips, channels;
4. :mod:`._frames` — one semantic frame per clause, its family chosen by :mod:`.families`;
5. compose — a clause that only says "and mix" joins the transfer before it; facts are checked
   against the lab state; settings ("use the 8-channel") apply to what follows;
6. the family builders plan steps on :class:`._world.World`, which tracks plates, wells and
   tips as the plan goes and inserts the plate moves between instruments.

It never guesses: a builder raises ``Ask`` (-> :class:`Clarification`) or ``Refuse``
(-> :class:`Refusal`), and the first one raised ends planning. The plan carries its "understood
as" trace (clause -> steps), and :mod:`._coverage` refuses to hand over a plan that drops a
clause. Every step is checked against the instruments' policy rules the lab view carries.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from agents.task.planning import _choices as choices
from agents.task.planning import _coverage, _gaps, _limits_first, _policy
from agents.task.planning import _entity_coverage as entities
from agents.task.planning import _examples as examples
from agents.task.planning import _kept_empty as kept_empty
from agents.task.planning import _not_lab as not_lab
from agents.task.planning import _own_ids as own_ids
from agents.task.planning import _pipetting as pip
from agents.task.planning import _pool_spread as pool_spread
from agents.task.planning import _recipes as recipes
from agents.task.planning import _resolve as r
from agents.task.planning import _thinned as thinned
from agents.task.planning import _unhonoured as unhonoured
from agents.task.planning._clauses import Clause, split
from agents.task.planning._compose import _compose
from agents.task.planning._dest_after import dest_after
from agents.task.planning._dests_first import copy_carried, copy_details, dests_first
from agents.task.planning._fragments import (
    concentration_lists,
    optics_after,
    place_after,
    volume_after,
)
from agents.task.planning._frames import Frame
from agents.task.planning._head_choice import per_liquid_heads
from agents.task.planning._headings import _TAKES, _fill, _heading, announced, check_used
from agents.task.planning._lexicon import Lexicon
from agents.task.planning._liquid_pairs import split_pairs
from agents.task.planning._liquid_wells import liquid_wells
from agents.task.planning._list_heads import pairs_under_heading
from agents.task.planning._normalise import normalise
from agents.task.planning._not_understood import EXAMPLES
from agents.task.planning._order import said_first
from agents.task.planning._outcomes import Ask, Refuse
from agents.task.planning._pieces import _merge_fragments
from agents.task.planning._reading import (
    _folded,
    _lead_ins,
    _read,
    _recipe_fills,
    _trailing_plate,
)
from agents.task.planning._refill import refills
from agents.task.planning._resolve import Planning
from agents.task.planning._settings import shared_settings
from agents.task.planning._shared_volume import shared_volume
from agents.task.planning._source_leads import source_leads
from agents.task.planning._titles import INVENTORY, titles
from agents.task.planning._trailing import first_item_plates, trailing_plates
from agents.task.planning._wellsets import SelectionError
from agents.task.planning._world import World
from agents.task.planning.families import FAMILIES, Family, dilution, transfer
from agents.task.planning.families import read as reading
from agents.task.planning.families import thermocycle as thermo
from agents.task.planning.families.context import leaves_alone
from agents.task.planning.models import (
    Clarification,
    LabView,
    Plan,
    Refusal,
    TraceItem,
    TraceKind,
)
from agents.task.planning.replan import replan_rest

_PART = "part of the clause before: "
_INTO_LABEL = re.compile(r"\b(?:to|into|onto)\s+(?:the\s+)?$", re.IGNORECASE)
_FROM_LABEL = re.compile(r"\b(?:from|out\s+of)\s+(?:the\s+)?$", re.IGNORECASE)


class RulePlanner:
    """Plans lab English on the embedded rules; no model, no network."""

    def plan(self, request: str, lab: LabView) -> Plan | Clarification | Refusal:
        """Turn ``request`` into a plan for ``lab``, a question, or a refusal."""
        lex = Lexicon(lab)
        request, shown = examples.lift(request)  # "(A1 goes to A3 and A4, and so on)"
        norm = normalise(request)
        norm = replace(norm, text=said_first(norm.text))  # "Before anything else, ...": first
        norm, tables = recipes.rewrite(norm, lex)
        said = split(norm, frozenset(lex.labware))
        clauses = own_ids.in_clauses(said, lab)
        clauses = pairs_under_heading(clauses, frozenset(lex.labware))  # "- P B2 to A9"
        p = Planning(World(lab), lex)
        trace: list[TraceItem] = []
        clause: Clause | None = None
        read_in: list[tuple[Frame | None, Family | None]] = []
        composed: list[tuple[Frame, Family]] | None = None
        try:
            if not clauses:
                raise Refuse("the request is empty: there is nothing to do", "nothing_to_do")
            read_in = _lead_ins([_read(c, lex, norm.quoted) for c in clauses], lex, norm)
            read_in = source_leads(read_in, lex, norm)  # "Using the dye, add 20 uL to ..."
            read_in = _merge_fragments(read_in, lex, norm)
            read_in = copy_details(read_in, lex, norm)  # "Copy X? 15 uL into Y."
            read_in = copy_carried(read_in, lex, norm)  # "...; then X -> Z, 10 uL"
            read_in = refills(read_in, lex, norm)
            read_in = concentration_lists(read_in, lex, norm)
            read_in = volume_after(read_in, lex, norm)
            read_in = place_after(read_in, lex, norm)  # "dispense 50 uL X; plate_2 column 1"
            read_in = dest_after(read_in, lex, norm)  # "Stamp X, 5 uL. Destination: Y."
            read_in = volume_after(read_in, lex, norm)  # "Copy X. Destination: Y. 10 uL."
            read_in = optics_after(read_in, lex, norm)  # "Read X. Ex 485, em 520."
            read_in = split_pairs(read_in, lex, norm)
            read_in = per_liquid_heads(read_in)  # "the compound goes with the 8-channel"
            read_in = _recipe_fills(read_in)
            read_in = _trailing_plate(read_in, lex, norm)
            read_in = trailing_plates(read_in, lex, norm)
            read_in = first_item_plates(read_in, lex, norm)  # "P A1 -> A12; B1 -> B12"
            read_in = liquid_wells(read_in, p.world)  # "lysate A3": the lysate's plate
            titles(read_in)  # "qPCR run", "I'm new to the robot so bear with me"
            thermo.programme_runs(read_in, {i.kind for i in lab.instruments.values()})
            announced(read_in)
            shared_volume(read_in)
            shared_settings(read_in)
            dests_first(read_in)  # "Onto X and Y: stamp every well of Z"
            p.named = list(  # (where a reagents list says things sit is no plate to work on)
                dict.fromkeys(
                    m.name
                    for f, fam in read_in
                    if f and fam is not INVENTORY
                    for m in f.ents.labware
                    if m.sure
                )
            )
            left = {f.clause.sentence for f, _ in read_in if f and leaves_alone(f.text)}
            p.blanks = [  # "..., leave both alone for now": those blanks stay as they are
                b for f, _ in read_in if f and f.clause.sentence not in left for b in f.ents.blanks
            ]
            not_lab.check(request, read_in, norm.text)
            composed = _compose(read_in)  # a hold after a profile is the thermocycler's
            _instruments_first(composed, p)
            waiting: list[int] = []  # trace items whose moves are pending (same tip onwards)
            read_as: list[tuple[Frame, int]] = []  # each frame and its trace item
            for frame, family in composed:
                clause = frame.clause
                if family.name != "transfer":
                    transfer.flush(p)
                if frame.clause.label:
                    named = lex.labware_mentions(frame.clause.label)[0]
                    own = {m.name for m in frame.ents.labware}
                    if (
                        len(named) == 1
                        and named[0].sure
                        and not own
                        and not p.head_dest
                        and not _FROM_LABEL.search(frame.clause.label[: named[0].start])
                    ):  # (never the plate a "Pick from X:" label takes from)
                        p.plate = named[0].name  # "Normalise libs: add EB to A1 ..."
                    elif (
                        len(named) == 1
                        and named[0].sure
                        and _INTO_LABEL.search(frame.clause.label[: named[0].start])
                    ):  # "cherry-pick to daughter: cmpd A2 5 uL -> D1": the wells are daughter's
                        p.plate = p.head_dest = named[0].name
                    elif (
                        len(named) == 1
                        and named[0].sure
                        and named[0].name not in own
                        and _TAKES.match(frame.clause.label)
                    ):
                        p.head_source = named[0].name  # "Re-array libs: A1->B1 ... into quant"
                first = len(p.world.steps)
                if frame.ents.no_rack:
                    raise Refuse(pip.no_such_tips(frame.ents.no_rack, p.world), "tips")
                if frame.ents.rack and family.name == "context":
                    p.rack = frame.ents.rack  # "Use tips_50." for what follows
                p.world.preferred = frame.ents.rack or p.rack
                if (
                    frame.clause.heading
                    and (
                        family.name not in ("dilution", "chain")
                        or (family.name == "dilution" and dilution.plain_heading(frame))
                    )
                    and not (family.name == "thermocycle" and thermo.has_programme(frame))
                ):  # a programme's heading with its parts under it is the programme
                    understood = _heading(frame, p)
                    p.head_sentence, p.head_inline = frame.clause.sentence, False
                else:
                    p.head_inline = p.head_inline or frame.clause.sentence == p.head_sentence
                    understood = family.build(frame, p)
                if p.fill is not None and p.fill.trace_at < 0:
                    p.fill.trace_at = len(trace)
                steps = [s.id for s in p.world.steps[first:] if s.id not in p.flushed]
                _settle(trace, waiting, p)
                if family.name == "transfer" and p.pending:
                    waiting.append(len(trace))
                    frame.extra["kind"] = "action"
                kind = "action" if waiting and waiting[-1] == len(trace) else _kind(frame, steps)
                read_as.append((frame, len(trace)))
                trace.append(
                    TraceItem(
                        clause=frame.clause.said, kind=kind, understood=understood, steps=steps
                    )
                )
                main = len(trace) - 1
                for folded in _folded(frame):
                    if main in waiting:
                        waiting.append(len(trace))  # its steps come with the main clause's
                    trace.append(
                        TraceItem(
                            clause=folded.said,
                            understood=_PART + understood,
                            steps=steps,
                        )
                    )
            transfer.flush(p)
            _settle(trace, waiting, p)
            _fill(p, trace)
            recipes.trace_rows(trace, tables, request, lab.labware)
            by_id = {s.id: s for s in p.world.steps}
            check_used(read_as, trace, by_id)  # "5 uL of each X - ...": no heading left empty
            for frame, at in read_as:
                clause = frame.clause
                entities.check(frame, trace[at], [by_id[i] for i in trace[at].steps], p.world)
                pool_spread.check(frame.text, [by_id[i] for i in trace[at].steps])
            if not p.world.steps:
                raise Refuse(
                    "nothing to do: " + "; ".join(t.understood for t in trace), "nothing_to_do"
                )
            examples.check(shown, p.world.steps)
            _policy.check(p.world.steps, lab)
            unhonoured.check(norm.text)  # "aspirate slowly", "blow out": asked, never dropped
            kept_empty.check(norm.text, p.world.steps)  # "add to A1 and keep A1 empty"
            thinned.check(norm.text, (s for f, _ in read_as for s in f.ents.wellsets))
        except Ask as ask:
            try:  # a value beyond every candidate's limit: no answer makes it possible
                # (the clauses as composed: "rxn: 98 C 30 s; then ..." is the cycler's part)
                _limits_first.check((f for f, _ in composed or read_in), p)
            except Refuse as refuse:
                return Refusal(request=request, reason=refuse.reason, code=refuse.code)
            said_how = unhonoured.asked(norm.text)  # before other gaps: it names the setting
            if said_how is not None:
                return Clarification(
                    request=request,
                    question=said_how.question,
                    missing=said_how.missing,
                    options=said_how.options,
                )
            fault = [
                f for f, _ in read_in if f is not None and clause is not None and f.clause is clause
            ]
            ask = _gaps.widen(ask, fault[0] if fault else None, p)  # every gap of the clause
            prefix = f"In '{clause.said}': " if clause is not None and len(clauses) > 1 else ""
            return Clarification(
                request=request,
                question=prefix + ask.question,
                missing=ask.missing,
                options=ask.options,
            )
        except Refuse as refuse:
            return Refusal(request=request, reason=refuse.reason, code=refuse.code)
        except SelectionError as exc:
            return Refusal(request=request, reason=str(exc), code="plate_size")
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
            # A reading the builders did not foresee: say so, never guess, never a traceback.
            where = f" '{clause.said}'" if clause is not None else ""
            return Clarification(
                request=request,
                question=f"I could not plan{where} ({type(exc).__name__}: {exc}). Could you "
                "rephrase it like one of these?",
                missing=["action"],
                options=EXAMPLES,
            )
        policies = [str(f) for f in dict.fromkeys(p.policies_used)] or []
        plan = Plan(
            request=request,
            summary=_summary(trace, p),
            steps=p.world.steps,
            trace=trace,
            tip_policy="; ".join(policies),
        )
        # split once, unless recipe tables were rewritten: then the request itself is the measure
        gaps = _coverage.problems(
            plan, lab.labware, expected=None if tables else [c.said for c in said]
        )
        if gaps:
            return Refusal(
                request=request,
                reason="the plan would leave out part of the request: " + "; ".join(gaps),
                code="unsafe",
            )
        return plan

    def replan(
        self, request: str, lab: LabView, previous: Plan, errors: list[str]
    ) -> Plan | Refusal:
        """The remaining steps ``previous`` replanned on ``lab`` as the instruments report it
        now (after a deviation): see :func:`agents.task.planning.replan.replan_rest`."""
        return replan_rest(request, lab, previous, errors)


def _instruments_first(read_in: Sequence[tuple[Frame | None, Family | None]], p: Planning) -> None:
    """A request that needs an instrument the lab lacks is refused for that, whatever else
    it asks ("RT step at 50 C, then 40 cycles of 95 C / 60 C": there is no thermocycler)."""
    for frame, family in read_in:
        if frame is not None and family is not None and family.name == "thermocycle":
            thermo.require(frame, p)  # "a melt curve 65-95 C": refused before any range is asked
        if frame is not None and family is not None and family.name == "read":
            reading.require(frame)  # "an absorbance spectrum 400-700 nm": likewise
        if frame is not None and family is not None and family.name != "context":
            _named_instruments(frame, p)
            choices.check(frame)  # "10-20 uL", "dye or buffer": asked, never picked
        needs = {"read": "plate_reader", "incubate": "heater_shaker"}
        if frame is not None and family is not None and family.name in needs:
            kind = needs[family.name]
            if not p.world.lab.of_kind(kind) and not (
                kind == "heater_shaker" and p.world.lab.of_kind("incubator")
            ):
                r.instrument(kind, p, frame)  # refuses: the lab has none


_NOT_THIS = re.compile(  # "on the shaker instead of the incubator", "the cycler as an incubator"
    r"\b(?:instead\s+of|rather\s+than|not|no|without|as|like)\s+(?:the\s+|an?\s+)?$",
    re.IGNORECASE,
)


def _named_instruments(frame: Frame, p: Planning) -> None:
    """An instrument named by its kind ("in the incubator", "on the magnet") that the lab does
    not have is refused, naming what it has: another instrument is never put in its place
    (an incubator is not a heater-shaker)."""
    taken = [(m.start, m.end) for m in frame.ents.liquids + frame.ents.labware]
    for kind, iid, start, end in frame.ents.instruments:
        if iid or p.world.lab.of_kind(kind) or any(a < end and start < b for a, b in taken):
            continue
        if _NOT_THIS.search(frame.text[:start]):
            continue  # another instrument stands in for it, or it is not wanted
        raise Refuse(r.lacks(kind, p.world), "missing_instrument")


def _settle(trace: list[TraceItem], waiting: list[int], p: Planning) -> None:
    """Give the steps a flush emitted to the clauses that were waiting for them."""
    if not p.flushed:
        return
    for i in waiting:
        trace[i] = trace[i].model_copy(update={"steps": [*trace[i].steps, *p.flushed]})
    waiting.clear()
    p.flushed = []


def _kind(frame: Frame, steps: list[str]) -> TraceKind:
    """What the trace calls a clause: an action that planned nothing is a fact said so."""
    kind = frame.extra.get("kind", "action")
    if kind == "action" and not steps:
        return "fact"
    if kind in ("fact", "setting", "pleasantry", "not_done"):
        return kind  # type: ignore[return-value]
    return "action"


def _summary(trace: list[TraceItem], p: Planning) -> str:
    actions = "; then ".join(
        t.understood for t in trace if t.kind == "action" and not t.understood.startswith(_PART)
    )
    counts = ", ".join(
        f"{n} {word}{'' if n == 1 else 's'}"
        for n, word in (
            (len(p.world.steps), "step"),
            (p.world.moves, "plate move"),
            (p.world.tips_used, "tip"),
        )
    )
    left = "; ".join(f"'{t.clause}'" for t in trace if t.kind == "not_done")
    return f"{actions} ({counts})" + (f"; NOT DONE: {left}" if left else "")


__all__ = ["FAMILIES", "RulePlanner", "pip"]
