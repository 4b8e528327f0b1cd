"""Settings the planner cannot honour: asked about by name, never dropped.

The liquid handler's moves take their aspirate/dispense speed, tip height, blow-out, touch-off
and air gap from its liquid class, and a read takes the reader's own flash count: a request
that sets one of them ("aspirate slowly", "blow out", "a 10 uL air gap", "dispense at the
bottom", "10 flashes") would get a plan that silently does otherwise. A tip cadence the moves
cannot follow ("change tips every 4 wells", "new tip every other well") would take more tips
than asked. Each is a question naming the setting (``missing: mode``): go on without it, or
say how instead.
"""

from __future__ import annotations

import re

from agents.task.planning._outcomes import Ask

_FLAGS = re.IGNORECASE
_N = r"(?:\d+|one|two|three|four|five|six|seven|eight|ten|twelve)"
_NTH = r"(?:other|second|2nd|third|3rd|fourth|4th|fifth|5th|sixth|6th|\d+(?:st|nd|rd|th))"
_BOTTOM = (  # "at the bottom of the well", never "the bottom row"
    r"\b(?:at|from|near|on|to|off)\s+the\s+(?:very\s+)?bottom\b"
    r"(?!\s+(?:row|half|of\s+the\s+(?:plate|column|rack)))"
)

# (what the person set, how it is said)
_SETTINGS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "the pipetting speed",
        re.compile(
            r"\b(?:aspirat|dispens|pipett)\w*\s+(?:at\s+)?\d+(?:\.\d+)?\s*%|"
            r"\d+(?:\.\d+)?\s*(?:uL|ul|µL)\s*/\s*s(?:ec)?\b|"
            r"\bslow(?:ly|er)\b(?!\s+(?:ramp|cool|heat))|\bdropwise\b|\b(?:low|slow|reduced|half)\s+"
            r"(?:aspirat\w+\s+|dispens\w+\s+|pipetting\s+)?(?:speed|flow(?:\s+rate)?|rate)\b"
            r"(?<!shaking speed)|\bflow\s+rate\b|"
            # "at 50% speed", "at 20 % of max aspiration speed", "dispense speed 30%"
            r"\b\d+(?:\.\d+)?\s*%\s*(?:of\s+(?:the\s+)?)?(?:(?:max(?:imum)?|full|normal|default)\s+)?"
            r"(?:(?:aspirat\w+|dispens\w+|pipetting|plunger|piston)\s+)?speed\b|"
            r"\b(?:aspirat\w+|dispens\w+|pipetting|plunger|piston)\s+speed\s*(?:of|at|=|:|to)?\s*"
            r"\d+(?:\.\d+)?\s*%",
            _FLAGS,
        ),
    ),
    (
        "the touch-off",
        re.compile(
            r"\btouch(?:ing|ed)?[\s-]*off\b|\btip[\s-]*touch|\btouch[\s-]*(?:the\s+)?tips?\b",
            _FLAGS,
        ),
    ),
    ("the blow-out", re.compile(r"\bblow(?:ing|n)?[\s-]*outs?\b", _FLAGS)),
    ("the air gap", re.compile(r"\bair[\s-]*gaps?\b", _FLAGS)),
    (
        "the tip height",
        re.compile(
            _BOTTOM + r"|\b\d+(?:\.\d+)?\s*(?-i:mm)\s+(?:above|from|off|below)\b|\bsub-?surface\b|"
            r"\bmeniscus\b|\b(?:at|from|near)\s+the\s+top\s+of\s+the\s+wells?\b|"
            r"\b(?:above|below)\s+the\s+liquid\b",
            _FLAGS,
        ),
    ),
    ("the liquid class", re.compile(r"\bliquid[\s-]class(?:es)?\b", _FLAGS)),
    (
        "the tip position",
        re.compile(
            r"\bz[\s-]?offset\b|\b\d+(?:\.\d+)?\s*(?-i:mm)\s+offset\b|"  # (10 mM is a strength)
            r"\b(?:against|down|along)\s+the\s+(?:side|wall)s?\b",
            _FLAGS,
        ),
    ),
    (
        "the reader's gain or integration time",
        re.compile(r"\bgain\s*(?:of\s*|=\s*|:\s*)?\d+|\bintegration(?:\s+time)?\b", _FLAGS),
    ),
    ("reverse pipetting", re.compile(r"\breverse[\s-]*pipett?(?:e|ing)\b", _FLAGS)),
    ("pre-wetting the tips", re.compile(r"\bpre-?\s?wet(?:ting|ted)?\b", _FLAGS)),
    (
        "the reader's flash count",
        re.compile(r"\b" + _N + r"\s+flash(?:es)?\b|\bflashes\b", _FLAGS),
    ),
    (
        "a new tip every few wells",
        re.compile(
            r"\btips?\s+(?:(?:after|for|at|on|with)\s+)?(?:every|each)\s+" + _NTH + r"\b|"
            r"\btips?\s+(?:(?:after|for|at|on|with)\s+)?(?:every|each|per)\s+(?!1\b|one\b)"
            + _N
            + r"\s+"
            r"(?:wells?|columns?|rows?|transfers?|dispenses?|samples?|destinations?)\b|"
            r"\b(?:every|each)\s+(?:" + _NTH + r"|(?!1\b|one\b)" + _N + r")\s+(?:wells?|columns?|"
            r"transfers?|dispenses?|samples?)\b[\s,]*(?:change|swap|replace|get|take|use)\s+"
            r"(?:a\s+)?(?:new|fresh)?\s*tips?\b",
            _FLAGS,
        ),
    ),
)

# "shake at 50% speed": the shaker's speed, which its own clause asks about, not the pipette's
_SHAKING = re.compile(r"\b(?:shak\w*|vortex\w*|orbital\w*|spin\w*)\b[^.;\n]{0,30}$", _FLAGS)

_OPTIONS = {
    "a new tip every few wells": ["a fresh tip for every well", "one tip for all the wells"],
}


def asked(text: str) -> Ask | None:
    """The question about the first setting in ``text`` (quoted names held aside) that no step
    can carry, if any."""
    for what, said in _SETTINGS:
        m = said.search(text)
        if m is None or (what == "the pipetting speed" and _SHAKING.search(text, 0, m.start())):
            continue
        how = m.group(0).strip()
        if what in _OPTIONS:
            return Ask(
                f"I can take a fresh tip for every well or keep one tip, not {what} ('{how}'): "
                "which should I do?",
                ["mode"],
                _OPTIONS[what],
            )
        return Ask(
            f"I cannot set {what} ('{how}'): the instrument uses its own default for it. Should "
            "I go on without it, or would you rather change the request?",
            ["mode"],
            [f"go on without '{how}'", "cancel"],
        )
    return None


def check(text: str) -> None:
    """Ask about a setting in ``text`` that no step can carry (a plan would drop it)."""
    ask = asked(text)
    if ask is not None:
        raise ask
