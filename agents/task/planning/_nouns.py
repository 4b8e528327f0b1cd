"""Actions said as nouns: "make me a replicate plate of samples on dest_plate" is a
replicate, "do duplicates of samples A1-H1 into ..." a transfer in duplicate. The clause's
text (what later stages read) says the verb; what the person wrote stays as written."""

from __future__ import annotations

import re

_FLAGS = re.IGNORECASE
# "Make me a replicate plate of samples on dest_plate": the noun names the action (replicate).
_COPY_NOUN = re.compile(
    r"^(?:make|create|prepare|set\s+up|do|generate|produce|pour|run)\s+(?:me\s+|us\s+)?(?:a|an|one)\s+"
    r"(?:(?:replicate|replica|copy|duplicate|daughter|clone|mirror|stamped|carbon)[\s-]+)?"
    r"(?:replicate|replica|copy|duplicate|daughter|clone|mirror)(?:[\s-]+plate)?\s+(?:of|from)\s+",
    _FLAGS,
)


# "Do duplicates of samples A1-H1 into ...": the count names the copies, the verb is a transfer
_COPIES_OF = re.compile(
    r"^(?:do|make|prepare|run|set\s+up|plate|put\s+down)\s+(?:me\s+|us\s+)?"
    r"(duplicates?|triplicates?|quadruplicates?)\s+(?:of\s+)?(?=\S)",
    _FLAGS,
)


def as_verb(text: str) -> str:
    """``text`` with an action said as a noun said as its verb."""
    text = _COPY_NOUN.sub("replicate ", text)
    return _COPIES_OF.sub(lambda m: f"transfer in {m.group(1).rstrip('sS')} ", text)
