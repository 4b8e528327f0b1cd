"""The embedded rule planner: controlled lab English -> a plan, a question or a refusal.

Offline and deterministic. A request is split into clauses at "then"; each clause is read by
:mod:`._grammar` into an intent, and a family builder turns the intent into device steps on a
:class:`._world.World` that tracks plates, wells and tips as the plan goes, inserting the
plate moves between instruments. It never guesses a number or a place that neither the request
nor the lab state gives: a builder raises ``Ask`` (-> :class:`Clarification`) or ``Refuse``
(-> :class:`Refusal`), and the first one raised ends planning.

Families: transfer / add a named liquid, serial dilution, mix, incubate / shake, read
(absorbance, fluorescence, luminescence), move a plate, thermocycle (a profile of stages and
cycles on a thermocycler, then a hold).
"""

from __future__ import annotations

from agents.task.planning import _grammar as g
from agents.task.planning import _instruments, _liquid, _thermocycle
from agents.task.planning._outcomes import Ask, Refuse
from agents.task.planning._resolve import Context
from agents.task.planning._world import World
from agents.task.planning.models import Clarification, LabView, Plan, Refusal
from agents.task.planning.replan import replan_rest


class RulePlanner:
    """Plans controlled lab English on the embedded rules; no model, no network."""

    def plan(self, request: str, lab: LabView) -> Plan | Clarification | Refusal:
        """Turn ``request`` into a plan for ``lab``, a question, or a refusal."""
        lex = g.Lexicon(lab)
        clauses = _thermocycle.merge(g.split(lex.normalize(request)))
        world, ctx, done = World(lab), Context(), []
        clause = ""
        try:
            if not clauses:
                raise _not_understood(request)
            for clause in clauses:
                done.append(_build(clause, world, ctx, lex))
            if not world.steps:
                raise Refuse(f"nothing to do: {'; '.join(done)} is already the case")
        except Ask as ask:
            question = ask.question if len(clauses) < 2 else f"In '{clause}': {ask.question}"
            return Clarification(
                request=request, question=question, missing=ask.missing, options=ask.options
            )
        except Refuse as refuse:
            return Refusal(request=request, reason=refuse.reason)
        counts = ", ".join(
            f"{n} {word}{'' if n == 1 else 's'}"
            for n, word in (
                (len(world.steps), "step"),
                (world.moves, "plate move"),
                (world.tips_used, "tip"),
            )
        )
        return Plan(
            request=request, summary=f"{'; then '.join(done)} ({counts})", steps=world.steps
        )

    def replan(
        self, request: str, lab: LabView, previous: Plan, errors: list[str]
    ) -> Plan | Refusal:
        """The remaining steps ``previous`` replanned on ``lab`` as the instruments report it
        now (after a deviation): see :func:`agents.task.planning.replan.replan_rest`."""
        return replan_rest(request, lab, previous, errors)


def _build(clause: str, world: World, ctx: Context, lex: g.Lexicon) -> str:
    cycling = _thermocycle.parse(clause, lex, ctx)
    if isinstance(cycling, _thermocycle.ThermocycleIntent):
        return _thermocycle.thermocycle(cycling, world, ctx)
    if isinstance(cycling, _thermocycle.HoldIntent):
        return _thermocycle.hold(cycling, world, ctx)
    intent = g.parse(clause, lex)
    if isinstance(intent, g.TransferIntent):
        return _liquid.transfer(intent, world, ctx, lex)
    if isinstance(intent, g.DilutionIntent):
        return _liquid.dilution(intent, world, ctx, lex)
    if isinstance(intent, g.MixIntent):
        return _liquid.mix(intent, world, ctx)
    if isinstance(intent, g.IncubateIntent):
        return _instruments.incubate(intent, world, ctx)
    if isinstance(intent, g.ReadIntent):
        return _instruments.read(intent, world, ctx)
    if isinstance(intent, g.MoveIntent):
        return _instruments.move(intent, world, ctx, lex)
    raise _not_understood(clause)


def _not_understood(clause: str) -> Ask:
    return Ask(
        f"I did not understand '{clause}'. I understand requests like these, alone or chained "
        "with 'then':",
        ["action"],
        g.FAMILIES,
    )
