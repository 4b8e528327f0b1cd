"""A phrase for new tips said negated asks for the same tip: "no new tips", "without a tip
change between wells", "change tips: no", "w/o changing tips", "do not swap tips". Read by
its words alone, each would have taken fresh tips (or fresh ones for every well)."""

from __future__ import annotations

import pytest

from agents.task.planning._entities import how_said
from agents.task.planning._normalise import normalise
from agents.task.planning._tip_phrases import tip_policy


@pytest.mark.parametrize(
    "said",
    [
        "no new tips",
        "no fresh tips",
        "without a tip change between wells",
        "without any tip change between wells",
        "change tips: no",
        "new tip each: no",
        "don't change tips",
        "never change tips",
        "no need to change tips",
        "do not swap tips",
        "don't replace the tips",
        "without changing tips",
    ],
)
def test_a_negated_new_tip_phrase_is_one_tip(said: str) -> None:
    assert tip_policy(f"add 50 uL buffer to row A, {said}") == "once"


def test_w_slash_o_reads_as_without() -> None:
    text = normalise("add 50 uL buffer to row A w/o changing tips").text
    assert "without changing tips" in text
    assert how_said(text)[1] == "once"


@pytest.mark.parametrize(
    ("said", "policy"),
    [
        ("fresh tip for each well", "per_destination"),
        ("change tips between wells", "per_destination"),
        ("new tips per column", "per_column"),
        ("change tips between reagents", "per_source"),
        ("never reuse tips", "per_destination"),
        ("no tip reuse", "per_destination"),
        ("one tip for everything", "once"),
    ],
)
def test_new_tip_phrases_not_negated_keep_their_policy(said: str, policy: str) -> None:
    assert tip_policy(f"add 50 uL buffer to row A, {said}") == policy
