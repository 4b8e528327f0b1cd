"""What an instrument kind plugs into the shared runtime and server, and the registry of kinds.

A kind is one folder ``device_servers/<kind>/`` whose ``__init__.py`` names a :class:`Kind`
(its configuration model, driver, rules file and prompts) as ``KIND``. Inside it:

- ``config.py``: the kind's configuration (an :class:`~device_servers.contract.InstrumentBase`)
- ``commands.py``: :class:`DeviceCommand` records, and the primitives they expand to
- ``twin.py``: a :class:`TwinBase` (belief, validation, simulation, ``adopt``)
- ``adapter.py`` / ``sim_backend.py``: an :class:`AdapterBase` on PyLabRobot's frontend, and a
  simulated PyLabRobot backend (the only modules that import PyLabRobot)
- ``driver.py``: a :class:`DriverBase` that wires them together

Nothing else registers a kind: :func:`kinds` finds every folder of ``device_servers`` that has
a ``driver.py`` and reads its ``KIND``.
"""

from device_servers.kind._adapter import Aborted, Adapter, AdapterBase, HeatedAdapter
from device_servers.kind._command import (
    Deviation,
    DeviceCommand,
    Event,
    Prompt,
    PromptArg,
    command_table,
)
from device_servers.kind._driver import Driver, DriverBase
from device_servers.kind._registry import Kind, default_rules, kind_of, kinds
from device_servers.kind._twin import (
    HoldsOnePlate,
    Twin,
    TwinBase,
    deviation,
    unknown_labware,
)

__all__ = [
    "Aborted",
    "Adapter",
    "AdapterBase",
    "Deviation",
    "DeviceCommand",
    "Driver",
    "DriverBase",
    "Event",
    "HeatedAdapter",
    "HoldsOnePlate",
    "Kind",
    "Prompt",
    "PromptArg",
    "Twin",
    "TwinBase",
    "command_table",
    "default_rules",
    "deviation",
    "kind_of",
    "kinds",
    "unknown_labware",
]
