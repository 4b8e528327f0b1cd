"""A head declined ("8-channel not needed", "not the multichannel") is one channel, never the
head it names: the words "8-channel" alone must not decide how the liquid moves."""

from __future__ import annotations

import pytest

from agents.task.planning._entities import _channels


@pytest.mark.parametrize(
    "text",
    [
        "50 uL to A1-H1, 8-channel not needed",
        "no need for the multichannel",
        "don't use the 8-channel",
        "do not use an 8 channel pipette",
        "single channel, not the 8-channel",
        "use one channel instead of the multichannel",
        "the 8-channel is not necessary",
        "without the multi-channel",
    ],
)
def test_a_declined_multichannel_is_one_channel(text: str) -> None:
    assert _channels(text) == 1


@pytest.mark.parametrize(
    "text",
    ["with the 8-channel", "8-channel, fresh tips", "use the multichannel, not single channel"],
)
def test_a_multichannel_asked_for_is_eight(text: str) -> None:
    assert _channels(text) == 8
