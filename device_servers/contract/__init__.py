"""Wire models shared by device servers and their clients (pure pydantic, no server code).

Configuration every instrument has (:class:`InstrumentBase`; each kind's own lives in its
folder), the error codes (:class:`Code`), the tools every server has (:data:`COMMON_TOOLS`)
and what servers send: :class:`ErrorInfo`, :class:`CommandResult`, :class:`RunInfo`,
:class:`Event`. An agent may import this module; it must never import the rest of
``device_servers``.
"""

from __future__ import annotations

from device_servers.contract._config import (
    BackendSpec,
    FaultSpec,
    Heated,
    InstrumentBase,
    PlateTypes,
    PolicySpec,
    Requirement,
    Station,
    Strict,
    Timed,
    location_owner,
)
from device_servers.contract._stations import (
    LabFacts,
    after_command,
    find_station,
    station_ready,
)
from device_servers.contract._wire import (
    COMMON_TOOLS,
    EVENT_TYPES,
    Code,
    CommandResult,
    ErrorInfo,
    Event,
    Protocol,
    ProtocolStep,
    RunInfo,
    RunStatus,
)

__all__ = [
    "COMMON_TOOLS",
    "EVENT_TYPES",
    "BackendSpec",
    "Code",
    "CommandResult",
    "ErrorInfo",
    "Event",
    "FaultSpec",
    "Heated",
    "InstrumentBase",
    "LabFacts",
    "PlateTypes",
    "PolicySpec",
    "Protocol",
    "ProtocolStep",
    "Requirement",
    "RunInfo",
    "RunStatus",
    "Station",
    "Strict",
    "Timed",
    "after_command",
    "find_station",
    "location_owner",
    "station_ready",
]
