"""Actions said as nouns: "make me a replicate plate of samples on dest_plate" is a
replicate, "do duplicates of samples A1-H1 into ..." a transfer in duplicate; and the head
said before the verb ("8-channel mix of serum columns 1-2", "multichannel transfer ..."). The
clause's text (what later stages read) starts with the verb; what the person wrote stays as
written."""

from __future__ import annotations

import re

_FLAGS = re.IGNORECASE
# "Make me a replicate plate of samples on dest_plate": the noun names the action (replicate).
_COPY_NOUN = re.compile(
    r"^(?:make|create|prepare|set\s+up|do|generate|produce|pour|run)\s+(?:me\s+|us\s+)?"
    r"(?:a|an|one|two|three|four|[1-4])\s+"
    # "a 1:1 copy", "an exact replica", "a full-plate copy": what kind of copy
    r"(?:(?:1:1|one-to-one|exact|identical|full|complete|whole|full-plate|whole-plate|straight|"
    r"backup|back-up|working|glycerol|glycerol-stock|assay|screening|archive|storage|"
    r"\w+(?:-\w+)+|[A-Z]{2,5}|second|third|spare|fresh|new|quick|extra)[\s-]+)?"  # "a QC copy"
    r"(?:(?:replicate|replica|copy|duplicate|daughter|clone|mirror|stamped|carbon)[\s-]+)?"
    r"(?:replicates?|replicas?|cop(?:y|ies)|duplicates?|daughters?|clones?|mirrors?)"
    r"(?:[\s-]+plates?)?\s+(?:of|from)\s+",
    _FLAGS,
)


# "Do duplicates of samples A1-H1 into ...": the count names the copies, the verb is a transfer
_COPIES_OF = re.compile(
    r"^(?:do|make|prepare|run|set\s+up|plate|put\s+down)\s+(?:me\s+|us\s+)?"
    r"(duplicates?|triplicates?|quadruplicates?)\s+(?:of\s+)?(?=\S)",
    _FLAGS,
)


# "8-channel mix of ...", "multichannel transfer ...", "single-channel: add ...": the head
# said as an adjective of the verb (the clause reads it wherever it stands)
_HEAD_FIRST = re.compile(
    r"^(?P<head>(?:(?:8|eight|12|twelve|single|one|1)[\s-]?(?:channel|ch)|multi[\s-]?channel)"
    r"(?:\s+(?:pipette|head))?)\s*[:,-]?\s+(?=[a-z])",
    _FLAGS,
)


# "Template transfer (templates -> pcr_plate): col 1 -> col 1, ...": what moves, then the
# action as a noun, before the places
_NOUN_THEN_ACTION = re.compile(
    r"^(?P<what>[A-Za-z][\w+-]*(?:\s+[A-Za-z][\w+-]*)?)\s+(?P<verb>transfer|stamp|aliquot)s?"
    r"(?=\s*[(,:])",
    _FLAGS,
)


def as_verb(text: str) -> str:
    """``text`` with an action said as a noun said as its verb, and the head said before the
    verb said after the clause ("mix of serum columns 1-2, 8-channel")."""
    if head := _HEAD_FIRST.match(text):
        text = f"{text[head.end() :]}, {head['head']}"
    text = _NOUN_THEN_ACTION.sub(lambda m: f"{m['verb'].lower()} {m['what']}", text)
    copy = _COPY_NOUN.match(text)
    count = _COUNTED.match(text)
    if copy and count and _WELL_FIRST.match(text[copy.end() :]):
        # "Make 4 replicates of reservoir A1 in row B": four wells of one source, not plates
        n = _COUNT_WORDS.get(count[1].lower()) or int(count[1])
        return f"transfer {text[copy.end() :].rstrip(' .')}, {n} replicates"
    text = _COPY_NOUN.sub("replicate ", text)
    return _COPIES_OF.sub(lambda m: f"transfer in {m.group(1).rstrip('sS')} ", text)


# "Make two daughter plates from MP-07 ...": how many copies the noun asks for
_COPY_COUNT = re.compile(
    r"\b(?:make|create|prepare|set\s+up|generate|produce|pour)\s+(?:me\s+|us\s+)?"
    r"(two|three|four|[2-4])\s+(?:(?:exact|identical|full|assay|screening|archive|storage|"
    r"backup|working|glycerol|\w+(?:-\w+)+|[A-Z]{2,5}|spare|fresh|new|extra)[\s-]+)?"
    r"(?:(?:replicate|replica|copy|duplicate|daughter|clone|mirror)"
    r"[\s-]+)?(?:replicates|replicas|copies|duplicates|daughters|clones|mirrors|plates)\b"
    # ("make 4 replicates of reservoir A1 in row B": copies of one well, into wells)
    r"(?!\s+of\s+(?:(?:the\s+)?[\w-]+\s+)?(?:well\s+)?[A-Pa-p]\d{1,2}\b)",
    _FLAGS,
)
_COUNT_WORDS = {"two": 2, "three": 3, "four": 4}
_COUNTED = re.compile(r"^\w+(?:\s+up)?\s+(?:me\s+|us\s+)?(two|three|four|[2-4])\b", _FLAGS)
_WELL_FIRST = re.compile(r"(?:(?:the\s+)?[\w-]+\s+)?(?:well\s+)?[A-Pa-p]\d{1,2}\b")


def copies_said(said: str) -> int | None:
    """The number of copies "make two daughter plates" asks for (None: not said)."""
    m = _COPY_COUNT.search(said)
    if m is None:
        return None
    word = m.group(1).lower()
    return _COUNT_WORDS.get(word) or int(word)
