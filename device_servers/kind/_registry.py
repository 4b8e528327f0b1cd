"""The registry of kinds: every folder of ``device_servers`` with a ``driver.py`` names its
:class:`Kind` as ``KIND``."""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from pathlib import Path
from typing import Any

from device_servers.contract import InstrumentBase
from device_servers.errors import ConfigurationError
from device_servers.kind._command import Prompt
from device_servers.kind._driver import DriverBase
from policies import RULES_DIR


class Kind:
    """One instrument kind: its configuration model, driver, rules file and prompts.

    ``Kind(SomeConfig)`` is enough for a kind laid out as :mod:`device_servers.kind` says: the
    name is the config's ``kind``, the driver is the :class:`DriverBase` of that kind in
    ``device_servers.<name>.driver`` (imported only when an instrument of the kind is built),
    and the rules are ``policies/rules/<name>.yaml`` (without them the kind cannot be served).
    """

    def __init__(
        self,
        config: type[InstrumentBase],
        prompts: tuple[Prompt, ...] = (),
        *,
        driver_module: str | None = None,
        rules_file: Path | None = None,
    ) -> None:
        literal = config.model_fields["kind"].annotation
        names: tuple[Any, ...] = getattr(literal, "__args__", ())
        if len(names) != 1 or not isinstance(names[0], str):
            raise ConfigurationError(f"{config.__name__}.kind must be one Literal name")
        self.name: str = names[0]
        self.config = config
        self.prompts = prompts
        self.driver_module = driver_module or f"device_servers.{self.name}.driver"
        self.rules_file = rules_file or default_rules(self.name)

    def driver_class(self) -> type[DriverBase[Any]]:
        module = importlib.import_module(self.driver_module)
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, DriverBase)
                and getattr(value, "kind", None) == self.name
            ):
                return value
        raise ConfigurationError(f"{self.driver_module} has no driver of kind {self.name!r}")


def default_rules(kind: str) -> Path:
    """Where a kind's default rules live: ``policies/rules/<kind>.yaml``."""
    return RULES_DIR / f"{kind}.yaml"


@cache
def kinds() -> dict[str, Kind]:
    """Every kind of ``device_servers``, by name (each folder with a ``driver.py``)."""
    import device_servers

    found: dict[str, Kind] = {}
    for info in sorted(pkgutil.iter_modules(device_servers.__path__), key=lambda i: i.name):
        folder = Path(device_servers.__path__[0]) / info.name
        if not info.ispkg or not (folder / "driver.py").exists():
            continue
        module = importlib.import_module(f"device_servers.{info.name}")
        kind = getattr(module, "KIND", None)
        if not isinstance(kind, Kind):
            raise ConfigurationError(f"device_servers.{info.name} has a driver but no KIND")
        found[kind.name] = kind
    return found


def kind_of(name: str) -> Kind:
    """The kind called ``name``; ConfigurationError naming the known kinds otherwise."""
    found = kinds().get(name)
    if found is None:
        raise ConfigurationError(f"no instrument kind {name!r} (known: {', '.join(kinds())})")
    return found
