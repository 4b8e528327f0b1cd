"""Work told as a story, written as commands: "The robot first removes 1 mL of medium from
each well and adds 500 uL of PFA to each; the plate then sits for 15 min before the arm parks
it in hotel 2" is "first remove 1 mL ... and add 500 uL ...; then incubate the plate for
15 min, then park it in hotel 2".

Three things change, and only them: a verb of the work said by the robot, its arm or the
person ("the robot adds", "the arm parks", "we add", "you then read") becomes the command,
with every such verb after it in the same sentence ("... and adds"); a plate said to sit,
stand or rest ("the plate then sits for 15 min") is incubated; and "before the arm parks it"
tells the next step in the order written.
"""

from __future__ import annotations

import re

_FLAGS = re.IGNORECASE

_BASE_TEXT = """
    add remove aspirate dispense transfer move park place put take bring return shake incubate
    read measure mix discard fill top load pipette distribute dilute pool stamp spot heat cool
    hold run cycle send carry draw withdraw scan seal spin wash replace exchange refill unload
    deliver aliquot
"""
_BASE = _BASE_TEXT.split()
_THIRD = {("mixes" if v == "mix" else "washes" if v == "wash" else "carries" if v == "carry"
           else v + "s"): v for v in _BASE}  # fmt: skip
_VERB = "|".join(sorted([*_THIRD, *_BASE], key=len, reverse=True))
_ADVERBS = r"(?:(?:first|then|next|also|now|finally|again|just|automatically)\s+)*"
_ADV = rf"(?P<adv>{_ADVERBS})"
_ACTOR = (
    r"(?:(?:the|our|a)\s+)?(?:robot(?:ic)?(?:\s+arm)?|liquid[\s-]handler|pipett(?:or|ing\s+robot)|"
    r"ot-?2|arm|gripper|plate[\s-]mover|mover|system|machine|labwright|instrument)"
)
# "We add ...", "Then you read ...": the person telling the steps, at the sentence's start
# (never "I read the plate yesterday": what was done is no step).
_PERSON = re.compile(
    rf"^(?P<lead>\s*(?:(?:then|next|now|first|finally|after\s+that),?\s+)?)(?:you|we)\s+{_ADV}"
    rf"(?P<v>{'|'.join(_BASE)})\b(?!.*\b(?:yesterday|earlier|already|ago|previously|last\s+\w+)\b)",
    _FLAGS,
)
_SAID_BY = re.compile(rf"\b{_ACTOR}\s+{_ADV}(?P<v>{_VERB})\b", _FLAGS)
# "..., before the arm parks it in hotel 2": the next step, in the order written.
_BEFORE_ACTOR = re.compile(rf"\s*,?\s+before\s+(?={_ACTOR}\s+{_ADVERBS}(?:{_VERB})\b)", _FLAGS)
# "the plate then sits for 15 min", "it stands 10 min at RT": a wait, as an incubation.
_RESTS = re.compile(
    r"\b(?P<obj>(?:the|this|that|each)\s+(?:plate|block|cells)|it|they|[A-Za-z][\w-]*_[\w-]+"
    r"|[A-Za-z][\w-]*\d[\w-]*)\s+(?P<adv>(?:(?:then|now|next|first|finally)\s+)?)"
    r"(?:sits|stays|rests|stands|waits|is\s+(?:left|kept)|are\s+(?:left|kept))"
    r"(?=\s+(?:for\s+|at\s+|@\s*)?\d)",
    _FLAGS,
)
_SENTENCES = re.compile(r"(?<=[.;!?\n])")


def _base(verb: str) -> str:
    return _THIRD.get(verb.lower(), verb.lower())


_WARMTH = re.compile(
    r"\d\s*(?:°\s*)?[CF]\b|\bRT\b|\broom\s+temp|\bon\s+ice\b|\bwarm|\bheat", _FLAGS
)


def _rests(m: re.Match[str]) -> str:
    """A plate left to sit is incubated, at room temperature unless a warmth is said with it."""
    said = re.split(r"[,;.]|\bthen\b", m.string[m.end() :], maxsplit=1)[0]
    warmth = "" if _WARMTH.search(said) else " at room temperature"
    bare = re.match(r"\s+\d", m.string[m.end() :])  # "sits 30 min": never "plate 30"
    return f"{m['adv']}incubate {m['obj']}{warmth}{' for' if bare else ''}"


def narrative(text: str) -> str:
    """``text`` with the work told as a story written as commands (see the module)."""
    text = _BEFORE_ACTOR.sub(", then ", text)
    out = []
    for sentence in _SENTENCES.split(text):
        sentence = _PERSON.sub(lambda t: f"{t['lead']}{t['adv']}{t['v']}", sentence, count=1)
        told = _SAID_BY.search(sentence)
        if told is not None:
            sentence = _SAID_BY.sub(lambda t: f"{t['adv']}{_base(t['v'])}", sentence)
            head, rest = sentence[: told.start() + 1], sentence[told.start() + 1 :]
            sentence = head + re.sub(
                rf"(?:(?<=\band\s)|(?<=\bthen\s)|(?<=,\s))({'|'.join(_THIRD)})\b",
                lambda v: _base(v.group(1)),
                rest,
                flags=_FLAGS,
            )
        sentence = _RESTS.sub(_rests, sentence)
        out.append(sentence)
    return "".join(out)
