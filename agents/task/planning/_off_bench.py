"""Work that is not bench work: analysis of data, messages, writing, ordering, advice.

A request of nothing else is refused as not a lab request (:mod:`._not_lab`). Said alongside
lab work ("read plate_1 at 600 nm and tell me the doubling time"), such a clause is split off
(:mod:`._clauses`) and traced as not done (:mod:`.families.context`): the lab work is planned,
and the plan says what it leaves to the person, never dropping it silently.
"""

from __future__ import annotations

import re

# What comes of work already done, not work: "send me the Km", "give me the CV for each".
DATA = (
    r"(?:results?|data|values?|numbers?|readings?|read-?outs?|curves?|fits?|slopes?|stats|"
    r"statistics|report|summary|file|spreadsheet|csv|export|plots?|graphs?|k_?m|v_?max|kcat|"
    r"[ie]c50s?|cvs?|sds?|means?|averages?|concentrations?|yields?|ct\s+values?|answers?)\b"
)


# A clause whose verb is not bench work, whatever lab words follow ("Remind me to read plate_1
# tomorrow", "Write a python script that adds buffer", "Translate 'add 50 uL' into German").
VERBS = (
    r"(?:write|draft|compose|translate|remind|tell|e-?mail|text|message|notify|schedule|book|"
    r"order|buy|purchase|calculate|compute|explain|summari[sz]e|describe|draw|plot|graph|"
    # the analysis of data already taken ("Fit yesterday's rates to Michaelis-Menten")
    r"fit|re-?fit|analy[sz]e|work\s+out|figure\s+out|back-?calculate|interpolate|extrapolate|"
    r"average|regress|tabulate|(?:send|give|get|e-?mail)\s+(?:me|us)\s+(?:the\s+|my\s+|our\s+|a\s+)?"
    + DATA
    + r"|(?:send|forward|share|e-?mail)\s+(?:the\s+|my\s+|our\s+|these\s+|those\s+|all\s+)?"
    + DATA
    + r"|(?:do|run)\s+(?:the\s+)?(?:stats|statistics|analysis|regression|fit)|"
    r"generate|code|search|google|look\s+up|find\s+out|print|show\s+me|teach|recommend|"
    r"suggest|predict|estimate|convert|list|label|re-?name|(?:log|record)\s+that|note\s+down|"
    r"log(?![\s-]*phase)|jot\s+down|(?:make|brew|fetch|bring|get)\s+(?:me|us)\s+(?:a|an|some)\s+"
    r"(?:coffee|tea|cup|drink|snack|sandwich|lunch)|"
    r"write\s+down|keep\s+(?:track\s+of|a\s+(?:record|log|tally|note)\s+of|an?\s+eye\s+on|in\s+mind)|"
    r"export|save|upload|download|design|(?:help\s+me\s+)?plan\s+(?:my|an?|the|our)\s+"
    r"(?:experiment|assay|study|layout|day|week)|check\s+(?:how|whether|if|what|which)|"
    r"(?:make|create|build|prepare)\s+(?:me\s+)?(?:a|an)\s+(?:plate\s+)?(?:map|layout|table|"
    r"spreadsheet|list|chart|figure|graph|plot|sop|protocol|script|diagram|template))\b"
)


OFF_BENCH = re.compile(r"^" + VERBS, re.IGNORECASE)
# After lab work: ", and tell me ...", " and then plot ...", with no volume of its own (", and
# draw 50 uL from A1" is bench work).
TRAILING = r"(?:(?:please|also|then|just)\s+)*" + VERBS + r"(?![^,;.]*\d\s*(?:u|m)l\b)"


def off_bench(text: str) -> bool:
    """The clause asks for work other than the lab's instruments' ("calculate the doubling
    time", "email me the results"), with no volume that would make it bench work."""
    return bool(re.match(TRAILING, text.strip(), re.IGNORECASE))


# "record the readings", "report the values", "tell me when it's done": what every run does
# anyway (its report keeps each reading and says when the run ends): nothing more to plan.
# ("record luminescence", "record the OD600" ask for a read: no data words here name a mode.)
KEPT = (
    r"(?:(?:please|also|then|just|and)\s+)*(?:(?:record|report|log|save|keep|note)\s+(?:down\s+)?"
    r"(?:the\s+|all\s+(?:the\s+)?|each\s+)?(?:readings?|read-?outs?|values?|results?|data|"
    r"numbers?)\b"
    r"|(?:tell|notify|ping|text|message|e-?mail)\s+(?:me|us)\s+(?:once|when)\b)"
)
_KEPT = re.compile(r"^" + KEPT, re.IGNORECASE)


def kept(text: str) -> bool:
    """The clause asks for what the run report gives anyway ("record the readings", "tell me when
    it's done")."""
    return bool(_KEPT.match(text.strip()))
