"""A device agent's own policy check, the second line of defence before the server's gate.

It builds its policy request the one way the gate does (``PolicyRequest.for_args``), so it sees
every number of the arguments: a thermocycler profile's nested step temperatures, lists of
numbers, numbers written as text; booleans are not numbers. Tried through a real MCP session to
a thermocycler server that records every call, judged from the simulated world.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, cast

import pytest
from conftest import error_code
from mcp import ClientSession
from test_thermocycler import PCR, TC, execute, served

from agents.device.agent import DeviceAgent
from agents.task.planning.models import PlanStep
from device_servers.runtime import InstrumentRuntime
from device_servers.runtime._gate import policy_request
from device_servers.sim.world import SimWorld
from policies import PolicyRequest, Verdict, build_engine
from policies.model import numbers_in

pytestmark = pytest.mark.anyio
RUN = "run-1"


class Recording:
    """A real client session that notes the name of every tool called through it."""

    def __init__(self, session: ClientSession) -> None:
        self.session = session
        self.calls: list[str] = []

    async def call_tool(self, name: str, arguments: dict[str, Any] | None = None) -> Any:
        self.calls.append(name)
        return await self.session.call_tool(name, arguments)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.session, name)


class Bench:
    def __init__(
        self,
        agent: DeviceAgent,
        rec: Recording,
        raw: ClientSession,
        world: SimWorld,
        rt: InstrumentRuntime,
    ) -> None:
        self.agent, self.rec, self.raw, self.world, self.rt = agent, rec, raw, world, rt

    def untouched(self) -> bool:
        """Nothing reached the instrument: no call, no heater set, no cycle run."""
        status = self.world.status(TC)
        return (
            not self.rec.calls
            and status.get("block_target") is None
            and status.get("lid_target") is None
            and status["cycles_done"] == 0
        )


@pytest.fixture
async def bench(tmp_path: Path) -> AsyncIterator[Bench]:
    """A thermocycler with a plate on its block and the lid closed, and its device agent."""
    async with served(tmp_path) as (session, rt, world, _):
        assert (await execute(session, "close_lid", "c-1"))["ok"] is True
        rec = Recording(session)
        engine = build_engine("thermocycler")
        agent = DeviceAgent(TC, "thermocycler", cast(ClientSession, rec), engine)
        yield Bench(agent, rec, session, world, rt)


def step(command: str, **args: Any) -> PlanStep:
    return PlanStep(id="s1", instrument=TC, command=command, args=args)


def stages_with(celsius: Any) -> list[dict[str, Any]]:
    """The PCR profile with one more step, deep in its second stage, at ``celsius``."""
    first, second = cast(list[dict[str, Any]], PCR)
    return [first, {**second, "steps": [*second["steps"], {"celsius": celsius, "hold_s": 30}]}]


# (command, arguments, what the server answers when asked directly): a number written as
# text is refused by the server's strict inputs (INVALID_ARGUMENT) before its gate looks.
DENIED = [
    pytest.param(
        "run_profile", {"stages": stages_with(105)}, "POLICY_DENIED", id="one nested step at 105 C"
    ),
    pytest.param(
        "run_profile", {"stages": stages_with(2)}, "POLICY_DENIED", id="one nested step at 2 C"
    ),
    pytest.param(
        "run_profile",
        {"stages": stages_with("105")},
        "INVALID_ARGUMENT",
        id="105 C written as text",
    ),
    pytest.param(
        "run_profile",
        {"stages": PCR, "lid_celsius": 115},
        "POLICY_DENIED",
        id="the lid above 110 C",
    ),
    pytest.param(
        "set_block_temperature", {"celsius": "120"}, "INVALID_ARGUMENT", id="a hold written as text"
    ),
]


@pytest.mark.parametrize(("command", "args", "server_code"), DENIED)
async def test_the_device_agent_denies_what_the_gate_denies_before_any_call(
    bench: Bench, command: str, args: dict[str, Any], server_code: str
) -> None:
    obs = await bench.agent.execute(step(command, **args), RUN)
    assert not obs.ok and obs.error is not None
    assert obs.error["code"] == "POLICY_DENIED" and obs.error["source"] == "device_agent"
    assert bench.untouched()
    # The server, asked directly, refuses the same call too: the two lines agree.
    direct = await execute(bench.raw, command, "direct-1", **args)
    assert error_code(direct) == server_code
    assert bench.world.status(TC)["cycles_done"] == 0


async def test_a_profile_within_the_rules_passes_the_agent_and_reaches_the_server(
    bench: Bench,
) -> None:
    assert bench.agent.check_policy(step("run_profile", stages=PCR, lid_celsius=105)) is None
    # Within the limits as text too, but the server takes numbers only as JSON numbers.
    assert bench.agent.check_policy(step("set_block_temperature", celsius="4")) is None
    as_text = await bench.agent.execute(step("set_block_temperature", celsius="4"), RUN)
    assert not as_text.ok and as_text.error is not None
    assert as_text.error["code"] == "INVALID_ARGUMENT"
    assert bench.world.status(TC)["block_target"] is None
    obs = await bench.agent.execute(step("set_block_temperature", celsius=4), RUN)
    assert obs.ok, obs.error
    assert bench.rec.calls.count("set_block_temperature") == 2  # both reached the server
    assert bench.world.status(TC)["block_target"] == 4


def test_every_number_counts_under_its_own_name_however_deeply_nested() -> None:
    args = {
        "stages": [
            {"steps": [{"celsius": 95, "hold_s": 15}, {"celsius": 60.5, "hold_s": 30}]},
            {"steps": [[{"celsius": 72}], [[{"celsius": "99"}]]], "repeats": 35},
        ],
        "volume_ul": [10, [20, (30,)]],
        "plate": "pcr_plate",
        "wells": ["A1", "B12"],
    }
    assert numbers_in(args) == {
        "celsius": [95.0, 60.5, 72.0, 99.0],
        "hold_s": [15.0, 30.0],
        "repeats": [35.0],
        "volume_ul": [10.0, 20.0, 30.0],
    }


def test_booleans_and_words_are_not_numbers() -> None:
    args = {
        "celsius": True,
        "flags": [False, True],
        "stages": [{"steps": [{"celsius": 60, "hold_s": 10, "lid": False}]}],
        "note": "105 C is too hot",
        "label": "1e",
        "nothing": None,
    }
    assert numbers_in(args) == {"celsius": [60.0], "hold_s": [10.0]}


def test_nesting_deeper_than_python_recursion_is_still_read() -> None:
    deep: Any = {"celsius": 105}
    for _ in range(5000):
        deep = [deep]
    assert numbers_in({"stages": deep}) == {"celsius": [105.0]}


def test_a_limit_never_lets_through_a_value_that_is_not_a_number() -> None:
    engine = build_engine("thermocycler")
    for value in (float("nan"), float("inf"), -float("inf")):
        args = {"stages": [{"steps": [{"celsius": value, "hold_s": 10}]}]}
        request = PolicyRequest.for_args(TC, "run_profile", args, facts_known=False)
        assert engine.evaluate(request).verdict is Verdict.DENY, value


async def test_the_gate_and_the_agent_see_the_same_numbers_of_a_profile(bench: Bench) -> None:
    args = {"stages": stages_with(72), "lid_celsius": 105}
    cmd = bench.rt.parse("run_profile", args)  # as the server reads the call
    gate = policy_request(TC, bench.rt.driver, "run_profile", cmd, dry_run=False)
    agent = PolicyRequest.for_args(TC, "run_profile", args, dry_run=False, facts_known=False)
    derived = {"duration_s"}  # what the kind derives (a profile's length): the server's alone
    assert set(gate.numbers) - set(agent.numbers) <= derived | {"repeats"}
    for name, values in agent.numbers.items():
        assert gate.numbers[name] == values, name
    assert agent.numbers["celsius"] == [95.0, 95.0, 60.0, 72.0]
