"""Normalisation sheets pasted under a heading that names both plates: "Normalisation sheet
(dna_plate -> norm96):" then a header with a well column, the sample's volume and the
diluent's ("Well, Sample vol (uL), Water vol (uL)") and a row per well. The sheet becomes what
it means, the diluent first: "Add water to norm96 A1, B1 (16, 15 uL), then transfer dna_plate
A1, B1 to norm96 A1, B1 (4, 5 uL)".

Only a sheet whose heading names the two plates (an arrow, or "from X to Y") and whose header
names exactly one sample column and one other volume column is rewritten; anything else is
left as it was written.
"""

from __future__ import annotations

import re

_FLAGS = re.IGNORECASE
_SEP = re.compile(r"\s*(?:\t|\||,|;)\s*|\s{2,}")
_WELL_CELL = re.compile(r"^(?:wells?|pos(?:ition)?)$", _FLAGS)
_VOL = re.compile(r"\b(?:vol(?:ume)?\.?|u[lL]|µ[lL])\b|\(\s*u[lL]\s*\)", _FLAGS)
_SAMPLE = re.compile(
    r"\b(?:samples?|dna|gdna|cdna|rna|librar(?:y|ies)|lib|template|input|amplicons?|aliquot)\b",
    _FLAGS,
)
_PLATES = re.compile(
    r"\(?\s*(?:from\s+)?([\w-]+)\s*(?:->|→|\bto\b|\binto\b)\s*([\w-]+)\s*\)?\s*:?\s*$", _FLAGS
)
_WELL = re.compile(r"^[A-Pa-p]\d{1,2}$")
_NUMBER = re.compile(r"^(\d+(?:\.\d+)?|\.\d+)$")
_RULE = re.compile(r"^[\s|:+-]+$")


def _cells(line: str) -> list[str]:
    return [c.strip() for c in _SEP.split(line.strip().strip("|").strip())]


def _header(cells: list[str]) -> tuple[int, int, int, str] | None:
    """(well, sample volume, diluent volume columns, the diluent's name) or None."""
    wells = [i for i, c in enumerate(cells) if _WELL_CELL.match(c)]
    vols = [i for i, c in enumerate(cells) if _VOL.search(c)]
    samples = [i for i in vols if _SAMPLE.search(cells[i])]
    others = [i for i in vols if i not in samples]
    if len(wells) != 1 or len(samples) != 1 or len(others) != 1:
        return None
    name = _VOL.sub(" ", cells[others[0]]).strip(" ()[]:-")
    return (wells[0], samples[0], others[0], name) if name else None


def rewrite(text: str) -> str:
    """``text`` with each normalisation sheet said as its two transfers."""
    if "\n" not in text or not _VOL.search(text):
        return text  # cheap: most requests hold no sheet
    lines = text.split("\n")
    for i in range(1, len(lines)):
        head = _header(_cells(lines[i]))
        plates = _PLATES.search(lines[i - 1]) if head else None
        if head is None or plates is None:
            continue
        well, sample, diluent, name = head
        rows: list[tuple[str, str, str]] = []
        j = i + 1
        while j < len(lines):
            cells = _cells(lines[j])
            if _RULE.match(lines[j]):
                j += 1
                continue
            if len(cells) <= max(well, sample, diluent) or not _WELL.match(cells[well]):
                break
            s, d = _NUMBER.match(cells[sample]), _NUMBER.match(cells[diluent])
            if s is None or d is None:
                break
            rows.append((cells[well], s.group(1), d.group(1)))
            j += 1
        if not rows:
            continue
        src, dst = plates.group(1), plates.group(2)
        wells = ", ".join(w for w, _, _ in rows)
        said = (
            f"Add {name} to {dst} {wells} ({', '.join(d for _, _, d in rows)} uL), then transfer "
            f"{src} {wells} to {dst} {wells} ({', '.join(s for _, s, _ in rows)} uL)"
        )
        head_text = lines[i - 1][: plates.start()].strip(" :")
        lines[i - 1 : j] = [f"{head_text}: {said}" if head_text else said]
        return rewrite("\n".join(lines))
    return text
