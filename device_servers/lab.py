"""The lab file: ``lab.yaml`` -> :class:`LabConfig`, with errors that name file and field.

Every layer that needs the lab model imports it from here (the CLI, evals, bench, tests);
cross-instrument wiring (plate types, where plates start) happens in :func:`load`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from device_servers.contract import (
    InstrumentBase,
    LabFacts,
    Station,
    find_station,
    location_owner,
)
from device_servers.kind import kinds
from policies.safe_yaml import YamlError, read_yaml

# Places every lab has without an instrument of their own.
SHARED_PLACES = frozenset({"hotel"})

if TYPE_CHECKING:
    InstrumentConfig = InstrumentBase
else:
    # One configuration model per registered kind, told apart by ``kind``.
    _CONFIGS = tuple(k.config for k in kinds().values())
    InstrumentConfig = (
        Annotated[Union[_CONFIGS], Field(discriminator="kind")]  # noqa: UP007
        if len(_CONFIGS) > 1
        else _CONFIGS[0]
    )


class ConfigError(Exception):
    """A lab configuration that cannot be used; the message names the file and field."""


class PersonEntry(BaseModel):
    """One person the lab file names: who may hold a token, and with which role."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.@\-]{0,63}$")
    role: Literal["approver", "operator", "viewer"]


class StateSettings(BaseModel):
    """Where the task side's records live when not in the lab's SQLite file."""

    model_config = ConfigDict(extra="forbid")

    url: str = Field(
        pattern=r"^postgres(ql)?://",
        description="PostgreSQL for checkpoints, runs, the audit log and people.",
    )


class LabConfig(BaseModel):
    """The whole lab: its name, where its state lives, its instruments, its people."""

    model_config = ConfigDict(extra="forbid")

    lab: str = Field(pattern=r"^[A-Za-z0-9_\-]{1,64}$")
    state_dir: str | None = None
    # PostgreSQL for the task side's records (shared by task processes on several hosts).
    state: StateSettings | None = None
    instruments: list[InstrumentConfig] = Field(min_length=1)
    # When given, the roster: only these names may hold a token, with these roles.
    people: list[PersonEntry] | None = None

    # Set by load(); not part of the file.
    source: Path | None = Field(default=None, exclude=True)

    @model_validator(mode="after")
    def _unique_ids(self) -> LabConfig:
        seen: set[str] = set()
        for i, inst in enumerate(self.instruments):
            if inst.id in seen:
                raise ValueError(f"instruments[{i}].id: duplicate instrument id {inst.id!r}")
            seen.add(inst.id)
        labware: dict[str, str] = {}
        for inst in self.instruments:
            for lw_id in inst.plates_here():
                if lw_id in labware:
                    raise ValueError(
                        f"labware id {lw_id!r} is used by {labware[lw_id]} and "
                        f"{inst.id}: labware ids are unique in a lab"
                    )
                labware[lw_id] = inst.id
        names = [p.name for p in self.people or []]
        for name in names:
            if names.count(name) > 1:
                raise ValueError(f"people: {name!r} is named twice")
        return self

    @property
    def roster(self) -> dict[str, str] | None:
        """The lab file's people (name -> role), or None when it names nobody."""
        return None if self.people is None else {p.name: p.role for p in self.people}

    def instrument(self, instrument_id: str) -> InstrumentConfig:
        for inst in self.instruments:
            if inst.id == instrument_id:
                return inst
        known = ", ".join(i.id for i in self.instruments)
        raise ConfigError(f"{self.source}: no instrument {instrument_id!r} (known: {known})")

    @property
    def state_path(self) -> Path:
        """Where databases live: $LABWRIGHT_STATE_DIR, else state_dir beside the file."""
        env = os.environ.get("LABWRIGHT_STATE_DIR")
        if env:
            return Path(env)
        base = self.source.parent if self.source else Path.cwd()
        return (base / (self.state_dir or ".labwright-state")).resolve()

    @property
    def state_url(self) -> str | None:
        """PostgreSQL for the task side's records: $LABWRIGHT_STATE_URL, else ``state.url``."""
        return os.environ.get("LABWRIGHT_STATE_URL") or (self.state.url if self.state else None)

    @property
    def db_path(self) -> Path:
        return self.state_path / f"{self.lab}.sqlite"

    @property
    def world_path(self) -> Path:
        return self.state_path / f"{self.lab}.world.sqlite"


def default_config_path() -> Path:
    env = os.environ.get("LABWRIGHT_CONFIG")
    if env:
        return Path(env)
    for candidate in (Path("lab.yaml"), Path("examples/lab.yaml")):
        if candidate.exists():
            return candidate
    raise ConfigError("no lab config: pass --config, set LABWRIGHT_CONFIG, or create lab.yaml")


def _anchor_rules_files(data: dict[str, Any], base: Path) -> None:
    """A relative ``policy.rules_file`` is relative to the lab file, like ``state_dir``."""
    instruments = data.get("instruments")
    for inst in instruments if isinstance(instruments, list) else []:
        policy = inst.get("policy") if isinstance(inst, dict) else None
        if not isinstance(policy, dict):
            continue
        rules_file = policy.get("rules_file")
        if isinstance(rules_file, str) and rules_file and not Path(rules_file).is_absolute():
            policy["rules_file"] = str(base / rules_file)


def load(path: str | Path | None = None) -> LabConfig:
    """Read and validate a lab file."""
    path = Path(path) if path is not None else default_config_path()
    try:
        data = read_yaml(path)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    except YamlError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping with lab and instruments")
    _anchor_rules_files(data, path.resolve().parent)
    try:
        config = LabConfig.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors()[:5]:
            where = ".".join(str(p) for p in err["loc"]) or "(top)"
            problems.append(f"{where}: {err['msg']}")
        more = exc.error_count() - len(problems)
        tail = f" (and {more} more)" if more > 0 else ""
        raise ConfigError(f"{path}: {'; '.join(problems)}{tail}") from exc
    config.source = path.resolve()
    try:
        _connect_instruments(config)
    except ValueError as exc:
        raise ConfigError(f"{path}: {exc}") from exc
    return config


def _connect_instruments(config: LabConfig) -> None:
    """Tell each instrument what the lab knows: plate types, where plates start, who exists.

    Each instrument says which plates start on it (a liquid handler: its deck's labware);
    each then completes its own configuration from those facts (``InstrumentBase.wired``).
    """
    types: dict[str, str] = {}
    starts: dict[str, str] = {}
    stations: dict[str, Station] = {}
    for inst in config.instruments:
        for plate, (type_name, where) in inst.plates_here().items():
            types[plate] = type_name
            starts[plate] = where
        stations.update((s.place, s) for s in inst.stations())
    for inst in config.instruments:
        # A shared place (a hotel slot) is a shelf: nothing to open, always reachable.
        for where in getattr(inst, "locations", []):
            owner = location_owner(where)
            if owner in SHARED_PLACES and find_station(stations.values(), where) is None:
                stations[where] = Station(place=where, instrument=owner, role="shelf")
    facts = LabFacts(
        plate_types=types,
        starts=starts,
        owners=frozenset(i.id for i in config.instruments) | SHARED_PLACES,
        stations=stations,
    )
    resolved: list[Any] = []
    for i, inst in enumerate(config.instruments):
        try:
            resolved.append(inst.wired(facts))
        except ValueError as exc:
            raise ValueError(f"instruments[{i}].{exc}") from exc
    config.instruments = resolved
