"""An "and mix" said after a step joins it: mixing in each destination after its dispense
("30 uL TE into A1-H3; mix 10x", "top up column 1 to 200 uL with medium and mix")."""

from __future__ import annotations

from agents.task.planning._entities import Entities
from agents.task.planning._frames import Frame
from agents.task.planning._reading import _folded
from agents.task.planning.families import Family
from agents.task.planning.families.volumes import tops_up

_FOLDS_INTO_TRANSFER = ("and", "comma", "semicolon")


def mixes_step_before(prev: tuple[Frame, Family], frame: Frame, family: Family) -> bool:
    """A placeless mix clause joined to the step before it in the same sentence, when that
    step moves liquid into wells it can mix after (a transfer, a dilution, a top-up)."""
    return (
        family.name == "mix"
        and (
            prev[1].name in ("transfer", "chain", "dilution")
            or (prev[1].name == "volumes" and tops_up(prev[0]))
        )
        and frame.clause.joined in _FOLDS_INTO_TRANSFER
        and frame.clause.sentence == prev[0].clause.sentence
        and not frame.places
    )


def fold_mix(transfer: Frame, mix: Frame) -> None:
    ents: Entities = transfer.ents
    ents.mix, ents.no_mix = True, False
    ents.mix_times = mix.ents.mix_times or mix.ents.times or ents.mix_times
    ents.tips = ents.tips or mix.ents.tips
    ents.channels = ents.channels or mix.ents.channels  # "..., mix 5 times, 8-channel"
    transfer.mix_volume = mix.mix_volume or mix.volume or transfer.mix_volume
    transfer.extra["folded"] = [*_folded(transfer), mix.clause]
