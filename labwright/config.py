"""Moved to :mod:`device_servers.lab`; kept importable for code written before the move."""

from device_servers.lab import (
    ConfigError,
    LabConfig,
    PersonEntry,
    default_config_path,
    load,
)

__all__ = ["ConfigError", "LabConfig", "PersonEntry", "default_config_path", "load"]
