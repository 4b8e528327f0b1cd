"""A sentence that only says how many replicates what follows is done in, with a subject and
no place: "Each serum in triplicate.", "All samples are run in duplicate.", "Run every
standard in triplicate." - a setting for the next move, as "In triplicate." alone is."""

from __future__ import annotations

import re

from agents.task.planning._entities import Entities

_FLAGS = re.IGNORECASE
# an optional verb of running an assay (never a liquid move: "transfer X in duplicate" is the
# move itself), what is replicated, and how
_NOTE = re.compile(
    r"^(?:please\s+)?(?:(?:run|plate|test|assay|measure|load|set\s+up|do|have)\s+)?"
    r"(?:(?:each|every|all(?:\s+of)?(?:\s+the)?|the|both|our|my)\s+)?"
    r"(?!(?:transfer|add|dispense|pipette|move|put|spot|stamp|copy|aliquot|distribute|mix|pool|"
    r"dilute|take|replicate)\b)(?:[a-z][\w-]*\s+){0,2}"
    r"(?:(?:is|are|will\s+be|should\s+be|to\s+be|get|gets|go|goes)\s+(?:\w+\s+)?)?"
    r"in\s+(?:duplicate|triplicate|quadruplicate)s?$",
    _FLAGS,
)


def replicate_note(text: str, ents: Entities) -> bool:
    """'Each serum in triplicate.': a replicate count said of what follows, nothing else."""
    return (
        ents.replicates is not None
        and not (ents.wellsets or ents.quantities or ents.labware)
        and _NOTE.match(text.strip(" .!")) is not None
    )
