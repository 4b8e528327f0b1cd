"""Stage 2 of the rule planner: split a normalised request into clauses.

A clause is one thing the person says: an action ("add 50 uL of buffer to row A"), a fact about
the lab ("A1 already holds 200 uL of dye") or a pleasantry ("thanks!"). Clauses end at line
breaks (numbered and bulleted items), sentence ends, semicolons, "then" / "after that" /
"followed by", and at a comma or an "and" that starts a new action ("..., shake it at 37 C").
Quoted text was replaced by placeholders before this stage, so nothing inside quotes can split.

A line that opens with a label ("ELISA step:", "Cherry-pick list:") gives that label to its
clauses, and a label alone on its line gives it to the list items that follow.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from agents.task.planning import _joins, _social
from agents.task.planning._gapping import borrow, carried, gaps
from agents.task.planning._items import lines_of
from agents.task.planning._joins import (
    RUN as _RUN,
)
from agents.task.planning._joins import (
    VOLUME_START as _VOLUME_START,
)
from agents.task.planning._joins import (
    after_clause_start,
    bracketed,
    list_tips_apart,
    semicolon_parts,
    then_parts,
)
from agents.task.planning._labels import ROLE_KEY, THINS_BEFORE, follows, heading_line, wells_label
from agents.task.planning._list_heads import HEAD_VERB as _HEAD_VERB
from agents.task.planning._list_heads import ITEM as _ITEM
from agents.task.planning._list_heads import VOLUME_HEAD as _VOLUME_HEAD
from agents.task.planning._list_heads import opens_a_list
from agents.task.planning._normalise import Normalised, unquote
from agents.task.planning._nouns import as_verb
from agents.task.planning._off_bench import KEPT, TRAILING
from agents.task.planning._order import run_order
from agents.task.planning._remarks import AFTER, PURPOSE, is_reason
from agents.task.planning._vocabulary import ACTION_VERBS

Join = Literal["start", "item", "sentence", "semicolon", "then", "comma", "and"]

_FLAGS = re.IGNORECASE
_ENTRY = re.compile(r"^(?:[\w-]+\s+)?[A-Pa-p]\d{1,2}\b(?!\s*(?:is|are|has|have|holds?)\b)", _FLAGS)
_LABEL = re.compile(r"^(?P<label>[A-Za-z][A-Za-z /+&()'-]{0,38}?)\s*:(?:\s+|$)(?P<body>.*)$")
_WELLISH = re.compile(r"\b[A-Pa-p]\d{1,2}\b")
_SENTENCE = re.compile(
    # "E. coli inoculum", "S. aureus": a genus initial is no sentence end
    rf"(?<!(?-i:\b[A-Z])\.(?=(?-i:\s[a-z]{{3,}})\b)(?!\s(?:{ACTION_VERBS}|then|and)\b))"
    r"(?<!\be\.g)(?<!\bi\.e)(?<!\be\.g\.)(?<!\bi\.e\.)(?<!\bapprox)(?<!\bdenat\.)(?<!\bext\.)(?<!\binit\.)(?<!\belong\.)(?<!\bcol\.)(?<!\bcols\.)(?<!\bconc\.)(?<!\bconcs\.)(?<!\bfin\.)(?<!\bdil\.)(?<!\bca)(?<!\bvs)(?<!\bno)(?<!\bdr\.)(?<!\bprof\.)(?<!\.\.)(?<=[.!?])\s+(?=\S)",
    _FLAGS,
)
# "dna_plate A2: 12 uL" is a well and its volume, not a heading and an action.
_PLACE_ONLY = re.compile(
    r"^\s*(?:[\w-]+\s+)?(?:wells?\s+)?[A-Za-z]\d{1,2}(?:\s*[-:]\s*[A-Za-z]\d{1,2})?"
    r"(?:\s*(?:->|to|into)\s*(?:[\w-]+\s+)?(?:well\s+)?[A-Za-z]\d{1,2})?\s*$"
)
# "200 uL total each", "to 50 uL", "50 uL final": a level the wells end at, not an amount
_LEVEL = re.compile(
    r"\bto\s+(?:a\s+)?(?:final\s+|total\s+)?(?:volume\s+of\s+)?[\d.]+\s*(?:u[lL]|m[lL])\b"
    r"|[\d.]+\s*(?:u[lL]|m[lL])\s+(?:final|total)\b",
    _FLAGS,
)
# "100, 50, 25, 12.5": bare numbers, the start of a list of volumes whose unit comes last
_BARE_LIST = re.compile(r"(?:^|[\s(:])\d+(?:\.\d+)?(?:\s*,\s*\d+(?:\.\d+)?)+\s*$")
# ", standard 300 uL into A1" after "sample buffer 150 uL into A2-A8": a liquid, its volume, where
# (", A5 and buffer 25 uL into": A5 ends the list before it)
_NAMED_VOLUME_START = re.compile(
    r"(?:\s*,\s*(?:and\s+)?|\s+and\s+)(?![A-Pa-p]\d{1,2}\b)"
    r"(?=(?:(?!and\b)[A-Za-z«][\w%»-]*\s+|\d[\w.%/-]*\s+(?=[A-Za-z«])){1,4}?"
    r"(?:[A-Za-z«][\w%»./-]*\s+)?(?:\d+(?:\.\d+)?|\.\d+)\s*(?:u[lL]|ml|mL)\s+"
    r"(?:into|in|to|->|from)\s)",
    _FLAGS,
)
# What says how the lab is, not what to do: volumes after it are more of the same fact.
_STATE_SENTENCE = re.compile(
    r"^\s*(?:there\s+(?:is|are|'s)|there's|we\s+have|i\s+have|(?:it|they)\s+(?:has|have|holds?))\b"
    r"|\b(?:already|currently)\s+(?:has|have|holds?|contains?)\b",
    _FLAGS,
)
_VOLUME = re.compile(r"\d\s*(?:u[lL]|ml|mL|microlit|millilit)", _FLAGS)
# ", 1 h at 37 C" / ", 20 min in the dark" after a transfer: a verbless incubation of its own.
_TIMED_START = re.compile(
    r"\s*,\s*(?:and\s+)?(?=(?:for\s+)?(?:\d+(?:\.\d+)?|an?|one|two)\s*"
    r"(?:h|hrs?|hours?|min|mins|minutes?|s|secs?|seconds?)\b)",
    _FLAGS,
)
_SECOND_TIP_WISH = re.compile(
    r"\s*(?:,|;|\bbut\b|\band\b)\s*(?:and\s+|but\s+)?(?=(?:please\s+)?(?:use\s+)?(?:a|an|one|new|fresh|the\s+same|same|"
    r"change|re-?use|keep)\b[^,;]{0,20}\btips?\b)",
    _FLAGS,
)
_NEXT_DEST = re.compile(
    r"\b(?:to|into|in|onto|gets?|moved|carried|transferred|each\s+step|per\s+step)\b|->|[A-Pa-p]\d",
    _FLAGS,
)
_VERB_FIRST = re.compile(rf"(?:{ACTION_VERBS})\b", _FLAGS)
_NEW_ACTION = re.compile(
    rf"(?:\s*(?:,|\s-)\s*(?:and\s+|but\s+)?|\s+(?=because|since|cos|coz|{PURPOSE}))(?={AFTER})|"
    # "A1 is water, A2 is buffer", "res12 A5 has ethanol, res12 A1 has PBS", "A1 = dye, A2 = ..."
    r"\s*,\s*(?:and\s+)?(?=(?:[\w-]+\s+)?[A-Pa-p]\d{1,2}\s*(?:(?:is|holds|has|contains)\b(?!\s+(?:fine|ok(?:ay)?|good|great|best)\b)|=\s*(?!S\d{1,2}\b)[\w«]))|"
    r"\s*(?:,|\s-|\(|;)\s*(?=(?:all|everything|both)\s+(?:in|on|of)\s+[^\s,;]+\s*\)?\s*$)"
    r"|\s*,?\s*\b(?:starting|beginning)\s+with\s+(?=(?:\d+(?:\.\d+)?|\.\d+)\s*(?:u[lL]|ml|mL)\b)"
    # "read plate_1 at 600 nm and tell me the doubling time": work that is not the lab's
    rf"|\s*(?:,\s*(?:and\s+)?|\s+(?:and|&)\s+)(?={TRAILING}|{KEPT})"
    r"|\s*(?:,\s*(?:and\s+)?|\s+and\s+|:\s+|\s+-\s+|\s+[+&]\s+)"
    rf"(?!{_joins.DISCARDED})"  # "take 50 uL off the cells and discard it": not a new action
    r"(?=(?:(?:please|pls|also|now|first|just|gently|carefully"
    r"|(?:can|could|would|will)\s+(?:you|u))\s+)*"
    # ", serially, 2-fold" / ", serially diluted": how the series goes, not a new action
    r"(?!serially\b(?!\s+(?:dilute|transfer|titrate|carry|pass|move|take|pipette)\b))(?:"
    + ACTION_VERBS
    + r")\b"
    # "PCR-A and PCR-B", "and copy-2": a verb-like word in an id ("PCR-B"), not the verb
    + r"(?![-_](?:[A-Za-z]?\d|[A-Za-z]\b))"
    # "plate 1 and plate 2", ", plate 2 A1 to G1": a plate's name, not the verb "plate"
    + r"(?!(?<=plate)\s*[_-]?\d+\b(?!\s*(?:u[lL]|m[lL])\b))"
    # "..., top = standard, 2-fold ...", ", top BSA 2 mg/mL, 1:2 ...": the top of a curve; the
    # verb tops something up, off, with a liquid or to a volume
    + r"(?!(?<=top)(?![^,;]*\b(?:up|off|with|to\s+(?:a\s+)?(?:final\s+|total\s+)?\d))))"
    r"|(?:\s*:|\s+-)\s+(?=(?:first\s+)?(?:\d+(?:\.\d+)?|\.\d+)\s*(?:u[lL]|ml|mL)\b)"
    # "10 uL of each DNA into dest column 2, plus water to 40 uL" / "..., TE to 30 uL": a top-up
    r"|\s*,?\s+plus\s+(?=(?:[\w-]+\s+){1,3}?to\s+(?:a\s+)?(?:final\s+|total\s+)?\d)"
    r"|\s*,\s*(?=(?:[\w-]+\s+){1,2}?to\s+(?:a\s+)?(?:final\s+|total\s+)?\d+(?:\.\d+)?\s*(?:u[lL]|m[lL])"
    r"\s*(?:each|final|total)?\s*$)"
    # "..., serial 1:2 transfers of 100 uL from A1 to A7": a dilution's carrying steps
    r"|\s*,\s*(?:and\s+)?(?=(?:(?:\d+-fold|1:\d+|\d+x)\s+)?(?:serial|step-?wise)\s+"
    r"(?:(?:\d+-fold|1:\d+|\d+x)\s+)?(?:transfers?\b|dilution\s+(?=from|across|down|along)))"
    rf"|\s*:\s+(?={_RUN}\s+(?:gets?|with|(?:pre-?)?filled|receives?|into|to|->)\b)"
    # "A1 to B1, mix, and so on down to H1": the rest of the chain
    r"|(?<![A-Pa-p]\d)(?<![A-Pa-p]\d\d)\s*,\s*(?=(?:and\s+)?(?:so\s+on|etc\.?)\s+"
    r"(?:(?:down|across|along)\s+)?(?:to|until|through)\s+[A-Pa-p]\d)"
    # "A1 into B1, mix, B1 into C1, and so on to G1": the next step written out, then the rest
    r"|\s*,\s*(?=[A-Pa-p]\d{1,2}\s+(?:to|into|->)\s+[A-Pa-p]\d{1,2}\s*,?\s*(?:and\s+)?"
    r"(?:so\s+on|etc|on\s+(?:down|across|along)|onwards?)\b)",
    _FLAGS,
)


@dataclass(frozen=True, slots=True)
class Clause:
    """One clause: its cleaned text (placeholders kept), its words as written, how it joined."""

    index: int
    text: str
    said: str
    joined: Join
    label: str | None = None
    sentence: int = 0
    heading: bool = False  # ends in a colon: names what the clauses after it work on


# "add 5 uL NFW to A1-A8 - mix 3x": how to do the work, after a dash, is no heading's item
_MODIFIER_AFTER = re.compile(
    r"\s*-\s+(?:and\s+)?(?:mix(?:ed|ing)?\s+\d+\s*(?:x|times)|(?:with\s+)?(?:a\s+)?(?:new|fresh|same|"
    r"one)\s+tips?(?:\s+(?:each|every|per|for)\b[^,;]*)?|(?:with\s+|using\s+)?(?:the\s+)?"
    r"(?:8|eight|single|multi)[\s-]?channel)\s*(?:[,;.]|-\s|-?\s*$)",
    _FLAGS,
)
# "use plate_2", "please work on assay_384 for this": the plate of what follows (not tips)
_USE_PLATE = re.compile(
    r"(?:please\s+)?(?:use|using|work\s+(?:in|on))\s+((?:the\s+)?(?![\w-]*(?:tip|chan|-ch\b))[\w-]*[\d_][\w-]*"
    r"(?:\s+plate)?)(?:\s+for\s+(?:this|everything|all(?:\s+of\s+(?:it|this))?|the\s+rest))?",
    _FLAGS,
)
_FROM_LEAD = re.compile(r"^\s*(?:from|out\s+of)\s+(?:the\s+)?[\w-]+(?:\s+plate)?\s*,?\s*$", _FLAGS)
_COUNT_LABEL = re.compile(r"\b(?:cycles?|x|times|rounds?)$", _FLAGS)
_ROWS_LABEL = re.compile(r"^(?:rows?\s+[A-Pa-p](?:\s*(?:-|,|and|to|&)\s*[A-Pa-p])*)$", _FLAGS)
_EACH_VOLUME = re.compile(r"\d\s*(?:u[lL]|ml|mL)\s+(?:each|per\s+(?:well|pick))\b", _FLAGS)


def _semicolon_heading(pieces: list[str]) -> bool:
    """'Pick from samples to dest_plate; 10 uL each; A1 to B2; C3 to B3': the first piece
    names the plates its items work on."""
    first = pieces[0].strip()
    return (
        len(pieces) > 2
        and bool(_HEAD_VERB.match(first))
        and not _WELLISH.search(first)
        and (not _VOLUME.search(first) or bool(_EACH_VOLUME.search(first)))
        and sum(bool(_WELLISH.search(p)) for p in pieces[1:]) >= 2
    )


def split(norm: Normalised, names: frozenset[str] = frozenset()) -> list[Clause]:
    """The clauses of a request, in order. ``names``: the lab's labware ids, lower case (a line
    opener that names one, "Fluorescence read of assay:", is a clause, not a label)."""
    pieces: list[tuple[str, Join, str | None, int, bool]] = []
    list_label: str | None = None
    gapped: set[str] = set()  # second pairs that borrow the verb before them
    sentence = 0
    lines = lines_of(norm.text, names)
    for n, line in enumerate(lines):
        line = wells_label(line, names)  # "Blanks (H11, H12): 100 uL buffer into plate_1"
        if (
            opens_a_list(line, lines[n + 1 : n + 2], names)
            or (n + 1 < len(lines) and follows(line) and bool(_ENTRY.match(lines[n + 1].strip())))
            or (
                lines[n + 1 : n + 2]
                and (re.match(r"\s*(?:[-*+>]|\(?\d{1,2}[.)])\s*\S", lines[n + 1]) or n == 0)
                and not _ITEM.match(line)
                and heading_line(line, ACTION_VERBS)
            )  # over list items, or a title on the first line ("ELISA - day 2")
        ):
            line = line.rstrip(" .") + ":"  # "Cherry-pick list, samples to dest_plate" + items
        item = _ITEM.match(line)
        body = wells_label(line[item.end() :]) if item else line
        if not item and list_label is not None and _ENTRY.match(line):
            item = re.match("", line)  # "A1 10 uL" under "Normalise libs with EB:": an entry
        if not item:
            list_label = None
        label, own = (list_label if item else None), False
        if (m := _LABEL.match(body)) and _is_label(m.group("label"), names):
            label, body, own = m.group("label").strip(), m.group("body").strip(), True
            inner = _LABEL.match(body := wells_label(body))
            if inner and _is_label(inner["label"], names) and inner["body"].strip():
                # "For my assay tomorrow: Reading: plate_1, 450 nm": the nearer label governs
                label, body = inner["label"].strip(), inner["body"].strip()
            if not body and _ROWS_LABEL.match(label):  # "Row B:" over items: their wells
                sentence += 1
                pieces.append((label, "item" if item else "start", None, sentence, True))
                list_label = label
                continue
            if not body:
                list_label = label
                continue
        if (vh := _VOLUME_HEAD.match(body)) and ";" in vh.group("body"):
            sentence += 1  # "Transfer 5 uL: A1 to H12; B2 to G12": the volume of every item
            pieces.append((vh.group("head"), "item" if item else "start", label, sentence, True))
            label, body, item = vh.group("head"), vh.group("body"), re.match("", body)
        if body.rstrip().endswith(":"):  # "Cherry-pick from samples into dest_plate:" + items
            sentence += 1
            pieces.append((body.rstrip()[:-1], "item" if item else "start", label, sentence, True))
            # an item that heads items of its own ("- Plate 2:") replaces the heading above it
            list_label = label if own else body.rstrip()[:-1] if item else label or body[:-1]
            continue
        for k, part in enumerate(_SENTENCE.split(body)):
            sentence += 1
            joined: Join = ("item" if item else "start") if k == 0 else "sentence"
            part = wells_label(part) if k else part  # "Hi! Blanks (H11, H12): 100 uL ..."
            if k and (m := _LABEL.match(part)) and _is_label(m.group("label"), names) and m["body"]:
                # "Buffer: 60 uL to D1-D12. Dye: 15 uL to D1-D4": each sentence its own label
                label, part = m.group("label").strip(), m.group("body").strip()
            if use := _USE_PLATE.fullmatch(part.strip(" .")):  # "Note: use plate_2. Add ..."
                pieces.append((use.group(1), joined, label, sentence, True))
                continue
            part = run_order(part)  # "X before reading Y", "X, after filling Y"
            semis = list_tips_apart(semicolon_parts(part))
            if _semicolon_heading(semis):
                head = semis.pop(0).strip(" :")
                pieces.append((head, joined, label, sentence, True))
                label, joined = head, "item"
            outer = label
            for j, semi in enumerate(semis):
                if _COUNT_LABEL.search(label or "") and label != outer:
                    label = outer  # "then thirty cycles: ...; 68 C 3 min": the count is its own
                semi = wells_label(semi, names) if j else semi  # "...; row B: 50 uL dye"
                if j and (m := _LABEL.match(semi)) and _is_label(m["label"], names) and m["body"]:
                    label, semi = m.group("label").strip(), m.group("body").strip()
                for i, then in enumerate(then_parts(semi)):
                    actions: list[tuple[Join, str]] = []
                    for said_how, text in _split_actions(then, names):
                        cut = gaps(text, _social.polite_off(text.strip(" ,.;:!?-")))
                        actions += [(said_how, cut[0])] + [("and", t) for t in cut[1:]]
                        gapped.update(cut[1:])
                    for h, action in enumerate(actions):
                        how: Join = action[0] if h else ("then" if i else joined)
                        if j and not i and not h:
                            how = "semicolon"
                        nxt = (
                            then[then.find(action[1]) + len(action[1]) :]
                            if h + 1 < len(actions)
                            else ""
                        )
                        heading = (
                            nxt.lstrip().startswith((":", "- "))
                            and not _MODIFIER_AFTER.match(nxt)
                            and not is_reason(action[1])
                            and not re.match(
                                r"-\s*(?:all|everything|both)\s+(?:in|on|of)\b",
                                nxt.lstrip(),
                                _FLAGS,
                            )
                        )
                        if h == 0 and len(actions) > 1 and _FROM_LEAD.match(action[1]):
                            heading = True  # "From samples, pick A3 into ...": the source
                        pieces.append((action[1], how, label, sentence, heading))
    clauses: list[Clause] = []
    for text, how, label, sentence, heading in pieces:
        said = unquote(text.strip(" ,.;:!?-"), norm.quoted, '"')
        cleaned = as_verb(_social.polite_off(text.strip(" ,.;:!?-")))
        if clauses:  # "... and the even ones with buffer"; "top up A1 to 150 uL, then B1 ..."
            cleaned = (borrow if text in gapped else carried)(clauses[-1].text, cleaned)
        if cleaned:
            clauses.append(Clause(len(clauses), cleaned, said, how, label, sentence, heading))
    return clauses


def _split_actions(text: str, names: frozenset[str] = frozenset()) -> list[tuple[Join, str]]:
    """Split at a comma or an "and" that is followed by an action verb, or by a new volume
    and destination once the part before has its own destination."""
    cuts = [
        m
        for m in _NEW_ACTION.finditer(text)
        if after_clause_start(text, m)
        and not (
            (":" in m.group(0) or "-" in m.group(0))
            and _PLACE_ONLY.match(text[: m.start()])
            # "organoid_plate_24 A1-A6: remove 400 uL ...": the place heads the moves after it
            and not (":" in m.group(0) and _VERB_FIRST.match(text[m.end() :]))
        )
    ]
    inside = bracketed(text)  # "(8 channel, mix 3x)": a verb in brackets starts no clause
    cuts = [c for c in cuts if not any(a < c.start() < b for a, b in inside)]
    for m in re.finditer(r"\s*:\s+", text):  # "Make a replica of row B: samples B1.. into ..."
        before, after = text[: m.start()], text[m.end() :]
        if (
            m.start() > 0
            and not any(c.start() <= m.start() < c.end() for c in cuts)
            and not (any(a < m.start() < b for a, b in inside) or ROLE_KEY.search(before))
            and not _VOLUME.search(_LEVEL.sub("", before))  # "..., 200 uL total each:" heads
            and _VOLUME.search(after)
            and _NEXT_DEST.search(after)
            and not _PLACE_ONLY.match(before)
            and not THINS_BEFORE.search(before)  # "every other well: B1-B12": its wells
        ):
            cuts.append(m)
    for m in [*_VOLUME_START.finditer(text), *_NAMED_VOLUME_START.finditer(text)]:
        if m.start() == 0 or any(c.start() <= m.start() < c.end() for c in cuts):
            continue
        before = text[max((c.end() for c in cuts if c.end() <= m.start()), default=0) : m.start()]
        after = text[m.end() :]
        after = after[: (re.search(r"[,;]", after) or re.search(r"$", after)).start()]  # type: ignore[union-attr]
        if re.match(r"[A-Pa-p]\d", after) and not _VOLUME.search(before):
            continue  # "... into e1, e2, e3 with 7, 14 and 21 ul": the volumes of the list
        if _BARE_LIST.search(before):
            continue  # "100, 50, 25, 12.5 and 6.25 uL in A12-E12": the list's last volume
        if _STATE_SENTENCE.search(before):
            continue  # "There is 12 mL of buffer in A2 and 12 mL of water in A1": one fact
        if (
            # ("X -> P A1-A12, 50 uL; Y -> P B1-B12": an arrow list, each item its own)
            (_joins.has_destination(before) or ("->" in before and "->" in after))
            and _NEXT_DEST.search(after)
            and not _joins.volume_of_before(before, after, names)
        ):
            cuts.append(m)
    timed = []
    for m in _SECOND_TIP_WISH.finditer(text):  # "one tip for the buffer, a new tip for the dye"
        if re.search(r"\btips?\b", text[: m.start()], _FLAGS) and not _VOLUME.search(text):
            cuts.append(m)
    for m in _TIMED_START.finditer(text):  # "200 uL blocking buffer, 1 h at 37 C": then incubate
        after = text[m.end() :]
        if (
            m.start() > 0
            and _VOLUME.search(text[: m.start()])
            and not _VOLUME.search(re.split(r"[,;]", after)[0])
            and not any(c.start() <= m.start() < c.end() for c in cuts)
        ):
            cuts.append(m)
            timed.append(m)
    for m in _VOLUME_START.finditer(text):  # "..., 30 min RT, 100 uL stop solution": next liquid
        since = max((c.end() for c in timed if c.end() <= m.start()), default=-1)
        if since >= 0 and not _VOLUME.search(text[since : m.start()]) and m not in cuts:
            cuts.append(m)
    cuts.sort(key=lambda m: m.start())
    out: list[tuple[Join, str]] = []
    last, how = 0, "comma"
    for m in cuts:
        if m.start() < last:
            continue
        out.append((how, text[last : m.start()]))  # type: ignore[arg-type]
        how = "and" if "and" in m.group(0).lower() else "comma"
        last = m.end()
    out.append((how, text[last:]))  # type: ignore[arg-type]
    return [(h, t) for h, t in out if t.strip(" ,.;")]


def _is_label(name: str, names: frozenset[str] = frozenset()) -> bool:
    """A line opener like "ELISA step" or "Std curve", not a well, a numbered step or a phrase
    that names the lab's labware ("Copy cmpd onto assay", "tr": as "plate_1" would be)."""
    words = name.split()
    return (
        1 <= len(words) <= 4
        and not any(ch.isdigit() for ch in name)
        and not any(w.lower() in names for w in re.findall(r"[\w-]+", name))
        and not _WELLISH.search(name)
        and not re.fullmatch(r"(?:step|item)s?", name.strip(), _FLAGS)
        and not THINS_BEFORE.search(name)  # "Alternate wells: B1-B12 ...": the wells it thins
    )
