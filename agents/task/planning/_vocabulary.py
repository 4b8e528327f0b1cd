"""The words of lab English the lexicon knows without the lab: the vocabulary the typo fixer
corrects to, short verbs, words that never name a liquid, instrument words and labware words."""

from __future__ import annotations

import re

_FLAGS = re.IGNORECASE


_VOCAB_TEXT = """
    transfer add dispense distribute aliquot pipette move bring return shake incubate heat
    warm read measure scan record make prepare dilute dilution dilutions serial serially
    pool combine consolidate spot stamp replicate copy remove aspirate discard normalise
    normalize thermocycle mix mixing column columns row rows plate plates reservoir trough
    triplicate triplicates duplicate duplicates quadruplicate replicates absorbance
    fluorescence luminescence excitation emission wavelength temperature minutes seconds
    hours buffer diluent standard standards blank blanks final volume each every other fresh
    tips channel multichannel single matching positions into across down through starting
    incubation shaking reading transfer transfers distribution dilute microliters
    microlitres milliliters millilitres destination source cherry waste media medium
    exchange curve samples sample wells heater shaker reader thermocycler cycles denature
    anneal extend hold times twice then afterwards incubator incubators centrifuge
    thermocyclers magnet magnetic sealer washer spectrophotometer plates reservoirs troughs
    tubes block blocks replica replicas transferred transferring adding dispensed pipetted
    aliquots aliquoted diluted diluting mixed shaken incubated removed removing discarded
    topped pooled spotted stamped normalised normalized measured reading readings
    share shares shared split divide spread coat block seed feed load plate place places
    placed position positions home
"""
VOCABULARY = frozenset(_VOCAB_TEXT.split())
# Real words one or two edits from a word above: never corrected to it ("heated lid" is not
# a heater, "positive control" not a position, "washed 3x" not a washer).
_NOT_TYPOS_TEXT = """
    heated cycled cycler sealed plated shaped mixes mixer positive washed washes staining
    heating sealing cycler's posted shaker's seated treated treats heats pooling machine
    machines stirring storing incubating shaking reading
    inoculate inoculated inoculates inoculating inoculation inoculum transfect transfected
    transfecting transfection transform transformed transforming transformation replate
    replated replating disperse dispersed dispersing aspirator aspirators
    stamping stamps restamp restamped reformat reformats reformatted reformatting replicating
    replicated copying copied pinning pinned daughter daughters mother subculture
    black white clear opaque solid sterile amber
"""
NOT_TYPOS = frozenset(_NOT_TYPOS_TEXT.split())
_VOCAB_LIST = sorted(VOCABULARY)
# Verbs too short for the general typo fixer: only a swap of two letters is corrected.
_SHORT_VERBS = ("mix", "add", "read", "move", "pool", "spot", "fill", "heat", "hold", "wash", "put")
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*[A-Za-z]")
# Words in liquid names that say what a thing is or does, not which liquid it is.
_NOT_A_LIQUID = frozenset(
    [
        "the",
        "and",
        "of",
        "for",
        "with",
        "from",
        "into",
        "per",
        "each",
        "well",
        "wells",
        "plate",
        "plates",
        "solution",
        "reagent",
        "mix",
        "times",  # "mix 2 times" never names a liquid called "mix 10 times"
        "then",
        "once",
        "twice",
        "stock",
        "working",
        "fresh",
        "old",
        "new",
        "final",
        "total",
        "high",
        "low",
        "detection",
        "assay",
        "sample",
        "samples",
        "standard",
        "standards",
        "buffer",
        "wash",
        "block",
        "coat",
        "stop",
        "load",
        "seed",
        "feed",
        "spin",
        "read",
        "dilution",
        "transfer",
        "add",
        "dispense",
        "pool",
        "spot",
        # "7 standards plus a blank": connectives and curve words, never "Coomassie Plus reagent"
        "plus",
        "minus",
        "blank",
        "blanks",
        "zero",
        "curve",
    ]
)
INSTRUMENT_WORDS: dict[str, tuple[str, ...]] = {
    "plate_reader": (
        r"plate[\s-]?reader", r"reader", r"spectrophotometer", r"spectramax", r"spec",
        r"luminometer", r"fluorometer", r"photometer",
    ),
    "heater_shaker": (
        r"heater[\s-]?shaker", r"shaker", r"thermo[\s-]?shaker", r"thermomixer",
        r"heat(?:ing)? block",
    ),
    "thermocycler": (r"thermo[\s-]?cycler", r"pcr machine", r"cycler", r"pcr block"),
    "plate_mover": (r"plate[\s-]?mover", r"robot(?:ic)? arm", r"arm", r"gripper"),
    "liquid_handler": (r"liquid[\s-]?handler", r"robot", r"deck", r"pipetting robot"),
    "magnet": (r"magnet(?:ic)?(?: module| stand| block| rack| plate)?", r"mag[\s-]?deck"),
    "centrifuge": (
        r"centrifuge",
        r"spin(?:ner)?(?![\s-]*mix)(?![\w\s]{0,20}\b(?:on|in)\s+the\s+(?:heater[\s-]?)?shaker)",
    ),  # "spin on the shaker at 1200 rpm", "a quick spin-mix" are shaking
    "incubator": (r"incubator", r"co2 incubator", r"\d+(?:\.\d+)?\s*%\s*co2"),  # "5% CO2"
    "sealer": (r"plate sealer", r"heat sealer", r"sealer"),
    "washer": (r"plate washer", r"washer"),
    # kinds no lab here has: named, they are refused, never replaced by another instrument
    "fridge": (r"fridge", r"refrigerator", r"cold room", r"cold-room"),
    "freezer": (r"freezer", r"-?80 freezer", r"-?20 freezer"),
    "ice bucket": (r"ice bucket", r"ice bath", r"(?<=on\s)ice(?!\s*-?\s*cold)"),
    "sonicator": (r"sonicator", r"sonicating bath", r"ultrasonic bath", r"sonication bath"),
    "microscope or imager": (r"microscope", r"imager", r"plate imager", r"imaging system"),
    "vortex mixer": (r"vortex(?:er| mixer| genie)",),
    "water bath": (r"water ?bath",),
    "plate lidder": (r"lidder", r"de-?lidder"),
    "real-time (qPCR) instrument": (
        r"q-?pcr (?:machine|instrument|cycler|system)",
        r"real[\s-]time (?:pcr|cycler)(?: machine)?",
        r"lightcycler", r"quantstudio", r"cfx ?(?:96|384|opus)?", r"step ?one(?: plus)?",
    ),
}  # fmt: skip
_LABWARE_WORDS = {
    "reservoir": ("reservoir", "trough"),
    "trough": ("reservoir", "trough"),
    "troughs": ("reservoir", "trough"),
    "res": ("reservoir", "trough"),  # notebook shorthand: "from res col 4"
    "resv": ("reservoir", "trough"),
    "tube rack": ("tube", "rack"),
    "tubes": ("tube",),
    "pcr plate": ("pcr",),
    "dest": ("dest",),
    "destination plate": ("dest",),
    "source plate": ("source", "src"),
}
# Words that start an action when they follow a comma or an "and".
# Verbs whose object is where the liquid goes ("treat cells_96 with drug", "block elisa_1 with
# 200 uL BSA", "inoculate X from the overnights"): a transfer into what they name.
TREAT_VERBS = (
    "treat|dose|stain|feed|spike|coat|block|overlay|supplement|detach|digest|lyse|fix|"
    "permeabili[sz]e|dissociate"
)
ACTION_VERBS = (
    "transfer|add|dispense|distribute|aliquot|pipette|pipet|put|place|fill|move|bring|return|"
    "send|take|mix|shake|incubate|heat|warm|cool|hold|read|measure|scan|record|make|prepare|"
    "dilute|serially|pool|combine|consolidate|spot|stamp|replicate|copy|cherry-pick|cherrypick|"
    "hit-pick|remove|aspirate|discard|top|normalise|normalize|run|thermocycle|cycle|wash|"
    "agitate|spin|seal|load|set|leave|let|wait|pick|dispose|withdraw|drain|empty|exchange|"
    "replace|swap|refill|replenish|resuspend|titrate|plate|seed|quench|stop|start|do|perform|"
    "carry|continue|proceed|repeat|park|unload|stash|stow|eject|rinse|feed|allow|equilibrate|"
    "develop|protect|cover|pcr|qpcr|air-dry|dry|deliver|spike|dose|give|supply|inject"
)
