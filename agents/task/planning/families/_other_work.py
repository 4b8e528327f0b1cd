"""Work for instruments the planner does not drive: a magnet, a centrifuge, a sealer, a
freezer, an imager, a balance, a pH meter ... Asked for, it is refused for the instrument (the
lab lacks it, or planning for it is not supported yet), never read as other work or as no lab
request at all ("weigh out 5 g of NaCl" needs a balance)."""

from __future__ import annotations

import re

_FLAGS = re.IGNORECASE

OTHER = {
    "magnet": re.compile(
        r"\bmagnet\w*|\bmag[\s-]?deck\b|\bpull\s+down\s+the\s+beads\b|\bbead\s+separation\b", _FLAGS
    ),
    "centrifuge": re.compile(
        r"\bcentrifug\w*|\bspin\s+(?:down|it|the\s+plate|\w+\s+at\s+\d)|\b\d+\s*(?:x\s*)?g\s+for\b",
        _FLAGS,
    ),
    "sealer": re.compile(
        r"^(?:heat[\s-]?)?seal\b(?!-)|\bplate\s+sealer\b", _FLAGS
    ),  # not "Seal-free"
    "washer": re.compile(r"\bplate\s+washer\b", _FLAGS),
    "sonicator": re.compile(r"^(?:please\s+)?sonicat\w*\b|\bultrason\w*", _FLAGS),
    "freezer": re.compile(
        r"^(?:please\s+)?(?:freeze|snap[\s-]?freeze|flash[\s-]?freeze)\b", _FLAGS
    ),
    "microscope or imager": re.compile(
        r"^(?:please\s+)?(?:image|photograph|take\s+(?:a\s+)?(?:picture|photo|image)s?\s+of)\b",
        _FLAGS,
    ),
    "plate lidder": re.compile(
        r"\b(?:put|place|pop|add)\s+(?:the\s+|a\s+)?lids?\s+(?:back\s+)?on\b|^(?:re-?)?lid\s+(?:the\b|it\b|them\b|\w+_)"
        r"|\b(?:take|remove)\s+(?:off\s+)?(?:the\s+)?lids?\b(?!\s+(?:temp|at|to)\b)|\bde-?lid\b"
        r"|^cover\s+(?:the\s+plate|it|them|\w+_\w+)\b",  # "Cover the plate and incubate ..."
        _FLAGS,
    ),
    # work for instruments no lab here has: refused for the instrument, never "not a lab request"
    "balance": re.compile(r"^(?:please\s+)?weigh\b|\bweigh\s+(?:out\s+)?\d", _FLAGS),
    "autoclave": re.compile(r"^(?:please\s+)?autoclave\b|\bin\s+the\s+autoclave\b", _FLAGS),
    "pH meter": re.compile(
        r"^(?:please\s+)?(?:measure|check|adjust|test|set)\s+(?:the\s+)?ph\b|\bph\s+meter\b", _FLAGS
    ),
    "cell counter": re.compile(r"^(?:please\s+)?count\s+(?:the\s+)?cells\b", _FLAGS),
    "vortex mixer": re.compile(  # a plate "vortexed" is shaken: the heater-shaker's work
        r"^(?:please\s+)?vortex\s+(?:the\s+|each\s+|all\s+)?(?:[\w-]+\s+){0,2}?(?:tubes?|vials?|"
        r"stocks?|aliquots?|falcons?|eppendorfs?)\b",
        _FLAGS,
    ),
    "barcode scanner": re.compile(r"^(?:please\s+)?scan\s+(?:the\s+)?barcodes?\b", _FLAGS),
}
